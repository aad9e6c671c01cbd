/*
 * The rpcbind layer, above the client and the server (rpcbind.h says who calls whom).
 *
 * Client side: rc_client_create / rc_client_create_ex parse the URI; a udp/tcp URI without a
 * port asks the host's rpcbind (RPCBIND v4, v3 GETADDR; PMAP v2 GETPORT) before
 * rc__client_open connects.
 *
 * Server side: rc_server_rpcbind registers a server's (program, version)s with the local
 * rpcbind -- RPCBIND v4 SET/UNSET/DUMP over its local socket, else PMAP v2 over loopback UDP
 * -- without taking over another live server's registrations unless told to, and removes at
 * the end only what is still its own. The rules are in server.h and docs/runtime.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/core/rpc.h"
#include "runtime/rpcbind/rpcbind.h"
#include "runtime/server/server_internal.h"
#include "transports/tls.h"

#define RC__PMAP_PROG 100000u
#define RC__PMAP_PORT 111
#define RC__PMAP_SET 1u
#define RC__PMAP_UNSET 2u
#define RC__PMAP_GETPORT 3u
#define RC__PMAP_DUMP 4u
#define RC__RPCB_SET 1u
#define RC__RPCB_UNSET 2u
#define RC__RPCB_GETADDR 3u
#define RC__RPCB_DUMP 4u
#define RC__IPPROTO_TCP 6u
#define RC__IPPROTO_UDP 17u
#define RC__RPCB_STR_MAX 255u       /* netid, address and owner strings on the wire */
#define RC__RPCB_DUMP_MAX 16384u    /* registrations read from one DUMP reply, at most */
#define RC__RPCB_CALL_MS 5000u      /* a call to rpcbind */
#define RC__RPCB_RETRY_MS 1000u
#define RC__RPCB_ALIVE_MS 1000u     /* the NULL call that tells a live registration */
#define RC__RPCB_ALIVE_RETRY_MS 250u

static const char *const rc__rpcb_sockets[] = {"/run/rpcbind.sock", "/var/run/rpcbind.sock"};

/* ---- the protocol's arguments and results ---------------------------------------------- */

typedef struct rc__pmap {
	uint32_t prog, vers, prot, port;
} rc__pmap;

/* XDR of PMAP v2's mapping (RFC 1833 section 3.1). */
static bool rc__xdr_pmap(rc_xdr *x, rc__pmap *m)
{
	return rc_xdr_u_int(x, &m->prog) && rc_xdr_u_int(x, &m->vers) &&
	       rc_xdr_u_int(x, &m->prot) && rc_xdr_u_int(x, &m->port);
}

typedef struct rc__rpcb {
	uint32_t prog, vers;
	char *netid, *addr, *owner;
} rc__rpcb;

/* XDR of RPCBIND's rpcb (RFC 1833 section 2.1); decoding allocates the three strings. */
static bool rc__xdr_rpcb(rc_xdr *x, rc__rpcb *r)
{
	return rc_xdr_u_int(x, &r->prog) && rc_xdr_u_int(x, &r->vers) &&
	       rc_xdr_string(x, &r->netid, RC__RPCB_STR_MAX) &&
	       rc_xdr_string(x, &r->addr, RC__RPCB_STR_MAX) &&
	       rc_xdr_string(x, &r->owner, RC__RPCB_STR_MAX);
}

/* XDR of a universal address (GETADDR's result); decoding allocates it. */
static bool rc__xdr_uaddr(rc_xdr *x, char **s)
{
	return rc_xdr_string(x, s, RC__RPCB_STR_MAX);
}

/* A registration as rpcbind lists it (PMAP v2's have netid udp/tcp and 0.0.0.0 addresses). */
typedef struct rc__rpcb_map {
	uint32_t prog, vers;
	char netid[32];
	char uaddr[128]; /* truncated if longer: never equal to one of ours then */
} rc__rpcb_map;

/* A DUMP's result: n registrations in v[] (malloc'd). */
typedef struct rc__rpcb_list {
	bool v2; /* decode PMAP v2's pmaplist, else RPCBIND's rpcblist */
	rc__rpcb_map *v;
	size_t n, cap;
} rc__rpcb_list;

/* Append m to l; false when memory is short or the list is at its cap. */
static bool rc__list_add(rc__rpcb_list *l, const rc__rpcb_map *m)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		rc__rpcb_map *v;
		if (l->n >= RC__RPCB_DUMP_MAX || (v = realloc(l->v, cap * sizeof(*v))) == NULL)
			return false;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *m;
	return true;
}

/* Copy at most cap-1 bytes of s (NULL: "") into dst, NUL-terminated (cap > 0). */
static void rc__strlcpy(char *dst, const char *s, size_t cap)
{
	size_t n = s ? strnlen(s, cap - 1) : 0;

	memcpy(dst, s ? s : "", n);
	dst[n] = '\0';
}

/*
 * XDR of DUMP's result (RFC 1833: pmaplist, rpcblist -- an optional-data chain, read as a
 * loop, not recursion). Decode only; FREE releases l->v. Bounded by RC__RPCB_DUMP_MAX.
 */
static bool rc__xdr_rpcb_list(rc_xdr *x, rc__rpcb_list *l)
{
	if (x->x_op == RC_XDR_FREE) {
		free(l->v);
		l->v = NULL;
		l->n = l->cap = 0;
		return true;
	}
	if (x->x_op != RC_XDR_DECODE)
		return false;
	for (;;) {
		bool more;
		rc__rpcb_map m;
		memset(&m, 0, sizeof(m));
		if (!rc_xdr_bool(x, &more))
			return false;
		if (!more)
			return true;
		if (l->v2) {
			rc__pmap p;
			if (!rc__xdr_pmap(x, &p) || p.port > 65535)
				return false;
			m.prog = p.prog;
			m.vers = p.vers;
			rc__strlcpy(m.netid, p.prot == RC__IPPROTO_TCP ? "tcp" : p.prot == RC__IPPROTO_UDP
			                                                     ? "udp" : "?", sizeof(m.netid));
			snprintf(m.uaddr, sizeof(m.uaddr), "0.0.0.0.%u.%u", p.port >> 8, p.port & 255);
		} else {
			rc__rpcb r;
			bool ok;
			memset(&r, 0, sizeof(r));
			ok = rc__xdr_rpcb(x, &r);
			m.prog = r.prog;
			m.vers = r.vers;
			rc__strlcpy(m.netid, r.netid, sizeof(m.netid));
			rc__strlcpy(m.uaddr, r.addr, sizeof(m.uaddr));
			rc_xdr_free((rc_xdrproc)rc__xdr_rpcb, &r);
			if (!ok)
				return false;
		}
		if (!rc__list_add(l, &m))
			return false;
	}
}

/* ---- universal addresses ------------------------------------------------------------------- */

/* A decimal byte of 1 to 3 digits in [p, end): its value, or -1. */
static int rc__uaddr_byte(const char *p, const char *end)
{
	int v = 0;

	if (end - p < 1 || end - p > 3)
		return -1;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (*p - '0');
	}
	return v <= 255 ? v : -1;
}

/* The port of universal address ua and the length of its host part, or -1. */
static int rc__uaddr_split(const char *ua, size_t *hlen)
{
	const char *p2 = strrchr(ua, '.'), *p1;
	int hi, lo;

	if (p2 == NULL || p2 == ua)
		return -1;
	for (p1 = p2 - 1; p1 > ua && *p1 != '.'; p1--)
		;
	if (p1 == ua || (hi = rc__uaddr_byte(p1 + 1, p2)) < 0 ||
	    (lo = rc__uaddr_byte(p2 + 1, p2 + 1 + strlen(p2 + 1))) < 0)
		return -1;
	*hlen = (size_t)(p1 - ua);
	return hi * 256 + lo;
}

/* rpcbind.h: the port of a universal address, or -1. */
int rc__uaddr_port(const char *ua)
{
	size_t hlen;

	return rc__uaddr_split(ua, &hlen);
}

/* rpcbind.h: the universal address of an IPv4 or IPv6 socket address. */
bool rc__uaddr_format(const struct sockaddr *sa, char *ua, size_t len)
{
	char host[INET6_ADDRSTRLEN];
	unsigned port;
	int n;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		port = ntohs(s4->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		port = ntohs(s6->sin6_port);
	} else {
		return false;
	}
	n = snprintf(ua, len, "%s.%u.%u", host, port >> 8, port & 255);
	return n > 0 && (size_t)n < len;
}

/* ss made of the numeric address host (IPv4 or IPv6) and port: its length, 0 when host is not
 * a numeric address (a QUIC listener's bound URI, a quic entry's universal address). */
static socklen_t rc__literal_addr(const char *host, int port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		return sizeof(*s4);
	}
	if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		return sizeof(*s6);
	}
	return 0;
}

/* rpcbind.h: a URI that reaches a udp/tcp/udp6/tcp6 universal address from this host. */
rc_status rc__uaddr_uri(const char *netid, const char *ua, char *uri, size_t len)
{
	char host[RC__RPCB_STR_MAX + 1];
	const char *scheme;
	bool v6;
	size_t hlen = 0;
	int port = rc__uaddr_split(ua, &hlen);
	unsigned char bin[16];

	if (strcmp(netid, "udp") == 0 || strcmp(netid, "udp6") == 0)
		scheme = "udp";
	else if (strcmp(netid, "tcp") == 0 || strcmp(netid, "tcp6") == 0)
		scheme = "tcp";
	else if (strcmp(netid, "quic") == 0 || strcmp(netid, "quic6") == 0)
		scheme = "quic";
	else
		return RC_UNKNOWNADDR;
	v6 = netid[strlen(scheme)] == '6';
	if (port <= 0)
		return RC_UNKNOWNADDR;
	if (hlen == 0 || hlen >= sizeof(host))
		return RC_UNKNOWNADDR;
	memcpy(host, ua, hlen);
	host[hlen] = '\0';
	if (inet_pton(v6 ? AF_INET6 : AF_INET, host, bin) != 1)
		return RC_UNKNOWNADDR;
	if (!v6 && strcmp(host, "0.0.0.0") == 0)
		rc__strlcpy(host, "127.0.0.1", sizeof(host));
	if (v6 && strcmp(host, "::") == 0)
		rc__strlcpy(host, "::1", sizeof(host));
	if ((size_t)snprintf(uri, len, v6 ? "%s://[%s]:%d" : "%s://%s:%d", scheme, host, port) >=
	    len)
		return RC_UNKNOWNADDR;
	return RC_OK;
}

/* rpcbind.h: what a listening socket serves, as (netid, universal address) entries. */
size_t rc__rpcb_lsn_addrs(int fd, bool dgram, rc__rpcb_addr out[2])
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	const char *proto = dgram ? "udp" : "tcp";

	memset(out, 0, 2 * sizeof(*out));
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return 0;
	if (ss.ss_family == AF_INET) {
		rc__strlcpy(out[0].netid, proto, sizeof(out[0].netid));
		return rc__uaddr_format((struct sockaddr *)&ss, out[0].uaddr, sizeof(out[0].uaddr));
	}
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		int v6only = 1;
		socklen_t ol = sizeof(v6only);
		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			/* bound to ::ffff:a.b.c.d: it serves IPv4 a.b.c.d alone */
			struct sockaddr_in s4;
			memset(&s4, 0, sizeof(s4));
			s4.sin_family = AF_INET;
			s4.sin_port = s6->sin6_port;
			memcpy(&s4.sin_addr, &s6->sin6_addr.s6_addr[12], 4);
			rc__strlcpy(out[0].netid, proto, sizeof(out[0].netid));
			return rc__uaddr_format((struct sockaddr *)&s4, out[0].uaddr,
			                        sizeof(out[0].uaddr));
		}
		snprintf(out[0].netid, sizeof(out[0].netid), "%s6", proto);
		if (!rc__uaddr_format((struct sockaddr *)&ss, out[0].uaddr, sizeof(out[0].uaddr)))
			return 0;
		if (!IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr) ||
		    getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, &ol) != 0 || v6only)
			return 1;
		/* [::] with IPV6_V6ONLY off: IPv4 clients reach it too, on the same port */
		rc__strlcpy(out[1].netid, proto, sizeof(out[1].netid));
		snprintf(out[1].uaddr, sizeof(out[1].uaddr), "0.0.0.0.%u.%u",
		         (unsigned)ntohs(s6->sin6_port) >> 8, (unsigned)ntohs(s6->sin6_port) & 255);
		out[1].implied = true;
		return 2;
	}
	return 0;
}

/* rpcbind.h: the netid quic or quic6 and the universal address of a QUIC listener's URI. */
size_t rc__rpcb_quic_addrs(const char *uri, rc__rpcb_addr out[1])
{
	struct sockaddr_storage ss;
	rc_uri u;

	memset(out, 0, sizeof(*out));
	if (uri == NULL || rc__uri_parse(uri, &u) != RC_OK || strcmp(u.scheme, "quic") != 0 ||
	    u.port <= 0 || u.port > 65535 || rc__literal_addr(u.host, u.port, &ss) == 0)
		return 0;
	rc__strlcpy(out[0].netid, ss.ss_family == AF_INET ? "quic" : "quic6", sizeof(out[0].netid));
	return rc__uaddr_format((struct sockaddr *)&ss, out[0].uaddr, sizeof(out[0].uaddr));
}

/* ---- the client's look-up ------------------------------------------------------------------ */

/* Record in err (if not NULL) how the call to rpcbind version v ended: st, and errno e. */
static void rc__note_rpcb(rc_error *err, uint32_t v, rc_status st, int e)
{
	if (err == NULL)
		return;
	err->rpcbind_vers = v;
	err->rpcbind_status = st;
	err->sys_errno = e;
}

/*
 * A client to host's rpcbind, version v, over the URI's own transport, port 111 (rpcbind
 * answers GETADDR with the address for the netid the question arrived on). On RC_OK *c is the
 * caller's to destroy; otherwise the open's failure, with errno kept.
 */
static rc_status rc__rpcb_remote(const rc_uri *u, uint32_t v, rc_client **c)
{
	rc_uri r = *u;
	rc_status st;

	r.port = RC__PMAP_PORT;
	r.tls = NULL; /* rpcbind is asked in plaintext */
	if ((st = rc__client_open(c, &r, RC__PMAP_PROG, v)) != RC_OK)
		return st;
	rc_client_set_timeout(*c, RC__RPCB_CALL_MS);
	rc_client_set_retry(*c, RC__RPCB_RETRY_MS);
	return RC_OK;
}

/*
 * Call proc of rpcbind version v at u's host (opening and closing a client for it). Returns
 * the call's status; RC_UNKNOWNHOST passes through; err records the rest.
 */
static rc_status rc__rpcb_ask(const rc_uri *u, uint32_t v, uint32_t proc, rc_xdrproc xargs,
                              const void *args, rc_xdrproc xres, void *res, rc_error *err)
{
	rc_client *c;
	rc_error e;
	rc_status st;

	errno = 0;
	if ((st = rc__rpcb_remote(u, v, &c)) != RC_OK) {
		rc__note_rpcb(err, v, st, st == RC_CANTSEND || st == RC_LOCALERROR ? errno : 0);
		return st;
	}
	st = rc_call(c, proc, xargs, args, xres, res);
	rc_client_geterr(c, &e);
	rc_client_destroy(c);
	rc__note_rpcb(err, v, st, st == RC_OK ? 0 : e.sys_errno);
	if (err != NULL && (st == RC_PROGVERSMISMATCH || st == RC_VERSMISMATCH)) {
		err->low = e.low;
		err->high = e.high;
	}
	return st;
}

/*
 * Ask u's host's rpcbind (over UDP) which port serves prog, vers over QUIC: its registration of
 * netid quic (quic6 for an IPv6 host), read from RPCBIND v4 then v3 DUMP -- GETADDR answers for
 * the netid the question came on, and PMAP v2 knows no QUIC. RC_OK with *port, else as
 * rc__rpcb_getport.
 */
static rc_status rc__rpcb_quic_port(const rc_uri *u, bool v6, uint32_t prog, uint32_t vers,
                                    int *port, rc_error *err)
{
	rc_uri q = *u;
	rc_status st = RC_PMAPFAILURE;

	rc__strlcpy(q.scheme, "udp", sizeof(q.scheme));
	q.query[0] = '\0';
	for (uint32_t v = 4; v >= 3; v--) {
		rc__rpcb_list d;
		int p = 0;
		memset(&d, 0, sizeof(d));
		st = rc__rpcb_ask(&q, v, RC__RPCB_DUMP, (rc_xdrproc)rc_xdr_void, NULL,
		                  (rc_xdrproc)rc__xdr_rpcb_list, &d, err);
		if (st == RC_OK) {
			for (size_t i = 0; i < d.n && p == 0; i++)
				if (d.v[i].prog == prog && d.v[i].vers == vers &&
				    strcmp(d.v[i].netid, v6 ? "quic6" : "quic") == 0)
					p = rc__uaddr_port(d.v[i].uaddr);
			rc_xdr_free((rc_xdrproc)rc__xdr_rpcb_list, &d);
			if (p == 0)
				return RC_PROGNOTREGISTERED;
			if (p < 0)
				return RC_PMAPFAILURE;
			*port = p;
			return RC_OK;
		}
		if (st == RC_UNKNOWNHOST)
			return st;
		if (st != RC_PROGVERSMISMATCH && st != RC_PROCUNAVAIL)
			return RC_PMAPFAILURE;
	}
	return RC_PMAPFAILURE;
}

/*
 * Ask u's host's rpcbind which port serves prog, vers over u's transport: RPCBIND v4 then v3
 * GETADDR, then PMAP v2 GETPORT, going down only while the one asked answers version mismatch
 * or procedure unavailable. RC_OK with *port; RC_PROGNOTREGISTERED (rpcbind knows none);
 * RC_UNKNOWNHOST; RC_PMAPFAILURE (no answer, or a malformed one). err (may be NULL) records
 * the version asked last, how that call ended and its errno.
 */
static rc_status rc__rpcb_getport(const rc_uri *u, uint32_t prog, uint32_t vers, int *port,
                                  rc_error *err)
{
	bool tcp = strcmp(u->scheme, "tcp") == 0;
	bool v6 = u->v6literal || strchr(u->host, ':') != NULL;
	rc_status st;

	if (strcmp(u->scheme, "quic") == 0)
		return rc__rpcb_quic_port(u, v6, prog, vers, port, err);
	for (uint32_t v = 4; v >= 3; v--) {
		rc__rpcb q = {prog, vers, NULL, "", ""};
		char *ua = NULL;
		int p;
		q.netid = v6 ? (tcp ? "tcp6" : "udp6") : (tcp ? "tcp" : "udp");
		st = rc__rpcb_ask(u, v, RC__RPCB_GETADDR, (rc_xdrproc)rc__xdr_rpcb, &q,
		                  (rc_xdrproc)rc__xdr_uaddr, &ua, err);
		if (st == RC_OK) {
			p = ua && ua[0] ? rc__uaddr_port(ua) : 0;
			rc_xdr_free((rc_xdrproc)rc__xdr_uaddr, &ua);
			if (p == 0)
				return RC_PROGNOTREGISTERED; /* "": not registered */
			if (p < 0)
				return RC_PMAPFAILURE;
			*port = p;
			return RC_OK;
		}
		rc_xdr_free((rc_xdrproc)rc__xdr_uaddr, &ua);
		if (st == RC_UNKNOWNHOST)
			return st;
		if (st != RC_PROGVERSMISMATCH && st != RC_PROCUNAVAIL)
			return RC_PMAPFAILURE;
	}
	{
		rc__pmap m = {prog, vers, tcp ? RC__IPPROTO_TCP : RC__IPPROTO_UDP, 0};
		uint32_t p = 0;
		st = rc__rpcb_ask(u, 2, RC__PMAP_GETPORT, (rc_xdrproc)rc__xdr_pmap, &m,
		                  (rc_xdrproc)rc_xdr_u_int, &p, err);
		if (st != RC_OK)
			return st == RC_UNKNOWNHOST ? st : RC_PMAPFAILURE;
		if (p == 0)
			return RC_PROGNOTREGISTERED;
		if (p > 65535)
			return RC_PMAPFAILURE;
		*port = (int)p;
		return RC_OK;
	}
}

/*
 * The TLS context for a client of u, from u's query overlaid with the non-zero fields of tls
 * (NULL: none): *ctx NULL when the policy is off (or the scheme is udp and TLS only
 * opportunistic); a quic:// client always has one (its policy aside). RC_OK; RC_UNKNOWNADDR (bad query), RC_NOTSUPP (TLS required over a
 * transport other than tcp), RC_INVAL (unreadable files; detail set), RC_NOMEM.
 */
static rc_status rc__client_tls(const rc_uri *u, const rc_tls_client_opts *tls,
                                rc__tls_ctx **ctx)
{
	rc_tls_client_opts o;
	char buf[RC_URI_MAX];
	rc_status st;

	*ctx = NULL;
	memset(&o, 0, sizeof(o));
	if (u->query[0] != '\0' &&
	    (st = rc__tls_query_parse(u->query, &o, buf, sizeof(buf))) != RC_OK)
		return st; /* (its detail says which key or value, and lists the keys) */
	if (tls != NULL) {
		if (tls->policy != RC_TLS_OFF)
			o.policy = tls->policy;
		o.ca_file = tls->ca_file ? tls->ca_file : o.ca_file;
		o.ca_dir = tls->ca_dir ? tls->ca_dir : o.ca_dir;
		o.cert_file = tls->cert_file ? tls->cert_file : o.cert_file;
		o.key_file = tls->key_file ? tls->key_file : o.key_file;
		o.verify_name = tls->verify_name ? tls->verify_name : o.verify_name;
	}
	if (strcmp(u->scheme, "quic") == 0) /* QUIC is TLS 1.3 always */
		return rc__tls_client_ctx(&o, ctx);
	if (o.policy == RC_TLS_OFF)
		return RC_OK;
	if (strcmp(u->scheme, "tcp") != 0) {
		if (o.policy == RC_TLS_OPPORTUNISTIC)
			return RC_OK; /* RFC 9289: no TLS over UDP; plaintext it is */
		rc__tp_set_detail("RPC-over-TLS runs over tcp only");
		return RC_NOTSUPP;
	}
	return rc__tls_client_ctx(&o, ctx);
}

/* client.h: parse uri, make the TLS context, ask rpcbind for a missing udp/tcp/quic port, open;
 * *err says why not. */
rc_status rc_client_create_tls(rc_client **out, const char *uri, uint32_t prog, uint32_t vers,
                               const rc_tls_client_opts *tls, rc_error *err)
{
	rc_uri u;
	rc_status st;

	if (err != NULL)
		memset(err, 0, sizeof(*err));
	if (out != NULL)
		*out = NULL;
	rc__tp_clear_detail();
	if (out == NULL || uri == NULL)
		st = RC_INVAL;
	else
		st = rc__uri_parse(uri, &u);
	if (st == RC_OK)
		st = rc__client_tls(&u, tls, &u.tls);
	if (st == RC_OK && u.port < 0 &&
	    (strcmp(u.scheme, "udp") == 0 || strcmp(u.scheme, "tcp") == 0 ||
	     strcmp(u.scheme, "quic") == 0))
		st = rc__rpcb_getport(&u, prog, vers, &u.port, err);
	if (st == RC_OK) {
		errno = 0;
		u.prog = prog;
		u.vers = vers;
		st = rc__client_open(out, &u, prog, vers);
		if ((st == RC_CANTSEND || st == RC_LOCALERROR || st == RC_TLSFAILED) && err != NULL)
			err->sys_errno = errno;
		if (st == RC_CANTSEND && err != NULL) {
			err->low = 1; /* could not connect: rc_error_format says so */
			if (err->rpcbind_vers != 0 && rc__tp_detail()[0] == '\0')
				rc__tp_set_detail("port %d, which rpcbind version %u gave for the program%s",
				                  u.port, (unsigned)err->rpcbind_vers,
				                  err->sys_errno == ECONNREFUSED ?
				                          ": nothing listens there" : "");
		}
	}
	if (st != RC_OK && uri != NULL && out != NULL)
		rc__tls_ctx_free(u.tls); /* the client took it only on success */
	if (err != NULL) {
		err->status = st;
		if (st != RC_OK)
			snprintf(err->detail, sizeof(err->detail), "%s", rc__tp_detail());
	}
	return st;
}

/* client.h: rc_client_create_tls with the URI's own TLS options only. */
rc_status rc_client_create_ex(rc_client **out, const char *uri, uint32_t prog, uint32_t vers,
                              rc_error *err)
{
	return rc_client_create_tls(out, uri, prog, vers, NULL, err);
}

/* client.h: rc_client_create_ex without the detail. */
rc_status rc_client_create(rc_client **out, const char *uri, uint32_t prog, uint32_t vers)
{
	return rc_client_create_ex(out, uri, prog, vers, NULL);
}

/* ---- registration -------------------------------------------------------------------------- */

/* The local rpcbind: a client and the protocol it speaks. */
typedef struct rc__rpcb_local {
	rc_client *c;
	bool v2;      /* PMAP v2 over loopback UDP, else RPCBIND v4 over the local socket */
	rc_status st; /* why it could not be reached (c NULL) */
	int err;      /*   ... and errno */
} rc__rpcb_local;

/* Reach the local rpcbind: its local socket (v4; rpcbind trusts it for SET/UNSET), else
 * loopback UDP (PMAP v2). l->c is NULL if neither opens; close with rc_client_destroy. */
static void rc__local_open(rc__rpcb_local *l)
{
	rc_uri u;

	memset(l, 0, sizeof(*l));
	for (size_t i = 0; i < sizeof(rc__rpcb_sockets) / sizeof(rc__rpcb_sockets[0]); i++) {
		char uri[64];
		if (access(rc__rpcb_sockets[i], F_OK) != 0)
			continue;
		snprintf(uri, sizeof(uri), "unix:%s", rc__rpcb_sockets[i]);
		if (rc__uri_parse(uri, &u) == RC_OK &&
		    rc__client_open(&l->c, &u, RC__PMAP_PROG, 4) == RC_OK) {
			rc_client_set_timeout(l->c, RC__RPCB_CALL_MS);
			return;
		}
	}
	l->v2 = true;
	if (rc__uri_parse("udp://127.0.0.1:111", &u) != RC_OK)
		return;
	errno = 0;
	if ((l->st = rc__client_open(&l->c, &u, RC__PMAP_PROG, 2)) != RC_OK) {
		l->err = errno;
		return;
	}
	rc_client_set_timeout(l->c, RC__RPCB_CALL_MS);
	rc_client_set_retry(l->c, RC__RPCB_RETRY_MS);
}

/* The owner string RPCBIND SET/UNSET carry (rpcbind checks the local socket's credentials). */
static void rc__owner(char *buf, size_t len)
{
	if (getuid() == 0)
		snprintf(buf, len, "superuser");
	else
		snprintf(buf, len, "%u", (unsigned)getuid());
}

/* rpcbind's answer to SET (set) or UNSET of (prog, vers, netid) at uaddr; netid "" (RPCBIND)
 * unsets every netid, and PMAP v2 always does (uaddr's port is what it sets). Returns the
 * call's status with *ok rpcbind's answer, and *err the errno of a failed call. */
static rc_status rc__local_change(rc__rpcb_local *l, bool set, uint32_t prog, uint32_t vers,
                                  const char *netid, const char *uaddr, bool *ok, int *err)
{
	rc_status st;
	rc_error e;

	*ok = false;
	if (l->v2) {
		int port = set ? rc__uaddr_port(uaddr) : 0;
		rc__pmap m = {prog, vers, strncmp(netid, "tcp", 3) == 0 ? RC__IPPROTO_TCP
		                                                         : RC__IPPROTO_UDP,
		              port > 0 ? (uint32_t)port : 0};
		st = rc_call(l->c, set ? RC__PMAP_SET : RC__PMAP_UNSET, (rc_xdrproc)rc__xdr_pmap, &m,
		             (rc_xdrproc)rc_xdr_bool, ok);
	} else {
		char owner[32];
		rc__rpcb q = {prog, vers, (char *)netid, (char *)(set ? uaddr : ""), owner};
		rc__owner(owner, sizeof(owner));
		st = rc_call(l->c, set ? RC__RPCB_SET : RC__RPCB_UNSET, (rc_xdrproc)rc__xdr_rpcb, &q,
		             (rc_xdrproc)rc_xdr_bool, ok);
	}
	rc_client_geterr(l->c, &e);
	*err = st == RC_OK ? 0 : e.sys_errno;
	return st;
}

/* rpcbind.h: one SET or UNSET with the local rpcbind, for the Sun API (sunrpc_svc.c). */
rc_status rc__rpcb_local_set(bool set, uint32_t prog, uint32_t vers, const char *netid,
                             const char *uaddr)
{
	rc__rpcb_local l;
	rc_status st;
	bool ok = false;
	int err;

	rc__local_open(&l);
	if (l.c == NULL)
		return RC_PMAPFAILURE;
	if (l.v2 && set && strchr(netid, '6') != NULL) {
		rc_client_destroy(l.c);
		return RC_NOTSUPP; /* PMAP v2 knows no IPv6 */
	}
	st = rc__local_change(&l, set, prog, vers, netid, uaddr, &ok, &err);
	rc_client_destroy(l.c);
	return st != RC_OK ? st : ok ? RC_OK : RC_PMAPFAILURE;
}

/* rpcbind's registrations now (DUMP) into *d (freed with rc_xdr_free(rc__xdr_rpcb_list));
 * the call's status, errno in *err. */
static rc_status rc__local_dump(rc__rpcb_local *l, rc__rpcb_list *d, int *err)
{
	rc_status st;
	rc_error e;

	memset(d, 0, sizeof(*d));
	d->v2 = l->v2;
	st = rc_call(l->c, l->v2 ? RC__PMAP_DUMP : RC__RPCB_DUMP, (rc_xdrproc)rc_xdr_void, NULL,
	             (rc_xdrproc)rc__xdr_rpcb_list, d);
	rc_client_geterr(l->c, &e);
	*err = st == RC_OK ? 0 : e.sys_errno;
	if (st != RC_OK)
		rc_xdr_free((rc_xdrproc)rc__xdr_rpcb_list, d);
	return st;
}

/* Whether a and b name one registration address: PMAP v2 knows ports only. */
static bool rc__same_addr(bool v2, const char *a, const char *b)
{
	return v2 ? rc__uaddr_port(a) == rc__uaddr_port(b) : strcmp(a, b) == 0;
}

/* The registration d lists for (prog, vers, netid), or NULL. */
static rc__rpcb_map *rc__dump_find(rc__rpcb_list *d, uint32_t prog, uint32_t vers,
                                   const char *netid)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].prog == prog && d->v[i].vers == vers && strcmp(d->v[i].netid, netid) == 0)
			return &d->v[i];
	return NULL;
}

/*
 * A QUIC entry's server cannot be asked without trusting its certificate, so it counts as
 * alive while something on this host holds its UDP port (as rpcbind's own check of a
 * registration: a bind to the address fails with EADDRINUSE).
 */
static bool rc__quic_port_held(const char *uaddr)
{
	struct sockaddr_storage ss;
	char host[RC__RPCB_STR_MAX + 1];
	size_t hlen = 0;
	int port = rc__uaddr_split(uaddr, &hlen), fd;
	socklen_t sl;
	bool held;

	if (port <= 0 || hlen == 0 || hlen >= sizeof(host))
		return false;
	memcpy(host, uaddr, hlen);
	host[hlen] = '\0';
	if ((sl = rc__literal_addr(host, port, &ss)) == 0)
		return false;
	if ((fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return true; /* cannot tell: leave it be */
	held = bind(fd, (struct sockaddr *)&ss, sl) != 0 && errno == EADDRINUSE;
	close(fd);
	return held;
}

/*
 * Whether a server of (prog, vers) answers a NULL call at uaddr over netid within
 * RC__RPCB_ALIVE_MS: a reply but "program unavailable", "program version mismatch" or "RPC
 * version mismatch" (a server that does not serve prog, vers there) -- so "procedure
 * unavailable" from a server without a NULL procedure counts. An address this host cannot
 * make a URI of counts as not answering. QUIC entries: rc__quic_port_held.
 */
static bool rc__alive(const char *netid, const char *uaddr, uint32_t prog, uint32_t vers)
{
	char text[RC__RPCB_STR_MAX + 32];
	rc_uri u;
	rc_client *c;
	rc_status st;

	if (strcmp(netid, "quic") == 0 || strcmp(netid, "quic6") == 0)
		return rc__quic_port_held(uaddr);
	if (rc__uaddr_uri(netid, uaddr, text, sizeof(text)) != RC_OK ||
	    rc__uri_parse(text, &u) != RC_OK || rc__client_open(&c, &u, prog, vers) != RC_OK)
		return false;
	rc_client_set_timeout(c, RC__RPCB_ALIVE_MS);
	rc_client_set_retry(c, RC__RPCB_ALIVE_RETRY_MS);
	st = rc_call(c, 0, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void, NULL);
	rc_client_destroy(c);
	return st == RC_OK || st == RC_PROCUNAVAIL || st == RC_AUTHERROR || st == RC_SYSTEMERROR ||
	       st == RC_CANTDECODEARGS || st == RC_CANTDECODERES;
}

/* One entry of a server's registration: what the application reads, and the engine's own. */
typedef struct rc__rpcb_ent {
	rc_rpcbind_entry pub;
	bool ours;  /* registered by this server: removed at the end if rpcbind still lists it */
	bool unset; /* this sync: remove what rpcbind lists first (stale, or taken over) */
	bool set;   /* this sync: send SET */
} rc__rpcb_ent;

/* A server's registration state, the hook's ctx. */
typedef struct rc__rpcb_srv {
	pthread_mutex_t mu; /* one sync at a time; guards the fields below */
	bool on;
	unsigned flags;
	rc__rpcb_ent *ent; /* the latest sync's entries */
	size_t nent;
	rc__srv_prog *wiped; /* RC_RPCBIND_TAKEOVER: (prog, vers) already cleared for every netid */
	size_t nwiped;
} rc__rpcb_srv;

/* Order of (program, version) pairs, for qsort. */
static int rc__prog_cmp(const void *a, const void *b)
{
	const rc__srv_prog *x = a, *y = b;

	if (x->prog != y->prog)
		return x->prog < y->prog ? -1 : 1;
	return x->vers < y->vers ? -1 : x->vers > y->vers;
}

/*
 * The entries v's server wants registered: for each (program, version) in order, each
 * listener's (netid, address), then the implied IPv4 side of dual-stack [::] listeners whose
 * netid no listener gives explicitly. On RC_OK *out (malloc'd, *n entries) is the caller's;
 * RC_NOMEM otherwise.
 */
static rc_status rc__wanted(rc__srv_view *v, rc__rpcb_ent **out, size_t *n)
{
	rc__rpcb_addr *all = calloc(4 * v->nlsn + 1, sizeof(*all)), *a = all + 2 * v->nlsn;
	size_t nall = 0, na = 0;

	*out = NULL;
	*n = 0;
	if (all == NULL)
		return RC_NOMEM;
	for (size_t i = 0; i < v->nlsn; i++)
		nall += v->lsn[i].quic[0] != '\0' ? rc__rpcb_quic_addrs(v->lsn[i].quic, &all[nall])
		                                   : rc__rpcb_lsn_addrs(v->lsn[i].fd, v->lsn[i].dgram,
		                                                        &all[nall]);
	/* into a[]: the explicit entries, then the implied ones no explicit entry covers */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < nall; i++) {
			bool covered = false;
			if (all[i].implied != (pass == 1))
				continue;
			for (size_t j = 0; j < nall && pass == 1; j++)
				covered |= !all[j].implied && strcmp(all[j].netid, all[i].netid) == 0;
			if (!covered)
				a[na++] = all[i];
		}
	}
	qsort(v->progs, v->nprogs, sizeof(*v->progs), rc__prog_cmp);
	if (na > 0 && v->nprogs > 0 && (*out = calloc(na * v->nprogs, sizeof(**out))) == NULL) {
		free(all);
		return RC_NOMEM;
	}
	for (size_t p = 0; p < v->nprogs && na > 0; p++) {
		for (size_t i = 0; i < na; i++) {
			rc_rpcbind_entry *e = &(*out)[*n].pub;
			e->prog = v->progs[p].prog;
			e->vers = v->progs[p].vers;
			rc__strlcpy(e->netid, a[i].netid, sizeof(e->netid));
			rc__strlcpy(e->uaddr, a[i].uaddr, sizeof(e->uaddr));
			(*n)++;
		}
	}
	free(all);
	return RC_OK;
}

/* Whether want[0..n) has (prog, vers, netid) at uaddr: one of this server's own addresses. */
static bool rc__wants(const rc__rpcb_ent *want, size_t n, uint32_t prog, uint32_t vers,
                      const char *netid, const char *uaddr, bool v2)
{
	for (size_t i = 0; i < n; i++)
		if (want[i].pub.prog == prog && want[i].pub.vers == vers &&
		    strcmp(want[i].pub.netid, netid) == 0 && rc__same_addr(v2, want[i].pub.uaddr, uaddr))
			return true;
	return false;
}

/* Mark every entry in want[0..n) st with errno e (rpcbind could not be asked). */
static void rc__fail_all(rc__rpcb_ent *want, size_t n, rc_status st, int e)
{
	for (size_t i = 0; i < n; i++) {
		want[i].pub.status = st;
		want[i].pub.sys_errno = e;
		want[i].set = want[i].unset = false;
	}
}

/* RC_RPCBIND_TAKEOVER: the first time each (prog, vers) of want is registered, remove it for
 * every netid (rpcgen's pmap_unset), and forget what d listed of it. */
static void rc__takeover(rc__rpcb_srv *s, rc__rpcb_local *l, rc__rpcb_list *d,
                         rc__rpcb_ent *want, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t prog = want[i].pub.prog, vers = want[i].pub.vers;
		bool done = false, ok;
		int e;
		rc__srv_prog *w;
		for (size_t j = 0; j < s->nwiped && !done; j++)
			done = s->wiped[j].prog == prog && s->wiped[j].vers == vers;
		if (done || (w = realloc(s->wiped, (s->nwiped + 1) * sizeof(*w))) == NULL)
			continue;
		s->wiped = w;
		s->wiped[s->nwiped].prog = prog;
		s->wiped[s->nwiped++].vers = vers;
		(void)rc__local_change(l, false, prog, vers, "", "", &ok, &e);
		for (size_t j = 0; j < d->n; j++)
			if (d->v[j].prog == prog && d->v[j].vers == vers)
				d->v[j].prog = d->v[j].vers = 0, d->v[j].netid[0] = '\0';
	}
}

/*
 * Decide each wanted entry against d, what rpcbind lists now: already this server's; SET
 * (nothing there, or this server's other listener of the netid, which rpcbind will refuse);
 * UNSET then SET (stale: no NULL answer there; or RC_RPCBIND_TAKEOVER); or refused
 * (RC_PROGREGISTERED: a live server answers there). PMAP v2 only: RC_NOTSUPP for IPv6, and
 * one live holder of a (prog, vers) refuses all of its entries not already ours.
 */
static void rc__decide(const rc__rpcb_srv *s, bool v2, rc__rpcb_list *d, rc__rpcb_ent *want,
                       size_t n)
{
	for (size_t i = 0; i < n; i++) {
		rc_rpcbind_entry *e = &want[i].pub;
		rc__rpcb_map *m;
		if (v2 && strchr(e->netid, '6')) {
			e->status = RC_NOTSUPP;
			continue;
		}
		m = rc__dump_find(d, e->prog, e->vers, e->netid);
		if (m == NULL) {
			want[i].set = true;
			continue;
		}
		if (rc__same_addr(v2, m->uaddr, e->uaddr)) {
			e->status = RC_OK;
			want[i].ours = true;
			continue;
		}
		rc__strlcpy(e->holder, m->uaddr, sizeof(e->holder));
		if (rc__wants(want, n, e->prog, e->vers, e->netid, m->uaddr, v2)) {
			want[i].set = true; /* our own other listener holds the netid */
		} else if ((s->flags & RC_RPCBIND_TAKEOVER) ||
		           !rc__alive(m->netid, m->uaddr, e->prog, e->vers)) {
			want[i].unset = want[i].set = true;
		} else {
			e->status = RC_PROGREGISTERED;
		}
	}
	if (!v2)
		return;
	for (size_t i = 0; i < n; i++) {
		if (want[i].pub.status != RC_PROGREGISTERED)
			continue;
		for (size_t j = 0; j < n; j++) {
			if (want[j].pub.prog != want[i].pub.prog || want[j].pub.vers != want[i].pub.vers ||
			    want[j].ours || want[j].pub.status == RC_NOTSUPP)
				continue;
			want[j].pub.status = RC_PROGREGISTERED;
			want[j].set = want[j].unset = false;
			if (want[j].pub.holder[0] == '\0')
				rc__strlcpy(want[j].pub.holder, want[i].pub.holder,
				            sizeof(want[j].pub.holder));
		}
	}
}

/*
 * Carry out what rc__decide chose: the UNSETs (PMAP v2: one per (prog, vers), after which
 * its entries already ours are SET again), then the SETs, recording each outcome.
 */
static void rc__apply(rc__rpcb_local *l, rc__rpcb_ent *want, size_t n)
{
	bool ok;
	int e;

	for (size_t i = 0; i < n; i++) {
		if (!want[i].unset)
			continue;
		(void)rc__local_change(l, false, want[i].pub.prog, want[i].pub.vers,
		                       want[i].pub.netid, "", &ok, &e);
		for (size_t j = 0; j < n && l->v2; j++) {
			if (j == i || want[j].pub.prog != want[i].pub.prog ||
			    want[j].pub.vers != want[i].pub.vers)
				continue;
			want[j].unset = false; /* PMAP v2's UNSET took every protocol */
			if (want[j].ours)
				want[j].set = true, want[j].ours = false;
		}
	}
	for (size_t i = 0; i < n; i++) {
		rc_rpcbind_entry *p = &want[i].pub;
		rc_status st;
		if (!want[i].set)
			continue;
		st = rc__local_change(l, true, p->prog, p->vers, p->netid, p->uaddr, &ok, &e);
		p->status = st != RC_OK ? st : ok ? RC_OK : RC_PMAPFAILURE;
		p->sys_errno = e;
		want[i].ours = p->status == RC_OK;
		for (size_t j = 0; j < i && p->status == RC_PMAPFAILURE && !p->holder[0]; j++)
			if (want[j].ours && want[j].pub.prog == p->prog && want[j].pub.vers == p->vers &&
			    strcmp(want[j].pub.netid, p->netid) == 0) /* refused: we hold the netid */
				rc__strlcpy(p->holder, want[j].pub.uaddr, sizeof(p->holder));
	}
}

/* What rc_server_rpcbind returns for these entries. */
static rc_status rc__overall(const rc__rpcb_ent *want, size_t n)
{
	rc_status st = RC_OK;

	for (size_t i = 0; i < n; i++) {
		if (want[i].pub.status == RC_PROGREGISTERED)
			return RC_PROGREGISTERED;
		if (want[i].pub.status != RC_OK)
			st = RC_PMAPFAILURE;
	}
	return st;
}

/* Register srv's entries now (under s->mu): s->ent becomes this sync's entries. */
static rc_status rc__sync(rc_server *srv, rc__rpcb_srv *s)
{
	rc__srv_view v;
	rc__rpcb_ent *want;
	rc__rpcb_local l;
	rc__rpcb_list d;
	size_t n;
	rc_status st;
	int e;

	if ((st = rc__server_view(srv, &v)) != RC_OK)
		return st;
	st = rc__wanted(&v, &want, &n);
	rc__server_view_free(&v);
	if (st != RC_OK)
		return st;
	rc__local_open(&l);
	if (l.c == NULL) {
		rc__fail_all(want, n, l.st, l.err);
		st = RC_PMAPFAILURE;
	} else if ((st = rc__local_dump(&l, &d, &e)) != RC_OK) {
		rc__fail_all(want, n, st, e);
		st = RC_PMAPFAILURE;
	} else {
		if (s->flags & RC_RPCBIND_TAKEOVER)
			rc__takeover(s, &l, &d, want, n);
		rc__decide(s, l.v2, &d, want, n);
		rc_xdr_free((rc_xdrproc)rc__xdr_rpcb_list, &d);
		rc__apply(&l, want, n);
		st = rc__overall(want, n);
	}
	rc_client_destroy(l.c);
	free(s->ent);
	s->ent = want;
	s->nent = n;
	return st;
}

/* Remove (under s->mu) what this server registered, where rpcbind still lists its address:
 * never another server's entry that took the netid over since. Forgets the entries. */
static void rc__unset_ours(rc__rpcb_srv *s)
{
	rc__rpcb_local l;
	rc__rpcb_list d;
	bool ok;
	int e;

	rc__local_open(&l);
	if (l.c != NULL && rc__local_dump(&l, &d, &e) == RC_OK) {
		for (size_t i = 0; i < s->nent; i++) {
			rc_rpcbind_entry *p = &s->ent[i].pub;
			rc__rpcb_map *m;
			bool mine = true;
			if (!s->ent[i].ours || (m = rc__dump_find(&d, p->prog, p->vers, p->netid)) == NULL ||
			    !rc__same_addr(l.v2, m->uaddr, p->uaddr))
				continue;
			/* PMAP v2 unsets both protocols: only if all it lists of them is ours */
			for (size_t j = 0; j < d.n && l.v2; j++)
				if (d.v[j].prog == p->prog && d.v[j].vers == p->vers)
					mine &= rc__wants(s->ent, s->nent, p->prog, p->vers, d.v[j].netid,
					                  d.v[j].uaddr, true);
			if (mine)
				(void)rc__local_change(&l, false, p->prog, p->vers, p->netid, "", &ok, &e);
			for (size_t j = i + 1; j < s->nent && l.v2; j++)
				if (s->ent[j].pub.prog == p->prog && s->ent[j].pub.vers == p->vers)
					s->ent[j].ours = false; /* done with the (prog, vers) */
		}
		rc_xdr_free((rc_xdrproc)rc__xdr_rpcb_list, &d);
	}
	rc_client_destroy(l.c);
	free(s->ent);
	s->ent = NULL;
	s->nent = 0;
}

/* The server's hook: register what a new listener or program adds; at destroy, remove what
 * is ours and free s. */
static void rc__hook(rc_server *srv, rc__srv_event ev, void *ctx)
{
	rc__rpcb_srv *s = ctx;

	pthread_mutex_lock(&s->mu);
	if (ev == RC__SRV_CHANGED) {
		if (s->on)
			(void)rc__sync(srv, s);
		pthread_mutex_unlock(&s->mu);
		return;
	}
	if (s->on)
		rc__unset_ours(s);
	pthread_mutex_unlock(&s->mu);
	rc__server_set_hook(srv, NULL, NULL);
	pthread_mutex_destroy(&s->mu);
	free(s->ent);
	free(s->wiped);
	free(s);
}

/* Serialises installing the hook (two first calls of rc_server_rpcbind at once). */
static pthread_mutex_t rc__install_mu = PTHREAD_MUTEX_INITIALIZER;

/* server.h: turn srv's registration on (install the hook, sync) or off (remove ours). */
rc_status rc_server_rpcbind_ex(rc_server *srv, bool on, unsigned flags)
{
	rc__rpcb_srv *s;
	rc_status st = RC_OK;

	if (srv == NULL || (flags & ~RC_RPCBIND_TAKEOVER) != 0)
		return RC_INVAL;
	pthread_mutex_lock(&rc__install_mu);
	if ((s = rc__server_hook_ctx(srv, rc__hook)) == NULL && on) {
		if ((s = calloc(1, sizeof(*s))) == NULL) {
			pthread_mutex_unlock(&rc__install_mu);
			return RC_NOMEM;
		}
		pthread_mutex_init(&s->mu, NULL);
		rc__server_set_hook(srv, rc__hook, s);
	}
	pthread_mutex_unlock(&rc__install_mu);
	if (s == NULL)
		return RC_OK; /* off, and never on */
	pthread_mutex_lock(&s->mu);
	if (on) {
		s->on = true;
		s->flags = flags;
		st = rc__sync(srv, s);
	} else if (s->on) {
		rc__unset_ours(s);
		s->on = false;
	}
	pthread_mutex_unlock(&s->mu);
	return st;
}

/* server.h: rc_server_rpcbind_ex without flags. */
rc_status rc_server_rpcbind(rc_server *srv, bool on)
{
	return rc_server_rpcbind_ex(srv, on, 0);
}

/* server.h: copy the latest sync's entries (under the state's lock); how many there are. */
size_t rc_server_rpcbind_entries(rc_server *srv, rc_rpcbind_entry *out, size_t max)
{
	rc__rpcb_srv *s;
	size_t n;

	if (srv == NULL || (s = rc__server_hook_ctx(srv, rc__hook)) == NULL)
		return 0;
	pthread_mutex_lock(&s->mu);
	n = s->nent;
	for (size_t i = 0; i < n && i < max && out != NULL; i++)
		out[i] = s->ent[i].pub;
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* server.h: one line for e into buf0 (NUL-terminated, truncated to len); returns buf0. */
char *rc_rpcbind_entry_format(const rc_rpcbind_entry *e, char *buf0, size_t len)
{
	char *buf = buf0;
	int n;

	if (buf == NULL || len == 0)
		return buf;
	if (e == NULL) {
		buf[0] = '\0';
		return buf;
	}
	n = snprintf(buf, len, "program %u version %u %s %s: ", e->prog, e->vers, e->netid,
	             e->uaddr);
	if (n < 0 || (size_t)n >= len)
		return buf0;
	buf += n;
	len -= (size_t)n;
	switch (e->status) {
	case RC_OK:
		if (e->holder[0])
			snprintf(buf, len, "registered (replacing %s)", e->holder);
		else
			snprintf(buf, len, "registered");
		break;
	case RC_PROGREGISTERED:
		snprintf(buf, len, "not registered: a live server holds it at %s "
		                   "(RC_RPCBIND_TAKEOVER takes over)", e->holder);
		break;
	case RC_PMAPFAILURE:
		snprintf(buf, len, "rpcbind refused to register it%s%s%s", e->holder[0] ? " (" : "",
		         e->holder[0] ? e->holder : "", e->holder[0] ? " is registered)" : "");
		break;
	case RC_NOTSUPP:
		snprintf(buf, len, "not registered: PMAP version 2 registers IPv4 only");
		break;
	default:
		snprintf(buf, len, "not registered: rpcbind: %s%s%s", rc_strerror(e->status),
		         e->sys_errno ? ": " : "", e->sys_errno ? strerror(e->sys_errno) : "");
	}
	return buf0;
}

/*
 * rpcbind: a layer above the client and the server, calling down only. rc_client_create
 * parses the URI, asks the host's rpcbind for a missing udp/tcp port (RPCBIND v4/v3 GETADDR
 * and PMAP v2 GETPORT) and opens the client through client.c's rc__client_open (rpc.h).
 * rc_server_rpcbind registers the server (RPCBIND SET/UNSET over rpcbind's local socket,
 * falling back to PMAP SET/UNSET over loopback UDP), reading its listeners and programs through
 * rc__server_view and learning of new ones through the hook it installs (server_internal.h).
 * Neither client.c nor server.c calls this file.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/rpc.h"
#include "runtime/server_internal.h"

#define RC__PMAP_PROG 100000u
#define RC__PMAP_PORT 111
#define RC__PMAP_SET 1u
#define RC__PMAP_UNSET 2u
#define RC__PMAP_GETPORT 3u
#define RC__RPCB_SET 1u
#define RC__RPCB_UNSET 2u
#define RC__RPCB_GETADDR 3u
#define RC__IPPROTO_TCP 6u
#define RC__IPPROTO_UDP 17u

static const char *const rc__rpcb_sockets[] = {"/run/rpcbind.sock", "/var/run/rpcbind.sock"};

typedef struct rc__pmap {
	uint32_t prog, vers, prot, port;
} rc__pmap;

static bool rc__xdr_pmap(rc_xdr *x, rc__pmap *m)
{
	return rc_xdr_u_int(x, &m->prog) && rc_xdr_u_int(x, &m->vers) &&
	       rc_xdr_u_int(x, &m->prot) && rc_xdr_u_int(x, &m->port);
}

typedef struct rc__rpcb {
	uint32_t prog, vers;
	char *netid, *addr, *owner;
} rc__rpcb;

static bool rc__xdr_rpcb(rc_xdr *x, rc__rpcb *r)
{
	return rc_xdr_u_int(x, &r->prog) && rc_xdr_u_int(x, &r->vers) &&
	       rc_xdr_string(x, &r->netid, 255) && rc_xdr_string(x, &r->addr, 255) &&
	       rc_xdr_string(x, &r->owner, 255);
}

static bool rc__xdr_uaddr(rc_xdr *x, char **s)
{
	return rc_xdr_string(x, s, 255);
}

/* The port in a universal address "h1.h2.h3.h4.p1.p2" (or "v6addr.p1.p2"); -1 if none. */
static int rc__uaddr_port(const char *ua)
{
	const char *p2 = strrchr(ua, '.'), *p1;
	int hi, lo;

	if (p2 == NULL || p2 == ua)
		return -1;
	for (p1 = p2 - 1; p1 > ua && *p1 != '.'; p1--)
		;
	if (*p1 != '.' || sscanf(p1 + 1, "%d", &hi) != 1 || sscanf(p2 + 1, "%d", &lo) != 1 ||
	    hi < 0 || hi > 255 || lo < 0 || lo > 255)
		return -1;
	return hi * 256 + lo;
}

/*
 * A client to host's rpcbind, version v, over the URI's own transport: rpcbind answers
 * GETADDR with the address for the netid the question arrived on.
 */
static rc_status rc__rpcb_client(const rc_uri *u, uint32_t v, rc_client **c)
{
	rc_uri r = *u;
	rc_status st;

	r.port = RC__PMAP_PORT;
	if ((st = rc__client_open(c, &r, RC__PMAP_PROG, v)) != RC_OK)
		return st;
	rc_client_set_timeout(*c, 5000);
	rc_client_set_retry(*c, 1000);
	return RC_OK;
}

/* Ask u's host's rpcbind which port serves (prog, vers) over u's protocol. RC_OK with *port,
 * RC_PROGNOTREGISTERED, RC_UNKNOWNHOST or RC_PMAPFAILURE. */
static rc_status rc__rpcbind_getport(const rc_uri *u, uint32_t prog, uint32_t vers, int *port)
{
	bool tcp = strcmp(u->scheme, "tcp") == 0;
	rc_client *c = NULL;
	rc_status st;

	/* RPCBIND v4, then v3: GETADDR with the netid */
	for (uint32_t v = 4; v >= 3; v--) {
		rc__rpcb q = {prog, vers, NULL, "", ""};
		char *ua = NULL;
		q.netid = u->v6literal || strchr(u->host, ':') ? (tcp ? "tcp6" : "udp6")
		                                               : (tcp ? "tcp" : "udp");
		if ((st = rc__rpcb_client(u, v, &c)) != RC_OK)
			return st == RC_UNKNOWNHOST ? st : RC_PMAPFAILURE;
		st = rc_call(c, RC__RPCB_GETADDR, (rc_xdrproc)rc__xdr_rpcb, &q,
		             (rc_xdrproc)rc__xdr_uaddr, &ua);
		rc_client_destroy(c);
		if (st == RC_OK) {
			int p = ua ? rc__uaddr_port(ua) : -1;
			bool empty = ua == NULL || ua[0] == '\0';
			rc_xdr_free((rc_xdrproc)rc__xdr_uaddr, &ua);
			if (empty)
				return RC_PROGNOTREGISTERED;
			if (p <= 0)
				return RC_PMAPFAILURE;
			*port = p;
			return RC_OK;
		}
		rc_xdr_free((rc_xdrproc)rc__xdr_uaddr, &ua);
		if (st != RC_PROGVERSMISMATCH && st != RC_PROCUNAVAIL)
			break;
	}
	/* PMAP v2 GETPORT */
	{
		rc__pmap m = {prog, vers, tcp ? RC__IPPROTO_TCP : RC__IPPROTO_UDP, 0};
		uint32_t p = 0;
		if ((st = rc__rpcb_client(u, 2, &c)) != RC_OK)
			return RC_PMAPFAILURE;
		st = rc_call(c, RC__PMAP_GETPORT, (rc_xdrproc)rc__xdr_pmap, &m,
		             (rc_xdrproc)rc_xdr_u_int, &p);
		rc_client_destroy(c);
		if (st != RC_OK)
			return RC_PMAPFAILURE;
		if (p == 0 || p > 65535)
			return RC_PROGNOTREGISTERED;
		*port = (int)p;
		return RC_OK;
	}
}

/* client.h: parse uri, ask rpcbind for a missing udp/tcp port, open. */
rc_status rc_client_create(rc_client **out, const char *uri, uint32_t prog, uint32_t vers)
{
	rc_uri u;
	rc_status st;

	if (out == NULL)
		return RC_INVAL;
	*out = NULL;
	if (uri == NULL)
		return RC_INVAL;
	if ((st = rc__uri_parse(uri, &u)) != RC_OK)
		return st;
	if (u.port < 0 && (strcmp(u.scheme, "udp") == 0 || strcmp(u.scheme, "tcp") == 0) &&
	    (st = rc__rpcbind_getport(&u, prog, vers, &u.port)) != RC_OK)
		return st;
	return rc__client_open(out, &u, prog, vers);
}

/* ---- registration ----------------------------------------------------------------------- */

/* A client to the local rpcbind for SET/UNSET: the local socket (trusted by rpcbind), else
 * loopback UDP. */
static rc_status rc__rpcb_local(uint32_t v, rc_client **c)
{
	for (size_t i = 0; i < sizeof(rc__rpcb_sockets) / sizeof(rc__rpcb_sockets[0]); i++) {
		char uri[64];
		rc_uri u;
		if (access(rc__rpcb_sockets[i], F_OK) != 0)
			continue;
		snprintf(uri, sizeof(uri), "unix:%s", rc__rpcb_sockets[i]);
		if (rc__uri_parse(uri, &u) == RC_OK &&
		    rc__client_open(c, &u, RC__PMAP_PROG, v) == RC_OK) {
			rc_client_set_timeout(*c, 5000);
			return RC_OK;
		}
	}
	return RC_PMAPFAILURE;
}

/* netid and universal address of a listening socket, from its bound URI
 * ("udp://0.0.0.0:2049"); false for a Unix-domain one. */
static bool rc__listener_uaddr(int fd, bool dgram, char *netid, size_t nlen, char *ua,
                               size_t ualen, int *portp)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char uri[RC_URI_MAX];
	rc_uri u;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0 ||
	    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6) ||
	    rc__sock_bound_uri(fd, dgram ? "udp" : "tcp", uri, sizeof(uri)) != RC_OK ||
	    rc__uri_parse(uri, &u) != RC_OK || u.port <= 0)
		return false;
	snprintf(netid, nlen, "%s%s", dgram ? "udp" : "tcp", u.v6literal ? "6" : "");
	snprintf(ua, ualen, "%s.%d.%d", u.host, u.port >> 8, u.port & 255);
	*portp = u.port;
	return true;
}

typedef struct rc__sync {
	rc_client *c;
	bool v2;
	rc_status st;
	const rc__srv_view *v;
} rc__sync;

/* Register (prog, vers) on every listener of s->v (clearing it first); s->st records a
 * failure. */
static void rc__sync_one(rc__sync *s, uint32_t prog, uint32_t vers)
{
	char owner[32];

	snprintf(owner, sizeof(owner), "%u", (unsigned)getuid());
	if (getuid() == 0)
		snprintf(owner, sizeof(owner), "superuser");
	/* clear what an earlier run of this program left, then register each listener */
	if (s->v2) {
		rc__pmap m = {prog, vers, 0, 0};
		bool ok = false;
		(void)rc_call(s->c, RC__PMAP_UNSET, (rc_xdrproc)rc__xdr_pmap, &m,
		              (rc_xdrproc)rc_xdr_bool, &ok);
	} else {
		rc__rpcb q = {prog, vers, "", "", owner};
		bool ok = false;
		(void)rc_call(s->c, RC__RPCB_UNSET, (rc_xdrproc)rc__xdr_rpcb, &q,
		              (rc_xdrproc)rc_xdr_bool, &ok);
	}
	for (size_t i = 0; i < s->v->nlsn; i++) {
		char netid[8], ua[300];
		int port;
		bool ok = false;
		rc_status st;

		if (!rc__listener_uaddr(s->v->lsn[i].fd, s->v->lsn[i].dgram, netid, sizeof(netid), ua,
		                        sizeof(ua), &port))
			continue;
		if (s->v2) {
			rc__pmap m = {prog, vers, s->v->lsn[i].dgram ? RC__IPPROTO_UDP : RC__IPPROTO_TCP,
			              (uint32_t)port};
			if (strchr(netid, '6'))
				continue; /* PMAP v2 knows IPv4 only */
			st = rc_call(s->c, RC__PMAP_SET, (rc_xdrproc)rc__xdr_pmap, &m,
			             (rc_xdrproc)rc_xdr_bool, &ok);
		} else {
			rc__rpcb q = {prog, vers, netid, ua, owner};
			st = rc_call(s->c, RC__RPCB_SET, (rc_xdrproc)rc__xdr_rpcb, &q,
			             (rc_xdrproc)rc_xdr_bool, &ok);
		}
		if (st != RC_OK || !ok)
			s->st = RC_PMAPFAILURE;
	}
}

/* Open a client to the local rpcbind into s (RC_OK), else RC_PMAPFAILURE. */
static rc_status rc__sync_open(rc__sync *s)
{
	rc_uri lo;

	if (rc__rpcb_local(4, &s->c) != RC_OK) {
		rc__uri_parse("udp://127.0.0.1:111", &lo);
		if (rc__rpcb_client(&lo, 2, &s->c) != RC_OK)
			return RC_PMAPFAILURE;
		s->v2 = true;
	}
	return RC_OK;
}

/* Register every (program, version) on every UDP/TCP listener of srv with the local
 * rpcbind. RC_OK, RC_PMAPFAILURE, RC_NOMEM. */
static rc_status rc__rpcbind_sync(rc_server *srv)
{
	rc__srv_view v;
	rc__sync s;
	rc_status st;

	memset(&s, 0, sizeof(s));
	if ((st = rc__server_view(srv, &v)) != RC_OK)
		return st;
	s.v = &v;
	if (rc__sync_open(&s) == RC_OK) {
		for (size_t i = 0; i < v.nprogs; i++)
			rc__sync_one(&s, v.progs[i].prog, v.progs[i].vers);
		rc_client_destroy(s.c);
	} else {
		s.st = RC_PMAPFAILURE;
	}
	rc__server_view_free(&v);
	return s.st;
}

/* UNSET (prog, vers) over s's client. */
static void rc__unset_one(rc__sync *s, uint32_t prog, uint32_t vers)
{
	bool ok = false;

	if (s->v2) {
		rc__pmap m = {prog, vers, 0, 0};
		(void)rc_call(s->c, RC__PMAP_UNSET, (rc_xdrproc)rc__xdr_pmap, &m,
		              (rc_xdrproc)rc_xdr_bool, &ok);
	} else {
		char owner[32];
		snprintf(owner, sizeof(owner), getuid() == 0 ? "superuser" : "%u",
		         (unsigned)getuid());
		rc__rpcb q = {prog, vers, "", "", owner};
		(void)rc_call(s->c, RC__RPCB_UNSET, (rc_xdrproc)rc__xdr_rpcb, &q,
		              (rc_xdrproc)rc_xdr_bool, &ok);
	}
}

/* Remove what rc__rpcbind_sync registered for srv. */
static void rc__rpcbind_unset_all(rc_server *srv)
{
	rc__srv_view v;
	rc__sync s;

	memset(&s, 0, sizeof(s));
	if (rc__server_view(srv, &v) != RC_OK)
		return;
	if (rc__sync_open(&s) == RC_OK) {
		for (size_t i = 0; i < v.nprogs; i++)
			rc__unset_one(&s, v.progs[i].prog, v.progs[i].vers);
		rc_client_destroy(s.c);
	}
	rc__server_view_free(&v);
}

/* A server's registration state, the hook's ctx. */
typedef struct rc__rpcb_srv {
	pthread_mutex_t mu; /* one sync at a time; guards on */
	bool on;
} rc__rpcb_srv;

/* The server's hook: register again when a listener or program is added; at destroy,
 * unregister and free s. */
static void rc__hook(rc_server *srv, rc__srv_event ev, void *ctx)
{
	rc__rpcb_srv *s = ctx;

	pthread_mutex_lock(&s->mu);
	if (ev == RC__SRV_CHANGED) {
		if (s->on)
			(void)rc__rpcbind_sync(srv);
		pthread_mutex_unlock(&s->mu);
		return;
	}
	if (s->on)
		rc__rpcbind_unset_all(srv);
	pthread_mutex_unlock(&s->mu);
	rc__server_set_hook(srv, NULL, NULL);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* Serialises installing the hook (two first calls of rc_server_rpcbind at once). */
static pthread_mutex_t rc__install_mu = PTHREAD_MUTEX_INITIALIZER;

/* server.h: turn srv's registration on (install the hook, register) or off (unregister). */
rc_status rc_server_rpcbind(rc_server *srv, bool on)
{
	rc__rpcb_srv *s;
	rc_status st = RC_OK;

	if (srv == NULL)
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
		st = rc__rpcbind_sync(srv);
	} else if (s->on) {
		rc__rpcbind_unset_all(srv);
		s->on = false;
	}
	pthread_mutex_unlock(&s->mu);
	return st;
}

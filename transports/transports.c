/*
 * The table of transports by URI scheme -- a new transport adds one line here -- and what
 * picks a transport from it: a URI's parse (rc__uri_parse) and the adoption of a socket the
 * application opened (rc__tp_adopt, through the kind's adopt). The top of transports/: the
 * transports themselves never call it.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "transports/transport.h"

extern const rc_tp_kind rc__udp_kind, rc__tcp_kind, rc__unix_kind, rc__inproc_kind,
	rc__quic_kind;

static const rc_tp_kind *const rc__kinds[] = {
	&rc__udp_kind,
	&rc__tcp_kind,
	&rc__unix_kind,
	&rc__inproc_kind,
	&rc__quic_kind,
};

const rc_tp_kind *rc__tp_find(const char *scheme)
{
	for (size_t i = 0; i < sizeof(rc__kinds) / sizeof(rc__kinds[0]); i++)
		if (strcmp(rc__kinds[i]->scheme, scheme) == 0)
			return rc__kinds[i];
	return NULL;
}

/* The keys of a URI's query: one line a key (see transport.h). The listen side takes none
 * yet; a client's are RPC-over-TLS's (transports/tls.c reads them: rc__tls_query_parse). */
static const rc__uri_key rc__uri_keys[] = {
	{"tls", "off|opportunistic|required", RC__URIQ_CLIENT,
	 "server TLS: rc_server_set_tls, rc_server_set_tls_required"},
	{"ca", NULL, RC__URIQ_CLIENT, "a server's: rc_tls_server_opts"},
	{"cadir", NULL, RC__URIQ_CLIENT, "a server's: rc_tls_server_opts"},
	{"cert", NULL, RC__URIQ_CLIENT, "a server's: rc_tls_server_opts"},
	{"key", NULL, RC__URIQ_CLIENT, "a server's: rc_tls_server_opts"},
	{"name", NULL, RC__URIQ_CLIENT, ""},
	/* quic:// (transports/quic.c): a client's pool of streams; a listener's cap on the
	 * streams one client connection opens */
	{"streams", NULL, RC__URIQ_CLIENT | RC__URIQ_LISTEN, ""},
};
#define RC__NURIKEYS (sizeof(rc__uri_keys) / sizeof(rc__uri_keys[0]))

/* "client URI" / "listen URI". */
static const char *rc__uri_side(unsigned side)
{
	return side == RC__URIQ_LISTEN ? "listen URI" : "client URI";
}

/* The keys side takes, for a refusal: "tls=off|opportunistic|required, ca, ..." (a key with
 * values lists them), or "no keys". */
static const char *rc__uri_keys_of(unsigned side, char *out, size_t cap)
{
	size_t n = 0;

	out[0] = '\0';
	for (size_t i = 0; i < RC__NURIKEYS; i++) {
		const rc__uri_key *k = &rc__uri_keys[i];
		if (!(k->sides & side) || n >= cap)
			continue;
		n += (size_t)snprintf(out + n, cap - n, "%s%s%s%s", n ? ", " : "", k->name,
		                      k->values ? "=" : "", k->values ? k->values : "");
	}
	return n ? out : "no keys";
}

/* The key of query pair p[0..klen), or NULL. */
static const rc__uri_key *rc__uri_key_find(const char *p, size_t klen)
{
	for (size_t i = 0; i < RC__NURIKEYS; i++)
		if (strlen(rc__uri_keys[i].name) == klen &&
		    strncmp(p, rc__uri_keys[i].name, klen) == 0)
			return &rc__uri_keys[i];
	return NULL;
}

/* Whether v is one of values ("a|b|c"). */
static bool rc__uri_value_ok(const char *values, const char *v)
{
	size_t vl = strlen(v);

	for (const char *p = values; *p != '\0';) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		if (n == vl && strncmp(p, v, n) == 0)
			return true;
		p += n + (bar != NULL);
	}
	return false;
}

/* Decode the value q[0..end) (%XX escapes) into buf[*used..cap), NUL-terminated; false for a
 * bad escape, a NUL byte or no room. */
static bool rc__uri_value(const char *q, const char *end, char *buf, size_t *used, size_t cap)
{
	for (; q < end; q++) {
		int ch = (unsigned char)*q;
		if (ch == '%') {
			int hi = q + 2 < end ? rc__hexval(q[1]) : -1;
			int lo = hi >= 0 ? rc__hexval(q[2]) : -1;
			if (lo < 0)
				return false;
			ch = hi * 16 + lo;
			q += 2;
		}
		if (ch == 0 || *used + 1 >= cap)
			return false;
		buf[(*used)++] = (char)ch;
	}
	if (*used >= cap)
		return false;
	buf[(*used)++] = '\0';
	return true;
}

/* See transport.h: check each pair against the table, then hand it to fn. */
rc_status rc__uri_query(const char *query, unsigned side, rc__uri_key_fn fn, void *ctx,
                        char *buf, size_t cap)
{
	char keys[160];
	const char *p = query;
	size_t used = 0;

	while (*p != '\0') {
		const char *eq = strchr(p, '='), *amp = strchr(p, '&');
		const char *end = amp ? amp : p + strlen(p);
		const rc__uri_key *k;
		char *val = buf + used;
		int klen;

		if (eq == NULL || eq > end) {
			rc__tp_set_detail("URI query: %.*s is not key=value; a %s takes %s",
			                  (int)(end - p < 40 ? end - p : 40), p, rc__uri_side(side),
			                  rc__uri_keys_of(side, keys, sizeof(keys)));
			return RC_UNKNOWNADDR;
		}
		klen = (int)(eq - p < 40 ? eq - p : 40);
		if ((k = rc__uri_key_find(p, (size_t)(eq - p))) == NULL) {
			rc__tp_set_detail("URI query: unknown key %.*s; a %s takes %s", klen, p,
			                  rc__uri_side(side),
			                  rc__uri_keys_of(side, keys, sizeof(keys)));
			return RC_UNKNOWNADDR;
		}
		if (!(k->sides & side)) {
			const bool alt = k->elsewhere[0] != '\0';
			rc__tp_set_detail("URI query: %s is a %s's key%s%s%s; a %s takes %s",
			                  k->name, rc__uri_side(k->sides), alt ? " (" : "",
			                  k->elsewhere, alt ? ")" : "", rc__uri_side(side),
			                  rc__uri_keys_of(side, keys, sizeof(keys)));
			return RC_UNKNOWNADDR;
		}
		if (!rc__uri_value(eq + 1, end, buf, &used, cap)) {
			rc__tp_set_detail("URI query: the value of %s is malformed (%%XX escapes) "
			                  "or too long", k->name);
			return RC_UNKNOWNADDR;
		}
		if (k->values != NULL && !rc__uri_value_ok(k->values, val)) {
			rc__tp_set_detail("URI query: %s=%.40s; %s takes %s", k->name, val, k->name,
			                  k->values);
			return RC_UNKNOWNADDR;
		}
		if (fn != NULL && !fn(ctx, k, val))
			return RC_UNKNOWNADDR;
		p = amp ? amp + 1 : end;
	}
	return RC_OK;
}

/* Copy at most cap-1 bytes of s[0..n) into dst; false if it does not fit. */
static bool rc__copy(char *dst, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		return false;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return true;
}

/*
 * A host is an IPv6 literal (hex digits, ':', '.', and a '%zone') or a DNS name: labels of
 * letters, digits, '-' and '_' of at most 63 characters, 253 in all (RFC 1035).
 */
static bool rc__host_ok(const char *h, bool v6)
{
	size_t len = strlen(h), label = 0;

	if (len == 0 || len > 253)
		return false;
	for (const char *p = h; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (v6) {
			if (!(isxdigit(ch) || ch == ':' || ch == '.' || ch == '%' || isalnum(ch)))
				return false;
			continue;
		}
		if (ch == '.') {
			if (label == 0)
				return false;
			label = 0;
			continue;
		}
		if (!(isalnum(ch) || ch == '-' || ch == '_') || ++label > 63)
			return false;
	}
	return true;
}

/* See transport.h. */
rc_status rc__uri_parse(const char *text, rc_uri *u)
{
	const char *p, *colon, *host, *hend, *portp = NULL;
	char hostport[RC_URI_MAX];
	size_t tlen;

	memset(u, 0, sizeof(*u));
	u->port = -1;
	if (text == NULL)
		return RC_INVAL;
	tlen = strnlen(text, RC_URI_MAX + 1);
	if (tlen == 0 || tlen > RC_URI_MAX)
		return RC_UNKNOWNADDR;
	colon = strchr(text, ':');
	if (colon == NULL)
		return RC_UNKNOWNADDR;
	if (!rc__copy(u->scheme, sizeof(u->scheme), text, (size_t)(colon - text)))
		return RC_UNKNOWNPROTO;
	if (rc__tp_find(u->scheme) == NULL)
		return RC_UNKNOWNPROTO;
	p = colon + 1;
	if (strcmp(u->scheme, "unix") == 0 || strcmp(u->scheme, "inproc") == 0) {
		/* unix:/path (unix:///path also accepted), inproc:name */
		if (strncmp(p, "//", 2) == 0 && strcmp(u->scheme, "unix") == 0)
			p += 2;
		if (*p == '\0' || !rc__copy(u->host, sizeof(u->host), p, strlen(p)))
			return RC_UNKNOWNADDR;
		if (strcmp(u->scheme, "unix") == 0 &&
		    strlen(u->host) >= sizeof(((struct sockaddr_un *)0)->sun_path))
			return RC_UNKNOWNADDR;
		return RC_OK;
	}
	if (strncmp(p, "//", 2) != 0)
		return RC_UNKNOWNADDR;
	p += 2;
	{ /* tcp://host:port?query: the query (TLS options) is kept whole, for the client */
		const char *q = strchr(p, '?');
		if (q != NULL) {
			if (!rc__copy(u->query, sizeof(u->query), q + 1, strlen(q + 1)) ||
			    !rc__copy(hostport, sizeof(hostport), p, (size_t)(q - p)))
				return RC_UNKNOWNADDR;
			p = hostport;
		}
	}
	if (*p == '[') {
		host = p + 1;
		hend = strchr(host, ']');
		if (hend == NULL)
			return RC_UNKNOWNADDR;
		u->v6literal = true;
		if (hend[1] == ':')
			portp = hend + 2;
		else if (hend[1] != '\0')
			return RC_UNKNOWNADDR;
	} else {
		host = p;
		hend = strchr(host, ':');
		if (hend != NULL)
			portp = hend + 1;
		else
			hend = host + strlen(host);
	}
	if (hend == host || !rc__copy(u->host, sizeof(u->host), host, (size_t)(hend - host)))
		return RC_UNKNOWNADDR;
	if (!rc__host_ok(u->host, u->v6literal))
		return RC_UNKNOWNADDR;
	if (portp != NULL) {
		char *end;
		long v;
		if (*portp < '0' || *portp > '9')
			return RC_UNKNOWNADDR;
		errno = 0;
		v = strtol(portp, &end, 10);
		if (errno != 0 || *end != '\0' || v < 0 || v > 65535)
			return RC_UNKNOWNADDR;
		u->port = (int)v;
	}
	return RC_OK;
}

/* transport.h: a socket of the caller's as a server transport. */
rc_status rc__tp_adopt(int fd, size_t max_record, rc_tp **out, bool *listener, char *bound,
                       size_t len)
{
	int type = 0, family = 0, acc = 0;
	socklen_t ol = sizeof(int);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	rc_status st;
	bool conn = false;
	const rc_tp_kind *kind;

	if (bound && len)
		bound[0] = '\0';
	if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &ol) != 0)
		return RC_INVAL;
	ol = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &family, &ol) != 0)
		return RC_INVAL;
	if ((family != AF_INET && family != AF_INET6 && family != AF_UNIX) ||
	    (type != SOCK_DGRAM && type != SOCK_STREAM))
		return RC_UNKNOWNPROTO;
	if (type == SOCK_STREAM) {
		ol = sizeof(int);
		if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &ol) != 0)
			return RC_INVAL;
		conn = !acc && getpeername(fd, (struct sockaddr *)&ss, &sl) == 0;
	}
	if (!conn && (st = rc__sock_bind_if_unbound(fd, family)) != RC_OK)
		return st;
	if (type == SOCK_STREAM && !conn && !acc && listen(fd, 1024) != 0)
		return RC_LOCALERROR;
	*listener = !conn;
	/* through the table, as a URI would pick it: the kind's own adopt wraps fd */
	kind = rc__tp_find(type == SOCK_DGRAM ? "udp" : family == AF_UNIX ? "unix" : "tcp");
	if (kind == NULL || kind->adopt == NULL)
		return RC_UNKNOWNPROTO;
	if ((st = kind->adopt(fd, max_record, !conn, out)) != RC_OK)
		return st;
	if (family == AF_UNIX) {
		struct sockaddr_un un;
		socklen_t ul = sizeof(un);
		memset(&un, 0, sizeof(un));
		if (bound && len && getsockname(fd, (struct sockaddr *)&un, &ul) == 0)
			snprintf(bound, len, "unix:%.*s", (int)sizeof(un.sun_path), un.sun_path);
	} else {
		rc__sock_bound_uri(fd, type == SOCK_DGRAM ? "udp" : "tcp", bound, len);
	}
	return RC_OK;
}

/*
 * The table of transports by URI scheme -- a new transport adds one line here -- and what
 * picks a transport from it: a URI's parse (rc__uri_parse; its query's keys are uri.c's) and
 * the adoption of a socket the application opened (rc__tp_adopt, through the kind's adopt).
 * The top of transports/: the transports themselves never call it.
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

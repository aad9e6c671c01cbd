/* The socket helpers the socket transports share (the bottom of transports/: it calls none of
 * them; URI parsing and socket adoption, which pick a transport by scheme, are transports.c's). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "transports/transport.h"

static _Thread_local char rc__detail[256]; /* rc__tp_detail's text, per thread */

/* See transport.h. */
void rc__tp_set_detail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rc__detail, sizeof(rc__detail), fmt, ap);
	va_end(ap);
}

/* See transport.h. */
const char *rc__tp_detail(void)
{
	return rc__detail;
}

/* See transport.h. */
void rc__tp_clear_detail(void)
{
	rc__detail[0] = '\0';
}

/* The first address getaddrinfo gives for u (numeric port; a [literal] stays numeric).
 * RC_UNKNOWNHOST if there is none. */
rc_status rc__resolve(const rc_uri *u, int socktype, rc_peer *out)
{
	struct addrinfo hints, *res = NULL;
	char port[16];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = socktype;
	hints.ai_flags = AI_NUMERICSERV | (u->v6literal ? AI_NUMERICHOST : 0);
	snprintf(port, sizeof(port), "%d", u->port < 0 ? 0 : u->port);
	rc = getaddrinfo(u->host, port, &hints, &res);
	if (rc != 0 || res == NULL) {
		if (res)
			freeaddrinfo(res);
		return RC_UNKNOWNHOST;
	}
	memcpy(&out->ss, res->ai_addr, res->ai_addrlen);
	out->len = res->ai_addrlen;
	freeaddrinfo(res);
	return RC_OK;
}

/* Write scheme://ADDR:PORT of fd's local address into bound (nothing if bound is NULL).
 * RC_LOCALERROR if getsockname fails. */
rc_status rc__sock_bound_uri(int fd, const char *scheme, char *bound, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN];
	int port;

	if (bound == NULL || len == 0)
		return RC_OK;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return RC_LOCALERROR;
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		port = ntohs(s6->sin6_port);
		snprintf(bound, len, "%s://[%s]:%d", scheme, host, port);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		port = ntohs(s4->sin_port);
		snprintf(bound, len, "%s://%s:%d", scheme, host, port);
	}
	return RC_OK;
}

/* Set fd close-on-exec and (non-)blocking. 0, or -1 with errno. */
int rc__sock_cloexec_nonblock(int fd, bool nonblock)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	fl = nonblock ? (fl | O_NONBLOCK) : (fl & ~O_NONBLOCK);
	if (fcntl(fd, F_SETFL, fl) != 0)
		return -1;
	return fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* See transport.h; a transport without a descriptor has no timeout to set. */
void rc__tp_set_rcvtimeo(rc_tp *tp, int ms)
{
	struct timeval tv;

	if (tp->fd < 0 || (tp->props & RC_TPP_BACK)) {
		/* no socket of its own (in-process, a back channel): the transport's recv reads it */
		tp->rcvtimeo_ms = ms;
		return;
	}
	if (tp->rcvtimeo_ms == ms)
		return;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	if (setsockopt(tp->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0)
		tp->rcvtimeo_ms = ms;
}

/* See transport.h. */
bool rc__sock_wait(int fd, short ev, int timeout_ms)
{
	struct pollfd pf = {fd, ev, 0};
	int n;

	do
		n = poll(&pf, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		errno = EAGAIN;
	return n > 0;
}

/* See transport.h (the shared trivial ops). */
size_t rc__tp_nothing_buffered(rc_tp *tp)
{
	(void)tp;
	return 0;
}

/*
 * Connect fd to a, waiting at most until deadline (CLOCK_MONOTONIC ns; 0: as long as the
 * kernel takes). The socket is left blocking. RC_OK, RC_TIMEDOUT (errno ETIMEDOUT) or
 * RC_CANTSEND (errno kept).
 */
rc_status rc__sock_connect(int fd, const rc_peer *a, int64_t deadline)
{
	int err = 0;
	socklen_t el = sizeof(err);

	if (deadline == 0) {
		while (connect(fd, (const struct sockaddr *)&a->ss, a->len) != 0)
			if (errno != EINTR)
				return RC_CANTSEND;
		return RC_OK;
	}
	if (rc__sock_cloexec_nonblock(fd, true) != 0)
		return RC_CANTSEND;
	if (connect(fd, (const struct sockaddr *)&a->ss, a->len) != 0) {
		if (errno != EINPROGRESS && errno != EINTR)
			return RC_CANTSEND;
		for (;;) {
			struct pollfd pf = {fd, POLLOUT, 0};
			int64_t left = deadline - (int64_t)rc__clock_ns();
			int n;

			if (left <= 0) {
				errno = ETIMEDOUT;
				return RC_TIMEDOUT;
			}
			n = poll(&pf, 1, (int)((left + 999999) / 1000000));
			if (n > 0)
				break;
			if (n < 0 && errno != EINTR)
				return RC_CANTSEND;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
			return RC_CANTSEND;
		if (err != 0) {
			errno = err;
			return RC_CANTSEND;
		}
	}
	return rc__sock_cloexec_nonblock(fd, false) == 0 ? RC_OK : RC_CANTSEND;
}

rc_status rc__tp_set_nonblock(rc_tp *tp, bool nonblock)
{
	if (tp->fd < 0)
		return RC_NOTSUPP;
	return rc__sock_cloexec_nonblock(tp->fd, nonblock) == 0 ? RC_OK : RC_LOCALERROR;
}

size_t rc__tp_nothing_queued(rc_tp *tp)
{
	(void)tp;
	return 0;
}

bool rc__tp_never_hung_up(rc_tp *tp)
{
	(void)tp;
	return false;
}

/* transport.h: bind an IP socket not bound yet to its family's wildcard address, any port. */
rc_status rc__sock_bind_if_unbound(int fd, int family)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int port;

	if (family == AF_UNIX)
		return RC_OK; /* an unbound unix socket cannot be reached: listen() will say so */
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return RC_LOCALERROR;
	port = family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
	                          : ((struct sockaddr_in *)&ss)->sin_port;
	if (port != 0)
		return RC_OK;
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)family; /* wildcard address, port 0 */
	sl = family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	return bind(fd, (struct sockaddr *)&ss, sl) == 0 ? RC_OK : RC_LOCALERROR;
}

/* transport.h: close tp, give its descriptor back. */
void rc__tp_close_keep_fd(rc_tp *tp)
{
	tp->fd = -1;
	tp->vt->close(tp);
}

/* transport.h: a connected socket's peer. */
rc_status rc__tp_peer(rc_tp *tp, void *sa, unsigned *len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (tp != NULL && tp->caller != NULL) { /* the client a balancer named (proxy_v2.c) */
		ss = tp->caller->ss;
		sl = tp->caller->len;
	} else if (tp == NULL || tp->fd < 0 ||
	           getpeername(tp->fd, (struct sockaddr *)&ss, &sl) != 0) {
		return RC_NOTSUPP;
	}
	memcpy(sa, &ss, sl < *len ? sl : *len);
	*len = (unsigned)sl;
	return RC_OK;
}

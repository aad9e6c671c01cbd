/*
 * Stream transports: TCP and Unix-domain stream sockets, with RFC 5531 record marking. A
 * message goes out as one single-fragment record: its mark is written into the headroom in
 * front of the message and the record leaves in one send(). Incoming bytes are read in large
 * pieces into a record reader, which yields every complete record in its buffer.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <remotecall/xdr.h>

#include "transports/transport.h"
#include "xdr/xdr_internal.h"

typedef struct rc__stream {
	rc_tp tp;
	rc_recreader rr;
	size_t max_record;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* unix listener: unlink on close */
} rc__stream;

static rc_status rc__stream_send(rc_tp *tp, unsigned char *msg, size_t len, const rc_peer *to,
                                 int flags, size_t *sent)
{
	uint32_t mark = (uint32_t)len | RC_XDRREC_LAST_FRAG;
	unsigned char *rec = msg - RC_TP_HEADROOM;
	size_t done = 0, total = len + 4;

	(void)to;
	if (len > RC_XDRREC_MAX_FRAG)
		return RC_MSGTOOLARGE;
	rec[0] = (unsigned char)(mark >> 24);
	rec[1] = (unsigned char)(mark >> 16);
	rec[2] = (unsigned char)(mark >> 8);
	rec[3] = (unsigned char)mark;
	/* *sent counts bytes of the record, mark included: a non-blocking caller queues the rest. */
	while (done < total) {
		ssize_t n = rc__sendto(tp->fd, rec + done, total - done, flags | MSG_NOSIGNAL, NULL, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (sent)
				*sent = done;
			return (errno == EAGAIN || errno == EWOULDBLOCK) ? RC_AGAIN : RC_CANTSEND;
		}
		done += (size_t)n;
	}
	if (sent)
		*sent = done;
	return RC_OK;
}

/* The status of a receive that returned got <= 0. */
static rc_status rc__stream_recv_failed(ssize_t got)
{
	if (got == 0)
		return RC_CLOSED;
	if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
		return RC_AGAIN;
	return errno == ECONNRESET ? RC_CLOSED : RC_CANTRECV;
}

static rc_status rc__stream_recv(rc_tp *tp, void **msg, size_t *len, rc_peer *from, int flags)
{
	rc__stream *s = (rc__stream *)tp;
	void *p;
	size_t n;
	ssize_t got;

	(void)from;
	/* The usual case: nothing buffered, and one read brings exactly one whole record. */
	if (rc__recreader_front(&s->rr, &p, &n)) {
		got = rc__recvfrom(tp->fd, p, n, flags, NULL, NULL);
		if (got <= 0)
			return rc__stream_recv_failed(got);
		if (rc__recreader_whole(&s->rr, (size_t)got, msg, len))
			return RC_OK;
		flags |= MSG_DONTWAIT; /* we have data; don't block for more */
	}
	for (;;) {
		rc_status st = rc_recreader_next(&s->rr, msg, len);

		if (st != RC_AGAIN)
			return st; /* RC_OK or RC_MSGTOOLARGE */
		st = rc_recreader_space(&s->rr, &p, &n);
		if (st != RC_OK)
			return st;
		got = rc__recvfrom(tp->fd, p, n, flags, NULL, NULL);
		if (got <= 0)
			return rc__stream_recv_failed(got);
		rc_recreader_commit(&s->rr, (size_t)got);
		flags |= MSG_DONTWAIT; /* we have data; don't block for more */
	}
}

static rc__stream *rc__stream_new(int fd, size_t max_record)
{
	rc__stream *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->tp.fd = fd;
	s->tp.stream = true;
	s->tp.max_msg = max_record;
	s->tp.rcvtimeo_ms = -1;
	s->max_record = max_record;
	rc_recreader_init(&s->rr, max_record);
	return s;
}

static void rc__stream_close(rc_tp *tp)
{
	rc__stream *s = (rc__stream *)tp;

	if (tp->fd >= 0)
		close(tp->fd);
	if (s->path[0] != '\0')
		unlink(s->path);
	rc_recreader_destroy(&s->rr);
	free(s);
}

static rc_status rc__stream_accept(rc_tp *tp, rc_tp **out, size_t max_record);

static size_t rc__stream_buffered(rc_tp *tp)
{
	const rc_recreader *r = &((rc__stream *)tp)->rr;
	size_t n = rc_recreader_buffered(r);

	/* a record under way counts even when its header is all that is held */
	return n == 0 && rc_recreader_in_record(r) ? 1 : n;
}

static const rc_tp_vt rc__stream_vt = {
	.send = rc__stream_send,
	.recv = rc__stream_recv,
	.accept = rc__stream_accept,
	.buffered = rc__stream_buffered,
	.close = rc__stream_close,
};

static void rc__stream_tune(int fd, int family)
{
	int one = 1;

	if (family == AF_INET || family == AF_INET6)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static rc_status rc__stream_accept(rc_tp *tp, rc_tp **out, size_t max_record)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	rc__stream *s;
	int fd;

	fd = accept4(tp->fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
		    errno == ECONNABORTED || errno == EPROTO)
			return RC_AGAIN;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			return RC_TOOMANY;
		return RC_LOCALERROR;
	}
	rc__stream_tune(fd, ss.ss_family);
	if ((s = rc__stream_new(fd, max_record)) == NULL) {
		close(fd);
		return RC_NOMEM;
	}
	s->tp.vt = &rc__stream_vt;
	*out = &s->tp;
	return RC_OK;
}

/* Fill a sockaddr for u: a resolved TCP address, or a Unix path. */
static rc_status rc__stream_addr(const rc_uri *u, rc_peer *a)
{
	if (strcmp(u->scheme, "unix") == 0) {
		struct sockaddr_un *sun = (struct sockaddr_un *)&a->ss;
		memset(a, 0, sizeof(*a));
		sun->sun_family = AF_UNIX;
		if (strlen(u->host) >= sizeof(sun->sun_path))
			return RC_UNKNOWNADDR;
		strcpy(sun->sun_path, u->host);
		a->len = sizeof(*sun);
		return RC_OK;
	}
	if (u->port < 0)
		return RC_UNKNOWNADDR;
	return rc__resolve(u, SOCK_STREAM, a);
}

static rc_status rc__stream_connect(const rc_uri *u, size_t max_record, rc_tp **out)
{
	rc_peer a;
	rc__stream *s;
	rc_status st;
	int fd;

	if ((st = rc__stream_addr(u, &a)) != RC_OK)
		return st;
	fd = socket(a.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return RC_CANTSEND;
	rc__stream_tune(fd, a.ss.ss_family);
	while (connect(fd, (struct sockaddr *)&a.ss, a.len) != 0) {
		int e = errno;
		if (e == EINTR)
			continue;
		close(fd);
		errno = e;
		return RC_CANTSEND;
	}
	if ((s = rc__stream_new(fd, max_record)) == NULL) {
		close(fd);
		return RC_NOMEM;
	}
	s->tp.vt = &rc__stream_vt;
	*out = &s->tp;
	return RC_OK;
}

static rc_status rc__stream_listen(const rc_uri *u, size_t max_record, rc_server *srv, rc_tp **out,
                                   char *bound, size_t len)
{
	rc_peer a;
	rc__stream *s;
	rc_status st;
	int fd, one = 1;
	bool is_unix = strcmp(u->scheme, "unix") == 0;

	(void)srv;
	if ((st = rc__stream_addr(u, &a)) != RC_OK)
		return st;
	fd = socket(a.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return RC_LOCALERROR;
	if (is_unix) {
		struct stat sb;
		/* A socket file left by a server that died is replaced; anything else is not. */
		if (lstat(u->host, &sb) == 0 && S_ISSOCK(sb.st_mode))
			unlink(u->host);
	} else {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	}
	if (bind(fd, (struct sockaddr *)&a.ss, a.len) != 0 || listen(fd, 1024) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return RC_LOCALERROR;
	}
	if ((s = rc__stream_new(fd, max_record)) == NULL) {
		close(fd);
		return RC_NOMEM;
	}
	s->tp.vt = &rc__stream_vt;
	s->tp.listener = true;
	if (is_unix) {
		memcpy(s->path, u->host, strlen(u->host) + 1); /* fits: checked by rc__stream_addr */
		if (bound && len)
			snprintf(bound, len, "unix:%s", u->host);
	} else {
		rc__sock_bound_uri(fd, "tcp", bound, len);
	}
	*out = &s->tp;
	return RC_OK;
}

const rc_tp_kind rc__tcp_kind = {"tcp", rc__stream_connect, rc__stream_listen};
const rc_tp_kind rc__unix_kind = {"unix", rc__stream_connect, rc__stream_listen};

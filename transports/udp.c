/*
 * UDP: one datagram is one message. Client sockets are connected (the kernel then drops
 * datagrams from anyone but the server); a server socket answers each sender with sendto.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transports/transport.h"


typedef struct rc__udp {
	rc_tp tp;
	size_t bufsize;
	unsigned char buf[]; /* receive buffer */
} rc__udp;

static rc_status rc__udp_send(rc_tp *tp, unsigned char *msg, size_t len, const rc_peer *to,
                              unsigned tflags)
{
	int flags = (int)(tflags & RC_TPF_DONTWAIT);
	ssize_t n;

	if (len > tp->max_msg)
		return RC_MSGTOOLARGE;
	do {
		if (to != NULL)
			n = rc__sendto(tp->fd, msg, len, flags | MSG_NOSIGNAL,
			               (const struct sockaddr *)&to->ss, to->len);
		else
			n = rc__sendto(tp->fd, msg, len, flags | MSG_NOSIGNAL, NULL, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return RC_AGAIN;
		if (errno == EMSGSIZE)
			return RC_MSGTOOLARGE;
		return RC_CANTSEND;
	}
	return RC_OK;
}

static rc_status rc__udp_recv_into(rc_tp *tp, void *buf, size_t cap, size_t *len,
                                   rc_peer *from, unsigned tflags)
{
	int flags = (int)(tflags & RC_TPF_DONTWAIT);
	ssize_t n;

	for (;;) {
		if (from != NULL) {
			from->len = sizeof(from->ss);
			n = rc__recvfrom(tp->fd, buf, cap, flags | MSG_TRUNC,
			                 (struct sockaddr *)&from->ss, &from->len);
		} else {
			n = rc__recvfrom(tp->fd, buf, cap, flags | MSG_TRUNC, NULL, NULL);
		}
		if (n >= 0)
			break;
		if (errno == EINTR)
			return RC_AGAIN; /* let the caller look at its deadline and stop flag */
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return RC_AGAIN;
		if (errno == ECONNREFUSED)
			return RC_CANTRECV; /* ICMP port unreachable on a connected socket */
		return RC_CANTRECV;
	}
	if ((size_t)n > cap)
		return RC_AGAIN; /* truncated datagram: over any message we accept; drop it */
	*len = (size_t)n;
	return RC_OK;
}

static rc_status rc__udp_recv(rc_tp *tp, void **msg, size_t *len, rc_peer *from,
                              unsigned flags)
{
	rc__udp *u = (rc__udp *)tp;
	rc_status st = rc__udp_recv_into(tp, u->buf, u->bufsize, len, from, flags);

	if (st == RC_OK)
		*msg = u->buf;
	return st;
}

static void rc__udp_shutdown(rc_tp *tp, bool both)
{
	(void)shutdown(tp->fd, both ? SHUT_RDWR : SHUT_RD); /* wakes blocked receivers */
}

static void rc__udp_close(rc_tp *tp)
{
	if (tp->fd >= 0)
		close(tp->fd);
	free(tp);
}

static const rc_tp_vt rc__udp_vt = {
	.send = rc__udp_send,
	.flush = NULL,
	.outq = rc__tp_nothing_queued,
	.recv = rc__udp_recv,
	.recv_into = rc__udp_recv_into,
	.accept = NULL,
	.buffered = rc__tp_nothing_buffered,
	.hung_up = rc__tp_never_hung_up,
	.shutdown = rc__udp_shutdown,
	.close = rc__udp_close,
};

static rc__udp *rc__udp_new(int fd, size_t max_record)
{
	size_t bufsize = max_record < RC__UDP_MAX ? max_record : RC__UDP_MAX;
	rc__udp *u = malloc(sizeof(*u) + bufsize);

	if (u == NULL)
		return NULL;
	memset(u, 0, sizeof(*u));
	u->tp.vt = &rc__udp_vt;
	u->tp.fd = fd;
	u->tp.props = RC_TPP_DGRAM;
	u->tp.max_msg = RC__UDP_MAX;
	u->tp.rcvtimeo_ms = -1;
	u->bufsize = bufsize;
	return u;
}

static rc_status rc__udp_connect(const rc_uri *uri, size_t max_record, int64_t deadline,
                                 rc_tp **out)
{
	rc_peer peer;
	rc__udp *u;
	rc_status st;
	int fd, sz = 256 << 10;

	if (uri->port < 0)
		return RC_UNKNOWNADDR;
	if ((st = rc__resolve(uri, SOCK_DGRAM, &peer)) != RC_OK)
		return st;
	fd = socket(peer.ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return RC_CANTSEND;
	/* best effort: a larger buffer only absorbs bursts of pipelined replies */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if ((st = rc__sock_connect(fd, &peer, deadline)) != RC_OK) {
		int e = errno;
		close(fd);
		errno = e;
		return st;
	}
	if ((u = rc__udp_new(fd, max_record)) == NULL) {
		close(fd);
		return RC_NOMEM;
	}
	*out = &u->tp;
	return RC_OK;
}

static rc_status rc__udp_listen(const rc_uri *uri, size_t max_record,
                                const rc_tp_deliver *deliver, rc_tp **out, char *bound,
                                size_t len)
{
	rc_peer addr;
	rc__udp *u;
	rc_status st;
	int fd, sz = 1 << 20;

	(void)deliver;
	if (uri->port < 0)
		return RC_UNKNOWNADDR;
	if ((st = rc__resolve(uri, SOCK_DGRAM, &addr)) != RC_OK)
		return st;
	fd = socket(addr.ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return RC_LOCALERROR;
	/* No SO_REUSEADDR: on UDP it buys nothing (no TIME_WAIT) and lets bind(port 0) hand out a
	 * port another socket already holds. */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz)); /* best effort, as above */
	if (bind(fd, (struct sockaddr *)&addr.ss, addr.len) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return RC_LOCALERROR;
	}
	if ((u = rc__udp_new(fd, max_record)) == NULL) {
		close(fd);
		return RC_NOMEM;
	}
	u->tp.listener = true;
	rc__sock_bound_uri(fd, "udp", bound, len);
	*out = &u->tp;
	return RC_OK;
}

const rc_tp_kind rc__udp_kind = {"udp", RC_TPP_DGRAM, rc__udp_connect, rc__udp_listen};

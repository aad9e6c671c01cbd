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

/* Point message header m at one buffer of len bytes and a peer address of namelen bytes at
 * name (NULL: the connected peer). */
static inline void rc__udp_mmsg(struct mmsghdr *m, struct iovec *iov, void *buf, size_t len,
                                void *name, socklen_t namelen)
{
	iov->iov_base = buf;
	iov->iov_len = len;
	memset(&m->msg_hdr, 0, sizeof(m->msg_hdr));
	m->msg_hdr.msg_name = name;
	m->msg_hdr.msg_namelen = name != NULL ? namelen : 0;
	m->msg_hdr.msg_iov = iov;
	m->msg_hdr.msg_iovlen = 1;
}

/* The vt's recv_batch: recvmmsg of up to n datagrams, over-long ones dropped. */
static rc_status rc__udp_recv_batch(rc_tp *tp, rc_tp_dgram *v, unsigned n, unsigned *got)
{
	struct mmsghdr m[RC_TP_BATCH];
	struct iovec iov[RC_TP_BATCH];
	unsigned k = 0;
	int r;

	*got = 0;
	if (n > RC_TP_BATCH)
		n = RC_TP_BATCH;
	for (unsigned i = 0; i < n; i++)
		rc__udp_mmsg(&m[i], &iov[i], v[i].buf, v[i].cap, &v[i].peer.ss, sizeof(v[i].peer.ss));
	do
		r = recvmmsg(tp->fd, m, n, MSG_DONTWAIT, NULL);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? RC_AGAIN : RC_CANTRECV;
	for (unsigned i = 0; i < (unsigned)r; i++) {
		if (m[i].msg_hdr.msg_flags & MSG_TRUNC)
			continue; /* over any message we accept: dropped */
		if (k != i) { /* move it down over a dropped one: swap the buffers, copy the sender */
			unsigned char *b = v[k].buf;
			size_t cap = v[k].cap;
			v[k].buf = v[i].buf;
			v[k].cap = v[i].cap;
			v[i].buf = b;
			v[i].cap = cap;
			memcpy(&v[k].peer.ss, &v[i].peer.ss, m[i].msg_hdr.msg_namelen);
		}
		v[k].len = m[i].msg_len;
		v[k].peer.len = m[i].msg_hdr.msg_namelen;
		k++;
	}
	*got = k;
	return k > 0 ? RC_OK : RC_AGAIN;
}

/* The vt's send_batch: sendmmsg, resumed after a partial batch; a datagram the kernel
 * refuses outright (EMSGSIZE, an unreachable peer) is skipped as lost. */
static rc_status rc__udp_send_batch(rc_tp *tp, const rc_tp_dgram *v, unsigned n,
                                    unsigned *sent)
{
	struct mmsghdr m[RC_TP_BATCH];
	struct iovec iov[RC_TP_BATCH];
	unsigned done = 0;

	if (n > RC_TP_BATCH)
		n = RC_TP_BATCH;
	for (unsigned i = 0; i < n; i++)
		rc__udp_mmsg(&m[i], &iov[i], v[i].buf, v[i].len,
		             v[i].peer.len > 0 ? (void *)&v[i].peer.ss : NULL, v[i].peer.len);
	while (done < n) {
		int r = sendmmsg(tp->fd, m + done, n - done, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (r > 0) {
			done += (unsigned)r;
		} else if (r < 0 && errno == EINTR) {
			continue;
		} else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			*sent = done;
			return RC_AGAIN;
		} else if (r < 0 && (errno == EBADF || errno == ENOTSOCK || errno == EFAULT)) {
			*sent = done;
			return RC_CANTSEND; /* not a datagram's fault: the socket's */
		} else {
			done++; /* this one refused: lost, as if dropped on the way */
		}
	}
	*sent = done;
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
	.recv_batch = rc__udp_recv_batch,
	.send_batch = rc__udp_send_batch,
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

/* transport.h: a datagram socket of the caller's as a listener. */
rc_status rc__udp_adopt(int fd, size_t max_record, rc_tp **out)
{
	rc__udp *u = rc__udp_new(fd, max_record);

	if (u == NULL)
		return RC_NOMEM;
	u->tp.listener = true;
	*out = &u->tp;
	return RC_OK;
}

const rc_tp_kind rc__udp_kind = {"udp", RC_TPP_DGRAM, rc__udp_connect, rc__udp_listen};

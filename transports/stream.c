/*
 * Stream transports: TCP and Unix-domain stream sockets, with RFC 5531 record marking. A
 * message goes out as one single-fragment record: its mark is written into the headroom in
 * front of the message and the record leaves in one send(). Incoming bytes are read in large
 * pieces into a record reader, which yields every complete record in its buffer.
 *
 * RPC-over-TLS (RFC 9289) is the same stream with TLS under it (tls.c): once a connection
 * is under TLS, every byte goes through rc__stream_tx / rc__stream_rx, which call
 * SSL_write / SSL_read instead of the socket; the record marks, the output queue and the
 * record reader are unchanged. A TCP client whose URI carries a TLS context probes and
 * handshakes in connect (by its deadline); a server's connection starts TLS when the server
 * says so (starttls, after its STARTTLS reply) and handshakes inside recv/flush.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <sys/un.h>
#include <unistd.h>

#include <remotecall/xdr.h>

#include "transports/tls.h"
#include "transports/transport.h"
#include "xdr/xdr_internal.h"

#define RC__OQ_GATHER ((size_t)256 << 10) /* queued with RC_TPF_MORE beyond this: send now */

typedef struct rc__stream {
	rc_tp tp;
	rc_recreader rr;
	size_t max_record;
	/* the output queue: whole or partly sent records, oq[oqoff..oqlen) still to go */
	unsigned char *oq;
	size_t oqoff, oqlen, oqcap;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* unix listener: unlink on close */
	dev_t path_dev; /* ... if the file there is still the one it bound (device and inode) */
	ino_t path_ino;
	rc__tls_conn *tls; /* NULL: plaintext */
	bool more;         /* the last recv gave a record and read no further (rc__stream_ahead) */
	bool lend;         /* a server's connection: reads into its serving thread's buffer */
	/* Under TLS, one sender at a time for a whole send or flush: a blocking TLS write waits
	 * with the SSL object free, and a second writer's records must not land inside the
	 * first's (the client's fast path sends without its own send lock). */
	pthread_mutex_t wlock;
} rc__stream;

/*
 * Each serving thread's input buffer (64 KiB), lent to the record reader of the server
 * connection it is serving for the length of that connection's turn (recv lends, park gives
 * back), so an idle connection holds no input buffer: 10,000 of them cost no 640 MB of
 * buffers, nor the page each one touched. A big record's buffer replaces it when its turn
 * ends (one per thread, as the thread's kept reply buffer: the next big record gets pages
 * already there), until the thread goes quiet (rc__tp_quiet). Freed when its thread ends (pthread key); a reader
 * still holding it then (a turn that did not end in park) keeps it, leaked rather than freed
 * under it.
 */
#define RC__LEND_CAP ((size_t)64 << 10)
static pthread_key_t rc__lend_key;
static pthread_once_t rc__lend_once = PTHREAD_ONCE_INIT;
static bool rc__lend_ok;
static _Thread_local rc__lendbuf *rc__lend_mine;

static void rc__lend_free(void *p)
{
	rc__lendbuf *lb = p;
	void *none = NULL;

	if (atomic_compare_exchange_strong(&lb->owner, &none, p)) {
		free(lb->data);
		free(lb);
	}
}

static void rc__lend_init(void)
{
	rc__lend_ok = pthread_key_create(&rc__lend_key, rc__lend_free) == 0;
}

/* This thread's lendable buffer (made on first use), or NULL if memory is short. */
static rc__lendbuf *rc__lend_get(void)
{
	rc__lendbuf *lb = rc__lend_mine;

	if (__builtin_expect(lb != NULL, 1))
		return lb;
	(void)pthread_once(&rc__lend_once, rc__lend_init);
	if (!rc__lend_ok || (lb = malloc(sizeof(*lb))) == NULL)
		return NULL;
	if ((lb->data = malloc(RC__LEND_CAP)) == NULL) {
		free(lb);
		return NULL;
	}
	atomic_init(&lb->owner, NULL);
	lb->cap = RC__LEND_CAP;
	if (pthread_setspecific(rc__lend_key, lb) != 0) {
		free(lb->data);
		free(lb);
		return NULL;
	}
	return rc__lend_mine = lb;
}

/* transport.h: the calling thread has gone quiet; a big record's buffer it kept to lend
 * (rc__recreader_park) goes back to the usual size. */
void rc__tp_quiet(void)
{
	rc__lendbuf *lb = rc__lend_mine;
	unsigned char *small;

	if (lb == NULL || lb->cap <= RC__LEND_CAP ||
	    atomic_load_explicit(&lb->owner, memory_order_relaxed) != NULL ||
	    (small = malloc(RC__LEND_CAP)) == NULL)
		return;
	free(lb->data);
	lb->data = small;
	lb->cap = RC__LEND_CAP;
}

/* Send up to n bytes of b, on the socket or under TLS; flags MSG_DONTWAIT or 0 (block). As
 * send(): the bytes sent, or -1 with errno. */
static inline __attribute__((always_inline)) ssize_t
rc__stream_tx_t(rc__stream *s, const void *b, size_t n, int flags, const bool maytls)
{
	if (!maytls || s->tls == NULL)
		return rc__sendto(s->tp.fd, b, n, MSG_NOSIGNAL | flags, NULL, 0);
	return rc__tls_write(s->tls, b, n, (flags & MSG_DONTWAIT) ? 0 : -1);
}

/* Receive up to n bytes into b, from the socket or under TLS; flags MSG_DONTWAIT or 0 (block
 * up to the receive timeout). As recv(). */
static inline __attribute__((always_inline)) ssize_t
rc__stream_rx_t(rc__stream *s, void *b, size_t n, int flags, const bool maytls)
{
	if (!maytls || s->tls == NULL)
		return rc__recvfrom(s->tp.fd, b, n, flags, NULL, NULL);
	return rc__tls_read(s->tls, b, n,
	                    (flags & MSG_DONTWAIT) ? 0
	                    : s->tp.rcvtimeo_ms > 0 ? s->tp.rcvtimeo_ms : -1);
}

/* The two above for a stream that may be under TLS (maytls: the check is compiled in; a
 * client connection made without TLS uses the plaintext vt, whose copies have none). */
#define rc__stream_tx(s, b, n, flags) rc__stream_tx_t(s, b, n, flags, true)
#define rc__stream_rx(s, b, n, flags) rc__stream_rx_t(s, b, n, flags, true)

/* Write the record mark of a len-byte message into the 4 bytes before msg (the headroom). */
static void rc__stream_mark(unsigned char *msg, size_t len)
{
	uint32_t mark = (uint32_t)len | RC_XDRREC_LAST_FRAG;
	unsigned char *rec = msg - RC_TP_HEADROOM;

	rec[0] = (unsigned char)(mark >> 24);
	rec[1] = (unsigned char)(mark >> 16);
	rec[2] = (unsigned char)(mark >> 8);
	rec[3] = (unsigned char)mark;
}

/* Append b[0..n) to the output queue (compacting it first). False if memory is short. */
static bool rc__stream_enqueue(rc__stream *s, const unsigned char *b, size_t n)
{
	if (s->oqoff > 0 && s->oqoff == s->oqlen)
		s->oqoff = s->oqlen = 0;
	if (s->oqlen + n > s->oqcap) {
		size_t live = s->oqlen - s->oqoff, ncap = s->oqcap ? s->oqcap : 4096;
		unsigned char *nb;
		while (ncap < live + n)
			ncap *= 2;
		if (s->oqoff > 0 && live + n <= s->oqcap) {
			memmove(s->oq, s->oq + s->oqoff, live);
		} else {
			if ((nb = malloc(ncap)) == NULL)
				return false;
			if (live > 0)
				memcpy(nb, s->oq + s->oqoff, live);
			free(s->oq);
			s->oq = nb;
			s->oqcap = ncap;
		}
		s->oqoff = 0;
		s->oqlen = live;
	}
	memcpy(s->oq + s->oqlen, b, n);
	s->oqlen += n;
	return true;
}

/* Wait until tp's socket takes more bytes or timeout_ms passes (negative: no limit). False on
 * timeout (errno EAGAIN) or a poll failure. */
static bool rc__stream_wait_out(rc_tp *tp, int timeout_ms)
{
	return rc__sock_wait(tp->fd, POLLOUT, timeout_ms);
}

/*
 * Send the queued bytes and then rec[0..rlen) (may be 0 bytes) as one gathered write, until
 * all is out, or -- with timeout_ms 0 -- until the socket would block, or until timeout_ms
 * passes. What of rec is not sent is queued. RC_OK (all out), RC_AGAIN (some queued),
 * RC_CANTSEND (errno kept), RC_NOMEM (the rest could not be queued).
 */
static rc_status rc__stream_write(rc__stream *s, const unsigned char *rec, size_t rlen,
                                  int timeout_ms)
{
	rc_tp *tp = &s->tp;
	int flags = MSG_NOSIGNAL | (timeout_ms == 0 ? MSG_DONTWAIT : 0);

	for (;;) {
		size_t qlen = s->oqlen - s->oqoff;
		struct iovec iov[2];
		struct msghdr mh;
		ssize_t n;
		int k = 0;

		if (qlen == 0 && rlen == 0) {
			/* TLS: records of the last write the socket has not taken yet go now */
			if (s->tls == NULL || rc__tls_unsent(s->tls) == 0 ||
			    rc__tls_flush(s->tls, timeout_ms) == 0)
				return RC_OK;
			return errno == EAGAIN ? RC_AGAIN : RC_CANTSEND;
		}
		if (qlen > 0)
			iov[k++] = (struct iovec){s->oq + s->oqoff, qlen};
		if (rlen > 0)
			iov[k++] = (struct iovec){(void *)rec, rlen};
		if (k == 1 || s->tls != NULL) { /* TLS: the queue first, then the record */
			n = rc__stream_tx(s, iov[0].iov_base, iov[0].iov_len, flags & MSG_DONTWAIT);
		} else {
			memset(&mh, 0, sizeof(mh));
			mh.msg_iov = iov;
			mh.msg_iovlen = 2;
			n = sendmsg(tp->fd, &mh, flags);
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return RC_CANTSEND;
			if (timeout_ms != 0 && rc__stream_wait_out(tp, timeout_ms))
				continue;
			if (rlen > 0 && !rc__stream_enqueue(s, rec, rlen))
				return RC_NOMEM;
			return RC_AGAIN;
		}
		if ((size_t)n >= qlen) {
			if (qlen > 0) /* (an empty queue is left untouched: outq reads it) */
				s->oqoff = s->oqlen = 0;
			if (s->oqcap > RC__OQ_GATHER) { /* don't keep a big buffer for an idle peer */
				free(s->oq);
				s->oq = NULL;
				s->oqcap = 0;
			}
			rec += (size_t)n - qlen;
			rlen -= (size_t)n - qlen;
		} else {
			s->oqoff += (size_t)n;
		}
	}
}

static inline __attribute__((always_inline)) rc_status
rc__stream_send_one(rc_tp *tp, unsigned char *msg, size_t len, unsigned flags,
                    const bool maytls);

/* The vt's send: rc__stream_send_one, under the writer lock when the stream is under TLS. */
static rc_status rc__stream_send(rc_tp *tp, unsigned char *msg, size_t len, const rc_peer *to,
                                 unsigned flags)
{
	rc__stream *s = (rc__stream *)tp;
	rc_status st;

	(void)to;
	if (s->tls == NULL)
		return rc__stream_send_one(tp, msg, len, flags, false);
	pthread_mutex_lock(&s->wlock);
	st = rc__stream_send_one(tp, msg, len, flags, true);
	pthread_mutex_unlock(&s->wlock);
	return st;
}

/* The plaintext vt's send (a client connection made without TLS): no TLS check at all. */
static rc_status rc__stream_send_plain(rc_tp *tp, unsigned char *msg, size_t len,
                                       const rc_peer *to, unsigned flags)
{
	(void)to;
	return rc__stream_send_one(tp, msg, len, flags, false);
}

/* One single-fragment record, written straight from the caller's buffer when nothing is
 * queued (the record mark goes in the headroom), else gathered behind the queue. */
static inline __attribute__((always_inline)) rc_status
rc__stream_send_one(rc_tp *tp, unsigned char *msg, size_t len, unsigned flags,
                    const bool maytls)
{
	rc__stream *s = (rc__stream *)tp;
	unsigned char *rec = msg - RC_TP_HEADROOM;
	size_t total = len + RC_TP_HEADROOM;
	rc_status st;

	if (len > RC_XDRREC_MAX_FRAG)
		return RC_MSGTOOLARGE;
	rc__stream_mark(msg, len);
	if (!(flags & RC_TPF_MORE) && s->oqlen == s->oqoff) {
		/* the usual case, nothing queued: one send of the record */
		ssize_t n = rc__stream_tx_t(s, rec, total, (int)(flags & RC_TPF_DONTWAIT), maytls);
		if (n == (ssize_t)total)
			return RC_OK;
		if (n > 0) { /* part of it: the rest as below */
			rec += n;
			total -= (size_t)n;
		}
	}
	if (flags & RC_TPF_MORE) {
		if (!rc__stream_enqueue(s, rec, total))
			return RC_NOMEM;
		if (s->oqlen - s->oqoff < RC__OQ_GATHER)
			return RC_OK;
		rec = NULL;
		total = 0;
	}
	st = rc__stream_write(s, rec, total, (flags & RC_TPF_DONTWAIT) ? 0 : -1);
	return st == RC_AGAIN ? RC_OK : st; /* the rest is queued: flush sends it */
}

/* The vt's sendv: the record mark and the bytes before the first gathered piece go to the
 * output queue, and each piece from the caller's memory is written behind what is queued (one
 * gathered write: sendmsg of the queue and the piece), the encoded bytes after it queued
 * for the next; a last write sends what remains. Blocking, or with RC_TPF_DONTWAIT until the
 * socket is full (what is left of a piece, and all after it, is then queued: copied); under
 * TLS the whole record under the writer lock. */
static rc_status rc__stream_sendv(rc_tp *tp, unsigned char *msg, size_t len,
                                  const rc__gseg *seg, unsigned n, unsigned flags)
{
	rc__stream *s = (rc__stream *)tp;
	size_t total = len;
	int tmo = (flags & RC_TPF_DONTWAIT) ? 0 : -1;
	rc_status st;

	for (unsigned i = 0; i < n; i++)
		total += seg[i].len;
	if (total > RC_XDRREC_MAX_FRAG)
		return RC_MSGTOOLARGE;
	rc__stream_mark(msg, total);
	if (s->tls != NULL)
		pthread_mutex_lock(&s->wlock);
	st = rc__stream_enqueue(s, msg - RC_TP_HEADROOM,
	                        RC_TP_HEADROOM + (n > 0 ? seg[0].at : len)) ? RC_OK : RC_NOMEM;
	for (unsigned i = 0; i < n && (st == RC_OK || st == RC_AGAIN); i++) {
		size_t next = i + 1 < n ? seg[i + 1].at : len;
		if (st == RC_AGAIN) /* the socket is full: behind the queue, copied */
			st = rc__stream_enqueue(s, seg[i].p, seg[i].len) ? RC_AGAIN : RC_NOMEM;
		else
			st = rc__stream_write(s, seg[i].p, seg[i].len, tmo);
		if ((st == RC_OK || st == RC_AGAIN) && next > seg[i].at &&
		    !rc__stream_enqueue(s, msg + seg[i].at, next - seg[i].at))
			st = RC_NOMEM;
	}
	if (st == RC_OK)
		st = rc__stream_write(s, NULL, 0, tmo);
	if (s->tls != NULL)
		pthread_mutex_unlock(&s->wlock);
	if (st == RC_AGAIN) /* queued: flush sends it (blocking: cannot happen) */
		return tmo == 0 ? RC_OK : RC_CANTSEND;
	return st;
}

/* A server's TLS handshake under way: take one step. RC_OK (done now, or long ago), RC_AGAIN
 * (waiting for the peer), RC_CANTRECV (it failed; errno EPROTO). */
static rc_status rc__stream_handshake(rc__stream *s)
{
	int r;

	if (s->tls == NULL || !rc__tls_handshaking(s->tls))
		return RC_OK;
	r = rc__tls_handshake(s->tls);
	if (r < 0) {
		errno = EPROTO;
		return RC_CANTRECV;
	}
	return r == 0 ? RC_AGAIN : RC_OK;
}

/* The vt's flush: send the output queue, waiting at most timeout_ms (see rc_tp_vt); a
 * handshake waiting to write takes its step first. */
static rc_status rc__stream_flush(rc_tp *tp, int timeout_ms)
{
	rc__stream *s = (rc__stream *)tp;
	rc_status st;

	if (s->tls == NULL)
		return rc__stream_write(s, NULL, 0, timeout_ms);
	if (rc__tls_handshaking(s->tls)) {
		st = rc__stream_handshake(s);
		if (st != RC_OK)
			return st == RC_AGAIN ? (rc__tls_wants_write(s->tls) ? RC_AGAIN : RC_OK)
			                      : RC_CANTSEND;
	}
	pthread_mutex_lock(&s->wlock);
	st = rc__stream_write(s, NULL, 0, timeout_ms);
	pthread_mutex_unlock(&s->wlock);
	return st;
}

/* The vt's outq: bytes of records not yet sent (1 while a handshake waits to write). Under
 * TLS it waits for a send in progress (the writer lock): the client's fast path sends
 * without the client's own send lock, and a TLS send moves the queue's bounds. */
static size_t rc__stream_outq(rc_tp *tp)
{
	rc__stream *s = (rc__stream *)tp;
	size_t n;

	if (s->tls == NULL)
		return s->oqlen - s->oqoff;
	pthread_mutex_lock(&s->wlock);
	n = s->oqlen - s->oqoff + rc__tls_unsent(s->tls) + (rc__tls_wants_write(s->tls) ? 1 : 0);
	pthread_mutex_unlock(&s->wlock);
	return n;
}

/* The vt's unacked: bytes in the socket's send queue the peer has not acknowledged
 * (SIOCOUTQ; 0 if the kernel will not say). */
static size_t rc__stream_unacked(rc_tp *tp)
{
	int unsent = 0;

	return ioctl(tp->fd, SIOCOUTQ, &unsent) == 0 && unsent > 0 ? (size_t)unsent : 0;
}

/* A stream the peer has closed (or reset): one poll, no waiting. */
static bool rc__stream_hung_up(rc_tp *tp)
{
	struct pollfd pf = {tp->fd, POLLIN | POLLRDHUP, 0};

	return poll(&pf, 1, 0) == 1 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* The vt's shutdown: end reading (and writing): a reader blocked in another thread returns. */
static void rc__stream_shutdown(rc_tp *tp, bool both)
{
	(void)shutdown(tp->fd, both ? SHUT_RDWR : SHUT_RD); /* fails only if not connected */
}

/* A record over s's cap (the reader failed): RC_MSGTOOLARGE, rc__tp_detail saying how large
 * its header says it is and the cap -- what a client tells of a reply over its own. */
static __attribute__((noinline, cold)) rc_status rc__stream_toolarge(const rc__stream *s)
{
	rc__tp_set_detail("record of at least %zu bytes over the cap of %zu",
	                  s->rr.rec + s->rr.frag_left, s->rr.max_record);
	return RC_MSGTOOLARGE;
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

/* The vt's recv: the next whole record, reading large pieces into the record reader (the usual
 * case, one read bringing exactly one record, takes no copy). rest non-NULL (recv_head): a
 * big record still coming is handed out in part as soon as its mark has been read, so that
 * as much of it as possible is read straight to where it goes (rc_tp_vt.recv_pull). */
static inline __attribute__((always_inline)) rc_status
rc__stream_recv_t(rc_tp *tp, void **msg, size_t *len, unsigned tflags, const bool maytls,
                  size_t *rest)
{
	rc__stream *s = (rc__stream *)tp;
	int flags = (int)(tflags & RC_TPF_DONTWAIT);
	void *p;
	/* (not under TLS: bytes SSL has read ahead would then wait for an event that never
	 * comes) */
	size_t n, step = (tflags & RC_TPF_STEP) && !(maytls && s->tls != NULL) ? RC_TP_STEP_BYTES
	                                                                       : SIZE_MAX;
	ssize_t got;

	if (maytls && s->tls != NULL && rc__tls_handshaking(s->tls)) {
		rc_status st = rc__stream_handshake(s);
		if (st != RC_OK)
			return st;
		flags |= MSG_DONTWAIT; /* the handshake just ended: records may follow, or not */
	}
	/* a server's connection holding no buffer reads into its thread's (given back in park) */
	if (maytls && s->lend && s->rr.buf == NULL) {
		rc__lendbuf *lb = rc__lend_get();
		if (lb != NULL)
			(void)rc__recreader_lend(&s->rr, lb);
	}
	/* The usual case: nothing buffered, and one read brings exactly one whole record. */
	s->more = true; /* unless a read below finds nothing more */
	if (rc__recreader_front(&s->rr, &p, &n)) {
		got = rc__stream_rx_t(s, p, n, flags, maytls);
		if (got <= 0) {
			s->more = false;
			return rc__stream_recv_failed(got);
		}
		if (rc__recreader_whole(&s->rr, (size_t)got, msg, len))
			return RC_OK;
		flags |= MSG_DONTWAIT; /* we have data; don't block for more */
	}
	for (;;) {
		rc_status st = rc_recreader_next(&s->rr, msg, len);

		if (st != RC_AGAIN)
			return st == RC_OK ? st : rc__stream_toolarge(s); /* (RC_MSGTOOLARGE) */
		if (rest != NULL && rc__recreader_head(&s->rr, RC_TP_PULL_MIN, msg, len, rest))
			return RC_OK;
		if (step == 0) {
			/* (RC_TPF_STEP) this step's bytes are read: the caller looks at its budget;
			 * the socket stays readable for the rest */
			s->more = false;
			return RC_AGAIN;
		}
		st = rc_recreader_space(&s->rr, &p, &n);
		if (st != RC_OK)
			return st;
		got = rc__stream_rx_t(s, p, n < step ? n : step, flags, maytls);
		if (got <= 0) {
			s->more = false;
			return rc__stream_recv_failed(got);
		}
		rc_recreader_commit(&s->rr, (size_t)got);
		if (step != SIZE_MAX)
			step -= (size_t)got < step ? (size_t)got : step;
		flags |= MSG_DONTWAIT; /* we have data; don't block for more */
	}
}

/* The vt's recv_head (see rc_tp_vt): recv, or the head of a big record still coming. */
static inline __attribute__((always_inline)) rc_status
rc__stream_recv_head_t(rc_tp *tp, void **msg, size_t *len, size_t *rest, unsigned tflags,
                       const bool maytls)
{
	*rest = 0;
	return rc__stream_recv_t(tp, msg, len, tflags, maytls, rest);
}

static rc_status rc__stream_recv_head(rc_tp *tp, void **msg, size_t *len, size_t *rest,
                                      unsigned tflags)
{
	return rc__stream_recv_head_t(tp, msg, len, rest, tflags, true);
}

/* recv_head of a plaintext client connection (rc__stream_plain_vt). */
static rc_status rc__stream_recv_head_plain(rc_tp *tp, void **msg, size_t *len, size_t *rest,
                                            unsigned tflags)
{
	return rc__stream_recv_head_t(tp, msg, len, rest, tflags, false);
}

/* Before a blocking read of recv_pull: false (errno EAGAIN) once `end` (rc__clock_ns) has
 * passed, else true with tp's receive timeout no longer than what is left. */
static bool rc__stream_pull_time(rc_tp *tp, int64_t end)
{
	int64_t left = end - (int64_t)rc__clock_ns();

	if (left <= 0) {
		errno = EAGAIN;
		return false;
	}
	left = (left + 999999) / 1000000; /* ms, rounded up */
	if (tp->rcvtimeo_ms <= 0 || left < tp->rcvtimeo_ms)
		rc__tp_set_rcvtimeo(tp, (int)left);
	return true;
}

/* The vt's recv_pull (see rc_tp_vt): the rest of a record recv_head handed out in part, n
 * bytes of it into dst, reading with blocking reads until timeout_ms has passed. */
static rc_status rc__stream_recv_pull(rc_tp *tp, void *dst, size_t n, void **msg, size_t *len,
                                      int timeout_ms)
{
	rc__stream *s = (rc__stream *)tp;
	unsigned char *d = dst;
	int64_t end = (int64_t)rc__clock_ns() + (int64_t)timeout_ms * 1000000;
	ssize_t got;
	size_t k;
	void *p;

	if (d != NULL && !rc__recreader_skip_head(&s->rr, n)) {
		errno = EINVAL;
		return RC_CANTRECV;
	}
	while (d != NULL && n > 0) {
		if (!rc__stream_pull_time(tp, end))
			return RC_AGAIN;
		got = rc__stream_rx(s, d, n, 0);
		if (got <= 0)
			return rc__stream_recv_failed(got);
		d += got;
		n -= (size_t)got;
	}
	for (;;) {
		rc_status st = rc_recreader_next(&s->rr, msg, len);

		if (st != RC_AGAIN) {
			s->more = st == RC_OK; /* bytes read past the record: rc__stream_ahead */
			return st == RC_OK ? st : rc__stream_toolarge(s);
		}
		if ((st = rc_recreader_space(&s->rr, &p, &k)) != RC_OK)
			return st;
		if (!rc__stream_pull_time(tp, end))
			return RC_AGAIN;
		got = rc__stream_rx(s, p, k, 0);
		if (got <= 0)
			return rc__stream_recv_failed(got);
		rc_recreader_commit(&s->rr, (size_t)got);
	}
}

/* The vt's recv: the next whole record (see rc__stream_recv_t), on a stream that may be under
 * TLS. */
static rc_status rc__stream_recv(rc_tp *tp, void **msg, size_t *len, rc_peer *from,
                                 unsigned tflags)
{
	(void)from;
	return rc__stream_recv_t(tp, msg, len, tflags, true, NULL);
}

/* The plaintext vt's recv: the same without a TLS check. */
static rc_status rc__stream_recv_plain(rc_tp *tp, void **msg, size_t *len, rc_peer *from,
                                       unsigned tflags)
{
	(void)from;
	return rc__stream_recv_t(tp, msg, len, tflags, false, NULL);
}

/* A stream transport over connected or listening socket fd (which it then owns), records
 * capped at max_record; NULL if memory is short (fd is not closed). */
static rc__stream *rc__stream_new(int fd, size_t max_record)
{
	rc__stream *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->tp.fd = fd;
	s->tp.props = RC_TPP_STREAM;
	s->tp.max_msg = max_record;
	s->tp.rcvtimeo_ms = -1;
	s->max_record = max_record;
	rc_recreader_init(&s->rr, max_record);
	pthread_mutex_init(&s->wlock, NULL);
	return s;
}

/* The vt's set_max_record: records of at most n bytes from now on, both ways. */
static void rc__stream_set_max_record(rc_tp *tp, size_t n)
{
	rc__stream *s = (rc__stream *)tp;

	s->tp.max_msg = n;
	s->max_record = n;
	s->rr.max_record = n;
}

/* The vt's close: close the socket (a unix listener unlinks its path) and free everything. */
static void rc__stream_close(rc_tp *tp)
{
	rc__stream *s = (rc__stream *)tp;

	rc__tls_close(s->tls); /* before the socket: close_notify */
	if (tp->fd >= 0)
		close(tp->fd);
	if (s->path[0] != '\0') { /* not a file another server has bound there since */
		struct stat sb;
		if (lstat(s->path, &sb) == 0 && sb.st_dev == s->path_dev && sb.st_ino == s->path_ino)
			unlink(s->path);
	}
	rc_recreader_destroy(&s->rr);
	pthread_mutex_destroy(&s->wlock);
	free(s->oq);
	free(tp->caller); /* (proxy_v2.c) */
	free(s);
}

static rc_status rc__stream_accept(rc_tp *tp, rc_tp **out, size_t max_record);

/* The vt's buffered: bytes of an incomplete record held -- with TLS, also the decrypted
 * bytes (or part of a TLS record) the TLS layer holds, and 1 while a handshake runs. */
static size_t rc__stream_buffered(rc_tp *tp)
{
	rc__stream *s = (rc__stream *)tp;
	const rc_recreader *r = &s->rr;
	size_t n = rc_recreader_buffered(r);

	if (s->tls != NULL)
		n += rc__tls_handshaking(s->tls) ? 1 : rc__tls_pending(s->tls);
	/* a record under way counts even when its header is all that is held */
	return n == 0 && rc_recreader_in_record(r) ? 1 : n;
}

/* The vt's ahead: the last recv returned a record, and bytes are still held -- records of the
 * same read in the record reader, or TLS records read ahead (SSL's read-ahead takes what the
 * socket has) -- that no readiness of the socket will announce. */
static bool rc__stream_ahead(rc_tp *tp)
{
	rc__stream *s = (rc__stream *)tp;

	return s->more && (rc_recreader_buffered(&s->rr) > 0 ||
	                   (s->tls != NULL && rc__tls_pending(s->tls) > 0));
}

/* The vt's starttls (server): the STARTTLS reply is out; TLS from the next byte on. */
static rc_status rc__stream_starttls(rc_tp *tp, struct rc__tls_ctx *tls)
{
	rc__stream *s = (rc__stream *)tp;

	if (s->tls != NULL || tp->listener)
		return RC_INVAL;
	if (s->oqlen != s->oqoff || rc_recreader_buffered(&s->rr) > 0 ||
	    rc_recreader_in_record(&s->rr))
		return RC_BADREPLY; /* the peer did not wait for the reply to its probe */
	return rc__tls_accept(tls, tp->fd, &s->tls);
}

/* The vt's secure: under TLS with the handshake done; the verified client's identity. */
static bool rc__stream_secure(rc_tp *tp, const struct rc_tls_peer **peer)
{
	rc__stream *s = (rc__stream *)tp;

	*peer = NULL;
	if (s->tls == NULL || rc__tls_handshaking(s->tls))
		return false;
	*peer = rc__tls_peer(s->tls);
	return true;
}

/* The vt's exporter: the TLS session's, once the handshake is done (RPC-over-TLS: the
 * bindings are recommended, not required). */
static bool rc__stream_exporter(rc_tp *tp, unsigned char *out, bool *must)
{
	rc__stream *s = (rc__stream *)tp;

	*must = false;
	return s->tls != NULL && rc__tls_exporter(s->tls, out);
}

/* The vt's park: the server is done with this connection for now; what its reader holds
 * moves out of the thread's lent buffer into memory of its own (nothing, when it holds
 * nothing). */
static void rc__stream_park(rc_tp *tp)
{
	rc__stream *s = (rc__stream *)tp;

	(void)rc__recreader_park(&s->rr, rc__lend_mine);
}

static const _Alignas(64) rc_tp_vt rc__stream_vt = { /* (64: send and recv on one line) */
	.send = rc__stream_send,
	.flush = rc__stream_flush,
	.outq = rc__stream_outq,
	.unacked = rc__stream_unacked,
	.recv = rc__stream_recv,
	.recv_head = rc__stream_recv_head,
	.recv_pull = rc__stream_recv_pull,
	.accept = rc__stream_accept,
	.set_max_record = rc__stream_set_max_record,
	.buffered = rc__stream_buffered,
	.ahead = rc__stream_ahead,
	.sendv = rc__stream_sendv,
	.hung_up = rc__stream_hung_up,
	.shutdown = rc__stream_shutdown,
	.close = rc__stream_close,
	.starttls = rc__stream_starttls,
	.secure = rc__stream_secure,
	.exporter = rc__stream_exporter,
	.park = rc__stream_park,
};

/* A client connection made without TLS (it never starts TLS later): the same ops, with send
 * and recv compiled without the TLS checks (the null call's client path). */
static const _Alignas(64) rc_tp_vt rc__stream_plain_vt = { /* (64: send and recv on one line) */
	.send = rc__stream_send_plain,
	.flush = rc__stream_flush,
	.outq = rc__stream_outq,
	.unacked = rc__stream_unacked,
	.recv = rc__stream_recv_plain,
	.recv_head = rc__stream_recv_head_plain,
	.recv_pull = rc__stream_recv_pull,
	.accept = rc__stream_accept,
	.set_max_record = rc__stream_set_max_record,
	.buffered = rc__stream_buffered,
	.ahead = rc__stream_ahead,
	.sendv = rc__stream_sendv,
	.hung_up = rc__stream_hung_up,
	.shutdown = rc__stream_shutdown,
	.close = rc__stream_close,
	.starttls = rc__stream_starttls,
	.secure = rc__stream_secure,
	.exporter = rc__stream_exporter,
	.park = rc__stream_park,
};

/* TCP: no Nagle delay (a call or reply is one record; waiting for more only adds latency).
 * Best effort: a socket that refuses still carries calls correctly, only slower. */
static void rc__stream_tune(int fd, int family)
{
	int one = 1;

	if (family == AF_INET || family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* The vt's accept: the next connection, non-blocking and close-on-exec, as a new transport. */
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
	s->lend = true;
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

/*
 * RPC-over-TLS, client side, on freshly connected s: probe for (u->prog, u->vers) and, if
 * the server offers TLS, handshake, all by deadline. An opportunistic client whose server
 * has no TLS goes on in plaintext. RC_OK; RC_TLSUNAVAIL (required, not offered),
 * RC_TLSFAILED, RC_TIMEDOUT, the probe's failure (rc__tls_probe). rc__tp_detail says why.
 */
static rc_status rc__stream_tls_client(rc__stream *s, const rc_uri *u, int64_t deadline)
{
	bool offered;
	rc_status st = rc__tls_probe(&s->tp, u->prog, u->vers, deadline, &offered);

	if (st != RC_OK) {
		rc__tp_set_detail(st == RC_TIMEDOUT ? "TLS probe: no reply in time"
		                  : st == RC_BADREPLY ? "TLS probe: the reply is not an RPC reply to it"
		                                      : "TLS probe: the connection failed");
		return st == RC_BADREPLY ? RC_TLSUNAVAIL : st;
	}
	if (!offered) {
		if (rc__tls_policy(u->tls) == RC_TLS_OPPORTUNISTIC)
			return RC_OK;
		rc__tp_set_detail("the server answered the TLS probe without STARTTLS");
		return RC_TLSUNAVAIL;
	}
	return rc__tls_connect(u->tls, s->tp.fd, u->host, deadline, &s->tls);
}

/* The kind's connect: a connected TCP or unix stream by deadline (see rc_tp_connect_fn). */
static rc_status rc__stream_connect(const rc_uri *u, size_t max_record, int64_t deadline,
                                    rc_tp **out)
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
	if ((st = rc__sock_connect(fd, &a, deadline)) != RC_OK) {
		int e = errno;
		close(fd);
		errno = e;
		return st;
	}
	if ((s = rc__stream_new(fd, max_record)) == NULL) {
		close(fd);
		return RC_NOMEM;
	}
	s->tp.vt = &rc__stream_vt;
	if (u->tls != NULL && rc__tls_policy(u->tls) != RC_TLS_OFF && strcmp(u->scheme, "tcp") == 0 &&
	    (st = rc__stream_tls_client(s, u, deadline)) != RC_OK) {
		int e = errno;
		rc__stream_close(&s->tp);
		errno = e;
		return st;
	}
	if (s->tls == NULL) /* plaintext for good (a client never starts TLS after connect) */
		s->tp.vt = &rc__stream_plain_vt;
	*out = &s->tp;
	return RC_OK;
}

/* Make way to bind a unix socket at path (address a, len): a socket file nobody accepts on
 * (left by a server that died) is removed; one a server still listens on is refused; anything
 * else is left for bind to refuse (a regular file, say). RC_OK, or RC_LOCALERROR with errno
 * EADDRINUSE and rc__tp_detail saying why. */
static rc_status rc__unix_make_way(const char *path, const rc_peer *a)
{
	struct stat sb;
	int fd, r, e;

	if (lstat(path, &sb) != 0)
		return RC_OK;
	if (!S_ISSOCK(sb.st_mode)) {
		rc__tp_set_detail("%s exists and is not a socket", path);
		errno = EADDRINUSE;
		return RC_LOCALERROR;
	}
	/* non-blocking: a listener whose backlog is full answers EAGAIN instead of making us
	 * wait, and is as alive as one that accepts */
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		return RC_LOCALERROR;
	r = connect(fd, (const struct sockaddr *)&a->ss, a->len);
	e = errno;
	close(fd);
	if (r == 0 || e == EAGAIN || e == EINPROGRESS) {
		rc__tp_set_detail("%s is in use by a running server", path);
		errno = EADDRINUSE;
		return RC_LOCALERROR;
	}
	if (e == ECONNREFUSED) /* nobody listens: a dead server's file */
		unlink(path);
	return RC_OK; /* otherwise bind says what is wrong */
}

/* The kind's listen: a listening socket at u (a unix socket file left by a dead server is
 * replaced, one a live server listens on is not); writes the bound URI. RC_LOCALERROR (errno
 * kept; rc__tp_detail may say more) if it cannot bind or listen. */
static rc_status rc__stream_listen(const rc_uri *u, size_t max_record,
                                   const rc_tp_deliver *deliver, rc_tp **out, char *bound,
                                   size_t len)
{
	rc_peer a;
	rc__stream *s;
	rc_status st;
	int fd, one = 1;
	bool is_unix = strcmp(u->scheme, "unix") == 0;

	(void)deliver;
	if ((st = rc__stream_addr(u, &a)) != RC_OK)
		return st;
	fd = socket(a.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return RC_LOCALERROR;
	if (is_unix) {
		if ((st = rc__unix_make_way(u->host, &a)) != RC_OK) {
			int e = errno;
			close(fd);
			errno = e;
			return st;
		}
	} else if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) {
		close(fd); /* without it a restarted server could not bind its port for minutes */
		return RC_LOCALERROR;
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
		struct stat sb;
		if (stat(u->host, &sb) == 0) { /* the file bind made: removed on close if still there */
			memcpy(s->path, u->host, strlen(u->host) + 1); /* fits: rc__stream_addr */
			s->path_dev = sb.st_dev;
			s->path_ino = sb.st_ino;
		}
		if (bound && len)
			snprintf(bound, len, "unix:%s", u->host);
	} else {
		rc__sock_bound_uri(fd, "tcp", bound, len);
	}
	*out = &s->tp;
	return RC_OK;
}

/* The kinds' adopt (rc_tp_adopt_fn): a stream socket of the caller's, listening or connected
 * (server side: it may start TLS after an AUTH_TLS probe, as an accepted one). */
static rc_status rc__stream_adopt(int fd, size_t max_record, bool listener, rc_tp **out)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	rc__stream *s;

	if (!listener && getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		rc__stream_tune(fd, ss.ss_family);
	if ((s = rc__stream_new(fd, max_record)) == NULL)
		return RC_NOMEM;
	s->tp.vt = &rc__stream_vt;
	s->tp.listener = listener;
	s->lend = !listener;
	*out = &s->tp;
	return RC_OK;
}

const rc_tp_kind rc__tcp_kind = {"tcp", RC_TPP_STREAM, rc__stream_connect, rc__stream_listen,
                                 rc__stream_adopt};
const rc_tp_kind rc__unix_kind = {"unix", RC_TPP_STREAM, rc__stream_connect, rc__stream_listen,
                                  rc__stream_adopt};

/*
 * RPC-over-QUIC (draft-cel-nfsv4-rpc-over-quicv1): the quic://HOST:PORT transport, on
 * libngtcp2 with GnuTLS (ALPN "sunrpc", TLS 1.3 only, no 0-RTT; certificates from the same
 * rc_tls_* settings as RPC-over-TLS: rc__tls_ctx_files).
 *
 * How it maps onto remotecall. One QUIC endpoint -- a UDP socket and the thread that runs
 * ngtcp2 on it -- sits behind each client connection and each listener. The runtime never
 * sees QUIC: it talks to a *pipe*, a stream transport of this file's (rc__qtp) whose whole
 * messages the endpoint's thread queues to it and takes from it in memory (quic_conn.h's box;
 * a Unix socket pair between the two only rings), so every call mode, deferred replies,
 * limits and the back channel work unchanged, and the thread moves whole messages between
 * pipes and QUIC streams by the draft's rules:
 *
 *   client  one pipe for the connection. A call the runtime writes goes on one of a pool of
 *           client-created bidirectional streams (?streams=N, default 4: the least busy, a
 *           new one while the pool is not full; small calls handed over together 32 to a
 *           stream); replies come back on the stream the call took. Calls the server sends
 *           on streams it created (the back channel) go into the pipe, and the runtime's
 *           replies to them back on the stream each came on.
 *   server  one pipe -- one server connection -- for each stream a client creates (the
 *           draft: an upper layer's "connection" is a stream); the listener's accept hands
 *           them out. Replies go back on that stream; calls back (rc_svc_req_backchannel)
 *           on a stream the server creates for the pipe, whose replies come into the pipe.
 *
 * A message is forwarded only whole (no interleaving within a pipe or stream). Messages the
 * wrong way on a stream are dropped (the draft: silently) and counted; a record over the cap
 * or too short to be RPC closes the connection with RPC_PROTOCOL_VIOLATION; a peer opening
 * more streams than allowed (?streams=N on the listen URI, default 16) is closed by ngtcp2
 * with STREAM_LIMIT_ERROR; both are counted (rc__quic_lsn_stats). A client destroyed, or a
 * listener closed, closes its connections with RPC_NO_ERROR. Idle connections end after the
 * idle timeout (30 s), and their pipes with them.
 *
 * Output is bounded as a TCP socket's: the endpoint takes a pipe's records into its streams'
 * send queues only while RC__Q_PIPE_HELD of its bytes wait there unacknowledged; the rest
 * stays in the box, and once RC__Q_FROM_HIGH bytes wait there too, outq reports them and the
 * pipe's descriptor stops being writable (the box is choked: quic_conn.h) until
 * acknowledgments make room -- so a server stops reading a stream whose peer withholds
 * flow-control credit, waits for EPOLLOUT, and closes it after stall_ms, as over TCP.
 *
 * The price of the design: one more thread hop each way on both sides, and a send's copy
 * (docs/runtime.md has the figures).
 *
 * The files, top down: this one (the runtime's transports, the client, the listener), quic_ep.c,
 * quic_tls.c, quic_stream.c -- transports/quic_conn.h says what each holds.
 */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gnutls/crypto.h>

#include <remotecall/xdr.h>

#include "transports/quic_conn.h"

/* ---- the runtime's transports ------------------------------------------------------------- */

/*
 * A pipe's runtime end: a transport whose messages are the box's (quic_conn.h), handed over
 * whole in memory -- recv gives the endpoint's buffer, send hands the endpoint one record
 * (never blocking) -- and whose descriptor, the socket pair's runtime end, only rings:
 * readable while a message waits or the stream has ended, and writable unless the box is
 * choked (outq non-zero), so the runtime's loops poll it as any stream's.
 */
typedef struct rc__qtp {
	rc_tp tp;
	rc__qbox *box;
	rc__qpeer *who;
	rc__qep *ep;        /* a client's endpoint, ended with the transport; NULL on a server */
	unsigned char *cur; /* what recv handed out last (freed by the next) */
	atomic_bool shut_rd, shut_wr;
	/* bytes of records sent with RC_TPF_MORE since the endpoint was last rung: in the box,
	 * but the endpoint not told (the next send without MORE, or a flush, rings once for all
	 * of them -- a batch of pipelined calls or replies costs one wake-up, not one each) */
	atomic_size_t unrung;
} rc__qtp;

/* Gathered records (RC_TPF_MORE) wait for a ring at most this many bytes: then it rings. */
#define RC__Q_UNRUNG_MAX ((size_t)64 << 10)

static uint32_t rc__q_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* buf[0..*len) as it came (record marks included) made the message's body: where it starts
 * (one fragment: after its mark; several: the fragments moved together) and *len its length. */
static unsigned char *rc__q_unmark(unsigned char *buf, size_t *len)
{
	size_t in = 0, out = 0;

	if (*len >= 4 && (rc__q_be32(buf) & 0x7fffffffu) == *len - 4) {
		*len -= 4;
		return buf + 4;
	}
	while (in + 4 <= *len) {
		size_t n = rc__q_be32(buf + in) & 0x7fffffffu;
		if (n > *len - in - 4)
			n = *len - in - 4;
		memmove(buf + out, buf + in + 4, n);
		out += n;
		in += 4 + n;
	}
	*len = out;
	return buf;
}

/* The next message toward the runtime: RC_OK with *msg, *len; RC_AGAIN none waits; RC_CLOSED
 * none will (the stream ended, or the connection). */
static rc_status rc__qtp_take(rc__qtp *q, void **msg, size_t *len)
{
	rc__qbox *b = q->box;
	rc__qchunk *c;
	bool ring = false, ended;

	pthread_mutex_lock(&b->mu);
	if ((c = b->toward) != NULL) {
		if ((b->toward = c->next) == NULL)
			b->toward_tail = NULL;
		b->toward_bytes -= c->len;
		if (b->owed && b->toward_bytes < RC__Q_PIPE_HIWAT) { /* the endpoint gives credit */
			b->owed = false;
			ring = !b->attn;
			b->attn = true;
		}
		if (b->toward == NULL && !b->fin && b->bell) {
			char x;
			(void)!recv(q->tp.fd, &x, 1, MSG_DONTWAIT);
			b->bell = false;
		}
	}
	ended = b->fin || b->gone;
	pthread_mutex_unlock(&b->mu);
	if (ring)
		rc__qbox_ring(q->tp.fd);
	if (c == NULL)
		return ended ? RC_CLOSED : RC_AGAIN;
	*len = c->len;
	q->cur = c->p;
	*msg = rc__q_unmark(c->p, len);
	free(c);
	return RC_OK;
}

static rc_status rc__qtp_recv(rc_tp *tp, void **msg, size_t *len, rc_peer *from,
                              unsigned flags)
{
	rc__qtp *q = (rc__qtp *)tp;
	rc_status st;

	(void)from;
	free(q->cur);
	q->cur = NULL;
	for (;;) {
		struct pollfd pf = {tp->fd, POLLIN, 0};
		char x;
		int n;

		if (atomic_load(&q->shut_rd))
			return RC_CLOSED;
		/* (the box says when the endpoint's end is gone: it is marked before it closes) */
		if ((st = rc__qtp_take(q, msg, len)) != RC_AGAIN || (flags & RC_TPF_DONTWAIT))
			return st;
		n = poll(&pf, 1, tp->rcvtimeo_ms > 0 ? tp->rcvtimeo_ms : -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			return RC_AGAIN;
		n = (int)recv(tp->fd, &x, 1, MSG_PEEK | MSG_DONTWAIT);
		if (n == 0)
			return RC_CLOSED; /* the endpoint's end closed: the connection is gone */
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return RC_CANTRECV;
	}
}

/* The endpoint is told of every record queued so far (under the box's lock): whether a byte
 * must be sent to its end for that (none waits there yet). */
static bool rc__qtp_attn(rc__qtp *q)
{
	bool ring = !q->box->attn;

	q->box->attn = true;
	atomic_store_explicit(&q->unrung, 0, memory_order_relaxed);
	return ring;
}

/* One record -- msg[0..len) with the pieces seg[0..n) at their offsets -- to the endpoint. */
static rc_status rc__qtp_sendv(rc_tp *tp, unsigned char *msg, size_t len, const rc__gseg *seg,
                               unsigned n, unsigned flags)
{
	rc__qtp *q = (rc__qtp *)tp;
	rc__qbox *b = q->box;
	size_t total = len, at = 0, w = 4;
	rc__qchunk *c;
	unsigned char *buf;
	bool ring, gone;

	for (unsigned i = 0; i < n; i++)
		total += seg[i].len;
	if (total > RC_XDRREC_MAX_FRAG)
		return RC_MSGTOOLARGE;
	if (atomic_load(&q->shut_wr)) {
		errno = EPIPE;
		return RC_CANTSEND;
	}
	/* one allocation: the chunk, its bytes behind it (it travels on to the stream whole) */
	if ((c = malloc(sizeof(*c) + total + 4)) == NULL)
		return RC_NOMEM;
	buf = (unsigned char *)(c + 1);
	c->next = NULL;
	c->off = 0;
	buf[0] = (unsigned char)(0x80 | total >> 24);
	buf[1] = (unsigned char)(total >> 16);
	buf[2] = (unsigned char)(total >> 8);
	buf[3] = (unsigned char)total;
	for (unsigned i = 0; i <= n; i++) {
		size_t to = i < n ? seg[i].at : len;
		memcpy(buf + w, msg + at, to - at);
		w += to - at;
		at = to;
		if (i < n) {
			memcpy(buf + w, seg[i].p, seg[i].len);
			w += seg[i].len;
		}
	}
	c->p = buf;
	c->len = total + 4;
	pthread_mutex_lock(&b->mu);
	if (!(gone = b->gone)) {
		if (b->from_tail)
			b->from_tail->next = c;
		else
			b->from = c;
		b->from_tail = c;
		b->from_bytes += c->len;
		atomic_store_explicit(&b->from_seen, b->from_bytes, memory_order_relaxed);
	}
	if ((flags & RC_TPF_MORE) && atomic_load_explicit(&q->unrung, memory_order_relaxed) +
	                                   c->len < RC__Q_UNRUNG_MAX) {
		ring = false; /* gathered: the next send or flush rings */
		atomic_fetch_add_explicit(&q->unrung, c->len, memory_order_relaxed);
	} else {
		ring = rc__qtp_attn(q);
	}
	pthread_mutex_unlock(&b->mu);
	if (gone) {
		free(c);
		errno = EPIPE;
		return RC_CANTSEND;
	}
	if (ring)
		rc__qbox_ring(tp->fd);
	return RC_OK;
}

/* Tell the endpoint of records gathered (RC_TPF_MORE) and not rung for yet. */
static void rc__qtp_ring(rc__qtp *q)
{
	rc__qbox *b = q->box;
	bool ring;

	if (atomic_load_explicit(&q->unrung, memory_order_relaxed) == 0)
		return;
	pthread_mutex_lock(&b->mu);
	ring = rc__qtp_attn(q) && !b->gone;
	pthread_mutex_unlock(&b->mu);
	if (ring)
		rc__qbox_ring(q->tp.fd);
}

static rc_status rc__qtp_send(rc_tp *tp, unsigned char *msg, size_t len, const rc_peer *to,
                              unsigned flags)
{
	(void)to;
	return rc__qtp_sendv(tp, msg, len, NULL, 0, flags);
}

/* Bytes waiting over the box's bounds (0: within them; rc__qbox_full), under its lock: the
 * box is choked from here until the endpoint has room again -- the runtime's end is filled
 * (a burst of non-blocking filler writes until the kernel takes no more), so it is not
 * writable while outq says bytes wait, as a TCP socket's descriptor with a full buffer. */
static size_t rc__qtp_over(rc__qtp *q)
{
	static const char filler[4096];
	rc__qbox *b = q->box;

	if (!rc__qbox_full(b))
		return 0;
	if (!b->choked) {
		b->choked = true;
		while (send(q->tp.fd, filler, sizeof(filler), MSG_DONTWAIT | MSG_NOSIGNAL) > 0)
			;
	}
	return b->from_bytes;
}

/* The vt's outq: records gathered and not rung for (a flush rings), and the box's bytes over
 * its bounds (0 while within them: the endpoint takes them as acknowledgments come). */
static size_t rc__qtp_outq(rc_tp *tp)
{
	rc__qtp *q = (rc__qtp *)tp;
	size_t n = 0;

	/* (only this end adds to from_bytes: below the mark in its own last store, the box is
	 * within its bounds without a look under the lock -- outq is asked several times a
	 * message) */
	if (!q->box->spread &&
	    atomic_load_explicit(&q->box->from_seen, memory_order_relaxed) >= RC__Q_FROM_HIGH) {
		pthread_mutex_lock(&q->box->mu);
		n = rc__qtp_over(q);
		pthread_mutex_unlock(&q->box->mu);
	}
	if (n == 0) /* (when over, n counts them too) */
		n = atomic_load_explicit(&q->unrung, memory_order_relaxed);
	return n;
}

/* The vt's flush: rings for the records gathered (RC_TPF_MORE) -- the endpoint takes every
 * record by itself once told -- and waits (timeout_ms, as the vt says) until the box is within
 * its bounds: its descriptor writable again. */
static rc_status rc__qtp_flush(rc_tp *tp, int timeout_ms)
{
	uint64_t until = rc__q_now() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000;

	rc__qtp_ring((rc__qtp *)tp);
	for (;;) {
		uint64_t now = rc__q_now();
		int wait = -1;

		if (rc__qtp_outq(tp) == 0)
			return RC_OK;
		if (timeout_ms == 0 || (timeout_ms > 0 && now >= until))
			return RC_AGAIN;
		if (timeout_ms > 0)
			wait = (int)((until - now + 999999) / 1000000);
		if (!rc__sock_wait(tp->fd, POLLOUT, wait) && errno != EAGAIN)
			return RC_CANTSEND;
	}
}

static bool rc__qtp_ahead(rc_tp *tp)
{
	rc__qbox *b = ((rc__qtp *)tp)->box;
	bool r;

	pthread_mutex_lock(&b->mu);
	r = b->toward != NULL;
	pthread_mutex_unlock(&b->mu);
	return r;
}

static bool rc__qtp_hung_up(rc_tp *tp)
{
	rc__qbox *b = ((rc__qtp *)tp)->box;
	bool r;

	pthread_mutex_lock(&b->mu);
	r = b->toward == NULL && (b->fin || b->gone);
	pthread_mutex_unlock(&b->mu);
	return r;
}

static void rc__qtp_set_max_record(rc_tp *tp, size_t n)
{
	tp->max_msg = n;
}

static void rc__qtp_shutdown(rc_tp *tp, bool both)
{
	rc__qtp *q = (rc__qtp *)tp;

	atomic_store(&q->shut_rd, true);
	if (both)
		atomic_store(&q->shut_wr, true);
	(void)shutdown(tp->fd, both ? SHUT_RDWR : SHUT_RD); /* a receive waiting in poll wakes */
}

static bool rc__qtp_secure(rc_tp *tp, const struct rc_tls_peer **peer)
{
	rc__qtp *q = (rc__qtp *)tp;

	*peer = q->who != NULL && q->who->has ? &q->who->peer : NULL;
	return true;
}

/* The vt's exporter: the QUIC connection's (a server's streams share their connection's
 * session; a client has one); the draft requires RPCSEC_GSS to bind to it. */
static bool rc__qtp_exporter(rc_tp *tp, unsigned char *out, bool *must)
{
	rc__qtp *q = (rc__qtp *)tp;
	rc__qpeer *w = q->who;
	bool ok = false;

	*must = true;
	if (w == NULL && q->ep != NULL) { /* a client: its connection's, set at the handshake */
		pthread_mutex_lock(&q->ep->mu);
		if ((w = q->ep->who) != NULL && (ok = w->has_cb))
			memcpy(out, w->cb, sizeof(w->cb));
		pthread_mutex_unlock(&q->ep->mu);
		return ok;
	}
	if (w != NULL && (ok = w->has_cb))
		memcpy(out, w->cb, sizeof(w->cb));
	return ok;
}

static void rc__qtp_close(rc_tp *tp)
{
	rc__qtp *q = (rc__qtp *)tp;

	if (tp->fd >= 0)
		close(tp->fd); /* the endpoint sees its end closed: the pipe ends */
	if (q->ep != NULL)
		rc__qep_free(q->ep); /* a client's connection closes with RPC_NO_ERROR */
	free(q->cur);
	rc__qbox_release(q->box);
	rc__qpeer_release(q->who);
	free(tp->caller);
	free(q);
}

static const rc_tp_vt rc__qtp_vt = {
	.send = rc__qtp_send,
	.flush = rc__qtp_flush,
	.outq = rc__qtp_outq,
	.recv = rc__qtp_recv,
	.set_max_record = rc__qtp_set_max_record,
	.buffered = rc__tp_nothing_buffered,
	.sendv = rc__qtp_sendv,
	.ahead = rc__qtp_ahead,
	.hung_up = rc__qtp_hung_up,
	.shutdown = rc__qtp_shutdown,
	.close = rc__qtp_close,
	.secure = rc__qtp_secure,
	.exporter = rc__qtp_exporter,
};

/* Make the runtime's end fd (taken) and box (its reference taken) of a pipe a transport: RC_OK
 * with *out; on failure both are let go (and ep, when given, freed). */
static rc_status rc__quic_wrap(int fd, rc__qbox *box, size_t max_record, rc__qpeer *who,
                               rc__qep *ep, bool nonblock, rc_tp **out)
{
	rc__qtp *q = calloc(1, sizeof(*q));

	if (q == NULL) {
		close(fd);
		rc__qbox_release(box);
		if (ep)
			rc__qep_free(ep);
		return RC_NOMEM;
	}
	q->tp.vt = &rc__qtp_vt;
	q->tp.fd = fd;
	q->tp.props = RC_TPP_STREAM;
	q->tp.max_msg = max_record;
	q->tp.rcvtimeo_ms = -1;
	q->box = box;
	q->who = who;
	if (who != NULL)
		atomic_fetch_add(&who->refs, 1);
	q->ep = ep;
	atomic_init(&q->shut_rd, false);
	atomic_init(&q->shut_wr, false);
	(void)rc__tp_set_nonblock(&q->tp, nonblock);
	*out = &q->tp;
	return RC_OK;
}

/* ---- URI keys ----------------------------------------------------------------------------- */

static bool rc__quic_key(void *ctx, const rc__uri_key *k, const char *val)
{
	unsigned *streams = ctx;
	char *end;
	unsigned long v;

	if (strcmp(k->name, "streams") != 0)
		return true;
	v = strtoul(val, &end, 10);
	if (*end != '\0' || v < 1 || v > RC__Q_POOL_MAX) {
		rc__tp_set_detail("URI query: streams=%s: 1 to %d", val, RC__Q_POOL_MAX);
		return false;
	}
	*streams = (unsigned)v;
	return true;
}

/* ---- the client --------------------------------------------------------------------------- */

static rc_status rc__quic_connect(const rc_uri *u, size_t max_record, int64_t deadline,
                                  rc_tp **out)
{
	rc_peer to;
	rc_status st;
	rc__qep *ep;
	rc__qconn *qc;
	int fd, rfd = -1;
	rc__qbox *box = NULL;
	ngtcp2_cid dcid, scid;
	ngtcp2_callbacks cb;
	ngtcp2_settings sts;
	ngtcp2_transport_params tp;
	ngtcp2_path path;
	rc__tls_files none = {0};
	const rc__tls_files *f = u->tls ? rc__tls_ctx_files(u->tls) : &none;
	char qbuf[RC_URI_MAX];
	unsigned streams = RC__Q_POOL;

	*out = NULL;
	if (u->port < 0) {
		rc__tp_set_detail("quic:// needs a port");
		return RC_UNKNOWNADDR;
	}
	if (u->query[0] != '\0' &&
	    (st = rc__uri_query(u->query, RC__URIQ_CLIENT, rc__quic_key, &streams, qbuf,
	                        sizeof(qbuf))) != RC_OK)
		return st;
	if ((st = rc__resolve(u, SOCK_DGRAM, &to)) != RC_OK)
		return st;
	if ((fd = socket(to.ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return RC_CANTSEND;
	if (connect(fd, (struct sockaddr *)&to.ss, to.len) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return RC_CANTSEND;
	}
	if ((ep = rc__qep_new(fd, false, max_record)) == NULL)
		return RC_NOMEM;
	ep->streams = streams;
	snprintf(ep->name, sizeof(ep->name), "%s", f->name ? f->name : u->host);
	if ((st = rc__qep_certs(ep, f)) != RC_OK) {
		rc__qep_free(ep);
		return st;
	}
	if ((qc = calloc(1, sizeof(*qc))) == NULL) {
		rc__qep_free(ep);
		return RC_NOMEM;
	}
	qc->ep = ep;
	ep->conns = qc;
	ep->nconns = 1;
	memcpy(&qc->peer, &to.ss, to.len);
	qc->peerlen = to.len;
	qc->locallen = sizeof(qc->local);
	(void)getsockname(fd, (struct sockaddr *)&qc->local, &qc->locallen);
	dcid.datalen = 18;
	scid.datalen = RC__Q_SCIDLEN;
	(void)gnutls_rnd(GNUTLS_RND_RANDOM, dcid.data, dcid.datalen);
	(void)gnutls_rnd(GNUTLS_RND_RANDOM, scid.data, scid.datalen);
	rc__q_callbacks(&cb, false);
	rc__q_settings(ep, &qc->peer, &sts, &tp);
	path.local.addr = (ngtcp2_sockaddr *)&qc->local;
	path.local.addrlen = qc->locallen;
	path.remote.addr = (ngtcp2_sockaddr *)&qc->peer;
	path.remote.addrlen = qc->peerlen;
	path.user_data = NULL;
	if (ngtcp2_conn_client_new(&qc->conn, &dcid, &scid, &path, NGTCP2_PROTO_VER_V1, &cb, &sts,
	                           &tp, NULL, qc) != 0 ||
	    rc__q_session(qc) != 0 || (qc->cpipe = rc__qpipe_new(qc, &rfd, &box)) == NULL) {
		rc__qep_free(ep);
		return RC_NOMEM;
	}
	box->spread = true; /* (the endpoint's thread has not started) */
	if ((st = rc__qep_start(ep)) != RC_OK) {
		close(rfd);
		rc__qbox_release(box);
		rc__qep_free(ep);
		return st;
	}
	/* the thread runs the handshake; wait for it, by the deadline */
	pthread_mutex_lock(&ep->mu);
	while (ep->state == 0) {
		if (deadline == 0) {
			pthread_cond_wait(&ep->cv, &ep->mu);
			continue;
		}
		struct timespec at;
		int64_t left = deadline - (int64_t)rc__q_now();
		if (left <= 0)
			break;
		clock_gettime(CLOCK_REALTIME, &at);
		at.tv_sec += left / 1000000000;
		at.tv_nsec += left % 1000000000;
		if (at.tv_nsec >= 1000000000) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000;
		}
		(void)pthread_cond_timedwait(&ep->cv, &ep->mu, &at);
	}
	st = ep->state == 1 ? RC_OK : ep->state < 0 ? RC_TLSFAILED : RC_TIMEDOUT;
	if (st == RC_TLSFAILED)
		rc__tp_set_detail("%s", ep->why);
	pthread_mutex_unlock(&ep->mu);
	if (st != RC_OK) {
		close(rfd);
		rc__qbox_release(box);
		rc__qep_free(ep);
		return st;
	}
	return rc__quic_wrap(rfd, box, max_record, NULL, ep, false, out);
}

/* ---- the listener ------------------------------------------------------------------------- */

typedef struct rc__qlsn {
	rc_tp tp; /* fd: an eventfd, readable while accepted streams wait */
	rc__qep *ep;
} rc__qlsn;

static rc_status rc__qlsn_accept(rc_tp *tp, rc_tp **out, size_t max_record)
{
	rc__qep *ep = ((rc__qlsn *)tp)->ep;
	rc__qacc *a;
	rc_status st;
	uint64_t v;

	pthread_mutex_lock(&ep->mu);
	if ((a = ep->acq) != NULL) {
		ep->acq = a->next;
		if (ep->acq == NULL)
			ep->acq_tail = NULL;
	} else {
		(void)!read(ep->afd, &v, sizeof(v)); /* nothing waits: not readable until more do */
	}
	pthread_mutex_unlock(&ep->mu);
	if (a == NULL)
		return RC_AGAIN;
	st = rc__quic_wrap(a->fd, a->box, max_record, a->who, NULL, true, out);
	rc__qpeer_release(a->who);
	free(a);
	return st;
}

static void rc__qlsn_close(rc_tp *tp)
{
	rc__qlsn *l = (rc__qlsn *)tp;

	rc__qep_free(l->ep);
	free(l);
}

static void rc__qlsn_shutdown(rc_tp *tp, bool both)
{
	(void)tp;
	(void)both;
}

static const rc_tp_vt rc__qlsn_vt = {
	.outq = rc__tp_nothing_queued,
	.buffered = rc__tp_nothing_buffered,
	.hung_up = rc__tp_never_hung_up,
	.accept = rc__qlsn_accept,
	.shutdown = rc__qlsn_shutdown,
	.close = rc__qlsn_close,
};

static rc_status rc__quic_listen(const rc_uri *u, size_t max_record,
                                 const rc_tp_deliver *deliver, rc_tp **out, char *bound,
                                 size_t len)
{
	rc_peer at;
	rc_status st;
	int fd, one = 1;
	rc__qep *ep;
	rc__qlsn *l;
	const rc__tls_files *f;
	char qbuf[RC_URI_MAX];
	unsigned streams = RC__Q_SRV_STREAMS;

	(void)deliver;
	*out = NULL;
	if (u->tls == NULL) {
		rc__tp_set_detail("quic:// needs the server's certificate: rc_server_set_tls first");
		return RC_INVAL;
	}
	f = rc__tls_ctx_files(u->tls);
	if (u->query[0] != '\0' &&
	    (st = rc__uri_query(u->query, RC__URIQ_LISTEN, rc__quic_key, &streams, qbuf,
	                        sizeof(qbuf))) != RC_OK)
		return st;
	if ((st = rc__resolve(u, SOCK_DGRAM, &at)) != RC_OK)
		return st;
	if ((fd = socket(at.ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return RC_LOCALERROR;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&at.ss, at.len) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return RC_LOCALERROR;
	}
	if ((st = rc__sock_bound_uri(fd, "quic", bound, len)) != RC_OK) {
		close(fd);
		return st;
	}
	if ((ep = rc__qep_new(fd, true, max_record)) == NULL)
		return RC_NOMEM;
	ep->streams = streams;
	ep->clientcert = f->clientcert;
	if ((st = rc__qep_certs(ep, f)) != RC_OK) {
		rc__qep_free(ep);
		return st;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		rc__qep_free(ep);
		return RC_NOMEM;
	}
	l->ep = ep;
	l->tp.vt = &rc__qlsn_vt;
	l->tp.fd = ep->afd;
	l->tp.props = RC_TPP_STREAM;
	l->tp.listener = true;
	l->tp.max_msg = max_record;
	l->tp.rcvtimeo_ms = -1;
	if ((st = rc__qep_start(ep)) != RC_OK) {
		rc__qlsn_close(&l->tp);
		return st;
	}
	*out = &l->tp;
	return RC_OK;
}

/* quic.h: what the listener tp has counted. */
void rc__quic_lsn_stats(rc_tp *tp, rc__quic_stats *out)
{
	rc__qep *ep;

	memset(out, 0, sizeof(*out));
	if (tp == NULL || tp->vt != &rc__qlsn_vt)
		return;
	ep = ((rc__qlsn *)tp)->ep;
	pthread_mutex_lock(&ep->mu);
	*out = ep->st;
	pthread_mutex_unlock(&ep->mu);
}

const rc_tp_kind rc__quic_kind = {"quic", RC_TPP_STREAM, rc__quic_connect, rc__quic_listen,
                                  NULL};

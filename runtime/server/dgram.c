/*
 * The server's datagram listeners (UDP), a listener kind of their own: receiving calls one at
 * a time or in batches (recvmmsg, with receive offload where the kernel joins a sender's
 * datagrams), serving each (rc__serve) and sending the replies of a batch together
 * (sendmmsg), answering deferred requests at their caller's saved address. Events come from
 * the epoll loop (rc__dgram_event); a server whose only listener is a datagram one serves it
 * in a blocking loop (rc__dgram_serve, flags 0).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "runtime/core/rpc.h"
#include "runtime/server/server_internal.h"
#include "runtime/server/listener.h"

/* A blocking receive on datagram listener l that first polls for up to srv->spin_ns
 * (rc_server_set_spin). Same returns as recv_into. */
static rc_status rc__spin_recv(rc_server *srv, rc__lsn *l, void *buf, size_t cap, size_t *len,
                               rc_peer *from)
{
	int64_t until = rc__now() + srv->spin_ns;
	rc_status st;

	do
		st = l->tp->vt->recv_into(l->tp, buf, cap, len, from, RC_TPF_DONTWAIT);
	while (st == RC_AGAIN && !atomic_load(&srv->stop) && rc__now() < until);
	if (st == RC_AGAIN && !atomic_load(&srv->stop))
		st = l->tp->vt->recv_into(l->tp, buf, cap, len, from, 0);
	return st;
}

/* rc__lone_skip for the blocking loop: there a look costs a system call that would not have
 * been made, so while calls alternate only every 32nd call looks for a batch. */
static inline bool rc__lone_skip32(unsigned *lone)
{
	return *lone > 0 && ((*lone)++ & 31) != 0;
}

/*
 * A thread's datagram batch: RC_TP_BATCH receive slots of cap bytes each (one allocation,
 * made on first use and kept by the thread; the kernel touches only the pages datagrams land
 * in). A served request's slot takes its reply, so
 * the replies of a batch leave with one send_batch.
 */
typedef struct rc__dbatch {
	size_t cap;
	rc_tp_dgram v[RC_TP_BATCH];
	_Alignas(16) unsigned char bytes[]; /* the slots (XDR_INLINE reads int32_t in them) */
} rc__dbatch;

/* w's batch with slots of cap bytes, made (or remade for a new cap) on first use; NULL when
 * memory is short (the caller receives one datagram at a time instead). */
static rc__dbatch *rc__dbatch_get(rc__wctx *w, size_t cap)
{
	rc__dbatch *b = w->batch;

	if (b != NULL && b->cap == cap)
		return b;
	free(b);
	w->batch = b = malloc(sizeof(*b) + RC_TP_BATCH * cap);
	if (b == NULL)
		return NULL;
	b->cap = cap;
	for (unsigned k = 0; k < RC_TP_BATCH; k++) {
		b->v[k].buf = b->bytes + k * cap;
		b->v[k].cap = cap;
	}
	return b;
}

/*
 * Turn receive offload on for datagram listener l, once: several datagrams of one sender (a
 * client's pipelined calls, sent with segmentation offload) then come in one system call.
 * Only while one thread receives on l (a receive already in the kernel could be handed a
 * joined packet it cannot cut), and only when the receive buffers hold a joined packet
 * (max_record of RC__DGRAM_MAX or more). Asked when the first burst comes on a one-thread
 * server (a lone call's receive stays the plain one), or before worker threads start.
 */
void rc__lsn_offload(rc_server *srv, rc__lsn *l)
{
	if (!l->offload_asked && srv->lim.max_record >= RC__DGRAM_MAX &&
	    l->tp->vt->offload != NULL) {
		l->offload_asked = true;
		(void)l->tp->vt->offload(l->tp);
	}
}

/* A datagram's way out (ctx: its listener): sent at once to its caller. A reply the socket
 * refuses (a full send buffer) is as if lost: the client retransmits. */
static inline bool rc__dgram_send(void *ctx, const rc__out *o)
{
	rc__lsn *l = ctx;

	(void)l->tp->vt->send(l->tp, o->msg, o->len, o->peer, 0);
	return true;
}


/* A deferred datagram request's way out (ctx: the request): to the caller's saved address on
 * its listener. False when the listener has failed. */
static bool rc__dgram_later_send(void *ctx, const rc__out *o)
{
	rc__req *r = ctx;

	return r->l->tp->vt->send(r->l->tp, o->msg, o->len, &r->peer, 0) != RC_CANTSEND;
}

const rc__sink_ops rc__dgram_later = {rc__dgram_later_send, NULL, NULL, NULL};

/* Where the replies of a datagram batch go (rc__dbatch_send's context): slot k's request is
 * being served; nout replies are gathered at the front so far. */
typedef struct rc__dbcursor {
	rc__lsn *l;
	rc__dbatch *b;
	unsigned k, nout;
} rc__dbcursor;

/* A reply of a datagram batch takes its request's slot (done with by now), moved to the front
 * with the others, to leave together with send_batch; one over the slot (a small max_record)
 * goes on its own. */
static inline bool rc__dbatch_send(void *ctx, const rc__out *o)
{
	rc__dbcursor *bc = ctx;
	rc__dbatch *b = bc->b;
	rc_tp_dgram *d = &b->v[bc->k];

	if (o->len > d->cap)
		return rc__dgram_send(bc->l, o);
	memcpy(d->buf, o->msg, o->len);
	d->len = o->len;
	if (bc->nout != bc->k) { /* gather the replies at the front: swap slots */
		rc_tp_dgram t = b->v[bc->nout];
		b->v[bc->nout] = *d;
		*d = t;
	}
	bc->nout++;
	return true;
}


/*
 * Receive up to `want` datagrams waiting on l with one system call (tflags RC_TPF_DONTWAIT), or
 * waiting for the first (tflags 0), serve them one after another, and send their replies
 * together (send_batch): the replies of a batch leave after its last request is served.
 * Re-arms l first when rearm (worker threads: let another thread in while this one serves).
 * Returns how many were received: 0 when none was waiting (or the wait was interrupted), -1
 * when the listener failed or memory is short (the caller falls back to one at a time).
 */
static int rc__dgram_batch(rc_server *srv, rc__wctx *w, rc__lsn *l, unsigned want, size_t cap,
                           bool rearm, unsigned tflags)
{
	rc__dbatch *b = rc__dbatch_get(w, cap);
	unsigned got, sent;
	rc__dbcursor bc = {l, b, 0, 0};
	rc_status st;

	if (b == NULL)
		return -1;
	if (want > RC_TP_BATCH)
		want = RC_TP_BATCH;
	st = l->tp->vt->recv_batch(l->tp, b->v, want, &got, tflags);
	if (st != RC_OK)
		return st == RC_AGAIN ? 0 : -1;
	if (rearm)
		(void)rc__arm(srv, EPOLL_CTL_MOD, l->tp, l, EPOLLIN); /* let another worker in */
	if (got >= 2 && !l->offload_asked && srv->threads <= 1)
		rc__lsn_offload(srv, l); /* a burst, one thread: the next one joined */
	for (bc.k = 0; bc.k < got; bc.k++) {
		rc_tp_dgram *d = &b->v[bc.k];
		size_t rlen = rc__serve(srv, w, d->buf, d->len, &d->peer, true, rc__trace_t0(srv), NULL);

		rc__reply_leave(srv, w, rc__dbatch_send, &bc, rlen, &d->peer, true);
	}
	/* replies the socket refuses (a full send buffer) are as if lost: clients retransmit. A
	 * lone one (the blocking loop's look for a burst found one call) goes by the plain send,
	 * which sets up no message vector. */
	if (bc.nout == 1)
		(void)l->tp->vt->send(l->tp, b->v[0].buf, b->v[0].len, &b->v[0].peer, RC_TPF_DONTWAIT);
	else if (bc.nout > 0)
		(void)l->tp->vt->send_batch(l->tp, b->v, bc.nout, &sent);
	return (int)got;
}

/*
 * Serve up to n datagrams waiting on l. Returns how many.
 *  - flags RC_TPF_DONTWAIT (the epoll loops), n > 1: in batches (rc__dgram_batch), until one
 *    comes back short (the socket is then empty) or n are served;
 *  - flags RC_TPF_DONTWAIT, n == 1: one datagram (recv_into), its reply sent at once;
 *  - flags 0 (the blocking loop on a lone listener): a blocking receive of one (spinning
 *    first when the server spins), served and answered at once, then a batch of what else
 *    is waiting, and so on. While calls come one at a time (a look for a batch found none
 *    or one), only every 32nd call looks (rc__lone_skip32), so a lone call costs what it
 *    cost before; a burst is noticed within 32 calls and then served in batches. Unless the
 *    server spins, the look is itself the blocking receive (it waits for the first datagram
 *    and takes what else is there), so it costs no system call of its own.
 */
static inline __attribute__((always_inline)) int
rc__dgram_serve_body(rc_server *srv, rc__wctx *w, rc__lsn *l, int n, const unsigned flags,
                     bool rearm)
{
	size_t cap = srv->lim.max_record < RC__DGRAM_MAX ? srv->lim.max_record : RC__DGRAM_MAX;
	bool batches = l->tp->vt->recv_batch != NULL && l->tp->vt->send_batch != NULL;
	bool armed = !rearm; /* re-armed (worker threads), however this turn ends */
	int i = 0;

	if (w->rbuf == NULL && (w->rbuf = rc__alloc_lines(RC__DGRAM_MAX)) == NULL)
		return 0; /* the datagram stays queued; we come back */
	w->lsn = l; /* a request deferred here is answered on l */
	w->later = &rc__dgram_later;
	while (i < n) {
		size_t len, rlen;
		rc_peer from;
		rc_status st;

		if (batches && (flags != 0 ? i > 0 || n > 1
		                           : i > 0 && ((l->offload_asked && rc__tp_ahead(l->tp)) ||
		                                       !rc__lone_skip32(&w->lone)))) {
			unsigned want;
			int k;
			/* as many slots as the last batch filled, times two (2..RC_TP_BATCH): setting
			 * up a slot costs, so a look for a burst after lone calls costs little */
			want = w->want < 2 ? 2 : w->want;
			if (want > (unsigned)(n - i))
				want = (unsigned)(n - i);
			/* the blocking loop's look waits for the next call, unless it spins first
			 * (rc__spin_recv below) or pieces of a joined packet are held */
			k = rc__dgram_batch(srv, w, l, want, cap, !armed,
			                    flags != 0 || srv->spin_ns > 0 ? RC_TPF_DONTWAIT : 0);
			if (k > 0) {
				armed = true;
				i += k;
				if (k >= 2)
					w->lone = 0; /* a burst: look for the rest every time */
				else if (w->lone == 0)
					w->lone = 1; /* one waiting is no burst: calls still alternate */
				w->want = 2 * (unsigned)k > RC_TP_BATCH ? RC_TP_BATCH : 2 * (unsigned)k;
				if (atomic_load(&srv->stop) || (flags != 0 && (unsigned)k < want))
					break; /* stopping, or a short batch: the socket is empty */
				continue;
			}
			if (k < 0)
				batches = false; /* no memory for a batch: one at a time */
			if (flags != 0) {
				if (k == 0 || i > 0)
					break; /* nothing more waiting */
				continue;
			}
			/* the waiting look interrupted, or taking only over-long ones: as a failed
			 * receive, back to the caller (it looks at its stop flag) */
			if (k == 0 && srv->spin_ns == 0)
				break;
			if (k == 0 && w->lone == 0)
				w->lone = 1; /* calls come one at a time: look for bursts less often */
			/* the blocking loop: wait for the next one */
		}
		st = flags == 0 && srv->spin_ns > 0
		         ? rc__spin_recv(srv, l, w->rbuf, cap, &len, &from)
		         : l->tp->vt->recv_into(l->tp, w->rbuf, cap, &len, &from, flags);
		if (st != RC_OK)
			break;
		uint64_t t_rcv = rc__trace_t0(srv);
		if (!armed) {
			(void)rc__arm(srv, EPOLL_CTL_MOD, l->tp, l, EPOLLIN); /* let another worker in */
			armed = true;
		}
		rlen = rc__serve(srv, w, w->rbuf, len, &from, true, t_rcv, NULL);
		rc__reply_leave(srv, w, rc__dgram_send, l, rlen, &from, false);
		i++;
		if (atomic_load(&srv->stop))
			break;
	}
	/* nothing taken (a datagram dropped as over-long, or a spurious wake-up): the one-shot
	 * listener must still be armed again, or no worker would hear it */
	if (!armed)
		(void)rc__arm(srv, EPOLL_CTL_MOD, l->tp, l, EPOLLIN);
	return i;
}

/* listener.h: rc__dgram_serve's body compiled twice, for the blocking loop (flags 0) and
 * for the epoll loops, so neither tests per datagram what its flags already say. */
int rc__dgram_serve(rc_server *srv, rc__wctx *w, rc__lsn *l, int n, unsigned flags, bool rearm)
{
	if (flags == 0)
		return rc__dgram_serve_body(srv, w, l, n, 0, rearm);
	return rc__dgram_serve_body(srv, w, l, n, flags, rearm);
}

/*
 * A datagram listener's epoll event. With worker threads: one datagram, then the one-shot
 * socket is re-armed for the next worker. With one thread: up to 64 while they come in
 * batches (one receive each, the last saying EAGAIN); while they come one at a time, just the
 * one the event announced (rc__lone_skip).
 */
void rc__dgram_event(rc_server *srv, rc__wctx *w, rc__lsn *l)
{
	if (srv->threads > 1) {
		rc__dgram_serve(srv, w, l, RC_TP_BATCH, RC_TPF_DONTWAIT, true);
	} else if (rc__lone_skip(&l->lone)) {
		rc__dgram_serve(srv, w, l, 1, RC_TPF_DONTWAIT, false);
	} else {
		l->lone = rc__dgram_serve(srv, w, l, 64, RC_TPF_DONTWAIT, false) <= 1;
	}
	/* datagrams received joined (UDP_GRO) and not served yet: epoll will not announce them
	 * (the listener is armed again by now) */
	while (rc__tp_ahead(l->tp) && !atomic_load(&srv->stop))
		rc__dgram_serve(srv, w, l, RC_TP_BATCH, RC_TPF_DONTWAIT, false);
}

/*
 * Blocking calls (rc_call, rc_call_ex): the fast step, one send and one receive that need no
 * lock on an idle client, and the engine for anything unusual (common.h).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/client/engine.h"

/* ---- blocking calls --------------------------------------------------------------------- */

/* A reply record read in part (recv_head) while its results decode: rc__pull reads the rest. */
typedef struct rc__puller {
	rc_tp *tp;
	const unsigned char *head; /* the record's first byte, as recv_head handed it out */
	int64_t deadline;          /* the call's (rc__now) */
	rc_status r;               /* RC_OK, or the transport's failure (the record is cut) */
	int e;                     /* its errno */
} rc__puller;

/* recv_pull with what is left of the call's time. */
static rc_status rc__puller_read(rc__puller *pl, void *dst, size_t n, void **msg, size_t *len)
{
	int64_t left = (pl->deadline - rc__now()) / 1000000;

	return pl->tp->vt->recv_pull(pl->tp, dst, n, msg, len,
	                             left < 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int)left);
}

/* x_pull of a reply decoded while its record still comes (see rc_xdr): n bytes straight into
 * dst and the rest into the transport, or (dst NULL) the whole record, as the new window. */
static bool rc__pull(rc_xdr *x, void *dst, size_t n)
{
	rc__puller *pl = x->x_ctx;
	size_t at = (size_t)(x->x_pos - pl->head), base = (size_t)(x->x_base - pl->head);
	unsigned char *m;
	void *mv;
	size_t len;

	x->x_pull = NULL;
	x->x_rest = 0;
	pl->r = rc__puller_read(pl, dst, n, &mv, &len);
	if (pl->r != RC_OK) {
		pl->e = errno;
		x->x_pos = x->x_end; /* nothing more to decode */
		return false;
	}
	m = mv;
	if (dst != NULL) {
		x->x_base = x->x_pos = m; /* what follows dst's bytes */
	} else {
		x->x_base = m + base; /* the whole record: the head may have moved */
		x->x_pos = m + at;
	}
	x->x_end = m + len;
	return true;
}

#define RC__KEEP_MAX (((size_t)4 << 20) + 4096) /* an encode buffer a client keeps for good */
#define RC__KEEP_BIG (((size_t)64 << 20) + 4096) /* a bigger one kept while big calls go on */
#define RC__KEEP_BIG_SPARE 64 /* calls under an eighth of a big kept buffer before it goes */

/* The engine's fields of a blocking call (the fast step needs none of them). */
static inline void rc__call_init(rc_async *p)
{
	p->state = RC__CALL_IDLE;
	p->has_cb = p->released = p->handle = p->windowed = false;
	p->renewing = p->resend = false;
	p->renewed = 0;
	p->renew_st = RC_OK;
	p->next = p->prev = NULL;
	p->msgblock = NULL;
	p->tr_begin = p->tr_encoded = 0;
	p->auth = NULL; /* (rc__encode takes the credentials' reference, if they seal) */
	p->wire = NULL;
	p->seqs.n = 0;
	p->resend_xid = 0;
}

/* Hand a heap encode buffer, of a call whose message took len bytes, to the client for the next
 * fast-path call (only the holder of the reader's role). A client keeps at most one: up to
 * RC__KEEP_MAX bytes for good, up to RC__KEEP_BIG while big calls go on -- RC__KEEP_BIG_SPARE
 * calls in a row that use less than an eighth of it let it go (the caller frees it). */
static void rc__keep_buffer(rc_client *c, rc__encbuf *b, size_t len)
{
	if (!b->heap || c->fastbuf != NULL || b->cap > RC__KEEP_BIG)
		return;
	if (b->cap > RC__KEEP_MAX) {
		c->big_spare = len < b->cap / 8 ? c->big_spare + 1 : 0;
		if (c->big_spare > RC__KEEP_BIG_SPARE) {
			c->big_spare = 0;
			return;
		}
	}
	c->fastbuf = b->data;
	c->fastcap = b->cap;
	rc__encbuf_detach(b);
}

/* The fast step's connection broke (a send failed, a reply broke off): give up the reader's
 * role and, on a stream, fail the calls other threads have in flight with st (errno e) and
 * close it -- the next call reconnects. */
static void rc__fast_broken(rc_client *c, rc_status st, int e)
{
	pthread_mutex_lock(&c->mu);
	c->reading = false;
	if (!c->dgram) {
		rc__fail_all(c, st, e);
		rc__disconnect(c);
	}
	rc__wake(c);
	pthread_mutex_unlock(&c->mu);
}

/*
 * The fast step's reply came in part: recv_head handed out the head of a big record
 * (*msg, *len), rest bytes still to come, to be read by the call's deadline. If it is p's
 * reply with the usual header, decode the results with their big data read straight into
 * the result's buffers, read the record to its end, and return 1 (*st set). Otherwise
 * complete the record and return 0 (*msg, *len: the whole record, for the usual path). 2:
 * the record broke off (the peer closed, an error, the deadline): the connection is closed
 * (as the engine would), the reader's role given up, *st set -- the call is over. Out of
 * line: the fast step's null calls should not carry it.
 */
static __attribute__((noinline)) int rc__fast_pull(rc_client *c, rc_async *p, rc_tp *tp,
                                                   void **msg, size_t *len, size_t rest,
                                                   int64_t deadline, bool traced, rc_status *st)
{
	rc__puller pl = {tp, *msg, deadline, RC_OK, 0};
	rc_status r;
	rc_xdr x;
	bool ok;
	int e;

	if (*len >= 24 && rc__get32(pl.head) == p->xid && rc__plain_success(pl.head)) {
		if (traced)
			rc__trace(c, RC_TP_REPLY, p->xid);
		rc__xdr_decoder(&x, pl.head + 24, *len - 24, rc__budget(c));
		x.x_rest = rest;
		x.x_pull = rc__pull;
		x.x_ctx = &pl;
		ok = p->xres(&x, p->res);
		if (pl.r == RC_OK && x.x_pull != NULL) { /* never read: read it (and ignore it) */
			void *m;
			size_t l;
			if ((pl.r = rc__puller_read(&pl, NULL, 0, &m, &l)) != RC_OK)
				pl.e = errno;
		}
		if (pl.r == RC_OK) {
			if (!ok)
				rc__err_clear(&p->err);
			*st = ok ? RC_OK : RC_CANTDECODERES;
			return 1;
		}
	} else if ((pl.r = rc__puller_read(&pl, NULL, 0, msg, len)) == RC_OK) {
		return 0;
	} else {
		pl.e = errno;
	}
	/* cut: a timeout leaves the stream out of step as any failure does */
	r = pl.r == RC_AGAIN ? RC_TIMEDOUT : RC_CANTRECV;
	e = pl.r == RC_AGAIN ? ETIMEDOUT : pl.r == RC_CLOSED ? ECONNRESET : pl.e;
	rc__fast_broken(c, RC_CANTRECV, e);
	rc__err_clear(&p->err);
	*st = rc__broken_status(p, r, e);
	return 2;
}

/* Give up the reader's role without the lock (the fast step), waking waiters if any. */
static inline __attribute__((always_inline)) void rc__role_drop(rc_client *c)
{
	atomic_store(&c->reading, false);
	if (atomic_load(&c->nwaiters) > 0) {
		pthread_mutex_lock(&c->mu);
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
	}
}

/*
 * The fast step of a blocking call: nobody else is using the client, so this thread has taken
 * the reader's role (compare-and-swap, without the lock), and it encodes, sends and receives
 * its reply without registering the call or touching the lock. Anything unusual -- a timeout,
 * another call's reply, an error -- hands the call to the engine, registered as in flight.
 * Returns true if the call finished here (*st set, lock not held), false if the caller
 * continues with rc__drive (p is then in flight and c->mu is held).
 */
static inline __attribute__((always_inline)) bool
rc__fast(rc_client *c, rc_async *p, rc__encbuf *b, uint32_t proc, rc_xdrproc xargs,
         const void *args, rc_status *st, int64_t now, const bool traced, uint64_t t0)
{
	rc_tp *tp = c->tp;
	const rc__hdr *hdr = __atomic_load_n(&c->hdr, __ATOMIC_ACQUIRE);
	unsigned char *msg = rc__encbuf_msg(b), *h;
	uint32_t interval;
	size_t len;
	rc_xdr x;
	void *rmsg = NULL;
	size_t rlen = 0;
	rc_status r;
	int e = 0;
	size_t big = 0; /* a call over max_msg: its size (done:) */
	bool ran_out = false; /* a datagram's receive waited its whole interval (general:) */

	/* the reader's role taken and eligibility checked by the caller; a datagram's step has
	 * no time yet (now 0: rc__call) and keeps no last_io (only streams are probed) */
	if (!c->dgram)
		atomic_store_explicit(&c->last_io, now, memory_order_relaxed);
	if (__builtin_expect(c->fastbuf != NULL, 0) && b->max + RC_TP_HEADROOM >= c->fastcap) {
		/* a message that outgrew the stack last time: reuse its heap buffer */
		b->data = c->fastbuf;
		b->cap = c->fastcap;
		b->heap = true;
		c->fastbuf = NULL;
	}
	p->xid = atomic_fetch_add_explicit(&c->xid, 1, memory_order_relaxed) + 1;
	/* the header template; every buffer has room for it (stack: RC__STACK_MSG bytes). A
	 * template is never rewritten, and one replaced is freed only by a holder of the role. */
	h = b->data + RC_TP_HEADROOM;
	rc__hdr_put(h, hdr, proc); /* the engine's header writer */
	rc__put32(h, p->xid);
	if (traced)
		c->trace(c->trace_arg, RC_TP_CALL_BEGIN, p->xid, t0);
	if (xargs == rc_xdr_void) {
		msg = h; /* nothing to encode after the header (b may be the kept heap buffer) */
		len = hdr->len;
	} else {
		/* big opaque/string data goes from the caller's memory on a stream: the caller
		 * waits for this call, so its arguments outlive the send (sendv) */
		b->gather = tp->vt->sendv != NULL;
		rc__encbuf_xdr_at(b, &x, hdr->len);
		if (!xargs(&x, (void *)args)) {
			*st = b->toolarge ? RC_MSGTOOLARGE : RC_CANTENCODEARGS;
			goto done;
		}
		msg = rc__encbuf_msg(b); /* the buffer may have moved to the heap */
		len = (size_t)(x.x_pos - x.x_base);
	}
	if (__builtin_expect(len + (b->gather ? b->gbytes : 0) > c->max_msg, 0)) {
		big = len + (b->gather ? b->gbytes : 0);
		*st = RC_MSGTOOLARGE;
		goto done;
	}
	if (traced)
		rc__trace(c, RC_TP_ENCODED, p->xid);
	/* a stream's other senders -- a started call of another thread's, the reply to a call
	 * the client serves (rc__inq_reply), the flush of a corked batch -- send under smu, and
	 * may start after the idle check above: this send goes only while none of them does
	 * (fsending), or under smu if one does; a datagram needs neither */
	{
		bool locked = false;
		if (!c->dgram) {
			atomic_store(&c->fsending, true);
			if (__builtin_expect(atomic_load(&c->ssending), 0)) {
				atomic_store(&c->fsending, false);
				pthread_mutex_lock(&c->smu);
				locked = true;
			}
		}
		r = !b->gather || b->nseg == 0 ? tp->vt->send(tp, msg, len, NULL, RC_TPF_REPLY_NEXT)
		                               : tp->vt->sendv(tp, msg, len, b->seg, b->nseg, 0);
		if (locked)
			pthread_mutex_unlock(&c->smu);
		else if (!c->dgram)
			atomic_store_explicit(&c->fsending, false, memory_order_release);
	}
	if (traced && r == RC_OK)
		rc__trace(c, RC_TP_SENT, p->xid);
	if (__builtin_expect(r != RC_OK, 0)) {
		e = errno;
		rc__err_clear(&p->err);
		if (r == RC_TOOMANY) { /* refused for now (see rc__start): the connection stays */
			rc__role_drop(c);
			p->err.sys_errno = e;
			snprintf(p->err.detail, sizeof(p->err.detail), "%s", rc__tp_detail());
			*st = RC_TOOMANY;
			return true;
		}
		rc__fast_broken(c, RC_CANTSEND, e);
		*st = rc__send_status(p, r, e);
		return true;
	}
	interval = c->dgram && c->retry_ms < p->retry_ms ? c->retry_ms : p->retry_ms;
	if (__builtin_expect(tp->rcvtimeo_ms != (int)interval, 0))
		rc__tp_set_rcvtimeo(tp, (int)interval);
	if (p->xres != rc_xdr_void && tp->vt->recv_head != NULL) {
		/* a stream: a big reply's results may decode while it comes (rc__fast_pull) */
		size_t rest;
		r = tp->vt->recv_head(tp, &rmsg, &rlen, &rest, 0);
		if (__builtin_expect(r == RC_OK && rest > 0, 0)) {
			int k = rc__fast_pull(c, p, tp, &rmsg, &rlen, rest,
			                      now + (int64_t)p->retry_ms * 1000000, traced, st);
			if (k == 1)
				goto decoded;
			if (k == 2)
				return true;
		}
	} else {
		r = tp->vt->recv(tp, &rmsg, &rlen, NULL, 0);
	}
	/* (shorter, or a call: the engine) */
	if (__builtin_expect(r == RC_OK && rlen >= 24 && rc__get32(rmsg) == p->xid &&
	                         rc__get32((unsigned char *)rmsg + 4) == RC__REPLY,
	                     1)) {
		if (traced)
			rc__trace(c, RC_TP_REPLY, p->xid);
		*st = rc__decode(c, p, rmsg, rlen, false);
		if (__builtin_expect(*st == RC_BADREPLY, 0) && c->dgram)
			goto general; /* mangled datagram: wait for the real reply */
	decoded:
		if (traced)
			rc__trace(c, RC_TP_DECODED, p->xid);
		/* done: keep the buffer (a heap one: the stack's usual one stays), give up the
		 * reader's role without the lock (see rc_client.reading: the atomic store
		 * publishes fastbuf too) */
		bool ahead = __builtin_expect(c->srv != NULL, 0) && rc__tp_ahead(tp);
		if (b->heap)
			rc__keep_buffer(c, b, len);
		rc__role_drop(c);
		if (__builtin_expect(ahead, 0))
			rc__serve_ahead(c); /* the peer's calls read with the reply */
		return true;
	}
	if (r == RC_CANTRECV || r == RC_TOOMANY)
		e = errno;
	else if (r == RC_AGAIN && (errno == EAGAIN || errno == EWOULDBLOCK))
		ran_out = true;
general:
	if (c->dgram) {
		/* the step read no clock: the call began about now, less the receive's wait if it
		 * ran out (interval ms). As Sun's clnt_udp, which counts its waits, a receive that
		 * ended early (a signal, another call's late reply) is not charged: such a call's
		 * timeout may run up to one retry interval long. */
		now = rc__now() - (ran_out ? (int64_t)interval * 1000000 : 0);
	}
	/* register the call as in flight and let the engine finish it */
	rc__call_init(p);
	rc__err_clear(&p->err);
	p->deadline = now + (int64_t)p->retry_ms * 1000000; /* retry_ms: the call's timeout */
	pthread_mutex_lock(&c->mu);
	p->msg = msg;
	p->msglen = len;
	rc__register(c, p, now, interval);
	rc__after_recv(c, r, rmsg, rlen, e);
	return false;
done:
	rc__err_clear(&p->err);
	if (*st == RC_MSGTOOLARGE) /* which limit, both sizes (big 0: the encoding stopped); hdr
	                              lives while the role is held */
		rc__toolarge(c, p, big, hdr->len, xargs, args);
	rc__role_drop(c);
	return true;
}

/*
 * Take the reader's role for a fast step if nobody holds it, and keep it if the client is
 * idle: no call in flight, no callbacks waiting, no output queued, a connected socket (not an
 * in-process transport), no spinning, and a stream used within RC__IDLE_CHECK_NS or, if
 * older, not closed by the peer meanwhile (one probe; a closed one goes to the engine, which
 * reconnects). The fields are read without the lock: a call another thread registers
 * meanwhile finds the role taken and waits as a follower, and its reply, if it comes first,
 * sends this call down the engine, which hands it over. Returns true with the role held.
 */
static inline __attribute__((always_inline)) bool rc__fast_eligible(rc_client *c, int64_t now)
{
	bool idle = false;
	rc_tp *tp;

	if (__builtin_expect(!atomic_compare_exchange_strong(&c->reading, &idle, true), 0))
		return false;
	tp = __atomic_load_n(&c->tp, __ATOMIC_ACQUIRE);
	if (__builtin_expect(__atomic_load_n(&c->npending, __ATOMIC_RELAXED) == 0 &&
	                         __atomic_load_n(&c->doneq, __ATOMIC_RELAXED) == NULL &&
	                         tp != NULL && !(tp->props & RC_TPP_SYNC) &&
	                         atomic_load_explicit(&c->nofast, memory_order_relaxed) == 0 &&
	                         !atomic_load_explicit(&c->queued, memory_order_relaxed),
	                     1) &&
	    (c->dgram ||
	     now - atomic_load_explicit(&c->last_io, memory_order_relaxed) <= RC__IDLE_CHECK_NS ||
	     !tp->vt->hung_up(tp)))
		return true;
	rc__role_drop(c);
	return false;
}

/* The end of a blocking call p sealed by a flavor (status st): its sealed message and its
 * reference go. True when the call was denied for a credential problem and the flavor
 * renewed itself (cl_refresh), fewer than RC__RENEWALS times so far (*refreshed counts them):
 * the call goes again. */
static __attribute__((noinline)) bool rc__unseal(rc_async *p, rc_status st, unsigned *refreshed)
{
	rc__cl_auth *a = p->auth;
	bool again = st == RC_AUTHERROR && *refreshed < RC__RENEWALS && a->fl->cl_refresh != NULL &&
	             p->err.auth_stat != RC__AUTH_INVALIDRESP && a->fl->cl_refresh(a, p->err.auth_stat);

	free(p->wire);
	p->wire = NULL;
	rc__cl_auth_unref(a);
	p->auth = NULL;
	*refreshed += again;
	return again;
}

/*
 * Whether a blocking call that ended with st (p: its xid) goes again (rc_client_set_resend):
 * on a stream client that asked for it, when the connection broke under the call -- it was
 * sent, or may have been, and no reply came (RC_CANTRECV), or its send found the connection
 * broken (RC_CANTSEND) -- and then, once it is being sent again, when a sending's wait ran out
 * (RC_TIMEDOUT: a server drops the copy of a call still running); at most RC__RESENDS times,
 * within one timeout from the break (by: 0 the first time). Returns the time by which it must
 * be answered (non-zero: send it again), or 0; the engine then reconnects and sends it with the same xid, so a server caching
 * stream calls by address without the port (rc_server_set_drc_streams) answers it from its
 * cache if the first sending ran.
 */
#define RC__RESENDS 8u
static __attribute__((noinline, cold)) int64_t rc__resend_due(rc_client *c, rc_status st,
                                                              rc_async *p, uint32_t timeout_ms,
                                                              int64_t by)
{
	if (!c->resend || c->dgram || p->xid == 0)
		return 0;
	if (st == RC_TIMEDOUT ? by == 0 : st != RC_CANTRECV && st != RC_CANTSEND)
		return 0;
	if (by == 0) {
		by = rc__now() + (int64_t)timeout_ms * 1000000;
		p->resends = 0;
	}
	if (p->resends >= RC__RESENDS)
		return 0;
	if (p->resends > 0 && st == RC_CANTSEND) { /* reconnecting failed: a pause, doubling */
		int64_t pause = (int64_t)50000000 << (p->resends - 1), left = by - rc__now();
		if (pause > left)
			pause = left;
		if (pause > 0)
			nanosleep(&(struct timespec){(time_t)(pause / 1000000000),
			                             (long)(pause % 1000000000)}, NULL);
	}
	if (rc__now() >= by)
		return 0;
	p->resends++;
	return by;
}

/*
 * A blocking call: start, then wait -- the fast step first when the client is idle, else
 * rc__start and rc__drive, the engine started calls use. Inlined twice (rc_call): untraced,
 * with no trace code at all, and traced, reporting each step to the client's trace function.
 */
static inline __attribute__((always_inline)) rc_status
rc__call(rc_client *clnt, uint32_t proc, rc_xdrproc xargs, const void *args, rc_xdrproc xres,
         void *res, uint32_t timeout_ms, const bool traced)
{
	_Alignas(16) unsigned char stack[RC__STACK_MSG]; /* (Sun XDR_INLINE: int32_t stores) */
	rc__encbuf b;
	rc_async p;
	size_t len;
	rc_status st;
	int64_t now;
	uint64_t t0 = traced ? rc__trace_clock() : 0;
	unsigned refreshed;
	int64_t resend_by = 0; /* sent again after the stream broke: by when (rc__resend_due) */

	/* p.err is cleared only on the way to a failure (rc__err_clear): a call that succeeds in
	 * the fast step never touches it (rc__set_lastok) */
	p.xres = xres ? xres : rc_xdr_void;
	p.res = res;
	p.retry_ms = timeout_ms;
	xargs = xargs ? xargs : rc_xdr_void;
	rc__encbuf_init(&b, stack, sizeof(stack), clnt->max_msg);

	/* a datagram's fast step reads no clock: it needs the time only if it hands the call to
	 * the engine (rc__fast) -- a clock read is a tenth of the library's share of a call */
	now = clnt->dgram ? 0 : rc__now();
	if (__builtin_expect(rc__fast_eligible(clnt, now), 1)) {
		if (__builtin_expect(rc__fast(clnt, &p, &b, proc, xargs, args, &st, now, traced, t0),
		                     1))
			goto out;
		/* p is in flight; the lock is held */
	} else {
		refreshed = 0;
		if (clnt->dgram)
			now = rc__now();
	again:
		if (b.data == NULL) /* (sent before, its buffer kept by the client: rc__keep_buffer) */
			rc__encbuf_init(&b, stack, sizeof(stack), clnt->max_msg);
		p.deadline = now + (int64_t)timeout_ms * 1000000;
		rc__call_init(&p);
		if (__builtin_expect(resend_by != 0, 0)) {
			/* a wait for the reply of retry_ms, doubling, within the call's time: a
			 * server that drops the copy of a call still running gets it again */
			int64_t wait = (int64_t)clnt->retry_ms * 1000000
			               << (p.resends < 6 ? p.resends - 1 : 5);
			p.deadline = now + wait < resend_by ? now + wait : resend_by;
			p.resend_xid = p.xid;
		} else {
			p.xid = 0; /* (none until rc__start gives one: nothing sent to send again) */
		}
		rc__err_clear(&p.err);
		st = rc__encode(clnt, &p, &b, proc, xargs, args, &len);
		if (traced) {
			p.tr_begin = t0;
			p.tr_encoded = rc__trace_clock();
		}
		if (st == RC_OK)
			st = rc__start(clnt, &p, rc__encbuf_msg(&b), len, 0);
		if (st != RC_OK)
			goto ended;
		pthread_mutex_lock(&clnt->mu);
	}
	rc__drive(clnt, &p, INT64_MAX);
	rc__unlink(clnt, &p);
	if (__builtin_expect(clnt->srv != NULL, 0))
		rc__serve_ahead_locked(clnt); /* the peer's calls read with the reply */
	{
		bool idle = false;
		if (b.heap && atomic_compare_exchange_strong(&clnt->reading, &idle, true)) {
			rc__keep_buffer(clnt, &b, len);
			rc__role_drop_locked(clnt);
		}
	}
	pthread_mutex_unlock(&clnt->mu);
	st = p.st;
ended: /* (the engine's calls: the fast step's never carry a flavor's seal) */
	if (__builtin_expect(p.auth != NULL, 0) && rc__unseal(&p, st, &refreshed)) {
		now = rc__now(); /* the flavor renewed its credentials: once more, from the start */
		goto again;
	}
out:
	if (__builtin_expect(st == RC_OK, 1)) {
		rc__set_lastok(clnt);
	} else if ((resend_by = rc__resend_due(clnt, st, &p, timeout_ms, resend_by)) != 0) {
		now = rc__now();
		refreshed = 0;
		goto again; /* the same call, the same xid, on a new connection */
	} else { /* every way to a failure cleared p.err before filling it in */
		p.err.status = st;
		rc__set_lasterr(clnt, &p.err);
	}
	rc__encbuf_free(&b);
	return st;
}

static __attribute__((noinline)) rc_status rc__call_traced(rc_client *clnt, uint32_t proc,
                                                            rc_xdrproc xargs, const void *args,
                                                            rc_xdrproc xres, void *res,
                                                            uint32_t timeout_ms)
{
	return rc__call(clnt, proc, xargs, args, xres, res, timeout_ms, true);
}

rc_status rc_call_ex(rc_client *clnt, uint32_t proc, rc_xdrproc xargs, const void *args,
                     rc_xdrproc xres, void *res, const rc_callopts *opts)
{
	uint32_t t;

	if (clnt == NULL || (opts != NULL && opts->timeout_ms > RC_MAX_TIMEOUT_MS))
		return RC_INVAL;
	t = rc__call_timeout(clnt, opts);
	if (__builtin_expect(clnt->trace != NULL, 0))
		return rc__call_traced(clnt, proc, xargs, args, xres, res, t);
	return rc__call(clnt, proc, xargs, args, xres, res, t, false);
}

rc_status rc_call(rc_client *clnt, uint32_t proc, rc_xdrproc xargs, const void *args,
                  rc_xdrproc xres, void *res)
{
	if (clnt == NULL)
		return RC_INVAL;
	if (__builtin_expect(clnt->trace != NULL, 0))
		return rc__call_traced(clnt, proc, xargs, args, xres, res, clnt->timeout_ms);
	return rc__call(clnt, proc, xargs, args, xres, res, clnt->timeout_ms, false);
}

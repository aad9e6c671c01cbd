/*
 * The client's engine (common.h): calls in flight under their xids, completion (once),
 * failures, replies and their decoding, timers and retransmission, reading (one reader at a
 * time), and sending: every call is started here (rc__start) and driven here (rc__drive).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "runtime/client/engine.h"

/* ---- completion ------------------------------------------------------------------------- */

/* common.h */
void rc__unlink(rc_client *c, rc_async *p)
{
	if (p->state != RC__CALL_INFLIGHT)
		return;
	if (p->prev)
		p->prev->next = p->next;
	else
		c->pending = p->next;
	if (p->next)
		p->next->prev = p->prev;
	p->next = p->prev = NULL;
	p->state = RC__CALL_IDLE;
	if (p->windowed) { /* its place in the credentials' window frees */
		p->windowed = false;
		atomic_fetch_sub(&p->auth->inflight, 1);
	}
	__atomic_store_n(&c->npending, c->npending - 1, __ATOMIC_RELAXED);
}

/* common.h */
void rc__register(rc_client *c, rc_async *p, int64_t now, uint32_t retry_ms)
{
	p->retry_ms = retry_ms;
	p->next_retry = now + (int64_t)retry_ms * 1000000;
	p->st = RC_INPROGRESS;
	p->clnt = c;
	p->next = c->pending;
	p->prev = NULL;
	if (c->pending)
		c->pending->prev = p;
	c->pending = p;
	p->state = RC__CALL_INFLIGHT;
	__atomic_store_n(&c->npending, c->npending + 1, __ATOMIC_RELAXED);
}

/* common.h */
void rc__handle_link(rc_client *c, rc_async *p)
{
	p->handle = true;
	p->hprev = NULL;
	p->hnext = c->handles;
	if (c->handles)
		c->handles->hprev = p;
	c->handles = p;
}

/* common.h */
void rc__handle_unlink(rc_client *c, rc_async *p)
{
	if (!p->handle)
		return;
	if (p->hprev)
		p->hprev->hnext = p->hnext;
	else
		c->handles = p->hnext;
	if (p->hnext)
		p->hnext->hprev = p->hprev;
	p->hnext = p->hprev = NULL;
	p->handle = false;
}

/* common.h */
void rc__free_call(rc_async *p)
{
	free(p->msgblock);
	free(p->wire);
	rc__cl_auth_unref(p->auth);
	free(p);
}

/*
 * A transmission of p, whose credentials are of a flavor that is not plain: msg[0..len) is the
 * call as encoded (its first 24 bytes, xid set, then the arguments); the flavor writes the
 * credential and verifier with a fresh number and wraps the arguments, into p->wire (the last
 * transmission's is freed). The numbers of the last RC__CL_SEQS transmissions stay in p->seqs
 * for the reply's check. Returns the sealed message, or NULL (p->err says why when it can).
 */
static unsigned char *rc__seal(rc_client *c, rc_async *p, const unsigned char *msg, size_t len)
{
	_Alignas(16) unsigned char stack[1024];
	rc__cl_auth *a = p->auth;
	rc__encbuf b;
	rc_xdr x;
	unsigned char *h;
	uint32_t seq;

	rc__encbuf_init(&b, stack, sizeof(stack), c->max_msg);
	rc__encbuf_xdr(&b, &x);
	if ((h = rc_xdr_inline(&x, 24)) == NULL)
		goto fail;
	memcpy(h, msg, 24);
	if (!a->fl->cl_marshal(a, h, &x, &seq, &p->err))
		goto fail;
	if (a->fl->cl_wrap != NULL ? !a->fl->cl_wrap(a, seq, msg + 24, len - 24, &x)
	                           : (len > 24 && !rc_xdr_opaque(&x, (void *)(msg + 24),
	                                                         (uint32_t)(len - 24))))
		goto fail;
	if (p->seqs.n == RC__CL_SEQS) {
		memmove(p->seqs.seq, p->seqs.seq + 1, sizeof(p->seqs.seq[0]) * (RC__CL_SEQS - 1));
		p->seqs.n--;
	}
	p->seqs.seq[p->seqs.n++] = seq;
	free(p->wire);
	p->wire = NULL;
	p->wirelen = rc_xdr_getpos(&x);
	if (b.heap) {
		p->wire = b.data;
		rc__encbuf_detach(&b);
	} else if ((p->wire = malloc(RC_TP_HEADROOM + p->wirelen)) != NULL) {
		memcpy(p->wire, b.data, RC_TP_HEADROOM + p->wirelen);
	} else {
		return NULL;
	}
	return p->wire + RC_TP_HEADROOM;
fail:
	rc__encbuf_free(&b);
	return NULL;
}

/* common.h */
void rc__complete(rc_client *c, rc_async *p, rc_status st)
{
	if (p->state == RC__CALL_DONE)
		return;
	if (p->renewing) { /* its renewer ends it (rc__renew) */
		if (p->renew_st == RC_OK)
			p->renew_st = st;
		return;
	}
	rc__unlink(c, p);
	p->st = st;
	p->err.status = st;
	p->state = RC__CALL_DONE;
	if (p->has_cb) {
		p->next = NULL;
		if (c->doneq_tail)
			c->doneq_tail->next = p;
		else
			__atomic_store_n(&c->doneq, p, __ATOMIC_RELAXED);
		c->doneq_tail = p;
	} else if (p->released) {
		if (!p->starting) /* (else rc__start frees it as it returns) */
			rc__free_call(p);
		return;
	}
	rc__wake(c);
}

/* What a call that lost its connection to an orderly close says in its detail: that, and its
 * record's size n when it is known (0: not) -- all a client can know of a server that closes the
 * connection on a record over its max_record (RFC 5531 gives it no way to say so). */
static void rc__closed_why(rc_async *p, size_t n)
{
	if (n == 0)
		snprintf(p->err.detail, sizeof(p->err.detail), "the server closed the connection");
	else
		snprintf(p->err.detail, sizeof(p->err.detail),
		         "the server closed the connection after this call's record of %zu bytes, "
		         "unanswered (as a server does on a record over its max_record)", n);
}

/* common.h */
rc_status rc__broken_status(rc_async *p, rc_status st, int e)
{
	p->err.sys_errno = st == RC_TIMEDOUT ? 0 : e;
	if (st == RC_CANTRECV && e == 0) /* end of stream: no errno to tell it */
		rc__closed_why(p, 0); /* (the fast step's: its size is not kept) */
	if (e != EPROTO)
		return st;
	snprintf(p->err.detail, sizeof(p->err.detail), "%s", rc__tp_detail());
	return RC_TLSFAILED;
}

/* common.h */
rc_status rc__send_status(rc_async *p, rc_status r, int e)
{
	if (r == RC_MSGTOOLARGE || r == RC_NOMEM) {
		p->err.sys_errno = e;
		return r;
	}
	return rc__broken_status(p, RC_CANTSEND, e);
}

/* A write that keeps nothing: rc__call_size's record stream only counts. */
static bool rc__count_write(void *ctx, const void *buf, size_t len)
{
	(void)ctx, (void)buf, (void)len;
	return true;
}

/* The size of a call whose arguments xargs(args) outgrew the encode buffer's cap: hdrlen and
 * the arguments encoded again through a record stream that only counts (0: they do not
 * encode). A failure's path only. */
static size_t rc__call_size(size_t hdrlen, rc_xdrproc xargs, const void *args)
{
	unsigned char buf[2048];
	rc_xdr x;

	if (rc_xdrrec_create(&x, buf, sizeof(buf), rc__count_write, NULL) != RC_OK ||
	    !xargs(&x, (void *)args))
		return 0;
	return hdrlen + rc_xdr_getpos(&x);
}

/* common.h */
__attribute__((noinline, cold)) rc_status
rc__toolarge(const rc_client *c, rc_async *p, size_t len, size_t hdrlen, rc_xdrproc xargs,
             const void *args)
{
	size_t limit = c->max_msg;
	bool client = limit >= c->max_record;
	char size[48];

	if (len == 0 && xargs != NULL)
		len = rc__call_size(hdrlen, xargs, args);
	if (len != 0)
		snprintf(size, sizeof(size), "is %zu bytes", len);
	else
		snprintf(size, sizeof(size), "is larger");
	snprintf(p->err.detail, sizeof(p->err.detail),
	         "the call's record %s, over %s of %zu bytes%s", size,
	         client ? "this client's limit" : "the transport's limit", limit,
	         client ? " (rc_client_set_max_message)"
	                : c->dgram ? " (a UDP datagram: use tcp: or unix:)" : "");
	return RC_MSGTOOLARGE;
}

/* common.h */
void rc__fail_all(rc_client *c, rc_status st, int err)
{
	if (err == EPROTO && st != RC_MSGTOOLARGE)
		st = RC_TLSFAILED;
	while (c->pending) {
		rc_async *p = c->pending;
		c->pending->err.sys_errno = err;
		if (err == EPROTO || err == EDEADLK || st == RC_TOOMANY)
			snprintf(c->pending->err.detail, sizeof(c->pending->err.detail), "%s",
			         rc__tp_detail());
		else if (err == 0 && st == RC_CANTRECV)
			rc__closed_why(p, p->auth && p->wire ? p->wirelen : p->msglen);
		else if (st == RC_MSGTOOLARGE) /* (the stream said how large, over which cap) */
			snprintf(p->err.detail, sizeof(p->err.detail),
			         "the reply's %s: this client's max message "
			         "(rc_client_set_max_message)",
			         rc__tp_detail()[0] ? rc__tp_detail() : "record is over the cap");
		rc__complete(c, c->pending, st);
	}
}

/* common.h */
void rc__disconnect(rc_client *c)
{
	if (c->tp != NULL && !c->dgram) {
		pthread_mutex_lock(&c->smu);
		c->tp->vt->close(c->tp);
		__atomic_store_n(&c->tp, NULL, __ATOMIC_RELEASE);
		atomic_store(&c->queued, false);
		pthread_mutex_unlock(&c->smu);
	}
}

/*
 * A stream broke under a thread that is not the reader (under c->mu): close it, unless a
 * reader is inside its recv (a blocking call's fast path uses the connection without the
 * lock) -- then shut it down, so that recv fails and the reader closes it itself.
 */
static void rc__break_stream(rc_client *c)
{
	if (atomic_load(&c->reading) && c->tp != NULL)
		c->tp->vt->shutdown(c->tp, true);
	else
		rc__disconnect(c);
}

/* common.h */
void rc__run_callbacks(rc_client *c)
{
	for (;;) {
		rc_async *p;
		pthread_mutex_lock(&c->mu);
		p = c->doneq;
		if (p && p->starting)
			p = NULL; /* its starter still holds it: its callback runs on the next pass */
		if (p) {
			__atomic_store_n(&c->doneq, p->next, __ATOMIC_RELAXED);
			if (c->doneq == NULL)
				c->doneq_tail = NULL;
		}
		pthread_mutex_unlock(&c->mu);
		if (p == NULL)
			return;
		if (p->st == RC_OK) /* rc_client_geterr in the callback: this call's */
			rc__set_lastok(c);
		else
			rc__set_lasterr(c, &p->err);
		p->cb(p, p->st, p->udata);
		rc__free_call(p);
	}
}

/* ---- replies ---------------------------------------------------------------------------- */

/* Whether p, just denied with RC_AUTHERROR, is a started call whose credentials' flavor can
 * renew them after this auth_stat, and that was renewed fewer than RC__RENEWALS times (under
 * c->mu). */
static bool rc__renewable(const rc_async *p)
{
	return (p->handle || p->has_cb) && p->msgblock != NULL && p->renewed < RC__RENEWALS &&
	       p->auth != NULL &&
	       p->auth->fl->cl_refresh != NULL &&
	       (p->err.auth_stat == RC__AUTH_CREDPROBLEM || p->err.auth_stat == RC__AUTH_CTXPROBLEM);
}

/* common.h */
rc_status rc__read_all(rc_client *c)
{
	rc_status r = RC_OK;

	for (int i = 0; i < 1024 && r == RC_OK; i++) {
		r = rc__read(c, 0, RC_TPF_DONTWAIT);
		if (c->ninq >= RC__INQ_MAX / 4)
			rc__serve_inq(c, rc__send_failed); /* the peer's calls, before more are read */
	}
	return r;
}

/* Handle one incoming message (under c->mu): decode it into the call its xid names and
 * complete that call; a call from the peer (stream) is queued to be served (rc__serve_inq);
 * anything else (stale, foreign, too short) is dropped. */
static void rc__goaway(rc_client *c, const unsigned char *msg, size_t len);

static void rc__handle(rc_client *c, const unsigned char *msg, size_t len)
{
	rc_async *p;
	rc_status st;
	uint32_t xid;

	if (len < 12)
		return; /* too short to be a reply: ignore */
	if (rc__get32(msg + 4) == RC__CALL) {
		if (!c->dgram)
			rc__inq_add(c, msg, len); /* the peer calls us: served outside the lock */
		return;
	}
	xid = rc__get32(msg);
	for (p = c->pending; p != NULL; p = p->next)
		if (p->xid == xid)
			break;
	if (p == NULL) {
		if (xid == c->notice_xid && xid != 0)
			rc__goaway(c, msg, len); /* the server drains (rc_client_set_failover) */
		return; /* stale (timed out, cancelled) or foreign: drop */
	}
	if (c->trace != NULL)
		rc__trace(c, RC_TP_REPLY, xid);
	st = rc__decode(c, p, msg, len, true);
	if (st == RC_BADREPLY && c->dgram)
		return; /* keep waiting for the real reply */
	if (c->trace != NULL)
		rc__trace(c, RC_TP_DECODED, xid);
	if (__builtin_expect(st == RC_AUTHERROR, 0) && rc__renewable(p)) {
		/* a started call denied for a credential problem (up to RC__RENEWALS times): it
		 * waits for its credentials to be renewed outside the lock, then goes again
		 * (rc__renew) */
		rc__unlink(c, p);
		p->renewing = true;
		p->renewed++;
		p->renew_why = p->err.auth_stat;
		p->renew_st = RC_OK;
		p->next = c->renew;
		c->renew = p;
		rc__wake(c);
		return;
	}
	rc__complete(c, p, st);
}

/* common.h */
int64_t rc__timers(rc_client *c, int64_t now)
{
	int64_t next = INT64_MAX;
	rc_async *p, *n;
	bool expired = false;

	for (p = c->pending; p != NULL; p = n) {
		n = p->next;
		if (now >= p->deadline) {
			rc__complete(c, p, RC_TIMEDOUT);
			expired = true;
			continue;
		}
		if (c->dgram && now >= p->next_retry && c->tp != NULL) {
			/* a flavor that numbers transmissions: sealed again, with a fresh number */
			unsigned char *m = p->auth == NULL ? p->msg : rc__seal(c, p, p->msg, p->msglen);
			size_t mlen = p->auth == NULL ? p->msglen : p->wirelen;
			if (m != NULL &&
			    c->tp->vt->send(c->tp, m, mlen, NULL, RC_TPF_DONTWAIT) == RC_CANTSEND &&
			    errno == ECONNREFUSED) {
				/* ICMP: nothing listens there. Each failed send clears the error the
				 * previous one raised, so act on it here: every call fails now. */
				rc__fail_all(c, RC_CANTRECV, ECONNREFUSED);
				return now;
			}
			p->retry_ms = p->retry_ms * 2 > RC__MAX_RETRY_MS ? RC__MAX_RETRY_MS
			                                                 : p->retry_ms * 2;
			p->next_retry = now + (int64_t)p->retry_ms * 1000000;
		}
		if (p->deadline < next)
			next = p->deadline;
		if (c->dgram && p->next_retry < next)
			next = p->next_retry;
	}
	/* The last call on a stream gave up with part of a record read: the rest belongs to a
	 * call nobody waits for, and could hold the next one up for long (a huge or endless
	 * reply). Start the next call on a fresh connection instead. */
	if (expired && !c->dgram && c->pending == NULL && !atomic_load(&c->reading) &&
	    c->tp != NULL && c->tp->vt->buffered(c->tp) > 0)
		rc__disconnect(c);
	return next;
}

/* common.h */
void rc__after_recv(rc_client *c, rc_status st, void *msg, size_t len, int e)
{
	if (st == RC_OK) {
		c->last_io = rc__now();
		rc__handle(c, msg, len);
	} else if (st == RC_CANTRECV && e == EDEADLK) {
		/* a back channel refused to wait on the one thread that reads its replies: the
		 * calls fail, saying why, and the connection stays */
		rc__fail_all(c, RC_CANTRECV, e);
	} else if (st == RC_TOOMANY) {
		/* a back channel whose server stopped reading at a limit: the calls in flight
		 * could get no reply; they fail, saying which limit, and the connection stays */
		rc__fail_all(c, RC_TOOMANY, e);
	} else if (st == RC_CLOSED || st == RC_CANTRECV || st == RC_MSGTOOLARGE) {
		/* (a TLS failure, errno EPROTO, fails them with RC_TLSFAILED: rc__fail_all) */
		if (!c->dgram) {
			rc__fail_all(c, st == RC_MSGTOOLARGE ? RC_MSGTOOLARGE : RC_CANTRECV, e);
			rc__disconnect(c);
		} else if (c->pending) {
			/* ICMP unreachable on a connected UDP socket: the server is not there. */
			rc__fail_all(c, RC_CANTRECV, e);
		}
	}
	/* the role goes last: msg is the transport's until the next receive, and a fast step
	 * takes the role without c->mu -- its receive would reuse msg under rc__handle */
	c->reading = false;
	rc__wake(c);
}

/* c's receive batch, made on first use (the reader's role held); NULL when memory is short. */
static rc__rxb *rc__rxb_get(rc_client *c)
{
	rc__rxb *b = c->rxb;

	if (b != NULL)
		return b;
	if ((b = malloc(sizeof(*b) + (size_t)RC_TP_BATCH * RC__DGRAM_SLOT)) == NULL)
		return NULL;
	b->want = 2;
	for (unsigned k = 0; k < RC_TP_BATCH; k++) {
		b->v[k].buf = b->bytes + (size_t)k * RC__DGRAM_SLOT;
		b->v[k].cap = RC__DGRAM_SLOT;
	}
	return c->rxb = b;
}

/*
 * The reader's non-blocking read on a datagram client that can batch: every reply waiting,
 * up to the batch's size, with one system call, each handled under c->mu (entered without
 * it, left with it held, as rc__read). Returns the receive's status, except RC_AGAIN after
 * replies were handled when another read would find none: the batch came back short of
 * what it asked (the socket was empty) or no call waits for a reply any more -- the caller
 * stops reading without a receive that says EAGAIN.
 */
static rc_status rc__read_batch(rc_client *c, rc_tp *tp, rc__rxb *b)
{
	unsigned got = 0, want = b->want;
	rc_status st = tp->vt->recv_batch(tp, b->v, want, &got, RC_TPF_DONTWAIT);
	int e = st == RC_CANTRECV ? errno : 0;

	pthread_mutex_lock(&c->mu);
	if (st != RC_OK) {
		rc__after_recv(c, st, NULL, 0, e);
		return st;
	}
	b->want = 2 * got > RC_TP_BATCH ? RC_TP_BATCH : 2 * got;
	for (unsigned k = 0; k + 1 < got; k++)
		rc__handle(c, b->v[k].buf, b->v[k].len);
	rc__after_recv(c, st, b->v[got - 1].buf, b->v[got - 1].len, 0); /* the last; wakes */
	if (got < want || c->npending == 0)
		return RC_AGAIN; /* drained (pieces still held: rc__tp_ahead says so to the loop) */
	return st;
}

/* common.h */
rc_status rc__read(rc_client *c, int64_t wake, unsigned flags)
{
	rc_tp *tp = c->tp;
	rc_status st;
	void *msg;
	size_t len;
	int e;

	bool idle = false;

	if (tp == NULL || !atomic_compare_exchange_strong(&c->reading, &idle, true))
		return RC_AGAIN;
	if (c->retired != NULL)
		rc__free_retired(c); /* the role held: no fast path is copying a template */
	pthread_mutex_unlock(&c->mu);
	if (flags == RC_TPF_DONTWAIT && c->dgram && tp->vt->recv_batch != NULL) {
		rc__rxb *b = rc__rxb_get(c);
		if (b != NULL)
			return rc__read_batch(c, tp, b);
	}
	if (flags == 0) {
		int64_t ns = wake - rc__now();
		int ms = ns <= 0 ? 1 : (int)((ns + 999999) / 1000000);
		if (c->spin_us > 0) {
			int64_t until = rc__now() + (int64_t)c->spin_us * 1000;
			do
				st = tp->vt->recv(tp, &msg, &len, NULL, RC_TPF_DONTWAIT);
			while (st == RC_AGAIN && rc__now() < until);
			if (st != RC_AGAIN)
				goto got;
		}
		if (c->kind->props & RC_TPP_SYNC) {
			/* in-process: the reply is queued by now, or -- if the server deferred the
			 * call -- owed, and this waits for it up to ms; none now and none owed means
			 * none ever */
			rc__tp_set_rcvtimeo(tp, ms);
			st = tp->vt->recv(tp, &msg, &len, NULL, 0);
			if (st == RC_AGAIN && rc__now() < wake)
				st = RC_TIMEDOUT; /* back before wake: nothing owed, no reply ever */
			goto got; /* (RC_AGAIN at wake: the caller looks at its deadlines again) */
		}
		rc__tp_set_rcvtimeo(tp, ms);
	}
	st = tp->vt->recv(tp, &msg, &len, NULL, flags);
got:
	e = st == RC_CANTRECV || st == RC_TOOMANY ? errno : 0;
	pthread_mutex_lock(&c->mu);
	rc__after_recv(c, st, msg, len, e);
	return st;
}

/* ---- sending ---------------------------------------------------------------------------- */

/* common.h */
void rc__dq_flush(rc_client *c)
{
	rc__dq *q = c->dq;
	unsigned sent;

	if (q == NULL || q->n == 0)
		return;
	if (c->tp != NULL)
		(void)c->tp->vt->send_batch(c->tp, q->v, q->n, &sent);
	q->n = 0;
	q->used = 0;
}

/* If c is corked, queue a copy of the datagram msg[0..len) to leave at the uncork, and say
 * true; false (send it now) when not corked, too big for the queue, or memory is short.
 * Started calls only: a blocking call made inside a callback waits for its reply, so its
 * request must go at once. */
static bool rc__dq_add(rc_client *c, const unsigned char *msg, size_t len)
{
	rc__dq *q;
	bool queued = false;

	pthread_mutex_lock(&c->smu);
	if (c->cork > 0 && len <= RC__DQ_BYTES) {
		if ((q = c->dq) == NULL && (q = c->dq = calloc(1, sizeof(*q))) == NULL)
			goto out;
		if (q->n == RC_TP_BATCH || len > RC__DQ_BYTES - q->used)
			rc__dq_flush(c);
		memcpy(q->bytes + q->used, msg, len);
		q->v[q->n].buf = q->bytes + q->used;
		q->v[q->n].len = len;
		q->v[q->n].peer.len = 0; /* the connected server */
		q->n++;
		q->used += (len + 7) & ~(size_t)7;
		if (q->used > RC__DQ_BYTES)
			q->used = RC__DQ_BYTES;
		queued = true;
	}
out:
	pthread_mutex_unlock(&c->smu);
	return queued;
}

/* Wait on c->cv (under c->mu, let go meanwhile), counted among its waiters, until woken or
 * `when` on rc__now()'s clock (c->cv's: CLOCK_MONOTONIC) has passed. */
static void rc__wait_until(rc_client *c, int64_t when)
{
	struct timespec ts = {(time_t)(when / 1000000000), (long)(when % 1000000000)};

	atomic_fetch_add(&c->nwaiters, 1);
	pthread_cond_timedwait(&c->cv, &c->mu, &ts);
	atomic_fetch_sub(&c->nwaiters, 1);
}

/*
 * Make sure a stream is connected (under c->mu; drops it while connecting), and probe one that
 * sat idle, unless a reader holds it. One thread connects, by `deadline`; others wait for it.
 * RC_OK, or the failure (RC_TIMEDOUT, RC_CANTSEND, RC_UNKNOWNHOST, RC_NOMEM) with errno in
 * *err.
 */
static rc_status rc__ensure(rc_client *c, int64_t deadline, int *err)
{
	if (c->tp != NULL && !c->dgram && c->npending == 0 && !atomic_load(&c->reading) &&
	    rc__now() - c->last_io > RC__IDLE_CHECK_NS && c->tp->vt->hung_up(c->tp))
		rc__disconnect(c); /* the server closed it: reconnect below */
	while (c->tp == NULL) {
		rc_status st;
		int e;

		if (c->connecting) { /* another thread connects: wait for it, up to deadline */
			if (rc__now() >= deadline) {
				*err = ETIMEDOUT;
				return RC_TIMEDOUT;
			}
			rc__wait_until(c, deadline);
			continue;
		}
		c->connecting = true;
		pthread_mutex_unlock(&c->mu);
		st = rc__connect(c, deadline);
		e = errno;
		pthread_mutex_lock(&c->mu);
		c->connecting = false;
		pthread_cond_broadcast(&c->cv);
		if (st != RC_OK) {
			*err = e;
			return st;
		}
	}
	return RC_OK;
}

/* common.h */
rc_status rc__encode(rc_client *c, rc_async *p, rc__encbuf *b, uint32_t proc,
                            rc_xdrproc xargs, const void *args, size_t *len)
{
	rc_xdr x;
	unsigned char *h;
	size_t hdrlen;

	rc__encbuf_xdr(b, &x);
	pthread_mutex_lock(&c->mu);
	h = rc_xdr_inline(&x, hdrlen = c->hdr->len);
	if (h != NULL) {
		rc__hdr_put(h, c->hdr, proc);
		if ((p->auth = c->hdr->auth) != NULL) /* sealed at each transmission (rc__seal) */
			rc__cl_auth_ref(p->auth);
	}
	pthread_mutex_unlock(&c->mu);
	if (h == NULL)
		return b->toolarge ? RC_MSGTOOLARGE : RC_NOMEM;
	if (!xargs(&x, (void *)args))
		return b->toolarge ? rc__toolarge(c, p, 0, hdrlen, xargs, args) : RC_CANTENCODEARGS;
	*len = rc_xdr_getpos(&x);
	return RC_OK;
}

/* common.h */
rc_status rc__flush_locked(rc_client *c, int timeout_ms)
{
	rc_tp *tp = c->tp;
	rc_status st;

	if (tp == NULL || tp->vt->flush == NULL)
		return RC_OK;
	rc__smu_send(c);
	st = tp->vt->flush(tp, timeout_ms);
	atomic_store(&c->queued, tp->vt->outq(tp) > 0);
	rc__smu_sent(c);
	return st;
}

/* common.h */
void rc__send_failed(rc_client *c, const rc_tp *tp, int e)
{
	if (!c->dgram && c->tp == tp && tp != NULL) {
		rc__fail_all(c, RC_CANTSEND, e);
		rc__break_stream(c);
	}
}

/*
 * Wait (under c->mu) until p's credentials have room in their window for one more call in
 * flight (rc__cl_auth.window), reading replies meanwhile as a blocking call does -- the
 * thread that starts calls may be the only one that reads -- and serving the calls the peer
 * makes on the connection (rc_client_serve: the replies that free the window may wait on
 * them), or until p's deadline: RC_TIMEDOUT. A started call beyond the window so waits in
 * rc_call_start; a call is never sent numbered past what the server's window takes.
 */
static rc_status rc__window_wait(rc_client *c, rc_async *p)
{
	rc__cl_auth *a = p->auth;

	while (atomic_load(&a->inflight) >= atomic_load(&a->window)) {
		int64_t now = rc__now();
		if (now >= p->deadline) {
			snprintf(p->err.detail, sizeof(p->err.detail),
			         "%s: the server's window of %u calls stayed full", a->fl->name,
			         (unsigned)atomic_load(&a->window));
			return RC_TIMEDOUT;
		}
		if (c->inq != NULL) {
			rc__serve_inq(c, rc__send_failed); /* the peer's calls (lets go of mu while each is served) */
		} else if (!atomic_load(&c->reading) && c->tp != NULL) {
			(void)rc__read(c, p->deadline, 0); /* (lets go of mu while it reads) */
		} else {
			rc__wait_until(c, p->deadline);
		}
		if (c->tp == NULL)
			return RC_CANTRECV; /* the connection broke meanwhile */
	}
	return RC_OK;
}

/*
 * A client that serves the peer's calls (rc_client_serve), about to start p with its stream's
 * output queue past RC__OQ_BLOCK: wait (under c->mu, dropped meanwhile) until the queue is
 * under it, flushing it, and reading and serving the peer's calls as they come -- the peer
 * may be waiting on their replies before it reads what we send -- or until p's deadline:
 * RC_TIMEDOUT with a detail. RC_OK; RC_CANTSEND if the connection broke (its calls failed).
 */
static rc_status rc__outq_wait(rc_client *c, rc_async *p)
{
	for (;;) {
		rc_tp *tp = c->tp;
		rc_status st;
		size_t q;
		int e;

		if (tp == NULL)
			return RC_CANTSEND;
		if (c->inq != NULL) {
			rc__serve_inq(c, rc__send_failed);
			continue;
		}
		pthread_mutex_unlock(&c->mu);
		pthread_mutex_lock(&c->smu);
		st = c->tp == tp ? rc__flush_locked(c, 0) : RC_CANTSEND;
		e = errno;
		q = c->tp == tp ? tp->vt->outq(tp) : 0;
		pthread_mutex_unlock(&c->smu);
		pthread_mutex_lock(&c->mu);
		if (st == RC_CANTSEND) {
			rc__send_failed(c, tp, e);
			return RC_CANTSEND;
		}
		if (q < RC__OQ_BLOCK)
			return RC_OK;
		if (rc__now() >= p->deadline) {
			snprintf(p->err.detail, sizeof(p->err.detail),
			         "the connection's output queue stayed over %zu bytes: the peer reads "
			         "nothing", RC__OQ_BLOCK);
			return RC_TIMEDOUT;
		}
		if (!atomic_load(&c->reading)) {
			/* wait for room to write or for the peer's calls, for at most 10 ms */
			struct pollfd pf = {rc__tp_pollfd(tp), POLLIN | POLLOUT, 0};
			pthread_mutex_unlock(&c->mu);
			(void)poll(&pf, 1, 10);
			pthread_mutex_lock(&c->mu);
			if ((pf.revents & ~POLLOUT) != 0 && c->tp == tp)
				(void)rc__read_all(c);
		} else {
			rc__wait_until(c, rc__now() + 10000000); /* 10 ms, as the poll above */
		}
	}
}

/* common.h */
rc_status rc__start(rc_client *c, rc_async *p, unsigned char *msg, size_t len,
                           unsigned flags)
{
	rc_status st;
	int64_t now = rc__now();
	int err = 0;
	rc_tp *tp;

	pthread_mutex_lock(&c->mu);
	if ((st = rc__ensure(c, p->deadline, &err)) != RC_OK) {
		pthread_mutex_unlock(&c->mu);
		p->err.sys_errno = err;
		snprintf(p->err.detail, sizeof(p->err.detail), "%s", rc__tp_detail());
		return rc__connect_status(st);
	}
	if (len > c->max_msg) {
		pthread_mutex_unlock(&c->mu);
		return rc__toolarge(c, p, len, 0, NULL, NULL);
	}
	if (p->auth != NULL && atomic_load(&p->auth->window) != 0 &&
	    (st = rc__window_wait(c, p)) != RC_OK) {
		pthread_mutex_unlock(&c->mu);
		return st;
	}
	if (__builtin_expect(c->srv != NULL, 0) && !c->dgram && (flags & RC_TPF_DONTWAIT) &&
	    atomic_load(&c->queued) && (st = rc__outq_wait(c, p)) != RC_OK) {
		pthread_mutex_unlock(&c->mu);
		return st;
	}
	p->xid = p->resend_xid != 0 ? p->resend_xid /* (the same call again: rc__call) */
	                            : atomic_fetch_add_explicit(&c->xid, 1, memory_order_relaxed) + 1;
	rc__put32(msg, p->xid);
	p->msg = msg; /* (as encoded: what a retransmission starts from) */
	p->msglen = len;
	if (p->auth != NULL) { /* credentials of a flavor that is not plain: seal it */
		if ((msg = rc__seal(c, p, msg, len)) == NULL) {
			pthread_mutex_unlock(&c->mu);
			if (p->err.detail[0] == '\0')
				snprintf(p->err.detail, sizeof(p->err.detail),
				         "%s could not seal the call", p->auth->fl->name);
			return RC_AUTHERROR;
		}
		len = p->wirelen;
		if (len > c->max_msg) {
			pthread_mutex_unlock(&c->mu);
			return rc__toolarge(c, p, len, 0, NULL, NULL); /* (sealed: its size grew) */
		}
	}
	if (c->trace != NULL && p->tr_begin != 0) {
		c->trace(c->trace_arg, RC_TP_CALL_BEGIN, p->xid, p->tr_begin);
		c->trace(c->trace_arg, RC_TP_ENCODED, p->xid, p->tr_encoded);
	}
	{
		int64_t left = (p->deadline - now) / 1000000;
		rc__register(c, p, now, (int64_t)c->retry_ms < left ? c->retry_ms
		                                                     : (uint32_t)(left > 0 ? left : 0));
	}
	if (p->auth != NULL && atomic_load(&p->auth->window) != 0) {
		p->windowed = true; /* (rc__window_wait found room; mu held since) */
		atomic_fetch_add(&p->auth->inflight, 1);
	}
	p->starting = true;
	tp = c->tp;
	pthread_mutex_unlock(&c->mu);
	if (c->dgram && (flags & RC_TPF_DONTWAIT) && tp->vt->send_batch != NULL &&
	    rc__dq_add(c, msg, len)) {
		st = RC_OK; /* corked: leaves with the others at the uncork (rc__dq_flush) */
	} else if (c->dgram || (c->kind->props & RC_TPP_SYNC)) {
		/* datagrams need no send lock; in-process dispatch runs without our lock */
		st = tp->vt->send(tp, msg, len, NULL, c->dgram ? (flags & RC_TPF_DONTWAIT) : 0);
		if (st == RC_AGAIN)
			st = RC_OK; /* socket buffer full: as if lost; retransmission covers it */
	} else {
		unsigned f = 0;
		pthread_mutex_lock(&c->smu);
		if (c->tp != tp) {
			st = RC_CANTSEND; /* the connection broke meanwhile (its calls failed) */
			errno = ECONNRESET;
		} else {
			if (c->cork > 0)
				f |= RC_TPF_MORE;
			if ((flags & RC_TPF_DONTWAIT) && tp->vt->outq(tp) < RC__OQ_BLOCK)
				f |= RC_TPF_DONTWAIT;
			rc__smu_send(c);
			st = tp->vt->send(tp, msg, len, NULL, f);
			atomic_store(&c->queued, tp->vt->outq(tp) > 0);
			rc__smu_sent(c);
		}
		pthread_mutex_unlock(&c->smu);
	}
	{
		int e = errno;
		if (st == RC_OK && c->trace != NULL)
			rc__trace(c, RC_TP_SENT, p->xid);
		pthread_mutex_lock(&c->mu);
		p->starting = false;
		if (st != RC_OK && p->state == RC__CALL_DONE) {
			/* another thread completed it meanwhile (e.g. the connection broke): that
			 * completion stands, and its callback will run */
			st = RC_OK;
		} else if (st != RC_OK && p->resend) {
			st = RC_OK; /* its server drained meanwhile: it goes again (rc__resend) */
		} else if (st == RC_TOOMANY) {
			/* refused by the transport for now (a back channel whose server stopped
			 * reading at a limit): this call fails, saying why; the connection stays */
			rc__unlink(c, p);
			snprintf(p->err.detail, sizeof(p->err.detail), "%s", rc__tp_detail());
		} else if (st != RC_OK) {
			rc__unlink(c, p);
			rc__send_failed(c, tp, e);
			st = rc__send_status(p, st, e);
		}
		if (p->state == RC__CALL_DONE && p->released && !p->has_cb) {
			rc__free_call(p); /* released while it was being sent again (rc__renew) */
			st = RC_OK;
		}
		pthread_mutex_unlock(&c->mu);
	}
	return st;
}

/* common.h */
void rc__renew(rc_client *c)
{
	rc_async *list, *p, *n;
	rc__cl_auth *a;
	bool ok;

	pthread_mutex_lock(&c->mu);
	list = c->renew;
	c->renew = NULL;
	pthread_mutex_unlock(&c->mu);
	if (list == NULL)
		return;
	a = list->auth;
	ok = a->fl->cl_refresh(a, list->renew_why); /* (may make calls on c) */
	for (p = list; p != NULL; p = n) {
		rc_status st;
		n = p->next;
		p->next = NULL;
		pthread_mutex_lock(&c->mu);
		p->renewing = false;
		st = p->renew_st != RC_OK ? p->renew_st : !ok || p->auth != a ? RC_AUTHERROR : RC_OK;
		pthread_mutex_unlock(&c->mu);
		if (st == RC_OK) {
			free(p->wire); /* (sealed again by rc__start) */
			p->wire = NULL;
			if ((st = rc__start(c, p, p->msg, p->msglen, RC_TPF_DONTWAIT)) == RC_OK)
				continue; /* in flight again (or done, and freed if it was released) */
		}
		pthread_mutex_lock(&c->mu);
		rc__complete(c, p, st); /* (RC_AUTHERROR: its error from the denial stands) */
		pthread_mutex_unlock(&c->mu);
	}
	rc__run_callbacks(c);
}

/* Send what the transport queued before waiting for replies to it (under c->mu, dropped
 * meanwhile), waiting at most until wake. A failure fails the calls in flight. */
static void rc__drain_output(rc_client *c, int64_t wake)
{
	int64_t ns = wake - rc__now();
	int ms = ns <= 0 ? 0 : ns >= (int64_t)INT32_MAX * 1000000 ? -1 : (int)(ns / 1000000);
	rc_status st;
	rc_tp *tp;
	int e;

	pthread_mutex_unlock(&c->mu);
	pthread_mutex_lock(&c->smu);
	tp = c->tp;
	st = rc__flush_locked(c, ms);
	e = errno;
	pthread_mutex_unlock(&c->smu);
	pthread_mutex_lock(&c->mu);
	if (st == RC_CANTSEND)
		rc__send_failed(c, tp, e);
}

/* common.h */
void rc__drive(rc_client *c, rc_async *p, int64_t until)
{
	while (p->state != RC__CALL_DONE) {
		int64_t now, wake;
		if (__builtin_expect(c->resend_due, 0)) {
			rc__resend(c); /* after a drain's notice: on a new connection */
			continue;
		}
		if (c->inq != NULL) {
			rc__serve_inq(c, rc__send_failed); /* the peer's calls, on this thread (rc_client_serve) */
			continue;
		}
		now = rc__now();
		wake = rc__timers(c, now);
		if (p->state == RC__CALL_DONE || now >= until)
			break;
		if (until < wake)
			wake = until;
		if (c->doneq != NULL && p->has_cb)
			break; /* let the caller run callbacks */
		if (p->renewing)
			break; /* let the caller renew its credentials (rc__renew), without the lock */
		if (atomic_load(&c->queued)) {
			rc__drain_output(c, wake); /* its replies cannot come before it leaves */
			continue;
		}
		if (!c->reading && c->tp != NULL) {
			if (rc__read(c, wake, 0) == RC_TIMEDOUT && p->state != RC__CALL_DONE)
				rc__complete(c, p, RC_TIMEDOUT); /* in-process: no reply was queued */
		} else if (c->tp == NULL) {
			rc__complete(c, p, RC_CANTRECV);
		} else {
			struct timespec ts = {(time_t)(wake / 1000000000), (long)(wake % 1000000000)};
			atomic_fetch_add(&c->nwaiters, 1);
			if (atomic_load(&c->reading))
				pthread_cond_timedwait(&c->cv, &c->mu, &ts);
			atomic_fetch_sub(&c->nwaiters, 1);
		}
	}
}

/* common.h */
__attribute__((noinline)) void rc__serve_ahead_locked(rc_client *c)
{
	if (rc__ahead_locked(c))
		(void)rc__read_all(c);
	rc__serve_inq(c, rc__send_failed);
}

/* common.h */
__attribute__((noinline)) void rc__serve_ahead(rc_client *c)
{
	pthread_mutex_lock(&c->mu);
	rc__serve_ahead_locked(c);
	pthread_mutex_unlock(&c->mu);
}

/* ---- failover after a drain (rc_client_set_failover; docs/load-balancing.md) ---------------
 * Each connection starts with a NOTICE call (program 0x3fd7c0de, version 1, procedure 1) that
 * the connecting thread sends and waits for before the connection carries calls: a server
 * that drains (rc_server_drain) answers it SUCCESS with 0 now, and once more, SUCCESS with 1,
 * after the reply of every call it ran, just before it ends the connection. Any other answer
 * (PROG_UNAVAIL from a server without drains) turns the notice off on that connection. The
 * second answer means the calls still in flight were never run: they go again, on a new
 * connection, with new xids, inside their own deadlines.
 */

/* The NOTICE's second answer came (under mu, as the reader, its role given up): if it says
 * the server drains, every call still in flight was never run -- mark them to go again
 * (rc__resend) and close the connection. */
static void rc__goaway(rc_client *c, const unsigned char *msg, size_t len)
{
	rc_async *p, *n;

	if (len < 28 || rc__get32(msg + 8) != RC__MSG_ACCEPTED || rc__get32(msg + 20) != 0 ||
	    rc__get32(msg + 24) != 1)
		return;
	c->notice_xid = 0;
	for (p = c->pending; p != NULL; p = n) {
		n = p->next;
		if (p->auth == NULL && p->msg != NULL) {
			p->resend = true;
			continue;
		}
		snprintf(p->err.detail, sizeof(p->err.detail),
		         "the server drained; a call with sealed credentials is not sent again");
		rc__complete(c, p, RC_CANTRECV);
	}
	c->resend_due = true;
	rc__disconnect(c);
	rc__wake(c);
}

/* Send the calls marked by rc__goaway again on a new connection (under mu, dropped while it
 * connects): new xids, the messages as first encoded. The connection is tried again until
 * the latest of their deadlines (a balancer may take a moment to find a server up); if none
 * comes, they fail as a failed connect does. */
/* engine.h */
void rc__resend(rc_client *c)
{
	int64_t deadline = 0;
	rc_status st = RC_OK;
	rc_async *p, *n;
	rc_tp *tp;
	int err = 0;

	c->resend_due = false;
	for (p = c->pending; p != NULL; p = p->next)
		if (p->resend && p->deadline > deadline)
			deadline = p->deadline;
	if (deadline == 0)
		return;
	while ((st = rc__ensure(c, deadline, &err)) != RC_OK && rc__now() + 20000000 < deadline) {
		struct timespec ts = {0, 20000000};
		pthread_mutex_unlock(&c->mu);
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&c->mu);
	}
	if (st != RC_OK) {
		for (p = c->pending; p != NULL; p = n) {
			n = p->next;
			if (!p->resend)
				continue;
			p->resend = false;
			p->err.sys_errno = err;
			snprintf(p->err.detail, sizeof(p->err.detail),
			         "the server drained, and no new connection: %s", rc__tp_detail());
			rc__complete(c, p, rc__connect_status(st));
		}
		return;
	}
	tp = c->tp;
	pthread_mutex_lock(&c->smu);
	rc__smu_send(c);
	for (p = c->pending; p != NULL && st == RC_OK; p = p->next) {
		if (!p->resend)
			continue;
		p->resend = false;
		p->xid = atomic_fetch_add_explicit(&c->xid, 1, memory_order_relaxed) + 1;
		rc__put32(p->msg, p->xid);
		st = tp->vt->send(tp, p->msg, p->msglen, NULL, RC_TPF_DONTWAIT | RC_TPF_MORE);
	}
	if (st == RC_OK && tp->vt->flush(tp, 0) == RC_CANTSEND)
		st = RC_CANTSEND;
	err = errno;
	atomic_store(&c->queued, tp->vt->outq(tp) > 0);
	rc__smu_sent(c);
	pthread_mutex_unlock(&c->smu);
	if (st != RC_OK)
		rc__send_failed(c, tp, err); /* (the calls in flight fail, as any broken send's) */
}

/*
 * A request's life past the serve step: the request objects and their pool, every answer --
 * a raw call's reply or error (rc_svc_req_reply, rc_svc_req_error) goes at once into the
 * serving thread's buffer -- and deferred requests: a routine (typed or raw) that cannot
 * answer at once calls rc_svc_req_defer, returns, and answers later from any thread with
 * rc_svc_req_reply, rc_svc_req_error or rc_svc_req_drop (a typed one through idlc's
 * proc_V_reply helper).
 *
 * The request object (request.h, rc__req) leaves the serving thread when deferred: it
 * takes a copy of the call's encoded arguments (the receive buffer they were read from is
 * reused for the next call) and decodes the typed argument again from that copy, into the
 * same object; it joins srv->deferred; a stream request holds a reference to its connection
 * (which is then served as worker jobs, even on a one-thread server, so that its replies may
 * come from any thread under its write lock); a datagram request keeps the caller's address
 * and its duplicate-cache entry, which stays "in progress" until the answer -- a
 * retransmission meanwhile is absorbed, one after it gets the cached reply.
 *
 * Two holds keep the object alive: the serving thread's (until its routine has returned and
 * it has let go) and the deferral's (until the answer). Whichever lets go last frees it.
 *
 * Routines get a handle, not the object's address (request.h, "Request handles"): a slot
 * of a process-wide table and its generation. The answer moves the generation on under
 * rc__defer_mu, so a second answer -- even once the object serves another call -- finds the
 * handle stale and returns RC_INVAL without touching the object.
 *
 * A server that stops (rc_server_run returns) or is destroyed orphans what is still
 * deferred: each request lets go of its connection and cache entry at once, and its later
 * answer frees it and returns RC_CANCELLED. rc__defer_mu makes that hand-over safe against a
 * concurrent answer without touching a server that may be gone.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/rpc.h"
#include "runtime/server/server_internal.h"
#include "runtime/server/listener.h"
#include "runtime/core/testpoint.h"

static pthread_mutex_t rc__defer_mu = PTHREAD_MUTEX_INITIALIZER;

/* request.h: a request object from srv's pool (the oldest), or a new one. */
rc__req *rc__req_new(rc_server *srv, rc__wctx *w)
{
	rc__req *r;

	pthread_mutex_lock(&srv->poolmu);
	if ((r = srv->pool) != NULL) {
		if ((srv->pool = r->dnext) == NULL)
			srv->pool_tail = NULL;
		srv->npool--;
	}
	pthread_mutex_unlock(&srv->poolmu);
	if (r != NULL) {
		unsigned char *own = r->own;
		size_t cap = r->owncap;
		memset(r, 0, offsetof(rc__req, handle)); /* (the buffers are set when used) */
		r->own = own;
		r->owncap = cap;
	} else if ((r = rc__zalloc_lines(sizeof(rc__req))) == NULL) { /* (its usual fields: 3) */
		return NULL;
	} else if (!rc__req_handle_take(r)) {
		free(r);
		return NULL;
	}
	r->wc = w;
	return r;
}

/* request.h: the pool's objects go (the server is destroyed). */
void rc__req_pool_free(rc_server *srv)
{
	rc__req *d = atomic_exchange(&srv->direct_req, NULL);

	if (d != NULL) /* (direct.c's kept one) */
		rc__req_free(d);
	for (rc__req *r = srv->pool, *next; r != NULL; r = next) {
		next = r->dnext;
		rc__req_free(r);
	}
	srv->pool = srv->pool_tail = NULL;
	srv->npool = 0;
}

/* request.h: a serving thread's context; its request object is made on first use. */
void rc__wctx_init(rc__wctx *w, rc_server *srv)
{
	rc__encbuf_init(&w->rb, w->stack, sizeof(w->stack), srv->lim.max_record);
	w->keep = rc__reply_keep(srv->lim.max_record);
	w->req = NULL;
	w->conn = NULL;
	w->lsn = NULL;
	w->rbuf = NULL;
	w->gsink = NULL;
	w->gsent = 0;
	w->drc = NULL;
	w->later = NULL;
	w->to = NULL;
	w->batch = NULL;
	w->lone = 0;
	w->want = 0;
	w->worked = false; /* (rc_server_step, the application's loop: no quiet detection) */
	w->starttls = false;
	w->auth = NULL;
}

/* request.h: what rc__wctx_init and the serving made. */
void rc__wctx_fini(rc__wctx *w)
{
	rc__encbuf_free(&w->rb);
	if (w->req != NULL)
		rc__req_free(w->req);
	free(w->rbuf);
	free(w->batch);
	w->req = NULL;
	w->rbuf = NULL;
	w->batch = NULL;
}

/* request.h: one hold on r fewer; the last frees what it holds, and pools or frees the
 * object. */
void rc__req_unhold(rc__req *r, rc_server *pool)
{
	if (atomic_fetch_sub(&r->holds, 1) != 1)
		return;
	if (r->args != NULL) { /* typed: decoded from own, which it may point into */
		const rc_procinfo *info = r->pub.proc->info;
		rc__xdr_free_lent(info->xargs, r->args, r->own, r->own + r->ownlen);
		if (r->args != r->argbuf)
			free(r->args);
	}
	if (r->res != NULL) {
		const rc_procinfo *info = r->pub.proc->info;
		if (!r->pub.keep_res)
			rc_xdr_free(info->xres, r->res);
		if (r->res != r->resbuf)
			free(r->res);
	}
	rc__svc_auth_done(&r->auth);
	free(r->unwrapped);
	r->unwrapped = NULL;
	if (pool == NULL || !rc__req_pool_put(pool, r))
		rc__req_free(r);
}

/* request.h: r, idle, into srv's pool (a big argument's copy is not kept). False: the
 * pool is full, r is still the caller's. */
bool rc__req_pool_put(rc_server *srv, rc__req *r)
{
	bool put = false;

	if (r->owncap > RC__REQ_OWN_KEEP) {
		free(r->own);
		r->own = NULL;
		r->owncap = 0;
	}
	pthread_mutex_lock(&srv->poolmu);
	if (srv->npool < RC__REQ_POOL) { /* behind the others: reused last */
		r->dnext = NULL;
		if (srv->pool_tail != NULL)
			srv->pool_tail->dnext = r;
		else
			srv->pool = r;
		srv->pool_tail = r;
		srv->npool++;
		put = true;
	}
	pthread_mutex_unlock(&srv->poolmu);
	return put;
}

/* server.h: keep req past its routine. */
rc_status rc_svc_req_defer(rc_svc_req *h)
{
	rc__req *r = rc__req_of(h);
	rc_svc_req *req;
	rc_server *srv;
	rc__wctx *w;
	const rc__rd *rd;
	size_t n;

	if (r == NULL || r->rd == NULL || atomic_load(&r->state) != RC__REQ_INLINE)
		return RC_INVAL; /* not inside its routine, or deferred already */
	req = &r->pub;
	srv = req->srv;
	w = r->wc;
	rd = r->rd;
	if (w->later == NULL)
		return RC_NOTSUPP; /* a way back that cannot be kept (a synchronous transport's
		                      caller that waits inside its send) */
	if (w->conn == NULL) { /* a datagram listener or an in-process caller cannot be held
	                          back as a stream is */
		bool full;
		pthread_mutex_lock(&srv->mu);
		full = srv->ndeferred >= srv->lim.max_deferred;
		pthread_mutex_unlock(&srv->mu);
		if (full)
			return RC_TOOMANY;
	}
	/* the arguments' bytes, the request's own from now on */
	n = (size_t)(rd->end - rd->p);
	if (n > r->owncap || r->own == NULL) { /* (a pooled object's copy is reused) */
		unsigned char *own = malloc(n ? n : 1);
		if (own == NULL)
			return RC_NOMEM;
		free(r->own);
		r->own = own;
		r->owncap = n ? n : 1;
	}
	memcpy(r->own, rd->p, n);
	r->ownlen = n;
	r->gen = w->auth != NULL; /* its replies: verifier and wrapping through its flavor */
	if (req->proc != NULL) { /* typed: where its objects are */
		const rc_procinfo *info = req->proc->info;
		r->args = info->xargs == (rc_xdrproc)rc_xdr_void ? NULL
		          : info->args_size <= sizeof(r->argbuf) ? r->argbuf : r->args_heap;
		r->res = info->res_size == 0 ? NULL
		         : info->res_size <= sizeof(r->resbuf) ? r->resbuf : r->res_heap;
	} else {
		r->args = r->res = NULL;
	}
	if (r->args != NULL) { /* typed: the argument again, from the copy, in place */
		const rc_procinfo *info = req->proc->info;
		rc_xdr x;
		rc__xdr_free_lent(info->xargs, r->args, rd->p, rd->end);
		memset(r->args, 0, info->args_size);
		rc__xdr_decoder(&x, r->own, n, RC__LIM(srv, max_alloc));
		x.x_lend_lo = r->own; /* large opaque data stays in the copy */
		x.x_lend_hi = r->own + n;
		if (!info->xargs(&x, r->args)) { /* it decoded once: only memory can fail */
			rc__xdr_free_lent(info->xargs, r->args, r->own, r->own + n);
			memset(r->args, 0, info->args_size);
			return RC_NOMEM; /* (the copy stays with the object, for its next use) */
		}
	} else { /* raw: rc_svc_req_getargs decodes the copy */
		req->args = r->own;
		req->argslen = n;
	}
	free(r->unwrapped); /* (the flavor's unwrapped arguments: copied into own) */
	r->unwrapped = NULL;
	if ((r->cached = r->keyp != NULL))
		r->key = *r->keyp;
	if (req->dgram) {
		r->l = w->lsn;
		r->peer = *req->peer;
		req->peer = &r->peer;
	}
	if (w->to != NULL)
		r->to = *w->to; /* in-process: the caller's way back (held below) */
	r->sink.ops = w->later; /* its answer's way out, with the request as context */
	r->sink.ctx = r;
	req->tls_kept = rc__conn_secure(req->conn, NULL); /* (rc_svc_req_tls from now on) */
	req->conn = NULL;
	atomic_store(&r->holds, 2); /* the serving thread's, and the deferral's */
	pthread_mutex_lock(&srv->mu);
	if (w->conn != NULL)
		r->c = w->conn;
	if (r->sink.ops->deferred != NULL)
		r->sink.ops->deferred(r); /* its connection counts and holds it */
	r->dprev = NULL;
	r->dnext = srv->deferred;
	if (srv->deferred)
		srv->deferred->dprev = r;
	srv->deferred = r;
	srv->ndeferred++;
	/* its copy of the arguments is held for the peer until the answer (max_inbound_bytes) */
	rc__inbound_add(srv, r->ownlen);
	atomic_store(&r->state, RC__REQ_DEFERRED);
	atomic_store(&rc__hslot_of(r->handle)->deferred, 1); /* answers take rc__answer now */
	pthread_mutex_unlock(&srv->mu);
	return RC_OK;
}

/* server.h: a raw call's SUCCESS reply with *res, or SYSTEM_ERR when xres fails; a deferred
 * request's is sent now (rc__answer). */
rc_status rc_svc_req_reply(rc_svc_req *h, rc_xdrproc xres, const void *res)
{
	rc__hslot *s = rc__hslot_of(h);
	rc__req *r;
	rc_svc_req *req;
	rc_status st;

	if (s == NULL || xres == NULL)
		return RC_INVAL;
	if (atomic_load(&s->deferred)) /* (the object is not read here: it may go meanwhile) */
		return rc__answer(h, RC__ANSWER_RESULT, xres, res, 0, 0, 0);
	if ((r = atomic_load_explicit(&s->req, memory_order_relaxed)) == NULL || r->pub.w == NULL)
		return RC_INVAL; /* not a raw call being served */
	req = &r->pub;
	req->rlen = rc__reply_result(req->srv, req->w, req->srv->lim.max_record, req->dgram,
	                             req->xid, xres, res, &st);
	return st;
}

/* server.h: a raw call's error reply; a deferred request's is sent now (rc__answer). */
rc_status rc_svc_req_error(rc_svc_req *h, rc_svc_err err, uint32_t lo, uint32_t hi)
{
	rc__hslot *s = rc__hslot_of(h);
	rc__req *r;
	rc_svc_req *req;

	if (s == NULL || err < RC_SVC_PROG_UNAVAIL || err > RC_SVC_AUTH_ERROR)
		return RC_INVAL;
	if (atomic_load(&s->deferred))
		return rc__answer(h, RC__ANSWER_ERROR, NULL, NULL, err, lo, hi);
	if ((r = atomic_load_explicit(&s->req, memory_order_relaxed)) == NULL || r->pub.w == NULL)
		return RC_INVAL; /* not a raw call being served */
	req = &r->pub;
	req->rlen = rc__reply_error(req->w, req->srv->lim.max_record, req->xid, err, lo, hi);
	return RC_OK;
}

/* server.h: answer a deferred request with no reply at all. */
rc_status rc_svc_req_drop(rc_svc_req *h)
{
	return rc__answer(h, RC__ANSWER_DROP, NULL, NULL, 0, 0, 0);
}

/* Take r off its server's list (under srv->mu). */
static void rc__defer_unlink(rc_server *srv, rc__req *r)
{
	if (r->dprev)
		r->dprev->dnext = r->dnext;
	else
		srv->deferred = r->dnext;
	if (r->dnext)
		r->dnext->dprev = r->dprev;
	r->dnext = r->dprev = NULL;
	if (srv->ndeferred-- == srv->lim.max_deferred)
		srv->defer_room(srv);
	rc__inbound_sub(srv, r->ownlen); /* connections waiting for the budget may read again */
}

/* request.h: encode, cache, send, release. */
rc_status rc__answer(const rc_svc_req *h, int kind, rc_xdrproc xres, const void *res,
                     rc_svc_err err, uint32_t lo, uint32_t hi)
{
	rc__req *r;
	rc_server *srv;
	rc__wctx tw; /* a reply buffer on this thread's stack */
	rc_status st = RC_OK;
	size_t rlen = 0;
	bool broken = false, more;
	int state;

	pthread_mutex_lock(&rc__defer_mu);
	/* the handle looked at under the lock every answer takes: of two answers, the second
	 * finds it stale (and never reads the object, which may be gone or serve another call) */
	if ((r = rc__req_of(h)) == NULL ||
	    ((state = atomic_load(&r->state)) != RC__REQ_DEFERRED && state != RC__REQ_ORPHANED)) {
		pthread_mutex_unlock(&rc__defer_mu);
		return RC_INVAL;
	}
	rc__req_handle_bump(r); /* (answered: h is stale from now on) */
	if (state == RC__REQ_ORPHANED) {
		atomic_store(&r->state, RC__REQ_ANSWERED);
		pthread_mutex_unlock(&rc__defer_mu);
		rc__req_unhold(r, NULL); /* (its server may be gone) */
		return RC_CANCELLED;
	}
	srv = r->pub.srv;
	pthread_mutex_lock(&srv->mu);
	/* other calls of its connection under way: this answer is part of a burst */
	more = r->c != NULL && (r->c->deferred > 1 || r->c->jobs > 0);
	rc__defer_unlink(srv, r);
	srv->answering++;
	atomic_store(&r->state, RC__REQ_ANSWERED);
	pthread_mutex_unlock(&srv->mu);
	pthread_mutex_unlock(&rc__defer_mu);

	rc__wctx_init(&tw, srv);
	tw.keep = 0; /* (nothing is kept: this context ends with the answer) */
	tw.auth = r->gen ? &r->auth : NULL;
	if (kind == RC__ANSWER_RESULT)
		rlen = rc__reply_result(srv, &tw, srv->lim.max_record, r->pub.dgram, r->pub.xid,
		                        xres, res, &st);
	else if (kind == RC__ANSWER_ERROR)
		rlen = rc__reply_error(&tw, srv->lim.max_record, r->pub.xid, err, lo, hi);
	/* cached: a retransmission from now on gets the reply, or runs afresh if none */
	broken = !rc__reply_send(srv, &r->sink,
	                         &(const rc__out){.msg = rc__encbuf_msg(&tw.rb), .len = rlen,
	                                          .peer = &r->peer, .xid = r->pub.xid,
	                                          .more = more, .forget = true},
	                         r->cached ? &r->key : NULL, true);
	rc__wctx_fini(&tw);
	rc__req_unhold(r, srv); /* (srv lives while answering counts this answer) */
	RC__TEST_POINT("defer.answer_end");
	/* the answer's last touch of srv, under the mutex rc__defer_orphan holds while it looks at
	 * answering and waits: the orphaner (and so rc_server_destroy) goes on only once this
	 * thread has let go of the mutex, and touches nothing of the server after */
	pthread_mutex_lock(&srv->mu);
	if (--srv->answering == 0 && srv->orphaning > 0)
		pthread_cond_broadcast(&srv->answered);
	pthread_mutex_unlock(&srv->mu);
	return broken ? RC_CANTSEND : st;
}

/* request.h: the server stops or goes (l NULL: everything deferred lets go of it), or
 * listener l closes (its datagram requests do). */
void rc__defer_orphan(rc_server *srv, const struct rc__lsn *l)
{
	pthread_mutex_lock(&rc__defer_mu);
	pthread_mutex_lock(&srv->mu);
	for (rc__req *r = srv->deferred, *next; r != NULL; r = next) {
		next = r->dnext;
		if (l != NULL && r->l != l)
			continue;
		rc__defer_unlink(srv, r);
		if (r->cached)
			rc__drc_cancel(srv->drc, &r->key);
		if (r->sink.ops->orphaned != NULL)
			r->sink.ops->orphaned(r);
		r->c = NULL;
		r->l = NULL;
		r->orphan_ctx = r->pub.reg->ctx; /* (rc_svc_req_context: its registration goes with
		                                    the server) */
		r->pub.reg = NULL;
		atomic_store(&r->state, RC__REQ_ORPHANED);
	}
	pthread_mutex_unlock(&rc__defer_mu);
	srv->orphaning++;
	while (srv->answering > 0) /* answers already under way finish first */
		pthread_cond_wait(&srv->answered, &srv->mu);
	srv->orphaning--;
	srv->defer_room(srv);
	pthread_mutex_unlock(&srv->mu);
}

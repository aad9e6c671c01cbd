/*
 * The in-process listener kind (the inproc transport, and any synchronous one): the caller's
 * send hands each message to rc__deliver_to (or rc__deliver), which serves it on the caller's
 * thread with a reply buffer on its stack and passes the reply back at once -- or, when the
 * routine defers the request, keeps the way back (rc_tp_reply_to's hold) so the answer can go
 * back later from any thread.
 */
#include <stdbool.h>
#include <stddef.h>

#include "runtime/core/rpc.h"
#include "runtime/server/server_internal.h"
#include "runtime/server/listener.h"

/* The way out of an inline reply: the caller's reply function, called at once. */
static bool rc__direct_send(void *ctx, const rc__out *o)
{
	const rc_tp_reply_to *to = ctx;

	to->reply(to->rctx, o->msg, o->len);
	return true;
}

/* A deferred request's way back (ctx: the request, which copied it): kept at deferral,
 * answered later, let go of after the answer or when orphaned. */
static bool rc__direct_later_send(void *ctx, const rc__out *o)
{
	rc__req *r = ctx;

	return r->to.reply_kept(r->to.rctx, o->msg, o->len); /* false: the caller has gone */
}

static void rc__direct_later_release(void *ctx, bool broken)
{
	rc__req *r = ctx;

	(void)broken;
	r->to.release(r->to.rctx);
}

static void rc__direct_later_deferred(void *ctx)
{
	rc__req *r = ctx;

	r->to.hold(r->to.rctx);
}

static void rc__direct_later_orphaned(void *ctx)
{
	rc__req *r = ctx;

	r->to.release(r->to.rctx);
}

static const rc__sink_ops rc__direct_later = {rc__direct_later_send, rc__direct_later_release,
                                              rc__direct_later_deferred,
                                              rc__direct_later_orphaned};

/* Serve msg[0..len) on this thread and send its reply back through to (kept, when to can be,
 * if the routine defers the request). */
static void rc__direct_serve(rc_server *srv, const void *msg, size_t len,
                             const rc_tp_reply_to *to)
{
	rc__wctx w;
	size_t rlen;

	rc__wctx_init(&w, srv);
	if ((w.req = atomic_exchange_explicit(&srv->direct_req, NULL, memory_order_acquire)) != NULL)
		w.req->wc = &w; /* (it served in another context before) */
	if (to->hold != NULL && to->reply_kept != NULL && to->release != NULL) {
		w.to = to;
		w.later = &rc__direct_later;
	}
	rlen = rc__serve(srv, &w, msg, len, NULL, false, rc__trace_t0(srv), NULL);
	rc__reply_leave(srv, &w, rc__direct_send, (void *)to, rlen, NULL, false);
	/* the request object (its own, unless deferred) is kept for the next message, as a
	 * worker keeps its own across calls: this context lives for one (another thread's kept
	 * meanwhile goes to the pool) */
	if (w.req != NULL) {
		w.req = atomic_exchange_explicit(&srv->direct_req, w.req, memory_order_acq_rel);
		if (w.req != NULL && rc__req_pool_put(srv, w.req))
			w.req = NULL;
	}
	rc__wctx_fini(&w);
}

/* server_internal.h: serve one message with a reply buffer on this stack. */
void rc__server_handle_direct(rc_server *srv, const void *msg, size_t len, rc_reply_fn reply,
                              void *ctx)
{
	const rc_tp_reply_to to = {reply, ctx, NULL, NULL, NULL};

	rc__direct_serve(srv, msg, len, &to);
}

/* A synchronous listener's delivery callback (rc_tp_deliver): serve the message now. */
void rc__deliver(void *ctx, const void *msg, size_t len, rc_reply_fn reply, void *rctx)
{
	rc__server_handle_direct(ctx, msg, len, reply, rctx);
}

/* listener.h: as rc__deliver, with a way back a deferred request keeps. */
void rc__deliver_to(void *ctx, const void *msg, size_t len, const rc_tp_reply_to *to)
{
	rc__direct_serve(ctx, msg, len, to);
}

/*
 * Started calls (rc_call_start, handles, callbacks) and the application's own loop
 * (rc_client_pollinfo, rc_client_advance): the engine driven from outside (common.h).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/client/engine.h"

/* ---- started calls ---------------------------------------------------------------------- */

rc_status rc_call_start_ex(rc_client *clnt, uint32_t proc, rc_xdrproc xargs, const void *args,
                           rc_xdrproc xres, void *res, const rc_callopts *opts,
                           rc_async_cb cb, void *udata, rc_async **out)
{
	_Alignas(16) unsigned char stack[RC__STACK_MSG]; /* (Sun XDR_INLINE: int32_t stores) */
	rc__encbuf b;
	rc_async *p;
	size_t len;
	rc_status st;

	if (out)
		*out = NULL;
	if (clnt == NULL || (cb == NULL && out == NULL) ||
	    (opts != NULL && opts->timeout_ms > RC_MAX_TIMEOUT_MS))
		return RC_INVAL;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return RC_NOMEM;
	p->xres = xres ? xres : rc_xdr_void;
	p->res = res;
	p->cb = cb;
	p->udata = udata;
	p->has_cb = cb != NULL;
	p->deadline = rc__now() + (int64_t)rc__call_timeout(clnt, opts) * 1000000;
	rc__encbuf_init(&b, stack, sizeof(stack), clnt->max_msg);
	st = rc__encode(clnt, p, &b, proc, xargs ? xargs : rc_xdr_void, args, &len);
	if (st == RC_OK && (clnt->dgram || p->auth != NULL || clnt->failover)) {
		/* keep the message for retransmission, or -- credentials of a flavor that may renew
		 * them -- to send it again after a renewal (rc__renew), or after a drain
		 * (rc_client_set_failover: rc__resend) */
		if (b.heap) {
			p->msgblock = b.data;
			rc__encbuf_detach(&b);
		} else if ((p->msgblock = malloc(len + RC_TP_HEADROOM)) != NULL) {
			memcpy(p->msgblock, b.data, len + RC_TP_HEADROOM);
		} else {
			st = RC_NOMEM;
		}
	}
	if (st == RC_OK) {
		unsigned char *msg = p->msgblock ? p->msgblock + RC_TP_HEADROOM : rc__encbuf_msg(&b);
		if (cb == NULL) {
			pthread_mutex_lock(&clnt->mu);
			rc__handle_link(clnt, p);
			pthread_mutex_unlock(&clnt->mu);
		}
		st = rc__start(clnt, p, msg, len, RC_TPF_DONTWAIT);
		if (st != RC_OK && cb == NULL) {
			pthread_mutex_lock(&clnt->mu);
			rc__handle_unlink(clnt, p);
			pthread_mutex_unlock(&clnt->mu);
		}
	}
	rc__encbuf_free(&b);
	if (st != RC_OK) { /* no handle: rc_client_geterr tells why */
		p->err.status = st;
		rc__set_lasterr(clnt, &p->err);
		rc__free_call(p);
		return st;
	}
	if (out)
		*out = p;
	return RC_OK;
}

rc_status rc_call_start(rc_client *clnt, uint32_t proc, rc_xdrproc xargs, const void *args,
                        rc_xdrproc xres, void *res, rc_async_cb cb, void *udata,
                        rc_async **out)
{
	return rc_call_start_ex(clnt, proc, xargs, args, xres, res, NULL, cb, udata, out);
}

rc_status rc_async_status(const rc_async *call)
{
	rc_client *c;
	rc_status st;

	if (call == NULL)
		return RC_INVAL;
	if ((c = call->clnt) == NULL)
		return call->st; /* orphaned by rc_client_destroy: complete */
	pthread_mutex_lock(&c->mu);
	st = call->state == RC__CALL_DONE ? call->st : RC_INPROGRESS;
	pthread_mutex_unlock(&c->mu);
	return st;
}

rc_status rc_async_wait(rc_async *call, int timeout_ms)
{
	rc_client *c;
	int64_t until;
	rc_status st;
	bool done;

	if (call == NULL)
		return RC_INVAL;
	if ((c = call->clnt) == NULL)
		return call->st;
	until = timeout_ms < 0 ? INT64_MAX : rc__now() + (int64_t)timeout_ms * 1000000;
	pthread_mutex_lock(&c->mu);
	for (;;) {
		rc__drive(c, call, until);
		done = call->state == RC__CALL_DONE;
		st = done ? call->st : RC_INPROGRESS;
		if (!done && call->renewing && rc__now() < until) {
			pthread_mutex_unlock(&c->mu);
			rc__renew(c); /* its credentials, then it goes again */
			pthread_mutex_lock(&c->mu);
			continue;
		}
		if (done || rc__now() >= until || c->doneq == NULL)
			break;
		pthread_mutex_unlock(&c->mu);
		rc__run_callbacks(c);
		pthread_mutex_lock(&c->mu);
	}
	pthread_mutex_unlock(&c->mu);
	/* With a callback, the call may be freed by the callbacks run here: st was read before. */
	rc__run_callbacks(c);
	return st;
}

/* client.h: a completed call's error, as rc_client_geterr gives a blocking call's. */
void rc_async_geterr(const rc_async *call, rc_error *err)
{
	rc_client *c;

	if (err == NULL)
		return;
	memset(err, 0, sizeof(*err));
	if (call == NULL) {
		err->status = RC_INVAL;
		return;
	}
	if ((c = call->clnt) != NULL)
		pthread_mutex_lock(&c->mu);
	if (call->state != RC__CALL_DONE && c != NULL)
		err->status = RC_INPROGRESS;
	else if (call->st != RC_OK)
		*err = call->err; /* (status set at completion: rc__complete) */
	if (c != NULL) {
		rc__err_explain(c, err);
		pthread_mutex_unlock(&c->mu);
	}
}

void rc_async_cancel(rc_async *call)
{
	rc_client *c;

	if (call == NULL || (c = call->clnt) == NULL)
		return;
	pthread_mutex_lock(&c->mu); /* c read first: rc__complete may free a released call */
	rc__complete(c, call, RC_CANCELLED);
	pthread_mutex_unlock(&c->mu);
}

void rc_async_release(rc_async *call)
{
	rc_client *c;

	if (call == NULL || call->has_cb)
		return;
	if ((c = call->clnt) == NULL) { /* orphaned: its client is gone, nothing else holds it */
		rc__free_call(call);
		return;
	}
	pthread_mutex_lock(&c->mu);
	rc__handle_unlink(c, call);
	if (call->state == RC__CALL_DONE) {
		rc__free_call(call);
	} else {
		call->released = true;
		rc__complete(c, call, RC_CANCELLED); /* frees it */
	}
	pthread_mutex_unlock(&c->mu);
}

size_t rc_client_inflight(rc_client *clnt)
{
	size_t n;

	if (clnt == NULL)
		return 0;
	pthread_mutex_lock(&clnt->mu);
	n = clnt->npending;
	pthread_mutex_unlock(&clnt->mu);
	return n;
}

/* ---- the application's loop ------------------------------------------------------------- */

rc_status rc_client_pollinfo(rc_client *clnt, int *fd, short *events, int *timeout_ms)
{
	int64_t next, now;

	if (clnt == NULL || fd == NULL || events == NULL || timeout_ms == NULL)
		return RC_INVAL;
	pthread_mutex_lock(&clnt->mu);
	*fd = clnt->tp ? rc__tp_pollfd(clnt->tp) : -1;
	*events = 0;
	if (*fd >= 0) {
		if (clnt->npending > 0 || clnt->srv != NULL)
			*events |= POLLIN; /* replies, or the peer's calls to the programs served */
		if (atomic_load(&clnt->queued))
			*events |= POLLOUT; /* calls wait in the output queue */
	}
	now = rc__now();
	next = INT64_MAX;
	for (rc_async *p = clnt->pending; p; p = p->next) {
		if (p->deadline < next)
			next = p->deadline;
		if (clnt->dgram && p->next_retry < next)
			next = p->next_retry;
	}
	if (clnt->doneq != NULL || clnt->inq != NULL || (clnt->npending > 0 && *fd < 0) ||
	    ((clnt->npending > 0 || clnt->srv != NULL) && rc__ahead_locked(clnt)))
		next = now; /* work to do at once (replies held that the descriptor won't announce) */
	if (next == INT64_MAX)
		*timeout_ms = -1;
	else if (next <= now)
		*timeout_ms = 0;
	else
		*timeout_ms = (int)((next - now + 999999) / 1000000);
	pthread_mutex_unlock(&clnt->mu);
	return RC_OK;
}

rc_status rc_client_advance(rc_client *clnt, short revents)
{
	rc_status st = RC_OK, fs = RC_OK;
	rc_tp *tp = NULL;
	int e = 0;
	bool renew;

	if (clnt == NULL)
		return RC_INVAL;
	pthread_mutex_lock(&clnt->mu);
	if (clnt->tp != NULL && ((revents & ~POLLOUT) != 0 || (clnt->kind->props & RC_TPP_SYNC) ||
	                         rc__ahead_locked(clnt))) {
		rc_status r = rc__read_all(clnt);
		if (r != RC_OK && r != RC_AGAIN && r != RC_TIMEDOUT)
			st = r == RC_CLOSED ? RC_CANTRECV : r;
	}
	(void)rc__timers(clnt, rc__now());
	if (__builtin_expect(clnt->resend_due, 0))
		rc__resend(clnt); /* after a drain's notice: on a new connection */
	rc__serve_inq(clnt, rc__send_failed); /* the peer's calls (rc_client_serve) */
	renew = clnt->renew != NULL;
	pthread_mutex_unlock(&clnt->mu);
	if (__builtin_expect(renew, 0))
		rc__renew(clnt); /* started calls denied for a credential problem */

	/* callbacks may start calls: corked, they gather in the output queue */
	pthread_mutex_lock(&clnt->smu);
	clnt->cork++;
	pthread_mutex_unlock(&clnt->smu);
	rc__run_callbacks(clnt);
	pthread_mutex_lock(&clnt->smu);
	if (clnt->cork == 1)
		rc__dq_flush(clnt); /* the datagrams the callbacks started, together */
	if (--clnt->cork == 0 && atomic_load(&clnt->queued)) {
		tp = clnt->tp;
		fs = rc__flush_locked(clnt, 0); /* never blocks: the rest waits for POLLOUT */
		e = errno;
	}
	pthread_mutex_unlock(&clnt->smu);
	if (fs == RC_CANTSEND) {
		pthread_mutex_lock(&clnt->mu);
		rc__send_failed(clnt, tp, e);
		pthread_mutex_unlock(&clnt->mu);
		rc__run_callbacks(clnt);
		st = RC_CANTSEND;
	}
	return st;
}

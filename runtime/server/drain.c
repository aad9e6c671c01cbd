/*
 * Graceful drain (rc_server_drain): a server restarted behind a load balancer loses no call.
 *
 *   1. Stop accepting: every stream listener is shut (connects are refused -- a balancer's
 *      health check or its connect fails, and it sends clients elsewhere); datagram
 *      listeners are no longer read; connections still in their PROXY header are closed.
 *   2. Each stream connection, once no thread is reading it (ARMED), is taken out of the
 *      loop: nothing more is read from it, so no further call of it is dispatched.
 *   3. Every call already dispatched is answered: the connection waits until its jobs and
 *      deferred requests are done and its replies queued.
 *   4. If the peer asked to be told (a NOTICE call, RC__CTL_PROG, at the connection's start),
 *      the server answers that call a second time, after every other reply: "every call of
 *      yours I ran has its reply ahead of this one; the rest I never ran".
 *   5. Its replies out, the server ends its sending side (the peer reads EOF after the last
 *      byte), then reads and throws away whatever the peer still sends until the peer closes
 *      (a lingering close: closing with unread input would reset the connection and could
 *      destroy replies the peer has not read yet), then closes.
 *   6. When no connection and no deferred request is left -- or at the timeout, when the rest
 *      are cut -- the server stops: rc_server_run returns.
 *
 * The steps run under srv->mu from rc__lsn_wake (srv->wake_at is kept close while draining),
 * on whichever serving thread's sweep comes first; none of them blocks. Also here: stopping
 * at once (rc_server_stop), which a drain ends with. Below server.c, above proxy.c and the
 * connections: admission reaches rc__aux_tick and the serve step rc__ctl_serve through
 * srv->aux_tick and srv->ctl_serve, which rc_server_create sets.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "runtime/core/rpc.h"
#include "runtime/server/listener.h"

#define RC__DRAIN_TICK_NS 5000000LL /* how often the drain's steps run */

enum {
	RC__DRAIN_NONE = 0,
	RC__DRAIN_ANSWER,  /* taken: waits for its dispatched calls' replies */
	RC__DRAIN_FLUSH,   /* the notice queued: waits for its output to leave */
	RC__DRAIN_LINGER,  /* its sending side ended: reads until the peer closes */
};

/* server.h: async-signal-safe -- a flag, the stop eventfd, and a shutdown that wakes blocked
 * datagram receivers. */
void rc_server_stop(rc_server *srv)
{
	uint64_t one = 1;

	if (srv == NULL)
		return;
	atomic_store(&srv->stop, 1);
	/* write(2) and shutdown(2) are async-signal-safe */
	if (write(srv->stopfd, &one, sizeof(one)) < 0) {
		/* the counter is already non-zero: a stop is pending anyway */
	}
	if (atomic_load(&srv->running) && srv->nlsn == 1 && srv->lsn[0]->dgram)
		srv->lsn[0]->tp->vt->shutdown(srv->lsn[0]->tp, false); /* wakes blocked receivers */
}

/* server.h: async-signal-safe -- two atomic stores and the stop eventfd's write. */
rc_status rc_server_drain(rc_server *srv, uint32_t timeout_ms)
{
	uint64_t one = 1;

	if (srv == NULL)
		return RC_INVAL;
	if (atomic_load(&srv->running) && srv->nlsn == 1 && srv->lsn[0]->dgram) {
		/* served by blocking receives: each datagram is answered as it is read, so to stop
		 * reading is to drain */
		rc_server_stop(srv);
		return RC_OK;
	}
	atomic_store(&srv->drain_ms, timeout_ms);
	atomic_store(&srv->drain_asked, true);
	if (write(srv->stopfd, &one, sizeof(one)) < 0) {
		/* the counter is already non-zero: the event is pending anyway */
	}
	return RC_OK;
}

/* The drain's next step is due at `at`: the loop wakes for it (under mu). */
static void rc__aux_due(rc_server *srv, int64_t at)
{
	int64_t wake = atomic_load_explicit(&srv->wake_at, memory_order_relaxed);

	if (srv->aux_next == 0 || at < srv->aux_next)
		srv->aux_next = at;
	if (wake == 0 || at < wake)
		atomic_store_explicit(&srv->wake_at, at, memory_order_relaxed);
}

/* listener.h */
bool rc__drain_begin(rc_server *srv)
{
	uint64_t count;
	int64_t now = rc__now();

	pthread_mutex_lock(&srv->mu);
	if (atomic_load(&srv->stop) || srv->destroying) {
		pthread_mutex_unlock(&srv->mu);
		return false;
	}
	/* the event is read (a stop written since has raised srv->stop first) */
	if (read(srv->stopfd, &count, sizeof(count)) < 0) {
		/* another thread read it: the drain has begun there */
	}
	if (srv->draining) {
		pthread_mutex_unlock(&srv->mu);
		return true;
	}
	srv->draining = true;
	srv->drain_until = now + (int64_t)atomic_load(&srv->drain_ms) * 1000000;
	for (size_t i = 0; i < srv->nlsn; i++) {
		rc__lsn *l = srv->lsn[i];
		if (l->tp->props & RC_TPP_SYNC)
			continue;
		if (!l->paused)
			rc__disarm(srv, l->tp);
		l->paused = true; /* never resumed (rc__lsn_wake) */
		l->resume_at = INT64_MAX;
		l->wait_room = false;
		/* a stream listener stops listening: connects are refused from now on */
		if (!l->dgram)
			l->tp->vt->shutdown(l->tp, false);
	}
	rc__aux_due(srv, now);
	pthread_mutex_unlock(&srv->mu);
	return true;
}

/* The NOTICE's second answer, after c's last reply (under srv->mu and c->wmu): the same xid,
 * accepted, SUCCESS, one word: 1 (draining). False: broken. */
static bool rc__drain_notice(rc__conn *c)
{
	unsigned char b[RC_TP_HEADROOM + 28];
	unsigned char *m = b + RC_TP_HEADROOM;

	rc__st32(m, c->notice_xid);
	rc__st32(m + 4, RC__REPLY);
	rc__st32(m + 8, RC__MSG_ACCEPTED);
	rc__st32(m + 12, RC_AUTH_NONE);
	rc__st32(m + 16, 0);
	rc__st32(m + 20, RC__SUCCESS);
	rc__st32(m + 24, 1);
	return c->tp->vt->send(c->tp, m, 28, NULL, RC_TPF_DONTWAIT) == RC_OK;
}

/* Close c now: its reading is over (DEAD), and the last reference closes it (under mu). */
static void rc__drain_close(rc_server *srv, rc__conn *c)
{
	c->state = RC__CONN_DEAD;
	c->drain = RC__DRAIN_NONE;
	rc__conn_back(srv, hangup, c);
	rc__disarm(srv, c->tp);
	c->tp->vt->shutdown(c->tp, true);
	rc__conn_unref_locked(srv, c);
}

/* One step of c's drain (under mu). */
static void rc__drain_conn(rc_server *srv, rc__conn *c, bool late)
{
	bool broken = false;

	switch (c->drain) {
	case RC__DRAIN_NONE:
		if (c->state != RC__CONN_ARMED)
			return; /* a thread reads it, or it is held: its turn ends first */
		if (late || c->end != RC__CONN_LIVE) {
			rc__conn_doom(srv, c); /* its own handler ends it */
			return;
		}
		/* out of the loop's reach (one-shot, nothing asked): an event already taken finds
		 * it BUSY and drops it (rc__conn_event) */
		if (!rc__arm(srv, EPOLL_CTL_MOD, c->tp, c, EPOLLONESHOT)) {
			rc__conn_doom(srv, c);
			return;
		}
		c->state = RC__CONN_BUSY;
		c->armed = 0;
		/* and, as a back channel's caller takes one (conn.c), never freed while the server
		 * lives: a worker thread may hold that event still, and read c after its close */
		c->taken = true;
		c->drain = RC__DRAIN_ANSWER;
		/* fall through */
	case RC__DRAIN_ANSWER:
		if (!late && (c->jobs > 0 || c->deferred > 0))
			return; /* its dispatched calls still run */
		pthread_mutex_lock(&c->wmu);
		if (c->notice && !late)
			broken = !rc__drain_notice(c);
		pthread_mutex_unlock(&c->wmu);
		c->drain = RC__DRAIN_FLUSH;
		/* fall through */
	case RC__DRAIN_FLUSH:
		pthread_mutex_lock(&c->wmu);
		if (!broken && !c->out_armed && rc__conn_outq(c) > 0)
			(void)rc__conn_flush(c, &broken);
		if (!broken && !late && rc__conn_outq(c) > 0) {
			pthread_mutex_unlock(&c->wmu);
			return;
		}
		pthread_mutex_unlock(&c->wmu);
		if (broken || late) {
			rc__drain_close(srv, c);
			return;
		}
		rc__tp_shutdown_write(c->tp);
		c->drain = RC__DRAIN_LINGER;
		/* fall through */
	case RC__DRAIN_LINGER:
		if (late || rc__tp_discard(c->tp) != RC_AGAIN)
			rc__drain_close(srv, c);
		return;
	}
}

/* listener.h: under mu, at srv->wake_at. */
int64_t rc__aux_tick(rc_server *srv, int64_t now, int64_t wake)
{
	int64_t next;
	bool late;

	if (srv->aux_next == 0 || now < srv->aux_next)
		return srv->aux_next != 0 && (wake == 0 || srv->aux_next < wake) ? srv->aux_next
		                                                                 : wake;
	next = srv->npx > 0 ? rc__proxy_sweep(srv, now) : 0;
	if (srv->draining) {
		late = now >= srv->drain_until;
		for (rc__conn *c = srv->conns, *n; c != NULL; c = n) {
			n = c->next; /* (c may be closed) */
			rc__drain_conn(srv, c, late);
		}
		if ((srv->conns == NULL && srv->npx == 0 && srv->ndeferred == 0) ||
		    now >= srv->drain_until + 1000000000LL) {
			rc_server_stop(srv); /* done (or, a second past the timeout, given up) */
		} else {
			int64_t t = now + RC__DRAIN_TICK_NS;
			next = next == 0 || t < next ? t : next;
		}
	}
	srv->aux_next = next;
	return next != 0 && (wake == 0 || next < wake) ? next : wake;
}

/* listener.h: RC__CTL_PROG. NULL (procedure 0): an empty SUCCESS. NOTICE on a stream
 * connection: remembered (the drain answers it again) and answered now, SUCCESS and one word:
 * 0 (noted). Anything else: as an unknown program's call would be. */
size_t rc__ctl_serve(rc_server *srv, rc__wctx *w, rc_svc_req *req, uint32_t xid, size_t max)
{
	static const uint32_t noted = 0;
	rc__conn *c = w->conn;

	if (req->rq_vers != RC__CTL_VERS) {
		uint32_t range[2] = {RC__CTL_VERS, RC__CTL_VERS};
		return rc__reply_simple(w, max, xid, false, RC__PROG_MISMATCH, range, 2);
	}
	if (req->rq_proc == 0)
		return rc__reply_simple(w, max, xid, false, RC__SUCCESS, NULL, 0);
	if (req->rq_proc != RC__CTL_NOTICE || c == NULL)
		return rc__reply_simple(w, max, xid, false, RC__PROC_UNAVAIL, NULL, 0);
	pthread_mutex_lock(&srv->mu);
	c->notice = true;
	c->notice_xid = xid;
	pthread_mutex_unlock(&srv->mu);
	return rc__reply_simple(w, max, xid, false, RC__SUCCESS, &noted, 1);
}

/*
 * The server's stream connections, the listener kind of TCP, Unix and TLS (accept.c admits
 * them, making room when the table is full or descriptors run out): serving what one
 * connection brings on the one-thread loop (records in, replies gathered in
 * the transport's output queue) or with worker threads (the worker section: a connection's
 * calls as jobs), their replies' ways out (sinks, reply.h), and ending them.
 * rc__conn_event is the one entry the loops use for a connection's event, in either mode.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "runtime/core/rpc.h"
#include "runtime/core/testpoint.h"
#include "runtime/server/server_internal.h"
#include "runtime/server/listener.h"

static void rc__conn_unhold(rc_server *srv, rc__conn *c);

/* A REPLY read on c goes to the back channel that sent its call (true), if backchan/ is in. */
static inline bool rc__conn_route(rc_server *srv, rc__conn *c, const void *msg, size_t len)
{
	const rc__back_hooks *b = rc__back_hooks_of(srv);

	return b != NULL && b->route(c, msg, len);
}


/* ---- the inbound budget (rc_server_limits.max_inbound_bytes) ------------------------------
 * srv->inbound counts the bytes the server holds for requests not yet served: each
 * connection's partial record (c->incount, brought up to date at the end of each turn), the
 * requests copied out as jobs (queued, running or parked) until they are served, and the
 * argument copies of deferred requests until their answers (defer.c). At the
 * budget, a connection inside a record of RC__INBOUND_BIG bytes or more is not read
 * (c->memheld) -- checked before each read of a turn, with its growth since its last turn --
 * and the sweeper closes it once stalled past stall_ms; connections sending small complete
 * calls go on being served. When the count falls under 7/8 of the budget, the connections
 * left waiting are read again (rc__inbound_room). All under srv->mu but the reads' checks
 * (relaxed: a turn overshoots by at most one read).
 */
#define RC__INBOUND_BIG ((size_t)64 << 10)

/* Whether c, with `in` bytes of a partial record buffered, must not read more for the
 * budget. */
static bool rc__inbound_over(const rc_server *srv, const rc__conn *c, size_t in)
{
	size_t held = atomic_load_explicit(&srv->inbound, memory_order_relaxed);

	if (in < RC__INBOUND_BIG)
		return false;
	if (in > c->incount)
		held += in - c->incount;
	return held >= RC__LIM(srv, max_inbound_bytes);
}

/* listener.h (srv->inbound_room): the connections that wait for the budget, read again
 * once under 7/8 of it (under srv->mu). */
void rc__inbound_room(rc_server *srv)
{
	if (!srv->memwait || atomic_load_explicit(&srv->inbound, memory_order_relaxed) >=
	                         srv->lim.max_inbound_bytes / 8 * 7)
		return;
	srv->memwait = false;
	for (rc__conn *c = srv->conns; c != NULL; c = c->next)
		if (c->memheld)
			rc__conn_unhold(srv, c);
}

/* c's partial record now holds `in` bytes: the count follows (under srv->mu). */
static void rc__inbound_set(rc_server *srv, rc__conn *c, size_t in)
{
	if (in >= c->incount) {
		rc__inbound_add(srv, in - c->incount);
		c->incount = in;
	} else {
		size_t d = c->incount - in;
		c->incount = in;
		rc__inbound_sub(srv, d);
	}
}

/* Let go of c's parked requests, never dispatched (it closes; under srv->mu). */
static void rc__park_free(rc_server *srv, rc__conn *c)
{
	size_t bytes = c->parkbytes;

	while (c->park != NULL) {
		rc__job *j = c->park;
		c->park = j->next;
		free(j);
	}
	c->park_tail = NULL;
	c->nparked = 0;
	c->parkbytes = 0;
	rc__inbound_sub(srv, bytes);
}

/* Unlink c from the server, take it out of epoll, close its transport and output descriptor
 * and free it (under srv->mu; nobody else may hold it). */
void rc__conn_close(rc_server *srv, rc__conn *c)
{
	/* under srv->mu */
	if (c->prev)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	srv->nconns--;
	if (c->end != RC__CONN_LIVE)
		srv->ndoomed--;
	if (c->end == RC__CONN_EVICTED)
		srv->nevicting--;
	if (srv->life != NULL)
		srv->life->closed(srv, c); /* the hook's CLOSE, told once the lock is dropped */
	rc__conn_back(srv, detach, c); /* its handle and back channels (backchan.c) let go of it */
	rc__park_free(srv, c);
	rc__inbound_sub(srv, c->incount); /* its partial record goes with it */
	c->incount = 0;
	rc__disarm(srv, c->tp);
	if (c->outfd >= 0) {
		epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->outfd, NULL);
		close(c->outfd);
	}
	c->tp->vt->close(c->tp);
	pthread_mutex_destroy(&c->wmu);
	if (c->taken) {
		/* a loop's thread may still hold an event of it from before a back channel's
		 * caller took it: kept for the next connection, never freed while the server
		 * lives, so that event finds a connection that is not ARMED (or, reused, one it
		 * reads spuriously) rather than freed memory */
		c->state = RC__CONN_DEAD;
		c->next = srv->conn_pool;
		srv->conn_pool = c;
	} else {
		free(c);
	}
	srv->room_freed(srv); /* (accept.c's: listeners waiting for room) */
}

/* Arm c for events again (under srv->mu): one-shot when it is served as jobs (worker threads,
 * or a deferral or a handle on the one-thread loop), else level-triggered as the one-thread
 * loop keeps it. False: epoll refused. */
static bool rc__conn_rearm(rc_server *srv, rc__conn *c, uint32_t events)
{
	if (srv->threads > 1 || atomic_load(&c->jobmode))
		return rc__arm(srv, EPOLL_CTL_MOD, c->tp, c, events | EPOLLONESHOT);
	if (!rc__arm(srv, EPOLL_CTL_MOD, c->tp, c, events))
		return false;
	c->armed = events;
	return true;
}

/*
 * Ask for a connection to be closed (under srv->mu): shut the socket down, so that its next
 * event (at once, or when the worker serving it re-arms it) finds it closed and its worker
 * frees it. Only a connection's own event handler frees it, so no thread can be left holding a
 * freed one. Counted in srv->ndoomed until rc__conn_close.
 */
void rc__conn_doom(rc_server *srv, rc__conn *c)
{
	if (c->end == RC__CONN_LIVE) {
		srv->ndoomed++;
		c->end = RC__CONN_DOOMED;
	}
	c->tp->vt->shutdown(c->tp, true);
	if (c->state == RC__CONN_HELD && c->memheld) {
		/* unread for the budget, so no event would come: armed, its handler sees the end */
		c->memheld = false;
		c->state = RC__CONN_ARMED;
		if (!rc__conn_rearm(srv, c, EPOLLIN | EPOLLRDHUP))
			c->tp->vt->shutdown(c->tp, true);
	}
}

/*
 * Send a reply on a connection (the connection is ours while busy, or its write lock is held).
 * With more requests to serve (more), it is gathered in the transport's output queue to leave
 * with the next send or flush, so pipelined calls are answered with one write for many
 * replies; otherwise it goes now, with whatever is queued, as far as the socket takes it (the
 * rest stays queued). False: the connection is broken or memory ran out.
 */
bool rc__conn_reply(rc__conn *c, unsigned char *msg, size_t len, bool more)
{
	return c->tp->vt->send(c->tp, msg, len, NULL,
	                       RC_TPF_DONTWAIT | (more ? RC_TPF_MORE : 0)) == RC_OK;
}

/*
 * The one-thread loop's way out for c's replies (ctx: the rc__conn, ours while busy): a reply
 * with more requests already here joins the output queue (rc__conn_reply); the last of a batch
 * goes with everything queued, as far as the socket takes it now (the rest stays queued, for
 * EPOLLOUT); a gathered one goes behind what is queued. False: c is broken.
 */
static inline bool rc__conn_sink_send(void *ctx, const rc__out *o)
{
	rc__conn *c = ctx;
	bool broken = false;

	if (o->seg != NULL) {
		/* sent from inside the serve step: its routine may have taken the connection's
		 * handle (jobmode), and a back channel's caller may be sending on it now from
		 * another thread, under the write lock -- so this send takes it too (a gathered
		 * reply is big: the lock costs nothing beside it) */
		bool ok;
		pthread_mutex_lock(&c->wmu);
		ok = c->tp->vt->sendv(c->tp, o->msg, o->len, o->seg, o->nseg, RC_TPF_DONTWAIT) ==
		     RC_OK;
		pthread_mutex_unlock(&c->wmu);
		return ok;
	}
	if (!rc__conn_reply(c, o->msg, o->len, o->more))
		return false;
	return o->more || rc__conn_outq(c) == 0 || rc__conn_flush(c, &broken) || !broken;
}

const rc__sink_ops rc__conn_sink = {rc__conn_sink_send, NULL, NULL, NULL};

/* listener.h: rc__serve for a request of connection c, replies gathered through gs where
 * the transport can. */
size_t rc__serve_conn(rc_server *srv, rc__wctx *w, rc__conn *c, const void *msg, size_t len,
                      uint64_t t_rcv, const rc__sink *gs, bool *broken)
{
	size_t rlen;

	w->gsink = c->tp->vt->sendv != NULL ? gs : NULL;
	w->gsent = 0;
	w->conn = c;
	w->later = &rc__conn_later;
	rlen = rc__serve(srv, w, msg, len, NULL, false, t_rcv, c->tp);
	w->conn = NULL;
	w->gsink = NULL;
	*broken = w->gsent < 0;
	return rlen;
}

/* Flush queued output without blocking. True when all of it went out. False with *broken on
 * error. */
bool rc__conn_flush(rc__conn *c, bool *broken)
{
	rc_status st = c->tp->vt->flush(c->tp, 0);

	*broken = st != RC_OK && st != RC_AGAIN;
	return st == RC_OK;
}

/* request.h: serve a probe now; reply (flushed, with whatever was queued before it);
 * then start TLS if the reply promised it. Under c->wmu: jobs may be replying. */
bool rc__conn_probe(rc_server *srv, rc__wctx *w, rc__conn *c, const void *msg, size_t len)
{
	size_t rlen;
	bool ok = true, broken = false;

	w->starttls = false; /* rc__serve sets it when its reply promises TLS */
	rlen = rc__serve(srv, w, msg, len, NULL, false, rc__trace_t0(srv), c->tp);

	pthread_mutex_lock(&c->wmu);
	if (rlen > 0)
		ok = rc__reply_leave(srv, w, rc__conn_sink_send, c, rlen, NULL, false);
	else if (rc__conn_outq(c) > 0 && !rc__conn_flush(c, &broken) && broken)
		ok = false; /* (what was queued before it goes first) */
	if (ok && w->starttls)
		ok = c->tp->vt->starttls != NULL && c->tp->vt->starttls(c->tp, srv->tls) == RC_OK;
	pthread_mutex_unlock(&c->wmu);
	pthread_mutex_lock(&srv->mu); /* the sweeper reads them under it (from any thread) */
	c->last_active = rc__now();
	c->partial_since = 0; /* the probe is whole; the handshake's own time starts now */
	if (ok && w->starttls) { /* bounded by stall_ms, not idle_ms, until it ends */
		c->handshake_until = c->last_active + (int64_t)srv->lim.stall_ms * 1000000;
		c->shaking = true;
	}
	pthread_mutex_unlock(&srv->mu);
	return ok;
}

/* Socket reads a turn makes at most (rc__conn_next): one busy peer cannot hold the loop. */
#define RC__TURN_READS 16

/* The next complete request on a connection: RC_OK, RC_AGAIN (none yet, or RC__TURN_READS
 * reads made this turn: level-triggered epoll brings us back for the rest), RC_TOOMANY (it is
 * inside a big record at the inbound budget: not read), or the transport's error. */
rc_status rc__conn_next(rc_server *srv, rc__conn *c, int *reads, void **msg, size_t *len)
{
	rc_status st;
	size_t in = c->tp->vt->buffered(c->tp);

	if (in == 0 && (*reads)++ >= RC__TURN_READS)
		return RC_AGAIN;
	if (__builtin_expect(in >= RC__INBOUND_BIG, 0) && rc__inbound_over(srv, c, in) &&
	    !rc__tp_ahead(c->tp))
		return RC_TOOMANY;
	st = c->tp->vt->recv(c->tp, msg, len, NULL, RC_TPF_DONTWAIT | RC_TPF_STEP);
	if (c->shaking && (st == RC_OK || st == RC_AGAIN) && rc__conn_secure(c->tp, NULL)) {
		/* the TLS handshake has ended (in this receive or the flush before it): from now
		 * on the connection is idle or not like any other (the sweeper takes it up) */
		c->shaking = false;
		atomic_store_explicit(&c->handshake_end, rc__now(), memory_order_relaxed);
	}
	return st;
}

/*
 * Serve what a connection has: flush queued output, then serve every complete record, reading
 * more while there is room. At most RC__TURN_READS reads per event, so one busy peer cannot
 * hold the loop; complete records already buffered are always served before leaving (nothing
 * would wake us for them), unless replies are backed up: a peer that does not read its
 * replies is not read from until they drain (bounded memory), and those records are served
 * after the flush.
 */
static void rc__conn_serve(rc_server *srv, rc__wctx *w, rc__conn *c, uint32_t events)
{
	const rc__sink sink = {&rc__conn_sink, c};
	bool broken = false, memstop = false;
	int reads = 0, served = 0;

	(void)events;
	if (rc__conn_outq(c) > 0 && !rc__conn_flush(c, &broken) && broken)
		goto dead;
	for (;;) {
		void *msg;
		size_t len, rlen;
		rc_status st;
		bool more;

		if (rc__conn_outq(c) >= RC__OUT_HIGH) {
			/* a batch of replies is ready, or the peer is slow to read: send first, and
			 * stop reading while it does not take them (bounded memory) */
			if (!rc__conn_flush(c, &broken) && (broken || rc__conn_outq(c) >= RC__OUT_HIGH))
				break;
		}
		st = rc__conn_next(srv, c, &reads, &msg, &len);
		if (st == RC_AGAIN) {
			c->lone = served <= 1;
			break;
		}
		if (st == RC_TOOMANY) {
			memstop = true;
			break;
		}
		if (st != RC_OK)
			goto dead; /* closed, reset, or a record over the cap */
		if (rc__is_tls_probe(msg, len)) {
			/* not a completed request: a connection still shaking hands may be evicted */
			if (!rc__conn_probe(srv, w, c, msg, len))
				goto dead;
			continue;
		}
		served++;
		uint64_t t_rcv = rc__trace_t0(srv);
		c->last_active = rc__now();
		c->completed = true; /* one thread: nothing reads it concurrently */
		c->partial_since = 0; /* a record completed: the stall clock starts again */
		rlen = rc__serve_conn(srv, w, c, msg, len, t_rcv, &sink, &broken);
		if (broken)
			goto dead;
		if (atomic_load(&c->jobmode)) {
			/* a request was deferred, or a routine took the connection's handle to call
			 * back on it: from now on replies and calls may leave from any thread, under
			 * the write lock -- this reply (if the routine answered) too */
			if (rlen > 0) {
				pthread_mutex_lock(&c->wmu);
				if (!rc__reply_leave(srv, w, rc__conn_sink_send, c, rlen, NULL, false))
					c->tp->vt->shutdown(c->tp, true); /* its next event ends it */
				pthread_mutex_unlock(&c->wmu);
			}
			/* its turn on this loop is over: the loop thread's input buffer goes back
			 * (kept, it would leak with the thread's exit) */
			if (c->tp->vt->park != NULL)
				c->tp->vt->park(c->tp);
			rc__conn_to_jobs(srv, c);
			return;
		}
		/* more requests already here (bytes buffered, or messages a transport holds whole,
		 * as QUIC's pipes): batch */
		more = c->tp->vt->buffered(c->tp) > 0 || rc__tp_ahead(c->tp);
		if (rlen > 0 && !rc__reply_leave(srv, w, rc__conn_sink_send, c, rlen, NULL, more))
			goto dead;
		if (rlen == 0 && !more && rc__conn_outq(c) > 0 && !rc__conn_flush(c, &broken) &&
		    broken)
			goto dead;
		/* one request an event: stop here (records already read are served first) */
		if (!more && rc__conn_outq(c) == 0 && rc__lone_skip(&c->lone))
			break;
	}
	if (broken || (rc__conn_outq(c) > 0 && !rc__conn_flush(c, &broken) && broken))
		goto dead;
	/* a peer stuck inside a record (or not reading replies) is reaped after stall_ms */
	size_t in = c->tp->vt->buffered(c->tp);
	rc__conn_stall_clock(c, in, rc__conn_outq(c));
	if (c->tp->vt->park != NULL) /* its turn is over: the thread's input buffer goes back */
		c->tp->vt->park(c->tp);
	pthread_mutex_lock(&srv->mu);
	c->state = RC__CONN_ARMED;
	rc__inbound_set(srv, c, in);
	if (__builtin_expect(memstop, 0) && rc__inbound_over(srv, c, in)) {
		/* inside a big record at the budget: unread until there is room (or its stall) */
		srv->memwait = true;
		__atomic_add_fetch(&srv->n_inbound_waits, 1, __ATOMIC_RELAXED);
		c->state = RC__CONN_HELD;
		c->memheld = true;
		c->armed = 0; /* one-shot with nothing asked: a hang-up is reported once, dropped */
		if (!rc__arm(srv, EPOLL_CTL_MOD, c->tp, c, EPOLLONESHOT)) {
			pthread_mutex_unlock(&srv->mu);
			goto dead;
		}
		pthread_mutex_unlock(&srv->mu);
		return;
	}
	c->memheld = false;
	{
		size_t pending = rc__conn_outq(c);
		uint32_t want = pending >= RC__OUT_HIGH ? EPOLLOUT
		                : pending > 0           ? (EPOLLIN | EPOLLRDHUP | EPOLLOUT)
		                                        : (EPOLLIN | EPOLLRDHUP);
		/* one-shot descriptors are re-armed every time; others only when interest changes */
		if (srv->threads > 1 || want != c->armed) {
			if (!rc__arm(srv, EPOLL_CTL_MOD, c->tp, c, want)) {
				pthread_mutex_unlock(&srv->mu);
				goto dead; /* it could never be served again */
			}
			c->armed = want;
		}
	}
	pthread_mutex_unlock(&srv->mu);
	return;
dead:
	pthread_mutex_lock(&srv->mu);
	rc__conn_close(srv, c);
	pthread_mutex_unlock(&srv->mu);
	rc__connlife_drain(srv);
}

/* listener.h: mark c busy, then serve it here or, with worker threads, as jobs. */
void rc__conn_event(rc_server *srv, rc__wctx *w, rc__conn *c, uint32_t events)
{
	bool doomed;

	pthread_mutex_lock(&srv->mu);
	if (c->state != RC__CONN_ARMED) {
		/* an event taken before a back channel's caller took the connection (see the
		 * section on them): whoever reads it now re-arms it, or it has ended */
		pthread_mutex_unlock(&srv->mu);
		return;
	}
	c->state = RC__CONN_BUSY;
	doomed = c->end != RC__CONN_LIVE;
	pthread_mutex_unlock(&srv->mu);
	if (doomed)
		events |= EPOLLHUP;
	if (srv->threads > 1 || atomic_load(&c->jobmode))
		rc__conn_serve_mt(srv, w, c);
	else
		rc__conn_serve(srv, w, c, events);
}

/* ---- worker threads: a connection's calls served in parallel ------------------------------
 * With worker threads, the calls on one connection run in parallel, as calls on different
 * connections do: the thread that takes a connection's event (its reader) copies out the
 * complete records it can read, re-arms the connection at once (so calls that arrive while
 * these run are read by another worker), queues all but the first as jobs -- the job eventfd,
 * level-triggered and non-zero while the queue is not empty, wakes the waiting workers -- and
 * serves the first itself. Replies go out in the order they are ready, under the connection's
 * write lock: straight to the socket or, when it is full, into the output queue, which a dup
 * of the socket armed for EPOLLOUT drains; small replies of a pipelined batch are gathered and
 * sent together (rc__job_run).
 *
 * At most RC__CONN_JOBS requests (RC__CONN_JOB_BYTES bytes, or one request) of one connection
 * are read and unanswered at a time, and none are read while RC__OUT_HIGH reply bytes wait:
 * the connection is then left disarmed (held), and whoever brings it back under both limits
 * re-arms it. Only the reader ends a connection; it is freed by whoever drops its last
 * reference (reader, job or output handler), so a job still running never finds it gone.
 */
/* Re-arm connection c for events (under srv->mu): one-shot, as every connection served as
 * jobs is (a worker thread's, or one of the one-thread loop that deferred a request). */
static bool rc__conn_arm(rc_server *srv, rc__conn *c, uint32_t events)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = events | EPOLLONESHOT;
	ev.data.ptr = c;
	return epoll_ctl(srv->epfd, EPOLL_CTL_MOD, rc__tp_pollfd(c->tp), &ev) == 0;
}

/* listener.h: as rc__conn_unref, under srv->mu. */
void rc__conn_unref_locked(rc_server *srv, rc__conn *c)
{
	if (atomic_fetch_sub(&c->refs, 1) == 1)
		rc__conn_close(srv, c);
}

/* Drop one reference to c; the last one closes and frees it (takes srv->mu). */
static void rc__conn_unref(rc_server *srv, rc__conn *c)
{
	if (atomic_fetch_sub(&c->refs, 1) == 1) {
		pthread_mutex_lock(&srv->mu);
		rc__conn_close(srv, c);
		pthread_mutex_unlock(&srv->mu);
		rc__connlife_drain(srv);
	}
}

/* Whether connection c with `jobs` requests of `bytes` read and unanswered may dispatch no
 * more (its caps). */
static inline bool rc__jobs_full(unsigned jobs, size_t bytes)
{
	return jobs >= RC__CONN_JOBS || (jobs > 0 && bytes >= RC__CONN_JOB_BYTES);
}

/* Requests c may still dispatch before its deferral cap (under srv->mu): each one read may
 * be deferred. */
static unsigned rc__defer_room_of(const rc_server *srv, const rc__conn *c)
{
	uint64_t used = (uint64_t)c->deferred + c->jobs;

	if (rc__defer_full(srv, c) || used >= srv->lim.max_deferred_conn)
		return 0;
	return (unsigned)(srv->lim.max_deferred_conn - used);
}

/* Whether c is at a cap on dispatching its requests (under srv->mu): jobs, deferred requests,
 * queued output (pending). */
static bool rc__conn_capped(const rc_server *srv, const rc__conn *c, size_t pending)
{
	return rc__jobs_full(c->jobs, c->jobbytes) || rc__defer_full(srv, c) ||
	       pending >= RC__OUT_HIGH;
}

/* Whether c may park more requests (under srv->mu, or its reader). */
static inline bool rc__park_room(const rc_server *srv, const rc__conn *c, size_t more)
{
	return c->parkbytes + more < RC__LIM(srv, max_parked_conn);
}

/* listener.h: reply bytes waiting in a connection's output queue (takes c->wmu). */
size_t rc__conn_pending(rc__conn *c)
{
	size_t pending;

	pthread_mutex_lock(&c->wmu);
	pending = rc__conn_outq(c);
	pthread_mutex_unlock(&c->wmu);
	return pending;
}

/*
 * ---- Replies are always read ------------------------------------------------------------
 * The invariant (docs/runtime.md): a connection on which calls back wait for replies is never
 * left unread because of its request caps. A connection at its caps (jobs, deferred requests,
 * queued output) is normally held -- not read, so TCP pushes back on the peer. But while its
 * back channels have calls in flight (rc__conn_backwait), the replies to them may sit in the
 * stream behind requests the caps keep it from reading; so it goes on reading, and requests
 * past the caps are parked on c (in order, copied, not dispatched) up to max_parked_conn
 * bytes, and dispatched as room frees. At that budget reading stops, and the calls back in
 * flight fail at once with RC_TOOMANY (the back hooks' starve): nothing waits for a reply that
 * cannot be read, and new calls back fail at once too until room frees (c->parkfull).
 *
 * What c's reader does at the end of a turn (rc__conn_plan): hold it, arm it for reading, or
 * arm it to come back at once (work already here: records in its buffer, parked requests with
 * room to dispatch).
 */
enum { RC__PLAN_HOLD, RC__PLAN_READ, RC__PLAN_NOW };

/*
 * The plan for c (under srv->mu). For a connection with back channels (backchan.c) it raises
 * c->held first and reads inflight (rc__conn_backwait) after: every call a back channel sends
 * raises inflight, then reads c->held -- so either the plan here counts that call (and reads
 * on), or that call sees c held and re-arms it (rc__conn_poke). *starve: held with calls back
 * in flight and its parking budget spent -- the caller fails them (the back hooks' starve).
 */
static int rc__conn_plan(rc_server *srv, rc__conn *c, size_t pending, bool *starve)
{
	bool back = atomic_load_explicit(&c->handle, memory_order_relaxed) != NULL;
	bool capped = rc__conn_capped(srv, c, pending);

	*starve = false;
	if (c->memheld) { /* the inbound budget (rc__conn_next): replies behind the record too */
		*starve = back && rc__conn_backwait(c);
		return RC__PLAN_HOLD;
	}
	if (back) {
		atomic_store(&c->held, true);
		atomic_thread_fence(memory_order_seq_cst); /* then inflight (rc__conn_backwait) */
	}
	if (capped && back && rc__conn_backwait(c)) {
		if (rc__park_room(srv, c, 0)) {
			capped = false; /* read on, parking: replies to calls back are behind */
		} else {
			*starve = true;
			atomic_store(&c->parkfull, true);
		}
	}
	if (capped)
		return RC__PLAN_HOLD;
	if (back)
		atomic_store(&c->held, false);
	atomic_store_explicit(&c->parkfull, false, memory_order_relaxed);
	/* parked requests may now be dispatched, with nothing on the socket to raise EPOLLIN:
	 * ask for EPOLLOUT too, which an open socket raises at once */
	if (c->park != NULL && !rc__conn_capped(srv, c, pending))
		return RC__PLAN_NOW;
	return RC__PLAN_READ;
}

/* Arm c as plan says (under srv->mu; not HOLD). */
static void rc__conn_arm_plan(rc_server *srv, rc__conn *c, int plan)
{
	c->state = RC__CONN_ARMED;
	if (!rc__conn_arm(srv, c, EPOLLIN | EPOLLRDHUP | (plan == RC__PLAN_NOW ? EPOLLOUT : 0)))
		c->tp->vt->shutdown(c->tp, true); /* cannot be served: its jobs end it */
}

/* Re-arm a held connection that is back under its limits, or one whose parked requests now
 * have room (under srv->mu). */
static void rc__conn_unhold(rc_server *srv, rc__conn *c)
{
	bool starve;
	int plan;

	if (c->state == RC__CONN_HELD && c->memheld) {
		if (!atomic_load(&c->jobmode) && srv->threads <= 1) {
			/* the one-thread loop's, level-triggered */
			c->memheld = false;
			c->state = RC__CONN_ARMED;
			if (!rc__conn_rearm(srv, c, EPOLLIN | EPOLLRDHUP | EPOLLOUT))
				c->tp->vt->shutdown(c->tp, true);
			return;
		}
		c->memheld = false; /* its reader looks again */
	}
	if (c->state == RC__CONN_ARMED && c->park != NULL) {
		/* reading for replies, requests parked: dispatch them now if there is room */
		plan = rc__conn_plan(srv, c, rc__conn_pending(c), &starve);
		if (plan == RC__PLAN_NOW)
			rc__conn_arm_plan(srv, c, plan);
		return;
	}
	if (c->state != RC__CONN_HELD)
		return;
	plan = rc__conn_plan(srv, c, rc__conn_pending(c), &starve);
	if (plan == RC__PLAN_HOLD) {
		if (starve)
			rc__conn_back(srv, starve, c);
		return;
	}
	atomic_store_explicit(&c->held, false, memory_order_relaxed);
	/* complete records may wait in the reader's buffer since it was held, with nothing on
	 * the socket to raise EPOLLIN */
	rc__conn_arm_plan(srv, c, c->tp->vt->buffered(c->tp) > 0 ? RC__PLAN_NOW : plan);
}

/* The connection broke while sending (under srv->mu): shut it down so that its reader, woken
 * now if it was held, ends it. */
static void rc__conn_broken(rc_server *srv, rc__conn *c)
{
	c->tp->vt->shutdown(c->tp, true);
	if (c->state == RC__CONN_HELD) {
		c->state = RC__CONN_ARMED;
		atomic_store_explicit(&c->held, false, memory_order_relaxed);
		(void)rc__conn_arm(srv, c, EPOLLIN | EPOLLRDHUP); /* shut down: the event, or
			the sweeper, ends it */
	}
}

/* A job or the output handler is done with c (called under srv->mu, which it releases): shut
 * c down if sending broke, else re-arm it if it was held and is back under its limits; then
 * drop the caller's reference. */
static void rc__conn_done(rc_server *srv, rc__conn *c, bool broken)
{
	if (broken)
		rc__conn_broken(srv, c);
	else
		rc__conn_unhold(srv, c);
	pthread_mutex_unlock(&srv->mu);
	rc__conn_unref(srv, c);
}

/* Arm the output descriptor, which then holds a reference of its own (under c->wmu, not
 * armed, by a holder of a reference). False: no descriptor. */
static bool rc__conn_arm_out(rc_server *srv, rc__conn *c)
{
	struct epoll_event ev;
	int op = EPOLL_CTL_MOD;

	if (c->outfd < 0) {
		if ((c->outfd = fcntl(rc__tp_pollfd(c->tp), F_DUPFD_CLOEXEC, 0)) < 0)
			return false;
		op = EPOLL_CTL_ADD;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLOUT | EPOLLONESHOT;
	ev.data.ptr = &c->outev;
	if (epoll_ctl(srv->epfd, op, c->outfd, &ev) != 0)
		return false;
	atomic_fetch_add(&c->refs, 1);
	c->out_armed = true;
	return true;
}

/* listener.h: send what a connection's output queue holds, as far as the socket takes it;
 * arm the output descriptor for the rest (under c->wmu). False: the connection is broken. */
bool rc__conn_push_out(rc_server *srv, rc__conn *c)
{
	bool broken = false;

	if (c->out_armed || rc__conn_outq(c) == 0)
		return true; /* nothing to send, or the output descriptor's handler will */
	if (!rc__conn_flush(c, &broken) && broken)
		return false;
	return rc__conn_outq(c) == 0 || rc__conn_arm_out(srv, c);
}

/* listener.h */
bool rc__conn_poke(rc_server *srv, rc__conn *c)
{
	return c->out_armed || rc__conn_arm_out(srv, c);
}

/* The output descriptor is writable (or the socket shut down): drain the queue. */
void rc__conn_out(rc_server *srv, rc__conn *c)
{
	bool broken;

	pthread_mutex_lock(&c->wmu);
	c->out_armed = false; /* this event used up the arming; its reference is dropped below */
	broken = !rc__conn_push_out(srv, c); /* re-armed, with a new reference, if output remains */
	pthread_mutex_unlock(&c->wmu);
	pthread_mutex_lock(&srv->mu);
	rc__conn_done(srv, c, broken);
}

/* A job's connection: its sink's context. */
typedef struct rc__jobconn {
	rc_server *srv;
	rc__conn *c;
} rc__jobconn;

/*
 * A worker's way out for a job's reply. A gathered one (a big one) goes behind what is queued
 * at once, under the connection's write lock, the rest queued and the output descriptor armed
 * for it. Otherwise, while more jobs of the same connection wait in the queue, a reply of up
 * to RC__BATCH_MAX bytes joins the output queue unsent: the job that takes the last of them
 * from the queue sends the batch (rc__job_run's flush_first) before it runs, so pipelined
 * calls get their replies in few sends and none waits behind a long call.
 */
static bool rc__job_send(void *ctx, const rc__out *o)
{
	rc__jobconn *jc = ctx;
	rc__conn *c = jc->c;
	bool ok, more;

	if (o->seg != NULL) {
		pthread_mutex_lock(&c->wmu);
		ok = c->tp->vt->sendv(c->tp, o->msg, o->len, o->seg, o->nseg, RC_TPF_DONTWAIT) ==
		             RC_OK &&
		     rc__conn_push_out(jc->srv, c);
		pthread_mutex_unlock(&c->wmu);
		return ok;
	}
	/* read `queued` and take the write lock before letting go of srv->mu: a job that takes
	 * the last queued one after this sees our reply in the queue when it flushes */
	pthread_mutex_lock(&jc->srv->mu);
	more = c->queued > 0 && o->len <= RC__BATCH_MAX;
	pthread_mutex_lock(&c->wmu);
	pthread_mutex_unlock(&jc->srv->mu);
	/* queued while more come (or behind queued output), else sent; then what is queued goes
	 * out unless more come */
	ok = rc__conn_reply(c, o->msg, o->len, more) && (more || rc__conn_push_out(jc->srv, c));
	pthread_mutex_unlock(&c->wmu);
	return ok;
}

static const rc__sink_ops rc__job_sink = {rc__job_send, NULL, NULL, NULL};

/* Serve one job and send its reply (rc__job_send); drops the job's reference. */
static void rc__job_run(rc_server *srv, rc__wctx *w, rc__job *j, bool flush_first)
{
	rc__conn *c = j->c;
	size_t rlen, len = j->len;
	bool broken = false;
	rc__jobconn jc = {srv, c};
	const rc__sink sink = {&rc__job_sink, &jc};

	if (flush_first) {
		pthread_mutex_lock(&c->wmu);
		broken = !rc__conn_push_out(srv, c);
		pthread_mutex_unlock(&c->wmu);
	}
	/* run even when the reader has since found the peer gone: a peer that shut down only
	 * its sending side still reads the replies to what it sent */
	{
		bool gbroken;

		rlen = rc__serve_conn(srv, w, c, j->msg, j->len, j->t_rcv, broken ? NULL : &sink,
		                      &gbroken);
		broken = broken || gbroken;
	}
	free(j);
	if (rlen > 0 && !broken)
		broken = !rc__reply_leave(srv, w, rc__job_send, &jc, rlen, NULL, false);
	pthread_mutex_lock(&srv->mu);
	c->jobs--;
	c->jobbytes -= len;
	c->last_active = rc__now();
	rc__inbound_sub(srv, len);
	rc__conn_done(srv, c, broken); /* after the counts: re-arming looks at them */
}

/*
 * Serve queued jobs until none is left (the job eventfd is readable, or this thread has just
 * queued some): a worker that finishes one takes the next itself rather than wait for another
 * to wake up, so a batch of short calls costs no more wake-ups than it must.
 */
void rc__job_next(rc_server *srv, rc__wctx *w)
{
	rc__job *j;
	uint64_t count;
	bool last;

	while (!atomic_load(&srv->stop)) {
		pthread_mutex_lock(&srv->mu);
		if ((j = srv->jobq) != NULL) {
			if ((srv->jobq = j->next) == NULL) {
				srv->jobq_tail = NULL;
				/* empty: the eventfd goes quiet until the next push */
				if (read(srv->jobfd, &count, sizeof(count)) < 0) {
					/* cannot happen: it was non-zero while the queue was not empty */
				}
			}
			last = --j->c->queued == 0;
		}
		pthread_mutex_unlock(&srv->mu);
		if (j == NULL)
			break;
		rc__job_run(srv, w, j, last);
	}
}

/*
 * A reader's turn on a connection served as jobs: what it has read so far, and the counts it
 * started from. One turn is one event's (rc__conn_serve_mt), or one wake-up of a back
 * channel's caller reading the connection itself (rc__conn_back_read).
 */
typedef struct rc__turn {
	rc__job *head, **tail; /* the requests to dispatch, in order */
	unsigned n;            /* how many */
	size_t bytes;          /* their size */
	size_t newbytes;       /* of those, read in this turn (the others came off the park) */
	rc__job *phead, **ptail; /* requests read past the caps, to park (rc__conn_backwait) */
	unsigned pn;
	size_t pbytes;
	unsigned inflight;     /* the connection's jobs when the turn began */
	size_t inbytes;        /* and their size */
	unsigned room;         /* requests it may dispatch before its deferral cap */
	bool full;             /* no more may be dispatched: queued output, or parked ones left */
	bool park;             /* past the caps, requests are parked (calls back wait) */
	bool dead, capped, memstop;
	int reads;
} rc__turn;

/* Begin a turn (takes srv->mu): the connection's counts, and the parked requests it now has
 * room to dispatch, first, in order. */
static void rc__turn_begin(rc_server *srv, rc__conn *c, rc__turn *t)
{
	size_t pending = rc__conn_pending(c);

	memset(t, 0, sizeof(*t));
	t->tail = &t->head;
	t->ptail = &t->phead;
	pthread_mutex_lock(&srv->mu);
	t->dead = c->end != RC__CONN_LIVE;
	t->inflight = c->jobs;
	t->inbytes = c->jobbytes;
	/* each request dispatched may be deferred: no more than the cap leaves room for */
	t->room = rc__defer_room_of(srv, c);
	while (c->park != NULL && pending < RC__OUT_HIGH && t->n < t->room &&
	       !rc__jobs_full(t->inflight + t->n, t->inbytes + t->bytes)) {
		rc__job *j = c->park;
		if ((c->park = j->next) == NULL)
			c->park_tail = NULL;
		j->next = NULL;
		c->nparked--;
		c->parkbytes -= j->len;
		*t->tail = j;
		t->tail = &j->next;
		t->n++;
		t->bytes += j->len;
	}
	/* requests read now go behind those still parked */
	t->full = c->park != NULL || pending >= RC__OUT_HIGH;
	t->park = rc__conn_backwait(c);
	pthread_mutex_unlock(&srv->mu);
}

/* Read what the connection has: replies to calls back are routed (backchan.c), requests copied
 * out -- to dispatch, up to the caps; past them, while calls back wait, to park, up to
 * max_parked_conn (the parked bytes are the reader's to read: only it and the turn's begin
 * and end, under srv->mu, change them). A TLS probe is served at once by a loop's reader (w);
 * a back channel's caller (w NULL) cannot serve one, and a probe can only come first on a
 * connection, never after the calls that gave it a back channel: it ends the connection. */
static void rc__turn_read(rc_server *srv, rc__wctx *w, rc__conn *c, rc__turn *t)
{
	rc__job *j;

	while (!t->dead) {
		void *msg;
		size_t len;
		rc_status st;
		bool parking = t->full || rc__jobs_full(t->inflight + t->n, t->inbytes + t->bytes) ||
		               t->n >= t->room;

		if (parking && (!t->park || !rc__park_room(srv, c, t->pbytes))) {
			t->capped = true; /* complete records may be left in the buffer */
			break;
		}
		st = rc__conn_next(srv, c, &t->reads, &msg, &len);
		if (st == RC_AGAIN)
			break;
		if (st == RC_TOOMANY) {
			t->memstop = true; /* inside a big record at the inbound budget */
			break;
		}
		if (st == RC_OK && rc__conn_route(srv, c, msg, len))
			continue; /* a reply to a call back (backchan.c): taken, or dropped */
		if (st == RC_OK && rc__is_tls_probe(msg, len)) {
			/* served here, now: what follows its reply is TLS, not more jobs (a client
			 * must wait for the reply to its probe, so none may be outstanding) */
			if (w == NULL || t->n > 0 || t->inflight > 0 || t->pn > 0 ||
			    !rc__conn_probe(srv, w, c, msg, len)) {
				t->dead = true;
				break;
			}
			continue;
		}
		if (st != RC_OK || (j = malloc(sizeof(*j) + len)) == NULL) {
			t->dead = true; /* closed, reset, a record over the cap, or out of memory */
			break;
		}
		j->next = NULL;
		j->c = c;
		j->t_rcv = rc__trace_t0(srv);
		j->len = len;
		memcpy(j->msg, msg, len);
		if (parking) {
			t->full = true; /* (and every one after it) */
			*t->ptail = j;
			t->ptail = &j->next;
			t->pn++;
			t->pbytes += len;
		} else {
			*t->tail = j;
			t->tail = &j->next;
			t->n++;
			t->bytes += len;
			t->newbytes += len;
		}
	}
	if (c->tp->vt->park != NULL) /* records copied: the input buffer goes back */
		c->tp->vt->park(c->tp);
}

/* The back channels' callers reading connections (rc__conn_back_take): one fewer (under
 * srv->mu; the caller's last touch of the server: its destroy may go on). */
static void rc__back_reader_gone(rc_server *srv)
{
	if (--srv->backreaders == 0)
		pthread_cond_broadcast(&srv->answered);
}

/*
 * End a turn (under srv->mu, which it releases): count the requests read and park those to
 * park, then end the connection (DEAD: its reader's reference goes; parked requests are
 * dispatched, for a peer that only shut its sending side down), hold it (at its caps, or at
 * the inbound budget), or re-arm it -- unless `keep`, a back channel's caller that goes on
 * reading it: then it stays BUSY and unarmed, as long as it is live and would be re-armed.
 * The requests join the job queue, but the first when first is not NULL (the caller serves
 * it: *first). True: the turn ended (the caller is no longer its reader, and c may be gone);
 * false: kept.
 */
static bool rc__turn_end(rc_server *srv, rc__conn *c, rc__turn *t, bool keep, rc__job **first)
{
	rc__job *q;
	bool ended = true, starve = false;
	uint64_t one = 1;
	size_t in;

	if (t->pn > 0) {
		if (c->park_tail != NULL)
			*c->park_tail = t->phead;
		else
			c->park = t->phead;
		c->park_tail = t->ptail;
		c->nparked += t->pn;
		c->parkbytes += t->pbytes;
		__atomic_add_fetch(&srv->n_parked, t->pn, __ATOMIC_RELAXED);
	}
	rc__inbound_add(srv, t->newbytes + t->pbytes);
	if (t->dead && c->park != NULL) { /* reading is over: what it parked runs */
		*t->tail = c->park;
		t->tail = c->park_tail;
		t->n += c->nparked;
		t->bytes += c->parkbytes;
		c->park = NULL;
		c->park_tail = NULL;
		c->nparked = 0;
		c->parkbytes = 0;
	}
	q = t->head;
	if (t->n > 0)
		atomic_fetch_add(&c->refs, t->n);
	c->jobs += t->n;
	c->jobbytes += t->bytes;
	if (t->n > 0 || t->pn > 0) {
		c->last_active = rc__now();
		c->completed = true;
		c->partial_since = 0; /* records completed: the stall clock starts again */
	}
	in = t->dead ? 0 : c->tp->vt->buffered(c->tp);
	rc__inbound_set(srv, c, in);
	if (t->dead) {
		c->state = RC__CONN_DEAD;
		rc__conn_back(srv, hangup, c); /* no reply to a call back can come any more */
		rc__disarm(srv, c->tp);
		/* no more reading; replies still due go out, and the sweeper shuts the rest down
		 * after stall_ms without progress (an armed output descriptor then lets go) */
		c->tp->vt->shutdown(c->tp, false);
	} else {
		size_t pending = rc__conn_pending(c);
		int plan;
		/* a peer stuck inside a record (or not reading replies) is reaped after stall_ms */
		rc__conn_stall_clock(c, in, pending);
		if (t->memstop && rc__inbound_over(srv, c, in)) {
			c->memheld = true; /* unread until the budget has room (rc__inbound_room) */
			srv->memwait = true;
			__atomic_add_fetch(&srv->n_inbound_waits, 1, __ATOMIC_RELAXED);
		}
		plan = rc__conn_plan(srv, c, pending, &starve);
		if (keep && !t->capped && plan != RC__PLAN_HOLD) {
			ended = false; /* still the back channel's caller's */
		} else if (plan == RC__PLAN_HOLD) {
			c->state = RC__CONN_HELD;
		} else {
			/* (jobs finished meanwhile; records left behind need EPOLLOUT to come back) */
			rc__conn_arm_plan(srv, c, t->capped ? RC__PLAN_NOW : plan);
		}
	}
	if (starve)
		rc__conn_back(srv, starve, c); /* its calls back could never get their replies */
	/* a back channel's caller that ends its turn is counted out of srv->backreaders last,
	 * after its last touch of c (below): the server's destroy waits for that count, and
	 * would free c and srv under it */
	bool gone = ended && c->back_reading;
	if (gone)
		c->back_reading = false;
	if (first != NULL && q != NULL) {
		*first = q; /* ours; the rest join the queue */
		q = q->next;
		(*first)->next = NULL;
	}
	if (q != NULL) {
		unsigned k = first != NULL ? t->n - 1 : t->n;
		if (srv->jobq_tail)
			srv->jobq_tail->next = q;
		else
			srv->jobq = q;
		srv->jobq_tail = (rc__job *)((char *)t->tail - offsetof(rc__job, next));
		c->queued += k;
		if (write(srv->jobfd, &one, sizeof(one)) < 0) {
			/* cannot happen: the count stays far below the eventfd's maximum (one
			 * thread: no eventfd, the reader serves the queue itself) */
		}
	}
	pthread_mutex_unlock(&srv->mu);
	if (gone && t->dead) /* (tests: the server's destroy may run here, and must wait) */
		RC__TEST_POINT("conn.back_reader_ends");
	if (t->dead)
		rc__conn_unref(srv, c); /* the reader's reference */
	if (gone) {
		pthread_mutex_lock(&srv->mu);
		rc__back_reader_gone(srv);
		pthread_mutex_unlock(&srv->mu);
	}
	return ended;
}

/* A connection's event with worker threads (the caller has marked it busy). */
void rc__conn_serve_mt(rc_server *srv, rc__wctx *w, rc__conn *c)
{
	rc__turn t;
	rc__job *first = NULL;

	rc__turn_begin(srv, c, &t);
	rc__turn_read(srv, w, c, &t);
	pthread_mutex_lock(&srv->mu); /* the sweeper reads last_active, partial_since under it */
	(void)rc__turn_end(srv, c, &t, false, &first);
	if (first != NULL) {
		rc__job_run(srv, w, first, false);
		rc__job_next(srv, w); /* and what the other workers have not taken yet */
	}
}

/* ---- a back channel's caller reads the connection (backchan.c) ---------------------------
 * A call back made with a blocking receive waits for its reply. Rather than sleep until a
 * loop's thread reads the reply and hands it over -- one thread's wake-up more per call back
 * than a forward call costs -- its caller becomes the connection's reader while it waits, if
 * no thread is reading it (ARMED) and worker threads serve its requests: the connection is
 * disarmed (a loop thread that had already taken its event drops it: see below), and the
 * caller polls the socket and the back channel's eventfd, reads records as a turn does (replies
 * routed, its own among them; requests queued as jobs for the workers), and, when its reply
 * has come, the time is up or the connection is at its caps or gone, ends its turn as a
 * worker's turn ends (re-armed, held or dead). The server's destroy waits for these readers
 * (srv->backreaders), after hanging the connections' back channels up, which wakes them.
 *
 * Taking it cannot know whether a loop's thread has already taken the event of the arming it
 * replaces (epoll_wait returned it, rc__conn_event not yet run). Such an event is harmless:
 * rc__conn_event serves only an ARMED connection (one reader at a time: whoever finds it
 * ARMED; an event dropped for that reason belongs to an arming whose reader re-arms it at the
 * end of its turn), and a connection once taken is never freed while the server lives
 * (rc__conn_close keeps it in srv->conn_pool for the next connection), so the event reads a
 * connection that is not ARMED, or -- reused -- one it serves spuriously (nothing to read:
 * re-armed), never freed memory.
 */

/* listener.h */
bool rc__conn_back_take(rc_server *srv, rc__conn *c)
{
	if (srv->jobfd < 0 || c->state != RC__CONN_ARMED || c->end != RC__CONN_LIVE ||
	    c->back_reading || srv->destroying)
		return false;
	/* out of the epoll set's reach (one-shot, nothing asked): a loop thread that took its
	 * event already finds it BUSY and drops it (rc__conn_event) */
	if (!rc__conn_arm(srv, c, 0))
		return false;
	c->state = RC__CONN_BUSY;
	c->back_reading = true;
	c->taken = true;
	srv->backreaders++;
	return true;
}

/* listener.h */
rc_status rc__conn_back_read(rc_server *srv, rc__conn *c, int wakefd, int64_t deadline)
{
	rc__turn t;

	if (c->tp->vt->buffered(c->tp) == 0) {
		struct pollfd pf[2] = {{rc__tp_pollfd(c->tp), POLLIN | POLLRDHUP, 0},
		                       {wakefd, POLLIN, 0}};
		int ms = -1, n;

		if (deadline >= 0) {
			int64_t left = deadline - rc__now();
			if (left <= 0)
				return RC_AGAIN;
			ms = (int)((left + 999999) / 1000000);
		}
		n = poll(pf, 2, ms);
		if (n == 0)
			return RC_AGAIN;
		if (n < 0 || pf[0].revents == 0)
			return RC_OK; /* interrupted, or woken through the back channel */
	}
	rc__turn_begin(srv, c, &t);
	/* one read from the socket a wake-up (and the records it brought): the caller looks
	 * for its reply after each, and polls again rather than read until EAGAIN */
	t.reads = RC__TURN_READS - 1;
	rc__turn_read(srv, NULL, c, &t);
	if (t.n == 0 && t.pn == 0 && !t.dead && !t.capped && !t.memstop)
		return RC_OK; /* replies only (the usual read): no jobs to queue, still its reader
		                 -- the turn's accounts are settled when it gives the connection back */
	pthread_mutex_lock(&srv->mu);
	return rc__turn_end(srv, c, &t, true, NULL) ? RC_CLOSED : RC_OK;
}

/* listener.h */
void rc__conn_back_give(rc_server *srv, rc__conn *c)
{
	rc__turn t;

	memset(&t, 0, sizeof(t));
	t.tail = &t.head;
	t.ptail = &t.phead;
	pthread_mutex_lock(&srv->mu);
	t.dead = c->end != RC__CONN_LIVE; /* doomed meanwhile: its reader ends it */
	(void)rc__turn_end(srv, c, &t, false, NULL);
}

/* ---- deferred requests (defer.c) ------------------------------------------------------- */

/* listener.h: the one-thread loop served c until a request of it was deferred: from here
 * on c is served as jobs. Send what its batch queued (under its write lock now: the deferred
 * reply may be on its way from another thread), then arm it one-shot, or hold it. */
void rc__conn_to_jobs(rc_server *srv, rc__conn *c)
{
	bool broken;

	pthread_mutex_lock(&c->wmu);
	broken = !rc__conn_push_out(srv, c);
	pthread_mutex_unlock(&c->wmu);
	pthread_mutex_lock(&srv->mu);
	c->state = RC__CONN_ARMED; /* (or, below, HELD or DEAD) */
	if (broken) { /* as a worker's reader ends it: the last reference frees it */
		c->state = RC__CONN_DEAD;
		rc__disarm(srv, c->tp);
		c->tp->vt->shutdown(c->tp, false);
		pthread_mutex_unlock(&srv->mu);
		rc__conn_unref(srv, c);
		return;
	}
	{
		bool starve;
		int plan = rc__conn_plan(srv, c, rc__conn_pending(c), &starve);
		if (plan == RC__PLAN_HOLD)
			c->state = RC__CONN_HELD;
		else
			rc__conn_arm_plan(srv, c, c->tp->vt->buffered(c->tp) > 0 ? RC__PLAN_NOW : plan);
		if (starve)
			rc__conn_back(srv, starve, c);
	}
	pthread_mutex_unlock(&srv->mu);
}

/*
 * A deferred request's way out on its connection, from any thread (ctx: the request). The
 * answer to the connection's only call under way (o->more clear) is sent at once, as an
 * inline reply is: a lone deferred call costs one wake-up more than an inline one (the
 * answering thread's), not two. Otherwise it is queued behind what is queued and the output
 * descriptor armed if it is not yet -- the loop sends the queue when it fires: replies
 * answered in a burst (a pool answering pipelined calls) so leave in one write, as inline
 * ones of a batch do, for one wake-up of the loop (sending each at once costs several times
 * more: measured); a queue grown past the transport's gathering size goes at once.
 */
static bool rc__later_send(void *ctx, const rc__out *o)
{
	rc__req *r = ctx;
	rc__conn *c = r->c;
	bool ok;

	pthread_mutex_lock(&c->wmu);
	if (o->more || c->out_armed) /* part of a burst, or behind queued output */
		ok = rc__conn_reply(c, o->msg, o->len, true) &&
		     (c->out_armed || rc__conn_outq(c) == 0 || rc__conn_arm_out(r->pub.srv, c));
	else /* the connection's only call under way: sent now, no wake-up of the loop */
		ok = rc__conn_reply(c, o->msg, o->len, false) && rc__conn_push_out(r->pub.srv, c);
	pthread_mutex_unlock(&c->wmu);
	return ok;
}

/* The deferred request's answer has left: one deferred request of its connection fewer
 * (counts, re-arming a held connection, the reference). */
static void rc__later_release(void *ctx, bool broken)
{
	rc__req *r = ctx;
	rc_server *srv = r->pub.srv;

	pthread_mutex_lock(&srv->mu);
	r->c->deferred--;
	r->c->last_active = rc__now();
	rc__conn_done(srv, r->c, broken); /* releases srv->mu */
}

/* A request of the connection was deferred (under srv->mu): counted, with a reference; a
 * connection of the one-thread loop is served as jobs from now on (replies may come from
 * other threads). */
static void rc__later_deferred(void *ctx)
{
	rc__req *r = ctx;

	atomic_fetch_add(&r->c->refs, 1);
	r->c->deferred++;
	atomic_store(&r->c->jobmode, true);
}

/* The deferred request is orphaned (under srv->mu): its count and reference go now. */
static void rc__later_orphaned(void *ctx)
{
	rc__req *r = ctx;
	rc__conn *c = r->c;

	c->deferred--;
	if (atomic_fetch_sub(&c->refs, 1) == 1)
		rc__conn_close(r->pub.srv, c);
}

const rc__sink_ops rc__conn_later = {rc__later_send, rc__later_release, rc__later_deferred,
                                     rc__later_orphaned};


/* listener.h: room under the server's cap again: re-arm what it held (srv->defer_room). */
void rc__defer_room(rc_server *srv)
{
	for (rc__conn *c = srv->conns; c != NULL; c = c->next)
		rc__conn_unhold(srv, c);
}

/*
 * Worker jobs: the calls of one stream connection served in parallel by the server's worker
 * threads.
 *
 *
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
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "runtime/rpc.h"
#include "runtime/server_internal.h"
#include "runtime/server_priv.h"

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

/* Drop one reference to c; the last one closes and frees it (takes srv->mu). */
static void rc__conn_unref(rc_server *srv, rc__conn *c)
{
	if (atomic_fetch_sub(&c->refs, 1) == 1) {
		pthread_mutex_lock(&srv->mu);
		rc__conn_close(srv, c);
		pthread_mutex_unlock(&srv->mu);
	}
}

/* Whether a connection with `jobs` requests of `bytes` read and unanswered may read more. */
static inline bool rc__jobs_full(unsigned jobs, size_t bytes)
{
	return jobs >= RC__CONN_JOBS || (jobs > 0 && bytes >= RC__CONN_JOB_BYTES);
}

/* server_priv.h: reply bytes waiting in a connection's output queue (takes c->wmu). */
size_t rc__conn_pending(rc__conn *c)
{
	size_t pending;

	pthread_mutex_lock(&c->wmu);
	pending = rc__conn_outq(c);
	pthread_mutex_unlock(&c->wmu);
	return pending;
}

/* Re-arm a held connection that is back under its limits (under srv->mu). */
static void rc__conn_unhold(rc_server *srv, rc__conn *c)
{
	if (!c->held || c->dead || rc__jobs_full(c->jobs, c->jobbytes) || rc__defer_full(srv, c) ||
	    rc__conn_pending(c) >= RC__OUT_HIGH)
		return;
	c->held = false;
	/* complete records may wait in the reader's buffer with nothing left on the socket to
	 * raise EPOLLIN: ask for EPOLLOUT too, which an open socket raises at once */
	if (!rc__conn_arm(srv, c,
	                  EPOLLIN | EPOLLRDHUP | (c->tp->vt->buffered(c->tp) > 0 ? EPOLLOUT : 0)))
		c->tp->vt->shutdown(c->tp, true); /* cannot be served: its jobs end it */
}

/* The connection broke while sending (under srv->mu): shut it down so that its reader, woken
 * now if it was held, ends it. */
static void rc__conn_broken(rc_server *srv, rc__conn *c)
{
	c->tp->vt->shutdown(c->tp, true);
	if (c->held && !c->dead) {
		c->held = false;
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

/* Send what a connection's output queue holds, as far as the socket takes it; arm the output
 * descriptor for the rest (under c->wmu). False: the connection is broken. */
static bool rc__conn_push_out(rc_server *srv, rc__conn *c)
{
	bool broken = false;

	if (c->out_armed || rc__conn_outq(c) == 0)
		return true; /* nothing to send, or the output descriptor's handler will */
	if (!rc__conn_flush(c, &broken) && broken)
		return false;
	return rc__conn_outq(c) == 0 || rc__conn_arm_out(srv, c);
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

static const rc__sink_ops rc__job_sink = {rc__job_send, NULL};

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

/* A connection's event with worker threads (the caller has marked it busy). */
void rc__conn_serve_mt(rc_server *srv, rc__wctx *w, rc__conn *c)
{
	rc__job *head = NULL, **tail = &head, *j;
	unsigned n = 0, inflight, room;
	size_t bytes = 0, inbytes;
	bool dead = c->doomed, full, capped = false;
	int reads = 0;
	uint64_t one = 1;

	pthread_mutex_lock(&srv->mu);
	inflight = c->jobs;
	inbytes = c->jobbytes;
	/* each request read may be deferred: read no more than the cap leaves room for */
	room = rc__defer_full(srv, c) ? 0 : srv->lim.max_deferred_conn - c->deferred - c->jobs;
	pthread_mutex_unlock(&srv->mu);
	full = room == 0 || rc__conn_pending(c) >= RC__OUT_HIGH;
	while (!dead) {
		void *msg;
		size_t len;
		rc_status st;

		if (full || rc__jobs_full(inflight + n, inbytes + bytes) || n >= room) {
			capped = true; /* complete records may be left in the buffer */
			break;
		}
		st = rc__conn_next(c, &reads, &msg, &len);
		if (st == RC_AGAIN)
			break;
		if (st == RC_OK && rc__is_tls_probe(msg, len)) {
			/* served here, now: what follows its reply is TLS, not more jobs (a client
			 * must wait for the reply to its probe, so none may be outstanding) */
			if (n > 0 || inflight > 0 || !rc__conn_probe(srv, w, c, msg, len)) {
				dead = true;
				break;
			}
			continue;
		}
		if (st != RC_OK || (j = malloc(sizeof(*j) + len)) == NULL) {
			dead = true; /* closed, reset, a record over the cap, or out of memory */
			break;
		}
		j->next = NULL;
		j->c = c;
		j->t_rcv = rc__trace_t0(srv);
		j->len = len;
		memcpy(j->msg, msg, len);
		*tail = j;
		tail = &j->next;
		n++;
		bytes += len;
	}
	if (c->tp->vt->park != NULL) /* records copied: the input buffer goes back */
		c->tp->vt->park(c->tp);
	if (n > 0)
		atomic_fetch_add(&c->refs, n);
	pthread_mutex_lock(&srv->mu); /* the sweeper reads last_active, partial_since under it */
	c->busy = false;
	c->jobs += n;
	c->jobbytes += bytes;
	if (n > 0) {
		c->last_active = rc__now();
		c->completed = true;
		c->partial_since = 0; /* records completed: the stall clock starts again */
	}
	if (dead) {
		c->dead = true;
		rc__disarm(srv, c->tp);
		/* no more reading; replies still due go out, and the sweeper shuts the rest down
		 * after stall_ms without progress (an armed output descriptor then lets go) */
		c->tp->vt->shutdown(c->tp, false);
	} else {
		size_t pending = rc__conn_pending(c);
		/* a peer stuck inside a record (or not reading replies) is reaped after stall_ms */
		rc__conn_stall_clock(c, c->tp->vt->buffered(c->tp), pending);
		if (rc__jobs_full(c->jobs, c->jobbytes) || rc__defer_full(srv, c) ||
		    pending >= RC__OUT_HIGH) {
			c->held = true;
		}
		else if (!rc__conn_arm(srv, c, EPOLLIN | EPOLLRDHUP | (capped ? EPOLLOUT : 0)))
			c->tp->vt->shutdown(c->tp, true); /* cannot be served: its jobs end it */
		/* (jobs finished meanwhile; records left behind need EPOLLOUT to come back) */
	}
	if (n > 1) { /* the first one is ours; the rest join the queue */
		if (srv->jobq_tail)
			srv->jobq_tail->next = head->next;
		else
			srv->jobq = head->next;
		srv->jobq_tail = (rc__job *)((char *)tail - offsetof(rc__job, next));
		head->next = NULL;
		c->queued += n - 1;
		if (write(srv->jobfd, &one, sizeof(one)) < 0) {
			/* cannot happen: the count stays far below the eventfd's maximum */
		}
	}
	pthread_mutex_unlock(&srv->mu);
	if (dead)
		rc__conn_unref(srv, c); /* the reader's reference */
	if (head != NULL) {
		rc__job_run(srv, w, head, false);
		rc__job_next(srv, w); /* and what the other workers have not taken yet */
	}
}

/* ---- deferred requests (defer.c) ------------------------------------------------------- */

/* server_priv.h: a request of c was deferred: it holds a reference; a connection of the
 * one-thread loop becomes one served as jobs (its loop sees jobmode and hands over). */
void rc__conn_deferred(rc_server *srv, rc__conn *c)
{
	(void)srv;
	atomic_fetch_add(&c->refs, 1);
	c->deferred++;
	c->jobmode = true;
}

/* server_priv.h: the one-thread loop served c until a request of it was deferred: from here
 * on c is served as jobs. Send what its batch queued (under its write lock now: the deferred
 * reply may be on its way from another thread), then arm it one-shot, or hold it. */
void rc__conn_to_jobs(rc_server *srv, rc__conn *c)
{
	bool broken;

	pthread_mutex_lock(&c->wmu);
	broken = !rc__conn_push_out(srv, c);
	pthread_mutex_unlock(&c->wmu);
	pthread_mutex_lock(&srv->mu);
	c->busy = false;
	if (broken) { /* as a worker's reader ends it: the last reference frees it */
		c->dead = true;
		rc__disarm(srv, c->tp);
		c->tp->vt->shutdown(c->tp, false);
		pthread_mutex_unlock(&srv->mu);
		rc__conn_unref(srv, c);
		return;
	}
	if (rc__defer_full(srv, c) || rc__conn_pending(c) >= RC__OUT_HIGH)
		c->held = true;
	else if (!rc__conn_arm(srv, c, EPOLLIN | EPOLLRDHUP |
	                                   (c->tp->vt->buffered(c->tp) > 0 ? EPOLLOUT : 0)))
		c->tp->vt->shutdown(c->tp, true); /* cannot be served: its answers end it */
	pthread_mutex_unlock(&srv->mu);
}

/*
 * A deferred request's way out on its connection, from any thread (ctx: the request): queued
 * behind what is queued, and the output descriptor armed if it is not yet -- the loop sends
 * the queue when it fires. Replies answered in a burst (a pool answering pipelined calls) so
 * leave in one write, as inline ones of a batch do, for one wake-up of the loop; a queue grown
 * past the transport's gathering size goes at once.
 */
static bool rc__later_send(void *ctx, const rc__out *o)
{
	rc__req *r = ctx;
	rc__conn *c = r->c;
	bool ok;

	pthread_mutex_lock(&c->wmu);
	ok = rc__conn_reply(c, o->msg, o->len, true) &&
	     (c->out_armed || rc__conn_outq(c) == 0 || rc__conn_arm_out(r->pub.srv, c));
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

const rc__sink_ops rc__conn_later = {rc__later_send, rc__later_release};

/* server_priv.h: one deferred request of c orphaned (under srv->mu, kept). */
void rc__conn_orphaned(rc_server *srv, rc__conn *c)
{
	c->deferred--;
	if (atomic_fetch_sub(&c->refs, 1) == 1)
		rc__conn_close(srv, c);
}

/* server_priv.h: room under the server's cap again: re-arm what it held. */
void rc__defer_room(rc_server *srv)
{
	for (rc__conn *c = srv->conns; c != NULL; c = c->next)
		rc__conn_unhold(srv, c);
}

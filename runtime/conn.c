/*
 * The server's stream connections: accepting them, serving what one connection brings on the
 * one-thread loop (records in, replies gathered in the transport's output queue), and ending
 * them. rc__conn_event is the one entry the loops use for a connection's event; with worker
 * threads it hands the connection to jobs.c.
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
	rc__disarm(srv, c->tp);
	if (c->outfd >= 0) {
		epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->outfd, NULL);
		close(c->outfd);
	}
	c->tp->vt->close(c->tp);
	pthread_mutex_destroy(&c->wmu);
	free(c);
}

/*
 * Ask for a connection to be closed: shut the socket down, so that its next event (at once,
 * or when the worker serving it re-arms it) finds it closed and its worker frees it. Only a
 * connection's own event handler frees it, so no thread can be left holding a freed one.
 */
void rc__conn_doom(rc__conn *c)
{
	c->doomed = true;
	c->tp->vt->shutdown(c->tp, true);
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

/* Flush queued output without blocking. True when all of it went out. False with *broken on
 * error. */
bool rc__conn_flush(rc__conn *c, bool *broken)
{
	rc_status st = c->tp->vt->flush(c->tp, 0);

	*broken = st != RC_OK && st != RC_AGAIN;
	return st == RC_OK;
}

/* The next complete request on a connection: RC_OK, RC_AGAIN (none yet, or 16 reads made this
 * turn: level-triggered epoll brings us back for the rest), or the transport's error. */
rc_status rc__conn_next(rc__conn *c, int *reads, void **msg, size_t *len)
{
	if (c->tp->vt->buffered(c->tp) == 0 && (*reads)++ >= 16)
		return RC_AGAIN;
	return c->tp->vt->recv(c->tp, msg, len, NULL, RC_TPF_DONTWAIT);
}

/*
 * Serve what a connection has: flush queued output, then serve every complete record, reading
 * more while there is room. At most 16 reads per event, so one busy peer cannot hold the loop;
 * complete records already buffered are always served before leaving (nothing would wake us
 * for them), unless replies are backed up: a peer that does not read its replies is not read
 * from until they drain (bounded memory), and those records are served after the flush.
 */
static void rc__conn_serve(rc_server *srv, rc__wctx *w, rc__conn *c, uint32_t events)
{
	bool broken = false;
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
		st = rc__conn_next(c, &reads, &msg, &len);
		if (st == RC_AGAIN) {
			c->lone = served <= 1;
			break;
		}
		if (st != RC_OK)
			goto dead; /* closed, reset, or a record over the cap */
		served++;
		uint64_t t_rcv = rc__trace_t0(srv);
		c->last_active = rc__now();
		c->partial_since = 0; /* a record completed: the stall clock starts again */
		rlen = rc__serve(srv, w, msg, len, NULL, false, t_rcv);
		more = c->tp->vt->buffered(c->tp) > 0; /* more requests already here: batch */
		if (rlen > 0 && !rc__conn_reply(c, rc__encbuf_msg(&w->rb), rlen, more))
			goto dead;
		if (!more && rc__conn_outq(c) > 0 && !rc__conn_flush(c, &broken) && broken)
			goto dead;
		if (rlen > 0 && rc__conn_outq(c) == 0)
			RC__TRACE(srv, RC_TP_SRV_SENT, w->xid); /* sent, not queued */
		/* one request an event: stop here (records already read are served first) */
		if (!more && rc__conn_outq(c) == 0 && rc__lone_skip(&c->lone))
			break;
	}
	if (broken || (rc__conn_outq(c) > 0 && !rc__conn_flush(c, &broken) && broken))
		goto dead;
	/* a peer stuck inside a record (or not reading replies) is reaped after stall_ms */
	if (c->tp->vt->buffered(c->tp) == 0 && rc__conn_outq(c) == 0)
		c->partial_since = 0;
	else if (c->partial_since == 0)
		c->partial_since = rc__now();
	pthread_mutex_lock(&srv->mu);
	c->busy = false;
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
}

/* Accept up to 64 connections from stream listener l; out of descriptors, pause l for 100 ms;
 * over the connection cap, doom the longest-idle connection and refuse this one. */
void rc__accept(rc_server *srv, rc__lsn *l)
{
	for (int i = 0; i < 64; i++) {
		rc_tp *tp;
		rc__conn *c;
		rc_status st = l->tp->vt->accept(l->tp, &tp, srv->lim.max_record);

		if (st == RC_AGAIN)
			break;
		if (st == RC_TOOMANY || st == RC_NOMEM || st == RC_LOCALERROR) {
			/* Out of descriptors: stop accepting for a moment instead of spinning. */
			pthread_mutex_lock(&srv->mu);
			l->paused = true;
			l->resume_at = rc__now() + 100000000LL;
			rc__disarm(srv, l->tp);
			pthread_mutex_unlock(&srv->mu);
			return;
		}
		pthread_mutex_lock(&srv->mu);
		if (srv->nconns >= srv->lim.max_conns) {
			/* Over the cap: close the longest-idle connection to make room. */
			rc__conn *old = NULL;
			for (rc__conn *k = srv->conns; k; k = k->next)
				if (!k->doomed && !k->dead &&
				    (old == NULL || k->last_active < old->last_active))
					old = k;
			if (old != NULL) /* under the lock: once it is released, old may be freed */
				rc__conn_doom(old);
			pthread_mutex_unlock(&srv->mu);
			/* refuse this one; the client retries once the old one is gone */
			tp->vt->close(tp);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (c == NULL) {
			pthread_mutex_unlock(&srv->mu);
			tp->vt->close(tp);
			continue;
		}
		c->kind = RC__EV_CONN;
		c->tp = tp;
		c->outfd = -1;
		c->outev.kind = RC__EV_OUT;
		c->outev.c = c;
		pthread_mutex_init(&c->wmu, NULL);
		atomic_init(&c->refs, 1);
		c->armed = EPOLLIN | EPOLLRDHUP;
		c->last_active = rc__now();
		c->next = srv->conns;
		if (srv->conns)
			srv->conns->prev = c;
		srv->conns = c;
		srv->nconns++;
		if (!rc__arm(srv, EPOLL_CTL_ADD, tp, c, EPOLLIN | EPOLLRDHUP))
			rc__conn_close(srv, c); /* epoll is out of memory: refuse it */
		pthread_mutex_unlock(&srv->mu);
	}
	if (srv->threads > 1 && !l->paused)
		(void)rc__arm(srv, EPOLL_CTL_MOD, l->tp, l, EPOLLIN); /* MOD of a live one: succeeds */
}

/* server_priv.h: mark c busy, then serve it here or, with worker threads, as jobs. */
void rc__conn_event(rc_server *srv, rc__wctx *w, rc__conn *c, uint32_t events)
{
	pthread_mutex_lock(&srv->mu);
	c->busy = true;
	pthread_mutex_unlock(&srv->mu);
	if (c->doomed)
		events |= EPOLLHUP;
	if (srv->threads > 1)
		rc__conn_serve_mt(srv, w, c);
	else
		rc__conn_serve(srv, w, c, events);
}

/*
 * Admission: accepting stream connections (rc__accept), serving one made elsewhere
 * (rc__conn_admit), making room when the connection table is full or descriptors run out
 * (rc__evict), and pausing listeners meanwhile. Above conn.c, whose connections it makes and
 * dooms; conn.c tells it of a closed connection through srv->room_freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "runtime/core/rpc.h"
#include "runtime/server/server_internal.h"
#include "runtime/server/listener.h"

/* ---- admission: accepting connections, and making room for them -----------------------
 *
 * When accept fails for want of descriptors (EMFILE, ENFILE) or the connection table is full
 * (max_conns), the server makes room by closing connections doing no useful work -- those that
 * never completed a request first (oldest first), then the longest idle -- and never one that
 * is being read, has calls running or replies queued (rc__evict). Out of descriptors, a reserve
 * descriptor (/dev/null, srv->reserve_fd) is given up to accept the waiting connection at once
 * while its victims close; the listener then waits, off the epoll set, until a connection
 * closes (rc__room_freed) or 100 ms pass -- never spinning on EMFILE. With nothing to evict it
 * just waits. A fresh client thus gets in however many idle connections hold the table.
 */

#define RC__EVICT_BATCH 16 /* idle connections doomed at once when out of descriptors */
#define RC__EVICT_GRACE 50000000LL /* ns a new connection has to send its first request */

/* Whether c's transport still holds reply bytes the peer has not taken (handed to the kernel,
 * not yet acknowledged). */
static bool rc__conn_unsent(rc__conn *c)
{
	return rc__tp_unacked(c->tp) > 0;
}

/*
 * How good a victim c is to make room for a new connection (under srv->mu): -1 if it must not
 * be closed (doomed or dead already, being read, calls running, replies queued -- in our queue
 * or unsent in the socket's); 0 if it never completed a request and has had RC__EVICT_GRACE
 * to send one; 1 if it completed one and is idle; 2 if it never completed one but was accepted
 * less than RC__EVICT_GRACE ago (its request may be on its way: a fresh client).
 */
static int rc__victim_class(rc__conn *c, int64_t now)
{
	if (c->end != RC__CONN_LIVE || c->state != RC__CONN_ARMED || c->jobs > 0 || c->deferred > 0 ||
	    rc__conn_kept(c) || rc__conn_pending(c) > 0 || rc__conn_unsent(c))
		return -1;
	if (c->completed)
		return 1;
	return now - c->last_active >= RC__EVICT_GRACE ? 0 : 2;
}

/*
 * Doom connections to make room (under srv->mu), the best victims first (rc__victim_class):
 * up to want (at most RC__EVICT_BATCH, and a quarter of the table) of those that never
 * completed a request, oldest first; if there are none, the one longest idle of those that did
 * -- unless connections accepted within RC__EVICT_GRACE are waiting to show what they are,
 * then none, and *retry_at says when the first of them will have had its time (0: none
 * waits). Returns how many were doomed.
 */
static size_t rc__evict(rc_server *srv, size_t want, int64_t *retry_at)
{
	rc__conn *best[RC__EVICT_BATCH];
	int cls[RC__EVICT_BATCH];
	size_t n = 0, done = 0, young = 0;
	int64_t now = rc__now();

	*retry_at = 0;
	if (want > RC__EVICT_BATCH)
		want = RC__EVICT_BATCH;
	if (want > srv->nconns / 4)
		want = srv->nconns / 4 > 0 ? srv->nconns / 4 : 1;
	for (rc__conn *c = srv->conns; c; c = c->next) {
		int k = rc__victim_class(c, now);
		size_t at = n;
		if (k == 2 && young++ == 0)
			*retry_at = c->last_active + RC__EVICT_GRACE; /* the list runs newest first */
		else if (k == 2 && c->last_active + RC__EVICT_GRACE < *retry_at)
			*retry_at = c->last_active + RC__EVICT_GRACE;
		if (k < 0 || k == 2)
			continue;
		/* keep best[] sorted: class, then the oldest last_active */
		while (at > 0 && (cls[at - 1] > k ||
		                  (cls[at - 1] == k && best[at - 1]->last_active > c->last_active)))
			at--;
		if (at >= want)
			continue;
		if (n == want)
			n--; /* the worst falls off */
		memmove(&best[at + 1], &best[at], (n - at) * sizeof(best[0]));
		memmove(&cls[at + 1], &cls[at], (n - at) * sizeof(cls[0]));
		best[at] = c;
		cls[at] = k;
		n++;
	}
	if (n > 0 && cls[0] == 1 && young > 0)
		n = 0; /* idle clients stay while newcomers may still turn out idle */
	for (size_t i = 0; i < n && (cls[i] == 0 || i == 0); i++, done++) {
		rc__conn_doom(srv, best[i]); /* (live before: rc__victim_class) */
		best[i]->end = RC__CONN_EVICTED;
		srv->nevicting++;
	}
	srv->n_evicted += done;
	if (done > 0)
		srv->evicted_at = now;
	return done;
}

/* Take listener l off the epoll set until `until` (at most 100 ms from now) or, with
 * wait_room, until a connection closes first (under srv->mu). */
static void rc__lsn_pause(rc_server *srv, rc__lsn *l, bool wait_room, int64_t until)
{
	int64_t now = rc__now(), wake = atomic_load_explicit(&srv->wake_at, memory_order_relaxed);

	if (!l->paused)
		rc__disarm(srv, l->tp);
	l->paused = true;
	l->wait_room = wait_room;
	l->resume_at = until > now && until < now + 100000000LL ? until : now + 100000000LL;
	if (wake == 0 || l->resume_at < wake)
		atomic_store_explicit(&srv->wake_at, l->resume_at, memory_order_relaxed);
}

/* Put a paused listener back on the epoll set (under srv->mu); if epoll is short of memory,
 * it stays paused for another 100 ms. */
static void rc__lsn_resume(rc_server *srv, rc__lsn *l)
{
	if (!rc__arm(srv, EPOLL_CTL_ADD, l->tp, l, EPOLLIN)) {
		rc__lsn_pause(srv, l, false, 0);
		return;
	}
	l->paused = false;
	l->wait_room = false;
}

/* listener.h: resume the listeners whose pause is over, and note when the next one is due
 * (under srv->mu). */
void rc__lsn_wake(rc_server *srv, int64_t now)
{
	int64_t wake = 0;

	for (size_t i = 0; i < srv->nlsn; i++) {
		rc__lsn *l = srv->lsn[i];
		if (l->paused && now >= l->resume_at)
			rc__lsn_resume(srv, l);
		else if (l->paused && (wake == 0 || l->resume_at < wake))
			wake = l->resume_at;
	}
	wake = srv->aux_tick(srv, now, wake); /* PROXY headers' time, a drain (drain.c) */
	atomic_store_explicit(&srv->wake_at, wake, memory_order_relaxed);
}

/* listener.h: timeout_ms for epoll_wait, shortened to wake up when a paused listener is
 * due. */
int rc__wake_timeout(rc_server *srv, int timeout_ms)
{
	int64_t wake = atomic_load_explicit(&srv->wake_at, memory_order_relaxed), left;

	if (wake == 0)
		return timeout_ms;
	left = (wake - rc__now() + 999999) / 1000000;
	if (left < 0)
		left = 0;
	return timeout_ms < 0 || left < timeout_ms ? (int)left : timeout_ms;
}

/* listener.h: open the reserve descriptor if it is wanted and not held (under srv->mu);
 * failing (out of descriptors) it is tried again when one frees. */
void rc__reserve_take(rc_server *srv)
{
	if (srv->use_reserve && srv->reserve_fd < 0)
		srv->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* listener.h (srv->room_freed) */
void rc__room_freed(rc_server *srv)
{
	rc__reserve_take(srv);
	for (size_t i = 0; i < srv->nlsn; i++)
		if (srv->lsn[i]->paused && srv->lsn[i]->wait_room)
			rc__lsn_resume(srv, srv->lsn[i]);
}

/*
 * Make room for one more connection on listener l (under srv->mu): doom a batch of idle
 * connections (rc__evict) unless victims are still closing (for up to a second: one that
 * lingers does not stop admission for good). True if some were doomed; otherwise l waits for
 * room off the epoll set (rc__lsn_pause) and false.
 */
static bool rc__make_room(rc_server *srv, rc__lsn *l)
{
	int64_t retry_at = 0;

	if ((srv->nevicting == 0 || rc__now() - srv->evicted_at > 1000000000LL) &&
	    rc__evict(srv, RC__EVICT_BATCH, &retry_at) > 0)
		return true;
	rc__lsn_pause(srv, l, true, retry_at);
	return false;
}

/*
 * accept on l failed for want of descriptors. Make room and, if victims were doomed, give up
 * the reserve descriptor to accept the waiting connection now: RC_OK with *out, the caller's
 * to admit. Otherwise the listener waits for room: RC_TOOMANY.
 */
static rc_status rc__accept_nofile(rc_server *srv, rc__lsn *l, rc_tp **out)
{
	rc_status st = RC_TOOMANY;
	bool reserve = false;

	pthread_mutex_lock(&srv->mu);
	srv->n_nofile++;
	if (rc__make_room(srv, l) && srv->reserve_fd >= 0) {
		close(srv->reserve_fd);
		srv->reserve_fd = -1;
		reserve = true;
	} else if (!l->paused) {
		rc__lsn_pause(srv, l, true, 0); /* doomed, but no reserve: wait for them to close */
	}
	pthread_mutex_unlock(&srv->mu);
	if (reserve && (st = l->tp->vt->accept(l->tp, out, srv->lim.max_record)) != RC_OK) {
		pthread_mutex_lock(&srv->mu);
		rc__room_freed(srv); /* nothing came: the reserve back */
		rc__lsn_pause(srv, l, true, 0);
		pthread_mutex_unlock(&srv->mu);
		st = RC_TOOMANY;
	}
	return st;
}

/* The peer of c without its port (the client a PROXY header named, else the socket's peer),
 * for the duplicate cache's key of its calls (under srv->mu, at admission). A unix peer has
 * no address: its family alone (the rest of the key tells local callers apart). */
static void rc__conn_peer(rc__conn *c)
{
	rc_peer *p = &c->peer;
	unsigned len = sizeof(p->ss);

	memset(p, 0, sizeof(*p));
	if (rc__tp_peer(c->tp, &p->ss, &len) != RC_OK)
		return;
	if (p->ss.ss_family == AF_INET)
		((struct sockaddr_in *)&p->ss)->sin_port = 0;
	else if (p->ss.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&p->ss)->sin6_port = 0;
	else if (p->ss.ss_family != AF_UNIX)
		return;
	p->len = (socklen_t)len;
	c->peer_ok = true;
}

/* listener.h: register a connection just accepted, or handed over by the application
 * (rc_server_listen_fd). */
rc_status rc__conn_admit(rc_server *srv, rc_tp *tp)
{
	rc__conn *c;
	rc_status st = RC_OK;

	pthread_mutex_lock(&srv->mu);
	if ((c = srv->conn_pool) != NULL) {
		/* (its kind stays: a loop's thread may read it without the lock) */
		srv->conn_pool = c->next;
		memset((char *)c + offsetof(rc__conn, next), 0, sizeof(*c) - offsetof(rc__conn, next));
		c->taken = true; /* still: an old event of it may be about */
	} else if ((c = calloc(1, sizeof(*c))) == NULL) {
		srv->n_refused++;
		pthread_mutex_unlock(&srv->mu);
		tp->vt->close(tp);
		return RC_NOMEM;
	} else {
		c->kind = RC__EV_CONN;
	}
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
	c->id = ++srv->n_accepted;
	if (srv->drc != NULL && srv->drc_streams_any)
		rc__conn_peer(c); /* the duplicate cache's key of its stream calls */
	if (srv->life != NULL && !srv->life->open(srv, c)) { /* (the hook's OPEN, before it is armed) */
		rc__conn_close(srv, c);
		st = RC_NOMEM;
	} else if (!rc__arm(srv, EPOLL_CTL_ADD, tp, c, EPOLLIN | EPOLLRDHUP)) {
		rc__conn_close(srv, c); /* epoll is out of memory: refuse it */
		st = RC_NOMEM;
	}
	pthread_mutex_unlock(&srv->mu);
	rc__connlife_drain(srv);
	return st;
}

/*
 * listener.h: a listener's event: accept up to 64 connections. A full table (max_conns, not counting
 * connections being closed) makes room first, or leaves the rest waiting in the backlog.
 */
void rc__accept(rc_server *srv, rc__lsn *l)
{
	for (int i = 0; i < 64; i++) {
		rc_tp *tp;
		rc_status st;
		bool room;

		pthread_mutex_lock(&srv->mu);
		room = srv->nconns - srv->ndoomed < srv->lim.max_conns || rc__make_room(srv, l);
		pthread_mutex_unlock(&srv->mu);
		if (!room)
			return; /* paused: the listener is off the epoll set */
		st = l->tp->vt->accept(l->tp, &tp, srv->lim.max_record);
		if (st == RC_AGAIN)
			break;
		if (st == RC_TOOMANY && (errno == EMFILE || errno == ENFILE))
			st = rc__accept_nofile(srv, l, &tp);
		else if (st != RC_OK) {
			/* out of kernel memory: stop accepting for a moment instead of spinning */
			pthread_mutex_lock(&srv->mu);
			rc__lsn_pause(srv, l, false, 0);
			pthread_mutex_unlock(&srv->mu);
		}
		if (st != RC_OK)
			return; /* paused: the listener is off the epoll set */
		if (__builtin_expect(l->proxy, 0))
			srv->proxy_begin(srv, l, tp); /* its PROXY header first (proxy.c) */
		else
			(void)rc__conn_admit(srv, tp);
	}
	if (srv->threads > 1) {
		pthread_mutex_lock(&srv->mu);
		if (!l->paused) /* MOD of a live one: succeeds */
			(void)rc__arm(srv, EPOLL_CTL_MOD, l->tp, l, EPOLLIN);
		pthread_mutex_unlock(&srv->mu);
	}
}

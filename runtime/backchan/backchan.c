/*
 * The back channel, server side: calls from the server to a client over the connection the
 * client made (RFC 8167's bidirectional ONC RPC; NFSv4.1's back channel). The client's side,
 * which answers them, is rc_client_serve (client_serve.c).
 *
 * A connection's handle (rc_server_conn, listener.h) is what the application keeps; a back
 * channel is an ordinary rc_client whose transport is this file's: its sends go into the
 * connection's output under the connection's write lock, as the server's own replies do, and
 * its receives take the replies whoever reads the connection hands over (rc__back_route) --
 * each to the back channel that sent the call its xid names. Whoever: a server loop's thread,
 * or a blocking receive's own thread, which reads the connection itself while it waits when
 * no other thread does (rc__back_read, conn.c's rc__conn_back_take). So the
 * client's every call mode works unchanged, and the back channel's descriptor is an eventfd
 * that is readable while replies wait (or the connection has gone).
 *
 * Lifetimes: the handle holds nothing of the connection's. The connection detaches it when its
 * reading ends or it closes (rc__back_hangup, rc__back_detach, under srv->mu), waking every
 * back channel: calls waiting fail, new ones fail at once. So the application may keep handles
 * and back channels past the request, the connection and the server.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "runtime/core/rpc.h"
#include "runtime/server/listener.h"

#define RC__XW_BITS 65536u /* a back channel's xid window: its last this many calls */
#define RC__BACK_OQ ((size_t)4 << 20) /* output queued past which a blocking send waits */
#define RC__BACK_STALL_NS 30000000000LL /* ... for the peer to take some, at most this long */

/* A reply waiting for the back channel's receive. */
typedef struct rc__bmsg {
	struct rc__bmsg *next;
	size_t len, cap; /* cap: the room of msg */
	_Alignas(16) unsigned char msg[];
} rc__bmsg;

#define RC__BMSG_SPARE ((size_t)512) /* a received reply's buffer up to this kept for the next */

/* A back channel: the transport of a client made by rc_server_conn_backchannel. */
typedef struct rc__back {
	rc_tp tp;                     /* first: the client's transport */
	rc_server_conn *h;            /* a reference */
	struct rc__back *next, *prev; /* h->backs, under h->rmu */
	/* the xids of its calls sent and not yet answered, among the last RC__XW_BITS (under
	 * h->rmu): bit x % RC__XW_BITS for xid x, hi the highest sent */
	uint32_t hi;
	bool xw_used;
	uint8_t *xw;
	uint32_t nout; /* bits set: its part of h->inflight */
	/* the replies handed over and not yet received (under mu) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	rc__bmsg *head, *tail;
	rc__bmsg *cur;  /* the one the last receive returned (valid until the next) */
	rc__bmsg *spare; /* one received before, kept for the next reply routed (cap SPARE) */
	bool hup;       /* the connection has gone: receives end once the queue is empty */
	const char *starved; /* its calls in flight were failed (rc__back_starve): the next
	                        receive with the queue empty says so, with this limit's name */
	unsigned waiting; /* receivers blocked on cv */
	unsigned reading; /* receivers reading the connection themselves (rc__back_read) */
	atomic_bool took; /* the connection's reading taken by a blocking call's send, for the
	                     receive that follows on its thread (rc__back_take, rc__back_claim) */
	struct rc__conn *tc; /* the connection taken */
	bool efd_set;   /* the eventfd's count is not zero */
	atomic_bool shut; /* shut down by the client */
} rc__back;

/* ---- the handle ------------------------------------------------------------------------ */

static void rc__handle_unref(rc_server_conn *h)
{
	if (h != NULL && atomic_fetch_sub(&h->refs, 1) == 1) {
		pthread_mutex_destroy(&h->mu);
		pthread_mutex_destroy(&h->rmu);
		free(h);
	}
}

/* Make the back channel's eventfd readable, if it is not (under b->mu): replies wait, or the
 * connection has gone. A reply handed to a receiver already waiting on cv needs no eventfd
 * (rc__back_route signals it instead); the last reply taken clears it (rc__back_recv). */
static void rc__back_efd(rc__back *b)
{
	uint64_t one = 1;

	if (b->efd_set)
		return;
	if (write(b->tp.fd, &one, sizeof(one)) < 0) {
		/* cannot happen: the count stays far below the eventfd's maximum */
	}
	b->efd_set = true;
}

/* The end (under b->mu): every receiver wakes, and the eventfd stays readable. */
static void rc__back_end(rc__back *b)
{
	rc__back_efd(b);
	pthread_cond_broadcast(&b->cv);
}

/* rc__back_hooks (server/base.h) */
static void rc__back_hangup(rc__conn *c)
{
	rc_server_conn *h = atomic_load(&c->handle);

	if (h == NULL)
		return;
	pthread_mutex_lock(&h->mu);
	if (h->c != NULL) {
		h->c = NULL;
		atomic_store(&h->detached, true);
		pthread_mutex_lock(&h->rmu);
		for (rc__back *b = h->backs; b != NULL; b = b->next) {
			pthread_mutex_lock(&b->mu);
			b->hup = true;
			rc__back_end(b);
			pthread_mutex_unlock(&b->mu);
		}
		pthread_mutex_unlock(&h->rmu);
	}
	pthread_mutex_unlock(&h->mu);
}

/* rc__back_hooks (server/base.h) */
static void rc__back_detach(rc__conn *c)
{
	rc_server_conn *h = atomic_load(&c->handle);

	if (h == NULL)
		return;
	rc__back_hangup(c);
	atomic_store(&c->handle, NULL);
	rc__handle_unref(h); /* the connection's reference */
}

/* rc__back_hooks (server/base.h) */
static void rc__back_starve(rc__conn *c)
{
	rc_server_conn *h = atomic_load(&c->handle);
	const char *why;

	if (h == NULL)
		return;
	why = c->memheld ? "max_inbound_bytes" : "max_parked_conn";
	pthread_mutex_lock(&h->mu);
	pthread_mutex_lock(&h->rmu);
	for (rc__back *b = h->backs; b != NULL; b = b->next) {
		if (b->nout == 0)
			continue;
		/* their replies, if they ever come, are dropped */
		memset(b->xw, 0, RC__XW_BITS / 8);
		atomic_fetch_sub(&h->inflight, b->nout);
		__atomic_add_fetch(&h->srv->n_starved, b->nout, __ATOMIC_RELAXED);
		b->nout = 0;
		pthread_mutex_lock(&b->mu);
		b->starved = why;
		rc__back_end(b);
		pthread_mutex_unlock(&b->mu);
	}
	pthread_mutex_unlock(&h->rmu);
	pthread_mutex_unlock(&h->mu);
}

static bool rc__back_route(rc__conn *c, const void *msg, size_t len);

/* What the server loop asks of the back channel (server/base.h), installed on a server before
 * its first connection handle is made (rc_svc_req_conn). */
static const rc__back_hooks rc__back_hooks_on = {rc__back_route, rc__back_hangup,
                                                 rc__back_detach, rc__back_starve};

/* The detail of calls back failed by rc__back_starve, for the receiving thread. */
static void rc__back_starved_detail(const char *limit)
{
	rc__tp_set_detail("server stopped reading: the peer's requests ahead of the reply "
	                  "reached its %s", limit);
	errno = ENOBUFS;
}

/* The connection a request came on (under srv->mu): while its routine runs, the serving
 * thread's; once deferred, the request's own (until it is answered). NULL: none. */
static rc__conn *rc__req_conn(rc__req *r)
{
	int st = atomic_load(&r->state);

	if (st == RC__REQ_INLINE)
		return r->wc != NULL ? r->wc->conn : NULL;
	return st == RC__REQ_DEFERRED ? r->c : NULL;
}

/* listener.h */
rc_server_conn *rc__conn_handle(rc_server *srv, rc__conn *c)
{
	rc_server_conn *h = atomic_load(&c->handle);

	if (h != NULL || (h = calloc(1, sizeof(*h))) == NULL)
		return h;
	atomic_init(&h->refs, 1); /* the connection's */
	pthread_mutex_init(&h->mu, NULL);
	pthread_mutex_init(&h->rmu, NULL);
	h->srv = srv;
	h->c = c;
	/* the server loop reaches back channels through these from now on */
	atomic_store_explicit(&srv->back, &rc__back_hooks_on, memory_order_release);
	atomic_store(&c->handle, h);
	/* from now on kept true while it is held (rc__conn_plan) */
	atomic_store(&c->held, c->state == RC__CONN_HELD);
	/* calls back leave from any thread, under the write lock: the one-thread loop serves
	 * this connection as jobs from now on, as after a deferral */
	atomic_store(&c->jobmode, true);
	return h;
}

/* server.h */
rc_status rc_svc_req_conn(rc_svc_req *handle, rc_server_conn **out)
{
	rc__req *r = rc__req_of(handle); /* (NULL for a stale handle) */
	rc_svc_req *req = r != NULL ? &r->pub : NULL;
	rc_server *srv;
	rc__conn *c;
	rc_server_conn *h;
	rc_status st = RC_OK;

	if (out != NULL)
		*out = NULL;
	if (req == NULL || out == NULL)
		return RC_INVAL;
	if (req->dgram)
		return RC_NOTSUPP; /* a datagram: nothing to call back on */
	if (atomic_load(&r->state) == RC__REQ_ORPHANED)
		return RC_CANTSEND; /* let go of by its server, which may be gone: not touched */
	srv = req->srv;
	pthread_mutex_lock(&srv->mu);
	c = rc__req_conn(r);
	if (c == NULL) {
		int rs = atomic_load(&r->state);
		/* in-process (no connection), or a request its server has let go of */
		st = rs == RC__REQ_INLINE || rs == RC__REQ_DEFERRED ? RC_NOTSUPP : RC_CANTSEND;
	} else if (c->end != RC__CONN_LIVE || c->state == RC__CONN_DEAD) {
		st = RC_CANTSEND; /* closing: no handle now */
	} else if ((h = rc__conn_handle(srv, c)) == NULL) {
		st = RC_NOMEM;
	} else {
		atomic_fetch_add(&h->refs, 1);
		*out = h;
	}
	pthread_mutex_unlock(&srv->mu);
	return st;
}

/* server.h */
void rc_server_conn_release(rc_server_conn *sc)
{
	rc__handle_unref(sc);
}

/* server.h */
bool rc_server_conn_open(const rc_server_conn *sc)
{
	return sc != NULL && !atomic_load(&((rc_server_conn *)sc)->detached);
}

/* ---- the xid window ---------------------------------------------------------------------- */

static inline bool rc__xw_get(const rc__back *b, uint32_t x)
{
	return (b->xw[(x % RC__XW_BITS) >> 3] >> (x & 7)) & 1;
}

/* Set or clear xid x's bit, counting it in b->nout and the handle's inflight (under h->rmu). */
static inline void rc__xw_put(rc__back *b, uint32_t x, bool on)
{
	uint8_t m = (uint8_t)(1u << (x & 7));
	uint8_t *p = &b->xw[(x % RC__XW_BITS) >> 3];

	if (((*p & m) != 0) == on)
		return;
	*p = on ? (uint8_t)(*p | m) : (uint8_t)(*p & ~m);
	if (on) {
		b->nout++;
		atomic_fetch_add(&b->h->inflight, 1);
	} else {
		b->nout--;
		atomic_fetch_sub(&b->h->inflight, 1);
	}
}

/* A call with this xid is being sent (under h->rmu). Moving the window's top forward forgets
 * the calls that fall out of it: their bits are the new ones' (a reply to one is dropped). */
static void rc__xw_sent(rc__back *b, uint32_t x)
{
	if (!b->xw_used) {
		b->xw_used = true;
		b->hi = x;
	} else if ((int32_t)(x - b->hi) > 0) {
		uint32_t d = x - b->hi;
		if (d >= RC__XW_BITS) {
			memset(b->xw, 0, RC__XW_BITS / 8);
			atomic_fetch_sub(&b->h->inflight, b->nout);
			b->nout = 0;
		} else
			for (uint32_t k = b->hi + 1; k != x; k++)
				rc__xw_put(b, k, false);
		b->hi = x;
	} else if (b->hi - x >= RC__XW_BITS) {
		return; /* older than the window (a thread that took its xid long ago): untracked */
	}
	rc__xw_put(b, x, true);
}

/* Whether a reply with this xid is b's, taking it out of the window (under h->rmu). */
static bool rc__xw_take(rc__back *b, uint32_t x)
{
	if (!b->xw_used || b->hi - x >= RC__XW_BITS || !rc__xw_get(b, x))
		return false;
	rc__xw_put(b, x, false);
	return true;
}

/* rc__back_hooks (server/base.h) */
static bool rc__back_route(rc__conn *c, const void *msg, size_t len)
{
	rc_server_conn *h = atomic_load_explicit(&c->handle, memory_order_acquire);
	const unsigned char *m = msg;
	uint32_t xid;

	if (h == NULL || len < 8 || rc__ld32(m + 4) != RC__REPLY)
		return false;
	xid = rc__ld32(m);
	pthread_mutex_lock(&h->rmu);
	for (rc__back *b = h->backs; b != NULL; b = b->next) {
		rc__bmsg *q;
		if (!rc__xw_take(b, xid))
			continue;
		/* the back channel asked for it, so the queue holds at most a reply per call it
		 * has in flight; short of memory the reply is lost (its call times out) */
		pthread_mutex_lock(&b->mu);
		if ((q = b->spare) != NULL && q->cap >= len) {
			b->spare = NULL; /* the last reply received: room enough */
		} else if ((q = malloc(sizeof(*q) + (len < RC__BMSG_SPARE ? RC__BMSG_SPARE : len))) !=
		           NULL) {
			q->cap = len < RC__BMSG_SPARE ? RC__BMSG_SPARE : len;
		}
		if (q != NULL) {
			q->next = NULL;
			q->len = len;
			memcpy(q->msg, m, len);
			bool waiting;
			if (b->tail != NULL)
				b->tail->next = q;
			else
				b->head = q;
			b->tail = q;
			if (!(waiting = b->waiting > 0) && b->reading == 0)
				rc__back_efd(b);
			pthread_mutex_unlock(&b->mu);
			/* the receiver waiting is woken after the lock is let go (b lives: it is
			 * listed, and rmu is held), so that it does not wake only to wait for it */
			if (waiting)
				pthread_cond_signal(&b->cv);
		} else {
			pthread_mutex_unlock(&b->mu);
		}
		break;
	}
	pthread_mutex_unlock(&h->rmu);
	return true; /* a reply: the back channel's, or nobody's (dropped) */
}

/* ---- the back channel's transport --------------------------------------------------------- */

/* The connection's queued output (under h->mu), or 0 once detached. */
static size_t rc__back_queued(rc_server_conn *h)
{
	size_t n;

	if (h->c == NULL)
		return 0;
	pthread_mutex_lock(&h->c->wmu);
	n = rc__conn_outq(h->c);
	pthread_mutex_unlock(&h->c->wmu);
	return n;
}

/* Send what the connection queued, as far as the socket takes it (under h->mu, attached).
 * False: broken (the connection is shut down: its reader ends it). */
static bool rc__back_push(rc_server_conn *h)
{
	rc__conn *c = h->c;
	bool ok;

	pthread_mutex_lock(&c->wmu);
	ok = rc__conn_push_out(h->srv, c);
	pthread_mutex_unlock(&c->wmu);
	if (!ok)
		c->tp->vt->shutdown(c->tp, true);
	return ok;
}

/*
 * Wait (in 1 ms naps, without locks) until the connection's queued output is at most `below`,
 * the connection goes or the back channel is shut down, pushing it out meanwhile; up to
 * timeout_ms (negative: until the peer has taken nothing for RC__BACK_STALL_NS). RC_OK, RC_AGAIN
 * (time is up), RC_CANTSEND (the connection went, or stalled: it is shut down).
 */
static rc_status rc__back_drain(rc__back *b, size_t below, int timeout_ms)
{
	rc_server_conn *h = b->h;
	int64_t start = rc__now(), moved = start;
	size_t last = SIZE_MAX;

	for (;;) {
		rc_status st = RC_OK;
		size_t q;

		pthread_mutex_lock(&h->mu);
		if (h->c == NULL || atomic_load(&b->shut) || !rc__back_push(h)) {
			st = RC_CANTSEND;
		} else if ((q = rc__back_queued(h)) > below) {
			int64_t now = rc__now();
			if (q < last) {
				last = q;
				moved = now;
			}
			if (timeout_ms >= 0 && now - start >= (int64_t)timeout_ms * 1000000)
				st = RC_AGAIN;
			else if (timeout_ms < 0 && now - moved >= RC__BACK_STALL_NS) {
				h->c->tp->vt->shutdown(h->c->tp, true); /* a peer that reads nothing */
				st = RC_CANTSEND;
			} else {
				st = RC_INPROGRESS;
			}
		}
		pthread_mutex_unlock(&h->mu);
		if (st != RC_INPROGRESS) {
			if (st == RC_CANTSEND)
				errno = EPIPE;
			return st;
		}
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
}

/*
 * Take the reading of c, h's connection (under h->mu), for a blocking receive on this thread
 * (rc__back_read), if no other thread reads it and worker threads serve its requests (conn.c's
 * rc__conn_back_take). srv->mu comes before h->mu: tried, not waited for (busy: a loop's thread
 * is at work on the server, and the reply comes the usual way). True: taken.
 */
static bool rc__back_take(rc_server_conn *h, rc__conn *c)
{
	rc_server *srv = h->srv;
	bool mine = false;

	if (pthread_mutex_trylock(&srv->mu) == 0) {
		mine = rc__conn_back_take(srv, c);
		pthread_mutex_unlock(&srv->mu);
	}
	return mine;
}

/* Whether a blocking call's send took the connection's reading for this thread. */
static inline bool rc__back_took(rc__back *b)
{
	return atomic_load_explicit(&b->took, memory_order_relaxed);
}

/* The connection a blocking call's send took (b->took, set and cleared by that thread
 * alone): now its receive's, or to give back. */
static rc__conn *rc__back_claim(rc__back *b)
{
	atomic_store_explicit(&b->took, false, memory_order_relaxed);
	return b->tc;
}

/* Give back the reading a blocking call's send took (b->took) when no receive follows. */
static void rc__back_untake(rc__back *b)
{
	rc__conn *c = rc__back_claim(b);

	rc__conn_back_give(b->h->srv, c);
}

static rc_status rc__back_send(rc_tp *tp, unsigned char *msg, size_t len, const rc_peer *to,
                               unsigned flags)
{
	rc__back *b = (rc__back *)tp;
	rc_server_conn *h = b->h;
	rc_status st = RC_OK;
	bool more = (flags & RC_TPF_MORE) != 0, queued = false;

	(void)to;
	pthread_mutex_lock(&h->mu);
	if (h->c == NULL || atomic_load(&b->shut)) {
		st = RC_CANTSEND;
		errno = EPIPE;
	} else if (atomic_load(&h->c->parkfull)) {
		/* its reading has stopped at max_parked_conn: no reply could be read */
		rc__back_starved_detail("max_parked_conn");
		__atomic_add_fetch(&h->srv->n_starved, 1, __ATOMIC_RELAXED);
		st = RC_TOOMANY;
	} else {
		rc__conn *c = h->c;
		if ((flags & RC_TPF_REPLY_NEXT) && !rc__back_took(b) && rc__back_take(h, c)) {
			b->tc = c;
			atomic_store_explicit(&b->took, true, memory_order_relaxed);
		}
		if (len >= 4) {
			pthread_mutex_lock(&h->rmu);
			rc__xw_sent(b, rc__ld32(msg));
			pthread_mutex_unlock(&h->rmu);
		}
		pthread_mutex_lock(&c->wmu);
		/* a call in flight keeps the connection read past its caps (parking,
		 * rc__conn_backwait): a connection held is re-armed by its output event, so that
		 * the reply is read (inflight is raised above, held read after: see
		 * rc__conn_plan). Not only for the first call in flight: the reply to the one
		 * before may have been read meanwhile, and the plan made without it */
		if (atomic_load(&c->held))
			(void)rc__conn_poke(h->srv, c);
		/* queued behind the server's own replies, or sent now with whatever is queued */
		st = c->tp->vt->send(c->tp, msg, len, NULL, RC_TPF_DONTWAIT | (more ? RC_TPF_MORE : 0));
		if (st == RC_OK && !more && !rc__conn_push_out(h->srv, c))
			st = RC_CANTSEND;
		queued = rc__conn_outq(c) >= RC__BACK_OQ;
		pthread_mutex_unlock(&c->wmu);
		if (st == RC_CANTSEND)
			c->tp->vt->shutdown(c->tp, true); /* broken: its reader ends it */
	}
	pthread_mutex_unlock(&h->mu);
	if (st != RC_OK && rc__back_took(b))
		rc__back_untake(b); /* no receive of a reply follows */
	/* a blocking send (the client's, past its own queue's limit) waits for the peer to take
	 * the backlog, as a socket's blocking send would -- while the loops read the connection
	 * (a peer blocked on its own writes reads nothing until they are read) */
	if (st == RC_OK && !(flags & (RC_TPF_DONTWAIT | RC_TPF_MORE)) && queued) {
		if (rc__back_took(b))
			rc__back_untake(b);
		st = rc__back_drain(b, RC__BACK_OQ, -1);
	}
	return st;
}

static rc_status rc__back_flush(rc_tp *tp, int timeout_ms)
{
	return rc__back_drain((rc__back *)tp, 0, timeout_ms);
}

/* What the client sees of the connection's queued output: nothing below RC__BACK_OQ (the
 * server's loops send it, and the back channel's descriptor cannot ask for POLLOUT), the
 * backlog past it -- so a client that keeps starting calls to a peer that reads nothing
 * blocks in its send (rc__back_drain) instead of growing the queue without bound. */
static size_t rc__back_outq(rc_tp *tp)
{
	rc__back *b = (rc__back *)tp;
	size_t n;

	pthread_mutex_lock(&b->h->mu);
	n = rc__back_queued(b->h);
	pthread_mutex_unlock(&b->h->mu);
	return n >= RC__BACK_OQ ? n : 0;
}

/* Whether the calling thread is the server's only serving thread (under h->mu, attached): it
 * alone reads the connection, so a blocking receive there would wait for a reply nobody
 * reads. */
static bool rc__back_alone(rc_server_conn *h)
{
	return atomic_load(&h->srv->loop_alone) && pthread_equal(h->srv->loop_thread, pthread_self());
}

/*
 * A blocking receive with no reply waiting: read the connection on this thread until one
 * comes (or deadline, on rc__now()'s clock; negative: none), if no other thread reads it and
 * worker threads serve its requests (conn.c's rc__conn_back_take); else nothing, and the
 * caller waits for a loop's thread to hand the reply over. It saves that thread's wake-up:
 * a call back then costs what a forward call does. A blocking call's send took the reading
 * already when it could (b->took, RC_TPF_REPLY_NEXT): taken after the send, the reply could
 * come first -- the peer runs at once on one core -- and wake a loop's thread to read it.
 * The replies this thread routes to its own back channel need no eventfd (reading), the
 * receive after this takes them. Under b->mu (let go while it reads). Returns the connection
 * this thread still reads, for the caller to give back (rc__conn_back_give, *srvp) once it has let
 * go of b->mu; NULL if it did not take it, or its turn ended.
 */
static rc__conn *rc__back_read(rc__back *b, int64_t deadline, rc_server **srvp)
{
	rc_server_conn *h = b->h;
	rc_server *srv;
	rc__conn *c;
	bool mine;

	/* (c and srv live while it is ours: the server's destroy waits for it) */
	if (rc__back_took(b)) { /* taken by the call's send, on this thread */
		c = rc__back_claim(b);
		srv = h->srv;
		mine = true;
	} else {
		pthread_mutex_unlock(&b->mu);
		pthread_mutex_lock(&h->mu);
		c = h->c;
		srv = h->srv;
		mine = c != NULL && rc__back_take(h, c);
		pthread_mutex_unlock(&h->mu);
		pthread_mutex_lock(&b->mu);
		if (!mine)
			return NULL;
	}
	b->reading++;
	while (b->head == NULL && !b->hup && !atomic_load(&b->shut) && b->starved == NULL) {
		rc_status st;
		pthread_mutex_unlock(&b->mu);
		st = rc__conn_back_read(srv, c, b->tp.fd, deadline);
		pthread_mutex_lock(&b->mu);
		if (st == RC_CLOSED)
			mine = false; /* its turn ended: at its caps, or gone */
		if (st != RC_OK)
			break;
	}
	b->reading--;
	*srvp = srv;
	return mine ? c : NULL;
}

static rc_status rc__back_recv(rc_tp *tp, void **msg, size_t *len, rc_peer *from,
                               unsigned flags)
{
	rc__back *b = (rc__back *)tp;
	rc_status st = RC_OK;
	struct timespec until;
	int ms = tp->rcvtimeo_ms;
	rc__conn *give = NULL; /* the connection this thread read, to give back */
	rc_server *srv = NULL;

	(void)from;
	if (!(flags & RC_TPF_DONTWAIT) && !rc__back_took(b)) {
		/* (taken by the send: worker threads serve, this is not the only one) */
		bool alone;
		pthread_mutex_lock(&b->h->mu);
		alone = b->h->c != NULL && rc__back_alone(b->h);
		pthread_mutex_unlock(&b->h->mu);
		pthread_mutex_lock(&b->mu);
		alone = alone && b->head == NULL;
		pthread_mutex_unlock(&b->mu);
		if (alone) {
			rc__tp_set_detail("a blocking call back from the server's only serving thread, "
			                  "which alone reads its reply: start the call (rc_call_start) "
			                  "and answer the request later, or serve with worker threads");
			errno = EDEADLK;
			return RC_CANTRECV;
		}
	}
	if (ms > 0) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += ms / 1000;
		until.tv_nsec += (long)(ms % 1000) * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
	}
	pthread_mutex_lock(&b->mu);
	if (b->cur != NULL && b->spare == NULL && b->cur->cap == RC__BMSG_SPARE)
		b->spare = b->cur; /* for the next reply */
	else
		free(b->cur);
	b->cur = NULL;
	if (!(flags & RC_TPF_DONTWAIT) && b->head == NULL && !b->hup && !atomic_load(&b->shut) &&
	    b->starved == NULL) {
		give = rc__back_read(b, ms > 0 ? rc__now() + (int64_t)ms * 1000000 : -1, &srv);
	} else if (rc__back_took(b)) { /* taken by the send, not needed: the reply is here */
		give = rc__back_claim(b);
		srv = b->h->srv;
	}
	if (give != NULL && b->head == NULL) {
		/* its time is up, or the channel shut: the connection goes back before any wait */
		pthread_mutex_unlock(&b->mu);
		rc__conn_back_give(srv, give);
		give = NULL;
		pthread_mutex_lock(&b->mu);
	}
	while (b->head == NULL && !b->hup && !atomic_load(&b->shut) && b->starved == NULL) {
		if (flags & RC_TPF_DONTWAIT) {
			st = RC_AGAIN;
			break;
		}
		int w;
		b->waiting++;
		w = ms > 0 ? pthread_cond_timedwait(&b->cv, &b->mu, &until)
		           : pthread_cond_wait(&b->cv, &b->mu);
		b->waiting--;
		if (w != 0 && b->head == NULL) {
			st = RC_AGAIN;
			break;
		}
	}
	if (st == RC_OK && b->head != NULL) {
		rc__bmsg *q = b->head;
		if ((b->head = q->next) == NULL)
			b->tail = NULL;
		b->cur = q;
		*msg = q->msg;
		*len = q->len;
	} else if (st == RC_OK && b->starved != NULL && !b->hup && !atomic_load(&b->shut)) {
		/* its calls in flight could get no reply: they fail, the channel stays */
		rc__back_starved_detail(b->starved);
		b->starved = NULL;
		st = RC_TOOMANY;
	} else if (st == RC_OK) {
		st = RC_CLOSED; /* the connection has gone (or the client shut it down) */
	}
	if (b->head == NULL && b->efd_set && !b->hup && !atomic_load(&b->shut) &&
	    b->starved == NULL) {
		uint64_t n;
		if (read(tp->fd, &n, sizeof(n)) < 0) {
			/* already zero: nothing was waiting */
		}
		b->efd_set = false;
	} else if (b->head != NULL && b->waiting == 0 && b->reading == 0) {
		rc__back_efd(b); /* more came while this thread read: readable for the next */
	}
	pthread_mutex_unlock(&b->mu);
	if (give != NULL)
		rc__conn_back_give(srv, give); /* (after b->mu: srv->mu comes first) */
	return st;
}

static void rc__back_set_max(rc_tp *tp, size_t n)
{
	tp->max_msg = n; /* the server's cap on the connection's records stays as it is */
}

static size_t rc__back_buffered(rc_tp *tp)
{
	(void)tp;
	return 0; /* replies come whole */
}

static bool rc__back_hung_up(rc_tp *tp)
{
	rc__back *b = (rc__back *)tp;

	return atomic_load(&b->h->detached) || atomic_load(&b->shut);
}

static void rc__back_shutdown(rc_tp *tp, bool both)
{
	rc__back *b = (rc__back *)tp;

	(void)both;
	atomic_store(&b->shut, true);
	pthread_mutex_lock(&b->mu);
	rc__back_end(b);
	pthread_mutex_unlock(&b->mu);
}

/* Free b (not listed on its handle, or no longer) and let go of its handle's reference. */
static void rc__back_free(rc__back *b)
{
	rc_server_conn *h = b->h;

	while (b->head != NULL) {
		rc__bmsg *q = b->head;
		b->head = q->next;
		free(q);
	}
	free(b->cur);
	free(b->spare);
	free(b->xw);
	close(b->tp.fd);
	pthread_cond_destroy(&b->cv);
	pthread_mutex_destroy(&b->mu);
	free(b);
	rc__handle_unref(h); /* the back channel's reference */
}

static void rc__back_close(rc_tp *tp)
{
	rc__back *b = (rc__back *)tp;
	rc_server_conn *h = b->h;

	pthread_mutex_lock(&h->rmu);
	if (b->prev)
		b->prev->next = b->next;
	else
		h->backs = b->next;
	if (b->next)
		b->next->prev = b->prev;
	atomic_fetch_sub(&h->inflight, b->nout);
	pthread_mutex_unlock(&h->rmu);
	rc__back_free(b);
}

/* Whether the connection runs under TLS; its peer's identity while it is attached. */
static bool rc__back_secure(rc_tp *tp, const rc_tls_peer **peer)
{
	rc__back *b = (rc__back *)tp;
	bool on = false;

	*peer = NULL;
	pthread_mutex_lock(&b->h->mu);
	if (b->h->c != NULL && b->h->c->tp->vt->secure != NULL)
		on = b->h->c->tp->vt->secure(b->h->c->tp, peer);
	pthread_mutex_unlock(&b->h->mu);
	return on;
}

static const rc_tp_vt rc__back_vt = {
	.send = rc__back_send,
	.flush = rc__back_flush,
	.outq = rc__back_outq,
	.recv = rc__back_recv,
	.set_max_record = rc__back_set_max,
	.buffered = rc__back_buffered,
	.hung_up = rc__back_hung_up,
	.shutdown = rc__back_shutdown,
	.close = rc__back_close,
	.secure = rc__back_secure,
};

/* A back channel is never reconnected: once its connection has gone, a call fails at once. */
static rc_status rc__back_connect(const rc_uri *u, size_t max_record, int64_t deadline,
                                  rc_tp **out)
{
	(void)u, (void)max_record, (void)deadline;
	*out = NULL;
	rc__tp_set_detail("the connection this back channel called over has closed");
	errno = EPIPE;
	return RC_CANTSEND;
}

static const rc_tp_kind rc__back_kind = {"back", RC_TPP_STREAM | RC_TPP_BACK, rc__back_connect,
                                         NULL, NULL};

/* server.h */
rc_status rc_server_conn_backchannel(rc_server_conn *sc, uint32_t prog, uint32_t vers,
                                     rc_client **out)
{
	rc__back *b;
	rc_status st;

	if (out != NULL)
		*out = NULL;
	if (sc == NULL || out == NULL)
		return RC_INVAL;
	if ((b = calloc(1, sizeof(*b))) == NULL || (b->xw = calloc(1, RC__XW_BITS / 8)) == NULL) {
		free(b);
		return RC_NOMEM;
	}
	if ((b->tp.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		free(b->xw);
		free(b);
		return RC_NOMEM;
	}
	b->tp.vt = &rc__back_vt;
	b->tp.props = rc__back_kind.props;
	b->tp.rcvtimeo_ms = -1;
	pthread_mutex_init(&b->mu, NULL);
	rc__cond_init_mono(&b->cv);
	b->h = sc;
	atomic_fetch_add(&sc->refs, 1); /* the back channel's (rc__back_close lets it go) */
	pthread_mutex_lock(&sc->mu);
	if (sc->c == NULL) {
		st = RC_CANTSEND;
	} else {
		b->tp.max_msg = sc->srv->lim.max_record;
		pthread_mutex_lock(&sc->rmu);
		b->next = sc->backs;
		if (sc->backs)
			sc->backs->prev = b;
		sc->backs = b;
		pthread_mutex_unlock(&sc->rmu);
		st = RC_OK;
	}
	pthread_mutex_unlock(&sc->mu);
	if (st == RC_OK && (st = rc__client_open_tp(out, &rc__back_kind, &b->tp, prog, vers)) == RC_OK)
		return RC_OK;
	if (st == RC_CANTSEND)
		rc__back_free(b); /* never listed */
	else
		rc__back_close(&b->tp);
	return st;
}

/* server.h */
rc_status rc_svc_req_backchannel(rc_svc_req *req, uint32_t prog, uint32_t vers,
                                 rc_client **out)
{
	rc_server_conn *sc;
	rc_status st;

	if (out != NULL)
		*out = NULL;
	if (out == NULL)
		return RC_INVAL;
	if ((st = rc_svc_req_conn(req, &sc)) != RC_OK)
		return st;
	st = rc_server_conn_backchannel(sc, prog, vers, out);
	rc_server_conn_release(sc); /* the client holds its own */
	return st;
}

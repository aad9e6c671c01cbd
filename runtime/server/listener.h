/*
 * Internal to the server's files (base.h has the picture): the listener kinds -- stream
 * connections (conn.c: states, handles, the one-thread loop and worker threads), datagram
 * listeners (dgram.c), in-process delivery (direct.c) -- the top of the server below its
 * life cycle (server.c).
 */
#ifndef RC_SERVER_LISTENER_H
#define RC_SERVER_LISTENER_H

#include "runtime/server/request.h"

/*
 * A stream connection's state (c->state, under srv->mu). Lock order: srv->mu, then c->wmu
 * (a connection's output), never the reverse; rc__defer_mu (defer.c) before both.
 *
 *   ARMED  in the epoll set, waiting for an event. Only here may the sweeper or the admission
 *          code pick it to close (rc__victim_class), and then only through its end (below).
 *   BUSY   a thread handles its event (rc__conn_event); one at a time (one-shot arming). Or
 *          a back channel's caller reads it while it waits for its reply (back_reading:
 *          rc__conn_back_take disarmed it; it ends its turn as a worker's reader does).
 *   HELD   worker threads: left disarmed at the end of a turn because its jobs, deferred
 *          requests or queued output are at their caps; whoever brings it back under them
 *          (a job's end, a deferred answer, room under max_deferred, drained output) re-arms
 *          it (rc__conn_unhold), as does a broken send (rc__conn_broken) so its reader ends it.
 *   DEAD   worker threads: reading is over (closed, reset, doomed, a bad record); replies still
 *          due go out, and the last reference (reader, job, output handler, deferred request)
 *          frees it.
 *
 *   ARMED -> BUSY          its event, or a back channel's caller takes it
 *   BUSY  -> ARMED         the turn ends, re-armed (one thread: always, unless closed)
 *   BUSY  -> HELD          the turn ends at a cap (worker threads, or after a deferral)
 *   HELD  -> ARMED         back under the caps, or a broken send
 *   BUSY  -> DEAD          the reader ends it (worker threads)
 *   BUSY  -> (freed)       the one-thread loop ends it (rc__conn_close)
 *
 * Independently of its state, a connection may be asked to end (c->end): the sweeper (idle,
 * stalled, a handshake too slow) or the admission code making room shuts its socket down,
 * so its next event -- at once, or when its worker re-arms it -- finds it closed and its own
 * handler ends it. Only a connection's own event handler frees it, so no thread is left
 * holding a freed one.
 */
typedef enum rc__conn_state {
	RC__CONN_ARMED = 0,
	RC__CONN_BUSY,
	RC__CONN_HELD,
	RC__CONN_DEAD,
} rc__conn_state;

typedef enum rc__conn_end {
	RC__CONN_LIVE = 0, /* not asked to end */
	RC__CONN_DOOMED,   /* shut down by the sweeper (counted in srv->ndoomed until closed) */
	RC__CONN_EVICTED,  /* shut down to make room (rc__evict; also in srv->nevicting) */
} rc__conn_end;

/* The epoll tag of a connection's output descriptor (worker threads). */
typedef struct rc__outev {
	int kind; /* RC__EV_OUT */
	rc__conn *c;
} rc__outev;

struct rc__conn {
	int kind; /* RC__EV_CONN */
	struct rc__conn *next, *prev;
	rc_tp *tp;
	uint64_t id; /* its number in the server, from 1 in the order admitted (the call log's
	                conn_id) */
	int64_t last_active;
	int64_t partial_since; /* 0, or when the stall clock started (rc__conn_stall_clock) */
	size_t stall_in, stall_out; /* input buffered (lowest) and output queued (highest) since
	                               then */
	uint32_t armed;        /* epoll interest currently set */
	rc__conn_state state;  /* under srv->mu: see rc__conn_state */
	rc__conn_end end;      /* under srv->mu: see rc__conn_end */
	bool completed;        /* under srv->mu: at least one request of it was read whole */
	unsigned lone;         /* one thread: non-zero while requests come one an event (rc__lone_skip) */
	/* With worker threads (rc__conn_serve_mt): requests on one connection run in parallel. */
	pthread_mutex_t wmu;   /* the output queue and sends: jobs reply concurrently */
	int outfd;             /* a dup of the socket, armed for EPOLLOUT while output waits; or -1 */
	rc__outev outev;       /* outfd's epoll tag */
	bool out_armed;        /* under wmu: outfd is armed */
	atomic_uint refs;      /* the reader's (until dead), one per job, one while outfd is armed */
	unsigned jobs;         /* under srv->mu: requests read and not yet answered */
	unsigned queued;       /* under srv->mu: those of them still in the job queue */
	size_t jobbytes;       /* under srv->mu: their size */
	unsigned deferred;     /* under srv->mu: requests deferred and not answered (a reference
	                          each); at lim.max_deferred_conn the connection is held */
	atomic_bool jobmode;   /* served as worker jobs even on a one-thread server: a request of
	                          it was deferred, or a job took its handle, so replies may come
	                          from other threads (set under srv->mu; the reader reads it) */
	/* A TLS handshake under way (rc__conn_probe started it): idle_ms does not apply to it,
	 * stall_ms from its start bounds it, and the idle clock starts again when it ends. */
	int64_t handshake_until;  /* under srv->mu: 0, or the handshake's deadline */
	bool shaking;             /* the reader's own: the handshake has not been seen to end */
	_Atomic int64_t handshake_end; /* 0, or when the reader saw it end (the sweeper reads) */
	/* Its handle (rc_svc_req_conn, backchan.c), made on demand under srv->mu and kept until
	 * it closes; the reader reads it without the lock (atomic). A connection with a handle
	 * is served as jobs (jobmode): calls back leave from any thread under wmu. */
	struct rc_server_conn *_Atomic handle;
	atomic_bool held;      /* with a handle: state is (or is becoming) HELD (rc__conn_plan) */
	bool back_reading;     /* under srv->mu: BUSY because a back channel's caller reads it
	                          (rc__conn_back_take) */
	bool taken;            /* under srv->mu: it was once: kept in srv->conn_pool when closed */
	/* Parking (conn.c, "Replies are always read"): requests read past the caps while calls
	 * back on it wait for replies, in order, not yet dispatched (under srv->mu). */
	struct rc__job *park, **park_tail;
	unsigned nparked;
	size_t parkbytes;
	atomic_bool parkfull;  /* max_parked_conn reached: its reading stopped (a call back sent
	                          now could get no reply: it fails at once, backchan.c) */
	/* The inbound budget (max_inbound_bytes): its partial record's bytes counted in
	 * srv->inbound (under srv->mu), and whether it waits unread for the budget. */
	size_t incount;
	bool memheld;          /* under srv->mu: HELD (or, one thread, unarmed) for the budget */
	/* Connection life (backchan/connlife.c): its OPEN was told to the hook, so its CLOSE will
	 * be (under srv->mu); and its peer's address without the port, the duplicate cache's key
	 * for stream calls (set at admission when the server caches stream calls). */
	bool opened;
	bool peer_ok;
	rc_peer peer;
	/* Draining (drain.c): the peer asked to be told (its notice call's xid), and where this
	 * connection's graceful close stands (under srv->mu; 0: not begun). */
	bool notice;
	uint32_t notice_xid;
	uint8_t drain;
};

/*
 * The handle on a stream connection the application keeps (<remotecall/server.h>'s
 * rc_server_conn; backchan.c), and the back channels calling over it. It is detached (c NULL)
 * when the connection's reading ends (DEAD) or it closes, whichever comes first; it holds
 * nothing of the connection's, and lives until its last reference goes. Lock order: srv->mu,
 * then mu, then rmu or c->wmu, then a back channel's own lock.
 */
struct rc_server_conn {
	atomic_uint refs;        /* the connection's (until it closes), the application's, one
	                            per back channel */
	pthread_mutex_t mu;      /* c (held while a back channel sends on it) */
	pthread_mutex_t rmu;     /* backs, and each back channel's xid window (the reader's
	                            routing takes only this: a sender holding mu across its send
	                            never holds the reader up) */
	rc_server *srv;          /* valid while c is not NULL */
	rc__conn *c;             /* the connection, or NULL once detached */
	atomic_bool detached;    /* c went NULL (read without mu) */
	atomic_uint inflight;    /* calls its back channels sent and have no reply to yet (as
	                            their xid windows hold them; read without mu) */
	struct rc__back *backs;  /* the back channels (rc_server_conn_backchannel) */
	void *_Atomic data;      /* the application's (rc_server_conn_set_data) */
	struct rc_server_conn *closed_next; /* srv->closedq (connlife.c), under srv->mu */
	/* the hook its OPEN was told by, for its CLOSE (connlife.c; set before it is armed) */
	void (*hook)(struct rc_server_conn *sc, rc_conn_event ev, void *ctx);
	void *hook_ctx;
};

/* Whether calls c's back channels made wait for replies (backchan.c): c's reading then never
 * stops at its request caps -- requests past them are parked (conn.c) -- so that those replies
 * are read behind a peer's pipelined requests. */
static inline bool rc__conn_backwait(const rc__conn *c)
{
	struct rc_server_conn *h = atomic_load_explicit(&c->handle, memory_order_relaxed);

	return h != NULL && atomic_load_explicit(&h->inflight, memory_order_relaxed) > 0;
}

/* Whether c waits for replies to calls back (its back channels' calls in flight): c is then
 * neither closed as idle nor evicted (under srv->mu). A handle the application merely keeps
 * does not count: the connection hook (connlife.c) tells it when the connection closes. */
static inline bool rc__conn_kept(rc__conn *c)
{
	return rc__conn_backwait(c);
}

/* backchan.c: c's handle, made now if it has none (under srv->mu; c is served as jobs from
 * then on). NULL: memory is short. */
struct rc_server_conn *rc__conn_handle(rc_server *srv, rc__conn *c);

/* ---- live.c: changes while serving -------------------------------------------------------- */

/* Put ctx in place of srv's TLS context (takes srv->mu): the one it replaces is kept until
 * rc__tls_old_free, for the connections under it. False: memory is short (nothing changed). */
bool rc__tls_replace(rc_server *srv, struct rc__tls_ctx *ctx);
/* Free the contexts rc__tls_replace kept, and the current one (rc_server_destroy: no
 * connection is left). */
void rc__tls_old_free(rc_server *srv);

/* ---- connection life (rc_server_set_conn_hook): backchan/connlife.c's steps ----------------
 * The server reaches them through srv->life, which rc_server_set_conn_hook installs (NULL: no
 * hook; the connections then have no handle for it). open: c was admitted (under srv->mu,
 * which it drops and takes again to run the hook's OPEN without locks; c is not armed yet);
 * false: memory is short for c's handle (c is to be refused). closed: c closes (under srv->mu,
 * in rc__conn_close): its CLOSE is queued, to be told by drain once the lock is dropped.
 * drain: tell the hook the CLOSEs queued (takes srv->mu; call without locks). */
typedef struct rc__life_hooks {
	bool (*open)(rc_server *srv, rc__conn *c);
	void (*closed)(rc_server *srv, rc__conn *c);
	void (*drain)(rc_server *srv);
} rc__life_hooks;

/* Tell the hook the CLOSEs queued (call without locks): a load when nothing is queued. */
static inline void rc__connlife_drain(rc_server *srv)
{
	if (__builtin_expect(atomic_load_explicit(&srv->nclosedq, memory_order_relaxed) != 0, 0))
		srv->life->drain(srv);
}

/* Bytes a peer must move, in or out, for its stall clock to start again. */
#define RC__STALL_STEP ((size_t)64 << 10)

/*
 * c's stall clock after a turn, from what it holds: in, bytes of an incomplete request
 * buffered; out, reply bytes queued. Stopped when both are 0; started when either is not; and
 * started again when the peer has moved RC__STALL_STEP bytes since -- sent that much more of a
 * request, or read that much of its replies -- so a slow but live peer (a 64 MiB reply read
 * at a few MB/s) is not reaped as stalled, while one that stops, or trickles less than 64 KiB
 * per stall_ms, is. Under what guards partial_since (the sweeper reads it under srv->mu).
 */
static inline void rc__conn_stall_clock(rc__conn *c, size_t in, size_t out)
{
	if (in == 0 && out == 0) {
		c->partial_since = 0;
		return;
	}
	if (c->partial_since != 0) {
		if (in < c->stall_in)
			c->stall_in = in; /* a record completed: progress from what is left */
		if (out > c->stall_out)
			c->stall_out = out; /* more replies queued: progress from the most */
		if (in < c->stall_in + RC__STALL_STEP && out + RC__STALL_STEP > c->stall_out)
			return;
	}
	c->partial_since = rc__now();
	c->stall_in = in;
	c->stall_out = out;
}

/* srv->defer_room of a server with stream connections (conn.c): re-arm those held. */
void rc__defer_room(rc_server *srv);
/* srv->inbound_room (conn.c): re-arm the connections waiting for the inbound budget. */
void rc__inbound_room(rc_server *srv);

/* The one-thread loop hands c, a request of which it just saw deferred, to the job path
 * (c is busy; takes c->wmu and srv->mu). */
void rc__conn_to_jobs(rc_server *srv, rc__conn *c);

/* Whether c must not read more requests, as far as deferral goes (under srv->mu): its
 * deferred ones and those read and running (each may defer) are at max_deferred_conn, or the
 * server's deferred ones at max_deferred. */
static inline bool rc__defer_full(const rc_server *srv, const rc__conn *c)
{
	return c->deferred + c->jobs >= srv->lim.max_deferred_conn ||
	       srv->ndeferred >= srv->lim.max_deferred;
}

/* Reply bytes a connection's transport still holds. */
static inline size_t rc__conn_outq(rc__conn *c)
{
	return c->tp->vt->outq(c->tp);
}

/* ---- direct.c: the in-process listener kind ------------------------------------------------ */

/* A synchronous listener's delivery callbacks (rc_tp_deliver; ctx is the server): serve the
 * message on the caller's thread; rc__deliver_to's way back may be kept by a deferred
 * request (the answer then goes back later, from any thread). */
void rc__deliver(void *ctx, const void *msg, size_t len, rc_reply_fn reply, void *rctx);
void rc__deliver_to(void *ctx, const void *msg, size_t len, const rc_tp_reply_to *to);

/* ---- accept.c ----------------------------------------------------------------------------- */

/* Accept what a stream listener has, making room when the table is full or descriptors run
 * out (see accept.c). */
void rc__accept(rc_server *srv, rc__lsn *l);
/* Serve tp, a connection just accepted or one the application handed over
 * (rc_server_listen_fd). RC_OK, or RC_NOMEM (tp closed, counted refused). */
rc_status rc__conn_admit(rc_server *srv, rc_tp *tp);
/* Resume the listeners whose pause is over; note when the next is due (under srv->mu). */
void rc__lsn_wake(rc_server *srv, int64_t now);
/* timeout_ms for epoll_wait, shortened to wake up when a paused listener is due. */
int rc__wake_timeout(rc_server *srv, int timeout_ms);
/* Open the reserve descriptor if it is wanted and not held (under srv->mu). */
void rc__reserve_take(rc_server *srv);
/* srv->room_freed: a descriptor was freed (under srv->mu): take the reserve back if it was
 * given up, and resume the listeners waiting for room. */
void rc__room_freed(rc_server *srv);

/* ---- conn.c ------------------------------------------------------------------------------- */

/* A connection's epoll event (the one entry the loops use): serve it on this thread, or with
 * worker threads read its requests out as jobs. */
void rc__conn_event(rc_server *srv, rc__wctx *w, rc__conn *c, uint32_t events);
/* Unlink, disarm, close and free c (under srv->mu). */
void rc__conn_close(rc_server *srv, rc__conn *c);
/* Ask for c to be closed by its own event handler (under srv->mu; counted in srv->ndoomed). */
void rc__conn_doom(rc_server *srv, rc__conn *c);
/* rc__serve for request msg[0..len) of connection c, letting it send a reply whose big data
 * is gathered itself through gs (NULL: never; then 0 is returned, and *broken says whether
 * that send failed); else the reply's length in w->rb, as rc__serve. */
size_t rc__serve_conn(rc_server *srv, rc__wctx *w, rc__conn *c, const void *msg, size_t len,
                      uint64_t t_rcv, const rc__sink *gs, bool *broken);
/* The one-thread loop's way out for a connection's replies (ctx: the rc__conn). */
extern const rc__sink_ops rc__conn_sink;
/* A deferred stream request's way out (ctx: the request; conn.c). */
extern const rc__sink_ops rc__conn_later;
/* A deferred datagram request's way out (ctx: the request; dgram.c). */
extern const rc__sink_ops rc__dgram_later;
/* Send (more: gather) a reply on c; false if c is broken. */
bool rc__conn_reply(rc__conn *c, unsigned char *msg, size_t len, bool more);
/* Flush c's output without blocking; true when all went out, else *broken says why not. */
bool rc__conn_flush(rc__conn *c, bool *broken);
/* Serve AUTH_TLS probe msg[0..len) on c now, send the reply and, if it said STARTTLS, start
 * TLS on c's transport. False: c must be closed (a broken send, the handshake cap, bytes
 * after the probe). */
bool rc__conn_probe(rc_server *srv, rc__wctx *w, rc__conn *c, const void *msg, size_t len);
/* The next complete request on c (RC_OK), RC_AGAIN (none yet), RC_TOOMANY (c is inside a big
 * record at the inbound budget: not read), or the transport's error. */
rc_status rc__conn_next(rc_server *srv, rc__conn *c, int *reads, void **msg, size_t *len);

/* ---- dgram.c ------------------------------------------------------------------------------ */

/* A datagram listener's epoll event (one thread: a batch while they come in batches, else the
 * one announced; worker threads: a batch, then the one-shot socket re-armed). */
void rc__dgram_event(rc_server *srv, rc__wctx *w, rc__lsn *l);
/* Serve up to n datagrams waiting on l (flags RC_TPF_DONTWAIT: what is waiting; 0: the
 * blocking loop of a lone datagram listener); rearm: a one-shot listener is re-armed once a
 * datagram is taken. Returns how many were served. */
int rc__dgram_serve(rc_server *srv, rc__wctx *w, rc__lsn *l, int n, unsigned flags, bool rearm);
/* Ask for receive offload on l, once (before worker threads start, or at a one-thread
 * server's first burst). */
void rc__lsn_offload(rc_server *srv, rc__lsn *l);

/* ---- conn.c: worker threads ---------------------------------------------------------------- */

/* A connection's event with worker threads (the caller has marked it busy). */
void rc__conn_serve_mt(rc_server *srv, rc__wctx *w, rc__conn *c);
/* Reply bytes waiting in c's output queue (takes c->wmu). */
size_t rc__conn_pending(rc__conn *c);
/* Send c's queued output as far as the socket takes it, arm its output descriptor for the
 * rest (under c->wmu). False: c is broken. The back channels (backchan/, above the server)
 * send through it too. */
bool rc__conn_push_out(rc_server *srv, rc__conn *c);
/* Arm c's output descriptor unless it is armed (under c->wmu): its event runs rc__conn_out,
 * which re-arms a held c that is back under its caps -- a back channel's call in flight
 * raises them. False: no descriptor. */
bool rc__conn_poke(rc_server *srv, rc__conn *c);
/* Serve queued jobs until none is left. */
void rc__job_next(rc_server *srv, rc__wctx *w);
/* A connection's output descriptor is writable: drain its queue. */
void rc__conn_out(rc_server *srv, rc__conn *c);
/* A back channel's caller waiting for its reply reads the connection itself while no thread
 * is reading it (backchan.c, above the server). take: under srv->mu, an ARMED connection
 * becomes the caller's (BUSY, disarmed), if worker threads serve its requests; read: wait up
 * to deadline (rc__now() clock; negative: no limit) for c's socket or wakefd, then read what
 * c has as a turn does -- RC_OK (still the caller's), RC_AGAIN (time is up: still the
 * caller's), RC_CLOSED (the turn ended: c is no longer the caller's, and may be gone); give:
 * end the caller's turn (re-armed, held, or ended if doomed meanwhile). */
bool rc__conn_back_take(rc_server *srv, rc__conn *c);
rc_status rc__conn_back_read(rc_server *srv, rc__conn *c, int wakefd, int64_t deadline);
void rc__conn_back_give(rc_server *srv, rc__conn *c);
/* The back channel's hooks (base.h), or NULL while backchan/ installed none. */
static inline const rc__back_hooks *rc__back_hooks_of(rc_server *srv)
{
	return atomic_load_explicit(&srv->back, memory_order_acquire);
}

/* Tell c's back channels (op: hangup, detach or starve), if backchan/ is in. */
#define rc__conn_back(srv, op, c)                                    \
	do {                                                         \
		const rc__back_hooks *b_ = rc__back_hooks_of(srv);   \
		if (b_ != NULL)                                      \
			b_->op(c);                                   \
	} while (0)

/* conn.c: drop a reference to c; the last closes it. Under srv->mu (rc__conn_unref without
 * the lock). */
void rc__conn_unref_locked(rc_server *srv, rc__conn *c);

/* ---- behind a load balancer (proxy.c) and draining (drain.c) ------------------------------ */

/* rc_server_listen's keys of a listen URI (rc__uri_query's fn; ctx an rc__lsn_opts). */
typedef struct rc__lsn_opts {
	bool proxy;
	rc__proxy_from from;
} rc__lsn_opts;
bool rc__lsn_uri_key(void *ctx, const struct rc__uri_key *key, const char *value);
/* A connection just accepted on a ?proxy=v2 listener l: its header is read before it is
 * admitted (rc__conn_admit), or it is closed and counted (n_proxy_refused). Takes tp. */
void rc__proxy_begin(rc_server *srv, rc__lsn *l, rc_tp *tp);
/* The epoll event of such a connection (RC__EV_PROXY). */
void rc__proxy_event(rc_server *srv, void *px);
/* rc_server_destroy: close every connection still in its header (under mu). */
void rc__proxy_destroy(rc_server *srv);
/* Called by rc__lsn_wake (under srv->mu, at srv->wake_at): headers past their time, and the
 * drain's steps; returns wake lowered to when it is next due. */
int64_t rc__aux_tick(rc_server *srv, int64_t now, int64_t wake);
/* A connection's header reads past stall_ms (proxy.c), under mu. */
int64_t rc__proxy_sweep(rc_server *srv, int64_t now);
/* The stop event came with rc_server_drain asked: begin the drain (once). True: it is
 * draining (the loop goes on); false: stop. */
bool rc__drain_begin(rc_server *srv);
/* A call to RC__CTL_PROG on a stream connection (serve.c's miss path): its reply length. */
size_t rc__ctl_serve(rc_server *srv, rc__wctx *w, rc_svc_req *req, uint32_t xid, size_t max);

#endif

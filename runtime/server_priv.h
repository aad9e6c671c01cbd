/*
 * Internal to the server's files: the objects they share and the functions one calls in
 * another. The layers, top to bottom -- each uses only what the ones below it define
 * (tests/runtime/layers.sh checks it with nm):
 *
 *   server.c    life cycle, listeners, the loops (epoll, workers, sweeper, listener pauses)
 *   conn.c      stream connections (one event entry, one-thread and worker mode) |
 *   dgram.c     datagram listeners                                                | listener
 *   direct.c    in-process (synchronous transports)                               | kinds
 *   serve.c     one request: decode, authenticate, dispatch; hands back the reply's bytes
 *   dispatch.c  the table, and every rc_svc_req_* a routine calls
 *   defer.c     request objects, deferral and the deferred answer
 *   auth_reg.c  the flavor registry -> auth_gss.c, auth.c (the flavors)
 *   reply.c     the reply encoders (the one way out itself is rc__reply_out, inline below)
 *   drc.c       the duplicate request cache
 *
 * A lower layer reaches a higher one only through a function pointer it was handed: a sink
 * (where a reply goes, "The one way out"), srv->defer_room. The epoll primitives (rc__arm,
 * rc__disarm) are inline here. The layer above (rpcbind.c) sees none of this: it has
 * server_internal.h.
 */
#ifndef RC_SERVER_PRIV_H
#define RC_SERVER_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>

#include "runtime/auth.h"
#include "runtime/rpc.h"
#include "runtime/server_internal.h"
#include "transports/proxy_v2.h"

#define RC__NBUCKETS 64
#define RC__DENSE_MAX 1024     /* procedure numbers below this index a table directly */
#define RC__ARGS_STACK 256
#define RC__MAX_LISTENERS 64
#define RC__OUT_HIGH ((size_t)256 << 10) /* queued reply bytes that pause reading */
#define RC__BATCH_MAX (16u << 10)          /* larger replies are sent at once, not batched */
#define RC__CONN_JOBS 64                   /* worker threads: requests of one connection read */
#define RC__CONN_JOB_BYTES ((size_t)1 << 20) /* and unanswered, at most (and this many bytes) */
#define RC__REQ_POOL 64       /* request objects a server keeps for reuse once answered */
#define RC__REQ_OWN_KEEP 4096 /* and the argument copy each keeps, at most (bytes) */

enum { RC__EV_LISTENER = 1, RC__EV_CONN = 2, RC__EV_STOP = 3, RC__EV_JOB = 4, RC__EV_OUT = 5,
       RC__EV_PROXY = 6 /* a connection whose PROXY header is read (proxy.c) */ };

typedef struct rc__reg {
	/* what the serve step reads of every call, first: one cache line (allocated 64-aligned) */
	struct rc__reg *_Atomic next; /* hash chain (published with release: registrations may
	                                 come and go while the server runs, dispatch.c) */
	uint32_t prog, vers;
	uint32_t ndense;
	bool rules;        /* tls_required or gss_min: one test on the serve step's usual path */
	bool tls_required; /* plaintext calls get AUTH_TOOWEAK (rc_server_set_tls_required) */
	bool drc_streams;  /* stream calls go through the duplicate cache too (connlife.c) */
	const rc_svc_proc **dense; /* by procedure number, below ndense */
	rc_svc_rawfn raw; /* a raw dispatcher (rc_server_register_raw; no tables), or NULL */
	const rc_svc_proc **sparse; /* the rest, sorted by number */
	size_t nsparse;
	uint32_t gss_min;  /* calls but NULL need RPCSEC_GSS with at least this service, else
	                      AUTH_TOOWEAK (rc_server_set_gss_required); 0: no such rule */
	const rc_svc_prog *def;
	void *ctx;
	struct rc__reg *retired; /* unregistered while running: srv->reg_retired (dispatch.c) */
} rc__reg;

typedef struct rc__lsn {
	int kind; /* RC__EV_LISTENER */
	rc_tp *tp;
	bool dgram;
	bool paused; /* accept hit the descriptor limit: off the epoll set for a while */
	bool wait_room; /* paused until a connection closes (or resume_at, whichever first) */
	int64_t resume_at;
	unsigned lone; /* one thread: non-zero while datagrams come one an event (rc__lone_skip) */
	bool offload_asked; /* datagrams: receive offload asked for (rc__lsn_offload) */
	bool proxy;         /* ?proxy=v2: each connection starts with a PROXY header (proxy.c) */
	rc__proxy_from proxy_from; /* ?proxy_from=: the balancers believed (none: any) */
	char uri[RC_URI_MAX];
} rc__lsn;

typedef struct rc__conn rc__conn;

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
	bool jobmode;          /* served as worker jobs even on a one-thread server: a request of
	                          it was deferred, so replies may come from other threads */
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
	/* Connection life (connlife.c): its OPEN was told to the hook, so its CLOSE will be
	 * (under srv->mu); and its peer's address without the port, the duplicate cache's key
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

/* ---- connlife.c: connection life (rc_server_set_conn_hook) -------------------------------- */

/* c was admitted (under srv->mu, which it drops and takes again to run the hook's OPEN
 * without locks; c is not armed yet). False: memory is short for c's handle (c is to be
 * refused). Nothing when the server has no hook. */
bool rc__connlife_open(rc_server *srv, rc__conn *c);
/* c closes (under srv->mu, in rc__conn_close): its CLOSE is queued, to be told by
 * rc__connlife_drain once the lock is dropped. */
void rc__connlife_closed(rc_server *srv, rc__conn *c);
/* Tell the hook the CLOSEs queued (takes srv->mu; call without locks). Inline test first:
 * nothing to do costs a load. */
void rc__connlife_drain_slow(rc_server *srv);
/* (rc__connlife_drain, inline, follows struct rc_server) */

/* backchan.c, for the stream connections (conn.c): a REPLY read on c goes to the back channel
 * that sent its call, or nowhere (true: msg was a reply, taken or dropped; false: not one, or
 * c has no handle -- serve it). Called by c's reader, without locks. */
bool rc__back_route(rc__conn *c, const void *msg, size_t len);
/* c's reading has ended: its handle is detached, its back channels' calls end (under srv->mu;
 * nothing if c has no handle). */
void rc__back_hangup(rc__conn *c);
/* c closes: as rc__back_hangup, and the connection's reference to the handle goes (under
 * srv->mu). */
void rc__back_detach(rc__conn *c);
/* c's reading has stopped with calls back in flight whose replies it cannot read (its
 * parking budget, or the inbound budget, is spent): those calls fail at once with RC_TOOMANY
 * and a detail saying so, their late replies are dropped, and the server counts them
 * (rc_server_stats.backcalls_starved). The connection and its back channels stay usable.
 * Under srv->mu; nothing if c has no handle. */
void rc__back_starve(rc__conn *c);

/* A request copied out of a connection, for a worker thread to serve. */
typedef struct rc__job {
	struct rc__job *next;
	rc__conn *c;
	uint64_t t_rcv;
	size_t len;
	_Alignas(16) unsigned char msg[]; /* (XDR_INLINE reads int32_t through it) */
} rc__job;

/* struct rc_svc_req is in server.h (its rq_ fields are Sun's). */

struct rc_server {
	pthread_mutex_t mu;
	rc__reg *_Atomic buckets[RC__NBUCKETS]; /* changed under mu, read without it */
	rc__reg *reg_retired; /* under mu: unregistered while running, freed with the server
	                         (calls under way, deferred requests may still use them) */
	rc__lsn *lsn[RC__MAX_LISTENERS];
	size_t nlsn;
	rc__conn *conns;
	uint32_t nconns;
	uint32_t ndoomed;    /* under mu: connections doomed and not yet closed */
	uint32_t nevicting;  /* under mu: of those, the ones doomed to make room */
	int64_t evicted_at;  /* under mu: when rc__evict last doomed some */
	int reserve_fd;      /* a spare descriptor (/dev/null) given up to accept when out of them */
	bool use_reserve;    /* a stream listener exists: keep reserve_fd */
	uint64_t n_accepted, n_evicted, n_refused, n_nofile; /* under mu: rc_server_stats */
	uint64_t n_toobig;   /* atomic (relaxed): replies_too_big */
	uint64_t n_gss_dropped; /* atomic (relaxed): gss_dropped */
	uint64_t n_inbound_waits, n_parked, n_starved; /* atomic (relaxed): rc_server_stats */
	_Atomic size_t inbound; /* bytes held for requests not yet served (max_inbound_bytes):
	                           partial records, jobs, parked requests, deferred arguments */
	bool memwait;           /* under mu: connections wait unread for the inbound budget */
	struct rc__gss_table *gss; /* rc_server_set_gss's contexts, or NULL (auth_gss.c) */
	pthread_mutex_t poolmu; /* the request pool (rc__req_new, rc__req_unhold) */
	struct rc__req *pool;   /* under poolmu: request objects let go of, kept for reuse (taken
	                           from here, oldest first) */
	struct rc__req *pool_tail; /* under poolmu: the newest (put back after it) */
	unsigned npool;         /* under poolmu: how many (at most RC__REQ_POOL) */
	/* the request object of the last message served directly (direct.c), idle, for the next
	 * one: taken and put back by exchange, as a worker keeps its own (NULL: none) */
	struct rc__req *_Atomic direct_req;
	struct rc__req *deferred; /* under mu: requests deferred and not answered (rc__req) */
	uint32_t ndeferred;  /* under mu: how many */
	unsigned answering;  /* under mu: answers being sent on other threads right now (raised
	                        with the request's unlinking, lowered as the answer's last touch
	                        of the server: rc__defer_orphan, which waits for 0, holds mu) */
	unsigned orphaning;  /* under mu: rc__defer_orphan calls waiting for answering to be 0 */
	pthread_cond_t answered; /* signalled (under mu) when it is, if orphaning */
	rc_error err;        /* the last set-up call's detail (rc_server_geterr); set-up thread */
	int epfd;
	int stopfd;
	int stop_ev; /* the epoll tag of stopfd */
	int jobfd;   /* an eventfd, non-zero while jobs are queued (worker threads) */
	int job_ev;  /* its epoll tag */
	rc__job *jobq, *jobq_tail; /* under mu */
	/* what serving a call reads of the server, in one cache line (allocated 64-aligned) */
	_Alignas(64) atomic_int stop;
	atomic_bool running; /* read by rc_server_stop, maybe from a signal handler */
	unsigned threads;
	int64_t spin_ns; /* rc_server_set_spin: poll this long before sleeping (0: never) */
	size_t dgram_max;    /* the largest datagram reply: lim.max_record, at most 65,507 */
	rc_svc_authfn auth;
	rc_trace_fn trace; /* NULL: off */
	rc__drc *drc;
	void *trace_arg;
	void *auth_ctx;
	rc_server_limits lim; /* rc_server_set_limits changes some fields while the server runs
	                         (limits.c): read those with RC__LIM unless under mu */
	rc__srv_hook hook; /* the layer above's (rpcbind.c), or NULL; under mu */
	void *hook_ctx;
	int64_t next_sweep;
	int64_t next_walk; /* under mu: the earliest a connection can be due to close (rc__sweep) */
	_Atomic int64_t trimmed_at; /* when free heap pages were last given back (rc__quiet) */
	_Atomic int64_t wake_at; /* the earliest resume_at of a paused listener, or 0 (rc__step) */
	unsigned char *step_rbuf; /* rc_server_step's datagram buffer */
	struct rc__dbatch *step_batch; /* and its datagram batch */
	/* rc_server_set_tls's context, or NULL: probes get no TLS. Atomic: it may be replaced
	 * while the server runs (live.c); those it replaced are kept, for the connections made
	 * from them, until the server is destroyed (tls_old, under mu) */
	struct rc__tls_ctx *_Atomic tls;
	struct rc__tls_old *tls_old;
	/* srv->ndeferred fell below its cap (under mu): re-arm the connections held for it. Set
	 * by the life cycle (the stream connections' rc__defer_room), so the request layer
	 * below them reaches them without calling up. */
	void (*defer_room)(struct rc_server *srv);
	/* srv->inbound fell (under mu) while connections wait unread for max_inbound_bytes
	 * (memwait): those under the budget again are re-armed (conn.c's rc__inbound_room, set
	 * by the life cycle as defer_room is). */
	void (*inbound_room)(struct rc_server *srv);
	/* Send what connection c's output queue holds, as far as the socket takes it, and arm its
	 * output descriptor for the rest (under c->wmu; false: broken). Set by the life cycle
	 * (conn.c's rc__conn_push_out), for the back channels below it (backchan.c). */
	bool (*conn_push)(struct rc_server *srv, rc__conn *c);
	/* Arm connection c's output descriptor if it is not armed (under c->wmu): its event
	 * re-arms c for reading if it was held and is back under its caps (conn.c's
	 * rc__conn_poke) -- a back channel's call in flight raises them. */
	bool (*conn_poke)(struct rc_server *srv, rc__conn *c);
	/* The thread that serves alone (rc_server_run with one thread, rc_server_step) while it
	 * does (loop_alone): a back channel's blocking call from it could never get its reply. */
	pthread_t loop_thread;
	atomic_bool loop_alone;
	/* A back channel's caller waiting for its reply reads the connection itself while no
	 * thread is reading it (conn.c's rc__conn_back_take, _read, _give; set by the life cycle
	 * for backchan.c below it). take: under srv->mu, an ARMED connection becomes the
	 * caller's (BUSY, disarmed), if worker threads serve its requests; read: wait up to
	 * deadline (rc__now() clock; negative: no limit) for c's socket or wakefd, then read what
	 * c has as a turn does -- RC_OK (still the caller's), RC_AGAIN (time is up: still the
	 * caller's), RC_CLOSED (the turn ended: c is no longer the caller's, and may be gone);
	 * give: end the caller's turn (re-armed, held, or ended if doomed meanwhile). */
	bool (*conn_take)(struct rc_server *srv, rc__conn *c);
	rc_status (*conn_read)(struct rc_server *srv, rc__conn *c, int wakefd, int64_t deadline);
	void (*conn_give)(struct rc_server *srv, rc__conn *c);
	unsigned backreaders; /* under mu: connections a back channel's caller reads now */
	rc__conn *conn_pool;  /* under mu: closed connections once taken, for reuse (conn.c) */
	bool destroying;      /* under mu: rc_server_destroy has begun: no more are taken */
	/* connection life (connlife.c): the hook (set while not running), the CLOSEs queued to
	 * be told without locks (under mu; nclosedq counts them for a test without it) */
	void (*conn_hook)(struct rc_server_conn *sc, rc_conn_event ev, void *ctx);
	void *conn_hook_ctx;
	struct rc_server_conn *closedq;
	atomic_uint nclosedq;
	bool drc_streams_all; /* rc_server_set_drc_streams(srv, 0, 0, true): every program */
	bool drc_streams_any; /* ... or some program: connections keep their peer's address */
	struct rc__obs *obs;  /* counters and the call log (stats.c), or NULL: neither */
	/* Behind a load balancer (proxy.c) and draining (drain.c). */
	struct rc__pxconn *pxconns; /* under mu: connections whose PROXY header is being read */
	uint32_t npx;               /* under mu: how many */
	uint64_t n_proxied, n_proxy_refused; /* under mu: rc_server_stats */
	int64_t aux_next;           /* under mu: when rc__aux_tick has something due (0: never) */
	_Atomic uint32_t drain_ms;  /* rc_server_drain's timeout (async-signal-safe stores) */
	atomic_bool drain_asked;
	bool draining;              /* under mu: the drain has begun (rc__drain_begin) */
	int64_t drain_until;        /* under mu: when it gives up waiting */
};

#define rc__now() ((int64_t)rc__clock_ns())

/* connlife.c's drain: a load when nothing is queued. */
static inline void rc__connlife_drain(rc_server *srv)
{
	if (__builtin_expect(atomic_load_explicit(&srv->nclosedq, memory_order_relaxed) != 0, 0))
		rc__connlife_drain_slow(srv);
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

struct rc__dbatch;

/*
 * ---- The one way out (reply.c) ------------------------------------------------------------
 *
 * Every reply -- a routine's result, an error, an auth error, a duplicate-cache replay, a
 * probe's STARTTLS, a deferred answer from another thread -- leaves through rc__reply_send,
 * which does, in order: record it in the duplicate request cache (when the call holds an
 * entry), hand it to its sink (send, or queue on the connection), let go of what the request
 * held for it (a deferred one's accounting), and trace it. Its bytes were made before by the
 * encoders below, which all take the verifier and the results' wrapping from the call's
 * flavor (w->auth).
 *
 * A sink is where a listener kind's replies go: the one-thread stream loop's (conn.c), a
 * worker job's (conn.c, under the connection's write lock), a deferred stream answer's
 * (conn.c), a datagram's and a datagram batch's (dgram.c), a synchronous transport's
 * (serve.c). It is a pair of functions and their context, so the layers below the listener
 * kinds (serve, dispatch, deferral) send without calling up into them.
 */
typedef struct rc__out {
	unsigned char *msg;  /* the encoded reply */
	size_t len;          /* its length; 0: no reply (the request is only let go of) */
	const rc__gseg *seg; /* big data gathered from the result's memory (streams), or NULL */
	unsigned nseg;
	const rc_peer *peer; /* a datagram's caller */
	uint32_t xid;
	bool more;           /* more replies follow at once: the sink may hold this one back */
	bool forget;         /* with a cache entry and no reply: the call may run again (a
	                        deferred request dropped), so the entry is forgotten rather
	                        than kept as answered-without-reply */
} rc__out;

typedef struct rc__sink_ops {
	/* Send or queue o (o->len > 0). False: the way out is broken (a stream); a datagram the
	 * socket refuses counts as lost, not broken. */
	bool (*send)(void *ctx, const rc__out *o);
	/* A deferred request's reply has left (or failed: broken): its accounting on the
	 * connection (NULL: nothing to do). Called without locks. */
	void (*release)(void *ctx, bool broken);
	/* Under srv->mu: the request (ctx) was deferred -- its connection counts it and is
	 * referenced -- or orphaned (its server stops) -- it lets go of both now. NULL: nothing
	 * held (a datagram's listener outlives its deferred requests' hold: rc__defer_orphan). */
	void (*deferred)(void *ctx);
	void (*orphaned)(void *ctx);
} rc__sink_ops;

typedef struct rc__sink {
	const rc__sink_ops *ops;
	void *ctx;
} rc__sink;

struct rc__req;

/*
 * Send reply o of srv through sink s: record it under key in the duplicate request cache
 * (key not NULL: stored, even with no reply, unless o->forget), send or queue it, let
 * go of the request's hold on its connection (release), trace RC_TP_SRV_SENT. Any thread.
 * Returns false when the sink is broken (the reply is lost; the caller ends the connection).
 * The work is rc__reply_out's, inline with the send function as a parameter: on the hot paths
 * (rc__reply_leave) the compiler sees the sink's send, inlines it and folds what the call site
 * does not use (no cache entry, no release), so the one path costs no more than the sends it
 * replaced.
 */
typedef bool (*rc__send_fn)(void *ctx, const rc__out *o);
typedef void (*rc__release_fn)(void *ctx, bool broken);

static inline __attribute__((always_inline)) bool
rc__reply_out(rc_server *srv, rc__send_fn send, rc__release_fn release, void *ctx,
              const rc__out *o, const rc__drc_key *key)
{
	bool ok;

	if (__builtin_expect(key != NULL, 0)) { /* before it leaves: a retransmission may follow
	                                           it at once */
		if (o->len == 0 && o->forget)
			rc__drc_cancel(srv->drc, key);
		else
			rc__drc_store(srv->drc, key, o->msg, o->len);
	}
	if (o->len == 0) {
		if (release != NULL)
			release(ctx, false);
		return true;
	}
	ok = send(ctx, o);
	if (release != NULL)
		release(ctx, !ok);
	if (__builtin_expect(srv->trace != NULL, 0) && ok) /* sent, or queued to be */
		srv->trace(srv->trace_arg, RC_TP_SRV_SENT, o->xid, rc__trace_clock());
	return ok;
}

static inline __attribute__((always_inline)) bool
rc__reply_send(rc_server *srv, const rc__sink *s, const rc__out *o, const rc__drc_key *key,
               bool release)
{
	return rc__reply_out(srv, s->ops->send, release ? s->ops->release : NULL, s->ctx, o, key);
}

/* rc__reply_send of the reply the serving thread w just made (rlen bytes in w->rb) to its
 * call: its duplicate-cache entry from w->drc. The usual path of an inline reply. */
struct rc__wctx;

struct rc__req;

typedef struct rc__wctx {
	rc__encbuf rb;
	struct rc__req *req; /* the request object the next call is served in (rc__serve) */
	rc__conn *conn;      /* set around rc__serve by the stream loops: the connection */
	struct rc__lsn *lsn; /* ... and by the datagram loops: the listener */
	const rc__sink *gsink; /* set around rc__serve by a stream's loops: a reply whose big
	                          data is gathered from the result leaves through it at once */
	int gsent;           /* rc__serve sent a gathered reply itself: 1, or -1 (broken) */
	const rc__drc_key *drc; /* after rc__serve: the duplicate-cache entry its reply goes
	                           into (rc__reply_leave), or NULL */
	const rc__sink_ops *later; /* set with conn / lsn by the loops: the way out of a request
	                              deferred here (its context is the request), or NULL: no
	                              deferral (RC_NOTSUPP) */
	const rc_tp_reply_to *to;  /* in-process (direct.c): the caller's way back */
	unsigned char *rbuf; /* this thread's datagram receive buffer (NULL until needed) */
	struct rc__dbatch *batch; /* its datagram batch (server.c; NULL until needed) */
	unsigned lone;       /* blocking datagram loop: non-zero while calls come one at a time */
	unsigned want;       /* slots the next datagram batch asks for (server.c) */
	uint32_t xid;        /* of the request served last (trace points after rc__serve) */
	bool starttls;       /* rc__serve answered a probe with STARTTLS: start TLS once it is out */
	const rc__svc_auth *auth; /* the authentication of the call whose reply is being made:
	                             NULL for a plain flavor's (AUTH_NONE verifier, nothing
	                             wrapped) -- the fast path -- else its verifier and wrapping */
	size_t keep;         /* the largest reply buffer kept between requests (rc__reply_keep) */
	bool worked;         /* the epoll loop: events handled since its last empty wait */
	/* aligned: a Sun routine's XDR_INLINE stores int32_t through the reply's bytes */
	_Alignas(64) unsigned char stack[RC__STACK_REPLY]; /* (64: a short reply fills one line) */
} rc__wctx;

/* rc__reply_out of the reply serving thread w just made (rlen bytes in w->rb) to its call,
 * through send(ctx, ...): its duplicate-cache entry from w->drc. The inline replies' path. */
static inline __attribute__((always_inline)) bool
rc__reply_leave(rc_server *srv, rc__wctx *w, rc__send_fn send, void *ctx, size_t rlen,
                const rc_peer *peer, bool more)
{
	const rc__drc_key *key = w->drc;

	if (__builtin_expect(key != NULL, 0))
		w->drc = NULL;
	else if (rlen == 0)
		return true; /* nothing to send, nothing to record */
	return rc__reply_out(srv, send, NULL, ctx,
	                     &(const rc__out){.msg = rc__encbuf_msg(&w->rb), .len = rlen,
	                                      .peer = peer, .xid = w->xid, .more = more},
	                     key);
}

/*
 * The request object's public part (<remotecall/server.h>'s opaque rc_svc_req): the call's
 * header facts with Sun's names (the Sun layer copies them into its struct svc_req), and what
 * the serve step, dispatch and the reply need. rc__req (below) begins with it.
 */
struct rc_svc_req {
	uint32_t rq_prog;        /* program, version and procedure called */
	uint32_t rq_vers;
	uint32_t rq_proc;
	rc_opaque_auth rq_cred;  /* the raw credential */
	void *rq_clntcred;       /* AUTH_SYS: &ucred, else NULL */
	struct rc_server *srv;
	const struct rc__reg *reg;
	const struct rc_svc_proc *proc;
	uint32_t xid;
	bool dgram;
	bool keep_res;               /* rc_svc_req_keep_result: the result is not freed */
	bool tls_kept;               /* deferred: whether it came over TLS (conn is let go) */
	const struct rc_peer *peer;
	struct rc__wctx *w;          /* raw dispatch (rc_server_register_raw): the reply buffer */
	const unsigned char *args;   /*   the encoded arguments */
	size_t argslen;
	size_t rlen;                 /*   the reply's length so far (0: none) */
	struct rc_tp *conn;          /* the stream it came on (rc_svc_req_tls asks it), or NULL */
	/* (last: only AUTH_SYS calls touch them; the fields above fill two cache lines) */
	rc_authsys sys;              /* AUTH_SYS (rq_cred.oa_flavor): the parsed credential */
	rc_svc_unixcred ucred;
};

/*
 * A request being served, and kept when deferred (rc_svc_req_defer). Each serving thread
 * keeps one (w->req) and serves every call in it, so the common path allocates nothing; a
 * deferred request leaves the thread (which makes itself a new one) and lives until
 * rc_svc_req_reply / rc_svc_req_error / rc_svc_req_drop, from any thread, frees it.
 *
 * States (state, atomic): INLINE while its routine runs; DEFERRED once the routine deferred
 * it (it is then on srv->deferred, counted in srv->ndeferred and, on a stream, in its
 * connection's `deferred` with a reference); ORPHANED when its server stopped or went away
 * before the answer (it holds nothing of the server's any more: the answer only frees it and
 * returns RC_CANCELLED); ANSWERED once answered (it may still wait for its serving thread to
 * let go: never INLINE again). DEFERRED -> ORPHANED and the answer's unlinking both happen under
 * the process-wide rc__defer_mu, then srv->mu: lock order rc__defer_mu, srv->mu, c->wmu.
 */
enum { RC__REQ_INLINE = 0, RC__REQ_DEFERRED, RC__REQ_ORPHANED, RC__REQ_ANSWERED };

typedef struct rc__req {
	rc_svc_req pub;             /* first: rc_svc_req * and rc__req * convert */
	_Atomic int state;
	_Atomic int holds;          /* deferred: the serving thread's and the deferral's (defer.c) */
	struct rc__wctx *wc;        /* the serving thread whose object it is (its connection,
	                               listener), until deferred */
	/* while its routine runs (rd non-NULL: it may be deferred) */
	const struct rc__rd *rd;    /* its encoded arguments, in the receive buffer */
	const rc__drc_key *keyp;    /* its duplicate cache entry, or NULL */
	void *args_heap, *res_heap; /* typed objects too big for argbuf / resbuf (this call's) */
	/* deferred */
	void *args;                 /* typed: the decoded argument (argbuf or heap), or NULL */
	void *res;                  /* typed: the result object, or NULL */
	/* deferred */
	unsigned char *own;         /* the copy of the encoded arguments the request owns (kept
	                               with the object in its server's pool, for the next) */
	size_t ownlen, owncap;
	rc__drc_key key;
	bool cached;                /* key's entry waits for the answer */
	struct rc__req *dnext, *dprev; /* srv->deferred, under srv->mu */
	rc__sink sink;              /* deferred: where its answer goes (the connection's or the
	                               datagram listener's) */
	rc__conn *c;                /* a stream's connection (referenced), or NULL */
	void *orphan_ctx;           /* orphaned: its registration's ctx (pub.reg, the server's,
	                               is then NULL: the server may be gone) */
	rc_tp_reply_to to;          /* in-process: the caller's way back (held), or zero */
	struct rc__lsn *l;          /* a datagram listener, or NULL */
	rc_peer peer;               /* the datagram caller's address */
	/* its authentication (auth.h): valid past accept on the general path (the fast path of a
	 * plain AUTH_NONE call leaves it as it was); ctx NULL between calls */
	rc__svc_auth auth;
	bool gen;                   /* deferred: its replies take auth (the serving thread's
	                               w->auth was not NULL) */
	void *unwrapped;            /* the arguments as the flavor unwrapped them (malloc'd), or
	                               NULL; rd points into it while they are */
	/* its handle (below; kept through the object's reuses, never zeroed by rc__req_new) */
	rc_svc_req *handle;         /* what its routines and hooks get: its slot and generation */
	uint32_t hidx;              /* its slot */
	_Alignas(16) unsigned char argbuf[RC__ARGS_STACK];
	_Alignas(16) unsigned char resbuf[RC__ARGS_STACK];
} rc__req;

/*
 * Request handles (defer.c). The rc_svc_req * a routine, a raw dispatcher or the auth hook
 * gets is not the object's address but a handle: a slot number and the slot's generation
 * ((slot << RC__HGEN_BITS) | generation). Every public entry finds the object through
 * rc__req_of, which refuses a handle whose generation is not the slot's now. A slot belongs to
 * one request object for the object's life (pooled reuses included); its generation moves on
 * when the object's deferred request is answered (reply, error, drop, or the answer of an
 * orphaned one) and when the object is freed, so a handle that was answered, or whose object
 * was freed or reused since, is refused -- without reading the object, whose memory may be
 * gone: the slots themselves are never freed (chunks of RC__HCHUNK, a process-wide table of at
 * most RC__HCHUNK * RC__HCHUNKS slots, 16 bytes each, as many as request objects ever alive at
 * once). Freed slots are reused oldest first, and so are pooled objects, which spreads the
 * reuse of any one generation counter. A stale handle is taken for a live one only if its
 * slot's generation has since wrapped to the same value exactly: 2^32 answers or frees of
 * that slot on a 64-bit build (2^10 on a 32-bit one). Slot 0 is never used (NULL is refused).
 */
#define RC__HCHUNK 1024u
#define RC__HCHUNKS 4096u
#if UINTPTR_MAX > 0xffffffffu
#define RC__HGEN_BITS 32
#else
#define RC__HGEN_BITS 10
#endif
#define RC__HGEN_MASK ((uint32_t)(((uint64_t)1 << RC__HGEN_BITS) - 1))

typedef struct rc__hslot {
	_Atomic uint32_t gen;        /* the generation of the one valid handle */
	_Atomic uint32_t deferred;   /* non-zero: its request is deferred (answers go through
	                                rc__answer, which looks again under rc__defer_mu) */
	struct rc__req *_Atomic req; /* the object, or NULL (the slot is free) */
	uint32_t next;               /* the free list (defer.c, under its lock); 0: the last */
} rc__hslot;

extern rc__hslot *_Atomic rc__hslots[RC__HCHUNKS];

/* The slot of handle h if h is valid now, else NULL. No lock: a handle used on one thread while
 * another answers or frees it may pass this check and then meet a request that is gone (the
 * answers look again under rc__defer_mu); used one after the other, never. */
static inline rc__hslot *rc__hslot_of(const rc_svc_req *h)
{
	uintptr_t v = (uintptr_t)h, i = v >> RC__HGEN_BITS;
	rc__hslot *chunk;

	if (i == 0 || i >= (uintptr_t)RC__HCHUNK * RC__HCHUNKS ||
	    (chunk = atomic_load_explicit(&rc__hslots[i / RC__HCHUNK], memory_order_acquire)) == NULL)
		return NULL;
	chunk += i % RC__HCHUNK;
	return atomic_load_explicit(&chunk->gen, memory_order_acquire) ==
	               (uint32_t)(v & RC__HGEN_MASK)
	           ? chunk
	           : NULL;
}

/* The request object of handle h, or NULL (NULL, answered, freed, reused since: stale). */
static inline rc__req *rc__req_of(const rc_svc_req *h)
{
	rc__hslot *s = rc__hslot_of(h);

	return s != NULL ? atomic_load_explicit(&s->req, memory_order_relaxed) : NULL;
}

/* Give new request object r a slot (the oldest free one, else a fresh one) and its handle
 * (r->handle, r->hidx). False: the table is full or memory short (r has none). */
bool rc__req_handle_take(rc__req *r);

/* Move r's slot to its next generation: every handle of r given so far is stale (r->handle is
 * the new one). Under rc__defer_mu (an answer), or by r's only user (its freeing). */
void rc__req_handle_bump(rc__req *r);

/* Free request object r (nothing of its call held any more: its own argument copy goes too)
 * and give its slot back, stale, to be reused after every other free slot. */
void rc__req_free(rc__req *r);

/* The same, as its public part (what the accessors read), or NULL. */
static inline rc_svc_req *rc__svc_req_of(const rc_svc_req *h)
{
	rc__req *r = rc__req_of(h);

	return r != NULL ? &r->pub : NULL;
}

/* Set up / let go of a serving thread's context (reply buffer, request object, datagram
 * buffers) for srv. */
void rc__wctx_init(rc__wctx *w, rc_server *srv);
void rc__wctx_fini(rc__wctx *w);


/* srv->defer_room of a server with stream connections (conn.c): re-arm those held. */
void rc__defer_room(rc_server *srv);
/* srv->inbound_room (conn.c): re-arm the connections waiting for the inbound budget. */
void rc__inbound_room(rc_server *srv);

/* The one-thread loop hands c, a request of which it just saw deferred, to the job path
 * (c is busy; takes c->wmu and srv->mu). */
void rc__conn_to_jobs(rc_server *srv, rc__conn *c);


/* Reply encoders (reply.c), usable from any thread with a context of its own:
 * rc__reply_result -- SUCCESS with *res coded by xres (SYSTEM_ERR when that fails: *st says
 * why, RC_CANTENCODEARGS or RC_MSGTOOLARGE, counted for a datagram); rc__reply_error -- an
 * rc_svc_err reply. Each returns the reply's length in w->rb. */
size_t rc__reply_result(rc_server *srv, rc__wctx *w, size_t max, bool dgram, uint32_t xid,
                        rc_xdrproc xres, const void *res, rc_status *st);
size_t rc__reply_error(rc__wctx *w, size_t max, uint32_t xid, rc_svc_err err, uint32_t lo,
                       uint32_t hi);
/* rc__reply_simple -- a complete reply to xid with no body beyond its status: denied (stat:
 * reject_stat, extra: RPC_MISMATCH's range or AUTH_ERROR's auth_stat) or accepted (stat:
 * accept_stat, extra: PROG_MISMATCH's range), an accepted one's verifier from w->auth; 0 when
 * that cannot be made (nothing to send). rc__reply_accepted_head -- the header of an accepted
 * reply through stat, positioned for the body; false as rc__reply_simple's 0.
 * rc__reply_starttls -- the STARTTLS answer to an AUTH_TLS probe (sets w->starttls). */
size_t rc__reply_simple(rc__wctx *w, size_t max, uint32_t xid, bool denied, uint32_t stat,
                        const uint32_t *extra, int nextra);
bool rc__reply_accepted_head(rc__wctx *w, rc_xdr *x, size_t max, uint32_t xid, uint32_t stat);
size_t rc__reply_starttls(rc__wctx *w, size_t max, uint32_t xid);

/* RC__LIM -- srv->lim.f as a field rc_server_set_limits may change while the server runs
 * (limits.c): a relaxed atomic load, for readers that do not hold srv->mu (the writer stores
 * under it). Fields it refuses while running (max_record, drc_*) are read plainly. */
#define RC__LIM(srv, f) __atomic_load_n(&(srv)->lim.f, __ATOMIC_RELAXED)

/* RPCSEC_GSS (auth_gss.c): free srv's context table (rc_server_destroy); apply srv->lim's
 * gss_* bounds to it (rc_server_set_limits); the contexts in it now and those evicted to make
 * room (rc_server_get_stats; 0 and 0 without a table). */
void rc__gss_free(rc_server *srv);
void rc__gss_apply_limits(rc_server *srv);
void rc__gss_get_stats(rc_server *srv, uint64_t *contexts, uint64_t *evicted);

/* Let go of what a call's authentication holds (its flavor's reference). */
static inline void rc__svc_auth_done(rc__svc_auth *a)
{
	if (a->ctx != NULL) {
		if (a->fl->svc_release != NULL)
			a->fl->svc_release(a);
		a->ctx = NULL;
	}
}

/* What the answer to a deferred request is (rc__answer). */
enum { RC__ANSWER_RESULT, RC__ANSWER_ERROR, RC__ANSWER_DROP };

/* Answer the deferred request of handle h from any thread (defer.c): encode, record in the
 * duplicate cache, send, release and free it. Returns RC_OK; RC_CANTSEND (its connection broke
 * or closed); RC_CANCELLED (its server stopped or went away: nothing sent); the encoder's
 * failure (a SYSTEM_ERR went instead); RC_INVAL (NULL, not deferred, or a stale handle:
 * answered already, its object freed or reused -- nothing sent). The request is freed (h made
 * stale) whatever it returns but RC_INVAL. */
rc_status rc__answer(const rc_svc_req *h, int kind, rc_xdrproc xres, const void *res,
                     rc_svc_err err, uint32_t lo, uint32_t hi);

/* A fresh request object of serving thread w of srv: from srv's pool when it has one, oldest
 * first (so deferring calls allocates nothing once the pool has filled), else allocated with a
 * handle slot; zeroed but for its argument buffers and its handle. NULL if memory (or the
 * handle table) is short. */
rc__req *rc__req_new(rc_server *srv, rc__wctx *w);

/* Let go of one hold on deferred request r -- the serving thread's once its routine has
 * returned, or the deferral's at the answer; the last one lets go of what r holds and puts r
 * in pool's pool (srv: alive while the caller runs), or frees it (pool NULL: an orphaned
 * request, whose server may be gone; or the pool is full). */
void rc__req_unhold(rc__req *r, rc_server *pool);

/* Put r -- idle: no call of its under way, nothing held -- in srv's request pool (a big
 * argument copy it keeps is freed). False when the pool is full: r stays the caller's. */
bool rc__req_pool_put(rc_server *srv, rc__req *r);

/* Free the objects in srv's request pool and its kept direct_req (rc_server_destroy). */
void rc__req_pool_free(rc_server *srv);


/* Whether c must not read more requests, as far as deferral goes (under srv->mu): its
 * deferred ones and those read and running (each may defer) are at max_deferred_conn, or the
 * server's deferred ones at max_deferred. */
static inline bool rc__defer_full(const rc_server *srv, const rc__conn *c)
{
	return c->deferred + c->jobs >= srv->lim.max_deferred_conn ||
	       srv->ndeferred >= srv->lim.max_deferred;
}

/*
 * Orphan every request of srv still deferred (l NULL: the server stops, or is destroyed) or
 * those of datagram listener l (it closes): each lets go of its connection and cache entry
 * now, and its later answer only frees it. Then wait for answers under way on other threads
 * to finish. Takes rc__defer_mu and srv->mu.
 */
void rc__defer_orphan(rc_server *srv, const struct rc__lsn *l);

/* The largest reply buffer a serving thread keeps between requests (a heap buffer a big reply
 * grew): 4 MiB, or the server's max_record when smaller; bigger ones are freed after their
 * reply. Big opaque and string results leave from the result's own memory (gathered), so a
 * reply buffer grows past this only for big results of other types, rarely enough that
 * keeping up to max_record (64 MiB by default) per thread would cost more than it saves. */
#define RC__KEEP_REPLY (((size_t)4 << 20) + 4096)
static inline size_t rc__reply_keep(size_t max_record)
{
	return max_record + 4096 < RC__KEEP_REPLY ? max_record + 4096 : RC__KEEP_REPLY;
}

/* Make w's reply buffer empty for a reply of at most max bytes. A heap buffer that an earlier
 * big reply grew is kept (up to w->keep), so a server answering big replies does not allocate
 * and page-fault a fresh one each time; otherwise the stack buffer. */
static inline __attribute__((always_inline)) void rc__reply_reset(rc__wctx *w, size_t max)
{
	/* the stack buffer in use (the usual case: its cap is the stack's, gather is off) or a
	 * kept heap one: only its limit is new */
	if (w->rb.data == w->stack || (w->rb.heap && w->rb.cap <= w->keep)) {
		w->rb.max = max;
		w->rb.toolarge = false;
		w->rb.gather = false;
		return;
	}
	rc__encbuf_free(&w->rb);
	rc__encbuf_init(&w->rb, w->stack, sizeof(w->stack), max);
}

/* Let go of the heap reply buffer w keeps between requests (rc__reply_reset), if any: the
 * thread has gone quiet. */
static inline void rc__reply_release(rc__wctx *w)
{
	if (w->rb.heap) {
		size_t max = w->rb.max;
		rc__encbuf_free(&w->rb);
		rc__encbuf_init(&w->rb, w->stack, sizeof(w->stack), max);
	}
}

/* Start a successful reply to xid in w's buffer; x is positioned after its header for the
 * results. The usual one (plain flavors: w->auth NULL) is the whole 24-byte header (REPLY,
 * MSG_ACCEPTED, an AUTH_NONE verifier, SUCCESS) written at once: the hot path of every call.
 * False when w->auth's flavor cannot make a verifier (nothing is to be sent). */
/* The 24-byte header of a successful reply to xid under a plain flavor (w->auth NULL: REPLY,
 * MSG_ACCEPTED, an AUTH_NONE verifier, SUCCESS) into w's emptied buffer: the whole reply of a
 * procedure with void results, with no encode stream set up. */
static inline __attribute__((always_inline)) void rc__reply_head_plain(rc__wctx *w, size_t max,
                                                                      uint32_t xid)
{
	unsigned char *h;

	rc__reply_reset(w, max);
	h = rc__encbuf_msg(&w->rb); /* the stack buffer always has room */
	rc__st32(h, xid);
	rc__st32(h + 4, RC__REPLY);
	memset(h + 8, 0, 16); /* MSG_ACCEPTED, AUTH_NONE, empty body, SUCCESS: all zero */
}

static inline __attribute__((always_inline)) bool rc__reply_success(rc__wctx *w, rc_xdr *x,
                                                                   size_t max, uint32_t xid)
{
	if (__builtin_expect(w->auth != NULL, 0))
		return rc__reply_accepted_head(w, x, max, xid, RC__SUCCESS);
	rc__reply_head_plain(w, max, xid);
	rc__encbuf_xdr_at(&w->rb, x, 24);
	return true;
}


/* The results *res, coded by xres into x as w->auth's flavor wraps them (plain: as they are). */
static inline bool rc__encode_res(const rc__wctx *w, rc_xdr *x, rc_xdrproc xres, const void *res)
{
	if (__builtin_expect(w->auth != NULL, 0) && w->auth->fl->svc_wrap != NULL)
		return w->auth->fl->svc_wrap(w->auth, x, xres, res);
	return xres(x, (void *)res);
}


/* A datagram reply to xid did not fit: count it and trace it (SYSTEM_ERR goes instead). */
void rc__reply_too_big(rc_server *srv, uint32_t xid);

/* Report step pt of call xid now, if the server traces. */
#define RC__TRACE(srv, pt, xid)                                                              \
	do {                                                                                  \
		if (__builtin_expect((srv)->trace != NULL, 0))                                    \
			(srv)->trace((srv)->trace_arg, (pt), (xid), rc__trace_clock());              \
	} while (0)

/* The received step needs the xid, which is parsed later: the time is taken first. */
static inline uint64_t rc__trace_t0(const rc_server *srv)
{
	return __builtin_expect(srv->trace != NULL, 0) ? rc__trace_clock() : 0;
}

/*
 * The one-thread epoll loop while requests come one an event (*lone non-zero: set after an
 * event that served at most one before its read said EAGAIN), as calls and replies alternate:
 * whether to stop after the one served and skip the read that would only say EAGAIN (~0.3 us
 * a call; the descriptor is level-triggered, so more input brings the event back). Every 8th
 * time it reads on, to notice a batch.
 */
static inline bool rc__lone_skip(unsigned *lone)
{
	return *lone > 0 && ((*lone)++ & 7) != 0;
}

/* The epoll primitives every layer of the server's loop shares (inline: no file owns them, so
 * none calls up for them). Add tp to the epoll set, or change its interest (op EPOLL_CTL_ADD / _MOD), one-shot with
 * worker threads. False if epoll refused (errno kept): an ADD leaves tp unserved, a MOD of a
 * connection means it can no longer be served (the caller ends it). */
static inline bool rc__arm(rc_server *srv, int op, const rc_tp *tp, void *tag, uint32_t events)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = events | (srv->threads > 1 ? EPOLLONESHOT : 0);
	ev.data.ptr = tag;
	return epoll_ctl(srv->epfd, op, rc__tp_pollfd(tp), &ev) == 0;
}

/* Take tp out of the epoll set (it may not be in it: nothing to report). */
static inline void rc__disarm(rc_server *srv, const rc_tp *tp)
{
	(void)epoll_ctl(srv->epfd, EPOLL_CTL_DEL, rc__tp_pollfd(tp), NULL);
}

/* Reply bytes a connection's transport still holds. */
static inline size_t rc__conn_outq(rc__conn *c)
{
	return c->tp->vt->outq(c->tp);
}

/* ---- dispatch.c --------------------------------------------------------------------------- */

/* The bucket of (prog, vers) in the registration table. */
static inline unsigned rc__hash(uint32_t prog, uint32_t vers)
{
	return rc__hash_pair(prog, vers) % RC__NBUCKETS;
}

/* The registration of (prog, vers), or NULL; from any thread, without a lock (a registration
 * is published whole, and one taken out stays valid until the server is destroyed). Inline:
 * it is on every request's path (serve.c). */
static inline rc__reg *rc__find(rc_server *srv, uint32_t prog, uint32_t vers)
{
	for (rc__reg *r = atomic_load_explicit(&srv->buckets[rc__hash(prog, vers)],
	                                       memory_order_acquire);
	     r; r = atomic_load_explicit(&r->next, memory_order_acquire))
		if (r->prog == prog && r->vers == vers)
			return r;
	return NULL;
}

/* The procedure numbered proc in r, or NULL: a direct index below ndense, a binary search
 * above. Inline, as rc__find. */
static inline const rc_svc_proc *rc__find_proc(const rc__reg *r, uint32_t proc)
{
	size_t lo = 0, hi = r->nsparse;

	if (proc < r->ndense)
		return r->dense[proc];
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		uint32_t p = r->sparse[mid]->info->proc;
		if (p == proc)
			return r->sparse[mid];
		if (p < proc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
/* Tell the layer above's hook about ev (without srv->mu). */
void rc__server_notify(rc_server *srv, rc__srv_event ev);
/* Free a registration (its tables; not the caller's definition). */
void rc__reg_free(rc__reg *r);
/* The lowest and highest version of prog registered; false if none is. */
bool rc__vers_range(rc_server *srv, uint32_t prog, uint32_t *lo, uint32_t *hi);

/* ---- serve.c ------------------------------------------------------------------------------ */

/* Serve one request msg[0..len) from peer (NULL: a stream or in-process) that arrived on
 * stream connection conn (NULL: a datagram or in-process) into w->rb; the reply's length, or
 * 0 for no reply. A reply to an AUTH_TLS probe that promised TLS sets w->starttls (the caller,
 * rc__conn_probe, clears it before and starts TLS after). See serve.c. */
size_t rc__serve(rc_server *srv, rc__wctx *w, const unsigned char *msg, size_t len,
                 const rc_peer *peer, bool dgram, uint64_t t_received, rc_tp *conn);

/* Whether stream connection conn (NULL: a datagram or in-process call) is under TLS with its
 * handshake done; *peer (when peer is not NULL) gets the verified client certificate's
 * identity or NULL. Asked only when a procedure or a TLS-required program wants to know, so
 * a request does not pay for it. */
static inline bool rc__conn_secure(rc_tp *conn, const rc_tls_peer **peer)
{
	const rc_tls_peer *p = NULL;
	bool yes = conn != NULL && conn->vt->secure != NULL && conn->vt->secure(conn, &p);

	if (peer != NULL)
		*peer = p;
	return yes;
}

/* Whether msg[0..len) looks like an AUTH_TLS probe (a call with credential flavor AUTH_TLS):
 * such a request is served at once on the reading thread (rc__conn_probe), never as a job,
 * because the bytes after its reply are TLS. */
static inline bool rc__is_tls_probe(const unsigned char *msg, size_t len)
{
	return len >= 40 && rc__ld32(msg + 4) == RC__CALL && rc__ld32(msg + 24) == RC_AUTH_TLS;
}
/* ---- direct.c: the in-process listener kind ------------------------------------------------ */

/* A synchronous listener's delivery callbacks (rc_tp_deliver; ctx is the server): serve the
 * message on the caller's thread; rc__deliver_to's way back may be kept by a deferred
 * request (the answer then goes back later, from any thread). */
void rc__deliver(void *ctx, const void *msg, size_t len, rc_reply_fn reply, void *rctx);
void rc__deliver_to(void *ctx, const void *msg, size_t len, const rc_tp_reply_to *to);

/* ---- conn.c ------------------------------------------------------------------------------- */

/* A connection's epoll event (the one entry the loops use): serve it on this thread, or with
 * worker threads read its requests out as jobs. */
void rc__conn_event(rc_server *srv, rc__wctx *w, rc__conn *c, uint32_t events);
/* Accept what a stream listener has, making room when the table is full or descriptors run
 * out (see conn.c's admission section). */
void rc__accept(rc_server *srv, rc__lsn *l);
/* conn.c: serve tp, a connection just accepted or one the application handed over
 * (rc_server_listen_fd). RC_OK, or RC_NOMEM (tp closed, counted refused). */
rc_status rc__conn_admit(rc_server *srv, rc_tp *tp);
/* Resume the listeners whose pause is over; note when the next is due (under srv->mu). */
void rc__lsn_wake(rc_server *srv, int64_t now);
/* timeout_ms for epoll_wait, shortened to wake up when a paused listener is due. */
int rc__wake_timeout(rc_server *srv, int timeout_ms);
/* Open the reserve descriptor if it is wanted and not held (under srv->mu). */
void rc__reserve_take(rc_server *srv);
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
 * rest (under c->wmu). False: c is broken. */
bool rc__conn_push_out(rc_server *srv, rc__conn *c);
/* Arm c's output descriptor unless it is armed (under c->wmu): its event runs rc__conn_out,
 * which re-arms a held c that is back under its caps. False: no descriptor. */
bool rc__conn_poke(rc_server *srv, rc__conn *c);
/* Serve queued jobs until none is left. */
void rc__job_next(rc_server *srv, rc__wctx *w);
/* A connection's output descriptor is writable: drain its queue. */
void rc__conn_out(rc_server *srv, rc__conn *c);
/* A back channel's caller reads c itself while it waits (srv->conn_take, conn_read,
 * conn_give: see there). */
bool rc__conn_back_take(rc_server *srv, rc__conn *c);
rc_status rc__conn_back_read(rc_server *srv, rc__conn *c, int wakefd, int64_t deadline);
void rc__conn_back_give(rc_server *srv, rc__conn *c);

/* ---- stats.c: counters and the call log ----------------------------------------------------- */

/* The trace function of a server that counts or logs without tracing: the serve step's traced
 * copy runs, and its trace points call this. */
void rc__obs_nop(void *arg, rc_trace_point pt, uint32_t xid, uint64_t ns);
/* Count and log the call msg[0..len) that serving thread w just served (srv->obs set): rlen
 * its reply's bytes in w->rb, dgram whether it came as a datagram, deferred whether its
 * routine deferred it, t_received when it came (0: unknown). */
void rc__obs_call(rc_server *srv, rc__wctx *w, const unsigned char *msg, size_t len,
                  size_t rlen, bool dgram, bool deferred, uint64_t t_received);
/* Free srv's counters and log settings (rc_server_destroy). */
void rc__obs_free(rc_server *srv);

/* ---- behind a load balancer (proxy.c) and draining (drain.c) ------------------------------ */

/* The program a failover client calls first on each connection to be told of a drain
 * (docs/load-balancing.md, "Drain and failover"): version 1, procedure 1 (NOTICE). */
#define RC__CTL_PROG 0x3fd7c0deu
#define RC__CTL_VERS 1u
#define RC__CTL_NOTICE 1u

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
/* conn.c: drop a reference to c; the last closes it. Under srv->mu (rc__conn_unref without
 * the lock). */
void rc__conn_unref_locked(rc_server *srv, rc__conn *c);

#endif

/*
 * Internal to the server's files: the objects they share and the functions one calls in
 * another, in four headers, each including the one below it:
 *
 *   listener.h     the listener kinds: stream connections (conn.c), datagrams (dgram.c),
 *                  in-process (direct.c), with the back channel's hooks on connections
 *   request.h      a request: its object, handle, pool, deferral and answer (defer.c,
 *                  reqhandle.c), the serve step (serve.c) and dispatch (dispatch.c)
 *   reply.h        the one way out: sinks, the serving thread's context, the reply encoders
 *                  (reply.c) and rc__reply_out, inline
 *   base.h         this one: the server object, its registration table, its listeners, the
 *                  epoll primitives and tracing -- what every layer of the server reads
 *
 * The layers, top to bottom -- each uses only what the ones below it define
 * (tests/runtime/layers.sh checks it with nm):
 *
 *   server.c    life cycle, listeners, the loops (epoll, workers, sweeper)
 *   accept.c    admission: accepting connections, making room, listener pauses
 *   conn.c      stream connections (one event entry, one-thread and worker mode) |
 *   dgram.c     datagram listeners                                                | listener
 *   direct.c    in-process (synchronous transports)                               | kinds
 *   serve.c     one request: decode, authenticate, dispatch; hands back the reply's bytes
 *   dispatch.c  the table, and the rc_svc_req_* facts a routine asks for   | side
 *   rpcsec_gss.c  RPCSEC_GSS: the context table, what a request tells of it | by side
 *   defer.c     request objects and their pool, every answer, deferral
 *   reply.c     the reply encoders (the one way out itself is rc__reply_out, inline)
 *   drc.c       the duplicate request cache
 *   reqhandle.c the request handle table
 *
 * Below them all, runtime/auth/ (the flavors and the GSS core) knows no server object: the
 * serve step hands a flavor the call (rc__svc_call, with reply.c's encoders for a call the
 * flavor answers itself) and the call's rc__svc_auth, which the request keeps.
 *
 * A lower layer reaches a higher one only through a function pointer it was handed: a sink
 * (where a reply goes, "The one way out"), srv->defer_room, srv->back (the back channel's
 * hooks, backchan/). The epoll primitives (rc__arm, rc__disarm) are inline here. The layers
 * above (backchan/, rpcbind/, sun/) see server_internal.h (the back channel, listener.h).
 */
#ifndef RC_SERVER_BASE_H
#define RC_SERVER_BASE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>

#include "runtime/auth/auth.h"
#include "runtime/core/rpc.h"
#include "runtime/server/server_internal.h"
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
	bool drc_streams;  /* stream calls go through the duplicate cache too (server.c) */
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
 * The back channel's hooks on the stream connections: backchan/ installs them (srv->back)
 * before it gives a connection its first handle, and the server loop (conn.c) calls them
 * only through srv->back -- the server knows no back channel.
 * route -- a REPLY read on c goes to the back channel that sent its call, or nowhere (true:
 * msg was a reply, taken or dropped; false: not one, or c has no handle -- serve it). Called
 * by c's reader, without locks.
 * hangup -- c's reading has ended: its handle is detached, its back channels' calls end
 * (under srv->mu; nothing if c has no handle).
 * detach -- c closes: as hangup, and the connection's reference to the handle goes (under
 * srv->mu).
 * starve -- c's reading has stopped with calls back in flight whose replies it cannot read
 * (its parking budget, or the inbound budget, is spent): those calls fail at once with
 * RC_TOOMANY and a detail saying so, their late replies are dropped, and the server counts
 * them (rc_server_stats.backcalls_starved). The connection and its back channels stay
 * usable. Under srv->mu; nothing if c has no handle.
 */
typedef struct rc__back_hooks {
	bool (*route)(rc__conn *c, const void *msg, size_t len);
	void (*hangup)(rc__conn *c);
	void (*detach)(rc__conn *c);
	void (*starve)(rc__conn *c);
} rc__back_hooks;

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
	const rc__back_hooks *_Atomic back; /* NULL until backchan/ installs its hooks */
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
	struct rc__gss_table *gss; /* rc_server_set_gss's contexts, or NULL (rpcsec_gss.c) */
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
	/* A descriptor was freed (under mu): take the reserve back, resume the listeners waiting
	 * for room. Set by the life cycle (accept.c's rc__room_freed), for the connections below
	 * it (conn.c). */
	void (*room_freed)(struct rc_server *srv);
	/* A call to RC__CTL_PROG on a stream connection (serve.c's miss path): its reply length.
	 * Set by the life cycle (drain.c's rc__ctl_serve), for the serve step below it. */
	size_t (*ctl_serve)(struct rc_server *srv, struct rc__wctx *w, struct rc_svc_req *req,
	                    uint32_t xid, size_t max);
	/* Admission's hooks into the load-balancer layer above it (set by the life cycle): the
	 * timer of PROXY headers and a drain (drain.c's rc__aux_tick, from rc__lsn_wake under
	 * mu: returns wake lowered to when it is next due), and a connection accepted on a
	 * ?proxy=v2 listener, whose header is read before it is admitted (proxy.c's
	 * rc__proxy_begin; takes tp). */
	int64_t (*aux_tick)(struct rc_server *srv, int64_t now, int64_t wake);
	void (*proxy_begin)(struct rc_server *srv, struct rc__lsn *l, rc_tp *tp);
	/* srv->inbound fell (under mu) while connections wait unread for max_inbound_bytes
	 * (memwait): those under the budget again are re-armed (conn.c's rc__inbound_room, set
	 * by the life cycle as defer_room is). */
	void (*inbound_room)(struct rc_server *srv);
	/* The thread that serves alone (rc_server_run with one thread, rc_server_step) while it
	 * does (loop_alone): a back channel's blocking call from it could never get its reply. */
	pthread_t loop_thread;
	atomic_bool loop_alone;
	unsigned backreaders; /* under mu: connections a back channel's caller reads now
	                       * (listener.h's rc__conn_back_take) */
	rc__conn *conn_pool;  /* under mu: closed connections once taken, for reuse (conn.c) */
	bool destroying;      /* under mu: rc_server_destroy has begun: no more are taken */
	/* connection life (backchan/connlife.c): the hook (set while not running) and its steps
	 * (NULL: no hook), the CLOSEs queued to be told without locks (under mu; nclosedq counts
	 * them for a test without it) */
	void (*conn_hook)(struct rc_server_conn *sc, rc_conn_event ev, void *ctx);
	void *conn_hook_ctx;
	const struct rc__life_hooks *life;
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

/* srv->inbound (max_inbound_bytes): n bytes more, or fewer, held for peers' requests not yet
 * served (under srv->mu). A fall lets the connections waiting for the budget read again
 * (srv->inbound_room), for the request layer (deferred arguments) and the connections alike. */
static inline void rc__inbound_add(rc_server *srv, size_t n)
{
	atomic_fetch_add_explicit(&srv->inbound, n, memory_order_relaxed);
}

static inline void rc__inbound_sub(rc_server *srv, size_t n)
{
	if (n == 0)
		return;
	atomic_fetch_sub_explicit(&srv->inbound, n, memory_order_relaxed);
	if (srv->memwait)
		srv->inbound_room(srv);
}

/* RC__LIM -- srv->lim.f as a field rc_server_set_limits may change while the server runs
 * (limits.c): a relaxed atomic load, for readers that do not hold srv->mu (the writer stores
 * under it). Fields it refuses while running (max_record, drc_*) are read plainly. */
#define RC__LIM(srv, f) __atomic_load_n(&(srv)->lim.f, __ATOMIC_RELAXED)

/* RPCSEC_GSS (rpcsec_gss.c): free srv's context table (rc_server_destroy); apply srv->lim's
 * gss_* bounds to it (rc_server_set_limits); the contexts in it now and those evicted to make
 * room (rc_server_get_stats; 0 and 0 without a table). */
void rc__gss_free(rc_server *srv);
void rc__gss_apply_limits(rc_server *srv);
void rc__gss_get_stats(rc_server *srv, uint64_t *contexts, uint64_t *evicted);

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

#endif

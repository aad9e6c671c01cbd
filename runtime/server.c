/*
 * The server: listeners, connections, the dispatch table and the serving loops.
 *
 * Serving one request (rc__serve) is the same for every transport: decode the call header
 * (RPC version, credentials with bounds), run the authentication hook, find the program and
 * version in a hash table and the procedure in a direct-index table, consult the duplicate
 * request cache (datagrams), decode the arguments under an allocation cap, run the routine,
 * encode the reply into a per-thread buffer with headroom for the record mark, free what
 * decoding and the routine allocated, and send.
 *
 * Loops: a server whose only listener is one UDP socket serves it with blocking receives (one
 * syscall in, one out, per call; every worker thread blocks on the same socket). Otherwise an
 * epoll loop serves listeners and connections; with worker threads, every thread waits on the
 * same epoll set for one event at a time and each descriptor is armed one-shot, so one
 * connection is read by one thread at a time -- but its calls run in parallel, as jobs
 * (rc__conn_serve_mt).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "runtime/rpc.h"
#include "runtime/server_internal.h"

#define RC__NBUCKETS 64
#define RC__DENSE_MAX 1024     /* procedure numbers below this index a table directly */
#define RC__STACK_REPLY 4096
#define RC__ARGS_STACK 256
#define RC__MAX_LISTENERS 64
#define RC__OUT_HIGH ((size_t)256 << 10) /* queued reply bytes that pause reading */
#define RC__BATCH_MAX (16u << 10)          /* larger replies are sent at once, not batched */
#define RC__CONN_JOBS 64                   /* worker threads: requests of one connection read */
#define RC__CONN_JOB_BYTES ((size_t)1 << 20) /* and unanswered, at most (and this many bytes) */

enum { RC__EV_LISTENER = 1, RC__EV_CONN = 2, RC__EV_STOP = 3, RC__EV_JOB = 4, RC__EV_OUT = 5 };

typedef struct rc__reg {
	struct rc__reg *next; /* hash chain */
	uint32_t prog, vers;
	const rc_svc_prog *def;
	void *ctx;
	uint32_t ndense;
	const rc_svc_proc **dense; /* by procedure number, below ndense */
	const rc_svc_proc **sparse; /* the rest, sorted by number */
	size_t nsparse;
} rc__reg;

typedef struct rc__lsn {
	int kind; /* RC__EV_LISTENER */
	rc_tp *tp;
	bool dgram;
	bool paused; /* accept hit the descriptor limit: off the epoll set for a while */
	int64_t resume_at;
	unsigned lone; /* one thread: non-zero while datagrams come one an event (rc__lone_skip) */
	char uri[RC_URI_MAX];
} rc__lsn;

typedef struct rc__conn rc__conn;

/* The epoll tag of a connection's output descriptor (worker threads). */
typedef struct rc__outev {
	int kind; /* RC__EV_OUT */
	rc__conn *c;
} rc__outev;

struct rc__conn {
	int kind; /* RC__EV_CONN */
	struct rc__conn *next, *prev;
	rc_tp *tp;
	int64_t last_active;
	int64_t partial_since; /* 0, or when the current partial record began */
	unsigned char *out;    /* reply bytes not yet sent: out[outoff..outlen) */
	size_t outlen, outoff;
	size_t outcap;
	uint32_t armed;        /* epoll interest currently set */
	bool busy;             /* a worker is serving it */
	bool doomed;           /* shut down by the sweeper: its worker closes it */
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
	bool held;             /* under srv->mu: left disarmed (jobs at the cap, or output backed up) */
	bool dead;             /* under srv->mu: reading is over; freed when refs reach 0 */
};

/* A request copied out of a connection, for a worker thread to serve. */
typedef struct rc__job {
	struct rc__job *next;
	rc__conn *c;
	uint64_t t_rcv;
	size_t len;
	unsigned char msg[];
} rc__job;

struct rc_svc_req {
	rc_server *srv;
	const rc__reg *reg;
	const rc_svc_proc *proc;
	uint32_t xid;
	uint32_t flavor;
	bool has_sys;
	rc_authsys sys;
	const rc_peer *peer;
};

struct rc_server {
	pthread_mutex_t mu;
	rc__reg *buckets[RC__NBUCKETS];
	rc__lsn *lsn[RC__MAX_LISTENERS];
	size_t nlsn;
	rc__conn *conns;
	uint32_t nconns;
	int epfd;
	int stopfd;
	int stop_ev; /* the epoll tag of stopfd */
	int jobfd;   /* an eventfd, non-zero while jobs are queued (worker threads) */
	int job_ev;  /* its epoll tag */
	rc__job *jobq, *jobq_tail; /* under mu */
	atomic_int stop;
	atomic_bool running; /* read by rc_server_stop, maybe from a signal handler */
	unsigned threads;
	rc_server_limits lim;
	rc_svc_authfn auth;
	rc_trace_fn trace; /* NULL: off */
	void *trace_arg;
	void *auth_ctx;
	rc__drc *drc;
	bool rpcbind;
	int64_t next_sweep;
	unsigned char *step_rbuf; /* rc_server_step's datagram buffer */
};

static int64_t rc__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- registration ----------------------------------------------------------------------- */

static unsigned rc__hash(uint32_t prog, uint32_t vers)
{
	uint32_t h = prog * 2654435761u ^ (vers + 0x9e3779b9u + (prog << 6) + (prog >> 2));
	return h % RC__NBUCKETS;
}

static rc__reg *rc__find(rc_server *srv, uint32_t prog, uint32_t vers)
{
	for (rc__reg *r = srv->buckets[rc__hash(prog, vers)]; r; r = r->next)
		if (r->prog == prog && r->vers == vers)
			return r;
	return NULL;
}

static int rc__proc_cmp(const void *a, const void *b)
{
	uint32_t x = (*(const rc_svc_proc *const *)a)->info->proc;
	uint32_t y = (*(const rc_svc_proc *const *)b)->info->proc;
	return x < y ? -1 : x > y;
}

static const rc_svc_proc *rc__find_proc(const rc__reg *r, uint32_t proc)
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

static void rc__reg_free(rc__reg *r)
{
	free(r->dense);
	free(r->sparse);
	free(r);
}

rc_status rc_server_register(rc_server *srv, const rc_svc_prog *def, void *ctx)
{
	rc__reg *r;
	uint32_t maxdense = 0;
	size_t i, ns = 0;

	if (srv == NULL || def == NULL || (def->nprocs > 0 && def->procs == NULL) ||
	    atomic_load(&srv->running))
		return RC_INVAL;
	for (i = 0; i < def->nprocs; i++) {
		const rc_svc_proc *p = &def->procs[i];
		if (p->info == NULL || p->fn == NULL || p->info->xargs == NULL ||
		    p->info->xres == NULL)
			return RC_INVAL;
		if (p->info->proc < RC__DENSE_MAX) {
			if (p->info->proc + 1 > maxdense)
				maxdense = p->info->proc + 1;
		} else {
			ns++;
		}
	}
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return RC_NOMEM;
	r->prog = def->prog;
	r->vers = def->vers;
	r->def = def;
	r->ctx = ctx;
	r->ndense = maxdense;
	r->dense = calloc(maxdense ? maxdense : 1, sizeof(*r->dense));
	r->sparse = calloc(ns ? ns : 1, sizeof(*r->sparse));
	if (r->dense == NULL || r->sparse == NULL) {
		rc__reg_free(r);
		return RC_NOMEM;
	}
	for (i = 0; i < def->nprocs; i++) {
		const rc_svc_proc *p = &def->procs[i];
		if (p->info->proc < RC__DENSE_MAX) {
			if (r->dense[p->info->proc] != NULL) {
				rc__reg_free(r);
				return RC_INVAL; /* duplicate procedure number */
			}
			r->dense[p->info->proc] = p;
		} else {
			r->sparse[r->nsparse++] = p;
		}
	}
	qsort(r->sparse, r->nsparse, sizeof(*r->sparse), rc__proc_cmp);
	for (i = 1; i < r->nsparse; i++) {
		if (r->sparse[i]->info->proc == r->sparse[i - 1]->info->proc) {
			rc__reg_free(r);
			return RC_INVAL;
		}
	}
	pthread_mutex_lock(&srv->mu);
	if (rc__find(srv, def->prog, def->vers) != NULL) {
		pthread_mutex_unlock(&srv->mu);
		rc__reg_free(r);
		return RC_INVAL;
	}
	r->next = srv->buckets[rc__hash(def->prog, def->vers)];
	srv->buckets[rc__hash(def->prog, def->vers)] = r;
	pthread_mutex_unlock(&srv->mu);
	if (srv->rpcbind)
		(void)rc__rpcbind_sync(srv);
	return RC_OK;
}

/* The lowest and highest version of prog registered; false if none is. */
static bool rc__vers_range(rc_server *srv, uint32_t prog, uint32_t *lo, uint32_t *hi)
{
	bool any = false;

	for (int b = 0; b < RC__NBUCKETS; b++) {
		for (rc__reg *r = srv->buckets[b]; r; r = r->next) {
			if (r->prog != prog)
				continue;
			if (!any || r->vers < *lo)
				*lo = r->vers;
			if (!any || r->vers > *hi)
				*hi = r->vers;
			any = true;
		}
	}
	return any;
}

void rc__server_each_reg(rc_server *srv, void (*fn)(void *ctx, uint32_t prog, uint32_t vers),
                         void *ctx)
{
	for (int b = 0; b < RC__NBUCKETS; b++)
		for (rc__reg *r = srv->buckets[b]; r; r = r->next)
			fn(ctx, r->prog, r->vers);
}

size_t rc__server_listeners(rc_server *srv, const char **uris, bool *dgram, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < srv->nlsn && n < max; i++) {
		if (srv->lsn[i]->tp->fd < 0)
			continue;
		uris[n] = srv->lsn[i]->uri;
		dgram[n] = srv->lsn[i]->dgram;
		n++;
	}
	return n;
}

/* ---- request accessors ------------------------------------------------------------------ */

void *rc_svc_req_context(const rc_svc_req *req)
{
	return req ? req->reg->ctx : NULL;
}

const rc_procinfo *rc_svc_req_proc(const rc_svc_req *req)
{
	return req ? req->proc->info : NULL;
}

uint32_t rc_svc_req_flavor(const rc_svc_req *req)
{
	return req ? req->flavor : RC_AUTH_NONE;
}

const rc_authsys *rc_svc_req_authsys(const rc_svc_req *req)
{
	return req && req->has_sys ? &req->sys : NULL;
}

/* ---- serving one request ---------------------------------------------------------------- */

/* A per-thread reply buffer. */
typedef struct rc__wctx {
	rc__encbuf rb;
	unsigned char *rbuf; /* this thread's datagram receive buffer (NULL until needed) */
	uint32_t xid;        /* of the request served last (trace points after rc__serve) */
	unsigned char stack[RC__STACK_REPLY];
} rc__wctx;

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

#define RC__DGRAM_MAX 65536

/* Parse an AUTH_SYS body (RFC 5531 section 14): exactly len bytes, bounded fields. */
static bool rc__parse_authsys(const unsigned char *body, uint32_t len, rc_authsys *a)
{
	rc_xdr x;
	uint32_t mlen, ng;

	if (len < 20)
		return false; /* stamp, empty name, uid, gid, gid count */
	rc_xdrmem_create(&x, (void *)body, len, RC_XDR_DECODE);
	if (!rc_xdr_u_int(&x, &a->stamp) || !rc_xdr_u_int(&x, &mlen) || mlen > 255 ||
	    rc_xdr_remaining(&x) < ((mlen + 3) & ~3u) + 12)
		return false;
	if (!rc_xdr_opaque(&x, a->machine, mlen))
		return false;
	a->machine[mlen] = '\0';
	if (!rc_xdr_u_int(&x, &a->uid) || !rc_xdr_u_int(&x, &a->gid) || !rc_xdr_u_int(&x, &ng) ||
	    ng > 16 || rc_xdr_remaining(&x) != (size_t)ng * 4)
		return false;
	a->ngids = ng;
	for (uint32_t i = 0; i < ng; i++)
		if (!rc_xdr_u_int(&x, &a->gids[i]))
			return false;
	return true;
}

/* Start a reply to xid in w's buffer: returns the stream positioned after the reply header's
 * common part (xid, REPLY). */
static void rc__reply_begin(rc__wctx *w, rc_xdr *x, size_t max, uint32_t xid)
{
	unsigned char *h;

	rc__encbuf_free(&w->rb);
	rc__encbuf_init(&w->rb, w->stack, sizeof(w->stack), max);
	rc__encbuf_xdr(&w->rb, x);
	h = rc_xdr_inline(x, 8); /* the stack buffer always has room */
	rc__st32(h, xid);
	rc__st32(h + 4, RC__REPLY);
}

/* Start a successful reply to xid in w's buffer: the whole 24-byte header (REPLY,
 * MSG_ACCEPTED, an AUTH_NONE verifier, SUCCESS) written at once; x is positioned after it for
 * the results. The hot path of every call. */
static inline void rc__reply_success(rc__wctx *w, rc_xdr *x, size_t max, uint32_t xid)
{
	unsigned char *h;

	rc__encbuf_free(&w->rb);
	rc__encbuf_init(&w->rb, w->stack, sizeof(w->stack), max);
	h = rc__encbuf_msg(&w->rb); /* the stack buffer always has room */
	rc__st32(h, xid);
	rc__st32(h + 4, RC__REPLY);
	memset(h + 8, 0, 16); /* MSG_ACCEPTED, AUTH_NONE, empty body, SUCCESS: all zero */
	rc__encbuf_xdr_at(&w->rb, x, 24);
}
_Static_assert(RC__MSG_ACCEPTED == 0 && RC__SUCCESS == 0, "RFC 5531 values");

/* An accepted reply's header up to and including accept_stat: MSG_ACCEPTED, an AUTH_NONE
 * verifier, stat. */
static void rc__reply_accepted(rc_xdr *x, uint32_t stat)
{
	unsigned char *h = rc_xdr_inline(x, 16);

	rc__st32(h, RC__MSG_ACCEPTED);
	rc__st32(h + 4, 0);
	rc__st32(h + 8, 0);
	rc__st32(h + 12, stat);
}

/* A complete reply with no body beyond the status (and optional low/high range). */
static size_t rc__reply_simple(rc__wctx *w, size_t max, uint32_t xid, bool denied,
                               uint32_t stat, const uint32_t *extra, int nextra)
{
	rc_xdr x;

	rc__reply_begin(w, &x, max, xid);
	if (denied) {
		uint32_t v = RC__MSG_DENIED;
		rc_xdr_u_int(&x, &v);
		rc_xdr_u_int(&x, &stat);
	} else {
		rc__reply_accepted(&x, stat);
	}
	for (int i = 0; i < nextra; i++)
		rc_xdr_u_int(&x, (uint32_t *)&extra[i]);
	return rc_xdr_getpos(&x);
}

/*
 * Serve one request message. Returns the reply's length in w->rb (message at
 * rc__encbuf_msg(&w->rb)), or 0 when no reply is to be sent (not a call, a duplicate in
 * progress, a routine that declined).
 */
static size_t rc__serve(rc_server *srv, rc__wctx *w, const unsigned char *msg, size_t len,
                        const rc_peer *peer, bool dgram, uint64_t t_received)
{
	rc_xdr x, rx;
	rc_svc_req req;
	uint32_t xid, mtype, rpcvers, prog, vers, proc, vflavor, vlen, clen;
	const unsigned char *cred = NULL;
	unsigned char argstack[RC__ARGS_STACK], resstack[RC__ARGS_STACK];
	void *args = NULL, *res = NULL;
	const rc_procinfo *info;
	size_t max = srv->lim.max_record, rlen;
	rc__drc_key key;
	bool cached = false, ran = false;
	bool ok;

	rc__rd rd = {msg, msg + len};

	w->xid = len >= 4 ? rc__ld32(msg) : 0;
	req.has_sys = false;
	/* The usual header, read at fixed offsets: CALL, RPC version 2, AUTH_NONE credentials
	 * with an empty body, a verifier with an empty body. Anything else takes the general
	 * parse below, which checks every field. */
	if (len >= 40 && rc__ld32(msg + 4) == RC__CALL && rc__ld32(msg + 8) == RC__RPCVERS &&
	    rc__ld32(msg + 24) == RC_AUTH_NONE && rc__ld32(msg + 28) == 0 &&
	    rc__ld32(msg + 36) == 0) {
		xid = rc__ld32(msg);
		prog = rc__ld32(msg + 12);
		vers = rc__ld32(msg + 16);
		proc = rc__ld32(msg + 20);
		req.flavor = RC_AUTH_NONE;
		clen = 0;
		rd.p = msg + 40;
		goto header_read;
	}
	if (!rc__rd32(&rd, &xid) || !rc__rd32(&rd, &mtype) || mtype != RC__CALL)
		return 0; /* not a call (a reply, or junk): dropped without effect */
	if (!rc__rd32(&rd, &rpcvers))
		return 0;
	if (rpcvers != RC__RPCVERS) {
		uint32_t range[2] = {RC__RPCVERS, RC__RPCVERS};
		return rc__reply_simple(w, max, xid, true, RC__RPC_MISMATCH, range, 2);
	}
	if (!rc__rd32(&rd, &prog) || !rc__rd32(&rd, &vers) || !rc__rd32(&rd, &proc) ||
	    !rc__rd32(&rd, &req.flavor) || !rc__rd32(&rd, &clen) || clen > RC__MAX_AUTH_BYTES ||
	    (cred = rc__rdn(&rd, clen)) == NULL || !rc__rd32(&rd, &vflavor) ||
	    !rc__rd32(&rd, &vlen) || vlen > RC__MAX_AUTH_BYTES || rc__rdn(&rd, vlen) == NULL) {
		uint32_t st = RC__AUTH_BADCRED;
		return rc__reply_simple(w, max, xid, true, RC__AUTH_ERROR, &st, 1);
	}
	(void)vflavor;
header_read:
	if (t_received != 0)
		srv->trace(srv->trace_arg, RC_TP_SRV_RECEIVED, xid, t_received);
	if (clen == 0)
		cred = NULL;
	req.srv = srv;
	req.xid = xid;
	req.peer = peer;
	if (req.flavor == RC_AUTH_SYS) {
		if (cred == NULL || !rc__parse_authsys(cred, clen, &req.sys)) {
			uint32_t st = RC__AUTH_BADCRED;
			return rc__reply_simple(w, max, xid, true, RC__AUTH_ERROR, &st, 1);
		}
		req.has_sys = true;
	} else if (req.flavor != RC_AUTH_NONE) {
		uint32_t st = RC__AUTH_REJECTEDCRED;
		return rc__reply_simple(w, max, xid, true, RC__AUTH_ERROR, &st, 1);
	}

	req.reg = rc__find(srv, prog, vers);
	if (req.reg == NULL) {
		uint32_t range[2];
		if (rc__vers_range(srv, prog, &range[0], &range[1]))
			return rc__reply_simple(w, max, xid, false, RC__PROG_MISMATCH, range, 2);
		return rc__reply_simple(w, max, xid, false, RC__PROG_UNAVAIL, NULL, 0);
	}
	req.proc = rc__find_proc(req.reg, proc);
	if (req.proc == NULL)
		return rc__reply_simple(w, max, xid, false, RC__PROC_UNAVAIL, NULL, 0);
	if (srv->auth != NULL) {
		uint32_t st = srv->auth(&req, srv->auth_ctx);
		if (st != 0)
			return rc__reply_simple(w, max, xid, true, RC__AUTH_ERROR, &st, 1);
	}
	info = req.proc->info;

	/* At most once: a retransmitted datagram gets the cached reply, not a second run. */
	if (dgram && srv->drc != NULL && proc != 0) {
		rc__drc_make_key(&key, xid, prog, vers, proc, peer, rd.p, (size_t)(rd.end - rd.p));
		rc__encbuf_free(&w->rb);
		rc__encbuf_init(&w->rb, w->stack, sizeof(w->stack), max);
		switch (rc__drc_lookup(srv->drc, &key, &w->rb, &rlen)) {
		case RC__DRC_REPLAY:
			return rlen;
		case RC__DRC_INPROGRESS:
		case RC__DRC_DROP:
		case RC__DRC_REFUSED: /* no room to remember it: unrun, the client retransmits */
			return 0;
		case RC__DRC_NEW:
			cached = true;
			break;
		}
	}

	RC__TRACE(srv, RC_TP_SRV_DISPATCH, xid);
	/* Arguments and result objects, zeroed: on the stack when small. */
	if (info->args_size > 0)
		args = info->args_size <= sizeof(argstack) ? memset(argstack, 0, info->args_size)
		                                           : calloc(1, info->args_size);
	if (info->res_size > 0)
		res = info->res_size <= sizeof(resstack) ? memset(resstack, 0, info->res_size)
		                                         : calloc(1, info->res_size);
	if ((info->args_size > 0 && args == NULL) || (info->res_size > 0 && res == NULL)) {
		rlen = rc__reply_simple(w, max, xid, false, RC__SYSTEM_ERR, NULL, 0);
		goto out;
	}
	rc__xdr_decoder(&x, rd.p, (size_t)(rd.end - rd.p), srv->lim.max_alloc);
	if (!info->xargs(&x, args) || x.x_pos != x.x_end) {
		/* truncated, over a bound, or trailing bytes: garbage arguments */
		rlen = rc__reply_simple(w, max, xid, false, RC__GARBAGE_ARGS, NULL, 0);
		goto out;
	}
	RC__TRACE(srv, RC_TP_SRV_ARGS, xid);
	ran = true;
	ok = req.proc->fn(args, res, &req);
	RC__TRACE(srv, RC_TP_SRV_PROC, xid);
	if (!ok) {
		rlen = rc__reply_simple(w, max, xid, false, RC__SYSTEM_ERR, NULL, 0);
		goto out;
	}
	rc__reply_success(w, &rx, max, xid);
	if (!info->xres(&rx, res)) {
		rlen = rc__reply_simple(w, max, xid, false, RC__SYSTEM_ERR, NULL, 0);
		goto out;
	}
	rlen = rc_xdr_getpos(&rx);
	RC__TRACE(srv, RC_TP_SRV_ENCODED, xid);
out:
	if (args != NULL) {
		rc_xdr_free(info->xargs, args);
		if (args != argstack)
			free(args);
	}
	if (res != NULL) {
		rc_xdr_free(info->xres, res);
		if (res != resstack)
			free(res);
	}
	if (cached && ran)
		rc__drc_store(srv->drc, &key, rc__encbuf_msg(&w->rb), rlen);
	else if (cached) /* nothing ran: nothing to protect, no room held */
		rc__drc_cancel(srv->drc, &key);
	return rlen;
}

void rc__server_handle_direct(rc_server *srv, const void *msg, size_t len, rc_reply_fn reply,
                              void *ctx)
{
	rc__wctx w;
	size_t rlen;

	rc__encbuf_init(&w.rb, w.stack, sizeof(w.stack), srv->lim.max_record);
	w.rbuf = NULL;
	rlen = rc__serve(srv, &w, msg, len, NULL, false, rc__trace_t0(srv));
	if (rlen > 0) {
		reply(ctx, rc__encbuf_msg(&w.rb), rlen);
		RC__TRACE(srv, RC_TP_SRV_SENT, w.xid);
	}
	rc__encbuf_free(&w.rb);
	free(w.rbuf);
}

/* ---- life cycle ------------------------------------------------------------------------- */

rc_status rc_server_create(rc_server **out)
{
	rc_server *srv;
	struct epoll_event ev;

	if (out == NULL)
		return RC_INVAL;
	*out = NULL;
	if ((srv = calloc(1, sizeof(*srv))) == NULL)
		return RC_NOMEM;
	srv->lim.max_record = 4u << 20;
	srv->lim.max_alloc = 16u << 20;
	srv->lim.max_conns = 1024;
	srv->lim.idle_ms = 120000;
	srv->lim.stall_ms = 10000;
	srv->lim.drc_entries = 1u << 20;
	srv->lim.drc_ttl_ms = 120000;
	srv->lim.drc_bytes = (size_t)64 << 20;
	srv->epfd = epoll_create1(EPOLL_CLOEXEC);
	srv->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	srv->jobfd = -1; /* made by rc_server_set_threads */
	if (srv->epfd < 0 || srv->stopfd < 0) {
		if (srv->epfd >= 0)
			close(srv->epfd);
		if (srv->stopfd >= 0)
			close(srv->stopfd);
		free(srv);
		return RC_LOCALERROR;
	}
	srv->stop_ev = RC__EV_STOP;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = &srv->stop_ev;
	epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->stopfd, &ev);
	srv->job_ev = RC__EV_JOB;
	pthread_mutex_init(&srv->mu, NULL);
	srv->drc = rc__drc_create(srv->lim.drc_entries, srv->lim.drc_bytes, srv->lim.drc_ttl_ms);
	*out = srv;
	return RC_OK;
}

rc_status rc_server_set_limits(rc_server *srv, const rc_server_limits *lim)
{
	if (srv == NULL || lim == NULL || atomic_load(&srv->running))
		return RC_INVAL;
	if (lim->max_record)
		srv->lim.max_record = lim->max_record < 64 ? 64 : lim->max_record;
	if (lim->max_alloc)
		srv->lim.max_alloc = lim->max_alloc;
	if (lim->max_conns)
		srv->lim.max_conns = lim->max_conns;
	if (lim->idle_ms)
		srv->lim.idle_ms = lim->idle_ms;
	if (lim->stall_ms)
		srv->lim.stall_ms = lim->stall_ms;
	if (lim->drc_entries || lim->drc_ttl_ms || lim->drc_bytes) {
		if (lim->drc_entries)
			srv->lim.drc_entries = lim->drc_entries;
		if (lim->drc_ttl_ms)
			srv->lim.drc_ttl_ms = lim->drc_ttl_ms;
		if (lim->drc_bytes)
			srv->lim.drc_bytes = lim->drc_bytes;
		rc__drc_destroy(srv->drc);
		srv->drc = rc__drc_create(srv->lim.drc_entries, srv->lim.drc_bytes,
		                          srv->lim.drc_ttl_ms);
	}
	return RC_OK;
}

rc_status rc_server_get_stats(rc_server *srv, rc_server_stats *out)
{
	rc__drc_stats d = {0};

	if (srv == NULL || out == NULL)
		return RC_INVAL;
	if (srv->drc != NULL)
		rc__drc_get_stats(srv->drc, &d);
	memset(out, 0, sizeof(*out));
	out->drc_entries = d.entries;
	out->drc_bytes = d.bytes;
	out->drc_replayed = d.replayed;
	out->drc_in_progress = d.in_progress;
	out->drc_unanswered = d.unanswered;
	out->drc_shed = d.shed;
	out->drc_refused = d.refused;
	return RC_OK;
}

rc_status rc_server_set_trace(rc_server *srv, rc_trace_fn fn, void *arg)
{
	if (srv == NULL || atomic_load(&srv->running))
		return RC_INVAL;
	srv->trace = fn;
	srv->trace_arg = arg;
	return RC_OK;
}

rc_status rc_server_set_threads(rc_server *srv, unsigned n)
{
	struct epoll_event ev;

	if (srv == NULL || n > 1024 || atomic_load(&srv->running))
		return RC_INVAL;
	if (n > 1 && srv->jobfd < 0) {
		/* the job queue's eventfd: level-triggered and non-zero while jobs wait, so waiting
		 * workers keep waking while there is work */
		if ((srv->jobfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
			return RC_LOCALERROR;
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		ev.data.ptr = &srv->job_ev;
		if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->jobfd, &ev) != 0) {
			close(srv->jobfd);
			srv->jobfd = -1;
			return RC_LOCALERROR;
		}
	}
	srv->threads = n;
	return RC_OK;
}

rc_status rc_server_set_auth(rc_server *srv, rc_svc_authfn fn, void *ctx)
{
	if (srv == NULL || atomic_load(&srv->running))
		return RC_INVAL;
	srv->auth = fn;
	srv->auth_ctx = ctx;
	return RC_OK;
}

static void rc__arm(rc_server *srv, int op, int fd, void *tag, uint32_t events)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = events | (srv->threads > 1 ? EPOLLONESHOT : 0);
	ev.data.ptr = tag;
	epoll_ctl(srv->epfd, op, fd, &ev);
}

rc_status rc_server_listen(rc_server *srv, const char *uri, char *bound, size_t len)
{
	rc_uri u;
	rc_status st;
	rc__lsn *l;
	const rc_tp_kind *k;

	if (bound && len)
		bound[0] = '\0';
	if (srv == NULL || uri == NULL || atomic_load(&srv->running))
		return RC_INVAL;
	if ((st = rc__uri_parse(uri, &u)) != RC_OK)
		return st;
	if (srv->nlsn >= RC__MAX_LISTENERS)
		return RC_TOOMANY;
	k = rc__tp_find(u.scheme);
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return RC_NOMEM;
	l->kind = RC__EV_LISTENER;
	st = k->listen(&u, srv->lim.max_record, srv, &l->tp, l->uri, sizeof(l->uri));
	if (st != RC_OK) {
		free(l);
		return st;
	}
	l->dgram = !l->tp->stream && l->tp->fd >= 0;
	if (l->tp->fd >= 0) {
		rc__sock_cloexec_nonblock(l->tp->fd, !l->dgram);
		rc__arm(srv, EPOLL_CTL_ADD, l->tp->fd, l, EPOLLIN);
	}
	pthread_mutex_lock(&srv->mu);
	srv->lsn[srv->nlsn++] = l;
	pthread_mutex_unlock(&srv->mu);
	if (bound && len)
		snprintf(bound, len, "%s", l->uri);
	if (srv->rpcbind)
		(void)rc__rpcbind_sync(srv);
	return RC_OK;
}

rc_status rc_server_rpcbind(rc_server *srv, bool on)
{
	if (srv == NULL)
		return RC_INVAL;
	if (!on) {
		if (srv->rpcbind)
			rc__rpcbind_unset_all(srv);
		srv->rpcbind = false;
		return RC_OK;
	}
	srv->rpcbind = true;
	return rc__rpcbind_sync(srv);
}

static void rc__conn_close(rc_server *srv, rc__conn *c)
{
	/* under srv->mu */
	if (c->prev)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	srv->nconns--;
	epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->tp->fd, NULL);
	if (c->outfd >= 0) {
		epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->outfd, NULL);
		close(c->outfd);
	}
	c->tp->vt->close(c->tp);
	pthread_mutex_destroy(&c->wmu);
	free(c->out);
	free(c);
}

void rc_server_destroy(rc_server *srv)
{
	if (srv == NULL)
		return;
	if (srv->rpcbind)
		rc__rpcbind_unset_all(srv);
	pthread_mutex_lock(&srv->mu);
	while (srv->jobq) { /* queued when the server stopped: never run */
		rc__job *j = srv->jobq;
		srv->jobq = j->next;
		free(j);
	}
	while (srv->conns)
		rc__conn_close(srv, srv->conns);
	for (size_t i = 0; i < srv->nlsn; i++) {
		srv->lsn[i]->tp->vt->close(srv->lsn[i]->tp);
		free(srv->lsn[i]);
	}
	for (int b = 0; b < RC__NBUCKETS; b++) {
		while (srv->buckets[b]) {
			rc__reg *r = srv->buckets[b];
			srv->buckets[b] = r->next;
			rc__reg_free(r);
		}
	}
	pthread_mutex_unlock(&srv->mu);
	rc__drc_destroy(srv->drc);
	free(srv->step_rbuf);
	close(srv->epfd);
	close(srv->stopfd);
	if (srv->jobfd >= 0)
		close(srv->jobfd);
	pthread_mutex_destroy(&srv->mu);
	free(srv);
}

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
		shutdown(srv->lsn[0]->tp->fd, SHUT_RD); /* wakes the blocking receivers */
}

int rc_server_fd(rc_server *srv)
{
	return srv ? srv->epfd : -1;
}

/* ---- the loops -------------------------------------------------------------------------- */

/*
 * Ask for a connection to be closed: shut the socket down, so that its next event (at once,
 * or when the worker serving it re-arms it) finds it closed and its worker frees it. Only a
 * connection's own event handler frees it, so no thread can be left holding a freed one.
 */
static void rc__conn_doom(rc__conn *c)
{
	c->doomed = true;
	shutdown(c->tp->fd, SHUT_RDWR);
}

/* Append a record (mark + msg) to the connection's output queue. False: out of memory. */
static bool rc__conn_queue(rc__conn *c, const unsigned char *msg, size_t len)
{
	size_t pending = c->outlen - c->outoff, need = pending + len + 4;
	uint32_t mark = (uint32_t)len | RC_XDRREC_LAST_FRAG;

	if (c->outoff > 0) { /* slide what is left to the front */
		memmove(c->out, c->out + c->outoff, pending);
		c->outoff = 0;
		c->outlen = pending;
	}
	if (need > c->outcap) {
		size_t ncap = c->outcap ? c->outcap * 2 : 4096;
		unsigned char *nb;
		while (ncap < need)
			ncap *= 2;
		if ((nb = realloc(c->out, ncap)) == NULL)
			return false;
		c->out = nb;
		c->outcap = ncap;
	}
	rc__st32(c->out + c->outlen, mark);
	memcpy(c->out + c->outlen + 4, msg, len);
	c->outlen += len + 4;
	return true;
}

/*
 * Send a reply on a connection (the connection is ours while busy). With nothing queued and
 * nothing more to serve, it goes out at once from the reply buffer; otherwise it joins the queue,
 * which rc__conn_serve flushes once per batch, so pipelined calls are answered with one send for
 * many replies. False: the connection is broken or memory ran out.
 */
static bool rc__conn_reply(rc__conn *c, unsigned char *msg, size_t len, bool more)
{
	size_t sent = 0;
	rc_status st;

	if (more || c->outlen > c->outoff)
		return rc__conn_queue(c, msg, len);
	st = c->tp->vt->send(c->tp, msg, len, NULL, MSG_DONTWAIT, &sent);
	if (st == RC_OK)
		return true;
	if (st != RC_AGAIN)
		return false;
	/* the socket took only part: queue the rest of the record */
	if (sent < 4) {
		if (!rc__conn_queue(c, msg, len))
			return false;
		c->outoff += sent;
		return true;
	}
	c->outlen = c->outoff = 0;
	if (len + 4 - sent > c->outcap) {
		unsigned char *nb = realloc(c->out, len + 4 - sent);
		if (nb == NULL)
			return false;
		c->out = nb;
		c->outcap = len + 4 - sent;
	}
	memcpy(c->out, msg - 4 + sent, len + 4 - sent);
	c->outlen = len + 4 - sent;
	return true;
}

/* Flush queued output. True when all of it went out. False with *broken on error. */
static bool rc__conn_flush(rc__conn *c, bool *broken)
{
	*broken = false;
	while (c->outoff < c->outlen) {
		ssize_t n = send(c->tp->fd, c->out + c->outoff, c->outlen - c->outoff,
		                 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				*broken = true;
			return false;
		}
		c->outoff += (size_t)n;
	}
	c->outlen = c->outoff = 0;
	if (c->outcap > ((size_t)256 << 10)) { /* don't keep a big buffer for an idle peer */
		free(c->out);
		c->out = NULL;
		c->outcap = 0;
	}
	return true;
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

/* The next complete request on a connection: RC_OK, RC_AGAIN (none yet, or 16 reads made this
 * turn: level-triggered epoll brings us back for the rest), or the transport's error. */
static rc_status rc__conn_next(rc__conn *c, int *reads, void **msg, size_t *len)
{
	if (c->tp->vt->buffered(c->tp) == 0 && (*reads)++ >= 16)
		return RC_AGAIN;
	return c->tp->vt->recv(c->tp, msg, len, NULL, MSG_DONTWAIT);
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
	if (c->outlen > c->outoff && !rc__conn_flush(c, &broken) && broken)
		goto dead;
	for (;;) {
		void *msg;
		size_t len, rlen;
		rc_status st;
		bool more;

		if (c->outlen - c->outoff >= RC__OUT_HIGH) {
			/* a batch of replies is ready, or the peer is slow to read: send first, and
			 * stop reading while it does not take them (bounded memory) */
			if (!rc__conn_flush(c, &broken) && (broken || c->outlen - c->outoff >= RC__OUT_HIGH))
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
		if (!more && c->outlen > c->outoff && !rc__conn_flush(c, &broken) && broken)
			goto dead;
		if (rlen > 0 && c->outlen == c->outoff)
			RC__TRACE(srv, RC_TP_SRV_SENT, w->xid); /* sent, not queued */
		/* one request an event: stop here (records already read are served first) */
		if (!more && c->outlen == c->outoff && rc__lone_skip(&c->lone))
			break;
	}
	if (broken || (c->outlen > c->outoff && !rc__conn_flush(c, &broken) && broken))
		goto dead;
	/* a peer stuck inside a record (or not reading replies) is reaped after stall_ms */
	if (c->tp->vt->buffered(c->tp) == 0 && c->outlen == c->outoff)
		c->partial_since = 0;
	else if (c->partial_since == 0)
		c->partial_since = rc__now();
	pthread_mutex_lock(&srv->mu);
	c->busy = false;
	{
		size_t pending = c->outlen - c->outoff;
		uint32_t want = pending >= RC__OUT_HIGH ? EPOLLOUT
		                : pending > 0           ? (EPOLLIN | EPOLLRDHUP | EPOLLOUT)
		                                        : (EPOLLIN | EPOLLRDHUP);
		/* one-shot descriptors are re-armed every time; others only when interest changes */
		if (srv->threads > 1 || want != c->armed) {
			rc__arm(srv, EPOLL_CTL_MOD, c->tp->fd, c, want);
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

static void rc__accept(rc_server *srv, rc__lsn *l)
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
			epoll_ctl(srv->epfd, EPOLL_CTL_DEL, l->tp->fd, NULL);
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
		rc__arm(srv, EPOLL_CTL_ADD, tp->fd, c, EPOLLIN | EPOLLRDHUP);
		pthread_mutex_unlock(&srv->mu);
	}
	if (srv->threads > 1 && !l->paused)
		rc__arm(srv, EPOLL_CTL_MOD, l->tp->fd, l, EPOLLIN);
}

/* ---- worker threads on stream connections ----------------------------------------------
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

/* Reply bytes waiting in a connection's output queue (takes c->wmu). */
static size_t rc__conn_pending(rc__conn *c)
{
	size_t pending;

	pthread_mutex_lock(&c->wmu);
	pending = c->outlen - c->outoff;
	pthread_mutex_unlock(&c->wmu);
	return pending;
}

/* Re-arm a held connection that is back under its limits (under srv->mu). */
static void rc__conn_unhold(rc_server *srv, rc__conn *c)
{
	if (!c->held || c->dead || rc__jobs_full(c->jobs, c->jobbytes) ||
	    rc__conn_pending(c) >= RC__OUT_HIGH)
		return;
	c->held = false;
	/* complete records may wait in the reader's buffer with nothing left on the socket to
	 * raise EPOLLIN: ask for EPOLLOUT too, which an open socket raises at once */
	rc__arm(srv, EPOLL_CTL_MOD, c->tp->fd, c,
	        EPOLLIN | EPOLLRDHUP | (c->tp->vt->buffered(c->tp) > 0 ? EPOLLOUT : 0));
}

/* The connection broke while sending (under srv->mu): shut it down so that its reader, woken
 * now if it was held, ends it. */
static void rc__conn_broken(rc_server *srv, rc__conn *c)
{
	shutdown(c->tp->fd, SHUT_RDWR);
	if (c->held && !c->dead) {
		c->held = false;
		rc__arm(srv, EPOLL_CTL_MOD, c->tp->fd, c, EPOLLIN | EPOLLRDHUP);
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
		if ((c->outfd = fcntl(c->tp->fd, F_DUPFD_CLOEXEC, 0)) < 0)
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

	if (c->out_armed || c->outlen == c->outoff)
		return true; /* nothing to send, or the output descriptor's handler will */
	if (!rc__conn_flush(c, &broken) && broken)
		return false;
	return c->outlen == c->outoff || rc__conn_arm_out(srv, c);
}

/* The output descriptor is writable (or the socket shut down): drain the queue. */
static void rc__conn_out(rc_server *srv, rc__conn *c)
{
	bool broken;

	pthread_mutex_lock(&c->wmu);
	c->out_armed = false; /* this event used up the arming; its reference is dropped below */
	broken = !rc__conn_push_out(srv, c); /* re-armed, with a new reference, if output remains */
	pthread_mutex_unlock(&c->wmu);
	pthread_mutex_lock(&srv->mu);
	rc__conn_done(srv, c, broken);
}

/*
 * Serve one job and send its reply; drops the job's reference. While more jobs of the same
 * connection wait in the queue, a reply of up to RC__BATCH_MAX bytes joins the output queue
 * unsent: the job that takes the last of them from the queue sends the batch (flush_first)
 * before it runs, so pipelined calls get their replies in few sends and none waits behind a
 * long call.
 */
static void rc__job_run(rc_server *srv, rc__wctx *w, rc__job *j, bool flush_first)
{
	rc__conn *c = j->c;
	size_t rlen, len = j->len;
	bool broken = false, more;

	if (flush_first) {
		pthread_mutex_lock(&c->wmu);
		broken = !rc__conn_push_out(srv, c);
		pthread_mutex_unlock(&c->wmu);
	}
	/* run even when the reader has since found the peer gone: a peer that shut down only
	 * its sending side still reads the replies to what it sent */
	rlen = rc__serve(srv, w, j->msg, j->len, NULL, false, j->t_rcv);
	free(j);
	if (rlen > 0 && !broken) {
		unsigned char *msg = rc__encbuf_msg(&w->rb);
		/* read `queued` and take the write lock before letting go of srv->mu: a job that
		 * takes the last queued one after this sees our reply in the queue when it flushes */
		pthread_mutex_lock(&srv->mu);
		more = c->queued > 0 && rlen <= RC__BATCH_MAX;
		pthread_mutex_lock(&c->wmu);
		pthread_mutex_unlock(&srv->mu);
		/* queued while more come (or behind queued output), else sent; then what is queued
		 * goes out unless more come */
		broken = !rc__conn_reply(c, msg, rlen, more) || (!more && !rc__conn_push_out(srv, c));
		pthread_mutex_unlock(&c->wmu);
		if (!broken)
			RC__TRACE(srv, RC_TP_SRV_SENT, w->xid); /* sent or queued */
	}
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
static void rc__job_next(rc_server *srv, rc__wctx *w)
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
static void rc__conn_serve_mt(rc_server *srv, rc__wctx *w, rc__conn *c)
{
	rc__job *head = NULL, **tail = &head, *j;
	unsigned n = 0, inflight;
	size_t bytes = 0, inbytes;
	bool dead = c->doomed, full, capped = false;
	int reads = 0;
	uint64_t one = 1;

	pthread_mutex_lock(&srv->mu);
	inflight = c->jobs;
	inbytes = c->jobbytes;
	pthread_mutex_unlock(&srv->mu);
	full = rc__conn_pending(c) >= RC__OUT_HIGH;
	while (!dead) {
		void *msg;
		size_t len;
		rc_status st;

		if (full || rc__jobs_full(inflight + n, inbytes + bytes)) {
			capped = true; /* complete records may be left in the buffer */
			break;
		}
		st = rc__conn_next(c, &reads, &msg, &len);
		if (st == RC_AGAIN)
			break;
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
	if (n > 0)
		atomic_fetch_add(&c->refs, n);
	pthread_mutex_lock(&srv->mu); /* the sweeper reads last_active, partial_since under it */
	c->busy = false;
	c->jobs += n;
	c->jobbytes += bytes;
	if (n > 0) {
		c->last_active = rc__now();
		c->partial_since = 0; /* records completed: the stall clock starts again */
	}
	if (dead) {
		c->dead = true;
		epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->tp->fd, NULL);
		/* no more reading; replies still due go out, and the sweeper shuts the rest down
		 * after stall_ms without progress (an armed output descriptor then lets go) */
		shutdown(c->tp->fd, SHUT_RD);
	} else {
		size_t pending = rc__conn_pending(c);
		/* a peer stuck inside a record (or not reading replies) is reaped after stall_ms */
		if (c->tp->vt->buffered(c->tp) == 0 && pending == 0)
			c->partial_since = 0;
		else if (c->partial_since == 0)
			c->partial_since = rc__now();
		if (rc__jobs_full(c->jobs, c->jobbytes) || pending >= RC__OUT_HIGH)
			c->held = true;
		else /* jobs finished meanwhile; records left behind need EPOLLOUT to come back */
			rc__arm(srv, EPOLL_CTL_MOD, c->tp->fd, c,
			        EPOLLIN | EPOLLRDHUP | (capped ? EPOLLOUT : 0));
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

/* Serve up to n datagrams waiting on l (flags 0: blocking for each). Returns how many. */
static int rc__dgram_serve(rc_server *srv, rc__wctx *w, rc__lsn *l, int n, int flags,
                           bool rearm)
{
	size_t cap = srv->lim.max_record < RC__DGRAM_MAX ? srv->lim.max_record : RC__DGRAM_MAX;
	int i;

	if (w->rbuf == NULL && (w->rbuf = malloc(RC__DGRAM_MAX)) == NULL)
		return 0; /* the datagram stays queued; we come back */
	for (i = 0; i < n; i++) {
		size_t len, rlen;
		rc_peer from;
		rc_status st = l->tp->vt->recv_into(l->tp, w->rbuf, cap, &len, &from, flags);

		if (st != RC_OK)
			break;
		uint64_t t_rcv = rc__trace_t0(srv);
		if (i == 0 && rearm)
			rc__arm(srv, EPOLL_CTL_MOD, l->tp->fd, l, EPOLLIN); /* let another worker in */
		rlen = rc__serve(srv, w, w->rbuf, len, &from, true, t_rcv);
		if (rlen > 0) {
			(void)l->tp->vt->send(l->tp, rc__encbuf_msg(&w->rb), rlen, &from, 0, NULL);
			RC__TRACE(srv, RC_TP_SRV_SENT, w->xid);
		}
		if (atomic_load(&srv->stop))
			return i + 1;
	}
	return i;
}

/*
 * A datagram listener's epoll event. With worker threads: one datagram, then the one-shot
 * socket is re-armed for the next worker. With one thread: up to 64 while they come in
 * batches (one receive each, the last saying EAGAIN); while they come one at a time, just the
 * one the event announced (rc__lone_skip).
 */
static void rc__dgram_event(rc_server *srv, rc__wctx *w, rc__lsn *l)
{
	if (srv->threads > 1) {
		rc__dgram_serve(srv, w, l, 1, MSG_DONTWAIT, true);
	} else if (rc__lone_skip(&l->lone)) {
		rc__dgram_serve(srv, w, l, 1, MSG_DONTWAIT, false);
	} else {
		l->lone = rc__dgram_serve(srv, w, l, 64, MSG_DONTWAIT, false) <= 1;
	}
}

/* Close idle and stalled connections; resume paused listeners. */
static void rc__sweep(rc_server *srv, int64_t now)
{
	pthread_mutex_lock(&srv->mu);
	if (now < srv->next_sweep) {
		pthread_mutex_unlock(&srv->mu);
		return;
	}
	srv->next_sweep = now + 250000000LL;
	for (rc__conn *c = srv->conns; c; c = c->next) {
		if (c->dead) {
			/* reading is over; its last replies got stall_ms to go out */
			if (!c->doomed && now - c->last_active > (int64_t)srv->lim.stall_ms * 1000000)
				rc__conn_doom(c);
			continue;
		}
		if (c->doomed)
			continue;
		if (now - c->last_active > (int64_t)srv->lim.idle_ms * 1000000 ||
		    (c->partial_since && now - c->partial_since > (int64_t)srv->lim.stall_ms * 1000000))
			rc__conn_doom(c);
	}
	for (size_t i = 0; i < srv->nlsn; i++) {
		rc__lsn *l = srv->lsn[i];
		if (l->paused && now >= l->resume_at) {
			l->paused = false;
			rc__arm(srv, EPOLL_CTL_ADD, l->tp->fd, l, EPOLLIN);
		}
	}
	pthread_mutex_unlock(&srv->mu);
}

static rc_status rc__step(rc_server *srv, rc__wctx *w, int timeout_ms)
{
	struct epoll_event evs[64];
	int n;

	/* with worker threads, one event at a time: an event taken with others would wait behind
	 * whatever long call the first one runs, while other workers sit idle */
	n = epoll_wait(srv->epfd, evs, srv->threads > 1 ? 1 : 64, timeout_ms);
	if (n < 0) {
		if (errno == EINTR)
			return RC_OK;
		return RC_LOCALERROR;
	}
	for (int i = 0; i < n && !atomic_load(&srv->stop); i++) {
		int kind = *(int *)evs[i].data.ptr;
		if (kind == RC__EV_STOP) {
			atomic_store(&srv->stop, 1);
		} else if (kind == RC__EV_LISTENER) {
			rc__lsn *l = evs[i].data.ptr;
			if (l->dgram) {
				rc__dgram_event(srv, w, l);
			} else {
				rc__accept(srv, l);
			}
		} else if (kind == RC__EV_CONN) {
			rc__conn *c = evs[i].data.ptr;
			pthread_mutex_lock(&srv->mu);
			c->busy = true;
			pthread_mutex_unlock(&srv->mu);
			if (c->doomed)
				evs[i].events |= EPOLLHUP;
			if (srv->threads > 1)
				rc__conn_serve_mt(srv, w, c);
			else
				rc__conn_serve(srv, w, c, evs[i].events);
		} else if (kind == RC__EV_JOB) {
			rc__job_next(srv, w);
		} else if (kind == RC__EV_OUT) {
			rc__conn_out(srv, ((rc__outev *)evs[i].data.ptr)->c);
		}
	}
	rc__sweep(srv, rc__now());
	return RC_OK;
}

rc_status rc_server_step(rc_server *srv, int timeout_ms)
{
	rc__wctx w;
	rc_status st;

	if (srv == NULL || atomic_load(&srv->running))
		return RC_INVAL;
	rc__encbuf_init(&w.rb, w.stack, sizeof(w.stack), srv->lim.max_record);
	w.rbuf = srv->step_rbuf; /* kept between steps */
	st = rc__step(srv, &w, timeout_ms);
	rc__encbuf_free(&w.rb);
	srv->step_rbuf = w.rbuf;
	return st;
}

/* The fast path: the only listener is one datagram socket; block in recv. */
static bool rc__single_dgram(rc_server *srv)
{
	return srv->nlsn == 1 && srv->lsn[0]->dgram;
}

static void *rc__worker(void *arg)
{
	rc_server *srv = arg;
	rc__wctx w;

	rc__encbuf_init(&w.rb, w.stack, sizeof(w.stack), srv->lim.max_record);
	w.rbuf = NULL;
	if (rc__single_dgram(srv)) {
		rc__lsn *l = srv->lsn[0];
		while (!atomic_load(&srv->stop))
			rc__dgram_serve(srv, &w, l, 1 << 30, 0, false);
	} else {
		while (!atomic_load(&srv->stop))
			if (rc__step(srv, &w, 250) != RC_OK)
				break;
	}
	rc__encbuf_free(&w.rb);
	free(w.rbuf);
	return NULL;
}

rc_status rc_server_run(rc_server *srv)
{
	pthread_t tids[1024];
	unsigned n, started = 0;
	bool single;

	if (srv == NULL || srv->nlsn == 0 || atomic_exchange(&srv->running, true))
		return RC_INVAL; /* from here on (or already) running: no listener is added */
	n = srv->threads > 1 ? srv->threads : 1;
	single = rc__single_dgram(srv);
	if (single) {
		/* Served by blocking receives alone. The socket leaves the epoll set meanwhile:
		 * while it is in one, every datagram's arrival also runs epoll's wake-up callback,
		 * which cost ~0.3 us a round trip on loopback. */
		epoll_ctl(srv->epfd, EPOLL_CTL_DEL, srv->lsn[0]->tp->fd, NULL);
		rc__sock_cloexec_nonblock(srv->lsn[0]->tp->fd, false);
	}
	for (unsigned i = 1; i < n; i++)
		if (pthread_create(&tids[started], NULL, rc__worker, srv) == 0)
			started++;
	rc__worker(srv);
	for (unsigned i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	if (single) { /* back as rc_server_step expects it */
		rc__sock_cloexec_nonblock(srv->lsn[0]->tp->fd, true);
		rc__arm(srv, EPOLL_CTL_ADD, srv->lsn[0]->tp->fd, srv->lsn[0], EPOLLIN);
	}
	atomic_store(&srv->running, false);
	return RC_OK;
}

/*
 * rc-bench-client -- calls the procedures of bench.x through remotecall and measures them.
 *
 *   rc-bench-client --uri URI [--uri URI]... --proc P [--size BYTES] [--arg N] [--calls N]
 *                   [--warmup N] [--mode block|select|async|multi] [--depth N] [--threads N]
 *                   [--arg-dist const|exp] [--seed N] [--json]
 *
 * One measured call is one round over every --uri (async: one call). Modes:
 *   block   the generated blocking stubs (bench_echo_1(...)), one URI after another;
 *   select  rc_call_start() on every URI, then the program's own poll() loop drives the
 *           clients with rc_client_pollinfo() / rc_client_advance() until the round is done;
 *   async   --depth N calls in flight on each URI's client, started with the generated
 *           bench_*_1_async stubs; each completion callback checks its reply and starts the
 *           next call on the same client; the program's poll() loop drives the clients with
 *           rc_client_pollinfo() / rc_client_advance(). A call's latency runs from its start
 *           to its callback; us_per_call is wall time over calls (the inverse of throughput);
 *   multi   one round is one bench_*_1_multi (rc_multicall) to every URI at once, a handler
 *           checking each destination's reply as it arrives; us_per_call is per round.
 * --threads N (block, select): N threads share one client per URI and divide the calls.
 * --arg-dist exp (work): each call's argument is drawn from an exponential distribution with
 * mean --arg (block, select, async: per call and destination; multi: one draw per round, as
 * rc_multicall sends every destination the same arguments).
 * --trace (block mode, one thread): the client records the runtime's trace points
 * (<remotecall/trace.h>) and prints, after the result, one more JSON line with the median of
 * each step of the measured calls (trace_rec.h): encode, send, wait, decode, total.
 * Replies are verified (ECHO's bytes and length, SENDR's count, WORK's value, ADD's growth);
 * a failure prints rc_strerror()'s text and rc_error_format()'s detail and exits 1. ADD's
 * growth (--arg > 0, every client adding a positive amount): one call after another, each
 * total exceeds the last; in async mode, where replies come back in any order, the totals are
 * all different and, after N successful calls to a server, the largest is at least N x --arg
 * (add_seen_check).
 * --tls opportunistic|required [--tls-ca FILE] [--tls-cert FILE --tls-key FILE]
 * [--tls-name NAME]: RPC-over-TLS (rc_client_create_tls) on every tcp URI; after the results
 * the client says on stderr whether its connections ran under TLS ("tls: on" / "tls: off").
 * A quic://HOST:PORT URI (RPC-over-QUIC, TLS always) takes --tls-ca/--tls-cert/--tls-key/
 * --tls-name without --tls.
 * --gss none|integrity|privacy [--gss-service NAME]: RPCSEC_GSS (rc_client_set_auth_gss) on
 * every client, the server's name rcbench@localhost unless given.
 * --failover (tcp): rc_client_set_failover on every client -- after a server's drain
 * (rc-bench-server --drain-ms, SIGTERM) the calls it never ran go again on a new connection.
 * A URI may then be served by several servers in turn, so ADD's totals are not checked here
 * (the servers' --stats totals must add up to the calls made: tests/lb/haproxy.sh).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <remotecall/remotecall.h>

#include "bench.h"
#include "common.h"
#include "trace_rec.h"

static const char *progname = "rc-bench-client";
static trace_rec *g_trace; /* --trace */

enum { MODE_BLOCK, MODE_SELECT, MODE_ASYNC, MODE_MULTI };
static const bench_mode modes[] = {
	[MODE_BLOCK] = {"block", 0, "blocking generated stubs, one URI after another"},
	[MODE_SELECT] = {"select", 0,
	                 "rc_call_start on every URI, then poll() + rc_client_advance"},
	[MODE_ASYNC] = {"async", BENCH_MODE_DEPTH | BENCH_MODE_ONETHREAD,
	                "--depth calls in flight per URI (bench_*_1_async), re-issued from\n"
	                "               the callback; poll() + rc_client_advance"},
	[MODE_MULTI] = {"multi", BENCH_MODE_ONETHREAD,
	                "one round = one bench_*_1_multi (rc_multicall) to every URI"},
};

/* The descriptors idlc emitted, by procedure number. */
static const rc_procinfo *const proc_info[BP__COUNT] = {
	&bench_null_1_info, &bench_int_1_info,  &bench_send_1_info, &bench_sendr_1_info,
	&bench_echo_1_info, &bench_work_1_info, &bench_add_1_info,
};

/* A result object of any procedure. */
typedef union bench_res {
	int32_t i;
	uint32_t u;
	int64_t h;
	bench_data d;
} bench_res;

/* One destination's part of a round. */
typedef struct slot {
	bench_res res;
	rc_status st;
	uint32_t work;       /* WORK's argument of this call */
	atomic_int done;
	atomic_int *pending; /* the worker's count of slots not done */
} slot;

/*
 * async ADD: the totals one destination returned (a set, open addressing) and how many. Each
 * successful call ran once and added --arg > 0 to a total that only grows, so its total differs
 * from every other call's, and the k-th smallest of them is at least k x --arg.
 */
typedef struct add_seen {
	int64_t *set; /* cap slots, ADD_EMPTY when free */
	size_t cap;   /* a power of two, at least twice the calls */
	uint64_t n;   /* successful calls */
	int64_t max;  /* the largest total returned */
} add_seen;

#define ADD_EMPTY INT64_MIN

struct worker;

/* async: one call in flight (depth x URIs of them, each reused for its next call). */
typedef struct aslot {
	struct worker *w;
	int dest;
	bench_res res;
	uint32_t work;
	uint64_t t0;
} aslot;

typedef struct worker {
	const bench_opts *o;
	rc_client **clients;
	int n;                  /* clients (URIs) */
	uint64_t warmup, calls; /* this thread's share */
	uint64_t *lat;          /* calls entries */
	uint64_t errors;
	uint64_t done_calls;    /* measured calls made (less than calls after a fatal error) */
	bench_data arg;         /* the bench_data argument (pattern of o->size bytes) */
	char *resbuf;           /* block mode ECHO: the result's own buffer, reused (o->size) */
	int32_t arg_int;
	uint32_t arg_work;
	int64_t arg_add;
	bool add_unchecked;     /* --failover: a URI may be served by several servers in turn,
	                           each with its own total: their --stats totals are checked */
	int64_t *last_add;      /* per URI: the last ADD total seen */
	add_seen *add_seen;     /* async ADD: per URI, the totals seen (NULL otherwise) */
	slot *slots;            /* per URI */
	atomic_int pending;
	uint64_t rng;           /* --arg-dist exp draws */
	aslot *aslots;          /* async: depth x URIs */
	uint64_t a_target, a_issued, a_done; /* async: calls of this phase */
	bool a_record;          /* async: this phase is measured */
	uint64_t a_start;       /* async: when this phase began */
	pthread_barrier_t *barrier;
	uint64_t t_start; /* when the measured calls began (after the barrier) */
} worker;

static atomic_int g_stop;       /* a call failed and --keep-going is off */
static atomic_int g_reported;   /* failures printed so far */
static pthread_mutex_t g_print_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t call_proc(const bench_opts *o)
{
	return o->procnum >= 0 ? (uint32_t)o->procnum : (uint32_t)o->proc;
}

static const char *call_name(const bench_opts *o)
{
	static char buf[32];
	if (o->procnum >= 0) {
		snprintf(buf, sizeof buf, "procedure %" PRId64, o->procnum);
		return buf;
	}
	return proc_info[o->proc]->name;
}

/* Report one failed call (the first few in detail) and stop unless --keep-going. */
static void report(worker *w, int dest, rc_status st, const char *what)
{
	if (!w->o->keep_going)
		atomic_store(&g_stop, 1);
	if (atomic_fetch_add(&g_reported, 1) >= 10)
		return;
	pthread_mutex_lock(&g_print_lock);
	if (what) {
		fprintf(stderr, "%s: %s: %s: %s\n", progname, w->o->uris[dest], call_name(w->o),
		        what);
	} else {
		rc_error e;
		char detail[256];
		rc_client_geterr(w->clients[dest], &e);
		if (e.status == RC_OK)
			e.status = st; /* select mode: the async status is the call's */
		rc_error_format(&e, detail, sizeof detail);
		fprintf(stderr, "%s: %s: %s failed: %s [%s] (%s)\n", progname, w->o->uris[dest],
		        call_name(w->o), rc_strerror(st), rc_status_name(st), detail);
	}
	pthread_mutex_unlock(&g_print_lock);
}

/*
 * Make one add_seen per destination for up to `calls` successful calls each. Returns the array
 * (free with add_seen_free), or NULL when memory is short.
 */
static add_seen *add_seen_new(int n, uint64_t calls)
{
	add_seen *a = calloc((size_t)n, sizeof *a);
	size_t cap = 16;
	if (a == NULL)
		return NULL;
	while (cap < 2 * calls)
		cap *= 2;
	for (int i = 0; i < n; i++) {
		a[i].cap = cap;
		a[i].max = ADD_EMPTY;
		if ((a[i].set = malloc(cap * sizeof *a[i].set)) == NULL) {
			while (i-- > 0)
				free(a[i].set);
			free(a);
			return NULL;
		}
		for (size_t k = 0; k < cap; k++)
			a[i].set[k] = ADD_EMPTY;
	}
	return a;
}

/* Free what add_seen_new made for n destinations (NULL: nothing). */
static void add_seen_free(add_seen *a, int n)
{
	if (a == NULL)
		return;
	for (int i = 0; i < n; i++)
		free(a[i].set);
	free(a);
}

/*
 * Record total, returned by a successful async ADD of arg > 0, and check what can be checked of
 * totals that come back in any order: no other call returned the same total, and the largest
 * total is at least (successful calls) x arg. Returns true if both hold; otherwise writes why.
 */
static bool add_seen_check(add_seen *a, int64_t total, int64_t arg, char *why, size_t whylen)
{
	size_t k = ((uint64_t)total * 0x9E3779B97F4A7C15ull >> 17) & (a->cap - 1);
	while (a->set[k] != ADD_EMPTY && a->set[k] != total)
		k = (k + 1) & (a->cap - 1);
	if (a->set[k] == total) {
		snprintf(why, whylen, "ADD total %" PRId64 " returned by two calls", total);
		return false;
	}
	if (2 * (a->n + 1) > a->cap) { /* more calls than sized for: cannot happen */
		snprintf(why, whylen, "more ADD replies than calls (%" PRIu64 ")", a->n + 1);
		return false;
	}
	a->set[k] = total;
	a->n++;
	if (total > a->max)
		a->max = total;
	if (a->max / arg < (int64_t)a->n) {
		snprintf(why, whylen,
		         "after %" PRIu64 " ADD calls of %" PRId64 " the largest total is %" PRId64,
		         a->n, arg, a->max);
		return false;
	}
	return true;
}

/*
 * Check the result of one call that ended with st (want_work: the argument WORK was sent);
 * if owned, free what its decoding allocated (multi: the call owns it). Returns true if the
 * call succeeded and its result is right.
 */
static bool check(worker *w, int dest, rc_status st, bench_res *res, uint32_t want_work,
                  bool owned)
{
	const bench_opts *o = w->o;
	char why[160]; /* (written only when a result is wrong) */
	bool ok = true;
	if (st != RC_OK) {
		report(w, dest, st, NULL);
		ok = false;
	} else if (o->procnum >= 0) {
		/* nothing to check */
	} else {
		switch (o->proc) {
		case BP_SENDR:
			if (res->i != (int32_t)o->size) {
				snprintf(why, sizeof why, "SENDR returned %" PRId32 ", expected %zu",
				         res->i, o->size);
				ok = false;
			}
			break;
		case BP_ECHO:
			if (res->d.bench_data_len != o->size) {
				snprintf(why, sizeof why, "ECHO returned %u bytes, sent %zu",
				         (unsigned)res->d.bench_data_len, o->size);
				ok = false;
			} else if (o->size &&
			           (!res->d.bench_data_val ||
			            !bench_check_pattern((const unsigned char *)res->d.bench_data_val,
			                                 o->size))) {
				snprintf(why, sizeof why, "ECHO returned different bytes (%zu sent)",
				         o->size);
				ok = false;
			}
			break;
		case BP_WORK:
			if (res->u != want_work) {
				snprintf(why, sizeof why, "WORK returned %" PRIu32 ", expected %" PRIu32,
				         res->u, want_work);
				ok = false;
			}
			break;
		case BP_ADD:
			if (w->add_unchecked) {
				/* (nothing: the servers' totals are checked) */
			} else if (w->arg_add > 0 && w->add_seen != NULL) { /* async: any order */
				ok = add_seen_check(&w->add_seen[dest], res->h, w->arg_add, why,
				                    sizeof why);
			} else if (w->arg_add > 0 && res->h <= w->last_add[dest]) {
				snprintf(why, sizeof why,
				         "ADD total %" PRId64 " did not grow (previous %" PRId64 ")",
				         res->h, w->last_add[dest]);
				ok = false;
			}
			w->last_add[dest] = res->h;
			break;
		default:
			break;
		}
		if (!ok)
			report(w, dest, st, why);
	}
	if (owned && o->procnum < 0 && o->proc == BP_ECHO)
		rc_xdr_free((rc_xdrproc)xdr_bench_data, &res->d);
	return ok;
}

/* WORK's argument for the next call: --arg, or a draw with mean --arg. */
static uint32_t next_work(worker *w)
{
	if (w->o->arg_dist == BENCH_DIST_EXP)
		return bench_draw_exp(&w->rng, (double)w->o->arg);
	return (uint32_t)w->o->arg;
}

/* ---- block: the generated stubs ---------------------------------------------------------- */

static bool call_block(worker *w, int dest)
{
	rc_client *cl = w->clients[dest];
	const bench_opts *o = w->o;
	bench_res res;
	rc_status st;
	memset(&res, 0, sizeof res);
	if (o->procnum >= 0) {
		st = rc_call(cl, (uint32_t)o->procnum, rc_xdr_void, NULL, rc_xdr_void, NULL);
		return check(w, dest, st, &res, 0, true);
	}
	switch (o->proc) {
	case BP_NULL:
		st = bench_null_1(cl);
		break;
	case BP_INT:
		st = bench_int_1(cl, &w->arg_int);
		break;
	case BP_SEND:
		st = bench_send_1(cl, &w->arg);
		break;
	case BP_SENDR:
		st = bench_sendr_1(cl, &w->arg, &res.i);
		break;
	case BP_ECHO: /* into the thread's own buffer: nothing allocated per call */
		res.d.bench_data_val = w->resbuf;
		res.d.bench_data_len = (uint32_t)o->size;
		st = bench_echo_1(cl, &w->arg, &res.d);
		return check(w, dest, st, &res, 0, res.d.bench_data_val != w->resbuf);
	case BP_WORK:
		w->arg_work = next_work(w);
		st = bench_work_1(cl, &w->arg_work, &res.u);
		break;
	case BP_ADD:
		st = bench_add_1(cl, &w->arg_add, &res.h);
		break;
	default:
		st = RC_INVAL;
	}
	return check(w, dest, st, &res, w->arg_work, true);
}

static bool round_block(worker *w)
{
	bool ok = true;
	for (int i = 0; i < w->n && !atomic_load(&g_stop); i++)
		ok &= call_block(w, i);
	return ok;
}

/* ---- select: the program's own poll() loop ---------------------------------------------- */

static void on_done(rc_async *call, rc_status st, void *udata)
{
	(void)call;
	slot *s = udata;
	s->st = st;
	atomic_store(&s->done, 1);
	atomic_fetch_sub(s->pending, 1);
}

static bool round_select(worker *w)
{
	const bench_opts *o = w->o;
	uint32_t proc = call_proc(o);
	rc_xdrproc xargs = rc_xdr_void, xres = rc_xdr_void;
	const void *args = NULL;
	if (o->procnum < 0) {
		xargs = proc_info[o->proc]->xargs;
		xres = proc_info[o->proc]->xres;
		switch (o->proc) {
		case BP_INT: args = &w->arg_int; break;
		case BP_SEND: case BP_SENDR: case BP_ECHO: args = &w->arg; break;
		case BP_ADD: args = &w->arg_add; break;
		default: break;
		}
	}
	bool ok = true;
	atomic_store(&w->pending, 0);
	for (int i = 0; i < w->n; i++) {
		slot *s = &w->slots[i];
		memset(&s->res, 0, sizeof s->res);
		s->work = next_work(w);
		if (o->procnum < 0 && o->proc == BP_WORK)
			args = &s->work;
		s->st = RC_INPROGRESS;
		atomic_store(&s->done, 0);
		atomic_fetch_add(&w->pending, 1);
		rc_status st = rc_call_start(w->clients[i], proc, xargs, args, xres,
		                             xres == rc_xdr_void ? NULL : &s->res, on_done, s, NULL);
		if (st != RC_OK) {
			atomic_fetch_sub(&w->pending, 1);
			atomic_store(&s->done, 2); /* never started: the callback will not run */
			s->st = st;
		}
	}

	struct pollfd pfd[BENCH_MAX_URIS];
	int who[BENCH_MAX_URIS];
	while (atomic_load(&w->pending) > 0) {
		int k = 0, tmo = -1;
		bool now = false;
		for (int i = 0; i < w->n; i++) {
			if (atomic_load(&w->slots[i].done))
				continue;
			int fd = -1, t = -1;
			short ev = 0;
			rc_client_pollinfo(w->clients[i], &fd, &ev, &t);
			if (fd >= 0) {
				pfd[k].fd = fd;
				pfd[k].events = ev;
				pfd[k].revents = 0;
				who[k++] = i;
			} else {
				now = true; /* nothing to wait on: let it advance at once */
			}
			if (t >= 0 && (tmo < 0 || t < tmo))
				tmo = t;
		}
		if (now)
			tmo = 0;
		/* Threads share the clients: another thread's advance may read our reply. */
		if (w->o->threads > 1 && (tmo < 0 || tmo > 1))
			tmo = 1;
		int r = poll(pfd, (nfds_t)k, tmo);
		if (r < 0 && errno != EINTR) {
			perror("poll");
			exit(1);
		}
		if (r > 0) {
			for (int j = 0; j < k; j++)
				if (pfd[j].revents)
					rc_client_advance(w->clients[who[j]], pfd[j].revents);
		}
		if (r == 0 || now) {
			for (int i = 0; i < w->n; i++)
				if (!atomic_load(&w->slots[i].done))
					rc_client_advance(w->clients[i], 0);
		}
	}
	for (int i = 0; i < w->n; i++)
		ok &= check(w, i, w->slots[i].st, &w->slots[i].res, w->slots[i].work, true);
	return ok;
}

/* ---- async: calls in flight, re-issued from the callbacks --------------------------------- */

static void on_async(rc_async *call, rc_status st, void *udata);

/* Start slot s's next call (counted as issued, even when starting fails). */
static rc_status async_start(aslot *s)
{
	worker *w = s->w;
	const bench_opts *o = w->o;
	rc_client *cl = w->clients[s->dest];
	memset(&s->res, 0, sizeof s->res);
	s->work = next_work(w);
	w->a_issued++;
	s->t0 = bench_now_ns();
	if (o->procnum >= 0)
		return rc_call_start(cl, (uint32_t)o->procnum, rc_xdr_void, NULL, rc_xdr_void, NULL,
		                     on_async, s, NULL);
	switch (o->proc) {
	case BP_NULL:
		return bench_null_1_async(cl, on_async, s, NULL);
	case BP_INT:
		return bench_int_1_async(cl, &w->arg_int, on_async, s, NULL);
	case BP_SEND:
		return bench_send_1_async(cl, &w->arg, on_async, s, NULL);
	case BP_SENDR:
		return bench_sendr_1_async(cl, &w->arg, &s->res.i, on_async, s, NULL);
	case BP_ECHO:
		return bench_echo_1_async(cl, &w->arg, &s->res.d, on_async, s, NULL);
	case BP_WORK:
		return bench_work_1_async(cl, &s->work, &s->res.u, on_async, s, NULL);
	case BP_ADD:
		return bench_add_1_async(cl, &w->arg_add, &s->res.h, on_async, s, NULL);
	default:
		return RC_INVAL;
	}
}

/* A start that failed: its callback never runs, so it is done now. */
static void async_start_failed(aslot *s, rc_status st)
{
	worker *w = s->w;
	report(w, s->dest, st, NULL);
	w->a_done++;
	if (w->a_record && w->done_calls < w->calls) {
		w->lat[w->done_calls++] = 0;
		w->errors++;
	}
}

/* Completion: check the reply, record its latency, start the slot's next call. */
static void on_async(rc_async *call, rc_status st, void *udata)
{
	(void)call;
	aslot *s = udata;
	worker *w = s->w;
	uint64_t t1 = bench_now_ns();
	bool ok = check(w, s->dest, st, &s->res, s->work, true);
	w->a_done++;
	if (w->a_record && w->done_calls < w->calls) {
		w->lat[w->done_calls++] = t1 - s->t0;
		if (!ok)
			w->errors++;
	}
	if (w->a_issued < w->a_target && !atomic_load(&g_stop) &&
	    !(w->a_record && w->o->max_ns && t1 - w->a_start > w->o->max_ns)) {
		rc_status st2 = async_start(s);
		if (st2 != RC_OK)
			async_start_failed(s, st2);
	}
}

/*
 * Drive every client with calls in flight from this program's poll() loop until no call of
 * the phase is outstanding.
 */
static void async_drive(worker *w)
{
	struct pollfd pfd[BENCH_MAX_URIS];
	int who[BENCH_MAX_URIS];
	while (w->a_done < w->a_issued) {
		int k = 0, tmo = -1;
		bool now = false;
		for (int i = 0; i < w->n; i++) {
			if (rc_client_inflight(w->clients[i]) == 0)
				continue;
			int fd = -1, t = -1;
			short ev = 0;
			rc_client_pollinfo(w->clients[i], &fd, &ev, &t);
			if (fd >= 0) {
				pfd[k].fd = fd;
				pfd[k].events = ev;
				pfd[k].revents = 0;
				who[k++] = i;
			} else {
				now = true;
			}
			if (t >= 0 && (tmo < 0 || t < tmo))
				tmo = t;
		}
		if (now || k == 0)
			tmo = 0;
		int r = poll(pfd, (nfds_t)k, tmo);
		if (r < 0 && errno != EINTR) {
			perror("poll");
			exit(1);
		}
		if (r > 0) {
			for (int j = 0; j < k; j++)
				if (pfd[j].revents)
					rc_client_advance(w->clients[who[j]], pfd[j].revents);
		}
		if (r == 0 || now || k == 0) {
			for (int i = 0; i < w->n; i++)
				if (rc_client_inflight(w->clients[i]))
					rc_client_advance(w->clients[i], 0);
		}
	}
}

/* One phase: count calls, --depth of them in flight on every client. */
static void async_phase(worker *w, uint64_t count, bool record)
{
	const bench_opts *o = w->o;
	w->a_target = count;
	w->a_issued = 0;
	w->a_done = 0;
	w->a_record = record;
	w->a_start = bench_now_ns();
	for (uint32_t k = 0; k < o->depth; k++) {
		for (int d = 0; d < w->n; d++) {
			if (w->a_issued >= count || atomic_load(&g_stop))
				break;
			aslot *s = &w->aslots[(size_t)k * (size_t)w->n + (size_t)d];
			rc_status st = async_start(s);
			if (st != RC_OK)
				async_start_failed(s, st);
		}
	}
	async_drive(w);
}

/* ---- multi: one rc_multicall per round ------------------------------------------------------- */

typedef struct mctx {
	worker *w;
	uint32_t work;
	size_t handled;
	bool ok;
} mctx;

static bool multi_handle(size_t index, rc_status st, const bench_res *res, void *udata)
{
	mctx *m = udata;
	bench_res r;
	memset(&r, 0, sizeof r);
	if (res)
		r = *res; /* shallow: ECHO's bytes stay the call's (not freed here) */
	m->ok &= check(m->w, (int)index, st, &r, m->work, false);
	m->handled++;
	return true;
}

/* The typed handlers of the generated *_multi stubs. */
static bool on_multi_void(size_t index, rc_status st, void *res, void *udata)
{
	(void)res;
	return multi_handle(index, st, NULL, udata);
}

static bool on_multi_int(size_t index, rc_status st, int32_t *res, void *udata)
{
	bench_res r = {.i = res ? *res : 0};
	return multi_handle(index, st, res ? &r : NULL, udata);
}

static bool on_multi_uint(size_t index, rc_status st, uint32_t *res, void *udata)
{
	bench_res r = {.u = res ? *res : 0};
	return multi_handle(index, st, res ? &r : NULL, udata);
}

static bool on_multi_hyper(size_t index, rc_status st, int64_t *res, void *udata)
{
	bench_res r = {.h = res ? *res : 0};
	return multi_handle(index, st, res ? &r : NULL, udata);
}

static bool on_multi_data(size_t index, rc_status st, bench_data *res, void *udata)
{
	bench_res r;
	memset(&r, 0, sizeof r);
	if (res)
		r.d = *res;
	return multi_handle(index, st, res ? &r : NULL, udata);
}

static bool round_multi(worker *w)
{
	const bench_opts *o = w->o;
	rc_client *const *cl = w->clients;
	size_t n = (size_t)w->n;
	int tmo = o->timeout_ms ? (int)o->timeout_ms : -1;
	mctx m = {w, next_work(w), 0, true};
	w->arg_work = m.work;
	rc_status st;
	if (o->procnum >= 0) {
		st = rc_multicall(cl, n, (uint32_t)o->procnum, rc_xdr_void, NULL, rc_xdr_void, 0,
		                  on_multi_void, &m, tmo);
	} else {
		switch (o->proc) {
		case BP_NULL:
			st = bench_null_1_multi(cl, n, on_multi_void, &m, tmo);
			break;
		case BP_INT:
			st = bench_int_1_multi(cl, n, &w->arg_int, on_multi_void, &m, tmo);
			break;
		case BP_SEND:
			st = bench_send_1_multi(cl, n, &w->arg, on_multi_void, &m, tmo);
			break;
		case BP_SENDR:
			st = bench_sendr_1_multi(cl, n, &w->arg, on_multi_int, &m, tmo);
			break;
		case BP_ECHO:
			st = bench_echo_1_multi(cl, n, &w->arg, on_multi_data, &m, tmo);
			break;
		case BP_WORK:
			st = bench_work_1_multi(cl, n, &m.work, on_multi_uint, &m, tmo);
			break;
		case BP_ADD:
			st = bench_add_1_multi(cl, n, &w->arg_add, on_multi_hyper, &m, tmo);
			break;
		default:
			st = RC_INVAL;
		}
	}
	if (st != RC_OK) {
		char why[160];
		snprintf(why, sizeof why, "the multi-call failed: %s [%s]", rc_strerror(st),
		         rc_status_name(st));
		report(w, 0, st, why);
		return false;
	}
	if (m.handled != n) {
		char why[160];
		snprintf(why, sizeof why, "the handler ran for %zu of %zu destinations", m.handled,
		         n);
		report(w, 0, st, why);
		return false;
	}
	return m.ok;
}

/* ---- the run ----------------------------------------------------------------------------- */

static bool one_round(worker *w)
{
	switch (w->o->mode) {
	case MODE_SELECT:
		return round_select(w);
	case MODE_MULTI:
		return round_multi(w);
	default:
		return round_block(w);
	}
}

static void *worker_main(void *p)
{
	worker *w = p;
	if (w->o->mode == MODE_ASYNC) {
		async_phase(w, w->warmup, false);
		pthread_barrier_wait(w->barrier);
		w->t_start = bench_now_ns();
		async_phase(w, w->calls, true);
		return NULL;
	}
	for (uint64_t i = 0; i < w->warmup && !atomic_load(&g_stop); i++)
		one_round(w);
	if (g_trace)
		trace_rec_skip(g_trace);
	pthread_barrier_wait(w->barrier);
	uint64_t start = w->t_start = bench_now_ns();
	for (uint64_t i = 0; i < w->calls; i++) {
		if (atomic_load(&g_stop))
			break;
		if (w->o->max_ns && bench_now_ns() - start > w->o->max_ns)
			break;
		uint64_t t0 = bench_now_ns();
		bool ok = one_round(w);
		w->lat[i] = bench_now_ns() - t0;
		w->done_calls++;
		if (!ok)
			w->errors++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	bench_opts o;
	bench_parse_client(&o, argc, argv, progname, modes, (int)(sizeof modes / sizeof modes[0]));

	if (o.trace && (o.mode != MODE_BLOCK || o.threads != 1)) {
		fprintf(stderr, "%s: --trace needs --mode block and one thread\n", progname);
		return 2;
	}
	if (o.trace && (g_trace = trace_rec_new(false, o.calls * (size_t)o.nuris)) == NULL) {
		fprintf(stderr, "%s: out of memory\n", progname);
		return 1;
	}
	uint32_t prog = o.prog >= 0 ? (uint32_t)o.prog : BENCH_PROG;
	uint32_t vers = o.vers >= 0 ? (uint32_t)o.vers : BENCH_VERS;
	rc_client *clients[BENCH_MAX_URIS];
	rc_tls_client_opts tls = {RC_TLS_OFF, o.tls_ca, NULL, o.tls_cert, o.tls_key, o.tls_name};
	bool quic = false; /* quic:// is TLS always: its --tls-* need no --tls */
	for (int i = 0; i < o.nuris; i++)
		quic = quic || strncmp(o.uris[i], "quic:", 5) == 0;
	if (o.tls != NULL)
		tls.policy = strcmp(o.tls, "required") == 0 ? RC_TLS_REQUIRED : RC_TLS_OPPORTUNISTIC;
	else if (!quic && (o.tls_ca || o.tls_cert || o.tls_key || o.tls_name)) {
		fprintf(stderr, "%s: --tls-ca, --tls-cert, --tls-key, --tls-name need --tls\n",
		        progname);
		return 2;
	}
	if ((o.tls_cert == NULL) != (o.tls_key == NULL)) {
		fprintf(stderr, "%s: --tls-cert and --tls-key go together\n", progname);
		return 2;
	}
	for (int i = 0; i < o.nuris; i++) {
		rc_error err;
		rc_status st = rc_client_create_tls(&clients[i], o.uris[i], prog, vers, &tls, &err);
		if (st != RC_OK) {
			char buf[512];
			fprintf(stderr, "%s: %s: %s [%s]\n", progname, o.uris[i],
			        rc_error_format(&err, buf, sizeof(buf)), rc_status_name(st));
			while (i-- > 0)
				rc_client_destroy(clients[i]);
			trace_rec_free(g_trace);
			return 1;
		}
		if (o.timeout_ms)
			rc_client_set_timeout(clients[i], o.timeout_ms);
		if (o.auth_sys) {
			char host[256] = "localhost";
			gid_t groups[16];
			uint32_t gids[16];
			int ng = getgroups(16, groups);
			(void)gethostname(host, sizeof(host) - 1);
			for (int k = 0; k < ng; k++)
				gids[k] = (uint32_t)groups[k];
			(void)rc_client_set_auth_sys(clients[i], host, (uint32_t)getuid(),
			                             (uint32_t)getgid(), gids, ng > 0 ? (uint32_t)ng : 0);
		}
		if (o.gss != NULL) {
			rc_gss_service svc = strcmp(o.gss, "none") == 0        ? RC_GSS_NONE
			                     : strcmp(o.gss, "privacy") == 0 ? RC_GSS_PRIVACY
			                                                      : RC_GSS_INTEGRITY;
			st = rc_client_set_auth_gss(clients[i],
			                            o.gss_service ? o.gss_service : "rcbench@localhost",
			                            svc, &err);
			if (st != RC_OK) {
				char buf[512];
				fprintf(stderr, "%s: --gss %s on %s: %s [%s]\n", progname, o.gss, o.uris[i],
				        rc_error_format(&err, buf, sizeof(buf)), rc_status_name(st));
				for (int k = 0; k <= i; k++)
					rc_client_destroy(clients[k]);
				trace_rec_free(g_trace);
				return 1;
			}
		}
		if (o.spin_us && (st = rc_client_set_spin(clients[i], o.spin_us)) != RC_OK) {
			fprintf(stderr, "%s: --spin %u on %s: %s\n", progname, (unsigned)o.spin_us,
			        o.uris[i], rc_strerror(st));
			for (int k = 0; k <= i; k++)
				rc_client_destroy(clients[k]);
			trace_rec_free(g_trace);
			return 1;
		}
		if (o.failover && (st = rc_client_set_failover(clients[i], true)) != RC_OK) {
			fprintf(stderr, "%s: --failover on %s: %s\n", progname, o.uris[i],
			        rc_strerror(st));
			for (int k = 0; k <= i; k++)
				rc_client_destroy(clients[k]);
			trace_rec_free(g_trace);
			return 1;
		}
		if (g_trace)
			rc_client_set_trace(clients[i], trace_rec_point, g_trace);
	}

	unsigned char *buf = bench_xmalloc(o.size);
	bench_fill_pattern(buf, o.size);
	uint64_t *lat = bench_xmalloc(o.calls * sizeof *lat);
	worker *ws = calloc(o.threads, sizeof *ws);
	slot *slots = calloc((size_t)o.threads * (size_t)o.nuris, sizeof *slots);
	int64_t *last = calloc((size_t)o.threads * (size_t)o.nuris, sizeof *last);
	aslot *aslots = NULL;
	if (o.mode == MODE_ASYNC)
		aslots = calloc((size_t)o.depth * (size_t)o.nuris, sizeof *aslots);
	add_seen *seen = NULL;
	if (o.mode == MODE_ASYNC && o.procnum < 0 && o.proc == BP_ADD && o.arg > 0 && !o.failover)
		seen = add_seen_new(o.nuris, o.warmup + o.calls);
	if (!ws || !slots || !last || (o.mode == MODE_ASYNC && !aslots) ||
	    (o.mode == MODE_ASYNC && o.procnum < 0 && o.proc == BP_ADD && o.arg > 0 &&
	     !o.failover && !seen)) {
		fprintf(stderr, "%s: out of memory\n", progname);
		return 1;
	}
	pthread_barrier_t barrier;

	uint64_t off = 0;
	for (unsigned t = 0; t < o.threads; t++) {
		worker *w = &ws[t];
		w->o = &o;
		w->clients = clients;
		w->n = o.nuris;
		w->calls = o.calls / o.threads + (t < o.calls % o.threads);
		w->warmup = o.warmup / o.threads + (t < o.warmup % o.threads);
		w->lat = lat + off;
		off += w->calls;
		w->arg.bench_data_len = (unsigned)o.size;
		w->arg.bench_data_val = (char *)buf;
		if (o.proc == BP_ECHO && (w->resbuf = malloc(o.size ? o.size : 1)) == NULL) {
			fprintf(stderr, "%s: out of memory\n", progname);
			return 1;
		}
		w->arg_int = (int32_t)o.arg;
		w->arg_work = (uint32_t)o.arg;
		w->arg_add = o.arg;
		w->add_unchecked = o.failover;
		w->last_add = last + (size_t)t * (size_t)o.nuris;
		w->add_seen = seen; /* async mode: one thread */
		w->slots = slots + (size_t)t * (size_t)o.nuris;
		w->rng = bench_seed(o.seed ? o.seed + t : 0);
		w->aslots = aslots;
		if (aslots)
			for (size_t k = 0; k < (size_t)o.depth * (size_t)o.nuris; k++) {
				aslots[k].w = w;
				aslots[k].dest = (int)(k % (size_t)o.nuris);
			}
		for (int i = 0; i < o.nuris; i++)
			w->slots[i].pending = &w->pending;
		w->barrier = &barrier;
	}
	bench_run_workers(ws, sizeof(*ws), o.threads, worker_main, &barrier);
	uint64_t t0 = ws[0].t_start, errors = 0, made = 0;
	for (unsigned t = 0; t < o.threads; t++) {
		if (ws[t].t_start < t0)
			t0 = ws[t].t_start;
		errors += ws[t].errors;
		made += ws[t].done_calls;
	}
	uint64_t elapsed = bench_now_ns() - t0;

	int rc = 0;
	if (atomic_load(&g_stop) || errors) {
		rc = 1;
	}
	if (!atomic_load(&g_stop) && !o.quiet) {
		/* pack the latencies of the calls made */
		uint64_t n = 0;
		for (unsigned t = 0; t < o.threads; t++)
			for (uint64_t i = 0; i < ws[t].done_calls; i++)
				lat[n++] = ws[t].lat[i];
		char *uri = bench_join_uris(o.uris, o.nuris);
		char procbuf[32];
		if (o.procnum >= 0)
			snprintf(procbuf, sizeof procbuf, "%" PRId64, o.procnum);
		bench_result r = {
			.impl = "remotecall",
			.mode = modes[o.mode].name,
			.uri = uri,
			.dests = o.nuris,
			.proc = o.procnum >= 0 ? procbuf : bench_proc_name(o.proc),
			.size = bench_proc_has_data(o.proc) ? o.size : 0,
			.calls = made,
			.errors = errors,
			.threads = o.threads,
			.depth = o.depth,
			.elapsed_ns = elapsed,
			.lat_ns = lat,
			.nlat = n,
		};
		bench_print_result(&r, o.json);
		if (g_trace)
			trace_rec_print(g_trace, stdout);
		free(uri);
	}

	if (o.tls != NULL) { /* whether the policy got TLS (opportunistic may not) */
		bool on = true;
		for (int i = 0; i < o.nuris; i++)
			on = on && rc_client_tls(clients[i]);
		fprintf(stderr, "tls: %s\n", on ? "on" : "off");
	}
	for (int i = 0; i < o.nuris; i++)
		rc_client_destroy(clients[i]);
	free(aslots);
	add_seen_free(seen, o.nuris);
	free(last);
	free(slots);
	for (unsigned t = 0; t < o.threads; t++)
		free(ws[t].resbuf);
	free(ws);
	free(lat);
	free(buf);
	trace_rec_free(g_trace);
	return rc;
}

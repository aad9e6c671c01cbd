/*
 * Operating a server: per-procedure counters and the call log (<remotecall/server.h>,
 * "counters and the call log"; docs/runtime.md, "Operating a server").
 *
 * Both ride on the serve step's traced copy (serve.c): a server that counts or logs has a
 * trace function -- the application's, or rc__obs_nop -- so rc__serve takes the copy compiled
 * with its trace points, and after it rc__obs_call reads what the call was from the request's
 * fixed header words (xid, program, version, procedure) and how it ended from the reply's
 * first words. A server that does neither runs the untraced copy, which has no code for it.
 *
 * The counters live in a table of RC__OBS_SLOTS rows made when counting is turned on, open
 * addressed by (program, version, procedure). A row is claimed under the table's lock and
 * published by its `used` flag (release); readers and counters find it without the lock and
 * add with relaxed atomics, so every count is exact. Rows are only for registered (program,
 * version)s; a procedure they do not have counts in the program's RC_STATS_PROC_UNKNOWN row,
 * and when the table is full, a new procedure's calls go there too.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/rpc.h"
#include "runtime/server/listener.h"

#define RC__OBS_SLOTS 4096u /* rows at most (a power of two) */

typedef struct rc__obs_row {
	atomic_bool used;
	uint32_t prog, vers, proc;
	_Atomic uint64_t n[9]; /* calls, success, garbage, system, proc_unavail, auth, none,
	                          deferred -- in rc_proc_stats's order -- and bytes_in */
	_Atomic uint64_t bytes_out;
	_Atomic uint64_t lat[RC_LATENCY_BUCKETS];
} rc__obs_row;

enum { RC__N_CALLS, RC__N_SUCCESS, RC__N_GARBAGE, RC__N_SYSTEM, RC__N_PROCUN, RC__N_AUTH,
       RC__N_NONE, RC__N_DEFERRED, RC__N_BYTES_IN };

struct rc__obs {
	pthread_mutex_t mu; /* claiming rows */
	rc__obs_row *rows;  /* RC__OBS_SLOTS, or NULL: not counting */
	unsigned nrows;     /* claimed (under mu) */
	rc_call_log_fn log;
	void *log_ctx;
};

/* request.h: a trace function that does nothing, for a server that counts or logs and
 * does not trace. */
void rc__obs_nop(void *arg, rc_trace_point pt, uint32_t xid, uint64_t ns)
{
	(void)arg;
	(void)pt;
	(void)xid;
	(void)ns;
}

/* srv's observer, made if it has none (not running). NULL: memory is short. */
static struct rc__obs *rc__obs_get(rc_server *srv)
{
	struct rc__obs *o = srv->obs;

	if (o == NULL && (o = calloc(1, sizeof(*o))) != NULL) {
		pthread_mutex_init(&o->mu, NULL);
		srv->obs = o;
	}
	return o;
}

/* Drop the observer if it has nothing to do, and the no-op trace with it (not running). */
static void rc__obs_tidy(rc_server *srv)
{
	struct rc__obs *o = srv->obs;

	if (o != NULL && o->rows == NULL && o->log == NULL) {
		pthread_mutex_destroy(&o->mu);
		free(o);
		srv->obs = NULL;
	}
	if (srv->obs == NULL && srv->trace == rc__obs_nop)
		srv->trace = NULL;
	else if (srv->obs != NULL && srv->trace == NULL)
		srv->trace = rc__obs_nop;
}

/* request.h */
void rc__obs_free(rc_server *srv)
{
	if (srv->obs != NULL) {
		free(srv->obs->rows);
		srv->obs->rows = NULL;
		srv->obs->log = NULL;
		rc__obs_tidy(srv);
	}
}

/* server.h */
rc_status rc_server_set_proc_stats(rc_server *srv, bool on)
{
	struct rc__obs *o;

	if (srv == NULL || atomic_load(&srv->running))
		return RC_INVAL;
	if ((o = rc__obs_get(srv)) == NULL)
		return RC_NOMEM;
	free(o->rows);
	o->rows = NULL;
	o->nrows = 0;
	if (on && (o->rows = calloc(RC__OBS_SLOTS, sizeof(*o->rows))) == NULL) {
		rc__obs_tidy(srv);
		return RC_NOMEM;
	}
	rc__obs_tidy(srv);
	return RC_OK;
}

/* server.h */
rc_status rc_server_set_call_log(rc_server *srv, rc_call_log_fn fn, void *ctx)
{
	struct rc__obs *o;

	if (srv == NULL || atomic_load(&srv->running))
		return RC_INVAL;
	if ((o = rc__obs_get(srv)) == NULL)
		return RC_NOMEM;
	o->log = fn;
	o->log_ctx = ctx;
	rc__obs_tidy(srv);
	return RC_OK;
}

/* The row of (prog, vers, proc), claimed if new; NULL when the table is full. */
static rc__obs_row *rc__obs_row_of(struct rc__obs *o, uint32_t prog, uint32_t vers,
                                   uint32_t proc)
{
	uint32_t h = (uint32_t)(((uint64_t)rc__hash_pair(prog, vers) * 0x9E3779B1u) ^ proc *
	                        0x85EBCA6Bu);
	bool locked = false;
	rc__obs_row *row = NULL;

	for (unsigned i = 0; i < RC__OBS_SLOTS; i++) {
		rc__obs_row *r = &o->rows[(h + i) & (RC__OBS_SLOTS - 1)];
		if (!atomic_load_explicit(&r->used, memory_order_acquire)) {
			if (!locked) { /* claim it, or find it claimed meanwhile: look again */
				pthread_mutex_lock(&o->mu);
				locked = true;
				i--;
				continue;
			}
			if (o->nrows + 1 >= RC__OBS_SLOTS)
				break; /* full (one slot is always left free: the search ends) */
			r->prog = prog;
			r->vers = vers;
			r->proc = proc;
			o->nrows++;
			atomic_store_explicit(&r->used, true, memory_order_release);
			row = r;
			break;
		}
		if (r->prog == prog && r->vers == vers && r->proc == proc) {
			row = r;
			break;
		}
	}
	if (locked)
		pthread_mutex_unlock(&o->mu);
	return row;
}

/* The outcome of a call from its reply's bytes (rlen of them at m); *auth_stat for a denial. */
static rc_call_outcome rc__obs_outcome(const unsigned char *m, size_t rlen, uint32_t *auth_stat)
{
	uint32_t vlen;

	*auth_stat = 0;
	if (rlen < 16)
		return RC_CALL_NO_REPLY;
	if (rc__ld32(m + 8) != 0) { /* MSG_DENIED */
		if (rc__ld32(m + 12) == 0)
			return RC_CALL_RPC_MISMATCH;
		*auth_stat = rlen >= 20 ? rc__ld32(m + 16) : 0;
		return RC_CALL_AUTH_ERROR;
	}
	vlen = rc__ld32(m + 16); /* accepted: the verifier, then accept_stat */
	if (vlen > 400 || rlen < 24 + ((size_t)vlen + 3) / 4 * 4)
		return RC_CALL_SYSTEM_ERR;
	switch (rc__ld32(m + 20 + ((size_t)vlen + 3) / 4 * 4)) {
	case 0:
		return RC_CALL_SUCCESS;
	case 1:
		return RC_CALL_PROG_UNAVAIL;
	case 2:
		return RC_CALL_PROG_MISMATCH;
	case 3:
		return RC_CALL_PROC_UNAVAIL;
	case 4:
		return RC_CALL_GARBAGE_ARGS;
	default:
		return RC_CALL_SYSTEM_ERR;
	}
}

/* The counter an outcome goes to. */
static int rc__obs_counter(rc_call_outcome oc)
{
	switch (oc) {
	case RC_CALL_SUCCESS:
		return RC__N_SUCCESS;
	case RC_CALL_GARBAGE_ARGS:
		return RC__N_GARBAGE;
	case RC_CALL_PROC_UNAVAIL:
		return RC__N_PROCUN;
	case RC_CALL_AUTH_ERROR:
		return RC__N_AUTH;
	case RC_CALL_NO_REPLY:
		return RC__N_NONE;
	case RC_CALL_DEFERRED:
		return RC__N_DEFERRED;
	default: /* (PROG_UNAVAIL, PROG_MISMATCH, RPC_MISMATCH: not for a registered program) */
		return RC__N_SYSTEM;
	}
}

/* The latency bucket of ns. */
static unsigned rc__obs_bucket(uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned b = us == 0 ? 0 : 64 - (unsigned)__builtin_clzll(us);

	return b < RC_LATENCY_BUCKETS ? b : RC_LATENCY_BUCKETS - 1;
}

/* request.h */
void rc__obs_call(rc_server *srv, rc__wctx *w, const unsigned char *msg, size_t len,
                  size_t rlen, bool dgram, bool deferred, uint64_t t_received)
{
	struct rc__obs *o = srv->obs;
	rc_call_record rec;
	rc__obs_row *row;

	if (len < 24 || rc__ld32(msg + 4) != RC__CALL)
		return; /* not a call: nothing to count */
	memset(&rec, 0, sizeof(rec));
	rec.xid = rc__ld32(msg);
	rec.prog = rc__ld32(msg + 12);
	rec.vers = rc__ld32(msg + 16);
	rec.proc = rc__ld32(msg + 20);
	rec.dgram = dgram;
	rec.bytes_in = len;
	if (deferred) {
		rec.outcome = RC_CALL_DEFERRED;
	} else if (w->gsent != 0) { /* a big result sent from its own memory (serve.c) */
		rec.outcome = w->gsent > 0 ? RC_CALL_SUCCESS : RC_CALL_SYSTEM_ERR;
		rec.bytes_out = w->rb.gbytes;
	} else {
		rec.outcome = rc__obs_outcome(rc__encbuf_msg(&w->rb), rlen, &rec.auth_stat);
		rec.bytes_out = rlen;
	}
	if (!deferred && t_received != 0)
		rec.ns = rc__trace_clock() - t_received;
	if (o->rows != NULL && rc__find(srv, rec.prog, rec.vers) != NULL) {
		const rc__reg *reg = rc__find(srv, rec.prog, rec.vers);
		uint32_t proc = reg->raw != NULL || rc__find_proc(reg, rec.proc) != NULL
		                        ? rec.proc
		                        : RC_STATS_PROC_UNKNOWN;
		if ((row = rc__obs_row_of(o, rec.prog, rec.vers, proc)) == NULL)
			row = rc__obs_row_of(o, rec.prog, rec.vers, RC_STATS_PROC_UNKNOWN);
		if (row != NULL) {
			atomic_fetch_add_explicit(&row->n[RC__N_CALLS], 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&row->n[rc__obs_counter(rec.outcome)], 1,
			                          memory_order_relaxed);
			atomic_fetch_add_explicit(&row->n[RC__N_BYTES_IN], rec.bytes_in,
			                          memory_order_relaxed);
			atomic_fetch_add_explicit(&row->bytes_out, rec.bytes_out, memory_order_relaxed);
			if (rec.ns != 0)
				atomic_fetch_add_explicit(&row->lat[rc__obs_bucket(rec.ns)], 1,
				                          memory_order_relaxed);
		}
	}
	if (o->log != NULL) {
		if (w->conn != NULL) {
			rec.conn = atomic_load(&w->conn->handle);
			rec.conn_id = w->conn->id;
		}
		o->log(&rec, o->log_ctx);
	}
}

/* Add row r's counts into out (whose numbers are set). */
static void rc__obs_add(rc_proc_stats *out, const rc__obs_row *r)
{
	uint64_t *f[9] = {&out->calls,        &out->success,    &out->garbage_args,
	                  &out->system_err,   &out->proc_unavail, &out->auth_error,
	                  &out->no_reply,     &out->deferred,   &out->bytes_in};

	for (int i = 0; i < 9; i++)
		*f[i] += atomic_load_explicit(&r->n[i], memory_order_relaxed);
	out->bytes_out += atomic_load_explicit(&r->bytes_out, memory_order_relaxed);
	for (int i = 0; i < RC_LATENCY_BUCKETS; i++)
		out->latency[i] += atomic_load_explicit(&r->lat[i], memory_order_relaxed);
}

static int rc__obs_cmp(const void *a, const void *b)
{
	const rc__obs_row *x = *(rc__obs_row *const *)a, *y = *(rc__obs_row *const *)b;

	if (x->prog != y->prog)
		return x->prog < y->prog ? -1 : 1;
	if (x->vers != y->vers)
		return x->vers < y->vers ? -1 : 1;
	return x->proc < y->proc ? -1 : x->proc > y->proc;
}

/* server.h: the rows in (program, version, procedure) order, each program's sum after its
 * procedures. */
size_t rc_server_get_proc_stats(rc_server *srv, rc_proc_stats *out, size_t max)
{
	struct rc__obs *o;
	rc__obs_row **v;
	size_t n = 0, k = 0;

	if (srv == NULL || (o = srv->obs) == NULL || o->rows == NULL)
		return 0;
	if ((v = malloc(RC__OBS_SLOTS * sizeof(*v))) == NULL)
		return 0;
	for (unsigned i = 0; i < RC__OBS_SLOTS; i++)
		if (atomic_load_explicit(&o->rows[i].used, memory_order_acquire))
			v[n++] = &o->rows[i];
	qsort(v, n, sizeof(*v), rc__obs_cmp);
	for (size_t i = 0; i < n; i++) {
		rc_proc_stats row = {.prog = v[i]->prog, .vers = v[i]->vers, .proc = v[i]->proc};
		rc__obs_add(&row, v[i]);
		if (k < max)
			out[k] = row;
		k++;
		if (i + 1 == n || v[i + 1]->prog != v[i]->prog || v[i + 1]->vers != v[i]->vers) {
			/* the program's sum */
			rc_proc_stats sum = {.prog = v[i]->prog, .vers = v[i]->vers,
			                     .proc = RC_STATS_PROC_ALL};
			for (size_t j = i + 1; j-- > 0 && v[j]->prog == v[i]->prog &&
			                       v[j]->vers == v[i]->vers;)
				rc__obs_add(&sum, v[j]);
			if (k < max)
				out[k] = sum;
			k++;
		}
	}
	free(v);
	return k;
}

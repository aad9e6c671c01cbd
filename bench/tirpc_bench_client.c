/*
 * tirpc-bench-client -- the libtirpc peer of rc-bench-client: the same options and output,
 * calls made through rpcgen -M stubs (bench_echo_1(&arg, &res, clnt)) on libtirpc clients.
 *
 *   tirpc-bench-client --uri URI [--uri URI]... --proc P [--size BYTES] [--arg N]
 *                      [--calls N] [--warmup N] [--mode block] [--threads N] [--json]
 *
 * udp://HOST:PORT / tcp://HOST:PORT connect to that port (clnt_dg_create / clnt_vc_create);
 * without a port, clnt_create() asks HOST's rpcbind. Only the block mode exists (libtirpc has
 * no other). --threads N share one CLIENT per URI. A failure prints clnt_sperror's text.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "bench.h" /* rpcgen's */
#include "common.h"

static const char *progname = "tirpc-bench-client";

static const bench_mode modes[] = {
	{"block", 0, "blocking rpcgen stubs, one URI after another"},
};

static const char *const proc_upper[BP__COUNT] = {
	"BENCH_NULL", "BENCH_INT", "BENCH_SEND", "BENCH_SENDR",
	"BENCH_ECHO", "BENCH_WORK", "BENCH_ADD",
};

typedef struct worker {
	const bench_opts *o;
	CLIENT **clients;
	int n;
	uint64_t warmup, calls, done_calls, errors;
	uint64_t *lat;
	bench_data arg;
	int arg_int;
	u_int arg_work;
	quad_t arg_add;
	int64_t *last_add;
	uint64_t rng;           /* --arg-dist exp draws */
	pthread_barrier_t *barrier;
	uint64_t t_start; /* when the measured calls began (after the barrier) */
} worker;

static atomic_int g_stop;
static atomic_int g_reported;
static pthread_mutex_t g_print_lock = PTHREAD_MUTEX_INITIALIZER;

static void report(worker *w, int dest, enum clnt_stat st, const char *what)
{
	if (!w->o->keep_going)
		atomic_store(&g_stop, 1);
	if (atomic_fetch_add(&g_reported, 1) >= 10)
		return;
	char name[32];
	if (w->o->procnum >= 0)
		snprintf(name, sizeof name, "procedure %" PRId64, w->o->procnum);
	else
		snprintf(name, sizeof name, "%s", proc_upper[w->o->proc]);
	pthread_mutex_lock(&g_print_lock);
	if (what) {
		fprintf(stderr, "%s: %s: %s: %s\n", progname, w->o->uris[dest], name, what);
	} else {
		char prefix[300];
		snprintf(prefix, sizeof prefix, "%s: %s: %s failed (%s)", progname,
		         w->o->uris[dest], name, clnt_sperrno(st));
		/* clnt_sperror: "prefix: RPC: Program/version mismatch; low version = 1, ..." */
		fprintf(stderr, "%s\n", clnt_sperror(w->clients[dest], prefix));
	}
	pthread_mutex_unlock(&g_print_lock);
}

static bool call_one(worker *w, int dest)
{
	CLIENT *cl = w->clients[dest];
	const bench_opts *o = w->o;
	enum clnt_stat st;
	char why[160];
	bool ok = true;
	why[0] = '\0';

	if (o->procnum >= 0) {
		struct timeval tv = {25, 0};
		st = clnt_call(cl, (rpcproc_t)o->procnum, (xdrproc_t)xdr_void, NULL,
		               (xdrproc_t)xdr_void, NULL, tv);
		if (st != RPC_SUCCESS) {
			report(w, dest, st, NULL);
			return false;
		}
		return true;
	}
	switch (o->proc) {
	case BP_NULL:
		st = bench_null_1(NULL, NULL, cl);
		break;
	case BP_INT:
		st = bench_int_1(&w->arg_int, NULL, cl);
		break;
	case BP_SEND:
		st = bench_send_1(&w->arg, NULL, cl);
		break;
	case BP_SENDR: {
		int r = -1;
		st = bench_sendr_1(&w->arg, &r, cl);
		if (st == RPC_SUCCESS && r != (int)o->size) {
			snprintf(why, sizeof why, "SENDR returned %d, expected %zu", r, o->size);
			ok = false;
		}
		break;
	}
	case BP_ECHO: {
		bench_data r;
		memset(&r, 0, sizeof r);
		st = bench_echo_1(&w->arg, &r, cl);
		if (st == RPC_SUCCESS) {
			if (r.bench_data_len != o->size) {
				snprintf(why, sizeof why, "ECHO returned %u bytes, sent %zu",
				         r.bench_data_len, o->size);
				ok = false;
			} else if (o->size &&
			           (!r.bench_data_val ||
			            !bench_check_pattern((unsigned char *)r.bench_data_val, o->size))) {
				snprintf(why, sizeof why, "ECHO returned different bytes (%zu sent)",
				         o->size);
				ok = false;
			}
		}
		xdr_free((xdrproc_t)xdr_bench_data, (char *)&r);
		break;
	}
	case BP_WORK: {
		u_int r = 0;
		if (o->arg_dist == BENCH_DIST_EXP)
			w->arg_work = bench_draw_exp(&w->rng, (double)o->arg);
		st = bench_work_1(&w->arg_work, &r, cl);
		if (st == RPC_SUCCESS && r != w->arg_work) {
			snprintf(why, sizeof why, "WORK returned %u, expected %u", r, w->arg_work);
			ok = false;
		}
		break;
	}
	case BP_ADD: {
		quad_t r = 0;
		st = bench_add_1(&w->arg_add, &r, cl);
		if (st == RPC_SUCCESS && w->arg_add > 0 && (int64_t)r <= w->last_add[dest]) {
			snprintf(why, sizeof why,
			         "ADD total %" PRId64 " did not grow (previous %" PRId64 ")",
			         (int64_t)r, w->last_add[dest]);
			ok = false;
		}
		if (st == RPC_SUCCESS)
			w->last_add[dest] = (int64_t)r;
		break;
	}
	default:
		st = RPC_FAILED;
	}
	if (st != RPC_SUCCESS) {
		report(w, dest, st, NULL);
		return false;
	}
	if (!ok)
		report(w, dest, st, why);
	return ok;
}

static bool one_round(worker *w)
{
	bool ok = true;
	for (int i = 0; i < w->n && !atomic_load(&g_stop); i++)
		ok &= call_one(w, i);
	return ok;
}

static void *worker_main(void *p)
{
	worker *w = p;
	for (uint64_t i = 0; i < w->warmup && !atomic_load(&g_stop); i++)
		one_round(w);
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

/* A libtirpc client for uri, or NULL after printing why. */
static CLIENT *make_client(const char *uri, uint32_t prog, uint32_t vers, uint32_t timeout_ms)
{
	bench_uri u;
	char err[300];
	if (!bench_parse_uri(uri, &u, err, sizeof err)) {
		fprintf(stderr, "%s: %s\n", progname, err);
		return NULL;
	}
	CLIENT *cl;
	if (!u.has_port) {
		cl = clnt_create(u.host, prog, vers, u.tcp ? "tcp" : "udp");
		if (!cl) {
			fprintf(stderr, "%s\n", clnt_spcreateerror(uri));
			return NULL;
		}
	} else {
		int fd = socket(u.addr.ss_family, u.tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
		if (fd < 0) {
			fprintf(stderr, "%s: socket: %s\n", progname, strerror(errno));
			return NULL;
		}
		struct netbuf nb = {.maxlen = u.addrlen, .len = u.addrlen, .buf = &u.addr};
		cl = u.tcp ? clnt_vc_create(fd, &nb, prog, vers, 0, 0)
		           : clnt_dg_create(fd, &nb, prog, vers, 0, 0);
		if (!cl) {
			fprintf(stderr, "%s\n", clnt_spcreateerror(uri));
			close(fd);
			return NULL;
		}
		clnt_control(cl, CLSET_FD_CLOSE, NULL);
	}
	struct timeval tv = {25, 0};
	if (timeout_ms) {
		tv.tv_sec = timeout_ms / 1000;
		tv.tv_usec = (timeout_ms % 1000) * 1000;
	}
	clnt_control(cl, CLSET_TIMEOUT, (char *)&tv);
	if (!u.tcp) {
		struct timeval retry = {0, 500000};
		clnt_control(cl, CLSET_RETRY_TIMEOUT, (char *)&retry);
	}
	return cl;
}

int main(int argc, char **argv)
{
	bench_opts o;
	bench_parse_client(&o, argc, argv, progname, modes, (int)(sizeof modes / sizeof modes[0]));
	if (o.tls || o.tls_ca || o.tls_cert || o.tls_key || o.tls_name) {
		fprintf(stderr, "%s: libtirpc has no RPC-over-TLS (--tls* options)\n", progname);
		return 2;
	}
	if (o.gss || o.gss_service) {
		fprintf(stderr, "%s: --gss is rc-bench-client's (libtirpc's own RPCSEC_GSS client "
		        "is tests/gss/tirpc_gss_client)\n", progname);
		return 2;
	}
	if (o.trace) {
		fprintf(stderr, "%s: --trace needs remotecall's trace points (rc-bench-client)\n",
		        progname);
		return 2;
	}
	if (o.spin_us) {
		fprintf(stderr, "%s: --spin: libtirpc's clients have no busy-polling option\n",
		        progname);
		return 2;
	}

	uint32_t prog = o.prog >= 0 ? (uint32_t)o.prog : BENCH_PROG;
	uint32_t vers = o.vers >= 0 ? (uint32_t)o.vers : BENCH_VERS;
	CLIENT *clients[BENCH_MAX_URIS];
	for (int i = 0; i < o.nuris; i++)
		if (!(clients[i] = make_client(o.uris[i], prog, vers, o.timeout_ms)))
			return 1;

	unsigned char *buf = bench_xmalloc(o.size);
	bench_fill_pattern(buf, o.size);
	uint64_t *lat = bench_xmalloc(o.calls * sizeof *lat);
	worker *ws = calloc(o.threads, sizeof *ws);
	int64_t *last = calloc((size_t)o.threads * (size_t)o.nuris, sizeof *last);
	if (!ws || !last) {
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
		w->arg.bench_data_len = (u_int)o.size;
		w->arg.bench_data_val = (char *)buf;
		w->arg_int = (int)o.arg;
		w->arg_work = (u_int)o.arg;
		w->arg_add = (quad_t)o.arg;
		w->last_add = last + (size_t)t * (size_t)o.nuris;
		w->rng = bench_seed(o.seed ? o.seed + t : 0);
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

	int rc = (atomic_load(&g_stop) || errors) ? 1 : 0;
	if (!atomic_load(&g_stop) && !o.quiet) {
		uint64_t n = 0;
		for (unsigned t = 0; t < o.threads; t++)
			for (uint64_t i = 0; i < ws[t].done_calls; i++)
				lat[n++] = ws[t].lat[i];
		char *uri = bench_join_uris(o.uris, o.nuris);
		char procbuf[32];
		if (o.procnum >= 0)
			snprintf(procbuf, sizeof procbuf, "%" PRId64, o.procnum);
		bench_result r = {
			.impl = "tirpc",
			.mode = modes[o.mode].name,
			.uri = uri,
			.dests = o.nuris,
			.proc = o.procnum >= 0 ? procbuf : bench_proc_name(o.proc),
			.size = bench_proc_has_data(o.proc) ? o.size : 0,
			.calls = made,
			.errors = errors,
			.threads = o.threads,
			.depth = 0,
			.elapsed_ns = elapsed,
			.lat_ns = lat,
			.nlat = n,
		};
		bench_print_result(&r, o.json);
		free(uri);
	}
	for (int i = 0; i < o.nuris; i++)
		clnt_destroy(clients[i]);
	free(last);
	free(ws);
	free(lat);
	free(buf);
	return rc;
}

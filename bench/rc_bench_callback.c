/*
 * rc-bench-callback -- calls in both directions on one connection (issue 29's bench row): a
 * remotecall server and client in this process over loopback, the server's threads on one CPU
 * and the client's on another (or the same), and on one connection:
 *
 *   forward     the client's blocking NULL calls to the server (µs per call, median)
 *   callback    the server's blocking NULL calls back to the client (rc_svc_req_backchannel's
 *               client, from a thread of the server's), which serves them from its own poll
 *               loop (rc_client_pollinfo / rc_client_advance) -- server -> client -> server
 *   forward-pipelined, callback-pipelined
 *               the same with --depth calls kept in flight (rc_call_start, calls per second)
 *
 *   rc-bench-callback [--uri tcp://127.0.0.1:0] [--server-cpu A] [--client-cpu B]
 *                     [--calls N] [--depth D] [--only forward|callback]
 *                     [--server-threads N] [--blocking] [--json]
 *
 * (2 server threads by default; --blocking: the blocking measurements only)
 *
 * Each measurement is one line (one JSON object with --json).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <remotecall/remotecall.h>

#include "common.h"

#define FWD_PROG 0x20000b77u
#define CB_PROG 0x40000b77u
#define MAX_DEPTH 256

static const char *progname = "rc-bench-callback";

static void pin(int cpu)
{
	cpu_set_t s;
	if (cpu < 0)
		return;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof(s), &s) != 0)
		perror("sched_setaffinity");
}

static void die(const char *what, rc_status st)
{
	fprintf(stderr, "%s: %s: %s\n", progname, what, rc_strerror(st));
	exit(1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* ---- the server: NULL, and KEEP (the caller's connection handle is kept) ------------------ */

static rc_server_conn *_Atomic kept;

static bool s_null(void *args, void *res, rc_svc_req *req)
{
	(void)args, (void)res, (void)req;
	return true;
}

static bool s_keep(void *args, void *res, rc_svc_req *req)
{
	rc_server_conn *h;
	(void)args, (void)res;
	if (rc_svc_req_conn(req, &h) != RC_OK)
		return false;
	atomic_store(&kept, h);
	return true;
}

static const rc_procinfo s_info[] = {
    {FWD_PROG, 1, 0, "NULL", (rc_xdrproc)rc_xdr_void, 0, (rc_xdrproc)rc_xdr_void, 0},
    {FWD_PROG, 1, 1, "KEEP", (rc_xdrproc)rc_xdr_void, 0, (rc_xdrproc)rc_xdr_void, 0},
};
static const rc_svc_proc s_procs[] = {{&s_info[0], s_null}, {&s_info[1], s_keep}};
static const rc_svc_prog s_prog = {FWD_PROG, 1, 2, s_procs};

/* the client's: NULL */
static const rc_procinfo c_info[] = {
    {CB_PROG, 1, 0, "CB_NULL", (rc_xdrproc)rc_xdr_void, 0, (rc_xdrproc)rc_xdr_void, 0},
};
static const rc_svc_proc c_procs[] = {{&c_info[0], s_null}};
static const rc_svc_prog c_prog = {CB_PROG, 1, 1, c_procs};

static struct {
	int server_cpu, client_cpu;
	rc_server *srv;
} G = {-1, -1, NULL};

static void *server_main(void *arg)
{
	(void)arg;
	pin(G.server_cpu); /* its worker threads inherit it */
	rc_server_run(G.srv);
	return NULL;
}

/* The client's side while the server calls back: serve from a poll loop until told to stop. */
static atomic_bool serving_stop;
static void *client_serve(void *arg)
{
	rc_client *c = arg;
	pin(G.client_cpu);
	while (!atomic_load(&serving_stop)) {
		struct pollfd pf;
		int tmo;
		if (rc_client_pollinfo(c, &pf.fd, &pf.events, &tmo) != RC_OK)
			break;
		pf.revents = 0;
		if (poll(&pf, 1, 50) > 0)
			(void)rc_client_advance(c, pf.revents);
	}
	return NULL;
}

/* Blocking calls: the median µs of n. */
static double blocking(rc_client *c, uint64_t n)
{
	uint64_t *t = bench_xmalloc(n * sizeof(*t));
	double med;
	for (uint64_t i = 0; i < n / 10 + 1; i++) /* warm-up */
		if (rc_call(c, 0, NULL, NULL, NULL, NULL) != RC_OK)
			die("warm-up call", RC_FAILED);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t t0 = bench_now_ns();
		rc_status st = rc_call(c, 0, NULL, NULL, NULL, NULL);
		if (st != RC_OK)
			die("call", st);
		t[i] = bench_now_ns() - t0;
	}
	qsort(t, n, sizeof(*t), cmp_u64);
	med = (double)t[n / 2] / 1e3;
	free(t);
	return med;
}

/* depth calls kept in flight until n have completed: calls per second. */
static double pipelined(rc_client *c, uint64_t n, unsigned depth)
{
	rc_async *h[MAX_DEPTH];
	uint64_t started = 0, done = 0, t0;
	unsigned k;
	for (k = 0; k < depth && started < n; k++, started++)
		if (rc_call_start(c, 0, NULL, NULL, NULL, NULL, NULL, NULL, &h[k]) != RC_OK)
			die("rc_call_start", RC_FAILED);
	t0 = bench_now_ns();
	for (k = 0; done < n; k = (k + 1) % depth) {
		rc_status st = rc_async_wait(h[k], -1);
		if (st != RC_OK)
			die("pipelined call", st);
		rc_async_release(h[k]);
		done++;
		if (started < n) {
			if (rc_call_start(c, 0, NULL, NULL, NULL, NULL, NULL, NULL, &h[k]) != RC_OK)
				die("rc_call_start", RC_FAILED);
			started++;
		}
	}
	return (double)n / ((double)(bench_now_ns() - t0) / 1e9);
}

/* The server's side of a callback measurement: run on a thread on the server's CPU. */
typedef struct cbrun {
	rc_client *back;
	uint64_t n;
	unsigned depth;
	double result;
} cbrun;

static void *cb_blocking(void *arg)
{
	cbrun *r = arg;
	pin(G.server_cpu);
	r->result = blocking(r->back, r->n);
	return NULL;
}

static void *cb_pipelined(void *arg)
{
	cbrun *r = arg;
	pin(G.server_cpu);
	r->result = pipelined(r->back, r->n, r->depth);
	return NULL;
}

static void report(bool json, const char *what, const char *key, double v, uint64_t n,
                   unsigned depth)
{
	if (json)
		printf("{\"what\":\"%s\",\"%s\":%.3f,\"calls\":%llu,\"depth\":%u,\"server_cpu\":%d,"
		       "\"client_cpu\":%d}\n",
		       what, key, v, (unsigned long long)n, depth, G.server_cpu, G.client_cpu);
	else
		printf("%-20s %12.3f %s (%llu calls, depth %u)\n", what, v, key, (unsigned long long)n,
		       depth);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"uri", required_argument, NULL, 'u'},        {"server-cpu", required_argument, NULL, 's'},
	    {"client-cpu", required_argument, NULL, 'c'}, {"calls", required_argument, NULL, 'n'},
	    {"depth", required_argument, NULL, 'd'},      {"json", no_argument, NULL, 'j'},
	    {"only", required_argument, NULL, 'o'},       {"server-threads", required_argument, NULL, 't'},
	    {"blocking", no_argument, NULL, 'b'},         {NULL, 0, NULL, 0}};
	const char *listen = "tcp://127.0.0.1:0";
	uint64_t n = 20000;
	unsigned depth = 64;
	bool json = false, fwd = true, cbk = true, blocking_only = false;
	unsigned threads = 2;
	char uri[256];
	pthread_t st, ct, cb;
	rc_client *c, *back;
	rc_status s;
	int o;

	while ((o = getopt_long(argc, argv, "u:s:c:n:d:jo:t:b", opts, NULL)) != -1) {
		switch (o) {
		case 'u': listen = optarg; break;
		case 's': G.server_cpu = atoi(optarg); break;
		case 'c': G.client_cpu = atoi(optarg); break;
		case 'n': n = strtoull(optarg, NULL, 10); break;
		case 'd': depth = (unsigned)atoi(optarg); break;
		case 'j': json = true; break;
		case 't': threads = (unsigned)atoi(optarg); break;
		case 'b': blocking_only = true; break;
		case 'o':
			fwd = strcmp(optarg, "callback") != 0;
			cbk = strcmp(optarg, "forward") != 0;
			break;
		default:
			fprintf(stderr, "usage: %s [--uri URI] [--server-cpu A] [--client-cpu B] "
			                "[--calls N] [--depth D] [--only forward|callback] [--server-threads N] "
			                "[--blocking] [--json]\n",
			        progname);
			return 2;
		}
	}
	if (n < 10 || depth < 1 || depth > MAX_DEPTH) {
		fprintf(stderr, "%s: --calls 10 or more, --depth 1..%d\n", progname, MAX_DEPTH);
		return 2;
	}
	if ((s = rc_server_create(&G.srv)) != RC_OK ||
	    (s = rc_server_register(G.srv, &s_prog, NULL)) != RC_OK ||
	    (s = rc_server_set_threads(G.srv, threads)) != RC_OK ||
	    (s = rc_server_listen(G.srv, listen, uri, sizeof(uri))) != RC_OK)
		die("server", s);
	pthread_create(&st, NULL, server_main, NULL);
	pin(G.client_cpu);
	if ((s = rc_client_create(&c, uri, FWD_PROG, 1)) != RC_OK ||
	    (s = rc_client_serve(c, &c_prog, NULL)) != RC_OK ||
	    (s = rc_call(c, 1, NULL, NULL, NULL, NULL)) != RC_OK)
		die("client", s);
	if ((s = rc_server_conn_backchannel(atomic_load(&kept), CB_PROG, 1, &back)) != RC_OK)
		die("back channel", s);

	/* forward, on this (the client's) thread; then the server calls back while the client
	 * serves from its poll loop on its own thread */
	if (fwd) {
		report(json, "forward", "median_us", blocking(c, n), n, 1);
		if (!blocking_only)
			report(json, "forward-pipelined", "calls_per_s", pipelined(c, n, depth), n,
			       depth);
	}
	atomic_store(&serving_stop, false);
	pthread_create(&ct, NULL, client_serve, c);
	if (cbk) {
		cbrun r = {back, n, depth, 0};
		pthread_create(&cb, NULL, cb_blocking, &r);
		pthread_join(cb, NULL);
		report(json, "callback", "median_us", r.result, n, 1);
		if (!blocking_only) {
			pthread_create(&cb, NULL, cb_pipelined, &r);
			pthread_join(cb, NULL);
			report(json, "callback-pipelined", "calls_per_s", r.result, n, depth);
		}
	}
	atomic_store(&serving_stop, true);
	pthread_join(ct, NULL);
	rc_client_destroy(back);
	rc_client_destroy(c);
	rc_server_stop(G.srv);
	pthread_join(st, NULL);
	rc_server_conn_release(atomic_load(&kept));
	rc_server_destroy(G.srv);
	return 0;
}

/*
 * rc-bench-hol -- head-of-line blocking on one client: the latency of null calls made while a
 * big echo is under way on the same client, beside their latency with nothing else running.
 *
 *   rc-bench-hol --uri URI [--tls-ca FILE] [--tls-name NAME] [--size BYTES] [--calls N]
 *                [--echoes N] [--period-us N]
 *
 * One rc_client (bench.x) at URI: a tcp:// URI runs RPC-over-TLS (required), a quic:// one
 * RPC-over-QUIC. After a warm-up (null calls and one echo of --size), --calls null calls
 * measure the idle latency; then a second thread echoes --size bytes --echoes times, back to
 * back, on the same client while this one makes null calls for as long as an echo is in
 * flight. Over TLS-over-TCP a null call queues behind the echo on the one connection; over
 * QUIC it goes on another stream of the connection.
 *
 * The null calls keep a schedule, one every --period-us (500) µs, and a call's latency runs
 * from its scheduled start (a call that waits holds up the ones due meanwhile, which count
 * their wait too): so the calls sample the echo's time evenly, as independent callers would,
 * and a stall of T ms shows in T ms ÷ period calls, not in one. One JSON line: idle and busy
 * medians and 90th percentiles (µs), how many busy calls, the echo's median time (ms) and
 * busy ÷ idle (medians). Exit 1 (with rc_strerror's text) when a call fails.
 *
 * --floor-uri URI (a tcp:// URI; --floor-tls off|required, default required): then, in the
 * same run, the same measurement with the echoes on a second rc_client -- a connection of
 * their own -- at that URI, so nothing of the client's is shared: the floor any transport
 * could reach with this server (a server with threads takes the two connections on two
 * threads). The line then adds floor_idle_p50_us, floor_busy_p50_us (and 90th percentiles),
 * floor_busy_calls and busy_over_floor (busy ÷ the floor's busy, medians).
 */
#include <pthread.h>
#include <time.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <remotecall/remotecall.h>

#include "bench.h"
#include "common.h"

typedef struct hol {
	rc_client *c;     /* the echoes' client */
	size_t size;
	unsigned echoes;
	atomic_int busy;  /* 1 while an echo is in flight, 2 once all are done */
	uint64_t *echo_ns;
	rc_status st;
} hol;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The q-quantile of v[0..n) (sorted here), in µs. */
static double quant_us(uint64_t *v, size_t n, double q)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return (double)v[(size_t)(q * (double)(n - 1) + 0.5)] / 1000.0;
}

/* One echo of size bytes, checked. */
static rc_status echo(rc_client *c, size_t size)
{
	static unsigned char *buf;
	bench_data in, out = {0, NULL};
	rc_status st;

	if (buf == NULL && (buf = malloc(size ? size : 1)) == NULL)
		return RC_NOMEM;
	for (size_t i = 0; i < size; i += 4096)
		buf[i] = (unsigned char)i;
	in.bench_data_len = (u_int)size;
	in.bench_data_val = (char *)buf;
	st = bench_echo_1(c, &in, &out);
	if (st == RC_OK && (out.bench_data_len != size || memcmp(out.bench_data_val, buf, size) != 0))
		st = RC_CANTDECODERES;
	rc_xdr_free((rc_xdrproc)xdr_bench_data, &out);
	return st;
}

static void *echoer(void *arg)
{
	hol *h = arg;

	for (unsigned i = 0; i < h->echoes && h->st == RC_OK; i++) {
		uint64_t t0 = bench_now_ns();
		atomic_store(&h->busy, 1);
		h->st = echo(h->c, h->size);
		h->echo_ns[i] = bench_now_ns() - t0;
	}
	atomic_store(&h->busy, 2);
	return NULL;
}

static void die(const char *what, rc_status st, const rc_error *e)
{
	char buf[512];
	fprintf(stderr, "rc-bench-hol: %s: %s%s%s\n", what, rc_strerror(st), e ? ": " : "",
	        e ? rc_error_format(e, buf, sizeof(buf)) : "");
	exit(1);
}

/* Sleep until the monotonic time at (ns). */
static void sleep_until(uint64_t at)
{
	struct timespec ts = {(time_t)(at / 1000000000u), (long)(at % 1000000000u)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
		;
}

/* A null call due at `due` (ns; started then, or at once if late): its latency from due. */
static uint64_t null_at(rc_client *c, uint64_t due, const char *what)
{
	rc_status st;

	if (bench_now_ns() < due)
		sleep_until(due);
	if ((st = bench_null_1(c)) != RC_OK)
		die(what, st, NULL);
	return bench_now_ns() - due;
}

/* What one measurement found (µs; echo in ms). */
typedef struct hol_res {
	double i50, i90, b50, b90, echo_ms;
	size_t nbusy;
} hol_res;

/* Null calls on c: --calls idle, then as many as fit while h->echoes echoes run on h->c (c
 * itself, or another client) from a second thread. idle/busy: room for calls and cap. */
static hol_res measure(rc_client *c, hol *h, unsigned calls, uint64_t period, uint64_t *idle,
                       uint64_t *busy, size_t cap)
{
	hol_res r = {0};
	uint64_t due = bench_now_ns();
	pthread_t th;

	for (unsigned i = 0; i < calls; i++, due += period)
		idle[i] = null_at(c, due, "null call");
	h->st = RC_OK;
	atomic_store(&h->busy, 0);
	if (pthread_create(&th, NULL, echoer, h) != 0)
		die("thread", RC_NOMEM, NULL);
	while (atomic_load(&h->busy) == 0)
		;
	for (due = bench_now_ns(); atomic_load(&h->busy) == 1 && r.nbusy < cap; due += period)
		busy[r.nbusy++] = null_at(c, due, "null call during the echo");
	pthread_join(th, NULL);
	if (h->st != RC_OK)
		die("echo", h->st, NULL);
	r.i50 = quant_us(idle, calls, 0.5);
	r.i90 = quant_us(idle, calls, 0.9);
	r.b50 = quant_us(busy, r.nbusy, 0.5);
	r.b90 = quant_us(busy, r.nbusy, 0.9);
	r.echo_ms = quant_us(h->echo_ns, h->echoes, 0.5) / 1000.0;
	return r;
}

/* A client of bench.x at uri under o, warmed up: 100 null calls and one echo of size. */
static rc_client *open_client(const char *uri, const rc_tls_client_opts *o, size_t size)
{
	rc_client *c;
	rc_error e;
	rc_status st;

	if ((st = rc_client_create_tls(&c, uri, BENCH_PROG, BENCH_VERS, o, &e)) != RC_OK)
		die(uri, st, &e);
	rc_client_set_timeout(c, 60000);
	for (int i = 0; i < 100; i++)
		if ((st = bench_null_1(c)) != RC_OK)
			die("warm-up null call", st, NULL);
	if ((st = echo(c, size)) != RC_OK)
		die("warm-up echo", st, NULL);
	return c;
}

int main(int argc, char **argv)
{
	const char *uri = NULL, *floor_uri = NULL;
	rc_tls_client_opts o = {.policy = RC_TLS_REQUIRED}, fo;
	hol h = {.size = 16u << 20, .echoes = 3};
	unsigned calls = 2000;
	uint64_t period = 500000;
	size_t cap = 1 << 16;
	uint64_t *idle, *busy;
	rc_client *c;
	hol_res r, f = {0};
	bool bad = false;

	fo.policy = RC_TLS_REQUIRED;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--uri") == 0)
			uri = argv[i + 1];
		else if (strcmp(argv[i], "--tls-ca") == 0)
			o.ca_file = argv[i + 1];
		else if (strcmp(argv[i], "--tls-name") == 0)
			o.verify_name = argv[i + 1];
		else if (strcmp(argv[i], "--size") == 0)
			h.size = strtoul(argv[i + 1], NULL, 0);
		else if (strcmp(argv[i], "--calls") == 0)
			calls = (unsigned)strtoul(argv[i + 1], NULL, 0);
		else if (strcmp(argv[i], "--echoes") == 0)
			h.echoes = (unsigned)strtoul(argv[i + 1], NULL, 0);
		else if (strcmp(argv[i], "--period-us") == 0)
			period = strtoull(argv[i + 1], NULL, 0) * 1000u;
		else if (strcmp(argv[i], "--floor-uri") == 0)
			floor_uri = argv[i + 1];
		else if (strcmp(argv[i], "--floor-tls") == 0 && strcmp(argv[i + 1], "off") == 0)
			fo.policy = RC_TLS_OFF;
		else if (strcmp(argv[i], "--floor-tls") != 0 || strcmp(argv[i + 1], "required") != 0)
			bad = true, i = argc;
	}
	if (uri == NULL || bad || calls == 0 || h.echoes == 0 || argc % 2 == 0) {
		fprintf(stderr, "usage: rc-bench-hol --uri URI [--tls-ca FILE] [--tls-name NAME] "
		                "[--size BYTES] [--calls N] [--echoes N] [--period-us N]\n"
		                "       [--floor-uri tcp://... [--floor-tls off|required]]\n");
		return 2;
	}
	fo.ca_file = o.ca_file;
	fo.verify_name = o.verify_name;
	idle = calloc(calls, sizeof(*idle));
	busy = calloc(cap, sizeof(*busy));
	h.echo_ns = calloc(h.echoes, sizeof(*h.echo_ns));
	if (idle == NULL || busy == NULL || h.echo_ns == NULL)
		die("memory", RC_NOMEM, NULL);
	c = h.c = open_client(uri, &o, h.size);
	r = measure(c, &h, calls, period, idle, busy, cap);
	rc_client_destroy(c);
	printf("{\"impl\":\"remotecall\",\"mode\":\"hol\",\"uri\":\"%s\",\"proc\":\"null\","
	       "\"echo_size\":%zu,\"echoes\":%u,\"idle_calls\":%u,\"idle_p50_us\":%.2f,"
	       "\"idle_p90_us\":%.2f,\"busy_calls\":%zu,\"busy_p50_us\":%.2f,\"busy_p90_us\":%.2f,"
	       "\"echo_p50_ms\":%.3f,\"busy_over_idle\":%.3f",
	       uri, h.size, h.echoes, calls, r.i50, r.i90, r.nbusy, r.b50, r.b90, r.echo_ms,
	       r.i50 > 0 ? r.b50 / r.i50 : 0);
	if (floor_uri != NULL) {
		c = open_client(floor_uri, &fo, h.size);
		h.c = open_client(floor_uri, &fo, h.size);
		f = measure(c, &h, calls, period, idle, busy, cap);
		rc_client_destroy(h.c);
		rc_client_destroy(c);
		printf(",\"floor_uri\":\"%s\",\"floor_tls\":%s,\"floor_idle_p50_us\":%.2f,"
		       "\"floor_idle_p90_us\":%.2f,\"floor_busy_calls\":%zu,\"floor_busy_p50_us\":%.2f,"
		       "\"floor_busy_p90_us\":%.2f,\"floor_echo_p50_ms\":%.3f,\"busy_over_floor\":%.3f",
		       floor_uri, fo.policy == RC_TLS_OFF ? "false" : "true", f.i50, f.i90, f.nbusy,
		       f.b50, f.b90, f.echo_ms, f.b50 > 0 ? r.b50 / f.b50 : 0);
	}
	printf("}\n");
	free(idle);
	free(busy);
	free(h.echo_ns);
	return 0;
}

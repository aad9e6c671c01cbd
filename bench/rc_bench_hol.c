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
	rc_client *c;
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

int main(int argc, char **argv)
{
	const char *uri = NULL;
	rc_tls_client_opts o = {.policy = RC_TLS_REQUIRED};
	hol h = {.size = 16u << 20, .echoes = 3};
	unsigned calls = 2000;
	uint64_t period = 500000, due;
	size_t nbusy = 0, cap = 1 << 16;
	uint64_t *idle, *busy;
	pthread_t th;
	rc_error e;
	rc_status st;

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
		else
			uri = NULL, i = argc;
	}
	if (uri == NULL || calls == 0 || h.echoes == 0 || argc % 2 == 0) {
		fprintf(stderr, "usage: rc-bench-hol --uri URI [--tls-ca FILE] [--tls-name NAME] "
		                "[--size BYTES] [--calls N] [--echoes N] [--period-us N]\n");
		return 2;
	}
	idle = calloc(calls, sizeof(*idle));
	busy = calloc(cap, sizeof(*busy));
	h.echo_ns = calloc(h.echoes, sizeof(*h.echo_ns));
	if (idle == NULL || busy == NULL || h.echo_ns == NULL)
		die("memory", RC_NOMEM, NULL);
	if ((st = rc_client_create_tls(&h.c, uri, BENCH_PROG, BENCH_VERS, &o, &e)) != RC_OK)
		die(uri, st, &e);
	rc_client_set_timeout(h.c, 60000);
	for (int i = 0; i < 100; i++)
		if ((st = bench_null_1(h.c)) != RC_OK)
			die("warm-up null call", st, NULL);
	if ((st = echo(h.c, h.size)) != RC_OK)
		die("warm-up echo", st, NULL);
	due = bench_now_ns();
	for (unsigned i = 0; i < calls; i++, due += period)
		idle[i] = null_at(h.c, due, "null call");
	h.st = RC_OK;
	if (pthread_create(&th, NULL, echoer, &h) != 0)
		die("thread", RC_NOMEM, NULL);
	while (atomic_load(&h.busy) == 0)
		;
	for (due = bench_now_ns(); atomic_load(&h.busy) == 1 && nbusy < cap; due += period)
		busy[nbusy++] = null_at(h.c, due, "null call during the echo");
	pthread_join(th, NULL);
	if (h.st != RC_OK)
		die("echo", h.st, NULL);
	{
		double i50 = quant_us(idle, calls, 0.5), i90 = quant_us(idle, calls, 0.9);
		double b50 = quant_us(busy, nbusy, 0.5), b90 = quant_us(busy, nbusy, 0.9);
		printf("{\"impl\":\"remotecall\",\"mode\":\"hol\",\"uri\":\"%s\",\"proc\":\"null\","
		       "\"echo_size\":%zu,\"echoes\":%u,\"idle_calls\":%u,\"idle_p50_us\":%.2f,"
		       "\"idle_p90_us\":%.2f,\"busy_calls\":%zu,\"busy_p50_us\":%.2f,\"busy_p90_us\":%.2f,"
		       "\"echo_p50_ms\":%.3f,\"busy_over_idle\":%.3f}\n",
		       uri, h.size, h.echoes, calls, i50, i90, nbusy, b50, b90,
		       quant_us(h.echo_ns, h.echoes, 0.5) / 1000.0, i50 > 0 ? b50 / i50 : 0);
	}
	rc_client_destroy(h.c);
	free(idle);
	free(busy);
	free(h.echo_ns);
	return 0;
}

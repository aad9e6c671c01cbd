/*
 * faults-soak-client -- one client process of the soak test (soak.sh).
 *
 *   faults-soak-client --udp URI --tcp URI --seconds S [--id N] [--seed N]
 *   faults-soak-client --read-total --udp URI        prints "total N" (ADD 0)
 *
 * Until S seconds have passed it runs sessions: a session creates a UDP and a TCP client (a
 * new connection, a new source port), makes a random number of calls (20..2000) or runs for a
 * random 0.2..3 s, then destroys both. Each call is, at random, on either client:
 *   NULL (20 %); ECHO (50 %) of 0..8 KiB (sometimes up to 60,000 bytes on UDP, 256 KiB on TCP)
 *   of bytes unique to this client and call; ADD (30 %) of 1..1000;
 * and now and then a burst of 16 ECHO calls in flight at once on the TCP client (pipelined).
 * Every reply is checked: ECHO must return exactly the bytes sent, ADD a total larger than the
 * one this client saw last. Any failed call is a lost reply (there are no faults injected).
 * At the end it prints one line:
 *   client N: calls C null C echo C add C bursts C sessions C bytes B errors E mismatches M add_sum X
 * and exits 0 if errors and mismatches are both 0, 1 otherwise.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <remotecall/remotecall.h>

#include "bench.h"

static const char *progname = "faults-soak-client";
static uint64_t g_rng;
static unsigned g_id;
static uint64_t n_calls, n_null, n_echo, n_add, n_bursts, n_sessions, n_bytes, n_err, n_mis;
static int64_t add_sum, last_total;

static uint64_t rnd(void)
{
	uint64_t x = g_rng; /* xorshift64* */
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	g_rng = x;
	return x * 2685821657736338717ULL;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The bytes of call k: a stream seeded by (client id, k). */
static void fill(unsigned char *b, size_t n, uint64_t k)
{
	uint64_t s = (uint64_t)g_id << 40 ^ k ^ 0x9E3779B97F4A7C15ULL;
	for (size_t i = 0; i < n; i++) {
		if ((i & 7) == 0) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
		}
		b[i] = (unsigned char)(s >> ((i & 7) * 8));
	}
}

static void report(const char *what, rc_client *c, rc_status st)
{
	rc_error e;
	char buf[200];
	rc_client_geterr(c, &e);
	if (n_err + n_mis < 10)
		fprintf(stderr, "%s %u: %s: %s (%s)\n", progname, g_id, what, rc_strerror(st),
		        st == RC_OK ? "wrong reply" : rc_error_format(&e, buf, sizeof buf));
}

static size_t echo_size(bool tcp)
{
	uint64_t r = rnd() % 100;
	if (r < 90)
		return (size_t)(rnd() % 8193);
	return tcp ? (size_t)(rnd() % (256u << 10)) : (size_t)(rnd() % 60001);
}

static void one_call(rc_client *c, bool tcp, unsigned char *buf, unsigned char *exp)
{
	uint64_t r = rnd() % 100;
	uint64_t k = n_calls++;
	if (r < 20) {
		n_null++;
		rc_status st = bench_null_1(c);
		if (st != RC_OK) {
			n_err++;
			report(tcp ? "TCP NULL" : "UDP NULL", c, st);
		}
	} else if (r < 70) {
		n_echo++;
		size_t n = echo_size(tcp);
		fill(buf, n, k);
		bench_data arg = {(uint32_t)n, (char *)buf}, res = {0, NULL};
		rc_status st = bench_echo_1(c, &arg, &res);
		if (st != RC_OK) {
			n_err++;
			report(tcp ? "TCP ECHO" : "UDP ECHO", c, st);
		} else {
			fill(exp, n, k);
			if (res.bench_data_len != n || (n && memcmp(res.bench_data_val, exp, n) != 0)) {
				n_mis++;
				report(tcp ? "TCP ECHO" : "UDP ECHO", c, st);
			}
			n_bytes += n;
		}
		rc_xdr_free((rc_xdrproc)xdr_bench_data, &res);
	} else {
		n_add++;
		int64_t arg = (int64_t)(rnd() % 1000) + 1, res = 0;
		rc_status st = bench_add_1(c, &arg, &res);
		if (st != RC_OK) {
			n_err++;
			report(tcp ? "TCP ADD" : "UDP ADD", c, st);
		} else {
			add_sum += arg;
			if (res < last_total + arg) { /* others add too: it can only have grown more */
				n_mis++;
				report(tcp ? "TCP ADD" : "UDP ADD", c, st);
			}
			last_total = res;
		}
	}
}

/* 16 ECHO calls in flight at once on the TCP client, then each checked. */
static void burst(rc_client *c, unsigned char *buf)
{
	enum { N = 16 };
	rc_async *h[N];
	bench_data res[N];
	unsigned char *in[N];
	size_t len[N];
	uint64_t k0 = n_calls;
	n_bursts++;
	memset(res, 0, sizeof res);
	for (int i = 0; i < N; i++) {
		len[i] = (size_t)(rnd() % 16385);
		in[i] = malloc(len[i] ? len[i] : 1);
		if (!in[i]) {
			fprintf(stderr, "%s: out of memory\n", progname);
			exit(1);
		}
		fill(in[i], len[i], k0 + (uint64_t)i);
		bench_data arg = {(uint32_t)len[i], (char *)in[i]};
		rc_status st = bench_echo_1_async(c, &arg, &res[i], NULL, NULL, &h[i]);
		n_calls++;
		n_echo++;
		if (st != RC_OK) {
			h[i] = NULL;
			n_err++;
			report("TCP ECHO (burst start)", c, st);
		}
	}
	for (int i = 0; i < N; i++) {
		if (!h[i]) {
			free(in[i]);
			continue;
		}
		rc_status st = rc_async_wait(h[i], -1);
		rc_async_release(h[i]);
		if (st != RC_OK) {
			n_err++;
			report("TCP ECHO (burst)", c, st);
		} else if (res[i].bench_data_len != len[i] ||
		           (len[i] && memcmp(res[i].bench_data_val, in[i], len[i]) != 0)) {
			n_mis++;
			report("TCP ECHO (burst)", c, st);
		} else {
			n_bytes += len[i];
		}
		rc_xdr_free((rc_xdrproc)xdr_bench_data, &res[i]);
		free(in[i]);
	}
	(void)buf;
}

static rc_client *make(const char *uri)
{
	rc_client *c;
	rc_status st = rc_client_create(&c, uri, BENCH_PROG, BENCH_VERS);
	if (st != RC_OK) {
		fprintf(stderr, "%s %u: %s: %s\n", progname, g_id, uri, rc_strerror(st));
		n_err++;
		return NULL;
	}
	rc_client_set_timeout(c, 15000);
	rc_client_set_retry(c, 200);
	return c;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"udp", required_argument, NULL, 'u'},     {"tcp", required_argument, NULL, 't'},
		{"seconds", required_argument, NULL, 's'}, {"id", required_argument, NULL, 'i'},
		{"seed", required_argument, NULL, 'S'},    {"read-total", no_argument, NULL, 'r'},
		{NULL, 0, NULL, 0},
	};
	const char *udp = NULL, *tcp = NULL;
	double seconds = 10;
	uint64_t seed = 0;
	bool read_total = false;
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'u': udp = optarg; break;
		case 't': tcp = optarg; break;
		case 's': seconds = atof(optarg); break;
		case 'i': g_id = (unsigned)atoi(optarg); break;
		case 'S': seed = strtoull(optarg, NULL, 0); break;
		case 'r': read_total = true; break;
		default:
			fprintf(stderr, "usage: %s --udp URI --tcp URI --seconds S [--id N] [--seed N]\n"
			                "       %s --read-total --udp URI\n", progname, progname);
			return 2;
		}
	}
	if (read_total) {
		rc_client *cl = udp ? make(udp) : NULL;
		int64_t zero = 0, total = 0;
		rc_status st = cl ? bench_add_1(cl, &zero, &total) : RC_INVAL;
		if (st != RC_OK) {
			fprintf(stderr, "%s: reading the total: %s\n", progname, rc_strerror(st));
			return 1;
		}
		printf("total %" PRId64 "\n", total);
		rc_client_destroy(cl);
		return 0;
	}
	if (!udp || !tcp || seconds <= 0) {
		fprintf(stderr, "%s: --udp, --tcp and --seconds are required\n", progname);
		return 2;
	}
	g_rng = (seed ? seed : (uint64_t)time(NULL)) * 0x9E3779B97F4A7C15ULL + g_id + 1;
	if (!g_rng)
		g_rng = 1;
	unsigned char *buf = malloc(1u << 20), *exp = malloc(1u << 20);
	if (!buf || !exp)
		return 1;
	uint64_t end = now_ms() + (uint64_t)(seconds * 1000);
	while (now_ms() < end) {
		rc_client *cu = make(udp), *ct = make(tcp);
		if (!cu || !ct) {
			rc_client_destroy(cu);
			rc_client_destroy(ct);
			break;
		}
		n_sessions++;
		uint64_t ncalls = 20 + rnd() % 1981;
		uint64_t until = now_ms() + 200 + rnd() % 2801;
		for (uint64_t i = 0; i < ncalls && now_ms() < until && now_ms() < end; i++) {
			if (rnd() % 200 == 0)
				burst(ct, buf);
			else if (rnd() & 1)
				one_call(ct, true, buf, exp);
			else
				one_call(cu, false, buf, exp);
		}
		rc_client_destroy(cu);
		rc_client_destroy(ct);
	}
	printf("client %u: calls %" PRIu64 " null %" PRIu64 " echo %" PRIu64 " add %" PRIu64
	       " bursts %" PRIu64 " sessions %" PRIu64 " bytes %" PRIu64 " errors %" PRIu64
	       " mismatches %" PRIu64 " add_sum %" PRId64 "\n",
	       g_id, n_calls, n_null, n_echo, n_add, n_bursts, n_sessions, n_bytes, n_err, n_mis,
	       add_sum);
	free(buf);
	free(exp);
	return n_err || n_mis ? 1 : 0;
}

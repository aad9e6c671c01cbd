/* tests/faults/amo_common.c -- see amo_common.h. */
#include "amo_common.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define AMO_PROG 0x20524300u
#define AMO_ADD 6u

static uint32_t *g_delivered; /* [arg]: ADD requests with that argument handed to the server */
static int g_ncalls;
/* How far back the cache had to remember: calls are numbered in the order they first reach the
 * server; when a copy of call c reaches it again, the calls first seen since c were admitted to
 * the cache after c. The largest such distance is how many later calls it had to remember c
 * across (the cache remembers every call for its TTL, however many come after). */
static uint32_t *g_first;   /* [arg]: 1 + the order in which the call first reached the server */
static uint32_t g_ndistinct, g_maxdist;
static uint64_t g_add_datagrams, g_other_datagrams;
static relay_stats g_stats;

uint64_t amo_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static void usage(const char *prog)
{
	fprintf(stderr,
	        "usage: %s --server udp://127.0.0.1:PORT [--calls N] [--inflight N] [--clients N]\n"
	        "       [--retry MS] [--timeout MS] [--drop P] [--dup P] [--reorder P] [--jitter MS]\n"
	        "       [--seed N] [--max-failed N]\n",
	        prog);
	exit(2);
}

void amo_parse(int argc, char **argv, const char *prog, amo_opts *o)
{
	static const struct option lo[] = {
		{"server", required_argument, NULL, 's'},   {"calls", required_argument, NULL, 'n'},
		{"inflight", required_argument, NULL, 'i'}, {"clients", required_argument, NULL, 'c'},
		{"retry", required_argument, NULL, 'r'},    {"timeout", required_argument, NULL, 't'},
		{"drop", required_argument, NULL, 'd'},     {"dup", required_argument, NULL, 'u'},
		{"reorder", required_argument, NULL, 'o'},  {"jitter", required_argument, NULL, 'j'},
		{"seed", required_argument, NULL, 'S'},     {"max-failed", required_argument, NULL, 'f'},
		{NULL, 0, NULL, 0},
	};
	*o = (amo_opts){.calls = 5000, .inflight = 16, .clients = 4, .retry_ms = 20,
	                .timeout_ms = 5000, .drop = 0.3, .dup = 0.1, .reorder = 0.1, .seed = 1,
	                .expect_fail_max = -1};
	int c;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		char *end = NULL;
		errno = 0;
		switch (c) {
		case 's': o->server = optarg; continue;
		case 'd': o->drop = strtod(optarg, &end); break;
		case 'u': o->dup = strtod(optarg, &end); break;
		case 'o': o->reorder = strtod(optarg, &end); break;
		case 'S': o->seed = strtoull(optarg, &end, 0); break;
		default: {
			if (c == '?')
				usage(prog);
			long v = strtol(optarg, &end, 10);
			if (v < 0 || v > 100000000)
				usage(prog);
			switch (c) {
			case 'n': o->calls = (int)v; break;
			case 'i': o->inflight = (int)v; break;
			case 'c': o->clients = (int)v; break;
			case 'r': o->retry_ms = (uint32_t)v; break;
			case 't': o->timeout_ms = (uint32_t)v; break;
			case 'j': o->jitter_ms = (uint32_t)v; break;
			case 'f': o->expect_fail_max = (int)v; break;
			}
		}
		}
		if (errno || !end || end == optarg || *end)
			usage(prog);
	}
	if (!o->server || optind < argc || o->calls < 1 || o->inflight < 1 || o->clients < 1 ||
	    o->clients > o->inflight)
		usage(prog);
	if (o->expect_fail_max < 0)
		o->expect_fail_max = o->calls / 50;
}

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The relay's tap: an ADD call handed to the server; note its argument. */
static void tap(int dir, unsigned client, const unsigned char *m, size_t len, void *ud)
{
	(void)client;
	(void)ud;
	if (dir != RELAY_REQ)
		return;
	if (len < 40 || rd32(m + 4) != 0 || rd32(m + 12) != AMO_PROG || rd32(m + 20) != AMO_ADD) {
		g_other_datagrams++;
		return;
	}
	size_t off = 28;
	uint32_t clen = rd32(m + off);
	off += 4 + ((clen + 3u) & ~3u) + 4;
	if (off + 4 > len)
		return;
	uint32_t vlen = rd32(m + off);
	off += 4 + ((vlen + 3u) & ~3u);
	if (off + 8 != len)
		return;
	int64_t arg = (int64_t)((uint64_t)rd32(m + off) << 32 | rd32(m + off + 4));
	g_add_datagrams++;
	if (arg >= 1 && arg <= g_ncalls) {
		if (g_delivered[arg]++ == 0)
			g_first[arg] = ++g_ndistinct;
		else if (g_ndistinct - g_first[arg] > g_maxdist)
			g_maxdist = g_ndistinct - g_first[arg];
	}
}

relay *amo_relay_start(const amo_opts *o)
{
	relay_opts ro;
	memset(&ro, 0, sizeof ro);
	ro.server = o->server;
	ro.seed = o->seed;
	for (int d = 0; d < 2; d++) {
		ro.dir[d].drop = o->drop;
		ro.dir[d].dup = o->dup;
		ro.dir[d].reorder = o->reorder;
		ro.dir[d].jitter_ms = o->jitter_ms;
		ro.dir[d].hold_ms = 50;
	}
	ro.tap = tap;
	g_ncalls = o->calls;
	g_delivered = calloc((size_t)o->calls + 1, sizeof *g_delivered);
	g_first = calloc((size_t)o->calls + 1, sizeof *g_first);
	char err[300];
	relay *r = g_delivered && g_first ? relay_start(&ro, err, sizeof err) : NULL;
	if (!r) {
		fprintf(stderr, "relay: %s\n", g_delivered && g_first ? err : "out of memory");
		exit(1);
	}
	return r;
}

void amo_relay_finish(relay *r)
{
	relay_get_stats(r, &g_stats);
	relay_stop(r);
	usleep(300000); /* let the server serve what was handed to it before the total is read */
}

int amo_check(const char *impl, const amo_opts *o, const amo_call *calls, int64_t total,
              double elapsed_s)
{
	int bad = 0, ok = 0, failed = 0, notonce = 0, okmissing = 0, dupret = 0;
	int64_t sum_ok = 0, sum_delivered = 0, sum_failed = 0;
	uint64_t distinct = 0, copies = 0;
	char why_first[24] = "";
	int nwhy = 0;

	for (int i = 1; i <= o->calls; i++) {
		copies += g_delivered[i];
		if (g_delivered[i]) {
			distinct++;
			sum_delivered += i;
		}
		if (calls[i].done != 1) {
			if (notonce++ < 5)
				fprintf(stderr, "FAIL call ADD(%d) completed %d times\n", i, calls[i].done);
			continue;
		}
		if (calls[i].ok) {
			ok++;
			sum_ok += i;
			if (!g_delivered[i] && okmissing++ < 5)
				fprintf(stderr, "FAIL ADD(%d) succeeded but never reached the server\n", i);
		} else {
			failed++;
			sum_failed += i;
			if (!nwhy++)
				snprintf(why_first, sizeof why_first, "%s", calls[i].why);
		}
	}
	/* the returned totals of the successful calls: all different */
	int64_t *rets = malloc(sizeof *rets * (size_t)(ok ? ok : 1));
	int k = 0;
	for (int i = 1; i <= o->calls; i++)
		if (calls[i].done == 1 && calls[i].ok)
			rets[k++] = calls[i].ret;
	qsort(rets, (size_t)k, sizeof *rets, cmp_i64);
	for (int i = 1; i < k; i++)
		dupret += rets[i] == rets[i - 1];
	free(rets);

	char line[700];
	printf("at-most-once (%s client): %d calls in %.1f s, %d in flight on %d client(s), retry %u ms, "
	       "timeout %u ms\n",
	       impl, o->calls, elapsed_s, o->inflight, o->clients, o->retry_ms, o->timeout_ms);
	printf("  faults both ways: drop %.2f dup %.2f reorder %.2f jitter %u ms, seed %llu\n",
	       o->drop, o->dup, o->reorder, o->jitter_ms, (unsigned long long)o->seed);
	printf("  calls: %d succeeded, %d failed%s%s%s\n", ok, failed, failed ? " (first: " : "",
	       why_first, failed ? ")" : "");
	printf("  relay: %s\n", relay_format_stats(&g_stats, line, sizeof line));
	printf("  server was handed %llu ADD datagrams for %llu distinct calls: %llu duplicates "
	       "for the duplicate request cache to absorb\n",
	       (unsigned long long)copies, (unsigned long long)distinct,
	       (unsigned long long)(copies - distinct));
	printf("  a duplicate reached the server at most %u calls after its original: the cache "
	       "remembered it across them\n", g_maxdist);
	printf("  total %lld; sum over calls handed to the server %lld; sum over successful calls "
	       "%lld; over failed calls %lld\n",
	       (long long)total, (long long)sum_delivered, (long long)sum_ok, (long long)sum_failed);
	if (notonce) {
		printf("FAIL %d calls did not complete exactly once\n", notonce);
		bad = 1;
	}
	if (total != sum_delivered) {
		printf("FAIL total %lld != %lld: %s\n", (long long)total, (long long)sum_delivered,
		       total > sum_delivered ? "some call ran more than once"
		                             : "some call handed to the server never ran");
		bad = 1;
	}
	if (okmissing) {
		printf("FAIL %d successful calls never reached the server\n", okmissing);
		bad = 1;
	}
	if (sum_ok > total) {
		printf("FAIL the successful calls add up to more than the total\n");
		bad = 1;
	}
	if (dupret) {
		printf("FAIL %d successful calls returned a total another call returned too\n", dupret);
		bad = 1;
	}
	if (failed > o->expect_fail_max) {
		printf("FAIL %d calls failed (at most %d expected at these settings)\n", failed,
		       o->expect_fail_max);
		bad = 1;
	}
	if (g_stats.retrans == 0 || copies == distinct) {
		printf("FAIL no retransmission or duplicate reached the server: the test tested nothing\n");
		bad = 1;
	}
	printf("%s\n", bad ? "at-most-once: FAILED" : "at-most-once: ok");
	free(g_delivered);
	free(g_first);
	g_delivered = NULL;
	g_first = NULL;
	return bad;
}


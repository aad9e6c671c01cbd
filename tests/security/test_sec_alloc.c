/*
 * Attack classes 1 and 2: allocation from a wire length (CVE-2017-8779 "rpcbomb",
 * CVE-2017-8804) and count x size overflow (CVE-2002-0391).
 *
 * A server runs in a thread of this process; a raw attacker sends 100,000 calls whose string,
 * opaque, array or credential lengths claim 0xFFFFFFFF, 0x7FFFFFFF, 0x40000001 or max+1 bytes
 * followed by 0-8 bytes, over UDP and TCP. Every one must be answered GARBAGE_ARGS (arguments)
 * or AUTH_ERROR/AUTH_BADCRED (credentials); the process's RSS may grow by less than 8 MiB; no
 * single allocation may come near a claimed size (the allocator is wrapped); no block may be
 * left behind; and the server must answer a fresh null call afterwards.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sec_util.h"

#define VOLUME 100000u /* attack messages in all, half over UDP, half over TCP */

static const char *const uris[] = {"udp://127.0.0.1:0", "tcp://127.0.0.1:0", NULL};
static sec_server S;

static int setup(void **st)
{
	(void)st;
	return sec_start(&S, uris, NULL, 1, 0);
}

static int teardown(void **st)
{
	(void)st;
	sec_stop(&S);
	return 0;
}

/* One attack variant: a procedure, the words that precede the claim, the claim, and how many
 * bytes follow it. */
typedef struct {
	uint32_t proc;
	int nprefix;
	uint32_t prefix[2];
	uint32_t claim;
	uint32_t trail;
	bool cred; /* the claim is the credential body length (AUTH_SYS) */
} variant;

static variant V[2048];
static size_t NV;

static void add(uint32_t proc, int np, uint32_t p0, uint32_t p1, uint32_t claim, bool cred)
{
	for (uint32_t t = 0; t <= 8; t++) {
		variant *v = &V[NV++];
		v->proc = proc;
		v->nprefix = np;
		v->prefix[0] = p0;
		v->prefix[1] = p1;
		v->claim = claim;
		v->trail = t;
		v->cred = cred;
	}
}

static void build_variants(void)
{
	static const uint32_t huge[] = {0xFFFFFFFFu, 0x7FFFFFFFu, 0x40000001u, 0x80000000u,
	                                0x10000000u};
	NV = 0;
	for (size_t i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		uint32_t c = huge[i];
		add(P_STR, 0, 0, 0, c, false);
		add(P_OPQ, 0, 0, 0, c, false);
		add(P_ARR, 0, 0, 0, c, false);
		add(P_ARRS, 0, 0, 0, c, false);     /* the pair count */
		add(P_ARRS, 1, 1, 0, c, false);     /* one pair: its string's length */
		add(P_TREE, 0, 0, 0, c, false);     /* the kids count */
		add(P_TREE, 1, 1, 0, c, false);     /* one kid: its kids count */
		add(P_LIST, 1, 1, 0, c, false);     /* a node's next flag (not a bool) */
		add(P_UNION, 0, 0, 0, c, false);    /* the discriminant: no arm, void default... */
		add(P_STRU, 0, 0, 0, c, false);
		add(P_OPQU, 0, 0, 0, c, false);
		add(P_ARRU, 0, 0, 0, c, false);
		add(P_BIG, 0, 0, 0, c, false);
		add(P_ECHO, 0, 0, 0, c, false);
		add(P_NULL, 0, 0, 0, c, true);      /* AUTH_SYS body length */
	}
	/* max + 1 of the bounded ones */
	add(P_STR, 0, 0, 0, 1025, false);
	add(P_OPQ, 0, 0, 0, 65537, false);
	add(P_ARR, 0, 0, 0, 1001, false);
	add(P_ARRS, 0, 0, 0, 1001, false);
	add(P_ARRS, 1, 1, 0, 65, false);
	add(P_NULL, 0, 0, 0, 401, true);
}

/* What the server must answer for v. The union's discriminant picks the void default unless
 * it is 1, so a union "claim" is trailing garbage when bytes follow and a valid call when
 * none do: both are checked. */
static int expected(const variant *v)
{
	if (v->cred)
		return DEN_AUTH_BADCRED;
	if (v->proc == P_UNION && v->claim != 1 && v->trail == 0)
		return ACC_SUCCESS;
	return ACC_GARBAGE_ARGS;
}

static size_t build(unsigned char *m, uint32_t xid, const variant *v)
{
	unsigned char args[64];
	size_t n = 0;

	if (v->cred) {
		/* credential: flavor AUTH_SYS whose body length is the claim, then trail bytes */
		size_t len = 0;
		put32(m + len, xid); len += 4;
		put32(m + len, 0); len += 4;
		put32(m + len, 2); len += 4;
		put32(m + len, SEC_PROG); len += 4;
		put32(m + len, 1); len += 4;
		put32(m + len, v->proc); len += 4;
		put32(m + len, 1); len += 4;
		put32(m + len, v->claim); len += 4;
		memset(m + len, 0x41, v->trail);
		return len + v->trail;
	}
	for (int i = 0; i < v->nprefix; i++) {
		put32(args + n, v->prefix[i]);
		n += 4;
	}
	put32(args + n, v->claim);
	n += 4;
	memset(args + n, 0x41, v->trail);
	n += v->trail;
	return sec_call(m, xid, v->proc, args, n);
}

static void check_reply(const unsigned char *r, ssize_t n, uint32_t xid, const variant *v)
{
	uint32_t rx = 0;
	int k = sec_reply_kind(r, (size_t)n, &rx, NULL, NULL);
	if (k != expected(v) || rx != xid)
		fail_msg("proc %u claim 0x%08x trail %u cred %d: reply kind %d xid %u (want %d, %u)",
		         v->proc, v->claim, v->trail, v->cred, k, rx, expected(v), xid);
}

static void warm_up(void)
{
	/* buffers the server keeps (per-thread receive buffer, reply buffer) exist before the
	 * first measurement */
	for (int i = 0; i < 100; i++) {
		assert_int_equal(sec_null_call(S.uri[0], 2000), RC_OK);
		assert_int_equal(sec_null_call(S.uri[1], 2000), RC_OK);
	}
}

/* UDP: windows of 32 datagrams, every reply read back. */
static void attack_udp(const char *uri, unsigned count, uint32_t xid0)
{
	int fd = sec_udp(uri);
	unsigned char m[256], r[256];
	unsigned sent = 0;

	assert_true(fd >= 0);
	while (sent < count) {
		unsigned w = count - sent < 32 ? count - sent : 32;
		for (unsigned i = 0; i < w; i++) {
			const variant *v = &V[(sent + i) % NV];
			size_t len = build(m, xid0 + sent + i, v);
			assert_int_equal(send(fd, m, len, 0), (ssize_t)len);
		}
		for (unsigned i = 0; i < w; i++) {
			ssize_t n = sec_recv_dgram(fd, r, sizeof(r), 2000);
			uint32_t xid;
			if (n < 0)
				fail_msg("no reply to datagram %u", sent + i);
			/* replies may come back out of order with worker threads */
			xid = get32(r);
			assert_true(xid >= xid0 + sent && xid < xid0 + sent + w);
			check_reply(r, n, xid, &V[(xid - xid0) % NV]);
		}
		sent += w;
	}
	close(fd);
}

/* TCP: batches of 64 pipelined records in one send; a fresh connection every 5,000. */
static void attack_tcp(const char *uri, unsigned count, uint32_t xid0)
{
	unsigned char *batch = malloc(64 * 260), r[256]; /* per call: attackers run in threads */
	unsigned sent = 0;
	int fd = -1;

	assert_non_null(batch);

	while (sent < count) {
		unsigned w = count - sent < 64 ? count - sent : 64;
		size_t blen = 0;
		if (sent % 5000 == 0) {
			if (fd >= 0)
				close(fd);
			fd = sec_tcp(uri);
			assert_true(fd >= 0);
		}
		for (unsigned i = 0; i < w; i++) {
			size_t len = build(batch + blen + 4, xid0 + sent + i, &V[(sent + i) % NV]);
			put32(batch + blen, (uint32_t)len | 0x80000000u);
			blen += 4 + len;
		}
		assert_true(sec_send_all(fd, batch, blen));
		bool seen[64] = {false};
		for (unsigned i = 0; i < w; i++) {
			ssize_t n = sec_recv_record(fd, r, sizeof(r), 2000);
			uint32_t xid;
			if (n < 0)
				fail_msg("no reply to record %u (%zd)", sent + i, n);
			/* with worker threads, the calls of one connection run in parallel and their
			 * replies may come back in any order: each one once */
			xid = get32(r);
			assert_true(xid >= xid0 + sent && xid < xid0 + sent + w);
			assert_false(seen[xid - xid0 - sent]);
			seen[xid - xid0 - sent] = true;
			check_reply(r, n, xid, &V[(xid - xid0) % NV]);
		}
		sent += w;
	}
	close(fd);
	free(batch);
}

static void rpcbomb_100k_udp_tcp(void **state)
{
	long rss0, rss1, live0, live1;
	unsigned calls0 = atomic_load(&sec_calls);
	rc_server_stats st0, st1;
	(void)state;
	build_variants();
	warm_up();
	rss0 = sec_rss_kib(0);
	live0 = atomic_load(&sec_alloc_live);
	rc_server_get_stats(S.srv, &st0);
	sec_alloc_reset();
	attack_udp(S.uri[0], VOLUME / 2, 1000000);
	attack_tcp(S.uri[1], VOLUME / 2, 2000000);
	usleep(50000); /* the server closes the last connection */
	rss1 = sec_rss_kib(0);
	live1 = atomic_load(&sec_alloc_live);
	rc_server_get_stats(S.srv, &st1);
	print_message("%u variants, %u messages: RSS %ld -> %ld KiB, largest allocation %zu bytes, "
	              "live blocks %ld -> %ld (%llu calls that ran remembered by the duplicate "
	              "request cache)\n", (unsigned)NV, VOLUME, rss0, rss1,
	              (size_t)atomic_load(&sec_alloc_max), live0, live1,
	              (unsigned long long)(st1.drc_entries - st0.drc_entries));
	/* the cache keeps one block per UDP call that ran (small replies), none for the rest */
	live1 -= (long)(st1.drc_entries - st0.drc_entries);
	assert_true(rss1 - rss0 < 8 * 1024 + sec_rss_slack_kib());
	/* no claimed size was ever asked of the allocator (the largest legitimate buffers are the
	 * 64 KiB receive buffers) */
	assert_true(atomic_load(&sec_alloc_max) <= 256 * 1024);
	/* nothing left behind but what the server keeps between calls */
	assert_true(live1 - live0 <= 8);
	/* only the union calls that were valid ran a routine */
	{
		unsigned ran = atomic_load(&sec_calls) - calls0, want = 0;
		for (unsigned i = 0; i < VOLUME / 2; i++)
			want += 2 * (expected(&V[i % NV]) == ACC_SUCCESS);
		assert_int_equal(ran, want);
	}
	assert_int_equal(sec_null_call(S.uri[0], 2000), RC_OK);
	assert_int_equal(sec_null_call(S.uri[1], 2000), RC_OK);
}

/* The same with four worker threads sharing the sockets (20,000 messages a transport), and
 * several attackers at once. */
typedef struct { const char *uri; bool tcp; uint32_t xid0; unsigned count; } attacker;
static void *attack_thread(void *p)
{
	attacker *a = p;
	if (a->tcp)
		attack_tcp(a->uri, a->count, a->xid0);
	else
		attack_udp(a->uri, a->count, a->xid0);
	return NULL;
}

/* Four attackers at once, two on each transport of w. */
static void attack4(const sec_server *w, unsigned count, uint32_t xid0)
{
	pthread_t t[4];
	attacker a[4];
	for (int i = 0; i < 4; i++) {
		a[i] = (attacker){w->uri[i % 2], i % 2 == 1, xid0 + (uint32_t)i * 100000u, count};
		assert_int_equal(pthread_create(&t[i], NULL, attack_thread, &a[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
}

static void rpcbomb_with_workers(void **state)
{
	sec_server w;
	long rss0, rss1;
	(void)state;
	build_variants();
	assert_int_equal(sec_start(&w, uris, NULL, 4, 0), 0);
	/* a first round brings up the threads, their stacks and buffers */
	attack4(&w, 1000, 5000000u);
	rss0 = sec_rss_kib(0);
	attack4(&w, 20000, 3000000u);
	rss1 = sec_rss_kib(0);
	print_message("4 workers, 4 attackers, 80,000 messages: RSS %ld -> %ld KiB\n", rss0, rss1);
	assert_true(rss1 - rss0 < 8 * 1024 + sec_rss_slack_kib());
	assert_int_equal(sec_null_call(w.uri[0], 2000), RC_OK);
	assert_int_equal(sec_null_call(w.uri[1], 2000), RC_OK);
	sec_stop(&w);
}

/* CVE-2002-0391: 0x40000001 elements of 4 bytes (and of 256-byte C structs) wrap a 32-bit
 * count x size product; the count must be refused before any allocation. */
static void count_times_size_refused_before_allocating(void **state)
{
	static const uint32_t counts[] = {0x40000001u, 0x40000000u, 0x20000001u, 0x01000001u,
	                                  0xFFFFFFFFu};
	static const uint32_t procs[] = {P_ARRU, P_BIG, P_TREE, P_ARR, P_ARRS};
	unsigned char m[256], r[256], args[64];
	int fd = sec_tcp(S.uri[1]);
	uint32_t xid = 7000;
	(void)state;
	assert_true(fd >= 0);
	/* a first call sets the connection up (its record buffer) */
	assert_true(sec_send_record(fd, m, sec_call(m, xid, P_NULL, NULL, 0)));
	assert_true(sec_recv_record(fd, r, sizeof(r), 2000) > 0);
	for (size_t p = 0; p < sizeof(procs) / sizeof(procs[0]); p++) {
		for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
			for (uint32_t trail = 0; trail <= 32; trail += 4) {
				size_t len;
				ssize_t n;
				put32(args, counts[c]);
				memset(args + 4, 0, trail);
				len = sec_call(m, ++xid, procs[p], args, 4 + trail);
				sec_alloc_reset();
				assert_true(sec_send_record(fd, m, len));
				n = sec_recv_record(fd, r, sizeof(r), 2000);
				assert_true(n > 0);
				assert_int_equal(sec_reply_kind(r, (size_t)n, NULL, NULL, NULL),
				                 ACC_GARBAGE_ARGS);
				/* the server allocated nothing for it (its buffers already exist) */
				assert_true(atomic_load(&sec_alloc_max) < 4096);
			}
		}
	}
	close(fd);
}

/*
 * A count the record can hold (1,000,000 four-byte elements in a 4 MB record) but whose C size
 * is 256 MB: the server's allocation cap (max_alloc, 16 MiB) refuses it before calloc.
 */
static void count_within_record_over_alloc_cap(void **state)
{
	size_t count = 1000000, alen = 4 + count * 4, len;
	unsigned char *args = calloc(1, alen), *m = malloc(alen + 64), r[256];
	int fd = sec_tcp(S.uri[1]);
	ssize_t n;
	(void)state;
	assert_non_null(args);
	assert_non_null(m);
	put32(args, (uint32_t)count);
	len = sec_call(m, 4242, P_BIG, args, alen);
	sec_alloc_reset();
	assert_true(sec_send_record(fd, m, len));
	n = sec_recv_record(fd, r, sizeof(r), 5000);
	assert_true(n > 0);
	assert_int_equal(sec_reply_kind(r, (size_t)n, NULL, NULL, NULL), ACC_GARBAGE_ARGS);
	print_message("largest allocation while serving a 4 MB record: %zu bytes\n",
	              (size_t)atomic_load(&sec_alloc_max));
	/* the record buffer (about 4 MiB) was allocated; the 256 MB of structs never were */
	assert_true(atomic_load(&sec_alloc_max) < ((size_t)16 << 20));
	/* the same count of plain ints (4 MB in C) is within the cap and is served */
	len = sec_call(m, 4243, P_ARRU, args, alen);
	assert_true(sec_send_record(fd, m, len));
	n = sec_recv_record(fd, r, sizeof(r), 5000);
	assert_true(n > 0);
	assert_int_equal(sec_reply_kind(r, (size_t)n, NULL, NULL, NULL), ACC_SUCCESS);
	assert_int_equal(get32(r + 24), count);
	close(fd);
	free(args);
	free(m);
	assert_int_equal(sec_null_call(S.uri[1], 2000), RC_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rpcbomb_100k_udp_tcp),
		cmocka_unit_test(rpcbomb_with_workers),
		cmocka_unit_test(count_times_size_refused_before_allocating),
		cmocka_unit_test(count_within_record_over_alloc_cap),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

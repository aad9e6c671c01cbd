/*
 * Attack class 7: deep recursion. Arguments nested a million levels deep -- a linked list
 * (struct node { node *next; int v; }), a tree (struct tree { tree kids<>; int v; }) and a
 * union whose arm points at itself -- cost 4 to 8 bytes a level on the wire. The XDR layer's
 * depth cap (RC_XDR_DEFAULT_MAX_DEPTH, 1000) must stop the decoder: the server answers
 * GARBAGE_ARGS and keeps serving. The server thread runs on a deliberately small stack
 * (STACK_KIB), so an unbounded recursion would crash the test rather than pass by luck.
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

#if defined(__SANITIZE_ADDRESS__)
#define STACK_KIB 2048 /* AddressSanitizer's frames are several times larger */
#elif defined(__SANITIZE_THREAD__)
#define STACK_KIB 4096 /* and ThreadSanitizer's larger still */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STACK_KIB 2048
#endif
#endif
#ifndef STACK_KIB
#define STACK_KIB 512
#endif

static const char *const uris[] = {"udp://127.0.0.1:0", "tcp://127.0.0.1:0", NULL};
static sec_server S;

static int setup(void **st)
{
	rc_server_limits lim = {0};
	(void)st;
	lim.max_record = 16u << 20; /* let a million levels arrive whole */
	return sec_start(&S, uris, &lim, 1, STACK_KIB);
}

static int teardown(void **st)
{
	(void)st;
	sec_stop(&S);
	return 0;
}

/* Arguments `levels` deep of kind proc (P_LIST, P_TREE, P_UNION), complete (every level closed
 * and every int present). Returns the malloc'd bytes and their length. */
static unsigned char *nested(uint32_t proc, size_t levels, size_t *len)
{
	size_t n = 0, cap = levels * 8 + 64;
	unsigned char *a = malloc(cap);
	assert_non_null(a);
	switch (proc) {
	case P_LIST: /* present, [node: present, [...], v] ... absent, v * levels */
		for (size_t i = 0; i < levels; i++, n += 4)
			put32(a + n, 1);
		put32(a + n, 0), n += 4;
		for (size_t i = 0; i < levels; i++, n += 4)
			put32(a + n, (uint32_t)i);
		break;
	case P_TREE: /* one kid a level, then no kids, then v for each of levels+1 nodes */
		for (size_t i = 0; i < levels; i++, n += 4)
			put32(a + n, 1);
		put32(a + n, 0), n += 4;
		for (size_t i = 0; i <= levels; i++, n += 4)
			put32(a + n, (uint32_t)i);
		break;
	default: /* P_UNION: (d = 1, present) a level, then d = 0 */
		for (size_t i = 0; i < levels; i++, n += 8) {
			put32(a + n, 1);
			put32(a + n + 4, 1);
		}
		put32(a + n, 0), n += 4;
		break;
	}
	*len = n;
	return a;
}

/* Call proc with `levels` of nesting over TCP; the reply's kind (and *count for SUCCESS). */
static int call_tcp(int fd, uint32_t proc, size_t levels, uint32_t *count)
{
	size_t alen, len;
	unsigned char *a = nested(proc, levels, &alen), *m = malloc(alen + 64), r[64];
	ssize_t n;
	int kind;
	assert_non_null(m);
	len = sec_call(m, (uint32_t)levels, proc, a, alen);
	assert_true(sec_send_record(fd, m, len));
	n = sec_recv_record(fd, r, sizeof(r), 10000);
	if (n < 0)
		fail_msg("no reply to %zu levels of procedure %u (%zd)", levels, proc, n);
	kind = sec_reply_kind(r, (size_t)n, NULL, NULL, NULL);
	if (kind == ACC_SUCCESS && count)
		*count = get32(r + 24);
	free(a);
	free(m);
	return kind;
}

static int call_udp(int fd, uint32_t proc, size_t levels)
{
	size_t alen, len;
	unsigned char *a = nested(proc, levels, &alen), m[65536], r[64];
	ssize_t n;
	len = sec_call(m, (uint32_t)levels, proc, a, alen);
	free(a);
	assert_true(len <= 65507);
	assert_int_equal(send(fd, m, len, 0), (ssize_t)len);
	n = sec_recv_dgram(fd, r, sizeof(r), 5000);
	assert_true(n > 0);
	return sec_reply_kind(r, (size_t)n, NULL, NULL, NULL);
}

static void deep(uint32_t proc)
{
	int fd = sec_tcp(S.uri[1]), ufd = sec_udp(S.uri[0]);
	uint32_t count = 0;
	unsigned calls0 = atomic_load(&sec_calls);
	/* a million levels: refused, no crash */
	assert_int_equal(call_tcp(fd, proc, 1000000, NULL), ACC_GARBAGE_ARGS);
	/* what fits a datagram: 8,000 levels */
	assert_int_equal(call_udp(ufd, proc, 8000), ACC_GARBAGE_ARGS);
	assert_int_equal(atomic_load(&sec_calls), calls0);
	/* the cap is exactly RC_XDR_DEFAULT_MAX_DEPTH levels */
	assert_int_equal(call_tcp(fd, proc, RC_XDR_DEFAULT_MAX_DEPTH + 1, NULL), ACC_GARBAGE_ARGS);
	assert_int_equal(call_tcp(fd, proc, RC_XDR_DEFAULT_MAX_DEPTH, &count), ACC_SUCCESS);
	assert_int_equal(count, proc == P_TREE ? RC_XDR_DEFAULT_MAX_DEPTH + 1
	                                       : RC_XDR_DEFAULT_MAX_DEPTH);
	assert_int_equal(call_udp(ufd, proc, 900), ACC_SUCCESS);
	/* the same connection goes on serving */
	assert_int_equal(call_tcp(fd, proc, 10, &count), ACC_SUCCESS);
	close(fd);
	close(ufd);
	assert_int_equal(sec_null_call(S.uri[0], 2000), RC_OK);
	assert_int_equal(sec_null_call(S.uri[1], 2000), RC_OK);
}

static void deep_list(void **state) { (void)state; deep(P_LIST); }
static void deep_tree(void **state) { (void)state; deep(P_TREE); }
static void deep_union(void **state) { (void)state; deep(P_UNION); }

/* Many deep calls in a row: the stack and memory stay where they were. */
static void deep_volume(void **state)
{
	static const uint32_t procs[3] = {P_LIST, P_TREE, P_UNION};
	unsigned char *msg[3], r[64];
	size_t mlen[3];
	int fd = sec_tcp(S.uri[1]);
	long rss0, rss1;
	(void)state;
	/* the three messages are built once: the attacker itself allocates nothing in the loop */
	for (int k = 0; k < 3; k++) {
		size_t alen;
		unsigned char *a = nested(procs[k], 100000, &alen);
		msg[k] = malloc(alen + 64);
		assert_non_null(msg[k]);
		mlen[k] = sec_call(msg[k], (uint32_t)k, procs[k], a, alen);
		free(a);
	}
	assert_int_equal(call_tcp(fd, P_LIST, 100000, NULL), ACC_GARBAGE_ARGS);
	rss0 = sec_rss_kib(0);
	for (int i = 0; i < 200; i++) {
		ssize_t n;
		assert_true(sec_send_record(fd, msg[i % 3], mlen[i % 3]));
		n = sec_recv_record(fd, r, sizeof(r), 10000);
		assert_true(n > 0);
		assert_int_equal(sec_reply_kind(r, (size_t)n, NULL, NULL, NULL), ACC_GARBAGE_ARGS);
	}
	rss1 = sec_rss_kib(0);
	for (int k = 0; k < 3; k++)
		free(msg[k]);
	print_message("200 calls 100,000 levels deep: RSS %ld -> %ld KiB\n", rss0, rss1);
	assert_true(rss1 - rss0 < 8 * 1024 + sec_rss_slack_kib());
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(deep_list),
		cmocka_unit_test(deep_tree),
		cmocka_unit_test(deep_union),
		cmocka_unit_test(deep_volume),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

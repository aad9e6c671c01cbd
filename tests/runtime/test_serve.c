/*
 * test_serve -- the server's serve step on its own: request bytes in, reply bytes out, no
 * sockets (rc__server_handle_direct, the entry synchronous transports and the fuzzers use).
 * A table of named requests, each with the reply it must get: accepted with a status (and the
 * version range of PROG_MISMATCH), denied (RPC_MISMATCH with its range, AUTH_ERROR with its
 * auth_stat), or no reply at all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime/server/server_internal.h"
#include "rt_fixture.h"

enum { NONE = -1 };

typedef struct scase {
	const char *name;
	uint32_t req[32]; /* words of the request, xid first */
	size_t nreq;
	int reply_stat;   /* NONE: no reply; else 0 accepted, 1 denied */
	uint32_t code;    /* accept_stat, or reject_stat */
	uint32_t w1, w2;  /* PROG_MISMATCH / RPC_MISMATCH range, AUTH_ERROR's auth_stat (w1) */
} scase;

#define P RT_PROG
static const scase cases[] = {
	{"null call", {7, 0, 2, P, 1, 0, 0, 0, 0, 0}, 10, 0, 0, 0, 0},
	{"add", {8, 0, 2, P, 1, 2, 0, 0, 0, 0, 0, 5}, 12, 0, 0, 0, 0},
	{"rpc version 3", {9, 0, 3, P, 1, 0, 0, 0, 0, 0}, 10, 1, 0, 2, 2},
	{"unknown program", {10, 0, 2, P + 1, 1, 0, 0, 0, 0, 0}, 10, 0, 1, 0, 0},
	{"unknown version", {11, 0, 2, P, 7, 0, 0, 0, 0, 0}, 10, 0, 2, 1, 2},
	{"unknown procedure", {12, 0, 2, P, 1, 99, 0, 0, 0, 0}, 10, 0, 3, 0, 0},
	{"garbage arguments", {13, 0, 2, P, 1, 2, 0, 0, 0, 0, 5}, 11, 0, 4, 0, 0},
	{"routine failed", {14, 0, 2, P, 1, 4, 0, 0, 0, 0}, 10, 0, 5, 0, 0},
	{"credential over 400 bytes", {15, 0, 2, P, 1, 0, 0, 401, 0, 0}, 10, 1, 1, 1, 0},
	{"unknown credential flavor", {16, 0, 2, P, 1, 0, 77, 0, 0, 0}, 10, 1, 1, 2, 0},
	{"auth_sys", {17, 0, 2, P, 1, 0, 1, 20, 5, 0, 0, 0, 0, 0, 0}, 15, 0, 0, 0, 0},
	{"auth_sys body short", {18, 0, 2, P, 1, 0, 1, 8, 5, 0, 0, 0}, 12, 1, 1, 1, 0},
	{"a reply, not a call", {19, 1, 0, 0, 0, 0}, 6, NONE, 0, 0, 0},
	{"header cut after the version", {20, 0, 2}, 3, 1, 1, 1, 0}, /* AUTH_BADCRED */
	{"header cut before the version", {21, 0}, 2, NONE, 0, 0, 0},
	{"empty", {0}, 0, NONE, 0, 0, 0},
	/* RFC 9289 probes (AUTH_TLS = 7), served in-process: no TLS here, answered before the
	 * program lookup, the NULL procedure only, no credential body */
	{"AUTH_TLS probe without TLS", {22, 0, 2, P, 1, 0, 7, 0, 0, 0}, 10, 0, 0, 0, 0},
	{"AUTH_TLS probe of an unknown program", {23, 0, 2, P + 1, 1, 0, 7, 0, 0, 0}, 10, 0, 0, 0, 0},
	{"AUTH_TLS on a procedure other than NULL", {24, 0, 2, P, 1, 2, 7, 0, 0, 0}, 10, 1, 1, 1, 0},
	{"AUTH_TLS with a credential body", {25, 0, 2, P, 1, 0, 7, 4, 9, 0, 0}, 11, 1, 1, 1, 0},
	/* version 2 requires TLS (rc_server_set_tls_required): plaintext gets AUTH_TOOWEAK */
	{"TLS-required version in plaintext", {26, 0, 2, P, 2, 0, 0, 0, 0, 0}, 10, 1, 1, 5, 0},
	/* void arguments are not decoded, but what follows the header must still be nothing */
	{"void argument followed by a word", {27, 0, 2, P, 1, 0, 0, 0, 0, 0, 5}, 11, 0, 4, 0, 0},
	{"auth_sys, void argument followed by a word",
	 {28, 0, 2, P, 1, 5, 1, 20, 5, 0, 0, 0, 0, 0, 0, 9}, 16, 0, 4, 0, 0},
	{"void argument, a result (who)", {29, 0, 2, P, 1, 5, 0, 0, 0, 0}, 10, 0, 0, 0, 0},
};
#undef P

typedef struct got {
	bool called;
	unsigned char buf[512];
	size_t len;
} got;

static void on_reply(void *ctx, unsigned char *msg, size_t len)
{
	got *g = ctx;
	assert_false(g->called); /* at most once */
	g->called = true;
	assert_true(len <= sizeof(g->buf));
	memcpy(g->buf, msg, len);
	g->len = len;
}

static uint32_t word(const got *g, size_t i)
{
	const unsigned char *p = g->buf + 4 * i;
	assert_true(4 * i + 4 <= g->len);
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void serve_table(void **state)
{
	rc_server *srv;
	(void)state;
	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_register(srv, &rt_prog1, NULL), RC_OK);
	assert_int_equal(rc_server_register(srv, &rt_prog2, NULL), RC_OK);
	assert_int_equal(rc_server_set_tls_required(srv, RT_PROG, 2, true), RC_OK);
	assert_int_equal(rc_server_set_tls_required(srv, RT_PROG, 9, true), RC_PROGUNAVAIL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const scase *c = &cases[i];
		unsigned char req[128];
		got g = {0};
		for (size_t k = 0; k < c->nreq; k++) {
			uint32_t v = c->req[k];
			req[4 * k] = (unsigned char)(v >> 24);
			req[4 * k + 1] = (unsigned char)(v >> 16);
			req[4 * k + 2] = (unsigned char)(v >> 8);
			req[4 * k + 3] = (unsigned char)v;
		}
		print_message("case: %s\n", c->name);
		rc__server_handle_direct(srv, req, 4 * c->nreq, on_reply, &g);
		if (c->reply_stat == NONE) {
			assert_false(g.called);
			continue;
		}
		assert_true(g.called);
		assert_int_equal(word(&g, 0), c->req[0]); /* the xid */
		assert_int_equal(word(&g, 1), 1);         /* REPLY */
		assert_int_equal(word(&g, 2), (uint32_t)c->reply_stat);
		if (c->reply_stat == 0) {
			assert_int_equal(word(&g, 3), 0); /* verifier AUTH_NONE, empty */
			assert_int_equal(word(&g, 4), 0);
			assert_int_equal(word(&g, 5), c->code);
			if (c->code == 2) { /* PROG_MISMATCH */
				assert_int_equal(word(&g, 6), c->w1);
				assert_int_equal(word(&g, 7), c->w2);
			}
			if (i == 0) /* a void result: the 24-byte reply header alone */
				assert_int_equal(g.len, 24);
			if (i == 1) /* add 5: the running total, a hyper */
				assert_int_equal(word(&g, 7), (uint32_t)rt_total_now());
			if (c->req[0] == 29) /* "none": a string of 4 bytes after the header */
				assert_true(g.len == 32 && word(&g, 6) == 4 && memcmp(g.buf + 28, "none", 4) == 0);
		} else {
			assert_int_equal(word(&g, 3), c->code);
			assert_int_equal(word(&g, 4), c->w1);
			if (c->code == 0)
				assert_int_equal(word(&g, 5), c->w2);
		}
	}
	rc_server_destroy(srv);
}

int main(void)
{
	(void)rt_start; /* the fixture's server thread is not needed here */
	(void)rt_stop;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(serve_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Memory streams and the stream-level functions (xdr/xdr_mem.c): create, getpos, setpos,
 * remaining, inline, rc_xdr_free, and the decode limits of rc_xdr_set_limits (allocation
 * budget, nesting depth).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <remotecall/xdr.h>

#include "xdr_testutil.h"

static void test_create_and_positions(void **state)
{
	unsigned char buf[32];
	int32_t v = 1;
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_int_equal(x.x_op, RC_XDR_ENCODE);
	assert_int_equal(rc_xdr_getpos(&x), 0);
	assert_int_equal(rc_xdr_remaining(&x), 32);
	for (int i = 0; i < 8; i++) {
		assert_true(rc_xdr_int(&x, &v));
		assert_int_equal(rc_xdr_getpos(&x), 4 * (size_t)(i + 1));
		assert_int_equal(rc_xdr_remaining(&x), 32 - 4 * (size_t)(i + 1));
	}
	assert_false(rc_xdr_int(&x, &v));
	assert_int_equal(rc_xdr_getpos(&x), 32);
	assert_int_equal(rc_xdr_remaining(&x), 0);

	rc_xdrmem_create(&x, buf, 10, RC_XDR_DECODE);
	assert_int_equal(x.x_op, RC_XDR_DECODE);
	assert_int_equal(rc_xdr_remaining(&x), 10);
	assert_true(rc_xdr_int(&x, &v) && rc_xdr_int(&x, &v));
	assert_false(rc_xdr_int(&x, &v)); /* 2 bytes left */
	assert_int_equal(rc_xdr_getpos(&x), 8);
	assert_int_equal(rc_xdr_remaining(&x), 2);

	/* a free stream needs no buffer */
	rc_xdrmem_create(&x, NULL, 0, RC_XDR_FREE);
	assert_int_equal(rc_xdr_getpos(&x), 0);
	assert_int_equal(rc_xdr_remaining(&x), 0);
	assert_true(rc_xdr_int(&x, &v));
}

static void test_setpos(void **state)
{
	unsigned char buf[16];
	int32_t a = 1, b = 2, c = 3, o = 0;
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_int(&x, &a) && rc_xdr_int(&x, &b));
	/* back-patch the first word */
	assert_true(rc_xdr_setpos(&x, 0));
	assert_int_equal(rc_xdr_getpos(&x), 0);
	assert_true(rc_xdr_int(&x, &c));
	assert_true(rc_xdr_setpos(&x, 8));
	assert_int_equal(rc_xdr_remaining(&x), 8);
	/* to the very end is allowed, one past is not (and changes nothing) */
	assert_true(rc_xdr_setpos(&x, 16));
	assert_int_equal(rc_xdr_remaining(&x), 0);
	assert_false(rc_xdr_setpos(&x, 17));
	assert_false(rc_xdr_setpos(&x, SIZE_MAX));
	assert_int_equal(rc_xdr_getpos(&x), 16);

	rc_xdrmem_create(&x, buf, 8, RC_XDR_DECODE);
	assert_true(rc_xdr_setpos(&x, 4));
	assert_true(rc_xdr_int(&x, &o));
	assert_int_equal(o, 2);
	assert_true(rc_xdr_setpos(&x, 0));
	assert_true(rc_xdr_int(&x, &o));
	assert_int_equal(o, 3);
	assert_false(rc_xdr_setpos(&x, 9));
	assert_int_equal(rc_xdr_getpos(&x), 4);
	/* an unaligned position works (the caller's business) */
	assert_true(rc_xdr_setpos(&x, 3));
	assert_int_equal(rc_xdr_remaining(&x), 5);
}

static bool sink_write(void *ctx, const void *buf, size_t len)
{
	return tu_sink_write(ctx, buf, len);
}

static void test_setpos_record_stream_refused(void **state)
{
	unsigned char buf[64];
	struct tu_sink sink = {0};
	int32_t v = 5;
	rc_xdr x;
	(void)state;
	assert_int_equal(rc_xdrrec_create(&x, buf, sizeof(buf), sink_write, &sink), RC_OK);
	assert_true(rc_xdr_int(&x, &v));
	assert_false(rc_xdr_setpos(&x, 0));
	assert_int_equal(rc_xdr_getpos(&x), 4);
	tu_sink_free(&sink);
}

static void test_inline(void **state)
{
	unsigned char buf[24];
	unsigned char *p;
	int32_t v = 0;
	rc_xdr x;
	(void)state;
	memset(buf, 0, sizeof(buf));
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_int(&x, &v));
	p = rc_xdr_inline(&x, 8);
	assert_ptr_equal(p, buf + 4);
	assert_int_equal(rc_xdr_getpos(&x), 12);
	memcpy(p, "\x00\x00\x00\x07\x00\x00\x00\x08", 8);
	/* len is rounded up to the XDR unit */
	p = rc_xdr_inline(&x, 5);
	assert_ptr_equal(p, buf + 12);
	assert_int_equal(rc_xdr_getpos(&x), 20);
	/* 4 bytes left: 5 do not fit and the stream does not move */
	assert_null(rc_xdr_inline(&x, 5));
	assert_null(rc_xdr_inline(&x, SIZE_MAX));
	assert_null(rc_xdr_inline(&x, SIZE_MAX - 2));
	assert_int_equal(rc_xdr_getpos(&x), 20);
	assert_ptr_equal(rc_xdr_inline(&x, 0), buf + 20);
	assert_int_equal(rc_xdr_getpos(&x), 20);
	assert_ptr_equal(rc_xdr_inline(&x, 4), buf + 20);
	assert_null(rc_xdr_inline(&x, 1));

	/* decode sees what was written through the inline pointer */
	rc_xdrmem_create(&x, buf, 12, RC_XDR_DECODE);
	p = rc_xdr_inline(&x, 4);
	assert_ptr_equal(p, buf);
	assert_true(rc_xdr_int(&x, &v));
	assert_int_equal(v, 7);
	assert_true(rc_xdr_int(&x, &v));
	assert_int_equal(v, 8);
	assert_null(rc_xdr_inline(&x, 1));

	/* a free stream has no bytes */
	rc_xdrmem_create(&x, NULL, 0, RC_XDR_FREE);
	assert_null(rc_xdr_inline(&x, 0));
}

static void test_inline_guarded_end(void **state)
{
	/* inline must not promise bytes beyond the buffer */
	unsigned char *g = tu_guard_alloc(6);
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, g, 6, RC_XDR_DECODE);
	assert_null(rc_xdr_inline(&x, 5)); /* 8 after rounding */
	assert_non_null(rc_xdr_inline(&x, 4));
	assert_null(rc_xdr_inline(&x, 1));
	assert_int_equal(rc_xdr_remaining(&x), 2);
	tu_guard_free(g, 6);
}

/* ---- limits ------------------------------------------------------------------------------ */

static void test_alloc_budget_single(void **state)
{
	unsigned char buf[128];
	char data[100];
	char *p = data, *out = NULL;
	uint32_t len = 100, olen = 0;
	rc_xdr x;
	(void)state;
	memset(data, 'q', sizeof(data));
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_bytes(&x, &p, &len, 1000));
	/* one byte under the size: refused before allocating */
	tu_alloc_reset();
	rc_xdrmem_create(&x, buf, 104, RC_XDR_DECODE);
	rc_xdr_set_limits(&x, 99, 0);
	assert_false(rc_xdr_bytes(&x, &out, &olen, 1000));
	assert_null(out);
	assert_int_equal(tu_alloc.calls, 0);
	/* exactly the size: fine */
	rc_xdrmem_create(&x, buf, 104, RC_XDR_DECODE);
	rc_xdr_set_limits(&x, 100, 0);
	assert_true(rc_xdr_bytes(&x, &out, &olen, 1000));
	assert_int_equal(olen, 100);
	free(out);
	out = NULL;
	/* a caller's buffer costs nothing */
	{
		char mine[100];
		char *m = mine;
		rc_xdrmem_create(&x, buf, 104, RC_XDR_DECODE);
		rc_xdr_set_limits(&x, 1, 0);
		assert_true(rc_xdr_bytes(&x, &m, &olen, 100));
		assert_ptr_equal(m, mine);
	}
}

static void test_alloc_budget_total(void **state)
{
	/* the budget covers the whole decode: 3 strings of 40 (+1 NUL each) under 100 */
	unsigned char buf[256];
	char s40[41];
	char *s = s40, *o[3] = {NULL, NULL, NULL};
	rc_xdr x;
	size_t len;
	(void)state;
	memset(s40, 'k', 40);
	s40[40] = '\0';
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	for (int i = 0; i < 3; i++)
		assert_true(rc_xdr_string(&x, &s, 100));
	len = rc_xdr_getpos(&x);
	tu_alloc_reset();
	rc_xdrmem_create(&x, buf, len, RC_XDR_DECODE);
	rc_xdr_set_limits(&x, 100, 0);
	assert_true(rc_xdr_string(&x, &o[0], 100));
	assert_true(rc_xdr_string(&x, &o[1], 100));
	assert_false(rc_xdr_string(&x, &o[2], 100)); /* 41 + 41 + 41 > 100 */
	assert_null(o[2]);
	assert_int_equal(tu_alloc.calls, 2);
	for (int i = 0; i < 3; i++)
		rc_xdr_free((rc_xdrproc)rc_xdr_wrapstring, &o[i]);
	assert_int_equal(tu_alloc.live, 0);

	/* 0 keeps the current values */
	rc_xdrmem_create(&x, buf, len, RC_XDR_DECODE);
	rc_xdr_set_limits(&x, 123, 7);
	rc_xdr_set_limits(&x, 0, 0);
	assert_int_equal(x.x_budget, 123);
	assert_int_equal(x.x_maxdepth, 7);
	/* defaults */
	rc_xdrmem_create(&x, buf, len, RC_XDR_DECODE);
	assert_int_equal(x.x_budget, RC_XDR_DEFAULT_ALLOC_LIMIT);
	assert_int_equal(x.x_maxdepth, RC_XDR_DEFAULT_MAX_DEPTH);
}

static void test_alloc_budget_array(void **state)
{
	/* 10 ints = 40 bytes of array; a 39-byte budget refuses it without allocating */
	int32_t v[10] = {0}, *p = v, *out = NULL;
	uint32_t n = 10, on = 0;
	unsigned char buf[64];
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_array(&x, &p, &n, 10, sizeof(int32_t), (rc_xdrproc)rc_xdr_int));
	tu_alloc_reset();
	rc_xdrmem_create(&x, buf, 44, RC_XDR_DECODE);
	rc_xdr_set_limits(&x, 39, 0);
	assert_false(rc_xdr_array(&x, &out, &on, 10, sizeof(int32_t), (rc_xdrproc)rc_xdr_int));
	assert_null(out);
	assert_int_equal(tu_alloc.calls, 0);
	rc_xdrmem_create(&x, buf, 44, RC_XDR_DECODE);
	rc_xdr_set_limits(&x, 40, 0);
	assert_true(rc_xdr_array(&x, &out, &on, 10, sizeof(int32_t), (rc_xdrproc)rc_xdr_int));
	assert_int_equal(on, 10);
	free(out);
}

struct lnode {
	int32_t v;
	struct lnode *next;
};

static bool xdr_lnode(rc_xdr *x, struct lnode *n)
{
	return rc_xdr_int(x, &n->v) &&
	       rc_xdr_pointer(x, &n->next, sizeof(struct lnode), (rc_xdrproc)xdr_lnode);
}

/* Wire form of a list of n nodes behind an optional pointer. */
static unsigned char *list_wire(size_t n, size_t *len)
{
	unsigned char *w = malloc(8 * n + 4), *p = w;
	for (size_t i = 0; i < n; i++) {
		memcpy(p, "\0\0\0\1", 4);
		p[4] = p[5] = 0;
		p[6] = (unsigned char)(i >> 8);
		p[7] = (unsigned char)i;
		p += 8;
	}
	memcpy(p, "\0\0\0\0", 4);
	*len = 8 * n + 4;
	return w;
}

static bool decode_list(const unsigned char *w, size_t len, uint32_t depth,
                        struct lnode **out)
{
	rc_xdr x;
	rc_xdrmem_create(&x, (void *)w, len, RC_XDR_DECODE);
	if (depth)
		rc_xdr_set_limits(&x, 0, depth);
	*out = NULL;
	return rc_xdr_pointer(&x, out, sizeof(struct lnode), (rc_xdrproc)xdr_lnode);
}

static void test_depth_limit(void **state)
{
	size_t len;
	unsigned char *w = list_wire(10, &len);
	struct lnode *out;
	(void)state;
	/* 10 nested objects fit a depth of 10, not of 9 */
	assert_true(decode_list(w, len, 10, &out));
	assert_int_equal(out->next->next->next->next->next->next->next->next->next->v, 9);
	rc_xdr_free((rc_xdrproc)xdr_lnode, out);
	free(out);
	tu_alloc_reset();
	assert_false(decode_list(w, len, 9, &out));
	assert_int_equal(tu_alloc.fresh, 9);
	rc_xdr_free((rc_xdrproc)xdr_lnode, out);
	free(out);
	assert_int_equal(tu_alloc.live, 0);
	free(w);

	/* the default: 1000 levels */
	w = list_wire(RC_XDR_DEFAULT_MAX_DEPTH, &len);
	assert_true(decode_list(w, len, 0, &out));
	rc_xdr_free((rc_xdrproc)xdr_lnode, out);
	free(out);
	free(w);
	w = list_wire(RC_XDR_DEFAULT_MAX_DEPTH + 1, &len);
	tu_alloc_reset();
	assert_false(decode_list(w, len, 0, &out));
	rc_xdr_free((rc_xdrproc)xdr_lnode, out);
	free(out);
	assert_int_equal(tu_alloc.live, 0);
	free(w);
}

static void test_depth_limit_encode(void **state)
{
	struct lnode nodes[12], *head = &nodes[0];
	unsigned char buf[256];
	rc_xdr x;
	(void)state;
	for (int i = 0; i < 12; i++) {
		nodes[i].v = i;
		nodes[i].next = i < 11 ? &nodes[i + 1] : NULL;
	}
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	rc_xdr_set_limits(&x, 0, 12);
	assert_true(rc_xdr_pointer(&x, &head, sizeof(struct lnode), (rc_xdrproc)xdr_lnode));
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	rc_xdr_set_limits(&x, 0, 11);
	assert_false(rc_xdr_pointer(&x, &head, sizeof(struct lnode), (rc_xdrproc)xdr_lnode));
	/* the depth counter unwinds: the same stream can code a shorter list afterwards */
	nodes[5].next = NULL;
	assert_true(rc_xdr_setpos(&x, 0));
	assert_true(rc_xdr_pointer(&x, &head, sizeof(struct lnode), (rc_xdrproc)xdr_lnode));
	assert_true(rc_xdr_pointer(&x, &head, sizeof(struct lnode), (rc_xdrproc)xdr_lnode));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_and_positions),
		cmocka_unit_test(test_setpos),
		cmocka_unit_test(test_setpos_record_stream_refused),
		cmocka_unit_test(test_inline),
		cmocka_unit_test(test_inline_guarded_end),
		cmocka_unit_test(test_alloc_budget_single),
		cmocka_unit_test(test_alloc_budget_total),
		cmocka_unit_test(test_alloc_budget_array),
		cmocka_unit_test(test_depth_limit),
		cmocka_unit_test(test_depth_limit_encode),
	};
	return cmocka_run_group_tests_name("xdr_mem", tests, NULL, NULL);
}

/*
 * Bad input: lengths and counts beyond what remains or beyond the declared maximum fail
 * before anything is allocated (the allocator is wrapped and counted); decoding never reads
 * past the end of its buffer (every input sits right before a PROT_NONE guard page, so an
 * overread faults even without a sanitizer); and a decode that fails at any point -- cut
 * short at every byte offset, corrupted at every byte, out of memory at every allocation, out
 * of budget, nested too deeply -- leaves an object that rc_xdr_free releases completely.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <remotecall/xdr.h>

#include "xdr_testutil.h"

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* ---- a structure that uses every kind of routine ---------------------------------------- */

struct inner {
	int32_t id;
	char *label;
	struct { uint32_t len; char *val; } blob;
};

static bool xdr_inner(rc_xdr *x, struct inner *in)
{
	return rc_xdr_int(x, &in->id) && rc_xdr_string(x, &in->label, 64) &&
	       rc_xdr_bytes(x, &in->blob.val, &in->blob.len, 64);
}

struct lnode {
	int32_t v;
	char *tag;
	struct lnode *next;
};

static bool xdr_lnode(rc_xdr *x, struct lnode *n)
{
	return rc_xdr_int(x, &n->v) && rc_xdr_wrapstring(x, &n->tag) &&
	       rc_xdr_pointer(x, &n->next, sizeof(struct lnode), (rc_xdrproc)xdr_lnode);
}

struct choice {
	int32_t kind;
	union {
		int64_t h;
		char *s;
		struct inner *p;
	} u;
};

static bool xdr_choice_s(rc_xdr *x, char **s)
{
	return rc_xdr_string(x, s, 32);
}
static bool xdr_choice_p(rc_xdr *x, struct inner **p)
{
	return rc_xdr_pointer(x, p, sizeof(struct inner), (rc_xdrproc)xdr_inner);
}
static const rc_xdr_discrim choice_arms[] = {
	{1, (rc_xdrproc)rc_xdr_hyper},
	{2, (rc_xdrproc)xdr_choice_s},
	{3, (rc_xdrproc)xdr_choice_p},
	{0, NULL},
};
static bool xdr_choice(rc_xdr *x, struct choice *c)
{
	return rc_xdr_union(x, &c->kind, &c->u, choice_arms, NULL);
}

struct all {
	int32_t i;
	uint32_t u;
	int64_t h;
	uint64_t uh;
	bool b;
	int32_t e;
	float f;
	double d;
	char c;
	unsigned char uc;
	int16_t s;
	uint16_t us;
	rc_quadruple q;
	char fixed[7];
	char *str;
	struct { uint32_t len; char *val; } bytes;
	struct { uint32_t len; int32_t *val; } ints;
	struct { uint32_t len; uint64_t *val; } uhs;
	struct { uint32_t len; double *val; } dbls;
	struct { uint32_t len; bool *val; } bools;
	struct { uint32_t len; float *val; } flts;
	struct { uint32_t len; struct inner *val; } inners;
	struct { uint32_t len; char **val; } strs;
	double vec[3];
	struct inner inl;
	struct lnode *list;
	struct choice ch[3];
	struct all *child;
};

static bool xdr_all(rc_xdr *x, struct all *a)
{
	return rc_xdr_int(x, &a->i) && rc_xdr_u_int(x, &a->u) && rc_xdr_hyper(x, &a->h) &&
	       rc_xdr_u_hyper(x, &a->uh) && rc_xdr_bool(x, &a->b) && rc_xdr_enum(x, &a->e) &&
	       rc_xdr_float(x, &a->f) && rc_xdr_double(x, &a->d) && rc_xdr_char(x, &a->c) &&
	       rc_xdr_u_char(x, &a->uc) && rc_xdr_short(x, &a->s) &&
	       rc_xdr_u_short(x, &a->us) && rc_xdr_quadruple(x, &a->q) &&
	       rc_xdr_opaque(x, a->fixed, sizeof(a->fixed)) &&
	       rc_xdr_string(x, &a->str, 100) &&
	       rc_xdr_bytes(x, &a->bytes.val, &a->bytes.len, 100) &&
	       rc_xdr_array(x, &a->ints.val, &a->ints.len, 100, 4, (rc_xdrproc)rc_xdr_int) &&
	       rc_xdr_array(x, &a->uhs.val, &a->uhs.len, 100, 8, (rc_xdrproc)rc_xdr_u_hyper) &&
	       rc_xdr_array(x, &a->dbls.val, &a->dbls.len, 100, 8, (rc_xdrproc)rc_xdr_double) &&
	       rc_xdr_array(x, &a->bools.val, &a->bools.len, 100, sizeof(bool),
	                    (rc_xdrproc)rc_xdr_bool) &&
	       rc_xdr_array(x, &a->flts.val, &a->flts.len, 100, 4, (rc_xdrproc)rc_xdr_float) &&
	       rc_xdr_array(x, &a->inners.val, &a->inners.len, 10, sizeof(struct inner),
	                    (rc_xdrproc)xdr_inner) &&
	       rc_xdr_array(x, &a->strs.val, &a->strs.len, 10, sizeof(char *),
	                    (rc_xdrproc)rc_xdr_wrapstring) &&
	       rc_xdr_vector(x, a->vec, 3, sizeof(double), (rc_xdrproc)rc_xdr_double) &&
	       xdr_inner(x, &a->inl) &&
	       rc_xdr_pointer(x, &a->list, sizeof(struct lnode), (rc_xdrproc)xdr_lnode) &&
	       rc_xdr_vector(x, a->ch, 3, sizeof(struct choice), (rc_xdrproc)xdr_choice) &&
	       rc_xdr_pointer(x, &a->child, sizeof(struct all), (rc_xdrproc)xdr_all);
}

static int32_t s_ints[5] = {1, -1, INT32_MIN, INT32_MAX, 0};
static uint64_t s_uhs[3] = {0, UINT64_MAX, 42};
static double s_dbls[2] = {-0.0, 1e300};
static bool s_bools[5] = {true, false, true, true, false};
static float s_flts[3] = {1.5f, -2.25f, 0};
static char *s_strs[4] = {"", "x", "yz", "a longer string"};
static struct inner s_inners[2] = {{7, "seven", {3, "abc"}}, {8, "", {0, NULL}}};
static struct inner s_pinner = {9, "nine", {5, "12345"}};
static struct lnode s_l3 = {3, "c", NULL}, s_l2 = {2, "bb", &s_l3}, s_l1 = {1, "a", &s_l2};
static struct all s_child, s_top;

static void make_all(struct all *a, bool with_child)
{
	memset(a, 0, sizeof(*a));
	a->i = -5;
	a->u = 0xfeedface;
	a->h = INT64_MIN;
	a->uh = UINT64_MAX - 1;
	a->b = true;
	a->e = 3;
	a->f = 3.25f;
	a->d = -1e-300;
	a->c = 'c';
	a->uc = 250;
	a->s = -300;
	a->us = 60000;
	memset(&a->q, 0x3c, sizeof(a->q));
	memcpy(a->fixed, "fixed!!", 7);
	a->str = "hello, world";
	a->bytes.len = 6;
	a->bytes.val = "\x00\x01\x02\x03\x04\x05";
	a->ints.len = 5;
	a->ints.val = s_ints;
	a->uhs.len = 3;
	a->uhs.val = s_uhs;
	a->dbls.len = 2;
	a->dbls.val = s_dbls;
	a->bools.len = 5;
	a->bools.val = s_bools;
	a->flts.len = 3;
	a->flts.val = s_flts;
	a->inners.len = 2;
	a->inners.val = s_inners;
	a->strs.len = 4;
	a->strs.val = s_strs;
	a->vec[0] = 1;
	a->vec[1] = 2;
	a->vec[2] = 3;
	a->inl = (struct inner){11, "inline", {2, "zz"}};
	a->list = &s_l1;
	a->ch[0].kind = 1;
	a->ch[0].u.h = -77;
	a->ch[1].kind = 2;
	a->ch[1].u.s = "arm two";
	a->ch[2].kind = 3;
	a->ch[2].u.p = &s_pinner;
	a->child = NULL;
	if (with_child) {
		make_all(&s_child, false);
		s_child.str = "child";
		a->child = &s_child;
	}
}

static unsigned char *encode_all(size_t *len)
{
	static unsigned char buf[8192];
	rc_xdr x;
	make_all(&s_top, true);
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(xdr_all(&x, &s_top));
	*len = rc_xdr_getpos(&x);
	return buf;
}

/* Decode wire[0..len) (copied before a guard page) into a fresh object; then free it and
 * check that nothing is left. Returns the decode's result. */
static bool decode_then_free(const unsigned char *wire, size_t len, size_t alloc_limit,
                             uint32_t depth, bool check_roundtrip)
{
	long before = tu_alloc.live;
	unsigned char *g = tu_guard_dup(wire, len);
	struct all *out = calloc(1, sizeof(*out));
	rc_xdr x;
	bool ok;
	rc_xdrmem_create(&x, g, len, RC_XDR_DECODE);
	rc_xdr_set_limits(&x, alloc_limit, depth);
	ok = xdr_all(&x, out);
	if (ok && check_roundtrip) {
		unsigned char *again = malloc(len + 16);
		rc_xdr e;
		assert_int_equal(rc_xdr_getpos(&x), len);
		rc_xdrmem_create(&e, again, len + 16, RC_XDR_ENCODE);
		assert_true(xdr_all(&e, out));
		assert_int_equal(rc_xdr_getpos(&e), len);
		assert_memory_equal(again, wire, len);
		free(again);
	}
	rc_xdr_free((rc_xdrproc)xdr_all, out);
	assert_null(out->str);
	assert_null(out->child);
	assert_null(out->list);
	free(out);
	assert_int_equal(tu_alloc.live, before); /* everything the decode allocated is gone */
	tu_guard_free(g, len);
	return ok;
}

static void test_roundtrip_all(void **state)
{
	size_t len;
	unsigned char *w = encode_all(&len);
	(void)state;
	tu_alloc_reset();
	assert_true(decode_then_free(w, len, 0, 0, true));
	assert_true(tu_alloc.fresh > 30);
}

static void test_truncated_at_every_offset(void **state)
{
	size_t len;
	unsigned char *w = encode_all(&len);
	(void)state;
	tu_alloc_reset();
	for (size_t cut = 0; cut < len; cut++)
		assert_false(decode_then_free(w, cut, 0, 0, false));
	assert_int_equal(tu_alloc.live, 0);
}

static void test_alloc_failure_at_every_allocation(void **state)
{
	size_t len, total;
	unsigned char *w = encode_all(&len);
	(void)state;
	tu_alloc_reset();
	assert_true(decode_then_free(w, len, 0, 0, false));
	total = tu_alloc.calls - 1; /* less the test's own calloc of the object */
	for (size_t k = 1; k <= total; k++) {
		tu_alloc_reset();
		tu_alloc.fail_at = k + 1; /* the object's calloc is call 1 */
		assert_false(decode_then_free(w, len, 0, 0, false));
		assert_int_equal(tu_alloc.failed, 1);
		assert_int_equal(tu_alloc.live, 0);
	}
}

static void test_budget_exhausted_at_every_size(void **state)
{
	size_t len, total;
	unsigned char *w = encode_all(&len);
	(void)state;
	tu_alloc_reset();
	assert_true(decode_then_free(w, len, 0, 0, false));
	total = tu_alloc.total_request - sizeof(struct all); /* what the decode asked for */
	assert_true(decode_then_free(w, len, total, 0, false));
	for (size_t lim = 1; lim < total; lim += (lim < 64 ? 1 : 13))
		assert_false(decode_then_free(w, len, lim, 0, false));
	assert_false(decode_then_free(w, len, total - 1, 0, false));
	assert_int_equal(tu_alloc.live, 0);
}

static void test_corrupted_at_every_byte(void **state)
{
	static const unsigned char vals[] = {0x00, 0xff, 0x80, 0x7f, 0x01, 0x40};
	size_t len;
	unsigned char *w = encode_all(&len), *c = malloc(len);
	size_t ok = 0, bad = 0;
	(void)state;
	tu_alloc_reset();
	for (size_t i = 0; i < len; i++) {
		for (size_t v = 0; v <= sizeof(vals); v++) {
			memcpy(c, w, len);
			c[i] = v < sizeof(vals) ? vals[v] : (unsigned char)(w[i] ^ 0x04);
			if (decode_then_free(c, len, 0, 0, false))
				ok++;
			else
				bad++;
		}
	}
	assert_true(ok > 0 && bad > 0);
	assert_int_equal(tu_alloc.live, 0);
	free(c);
}

/* ---- lengths and counts from the wire -------------------------------------------------- */

static const uint32_t huge[] = {0xffffffffu, 0xfffffffeu, 0xfffffffcu, 0xfffffff9u, 0x80000001u,
                                0x80000000u, 0x7fffffffu, 0x7ffffffcu, 0x40000001u,
                                0x40000000u, 0x3fffffffu, 0x20000001u, 0x10000000u, 0x01000000u,
                                0x00100000u, 0x00010000u, 0x1000u, 0x100u};

enum target { T_BYTES, T_STRING, T_INT, T_UINT, T_ENUM, T_FLOAT, T_BOOL, T_HYPER, T_UHYPER,
              T_DOUBLE, T_STRUCT, T_STRS, T_CHARS, NTARGETS };

/* Decode one variable-length item of the given kind with maximum max; true on success. */
static bool decode_target(enum target t, rc_xdr *x, uint32_t max)
{
	void *p = NULL;
	uint32_t n = 0;
	bool ok;
	switch (t) {
	case T_BYTES:
		ok = rc_xdr_bytes(x, (char **)&p, &n, max);
		break;
	case T_STRING:
		ok = rc_xdr_string(x, (char **)&p, max);
		break;
	case T_INT:
		ok = rc_xdr_array(x, &p, &n, max, 4, (rc_xdrproc)rc_xdr_int);
		break;
	case T_UINT:
		ok = rc_xdr_array(x, &p, &n, max, 4, (rc_xdrproc)rc_xdr_u_int);
		break;
	case T_ENUM:
		ok = rc_xdr_array(x, &p, &n, max, 4, (rc_xdrproc)rc_xdr_enum);
		break;
	case T_FLOAT:
		ok = rc_xdr_array(x, &p, &n, max, 4, (rc_xdrproc)rc_xdr_float);
		break;
	case T_BOOL:
		ok = rc_xdr_array(x, &p, &n, max, sizeof(bool), (rc_xdrproc)rc_xdr_bool);
		break;
	case T_HYPER:
		ok = rc_xdr_array(x, &p, &n, max, 8, (rc_xdrproc)rc_xdr_hyper);
		break;
	case T_UHYPER:
		ok = rc_xdr_array(x, &p, &n, max, 8, (rc_xdrproc)rc_xdr_u_hyper);
		break;
	case T_DOUBLE:
		ok = rc_xdr_array(x, &p, &n, max, 8, (rc_xdrproc)rc_xdr_double);
		break;
	case T_STRUCT:
		ok = rc_xdr_array(x, &p, &n, max, sizeof(struct inner), (rc_xdrproc)xdr_inner);
		if (p != NULL) {
			rc_xdr f;
			rc_xdrmem_create(&f, NULL, 0, RC_XDR_FREE);
			rc_xdr_array(&f, &p, &n, max, sizeof(struct inner), (rc_xdrproc)xdr_inner);
		}
		break;
	case T_STRS:
		ok = rc_xdr_array(x, &p, &n, max, sizeof(char *), (rc_xdrproc)rc_xdr_wrapstring);
		if (p != NULL) {
			rc_xdr f;
			rc_xdrmem_create(&f, NULL, 0, RC_XDR_FREE);
			rc_xdr_array(&f, &p, &n, max, sizeof(char *), (rc_xdrproc)rc_xdr_wrapstring);
		}
		break;
	case T_CHARS:
		ok = rc_xdr_array(x, &p, &n, max, 1, (rc_xdrproc)rc_xdr_char);
		break;
	default:
		ok = false;
	}
	free(p);
	return ok;
}

static void test_huge_lengths_fail_before_allocating(void **state)
{
	(void)state;
	for (size_t hi = 0; hi < sizeof(huge) / sizeof(huge[0]); hi++) {
		for (size_t trail = 0; trail <= 8; trail++) {
			size_t len = 4 + trail;
			unsigned char *g = tu_guard_alloc(len);
			put32(g, huge[hi]);
			memset(g + 4, 0x01, trail); /* would be valid elements if there were enough */
			for (int t = 0; t < NTARGETS; t++) {
				rc_xdr x;
				tu_alloc_reset();
				rc_xdrmem_create(&x, g, len, RC_XDR_DECODE);
				if (decode_target((enum target)t, &x, UINT32_MAX))
					fail_msg("target %d length 0x%x with %zu bytes decoded", t,
					         (unsigned)huge[hi], trail);
				if (tu_alloc.calls != 0)
					fail_msg("target %d length 0x%x with %zu bytes: %zu allocations "
					         "(largest %zu)",
					         t, (unsigned)huge[hi], trail, tu_alloc.calls,
					         tu_alloc.max_request);
			}
			tu_guard_free(g, len);
		}
	}
}

static void test_count_0x40000001_of_4_byte_elements(void **state)
{
	/* count * 4 wraps to 4 in 32 bits: must not allocate 4 bytes and run off the end */
	unsigned char *g = tu_guard_alloc(12);
	int32_t *p = NULL;
	uint32_t n = 0;
	rc_xdr x;
	(void)state;
	put32(g, 0x40000001u);
	put32(g + 4, 1);
	put32(g + 8, 2);
	tu_alloc_reset();
	rc_xdrmem_create(&x, g, 12, RC_XDR_DECODE);
	assert_false(rc_xdr_array(&x, &p, &n, UINT32_MAX, 4, (rc_xdrproc)rc_xdr_int));
	assert_null(p);
	assert_int_equal(n, 0);
	assert_int_equal(tu_alloc.calls, 0);
	/* the same with a struct element and a large element size */
	rc_xdrmem_create(&x, g, 12, RC_XDR_DECODE);
	assert_false(rc_xdr_array(&x, &p, &n, UINT32_MAX, 0x10000, (rc_xdrproc)rc_xdr_int));
	assert_int_equal(tu_alloc.calls, 0);
	tu_guard_free(g, 12);
}

static void test_length_over_declared_max(void **state)
{
	/* the data is all there, but the length is one over the bound */
	(void)state;
	for (int t = 0; t < NTARGETS; t++) {
		size_t len = 4 + 17 * 16;
		unsigned char *g = tu_guard_alloc(len);
		rc_xdr x;
		put32(g, 17);
		/* 17 valid elements: zero words (false, 0, "", empty structs), or letters */
		memset(g + 4, t == T_STRING ? 'a' : 0, len - 4);
		tu_alloc_reset();
		rc_xdrmem_create(&x, g, len, RC_XDR_DECODE);
		assert_false(decode_target((enum target)t, &x, 16));
		assert_int_equal(tu_alloc.calls, 0);
		/* and at the bound it decodes */
		rc_xdrmem_create(&x, g, len, RC_XDR_DECODE);
		assert_true(decode_target((enum target)t, &x, 17));
		assert_int_equal(tu_alloc.live, 0);
		tu_guard_free(g, len);
	}
}

static void test_ffffffff_loop(void **state)
{
	/* a peer that sends nothing but huge lengths costs no memory and little time */
	unsigned char *g = tu_guard_alloc(8);
	struct timespec t0, t1;
	double ms;
	(void)state;
	put32(g, 0xffffffffu);
	put32(g + 4, 0xffffffffu);
	tu_alloc_reset();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 100000; i++) {
		rc_xdr x;
		char *p = NULL;
		uint32_t n;
		rc_xdrmem_create(&x, g + 8 - ((size_t)i % 9), (size_t)i % 9, RC_XDR_DECODE);
		assert_false(rc_xdr_bytes(&x, &p, &n, UINT32_MAX));
		rc_xdrmem_create(&x, g + 8 - ((size_t)i % 9), (size_t)i % 9, RC_XDR_DECODE);
		assert_false(rc_xdr_array(&x, &p, &n, UINT32_MAX, 8, (rc_xdrproc)rc_xdr_double));
		rc_xdrmem_create(&x, g + 8 - ((size_t)i % 9), (size_t)i % 9, RC_XDR_DECODE);
		assert_false(rc_xdr_wrapstring(&x, &p));
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	print_message("300000 hostile decodes in %.1f ms\n", ms);
	assert_int_equal(tu_alloc.calls, 0);
	tu_guard_free(g, 8);
}

/* Every primitive decoder at the very end of a buffer, each length short of its size. */
static void test_primitives_at_guard_page(void **state)
{
	union {
		int32_t i;
		uint64_t h;
		bool b;
		float f;
		double d;
		char c;
		int16_t s;
		rc_quadruple q;
		char op[9];
	} v;
	static const struct {
		rc_xdrproc proc;
		size_t wire;
	} prims[] = {
		{(rc_xdrproc)rc_xdr_int, 4},       {(rc_xdrproc)rc_xdr_u_int, 4},
		{(rc_xdrproc)rc_xdr_enum, 4},      {(rc_xdrproc)rc_xdr_bool, 4},
		{(rc_xdrproc)rc_xdr_float, 4},     {(rc_xdrproc)rc_xdr_char, 4},
		{(rc_xdrproc)rc_xdr_u_char, 4},    {(rc_xdrproc)rc_xdr_short, 4},
		{(rc_xdrproc)rc_xdr_u_short, 4},   {(rc_xdrproc)rc_xdr_hyper, 8},
		{(rc_xdrproc)rc_xdr_u_hyper, 8},   {(rc_xdrproc)rc_xdr_double, 8},
		{(rc_xdrproc)rc_xdr_quadruple, 16},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(prims) / sizeof(prims[0]); i++) {
		for (size_t len = 0; len <= prims[i].wire; len++) {
			unsigned char *g = tu_guard_alloc(len);
			rc_xdr x;
			memset(&v, 0, sizeof(v));
			rc_xdrmem_create(&x, g, len, RC_XDR_DECODE);
			assert_int_equal(prims[i].proc(&x, &v), len == prims[i].wire);
			tu_guard_free(g, len);
		}
	}
	/* fixed opaque of 9 bytes needs 12 */
	for (size_t len = 0; len <= 12; len++) {
		unsigned char *g = tu_guard_alloc(len);
		rc_xdr x;
		rc_xdrmem_create(&x, g, len, RC_XDR_DECODE);
		assert_int_equal(rc_xdr_opaque(&x, v.op, 9), len == 12);
		tu_guard_free(g, len);
	}
}

/* ---- nesting ----------------------------------------------------------------------------- */

static bool xdr_plain_lnode(rc_xdr *x, struct lnode *n)
{
	return rc_xdr_int(x, &n->v) &&
	       rc_xdr_pointer(x, &n->next, sizeof(struct lnode), (rc_xdrproc)xdr_plain_lnode);
}

static void test_deep_list_from_the_wire(void **state)
{
	/* 200000 "present" flags in a row: stops at the depth limit, no stack overflow */
	size_t levels = 200000, len = levels * 8 + 4;
	unsigned char *w = malloc(len);
	struct lnode *out = NULL;
	unsigned char *g;
	rc_xdr x;
	(void)state;
	for (size_t i = 0; i < levels; i++) {
		put32(w + 8 * i, 1);
		put32(w + 8 * i + 4, (uint32_t)i);
	}
	put32(w + 8 * levels, 0);
	g = tu_guard_dup(w, len);
	tu_alloc_reset();
	rc_xdrmem_create(&x, g, len, RC_XDR_DECODE);
	assert_false(rc_xdr_pointer(&x, &out, sizeof(struct lnode), (rc_xdrproc)xdr_plain_lnode));
	assert_int_equal(tu_alloc.fresh, RC_XDR_DEFAULT_MAX_DEPTH);
	{
		rc_xdr f; /* free through the pointer routine, which owns the head node */
		rc_xdrmem_create(&f, NULL, 0, RC_XDR_FREE);
		assert_true(rc_xdr_pointer(&f, &out, sizeof(struct lnode),
		                           (rc_xdrproc)xdr_plain_lnode));
	}
	assert_null(out);
	assert_int_equal(tu_alloc.live, 0);
	tu_guard_free(g, len);
	free(w);
}

/* A type that contains itself through a variable-length array: struct tree { tree kids<>; } */
struct tree {
	struct { uint32_t len; struct tree *val; } kids;
};

static bool xdr_tree(rc_xdr *x, struct tree *t)
{
	return rc_xdr_array(x, &t->kids.val, &t->kids.len, UINT32_MAX, sizeof(struct tree),
	                    (rc_xdrproc)xdr_tree);
}

static void test_deep_array_recursion_from_the_wire(void **state)
{
	/* 1 Mi levels of "one child" (4 MiB of input): must stop at the depth limit instead of
	 * recursing a million frames deep */
	size_t levels = (size_t)1 << 20, len = levels * 4 + 4;
	unsigned char *w = malloc(len);
	struct tree t = {{0, NULL}};
	rc_xdr x;
	(void)state;
	for (size_t i = 0; i < levels; i++)
		put32(w + 4 * i, 1);
	put32(w + 4 * levels, 0);
	tu_alloc_reset();
	rc_xdrmem_create(&x, w, len, RC_XDR_DECODE);
	assert_false(xdr_tree(&x, &t));
	assert_true(tu_alloc.fresh <= RC_XDR_DEFAULT_MAX_DEPTH);
	rc_xdr_free((rc_xdrproc)xdr_tree, &t);
	assert_null(t.kids.val);
	assert_int_equal(tu_alloc.live, 0);

	/* a tree within the limit decodes */
	put32(w + 4 * 50, 0);
	rc_xdrmem_create(&x, w, 4 * 51, RC_XDR_DECODE);
	assert_true(xdr_tree(&x, &t));
	assert_int_equal(rc_xdr_getpos(&x), 4 * 51);
	rc_xdr_free((rc_xdrproc)xdr_tree, &t);
	assert_int_equal(tu_alloc.live, 0);
	/* ...but not within a limit set below its depth */
	rc_xdrmem_create(&x, w, 4 * 51, RC_XDR_DECODE);
	rc_xdr_set_limits(&x, 0, 40);
	assert_false(xdr_tree(&x, &t));
	rc_xdr_free((rc_xdrproc)xdr_tree, &t);
	assert_int_equal(tu_alloc.live, 0);
	free(w);
}

/* A tree exactly as deep as the limit (1000 arrays of one child, then an empty one) decodes
 * and encodes again; one level more fails both ways. (The empty innermost array nests
 * nothing: encode once counted it as a level, so a value that decoded would not re-encode.) */
static void test_depth_limit_same_both_ways(void **state)
{
	size_t max = RC_XDR_DEFAULT_MAX_DEPTH, len = (max + 2) * 4;
	unsigned char *w = malloc(len), *again = malloc(len);
	struct tree t = {{0, NULL}};
	rc_xdr x;
	(void)state;
	for (size_t levels = max; levels <= max + 1; levels++) {
		for (size_t i = 0; i < levels; i++)
			put32(w + 4 * i, 1);
		put32(w + 4 * levels, 0);
		tu_alloc_reset();
		rc_xdrmem_create(&x, w, 4 * (levels + 1), RC_XDR_DECODE);
		bool ok = xdr_tree(&x, &t);
		assert_true(ok == (levels == max));
		if (ok) {
			rc_xdrmem_create(&x, again, len, RC_XDR_ENCODE);
			assert_true(xdr_tree(&x, &t));
			assert_int_equal(rc_xdr_getpos(&x), 4 * (levels + 1));
			assert_memory_equal(again, w, 4 * (levels + 1));
		}
		rc_xdr_free((rc_xdrproc)xdr_tree, &t);
		assert_int_equal(tu_alloc.live, 0);
	}
	free(w);
	free(again);
}

/* ---- the record reader on garbage ----------------------------------------------------- */

static void test_reader_garbage(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 200; seed++) {
		uint64_t s = seed * 0x2545f4914f6cdd1dULL;
		rc_recreader r;
		size_t fed = 0, recs = 0;
		rc_status st = RC_OK;
		size_t cap = 1 + tu_rand(&s) % 5000;
		tu_alloc_reset();
		rc_recreader_init(&r, cap);
		while (fed < 200000 && st != RC_MSGTOOLARGE) {
			void *p, *rec;
			size_t n, k, rl;
			st = rc_recreader_space(&r, &p, &n);
			if (st != RC_OK)
				break;
			k = 1 + tu_rand(&s) % 700;
			if (k > n)
				k = n;
			for (size_t i = 0; i < k; i++) {
				uint64_t b = tu_rand(&s);
				/* mostly small headers so that some records complete */
				((unsigned char *)p)[i] = (i % 4 == 0 && (b & 1)) ? (unsigned char)(b >> 8 & 0x80)
				                                                   : (unsigned char)(b >> 16);
			}
			rc_recreader_commit(&r, k);
			fed += k;
			while ((st = rc_recreader_next(&r, &rec, &rl)) == RC_OK) {
				assert_true(rl <= cap);
				recs++;
			}
		}
		assert_true(recs * 4 <= fed); /* every record took at least its 4-byte mark */
		assert_true(tu_alloc.max_request <= cap + 128 * 1024);
		rc_recreader_destroy(&r);
		assert_int_equal(tu_alloc.live, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_all),
		cmocka_unit_test(test_truncated_at_every_offset),
		cmocka_unit_test(test_alloc_failure_at_every_allocation),
		cmocka_unit_test(test_budget_exhausted_at_every_size),
		cmocka_unit_test(test_corrupted_at_every_byte),
		cmocka_unit_test(test_huge_lengths_fail_before_allocating),
		cmocka_unit_test(test_count_0x40000001_of_4_byte_elements),
		cmocka_unit_test(test_length_over_declared_max),
		cmocka_unit_test(test_ffffffff_loop),
		cmocka_unit_test(test_primitives_at_guard_page),
		cmocka_unit_test(test_deep_list_from_the_wire),
		cmocka_unit_test(test_deep_array_recursion_from_the_wire),
		cmocka_unit_test(test_depth_limit_same_both_ways),
		cmocka_unit_test(test_reader_garbage),
	};
	return cmocka_run_group_tests_name("xdr_hostile", tests, NULL, NULL);
}

/*
 * Arrays and vectors (rc_xdr_array / rc_xdr_vector in xdr/xdr_prim.c, the bulk paths in
 * xdr/xdr_bulk.c): every bulk scalar kind and a struct element (the generic path), empty, at
 * the maximum and one past it, lengths that straddle every vector-width tail, unaligned
 * element storage, caller-provided buffers, and the bulk wire form against the per-element
 * one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <remotecall/xdr.h>

#include "xdr_testutil.h"

/* ---- the bulk kinds --------------------------------------------------------------------- */

struct kind {
	const char *name;
	rc_xdrproc proc;
	uint32_t elsize; /* C size */
	uint32_t wire;   /* XDR size */
};

static const struct kind kinds[] = {
	{"int", (rc_xdrproc)rc_xdr_int, 4, 4},
	{"u_int", (rc_xdrproc)rc_xdr_u_int, 4, 4},
	{"enum", (rc_xdrproc)rc_xdr_enum, 4, 4},
	{"float", (rc_xdrproc)rc_xdr_float, 4, 4},
	{"hyper", (rc_xdrproc)rc_xdr_hyper, 8, 8},
	{"u_hyper", (rc_xdrproc)rc_xdr_u_hyper, 8, 8},
	{"double", (rc_xdrproc)rc_xdr_double, 8, 8},
	{"bool", (rc_xdrproc)rc_xdr_bool, sizeof(bool), 4},
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

/* Lengths around every vector width the swap loops may use (4, 8, 16, 32 elements). */
static const uint32_t lengths[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65,
                                   127, 128, 129, 1000, 4099};

/* Fill n elements with values that exercise every byte (and the edges first). */
static void fill(const struct kind *k, unsigned char *base, uint32_t n, uint64_t seed)
{
	uint64_t s = seed | 1;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t r = tu_rand(&s);
		unsigned char *e = base + (size_t)i * k->elsize;
		if (k->elsize == sizeof(bool) && k->wire == 4) {
			*(bool *)e = (r & 1) != 0;
			continue;
		}
		if (i == 0)
			r = 0x8000000080000000ULL; /* INT_MIN / -0.0f */
		else if (i == 1)
			r = 0x7fffffff7fffffffULL; /* INT_MAX / NaN */
		else if (i == 2)
			r = UINT64_MAX;            /* -1 / a negative NaN */
		else if (i == 3)
			r = 0x7ff0000000000001ULL; /* a signalling NaN double */
		memcpy(e, &r, k->elsize);
	}
}

/* The reference wire form: the scalar routine called once per element. */
static size_t encode_each(const struct kind *k, unsigned char *base, uint32_t n,
                          unsigned char *out, size_t cap, bool with_count)
{
	rc_xdr x;
	rc_xdrmem_create(&x, out, cap, RC_XDR_ENCODE);
	if (with_count)
		assert_true(rc_xdr_u_int(&x, &n));
	for (uint32_t i = 0; i < n; i++) {
		union { uint64_t u; double d; bool b; } e; /* aligned, for the scalar routine */
		memcpy(&e, base + (size_t)i * k->elsize, k->elsize);
		assert_true(k->proc(&x, &e));
	}
	return rc_xdr_getpos(&x);
}

static void test_array_every_kind(void **state)
{
	(void)state;
	for (size_t ki = 0; ki < NKINDS; ki++) {
		const struct kind *k = &kinds[ki];
		for (size_t li = 0; li < sizeof(lengths) / sizeof(lengths[0]); li++) {
			uint32_t n = lengths[li], on = 12345;
			size_t cap = 4 + (size_t)n * k->wire;
			unsigned char *in = malloc((size_t)n * k->elsize + 1);
			unsigned char *ref = malloc(cap), *buf = malloc(cap), *g;
			unsigned char *out = NULL;
			rc_xdr x;
			fill(k, in, n, n * 31 + ki);

			/* encode at the maximum: the bulk wire form equals the per-element one */
			rc_xdrmem_create(&x, buf, cap, RC_XDR_ENCODE);
			assert_true(rc_xdr_array(&x, &in, &n, n, k->elsize, k->proc));
			assert_int_equal(rc_xdr_getpos(&x), cap);
			assert_int_equal(encode_each(k, in, n, ref, cap, true), cap);
			assert_memory_equal(buf, ref, cap);

			/* decode (allocating) from a buffer that ends at a guard page */
			g = tu_guard_dup(buf, cap);
			tu_alloc_reset();
			rc_xdrmem_create(&x, g, cap, RC_XDR_DECODE);
			assert_true(rc_xdr_array(&x, &out, &on, n, k->elsize, k->proc));
			assert_int_equal(rc_xdr_getpos(&x), cap);
			assert_int_equal(on, n);
			if (n == 0) {
				assert_null(out);
				assert_int_equal(tu_alloc.calls, 0);
			} else {
				assert_int_equal(tu_alloc.fresh, 1);
				assert_int_equal(tu_alloc.max_request, (size_t)n * k->elsize);
				assert_memory_equal(out, in, (size_t)n * k->elsize);
			}
			{
				rc_xdr f;
				rc_xdrmem_create(&f, NULL, 0, RC_XDR_FREE);
				assert_true(rc_xdr_array(&f, &out, &on, n, k->elsize, k->proc));
				assert_null(out);
				assert_int_equal(on, 0);
			}
			assert_int_equal(tu_alloc.live, 0);

			if (n > 0) {
				uint32_t m = n - 1;
				/* one past the maximum: encode refuses and writes nothing */
				memset(buf, 0xee, cap);
				rc_xdrmem_create(&x, buf, cap, RC_XDR_ENCODE);
				assert_false(rc_xdr_array(&x, &in, &n, m, k->elsize, k->proc));
				assert_int_equal(rc_xdr_getpos(&x), 0);
				assert_int_equal(buf[0], 0xee);
				/* decode refuses before allocating */
				tu_alloc_reset();
				rc_xdrmem_create(&x, g, cap, RC_XDR_DECODE);
				assert_false(rc_xdr_array(&x, &out, &on, m, k->elsize, k->proc));
				assert_null(out);
				assert_int_equal(tu_alloc.calls, 0);
				/* the data cut short by one element: fails before allocating */
				rc_xdrmem_create(&x, g, cap - k->wire, RC_XDR_DECODE);
				assert_false(rc_xdr_array(&x, &out, &on, n, k->elsize, k->proc));
				assert_null(out);
				assert_int_equal(tu_alloc.calls, 0);
				/* too small an encode buffer: fails */
				rc_xdrmem_create(&x, buf, cap - 1, RC_XDR_ENCODE);
				assert_false(rc_xdr_array(&x, &in, &n, n, k->elsize, k->proc));
			}
			tu_guard_free(g, cap);
			free(in);
			free(ref);
			free(buf);
		}
	}
}

static void test_vector_every_kind(void **state)
{
	(void)state;
	for (size_t ki = 0; ki < NKINDS; ki++) {
		const struct kind *k = &kinds[ki];
		for (size_t li = 0; li < sizeof(lengths) / sizeof(lengths[0]); li++) {
			uint32_t n = lengths[li];
			size_t cap = (size_t)n * k->wire + 1;
			size_t sz = (size_t)n * k->elsize;
			unsigned char *in = malloc(sz + 1), *out = malloc(sz + 1);
			unsigned char *ref = malloc(cap), *buf = malloc(cap), *g;
			rc_xdr x;
			fill(k, in, n, n * 7 + ki);
			rc_xdrmem_create(&x, buf, cap, RC_XDR_ENCODE);
			assert_true(rc_xdr_vector(&x, in, n, k->elsize, k->proc));
			assert_int_equal(rc_xdr_getpos(&x), cap - 1);
			assert_int_equal(encode_each(k, in, n, ref, cap, false), cap - 1);
			assert_memory_equal(buf, ref, cap - 1);

			g = tu_guard_dup(buf, cap - 1);
			memset(out, 0x5c, sz + 1);
			tu_alloc_reset();
			rc_xdrmem_create(&x, g, cap - 1, RC_XDR_DECODE);
			assert_true(rc_xdr_vector(&x, out, n, k->elsize, k->proc));
			assert_int_equal(tu_alloc.calls, 0);
			assert_memory_equal(out, in, sz);
			assert_int_equal(out[sz], 0x5c); /* not one element more */
			if (n > 0) {
				/* one element more than the data holds */
				rc_xdrmem_create(&x, g + k->wire, cap - 1 - k->wire, RC_XDR_DECODE);
				assert_false(rc_xdr_vector(&x, out, n, k->elsize, k->proc));
				rc_xdrmem_create(&x, buf, cap - 2, RC_XDR_ENCODE);
				assert_false(rc_xdr_vector(&x, in, n, k->elsize, k->proc));
			}
			tu_guard_free(g, cap - 1);
			free(in);
			free(out);
			free(ref);
			free(buf);
		}
	}
}

static void test_bulk_unaligned_storage(void **state)
{
	/* elements stored at an odd address (packed structs, byte buffers) */
	(void)state;
	for (size_t ki = 0; ki < NKINDS; ki++) {
		const struct kind *k = &kinds[ki];
		uint32_t n = 37, on = 0;
		unsigned char store[1 + 37 * 8], back[1 + 37 * 8], wire[4 + 37 * 8], ref[4 + 37 * 8];
		unsigned char *in = store + 1, *out = back + 1;
		rc_xdr x;
		fill(k, in, n, 99 + ki);
		rc_xdrmem_create(&x, wire, sizeof(wire), RC_XDR_ENCODE);
		assert_true(rc_xdr_array(&x, &in, &n, 100, k->elsize, k->proc));
		assert_int_equal(encode_each(k, in, n, ref, sizeof(ref), true), rc_xdr_getpos(&x));
		assert_memory_equal(wire, ref, rc_xdr_getpos(&x));
		rc_xdrmem_create(&x, wire, sizeof(wire), RC_XDR_DECODE);
		assert_true(rc_xdr_array(&x, &out, &on, 100, k->elsize, k->proc));
		assert_ptr_equal(out, back + 1);
		assert_memory_equal(out, in, (size_t)n * k->elsize);
		/* and from an unaligned wire position */
		{
			unsigned char wire2[1 + sizeof(wire)];
			memcpy(wire2 + 1, wire, sizeof(wire));
			memset(back, 0, sizeof(back));
			rc_xdrmem_create(&x, wire2 + 1, sizeof(wire), RC_XDR_DECODE);
			assert_true(rc_xdr_array(&x, &out, &on, 100, k->elsize, k->proc));
			assert_memory_equal(out, in, (size_t)n * k->elsize);
		}
	}
}

static void test_array_caller_buffer(void **state)
{
	int64_t in[5] = {1, -2, 3, -4, INT64_MIN}, mine[8], *p = in, *out = mine;
	uint32_t n = 5, on = 0;
	unsigned char buf[64];
	rc_xdr x;
	(void)state;
	memset(mine, 0, sizeof(mine));
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_array(&x, &p, &n, 8, sizeof(int64_t), (rc_xdrproc)rc_xdr_hyper));
	tu_alloc_reset();
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_DECODE);
	assert_true(rc_xdr_array(&x, &out, &on, 8, sizeof(int64_t), (rc_xdrproc)rc_xdr_hyper));
	assert_ptr_equal(out, mine);
	assert_int_equal(on, 5);
	assert_int_equal(tu_alloc.calls, 0);
	assert_memory_equal(mine, in, sizeof(in));
	assert_true(mine[5] == 0);
}

/* Any non-zero word is a true bool (as rc_xdr_bool and libtirpc decode it), in bulk too;
 * encoding writes 1. */
static void test_bool_array_nonzero_is_true(void **state)
{
	unsigned char wire[20] = {0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0x80, 0, 0, 0};
	unsigned char again[20];
	bool *out = NULL, mine[4];
	uint32_t on = 0;
	rc_xdr x;
	(void)state;
	tu_alloc_reset();
	rc_xdrmem_create(&x, wire, sizeof(wire), RC_XDR_DECODE);
	assert_true(rc_xdr_array(&x, &out, &on, 10, sizeof(bool), (rc_xdrproc)rc_xdr_bool));
	assert_int_equal(on, 4);
	assert_true(out[0] && !out[1] && out[2] && out[3]);
	rc_xdrmem_create(&x, again, sizeof(again), RC_XDR_ENCODE);
	assert_true(rc_xdr_array(&x, &out, &on, 10, sizeof(bool), (rc_xdrproc)rc_xdr_bool));
	assert_int_equal(rc_xdr_getpos(&x), 20);
	assert_int_equal(again[15], 1);
	assert_int_equal(again[16], 0);
	assert_int_equal(again[19], 1);
	{
		rc_xdr f;
		rc_xdrmem_create(&f, NULL, 0, RC_XDR_FREE);
		assert_true(rc_xdr_array(&f, &out, &on, 10, sizeof(bool), (rc_xdrproc)rc_xdr_bool));
	}
	assert_null(out);
	assert_int_equal(tu_alloc.live, 0);
	rc_xdrmem_create(&x, wire + 4, 12, RC_XDR_DECODE);
	assert_false(rc_xdr_vector(&x, mine, 4, sizeof(bool), (rc_xdrproc)rc_xdr_bool));
	rc_xdrmem_create(&x, wire + 4, 16, RC_XDR_DECODE);
	assert_true(rc_xdr_vector(&x, mine, 4, sizeof(bool), (rc_xdrproc)rc_xdr_bool));
	assert_true(mine[0] && !mine[1] && mine[2] && mine[3]);
}

/* ---- the generic path ------------------------------------------------------------------- */

struct pt {
	int32_t x;
	double y;
	char *name;
	bool flag;
};

static bool xdr_pt(rc_xdr *x, struct pt *p)
{
	return rc_xdr_int(x, &p->x) && rc_xdr_double(x, &p->y) &&
	       rc_xdr_string(x, &p->name, 16) && rc_xdr_bool(x, &p->flag);
}

static char names[64][16];

static void fill_pts(struct pt *p, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "p%u", (unsigned)i);
		p[i].x = (int32_t)i - 3;
		p[i].y = i * 0.5;
		p[i].name = names[i];
		p[i].flag = i & 1;
	}
}

static void test_array_of_struct(void **state)
{
	(void)state;
	for (uint32_t n = 0; n <= 40; n += (n < 5 ? 1 : 7)) {
		struct pt in[64], *p = in, *out = NULL;
		uint32_t nn = n, on = 0;
		unsigned char buf[64 * 32], ref[64 * 32];
		size_t len;
		rc_xdr x;
		fill_pts(in, n);
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
		assert_true(rc_xdr_array(&x, &p, &nn, n, sizeof(struct pt), (rc_xdrproc)xdr_pt));
		len = rc_xdr_getpos(&x);
		/* the same bytes as the count followed by each element */
		rc_xdrmem_create(&x, ref, sizeof(ref), RC_XDR_ENCODE);
		assert_true(rc_xdr_u_int(&x, &nn));
		for (uint32_t i = 0; i < n; i++)
			assert_true(xdr_pt(&x, &in[i]));
		assert_int_equal(rc_xdr_getpos(&x), len);
		assert_memory_equal(buf, ref, len);

		tu_alloc_reset();
		rc_xdrmem_create(&x, buf, len, RC_XDR_DECODE);
		assert_true(rc_xdr_array(&x, &out, &on, n, sizeof(struct pt), (rc_xdrproc)xdr_pt));
		assert_int_equal(on, n);
		for (uint32_t i = 0; i < n; i++) {
			assert_int_equal(out[i].x, in[i].x);
			assert_true(out[i].y == in[i].y);
			assert_string_equal(out[i].name, in[i].name);
			assert_int_equal(out[i].flag, in[i].flag);
		}
		{
			struct { uint32_t len; struct pt *val; } arr = {on, out};
			rc_xdr f;
			rc_xdrmem_create(&f, NULL, 0, RC_XDR_FREE);
			assert_true(rc_xdr_array(&f, &arr.val, &arr.len, n, sizeof(struct pt),
			                         (rc_xdrproc)xdr_pt));
			assert_null(arr.val);
			assert_int_equal(arr.len, 0);
		}
		assert_int_equal(tu_alloc.live, 0);

		if (n > 0) {
			/* max + 1 */
			rc_xdrmem_create(&x, ref, sizeof(ref), RC_XDR_ENCODE);
			assert_false(rc_xdr_array(&x, &p, &nn, n - 1, sizeof(struct pt),
			                          (rc_xdrproc)xdr_pt));
			tu_alloc_reset();
			out = NULL;
			rc_xdrmem_create(&x, buf, len, RC_XDR_DECODE);
			assert_false(rc_xdr_array(&x, &out, &on, n - 1, sizeof(struct pt),
			                          (rc_xdrproc)xdr_pt));
			assert_null(out);
			assert_int_equal(tu_alloc.calls, 0);
		}
	}
}

static void test_vector_of_struct(void **state)
{
	struct pt in[5], out[5];
	unsigned char buf[256];
	size_t len;
	rc_xdr x;
	(void)state;
	fill_pts(in, 5);
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_vector(&x, in, 5, sizeof(struct pt), (rc_xdrproc)xdr_pt));
	len = rc_xdr_getpos(&x);
	memset(out, 0, sizeof(out));
	tu_alloc_reset();
	rc_xdrmem_create(&x, buf, len, RC_XDR_DECODE);
	assert_true(rc_xdr_vector(&x, out, 5, sizeof(struct pt), (rc_xdrproc)xdr_pt));
	assert_string_equal(out[4].name, "p4");
	assert_int_equal(tu_alloc.fresh, 5); /* the five names */
	{
		rc_xdr f;
		rc_xdrmem_create(&f, NULL, 0, RC_XDR_FREE);
		assert_true(rc_xdr_vector(&f, out, 5, sizeof(struct pt), (rc_xdrproc)xdr_pt));
	}
	for (int i = 0; i < 5; i++)
		assert_null(out[i].name);
	assert_int_equal(tu_alloc.live, 0);
	/* truncated: fails, and what was decoded can be freed */
	memset(out, 0, sizeof(out));
	rc_xdrmem_create(&x, buf, len - 4, RC_XDR_DECODE);
	assert_false(rc_xdr_vector(&x, out, 5, sizeof(struct pt), (rc_xdrproc)xdr_pt));
	{
		rc_xdr f;
		rc_xdrmem_create(&f, NULL, 0, RC_XDR_FREE);
		rc_xdr_vector(&f, out, 5, sizeof(struct pt), (rc_xdrproc)xdr_pt);
	}
	assert_int_equal(tu_alloc.live, 0);
}

static void test_array_of_strings_and_narrow(void **state)
{
	char *strs[3] = {"", "a", "abcde"}, **sp = strs, **so = NULL;
	char cs[5] = {'a', -1, 0, 127, -128}, *cp = cs, *co = NULL;
	int16_t ss[3] = {INT16_MIN, 0, INT16_MAX}, *shp = ss, *sho = NULL;
	uint32_t n3 = 3, n5 = 5, on = 0;
	unsigned char buf[128];
	size_t len;
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_array(&x, &sp, &n3, 3, sizeof(char *), (rc_xdrproc)rc_xdr_wrapstring));
	assert_true(rc_xdr_array(&x, &cp, &n5, 5, 1, (rc_xdrproc)rc_xdr_char));
	assert_true(rc_xdr_array(&x, &shp, &n3, 3, sizeof(int16_t), (rc_xdrproc)rc_xdr_short));
	len = rc_xdr_getpos(&x);
	assert_int_equal(len, 4 + 4 + 8 + 12 + 4 + 20 + 4 + 12);
	tu_alloc_reset();
	rc_xdrmem_create(&x, buf, len, RC_XDR_DECODE);
	assert_true(rc_xdr_array(&x, &so, &on, 3, sizeof(char *), (rc_xdrproc)rc_xdr_wrapstring));
	assert_string_equal(so[2], "abcde");
	assert_true(rc_xdr_array(&x, &co, &on, 5, 1, (rc_xdrproc)rc_xdr_char));
	assert_memory_equal(co, cs, 5);
	assert_true(rc_xdr_array(&x, &sho, &on, 3, sizeof(int16_t), (rc_xdrproc)rc_xdr_short));
	assert_memory_equal(sho, ss, sizeof(ss));
	{
		rc_xdr f;
		uint32_t k = 3;
		rc_xdrmem_create(&f, NULL, 0, RC_XDR_FREE);
		assert_true(rc_xdr_array(&f, &so, &k, 3, sizeof(char *),
		                         (rc_xdrproc)rc_xdr_wrapstring));
	}
	free(co);
	free(sho);
	assert_int_equal(tu_alloc.live, 0);
}

static void test_array_bad_arguments(void **state)
{
	int32_t *p = NULL;
	uint32_t n = 3;
	unsigned char buf[16];
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	/* elements but no storage */
	assert_false(rc_xdr_array(&x, &p, &n, 10, 4, (rc_xdrproc)rc_xdr_int));
	assert_false(rc_xdr_vector(&x, NULL, 3, 4, (rc_xdrproc)rc_xdr_int));
	/* zero element size or no routine */
	n = 0;
	assert_false(rc_xdr_array(&x, &p, &n, 10, 0, (rc_xdrproc)rc_xdr_int));
	assert_false(rc_xdr_array(&x, &p, &n, 10, 4, NULL));
	assert_false(rc_xdr_vector(&x, buf, 1, 0, (rc_xdrproc)rc_xdr_int));
	/* an empty array with no storage is fine */
	assert_true(rc_xdr_array(&x, &p, &n, 10, 4, (rc_xdrproc)rc_xdr_int));
	assert_true(rc_xdr_vector(&x, NULL, 0, 4, (rc_xdrproc)rc_xdr_int));
	assert_int_equal(rc_xdr_getpos(&x), 4);
}

static void test_large_int_array_roundtrip(void **state)
{
	/* 1 Mi ints through the bulk path, both directions */
	uint32_t n = 1u << 20, on = 0;
	int32_t *in = malloc((size_t)n * 4), *out = NULL;
	size_t cap = 4 + (size_t)n * 4;
	unsigned char *buf = malloc(cap);
	rc_xdr x;
	(void)state;
	for (uint32_t i = 0; i < n; i++)
		in[i] = (int32_t)(i * 2654435761u);
	rc_xdrmem_create(&x, buf, cap, RC_XDR_ENCODE);
	assert_true(rc_xdr_array(&x, &in, &n, n, 4, (rc_xdrproc)rc_xdr_int));
	assert_int_equal(buf[4 + 4 * 12345 + 3], (unsigned char)in[12345]);
	assert_int_equal(buf[4 + 4 * 12345], (unsigned char)((uint32_t)in[12345] >> 24));
	rc_xdrmem_create(&x, buf, cap, RC_XDR_DECODE);
	assert_true(rc_xdr_array(&x, &out, &on, n, 4, (rc_xdrproc)rc_xdr_int));
	assert_memory_equal(out, in, (size_t)n * 4);
	free(in);
	free(out);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_array_every_kind),
		cmocka_unit_test(test_vector_every_kind),
		cmocka_unit_test(test_bulk_unaligned_storage),
		cmocka_unit_test(test_array_caller_buffer),
		cmocka_unit_test(test_bool_array_nonzero_is_true),
		cmocka_unit_test(test_array_of_struct),
		cmocka_unit_test(test_vector_of_struct),
		cmocka_unit_test(test_array_of_strings_and_narrow),
		cmocka_unit_test(test_array_bad_arguments),
		cmocka_unit_test(test_large_int_array_roundtrip),
	};
	return cmocka_run_group_tests_name("xdr_bulk", tests, NULL, NULL);
}

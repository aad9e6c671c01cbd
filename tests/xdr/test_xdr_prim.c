/*
 * XDR primitives (xdr/xdr_prim.c): every scalar's edge values and wire form, floats bit for
 * bit, range checks of the narrow integers, opaque padding, bytes and strings at and past
 * their bounds, optional data, unions and rc_xdr_free.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <remotecall/xdr.h>

#include "xdr_testutil.h"

/* ---- helpers ----------------------------------------------------------------------------- */

/* "0000 00ff" -> bytes; spaces ignored. Returns the byte count. */
static size_t hex(const char *s, unsigned char *out)
{
	size_t n = 0;
	while (*s) {
		unsigned v;
		if (*s == ' ') {
			s++;
			continue;
		}
		if (sscanf(s, "%2x", &v) != 1)
			abort();
		out[n++] = (unsigned char)v;
		s += 2;
	}
	return n;
}

static void assert_wire(const unsigned char *got, size_t got_len, const char *want_hex)
{
	unsigned char want[256];
	size_t n = hex(want_hex, want);
	assert_int_equal(got_len, n);
	assert_memory_equal(got, want, n);
}

static uint32_t f2u(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}
static float u2f(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}
static uint64_t d2u(double d)
{
	uint64_t u;
	memcpy(&u, &d, 8);
	return u;
}
static double u2d(uint64_t u)
{
	double d;
	memcpy(&d, &u, 8);
	return d;
}

/* Decode a 4-byte wire word with proc into obj; returns the routine's result. */
static bool dec_word(uint32_t word, rc_xdrproc proc, void *obj)
{
	unsigned char b[4] = {(unsigned char)(word >> 24), (unsigned char)(word >> 16),
	                      (unsigned char)(word >> 8), (unsigned char)word};
	unsigned char *g = tu_guard_dup(b, 4);
	rc_xdr x;
	bool ok;
	rc_xdrmem_create(&x, g, 4, RC_XDR_DECODE);
	ok = proc(&x, obj);
	assert_int_equal(rc_xdr_getpos(&x), 4); /* a failed range check still consumed the int */
	tu_guard_free(g, 4);
	return ok;
}

static void setup_alloc(void) { tu_alloc_reset(); }

/* ---- integers ---------------------------------------------------------------------------- */

static void test_int_edges(void **state)
{
	static const int32_t v[] = {INT32_MIN, INT32_MAX, 0, -1, 1, 0x12345678};
	static const char *w[] = {"80000000", "7fffffff", "00000000", "ffffffff", "00000001",
	                          "12345678"};
	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		unsigned char buf[4];
		int32_t in = v[i], out = 0;
		rc_xdr x;
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
		assert_true(rc_xdr_int(&x, &in));
		assert_int_equal(rc_xdr_getpos(&x), 4);
		assert_wire(buf, 4, w[i]);
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_DECODE);
		assert_true(rc_xdr_int(&x, &out));
		assert_int_equal(out, in);
	}
}

static void test_int_short_buffer(void **state)
{
	unsigned char buf[8] = {0};
	int32_t v = 7;
	uint64_t h = 7;
	rc_xdr x;
	(void)state;
	for (size_t n = 0; n < 4; n++) {
		rc_xdrmem_create(&x, buf, n, RC_XDR_ENCODE);
		assert_false(rc_xdr_int(&x, &v));
		assert_int_equal(rc_xdr_getpos(&x), 0);
		rc_xdrmem_create(&x, buf, n, RC_XDR_DECODE);
		assert_false(rc_xdr_int(&x, &v));
		assert_int_equal(v, 7);
		assert_int_equal(rc_xdr_getpos(&x), 0);
	}
	for (size_t n = 0; n < 8; n++) {
		rc_xdrmem_create(&x, buf, n, RC_XDR_ENCODE);
		assert_false(rc_xdr_u_hyper(&x, &h));
		rc_xdrmem_create(&x, buf, n, RC_XDR_DECODE);
		assert_false(rc_xdr_u_hyper(&x, &h));
		assert_int_equal(h, 7);
	}
	/* nothing was written by the failed encodes */
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0);
}

static void test_u_int_edges(void **state)
{
	static const uint32_t v[] = {0, 1, UINT32_MAX, 0x80000000u, 0xdeadbeefu};
	static const char *w[] = {"00000000", "00000001", "ffffffff", "80000000", "deadbeef"};
	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		unsigned char buf[4];
		uint32_t in = v[i], out = 0;
		rc_xdr x;
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
		assert_true(rc_xdr_u_int(&x, &in));
		assert_wire(buf, rc_xdr_getpos(&x), w[i]);
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_DECODE);
		assert_true(rc_xdr_u_int(&x, &out));
		assert_int_equal(out, in);
	}
}

static void test_hyper_edges(void **state)
{
	static const int64_t v[] = {INT64_MIN, INT64_MAX, 0, -1, 1, 0x0102030405060708LL,
	                            (int64_t)INT32_MIN - 1};
	static const char *w[] = {"80000000 00000000", "7fffffff ffffffff", "00000000 00000000",
	                          "ffffffff ffffffff", "00000000 00000001", "01020304 05060708",
	                          "ffffffff 7fffffff"};
	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		unsigned char buf[8];
		int64_t in = v[i], out = 0;
		rc_xdr x;
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
		assert_true(rc_xdr_hyper(&x, &in));
		assert_wire(buf, rc_xdr_getpos(&x), w[i]);
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_DECODE);
		assert_true(rc_xdr_hyper(&x, &out));
		assert_true(out == in);
	}
}

static void test_u_hyper_edges(void **state)
{
	static const uint64_t v[] = {0, 1, UINT64_MAX, 0x8000000000000000ULL, 0xffffffffULL,
	                             0x100000000ULL};
	static const char *w[] = {"00000000 00000000", "00000000 00000001", "ffffffff ffffffff",
	                          "80000000 00000000", "00000000 ffffffff", "00000001 00000000"};
	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		unsigned char buf[8];
		uint64_t in = v[i], out = 0;
		rc_xdr x;
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
		assert_true(rc_xdr_u_hyper(&x, &in));
		assert_wire(buf, rc_xdr_getpos(&x), w[i]);
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_DECODE);
		assert_true(rc_xdr_u_hyper(&x, &out));
		assert_true(out == in);
	}
}

static void test_bool(void **state)
{
	unsigned char buf[8];
	bool t = true, f = false, out;
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_bool(&x, &t));
	assert_true(rc_xdr_bool(&x, &f));
	assert_wire(buf, rc_xdr_getpos(&x), "00000001 00000000");
	out = false;
	assert_true(dec_word(1, (rc_xdrproc)rc_xdr_bool, &out));
	assert_true(out);
	assert_true(dec_word(0, (rc_xdrproc)rc_xdr_bool, &out));
	assert_false(out);
	/* any other value is true, as libtirpc decodes it (servers send them: klm, rquota) */
	static const uint32_t others[] = { 2, 0xffffffffu, 0x80000000u, 0x00000100u };
	for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
		out = false;
		assert_true(dec_word(others[i], (rc_xdrproc)rc_xdr_bool, &out));
		assert_true(out);
	}
	/* ...and encodes back as 1 */
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_bool(&x, &out));
	assert_wire(buf, rc_xdr_getpos(&x), "00000001");
}

/* Sun's layouts (idlc --rpcgen-types): a bool in 4 bytes, long and unsigned long. */
static void test_bool32_and_long(void **state)
{
	unsigned char buf[16];
	int32_t b = 7, out = 0;
	long l = -2, lout = 0;
	unsigned long ul = 0xfffffffful, ulout = 0;
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_bool32(&x, &b));
	assert_true(rc_xdr_long(&x, &l));
	assert_true(rc_xdr_u_long(&x, &ul));
	assert_wire(buf, rc_xdr_getpos(&x), "00000001 fffffffe ffffffff");
	rc_xdrmem_create(&x, buf, 12, RC_XDR_DECODE);
	assert_true(rc_xdr_bool32(&x, &out));
	assert_true(rc_xdr_long(&x, &lout));
	assert_true(rc_xdr_u_long(&x, &ulout));
	assert_int_equal(out, 1);
	assert_true(lout == -2 && ulout == 0xfffffffful);
	assert_true(dec_word(9, (rc_xdrproc)rc_xdr_bool32, &out));
	assert_int_equal(out, 1);
	if (sizeof(long) > 4) { /* a value the wire cannot carry fails, never truncates */
		l = (long)INT32_MAX + 1;
		ul = (unsigned long)UINT32_MAX + 1;
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
		assert_false(rc_xdr_long(&x, &l));
		assert_false(rc_xdr_u_long(&x, &ul));
	}
}

enum color { RED = 0, GREEN = 2, BLUE = -5, BIG = INT32_MAX, SMALL = INT32_MIN };

static void test_enum(void **state)
{
	static const enum color v[] = {RED, GREEN, BLUE, BIG, SMALL};
	static const char *w[] = {"00000000", "00000002", "fffffffb", "7fffffff", "80000000"};
	_Static_assert(sizeof(enum color) == sizeof(int32_t), "C enums are int-sized");
	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		unsigned char buf[4];
		enum color in = v[i], out = RED;
		rc_xdr x;
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
		assert_true(rc_xdr_enum(&x, (int32_t *)&in));
		assert_wire(buf, rc_xdr_getpos(&x), w[i]);
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_DECODE);
		assert_true(rc_xdr_enum(&x, (int32_t *)&out));
		assert_int_equal(out, in);
	}
}

/* ---- floating point ---------------------------------------------------------------------- */

static void test_float_bits(void **state)
{
	/* NaNs (quiet, signalling, negative, with payloads), infinities, signed zeros,
	 * denormals, extremes: the bits travel unchanged. */
	static const uint32_t bits[] = {0x7fc00000u, 0x7fc12345u, 0x7f800001u, 0x7fbfffffu,
	                                0xffc00001u, 0xff812345u, 0x7f800000u, 0xff800000u,
	                                0x80000000u, 0x00000000u, 0x00000001u, 0x807fffffu,
	                                0x7f7fffffu, 0x3f800000u, 0xbf800000u};
	(void)state;
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		unsigned char buf[4];
		float in = u2f(bits[i]), out = 0;
		rc_xdr x;
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
		assert_true(rc_xdr_float(&x, &in));
		assert_int_equal(rc_xdr_getpos(&x), 4);
		assert_int_equal(((uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 |
		                  (uint32_t)buf[2] << 8 | buf[3]),
		                 bits[i]);
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_DECODE);
		assert_true(rc_xdr_float(&x, &out));
		assert_int_equal(f2u(out), bits[i]);
	}
	{
		/* the values themselves */
		unsigned char buf[12];
		float a = INFINITY, b = -INFINITY, c = -0.0f, oa = 0, ob = 0, oc = 0;
		rc_xdr x;
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
		assert_true(rc_xdr_float(&x, &a) && rc_xdr_float(&x, &b) && rc_xdr_float(&x, &c));
		assert_wire(buf, rc_xdr_getpos(&x), "7f800000 ff800000 80000000");
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_DECODE);
		assert_true(rc_xdr_float(&x, &oa) && rc_xdr_float(&x, &ob) && rc_xdr_float(&x, &oc));
		assert_true(isinf(oa) && oa > 0 && isinf(ob) && ob < 0);
		assert_true(oc == 0.0f && signbit(oc));
	}
}

static void test_double_bits(void **state)
{
	static const uint64_t bits[] = {
		0x7ff8000000000000ULL, 0x7ff8000000012345ULL, 0x7ff0000000000001ULL,
		0x7ff7ffffffffffffULL, 0xfff8000000000001ULL, 0xfff0deadbeef0001ULL,
		0x7ff0000000000000ULL, 0xfff0000000000000ULL, 0x8000000000000000ULL,
		0x0000000000000000ULL, 0x0000000000000001ULL, 0x7fefffffffffffffULL,
		0x3ff0000000000000ULL, 0x400921fb54442d18ULL};
	(void)state;
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		unsigned char buf[8];
		double in = u2d(bits[i]), out = 0;
		uint64_t wire = 0;
		rc_xdr x;
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
		assert_true(rc_xdr_double(&x, &in));
		assert_int_equal(rc_xdr_getpos(&x), 8);
		for (int k = 0; k < 8; k++)
			wire = wire << 8 | buf[k];
		assert_true(wire == bits[i]);
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_DECODE);
		assert_true(rc_xdr_double(&x, &out));
		assert_true(d2u(out) == bits[i]);
	}
	{
		unsigned char buf[24];
		double a = INFINITY, b = -INFINITY, c = -0.0, oa = 0, ob = 0, oc = 0;
		rc_xdr x;
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
		assert_true(rc_xdr_double(&x, &a) && rc_xdr_double(&x, &b) &&
		            rc_xdr_double(&x, &c));
		assert_wire(buf, rc_xdr_getpos(&x),
		            "7ff00000 00000000 fff00000 00000000 80000000 00000000");
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_DECODE);
		assert_true(rc_xdr_double(&x, &oa) && rc_xdr_double(&x, &ob) &&
		            rc_xdr_double(&x, &oc));
		assert_true(isinf(oa) && oa > 0 && isinf(ob) && ob < 0);
		assert_true(oc == 0.0 && signbit(oc));
	}
}

/* binary128 in big-endian (wire) order <-> an rc_quadruple */
static rc_quadruple quad_from_wire(const unsigned char w[16])
{
	rc_quadruple q;
	unsigned char b[16];
#if defined(RC_QUADRUPLE_IS_FLOAT) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (int i = 0; i < 16; i++)
		b[i] = w[15 - i];
#else
	memcpy(b, w, 16);
#endif
	memcpy(&q, b, 16);
	return q;
}

static void test_quadruple(void **state)
{
	static const char *w[] = {
		"3fff0000 00000000 00000000 00000000", /* 1.0 */
		"bfff0000 00000000 00000000 00000000", /* -1.0 */
		"80000000 00000000 00000000 00000000", /* -0.0 */
		"00000000 00000000 00000000 00000000", /* +0.0 */
		"7fff0000 00000000 00000000 00000000", /* +inf */
		"ffff0000 00000000 00000000 00000000", /* -inf */
		"7fff8000 00000000 00000000 00012345", /* quiet NaN with a payload */
		"7fff0000 00000000 00000000 00000001", /* signalling NaN */
		"00000000 00000000 00000000 00000001", /* smallest denormal */
	};
	(void)state;
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		unsigned char wire[16], buf[16], again[16];
		rc_quadruple in, out;
		rc_xdr x;
		assert_int_equal(hex(w[i], wire), 16);
		in = quad_from_wire(wire);
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
		assert_true(rc_xdr_quadruple(&x, &in));
		assert_int_equal(rc_xdr_getpos(&x), 16);
		assert_memory_equal(buf, wire, 16);
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_DECODE);
		assert_true(rc_xdr_quadruple(&x, &out));
		assert_memory_equal(&out, &in, 16);
		rc_xdrmem_create(&x, again, sizeof(again), RC_XDR_ENCODE);
		assert_true(rc_xdr_quadruple(&x, &out));
		assert_memory_equal(again, wire, 16);
	}
#ifdef RC_QUADRUPLE_IS_FLOAT
	{
		rc_quadruple one = 1, mone = -1, out;
		unsigned char buf[32];
		rc_xdr x;
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
		assert_true(rc_xdr_quadruple(&x, &one) && rc_xdr_quadruple(&x, &mone));
		assert_wire(buf, rc_xdr_getpos(&x),
		            "3fff0000 00000000 00000000 00000000 bfff0000 00000000 00000000 00000000");
		rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_DECODE);
		assert_true(rc_xdr_quadruple(&x, &out));
		assert_true(out == 1);
	}
#endif
	{
		unsigned char buf[16] = {0};
		rc_quadruple q;
		rc_xdr x;
		memset(&q, 0x11, sizeof(q));
		for (size_t n = 0; n < 16; n++) {
			rc_xdrmem_create(&x, buf, n, RC_XDR_ENCODE);
			assert_false(rc_xdr_quadruple(&x, &q));
			assert_int_equal(rc_xdr_getpos(&x), 0);
			rc_xdrmem_create(&x, buf, n, RC_XDR_DECODE);
			assert_false(rc_xdr_quadruple(&x, &q));
		}
		/* the failed encodes wrote nothing */
		for (size_t i = 0; i < sizeof(buf); i++)
			assert_int_equal(buf[i], 0);
	}
}

/* ---- narrow integers --------------------------------------------------------------------- */

static void test_char_range(void **state)
{
	char c;
	unsigned char buf[4];
	rc_xdr x;
	(void)state;
	/* encode: a char travels as the int it converts to (sign-extended where char is signed) */
	c = (char)0xff;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_char(&x, &c));
	if (CHAR_MIN < 0)
		assert_wire(buf, 4, "ffffffff");
	else
		assert_wire(buf, 4, "000000ff");
	c = 'A';
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_char(&x, &c));
	assert_wire(buf, 4, "00000041");

	/* decode accepts -128..255 (either signedness), refuses the rest */
	assert_true(dec_word(0xffffff80u, (rc_xdrproc)rc_xdr_char, &c));
	assert_int_equal((unsigned char)c, 0x80);
	assert_true(dec_word(0xffffffffu, (rc_xdrproc)rc_xdr_char, &c));
	assert_int_equal((unsigned char)c, 0xff);
	assert_true(dec_word(255, (rc_xdrproc)rc_xdr_char, &c));
	assert_int_equal((unsigned char)c, 0xff);
	assert_true(dec_word(0, (rc_xdrproc)rc_xdr_char, &c));
	assert_int_equal(c, 0);
	c = 'z';
	assert_false(dec_word(256, (rc_xdrproc)rc_xdr_char, &c));
	assert_false(dec_word(0xffffff7fu, (rc_xdrproc)rc_xdr_char, &c)); /* -129 */
	assert_false(dec_word(0x7fffffffu, (rc_xdrproc)rc_xdr_char, &c));
	assert_false(dec_word(0x80000000u, (rc_xdrproc)rc_xdr_char, &c));
	assert_int_equal(c, 'z');
}

static void test_u_char_range(void **state)
{
	unsigned char c = 255, buf[4];
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_u_char(&x, &c));
	assert_wire(buf, 4, "000000ff");
	assert_true(dec_word(0, (rc_xdrproc)rc_xdr_u_char, &c));
	assert_int_equal(c, 0);
	assert_true(dec_word(255, (rc_xdrproc)rc_xdr_u_char, &c));
	assert_int_equal(c, 255);
	c = 7;
	assert_false(dec_word(256, (rc_xdrproc)rc_xdr_u_char, &c));
	assert_false(dec_word(0xffffffffu, (rc_xdrproc)rc_xdr_u_char, &c));
	assert_false(dec_word(0x80000000u, (rc_xdrproc)rc_xdr_u_char, &c));
	assert_int_equal(c, 7);
}

static void test_short_range(void **state)
{
	int16_t s;
	unsigned char buf[8];
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	s = INT16_MIN;
	assert_true(rc_xdr_short(&x, &s));
	s = INT16_MAX;
	assert_true(rc_xdr_short(&x, &s));
	assert_wire(buf, rc_xdr_getpos(&x), "ffff8000 00007fff");
	assert_true(dec_word(0xffff8000u, (rc_xdrproc)rc_xdr_short, &s));
	assert_int_equal(s, INT16_MIN);
	assert_true(dec_word(0x7fff, (rc_xdrproc)rc_xdr_short, &s));
	assert_int_equal(s, INT16_MAX);
	assert_true(dec_word(0xffffffffu, (rc_xdrproc)rc_xdr_short, &s));
	assert_int_equal(s, -1);
	s = 5;
	assert_false(dec_word(0x8000, (rc_xdrproc)rc_xdr_short, &s));
	assert_false(dec_word(0xffff7fffu, (rc_xdrproc)rc_xdr_short, &s));
	assert_false(dec_word(0xffff, (rc_xdrproc)rc_xdr_short, &s));
	assert_int_equal(s, 5);
}

static void test_u_short_range(void **state)
{
	uint16_t s = UINT16_MAX;
	unsigned char buf[4];
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_u_short(&x, &s));
	assert_wire(buf, 4, "0000ffff");
	assert_true(dec_word(0, (rc_xdrproc)rc_xdr_u_short, &s));
	assert_int_equal(s, 0);
	assert_true(dec_word(0xffff, (rc_xdrproc)rc_xdr_u_short, &s));
	assert_int_equal(s, 0xffff);
	s = 9;
	assert_false(dec_word(0x10000, (rc_xdrproc)rc_xdr_u_short, &s));
	assert_false(dec_word(0xffffffffu, (rc_xdrproc)rc_xdr_u_short, &s));
	assert_int_equal(s, 9);
}

static void test_void(void **state)
{
	unsigned char buf[4];
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, 0, RC_XDR_ENCODE);
	assert_true(rc_xdr_void(&x, NULL));
	assert_int_equal(rc_xdr_getpos(&x), 0);
	rc_xdrmem_create(&x, buf, 0, RC_XDR_DECODE);
	assert_true(rc_xdr_void(&x, NULL));
	assert_int_equal(rc_xdr_getpos(&x), 0);
}

/* Every primitive is a no-op under RC_XDR_FREE (nothing to release, value untouched). */
static void test_scalars_free_noop(void **state)
{
	int32_t i = -3;
	uint32_t u = 3;
	int64_t h = -4;
	uint64_t uh = 4;
	bool b = true;
	float f = 1.5f;
	double d = 2.5;
	char c = 'c';
	unsigned char uc = 200;
	int16_t s = -9;
	uint16_t us = 9;
	rc_quadruple q;
	rc_xdr x;
	(void)state;
	memset(&q, 0x5a, sizeof(q));
	rc_xdrmem_create(&x, NULL, 0, RC_XDR_FREE);
	assert_true(rc_xdr_int(&x, &i) && rc_xdr_u_int(&x, &u) && rc_xdr_hyper(&x, &h) &&
	            rc_xdr_u_hyper(&x, &uh) && rc_xdr_bool(&x, &b) && rc_xdr_enum(&x, &i) &&
	            rc_xdr_float(&x, &f) && rc_xdr_double(&x, &d) && rc_xdr_char(&x, &c) &&
	            rc_xdr_u_char(&x, &uc) && rc_xdr_short(&x, &s) && rc_xdr_u_short(&x, &us) &&
	            rc_xdr_quadruple(&x, &q) && rc_xdr_opaque(&x, &u, 4));
	assert_true(i == -3 && u == 3 && h == -4 && uh == 4 && b && f == 1.5f && d == 2.5 &&
	            c == 'c' && uc == 200 && s == -9 && us == 9);
}

/* ---- opaque ------------------------------------------------------------------------------ */

static void test_opaque_padding(void **state)
{
	(void)state;
	for (uint32_t cnt = 0; cnt <= 9; cnt++) {
		unsigned char src[16], buf[20], out[16];
		size_t wire = (cnt + 3) / 4 * 4;
		rc_xdr x;
		memset(src, 0xa5, sizeof(src));
		memset(buf, 0xee, sizeof(buf));
		/* exactly enough room */
		rc_xdrmem_create(&x, buf, wire, RC_XDR_ENCODE);
		assert_true(rc_xdr_opaque(&x, src, cnt));
		assert_int_equal(rc_xdr_getpos(&x), wire);
		for (size_t i = 0; i < cnt; i++)
			assert_int_equal(buf[i], 0xa5);
		for (size_t i = cnt; i < wire; i++)
			assert_int_equal(buf[i], 0); /* padding bytes are zero */
		for (size_t i = wire; i < sizeof(buf); i++)
			assert_int_equal(buf[i], 0xee); /* nothing past the padding */

		/* decode: the bytes come back, the padding is skipped */
		memset(out, 0x33, sizeof(out));
		rc_xdrmem_create(&x, buf, wire, RC_XDR_DECODE);
		assert_true(rc_xdr_opaque(&x, out, cnt));
		assert_int_equal(rc_xdr_getpos(&x), wire);
		assert_memory_equal(out, src, cnt);
		for (size_t i = cnt; i < sizeof(out); i++)
			assert_int_equal(out[i], 0x33); /* no write past cnt */

		if (cnt == 0)
			continue;
		/* one byte short of the padded size fails and writes nothing */
		memset(buf, 0xee, sizeof(buf));
		rc_xdrmem_create(&x, buf, wire - 1, RC_XDR_ENCODE);
		assert_false(rc_xdr_opaque(&x, src, cnt));
		assert_int_equal(rc_xdr_getpos(&x), 0);
		for (size_t i = 0; i < sizeof(buf); i++)
			assert_int_equal(buf[i], 0xee);
		{
			unsigned char *g = tu_guard_alloc(wire - 1);
			rc_xdrmem_create(&x, g, wire - 1, RC_XDR_DECODE);
			assert_false(rc_xdr_opaque(&x, out, cnt));
			assert_int_equal(rc_xdr_getpos(&x), 0);
			tu_guard_free(g, wire - 1);
		}
	}
}

/* ---- variable-length opaque ------------------------------------------------------------- */

static void test_bytes_empty(void **state)
{
	unsigned char buf[8];
	char *p = "x", *out = NULL;
	uint32_t len = 0, olen = 99;
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_bytes(&x, &p, &len, 10));
	assert_wire(buf, rc_xdr_getpos(&x), "00000000");
	/* an empty value with a NULL pointer encodes too */
	p = NULL;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_bytes(&x, &p, &len, 0));
	assert_int_equal(rc_xdr_getpos(&x), 4);

	setup_alloc();
	rc_xdrmem_create(&x, buf, 4, RC_XDR_DECODE);
	assert_true(rc_xdr_bytes(&x, &out, &olen, 10));
	assert_int_equal(olen, 0);
	assert_non_null(out); /* allocated, at least 1 byte */
	assert_int_equal(tu_alloc.fresh, 1);
	rc_xdrmem_create(&x, NULL, 0, RC_XDR_FREE);
	assert_true(rc_xdr_bytes(&x, &out, &olen, 10));
	assert_null(out);
	assert_int_equal(tu_alloc.live, 0);
}

static void test_bytes_max(void **state)
{
	char data[7] = "abcdefg";
	char *p = data, *out = NULL;
	uint32_t len, olen = 0;
	unsigned char buf[16];
	rc_xdr x;
	(void)state;
	/* at the maximum */
	len = 7;
	memset(buf, 0xee, sizeof(buf));
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_bytes(&x, &p, &len, 7));
	assert_wire(buf, rc_xdr_getpos(&x), "00000007 61626364 65666700");
	setup_alloc();
	rc_xdrmem_create(&x, buf, 12, RC_XDR_DECODE);
	assert_true(rc_xdr_bytes(&x, &out, &olen, 7));
	assert_int_equal(olen, 7);
	assert_memory_equal(out, data, 7);
	assert_int_equal(tu_alloc.fresh, 1);
	assert_int_equal(tu_alloc.max_request, 7);
	free(out);

	/* one past the maximum: encode refuses, decode refuses before allocating */
	len = 7;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_false(rc_xdr_bytes(&x, &p, &len, 6));
	assert_int_equal(rc_xdr_getpos(&x), 0);
	setup_alloc();
	out = NULL;
	olen = 1234;
	rc_xdrmem_create(&x, buf, 12, RC_XDR_DECODE);
	assert_false(rc_xdr_bytes(&x, &out, &olen, 6));
	assert_null(out);
	assert_int_equal(olen, 1234);
	assert_int_equal(tu_alloc.calls, 0);

	/* a non-empty value needs a pointer */
	p = NULL;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_false(rc_xdr_bytes(&x, &p, &len, 10));
	/* too little room for the data: fails without a partial write */
	p = data;
	memset(buf, 0xee, sizeof(buf));
	rc_xdrmem_create(&x, buf, 11, RC_XDR_ENCODE);
	assert_false(rc_xdr_bytes(&x, &p, &len, 10));
	assert_int_equal(rc_xdr_getpos(&x), 0);
	assert_int_equal(buf[0], 0xee);
}

static void test_bytes_caller_buffer(void **state)
{
	char data[5] = {1, 2, 3, 4, 5};
	char *p = data, mine[8], *out = mine;
	uint32_t len = 5, olen = 0;
	unsigned char buf[12];
	rc_xdr x;
	(void)state;
	memset(mine, 0x77, sizeof(mine));
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_bytes(&x, &p, &len, 8));
	setup_alloc();
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_DECODE);
	assert_true(rc_xdr_bytes(&x, &out, &olen, 8));
	assert_ptr_equal(out, mine); /* not reallocated */
	assert_int_equal(tu_alloc.calls, 0);
	assert_int_equal(olen, 5);
	assert_memory_equal(mine, data, 5);
	assert_int_equal((unsigned char)mine[5], 0x77); /* padding not copied into it */
}

static void test_string_basic(void **state)
{
	char *s = "hello", *out = NULL;
	unsigned char buf[16];
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_string(&x, &s, 5));
	assert_wire(buf, rc_xdr_getpos(&x), "00000005 68656c6c 6f000000");
	setup_alloc();
	rc_xdrmem_create(&x, buf, 12, RC_XDR_DECODE);
	assert_true(rc_xdr_string(&x, &out, 5));
	assert_string_equal(out, "hello");
	assert_int_equal(tu_alloc.max_request, 6); /* length + NUL */
	rc_xdr_free((rc_xdrproc)rc_xdr_wrapstring, &out);
	assert_null(out);
	assert_int_equal(tu_alloc.live, 0);
}

static void test_string_empty(void **state)
{
	char *s = "", *out = NULL;
	unsigned char buf[8];
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_string(&x, &s, 0));
	assert_wire(buf, rc_xdr_getpos(&x), "00000000");
	rc_xdrmem_create(&x, buf, 4, RC_XDR_DECODE);
	assert_true(rc_xdr_string(&x, &out, 0));
	assert_string_equal(out, "");
	rc_xdr_free((rc_xdrproc)rc_xdr_wrapstring, &out);
	assert_null(out);
}

static void test_string_max_plus_one(void **state)
{
	char *s = "abcd", *out = NULL;
	unsigned char buf[16];
	rc_xdr x;
	(void)state;
	/* at max */
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_string(&x, &s, 4));
	assert_int_equal(rc_xdr_getpos(&x), 8);
	rc_xdrmem_create(&x, buf, 8, RC_XDR_DECODE);
	assert_true(rc_xdr_string(&x, &out, 4));
	assert_string_equal(out, "abcd");
	free(out);
	out = NULL;
	/* max + 1 */
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_false(rc_xdr_string(&x, &s, 3));
	assert_int_equal(rc_xdr_getpos(&x), 0);
	setup_alloc();
	rc_xdrmem_create(&x, buf, 8, RC_XDR_DECODE);
	assert_false(rc_xdr_string(&x, &out, 3));
	assert_null(out);
	assert_int_equal(tu_alloc.calls, 0);
}

static void test_string_embedded_nul(void **state)
{
	unsigned char wire[12];
	size_t n = hex("00000005 61620063 64000000", wire); /* "ab\0cd" */
	unsigned char *g = tu_guard_dup(wire, n);
	char *out = NULL;
	rc_xdr x;
	(void)state;
	setup_alloc();
	rc_xdrmem_create(&x, g, n, RC_XDR_DECODE);
	assert_false(rc_xdr_string(&x, &out, 100));
	rc_xdr_free((rc_xdrproc)rc_xdr_wrapstring, &out);
	assert_null(out);
	assert_int_equal(tu_alloc.live, 0);
	/* a NUL as the very last byte is also refused */
	n = hex("00000003 61620000", wire);
	memcpy(g + 12 - n, wire, n);
	rc_xdrmem_create(&x, g + 12 - n, n, RC_XDR_DECODE);
	assert_false(rc_xdr_string(&x, &out, 100));
	rc_xdr_free((rc_xdrproc)rc_xdr_wrapstring, &out);
	assert_int_equal(tu_alloc.live, 0);
	tu_guard_free(g, 12);
}

static void test_string_null_encode(void **state)
{
	char *s = NULL;
	unsigned char buf[8];
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_false(rc_xdr_string(&x, &s, 10));
	assert_false(rc_xdr_wrapstring(&x, &s));
	assert_int_equal(rc_xdr_getpos(&x), 0);
}

static void test_string_caller_buffer(void **state)
{
	char *s = "abc", mine[8], *out = mine;
	unsigned char buf[8];
	rc_xdr x;
	(void)state;
	memset(mine, 'Z', sizeof(mine));
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_string(&x, &s, 7));
	setup_alloc();
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_DECODE);
	assert_true(rc_xdr_string(&x, &out, 7));
	assert_ptr_equal(out, mine);
	assert_int_equal(tu_alloc.calls, 0);
	assert_string_equal(mine, "abc");
	assert_int_equal(mine[4], 'Z');
}

static void test_string_short_buffer(void **state)
{
	/* the length says 5 but only 4 data bytes (and no padding) follow */
	unsigned char wire[12];
	size_t n = hex("00000005 61626364", wire);
	unsigned char *g = tu_guard_dup(wire, n);
	char *out = NULL;
	rc_xdr x;
	(void)state;
	setup_alloc();
	rc_xdrmem_create(&x, g, n, RC_XDR_DECODE);
	assert_false(rc_xdr_string(&x, &out, 100));
	assert_null(out);
	assert_int_equal(tu_alloc.calls, 0);
	/* 5 data bytes but the padding is missing */
	tu_guard_free(g, n);
	n = hex("00000005 61626364 65", wire);
	g = tu_guard_dup(wire, n);
	rc_xdrmem_create(&x, g, n, RC_XDR_DECODE);
	assert_false(rc_xdr_string(&x, &out, 100));
	assert_null(out);
	assert_int_equal(tu_alloc.calls, 0);
	tu_guard_free(g, n);
}

/* ---- optional data, references, unions, free ------------------------------------------ */

struct node {
	int32_t value;
	char *name;
	struct node *next;
};

static bool xdr_node(rc_xdr *x, struct node *n)
{
	return rc_xdr_int(x, &n->value) && rc_xdr_wrapstring(x, &n->name) &&
	       rc_xdr_pointer(x, &n->next, sizeof(struct node), (rc_xdrproc)xdr_node);
}

static void test_pointer_null_and_present(void **state)
{
	int32_t v = 0x11223344, *p = NULL, *out;
	unsigned char buf[16];
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_pointer(&x, &p, sizeof(int32_t), (rc_xdrproc)rc_xdr_int));
	p = &v;
	assert_true(rc_xdr_pointer(&x, &p, sizeof(int32_t), (rc_xdrproc)rc_xdr_int));
	assert_wire(buf, rc_xdr_getpos(&x), "00000000 00000001 11223344");

	setup_alloc();
	rc_xdrmem_create(&x, buf, 12, RC_XDR_DECODE);
	out = &v; /* a "no object" on the wire clears the caller's pointer, frees nothing */
	assert_true(rc_xdr_pointer(&x, &out, sizeof(int32_t), (rc_xdrproc)rc_xdr_int));
	assert_null(out);
	assert_true(rc_xdr_pointer(&x, &out, sizeof(int32_t), (rc_xdrproc)rc_xdr_int));
	assert_non_null(out);
	assert_int_equal(*out, 0x11223344);
	assert_int_equal(tu_alloc.fresh, 1);
	rc_xdrmem_create(&x, NULL, 0, RC_XDR_FREE);
	assert_true(rc_xdr_pointer(&x, &out, sizeof(int32_t), (rc_xdrproc)rc_xdr_int));
	assert_null(out);
	assert_int_equal(tu_alloc.live, 0);

	/* a flag other than 0 or 1 is a bool that says "present", as with libtirpc */
	{
		unsigned char w[8];
		size_t n = hex("00000002 00000005", w);
		out = NULL;
		rc_xdrmem_create(&x, w, n, RC_XDR_DECODE);
		assert_true(rc_xdr_pointer(&x, &out, sizeof(int32_t), (rc_xdrproc)rc_xdr_int));
		assert_non_null(out);
		assert_int_equal(*out, 5);
		rc_xdrmem_create(&x, NULL, 0, RC_XDR_FREE);
		assert_true(rc_xdr_pointer(&x, &out, sizeof(int32_t), (rc_xdrproc)rc_xdr_int));
		assert_null(out);
	}
	/* present, but the object is cut off: fails; free releases what was allocated */
	{
		unsigned char w[4];
		size_t n = hex("00000001", w);
		out = NULL;
		setup_alloc();
		rc_xdrmem_create(&x, w, n, RC_XDR_DECODE);
		assert_false(rc_xdr_pointer(&x, &out, sizeof(int32_t), (rc_xdrproc)rc_xdr_int));
		assert_int_equal(tu_alloc.calls, 0); /* nothing can follow: no allocation */
		rc_xdr_free((rc_xdrproc)rc_xdr_int, &out);
		assert_int_equal(tu_alloc.live, 0);
	}
}

static void test_pointer_decode_into_caller_object(void **state)
{
	int32_t v = 5, mine = 0, *out = &mine;
	int32_t *p = &v;
	unsigned char buf[8];
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_pointer(&x, &p, sizeof(int32_t), (rc_xdrproc)rc_xdr_int));
	setup_alloc();
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_DECODE);
	assert_true(rc_xdr_pointer(&x, &out, sizeof(int32_t), (rc_xdrproc)rc_xdr_int));
	assert_ptr_equal(out, &mine);
	assert_int_equal(mine, 5);
	assert_int_equal(tu_alloc.calls, 0);
}

static void test_pointer_nested_list(void **state)
{
	struct node n3 = {3, "three", NULL}, n2 = {2, "two", &n3}, n1 = {1, "one", &n2};
	struct node *head = &n1, *out = NULL;
	unsigned char buf[256];
	size_t len;
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(rc_xdr_pointer(&x, &head, sizeof(struct node), (rc_xdrproc)xdr_node));
	len = rc_xdr_getpos(&x);
	assert_wire(buf, len,
	            "00000001 00000001 00000003 6f6e6500"
	            "00000001 00000002 00000003 74776f00"
	            "00000001 00000003 00000005 74687265 65000000"
	            "00000000");
	setup_alloc();
	rc_xdrmem_create(&x, buf, len, RC_XDR_DECODE);
	assert_true(rc_xdr_pointer(&x, &out, sizeof(struct node), (rc_xdrproc)xdr_node));
	assert_int_equal(rc_xdr_getpos(&x), len);
	assert_non_null(out);
	assert_int_equal(out->value, 1);
	assert_string_equal(out->name, "one");
	assert_int_equal(out->next->value, 2);
	assert_string_equal(out->next->name, "two");
	assert_int_equal(out->next->next->value, 3);
	assert_string_equal(out->next->next->name, "three");
	assert_null(out->next->next->next);
	assert_int_equal(tu_alloc.live, 6);
	{
		struct node *keep = out;
		rc_xdr_free((rc_xdrproc)xdr_node, keep); /* frees name and the tail, not keep */
		assert_null(keep->name);
		assert_null(keep->next);
		assert_int_equal(tu_alloc.live, 1);
		free(keep);
	}
	assert_int_equal(tu_alloc.live, 0);
}

static void test_reference(void **state)
{
	int64_t v = -2, *p = &v, *out = NULL, *none = NULL;
	unsigned char buf[8];
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_false(rc_xdr_reference(&x, &none, sizeof(int64_t), (rc_xdrproc)rc_xdr_hyper));
	assert_int_equal(rc_xdr_getpos(&x), 0);
	assert_true(rc_xdr_reference(&x, &p, sizeof(int64_t), (rc_xdrproc)rc_xdr_hyper));
	assert_wire(buf, rc_xdr_getpos(&x), "ffffffff fffffffe"); /* no flag on the wire */
	setup_alloc();
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_DECODE);
	assert_true(rc_xdr_reference(&x, &out, sizeof(int64_t), (rc_xdrproc)rc_xdr_hyper));
	assert_true(*out == -2);
	assert_int_equal(tu_alloc.fresh, 1);
	rc_xdrmem_create(&x, NULL, 0, RC_XDR_FREE);
	assert_true(rc_xdr_reference(&x, &out, sizeof(int64_t), (rc_xdrproc)rc_xdr_hyper));
	assert_null(out);
	assert_int_equal(tu_alloc.live, 0);
}

/* union shape { case 1: int32 i; case 2: string s<>; case 3: void; default: hyper h; } */
struct shape {
	int32_t kind;
	union {
		int32_t i;
		char *s;
		int64_t h;
	} u;
};

static bool xdr_shape_s(rc_xdr *x, char **s)
{
	return rc_xdr_string(x, s, 64);
}

static const rc_xdr_discrim shape_arms[] = {
	{1, (rc_xdrproc)rc_xdr_int},
	{2, (rc_xdrproc)xdr_shape_s},
	{3, (rc_xdrproc)rc_xdr_void},
	{0, NULL},
};

static bool xdr_shape(rc_xdr *x, struct shape *s)
{
	return rc_xdr_union(x, &s->kind, &s->u, shape_arms, (rc_xdrproc)rc_xdr_hyper);
}

static bool xdr_shape_nodefault(rc_xdr *x, struct shape *s)
{
	return rc_xdr_union(x, &s->kind, &s->u, shape_arms, NULL);
}

static void test_union_arms(void **state)
{
	struct shape a = {1, {.i = -7}}, b = {2, {.s = "xy"}}, c = {3, {0}},
	             d = {99, {.h = 0x100000002LL}}, o;
	unsigned char buf[64];
	size_t len;
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(xdr_shape(&x, &a) && xdr_shape(&x, &b) && xdr_shape(&x, &c) &&
	            xdr_shape(&x, &d));
	len = rc_xdr_getpos(&x);
	assert_wire(buf, len,
	            "00000001 fffffff9 00000002 00000002 78790000 00000003 00000063 00000001 "
	            "00000002");
	setup_alloc();
	rc_xdrmem_create(&x, buf, len, RC_XDR_DECODE);
	memset(&o, 0, sizeof(o));
	assert_true(xdr_shape(&x, &o));
	assert_int_equal(o.kind, 1);
	assert_int_equal(o.u.i, -7);
	memset(&o, 0, sizeof(o));
	assert_true(xdr_shape(&x, &o));
	assert_int_equal(o.kind, 2);
	assert_string_equal(o.u.s, "xy");
	rc_xdr_free((rc_xdrproc)xdr_shape, &o); /* the string arm is released */
	assert_null(o.u.s);
	assert_int_equal(tu_alloc.live, 0);
	memset(&o, 0, sizeof(o));
	assert_true(xdr_shape(&x, &o));
	assert_int_equal(o.kind, 3);
	memset(&o, 0, sizeof(o));
	assert_true(xdr_shape(&x, &o)); /* default arm */
	assert_int_equal(o.kind, 99);
	assert_true(o.u.h == 0x100000002LL);
	assert_int_equal(rc_xdr_getpos(&x), len);
}

static void test_union_no_default(void **state)
{
	struct shape d = {99, {.h = 1}}, o = {0, {0}};
	unsigned char buf[16], wire[8];
	size_t n;
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_false(xdr_shape_nodefault(&x, &d));
	n = hex("00000063 00000001", wire);
	rc_xdrmem_create(&x, wire, n, RC_XDR_DECODE);
	assert_false(xdr_shape_nodefault(&x, &o));
	/* an arm that matches still works without a default */
	n = hex("00000001 00000005", wire);
	rc_xdrmem_create(&x, wire, n, RC_XDR_DECODE);
	assert_true(xdr_shape_nodefault(&x, &o));
	assert_int_equal(o.u.i, 5);
	/* the discriminant itself cut off */
	rc_xdrmem_create(&x, wire, 3, RC_XDR_DECODE);
	assert_false(xdr_shape_nodefault(&x, &o));
}

/* rc_xdr_free sets every pointer it released to NULL and every length to 0. */
struct bag {
	char *str;
	struct { uint32_t len; char *val; } blob;
	struct { uint32_t len; int32_t *val; } ints;
	struct { uint32_t len; char **val; } names;
	struct node *list;
	int32_t *opt;
};

static bool xdr_bag(rc_xdr *x, struct bag *b)
{
	return rc_xdr_string(x, &b->str, 100) &&
	       rc_xdr_bytes(x, &b->blob.val, &b->blob.len, 100) &&
	       rc_xdr_array(x, &b->ints.val, &b->ints.len, 100, sizeof(int32_t),
	                    (rc_xdrproc)rc_xdr_int) &&
	       rc_xdr_array(x, &b->names.val, &b->names.len, 100, sizeof(char *),
	                    (rc_xdrproc)rc_xdr_wrapstring) &&
	       rc_xdr_pointer(x, &b->list, sizeof(struct node), (rc_xdrproc)xdr_node) &&
	       rc_xdr_pointer(x, &b->opt, sizeof(int32_t), (rc_xdrproc)rc_xdr_int);
}

/* A caller's buffer in *cpp: it holds *sizep bytes (more data fails, nothing written past it);
 * *sizep 0 means maxsize (Sun's rule). */
static void test_bytes_into_callers_buffer(void **state)
{
	static const unsigned char wire[] = {0, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8};
	char mine[16];
	char *p = mine;
	uint32_t n = 4;
	rc_xdr x;
	(void)state;
	memset(mine, 0x55, sizeof(mine));
	rc_xdrmem_create(&x, (void *)wire, sizeof(wire), RC_XDR_DECODE);
	assert_false(rc_xdr_bytes(&x, &p, &n, UINT32_MAX)); /* 8 bytes into a buffer of 4 */
	assert_int_equal(mine[0], 0x55);
	n = sizeof(mine);
	rc_xdrmem_create(&x, (void *)wire, sizeof(wire), RC_XDR_DECODE);
	assert_true(rc_xdr_bytes(&x, &p, &n, UINT32_MAX));
	assert_ptr_equal(p, mine);
	assert_int_equal(n, 8);
	assert_memory_equal(mine, wire + 4, 8);
	assert_int_equal(mine[8], 0x55);
	n = 0; /* Sun's rule: the buffer holds maxsize */
	rc_xdrmem_create(&x, (void *)wire, sizeof(wire), RC_XDR_DECODE);
	assert_false(rc_xdr_bytes(&x, &p, &n, 7));
	rc_xdrmem_create(&x, (void *)wire, sizeof(wire), RC_XDR_DECODE);
	assert_true(rc_xdr_bytes(&x, &p, &n, 8));
	assert_int_equal(n, 8);
}

/* A lending stream (the server's argument decoding): an opaque<> of RC_XDR_LEND_MIN bytes or
 * more points into the buffer (no copy, nothing allocated), a smaller one is copied; a free
 * with the window leaves the lent pointer and frees the copied one (ASan checks both). */
static void test_bytes_lent(void **state)
{
	enum { BIG = RC_XDR_LEND_MIN, SMALL = 8 };
	static unsigned char buf[4 + BIG + 4 + SMALL];
	char *big = NULL, *small = NULL;
	uint32_t nbig = 0, nsmall = 0;
	rc_xdr x;
	(void)state;
	buf[2] = BIG >> 8;
	buf[3] = BIG & 0xff;
	memset(buf + 4, 'b', BIG);
	buf[4 + BIG + 3] = SMALL;
	memset(buf + 8 + BIG, 's', SMALL);
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_DECODE);
	x.x_lend_lo = buf;
	x.x_lend_hi = buf + sizeof(buf);
	assert_true(rc_xdr_bytes(&x, &big, &nbig, UINT32_MAX));
	assert_true(rc_xdr_bytes(&x, &small, &nsmall, UINT32_MAX));
	assert_int_equal(nbig, BIG);
	assert_ptr_equal(big, buf + 4); /* lent */
	assert_int_equal(nsmall, SMALL);
	assert_true((unsigned char *)small < buf || (unsigned char *)small >= buf + sizeof(buf));
	assert_memory_equal(small, "ssssssss", SMALL);
	assert_int_equal(rc_xdr_getpos(&x), sizeof(buf));
	rc_xdrmem_create(&x, NULL, 0, RC_XDR_FREE);
	x.x_lend_lo = buf;
	x.x_lend_hi = buf + sizeof(buf);
	assert_true(rc_xdr_bytes(&x, &big, &nbig, UINT32_MAX)); /* not freed: the buffer's */
	assert_true(rc_xdr_bytes(&x, &small, &nsmall, UINT32_MAX)); /* freed */
	assert_null(big);
	assert_null(small);
	/* without a window nothing is lent */
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_DECODE);
	assert_true(rc_xdr_bytes(&x, &big, &nbig, UINT32_MAX));
	assert_true((unsigned char *)big < buf || (unsigned char *)big >= buf + sizeof(buf));
	free(big);
}

static void test_free_leaves_null(void **state)
{
	int32_t ints[3] = {1, 2, 3}, opt = 9;
	char *names[2] = {"a", "bc"};
	struct node n2 = {2, "n2", NULL}, n1 = {1, "n1", &n2};
	struct bag in = {"str", {4, "blob"}, {3, ints}, {2, names}, &n1, &opt}, out;
	unsigned char buf[256];
	size_t len;
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_true(xdr_bag(&x, &in));
	len = rc_xdr_getpos(&x);
	memset(&out, 0, sizeof(out));
	setup_alloc();
	rc_xdrmem_create(&x, buf, len, RC_XDR_DECODE);
	assert_true(xdr_bag(&x, &out));
	assert_int_equal(rc_xdr_getpos(&x), len);
	assert_string_equal(out.str, "str");
	assert_memory_equal(out.blob.val, "blob", 4);
	assert_int_equal(out.ints.len, 3);
	assert_int_equal(out.ints.val[2], 3);
	assert_string_equal(out.names.val[1], "bc");
	assert_string_equal(out.list->next->name, "n2");
	assert_int_equal(*out.opt, 9);
	assert_true(tu_alloc.live > 0);
	rc_xdr_free((rc_xdrproc)xdr_bag, &out);
	assert_null(out.str);
	assert_null(out.blob.val);
	assert_int_equal(out.blob.len, 0);
	assert_null(out.ints.val);
	assert_int_equal(out.ints.len, 0);
	assert_null(out.names.val);
	assert_int_equal(out.names.len, 0);
	assert_null(out.list);
	assert_null(out.opt);
	assert_int_equal(tu_alloc.live, 0);
	/* freeing again is harmless */
	rc_xdr_free((rc_xdrproc)xdr_bag, &out);
	assert_int_equal(tu_alloc.live, 0);
	/* NULL proc or object: nothing happens */
	rc_xdr_free(NULL, &out);
	rc_xdr_free((rc_xdrproc)xdr_bag, NULL);
}

/* ---- a record read in part: x_rest and x_pull ------------------------------------------- */

/* The record all[0..total) of which the window shows [0..win): x_pull reads the rest from it,
 * as a stream transport would; it can also fail (a connection cut). */
typedef struct pull_src {
	unsigned char *all;
	size_t total, win;
	int pulls, completes;
	bool fail;
} pull_src;

static pull_src *g_src;

static bool fake_pull(rc_xdr *x, void *dst, size_t n)
{
	pull_src *ps = g_src;
	x->x_pull = NULL;
	x->x_rest = 0;
	if (ps->fail)
		return false;
	if (dst != NULL) {
		assert_ptr_equal(x->x_pos, x->x_end); /* the window was used up first */
		assert_true(ps->win + n <= ps->total);
		memcpy(dst, ps->all + ps->win, n);
		ps->pulls++;
		x->x_base = x->x_pos = ps->all + ps->win + n;
	} else {
		ps->completes++; /* the window's unread bytes and the rest, in place */
	}
	x->x_end = ps->all + ps->total;
	return true;
}

static void partial_decoder(rc_xdr *x, pull_src *ps)
{
	g_src = ps;
	rc_xdrmem_create(x, ps->all, ps->win, RC_XDR_DECODE);
	x->x_rest = ps->total - ps->win;
	x->x_pull = fake_pull;
}

/*
 * Decoding a record read in part: variable-length data that runs past the window is pulled
 * straight into its buffer (the caller's, or one allocated), with its padding wherever the
 * window ends in it; anything else that runs past completes the record first; lengths are
 * checked against the whole record (window and rest); a pull that fails fails the decode.
 */
static void test_decode_pulls_past_window(void **state)
{
	enum { N = 5003 }; /* odd: 1 byte of padding */
	unsigned char *all = malloc(4 + N + 1 + 4 + 4 + 8);
	size_t total = 0;
	rc_xdr x;
	(void)state;
	assert_non_null(all);
	/* opaque<> of N bytes, u_int 7, string "abcd" */
	all[0] = 0, all[1] = 0, all[2] = N >> 8, all[3] = N & 0xff;
	for (size_t i = 0; i < N; i++)
		all[4 + i] = (unsigned char)(i * 13 + 5);
	all[4 + N] = 0;
	total = 4 + N + 1;
	memcpy(all + total, "\0\0\0\7\0\0\0\4abcd", 12);
	total += 12;

	/* the window ends in the data, just after it, and inside its padding */
	size_t wins[] = {100, 4 + N, 4 + N + 1, 4 + N - 1, 8};
	for (size_t w = 0; w < sizeof wins / sizeof wins[0]; w++) {
		for (int mine = 0; mine < 2; mine++) {
			pull_src ps = {all, total, wins[w], 0, 0, false};
			char buf[N], *val = mine ? buf : NULL, *str = NULL;
			uint32_t len = mine ? N : 0, u = 0;
			partial_decoder(&x, &ps);
			assert_true(rc_xdr_bytes(&x, &val, &len, 1u << 20));
			assert_int_equal(len, N);
			if (mine)
				assert_ptr_equal(val, buf);
			for (size_t i = 0; i < N; i++)
				assert_int_equal((unsigned char)val[i], (unsigned char)(i * 13 + 5));
			assert_true(rc_xdr_u_int(&x, &u));
			assert_int_equal(u, 7);
			assert_true(rc_xdr_string(&x, &str, 100));
			assert_string_equal(str, "abcd");
			assert_int_equal(ps.pulls + ps.completes, 1);
			assert_int_equal(ps.pulls, wins[w] < 4 + N + 1 ? 1 : 0); /* (padding too) */
			free(str);
			if (!mine)
				free(val);
		}
	}
	/* a u_int across the window's end: the record completes first, then decodes */
	{
		pull_src ps = {all, total, 4 + N + 1 + 2, 0, 0, false};
		char *val = NULL, *str = NULL;
		uint32_t len = 0, u = 0;
		partial_decoder(&x, &ps);
		assert_true(rc_xdr_bytes(&x, &val, &len, 1u << 20));
		assert_true(rc_xdr_u_int(&x, &u));
		assert_int_equal(u, 7);
		assert_int_equal(ps.completes, 1);
		assert_true(rc_xdr_string(&x, &str, 100));
		free(str);
		free(val);
	}
	/* a length longer than window and rest together: refused before anything is allocated */
	{
		pull_src ps = {all, total, 100, 0, 0, false};
		char *val = NULL;
		uint32_t len = 0;
		all[2] = 0xff; /* 65,000-odd bytes announced */
		partial_decoder(&x, &ps);
		assert_false(rc_xdr_bytes(&x, &val, &len, 1u << 20));
		assert_null(val);
		assert_int_equal(ps.pulls + ps.completes, 0);
		all[2] = N >> 8;
	}
	/* the pull fails (the connection was cut): the decode fails */
	{
		pull_src ps = {all, total, 100, 0, 0, true};
		char buf[N], *val = buf;
		uint32_t len = N;
		partial_decoder(&x, &ps);
		assert_false(rc_xdr_bytes(&x, &val, &len, 1u << 20));
	}
	free(all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_int_edges),
		cmocka_unit_test(test_int_short_buffer),
		cmocka_unit_test(test_u_int_edges),
		cmocka_unit_test(test_hyper_edges),
		cmocka_unit_test(test_u_hyper_edges),
		cmocka_unit_test(test_bool),
		cmocka_unit_test(test_bool32_and_long),
		cmocka_unit_test(test_enum),
		cmocka_unit_test(test_float_bits),
		cmocka_unit_test(test_double_bits),
		cmocka_unit_test(test_quadruple),
		cmocka_unit_test(test_char_range),
		cmocka_unit_test(test_u_char_range),
		cmocka_unit_test(test_short_range),
		cmocka_unit_test(test_u_short_range),
		cmocka_unit_test(test_void),
		cmocka_unit_test(test_scalars_free_noop),
		cmocka_unit_test(test_opaque_padding),
		cmocka_unit_test(test_bytes_empty),
		cmocka_unit_test(test_bytes_max),
		cmocka_unit_test(test_bytes_caller_buffer),
		cmocka_unit_test(test_string_basic),
		cmocka_unit_test(test_string_empty),
		cmocka_unit_test(test_string_max_plus_one),
		cmocka_unit_test(test_string_embedded_nul),
		cmocka_unit_test(test_string_null_encode),
		cmocka_unit_test(test_string_caller_buffer),
		cmocka_unit_test(test_string_short_buffer),
		cmocka_unit_test(test_pointer_null_and_present),
		cmocka_unit_test(test_pointer_decode_into_caller_object),
		cmocka_unit_test(test_pointer_nested_list),
		cmocka_unit_test(test_reference),
		cmocka_unit_test(test_union_arms),
		cmocka_unit_test(test_union_no_default),
		cmocka_unit_test(test_free_leaves_null),
		cmocka_unit_test(test_bytes_lent),
		cmocka_unit_test(test_bytes_into_callers_buffer),
		cmocka_unit_test(test_decode_pulls_past_window),
	};
	return cmocka_run_group_tests_name("xdr_prim", tests, NULL, NULL);
}

/*
 * Byte-for-byte agreement with libtirpc's XDR: every primitive, opaque data, strings, arrays
 * (bulk scalar kinds and struct elements), vectors, optional data and unions are encoded by
 * both libraries and compared, and each library decodes what the other encoded. The record
 * streams are crossed too: libtirpc's xdrrec writer into rc_recreader, and rc_xdrrec_create
 * into libtirpc's xdrrec reader. remotecall's names are all rc_-prefixed, so both link here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>

#include <remotecall/xdr.h>

#include "xdr_testutil.h"

#define BUFSZ 65536
static unsigned char rbuf[BUFSZ], tbuf[BUFSZ];

/* Encode with remotecall / libtirpc; returns the length. */
static size_t r_enc(rc_xdrproc proc, void *obj)
{
	rc_xdr x;
	rc_xdrmem_create(&x, rbuf, BUFSZ, RC_XDR_ENCODE);
	assert_true(proc(&x, obj));
	return rc_xdr_getpos(&x);
}

static size_t t_enc(xdrproc_t proc, void *obj)
{
	XDR x;
	size_t n;
	xdrmem_create(&x, (char *)tbuf, BUFSZ, XDR_ENCODE);
	assert_true(proc(&x, obj));
	n = xdr_getpos(&x);
	xdr_destroy(&x);
	return n;
}

/* Decode len bytes with remotecall / libtirpc; every byte must be consumed. */
static void r_dec(rc_xdrproc proc, void *obj, const unsigned char *b, size_t len)
{
	rc_xdr x;
	rc_xdrmem_create(&x, (void *)b, len, RC_XDR_DECODE);
	assert_true(proc(&x, obj));
	assert_int_equal(rc_xdr_getpos(&x), len);
}

static void t_dec(xdrproc_t proc, void *obj, const unsigned char *b, size_t len)
{
	XDR x;
	xdrmem_create(&x, (char *)b, (u_int)len, XDR_DECODE);
	assert_true(proc(&x, obj));
	assert_int_equal(xdr_getpos(&x), len);
	xdr_destroy(&x);
}

/*
 * Both encoders give the same bytes for (rv, tv); each decoder reads the other's bytes back.
 * rout/tout receive the decoded values; the caller compares them.
 */
static void cross(rc_xdrproc rp, void *rv, void *rout, xdrproc_t tp, void *tv, void *tout)
{
	size_t rn = r_enc(rp, rv), tn = t_enc(tp, tv);
	assert_int_equal(rn, tn);
	assert_memory_equal(rbuf, tbuf, rn);
	t_dec(tp, tout, rbuf, rn);
	r_dec(rp, rout, tbuf, tn);
}

/* ---- scalars ----------------------------------------------------------------------------- */

#define CROSS_SCALAR(RT, RPROC, TT, TPROC, VALUES)                                           \
	do {                                                                                  \
		static const RT vals[] = VALUES;                                              \
		for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {                 \
			RT rv = vals[i], rout;                                                \
			TT tv = (TT)vals[i], tout;                                            \
			memset(&rout, 0x55, sizeof(rout));                                    \
			memset(&tout, 0x55, sizeof(tout));                                    \
			cross((rc_xdrproc)RPROC, &rv, &rout, (xdrproc_t)TPROC, &tv, &tout);   \
			assert_memory_equal(&rout, &rv, sizeof(rv));                          \
			assert_memory_equal(&tout, &tv, sizeof(tv));                          \
		}                                                                             \
	} while (0)

#define V(...) {__VA_ARGS__}

static void test_int(void **state)
{
	(void)state;
	CROSS_SCALAR(int32_t, rc_xdr_int, int, xdr_int,
	             V(INT32_MIN, INT32_MAX, 0, -1, 1, 0x12345678, -0x12345678));
}

static void test_u_int(void **state)
{
	(void)state;
	CROSS_SCALAR(uint32_t, rc_xdr_u_int, u_int, xdr_u_int,
	             V(0, 1, UINT32_MAX, 0x80000000u, 0x7fffffffu, 0xdeadbeefu));
}

static void test_hyper(void **state)
{
	(void)state;
	CROSS_SCALAR(int64_t, rc_xdr_hyper, quad_t, xdr_hyper,
	             V(INT64_MIN, INT64_MAX, 0, -1, 1, 0x0102030405060708LL, -4294967296LL));
}

static void test_u_hyper(void **state)
{
	(void)state;
	CROSS_SCALAR(uint64_t, rc_xdr_u_hyper, u_quad_t, xdr_u_hyper,
	             V(0, 1, UINT64_MAX, 0x8000000000000000ULL, 0xffffffffULL, 0x100000000ULL));
}

static void test_enum(void **state)
{
	(void)state;
	CROSS_SCALAR(int32_t, rc_xdr_enum, enum_t, xdr_enum, V(0, 1, 2, -5, INT32_MAX, INT32_MIN));
}

static void test_char(void **state)
{
	(void)state;
	CROSS_SCALAR(char, rc_xdr_char, char, xdr_char, V(0, 'a', 127, (char)-128, (char)-1, 1));
}

static void test_u_char(void **state)
{
	(void)state;
	CROSS_SCALAR(unsigned char, rc_xdr_u_char, u_char, xdr_u_char, V(0, 1, 127, 128, 255));
}

static void test_short(void **state)
{
	(void)state;
	CROSS_SCALAR(int16_t, rc_xdr_short, short, xdr_short, V(0, 1, -1, INT16_MIN, INT16_MAX));
}

static void test_u_short(void **state)
{
	(void)state;
	CROSS_SCALAR(uint16_t, rc_xdr_u_short, u_short, xdr_u_short, V(0, 1, 0x8000, UINT16_MAX));
}

static void test_bool(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++) {
		bool rv = i, rout = !i;
		bool_t tv = i, tout = !i;
		cross((rc_xdrproc)rc_xdr_bool, &rv, &rout, (xdrproc_t)xdr_bool, &tv, &tout);
		assert_int_equal(rout, rv);
		assert_int_equal(tout, tv);
	}
}

static void test_float(void **state)
{
	static const uint32_t bits[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
	                                0x7fc00000u, 0x7fc12345u, 0xffc00001u, 0x00000001u,
	                                0x7f7fffffu, 0x3f800000u, 0xc0490fdbu};
	(void)state;
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		float rv, tv, rout, tout;
		memcpy(&rv, &bits[i], 4);
		memcpy(&tv, &bits[i], 4);
		cross((rc_xdrproc)rc_xdr_float, &rv, &rout, (xdrproc_t)xdr_float, &tv, &tout);
		assert_memory_equal(&rout, &bits[i], 4);
		assert_memory_equal(&tout, &bits[i], 4);
	}
}

static void test_double(void **state)
{
	static const uint64_t bits[] = {
		0, 0x8000000000000000ULL, 0x7ff0000000000000ULL, 0xfff0000000000000ULL,
		0x7ff8000000000000ULL, 0x7ff8000000012345ULL, 0xfff0000000000001ULL, 1,
		0x7fefffffffffffffULL, 0x3ff0000000000000ULL, 0x400921fb54442d18ULL};
	(void)state;
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		double rv, tv, rout, tout;
		memcpy(&rv, &bits[i], 8);
		memcpy(&tv, &bits[i], 8);
		cross((rc_xdrproc)rc_xdr_double, &rv, &rout, (xdrproc_t)xdr_double, &tv, &tout);
		assert_memory_equal(&rout, &bits[i], 8);
		assert_memory_equal(&tout, &bits[i], 8);
	}
}

/* ---- opaque, bytes, strings ------------------------------------------------------------ */

static void test_opaque(void **state)
{
	(void)state;
	for (u_int cnt = 0; cnt <= 13; cnt++) {
		char in[16], rout[16], tout[16];
		size_t rn, tn;
		rc_xdr rx;
		XDR tx;
		for (u_int i = 0; i < cnt; i++)
			in[i] = (char)(0xf0 + i);
		rc_xdrmem_create(&rx, rbuf, BUFSZ, RC_XDR_ENCODE);
		assert_true(rc_xdr_opaque(&rx, in, cnt));
		rn = rc_xdr_getpos(&rx);
		memset(tbuf, 0xee, 32);
		xdrmem_create(&tx, (char *)tbuf, BUFSZ, XDR_ENCODE);
		assert_true(xdr_opaque(&tx, in, cnt));
		tn = xdr_getpos(&tx);
		assert_int_equal(rn, tn);
		assert_memory_equal(rbuf, tbuf, rn); /* padding included */
		xdrmem_create(&tx, (char *)rbuf, (u_int)rn, XDR_DECODE);
		assert_true(xdr_opaque(&tx, tout, cnt));
		assert_memory_equal(tout, in, cnt);
		rc_xdrmem_create(&rx, tbuf, tn, RC_XDR_DECODE);
		assert_true(rc_xdr_opaque(&rx, rout, cnt));
		assert_memory_equal(rout, in, cnt);
	}
}

struct rbytes { uint32_t len; char *val; };
struct tbytes { u_int len; char *val; };
static bool r_bytes(rc_xdr *x, struct rbytes *b) { return rc_xdr_bytes(x, &b->val, &b->len, 5000); }
static bool_t t_bytes(XDR *x, struct tbytes *b) { return xdr_bytes(x, &b->val, &b->len, 5000); }

static void test_bytes(void **state)
{
	static const uint32_t lens[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 100, 4999, 5000};
	static char data[5000];
	(void)state;
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 13);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct rbytes rv = {lens[i], data}, rout = {0, NULL};
		struct tbytes tv = {lens[i], data}, tout = {0, NULL};
		cross((rc_xdrproc)r_bytes, &rv, &rout, (xdrproc_t)t_bytes, &tv, &tout);
		assert_int_equal(rout.len, lens[i]);
		assert_int_equal(tout.len, lens[i]);
		assert_memory_equal(rout.val, data, lens[i]);
		if (lens[i] > 0)
			assert_memory_equal(tout.val, data, lens[i]);
		rc_xdr_free((rc_xdrproc)r_bytes, &rout);
		xdr_free((xdrproc_t)t_bytes, (char *)&tout);
	}
}

static bool r_str(rc_xdr *x, char **s) { return rc_xdr_string(x, s, 2000); }
static bool_t t_str(XDR *x, char **s) { return xdr_string(x, s, 2000); }

static void test_string(void **state)
{
	static char big[2001];
	const char *strs[] = {"", "a", "ab", "abc", "abcd", "hello, world", big};
	(void)state;
	memset(big, 'x', 2000);
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		char *rv = (char *)strs[i], *tv = (char *)strs[i], *rout = NULL, *tout = NULL;
		cross((rc_xdrproc)r_str, &rv, &rout, (xdrproc_t)t_str, &tv, &tout);
		assert_string_equal(rout, strs[i]);
		assert_string_equal(tout, strs[i]);
		rc_xdr_free((rc_xdrproc)r_str, &rout);
		xdr_free((xdrproc_t)t_str, (char *)&tout);
	}
	/* wrapstring too */
	{
		char *rv = "wrapped", *tv = "wrapped", *rout = NULL, *tout = NULL;
		cross((rc_xdrproc)rc_xdr_wrapstring, &rv, &rout, (xdrproc_t)xdr_wrapstring, &tv,
		      &tout);
		assert_string_equal(rout, "wrapped");
		assert_string_equal(tout, "wrapped");
		rc_xdr_free((rc_xdrproc)rc_xdr_wrapstring, &rout);
		xdr_free((xdrproc_t)xdr_wrapstring, (char *)&tout);
	}
}

/* ---- arrays and vectors --------------------------------------------------------------- */

struct rarr { uint32_t len; void *val; };
struct tarr { u_int len; char *val; };

/* One bulk kind: remotecall's routine and C size, libtirpc's routine and C size. */
struct akind {
	rc_xdrproc rp;
	uint32_t rsize;
	xdrproc_t tp;
	u_int tsize;
};

static const struct akind akinds[] = {
	{(rc_xdrproc)rc_xdr_int, 4, (xdrproc_t)xdr_int, sizeof(int)},
	{(rc_xdrproc)rc_xdr_u_int, 4, (xdrproc_t)xdr_u_int, sizeof(u_int)},
	{(rc_xdrproc)rc_xdr_enum, 4, (xdrproc_t)xdr_enum, sizeof(enum_t)},
	{(rc_xdrproc)rc_xdr_float, 4, (xdrproc_t)xdr_float, sizeof(float)},
	{(rc_xdrproc)rc_xdr_hyper, 8, (xdrproc_t)xdr_hyper, sizeof(quad_t)},
	{(rc_xdrproc)rc_xdr_u_hyper, 8, (xdrproc_t)xdr_u_hyper, sizeof(u_quad_t)},
	{(rc_xdrproc)rc_xdr_double, 8, (xdrproc_t)xdr_double, sizeof(double)},
	{(rc_xdrproc)rc_xdr_bool, sizeof(bool), (xdrproc_t)xdr_bool, sizeof(bool_t)},
};

/* Fill element i of both representations with the same value. */
static void fill_pair(const struct akind *k, unsigned char *r, unsigned char *t, size_t i)
{
	uint64_t v = (uint64_t)i * 0x9e3779b97f4a7c15ULL;
	if (k->rsize == sizeof(bool) && k->tsize == sizeof(bool_t)) {
		bool b = (v >> 60) & 1;
		bool_t tb = b;
		memcpy(r + i, &b, 1);
		memcpy(t + i * sizeof(bool_t), &tb, sizeof(bool_t));
		return;
	}
	memcpy(r + i * k->rsize, &v, k->rsize);
	memcpy(t + i * k->tsize, &v, k->tsize);
}

static void test_array_bulk_kinds(void **state)
{
	static const uint32_t lens[] = {0, 1, 2, 3, 5, 8, 17, 33, 100, 1000};
	(void)state;
	for (size_t ki = 0; ki < sizeof(akinds) / sizeof(akinds[0]); ki++) {
		const struct akind *k = &akinds[ki];
		for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
			uint32_t n = lens[li];
			unsigned char *r = malloc((size_t)n * k->rsize + 1);
			unsigned char *t = malloc((size_t)n * k->tsize + 1);
			struct rarr rv = {n, r}, rout = {0, NULL};
			struct tarr tv = {n, (char *)t}, tout = {0, NULL};
			size_t rn, tn;
			rc_xdr rx;
			XDR tx;
			for (uint32_t i = 0; i < n; i++)
				fill_pair(k, r, t, i);
			rc_xdrmem_create(&rx, rbuf, BUFSZ, RC_XDR_ENCODE);
			assert_true(rc_xdr_array(&rx, &rv.val, &rv.len, 1000, k->rsize, k->rp));
			rn = rc_xdr_getpos(&rx);
			xdrmem_create(&tx, (char *)tbuf, BUFSZ, XDR_ENCODE);
			assert_true(xdr_array(&tx, &tv.val, &tv.len, 1000, k->tsize, k->tp));
			tn = xdr_getpos(&tx);
			assert_int_equal(rn, tn);
			assert_memory_equal(rbuf, tbuf, rn);
			/* libtirpc decodes remotecall's bytes, and the other way round */
			xdrmem_create(&tx, (char *)rbuf, (u_int)rn, XDR_DECODE);
			assert_true(xdr_array(&tx, &tout.val, &tout.len, 1000, k->tsize, k->tp));
			assert_int_equal(tout.len, n);
			if (n > 0)
				assert_memory_equal(tout.val, t, (size_t)n * k->tsize);
			rc_xdrmem_create(&rx, tbuf, tn, RC_XDR_DECODE);
			assert_true(rc_xdr_array(&rx, &rout.val, &rout.len, 1000, k->rsize, k->rp));
			assert_int_equal(rout.len, n);
			if (n > 0)
				assert_memory_equal(rout.val, r, (size_t)n * k->rsize);
			free(rout.val);
			if (tout.val != NULL) {
				xdrmem_create(&tx, NULL, 0, XDR_FREE);
				xdr_array(&tx, &tout.val, &tout.len, 1000, k->tsize, k->tp);
			}
			/* vectors: the same without the count */
			rc_xdrmem_create(&rx, rbuf, BUFSZ, RC_XDR_ENCODE);
			assert_true(rc_xdr_vector(&rx, r, n, k->rsize, k->rp));
			xdrmem_create(&tx, (char *)tbuf, BUFSZ, XDR_ENCODE);
			assert_true(xdr_vector(&tx, (char *)t, n, k->tsize, k->tp));
			assert_int_equal(rc_xdr_getpos(&rx), xdr_getpos(&tx));
			assert_memory_equal(rbuf, tbuf, rc_xdr_getpos(&rx));
			{
				unsigned char *r2 = malloc((size_t)n * k->rsize + 1);
				unsigned char *t2 = malloc((size_t)n * k->tsize + 1);
				rn = rc_xdr_getpos(&rx);
				xdrmem_create(&tx, (char *)rbuf, (u_int)rn, XDR_DECODE);
				assert_true(xdr_vector(&tx, (char *)t2, n, k->tsize, k->tp));
				assert_memory_equal(t2, t, (size_t)n * k->tsize);
				rc_xdrmem_create(&rx, tbuf, rn, RC_XDR_DECODE);
				assert_true(rc_xdr_vector(&rx, r2, n, k->rsize, k->rp));
				assert_memory_equal(r2, r, (size_t)n * k->rsize);
				free(r2);
				free(t2);
			}
			free(r);
			free(t);
		}
	}
}

/* struct pt { int x; double y; string name<16>; bool flag; } in both libraries' C types */
struct rpt { int32_t x; double y; char *name; bool flag; };
struct tpt { int x; double y; char *name; bool_t flag; };

static bool r_pt(rc_xdr *x, struct rpt *p)
{
	return rc_xdr_int(x, &p->x) && rc_xdr_double(x, &p->y) && rc_xdr_string(x, &p->name, 16) &&
	       rc_xdr_bool(x, &p->flag);
}
static bool_t t_pt(XDR *x, struct tpt *p)
{
	return xdr_int(x, &p->x) && xdr_double(x, &p->y) && xdr_string(x, &p->name, 16) &&
	       xdr_bool(x, &p->flag);
}

struct rpts { uint32_t len; struct rpt *val; };
struct tpts { u_int len; struct tpt *val; };
static bool r_pts(rc_xdr *x, struct rpts *a)
{
	return rc_xdr_array(x, &a->val, &a->len, 50, sizeof(struct rpt), (rc_xdrproc)r_pt);
}
static bool_t t_pts(XDR *x, struct tpts *a)
{
	return xdr_array(x, (char **)&a->val, &a->len, 50, sizeof(struct tpt), (xdrproc_t)t_pt);
}

static char ptnames[50][12];

static void test_array_of_struct(void **state)
{
	(void)state;
	for (uint32_t n = 0; n <= 50; n += 7) {
		struct rpt r[50];
		struct tpt t[50];
		struct rpts rv = {n, r}, rout = {0, NULL};
		struct tpts tv = {n, t}, tout = {0, NULL};
		for (uint32_t i = 0; i < n; i++) {
			snprintf(ptnames[i], sizeof(ptnames[i]), "pt-%u", (unsigned)(i * i));
			r[i] = (struct rpt){(int32_t)i - 25, i / 7.0, ptnames[i], i % 3 == 0};
			t[i] = (struct tpt){(int)i - 25, i / 7.0, ptnames[i], i % 3 == 0};
		}
		cross((rc_xdrproc)r_pts, &rv, &rout, (xdrproc_t)t_pts, &tv, &tout);
		assert_int_equal(rout.len, n);
		assert_int_equal(tout.len, n);
		for (uint32_t i = 0; i < n; i++) {
			assert_int_equal(rout.val[i].x, r[i].x);
			assert_true(rout.val[i].y == r[i].y);
			assert_string_equal(rout.val[i].name, ptnames[i]);
			assert_int_equal(rout.val[i].flag, r[i].flag);
			assert_int_equal(tout.val[i].x, t[i].x);
			assert_string_equal(tout.val[i].name, ptnames[i]);
			assert_int_equal(tout.val[i].flag, t[i].flag);
		}
		rc_xdr_free((rc_xdrproc)r_pts, &rout);
		xdr_free((xdrproc_t)t_pts, (char *)&tout);
		/* and a vector of them */
		if (n > 0) {
			struct rpt r2[50];
			struct tpt t2[50];
			rc_xdr rx;
			XDR tx;
			size_t rn;
			memset(r2, 0, sizeof(r2));
			memset(t2, 0, sizeof(t2));
			rc_xdrmem_create(&rx, rbuf, BUFSZ, RC_XDR_ENCODE);
			assert_true(rc_xdr_vector(&rx, r, n, sizeof(struct rpt), (rc_xdrproc)r_pt));
			xdrmem_create(&tx, (char *)tbuf, BUFSZ, XDR_ENCODE);
			assert_true(xdr_vector(&tx, (char *)t, n, sizeof(struct tpt), (xdrproc_t)t_pt));
			rn = rc_xdr_getpos(&rx);
			assert_int_equal(rn, xdr_getpos(&tx));
			assert_memory_equal(rbuf, tbuf, rn);
			rc_xdrmem_create(&rx, tbuf, rn, RC_XDR_DECODE);
			assert_true(rc_xdr_vector(&rx, r2, n, sizeof(struct rpt), (rc_xdrproc)r_pt));
			xdrmem_create(&tx, (char *)rbuf, (u_int)rn, XDR_DECODE);
			assert_true(xdr_vector(&tx, (char *)t2, n, sizeof(struct tpt), (xdrproc_t)t_pt));
			assert_string_equal(r2[n - 1].name, ptnames[n - 1]);
			assert_string_equal(t2[n - 1].name, ptnames[n - 1]);
			for (uint32_t i = 0; i < n; i++) {
				rc_xdr_free((rc_xdrproc)r_pt, &r2[i]);
				xdr_free((xdrproc_t)t_pt, (char *)&t2[i]);
			}
		}
	}
}

/* ---- optional data and unions ---------------------------------------------------------- */

struct rnode { int32_t v; char *s; struct rnode *next; };
struct tnode { int v; char *s; struct tnode *next; };

static bool r_node(rc_xdr *x, struct rnode *n)
{
	return rc_xdr_int(x, &n->v) && rc_xdr_wrapstring(x, &n->s) &&
	       rc_xdr_pointer(x, &n->next, sizeof(struct rnode), (rc_xdrproc)r_node);
}
static bool_t t_node(XDR *x, struct tnode *n)
{
	return xdr_int(x, &n->v) && xdr_wrapstring(x, &n->s) &&
	       xdr_pointer(x, (char **)&n->next, sizeof(struct tnode), (xdrproc_t)t_node);
}
static bool r_list(rc_xdr *x, struct rnode **h)
{
	return rc_xdr_pointer(x, h, sizeof(struct rnode), (rc_xdrproc)r_node);
}
static bool_t t_list(XDR *x, struct tnode **h)
{
	return xdr_pointer(x, (char **)h, sizeof(struct tnode), (xdrproc_t)t_node);
}

static void test_pointer(void **state)
{
	(void)state;
	for (int len = 0; len <= 6; len++) {
		struct rnode rn[6], *rh = len ? &rn[0] : NULL, *rout = NULL;
		struct tnode tn[6], *th = len ? &tn[0] : NULL, *tout = NULL;
		static char *strs[] = {"", "one", "two!", "three", "", "five five"};
		for (int i = 0; i < len; i++) {
			rn[i] = (struct rnode){i * 11 - 20, strs[i], i + 1 < len ? &rn[i + 1] : NULL};
			tn[i] = (struct tnode){i * 11 - 20, strs[i], i + 1 < len ? &tn[i + 1] : NULL};
		}
		cross((rc_xdrproc)r_list, &rh, &rout, (xdrproc_t)t_list, &th, &tout);
		{
			struct rnode *r = rout;
			struct tnode *t = tout;
			for (int i = 0; i < len; i++) {
				assert_non_null(r);
				assert_non_null(t);
				assert_int_equal(r->v, rn[i].v);
				assert_int_equal(t->v, tn[i].v);
				assert_string_equal(r->s, strs[i]);
				assert_string_equal(t->s, strs[i]);
				r = r->next;
				t = t->next;
			}
			assert_null(r);
			assert_null(t);
		}
		rc_xdr_free((rc_xdrproc)r_list, &rout);
		assert_null(rout);
		xdr_free((xdrproc_t)t_list, (char *)&tout);
	}
}

/* union u switch (int k) { case 1: int i; case 2: string s<>; case 3: hyper h;
 *                          case 4: void; default: double d; } */
struct run { int32_t k; union { int32_t i; char *s; int64_t h; double d; } u; };
struct tun { enum_t k; union { int i; char *s; quad_t h; double d; } u; };

static const rc_xdr_discrim r_arms[] = {{1, (rc_xdrproc)rc_xdr_int},
                                        {2, (rc_xdrproc)rc_xdr_wrapstring},
                                        {3, (rc_xdrproc)rc_xdr_hyper},
                                        {4, (rc_xdrproc)rc_xdr_void},
                                        {0, NULL}};
static const struct xdr_discrim t_arms[] = {{1, (xdrproc_t)xdr_int},
                                            {2, (xdrproc_t)xdr_wrapstring},
                                            {3, (xdrproc_t)xdr_hyper},
                                            {4, (xdrproc_t)(void (*)(void))xdr_void},
                                            {0, NULL}};

static bool r_un(rc_xdr *x, struct run *u)
{
	return rc_xdr_union(x, &u->k, &u->u, r_arms, (rc_xdrproc)rc_xdr_double);
}
static bool_t t_un(XDR *x, struct tun *u)
{
	return xdr_union(x, &u->k, (char *)&u->u, t_arms, (xdrproc_t)xdr_double);
}

static void test_union(void **state)
{
	(void)state;
	for (int c = 0; c < 6; c++) {
		struct run rv, rout;
		struct tun tv, tout;
		memset(&rv, 0, sizeof(rv));
		memset(&tv, 0, sizeof(tv));
		memset(&rout, 0, sizeof(rout));
		memset(&tout, 0, sizeof(tout));
		switch (c) {
		case 0: rv.k = tv.k = 1; rv.u.i = tv.u.i = -123456; break;
		case 1: rv.k = tv.k = 2; rv.u.s = tv.u.s = "union arm"; break;
		case 2: rv.k = tv.k = 3; rv.u.h = tv.u.h = INT64_MIN + 3; break;
		case 3: rv.k = tv.k = 4; break;
		case 4: rv.k = tv.k = 99; rv.u.d = tv.u.d = -2.5; break;   /* default arm */
		default: rv.k = tv.k = -7; rv.u.d = tv.u.d = INFINITY; break;
		}
		cross((rc_xdrproc)r_un, &rv, &rout, (xdrproc_t)t_un, &tv, &tout);
		assert_int_equal(rout.k, rv.k);
		assert_int_equal(tout.k, tv.k);
		if (c == 1) {
			assert_string_equal(rout.u.s, "union arm");
			assert_string_equal(tout.u.s, "union arm");
		} else if (c != 3) {
			assert_memory_equal(&rout.u, &rv.u, 8);
			assert_memory_equal(&tout.u, &tv.u, 8);
		}
		rc_xdr_free((rc_xdrproc)r_un, &rout);
		xdr_free((xdrproc_t)t_un, (char *)&tout);
	}
}

/* ---- decoding the same damaged input --------------------------------------------------- */

/* A message that uses most routines, in both libraries' types. */
struct rmsg {
	int32_t i;
	int64_t h;
	char *s;
	struct rbytes b;
	struct rarr ints;
	struct rpts pts;
	struct rnode *list;
	struct run un;
	bool flag;
};
struct tmsg {
	int i;
	quad_t h;
	char *s;
	struct tbytes b;
	struct tarr ints;
	struct tpts pts;
	struct tnode *list;
	struct tun un;
	bool_t flag;
};

static bool r_msg(rc_xdr *x, struct rmsg *m)
{
	return rc_xdr_int(x, &m->i) && rc_xdr_hyper(x, &m->h) && r_str(x, &m->s) &&
	       r_bytes(x, &m->b) &&
	       rc_xdr_array(x, &m->ints.val, &m->ints.len, 20, 4, (rc_xdrproc)rc_xdr_int) &&
	       r_pts(x, &m->pts) && r_list(x, &m->list) && r_un(x, &m->un) &&
	       rc_xdr_bool(x, &m->flag);
}
static bool_t t_msg(XDR *x, struct tmsg *m)
{
	return xdr_int(x, &m->i) && xdr_hyper(x, &m->h) && t_str(x, &m->s) && t_bytes(x, &m->b) &&
	       xdr_array(x, &m->ints.val, &m->ints.len, 20, sizeof(int), (xdrproc_t)xdr_int) &&
	       t_pts(x, &m->pts) && t_list(x, &m->list) && t_un(x, &m->un) &&
	       xdr_bool(x, &m->flag);
}

/*
 * Damage a valid message at 1-3 random bytes (seeded) and decode it with both libraries:
 * whenever remotecall accepts the input, libtirpc accepts it too and both re-encode the
 * decoded values to the same bytes (remotecall is never more lenient, and never decodes
 * differently). Cut-short inputs are included.
 */
static void test_damaged_input_agreement(void **state)
{
	int32_t ints[4] = {1, -2, 3, -4};
	struct rpt pts[2] = {{1, 0.5, "p", true}, {2, -0.5, "", false}};
	struct rnode n2 = {2, "two", NULL}, n1 = {1, "one", &n2};
	struct rmsg m = {-9, INT64_MAX, "message", {3, "abc"}, {4, ints}, {2, pts}, &n1,
	                 {2, {.s = "arm"}}, true};
	unsigned char wire[1024], dam[1024], *g;
	size_t len, accepted = 0, rejected = 0;
	uint64_t seed = 2024;
	rc_xdr x;
	(void)state;
	rc_xdrmem_create(&x, wire, sizeof(wire), RC_XDR_ENCODE);
	assert_true(r_msg(&x, &m));
	len = rc_xdr_getpos(&x);
	for (int iter = 0; iter < 20000; iter++) {
		size_t dlen = len, nd = 1 + tu_rand(&seed) % 3;
		struct rmsg ro;
		struct tmsg to;
		bool rok, tok;
		XDR tx;
		memcpy(dam, wire, len);
		for (size_t k = 0; k < nd; k++) {
			uint64_t r = tu_rand(&seed);
			size_t at = (size_t)(r % len);
			/* favour values that make lengths, counts and flags interesting */
			static const unsigned char vals[] = {0, 1, 2, 3, 0x7f, 0x80, 0xff};
			dam[at] = (r >> 32) & 1 ? vals[(r >> 40) % sizeof(vals)] : (unsigned char)(r >> 48);
		}
		if (tu_rand(&seed) % 8 == 0)
			dlen = (size_t)(tu_rand(&seed) % len);
		g = tu_guard_dup(dam, dlen);
		memset(&ro, 0, sizeof(ro));
		memset(&to, 0, sizeof(to));
		rc_xdrmem_create(&x, g, dlen, RC_XDR_DECODE);
		rok = r_msg(&x, &ro);
		xdrmem_create(&tx, (char *)g, (u_int)dlen, XDR_DECODE);
		tok = t_msg(&tx, &to);
		if (rok) {
			size_t rn, tn;
			assert_true(tok);
			assert_int_equal(rc_xdr_getpos(&x), xdr_getpos(&tx));
			rn = r_enc((rc_xdrproc)r_msg, &ro);
			tn = t_enc((xdrproc_t)t_msg, &to);
			assert_int_equal(rn, tn);
			assert_memory_equal(rbuf, tbuf, rn);
			accepted++;
		} else {
			rejected++;
		}
		rc_xdr_free((rc_xdrproc)r_msg, &ro);
		xdr_free((xdrproc_t)t_msg, (char *)&to);
		tu_guard_free(g, dlen);
	}
	print_message("damaged inputs: %zu accepted by both, %zu refused by remotecall\n",
	              accepted, rejected);
	assert_true(accepted > 1000 && rejected > 1000);
}

/* ---- record streams ------------------------------------------------------------------- */

/* libtirpc's record stream callbacks over memory */
struct tmem {
	struct tu_sink out;     /* writeit appends here */
	const unsigned char *in; /* readit reads from here */
	size_t in_len, in_pos;
	uint64_t rng;
};

static int t_writeit(void *h, void *buf, int len)
{
	struct tmem *m = h;
	tu_sink_write(&m->out, buf, (size_t)len);
	return len;
}

static int t_readit(void *h, void *buf, int len)
{
	struct tmem *m = h;
	size_t k = 1 + tu_rand(&m->rng) % 777; /* short reads of random size */
	if (m->in_pos == m->in_len)
		return -1;
	if (k > (size_t)len)
		k = (size_t)len;
	if (k > m->in_len - m->in_pos)
		k = m->in_len - m->in_pos;
	memcpy(buf, m->in + m->in_pos, k);
	m->in_pos += k;
	return (int)k;
}

/* A record's content, coded by whichever library (via the function-pointer pair). */
#define NRECS 6
static char big_blob[20000];

static void setup_blob(void)
{
	for (size_t i = 0; i < sizeof(big_blob); i++)
		big_blob[i] = (char)(i * 7 + (i >> 10));
}

static bool_t t_record(XDR *x, int idx)
{
	int i = idx * 1000 - 3;
	quad_t h = -((quad_t)idx << 40);
	char *s = idx % 2 ? "odd record" : "";
	char *blob = big_blob;
	u_int bl = (u_int)(idx * 3333 % 20000);
	double d[5] = {idx, -idx, 0.5, 1e10, -0.0};
	char *dp = (char *)d;
	u_int dn = 5;
	if (idx == 3)
		return TRUE; /* an empty record */
	return xdr_int(x, &i) && xdr_hyper(x, &h) && xdr_string(x, &s, 100) &&
	       xdr_bytes(x, &blob, &bl, 20000) &&
	       xdr_array(x, &dp, &dn, 5, sizeof(double), (xdrproc_t)xdr_double);
}

static bool r_record(rc_xdr *x, int idx)
{
	int32_t i = idx * 1000 - 3;
	int64_t h = -((int64_t)idx << 40);
	char *s = idx % 2 ? "odd record" : "";
	char *blob = big_blob;
	uint32_t bl = (uint32_t)(idx * 3333 % 20000);
	double d[5] = {idx, -idx, 0.5, 1e10, -0.0}, *dp = d;
	uint32_t dn = 5;
	if (idx == 3)
		return true;
	return rc_xdr_int(x, &i) && rc_xdr_hyper(x, &h) && rc_xdr_string(x, &s, 100) &&
	       rc_xdr_bytes(x, &blob, &bl, 20000) &&
	       rc_xdr_array(x, &dp, &dn, 5, sizeof(double), (rc_xdrproc)rc_xdr_double);
}

/* Check a decoded record (decoding with remotecall from a memory stream) */
static void r_check_record(const void *rec, size_t len, int idx)
{
	int32_t i = 0;
	int64_t h = 0;
	char *s = NULL, *blob = NULL;
	uint32_t bl = 0, dn = 0;
	double *d = NULL;
	rc_xdr x;
	if (idx == 3) {
		assert_int_equal(len, 0);
		return;
	}
	rc_xdrmem_create(&x, (void *)rec, len, RC_XDR_DECODE);
	assert_true(rc_xdr_int(&x, &i) && rc_xdr_hyper(&x, &h) && rc_xdr_string(&x, &s, 100) &&
	            rc_xdr_bytes(&x, &blob, &bl, 20000) &&
	            rc_xdr_array(&x, &d, &dn, 5, sizeof(double), (rc_xdrproc)rc_xdr_double));
	assert_int_equal(rc_xdr_getpos(&x), len);
	assert_int_equal(i, idx * 1000 - 3);
	assert_true(h == -((int64_t)idx << 40));
	assert_string_equal(s, idx % 2 ? "odd record" : "");
	assert_int_equal(bl, (uint32_t)(idx * 3333 % 20000));
	assert_memory_equal(blob, big_blob, bl);
	assert_true(dn == 5 && d[0] == idx && d[3] == 1e10 && signbit(d[4]));
	free(s);
	free(blob);
	free(d);
}

static void test_tirpc_xdrrec_into_recreader(void **state)
{
	struct tmem m;
	XDR tx;
	rc_recreader r;
	size_t pos = 0;
	int got = 0;
	uint64_t seed = 12345;
	(void)state;
	setup_blob();
	memset(&m, 0, sizeof(m));
	/* the smallest send size libtirpc allows (it rounds small sizes up to 4000) */
	xdrrec_create(&tx, 0, 0, &m, t_readit, t_writeit);
	tx.x_op = XDR_ENCODE;
	for (int idx = 0; idx < NRECS; idx++) {
		assert_true(t_record(&tx, idx));
		assert_true(xdrrec_endofrecord(&tx, TRUE));
	}
	xdr_destroy(&tx);
	/* libtirpc did fragment the large records */
	{
		size_t frags = 0, off = 0;
		while (off < m.out.len) {
			uint32_t h = (uint32_t)m.out.data[off] << 24 | (uint32_t)m.out.data[off + 1] << 16 |
			             (uint32_t)m.out.data[off + 2] << 8 | m.out.data[off + 3];
			off += 4 + (h & 0x7fffffffu);
			frags++;
		}
		assert_int_equal(off, m.out.len);
		assert_true(frags > NRECS + 5);
	}
	rc_recreader_init(&r, 0);
	while (pos < m.out.len) {
		void *p, *rec;
		size_t n, len, k = 1 + tu_rand(&seed) % 3000;
		assert_int_equal(rc_recreader_space(&r, &p, &n), RC_OK);
		if (k > n)
			k = n;
		if (k > m.out.len - pos)
			k = m.out.len - pos;
		memcpy(p, m.out.data + pos, k);
		rc_recreader_commit(&r, k);
		pos += k;
		while (rc_recreader_next(&r, &rec, &len) == RC_OK)
			r_check_record(rec, len, got++);
	}
	assert_int_equal(got, NRECS);
	rc_recreader_destroy(&r);
	tu_sink_free(&m.out);
}

static bool sink_write(void *ctx, const void *buf, size_t len)
{
	return tu_sink_write(ctx, buf, len);
}

static void test_rc_xdrrec_into_tirpc_reader(void **state)
{
	static const size_t bufsizes[] = {16, 64, 1000, 4096, 65536};
	(void)state;
	setup_blob();
	for (size_t bi = 0; bi < sizeof(bufsizes) / sizeof(bufsizes[0]); bi++) {
		unsigned char *buf = malloc(bufsizes[bi]);
		struct tu_sink sink = {0};
		struct tmem m;
		rc_xdr rx;
		XDR tx;
		assert_int_equal(rc_xdrrec_create(&rx, buf, bufsizes[bi], sink_write, &sink), RC_OK);
		for (int idx = 0; idx < NRECS; idx++) {
			assert_true(r_record(&rx, idx));
			assert_true(rc_xdrrec_endofrecord(&rx));
		}
		memset(&m, 0, sizeof(m));
		m.in = sink.data;
		m.in_len = sink.len;
		m.rng = 99 + bi;
		xdrrec_create(&tx, 0, 0, &m, t_readit, t_writeit);
		tx.x_op = XDR_DECODE;
		for (int idx = 0; idx < NRECS; idx++) {
			int i = 0;
			quad_t h = 0;
			char *s = NULL, *blob = NULL;
			u_int bl = 0, dn = 0;
			double *d = NULL;
			assert_true(xdrrec_skiprecord(&tx));
			if (idx == 3)
				continue; /* empty */
			assert_true(xdr_int(&tx, &i) && xdr_hyper(&tx, &h) && xdr_string(&tx, &s, 100) &&
			            xdr_bytes(&tx, &blob, &bl, 20000) &&
			            xdr_array(&tx, (char **)&d, &dn, 5, sizeof(double),
			                      (xdrproc_t)xdr_double));
			assert_int_equal(i, idx * 1000 - 3);
			assert_true(h == -((quad_t)idx << 40));
			assert_string_equal(s, idx % 2 ? "odd record" : "");
			assert_int_equal(bl, (u_int)(idx * 3333 % 20000));
			if (bl > 0)
				assert_memory_equal(blob, big_blob, bl);
			assert_true(dn == 5 && d[1] == -idx && signbit(d[4]));
			xdr_free((xdrproc_t)xdr_wrapstring, (char *)&s);
			{
				struct tbytes tb = {bl, blob};
				xdr_free((xdrproc_t)t_bytes, (char *)&tb);
			}
			{
				XDR f;
				xdrmem_create(&f, NULL, 0, XDR_FREE);
				xdr_array(&f, (char **)&d, &dn, 5, sizeof(double), (xdrproc_t)xdr_double);
			}
		}
		/* and the reader sees the end of the stream */
		assert_true(xdrrec_skiprecord(&tx));
		assert_true(xdrrec_eof(&tx));
		xdr_destroy(&tx);
		tu_sink_free(&sink);
		free(buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_int),
		cmocka_unit_test(test_u_int),
		cmocka_unit_test(test_hyper),
		cmocka_unit_test(test_u_hyper),
		cmocka_unit_test(test_enum),
		cmocka_unit_test(test_bool),
		cmocka_unit_test(test_char),
		cmocka_unit_test(test_u_char),
		cmocka_unit_test(test_short),
		cmocka_unit_test(test_u_short),
		cmocka_unit_test(test_float),
		cmocka_unit_test(test_double),
		cmocka_unit_test(test_opaque),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_string),
		cmocka_unit_test(test_array_bulk_kinds),
		cmocka_unit_test(test_array_of_struct),
		cmocka_unit_test(test_pointer),
		cmocka_unit_test(test_union),
		cmocka_unit_test(test_damaged_input_agreement),
		cmocka_unit_test(test_tirpc_xdrrec_into_recreader),
		cmocka_unit_test(test_rc_xdrrec_into_tirpc_reader),
	};
	return cmocka_run_group_tests_name("xdr_tirpc", tests, NULL, NULL);
}

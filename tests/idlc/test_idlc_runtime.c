/*
 * test_idlc_runtime -- the code idlc generates for golden/basic.x, lists.x, exprs.x, sun.x
 * and world.x, at work with the XDR library: exact wire bytes, round trips, union arms, bounds,
 * procedure descriptors, and linked lists of a million nodes coded without recursion.
 *
 * Decoded objects are released with rc_xdr_free; the sanitizer build's leak checker fails
 * the test if anything is left.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "basic.h"
#include "exprs.h"
#include "lists.h"
#include "sun.h"
#include "world.h"

/* encode -- code obj with proc into buf[0..cap); returns the length, or 0 on failure. */
static size_t
encode(rc_xdrproc proc, void *obj, void *buf, size_t cap)
{
	rc_xdr x;
	rc_xdrmem_create(&x, buf, cap, RC_XDR_ENCODE);
	if (!proc(&x, obj))
		return 0;
	return rc_xdr_getpos(&x);
}

/* decode -- decode buf[0..len) into obj (zeroed by the caller); whether it succeeded and
 * used every byte. */
static bool
decode(rc_xdrproc proc, void *obj, const void *buf, size_t len)
{
	rc_xdr x;
	rc_xdrmem_create(&x, (void *)buf, len, RC_XDR_DECODE);
	return proc(&x, obj) && rc_xdr_getpos(&x) == len;
}

/* be32 -- the 4 bytes at p as a big-endian unsigned int. */
static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* put32 -- store v big-endian at p. */
static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* roundtrip -- encode obj, decode into a fresh object of size n, re-encode: the bytes must
 * be the same. Returns the decoded object (to be freed by the caller) and its wire size. */
static void *
roundtrip(rc_xdrproc proc, void *obj, size_t n, unsigned char *wire, size_t cap, size_t *len)
{
	unsigned char *again = malloc(cap);
	void *copy = calloc(1, n);
	*len = encode(proc, obj, wire, cap);
	assert_true(*len > 0);
	assert_true(decode(proc, copy, wire, *len));
	assert_int_equal(encode(proc, copy, again, cap), *len);
	assert_memory_equal(again, wire, *len);
	free(again);
	return copy;
}

/* ---------------------------------------------------------------------------------------- */

static void
test_scalars_wire(void **state)
{
	(void)state;
	scalars s = { -2, 0xdeadbeefu, 7, -5, 0x0102030405060708ull, 1.5f, -2.25, true, 'A',
	              200, -300, 60000, -1, 1, BLUE, 42 };
	unsigned char w[256];
	size_t len;
	scalars *c = roundtrip((rc_xdrproc)xdr_scalars, &s, sizeof s, w, sizeof w, &len);
	assert_int_equal(len, 16 * 4 + 3 * 4); /* two hypers and a double take 8 bytes */
	assert_int_equal(be32(w), 0xfffffffeu);
	assert_int_equal(be32(w + 4), 0xdeadbeefu);
	assert_int_equal(be32(w + 12), 0xffffffffu);     /* hyper -5 */
	assert_int_equal(be32(w + 16), 0xfffffffbu);
	assert_int_equal(be32(w + 20), 0x01020304u);
	assert_int_equal(be32(w + 24), 0x05060708u);
	assert_int_equal(be32(w + 28), 0x3fc00000u);     /* 1.5f */
	assert_int_equal(be32(w + 40), 1);               /* true */
	assert_int_equal(be32(w + 44), 'A');
	assert_int_equal(be32(w + 52), (uint32_t)-300);
	assert_int_equal(be32(w + 68), 6);               /* BLUE */
	assert_int_equal(be32(w + 72), 42);
	assert_int_equal(c->i, -2);
	assert_true(c->uh == 0x0102030405060708ull);
	assert_true(c->d == -2.25);
	assert_int_equal(c->us, 60000);
	assert_int_equal(c->col, BLUE);
	assert_int_equal(c->n, 42);
	rc_xdr_free((rc_xdrproc)xdr_scalars, c);
	free(c);
}

static void
test_arrays_roundtrip(void **state)
{
	(void)state;
	double dv[3] = { 1.0, -2.0, 3.5 };
	float fv[2] = { 0.25f, 8.0f };
	bool flags[4] = { true, false, true, true };
	color cv[2] = { GREEN, RED };
	count nv[5] = { 1, 2, 3, 4, 5 };
	char ov[5] = { 1, 2, 3, 4, 5 };
	name names[2] = { "ab", "cde" };
	scalars st[2] = { { .i = 1, .col = RED }, { .i = 2, .col = BLUE } };
	int32_t opt = 77;
	arrays a = {
		.fixed = { 1, -1, 2, -2 },
		.ufixed = { 3, 4 },
		.hfixed = { 1, 2, 3, 4, 5, 6, 7, -8 },
		.dvar = { 3, dv },
		.fvar = { 2, fv },
		.flags = { 4, flags },
		.cvar = { 2, cv },
		.nvar = { 5, nv },
		.ofixed = { 'x', 'y', 'z' },
		.ovar = { 5, ov },
		.str = "a string",
		.bounded = "abc",
		.names = { 2, names },
		.handles = { "0123456789abcde", "fedcba987654321" },
		.structs = { 2, st },
		.opt = &opt,
		.optstruct = NULL,
	};
	unsigned char w[4096];
	size_t len;
	arrays *c = roundtrip((rc_xdrproc)xdr_arrays, &a, sizeof a, w, sizeof w, &len);
	assert_int_equal(c->fixed[3], -2);
	assert_true(c->hfixed[7] == -8);
	assert_int_equal(c->dvar.dvar_len, 3);
	assert_true(c->dvar.dvar_val[2] == 3.5);
	assert_true(c->flags.flags_val[0] && !c->flags.flags_val[1]);
	assert_int_equal(c->cvar.cvar_val[0], GREEN);
	assert_int_equal(c->nvar.nvar_val[4], 5);
	assert_memory_equal(c->ofixed, "xyz", 3);
	assert_int_equal(c->ovar.ovar_len, 5);
	assert_string_equal(c->str, "a string");
	assert_string_equal(c->names.names_val[1], "cde");
	assert_int_equal(c->structs.structs_val[1].col, BLUE);
	assert_non_null(c->opt);
	assert_int_equal(*c->opt, 77);
	assert_null(c->optstruct);
	/* the fixed opaque: 3 bytes and one byte of padding right after ufixed/hfixed/... */
	rc_xdr_free((rc_xdrproc)xdr_arrays, c);
	assert_null(c->str);
	free(c);
}

static void
test_bounds(void **state)
{
	(void)state;
	unsigned char w[4096];
	float fv[11] = { 0 };
	arrays a = { .str = "", .bounded = "abcd", .fvar = { 11, fv } };
	assert_int_equal(encode((rc_xdrproc)xdr_arrays, &a, w, sizeof w), 0); /* fvar<10> */
	a.fvar.fvar_len = 10;
	assert_true(encode((rc_xdrproc)xdr_arrays, &a, w, sizeof w) > 0);
	a.bounded = "abcde"; /* string bounded<SMALL>, SMALL = 4 */
	assert_int_equal(encode((rc_xdrproc)xdr_arrays, &a, w, sizeof w), 0);

	/* a typedef'd bounded string: name is string<32> */
	char longname[40];
	memset(longname, 'n', 33);
	longname[33] = '\0';
	name n = longname;
	assert_int_equal(encode((rc_xdrproc)xdr_name, &n, w, sizeof w), 0);
	/* and its decode refuses a length over the bound */
	put32(w, 33);
	memset(w + 4, 'n', 36);
	name d = NULL;
	assert_false(decode((rc_xdrproc)xdr_name, &d, w, 40));
	rc_xdr_free((rc_xdrproc)xdr_name, &d);
}

static void
test_union_arms(void **state)
{
	(void)state;
	unsigned char w[256];
	size_t len;

	/* case RED: case GREEN: int value; */
	result r = { .which = GREEN, .result_u.value = -9 };
	result *c = roundtrip((rc_xdrproc)xdr_result, &r, sizeof r, w, sizeof w, &len);
	assert_int_equal(len, 8);
	assert_int_equal(be32(w), 5);
	assert_int_equal(c->result_u.value, -9);
	free(c);
	/* case BLUE: void */
	r.which = BLUE;
	assert_int_equal(encode((rc_xdrproc)xdr_result, &r, w, sizeof w), 4);
	/* default: string message<> */
	r.which = (color)99;
	r.result_u.message = "other";
	c = roundtrip((rc_xdrproc)xdr_result, &r, sizeof r, w, sizeof w, &len);
	assert_int_equal(len, 4 + 4 + 8);
	assert_string_equal(c->result_u.message, "other");
	rc_xdr_free((rc_xdrproc)xdr_result, c);
	free(c);

	/* bool discriminant */
	flag f = { .set = true, .flag_u.stamp = 1234567890123ull };
	flag *fc = roundtrip((rc_xdrproc)xdr_flag, &f, sizeof f, w, sizeof w, &len);
	assert_int_equal(len, 12);
	assert_true(fc->flag_u.stamp == 1234567890123ull);
	free(fc);
	f.set = false;
	assert_int_equal(encode((rc_xdrproc)xdr_flag, &f, w, sizeof w), 4);
	put32(w, 2); /* not a bool */
	flag bad = { 0 };
	assert_false(decode((rc_xdrproc)xdr_flag, &bad, w, 4));

	/* no default arm: an unknown discriminant fails both ways */
	byint b = { .kind = 3 };
	assert_int_equal(encode((rc_xdrproc)xdr_byint, &b, w, sizeof w), 0);
	put32(w, 3);
	byint bd = { 0 };
	assert_false(decode((rc_xdrproc)xdr_byint, &bd, w, 4));
	int32_t nums[2] = { 10, 20 };
	b.kind = 2;
	b.byint_u.numbers.ints_len = 2;
	b.byint_u.numbers.ints_val = nums;
	byint *bc = roundtrip((rc_xdrproc)xdr_byint, &b, sizeof b, w, sizeof w, &len);
	assert_int_equal(len, 16);
	assert_int_equal(bc->byint_u.numbers.ints_val[1], 20);
	rc_xdr_free((rc_xdrproc)xdr_byint, bc);
	free(bc);

	/* every arm void: no <union>_u member, default accepts anything */
	empty e = { .k = 12345 };
	assert_int_equal(encode((rc_xdrproc)xdr_empty, &e, w, sizeof w), 4);
}

static void
test_procinfo(void **state)
{
	(void)state;
	assert_int_equal(basic_add_1_info.prog, 0x20000100u);
	assert_int_equal(basic_add_1_info.vers, 1);
	assert_int_equal(basic_add_1_info.proc, BASIC_ADD);
	assert_string_equal(basic_add_1_info.name, "BASIC_ADD");
	assert_true(basic_add_1_info.xargs == (rc_xdrproc)xdr_basic_add_1_argument);
	assert_int_equal(basic_add_1_info.args_size, sizeof(basic_add_1_argument));
	assert_true(basic_add_1_info.xres == (rc_xdrproc)rc_xdr_int);
	assert_int_equal(basic_add_1_info.res_size, sizeof(int32_t));

	assert_true(basic_null_1_info.xargs == (rc_xdrproc)rc_xdr_void);
	assert_int_equal(basic_null_1_info.args_size, 0);
	assert_true(basic_null_1_info.xres == (rc_xdrproc)rc_xdr_void);
	assert_int_equal(basic_null_1_info.res_size, 0);

	assert_true(basic_name_1_info.xargs == (rc_xdrproc)rc_xdr_wrapstring);
	assert_int_equal(basic_name_1_info.args_size, sizeof(char *));
	assert_true(basic_get_1_info.xargs == (rc_xdrproc)xdr_arrays);
	assert_true(basic_get_1_info.xres == (rc_xdrproc)xdr_result);
	assert_true(basic_ping_1_info.xres == (rc_xdrproc)rc_xdr_bool);
	assert_int_equal(basic_get_2_info.vers, 2);
	assert_int_equal(basic_get_2_info.proc, 2);
	assert_true(basic_get_2_info.xargs == (rc_xdrproc)xdr_flag);
	assert_true(lists_reverse_1_info.xargs == (rc_xdrproc)xdr_list);
}

static void
test_argument_struct(void **state)
{
	(void)state;
	basic_put_1_argument a = { .arg1 = "0123456789abcdef", .arg2 = "nm", .arg3 = -1 };
	unsigned char w[256];
	size_t len;
	basic_put_1_argument *c =
		roundtrip((rc_xdrproc)xdr_basic_put_1_argument, &a, sizeof a, w, sizeof w, &len);
	assert_int_equal(len, 16 + 8 + 8);
	assert_memory_equal(w, "0123456789abcdef", 16);
	assert_int_equal(be32(w + 16), 2);
	assert_true(c->arg3 == -1);
	rc_xdr_free((rc_xdrproc)xdr_basic_put_1_argument, c);
	free(c);
}

static void
test_constant_expressions(void **state)
{
	(void)state;
	assert_int_equal(SMALL, 4);
	assert_int_equal(MASK, 255);
	assert_int_equal(MODE, 0755);
	assert_int_equal(NEG, -1);
	assert_int_equal(TWICE, 8);
	assert_string_equal(GREETING, "hello");
	assert_int_equal(RED, 0);
	assert_int_equal(GREEN, 5);
	assert_int_equal(BLUE, 6);
	assert_int_equal(ALIAS, 5);
	assert_int_equal(BASE, 16);
	assert_int_equal(SHIFTED, 16);
	assert_int_equal(MIXED, 38);
	assert_int_equal(BITS, 238);
	assert_int_equal(DOWN, 64);
	assert_int_equal(MINUS, 4);
	assert_int_equal(LATER, 42);
	assert_int_equal(LOW, 0);
	assert_int_equal(MID, 8);
	assert_int_equal(HIGH, 17);
	assert_int_equal(EXPR_PROG, 0x20000102);
	assert_int_equal(EXPR_V, 1);
	assert_int_equal(EXPR_GET, 1);

	sized s = { .c = "" };
	assert_int_equal(sizeof s.a, 32);
	unsigned char w[512];
	int32_t b[18] = { 0 };
	s.b.b_len = 18; /* SHIFTED + 1 = 17 */
	s.b.b_val = b;
	assert_int_equal(encode((rc_xdrproc)xdr_sized, &s, w, sizeof w), 0);
	s.b.b_len = 17;
	assert_true(encode((rc_xdrproc)xdr_sized, &s, w, sizeof w) > 0);

	picks p = { .n = 17, .picks_u.one = 5 };            /* case BASE + 1 */
	assert_int_equal(encode((rc_xdrproc)xdr_picks, &p, w, sizeof w), 8);
	p.n = 36;                                            /* case (BASE + 2) * 2 */
	assert_int_equal(encode((rc_xdrproc)xdr_picks, &p, w, sizeof w), 12);
	p.n = 18;
	assert_int_equal(encode((rc_xdrproc)xdr_picks, &p, w, sizeof w), 0);
}

static void
test_sun_prelude(void **state)
{
	(void)state;
	char cookie[5] = { 9, 8, 7, 6, 5 };
	answer a = { .ok = TRUE };
	a.answer_u.data = (sunish){ 1, 2, 3, -4, 250, 65000, 1ull << 40, 1,
	                            { 5, cookie }, { .c = "DESBLOCK" }, "someone" };
	unsigned char w[512];
	size_t len;
	answer *c = roundtrip((rc_xdrproc)xdr_answer, &a, sizeof a, w, sizeof w, &len);
	/* ok, 8 scalars (u_int..bool_t: 7x4 + 8), netobj 4+8, des_block 8, netname 4+8 */
	assert_int_equal(len, 4 + 7 * 4 + 8 + 12 + 8 + 12);
	assert_int_equal(c->answer_u.data.cookie.n_len, 5);
	assert_memory_equal(c->answer_u.data.cookie.n_bytes, cookie, 5);
	assert_memory_equal(c->answer_u.data.key.c, "DESBLOCK", 8);
	assert_string_equal(c->answer_u.data.who, "someone");
	rc_xdr_free((rc_xdrproc)xdr_answer, c);
	free(c);
	assert_int_equal(MAXNETNAMELEN, 255);
}

/* ---------------------------------------------------------------------------------------- */
/* Lists                                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* make_list -- n nodes 0..n-1 (calloc'd: rc_xdr_free releases them). */
static list
make_list(size_t n)
{
	list head = NULL, *tail = &head;
	for (size_t i = 0; i < n; i++) {
		node *p = calloc(1, sizeof *p);
		assert_non_null(p);
		p->value = (int32_t)i;
		*tail = p;
		tail = &p->next;
	}
	return head;
}

static void
test_list_wire_format(void **state)
{
	(void)state;
	list l = make_list(3);
	unsigned char w[64];
	/* rpcgen's recursive form: present, node, present, node, ..., absent */
	static const uint32_t want[] = { 1, 0, 1, 1, 1, 2, 0 };
	assert_int_equal(encode((rc_xdrproc)xdr_list, &l, w, sizeof w), sizeof want);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		assert_int_equal(be32(w + 4 * i), want[i]);

	list d = NULL;
	assert_true(decode((rc_xdrproc)xdr_list, &d, w, sizeof want));
	int32_t i = 0;
	for (node *p = d; p != NULL; p = p->next, i++)
		assert_int_equal(p->value, i);
	assert_int_equal(i, 3);
	rc_xdr_free((rc_xdrproc)xdr_list, &d);
	assert_null(d);
	rc_xdr_free((rc_xdrproc)xdr_list, &l);

	/* an empty list is one "absent" */
	assert_int_equal(encode((rc_xdrproc)xdr_list, &l, w, sizeof w), 4);
	assert_int_equal(be32(w), 0);
}

static void
test_list_through_typedef(void **state)
{
	(void)state;
	/* entries: "typedef struct entry *entries;" declared before struct entry */
	char data[3] = { 1, 2, 3 };
	entry e3 = { "three", { 3, data }, NULL };
	entry e2 = { "two", { 2, data }, &e3 };
	entry e1 = { "one", { 0, NULL }, &e2 };
	holder h = { .items = NULL, .table = &e1, .root = NULL };
	unsigned char w[256];
	size_t len;
	holder *c = roundtrip((rc_xdrproc)xdr_holder, &h, sizeof h, w, sizeof w, &len);
	/* items: absent; table: present, "one"(4+4) opaque(4), more, "two"(4+4) opaque 2 (4+4),
	 * more, "three"(4+8) opaque 3 (4+4), no more; root: absent */
	assert_int_equal(len, 4 + 4 + 8 + 4 + 4 + 8 + 8 + 4 + 12 + 8 + 4 + 4);
	assert_string_equal(c->table->key, "one");
	assert_string_equal(c->table->rest->rest->key, "three");
	assert_int_equal(c->table->rest->rest->data.data_len, 3);
	assert_null(c->table->rest->rest->rest);
	rc_xdr_free((rc_xdrproc)xdr_holder, c);
	assert_null(c->table);
	free(c);
}

static void
test_tree_recursive(void **state)
{
	(void)state;
	tree l = { 1, NULL, NULL }, r = { 3, NULL, NULL }, root = { 2, &l, &r };
	holder h = { .root = &root };
	unsigned char w[256];
	size_t len;
	holder *c = roundtrip((rc_xdrproc)xdr_holder, &h, sizeof h, w, sizeof w, &len);
	assert_int_equal(c->root->key, 2);
	assert_int_equal(c->root->left->key, 1);
	assert_int_equal(c->root->right->key, 3);
	rc_xdr_free((rc_xdrproc)xdr_holder, c);
	free(c);
}

#define MILLION 1000000u

struct million_result {
	double build, encode, decode, compare, free;
	bool ok;
};

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* million -- build, encode, decode, compare and free a list of MILLION nodes. Runs on a
 * thread with an 8 MiB stack: recursion per node would overflow it. */
static void *
million(void *arg)
{
	struct million_result *r = arg;
	double t0 = now();
	list l = make_list(MILLION);
	double t1 = now();
	size_t cap = 4 + (size_t)MILLION * 8;
	unsigned char *w = malloc(cap);
	size_t len = encode((rc_xdrproc)xdr_list, &l, w, cap);
	double t2 = now();
	list d = NULL;
	bool decoded = decode((rc_xdrproc)xdr_list, &d, w, len);
	double t3 = now();
	size_t n = 0;
	bool same = true;
	for (node *p = d, *q = l; p != NULL || q != NULL; p = p->next, q = q->next, n++) {
		if (p == NULL || q == NULL || p->value != q->value) {
			same = false;
			break;
		}
	}
	double t4 = now();
	rc_xdr_free((rc_xdrproc)xdr_list, &d);
	rc_xdr_free((rc_xdrproc)xdr_list, &l);
	double t5 = now();
	free(w);
	r->build = t1 - t0;
	r->encode = t2 - t1;
	r->decode = t3 - t2;
	r->compare = t4 - t3;
	r->free = t5 - t4;
	r->ok = len == cap && decoded && same && n == MILLION && d == NULL && l == NULL;
	return NULL;
}

static void
test_million_node_list(void **state)
{
	(void)state;
	pthread_attr_t attr;
	pthread_t th;
	struct million_result r = { 0 };
	assert_int_equal(pthread_attr_init(&attr), 0);
	assert_int_equal(pthread_attr_setstacksize(&attr, (size_t)8 << 20), 0);
	assert_int_equal(pthread_create(&th, &attr, million, &r), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	pthread_attr_destroy(&attr);
	assert_true(r.ok);
	double coded = r.encode + r.decode + r.free;
	printf("# million-node list: build %.3f s, encode %.3f s, decode %.3f s, compare %.3f s, "
	       "free %.3f s (encode+decode+free %.3f s)\n",
	       r.build, r.encode, r.decode, r.compare, r.free, coded);
	/* linear, not quadratic: well under a second unoptimised; generous for sanitizers */
	assert_true(coded < 10.0);
}

/* A million-node chain (the self-link first: lists.x's chain) built in memory. */
static void *
chain_free(void *arg)
{
	bool *ok = arg;
	enum { N = 1000000 };
	chain head = { NULL, 0 };
	for (int i = 1; i <= N; i++) {
		chain *c = malloc(sizeof *c);
		if (c == NULL)
			return NULL;
		c->up = head.up;
		c->depth = i;
		head.up = c;
	}
	/* a short one on the wire first: the next node inside this one, as rpcgen codes it */
	chain two = { NULL, 2 }, one = { &two, 1 };
	unsigned char buf[64];
	size_t n = encode((rc_xdrproc)xdr_chain, &one, buf, sizeof buf);
	*ok = n == 16 && be32(buf) == 1 && be32(buf + 4) == 0 && be32(buf + 8) == 2 &&
	      be32(buf + 12) == 1;
	/* freed in a loop: no stack overflow (the thread has 2 MiB) */
	rc_xdr_free((rc_xdrproc)xdr_chain, &head);
	*ok = *ok && head.up == NULL;
	return NULL;
}

/* A chain (one self-link that is not the last field) of a million nodes built in memory is
 * freed without recursion: rc_xdr_free once overflowed the stack on it. */
static void
test_chain_freed_in_a_loop(void **state)
{
	(void)state;
	pthread_attr_t attr;
	pthread_t th;
	bool ok = false;
	assert_int_equal(pthread_attr_init(&attr), 0);
	assert_int_equal(pthread_attr_setstacksize(&attr, (size_t)2 << 20), 0);
	assert_int_equal(pthread_create(&th, &attr, chain_free, &ok), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	pthread_attr_destroy(&attr);
	assert_true(ok);
}

/* A wire form claiming more entries than it holds fails cleanly, at every cut, and what was
 * decoded is freed. */
static void
test_list_truncated(void **state)
{
	(void)state;
	list l = make_list(5);
	unsigned char w[64];
	size_t len = encode((rc_xdrproc)xdr_list, &l, w, sizeof w);
	assert_int_equal(len, 4 + 5 * 8);
	rc_xdr_free((rc_xdrproc)xdr_list, &l);
	for (size_t cut = 0; cut < len; cut += 4) {
		list d = NULL;
		assert_false(decode((rc_xdrproc)xdr_list, &d, w, cut));
		rc_xdr_free((rc_xdrproc)xdr_list, &d);
		assert_null(d);
	}

	/* a million nodes announced, the buffer ends after "more" */
	size_t n = MILLION, cap = 4 + n * 8;
	unsigned char *big = malloc(cap);
	for (size_t i = 0; i < n; i++) {
		put32(big + 8 * i, 1);
		put32(big + 8 * i + 4, (uint32_t)i);
	}
	put32(big + 8 * n, 1); /* and one more, which is not there */
	list d = NULL;
	assert_false(decode((rc_xdrproc)xdr_list, &d, big, cap));
	assert_non_null(d); /* what was decoded stays attached... */
	rc_xdr_free((rc_xdrproc)xdr_list, &d); /* ...and is all released */
	assert_null(d);
	free(big);
}

/* Nodes are allocated under the stream's allocation budget. */
static void
test_list_budget(void **state)
{
	(void)state;
	list l = make_list(1000);
	size_t cap = 4 + 1000 * 8;
	unsigned char *w = malloc(cap);
	assert_int_equal(encode((rc_xdrproc)xdr_list, &l, w, cap), cap);
	rc_xdr_free((rc_xdrproc)xdr_list, &l);
	rc_xdr x;
	list d = NULL;
	rc_xdrmem_create(&x, w, cap, RC_XDR_DECODE);
	rc_xdr_set_limits(&x, 100 * sizeof(node), 0);
	assert_false(xdr_list(&x, &d));
	rc_xdr_free((rc_xdrproc)xdr_list, &d);
	free(w);
}

/* ---- world.x: what real files do ------------------------------------------------------ */

/* The routines of world.x's external types, which a program supplies. */
bool
xdr_external_time(rc_xdr *xdrs, external_time *objp)
{
	return rc_xdr_hyper(xdrs, objp);
}

bool
xdr_ndmp4_u_quad(rc_xdr *xdrs, ndmp4_u_quad *objp)
{
	return rc_xdr_u_hyper(xdrs, (uint64_t *)objp);
}

/* 64-bit constants keep their values and types; rc_ members, the auth flavors in case labels
 * and a C constant the .x file never defines work; external types code through the program's
 * routines; zero-length arrays code nothing. */
static void
test_world(void **state)
{
	(void)state;
	unsigned char buf[64];
	_Static_assert(NFS4_UINT64_MAX == UINT64_MAX, "unsigned 64-bit constant");
	_Static_assert(NFS4_INT64_MAX == INT64_MAX, "signed 64-bit constant");
	_Static_assert(MIN_INT64 == INT64_MIN && MIN_INT64 < 0, "INT64_MIN");
	_Static_assert(PAST_INT64 == (uint64_t)INT64_MAX + 1, "computed above INT64_MAX");
	_Static_assert(BIG_DECIMAL == UINT64_MAX, "decimal with its suffix");

	referring_call4 rc = { 7, 9 }, rc2 = { 0, 0 };
	assert_int_equal(encode((rc_xdrproc)xdr_referring_call4, &rc, buf, sizeof buf), 8);
	assert_true(decode((rc_xdrproc)xdr_referring_call4, &rc2, buf, 8));
	assert_int_equal(rc2.rc_sequenceid, 7);
	assert_int_equal(rc2.rc_slotid, 9);

	callback_sec_parms4 p = { 0 }, q = { 0 };
	p.cb_secflavor = AUTH_SYS;
	p.callback_sec_parms4_u.stamp = NFS4_MAXFILEOFF;
	assert_int_equal(encode((rc_xdrproc)xdr_callback_sec_parms4, &p, buf, sizeof buf), 12);
	assert_int_equal(be32(buf), 1);
	assert_true(decode((rc_xdrproc)xdr_callback_sec_parms4, &q, buf, 12));
	assert_true(q.callback_sec_parms4_u.stamp == 0xfffffffffffffffeull);
	p.cb_secflavor = AUTH_LOCAL_FLAVOR;
	p.callback_sec_parms4_u.local = -3;
	assert_int_equal(encode((rc_xdrproc)xdr_callback_sec_parms4, &p, buf, sizeof buf), 8);
	assert_int_equal(be32(buf), 400000);
	p.cb_secflavor = AUTH_NONE;
	assert_int_equal(encode((rc_xdrproc)xdr_callback_sec_parms4, &p, buf, sizeof buf), 4);
	p.cb_secflavor = RPCSEC_GSS;
	p.callback_sec_parms4_u.gss_handle.gss_handle_len = 0;
	assert_int_equal(encode((rc_xdrproc)xdr_callback_sec_parms4, &p, buf, sizeof buf), 8);

	ndmp4_size sz = { 0x123456789abcdefull, -2 }, sz2 = { 0, 0 };
	assert_int_equal(encode((rc_xdrproc)xdr_ndmp4_size, &sz, buf, sizeof buf), 16);
	assert_true(decode((rc_xdrproc)xdr_ndmp4_size, &sz2, buf, 16));
	assert_true(sz2.total_size == 0x123456789abcdefull && sz2.when == -2);

	results_none r = { 5 }, r2 = { 0 };
	assert_int_equal(encode((rc_xdrproc)xdr_results_none, &r, buf, sizeof buf), 4);
	assert_true(decode((rc_xdrproc)xdr_results_none, &r2, buf, 4));
	assert_int_equal(r2.count, 5);
	only_empty oe = { 0 };
	assert_int_equal(encode((rc_xdrproc)xdr_only_empty, &oe, buf, sizeof buf), 0);
	maybe_empty m = { 1, { { 0 } } };
	assert_int_equal(encode((rc_xdrproc)xdr_maybe_empty, &m, buf, sizeof buf), 4);
	m.which = 0;
	assert_int_equal(encode((rc_xdrproc)xdr_maybe_empty, &m, buf, sizeof buf), 4);
	assert_true(decode((rc_xdrproc)xdr_maybe_empty, &m, buf, 4));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scalars_wire),
		cmocka_unit_test(test_arrays_roundtrip),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_union_arms),
		cmocka_unit_test(test_procinfo),
		cmocka_unit_test(test_argument_struct),
		cmocka_unit_test(test_constant_expressions),
		cmocka_unit_test(test_sun_prelude),
		cmocka_unit_test(test_list_wire_format),
		cmocka_unit_test(test_list_through_typedef),
		cmocka_unit_test(test_tree_recursive),
		cmocka_unit_test(test_million_node_list),
		cmocka_unit_test(test_list_truncated),
		cmocka_unit_test(test_chain_freed_in_a_loop),
		cmocka_unit_test(test_list_budget),
		cmocka_unit_test(test_world),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

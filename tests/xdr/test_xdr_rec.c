/*
 * Record marking (xdr/xdr_rec.c, RFC 5531 section 11): the encoder with buffers small enough
 * that records span many fragments, and the reader fed the same bytes in every kind of split
 * (a byte at a time, fixed and seeded random chunk sizes, all at once), with empty records,
 * zero-length non-final fragments, several records per read, and records over the cap.
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

static bool sink_write(void *ctx, const void *buf, size_t len)
{
	return tu_sink_write(ctx, buf, len);
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- a mixed record ---------------------------------------------------------------------- */

struct item {
	int32_t i;
	int64_t h;
	char op[13];
	char *s;
	struct { uint32_t len; int32_t *val; } ints;
	struct { uint32_t len; double *val; } dbls;
	struct { uint32_t len; bool *val; } flags;
	rc_quadruple q;
	struct item *next;
};

static bool xdr_item(rc_xdr *x, struct item *it)
{
	return rc_xdr_int(x, &it->i) && rc_xdr_hyper(x, &it->h) &&
	       rc_xdr_opaque(x, it->op, sizeof(it->op)) && rc_xdr_string(x, &it->s, 1000) &&
	       rc_xdr_array(x, &it->ints.val, &it->ints.len, 1000, 4, (rc_xdrproc)rc_xdr_int) &&
	       rc_xdr_array(x, &it->dbls.val, &it->dbls.len, 1000, 8, (rc_xdrproc)rc_xdr_double) &&
	       rc_xdr_array(x, &it->flags.val, &it->flags.len, 1000, sizeof(bool),
	                    (rc_xdrproc)rc_xdr_bool) &&
	       rc_xdr_quadruple(x, &it->q) &&
	       rc_xdr_pointer(x, &it->next, sizeof(struct item), (rc_xdrproc)xdr_item);
}

static int32_t g_ints[50];
static double g_dbls[9];
static bool g_flags[7];
static struct item g_items[3];

static void make_items(void)
{
	for (int i = 0; i < 50; i++)
		g_ints[i] = i * 0x01010101 - 7;
	for (int i = 0; i < 9; i++)
		g_dbls[i] = i / 3.0;
	for (int i = 0; i < 7; i++)
		g_flags[i] = i % 3 == 0;
	for (int k = 0; k < 3; k++) {
		struct item *it = &g_items[k];
		memset(it, 0, sizeof(*it));
		it->i = -k;
		it->h = INT64_MIN + k;
		memset(it->op, 'a' + k, sizeof(it->op));
		it->s = k == 1 ? "" : "a string of some thirty bytes!";
		it->ints.len = 50 - (uint32_t)k;
		it->ints.val = g_ints;
		it->dbls.len = 9;
		it->dbls.val = g_dbls;
		it->flags.len = 7;
		it->flags.val = g_flags;
		memset(&it->q, 0x40 + k, sizeof(it->q));
		it->next = k < 2 ? &g_items[k + 1] : NULL;
	}
}

/* The record's payload as a memory stream encodes it. */
static size_t encode_mem(struct item *it, unsigned char *buf, size_t cap)
{
	rc_xdr x;
	rc_xdrmem_create(&x, buf, cap, RC_XDR_ENCODE);
	assert_true(xdr_item(&x, it));
	return rc_xdr_getpos(&x);
}

/*
 * Split a record-marked byte stream into records; check that every non-final fragment is
 * non-empty and fills the encoder's window of frag bytes (0: any) but for at most 4 bytes
 * (a hyper or double is never split, so a fragment may end up to 4 bytes short). Returns the
 * number of records; payloads are concatenated in out.
 */
static size_t parse_records(const unsigned char *p, size_t len, size_t frag,
                            unsigned char *out, size_t *rec_len, size_t max_recs)
{
	size_t nrec = 0, cur = 0, o = 0;
	while (len > 0) {
		uint32_t h;
		size_t n;
		assert_true(len >= 4);
		h = get32(p);
		n = h & 0x7fffffffu;
		assert_true(len - 4 >= n);
		if (!(h & 0x80000000u) && frag != 0) {
			assert_true(n <= frag);
			assert_true(n + 4 >= frag);
		}
		memcpy(out + o, p + 4, n);
		o += n;
		cur += n;
		p += 4 + n;
		len -= 4 + n;
		if (h & 0x80000000u) {
			assert_true(nrec < max_recs);
			rec_len[nrec++] = cur;
			cur = 0;
		}
	}
	assert_int_equal(cur, 0); /* the stream ended at a record boundary */
	return nrec;
}

static void test_encoder_many_fragments(void **state)
{
	static const size_t sizes[] = {16, 17, 18, 19, 20, 24, 28, 36, 100, 4096};
	unsigned char ref[4096], got[8192];
	size_t ref_len, rec_len[4];
	(void)state;
	make_items();
	ref_len = encode_mem(&g_items[0], ref, sizeof(ref));
	assert_true(ref_len > 600);
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		size_t bufsize = sizes[si], window = (bufsize & ~(size_t)3) - 4;
		unsigned char *buf = malloc(bufsize);
		struct tu_sink sink = {0};
		rc_xdr x;
		assert_int_equal(rc_xdrrec_create(&x, buf, bufsize, sink_write, &sink), RC_OK);
		assert_int_equal(x.x_op, RC_XDR_ENCODE);
		/* record 1: the mixed item; getpos counts the whole record across fragments */
		assert_true(xdr_item(&x, &g_items[0]));
		assert_int_equal(rc_xdr_getpos(&x), ref_len);
		assert_true(rc_xdrrec_endofrecord(&x));
		assert_int_equal(rc_xdr_getpos(&x), 0);
		/* record 2: empty */
		assert_true(rc_xdrrec_endofrecord(&x));
		/* record 3: the item again */
		assert_true(xdr_item(&x, &g_items[0]));
		assert_true(rc_xdrrec_endofrecord(&x));
		/* the fragment count matches the buffer size */
		assert_true(sink.writes >= (ref_len + window - 1) / window * 2 + 1);
		assert_true(sink.writes <= (ref_len + window - 5) / (window - 4) * 2 + 1);
		assert_int_equal(parse_records(sink.data, sink.len, window, got, rec_len, 4), 3);
		assert_int_equal(rec_len[0], ref_len);
		assert_int_equal(rec_len[1], 0);
		assert_int_equal(rec_len[2], ref_len);
		assert_memory_equal(got, ref, ref_len);
		assert_memory_equal(got + ref_len, ref, ref_len);
		tu_sink_free(&sink);
		free(buf);
	}
}

static void test_encoder_empty_record(void **state)
{
	unsigned char buf[16];
	struct tu_sink sink = {0};
	rc_xdr x;
	(void)state;
	assert_int_equal(rc_xdrrec_create(&x, buf, sizeof(buf), sink_write, &sink), RC_OK);
	assert_true(rc_xdrrec_endofrecord(&x));
	assert_int_equal(sink.len, 4);
	assert_int_equal(get32(sink.data), 0x80000000u);
	tu_sink_free(&sink);
}

static void test_encoder_exact_window(void **state)
{
	/* a record exactly one window long: one non-final fragment, then an empty final one,
	 * or (as here) the full window sent as the final fragment */
	unsigned char buf[20];
	struct tu_sink sink = {0};
	int32_t v[5] = {1, 2, 3, 4, 5};
	unsigned char got[64];
	size_t rl[4];
	rc_xdr x;
	(void)state;
	assert_int_equal(rc_xdrrec_create(&x, buf, sizeof(buf), sink_write, &sink), RC_OK);
	for (int i = 0; i < 4; i++)
		assert_true(rc_xdr_int(&x, &v[i]));
	assert_int_equal(sink.writes, 0); /* 16 bytes fill the window but need no flush yet */
	assert_true(rc_xdrrec_endofrecord(&x));
	assert_int_equal(sink.len, 20);
	assert_int_equal(get32(sink.data), 0x80000010u);
	/* one more int spills into a second fragment */
	for (int i = 0; i < 5; i++)
		assert_true(rc_xdr_int(&x, &v[i]));
	assert_true(rc_xdrrec_endofrecord(&x));
	assert_int_equal(get32(sink.data + 20), 0x00000010u);
	assert_int_equal(get32(sink.data + 40), 0x80000004u);
	assert_int_equal(parse_records(sink.data, sink.len, 16, got, rl, 4), 2);
	assert_int_equal(rl[1], 20);
	assert_int_equal(get32(got + 16 + 16), 5);
	tu_sink_free(&sink);
}

static void test_encoder_large_opaque(void **state)
{
	/* 100000 bytes through a 64-byte buffer: 1667 fragments */
	size_t n = 100000;
	unsigned char *data = malloc(n), *got = malloc(n + 64), buf[64];
	char *p = (char *)data;
	uint32_t len = (uint32_t)n;
	struct tu_sink sink = {0};
	size_t rl[2];
	rc_xdr x;
	(void)state;
	for (size_t i = 0; i < n; i++)
		data[i] = (unsigned char)(i * 7 + (i >> 8));
	assert_int_equal(rc_xdrrec_create(&x, buf, sizeof(buf), sink_write, &sink), RC_OK);
	assert_true(rc_xdr_bytes(&x, &p, &len, UINT32_MAX));
	assert_int_equal(rc_xdr_getpos(&x), 4 + n);
	assert_true(rc_xdrrec_endofrecord(&x));
	assert_int_equal(sink.writes, (4 + n + 59) / 60);
	assert_int_equal(parse_records(sink.data, sink.len, 60, got, rl, 2), 1);
	assert_int_equal(rl[0], 4 + n);
	assert_int_equal(get32(got), n);
	assert_memory_equal(got + 4, data, n);
	tu_sink_free(&sink);
	free(data);
	free(got);
}

static void test_encoder_write_failure(void **state)
{
	unsigned char buf[16];
	struct tu_sink sink = {0};
	int32_t v = 1;
	rc_xdr x;
	bool ok = true;
	(void)state;
	sink.fail_after = 1;
	assert_int_equal(rc_xdrrec_create(&x, buf, sizeof(buf), sink_write, &sink), RC_OK);
	/* 12-byte window: the 4th int flushes fragment 1, the 7th would flush fragment 2 */
	for (int i = 0; i < 6; i++)
		ok = ok && rc_xdr_int(&x, &v);
	assert_true(ok);
	assert_false(rc_xdr_int(&x, &v));
	assert_false(rc_xdrrec_endofrecord(&x));
	assert_int_equal(sink.writes, 1);
	tu_sink_free(&sink);
	/* and an end of record whose write fails */
	sink.fail_after = 0;
	sink.writes = 0;
	assert_int_equal(rc_xdrrec_create(&x, buf, sizeof(buf), sink_write, &sink), RC_OK);
	sink.fail_after = 1;
	sink.writes = 1;
	assert_true(rc_xdr_int(&x, &v));
	assert_false(rc_xdrrec_endofrecord(&x));
	tu_sink_free(&sink);
}

static void test_encoder_bad_arguments(void **state)
{
	unsigned char buf[32];
	struct tu_sink sink = {0};
	rc_xdr x;
	(void)state;
	assert_int_equal(rc_xdrrec_create(&x, NULL, 32, sink_write, &sink), RC_INVAL);
	assert_int_equal(rc_xdrrec_create(&x, buf, 32, NULL, &sink), RC_INVAL);
	assert_int_equal(rc_xdrrec_create(&x, buf, 15, sink_write, &sink), RC_INVAL);
	assert_int_equal(rc_xdrrec_create(NULL, buf, 32, sink_write, &sink), RC_INVAL);
	assert_int_equal(rc_xdrrec_create(&x, buf, 16, sink_write, &sink), RC_OK);
	/* end of record on a memory stream */
	rc_xdrmem_create(&x, buf, sizeof(buf), RC_XDR_ENCODE);
	assert_false(rc_xdrrec_endofrecord(&x));
}

static void test_encoder_inline(void **state)
{
	unsigned char buf[24];
	struct tu_sink sink = {0};
	int32_t v = 9;
	unsigned char *p;
	rc_xdr x;
	(void)state;
	assert_int_equal(rc_xdrrec_create(&x, buf, sizeof(buf), sink_write, &sink), RC_OK);
	assert_true(rc_xdr_int(&x, &v));
	/* more than a window never fits: NULL, and nothing is sent */
	assert_null(rc_xdr_inline(&x, 24));
	assert_null(rc_xdr_inline(&x, 21));
	assert_int_equal(sink.writes, 0);
	assert_int_equal(rc_xdr_getpos(&x), 4);
	/* within the window: what is buffered goes out first to make room */
	p = rc_xdr_inline(&x, 20);
	assert_non_null(p);
	assert_int_equal(sink.writes, 1);
	memset(p, 0x11, 20);
	assert_int_equal(rc_xdr_getpos(&x), 24);
	assert_true(rc_xdrrec_endofrecord(&x));
	assert_int_equal(rc_xdr_getpos(&x), 0);
	assert_int_equal(sink.len, 4 + 4 + 4 + 20);
	assert_int_equal(get32(sink.data), 4);
	assert_int_equal(get32(sink.data + 4), 9);
	assert_int_equal(get32(sink.data + 8), 0x80000014u);
	assert_int_equal(sink.data[12 + 19], 0x11);
	tu_sink_free(&sink);
}

/* ---- the reader -------------------------------------------------------------------------- */

/* Append a record of len bytes as the given fragments (their sum is len; the last is final). */
static void put_record(struct tu_sink *s, const unsigned char *payload, const size_t *frags,
                       size_t nfrags)
{
	for (size_t i = 0; i < nfrags; i++) {
		unsigned char h[4];
		uint32_t v = (uint32_t)frags[i] | (i + 1 == nfrags ? 0x80000000u : 0);
		h[0] = (unsigned char)(v >> 24);
		h[1] = (unsigned char)(v >> 16);
		h[2] = (unsigned char)(v >> 8);
		h[3] = (unsigned char)v;
		tu_sink_write(s, h, 4);
		tu_sink_write(s, payload, frags[i]);
		payload += frags[i];
	}
}

#define NREC 10
struct stream {
	struct tu_sink bytes;
	unsigned char *payload[NREC];
	size_t len[NREC];
	size_t n;
};

static void add(struct stream *st, size_t len, const size_t *frags, size_t nfrags)
{
	unsigned char *p = malloc(len ? len : 1);
	size_t sum = 0;
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)(st->n * 41 + i * 13 + (i >> 9));
	for (size_t i = 0; i < nfrags; i++)
		sum += frags[i];
	assert_int_equal(sum, len);
	put_record(&st->bytes, p, frags, nfrags);
	st->payload[st->n] = p;
	st->len[st->n] = len;
	st->n++;
}

static void build_stream(struct stream *st)
{
	static const size_t f0[] = {10}, f1[] = {0}, f2[] = {0, 30, 0, 0, 70}, f3[] = {1, 0},
	                    f5[] = {0, 0, 0}, f6[] = {40000, 30000}, f7[] = {3},
	                    f8[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
	size_t f4[200], n4 = 0, sum4 = 0;
	uint64_t seed = 42;
	memset(st, 0, sizeof(*st));
	add(st, 10, f0, 1);   /* one fragment */
	add(st, 0, f1, 1);    /* empty record */
	add(st, 100, f2, 5);  /* zero-length non-final fragments */
	add(st, 1, f3, 2);    /* an empty final fragment */
	while (sum4 < 5000) { /* random fragment sizes, some of them zero */
		size_t k = tu_rand(&seed) % 97;
		if (sum4 + k > 5000)
			k = 5000 - sum4;
		f4[n4++] = k;
		sum4 += k;
	}
	add(st, 5000, f4, n4);
	add(st, 0, f5, 3);        /* empty, as three empty fragments */
	add(st, 70000, f6, 2);    /* more than the reader's first buffer */
	add(st, 3, f7, 1);        /* not a multiple of 4 */
	add(st, 16, f8, 16);      /* one byte a fragment */
}

static void free_stream(struct stream *st)
{
	for (size_t i = 0; i < st->n; i++)
		free(st->payload[i]);
	tu_sink_free(&st->bytes);
}

/*
 * Feed st's bytes to a reader in chunks chosen by next_chunk and check that exactly st's
 * records come out, in order. Records taken between two space() calls are re-checked just
 * before the next space() call (they must still be valid).
 */
typedef size_t (*chunker)(void *ctx);

static void feed_and_check(struct stream *st, chunker next_chunk, void *ctx, size_t max_record)
{
	rc_recreader r;
	size_t pos = 0, got = 0;
	void *recs[NREC];
	size_t lens[NREC], first = 0;
	rc_recreader_init(&r, max_record);
	while (pos < st->bytes.len || got < st->n) {
		void *p;
		size_t n, want, k;
		/* everything taken since the last space() call is still intact */
		for (size_t i = first; i < got; i++) {
			assert_int_equal(lens[i], st->len[i]);
			assert_memory_equal(recs[i], st->payload[i], lens[i]);
		}
		first = got;
		assert_true(pos < st->bytes.len);
		assert_int_equal(rc_recreader_space(&r, &p, &n), RC_OK);
		assert_true(n >= 1);
		want = next_chunk(ctx);
		k = want < n ? want : n;
		if (k > st->bytes.len - pos)
			k = st->bytes.len - pos;
		memcpy(p, st->bytes.data + pos, k);
		rc_recreader_commit(&r, k);
		pos += k;
		for (;;) {
			void *rec;
			size_t len;
			rc_status s = rc_recreader_next(&r, &rec, &len);
			if (s == RC_AGAIN)
				break;
			assert_int_equal(s, RC_OK);
			assert_true(got < st->n);
			recs[got] = rec;
			lens[got] = len;
			got++;
		}
	}
	for (size_t i = first; i < got; i++)
		assert_memory_equal(recs[i], st->payload[i], lens[i]);
	assert_int_equal(got, st->n);
	assert_int_equal(rc_recreader_buffered(&r), 0);
	{
		void *rec;
		size_t len;
		assert_int_equal(rc_recreader_next(&r, &rec, &len), RC_AGAIN);
	}
	rc_recreader_destroy(&r);
}

static size_t chunk_fixed(void *ctx)
{
	return *(size_t *)ctx;
}

static size_t chunk_random(void *ctx)
{
	uint64_t *s = ctx;
	uint64_t r = tu_rand(s);
	/* mostly small chunks, sometimes large ones */
	return (r & 7) == 0 ? 1 + (r >> 8) % 100000 : 1 + (r >> 8) % 300;
}

static void test_reader_byte_at_a_time(void **state)
{
	struct stream st;
	size_t one = 1;
	(void)state;
	build_stream(&st);
	tu_alloc_reset();
	feed_and_check(&st, chunk_fixed, &one, 0);
	assert_int_equal(tu_alloc.live, 0);
	free_stream(&st);
}

static void test_reader_fixed_chunks(void **state)
{
	static const size_t sizes[] = {2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 64, 511, 4096, 65536};
	struct stream st;
	(void)state;
	build_stream(&st);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t c = sizes[i];
		feed_and_check(&st, chunk_fixed, &c, 0);
	}
	free_stream(&st);
}

static void test_reader_random_chunks(void **state)
{
	struct stream st;
	(void)state;
	build_stream(&st);
	for (uint64_t seed = 1; seed <= 40; seed++) {
		uint64_t s = seed * 0x9e3779b97f4a7c15ULL;
		feed_and_check(&st, chunk_random, &s, 0);
	}
	free_stream(&st);
}

static void test_reader_all_at_once(void **state)
{
	/* every record in one read: next() hands them out in a row */
	struct stream st;
	size_t all = SIZE_MAX;
	(void)state;
	build_stream(&st);
	feed_and_check(&st, chunk_fixed, &all, 0);
	/* a cap of exactly the largest record is enough */
	feed_and_check(&st, chunk_fixed, &all, 70000);
	free_stream(&st);
}

static void test_reader_header_splits(void **state)
{
	/* every split point of a header: 3 small records, each cut at each offset */
	struct stream st;
	static const size_t f[] = {4, 0, 4};
	(void)state;
	memset(&st, 0, sizeof(st));
	add(&st, 8, f, 3);
	add(&st, 8, f, 3);
	add(&st, 8, f, 3);
	for (size_t cut = 1; cut < st.bytes.len; cut++) {
		rc_recreader r;
		void *p, *rec;
		size_t n, len, got = 0;
		rc_recreader_init(&r, 0);
		assert_int_equal(rc_recreader_space(&r, &p, &n), RC_OK);
		memcpy(p, st.bytes.data, cut);
		rc_recreader_commit(&r, cut);
		while (rc_recreader_next(&r, &rec, &len) == RC_OK) {
			assert_memory_equal(rec, st.payload[got], 8);
			got++;
		}
		/* each record is 20 bytes on the wire: 3 headers and 8 payload bytes */
		assert_int_equal(got, cut / 20);
		assert_true(rc_recreader_buffered(&r) <= cut - got * 20);
		assert_int_equal(rc_recreader_space(&r, &p, &n), RC_OK);
		memcpy(p, st.bytes.data + cut, st.bytes.len - cut);
		rc_recreader_commit(&r, st.bytes.len - cut);
		while (rc_recreader_next(&r, &rec, &len) == RC_OK) {
			assert_int_equal(len, 8);
			assert_memory_equal(rec, st.payload[got], 8);
			got++;
		}
		assert_int_equal(got, 3);
		rc_recreader_destroy(&r);
	}
	free_stream(&st);
}

/* Feed raw bytes in one go and return next()'s first non-RC_OK status; counts records. */
static rc_status feed_raw(rc_recreader *r, const unsigned char *b, size_t len, size_t *nrec)
{
	rc_status s = RC_AGAIN;
	while (len > 0) {
		void *p, *rec;
		size_t n, rl;
		s = rc_recreader_space(r, &p, &n);
		if (s != RC_OK)
			return s;
		if (n > len)
			n = len;
		memcpy(p, b, n);
		rc_recreader_commit(r, n);
		b += n;
		len -= n;
		while ((s = rc_recreader_next(r, &rec, &rl)) == RC_OK)
			(*nrec)++;
		if (s != RC_AGAIN)
			return s;
	}
	return s;
}

static void test_reader_cap(void **state)
{
	unsigned char b[400];
	size_t nrec = 0;
	rc_recreader r;
	void *p;
	size_t n;
	(void)state;
	memset(b, 0, sizeof(b));
	/* a record of exactly the cap (two fragments) */
	memcpy(b, "\x00\x00\x00\x3c", 4);       /* 60, not last */
	memcpy(b + 64, "\x80\x00\x00\x28", 4);  /* 40, last */
	rc_recreader_init(&r, 100);
	assert_int_equal(feed_raw(&r, b, 108, &nrec), RC_AGAIN);
	assert_int_equal(nrec, 1);
	/* one byte over, in one fragment */
	memcpy(b, "\x80\x00\x00\x65", 4); /* 101 */
	assert_int_equal(feed_raw(&r, b, 4, &nrec), RC_MSGTOOLARGE);
	/* the stream cannot be resynchronised: every later call fails the same way */
	assert_int_equal(rc_recreader_space(&r, &p, &n), RC_MSGTOOLARGE);
	{
		void *rec;
		size_t rl;
		assert_int_equal(rc_recreader_next(&r, &rec, &rl), RC_MSGTOOLARGE);
	}
	rc_recreader_destroy(&r);

	/* over the cap only as the sum of its fragments: 60 + 41 */
	rc_recreader_init(&r, 100);
	memcpy(b, "\x00\x00\x00\x3c", 4);
	memcpy(b + 64, "\x80\x00\x00\x29", 4);
	nrec = 0;
	assert_int_equal(feed_raw(&r, b, 64, &nrec), RC_AGAIN);
	assert_int_equal(feed_raw(&r, b + 64, 4, &nrec), RC_MSGTOOLARGE);
	assert_int_equal(nrec, 0);
	rc_recreader_destroy(&r);

	/* many empty non-final fragments never add up to anything */
	rc_recreader_init(&r, 1);
	memset(b, 0, 396);
	memcpy(b + 396, "\x80\x00\x00\x00", 4);
	nrec = 0;
	assert_int_equal(feed_raw(&r, b, 400, &nrec), RC_AGAIN);
	assert_int_equal(nrec, 1);
	rc_recreader_destroy(&r);
}

static void test_reader_huge_marks(void **state)
{
	/* 0x7fffffff (non-final) and 0xffffffff (final) marks with the default cap and a large
	 * one: refused or awaited, never allocated at the claimed size */
	static const unsigned char m1[] = {0x7f, 0xff, 0xff, 0xff}, m2[] = {0xff, 0xff, 0xff, 0xff},
	                           m3[] = {0x80, 0x80, 0x00, 0x00}; /* 8 MiB + 0 */
	rc_recreader r;
	size_t nrec = 0;
	(void)state;
	tu_alloc_reset();
	rc_recreader_init(&r, 0);
	assert_int_equal(feed_raw(&r, m1, 4, &nrec), RC_MSGTOOLARGE);
	rc_recreader_destroy(&r);
	rc_recreader_init(&r, 0);
	assert_int_equal(feed_raw(&r, m2, 4, &nrec), RC_MSGTOOLARGE);
	rc_recreader_destroy(&r);
	/* 8 MiB exactly is the default cap: accepted, and awaited */
	rc_recreader_init(&r, 0);
	assert_int_equal(feed_raw(&r, m3, 4, &nrec), RC_AGAIN);
	rc_recreader_destroy(&r);
	assert_true(tu_alloc.max_request <= 128 * 1024);

	/* a cap of 4 GiB: 0x7fffffff is under it, accepted, and the buffer still only grows
	 * with the data that actually arrives */
	tu_alloc_reset();
	rc_recreader_init(&r, (size_t)4 << 30);
	assert_int_equal(feed_raw(&r, m2, 4, &nrec), RC_AGAIN);
	{
		unsigned char junk[1000];
		memset(junk, 0x5a, sizeof(junk));
		for (int i = 0; i < 100; i++)
			assert_int_equal(feed_raw(&r, junk, sizeof(junk), &nrec), RC_AGAIN);
	}
	assert_true(tu_alloc.max_request <= 256 * 1024);
	assert_int_equal(rc_recreader_buffered(&r), 100000);
	rc_recreader_destroy(&r);
	assert_int_equal(nrec, 0);
	assert_int_equal(tu_alloc.live, 0);
}

static void test_reader_unbounded_cap(void **state)
{
	/* the largest possible cap still lets records beyond the first buffer through */
	struct stream st;
	size_t c = 100000;
	(void)state;
	build_stream(&st);
	feed_and_check(&st, chunk_fixed, &c, SIZE_MAX);
	feed_and_check(&st, chunk_fixed, &c, SIZE_MAX - 1000);
	free_stream(&st);
}

/*
 * A big record arriving in pieces stays where its first piece landed once the buffer has
 * room for it: space() hands out the bytes right behind it (nothing moved), and the record
 * comes out at the first piece's payload. (The first such record may be moved while the
 * buffer grows; the second, in the grown buffer, is not.)
 */
static void test_reader_big_record_stays_put(void **state)
{
	const size_t len = ((size_t)1 << 20) - 1000, piece = 3000; /* (room for a mark) */
	unsigned char *rec = malloc(4 + len);
	rc_recreader r;
	(void)state;
	assert_non_null(rec);
	rec[0] = 0x80 | (unsigned char)(len >> 24);
	rec[1] = (unsigned char)(len >> 16);
	rec[2] = (unsigned char)(len >> 8);
	rec[3] = (unsigned char)len;
	for (size_t i = 0; i < len; i++)
		rec[4 + i] = (unsigned char)(i * 7 + 1);
	rc_recreader_init(&r, 0);
	for (int round = 0; round < 2; round++) {
		size_t pos = 0;
		unsigned char *first = NULL;
		void *out = NULL;
		size_t olen = 0;
		rc_status s = RC_AGAIN;
		while (s == RC_AGAIN) {
			void *p;
			size_t n, k;
			assert_true(pos < 4 + len);
			assert_int_equal(rc_recreader_space(&r, &p, &n), RC_OK);
			if (round == 1 && first != NULL)
				assert_ptr_equal(p, first + pos); /* right behind: nothing moved */
			if (first == NULL)
				first = p;
			k = pos == 0 ? piece : 4 + len - pos < 65536 ? 4 + len - pos : 65536;
			if (k > n)
				k = n;
			memcpy(p, rec + pos, k);
			rc_recreader_commit(&r, k);
			pos += k;
			s = rc_recreader_next(&r, &out, &olen);
		}
		assert_int_equal(s, RC_OK);
		assert_int_equal(olen, len);
		assert_memory_equal(out, rec + 4, len);
		if (round == 1)
			assert_ptr_equal(out, first + 4);
	}
	rc_recreader_destroy(&r);
	free(rec);
}

static void test_reader_buffered_and_reuse(void **state)
{
	static const unsigned char b[] = {0x80, 0, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8,
	                                  0x80, 0, 0, 4, 9, 9};
	rc_recreader r;
	void *p, *rec;
	size_t n, len;
	(void)state;
	tu_alloc_reset();
	rc_recreader_init(&r, 0);
	assert_int_equal(tu_alloc.calls, 0); /* nothing until data arrives */
	assert_int_equal(rc_recreader_buffered(&r), 0);
	assert_int_equal(rc_recreader_next(&r, &rec, &len), RC_AGAIN);
	assert_int_equal(rc_recreader_space(&r, &p, &n), RC_OK);
	memcpy(p, b, sizeof(b));
	rc_recreader_commit(&r, sizeof(b));
	assert_int_equal(rc_recreader_buffered(&r), sizeof(b));
	assert_int_equal(rc_recreader_next(&r, &rec, &len), RC_OK);
	assert_int_equal(len, 8);
	assert_memory_equal(rec, b + 4, 8);
	assert_int_equal(rc_recreader_next(&r, &rec, &len), RC_AGAIN);
	assert_int_equal(rc_recreader_buffered(&r), 2); /* the second record's first bytes */
	assert_int_equal(rc_recreader_space(&r, &p, &n), RC_OK);
	memcpy(p, "\x09\x09", 2);
	rc_recreader_commit(&r, 2);
	assert_int_equal(rc_recreader_next(&r, &rec, &len), RC_OK);
	assert_int_equal(len, 4);
	/* commit clamps to the space handed out */
	assert_int_equal(rc_recreader_space(&r, &p, &n), RC_OK);
	memset(p, 0, n);
	rc_recreader_commit(&r, n + 1000);
	assert_int_equal(rc_recreader_buffered(&r), n);
	assert_int_equal(rc_recreader_space(&r, &p, &len), RC_OK);
	rc_recreader_destroy(&r);
	assert_int_equal(tu_alloc.live, 0);
	/* destroyed readers may be initialised again, also after a failure */
	rc_recreader_init(&r, 2);
	assert_int_equal(rc_recreader_space(&r, &p, &n), RC_OK);
	memcpy(p, b, 4);
	rc_recreader_commit(&r, 4);
	assert_int_equal(rc_recreader_next(&r, &rec, &len), RC_MSGTOOLARGE);
	rc_recreader_destroy(&r);
	rc_recreader_init(&r, 0);
	assert_int_equal(feed_raw(&r, b, sizeof(b), &n), RC_AGAIN);
	rc_recreader_destroy(&r);
	rc_recreader_destroy(&r); /* twice is harmless */
}

static void test_reader_decodes_encoder_output(void **state)
{
	/* the encoder's bytes, read back and decoded */
	unsigned char buf[24];
	struct tu_sink sink = {0};
	rc_recreader r;
	size_t pos = 0, got = 0;
	uint64_t seed = 7;
	rc_xdr x;
	(void)state;
	make_items();
	assert_int_equal(rc_xdrrec_create(&x, buf, sizeof(buf), sink_write, &sink), RC_OK);
	for (int i = 0; i < 5; i++) {
		assert_true(xdr_item(&x, &g_items[i % 3]));
		assert_true(rc_xdrrec_endofrecord(&x));
	}
	rc_recreader_init(&r, 0);
	while (pos < sink.len) {
		void *p, *rec;
		size_t n, len, k = 1 + tu_rand(&seed) % 50;
		assert_int_equal(rc_recreader_space(&r, &p, &n), RC_OK);
		if (k > n)
			k = n;
		if (k > sink.len - pos)
			k = sink.len - pos;
		memcpy(p, sink.data + pos, k);
		rc_recreader_commit(&r, k);
		pos += k;
		while (rc_recreader_next(&r, &rec, &len) == RC_OK) {
			struct item out;
			rc_xdr d;
			memset(&out, 0, sizeof(out));
			rc_xdrmem_create(&d, rec, len, RC_XDR_DECODE);
			assert_true(xdr_item(&d, &out));
			assert_int_equal(rc_xdr_getpos(&d), len);
			assert_int_equal(out.i, g_items[got % 3].i);
			assert_int_equal(out.ints.len, g_items[got % 3].ints.len);
			rc_xdr_free((rc_xdrproc)xdr_item, &out);
			got++;
		}
	}
	assert_int_equal(got, 5);
	rc_recreader_destroy(&r);
	tu_sink_free(&sink);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encoder_many_fragments),
		cmocka_unit_test(test_encoder_empty_record),
		cmocka_unit_test(test_encoder_exact_window),
		cmocka_unit_test(test_encoder_large_opaque),
		cmocka_unit_test(test_encoder_write_failure),
		cmocka_unit_test(test_encoder_bad_arguments),
		cmocka_unit_test(test_encoder_inline),
		cmocka_unit_test(test_reader_byte_at_a_time),
		cmocka_unit_test(test_reader_fixed_chunks),
		cmocka_unit_test(test_reader_random_chunks),
		cmocka_unit_test(test_reader_all_at_once),
		cmocka_unit_test(test_reader_header_splits),
		cmocka_unit_test(test_reader_cap),
		cmocka_unit_test(test_reader_huge_marks),
		cmocka_unit_test(test_reader_unbounded_cap),
		cmocka_unit_test(test_reader_buffered_and_reuse),
		cmocka_unit_test(test_reader_big_record_stays_put),
		cmocka_unit_test(test_reader_decodes_encoder_output),
	};
	return cmocka_run_group_tests_name("xdr_rec", tests, NULL, NULL);
}

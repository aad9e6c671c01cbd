/*
 * Internal to the XDR layer: byte-order helpers, the space check every primitive makes, and
 * the bulk routines of xdr_bulk.c.
 */
#ifndef RC_XDR_INTERNAL_H
#define RC_XDR_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <remotecall/xdr.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define RC__BIG_ENDIAN 1
#define rc__be32(v) (v)
#define rc__be64(v) (v)
#else
#define RC__BIG_ENDIAN 0
#define rc__be32(v) __builtin_bswap32(v)
#define rc__be64(v) __builtin_bswap64(v)
#endif

static inline void rc__put32(unsigned char *p, uint32_t v)
{
	v = rc__be32(v);
	memcpy(p, &v, 4);
}

static inline uint32_t rc__get32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return rc__be32(v);
}

static inline void rc__put64(unsigned char *p, uint64_t v)
{
	v = rc__be64(v);
	memcpy(p, &v, 8);
}

static inline uint64_t rc__get64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return rc__be64(v);
}

/*
 * Record-reader shortcuts for the stream transports' receive path (transports/stream.c), where
 * a reply usually arrives as one whole single-fragment record in one read.
 *
 * rc__recreader_front: if the reader holds no bytes at all, the whole buffer from its front
 * (*p, *n) for the next read, and true; false otherwise (use rc_recreader_space). Records
 * handed out before are no longer valid.
 * rc__recreader_whole: after such a read stored got bytes there -- if they are exactly one
 * last fragment within the cap, hands that record out (*rec, *len; valid until the next read)
 * and leaves the reader empty, returning true; otherwise keeps the bytes for
 * rc_recreader_next and returns false.
 */
static inline bool rc__recreader_front(rc_recreader *r, void **p, size_t *n)
{
	if (r->len != r->scan || r->rec != 0 || r->in_frag || r->failed || r->cap == 0)
		return false;
	r->len = r->scan = r->off = 0;
	*p = r->buf;
	*n = r->cap;
	return true;
}

static inline bool rc__recreader_whole(rc_recreader *r, size_t got, void **rec, size_t *len)
{
	uint32_t h = got >= 4 ? rc__get32(r->buf) : 0;

	if ((h & RC_XDRREC_LAST_FRAG) && (h & RC_XDRREC_MAX_FRAG) == got - 4 &&
	    got - 4 <= r->max_record) {
		r->len = r->scan = r->off = got;
		*rec = r->buf + 4;
		*len = got - 4;
		return true;
	}
	r->len = got;
	return false;
}

/*
 * A buffer a serving thread lends to the record reader of the connection it is serving
 * (transports/stream.c), so that an idle connection holds no input buffer at all: one of
 * these per thread, lent to one reader at a time (owner, set and cleared atomically, so a
 * reader that kept it by mistake is never given to a second one).
 */
typedef struct rc__lendbuf {
	_Atomic(void *) owner; /* the reader it is lent to, or NULL */
	size_t cap;
	unsigned char *data;
} rc__lendbuf;

/*
 * rc__recreader_lend: a reader that holds no buffer (nothing buffered, none allocated) takes
 * lb's for its reads, if lb is free; true if it did. The reader gives it back in
 * rc__recreader_park, rc_recreader_destroy, or when a record outgrows it (the bytes move to a
 * buffer of the reader's own).
 * rc__recreader_park: the connection's turn is over -- records handed out are no longer in
 * use. A lent buffer is given back, the bytes still held (part of a record, records not yet
 * taken) copied into a buffer of the reader's own sized to them; a buffer of its own holding
 * nothing goes -- to keep, in place of its smaller buffer, when it is of 1 MiB or more and
 * keep is the calling thread's free lendbuf (a big record's buffer then serves the thread's
 * next big record: no fresh pages for each), else freed. False if memory for the copy ran out (the reader keeps the
 * lent buffer, and lb stays taken: nothing is lost).
 */
bool rc__recreader_lend(rc_recreader *r, rc__lendbuf *lb);
bool rc__recreader_park(rc_recreader *r, rc__lendbuf *keep);

/*
 * A record read in part (a client's big reply, transports/stream.c). rc__recreader_head: if
 * the reader is inside a record's one fragment (its first, marked last) and more than min of
 * its bytes have not come yet, the bytes assembled so far (*rec, *len), how many follow
 * (*rest), and true. rc__recreader_skip_head: the next n of those are read elsewhere -- count
 * them taken and drop the head (no longer valid), so that the reader assembles what follows
 * them as a record of its own (possibly empty). False if the reader is not inside a
 * fragment of at least n more bytes, with nothing raw held.
 */
static inline bool rc__recreader_head(const rc_recreader *r, size_t min, void **rec, size_t *len,
                                      size_t *rest)
{
	if (r->failed || !r->in_frag || !r->last || !r->first || r->frag_left <= min ||
	    r->len != r->scan)
		return false;
	*rec = r->buf + r->off;
	*len = r->rec;
	*rest = r->frag_left;
	return true;
}

static inline bool rc__recreader_skip_head(rc_recreader *r, size_t n)
{
	if (r->failed || !r->in_frag || n > r->frag_left || r->len != r->scan)
		return false;
	r->frag_left -= n;
	r->first = false;
	r->off = r->rec = r->len = r->scan = 0;
	return true;
}

/* Bytes n rounded up to the XDR unit (4). n is at most 2^32, so no overflow in size_t. */
static inline size_t rc__rndup(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

static inline size_t rc__avail(const rc_xdr *x)
{
	return (size_t)(x->x_end - x->x_pos);
}

/*
 * Make n contiguous bytes available at x_pos: true if they are there, or an encoding record
 * stream could hand on its full fragment to make room.
 */
static inline bool rc__need(rc_xdr *x, size_t n)
{
	if (rc__avail(x) >= n)
		return true;
	return x->x_more != NULL && x->x_more(x, n);
}

/*
 * Decode: n bytes at x_pos -- true if they are there, or the window ended early in a record
 * read in part (x_pull) and completing it brought them.
 */
static inline bool rc__have(rc_xdr *x, size_t n)
{
	if (rc__avail(x) >= n)
		return true;
	return x->x_pull != NULL && x->x_pull(x, NULL, 0) && rc__avail(x) >= n;
}

/* Decode: bytes left of the record, in the window and still to come (x_rest). */
static inline size_t rc__left(const rc_xdr *x)
{
	return rc__avail(x) + x->x_rest;
}

/* Charge n bytes of allocation to a decode's budget; false if that would exceed it. */
static inline bool rc__charge(rc_xdr *x, size_t n)
{
	if (n > x->x_budget)
		return false;
	x->x_budget -= n;
	return true;
}

/* Copy n bytes into an encoding stream, across fragments if need be. */
bool rc__putbytes(rc_xdr *x, const void *src, size_t n);

/* Write the zero padding after n bytes of opaque data. */
bool rc__putpad(rc_xdr *x, size_t n);

/*
 * Bulk scalar codecs (xdr_bulk.c). n elements; src and dst need no alignment and must not
 * overlap.
 */
void rc__swap32(void *dst, const void *src, size_t n);
void rc__swap64(void *dst, const void *src, size_t n);

/*
 * The bulk kind of an element routine: 4 or 8 for 4/8-byte scalars whose wire form is a
 * byte-swapped copy, 1 for bool (one byte in C, 4 on the wire), 0 for anything else.
 */
int rc__bulk_kind(rc_xdrproc proc, uint32_t elsize);

/* Encode/decode n elements of the given bulk kind at base. */
bool rc__bulk(rc_xdr *x, void *base, size_t n, int kind);

#endif

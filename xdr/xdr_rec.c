/*
 * Record marking (RFC 5531 section 11): a record is a sequence of fragments, each behind a
 * 4-byte header holding its length and, in the high bit, whether it is the record's last.
 *
 * The encoder writes through a callback, one fragment per buffer-full. The reader
 * reassembles records from arbitrary reads into one buffer, compacting the headers away
 * in place, and refuses a record over its cap before buffering it.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "xdr_internal.h"

/* ---- encoding -------------------------------------------------------------------------- */

/* Hand on the buffered fragment: last says whether it ends the record. */
static bool rc__rec_flush(rc_xdr *x, bool last)
{
	unsigned char *frag = x->x_base - 4;
	size_t len = (size_t)(x->x_pos - x->x_base);

	rc__put32(frag, (uint32_t)len | (last ? RC_XDRREC_LAST_FRAG : 0));
	if (!x->x_write(x->x_ctx, frag, 4 + len))
		return false;
	x->x_done = last ? 0 : x->x_done + len;
	x->x_pos = x->x_base;
	return true;
}

/* x_more of a record stream: the window is full; send it as a non-final fragment. */
static bool rc__rec_more(rc_xdr *x, size_t need)
{
	if (x->x_pos == x->x_base)
		return false; /* nothing to send, and the window is still too small */
	if (!rc__rec_flush(x, false))
		return false;
	return rc__avail(x) >= need;
}

rc_status rc_xdrrec_create(rc_xdr *xdrs, void *buf, size_t bufsize, rc_xdrrec_writefn write,
                           void *ctx)
{
	if (xdrs == NULL || buf == NULL || write == NULL || bufsize < 16)
		return RC_INVAL;
	bufsize &= ~(size_t)3;
	if (bufsize - 4 > RC_XDRREC_MAX_FRAG)
		bufsize = (size_t)RC_XDRREC_MAX_FRAG + 1; /* 4 + a multiple of 4 under the max */
	rc_xdrmem_create(xdrs, (unsigned char *)buf + 4, bufsize - 4, RC_XDR_ENCODE);
	xdrs->x_more = rc__rec_more;
	xdrs->x_write = write;
	xdrs->x_ctx = ctx;
	return RC_OK;
}

bool rc_xdrrec_endofrecord(rc_xdr *xdrs)
{
	if (xdrs->x_write == NULL)
		return false;
	return rc__rec_flush(xdrs, true);
}

/* ---- reading --------------------------------------------------------------------------- */

#define RC__REC_MIN_BUF ((size_t)64 << 10)
#define RC__REC_SLACK ((size_t)64 << 10)
/* A reader's buffer at least this big goes to its thread's lendbuf when empty (a smaller one
 * is freed: the heap gives it back cheaply, and keeping every size would churn the thread's
 * buffer among the long-lived small allocations -- the duplicate request cache's -- and pin
 * their pages). */
#define RC__REC_KEEP_MIN ((size_t)1 << 20)

void rc_recreader_init(rc_recreader *r, size_t max_record)
{
	memset(r, 0, sizeof(*r));
	r->max_record = max_record ? max_record : RC_RECREADER_DEFAULT_MAX;
}

/* Give a lent buffer back to its lender. */
static void rc__recreader_unlend(rc_recreader *r)
{
	atomic_store_explicit(&r->lender->owner, NULL, memory_order_release);
	r->lender = NULL;
}

void rc_recreader_destroy(rc_recreader *r)
{
	if (r->lender != NULL)
		rc__recreader_unlend(r);
	else
		free(r->buf);
	r->buf = NULL;
	r->cap = r->len = r->off = r->rec = r->scan = 0;
	r->frag_left = 0;
	r->in_frag = r->last = r->started = r->first = false;
}

bool rc_recreader_in_record(const rc_recreader *r)
{
	return r->started || r->len > r->scan;
}

size_t rc_recreader_buffered(const rc_recreader *r)
{
	return r->len - r->scan + r->rec;
}

rc_status rc_recreader_space(rc_recreader *r, void **p, size_t *n)
{
	size_t raw, limit;

	if (r->failed)
		return RC_MSGTOOLARGE;
	/* Everything handed out (the usual case between calls): start again at the front. */
	if (r->len == r->scan && r->rec == 0 && !r->in_frag && r->cap >= RC__REC_MIN_BUF) {
		r->len = r->scan = r->off = 0;
		*p = r->buf;
		*n = r->cap;
		return RC_OK;
	}
	/*
	 * Inside a fragment whose rest fits behind the bytes held: read there, moving nothing (a
	 * big record's first read would otherwise be moved to the front, megabytes of it).
	 */
	if (r->in_frag && r->cap - r->len > r->frag_left) {
		*p = r->buf + r->len;
		*n = r->cap - r->len;
		return RC_OK;
	}
	/*
	 * Compact: the current record's payload to the front, the raw bytes right behind it.
	 * Records handed out before this call are no longer valid.
	 */
	raw = r->len - r->scan;
	if (r->off > 0 && r->rec > 0)
		memmove(r->buf, r->buf + r->off, r->rec);
	if (raw > 0 && r->scan != r->rec)
		memmove(r->buf + r->rec, r->buf + r->scan, raw);
	r->off = 0;
	r->scan = r->rec;
	r->len = r->rec + raw;

	/* The payload is capped at max_record and only a partial header stays raw, so the
	 * buffer never needs more than max_record plus slack. */
	limit = r->max_record > SIZE_MAX - RC__REC_SLACK ? SIZE_MAX
	                                                  : r->max_record + RC__REC_SLACK;
	if (r->cap - r->len < 512 && r->cap < limit) {
		size_t ncap = r->cap ? r->cap * 2 : RC__REC_MIN_BUF;
		unsigned char *nb;
		if (ncap > limit)
			ncap = limit;
		if (ncap < r->len + 512)
			ncap = r->len + 512;
		if (r->lender != NULL) {
			/* outgrown the lent buffer (a whole 64 KiB of the record has arrived): one of
			 * its own, sized for the whole fragment -- one copy, and one block of the
			 * record's size rather than a doubling series of blocks left behind in the
			 * heap; its pages are touched only as bytes arrive */
			if (r->in_frag && r->frag_left < limit - r->len &&
			    ncap < r->len + r->frag_left + 512)
				ncap = r->len + r->frag_left + 512 < limit ? r->len + r->frag_left + 512
				                                           : limit;
			if ((nb = malloc(ncap)) == NULL)
				return RC_NOMEM;
			memcpy(nb, r->buf, r->len);
			rc__recreader_unlend(r);
		} else if ((nb = realloc(r->buf, ncap)) == NULL) {
			return RC_NOMEM;
		}
		r->buf = nb;
		r->cap = ncap;
	}
	if (r->cap == r->len)
		return RC_NOMEM; /* cannot happen while the invariants hold */
	*p = r->buf + r->len;
	*n = r->cap - r->len;
	return RC_OK;
}

bool rc__recreader_lend(rc_recreader *r, rc__lendbuf *lb)
{
	void *none = NULL;

	if (r->buf != NULL || r->failed ||
	    !atomic_compare_exchange_strong_explicit(&lb->owner, &none, (void *)r,
	                                             memory_order_acquire, memory_order_relaxed))
		return false;
	r->buf = lb->data;
	r->cap = lb->cap;
	r->len = r->off = r->rec = r->scan = 0;
	r->lender = lb;
	return true;
}

/* The lent buffer becomes the reader's own; its lender gets nb (RC__REC_MIN_BUF bytes). */
static void lb_swap(rc_recreader *r, unsigned char *nb)
{
	rc__lendbuf *lb = r->lender;

	lb->data = nb;
	lb->cap = RC__REC_MIN_BUF;
	rc__recreader_unlend(r);
}

bool rc__recreader_park(rc_recreader *r, rc__lendbuf *keep)
{
	size_t raw = r->len - r->scan, live = r->rec + raw, ncap;
	unsigned char *nb = NULL;

	if (r->lender == NULL) {
		if (live == 0 && r->buf != NULL) { /* nothing held: nothing kept */
			if (keep != NULL && r->cap >= RC__REC_KEEP_MIN && r->cap > keep->cap &&
			    atomic_load_explicit(&keep->owner, memory_order_relaxed) == NULL) {
				free(keep->data); /* the thread keeps the bigger one */
				keep->data = r->buf;
				keep->cap = r->cap;
			} else {
				free(r->buf);
			}
			r->buf = NULL;
			r->cap = r->len = r->off = r->rec = r->scan = 0;
		}
		return true;
	}
	if (live > 0 && r->lender->cap >= RC__REC_KEEP_MIN && (nb = malloc(RC__REC_MIN_BUF)) != NULL) {
		/* bytes held in a thread's kept big buffer (a big record under way): the reader
		 * keeps that buffer as its own, bytes and all (no copy of up to megabytes; it comes
		 * back to a thread once empty), and the lender takes a fresh one of the usual
		 * size */
		lb_swap(r, nb);
		return true;
	}
	if (live > 0) {
		/* what is held, compacted (as rc_recreader_space would), in a buffer of its own:
		 * room for the rest of the fragment when that is small, else a little more */
		ncap = live + 512;
		if (r->in_frag && r->frag_left <= 4096)
			ncap = live + r->frag_left + 512;
		if ((nb = malloc(ncap)) == NULL)
			return false;
		memcpy(nb, r->buf + r->off, r->rec);
		memcpy(nb + r->rec, r->buf + r->scan, raw);
	} else {
		ncap = 0;
	}
	rc__recreader_unlend(r);
	r->buf = nb;
	r->cap = ncap;
	r->off = 0;
	r->scan = r->rec;
	r->len = live;
	return true;
}

void rc_recreader_commit(rc_recreader *r, size_t n)
{
	if (n > r->cap - r->len)
		n = r->cap - r->len;
	r->len += n;
}

rc_status rc_recreader_next(rc_recreader *r, void **rec, size_t *len)
{
	if (r->failed)
		return RC_MSGTOOLARGE;
	/* A whole single-fragment record at the start of a record: hand it out where it lies. */
	if (!r->in_frag && r->rec == 0 && r->len - r->scan >= 4) {
		uint32_t h = rc__get32(r->buf + r->scan);
		size_t fl = h & RC_XDRREC_MAX_FRAG;
		if ((h & RC_XDRREC_LAST_FRAG) && fl <= r->len - r->scan - 4 && fl <= r->max_record) {
			*rec = r->buf + r->scan + 4;
			*len = fl;
			r->scan += 4 + fl;
			r->off = r->scan;
			return RC_OK;
		}
	}
	for (;;) {
		size_t raw = r->len - r->scan;
		size_t k;

		if (!r->in_frag) {
			uint32_t h;
			if (raw < 4)
				return RC_AGAIN;
			h = rc__get32(r->buf + r->scan);
			r->frag_left = h & RC_XDRREC_MAX_FRAG;
			r->last = (h & RC_XDRREC_LAST_FRAG) != 0;
			if (r->frag_left > r->max_record - r->rec) {
				r->failed = true;
				return RC_MSGTOOLARGE;
			}
			r->scan += 4;
			raw -= 4;
			r->in_frag = true;
			r->started = true;
			r->first = r->rec == 0;
			if (r->rec == 0)
				r->off = r->scan; /* a record's first fragment stays where it is */
		}
		k = r->frag_left < raw ? r->frag_left : raw;
		if (k > 0) {
			size_t dst = r->off + r->rec;
			if (dst != r->scan)
				memmove(r->buf + dst, r->buf + r->scan, k);
			r->rec += k;
			r->scan += k;
			r->frag_left -= k;
		}
		if (r->frag_left > 0)
			return RC_AGAIN;
		r->in_frag = false;
		if (r->last) {
			*rec = r->buf + r->off;
			*len = r->rec;
			r->rec = 0;
			r->started = false;
			r->off = r->scan;
			return RC_OK;
		}
	}
}

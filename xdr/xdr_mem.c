/* Memory streams and the stream-level functions every stream shares. */
#include <stdlib.h>

#include "xdr_internal.h"

void rc_xdrmem_create(rc_xdr *xdrs, void *buf, size_t size, rc_xdr_op op)
{
	/* every field assigned (no memset): this runs twice per call on the hot path */
	xdrs->x_op = op;
	xdrs->x_base = buf;
	xdrs->x_pos = buf;
	xdrs->x_end = buf ? (unsigned char *)buf + size : buf;
	xdrs->x_done = 0;
	xdrs->x_more = NULL;
	xdrs->x_ctx = NULL;
	xdrs->x_write = NULL;
	xdrs->x_budget = RC_XDR_DEFAULT_ALLOC_LIMIT;
	xdrs->x_depth = 0;
	xdrs->x_maxdepth = RC_XDR_DEFAULT_MAX_DEPTH;
	xdrs->x_lend_lo = xdrs->x_lend_hi = NULL;
	xdrs->x_gather = NULL;
	xdrs->x_rest = 0;
	xdrs->x_pull = NULL;
}

void rc_xdr_set_limits(rc_xdr *xdrs, size_t alloc_limit, uint32_t max_depth)
{
	if (alloc_limit != 0)
		xdrs->x_budget = alloc_limit;
	if (max_depth != 0)
		xdrs->x_maxdepth = max_depth;
}

size_t rc_xdr_getpos(const rc_xdr *xdrs)
{
	return xdrs->x_done + (size_t)(xdrs->x_pos - xdrs->x_base);
}

bool rc_xdr_setpos(rc_xdr *xdrs, size_t pos)
{
	if (xdrs->x_more != NULL || pos > (size_t)(xdrs->x_end - xdrs->x_base))
		return false;
	xdrs->x_pos = xdrs->x_base + pos;
	return true;
}

size_t rc_xdr_remaining(const rc_xdr *xdrs)
{
	return rc__avail(xdrs);
}

void *rc_xdr_inline(rc_xdr *xdrs, size_t len)
{
	size_t n = rc__rndup(len);
	void *p;

	if (len > SIZE_MAX - 3 || xdrs->x_op == RC_XDR_FREE)
		return NULL;
	if (xdrs->x_op == RC_XDR_ENCODE) {
		/* A record stream makes room by sending what it holds, but never for a request
		 * its whole window could not satisfy: that would send a fragment and fail. */
		if (n > (size_t)(xdrs->x_end - xdrs->x_base) || !rc__need(xdrs, n))
			return NULL;
	} else if (rc__avail(xdrs) < n) {
		return NULL;
	}
	p = xdrs->x_pos;
	xdrs->x_pos += n;
	return p;
}

void rc_xdr_free(rc_xdrproc proc, void *objp)
{
	rc_xdr x;

	if (proc == NULL || objp == NULL)
		return;
	rc_xdrmem_create(&x, NULL, 0, RC_XDR_FREE);
	(void)proc(&x, objp);
}

bool rc__putbytes(rc_xdr *x, const void *src, size_t n)
{
	const unsigned char *s = src;

	if (x->x_more == NULL && rc__avail(x) < n)
		return false; /* a memory stream: fail before writing anything */
	while (n > 0) {
		size_t k;
		if (rc__avail(x) == 0 && !rc__need(x, 1))
			return false;
		k = rc__avail(x) < n ? rc__avail(x) : n;
		memcpy(x->x_pos, s, k);
		x->x_pos += k;
		s += k;
		n -= k;
	}
	return true;
}

bool rc__putpad(rc_xdr *x, size_t n)
{
	static const unsigned char zero[4];
	size_t pad = rc__rndup(n) - n;

	return pad == 0 || rc__putbytes(x, zero, pad);
}

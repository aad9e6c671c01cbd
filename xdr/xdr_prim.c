/* XDR primitives (RFC 4506 section 4): integers, floats, opaque data, strings, arrays,
 * optional data and unions. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "xdr_internal.h"
#include "xdr/base.h"

bool rc_xdr_void(rc_xdr *xdrs, void *unused)
{
	(void)xdrs;
	(void)unused;
	return true;
}

bool rc_xdr_u_int(rc_xdr *xdrs, uint32_t *up)
{
	switch (xdrs->x_op) {
	case RC_XDR_ENCODE:
		if (!rc__need(xdrs, 4))
			return false;
		rc__put32(xdrs->x_pos, *up);
		xdrs->x_pos += 4;
		return true;
	case RC_XDR_DECODE:
		if (!rc__have(xdrs, 4))
			return false;
		*up = rc__get32(xdrs->x_pos);
		xdrs->x_pos += 4;
		return true;
	case RC_XDR_FREE:
		return true;
	}
	return false;
}

bool rc_xdr_int(rc_xdr *xdrs, int32_t *ip)
{
	/* Two's complement: the same 32 bits travel either way. */
	return rc_xdr_u_int(xdrs, (uint32_t *)ip);
}

bool rc_xdr_enum(rc_xdr *xdrs, int32_t *ep)
{
	return rc_xdr_u_int(xdrs, (uint32_t *)ep);
}

bool rc_xdr_u_hyper(rc_xdr *xdrs, uint64_t *up)
{
	switch (xdrs->x_op) {
	case RC_XDR_ENCODE:
		if (!rc__need(xdrs, 8))
			return false;
		rc__put64(xdrs->x_pos, *up);
		xdrs->x_pos += 8;
		return true;
	case RC_XDR_DECODE:
		if (!rc__have(xdrs, 8))
			return false;
		*up = rc__get64(xdrs->x_pos);
		xdrs->x_pos += 8;
		return true;
	case RC_XDR_FREE:
		return true;
	}
	return false;
}

bool rc_xdr_hyper(rc_xdr *xdrs, int64_t *hp)
{
	return rc_xdr_u_hyper(xdrs, (uint64_t *)hp);
}

bool rc_xdr_bool(rc_xdr *xdrs, bool *bp)
{
	uint32_t v;

	switch (xdrs->x_op) {
	case RC_XDR_ENCODE:
		v = *bp ? 1 : 0;
		return rc_xdr_u_int(xdrs, &v);
	case RC_XDR_DECODE:
		/* any non-zero value is true, as in libtirpc (klm, rquota fields) */
		if (!rc_xdr_u_int(xdrs, &v))
			return false;
		*bp = v != 0;
		return true;
	case RC_XDR_FREE:
		return true;
	}
	return false;
}

bool rc_xdr_bool32(rc_xdr *xdrs, int32_t *bp)
{
	bool b = *bp != 0;

	if (!rc_xdr_bool(xdrs, &b))
		return false;
	if (xdrs->x_op == RC_XDR_DECODE)
		*bp = b ? 1 : 0;
	return true;
}

bool rc_xdr_long(rc_xdr *xdrs, long *lp)
{
	int32_t v;

	if (xdrs->x_op == RC_XDR_ENCODE) {
		if (*lp < INT32_MIN || *lp > INT32_MAX)
			return false;
		v = (int32_t)*lp;
		return rc_xdr_int(xdrs, &v);
	}
	if (xdrs->x_op == RC_XDR_DECODE) {
		if (!rc_xdr_int(xdrs, &v))
			return false;
		*lp = v;
	}
	return true;
}

bool rc_xdr_u_long(rc_xdr *xdrs, unsigned long *ulp)
{
	uint32_t v;

	if (xdrs->x_op == RC_XDR_ENCODE) {
		if (*ulp > UINT32_MAX)
			return false;
		v = (uint32_t)*ulp;
		return rc_xdr_u_int(xdrs, &v);
	}
	if (xdrs->x_op == RC_XDR_DECODE) {
		if (!rc_xdr_u_int(xdrs, &v))
			return false;
		*ulp = v;
	}
	return true;
}

bool rc_xdr_float(rc_xdr *xdrs, float *fp)
{
	uint32_t v;

	_Static_assert(sizeof(float) == 4, "XDR float needs IEEE single precision");
	if (xdrs->x_op == RC_XDR_ENCODE) {
		memcpy(&v, fp, 4);
		return rc_xdr_u_int(xdrs, &v);
	}
	if (xdrs->x_op == RC_XDR_DECODE) {
		if (!rc_xdr_u_int(xdrs, &v))
			return false;
		memcpy(fp, &v, 4);
	}
	return true;
}

bool rc_xdr_double(rc_xdr *xdrs, double *dp)
{
	uint64_t v;

	_Static_assert(sizeof(double) == 8, "XDR double needs IEEE double precision");
	if (xdrs->x_op == RC_XDR_ENCODE) {
		memcpy(&v, dp, 8);
		return rc_xdr_u_hyper(xdrs, &v);
	}
	if (xdrs->x_op == RC_XDR_DECODE) {
		if (!rc_xdr_u_hyper(xdrs, &v))
			return false;
		memcpy(dp, &v, 8);
	}
	return true;
}

/* A binary128 value is stored in host byte order; reverse it on a little-endian host. */
static void rc__quad_order(unsigned char b[16])
{
#if defined(RC_QUADRUPLE_IS_FLOAT) && !RC__BIG_ENDIAN
	for (int i = 0; i < 8; i++) {
		unsigned char t = b[i];
		b[i] = b[15 - i];
		b[15 - i] = t;
	}
#else
	(void)b;
#endif
}

bool rc_xdr_quadruple(rc_xdr *xdrs, rc_quadruple *qp)
{
	unsigned char b[16];

	_Static_assert(sizeof(rc_quadruple) == 16, "rc_quadruple must be 16 bytes");
	switch (xdrs->x_op) {
	case RC_XDR_ENCODE:
		memcpy(b, qp, 16);
		rc__quad_order(b);
		return rc__putbytes(xdrs, b, 16);
	case RC_XDR_DECODE:
		if (!rc__have(xdrs, 16))
			return false;
		memcpy(b, xdrs->x_pos, 16);
		xdrs->x_pos += 16;
		rc__quad_order(b);
		memcpy(qp, b, 16);
		return true;
	case RC_XDR_FREE:
		return true;
	}
	return false;
}

/* Narrow integers travel as 4-byte ints; a decoded value outside the C type's range fails. */
static bool rc__xdr_narrow(rc_xdr *xdrs, int32_t *v, int32_t lo, int32_t hi)
{
	if (!rc_xdr_int(xdrs, v))
		return false;
	return xdrs->x_op != RC_XDR_DECODE || (*v >= lo && *v <= hi);
}

bool rc_xdr_char(rc_xdr *xdrs, char *cp)
{
	int32_t v = *cp;

	if (xdrs->x_op == RC_XDR_FREE)
		return true;
	/* Sun's xdr_char sign-extends on the way out; accept either signedness on the way in. */
	if (!rc__xdr_narrow(xdrs, &v, SCHAR_MIN, UCHAR_MAX))
		return false;
	*cp = (char)v;
	return true;
}

bool rc_xdr_u_char(rc_xdr *xdrs, unsigned char *cp)
{
	int32_t v = *cp;

	if (xdrs->x_op == RC_XDR_FREE)
		return true;
	if (!rc__xdr_narrow(xdrs, &v, 0, UCHAR_MAX))
		return false;
	*cp = (unsigned char)v;
	return true;
}

bool rc_xdr_short(rc_xdr *xdrs, int16_t *sp)
{
	int32_t v = *sp;

	if (xdrs->x_op == RC_XDR_FREE)
		return true;
	if (!rc__xdr_narrow(xdrs, &v, INT16_MIN, INT16_MAX))
		return false;
	*sp = (int16_t)v;
	return true;
}

bool rc_xdr_u_short(rc_xdr *xdrs, uint16_t *sp)
{
	int32_t v = *sp;

	if (xdrs->x_op == RC_XDR_FREE)
		return true;
	if (!rc__xdr_narrow(xdrs, &v, 0, UINT16_MAX))
		return false;
	*sp = (uint16_t)v;
	return true;
}

/*
 * Decode len bytes of opaque data and their padding into dst when they run past the window of
 * a record read in part (x_pull): the window's share is copied, the rest read from the
 * transport straight into dst. False if the record cannot hold them or the read fails.
 */
static bool rc__xdr_pulled(rc_xdr *xdrs, char *dst, uint32_t len)
{
	size_t k = rc__avail(xdrs), pad = rc__rndup(len) - len;

	if (xdrs->x_pull == NULL || rc__rndup(len) > rc__left(xdrs))
		return false;
	if (k > len)
		k = len;
	if (k > 0)
		memcpy(dst, xdrs->x_pos, k);
	xdrs->x_pos += k;
	if (k == len) { /* all there but some padding */
		size_t p = rc__avail(xdrs) < pad ? rc__avail(xdrs) : pad;
		xdrs->x_pos += p;
		pad -= p;
	}
	if (!xdrs->x_pull(xdrs, dst + k, len - k) || rc__avail(xdrs) < pad)
		return false;
	xdrs->x_pos += pad;
	return true;
}

bool rc_xdr_opaque(rc_xdr *xdrs, void *cp, uint32_t cnt)
{
	size_t n = rc__rndup(cnt);

	switch (xdrs->x_op) {
	case RC_XDR_ENCODE:
		if (xdrs->x_more == NULL && rc__avail(xdrs) < n)
			return false;
		return rc__putbytes(xdrs, cp, cnt) && rc__putpad(xdrs, cnt);
	case RC_XDR_DECODE:
		if (rc__avail(xdrs) < n)
			return rc__xdr_pulled(xdrs, cp, cnt);
		if (cnt > 0)
			memcpy(cp, xdrs->x_pos, cnt);
		xdrs->x_pos += n; /* padding bytes are not checked, as in every Sun XDR */
		return true;
	case RC_XDR_FREE:
		return true;
	}
	return false;
}

/*
 * Read a length for a variable-size item and check it against max and against the bytes that
 * remain (each element takes at least unit bytes on the wire) before anything is allocated.
 */
static bool rc__xdr_getlen(rc_xdr *xdrs, uint32_t *len, uint32_t max, size_t unit)
{
	if (!rc_xdr_u_int(xdrs, len))
		return false;
	if (*len > max)
		return false;
	return (size_t)*len <= rc__left(xdrs) / unit;
}

/* Encode len then the len bytes at p (variable-length opaque data, a string's characters):
 * big data goes to the stream's x_gather when it takes it by reference, the padding here. */
static bool rc__put_counted(rc_xdr *xdrs, const char *p, uint32_t len)
{
	if (!rc_xdr_u_int(xdrs, &len))
		return false;
	if (len >= RC_XDR_GATHER_MIN && xdrs->x_gather != NULL && xdrs->x_gather(xdrs, p, len))
		return rc__putpad(xdrs, len);
	return rc_xdr_opaque(xdrs, (void *)p, len);
}

/* xdr_internal.h: why the thread's last encode failed, where it was a value's own fault. */
_Thread_local char rc__xdr_why[96];

/* Note in rc__xdr_why that an encoded `what` of n units was over its bound or missing (a NULL
 * pointer). Returns false, for the caller to return. */
static bool rc__enc_refuse(const char *what, uint64_t n, uint32_t max, const char *unit)
{
	if (n <= max)
		snprintf(rc__xdr_why, sizeof(rc__xdr_why), "%s to encode is a NULL pointer", what);
	else
		snprintf(rc__xdr_why, sizeof(rc__xdr_why),
		         "%s of %llu %s is over its declared bound of %u", what,
		         (unsigned long long)n, unit, max);
	return false;
}

bool rc_xdr_bytes(rc_xdr *xdrs, char **cpp, uint32_t *sizep, uint32_t maxsize)
{
	uint32_t len;

	switch (xdrs->x_op) {
	case RC_XDR_ENCODE:
		len = *sizep;
		if (len > maxsize || (len > 0 && *cpp == NULL))
			return rc__enc_refuse("opaque data", len, maxsize, "bytes");
		if (xdrs->x_more == NULL && rc__avail(xdrs) < 4 + rc__rndup(len))
			return false;
		return rc__put_counted(xdrs, *cpp, len);
	case RC_XDR_DECODE:
		if (!rc__xdr_getlen(xdrs, &len, maxsize, 1) || rc__rndup(len) > rc__left(xdrs))
			return false;
		if (*cpp == NULL && xdrs->x_lend_hi != NULL && len >= RC_XDR_LEND_MIN &&
		    xdrs->x_pos >= xdrs->x_lend_lo && xdrs->x_pos + len <= xdrs->x_lend_hi) {
			*cpp = (char *)xdrs->x_pos; /* lent: no copy, nothing allocated */
			*sizep = len;
			xdrs->x_pos += rc__rndup(len);
			return true;
		}
		if (*cpp == NULL) {
			size_t sz = len ? len : 1;
			if (!rc__charge(xdrs, sz) || (*cpp = malloc(sz)) == NULL)
				return false;
		} else if (*sizep != 0 && len > *sizep) {
			return false; /* the caller's buffer holds *sizep bytes (0: maxsize, as Sun's) */
		}
		*sizep = len;
		return rc_xdr_opaque(xdrs, *cpp, len);
	case RC_XDR_FREE:
		if (xdrs->x_lend_hi == NULL || (const unsigned char *)*cpp < xdrs->x_lend_lo ||
		    (const unsigned char *)*cpp >= xdrs->x_lend_hi)
			free(*cpp); /* (a lent pointer belongs to the buffer) */
		*cpp = NULL;
		*sizep = 0;
		return true;
	}
	return false;
}

bool rc_xdr_string(rc_xdr *xdrs, char **cpp, uint32_t maxsize)
{
	size_t slen;
	uint32_t len;

	switch (xdrs->x_op) {
	case RC_XDR_ENCODE:
		if (*cpp == NULL)
			return rc__enc_refuse("a string", 0, maxsize, "");
		slen = strlen(*cpp);
		if (slen > maxsize)
			return rc__enc_refuse("a string", slen, maxsize, "bytes");
		len = (uint32_t)slen;
		if (xdrs->x_more == NULL && rc__avail(xdrs) < 4 + rc__rndup(len))
			return false;
		return rc__put_counted(xdrs, *cpp, len);
	case RC_XDR_DECODE:
		if (!rc__xdr_getlen(xdrs, &len, maxsize, 1) || rc__rndup(len) > rc__left(xdrs))
			return false;
		if (*cpp == NULL) {
			if (!rc__charge(xdrs, (size_t)len + 1) ||
			    (*cpp = malloc((size_t)len + 1)) == NULL)
				return false;
		}
		if (!rc_xdr_opaque(xdrs, *cpp, len))
			return false;
		(*cpp)[len] = '\0';
		return memchr(*cpp, '\0', len) == NULL; /* an embedded NUL would truncate it */
	case RC_XDR_FREE:
		free(*cpp);
		*cpp = NULL;
		return true;
	}
	return false;
}

bool rc_xdr_wrapstring(rc_xdr *xdrs, char **cpp)
{
	return rc_xdr_string(xdrs, cpp, UINT32_MAX);
}

/* Run elproc over n elements of elsize bytes at base, in bulk where the kind allows. */
static bool rc__xdr_elements(rc_xdr *xdrs, unsigned char *base, uint32_t n, uint32_t elsize,
                             rc_xdrproc elproc)
{
	int kind = rc__bulk_kind(elproc, elsize);
	uint32_t i;

	if (kind != 0)
		return xdrs->x_op == RC_XDR_FREE || rc__bulk(xdrs, base, n, kind);
	for (i = 0; i < n; i++)
		if (!elproc(xdrs, base + (size_t)i * elsize) && xdrs->x_op != RC_XDR_FREE)
			return false;
	return true;
}

/*
 * The elements of a variable-length array. Elements that are not bulk scalars may contain the
 * array's own type (struct tree { tree kids<>; }), so such an array is a nesting level, like
 * optional data: without the count, 4 bytes of input a level could recurse the decoder off
 * its stack.
 */
static bool rc__xdr_array_elements(rc_xdr *xdrs, unsigned char *base, uint32_t n,
                                   uint32_t elsize, rc_xdrproc elproc)
{
	bool ok;

	/* no element, no nesting: encode and decode agree (a decode of count 0 returns early) */
	if (n == 0 || rc__bulk_kind(elproc, elsize) != 0 || xdrs->x_op == RC_XDR_FREE)
		return rc__xdr_elements(xdrs, base, n, elsize, elproc);
	if (xdrs->x_depth >= xdrs->x_maxdepth)
		return false;
	xdrs->x_depth++;
	ok = rc__xdr_elements(xdrs, base, n, elsize, elproc);
	xdrs->x_depth--;
	return ok;
}

bool rc_xdr_array(rc_xdr *xdrs, void *addrp, uint32_t *sizep, uint32_t maxsize,
                  uint32_t elsize, rc_xdrproc elproc)
{
	unsigned char *base;
	uint32_t n;
	bool ok;

	if (elsize == 0 || elproc == NULL)
		return false;
	memcpy(&base, addrp, sizeof(base));
	switch (xdrs->x_op) {
	case RC_XDR_ENCODE:
		n = *sizep;
		if (n > maxsize || (n > 0 && base == NULL))
			return rc__enc_refuse("an array", n, maxsize, "elements");
		return rc_xdr_u_int(xdrs, &n) &&
		       rc__xdr_array_elements(xdrs, base, n, elsize, elproc);
	case RC_XDR_DECODE:
		/*
		 * Every XDR element takes at least 4 bytes on the wire, a hyper or a double 8:
		 * a count the remaining bytes cannot hold fails before anything is allocated.
		 */
		if (!rc__xdr_getlen(xdrs, &n, maxsize,
		                    rc__bulk_kind(elproc, elsize) == 8 ? 8 : 4))
			return false;
		if (n == 0) {
			*sizep = 0;
			return true;
		}
		if (rc__bulk_kind(elproc, elsize) == 0 && xdrs->x_depth >= xdrs->x_maxdepth)
			return false; /* nested too deeply: refuse before allocating */
		if (base == NULL) {
			size_t sz = (size_t)n * elsize;
			if (!rc__charge(xdrs, sz) || (base = calloc(n, elsize)) == NULL)
				return false;
			memcpy(addrp, &base, sizeof(base));
		}
		*sizep = n; /* before the elements: a failure leaves them freeable */
		return rc__xdr_array_elements(xdrs, base, n, elsize, elproc);
	case RC_XDR_FREE:
		if (base == NULL)
			return true;
		ok = rc__xdr_elements(xdrs, base, *sizep, elsize, elproc);
		free(base);
		base = NULL;
		memcpy(addrp, &base, sizeof(base));
		*sizep = 0;
		return ok;
	}
	return false;
}

bool rc_xdr_vector(rc_xdr *xdrs, void *basep, uint32_t nelem, uint32_t elsize,
                   rc_xdrproc elproc)
{
	if (elsize == 0 || elproc == NULL || (basep == NULL && nelem > 0))
		return false;
	return rc__xdr_elements(xdrs, basep, nelem, elsize, elproc);
}

bool rc_xdr_reference(rc_xdr *xdrs, void *objpp, uint32_t objsize, rc_xdrproc proc)
{
	void *obj;
	bool ok;

	memcpy(&obj, objpp, sizeof(obj));
	switch (xdrs->x_op) {
	case RC_XDR_ENCODE:
	case RC_XDR_DECODE:
		if (xdrs->x_depth >= xdrs->x_maxdepth)
			return false; /* nested deeper than the stream allows */
		if (obj == NULL) {
			if (xdrs->x_op == RC_XDR_ENCODE)
				return false;
			/* Each object takes at least 4 bytes on the wire. */
			if (rc__left(xdrs) < 4 || !rc__charge(xdrs, objsize) ||
			    (obj = calloc(1, objsize ? objsize : 1)) == NULL)
				return false;
			memcpy(objpp, &obj, sizeof(obj));
		}
		xdrs->x_depth++;
		ok = proc(xdrs, obj);
		xdrs->x_depth--;
		return ok;
	case RC_XDR_FREE:
		if (obj == NULL)
			return true;
		ok = proc(xdrs, obj);
		free(obj);
		obj = NULL;
		memcpy(objpp, &obj, sizeof(obj));
		return ok;
	}
	return false;
}

bool rc_xdr_pointer(rc_xdr *xdrs, void *objpp, uint32_t objsize, rc_xdrproc proc)
{
	void *obj;
	bool more;

	memcpy(&obj, objpp, sizeof(obj));
	more = obj != NULL;
	if (xdrs->x_op == RC_XDR_FREE)
		return rc_xdr_reference(xdrs, objpp, objsize, proc);
	if (!rc_xdr_bool(xdrs, &more))
		return false;
	if (!more) {
		if (xdrs->x_op == RC_XDR_DECODE && obj != NULL) {
			/* The caller's object is not ours to free; say there is none. */
			obj = NULL;
			memcpy(objpp, &obj, sizeof(obj));
		}
		return true;
	}
	return rc_xdr_reference(xdrs, objpp, objsize, proc);
}

bool rc_xdr_union(rc_xdr *xdrs, int32_t *dscmp, void *unp, const rc_xdr_discrim *choices,
                  rc_xdrproc dfault)
{
	const rc_xdr_discrim *c;

	if (!rc_xdr_enum(xdrs, dscmp))
		return false;
	for (c = choices; c != NULL && c->proc != NULL; c++)
		if (c->value == *dscmp)
			return c->proc(xdrs, unp);
	return dfault != NULL && dfault(xdrs, unp);
}

/*
 * Bulk paths: arrays of 4- and 8-byte scalars move as one byte-swapping copy (compiled with
 * -O3 and, on x86-64, cloned for AVX2 so the loop runs in vector registers), never one
 * function call per element.
 */
#include "xdr_internal.h"

/* Not under the sanitizers: an ifunc resolver runs before their runtime is set up (under
 * ThreadSanitizer the instrumented resolver crashes the program at load). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__) && \
	!defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define RC__CLONES __attribute__((target_clones("avx2", "ssse3", "default")))
#else
#define RC__CLONES
#endif

RC__CLONES
void rc__swap32(void *restrict dst, const void *restrict src, size_t n)
{
#if RC__BIG_ENDIAN
	memcpy(dst, src, n * 4);
#else
	unsigned char *d = dst;
	const unsigned char *s = src;
	/* Written byte by byte: gcc turns this into one vector shuffle per register. */
	for (size_t i = 0; i < n; i++) {
		d[4 * i + 0] = s[4 * i + 3];
		d[4 * i + 1] = s[4 * i + 2];
		d[4 * i + 2] = s[4 * i + 1];
		d[4 * i + 3] = s[4 * i + 0];
	}
#endif
}

RC__CLONES
void rc__swap64(void *restrict dst, const void *restrict src, size_t n)
{
#if RC__BIG_ENDIAN
	memcpy(dst, src, n * 8);
#else
	unsigned char *d = dst;
	const unsigned char *s = src;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < 8; j++)
			d[8 * i + j] = s[8 * i + 7 - j];
#endif
}

int rc__bulk_kind(rc_xdrproc proc, uint32_t elsize)
{
	if (elsize == 4 &&
	    (proc == (rc_xdrproc)rc_xdr_int || proc == (rc_xdrproc)rc_xdr_u_int ||
	     proc == (rc_xdrproc)rc_xdr_enum || proc == (rc_xdrproc)rc_xdr_float))
		return 4;
	if (elsize == 8 &&
	    (proc == (rc_xdrproc)rc_xdr_hyper || proc == (rc_xdrproc)rc_xdr_u_hyper ||
	     proc == (rc_xdrproc)rc_xdr_double))
		return 8;
	if (elsize == sizeof(bool) && proc == (rc_xdrproc)rc_xdr_bool)
		return 1;
	return 0;
}

/* bool arrays: one byte in C, a 4-byte 0 or 1 on the wire; decode takes any non-zero value
 * as true (as rc_xdr_bool does). */
static bool rc__bulk_bool(rc_xdr *x, bool *b, size_t n)
{
	size_t i = 0;

	if (x->x_op == RC_XDR_DECODE) {
		if (rc__avail(x) / 4 < n && (n > SIZE_MAX / 4 || !rc__have(x, 4 * n)))
			return false;
		for (i = 0; i < n; i++) {
			b[i] = rc__get32(x->x_pos + 4 * i) != 0;
		}
		x->x_pos += 4 * n;
		return true;
	}
	if (x->x_more == NULL && rc__avail(x) / 4 < n)
		return false;
	while (i < n) {
		size_t k;
		if (rc__avail(x) < 4 && !rc__need(x, 4))
			return false;
		k = rc__avail(x) / 4;
		if (k > n - i)
			k = n - i;
		for (size_t j = 0; j < k; j++)
			rc__put32(x->x_pos + 4 * j, b[i + j] ? 1 : 0);
		x->x_pos += 4 * k;
		i += k;
	}
	return true;
}

bool rc__bulk(rc_xdr *x, void *base, size_t n, int kind)
{
	unsigned char *b = base;
	size_t w = (size_t)kind;
	size_t i = 0;

	if (kind == 1)
		return rc__bulk_bool(x, base, n);
	if (x->x_op == RC_XDR_DECODE) {
		if (rc__avail(x) / w < n && (n > SIZE_MAX / w || !rc__have(x, w * n)))
			return false;
		if (w == 4)
			rc__swap32(b, x->x_pos, n);
		else
			rc__swap64(b, x->x_pos, n);
		x->x_pos += w * n;
		return true;
	}
	if (x->x_more == NULL && rc__avail(x) / w < n)
		return false;
	/* Encode; a record stream may need several fragments. */
	while (i < n) {
		size_t k;
		if (rc__avail(x) < w && !rc__need(x, w))
			return false;
		k = rc__avail(x) / w;
		if (k > n - i)
			k = n - i;
		if (w == 4)
			rc__swap32(x->x_pos, b + 4 * i, k);
		else
			rc__swap64(x->x_pos, b + 8 * i, k);
		x->x_pos += w * k;
		i += k;
	}
	return true;
}

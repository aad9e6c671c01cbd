/*
 * Fuzz target: the XDR routines idlc generates for the system's interfaces
 * (/usr/include/rpcsvc/{nfs_prot,mount,nlm_prot,...}.x, generated at build time), as libnfs's
 * OSS-Fuzz target does for its own. Bytes 0-1 pick one of every xdr_T of every interface; the
 * rest is decoded as a T under a 1 MiB allocation cap. A value that decodes is encoded,
 * decoded and encoded again: the two encodings must be the same bytes, of the length the
 * first decode consumed. Everything is freed with rc_xdr_free (LeakSanitizer checks).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_xdr_table.h"

static const fuzz_xdr_type **flat;
static size_t nflat;

static void index_types(void)
{
	for (size_t i = 0; fuzz_xdr_all[i]; i++)
		for (const fuzz_xdr_type *t = fuzz_xdr_all[i]; t->proc; t++)
			nflat++;
	flat = malloc(nflat * sizeof(*flat));
	if (flat == NULL || nflat == 0)
		abort();
	nflat = 0;
	for (size_t i = 0; fuzz_xdr_all[i]; i++)
		for (const fuzz_xdr_type *t = fuzz_xdr_all[i]; t->proc; t++)
			flat[nflat++] = t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const fuzz_xdr_type *t;
	void *a, *b;
	rc_xdr x;
	size_t used;

	if (flat == NULL)
		index_types();
	if (size < 2)
		return 0;
	t = flat[((size_t)data[0] << 8 | data[1]) % nflat];
	data += 2;
	size -= 2;
	a = calloc(1, t->size);
	b = calloc(1, t->size);
	if (a == NULL || b == NULL)
		abort();
	rc_xdrmem_create(&x, (void *)data, size, RC_XDR_DECODE);
	rc_xdr_set_limits(&x, 1u << 20, 0);
	if (t->proc(&x, a)) {
		unsigned char *e1, *e2;
		used = rc_xdr_getpos(&x);
		e1 = malloc(used + 8);
		e2 = malloc(used + 8);
		if (e1 == NULL || e2 == NULL)
			abort();
		rc_xdrmem_create(&x, e1, used + 8, RC_XDR_ENCODE);
		if (!t->proc(&x, a) || rc_xdr_getpos(&x) != used)
			abort(); /* a decoded value must encode again, to as many bytes */
		rc_xdrmem_create(&x, e1, used, RC_XDR_DECODE);
		if (!t->proc(&x, b) || rc_xdr_getpos(&x) != used)
			abort();
		rc_xdrmem_create(&x, e2, used + 8, RC_XDR_ENCODE);
		if (!t->proc(&x, b) || rc_xdr_getpos(&x) != used || memcmp(e1, e2, used) != 0)
			abort();
		free(e1);
		free(e2);
	}
	rc_xdr_free(t->proc, a);
	rc_xdr_free(t->proc, b);
	free(a);
	free(b);
	return 0;
}

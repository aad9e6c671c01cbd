/*
 * Fuzz target: record-marking reassembly (rc_recreader), differentially. The input is a
 * header (a record cap and a seed for how the stream is cut into reads) and a byte stream.
 * The stream is fed to rc_recreader in pieces of pseudo-random sizes, records are taken after
 * every piece, and the result is compared with a straightforward reference reassembler: the
 * same records, byte for byte, in the same order; RC_MSGTOOLARGE exactly when (and only
 * after) a fragment header takes the record over the cap, and for every call after it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <remotecall/xdr.h>

static uint32_t ld32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Reference: the records of s[0..n) (concatenated into out, lengths into lens); *toolarge if
 * a header took a record over max. Returns the number of complete records. */
static size_t reference(const uint8_t *s, size_t n, size_t max, uint8_t *out, size_t *lens,
                        bool *toolarge)
{
	size_t pos = 0, nrec = 0, rec = 0, olen = 0;
	*toolarge = false;
	while (n - pos >= 4) {
		uint32_t h = ld32(s + pos), flen = h & 0x7fffffffu;
		if (flen > max - rec) {
			*toolarge = true;
			break;
		}
		pos += 4;
		if (n - pos < flen)
			break; /* the fragment is incomplete: nothing more completes */
		memcpy(out + olen + rec, s + pos, flen);
		rec += flen;
		pos += flen;
		if (h & 0x80000000u) {
			lens[nrec++] = rec;
			olen += rec;
			rec = 0;
		}
	}
	return nrec;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t caps[] = {0, 1, 4, 7, 8, 64, 100, 4096, 65536, 65537};
	size_t max, nref, got = 0, gotlen = 0, pos = 0, *lens;
	uint8_t *want;
	bool toolarge, failed = false;
	uint32_t seed;
	rc_recreader r;

	if (size < 5)
		return 0;
	max = caps[data[0] % (sizeof(caps) / sizeof(caps[0]))];
	seed = ld32(data + 1) | 1;
	data += 5;
	size -= 5;
	want = malloc(size + 1);
	lens = malloc((size / 4 + 1) * sizeof(*lens));
	if (want == NULL || lens == NULL)
		abort();
	nref = reference(data, size, max ? max : RC_RECREADER_DEFAULT_MAX, want, lens, &toolarge);

	rc_recreader_init(&r, max);
	while (pos < size && !failed) {
		void *p, *rec;
		size_t n, len, chunk;
		rc_status st = rc_recreader_space(&r, &p, &n);
		if (st != RC_OK)
			abort(); /* the only way to fail is MSGTOOLARGE, and we stop on that */
		seed ^= seed << 13;
		seed ^= seed >> 17;
		seed ^= seed << 5;
		chunk = 1 + seed % (seed & 0x100 ? 4096 : 7);
		if (chunk > n)
			chunk = n;
		if (chunk > size - pos)
			chunk = size - pos;
		memcpy(p, data + pos, chunk);
		rc_recreader_commit(&r, chunk);
		pos += chunk;
		while ((st = rc_recreader_next(&r, &rec, &len)) == RC_OK) {
			if (got >= nref || len != lens[got] || memcmp(rec, want + gotlen, len) != 0)
				abort();
			gotlen += len;
			got++;
		}
		if (st == RC_MSGTOOLARGE) {
			failed = true;
			/* sticky */
			if (rc_recreader_space(&r, &rec, &len) != RC_MSGTOOLARGE ||
			    rc_recreader_next(&r, &rec, &len) != RC_MSGTOOLARGE)
				abort();
		} else if (st != RC_AGAIN) {
			abort();
		}
	}
	if (got != nref || failed != toolarge)
		abort();
	/* what is buffered and not yet a record is never more than what arrived */
	if (!failed && rc_recreader_buffered(&r) > size)
		abort();
	rc_recreader_destroy(&r);
	free(want);
	free(lens);
	return 0;
}

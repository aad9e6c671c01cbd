/*
 * Fuzz target: RPC-over-QUIC's stream reader (transports/quic_msg.c, rc__qmsg), differentially.
 * The input is a header (a body cap and a seed for how the stream is cut into the pieces
 * QUIC delivers) and a stream's bytes. The pieces are fed to the reader; every whole message
 * must be exactly the next one a straightforward reference finds -- its bytes as they came,
 * record marks included, its XID and type -- and the reader must fail (RC__QMSG_BAD) exactly
 * where the reference does: a fragment taking the body over the cap, or a message ending
 * with fewer than 8 body bytes.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transports/quic.h"

static uint32_t ld32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Reference: the next message of s[*pos..n): 1 (whole: its raw length in *len, *pos past
 * it), 0 (incomplete), -1 (bad). */
static int reference(const uint8_t *s, size_t n, size_t *pos, size_t max, size_t *len)
{
	size_t p = *pos, body = 0;

	for (;;) {
		if (n - p < 4)
			return 0;
		uint32_t h = ld32(s + p), flen = h & 0x7fffffffu;
		if (flen > max - body)
			return -1;
		p += 4;
		if (n - p < flen)
			return 0;
		p += flen;
		body += flen;
		if (h & 0x80000000u) {
			if (body < 8)
				return -1;
			*len = p - *pos;
			*pos = p;
			return 1;
		}
	}
}

/* The first 8 body bytes of the raw message m (marks skipped). */
static void head8(const uint8_t *m, uint8_t out[8])
{
	size_t got = 0, p = 0;
	while (got < 8) {
		uint32_t flen = ld32(m + p) & 0x7fffffffu;
		p += 4;
		for (uint32_t i = 0; i < flen && got < 8; i++)
			out[got++] = m[p + i];
		p += flen;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t caps[] = {0, 7, 8, 9, 64, 100, 4096, 65536, 1u << 20};
	size_t max, pos = 0, refpos = 0;
	uint32_t seed;
	rc__qmsg m;
	int ref = 0;

	if (size < 5)
		return 0;
	max = caps[data[0] % (sizeof(caps) / sizeof(caps[0]))];
	seed = ld32(data + 1) | 1;
	data += 5;
	size -= 5;
	rc__qmsg_init(&m, max);
	while (pos < size) {
		size_t chunk, used = 0;
		seed ^= seed << 13;
		seed ^= seed >> 17;
		seed ^= seed << 5;
		chunk = 1 + seed % (seed & 0x100 ? 4096 : 7);
		if (chunk > size - pos)
			chunk = size - pos;
		const uint8_t *p = data + pos;
		size_t left = chunk;
		while (left > 0) {
			int r = rc__qmsg_feed(&m, p, left, &used);
			size_t rlen = 0;
			if (r == RC__QMSG_MORE) {
				if (used != left)
					abort();
				break;
			}
			ref = reference(data, size, &refpos, max, &rlen);
			if (r == RC__QMSG_BAD) {
				if (ref != -1)
					abort();
				rc__qmsg_free(&m);
				return 0;
			}
			/* a whole message: the reference's next, ending where the reader stopped */
			if (ref != 1 || refpos != pos + (size_t)(p - (data + pos)) + used)
				abort();
			uint8_t h[8];
			head8(data + refpos - rlen, h);
			if (rc__qmsg_xid(&m) != ld32(h) || rc__qmsg_type(&m) != ld32(h + 4))
				abort();
			size_t len;
			unsigned char *msg = rc__qmsg_take(&m, &len);
			if (len != rlen || memcmp(msg, data + refpos - rlen, len) != 0)
				abort();
			free(msg);
			p += used;
			left -= used;
		}
		pos += chunk;
	}
	/* the rest holds no whole message the reader missed (nor a bad one it should have seen,
	 * unless incomplete) */
	{
		size_t rlen;
		ref = reference(data, size, &refpos, max, &rlen);
		if (ref == 1)
			abort();
	}
	rc__qmsg_free(&m);
	return 0;
}

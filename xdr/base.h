/*
 * Internal to remotecall: the pieces every layer shares (xdr/, transports/, runtime/), in one
 * home -- the monotonic clock, big-endian words, a string hash -- and the named limits.
 * Nothing here is installed.
 */
#ifndef RC_BASE_H
#define RC_BASE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- limits -------------------------------------------------------------------------------- */

#define RC__MAX_AUTH_BYTES 400u                  /* an opaque_auth body (RFC 5531) */
#define RC__UDP_MAX 65507u                        /* largest UDP payload over IPv4 */
#define RC__DGRAM_MAX 65536u                      /* a server's datagram receive buffer */
#define RC__STACK_MSG 2048u                       /* a call encoded on the caller's stack */
#define RC__STACK_REPLY 4096u                     /* a reply encoded on the server's stack */

/* ---- memory -------------------------------------------------------------------------------- */

#define RC__LINE 64u /* a cache line */

/* n bytes on a cache line's start (free() frees them), or NULL: for the objects a call
 * touches between two system calls, which find their lines cold -- laid out so that the
 * fields every call uses share as few lines as they can -- and the buffers it reads into.
 * rc__zalloc_lines: the same, zeroed. */
static inline void *rc__alloc_lines(size_t n)
{
	size_t size = (n + RC__LINE - 1) & ~(size_t)(RC__LINE - 1);

	return size >= n ? aligned_alloc(RC__LINE, size) : NULL;
}

static inline void *rc__zalloc_lines(size_t n)
{
	void *p = rc__alloc_lines(n);

	if (p != NULL)
		memset(p, 0, n);
	return p;
}

/* ---- time ---------------------------------------------------------------------------------- */

/* CLOCK_MONOTONIC in nanoseconds: deadlines, timers and the time stamps of
 * <remotecall/trace.h>. */
static inline uint64_t rc__clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Make cv a condition whose timed waits run on CLOCK_MONOTONIC (deadlines from rc__clock_ns
 * survive a change of the wall clock). */
static inline void rc__cond_init_mono(pthread_cond_t *cv)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(cv, &ca);
	pthread_condattr_destroy(&ca);
}

/* ---- big-endian words ---------------------------------------------------------------------- */

/* The 32-bit big-endian word at p. */
static inline uint32_t rc__ld32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Store v at p as a 32-bit big-endian word. */
static inline void rc__st32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* ---- hashing ------------------------------------------------------------------------------- */

/* FNV-1a over n bytes, continuing from h (start with RC__HASH_INIT). */
#define RC__HASH_INIT 2166136261u
static inline uint32_t rc__hash_bytes(uint32_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

/* FNV-1a of a NUL-terminated string. */
static inline uint32_t rc__hash_str(const char *s)
{
	uint32_t h = RC__HASH_INIT;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* Mix two words into a hash whose low bits depend on every input bit (a multiply, then the
 * high half folded down): table indexes take its low bits. */
static inline uint32_t rc__hash_pair(uint32_t a, uint32_t b)
{
	uint32_t h = (a ^ (b * 0x9e3779b1u)) * 0x85ebca6bu;

	return h ^ (h >> 16);
}

/*
 * Why the calling thread's last encode failed where the value itself was at fault -- a string,
 * opaque data or an array over its declared bound, a NULL pointer -- in words ("a string of
 * 300 bytes is over its declared bound of 255"), or "". Set by rc_xdr_bytes, rc_xdr_string and
 * rc_xdr_array; whoever reports an encode failure reads it and empties it (the client's
 * RC_CANTENCODEARGS detail).
 */
extern _Thread_local char rc__xdr_why[96];

#endif

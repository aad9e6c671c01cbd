/*
 * Helpers shared by the XDR tests: an allocation counter (malloc/calloc/realloc/free are
 * wrapped with -Wl,--wrap in every XDR test binary, so calls made inside libremotecall.a are
 * seen too), failure injection, and buffers that end right at a PROT_NONE guard page so that
 * a one-byte overread faults even without a sanitizer.
 */
#ifndef RC_XDR_TESTUTIL_H
#define RC_XDR_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <remotecall/xdr.h>

/* What the wrapped allocator saw since the last tu_alloc_reset(). */
struct tu_alloc {
	size_t calls;       /* malloc + calloc + realloc calls (realloc counted once each) */
	size_t fresh;       /* allocations that created a new block */
	size_t frees;       /* free() of a non-NULL pointer */
	long live;          /* fresh - frees (+ blocks realloc moved are neither) */
	size_t max_request; /* largest size asked for in one call */
	size_t total_request;
	size_t fail_at;     /* if non-zero, the fail_at-th call (1-based) returns NULL */
	size_t failed;      /* how many calls were made to fail */
};
extern struct tu_alloc tu_alloc;

/* Zero every counter and disarm failure injection. */
void tu_alloc_reset(void);

/*
 * A buffer of len bytes that ends exactly where a PROT_NONE page begins; the bytes before it
 * up to the page start are also mapped (so an underread is not caught, an overread is).
 * Contents are zero. Release with tu_guard_free.
 */
void *tu_guard_alloc(size_t len);
void tu_guard_free(void *p, size_t len);
/* A guard buffer holding a copy of src[0..len). */
void *tu_guard_dup(const void *src, size_t len);

/* A growable byte sink (used as a record-stream write callback context). */
struct tu_sink {
	unsigned char *data;
	size_t len, cap;
	size_t writes;     /* callback invocations */
	size_t fail_after; /* if non-zero, the write after this many succeeds fails */
};
bool tu_sink_write(void *ctx, const void *buf, size_t len);
void tu_sink_free(struct tu_sink *s);

/* Deterministic PRNG (xorshift64*) for reproducible random splits. */
uint64_t tu_rand(uint64_t *state);

#endif

/*
 * remotecall -- XDR (RFC 4506) streams and primitives.
 *
 * An rc_xdr is a small complete struct that lives on the caller's stack. One set of routines
 * serves three directions, chosen by rc_xdr.x_op:
 *
 *   RC_XDR_ENCODE  C value  -> XDR bytes
 *   RC_XDR_DECODE  XDR bytes -> C value; pointers the caller left NULL are allocated (malloc)
 *   RC_XDR_FREE    releases what a decode allocated (every non-NULL pointer reachable)
 *
 * Every routine returns true on success and false on failure (out of buffer space, a length
 * over its bound, out of memory, a bad discriminant). On a failed decode the object may hold
 * partially decoded data; rc_xdr_free() on it releases all of that and leaks nothing.
 *
 * Streams:
 *   - memory streams (rc_xdrmem_create): encode into / decode from a caller's buffer;
 *   - record-marking streams (RFC 5531 section 11) for byte streams such as TCP:
 *     rc_xdrrec_create encodes one record as fragments through a write callback, and
 *     rc_recreader reassembles records from whatever arrives, with a cap on record size.
 *
 * Safety: every length read from the wire is checked against the bytes that remain in the
 * stream and against the declared maximum before anything is allocated; a decode may allocate
 * at most its allocation budget (rc_xdr_set_limits) in total and nest at most max_depth
 * levels of optional data and arrays of non-scalar elements. Arrays of 4- and 8-byte scalars
 * and opaque data move in bulk.
 */
#ifndef REMOTECALL_XDR_H
#define REMOTECALL_XDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <remotecall/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* rc_xdr_op -- what a stream does: encode into its buffer, decode from it, or free what a
 * decode allocated. */
typedef enum rc_xdr_op {
	RC_XDR_ENCODE = 0,
	RC_XDR_DECODE = 1,
	RC_XDR_FREE = 2
} rc_xdr_op;

/* rc_xdr -- an XDR stream (struct below); lives on the caller's stack, no destructor. */
typedef struct rc_xdr rc_xdr;

/*
 * The type of every XDR routine: rc_xdr_int, the xdr_T routines idlc generates, ... Routines
 * taking a typed pointer (int32_t *, struct foo *) are cast to it, as with Sun's xdrproc_t.
 */
typedef bool (*rc_xdrproc)(rc_xdr *xdrs, void *objp);

/* Default limits of a stream (see rc_xdr_set_limits). */
#define RC_XDR_DEFAULT_ALLOC_LIMIT ((size_t)64 << 20) /* 64 MiB a decode may allocate */
#define RC_XDR_DEFAULT_MAX_DEPTH 1000u                /* nested optional data / arrays */

/* RFC 5531 record marking: the high bit of a fragment header marks the last fragment. */
#define RC_XDRREC_LAST_FRAG 0x80000000u
#define RC_XDRREC_MAX_FRAG 0x7fffffffu

/*
 * Write callback of an encoding record stream: send len bytes (a fragment header and its
 * payload) and return true, or false on failure (the encode then fails).
 */
typedef bool (*rc_xdrrec_writefn)(void *ctx, const void *buf, size_t len);

/* The stream. Fields marked public may be read (x_op); the rest belong to the library. */
struct rc_xdr {
	/* public */
	rc_xdr_op x_op;

	/* private: use the functions below, not these fields */
	unsigned char *x_base; /* start of the current window */
	unsigned char *x_pos;  /* next byte to read or write */
	unsigned char *x_end;  /* end of the current window */
	size_t x_done;         /* bytes handed on before x_base (record streams) */
	/* called when the window is full (encode); NULL: a memory stream, full is an error */
	bool (*x_more)(rc_xdr *xdrs, size_t need);
	void *x_ctx;           /* record stream: write callback context */
	rc_xdrrec_writefn x_write; /* record stream: write callback */
	size_t x_budget;       /* decode: bytes it may still allocate */
	uint32_t x_depth;      /* current nesting of optional data */
	uint32_t x_maxdepth;   /* its cap */
	/* lending (the server's argument decoding): decode points variable-length opaque data of
	 * RC_XDR_LEND_MIN bytes or more into the buffer instead of copying it, and free leaves
	 * pointers into [x_lend_lo, x_lend_hi) alone; NULL: off */
	const unsigned char *x_lend_lo, *x_lend_hi;
	/* gathering (a client's stream call): encode offers variable-length opaque data and
	 * strings of RC_XDR_GATHER_MIN bytes or more to x_gather, which may take them by
	 * reference (true: sent from the caller's memory, not copied); NULL: off */
	bool (*x_gather)(rc_xdr *xdrs, const void *p, uint32_t len);
	/* a record read in part (a client's big reply on a stream): x_rest more bytes of it follow
	 * the window, not read yet. Decoding opaque data (opaque[n], opaque<>, string<>) that runs
	 * past the window calls x_pull with its buffer: the rest of its bytes are read straight
	 * into dst, then the rest of the record becomes the window. Any other read past the window calls it
	 * with dst NULL and n 0: the window's unread bytes and the rest of the record become the
	 * window. Either way x_pull and x_rest are cleared; false: the read failed. NULL: off */
	size_t x_rest;
	bool (*x_pull)(rc_xdr *xdrs, void *dst, size_t n);
};

/* The smallest opaque<> / string<> an encoding stream offers to its x_gather. */
#define RC_XDR_GATHER_MIN 65536u

/* The smallest opaque<> a lending stream points into its buffer rather than copies. */
#define RC_XDR_LEND_MIN 1024u

/* ---------------------------------------------------------------------------------------- */
/* Streams                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/*
 * rc_xdrmem_create -- set up a memory stream over buf[0..size) for op. The stream neither
 * owns nor frees buf; buf must outlive the stream. Limits start at their defaults. For
 * RC_XDR_FREE, buf may be NULL and size 0.
 */
void rc_xdrmem_create(rc_xdr *xdrs, void *buf, size_t size, rc_xdr_op op);

/*
 * rc_xdr_set_limits -- cap what one decode may do: alloc_limit bytes of allocation in total
 * (0 keeps the current value) and max_depth levels of nesting (0 keeps the current value). A
 * level is one rc_xdr_pointer / rc_xdr_reference object or one rc_xdr_array of non-scalar
 * elements -- the two ways an XDR type can contain itself. A decode that would pass either
 * limit fails cleanly (before allocating); an encode is held to the same depth.
 */
void rc_xdr_set_limits(rc_xdr *xdrs, size_t alloc_limit, uint32_t max_depth);

/* rc_xdr_getpos -- bytes encoded or decoded so far (for record streams, in this record). */
size_t rc_xdr_getpos(const rc_xdr *xdrs);

/*
 * rc_xdr_setpos -- move a memory stream to byte offset pos (0 <= pos <= size). Returns false,
 * and leaves the stream as it was, if pos is out of range or the stream is a record stream.
 */
bool rc_xdr_setpos(rc_xdr *xdrs, size_t pos);

/* rc_xdr_remaining -- bytes left in the stream's current window. */
size_t rc_xdr_remaining(const rc_xdr *xdrs);

/*
 * rc_xdr_inline -- a pointer to the next len bytes of the stream's buffer, which the stream
 * skips; the caller reads or writes them directly. len is rounded up to a multiple of 4.
 * NULL if fewer than len bytes remain in the current window (the stream is then unchanged).
 * An encoding record stream first sends what it has buffered as a non-final fragment when
 * that makes room; a len larger than its whole buffer gives NULL without sending anything.
 */
void *rc_xdr_inline(rc_xdr *xdrs, size_t len);

/*
 * rc_xdr_free -- release what a decode allocated inside *objp, by running proc with an
 * RC_XDR_FREE stream. Pointers inside *objp are set to NULL. *objp itself is not freed.
 */
void rc_xdr_free(rc_xdrproc proc, void *objp);

/* ---------------------------------------------------------------------------------------- */
/* Record marking (RFC 5531 section 11)                                                     */
/* ---------------------------------------------------------------------------------------- */

/*
 * rc_xdrrec_create -- set up an encoding stream that writes one record at a time through
 * write(ctx, ...). buf (bufsize >= 16 bytes; the caller owns it and it must outlive the stream)
 * holds one fragment: when it fills, it is written as a non-final fragment; at
 * rc_xdrrec_endofrecord the rest is written as the final fragment. Returns RC_INVAL for a
 * NULL buf, a NULL write or a bufsize under 16.
 */
rc_status rc_xdrrec_create(rc_xdr *xdrs, void *buf, size_t bufsize, rc_xdrrec_writefn write,
                           void *ctx);

/*
 * rc_xdrrec_endofrecord -- write what is buffered as the last fragment of the record and start
 * a new record. Returns false if the write callback failed.
 */
bool rc_xdrrec_endofrecord(rc_xdr *xdrs);

/*
 * rc_recreader -- reassembles records from a byte stream that arrives in arbitrary pieces.
 * The reader owns one buffer that grows to at most max_record plus a little slack; a record
 * (the sum of its fragments) longer than max_record is refused before it is buffered.
 *
 *   rc_recreader_space(r, &p, &n)   where to read the next bytes to (n >= 1)
 *   read(fd, p, n) -> got           the caller reads
 *   rc_recreader_commit(r, got)
 *   while (rc_recreader_next(r, &rec, &len) == RC_OK) handle(rec, len);
 *
 * A record returned by next() stays valid until the following rc_recreader_space() or
 * rc_recreader_destroy(); several complete records can be taken in a row.
 */
typedef struct rc_recreader {
	/* private */
	unsigned char *buf;
	size_t cap;        /* bytes allocated */
	size_t len;        /* bytes of buf holding data */
	size_t off;        /* start of the current record's payload */
	size_t rec;        /* payload bytes of the current record assembled at buf + off */
	size_t scan;       /* first raw byte not yet parsed */
	size_t frag_left;  /* payload bytes of the current fragment still raw */
	size_t max_record; /* cap on one record */
	bool in_frag;      /* a fragment header has been parsed */
	bool last;         /* ...and it was the last fragment of its record */
	bool failed;       /* a record broke the cap: the stream is unusable */
	bool started;      /* a fragment header of the current record has been parsed */
	bool first;        /* the current fragment is its record's first */
	struct rc__lendbuf *lender; /* buf is lent by it, not the reader's own (rc__recreader_lend) */
} rc_recreader;

/* rc_recreader_init -- an empty reader capped at max_record bytes a record (0 means
 * RC_RECREADER_DEFAULT_MAX). Allocates nothing until data arrives. */
#define RC_RECREADER_DEFAULT_MAX ((size_t)8 << 20)
void rc_recreader_init(rc_recreader *r, size_t max_record);

/* rc_recreader_destroy -- free the reader's buffer. The reader may be initialised again. */
void rc_recreader_destroy(rc_recreader *r);

/*
 * rc_recreader_space -- a place for at least one more byte of input. Returns RC_OK with *p and
 * *n set; RC_NOMEM if the buffer could not grow (nothing lost: try again later); RC_MSGTOOLARGE
 * after a record broke the cap.
 */
rc_status rc_recreader_space(rc_recreader *r, void **p, size_t *n);

/* rc_recreader_commit -- n bytes (n <= the *n of the last space call) were stored at *p. */
void rc_recreader_commit(rc_recreader *r, size_t n);

/*
 * rc_recreader_next -- the next complete record, if the buffer holds one. Returns RC_OK with
 * *rec / *len set (the memory is the reader's); RC_AGAIN if more input is needed; RC_MSGTOOLARGE
 * if the record's fragments add up to more than max_record -- the stream cannot be resynchronised
 * and every later call fails the same way (close the connection).
 */
rc_status rc_recreader_next(rc_recreader *r, void **rec, size_t *len);

/* rc_recreader_buffered -- raw bytes received but not yet returned as part of a record. */
size_t rc_recreader_buffered(const rc_recreader *r);

/* rc_recreader_in_record -- true between the first byte of a record and its end (also when
 * all that arrived is a header, or empty non-final fragments): the peer owes us the rest. */
bool rc_recreader_in_record(const rc_recreader *r);

/* ---------------------------------------------------------------------------------------- */
/* Primitives (RFC 4506 section 4)                                                          */
/* ---------------------------------------------------------------------------------------- */

/* rc_xdr_void -- the routine of void: nothing on the wire; always true. */
bool rc_xdr_void(rc_xdr *xdrs, void *unused);
bool rc_xdr_int(rc_xdr *xdrs, int32_t *ip);
bool rc_xdr_u_int(rc_xdr *xdrs, uint32_t *up);
bool rc_xdr_hyper(rc_xdr *xdrs, int64_t *hp);
bool rc_xdr_u_hyper(rc_xdr *xdrs, uint64_t *up);
/* An XDR bool is 0 or 1 on the wire; a decode takes any non-zero value as true (libtirpc
 * does too: real servers send them), an encode writes 0 or 1. */
bool rc_xdr_bool(rc_xdr *xdrs, bool *bp);
/* Enums travel as a signed 32-bit int. (C enums are int-sized: pass (int32_t *)&e.) */
bool rc_xdr_enum(rc_xdr *xdrs, int32_t *ep);
/* Sun's bool_t layout: an XDR bool held in a 4-byte int (idlc --rpcgen-types); decode
 * stores 1 for any non-zero value, encode writes 0 or 1. */
bool rc_xdr_bool32(rc_xdr *xdrs, int32_t *bp);
/* Sun's long / unsigned long (64-bit on LP64) as an XDR int / unsigned int: 32 bits on the
 * wire; encoding a value outside that range fails instead of truncating. */
bool rc_xdr_long(rc_xdr *xdrs, long *lp);
bool rc_xdr_u_long(rc_xdr *xdrs, unsigned long *ulp);
bool rc_xdr_float(rc_xdr *xdrs, float *fp);
bool rc_xdr_double(rc_xdr *xdrs, double *dp);

/* Sun's narrow integers, each carried in a 4-byte XDR int (decode checks the range). */
bool rc_xdr_char(rc_xdr *xdrs, char *cp);
bool rc_xdr_u_char(rc_xdr *xdrs, unsigned char *cp);
bool rc_xdr_short(rc_xdr *xdrs, int16_t *sp);
bool rc_xdr_u_short(rc_xdr *xdrs, uint16_t *sp);

/*
 * Quadruple precision (RFC 4506 section 4.8): IEEE binary128, 16 bytes. C and C++ see the
 * same type: g++ before 13 has no _Float128, so C++ takes __float128 (the same format and
 * calling convention) where it exists, and long double where that is binary128 already.
 */
#if defined(__cplusplus) && defined(__GNUC__) && !defined(__clang__) && \
	defined(__SIZEOF_FLOAT128__)
__extension__ typedef __float128 rc_quadruple;
#define RC_QUADRUPLE_IS_FLOAT 1
#elif defined(__cplusplus) && defined(__GNUC__) && !defined(__clang__) && \
	defined(__LDBL_MANT_DIG__) && __LDBL_MANT_DIG__ == 113
typedef long double rc_quadruple;
#define RC_QUADRUPLE_IS_FLOAT 1
#elif !defined(__cplusplus) && defined(__GNUC__) && !defined(__clang__) && \
	defined(__FLT128_MAX__)
__extension__ typedef _Float128 rc_quadruple;
#define RC_QUADRUPLE_IS_FLOAT 1
#elif defined(__clang__) && defined(__FLOAT128__)
__extension__ typedef __float128 rc_quadruple;
#define RC_QUADRUPLE_IS_FLOAT 1
#else
typedef struct rc_quadruple { unsigned char bytes[16]; } rc_quadruple; /* big-endian bytes */
#endif
bool rc_xdr_quadruple(rc_xdr *xdrs, rc_quadruple *qp);

/* Fixed-length opaque data: exactly cnt bytes at cp, padded to a multiple of 4 on the wire. */
bool rc_xdr_opaque(rc_xdr *xdrs, void *cp, uint32_t cnt);

/*
 * Variable-length opaque data: *cpp points to *sizep bytes, at most maxsize. On decode a NULL
 * *cpp is allocated (exactly *sizep bytes, at least 1); a non-NULL one is the caller's buffer
 * and the data is decoded into it: it holds *sizep bytes -- more data fails -- or, when
 * *sizep is 0, maxsize bytes (Sun's rule). So a result object can bring its own buffer (set
 * the pointer and the length to its capacity; do not rc_xdr_free it): big results then
 * decode without an allocation. A lending stream (x_lend_lo) may point *cpp into its buffer.
 */
bool rc_xdr_bytes(rc_xdr *xdrs, char **cpp, uint32_t *sizep, uint32_t maxsize);

/*
 * A string of at most maxsize bytes (no NUL on the wire). On decode a NULL *cpp is allocated
 * (length + 1, NUL-terminated); a non-NULL one must hold maxsize + 1 bytes. A string
 * containing a NUL byte fails to decode (an allocated *cpp is left for rc_xdr_free). Encoding
 * a NULL string fails.
 */
bool rc_xdr_string(rc_xdr *xdrs, char **cpp, uint32_t maxsize);
/* rc_xdr_string with no bound, usable as an element routine (arrays of strings). */
bool rc_xdr_wrapstring(rc_xdr *xdrs, char **cpp);

/*
 * Variable-length array: addrp is the address of the element pointer (T **), *sizep elements of
 * elsize bytes each, at most maxsize, each coded by elproc. On decode a NULL *addrp is
 * allocated, zero-filled. Arrays whose elproc is rc_xdr_int, rc_xdr_u_int, rc_xdr_enum,
 * rc_xdr_float, rc_xdr_hyper, rc_xdr_u_hyper, rc_xdr_double or rc_xdr_bool move in bulk.
 */
bool rc_xdr_array(rc_xdr *xdrs, void *addrp, uint32_t *sizep, uint32_t maxsize,
                  uint32_t elsize, rc_xdrproc elproc);

/* Fixed-length array: nelem elements of elsize bytes at basep (bulk for scalars, as above). */
bool rc_xdr_vector(rc_xdr *xdrs, void *basep, uint32_t nelem, uint32_t elsize,
                   rc_xdrproc elproc);

/*
 * Optional data (XDR "T *x"): objpp is the address of the pointer (T **). On the wire a bool
 * says whether an object follows. Decode allocates a zeroed object of objsize bytes for a NULL
 * *objpp; free releases the object and sets *objpp to NULL.
 */
bool rc_xdr_pointer(rc_xdr *xdrs, void *objpp, uint32_t objsize, rc_xdrproc proc);

/* Like rc_xdr_pointer, but the object is always present (no bool on the wire). */
bool rc_xdr_reference(rc_xdr *xdrs, void *objpp, uint32_t objsize, rc_xdrproc proc);

/* One arm of a discriminated union; a table ends with an entry whose proc is NULL. */
typedef struct rc_xdr_discrim {
	int32_t value;
	rc_xdrproc proc;
} rc_xdr_discrim;

/*
 * Discriminated union: *dscmp selects the arm in choices, whose routine codes unp; if no arm
 * matches, dfault codes it, and with no dfault the call fails (a bad discriminant).
 */
bool rc_xdr_union(rc_xdr *xdrs, int32_t *dscmp, void *unp, const rc_xdr_discrim *choices,
                  rc_xdrproc dfault);

#ifdef __cplusplus
}
#endif
#endif

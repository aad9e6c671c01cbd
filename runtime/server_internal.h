/* Internal to the server: the duplicate request cache (drc.c) and rpcbind registration
 * (rpcbind.c). */
#ifndef RC_SERVER_INTERNAL_H
#define RC_SERVER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/rpc.h"

/* ---- duplicate request cache ----------------------------------------------------------- */

/* nfsd's key: xid, procedure, program, version, client address and port, argument length and
 * a checksum of (the first 256 bytes of) the arguments. */
typedef struct rc__drc_key {
	uint32_t xid, prog, vers, proc;
	uint16_t family, port;
	unsigned char addr[16];
	uint32_t arglen;
	uint64_t csum;
} rc__drc_key;

typedef struct rc__drc rc__drc;

/* What the cache did (rc_server_stats holds the same numbers for the public). */
typedef struct rc__drc_stats {
	uint64_t entries;     /* calls remembered now */
	uint64_t bytes;       /* bytes held now, as charged against the bound */
	uint64_t replayed;    /* retransmissions answered with the stored reply */
	uint64_t in_progress; /* retransmissions of calls still running: dropped */
	uint64_t unanswered;  /* retransmissions of calls whose reply was shed: dropped */
	uint64_t shed;        /* replies let go (or never kept) for want of room */
	uint64_t refused;     /* new calls dropped unrun: the cache was full of calls in their TTL */
} rc__drc_stats;

typedef enum {
	RC__DRC_NEW,        /* k is now in progress: run the call, then rc__drc_store its reply */
	RC__DRC_INPROGRESS, /* a retransmission of a call still running: drop it */
	RC__DRC_REPLAY,     /* a retransmission: the stored reply was copied into rb */
	RC__DRC_DROP,       /* a retransmission with no reply to give (shed, or out of memory) */
	RC__DRC_REFUSED     /* a new call with no room to remember it: drop it unrun */
} rc__drc_result;

/*
 * A cache remembering each call ttl_ms after its reply, holding at most `entries` calls and
 * `bytes` bytes (entries, replies kept and index together; the rules are at the top of
 * drc.c). NULL if entries is 0, bytes is too small for the index and one entry, or memory is
 * short (the server then runs without one). Destroy with rc__drc_destroy.
 */
rc__drc *rc__drc_create(uint32_t entries, size_t bytes, uint32_t ttl_ms);
/* Free d and everything it holds (NULL: nothing). No call may be using it. */
void rc__drc_destroy(rc__drc *d);
/* Fill k for a call from peer (NULL: no address) with these numbers and arguments (the
 * checksum covers the first 256 bytes of args). */
void rc__drc_make_key(rc__drc_key *k, uint32_t xid, uint32_t prog, uint32_t vers,
                      uint32_t proc, const rc_peer *peer, const unsigned char *args,
                      size_t arglen);
/* Look k up and admit it if it is new (thread-safe). REPLAY: rb was reset and holds the
 * stored reply (its buffer may now be on the heap: rc__encbuf_free releases it), *rlen its
 * length. Every other result leaves rb and *rlen alone. See rc__drc_result. */
rc__drc_result rc__drc_lookup(rc__drc *d, const rc__drc_key *k, rc__encbuf *rb, size_t *rlen);
/* Keep the reply (copied) of a call looked up as RC__DRC_NEW; its TTL starts now. A reply
 * over the entry's inline room that finds no room is not kept (the call stays remembered). */
void rc__drc_store(rc__drc *d, const rc__drc_key *k, const unsigned char *reply, size_t len);
/* Forget a call looked up as RC__DRC_NEW that did not run (its arguments did not decode, or
 * memory ran out before its routine): it holds no room, and a retransmission may run it. */
void rc__drc_cancel(rc__drc *d, const rc__drc_key *k);
/* Copy the counters and current size into *out (thread-safe). */
void rc__drc_get_stats(rc__drc *d, rc__drc_stats *out);

/* ---- rpcbind ---------------------------------------------------------------------------- */

/* Register every (program, version) on every UDP/TCP listener with the local rpcbind. */
rc_status rc__rpcbind_sync(rc_server *srv);
/* Remove what rc__rpcbind_sync registered. */
void rc__rpcbind_unset_all(rc_server *srv);

/* Server internals rpcbind.c walks. */
void rc__server_each_reg(rc_server *srv, void (*fn)(void *ctx, uint32_t prog, uint32_t vers),
                         void *ctx);
size_t rc__server_listeners(rc_server *srv, const char **uris, bool *dgram, size_t max);

#endif

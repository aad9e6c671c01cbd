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

typedef enum { RC__DRC_NEW, RC__DRC_INPROGRESS, RC__DRC_REPLAY } rc__drc_result;

/* A cache of `entries` replies kept ttl_ms each; NULL if entries is 0 or memory is short (the
 * server then runs without one). */
rc__drc *rc__drc_create(uint32_t entries, uint32_t ttl_ms);
void rc__drc_destroy(rc__drc *d);
void rc__drc_make_key(rc__drc_key *k, uint32_t xid, uint32_t prog, uint32_t vers,
                      uint32_t proc, const rc_peer *peer, const unsigned char *args,
                      size_t arglen);
/* Look k up. NEW: k is now in progress (store its reply later). INPROGRESS: a duplicate of a
 * call still running: drop it. REPLAY: the cached reply was copied into rb (reset first);
 * *rlen is its length. */
rc__drc_result rc__drc_lookup(rc__drc *d, const rc__drc_key *k, rc__encbuf *rb, size_t *rlen);
/* Keep the reply of a call looked up as NEW. */
void rc__drc_store(rc__drc *d, const rc__drc_key *k, const unsigned char *reply, size_t len);

/* ---- serving one request ----------------------------------------------------------------- */

/*
 * Serve one request message msg[0..len) -- no sockets: bytes in, reply bytes out -- and hand
 * the reply (with RC_TP_HEADROOM bytes before it, valid during the call) to
 * reply(ctx, reply, rlen), at most once, before returning; no reply is handed over for a
 * message that gets none (a reply, a duplicate of a call still running). The entry of
 * synchronous transports and of the fuzzers.
 */
void rc__server_handle_direct(rc_server *srv, const void *msg, size_t len, rc_reply_fn reply,
                              void *ctx);

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

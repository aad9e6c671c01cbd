/* Internal to the runtime: the duplicate request cache (drc.c), the serve step's entry
 * (rc__server_handle_direct), and what the layer above the server (rpcbind.c) may read of it
 * and hook. The server's own files share base.h and the headers above it. */
#ifndef RC_SERVER_INTERNAL_H
#define RC_SERVER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/core/rpc.h"

/* ---- duplicate request cache ----------------------------------------------------------- */

/* nfsd's key: xid, procedure, program, version, client address and port, argument length and
 * a checksum of (the first 256 bytes of) the arguments. */
/* A call as the cache tells calls apart: who sent it (address and port), under which
 * credential (the flavor, and for a flavor with security contexts the context: a spoofed
 * AUTH_SYS call from a victim's address and port never shares an entry with the victim's
 * RPCSEC_GSS call), its numbers and a checksum of its arguments. Nine 64-bit words, every
 * byte written by rc__drc_make_key (padding included). */
#define RC__DRC_CTX_ID_LEN 16u
typedef struct rc__drc_key {
	uint32_t xid, prog, vers, proc;
	uint32_t flavor;                       /* the credential's flavor */
	uint16_t family, port;
	unsigned char addr[16];
	uint32_t arglen, pad;
	uint64_t csum;
	unsigned char ctx[RC__DRC_CTX_ID_LEN]; /* the security context's id (RPCSEC_GSS: its
	                                          handle), zeros for a flavor without one */
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
/* Fill k for a call from peer (NULL: no address) under credential flavor (ctx_id: the
 * RC__DRC_CTX_ID_LEN bytes naming its security context, NULL for none) with these numbers and
 * arguments (the checksum covers the first 256 bytes of args). */
void rc__drc_make_key(rc__drc_key *k, uint32_t xid, uint32_t prog, uint32_t vers,
                      uint32_t proc, uint32_t flavor, const unsigned char *ctx_id,
                      const rc_peer *peer, const unsigned char *args, size_t arglen);
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

/* ---- for the layer above (rpcbind.c) ------------------------------------------------------ */

/*
 * rpcbind.c registers a server with rpcbind; server.c never calls it. It reads what it needs
 * through rc__server_view, a copy taken under the server's lock, and learns of changes
 * through the one hook it installs.
 */

/* A socket listener (UDP, TCP, QUIC or Unix-domain; not in-process). */
typedef struct rc__srv_lsn {
	int fd;     /* the listening socket, for getsockname/getsockopt only: open until
	               rc_server_destroy closes it, after the hook's RC__SRV_DESTROY */
	bool dgram; /* a datagram socket */
	char quic[128]; /* a QUIC listener: its bound URI (quic://ADDR:PORT; fd is not its UDP
	                   socket); "" for the others */
} rc__srv_lsn;

/* A registered (program, version). */
typedef struct rc__srv_prog {
	uint32_t prog, vers;
} rc__srv_prog;

typedef struct rc__srv_view {
	rc__srv_lsn *lsn;    /* nlsn socket listeners, in the order they were added */
	size_t nlsn;
	rc__srv_prog *progs; /* nprogs registrations, in no particular order */
	size_t nprogs;
} rc__srv_view;

/* Fill *v with srv's socket listeners and registrations as they are now (taken under the
 * server's lock). RC_OK: free it with rc__server_view_free; RC_NOMEM: *v is empty. */
rc_status rc__server_view(rc_server *srv, rc__srv_view *v);
void rc__server_view_free(rc__srv_view *v);

typedef enum {
	RC__SRV_CHANGED, /* rc_server_listen added a listener or rc_server_register a program */
	RC__SRV_DESTROY  /* rc_server_destroy begins: the hook's last call; listeners still open */
} rc__srv_event;

/* The hook: called on the thread of the function that caused ev, without the server's lock
 * (it may block, e.g. on rpcbind). */
typedef void (*rc__srv_hook)(rc_server *srv, rc__srv_event ev, void *ctx);

/* Install fn with ctx as srv's hook (one per server; fn NULL removes it). */
void rc__server_set_hook(rc_server *srv, rc__srv_hook fn, void *ctx);
/* The ctx installed with fn, or NULL if srv's hook is not fn. */
void *rc__server_hook_ctx(rc_server *srv, rc__srv_hook fn);

/* ---- the request, for the Sun layer (sunrpc_svc.c) ---------------------------------------- */

/* Whether req came as a datagram; its AUTH_SYS credential in Sun's shape (NULL for another
 * flavor); the context of an RPCSEC_GSS call (valid until its reply), or NULL (rpcsec_gss.c). */
bool rc__svc_req_dgram(const rc_svc_req *req);
const rc_svc_unixcred *rc__svc_req_unixcred(const rc_svc_req *req);
struct rc__gss_svc_ctx *rc__gss_req_ctx(const rc_svc_req *req);

#endif

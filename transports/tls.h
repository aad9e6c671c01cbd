/*
 * RPC-over-TLS (RFC 9289) for the stream transport (internal): OpenSSL 3 contexts built from
 * <remotecall/tls.h>'s options, the client's probe, and one TLS connection over a socket --
 * OpenSSL's handshake, then TLS 1.3 records protected and opened by tls.c itself with the
 * traffic secrets (SSL_read / SSL_write only if that cannot be: see tls.c, "The record
 * layer") -- as the stream transport's byte source and sink (stream.c). Only transports/ and the client's set-up (options, the context's lifetime)
 * include this.
 *
 * Threads: a connection's SSL object is used under its own mutex, never while waiting: a
 * blocking read or write polls the socket with the mutex released, so one thread may read
 * while another writes (transport.h's rule) even though OpenSSL's SSL object is not
 * thread-safe.
 */
#ifndef RC_TRANSPORTS_TLS_H
#define RC_TRANSPORTS_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <remotecall/status.h>
#include <remotecall/tls.h>

typedef struct rc_tp rc_tp;
typedef struct rc__tls_ctx rc__tls_ctx;   /* one side's settings (an SSL_CTX) */
typedef struct rc__tls_conn rc__tls_conn; /* one TLS connection (an SSL) */

/* A client context for o (CA, client certificate, name and policy copied). RC_OK with *out
 * (the caller frees it with rc__tls_ctx_free); RC_INVAL (unreadable or mismatched files:
 * rc__tp_detail says which and why), RC_NOMEM. */
rc_status rc__tls_client_ctx(const rc_tls_client_opts *o, rc__tls_ctx **out);
/* A server context for o. Same returns as rc__tls_client_ctx. */
rc_status rc__tls_server_ctx(const rc_tls_server_opts *o, rc__tls_ctx **out);
/* Free a context (NULL ignored). No connection made from it may remain. */
void rc__tls_ctx_free(rc__tls_ctx *ctx);
/* The files and choices a context was made from, for RPC-over-QUIC, whose TLS is GnuTLS's
 * (transports/quic.c): a client's CA file or directory (both NULL: the system's), its
 * certificate and key (NULL: none) and the name to verify (NULL: the URI's host); a server's
 * certificate and key, the CA file client certificates must chain to (ca_file) and
 * clientcert. The strings are the context's, valid until rc__tls_ctx_free. */
typedef struct rc__tls_files {
	const char *ca_file, *ca_dir, *cert_file, *key_file, *name;
	rc_tls_clientcert clientcert;
} rc__tls_files;
const rc__tls_files *rc__tls_ctx_files(const rc__tls_ctx *ctx);

/* The client policy of ctx (RC_TLS_OFF for NULL). */
rc_tls_policy rc__tls_policy(const rc__tls_ctx *ctx);

/*
 * Parse a client URI's query ("tls=required&ca=/x/ca.pem&name=h") into o, through
 * rc__uri_query (its key table: tls=off|opportunistic|required, ca, cadir, cert, key, name;
 * values may use %XX escapes). The strings o then points to are stored in buf[0..cap). RC_OK;
 * RC_UNKNOWNADDR for an unknown key, a bad value or a query longer than buf (rc__tp_detail
 * says which and lists the keys).
 */
rc_status rc__tls_query_parse(const char *query, rc_tls_client_opts *o, char *buf, size_t cap);

/*
 * The client's probe on the connected plaintext stream tp: a NULL call of (prog, vers) with
 * an AUTH_TLS credential, and its reply, by deadline (CLOCK_MONOTONIC ns; 0: none). RC_OK with
 * *offered (the reply's verifier is "STARTTLS"); RC_TIMEDOUT, RC_CANTSEND, RC_CANTRECV,
 * RC_BADREPLY (not a reply to the probe).
 */
rc_status rc__tls_probe(rc_tp *tp, uint32_t prog, uint32_t vers, int64_t deadline,
                        bool *offered);

/*
 * The client's handshake on connected socket fd (blocking or not: the TLS layer's reads and
 * writes never block, it waits with poll), verifying the server's
 * certificate against name (a DNS name or an IP address), by deadline. RC_OK with *out;
 * RC_TLSFAILED (rc__tp_detail has OpenSSL's reason), RC_TIMEDOUT, RC_NOMEM. fd stays the
 * caller's.
 */
rc_status rc__tls_connect(rc__tls_ctx *ctx, int fd, const char *name, int64_t deadline,
                          rc__tls_conn **out);
/*
 * The server's side on accepted socket fd: the handshake is then driven by
 * rc__tls_handshake. RC_OK with *out; RC_TOOMANY when ctx's handshakes in progress are at its
 * cap; RC_NOMEM.
 */
rc_status rc__tls_accept(rc__tls_ctx *ctx, int fd, rc__tls_conn **out);
/* One step of a server handshake, never blocking: 1 done, 0 waiting for the peer (or for
 * room to write: rc__tls_wants_write), -1 failed (rc__tp_detail says why). */
int rc__tls_handshake(rc__tls_conn *t);
bool rc__tls_handshaking(const rc__tls_conn *t);
bool rc__tls_wants_write(const rc__tls_conn *t);

/*
 * Read up to n decrypted bytes / write up to n bytes, waiting at most timeout_ms for the
 * socket (0: not at all; negative: no limit). As recv/send: the bytes moved; 0 from read when
 * the peer closed; -1 with errno EAGAIN (nothing now / timed out), EPROTO (a TLS failure:
 * rc__tp_detail says which) or the socket's error.
 */
ssize_t rc__tls_read(rc__tls_conn *t, void *buf, size_t n, int timeout_ms);
ssize_t rc__tls_write(rc__tls_conn *t, const void *buf, size_t n, int timeout_ms);
/* Bytes of records written that the socket has not taken yet (a non-blocking write's; they
 * leave first with the next write, or with rc__tls_flush). */
size_t rc__tls_unsent(rc__tls_conn *t);
/* Send those, waiting at most timeout_ms for the socket (0: not at all; negative: no limit):
 * 0 when all are out; -1 with errno EAGAIN (some left) or the socket's error. */
int rc__tls_flush(rc__tls_conn *t, int timeout_ms);
/* Bytes the TLS layer holds that a read would return (or is assembling), without the socket. */
size_t rc__tls_pending(rc__tls_conn *t);
/* The verified peer certificate's identity (server side), or NULL if the peer sent none. */
const rc_tls_peer *rc__tls_peer(const rc__tls_conn *t);
/* The channel-binding value of t's session (RFC 9266 "tls-exporter": TLS-Exporter(
 * "EXPORTER-Channel-Binding", empty context, 32 bytes)) into out[0..32). False while the
 * handshake runs or when OpenSSL fails. */
bool rc__tls_exporter(rc__tls_conn *t, unsigned char *out);
/* Send close_notify if the socket takes it now, and free t (NULL ignored). */
void rc__tls_close(rc__tls_conn *t);
/* Application data records one sending key protects before a KeyUpdate replaces it: n (1 to
 * 2^24, the default; anything else restores the default). For tests; set it before
 * connections start, it is read without a lock. */
void rc__tls_set_key_records(uint64_t n);

#endif

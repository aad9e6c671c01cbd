/*
 * Internal to transports/tls*.c: the TLS context and connection objects, shared by the
 * connections' handshake, record layer and I/O (tls.c) and the contexts, certificates and
 * AUTH_TLS probe below them (tls_ctx.c, which calls nothing of tls.c's). The stream transport
 * sees only tls.h.
 */
#ifndef RC_TLS_PRIV_H
#define RC_TLS_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/core_dispatch.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>

#include "transports/tls.h"
#include "transports/transport.h"

#define RC__TLS_MAX_SANS 64  /* subjectAltName entries kept of a client certificate */

struct rc__tls_ctx {
	SSL_CTX *ctx;
	bool server;
	rc_tls_policy policy;      /* client */
	char name[256];            /* client: the name to verify ("" : the URI's host) */
	atomic_uint handshakes;    /* server: in progress */
	unsigned max_handshakes;   /* server */
	rc__tls_files files;       /* the settings it was made from (rc__tls_ctx_files) */
	char *kept[4];             /* ... the copies files' strings point to */
};

/*
 * One TLS 1.3 AEAD suite's cipher as its OpenSSL provider implements it: the provider's own
 * entry points (provider-cipher(7)), which the record layer calls without EVP_CIPHER_CTX
 * around them (see rc__tls_impl_find). Found once a process; newctx NULL: not found.
 */
typedef struct rc__tls_aead_impl {
	EVP_CIPHER *cipher; /* fetched, never freed: keeps its provider loaded */
	void *provctx;
	OSSL_FUNC_cipher_newctx_fn *newctx;
	OSSL_FUNC_cipher_freectx_fn *freectx;
	OSSL_FUNC_cipher_encrypt_init_fn *einit;
	OSSL_FUNC_cipher_decrypt_init_fn *dinit;
	OSSL_FUNC_cipher_update_fn *update;
	OSSL_FUNC_cipher_final_fn *final;
	OSSL_FUNC_cipher_get_ctx_params_fn *get;
} rc__tls_aead_impl;

/*
 * One direction of the record layer remotecall runs itself once the handshake is done (see
 * "The record layer" below): the provider's cipher context keyed with the direction's
 * traffic key, the static IV, the traffic secret (for a KeyUpdate) and the record sequence
 * number.
 */
typedef struct rc__tls_dir {
	const rc__tls_aead_impl *im;
	void *actx; /* im's context (im->freectx frees it) */
	bool enc;   /* protecting (else opening) */
	unsigned char iv[12];
	unsigned char secret[EVP_MAX_MD_SIZE];
	uint64_t seq;
} rc__tls_dir;

struct rc__tls_conn {
	pthread_mutex_t mu; /* the SSL object's: held around every SSL_* call, never while waiting */
	SSL *ssl;
	int fd;
	rc__tls_ctx *ctx;
	bool handshaking;  /* server: the handshake has not finished */
	bool want_write;   /* server: the handshake waits for room to write */
	bool has_peer;
	int failed;        /* the errno of a failure: every later read or write fails alike */
	rc_tls_peer peer;  /* server: the verified client certificate's identity */
	char *subject;
	char *sans[RC__TLS_MAX_SANS];
	/* Bytes a blocking read took from the socket before SSL asked for them (rc__tls_io): the
	 * BIO's reads take these first. Under mu; made on the first blocking read. */
	unsigned char *raw;
	size_t rawoff, rawlen;
	/* Records written and not yet sent (under mu): a big write's records gather here and
	 * leave in a few sends (rc__tls_io), not one send a record; what the socket did not take
	 * waits here (rc__tls_unsent) and goes first with the next write or flush. */
	unsigned char *wbuf;
	size_t woff, wlen;
	atomic_size_t unsent; /* wlen - woff, for rc__tls_unsent without the mutex */
	bool gather; /* SSL_write_ex of a big message under way: its records gather in wbuf */
	size_t wcap; /* wbuf's size (the record layer's: it grows to RC__TLS_WBUF) */
	/* The record layer after the handshake (fast): SSL is no longer used for data. raw holds
	 * the records read; the plaintext of the last one opened in place waits at pt[0..ptlen). */
	bool fast;
	bool rbusy; /* under mu: the reader is reading the socket into raw's free end */
	atomic_size_t held; /* what rc__tls_pending says (plaintext waiting, or 1 for part of a
	                       record), kept by the reader for the others to read without mu */
	rc__tls_dir rx, tx;
	const EVP_CIPHER *cipher;
	const rc__tls_aead_impl *impl; /* cipher's provider entry points */
	const EVP_MD *md;
	unsigned char *pt;
	size_t ptlen;
	/* the traffic secrets the key log gave (client's, server's) and their length (0: none) */
	unsigned char csec[EVP_MAX_MD_SIZE], ssec[EVP_MAX_MD_SIZE];
	size_t csec_len, ssec_len;
};

/* ---- tls_ctx.c, for tls.c --------------------------------------------------------------- */

/* Record why an OpenSSL operation `what` failed in the thread's transport detail: the
 * certificate check's verdict if it failed, else the last queued OpenSSL reason, else that
 * the peer closed. Clears OpenSSL's error queue. */
void rc__tls_why(SSL *ssl, const char *what);
/* Milliseconds left until deadline (0: none -> -1, no limit); at least 1 while any is left,
 * 0 once it has passed. */
int rc__tls_ms_left(int64_t deadline);
/* Keep the identity of the verified client certificate (if any) in t: its subject in RFC
 * 2253 form and its subjectAltNames as text. Memory short: what could not be kept is left
 * out (the subject NULL, fewer names). */
void rc__tls_keep_peer(rc__tls_conn *t);

#endif

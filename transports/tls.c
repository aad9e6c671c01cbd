/*
 * RPC-over-TLS (RFC 9289) with OpenSSL 3, a connection: the handshake (blocking by a deadline
 * on the client, one non-blocking step at a time on the server) over contexts made by
 * tls_ctx.c (which also holds the client's AUTH_TLS probe), then the record layer run here (or
 * SSL_read / SSL_write) under the stream transport (stream.c).
 * See tls.h for the contracts and the thread rule.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/provider.h>
#include <openssl/hmac.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "transports/tls_priv.h"

static void rc__tls_take_over(rc__tls_conn *t);

#define RC__TLS_RAW_CAP (64 * 1024) /* what one blocking read takes from the socket at most */
#define RC__TLS_WBUF (256 * 1024)   /* records gathered for one send at most */
/* The smallest message whose records gather (rc__tls_write_some). Below it each record goes
 * as it is made: across cores the reader decrypts one while the writer encrypts the next, and
 * a 64 KiB echo took 25 % longer gathered (175 against 140 us); from 256 KiB up, fewer sends
 * and wake-ups win on one core and across two alike (1 MiB echo: 2,450 -> 1,950 us on one
 * core, 1,650 -> 1,200 us across two). */
#define RC__TLS_GATHER_MIN (256 * 1024)
#define RC__TLS_REC_MAX (16384 + 512) /* one TLS 1.3 record's bytes at most, with its overhead */

/*
 * The socket under SSL: OpenSSL's own socket BIO writes with write(), which raises SIGPIPE
 * on a connection the peer reset; this one sends with MSG_NOSIGNAL, as the plaintext stream
 * does, so a server never dies of a client that went away.
 */
static BIO_METHOD *rc__bio_method;
static pthread_once_t rc__bio_once = PTHREAD_ONCE_INIT;

/* Send what t->wbuf holds, without waiting (under t->mu): 0 when it is all out, 1 when the
 * socket is full, -1 on a socket error (errno kept). */
static int rc__tls_wflush(rc__tls_conn *t)
{
	while (t->wlen > t->woff) {
		ssize_t n = rc__sendto(t->fd, t->wbuf + t->woff, t->wlen - t->woff,
		                       MSG_NOSIGNAL | MSG_DONTWAIT, NULL, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? 1 : -1;
		}
		t->woff += (size_t)n;
		atomic_store_explicit(&t->unsent, t->wlen - t->woff, memory_order_relaxed);
	}
	t->woff = t->wlen = 0;
	atomic_store_explicit(&t->unsent, 0, memory_order_relaxed);
	return 0;
}

/* The BIO's write: a record of a big message gathers in t->wbuf, as does anything written
 * while older bytes wait there (order kept); else it is sent at once, without SIGPIPE. A full
 * socket (or a full wbuf) asks SSL to retry. */
static int rc__bio_write(BIO *b, const char *buf, int len)
{
	rc__tls_conn *t = BIO_get_data(b);
	ssize_t n;

	BIO_clear_retry_flags(b);
	if (t->gather || t->wlen > t->woff) {
		if (RC__TLS_WBUF - t->wlen < (size_t)len) {
			if (rc__tls_wflush(t) < 0)
				return -1;
			if (t->woff > 0) { /* what is left moves to the front */
				memmove(t->wbuf, t->wbuf + t->woff, t->wlen - t->woff);
				t->wlen -= t->woff;
				t->woff = 0;
			}
			if (RC__TLS_WBUF - t->wlen < (size_t)len) {
				BIO_set_retry_write(b);
				return -1;
			}
		}
		memcpy(t->wbuf + t->wlen, buf, (size_t)len);
		t->wlen += (size_t)len;
		atomic_store_explicit(&t->unsent, t->wlen - t->woff, memory_order_relaxed);
		return len;
	}
	n = rc__sendto(t->fd, buf, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT, NULL, 0);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		BIO_set_retry_write(b);
	return (int)n;
}

/* The BIO's read: the bytes a blocking read took first, then the socket; an empty socket asks
 * SSL to retry; 0 is the peer's end of stream. */
static int rc__bio_read(BIO *b, char *buf, int len)
{
	rc__tls_conn *t = BIO_get_data(b);
	ssize_t n;

	if (t->rawlen > t->rawoff) {
		size_t k = t->rawlen - t->rawoff < (size_t)len ? t->rawlen - t->rawoff : (size_t)len;
		memcpy(buf, t->raw + t->rawoff, k);
		t->rawoff += k;
		BIO_clear_retry_flags(b);
		return (int)k;
	}
	n = rc__recvfrom(t->fd, buf, (size_t)len, MSG_DONTWAIT, NULL, NULL);

	BIO_clear_retry_flags(b);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		BIO_set_retry_read(b);
	return (int)n;
}

/* The BIO's control: a flush sends what wbuf holds (a full socket asks SSL to retry);
 * nothing else is known. */
static long rc__bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	rc__tls_conn *t = BIO_get_data(b);
	int r;

	(void)num;
	(void)ptr;
	if (cmd != BIO_CTRL_FLUSH || t == NULL)
		return cmd == BIO_CTRL_FLUSH;
	BIO_clear_retry_flags(b);
	if ((r = rc__tls_wflush(t)) == 1)
		BIO_set_retry_write(b);
	return r == 0 ? 1 : -1;
}

/* The BIO's create: ready at once (the descriptor is set right after). */
static int rc__bio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

/* Make the BIO method once (pthread_once); rc__bio_method stays NULL if memory is short. */
static void rc__bio_init(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "rc_socket");

	if (m == NULL)
		return;
	if (!BIO_meth_set_write(m, rc__bio_write) || !BIO_meth_set_read(m, rc__bio_read) ||
	    !BIO_meth_set_ctrl(m, rc__bio_ctrl) || !BIO_meth_set_create(m, rc__bio_create)) {
		BIO_meth_free(m);
		return;
	}
	rc__bio_method = m;
}

/* A connection on fd for ctx, its SSL made over an rc_socket BIO; NULL if memory is short. */
static rc__tls_conn *rc__tls_conn_new(rc__tls_ctx *ctx, int fd)
{
	rc__tls_conn *t = calloc(1, sizeof(*t));
	BIO *b;

	pthread_once(&rc__bio_once, rc__bio_init);
	if (t == NULL || rc__bio_method == NULL)
		goto fail;
	if ((t->ssl = SSL_new(ctx->ctx)) == NULL || (b = BIO_new(rc__bio_method)) == NULL)
		goto fail;
	BIO_set_data(b, t);
	SSL_set_bio(t->ssl, b, b); /* t->ssl owns b */
	SSL_set_app_data(t->ssl, t); /* for the key log (rc__tls_keylog) */
	pthread_mutex_init(&t->mu, NULL);
	t->fd = fd;
	t->ctx = ctx;
	return t;
fail:
	if (t != NULL)
		SSL_free(t->ssl);
	free(t);
	return NULL;
}

/* tls.h */
rc_status rc__tls_connect(rc__tls_ctx *ctx, int fd, const char *name, int64_t deadline,
                          rc__tls_conn **out)
{
	rc__tls_conn *t;
	unsigned char ip[16];
	const char *vn = ctx->name[0] != '\0' ? ctx->name : name;

	*out = NULL;
	if ((t = rc__tls_conn_new(ctx, fd)) == NULL)
		return RC_NOMEM;
	SSL_set_connect_state(t->ssl);
	if (inet_pton(AF_INET, vn, ip) == 1 || inet_pton(AF_INET6, vn, ip) == 1) {
		if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(t->ssl), vn) != 1)
			goto nomem;
	} else if (SSL_set1_host(t->ssl, vn) != 1 || SSL_set_tlsext_host_name(t->ssl, vn) != 1) {
		goto nomem;
	}
	for (;;) {
		int r, e, ms;

		ERR_clear_error();
		if ((r = SSL_do_handshake(t->ssl)) == 1)
			break;
		e = SSL_get_error(t->ssl, r);
		if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
			rc__tls_why(t->ssl, "TLS handshake");
			rc__tls_close(t);
			errno = EPROTO;
			return RC_TLSFAILED;
		}
		if ((ms = rc__tls_ms_left(deadline)) == 0 ||
		    !rc__sock_wait(fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, ms)) {
			rc__tp_set_detail("TLS handshake: timed out");
			rc__tls_close(t);
			errno = ETIMEDOUT;
			return RC_TIMEDOUT;
		}
	}
	rc__tls_take_over(t); /* the record layer from now on, if it can */
	*out = t;
	return RC_OK;
nomem:
	rc__tls_close(t);
	return RC_NOMEM;
}

/* tls.h */
rc_status rc__tls_accept(rc__tls_ctx *ctx, int fd, rc__tls_conn **out)
{
	rc__tls_conn *t;

	*out = NULL;
	if (atomic_fetch_add(&ctx->handshakes, 1) >= ctx->max_handshakes) {
		atomic_fetch_sub(&ctx->handshakes, 1);
		return RC_TOOMANY;
	}
	if ((t = rc__tls_conn_new(ctx, fd)) == NULL) {
		atomic_fetch_sub(&ctx->handshakes, 1);
		return RC_NOMEM;
	}
	SSL_set_accept_state(t->ssl);
	t->handshaking = true;
	*out = t;
	return RC_OK;
}

/* tls.h */
int rc__tls_handshake(rc__tls_conn *t)
{
	int r, e;

	if (!t->handshaking)
		return 1;
	pthread_mutex_lock(&t->mu);
	ERR_clear_error();
	r = SSL_do_handshake(t->ssl);
	e = r == 1 ? SSL_ERROR_NONE : SSL_get_error(t->ssl, r);
	t->want_write = e == SSL_ERROR_WANT_WRITE;
	if (r == 1) {
		t->handshaking = false;
		atomic_fetch_sub(&t->ctx->handshakes, 1);
		rc__tls_keep_peer(t);
		rc__tls_take_over(t);
	} else if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
		rc__tls_why(t->ssl, "TLS handshake");
		r = -1;
	} else {
		r = 0;
	}
	pthread_mutex_unlock(&t->mu);
	return r;
}

/* tls.h */
bool rc__tls_handshaking(const rc__tls_conn *t)
{
	return t->handshaking;
}

/* tls.h */
bool rc__tls_wants_write(const rc__tls_conn *t)
{
	return t->handshaking && t->want_write;
}

/*
 * A write failed on the socket (the peer reset the connection): if the peer said why before
 * it went -- a TLS alert, e.g. "certificate required" after a TLS 1.3 handshake the client
 * thought done -- read it, so that the failure carries the reason. Returns SSL_ERROR_SSL
 * when an alert was there, else SSL_ERROR_SYSCALL (errno kept). Under t->mu.
 */
static int rc__tls_alert(rc__tls_conn *t)
{
	int saved = errno, e;
	unsigned char b[256];
	size_t got;

	ERR_clear_error();
	e = SSL_read_ex(t->ssl, b, sizeof(b), &got) == 1 ? SSL_ERROR_NONE
	                                                  : SSL_get_error(t->ssl, 0);
	if (e == SSL_ERROR_SSL)
		return e;
	ERR_clear_error();
	errno = saved;
	return SSL_ERROR_SYSCALL;
}

/* A blocking read's wait: up to RC__TLS_RAW_CAP bytes from the socket into t->raw (empty, not
 * under the mutex: only the one reader fills it), blocking up to the socket's receive timeout
 * (which the stream set to the read's timeout: rc__tp_set_rcvtimeo). Their count; 0 at the
 * peer's end of stream; -1 with errno (EAGAIN when the time is up). */
static ssize_t rc__tls_wait_read(rc__tls_conn *t)
{
	ssize_t got = rc__recvfrom(t->fd, t->raw, RC__TLS_RAW_CAP, 0, NULL, NULL);

	if (got < 0) {
		if (errno == EINTR || errno == EWOULDBLOCK)
			errno = EAGAIN;
		return -1;
	}
	pthread_mutex_lock(&t->mu);
	t->rawoff = 0;
	t->rawlen = (size_t)got;
	pthread_mutex_unlock(&t->mu);
	return got;
}

/*
 * SSL_write_ex of buf[0..n) under t->mu. A big message (RC__TLS_GATHER_MIN) gathers its
 * records in t->wbuf while it has room for another, then sends them in one go (one send for
 * up to 256 KiB, not one a record: fewer system calls, and a reader woken fewer times). *done: the
 * bytes SSL took; those of them the socket did not take wait in wbuf (rc__tls_unsent). The
 * SSL_ERROR_* of the write (NONE when some were taken); SSL_ERROR_SYSCALL with errno when the
 * socket failed.
 */
static int rc__tls_write_some(rc__tls_conn *t, const unsigned char *buf, size_t n,
                              size_t *done)
{
	size_t d;
	int r, e = SSL_ERROR_NONE;

	*done = 0;
	if (n >= RC__TLS_GATHER_MIN &&
	    (t->wbuf != NULL || (t->wbuf = malloc(RC__TLS_WBUF)) != NULL)) {
		t->wcap = RC__TLS_WBUF;
		t->gather = true;
	}
	do {
		r = SSL_write_ex(t->ssl, buf + *done, n - *done, &d);
		if (r != 1) {
			e = SSL_get_error(t->ssl, r);
			break;
		}
		*done += d;
	} while (t->gather && *done < n && RC__TLS_WBUF - t->wlen >= RC__TLS_REC_MAX);
	t->gather = false;
	if (*done > 0 && (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ)) {
		e = SSL_ERROR_NONE; /* what was taken counts */
		ERR_clear_error();
	}
	if (e == SSL_ERROR_NONE && t->wlen > t->woff && rc__tls_wflush(t) < 0)
		e = SSL_ERROR_SYSCALL;
	return e;
}

/* Wait until t's socket is ready for ev (POLLIN / POLLOUT), at most until deadline when
 * timeout_ms > 0 (0: not at all; negative: no limit). True when it is; false with errno
 * EAGAIN (the time is up, or a signal) or poll's error. Not under t->mu. */
static bool rc__tls_wait(rc__tls_conn *t, short ev, int64_t deadline, int timeout_ms)
{
	int ms = timeout_ms == 0 ? 0 : timeout_ms < 0 ? -1 : rc__tls_ms_left(deadline);

	if (ms != 0 && rc__sock_wait(t->fd, ev, ms))
		return true;
	if (ms == 0 || errno == EINTR)
		errno = EAGAIN;
	return false;
}

/* Wait for room on the socket (see rc__tls_wait) and send what wbuf holds, until it is all
 * out: 0, or -1 with errno (EAGAIN: the time is up). Not under t->mu. */
static int rc__tls_drain(rc__tls_conn *t, int64_t deadline, int timeout_ms)
{
	for (;;) {
		int f;

		pthread_mutex_lock(&t->mu);
		f = t->failed != 0 ? -1 : rc__tls_wflush(t);
		if (f < 0 && t->failed == 0)
			t->failed = errno;
		if (f < 0)
			errno = t->failed;
		pthread_mutex_unlock(&t->mu);
		if (f <= 0)
			return f;
		if (!rc__tls_wait(t, POLLOUT, deadline, timeout_ms))
			return -1;
	}
}

/* ---- The record layer ---------------------------------------------------------------------
 *
 * Once the handshake is done, remotecall protects and opens TLS 1.3 records itself (RFC 8446
 * section 5) with the traffic secrets OpenSSL's key log gave, as the kernel's TLS offload
 * does: OpenSSL 3.0's SSL_write / SSL_read spend about 6,000 instructions a small record
 * around the cipher (parameter look-ups by name, per-record allocation, the state machine,
 * BIO layers), this about 2,000. The three TLS 1.3 AEAD suites (AES-128-GCM, AES-256-GCM,
 * ChaCha20-Poly1305) through one provider cipher context a direction (the provider's entry
 * points called directly: rc__tls_impl_find), keyed once; per record only the
 * nonce changes. After the handshake it handles application data, alerts (a protected
 * close_notify is the end of the stream, any other fails the connection with its name),
 * NewSessionTicket (ignored) and KeyUpdate (both directions, RFC 8446 section 4.6.3); a
 * handshake message split across records, an unprotected record (a plaintext alert, even a
 * close_notify), or anything else fails the connection, and a fault of the peer's is answered
 * with the fatal alert RFC 8446 section 6 names (bad_record_mac, record_overflow,
 * decode_error, unexpected_message...), protected, before the connection closes (see
 * rc__tls_rfail). Without the secrets (or with any
 * other suite, or bytes SSL read past its handshake) the connection stays on SSL_read /
 * SSL_write. The same keys are what kernel TLS offload (setsockopt TLS_TX / TLS_RX) would take.
 */

#define RC__TLS_REC_PT 16384   /* plaintext of one record at most */
#define RC__TLS_TAG 16
#define RC__TLS_REC_OVER (5 + 1 + RC__TLS_TAG) /* header, content type, tag */

/* HKDF-Expand-Label(secret, label, "", n) of RFC 8446 section 7.1, n <= the hash's size. */
static bool rc__tls_expand(const EVP_MD *md, const unsigned char *secret, size_t slen,
                           const char *label, unsigned char *out, size_t n)
{
	unsigned char info[64], h[EVP_MAX_MD_SIZE];
	size_t ll = strlen(label), k = 0;
	unsigned hl = 0;

	info[k++] = (unsigned char)(n >> 8);
	info[k++] = (unsigned char)n;
	info[k++] = (unsigned char)(6 + ll);
	memcpy(info + k, "tls13 ", 6);
	memcpy(info + k + 6, label, ll);
	k += 6 + ll;
	info[k++] = 0; /* no context */
	info[k++] = 1; /* T(1): n is at most one block */
	if (HMAC(md, secret, (int)slen, info, k, h, &hl) == NULL || hl < n)
		return false;
	memcpy(out, h, n);
	OPENSSL_cleanse(h, sizeof(h));
	return true;
}

/* Key direction d from its traffic secret (d->secret, the hash's size): key and IV, the
 * sequence back to 0; enc: protecting (else opening). False if OpenSSL fails. */
static bool rc__tls_dir_key(rc__tls_conn *t, rc__tls_dir *d, int enc)
{
	unsigned char key[32];
	size_t hl = (size_t)EVP_MD_get_size(t->md), kl = (size_t)EVP_CIPHER_get_key_length(t->cipher);
	bool ok;

	d->im = t->impl;
	d->enc = enc != 0;
	if (d->actx == NULL && (d->actx = d->im->newctx(d->im->provctx)) == NULL)
		return false;
	ok = kl <= sizeof(key) && rc__tls_expand(t->md, d->secret, hl, "key", key, kl) &&
	     rc__tls_expand(t->md, d->secret, hl, "iv", d->iv, 12) &&
	     (enc ? d->im->einit : d->im->dinit)(d->actx, key, kl, NULL, 0, NULL) == 1;
	OPENSSL_cleanse(key, sizeof(key));
	d->seq = 0;
	return ok;
}

/* The next traffic secret of d (a KeyUpdate), keyed. */
static bool rc__tls_dir_next(rc__tls_conn *t, rc__tls_dir *d, int enc)
{
	size_t hl = (size_t)EVP_MD_get_size(t->md);
	unsigned char next[EVP_MAX_MD_SIZE];

	if (!rc__tls_expand(t->md, d->secret, hl, "traffic upd", next, hl))
		return false;
	memcpy(d->secret, next, hl);
	OPENSSL_cleanse(next, sizeof(next));
	return rc__tls_dir_key(t, d, enc);
}

/* The nonce of d's next record: the IV xor the sequence number (RFC 8446 section 5.3). */
static void rc__tls_nonce(rc__tls_dir *d, unsigned char nonce[12])
{
	memcpy(nonce, d->iv, 12);
	for (int i = 0; i < 8; i++)
		nonce[11 - i] ^= (unsigned char)(d->seq >> (8 * i));
}

/*
 * Set the nonce of d's next record, and (opening) the tag to check, in one call of the
 * provider's init (no key: it keeps the one it has): it copies the nonce and looks up the one
 * parameter it is given. Through EVP this cost about 450 instructions more a record (the
 * parameter look-ups by name of EVP_CIPHER_CTX_set_params around the provider's, and of
 * EVP_CipherInit's question for the IV length). False if the provider fails.
 */
static bool rc__tls_set_nonce(rc__tls_dir *d, const unsigned char *tag)
{
	unsigned char nonce[12];
	OSSL_PARAM p[2] = {OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, (void *)tag,
	                                           RC__TLS_TAG),
	                   OSSL_PARAM_END};

	rc__tls_nonce(d, nonce);
	return (d->enc ? d->im->einit : d->im->dinit)(d->actx, NULL, 0, nonce, sizeof(nonce),
	                                              tag != NULL ? p : NULL) == 1;
}

/*
 * The AEAD pass over a record whose nonce (and tag to check) is set: the 5 bytes of additional
 * data at aad, n bytes from in to out, and the end (the tag made, or checked: a final that
 * fails is a tag that does not match), through the provider's update and final (what
 * EVP_CipherUpdate and EVP_CipherFinal_ex call, without their checks around them). False if
 * the cipher fails or the tag does not match.
 */
static bool rc__tls_aead(rc__tls_dir *d, const unsigned char *aad, const unsigned char *in,
                         unsigned char *out, size_t n)
{
	size_t ol = 0, fl = 0;

	return d->im->update(d->actx, NULL, &ol, 5, aad, 5) == 1 &&
	       d->im->update(d->actx, out, &ol, n, in, n) == 1 && ol == n &&
	       d->im->final(d->actx, out + n, &fl, 0) == 1 && fl == 0;
}

/* Protect p[0..n) (n <= RC__TLS_REC_PT) of content type `type` as one record at out (n +
 * RC__TLS_REC_OVER bytes; p may not overlap it). False if the cipher fails. */
static bool rc__tls_seal(rc__tls_dir *d, unsigned char type, const unsigned char *p, size_t n,
                         unsigned char *out)
{
	size_t clen = n + 1 + RC__TLS_TAG;

	out[0] = 23, out[1] = 3, out[2] = 3; /* application_data, TLS 1.2 (legacy) */
	out[3] = (unsigned char)(clen >> 8), out[4] = (unsigned char)clen;
	memcpy(out + 5, p, n);
	out[5 + n] = type;
	OSSL_PARAM tag[2] = {OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, out + 5 + n + 1,
	                                             RC__TLS_TAG),
	                     OSSL_PARAM_END};

	if (!rc__tls_set_nonce(d, NULL) || !rc__tls_aead(d, out, out + 5, out + 5, n + 1) ||
	    d->im->get(d->actx, tag) != 1)
		return false;
	d->seq++;
	return true;
}

/* Room for need more bytes at the end of t->wbuf (compacting, or growing it up to
 * RC__TLS_WBUF). False if there is none (the socket has not taken enough) or memory is short. */
static bool rc__tls_wroom(rc__tls_conn *t, size_t need)
{
	if (t->wcap - t->wlen >= need)
		return true;
	if (t->woff > 0) { /* what is left moves to the front */
		memmove(t->wbuf, t->wbuf + t->woff, t->wlen - t->woff);
		t->wlen -= t->woff;
		t->woff = 0;
		if (t->wcap - t->wlen >= need)
			return true;
	}
	if (t->wcap < RC__TLS_WBUF && t->wlen + need <= RC__TLS_WBUF) {
		size_t ncap = t->wlen + need <= 20 * 1024 ? 20 * 1024 : RC__TLS_WBUF;
		unsigned char *nb = realloc(t->wbuf, ncap);
		if (nb == NULL)
			return false;
		t->wbuf = nb;
		t->wcap = ncap;
		return true;
	}
	return false;
}

/* Application data records one key protects before ours is updated (RFC 8446 section 5.5:
 * AES-GCM keys protect at most 2^24.5 full-size records; the same bound serves the other
 * suites). rc__tls_set_key_records lowers it for tests. */
static uint64_t rc__tls_key_records = (uint64_t)1 << 24;

void rc__tls_set_key_records(uint64_t n)
{
	rc__tls_key_records = n > 0 && n <= (uint64_t)1 << 24 ? n : (uint64_t)1 << 24;
}

/* Protect one record of type `type` with p[0..n) behind what wbuf holds (first a KeyUpdate
 * and our next key, when application data has used up this one: rc__tls_key_records). False (errno
 * EAGAIN) when wbuf has no room; false with t->failed set if the cipher fails. Under t->mu. */
static bool rc__tls_put(rc__tls_conn *t, unsigned char type, const unsigned char *p, size_t n)
{
	static const unsigned char ku[5] = {24, 0, 0, 1, 0}; /* KeyUpdate, update_not_requested */
	bool rekey = type == 23 && t->tx.seq >= rc__tls_key_records, ok = true;

	if (!rc__tls_wroom(t, n + RC__TLS_REC_OVER + (rekey ? sizeof(ku) + RC__TLS_REC_OVER : 0))) {
		errno = EAGAIN;
		return false;
	}
	if (rekey && (ok = rc__tls_seal(&t->tx, 22, ku, sizeof(ku), t->wbuf + t->wlen))) {
		t->wlen += sizeof(ku) + RC__TLS_REC_OVER;
		ok = rc__tls_dir_next(t, &t->tx, 1);
	}
	if (!ok || !rc__tls_seal(&t->tx, type, p, n, t->wbuf + t->wlen)) {
		rc__tp_set_detail("TLS write: cipher failed");
		ERR_clear_error();
		t->failed = errno = EPROTO;
		return false;
	}
	t->wlen += n + RC__TLS_REC_OVER;
	atomic_store_explicit(&t->unsent, t->wlen - t->woff, memory_order_relaxed);
	return true;
}

/* The name of TLS alert description d (RFC 8446 section 6), for a failure's detail. */
static const char *rc__tls_alert_name(unsigned d)
{
	static const struct {
		unsigned char d;
		const char *name;
	} names[] = {{10, "unexpected message"}, {20, "bad record mac"}, {22, "record overflow"},
	             {40, "handshake failure"}, {42, "bad certificate"},
	             {43, "unsupported certificate"}, {44, "certificate revoked"},
	             {45, "certificate expired"}, {46, "certificate unknown"},
	             {47, "illegal parameter"}, {48, "unknown ca"}, {49, "access denied"},
	             {50, "decode error"}, {51, "decrypt error"}, {70, "protocol version"},
	             {71, "insufficient security"}, {80, "internal error"}, {90, "user canceled"},
	             {109, "missing extension"}, {110, "unsupported extension"},
	             {112, "unrecognized name"}, {116, "certificate required"},
	             {120, "no application protocol"}};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].d == d)
			return names[i].name;
	return "unknown";
}

/* TLS alert descriptions this record layer sends (RFC 8446 section 6.2). */
enum {
	RC__TLS_AD_UNEXPECTED_MESSAGE = 10,
	RC__TLS_AD_BAD_RECORD_MAC = 20,
	RC__TLS_AD_RECORD_OVERFLOW = 22,
	RC__TLS_AD_ILLEGAL_PARAMETER = 47,
	RC__TLS_AD_DECODE_ERROR = 50,
	RC__TLS_AD_INTERNAL_ERROR = 80,
};

/*
 * The record layer failed reading: the detail (why, or the peer's alert `got` when why is
 * NULL), then -- when we found the fault (send != 0) -- a fatal alert `send`, protected as
 * every record after the handshake is (RFC 8446 sections 5.2 and 6), sent if the socket
 * takes it now (no waiting; a full socket or wbuf goes without it); t->failed = EPROTO, so
 * nothing more is written (no close_notify after it). -1, errno EPROTO. Under t->mu.
 */
static int rc__tls_rfail(rc__tls_conn *t, const char *why, unsigned got, unsigned send)
{
	if (send != 0 && t->failed == 0) {
		const unsigned char a[2] = {2, (unsigned char)send}; /* fatal */
		if (rc__tls_put(t, 21, a, sizeof(a)))
			(void)rc__tls_wflush(t);
		ERR_clear_error();
	}
	if (why != NULL)
		rc__tp_set_detail("TLS read: %s", why);
	else
		rc__tp_set_detail("TLS read: tls alert %s (%u)", rc__tls_alert_name(got), got);
	t->failed = EPROTO;
	errno = EPROTO;
	return -1;
}

/* Post-handshake messages m[0..n) of one record: NewSessionTicket is ignored, KeyUpdate
 * changes the reading key (and, if the peer asks, ours after telling it). 0, or -1 failed. */
static int rc__tls_post_handshake(rc__tls_conn *t, const unsigned char *m, size_t n)
{
	while (n > 0) {
		size_t len;

		if (n < 4 || (len = ((size_t)m[1] << 16) | ((size_t)m[2] << 8) | m[3]) > n - 4)
			return rc__tls_rfail(t, "handshake message split across records", 0,
			                     RC__TLS_AD_INTERNAL_ERROR);
		if (m[0] == 24) { /* KeyUpdate */
			static const unsigned char ku[5] = {24, 0, 0, 1, 0}; /* update_not_requested */
			if (len != 1)
				return rc__tls_rfail(t, "bad KeyUpdate", 0, RC__TLS_AD_DECODE_ERROR);
			if (m[4] > 1)
				return rc__tls_rfail(t, "bad KeyUpdate", 0, RC__TLS_AD_ILLEGAL_PARAMETER);
			if (!rc__tls_dir_next(t, &t->rx, 0))
				return rc__tls_rfail(t, "KeyUpdate failed", 0, RC__TLS_AD_INTERNAL_ERROR);
			if (m[4] == 1) { /* update_requested: ours goes out under the old key */
				if (!rc__tls_put(t, 22, ku, sizeof(ku)) || !rc__tls_dir_next(t, &t->tx, 1))
					return rc__tls_rfail(t, "KeyUpdate failed", 0, 0); /* (tx failed) */
				(void)rc__tls_wflush(t);
			}
		} else if (m[0] != 4) { /* not NewSessionTicket */
			return rc__tls_rfail(t, "unexpected handshake message", 0,
			                     RC__TLS_AD_UNEXPECTED_MESSAGE);
		}
		m += 4 + len;
		n -= 4 + len;
	}
	return 0;
}

/*
 * Open the next whole record in t->raw: its application data goes to buf[0..cap) when it fits
 * (else it is opened in place and waits at t->pt). The bytes put in buf (0: none there -- at
 * t->pt, or a record with no data for the caller, so look again); -2 when no whole record is
 * held; -1 failed (t->failed, the detail); and for close_notify -3. Under t->mu.
 */
static ssize_t rc__tls_open(rc__tls_conn *t, unsigned char *buf, size_t cap)
{
	unsigned char *h = t->raw + t->rawoff, *dst;
	size_t have = t->rawlen - t->rawoff, clen, n;

	if (have < 5)
		return -2;
	clen = ((size_t)h[3] << 8) | h[4];
	/* After the handshake every record is protected: outer type application_data (RFC 8446
	 * section 5.2; legacy_record_version is ignored, as section 5.1 says: it is part of the
	 * additional data all the same). An alert in the clear -- a close_notify too -- is no end
	 * of the stream but unexpected_message, as any other unprotected record is. */
	if (h[0] != 23)
		return rc__tls_rfail(t, h[0] == 21 ? "unprotected alert after the handshake"
		                                   : "unexpected record",
		                     0, RC__TLS_AD_UNEXPECTED_MESSAGE);
	if (clen > RC__TLS_REC_PT + 256)
		return rc__tls_rfail(t, "record overflow", 0, RC__TLS_AD_RECORD_OVERFLOW);
	if (have < 5 + clen)
		return -2;
	t->rawoff += 5 + clen;
	if (clen < 1 + RC__TLS_TAG) /* too short to open: it fails as a bad MAC would */
		return rc__tls_rfail(t, "record too short", 0, RC__TLS_AD_BAD_RECORD_MAC);
	n = clen - RC__TLS_TAG;
	dst = n <= cap ? buf : h + 5;
	if (!rc__tls_set_nonce(&t->rx, h + 5 + n) || !rc__tls_aead(&t->rx, h, h + 5, dst, n)) {
		ERR_clear_error();
		return rc__tls_rfail(t, "bad record mac", 0, RC__TLS_AD_BAD_RECORD_MAC);
	}
	t->rx.seq++;
	while (n > 0 && dst[n - 1] == 0) /* padding */
		n--;
	if (n == 0)
		return rc__tls_rfail(t, "record without a content type", 0,
		                     RC__TLS_AD_UNEXPECTED_MESSAGE);
	if (n > RC__TLS_REC_PT + 1)
		return rc__tls_rfail(t, "record overflow", 0, RC__TLS_AD_RECORD_OVERFLOW);
	n--;
	switch (dst[n]) {
	case 23: /* application_data */
		if (dst == buf)
			return (ssize_t)n;
		t->pt = dst;
		t->ptlen = n;
		return 0;
	case 21: /* alert: the peer's close_notify ends the stream, any other fails it */
		if (n != 2)
			return rc__tls_rfail(t, "bad alert", 0, RC__TLS_AD_DECODE_ERROR);
		return dst[1] == 0 ? -3 : rc__tls_rfail(t, NULL, dst[1], 0);
	case 22:
		return rc__tls_post_handshake(t, dst, n) < 0 ? -1 : 0;
	default:
		return rc__tls_rfail(t, "unexpected record", 0, RC__TLS_AD_UNEXPECTED_MESSAGE);
	}
}

/*
 * A send failed with errno e (the peer reset the connection): if the peer said why before it
 * went (an alert -- "certificate required" after a TLS 1.3 handshake the client thought
 * done), the failure is EPROTO with that reason, else e. Reads what the socket still holds
 * unless the reader is reading it. Sets t->failed. Under t->mu.
 */
static void rc__tls_why_reset(rc__tls_conn *t, int e)
{
	ssize_t r;

	if (!t->rbusy && t->ptlen == 0) {
		if (t->rawoff == t->rawlen)
			t->rawoff = t->rawlen = 0;
		if (t->rawlen < RC__TLS_RAW_CAP) {
			ssize_t got = rc__recvfrom(t->fd, t->raw + t->rawlen, RC__TLS_RAW_CAP - t->rawlen,
			                           MSG_DONTWAIT, NULL, NULL);
			if (got > 0)
				t->rawlen += (size_t)got;
		}
	}
	while (t->ptlen == 0 && (r = rc__tls_open(t, NULL, 0)) >= 0)
		;
	if (t->failed == 0)
		t->failed = e;
	atomic_store_explicit(&t->held, t->ptlen > 0 ? t->ptlen : t->rawlen > t->rawoff ? 1 : 0,
	                      memory_order_relaxed);
}

/* The record layer's read (rc__tls_io's, see rc__tls_read): what is opened already, else the
 * next records, reading the socket -- without the mutex, into raw's free end, which only this
 * one reader touches -- as needed. */
static ssize_t rc__tls_fast_read(rc__tls_conn *t, unsigned char *buf, size_t n, int timeout_ms)
{
	ssize_t r;

	pthread_mutex_lock(&t->mu);
	for (;;) {
		ssize_t got;
		size_t room;

		if (t->failed != 0) {
			errno = t->failed;
			r = errno == EPIPE ? 0 : -1;
			break;
		}
		if (t->ptlen > 0) {
			size_t k = t->ptlen < n ? t->ptlen : n;
			memcpy(buf, t->pt, k);
			t->pt += k;
			t->ptlen -= k;
			r = (ssize_t)k;
			break;
		}
		r = rc__tls_open(t, buf, n);
		if (r != -2 && t->wlen > t->woff) /* a KeyUpdate of ours behind some */
			(void)rc__tls_wflush(t);
		if (r == -3) { /* close_notify */
			t->failed = EPIPE;
			r = 0;
			break;
		}
		if (r != -2) {
			if (r != 0)
				break;
			continue; /* data waits at pt, or the record had none for the caller */
		}
		/* no whole record: make room at raw's end for the rest of it */
		if (t->rawoff == t->rawlen) {
			t->rawoff = t->rawlen = 0;
		} else if (RC__TLS_RAW_CAP - t->rawoff < 5 + RC__TLS_REC_PT + 256) {
			memmove(t->raw, t->raw + t->rawoff, t->rawlen - t->rawoff);
			t->rawlen -= t->rawoff;
			t->rawoff = 0;
		}
		room = RC__TLS_RAW_CAP - t->rawlen;
		t->rbusy = true;
		atomic_store_explicit(&t->held, t->rawlen > t->rawoff ? 1 : 0, memory_order_relaxed);
		pthread_mutex_unlock(&t->mu);
		got = rc__recvfrom(t->fd, t->raw + t->rawlen, room, timeout_ms == 0 ? MSG_DONTWAIT : 0,
		                   NULL, NULL);
		pthread_mutex_lock(&t->mu);
		t->rbusy = false;
		if (got > 0) {
			t->rawlen += (size_t)got;
			continue;
		}
		if (got == 0) {
			r = 0; /* the end of the stream (a truncation is caught by record marking) */
		} else {
			if (errno == EINTR || errno == EWOULDBLOCK)
				errno = EAGAIN;
			r = -1;
		}
		break;
	}
	atomic_store_explicit(&t->held, t->ptlen > 0 ? t->ptlen : t->rawlen > t->rawoff ? 1 : 0,
	                      memory_order_relaxed);
	pthread_mutex_unlock(&t->mu);
	return r;
}

/* The record layer's write (see rc__tls_write): records of buf[0..n) behind what waits in
 * wbuf, as many as it has room for; each sent as it is made, unless the message is big
 * (RC__TLS_GATHER_MIN: they leave together); waiting (timeout_ms != 0) until all are out. */
static ssize_t rc__tls_fast_write(rc__tls_conn *t, const unsigned char *buf, size_t n,
                                  int timeout_ms)
{
	int64_t deadline = timeout_ms > 0 ? (int64_t)rc__clock_ns() + timeout_ms * 1000000LL : 0;
	bool gather = n >= RC__TLS_GATHER_MIN, out;
	size_t done = 0;
	int f = 0;

	for (;;) {
		pthread_mutex_lock(&t->mu);
		while (t->failed == 0 && f >= 0) {
			while (done < n) {
				size_t k = n - done < RC__TLS_REC_PT ? n - done : RC__TLS_REC_PT;
				if (!rc__tls_put(t, 23, buf + done, k))
					break;
				done += k;
				if (!gather && (f = rc__tls_wflush(t)) < 0)
					break;
			}
			if (t->failed != 0 || f < 0 || (f = rc__tls_wflush(t)) != 0 || done == n)
				break; /* failed, the socket is full, or all is out */
		}
		if (t->failed == 0 && f < 0)
			rc__tls_why_reset(t, errno);
		if (t->failed != 0) {
			errno = t->failed;
			pthread_mutex_unlock(&t->mu);
			return -1;
		}
		out = t->wlen == t->woff; /* all sent: nothing to drain */
		pthread_mutex_unlock(&t->mu);
		if (timeout_ms != 0 && !out && rc__tls_drain(t, deadline, timeout_ms) < 0)
			return done > 0 && errno == EAGAIN ? (ssize_t)done : -1;
		if (done > 0)
			return (ssize_t)done;
		if (timeout_ms == 0) {
			errno = EAGAIN;
			return -1;
		}
		f = 0; /* drained: room again */
	}
}

/* The three suites' ciphers, by the names rc__tls_take_over's switch numbers them. */
static const char *const rc__tls_impl_names[3] = {"AES-128-GCM", "AES-256-GCM",
                                                  "ChaCha20-Poly1305"};
static rc__tls_aead_impl rc__tls_impls[3];
static pthread_once_t rc__tls_impls_once = PTHREAD_ONCE_INIT;

/* Whether name is one of names (a provider's "A:B:C" list, compared as OpenSSL does,
 * ignoring case). */
static bool rc__tls_name_in(const char *names, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = names; p != NULL; p = strchr(p, ':'), p = p != NULL ? p + 1 : NULL)
		if (strncasecmp(p, name, n) == 0 && (p[n] == '\0' || p[n] == ':'))
			return true;
	return false;
}

/*
 * Find the provider entry points of cipher `name` (rc__tls_aead_impl): fetch it as EVP would
 * (the default library context and properties, so the provider EVP would use), ask that
 * provider for its cipher table (OSSL_PROVIDER_query_operation) and take the entry of that
 * name. *im is left zero unless every entry point the record layer calls is there.
 */
static void rc__tls_impl_find(rc__tls_aead_impl *im, const char *name)
{
	EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, name, NULL);
	const OSSL_PROVIDER *prov = c != NULL ? EVP_CIPHER_get0_provider(c) : NULL;
	const OSSL_ALGORITHM *algs = NULL;
	rc__tls_aead_impl f = {0};
	int no_store = 0;

	if (prov != NULL)
		algs = OSSL_PROVIDER_query_operation(prov, OSSL_OP_CIPHER, &no_store);
	for (const OSSL_ALGORITHM *a = algs; a != NULL && a->algorithm_names != NULL; a++) {
		if (!rc__tls_name_in(a->algorithm_names, name))
			continue;
		for (const OSSL_DISPATCH *d = a->implementation; d->function_id != 0; d++) {
			switch (d->function_id) {
			case OSSL_FUNC_CIPHER_NEWCTX: f.newctx = OSSL_FUNC_cipher_newctx(d); break;
			case OSSL_FUNC_CIPHER_FREECTX: f.freectx = OSSL_FUNC_cipher_freectx(d); break;
			case OSSL_FUNC_CIPHER_ENCRYPT_INIT: f.einit = OSSL_FUNC_cipher_encrypt_init(d); break;
			case OSSL_FUNC_CIPHER_DECRYPT_INIT: f.dinit = OSSL_FUNC_cipher_decrypt_init(d); break;
			case OSSL_FUNC_CIPHER_UPDATE: f.update = OSSL_FUNC_cipher_update(d); break;
			case OSSL_FUNC_CIPHER_FINAL: f.final = OSSL_FUNC_cipher_final(d); break;
			case OSSL_FUNC_CIPHER_GET_CTX_PARAMS:
				f.get = OSSL_FUNC_cipher_get_ctx_params(d);
				break;
			default: break;
			}
		}
		break;
	}
	if (algs != NULL)
		OSSL_PROVIDER_unquery_operation(prov, OSSL_OP_CIPHER, algs);
	if (f.newctx != NULL && f.freectx != NULL && f.einit != NULL && f.dinit != NULL &&
	    f.update != NULL && f.final != NULL && f.get != NULL) {
		f.cipher = c;
		f.provctx = OSSL_PROVIDER_get0_provider_ctx(prov);
		*im = f;
	} else {
		EVP_CIPHER_free(c);
	}
	ERR_clear_error();
}

static void rc__tls_impls_find(void)
{
	for (int k = 0; k < 3; k++)
		rc__tls_impl_find(&rc__tls_impls[k], rc__tls_impl_names[k]);
}

/* Hand t over to the record layer once its handshake is done, if it can be (the secrets are
 * known, the suite is one of the three, SSL holds nothing read past the handshake); SSL keeps
 * no buffers then. Under t->mu or before t is shared. */
static void rc__tls_take_over(rc__tls_conn *t)
{
	const SSL_CIPHER *c = SSL_get_current_cipher(t->ssl);
	uint32_t id = c != NULL ? (uint32_t)SSL_CIPHER_get_id(c) : 0;
	bool server = SSL_is_server(t->ssl) != 0;
	size_t hl;

	int k;

	switch (id) {
	case 0x03001301: t->cipher = EVP_aes_128_gcm(), t->md = EVP_sha256(), k = 0; break;
	case 0x03001302: t->cipher = EVP_aes_256_gcm(), t->md = EVP_sha384(), k = 1; break;
	case 0x03001303: t->cipher = EVP_chacha20_poly1305(), t->md = EVP_sha256(), k = 2; break;
	default: return;
	}
	pthread_once(&rc__tls_impls_once, rc__tls_impls_find);
	if (rc__tls_impls[k].newctx == NULL)
		return; /* (its provider has no such cipher: SSL goes on) */
	t->impl = &rc__tls_impls[k];
	hl = (size_t)EVP_MD_get_size(t->md);
	if (t->csec_len != hl || t->ssec_len != hl || SSL_has_pending(t->ssl) ||
	    t->rawlen > t->rawoff || t->wlen > t->woff)
		return;
	if (t->raw == NULL && (t->raw = malloc(RC__TLS_RAW_CAP)) == NULL)
		return;
	memcpy(t->rx.secret, server ? t->csec : t->ssec, hl);
	memcpy(t->tx.secret, server ? t->ssec : t->csec, hl);
	if (!rc__tls_dir_key(t, &t->rx, 0) || !rc__tls_dir_key(t, &t->tx, 1)) {
		ERR_clear_error();
		return;
	}
	t->rawoff = t->rawlen = 0;
	t->fast = true;
	(void)SSL_free_buffers(t->ssl);
}

/*
 * One SSL_read_ex (reading) or SSL_write_ex of buf[0..n) (rc__tls_write_some) under t's
 * mutex, then -- when it must wait -- waiting for the socket without it, up to timeout_ms
 * (see rc__tls_read). A write that may wait returns when its records are all sent.
 */
static ssize_t rc__tls_io(rc__tls_conn *t, void *buf, size_t n, int timeout_ms, bool reading)
{
	int64_t deadline = timeout_ms > 0 ? (int64_t)rc__clock_ns() + timeout_ms * 1000000LL : 0;
	bool wait_first = false;

	if (t->fast)
		return reading ? rc__tls_fast_read(t, buf, n, timeout_ms)
		               : rc__tls_fast_write(t, buf, n, timeout_ms);
	if (reading && timeout_ms != 0) {
		/* a blocking read (a client waiting for its reply): unless TLS holds bytes, wait
		 * for the socket in a blocking read of its own, without the mutex, rather than poll
		 * and then read: one system call, not two */
		pthread_mutex_lock(&t->mu);
		wait_first = t->failed == 0 && SSL_pending(t->ssl) == 0 && !SSL_has_pending(t->ssl) &&
		             t->rawlen == t->rawoff;
		if (wait_first && t->raw == NULL && (t->raw = malloc(RC__TLS_RAW_CAP)) == NULL)
			wait_first = false; /* (then SSL reads the socket itself, as below) */
		pthread_mutex_unlock(&t->mu);
	}
	if (wait_first) {
		/* t->raw is the one reader's alone while empty: the BIO takes nothing from it */
		ssize_t got = rc__tls_wait_read(t);
		if (got <= 0)
			return got;
	}
	for (;;) {
		size_t done = 0;
		int r, e;

		pthread_mutex_lock(&t->mu);
		if (t->failed != 0) { /* OpenSSL cannot go on after a fatal error: neither do we */
			errno = t->failed;
			pthread_mutex_unlock(&t->mu);
			return reading && errno == EPIPE ? 0 : -1; /* closed stays closed */
		}
		/* SSL_get_error reads the thread's error queue: it must hold nothing older. Emptying
		 * it clears all 16 slots (~350 instructions, twice a call on each side), so only
		 * when something is there (our failure paths empty it themselves). */
		if (ERR_peek_error() != 0)
			ERR_clear_error();
		if (reading) {
			r = SSL_read_ex(t->ssl, buf, n, &done);
			e = r == 1 ? SSL_ERROR_NONE : SSL_get_error(t->ssl, r);
			if (t->wlen > t->woff) /* a write the read made (a key update's) behind some */
				(void)rc__tls_wflush(t);
		} else {
			e = rc__tls_write_some(t, buf, n, &done);
		}
		if (e == SSL_ERROR_SYSCALL && !reading)
			e = rc__tls_alert(t);
		if (e == SSL_ERROR_SSL)
			rc__tls_why(t->ssl, reading ? "TLS read" : "TLS write");
		switch (e) {
		case SSL_ERROR_NONE:
		case SSL_ERROR_WANT_READ:
		case SSL_ERROR_WANT_WRITE:
			break;
		case SSL_ERROR_ZERO_RETURN: /* the peer's close_notify (or end of stream) */
			t->failed = EPIPE;
			break;
		case SSL_ERROR_SYSCALL:
			t->failed = errno != 0 ? errno : ECONNRESET;
			break;
		default:
			t->failed = EPROTO;
		}
		pthread_mutex_unlock(&t->mu);
		if (e == SSL_ERROR_NONE && !reading && timeout_ms != 0 &&
		    rc__tls_drain(t, deadline, timeout_ms) < 0 && errno != EAGAIN)
			return -1;
		if (e == SSL_ERROR_NONE)
			return (ssize_t)done;
		if (e == SSL_ERROR_ZERO_RETURN && reading)
			return 0;
		if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
			errno = t->failed;
			return -1;
		}
		if (!rc__tls_wait(t, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline, timeout_ms))
			return -1;
	}
}

/* tls.h */
ssize_t rc__tls_read(rc__tls_conn *t, void *buf, size_t n, int timeout_ms)
{
	return rc__tls_io(t, buf, n, timeout_ms, true);
}

/* tls.h */
ssize_t rc__tls_write(rc__tls_conn *t, const void *buf, size_t n, int timeout_ms)
{
	return rc__tls_io(t, (void *)buf, n, timeout_ms, false);
}

/* tls.h */
size_t rc__tls_unsent(rc__tls_conn *t)
{
	return atomic_load_explicit(&t->unsent, memory_order_relaxed);
}

/* tls.h */
int rc__tls_flush(rc__tls_conn *t, int timeout_ms)
{
	int64_t deadline = timeout_ms > 0 ? (int64_t)rc__clock_ns() + timeout_ms * 1000000LL : 0;

	return rc__tls_drain(t, deadline, timeout_ms);
}

/* tls.h */
size_t rc__tls_pending(rc__tls_conn *t)
{
	size_t n;

	if (t->fast)
		return atomic_load_explicit(&t->held, memory_order_relaxed);
	pthread_mutex_lock(&t->mu);
	n = (size_t)SSL_pending(t->ssl);
	if (n == 0 && (SSL_has_pending(t->ssl) || t->rawlen > t->rawoff))
		n = 1; /* part of a TLS record: the peer owes us the rest */
	pthread_mutex_unlock(&t->mu);
	return n;
}

/* tls.h */
const rc_tls_peer *rc__tls_peer(const rc__tls_conn *t)
{
	return t->has_peer ? &t->peer : NULL;
}

/* tls.h: the exporter secret stays in the SSL object after the handshake (remotecall's own
 * record layer and its KeyUpdates do not touch it); TLS 1.3 treats an empty context as
 * absent. */
bool rc__tls_exporter(rc__tls_conn *t, unsigned char *out)
{
	static const char label[] = "EXPORTER-Channel-Binding";
	int ok;

	if (t == NULL || t->handshaking)
		return false;
	pthread_mutex_lock(&t->mu);
	ok = SSL_export_keying_material(t->ssl, out, 32, label, sizeof(label) - 1, NULL, 0, 0);
	pthread_mutex_unlock(&t->mu);
	return ok == 1;
}

/* tls.h */
void rc__tls_close(rc__tls_conn *t)
{
	if (t == NULL)
		return;
	if (t->handshaking) {
		atomic_fetch_sub(&t->ctx->handshakes, 1);
	} else if (t->fast) { /* close_notify if the socket takes it; no waiting */
		static const unsigned char cn[2] = {1, 0};
		if (t->failed == 0 && rc__tls_put(t, 21, cn, sizeof(cn)))
			(void)rc__tls_wflush(t);
	} else if (SSL_shutdown(t->ssl) >= 0) { /* the same through SSL */
		(void)rc__tls_wflush(t); /* (behind records still waiting, if any) */
	}
	if (t->rx.actx != NULL)
		t->rx.im->freectx(t->rx.actx);
	if (t->tx.actx != NULL)
		t->tx.im->freectx(t->tx.actx);
	OPENSSL_cleanse(&t->rx, sizeof(t->rx));
	OPENSSL_cleanse(&t->tx, sizeof(t->tx));
	OPENSSL_cleanse(t->csec, sizeof(t->csec));
	OPENSSL_cleanse(t->ssec, sizeof(t->ssec));
	ERR_clear_error();
	SSL_free(t->ssl);
	free(t->subject);
	for (size_t i = 0; i < t->peer.nsans; i++)
		free(t->sans[i]);
	pthread_mutex_destroy(&t->mu);
	free(t->raw);
	free(t->wbuf);
	free(t);
}

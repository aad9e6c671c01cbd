/*
 * RPC-over-TLS (RFC 9289) with OpenSSL 3: contexts (TLS 1.3 only, ALPN "sunrpc"), the client's
 * AUTH_TLS probe, the handshake (blocking by a deadline on the client, one non-blocking step
 * at a time on the server) and SSL_read / SSL_write under the stream transport (stream.c).
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
#include <sys/random.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "transports/tls.h"
#include "transports/transport.h"

#define RC__TLS_MAX_SANS 64  /* subjectAltName entries kept of a client certificate */
#define RC__AUTH_TLS 7u      /* RFC 9289's credential flavor */

static const unsigned char rc__alpn[] = "\x06sunrpc"; /* ALPN wire form: length, name */

struct rc__tls_ctx {
	SSL_CTX *ctx;
	bool server;
	rc_tls_policy policy;      /* client */
	char name[256];            /* client: the name to verify ("" : the URI's host) */
	atomic_uint handshakes;    /* server: in progress */
	unsigned max_handshakes;   /* server */
};

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
};

#define RC__TLS_RAW_CAP (64 * 1024) /* what one blocking read takes from the socket at most */
#define RC__TLS_WBUF (256 * 1024)   /* records gathered for one send at most */
/* The smallest message whose records gather (rc__tls_write_some). Below it each record goes
 * as it is made: across cores the reader decrypts one while the writer encrypts the next, and
 * a 64 KiB echo took 25 % longer gathered (175 against 140 us); from 256 KiB up, fewer sends
 * and wake-ups win on one core and across two alike (1 MiB echo: 2,450 -> 1,950 us on one
 * core, 1,650 -> 1,200 us across two). */
#define RC__TLS_GATHER_MIN (256 * 1024)
#define RC__TLS_REC_MAX (16384 + 512) /* one TLS 1.3 record's bytes at most, with its overhead */

/* Record why an OpenSSL operation `what` failed in the thread's transport detail: the
 * certificate check's verdict if it failed, else the last queued OpenSSL reason, else that
 * the peer closed. Clears OpenSSL's error queue. */
static void rc__tls_why(SSL *ssl, const char *what)
{
	long v = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;
	unsigned long e = ERR_peek_last_error();
	const char *r = e != 0 ? ERR_reason_error_string(e) : NULL;

	if (v != X509_V_OK)
		rc__tp_set_detail("%s: certificate verify failed: %s", what,
		                  X509_verify_cert_error_string(v));
	else if (r != NULL)
		rc__tp_set_detail("%s: %s", what, r);
	else
		rc__tp_set_detail("%s: connection closed by the peer", what);
	ERR_clear_error();
}

/* A context of method m, TLS 1.3 only, with the modes the stream transport needs (writes
 * may be partial and retried from another address: the output queue moves). */
static SSL_CTX *rc__tls_new_ctx(const SSL_METHOD *m)
{
	SSL_CTX *ctx = SSL_CTX_new(m);

	if (ctx == NULL)
		return NULL;
	/* AES-128-GCM first (OpenSSL's default puts AES-256 first): as strong as needed here,
	 * and the cheaper of the two on every CPU with AES instructions */
	if (!SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
	                                   "TLS_CHACHA20_POLY1305_SHA256")) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	/* a peer that closes without close_notify just closes: records are framed by record
	 * marking, so a truncation cannot pass for a whole message */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_read_ahead(ctx, 1);
	SSL_CTX_set_default_read_buffer_len(ctx, 64 * 1024);
	return ctx;
}

/* Load a certificate chain and its key into ctx; false with the detail set. */
static bool rc__tls_load_cert(SSL_CTX *ctx, const char *cert, const char *key)
{
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		rc__tls_why(NULL, cert);
		return false;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key ? key : cert, SSL_FILETYPE_PEM) != 1) {
		rc__tls_why(NULL, key ? key : cert);
		return false;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		rc__tls_why(NULL, "private key");
		return false;
	}
	return true;
}

/* tls.h */
rc_status rc__tls_client_ctx(const rc_tls_client_opts *o, rc__tls_ctx **out)
{
	rc__tls_ctx *c;

	*out = NULL;
	if (o->verify_name != NULL && strlen(o->verify_name) >= sizeof(c->name)) {
		rc__tp_set_detail("TLS: name to verify too long");
		return RC_INVAL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return RC_NOMEM;
	c->policy = o->policy;
	if (o->verify_name != NULL)
		strcpy(c->name, o->verify_name);
	if ((c->ctx = rc__tls_new_ctx(TLS_client_method())) == NULL) {
		free(c);
		return RC_NOMEM;
	}
	if (o->ca_file != NULL || o->ca_dir != NULL) {
		if (SSL_CTX_load_verify_locations(c->ctx, o->ca_file, o->ca_dir) != 1) {
			rc__tls_why(NULL, o->ca_file ? o->ca_file : o->ca_dir);
			goto fail;
		}
	} else if (SSL_CTX_set_default_verify_paths(c->ctx) != 1) {
		rc__tls_why(NULL, "TLS: default CA paths");
		goto fail;
	}
	SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, NULL);
	if (o->cert_file != NULL && !rc__tls_load_cert(c->ctx, o->cert_file, o->key_file))
		goto fail;
	if (SSL_CTX_set_alpn_protos(c->ctx, rc__alpn, sizeof(rc__alpn) - 1) != 0)
		goto fail;
	*out = c;
	return RC_OK;
fail:
	SSL_CTX_free(c->ctx);
	free(c);
	return RC_INVAL;
}

/* The server's ALPN choice: "sunrpc" (RFC 9289 section 5.2), else a fatal alert. */
static int rc__tls_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                               const unsigned char *in, unsigned inlen, void *arg)
{
	unsigned char *sel;

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto(&sel, outlen, rc__alpn, sizeof(rc__alpn) - 1, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

/* tls.h */
rc_status rc__tls_server_ctx(const rc_tls_server_opts *o, rc__tls_ctx **out)
{
	rc__tls_ctx *c;
	int mode = SSL_VERIFY_NONE;

	*out = NULL;
	if (o->cert_file == NULL || (o->clientcert != RC_TLS_CERT_NONE && o->client_ca_file == NULL)) {
		rc__tp_set_detail("TLS: %s missing", o->cert_file ? "client CA file" : "certificate");
		return RC_INVAL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return RC_NOMEM;
	c->server = true;
	c->max_handshakes = o->max_handshakes ? o->max_handshakes : RC_TLS_DEFAULT_MAX_HANDSHAKES;
	if ((c->ctx = rc__tls_new_ctx(TLS_server_method())) == NULL) {
		free(c);
		return RC_NOMEM;
	}
	if (!rc__tls_load_cert(c->ctx, o->cert_file, o->key_file))
		goto fail;
	if (o->clientcert != RC_TLS_CERT_NONE) {
		STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(o->client_ca_file);
		if (names == NULL ||
		    SSL_CTX_load_verify_locations(c->ctx, o->client_ca_file, NULL) != 1) {
			sk_X509_NAME_pop_free(names, X509_NAME_free);
			rc__tls_why(NULL, o->client_ca_file);
			goto fail;
		}
		SSL_CTX_set_client_CA_list(c->ctx, names); /* takes names */
		mode = SSL_VERIFY_PEER |
		       (o->clientcert == RC_TLS_CERT_REQUIRED ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0);
	}
	SSL_CTX_set_verify(c->ctx, mode, NULL);
	SSL_CTX_set_alpn_select_cb(c->ctx, rc__tls_alpn_select, NULL);
	SSL_CTX_set_session_cache_mode(c->ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_options(c->ctx, SSL_OP_CIPHER_SERVER_PREFERENCE); /* AES-128-GCM first */
	SSL_CTX_set_num_tickets(c->ctx, 0); /* no resumption: nothing to send after Finished */
	*out = c;
	return RC_OK;
fail:
	SSL_CTX_free(c->ctx);
	free(c);
	return RC_INVAL;
}

/* tls.h */
void rc__tls_ctx_free(rc__tls_ctx *ctx)
{
	if (ctx == NULL)
		return;
	SSL_CTX_free(ctx->ctx);
	free(ctx);
}

/* tls.h */
rc_tls_policy rc__tls_policy(const rc__tls_ctx *ctx)
{
	return ctx != NULL ? ctx->policy : RC_TLS_OFF;
}

/* The value of a hex digit, or -1. */
static int rc__hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* tls.h */
rc_status rc__tls_query_parse(const char *query, rc_tls_client_opts *o, char *buf, size_t cap)
{
	const char *p = query;
	size_t used = 0;

	while (*p != '\0') {
		const char *eq = strchr(p, '='), *amp = strchr(p, '&');
		const char *end = amp ? amp : p + strlen(p);
		size_t klen;
		char *val = buf + used;

		if (eq == NULL || eq > end)
			return RC_UNKNOWNADDR;
		klen = (size_t)(eq - p);
		for (const char *q = eq + 1; q < end; q++) { /* the value, %XX decoded */
			int ch = (unsigned char)*q;
			if (ch == '%') {
				int hi = q + 2 < end ? rc__hexval(q[1]) : -1;
				int lo = hi >= 0 ? rc__hexval(q[2]) : -1;
				if (lo < 0)
					return RC_UNKNOWNADDR;
				ch = hi * 16 + lo;
				q += 2;
			}
			if (ch == 0 || used + 1 >= cap)
				return RC_UNKNOWNADDR;
			buf[used++] = (char)ch;
		}
		buf[used++] = '\0';
		if (klen == 3 && strncmp(p, "tls", 3) == 0) {
			if (strcmp(val, "off") == 0)
				o->policy = RC_TLS_OFF;
			else if (strcmp(val, "opportunistic") == 0)
				o->policy = RC_TLS_OPPORTUNISTIC;
			else if (strcmp(val, "required") == 0)
				o->policy = RC_TLS_REQUIRED;
			else
				return RC_UNKNOWNADDR;
		} else if (klen == 2 && strncmp(p, "ca", 2) == 0) {
			o->ca_file = val;
		} else if (klen == 5 && strncmp(p, "cadir", 5) == 0) {
			o->ca_dir = val;
		} else if (klen == 4 && strncmp(p, "cert", 4) == 0) {
			o->cert_file = val;
		} else if (klen == 3 && strncmp(p, "key", 3) == 0) {
			o->key_file = val;
		} else if (klen == 4 && strncmp(p, "name", 4) == 0) {
			o->verify_name = val;
		} else {
			return RC_UNKNOWNADDR;
		}
		p = amp ? amp + 1 : end;
	}
	return RC_OK;
}

/* Milliseconds left until deadline (0: none -> -1, no limit); at least 1 while any is left,
 * 0 once it has passed. */
static int rc__tls_ms_left(int64_t deadline)
{
	int64_t left;

	if (deadline == 0)
		return -1;
	left = deadline - (int64_t)rc__clock_ns();
	if (left <= 0)
		return 0;
	left = (left + 999999) / 1000000;
	return left > 3600000 ? 3600000 : (int)left;
}

/* tls.h */
rc_status rc__tls_probe(rc_tp *tp, uint32_t prog, uint32_t vers, int64_t deadline,
                        bool *offered)
{
	unsigned char buf[RC_TP_HEADROOM + 40], *m = buf + RC_TP_HEADROOM;
	const unsigned char *r;
	uint32_t xid, w[10];
	void *msg;
	size_t len;
	rc_status st;
	int ms;

	*offered = false;
	if (getrandom(&xid, sizeof(xid), GRND_NONBLOCK) != sizeof(xid))
		xid = (uint32_t)rc__clock_ns();
	/* xid, CALL, RPC 2, prog, vers, NULL; credential AUTH_TLS, empty; verifier AUTH_NONE */
	w[0] = xid, w[1] = 0, w[2] = 2, w[3] = prog, w[4] = vers, w[5] = 0;
	w[6] = RC__AUTH_TLS, w[7] = 0, w[8] = 0, w[9] = 0;
	for (int i = 0; i < 10; i++)
		rc__st32(m + 4 * i, w[i]);
	if ((st = tp->vt->send(tp, m, 40, NULL, 0)) != RC_OK)
		return st;
	for (;;) {
		if ((ms = rc__tls_ms_left(deadline)) == 0)
			return RC_TIMEDOUT;
		rc__tp_set_rcvtimeo(tp, ms < 0 ? 0 : ms);
		st = tp->vt->recv(tp, &msg, &len, NULL, 0);
		if (st == RC_AGAIN)
			continue;
		if (st != RC_OK)
			return st == RC_CLOSED ? RC_CANTRECV : st;
		r = msg;
		if (len >= 8 && rc__ld32(r) == xid)
			break;
		/* not our reply (a server's stray message): keep waiting */
	}
	rc__tp_set_rcvtimeo(tp, 0);
	/* xid, REPLY, then MSG_ACCEPTED, verifier flavor, length, body, accept_stat -- or
	 * MSG_DENIED (a server that does not know AUTH_TLS: no TLS) */
	if (rc__ld32(r + 4) != 1)
		return RC_BADREPLY;
	if (len >= 12 && rc__ld32(r + 8) == 1)
		return RC_OK; /* denied */
	if (len < 24 || rc__ld32(r + 8) != 0)
		return RC_BADREPLY;
	{
		uint32_t vlen = rc__ld32(r + 16);
		size_t pad = ((size_t)vlen + 3) & ~(size_t)3;
		if (vlen > 400 || len < 24 + pad)
			return RC_BADREPLY;
		*offered = rc__ld32(r + 12) == 0 && vlen == 8 && memcmp(r + 20, "STARTTLS", 8) == 0 &&
		           rc__ld32(r + 20 + pad) == 0;
	}
	return RC_OK;
}

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

/* Keep the identity of the verified client certificate (if any) in t: its subject in RFC
 * 2253 form and its subjectAltNames as text. Memory short: what could not be kept is left
 * out (the subject NULL, fewer names). */
static void rc__tls_keep_peer(rc__tls_conn *t)
{
	X509 *cert = SSL_get0_peer_certificate(t->ssl);
	GENERAL_NAMES *gens;
	BIO *b;

	if (cert == NULL || SSL_get_verify_result(t->ssl) != X509_V_OK)
		return;
	if ((b = BIO_new(BIO_s_mem())) != NULL) {
		char *p;
		long n;
		X509_NAME_print_ex(b, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
		n = BIO_get_mem_data(b, &p);
		if ((t->subject = malloc((size_t)n + 1)) != NULL) {
			memcpy(t->subject, p, (size_t)n);
			t->subject[n] = '\0';
		}
		BIO_free(b);
	}
	gens = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
	for (int i = 0; gens != NULL && i < sk_GENERAL_NAME_num(gens) &&
	                t->peer.nsans < RC__TLS_MAX_SANS; i++) {
		const GENERAL_NAME *g = sk_GENERAL_NAME_value(gens, i);
		char text[300], addr[INET6_ADDRSTRLEN];
		const ASN1_STRING *s = NULL;
		const char *tag = NULL;

		switch (g->type) {
		case GEN_DNS: tag = "DNS", s = g->d.dNSName; break;
		case GEN_EMAIL: tag = "email", s = g->d.rfc822Name; break;
		case GEN_URI: tag = "URI", s = g->d.uniformResourceIdentifier; break;
		case GEN_IPADD:
			s = g->d.iPAddress;
			if (inet_ntop(ASN1_STRING_length(s) == 4 ? AF_INET : AF_INET6,
			              ASN1_STRING_get0_data(s), addr, sizeof(addr)) == NULL ||
			    (ASN1_STRING_length(s) != 4 && ASN1_STRING_length(s) != 16))
				continue;
			snprintf(text, sizeof(text), "IP:%s", addr);
			break;
		default:
			continue;
		}
		if (tag != NULL) {
			int n = ASN1_STRING_length(s);
			if (n < 0 || n > 255 || memchr(ASN1_STRING_get0_data(s), 0, (size_t)n))
				continue; /* an embedded NUL: not a name to show */
			snprintf(text, sizeof(text), "%s:%.*s", tag, n,
			         (const char *)ASN1_STRING_get0_data(s));
		}
		if ((t->sans[t->peer.nsans] = strdup(text)) != NULL)
			t->peer.nsans++;
	}
	GENERAL_NAMES_free(gens);
	t->peer.subject = t->subject;
	t->peer.sans = (const char *const *)t->sans;
	t->has_peer = t->subject != NULL || t->peer.nsans > 0;
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
	    (t->wbuf != NULL || (t->wbuf = malloc(RC__TLS_WBUF)) != NULL))
		t->gather = true;
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

/*
 * One SSL_read_ex (reading) or SSL_write_ex of buf[0..n) (rc__tls_write_some) under t's
 * mutex, then -- when it must wait -- waiting for the socket without it, up to timeout_ms
 * (see rc__tls_read). A write that may wait returns when its records are all sent.
 */
static ssize_t rc__tls_io(rc__tls_conn *t, void *buf, size_t n, int timeout_ms, bool reading)
{
	int64_t deadline = timeout_ms > 0 ? (int64_t)rc__clock_ns() + timeout_ms * 1000000LL : 0;
	bool wait_first = false;

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

/* tls.h */
void rc__tls_close(rc__tls_conn *t)
{
	if (t == NULL)
		return;
	if (t->handshaking)
		atomic_fetch_sub(&t->ctx->handshakes, 1);
	else if (SSL_shutdown(t->ssl) >= 0) /* close_notify if the socket takes it; no waiting */
		(void)rc__tls_wflush(t); /* (behind records still waiting, if any) */
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

/*
 * RPC-over-TLS's contexts (tls.h): OpenSSL contexts for clients and servers (TLS 1.3 only,
 * ALPN "sunrpc", certificates, the key log that hands the record layer its secrets), a client
 * URI's TLS keys, the AUTH_TLS probe, and the identity kept of a verified client certificate.
 * Below tls.c (the connections); it calls nothing of tls.c's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "transports/tls_priv.h"

#define RC__AUTH_TLS 7u      /* RFC 9289's credential flavor */

static const unsigned char rc__alpn[] = "\x06sunrpc"; /* ALPN wire form: length, name */


/* tls_priv.h */
void rc__tls_why(SSL *ssl, const char *what)
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

/* Record why OpenSSL could not load file path, the `role` ("certificate", "key", "CA file"):
 * what is wrong with the file itself when that can be told -- it cannot be read (errno's
 * words), is not PEM, holds no certificate (a key given as the certificate) or no private key
 * (a certificate given as the key) -- else OpenSSL's reason. Clears OpenSSL's error queue. */
static void rc__tls_file_why(const char *role, const char *path)
{
	bool want_key = strcmp(role, "key") == 0, pem = false, cert = false, key = false;
	char line[128];
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		rc__tp_set_detail("TLS %s %s: %s", role, path, strerror(errno));
		ERR_clear_error();
		return;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "-----BEGIN ", 11) != 0)
			continue;
		pem = true;
		cert |= strstr(line, "CERTIFICATE") != NULL;
		key |= strstr(line, "PRIVATE KEY") != NULL;
	}
	fclose(f);
	if (!pem)
		rc__tp_set_detail("TLS %s %s: not a PEM file (no -----BEGIN line)", role, path);
	else if (!want_key && !cert)
		rc__tp_set_detail("TLS %s %s: holds no certificate%s", role, path,
		                  key ? " but a private key (a key given as the certificate?)" : "");
	else if (want_key && !key)
		rc__tp_set_detail("TLS key %s: holds no private key%s", path,
		                  cert ? " but a certificate (a certificate given as the key?)" : "");
	else
		rc__tls_why(NULL, path);
	ERR_clear_error();
}

/* OpenSSL's key log (NSS format) of a connection's handshake: keep its application traffic
 * secrets (CLIENT_TRAFFIC_SECRET_0, SERVER_TRAFFIC_SECRET_0) for the record layer. */
static void rc__tls_keylog(const SSL *ssl, const char *line)
{
	rc__tls_conn *t = SSL_get_app_data(ssl);
	unsigned char *dst;
	size_t *len, n = 0;
	const char *p;

	if (t == NULL)
		return;
	if (strncmp(line, "CLIENT_TRAFFIC_SECRET_0 ", 24) == 0)
		dst = t->csec, len = &t->csec_len;
	else if (strncmp(line, "SERVER_TRAFFIC_SECRET_0 ", 24) == 0)
		dst = t->ssec, len = &t->ssec_len;
	else
		return;
	if ((p = strchr(line + 24, ' ')) == NULL) /* past the client random */
		return;
	for (p++; n < EVP_MAX_MD_SIZE && rc__hexval(p[0]) >= 0 && rc__hexval(p[1]) >= 0; p += 2)
		dst[n++] = (unsigned char)(rc__hexval(p[0]) * 16 + rc__hexval(p[1]));
	*len = *p == '\0' ? n : 0;
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
	/* no read-ahead: the handshake reads no byte past its last record, so that the record
	 * layer that takes over after it finds every later record on the socket */
	SSL_CTX_set_read_ahead(ctx, 0);
	SSL_CTX_set_keylog_callback(ctx, rc__tls_keylog);
	return ctx;
}

/* Load a certificate chain and its key into ctx; false with the detail set. */
static bool rc__tls_load_cert(SSL_CTX *ctx, const char *cert, const char *key)
{
	bool mismatch = false;

	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		rc__tls_file_why("certificate", cert);
		return false;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key ? key : cert, SSL_FILETYPE_PEM) != 1) {
		/* OpenSSL checks the key against the certificate as it loads it */
		mismatch = ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH;
		if (!mismatch) {
			rc__tls_file_why("key", key ? key : cert);
			return false;
		}
	}
	if (mismatch || SSL_CTX_check_private_key(ctx) != 1) {
		rc__tp_set_detail("TLS key %s does not match the certificate %s", key ? key : cert,
		                  cert);
		ERR_clear_error();
		return false;
	}
	return true;
}

/* tls.h */
/* Keep copies of the files c was made from (for RPC-over-QUIC's own TLS stack): false when
 * memory is short. */
static bool rc__tls_keep_files(rc__tls_ctx *c, const char *ca, const char *cadir,
                               const char *cert, const char *key)
{
	const char *src[4] = {ca, cadir, cert, key};

	for (int i = 0; i < 4; i++)
		if (src[i] != NULL && (c->kept[i] = strdup(src[i])) == NULL)
			return false;
	c->files.ca_file = c->kept[0];
	c->files.ca_dir = c->kept[1];
	c->files.cert_file = c->kept[2];
	c->files.key_file = c->kept[3];
	c->files.name = c->name[0] ? c->name : NULL;
	return true;
}

/* tls.h */
const rc__tls_files *rc__tls_ctx_files(const rc__tls_ctx *ctx)
{
	return &ctx->files;
}

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
	if (!rc__tls_keep_files(c, o->ca_file, o->ca_dir, o->cert_file, o->key_file) ||
	    (c->ctx = rc__tls_new_ctx(TLS_client_method())) == NULL) {
		rc__tls_ctx_free(c);
		return RC_NOMEM;
	}
	if (o->ca_file != NULL || o->ca_dir != NULL) {
		if (SSL_CTX_load_verify_locations(c->ctx, o->ca_file, o->ca_dir) != 1) {
			if (o->ca_file != NULL)
				rc__tls_file_why("CA file", o->ca_file);
			else
				rc__tls_why(NULL, o->ca_dir);
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
	rc__tls_ctx_free(c);
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
	c->files.clientcert = o->clientcert;
	if (!rc__tls_keep_files(c, o->client_ca_file, NULL, o->cert_file, o->key_file) ||
	    (c->ctx = rc__tls_new_ctx(TLS_server_method())) == NULL) {
		rc__tls_ctx_free(c);
		return RC_NOMEM;
	}
	if (!rc__tls_load_cert(c->ctx, o->cert_file, o->key_file))
		goto fail;
	if (o->clientcert != RC_TLS_CERT_NONE) {
		STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(o->client_ca_file);
		if (names == NULL ||
		    SSL_CTX_load_verify_locations(c->ctx, o->client_ca_file, NULL) != 1) {
			sk_X509_NAME_pop_free(names, X509_NAME_free);
			rc__tls_file_why("client CA file", o->client_ca_file);
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
	rc__tls_ctx_free(c);
	return RC_INVAL;
}

/* tls.h */
void rc__tls_ctx_free(rc__tls_ctx *ctx)
{
	if (ctx == NULL)
		return;
	SSL_CTX_free(ctx->ctx);
	for (int i = 0; i < 4; i++)
		free(ctx->kept[i]);
	free(ctx);
}

/* tls.h */
rc_tls_policy rc__tls_policy(const rc__tls_ctx *ctx)
{
	return ctx != NULL ? ctx->policy : RC_TLS_OFF;
}

/* rc__uri_query's fn for a client's query: each key into its field of the options. */
static bool rc__tls_query_key(void *ctx, const rc__uri_key *k, const char *val)
{
	rc_tls_client_opts *o = ctx;

	if (strcmp(k->name, "tls") == 0)
		o->policy = strcmp(val, "required") == 0        ? RC_TLS_REQUIRED
		            : strcmp(val, "opportunistic") == 0 ? RC_TLS_OPPORTUNISTIC
		                                                : RC_TLS_OFF;
	else if (strcmp(k->name, "ca") == 0)
		o->ca_file = val;
	else if (strcmp(k->name, "cadir") == 0)
		o->ca_dir = val;
	else if (strcmp(k->name, "cert") == 0)
		o->cert_file = val;
	else if (strcmp(k->name, "key") == 0)
		o->key_file = val;
	else if (strcmp(k->name, "name") == 0)
		o->verify_name = val;
	return true;
}

/* tls.h */
rc_status rc__tls_query_parse(const char *query, rc_tls_client_opts *o, char *buf, size_t cap)
{
	return rc__uri_query(query, RC__URIQ_CLIENT, rc__tls_query_key, o, buf, cap);
}

/* tls_priv.h */
int rc__tls_ms_left(int64_t deadline)
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

/* tls_priv.h */
void rc__tls_keep_peer(rc__tls_conn *t)
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

/*
 * RPC-over-QUIC: a connection's GnuTLS session -- TLS 1.3 only, ALPN "sunrpc" required, no
 * 0-RTT, the endpoint's certificates and mTLS policy, the verified peer's identity -- and the
 * callbacks and settings ngtcp2 runs a connection with (transports/quic_conn.h).
 */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <gnutls/x509.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include "transports/quic_ngtcp2.h"
#include "transports/quic_conn.h"

static const char rc__q_prio[] = "NORMAL:-VERS-ALL:+VERS-TLS1.3:%DISABLE_TLS13_COMPAT_MODE";
static const char rc__q_alpn[] = "sunrpc";

void rc__qpeer_release(rc__qpeer *w)
{
	if (w == NULL || atomic_fetch_sub(&w->refs, 1) != 1)
		return;
	for (size_t i = 0; i < w->peer.nsans; i++)
		free(w->sans[i]);
	free(w->sans);
	free(w->subject);
	free(w);
}

/* ---- ngtcp2 callbacks --------------------------------------------------------------------- */

static void rc__q_rand(uint8_t *dest, size_t len, const ngtcp2_rand_ctx *ctx)
{
	(void)ctx;
	(void)gnutls_rnd(GNUTLS_RND_RANDOM, dest, len);
}

static int rc__q_new_cid(ngtcp2_conn *conn, ngtcp2_cid *cid, uint8_t *token, size_t len,
                         void *user)
{
	rc__qconn *qc = user;

	(void)conn;
	if (gnutls_rnd(GNUTLS_RND_RANDOM, cid->data, len) != 0 ||
	    gnutls_rnd(GNUTLS_RND_RANDOM, token, NGTCP2_STATELESS_RESET_TOKENLEN) != 0)
		return NGTCP2_ERR_CALLBACK_FAILURE;
	cid->datalen = len;
	if (qc->ncids < RC__Q_MAXCIDS)
		qc->cids[qc->ncids++] = *cid;
	return 0;
}

static int rc__q_rm_cid(ngtcp2_conn *conn, const ngtcp2_cid *cid, void *user)
{
	rc__qconn *qc = user;

	(void)conn;
	for (size_t i = 0; i < qc->ncids; i++)
		if (ngtcp2_cid_eq(&qc->cids[i], cid)) {
			qc->cids[i] = qc->cids[--qc->ncids];
			break;
		}
	return 0;
}

/* The verified peer certificate's identity, for rc_svc_req_tls_peer. */
static rc__qpeer *rc__q_who(gnutls_session_t ses)
{
	rc__qpeer *w = calloc(1, sizeof(*w));
	unsigned n = 0;
	const gnutls_datum_t *certs;
	gnutls_x509_crt_t crt;
	gnutls_datum_t dn = {NULL, 0};

	if (w == NULL)
		return NULL;
	atomic_init(&w->refs, 1);
	w->has_cb = gnutls_prf_rfc5705(ses, 24, "EXPORTER-Channel-Binding", 0, "",
	                               sizeof(w->cb), (char *)w->cb) == 0;
	certs = gnutls_certificate_get_peers(ses, &n);
	if (certs == NULL || n == 0 || gnutls_x509_crt_init(&crt) != 0)
		return w;
	if (gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER) == 0) {
		w->has = true;
		if (gnutls_x509_crt_get_dn3(crt, &dn, 0) == 0) {
			w->subject = strndup((const char *)dn.data, dn.size);
			gnutls_free(dn.data);
		}
		for (unsigned i = 0; i < 32; i++) {
			char buf[512], txt[600];
			size_t sz = sizeof(buf) - 1;
			unsigned crit;
			int t = gnutls_x509_crt_get_subject_alt_name(crt, i, buf, &sz, &crit);
			if (t < 0)
				break;
			buf[sz < sizeof(buf) ? sz : sizeof(buf) - 1] = '\0';
			if (t == GNUTLS_SAN_DNSNAME)
				snprintf(txt, sizeof(txt), "DNS:%s", buf);
			else if (t == GNUTLS_SAN_RFC822NAME)
				snprintf(txt, sizeof(txt), "email:%s", buf);
			else if (t == GNUTLS_SAN_URI)
				snprintf(txt, sizeof(txt), "URI:%s", buf);
			else if (t == GNUTLS_SAN_IPADDRESS && (sz == 4 || sz == 16)) {
				char a[INET6_ADDRSTRLEN];
				inet_ntop(sz == 4 ? AF_INET : AF_INET6, buf, a, sizeof(a));
				snprintf(txt, sizeof(txt), "IP:%s", a);
			} else
				continue;
			char **v = realloc(w->sans, (w->peer.nsans + 1) * sizeof(*v));
			if (v == NULL)
				break;
			w->sans = v;
			if ((v[w->peer.nsans] = strdup(txt)) != NULL)
				w->peer.nsans++;
		}
	}
	gnutls_x509_crt_deinit(crt);
	w->peer.subject = w->subject;
	w->peer.sans = (const char *const *)w->sans;
	return w;
}

static int rc__q_handshake_done(ngtcp2_conn *conn, void *user)
{
	rc__qconn *qc = user;
	rc__qep *ep = qc->ep;

	(void)conn;
	qc->handshaken = true;
	qc->who = rc__q_who(qc->ses);
	pthread_mutex_lock(&ep->mu);
	ep->st.conns++;
	ep->st.open_conns++;
	if (!ep->server) {
		ep->state = 1;
		if ((ep->who = qc->who) != NULL)
			atomic_fetch_add(&ep->who->refs, 1);
		pthread_cond_broadcast(&ep->cv);
	}
	pthread_mutex_unlock(&ep->mu);
	return 0;
}

/* Hand the runtime's end of a new pipe to the listener's accept. */
static void rc__q_offer(rc__qep *ep, int rfd, rc__qbox *box, rc__qpeer *who)
{
	rc__qacc *a = calloc(1, sizeof(*a));
	uint64_t one = 1;

	if (a == NULL) {
		close(rfd);
		rc__qbox_release(box);
		return;
	}
	a->fd = rfd;
	a->box = box;
	a->who = who;
	if (who != NULL)
		atomic_fetch_add(&who->refs, 1);
	pthread_mutex_lock(&ep->mu);
	if (ep->acq_tail)
		ep->acq_tail->next = a;
	else
		ep->acq = a;
	ep->acq_tail = a;
	ep->st.streams++;
	pthread_mutex_unlock(&ep->mu);
	(void)!write(ep->afd, &one, sizeof(one));
}

static int rc__q_stream_open(ngtcp2_conn *conn, int64_t id, void *user)
{
	rc__qconn *qc = user;
	rc__qpipe *p;
	rc__qstrm *s;
	rc__qbox *box;
	int rfd;

	(void)conn;
	if (id & 2) /* unidirectional: the draft uses none (their limit is 0 anyway) */
		return 0;
	if (!qc->ep->server) { /* a server's stream: calls back into the client's pipe */
		(void)rc__qstrm_new(qc, id, qc->cpipe, false);
		return 0;
	}
	if ((p = rc__qpipe_new(qc, &rfd, &box)) == NULL) {
		(void)rc__ng_shutdown_stream(conn, id, RC_QUIC_SERVER_BUSY);
		return 0;
	}
	if ((s = rc__qstrm_new(qc, id, p, false)) == NULL) {
		close(rfd);
		rc__qbox_release(box);
		rc__qpipe_kill(p);
		(void)rc__ng_shutdown_stream(conn, id, RC_QUIC_SERVER_BUSY);
		return 0;
	}
	p->home = s;
	rc__q_offer(qc->ep, rfd, box, qc->who);
	return 0;
}

static int rc__q_recv_data(ngtcp2_conn *conn, uint32_t flags, int64_t id, uint64_t off,
                           const uint8_t *data, size_t len, void *user, void *suser)
{
	rc__qstrm *s = suser;

	(void)conn;
	(void)off;
	(void)user;
	if (s == NULL)
		return 0;
	rc__qstrm_feed(s, data, len);
	rc__qstrm_credit(s, len);
	if ((flags & NGTCP2_STREAM_DATA_FLAG_FIN) && !s->local && s->pipe != NULL &&
	    s->pipe->home == s)
		rc__qpipe_fin(s->pipe); /* no more calls: the server connection takes them, answers,
		                           and closes */
	(void)id;
	return 0;
}

static int rc__q_acked(ngtcp2_conn *conn, int64_t id, uint64_t off, uint64_t len, void *user,
                       void *suser)
{
	rc__qstrm *s = suser;
	size_t freed = 0;

	(void)conn;
	(void)id;
	(void)user;
	if (s == NULL)
		return 0;
	if (off + len > s->acked)
		s->acked = off + len;
	while (s->sq != NULL && s->sq != s->snext && s->sq->off + s->sq->len <= s->acked) {
		rc__qchunk *c = s->sq;
		s->sq = c->next;
		if (s->sq == NULL)
			s->sq_tail = NULL;
		freed += c->len;
		rc__qchunk_free(c);
	}
	if (freed > 0)
		rc__qstrm_acked(s, freed); /* its pipe has room: the loop takes more */
	return 0;
}

static int rc__q_stream_close(ngtcp2_conn *conn, uint32_t flags, int64_t id, uint64_t code,
                              void *user, void *suser)
{
	rc__qconn *qc = user;
	rc__qstrm *s = suser;

	(void)conn;
	(void)flags;
	(void)id;
	(void)code;
	if (s == NULL)
		return 0;
	s->gone = true;
	if (s->local)
		qc->nlocal--;
	if (s->pipe != NULL) {
		if (s->pipe->home == s)
			rc__qpipe_kill(s->pipe);
		else if (s->pipe->back == s)
			s->pipe->back = NULL;
		else if (s->local && s->calls > 0 && !qc->close_want)
			rc__qpipe_kill(s->pipe); /* calls on it are lost: the client sees the end */
	}
	return 0;
}

static int rc__q_stream_reset(ngtcp2_conn *conn, int64_t id, uint64_t size, uint64_t code,
                              void *user, void *suser)
{
	(void)size;
	(void)code;
	(void)user;
	(void)suser;
	(void)rc__ng_shutdown_stream(conn, id, RC_QUIC_NO_ERROR);
	return 0;
}

static ngtcp2_conn *rc__q_get_conn(ngtcp2_crypto_conn_ref *ref)
{
	return ((rc__qconn *)ref->user_data)->conn;
}

void rc__q_callbacks(ngtcp2_callbacks *cb, bool server)
{
	memset(cb, 0, sizeof(*cb));
	if (server)
		cb->recv_client_initial = ngtcp2_crypto_recv_client_initial_cb;
	else {
		cb->client_initial = ngtcp2_crypto_client_initial_cb;
		cb->recv_retry = ngtcp2_crypto_recv_retry_cb;
	}
	cb->recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb;
	cb->encrypt = ngtcp2_crypto_encrypt_cb;
	cb->decrypt = ngtcp2_crypto_decrypt_cb;
	cb->hp_mask = ngtcp2_crypto_hp_mask_cb;
	cb->update_key = ngtcp2_crypto_update_key_cb;
	cb->delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb;
	cb->delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb;
	cb->get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb;
	cb->version_negotiation = ngtcp2_crypto_version_negotiation_cb;
	cb->rand = rc__q_rand;
	cb->get_new_connection_id = rc__q_new_cid;
	cb->remove_connection_id = rc__q_rm_cid;
	cb->handshake_completed = rc__q_handshake_done;
	cb->stream_open = rc__q_stream_open;
	cb->recv_stream_data = rc__q_recv_data;
	cb->acked_stream_data_offset = rc__q_acked;
	cb->stream_close = rc__q_stream_close;
	cb->stream_reset = rc__q_stream_reset;
}

/* Whether a is a loopback address (127/8, ::1, ::ffff:127/104). */
static bool rc__q_loopback(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
	if (a->ss_family == AF_INET6) {
		const struct in6_addr *x = &((const struct sockaddr_in6 *)a)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(x) || (IN6_IS_ADDR_V4MAPPED(x) && x->s6_addr[12] == 127);
	}
	return false;
}

/* ngtcp2's settings and our transport parameters for a connection with peer. To a loopback
 * peer packets are RC__Q_PKT_LO bytes (the loopback MTU takes them; PMTUD would stop near
 * 1500), elsewhere RC__Q_PKT as ngtcp2 shapes them. */
void rc__q_settings(rc__qep *ep, const struct sockaddr_storage *peer, ngtcp2_settings *st,
                           ngtcp2_transport_params *tp)
{
	ngtcp2_settings_default(st);
	st->initial_ts = rc__q_now();
	st->max_tx_udp_payload_size = RC__Q_PKT;
	if (rc__q_loopback(peer)) {
		st->max_tx_udp_payload_size = RC__Q_PKT_LO;
		st->no_tx_udp_payload_size_shaping = 1;
	}
	st->max_window = RC__Q_CONN_WIN * 4;
	st->max_stream_window = RC__Q_STREAM_WIN * 4;
	st->handshake_timeout = 10 * NGTCP2_SECONDS;
	ngtcp2_transport_params_default(tp);
	tp->initial_max_stream_data_bidi_local = RC__Q_STREAM_WIN;
	tp->initial_max_stream_data_bidi_remote = RC__Q_STREAM_WIN;
	tp->initial_max_data = RC__Q_CONN_WIN;
	tp->initial_max_streams_bidi = ep->server ? ep->streams : RC__Q_BACK_STREAMS;
	tp->initial_max_streams_uni = 0;
	tp->max_idle_timeout = ep->idle_ns;
}

/* ---- connections -------------------------------------------------------------------------- */

/* A GnuTLS session for qc: TLS 1.3, ALPN "sunrpc" required, the endpoint's certificates. */
int rc__q_session(rc__qconn *qc)
{
	rc__qep *ep = qc->ep;
	gnutls_datum_t alpn = {(unsigned char *)rc__q_alpn, sizeof(rc__q_alpn) - 1};
	int rv;

	rv = gnutls_init(&qc->ses, ep->server ? GNUTLS_SERVER : GNUTLS_CLIENT);
	if (rv != 0)
		return rv;
	if ((rv = gnutls_priority_set_direct(qc->ses, rc__q_prio, NULL)) != 0 ||
	    (rv = gnutls_credentials_set(qc->ses, GNUTLS_CRD_CERTIFICATE, ep->cred)) != 0 ||
	    (rv = gnutls_alpn_set_protocols(qc->ses, &alpn, 1, GNUTLS_ALPN_MANDATORY)) != 0)
		return rv;
	if (ep->server) {
		if (ngtcp2_crypto_gnutls_configure_server_session(qc->ses) != 0)
			return -1;
		gnutls_certificate_server_set_request(qc->ses,
		                                      ep->clientcert == RC_TLS_CERT_REQUIRED
		                                              ? GNUTLS_CERT_REQUIRE
		                                      : ep->clientcert == RC_TLS_CERT_OPTIONAL
		                                              ? GNUTLS_CERT_REQUEST
		                                              : GNUTLS_CERT_IGNORE);
		if (ep->clientcert != RC_TLS_CERT_NONE)
			gnutls_session_set_verify_cert(qc->ses, NULL, 0);
	} else {
		struct in6_addr a;
		if (ngtcp2_crypto_gnutls_configure_client_session(qc->ses) != 0)
			return -1;
		if (inet_pton(AF_INET, ep->name, &a) != 1 && inet_pton(AF_INET6, ep->name, &a) != 1)
			(void)gnutls_server_name_set(qc->ses, GNUTLS_NAME_DNS, ep->name,
			                             strlen(ep->name));
		gnutls_session_set_verify_cert(qc->ses, ep->name, 0);
	}
	qc->ref.get_conn = rc__q_get_conn;
	qc->ref.user_data = qc;
	gnutls_session_set_ptr(qc->ses, &qc->ref);
	ngtcp2_conn_set_tls_native_handle(qc->conn, qc->ses);
	return 0;
}

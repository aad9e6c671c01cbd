/*
 * RPC-over-QUIC (draft-cel-nfsv4-rpc-over-quicv1): the quic://HOST:PORT transport, on
 * libngtcp2 with GnuTLS (ALPN "sunrpc", TLS 1.3 only, no 0-RTT; certificates from the same
 * rc_tls_* settings as RPC-over-TLS: rc__tls_ctx_files).
 *
 * How it maps onto remotecall. One QUIC endpoint -- a UDP socket and the thread that runs
 * ngtcp2 on it -- sits behind each client connection and each listener. The runtime never
 * sees QUIC: it talks to a *pipe*, a Unix stream socket pair whose other end the endpoint's
 * thread holds, carrying record-marked messages exactly as a TCP connection does (so every
 * call mode, deferred replies, limits and the back channel work unchanged), and the thread
 * moves whole messages between pipes and QUIC streams by the draft's rules:
 *
 *   client  one pipe for the connection. A call the runtime writes goes on one of a pool of
 *           client-created bidirectional streams (?streams=N, default 4: the least busy, a
 *           new one while the pool is not full); replies come back on the stream the call
 *           took. Calls the server sends on streams it created (the back channel) go into
 *           the pipe, and the runtime's replies to them back on the stream each came on.
 *   server  one pipe -- one server connection -- for each stream a client creates (the
 *           draft: an upper layer's "connection" is a stream); the listener's accept hands
 *           them out. Replies go back on that stream; calls back (rc_svc_req_backchannel)
 *           on a stream the server creates for the pipe, whose replies come into the pipe.
 *
 * A message is forwarded only whole (no interleaving within a pipe or stream). Messages the
 * wrong way on a stream are dropped (the draft: silently) and counted; a record over the cap
 * or too short to be RPC closes the connection with RPC_PROTOCOL_VIOLATION; a peer opening
 * more streams than allowed (?streams=N on the listen URI, default 16) is closed by ngtcp2
 * with STREAM_LIMIT_ERROR; both are counted (rc__quic_lsn_stats). A client destroyed, or a
 * listener closed, closes its connections with RPC_NO_ERROR. Idle connections end after the
 * idle timeout (30 s), and their pipes with them.
 *
 * The price of the design: each message crosses the pipe, one more thread hop each way on
 * both sides (docs/runtime.md has the figures).
 *
 * The files, top down: this one (the runtime's transports, the client, the listener), quic_ep.c,
 * quic_tls.c, quic_stream.c -- transports/quic_priv.h says what each holds.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gnutls/crypto.h>

#include "transports/quic_priv.h"

/* ---- the runtime's transports ------------------------------------------------------------- */

/*
 * A pipe's runtime end is a Unix stream transport (stream.c, through the unix kind's adopt)
 * whose vt is this file's copy with close and secure replaced: secure says "under TLS" and
 * who the peer is, close also ends a client's endpoint. What each such transport needs is
 * found by its address in a small table.
 */
typedef struct rc__qtp {
	struct rc__qtp *next;
	rc_tp *tp;
	rc__qpeer *who;
	rc__qep *ep; /* a client's endpoint, ended with the transport; NULL on a server */
} rc__qtp;

#define RC__QTP_BUCKETS 64
static rc__qtp *rc__qtp_tab[RC__QTP_BUCKETS];
static pthread_mutex_t rc__qtp_mu = PTHREAD_MUTEX_INITIALIZER;
static rc_tp_vt rc__quic_conn_vt;
static const rc_tp_vt *rc__quic_stream_vt; /* the vt adopt gave */

static unsigned rc__qtp_hash(const rc_tp *tp)
{
	return (unsigned)(((uintptr_t)tp >> 6) % RC__QTP_BUCKETS);
}

/* Find (and with take, remove) tp's entry; under rc__qtp_mu. */
static rc__qtp *rc__qtp_find(const rc_tp *tp, bool take)
{
	for (rc__qtp **pe = &rc__qtp_tab[rc__qtp_hash(tp)]; *pe != NULL; pe = &(*pe)->next)
		if ((*pe)->tp == tp) {
			rc__qtp *e = *pe;
			if (take)
				*pe = e->next;
			return e;
		}
	return NULL;
}

static bool rc__quic_secure(rc_tp *tp, const struct rc_tls_peer **peer)
{
	rc__qtp *e;

	*peer = NULL;
	pthread_mutex_lock(&rc__qtp_mu);
	if ((e = rc__qtp_find(tp, false)) != NULL && e->who != NULL && e->who->has)
		*peer = &e->who->peer;
	pthread_mutex_unlock(&rc__qtp_mu);
	return true;
}

static void rc__quic_close(rc_tp *tp)
{
	rc__qtp *e;

	pthread_mutex_lock(&rc__qtp_mu);
	e = rc__qtp_find(tp, true);
	pthread_mutex_unlock(&rc__qtp_mu);
	rc__quic_stream_vt->close(tp);
	if (e == NULL)
		return;
	if (e->ep != NULL)
		rc__qep_free(e->ep); /* its thread sees the pipe closed, closes with RPC_NO_ERROR */
	rc__qpeer_release(e->who);
	free(e);
}

/* Make the runtime's end fd (taken) of a pipe a transport: RC_OK with *out; on failure fd is
 * closed (and ep, when given, freed). */
static rc_status rc__quic_wrap(int fd, size_t max_record, rc__qpeer *who, rc__qep *ep,
                               bool nonblock, rc_tp **out)
{
	extern const rc_tp_kind rc__unix_kind;
	rc__qtp *e = calloc(1, sizeof(*e));
	rc_status st;

	if (e == NULL || (st = rc__unix_kind.adopt(fd, max_record, false, out)) != RC_OK) {
		free(e);
		close(fd);
		if (ep)
			rc__qep_free(ep);
		return RC_NOMEM;
	}
	(void)rc__tp_set_nonblock(*out, nonblock);
	e->tp = *out;
	e->who = who;
	if (who != NULL)
		atomic_fetch_add(&who->refs, 1);
	e->ep = ep;
	pthread_mutex_lock(&rc__qtp_mu);
	if (rc__quic_stream_vt == NULL) {
		rc__quic_stream_vt = (*out)->vt;
		rc__quic_conn_vt = *(*out)->vt;
		rc__quic_conn_vt.close = rc__quic_close;
		rc__quic_conn_vt.secure = rc__quic_secure;
		rc__quic_conn_vt.starttls = NULL;
	}
	(*out)->vt = &rc__quic_conn_vt;
	e->next = rc__qtp_tab[rc__qtp_hash(*out)];
	rc__qtp_tab[rc__qtp_hash(*out)] = e;
	pthread_mutex_unlock(&rc__qtp_mu);
	return RC_OK;
}

/* ---- URI keys ----------------------------------------------------------------------------- */

static bool rc__quic_key(void *ctx, const rc__uri_key *k, const char *val)
{
	unsigned *streams = ctx;
	char *end;
	unsigned long v;

	if (strcmp(k->name, "streams") != 0)
		return true;
	v = strtoul(val, &end, 10);
	if (*end != '\0' || v < 1 || v > RC__Q_POOL_MAX) {
		rc__tp_set_detail("URI query: streams=%s: 1 to %d", val, RC__Q_POOL_MAX);
		return false;
	}
	*streams = (unsigned)v;
	return true;
}

/* ---- the client --------------------------------------------------------------------------- */

static rc_status rc__quic_connect(const rc_uri *u, size_t max_record, int64_t deadline,
                                  rc_tp **out)
{
	rc_peer to;
	rc_status st;
	rc__qep *ep;
	rc__qconn *qc;
	int fd, rfd = -1;
	ngtcp2_cid dcid, scid;
	ngtcp2_callbacks cb;
	ngtcp2_settings sts;
	ngtcp2_transport_params tp;
	ngtcp2_path path;
	rc__tls_files none = {0};
	const rc__tls_files *f = u->tls ? rc__tls_ctx_files(u->tls) : &none;
	char qbuf[RC_URI_MAX];
	unsigned streams = RC__Q_POOL;

	*out = NULL;
	if (u->port < 0) {
		rc__tp_set_detail("quic:// needs a port");
		return RC_UNKNOWNADDR;
	}
	if (u->query[0] != '\0' &&
	    (st = rc__uri_query(u->query, RC__URIQ_CLIENT, rc__quic_key, &streams, qbuf,
	                        sizeof(qbuf))) != RC_OK)
		return st;
	if ((st = rc__resolve(u, SOCK_DGRAM, &to)) != RC_OK)
		return st;
	if ((fd = socket(to.ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return RC_CANTSEND;
	if (connect(fd, (struct sockaddr *)&to.ss, to.len) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return RC_CANTSEND;
	}
	if ((ep = rc__qep_new(fd, false, max_record)) == NULL)
		return RC_NOMEM;
	ep->streams = streams;
	snprintf(ep->name, sizeof(ep->name), "%s", f->name ? f->name : u->host);
	if ((st = rc__qep_certs(ep, f)) != RC_OK) {
		rc__qep_free(ep);
		return st;
	}
	if ((qc = calloc(1, sizeof(*qc))) == NULL) {
		rc__qep_free(ep);
		return RC_NOMEM;
	}
	qc->ep = ep;
	ep->conns = qc;
	ep->nconns = 1;
	memcpy(&qc->peer, &to.ss, to.len);
	qc->peerlen = to.len;
	qc->locallen = sizeof(qc->local);
	(void)getsockname(fd, (struct sockaddr *)&qc->local, &qc->locallen);
	dcid.datalen = 18;
	scid.datalen = RC__Q_SCIDLEN;
	(void)gnutls_rnd(GNUTLS_RND_RANDOM, dcid.data, dcid.datalen);
	(void)gnutls_rnd(GNUTLS_RND_RANDOM, scid.data, scid.datalen);
	rc__q_callbacks(&cb, false);
	rc__q_settings(ep, &qc->peer, &sts, &tp);
	path.local.addr = (ngtcp2_sockaddr *)&qc->local;
	path.local.addrlen = qc->locallen;
	path.remote.addr = (ngtcp2_sockaddr *)&qc->peer;
	path.remote.addrlen = qc->peerlen;
	path.user_data = NULL;
	if (ngtcp2_conn_client_new(&qc->conn, &dcid, &scid, &path, NGTCP2_PROTO_VER_V1, &cb, &sts,
	                           &tp, NULL, qc) != 0 ||
	    rc__q_session(qc) != 0 || (qc->cpipe = rc__qpipe_new(qc, &rfd)) == NULL) {
		rc__qep_free(ep);
		return RC_NOMEM;
	}
	if ((st = rc__qep_start(ep)) != RC_OK) {
		close(rfd);
		rc__qep_free(ep);
		return st;
	}
	/* the thread runs the handshake; wait for it, by the deadline */
	pthread_mutex_lock(&ep->mu);
	while (ep->state == 0) {
		if (deadline == 0) {
			pthread_cond_wait(&ep->cv, &ep->mu);
			continue;
		}
		struct timespec at;
		int64_t left = deadline - (int64_t)rc__q_now();
		if (left <= 0)
			break;
		clock_gettime(CLOCK_REALTIME, &at);
		at.tv_sec += left / 1000000000;
		at.tv_nsec += left % 1000000000;
		if (at.tv_nsec >= 1000000000) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000;
		}
		(void)pthread_cond_timedwait(&ep->cv, &ep->mu, &at);
	}
	st = ep->state == 1 ? RC_OK : ep->state < 0 ? RC_TLSFAILED : RC_TIMEDOUT;
	if (st == RC_TLSFAILED)
		rc__tp_set_detail("%s", ep->why);
	pthread_mutex_unlock(&ep->mu);
	if (st != RC_OK) {
		close(rfd);
		rc__qep_free(ep);
		return st;
	}
	return rc__quic_wrap(rfd, max_record, NULL, ep, false, out);
}

/* ---- the listener ------------------------------------------------------------------------- */

typedef struct rc__qlsn {
	rc_tp tp; /* fd: an eventfd, readable while accepted streams wait */
	rc__qep *ep;
} rc__qlsn;

static rc_status rc__qlsn_accept(rc_tp *tp, rc_tp **out, size_t max_record)
{
	rc__qep *ep = ((rc__qlsn *)tp)->ep;
	rc__qacc *a;
	rc_status st;
	uint64_t v;

	pthread_mutex_lock(&ep->mu);
	if ((a = ep->acq) != NULL) {
		ep->acq = a->next;
		if (ep->acq == NULL)
			ep->acq_tail = NULL;
	} else {
		(void)!read(ep->afd, &v, sizeof(v)); /* nothing waits: not readable until more do */
	}
	pthread_mutex_unlock(&ep->mu);
	if (a == NULL)
		return RC_AGAIN;
	st = rc__quic_wrap(a->fd, max_record, a->who, NULL, true, out);
	rc__qpeer_release(a->who);
	free(a);
	return st;
}

static void rc__qlsn_close(rc_tp *tp)
{
	rc__qlsn *l = (rc__qlsn *)tp;

	rc__qep_free(l->ep);
	free(l);
}

static void rc__qlsn_shutdown(rc_tp *tp, bool both)
{
	(void)tp;
	(void)both;
}

static const rc_tp_vt rc__qlsn_vt = {
	.outq = rc__tp_nothing_queued,
	.buffered = rc__tp_nothing_buffered,
	.hung_up = rc__tp_never_hung_up,
	.accept = rc__qlsn_accept,
	.shutdown = rc__qlsn_shutdown,
	.close = rc__qlsn_close,
};

static rc_status rc__quic_listen(const rc_uri *u, size_t max_record,
                                 const rc_tp_deliver *deliver, rc_tp **out, char *bound,
                                 size_t len)
{
	rc_peer at;
	rc_status st;
	int fd, one = 1;
	rc__qep *ep;
	rc__qlsn *l;
	const rc__tls_files *f;
	char qbuf[RC_URI_MAX];
	unsigned streams = RC__Q_SRV_STREAMS;

	(void)deliver;
	*out = NULL;
	if (u->tls == NULL) {
		rc__tp_set_detail("quic:// needs the server's certificate: rc_server_set_tls first");
		return RC_INVAL;
	}
	f = rc__tls_ctx_files(u->tls);
	if (u->query[0] != '\0' &&
	    (st = rc__uri_query(u->query, RC__URIQ_LISTEN, rc__quic_key, &streams, qbuf,
	                        sizeof(qbuf))) != RC_OK)
		return st;
	if ((st = rc__resolve(u, SOCK_DGRAM, &at)) != RC_OK)
		return st;
	if ((fd = socket(at.ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return RC_LOCALERROR;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&at.ss, at.len) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return RC_LOCALERROR;
	}
	if ((st = rc__sock_bound_uri(fd, "quic", bound, len)) != RC_OK) {
		close(fd);
		return st;
	}
	if ((ep = rc__qep_new(fd, true, max_record)) == NULL)
		return RC_NOMEM;
	ep->streams = streams;
	ep->clientcert = f->clientcert;
	if ((st = rc__qep_certs(ep, f)) != RC_OK) {
		rc__qep_free(ep);
		return st;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		rc__qep_free(ep);
		return RC_NOMEM;
	}
	l->ep = ep;
	l->tp.vt = &rc__qlsn_vt;
	l->tp.fd = ep->afd;
	l->tp.props = RC_TPP_STREAM;
	l->tp.listener = true;
	l->tp.max_msg = max_record;
	l->tp.rcvtimeo_ms = -1;
	if ((st = rc__qep_start(ep)) != RC_OK) {
		rc__qlsn_close(&l->tp);
		return st;
	}
	*out = &l->tp;
	return RC_OK;
}

/* quic.h: what the listener tp has counted. */
void rc__quic_lsn_stats(rc_tp *tp, rc__quic_stats *out)
{
	rc__qep *ep;

	memset(out, 0, sizeof(*out));
	if (tp == NULL || tp->vt != &rc__qlsn_vt)
		return;
	ep = ((rc__qlsn *)tp)->ep;
	pthread_mutex_lock(&ep->mu);
	*out = ep->st;
	pthread_mutex_unlock(&ep->mu);
}

const rc_tp_kind rc__quic_kind = {"quic", RC_TPP_STREAM, rc__quic_connect, rc__quic_listen,
                                  NULL};

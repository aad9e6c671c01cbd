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
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include "transports/quic.h"
#include "transports/quic_ngtcp2.h"
#include "transports/tls.h"
#include "transports/transport.h"

#define RC__Q_POOL 4             /* a client's streams, unless ?streams=N */
#define RC__Q_POOL_MAX 64        /* the most ?streams=N takes */
#define RC__Q_SRV_STREAMS 16     /* streams a client may open, unless ?streams=N on listen */
#define RC__Q_BACK_STREAMS 4     /* streams a server may open to a client (calls back) */
#define RC__Q_MAX_CONNS 1024     /* connections one listener holds */
#define RC__Q_IDLE_MS 30000      /* the idle timeout */
#define RC__Q_STREAM_WIN ((uint64_t)4 << 20)  /* initial stream flow-control window */
#define RC__Q_CONN_WIN ((uint64_t)16 << 20)   /* initial connection window */
#define RC__Q_PIPE_HIWAT ((size_t)8 << 20)    /* bytes queued to a pipe before credit waits */
#define RC__Q_PKT 1452           /* the largest UDP payload sent (off loopback) */
#define RC__Q_PKT_LO 16384       /* ... to a loopback peer (the loopback MTU is 64 KiB) */
#define RC__Q_GSO_BYTES 65000    /* a batch of packets sent at once (UDP GSO) */
#define RC__Q_GSO_SEGS 64
#define RC__Q_SOCKBUF (4 << 20)  /* UDP socket buffers asked for */
#define RC__Q_RX_TURN (256 << 10) /* bytes received in one turn of the endpoint's loop */
#define RC__Q_SCIDLEN 16
#define RC__Q_MAXCIDS 8
#define RC__Q_BACKMAP 64         /* a client's calls back awaiting its reply */

static const char rc__q_prio[] = "NORMAL:-VERS-ALL:+VERS-TLS1.3:%DISABLE_TLS13_COMPAT_MODE";
static const char rc__q_alpn[] = "sunrpc";
static atomic_uint rc__q_idle_ms;

void rc__quic_set_idle_ms(unsigned ms)
{
	atomic_store(&rc__q_idle_ms, ms);
}

static uint64_t rc__q_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- objects ------------------------------------------------------------------------------ */

/* A piece of bytes queued to a stream or a pipe: off is its stream offset (streams). */
typedef struct rc__qchunk {
	struct rc__qchunk *next;
	unsigned char *p;
	size_t len;
	uint64_t off;
} rc__qchunk;

/* Who a connection's peer is (its verified certificate), shared by the transports of its
 * pipes: freed by the last release. */
typedef struct rc__qpeer {
	atomic_uint refs;
	bool has;
	rc_tls_peer peer;
	char *subject;
	char **sans;
	bool has_cb; /* cb: the session's channel-binding value (RFC 9266), for RPCSEC_GSS */
	unsigned char cb[RC_TP_EXPORTER_LEN];
} rc__qpeer;

typedef struct rc__qep rc__qep;
typedef struct rc__qconn rc__qconn;
typedef struct rc__qpipe rc__qpipe;
typedef struct rc__qstrm rc__qstrm;

enum { RC__QEV_UDP = 1, RC__QEV_WAKE, RC__QEV_PIPE };

struct rc__qpipe {
	int kind;         /* RC__QEV_PIPE: the epoll tag */
	int fd;           /* the endpoint's end */
	rc__qconn *qc;
	rc__qstrm *home;  /* server: the client's stream it carries */
	rc__qstrm *back;  /* server: the stream it opened for calls back */
	rc__qmsg in;      /* messages from the runtime */
	rc__qchunk *oq, *oq_tail; /* to the runtime */
	size_t oq_off, oq_bytes;
	bool out_armed, dead;
	rc__qpipe *next;
};

struct rc__qstrm {
	int64_t id;
	rc__qconn *qc;
	rc__qpipe *pipe;  /* NULL: its pipe is gone */
	bool local;       /* we opened it: we send calls on it, replies come */
	rc__qmsg in;
	rc__qchunk *sq, *sq_tail; /* queued, oldest first; freed once acknowledged */
	rc__qchunk *snext;        /* the first chunk with bytes not yet given to ngtcp2 */
	size_t snext_pos;
	uint64_t end, acked;
	size_t unsent;
	unsigned calls;   /* client: calls on it awaiting replies */
	unsigned round;   /* blocked in this write round */
	uint64_t owed;    /* flow-control credit held back while the pipe is full */
	bool fin_want, fin_sent, gone;
	rc__qstrm *next;
};

struct rc__qconn {
	rc__qep *ep;
	ngtcp2_conn *conn;
	gnutls_session_t ses;
	ngtcp2_crypto_conn_ref ref;
	struct sockaddr_storage peer, local;
	socklen_t peerlen, locallen;
	ngtcp2_cid cids[RC__Q_MAXCIDS]; /* server: the IDs that route packets here */
	size_t ncids;
	rc__qstrm *streams;
	rc__qpipe *pipes;
	rc__qpipe *cpipe;  /* client: its one pipe */
	unsigned nlocal;   /* local streams open */
	rc__qpeer *who;
	struct {
		uint32_t xid;
		int64_t sid;
	} back[RC__Q_BACKMAP]; /* client: calls back awaiting replies */
	unsigned nback;
	unsigned round;
	int64_t last_sent; /* the stream rc__qc_pick_write gave last */
	bool handshaken, dead, close_want;
	int close_how;
	int64_t close_code;
	rc__qconn *next;
};

/* An accepted stream waiting for the server's accept: the runtime's end and who. */
typedef struct rc__qacc {
	struct rc__qacc *next;
	int fd;
	rc__qpeer *who;
} rc__qacc;

struct rc__qep {
	bool server;
	int ufd, wfd, epfd, afd;
	int ev_udp, ev_wake; /* epoll tags */
	pthread_t thr;
	bool started;
	atomic_bool stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int state; /* client: 0 connecting, 1 up, -1 failed (why) */
	char why[256];
	gnutls_certificate_credentials_t cred;
	rc_tls_clientcert clientcert;
	char name[256];
	size_t max_record;
	unsigned streams;
	unsigned nconns;
	uint64_t idle_ns;
	rc__qconn *conns;
	rc__qpeer *who; /* client: its connection's, once the handshake is done (under mu) */
	rc__qacc *acq, *acq_tail; /* server: under mu */
	rc__quic_stats st;        /* under mu */
	bool gso;                 /* UDP_SEGMENT on sends (UDP_GRO is asked for on receives) */
	unsigned char rx[65536];
	unsigned char tx[RC__Q_GSO_BYTES + RC__Q_PKT_LO];
};

static void rc__qpeer_release(rc__qpeer *w)
{
	if (w == NULL || atomic_fetch_sub(&w->refs, 1) != 1)
		return;
	for (size_t i = 0; i < w->peer.nsans; i++)
		free(w->sans[i]);
	free(w->sans);
	free(w->subject);
	free(w);
}

static void rc__q_count(rc__qep *ep, uint64_t *ctr)
{
	pthread_mutex_lock(&ep->mu);
	(*ctr)++;
	pthread_mutex_unlock(&ep->mu);
}

/* ---- pipes -------------------------------------------------------------------------------- */

static void rc__qstrm_write_credit(rc__qstrm *s);
static void rc__qc_close(rc__qconn *qc, int how, int64_t code);

static void rc__qpipe_arm(rc__qpipe *p, bool out)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (out ? EPOLLOUT : 0),
	                         .data.ptr = p};

	if (p->out_armed == out)
		return;
	p->out_armed = out;
	(void)epoll_ctl(p->qc->ep->epfd, EPOLL_CTL_MOD, p->fd, &ev);
}

/* A pipe ends (its runtime end closed, or its connection gone): its streams forget it. */
static void rc__qpipe_kill(rc__qpipe *p)
{
	if (p->dead)
		return;
	p->dead = true;
	(void)epoll_ctl(p->qc->ep->epfd, EPOLL_CTL_DEL, p->fd, NULL);
	close(p->fd);
	p->fd = -1;
	for (rc__qstrm *s = p->qc->streams; s != NULL; s = s->next)
		if (s->pipe == p) {
			s->pipe = NULL;
			if (!s->gone)
				s->fin_want = true;
		}
	if (p->qc->cpipe == p) /* a client's runtime closed: end the connection */
		rc__qc_close(p->qc, RC__NG_CLOSE_APP, RC_QUIC_NO_ERROR);
}

/* Free a list of chunks and their bytes. */
static void rc__qchunks_free(rc__qchunk *c)
{
	while (c != NULL) {
		rc__qchunk *n = c->next;
		free(c->p);
		free(c);
		c = n;
	}
}

static void rc__qpipe_free(rc__qpipe *p)
{
	rc__qchunks_free(p->oq);
	rc__qmsg_free(&p->in);
	free(p);
}

/* Write what is queued to the runtime, as far as the socket takes it. */
static void rc__qpipe_flush(rc__qpipe *p)
{
	while (!p->dead && p->oq != NULL) {
		struct iovec iov[16];
		int n = 0;
		ssize_t w;

		for (rc__qchunk *c = p->oq; c != NULL && n < 16; c = c->next, n++) {
			iov[n].iov_base = c->p + (n == 0 ? p->oq_off : 0);
			iov[n].iov_len = c->len - (n == 0 ? p->oq_off : 0);
		}
		w = writev(p->fd, iov, n);
		if (w < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			rc__qpipe_kill(p);
			return;
		}
		p->oq_bytes -= (size_t)w;
		while (w > 0) {
			rc__qchunk *c = p->oq;
			size_t left = c->len - p->oq_off;
			if ((size_t)w < left) {
				p->oq_off += (size_t)w;
				break;
			}
			w -= (ssize_t)left;
			p->oq = c->next;
			p->oq_off = 0;
			free(c->p);
			free(c);
		}
		if (p->oq == NULL)
			p->oq_tail = NULL;
	}
	if (p->dead)
		return;
	rc__qpipe_arm(p, p->oq != NULL);
	if (p->oq_bytes < RC__Q_PIPE_HIWAT)
		for (rc__qstrm *s = p->qc->streams; s != NULL; s = s->next)
			if (s->pipe == p && s->owed > 0)
				rc__qstrm_write_credit(s);
}

/* Queue msg[0..len) (taken: freed with the chunk) to the runtime. */
static void rc__qpipe_put(rc__qpipe *p, unsigned char *msg, size_t len)
{
	rc__qchunk *c;

	if (p == NULL || p->dead || (c = calloc(1, sizeof(*c))) == NULL) {
		free(msg);
		return;
	}
	c->p = msg;
	c->len = len;
	if (p->oq_tail)
		p->oq_tail->next = c;
	else
		p->oq = c;
	p->oq_tail = c;
	p->oq_bytes += len;
	rc__qpipe_flush(p);
}

/* ---- streams ------------------------------------------------------------------------------ */

static rc__qstrm *rc__qstrm_new(rc__qconn *qc, int64_t id, rc__qpipe *p, bool local)
{
	rc__qstrm *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->id = id;
	s->qc = qc;
	s->pipe = p;
	s->local = local;
	rc__qmsg_init(&s->in, qc->ep->max_record);
	s->next = qc->streams;
	qc->streams = s;
	(void)ngtcp2_conn_set_stream_user_data(qc->conn, id, s);
	if (local)
		qc->nlocal++;
	return s;
}

static void rc__qstrm_free(rc__qstrm *s)
{
	rc__qchunks_free(s->sq);
	rc__qmsg_free(&s->in);
	free(s);
}

/* Queue msg[0..len) (taken) on stream s. */
static void rc__qstrm_put(rc__qstrm *s, unsigned char *msg, size_t len)
{
	rc__qchunk *c;

	if (s == NULL || s->gone || s->fin_want || (c = calloc(1, sizeof(*c))) == NULL) {
		free(msg);
		return;
	}
	c->p = msg;
	c->len = len;
	c->off = s->end;
	s->end += len;
	s->unsent += len;
	if (s->sq_tail)
		s->sq_tail->next = c;
	else
		s->sq = c;
	s->sq_tail = c;
	if (s->snext == NULL) {
		s->snext = c;
		s->snext_pos = 0;
	}
}

/* Give back the flow-control credit of bytes delivered (or held back while the pipe was
 * full). */
static void rc__qstrm_credit(rc__qstrm *s, uint64_t n)
{
	if (s->pipe != NULL && s->pipe->oq_bytes >= RC__Q_PIPE_HIWAT) {
		s->owed += n;
		return;
	}
	(void)ngtcp2_conn_extend_max_stream_offset(s->qc->conn, s->id, n);
	ngtcp2_conn_extend_max_offset(s->qc->conn, n);
}

static void rc__qstrm_write_credit(rc__qstrm *s)
{
	uint64_t n = s->owed;

	s->owed = 0;
	rc__qstrm_credit(s, n);
}

/* ---- routing ------------------------------------------------------------------------------ */

static void rc__qc_close(rc__qconn *qc, int how, int64_t code)
{
	if (!qc->close_want) {
		qc->close_want = true;
		qc->close_how = how;
		qc->close_code = code;
	}
}

/* A client's stream for its next call: the least busy of the pool, or a new one while the
 * pool is not full and every open one has calls out. */
static rc__qstrm *rc__qc_pick_call(rc__qconn *qc)
{
	rc__qstrm *best = NULL;
	int64_t id;

	for (rc__qstrm *s = qc->streams; s != NULL; s = s->next) {
		if (!s->local || s->gone || s->fin_want)
			continue;
		if (best == NULL || s->calls + s->unsent / 65536 < best->calls + best->unsent / 65536)
			best = s;
	}
	if ((best == NULL || best->calls > 0) && qc->nlocal < qc->ep->streams &&
	    ngtcp2_conn_open_bidi_stream(qc->conn, &id, NULL) == 0) {
		rc__qstrm *s = rc__qstrm_new(qc, id, qc->cpipe, true);
		if (s != NULL)
			best = s;
	}
	return best;
}

/* A whole message msg[0..len) of type `type` and XID xid came from pipe p: send it on the
 * stream the draft says. */
static void rc__qpipe_route(rc__qpipe *p, uint32_t type, uint32_t xid, unsigned char *msg,
                            size_t len)
{
	rc__qconn *qc = p->qc;
	rc__qstrm *s = NULL;
	int64_t id;

	if (type == 0 && qc->ep->server) { /* a call back: on the pipe's own server stream */
		if (p->back == NULL && ngtcp2_conn_open_bidi_stream(qc->conn, &id, NULL) == 0)
			p->back = rc__qstrm_new(qc, id, p, true);
		s = p->back;
	} else if (type == 0) {
		s = rc__qc_pick_call(qc);
	} else if (type == 1 && qc->ep->server) {
		s = p->home;
	} else if (type == 1) { /* a client's reply to a call back: where the call came from */
		for (unsigned i = 0; i < qc->nback; i++) {
			if (qc->back[i].xid != xid)
				continue;
			for (rc__qstrm *t = qc->streams; t != NULL; t = t->next)
				if (t->id == qc->back[i].sid)
					s = t;
			qc->back[i] = qc->back[--qc->nback];
			break;
		}
	}
	if (s != NULL && type == 0)
		s->calls++;
	rc__qstrm_put(s, msg, len); /* (s NULL: dropped -- nowhere to go) */
}

/* A whole message came on stream s: check its direction, pass it to the pipe. */
static void rc__qstrm_route(rc__qstrm *s, unsigned char *msg, size_t len, uint32_t type,
                            uint32_t xid)
{
	rc__qconn *qc = s->qc;

	if (type != (s->local ? 1u : 0u)) { /* the draft: dropped silently */
		rc__q_count(qc->ep, &qc->ep->st.wrong_direction);
		free(msg);
		return;
	}
	if (s->local && s->calls > 0)
		s->calls--;
	if (!s->local && !qc->ep->server) {
		if (qc->nback == RC__Q_BACKMAP) { /* too many calls back at once: drop this one */
			free(msg);
			return;
		}
		qc->back[qc->nback].xid = xid;
		qc->back[qc->nback++].sid = s->id;
	}
	rc__qpipe_put(s->pipe, msg, len);
}

/* Bytes p[0..n) of stream s: whole messages on; a bad record closes the connection. */
static void rc__qstrm_feed(rc__qstrm *s, const uint8_t *p, size_t n)
{
	while (n > 0) {
		size_t used = 0, len;
		int r = rc__qmsg_feed(&s->in, p, n, &used);
		if (r == RC__QMSG_BAD) {
			rc__q_count(s->qc->ep, &s->qc->ep->st.bad_records);
			rc__qc_close(s->qc, RC__NG_CLOSE_APP, RC_QUIC_PROTOCOL_VIOLATION);
			return;
		}
		if (r == RC__QMSG_MORE)
			return;
		uint32_t type = rc__qmsg_type(&s->in), xid = rc__qmsg_xid(&s->in);
		unsigned char *msg = rc__qmsg_take(&s->in, &len);
		if (s->pipe == NULL)
			free(msg);
		else
			rc__qstrm_route(s, msg, len, type, xid);
		p += used;
		n -= used;
	}
}

/* The runtime's end of p is readable (or closed). */
static void rc__qpipe_read(rc__qep *ep, rc__qpipe *p)
{
	for (int rounds = 0; rounds < 16 && !p->dead; rounds++) {
		ssize_t n = read(p->fd, ep->rx, sizeof(ep->rx));
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			rc__qpipe_kill(p);
			return;
		}
		const unsigned char *b = ep->rx;
		size_t left = (size_t)n;
		while (left > 0) {
			size_t used = 0, len;
			int r = rc__qmsg_feed(&p->in, b, left, &used);
			if (r == RC__QMSG_BAD) {
				rc__qpipe_kill(p);
				return;
			}
			if (r == RC__QMSG_MORE)
				break;
			uint32_t type = rc__qmsg_type(&p->in), xid = rc__qmsg_xid(&p->in);
			unsigned char *msg = rc__qmsg_take(&p->in, &len);
			rc__qpipe_route(p, type, xid, msg, len);
			b += used;
			left -= used;
		}
		if ((size_t)n < sizeof(ep->rx))
			return;
	}
}

/* A new pipe of qc; the runtime's end in *rfd. NULL when descriptors or memory are short. */
static rc__qpipe *rc__qpipe_new(rc__qconn *qc, int *rfd)
{
	int sv[2];
	rc__qpipe *p;
	int sz = 4 << 20;
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP};

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		free(p);
		return NULL;
	}
	for (int i = 0; i < 2; i++) {
		(void)setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		(void)setsockopt(sv[i], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	(void)fcntl(sv[0], F_SETFL, O_NONBLOCK);
	p->kind = RC__QEV_PIPE;
	p->fd = sv[0];
	p->qc = qc;
	rc__qmsg_init(&p->in, qc->ep->max_record);
	ev.data.ptr = p;
	if (epoll_ctl(qc->ep->epfd, EPOLL_CTL_ADD, p->fd, &ev) != 0) {
		close(sv[0]);
		close(sv[1]);
		rc__qmsg_free(&p->in);
		free(p);
		return NULL;
	}
	p->next = qc->pipes;
	qc->pipes = p;
	*rfd = sv[1];
	return p;
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
static void rc__q_offer(rc__qep *ep, int rfd, rc__qpeer *who)
{
	rc__qacc *a = calloc(1, sizeof(*a));
	uint64_t one = 1;

	if (a == NULL) {
		close(rfd);
		return;
	}
	a->fd = rfd;
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
	int rfd;

	(void)conn;
	if (id & 2) /* unidirectional: the draft uses none (their limit is 0 anyway) */
		return 0;
	if (!qc->ep->server) { /* a server's stream: calls back into the client's pipe */
		(void)rc__qstrm_new(qc, id, qc->cpipe, false);
		return 0;
	}
	if ((p = rc__qpipe_new(qc, &rfd)) == NULL) {
		(void)rc__ng_shutdown_stream(conn, id, RC_QUIC_SERVER_BUSY);
		return 0;
	}
	if ((s = rc__qstrm_new(qc, id, p, false)) == NULL) {
		close(rfd);
		rc__qpipe_kill(p);
		(void)rc__ng_shutdown_stream(conn, id, RC_QUIC_SERVER_BUSY);
		return 0;
	}
	p->home = s;
	rc__q_offer(qc->ep, rfd, qc->who);
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
		(void)shutdown(s->pipe->fd, SHUT_WR); /* no more calls: the server connection reads
		                                         its end after them, answers, and closes */
	(void)id;
	return 0;
}

static int rc__q_acked(ngtcp2_conn *conn, int64_t id, uint64_t off, uint64_t len, void *user,
                       void *suser)
{
	rc__qstrm *s = suser;

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
		free(c->p);
		free(c);
	}
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

static void rc__q_callbacks(ngtcp2_callbacks *cb, bool server)
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
static void rc__q_settings(rc__qep *ep, const struct sockaddr_storage *peer, ngtcp2_settings *st,
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
static int rc__q_session(rc__qconn *qc)
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

static void rc__qc_free(rc__qconn *qc)
{
	for (rc__qpipe *p = qc->pipes, *n; p != NULL; p = n) {
		n = p->next;
		rc__qpipe_kill(p);
		rc__qpipe_free(p);
	}
	for (rc__qstrm *s = qc->streams, *n; s != NULL; s = n) {
		n = s->next;
		rc__qstrm_free(s);
	}
	if (qc->conn)
		ngtcp2_conn_del(qc->conn);
	if (qc->ses)
		gnutls_deinit(qc->ses);
	rc__qpeer_release(qc->who);
	free(qc);
}

/* Send buf[0..len) to qc's peer: one packet, or (len > seg) packets of seg bytes, the last
 * maybe shorter, as one UDP GSO send. A batch the kernel will not segment goes one packet at a
 * time, and GSO stays off for the endpoint. A send the socket cannot take now is dropped, as
 * the network may drop it: QUIC's loss recovery sends it again. */
static void rc__qc_send_gso(rc__qconn *qc, const uint8_t *buf, size_t len, size_t seg)
{
	rc__qep *ep = qc->ep;
	struct iovec iov = {(void *)buf, len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	union {
		char b[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} ctl;

	if (ep->server) {
		mh.msg_name = &qc->peer;
		mh.msg_namelen = qc->peerlen;
	}
	if (len > seg && ep->gso) {
		struct cmsghdr *cm = (struct cmsghdr *)ctl.b;
		uint16_t s16 = (uint16_t)seg;

		memset(ctl.b, 0, sizeof(ctl.b));
		cm->cmsg_level = SOL_UDP;
		cm->cmsg_type = UDP_SEGMENT;
		cm->cmsg_len = CMSG_LEN(sizeof(s16));
		memcpy(CMSG_DATA(cm), &s16, sizeof(s16));
		mh.msg_control = ctl.b;
		mh.msg_controllen = sizeof(ctl.b);
		if (sendmsg(ep->ufd, &mh, MSG_DONTWAIT) >= 0 || errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		ep->gso = false; /* (EIO, EINVAL, ENOPROTOOPT...: the kernel or device cannot) */
		mh.msg_control = NULL;
		mh.msg_controllen = 0;
	}
	for (size_t off = 0; off < len; off += seg) {
		iov.iov_base = (void *)(buf + off);
		iov.iov_len = len - off < seg ? len - off : seg;
		(void)sendmsg(ep->ufd, &mh, MSG_DONTWAIT);
	}
}

/* Send one packet of qc's. */
static void rc__qc_send(rc__qconn *qc, const uint8_t *pkt, size_t len)
{
	rc__qc_send_gso(qc, pkt, len, len);
}

/* qc's stream with bytes (or a FIN) to write that is not blocked this round: the one after
 * the last served (by stream ID, wrapping round), so each stream with data gets every n-th
 * packet -- a small call on one stream waits for one packet of a big one, not for all of it. */
static rc__qstrm *rc__qc_pick_write(rc__qconn *qc)
{
	rc__qstrm *next = NULL, *lowest = NULL;

	for (rc__qstrm *s = qc->streams; s != NULL; s = s->next) {
		if (s->gone || s->round == qc->round || (s->unsent == 0 && (!s->fin_want || s->fin_sent)))
			continue;
		if (s->id > qc->last_sent && (next == NULL || s->id < next->id))
			next = s;
		if (lowest == NULL || s->id < lowest->id)
			lowest = s;
	}
	if (next == NULL)
		next = lowest;
	if (next != NULL)
		qc->last_sent = next->id;
	return next;
}

/* Mark n bytes of s given to ngtcp2. */
static void rc__qstrm_sent(rc__qstrm *s, size_t n)
{
	s->unsent -= n;
	while (n > 0 && s->snext != NULL) {
		size_t left = s->snext->len - s->snext_pos;
		if (n < left) {
			s->snext_pos += n;
			return;
		}
		n -= left;
		s->snext = s->snext->next;
		s->snext_pos = 0;
	}
}

/* Fail qc now (an error from ngtcp2): a CONNECTION_CLOSE if one can be made, then gone. */
static void rc__qc_fail(rc__qconn *qc, int how, int64_t code)
{
	uint8_t pkt[RC__Q_PKT];
	ngtcp2_ssize n;

	if (qc->dead)
		return;
	if (!ngtcp2_conn_is_in_closing_period(qc->conn) &&
	    !ngtcp2_conn_is_in_draining_period(qc->conn) &&
	    (n = rc__ng_write_close(qc->conn, pkt, sizeof(pkt), how, code, rc__q_now())) > 0)
		rc__qc_send(qc, pkt, (size_t)n);
	qc->dead = true;
}

/* Write what qc has to send: stream data, acknowledgements, a close. Packets are written
 * one after another into the endpoint's tx buffer and leave in batches (rc__qc_send_gso): a
 * batch ends with a packet shorter than its first, or when the next might not fit. */
static void rc__qc_flush(rc__qconn *qc)
{
	uint8_t *tx = qc->ep->tx;
	size_t blen = 0, seg = 0, nseg = 0;
	size_t pmax = ngtcp2_conn_get_path_max_tx_udp_payload_size(qc->conn);
	ngtcp2_path_storage ps;
	ngtcp2_pkt_info pi;
	uint64_t ts = rc__q_now();
	rc__qstrm *s = NULL;

	if (qc->dead)
		return;
	if (pmax > RC__Q_PKT_LO)
		pmax = RC__Q_PKT_LO;
	if (qc->close_want) {
		rc__qc_fail(qc, qc->close_how, qc->close_code);
		return;
	}
	ngtcp2_path_storage_zero(&ps);
	qc->round++;
	for (int guard = 0; guard < 100000; guard++) {
		ngtcp2_vec v[16];
		size_t nv = 0, covered = 0;
		int64_t sid = -1;
		uint32_t fl = NGTCP2_WRITE_STREAM_FLAG_MORE;
		ngtcp2_ssize wlen = -1, n;

		if (s == NULL && qc->handshaken)
			s = rc__qc_pick_write(qc);
		if (s != NULL) {
			sid = s->id;
			for (rc__qchunk *c = s->snext; c != NULL && nv < 16; c = c->next, nv++) {
				size_t skip = c == s->snext ? s->snext_pos : 0;
				v[nv].base = c->p + skip;
				v[nv].len = c->len - skip;
				covered += v[nv].len;
			}
			if (s->fin_want && covered == s->unsent)
				fl |= NGTCP2_WRITE_STREAM_FLAG_FIN;
		}
		n = ngtcp2_conn_writev_stream(qc->conn, &ps.path, &pi, tx + blen, pmax, &wlen, fl,
		                              sid, v, nv, ts);
		if (n == NGTCP2_ERR_WRITE_MORE && s != NULL) {
			rc__qstrm_sent(s, (size_t)wlen);
			if ((fl & NGTCP2_WRITE_STREAM_FLAG_FIN) && s->unsent == 0)
				s->fin_sent = true;
			s = NULL;
			continue;
		}
		if (s != NULL && (n == NGTCP2_ERR_STREAM_DATA_BLOCKED || n == NGTCP2_ERR_STREAM_SHUT_WR ||
		                  n == NGTCP2_ERR_STREAM_NOT_FOUND)) {
			s->round = qc->round;
			s = NULL;
			continue;
		}
		if (n < 0) {
			if (blen > 0)
				rc__qc_send_gso(qc, tx, blen, seg);
			rc__qc_fail(qc, RC__NG_CLOSE_LIBERR, n);
			return;
		}
		if (s != NULL && wlen >= 0) {
			rc__qstrm_sent(s, (size_t)wlen);
			if ((fl & NGTCP2_WRITE_STREAM_FLAG_FIN) && s->unsent == 0)
				s->fin_sent = true;
		}
		s = NULL;
		if (n == 0)
			break;
		if (blen > 0 && (size_t)n > seg) { /* longer than the batch's: the batch goes first */
			rc__qc_send_gso(qc, tx, blen, seg);
			memmove(tx, tx + blen, (size_t)n);
			blen = 0;
		}
		if (blen == 0) {
			seg = (size_t)n;
			nseg = 0;
		}
		blen += (size_t)n;
		nseg++;
		if ((size_t)n < seg || blen + pmax > RC__Q_GSO_BYTES || nseg == RC__Q_GSO_SEGS ||
		    !qc->ep->gso) {
			rc__qc_send_gso(qc, tx, blen, seg);
			blen = 0;
		}
	}
	if (blen > 0)
		rc__qc_send_gso(qc, tx, blen, seg);
}

/* ---- the endpoint's thread ---------------------------------------------------------------- */

/* The connection a packet is for (server): by its destination connection ID. */
static rc__qconn *rc__qep_find(rc__qep *ep, const uint8_t *pkt, size_t len)
{
	ngtcp2_version_cid vc;

	if (ngtcp2_pkt_decode_version_cid(&vc, pkt, len, RC__Q_SCIDLEN) != 0)
		return NULL;
	for (rc__qconn *qc = ep->conns; qc != NULL; qc = qc->next)
		for (size_t i = 0; i < qc->ncids; i++)
			if (qc->cids[i].datalen == vc.dcidlen &&
			    memcmp(qc->cids[i].data, vc.dcid, vc.dcidlen) == 0)
				return qc;
	return NULL;
}

/* A server's new connection from an Initial packet, or NULL (dropped). */
static rc__qconn *rc__qep_accept(rc__qep *ep, const uint8_t *pkt, size_t len,
                                 const struct sockaddr_storage *from, socklen_t fromlen)
{
	ngtcp2_pkt_hd hd;
	rc__qconn *qc;
	ngtcp2_cid scid;
	ngtcp2_callbacks cb;
	ngtcp2_settings st;
	ngtcp2_transport_params tp;
	ngtcp2_path path;

	if (ngtcp2_accept(&hd, pkt, len) != 0)
		return NULL;
	if (ep->nconns >= RC__Q_MAX_CONNS) {
		rc__q_count(ep, &ep->st.refused);
		return NULL;
	}
	if ((qc = calloc(1, sizeof(*qc))) == NULL)
		return NULL;
	qc->ep = ep;
	memcpy(&qc->peer, from, fromlen);
	qc->peerlen = fromlen;
	qc->locallen = sizeof(qc->local);
	(void)getsockname(ep->ufd, (struct sockaddr *)&qc->local, &qc->locallen);
	scid.datalen = RC__Q_SCIDLEN;
	(void)gnutls_rnd(GNUTLS_RND_RANDOM, scid.data, scid.datalen);
	rc__q_callbacks(&cb, true);
	rc__q_settings(ep, from, &st, &tp);
	rc__ng_set_original_dcid(&tp, &hd.dcid);
	path.local.addr = (ngtcp2_sockaddr *)&qc->local;
	path.local.addrlen = qc->locallen;
	path.remote.addr = (ngtcp2_sockaddr *)&qc->peer;
	path.remote.addrlen = qc->peerlen;
	path.user_data = NULL;
	qc->cids[qc->ncids++] = hd.dcid;
	qc->cids[qc->ncids++] = scid;
	if (ngtcp2_conn_server_new(&qc->conn, &hd.scid, &scid, &path, hd.version, &cb, &st, &tp,
	                           NULL, qc) != 0 ||
	    rc__q_session(qc) != 0) {
		rc__qc_free(qc);
		return NULL;
	}
	qc->next = ep->conns;
	ep->conns = qc;
	ep->nconns++;
	return qc;
}

/* A library error from reading a packet: what it means for qc. */
static void rc__qc_read_error(rc__qconn *qc, int rv)
{
	rc__qep *ep = qc->ep;

	if (rv == NGTCP2_ERR_DRAINING || rv == NGTCP2_ERR_CLOSING || rv == NGTCP2_ERR_DROP_CONN) {
		qc->dead = true; /* the peer closed it (or we did) */
		return;
	}
	if (rv == NGTCP2_ERR_STREAM_LIMIT)
		rc__q_count(ep, &ep->st.stream_limit);
	if (!qc->handshaken) {
		int tls = ngtcp2_conn_get_tls_error(qc->conn);
		unsigned vs = 0;
		rc__q_count(ep, &ep->st.handshake_fails);
		pthread_mutex_lock(&ep->mu);
		if (!ep->server && ep->state == 0) {
			gnutls_datum_t out = {NULL, 0};
			if (gnutls_session_get_verify_cert_status(qc->ses) != 0 &&
			    (vs = gnutls_session_get_verify_cert_status(qc->ses)) != 0 &&
			    gnutls_certificate_verification_status_print(vs, GNUTLS_CRT_X509, &out, 0) == 0) {
				snprintf(ep->why, sizeof(ep->why), "QUIC TLS: %.*s", (int)out.size,
				         (const char *)out.data);
				gnutls_free(out.data);
			} else {
				snprintf(ep->why, sizeof(ep->why), "QUIC handshake: %s%s%s",
				         ngtcp2_strerror(rv), tls ? ": " : "",
				         tls ? gnutls_strerror(tls) : "");
			}
			ep->state = -1;
			pthread_cond_broadcast(&ep->cv);
		}
		pthread_mutex_unlock(&ep->mu);
	}
	if (rv == NGTCP2_ERR_CRYPTO && ngtcp2_conn_get_tls_alert(qc->conn) != 0) /* RFC 9001 4.8 */
		rc__qc_fail(qc, RC__NG_CLOSE_TLS, ngtcp2_conn_get_tls_alert(qc->conn));
	else
		rc__qc_fail(qc, RC__NG_CLOSE_LIBERR, rv);
}

/* One datagram (a QUIC packet, or several coalesced) from `from`: to its connection. */
static void rc__qep_packet(rc__qep *ep, uint8_t *pkt, size_t n, struct sockaddr_storage *from,
                           socklen_t fl)
{
	rc__qconn *qc;
	ngtcp2_path path;
	ngtcp2_pkt_info pi = {0};
	int rv;

	if (ep->server) {
		if ((qc = rc__qep_find(ep, pkt, n)) == NULL &&
		    (qc = rc__qep_accept(ep, pkt, n, from, fl)) == NULL)
			return;
	} else if ((qc = ep->conns) == NULL) {
		return;
	}
	if (qc->dead)
		return;
	path.local.addr = (ngtcp2_sockaddr *)&qc->local;
	path.local.addrlen = qc->locallen;
	path.remote.addr = (ngtcp2_sockaddr *)from;
	path.remote.addrlen = fl;
	path.user_data = NULL;
	rv = ngtcp2_conn_read_pkt(qc->conn, &path, &pi, pkt, n, rc__q_now());
	if (rv != 0)
		rc__qc_read_error(qc, rv);
}

/* Read the datagrams waiting on the endpoint's socket, up to RC__Q_RX_TURN bytes: then the
 * loop goes round (acknowledgements, other streams' data, the pipes) before it reads more, so
 * a burst of one big message does not hold up the rest. With receive offload (UDP_GRO) one
 * read may bring several datagrams of one sender, joined: each piece of the size the control
 * message gives (the last maybe shorter) is a datagram. */
static void rc__qep_read(rc__qep *ep)
{
	for (size_t got = 0; got < RC__Q_RX_TURN;) {
		struct sockaddr_storage from;
		struct iovec iov = {ep->rx, sizeof(ep->rx)};
		union {
			char b[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} ctl;
		struct msghdr mh = {.msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov,
		                    .msg_iovlen = 1, .msg_control = ctl.b,
		                    .msg_controllen = sizeof(ctl.b)};
		ssize_t n = recvmsg(ep->ufd, &mh, MSG_DONTWAIT);
		size_t seg;

		if (n < 0)
			return;
		got += (size_t)n;
		seg = (size_t)n;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO) {
				int v;
				memcpy(&v, CMSG_DATA(cm), sizeof(v));
				if (v > 0)
					seg = (size_t)v;
			}
		for (size_t off = 0; off < (size_t)n; off += seg)
			rc__qep_packet(ep, ep->rx + off, (size_t)n - off < seg ? (size_t)n - off : seg,
			               &from, mh.msg_namelen);
	}
}

/* Run qc's timers that are due; the next deadline (ns, UINT64_MAX: none). */
static uint64_t rc__qc_expire(rc__qconn *qc, uint64_t now)
{
	uint64_t at;
	int rv;

	if (qc->dead)
		return UINT64_MAX;
	at = ngtcp2_conn_get_expiry(qc->conn);
	if (at > now)
		return at;
	rv = ngtcp2_conn_handle_expiry(qc->conn, now);
	if (rv == NGTCP2_ERR_IDLE_CLOSE) {
		rc__q_count(qc->ep, &qc->ep->st.idle_closed);
		qc->dead = true;
		return UINT64_MAX;
	}
	if (rv != 0) {
		if (rv == NGTCP2_ERR_HANDSHAKE_TIMEOUT && !qc->handshaken)
			rc__qc_read_error(qc, rv);
		else
			rc__qc_fail(qc, RC__NG_CLOSE_LIBERR, rv);
		return UINT64_MAX;
	}
	return 0; /* flushed next, then asked again */
}

/* Free what ended in this round: dead connections, dead pipes. */
static void rc__qep_reap(rc__qep *ep)
{
	for (rc__qconn **pq = &ep->conns; *pq != NULL;) {
		rc__qconn *qc = *pq;
		if (qc->dead) {
			*pq = qc->next;
			ep->nconns--;
			if (qc->handshaken) {
				pthread_mutex_lock(&ep->mu);
				ep->st.open_conns--;
				pthread_mutex_unlock(&ep->mu);
			}
			rc__qc_free(qc);
			continue;
		}
		for (rc__qpipe **pp = &qc->pipes; *pp != NULL;) {
			rc__qpipe *p = *pp;
			if (p->dead) {
				*pp = p->next;
				if (qc->cpipe == p)
					qc->cpipe = NULL;
				rc__qpipe_free(p);
			} else {
				pp = &p->next;
			}
		}
		for (rc__qstrm **ps = &qc->streams; *ps != NULL;) {
			rc__qstrm *s = *ps;
			if (s->gone) {
				*ps = s->next;
				rc__qstrm_free(s);
			} else {
				ps = &s->next;
			}
		}
		pq = &qc->next;
	}
}

static void *rc__qep_run(void *arg)
{
	rc__qep *ep = arg;
	struct epoll_event evs[64];

	while (!atomic_load(&ep->stop)) {
		uint64_t now = rc__q_now(), next = UINT64_MAX;
		int tmo = -1, n;

		for (rc__qconn *qc = ep->conns; qc != NULL; qc = qc->next) {
			(void)rc__qc_expire(qc, now);
			rc__qc_flush(qc);
		}
		rc__qep_reap(ep);

		for (rc__qconn *qc = ep->conns; qc != NULL; qc = qc->next) {
			uint64_t at = ngtcp2_conn_get_expiry(qc->conn);
			if (!qc->dead && at < next)
				next = at;
		}
		if (next != UINT64_MAX)
			tmo = next <= now ? 0 : (int)((next - now + 999999) / 1000000);
		n = epoll_wait(ep->epfd, evs, 64, tmo);
		for (int i = 0; i < n; i++) {
			int *tag = evs[i].data.ptr;
			if (*tag == RC__QEV_UDP) {
				rc__qep_read(ep);
			} else if (*tag == RC__QEV_WAKE) {
				uint64_t v;
				(void)!read(ep->wfd, &v, sizeof(v));
			} else {
				rc__qpipe *p = (rc__qpipe *)tag;
				if (p->dead)
					continue;
				if (evs[i].events & EPOLLOUT)
					rc__qpipe_flush(p);
				if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP | EPOLLERR))
					rc__qpipe_read(ep, p);
			}
		}
	}
	for (rc__qconn *qc = ep->conns; qc != NULL; qc = qc->next)
		if (!qc->dead)
			rc__qc_fail(qc, RC__NG_CLOSE_APP, RC_QUIC_NO_ERROR);
	return NULL;
}

/* ---- endpoints ---------------------------------------------------------------------------- */

static void rc__qep_free(rc__qep *ep)
{
	if (ep->started) {
		uint64_t one = 1;
		atomic_store(&ep->stop, true);
		(void)!write(ep->wfd, &one, sizeof(one));
		pthread_join(ep->thr, NULL);
	}
	while (ep->conns != NULL) {
		rc__qconn *qc = ep->conns;
		ep->conns = qc->next;
		rc__qc_free(qc);
	}
	while (ep->acq != NULL) {
		rc__qacc *a = ep->acq;
		ep->acq = a->next;
		close(a->fd);
		rc__qpeer_release(a->who);
		free(a);
	}
	rc__qpeer_release(ep->who);
	if (ep->cred)
		gnutls_certificate_free_credentials(ep->cred);
	for (int *fd = &ep->ufd; fd <= &ep->afd; fd++)
		if (*fd >= 0)
			close(*fd);
	pthread_mutex_destroy(&ep->mu);
	pthread_cond_destroy(&ep->cv);
	free(ep);
}

/* A new endpoint on UDP socket ufd (taken), not running yet. */
static rc__qep *rc__qep_new(int ufd, bool server, size_t max_record)
{
	rc__qep *ep = calloc(1, sizeof(*ep));
	struct epoll_event ev = {.events = EPOLLIN};
	unsigned idle = atomic_load(&rc__q_idle_ms);

	if (ep == NULL) {
		close(ufd);
		return NULL;
	}
	ep->ufd = ufd;
	ep->wfd = ep->epfd = ep->afd = -1;
	ep->server = server;
	ep->max_record = max_record;
	ep->ev_udp = RC__QEV_UDP;
	ep->ev_wake = RC__QEV_WAKE;
	ep->idle_ns = (uint64_t)(idle ? idle : RC__Q_IDLE_MS) * NGTCP2_MILLISECONDS;
	pthread_mutex_init(&ep->mu, NULL);
	pthread_cond_init(&ep->cv, NULL);
	(void)fcntl(ufd, F_SETFL, O_NONBLOCK);
	(void)fcntl(ufd, F_SETFD, FD_CLOEXEC);
	for (int i = 0, sz = RC__Q_SOCKBUF; i < 2; i++) { /* bursts of a window's packets */
		int force = i ? SO_SNDBUFFORCE : SO_RCVBUFFORCE, opt = i ? SO_SNDBUF : SO_RCVBUF;
		if (setsockopt(ufd, SOL_SOCKET, force, &sz, sizeof(sz)) != 0)
			(void)setsockopt(ufd, SOL_SOCKET, opt, &sz, sizeof(sz));
	}
	{
		int one = 1;
		(void)setsockopt(ufd, SOL_UDP, UDP_GRO, &one, sizeof(one));
		ep->gso = true; /* until a send says otherwise (rc__qc_send_gso) */
	}
	if ((ep->wfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    (ep->afd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    (ep->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		goto fail;
	ev.data.ptr = &ep->ev_udp;
	if (epoll_ctl(ep->epfd, EPOLL_CTL_ADD, ufd, &ev) != 0)
		goto fail;
	ev.data.ptr = &ep->ev_wake;
	if (epoll_ctl(ep->epfd, EPOLL_CTL_ADD, ep->wfd, &ev) != 0)
		goto fail;
	if (gnutls_certificate_allocate_credentials(&ep->cred) != 0) {
		ep->cred = NULL;
		goto fail;
	}
	return ep;
fail:
	rc__qep_free(ep);
	return NULL;
}

/* Load the endpoint's certificates from the TLS context's files: RC_OK or RC_INVAL (detail
 * set). */
static rc_status rc__qep_certs(rc__qep *ep, const rc__tls_files *f)
{
	int rv = 0;
	const char *what = "";

	if (f->cert_file != NULL) {
		what = f->cert_file;
		rv = gnutls_certificate_set_x509_key_file(ep->cred, f->cert_file,
		                                          f->key_file ? f->key_file : f->cert_file,
		                                          GNUTLS_X509_FMT_PEM);
	}
	if (rv >= 0 && f->ca_file != NULL) {
		what = f->ca_file;
		rv = gnutls_certificate_set_x509_trust_file(ep->cred, f->ca_file, GNUTLS_X509_FMT_PEM);
	}
	if (rv >= 0 && f->ca_dir != NULL) {
		what = f->ca_dir;
		rv = gnutls_certificate_set_x509_trust_dir(ep->cred, f->ca_dir, GNUTLS_X509_FMT_PEM);
	}
	if (rv >= 0 && !ep->server && f->ca_file == NULL && f->ca_dir == NULL) {
		what = "the system's CAs";
		rv = gnutls_certificate_set_x509_system_trust(ep->cred);
	}
	if (rv < 0) {
		rc__tp_set_detail("QUIC TLS: %s: %s", what, gnutls_strerror(rv));
		return RC_INVAL;
	}
	return RC_OK;
}

static rc_status rc__qep_start(rc__qep *ep)
{
	if (pthread_create(&ep->thr, NULL, rc__qep_run, ep) != 0)
		return RC_NOMEM;
	ep->started = true;
	return RC_OK;
}

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

/* The vt's exporter: the QUIC connection's (a server's streams share their connection's
 * session; a client has one); the draft requires RPCSEC_GSS to bind to it. */
static bool rc__quic_exporter(rc_tp *tp, unsigned char *out, bool *must)
{
	rc__qtp *e;
	rc__qpeer *w;
	bool ok = false;

	*must = true;
	pthread_mutex_lock(&rc__qtp_mu);
	if ((e = rc__qtp_find(tp, false)) != NULL &&
	    (w = e->who != NULL ? e->who : e->ep != NULL ? e->ep->who : NULL) != NULL &&
	    (ok = w->has_cb))
		memcpy(out, w->cb, sizeof(w->cb));
	pthread_mutex_unlock(&rc__qtp_mu);
	return ok;
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
		rc__quic_conn_vt.exporter = rc__quic_exporter;
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

/*
 * RPC-over-QUIC, private to transports/quic*.c: the objects the endpoint's thread keeps and
 * what the files share. transports/quic.c says how the design maps onto remotecall; the layers,
 * top down (each uses only those below it):
 *
 *   quic.c         the runtime's transports: the client's connect, the listener, the pipes'
 *                  runtime ends, URI keys, the listener's counters.
 *   quic_ep.c      the endpoint: its UDP socket (GSO sends, GRO receives), its thread's loop,
 *                  connections' packets in and out, timers, reaping.
 *   quic_tls.c     a connection's GnuTLS session (TLS 1.3, ALPN "sunrpc", certificates, the
 *                  peer's identity), ngtcp2's callbacks and settings.
 *   quic_stream.c  pipes and streams: whole messages between them by the draft's rules, flow
 *                  control credit.
 *   quic_msg.c, quic_ngtcp2.c  the record reader; ngtcp2's version differences.
 */
#ifndef RC_TRANSPORTS_QUIC_CONN_H
#define RC_TRANSPORTS_QUIC_CONN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>

#include "transports/quic.h"
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
/* A pipe's output (from its runtime end) is bounded as a TCP socket's: the endpoint takes
 * records into its streams' send queues while fewer than RC__Q_PIPE_HELD of the pipe's bytes
 * wait there unacknowledged -- two of our stream windows: one in flight to a peer as generous
 * as ours, one queued behind it, so a stream never waits for the runtime's thread -- and the
 * rest stays in the box; once RC__Q_FROM_HIGH bytes wait there too (and the pipe holds
 * RC__Q_PIPE_HELD in all), the runtime's descriptor stops being writable and outq reports
 * them (the server's RC__OUT_HIGH: it stops reading that connection and waits for EPOLLOUT). */
#define RC__Q_PIPE_HELD (2 * (size_t)RC__Q_STREAM_WIN)
#define RC__Q_FROM_HIGH ((size_t)256 << 10)
#define RC__Q_PKT 1452           /* the largest UDP payload sent (off loopback) */
#define RC__Q_PKT_LO 16384       /* ... to a loopback peer (the loopback MTU is 64 KiB) */
#define RC__Q_GSO_BYTES 65000    /* a batch of packets sent at once (UDP GSO) */
#define RC__Q_GSO_SEGS 64
#define RC__Q_SOCKBUF (4 << 20)  /* UDP socket buffers asked for */
#define RC__Q_RX_TURN (256 << 10) /* bytes received in one turn of the endpoint's loop */
#define RC__Q_TX_TURN ((size_t)256 << 10) /* bytes one connection sends in one turn */
#define RC__Q_SCIDLEN 16
#define RC__Q_MAXCIDS 8
#define RC__Q_STICK 32           /* small calls handed over together put on one stream */
#define RC__Q_BIG ((size_t)64 << 10) /* a call this big (or a stream with this much unsent)
                                        takes the least busy stream of its own */
#define RC__Q_BACKMAP 64         /* a client's calls back awaiting its reply */

/* Now, on the monotonic clock (ns): ngtcp2's timestamps. */
static inline uint64_t rc__q_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- objects ------------------------------------------------------------------------------ */

/* A piece of bytes queued to a stream or a pipe: off is its stream offset (streams). p is an
 * allocation of its own, or (a record from the runtime) the bytes right behind the chunk, in
 * its allocation: rc__qchunk_free frees either. */
typedef struct rc__qchunk {
	struct rc__qchunk *next;
	unsigned char *p;
	size_t len;
	uint64_t off;
} rc__qchunk;

static inline void rc__qchunk_free(rc__qchunk *c)
{
	if (c->p != (unsigned char *)(c + 1))
		free(c->p);
	free(c);
}

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

/*
 * What a pipe's two ends share: whole messages each way, in memory, under mu. A byte in the
 * socket pair between them says "look" -- to the runtime's end (its descriptor is the one its
 * loops poll) a byte is there while toward is not empty or the stream has ended (bell); to the
 * endpoint's, one is sent when attn goes true -- at a send without RC_TPF_MORE or a flush, so
 * a batch of records rings once. Held by both ends (refs); the last frees it.
 *
 * Output is bounded (RC__Q_PIPE_HELD, RC__Q_FROM_HIGH): when the runtime's end finds the pipe
 * full (rc__qbox_full) it chokes the box -- fills its own end of the socket pair with filler
 * bytes until the kernel takes no more (the pair's buffers are small), so its descriptor is
 * not writable -- and the endpoint stops polling its end for input (the filler would keep it
 * readable) but for hang-ups. Once acknowledgments let the endpoint take enough from `from`,
 * it unchokes: reads its end dry (the runtime's is writable again: a server's EPOLLOUT fires)
 * and polls it again. A client's pipe (spread) is not bounded: the bound protects a server from
 * a peer that withholds credit, and on a client it would make the streams of its pool wait for
 * one another.
 */
typedef struct rc__qbox {
	pthread_mutex_t mu;
	atomic_uint refs;
	rc__qchunk *toward, *toward_tail; /* to the runtime: whole messages, marks included */
	size_t toward_bytes;
	rc__qchunk *from, *from_tail;     /* from the runtime: one record each */
	size_t from_bytes;
	atomic_size_t from_seen; /* from_bytes, stored with it: read without the lock (outq; the
	                            endpoint's look before a flush) */
	size_t held;  /* bytes the endpoint took into streams' send queues, not yet acknowledged */
	bool bell;    /* a byte waits at the runtime's end */
	bool attn;    /* a byte waits at the endpoint's end */
	bool fin;     /* no more messages come toward the runtime (after those queued) */
	bool gone;    /* the endpoint's end is gone: nothing more either way */
	bool owed;    /* credit is held back while toward_bytes >= RC__Q_PIPE_HIWAT */
	bool choked;  /* the runtime's end is filled: not writable (see above) */
	bool spread;  /* a client's pipe: its calls spread over a pool of streams, and one cap
	                 on the pipe would hold a small call behind a big one (head of line);
	                 the client's own calls are not bounded here (set before the thread runs) */
} rc__qbox;

/* Is b's output over its bounds (under b->mu): RC__Q_FROM_HIGH bytes wait in from, and the
 * pipe holds RC__Q_PIPE_HELD in all? (A big record alone does not choke while the endpoint
 * can take it.) */
static inline bool rc__qbox_full(const rc__qbox *b)
{
	return !b->gone && !b->spread && b->from_bytes >= RC__Q_FROM_HIGH &&
	       b->from_bytes + b->held >= RC__Q_PIPE_HELD;
}

struct rc__qpipe {
	int kind;         /* RC__QEV_PIPE: the epoll tag */
	int fd;           /* the endpoint's end of the socket pair (bells only) */
	rc__qconn *qc;
	rc__qbox *box;
	rc__qstrm *home;  /* server: the client's stream it carries */
	rc__qstrm *back;  /* server: the stream it opened for calls back */
	bool dead;
	bool polled;      /* fd is polled for input (not while the box is choked) */
	bool kick;        /* acknowledgments made room: take more from the box */
	bool due;         /* on the endpoint's due list: its runtime end to be rung */
	unsigned rung;    /* the endpoint's turn it was last rung in at once */
	rc__qpipe *due_next;
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
	size_t held;      /* bytes of sq counted in its pipe's box->held */
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
	rc__qstrm *stick;  /* client: the stream this take's small calls go on (rc__qc_pick_call) */
	unsigned stick_left;
	bool handshaken, dead, close_want;
	bool rang;         /* its runtime ends were given messages this turn: what they have
	                      answered meanwhile is taken before the flush (rc__qep_run) */
	int close_how;
	int64_t close_code;
	rc__qconn *next;
};

/* An accepted stream waiting for the server's accept: the runtime's end and who. */
typedef struct rc__qacc {
	struct rc__qacc *next;
	int fd;
	rc__qbox *box;
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
	unsigned turn;    /* the loop's turns, counted */
	rc__qpipe *due;   /* pipes given messages this turn after they were rung in it */
	rc__qpeer *who; /* client: its connection's, once the handshake is done (under mu) */
	rc__qacc *acq, *acq_tail; /* server: under mu */
	rc__quic_stats st;        /* under mu */
	size_t held;              /* the thread's own: its pipes' box->held, summed (st.queued) */
	bool gso;                 /* UDP_SEGMENT on sends (UDP_GRO is asked for on receives) */
	unsigned char rx[65536];
	unsigned char tx[RC__Q_GSO_BYTES + RC__Q_PKT_LO];
};

/* ---- quic_stream.c: pipes and streams ---- */

/* Count one more of *ctr, a counter of ep->st. */
void rc__q_count(rc__qep *ep, uint64_t *ctr);
/* A pipe ends (its runtime end closed, or its connection gone): its streams forget it. */
void rc__qpipe_kill(rc__qpipe *p);
/* Ring the runtime ends of the pipes given messages this turn after they were rung in it
 * (ep->due), once each: at the end of the turn's events, before any pipe is freed. */
void rc__qep_ring_due(rc__qep *ep);
/* Free a dead pipe (rc__qpipe_kill first). */
void rc__qpipe_free(rc__qpipe *p);
/* The runtime's end of p rang (or closed; events: epoll's): its messages to their streams
 * while the pipe has room (RC__Q_PIPE_HELD), credit given back. */
void rc__qpipe_read(rc__qep *ep, rc__qpipe *p, uint32_t events);
/* Take records from p's box to their streams while the pipe has room (RC__Q_PIPE_HELD);
 * unchoke the box once it is back within its bounds. */
void rc__qpipe_take(rc__qpipe *p);
/* Stream s's chunks of n bytes were acknowledged (freed): its pipe's room grows. */
void rc__qstrm_acked(rc__qstrm *s, size_t n);
/* A new pipe of qc; the runtime's end in *rfd and *box (a reference of its own). NULL when
 * descriptors or memory are short. */
rc__qpipe *rc__qpipe_new(rc__qconn *qc, int *rfd, rc__qbox **box);
/* No more messages come toward p's runtime end, after those queued. */
void rc__qpipe_fin(rc__qpipe *p);
/* Drop a reference to b; the last frees it and what it holds. */
void rc__qbox_release(rc__qbox *b);
/* Ring fd (one byte; never blocks, never raises SIGPIPE). */
void rc__qbox_ring(int fd);
/* Stream id of qc (local: we opened it), carrying pipe p's messages; NULL: memory short. */
rc__qstrm *rc__qstrm_new(rc__qconn *qc, int64_t id, rc__qpipe *p, bool local);
/* Free a stream and what it holds. */
void rc__qstrm_free(rc__qstrm *s);
/* Bytes p[0..n) of stream s: whole messages on; a bad record closes the connection. */
void rc__qstrm_feed(rc__qstrm *s, const uint8_t *p, size_t n);
/* Give back the flow-control credit of n bytes delivered (held back while the pipe is full). */
void rc__qstrm_credit(rc__qstrm *s, uint64_t n);
/* Close qc at its next flush: how (RC__NG_CLOSE_*) and the code. The first asked wins. */
void rc__qc_close(rc__qconn *qc, int how, int64_t code);

/* ---- quic_tls.c: sessions and ngtcp2's callbacks ---- */

/* Drop a reference to w; the last frees it. */
void rc__qpeer_release(rc__qpeer *w);
/* ngtcp2's callbacks for a server's or a client's connection. */
void rc__q_callbacks(ngtcp2_callbacks *cb, bool server);
/* ngtcp2's settings and our transport parameters for a connection of ep with peer. */
void rc__q_settings(rc__qep *ep, const struct sockaddr_storage *peer, ngtcp2_settings *st,
                    ngtcp2_transport_params *tp);
/* A GnuTLS session for qc (qc->conn made): 0, or a GnuTLS or ngtcp2 error. */
int rc__q_session(rc__qconn *qc);

/* ---- quic_ep.c: endpoints ---- */

/* A new endpoint on UDP socket ufd (taken), not running yet; NULL: memory or descriptors
 * short. */
rc__qep *rc__qep_new(int ufd, bool server, size_t max_record);
/* Stop the endpoint's thread (closing its connections with RPC_NO_ERROR) and free it all. */
void rc__qep_free(rc__qep *ep);
/* Load the endpoint's certificates from the TLS context's files: RC_OK or RC_INVAL (detail
 * set). */
rc_status rc__qep_certs(rc__qep *ep, const rc__tls_files *f);
/* Start the endpoint's thread: RC_OK or RC_NOMEM. */
rc_status rc__qep_start(rc__qep *ep);

#endif

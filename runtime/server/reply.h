/*
 * Internal to the server's files (base.h has the picture): the one way out of every
 * reply -- its sinks, the serving thread's context that holds the reply being made, the
 * reply encoders (reply.c) and rc__reply_out, inline on the hot paths.
 */
#ifndef RC_SERVER_REPLY_H
#define RC_SERVER_REPLY_H

#include "runtime/server/base.h"

struct rc__dbatch;

/*
 * ---- The one way out (reply.c) ------------------------------------------------------------
 *
 * Every reply -- a routine's result, an error, an auth error, a duplicate-cache replay, a
 * probe's STARTTLS, a deferred answer from another thread -- leaves through rc__reply_send,
 * which does, in order: record it in the duplicate request cache (when the call holds an
 * entry), hand it to its sink (send, or queue on the connection), let go of what the request
 * held for it (a deferred one's accounting), and trace it. Its bytes were made before by the
 * encoders below, which all take the verifier and the results' wrapping from the call's
 * flavor (w->auth).
 *
 * A sink is where a listener kind's replies go: the one-thread stream loop's (conn.c), a
 * worker job's (conn.c, under the connection's write lock), a deferred stream answer's
 * (conn.c), a datagram's and a datagram batch's (dgram.c), a synchronous transport's
 * (serve.c). It is a pair of functions and their context, so the layers below the listener
 * kinds (serve, dispatch, deferral) send without calling up into them.
 */
typedef struct rc__out {
	unsigned char *msg;  /* the encoded reply */
	size_t len;          /* its length; 0: no reply (the request is only let go of) */
	const rc__gseg *seg; /* big data gathered from the result's memory (streams), or NULL */
	unsigned nseg;
	const rc_peer *peer; /* a datagram's caller */
	uint32_t xid;
	bool more;           /* more replies follow at once: the sink may hold this one back */
	bool forget;         /* with a cache entry and no reply: the call may run again (a
	                        deferred request dropped), so the entry is forgotten rather
	                        than kept as answered-without-reply */
} rc__out;

typedef struct rc__sink_ops {
	/* Send or queue o (o->len > 0). False: the way out is broken (a stream); a datagram the
	 * socket refuses counts as lost, not broken. */
	bool (*send)(void *ctx, const rc__out *o);
	/* A deferred request's reply has left (or failed: broken): its accounting on the
	 * connection (NULL: nothing to do). Called without locks. */
	void (*release)(void *ctx, bool broken);
	/* Under srv->mu: the request (ctx) was deferred -- its connection counts it and is
	 * referenced -- or orphaned (its server stops) -- it lets go of both now. NULL: nothing
	 * held (a datagram's listener outlives its deferred requests' hold: rc__defer_orphan). */
	void (*deferred)(void *ctx);
	void (*orphaned)(void *ctx);
} rc__sink_ops;

typedef struct rc__sink {
	const rc__sink_ops *ops;
	void *ctx;
} rc__sink;

struct rc__req;

/*
 * Send reply o of srv through sink s: record it under key in the duplicate request cache
 * (key not NULL: stored, even with no reply, unless o->forget), send or queue it, let
 * go of the request's hold on its connection (release), trace RC_TP_SRV_SENT. Any thread.
 * Returns false when the sink is broken (the reply is lost; the caller ends the connection).
 * The work is rc__reply_out's, inline with the send function as a parameter: on the hot paths
 * (rc__reply_leave) the compiler sees the sink's send, inlines it and folds what the call site
 * does not use (no cache entry, no release), so the one path costs no more than the sends it
 * replaced.
 */
typedef bool (*rc__send_fn)(void *ctx, const rc__out *o);
typedef void (*rc__release_fn)(void *ctx, bool broken);

static inline __attribute__((always_inline)) bool
rc__reply_out(rc_server *srv, rc__send_fn send, rc__release_fn release, void *ctx,
              const rc__out *o, const rc__drc_key *key)
{
	bool ok;

	if (__builtin_expect(key != NULL, 0)) { /* before it leaves: a retransmission may follow
	                                           it at once */
		if (o->len == 0 && o->forget)
			rc__drc_cancel(srv->drc, key);
		else
			rc__drc_store(srv->drc, key, o->msg, o->len);
	}
	if (o->len == 0) {
		if (release != NULL)
			release(ctx, false);
		return true;
	}
	ok = send(ctx, o);
	if (release != NULL)
		release(ctx, !ok);
	if (__builtin_expect(srv->trace != NULL, 0) && ok) /* sent, or queued to be */
		srv->trace(srv->trace_arg, RC_TP_SRV_SENT, o->xid, rc__trace_clock());
	return ok;
}

static inline __attribute__((always_inline)) bool
rc__reply_send(rc_server *srv, const rc__sink *s, const rc__out *o, const rc__drc_key *key,
               bool release)
{
	return rc__reply_out(srv, s->ops->send, release ? s->ops->release : NULL, s->ctx, o, key);
}

/* rc__reply_send of the reply the serving thread w just made (rlen bytes in w->rb) to its
 * call: its duplicate-cache entry from w->drc. The usual path of an inline reply. */
struct rc__wctx;

struct rc__req;

typedef struct rc__wctx {
	rc__encbuf rb;
	struct rc__req *req; /* the request object the next call is served in (rc__serve) */
	rc__conn *conn;      /* set around rc__serve by the stream loops: the connection */
	struct rc__lsn *lsn; /* ... and by the datagram loops: the listener */
	const rc__sink *gsink; /* set around rc__serve by a stream's loops: a reply whose big
	                          data is gathered from the result leaves through it at once */
	int gsent;           /* rc__serve sent a gathered reply itself: 1, or -1 (broken) */
	const rc__drc_key *drc; /* after rc__serve: the duplicate-cache entry its reply goes
	                           into (rc__reply_leave), or NULL */
	const rc__sink_ops *later; /* set with conn / lsn by the loops: the way out of a request
	                              deferred here (its context is the request), or NULL: no
	                              deferral (RC_NOTSUPP) */
	const rc_tp_reply_to *to;  /* in-process (direct.c): the caller's way back */
	unsigned char *rbuf; /* this thread's datagram receive buffer (NULL until needed) */
	struct rc__dbatch *batch; /* its datagram batch (server.c; NULL until needed) */
	unsigned lone;       /* blocking datagram loop: non-zero while calls come one at a time */
	unsigned want;       /* slots the next datagram batch asks for (server.c) */
	uint32_t xid;        /* of the request served last (trace points after rc__serve) */
	bool starttls;       /* rc__serve answered a probe with STARTTLS: start TLS once it is out */
	const rc__svc_auth *auth; /* the authentication of the call whose reply is being made:
	                             NULL for a plain flavor's (AUTH_NONE verifier, nothing
	                             wrapped) -- the fast path -- else its verifier and wrapping */
	size_t keep;         /* the largest reply buffer kept between requests (rc__reply_keep) */
	bool worked;         /* the epoll loop: events handled since its last empty wait */
	/* aligned: a Sun routine's XDR_INLINE stores int32_t through the reply's bytes */
	_Alignas(64) unsigned char stack[RC__STACK_REPLY]; /* (64: a short reply fills one line) */
} rc__wctx;

/* rc__reply_out of the reply serving thread w just made (rlen bytes in w->rb) to its call,
 * through send(ctx, ...): its duplicate-cache entry from w->drc. The inline replies' path. */
static inline __attribute__((always_inline)) bool
rc__reply_leave(rc_server *srv, rc__wctx *w, rc__send_fn send, void *ctx, size_t rlen,
                const rc_peer *peer, bool more)
{
	const rc__drc_key *key = w->drc;

	if (__builtin_expect(key != NULL, 0))
		w->drc = NULL;
	else if (rlen == 0)
		return true; /* nothing to send, nothing to record */
	return rc__reply_out(srv, send, NULL, ctx,
	                     &(const rc__out){.msg = rc__encbuf_msg(&w->rb), .len = rlen,
	                                      .peer = peer, .xid = w->xid, .more = more},
	                     key);
}

/* Reply encoders (reply.c), usable from any thread with a context of its own:
 * rc__reply_result -- SUCCESS with *res coded by xres (SYSTEM_ERR when that fails: *st says
 * why, RC_CANTENCODEARGS or RC_MSGTOOLARGE, counted for a datagram); rc__reply_error -- an
 * rc_svc_err reply. Each returns the reply's length in w->rb. */
size_t rc__reply_result(rc_server *srv, rc__wctx *w, size_t max, bool dgram, uint32_t xid,
                        rc_xdrproc xres, const void *res, rc_status *st);
size_t rc__reply_error(rc__wctx *w, size_t max, uint32_t xid, rc_svc_err err, uint32_t lo,
                       uint32_t hi);
/* rc__reply_simple -- a complete reply to xid with no body beyond its status: denied (stat:
 * reject_stat, extra: RPC_MISMATCH's range or AUTH_ERROR's auth_stat) or accepted (stat:
 * accept_stat, extra: PROG_MISMATCH's range), an accepted one's verifier from w->auth; 0 when
 * that cannot be made (nothing to send). rc__reply_accepted_head -- the header of an accepted
 * reply through stat, positioned for the body; false as rc__reply_simple's 0.
 * rc__reply_starttls -- the STARTTLS answer to an AUTH_TLS probe (sets w->starttls). */
size_t rc__reply_simple(rc__wctx *w, size_t max, uint32_t xid, bool denied, uint32_t stat,
                        const uint32_t *extra, int nextra);
bool rc__reply_accepted_head(rc__wctx *w, rc_xdr *x, size_t max, uint32_t xid, uint32_t stat);
size_t rc__reply_starttls(rc__wctx *w, size_t max, uint32_t xid);
/* The same, as the serve step hands them to a call's flavor (auth.h). */
extern const rc__svc_replies rc__flavor_replies;

/* The largest reply buffer a serving thread keeps between requests (a heap buffer a big reply
 * grew): 4 MiB, or the server's max_record when smaller; bigger ones are freed after their
 * reply. Big opaque and string results leave from the result's own memory (gathered), so a
 * reply buffer grows past this only for big results of other types, rarely enough that
 * keeping up to max_record (64 MiB by default) per thread would cost more than it saves. */
#define RC__KEEP_REPLY (((size_t)4 << 20) + 4096)
static inline size_t rc__reply_keep(size_t max_record)
{
	return max_record + 4096 < RC__KEEP_REPLY ? max_record + 4096 : RC__KEEP_REPLY;
}

/* Make w's reply buffer empty for a reply of at most max bytes. A heap buffer that an earlier
 * big reply grew is kept (up to w->keep), so a server answering big replies does not allocate
 * and page-fault a fresh one each time; otherwise the stack buffer. */
static inline __attribute__((always_inline)) void rc__reply_reset(rc__wctx *w, size_t max)
{
	/* the stack buffer in use (the usual case: its cap is the stack's, gather is off) or a
	 * kept heap one: only its limit is new */
	if (w->rb.data == w->stack || (w->rb.heap && w->rb.cap <= w->keep)) {
		w->rb.max = max;
		w->rb.toolarge = false;
		w->rb.gather = false;
		return;
	}
	rc__encbuf_free(&w->rb);
	rc__encbuf_init(&w->rb, w->stack, sizeof(w->stack), max);
}

/* Let go of the heap reply buffer w keeps between requests (rc__reply_reset), if any: the
 * thread has gone quiet. */
static inline void rc__reply_release(rc__wctx *w)
{
	if (w->rb.heap) {
		size_t max = w->rb.max;
		rc__encbuf_free(&w->rb);
		rc__encbuf_init(&w->rb, w->stack, sizeof(w->stack), max);
	}
}

/* Start a successful reply to xid in w's buffer; x is positioned after its header for the
 * results. The usual one (plain flavors: w->auth NULL) is the whole 24-byte header (REPLY,
 * MSG_ACCEPTED, an AUTH_NONE verifier, SUCCESS) written at once: the hot path of every call.
 * False when w->auth's flavor cannot make a verifier (nothing is to be sent). */
/* The 24-byte header of a successful reply to xid under a plain flavor (w->auth NULL: REPLY,
 * MSG_ACCEPTED, an AUTH_NONE verifier, SUCCESS) into w's emptied buffer: the whole reply of a
 * procedure with void results, with no encode stream set up. */
static inline __attribute__((always_inline)) void rc__reply_head_plain(rc__wctx *w, size_t max,
                                                                      uint32_t xid)
{
	unsigned char *h;

	rc__reply_reset(w, max);
	h = rc__encbuf_msg(&w->rb); /* the stack buffer always has room */
	rc__st32(h, xid);
	rc__st32(h + 4, RC__REPLY);
	memset(h + 8, 0, 16); /* MSG_ACCEPTED, AUTH_NONE, empty body, SUCCESS: all zero */
}

static inline __attribute__((always_inline)) bool rc__reply_success(rc__wctx *w, rc_xdr *x,
                                                                   size_t max, uint32_t xid)
{
	if (__builtin_expect(w->auth != NULL, 0))
		return rc__reply_accepted_head(w, x, max, xid, RC__SUCCESS);
	rc__reply_head_plain(w, max, xid);
	rc__encbuf_xdr_at(&w->rb, x, 24);
	return true;
}

/* The results *res, coded by xres into x as w->auth's flavor wraps them (plain: as they are). */
static inline bool rc__encode_res(const rc__wctx *w, rc_xdr *x, rc_xdrproc xres, const void *res)
{
	if (__builtin_expect(w->auth != NULL, 0) && w->auth->fl->svc_wrap != NULL)
		return w->auth->fl->svc_wrap(w->auth, x, xres, res);
	return xres(x, (void *)res);
}

/* A datagram reply to xid did not fit: count it and trace it (SYSTEM_ERR goes instead). */
void rc__reply_too_big(rc_server *srv, uint32_t xid);

#endif

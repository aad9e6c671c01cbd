/*
 * Internal to the server's files (base.h has the picture): a request's life -- its
 * object and public part, its handle (reqhandle.c), the pool, deferral and the answer
 * (defer.c) -- and the serve step (serve.c) that makes one and dispatches it.
 */
#ifndef RC_SERVER_REQUEST_H
#define RC_SERVER_REQUEST_H

#include "runtime/server/reply.h"

/*
 * The request object's public part (<remotecall/server.h>'s opaque rc_svc_req): the call's
 * header facts with Sun's names (the Sun layer copies them into its struct svc_req), and what
 * the serve step, dispatch and the reply need. rc__req (below) begins with it.
 */
struct rc_svc_req {
	uint32_t rq_prog;        /* program, version and procedure called */
	uint32_t rq_vers;
	uint32_t rq_proc;
	rc_opaque_auth rq_cred;  /* the raw credential (the rest of what the flavor read of it
	                            is rc__req's auth) */
	struct rc_server *srv;
	const struct rc__reg *reg;
	const struct rc_svc_proc *proc;
	uint32_t xid;
	bool dgram;
	bool keep_res;               /* rc_svc_req_keep_result: the result is not freed */
	bool tls_kept;               /* deferred: whether it came over TLS (conn is let go) */
	const struct rc_peer *peer;
	struct rc__wctx *w;          /* raw dispatch (rc_server_register_raw): the reply buffer */
	const unsigned char *args;   /*   the encoded arguments */
	size_t argslen;
	size_t rlen;                 /*   the reply's length so far (0: none) */
	struct rc_tp *conn;          /* the stream it came on (rc_svc_req_tls asks it), or NULL */
};

/*
 * A request being served, and kept when deferred (rc_svc_req_defer). Each serving thread
 * keeps one (w->req) and serves every call in it, so the common path allocates nothing; a
 * deferred request leaves the thread (which makes itself a new one) and lives until
 * rc_svc_req_reply / rc_svc_req_error / rc_svc_req_drop, from any thread, frees it.
 *
 * States (state, atomic): INLINE while its routine runs; DEFERRED once the routine deferred
 * it (it is then on srv->deferred, counted in srv->ndeferred and, on a stream, in its
 * connection's `deferred` with a reference); ORPHANED when its server stopped or went away
 * before the answer (it holds nothing of the server's any more: the answer only frees it and
 * returns RC_CANCELLED); ANSWERED once answered (it may still wait for its serving thread to
 * let go: never INLINE again). DEFERRED -> ORPHANED and the answer's unlinking both happen under
 * the process-wide rc__defer_mu, then srv->mu: lock order rc__defer_mu, srv->mu, c->wmu.
 */
enum { RC__REQ_INLINE = 0, RC__REQ_DEFERRED, RC__REQ_ORPHANED, RC__REQ_ANSWERED };

typedef struct rc__req {
	rc_svc_req pub;             /* first: rc_svc_req * and rc__req * convert */
	_Atomic int state;
	_Atomic int holds;          /* deferred: the serving thread's and the deferral's (defer.c) */
	struct rc__wctx *wc;        /* the serving thread whose object it is (its connection,
	                               listener), until deferred */
	/* while its routine runs (rd non-NULL: it may be deferred) */
	const struct rc__rd *rd;    /* its encoded arguments, in the receive buffer */
	const rc__drc_key *keyp;    /* its duplicate cache entry, or NULL */
	void *args_heap, *res_heap; /* typed objects too big for argbuf / resbuf (this call's) */
	/* deferred */
	void *args;                 /* typed: the decoded argument (argbuf or heap), or NULL */
	void *res;                  /* typed: the result object, or NULL */
	/* deferred */
	unsigned char *own;         /* the copy of the encoded arguments the request owns (kept
	                               with the object in its server's pool, for the next) */
	size_t ownlen, owncap;
	rc__drc_key key;
	bool cached;                /* key's entry waits for the answer */
	struct rc__req *dnext, *dprev; /* srv->deferred, under srv->mu */
	rc__sink sink;              /* deferred: where its answer goes (the connection's or the
	                               datagram listener's) */
	rc__conn *c;                /* a stream's connection (referenced), or NULL */
	void *orphan_ctx;           /* orphaned: its registration's ctx (pub.reg, the server's,
	                               is then NULL: the server may be gone) */
	rc_tp_reply_to to;          /* in-process: the caller's way back (held), or zero */
	struct rc__lsn *l;          /* a datagram listener, or NULL */
	rc_peer peer;               /* the datagram caller's address */
	/* its authentication (auth.h): valid past accept on the general path (the fast path of a
	 * plain AUTH_NONE call leaves it as it was); ctx NULL between calls */
	rc__svc_auth auth;
	bool gen;                   /* deferred: its replies take auth (the serving thread's
	                               w->auth was not NULL) */
	void *unwrapped;            /* the arguments as the flavor unwrapped them (malloc'd), or
	                               NULL; rd points into it while they are */
	/* its handle (below; kept through the object's reuses, never zeroed by rc__req_new) */
	rc_svc_req *handle;         /* what its routines and hooks get: its slot and generation */
	uint32_t hidx;              /* its slot */
	_Alignas(16) unsigned char argbuf[RC__ARGS_STACK];
	_Alignas(16) unsigned char resbuf[RC__ARGS_STACK];
} rc__req;

/*
 * Request handles (defer.c). The rc_svc_req * a routine, a raw dispatcher or the auth hook
 * gets is not the object's address but a handle: a slot number and the slot's generation
 * ((slot << RC__HGEN_BITS) | generation). Every public entry finds the object through
 * rc__req_of, which refuses a handle whose generation is not the slot's now. A slot belongs to
 * one request object for the object's life (pooled reuses included); its generation moves on
 * when the object's deferred request is answered (reply, error, drop, or the answer of an
 * orphaned one) and when the object is freed, so a handle that was answered, or whose object
 * was freed or reused since, is refused -- without reading the object, whose memory may be
 * gone: the slots themselves are never freed (chunks of RC__HCHUNK, a process-wide table of at
 * most RC__HCHUNK * RC__HCHUNKS slots, 16 bytes each, as many as request objects ever alive at
 * once). Freed slots are reused oldest first, and so are pooled objects, which spreads the
 * reuse of any one generation counter. A stale handle is taken for a live one only if its
 * slot's generation has since wrapped to the same value exactly: 2^32 answers or frees of
 * that slot on a 64-bit build (2^10 on a 32-bit one). Slot 0 is never used (NULL is refused).
 */
#define RC__HCHUNK 1024u
#define RC__HCHUNKS 4096u
#if UINTPTR_MAX > 0xffffffffu
#define RC__HGEN_BITS 32
#else
#define RC__HGEN_BITS 10
#endif
#define RC__HGEN_MASK ((uint32_t)(((uint64_t)1 << RC__HGEN_BITS) - 1))

typedef struct rc__hslot {
	_Atomic uint32_t gen;        /* the generation of the one valid handle */
	_Atomic uint32_t deferred;   /* non-zero: its request is deferred (answers go through
	                                rc__answer, which looks again under rc__defer_mu) */
	struct rc__req *_Atomic req; /* the object, or NULL (the slot is free) */
	uint32_t next;               /* the free list (defer.c, under its lock); 0: the last */
} rc__hslot;

extern rc__hslot *_Atomic rc__hslots[RC__HCHUNKS];

/* The slot of handle h if h is valid now, else NULL. No lock: a handle used on one thread while
 * another answers or frees it may pass this check and then meet a request that is gone (the
 * answers look again under rc__defer_mu); used one after the other, never. */
static inline rc__hslot *rc__hslot_of(const rc_svc_req *h)
{
	uintptr_t v = (uintptr_t)h, i = v >> RC__HGEN_BITS;
	rc__hslot *chunk;

	if (i == 0 || i >= (uintptr_t)RC__HCHUNK * RC__HCHUNKS ||
	    (chunk = atomic_load_explicit(&rc__hslots[i / RC__HCHUNK], memory_order_acquire)) == NULL)
		return NULL;
	chunk += i % RC__HCHUNK;
	return atomic_load_explicit(&chunk->gen, memory_order_acquire) ==
	               (uint32_t)(v & RC__HGEN_MASK)
	           ? chunk
	           : NULL;
}

/* The request object of handle h, or NULL (NULL, answered, freed, reused since: stale). */
static inline rc__req *rc__req_of(const rc_svc_req *h)
{
	rc__hslot *s = rc__hslot_of(h);

	return s != NULL ? atomic_load_explicit(&s->req, memory_order_relaxed) : NULL;
}

/* Give new request object r a slot (the oldest free one, else a fresh one) and its handle
 * (r->handle, r->hidx). False: the table is full or memory short (r has none). */
bool rc__req_handle_take(rc__req *r);

/* Move r's slot to its next generation: every handle of r given so far is stale (r->handle is
 * the new one). Under rc__defer_mu (an answer), or by r's only user (its freeing). */
void rc__req_handle_bump(rc__req *r);

/* Free request object r (nothing of its call held any more: its own argument copy goes too)
 * and give its slot back, stale, to be reused after every other free slot. */
void rc__req_free(rc__req *r);

/* The same, as its public part (what the accessors read), or NULL. */
static inline rc_svc_req *rc__svc_req_of(const rc_svc_req *h)
{
	rc__req *r = rc__req_of(h);

	return r != NULL ? &r->pub : NULL;
}

/* Set up / let go of a serving thread's context (reply buffer, request object, datagram
 * buffers) for srv. */
void rc__wctx_init(rc__wctx *w, rc_server *srv);
void rc__wctx_fini(rc__wctx *w);

/* Let go of what a call's authentication holds (its flavor's reference). */
static inline void rc__svc_auth_done(rc__svc_auth *a)
{
	if (a->ctx != NULL) {
		if (a->fl->svc_release != NULL)
			a->fl->svc_release(a);
		a->ctx = NULL;
	}
}

/* What the answer to a deferred request is (rc__answer). */
enum { RC__ANSWER_RESULT, RC__ANSWER_ERROR, RC__ANSWER_DROP };

/* Answer the deferred request of handle h from any thread (defer.c): encode, record in the
 * duplicate cache, send, release and free it. Returns RC_OK; RC_CANTSEND (its connection broke
 * or closed); RC_CANCELLED (its server stopped or went away: nothing sent); the encoder's
 * failure (a SYSTEM_ERR went instead); RC_INVAL (NULL, not deferred, or a stale handle:
 * answered already, its object freed or reused -- nothing sent). The request is freed (h made
 * stale) whatever it returns but RC_INVAL. */
rc_status rc__answer(const rc_svc_req *h, int kind, rc_xdrproc xres, const void *res,
                     rc_svc_err err, uint32_t lo, uint32_t hi);

/* A fresh request object of serving thread w of srv: from srv's pool when it has one, oldest
 * first (so deferring calls allocates nothing once the pool has filled), else allocated with a
 * handle slot; zeroed but for its argument buffers and its handle. NULL if memory (or the
 * handle table) is short. */
rc__req *rc__req_new(rc_server *srv, rc__wctx *w);

/* Let go of one hold on deferred request r -- the serving thread's once its routine has
 * returned, or the deferral's at the answer; the last one lets go of what r holds and puts r
 * in pool's pool (srv: alive while the caller runs), or frees it (pool NULL: an orphaned
 * request, whose server may be gone; or the pool is full). */
void rc__req_unhold(rc__req *r, rc_server *pool);

/* Put r -- idle: no call of its under way, nothing held -- in srv's request pool (a big
 * argument copy it keeps is freed). False when the pool is full: r stays the caller's. */
bool rc__req_pool_put(rc_server *srv, rc__req *r);

/* Free the objects in srv's request pool and its kept direct_req (rc_server_destroy). */
void rc__req_pool_free(rc_server *srv);

/*
 * Orphan every request of srv still deferred (l NULL: the server stops, or is destroyed) or
 * those of datagram listener l (it closes): each lets go of its connection and cache entry
 * now, and its later answer only frees it. Then wait for answers under way on other threads
 * to finish. Takes rc__defer_mu and srv->mu.
 */
void rc__defer_orphan(rc_server *srv, const struct rc__lsn *l);

/* ---- serve.c ------------------------------------------------------------------------------ */

/* Serve one request msg[0..len) from peer (NULL: a stream or in-process) that arrived on
 * stream connection conn (NULL: a datagram or in-process) into w->rb; the reply's length, or
 * 0 for no reply. A reply to an AUTH_TLS probe that promised TLS sets w->starttls (the caller,
 * rc__conn_probe, clears it before and starts TLS after). See serve.c. */
size_t rc__serve(rc_server *srv, rc__wctx *w, const unsigned char *msg, size_t len,
                 const rc_peer *peer, bool dgram, uint64_t t_received, rc_tp *conn);

/* Whether stream connection conn (NULL: a datagram or in-process call) is under TLS with its
 * handshake done; *peer (when peer is not NULL) gets the verified client certificate's
 * identity or NULL. Asked only when a procedure or a TLS-required program wants to know, so
 * a request does not pay for it. */
static inline bool rc__conn_secure(rc_tp *conn, const rc_tls_peer **peer)
{
	const rc_tls_peer *p = NULL;
	bool yes = conn != NULL && conn->vt->secure != NULL && conn->vt->secure(conn, &p);

	if (peer != NULL)
		*peer = p;
	return yes;
}

/* Whether msg[0..len) looks like an AUTH_TLS probe (a call with credential flavor AUTH_TLS):
 * such a request is served at once on the reading thread (rc__conn_probe), never as a job,
 * because the bytes after its reply are TLS. */
static inline bool rc__is_tls_probe(const unsigned char *msg, size_t len)
{
	return len >= 40 && rc__ld32(msg + 4) == RC__CALL && rc__ld32(msg + 24) == RC_AUTH_TLS;
}

/* ---- stats.c: counters and the call log ----------------------------------------------------- */

/* The trace function of a server that counts or logs without tracing: the serve step's traced
 * copy runs, and its trace points call this. */
void rc__obs_nop(void *arg, rc_trace_point pt, uint32_t xid, uint64_t ns);
/* Count and log the call msg[0..len) that serving thread w just served (srv->obs set): rlen
 * its reply's bytes in w->rb, dgram whether it came as a datagram, deferred whether its
 * routine deferred it, t_received when it came (0: unknown). */
void rc__obs_call(rc_server *srv, rc__wctx *w, const unsigned char *msg, size_t len,
                  size_t rlen, bool dgram, bool deferred, uint64_t t_received);
/* Free srv's counters and log settings (rc_server_destroy). */
void rc__obs_free(rc_server *srv);

#endif

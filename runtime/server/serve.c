/*
 * Serving one request -- bytes in, bytes out, no sockets: decode the call header (RPC version,
 * credentials with bounds), run the authentication hook, find the program and version and the
 * procedure (dispatch.c), consult the duplicate request cache (datagrams), decode the
 * arguments under an allocation cap, run the routine, encode the reply into the thread's
 * buffer with headroom for a record mark (reply.c's encoders), and free what decoding and the
 * routine allocated. It never sends: the listener kind that called it sends what it hands
 * back, through the one way out (reply.h) -- but for a big gathered reply, which leaves
 * through the sink it was given while the result it points into lives. Stream connections
 * (conn.c), datagram listeners (dgram.c), synchronous transports (rc__deliver) and the fuzzers
 * all come through rc__serve.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "runtime/core/rpc.h"
#include "runtime/server/server_internal.h"
#include "runtime/server/listener.h" /* (a stream call's peer for the cache: rc__conn) */

/*
 * At most once (datagrams, procedures other than NULL; rc__drc_begin checks those, then
 * rc__drc_admit does the work): look req's call up in the duplicate
 * request cache before it runs. True: run it, and *cached says whether its outcome must be
 * reported to rc__drc_done. False: do not run it; *rlen is the length of the cached reply
 * replayed into w->rb, or 0 to drop the call unanswered (a duplicate of a call still running,
 * one whose reply was let go, or no room to remember it: the client retransmits).
 */
static __attribute__((noinline)) bool rc__drc_admit(rc_server *srv, rc__wctx *w,
                                                    const rc_svc_req *req, const rc__rd *rd,
                                                    size_t max, rc__drc_key *key, bool *cached,
                                                    size_t *rlen)
{
	const rc_peer *peer = req->peer;

	if (!req->dgram) { /* a stream's: its peer without the port (accept.c) */
		if (w->conn == NULL || !w->conn->peer_ok)
			return true; /* in-process, or no address known: not cached */
		peer = &w->conn->peer;
	}
	rc__drc_make_key(key, req->xid, req->rq_prog, req->rq_vers, req->rq_proc,
	                 req->rq_cred.oa_flavor, w->auth != NULL ? w->auth->ctx_id : NULL, peer,
	                 rd->p, (size_t)(rd->end - rd->p));
	rc__reply_reset(w, max);
	switch (rc__drc_lookup(srv->drc, key, &w->rb, rlen)) {
	case RC__DRC_REPLAY:
		return false;
	case RC__DRC_INPROGRESS:
	case RC__DRC_DROP:
	case RC__DRC_REFUSED:
		*rlen = 0;
		return false;
	case RC__DRC_NEW:
		break;
	}
	*cached = true;
	return true;
}

static inline bool rc__drc_begin(rc_server *srv, rc__wctx *w, const rc_svc_req *req,
                                 const rc__rd *rd, size_t max, rc__drc_key *key, bool *cached,
                                 size_t *rlen)
{
	*cached = false;
	if (req->rq_proc == 0 || srv->drc == NULL || (!req->dgram && !req->reg->drc_streams))
		return true;
	/* (out of line: the key's arguments would cost the null call's path spills) */
	return rc__drc_admit(srv, w, req, rd, max, key, cached, rlen);
}

/* The end of a call rc__drc_begin let run with *cached set: when it ran, its reply goes into
 * the entry as it leaves (w->drc, rc__reply_leave); when nothing ran (its arguments were bad,
 * memory short) the entry is forgotten now, and a retransmission runs it. */
static inline void rc__drc_done(rc_server *srv, rc__wctx *w, const rc__drc_key *key, bool ran)
{
	if (ran)
		w->drc = key;
	else
		rc__drc_cancel(srv->drc, key);
}

/*
 * Serve req with its registration's raw dispatcher: the arguments are what rd still holds;
 * the dispatcher answers through rc_svc_req_reply / rc_svc_req_error into w->rb. Datagram
 * calls go through the duplicate request cache as routines' do (an unanswered call is
 * forgotten). Returns the reply's length, or 0 for none.
 */
static size_t rc__serve_raw(rc_server *srv, rc__wctx *w, rc__req *r, const rc__rd *rd,
                            size_t max)
{
	rc_svc_req *req = &r->pub;
	size_t rlen;
	bool cached;

	if (!rc__drc_begin(srv, w, req, rd, max, &r->key, &cached, &rlen))
		return rlen;
	req->w = w;
	req->args = rd->p;
	req->argslen = (size_t)(rd->end - rd->p);
	req->rlen = 0;
	r->keyp = cached ? &r->key : NULL;
	r->rd = rd;
	RC__TRACE(srv, RC_TP_SRV_DISPATCH, req->xid);
	req->reg->raw(r->handle, req->reg->ctx); /* (the handle, not the address) */
	r->rd = NULL;
	r->keyp = NULL;
	if (atomic_load_explicit(&r->state, memory_order_relaxed) != RC__REQ_INLINE) {
		w->req = NULL; /* deferred: answered later */
		rc__req_unhold(r, srv);
		return 0;
	}
	RC__TRACE(srv, RC_TP_SRV_ENCODED, req->xid);
	rlen = req->rlen;
	req->w = NULL;
	if (cached) /* an unanswered call is forgotten */
		rc__drc_done(srv, w, &r->key, rlen > 0);
	return rlen;
}

/* The request's fields for the call xid that came from peer (a datagram's) or on conn. */
static inline __attribute__((always_inline)) void
rc__req_begin(rc_server *srv, rc_svc_req *req, uint32_t xid, const rc_peer *peer, bool dgram,
              rc_tp *conn, const unsigned char *cred, const bool traced, uint64_t t_received)
{
	if (traced && t_received != 0)
		srv->trace(srv->trace_arg, RC_TP_SRV_RECEIVED, xid, t_received);
	req->srv = srv;
	req->xid = xid;
	req->peer = peer;
	req->dgram = dgram;
	req->conn = conn;
	req->keep_res = false;
	req->rq_cred.oa_base = (char *)cred;
}

/* A step of a traced serve (rc__serve_body with traced set; untraced, nothing at all). */
#define RC__STEP(traced, srv, pt, xid)                                                       \
	do {                                                                                  \
		if (traced)                                                                   \
			(srv)->trace((srv)->trace_arg, (pt), (xid), rc__trace_clock());          \
	} while (0)

/*
 * Serve one request message (rc__serve's body, compiled twice: with traced constant, the
 * untraced copy tests nothing per step). Returns the reply's length in w->rb (message at
 * rc__encbuf_msg(&w->rb)), or 0 when no reply is to be sent (not a call, a duplicate in
 * progress, a routine that declined). Procedures with void arguments or results skip the
 * decoder or the encoder: nothing to decode but the check that nothing follows the header,
 * nothing to encode after the reply header.
 */
static inline __attribute__((always_inline)) size_t
rc__serve_body(rc_server *srv, rc__wctx *w, const unsigned char *msg, size_t len,
               const rc_peer *peer, bool dgram, uint64_t t_received, rc_tp *conn,
               const bool traced)
{
	rc_xdr x, rx;
	rc__req *r = w->req;
	rc_svc_req *req;
	uint32_t xid, mtype, rpcvers;
	const unsigned char *cred = NULL;
	void *args = NULL, *res = NULL;
	const rc_procinfo *info;
	size_t max = dgram ? srv->dgram_max : srv->lim.max_record, rlen; /* a datagram's fits */
	bool cached = false, ran = false;
	bool ok;

	rc__rd rd = {msg, msg + len};
	const rc__flavor *fl;
	rc__svc_call in;

	if (__builtin_expect(r == NULL, 0) && (r = w->req = rc__req_new(srv, w)) == NULL)
		return 0; /* no memory for the request: dropped, as a lost datagram */
	req = &r->pub;
	/* (w->auth is NULL between calls: AUTH_NONE verifiers until a flavor says otherwise) */

	/* The usual header, read at fixed offsets: CALL, RPC version 2, AUTH_NONE credentials
	 * with an empty body, a verifier with an empty body -- the plain AUTH_NONE flavor, which
	 * needs nothing checked. Anything else takes the general parse below, which checks every
	 * field and asks the credential's flavor. */
	if (__builtin_expect(len >= 40 && rc__ld32(msg + 4) == RC__CALL &&
	                         rc__ld32(msg + 8) == RC__RPCVERS &&
	                         rc__ld32(msg + 24) == RC_AUTH_NONE && rc__ld32(msg + 28) == 0 &&
	                         rc__ld32(msg + 36) == 0,
	                     1)) {
		w->xid = xid = rc__ld32(msg);
		req->rq_prog = rc__ld32(msg + 12);
		req->rq_vers = rc__ld32(msg + 16);
		req->rq_proc = rc__ld32(msg + 20);
		req->rq_cred.oa_flavor = RC_AUTH_NONE;
		req->rq_cred.oa_length = 0;
		rd.p = msg + 40;
		rc__req_begin(srv, req, xid, peer, dgram, conn, NULL, traced, t_received);
		goto authenticated;
	}
	if (!rc__rd32(&rd, &xid) || !rc__rd32(&rd, &mtype) || mtype != RC__CALL)
		return 0; /* not a call (a reply, or junk): dropped without effect */
	w->xid = xid;
	if (!rc__rd32(&rd, &rpcvers))
		return 0;
	if (rpcvers != RC__RPCVERS) {
		uint32_t range[2] = {RC__RPCVERS, RC__RPCVERS};
		return rc__reply_simple(w, max, xid, true, RC__RPC_MISMATCH, range, 2);
	}
	if (!rc__rd32(&rd, &req->rq_prog) || !rc__rd32(&rd, &req->rq_vers) ||
	    !rc__rd32(&rd, &req->rq_proc) || !rc__rd32(&rd, &in.flavor) ||
	    !rc__rd32(&rd, &in.credlen) || in.credlen > RC__MAX_AUTH_BYTES ||
	    (cred = rc__rdn(&rd, in.credlen)) == NULL || (in.hdrlen = (size_t)(rd.p - msg), false) ||
	    !rc__rd32(&rd, &in.vflavor) || !rc__rd32(&rd, &in.vlen) ||
	    in.vlen > RC__MAX_AUTH_BYTES || (in.verf = rc__rdn(&rd, in.vlen)) == NULL) {
		uint32_t st = RC__AUTH_BADCRED;
		return rc__reply_simple(w, max, xid, true, RC__AUTH_ERROR, &st, 1);
	}
	req->rq_cred.oa_flavor = in.flavor;
	req->rq_cred.oa_length = in.credlen;
	if (in.credlen == 0)
		cred = NULL;
	fl = rc__flavor_find(in.flavor);
	rc__req_begin(srv, req, xid, peer, dgram, conn, cred, traced, t_received);
	if (fl != &rc__flavor_none) { /* the flavor checks the call */
		uint32_t st = RC__AUTH_REJECTEDCRED; /* a flavor this server does not take */
		size_t rlen = 0;
		if (fl != NULL && fl->svc_accept != NULL) {
			in.reply = &rc__flavor_replies;
			in.w = w;
			in.max = max;
			in.gss = srv->gss;
			in.gss_dropped = &srv->n_gss_dropped;
			in.msg = msg;
			in.xid = xid;
			in.prog = req->rq_prog;
			in.vers = req->rq_vers;
			in.proc = req->rq_proc;
			in.cred = cred;
			in.body = rd.p;
			in.bodylen = (size_t)(rd.end - rd.p);
			in.dgram = dgram;
			in.conn = dgram ? NULL : conn;
			in.tls = rc__conn_secure(conn, NULL);
			in.can_tls = !dgram && conn != NULL && conn->vt->starttls != NULL &&
			             srv->tls != NULL;
			r->auth.fl = fl;
			r->auth.ctx = NULL;
			r->auth.seq = r->auth.service = 0;
			r->auth.ctx_id = NULL;
			r->auth.verf_flavor = r->auth.verf_len = 0;
			st = fl->svc_accept(&in, &r->auth, r->handle, &rlen);
		}
		if (st == RC__AUTH_ANSWERED)
			return rlen;
		if (st == RC__AUTH_DROP)
			return 0;
		if (st != 0)
			return rc__reply_simple(w, max, xid, true, RC__AUTH_ERROR, &st, 1);
		if (!(fl->props & RC__FL_PLAIN))
			w->auth = &r->auth; /* its verifier and wrapping from now on */
	}
authenticated:

	req->reg = rc__find(srv, req->rq_prog, req->rq_vers);
	if (__builtin_expect(req->reg == NULL, 0)) {
		uint32_t range[2];
		if (req->rq_prog == RC__CTL_PROG) /* a failover client's notice (drain.c) */
			return srv->ctl_serve(srv, w, req, xid, max);
		if (rc__vers_range(srv, req->rq_prog, &range[0], &range[1]))
			return rc__reply_simple(w, max, xid, false, RC__PROG_MISMATCH, range, 2);
		return rc__reply_simple(w, max, xid, false, RC__PROG_UNAVAIL, NULL, 0);
	}
	if (__builtin_expect(req->reg->rules, 0)) { /* what this program asks of its callers */
		uint32_t st = RC__AUTH_TOOWEAK;
		if (req->reg->tls_required && !rc__conn_secure(conn, NULL))
			return rc__reply_simple(w, max, xid, true, RC__AUTH_ERROR, &st, 1); /* RFC 9289 */
		if (req->reg->gss_min != 0 && req->rq_proc != 0 &&
		    (w->auth == NULL || w->auth->fl != &rc__flavor_gss ||
		     w->auth->service < req->reg->gss_min))
			return rc__reply_simple(w, max, xid, true, RC__AUTH_ERROR, &st, 1); /* RFC 2203 */
	}
	req->proc = NULL;
	if (__builtin_expect(req->reg->raw == NULL, 1)) {
		req->proc = rc__find_proc(req->reg, req->rq_proc);
		if (__builtin_expect(req->proc == NULL, 0))
			return rc__reply_simple(w, max, xid, false, RC__PROC_UNAVAIL, NULL, 0);
	}
	if (__builtin_expect(srv->auth != NULL, 0)) {
		uint32_t st = srv->auth(r->handle, srv->auth_ctx);
		if (st != 0)
			return rc__reply_simple(w, max, xid, true, RC__AUTH_ERROR, &st, 1);
	}
	if (__builtin_expect(w->auth != NULL, 0) && w->auth->fl->svc_unwrap != NULL) {
		/* the arguments as the flavor protected them: unwrapped into a block of the request */
		const unsigned char *p;
		size_t n;
		uint32_t st = w->auth->fl->svc_unwrap(w->auth, rd.p, (size_t)(rd.end - rd.p), &p, &n,
		                                      &r->unwrapped);
		if (st == RC__AUTH_DROP)
			return 0;
		if (st != 0)
			return rc__reply_simple(w, max, xid, false, st, NULL, 0);
		rd.p = p;
		rd.end = p + n;
	}
	if (__builtin_expect(req->reg->raw != NULL, 0))
		return rc__serve_raw(srv, w, r, &rd, max);
	info = req->proc->info;

	/* At most once: a retransmitted datagram gets the cached reply, not a second run. */
	if (__builtin_expect(!rc__drc_begin(srv, w, req, &rd, max, &r->key, &cached, &rlen), 0))
		return rlen;

	RC__STEP(traced, srv, RC_TP_SRV_DISPATCH, xid);
	if (info->xargs == (rc_xdrproc)rc_xdr_void) {
		if (__builtin_expect(rd.p != rd.end, 0))
			goto garbage; /* trailing bytes after a void argument */
	} else {
		/* the argument object, zeroed: on the stack when small */
		args = info->args_size <= sizeof(r->argbuf) ? memset(r->argbuf, 0, info->args_size)
		                                            : (r->args_heap = calloc(1, info->args_size));
		if (args == NULL)
			goto system_err;
		rc__xdr_decoder(&x, rd.p, (size_t)(rd.end - rd.p), RC__LIM(srv, max_alloc));
		x.x_lend_lo = rd.p; /* large opaque data stays in the request's buffer */
		x.x_lend_hi = rd.end;
		if (!info->xargs(&x, args) || x.x_pos != x.x_end)
			goto garbage; /* truncated, over a bound, or trailing bytes */
	}
	if (info->res_size > 0) {
		res = info->res_size <= sizeof(r->resbuf) ? memset(r->resbuf, 0, info->res_size)
		                                          : (r->res_heap = calloc(1, info->res_size));
		if (res == NULL)
			goto system_err;
	}
	RC__STEP(traced, srv, RC_TP_SRV_ARGS, xid);
	ran = true;
	if (cached) /* what rc_svc_req_defer needs while the routine runs: this, and rd */
		r->keyp = &r->key;
	r->rd = &rd;
	ok = req->proc->fn(args, res, r->handle); /* (the handle, not the address) */
	r->rd = NULL;
	RC__STEP(traced, srv, RC_TP_SRV_PROC, xid);
	if (__builtin_expect(atomic_load_explicit(&r->state, memory_order_relaxed) != RC__REQ_INLINE,
	                     0)) {
		w->req = NULL; /* deferred: the request, its objects and its cache entry live on */
		rc__req_unhold(r, srv);
		return 0;
	}
	if (__builtin_expect(!ok, 0))
		goto system_err;
	if (info->xres == (rc_xdrproc)rc_xdr_void && w->auth == NULL) {
		rc__reply_head_plain(w, max, xid);
		rlen = 24; /* the reply header alone: no encode stream */
	} else {
		if (!rc__reply_success(w, &rx, max, xid)) {
			rlen = 0; /* the flavor made no verifier: no reply */
			goto out;
		}
		if (w->gsink != NULL && w->auth == NULL && !cached) /* a stream: big data may go
		                   from the result's memory (unless wrapped, or kept in the cache) */
			rc__encbuf_gather_on(&w->rb, &rx);
		if (!rc__encode_res(w, &rx, info->xres, res)) {
			w->rb.gather = false;
			if (dgram && w->rb.toolarge)
				goto too_big;
			goto system_err;
		}
		rlen = rc_xdr_getpos(&rx);
		if (w->rb.gather && w->rb.nseg > 0) {
			/* gathered: it leaves now, while the result it points into lives */
			w->rb.gather = false;
			RC__STEP(traced, srv, RC_TP_SRV_ENCODED, xid);
			w->gsent = rc__reply_send(srv, w->gsink,
			                          &(const rc__out){.msg = rc__encbuf_msg(&w->rb),
			                                           .len = rlen, .seg = w->rb.seg,
			                                           .nseg = w->rb.nseg, .xid = xid},
			                          NULL, false) ? 1 : -1;
			rlen = 0;
			goto out;
		}
		w->rb.gather = false;
	}
	RC__STEP(traced, srv, RC_TP_SRV_ENCODED, xid);
out:
	if (args != NULL) {
		rc__xdr_free_lent(info->xargs, args, rd.p, rd.end);
		if (args != r->argbuf)
			free(args);
	}
	if (res != NULL) {
		if (!req->keep_res) /* (a result pointing into the request is left alone too) */
			rc__xdr_free_lent(info->xres, res, rd.p, rd.end);
		if (res != r->resbuf)
			free(res);
	}
	if (cached) {
		r->keyp = NULL;
		rc__drc_done(srv, w, &r->key, ran);
	}
	return rlen;
garbage:
	rlen = rc__reply_simple(w, max, xid, false, RC__GARBAGE_ARGS, NULL, 0);
	goto out;
too_big:
	rc__reply_too_big(srv, xid);
system_err:
	rlen = rc__reply_simple(w, max, xid, false, RC__SYSTEM_ERR, NULL, 0);
	goto out;
}

/* The traced copy, then the call's counters and log line when the server keeps them
 * (stats.c: a server that counts or logs has a trace function, if only a no-op). */
static __attribute__((noinline)) size_t rc__serve_traced(rc_server *srv, rc__wctx *w,
                                                         const unsigned char *msg, size_t len,
                                                         const rc_peer *peer, bool dgram,
                                                         uint64_t t_received, rc_tp *conn)
{
	size_t rlen = rc__serve_body(srv, w, msg, len, peer, dgram, t_received, conn, true);

	if (srv->obs != NULL) /* (a deferred request has left the thread: w->req NULL) */
		rc__obs_call(srv, w, msg, len, rlen, dgram, w->req == NULL, t_received);
	return rlen;
}

/* request.h: serve one request message (the untraced copy unless the server traces). */
size_t rc__serve(rc_server *srv, rc__wctx *w, const unsigned char *msg, size_t len,
                 const rc_peer *peer, bool dgram, uint64_t t_received, rc_tp *conn)
{
	size_t rlen;

	if (__builtin_expect(srv->trace != NULL, 0))
		rlen = rc__serve_traced(srv, w, msg, len, peer, dgram, t_received, conn);
	else
		rlen = rc__serve_body(srv, w, msg, len, peer, dgram, t_received, conn, false);
	if (__builtin_expect(w->auth != NULL, 0)) {
		/* a flavor's call, answered inline (a deferred request keeps what it holds) */
		rc__req *r = w->req;
		if (r != NULL && w->auth == &r->auth) {
			rc__svc_auth_done(&r->auth);
			free(r->unwrapped);
			r->unwrapped = NULL;
		}
		w->auth = NULL;
	}
	return rlen;
}

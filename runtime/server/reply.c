/*
 * The way out of the server: the reply encoders -- every reply's header, verifier and wrapped
 * results, through the call's flavor (w->auth); rc__reply_send, the one function every reply
 * leaves by, is inline in reply.h ("The one way out"). Below the serve step, which makes
 * replies with these and hands them to the flavors (rc__flavor_replies: the flavors, below
 * the server, call none of them by name); above nothing but the duplicate request cache, the
 * trace and the flavors: a reply reaches its socket through its sink, never by a call up into
 * the listener kinds.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/rpc.h"
#include "runtime/server/server_internal.h"
#include "runtime/server/reply.h"

/* Start a reply to xid in w's buffer: returns the stream positioned after the reply header's
 * common part (xid, REPLY). */
static void rc__reply_begin(rc__wctx *w, rc_xdr *x, size_t max, uint32_t xid)
{
	unsigned char *h;

	rc__reply_reset(w, max);
	rc__encbuf_xdr(&w->rb, x);
	h = rc_xdr_inline(x, 8); /* the stack buffer always has room */
	rc__st32(h, xid);
	rc__st32(h + 4, RC__REPLY);
}

/* The verifier of an accepted reply under w->auth (NULL: AUTH_NONE, empty) into x. False when
 * the flavor cannot make one (the reply is then not sent). */
static bool rc__reply_verf(const rc__wctx *w, rc_xdr *x)
{
	const rc__svc_auth *a = w->auth;
	uint32_t vflavor = RC_AUTH_NONE, vlen = 0;
	unsigned char body[RC__MAX_AUTH_BYTES];
	const unsigned char *v = body;

	if (a != NULL) {
		if (a->fl->svc_verf != NULL) {
			if (!a->fl->svc_verf(a, &vflavor, body, &vlen) || vlen > RC__MAX_AUTH_BYTES)
				return false;
		} else {
			vflavor = a->verf_flavor; /* the auth hook's (rc_svc_req_set_verf), or none */
			vlen = a->verf_len;
			v = a->verf;
		}
	}
	return rc_xdr_u_int(x, &vflavor) && rc_xdr_u_int(x, &vlen) &&
	       (vlen == 0 || rc_xdr_opaque(x, (void *)v, vlen));
}

/* reply.h: an accepted reply's header through accept_stat, its verifier from w->auth. */
bool rc__reply_accepted_head(rc__wctx *w, rc_xdr *x, size_t max, uint32_t xid, uint32_t stat)
{
	uint32_t acc = RC__MSG_ACCEPTED;

	rc__reply_begin(w, x, max, xid);
	return rc_xdr_u_int(x, &acc) && rc__reply_verf(w, x) && rc_xdr_u_int(x, &stat);
}

/* reply.h: a complete reply with no body beyond the status (and optional low/high
 * range); 0 when an accepted one's verifier cannot be made. */
size_t rc__reply_simple(rc__wctx *w, size_t max, uint32_t xid, bool denied, uint32_t stat,
                        const uint32_t *extra, int nextra)
{
	rc_xdr x;

	if (denied) {
		uint32_t v = RC__MSG_DENIED;
		rc__reply_begin(w, &x, max, xid);
		rc_xdr_u_int(&x, &v);
		rc_xdr_u_int(&x, &stat);
	} else if (!rc__reply_accepted_head(w, &x, max, xid, stat)) {
		return 0;
	}
	for (int i = 0; i < nextra; i++)
		rc_xdr_u_int(&x, (uint32_t *)&extra[i]);
	return rc_xdr_getpos(&x);
}

/* reply.h: SUCCESS to an AUTH_TLS probe, verifier AUTH_NONE "STARTTLS"; the serving
 * thread starts TLS once it is out (w->starttls). */
size_t rc__reply_starttls(rc__wctx *w, size_t max, uint32_t xid)
{
	rc_xdr x;
	unsigned char *h;

	rc__reply_begin(w, &x, max, xid);
	h = rc_xdr_inline(&x, 24); /* the stack buffer always has room */
	rc__st32(h, RC__MSG_ACCEPTED);
	rc__st32(h + 4, RC_AUTH_NONE);
	rc__st32(h + 8, 8);
	memcpy(h + 12, "STARTTLS", 8);
	rc__st32(h + 20, RC__SUCCESS);
	w->starttls = true;
	return rc_xdr_getpos(&x);
}

/* The encoders a flavor answers a call with (auth.h, rc__svc_replies), on call in's reply
 * buffer. */
static size_t rc__flavor_simple(const rc__svc_call *in, bool denied, uint32_t stat,
                                const uint32_t *extra, int nextra)
{
	return rc__reply_simple(in->w, in->max, in->xid, denied, stat, extra, nextra);
}

static size_t rc__flavor_accepted(const rc__svc_call *in, uint32_t stat, const rc__svc_auth *a,
                                  const unsigned char *body, size_t n)
{
	rc__wctx *w = in->w;
	const rc__svc_auth *prev = w->auth;
	size_t rlen = 0;
	rc_xdr x;

	w->auth = a; /* this reply's verifier */
	if (rc__reply_accepted_head(w, &x, in->max, in->xid, stat) &&
	    (n == 0 || rc_xdr_opaque(&x, (void *)body, (uint32_t)n)))
		rlen = rc_xdr_getpos(&x);
	w->auth = prev;
	return rlen;
}

static size_t rc__flavor_starttls(const rc__svc_call *in)
{
	return rc__reply_starttls(in->w, in->max, in->xid);
}

const rc__svc_replies rc__flavor_replies = {
	.simple = rc__flavor_simple,
	.accepted = rc__flavor_accepted,
	.starttls = rc__flavor_starttls,
};

/* reply.h: a datagram reply to xid did not fit: counted and traced. */
void rc__reply_too_big(rc_server *srv, uint32_t xid)
{
	__atomic_add_fetch(&srv->n_toobig, 1, __ATOMIC_RELAXED);
	RC__TRACE(srv, RC_TP_SRV_TOOBIG, xid);
}

/* reply.h: a SUCCESS reply to xid with *res coded by xres into w's buffer (at most max
 * bytes; a datagram's when dgram); SYSTEM_ERR when xres fails. */
size_t rc__reply_result(rc_server *srv, rc__wctx *w, size_t max, bool dgram, uint32_t xid,
                        rc_xdrproc xres, const void *res, rc_status *st)
{
	rc_xdr rx;

	if (dgram && max > RC__UDP_MAX)
		max = RC__UDP_MAX;
	if (!rc__reply_success(w, &rx, max, xid)) {
		*st = RC_AUTHERROR; /* the flavor made no verifier: no reply */
		return 0;
	}
	if (!rc__encode_res(w, &rx, xres, res)) {
		bool big = w->rb.toolarge;
		if (big && dgram)
			rc__reply_too_big(srv, xid);
		*st = big ? RC_MSGTOOLARGE : RC_CANTENCODEARGS;
		return rc__reply_simple(w, max, xid, false, RC__SYSTEM_ERR, NULL, 0);
	}
	*st = RC_OK;
	return rc_xdr_getpos(&rx);
}

/* reply.h: an error reply to xid: rc_svc_err -> (denied?, status, extra words). 0 for an
 * err out of range. */
size_t rc__reply_error(rc__wctx *w, size_t max, uint32_t xid, rc_svc_err err, uint32_t lo,
                       uint32_t hi)
{
	static const struct {
		bool denied;
		uint32_t stat;
		int nextra;
	} map[] = {
		[RC_SVC_PROG_UNAVAIL] = {false, RC__PROG_UNAVAIL, 0},
		[RC_SVC_PROG_MISMATCH] = {false, RC__PROG_MISMATCH, 2},
		[RC_SVC_PROC_UNAVAIL] = {false, RC__PROC_UNAVAIL, 0},
		[RC_SVC_GARBAGE_ARGS] = {false, RC__GARBAGE_ARGS, 0},
		[RC_SVC_SYSTEM_ERR] = {false, RC__SYSTEM_ERR, 0},
		[RC_SVC_AUTH_ERROR] = {true, RC__AUTH_ERROR, 1},
	};
	uint32_t extra[2] = {lo, hi};

	if (err < RC_SVC_PROG_UNAVAIL || err > RC_SVC_AUTH_ERROR)
		return 0;
	return rc__reply_simple(w, max, xid, map[err].denied, map[err].stat, extra,
	                        map[err].nextra);
}



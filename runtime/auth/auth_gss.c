/*
 * RPCSEC_GSS (RFC 2203) as an auth flavor (auth.h): the glue between the flavor interface and
 * the GSS core (gss.h). Server: svc_accept judges each call's credential against the server's
 * context table (server/rpcsec_gss.c makes it; the call brings it, and the server's reply encoders:
 * this file knows no server object), INIT/CONTINUE_INIT answered here, DESTROY too; the reply
 * verifier is a MIC over the call's seq, arguments and results are unwrapped and wrapped for
 * the call's service, and the context reference goes with the reply (inline or deferred).
 * Client: the data flavor seals every call (credential with a fresh seq, a MIC over the
 * header, wrapped arguments) and checks every reply against the seqs its call went out with;
 * making a context (calls on the client itself) is auth_gss_cl.c's, above the client, which
 * this file never calls: a renewal goes through the state's renew.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/auth/auth.h"
#include "runtime/auth/gss.h"
#include "runtime/auth/gss_flavor.h"
#include "runtime/core/rpc.h"

/* ---- server ----------------------------------------------------------------------------- */

/* The reply to an INIT/CONTINUE_INIT (a: its verdict): the GSS core's rpc_gss_init_res as
 * the NULL procedure's results, with its verifier. Returns the reply's length, or 0. */
static size_t rc__gss_answer_init(const rc__svc_call *in, const rc__gss_accepted *acc)
{
	rc__gss_buf res = {0}, verf = {0};
	rc__gss_err err = {0};
	uint32_t vflavor = RC_AUTH_NONE, st;
	rc__svc_auth v = {.fl = &rc__flavor_none};
	size_t rlen = 0;
	int r;

	r = rc__gss_svc_init(in->gss, acc, in->body, in->bodylen, &res, &vflavor, &verf, &err);
	if (r == -1)
		return in->reply->simple(in, false, RC__GARBAGE_ARGS, NULL, 0);
	if (r == -2) {
		st = RC__AUTH_CREDPROBLEM;
		return in->reply->simple(in, true, RC__AUTH_ERROR, &st, 1);
	}
	if (r != 0)
		return in->reply->simple(in, false, RC__SYSTEM_ERR, NULL, 0);
	if (verf.len <= RC__MAX_AUTH_BYTES) {
		v.verf_flavor = vflavor; /* this reply's verifier */
		v.verf_len = (uint32_t)verf.len;
		if (verf.len > 0)
			memcpy(v.verf, verf.data, verf.len);
		rlen = in->reply->accepted(in, RC__SUCCESS, &v, res.data, res.len);
	}
	rc__gss_buf_free(&res);
	rc__gss_buf_free(&verf);
	return rlen;
}

static uint32_t rc__gss_accept(const rc__svc_call *in, rc__svc_auth *a, rc_svc_req *req,
                               size_t *rlen)
{
	rc__gss_accepted acc;
	unsigned char exporter[RC__GSS_EXPORTER_LEN];

	(void)req;
	if (in->gss == NULL)
		return RC__AUTH_REJECTEDCRED; /* no acceptor: the flavor is not taken here */
	rc__gss_svc_accept(in->gss, in->msg, in->hdrlen, in->cred, in->credlen, in->vflavor,
	                   in->verf, in->vlen, &acc);
	switch (acc.verdict) {
	case RC__GSS_V_OK:
		break;
	case RC__GSS_V_INIT:
		if (in->proc != 0)
			return RC__AUTH_BADCRED; /* control procedures go to NULLPROC only */
		/* a connection under TLS or QUIC: the context is bound to it (RFC 9266) */
		if (rc__tp_exporter(in->conn, exporter, &acc.bind_required))
			acc.exporter = exporter;
		*rlen = rc__gss_answer_init(in, &acc);
		return RC__AUTH_ANSWERED;
	case RC__GSS_V_DROP:
		__atomic_add_fetch(in->gss_dropped, 1, __ATOMIC_RELAXED);
		return RC__AUTH_DROP;
	case RC__GSS_V_BADCRED:
		return RC__AUTH_BADCRED;
	case RC__GSS_V_BADVERF:
		return RC__AUTH_BADVERF;
	case RC__GSS_V_CREDPROBLEM:
		return RC__AUTH_CREDPROBLEM;
	case RC__GSS_V_CTXPROBLEM:
	default:
		return RC__AUTH_CTXPROBLEM;
	}
	_Static_assert(RC__GSS_EXPORTER_LEN == RC_TP_EXPORTER_LEN, "one exporter length");
	a->ctx = acc.ctx;
	a->ctx_id = rc__gss_svc_ctx_handle(acc.ctx); /* (the cache tells contexts apart) */
	a->seq = acc.seq;
	a->service = acc.service;
	if (acc.proc == RC__GSS_DESTROY) {
		/* the context left the table: the reply verifier and void results, unwrapped */
		*rlen = in->reply->accepted(in, RC__SUCCESS, a, NULL, 0);
		rc__gss_svc_ctx_unref(acc.ctx);
		a->ctx = NULL;
		return RC__AUTH_ANSWERED;
	}
	return 0;
}

static bool rc__gss_verf(const rc__svc_auth *a, uint32_t *vflavor, unsigned char *body,
                         uint32_t *vlen)
{
	rc__gss_buf b = {0};
	bool ok;

	if (rc__gss_svc_reply_verf(a->ctx, a->seq, &b, NULL) != 0)
		return false;
	ok = b.len <= RC__MAX_AUTH_BYTES;
	if (ok) {
		*vflavor = RC__GSS_FLAVOR;
		*vlen = (uint32_t)b.len;
		memcpy(body, b.data, b.len);
	}
	rc__gss_buf_free(&b);
	return ok;
}

static uint32_t rc__gss_unwrap(const rc__svc_auth *a, const unsigned char *p, size_t n,
                               const unsigned char **out, size_t *outn, void **owned)
{
	rc__gss_buf b = {0};

	if (rc__gss_svc_unwrap_args(a->ctx, a->seq, a->service, p, n, &b, NULL) != 0)
		return RC__GARBAGE_ARGS;
	*out = b.data != NULL ? b.data : p + n; /* (empty arguments) */
	*outn = b.len;
	*owned = b.data;
	return 0;
}

/* The results encoded plain into a buffer of their own (as large as x's may grow), then
 * wrapped into x. */
static bool rc__gss_wrap(const rc__svc_auth *a, rc_xdr *x, rc_xdrproc xres, const void *res)
{
	_Alignas(16) unsigned char stack[1024];
	size_t max = x->x_more == rc__encbuf_grow ? ((rc__encbuf *)x->x_ctx)->max
	                                          : rc_xdr_remaining(x);
	rc__encbuf b;
	rc_xdr y;
	rc__gss_buf w = {0};
	bool ok;

	rc__encbuf_init(&b, stack, sizeof(stack), max);
	rc__encbuf_xdr(&b, &y);
	ok = xres(&y, (void *)res) &&
	     rc__gss_svc_wrap_results(a->ctx, a->seq, a->service, rc__encbuf_msg(&b),
	                              rc_xdr_getpos(&y), &w, NULL) == 0 &&
	     (w.len == 0 || rc_xdr_opaque(x, w.data, (uint32_t)w.len));
	rc__gss_buf_free(&w);
	rc__encbuf_free(&b);
	return ok;
}

static void rc__gss_release(rc__svc_auth *a)
{
	rc__gss_svc_ctx_unref(a->ctx);
}

/* ---- client ----------------------------------------------------------------------------- */

/* The credential and verifier of a DATA call: cred with a fresh seq, then the MIC over the
 * header through the credential. */
static bool rc__gss_cl_marshal(rc__cl_auth *a, const unsigned char *head, rc_xdr *x,
                               uint32_t *seq, rc_error *err)
{
	rc__gss_cl *g = a->priv;
	unsigned char hdr[24 + 8 + RC__MAX_AUTH_BYTES];
	rc__gss_buf verf = {0};
	rc__gss_err ge = {0};
	size_t clen;
	uint32_t v;
	bool ok;

	if (rc__gss_cli_next_seq(g->cli, seq) != 0) {
		snprintf(err->detail, sizeof(err->detail), "RPCSEC_GSS: sequence numbers used up");
		err->auth_stat = RC__AUTH_CTXPROBLEM;
		return false;
	}
	clen = rc__gss_cli_cred(g->cli, RC__GSS_DATA, *seq, hdr + 32, RC__MAX_AUTH_BYTES);
	if (clen == 0 || clen > RC__MAX_AUTH_BYTES || (clen & 3) != 0)
		return false;
	memcpy(hdr, head, 24);
	rc__st32(hdr + 24, RC__GSS_FLAVOR);
	rc__st32(hdr + 28, (uint32_t)clen);
	if (rc__gss_cli_header_verf(g->cli, hdr, 32 + clen, &verf, &ge) != 0) {
		rc__detail_put(err->detail, sizeof(err->detail), ge.text);
		return false;
	}
	v = RC__GSS_FLAVOR;
	ok = rc_xdr_opaque(x, hdr + 24, (uint32_t)(8 + clen)) && rc_xdr_u_int(x, &v) &&
	     verf.len <= RC__MAX_AUTH_BYTES && (v = (uint32_t)verf.len, rc_xdr_u_int(x, &v)) &&
	     (verf.len == 0 || rc_xdr_opaque(x, verf.data, (uint32_t)verf.len));
	rc__gss_buf_free(&verf);
	return ok;
}

static bool rc__gss_cl_wrap(rc__cl_auth *a, uint32_t seq, const unsigned char *args, size_t n,
                            rc_xdr *x)
{
	rc__gss_cl *g = a->priv;
	rc__gss_buf w = {0};
	bool ok;

	if (rc__gss_cli_wrap(g->cli, seq, args, n, &w, NULL) != 0)
		return false;
	ok = w.len == 0 || rc_xdr_opaque(x, w.data, (uint32_t)w.len);
	rc__gss_buf_free(&w);
	return ok;
}

static void rc__gss_seqs_from(rc__gss_seqs *s, const rc__cl_seqs *seqs)
{
	rc__gss_seqs_init(s);
	for (unsigned i = 0; i < seqs->n; i++)
		rc__gss_seqs_add(s, seqs->seq[i]);
}

static bool rc__gss_cl_validate(rc__cl_auth *a, const rc__cl_seqs *seqs, uint32_t vflavor,
                                const unsigned char *body, uint32_t vlen)
{
	rc__gss_cl *g = a->priv;
	rc__gss_seqs s;

	rc__gss_seqs_from(&s, seqs);
	return rc__gss_cli_validate(g->cli, &s, vflavor, body, vlen, NULL) == 0;
}

static bool rc__gss_cl_unwrap(rc__cl_auth *a, const rc__cl_seqs *seqs, const unsigned char *body,
                              size_t n, const unsigned char **out, size_t *outn, void **owned)
{
	rc__gss_cl *g = a->priv;
	rc__gss_seqs s;
	rc__gss_buf b = {0};

	rc__gss_seqs_from(&s, seqs);
	if (rc__gss_cli_unwrap(g->cli, &s, body, n, &b, NULL) != 0)
		return false;
	*out = b.data != NULL ? b.data : body + n;
	*outn = b.len;
	*owned = b.data;
	return true;
}

static void rc__gss_cl_destroy(rc__cl_auth *a)
{
	rc__gss_cl *g = a->priv;

	rc__gss_cli_destroy(g->cli);
	free(g);
}

/* A call was denied with RPCSEC_GSS_CREDPROBLEM or CTXPROBLEM (the server lost or expired
 * the context, or the seqs ran out): make a context again on the same client, once, and go on
 * under it -- through g->renew (auth_gss_cl.c, above the client: it makes calls). */
static bool rc__gss_cl_refresh(rc__cl_auth *a, uint32_t why)
{
	rc__gss_cl *g = a->priv;

	if (why != RC__AUTH_CREDPROBLEM && why != RC__AUTH_CTXPROBLEM)
		return false;
	return g->renew != NULL && g->renew(a);
}

const rc__flavor rc__flavor_gss = {
	.number = RC__GSS_FLAVOR,
	.name = "RPCSEC_GSS",
	.props = 0,
	.svc_accept = rc__gss_accept,
	.svc_verf = rc__gss_verf,
	.svc_unwrap = rc__gss_unwrap,
	.svc_wrap = rc__gss_wrap,
	.svc_release = rc__gss_release,
	.cl_marshal = rc__gss_cl_marshal,
	.cl_wrap = rc__gss_cl_wrap,
	.cl_validate = rc__gss_cl_validate,
	.cl_unwrap = rc__gss_cl_unwrap,
	.cl_refresh = rc__gss_cl_refresh,
	.cl_destroy = rc__gss_cl_destroy,
};

/* gss_flavor.h: the core object of a data flavor object, and the client it serves. */
rc__gss_cli *rc__gss_cl_core(const rc__cl_auth *a, rc_client **clnt)
{
	const rc__gss_cl *g;

	if (a == NULL || a->fl != &rc__flavor_gss)
		return NULL;
	g = a->priv;
	if (clnt != NULL)
		*clnt = g->clnt;
	return g->cli;
}

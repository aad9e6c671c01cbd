/*
 * RPCSEC_GSS (RFC 2203) as an auth flavor (auth.h): the glue between the flavor interface and
 * the GSS core (gss.h). Server: rc_server_set_gss gives a server a context table; svc_accept
 * judges each call's credential (INIT/CONTINUE_INIT answered here, DESTROY too), the reply
 * verifier is a MIC over the call's seq, arguments and results are unwrapped and wrapped for
 * the call's service, and the context reference goes with the reply (inline or deferred).
 * Client: rc_client_set_auth_gss establishes a context with NULL calls on the client itself,
 * then seals every call (credential with a fresh seq, a MIC over the header, wrapped
 * arguments) and checks every reply against the seqs its call went out with.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/auth.h"
#include "runtime/gss.h"
#include "runtime/rpc.h"
#include "runtime/server_internal.h"
#include "runtime/server_priv.h"
#include "runtime/sunrpc_gss_int.h"

/* ---- server ----------------------------------------------------------------------------- */

/* server.h: a context table for srv's RPCSEC_GSS calls. */
rc_status rc_server_set_gss(rc_server *srv, const char *principal, const char *keytab,
                            char *why, size_t whylen)
{
	rc__gss_table_opts o = {.principal = principal, .keytab = keytab};
	rc__gss_table *t;

	if (srv != NULL) { /* the bounds of rc_server_limits (rc__gss_apply_limits later) */
		o.max_contexts = srv->lim.gss_contexts;
		o.idle_ms = srv->lim.gss_idle_ms;
	}
	rc__gss_err err = {0};

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (srv == NULL)
		return RC_INVAL;
	if (rc__gss_table_create(&t, &o, &err) != 0) {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "%s", err.text);
		return RC_AUTHERROR;
	}
	pthread_mutex_lock(&srv->mu);
	if (atomic_load(&srv->running) || srv->gss != NULL) {
		pthread_mutex_unlock(&srv->mu);
		rc__gss_table_destroy(t);
		return RC_INVAL;
	}
	srv->gss = t;
	pthread_mutex_unlock(&srv->mu);
	return RC_OK;
}

/* server_priv.h: the table goes with the server; rc_server_set_limits's bounds; the contexts
 * it holds now. */
void rc__gss_free(rc_server *srv)
{
	if (srv->gss != NULL)
		rc__gss_table_destroy(srv->gss);
	srv->gss = NULL;
}

void rc__gss_apply_limits(rc_server *srv)
{
	if (srv->gss != NULL)
		rc__gss_table_set_bounds(srv->gss, srv->lim.gss_contexts, srv->lim.gss_idle_ms);
}

uint64_t rc__gss_contexts(rc_server *srv)
{
	rc__gss_stats st;

	if (srv->gss == NULL)
		return 0;
	rc__gss_table_stats(srv->gss, &st);
	return st.contexts;
}

/* The reply to an INIT/CONTINUE_INIT (a: its verdict): the GSS core's rpc_gss_init_res as
 * the NULL procedure's results, with its verifier. Returns the reply's length, or 0. */
static size_t rc__gss_answer_init(const rc__svc_call *in, const rc__gss_accepted *acc)
{
	rc__gss_buf res = {0}, verf = {0};
	rc__gss_err err = {0};
	uint32_t vflavor = RC_AUTH_NONE, st;
	rc__svc_auth v = {.fl = &rc__flavor_none};
	size_t rlen = 0;
	rc_xdr x;
	int r;

	r = rc__gss_svc_init(in->srv->gss, acc, in->body, in->bodylen, &res, &vflavor, &verf, &err);
	if (r == -1)
		return rc__reply_simple(in->w, in->max, in->xid, false, RC__GARBAGE_ARGS, NULL, 0);
	if (r == -2) {
		st = RC__AUTH_CREDPROBLEM;
		return rc__reply_simple(in->w, in->max, in->xid, true, RC__AUTH_ERROR, &st, 1);
	}
	if (r != 0)
		return rc__reply_simple(in->w, in->max, in->xid, false, RC__SYSTEM_ERR, NULL, 0);
	if (verf.len <= RC__MAX_AUTH_BYTES) {
		v.verf_flavor = vflavor;
		v.verf_len = (uint32_t)verf.len;
		if (verf.len > 0)
			memcpy(v.verf, verf.data, verf.len);
		in->w->auth = &v; /* this reply's verifier */
		if (rc__reply_accepted_head(in->w, &x, in->max, in->xid, RC__SUCCESS) &&
		    (res.len == 0 || rc_xdr_opaque(&x, res.data, (uint32_t)res.len)))
			rlen = rc_xdr_getpos(&x);
		in->w->auth = NULL;
	}
	rc__gss_buf_free(&res);
	rc__gss_buf_free(&verf);
	return rlen;
}

static uint32_t rc__gss_accept(const rc__svc_call *in, rc__svc_auth *a, rc_svc_req *req,
                               size_t *rlen)
{
	rc__gss_accepted acc;

	(void)req;
	if (in->srv->gss == NULL)
		return RC__AUTH_REJECTEDCRED; /* no acceptor: the flavor is not taken here */
	rc__gss_svc_accept(in->srv->gss, in->msg, in->hdrlen, in->cred, in->credlen, in->vflavor,
	                   in->verf, in->vlen, &acc);
	switch (acc.verdict) {
	case RC__GSS_V_OK:
		break;
	case RC__GSS_V_INIT:
		if (in->proc != 0)
			return RC__AUTH_BADCRED; /* control procedures go to NULLPROC only */
		*rlen = rc__gss_answer_init(in, &acc);
		return RC__AUTH_ANSWERED;
	case RC__GSS_V_DROP:
		__atomic_add_fetch(&in->srv->n_gss_dropped, 1, __ATOMIC_RELAXED);
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
	a->ctx = acc.ctx;
	a->seq = acc.seq;
	a->service = acc.service;
	if (acc.proc == RC__GSS_DESTROY) {
		/* the context left the table: the reply verifier and void results, unwrapped */
		rc_xdr x;
		const rc__svc_auth *prev = in->w->auth;
		in->w->auth = a;
		*rlen = rc__reply_accepted_head(in->w, &x, in->max, in->xid, RC__SUCCESS)
		        ? rc_xdr_getpos(&x) : 0;
		in->w->auth = prev;
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

/* server.h: the caller's principal, and the service, of an RPCSEC_GSS call. */
const char *rc_svc_req_gss_principal(const rc_svc_req *req)
{
	const rc__req *r = (const rc__req *)req;

	if (req == NULL || req->rq_cred.oa_flavor != RC__GSS_FLAVOR || r->auth.ctx == NULL ||
	    r->auth.fl != &rc__flavor_gss)
		return NULL;
	return rc__gss_svc_ctx_principal(r->auth.ctx);
}

uint32_t rc_svc_req_gss_service(const rc_svc_req *req)
{
	const rc__req *r = (const rc__req *)req;

	if (req == NULL || req->rq_cred.oa_flavor != RC__GSS_FLAVOR || r->auth.ctx == NULL ||
	    r->auth.fl != &rc__flavor_gss)
		return 0;
	return r->auth.service;
}

/* ---- client ----------------------------------------------------------------------------- */

/* A client's RPCSEC_GSS state (rc__cl_auth.priv): the GSS core's context object and, while
 * the context is being made, the last reply verifier (the INIT calls go through the engine
 * with the "init" flavor below, whose cl_validate keeps it here). */
typedef struct rc__gss_cl {
	rc__gss_cli *cli;
	rc_client *clnt;           /* whose calls (cl_refresh establishes a context again on it) */
	uint32_t init_vflavor;
	size_t init_vlen;
	unsigned char init_verf[RC__MAX_AUTH_BYTES];
} rc__gss_cl;

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
		snprintf(err->detail, sizeof(err->detail), "%.*s", (int)sizeof(err->detail) - 1,
		         ge.text);
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

static rc_status rc__gss_establish(rc__gss_cl *g, rc_error *err);

/* A call was denied with RPCSEC_GSS_CREDPROBLEM or CTXPROBLEM (the server lost or expired
 * the context, or the seqs ran out): make a context again on the same client, once, and go on
 * under it (the same flavor object, installed again). */
static bool rc__gss_cl_refresh(rc__cl_auth *a, uint32_t why)
{
	rc__gss_cl *g = a->priv;
	rc_status st;

	if (why != RC__AUTH_CREDPROBLEM && why != RC__AUTH_CTXPROBLEM)
		return false;
	st = rc__gss_establish(g, NULL);
	rc__cl_auth_ref(a); /* (rc__client_set_auth takes it) */
	return rc__client_set_auth(g->clnt, a) == RC_OK && st == RC_OK;
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

/* The flavor of the establishing NULL calls: the INIT/CONTINUE_INIT credential and an
 * AUTH_NONE verifier; the reply's verifier is kept (not checked: the core does that). Not in
 * the registry: a client's only, for the time rc_client_set_auth_gss runs. */
static bool rc__gss_init_marshal(rc__cl_auth *a, const unsigned char *head, rc_xdr *x,
                                 uint32_t *seq, rc_error *err)
{
	rc__gss_cl *g = a->priv;
	unsigned char cred[RC__MAX_AUTH_BYTES];
	size_t clen = rc__gss_cli_cred_init(g->cli, cred, sizeof(cred));
	uint32_t w[2] = {RC__GSS_FLAVOR, (uint32_t)clen}, none[2] = {RC_AUTH_NONE, 0};

	(void)head, (void)err;
	*seq = 0;
	return clen > 0 && clen <= sizeof(cred) && rc_xdr_u_int(x, &w[0]) &&
	       rc_xdr_u_int(x, &w[1]) && rc_xdr_opaque(x, cred, (uint32_t)clen) &&
	       rc_xdr_u_int(x, &none[0]) && rc_xdr_u_int(x, &none[1]);
}

static bool rc__gss_init_validate(rc__cl_auth *a, const rc__cl_seqs *seqs, uint32_t vflavor,
                                  const unsigned char *body, uint32_t vlen)
{
	rc__gss_cl *g = a->priv;

	(void)seqs;
	g->init_vflavor = vflavor;
	g->init_vlen = vlen;
	if (vlen > 0)
		memcpy(g->init_verf, body, vlen);
	return true;
}

static const rc__flavor rc__flavor_gss_init = {
	.number = RC__GSS_FLAVOR,
	.name = "RPCSEC_GSS (establishing)",
	.props = 0,
	.cl_marshal = rc__gss_init_marshal,
	.cl_validate = rc__gss_init_validate,
};

/* Encode an INIT call's arguments (rc__gss_buf: bytes already XDR) / take a reply's results
 * whole (the rest of the reply, into an rc__gss_buf). */
static bool rc__gss_xdr_raw_out(rc_xdr *x, rc__gss_buf *b)
{
	return b->len == 0 || rc_xdr_opaque(x, b->data, (uint32_t)b->len);
}

static bool rc__gss_xdr_raw_in(rc_xdr *x, rc__gss_buf *b)
{
	size_t n = rc_xdr_remaining(x);
	void *p;

	if (x->x_op == RC_XDR_FREE) {
		rc__gss_buf_free(b);
		return true;
	}
	if (n > RC__GSS_TOKEN_MAX + 64 || (p = rc_xdr_inline(x, n)) == NULL)
		return false;
	if ((b->data = malloc(n ? n : 1)) == NULL)
		return false;
	memcpy(b->data, p, n);
	b->len = n;
	return true;
}

/* An rc__cl_auth of flavor fl over state g (one reference). */
static rc__cl_auth *rc__gss_auth_new(const rc__flavor *fl, rc__gss_cl *g)
{
	rc__cl_auth *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	a->fl = fl;
	atomic_init(&a->refs, 1);
	a->priv = g;
	return a;
}

static void rc__gss_fail(rc_error *err, rc_status st, const char *text)
{
	if (err == NULL)
		return;
	memset(err, 0, sizeof(*err));
	err->status = st;
	snprintf(err->detail, sizeof(err->detail), "%.*s", (int)sizeof(err->detail) - 1, text);
}

/* Make g's context with NULL calls on g->clnt, under the establishing flavor (installed for
 * the time it takes: the client's calls meanwhile would go with it). RC_OK (the client is left
 * with the establishing flavor: the caller installs the data flavor), or the failure (err,
 * if not NULL, says why). */
static rc_status rc__gss_establish(rc__gss_cl *g, rc_error *err)
{
	rc__gss_buf args = {0};
	rc__gss_err ge = {0};
	rc__cl_auth *init = rc__gss_auth_new(&rc__flavor_gss_init, g);
	rc_status st;
	int r;

	if (init == NULL)
		return RC_NOMEM;
	if ((st = rc__client_set_auth(g->clnt, init)) != RC_OK) /* (takes init) */
		return st;
	/* the legs: NULL calls until the core says established (or failed) */
	r = rc__gss_cli_init_start(g->cli, &args, &ge) == 0 ? 1 : -1;
	while (r == 1) {
		rc__gss_buf res = {0};
		st = rc_call(g->clnt, 0, (rc_xdrproc)rc__gss_xdr_raw_out, &args,
		             (rc_xdrproc)rc__gss_xdr_raw_in, &res);
		rc__gss_buf_free(&args);
		if (st != RC_OK) {
			if (err != NULL)
				rc_client_geterr(g->clnt, err);
			return st;
		}
		r = rc__gss_cli_init_next(g->cli, res.data, res.len, g->init_vflavor, g->init_verf,
		                          g->init_vlen, &args, &ge);
		rc__gss_buf_free(&res);
	}
	rc__gss_buf_free(&args);
	if (r != 0) {
		rc__gss_fail(err, RC_AUTHERROR, ge.text);
		return RC_AUTHERROR;
	}
	return RC_OK;
}

/* sunrpc_gss_int.h: establish a context on clnt with o and send every call under it; *ref (if
 * not NULL) gets a reference of the caller's to the data flavor object. */
rc_status rc__gss_client_start(rc_client *clnt, const rc__gss_cli_opts *o, rc__cl_auth **ref,
                               rc_error *err)
{
	rc__gss_err ge = {0};
	rc__gss_cl *g;
	rc__cl_auth *data;
	rc_status st;

	if (ref != NULL)
		*ref = NULL;
	if ((g = calloc(1, sizeof(*g))) == NULL)
		return RC_NOMEM;
	g->clnt = clnt;
	if (rc__gss_cli_create(&g->cli, o, &ge) != 0) {
		free(g);
		rc__gss_fail(err, RC_AUTHERROR, ge.text);
		return RC_AUTHERROR;
	}
	st = rc__gss_establish(g, err);
	if (st == RC_OK) {
		/* established: every call from now on is sealed by the data flavor, which owns g */
		if ((data = rc__gss_auth_new(&rc__flavor_gss, g)) == NULL)
			st = RC_NOMEM;
		else {
			if (ref != NULL)
				rc__cl_auth_ref(data);
			if ((st = rc__client_set_auth(clnt, data)) == RC_OK) {
				if (ref != NULL)
					*ref = data;
				return RC_OK;
			}
			/* set_auth let go of data (and g with it, at the last reference) */
			if (ref != NULL)
				rc__cl_auth_unref(data);
			(void)rc_client_set_auth_none(clnt);
			return st;
		}
	}
	(void)rc_client_set_auth_none(clnt); /* (lets go of the establishing flavor) */
	rc__gss_cli_destroy(g->cli);
	free(g);
	return st;
}

/* sunrpc_gss_int.h: the core object of a data flavor object, and the client it serves. */
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

/* sunrpc_gss_int.h: the server-side context of an RPCSEC_GSS call being served. */
rc__gss_svc_ctx *rc__gss_req_ctx(const rc_svc_req *req)
{
	const rc__req *r = (const rc__req *)req;

	if (req == NULL || req->rq_cred.oa_flavor != RC__GSS_FLAVOR || r->auth.fl != &rc__flavor_gss)
		return NULL;
	return r->auth.ctx;
}

/* client.h: establish a context with target and send every call under it. */
rc_status rc_client_set_auth_gss(rc_client *clnt, const char *target, rc_gss_service service,
                                 rc_error *err)
{
	rc__gss_cli_opts o = {.target = target, .service = (uint32_t)service};

	if (err != NULL)
		memset(err, 0, sizeof(*err));
	if (clnt == NULL || target == NULL || service < RC_GSS_NONE || service > RC_GSS_PRIVACY)
		return RC_INVAL;
	return rc__gss_client_start(clnt, &o, NULL, err);
}

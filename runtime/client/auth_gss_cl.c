/*
 * RPCSEC_GSS on the client: making a context with NULL calls on the client itself (INIT and
 * CONTINUE_INIT legs under an establishing flavor), installing the data flavor (auth_gss.c)
 * on the client, and making a context again when the server lost it (the data flavor's
 * refresh calls rc__gss_cl.renew). Above client.c, whose calls it makes, as rpcbind.c is;
 * nothing below calls it.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/auth/auth.h"
#include "runtime/auth/gss.h"
#include "runtime/auth/gss_flavor.h"
#include "runtime/client/gss_cl.h"
#include "runtime/core/rpc.h"

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
	rc__detail_put(err->detail, sizeof(err->detail), text); /* whole, or cut at a word */
}

static rc_status rc__gss_establish(rc__gss_cl *g, rc_error *err);

#ifdef RC_TEST_HOOKS
/* Tests that compile this file in with RC_TEST_HOOKS (tests/gss/test_gss_cb.c): 1, the
 * client binds its contexts to an altered exporter value (a channel-binding mismatch); 2, to
 * none. */
int rc__test_cb_alter;
#endif

/* rc__gss_cl.renew: make a context again on the client a's calls go through, and install a
 * (the same data flavor object) again. */
static bool rc__gss_renew(rc__cl_auth *a)
{
	rc__gss_cl *g = a->priv;
	rc_status st = rc__gss_establish(g, NULL);

	if (st == RC_OK) /* the new context's server window bounds the calls in flight */
		atomic_store(&a->window, rc__gss_cli_window(g->cli));
	rc__cl_auth_ref(a); /* (rc__client_set_auth takes it) */
	return rc__client_set_auth(g->clnt, a) == RC_OK && st == RC_OK;
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
	/* over TLS or QUIC the context is bound to the connection (RFC 9266; the INIT calls go
	 * on it) */
	unsigned char exporter[RC__GSS_EXPORTER_LEN];
	bool must, bound = rc__client_exporter(g->clnt, exporter, &must);
#ifdef RC_TEST_HOOKS
	if (bound && rc__test_cb_alter == 1)
		exporter[0] ^= 0x5a; /* a value the server's side of the connection does not have */
	bound = bound && rc__test_cb_alter != 2;
#endif
	rc__gss_cli_set_bindings(g->cli, bound ? exporter : NULL);
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
	g->renew = rc__gss_renew;
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
			/* no more calls in flight than the server's window takes (rc__start) */
			atomic_store(&data->window, rc__gss_cli_window(g->cli));
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

/* client.h: establish a context with target and send every call under it. */
rc_status rc_client_set_auth_gss(rc_client *clnt, const char *target, rc_gss_service service,
                                 rc_error *err)
{
	rc__gss_cli_opts o = {.target = target, .service = (uint32_t)service};

	if (err != NULL)
		memset(err, 0, sizeof(*err));
	if (clnt == NULL || target == NULL || service < RC_GSS_NONE || service > RC_GSS_PRIVACY)
		return RC_INVAL;
	if (rc__client_back(clnt))
		return RC_NOTSUPP; /* the peer would have to accept contexts: not yet */
	return rc__gss_client_start(clnt, &o, NULL, err);
}

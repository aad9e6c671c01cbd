/*
 * A server's RPCSEC_GSS (RFC 2203): the context table rc_server_set_gss gives it (the GSS core's,
 * runtime/auth/gss.h), its bounds and counters, and what a request tells of the context it came
 * under. The flavor itself (runtime/auth/auth_gss.c, below the server) gets the table and the
 * drop counter with each call (rc__svc_call.gss, .gss_dropped) and knows no server object.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "runtime/auth/auth.h"
#include "runtime/auth/gss.h"
#include "runtime/server/server_internal.h"
#include "runtime/server/request.h"

_Static_assert(RC__GSS_HANDLE_LEN == RC__DRC_CTX_ID_LEN, "a handle is the DRC's context id");

/* A new acceptor credential for a server's table t, while stopped or serving: contexts made keep
 * theirs (and their keys); INITs from now on are accepted with the new one. */
static rc_status rc__gss_reload(rc__gss_table *t, const char *principal, const char *keytab,
                                char *why, size_t whylen)
{
	rc__gss_err err = {0};

	if (rc__gss_table_set_cred(t, principal, keytab, &err) != 0) {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "%s", err.text);
		return RC_AUTHERROR;
	}
	return RC_OK;
}

/* server.h: a context table for srv's RPCSEC_GSS calls; a second call, stopped or running,
 * gives the table a new acceptor credential (rc__gss_reload). */
rc_status rc_server_set_gss(rc_server *srv, const char *principal, const char *keytab,
                            char *why, size_t whylen)
{
	rc__gss_table_opts o = {.principal = principal, .keytab = keytab};
	rc__gss_table *t;
	rc__gss_err err = {0};

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (srv == NULL)
		return RC_INVAL;
	pthread_mutex_lock(&srv->mu);
	t = srv->gss;
	pthread_mutex_unlock(&srv->mu);
	if (t != NULL)
		return rc__gss_reload(t, principal, keytab, why, whylen);
	/* the bounds of rc_server_limits (rc__gss_apply_limits later) */
	o.max_contexts = RC__LIM(srv, gss_contexts);
	o.max_principal = RC__LIM(srv, gss_contexts_per_principal);
	o.max_incomplete = RC__LIM(srv, gss_incomplete);
	o.idle_ms = RC__LIM(srv, gss_idle_ms);
	if (rc__gss_table_create(&t, &o, &err) != 0) {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "%s", err.text);
		return RC_AUTHERROR;
	}
	pthread_mutex_lock(&srv->mu);
	if (atomic_load(&srv->running) || srv->gss != NULL) {
		/* (the first table is set while stopped: serving threads read srv->gss plainly) */
		pthread_mutex_unlock(&srv->mu);
		rc__gss_table_destroy(t);
		return RC_INVAL;
	}
	srv->gss = t;
	pthread_mutex_unlock(&srv->mu);
	return RC_OK;
}

/* base.h: the table goes with the server; rc_server_set_limits's bounds; the contexts it holds
 * now. */
void rc__gss_free(rc_server *srv)
{
	if (srv->gss != NULL)
		rc__gss_table_destroy(srv->gss);
	srv->gss = NULL;
}

void rc__gss_apply_limits(rc_server *srv)
{
	rc__gss_bounds b = {RC__LIM(srv, gss_contexts), RC__LIM(srv, gss_contexts_per_principal),
	                    RC__LIM(srv, gss_incomplete), RC__LIM(srv, gss_idle_ms)};

	if (srv->gss != NULL)
		rc__gss_table_set_bounds(srv->gss, &b);
}

void rc__gss_get_stats(rc_server *srv, uint64_t *contexts, uint64_t *evicted)
{
	rc__gss_stats st;

	*contexts = *evicted = 0;
	if (srv->gss == NULL)
		return;
	rc__gss_table_stats(srv->gss, &st);
	*contexts = st.contexts;
	*evicted = st.evicted_lru + st.evicted_quota + st.evicted_incomplete;
}

/* The authentication of the RPCSEC_GSS call of handle h, or NULL (a stale handle, another
 * flavor). */
static const rc__svc_auth *rc__gss_req_auth(const rc_svc_req *h)
{
	const rc__req *r = rc__req_of(h);

	if (r == NULL || r->pub.rq_cred.oa_flavor != RC__GSS_FLAVOR || r->auth.fl != &rc__flavor_gss)
		return NULL;
	return &r->auth;
}

/* server.h: the caller's principal, and the service, of an RPCSEC_GSS call. */
const char *rc_svc_req_gss_principal(const rc_svc_req *h)
{
	const rc__svc_auth *a = rc__gss_req_auth(h);

	return a != NULL && a->ctx != NULL ? rc__gss_svc_ctx_principal(a->ctx) : NULL;
}

uint32_t rc_svc_req_gss_service(const rc_svc_req *h)
{
	const rc__svc_auth *a = rc__gss_req_auth(h);

	return a != NULL && a->ctx != NULL ? a->service : 0;
}

/* server_internal.h: the server-side context of an RPCSEC_GSS call being served. */
rc__gss_svc_ctx *rc__gss_req_ctx(const rc_svc_req *h)
{
	const rc__svc_auth *a = rc__gss_req_auth(h);

	return a != NULL ? a->ctx : NULL;
}

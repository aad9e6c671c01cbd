/*
 * The Sun RPCSEC_GSS API of <remotecall/sunrpc_gss.h> (libtirpc's <rpc/rpcsec_gss.h> and
 * <rpc/auth_gss.h>) over the RPCSEC_GSS flavor (auth_gss.c). Client: an AUTH of flavor 6
 * holds a reference to the flavor object rc__gss_client_start made on its client; sunrpc.c's
 * clnt_call puts it back on the client when cl_auth changes (rc__sunrpc_gss_apply). Server:
 * rpc_gss_set_svc_name is rc_server_set_gss on the Sun server; each context keeps, as its
 * application data, the caller's principal, its local user and the callback's verdict and
 * cookie (made at its first Sun dispatch), which rpc_gss_getcred hands out.
 */
#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <gssapi/gssapi_krb5.h>

#include "runtime/server/server_internal.h"
#include "runtime/sun/sunrpc_gss_int.h" /* (before the Sun names) */

#include <remotecall/sunrpc_gss.h>

/* ---- errors --------------------------------------------------------------------------------- */

static _Thread_local rpc_gss_error_t rc__gss_lasterr;

static void rc__gss_seterr(int sys)
{
	rc__gss_lasterr.rpc_gss_error = sys ? RPC_GSS_ER_SYSTEMERROR : RPC_GSS_ER_SUCCESS;
	rc__gss_lasterr.system_error = sys;
}

/* The errno rpc_gss_get_error reports for a failed establishment. */
static int rc__gss_errno(rc_status st)
{
	switch (st) {
	case RC_INVAL:
		return EINVAL;
	case RC_NOMEM:
		return ENOMEM;
	case RC_AUTHERROR:
		return EACCES;
	case RC_TIMEDOUT:
		return ETIMEDOUT;
	case RC_CANTSEND:
	case RC_CANTRECV:
		return ECONNREFUSED;
	default:
		return EIO;
	}
}

void rc_sunrpc_gss_get_error(rpc_gss_error_t *error)
{
	if (error != NULL)
		*error = rc__gss_lasterr;
}

/* Kerberos v5 by one of its names (NULL: the default, which is it). */
static bool rc__gss_mech_ok(const char *mech)
{
	return mech == NULL || strcmp(mech, "kerberos_v5") == 0 || strcmp(mech, "krb5") == 0 ||
	       strcmp(mech, "kerberosv5") == 0;
}

static bool rc__gss_qop_ok(const char *qop)
{
	return qop == NULL || qop[0] == '\0' || strcmp(qop, "GSS_C_QOP_DEFAULT") == 0;
}

/* ---- the client ------------------------------------------------------------------------------ */

/* An RPCSEC_GSS AUTH: Sun's fields first (auth_destroy is given the AUTH), the flavor object
 * (a reference) and the client it serves. */
typedef struct rc__sungss_auth {
	AUTH a;
	rc__cl_auth *cl;
	rc_client *clnt;
} rc__sungss_auth;

static bool rc__sunrpc_gss_admit(struct svc_req *sun, rc_svc_req *req);
static rc_status rc__sunrpc_gss_apply(rc_client *clnt, AUTH *auth);
static void rc__sunrpc_gss_free(AUTH *auth);

/* What the Sun server and client call of this layer (sunrpc_gss_int.h), installed before it
 * makes its first AUTH or names its server's principal (rc__sungss_install). */
static const rc__sungss_hooks rc__sungss_hooks_mine = {rc__sunrpc_gss_admit, rc__sunrpc_gss_apply,
                                                       rc__sunrpc_gss_free};

static void rc__sungss_install(void)
{
	atomic_store(&rc__sungss_hooks_on, &rc__sungss_hooks_mine);
}

/* The ids of these AUTHs: apart from sunrpc.c's (which count up from 2). */
static _Atomic uint64_t rc__sungss_next = UINT64_C(1) << 63;

/* Make the context with o on clnt and an AUTH for it; ret (if not NULL) is filled. */
static AUTH *rc__sungss_create(CLIENT *clnt, const rc__gss_cli_opts *o,
                               rpc_gss_options_ret_t *ret)
{
	rc__sungss_auth *g;
	rc_error e = {0};
	rc_status st;
	uint32_t flags = 0, life = 0;
	gss_ctx_id_t ctx = GSS_C_NO_CONTEXT;

	if (ret != NULL)
		memset(ret, 0, sizeof(*ret));
	rc__sungss_install();
	if ((g = calloc(1, sizeof(*g))) == NULL)
		st = RC_NOMEM;
	else
		st = rc__gss_client_start(clnt, o, &g->cl, &e);
	if (st != RC_OK) {
		free(g);
		clnt->rc_auth_id = 0; /* it sends AUTH_NONE now: cl_auth goes on again at the next call */
		rc__gss_seterr(rc__gss_errno(st));
		rpc_createerr.cf_stat = rc_sunrpc_stat(st);
		rpc_createerr.cf_error.re_status = rpc_createerr.cf_stat;
		rpc_createerr.cf_error.re_errno = rc__gss_errno(st);
		if (ret != NULL && st == RC_AUTHERROR)
			ret->major_status = (int)GSS_S_FAILURE;
		return NULL;
	}
	g->clnt = clnt;
	g->a.ah_cred = (struct rc_opaque_auth){RC_AUTH_GSS, NULL, 0};
	g->a.ah_verf = (struct rc_opaque_auth){RC_AUTH_GSS, NULL, 0};
	g->a.rc_id = atomic_fetch_add(&rc__sungss_next, 1);
	clnt->rc_auth_id = g->a.rc_id; /* what the client sends now */
	if (ret != NULL) {
		ret->rpcsec_version = RPCSEC_GSS_VERSION;
		if (rc__gss_cli_inquire(rc__gss_cl_core(g->cl, NULL), &flags, &life, &ctx) == 0) {
			ret->ret_flags = (int)flags;
			ret->time_ret = life > INT32_MAX ? INT32_MAX : (int)life;
			ret->gss_context = ctx;
		}
		strcpy(ret->actual_mechanism, "kerberos_v5");
	}
	rc__gss_seterr(0);
	return &g->a;
}

/* Service of the Sun enum (0: the default, integrity); 0 when out of range. */
static uint32_t rc__gss_svc_of(int service)
{
	if (service == rpcsec_gss_svc_default)
		return RC__GSS_SVC_INTEGRITY;
	return service >= RC__GSS_SVC_NONE && service <= RC__GSS_SVC_PRIVACY ? (uint32_t)service
	                                                                     : 0;
}

AUTH *rc_sunrpc_gss_seccreate(CLIENT *clnt, char *principal, char *mechanism,
                              rpc_gss_service_t service, char *qop,
                              rpc_gss_options_req_t *options_req,
                              rpc_gss_options_ret_t *options_ret)
{
	rc__gss_cli_opts o = {.target = principal, .service = rc__gss_svc_of((int)service)};

	if (clnt == NULL || principal == NULL || o.service == 0 || !rc__gss_mech_ok(mechanism) ||
	    !rc__gss_qop_ok(qop)) {
		rc__gss_seterr(EINVAL);
		return NULL;
	}
	if (options_req != NULL) {
		o.lifetime_s = options_req->time_req > 0 ? (uint32_t)options_req->time_req : 0;
		o.cred = options_req->my_cred;
	}
	return rc__sungss_create(clnt, &o, options_ret);
}

AUTH *rc_sunrpc_authgss_create(CLIENT *clnt, gss_name_t name, struct rpc_gss_sec *sec)
{
	rc__gss_cli_opts o = {.target_name = name, .service = RC__GSS_SVC_INTEGRITY};

	if (sec != NULL) {
		o.service = rc__gss_svc_of((int)sec->svc);
		o.cred = sec->cred;
	}
	if (clnt == NULL || name == GSS_C_NO_NAME || o.service == 0 ||
	    (sec != NULL && (sec->qop != GSS_C_QOP_DEFAULT ||
	                     (sec->mech != GSS_C_NO_OID &&
	                      (sec->mech->length != gss_mech_krb5->length ||
	                       memcmp(sec->mech->elements, gss_mech_krb5->elements,
	                              gss_mech_krb5->length) != 0))))) {
		rc__gss_seterr(EINVAL);
		return NULL;
	}
	return rc__sungss_create(clnt, &o, NULL);
}

AUTH *rc_sunrpc_authgss_create_default(CLIENT *clnt, char *service, struct rpc_gss_sec *sec)
{
	gss_buffer_desc b;
	gss_name_t name = GSS_C_NO_NAME;
	OM_uint32 maj, min;
	AUTH *a;

	if (service == NULL) {
		rc__gss_seterr(EINVAL);
		return NULL;
	}
	b.value = service;
	b.length = strlen(service);
	maj = gss_import_name(&min, &b, GSS_C_NT_HOSTBASED_SERVICE, &name);
	if (GSS_ERROR(maj)) {
		rc__gss_seterr(EINVAL);
		return NULL;
	}
	a = rc_sunrpc_authgss_create(clnt, name, sec);
	(void)gss_release_name(&min, &name);
	return a;
}

/* The core object of an RPCSEC_GSS AUTH, or NULL. */
static rc__gss_cli *rc__sungss_core(AUTH *auth)
{
	if (auth == NULL || auth->ah_cred.oa_flavor != RC_AUTH_GSS)
		return NULL;
	return rc__gss_cl_core(((rc__sungss_auth *)auth)->cl, NULL);
}

bool_t rc_sunrpc_gss_set_defaults(AUTH *auth, rpc_gss_service_t service, char *qop)
{
	rc__gss_cli *c = rc__sungss_core(auth);
	uint32_t svc = rc__gss_svc_of((int)service);

	if (c == NULL || svc == 0 || !rc__gss_qop_ok(qop) || rc__gss_cli_set_service(c, svc) != 0) {
		rc__gss_seterr(EINVAL);
		return FALSE;
	}
	return TRUE;
}

bool_t rc_sunrpc_authgss_service(AUTH *auth, int svc)
{
	return rc_sunrpc_gss_set_defaults(auth, (rpc_gss_service_t)svc, NULL);
}

int rc_sunrpc_gss_max_data_length(AUTH *auth, int max_tp_unit_len)
{
	rc__gss_cli *c = rc__sungss_core(auth);

	return c == NULL ? 0 : rc__gss_cli_max_data(c, max_tp_unit_len);
}

bool_t rc_sunrpc_is_authgss_client(CLIENT *clnt)
{
	return clnt != NULL && clnt->cl_auth != NULL &&
	       clnt->cl_auth->ah_cred.oa_flavor == RC_AUTH_GSS;
}

/* rc__sungss_hooks (sunrpc_gss_int.h): the AUTH goes on its client again; freed. */
static rc_status rc__sunrpc_gss_apply(rc_client *clnt, AUTH *auth)
{
	rc__sungss_auth *g = (rc__sungss_auth *)auth;

	if (g->clnt != clnt)
		return RC_AUTHERROR; /* a context is the server's it was made with */
	rc__cl_auth_ref(g->cl);  /* (rc__client_set_auth takes it) */
	return rc__client_set_auth(clnt, g->cl);
}

static void rc__sunrpc_gss_free(AUTH *auth)
{
	rc__sungss_auth *g = (rc__sungss_auth *)auth;

	rc__cl_auth_unref(g->cl);
	free(g);
}

/* ---- the server ------------------------------------------------------------------------------ */

static pthread_mutex_t rc__sungss_mu = PTHREAD_MUTEX_INITIALIZER;
static char rc__sungss_name[256];    /* rpc_gss_set_svc_name's principal, under the lock */
static _Atomic bool rc__sungss_named;

#define RC__SUNGSS_CALLBACKS 16
static struct {
	u_int prog, vers;
	bool_t (*fn)(struct svc_req *, gss_cred_id_t, gss_ctx_id_t, rpc_gss_lock_t *, void **);
} rc__sungss_cbs[RC__SUNGSS_CALLBACKS]; /* under the lock */
static unsigned rc__sungss_ncbs;
/* A callback runs under this lock (one at a time), which the context's verdict is written
 * under; rpc_gss_getcred reads the cookie under it. */
static pthread_mutex_t rc__sungss_cbmu = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local bool rc__sungss_in_cb; /* this thread runs a callback (holds cbmu) */

bool_t rc_sunrpc_gss_set_svc_name(char *principal, char *mechanism, u_int req_time,
                                  u_int program, u_int version)
{
	rc_server *srv;
	rc_status st;
	int e = 0;

	(void)req_time;
	(void)program;
	(void)version;
	if (principal == NULL || strlen(principal) >= sizeof(rc__sungss_name) ||
	    !rc__gss_mech_ok(mechanism)) {
		rc__gss_seterr(EINVAL);
		return FALSE;
	}
	rc__sungss_install(); /* before a call of its can come */
	pthread_mutex_lock(&rc__sungss_mu);
	if (atomic_load(&rc__sungss_named))
		e = strcmp(rc__sungss_name, principal) == 0 ? 0 : EINVAL;
	else if ((srv = rc__sunrpc_server()) == NULL)
		e = ENOMEM;
	else if ((st = rc_server_set_gss(srv, principal, NULL, NULL, 0)) != RC_OK)
		e = st == RC_AUTHERROR ? EACCES : EINVAL;
	else {
		strcpy(rc__sungss_name, principal);
		atomic_store(&rc__sungss_named, true);
	}
	pthread_mutex_unlock(&rc__sungss_mu);
	rc__gss_seterr(e);
	return e == 0;
}

bool_t rc_sunrpc_gss_set_callback(rpc_gss_callback_t *cb)
{
	unsigned i;
	bool_t ok = TRUE;

	if (cb == NULL || cb->callback == NULL) {
		rc__gss_seterr(EINVAL);
		return FALSE;
	}
	pthread_mutex_lock(&rc__sungss_mu);
	for (i = 0; i < rc__sungss_ncbs; i++)
		if (rc__sungss_cbs[i].prog == cb->program && rc__sungss_cbs[i].vers == cb->version)
			break;
	if (i == RC__SUNGSS_CALLBACKS)
		ok = FALSE;
	else {
		rc__sungss_cbs[i].prog = cb->program;
		rc__sungss_cbs[i].vers = cb->version;
		rc__sungss_cbs[i].fn = cb->callback;
		if (i == rc__sungss_ncbs)
			rc__sungss_ncbs++;
	}
	pthread_mutex_unlock(&rc__sungss_mu);
	rc__gss_seterr(ok ? 0 : ENOMEM);
	return ok;
}

/* What the Sun layer keeps with a server context (its application data): the callback's
 * verdict (0 not run, 1 accepted, 2 refused), the service it locked, its cookie; the caller's
 * local user; the principal as rpc_gss_principal_t points at it (len, then the bytes). */
typedef struct rc__sungss_ctx {
	int verdict;
	bool locked;
	uint32_t locked_service;
	void *cookie;
	bool have_uc;
	rpc_gss_ucred_t uc;
	gid_t gids[16];
	union {
		int len;
		char bytes[sizeof(int) + 1024];
	} principal;
} rc__sungss_ctx;

/* The caller as a local user: krb5's mapping to a name, its passwd entry and groups. */
static void rc__sungss_map(rc__gss_svc_ctx *x, rc__sungss_ctx *d)
{
	char name[256], buf[4096];
	rc__gss_err err = {0};
	struct passwd pw, *res = NULL;
	int n = 16;

	if (rc__gss_svc_ctx_localname(x, name, sizeof(name), &err) != 0 ||
	    getpwnam_r(name, &pw, buf, sizeof(buf), &res) != 0 || res == NULL)
		return;
	if (getgrouplist(name, pw.pw_gid, d->gids, &n) < 0 || n > 16)
		n = 16; /* more than 16: the first 16 (AUTH_SYS's bound) */
	d->uc = (rpc_gss_ucred_t){pw.pw_uid, pw.pw_gid, (short)(n < 0 ? 0 : n), d->gids};
	d->have_uc = true;
}

/* The context's data, made at its first use here; NULL without memory. */
static rc__sungss_ctx *rc__sungss_data(rc__gss_svc_ctx *x)
{
	rc__sungss_ctx *d = rc__gss_svc_ctx_app(x);
	const char *p;
	size_t n;

	if (d != NULL)
		return d;
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	p = rc__gss_svc_ctx_principal(x);
	n = p != NULL ? strlen(p) : 0;
	if (n > sizeof(d->principal.bytes) - sizeof(int) - 1)
		n = sizeof(d->principal.bytes) - sizeof(int) - 1;
	d->principal.len = (int)n;
	if (n > 0)
		memcpy(d->principal.bytes + sizeof(int), p, n);
	rc__sungss_map(x, d);
	if (!rc__gss_svc_ctx_set_app(x, d, free)) { /* another thread was first */
		free(d);
		d = rc__gss_svc_ctx_app(x);
	}
	return d;
}

/* This thread's raw credential (what rq_clntcred and rpc_gss_getcred point at). */
static _Thread_local rpc_gss_rawcred_t rc__sungss_raw;

static rpc_gss_rawcred_t *rc__sungss_rawcred(rc__sungss_ctx *d, uint32_t service)
{
	rc__sungss_raw.version = RPCSEC_GSS_VERSION;
	rc__sungss_raw.mechanism = (char *)"kerberos_v5";
	rc__sungss_raw.qop = (char *)"GSS_C_QOP_DEFAULT";
	rc__sungss_raw.client_principal = (rpc_gss_principal_t)(void *)&d->principal;
	rc__sungss_raw.svc_principal = rc__sungss_name; /* set before the server ran */
	rc__sungss_raw.service = (rpc_gss_service_t)service;
	return &rc__sungss_raw;
}

/* rc__sungss_hooks (sunrpc_gss_int.h): the callback at a context's first call to its
 * program; its lock. */
static bool rc__sunrpc_gss_admit(struct svc_req *sun, rc_svc_req *req)
{
	rc__gss_svc_ctx *x = rc__gss_req_ctx(req);
	rc__sungss_ctx *d;
	uint32_t service = rc_svc_req_gss_service(req);
	bool_t (*fn)(struct svc_req *, gss_cred_id_t, gss_ctx_id_t, rpc_gss_lock_t *,
	             void **) = NULL;
	rpc_gss_lock_t lock;
	int verdict;

	if (x == NULL)
		return true; /* a control call the flavor answered itself: not dispatched here */
	if ((d = rc__sungss_data(x)) == NULL) {
		rc_sunrpc_svcerr_systemerr(sun->rq_xprt);
		return false;
	}
	sun->rq_clntcred = rc__sungss_rawcred(d, service);
	pthread_mutex_lock(&rc__sungss_mu);
	for (unsigned i = 0; i < rc__sungss_ncbs; i++)
		if (rc__sungss_cbs[i].prog == sun->rq_prog && rc__sungss_cbs[i].vers == sun->rq_vers)
			fn = rc__sungss_cbs[i].fn;
	pthread_mutex_unlock(&rc__sungss_mu);
	pthread_mutex_lock(&rc__sungss_cbmu);
	if (d->verdict == 0 && fn != NULL) {
		void *cookie = NULL;
		lock = (rpc_gss_lock_t){FALSE, sun->rq_clntcred};
		rc__sungss_in_cb = true;
		d->verdict = fn(sun, GSS_C_NO_CREDENTIAL, rc__gss_svc_ctx_gss(x), &lock, &cookie) ? 1
		                                                                                  : 2;
		rc__sungss_in_cb = false;
		d->cookie = cookie;
		d->locked = lock.locked;
		d->locked_service = service;
	}
	verdict = d->verdict;
	if (verdict != 2 && d->locked && d->locked_service != service)
		verdict = 2;
	pthread_mutex_unlock(&rc__sungss_cbmu);
	if (verdict == 2) {
		rc_sunrpc_svcerr_auth(sun->rq_xprt, AUTH_REJECTEDCRED);
		return false;
	}
	return true;
}

bool_t rc_sunrpc_gss_getcred(struct svc_req *req, rpc_gss_rawcred_t **rcred,
                             rpc_gss_ucred_t **ucred, void **cookie)
{
	rc_svc_req *cur = rc__sunrpc_current();
	rc__gss_svc_ctx *x = rc__gss_req_ctx(cur);
	rc__sungss_ctx *d;

	if (rcred != NULL)
		*rcred = NULL;
	if (ucred != NULL)
		*ucred = NULL;
	if (cookie != NULL)
		*cookie = NULL;
	(void)req; /* the call being dispatched on this thread is the one */
	if (x == NULL || (d = rc__sungss_data(x)) == NULL) {
		rc__gss_seterr(x == NULL ? EINVAL : ENOMEM);
		return FALSE;
	}
	if (rcred != NULL)
		*rcred = rc__sungss_rawcred(d, rc_svc_req_gss_service(cur));
	if (ucred != NULL && d->have_uc)
		*ucred = &d->uc;
	if (cookie != NULL && rc__sungss_in_cb)
		*cookie = d->cookie; /* (NULL until the callback returns) */
	else if (cookie != NULL) {
		pthread_mutex_lock(&rc__sungss_cbmu);
		*cookie = d->cookie;
		pthread_mutex_unlock(&rc__sungss_cbmu);
	}
	return TRUE;
}

int rc_sunrpc_gss_svc_max_data_length(struct svc_req *req, int max_tp_unit_len)
{
	rc_svc_req *cur = rc__sunrpc_current();
	rc__gss_svc_ctx *x = rc__gss_req_ctx(cur);

	(void)req;
	if (x == NULL)
		return 0;
	return rc__gss_svc_ctx_max_data(x, rc_svc_req_gss_service(cur), max_tp_unit_len);
}


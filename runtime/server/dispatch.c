/*
 * The server's dispatch table: registering (program, version) dispatchers, finding one for a
 * request (a hash table of registrations, each with a direct-index table of its procedures
 * below RC__DENSE_MAX and a sorted array of the rest), telling the layer above's hook of
 * changes (rc__server_notify), and what a procedure may ask of the request it serves
 * (rc_svc_req_*: its facts, a raw call's arguments; every answer is defer.c's).
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
#include "runtime/server/request.h"

/* qsort order of procedure entries: by procedure number. */
static int rc__proc_cmp(const void *a, const void *b)
{
	uint32_t x = (*(const rc_svc_proc *const *)a)->info->proc;
	uint32_t y = (*(const rc_svc_proc *const *)b)->info->proc;
	return x < y ? -1 : x > y;
}

/* Free a registration's tables and itself (the caller's rc_svc_prog is not touched). */
void rc__reg_free(rc__reg *r)
{
	free(r->dense);
	free(r->sparse);
	free(r);
}

/* Add r to srv's table unless (prog, vers) is there already; RC_OK or RC_INVAL (r freed). */
static rc_status rc__reg_add(rc_server *srv, rc__reg *r)
{
	pthread_mutex_lock(&srv->mu);
	if (rc__find(srv, r->prog, r->vers) != NULL) {
		pthread_mutex_unlock(&srv->mu);
		rc__reg_free(r);
		return RC_INVAL;
	}
	r->drc_streams = srv->drc_streams_all; /* (rc_server_set_drc_streams) */
	atomic_init(&r->next, srv->buckets[rc__hash(r->prog, r->vers)]);
	/* published whole: a serving thread finds it complete, or not at all */
	atomic_store_explicit(&srv->buckets[rc__hash(r->prog, r->vers)], r, memory_order_release);
	pthread_mutex_unlock(&srv->mu);
	rc__server_notify(srv, RC__SRV_CHANGED);
	return RC_OK;
}

/* server.h: build the registration's tables, refuse duplicates, add it under srv->mu, and
 * tell the layer above (rpcbind). */
rc_status rc_server_register(rc_server *srv, const rc_svc_prog *def, void *ctx)
{
	rc__reg *r;
	uint32_t maxdense = 0;
	size_t i, ns = 0;

	if (srv == NULL || def == NULL || (def->nprocs > 0 && def->procs == NULL))
		return RC_INVAL;
	for (i = 0; i < def->nprocs; i++) {
		const rc_svc_proc *p = &def->procs[i];
		if (p->info == NULL || p->info->xargs == NULL || p->info->xres == NULL)
			return RC_INVAL;
		if (p->fn == NULL) /* a routine not linked (idlc, a file of several programs) */
			return RC_PROCUNAVAIL;
		if (p->info->proc < RC__DENSE_MAX) {
			if (p->info->proc + 1 > maxdense)
				maxdense = p->info->proc + 1;
		} else {
			ns++;
		}
	}
	if ((r = rc__zalloc_lines(sizeof(*r))) == NULL) /* (the serve step reads one line) */
		return RC_NOMEM;
	r->prog = def->prog;
	r->vers = def->vers;
	r->def = def;
	r->ctx = ctx;
	r->ndense = maxdense;
	r->dense = calloc(maxdense ? maxdense : 1, sizeof(*r->dense));
	r->sparse = calloc(ns ? ns : 1, sizeof(*r->sparse));
	if (r->dense == NULL || r->sparse == NULL) {
		rc__reg_free(r);
		return RC_NOMEM;
	}
	for (i = 0; i < def->nprocs; i++) {
		const rc_svc_proc *p = &def->procs[i];
		if (p->info->proc < RC__DENSE_MAX) {
			if (r->dense[p->info->proc] != NULL) {
				rc__reg_free(r);
				return RC_INVAL; /* duplicate procedure number */
			}
			r->dense[p->info->proc] = p;
		} else {
			r->sparse[r->nsparse++] = p;
		}
	}
	qsort(r->sparse, r->nsparse, sizeof(*r->sparse), rc__proc_cmp);
	for (i = 1; i < r->nsparse; i++) {
		if (r->sparse[i]->info->proc == r->sparse[i - 1]->info->proc) {
			rc__reg_free(r);
			return RC_INVAL;
		}
	}
	return rc__reg_add(srv, r);
}

/* server.h: a registration with a raw dispatcher and no procedure tables. */
rc_status rc_server_register_raw(rc_server *srv, uint32_t prog, uint32_t vers, rc_svc_rawfn fn,
                                 void *ctx)
{
	rc__reg *r;

	if (srv == NULL || fn == NULL)
		return RC_INVAL;
	if ((r = rc__zalloc_lines(sizeof(*r))) == NULL) /* (the serve step reads one line) */
		return RC_NOMEM;
	r->prog = prog;
	r->vers = vers;
	r->ctx = ctx;
	r->raw = fn;
	return rc__reg_add(srv, r);
}

/* server.h: unlink (prog, vers) from the table and free its registration -- or, while the
 * server runs, keep it until the server is destroyed: a serving thread may be reading it, a
 * call under way or deferred uses it (its chain link stays, for a reader standing on it). */
rc_status rc_server_unregister(rc_server *srv, uint32_t prog, uint32_t vers)
{
	rc__reg *_Atomic *pp, *r = NULL;
	bool keep = false;

	if (srv == NULL)
		return RC_INVAL;
	pthread_mutex_lock(&srv->mu);
	for (pp = &srv->buckets[rc__hash(prog, vers)]; *pp; pp = &(*pp)->next) {
		if ((*pp)->prog == prog && (*pp)->vers == vers) {
			r = *pp;
			atomic_store_explicit(pp, atomic_load(&r->next), memory_order_release);
			if ((keep = atomic_load(&srv->running))) {
				r->retired = srv->reg_retired;
				srv->reg_retired = r;
			}
			break;
		}
	}
	pthread_mutex_unlock(&srv->mu);
	if (r == NULL)
		return RC_PROGUNAVAIL;
	if (!keep)
		rc__reg_free(r);
	rc__server_notify(srv, RC__SRV_CHANGED);
	return RC_OK;
}

/* The lowest and highest version of prog registered; false if none is. */
bool rc__vers_range(rc_server *srv, uint32_t prog, uint32_t *lo, uint32_t *hi)
{
	bool any = false;

	for (int b = 0; b < RC__NBUCKETS; b++) {
		for (rc__reg *r = srv->buckets[b]; r; r = r->next) {
			if (r->prog != prog)
				continue;
			if (!any || r->vers < *lo)
				*lo = r->vers;
			if (!any || r->vers > *hi)
				*hi = r->vers;
			any = true;
		}
	}
	return any;
}

/* server.h: the request accessors (NULL / AUTH_NONE for a NULL or stale handle: each finds
 * the request through rc__svc_req_of, request.h). */
void *rc_svc_req_context(const rc_svc_req *h)
{
	const rc__req *r = rc__req_of(h);

	if (r == NULL)
		return NULL;
	return r->pub.reg != NULL ? r->pub.reg->ctx : r->orphan_ctx; /* (orphaned: its copy) */
}

const rc_procinfo *rc_svc_req_proc(const rc_svc_req *h)
{
	const rc_svc_req *req = rc__svc_req_of(h);

	return req && req->proc ? req->proc->info : NULL;
}

/* server.h: the caller's address: the datagram's sender or the stream's peer. */
rc_status rc_svc_req_caller(const rc_svc_req *h, void *sa, unsigned *len)
{
	const rc_svc_req *req = rc__svc_req_of(h);
	size_t n;

	if (req == NULL || sa == NULL || len == NULL)
		return RC_INVAL;
	if (req->peer == NULL) {
		/* a stream's peer, asked of its transport (in-process or unknown: length 0) */
		if (rc__tp_peer(req->conn, sa, len) != RC_OK)
			*len = 0;
		return RC_OK;
	}
	n = req->peer->len < *len ? req->peer->len : *len;
	memcpy(sa, &req->peer->ss, n);
	*len = (unsigned)req->peer->len;
	return RC_OK;
}

/* server.h: flag a registration; looked up under the lock (the server is not running). */
rc_status rc_server_set_tls_required(rc_server *srv, uint32_t prog, uint32_t vers,
                                     bool required)
{
	rc__reg *r;

	if (srv == NULL || atomic_load(&srv->running))
		return RC_INVAL;
	pthread_mutex_lock(&srv->mu);
	if ((r = rc__find(srv, prog, vers)) != NULL) {
		r->tls_required = required;
		r->rules = r->tls_required || r->gss_min != 0;
	}
	pthread_mutex_unlock(&srv->mu);
	return r != NULL ? RC_OK : RC_PROGUNAVAIL;
}

/* server.h: the least RPCSEC_GSS service (prog, vers) takes. */
rc_status rc_server_set_gss_required(rc_server *srv, uint32_t prog, uint32_t vers,
                                     rc_gss_service min_service)
{
	rc__reg *r;

	if (srv == NULL || (uint32_t)min_service > RC_GSS_PRIVACY || atomic_load(&srv->running))
		return RC_INVAL;
	pthread_mutex_lock(&srv->mu);
	if ((r = rc__find(srv, prog, vers)) != NULL) {
		r->gss_min = min_service;
		r->rules = r->tls_required || r->gss_min != 0;
	}
	pthread_mutex_unlock(&srv->mu);
	return r != NULL ? RC_OK : RC_PROGUNAVAIL;
}

/* server.h: the result is the routine's: serve.c does not free it. */
rc_status rc_svc_req_keep_result(rc_svc_req *h)
{
	rc_svc_req *req = rc__svc_req_of(h);

	if (req == NULL)
		return RC_INVAL;
	req->keep_res = true;
	return RC_OK;
}

/* server.h: asks the transport of the stream the call came on (only TLS streams say yes). */
bool rc_svc_req_tls(const rc_svc_req *h)
{
	const rc_svc_req *req = rc__svc_req_of(h);

	if (req == NULL)
		return false;
	if (atomic_load_explicit(&((const rc__req *)req)->state, memory_order_relaxed) !=
	    RC__REQ_INLINE)
		return req->tls_kept; /* deferred: its connection may be gone */
	return rc__conn_secure(req->conn, NULL);
}

/* server.h: the identity the TLS stream verified, or NULL (no TLS, or no client certificate). */
const rc_tls_peer *rc_svc_req_tls_peer(const rc_svc_req *h)
{
	const rc_svc_req *req = rc__svc_req_of(h);
	const rc_tls_peer *peer = NULL;

	return req != NULL && rc__conn_secure(req->conn, &peer) ? peer : NULL;
}

uint32_t rc_svc_req_flavor(const rc_svc_req *h)
{
	const rc_svc_req *req = rc__svc_req_of(h);

	return req ? req->rq_cred.oa_flavor : RC_AUTH_NONE;
}

const rc_authsys *rc_svc_req_authsys(const rc_svc_req *h)
{
	const rc__req *r = rc__req_of(h);

	return r != NULL && r->pub.rq_cred.oa_flavor == RC_AUTH_SYS ? &r->auth.sys : NULL;
}

/* server.h: the reply verifier the auth hook (or the routine) chose, for a plain flavor. */
rc_status rc_svc_req_set_verf(const rc_svc_req *h, uint32_t flavor, const void *body,
                              uint32_t len)
{
	rc__req *r = rc__req_of(h);
	const rc_svc_req *req = r != NULL ? &r->pub : NULL;
	const rc__flavor *fl;

	if (req == NULL || len > RC__MAX_AUTH_BYTES || (len > 0 && body == NULL) || r->wc == NULL ||
	    r->wc->req != r || atomic_load(&r->state) != RC__REQ_INLINE)
		return RC_INVAL; /* not being served on its thread (answered, or deferred) */
	fl = rc__flavor_find(req->rq_cred.oa_flavor);
	if (fl == NULL || !(fl->props & RC__FL_PLAIN))
		return RC_NOTSUPP; /* the flavor makes its own verifiers */
	r->auth.fl = fl;
	r->auth.ctx = NULL;
	r->auth.verf_flavor = flavor;
	r->auth.verf_len = len;
	if (len > 0)
		memcpy(r->auth.verf, body, len);
	r->wc->auth = &r->auth;
	return RC_OK;
}

/* server.h: the call's header facts. */
uint32_t rc_svc_req_prog(const rc_svc_req *h)
{
	const rc_svc_req *req = rc__svc_req_of(h);

	return req ? req->rq_prog : 0;
}

/* server.h */
uint32_t rc_svc_req_xid(const rc_svc_req *h)
{
	const rc_svc_req *req = rc__svc_req_of(h);

	return req ? req->xid : 0;
}

uint32_t rc_svc_req_vers(const rc_svc_req *h)
{
	const rc_svc_req *req = rc__svc_req_of(h);

	return req ? req->rq_vers : 0;
}

uint32_t rc_svc_req_procnum(const rc_svc_req *h)
{
	const rc_svc_req *req = rc__svc_req_of(h);

	return req ? req->rq_proc : 0;
}

const rc_opaque_auth *rc_svc_req_cred(const rc_svc_req *h)
{
	const rc_svc_req *req = rc__svc_req_of(h);

	return req ? &req->rq_cred : NULL;
}

/* server_internal.h: for the Sun layer's struct svc_req. */
bool rc__svc_req_dgram(const rc_svc_req *h)
{
	const rc_svc_req *req = rc__svc_req_of(h);

	return req != NULL && req->dgram;
}

const rc_svc_unixcred *rc__svc_req_unixcred(const rc_svc_req *h)
{
	const rc__req *r = rc__req_of(h);

	return r != NULL && r->pub.rq_cred.oa_flavor == RC_AUTH_SYS ? &r->auth.ucred : NULL;
}

/* Tell the layer above's hook, if one is installed, of ev; called without srv->mu held (the
 * hook talks to rpcbind). */
void rc__server_notify(rc_server *srv, rc__srv_event ev)
{
	rc__srv_hook fn;
	void *ctx;

	pthread_mutex_lock(&srv->mu);
	fn = srv->hook;
	ctx = srv->hook_ctx;
	pthread_mutex_unlock(&srv->mu);
	if (fn != NULL)
		fn(srv, ev, ctx);
}

/* ---- a raw call's arguments and answers ---------------------------------------------------- */

/* server.h: decode a raw call's arguments under the server's allocation cap. */
rc_status rc_svc_req_getargs(rc_svc_req *h, rc_xdrproc xargs, void *args)
{
	rc__req *r = rc__req_of(h);
	rc_svc_req *req = r != NULL ? &r->pub : NULL;
	rc_xdr x;

	if (req == NULL || xargs == NULL)
		return RC_INVAL;
	if (req->w == NULL) {
		int st = atomic_load(&r->state);
		if (st == RC__REQ_ORPHANED)
			return RC_CANCELLED;
		if (st != RC__REQ_DEFERRED || r->pub.reg == NULL || r->pub.reg->raw == NULL)
			return RC_INVAL;
	}
	rc__xdr_decoder(&x, req->args, req->argslen, RC__LIM(req->srv, max_alloc));
	if (!xargs(&x, args) || x.x_pos != x.x_end)
		return RC_CANTDECODEARGS;
	return RC_OK;
}

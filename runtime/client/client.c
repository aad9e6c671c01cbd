/*
 * The client object (common.h has the whole picture): its errors, its call header
 * template and credentials, connecting, creating and destroying it, and its options.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "runtime/client/engine.h"
#include "transports/tls.h"

/* ---- the header template --------------------------------------------------------------- */

/* Fill h with the call header of c's program and version and the given credential body
 * (flavor, bytes; credlen at most RC__MAX_AUTH_BYTES). */
static void rc__build_header(const rc_client *c, rc__hdr *h, uint32_t flavor,
                             const unsigned char *cred, size_t credlen)
{
	unsigned char *p = h->b;

	rc__put32(p + 0, 0); /* xid, patched per call */
	rc__put32(p + 4, RC__CALL);
	rc__put32(p + 8, RC__RPCVERS);
	rc__put32(p + 12, c->prog);
	rc__put32(p + 16, c->vers);
	rc__put32(p + 20, 0); /* procedure, patched per call */
	rc__put32(p + 24, flavor);
	rc__put32(p + 28, (uint32_t)credlen);
	if (credlen > 0)
		memcpy(p + 32, cred, credlen);
	p += 32 + credlen;
	rc__put32(p, 0); /* verifier: AUTH_NONE */
	rc__put32(p + 4, 0);
	h->len = 32 + credlen + 8;
	h->next = NULL;
	h->fl = rc__flavor_find(flavor);
	h->auth = NULL;
}

/*
 * Make a new template current (a fresh copy; the old one is retired, not rewritten, since a
 * fast path may be copying it without the lock). Retired templates are freed at once if the
 * reader's role is free; otherwise later, by the reader (rc__read) -- and past
 * RC__RETIRED_MAX this waits for the role, so they never pile up. RC_OK or RC_NOMEM.
 */
static rc_status rc__install_header(rc_client *c, rc__hdr *h)
{
	bool idle = false;

	pthread_mutex_lock(&c->mu);
	if (c->hdr != &c->hdr0) {
		c->hdr->next = c->retired;
		c->retired = c->hdr;
		c->nretired++;
	}
	__atomic_store_n(&c->hdr, h, __ATOMIC_RELEASE);
	if (h->auth != NULL)
		atomic_fetch_or_explicit(&c->nofast, RC__NOFAST_SEALED, memory_order_relaxed);
	else
		atomic_fetch_and_explicit(&c->nofast, ~RC__NOFAST_SEALED, memory_order_relaxed);
	while (c->retired != NULL) {
		idle = false;
		if (atomic_compare_exchange_strong(&c->reading, &idle, true)) {
			rc__free_retired(c);
			rc__role_drop_locked(c);
			break;
		}
		if (c->nretired <= RC__RETIRED_MAX)
			break; /* the reader frees them */
		atomic_fetch_add(&c->nwaiters, 1);
		if (atomic_load(&c->reading))
			pthread_cond_wait(&c->cv, &c->mu);
		atomic_fetch_sub(&c->nwaiters, 1);
	}
	pthread_mutex_unlock(&c->mu);
	return RC_OK;
}

/* A new template with a plain flavor's credential body, made current (rc__install_header). */
static rc_status rc__set_header(rc_client *c, uint32_t flavor, const unsigned char *cred,
                                size_t credlen)
{
	rc__hdr *h = malloc(sizeof(*h));

	if (h == NULL)
		return RC_NOMEM;
	rc__build_header(c, h, flavor, cred, credlen);
	return rc__install_header(c, h);
}

/* auth.h: credentials of a flavor that is not plain: the template holds the call's first 24
 * bytes and the credentials; each call is sealed through them (rc__seal). */
rc_status rc__client_set_auth(rc_client *clnt, rc__cl_auth *a)
{
	rc__hdr *h;

	if (clnt == NULL || a == NULL || a->fl == NULL || (a->fl->props & RC__FL_PLAIN) ||
	    a->fl->cl_marshal == NULL || a->fl->cl_validate == NULL) {
		rc__cl_auth_unref(a);
		return RC_INVAL;
	}
	if ((h = malloc(sizeof(*h))) == NULL) {
		rc__cl_auth_unref(a);
		return RC_NOMEM;
	}
	rc__build_header(clnt, h, RC_AUTH_NONE, NULL, 0);
	h->len = 24; /* xid through procedure: the rest is the flavor's, per transmission */
	h->fl = a->fl;
	h->auth = a;
	return rc__install_header(clnt, h);
}

/* rpc.h: credentials of a plain flavor, encoded. */
rc_status rc__client_set_cred(rc_client *clnt, uint32_t flavor, const unsigned char *cred,
                              size_t len)
{
	const rc__flavor *fl = rc__flavor_find(flavor);

	if (clnt == NULL || fl == NULL || !(fl->props & RC__FL_PLAIN) ||
	    len > RC__MAX_AUTH_BYTES || (len > 0 && cred == NULL))
		return RC_INVAL;
	return rc__set_header(clnt, flavor, cred, len);
}

rc_status rc_client_set_auth_none(rc_client *clnt)
{
	if (clnt == NULL)
		return RC_INVAL;
	return rc__set_header(clnt, RC_AUTH_NONE, NULL, 0);
}

rc_status rc_client_set_auth_sys(rc_client *clnt, const char *machine, uint32_t uid,
                                 uint32_t gid, const uint32_t *gids, uint32_t ngids)
{
	unsigned char body[RC__MAX_AUTH_BYTES];
	rc_xdr x;
	char *m = (char *)machine;
	uint32_t stamp = (uint32_t)time(NULL);
	uint32_t *g = (uint32_t *)gids;

	if (clnt == NULL || machine == NULL || strlen(machine) > 255 || ngids > 16 ||
	    (ngids > 0 && gids == NULL))
		return RC_INVAL;
	rc_xdrmem_create(&x, body, sizeof(body), RC_XDR_ENCODE);
	if (!rc_xdr_u_int(&x, &stamp) || !rc_xdr_string(&x, &m, 255) || !rc_xdr_u_int(&x, &uid) ||
	    !rc_xdr_u_int(&x, &gid) ||
	    !rc_xdr_array(&x, &g, &ngids, 16, sizeof(uint32_t), (rc_xdrproc)rc_xdr_u_int))
		return RC_INVAL;
	return rc__set_header(clnt, RC_AUTH_SYS, body, rc_xdr_getpos(&x));
}

/* ---- life cycle ------------------------------------------------------------------------- */

/* client.h: whether the connection is under TLS now (under the lock: it may be replaced). */
bool rc_client_tls(rc_client *clnt)
{
	const rc_tls_peer *peer;
	bool on = false;

	if (clnt == NULL)
		return false;
	pthread_mutex_lock(&clnt->mu);
	pthread_mutex_lock(&clnt->smu);
	if (clnt->tp != NULL && clnt->tp->vt->secure != NULL)
		on = clnt->tp->vt->secure(clnt->tp, &peer);
	pthread_mutex_unlock(&clnt->smu);
	pthread_mutex_unlock(&clnt->mu);
	return on;
}

/* auth.h: the channel-binding value of the connection now (under the locks, as above). */
bool rc__client_exporter(rc_client *clnt, unsigned char *out, bool *must)
{
	bool on;

	pthread_mutex_lock(&clnt->mu);
	pthread_mutex_lock(&clnt->smu);
	on = rc__tp_exporter(clnt->tp, out, must);
	pthread_mutex_unlock(&clnt->smu);
	pthread_mutex_unlock(&clnt->mu);
	return on;
}

/* A new client of prog, vers over kind, not connected yet (its uri and tls are the caller's
 * to set), or NULL when memory is short. */
static rc_client *rc__client_new(const rc_tp_kind *kind, uint32_t prog, uint32_t vers)
{
	rc_client *c;
	uint32_t x0;

	if ((c = rc__zalloc_lines(sizeof(*c))) == NULL) /* (the fast step's fields: 3 lines) */
		return NULL;
	c->kind = kind;
	c->dgram = (kind->props & RC_TPP_DGRAM) != 0;
	c->prog = prog;
	c->vers = vers;
	c->timeout_ms = RC_DEFAULT_TIMEOUT_MS;
	c->retry_ms = RC_DEFAULT_RETRY_MS;
	c->max_record = RC_DEFAULT_MAX_MESSAGE;
	if (getrandom(&x0, sizeof(x0), GRND_NONBLOCK) != sizeof(x0))
		x0 = (uint32_t)rc__now() ^ ((uint32_t)getpid() << 16);
	atomic_init(&c->xid, x0);
	rc__build_header(c, &c->hdr0, RC_AUTH_NONE, NULL, 0);
	c->hdr = &c->hdr0;
	return c;
}

/* The client's locks, once its transport is there. */
static void rc__client_locks(rc_client *c)
{
	pthread_mutex_init(&c->mu, NULL);
	pthread_mutex_init(&c->smu, NULL);
	rc__cond_init_mono(&c->cv);
}

/* rpc.h: the client's own open, for the layer above (rpcbind.c); the URI has its port. */
rc_status rc__client_open(rc_client **out, const rc_uri *u, uint32_t prog, uint32_t vers)
{
	rc_client *c;
	rc_status st;

	if (out == NULL)
		return RC_INVAL;
	*out = NULL;
	if (u == NULL)
		return RC_INVAL;
	if ((c = rc__client_new(rc__tp_find(u->scheme), prog, vers)) == NULL)
		return RC_NOMEM;
	c->uri = *u; /* u->tls, if set, is the client's from here on (freed by destroy) */
	if ((st = rc__connect(c, rc__now() + (int64_t)c->timeout_ms * 1000000)) != RC_OK) {
		free(c); /* u->tls stays the caller's */
		return st;
	}
	rc__client_locks(c);
	*out = c;
	return RC_OK;
}

/* rpc.h: a client over a transport made elsewhere (a server connection's back channel). */
rc_status rc__client_open_tp(rc_client **out, const rc_tp_kind *kind, rc_tp *tp, uint32_t prog,
                             uint32_t vers)
{
	rc_client *c;

	if ((c = rc__client_new(kind, prog, vers)) == NULL) {
		*out = NULL;
		return RC_NOMEM;
	}
	snprintf(c->uri.scheme, sizeof(c->uri.scheme), "%s", kind->scheme);
	c->uri.port = -1;
	c->tp = tp;
	c->max_msg = tp->max_msg > c->max_record ? c->max_record : tp->max_msg;
	c->last_io = rc__now();
	rc__client_locks(c);
	*out = c;
	return RC_OK;
}

/* rpc.h */
bool rc__client_back(const rc_client *c)
{
	return (c->kind->props & RC_TPP_BACK) != 0;
}

rc_status rc_client_set_timeout(rc_client *clnt, uint32_t total_ms)
{
	if (clnt == NULL || total_ms > RC_MAX_TIMEOUT_MS)
		return RC_INVAL;
	clnt->timeout_ms = total_ms ? total_ms : RC_DEFAULT_TIMEOUT_MS;
	return RC_OK;
}

/* client.h */
rc_status rc_client_set_resend(rc_client *clnt, bool on)
{
	if (clnt == NULL)
		return RC_INVAL;
	if (clnt->dgram)
		return RC_NOTSUPP; /* a datagram client retransmits with the same xid anyway */
	clnt->resend = on;
	return RC_OK;
}

rc_status rc_client_set_retry(rc_client *clnt, uint32_t initial_ms)
{
	if (clnt == NULL || initial_ms > 3600u * 1000)
		return RC_INVAL;
	clnt->retry_ms = initial_ms ? initial_ms : RC_DEFAULT_RETRY_MS;
	return RC_OK;
}

/* client.h: the cap on both directions; a connected transport takes the new one at once. */
rc_status rc_client_set_max_message(rc_client *clnt, size_t bytes)
{
	if (bytes == 0)
		bytes = RC_DEFAULT_MAX_MESSAGE;
	if (clnt == NULL || bytes < 1024 || (uint64_t)bytes > ((uint64_t)4 << 30))
		return RC_INVAL;
	pthread_mutex_lock(&clnt->mu);
	clnt->max_record = bytes;
	if (clnt->tp != NULL) {
		if (clnt->tp->vt->set_max_record != NULL)
			clnt->tp->vt->set_max_record(clnt->tp, bytes);
		clnt->max_msg = clnt->tp->max_msg > bytes ? bytes : clnt->tp->max_msg;
	}
	pthread_mutex_unlock(&clnt->mu);
	return RC_OK;
}

size_t rc_client_get_max_message(const rc_client *clnt)
{
	return clnt ? clnt->max_record : 0;
}

uint32_t rc_client_get_timeout(const rc_client *clnt)
{
	return clnt ? clnt->timeout_ms : 0;
}

uint32_t rc_client_get_retry(const rc_client *clnt)
{
	return clnt ? clnt->retry_ms : 0;
}

rc_status rc_client_set_spin(rc_client *clnt, uint32_t spin_us)
{
	if (clnt == NULL || spin_us > 1000000)
		return RC_INVAL;
	if (clnt->kind->props & RC_TPP_SYNC)
		return RC_NOTSUPP; /* an in-process call is answered before its send returns */
	clnt->spin_us = spin_us;
	if (spin_us > 0)
		atomic_fetch_or_explicit(&clnt->nofast, RC__NOFAST_SPIN, memory_order_relaxed);
	else
		atomic_fetch_and_explicit(&clnt->nofast, ~RC__NOFAST_SPIN, memory_order_relaxed);
	return RC_OK;
}

rc_status rc_client_set_trace(rc_client *clnt, rc_trace_fn fn, void *arg)
{
	if (clnt == NULL)
		return RC_INVAL;
	pthread_mutex_lock(&clnt->mu);
	clnt->trace = fn;
	clnt->trace_arg = arg;
	pthread_mutex_unlock(&clnt->mu);
	return RC_OK;
}

/* rpc.h */
rc_status rc__client_serve_with(rc_client *clnt, const rc__cl_server *ops, const rc_svc_prog *def,
                                void *ctx)
{
	rc_status st = RC_OK;

	if (clnt->dgram || (clnt->kind->props & (RC_TPP_SYNC | RC_TPP_BACK)))
		return RC_NOTSUPP; /* calls come back only on a stream connection of the client's */
	pthread_mutex_lock(&clnt->mu);
	if (clnt->srv == NULL && (st = ops->create(&clnt->srv)) == RC_OK)
		clnt->srv_ops = ops;
	if (st == RC_OK)
		st = clnt->srv_ops->add(clnt->srv, def, ctx);
	pthread_mutex_unlock(&clnt->mu);
	return st;
}

/* client.h */
rc_status rc_client_set_failover(rc_client *clnt, bool on)
{
	if (clnt == NULL)
		return RC_INVAL;
	if (clnt->dgram || (clnt->kind->props & RC_TPP_SYNC))
		return RC_NOTSUPP;
	pthread_mutex_lock(&clnt->mu);
	clnt->failover = on;
	if (!on) {
		clnt->notice_xid = 0;
	} else if (clnt->tp != NULL && clnt->npending == 0 && clnt->notice_xid == 0) {
		/* connected already (rc_client_create): that connection asks now, or is closed
		 * and the next call's connects and asks */
		int64_t by = rc__now() + (int64_t)clnt->timeout_ms * 1000000;
		pthread_mutex_lock(&clnt->smu);
		bool asked = rc__notice(clnt, clnt->tp, by) == RC_OK;
		pthread_mutex_unlock(&clnt->smu);
		if (!asked)
			rc__disconnect(clnt);
	}
	pthread_mutex_unlock(&clnt->mu);
	if (on) /* blocking calls are registered in flight, so that they can go again */
		atomic_fetch_or_explicit(&clnt->nofast, RC__NOFAST_FAILOVER, memory_order_relaxed);
	else
		atomic_fetch_and_explicit(&clnt->nofast, ~RC__NOFAST_FAILOVER, memory_order_relaxed);
	return RC_OK;
}

void rc_client_destroy(rc_client *clnt)
{
	if (clnt == NULL)
		return;
	pthread_mutex_lock(&clnt->mu);
	/* Calls still in flight complete as cancelled; their callbacks run now. */
	while (clnt->pending)
		rc__complete(clnt, clnt->pending, RC_CANCELLED);
	while (clnt->renew) { /* started calls waiting for a renewal nobody made */
		rc_async *p = clnt->renew;
		clnt->renew = p->next;
		p->next = NULL;
		p->renewing = false;
		rc__complete(clnt, p, RC_CANCELLED);
	}
	pthread_mutex_unlock(&clnt->mu);
	rc__run_callbacks(clnt);
	/* Handles not yet released outlive the client, complete, until rc_async_release. */
	while (clnt->handles) {
		rc_async *p = clnt->handles;
		rc__handle_unlink(clnt, p);
		p->clnt = NULL;
	}
	if (clnt->tp)
		clnt->tp->vt->close(clnt->tp);
	rc__free_retired(clnt);
	while (clnt->inq != NULL) { /* the peer's calls never served */
		rc__inq *q = clnt->inq;
		clnt->inq = q->next;
		free(q);
	}
	free(clnt->inq_spare);
	if (clnt->srv != NULL)
		clnt->srv_ops->destroy(clnt->srv);
	if (clnt->hdr != &clnt->hdr0) {
		rc__cl_auth_unref(clnt->hdr->auth);
		free(clnt->hdr);
	}
	pthread_cond_destroy(&clnt->cv);
	pthread_mutex_destroy(&clnt->mu);
	pthread_mutex_destroy(&clnt->smu);
	free(clnt->fastbuf);
	free(clnt->dq);
	free(clnt->rxb);
	rc__tls_ctx_free(clnt->uri.tls); /* after the transport made with it */
	free(clnt);
}

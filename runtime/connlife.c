/*
 * Connection life: the application's hook on its stream connections' opening and closing, and
 * its pointer on each (<remotecall/server.h>, "connection life"; docs/runtime.md, "Connection
 * life"); closing one and walking them are connctl.c's, above the connections. Also the switches of the duplicate
 * request cache for stream calls (serve.c consults them).
 *
 * A connection under a hook gets its handle (rc_server_conn, backchan.c) when it is admitted
 * (conn.c's rc__conn_admit calls rc__connlife_open before the connection is armed, so OPEN is
 * told before anything of it is read). Its CLOSE is queued in rc__conn_close, under srv->mu,
 * with a reference to the handle, and told by rc__connlife_drain once whoever closed it has
 * dropped the lock -- so the hook runs with no lock of the server held and may call back into
 * the server. Each connection is queued once (rc__conn_close runs once), and taken off the
 * queue by one drain, so CLOSE is told once.
 *
 * A server without a hook pays nothing per call: the drain's test is on the closing paths
 * only, and a connection without a handle is served as before.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "runtime/server_priv.h"

/* server.h */
rc_status rc_server_set_conn_hook(rc_server *srv, rc_conn_hook fn, void *ctx)
{
	if (srv == NULL || atomic_load(&srv->running))
		return RC_INVAL;
	pthread_mutex_lock(&srv->mu);
	srv->conn_hook = fn;
	srv->conn_hook_ctx = ctx;
	pthread_mutex_unlock(&srv->mu);
	return RC_OK;
}

/* The peer of c without its port (the client a PROXY header named, else the socket's peer),
 * for the duplicate cache's key of its calls (under srv->mu, at admission). A unix peer has
 * no address: its family alone (the rest of the key tells local callers apart). */
static void rc__conn_peer(rc__conn *c)
{
	rc_peer *p = &c->peer;
	unsigned len = sizeof(p->ss);

	memset(p, 0, sizeof(*p));
	if (rc__tp_peer(c->tp, &p->ss, &len) != RC_OK)
		return;
	if (p->ss.ss_family == AF_INET)
		((struct sockaddr_in *)&p->ss)->sin_port = 0;
	else if (p->ss.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&p->ss)->sin6_port = 0;
	else if (p->ss.ss_family != AF_UNIX)
		return;
	p->len = (socklen_t)len;
	c->peer_ok = true;
}

/* Whether any program's stream calls are cached (under srv->mu; kept in drc_streams_any). */
static bool rc__drc_streams_any(rc_server *srv)
{
	if (srv->drc_streams_all)
		return true;
	for (int b = 0; b < RC__NBUCKETS; b++)
		for (rc__reg *r = srv->buckets[b]; r != NULL; r = r->next)
			if (r->drc_streams)
				return true;
	return false;
}

/* server_priv.h */
bool rc__connlife_open(rc_server *srv, rc__conn *c)
{
	rc_conn_hook fn = srv->conn_hook;
	rc_server_conn *h;

	if (srv->drc != NULL && srv->drc_streams_any)
		rc__conn_peer(c);
	if (fn == NULL)
		return true;
	if ((h = rc__conn_handle(srv, c)) == NULL)
		return false;
	c->opened = true;
	h->hook = fn; /* its CLOSE goes to the same hook, whatever is set meanwhile */
	h->hook_ctx = srv->conn_hook_ctx;
	atomic_fetch_add(&h->refs, 1); /* the hook's, for its call */
	pthread_mutex_unlock(&srv->mu);
	fn(h, RC_CONN_OPEN, h->hook_ctx);
	rc_server_conn_release(h);
	pthread_mutex_lock(&srv->mu);
	return true;
}

/* server_priv.h */
void rc__connlife_closed(rc_server *srv, rc__conn *c)
{
	rc_server_conn *h = atomic_load(&c->handle);

	if (!c->opened || h == NULL)
		return;
	c->opened = false;
	atomic_fetch_add(&h->refs, 1); /* the queue's */
	h->closed_next = srv->closedq;
	srv->closedq = h;
	atomic_fetch_add(&srv->nclosedq, 1);
}

/* server_priv.h */
void rc__connlife_drain_slow(rc_server *srv)
{
	for (;;) {
		rc_server_conn *h;

		pthread_mutex_lock(&srv->mu);
		if ((h = srv->closedq) != NULL) {
			srv->closedq = h->closed_next;
			atomic_fetch_sub(&srv->nclosedq, 1);
		}
		pthread_mutex_unlock(&srv->mu);
		if (h == NULL)
			return;
		h->closed_next = NULL;
		h->hook(h, RC_CONN_CLOSE, h->hook_ctx);
		rc_server_conn_release(h);
	}
}

/* server.h */
void rc_server_conn_set_data(rc_server_conn *sc, void *data)
{
	if (sc != NULL)
		atomic_store_explicit(&sc->data, data, memory_order_release);
}

/* server.h */
void *rc_server_conn_data(const rc_server_conn *sc)
{
	return sc != NULL ? atomic_load_explicit(&((rc_server_conn *)sc)->data, memory_order_acquire)
	                  : NULL;
}

/* server.h */
rc_server_conn *rc_server_conn_retain(rc_server_conn *sc)
{
	if (sc != NULL)
		atomic_fetch_add(&sc->refs, 1);
	return sc;
}

/* ---- the duplicate request cache's switches ------------------------------------------- */

/* server.h */
rc_status rc_server_set_drc(rc_server *srv, bool on)
{
	rc_status st = RC_OK;

	if (srv == NULL || atomic_load(&srv->running))
		return RC_INVAL;
	pthread_mutex_lock(&srv->mu);
	if (!on) {
		rc__drc_destroy(srv->drc);
		srv->drc = NULL;
	} else if (srv->drc == NULL &&
	           (srv->drc = rc__drc_create(srv->lim.drc_entries, srv->lim.drc_bytes,
	                                      srv->lim.drc_ttl_ms)) == NULL) {
		st = RC_NOMEM;
	}
	pthread_mutex_unlock(&srv->mu);
	return st;
}

/* server.h */
rc_status rc_server_set_drc_streams(rc_server *srv, uint32_t prog, uint32_t vers, bool on)
{
	rc_status st = RC_OK;

	if (srv == NULL || atomic_load(&srv->running))
		return RC_INVAL;
	pthread_mutex_lock(&srv->mu);
	if (prog == RC_DRC_EVERY_PROGRAM) {
		srv->drc_streams_all = on;
		for (int b = 0; b < RC__NBUCKETS; b++)
			for (rc__reg *r = srv->buckets[b]; r != NULL; r = r->next)
				r->drc_streams = on;
	} else {
		rc__reg *r = rc__find(srv, prog, vers);
		if (r == NULL)
			st = RC_PROGUNAVAIL;
		else
			r->drc_streams = on;
	}
	srv->drc_streams_any = rc__drc_streams_any(srv);
	pthread_mutex_unlock(&srv->mu);
	return st;
}

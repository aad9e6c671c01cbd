/*
 * Connection life: the application's hook on its stream connections' opening and closing, and
 * its pointer on each (<remotecall/server.h>, "connection life"; docs/runtime.md, "Connection
 * life"); closing one and walking them are server/connctl.c's. Above the server, beside the
 * back channels whose handle (rc_server_conn) it hands out: the server reaches it through
 * srv->life (listener.h), which rc_server_set_conn_hook installs. The duplicate request
 * cache's switches for stream calls are server/server.c's.
 *
 * A connection under a hook gets its handle (rc_server_conn, backchan.c) when it is admitted
 * (server/accept.c's rc__conn_admit calls srv->life->open before the connection is armed, so
 * OPEN is told before anything of it is read). Its CLOSE is queued in rc__conn_close, under srv->mu,
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

#include "runtime/server/listener.h"

/* srv->life's open (listener.h) */
static bool rc__connlife_open(rc_server *srv, rc__conn *c)
{
	rc_conn_hook fn = srv->conn_hook;
	rc_server_conn *h;

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

/* srv->life's closed (listener.h) */
static void rc__connlife_closed(rc_server *srv, rc__conn *c)
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

/* srv->life's drain (listener.h) */
static void rc__connlife_drain_slow(rc_server *srv)
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

static const rc__life_hooks rc__life_hooks_on = {rc__connlife_open, rc__connlife_closed,
                                                 rc__connlife_drain_slow};

/* server.h */
rc_status rc_server_set_conn_hook(rc_server *srv, rc_conn_hook fn, void *ctx)
{
	if (srv == NULL || atomic_load(&srv->running))
		return RC_INVAL;
	pthread_mutex_lock(&srv->mu);
	srv->conn_hook = fn;
	srv->conn_hook_ctx = ctx;
	/* the server reaches the steps above through srv->life from now on (it stays: a
	 * connection opened under a hook has its CLOSE told) */
	srv->life = &rc__life_hooks_on;
	pthread_mutex_unlock(&srv->mu);
	return RC_OK;
}

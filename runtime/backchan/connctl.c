/*
 * Connection life, the application's controls above the connections (<remotecall/server.h>,
 * "connection life"): closing one from any thread, and walking the open ones. Above the server
 * (it asks the stream connections' end of conn.c, and tells their back channels through
 * srv->back), beside connlife.c, the hook's side; it releases handles as backchan.c does.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "runtime/server/listener.h"

/* server.h: shut the socket down (the connection's own handler ends it, as for one the
 * sweeper dooms) and hang its back channels up now. */
rc_status rc_server_conn_close(rc_server_conn *sc)
{
	rc_server *srv;

	if (sc == NULL)
		return RC_INVAL;
	if (atomic_load(&sc->detached))
		return RC_OK; /* closed (its server may be gone: not touched) */
	srv = sc->srv;
	pthread_mutex_lock(&srv->mu);
	pthread_mutex_lock(&sc->mu);
	rc__conn *c = sc->c; /* (set to NULL under both locks: stable here) */
	pthread_mutex_unlock(&sc->mu);
	if (c != NULL) {
		rc__conn_doom(srv, c);
		rc__conn_back(srv, hangup, c); /* calls back fail now, not when its reader sees the end */
	}
	pthread_mutex_unlock(&srv->mu);
	return RC_OK;
}

/* server.h */
rc_status rc_server_foreach_conn(rc_server *srv, bool (*fn)(rc_server_conn *sc, void *ctx),
                                 void *ctx)
{
	rc_server_conn **v;
	size_t n = 0, cap;

	if (srv == NULL || fn == NULL)
		return RC_INVAL;
	pthread_mutex_lock(&srv->mu);
	cap = srv->nconns;
	if ((v = malloc((cap > 0 ? cap : 1) * sizeof(*v))) == NULL) {
		pthread_mutex_unlock(&srv->mu);
		return RC_NOMEM;
	}
	for (rc__conn *c = srv->conns; c != NULL && n < cap; c = c->next) {
		rc_server_conn *h = atomic_load(&c->handle);
		if (h == NULL || atomic_load(&h->detached))
			continue;
		atomic_fetch_add(&h->refs, 1);
		v[n++] = h;
	}
	pthread_mutex_unlock(&srv->mu);
	size_t i = 0;
	for (; i < n && fn(v[i], ctx); i++)
		rc_server_conn_release(v[i]);
	for (; i < n; i++) /* (the one fn stopped at, and the rest) */
		rc_server_conn_release(v[i]);
	free(v);
	return RC_OK;
}

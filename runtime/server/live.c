/*
 * Changes while serving (docs/runtime.md, "Changes while serving"): what a running server may
 * be given, taking effect for new connections or calls without touching those being served.
 *
 * TLS: rc_server_set_tls (server.c) makes a new context and puts it in place here. A
 * connection's TLS session holds its context (transports/tls.c keeps a pointer to it, for
 * its handshake count), so a replaced context is not freed while the server lives: it is
 * kept on srv->tls_old, a few kilobytes each, and freed with the server. Readers of srv->tls
 * (the probe's answer, the start of a handshake) load it atomically: a probe answered
 * under the old context may start its handshake under the new one, which is as good.
 */
#include <pthread.h>
#include <stdlib.h>

#include "runtime/server/listener.h"
#include "transports/tls.h"

/* A context replaced, kept for the connections made from it. */
typedef struct rc__tls_old {
	struct rc__tls_old *next;
	rc__tls_ctx *ctx;
} rc__tls_old;

/* listener.h */
bool rc__tls_replace(rc_server *srv, rc__tls_ctx *ctx)
{
	rc__tls_old *o = NULL;

	pthread_mutex_lock(&srv->mu);
	if (srv->tls != NULL) {
		if ((o = malloc(sizeof(*o))) == NULL) {
			pthread_mutex_unlock(&srv->mu);
			return false;
		}
		o->ctx = srv->tls;
		o->next = srv->tls_old;
		srv->tls_old = o;
	}
	atomic_store(&srv->tls, ctx);
	pthread_mutex_unlock(&srv->mu);
	return true;
}

/* listener.h */
void rc__tls_old_free(rc_server *srv)
{
	while (srv->tls_old != NULL) {
		rc__tls_old *o = srv->tls_old;
		srv->tls_old = o->next;
		rc__tls_ctx_free(o->ctx);
		free(o);
	}
	rc__tls_ctx_free(srv->tls);
	srv->tls = NULL;
}

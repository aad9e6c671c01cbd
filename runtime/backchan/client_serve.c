/*
 * The back channel, client side: a client answers the calls its peer sends on the client's
 * stream connection (rc_client_serve). The programs it answers are a private server's, never
 * run: the client engine hands each call it reads to that server's serve step on its own
 * thread (rc__cl_server, rpc.h), and sends the reply on its connection. The engine knows no
 * server; this layer, above both, joins them.
 */
#include <remotecall/client.h>
#include <remotecall/server.h>

#include "runtime/core/rpc.h"
#include "runtime/server/server_internal.h"

static rc_status rc__peer_create(void **srv)
{
	rc_server *s = NULL;
	rc_status st = rc_server_create(&s);

	*srv = s;
	return st;
}

static rc_status rc__peer_add(void *srv, const rc_svc_prog *def, void *ctx)
{
	return rc_server_register(srv, def, ctx);
}

static void rc__peer_deliver(void *srv, const void *msg, size_t len, rc_reply_fn reply,
                             void *rctx)
{
	rc__server_handle_direct(srv, msg, len, reply, rctx);
}

static void rc__peer_destroy(void *srv)
{
	rc_server_destroy(srv);
}

static const rc__cl_server rc__peer_server = {rc__peer_create, rc__peer_add, rc__peer_deliver,
                                              rc__peer_destroy};

/* client.h */
rc_status rc_client_serve(rc_client *clnt, const rc_svc_prog *def, void *ctx)
{
	if (clnt == NULL || def == NULL)
		return RC_INVAL;
	return rc__client_serve_with(clnt, &rc__peer_server, def, ctx);
}

/*
 * The Sun RPCSEC_GSS layer (sunrpc_gss.c) and what it needs of the others: the flavor
 * (auth/gss_flavor.h), its context maker (client/gss_cl.h), the Sun server (sunrpc_svc.c) and
 * the Sun client (sunrpc.c).
 * Internal.
 */
#ifndef RC_SUNRPC_GSS_INT_H
#define RC_SUNRPC_GSS_INT_H

#include <stdatomic.h>
#include <stdbool.h>

#include <remotecall/client.h>
#include <remotecall/server.h>

#include "runtime/auth/auth.h"
#include "runtime/auth/gss.h"
#include "runtime/auth/gss_flavor.h"
#include "runtime/client/gss_cl.h" /* rc__gss_client_start */

struct rc_sunrpc_auth;    /* AUTH (<remotecall/sunrpc.h>) */
struct rc_sunrpc_svc_req; /* struct svc_req */

/* sunrpc_svc.c: the process's Sun server (made now if need be; NULL if it cannot be), and the
 * call being dispatched on this thread (NULL outside a dispatch function). */
rc_server *rc__sunrpc_server(void);
rc_svc_req *rc__sunrpc_current(void);

/*
 * What the Sun server (sunrpc_svc.c) and client (sunrpc.c) ask of the Sun RPCSEC_GSS layer
 * above them (sunrpc_gss.c), through rc__sungss_hooks_on: it installs these before it makes
 * its first AUTH or names its server's principal, and no AUTH or call of flavor RPCSEC_GSS is
 * its before then (NULL: the others treat such as any other flavor's).
 * admit -- before a dispatch function sees an RPCSEC_GSS call (req, this thread's current
 * call): run rpc_gss_set_callback's callback at a context's first call and hold the context
 * to a service it locked; set sun->rq_clntcred to the raw credential. False: the call was
 * refused (answered with AUTH_ERROR here) and is not dispatched.
 * apply, free -- an RPCSEC_GSS AUTH (ah_cred.oa_flavor 6) made on client clnt goes on it
 * again (RC_OK; RC_AUTHERROR for another client), and is freed.
 */
typedef struct rc__sungss_hooks {
	bool (*admit)(struct rc_sunrpc_svc_req *sun, rc_svc_req *req);
	rc_status (*apply)(rc_client *clnt, struct rc_sunrpc_auth *auth);
	void (*free)(struct rc_sunrpc_auth *auth);
} rc__sungss_hooks;
/* sunrpc_svc.c: the hooks sunrpc_gss.c installed, or NULL. */
extern const rc__sungss_hooks *_Atomic rc__sungss_hooks_on;

#endif

/*
 * The client's RPCSEC_GSS context maker (auth_gss_cl.c), for the layers above the client that
 * start one themselves (the Sun layer: sun/sunrpc_gss.c). Internal.
 */
#ifndef RC_CLIENT_GSS_CL_H
#define RC_CLIENT_GSS_CL_H

#include <remotecall/client.h>

#include "runtime/auth/auth.h"
#include "runtime/auth/gss.h"

/* Establish a context on clnt with o (NULL calls now) and send every later call under it, as
 * rc_client_set_auth_gss; *ref (if not NULL) gets a reference of the caller's to the flavor
 * object (rc__cl_auth_unref), NULL on failure. rc_client_set_auth_gss's statuses; on failure
 * the client is left with AUTH_NONE. */
rc_status rc__gss_client_start(rc_client *clnt, const rc__gss_cli_opts *o, rc__cl_auth **ref,
                               rc_error *err);

#endif

/*
 * Internal: the client side of the RPCSEC_GSS flavor (auth_gss.c) as the layers above it see
 * it -- the state a flavor object carries, which the context maker (client/auth_gss_cl.c)
 * fills in, and its core object, which the Sun layer (sun/sunrpc_gss.c) asks about.
 */
#ifndef RC_GSS_FLAVOR_H
#define RC_GSS_FLAVOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <remotecall/client.h>

#include "runtime/auth/auth.h"
#include "runtime/auth/gss.h"

/* A client's RPCSEC_GSS state (rc__cl_auth.priv): the GSS core's context object, the client
 * whose calls it seals, how to make a context again on it (auth_gss_cl.c; the data flavor's
 * refresh calls it), and, while the context is being made, the last reply verifier (the INIT
 * calls go through the engine with the establishing flavor, whose cl_validate keeps it). */
typedef struct rc__gss_cl {
	rc__gss_cli *cli;
	rc_client *clnt;
	bool (*renew)(rc__cl_auth *a); /* a context again, a installed again: true if both */
	uint32_t init_vflavor;
	size_t init_vlen;
	unsigned char init_verf[RC__MAX_AUTH_BYTES];
} rc__gss_cl;

/* auth_gss.c: the core object of an RPCSEC_GSS flavor object and (*clnt) the client whose
 * context it is; NULL for an object of another flavor. */
rc__gss_cli *rc__gss_cl_core(const rc__cl_auth *a, rc_client **clnt);

#endif

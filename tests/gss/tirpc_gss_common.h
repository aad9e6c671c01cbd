/* The interface of the libtirpc RPCSEC_GSS peers (tirpc_gss_server.c, tirpc_gss_client.c),
 * written out by hand with libtirpc's XDR (no rpcgen: two procedures):
 *
 *   program GSS_ECHO_PROG {
 *     version GSS_ECHO_VERS {
 *       void NULL(void) = 0;
 *       echo_res ECHO(opaque data<>) = 1;   -- the data back, and rpc_gss_getcred's principal
 *     } = 1;
 *   } = 0x20000528;
 *   struct echo_res { opaque data<>; string principal<>; };
 */
#ifndef TIRPC_GSS_COMMON_H
#define TIRPC_GSS_COMMON_H

#include <rpc/rpc.h>

#define GSS_ECHO_PROG 0x20000528u
#define GSS_ECHO_VERS 1u
#define GSS_ECHO_NULL 0u
#define GSS_ECHO_ECHO 1u
#define GSS_ECHO_MAX (8u << 20)

typedef struct echo_arg {
	u_int len;
	char *val;
} echo_arg;

typedef struct echo_res {
	echo_arg data;
	char *principal;
} echo_res;

/* xdr_void's type is bool_t (void): a cast of it to xdrproc_t trips -Wcast-function-type */
static inline bool_t xdr_nothing(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

static inline bool_t xdr_echo_arg(XDR *x, echo_arg *a)
{
	return xdr_bytes(x, &a->val, &a->len, GSS_ECHO_MAX);
}

static inline bool_t xdr_echo_res(XDR *x, echo_res *r)
{
	return xdr_echo_arg(x, &r->data) && xdr_string(x, &r->principal, 1024);
}

#endif

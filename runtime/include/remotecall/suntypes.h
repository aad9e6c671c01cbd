/*
 * remotecall -- Sun's netobj and des_block, defined once.
 *
 * <remotecall/sunrpc.h> includes this header, and so does a header idlc generates from a .x
 * file that uses netobj or des_block (key_prot.x, nlm_prot.x, nis.x, ...): a program that
 * includes both, in either order, sees one definition of each type and of its XDR routine.
 * The shapes and the XDR routines are Sun's (<rpc/xdr.h>, <rpc/auth.h>).
 */
#ifndef REMOTECALL_SUNTYPES_H
#define REMOTECALL_SUNTYPES_H

#include <stdbool.h>
#include <stdint.h>

#include <remotecall/xdr.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A variable-length opaque object (Sun's netobj; nlm_prot.x, key_prot.x, nis.x):
 * opaque<MAX_NETOBJ_SZ> on the wire. */
typedef struct netobj {
	unsigned int n_len; /* bytes in n_bytes */
	char *n_bytes;
} netobj;
#ifndef MAX_NETOBJ_SZ
#define MAX_NETOBJ_SZ 1024
#endif
#define xdr_netobj rc_sunrpc_xdr_netobj
/* rc_sunrpc_xdr_netobj -- a netobj as opaque<1024> (MAX_NETOBJ_SZ); decode allocates n_bytes
 * when NULL (free with xdr_free(xdr_netobj, np)). */
bool rc_sunrpc_xdr_netobj(rc_xdr *xdrs, struct netobj *np);

/* An 8-byte DES key block (Sun's auth.h; key_prot.x uses it): two 32-bit halves or 8 chars,
 * coded as opaque[8]. */
typedef union des_block {
	struct {
		uint32_t high;
		uint32_t low;
	} key;
	char c[8];
} des_block;
#define xdr_des_block rc_sunrpc_xdr_des_block
/* rc_sunrpc_xdr_des_block -- a des_block as opaque[8]. Allocates nothing. */
bool rc_sunrpc_xdr_des_block(rc_xdr *xdrs, des_block *blkp);

#ifdef __cplusplus
}
#endif

#endif /* REMOTECALL_SUNTYPES_H */

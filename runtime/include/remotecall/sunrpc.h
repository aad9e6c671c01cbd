/*
 * remotecall -- Sun RPC names for remotecall (opt-in), for porting rpcgen/libtirpc programs.
 *
 * Include it (or put include/remotecall/compat first on the include path, whose rpc/rpc.h,
 * rpc/xdr.h, rpc/types.h and rpc/clnt.h include it) and the classic names map onto remotecall:
 * the XDR types and routines (XDR, bool_t, xdr_int, xdr_bytes, xdr_array, ...), the client
 * (CLIENT, clnt_create, clnt_call, clnt_destroy, clnt_control, clnt_perror, ...) and the
 * types rpcgen's %-lines use (u_int, caddr_t, rpcprog_t, struct netbuf, ...). Everything the
 * program links stays rc_-prefixed, so it may link libtirpc beside remotecall.
 *
 * Where it differs from Sun's:
 *   - bool_t is C's bool (remotecall's XDR routines return bool), TRUE and FALSE are 1 and 0;
 *   - xdrproc_t is rc_xdrproc, bool (*)(XDR *, void *): routines are cast to it as before;
 *   - xdr_long / xdr_u_long carry 32 bits, as on the wire: a long outside the 32-bit range
 *     fails to encode instead of being truncated;
 *   - CLIENT is an rc_client: clnt_call's struct timeval is the call's total timeout (it
 *     replaces the client's, 0 keeps it), and clnt_control knows CLSET/CLGET_TIMEOUT and
 *     CLSET/CLGET_RETRY_TIMEOUT only;
 *   - servers: the Sun server API (SVCXPRT, svcudp_create, svc_register, svc_run, svc_getargs,
 *     svc_sendreply, svcerr_*, pmap_set, ...) runs on one rc_server of the process (see "the
 *     server" below); a dispatch function's struct svc_req is Sun's view of the call (the rq_
 *     fields). A server may instead port to the routines idlc declares (bool proc_V_svc(const
 *     ARG *, RES *, rc_svc_req *)) and prog_V_register -- see docs/porting.md;
 *   - a Sun name remotecall does not map, where a program might use it, is a compile error
 *     naming what to do instead (RC__SUNRPC_UNMAPPED).
 */
#ifndef REMOTECALL_SUNRPC_H
#define REMOTECALL_SUNRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>  /* rpcgen -a clients expect <rpc/rpc.h> to bring stdio and stdlib */
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/types.h>

#include <remotecall/client.h>
#include <remotecall/server.h>
#include <remotecall/suntypes.h>
#include <remotecall/xdr.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef __THROW
#define __THROW /* glibc's attribute macro, used by rusers.x's %-lines */
#endif

/* ---- types -------------------------------------------------------------------------------- */

typedef bool bool_t;
/* A switch on a bool_t (rpcgen's code for a union on a bool, yp.x's ypresp_all) is what Sun
 * code does with its int bool_t: no warning for it here either. */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic ignored "-Wswitch-bool"
#endif
typedef int32_t enum_t;
typedef unsigned char u_char;
typedef unsigned short u_short;
typedef unsigned int u_int;
typedef unsigned long u_long;
typedef char *caddr_t;
typedef uint32_t u_int32_t;
typedef int64_t quad_t;
typedef uint64_t u_quad_t;
typedef uint32_t rpcprog_t, rpcvers_t, rpcproc_t, rpcprot_t, rpcport_t;
typedef int32_t rpc_inline_t;
typedef rc_xdr XDR;
typedef rc_xdrproc xdrproc_t;
typedef rc_client CLIENT;
#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif

#define xdr_op rc_xdr_op /* enum xdr_op */
#define XDR_ENCODE RC_XDR_ENCODE
#define XDR_DECODE RC_XDR_DECODE
#define XDR_FREE RC_XDR_FREE

/* A transport address (TI-RPC, rpcb_prot.x): len bytes at buf, room for maxlen. */
struct netbuf {
	unsigned int maxlen;
	unsigned int len;
	void *buf;
};

/* The request a Sun dispatch function gets: struct rc_sunrpc_svc_req below (Sun's rq_ fields).
 * idlc's routines (proc_V_svc) get remotecall's opaque rc_svc_req instead. */
#define svc_req rc_sunrpc_svc_req
#define opaque_auth rc_opaque_auth
#define authunix_parms rc_svc_unixcred
#define authsys_parms rc_svc_unixcred
#define xdr_authunix_parms rc_sunrpc_xdr_authunix_parms
#define xdr_authsys_parms rc_sunrpc_xdr_authunix_parms
/* rc_sunrpc_xdr_authunix_parms -- an AUTH_SYS credential body (RFC 5531 section 14): stamp,
 * machine name (at most 255 bytes), uid, gid, up to 16 gids. Decode allocates aup_machname and
 * aup_gids when NULL (free with xdr_free(xdr_authunix_parms, p)). */
bool rc_sunrpc_xdr_authunix_parms(rc_xdr *xdrs, struct rc_svc_unixcred *p);
#define AUTH_NONE RC_AUTH_NONE
#define AUTH_NULL RC_AUTH_NONE
#define AUTH_SYS RC_AUTH_SYS
#define AUTH_UNIX RC_AUTH_SYS
#define NULLPROC 0u

/* Sun's auth_stat (RFC 5531), for svcerr_auth. */
enum auth_stat {
	AUTH_OK = 0,
	AUTH_BADCRED = 1,
	AUTH_REJECTEDCRED = 2,
	AUTH_BADVERF = 3,
	AUTH_REJECTEDVERF = 4,
	AUTH_TOOWEAK = 5,
	AUTH_INVALIDRESP = 6,
	AUTH_FAILED = 7
};

/* netobj, xdr_netobj and MAX_NETOBJ_SZ: <remotecall/suntypes.h> (shared with idlc's headers) */

/*
 * RC__SUNRPC_UNMAPPED(msg) -- marks a Sun function remotecall does not provide: a call to it
 * (or taking its address) stops the compilation with msg.
 */
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
#define RC__SUNRPC_UNMAPPED(msg) __attribute__((unavailable(msg)))
#else
#define RC__SUNRPC_UNMAPPED(msg) __attribute__((error(msg)))
#endif

/* ---- XDR ---------------------------------------------------------------------------------- */

#define xdrmem_create rc_xdrmem_create
#define xdr_getpos rc_xdr_getpos
#define xdr_setpos rc_xdr_setpos
#define xdr_destroy(x) ((void)(x))
#define xdr_free rc_xdr_free
#define xdr_void rc_xdr_void
#define xdr_int rc_xdr_int
#define xdr_u_int rc_xdr_u_int
#define xdr_int32_t rc_xdr_int
#define xdr_u_int32_t rc_xdr_u_int
#define xdr_uint32_t rc_xdr_u_int
#define xdr_hyper rc_xdr_hyper
#define xdr_u_hyper rc_xdr_u_hyper
#define xdr_int64_t rc_xdr_hyper
#define xdr_u_int64_t rc_xdr_u_hyper
#define xdr_uint64_t rc_xdr_u_hyper
#define xdr_quad_t rc_xdr_hyper
#define xdr_u_quad_t rc_xdr_u_hyper
#define xdr_longlong_t rc_xdr_hyper
#define xdr_u_longlong_t rc_xdr_u_hyper
#define xdr_short rc_xdr_short
#define xdr_u_short rc_xdr_u_short
#define xdr_char rc_xdr_char
#define xdr_u_char rc_xdr_u_char
#define xdr_bool rc_xdr_bool
#define xdr_enum rc_xdr_enum
#define xdr_float rc_xdr_float
#define xdr_double rc_xdr_double
#define xdr_opaque rc_xdr_opaque
#define xdr_bytes rc_xdr_bytes
#define xdr_string rc_xdr_string
#define xdr_wrapstring rc_xdr_wrapstring
#define xdr_array rc_xdr_array
#define xdr_vector rc_xdr_vector
#define xdr_pointer rc_xdr_pointer
#define xdr_reference rc_xdr_reference

/* Inline access (rpcgen's fast paths): XDR_INLINE is rc_xdr_inline; the IXDR_ macros read and
 * write 32-bit big-endian units through an int32_t pointer, as Sun's. */
#define BYTES_PER_XDR_UNIT 4
#define RNDUP(x) ((((x) + BYTES_PER_XDR_UNIT - 1) / BYTES_PER_XDR_UNIT) * BYTES_PER_XDR_UNIT)
#define XDR_INLINE(xdrs, len) rc_sunrpc_xdr_inline((xdrs), (size_t)(len))
/* rc_sunrpc_xdr_inline -- XDR_INLINE: rc_xdr_inline's pointer as int32_t *, or NULL (the
 * caller then codes field by field, as it must be ready to) when the stream's position is
 * not 4-byte aligned -- a record a peer sent with a length that is not a multiple of 4, say:
 * rpcgen's inline code loads and stores int32_t through it. */
static inline int32_t *rc_sunrpc_xdr_inline(rc_xdr *xdrs, size_t len)
{
	if (((uintptr_t)xdrs->x_pos & 3u) != 0)
		return NULL;
	return (int32_t *)rc_xdr_inline(xdrs, len);
}
#define xdr_inline XDR_INLINE
#define IXDR_GET_INT32(buf) ((int32_t)ntohl((uint32_t)*(buf)++))
#define IXDR_PUT_INT32(buf, v) (*(buf)++ = (int32_t)htonl((uint32_t)(v)))
#define IXDR_GET_U_INT32(buf) ((uint32_t)IXDR_GET_INT32(buf))
#define IXDR_PUT_U_INT32(buf, v) IXDR_PUT_INT32((buf), (int32_t)(v))
#define IXDR_GET_LONG(buf) ((long)IXDR_GET_INT32(buf))
#define IXDR_PUT_LONG(buf, v) IXDR_PUT_INT32((buf), (int32_t)(v))
#define IXDR_GET_U_LONG(buf) ((u_long)IXDR_GET_U_INT32(buf))
#define IXDR_PUT_U_LONG(buf, v) IXDR_PUT_INT32((buf), (int32_t)(uint32_t)(v))
#define IXDR_GET_BOOL(buf) ((bool_t)(IXDR_GET_INT32(buf) != 0))
#define IXDR_PUT_BOOL(buf, v) IXDR_PUT_INT32((buf), (v) ? 1 : 0)
#define IXDR_GET_ENUM(buf, t) ((t)IXDR_GET_INT32(buf))
#define IXDR_PUT_ENUM(buf, v) IXDR_PUT_INT32((buf), (int32_t)(v))
#define IXDR_GET_SHORT(buf) ((short)IXDR_GET_INT32(buf))
#define IXDR_PUT_SHORT(buf, v) IXDR_PUT_INT32((buf), (int32_t)(v))
#define IXDR_GET_U_SHORT(buf) ((u_short)IXDR_GET_INT32(buf))
#define IXDR_PUT_U_SHORT(buf, v) IXDR_PUT_INT32((buf), (int32_t)(v))

#define xdr_long rc_sunrpc_xdr_long
#define xdr_u_long rc_sunrpc_xdr_u_long
#define xdr_netbuf rc_sunrpc_xdr_netbuf
/* TI-RPC's typedefs used as .x types (rpcb_prot.x): unsigned 32-bit ints on the wire */
#define xdr_rpcprog_t rc_xdr_u_int
#define xdr_rpcvers_t rc_xdr_u_int
#define xdr_rpcproc_t rc_xdr_u_int
#define xdr_rpcprot_t rc_xdr_u_int
#define xdr_rpcport_t rc_xdr_u_int

/* des_block and xdr_des_block: <remotecall/suntypes.h> */
#define MAXNETNAMELEN 255 /* a network user's name (key_prot.x), as Sun's auth.h */

/*
 * rc_sunrpc_xdr_long / rc_sunrpc_xdr_u_long -- a C long (unsigned long) as an XDR int
 * (unsigned int): 32 bits on the wire. Encoding a value outside that range fails (returns
 * false) instead of truncating. No memory is allocated.
 */
bool rc_sunrpc_xdr_long(rc_xdr *xdrs, long *lp);
bool rc_sunrpc_xdr_u_long(rc_xdr *xdrs, unsigned long *ulp);

/*
 * rc_sunrpc_xdr_netbuf -- struct netbuf as TI-RPC puts it on the wire: maxlen, then the
 * len bytes at buf as opaque<maxlen>. Decode allocates buf when it is NULL (free with
 * xdr_free(xdr_netbuf, nb)); a decoded buffer over 64 KiB fails.
 */
bool rc_sunrpc_xdr_netbuf(rc_xdr *xdrs, struct netbuf *nb);

/* ---- the client ---------------------------------------------------------------------------- */

/* Sun's call statuses, with Sun's values (clnt_stat.h). */
enum clnt_stat {
	RPC_SUCCESS = 0,
	RPC_CANTENCODEARGS = 1,
	RPC_CANTDECODERES = 2,
	RPC_CANTSEND = 3,
	RPC_CANTRECV = 4,
	RPC_TIMEDOUT = 5,
	RPC_VERSMISMATCH = 6,
	RPC_AUTHERROR = 7,
	RPC_PROGUNAVAIL = 8,
	RPC_PROGVERSMISMATCH = 9,
	RPC_PROCUNAVAIL = 10,
	RPC_CANTDECODEARGS = 11,
	RPC_SYSTEMERROR = 12,
	RPC_UNKNOWNHOST = 13,
	RPC_RPCBFAILURE = 14,
	RPC_PROGNOTREGISTERED = 15,
	RPC_FAILED = 16,
	RPC_UNKNOWNPROTO = 17,
	RPC_INTR = 18,
	RPC_UNKNOWNADDR = 19,
	RPC_INPROGRESS = 24
};
#define RPC_PMAPFAILURE RPC_RPCBFAILURE

#define RPC_ANYSOCK (-1) /* clntudp_create / clnttcp_create: any socket (remotecall's own) */

/*
 * Credentials, Sun's way: an AUTH object made by authsys_create_default (authunix_...),
 * authsys_create or authnone_create, put in clnt->cl_auth; clnt_call sends it from then on.
 * clnt_create and friends start a client with authnone_create()'s (the native default,
 * AUTH_NONE); a native rc_client's cl_auth is NULL, which leaves its credentials as
 * rc_client_set_auth_sys / _none set them. An AUTH is read when clnt_call sees a different
 * one (or another made at the same address): set cl_auth before calls, not during one.
 * auth_destroy frees one (never the client's: destroy the one you replace, as with
 * libtirpc). Calls through idlc's stubs do not pass through clnt_call: give those clients
 * rc_client_set_auth_sys (docs/porting.md).
 */
typedef struct rc_sunrpc_auth {
	struct rc_opaque_auth ah_cred; /* flavor and body as sent (the body is rc_cred below) */
	struct rc_opaque_auth ah_verf; /* AUTH_NONE */
	des_block ah_key;              /* unused (no AUTH_DES) */
	const void *ah_ops;            /* NULL: remotecall's AUTHs have no method table */
	void *ah_private;              /* NULL */
	/* private */
	uint64_t rc_id;                /* unique per AUTH made in this process */
	uint32_t rc_uid, rc_gid, rc_ngids, rc_gids[16];
	char rc_machine[256];
	unsigned char rc_cred[400];    /* the credential body */
} AUTH;

/* The part of an rc_client that Sun code sees (the struct in runtime/client/common.h begins
 * with these): the AUTH clnt_call sends, and which one it last applied. */
struct rc_client {
	AUTH *cl_auth;
	uint64_t rc_auth_id;
	/* the rest is remotecall's */
};

/*
 * rc_sunrpc_authunix_create -- authunix_create / authsys_create: AUTH_SYS with machine (at
 * most 255 bytes), uid, gid and the first len (at most 16 are sent) of gids; the time stamp
 * is now. rc_sunrpc_authunix_create_default -- authsys_create_default /
 * authunix_create_default: this host's name, the effective uid and gid and the supplementary
 * groups (the first 16). rc_sunrpc_authnone_create -- authnone_create: AUTH_NONE (one shared
 * object; auth_destroy leaves it). Each returns a new AUTH the caller frees with
 * auth_destroy, or NULL (out of memory, a machine name over 255 bytes, len < 0) with
 * rpc_createerr set.
 */
AUTH *rc_sunrpc_authunix_create(const char *machine, int uid, int gid, int len,
                                const int *gids);
AUTH *rc_sunrpc_authunix_create_default(void);
AUTH *rc_sunrpc_authnone_create(void);
/* rc_sunrpc_auth_destroy -- auth_destroy / AUTH_DESTROY: free auth (NULL and the shared
 * AUTH_NONE are left alone). */
void rc_sunrpc_auth_destroy(AUTH *auth);
#define authunix_create(m, u, g, l, gs) rc_sunrpc_authunix_create((m), (u), (g), (l), (gs))
#define authsys_create(m, u, g, l, gs) rc_sunrpc_authunix_create((m), (u), (g), (l), (gs))
#define authunix_create_default rc_sunrpc_authunix_create_default
#define authsys_create_default rc_sunrpc_authunix_create_default
#define authnone_create rc_sunrpc_authnone_create
#define auth_destroy rc_sunrpc_auth_destroy
#define AUTH_DESTROY rc_sunrpc_auth_destroy
AUTH *rc_sunrpc_authdes_seccreate(const char *name, u_int window, const char *host,
                                  const des_block *key) RC__SUNRPC_UNMAPPED(
	"authdes_seccreate/authdes_create: AUTH_DES (56-bit DES, broken) is not provided; "
	"use RPC-over-TLS (rc_client_create_tls, docs/runtime.md) or AUTH_SYS (authsys_create)");
#define authdes_seccreate rc_sunrpc_authdes_seccreate
#define authdes_create(n, w, a, k) rc_sunrpc_authdes_seccreate((n), (w), NULL, (k))

/*
 * Broadcast through rpcbind, as libtirpc: rc_sunrpc_clnt_broadcast -- clnt_broadcast calls
 * procedure proc of (prog, vers) on every host of every local network: one UDP call to
 * rpcbind (port 111, PMAP version 2, CALLIT) at each interface's IPv4 broadcast address,
 * which forwards it to the program where it is registered over UDP (hosts without it stay
 * silent; Debian's rpcbind forwards only when started with -r). Each reply's result is
 * decoded by xresults into *resultsp and handed to eachresult(resultsp, addr) -- addr the
 * responder's address with the program's port -- on the calling thread, once per responder;
 * what decoding allocated is freed after eachresult returns (copy what you keep). The call
 * is sent again after 4 s; it ends when eachresult returns TRUE (RPC_SUCCESS) or after 12 s
 * (RPC_TIMEDOUT, however many replies came). rc_sunrpc_rpc_broadcast -- rpc_broadcast: the
 * same, eachresult(resultsp, netbuf, netconfig), for nettype NULL, "udp", "netpath",
 * "visible", "datagram_v" or "datagram_n" (IPv4 only: others give RPC_UNKNOWNPROTO);
 * rc_sunrpc_rpc_broadcast_exp -- rpc_broadcast_exp: resent after inittime ms, then after
 * each doubled wait while it stays within waittime ms. AUTH_NONE credentials. Other
 * statuses: RPC_CANTENCODEARGS (arguments over 8800 bytes encoded, or not encodable),
 * RPC_CANTSEND (no interface can broadcast), RPC_CANTRECV, RPC_SYSTEMERROR (no memory).
 */
struct netconfig;
typedef bool_t (*resultproc_t)(caddr_t resp, struct sockaddr_in *raddr);
typedef bool_t (*rc_sunrpc_rpcresult)(caddr_t resp, const struct netbuf *raddr,
                                      const struct netconfig *nconf);
enum clnt_stat rc_sunrpc_clnt_broadcast(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc,
                                        xdrproc_t xargs, void *argsp, xdrproc_t xresults,
                                        void *resultsp, resultproc_t eachresult);
enum clnt_stat rc_sunrpc_rpc_broadcast_exp(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc,
                                           xdrproc_t xargs, void *argsp, xdrproc_t xresults,
                                           void *resultsp, rc_sunrpc_rpcresult eachresult,
                                           int inittime, int waittime, const char *nettype);
#define clnt_broadcast(p, v, pr, xa, a, xr, r, each)                                         \
	rc_sunrpc_clnt_broadcast((p), (v), (pr), (xdrproc_t)(xa), (void *)(a), (xdrproc_t)(xr),  \
	                         (void *)(r), (resultproc_t)(each))
#define rpc_broadcast_exp(p, v, pr, xa, a, xr, r, each, it, wt, nt)                          \
	rc_sunrpc_rpc_broadcast_exp((p), (v), (pr), (xdrproc_t)(xa), (void *)(a),               \
	                            (xdrproc_t)(xr), (void *)(r), (rc_sunrpc_rpcresult)(each),  \
	                            (it), (wt), (nt))
#define rpc_broadcast(p, v, pr, xa, a, xr, r, each, nt)                                      \
	rpc_broadcast_exp((p), (v), (pr), (xa), (a), (xr), (r), (each), 4000, 8000, (nt))

#define CLSET_TIMEOUT 1
#define CLGET_TIMEOUT 2
#define CLSET_RETRY_TIMEOUT 4
#define CLGET_RETRY_TIMEOUT 5

/* rc_sunrpc_stat -- the clnt_stat of an rc_status (RPC_FAILED for those Sun has no name for). */
enum clnt_stat rc_sunrpc_stat(rc_status st);

/*
 * rc_sunrpc_clnt_create -- clnt_create(host, prog, vers, nettype): a client for the program
 * at host, its port asked of host's rpcbind. nettype "udp", "tcp", "udp6", "tcp6" (host
 * resolved to IPv6), "netpath" / "visible" (udp, tcp, udp6, tcp6 in turn until one gives a
 * client), "circuit_v" / "circuit_n" (tcp, tcp6), "datagram_v" / "datagram_n" (udp, udp6),
 * or "unix" (host is the socket's path). Returns the client (destroy with clnt_destroy), or
 * NULL with the reason in rpc_createerr (this thread) for clnt_pcreateerror.
 */
CLIENT *rc_sunrpc_clnt_create(const char *host, rpcprog_t prog, rpcvers_t vers,
                              const char *proto);

/* Sun's detail of a failed call (clnt_geterr) or creation (rpc_createerr). */
struct rpc_err {
	enum clnt_stat re_status;
	union {
		int RE_errno;
		enum auth_stat RE_why;
		struct {
			uint32_t low;
			uint32_t high;
		} RE_vers;
		struct {
			int32_t s1;
			int32_t s2;
		} RE_lb;
	} ru;
};
#define re_errno ru.RE_errno
#define re_why ru.RE_why
#define re_vers ru.RE_vers
#define re_lb ru.RE_lb

/* rpc_createerr: why the last clnt_create / clntudp_create / clnttcp_create of this thread
 * failed: cf_stat, and in cf_error the rpcbind call's status (RPC_PMAPFAILURE) or errno. */
struct rc_sunrpc_rpc_createerr { /* Sun's struct rpc_createerr */
	enum clnt_stat cf_stat;
	struct rpc_err cf_error;
};
/* rc_sunrpc_createerr -- this thread's rpc_createerr (never NULL). */
struct rc_sunrpc_rpc_createerr *rc_sunrpc_createerr(void);
#define rpc_createerr (*rc_sunrpc_createerr())

/* rc_sunrpc_clnt_geterr -- clnt_geterr: the last call's detail on this thread. */
void rc_sunrpc_clnt_geterr(CLIENT *clnt, struct rpc_err *err);
#define clnt_geterr rc_sunrpc_clnt_geterr

/*
 * rc_sunrpc_clntudp_create / rc_sunrpc_clnttcp_create -- clntudp_create and clnttcp_create:
 * a client for raddr (IPv4); port 0 asks the host's rpcbind. wait is the UDP retransmission
 * interval; *sockp, sendsz and recvsz are accepted and ignored (remotecall owns its socket;
 * *sockp is set to -1). NULL on failure, as rc_sunrpc_clnt_create.
 */
CLIENT *rc_sunrpc_clntudp_create(const struct sockaddr_in *raddr, rpcprog_t prog,
                                 rpcvers_t vers, struct timeval wait, int *sockp);
CLIENT *rc_sunrpc_clnttcp_create(const struct sockaddr_in *raddr, rpcprog_t prog,
                                 rpcvers_t vers, int *sockp, u_int sendsz, u_int recvsz);

/*
 * rc_sunrpc_clnt_call -- clnt_call: procedure proc with arguments in (coded by inproc) and
 * results into out (decoded by outproc; what decoding allocated is the caller's, released with
 * xdr_free(outproc, out)). A non-zero timeout becomes the client's total timeout. Returns the
 * call's clnt_stat; the detail stays for clnt_perror / clnt_sperror.
 */
enum clnt_stat rc_sunrpc_clnt_call(CLIENT *clnt, rpcproc_t proc, xdrproc_t inproc, void *in,
                                   xdrproc_t outproc, void *out, struct timeval timeout);

/*
 * rc_sunrpc_clnt_control -- clnt_control for CLSET_TIMEOUT / CLGET_TIMEOUT (the total
 * timeout) and CLSET_RETRY_TIMEOUT / CLGET_RETRY_TIMEOUT (UDP retransmission), info a struct
 * timeval *. Returns true, or false for another request or a NULL argument.
 */
bool rc_sunrpc_clnt_control(CLIENT *clnt, u_int request, void *info);

/*
 * rc_sunrpc_clnt_sperror -- clnt_sperror in libtirpc's words: "s: RPC: Procedure unavailable",
 * with libtirpc's detail ("; errno = ...", "; low version = 1, high version = 2", "; why =
 * ...") for the client's last call on this thread, in a thread-local buffer (overwritten by
 * the next call of it); rc_sunrpc_clnt_perror prints it on stderr with a newline.
 */
char *rc_sunrpc_clnt_sperror(CLIENT *clnt, const char *s);
void rc_sunrpc_clnt_perror(CLIENT *clnt, const char *s);

/*
 * rc_sunrpc_clnt_spcreateerror / rc_sunrpc_clnt_pcreateerror -- the same for rpc_createerr
 * ("s: RPC: Program not registered", "s: RPC: Port mapper failure - RPC: Unable to receive").
 * rc_sunrpc_clnt_sperrno: libtirpc's text of a clnt_stat (static).
 */
char *rc_sunrpc_clnt_spcreateerror(const char *s);
void rc_sunrpc_clnt_pcreateerror(const char *s);
const char *rc_sunrpc_clnt_sperrno(enum clnt_stat st);

#define clnt_create rc_sunrpc_clnt_create
#define clntudp_create rc_sunrpc_clntudp_create
#define clnttcp_create rc_sunrpc_clnttcp_create
#define clnt_call(c, proc, xin, in, xout, out, tmo)                                         \
	rc_sunrpc_clnt_call((c), (proc), (xdrproc_t)(xin), (void *)(in), (xdrproc_t)(xout),    \
	                    (void *)(out), (tmo))
#define clnt_control rc_sunrpc_clnt_control
#define clnt_destroy rc_client_destroy
/* rc_sunrpc_clnt_freeres -- clnt_freeres: release what decoding a call's results allocated
 * (xdr_free(xres, res)); TRUE. */
static inline bool rc_sunrpc_clnt_freeres(CLIENT *clnt, xdrproc_t xres, void *res)
{
	(void)clnt;
	rc_xdr_free(xres, res);
	return true;
}
#define clnt_freeres(c, xres, res) rc_sunrpc_clnt_freeres((c), (xdrproc_t)(xres), (void *)(res))
#define clnt_perror rc_sunrpc_clnt_perror
#define clnt_sperror rc_sunrpc_clnt_sperror
#define clnt_pcreateerror rc_sunrpc_clnt_pcreateerror
#define clnt_spcreateerror rc_sunrpc_clnt_spcreateerror
#define clnt_sperrno rc_sunrpc_clnt_sperrno


/* ---- the server ------------------------------------------------------------------------------ */

/*
 * The Sun server API runs on one rc_server of the process, made by the first svc*_create (or
 * svc_create / svc_tp_create). Each SVCXPRT is one of its listeners: svcudp_create and
 * svctcp_create listen on 0.0.0.0 (IPv4, any port), netids udp6/tcp6 on [::]. svc_register
 * (svc_reg) gives a (program, version) a dispatch function, which serves every procedure:
 * svc_getargs, svc_sendreply, svcerr_* answer the call being dispatched on this thread. A
 * second registration of one (program, version) must name the same dispatch function. The
 * call is answered once the dispatch function returns; one it leaves unanswered gets no reply.
 * Datagram calls pass through remotecall's duplicate request cache (at most once).
 *
 * Differences: a transport remotecall opened has xp_sock -1 (one made from the caller's
 * socket -- svcudp_create(fd), svcfd_create -- has that socket); svc_fdset holds one
 * descriptor (the server's epoll set), and svc_getreqset serves whatever is ready.
 */
typedef struct rc_sunrpc_xprt {
	int xp_sock;      /* the caller's socket it was made from, else -1 */
	u_short xp_port;  /* the port it listens on (host order) */
	/* private */
	char xp_netid[8]; /* "udp", "tcp", "udp6", "tcp6", "unix" */
	char xp_uri[128]; /* what rc_server_listen bound */
} SVCXPRT;

/* struct svc_req: the call being dispatched as Sun's dispatch functions see it, valid while
 * the dispatch function runs. */
struct rc_sunrpc_svc_req {
	rpcprog_t rq_prog;              /* program, version and procedure called */
	rpcvers_t rq_vers;
	rpcproc_t rq_proc;
	struct rc_opaque_auth rq_cred;  /* the raw credential */
	void *rq_clntcred;              /* AUTH_SYS: a struct authunix_parms *, else NULL */
	SVCXPRT *rq_xprt;               /* the first transport of the call's kind (datagram or
	                                   stream) its program was registered on */
};

/* A dispatch function (svc_register): serves one call of its (program, version). */
typedef void (*rc_sunrpc_dispatch)(struct rc_sunrpc_svc_req *rqstp, SVCXPRT *xprt);

/* TI-RPC's transport description, as svc_tp_create, svc_reg and rpcb_set take it. remotecall
 * knows the netids udp, tcp, udp6 and tcp6 (getnetconfigent). */
struct netconfig {
	char *nc_netid;
	unsigned long nc_semantics; /* NC_TPI_CLTS (datagram) or NC_TPI_COTS_ORD (stream) */
	unsigned long nc_flag;
	char *nc_protofmly;         /* "inet" or "inet6" */
	char *nc_proto;             /* "udp" or "tcp" */
	char *nc_device;
	unsigned long nc_nlookups;
	char **nc_lookups;
	unsigned long nc_unused[8];
};
#define NC_TPI_CLTS 1
#define NC_TPI_COTS 2
#define NC_TPI_COTS_ORD 3
#define NC_VISIBLE 01

/* rc_sunrpc_getnetconfigent -- getnetconfigent: the static description of netid (udp, tcp,
 * udp6, tcp6), or NULL. rc_sunrpc_freenetconfigent does nothing (the entries are static). */
struct netconfig *rc_sunrpc_getnetconfigent(const char *netid);
void rc_sunrpc_freenetconfigent(struct netconfig *nc);

/*
 * rc_sunrpc_svcudp_create / rc_sunrpc_svctcp_create -- svcudp_create, svctcp_create,
 * svcudp_bufcreate: a listener of the process's server: with RPC_ANYSOCK a new socket on
 * 0.0.0.0, any port (xp_port; xp_sock -1); else the caller's datagram (stream) socket sock,
 * bound to any port first if it is not bound (rc_server_listen_fd; xp_sock is sock). The
 * buffer sizes are ignored (remotecall's limits: rc_server_set_limits). The SVCXPRT lives
 * until svc_destroy. NULL on failure (a message on stderr).
 */
SVCXPRT *rc_sunrpc_svcudp_create(int sock);
SVCXPRT *rc_sunrpc_svctcp_create(int sock, u_int sendsz, u_int recvsz);
/* rc_sunrpc_svcfd_create -- svcfd_create / svc_fd_create: serve fd, a connected stream socket
 * (inetd's descriptor 0, say), as one connection -- or a listening one as a listener.
 * svc_dg_create / svc_vc_create (TI-RPC) are svcudp_create / svctcp_create of fd. With a
 * socket of the caller's the server owns it from then on (xp_sock is it); NULL (fd still
 * the caller's, a message on stderr) when it is not a socket of the right type or cannot be
 * served. */
SVCXPRT *rc_sunrpc_svcfd_create(int fd, u_int sendsz, u_int recvsz);
/* rc_sunrpc_svc_tp_create -- svc_tp_create: a listener for nc's netid, registered with
 * svc_reg (and rpcbind). NULL on failure. */
SVCXPRT *rc_sunrpc_svc_tp_create(rc_sunrpc_dispatch dispatch, rpcprog_t prog, rpcvers_t vers,
                                 const struct netconfig *nc);
/* rc_sunrpc_svc_create -- svc_create: listeners for nettype (NULL, "netpath", "visible":
 * udp, tcp, udp6, tcp6; "circuit_v", "circuit_n", "tcp": the stream ones; "datagram_v",
 * "datagram_n", "udp": the datagram ones; or one netid), each registered with svc_reg.
 * Returns how many were made (0 on failure). */
int rc_sunrpc_svc_create(rc_sunrpc_dispatch dispatch, rpcprog_t prog, rpcvers_t vers,
                         const char *nettype);
/* rc_sunrpc_svc_destroy -- svc_destroy: close xprt's listener and socket (a running server,
 * inside svc_run, keeps it open until svc_run returns) and free xprt. A connection made by
 * svcfd_create stays open until its peer closes it. */
void rc_sunrpc_svc_destroy(SVCXPRT *xprt);

/*
 * rc_sunrpc_svc_register -- svc_register: serve (prog, vers) with dispatch; protocol
 * IPPROTO_UDP or IPPROTO_TCP also registers xprt's port with the local rpcbind (pmap_set),
 * 0 does not. rc_sunrpc_svc_reg -- svc_reg: the same, registered with rpcbind as xprt's netid
 * and address when nc is not NULL. Not while svc_run runs. Returns true, or false (a
 * different dispatch function for (prog, vers), no server, rpcbind refused).
 */
bool rc_sunrpc_svc_register(SVCXPRT *xprt, rpcprog_t prog, rpcvers_t vers,
                            rc_sunrpc_dispatch dispatch, int protocol);
bool rc_sunrpc_svc_reg(SVCXPRT *xprt, rpcprog_t prog, rpcvers_t vers,
                       rc_sunrpc_dispatch dispatch, const struct netconfig *nc);
/* rc_sunrpc_svc_unregister / rc_sunrpc_svc_unreg -- stop serving (prog, vers) and remove its
 * rpcbind registrations (every netid). */
void rc_sunrpc_svc_unregister(rpcprog_t prog, rpcvers_t vers);

/*
 * In a dispatch function, about the call being dispatched on this thread (xprt is not
 * consulted): rc_sunrpc_svc_getargs decodes its arguments into *args (what decoding allocated
 * is released with svc_freeargs / xdr_free); rc_sunrpc_svc_freeargs frees them;
 * rc_sunrpc_svc_sendreply answers SUCCESS with *res coded by xres (res stays the caller's;
 * it may be static). Each returns true, or false outside a dispatch or when coding failed.
 */
bool rc_sunrpc_svc_getargs(SVCXPRT *xprt, xdrproc_t xargs, void *args);
bool rc_sunrpc_svc_freeargs(SVCXPRT *xprt, xdrproc_t xargs, void *args);
bool rc_sunrpc_svc_sendreply(SVCXPRT *xprt, xdrproc_t xres, void *res);

/* The error replies: PROC_UNAVAIL, GARBAGE_ARGS, SYSTEM_ERR, PROG_UNAVAIL, PROG_MISMATCH
 * (lo..hi), AUTH_ERROR (why), AUTH_ERROR AUTH_TOOWEAK. Nothing outside a dispatch. */
void rc_sunrpc_svcerr_noproc(SVCXPRT *xprt);
void rc_sunrpc_svcerr_decode(SVCXPRT *xprt);
void rc_sunrpc_svcerr_systemerr(SVCXPRT *xprt);
void rc_sunrpc_svcerr_noprog(SVCXPRT *xprt);
void rc_sunrpc_svcerr_progvers(SVCXPRT *xprt, rpcvers_t lo, rpcvers_t hi);
void rc_sunrpc_svcerr_auth(SVCXPRT *xprt, enum auth_stat why);
void rc_sunrpc_svcerr_weakauth(SVCXPRT *xprt);

/* rc_sunrpc_svc_getcaller -- svc_getcaller: the caller of the call being dispatched on this
 * thread (a struct sockaddr_in, or a sockaddr_in6 behind the pointer for an IPv6 caller; a
 * sockaddr_un on a unix socket; the datagram's sender or the connection's peer); rc_sunrpc_svc_getrpccaller -- svc_getrpccaller: the same as a netbuf.
 * Thread-local storage, overwritten by the next call. */
struct sockaddr_in *rc_sunrpc_svc_getcaller(SVCXPRT *xprt);
struct netbuf *rc_sunrpc_svc_getrpccaller(SVCXPRT *xprt);

/* rc_sunrpc_svc_run -- svc_run: serve until svc_exit (returns only then, or on an error).
 * rc_sunrpc_svc_exit -- svc_exit: make svc_run return (async-signal-safe); the server stays
 * stopped (Sun's svc_exit destroys every transport): svc_run and svc_getreqset serve nothing
 * afterwards. */
void rc_sunrpc_svc_run(void);
void rc_sunrpc_svc_exit(void);

/* svc_fdset / svc_maxfd: the descriptors to wait on for the application's own select loop
 * (one: the server's epoll set); svc_getreqset(fds) serves what is ready when it is in fds;
 * svc_getreq_common(fd) likewise for that descriptor. */
fd_set *rc_sunrpc_svc_fdset(void);
int rc_sunrpc_svc_maxfd(void);
void rc_sunrpc_svc_getreqset(fd_set *fds);
void rc_sunrpc_svc_getreq_common(int fd);

/*
 * rc_sunrpc_pmap_set -- pmap_set: register (prog, vers, protocol IPPROTO_UDP/TCP, port) with
 * the local rpcbind; rc_sunrpc_pmap_unset -- pmap_unset: remove every registration of (prog,
 * vers). rc_sunrpc_rpcb_set -- rpcb_set: register nc's netid at the universal address of
 * addr (a sockaddr_in/in6 in a netbuf); rc_sunrpc_rpcb_unset -- rpcb_unset: remove (prog,
 * vers) for nc's netid, or every netid when nc is NULL. Each returns true when rpcbind
 * agreed, false otherwise (unreachable, refused, unknown netid).
 */
bool rc_sunrpc_pmap_set(rpcprog_t prog, rpcvers_t vers, int protocol, u_short port);
bool rc_sunrpc_pmap_unset(rpcprog_t prog, rpcvers_t vers);
bool rc_sunrpc_rpcb_set(rpcprog_t prog, rpcvers_t vers, const struct netconfig *nc,
                        const struct netbuf *addr);
bool rc_sunrpc_rpcb_unset(rpcprog_t prog, rpcvers_t vers, const struct netconfig *nc);

#define getnetconfigent rc_sunrpc_getnetconfigent
#define freenetconfigent rc_sunrpc_freenetconfigent
#define svcudp_create rc_sunrpc_svcudp_create
#define svcudp_bufcreate(sock, s, r) rc_sunrpc_svcudp_create(sock)
#define svctcp_create rc_sunrpc_svctcp_create
#define svc_create rc_sunrpc_svc_create
#define svc_tp_create rc_sunrpc_svc_tp_create
#define svc_destroy rc_sunrpc_svc_destroy
#define svcfd_create rc_sunrpc_svcfd_create
#define svc_fd_create rc_sunrpc_svcfd_create
#define svc_dg_create(fd, s, r) rc_sunrpc_svcudp_create(fd)
#define svc_vc_create(fd, s, r) rc_sunrpc_svctcp_create((fd), (s), (r))
#define svc_register(x, p, v, d, proto)                                                      \
	rc_sunrpc_svc_register((x), (p), (v), (rc_sunrpc_dispatch)(d), (proto))
#define svc_reg(x, p, v, d, nc) rc_sunrpc_svc_reg((x), (p), (v), (rc_sunrpc_dispatch)(d), (nc))
#define svc_unregister rc_sunrpc_svc_unregister
#define svc_unreg rc_sunrpc_svc_unregister
#define svc_getargs(x, xa, a) rc_sunrpc_svc_getargs((x), (xdrproc_t)(xa), (void *)(a))
#define svc_freeargs(x, xa, a) rc_sunrpc_svc_freeargs((x), (xdrproc_t)(xa), (void *)(a))
#define svc_sendreply(x, xr, r) rc_sunrpc_svc_sendreply((x), (xdrproc_t)(xr), (void *)(r))
#define svcerr_noproc rc_sunrpc_svcerr_noproc
#define svcerr_decode rc_sunrpc_svcerr_decode
#define svcerr_systemerr rc_sunrpc_svcerr_systemerr
#define svcerr_noprog rc_sunrpc_svcerr_noprog
#define svcerr_progvers rc_sunrpc_svcerr_progvers
#define svcerr_auth rc_sunrpc_svcerr_auth
#define svcerr_weakauth rc_sunrpc_svcerr_weakauth
#define svc_getcaller rc_sunrpc_svc_getcaller
#define svc_getrpccaller rc_sunrpc_svc_getrpccaller
#define svc_run rc_sunrpc_svc_run
#define svc_exit rc_sunrpc_svc_exit
#define svc_fdset (*rc_sunrpc_svc_fdset())
#define svc_maxfd (rc_sunrpc_svc_maxfd())
#define svc_getreqset rc_sunrpc_svc_getreqset
#define svc_getreq_common rc_sunrpc_svc_getreq_common
#define pmap_set rc_sunrpc_pmap_set
#define pmap_unset rc_sunrpc_pmap_unset
#define rpcb_set rc_sunrpc_rpcb_set
#define rpcb_unset rc_sunrpc_rpcb_unset

/* Sun names remotecall does not provide: a use is a compile error saying why. */

#ifdef __cplusplus
}
#endif

#endif

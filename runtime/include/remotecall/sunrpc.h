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
 *   - servers: remotecall has no SVCXPRT dispatch functions. A server ports to the routines
 *     idlc declares (bool proc_V_svc(const ARG *, RES *, struct svc_req *)) and registers the
 *     program with prog_V_register -- see docs/porting.md.
 */
#ifndef REMOTECALL_SUNRPC_H
#define REMOTECALL_SUNRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/types.h>

#include <remotecall/client.h>
#include <remotecall/server.h>
#include <remotecall/xdr.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef __THROW
#define __THROW /* glibc's attribute macro, used by rusers.x's %-lines */
#endif

/* ---- types -------------------------------------------------------------------------------- */

typedef bool bool_t;
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

/* The request a server routine gets (the last parameter of idlc's proc_V_svc). */
#define svc_req rc_svc_req

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
#define xdr_long rc_sunrpc_xdr_long
#define xdr_u_long rc_sunrpc_xdr_u_long
#define xdr_netbuf rc_sunrpc_xdr_netbuf

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

#define CLSET_TIMEOUT 1
#define CLGET_TIMEOUT 2
#define CLSET_RETRY_TIMEOUT 4
#define CLGET_RETRY_TIMEOUT 5

/* rc_sunrpc_stat -- the clnt_stat of an rc_status (RPC_FAILED for those Sun has no name for). */
enum clnt_stat rc_sunrpc_stat(rc_status st);

/*
 * rc_sunrpc_clnt_create -- clnt_create(host, prog, vers, "udp" | "tcp" | "unix"): a client
 * for the program at host, its port asked of host's rpcbind (for "unix", host is the socket's
 * path). Returns the client (destroy with clnt_destroy), or NULL with the reason kept for
 * clnt_pcreateerror / clnt_spcreateerror (this thread).
 */
CLIENT *rc_sunrpc_clnt_create(const char *host, rpcprog_t prog, rpcvers_t vers,
                              const char *proto);

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
 * rc_sunrpc_clnt_sperror -- clnt_sperror: "s: what went wrong" for the client's last failed
 * call on this thread, in a static buffer (overwritten by the next call of it);
 * rc_sunrpc_clnt_perror prints it on stderr with a newline.
 */
char *rc_sunrpc_clnt_sperror(CLIENT *clnt, const char *s);
void rc_sunrpc_clnt_perror(CLIENT *clnt, const char *s);

/*
 * rc_sunrpc_clnt_spcreateerror / rc_sunrpc_clnt_pcreateerror -- the same for the last client
 * creation that failed on this thread. rc_sunrpc_clnt_sperrno: the text of a clnt_stat
 * (static).
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
#define clnt_perror rc_sunrpc_clnt_perror
#define clnt_sperror rc_sunrpc_clnt_sperror
#define clnt_pcreateerror rc_sunrpc_clnt_pcreateerror
#define clnt_spcreateerror rc_sunrpc_clnt_spcreateerror
#define clnt_sperrno rc_sunrpc_clnt_sperrno

#ifdef __cplusplus
}
#endif

#endif

/*
 * The Sun RPC compatibility layer (<remotecall/sunrpc.h>): the routines behind the classic
 * names that are not a plain rename.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <netdb.h>
#include <strings.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <stdatomic.h>

#include "runtime/sun/sunrpc_gss_int.h" /* (before the Sun names) */
#include <remotecall/sunrpc.h>

#include "runtime/core/rpc.h"

/* Sun's xdr_long / xdr_u_long: the library's rc_xdr_long / rc_xdr_u_long. */
bool rc_sunrpc_xdr_long(rc_xdr *xdrs, long *lp)
{
	return rc_xdr_long(xdrs, lp);
}

bool rc_sunrpc_xdr_u_long(rc_xdr *xdrs, unsigned long *ulp)
{
	return rc_xdr_u_long(xdrs, ulp);
}

#define RC__NETBUF_MAX 65536u

bool rc_sunrpc_xdr_netbuf(rc_xdr *xdrs, struct netbuf *nb)
{
	uint32_t maxlen = nb->maxlen, len = nb->len;
	char *buf = nb->buf;

	if (!rc_xdr_u_int(xdrs, &maxlen))
		return false;
	if (xdrs->x_op == RC_XDR_DECODE && maxlen > RC__NETBUF_MAX)
		return false;
	nb->maxlen = maxlen;
	if (!rc_xdr_bytes(xdrs, &buf, &len, maxlen)) {
		nb->buf = buf;
		return false;
	}
	nb->buf = buf;
	nb->len = len;
	return true;
}

enum clnt_stat rc_sunrpc_stat(rc_status st)
{
	switch (st) {
	case RC_OK: return RPC_SUCCESS;
	case RC_CANTENCODEARGS: return RPC_CANTENCODEARGS;
	case RC_CANTDECODERES: return RPC_CANTDECODERES;
	case RC_CANTSEND: return RPC_CANTSEND;
	case RC_CANTRECV: case RC_CLOSED: return RPC_CANTRECV;
	case RC_TIMEDOUT: return RPC_TIMEDOUT;
	case RC_VERSMISMATCH: return RPC_VERSMISMATCH;
	case RC_AUTHERROR: return RPC_AUTHERROR;
	case RC_PROGUNAVAIL: return RPC_PROGUNAVAIL;
	case RC_PROGVERSMISMATCH: return RPC_PROGVERSMISMATCH;
	case RC_PROCUNAVAIL: return RPC_PROCUNAVAIL;
	case RC_CANTDECODEARGS: return RPC_CANTDECODEARGS;
	case RC_SYSTEMERROR: case RC_LOCALERROR: case RC_NOMEM: return RPC_SYSTEMERROR;
	case RC_UNKNOWNHOST: return RPC_UNKNOWNHOST;
	case RC_UNKNOWNPROTO: return RPC_UNKNOWNPROTO;
	case RC_UNKNOWNADDR: return RPC_UNKNOWNADDR;
	case RC_PMAPFAILURE: return RPC_RPCBFAILURE;
	case RC_PROGNOTREGISTERED: return RPC_PROGNOTREGISTERED;
	case RC_INPROGRESS: return RPC_INPROGRESS;
	default: return RPC_FAILED;
	}
}

/* The last client creation that failed on this thread (rpc_createerr). */
static _Thread_local struct rc_sunrpc_rpc_createerr rc__createerr;

/* sunrpc.h: this thread's rpc_createerr. */
struct rc_sunrpc_rpc_createerr *rc_sunrpc_createerr(void)
{
	return &rc__createerr;
}

/* Note a failed creation's detail in rpc_createerr: the status, the rpcbind call's (for
 * RPC_PMAPFAILURE) and the errno. */
static void rc__create_note(rc_status st, const rc_error *e)
{
	memset(&rc__createerr, 0, sizeof(rc__createerr));
	rc__createerr.cf_stat = rc_sunrpc_stat(st);
	if (e == NULL)
		return;
	if (st == RC_PMAPFAILURE)
		rc__createerr.cf_error.re_status = rc_sunrpc_stat(e->rpcbind_status);
	else
		rc__createerr.cf_error.re_status = rc__createerr.cf_stat;
	rc__createerr.cf_error.re_errno = e->sys_errno;
	if (e->sys_errno != 0 && (st == RC_LOCALERROR || st == RC_SYSTEMERROR))
		rc__createerr.cf_stat = RPC_SYSTEMERROR;
}

/* A client for uri, or NULL with rpc_createerr filled. */
/* ---- credentials (AUTH) ------------------------------------------------------------------ */

/* The shared AUTH_NONE (authnone_create; id 1), and the next id to give an AUTH. */
static AUTH rc__authnone = {.ah_cred = {RC_AUTH_NONE, NULL, 0},
                            .ah_verf = {RC_AUTH_NONE, NULL, 0},
                            .rc_id = 1};
static _Atomic uint64_t rc__auth_next = 2;

AUTH *rc_sunrpc_authnone_create(void)
{
	return &rc__authnone;
}

AUTH *rc_sunrpc_authunix_create(const char *machine, int uid, int gid, int len,
                                const int *gids)
{
	AUTH *a;
	rc_xdr x;
	struct rc_svc_unixcred p;

	if (machine == NULL || strlen(machine) > 255 || len < 0 || (len > 0 && gids == NULL)) {
		rc__create_note(RC_INVAL, NULL);
		return NULL;
	}
	if ((a = calloc(1, sizeof(*a))) == NULL) {
		rc__create_note(RC_NOMEM, NULL);
		return NULL;
	}
	strcpy(a->rc_machine, machine);
	a->rc_uid = (uint32_t)uid;
	a->rc_gid = (uint32_t)gid;
	a->rc_ngids = len > 16 ? 16 : (uint32_t)len; /* AUTH_SYS carries 16 (libtirpc: NGRPS) */
	for (uint32_t i = 0; i < a->rc_ngids; i++)
		a->rc_gids[i] = (uint32_t)gids[i];
	p = (struct rc_svc_unixcred){.aup_time = (unsigned long)time(NULL),
	                             .aup_machname = a->rc_machine,
	                             .aup_uid = a->rc_uid,
	                             .aup_gid = a->rc_gid,
	                             .aup_len = a->rc_ngids,
	                             .aup_gids = a->rc_gids};
	rc_xdrmem_create(&x, a->rc_cred, sizeof(a->rc_cred), RC_XDR_ENCODE);
	if (!rc_sunrpc_xdr_authunix_parms(&x, &p)) { /* cannot fail: 400 bytes hold it all */
		free(a);
		rc__create_note(RC_INVAL, NULL);
		return NULL;
	}
	a->ah_cred = (struct rc_opaque_auth){RC_AUTH_SYS, (char *)a->rc_cred, rc_xdr_getpos(&x)};
	a->ah_verf = (struct rc_opaque_auth){RC_AUTH_NONE, NULL, 0};
	a->rc_id = atomic_fetch_add(&rc__auth_next, 1);
	return a;
}

AUTH *rc_sunrpc_authunix_create_default(void)
{
	char host[256] = "";
	gid_t g[64];
	int gids[16], n;

	(void)gethostname(host, sizeof(host) - 1);
	if ((n = getgroups((int)(sizeof(g) / sizeof(g[0])), g)) < 0)
		n = 0; /* more than 64: sent without them, as libtirpc fails outright */
	if (n > 16)
		n = 16;
	for (int i = 0; i < n; i++)
		gids[i] = (int)g[i];
	return rc_sunrpc_authunix_create(host, (int)geteuid(), (int)getegid(), n, gids);
}

void rc_sunrpc_auth_destroy(AUTH *auth)
{
	const rc__sungss_hooks *gss = atomic_load(&rc__sungss_hooks_on);

	if (auth != NULL && auth->ah_cred.oa_flavor == RC_AUTH_GSS && gss != NULL)
		gss->free(auth); /* (sunrpc_gss.c's, with its context) */
	else if (auth != NULL && auth != &rc__authnone)
		free(auth);
}

/* Before a clnt_call: send clnt->cl_auth's credentials if they are not the ones applied last.
 * RC_OK, or rc_client_set_auth_*'s status. */
static rc_status rc__auth_apply(CLIENT *clnt)
{
	AUTH *a = clnt->cl_auth;
	const rc__sungss_hooks *gss;
	rc_status st;

	if (a == NULL || a->rc_id == clnt->rc_auth_id)
		return RC_OK;
	/* the credential as the AUTH encoded it, through its flavor (auth.h); RPCSEC_GSS's
	 * context object (sunrpc_gss.c) */
	if (a->ah_cred.oa_flavor == RC_AUTH_GSS &&
	    (gss = atomic_load(&rc__sungss_hooks_on)) != NULL)
		st = gss->apply(clnt, a);
	else
		st = rc__client_set_cred(clnt, a->ah_cred.oa_flavor,
		                         (const unsigned char *)a->ah_cred.oa_base,
		                         a->ah_cred.oa_length);
	if (st == RC_OK)
		clnt->rc_auth_id = a->rc_id;
	return st;
}

static CLIENT *rc__create(const char *uri, rpcprog_t prog, rpcvers_t vers)
{
	rc_client *c = NULL;
	rc_error e;
	rc_status st = rc_client_create_ex(&c, uri, prog, vers, &e);

	if (st != RC_OK) {
		rc__create_note(st, &e);
		return NULL;
	}
	c->cl_auth = &rc__authnone; /* what a new client sends already */
	c->rc_auth_id = rc__authnone.rc_id;
	return c;
}

/* The URI of host over scheme (udp, tcp): an IPv6 literal in brackets; with v6, a name is
 * resolved to its first IPv6 address (udp6, tcp6). False when it cannot be made. */
static bool rc__host_uri(const char *scheme, const char *host, bool v6, char *uri, size_t len)
{
	char lit[INET6_ADDRSTRLEN];
	int n;

	if (v6 && strchr(host, ':') == NULL) {
		struct addrinfo hints, *ai = NULL;
		memset(&hints, 0, sizeof(hints));
		hints.ai_family = AF_INET6;
		if (getaddrinfo(host, NULL, &hints, &ai) != 0 || ai == NULL)
			return false;
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)(void *)ai->ai_addr)->sin6_addr, lit,
		          sizeof(lit));
		freeaddrinfo(ai);
		host = lit;
	}
	n = snprintf(uri, len, strchr(host, ':') ? "%s://[%s]" : "%s://%s", scheme, host);
	return n > 0 && (size_t)n < len;
}

/* The netids clnt_create tries for a nettype, in order; NULL for an unknown one. */
static const char *const *rc__nettype_ids(const char *proto)
{
	static const char *const all[] = {"udp", "tcp", "udp6", "tcp6", NULL};
	static const char *const dg[] = {"udp", "udp6", NULL};
	static const char *const st[] = {"tcp", "tcp6", NULL};
	static const char *const one[][2] = {{"udp", NULL}, {"tcp", NULL}, {"udp6", NULL},
	                                     {"tcp6", NULL}};

	if (strcasecmp(proto, "netpath") == 0 || strcasecmp(proto, "visible") == 0)
		return all;
	if (strcasecmp(proto, "circuit_v") == 0 || strcasecmp(proto, "circuit_n") == 0)
		return st;
	if (strcasecmp(proto, "datagram_v") == 0 || strcasecmp(proto, "datagram_n") == 0)
		return dg;
	for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++)
		if (strcmp(proto, one[i][0]) == 0)
			return one[i];
	return NULL;
}

CLIENT *rc_sunrpc_clnt_create(const char *host, rpcprog_t prog, rpcvers_t vers,
                              const char *proto)
{
	const char *const *ids;
	struct rc_sunrpc_rpc_createerr first;
	char uri[1024];
	CLIENT *c = NULL;

	if (host == NULL || proto == NULL) {
		rc__create_note(RC_UNKNOWNHOST, NULL);
		return NULL;
	}
	if (strcmp(proto, "unix") == 0) {
		if (snprintf(uri, sizeof(uri), "unix:%s", host) >= (int)sizeof(uri)) {
			rc__create_note(RC_UNKNOWNHOST, NULL);
			return NULL;
		}
		return rc__create(uri, prog, vers);
	}
	if ((ids = rc__nettype_ids(proto)) == NULL) {
		rc__create_note(RC_UNKNOWNPROTO, NULL);
		return NULL;
	}
	/* each netid in turn until one gives a client (libtirpc's order for a nettype); when
	 * none does, rpc_createerr says why the first one failed */
	for (const char *const *id = ids; *id != NULL && c == NULL; id++) {
		bool v6 = strchr(*id, '6') != NULL;
		char scheme[4] = {(*id)[0], (*id)[1], (*id)[2], '\0'};
		if (id == ids + 1)
			first = rc__createerr;
		if (!rc__host_uri(scheme, host, v6, uri, sizeof(uri)))
			rc__create_note(RC_UNKNOWNHOST, NULL);
		else
			c = rc__create(uri, prog, vers);
	}
	if (c == NULL && ids[0] != NULL && ids[1] != NULL)
		rc__createerr = first;
	return c;
}

static CLIENT *rc__create_in(const char *scheme, const struct sockaddr_in *raddr,
                             rpcprog_t prog, rpcvers_t vers)
{
	char addr[INET_ADDRSTRLEN], uri[64];

	if (raddr == NULL || inet_ntop(AF_INET, &raddr->sin_addr, addr, sizeof(addr)) == NULL) {
		rc__create_note(RC_UNKNOWNADDR, NULL);
		return NULL;
	}
	if (raddr->sin_port == 0)
		snprintf(uri, sizeof(uri), "%s://%s", scheme, addr);
	else
		snprintf(uri, sizeof(uri), "%s://%s:%u", scheme, addr, ntohs(raddr->sin_port));
	return rc__create(uri, prog, vers);
}

static uint32_t rc__ms(struct timeval tv)
{
	uint64_t ms = (uint64_t)tv.tv_sec * 1000u + (uint64_t)tv.tv_usec / 1000u;

	return tv.tv_sec < 0 || tv.tv_usec < 0 ? 0 : ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
}

CLIENT *rc_sunrpc_clntudp_create(const struct sockaddr_in *raddr, rpcprog_t prog,
                                 rpcvers_t vers, struct timeval wait, int *sockp)
{
	CLIENT *c = rc__create_in("udp", raddr, prog, vers);

	if (sockp)
		*sockp = -1;
	if (c && rc__ms(wait) > 0)
		rc_client_set_retry(c, rc__ms(wait));
	return c;
}

CLIENT *rc_sunrpc_clnttcp_create(const struct sockaddr_in *raddr, rpcprog_t prog,
                                 rpcvers_t vers, int *sockp, u_int sendsz, u_int recvsz)
{
	(void)sendsz;
	(void)recvsz;
	if (sockp)
		*sockp = -1;
	return rc__create_in("tcp", raddr, prog, vers);
}

enum clnt_stat rc_sunrpc_clnt_call(CLIENT *clnt, rpcproc_t proc, xdrproc_t inproc, void *in,
                                   xdrproc_t outproc, void *out, struct timeval timeout)
{
	if (clnt == NULL)
		return RPC_FAILED;
	if (rc__auth_apply(clnt) != RC_OK)
		return RPC_AUTHERROR; /* an AUTH not made by remotecall's auth*_create */
	if (rc__ms(timeout) > 0)
		rc_client_set_timeout(clnt, rc__ms(timeout));
	return rc_sunrpc_stat(rc_call(clnt, proc, inproc, in, outproc, out));
}

bool rc_sunrpc_clnt_control(CLIENT *clnt, u_int request, void *info)
{
	struct timeval *tv = info;
	uint32_t ms;

	if (clnt == NULL || tv == NULL)
		return false;
	switch (request) {
	case CLSET_TIMEOUT:
		return rc_client_set_timeout(clnt, rc__ms(*tv) ? rc__ms(*tv) : 1) == RC_OK;
	case CLSET_RETRY_TIMEOUT:
		return rc_client_set_retry(clnt, rc__ms(*tv) ? rc__ms(*tv) : 1) == RC_OK;
	case CLGET_TIMEOUT:
	case CLGET_RETRY_TIMEOUT:
		ms = request == CLGET_TIMEOUT ? rc_client_get_timeout(clnt) : rc_client_get_retry(clnt);
		tv->tv_sec = (time_t)(ms / 1000u);
		tv->tv_usec = (suseconds_t)(ms % 1000u) * 1000;
		return true;
	default:
		return false;
	}
}

/* sunrpc.h: libtirpc's text of a clnt_stat. */
const char *rc_sunrpc_clnt_sperrno(enum clnt_stat st)
{
	switch (st) {
	case RPC_SUCCESS: return "RPC: Success";
	case RPC_CANTENCODEARGS: return "RPC: Can't encode arguments";
	case RPC_CANTDECODERES: return "RPC: Can't decode result";
	case RPC_CANTSEND: return "RPC: Unable to send";
	case RPC_CANTRECV: return "RPC: Unable to receive";
	case RPC_TIMEDOUT: return "RPC: Timed out";
	case RPC_VERSMISMATCH: return "RPC: Incompatible versions of RPC";
	case RPC_AUTHERROR: return "RPC: Authentication error";
	case RPC_PROGUNAVAIL: return "RPC: Program unavailable";
	case RPC_PROGVERSMISMATCH: return "RPC: Program/version mismatch";
	case RPC_PROCUNAVAIL: return "RPC: Procedure unavailable";
	case RPC_CANTDECODEARGS: return "RPC: Server can't decode arguments";
	case RPC_SYSTEMERROR: return "RPC: Remote system error";
	case RPC_UNKNOWNHOST: return "RPC: Unknown host";
	case RPC_UNKNOWNPROTO: return "RPC: Unknown protocol";
	case RPC_RPCBFAILURE: return "RPC: Port mapper failure";
	case RPC_PROGNOTREGISTERED: return "RPC: Program not registered";
	case RPC_FAILED: return "RPC: Failed (unspecified error)";
	case RPC_UNKNOWNADDR: return "RPC: Remote address unknown";
	default: return "RPC: (unknown error code)";
	}
}

/* libtirpc's text of an auth_stat, or NULL. */
static const char *rc__auth_errmsg(uint32_t why)
{
	static const char *const msg[] = {
		"Authentication OK", "Invalid client credential", "Server rejected credential",
		"Invalid client verifier", "Server rejected verifier", "Client credential too weak",
		"Invalid server verifier", "Failed (unspecified error)"};
	return why < sizeof(msg) / sizeof(msg[0]) ? msg[why] : NULL;
}

static _Thread_local char rc__errbuf[512];

/* sunrpc.h: clnt_sperror in libtirpc's words: "s: RPC: text" and the detail libtirpc adds. */
char *rc_sunrpc_clnt_sperror(CLIENT *clnt, const char *s)
{
	rc_error e;
	enum clnt_stat st;
	size_t n;
	const char *why;

	rc_client_geterr(clnt, &e);
	st = rc_sunrpc_stat(e.status);
	n = (size_t)snprintf(rc__errbuf, sizeof(rc__errbuf), "%s: %s", s ? s : "",
	                     rc_sunrpc_clnt_sperrno(st));
	if (n >= sizeof(rc__errbuf))
		return rc__errbuf;
	switch (st) {
	case RPC_CANTSEND:
	case RPC_CANTRECV:
		snprintf(rc__errbuf + n, sizeof(rc__errbuf) - n, "; errno = %s",
		         strerror(e.sys_errno));
		break;
	case RPC_VERSMISMATCH:
	case RPC_PROGVERSMISMATCH:
		snprintf(rc__errbuf + n, sizeof(rc__errbuf) - n,
		         "; low version = %u, high version = %u", (unsigned)e.low, (unsigned)e.high);
		break;
	case RPC_AUTHERROR:
		why = rc__auth_errmsg(e.auth_stat);
		if (why != NULL)
			snprintf(rc__errbuf + n, sizeof(rc__errbuf) - n, "; why = %s", why);
		else
			snprintf(rc__errbuf + n, sizeof(rc__errbuf) - n,
			         "; why = (unknown authentication error - %d)", (int)e.auth_stat);
		break;
	default:
		break;
	}
	return rc__errbuf;
}

void rc_sunrpc_clnt_perror(CLIENT *clnt, const char *s)
{
	fprintf(stderr, "%s\n", rc_sunrpc_clnt_sperror(clnt, s));
}

/* sunrpc.h: clnt_spcreateerror in libtirpc's words. */
char *rc_sunrpc_clnt_spcreateerror(const char *s)
{
	size_t n = (size_t)snprintf(rc__errbuf, sizeof(rc__errbuf), "%s: %s", s ? s : "",
	                            rc_sunrpc_clnt_sperrno(rc__createerr.cf_stat));

	if (n >= sizeof(rc__errbuf))
		return rc__errbuf;
	if (rc__createerr.cf_stat == RPC_PMAPFAILURE)
		snprintf(rc__errbuf + n, sizeof(rc__errbuf) - n, " - %s",
		         rc_sunrpc_clnt_sperrno(rc__createerr.cf_error.re_status));
	else if (rc__createerr.cf_stat == RPC_SYSTEMERROR)
		snprintf(rc__errbuf + n, sizeof(rc__errbuf) - n, " - %s",
		         strerror(rc__createerr.cf_error.re_errno));
	return rc__errbuf;
}

void rc_sunrpc_clnt_pcreateerror(const char *s)
{
	fprintf(stderr, "%s\n", rc_sunrpc_clnt_spcreateerror(s));
}

/* sunrpc.h: clnt_geterr -- the last call's detail in Sun's struct rpc_err. */
void rc_sunrpc_clnt_geterr(CLIENT *clnt, struct rpc_err *err)
{
	rc_error e;

	memset(err, 0, sizeof(*err));
	rc_client_geterr(clnt, &e);
	err->re_status = rc_sunrpc_stat(e.status);
	switch (err->re_status) {
	case RPC_VERSMISMATCH:
	case RPC_PROGVERSMISMATCH:
		err->re_vers.low = e.low;
		err->re_vers.high = e.high;
		break;
	case RPC_AUTHERROR:
		err->re_why = (enum auth_stat)e.auth_stat;
		break;
	default:
		err->re_errno = e.sys_errno;
		break;
	}
}

/* sunrpc.h: a netobj as opaque<MAX_NETOBJ_SZ>. */
bool rc_sunrpc_xdr_netobj(rc_xdr *xdrs, struct netobj *np)
{
	return rc_xdr_bytes(xdrs, &np->n_bytes, &np->n_len, MAX_NETOBJ_SZ);
}

/* sunrpc.h: a des_block as opaque[8]. */
bool rc_sunrpc_xdr_des_block(rc_xdr *xdrs, des_block *blkp)
{
	return rc_xdr_opaque(xdrs, blkp->c, sizeof(blkp->c));
}

/* sunrpc.h: an AUTH_SYS body as Sun's struct authunix_parms. */
bool rc_sunrpc_xdr_authunix_parms(rc_xdr *xdrs, struct rc_svc_unixcred *p)
{
	char *gids = (char *)p->aup_gids;
	bool ok;

	if (!rc_sunrpc_xdr_u_long(xdrs, &p->aup_time) ||
	    !rc_xdr_string(xdrs, &p->aup_machname, 255) || !rc_xdr_u_int(xdrs, &p->aup_uid) ||
	    !rc_xdr_u_int(xdrs, &p->aup_gid))
		return false;
	ok = rc_xdr_array(xdrs, &gids, &p->aup_len, 16, sizeof(uint32_t),
	                  (rc_xdrproc)rc_xdr_u_int);
	p->aup_gids = (uint32_t *)(void *)gids;
	return ok;
}

/* ---- broadcast through rpcbind (PMAP v2 CALLIT) ---------------------------------------------- */

#define RC__PMAP_PROG 100000u
#define RC__PMAP_VERS 2u
#define RC__PMAP_CALLIT 5u
#define RC__BCAST_ARGS_MAX 8800u /* libtirpc's UDPMSGSIZE: what a broadcast call may carry */

/* One clnt_broadcast / rpc_broadcast: the call's arguments, already encoded, and where the
 * replies go. */
typedef struct rc__sunb {
	rpcprog_t prog;
	rpcvers_t vers;
	rpcproc_t proc;
	unsigned char *args; /* the arguments' XDR */
	uint32_t alen;
	xdrproc_t xresults;
	void *resultsp;
	resultproc_t each;           /* clnt_broadcast's */
	rc_sunrpc_rpcresult each_nc; /* rpc_broadcast's */
} rc__sunb;

/* A reply's CALLIT result: the port, then the result decoded into the caller's resultsp. */
typedef struct rc__sunb_res {
	uint32_t port;
	bool decoded; /* resultsp holds a decoded result (freed with the reply) */
} rc__sunb_res;

/* The broadcast running on this thread (rc__sunb_res's coder needs the caller's routine). */
static _Thread_local rc__sunb *rc__sunb_cur;

/* CALLIT's arguments: prog, vers, proc, then the call's arguments as opaque<>. */
static bool rc__xdr_callit_args(rc_xdr *x, void *obj)
{
	rc__sunb *b = obj;
	char *a = (char *)b->args;
	uint32_t n = b->alen;

	return rc_xdr_u_int(x, &b->prog) && rc_xdr_u_int(x, &b->vers) &&
	       rc_xdr_u_int(x, &b->proc) && rc_xdr_bytes(x, &a, &n, RC__BCAST_ARGS_MAX);
}

/* CALLIT's result: port, then opaque<> holding the procedure's result (decoded in place
 * into the caller's resultsp); XDR_FREE frees what that decoding allocated. */
static bool rc__xdr_callit_res(rc_xdr *x, void *obj)
{
	rc__sunb_res *r = obj;
	rc__sunb *b = rc__sunb_cur;
	uint32_t len;
	const unsigned char *p;
	rc_xdr sub;

	if (x->x_op == RC_XDR_FREE) {
		if (r->decoded)
			rc_xdr_free(b->xresults, b->resultsp);
		r->decoded = false;
		return true;
	}
	if (!rc_xdr_u_int(x, &r->port) || !rc_xdr_u_int(x, &len) ||
	    (p = rc_xdr_inline(x, (len + 3u) & ~3u)) == NULL)
		return false;
	rc_xdrmem_create(&sub, (void *)p, len, RC_XDR_DECODE);
	r->decoded = true; /* even a partial decoding may have allocated */
	return b->xresults(&sub, b->resultsp);
}

/* rc__broadcast_ifaces' handler: the responder's address, with the program's port, to the
 * caller's eachresult. */
static bool rc__sunb_reply(void *udata, const void *res, const struct sockaddr *from,
                           unsigned fromlen)
{
	rc__sunb *b = udata;
	const rc__sunb_res *r = res;
	struct sockaddr_in a;
	struct netbuf nb = {sizeof(a), sizeof(a), &a};

	if (from->sa_family != AF_INET || fromlen < sizeof(a))
		return false;
	memcpy(&a, from, sizeof(a));
	a.sin_port = htons((uint16_t)r->port);
	if (b->each != NULL)
		return b->each((caddr_t)b->resultsp, &a);
	return b->each_nc((caddr_t)b->resultsp, &nb, rc_sunrpc_getnetconfigent("udp"));
}

/* Both Sun entries: encode the arguments, broadcast CALLIT for total_ms, resending after
 * first_ms then at doubled waits. */
static enum clnt_stat rc__sun_broadcast(rc__sunb *b, xdrproc_t xargs, void *argsp,
                                        uint32_t first_ms, uint32_t total_ms)
{
	rc_xdr x;
	rc_status st;

	if (xargs == NULL || b->xresults == NULL || (b->args = malloc(RC__BCAST_ARGS_MAX)) == NULL)
		return xargs == NULL || b->xresults == NULL ? RPC_CANTENCODEARGS : RPC_SYSTEMERROR;
	rc_xdrmem_create(&x, b->args, RC__BCAST_ARGS_MAX, RC_XDR_ENCODE);
	if (!xargs(&x, argsp)) {
		free(b->args);
		return RPC_CANTENCODEARGS;
	}
	b->alen = rc_xdr_getpos(&x);
	rc__sunb_cur = b;
	st = rc__broadcast_ifaces(111, RC__PMAP_PROG, RC__PMAP_VERS, RC__PMAP_CALLIT,
	                          rc__xdr_callit_args, b, rc__xdr_callit_res,
	                          sizeof(rc__sunb_res), rc__sunb_reply, b, total_ms, first_ms);
	rc__sunb_cur = NULL;
	free(b->args);
	return st == RC_OK ? RPC_SUCCESS : rc_sunrpc_stat(st);
}

enum clnt_stat rc_sunrpc_clnt_broadcast(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc,
                                        xdrproc_t xargs, void *argsp, xdrproc_t xresults,
                                        void *resultsp, resultproc_t eachresult)
{
	rc__sunb b = {prog, vers, proc, NULL, 0, xresults, resultsp, eachresult, NULL};

	if (eachresult == NULL)
		return RPC_SYSTEMERROR;
	return rc__sun_broadcast(&b, xargs, argsp, 4000, 12000); /* libtirpc: 4 s, then 8 s */
}

enum clnt_stat rc_sunrpc_rpc_broadcast_exp(rpcprog_t prog, rpcvers_t vers, rpcproc_t proc,
                                           xdrproc_t xargs, void *argsp, xdrproc_t xresults,
                                           void *resultsp, rc_sunrpc_rpcresult eachresult,
                                           int inittime, int waittime, const char *nettype)
{
	rc__sunb b = {prog, vers, proc, NULL, 0, xresults, resultsp, NULL, eachresult};
	uint64_t total = 0;

	if (eachresult == NULL)
		return RPC_SYSTEMERROR;
	if (nettype != NULL && strcasecmp(nettype, "udp") != 0 &&
	    strcasecmp(nettype, "netpath") != 0 && strcasecmp(nettype, "visible") != 0 &&
	    strcasecmp(nettype, "datagram_v") != 0 && strcasecmp(nettype, "datagram_n") != 0)
		return RPC_UNKNOWNPROTO;
	if (inittime <= 0)
		inittime = 4000;
	if (waittime < inittime)
		waittime = inittime;
	for (uint64_t t = (uint64_t)inittime; t <= (uint64_t)waittime; t *= 2)
		total += t; /* libtirpc waits inittime, then doubles while within waittime */
	return rc__sun_broadcast(&b, xargs, argsp, (uint32_t)inittime,
	                         total > UINT32_MAX ? UINT32_MAX : (uint32_t)total);
}

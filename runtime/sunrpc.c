/*
 * The Sun RPC compatibility layer (<remotecall/sunrpc.h>): the routines behind the classic
 * names that are not a plain rename.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <remotecall/sunrpc.h>

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

/* The last client creation that failed on this thread. */
static _Thread_local rc_status rc__create_err;

static CLIENT *rc__create(const char *uri, rpcprog_t prog, rpcvers_t vers)
{
	rc_client *c = NULL;

	rc__create_err = rc_client_create(&c, uri, prog, vers);
	return rc__create_err == RC_OK ? c : NULL;
}

CLIENT *rc_sunrpc_clnt_create(const char *host, rpcprog_t prog, rpcvers_t vers,
                              const char *proto)
{
	char uri[1024];
	int n;

	if (host == NULL || proto == NULL) {
		rc__create_err = RC_INVAL;
		return NULL;
	}
	if (strcmp(proto, "unix") == 0)
		n = snprintf(uri, sizeof(uri), "unix:%s", host);
	else if (strcmp(proto, "udp") == 0 || strcmp(proto, "tcp") == 0)
		n = snprintf(uri, sizeof(uri), strchr(host, ':') ? "%s://[%s]" : "%s://%s", proto,
		             host);
	else {
		rc__create_err = RC_UNKNOWNPROTO;
		return NULL;
	}
	if (n < 0 || (size_t)n >= sizeof(uri)) {
		rc__create_err = RC_UNKNOWNHOST;
		return NULL;
	}
	return rc__create(uri, prog, vers);
}

static CLIENT *rc__create_in(const char *scheme, const struct sockaddr_in *raddr,
                             rpcprog_t prog, rpcvers_t vers)
{
	char addr[INET_ADDRSTRLEN], uri[64];

	if (raddr == NULL || inet_ntop(AF_INET, &raddr->sin_addr, addr, sizeof(addr)) == NULL) {
		rc__create_err = RC_UNKNOWNADDR;
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

const char *rc_sunrpc_clnt_sperrno(enum clnt_stat st)
{
	switch (st) {
	case RPC_SUCCESS: return rc_strerror(RC_OK);
	case RPC_CANTENCODEARGS: return rc_strerror(RC_CANTENCODEARGS);
	case RPC_CANTDECODERES: return rc_strerror(RC_CANTDECODERES);
	case RPC_CANTSEND: return rc_strerror(RC_CANTSEND);
	case RPC_CANTRECV: return rc_strerror(RC_CANTRECV);
	case RPC_TIMEDOUT: return rc_strerror(RC_TIMEDOUT);
	case RPC_VERSMISMATCH: return rc_strerror(RC_VERSMISMATCH);
	case RPC_AUTHERROR: return rc_strerror(RC_AUTHERROR);
	case RPC_PROGUNAVAIL: return rc_strerror(RC_PROGUNAVAIL);
	case RPC_PROGVERSMISMATCH: return rc_strerror(RC_PROGVERSMISMATCH);
	case RPC_PROCUNAVAIL: return rc_strerror(RC_PROCUNAVAIL);
	case RPC_CANTDECODEARGS: return rc_strerror(RC_CANTDECODEARGS);
	case RPC_SYSTEMERROR: return rc_strerror(RC_SYSTEMERROR);
	case RPC_UNKNOWNHOST: return rc_strerror(RC_UNKNOWNHOST);
	case RPC_RPCBFAILURE: return rc_strerror(RC_PMAPFAILURE);
	case RPC_PROGNOTREGISTERED: return rc_strerror(RC_PROGNOTREGISTERED);
	case RPC_UNKNOWNPROTO: return rc_strerror(RC_UNKNOWNPROTO);
	case RPC_UNKNOWNADDR: return rc_strerror(RC_UNKNOWNADDR);
	case RPC_INPROGRESS: return rc_strerror(RC_INPROGRESS);
	default: return rc_strerror(RC_FAILED);
	}
}

static _Thread_local char rc__errbuf[512];

char *rc_sunrpc_clnt_sperror(CLIENT *clnt, const char *s)
{
	rc_error e;
	char detail[400];

	rc_client_geterr(clnt, &e);
	rc_error_format(&e, detail, sizeof(detail));
	snprintf(rc__errbuf, sizeof(rc__errbuf), "%s: %s", s ? s : "", detail);
	return rc__errbuf;
}

void rc_sunrpc_clnt_perror(CLIENT *clnt, const char *s)
{
	fprintf(stderr, "%s\n", rc_sunrpc_clnt_sperror(clnt, s));
}

char *rc_sunrpc_clnt_spcreateerror(const char *s)
{
	snprintf(rc__errbuf, sizeof(rc__errbuf), "%s: %s", s ? s : "", rc_strerror(rc__create_err));
	return rc__errbuf;
}

void rc_sunrpc_clnt_pcreateerror(const char *s)
{
	fprintf(stderr, "%s\n", rc_sunrpc_clnt_spcreateerror(s));
}

/* sunrpc.h: a netobj as opaque<MAX_NETOBJ_SZ>. */
bool rc_sunrpc_xdr_netobj(rc_xdr *xdrs, struct netobj *np)
{
	return rc_xdr_bytes(xdrs, &np->n_bytes, &np->n_len, MAX_NETOBJ_SZ);
}

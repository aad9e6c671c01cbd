/*
 * The Sun server API of <remotecall/sunrpc.h> on the public rc_server: one server for the
 * process, an SVCXPRT per listener, a raw dispatcher (rc_server_register_raw) per (program,
 * version) that hands each call to the Sun dispatch function, and svc_getargs / svc_sendreply /
 * svcerr_* on the call being dispatched on this thread. pmap_set / rpcb_set go to rpcbind.c.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "runtime/sun/sunrpc_gss_int.h" /* (before the Sun names) */

#include <remotecall/sunrpc.h>

#include "runtime/rpcbind/rpcbind.h"
#include "runtime/server/server_internal.h"

/* One (program, version) served by a Sun dispatch function. */
typedef struct rc__sun_prog {
	struct rc__sun_prog *next;
	rpcprog_t prog;
	rpcvers_t vers;
	rc_sunrpc_dispatch dispatch;
	SVCXPRT *dg, *st; /* the transports it was registered on (the first of each kind) */
} rc__sun_prog;

static pthread_mutex_t rc__sun_mu = PTHREAD_MUTEX_INITIALIZER;
static rc_server *rc__sun_srv;        /* the process's server, made on first use */
static rc__sun_prog *rc__sun_progs;   /* under rc__sun_mu */
static SVCXPRT rc__sun_none = {-1, 0, "", ""}; /* rq_xprt of a call with no transport known */
static _Thread_local rc_svc_req *rc__sun_cur; /* the call being dispatched on this thread */

/* sunrpc_gss_int.h */
const rc__sungss_hooks *_Atomic rc__sungss_hooks_on;

static struct netconfig rc__netconfigs[] = {
	{"udp", NC_TPI_CLTS, NC_VISIBLE, "inet", "udp", "-", 0, NULL, {0}},
	{"tcp", NC_TPI_COTS_ORD, NC_VISIBLE, "inet", "tcp", "-", 0, NULL, {0}},
	{"udp6", NC_TPI_CLTS, NC_VISIBLE, "inet6", "udp", "-", 0, NULL, {0}},
	{"tcp6", NC_TPI_COTS_ORD, NC_VISIBLE, "inet6", "tcp", "-", 0, NULL, {0}},
};

/* sunrpc.h: the static entry of netid, or NULL. */
struct netconfig *rc_sunrpc_getnetconfigent(const char *netid)
{
	for (size_t i = 0; netid && i < sizeof(rc__netconfigs) / sizeof(rc__netconfigs[0]); i++)
		if (strcmp(rc__netconfigs[i].nc_netid, netid) == 0)
			return &rc__netconfigs[i];
	return NULL;
}

/* sunrpc.h: nothing to free (static entries). */
void rc_sunrpc_freenetconfigent(struct netconfig *nc)
{
	(void)nc;
}

/* The process's server, made on first use (under rc__sun_mu); NULL if it cannot be made. */
static rc_server *rc__sun_server(void)
{
	if (rc__sun_srv == NULL && rc_server_create(&rc__sun_srv) != RC_OK)
		rc__sun_srv = NULL;
	return rc__sun_srv;
}

/* The SVCXPRT of a listener (or connection) just made, bound at uri: its port and netid. */
static SVCXPRT *rc__sun_xprt_of(SVCXPRT *x, int sock)
{
	const char *colon = strrchr(x->xp_uri, ':');

	x->xp_sock = sock;
	if (strncmp(x->xp_uri, "unix:", 5) == 0)
		snprintf(x->xp_netid, sizeof(x->xp_netid), "unix");
	else
		snprintf(x->xp_netid, sizeof(x->xp_netid), "%.3s%s", x->xp_uri,
		         strstr(x->xp_uri, "://[") != NULL ? "6" : "");
	x->xp_port = 0;
	if (colon != NULL && strncmp(x->xp_uri, "unix:", 5) != 0)
		x->xp_port = (u_short)atoi(colon + 1);
	return x;
}

/* A new transport of the process's server: with sock RPC_ANYSOCK, a listener of netid (udp,
 * tcp, udp6, tcp6) on the wildcard address, any port; else the application's socket sock,
 * which must be of type want (SOCK_DGRAM, SOCK_STREAM), through rc_server_listen_fd. NULL
 * with a message on stderr when it cannot be made (sock stays the caller's). */
static SVCXPRT *rc__sun_listen(const char *who, const char *netid, int sock, int want)
{
	const char *uri = NULL;
	SVCXPRT *x;
	rc_status st;

	if (sock == RPC_ANYSOCK) {
		if (strcmp(netid, "udp") == 0)
			uri = "udp://0.0.0.0:0";
		else if (strcmp(netid, "tcp") == 0)
			uri = "tcp://0.0.0.0:0";
		else if (strcmp(netid, "udp6") == 0)
			uri = "udp://[::]:0";
		else if (strcmp(netid, "tcp6") == 0)
			uri = "tcp://[::]:0";
		else
			return NULL;
	} else {
		int type = 0;
		socklen_t ol = sizeof(type);
		if (getsockopt(sock, SOL_SOCKET, SO_TYPE, &type, &ol) != 0 || type != want) {
			fprintf(stderr, "remotecall: %s: descriptor %d is not a %s socket\n", who, sock,
			        want == SOCK_DGRAM ? "datagram" : "stream");
			return NULL;
		}
	}
	if ((x = calloc(1, sizeof(*x))) == NULL)
		return NULL;
	pthread_mutex_lock(&rc__sun_mu);
	if (rc__sun_server() == NULL)
		st = RC_NOMEM;
	else if (uri != NULL)
		st = rc_server_listen(rc__sun_srv, uri, x->xp_uri, sizeof(x->xp_uri));
	else
		st = rc_server_listen_fd(rc__sun_srv, sock, x->xp_uri, sizeof(x->xp_uri));
	pthread_mutex_unlock(&rc__sun_mu);
	if (st != RC_OK) {
		if (uri != NULL)
			fprintf(stderr, "remotecall: %s: cannot listen on %s: %s\n", who, uri,
			        rc_strerror(st));
		else
			fprintf(stderr, "remotecall: %s: cannot serve descriptor %d: %s\n", who, sock,
			        rc_strerror(st));
		free(x);
		return NULL;
	}
	return rc__sun_xprt_of(x, uri != NULL ? -1 : sock);
}

/* sunrpc.h: svcudp_create. */
SVCXPRT *rc_sunrpc_svcudp_create(int sock)
{
	return rc__sun_listen("svcudp_create", "udp", sock, SOCK_DGRAM);
}

/* sunrpc.h: svctcp_create (the buffer sizes are remotecall's). */
SVCXPRT *rc_sunrpc_svctcp_create(int sock, u_int sendsz, u_int recvsz)
{
	(void)sendsz;
	(void)recvsz;
	return rc__sun_listen("svctcp_create", "tcp", sock, SOCK_STREAM);
}

/* sunrpc.h: svcfd_create / svc_fd_create: a connected (or listening) stream socket. */
SVCXPRT *rc_sunrpc_svcfd_create(int fd, u_int sendsz, u_int recvsz)
{
	(void)sendsz;
	(void)recvsz;
	if (fd < 0) {
		fprintf(stderr, "remotecall: svcfd_create: descriptor %d\n", fd);
		return NULL;
	}
	return rc__sun_listen("svcfd_create", "tcp", fd, SOCK_STREAM);
}

/* sunrpc.h: svc_destroy. The listener is closed when the server is not running (a running
 * server keeps it until svc_run returns); the SVCXPRT is freed. */
void rc_sunrpc_svc_destroy(SVCXPRT *xprt)
{
	rc__sun_prog *p;

	if (xprt == NULL || xprt == &rc__sun_none)
		return;
	pthread_mutex_lock(&rc__sun_mu);
	for (p = rc__sun_progs; p; p = p->next) {
		if (p->dg == xprt)
			p->dg = NULL;
		if (p->st == xprt)
			p->st = NULL;
	}
	if (rc__sun_srv != NULL)
		(void)rc_server_unlisten(rc__sun_srv, xprt->xp_uri); /* RC_INVAL while running */
	pthread_mutex_unlock(&rc__sun_mu);
	free(xprt);
}

/* sunrpc_gss_int.h: the process's server; the call dispatched on this thread. */
rc_server *rc__sunrpc_server(void)
{
	rc_server *srv;

	pthread_mutex_lock(&rc__sun_mu);
	srv = rc__sun_server();
	pthread_mutex_unlock(&rc__sun_mu);
	return srv;
}

rc_svc_req *rc__sunrpc_current(void)
{
	return rc__sun_cur;
}

/* The raw dispatcher of a Sun (program, version): the call becomes this thread's current one
 * while the dispatch function runs with the SVCXPRT of its kind. */
static void rc__sun_raw(rc_svc_req *req, void *ctx)
{
	rc__sun_prog *p = ctx;
	rc_svc_req *prev = rc__sun_cur;
	SVCXPRT *x = rc__svc_req_dgram(req) ? p->dg : p->st;
	struct svc_req sun; /* Sun's view of the call */
	const rc__sungss_hooks *gss;

	if (x == NULL)
		x = p->dg ? p->dg : p->st ? p->st : &rc__sun_none;
	sun.rq_prog = rc_svc_req_prog(req);
	sun.rq_vers = rc_svc_req_vers(req);
	sun.rq_proc = rc_svc_req_procnum(req);
	sun.rq_cred = *rc_svc_req_cred(req);
	sun.rq_clntcred = (void *)rc__svc_req_unixcred(req);
	sun.rq_xprt = x;
	rc__sun_cur = req;
	if (sun.rq_cred.oa_flavor != RC_AUTH_GSS ||
	    (gss = atomic_load(&rc__sungss_hooks_on)) == NULL || gss->admit(&sun, req))
		p->dispatch(&sun, x);
	rc__sun_cur = prev;
}

/* Add (prog, vers) with dispatch on xprt to the process's server; false if another dispatch
 * function serves it already or the server refused. */
static bool rc__sun_add(SVCXPRT *xprt, rpcprog_t prog, rpcvers_t vers,
                        rc_sunrpc_dispatch dispatch)
{
	rc__sun_prog *p;
	bool dg = xprt && strncmp(xprt->xp_netid, "udp", 3) == 0;
	bool ok = true;

	if (dispatch == NULL)
		return false;
	pthread_mutex_lock(&rc__sun_mu);
	for (p = rc__sun_progs; p; p = p->next)
		if (p->prog == prog && p->vers == vers)
			break;
	if (p != NULL) {
		ok = p->dispatch == dispatch;
	} else if ((p = calloc(1, sizeof(*p))) == NULL || rc__sun_server() == NULL) {
		free(p);
		p = NULL;
		ok = false;
	} else {
		p->prog = prog;
		p->vers = vers;
		p->dispatch = dispatch;
		if (rc_server_register_raw(rc__sun_srv, prog, vers, rc__sun_raw, p) != RC_OK) {
			free(p);
			p = NULL;
			ok = false;
		} else {
			p->next = rc__sun_progs;
			rc__sun_progs = p;
		}
	}
	if (ok && p != NULL && xprt != NULL) {
		if (dg && p->dg == NULL)
			p->dg = xprt;
		if (!dg && p->st == NULL)
			p->st = xprt;
	}
	pthread_mutex_unlock(&rc__sun_mu);
	return ok;
}

/* The universal address of xprt's listener ("0.0.0.0.4.1", "::.4.1"). */
static void rc__sun_uaddr(const SVCXPRT *xprt, char *ua, size_t len)
{
	bool v6 = strchr(xprt->xp_netid, '6') != NULL;

	snprintf(ua, len, "%s.%u.%u", v6 ? "::" : "0.0.0.0", xprt->xp_port >> 8,
	         xprt->xp_port & 0xffu);
}

/* sunrpc.h: svc_register. */
bool rc_sunrpc_svc_register(SVCXPRT *xprt, rpcprog_t prog, rpcvers_t vers,
                            rc_sunrpc_dispatch dispatch, int protocol)
{
	if (xprt == NULL || !rc__sun_add(xprt, prog, vers, dispatch))
		return false;
	if (protocol == 0)
		return true;
	return rc_sunrpc_pmap_set(prog, vers, protocol, xprt->xp_port);
}

/* sunrpc.h: svc_reg. */
bool rc_sunrpc_svc_reg(SVCXPRT *xprt, rpcprog_t prog, rpcvers_t vers,
                       rc_sunrpc_dispatch dispatch, const struct netconfig *nc)
{
	char ua[RC__RPCB_UADDR_MAX];

	if (xprt == NULL || !rc__sun_add(xprt, prog, vers, dispatch))
		return false;
	if (nc == NULL)
		return true;
	rc__sun_uaddr(xprt, ua, sizeof(ua));
	return rc__rpcb_local_set(true, prog, vers, xprt->xp_netid, ua) == RC_OK;
}

/* sunrpc.h: svc_tp_create. */
SVCXPRT *rc_sunrpc_svc_tp_create(rc_sunrpc_dispatch dispatch, rpcprog_t prog, rpcvers_t vers,
                                 const struct netconfig *nc)
{
	SVCXPRT *x;

	if (nc == NULL || nc->nc_netid == NULL ||
	    (x = rc__sun_listen("svc_tp_create", nc->nc_netid, RPC_ANYSOCK, 0)) == NULL)
		return NULL;
	rc_sunrpc_rpcb_unset(prog, vers, nc);
	if (!rc_sunrpc_svc_reg(x, prog, vers, dispatch, nc)) {
		fprintf(stderr, "remotecall: svc_tp_create: cannot register (%u, %u, %s)\n",
		        (unsigned)prog, (unsigned)vers, nc->nc_netid);
		rc_sunrpc_svc_destroy(x);
		return NULL;
	}
	return x;
}

/* sunrpc.h: svc_create -- the netids a nettype names, each through svc_tp_create. */
int rc_sunrpc_svc_create(rc_sunrpc_dispatch dispatch, rpcprog_t prog, rpcvers_t vers,
                         const char *nettype)
{
	static const char *const all[] = {"udp", "tcp", "udp6", "tcp6", NULL};
	static const char *const dg[] = {"udp", "udp6", NULL};
	static const char *const st[] = {"tcp", "tcp6", NULL};
	const char *one[2] = {nettype, NULL};
	const char *const *ids;
	int n = 0;

	if (nettype == NULL || strcasecmp(nettype, "netpath") == 0 ||
	    strcasecmp(nettype, "visible") == 0)
		ids = all;
	else if (strcasecmp(nettype, "circuit_v") == 0 || strcasecmp(nettype, "circuit_n") == 0)
		ids = st;
	else if (strcasecmp(nettype, "datagram_v") == 0 || strcasecmp(nettype, "datagram_n") == 0)
		ids = dg;
	else
		ids = one;
	for (; *ids; ids++) {
		struct netconfig *nc = rc_sunrpc_getnetconfigent(*ids);
		if (nc != NULL && rc_sunrpc_svc_tp_create(dispatch, prog, vers, nc) != NULL)
			n++;
	}
	return n;
}

/* sunrpc.h: svc_unregister / svc_unreg. */
void rc_sunrpc_svc_unregister(rpcprog_t prog, rpcvers_t vers)
{
	rc__sun_prog **pp, *p = NULL;

	pthread_mutex_lock(&rc__sun_mu);
	for (pp = &rc__sun_progs; *pp; pp = &(*pp)->next) {
		if ((*pp)->prog == prog && (*pp)->vers == vers) {
			p = *pp;
			*pp = p->next;
			break;
		}
	}
	if (p != NULL && rc_server_unregister(rc__sun_srv, prog, vers) != RC_OK) {
		p->next = rc__sun_progs; /* a running server keeps it */
		rc__sun_progs = p;
		p = NULL;
	}
	pthread_mutex_unlock(&rc__sun_mu);
	free(p);
	rc_sunrpc_rpcb_unset(prog, vers, NULL);
}

/* sunrpc.h: svc_getargs. */
bool rc_sunrpc_svc_getargs(SVCXPRT *xprt, xdrproc_t xargs, void *args)
{
	(void)xprt;
	return rc_svc_req_getargs(rc__sun_cur, xargs, args) == RC_OK;
}

/* sunrpc.h: svc_freeargs. */
bool rc_sunrpc_svc_freeargs(SVCXPRT *xprt, xdrproc_t xargs, void *args)
{
	(void)xprt;
	if (xargs == NULL || args == NULL)
		return false;
	rc_xdr_free(xargs, args);
	return true;
}

/* sunrpc.h: svc_sendreply. */
bool rc_sunrpc_svc_sendreply(SVCXPRT *xprt, xdrproc_t xres, void *res)
{
	(void)xprt;
	return rc_svc_req_reply(rc__sun_cur, xres, res) == RC_OK;
}

/* sunrpc.h: the svcerr_ family, each an rc_svc_req_error on the current call. */
void rc_sunrpc_svcerr_noproc(SVCXPRT *xprt)
{
	(void)xprt;
	rc_svc_req_error(rc__sun_cur, RC_SVC_PROC_UNAVAIL, 0, 0);
}

void rc_sunrpc_svcerr_decode(SVCXPRT *xprt)
{
	(void)xprt;
	rc_svc_req_error(rc__sun_cur, RC_SVC_GARBAGE_ARGS, 0, 0);
}

void rc_sunrpc_svcerr_systemerr(SVCXPRT *xprt)
{
	(void)xprt;
	rc_svc_req_error(rc__sun_cur, RC_SVC_SYSTEM_ERR, 0, 0);
}

void rc_sunrpc_svcerr_noprog(SVCXPRT *xprt)
{
	(void)xprt;
	rc_svc_req_error(rc__sun_cur, RC_SVC_PROG_UNAVAIL, 0, 0);
}

void rc_sunrpc_svcerr_progvers(SVCXPRT *xprt, rpcvers_t lo, rpcvers_t hi)
{
	(void)xprt;
	rc_svc_req_error(rc__sun_cur, RC_SVC_PROG_MISMATCH, lo, hi);
}

void rc_sunrpc_svcerr_auth(SVCXPRT *xprt, enum auth_stat why)
{
	(void)xprt;
	rc_svc_req_error(rc__sun_cur, RC_SVC_AUTH_ERROR, (uint32_t)why, 0);
}

void rc_sunrpc_svcerr_weakauth(SVCXPRT *xprt)
{
	rc_sunrpc_svcerr_auth(xprt, AUTH_TOOWEAK);
}

static _Thread_local struct sockaddr_storage rc__sun_caller;
static _Thread_local struct netbuf rc__sun_callerbuf;

/* sunrpc.h: svc_getcaller (zeros outside a call, or for an in-process one). */
struct sockaddr_in *rc_sunrpc_svc_getcaller(SVCXPRT *xprt)
{
	unsigned len = sizeof(rc__sun_caller);

	(void)xprt;
	memset(&rc__sun_caller, 0, sizeof(rc__sun_caller));
	if (rc__sun_cur == NULL || rc_svc_req_caller(rc__sun_cur, &rc__sun_caller, &len) != RC_OK)
		len = 0;
	rc__sun_callerbuf.buf = &rc__sun_caller;
	rc__sun_callerbuf.len = len;
	rc__sun_callerbuf.maxlen = sizeof(rc__sun_caller);
	return (struct sockaddr_in *)(void *)&rc__sun_caller;
}

/* sunrpc.h: svc_getrpccaller. */
struct netbuf *rc_sunrpc_svc_getrpccaller(SVCXPRT *xprt)
{
	rc_sunrpc_svc_getcaller(xprt);
	return &rc__sun_callerbuf;
}

/* The process's server, or NULL when no svc*_create made it. */
static rc_server *rc__sun_get(void)
{
	rc_server *s;

	pthread_mutex_lock(&rc__sun_mu);
	s = rc__sun_srv;
	pthread_mutex_unlock(&rc__sun_mu);
	return s;
}

/* sunrpc.h: svc_run. */
void rc_sunrpc_svc_run(void)
{
	rc_server *s = rc__sun_get();
	rc_status st;

	if (s == NULL) {
		fprintf(stderr, "remotecall: svc_run: no transport was created\n");
		return;
	}
	if ((st = rc_server_run(s)) != RC_OK)
		fprintf(stderr, "remotecall: svc_run: %s\n", rc_strerror(st));
}

/* sunrpc.h: svc_exit (rc_server_stop is async-signal-safe; the pointer is read unlocked). */
void rc_sunrpc_svc_exit(void)
{
	if (rc__sun_srv != NULL)
		rc_server_stop(rc__sun_srv);
}

static fd_set rc__sun_fds;

/* sunrpc.h: svc_fdset -- the server's one descriptor. */
fd_set *rc_sunrpc_svc_fdset(void)
{
	rc_server *s = rc__sun_get();
	int fd = s ? rc_server_fd(s) : -1;

	FD_ZERO(&rc__sun_fds);
	if (fd >= 0 && fd < FD_SETSIZE)
		FD_SET(fd, &rc__sun_fds);
	return &rc__sun_fds;
}

/* sunrpc.h: svc_maxfd. */
int rc_sunrpc_svc_maxfd(void)
{
	rc_server *s = rc__sun_get();

	return s ? rc_server_fd(s) : -1;
}

/* sunrpc.h: svc_getreq_common. */
void rc_sunrpc_svc_getreq_common(int fd)
{
	rc_server *s = rc__sun_get();

	if (s != NULL && fd >= 0 && fd == rc_server_fd(s))
		rc_server_step(s, 0);
}

/* sunrpc.h: svc_getreqset. */
void rc_sunrpc_svc_getreqset(fd_set *fds)
{
	int fd = rc_sunrpc_svc_maxfd();

	if (fds != NULL && fd >= 0 && fd < FD_SETSIZE && FD_ISSET(fd, fds))
		rc_sunrpc_svc_getreq_common(fd);
}

/* sunrpc.h: pmap_set. */
bool rc_sunrpc_pmap_set(rpcprog_t prog, rpcvers_t vers, int protocol, u_short port)
{
	char ua[RC__RPCB_UADDR_MAX];

	if (protocol != IPPROTO_UDP && protocol != IPPROTO_TCP)
		return false;
	snprintf(ua, sizeof(ua), "0.0.0.0.%u.%u", port >> 8, port & 0xffu);
	return rc__rpcb_local_set(true, prog, vers, protocol == IPPROTO_UDP ? "udp" : "tcp", ua) ==
	       RC_OK;
}

/* sunrpc.h: pmap_unset. */
bool rc_sunrpc_pmap_unset(rpcprog_t prog, rpcvers_t vers)
{
	return rc__rpcb_local_set(false, prog, vers, "", "") == RC_OK;
}

/* sunrpc.h: rpcb_set. */
bool rc_sunrpc_rpcb_set(rpcprog_t prog, rpcvers_t vers, const struct netconfig *nc,
                        const struct netbuf *addr)
{
	char ua[RC__RPCB_UADDR_MAX];

	if (nc == NULL || nc->nc_netid == NULL || addr == NULL || addr->buf == NULL ||
	    !rc__uaddr_format(addr->buf, ua, sizeof(ua)))
		return false;
	return rc__rpcb_local_set(true, prog, vers, nc->nc_netid, ua) == RC_OK;
}

/* sunrpc.h: rpcb_unset. */
bool rc_sunrpc_rpcb_unset(rpcprog_t prog, rpcvers_t vers, const struct netconfig *nc)
{
	const char *netid = nc && nc->nc_netid ? nc->nc_netid : "";

	return rc__rpcb_local_set(false, prog, vers, netid, "") == RC_OK;
}

/*
 * The rest of the Sun RPCSEC_GSS API (<rpc/rpcsec_gss.h>, <rpc/auth_gss.h> from remotecall's
 * compat folder), written as a libtirpc program would be: a forked Sun server (svc_vc_create,
 * rpc_gss_set_svc_name, rpc_gss_set_callback for versions 1 to 3, rpc_gss_getcred,
 * rpc_gss_svc_max_data_length, rq_clntcred) and a client in the parent (authgss_create_default,
 * is_authgss_client, rpc_gss_max_data_length, rpc_gss_set_defaults, rpc_gss_seccreate with its
 * options, rpc_gss_get_error, rpc_createerr). Run by sun_gss.sh inside the fixture's realm;
 * prints what it checked, exits 0 when all held.
 *
 *   program 0x20000529, versions 1 (callback accepts, cookie), 2 (callback accepts and locks
 *   the service), 3 (callback refuses); procedure 1 INFO(void) -> string, what the server saw.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rpc/auth_gss.h>
#include <rpc/rpc.h>
#include <rpc/rpcsec_gss.h>

#define API_PROG 0x20000529u
#define API_INFO 1u

static int fails;

#define CHECK(cond, ...)                                                                     \
	do {                                                                                 \
		if (cond) {                                                                  \
			printf("ok: ");                                                      \
		} else {                                                                     \
			printf("FAIL: ");                                                    \
			fails++;                                                             \
		}                                                                            \
		printf(__VA_ARGS__);                                                         \
		printf("\n");                                                                \
	} while (0)

static bool_t xdr_nothing(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

static bool_t xdr_text(XDR *x, char **s)
{
	return xdr_string(x, s, 1024);
}

/* ---- the server (child) ------------------------------------------------------------------- */

static int callbacks[4];   /* callback runs per version */
static int cookie_value = 42;

static bool_t callback(struct svc_req *rq, gss_cred_id_t deleg, gss_ctx_id_t ctx,
		       rpc_gss_lock_t *lock, void **cookie)
{
	(void)deleg;
	callbacks[rq->rq_vers]++;
	if (ctx == GSS_C_NO_CONTEXT || lock->raw_cred == NULL ||
	    lock->raw_cred->client_principal == NULL)
		return FALSE;
	*cookie = &cookie_value;
	if (rq->rq_vers == 2)
		lock->locked = TRUE;
	return rq->rq_vers != 3;
}

static void dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	char buf[1024], *out = buf;
	rpc_gss_rawcred_t *raw = NULL;
	rpc_gss_ucred_t *uc = NULL;
	void *cookie = NULL;

	if (rq->rq_proc == 0) {
		svc_sendreply(xprt, (xdrproc_t)xdr_nothing, NULL);
		return;
	}
	if (rq->rq_proc != API_INFO) {
		svcerr_noproc(xprt);
		return;
	}
	if (!rpc_gss_getcred(rq, &raw, &uc, &cookie) || raw == NULL) {
		snprintf(buf, sizeof buf, "no-gss");
	} else {
		rpc_gss_rawcred_t *cc = rq->rq_clntcred;
		snprintf(buf, sizeof buf,
			 "principal=%.*s service=%d mech=%s svcname=%s cookie=%d callbacks=%d "
			 "clntcred=%d maxdata=%d ucred=%s",
			 raw->client_principal->len, raw->client_principal->name, (int)raw->service,
			 raw->mechanism, raw->svc_principal, cookie ? *(int *)cookie : -1,
			 callbacks[rq->rq_vers], cc == raw && cc->service == raw->service,
			 rpc_gss_svc_max_data_length(rq, 1000), uc ? "yes" : "no");
	}
	svc_sendreply(xprt, (xdrproc_t)xdr_text, (char *)&out);
}

static void serve(int fd)
{
	SVCXPRT *x = svc_vc_create(fd, 0, 0);
	rpc_gss_callback_t cb;

	if (x == NULL)
		_exit(3);
	for (u_int v = 1; v <= 3; v++) {
		cb.program = API_PROG;
		cb.version = v;
		cb.callback = callback;
		if (!svc_register(x, API_PROG, v, dispatch, 0) || !rpc_gss_set_callback(&cb))
			_exit(4);
		if (!rpc_gss_set_svc_name("nfs@localhost", "kerberos_v5", 0, API_PROG, v))
			_exit(5); /* (the same name for each version) */
	}
	svc_run();
	_exit(6);
}

/* ---- the client (parent) ------------------------------------------------------------------ */

static CLIENT *client(const struct sockaddr_in *sin, u_int vers)
{
	int sock = RPC_ANYSOCK;
	CLIENT *cl = clnttcp_create((struct sockaddr_in *)sin, API_PROG, vers, &sock, 0, 0);

	if (cl == NULL) {
		clnt_pcreateerror("sun_gss_api: clnttcp_create");
		exit(1);
	}
	return cl;
}

/* INFO into buf; the call's status. */
static enum clnt_stat info(CLIENT *cl, char *buf, size_t len)
{
	struct timeval tmo = {20, 0};
	char *s = NULL;
	enum clnt_stat st = clnt_call(cl, API_INFO, (xdrproc_t)xdr_nothing, NULL,
				      (xdrproc_t)xdr_text, (char *)&s, tmo);

	snprintf(buf, len, "%s", st == RPC_SUCCESS && s ? s : clnt_sperror(cl, "INFO"));
	if (st == RPC_SUCCESS)
		clnt_freeres(cl, (xdrproc_t)xdr_text, (char *)&s);
	return st;
}

int main(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t sl = sizeof sin;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	char buf[1100];
	rpc_gss_error_t e;
	pid_t pid;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof sin) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&sin, &sl)) {
		perror("sun_gss_api: socket");
		return 1;
	}
	if ((pid = fork()) < 0)
		return 1;
	if (pid == 0)
		serve(fd);
	close(fd);

	/* version 1: authgss_create_default, integrity; the callback once per context */
	CLIENT *cl = client(&sin, 1);
	struct rpc_gss_sec sec = {GSS_C_NO_OID, GSS_C_QOP_DEFAULT, RPCSEC_GSS_SVC_INTEGRITY,
				  GSS_C_NO_CREDENTIAL, 0};
	AUTH *au = authgss_create_default(cl, "nfs@localhost", &sec);
	CHECK(au != NULL, "authgss_create_default(nfs@localhost, integrity)");
	if (au == NULL)
		goto out;
	auth_destroy(cl->cl_auth);
	cl->cl_auth = au;
	CHECK(is_authgss_client(cl), "is_authgss_client");
	CHECK(info(cl, buf, sizeof buf) == RPC_SUCCESS && info(cl, buf, sizeof buf) == RPC_SUCCESS &&
		      strstr(buf, "principal=rcuser@RC.TEST service=2 mech=kerberos_v5 "
				  "svcname=nfs@localhost cookie=42 callbacks=1 clntcred=1") != NULL,
	      "two calls, the server's view: %s", buf);
	int m_integ = rpc_gss_max_data_length(au, 1000);
	CHECK(m_integ > 900 && m_integ < 988 && m_integ % 4 == 0,
	      "rpc_gss_max_data_length(integrity, 1000) = %d", m_integ);
	CHECK(strstr(buf, "maxdata=") && atoi(strstr(buf, "maxdata=") + 8) == m_integ,
	      "rpc_gss_svc_max_data_length agrees with the client's");
	CHECK(rpc_gss_set_defaults(au, rpcsec_gss_svc_privacy, NULL), "rpc_gss_set_defaults(privacy)");
	int m_priv = rpc_gss_max_data_length(au, 1000);
	CHECK(m_priv > 900 && m_priv < 996 && m_priv % 4 == 0,
	      "rpc_gss_max_data_length(privacy, 1000) = %d", m_priv);
	CHECK(info(cl, buf, sizeof buf) == RPC_SUCCESS && strstr(buf, "service=3") &&
		      strstr(buf, "callbacks=1"),
	      "a call under privacy: %s", buf);
	CHECK(!rpc_gss_set_defaults(au, (rpc_gss_service_t)7, NULL), "rpc_gss_set_defaults(7) refused");
	rpc_gss_get_error(&e);
	CHECK(e.rpc_gss_error == RPC_GSS_ER_SYSTEMERROR && e.system_error == EINVAL,
	      "rpc_gss_get_error after it: (%d, %d)", e.rpc_gss_error, e.system_error);
	CHECK(rpc_gss_max_data_length(authnone_create(), 1000) == 0,
	      "rpc_gss_max_data_length of AUTH_NONE: 0");

	/* AUTH_NONE and back: cl_auth is applied again at the next call */
	cl->cl_auth = authnone_create();
	CHECK(info(cl, buf, sizeof buf) == RPC_SUCCESS && strcmp(buf, "no-gss") == 0,
	      "cl_auth AUTH_NONE: %s", buf);
	cl->cl_auth = au;
	CHECK(info(cl, buf, sizeof buf) == RPC_SUCCESS && strstr(buf, "service=3"),
	      "cl_auth the GSS AUTH again: the same context (%s)", strstr(buf, "callbacks"));

	/* an unknown server principal: NULL, EACCES, RPC_AUTHERROR; the client still works */
	rpc_gss_options_ret_t ret;
	AUTH *bad = rpc_gss_seccreate(cl, "nosuch@localhost", "kerberos_v5",
				      rpcsec_gss_svc_integrity, NULL, NULL, &ret);
	rpc_gss_get_error(&e);
	CHECK(bad == NULL && e.rpc_gss_error == RPC_GSS_ER_SYSTEMERROR && e.system_error == EACCES &&
		      rpc_createerr.cf_stat == RPC_AUTHERROR,
	      "rpc_gss_seccreate(nosuch@localhost): NULL, (%d, %d), %s", e.rpc_gss_error,
	      e.system_error, clnt_sperrno(rpc_createerr.cf_stat));
	CHECK(info(cl, buf, sizeof buf) == RPC_SUCCESS && strstr(buf, "service=3"),
	      "the client's AUTH goes on after the failure: %s", buf);
	CHECK(rpc_gss_seccreate(cl, "nfs@localhost", "des", rpcsec_gss_svc_none, NULL, NULL,
				NULL) == NULL,
	      "rpc_gss_seccreate with mechanism \"des\": NULL");
	auth_destroy(au);
	clnt_destroy(cl);

	/* version 2: rpc_gss_seccreate with options (time_req goes to gss_init_sec_context; MIT
	 * krb5 gives a context the ticket's lifetime whatever it asks); the callback locks the
	 * service */
	cl = client(&sin, 2);
	rpc_gss_options_req_t req = {0, 600, GSS_C_NO_CREDENTIAL, GSS_C_NO_CHANNEL_BINDINGS};
	memset(&ret, 0, sizeof ret);
	au = rpc_gss_seccreate(cl, "nfs@localhost", "kerberos_v5", rpcsec_gss_svc_integrity, NULL,
			       &req, &ret);
	CHECK(au != NULL && ret.rpcsec_version == 1 && ret.gss_context != GSS_C_NO_CONTEXT &&
		      (ret.ret_flags & GSS_C_MUTUAL_FLAG) && ret.time_ret > 0 &&
		      strcmp(ret.actual_mechanism, "kerberos_v5") == 0,
	      "rpc_gss_seccreate with options: version %u, flags %#x, %d s, %s", ret.rpcsec_version,
	      (unsigned)ret.ret_flags, ret.time_ret, ret.actual_mechanism);
	if (au != NULL) {
		cl->cl_auth = au;
		CHECK(info(cl, buf, sizeof buf) == RPC_SUCCESS && strstr(buf, "service=2"),
		      "version 2, integrity: %s", buf);
		rpc_gss_set_defaults(au, rpcsec_gss_svc_privacy, NULL);
		struct rpc_err re;
		enum clnt_stat st = info(cl, buf, sizeof buf);
		clnt_geterr(cl, &re);
		CHECK(st == RPC_AUTHERROR && re.re_why == AUTH_REJECTEDCRED,
		      "version 2, privacy after the callback locked integrity: %s", buf);
		rpc_gss_set_defaults(au, rpcsec_gss_svc_integrity, NULL);
		CHECK(info(cl, buf, sizeof buf) == RPC_SUCCESS && strstr(buf, "service=2"),
		      "version 2, integrity again: served");
		cl->cl_auth = authnone_create();
		auth_destroy(au);
	}
	clnt_destroy(cl);

	/* version 3: the callback refuses the context */
	cl = client(&sin, 3);
	au = rpc_gss_seccreate(cl, "nfs@localhost", NULL, rpcsec_gss_svc_default, NULL, NULL, NULL);
	CHECK(au != NULL, "rpc_gss_seccreate (default service) on version 3");
	if (au != NULL) {
		struct rpc_err re;
		cl->cl_auth = au;
		enum clnt_stat st = info(cl, buf, sizeof buf);
		clnt_geterr(cl, &re);
		CHECK(st == RPC_AUTHERROR && re.re_why == AUTH_REJECTEDCRED,
		      "version 3, the callback said no: %s", buf);
		cl->cl_auth = authnone_create();
		auth_destroy(au);
	}
	clnt_destroy(cl);
out:
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	printf("%d failed\n", fails);
	return fails ? 1 : 0;
}

/* A libtirpc RPCSEC_GSS server, the peer of remotecall's interop tests and the benchmark
 * baseline: program GSS_ECHO_PROG (tirpc_gss_common.h) over TCP on 127.0.0.1, its acceptor
 * name set with rpc_gss_set_svc_name, ECHO returning the data and rpc_gss_getcred's
 * principal. Calls that are not RPCSEC_GSS are refused (AUTH_TOOWEAK) except NULL.
 *
 *   tirpc_gss_server [--name nfs@localhost] [--port N] [--null-getcred]
 *
 * --null-getcred: NULL calls made with RPCSEC_GSS also call rpc_gss_getcred and print the
 * principal on stderr -- which is what reads freed memory when the NULL is a DESTROY
 * (libtirpc 1.3.3 frees the context before dispatching it).
 * Prints "port N" on stdout once it listens; serves until killed. The keytab is the default
 * (KRB5_KTNAME: run it inside tests/gss/krb5_fixture.sh).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gssapi/gssapi.h>
#include <rpc/rpc.h>
#include <rpc/rpcsec_gss.h>

#include "tirpc_gss_common.h"

static int null_getcred; /* --null-getcred: NULL looks at rpc_gss_getcred too */

static void dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	switch (rq->rq_proc) {
	case GSS_ECHO_NULL:
		if (null_getcred && rq->rq_cred.oa_flavor == RPCSEC_GSS) {
			/* a DESTROY reaches here too (libtirpc dispatches it to NULLPROC) */
			rpc_gss_rawcred_t *raw = NULL;
			rpc_gss_ucred_t *uc = NULL;
			if (rpc_gss_getcred(rq, &raw, &uc, NULL) && raw && raw->client_principal)
				fprintf(stderr, "NULL from %.*s (service %d)\n",
					raw->client_principal->len, raw->client_principal->name,
					(int)raw->service);
		}
		svc_sendreply(xprt, (xdrproc_t)xdr_nothing, NULL);
		return;
	case GSS_ECHO_ECHO: {
		echo_arg a = { 0, NULL };
		echo_res r;
		rpc_gss_rawcred_t *raw = NULL;
		rpc_gss_ucred_t *uc = NULL;
		char who[1100] = "";
		if (rq->rq_cred.oa_flavor != RPCSEC_GSS) {
			svcerr_weakauth(xprt);
			return;
		}
		if (!svc_getargs(xprt, (xdrproc_t)xdr_echo_arg, (char *)&a)) {
			svcerr_decode(xprt);
			return;
		}
		if (rpc_gss_getcred(rq, &raw, &uc, NULL) && raw && raw->client_principal) {
			int n = raw->client_principal->len;
			if (n < 0 || n >= (int)sizeof who)
				n = 0;
			memcpy(who, raw->client_principal->name, (size_t)n);
			who[n] = 0;
		}
		r.data = a;
		r.principal = who;
		if (!svc_sendreply(xprt, (xdrproc_t)xdr_echo_res, (char *)&r))
			fprintf(stderr, "tirpc_gss_server: svc_sendreply failed\n");
		svc_freeargs(xprt, (xdrproc_t)xdr_echo_arg, (char *)&a);
		return;
	}
	default:
		svcerr_noproc(xprt);
	}
}

int main(int argc, char **argv)
{
	const char *name = "nfs@localhost";
	int port = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--name") && i + 1 < argc)
			name = argv[++i];
		else if (!strcmp(argv[i], "--port") && i + 1 < argc)
			port = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--null-getcred"))
			null_getcred = 1;
		else {
			fprintf(stderr, "usage: %s [--name SERVICE@HOST] [--port N] [--null-getcred]\n",
				argv[0]);
			return 2;
		}
	}
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t sl = sizeof sin;
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof sin) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&sin, &sl)) {
		perror("tirpc_gss_server: socket");
		return 1;
	}
	SVCXPRT *x = svc_vc_create(fd, 0, 0);
	if (!x || !svc_register(x, GSS_ECHO_PROG, GSS_ECHO_VERS, dispatch, 0)) {
		fprintf(stderr, "tirpc_gss_server: svc_vc_create/svc_register failed\n");
		return 1;
	}
	if (!rpc_gss_set_svc_name((char *)name, "kerberos_v5", 0, GSS_ECHO_PROG, GSS_ECHO_VERS)) {
		rpc_gss_error_t e;
		rpc_gss_get_error(&e);
		fprintf(stderr, "tirpc_gss_server: rpc_gss_set_svc_name(%s) failed (%d, %d)\n", name,
			e.rpc_gss_error, e.system_error);
		return 1;
	}
	printf("port %d\n", ntohs(sin.sin_port));
	fflush(stdout);
	svc_run();
	return 1;
}

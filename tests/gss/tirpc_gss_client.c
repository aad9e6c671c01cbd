/* A libtirpc RPCSEC_GSS client, the peer of remotecall's interop tests and the benchmark
 * baseline: rpc_gss_seccreate to a host-based service name, ECHO calls with their data and the
 * server's principal checked, then a loop of NULL calls timed.
 *
 *   tirpc_gss_client --port N [--host 127.0.0.1] [--name nfs@localhost]
 *                    [--service none|integrity|privacy|authnone] [--echo BYTES] [--calls N]
 *                    [--expect-principal P] [--destroy]
 *
 * Prints "principal P", "echo BYTES ok" and "null N calls us_per_call X" on stdout; exits 0
 * when every call succeeded. --service authnone times AUTH_NONE NULL calls only (the plaintext
 * baseline of the same run). Without --destroy the AUTH is never destroyed (libtirpc 1.3.3's
 * server frees a context before it dispatches its DESTROY: tests/gss/tirpc_gss.sh records
 * what that does).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <gssapi/gssapi.h>
#include <rpc/rpc.h>
#include <rpc/rpcsec_gss.h>

#include "tirpc_gss_common.h"

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	const char *host = "127.0.0.1", *name = "nfs@localhost", *svcname = "integrity";
	const char *expect = NULL;
	int port = 0, echo = 1000, calls = 1000, destroy = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--port") && i + 1 < argc)
			port = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--host") && i + 1 < argc)
			host = argv[++i];
		else if (!strcmp(argv[i], "--name") && i + 1 < argc)
			name = argv[++i];
		else if (!strcmp(argv[i], "--service") && i + 1 < argc)
			svcname = argv[++i];
		else if (!strcmp(argv[i], "--echo") && i + 1 < argc)
			echo = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
			calls = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--expect-principal") && i + 1 < argc)
			expect = argv[++i];
		else if (!strcmp(argv[i], "--destroy"))
			destroy = 1;
		else {
			fprintf(stderr, "usage: see the comment at the top of tirpc_gss_client.c\n");
			return 2;
		}
	}
	rpc_gss_service_t svc = rpcsec_gss_svc_none;
	int plain = 0; /* --service authnone: AUTH_NONE NULL calls only (the baseline) */
	if (!strcmp(svcname, "authnone"))
		plain = 1;
	else if (!strcmp(svcname, "none"))
		svc = rpcsec_gss_svc_none;
	else if (!strcmp(svcname, "integrity"))
		svc = rpcsec_gss_svc_integrity;
	else if (!strcmp(svcname, "privacy"))
		svc = rpcsec_gss_svc_privacy;
	else {
		fprintf(stderr, "tirpc_gss_client: unknown service %s\n", svcname);
		return 2;
	}
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	if (port <= 0 || inet_pton(AF_INET, host, &sin.sin_addr) != 1) {
		fprintf(stderr, "tirpc_gss_client: --port N (and an IPv4 --host) needed\n");
		return 2;
	}
	int sock = RPC_ANYSOCK;
	CLIENT *cl = clnttcp_create(&sin, GSS_ECHO_PROG, GSS_ECHO_VERS, &sock, 0, 0);
	if (!cl) {
		clnt_pcreateerror("tirpc_gss_client: clnttcp_create");
		return 1;
	}
	struct timeval tmo = { 25, 0 };
	int bad = 0;
	enum clnt_stat st;
	if (plain) {
		double t0 = now_us();
		for (int i = 0; i < calls && !bad; i++) {
			st = clnt_call(cl, GSS_ECHO_NULL, (xdrproc_t)xdr_nothing, NULL,
				       (xdrproc_t)xdr_nothing, NULL, tmo);
			if (st != RPC_SUCCESS) {
				fprintf(stderr, "tirpc_gss_client: NULL: %s\n", clnt_sperror(cl, "call"));
				bad++;
			}
		}
		if (calls > 0)
			printf("null authnone %d calls us_per_call %.2f\n", calls,
			       (now_us() - t0) / calls);
		clnt_destroy(cl);
		return bad ? 1 : 0;
	}
	AUTH *au = rpc_gss_seccreate(cl, (char *)name, "kerberos_v5", svc, NULL, NULL, NULL);
	if (!au) {
		rpc_gss_error_t e;
		rpc_gss_get_error(&e);
		fprintf(stderr, "tirpc_gss_client: rpc_gss_seccreate(%s, %s) failed (%d, %d)\n", name,
			svcname, e.rpc_gss_error, e.system_error);
		clnt_destroy(cl);
		return 1;
	}
	cl->cl_auth = au;

	/* ECHO: the bytes back, and the principal the server saw */
	echo_arg a;
	echo_res r;
	a.len = (u_int)echo;
	a.val = malloc((size_t)echo + 1);
	for (int i = 0; i < echo; i++)
		a.val[i] = (char)(i * 31 + 7);
	memset(&r, 0, sizeof r);
	st = clnt_call(cl, GSS_ECHO_ECHO, (xdrproc_t)xdr_echo_arg, (char *)&a,
				      (xdrproc_t)xdr_echo_res, (char *)&r, tmo);
	if (st != RPC_SUCCESS) {
		fprintf(stderr, "tirpc_gss_client: ECHO: %s\n", clnt_sperror(cl, "call"));
		bad++;
	} else {
		printf("principal %s\n", r.principal ? r.principal : "(none)");
		if (r.data.len != a.len || memcmp(r.data.val, a.val, a.len) != 0) {
			fprintf(stderr, "tirpc_gss_client: ECHO returned other bytes\n");
			bad++;
		} else {
			printf("echo %d ok\n", echo);
		}
		if (expect && (!r.principal || strcmp(r.principal, expect) != 0)) {
			fprintf(stderr, "tirpc_gss_client: principal %s, want %s\n",
				r.principal ? r.principal : "(none)", expect);
			bad++;
		}
		clnt_freeres(cl, (xdrproc_t)xdr_echo_res, (char *)&r);
	}
	free(a.val);

	/* NULL calls, timed */
	if (calls > 0) {
		double t0 = now_us();
		for (int i = 0; i < calls; i++) {
			st = clnt_call(cl, GSS_ECHO_NULL, (xdrproc_t)xdr_nothing, NULL,
				       (xdrproc_t)xdr_nothing, NULL, tmo);
			if (st != RPC_SUCCESS) {
				fprintf(stderr, "tirpc_gss_client: NULL %d: %s\n", i,
					clnt_sperror(cl, "call"));
				bad++;
				break;
			}
		}
		double t1 = now_us();
		printf("null %s %d calls us_per_call %.2f\n", svcname, calls, (t1 - t0) / calls);
	}
	if (destroy) {
		auth_destroy(au); /* sends RPCSEC_GSS_DESTROY */
		cl->cl_auth = authnone_create();
		st = clnt_call(cl, GSS_ECHO_NULL, (xdrproc_t)xdr_nothing, NULL, (xdrproc_t)xdr_nothing,
			       NULL, tmo);
		printf("after destroy: NULL with AUTH_NONE: %s\n", clnt_sperrno(st));
	}
#ifdef REMOTECALL_SUNRPC_GSS_H
	/* built on remotecall (sun_gss_client): auth_destroy sends no DESTROY there, so the AUTH
	 * is freed; libtirpc's would send one, which its 1.3.3 server mishandles (see above) */
	if (!destroy) {
		cl->cl_auth = authnone_create();
		auth_destroy(au);
	}
#endif
	clnt_destroy(cl);
	return bad ? 1 : 0;
}

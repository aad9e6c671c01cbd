/*
 * A hand-written Sun RPC server of the bench program (no rpcgen dispatcher): svc_create with
 * nettype "netpath" (udp, tcp, udp6, tcp6, each registered with rpcbind), a dispatch function
 * built from svc_getargs / svc_sendreply / svc_freeargs / svcerr_*, svc_getcaller, and
 * svc_run. Built on remotecall's compat headers (porting_rpcgen). Prints "listening N" with
 * the number of transports, then serves until killed. BENCH_WORK answers the caller's address
 * family (AF_INET, AF_INET6: the datagram sender's or the connection peer's) instead of working.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static long long total;

/* The dispatch function: every procedure of (BENCH_PROG, BENCH_VERS). */
static void dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	bench_data data;
	quad_t q;
	u_int fam;
	int n;

	memset(&data, 0, sizeof(data));
	switch (rq->rq_proc) {
	case NULLPROC:
		svc_sendreply(xprt, (xdrproc_t)xdr_void, NULL);
		return;
	case BENCH_ECHO:
	case BENCH_SENDR:
		if (!svc_getargs(xprt, (xdrproc_t)xdr_bench_data, (caddr_t)&data)) {
			svcerr_decode(xprt);
			return;
		}
		n = (int)data.bench_data_len;
		if (rq->rq_proc == BENCH_ECHO)
			svc_sendreply(xprt, (xdrproc_t)xdr_bench_data, (caddr_t)&data);
		else
			svc_sendreply(xprt, (xdrproc_t)xdr_int, (caddr_t)&n);
		svc_freeargs(xprt, (xdrproc_t)xdr_bench_data, (caddr_t)&data);
		return;
	case BENCH_ADD:
		if (!svc_getargs(xprt, (xdrproc_t)xdr_quad_t, (caddr_t)&q)) {
			svcerr_decode(xprt);
			return;
		}
		total += q;
		q = total;
		svc_sendreply(xprt, (xdrproc_t)xdr_quad_t, (caddr_t)&q);
		return;
	case BENCH_WORK:
		fam = svc_getcaller(xprt)->sin_family;
		svc_sendreply(xprt, (xdrproc_t)xdr_u_int, (caddr_t)&fam);
		return;
	case BENCH_INT:
		svcerr_weakauth(xprt);
		return;
	default:
		svcerr_noproc(xprt);
		return;
	}
}

int main(void)
{
	int n;

	rpcb_unset(BENCH_PROG, BENCH_VERS, NULL);
	n = svc_create(dispatch, BENCH_PROG, BENCH_VERS, "netpath");
	if (n == 0) {
		fprintf(stderr, "svc_create failed\n");
		return 1;
	}
	printf("listening %d\n", n);
	fflush(stdout);
	svc_run();
	fprintf(stderr, "svc_run returned\n");
	return 1;
}

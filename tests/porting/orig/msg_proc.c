/*
 * msg_proc.c -- the message server: the remote procedure, and a main that serves it over TCP
 * on a port of its choosing (printed as "listening tcp://127.0.0.1:PORT"), without rpcbind.
 * Classic Sun RPC: rpcgen's dispatcher (rpcgen -m), libtirpc's svc calls.
 */
#include <stdio.h>
#include <stdlib.h>
#include <rpc/rpc.h>
#include "msg.h"

void messageprog_1(struct svc_req *rqstp, SVCXPRT *transp);

int *printmessage_1_svc(char **msg, struct svc_req *req)
{
	static int result;

	(void)req;
	printf("message: %s\n", *msg);
	fflush(stdout);
	result = 1;
	return (&result);
}

int main(void)
{
	SVCXPRT *transp;

	transp = svctcp_create(RPC_ANYSOCK, 0, 0);
	if (transp == NULL) {
		fprintf(stderr, "cannot create tcp service\n");
		exit(1);
	}
	if (!svc_register(transp, MESSAGEPROG, PRINTMESSAGEVERS, messageprog_1, 0)) {
		fprintf(stderr, "unable to register (MESSAGEPROG, PRINTMESSAGEVERS, tcp)\n");
		exit(1);
	}
	printf("listening tcp://127.0.0.1:%d\n", transp->xp_port);
	fflush(stdout);
	svc_run();
	fprintf(stderr, "svc_run returned\n");
	exit(1);
}

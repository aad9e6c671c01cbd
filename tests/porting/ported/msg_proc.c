/*
 * msg_proc.c -- the message server: the remote procedure, and a main that serves it over TCP
 * on a port of its choosing (printed as "listening tcp://127.0.0.1:PORT"), without rpcbind.
 * Ported to remotecall: idlc's procedure signature (result by pointer, a status back), and a
 * remotecall server in place of svctcp_create / svc_register / svc_run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <rpc/rpc.h>
#include "msg.h"

bool_t printmessage_1_svc(char *const *msg, int32_t *result, rc_svc_req *req)
{
	(void)req;
	printf("message: %s\n", *msg);
	fflush(stdout);
	*result = 1;
	return (TRUE);
}

int main(void)
{
	rc_server *srv;
	char uri[128];

	if (rc_server_create(&srv) != RC_OK ||
	    rc_server_listen(srv, "tcp://127.0.0.1:0", uri, sizeof(uri)) != RC_OK) {
		fprintf(stderr, "cannot create tcp service\n");
		exit(1);
	}
	if (messageprog_1_register(srv, NULL) != RC_OK) {
		fprintf(stderr, "unable to register (MESSAGEPROG, PRINTMESSAGEVERS, tcp)\n");
		exit(1);
	}
	printf("listening %s\n", uri);
	fflush(stdout);
	rc_server_run(srv);
	fprintf(stderr, "rc_server_run returned\n");
	exit(1);
}

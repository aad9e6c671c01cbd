/*
 * rprintmsg HOST PORT MESSAGE -- ask the message server at HOST:PORT (TCP) to print MESSAGE.
 * Classic Sun RPC: rpcgen's stub, libtirpc's client calls.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rpc/rpc.h>
#include "msg.h"

int main(int argc, char *argv[])
{
	CLIENT *clnt;
	int *result;
	char *server, *message;
	struct sockaddr_in addr;
	int sock = RPC_ANYSOCK;

	if (argc != 4) {
		fprintf(stderr, "usage: %s host port message\n", argv[0]);
		exit(1);
	}
	server = argv[1];
	message = argv[3];
	memset(&addr, 0, sizeof(addr));
	addr.sin_family = AF_INET;
	addr.sin_port = htons((unsigned short)atoi(argv[2]));
	if (inet_pton(AF_INET, server, &addr.sin_addr) != 1) {
		fprintf(stderr, "%s: %s: not an IPv4 address\n", argv[0], server);
		exit(1);
	}
	clnt = clnttcp_create(&addr, MESSAGEPROG, PRINTMESSAGEVERS, &sock, 0, 0);
	if (clnt == NULL) {
		clnt_pcreateerror(server);
		exit(1);
	}
	result = printmessage_1(&message, clnt);
	if (result == NULL) {
		clnt_perror(clnt, server);
		exit(1);
	}
	if (*result == 0) {
		fprintf(stderr, "%s: %s couldn't print your message\n", argv[0], server);
		exit(1);
	}
	printf("Message delivered to %s\n", server);
	clnt_destroy(clnt);
	exit(0);
}

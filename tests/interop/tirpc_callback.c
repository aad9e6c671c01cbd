/*
 * tirpc-callback URI TIMEOUT_S -- a libtirpc client (clnttcp_create, no rpcbind) of
 * examples/notify's server: it subscribes (NOTIFY_SUBSCRIBE "tirpc"), which makes the server
 * keep a back channel on this connection, then publishes (NOTIFY_PUBLISH), for which the
 * server calls every subscriber back -- this one too -- before it answers. libtirpc has no back
 * channel: its clnt_vc_call skips a record that is not a reply as it skips replies to other
 * xids, so the server's call to it goes unanswered until the server's own timeout, and the
 * PUBLISH reply that follows is read as usual. Prints
 *   subscribe: RPC_SUCCESS id N
 *   publish: RPC_SUCCESS took K in T ms
 * and exits 0 when both calls succeeded.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rpc/rpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOTIFY_PROG 0x20000a05
#define NOTIFY_VERS 1

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	const char *port;
	int sock = RPC_ANYSOCK;
	CLIENT *c;
	struct timeval tv = {0, 0};
	char *topic = "tirpc", *text = "hello from libtirpc";
	unsigned id = 0, took = 99;
	enum clnt_stat st;
	double t0;

	if (argc < 3 || strncmp(argv[1], "tcp://127.0.0.1:", 16) != 0) {
		fprintf(stderr, "usage: %s tcp://127.0.0.1:PORT TIMEOUT_S\n", argv[0]);
		return 2;
	}
	port = argv[1] + 16;
	tv.tv_sec = atoi(argv[2]);
	a.sin_port = htons((unsigned short)atoi(port));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((c = clnttcp_create(&a, NOTIFY_PROG, NOTIFY_VERS, &sock, 0, 0)) == NULL) {
		clnt_pcreateerror("clnttcp_create");
		return 1;
	}
	st = clnt_call(c, 1, (xdrproc_t)xdr_wrapstring, (caddr_t)&topic, (xdrproc_t)xdr_u_int,
	               (caddr_t)&id, tv);
	printf("subscribe: %s id %u\n", st == RPC_SUCCESS ? "RPC_SUCCESS" : clnt_sperrno(st), id);
	if (st != RPC_SUCCESS)
		return 1;
	t0 = now_ms();
	st = clnt_call(c, 2, (xdrproc_t)xdr_wrapstring, (caddr_t)&text, (xdrproc_t)xdr_u_int,
	               (caddr_t)&took, tv);
	printf("publish: %s took %u in %.0f ms\n", st == RPC_SUCCESS ? "RPC_SUCCESS" : clnt_sperrno(st),
	       took, now_ms() - t0);
	clnt_destroy(c);
	return st == RPC_SUCCESS ? 0 : 1;
}

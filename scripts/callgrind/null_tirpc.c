/*
 * null_tirpc udp|tcp PORT N -- N clnt_call(BENCH_NULL) on 127.0.0.1:PORT with libtirpc,
 * nothing else: the libtirpc side of scripts/callgrind/null-call.sh.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>

#include "bench.h"

int main(int argc, char **argv)
{
	struct sockaddr_in a;
	struct timeval total = {25, 0}, retry = {1, 0};
	int sock = RPC_ANYSOCK, n;
	CLIENT *c;

	if (argc != 4)
		return 2;
	n = atoi(argv[3]);
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)atoi(argv[2]));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c = strcmp(argv[1], "udp") == 0 ? clntudp_create(&a, BENCH_PROG, BENCH_VERS, retry, &sock)
	                                : clnttcp_create(&a, BENCH_PROG, BENCH_VERS, &sock, 0, 0);
	if (c == NULL)
		return 1;
	for (int i = 0; i < n; i++)
		if (clnt_call(c, BENCH_NULL, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void, NULL,
		              total) != RPC_SUCCESS)
			return 1;
	clnt_destroy(c);
	return 0;
}

/*
 * bcast_sun -- the broadcast test's Sun-API client (tests/runtime/broadcast.sh), built on
 * <remotecall/sunrpc.h> through the compat folder: libtirpc's broadcast calls through rpcbind.
 *   bcast_sun clnt PROG STOP      clnt_broadcast of procedure 1 of (PROG, 1); eachresult
 *                                 returns TRUE at the STOP-th reply
 *   bcast_sun exp PROG INIT WAIT  rpc_broadcast_exp(..., INIT, WAIT, "udp"), never stopped
 * Prints "reply ID from ADDR:PORT" per reply (ADDR:PORT: the responder and its program's
 * port), then "replies N status TEXT" (clnt_sperrno's text).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>

static int replies, stop_at;

static void show(const u_int *id, const struct sockaddr_in *a)
{
	char text[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text));
	printf("reply %u from %s:%u\n", *id, text, (unsigned)ntohs(a->sin_port));
	replies++;
}

/* clnt_broadcast's eachresult. */
static bool_t each(caddr_t res, struct sockaddr_in *addr)
{
	show((const u_int *)(void *)res, addr);
	return stop_at > 0 && replies >= stop_at;
}

/* rpc_broadcast's eachresult. */
static bool_t each_nc(caddr_t res, const struct netbuf *nb, const struct netconfig *nc)
{
	if (nc == NULL || strcmp(nc->nc_netid, "udp") != 0 || nb->len != sizeof(struct sockaddr_in))
		printf("bad netbuf or netconfig\n");
	show((const u_int *)(void *)res, nb->buf);
	return FALSE;
}

int main(int argc, char **argv)
{
	u_int id = 0;
	enum clnt_stat st;

	if (argc == 4 && strcmp(argv[1], "clnt") == 0) {
		stop_at = atoi(argv[3]);
		st = clnt_broadcast((rpcprog_t)strtoul(argv[2], NULL, 0), 1, 1, xdr_void, NULL,
		                    xdr_u_int, &id, each);
	} else if (argc == 5 && strcmp(argv[1], "exp") == 0) {
		st = rpc_broadcast_exp((rpcprog_t)strtoul(argv[2], NULL, 0), 1, 1, xdr_void, NULL,
		                       xdr_u_int, &id, each_nc, atoi(argv[3]), atoi(argv[4]), "udp");
	} else {
		fprintf(stderr, "usage: bcast_sun clnt PROG STOP | exp PROG INIT WAIT\n");
		return 2;
	}
	printf("replies %d status %s\n", replies, clnt_sperrno(st));
	return 0;
}

/*
 * bcast_peer -- both ends of the broadcast test (tests/runtime/broadcast.sh):
 *   bcast_peer serve PORT PROG ID [rpcbind]
 *                                   a remotecall server of (PROG, 1) on udp://0.0.0.0:PORT whose
 *                                   procedure 1 answers ID (a raw dispatcher), registered with
 *                                   the local rpcbind with "rpcbind"; prints "listening" (once
 *                                   registered), serves until SIGTERM
 *   bcast_peer rc URI PROG MS [STOP] rc_broadcast of procedure 1 to URI for MS ms (STOP: stop
 *                                   after that many replies); prints "reply ID from ADDR" per
 *                                   reply, then "replies N status NAME"
 */
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <remotecall/remotecall.h>

static rc_server *srv;
static unsigned id;

/* SIGTERM: stop the server. */
static void on_term(int sig)
{
	(void)sig;
	rc_server_stop(srv);
}

/* The raw dispatcher: procedure 0 answers nothing, 1 answers id, others PROC_UNAVAIL. */
static void serve_call(rc_svc_req *req, void *ctx)
{
	(void)ctx;
	if (rc_svc_req_procnum(req) == 0)
		rc_svc_req_reply(req, (rc_xdrproc)rc_xdr_void, NULL);
	else if (rc_svc_req_procnum(req) == 1)
		rc_svc_req_reply(req, (rc_xdrproc)rc_xdr_u_int, &id);
	else
		rc_svc_req_error(req, RC_SVC_PROC_UNAVAIL, 0, 0);
}

/* What the broadcast handler counts. */
typedef struct seen {
	int n;
	int stop_after; /* 0: never stop */
} seen;

/* Print an address as text. */
static void addr_text(const struct sockaddr *sa, char *buf, size_t len)
{
	if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, buf,
		          (socklen_t)len);
	else
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, buf,
		          (socklen_t)len);
}

/* rc_broadcast's handler: print the reply, stop after stop_after. */
static bool on_reply(void *udata, const void *res, const struct sockaddr *from, unsigned len)
{
	seen *s = udata;
	char a[64];

	(void)len;
	addr_text(from, a, sizeof(a));
	printf("reply %u from %s\n", *(const uint32_t *)res, a);
	s->n++;
	return s->stop_after > 0 && s->n >= s->stop_after;
}

int main(int argc, char **argv)
{
	if ((argc == 5 || argc == 6) && strcmp(argv[1], "serve") == 0) {
		char uri[64];
		snprintf(uri, sizeof(uri), "udp://0.0.0.0:%s", argv[2]);
		id = (unsigned)strtoul(argv[4], NULL, 0);
		if (rc_server_create(&srv) != RC_OK || rc_server_listen(srv, uri, NULL, 0) != RC_OK ||
		    rc_server_register_raw(srv, (uint32_t)strtoul(argv[3], NULL, 0), 1, serve_call,
		                           NULL) != RC_OK) {
			fprintf(stderr, "bcast_peer: cannot serve on %s\n", uri);
			return 1;
		}
		if (argc == 6 && rc_server_rpcbind(srv, true) != RC_OK) {
			fprintf(stderr, "bcast_peer: cannot register with rpcbind\n");
			return 1;
		}
		signal(SIGTERM, on_term);
		printf("listening\n");
		fflush(stdout);
		rc_server_run(srv);
		rc_server_destroy(srv);
		return 0;
	}
	if ((argc == 5 || argc == 6) && strcmp(argv[1], "rc") == 0) {
		seen s = {0, argc == 6 ? atoi(argv[5]) : 0};
		rc_status st = rc_broadcast(argv[2], (uint32_t)strtoul(argv[3], NULL, 0), 1, 1,
		                            (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_u_int,
		                            sizeof(uint32_t), on_reply, &s,
		                            (uint32_t)strtoul(argv[4], NULL, 0));
		printf("replies %d status %s\n", s.n, rc_status_name(st));
		return 0;
	}
	fprintf(stderr, "usage: bcast_peer serve PORT PROG ID [rpcbind] | rc URI PROG MS [STOP]\n");
	return 2;
}

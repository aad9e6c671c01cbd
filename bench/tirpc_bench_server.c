/*
 * tirpc-bench-server -- the libtirpc peer: serves bench.x through rpcgen's dispatcher
 * (bench_prog_1 in the rpcgen -m output) with libtirpc's svc_dg / svc_vc transports.
 *
 *   tirpc-bench-server --listen URI [--listen URI]... [--threads N] [--rpcbind]
 *
 * Same options and output as rc-bench-server: one "listening URI" line per listener (the real
 * port), served until SIGINT/SIGTERM, exit 0. libtirpc serves from one thread; --threads is
 * accepted for symmetry and ignored (with a note on stderr when N > 1). Without --rpcbind
 * nothing is registered with rpcbind. The descriptor limit is raised from soft to hard at
 * start, as rc-bench-server does.
 */
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rpc/pmap_clnt.h>
#include <rpc/rpc.h>

#include "bench.h" /* rpcgen's */
#include "common.h"

static const char *progname = "tirpc-bench-server";
static volatile sig_atomic_t g_stop;
static int64_t g_total; /* ADD's total (one thread serves) */

void bench_prog_1(struct svc_req *rqstp, SVCXPRT *transp);

/* ---- the procedures (rpcgen -M signatures) ------------------------------------------------- */

bool_t bench_null_1_svc(void *arg, void *res, struct svc_req *req)
{
	(void)arg, (void)res, (void)req;
	return TRUE;
}

bool_t bench_int_1_svc(int *arg, void *res, struct svc_req *req)
{
	(void)arg, (void)res, (void)req;
	return TRUE;
}

bool_t bench_send_1_svc(bench_data *arg, void *res, struct svc_req *req)
{
	(void)arg, (void)res, (void)req;
	return TRUE;
}

bool_t bench_sendr_1_svc(bench_data *arg, int *res, struct svc_req *req)
{
	(void)req;
	*res = (int)arg->bench_data_len;
	return TRUE;
}

bool_t bench_echo_1_svc(bench_data *arg, bench_data *res, struct svc_req *req)
{
	(void)req;
	res->bench_data_len = arg->bench_data_len;
	res->bench_data_val = NULL;
	if (arg->bench_data_len) {
		res->bench_data_val = malloc(arg->bench_data_len);
		if (!res->bench_data_val)
			return FALSE;
		memcpy(res->bench_data_val, arg->bench_data_val, arg->bench_data_len);
	}
	return TRUE;
}

bool_t bench_work_1_svc(u_int *arg, u_int *res, struct svc_req *req)
{
	(void)req;
	struct timespec ts = {(time_t)(*arg / 1000000u), (long)(*arg % 1000000u) * 1000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !g_stop)
		;
	*res = *arg;
	return TRUE;
}

bool_t bench_add_1_svc(quad_t *arg, quad_t *res, struct svc_req *req)
{
	(void)req;
	g_total += (int64_t)*arg;
	*res = (quad_t)g_total;
	return TRUE;
}

/* rpcgen -M: called after each reply to free the result. */
int bench_prog_1_freeresult(SVCXPRT *transp, xdrproc_t xdr_result, caddr_t result)
{
	(void)transp;
	xdr_free(xdr_result, result);
	return 1;
}

/* ---- main -------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: %s --listen URI [--listen URI]... [--threads N] [--rpcbind]\n"
	        "  --listen URI   udp://HOST:PORT or tcp://HOST:PORT (port 0: any); prints\n"
	        "                 'listening URI' with the real port for each\n"
	        "  --threads N    accepted for symmetry; libtirpc serves from one thread\n"
	        "  --rpcbind      register with the local rpcbind (unregistered at exit)\n",
	        progname);
}

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"listen", required_argument, NULL, 'l'},
		{"threads", required_argument, NULL, 't'},
		{"rpcbind", no_argument, NULL, 'r'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *listen_uris[BENCH_MAX_LISTEN];
	int nlisten = 0;
	uint64_t threads = 1;
	bool rpcbind = false;
	int c;
	opterr = 0;
	(void)bench_raise_nofile(); /* many connections: as rc-bench-server */
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			if (nlisten == BENCH_MAX_LISTEN) {
				fprintf(stderr, "%s: at most %d --listen\n", progname, BENCH_MAX_LISTEN);
				usage(stderr);
				return 2;
			}
			listen_uris[nlisten++] = optarg;
			break;
		case 't':
			if (!bench_parse_u64(optarg, &threads) || threads == 0 || threads > 1024) {
				fprintf(stderr, "%s: bad --threads '%s'\n", progname, optarg);
				usage(stderr);
				return 2;
			}
			break;
		case 'r':
			rpcbind = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "%s: bad option '%s'\n", progname, argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || nlisten == 0) {
		if (optind < argc)
			fprintf(stderr, "%s: unexpected argument '%s'\n", progname, argv[optind]);
		else
			fprintf(stderr, "%s: --listen is required\n", progname);
		usage(stderr);
		return 2;
	}
	if (threads > 1)
		fprintf(stderr, "%s: --threads %u ignored: libtirpc serves from one thread\n",
		        progname, (unsigned)threads);

	/* Signals are blocked except inside ppoll(), so a stop is never missed. */
	sigset_t block, waitmask;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGTERM);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (rpcbind)
		pmap_unset(BENCH_PROG, BENCH_VERS);
	for (int i = 0; i < nlisten; i++) {
		bench_uri u;
		char err[300];
		if (!bench_parse_uri(listen_uris[i], &u, err, sizeof err)) {
			fprintf(stderr, "%s: %s\n", progname, err);
			return 2;
		}
		int fd = socket(u.addr.ss_family, u.tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
		int one = 1;
		if (fd < 0) {
			perror("socket");
			return 1;
		}
		if (u.tcp)
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(fd, (struct sockaddr *)&u.addr, u.addrlen) < 0 ||
		    (u.tcp && listen(fd, SOMAXCONN) < 0)) {
			fprintf(stderr, "%s: %s: %s\n", progname, listen_uris[i], strerror(errno));
			return 1;
		}
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		getsockname(fd, (struct sockaddr *)&ss, &sl);
		SVCXPRT *x = u.tcp ? svc_vc_create(fd, 0, 0) : svc_dg_create(fd, 0, 0);
		if (!x) {
			fprintf(stderr, "%s: %s: cannot create the libtirpc transport\n", progname,
			        listen_uris[i]);
			return 1;
		}
		int port = ntohs(ss.ss_family == AF_INET6
		                         ? ((struct sockaddr_in6 *)&ss)->sin6_port
		                         : ((struct sockaddr_in *)&ss)->sin_port);
		(void)port;
		/* protocol 0: no rpcbind registration; with --rpcbind pmap_set below. */
		if (!svc_register(x, BENCH_PROG, BENCH_VERS, bench_prog_1, 0)) {
			fprintf(stderr, "%s: svc_register failed\n", progname);
			return 1;
		}
		if (rpcbind && !pmap_set(BENCH_PROG, BENCH_VERS, u.tcp ? IPPROTO_TCP : IPPROTO_UDP,
		                         port)) {
			fprintf(stderr, "%s: %s: rpcbind registration failed\n", progname,
			        listen_uris[i]);
			return 1;
		}
		char bound[300];
		bench_format_uri(u.tcp, (struct sockaddr *)&ss, bound, sizeof bound);
		printf("listening %s\n", bound);
	}
	fflush(stdout);

	/* svc_run(), with a way out: the same copy-poll-dispatch loop, under ppoll. */
	struct pollfd *fds = NULL;
	int cap = 0;
	while (!g_stop) {
		int n = svc_max_pollfd;
		if (n > cap) {
			free(fds);
			cap = n;
			fds = bench_xmalloc((size_t)cap * sizeof *fds);
		}
		memcpy(fds, svc_pollfd, (size_t)n * sizeof *fds);
		int r = ppoll(fds, (nfds_t)n, NULL, &waitmask);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			perror("ppoll");
			break;
		}
		if (r > 0)
			svc_getreq_poll(fds, r);
	}
	free(fds);
	if (rpcbind)
		pmap_unset(BENCH_PROG, BENCH_VERS);
	return 0;
}

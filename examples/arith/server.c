/*
 * arith-server -- DOUBLE(n) answers 2n, TRIPLE(n) answers 3n.
 *
 *   arith-server [--listen URI] [--delay MS]
 *
 *   --listen URI  where to listen (default udp://127.0.0.1:0: any free port)
 *   --delay MS    answer after MS milliseconds (a slower or more distant server)
 *
 * Prints "listening URI" with the port it got, serves until SIGINT or SIGTERM, exits 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arith.h"

static unsigned delay_ms;

static void take_time(void)
{
	struct timespec ts = {delay_ms / 1000, (long)(delay_ms % 1000) * 1000000L};
	if (delay_ms > 0)
		nanosleep(&ts, NULL); /* a signal cuts it short: fine */
}

bool double_1_svc(const int32_t *arg, int32_t *res, rc_svc_req *req)
{
	(void)req;
	take_time();
	*res = 2 * *arg;
	return true;
}

bool triple_1_svc(const int32_t *arg, int32_t *res, rc_svc_req *req)
{
	(void)req;
	take_time();
	*res = 3 * *arg;
	return true;
}

static rc_server *srv;

static void on_signal(int sig)
{
	(void)sig;
	rc_server_stop(srv); /* async-signal-safe: rc_server_run returns soon */
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"listen", required_argument, NULL, 'l'},
	                                     {"delay", required_argument, NULL, 'd'},
	                                     {NULL, 0, NULL, 0}};
	const char *listen = "udp://127.0.0.1:0";
	char uri[256];
	int c;

	while ((c = getopt_long(argc, argv, "l:d:", opts, NULL)) != -1) {
		switch (c) {
		case 'l': listen = optarg; break;
		case 'd': delay_ms = (unsigned)strtoul(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: %s [--listen URI] [--delay MS]\n", argv[0]);
			return 2;
		}
	}

	rc_status st = rc_server_create(&srv);
	if (st == RC_OK)
		st = arith_prog_1_register(srv, NULL);
	rc_error err = {.status = st}; /* what went wrong, in words (rc_error_format) */
	if (st == RC_OK && (st = rc_server_listen(srv, listen, uri, sizeof uri)) != RC_OK)
		rc_server_geterr(srv, &err); /* "address already in use", ... */
	if (st != RC_OK) {
		char why[256];
		err.status = st;
		fprintf(stderr, "%s: %s: %s\n", argv[0], listen,
		        rc_error_format(&err, why, sizeof why));
		rc_server_destroy(srv);
		return 1;
	}

	struct sigaction sa; /* from now on SIGINT and SIGTERM stop the server */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("listening %s\n", uri);
	fflush(stdout); /* whoever started us reads the port from this line */

	st = rc_server_run(srv);
	sa.sa_handler = SIG_IGN; /* no rc_server_stop on a destroyed server */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rc_server_destroy(srv);
	if (st != RC_OK) {
		fprintf(stderr, "%s: %s\n", argv[0], rc_strerror(st));
		return 1;
	}
	return 0;
}

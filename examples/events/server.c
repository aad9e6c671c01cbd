/*
 * events-server -- EVENTS_WAIT(ms) sleeps ms milliseconds and answers ms. Several worker
 * threads, so that calls in flight together over UDP are served together and finish in the
 * order of their waits (the calls of one TCP connection are served in turn).
 *
 *   events-server [--listen URI] [--threads N]     (defaults udp://127.0.0.1:0, 8 threads)
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

#include "events.h"

bool events_wait_1_svc(const uint32_t *arg, uint32_t *res, rc_svc_req *req)
{
	(void)req;
	struct timespec ts = {*arg / 1000, (long)(*arg % 1000) * 1000000L};
	nanosleep(&ts, NULL); /* a signal cuts it short: fine */
	*res = *arg;
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
	                                     {"threads", required_argument, NULL, 't'},
	                                     {NULL, 0, NULL, 0}};
	const char *listen = "udp://127.0.0.1:0";
	unsigned threads = 8;
	char uri[256];
	int c;

	while ((c = getopt_long(argc, argv, "l:t:", opts, NULL)) != -1) {
		switch (c) {
		case 'l': listen = optarg; break;
		case 't': threads = (unsigned)strtoul(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: %s [--listen URI] [--threads N]\n", argv[0]);
			return 2;
		}
	}

	rc_status st = rc_server_create(&srv);
	if (st == RC_OK)
		st = events_prog_1_register(srv, NULL);
	if (st == RC_OK)
		st = rc_server_set_threads(srv, threads);
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

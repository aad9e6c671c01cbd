/*
 * rstatus-server -- answers RSTATUS_GET with this host's name, login sessions, uptime and
 * load averages.
 *
 *   rstatus-server [--listen URI]      (default udp://127.0.0.1:0: any free port)
 *
 * Prints "listening URI" with the port it got, serves until SIGINT or SIGTERM, exits 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getloadavg */
#endif
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <utmpx.h>

#include "rstatus.h"

/* Login sessions in utmp; 0 when there is no utmp (a container, say). */
static unsigned count_users(void)
{
	unsigned n = 0;
	struct utmpx *u;

	setutxent();
	while ((u = getutxent()) != NULL)
		if (u->ut_type == USER_PROCESS)
			n++;
	endutxent();
	return n;
}

static uint64_t uptime_seconds(void)
{
	struct timespec ts = {0, 0};
#ifdef CLOCK_BOOTTIME
	clock_gettime(CLOCK_BOOTTIME, &ts); /* Linux: counts suspended time too */
#else
	clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
	return (uint64_t)ts.tv_sec;
}

/* The procedure. *res starts zeroed; what it allocates (host) the server frees after the
 * reply. Returning false would reply SYSTEM_ERR. */
bool rstatus_get_1_svc(rstatus *res, rc_svc_req *req)
{
	(void)req;
	char host[RSTATUS_MAXHOST + 1] = "";

	if (gethostname(host, sizeof host - 1) != 0)
		strcpy(host, "unknown");
	res->host = strdup(host);
	if (res->host == NULL)
		return false;
	res->users = count_users();
	res->uptime = uptime_seconds();
	if (getloadavg(res->load, 3) != 3)
		res->load[0] = res->load[1] = res->load[2] = 0.0;
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
	                                     {NULL, 0, NULL, 0}};
	const char *listen = "udp://127.0.0.1:0";
	char uri[256];
	int c;

	while ((c = getopt_long(argc, argv, "l:", opts, NULL)) != -1) {
		if (c != 'l') {
			fprintf(stderr, "usage: %s [--listen URI]\n", argv[0]);
			return 2;
		}
		listen = optarg;
	}

	rc_status st = rc_server_create(&srv);
	if (st == RC_OK)
		st = rstatus_prog_1_register(srv, NULL);
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

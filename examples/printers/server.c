/*
 * printer-server -- a simulated printer: PRINTER_LOAD answers its name and queue length,
 * PRINTER_PRINT queues a job (logged on stdout) and answers the job's number.
 *
 *   printer-server [--listen URI] [--name NAME] [--queue N] [--delay MS]
 *
 *   --listen URI  where to listen (default udp://127.0.0.1:0: any free port)
 *   --name NAME   the printer's name (default "printer")
 *   --queue N     jobs already waiting (default 0: idle)
 *   --delay MS    answer PRINTER_LOAD after MS milliseconds (a busy or distant host)
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

#include "printers.h"

/* The printer; passed to the procedures as the registration's context. */
typedef struct printer {
	const char *name;
	unsigned queue;    /* jobs waiting */
	unsigned next_job; /* number of the next job */
	unsigned delay_ms;
} printer;

bool printer_load_1_svc(queue_status *res, rc_svc_req *req)
{
	printer *p = rc_svc_req_context(req);

	if (p->delay_ms > 0) {
		struct timespec ts = {p->delay_ms / 1000, (long)(p->delay_ms % 1000) * 1000000L};
		nanosleep(&ts, NULL); /* a signal cuts it short: fine */
	}
	res->name = strdup(p->name); /* freed by the server after the reply */
	res->queue = p->queue;
	return res->name != NULL;
}

bool printer_print_1_svc(const print_job *arg, uint32_t *res, rc_svc_req *req)
{
	printer *p = rc_svc_req_context(req);

	*res = p->next_job++;
	p->queue++;
	printf("%s: job %u \"%s\" from %s, %u page%s (queue now %u)\n", p->name, *res, arg->title,
	       arg->owner, arg->pages, arg->pages == 1 ? "" : "s", p->queue);
	fflush(stdout);
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
	static const struct option opts[] = {
		{"listen", required_argument, NULL, 'l'}, {"name", required_argument, NULL, 'n'},
		{"queue", required_argument, NULL, 'q'},  {"delay", required_argument, NULL, 'd'},
		{NULL, 0, NULL, 0}};
	const char *listen = "udp://127.0.0.1:0";
	printer prn = {"printer", 0, 1, 0};
	char uri[256];
	int c;

	while ((c = getopt_long(argc, argv, "l:n:q:d:", opts, NULL)) != -1) {
		switch (c) {
		case 'l': listen = optarg; break;
		case 'n': prn.name = optarg; break;
		case 'q': prn.queue = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'd': prn.delay_ms = (unsigned)strtoul(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: %s [--listen URI] [--name NAME] [--queue N] [--delay MS]\n",
			        argv[0]);
			return 2;
		}
	}

	rc_status st = rc_server_create(&srv);
	if (st == RC_OK)
		st = printer_prog_1_register(srv, &prn); /* &prn reaches every procedure */
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

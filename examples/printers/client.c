/*
 * printers -- PARPC's printer load balancing. Ask every printer for its queue at once
 * (printer_load_1_multi), stop at the first idle one (the handler returns false: the
 * printers not heard from yet are abandoned), then print there with a blocking call. If no
 * printer is idle, print on the one with the shortest queue.
 *
 *   printers [--title TITLE] URI...
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "printers.h"

#define MAX_PRINTERS 64

/* What the handler learns, destination by destination. */
typedef struct choice {
	const char *uri[MAX_PRINTERS]; /* per destination */
	bool heard[MAX_PRINTERS];      /* its handler ran */
	long best;                     /* the shortest queue so far; -1: none yet */
	unsigned best_queue;
	char best_name[PRINTER_MAXNAME + 1];
} choice;

/* Runs once per printer, as its answer (or failure) arrives. res is freed when it returns:
 * copy what you keep. Returns false to stop asking the others. */
static bool on_load(size_t i, rc_status st, queue_status *res, void *udata)
{
	choice *ch = udata;

	ch->heard[i] = true;
	if (st != RC_OK) {
		printf("  %-10s %s: %s\n", "?", ch->uri[i], rc_strerror(st));
		return true; /* one printer failing does not stop the rest */
	}
	printf("  %-10s queue %-3u %s\n", res->name, res->queue, ch->uri[i]);
	if (ch->best < 0 || res->queue < ch->best_queue) {
		ch->best = (long)i;
		ch->best_queue = res->queue;
		snprintf(ch->best_name, sizeof ch->best_name, "%s", res->name);
	}
	return res->queue > 0; /* idle: stop here */
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"title", required_argument, NULL, 't'},
	                                     {NULL, 0, NULL, 0}};
	print_job job = {getenv("USER") ? getenv("USER") : "someone", "report.pdf", 3};
	rc_client *clnt[MAX_PRINTERS];
	choice ch = {.best = -1};
	size_t n = 0;
	int c, ret = 0;

	while ((c = getopt_long(argc, argv, "t:", opts, NULL)) != -1) {
		if (c != 't') {
			fprintf(stderr, "usage: %s [--title TITLE] URI...\n", argv[0]);
			return 2;
		}
		job.title = optarg;
	}
	if (optind == argc || argc - optind > MAX_PRINTERS) {
		fprintf(stderr, "usage: %s [--title TITLE] URI... (at most %d)\n", argv[0],
		        MAX_PRINTERS);
		return 2;
	}
	for (int a = optind; a < argc; a++) {
		rc_error err; /* why, in words: "can't connect: Connection refused" */
		char why[256];
		rc_status st = rc_client_create_ex(&clnt[n], argv[a], PRINTER_PROG, PRINTER_VERS,
		                                   &err);
		if (st != RC_OK) {
			fprintf(stderr, "%s: %s: %s\n", argv[0], argv[a],
			        rc_error_format(&err, why, sizeof why));
			continue; /* ask the others */
		}
		ch.uri[n++] = argv[a];
	}
	if (n == 0)
		return 1;

	/* One call to every printer at once; the handler sees the answers as they arrive. */
	printf("asking %zu printers for their queues at once\n", n);
	rc_status st = printer_load_1_multi(clnt, n, on_load, &ch, 5000);
	if (st == RC_CANCELLED) {
		size_t missing = 0;
		for (size_t i = 0; i < n; i++)
			missing += !ch.heard[i];
		printf("%s is idle: stopped early, %zu printer%s not heard from\n", ch.best_name,
		       missing, missing == 1 ? "" : "s");
		for (size_t i = 0; i < n; i++)
			if (!ch.heard[i])
				printf("  not waited for: %s\n", ch.uri[i]);
	} else if (st != RC_OK) {
		fprintf(stderr, "%s: %s\n", argv[0], rc_strerror(st));
		ret = 1;
	} else if (ch.best >= 0) {
		printf("every printer answered; none is idle: %s has the shortest queue (%u)\n",
		       ch.best_name, ch.best_queue);
	}

	/* Then an ordinary blocking call to the printer chosen. */
	if (ret == 0 && ch.best < 0) {
		fprintf(stderr, "%s: no printer answered\n", argv[0]);
		ret = 1;
	} else if (ret == 0) {
		uint32_t jobno = 0;
		st = printer_print_1(clnt[ch.best], &job, &jobno);
		if (st == RC_OK) {
			printf("printed \"%s\" on %s as job %u\n", job.title, ch.best_name, jobno);
		} else {
			fprintf(stderr, "%s: print on %s: %s\n", argv[0], ch.uri[ch.best], rc_strerror(st));
			ret = 1;
		}
	}
	for (size_t i = 0; i < n; i++)
		rc_client_destroy(clnt[i]);
	return ret;
}

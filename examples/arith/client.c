/*
 * arith -- MultiRPC's double/triple subsystem. DOUBLE and TRIPLE on the first server with
 * blocking calls, then each on every server at once (double_1_multi, triple_1_multi),
 * printing every answer as it arrives and the time taken.
 *
 *   arith [--arg N] [--json] URI...   (N defaults to 21)
 *
 * --json logs the blocking calls' arguments and results as JSON lines on stderr: idlc --print's
 * printers (arith_print.c) hooked to the client's trace (rc_client_set_trace).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "arith.h"

#define MAX_SERVERS 64

static double ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* One multi-destination call: what the handler needs and counts. */
typedef struct batch {
	const char *proc; /* "double" or "triple" */
	int32_t arg;
	char **uris;
	struct timespec start;
	size_t answered;
} batch;

/* Runs once per server, as its answer arrives (double_1_multi_fn and triple_1_multi_fn have
 * the same signature, so one handler serves both). */
static bool on_answer(size_t i, rc_status st, int32_t *res, void *udata)
{
	batch *r = udata;

	if (st != RC_OK) {
		printf("  %s(%d) failed on %s: %s\n", r->proc, (int)r->arg, r->uris[i], rc_strerror(st));
		return true; /* keep waiting for the others */
	}
	r->answered++;
	printf("  %s(%d) = %d from %s after %.1f ms\n", r->proc, (int)r->arg, (int)*res, r->uris[i],
	       ms_since(&r->start));
	return true;
}

/* --json: the call being made, for the trace hook (the trace gives the step and the xid). */
typedef struct call_log {
	const rc_procinfo *info;
	const void *args, *res;
} call_log;

/* The client's trace hook: at a call's start its arguments, once decoded its result, each
 * as one JSON line. */
static void log_call(void *arg, rc_trace_point pt, uint32_t xid, uint64_t ns)
{
	const call_log *c = arg;
	const rc_procinfo *i = c->info;

	(void)ns;
	if (pt != RC_TP_CALL_BEGIN && pt != RC_TP_DECODED)
		return;
	fprintf(stderr, "{\"xid\":%" PRIu32 ",\"proc\":\"%s\",\"%s\":", xid, i->name,
	        pt == RC_TP_CALL_BEGIN ? "args" : "res");
	if (pt == RC_TP_CALL_BEGIN)
		arith_print_args(stderr, i->prog, i->vers, i->proc, c->args);
	else
		arith_print_res(stderr, i->prog, i->vers, i->proc, c->res);
	fputs("}\n", stderr);
}

/* Blocking calls to one server (json: each logged by log_call). */
static rc_status one_server(rc_client *clnt, const char *uri, int32_t arg, bool json)
{
	struct timespec t0;
	int32_t twice, thrice;
	call_log lc = {&double_1_info, &arg, &twice};

	printf("blocking calls to %s\n", uri);
	if (json)
		rc_client_set_trace(clnt, log_call, &lc);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc_status st = double_1(clnt, &arg, &twice);
	lc = (call_log){&triple_1_info, &arg, &thrice};
	if (st == RC_OK)
		st = triple_1(clnt, &arg, &thrice);
	if (json)
		rc_client_set_trace(clnt, NULL, NULL);
	if (st == RC_OK)
		printf("  double(%d) = %d, triple(%d) = %d in %.1f ms\n", (int)arg, (int)twice,
		       (int)arg, (int)thrice, ms_since(&t0));
	return st;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"arg", required_argument, NULL, 'a'},
	                                     {"json", no_argument, NULL, 'j'},
	                                     {NULL, 0, NULL, 0}};
	bool json = false;
	rc_client *clnt[MAX_SERVERS];
	int32_t arg = 21;
	size_t n = 0;
	int c, ret = 0;
	rc_status st;

	while ((c = getopt_long(argc, argv, "a:", opts, NULL)) != -1) {
		if (c == 'j') {
			json = true;
			continue;
		}
		if (c != 'a') {
			fprintf(stderr, "usage: %s [--arg N] [--json] URI...\n", argv[0]);
			return 2;
		}
		arg = (int32_t)strtol(optarg, NULL, 10);
	}
	if (optind == argc || argc - optind > MAX_SERVERS) {
		fprintf(stderr, "usage: %s [--arg N] URI... (at most %d)\n", argv[0], MAX_SERVERS);
		return 2;
	}
	char **uris = argv + optind;
	for (; n < (size_t)(argc - optind); n++) {
		rc_error err; /* why, in words: "can't connect: Connection refused" */
		char why[256];
		st = rc_client_create_ex(&clnt[n], uris[n], ARITH_PROG, ARITH_VERS, &err);
		if (st != RC_OK) {
			fprintf(stderr, "%s: %s: %s\n", argv[0], uris[n],
			        rc_error_format(&err, why, sizeof why));
			ret = 1;
			goto out;
		}
	}

	st = one_server(clnt[0], uris[0], arg, json);
	if (st != RC_OK) {
		fprintf(stderr, "%s: %s: %s\n", argv[0], uris[0], rc_strerror(st));
		ret = 1;
		goto out;
	}

	/* The same call to every server at once: arguments encoded once, answers as they come. */
	const char *procs[2] = {"double", "triple"};
	for (int p = 0; p < 2; p++) {
		batch r = {procs[p], arg, uris, {0, 0}, 0};
		printf("%s on %zu servers at once\n", procs[p], n);
		clock_gettime(CLOCK_MONOTONIC, &r.start);
		st = p == 0 ? double_1_multi(clnt, n, &arg, on_answer, &r, 5000)
		            : triple_1_multi(clnt, n, &arg, on_answer, &r, 5000);
		if (st != RC_OK) {
			fprintf(stderr, "%s: %s: %s\n", argv[0], procs[p], rc_strerror(st));
			ret = 1;
			break;
		}
		printf("  %zu of %zu answered in %.1f ms\n", r.answered, n, ms_since(&r.start));
		if (r.answered != n)
			ret = 1;
	}
out:
	while (n > 0)
		rc_client_destroy(clnt[--n]);
	return ret;
}

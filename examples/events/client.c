/*
 * events -- a client driven from the application's own poll() loop. The loop waits on
 * standard input (each line, a number of milliseconds, starts one more call), a timer of its
 * own (a progress line every 250 ms while calls are in flight) and the client's descriptor
 * (rc_client_pollinfo, then rc_client_advance). The calls, started with events_wait_1_async,
 * are in flight together and complete through their callback in the order the server
 * finishes them.
 *
 *   events URI [MS...]        (without MS: 300 100 200)
 *
 * Ends when every call has completed and standard input is at its end (Ctrl-D, a pipe that
 * closed, </dev/null). Exits 0 when every call succeeded.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "events.h"

#define MAX_CALLS 64
#define TICK_MS 250

struct app;

/* One call in flight. ms and res must stay put until it completes. */
typedef struct call {
	struct app *app;
	int number;
	uint32_t ms;  /* the argument: how long the server waits */
	uint32_t res; /* the result, written when the reply arrives */
	double started_at;
} call;

typedef struct app {
	rc_client *clnt;
	struct timespec t0;
	call calls[MAX_CALLS];
	int started, completed, failed;
	char line[64]; /* standard input, up to the next newline */
	size_t len;
} app;

static double now_ms(const app *ap)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - ap->t0.tv_sec) * 1e3 + (double)(t.tv_nsec - ap->t0.tv_nsec) / 1e6;
}

/* The completion callback: runs once per call, from rc_client_advance. */
static void on_done(rc_async *handle, rc_status st, void *udata)
{
	call *c = udata;
	app *ap = c->app;
	(void)handle;

	ap->completed++;
	if (st != RC_OK) {
		ap->failed++;
		printf("[%4.0f ms] call %d failed: %s\n", now_ms(ap), c->number, rc_strerror(st));
		return;
	}
	printf("[%4.0f ms] call %d done: the server waited %u ms\n", now_ms(ap), c->number,
	       (unsigned)c->res);
}

static rc_status start_call(app *ap, uint32_t ms)
{
	if (ap->started == MAX_CALLS)
		return RC_TOOMANY;
	call *c = &ap->calls[ap->started];
	*c = (call){ap, ap->started + 1, ms, 0, now_ms(ap)};
	rc_status st = events_wait_1_async(ap->clnt, &c->ms, &c->res, on_done, c, NULL);
	if (st != RC_OK)
		return st; /* no call exists: on_done will not run */
	ap->started++;
	printf("[%4.0f ms] call %d started: wait %u ms\n", c->started_at, c->number, (unsigned)ms);
	return RC_OK;
}

static void input_line(app *ap)
{
	char *end;
	ap->line[ap->len] = '\0';
	ap->len = 0;
	unsigned long ms = strtoul(ap->line, &end, 10);
	if (end == ap->line)
		return; /* an empty line, or not a number */
	rc_status st = start_call(ap, (uint32_t)ms);
	if (st != RC_OK)
		fprintf(stderr, "events: cannot start a call: %s\n", rc_strerror(st));
}

/* Standard input is readable: take what is there. Returns false at its end. */
static bool read_input(app *ap)
{
	char buf[256];
	ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN;
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] == '\n')
			input_line(ap);
		else if (ap->len < sizeof ap->line - 1)
			ap->line[ap->len++] = buf[i];
	}
	if (n == 0 && ap->len > 0)
		input_line(ap); /* a last line without a newline */
	return n > 0;
}

int main(int argc, char **argv)
{
	static char *defaults[] = {"300", "100", "200"};
	static app ap;
	bool input_open = true;
	double next_tick = TICK_MS;

	if (argc < 2) {
		fprintf(stderr, "usage: %s URI [MS...]\n", argv[0]);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &ap.t0);
	rc_error err; /* why, in words: "can't connect: Connection refused" */
	char why[256];
	rc_status st = rc_client_create_ex(&ap.clnt, argv[1], EVENTS_PROG, EVENTS_VERS, &err);
	if (st != RC_OK) {
		fprintf(stderr, "%s: %s: %s\n", argv[0], argv[1],
		        rc_error_format(&err, why, sizeof why));
		return 1;
	}
	char **waits = argc > 2 ? argv + 2 : defaults;
	int nwaits = argc > 2 ? argc - 2 : 3;
	for (int i = 0; i < nwaits; i++) {
		st = start_call(&ap, (uint32_t)strtoul(waits[i], NULL, 10));
		if (st != RC_OK)
			fprintf(stderr, "%s: cannot start a call: %s\n", argv[0], rc_strerror(st));
	}

	while (input_open || ap.completed < ap.started) {
		/* What the client waits for, and until when; our own timer may come sooner. */
		int fd, timeout;
		short events;
		st = rc_client_pollinfo(ap.clnt, &fd, &events, &timeout);
		if (st != RC_OK) {
			fprintf(stderr, "%s: %s\n", argv[0], rc_strerror(st));
			break;
		}
		int until_tick = (int)(next_tick - now_ms(&ap)) + 1;
		if (until_tick < 0)
			until_tick = 0;
		if (timeout < 0 || timeout > until_tick)
			timeout = until_tick;

		struct pollfd fds[2] = {{input_open ? STDIN_FILENO : -1, POLLIN, 0}, {fd, events, 0}};
		int n = poll(fds, 2, timeout);
		if (n < 0 && errno != EINTR) {
			perror("poll");
			break;
		}
		if (n > 0 && fds[0].revents != 0)
			input_open = read_input(&ap);
		/* Always: reads replies if any, retransmits or expires calls whose time has come. */
		st = rc_client_advance(ap.clnt, n > 0 ? fds[1].revents : 0);
		if (st != RC_OK)
			fprintf(stderr, "%s: %s\n", argv[0], rc_strerror(st));
		if (now_ms(&ap) >= next_tick) {
			size_t inflight = rc_client_inflight(ap.clnt);
			if (inflight > 0)
				printf("[%4.0f ms] %zu call(s) in flight\n", now_ms(&ap), inflight);
			next_tick += TICK_MS;
		}
	}
	printf("%d of %d calls completed\n", ap.completed - ap.failed, ap.started);
	rc_client_destroy(ap.clnt);
	return ap.failed == 0 ? 0 : 1;
}

/*
 * notify-server -- a subscription service that calls its subscribers back over the connections
 * they made. NOTIFY_SUBSCRIBE keeps a client on the caller's own connection
 * (rc_svc_req_backchannel); every event -- a tick of the server's own every period, or a
 * NOTIFY_PUBLISH from anyone -- goes to every subscriber as a LISTENER_EVENT call on that
 * client. A subscriber whose call fails (it left, or stopped answering) is dropped.
 *
 *   notify-server [--listen URI] [--threads N] [--tick-ms MS]
 *                 (defaults tcp://127.0.0.1:0, 4 threads, 200 ms; URI tcp:, unix:)
 *
 * Prints "listening URI" with the port it got, serves until SIGINT or SIGTERM, exits 0. Worker
 * threads: PUBLISH's routine calls the subscribers back and waits for their answers, which
 * another thread of the server reads (see rc_server_conn_backchannel).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "listener.h"
#include "notify.h"

#define MAX_SUBSCRIBERS 64

typedef struct subscriber {
	rc_client *back; /* calls LISTENER_PROG over the subscriber's own connection */
	uint32_t id;
} subscriber;

static struct {
	pthread_mutex_t mu; /* the list, and one event at a time */
	subscriber subs[MAX_SUBSCRIBERS];
	int n;
	uint32_t next_id, seq;
} S = {.mu = PTHREAD_MUTEX_INITIALIZER, .next_id = 1};

static rc_server *srv;
/* Set by the signal handler, read by the ticker thread: a lock-free atomic, which is safe in a
 * signal handler and across threads (a volatile sig_atomic_t is only for the same thread). */
static atomic_bool stopping;

/* Send text to every subscriber (blocking calls, one after the other); drop those that fail.
 * Returns how many took it. */
static uint32_t publish(const char *text)
{
	uint32_t took = 0;
	pthread_mutex_lock(&S.mu);
	notify_event ev = {++S.seq, (char *)text};
	for (int i = 0; i < S.n;) {
		rc_status st = listener_event_1(S.subs[i].back, &ev);
		if (st == RC_OK) {
			took++;
			i++;
			continue;
		}
		printf("subscriber %u dropped: %s\n", S.subs[i].id, rc_strerror(st));
		rc_client_destroy(S.subs[i].back); /* the connection itself stays the client's */
		S.subs[i] = S.subs[--S.n];
	}
	pthread_mutex_unlock(&S.mu);
	fflush(stdout);
	return took;
}

bool notify_subscribe_1_svc(char *const *arg, uint32_t *res, rc_svc_req *req)
{
	rc_client *back;
	rc_status st = rc_svc_req_backchannel(req, LISTENER_PROG, LISTENER_VERS, &back);
	if (st != RC_OK) { /* over UDP there is no connection to call back on */
		fprintf(stderr, "subscribe: %s\n", rc_strerror(st));
		return false;
	}
	rc_client_set_timeout(back, 2000); /* a subscriber that stops answering is dropped */
	pthread_mutex_lock(&S.mu);
	if (S.n == MAX_SUBSCRIBERS) {
		pthread_mutex_unlock(&S.mu);
		rc_client_destroy(back);
		return false;
	}
	*res = S.next_id++;
	S.subs[S.n++] = (subscriber){back, *res};
	pthread_mutex_unlock(&S.mu);
	printf("subscriber %u: topic \"%s\"\n", *res, *arg);
	fflush(stdout);
	return true;
}

bool notify_publish_1_svc(char *const *arg, uint32_t *res, rc_svc_req *req)
{
	(void)req;
	*res = publish(*arg);
	return true;
}

/* The server's own events: a tick every period. */
static void *ticker(void *arg)
{
	long ms = *(long *)arg;
	struct timespec nap = {0, 10000000L}; /* 10 ms naps: the signal goes to another thread */
	char text[64];
	for (unsigned k = 1;; k++) {
		for (long slept = 0; slept < ms && !atomic_load(&stopping); slept += 10)
			nanosleep(&nap, NULL);
		if (atomic_load(&stopping))
			return NULL;
		snprintf(text, sizeof text, "tick %u", k);
		publish(text);
	}
}

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&stopping, true);
	rc_server_stop(srv); /* async-signal-safe: rc_server_run returns soon */
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"listen", required_argument, NULL, 'l'},
	                                     {"threads", required_argument, NULL, 't'},
	                                     {"tick-ms", required_argument, NULL, 'k'},
	                                     {NULL, 0, NULL, 0}};
	const char *listen = "tcp://127.0.0.1:0";
	unsigned threads = 4;
	long tick_ms = 200;
	char uri[256];
	int c;
	pthread_t tick;

	while ((c = getopt_long(argc, argv, "l:t:k:", opts, NULL)) != -1) {
		switch (c) {
		case 'l': listen = optarg; break;
		case 't': threads = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'k': tick_ms = strtol(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: %s [--listen URI] [--threads N] [--tick-ms MS]\n",
			        argv[0]);
			return 2;
		}
	}
	if (threads < 2 || tick_ms < 1) {
		fprintf(stderr, "%s: --threads 2 or more (a routine waits on its calls back while "
		                "another thread reads their replies), --tick-ms 1 or more\n", argv[0]);
		return 2;
	}

	rc_status st = rc_server_create(&srv);
	if (st == RC_OK)
		st = notify_prog_1_register(srv, NULL);
	if (st == RC_OK)
		st = rc_server_set_threads(srv, threads);
	rc_error err = {.status = st};
	if (st == RC_OK && (st = rc_server_listen(srv, listen, uri, sizeof uri)) != RC_OK)
		rc_server_geterr(srv, &err);
	if (st != RC_OK) {
		char why[256];
		err.status = st;
		fprintf(stderr, "%s: %s: %s\n", argv[0], listen, rc_error_format(&err, why, sizeof why));
		rc_server_destroy(srv);
		return 1;
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	printf("listening %s\n", uri);
	fflush(stdout);
	pthread_create(&tick, NULL, ticker, &tick_ms);
	st = rc_server_run(srv);
	atomic_store(&stopping, true);
	pthread_join(tick, NULL);
	pthread_mutex_lock(&S.mu);
	for (int i = 0; i < S.n; i++)
		rc_client_destroy(S.subs[i].back);
	S.n = 0;
	pthread_mutex_unlock(&S.mu);
	rc_server_destroy(srv);
	return st == RC_OK ? 0 : 1;
}

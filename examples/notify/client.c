/*
 * notify -- a subscriber: it subscribes to notify-server, publishes one event of its own, and
 * prints the events the server calls it back with -- over the connection it made, with no
 * listening socket of its own. It serves LISTENER_PROG on its client (rc_client_serve): while
 * it waits in a call of its own (the PUBLISH), and while idle, from its own poll() loop
 * (rc_client_pollinfo, rc_client_advance).
 *
 *   notify URI [COUNT] [TOPIC]        (COUNT events, default 5; TOPIC "all")
 *
 * Exits 0 once COUNT events have come (within 10 s), 1 otherwise.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "listener.h"
#include "notify.h"

typedef struct app {
	uint32_t id;
	int got;
	bool own_seen; /* the event it published itself came back */
	char own[64];
} app;

/* LISTENER_EVENT: runs on this process's own thread, inside rc_call or rc_client_advance. */
bool listener_event_1_svc(const notify_event *ev, rc_svc_req *req)
{
	app *ap = rc_svc_req_context(req);
	ap->got++;
	if (strcmp(ev->text, ap->own) == 0)
		ap->own_seen = true;
	printf("event %u: %s\n", ev->seq, ev->text);
	fflush(stdout);
	return true;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s URI [COUNT] [TOPIC]\n", argv[0]);
		return 2;
	}
	int want = argc > 2 ? atoi(argv[2]) : 5;
	char *topic = argc > 3 ? argv[3] : "all";
	app ap = {0};
	rc_client *clnt;
	rc_error err;
	char why[256];

	rc_status st = rc_client_create_ex(&clnt, argv[1], NOTIFY_PROG, NOTIFY_VERS, &err);
	if (st != RC_OK) {
		fprintf(stderr, "%s: %s\n", argv[1], rc_error_format(&err, why, sizeof why));
		return 1;
	}
	/* answer the server's calls on this connection, before making any that may draw them */
	if ((st = rc_client_serve(clnt, &listener_prog_1_program, &ap)) != RC_OK ||
	    (st = notify_subscribe_1(clnt, &topic, &ap.id)) != RC_OK) {
		rc_client_geterr(clnt, &err);
		fprintf(stderr, "subscribe: %s\n", rc_error_format(&err, why, sizeof why));
		rc_client_destroy(clnt);
		return 1;
	}
	printf("subscribed as %u; no listening socket: events come on this client's connection\n",
	       ap.id);
	snprintf(ap.own, sizeof ap.own, "hello from subscriber %u", ap.id);
	char *text = ap.own;
	uint32_t took = 0;
	/* the server calls every subscriber back -- this one too -- before it answers */
	if ((st = notify_publish_1(clnt, &text, &took)) == RC_OK)
		printf("published \"%s\" to %u subscriber(s)\n", ap.own, took);
	else
		fprintf(stderr, "publish: %s\n", rc_strerror(st));

	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ap.got < want) {
		struct pollfd pf = {.fd = -1};
		int tmo;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= 10)
			break;
		if (rc_client_pollinfo(clnt, &pf.fd, &pf.events, &tmo) != RC_OK)
			break;
		if (tmo < 0 || tmo > 1000)
			tmo = 1000;
		if (poll(&pf, 1, tmo) < 0)
			break;
		rc_client_advance(clnt, pf.revents); /* serves the server's calls */
	}
	rc_client_destroy(clnt);
	printf("%d event(s)%s\n", ap.got, ap.own_seen ? ", its own among them" : "");
	return ap.got >= want && ap.own_seen ? 0 : 1;
}

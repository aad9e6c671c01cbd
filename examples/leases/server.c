/*
 * leases-server -- a lease table kept per connection, as an NFSv4.1 server ties state to the
 * connections of a session. The connection hook (rc_server_set_conn_hook) gives each
 * connection, on RC_CONN_OPEN, a record of its own (rc_server_conn_set_data): a number and
 * the leases it holds. The routines find that record through their request's connection
 * (rc_svc_req_conn, rc_server_conn_data). On RC_CONN_CLOSE -- the client left, was cut off,
 * went idle, or the server closed it -- the hook gives back every lease the connection held
 * and frees the record. The hook runs on a serving thread with no lock of the server held.
 *
 *   leases-server [--listen URI] [--threads N] [--idle-ms MS]
 *                 (defaults tcp://127.0.0.1:0, 2 threads, the library's idle limit)
 *
 * Prints "listening URI", then a line per connection opened and closed; serves until SIGINT
 * or SIGTERM, exits 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leases.h"

#define MAX_LEASES 256

/* What the server keeps of one connection (its rc_server_conn_data). */
typedef struct conn_state {
	unsigned number;
	unsigned held; /* leases it holds */
} conn_state;

/* The lease table: a name and the connection holding it (NULL: a free entry). */
static struct {
	pthread_mutex_t mu;
	char name[MAX_LEASES][65];
	conn_state *owner[MAX_LEASES];
	unsigned next_number;
} T = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void on_conn(rc_server_conn *sc, rc_conn_event ev, void *ctx)
{
	conn_state *cs;
	unsigned released = 0;

	(void)ctx;
	if (ev == RC_CONN_OPEN) {
		if ((cs = calloc(1, sizeof(*cs))) == NULL)
			return; /* its calls will find no record and be refused */
		pthread_mutex_lock(&T.mu);
		cs->number = ++T.next_number;
		pthread_mutex_unlock(&T.mu);
		rc_server_conn_set_data(sc, cs);
		printf("connection %u opened\n", cs->number);
		fflush(stdout);
		return;
	}
	if ((cs = rc_server_conn_data(sc)) == NULL)
		return;
	pthread_mutex_lock(&T.mu); /* RC_CONN_CLOSE: its leases go with it */
	for (int i = 0; i < MAX_LEASES; i++)
		if (T.owner[i] == cs) {
			T.owner[i] = NULL;
			released++;
		}
	pthread_mutex_unlock(&T.mu);
	printf("connection %u closed: %u lease(s) released\n", cs->number, released);
	fflush(stdout);
	rc_server_conn_set_data(sc, NULL);
	free(cs);
}

/* The calling connection's record, or NULL (not a stream connection). */
static conn_state *caller(rc_svc_req *req)
{
	rc_server_conn *sc;
	conn_state *cs = NULL;

	if (rc_svc_req_conn(req, &sc) == RC_OK) {
		cs = rc_server_conn_data(sc);
		rc_server_conn_release(sc);
	}
	return cs;
}

bool leases_acquire_1_svc(const lease_name *name, uint32_t *res, rc_svc_req *req)
{
	conn_state *cs = caller(req);
	int free_slot = -1;

	*res = 0;
	if (cs == NULL)
		return true;
	pthread_mutex_lock(&T.mu);
	for (int i = 0; i < MAX_LEASES; i++) {
		if (T.owner[i] == NULL) {
			if (free_slot < 0)
				free_slot = i;
		} else if (strcmp(T.name[i], *name) == 0) {
			*res = T.owner[i] == cs; /* held: by this connection, or another */
			free_slot = -2;
			break;
		}
	}
	if (free_slot >= 0) {
		snprintf(T.name[free_slot], sizeof(T.name[free_slot]), "%s", *name);
		T.owner[free_slot] = cs;
		cs->held++;
		*res = 1;
	}
	pthread_mutex_unlock(&T.mu);
	return true;
}

bool leases_release_1_svc(const lease_name *name, uint32_t *res, rc_svc_req *req)
{
	conn_state *cs = caller(req);

	*res = 0;
	pthread_mutex_lock(&T.mu);
	for (int i = 0; cs != NULL && i < MAX_LEASES; i++)
		if (T.owner[i] == cs && strcmp(T.name[i], *name) == 0) {
			T.owner[i] = NULL;
			cs->held--;
			*res = 1;
		}
	pthread_mutex_unlock(&T.mu);
	return true;
}

bool leases_held_1_svc(uint32_t *res, rc_svc_req *req)
{
	(void)req;
	*res = 0;
	pthread_mutex_lock(&T.mu);
	for (int i = 0; i < MAX_LEASES; i++)
		*res += T.owner[i] != NULL;
	pthread_mutex_unlock(&T.mu);
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
	                                     {"idle-ms", required_argument, NULL, 'i'},
	                                     {NULL, 0, NULL, 0}};
	const char *listen = "tcp://127.0.0.1:0";
	unsigned threads = 2;
	rc_server_limits lim = {0}; /* 0: the library's default */
	char uri[256];
	int c;

	while ((c = getopt_long(argc, argv, "l:t:i:", opts, NULL)) != -1) {
		switch (c) {
		case 'l': listen = optarg; break;
		case 't': threads = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'i': lim.idle_ms = (uint32_t)strtoul(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: %s [--listen URI] [--threads N] [--idle-ms MS]\n",
			        argv[0]);
			return 2;
		}
	}

	rc_status st = rc_server_create(&srv);
	if (st == RC_OK) /* before the first connection: every one gets its OPEN and CLOSE */
		st = rc_server_set_conn_hook(srv, on_conn, NULL);
	if (st == RC_OK)
		st = leases_prog_1_register(srv, NULL);
	if (st == RC_OK)
		st = rc_server_set_threads(srv, threads);
	if (st == RC_OK)
		st = rc_server_set_limits(srv, &lim);
	rc_error err = {.status = st};
	if (st == RC_OK && (st = rc_server_listen(srv, listen, uri, sizeof uri)) != RC_OK)
		rc_server_geterr(srv, &err);
	if (st != RC_OK) {
		char why[256];
		err.status = st;
		fprintf(stderr, "%s: %s: %s\n", argv[0], listen,
		        rc_error_format(&err, why, sizeof why));
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

	st = rc_server_run(srv);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rc_server_destroy(srv); /* connections still open get their CLOSE here */
	if (st != RC_OK) {
		fprintf(stderr, "%s: %s\n", argv[0], rc_strerror(st));
		return 1;
	}
	return 0;
}

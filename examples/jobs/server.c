/*
 * jobs-server -- a job queue. JOBS_SUBMIT is deferred (rc_svc_req_defer) to a pool of worker
 * threads; the worker that runs a job calls the submitter back with JOBCB_DONE on the
 * connection the SUBMIT came on (one back channel per connection, rc_server_conn_backchannel),
 * then answers the SUBMIT with how that call back ended.
 *
 *   jobs-server [--listen URI] [--workers N] [--tls-cert FILE --tls-key FILE]
 *               [--gss-principal NAME]
 *               (defaults tcp://127.0.0.1:0, 4 workers; URI tcp:, unix:)
 *
 * --tls-cert/--tls-key offer RPC-over-TLS (rc_server_set_tls); --gss-principal accepts
 * RPCSEC_GSS as NAME (e.g. host@localhost, keys from KRB5_KTNAME) and serves JOBS_PROG only
 * with integrity or privacy (krb5i, krb5p). Every limit is the library's default.
 *
 * Prints "listening URI", serves until SIGINT or SIGTERM, then prints what it did (jobs run,
 * calls back that failed, by status) and exits 0.
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

#include "jobcb.h"
#include "jobs.h"

/* A connection jobs came on, and the one client that calls its peer back; kept while jobs
 * of it are queued or running (the workers share the client: a client may be shared by
 * threads). */
typedef struct peer {
	struct peer *next;
	rc_server_conn *sc; /* our reference to the connection's handle */
	rc_client *back;    /* calls JOBCB_PROG over it */
	unsigned jobs;      /* queued or running */
} peer;

/* A deferred SUBMIT waiting for a worker. */
typedef struct task {
	struct task *next;
	rc_svc_req *req;
	job j;
	peer *p;
} task;

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	task *head, **tail; /* the queue, oldest first */
	peer *peers;
	bool stopping;
	unsigned long run, back_failed, answer_failed;
	unsigned long failed_by[64]; /* calls back that failed, by rc_status */
} Q = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .tail = &Q.head};

static rc_server *srv;

/* The peer of req's connection, with one more job counted (a new one made for the first
 * job); NULL (a status in *st) when the request has no connection or it has closed. Q.mu
 * held. */
static peer *peer_take(rc_svc_req *req, rc_status *st)
{
	rc_server_conn *sc;
	peer *p;
	if ((*st = rc_svc_req_conn(req, &sc)) != RC_OK)
		return NULL;
	for (p = Q.peers; p != NULL && p->sc != sc; p = p->next)
		;
	if (p != NULL) {
		rc_server_conn_release(sc); /* the peer holds one already */
	} else if ((p = calloc(1, sizeof(*p))) == NULL ||
	           (*st = rc_server_conn_backchannel(sc, JOBCB_PROG, JOBCB_VERS, &p->back)) != RC_OK) {
		*st = p == NULL ? RC_NOMEM : *st;
		free(p);
		rc_server_conn_release(sc);
		return NULL;
	} else {
		p->sc = sc;
		p->next = Q.peers;
		Q.peers = p;
	}
	p->jobs++;
	return p;
}

/* One job of p done: the last one lets the peer go. Q.mu held. */
static void peer_put(peer *p)
{
	if (--p->jobs > 0)
		return;
	for (peer **pp = &Q.peers; *pp != NULL; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	rc_client_destroy(p->back); /* the connection itself stays open */
	rc_server_conn_release(p->sc);
	free(p);
}

/* JOBS_SUBMIT: queue the job for a worker and answer later. */
bool jobs_submit_1_svc(const job *arg, uint32_t *res, rc_svc_req *req)
{
	task *t = malloc(sizeof(*t));
	rc_status st = RC_NOMEM;
	if (t == NULL)
		return false;
	t->next = NULL;
	t->req = req;
	t->j = *arg; /* fixed-size: copied before the deferral decodes it again */
	pthread_mutex_lock(&Q.mu);
	if ((t->p = peer_take(req, &st)) != NULL && (st = rc_svc_req_defer(req)) == RC_OK) {
		*Q.tail = t;
		Q.tail = &t->next;
		pthread_cond_signal(&Q.cv);
		pthread_mutex_unlock(&Q.mu);
		return true; /* ignored: deferred */
	}
	if (t->p != NULL)
		peer_put(t->p);
	pthread_mutex_unlock(&Q.mu);
	free(t);
	*res = (uint32_t)st; /* no back channel (UDP), or no deferral: say why */
	return true;
}

static void *worker(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	for (;;) {
		pthread_mutex_lock(&Q.mu);
		while (Q.head == NULL && !Q.stopping)
			pthread_cond_wait(&Q.cv, &Q.mu);
		task *t = Q.head;
		if (t == NULL) {
			pthread_mutex_unlock(&Q.mu);
			return NULL;
		}
		if ((Q.head = t->next) == NULL)
			Q.tail = &Q.head;
		pthread_mutex_unlock(&Q.mu);

		job_result r = {t->j.id, 0, id};
		for (uint64_t i = 1; i <= t->j.n; i++)
			r.sum += i * i;
		/* the call back, on the submitter's own connection; then the SUBMIT's answer */
		rc_status st = jobcb_done_1(t->p->back, &r);
		uint32_t res = (uint32_t)st;
		rc_status ans = jobs_submit_1_reply(t->req, &res); /* frees t->req */

		pthread_mutex_lock(&Q.mu);
		Q.run++;
		if (st != RC_OK) {
			Q.back_failed++;
			Q.failed_by[(unsigned)st < 64 ? (unsigned)st : 63]++;
		}
		if (ans != RC_OK)
			Q.answer_failed++;
		peer_put(t->p);
		pthread_mutex_unlock(&Q.mu);
		free(t);
	}
}

static void on_signal(int sig)
{
	(void)sig;
	rc_server_stop(srv); /* async-signal-safe: rc_server_run returns soon */
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [--listen URI] [--workers N] [--tls-cert FILE --tls-key FILE]\n"
	                "       [--gss-principal NAME]\n", prog);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"listen", required_argument, NULL, 'l'},
	                                     {"workers", required_argument, NULL, 'w'},
	                                     {"tls-cert", required_argument, NULL, 'C'},
	                                     {"tls-key", required_argument, NULL, 'K'},
	                                     {"gss-principal", required_argument, NULL, 'G'},
	                                     {NULL, 0, NULL, 0}};
	const char *listen = "tcp://127.0.0.1:0", *gss = NULL;
	rc_tls_server_opts tls = {0};
	unsigned nworkers = 4;
	char uri[256], why[256] = "";
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'l': listen = optarg; break;
		case 'w': nworkers = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'C': tls.cert_file = optarg; break;
		case 'K': tls.key_file = optarg; break;
		case 'G': gss = optarg; break;
		default: usage(argv[0]); return 2;
		}
	}
	if (optind != argc || nworkers < 1 || nworkers > 256 ||
	    (tls.cert_file == NULL) != (tls.key_file == NULL)) {
		usage(argv[0]);
		return 2;
	}

	rc_status st = rc_server_create(&srv);
	const char *step = "rc_server_create";
	if (st == RC_OK) {
		step = "jobs_prog_1_register";
		st = jobs_prog_1_register(srv, NULL);
	}
	if (st == RC_OK && tls.cert_file != NULL) {
		step = "--tls-cert";
		st = rc_server_set_tls(srv, &tls, why, sizeof why);
	}
	if (st == RC_OK && gss != NULL) {
		step = "--gss-principal";
		if ((st = rc_server_set_gss(srv, gss, NULL, why, sizeof why)) == RC_OK)
			st = rc_server_set_gss_required(srv, JOBS_PROG, JOBS_VERS, RC_GSS_INTEGRITY);
	}
	if (st != RC_OK) /* why: OpenSSL's or GSS's words, for --tls-cert and --gss-principal */
		fprintf(stderr, "%s: %s: %s%s%s\n", argv[0], step, rc_strerror(st), *why ? ": " : "",
		        why);
	if (st == RC_OK && (st = rc_server_listen(srv, listen, uri, sizeof uri)) != RC_OK) {
		rc_error err;
		rc_server_geterr(srv, &err);
		fprintf(stderr, "%s: %s: %s\n", argv[0], listen, rc_error_format(&err, why, sizeof why));
	}

	if (st != RC_OK) {
		rc_server_destroy(srv);
		return 1;
	}
	signal(SIGINT, on_signal); /* glibc's signal(): the handler stays, calls restart */
	signal(SIGTERM, on_signal);

	pthread_t *pool = calloc(nworkers, sizeof(*pool));
	unsigned started = 0;
	while (pool != NULL && started < nworkers &&
	       pthread_create(&pool[started], NULL, worker, (void *)(uintptr_t)(started + 1)) == 0)
		started++;
	printf("listening %s\n", uri);
	fflush(stdout);
	st = started == nworkers ? rc_server_run(srv) : RC_NOMEM;

	/* Stop: the workers finish what is queued. Destroying the server first makes calls back
	 * still waiting fail at once (their connections close) and the answers of the requests
	 * left return RC_CANCELLED; nothing waits for a peer. */
	pthread_mutex_lock(&Q.mu);
	Q.stopping = true;
	pthread_cond_broadcast(&Q.cv);
	pthread_mutex_unlock(&Q.mu);
	rc_server_destroy(srv);
	for (unsigned i = 0; i < started; i++)
		pthread_join(pool[i], NULL);
	free(pool);

	printf("%lu jobs run, %lu calls back failed, %lu answers failed\n", Q.run, Q.back_failed,
	       Q.answer_failed);
	for (unsigned s = 0; s < 64; s++)
		if (Q.failed_by[s] != 0)
			printf("  calls back failed with \"%s\": %lu\n", rc_strerror((rc_status)s),
			       Q.failed_by[s]);
	return st == RC_OK ? 0 : 1;
}

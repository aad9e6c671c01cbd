/*
 * jobs -- submit jobs to jobs-server, pipelined, and take their completions as calls back on
 * the same connection. Every SUBMIT is a started call (jobs_submit_1_async) -- up to --window
 * of them in flight, all at once by default -- and the client serves JOBCB_PROG on its client
 * (rc_client_serve) from its own poll() loop (rc_client_pollinfo, rc_client_advance), so the
 * DONE calls the server's workers make are answered while the SUBMITs wait.
 *
 *   jobs URI [--jobs N] [--n N] [--window N] [--gss NAME] [--deadline-ms MS]
 *
 *   --jobs N         jobs to submit (default 1000)
 *   --n N            each job's work: the sum of the squares of 1..N (default 100)
 *   --window N       SUBMITs in flight at most (default 0: all at once)
 *   --gss NAME       RPCSEC_GSS with integrity (krb5i) to the service NAME (host@localhost),
 *                    as the principal of the credential cache (kinit first)
 *   --deadline-ms MS give up after MS ms and say what was missing (default 60000)
 *
 * URI: tcp://HOST:PORT, unix:/PATH, and TLS as the URI's query says
 * (tcp://127.0.0.1:PORT?tls=required&ca=ca.pem). Exits 0 when every job was answered once
 * with success and called back once with the right sum, 1 otherwise (what went wrong on
 * stderr).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jobcb.h"
#include "jobs.h"

#define MAX_WORKERS 256

typedef struct app app;

/* One job: what its SUBMIT and its DONE brought. */
typedef struct slot {
	app *a;
	uint32_t id;
	uint32_t res;       /* SUBMIT's result: how the server's call back ended */
	rc_status st;       /* SUBMIT's status */
	unsigned answered;  /* SUBMIT completions (must end at 1) */
	unsigned called;    /* DONE calls for it (must end at 1) */
	bool sum_ok;        /* DONE's sum was right */
} slot;

struct app {
	slot *s;
	uint32_t njobs, n;
	_Atomic uint32_t started, completed, dones; /* also read by the watchdog */
	uint32_t stray;  /* DONE calls for no job of ours */
	uint64_t expect; /* the right sum for n */
	uint32_t by_worker[MAX_WORKERS + 1];
};

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* JOBCB_DONE: runs on this thread, inside rc_client_advance. */
bool jobcb_done_1_svc(const job_result *r, rc_svc_req *req)
{
	app *a = rc_svc_req_context(req);
	if (r->id >= a->njobs) {
		a->stray++;
		return true;
	}
	slot *s = &a->s[r->id];
	s->called++;
	s->sum_ok = r->sum == a->expect;
	a->dones++;
	a->by_worker[r->worker <= MAX_WORKERS ? r->worker : 0]++;
	return true;
}

/* A SUBMIT's completion: exactly once per started call. */
static void submitted(rc_async *call, rc_status st, void *udata)
{
	slot *s = udata;
	(void)call;
	s->st = st;
	s->answered++;
	s->a->completed++;
}

/* The watchdog: the deadline holds even if a library call never returns (a start waiting for
 * room that never comes). Two seconds past it, it says where the run stood and exits. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	long deadline_ms;
	const app *a;
} W = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void *watchdog(void *arg)
{
	struct timespec until;
	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += W.deadline_ms / 1000 + 2;
	until.tv_nsec += W.deadline_ms % 1000 * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&W.mu);
	while (!W.done && pthread_cond_timedwait(&W.cv, &W.mu, &until) == 0)
		;
	if (!W.done) {
		fprintf(stderr, "jobs: FAILED: the deadline (%ld ms) passed 2 s ago inside a library call "
		        "that has not returned (rc_call_start_ex or rc_client_advance): %u of %u "
		        "SUBMITs started, %u answered, %u jobs called back\n", W.deadline_ms,
		        (unsigned)W.a->started, W.a->njobs, (unsigned)W.a->completed,
		        (unsigned)W.a->dones);
		_exit(1);
	}
	pthread_mutex_unlock(&W.mu);
	return NULL;
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s URI [--jobs N] [--n N] [--window N] [--gss NAME] "
	                "[--deadline-ms MS]\n", prog);
}

/* Say what is wrong with the jobs (all of it, counted) on stderr, under a "jobs: FAILED"
 * line unless the caller printed one (said); 0 if nothing. */
static int report(const app *a, bool said)
{
	uint32_t unanswered = 0, twice = 0, failed = 0, refused = 0, uncalled = 0, called2 = 0,
	         badsum = 0;
	rc_status first_st = RC_OK;
	uint32_t first_res = 0;
	for (uint32_t i = 0; i < a->njobs; i++) {
		const slot *s = &a->s[i];
		unanswered += s->answered == 0;
		twice += s->answered > 1;
		if (s->answered > 0 && s->st != RC_OK && failed++ == 0)
			first_st = s->st;
		if (s->answered > 0 && s->st == RC_OK && s->res != 0 && refused++ == 0)
			first_res = s->res;
		uncalled += s->called == 0;
		called2 += s->called > 1;
		badsum += s->called > 0 && !s->sum_ok;
	}
	int bad = unanswered + twice + failed + refused + uncalled + called2 + badsum + a->stray != 0;
	if (bad && !said)
		fprintf(stderr, "jobs: FAILED\n");
	if (unanswered)
		fprintf(stderr, "  %u SUBMIT(s) never completed (%u never started)\n", unanswered,
		        a->njobs - a->started);
	if (twice)
		fprintf(stderr, "  %u SUBMIT(s) completed more than once\n", twice);
	if (failed)
		fprintf(stderr, "  %u SUBMIT(s) failed, the first with \"%s\"\n", failed,
		        rc_strerror(first_st));
	if (refused)
		fprintf(stderr, "  %u job(s) whose call back failed on the server, the first with "
		        "\"%s\"\n", refused, rc_strerror((rc_status)first_res));
	if (uncalled)
		fprintf(stderr, "  %u job(s) never called back (DONE)\n", uncalled);
	if (called2)
		fprintf(stderr, "  %u job(s) called back more than once\n", called2);
	if (badsum)
		fprintf(stderr, "  %u job(s) called back with a wrong sum\n", badsum);
	if (a->stray)
		fprintf(stderr, "  %u DONE call(s) for no job of ours\n", a->stray);
	return bad;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"jobs", required_argument, NULL, 'j'},
	                                     {"n", required_argument, NULL, 'n'},
	                                     {"window", required_argument, NULL, 'w'},
	                                     {"gss", required_argument, NULL, 'g'},
	                                     {"deadline-ms", required_argument, NULL, 'd'},
	                                     {NULL, 0, NULL, 0}};
	app a = {.njobs = 1000, .n = 100};
	uint32_t window = 0;
	long deadline_ms = 60000;
	const char *gss = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'j': a.njobs = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'n': a.n = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'w': window = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'g': gss = optarg; break;
		case 'd': deadline_ms = strtol(optarg, NULL, 10); break;
		default: usage(argv[0]); return 2;
		}
	}
	if (optind != argc - 1 || a.njobs == 0 || deadline_ms <= 0) {
		usage(argv[0]);
		return 2;
	}
	const char *uri = argv[optind];
	for (uint64_t i = 1; i <= a.n; i++)
		a.expect += i * i;
	if ((a.s = calloc(a.njobs, sizeof(*a.s))) == NULL) {
		fprintf(stderr, "%s: out of memory\n", argv[0]);
		return 1;
	}

	rc_client *clnt;
	rc_error err;
	char why[256];
	rc_status st = rc_client_create_ex(&clnt, uri, JOBS_PROG, JOBS_VERS, &err);
	if (st != RC_OK) {
		fprintf(stderr, "%s: %s\n", uri, rc_error_format(&err, why, sizeof why));
		free(a.s);
		return 1;
	}
	if (gss != NULL && (st = rc_client_set_auth_gss(clnt, gss, RC_GSS_INTEGRITY, &err)) != RC_OK) {
		fprintf(stderr, "%s: --gss %s: %s\n", uri, gss, rc_error_format(&err, why, sizeof why));
		rc_client_destroy(clnt);
		free(a.s);
		return 1;
	}
	/* answer the server's DONE calls on this connection, before submitting what draws them */
	if ((st = rc_client_serve(clnt, &jobcb_prog_1_program, &a)) != RC_OK) {
		fprintf(stderr, "%s: rc_client_serve: %s\n", uri, rc_strerror(st));
		rc_client_destroy(clnt);
		free(a.s);
		return 1;
	}

	pthread_condattr_t ca;
	pthread_t dog;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&W.cv, &ca);
	W.deadline_ms = deadline_ms;
	W.a = &a;
	bool dog_on = pthread_create(&dog, NULL, watchdog, NULL) == 0;
	int64_t t0 = now_ms(), deadline = t0 + deadline_ms;
	bool late = false;
	int64_t left = deadline_ms;
	while (a.completed < a.njobs) {
		/* pipeline: start SUBMITs up to the window; each completes through submitted() */
		while (a.started < a.njobs && (window == 0 || a.started - a.completed < window) &&
		       left > 0) {
			slot *s = &a.s[a.started];
			job j = {a.started, a.n};
			s->a = &a;
			s->id = a.started++;
			/* jobs_submit_1_async(clnt, &j, &s->res, submitted, s, NULL) with a deadline:
			 * every SUBMIT ends (answered or failed) by the run's */
			rc_callopts o = {.timeout_ms = (uint32_t)(left > 1 ? left : 1)};
			st = rc_call_start_ex(clnt, JOBS_SUBMIT, jobs_submit_1_info.xargs, &j,
			                      jobs_submit_1_info.xres, &s->res, &o, submitted, s, NULL);
			if (st != RC_OK)
				submitted(NULL, st, s); /* never started: its callback will not run */
			left = deadline - now_ms();
		}
		if ((left = deadline - now_ms()) <= 0) {
			late = true;
			break;
		}
		struct pollfd pf = {.fd = -1};
		int tmo;
		if (rc_client_pollinfo(clnt, &pf.fd, &pf.events, &tmo) != RC_OK)
			break;
		if (tmo < 0 || tmo > left)
			tmo = (int)left;
		if (poll(&pf, pf.fd >= 0, tmo) < 0)
			break;
		rc_client_advance(clnt, pf.revents); /* replies, and the server's DONE calls */
	}
	int64_t took = now_ms() - t0;
	pthread_mutex_lock(&W.mu);
	W.done = true;
	pthread_cond_signal(&W.cv);
	pthread_mutex_unlock(&W.mu);
	if (dog_on)
		pthread_join(dog, NULL);

	printf("%u job(s) submitted to %s, %s; %u answered, %u called back, in %lld ms\n",
	       (unsigned)a.started, uri, window ? "windowed" : "all at once",
	       (unsigned)a.completed, (unsigned)a.dones,
	       (long long)took);
	for (unsigned w = 1; w <= MAX_WORKERS; w++)
		if (a.by_worker[w] != 0)
			printf("  worker %u ran %u\n", w, a.by_worker[w]);
	int bad = 0;
	if (late) {
		fprintf(stderr, "jobs: FAILED: the deadline (%ld ms) passed with %u of %u SUBMITs "
		        "unanswered (%zu in flight) and %u of %u jobs not called back\n", deadline_ms,
		        a.njobs - (unsigned)a.completed, a.njobs, rc_client_inflight(clnt),
		        a.njobs - (unsigned)a.dones,
		        a.njobs);
		bad = 1;
	}
	if (report(&a, late) != 0)
		bad = 1;
	else
		printf("every job answered once and called back once, on this connection\n");
	rc_client_destroy(clnt); /* SUBMITs still in flight complete (cancelled) here */
	free(a.s);
	return bad;
}

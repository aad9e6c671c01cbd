/*
 * A hand-written test program (no idlc): 0x20000099 version 1..2 with
 *   0 NULL, 1 ECHO(opaque<>) -> opaque<>, 2 ADD(hyper) -> hyper, 3 SLEEP(u_int ms) -> u_int,
 *   4 FAIL(void) -> routine returns false, 5 WHO(void) -> string (uid of AUTH_SYS caller or "none"),
 *   6 DELAY(void) -> u_int, 7 MEET(u_int n) -> u_int (see rt_meet),
 *   8 SIZED({u_int n; opaque data<>}) -> opaque<> of n bytes, byte i being (i * 7) & 0xff
 * served by a server running in a background thread.
 */
#ifndef RT_FIXTURE_H
#define RT_FIXTURE_H

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <remotecall/remotecall.h>

#define RT_PROG 0x20000099u

typedef struct { uint32_t len; char *val; } rt_blob;

static bool xdr_rt_blob(rc_xdr *x, rt_blob *b)
{
	return rc_xdr_bytes(x, &b->val, &b->len, 8u << 20);
}

static bool xdr_rt_str(rc_xdr *x, char **s)
{
	return rc_xdr_string(x, s, 1024);
}

/* SIZED's argument: the reply's length, and data of any length (no bound: the records' caps
 * are what is tested). */
typedef struct { uint32_t n; rt_blob data; } rt_sized;

static bool xdr_rt_big(rc_xdr *x, rt_blob *b)
{
	return rc_xdr_bytes(x, &b->val, &b->len, ~0u);
}

static bool xdr_rt_sized(rc_xdr *x, rt_sized *s)
{
	return rc_xdr_u_int(x, &s->n) && xdr_rt_big(x, &s->data);
}

/* Whether b holds n bytes of SIZED's pattern. */
static inline bool rt_sized_ok(const rt_blob *b, uint32_t n)
{
	if (b->len != n)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if ((unsigned char)b->val[i] != (unsigned char)(i * 7))
			return false;
	return true;
}

static int64_t rt_total;
static pthread_mutex_t rt_mu = PTHREAD_MUTEX_INITIALIZER;
static int rt_null_calls;

static bool rt_null(void *a, void *r, rc_svc_req *q) { (void)a; (void)r; (void)q; __atomic_add_fetch(&rt_null_calls, 1, __ATOMIC_SEQ_CST); return true; }
static bool rt_echo(void *a, void *r, rc_svc_req *q)
{
	rt_blob *in = a, *out = r;
	(void)q;
	out->len = in->len;
	out->val = malloc(in->len ? in->len : 1);
	if (out->val == NULL)
		return false;
	memcpy(out->val, in->val, in->len);
	return true;
}
/* rt_total as the server left it (read under its lock). */
static inline int64_t rt_total_now(void)
{
	int64_t v;
	pthread_mutex_lock(&rt_mu);
	v = rt_total;
	pthread_mutex_unlock(&rt_mu);
	return v;
}
static bool rt_add(void *a, void *r, rc_svc_req *q)
{
	(void)q;
	pthread_mutex_lock(&rt_mu);
	rt_total += *(int64_t *)a;
	*(int64_t *)r = rt_total;
	pthread_mutex_unlock(&rt_mu);
	return true;
}
static bool rt_sleep(void *a, void *r, rc_svc_req *q)
{
	(void)q;
	usleep(*(uint32_t *)a * 1000u);
	*(uint32_t *)r = *(uint32_t *)a;
	return true;
}
/* 6 DELAY(void) -> u_int: sleeps the server's configured delay (its registration ctx) */
static bool rt_delay(void *a, void *r, rc_svc_req *q)
{
	const int *p = rc_svc_req_context(q);
	int ms = p ? __atomic_load_n(p, __ATOMIC_RELAXED) : 0; /* the test may change it */
	(void)a;
	if (ms > 0)
		usleep((useconds_t)ms * 1000u);
	*(uint32_t *)r = (uint32_t)ms;
	return true;
}
/* 7 MEET(u_int n) -> u_int: waits (5 s at most) until n calls have entered since the test last
 * called rt_meet_reset, and returns how many had: n only if n calls ran at the same time.
 * rt_meet_enter(): the test itself enters, as one more caller. */
/* Drive c's calls in flight from an application poll loop (rc_client_pollinfo, poll, at most
 * 1 s a turn, rc_client_advance) until none is left or max_turns turns have passed. */
static inline void rt_poll_loop(rc_client *c, int max_turns)
{
	for (int turn = 0; rc_client_inflight(c) > 0 && turn < max_turns; turn++) {
		int fd, tmo;
		short ev;
		struct pollfd pf;
		if (rc_client_pollinfo(c, &fd, &ev, &tmo) != RC_OK)
			return;
		pf = (struct pollfd){fd, ev, 0};
		if (fd >= 0)
			poll(&pf, 1, tmo < 0 || tmo > 1000 ? 1000 : tmo);
		rc_client_advance(c, pf.revents);
	}
}

static int rt_meet_in;
static pthread_mutex_t rt_meet_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rt_meet_cv = PTHREAD_COND_INITIALIZER;
static inline void rt_meet_reset(void)
{
	pthread_mutex_lock(&rt_meet_mu);
	rt_meet_in = 0;
	pthread_mutex_unlock(&rt_meet_mu);
}
static inline void rt_meet_enter(void)
{
	pthread_mutex_lock(&rt_meet_mu);
	rt_meet_in++;
	pthread_cond_broadcast(&rt_meet_cv);
	pthread_mutex_unlock(&rt_meet_mu);
}
static bool rt_meet(void *a, void *r, rc_svc_req *q)
{
	int n = (int)*(uint32_t *)a;
	struct timespec ts;
	(void)q;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 5;
	pthread_mutex_lock(&rt_meet_mu);
	if (++rt_meet_in >= n)
		pthread_cond_broadcast(&rt_meet_cv);
	while (rt_meet_in < n && pthread_cond_timedwait(&rt_meet_cv, &rt_meet_mu, &ts) == 0)
		;
	*(uint32_t *)r = (uint32_t)rt_meet_in;
	pthread_mutex_unlock(&rt_meet_mu);
	return true;
}
static bool rt_sized_fn(void *a, void *r, rc_svc_req *q)
{
	rt_sized *in = a;
	rt_blob *out = r;
	(void)q;
	out->len = in->n;
	out->val = malloc(in->n ? in->n : 1);
	if (out->val == NULL)
		return false;
	for (uint32_t i = 0; i < in->n; i++)
		out->val[i] = (char)(i * 7);
	return true;
}
static bool rt_fail(void *a, void *r, rc_svc_req *q) { (void)a; (void)r; (void)q; return false; }
static bool rt_who(void *a, void *r, rc_svc_req *q)
{
	const rc_authsys *s = rc_svc_req_authsys(q);
	char buf[300];
	(void)a;
	if (s)
		snprintf(buf, sizeof(buf), "%s:%u:%u:%u", s->machine, s->uid, s->gid, s->ngids);
	else
		snprintf(buf, sizeof(buf), "none");
	*(char **)r = strdup(buf);
	return *(char **)r != NULL;
}

#define RT_INFO(v, n, num, xa, sa, xr, sr) \
	static const rc_procinfo rt_##n##_##v = {RT_PROG, v, num, #n, (rc_xdrproc)xa, sa, (rc_xdrproc)xr, sr};
RT_INFO(1, null, 0, rc_xdr_void, 0, rc_xdr_void, 0)
RT_INFO(1, echo, 1, xdr_rt_blob, sizeof(rt_blob), xdr_rt_blob, sizeof(rt_blob))
RT_INFO(1, add, 2, rc_xdr_hyper, 8, rc_xdr_hyper, 8)
RT_INFO(1, sleep, 3, rc_xdr_u_int, 4, rc_xdr_u_int, 4)
RT_INFO(1, fail, 4, rc_xdr_void, 0, rc_xdr_void, 0)
RT_INFO(1, who, 5, rc_xdr_void, 0, xdr_rt_str, sizeof(char *))
RT_INFO(1, delay, 6, rc_xdr_void, 0, rc_xdr_u_int, 4)
RT_INFO(1, meet, 7, rc_xdr_u_int, 4, rc_xdr_u_int, 4)
RT_INFO(1, sized, 8, xdr_rt_sized, sizeof(rt_sized), xdr_rt_big, sizeof(rt_blob))
RT_INFO(2, null, 0, rc_xdr_void, 0, rc_xdr_void, 0)

static const rc_svc_proc rt_procs1[] = {
	{&rt_null_1, rt_null}, {&rt_echo_1, rt_echo}, {&rt_add_1, rt_add},
	{&rt_sleep_1, rt_sleep}, {&rt_fail_1, rt_fail}, {&rt_who_1, rt_who},
	{&rt_delay_1, rt_delay}, {&rt_meet_1, rt_meet}, {&rt_sized_1, rt_sized_fn},
};
static const rc_svc_prog rt_prog1 = {RT_PROG, 1, 9, rt_procs1};
static const rc_svc_proc rt_procs2[] = {{&rt_null_2, rt_null}};
static const rc_svc_prog rt_prog2 = {RT_PROG, 2, 1, rt_procs2};

typedef struct rt_server {
	rc_server *srv;
	pthread_t tid;
	char uri[4][256];
	int n;
	int delay_ms; /* what DELAY sleeps */
} rt_server;

/* Set what DELAY sleeps on s (calls may be running meanwhile). */
static inline void rt_set_delay(rt_server *s, int ms)
{
	__atomic_store_n(&s->delay_ms, ms, __ATOMIC_RELAXED);
}

static void *rt_run(void *arg)
{
	rt_server *s = arg;
	rc_server_run(s->srv);
	return NULL;
}

/* Start a server listening on each of uris (NULL-terminated) with `threads` workers and the
 * limits lim (NULL: the defaults). */
static inline int rt_start_lim(rt_server *s, const char *const *uris, unsigned threads,
                               const rc_server_limits *lim)
{
	memset(s, 0, sizeof(*s));
	if (rc_server_create(&s->srv) != RC_OK)
		return -1;
	if (lim != NULL && rc_server_set_limits(s->srv, lim) != RC_OK)
		return -1;
	if (rc_server_register(s->srv, &rt_prog1, &s->delay_ms) != RC_OK ||
	    rc_server_register(s->srv, &rt_prog2, NULL) != RC_OK)
		return -1;
	for (int i = 0; uris[i]; i++) {
		char own[512];
		const char *u = uris[i];
		/* A Unix socket path gets this process's number: suites of two build trees run at
		 * once on one machine must not take each other's sockets. */
		if (strncmp(u, "unix:", 5) == 0) {
			snprintf(own, sizeof(own), "%s-%d", u, (int)getpid());
			u = own;
		}
		if (rc_server_listen(s->srv, u, s->uri[i], sizeof(s->uri[i])) != RC_OK)
			return -1;
		s->n++;
	}
	rc_server_set_threads(s->srv, threads);
	return pthread_create(&s->tid, NULL, rt_run, s) == 0 ? 0 : -1;
}

/* Start a server listening on each of uris (NULL-terminated) with `threads` workers. */
static inline int rt_start(rt_server *s, const char *const *uris, unsigned threads)
{
	return rt_start_lim(s, uris, threads, NULL);
}

static void rt_stop(rt_server *s)
{
	rc_server_stop(s->srv);
	pthread_join(s->tid, NULL);
	rc_server_destroy(s->srv);
}

#endif

/*
 * The back channel, server side (backchan.c): a remotecall server calls its remotecall clients
 * back over the connections they made -- from inside a routine (blocking, on a worker thread),
 * from another thread after the reply (a kept handle), pipelined both ways under load, over
 * TCP, Unix, TLS and QUIC; a client that calls the server again from inside its callback; the
 * connection closed, and the server destroyed, under back channels still held; a hostile peer
 * sending replies nobody asked for; and what has no back channel (UDP, in-process).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <remotecall/remotecall.h>

#include "rt_certs.h"
#include "rt_raw.h"

#define FWD 0x20000b01u /* the server's program */
#define CB 0x40000b01u  /* the clients' program, which the server calls back */
#define MAXKEPT 16

static char dir[256]; /* TLS certificates (tls_certs.sh) */
#define P(f) (snprintf(pbuf, sizeof(pbuf), "%s/%s", dir, f), strdup(pbuf))
static char pbuf[512];

/* ---- the server ------------------------------------------------------------------------- */

#define U (rc_xdrproc)rc_xdr_u_int

typedef struct kq { /* a deferred KICKQ, for the dispatcher thread */
	struct kq *next;
	rc_svc_req *req;
	uint32_t n;
} kq;

static struct {
	rc_server *srv;
	pthread_t th, disp;
	char uri[4][256]; /* tcp, unix, udp; quic (with TLS) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	kq *q;
	bool stop;
	rc_server_conn *kept[MAXKEPT];
	int nkept;
	atomic_int disp_errors; /* dispatcher: calls back that failed */
	atomic_int disp_answer_failed;
	/* SUBMIT's job queue: deferred requests the job threads call back for, then answer */
	kq *jq;
	pthread_t jth[4];
	int njth;
	atomic_int jobs_starved; /* calls back that failed with RC_TOOMANY */
	atomic_int jobs_failed;  /* ... with anything else */
	char starve_detail[256];
	atomic_int outstanding, most; /* SUBMITs deferred and not answered: now, and at most */
	pthread_t bigth;              /* BIGCB's caller back */
	bool bigth_on;
	rc_status one_st;     /* KICKONE's call status */
	char one_detail[256]; /* and its detail */
	int64_t one_ms;
} S;

static int64_t ms_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* KICK(n): n blocking calls back CB_ADD(3i), each checked; the count of right answers. */
static bool s_kick(void *args, void *res, rc_svc_req *req)
{
	uint32_t n = *(uint32_t *)args, ok = 0;
	rc_client *bc;
	rc_status st = rc_svc_req_backchannel(req, CB, 1, &bc);
	if (st != RC_OK) {
		*(uint32_t *)res = 0xdead0000u | (uint32_t)st;
		return true;
	}
	rc_client_set_timeout(bc, 10000);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t a = 3 * i, r = 0;
		if (rc_call(bc, 1, (rc_xdrproc)rc_xdr_u_int, &a, (rc_xdrproc)rc_xdr_u_int, &r) == RC_OK &&
		    r == a + 1)
			ok++;
	}
	rc_client_destroy(bc);
	*(uint32_t *)res = ok;
	return true;
}

/* KICKN(a): one blocking call back CB_NESTED(a), which calls ADD1 here before it answers. */
static bool s_kickn(void *args, void *res, rc_svc_req *req)
{
	rc_client *bc;
	uint32_t r = 0;
	if (rc_svc_req_backchannel(req, CB, 1, &bc) != RC_OK)
		return false;
	rc_client_set_timeout(bc, 10000);
	if (rc_call(bc, 2, (rc_xdrproc)rc_xdr_u_int, args, (rc_xdrproc)rc_xdr_u_int, &r) != RC_OK)
		r = 0;
	rc_client_destroy(bc);
	*(uint32_t *)res = r;
	return true;
}

/* KEEP: the connection's handle is kept (S.kept); its index. */
static bool s_keep(void *args, void *res, rc_svc_req *req)
{
	rc_server_conn *h;
	rc_status st = rc_svc_req_conn(req, &h);
	(void)args;
	if (st != RC_OK) {
		*(uint32_t *)res = 0xdead0000u | (uint32_t)st;
		return true;
	}
	pthread_mutex_lock(&S.mu);
	if (S.nkept < MAXKEPT) {
		*(uint32_t *)res = (uint32_t)S.nkept;
		S.kept[S.nkept++] = h;
	} else {
		rc_server_conn_release(h);
		*(uint32_t *)res = 0xdeadffffu;
	}
	pthread_mutex_unlock(&S.mu);
	return true;
}

static bool s_add1(void *args, void *res, rc_svc_req *req)
{
	(void)req;
	*(uint32_t *)res = *(uint32_t *)args + 1;
	return true;
}

/* KICKQ(n): deferred; the dispatcher thread calls back n times, all started at once, and
 * answers with the count of right answers. */
/* Defer req, with its argument n, onto queue *q (S.q, S.jq) for the threads taking from it. */
static bool kq_defer(rc_svc_req *req, uint32_t n, kq **q)
{
	kq *k = malloc(sizeof(*k));
	if (k == NULL || rc_svc_req_defer(req) != RC_OK) {
		free(k);
		return false;
	}
	k->req = req;
	k->n = n;
	pthread_mutex_lock(&S.mu);
	k->next = *q;
	*q = k;
	pthread_cond_broadcast(&S.cv);
	pthread_mutex_unlock(&S.mu);
	return true;
}

/* The next request on queue *q, waiting for one (under S.mu, kept); NULL once S.stop. */
static kq *kq_take(kq **q)
{
	while (!S.stop) {
		kq *k = *q;
		if (k != NULL) {
			*q = k->next;
			return k;
		}
		pthread_cond_wait(&S.cv, &S.mu);
	}
	return NULL;
}

static bool s_kickq(void *args, void *res, rc_svc_req *req)
{
	(void)res;
	return kq_defer(req, *(uint32_t *)args, &S.q);
}

/* KICKONE: one blocking call back from the routine (on a one-thread server: refused at
 * once); its status and detail are kept in S. */
static bool s_kickone(void *args, void *res, rc_svc_req *req)
{
	rc_client *bc;
	rc_error e;
	uint32_t a = 1, r = 0;
	int64_t t0 = ms_now();
	(void)args;
	if (rc_svc_req_backchannel(req, CB, 1, &bc) != RC_OK)
		return false;
	rc_client_set_timeout(bc, 5000);
	rc_status st = rc_call(bc, 1, (rc_xdrproc)rc_xdr_u_int, &a, (rc_xdrproc)rc_xdr_u_int, &r);
	rc_client_geterr(bc, &e);
	pthread_mutex_lock(&S.mu); /* (the test reads them under it) */
	S.one_st = st;
	S.one_ms = ms_now() - t0;
	snprintf(S.one_detail, sizeof(S.one_detail), "%s", e.detail);
	pthread_mutex_unlock(&S.mu);
	rc_client_destroy(bc);
	*(uint32_t *)res = (uint32_t)st;
	return true;
}

/* SUBMIT(a): deferred to the job threads (jobber), which call CB_ADD(a) back on the caller's
 * connection, blocking, and answer with its result -- or 0xdead0000 | status if it failed. */
static bool s_submit(void *args, void *res, rc_svc_req *req)
{
	int now = atomic_fetch_add(&S.outstanding, 1) + 1, most = atomic_load(&S.most);
	(void)res;
	while (now > most && !atomic_compare_exchange_weak(&S.most, &most, now)) {
	}
	if (kq_defer(req, *(uint32_t *)args, &S.jq))
		return true;
	atomic_fetch_sub(&S.outstanding, 1);
	return false;
}

static void *jobber(void *arg)
{
	kq *k;
	(void)arg;
	pthread_mutex_lock(&S.mu);
	while ((k = kq_take(&S.jq)) != NULL) {
		pthread_mutex_unlock(&S.mu);
		rc_client *bc;
		uint32_t r = 0;
		rc_status st = rc_svc_req_backchannel(k->req, CB, 1, &bc);
		if (st == RC_OK) {
			rc_client_set_timeout(bc, 20000);
			st = rc_call(bc, 1, U, &k->n, U, &r);
			if (st == RC_TOOMANY && atomic_fetch_add(&S.jobs_starved, 1) == 0) {
				rc_error e;
				rc_client_geterr(bc, &e);
				pthread_mutex_lock(&S.mu);
				snprintf(S.starve_detail, sizeof(S.starve_detail), "%s", e.detail);
				pthread_mutex_unlock(&S.mu);
			} else if (st != RC_OK && st != RC_TOOMANY) {
				atomic_fetch_add(&S.jobs_failed, 1);
			}
			rc_client_destroy(bc);
		}
		if (st != RC_OK)
			r = 0xdead0000u | (uint32_t)st;
		atomic_fetch_sub(&S.outstanding, 1);
		if (rc_svc_req_reply(k->req, U, &r) != RC_OK)
			atomic_fetch_add(&S.disp_answer_failed, 1);
		free(k);
		pthread_mutex_lock(&S.mu);
	}
	pthread_mutex_unlock(&S.mu);
	return NULL;
}

/* A result of BIGCB: 256 KiB of bytes (big enough to leave gathered from its memory). */
typedef struct big {
	uint32_t len;
	char *val;
} big;
#define BIG_LEN (256u << 10)
static bool xdr_big(rc_xdr *x, big *b)
{
	return rc_xdr_bytes(x, &b->val, &b->len, BIG_LEN);
}

static void *bigcb_thread(void *arg)
{
	rc_client *bc = arg;
	for (uint32_t i = 0; i < 20; i++) {
		uint32_t r = 0;
		if (rc_call(bc, 1, U, &i, U, &r) != RC_OK || r != i + 1)
			atomic_fetch_add(&S.disp_errors, 1);
	}
	rc_client_destroy(bc);
	return NULL;
}

/* BIGCB: takes the connection's back channel and hands it to a thread that calls back at
 * once, while the routine returns a 256 KiB result -- on a one-thread server, its gathered
 * send and the calls back leave at the same time. */
static bool s_bigcb(void *args, void *res, rc_svc_req *req)
{
	big *b = res;
	rc_client *bc;
	(void)args;
	if (rc_svc_req_backchannel(req, CB, 1, &bc) != RC_OK)
		return false;
	rc_client_set_timeout(bc, 10000);
	if ((b->val = malloc(BIG_LEN)) == NULL) {
		rc_client_destroy(bc);
		return false;
	}
	memset(b->val, 0x42, BIG_LEN);
	b->len = BIG_LEN;
	pthread_mutex_lock(&S.mu);
	if (S.bigth_on || pthread_create(&S.bigth, NULL, bigcb_thread, bc) != 0) {
		pthread_mutex_unlock(&S.mu);
		rc_client_destroy(bc);
		return false;
	}
	S.bigth_on = true;
	pthread_mutex_unlock(&S.mu);
	return true;
}

/* The handle KEEP kept at i (under S.mu: the server's thread wrote it). */
static rc_server_conn *kept(int i)
{
	rc_server_conn *h;
	pthread_mutex_lock(&S.mu);
	h = S.kept[i];
	pthread_mutex_unlock(&S.mu);
	return h;
}

static void *dispatcher(void *arg)
{
	kq *k;
	(void)arg;
	pthread_mutex_lock(&S.mu);
	while ((k = kq_take(&S.q)) != NULL) {
		pthread_mutex_unlock(&S.mu);
		rc_client *bc;
		uint32_t ok = 0;
		if (rc_svc_req_backchannel(k->req, CB, 1, &bc) == RC_OK) {
			rc_async *h[64];
			uint32_t a[64], r[64];
			uint32_t n = k->n > 64 ? 64 : k->n;
			rc_client_set_timeout(bc, 10000);
			for (uint32_t i = 0; i < n; i++) {
				a[i] = 1000 * i;
				if (rc_call_start(bc, 1, (rc_xdrproc)rc_xdr_u_int, &a[i],
				                  (rc_xdrproc)rc_xdr_u_int, &r[i], NULL, NULL, &h[i]) != RC_OK)
					h[i] = NULL;
			}
			for (uint32_t i = 0; i < n; i++) {
				if (h[i] == NULL) {
					atomic_fetch_add(&S.disp_errors, 1);
					continue;
				}
				if (rc_async_wait(h[i], -1) == RC_OK && r[i] == a[i] + 1)
					ok++;
				else
					atomic_fetch_add(&S.disp_errors, 1);
				rc_async_release(h[i]);
			}
			rc_client_destroy(bc);
		}
		if (rc_svc_req_reply(k->req, (rc_xdrproc)rc_xdr_u_int, &ok) != RC_OK)
			atomic_fetch_add(&S.disp_answer_failed, 1);
		free(k);
		pthread_mutex_lock(&S.mu);
	}
	pthread_mutex_unlock(&S.mu);
	return NULL;
}

static const rc_procinfo s_info[] = {
    {FWD, 1, 0, "NULL", (rc_xdrproc)rc_xdr_void, 0, (rc_xdrproc)rc_xdr_void, 0},
    {FWD, 1, 1, "KICK", U, 4, U, 4},
    {FWD, 1, 2, "KEEP", (rc_xdrproc)rc_xdr_void, 0, U, 4},
    {FWD, 1, 3, "ADD1", U, 4, U, 4},
    {FWD, 1, 4, "KICKQ", U, 4, U, 4},
    {FWD, 1, 5, "KICKONE", (rc_xdrproc)rc_xdr_void, 0, U, 4},
    {FWD, 1, 6, "KICKN", U, 4, U, 4},
    {FWD, 1, 7, "SUBMIT", U, 4, U, 4},
    {FWD, 1, 8, "BIGCB", (rc_xdrproc)rc_xdr_void, 0, (rc_xdrproc)xdr_big, sizeof(big)},
};
static bool s_null(void *args, void *res, rc_svc_req *req)
{
	(void)args, (void)res, (void)req;
	return true;
}
static const rc_svc_proc s_procs[] = {
    {&s_info[0], s_null}, {&s_info[1], s_kick},  {&s_info[2], s_keep},  {&s_info[3], s_add1},
    {&s_info[4], s_kickq}, {&s_info[5], s_kickone}, {&s_info[6], s_kickn},
    {&s_info[7], s_submit}, {&s_info[8], s_bigcb},
};
static const rc_svc_prog s_prog = {FWD, 1, 9, s_procs};

static void *srv_main(void *arg)
{
	(void)arg;
	rc_server_run(S.srv);
	return NULL;
}

static const rc_server_limits *srv_lim; /* limits the next srv_start sets, or NULL */

/* Start the server: tcp, unix, udp and (with tls) TLS-offering and quic:// listeners,
 * `threads` threads. */
static void srv_start(unsigned threads, bool tls)
{
	char unix_uri[128];
	memset(&S, 0, sizeof(S));
	pthread_mutex_init(&S.mu, NULL);
	pthread_cond_init(&S.cv, NULL);
	assert_int_equal(rc_server_create(&S.srv), RC_OK);
	assert_int_equal(rc_server_register(S.srv, &s_prog, NULL), RC_OK);
	assert_int_equal(rc_server_listen(S.srv, "tcp://127.0.0.1:0", S.uri[0], sizeof(S.uri[0])),
	                 RC_OK);
	snprintf(unix_uri, sizeof(unix_uri), "unix:/tmp/rc-backchan-%d.sock", (int)getpid());
	unlink(unix_uri + 5);
	assert_int_equal(rc_server_listen(S.srv, unix_uri, S.uri[1], sizeof(S.uri[1])), RC_OK);
	assert_int_equal(rc_server_listen(S.srv, "udp://127.0.0.1:0", S.uri[2], sizeof(S.uri[2])),
	                 RC_OK);
	if (tls) {
		char why[256];
		rc_tls_server_opts o = {P("server.pem"), P("server.key"), NULL, RC_TLS_CERT_NONE, 0};
		assert_int_equal(rc_server_set_tls(S.srv, &o, why, sizeof(why)), RC_OK);
		free((void *)o.cert_file);
		free((void *)o.key_file);
		assert_int_equal(rc_server_listen(S.srv, "quic://127.0.0.1:0", S.uri[3],
		                                  sizeof(S.uri[3])),
		                 RC_OK);
	}
	rc_server_set_threads(S.srv, threads);
	if (srv_lim != NULL)
		assert_int_equal(rc_server_set_limits(S.srv, srv_lim), RC_OK);
	assert_int_equal(pthread_create(&S.disp, NULL, dispatcher, NULL), 0);
	for (S.njth = 0; S.njth < 4; S.njth++)
		assert_int_equal(pthread_create(&S.jth[S.njth], NULL, jobber, NULL), 0);
	assert_int_equal(pthread_create(&S.th, NULL, srv_main, NULL), 0);
}

static void srv_stop(void)
{
	rc_server_stop(S.srv);
	pthread_join(S.th, NULL);
	pthread_mutex_lock(&S.mu);
	S.stop = true;
	pthread_cond_broadcast(&S.cv);
	pthread_mutex_unlock(&S.mu);
	pthread_join(S.disp, NULL);
	for (int i = 0; i < S.njth; i++)
		pthread_join(S.jth[i], NULL);
	rc_server_destroy(S.srv);
	for (int i = 0; i < S.nkept; i++)
		rc_server_conn_release(S.kept[i]);
	unlink(S.uri[1] + 5);
}

/* ---- the clients' program ---------------------------------------------------------------- */

typedef struct cbx {
	rc_client *clnt; /* for NESTED */
	atomic_int served;
} cbx;

static bool c_add(void *args, void *res, rc_svc_req *req)
{
	cbx *x = rc_svc_req_context(req);
	atomic_fetch_add(&x->served, 1);
	*(uint32_t *)res = *(uint32_t *)args + 1;
	return true;
}

/* NESTED(a): calls the server's ADD1(a) on the same client, from inside the callback. */
static bool c_nested(void *args, void *res, rc_svc_req *req)
{
	cbx *x = rc_svc_req_context(req);
	uint32_t r = 0;
	if (rc_call(x->clnt, 3, U, args, U, &r) != RC_OK)
		return false;
	atomic_fetch_add(&x->served, 1);
	*(uint32_t *)res = r * 10;
	return true;
}

static const rc_procinfo c_info[] = {
    {CB, 1, 1, "CB_ADD", U, 4, U, 4},
    {CB, 1, 2, "CB_NESTED", U, 4, U, 4},
};
static const rc_svc_proc c_procs[] = {{&c_info[0], c_add}, {&c_info[1], c_nested}};
static const rc_svc_prog c_prog = {CB, 1, 2, c_procs};

/* A client of the server's at listener i (0 tcp, 1 unix; tls: TCP under TLS, or i 3: QUIC),
 * serving c_prog with x. */
static rc_client *client_of(int i, bool tls, cbx *x)
{
	rc_client *c = NULL;
	if (tls) {
		char *ca = P("ca.pem");
		rc_tls_client_opts o = {RC_TLS_REQUIRED, ca, NULL, NULL, NULL, NULL};
		rc_error e;
		assert_int_equal(rc_client_create_tls(&c, S.uri[i == 3 ? 3 : 0], FWD, 1, &o, &e), RC_OK);
		free(ca);
		assert_true(rc_client_tls(c));
	} else {
		assert_int_equal(rc_client_create(&c, S.uri[i], FWD, 1), RC_OK);
	}
	rc_client_set_timeout(c, 20000);
	x->clnt = c;
	atomic_store(&x->served, 0);
	assert_int_equal(rc_client_serve(c, &c_prog, x), RC_OK);
	return c;
}

/* A thread that drives an idle client from a poll loop (rc_client_pollinfo/advance): it
 * serves calls back that come while the application makes no call. */
typedef struct driver {
	rc_client *c;
	pthread_t th;
	atomic_bool stop;
} driver;

static void *drive(void *arg)
{
	driver *d = arg;
	while (!atomic_load(&d->stop)) {
		struct pollfd pf;
		int tmo;
		if (rc_client_pollinfo(d->c, &pf.fd, &pf.events, &tmo) != RC_OK || pf.fd < 0) {
			usleep(1000);
			continue;
		}
		pf.revents = 0;
		if (poll(&pf, 1, 20) > 0 || tmo == 0)
			(void)rc_client_advance(d->c, pf.revents);
	}
	return NULL;
}

/* ---- tests ------------------------------------------------------------------------------- */

/* A routine on a worker thread calls the client back 64 times, blocking, before it answers;
 * the client serves them while it waits for its own reply. Then a routine's callback calls
 * the server again from inside the client's handler (KICKN -> CB_NESTED -> ADD1). */
static void run_blocking(int i, bool tls)
{
	cbx x;
	rc_client *c;
	uint32_t n = 64, r = 0;
	srv_start(4, tls);
	c = client_of(i, tls, &x);
	for (int round = 0; round < 3; round++) {
		assert_int_equal(rc_call(c, 1, U, &n, U, &r), RC_OK);
		assert_int_equal(r, 64);
	}
	assert_int_equal(atomic_load(&x.served), 3 * 64);
	n = 7;
	assert_int_equal(rc_call(c, 6, U, &n, U, &r), RC_OK);
	assert_int_equal(r, 80); /* (7 + 1) * 10: the nested forward call went through */
	rc_client_destroy(c);
	srv_stop();
}

static void blocking_in_routine_tcp(void **state)
{
	(void)state;
	run_blocking(0, false);
}

static void blocking_in_routine_unix(void **state)
{
	(void)state;
	run_blocking(1, false);
}

static void blocking_in_routine_tls(void **state)
{
	(void)state;
	run_blocking(0, true);
}

static void blocking_in_routine_quic(void **state)
{
	(void)state;
	run_blocking(3, true); /* calls back on streams the server opens (the draft) */
}

/* Both directions at once: 64 pipelined KICKQ calls, each answered after 64 calls back
 * started at once by the server's dispatcher thread (4,096 callbacks in flight over the run),
 * while the client waits for its replies. */
static void run_pipelined(int i, bool tls, unsigned threads)
{
	cbx x;
	rc_client *c;
	rc_async *h[64];
	uint32_t n = 64, r[64];
	srv_start(threads, tls);
	c = client_of(i, tls, &x);
	for (int k = 0; k < 64; k++)
		assert_int_equal(rc_call_start(c, 4, U, &n, U, &r[k], NULL, NULL, &h[k]), RC_OK);
	for (int k = 0; k < 64; k++) {
		assert_int_equal(rc_async_wait(h[k], -1), RC_OK);
		assert_int_equal(r[k], 64);
		rc_async_release(h[k]);
	}
	assert_int_equal(atomic_load(&x.served), 64 * 64);
	assert_int_equal(atomic_load(&S.disp_errors), 0);
	rc_client_destroy(c);
	srv_stop();
}

static void pipelined_both_ways_tcp(void **state)
{
	(void)state;
	run_pipelined(0, false, 4);
}

static void pipelined_both_ways_unix(void **state)
{
	(void)state;
	run_pipelined(1, false, 4);
}

static void pipelined_both_ways_tls(void **state)
{
	(void)state;
	run_pipelined(0, true, 4);
}

static void pipelined_both_ways_quic(void **state)
{
	(void)state;
	run_pipelined(3, true, 4);
}

/* A one-thread server: a blocking call back from its routine fails at once (nobody else could
 * read the reply) and says why; calls back started and answered later (KICKQ) work. */
static void one_thread_server(void **state)
{
	cbx x;
	rc_client *c;
	uint32_t n = 64, r = 0;
	(void)state;
	srv_start(1, false);
	c = client_of(0, false, &x);
	assert_int_equal(rc_call(c, 5, (rc_xdrproc)rc_xdr_void, NULL, U, &r), RC_OK);
	assert_int_equal(r, RC_CANTRECV);
	pthread_mutex_lock(&S.mu);
	assert_int_equal(S.one_st, RC_CANTRECV);
	assert_true(S.one_ms < 1000);
	assert_non_null(strstr(S.one_detail, "only serving thread"));
	pthread_mutex_unlock(&S.mu);
	assert_int_equal(rc_call(c, 4, U, &n, U, &r), RC_OK);
	assert_int_equal(r, 64);
	rc_client_destroy(c);
	srv_stop();
}

/* The server keeps a connection's handle (KEEP) and calls back from its own thread after the
 * reply, blocking and started, while the client sits idle in its poll loop; TLS identity and
 * settings hold. */
static void kept_handle_calls_later(void **state)
{
	cbx x;
	rc_client *c, *bc, *bc2;
	driver d;
	uint32_t idx = 99, a = 41, r = 0;
	rc_async *h[16];
	uint32_t rs[16], as[16];
	(void)state;
	srv_start(2, true);
	c = client_of(0, true, &x);
	assert_int_equal(rc_call(c, 2, (rc_xdrproc)rc_xdr_void, NULL, U, &idx), RC_OK);
	assert_int_equal(idx, 0);
	assert_true(rc_server_conn_open(kept(0)));
	d.c = c;
	atomic_store(&d.stop, false);
	assert_int_equal(pthread_create(&d.th, NULL, drive, &d), 0);
	assert_int_equal(rc_server_conn_backchannel(kept(0), CB, 1, &bc), RC_OK);
	assert_true(rc_client_tls(bc)); /* the connection's TLS */
	rc_client_set_timeout(bc, 10000);
	assert_int_equal(rc_call(bc, 1, U, &a, U, &r), RC_OK);
	assert_int_equal(r, 42);
	for (int k = 0; k < 16; k++) {
		as[k] = (uint32_t)k * 5;
		assert_int_equal(rc_call_start(bc, 1, U, &as[k], U, &rs[k], NULL, NULL, &h[k]), RC_OK);
	}
	/* a second back channel on the same connection: replies go to the one that asked */
	assert_int_equal(rc_server_conn_backchannel(kept(0), CB, 1, &bc2), RC_OK);
	assert_int_equal(rc_call(bc2, 1, U, &a, U, &r), RC_OK);
	assert_int_equal(r, 42);
	for (int k = 0; k < 16; k++) {
		assert_int_equal(rc_async_wait(h[k], -1), RC_OK);
		assert_int_equal(rs[k], as[k] + 1);
		rc_async_release(h[k]);
	}
	/* a program the client does not serve */
	assert_int_equal(rc_call(bc2, 9, U, &a, U, &r), RC_PROCUNAVAIL);
	rc_client_destroy(bc2);
	/* not for a back channel: serving, RPCSEC_GSS */
	assert_int_equal(rc_client_serve(bc, &c_prog, NULL), RC_NOTSUPP);
	assert_int_equal(rc_client_set_auth_gss(bc, "nfs@localhost", RC_GSS_INTEGRITY, NULL),
	                 RC_NOTSUPP);
	/* AUTH_SYS credentials on a call back */
	assert_int_equal(rc_client_set_auth_sys(bc, "srv", 5, 6, NULL, 0), RC_OK);
	assert_int_equal(rc_call(bc, 1, U, &a, U, &r), RC_OK);
	atomic_store(&d.stop, true);
	pthread_join(d.th, NULL);
	rc_client_destroy(bc);
	assert_int_equal(atomic_load(&x.served), 1 + 16 + 1 + 1);
	rc_client_destroy(c);
	srv_stop();
}

/* Forward ADD1 calls from a thread of the client's, n of them, each checked. */
typedef struct fwdrun {
	rc_client *c;
	int n, ok;
	pthread_t th;
} fwdrun;

static void *fwd_calls(void *arg)
{
	fwdrun *f = arg;
	for (int k = 0; k < f->n; k++) {
		uint32_t a = (uint32_t)k, r = 0;
		if (rc_call(f->c, 3, U, &a, U, &r) == RC_OK && r == a + 1)
			f->ok++;
	}
	return NULL;
}

/* An application thread's blocking calls back read the connection themselves while they wait
 * (conn.c's rc__conn_back_take): meanwhile the client's own calls on it are still read and
 * served (as jobs, by the workers); a call back that times out gives the connection back, and
 * the client's next call is served; a connection closed after being read so is replaced by a
 * new one that works the same way (the closed one's memory is reused: conn_pool). */
static void caller_reads_the_connection(void **state)
{
	cbx x;
	rc_client *c, *bc;
	driver d;
	fwdrun f;
	uint32_t idx = 99, a, r;
	int ok = 0;
	rc_status bad = RC_OK;
	int64_t t0;
	(void)state;
	srv_start(2, false);
	for (int round = 0; round < 2; round++) {
		c = client_of(round, false, &x);
		assert_int_equal(rc_call(c, 2, (rc_xdrproc)rc_xdr_void, NULL, U, &idx), RC_OK);
		assert_int_equal(idx, (uint32_t)round);
		d.c = c;
		atomic_store(&d.stop, false);
		assert_int_equal(pthread_create(&d.th, NULL, drive, &d), 0);
		assert_int_equal(rc_server_conn_backchannel(kept(round), CB, 1, &bc), RC_OK);
		rc_client_set_timeout(bc, 10000);
		f.c = c;
		f.n = 300;
		f.ok = 0;
		assert_int_equal(pthread_create(&f.th, NULL, fwd_calls, &f), 0);
		ok = 0;
		for (int k = 0; k < 300; k++) {
			rc_status st;
			a = 7 * (uint32_t)k;
			r = 0;
			if ((st = rc_call(bc, 1, U, &a, U, &r)) == RC_OK && r == a + 1)
				ok++;
			else if (bad == RC_OK)
				bad = st != RC_OK ? st : RC_FAILED;
		}
		pthread_join(f.th, NULL);
		/* nobody serves the client from here on (and no thread is left running if an
		 * assertion below fails) */
		atomic_store(&d.stop, true);
		pthread_join(d.th, NULL);
		assert_int_equal(bad, RC_OK); /* (the first failure's status) */
		assert_int_equal(ok, 300);
		assert_int_equal(f.ok, 300);
		/* the call back times out, and gives the connection back -- the client's next
		 * call is read and answered */
		rc_client_set_timeout(bc, 200);
		a = 1;
		t0 = ms_now();
		assert_int_equal(rc_call(bc, 1, U, &a, U, &r), RC_TIMEDOUT);
		assert_true(ms_now() - t0 < 5000);
		a = 10;
		assert_int_equal(rc_call(c, 3, U, &a, U, &r), RC_OK);
		assert_int_equal(r, 11);
		rc_client_destroy(bc);
		assert_int_equal(atomic_load(&x.served), 300 + 1);
		rc_client_destroy(c);
		for (int k = 0; k < 200 && rc_server_conn_open(kept(round)); k++)
			usleep(10000);
		assert_false(rc_server_conn_open(kept(round)));
	}
	srv_stop();
}

/* The client goes while the server's calls back are in flight (a KICKQ whose 64 callbacks the
 * client never reads): they all fail (no hang), the deferred answer fails to send, the kept
 * handle says closed, and calls on a back channel kept past it fail at once. Then the server
 * is destroyed under a back channel still held: its calls fail, nothing leaks. */
static void closed_under_calls(void **state)
{
	cbx x;
	rc_client *c, *bc;
	rc_async *h;
	uint32_t n = 64, r = 0, idx = 99, a = 1;
	int64_t t0;
	(void)state;
	srv_start(2, false);
	c = client_of(0, false, &x);
	assert_int_equal(rc_call(c, 2, (rc_xdrproc)rc_xdr_void, NULL, U, &idx), RC_OK);
	assert_int_equal(rc_server_conn_backchannel(kept(0), CB, 1, &bc), RC_OK);
	assert_int_equal(rc_call_start(c, 4, U, &n, U, &r, NULL, NULL, &h), RC_OK);
	usleep(100000); /* the dispatcher's 64 calls back are out, unread */
	t0 = ms_now();
	rc_client_destroy(c); /* h completes cancelled; the connection closes */
	assert_int_equal(rc_async_status(h), RC_CANCELLED);
	rc_async_release(h);
	for (int k = 0; k < 200 && atomic_load(&S.disp_answer_failed) == 0; k++)
		usleep(10000);
	assert_int_equal(atomic_load(&S.disp_answer_failed), 1);
	assert_int_equal(atomic_load(&S.disp_errors), 64);
	assert_true(ms_now() - t0 < 5000); /* not the calls' 10 s timeout */
	for (int k = 0; k < 200 && rc_server_conn_open(kept(0)); k++)
		usleep(10000);
	assert_false(rc_server_conn_open(kept(0)));
	t0 = ms_now();
	assert_int_equal(rc_call(bc, 1, U, &a, U, &r), RC_CANTSEND);
	assert_true(ms_now() - t0 < 1000);
	rc_client_destroy(bc);
	{
		rc_client *bc3;
		assert_int_equal(rc_server_conn_backchannel(kept(0), CB, 1, &bc3), RC_CANTSEND);
		assert_null(bc3);
	}
	/* the server goes under a back channel held on a live connection */
	c = client_of(1, false, &x);
	assert_int_equal(rc_call(c, 2, (rc_xdrproc)rc_xdr_void, NULL, U, &idx), RC_OK);
	assert_int_equal(idx, 1);
	assert_int_equal(rc_server_conn_backchannel(kept(1), CB, 1, &bc), RC_OK);
	srv_stop(); /* releases the kept handles: bc holds its own */
	assert_int_equal(rc_call(bc, 1, U, &a, U, &r), RC_CANTSEND);
	rc_client_destroy(bc);
	rc_client_destroy(c);
}

/* ---- a hostile peer ---------------------------------------------------------------------- */

typedef struct bgcall {
	rc_client *bc;
	uint32_t a, r;
	rc_status st;
	pthread_t th;
} bgcall;

static void *bg_call(void *arg)
{
	bgcall *b = arg;
	b->st = rc_call(b->bc, 1, U, &b->a, U, &b->r);
	return NULL;
}

/* A peer written by hand: after KEEP it gets the server's call back; before answering it, it
 * sends replies with unknown xids, a reply too short to have one, and a reply to its own
 * KEEP's xid -- all dropped, the connection kept -- then the right answer, which the call
 * gets; its NULL call afterwards is still served. */
/* ---- the delay point of conn.c (runtime/core/testpoint.h; this test links its own conn.c) ---- */
void (*rc__test_point)(const char *where);
static atomic_int tp_arrived;

/* At conn.back_reader_ends (a back channel's caller ends its turn on a dead connection): say
 * so and wait 300 ms, the window in which the server's destroy must not free what the caller
 * still touches. */
static void tp_wait(const char *where)
{
	if (strcmp(where, "conn.back_reader_ends") != 0)
		return;
	atomic_fetch_add(&tp_arrived, 1);
	usleep(300000);
}

/*
 * The server destroyed while a back channel's caller, reading the connection itself, ends its
 * turn on the connection the peer just closed (issue 45's third race): the caller's last
 * touches of the connection and the server come after it is counted out of the readers the
 * destroy waits for -- under ASan or valgrind a use of freed memory before the fix. A raw
 * peer takes the call back and closes; the delay point holds the caller in the window.
 */
static void destroy_while_back_reader_ends(void **state)
{
	int tries;
	(void)state;
	rc__test_point = tp_wait;
	for (tries = 0; tries < 20 && atomic_load(&tp_arrived) == 0; tries++) {
		struct sockaddr_in a = {.sin_family = AF_INET};
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		uint32_t w[64], keep[10] = {0x1234, 0, 2, FWD, 1, 2, 0, 0, 0, 0};
		bgcall b = {.a = 5};
		srv_start(2, false);
		a.sin_port = htons((uint16_t)atoi(strrchr(S.uri[0], ':') + 1));
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
		assert_true(send_words(fd, keep, 10));
		assert_int_equal(recv_words(fd, w, 64), 7);
		assert_int_equal(rc_server_conn_backchannel(kept(0), CB, 1, &b.bc), RC_OK);
		rc_client_set_timeout(b.bc, 10000);
		assert_int_equal(pthread_create(&b.th, NULL, bg_call, &b), 0);
		assert_int_equal(recv_words(fd, w, 64), 11); /* the call back is out: unanswered */
		usleep(20000); /* its caller reads the connection now (or a loop's thread does) */
		close(fd);
		for (int64_t t0 = ms_now(); atomic_load(&tp_arrived) == 0 && ms_now() - t0 < 200;)
			usleep(1000);
		srv_stop(); /* within the window if the caller is in it: destroy must wait */
		pthread_join(b.th, NULL);
		assert_int_not_equal(b.st, RC_OK);
		rc_client_destroy(b.bc);
	}
	rc__test_point = NULL;
	print_message("    the window opened after %d tries\n", tries);
	assert_true(atomic_load(&tp_arrived) > 0);
}

static void hostile_replies(void **state)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM, 0), n;
	uint32_t w[64];
	bgcall b = {.a = 77};
	(void)state;
	srv_start(2, false);
	a.sin_port = htons((uint16_t)atoi(strrchr(S.uri[0], ':') + 1));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	{
		uint32_t keep[10] = {0x1234, 0, 2, FWD, 1, 2, 0, 0, 0, 0};
		assert_true(send_words(fd, keep, 10));
		n = recv_words(fd, w, 64);
		assert_int_equal(n, 7); /* xid REPLY ACCEPTED verf(2) SUCCESS idx */
		assert_int_equal(w[0], 0x1234);
		assert_int_equal(w[6], 0);
	}
	assert_int_equal(rc_server_conn_backchannel(kept(0), CB, 1, &b.bc), RC_OK);
	rc_client_set_timeout(b.bc, 10000);
	assert_int_equal(pthread_create(&b.th, NULL, bg_call, &b), 0);
	n = recv_words(fd, w, 64); /* the call back: xid CALL 2 CB 1 1 cred(2) verf(2) arg */
	assert_int_equal(n, 11);
	assert_int_equal(w[1], 0);
	assert_int_equal(w[3], CB);
	assert_int_equal(w[10], 77);
	{
		uint32_t xid = w[0];
		uint32_t bogus[6] = {xid + 1, 1, 0, 0, 0, 0};
		uint32_t shorty[1] = {xid};
		uint32_t old[7] = {0x1234, 1, 0, 0, 0, 0, 5};
		uint32_t good[7] = {xid, 1, 0, 0, 0, 0, 78};
		for (uint32_t k = 0; k < 100; k++) {
			bogus[0] = xid + 1 + k;
			assert_true(send_words(fd, bogus, 6));
		}
		assert_true(send_words(fd, shorty, 1));
		assert_true(send_words(fd, old, 7));
		usleep(50000);
		assert_true(send_words(fd, good, 7));
		/* the same reply again: its call has had its answer */
		assert_true(send_words(fd, good, 7));
	}
	pthread_join(b.th, NULL);
	assert_int_equal(b.st, RC_OK);
	assert_int_equal(b.r, 78);
	{
		uint32_t null[10] = {0x5678, 0, 2, FWD, 1, 0, 0, 0, 0, 0};
		assert_true(send_words(fd, null, 10));
		n = recv_words(fd, w, 64);
		assert_int_equal(n, 6);
		assert_int_equal(w[0], 0x5678);
	}
	assert_true(rc_server_conn_open(kept(0)));
	rc_client_destroy(b.bc);
	close(fd);
	srv_stop();
}

/* No back channel where there is no connection: a UDP request, an in-process one. */
static void not_on_datagrams_or_in_process(void **state)
{
	rc_client *c;
	uint32_t idx = 0;
	char in[128], bound[256];
	(void)state;
	srv_start(2, false);
	assert_int_equal(rc_client_create(&c, S.uri[2], FWD, 1), RC_OK);
	assert_int_equal(rc_call(c, 2, (rc_xdrproc)rc_xdr_void, NULL, U, &idx), RC_OK);
	assert_int_equal(idx, 0xdead0000u | RC_NOTSUPP);
	rc_client_destroy(c);
	srv_stop();
	/* in-process: a server stepped by this thread */
	memset(&S, 0, sizeof(S));
	pthread_mutex_init(&S.mu, NULL);
	assert_int_equal(rc_server_create(&S.srv), RC_OK);
	assert_int_equal(rc_server_register(S.srv, &s_prog, NULL), RC_OK);
	snprintf(in, sizeof(in), "inproc:backchan-%d", (int)getpid());
	assert_int_equal(rc_server_listen(S.srv, in, bound, sizeof(bound)), RC_OK);
	assert_int_equal(rc_client_create(&c, bound, FWD, 1), RC_OK);
	assert_int_equal(rc_call(c, 2, (rc_xdrproc)rc_xdr_void, NULL, U, &idx), RC_OK);
	assert_int_equal(idx, 0xdead0000u | RC_NOTSUPP);
	rc_client_destroy(c);
	rc_server_destroy(S.srv);
	assert_int_equal(rc_svc_req_conn(NULL, NULL), RC_INVAL);
	assert_int_equal(rc_server_conn_backchannel(NULL, CB, 1, &c), RC_INVAL);
	assert_false(rc_server_conn_open(NULL));
	rc_server_conn_release(NULL);
}

static int setup(void **state)
{
	(void)state;
	return rt_certs_make(dir, sizeof(dir), "backchan-tls");
}

static int teardown(void **state)
{
	(void)state;
	return rt_certs_remove(dir);
}

/*
 * The job queue (docs/runtime.md, "Replies are always read"): n SUBMITs pipelined on one
 * connection with default limits, each deferred to four job threads that call the client back
 * on that connection (blocking) before they answer. max_deferred_conn (64) is reached at once,
 * so the server reads on past it, parking requests, to find the replies to its calls back;
 * before that rule it read 4 x 64 and stopped, and every call back timed out. With parked
 * set, a small max_parked_conn instead: the calls back that cannot be read fail at once with
 * RC_TOOMANY and say why, and every SUBMIT still completes.
 */
static void run_jobs(int i, unsigned threads, uint32_t n, size_t parked)
{
	cbx x;
	rc_client *c;
	rc_async **h = calloc(n, sizeof(*h));
	uint32_t *r = calloc(n, sizeof(*r));
	uint32_t *a = calloc(n, sizeof(*a));
	rc_server_stats st;
	int ok = 0, refused = 0;
	int64_t t0 = ms_now();

	assert_non_null(h);
	if (parked > 0) {
		static rc_server_limits lim;
		lim.max_parked_conn = parked;
		lim.max_deferred_conn = 8;
		srv_lim = &lim;
	}
	srv_start(threads, false);
	srv_lim = NULL;
	c = client_of(i, false, &x);
	for (uint32_t k = 0; k < n; k++) {
		a[k] = 7 * k;
		assert_int_equal(rc_call_start(c, 7, U, &a[k], U, &r[k], NULL, NULL, &h[k]), RC_OK);
	}
	for (uint32_t k = 0; k < n; k++) {
		assert_int_equal(rc_async_wait(h[k], -1), RC_OK);
		if (r[k] == a[k] + 1)
			ok++;
		else if (r[k] == (0xdead0000u | RC_TOOMANY))
			refused++;
		rc_async_release(h[k]);
	}
	assert_int_equal(rc_server_get_stats(S.srv, &st), RC_OK);
	print_message("    %u jobs (%s, %u threads, max_parked_conn %zu): %d called back, %d refused "
	              "at once, %llu parked, %llu calls back starved, %lld ms\n",
	              n, i == 0 ? "tcp" : "unix", threads, parked, ok, refused,
	              (unsigned long long)st.requests_parked, (unsigned long long)st.backcalls_starved,
	              (long long)(ms_now() - t0));
	assert_int_equal(ok + refused, (int)n); /* each completed once, as one or the other */
	assert_int_equal(atomic_load(&S.jobs_failed), 0);
	assert_int_equal(atomic_load(&S.disp_answer_failed), 0);
	assert_true(st.requests_parked > 0); /* the caps were passed: parking was needed */
	/* the deferral cap held throughout, parking or not (an unsigned count once wrapped) */
	assert_true(atomic_load(&S.most) <= (parked > 0 ? 8 : 64));
	if (parked == 0) {
		assert_int_equal(ok, (int)n);
		assert_int_equal(st.backcalls_starved, 0);
	} else {
		assert_true(refused > 0);
		assert_int_equal(refused, atomic_load(&S.jobs_starved));
		assert_true(st.backcalls_starved >= (uint64_t)refused);
		pthread_mutex_lock(&S.mu);
		assert_non_null(strstr(S.starve_detail, "max_parked_conn"));
		pthread_mutex_unlock(&S.mu);
	}
	/* every call back that succeeded was served; one that failed at once may have been sent
	 * already, and served (as after a timeout), its late reply dropped */
	assert_true((int)atomic_load(&x.served) >= ok);
	if (parked == 0)
		assert_int_equal((int)atomic_load(&x.served), ok);
	rc_client_destroy(c);
	srv_stop();
	free(h);
	free(r);
	free(a);
}

/*
 * A one-thread server's big reply beside a call back (issue 45's race): BIGCB's routine hands
 * the connection's back channel to a thread that calls back at once while the routine's 256
 * KiB result leaves gathered from its memory. Both must go under the connection's write lock:
 * records interleaved on the wire would break the stream (ThreadSanitizer saw the race).
 */
static void big_reply_beside_call_back(void **state)
{
	cbx x;
	rc_client *c;
	(void)state;
	srv_start(1, false);
	c = client_of(0, false, &x);
	for (int round = 0; round < 10; round++) {
		big b = {0, NULL};
		assert_int_equal(rc_call(c, 8, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)xdr_big, &b),
		                 RC_OK);
		assert_int_equal(b.len, BIG_LEN);
		for (uint32_t i = 0; i < BIG_LEN; i += 4096)
			assert_int_equal((unsigned char)b.val[i], 0x42);
		rc_xdr_free((rc_xdrproc)xdr_big, &b);
		/* the calls back end (served while this client waits or in the next call) */
		pthread_mutex_lock(&S.mu);
		pthread_t th = S.bigth;
		pthread_mutex_unlock(&S.mu);
		for (int64_t t0 = ms_now(); atomic_load(&x.served) < 20 * (round + 1);) {
			assert_true(ms_now() - t0 < 10000);
			assert_int_equal(rc_call(c, 0, (rc_xdrproc)rc_xdr_void, NULL,
			                         (rc_xdrproc)rc_xdr_void, NULL),
			                 RC_OK);
		}
		pthread_join(th, NULL);
		pthread_mutex_lock(&S.mu);
		S.bigth_on = false;
		pthread_mutex_unlock(&S.mu);
	}
	assert_int_equal(atomic_load(&S.disp_errors), 0);
	rc_client_destroy(c);
	srv_stop();
}

static void job_queue_one_thread_tcp(void **state)
{
	(void)state;
	run_jobs(0, 1, 2000, 0);
}

static void job_queue_one_thread_unix(void **state)
{
	(void)state;
	run_jobs(1, 1, 2000, 0);
}

static void job_queue_workers_tcp(void **state)
{
	(void)state;
	run_jobs(0, 4, 2000, 0);
}

static void job_queue_parking_budget_spent(void **state)
{
	(void)state;
	run_jobs(0, 1, 2000, 4096);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(blocking_in_routine_tcp),
	    cmocka_unit_test(blocking_in_routine_unix),
	    cmocka_unit_test(blocking_in_routine_tls),
	    cmocka_unit_test(blocking_in_routine_quic),
	    cmocka_unit_test(pipelined_both_ways_tcp),
	    cmocka_unit_test(pipelined_both_ways_unix),
	    cmocka_unit_test(pipelined_both_ways_tls),
	    cmocka_unit_test(pipelined_both_ways_quic),
	    cmocka_unit_test(one_thread_server),
	    cmocka_unit_test(kept_handle_calls_later),
	    cmocka_unit_test(caller_reads_the_connection),
	    cmocka_unit_test(closed_under_calls),
	    cmocka_unit_test(hostile_replies),
	    cmocka_unit_test(not_on_datagrams_or_in_process),
	    cmocka_unit_test(big_reply_beside_call_back),
	    cmocka_unit_test(destroy_while_back_reader_ends),
	    cmocka_unit_test(job_queue_one_thread_tcp),
	    cmocka_unit_test(job_queue_one_thread_unix),
	    cmocka_unit_test(job_queue_workers_tcp),
	    cmocka_unit_test(job_queue_parking_budget_spent),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

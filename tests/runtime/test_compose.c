/*
 * Composition (issue 39): the runtime's features together, at random, under invariants.
 *
 * A server (three loop threads, TCP and Unix listeners, default limits) serves WORK, which
 * answers inline, or defers the request to a pool of three threads that answer it, drop it,
 * answer it twice, answer it again later after other requests may have reused its object,
 * or first call the client back on its own connection (a blocking call back, or a started
 * one) -- with small or big arguments and results. Client threads, each on its own client
 * (TCP or Unix) serving the call-back program, make blocking calls and batches of started
 * calls (some deeper than the server's per-connection deferral cap), kill their connection
 * under calls in flight (shutdown, or the client destroyed), and check:
 *
 *   - every call completes exactly once (a started call's callback runs once), or fails with
 *     a status; an undisturbed call ends as its operation says (RC_OK with its own tag and
 *     result; RC_TIMEDOUT for a dropped one);
 *   - no reply reaches a caller it was not meant for (every RC_OK carries the call's tag);
 *   - no call waits longer than its timeout plus SLACK_MS;
 *   - on the server, a second answer (after a reply, after a drop, or late, after reuse)
 *     returns RC_INVAL and sends nothing;
 *   - once every request is answered and every client gone, the server's inbound count
 *     (rc_server_stats.inbound_bytes: what max_inbound_bytes bounds) is back to 0.
 *
 * Seeded (RC_COMPOSE_SEED=N to repeat; the seed is printed), bounded in count (OPS_PER_THREAD)
 * and time (RUN_MS for new work, WATCHDOG_MS in all).
 *
 * The same mix under RPCSEC_GSS (`test_compose gss`, ctest test_compose_gss: inside the realm
 * of tests/gss/krb5_fixture.sh, 77 without one): every client is krb5i, and the server's
 * contexts go while the clients call -- a table of CLIENT_THREADS contexts that a thread of
 * the test pushes out of (a new context every EVICT_MIN_MS..EVICT_MAX_MS: the least recently
 * used client's goes), an idle time of GSS_IDLE_MS, and the keytab reloaded (rc_server_set_gss
 * again) every RELOAD_EVERY of those. A call refused for its context (CREDPROBLEM) is renewed
 * once by its client and goes again, so every invariant above still holds -- an undisturbed
 * call still ends RC_OK -- and the run must show it happened: contexts pushed out
 * (rc_server_stats.gss_evicted), WORK calls refused for their context (the server's procedure
 * counters) and contexts made again by the clients (INITs beyond the clients made), each > 0.
 *
 * Not covered here: the budget at its limit (test_sec_conn open_records_within_inbound_budget).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <remotecall/remotecall.h>

#define FWD 0x20000c39u /* the server's program: 1 WORK */
#define CB 0x40000c39u  /* the clients' program: 1 BUMP(u_int) -> u_int + 1 */

#define CLIENT_THREADS 4
#define OPS_PER_THREAD 400 /* operations (a blocking call, or a batch) per client thread */
#define RUN_MS 15000       /* no new operation after this */
#define WATCHDOG_MS 40000  /* the whole test, or it aborts saying where it stood */
#define GSS_RUN_MS 8000    /* ... under RPCSEC_GSS (its ctest is bounded at 120 s, the realm's
                              start included: a checker -- valgrind, sanitizers -- makes each
                              Kerberos operation many times slower) */
#define GSS_WATCHDOG_MS 60000
#define SLACK_MS 1000      /* a wait may pass its timeout by this much */
#define CALL_MS 5000       /* timeout of a call that is answered */
#define DROP_MS 300        /* timeout of a call the server drops */
#define CB_MS 3000         /* timeout of a call back */
#define BIG (256u * 1024)  /* a big argument or result: BIG .. 4 BIG bytes */
#define DEEP_MAX 400       /* a deep batch: 65 .. DEEP_MAX started calls (the cap is 64) */
#define POOL_THREADS 3
#define GSS_TARGET "nfs@localhost" /* the fixture's service (keytab KRB5_KTNAME) */
/* A checker (sanitizers) slows every call several times while the evictor's clock does not:
 * its churn is stretched by as much, so that contexts live as many calls as in the plain build
 * (a call whose context is pushed out a third time before it is served fails by design: a call
 * is renewed at most twice, RC__RENEWALS). */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define CHURN_SLOW 6
#else
#define CHURN_SLOW 1
#endif
#define GSS_IDLE_MS (500 * CHURN_SLOW)   /* the server drops a context idle this long */
#define EVICT_MIN_MS (50 * CHURN_SLOW)   /* a new context pushes out the least recently used */
#define EVICT_MAX_MS (250 * CHURN_SLOW)  /* ... every EVICT_MIN_MS to EVICT_MAX_MS */
#define RELOAD_EVERY 10    /* the keytab reloaded every this many new contexts */

/* What a run is: the plain mix, or under RPCSEC_GSS with contexts going meanwhile. */
static struct {
	bool gss;
	int run_ms, watchdog_ms;
} M;

enum op {
	OP_INLINE, /* answered in the routine */
	OP_DEFER,  /* deferred, answered by the pool */
	OP_DROP,   /* deferred, dropped; then answered (must be refused: RC_INVAL) */
	OP_TWICE,  /* deferred, answered, answered again at once (RC_INVAL) */
	OP_STALE,  /* deferred, answered; answered again after the next ones (RC_INVAL) */
	OP_CB_BLOCK, /* deferred; the pool calls the client back (blocking), then answers */
	OP_CB_START, /* deferred; the pool starts a call back, waits for it, then answers */
	OP_COUNT
};

/* ---- wire types ---------------------------------------------------------------------------- */

typedef struct {
	uint32_t op, tag, reply_len;
	uint32_t len;
	char *data; /* byte i: (tag + i) & 0xff */
} work_arg;

typedef struct {
	uint32_t tag;
	uint32_t cbval; /* an OP_CB_*: the call back's result, else 0 */
	uint32_t len;
	char *data; /* byte i: (tag * 3 + i) & 0xff */
} work_res;

static bool xdr_work_arg(rc_xdr *x, work_arg *a)
{
	return rc_xdr_u_int(x, &a->op) && rc_xdr_u_int(x, &a->tag) &&
	       rc_xdr_u_int(x, &a->reply_len) && rc_xdr_bytes(x, &a->data, &a->len, 8u << 20);
}

static bool xdr_work_res(rc_xdr *x, work_res *r)
{
	return rc_xdr_u_int(x, &r->tag) && rc_xdr_u_int(x, &r->cbval) &&
	       rc_xdr_bytes(x, &r->data, &r->len, 8u << 20);
}

static char *pattern(uint32_t n, uint32_t base)
{
	char *p = malloc(n ? n : 1);
	if (p != NULL)
		for (uint32_t i = 0; i < n; i++)
			p[i] = (char)(base + i);
	return p;
}

static bool pattern_ok(const char *p, uint32_t n, uint32_t base)
{
	for (uint32_t i = 0; i < n; i++)
		if ((unsigned char)p[i] != (unsigned char)(base + i))
			return false;
	return true;
}

static int64_t ms_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* xorshift64*: each thread its own, from the seed */
static uint32_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return (uint32_t)((*s * 2685821657736338717ull) >> 32);
}

/* ---- what went wrong, counted ------------------------------------------------------------- */

static struct {
	atomic_long calls, completions, ok, failed, killed_calls, cb_served;
	atomic_long twice_completed;  /* a started call's callback ran a second time */
	atomic_long never_completed;  /* a started call with no completion after its batch */
	atomic_long misdelivered;     /* RC_OK with another call's tag, or a bad result */
	atomic_long wrong_status;     /* an undisturbed call that ended otherwise than its op says */
	atomic_long late;             /* a wait past its timeout + SLACK_MS */
	atomic_long second_answer_ok; /* server: a second answer not refused */
	atomic_long second_ok_after[3]; /* ... after a reply at once, after a drop, late */
	atomic_long misdelivered_op[OP_COUNT];
	char first_misdelivery[200];
	atomic_flag first_misdelivery_set;
	atomic_long bad_args;         /* server: an argument that did not match its pattern */
	atomic_long cb_failed;        /* server: a call back that failed on a live connection */
	atomic_long by_status[64];    /* failed calls, by status */
	atomic_long worst_over_ms;    /* the longest wait past a timeout */
	atomic_int first_status_op[OP_COUNT]; /* the first wrong status of each op, + 1 */
	atomic_long gss_clients;      /* GSS: contexts made by rc_client_set_auth_gss */
	char first_autherr[300];      /* GSS: the detail of the first undisturbed RC_AUTHERROR */
	atomic_flag first_autherr_set;
} E;

static const char *op_name[OP_COUNT] = {"inline", "defer", "drop", "twice", "stale",
                                        "callback-blocking", "callback-started"};

/* ---- the server --------------------------------------------------------------------------- */

typedef struct task {
	struct task *next;
	rc_svc_req *req;
	uint32_t op, tag, reply_len;
} task;

static struct {
	rc_server *srv;
	pthread_t th, pool[POOL_THREADS];
	char tcp[256], unx[256];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	task *head, **tail;
	bool stop;
	uint64_t seed;
	/* RPCSEC_GSS: the thread that pushes contexts out, what it did, what the server counted */
	pthread_t evictor;
	atomic_bool evictor_stop;
	long evictor_ctxs, reloads;
	char gss_why[300];
	uint64_t gss_evicted, gss_live, work_refused, work_calls;
} S;

/* Answer req with its tag and a result of reply_len bytes; rc_svc_req_reply's status. */
static rc_status answer(rc_svc_req *req, uint32_t tag, uint32_t reply_len, uint32_t cbval)
{
	work_res r = {tag, cbval, reply_len, pattern(reply_len, tag * 3)};
	rc_status st = r.data ? rc_svc_req_reply(req, (rc_xdrproc)xdr_work_res, &r) : RC_NOMEM;
	free(r.data);
	return st;
}

/* A second answer that must be refused: a bogus tag, so a delivered one shows at the client. */
static void answer_again(rc_svc_req *stale, uint32_t tag, int after)
{
	if (answer(stale, tag ^ 0x5a5a5a5au, 0, 0) != RC_INVAL) {
		atomic_fetch_add(&E.second_answer_ok, 1);
		atomic_fetch_add(&E.second_ok_after[after], 1);
	}
}

/* Call the client back on req's connection (blocking, or started and waited for): BUMP(tag). */
static uint32_t call_back(rc_svc_req *req, uint32_t tag, bool started)
{
	rc_client *bc;
	uint32_t r = 0;
	rc_status st = rc_svc_req_backchannel(req, CB, 1, &bc);
	if (st == RC_OK) {
		rc_client_set_timeout(bc, CB_MS);
		if (!started) {
			st = rc_call(bc, 1, (rc_xdrproc)rc_xdr_u_int, &tag, (rc_xdrproc)rc_xdr_u_int, &r);
		} else {
			rc_async *h;
			st = rc_call_start(bc, 1, (rc_xdrproc)rc_xdr_u_int, &tag,
			                   (rc_xdrproc)rc_xdr_u_int, &r, NULL, NULL, &h);
			if (st == RC_OK) {
				st = rc_async_wait(h, CB_MS + SLACK_MS);
				rc_async_release(h);
			}
		}
		rc_client_destroy(bc);
	}
	/* a call back on a connection the client killed may fail; one that times out is a
	 * call back whose reply was never read */
	if (st == RC_TIMEDOUT || st == RC_INPROGRESS)
		atomic_fetch_add(&E.cb_failed, 1);
	return st == RC_OK ? r : 0xdead0000u | (uint32_t)st;
}

static void *pool_thread(void *arg)
{
	uint64_t seed = S.seed ^ (uintptr_t)arg * 0x9e3779b97f4a7c15ull;
	rc_svc_req *stale = NULL; /* an OP_STALE request answered already */
	uint32_t stale_tag = 0;
	for (;;) {
		pthread_mutex_lock(&S.mu);
		while (S.head == NULL && !S.stop)
			pthread_cond_wait(&S.cv, &S.mu);
		task *t = S.head;
		if (t != NULL && (S.head = t->next) == NULL)
			S.tail = &S.head;
		pthread_mutex_unlock(&S.mu);
		if (t == NULL)
			break;
		if (rnd(&seed) % 4 == 0)
			usleep(rnd(&seed) % 2000);
		uint32_t cbval = 0;
		switch (t->op) {
		case OP_DROP:
			rc_svc_req_drop(t->req);
			answer_again(t->req, t->tag, 1); /* after a drop: refused */
			break;
		case OP_TWICE:
			answer(t->req, t->tag, t->reply_len, 0);
			answer_again(t->req, t->tag, 0);
			break;
		case OP_STALE:
			answer(t->req, t->tag, t->reply_len, 0);
			if (stale != NULL) /* the previous one: others were deferred since */
				answer_again(stale, stale_tag, 2);
			stale = t->req;
			stale_tag = t->tag;
			break;
		case OP_CB_BLOCK:
		case OP_CB_START:
			cbval = call_back(t->req, t->tag, t->op == OP_CB_START);
			/* fall through */
		default:
			answer(t->req, t->tag, t->reply_len, cbval);
		}
		free(t);
	}
	if (stale != NULL)
		answer_again(stale, stale_tag, 2);
	return NULL;
}

static bool s_work(void *args, void *res, rc_svc_req *req)
{
	work_arg *a = args;
	work_res *r = res;
	if (!pattern_ok(a->data, a->len, a->tag))
		atomic_fetch_add(&E.bad_args, 1);
	if (a->op == OP_INLINE || a->op >= OP_COUNT) {
		r->tag = a->tag;
		r->len = a->reply_len;
		r->data = pattern(a->reply_len, a->tag * 3);
		return r->data != NULL;
	}
	task *t = malloc(sizeof(*t));
	if (t == NULL)
		return false;
	*t = (task){NULL, req, a->op, a->tag, a->reply_len}; /* before the deferral decodes again */
	rc_status st = rc_svc_req_defer(req);
	if (st != RC_OK) {
		free(t);
		return false; /* SYSTEM_ERR: the client sees RC_SYSTEMERROR, a wrong status */
	}
	pthread_mutex_lock(&S.mu);
	*S.tail = t;
	S.tail = &t->next;
	pthread_cond_signal(&S.cv);
	pthread_mutex_unlock(&S.mu);
	return true;
}

static const rc_procinfo work_info = {FWD, 1, 1, "WORK", (rc_xdrproc)xdr_work_arg,
                                      sizeof(work_arg), (rc_xdrproc)xdr_work_res,
                                      sizeof(work_res)};
static const rc_svc_proc fwd_procs[] = {{&work_info, s_work}};
static const rc_svc_prog fwd_prog = {FWD, 1, 1, fwd_procs};

static void *server_run(void *arg)
{
	(void)arg;
	rc_server_run(S.srv);
	return NULL;
}

static void server_start(uint64_t seed)
{
	char path[128];
	memset(&S, 0, sizeof(S));
	pthread_mutex_init(&S.mu, NULL);
	pthread_cond_init(&S.cv, NULL);
	S.tail = &S.head;
	S.seed = seed;
	snprintf(path, sizeof(path), "unix:/tmp/rc-compose-%d.sock", (int)getpid());
	assert_int_equal(rc_server_create(&S.srv), RC_OK);
	assert_int_equal(rc_server_register(S.srv, &fwd_prog, NULL), RC_OK);
	assert_int_equal(rc_server_listen(S.srv, "tcp://127.0.0.1:0", S.tcp, sizeof(S.tcp)), RC_OK);
	assert_int_equal(rc_server_listen(S.srv, path, S.unx, sizeof(S.unx)), RC_OK);
	assert_int_equal(rc_server_set_threads(S.srv, 3), RC_OK);
	if (M.gss) {
		char why[300] = "";
		if (rc_server_set_gss(S.srv, GSS_TARGET, NULL, why, sizeof(why)) != RC_OK)
			fail_msg("rc_server_set_gss: %s", why);
		/* (after set_gss: the table takes them then) as many contexts as client threads: a
		 * new one pushes out the least recently used */
		rc_server_limits lim = {.gss_contexts = CLIENT_THREADS, .gss_idle_ms = GSS_IDLE_MS};
		assert_int_equal(rc_server_set_limits(S.srv, &lim), RC_OK);
		/* WORK's refusals (AUTH_ERROR: context gone) and the INITs (procedure 0) counted */
		assert_int_equal(rc_server_set_proc_stats(S.srv, true), RC_OK);
	}
	for (uintptr_t i = 0; i < POOL_THREADS; i++)
		assert_int_equal(pthread_create(&S.pool[i], NULL, pool_thread, (void *)(i + 1)), 0);
	assert_int_equal(pthread_create(&S.th, NULL, server_run, NULL), 0);
}

/* Stop the pool (it answers every request queued first) and the server. Once every request is
 * answered and every client gone, the server holds nothing for its peers any more: its inbound
 * count (max_inbound_bytes: partial records, jobs, parked requests, deferred arguments) must
 * fall back to 0 -- *inbound_left gets what it still counts after 3 s. */
static void server_stop(uint64_t *inbound_left)
{
	rc_server_stats st;
	int64_t t0;
	pthread_mutex_lock(&S.mu);
	S.stop = true;
	pthread_cond_broadcast(&S.cv);
	pthread_mutex_unlock(&S.mu);
	for (int i = 0; i < POOL_THREADS; i++)
		pthread_join(S.pool[i], NULL);
	t0 = ms_now();
	do {
		assert_int_equal(rc_server_get_stats(S.srv, &st), RC_OK);
		if (st.inbound_bytes != 0)
			usleep(10000);
	} while (st.inbound_bytes != 0 && ms_now() - t0 < 3000);
	*inbound_left = st.inbound_bytes;
	if (M.gss) {
		rc_proc_stats rows[8];
		size_t n = rc_server_get_proc_stats(S.srv, rows, 8);
		S.gss_evicted = st.gss_evicted;
		S.gss_live = st.gss_contexts;
		for (size_t i = 0; i < n && i < 8; i++) {
			if (rows[i].prog == FWD && rows[i].proc == 1) {
				S.work_calls = rows[i].calls;
				S.work_refused = rows[i].auth_error;
			}
		}
	}
	rc_server_stop(S.srv);
	pthread_join(S.th, NULL);
	rc_server_destroy(S.srv);
}

/* ---- the clients -------------------------------------------------------------------------- */

/* BUMP, served on each client's connection: x + 1. */
static bool c_bump(void *args, void *res, rc_svc_req *req)
{
	(void)req;
	*(uint32_t *)res = *(uint32_t *)args + 1;
	atomic_fetch_add(&E.cb_served, 1);
	return true;
}
static const rc_procinfo bump_info = {CB, 1, 1, "BUMP", (rc_xdrproc)rc_xdr_u_int, 4,
                                      (rc_xdrproc)rc_xdr_u_int, 4};
static const rc_svc_proc cb_procs[] = {{&bump_info, c_bump}};
static const rc_svc_prog cb_prog = {CB, 1, 1, cb_procs};

/* One call: what was asked, and how it ended. */
typedef struct call {
	work_arg arg;
	work_res res;
	uint32_t timeout_ms;
	int64_t t0, t1;
	rc_status st;
	int done; /* completions: must end at 1 */
	bool disturbed; /* its connection was killed while it was in flight */
} call;

/* Check c (completed once) against its invariants. */
static void check_call(const call *c)
{
	int64_t waited = c->t1 - c->t0, over = waited - (int64_t)c->timeout_ms;
	atomic_fetch_add(&E.completions, 1);
	if (over > SLACK_MS) {
		atomic_fetch_add(&E.late, 1);
		long w = atomic_load(&E.worst_over_ms);
		while (over > w && !atomic_compare_exchange_weak(&E.worst_over_ms, &w, (long)over))
			;
	}
	if (c->st == RC_OK) {
		atomic_fetch_add(&E.ok, 1);
		bool good = c->res.tag == c->arg.tag && c->res.len == c->arg.reply_len &&
		            pattern_ok(c->res.data, c->res.len, c->arg.tag * 3);
		if (c->arg.op == OP_CB_BLOCK || c->arg.op == OP_CB_START)
			good = good && (c->disturbed || c->res.cbval == c->arg.tag + 1);
		if (!good) {
			atomic_fetch_add(&E.misdelivered, 1);
			atomic_fetch_add(&E.misdelivered_op[c->arg.op], 1);
			if (!atomic_flag_test_and_set(&E.first_misdelivery_set))
				snprintf(E.first_misdelivery, sizeof(E.first_misdelivery),
				         "a %s call, tag %#x, %u result bytes%s: got tag %#x, %u bytes, "
				         "call back %#x", op_name[c->arg.op], c->arg.tag, c->arg.reply_len,
				         c->disturbed ? " (connection killed)" : "", c->res.tag, c->res.len,
				         c->res.cbval);
		}
	} else {
		atomic_fetch_add(&E.failed, 1);
		atomic_fetch_add(&E.by_status[(unsigned)c->st < 64 ? (unsigned)c->st : 63], 1);
	}
	if (c->disturbed) {
		atomic_fetch_add(&E.killed_calls, 1);
		return;
	}
	rc_status want = c->arg.op == OP_DROP ? RC_TIMEDOUT : RC_OK;
	if (c->st != want) {
		atomic_fetch_add(&E.wrong_status, 1);
		int none = 0;
		atomic_compare_exchange_strong(&E.first_status_op[c->arg.op], &none, (int)c->st + 1);
	}
}

/* The detail of an RC_AUTHERROR (a started call's through h, a blocking one's through clnt). */
static void note_autherr(const call *c, rc_async *h, rc_client *clnt)
{
	rc_error e = {0};
	if (atomic_flag_test_and_set(&E.first_autherr_set))
		return;
	if (h != NULL)
		rc_async_geterr(h, &e);
	else
		rc_client_geterr(clnt, &e);
	snprintf(E.first_autherr, sizeof(E.first_autherr), "a %s %s call: auth_stat %u: %.200s",
	         h != NULL ? "started" : "blocking", op_name[c->arg.op], (unsigned)e.auth_stat,
	         e.detail);
}

static void started_done(rc_async *h, rc_status st, void *udata)
{
	call *c = udata;
	(void)h;
	if (++c->done > 1) {
		atomic_fetch_add(&E.twice_completed, 1);
		return;
	}
	c->st = st;
	c->t1 = ms_now();
	if (st == RC_AUTHERROR && h != NULL)
		note_autherr(c, h, NULL);
}

/* A random call: its operation, tag, sizes. */
static void make_call(call *c, uint64_t *seed, uint32_t *tags, bool small_only)
{
	uint32_t op = rnd(seed) % 16;
	/* mostly the common ways; every way often enough */
	static const uint8_t ops[16] = {OP_INLINE, OP_INLINE, OP_INLINE, OP_DEFER, OP_DEFER,
	                                OP_DEFER, OP_DEFER, OP_DROP, OP_TWICE, OP_STALE, OP_STALE,
	                                OP_CB_BLOCK, OP_CB_BLOCK, OP_CB_BLOCK, OP_CB_START,
	                                OP_CB_START};
	memset(c, 0, sizeof(*c));
	c->arg.op = ops[op];
	c->arg.tag = (*tags)++;
	bool big = !small_only && rnd(seed) % 32 == 0;
	c->arg.len = big ? BIG + rnd(seed) % (3 * BIG) : rnd(seed) % 64;
	big = !small_only && rnd(seed) % 32 == 0;
	c->arg.reply_len = big ? BIG + rnd(seed) % (3 * BIG) : rnd(seed) % 64;
	c->arg.data = pattern(c->arg.len, c->arg.tag);
	c->timeout_ms = c->arg.op == OP_DROP ? DROP_MS : CALL_MS;
}

typedef struct cthread {
	int idx;
	uint64_t seed;
	const char *uri;
	int64_t end;
	int ops, batches, blocking, kills, destroys, deep;
	char why[160];
} cthread;

static rc_client *client_new(cthread *t)
{
	rc_client *c = NULL;
	rc_error e = {0};
	if (rc_client_create(&c, t->uri, FWD, 1) != RC_OK ||
	    rc_client_serve(c, &cb_prog, NULL) != RC_OK) {
		snprintf(t->why, sizeof(t->why), "client %d: no client at %s", t->idx, t->uri);
		rc_client_destroy(c);
		return NULL;
	}
	if (M.gss) { /* krb5i: a context made now (INIT), in the table's least recently used place */
		if (rc_client_set_auth_gss(c, GSS_TARGET, RC_GSS_INTEGRITY, &e) != RC_OK) {
			snprintf(t->why, sizeof(t->why), "client %d: rc_client_set_auth_gss: %.120s", t->idx,
			         e.detail);
			rc_client_destroy(c);
			return NULL;
		}
		atomic_fetch_add(&E.gss_clients, 1);
	}
	return c;
}

/* Kill the client's connection under its calls: shut its socket down (the client notices,
 * fails what is in flight and reconnects for the next call). */
static void kill_conn(rc_client *c)
{
	int fd, tmo;
	short ev;
	if (rc_client_pollinfo(c, &fd, &ev, &tmo) == RC_OK && fd >= 0)
		shutdown(fd, SHUT_RDWR);
}

static void release_calls(call *cs, int n)
{
	for (int i = 0; i < n; i++) {
		free(cs[i].arg.data);
		free(cs[i].res.data);
	}
}

static void *client_thread(void *arg)
{
	cthread *t = arg;
	uint32_t tags = (uint32_t)t->idx << 24;
	rc_client *c = client_new(t);
	call *cs = calloc(DEEP_MAX, sizeof(*cs));
	if (c == NULL || cs == NULL) {
		free(cs);
		return NULL;
	}
	for (t->ops = 0; t->ops < OPS_PER_THREAD && ms_now() < t->end; t->ops++) {
		uint32_t what = rnd(&t->seed) % 100;
		if (what < 40) { /* one blocking call */
			call *k = &cs[0];
			make_call(k, &t->seed, &tags, false);
			rc_callopts o = {.timeout_ms = k->timeout_ms};
			k->t0 = ms_now();
			k->st = rc_call_ex(c, 1, (rc_xdrproc)xdr_work_arg, &k->arg,
			                   (rc_xdrproc)xdr_work_res, &k->res, &o);
			k->t1 = ms_now();
			k->done = 1;
			if (k->st == RC_AUTHERROR)
				note_autherr(k, NULL, c);
			atomic_fetch_add(&E.calls, 1);
			check_call(k);
			release_calls(k, 1);
			t->blocking++;
			continue;
		}
		/* a batch of started calls: usually shallow, sometimes past the deferral cap */
		bool deep = what >= 97;
		int n = deep ? 65 + (int)(rnd(&t->seed) % (DEEP_MAX - 64)) : 1 + (int)(rnd(&t->seed) % 16);
		int kill = rnd(&t->seed) % 25 == 0 ? 1 + (int)(rnd(&t->seed) % 2) : 0;
		for (int i = 0; i < n; i++) {
			call *k = &cs[i];
			make_call(k, &t->seed, &tags, deep);
			rc_callopts o = {.timeout_ms = k->timeout_ms};
			k->t0 = ms_now();
			rc_status st = rc_call_start_ex(c, 1, (rc_xdrproc)xdr_work_arg, &k->arg,
			                                (rc_xdrproc)xdr_work_res, &k->res, &o,
			                                started_done, k, NULL);
			if (st != RC_OK) /* never started: no callback; the failure is its completion */
				started_done(NULL, st, k);
			atomic_fetch_add(&E.calls, 1);
		}
		if (kill == 1) { /* the connection dies under the calls */
			kill_conn(c);
			for (int i = 0; i < n; i++)
				cs[i].disturbed = true;
			t->kills++;
		}
		/* drive until each has completed, or the longest timeout and the slack have passed */
		int64_t until = ms_now() + CALL_MS + 2 * SLACK_MS;
		for (;;) {
			int left = 0;
			for (int i = 0; i < n; i++)
				left += cs[i].done == 0;
			if (left == 0 || ms_now() >= until)
				break;
			if (kill == 2 && left <= n / 2) { /* the client is destroyed under its calls */
				for (int i = 0; i < n; i++)
					cs[i].disturbed = true;
				rc_client_destroy(c); /* completes the rest (RC_CANCELLED) */
				t->destroys++;
				if ((c = client_new(t)) == NULL)
					break;
				kill = 0;
				continue;
			}
			int fd, tmo;
			short ev;
			struct pollfd pf = {.fd = -1};
			if (rc_client_pollinfo(c, &fd, &ev, &tmo) != RC_OK)
				break;
			pf.fd = fd;
			pf.events = ev;
			poll(&pf, fd >= 0, tmo < 0 || tmo > 100 ? 100 : tmo);
			rc_client_advance(c, pf.revents);
		}
		bool stuck = false;
		for (int i = 0; i < n; i++) {
			if (cs[i].done == 0) {
				atomic_fetch_add(&E.never_completed, 1);
				stuck = true;
			} else {
				check_call(&cs[i]);
			}
		}
		if (stuck && c != NULL) { /* its end cancels what never completed; start afresh */
			rc_client_destroy(c);
			c = client_new(t);
		}
		release_calls(cs, n);
		t->batches++;
		t->deep += deep;
		if (c == NULL)
			break;
	}
	rc_client_destroy(c);
	free(cs);
	return NULL;
}

/* ---- contexts pushed out (RPCSEC_GSS) ----------------------------------------------------- */

/* Until told to stop: every EVICT_MIN_MS..EVICT_MAX_MS a new context on a client of its own
 * (never used again: the next one the table pushes out, or its idle time), which pushes out
 * the least recently used of the clients' -- that client's next calls are refused
 * (CREDPROBLEM) and it makes its context again (pushing out this one); every RELOAD_EVERY
 * the keytab reloaded while serving. A failure is kept in S.gss_why. */
static void *evictor_thread(void *arg)
{
	uint64_t seed = S.seed ^ 0xe71c7e11ull;
	(void)arg;
	while (!atomic_load(&S.evictor_stop)) {
		usleep((EVICT_MIN_MS + rnd(&seed) % (EVICT_MAX_MS - EVICT_MIN_MS + 1)) * 1000u);
		rc_client *c = NULL;
		rc_error e = {0};
		rc_status st = rc_client_create(&c, S.tcp, FWD, 1);
		if (st == RC_OK)
			st = rc_client_set_auth_gss(c, GSS_TARGET, RC_GSS_INTEGRITY, &e);
		rc_client_destroy(c);
		if (st != RC_OK) {
			snprintf(S.gss_why, sizeof(S.gss_why), "a new context: %s (%.200s)", rc_strerror(st),
			         e.detail);
			break;
		}
		if (++S.evictor_ctxs % RELOAD_EVERY == 0) {
			char why[200] = "";
			if (rc_server_set_gss(S.srv, GSS_TARGET, NULL, why, sizeof(why)) != RC_OK) {
				snprintf(S.gss_why, sizeof(S.gss_why), "keytab reload: %s", why);
				break;
			}
			S.reloads++;
		}
	}
	return NULL;
}

/* ---- the watchdog -------------------------------------------------------------------------- */

/* SIGALRM WATCHDOG_MS (GSS_WATCHDOG_MS) after the start: a thread is blocked past every
 * timeout. */
static void on_alarm(int sig)
{
	static const char m[] = "test_compose: STUCK: not done at the watchdog (40 s; 22 s under "
	                        "GSS) after the start: a thread is blocked past every timeout (the "
	                        "seed is printed above)\n";
	(void)sig;
	(void)!write(2, m, sizeof(m) - 1);
	abort();
}

static uint64_t the_seed(void)
{
	const char *s = getenv("RC_COMPOSE_SEED");
	if (s != NULL && *s != '\0')
		return strtoull(s, NULL, 0);
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return ((uint64_t)t.tv_sec * 1000003u) ^ (uint64_t)t.tv_nsec ^ ((uint64_t)getpid() << 32);
}

/* ---- the test ------------------------------------------------------------------------------ */

/* The mix M says, its invariants checked. */
static void compose(void)
{
	uint64_t seed = the_seed();
	printf("test_compose%s: seed %llu (RC_COMPOSE_SEED=%llu to repeat)\n", M.gss ? " (krb5i)" : "",
	       (unsigned long long)seed, (unsigned long long)seed);
	fflush(stdout);
	memset(&E, 0, sizeof(E));

	signal(SIGALRM, on_alarm);
	alarm((unsigned)M.watchdog_ms / 1000);

	server_start(seed);
	if (M.gss)
		assert_int_equal(pthread_create(&S.evictor, NULL, evictor_thread, NULL), 0);
	cthread ts[CLIENT_THREADS];
	pthread_t th[CLIENT_THREADS];
	int64_t t0 = ms_now();
	for (int i = 0; i < CLIENT_THREADS; i++) {
		ts[i] = (cthread){.idx = i + 1, .seed = seed + 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1),
		                  .uri = i % 2 ? S.unx : S.tcp, .end = t0 + M.run_ms};
		assert_int_equal(pthread_create(&th[i], NULL, client_thread, &ts[i]), 0);
	}
	uint64_t inbound_left = 0;
	for (int i = 0; i < CLIENT_THREADS; i++)
		pthread_join(th[i], NULL);
	if (M.gss) {
		atomic_store(&S.evictor_stop, true);
		pthread_join(S.evictor, NULL);
	}
	server_stop(&inbound_left);
	alarm(0);

	printf("test_compose: %lld ms; %ld calls, %ld completed (%ld ok, %ld failed, %ld on killed "
	       "connections), %ld calls back served\n", (long long)(ms_now() - t0),
	       atomic_load(&E.calls), atomic_load(&E.completions), atomic_load(&E.ok),
	       atomic_load(&E.failed), atomic_load(&E.killed_calls), atomic_load(&E.cb_served));
	for (int i = 0; i < CLIENT_THREADS; i++)
		printf("  client %d (%s): %d operations, %d blocking, %d batches (%d deep), %d "
		       "connections killed, %d clients destroyed%s%s\n", ts[i].idx,
		       ts[i].uri[0] == 'u' ? "unix" : "tcp", ts[i].ops, ts[i].blocking,
		       ts[i].batches, ts[i].deep, ts[i].kills, ts[i].destroys, *ts[i].why ? ": " : "",
		       ts[i].why);
	for (unsigned s = 0; s < 64; s++)
		if (atomic_load(&E.by_status[s]) != 0)
			printf("  failed with \"%s\": %ld\n", rc_strerror((rc_status)s),
			       atomic_load(&E.by_status[s]));
	for (int o = 0; o < OP_COUNT; o++)
		if (atomic_load(&E.first_status_op[o]) != 0)
			printf("  first wrong status of a %s call: \"%s\"\n", op_name[o],
			       rc_strerror((rc_status)(atomic_load(&E.first_status_op[o]) - 1)));

	/* the invariants, each with its count */
	int bad = 0;
#define INVARIANT(cnt, what)                                                                  \
	do {                                                                                      \
		long v_ = atomic_load(&(cnt));                                                        \
		if (v_ != 0) {                                                                        \
			printf("INVARIANT BROKEN (seed %llu): %ld %s\n", (unsigned long long)seed, v_,     \
			       what);                                                                     \
			bad++;                                                                            \
		}                                                                                     \
	} while (0)
	INVARIANT(E.twice_completed, "started call(s) completed more than once");
	INVARIANT(E.never_completed, "started call(s) never completed within timeout + slack");
	INVARIANT(E.misdelivered, "reply(ies) with another call's tag or a wrong result");
	INVARIANT(E.wrong_status, "undisturbed call(s) ended otherwise than their operation says");
	INVARIANT(E.late, "wait(s) past timeout + 1000 ms");
	INVARIANT(E.second_answer_ok, "second answer(s) of a request not refused with RC_INVAL");
	INVARIANT(E.bad_args, "argument(s) the server got wrong");
	INVARIANT(E.cb_failed, "call(s) back timed out (their replies were not read)");
#undef INVARIANT
	if (atomic_load(&E.misdelivered) != 0) {
		printf("  the first: %s; by operation:", E.first_misdelivery);
		for (int o = 0; o < OP_COUNT; o++)
			printf(" %s %ld", op_name[o], atomic_load(&E.misdelivered_op[o]));
		printf("\n");
	}
	if (atomic_load(&E.second_answer_ok) != 0)
		printf("  second answers not refused: %ld right after the reply, %ld after a drop, "
		       "%ld late (after other requests were deferred)\n",
		       atomic_load(&E.second_ok_after[0]), atomic_load(&E.second_ok_after[1]),
		       atomic_load(&E.second_ok_after[2]));
	if (atomic_load(&E.late) != 0)
		printf("  the longest wait past its timeout: %ld ms\n", atomic_load(&E.worst_over_ms));
	for (int i = 0; i < CLIENT_THREADS; i++)
		if (*ts[i].why) {
			printf("INVARIANT BROKEN: %s\n", ts[i].why);
			bad++;
		}
	if (M.gss) {
		/* the contexts went, and the clients made them again. The server made at least
		 * gss_evicted + gss_contexts (held at the end) contexts (the idle-dropped are not
		 * counted): those beyond what new clients and the evictor made are renewals -- of
		 * calls refused with CREDPROBLEM that went again (undisturbed, each must have ended
		 * RC_OK: wrong_status above) */
		long made = atomic_load(&E.gss_clients) + S.evictor_ctxs;
		long renewed = (long)(S.gss_evicted + S.gss_live) - made;
		printf("  krb5i: %llu contexts pushed out (gss_evicted), %llu of %llu WORK calls "
		       "refused for their context, >= %ld contexts made again by the clients (%ld made "
		       "by new clients, %ld by the evictor), %ld keytab reloads; %ld calls failed "
		       "\"%s\" on the client%s\n", (unsigned long long)S.gss_evicted,
		       (unsigned long long)S.work_refused, (unsigned long long)S.work_calls, renewed,
		       atomic_load(&E.gss_clients), S.evictor_ctxs, S.reloads,
		       atomic_load(&E.by_status[RC_AUTHERROR]), rc_strerror(RC_AUTHERROR),
		       E.first_autherr[0] ? "; the first: " : "");
		if (E.first_autherr[0])
			printf("    %s\n", E.first_autherr);
		if (S.gss_why[0] != '\0') {
			printf("INVARIANT BROKEN: the evictor: %s\n", S.gss_why);
			bad++;
		}
		/* not a test that cannot fail: the contexts did go, calls were refused, and renewed */
		if (S.gss_evicted == 0 || S.work_refused == 0 || renewed <= 0) {
			printf("NOT SHOWN (seed %llu): contexts pushed out, calls refused for them and "
			       "renewed, each at least once\n", (unsigned long long)seed);
			bad++;
		}
	}
	if (inbound_left != 0) {
		printf("INVARIANT BROKEN (seed %llu): the server still counts %llu inbound bytes with "
		       "every request answered and every client gone\n",
		       (unsigned long long)seed, (unsigned long long)inbound_left);
		bad++;
	}
	fflush(stdout);
	assert_int_equal(atomic_load(&E.calls), atomic_load(&E.completions) +
	                                             atomic_load(&E.never_completed));
	assert_int_equal(bad, 0);
}

static void random_mix(void **state)
{
	(void)state;
	M.gss = false;
	M.run_ms = RUN_MS, M.watchdog_ms = WATCHDOG_MS;
	compose();
}

static void random_mix_krb5i_contexts_expire(void **state)
{
	(void)state;
	M.gss = true;
	M.run_ms = GSS_RUN_MS, M.watchdog_ms = GSS_WATCHDOG_MS;
	compose();
}

/* No argument: the plain mix. "gss": the mix under RPCSEC_GSS, inside krb5_fixture.sh's realm
 * (77, skipped, outside one). */
int main(int argc, char **argv)
{
	const struct CMUnitTest plain[] = {
		cmocka_unit_test(random_mix),
	};
	const struct CMUnitTest gss[] = {
		cmocka_unit_test(random_mix_krb5i_contexts_expire),
	};
	if (argc > 1 && strcmp(argv[1], "gss") == 0) {
		if (getenv("RC_KRB5_DIR") == NULL) {
			fprintf(stderr, "test_compose gss: run it under tests/gss/krb5_fixture.sh\n");
			return 77;
		}
		if (getenv("RC_VALGRIND") != NULL) {
			/* under valgrind each Kerberos step takes long enough that the renewals the
			 * mix forces outlast any bound: the plain mix runs there (test_compose), and
			 * the GSS paths under test_gss; this runs in the plain and sanitizer passes */
			fprintf(stderr, "test_compose gss: skipped under valgrind (make test-valgrind)\n");
			return 77;
		}
		return cmocka_run_group_tests(gss, NULL, NULL);
	}
	return cmocka_run_group_tests(plain, NULL, NULL);
}

/*
 * Connection life (runtime/backchan/connlife.c): the connection hook's OPEN and CLOSE exactly once each
 * under churn -- connections opened and closed by clients, and closed by rc_server_conn_close
 * from another thread while they serve -- the application's pointer on a connection seen from
 * routines, rc_server_foreach_conn, rc_svc_req_xid, and the duplicate request cache for
 * stream calls: a non-idempotent ADD retransmitted on a new connection runs once.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "rt_fixture.h"
#include "rt_raw.h"

/* ---- a server with a hook --------------------------------------------------------------- */

#define CL_PROG 0x20000100u
#define MAXCONN 16384

/* What the hook and the routines saw, per connection (its OPEN's number). */
typedef struct cl_conn {
	int id;
	atomic_int running; /* its calls in their routines now */
} cl_conn;

static struct {
	atomic_int opens, closes, bad;
	atomic_int opened[MAXCONN], closed[MAXCONN];
	atomic_int calls, nodata;
	atomic_uint last_xid;
	rc_server *srv;
} H;

static void cl_hook(rc_server_conn *sc, rc_conn_event ev, void *ctx)
{
	cl_conn *cc;

	(void)ctx;
	if (ev == RC_CONN_OPEN) {
		int id = atomic_fetch_add(&H.opens, 1);
		if (rc_server_conn_data(sc) != NULL || id >= MAXCONN) {
			atomic_fetch_add(&H.bad, 1);
			return;
		}
		cc = calloc(1, sizeof(*cc));
		cc->id = id;
		atomic_fetch_add(&H.opened[id], 1);
		rc_server_conn_set_data(sc, cc);
		return;
	}
	atomic_fetch_add(&H.closes, 1);
	cc = rc_server_conn_data(sc);
	if (ev != RC_CONN_CLOSE || cc == NULL || rc_server_conn_open(sc) ||
	    atomic_load(&cc->running) != 0) {
		atomic_fetch_add(&H.bad, 1); /* CLOSE before OPEN, while open, or before a call ended */
		return;
	}
	atomic_fetch_add(&H.closed[cc->id], 1);
	rc_server_conn_set_data(sc, NULL);
	free(cc);
}

/* PING(void) -> u_int: 1 if the connection's data (set at OPEN) is there. */
static bool cl_ping(void *a, void *r, rc_svc_req *q)
{
	rc_server_conn *sc;
	cl_conn *cc = NULL;

	(void)a;
	atomic_fetch_add(&H.calls, 1);
	atomic_store(&H.last_xid, rc_svc_req_xid(q));
	if (rc_svc_req_conn(q, &sc) == RC_OK) { /* (RC_CANTSEND: being closed) */
		cc = rc_server_conn_data(sc);
		if (cc != NULL)
			atomic_fetch_add(&cc->running, 1);
		else
			atomic_fetch_add(&H.nodata, 1); /* a call before its connection's OPEN */
		rc_server_conn_release(sc);
	}
	*(uint32_t *)r = cc != NULL;
	if (cc != NULL)
		atomic_fetch_sub(&cc->running, 1);
	return true;
}

/* ADDX(hyper) -> hyper: a non-idempotent add to its own total. While addx_cut is set (taken
 * by the first call), it closes its own connection before it replies, and takes 100 ms: its
 * reply is lost, and a copy of the call sent meanwhile finds it still running. */
static atomic_int addx_runs;
static atomic_bool addx_cut;
static int64_t addx_total;

static bool cl_addx(void *a, void *r, rc_svc_req *q)
{
	atomic_fetch_add(&addx_runs, 1);
	*(int64_t *)r = __atomic_add_fetch(&addx_total, *(int64_t *)a, __ATOMIC_SEQ_CST);
	if (atomic_exchange(&addx_cut, false)) {
		rc_server_conn *sc;
		if (rc_svc_req_conn(q, &sc) == RC_OK) {
			rc_server_conn_close(sc);
			rc_server_conn_release(sc);
		}
		usleep(100000);
	}
	return true;
}

static const rc_procinfo cl_ping_info = {CL_PROG, 1, 1, "PING", (rc_xdrproc)rc_xdr_void, 0,
                                         (rc_xdrproc)rc_xdr_u_int, 4};
static const rc_procinfo cl_addx_info = {CL_PROG, 1, 2, "ADDX", (rc_xdrproc)rc_xdr_hyper, 8,
                                         (rc_xdrproc)rc_xdr_hyper, 8};
static const rc_svc_proc cl_procs[] = {{&cl_ping_info, cl_ping}, {&cl_addx_info, cl_addx}};
static const rc_svc_prog cl_prog = {CL_PROG, 1, 2, cl_procs};

typedef struct cl_server {
	rc_server *srv;
	pthread_t tid;
	char uri[256];
} cl_server;

static void *cl_run(void *arg)
{
	rc_server_run(((cl_server *)arg)->srv);
	return NULL;
}

/* A server on tcp loopback with `threads` workers, the fixture's programs and PING; hook:
 * cl_hook or none; drc: cache stream calls of every program. */
static void cl_start(cl_server *s, unsigned threads, bool hook, bool drc)
{
	memset(s, 0, sizeof(*s));
	assert_int_equal(rc_server_create(&s->srv), RC_OK);
	if (hook)
		assert_int_equal(rc_server_set_conn_hook(s->srv, cl_hook, NULL), RC_OK);
	assert_int_equal(rc_server_register(s->srv, &rt_prog1, NULL), RC_OK);
	assert_int_equal(rc_server_register(s->srv, &cl_prog, NULL), RC_OK);
	if (drc)
		assert_int_equal(rc_server_set_drc_streams(s->srv, RC_DRC_EVERY_PROGRAM, 0, true),
		                 RC_OK);
	assert_int_equal(rc_server_listen(s->srv, "tcp://127.0.0.1:0", s->uri, sizeof(s->uri)),
	                 RC_OK);
	rc_server_set_threads(s->srv, threads);
	H.srv = s->srv;
	assert_int_equal(pthread_create(&s->tid, NULL, cl_run, s), 0);
}

static void cl_stop(cl_server *s)
{
	rc_server_stop(s->srv);
	pthread_join(s->tid, NULL);
	rc_server_destroy(s->srv);
}

static void cl_reset(void)
{
	memset(&H, 0, sizeof(H));
}

/* ---- churn -------------------------------------------------------------------------------- */

typedef struct churn {
	const char *uri;
	int n;          /* connections this thread opens */
	int ok, failed; /* calls */
} churn;

static void *churn_client(void *arg)
{
	churn *t = arg;

	for (int i = 0; i < t->n; i++) {
		rc_client *c;
		uint32_t v = 0;
		if (rc_client_create(&c, t->uri, CL_PROG, 1) != RC_OK) {
			t->failed++;
			continue;
		}
		rc_client_set_timeout(c, 5000);
		if (rc_call(c, 1, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_u_int, &v) ==
		        RC_OK &&
		    v == 1)
			t->ok++;
		else
			t->failed++;
		rc_client_destroy(c);
	}
	return NULL;
}

static atomic_bool closer_stop;
static atomic_int closer_closed;

static bool close_one(rc_server_conn *sc, void *ctx)
{
	int *k = ctx;
	if ((*k)++ % 2 == 0 && rc_server_conn_close(sc) == RC_OK) /* every other one */
		atomic_fetch_add(&closer_closed, 1);
	return true;
}

static void *churn_closer(void *arg)
{
	rc_server *srv = arg;
	int k = 0;

	while (!atomic_load(&closer_stop)) {
		assert_int_equal(rc_server_foreach_conn(srv, close_one, &k), RC_OK);
		usleep(200);
	}
	return NULL;
}

/* nconns connections through nthreads clients, a closer thread closing half of what it finds;
 * then every connection OPEN told has its CLOSE, once, after its calls. */
static void churn_run(unsigned server_threads, int nconns)
{
	enum { NT = 4 };
	cl_server s;
	churn t[NT];
	pthread_t tid[NT], ctid;
	int ok = 0, failed = 0;
	rc_server_stats st;

	cl_reset();
	atomic_store(&closer_stop, false);
	atomic_store(&closer_closed, 0);
	cl_start(&s, server_threads, true, false);
	assert_int_equal(pthread_create(&ctid, NULL, churn_closer, s.srv), 0);
	for (int i = 0; i < NT; i++) {
		t[i] = (churn){.uri = s.uri, .n = nconns / NT};
		assert_int_equal(pthread_create(&tid[i], NULL, churn_client, &t[i]), 0);
	}
	for (int i = 0; i < NT; i++) {
		pthread_join(tid[i], NULL);
		ok += t[i].ok;
		failed += t[i].failed;
	}
	atomic_store(&closer_stop, true);
	pthread_join(ctid, NULL);
	assert_int_equal(rc_server_get_stats(s.srv, &st), RC_OK);
	cl_stop(&s);

	print_message("churn (%u threads): %d connections, %d calls ok, %d failed, %d closed by "
	              "the server, %d opens, %d closes\n", server_threads, nconns, ok, failed,
	              atomic_load(&closer_closed), atomic_load(&H.opens), atomic_load(&H.closes));
	assert_int_equal(atomic_load(&H.bad), 0);
	assert_int_equal(atomic_load(&H.nodata), 0); /* OPEN came before every call */
	assert_int_equal((uint64_t)atomic_load(&H.opens), st.conns_accepted);
	assert_true(atomic_load(&H.opens) >= nconns - failed); /* every client was seen */
	assert_int_equal(atomic_load(&H.closes), atomic_load(&H.opens));
	for (int i = 0; i < atomic_load(&H.opens); i++) {
		assert_int_equal(atomic_load(&H.opened[i]), 1);
		assert_int_equal(atomic_load(&H.closed[i]), 1);
	}
	assert_true(ok > 0);
	assert_true(atomic_load(&closer_closed) > 0); /* the closer did close some */
}

static void hook_churn_workers(void **state)
{
	(void)state;
	churn_run(4, 10000);
}

static void hook_churn_one_thread(void **state)
{
	(void)state;
	churn_run(1, 2000);
}

/* A connection the server closes from a routine's thread and one left open at destroy: each
 * CLOSE told once; rc_server_conn_close on a closed handle is a no-op. */
static void hook_close_and_destroy(void **state)
{
	cl_server s;
	rc_client *c1, *c2;
	uint32_t v = 0;
	int n = 0;

	(void)state;
	cl_reset();
	cl_start(&s, 2, true, false);
	assert_int_equal(rc_client_create(&c1, s.uri, CL_PROG, 1), RC_OK);
	assert_int_equal(rc_client_create(&c2, s.uri, CL_PROG, 1), RC_OK);
	assert_int_equal(rc_call(c1, 1, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_u_int, &v),
	                 RC_OK);
	assert_int_equal(v, 1);
	assert_int_equal(rc_call(c2, 1, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_u_int, &v),
	                 RC_OK);
	assert_int_equal(rc_server_foreach_conn(s.srv, NULL, NULL), RC_INVAL);
	assert_int_equal(rc_server_foreach_conn(s.srv, close_one, &n), RC_OK); /* closes one */
	assert_int_equal(n, 2);
	for (int i = 0; i < 200 && atomic_load(&H.closes) < 1; i++)
		usleep(10000);
	assert_int_equal(atomic_load(&H.closes), 1);
	rc_server_stop(s.srv);
	pthread_join(s.tid, NULL);
	/* the hook removed: the connection still open gets its CLOSE from the hook that saw it
	 * open, at destroy */
	assert_int_equal(rc_server_set_conn_hook(s.srv, NULL, NULL), RC_OK);
	rc_server_destroy(s.srv);
	assert_int_equal(atomic_load(&H.opens), 2);
	assert_int_equal(atomic_load(&H.closes), 2);
	assert_int_equal(atomic_load(&H.bad), 0);
	rc_client_destroy(c1);
	rc_client_destroy(c2);
}

/* ---- the duplicate cache on streams -------------------------------------------------------- */

static int cl_connect(const char *uri)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	const char *p = strrchr(uri, ':');
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_port = htons((uint16_t)atoi(p + 1));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* ADD(v) with this xid on a new connection; the total the reply says. */
static int64_t raw_add(const char *uri, uint32_t xid, int64_t v)
{
	uint32_t call[12] = {xid, 0, 2, RT_PROG, 1, 2, 0, 0, 0, 0, (uint32_t)((uint64_t)v >> 32),
	                     (uint32_t)v};
	uint32_t rep[16];
	int fd = cl_connect(uri), n;

	assert_true(send_words(fd, call, 12));
	n = recv_words(fd, rep, 16);
	close(fd);
	assert_int_equal(n, 8);
	assert_int_equal(rep[0], xid);
	assert_int_equal(rep[5], 0); /* SUCCESS */
	return (int64_t)(((uint64_t)rep[6] << 32) | rep[7]);
}

static void drc_stream_add_runs_once(void **state)
{
	cl_server s;
	int64_t t0, a, b, c;
	rc_server_stats st;

	(void)state;
	cl_reset();
	cl_start(&s, 2, false, true);
	t0 = rt_total_now();
	a = raw_add(s.uri, 0x1234, 5);            /* runs */
	b = raw_add(s.uri, 0x1234, 5);            /* the same call, a new connection: cached */
	c = raw_add(s.uri, 0x1235, 5);            /* another xid: runs */
	assert_int_equal(a, t0 + 5);
	assert_int_equal(b, t0 + 5);
	assert_int_equal(c, t0 + 10);
	assert_int_equal(rt_total_now(), t0 + 10);
	assert_int_equal(rc_server_get_stats(s.srv, &st), RC_OK);
	assert_int_equal(st.drc_replayed, 1);
	cl_stop(&s);

	/* without it, the retransmission runs again (what the cache is for) */
	cl_start(&s, 2, false, false);
	t0 = rt_total_now();
	a = raw_add(s.uri, 0x1234, 5);
	b = raw_add(s.uri, 0x1234, 5);
	assert_int_equal(b, a + 5);
	cl_stop(&s);
}

/* The xid accessor, and the stream cache per program: PING of CL_PROG is not cached when only
 * the fixture's program is. */
static void drc_stream_per_program(void **state)
{
	cl_server s;
	int64_t t0;
	uint32_t call[10] = {0x777, 0, 2, CL_PROG, 1, 1, 0, 0, 0, 0};
	uint32_t rep[16];

	(void)state;
	cl_reset();
	memset(&s, 0, sizeof(s));
	assert_int_equal(rc_server_create(&s.srv), RC_OK);
	assert_int_equal(rc_server_register(s.srv, &rt_prog1, NULL), RC_OK);
	assert_int_equal(rc_server_register(s.srv, &cl_prog, NULL), RC_OK);
	assert_int_equal(rc_server_set_drc_streams(s.srv, 0x31337, 1, true), RC_PROGUNAVAIL);
	assert_int_equal(rc_server_set_drc_streams(s.srv, RT_PROG, 1, true), RC_OK);
	assert_int_equal(rc_server_listen(s.srv, "tcp://127.0.0.1:0", s.uri, sizeof(s.uri)), RC_OK);
	rc_server_set_threads(s.srv, 1);
	assert_int_equal(pthread_create(&s.tid, NULL, cl_run, &s), 0);

	for (int i = 0; i < 2; i++) {
		int fd = cl_connect(s.uri);
		assert_true(send_words(fd, call, 10));
		assert_int_equal(recv_words(fd, rep, 16), 7);
		close(fd);
	}
	assert_int_equal(atomic_load(&H.calls), 2); /* not cached: ran twice */
	assert_int_equal(atomic_load(&H.last_xid), 0x777);
	t0 = rt_total_now();
	assert_int_equal(raw_add(s.uri, 9, 1), t0 + 1);
	assert_int_equal(raw_add(s.uri, 9, 1), t0 + 1);
	cl_stop(&s);
	assert_int_equal(rc_svc_req_xid(NULL), 0);
}

/* At most once across a reconnect: the remotecall client (rc_client_set_resend) sends ADDX
 * again with the same xid on a new connection after the server cut the first; the server's
 * stream cache answers it (after dropping the copies that came while it ran) -- it ran once.
 * Without the cache it runs twice; without resending the call fails. */
static int64_t resend_case(bool drc, bool resend, rc_status *st, int *runs)
{
	cl_server s;
	rc_client *c;
	int64_t v = 5, res = 0;

	cl_reset();
	atomic_store(&addx_runs, 0);
	cl_start(&s, 2, false, drc);
	assert_int_equal(rc_client_create(&c, s.uri, CL_PROG, 1), RC_OK);
	assert_int_equal(rc_client_set_resend(c, resend), RC_OK);
	assert_int_equal(rc_client_set_retry(c, 150), RC_OK);
	assert_int_equal(rc_client_set_timeout(c, 5000), RC_OK);
	__atomic_store_n(&addx_total, 0, __ATOMIC_SEQ_CST);
	atomic_store(&addx_cut, true);
	*st = rc_call(c, 2, (rc_xdrproc)rc_xdr_hyper, &v, (rc_xdrproc)rc_xdr_hyper, &res);
	usleep(200000); /* (a copy still on its way would run now) */
	*runs = atomic_load(&addx_runs);
	rc_client_destroy(c);
	cl_stop(&s);
	return res;
}

static void drc_stream_resend_runs_once(void **state)
{
	rc_status st;
	int runs;
	int64_t res;

	(void)state;
	res = resend_case(true, true, &st, &runs);
	assert_int_equal(st, RC_OK);
	assert_int_equal(res, 5);
	assert_int_equal(runs, 1);
	res = resend_case(false, true, &st, &runs); /* no cache: the copy runs again */
	assert_int_equal(st, RC_OK);
	assert_int_equal(res, 10);
	assert_int_equal(runs, 2);
	(void)resend_case(true, false, &st, &runs); /* no resending: the call fails */
	assert_int_equal(st, RC_CANTRECV);
	assert_int_equal(runs, 1);
}

/* rc_server_set_drc(false): no cache at all, even for datagrams. */
static void drc_off(void **state)
{
	rc_server *srv;
	rc_server_stats st;

	(void)state;
	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_set_drc(srv, false), RC_OK);
	assert_int_equal(rc_server_get_stats(srv, &st), RC_OK);
	assert_int_equal(st.drc_bytes, 0);
	assert_int_equal(rc_server_set_drc(srv, true), RC_OK);
	assert_int_equal(rc_server_get_stats(srv, &st), RC_OK);
	assert_true(st.drc_bytes > 0);
	rc_server_destroy(srv);
	assert_int_equal(rc_server_set_drc(NULL, true), RC_INVAL);
	assert_int_equal(rc_server_conn_close(NULL), RC_INVAL);
	assert_null(rc_server_conn_data(NULL));
}

int main(void)
{
	(void)rt_stop;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hook_close_and_destroy),
		cmocka_unit_test(hook_churn_one_thread),
		cmocka_unit_test(hook_churn_workers),
		cmocka_unit_test(drc_stream_add_runs_once),
		cmocka_unit_test(drc_stream_per_program),
		cmocka_unit_test(drc_stream_resend_runs_once),
		cmocka_unit_test(drc_off),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

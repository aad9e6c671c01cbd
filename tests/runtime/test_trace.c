/*
 * test_trace -- the trace points of <remotecall/trace.h>: every step of a call reported once,
 * in order, with the call's xid and non-decreasing times, on the client (fast path and general
 * path) and on the server, over UDP, TCP, Unix sockets and the in-process transport; nothing
 * reported while tracing is off.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "rt_fixture.h"

#define MAXREC 4096

typedef struct rec {
	rc_trace_point pt;
	uint32_t xid;
	uint64_t ns;
} rec;

typedef struct recorder {
	pthread_mutex_t mu;
	rec r[MAXREC];
	int n;
} recorder;

static recorder g_cli = {PTHREAD_MUTEX_INITIALIZER, {{0, 0, 0}}, 0};
static recorder g_srv = {PTHREAD_MUTEX_INITIALIZER, {{0, 0, 0}}, 0};

static void record(void *arg, rc_trace_point pt, uint32_t xid, uint64_t ns)
{
	recorder *k = arg;

	pthread_mutex_lock(&k->mu);
	if (k->n < MAXREC)
		k->r[k->n++] = (rec){pt, xid, ns};
	pthread_mutex_unlock(&k->mu);
}

static int count(recorder *k)
{
	pthread_mutex_lock(&k->mu);
	int n = k->n;
	pthread_mutex_unlock(&k->mu);
	return n;
}

static void reset(void)
{
	pthread_mutex_lock(&g_cli.mu);
	g_cli.n = 0;
	pthread_mutex_unlock(&g_cli.mu);
	pthread_mutex_lock(&g_srv.mu);
	g_srv.n = 0;
	pthread_mutex_unlock(&g_srv.mu);
}

/* The steps of call xid in k, in the order they were reported, and their times. */
static int steps_of(recorder *k, uint32_t xid, rc_trace_point *pts, uint64_t *ns, int max)
{
	int m = 0;

	pthread_mutex_lock(&k->mu);
	for (int i = 0; i < k->n && m < max; i++)
		if (k->r[i].xid == xid) {
			pts[m] = k->r[i].pt;
			ns[m++] = k->r[i].ns;
		}
	pthread_mutex_unlock(&k->mu);
	return m;
}

/* Check that call xid went through exactly the steps first..last of k, in order, at
 * non-decreasing times. */
static void check_steps(recorder *k, uint32_t xid, rc_trace_point first, rc_trace_point last)
{
	rc_trace_point pts[16];
	uint64_t ns[16];
	int m = steps_of(k, xid, pts, ns, 16);

	assert_int_equal(m, (int)(last - first) + 1);
	for (int i = 0; i < m; i++) {
		assert_int_equal(pts[i], first + (rc_trace_point)i);
		if (i > 0)
			assert_true(ns[i] >= ns[i - 1]);
	}
}

/* The distinct xids the client reported a CALL_BEGIN for, in order. */
static int client_xids(uint32_t *xids, int max)
{
	int m = 0;

	pthread_mutex_lock(&g_cli.mu);
	for (int i = 0; i < g_cli.n && m < max; i++)
		if (g_cli.r[i].pt == RC_TP_CALL_BEGIN)
			xids[m++] = g_cli.r[i].xid;
	pthread_mutex_unlock(&g_cli.mu);
	return m;
}

/* Start a traced server on uri (the fixture's program). */
static void start_traced(rt_server *s, const char *uri, unsigned threads)
{
	memset(s, 0, sizeof(*s));
	assert_int_equal(rc_server_create(&s->srv), RC_OK);
	assert_int_equal(rc_server_register(s->srv, &rt_prog1, &s->delay_ms), RC_OK);
	assert_int_equal(rc_server_set_trace(s->srv, record, &g_srv), RC_OK);
	assert_int_equal(rc_server_listen(s->srv, uri, s->uri[0], sizeof(s->uri[0])), RC_OK);
	s->n = 1;
	rc_server_set_threads(s->srv, threads);
	assert_int_equal(pthread_create(&s->tid, NULL, rt_run, s), 0);
}

/* The server reports SENT after its send returns, maybe after the client has its reply. */
static void wait_server_steps(int want)
{
	for (int i = 0; i < 1000 && count(&g_srv) < want; i++)
		usleep(1000);
}

/* Three calls (NULL, ECHO, ADD) over uri: five client steps and six server steps each. */
static void calls_are_traced(const char *uri)
{
	rt_server s;
	rc_client *c;
	char data[100];
	rt_blob in = {sizeof(data), data}, out = {0, NULL};
	int64_t add = 5, total = 0;
	uint32_t xids[8];

	reset();
	memset(data, 'x', sizeof(data));
	start_traced(&s, uri, 1);
	assert_int_equal(rc_client_create(&c, s.uri[0], RT_PROG, 1), RC_OK);
	assert_int_equal(rc_client_set_trace(c, record, &g_cli), RC_OK);
	assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_OK);
	assert_int_equal(rc_call(c, 1, (rc_xdrproc)xdr_rt_blob, &in, (rc_xdrproc)xdr_rt_blob, &out),
	                 RC_OK);
	rc_xdr_free((rc_xdrproc)xdr_rt_blob, &out);
	assert_int_equal(rc_call(c, 2, (rc_xdrproc)rc_xdr_hyper, &add, (rc_xdrproc)rc_xdr_hyper,
	                         &total),
	                 RC_OK);
	assert_int_equal(client_xids(xids, 8), 3);
	assert_int_not_equal(xids[0], xids[1]);
	assert_int_not_equal(xids[1], xids[2]);
	assert_int_equal(count(&g_cli), 15);
	wait_server_steps(18);
	assert_int_equal(count(&g_srv), 18);
	for (int i = 0; i < 3; i++) {
		check_steps(&g_cli, xids[i], RC_TP_CALL_BEGIN, RC_TP_DECODED);
		check_steps(&g_srv, xids[i], RC_TP_SRV_RECEIVED, RC_TP_SRV_SENT);
	}

	/* off again: nothing more on either side */
	assert_int_equal(rc_client_set_trace(c, NULL, NULL), RC_OK);
	assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_OK);
	assert_int_equal(count(&g_cli), 15);
	rc_client_destroy(c);
	rt_stop(&s);
}

static void traced_udp(void **state)
{
	(void)state;
	calls_are_traced("udp://127.0.0.1:0");
}

static void traced_tcp(void **state)
{
	(void)state;
	calls_are_traced("tcp://127.0.0.1:0");
}

static void traced_unix(void **state)
{
	char uri[64];

	(void)state;
	snprintf(uri, sizeof(uri), "unix:/tmp/rc-test-trace-%d.sock", (int)getpid());
	calls_are_traced(uri);
}

static void traced_inproc(void **state)
{
	(void)state;
	calls_are_traced("inproc:test-trace");
}

/*
 * A blocking call made while a started call is in flight takes the general path (registered,
 * its reply read by whoever reads): it reports the same five steps.
 */
static void general_path_traced(void **state)
{
	const char *const uris[] = {"tcp://127.0.0.1:0", NULL};
	rt_server s;
	rc_client *c;
	rc_async *a;
	uint32_t ms = 200, back = 0, xids[8];

	(void)state;
	reset();
	assert_int_equal(rt_start(&s, uris, 2), 0);
	assert_int_equal(rc_client_create(&c, s.uri[0], RT_PROG, 1), RC_OK);
	assert_int_equal(rc_client_set_trace(c, record, &g_cli), RC_OK);
	assert_int_equal(rc_call_start(c, 3, (rc_xdrproc)rc_xdr_u_int, &ms,
	                               (rc_xdrproc)rc_xdr_u_int, &back, NULL, NULL, &a),
	                 RC_OK);
	assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_OK);
	assert_int_equal(rc_async_wait(a, 5000), RC_OK);
	assert_int_equal(back, 200);
	rc_async_release(a);
	/* the started call reports SENT, REPLY, DECODED; the blocking one all five */
	assert_int_equal(client_xids(xids, 8), 1);
	check_steps(&g_cli, xids[0], RC_TP_CALL_BEGIN, RC_TP_DECODED);
	assert_int_equal(count(&g_cli), 8);
	rc_client_destroy(c);
	rt_stop(&s);
}

/* Nothing is reported by a client or server nobody asked to trace. */
static void off_by_default(void **state)
{
	const char *const uris[] = {"udp://127.0.0.1:0", NULL};
	rt_server s;
	rc_client *c;

	(void)state;
	reset();
	assert_int_equal(rt_start(&s, uris, 1), 0);
	assert_int_equal(rc_client_create(&c, s.uri[0], RT_PROG, 1), RC_OK);
	for (int i = 0; i < 10; i++)
		assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_OK);
	assert_int_equal(count(&g_cli) + count(&g_srv), 0);
	assert_int_equal(rc_client_set_trace(NULL, record, NULL), RC_INVAL);
	assert_int_equal(rc_server_set_trace(NULL, record, NULL), RC_INVAL);
	rc_client_destroy(c);
	rt_stop(&s);
}

static void point_names(void **state)
{
	(void)state;
	assert_string_equal(rc_trace_point_name(RC_TP_CALL_BEGIN), "call_begin");
	assert_string_equal(rc_trace_point_name(RC_TP_DECODED), "decoded");
	assert_string_equal(rc_trace_point_name(RC_TP_SRV_SENT), "srv_sent");
	assert_string_equal(rc_trace_point_name(RC_TP_COUNT), "?");
	assert_string_equal(rc_trace_point_name((rc_trace_point)-1), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(traced_udp),          cmocka_unit_test(traced_tcp),
		cmocka_unit_test(traced_unix),         cmocka_unit_test(traced_inproc),
		cmocka_unit_test(general_path_traced), cmocka_unit_test(off_by_default),
		cmocka_unit_test(point_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

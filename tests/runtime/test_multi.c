/* Started calls in flight (Olympus) and multi-destination calls (MultiRPC, PARPC) against
 * real servers: completion exactly once, ordering, abort, per-destination failures, deadlines,
 * late replies, pipelining. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <poll.h>

#include "rt_fixture.h"

#define NSRV 4
static rt_server srv[NSRV]; /* each its own server, with its own DELAY */
static const char *const kinds[NSRV] = {"udp://127.0.0.1:0", "tcp://127.0.0.1:0",
                                        "unix:/tmp/rc-test-multi.sock", "inproc:test-multi"};

static int setup(void **st)
{
	(void)st;
	for (int i = 0; i < NSRV; i++) {
		const char *u[] = {kinds[i], NULL};
		if (rt_start(&srv[i], u, 2) != 0)
			return -1;
	}
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	for (int i = 0; i < NSRV; i++)
		rt_stop(&srv[i]);
	return 0;
}

static void clients_for(rc_client **c, int n, uint32_t vers)
{
	for (int i = 0; i < n; i++)
		assert_int_equal(rc_client_create(&c[i], srv[i % NSRV].uri[0], RT_PROG, vers), RC_OK);
}

static void destroy_all(rc_client **c, int n)
{
	for (int i = 0; i < n; i++)
		rc_client_destroy(c[i]);
}

/* ---- multi-destination ---- */

typedef struct {
	int calls[16];     /* handler calls per destination */
	size_t order[16];  /* destination indexes in handler order */
	rc_status st[16];
	uint32_t val[16];
	int n;
	int stop_after;    /* return false after this many calls (0: never) */
} tally;

static bool on_reply(size_t i, rc_status st, void *res, void *udata)
{
	tally *t = udata;
	t->calls[i]++;
	t->st[i] = st;
	t->val[i] = res ? *(uint32_t *)res : 0xdeadbeef;
	t->order[t->n++] = i;
	return t->stop_after == 0 || t->n < t->stop_after;
}

static void multi_all_transports_in_arrival_order(void **state)
{
	rc_client *c[NSRV];
	tally t = {0};
	(void)state;
	/* destination i answers after (NSRV - i) * 60 ms: arrival order is reversed */
	for (int i = 0; i < NSRV; i++)
		rt_set_delay(&srv[i], (NSRV - i) * 60);
	clients_for(c, NSRV, 1);
	assert_int_equal(rc_multicall(c, NSRV, 6, NULL, NULL, (rc_xdrproc)rc_xdr_u_int, 4, on_reply, &t, 5000), RC_OK);
	assert_int_equal(t.n, NSRV);
	for (int i = 0; i < NSRV; i++) {
		assert_int_equal(t.calls[i], 1);
		assert_int_equal(t.st[i], RC_OK);
		assert_int_equal(t.val[i], (uint32_t)((NSRV - i) * 60));
	}
	/* the in-process destination answers inside its send; the others in reverse order */
	for (int k = 0, last = 99; k < NSRV; k++) {
		if (t.order[k] == 3)
			continue;
		assert_true((int)t.order[k] < last);
		last = (int)t.order[k];
	}
	destroy_all(c, NSRV);
	for (int i = 0; i < NSRV; i++)
		rt_set_delay(&srv[i], 0);
}

static void multi_same_args_echo(void **state)
{
	rc_client *c[8];
	rt_blob in = {5000, malloc(5000)};
	(void)state;
	for (int i = 0; i < 5000; i++)
		in.val[i] = (char)(i * 7);
	clients_for(c, 8, 1); /* each server twice */
	struct echo_t { int ok; const rt_blob *want; } e = {0, &in};
	bool on_echo(size_t i, rc_status st, void *res, void *u);
	assert_int_equal(rc_multicall(c, 8, 1, (rc_xdrproc)xdr_rt_blob, &in, (rc_xdrproc)xdr_rt_blob, sizeof(rt_blob), on_echo, &e, 5000), RC_OK);
	assert_int_equal(e.ok, 8);
	destroy_all(c, 8);
	free(in.val);
}

bool on_echo(size_t i, rc_status st, void *res, void *u)
{
	struct echo_t { int ok; const rt_blob *want; } *e = u;
	rt_blob *r = res;
	(void)i;
	if (st == RC_OK && r->len == e->want->len && memcmp(r->val, e->want->val, r->len) == 0)
		e->ok++;
	return true;
}

static void multi_abort_first_reply_wins(void **state)
{
	rc_client *c[NSRV];
	tally t = {0};
	uint32_t v = 0;
	(void)state;
	rt_set_delay(&srv[0], 10);
	rt_set_delay(&srv[1], 300);
	rt_set_delay(&srv[2], 300);
	rt_set_delay(&srv[3], 0);
	clients_for(c, NSRV, 1);
	t.stop_after = 1;
	assert_int_equal(rc_multicall(c, NSRV, 6, NULL, NULL, (rc_xdrproc)rc_xdr_u_int, 4, on_reply, &t, 5000), RC_CANCELLED);
	assert_int_equal(t.n, 1); /* the handler ran once: the rest were abandoned */
	/* the late replies arrive while the next calls on the same clients run: ignored */
	for (int i = 0; i < NSRV; i++)
		rt_set_delay(&srv[i], 0);
	usleep(50000);
	for (int i = 0; i < NSRV; i++) {
		uint32_t ms = 7;
		assert_int_equal(rc_call(c[i], 3, (rc_xdrproc)rc_xdr_u_int, &ms, (rc_xdrproc)rc_xdr_u_int, &v), RC_OK);
		assert_int_equal(v, 7);
	}
	usleep(350000);
	for (int i = 0; i < NSRV; i++) {
		uint32_t ms = 8;
		assert_int_equal(rc_call(c[i], 3, (rc_xdrproc)rc_xdr_u_int, &ms, (rc_xdrproc)rc_xdr_u_int, &v), RC_OK);
		assert_int_equal(v, 8);
	}
	destroy_all(c, NSRV);
}

static void multi_per_destination_failures(void **state)
{
	rc_client *c[4];
	tally t = {0};
	struct timespec a, b;
	(void)state;
	/* 0: healthy; 1: nothing listens there; 2: PROG_UNAVAIL; 3: slow past the deadline */
	assert_int_equal(rc_client_create(&c[0], srv[1].uri[0], RT_PROG, 1), RC_OK);
	assert_int_equal(rc_client_create(&c[1], "udp://127.0.0.1:9", RT_PROG, 1), RC_OK);
	assert_int_equal(rc_client_create(&c[2], srv[2].uri[0], RT_PROG + 5, 1), RC_OK);
	assert_int_equal(rc_client_create(&c[3], srv[0].uri[0], RT_PROG, 1), RC_OK);
	rt_set_delay(&srv[0], 1500);
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(rc_multicall(c, 4, 6, NULL, NULL, (rc_xdrproc)rc_xdr_u_int, 4, on_reply, &t, 400), RC_OK);
	clock_gettime(CLOCK_MONOTONIC, &b);
	for (int i = 0; i < 4; i++)
		assert_int_equal(t.calls[i], 1);
	assert_int_equal(t.st[0], RC_OK);
	assert_true(t.st[1] == RC_CANTRECV || t.st[1] == RC_TIMEDOUT);
	assert_int_equal(t.st[2], RC_PROGUNAVAIL);
	assert_int_equal(t.st[3], RC_TIMEDOUT);
	/* bounded by the deadline (0.4 s), not the slow server (1.5 s) */
	assert_true((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < 1200);
	rt_set_delay(&srv[0], 0);
	destroy_all(c, 4);
}

static void multi_bad_arguments(void **state)
{
	rc_client *c[1];
	tally t = {0};
	(void)state;
	clients_for(c, 1, 1);
	assert_int_equal(rc_multicall(NULL, 1, 0, NULL, NULL, NULL, 0, on_reply, &t, 100), RC_INVAL);
	assert_int_equal(rc_multicall(c, 0, 0, NULL, NULL, NULL, 0, on_reply, &t, 100), RC_INVAL);
	assert_int_equal(rc_multicall(c, 1, 0, NULL, NULL, NULL, 0, NULL, &t, 100), RC_INVAL);
	assert_int_equal(rc_multicall(c, 1, 6, NULL, NULL, (rc_xdrproc)rc_xdr_u_int, 0, on_reply, &t, 100), RC_INVAL);
	assert_int_equal(t.n, 0);
	destroy_all(c, 1);
}

/* ---- started calls ---- */

typedef struct { int done; rc_status st; } once;
static void count_done(rc_async *a, rc_status st, void *u)
{
	once *o = u;
	(void)a;
	o->done++;
	o->st = st;
}

static void drive_until(rc_client *c, const int *flag, int want, int ms)
{
	for (int i = 0; i < ms && *flag < want; i++) {
		int fd, tmo;
		short ev;
		rc_client_pollinfo(c, &fd, &ev, &tmo);
		struct pollfd p = {fd, ev, 0};
		int n = fd >= 0 ? poll(&p, 1, tmo < 0 || tmo > 1 ? 1 : tmo) : 0;
		rc_client_advance(c, n > 0 ? p.revents : 0);
	}
}

static void pipelined_depth_64_exactly_once(void **state)
{
	(void)state;
	for (int k = 0; k < NSRV; k++) {
		rc_client *c;
		once o[64] = {{0}};
		int64_t arg = 1, res[64];
		int total = 0;
		assert_int_equal(rc_client_create(&c, srv[k].uri[0], RT_PROG, 1), RC_OK);
		for (int i = 0; i < 64; i++)
			assert_int_equal(rc_call_start(c, 2, (rc_xdrproc)rc_xdr_hyper, &arg, (rc_xdrproc)rc_xdr_hyper, &res[i], count_done, &o[i], NULL), RC_OK);
		for (int spin = 0; spin < 5000 && total < 64; spin++) {
			drive_until(c, &total, 64, 1);
			total = 0;
			for (int i = 0; i < 64; i++)
				total += o[i].done;
		}
		for (int i = 0; i < 64; i++) {
			assert_int_equal(o[i].done, 1);
			assert_int_equal(o[i].st, RC_OK);
		}
		/* 64 distinct running totals: each ADD ran once */
		for (int i = 0; i < 64; i++)
			for (int j = i + 1; j < 64; j++)
				assert_true(res[i] != res[j]);
		rc_client_destroy(c);
	}
}

static void started_call_times_out_once(void **state)
{
	rc_client *c;
	once o = {0};
	uint32_t ms = 500, r;
	(void)state;
	assert_int_equal(rc_client_create(&c, srv[1].uri[0], RT_PROG, 1), RC_OK);
	rc_client_set_timeout(c, 100);
	assert_int_equal(rc_call_start(c, 3, (rc_xdrproc)rc_xdr_u_int, &ms, (rc_xdrproc)rc_xdr_u_int, &r, count_done, &o, NULL), RC_OK);
	drive_until(c, &o.done, 1, 2000);
	assert_int_equal(o.done, 1);
	assert_int_equal(o.st, RC_TIMEDOUT);
	usleep(600000);                    /* the late reply comes in ... */
	rc_client_advance(c, POLLIN);      /* ... and is dropped */
	assert_int_equal(o.done, 1);
	rc_client_destroy(c);
	assert_int_equal(o.done, 1);
}

static void server_death_completes_calls(void **state)
{
	static const char *const u[] = {"tcp://127.0.0.1:0", NULL};
	rt_server s;
	rc_client *c;
	once o[8] = {{0}};
	uint32_t ms = 300, r[8];
	int total = 0;
	(void)state;
	assert_int_equal(rt_start(&s, u, 1), 0);
	assert_int_equal(rc_client_create(&c, s.uri[0], RT_PROG, 1), RC_OK);
	for (int i = 0; i < 8; i++)
		assert_int_equal(rc_call_start(c, 3, (rc_xdrproc)rc_xdr_u_int, &ms, (rc_xdrproc)rc_xdr_u_int, &r[i], count_done, &o[i], NULL), RC_OK);
	rt_stop(&s); /* closes the connection with calls in flight */
	for (int spin = 0; spin < 3000 && total < 8; spin++) {
		drive_until(c, &total, 8, 1);
		total = 0;
		for (int i = 0; i < 8; i++)
			total += o[i].done;
	}
	for (int i = 0; i < 8; i++) {
		assert_int_equal(o[i].done, 1);
		assert_true(o[i].st == RC_CANTRECV || o[i].st == RC_OK);
	}
	rc_client_destroy(c);
}

static void destroy_cancels_each_once(void **state)
{
	rc_client *c;
	once o[16] = {{0}};
	uint32_t ms = 200, r[16];
	(void)state;
	assert_int_equal(rc_client_create(&c, srv[0].uri[0], RT_PROG, 1), RC_OK);
	for (int i = 0; i < 16; i++)
		assert_int_equal(rc_call_start(c, 3, (rc_xdrproc)rc_xdr_u_int, &ms, (rc_xdrproc)rc_xdr_u_int, &r[i], count_done, &o[i], NULL), RC_OK);
	rc_client_destroy(c);
	for (int i = 0; i < 16; i++) {
		assert_int_equal(o[i].done, 1);
		assert_int_equal(o[i].st, RC_CANCELLED);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(multi_all_transports_in_arrival_order),
		cmocka_unit_test(multi_same_args_echo),
		cmocka_unit_test(multi_abort_first_reply_wins),
		cmocka_unit_test(multi_per_destination_failures),
		cmocka_unit_test(multi_bad_arguments),
		cmocka_unit_test(pipelined_depth_64_exactly_once),
		cmocka_unit_test(started_call_times_out_once),
		cmocka_unit_test(server_death_completes_calls),
		cmocka_unit_test(destroy_cancels_each_once),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * Operating a server (runtime/server/stats.c): per-procedure counters exact under load -- TCP and
 * UDP clients on several threads, calls that succeed, fail in the routine, carry garbage
 * arguments or name a procedure the program does not have -- read with one call, the
 * program's row their sum; and the call log's one record per call, naming its connection.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>

#include <cmocka.h>

#include "rt_fixture.h"

static struct {
	atomic_int records, success, sys, garbage, procun, timed;
	atomic_int bad; /* a record whose numbers do not fit its outcome */
	atomic_ullong conn_ids; /* bit k: a record of stream connection k was seen */
} L;

static void logfn(const rc_call_record *r, void *ctx)
{
	(void)ctx;
	atomic_fetch_add(&L.records, 1);
	if (r->prog != RT_PROG || r->vers != 1 || r->bytes_in < 40)
		atomic_fetch_add(&L.bad, 1);
	if (r->ns > 0)
		atomic_fetch_add(&L.timed, 1);
	/* a stream call names its connection, a datagram none */
	if (r->dgram != (r->conn_id == 0) || r->conn_id >= 64)
		atomic_fetch_add(&L.bad, 1);
	else if (r->conn_id != 0)
		atomic_fetch_or(&L.conn_ids, 1ull << r->conn_id);
	switch (r->outcome) {
	case RC_CALL_SUCCESS:
		atomic_fetch_add(&L.success, 1);
		if (r->proc != 2 || r->bytes_out != 32)
			atomic_fetch_add(&L.bad, 1);
		break;
	case RC_CALL_SYSTEM_ERR:
		atomic_fetch_add(&L.sys, 1);
		break;
	case RC_CALL_GARBAGE_ARGS:
		atomic_fetch_add(&L.garbage, 1);
		break;
	case RC_CALL_PROC_UNAVAIL:
		atomic_fetch_add(&L.procun, 1);
		break;
	default:
		atomic_fetch_add(&L.bad, 1);
	}
}

enum { PER = 500 }; /* rounds per thread; a round is one call of each kind */

typedef struct worker {
	const char *uri;
	int errs; /* calls whose status was not the one expected */
} worker;

static void *work(void *arg)
{
	worker *t = arg;
	rc_client *c;

	if (rc_client_create(&c, t->uri, RT_PROG, 1) != RC_OK) {
		t->errs = -1;
		return NULL;
	}
	/* no UDP retransmission on a loaded machine: a copy would count as one more call */
	rc_client_set_timeout(c, 60000);
	rc_client_set_retry(c, 30000);
	for (int i = 0; i < PER; i++) {
		int64_t v = 1, r;
		if (rc_call(c, 2, (rc_xdrproc)rc_xdr_hyper, &v, (rc_xdrproc)rc_xdr_hyper, &r) != RC_OK)
			t->errs++;
		if (rc_call(c, 4, NULL, NULL, NULL, NULL) != RC_SYSTEMERROR)
			t->errs++;
		/* ADD without its argument: GARBAGE_ARGS */
		if (rc_call(c, 2, NULL, NULL, (rc_xdrproc)rc_xdr_hyper, &r) != RC_CANTDECODEARGS)
			t->errs++;
		if (rc_call(c, 99, NULL, NULL, NULL, NULL) != RC_PROCUNAVAIL)
			t->errs++;
	}
	rc_client_destroy(c);
	return NULL;
}

/* The row of proc in rows[0..n), or NULL. */
static const rc_proc_stats *row_of(const rc_proc_stats *rows, size_t n, uint32_t proc)
{
	for (size_t i = 0; i < n; i++)
		if (rows[i].prog == RT_PROG && rows[i].vers == 1 && rows[i].proc == proc)
			return &rows[i];
	return NULL;
}

static uint64_t lat_sum(const rc_proc_stats *r)
{
	uint64_t s = 0;
	for (int i = 0; i < RC_LATENCY_BUCKETS; i++)
		s += r->latency[i];
	return s;
}

static void counters_exact_under_load(void **state)
{
	enum { NT = 6 };
	rt_server s;
	const char *uris[] = {"tcp://127.0.0.1:0", "udp://127.0.0.1:0", NULL};
	worker t[NT];
	pthread_t tid[NT];
	rc_proc_stats rows[16];
	const rc_proc_stats *add, *fail, *unk, *all;
	size_t n;
	const uint64_t rounds = (uint64_t)NT * PER;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(rc_server_create(&s.srv), RC_OK);
	assert_int_equal(rc_server_register(s.srv, &rt_prog1, NULL), RC_OK);
	assert_int_equal(rc_server_set_proc_stats(s.srv, true), RC_OK);
	assert_int_equal(rc_server_set_call_log(s.srv, logfn, NULL), RC_OK);
	for (int i = 0; uris[i]; i++)
		assert_int_equal(rc_server_listen(s.srv, uris[i], s.uri[i], sizeof(s.uri[i])), RC_OK);
	rc_server_set_threads(s.srv, 4);
	assert_int_equal(rc_server_get_proc_stats(s.srv, rows, 16), 0); /* nothing yet */
	assert_int_equal(pthread_create(&s.tid, NULL, rt_run, &s), 0);
	for (int i = 0; i < NT; i++) {
		t[i] = (worker){.uri = s.uri[i % 2]}; /* TCP and UDP threads */
		assert_int_equal(pthread_create(&tid[i], NULL, work, &t[i]), 0);
	}
	for (int i = 0; i < NT; i++) {
		pthread_join(tid[i], NULL);
		assert_int_equal(t[i].errs, 0);
	}
	n = rc_server_get_proc_stats(s.srv, rows, 16);
	assert_int_equal(rc_server_set_proc_stats(s.srv, false), RC_INVAL); /* running */
	rt_stop(&s);

	assert_int_equal(n, 4); /* ADD, FAIL, the unknown procedure, the program */
	add = row_of(rows, n, 2);
	fail = row_of(rows, n, 4);
	unk = row_of(rows, n, RC_STATS_PROC_UNKNOWN);
	all = row_of(rows, n, RC_STATS_PROC_ALL);
	assert_non_null(add);
	assert_non_null(fail);
	assert_non_null(unk);
	assert_non_null(all);
	assert_int_equal(add->calls, 2 * rounds);
	assert_int_equal(add->success, rounds);
	assert_int_equal(add->garbage_args, rounds);
	assert_int_equal(add->bytes_in, rounds * 48 + rounds * 40); /* header + hyper; header */
	assert_int_equal(add->bytes_out, rounds * 32 + rounds * 24);
	assert_int_equal(fail->calls, rounds);
	assert_int_equal(fail->system_err, rounds);
	assert_int_equal(unk->calls, rounds);
	assert_int_equal(unk->proc_unavail, rounds);
	assert_int_equal(all->calls, 4 * rounds);
	assert_int_equal(all->success + all->garbage_args + all->system_err + all->proc_unavail,
	                 4 * rounds);
	assert_int_equal(all->no_reply + all->deferred + all->auth_error, 0);
	assert_int_equal(lat_sum(all), 4 * rounds); /* every call timed */

	assert_int_equal(atomic_load(&L.bad), 0);
	assert_int_equal(atomic_load(&L.records), 4 * rounds);
	assert_int_equal(atomic_load(&L.success), rounds);
	assert_int_equal(atomic_load(&L.sys), rounds);
	assert_int_equal(atomic_load(&L.garbage), rounds);
	assert_int_equal(atomic_load(&L.procun), rounds);
	assert_int_equal(atomic_load(&L.timed), 4 * rounds);
	/* the three TCP threads' connections, each its own number */
	assert_int_equal(__builtin_popcountll(atomic_load(&L.conn_ids)), NT / 2);
}

/* Counting off costs the untraced path again; the setters' refusals. */
static void stats_settings(void **state)
{
	rc_server *srv;
	rc_proc_stats r;

	(void)state;
	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_set_proc_stats(srv, true), RC_OK);
	assert_int_equal(rc_server_set_proc_stats(srv, false), RC_OK);
	assert_int_equal(rc_server_get_proc_stats(srv, &r, 1), 0);
	assert_int_equal(rc_server_set_call_log(srv, NULL, NULL), RC_OK);
	rc_server_destroy(srv);
	assert_int_equal(rc_server_set_proc_stats(NULL, true), RC_INVAL);
	assert_int_equal(rc_server_set_call_log(NULL, logfn, NULL), RC_INVAL);
	assert_int_equal(rc_server_get_proc_stats(NULL, &r, 1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counters_exact_under_load),
		cmocka_unit_test(stats_settings),
	};
	(void)rt_start;
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Changes while serving (runtime/server/live.c, dispatch.c): a TLS certificate and key replaced
 * under load -- connections under the old certificate go on serving with it, new ones get the
 * new one; programs registered and unregistered while serving.
 * The certificates are made at start by tls_certs.sh (openssl): the old one is signed by
 * ca.pem, the new one by other-ca.pem, so which one a new client meets shows in whom it must
 * trust.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>

#include <cmocka.h>

#include "rt_certs.h"
#include "rt_fixture.h"

static char dir[256];

static int setup(void **state)
{
	(void)state;
	return rt_certs_make(dir, sizeof(dir), "live-test");
}

static int teardown(void **state)
{
	(void)state;
	return rt_certs_remove(dir);
}

/* A TLS client of s trusting ca (a file under dir); its creation's status. */
static rc_status live_client(const rt_server *s, const char *ca, rc_client **out)
{
	char path[512];
	rc_tls_client_opts o = {RC_TLS_REQUIRED, path, NULL, NULL, NULL, NULL};
	rc_error e;

	snprintf(path, sizeof(path), "%s/%s", dir, ca);
	*out = NULL;
	return rc_client_create_tls(out, s->uri[0], RT_PROG, 1, &o, &e);
}

typedef struct loader {
	rc_client *c; /* made before the swap, under the old certificate */
	atomic_int *phase; /* 0 before the swap, 1 after, 2 stop */
	int before, after, failed;
} loader;

/* ADD(1) on its connection until told to stop, counting calls before and after the swap. */
static void *load(void *arg)
{
	loader *l = arg;
	int ph;

	while ((ph = atomic_load(l->phase)) < 2) {
		int64_t v = 1, r = 0;
		if (rc_call(l->c, 2, (rc_xdrproc)rc_xdr_hyper, &v, (rc_xdrproc)rc_xdr_hyper, &r) !=
		    RC_OK)
			l->failed++;
		else if (ph == 0)
			l->before++;
		else
			l->after++;
	}
	return NULL;
}

static void tls_cert_swapped_under_load(void **state)
{
	enum { NL = 4 };
	rt_server s;
	const char *uris[] = {"tcp://127.0.0.1:0", NULL};
	char why[256], cert[512], key[512];
	rc_tls_server_opts o = {0};
	loader l[NL];
	pthread_t tid[NL];
	atomic_int phase = 0;
	rc_client *c;

	(void)state;
	snprintf(cert, sizeof(cert), "%s/server.pem", dir);
	snprintf(key, sizeof(key), "%s/server.key", dir);
	o.cert_file = cert;
	o.key_file = key;
	memset(&s, 0, sizeof(s));
	assert_int_equal(rc_server_create(&s.srv), RC_OK);
	assert_int_equal(rc_server_set_tls(s.srv, &o, why, sizeof(why)), RC_OK);
	assert_int_equal(rc_server_register(s.srv, &rt_prog1, NULL), RC_OK);
	assert_int_equal(rc_server_listen(s.srv, uris[0], s.uri[0], sizeof(s.uri[0])), RC_OK);
	rc_server_set_threads(s.srv, 2);
	assert_int_equal(pthread_create(&s.tid, NULL, rt_run, &s), 0);

	for (int i = 0; i < NL; i++) {
		l[i] = (loader){.phase = &phase};
		assert_int_equal(live_client(&s, "ca.pem", &l[i].c), RC_OK);
		assert_int_equal(pthread_create(&tid[i], NULL, load, &l[i]), 0);
	}
	usleep(200000);
	/* the new certificate and key, while the loaders call */
	snprintf(cert, sizeof(cert), "%s/other-server.pem", dir);
	snprintf(key, sizeof(key), "%s/other-server.key", dir);
	assert_int_equal(rc_server_set_tls(s.srv, &o, why, sizeof(why)), RC_OK);
	atomic_store(&phase, 1);
	/* new connections meet the new certificate: one trusting only the old CA fails, one
	 * trusting the new CA is served */
	assert_int_not_equal(live_client(&s, "ca.pem", &c), RC_OK);
	assert_int_equal(live_client(&s, "other-ca.pem", &c), RC_OK);
	{
		int64_t v = 1, r = 0;
		assert_int_equal(
		        rc_call(c, 2, (rc_xdrproc)rc_xdr_hyper, &v, (rc_xdrproc)rc_xdr_hyper, &r), RC_OK);
	}
	rc_client_destroy(c);
	/* a bad file is refused while running, and the current certificate stays */
	snprintf(cert, sizeof(cert), "%s/nonexistent.pem", dir);
	assert_int_equal(rc_server_set_tls(s.srv, &o, why, sizeof(why)), RC_INVAL);
	assert_int_equal(live_client(&s, "other-ca.pem", &c), RC_OK);
	rc_client_destroy(c);
	usleep(200000);
	atomic_store(&phase, 2);
	for (int i = 0; i < NL; i++) {
		pthread_join(tid[i], NULL);
		print_message("loader %d: %d calls before the swap, %d after, %d failed\n", i,
		              l[i].before, l[i].after, l[i].failed);
		/* the old connections kept their TLS session and were served throughout */
		assert_int_equal(l[i].failed, 0);
		assert_true(l[i].before > 0);
		assert_true(l[i].after > 0);
		rc_client_destroy(l[i].c);
	}
	rc_server_stop(s.srv);
	pthread_join(s.tid, NULL);
	rc_server_destroy(s.srv);
}

typedef struct sleeper {
	const char *uri;
	rc_status st;
	uint32_t res;
} sleeper;

/* SLEEP(300) on a client of its own. */
static void *sleep_call(void *arg)
{
	sleeper *sl = arg;
	rc_client *c;
	uint32_t ms = 300;

	if ((sl->st = rc_client_create(&c, sl->uri, RT_PROG, 1)) != RC_OK)
		return NULL;
	sl->st = rc_call(c, 3, (rc_xdrproc)rc_xdr_u_int, &ms, (rc_xdrproc)rc_xdr_u_int, &sl->res);
	rc_client_destroy(c);
	return NULL;
}

/* Programs registered and unregistered while the server runs: new calls see the change at
 * once; a call under way on a program taken out finishes. */
static void registrations_while_serving(void **state)
{
	rt_server s;
	rc_client *c1, *c2;
	sleeper sl;
	pthread_t tid;
	int64_t v = 1, r = 0;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(rc_server_create(&s.srv), RC_OK);
	assert_int_equal(rc_server_register(s.srv, &rt_prog1, NULL), RC_OK);
	assert_int_equal(rc_server_listen(s.srv, "tcp://127.0.0.1:0", s.uri[0], sizeof(s.uri[0])),
	                 RC_OK);
	rc_server_set_threads(s.srv, 4);
	assert_int_equal(pthread_create(&s.tid, NULL, rt_run, &s), 0);
	assert_int_equal(rc_client_create(&c1, s.uri[0], RT_PROG, 1), RC_OK);
	assert_int_equal(rc_client_create(&c2, s.uri[0], RT_PROG, 2), RC_OK);
	assert_int_equal(rc_call(c2, 0, NULL, NULL, NULL, NULL), RC_PROGVERSMISMATCH);

	assert_int_equal(rc_server_register(s.srv, &rt_prog2, NULL), RC_OK); /* while serving */
	assert_int_equal(rc_call(c2, 0, NULL, NULL, NULL, NULL), RC_OK);
	assert_int_equal(rc_server_register(s.srv, &rt_prog2, NULL), RC_INVAL); /* twice */
	assert_int_equal(rc_server_unregister(s.srv, RT_PROG, 2), RC_OK);
	assert_int_equal(rc_call(c2, 0, NULL, NULL, NULL, NULL), RC_PROGVERSMISMATCH);

	/* version 1 taken out while one of its calls runs: that call finishes */
	sl = (sleeper){.uri = s.uri[0]};
	assert_int_equal(pthread_create(&tid, NULL, sleep_call, &sl), 0);
	usleep(100000);
	assert_int_equal(rc_server_unregister(s.srv, RT_PROG, 1), RC_OK);
	assert_int_equal(rc_call(c1, 2, (rc_xdrproc)rc_xdr_hyper, &v, (rc_xdrproc)rc_xdr_hyper, &r),
	                 RC_PROGUNAVAIL);
	pthread_join(tid, NULL);
	assert_int_equal(sl.st, RC_OK);
	assert_int_equal(sl.res, 300);
	assert_int_equal(rc_server_unregister(s.srv, RT_PROG, 1), RC_PROGUNAVAIL);
	assert_int_equal(rc_server_register(s.srv, &rt_prog1, NULL), RC_OK); /* back */
	assert_int_equal(rc_call(c1, 2, (rc_xdrproc)rc_xdr_hyper, &v, (rc_xdrproc)rc_xdr_hyper, &r),
	                 RC_OK);
	rc_client_destroy(c1);
	rc_client_destroy(c2);
	rc_server_stop(s.srv);
	pthread_join(s.tid, NULL);
	rc_server_destroy(s.srv);
}

typedef struct lim_loader {
	const char *uri;
	atomic_int *stop;
	rc_client *c; /* left open for the idle check */
	int64_t sent;
	int failed;
} lim_loader;

/* ADD(1) until told to stop, counting what was added and the failures. */
static void *lim_load(void *arg)
{
	lim_loader *l = arg;

	if (rc_client_create(&l->c, l->uri, RT_PROG, 1) != RC_OK) {
		l->failed++;
		return NULL;
	}
	while (!atomic_load(l->stop)) {
		int64_t v = 1, r = 0;
		if (rc_call(l->c, 2, (rc_xdrproc)rc_xdr_hyper, &v, (rc_xdrproc)rc_xdr_hyper, &r) ==
		    RC_OK)
			l->sent++;
		else
			l->failed++;
	}
	return NULL;
}

/* Every live field of rc_server_limits changed back and forth, many times, from another
 * thread. */
static void *lim_change(void *arg)
{
	rc_server *srv = arg;
	uintptr_t bad = 0;

	for (int i = 0; i < 300; i++) {
		bool a = i % 2 == 0;
		rc_server_limits lim = {
		        .max_alloc = a ? (size_t)1 << 20 : (size_t)16 << 20,
		        .max_conns = a ? 1000 : 16384,
		        .idle_ms = a ? 60000 : 120000,
		        .stall_ms = a ? 5000 : 10000,
		        .max_deferred_conn = a ? 32 : 64,
		        .max_deferred = a ? 1000 : 65536,
		        .max_parked_conn = a ? (size_t)1 << 20 : (size_t)4 << 20,
		        .max_inbound_bytes = a ? (size_t)128 << 20 : (size_t)256 << 20,
		        .gss_contexts = a ? 512 : 1024,
		};
		if (rc_server_set_limits(srv, &lim) != RC_OK)
			bad++;
		usleep(1000);
	}
	return (void *)bad;
}

/* An ECHO of n bytes (under RC_XDR_LEND_MIN: decoding allocates them) on a new client. */
static rc_status echo_new(const char *uri, uint32_t n)
{
	char buf[512] = {0};
	rt_blob in = {n, buf}, out = {0, NULL};
	rc_client *c;
	rc_status st;

	assert_int_equal(rc_client_create(&c, uri, RT_PROG, 1), RC_OK);
	st = rc_call(c, 1, (rc_xdrproc)xdr_rt_blob, &in, (rc_xdrproc)xdr_rt_blob, &out);
	if (st == RC_OK)
		rc_xdr_free((rc_xdrproc)xdr_rt_blob, &out);
	rc_client_destroy(c);
	return st;
}

/* rc_server_set_limits while the server runs, under load on TCP and UDP: no call fails while
 * the limits change; a lower max_alloc refuses the next call's arguments, a shorter idle_ms
 * closes idle connections at the sweeper's next walk; max_record and drc_* are refused while
 * running (and the same value is not a change). TSan: the readers on the serving threads. */
static void limits_changed_under_load(void **state)
{
	enum { NL = 4 };
	const char *uris[] = {"tcp://127.0.0.1:0", "udp://127.0.0.1:0", NULL};
	rt_server s;
	lim_loader l[NL];
	pthread_t tid[NL], ch;
	atomic_int stop = 0;
	void *bad;
	int64_t total0, sent = 0;
	rc_server_stats st;

	(void)state;
	assert_int_equal(rt_start(&s, uris, 2), 0);
	total0 = rt_total_now();
	for (int i = 0; i < NL; i++) {
		l[i] = (lim_loader){.uri = s.uri[i % 2], .stop = &stop};
		assert_int_equal(pthread_create(&tid[i], NULL, lim_load, &l[i]), 0);
	}
	assert_int_equal(pthread_create(&ch, NULL, lim_change, s.srv), 0);
	pthread_join(ch, &bad);
	assert_int_equal((uintptr_t)bad, 0);

	/* what only a stopped server takes is refused whole; the same value is no change */
	rc_server_limits lim = {.max_record = 4096, .max_alloc = 64};
	assert_int_equal(rc_server_set_limits(s.srv, &lim), RC_INVAL);
	assert_int_equal(echo_new(s.uri[0], 512), RC_OK); /* (max_alloc not applied) */
	lim = (rc_server_limits){.drc_ttl_ms = 1000};
	assert_int_equal(rc_server_set_limits(s.srv, &lim), RC_INVAL);
	lim = (rc_server_limits){.max_record = RC_DEFAULT_MAX_MESSAGE, .drc_ttl_ms = 120000};
	assert_int_equal(rc_server_set_limits(s.srv, &lim), RC_OK);

	/* max_alloc, for the next request decoded */
	lim = (rc_server_limits){.max_alloc = 64};
	assert_int_equal(rc_server_set_limits(s.srv, &lim), RC_OK);
	assert_int_equal(echo_new(s.uri[0], 512), RC_CANTDECODEARGS);
	assert_int_equal(echo_new(s.uri[1], 512), RC_CANTDECODEARGS);
	lim = (rc_server_limits){.max_alloc = (size_t)16 << 20};
	assert_int_equal(rc_server_set_limits(s.srv, &lim), RC_OK);
	assert_int_equal(echo_new(s.uri[0], 512), RC_OK);

	atomic_store(&stop, 1);
	for (int i = 0; i < NL; i++) {
		pthread_join(tid[i], NULL);
		print_message("loader %d (%s): %lld calls, %d failed\n", i, i % 2 ? "udp" : "tcp",
		              (long long)l[i].sent, l[i].failed);
		assert_int_equal(l[i].failed, 0);
		assert_true(l[i].sent > 0);
		sent += l[i].sent;
	}
	assert_int_equal(rt_total_now() - total0, sent);

	/* idle_ms shortened: the loaders' TCP connections, idle now, are closed at the next walk
	 * (under the old 120 s they would stay) */
	assert_int_equal(rc_server_get_stats(s.srv, &st), RC_OK);
	assert_true(st.conns >= 2);
	lim = (rc_server_limits){.idle_ms = 200};
	assert_int_equal(rc_server_set_limits(s.srv, &lim), RC_OK);
	for (int i = 0; i < 100 && st.conns > 0; i++) {
		usleep(50000);
		assert_int_equal(rc_server_get_stats(s.srv, &st), RC_OK);
	}
	assert_int_equal(st.conns, 0);
	for (int i = 0; i < NL; i++)
		rc_client_destroy(l[i].c);
	rt_stop(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tls_cert_swapped_under_load),
		cmocka_unit_test(registrations_while_serving),
		cmocka_unit_test(limits_changed_under_load),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

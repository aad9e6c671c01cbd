/*
 * RPC-over-QUIC (quic://, draft-cel-nfsv4-rpc-over-quicv1), remotecall to remotecall over
 * loopback: blocking calls (1 MiB echo included), started calls pipelined over a pool of
 * streams and driven by the application's poll loop, multi-destination calls, mutual TLS and
 * the identity a procedure sees, certificate failures with their reasons, a listener without
 * certificates refused, the idle timeout (and the client's reconnection after it), and the
 * listener's counters, and a peer that withholds flow-control credit (the server's output
 * toward it stays bounded). The certificates are made at start by tls_certs.sh (openssl).
 * tests/interop/quic_peer.py (aioquic) is the other implementation: test_quic_interop.
 */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/runtime/rt_fixture.h"
#include "tests/runtime/tls_fixture.h"

#include "tests/runtime/quic_fixture.h"
#include "transports/quic_conn.h" /* (the bounds of a pipe's output) */

/* WHOTLS on a new client of QW_PROG at uri with o. */
static char *qw_who_call(const char *uri, const rc_tls_client_opts *o)
{
	rc_client *c;
	char *who = NULL;
	assert_int_equal(rc_client_create_tls(&c, uri, QW_PROG, 1, o, NULL), RC_OK);
	assert_int_equal(rc_call(c, 1, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)xdr_rt_str, &who),
	                 RC_OK);
	rc_client_destroy(c);
	return who;
}

static const qw_conf C_ONE = {false, 0, NULL}, C_MT = {false, 4, NULL}, C_MTLS = {true, 0, NULL};

/* Blocking calls: NULL, ADD, echoes up to 1 MiB; the server printed a quic:// URI; the call
 * is under TLS. */
static void quic_blocking(void **state)
{
	rt_server s;
	rc_tls_client_opts o = {RC_TLS_REQUIRED, NULL, NULL, NULL, NULL, NULL};
	rc_client *c;
	int64_t v = 5, r = 0;
	rc__quic_stats st;
	(void)state;
	qw_start(&s, &C_ONE);
	assert_int_equal(strncmp(s.uri[0], "quic://127.0.0.1:", 17), 0);
	o.ca_file = P("ca.pem");
	c = qw_client(&s, NULL, &o, RC_OK, NULL);
	assert_true(rc_client_tls(c));
	{
		char *who = qw_who_call(s.uri[0], &o); /* no client certificate: TLS, no identity */
		assert_string_equal(who, "tls");
		free(who);
	}
	assert_int_equal(rc_call(c, 0, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void, NULL),
	                 RC_OK);
	pthread_mutex_lock(&rt_mu);
	rt_total = 0;
	pthread_mutex_unlock(&rt_mu);
	assert_int_equal(rc_call(c, 2, (rc_xdrproc)rc_xdr_hyper, &v, (rc_xdrproc)rc_xdr_hyper, &r),
	                 RC_OK);
	assert_int_equal(r, 5);
	tls_echo(c, 0);
	tls_echo(c, 1000);
	tls_echo(c, 1 << 20);
	st = qw_stats(&s);
	assert_int_equal(st.conns, 2); /* (and the WHOTLS client's) */
	assert_true(st.streams >= 1);
	assert_int_equal(st.bad_records + st.wrong_direction + st.stream_limit, 0);
	rc_client_destroy(c);
	rt_stop(&s);
}

/* 64 started calls pipelined over a pool of 4 streams, half waited for, half driven by the
 * application's poll loop; the server saw 4 streams (its connections) on 1 QUIC
 * connection. Then the URI's CA and the pool of 1. */
static void quic_pipelined(void **state)
{
	rt_server s;
	rc_tls_client_opts o = {RC_TLS_REQUIRED, NULL, NULL, NULL, NULL, NULL};
	rc_client *c;
	rc_async *h[64];
	int64_t args[64], res[64];
	rc__quic_stats st;
	uint64_t n4;
	char q[600];
	(void)state;
	qw_start(&s, &C_MT);
	o.ca_file = P("ca.pem");
	c = qw_client(&s, "streams=4", &o, RC_OK, NULL);
	rt_meet_reset();
	for (int i = 0; i < 64; i++) {
		args[i] = 1;
		assert_int_equal(rc_call_start(c, 2, (rc_xdrproc)rc_xdr_hyper, &args[i],
		                               (rc_xdrproc)rc_xdr_hyper, &res[i], NULL, NULL, &h[i]),
		                 RC_OK);
	}
	for (int i = 0; i < 32; i++) {
		assert_int_equal(rc_async_wait(h[i], 10000), RC_OK);
		rc_async_release(h[i]);
	}
	rt_poll_loop(c, 10000);
	for (int i = 32; i < 64; i++) {
		assert_int_equal(rc_async_status(h[i]), RC_OK);
		rc_async_release(h[i]);
	}
	st = qw_stats(&s);
	assert_int_equal(st.conns, 1);
	/* spread over the pool: small calls handed over together go RC__Q_STICK (32) to a
	 * stream, so 64 take two streams at least, and never more than the pool's four */
	assert_in_range(st.streams, 2, 4);
	n4 = st.streams;
	rc_client_destroy(c);

	snprintf(q, sizeof(q), "streams=1&ca=%s&name=localhost", P("ca.pem"));
	c = qw_client(&s, q, NULL, RC_OK, NULL);
	tls_echo(c, 100000);
	rc_client_destroy(c);
	st = qw_stats(&s);
	assert_int_equal(st.conns, 2);
	assert_int_equal(st.streams, n4 + 1);
	/* a bad pool size is refused, and says why */
	{
		rc_error e;
		qw_client(&s, "streams=0", &o, RC_UNKNOWNADDR, &e);
		assert_non_null(strstr(e.detail, "streams"));
	}
	rt_stop(&s);
}

/* One echo of 1 MiB to three QUIC clients at once (rc_multicall). */
static void quic_multi(void **state)
{
	rt_server s;
	rc_tls_client_opts o = {RC_TLS_REQUIRED, NULL, NULL, NULL, NULL, NULL};
	rc_client *c[3];
	(void)state;
	qw_start(&s, &C_ONE);
	o.ca_file = P("ca.pem");
	for (int i = 0; i < 3; i++)
		c[i] = qw_client(&s, NULL, &o, RC_OK, NULL);
	tls_multi_echo(c);
	for (int i = 0; i < 3; i++)
		rc_client_destroy(c[i]);
	rt_stop(&s);
}

/* Mutual TLS: the procedure sees the client certificate's subject and SANs; a client without
 * a certificate, or with one another CA signed, gets no service. */
static void quic_mutual(void **state)
{
	rt_server s;
	rc_tls_client_opts o = {RC_TLS_REQUIRED, NULL, NULL, NULL, NULL, NULL};
	rc_client *c;
	char *who = NULL;
	rc_status st;
	(void)state;
	qw_start(&s, &C_MTLS);
	o.ca_file = P("ca.pem");
	o.cert_file = P("client.pem");
	o.key_file = P("client.key");
	who = qw_who_call(s.uri[0], &o);
	assert_string_equal(who, "tls CN=alice,O=remotecall tests DNS:alice.example "
	                         "email:alice@example.org");
	free(who);

	o.cert_file = P("other-client.pem");
	o.key_file = P("other-client.key");
	c = NULL;
	if (rc_client_create_tls(&c, s.uri[0], RT_PROG, 1, &o, NULL) == RC_OK) {
		/* TLS 1.3: the client may finish first; the server's refusal then ends the call */
		rc_client_set_timeout(c, 2000);
		st = rc_call(c, 0, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void, NULL);
		assert_int_not_equal(st, RC_OK);
		rc_client_destroy(c);
	}
	assert_true(qw_stats(&s).handshake_fails >= 1);
	rt_stop(&s);
}

/* A server certificate the client's CA did not sign, or a name it does not carry: the
 * creation fails with RC_TLSFAILED and GnuTLS's reason; a listener without certificates is
 * refused. */
static void quic_failures(void **state)
{
	rt_server s;
	rc_tls_client_opts o = {RC_TLS_REQUIRED, NULL, NULL, NULL, NULL, NULL};
	rc_error e;
	rc_server *bare;
	char bound[256];
	(void)state;
	qw_start(&s, &C_ONE);
	o.ca_file = P("other-ca.pem");
	qw_client(&s, NULL, &o, RC_TLSFAILED, &e);
	assert_non_null(strstr(e.detail, "QUIC"));
	o.ca_file = P("ca.pem");
	o.verify_name = "other.example";
	qw_client(&s, NULL, &o, RC_TLSFAILED, &e);
	assert_non_null(strstr(e.detail, "QUIC"));
	rt_stop(&s);

	assert_int_equal(rc_server_create(&bare), RC_OK);
	assert_int_equal(rc_server_listen(bare, "quic://127.0.0.1:0", bound, sizeof(bound)),
	                 RC_INVAL);
	rc_server_geterr(bare, &e);
	assert_non_null(strstr(e.detail, "rc_server_set_tls"));
	rc_server_destroy(bare);
}

/* The idle timeout ends a quiet connection on both sides; the client's next call connects
 * again. */
static void quic_idle(void **state)
{
	rt_server s;
	rc_tls_client_opts o = {RC_TLS_REQUIRED, NULL, NULL, NULL, NULL, NULL};
	rc_client *c;
	(void)state;
	rc__quic_set_idle_ms(300);
	qw_start(&s, &C_ONE);
	o.ca_file = P("ca.pem");
	c = qw_client(&s, NULL, &o, RC_OK, NULL);
	assert_int_equal(rc_call(c, 0, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void, NULL),
	                 RC_OK);
	for (int i = 0; i < 50 && qw_stats(&s).idle_closed == 0; i++)
		usleep(50000);
	assert_int_equal(qw_stats(&s).idle_closed, 1);
	assert_int_equal(qw_stats(&s).open_conns, 0);
	usleep(100000); /* (the client's side ends too) */
	assert_int_equal(rc_call(c, 0, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void, NULL),
	                 RC_OK);
	assert_int_equal(qw_stats(&s).conns, 2);
	rc_client_destroy(c);
	rt_stop(&s);
	rc__quic_set_idle_ms(0);
}

/* The listener's bytes queued in streams' send queues (rc_server_stats.quic_queued). */
static uint64_t qw_queued(rt_server *s)
{
	return qw_stats(s).queued;
}

/* A client of QW_PROG on one stream (?streams=1) that withholds flow-control credit
 * (rc__quic_set_withhold) and starts QW_CALLS small calls with QW_REPLY-byte replies in h[],
 * res[]; returns once the server has stopped running them (bounded: asserted). */
#define QW_CALLS 400
#define QW_REPLY (64u << 10)
static rc_client *qw_withheld(rt_server *s, const rc_tls_client_opts *o, rc_async **h,
                              rt_blob *res)
{
	rc_client *c;
	char uri[1024];
	rt_sized arg = {QW_REPLY, {0, NULL}};
	unsigned ran = 0, bound;
	uint64_t queued;

	snprintf(uri, sizeof(uri), "%s?streams=1", s->uri[0]);
	assert_int_equal(rc_client_create_tls(&c, uri, QW_PROG, 1, o, NULL), RC_OK);
	atomic_store(&qw_big_ran, 0);
	rc__quic_set_withhold(true);
	for (int i = 0; i < QW_CALLS; i++)
		assert_int_equal(rc_call_start(c, 2, (rc_xdrproc)xdr_rt_sized, &arg,
		                               (rc_xdrproc)xdr_rt_big, &res[i], NULL, NULL, &h[i]),
		                 RC_OK);
	/* the server runs calls until the pipe is full, then no more: wait until it stops */
	for (int still = 0, i = 0; i < 100 && still < 5; i++) {
		unsigned now;
		usleep(100000);
		now = atomic_load(&qw_big_ran);
		still = now == ran && now > 0 ? still + 1 : 0;
		ran = now;
	}
	/* what went (the peer's first stream window), what the pipe holds, what waits in it, and
	 * the requests worker threads run at once (runtime/server/base.h: RC__CONN_JOBS) */
	bound = (unsigned)((RC__Q_STREAM_WIN + RC__Q_PIPE_HELD + 2 * RC__Q_FROM_HIGH) / QW_REPLY) +
	        64 + 8;
	queued = qw_queued(s);
	print_message("withheld: %u of %d calls ran (bound %u), %llu bytes queued\n", ran, QW_CALLS,
	              bound, (unsigned long long)queued);
	assert_true(ran > 0 && ran <= bound);
	assert_true(queued <= RC__Q_PIPE_HELD + 2 * (QW_REPLY + 64));
	return c;
}

/* Wait (20 s at most: valgrind) until s's endpoint has nothing queued toward peers. */
static void qw_queue_empties(rt_server *s)
{
	for (int i = 0; i < 1000 && qw_queued(s) > 0; i++)
		usleep(20000); /* (the last acknowledgments) */
	assert_int_equal(qw_queued(s), 0);
}

/*
 * A peer that withholds flow-control credit while it pipelines small calls with big replies
 * on one stream: the server queues at most a pipe's bound toward it -- the calls it runs and
 * the bytes it holds stop growing (it stops reading the stream, as it stops reading a TCP
 * connection whose replies back up) -- serves another client meanwhile, and once the peer
 * gives credit again every call completes and the queue empties. state: the server's conf.
 */
static void quic_withheld_credit(void **state)
{
	rt_server s;
	rc_tls_client_opts o = {RC_TLS_REQUIRED, NULL, NULL, NULL, NULL, NULL};
	rc_client *c, *other;
	rc_async **h = calloc(QW_CALLS, sizeof(*h));
	rt_blob *res = calloc(QW_CALLS, sizeof(*res));
	assert_non_null(h);
	assert_non_null(res);
	qw_start(&s, *state);
	o.ca_file = P("ca.pem");
	c = qw_withheld(&s, &o, h, res);
	/* another client is served meanwhile */
	other = qw_client(&s, NULL, &o, RC_OK, NULL);
	assert_int_equal(rc_call(other, 0, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void,
	                         NULL),
	                 RC_OK);
	rc_client_destroy(other);
	/* credit again (given back when the client's pipe next rings: a call): all complete */
	rc__quic_set_withhold(false);
	assert_int_equal(rc_call(c, 0, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void, NULL),
	                 RC_OK);
	for (int i = 0; i < QW_CALLS; i++) {
		assert_int_equal(rc_async_wait(h[i], 20000), RC_OK);
		assert_int_equal(res[i].len, QW_REPLY);
		free(res[i].val);
		rc_async_release(h[i]);
	}
	assert_int_equal(atomic_load(&qw_big_ran), QW_CALLS);
	qw_queue_empties(&s);
	rc_client_destroy(c);
	rt_stop(&s);
	free(h);
	free(res);
}

/* A peer that never gives credit again: the server closes the stalled connection after
 * stall_ms (its box, choked, is let go); destroying the client ends the QUIC connection and
 * what was queued toward it. */
static void quic_withheld_stall(void **state)
{
	rt_server s;
	rc_tls_client_opts o = {RC_TLS_REQUIRED, NULL, NULL, NULL, NULL, NULL};
	rc_server_limits lim = {0};
	rc_server_stats st;
	rc_client *c;
	rc_async **h = calloc(QW_CALLS, sizeof(*h));
	rt_blob *res = calloc(QW_CALLS, sizeof(*res));
	(void)state;
	assert_non_null(h);
	assert_non_null(res);
	qw_start(&s, &C_ONE);
	lim.stall_ms = 300;
	assert_int_equal(rc_server_set_limits(s.srv, &lim), RC_OK);
	o.ca_file = P("ca.pem");
	c = qw_withheld(&s, &o, h, res);
	for (int i = 0; i < 1000; i++) { /* (20 s at most: valgrind) */
		assert_int_equal(rc_server_get_stats(s.srv, &st), RC_OK);
		if (st.conns == 0)
			break;
		usleep(20000);
	}
	assert_int_equal(st.conns, 0);
	assert_true(qw_queued(&s) <= RC__Q_PIPE_HELD + 2 * (QW_REPLY + 64));
	for (int i = 0; i < QW_CALLS; i++) {
		free(res[i].val);
		rc_async_release(h[i]); /* (cancelled, or failed with the stream's end) */
	}
	rc_client_destroy(c);
	rc__quic_set_withhold(false);
	qw_queue_empties(&s);
	rt_stop(&s);
	free(h);
	free(res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quic_blocking), cmocka_unit_test(quic_pipelined),
		cmocka_unit_test(quic_multi),    cmocka_unit_test(quic_mutual),
		cmocka_unit_test(quic_failures), cmocka_unit_test(quic_idle),
		cmocka_unit_test_prestate(quic_withheld_credit, (void *)&C_ONE),
		cmocka_unit_test_prestate(quic_withheld_credit, (void *)&C_MT),
		cmocka_unit_test(quic_withheld_stall),
	};
	return cmocka_run_group_tests(tests, qw_setup, qw_teardown);
}

/*
 * What the QUIC tests share (test_quic.c, test_quic_interop.c): a quic:// server of RT_PROG 1
 * and 2 and WHOTLS on a thread, its listener's counters, clients of it, and the certificates
 * made at start (tls_certs.sh). Include after rt_fixture.h and tls_fixture.h.
 */
#ifndef QUIC_FIXTURE_H
#define QUIC_FIXTURE_H

#include "runtime/server/listener.h"
#include "transports/quic.h"

#define QW_PROG 0x20000097u /* WHOTLS: what the procedure sees of TLS */

static const rc_procinfo qw_who_i = {QW_PROG, 1, 1, "WHOTLS", (rc_xdrproc)rc_xdr_void, 0,
                                     (rc_xdrproc)xdr_rt_str, sizeof(char *)};
/* BIG: SIZED (a small call, a reply of the bytes it asks for), counting the calls it ran. */
static atomic_uint qw_big_ran;
static const rc_procinfo qw_big_i = {QW_PROG, 1, 2, "BIG", (rc_xdrproc)xdr_rt_sized,
                                     sizeof(rt_sized), (rc_xdrproc)xdr_rt_big, sizeof(rt_blob)};
static bool qw_big(void *a, void *r, rc_svc_req *q)
{
	atomic_fetch_add(&qw_big_ran, 1);
	return rt_sized_fn(a, r, q);
}
static const rc_svc_proc qw_procs[] = {{&rt_null_1, rt_null}, {&qw_who_i, tls_who},
                                       {&qw_big_i, qw_big}};
static const rc_svc_prog qw_prog = {QW_PROG, 1, 3, qw_procs};

typedef struct qw_conf {
	bool mtls;
	unsigned threads;
	const char *listen; /* NULL: quic://127.0.0.1:0 */
} qw_conf;

/* Start the fixture's server (RT_PROG 1 and 2) on quic:// with conf. */
static void qw_start(rt_server *s, const qw_conf *conf)
{
	char why[256];
	rc_tls_server_opts o = {strdup(P("server.pem")), strdup(P("server.key")), NULL,
	                        RC_TLS_CERT_NONE, 0};
	rc_status st;

	memset(s, 0, sizeof(*s));
	assert_int_equal(rc_server_create(&s->srv), RC_OK);
	assert_int_equal(rc_server_register(s->srv, &rt_prog1, &s->delay_ms), RC_OK);
	assert_int_equal(rc_server_register(s->srv, &rt_prog2, NULL), RC_OK);
	assert_int_equal(rc_server_register(s->srv, &qw_prog, NULL), RC_OK);
	if (conf->mtls) {
		o.client_ca_file = strdup(P("ca.pem"));
		o.clientcert = RC_TLS_CERT_REQUIRED;
	}
	st = rc_server_set_tls(s->srv, &o, why, sizeof(why));
	if (st != RC_OK)
		fail_msg("rc_server_set_tls: %s: %s", rc_status_name(st), why);
	free((char *)o.cert_file);
	free((char *)o.key_file);
	free((char *)o.client_ca_file);
	st = rc_server_listen(s->srv, conf->listen ? conf->listen : "quic://127.0.0.1:0", s->uri[0],
	                      sizeof(s->uri[0]));
	if (st != RC_OK) {
		rc_error e;
		char buf[512];
		rc_server_geterr(s->srv, &e);
		fail_msg("listen: %s", rc_error_format(&e, buf, sizeof(buf)));
	}
	s->n = 1;
	rc_server_set_threads(s->srv, conf->threads);
	assert_int_equal(pthread_create(&s->tid, NULL, rt_run, s), 0);
}

/* The listener's counters, as the public rc_server_get_stats gives them (its quic_* fields:
 * s has one listener, so they are that listener's) -- checked against the listener's own. */
static rc__quic_stats qw_stats(rt_server *s)
{
	rc__quic_stats st, own;
	rc_server_stats p;
	assert_int_equal(rc_server_get_stats(s->srv, &p), RC_OK);
	st.conns = p.quic_conns;
	st.open_conns = p.quic_open_conns;
	st.handshake_fails = p.quic_handshake_fails;
	st.streams = p.quic_streams;
	st.bad_records = p.quic_bad_records;
	st.stream_limit = p.quic_stream_limit;
	st.wrong_direction = p.quic_wrong_direction;
	st.idle_closed = p.quic_idle_closed;
	st.refused = p.quic_refused;
	st.queued = p.quic_queued;
	rc__quic_lsn_stats(s->srv->lsn[0]->tp, &own);
	assert_true(own.conns >= st.conns && own.streams >= st.streams); /* (only ever grow) */
	return st;
}

/* A client of RT_PROG 1 at s's URI with query q (after the URI's own "?"): asserts the
 * creation's status want and fills *err. */
static rc_client *qw_client(rt_server *s, const char *q, const rc_tls_client_opts *o,
                            rc_status want, rc_error *err)
{
	char uri[1024];
	rc_client *c = NULL;
	rc_error e;
	rc_status st;

	snprintf(uri, sizeof(uri), "%s%s%s", s->uri[0], q ? "?" : "", q ? q : "");
	st = rc_client_create_tls(&c, uri, RT_PROG, 1, o, &e);
	if (st != want) {
		char buf[512];
		fail_msg("create %s: %s, wanted %s: %s", uri, rc_status_name(st), rc_status_name(want),
		         rc_error_format(&e, buf, sizeof(buf)));
	}
	if (err != NULL)
		*err = e;
	return c;
}


static int qw_setup(void **state)
{
	char cmd[700];
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/rc-quic-test.%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "bash %s/tests/runtime/tls_certs.sh %s", RC_SOURCE_DIR, dir);
	(void)rt_start;
	return system(cmd) == 0 ? 0 : -1;
}

static int qw_teardown(void **state)
{
	char cmd[300];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

#endif

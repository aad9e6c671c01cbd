/*
 * RPCSEC_GSS channel bindings (RFC 9266 "tls-exporter"; draft-cel-nfsv4-rpc-over-quicv1: RPCSEC_GSS
 * over QUIC must use them), inside the throw-away realm of krb5_fixture.sh: one server with a
 * keytab, TLS certificates (tests/runtime/tls_certs.sh) and three listeners -- quic://,
 * tcp:// (RPC-over-TLS by STARTTLS, or plaintext) -- and krb5i/krb5p clients of each.
 *
 * This test links its own copy of runtime/client/auth_gss_cl.c built with RC_TEST_HOOKS: its
 * rc__test_cb_alter makes the client bind an altered exporter value (1) or none at all (2),
 * which the server must refuse over QUIC (both) and over TLS (the altered one: MIT's
 * acceptor lets an initiator that bound nothing through, as RFC 9289 allows), and which
 * changes nothing over plain TCP (nothing is bound there). The archive's auth_gss_cl.o is then
 * never pulled in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "tests/runtime/rt_fixture.h"
#include "tests/runtime/tls_fixture.h"
#include "runtime/auth/auth.h"

extern int rc__test_cb_alter; /* auth_gss_cl.c (RC_TEST_HOOKS) */

enum { L_QUIC, L_TCP };

static rt_server srv;

/* The server: RT_PROG 1 and 2 under the realm's nfs@localhost, TLS certificates, listening on
 * quic:// and tcp:// (STARTTLS offered, plaintext served too). */
static int setup(void **state)
{
	char cmd[700], why[256];
	rc_tls_server_opts o = {NULL, NULL, NULL, RC_TLS_CERT_NONE, 0};
	static const char *const uris[] = {"quic://127.0.0.1:0", "tcp://127.0.0.1:0"};

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/rc-gss-cb-test.%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "bash %s/tests/runtime/tls_certs.sh %s", RC_SOURCE_DIR, dir);
	if (system(cmd) != 0)
		return -1;
	o.cert_file = P("server.pem");
	o.key_file = P("server.key");
	if (rc_server_create(&srv.srv) != RC_OK ||
	    rc_server_register(srv.srv, &rt_prog1, &srv.delay_ms) != RC_OK ||
	    rc_server_set_tls(srv.srv, &o, why, sizeof(why)) != RC_OK ||
	    rc_server_set_gss(srv.srv, "nfs@localhost", NULL, why, sizeof(why)) != RC_OK) {
		print_error("server: %s\n", why);
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		if (rc_server_listen(srv.srv, uris[i], srv.uri[i], sizeof(srv.uri[i])) != RC_OK)
			return -1;
		srv.n++;
	}
	rc_server_set_threads(srv.srv, 2);
	return pthread_create(&srv.tid, NULL, rt_run, &srv) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	rt_stop(&srv);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A client of listener l (tls: under TLS, required), its RPCSEC_GSS status with service svc
 * (the detail in e), *out the client (destroyed and NULL unless RC_OK). */
static rc_status gss_client(int l, bool tls, rc_gss_service svc, rc_client **out, rc_error *e)
{
	rc_tls_client_opts o = {RC_TLS_REQUIRED, P("ca.pem"), NULL, NULL, NULL, NULL};
	rc_status st;

	if (tls)
		assert_int_equal(rc_client_create_tls(out, srv.uri[l], RT_PROG, 1, &o, e), RC_OK);
	else
		assert_int_equal(rc_client_create(out, srv.uri[l], RT_PROG, 1), RC_OK);
	assert_int_equal(rc_client_tls(*out), tls);
	memset(e, 0, sizeof(*e));
	st = rc_client_set_auth_gss(*out, "nfs@localhost", svc, e);
	if (st != RC_OK) {
		rc_client_destroy(*out);
		*out = NULL;
	}
	return st;
}

/* ADD and a 64 KiB echo under the context. */
static void calls(rc_client *c)
{
	int64_t v = 7, r = 0;

	assert_int_equal(rc_call(c, 2, (rc_xdrproc)rc_xdr_hyper, &v, (rc_xdrproc)rc_xdr_hyper, &r),
	                 RC_OK);
	tls_echo(c, 64 << 10);
}

/* The connection's exporter value as the client sees it: 32 bytes over TLS and QUIC (must:
 * QUIC only), none over plain TCP. */
static void exporter_is(rc_client *c, bool want, bool want_must)
{
	unsigned char x[32] = {0}, zero[32] = {0};
	bool must = !want_must;

	assert_int_equal(rc__client_exporter(c, x, &must), want);
	if (want) {
		assert_int_equal(must, want_must);
		assert_memory_not_equal(x, zero, sizeof(x));
	}
}

/* A context of service svc over listener l under TLS: made, bound (the exporter seen, must
 * as the protocol says), and used. */
static void bound_works(int l, rc_gss_service svc, bool must)
{
	rc_client *c;
	rc_error e;

	if (gss_client(l, true, svc, &c, &e) != RC_OK)
		fail_msg("set_auth_gss over %s: %s", srv.uri[l], e.detail);
	exporter_is(c, true, must);
	calls(c);
	rc_client_destroy(c);
}

/* Over quic:// a krb5i and a krb5p context are bound to the QUIC connection and work. */
static void quic_bound(void **state)
{
	(void)state;
	bound_works(L_QUIC, RC_GSS_INTEGRITY, true);
	bound_works(L_QUIC, RC_GSS_PRIVACY, true);
}

/* Over tcp:// with STARTTLS (RPC-over-TLS) a krb5i context is bound to the TLS session. */
static void tls_bound(void **state)
{
	(void)state;
	bound_works(L_TCP, RC_GSS_INTEGRITY, false);
}

/* A krb5i context over listener l under TLS is refused: RC_AUTHERROR, the detail naming
 * channel bindings. */
static void refused(int l, const char *what)
{
	rc_client *c;
	rc_error e;

	assert_int_equal(gss_client(l, true, RC_GSS_INTEGRITY, &c, &e), RC_AUTHERROR);
	assert_int_equal(e.status, RC_AUTHERROR);
	print_message("%s (%s): %s\n", what, l == L_QUIC ? "quic" : "tls", e.detail);
	assert_non_null(strstr(e.detail, "channel bindings"));
}

/* A client binding a value the server's side of the connection does not have is refused
 * over QUIC and over TLS. */
static void mismatch_refused(void **state)
{
	(void)state;
	rc__test_cb_alter = 1;
	refused(L_QUIC, "mismatch");
	refused(L_TCP, "mismatch");
	rc__test_cb_alter = 0;
}

/* A client binding nothing: refused over QUIC (the draft's must), served over TLS (RFC 9289
 * recommends the bindings; MIT lets an initiator without them through). */
static void unbound(void **state)
{
	(void)state;
	rc__test_cb_alter = 2;
	refused(L_QUIC, "unbound");
	bound_works(L_TCP, RC_GSS_INTEGRITY, false); /* (served: the exporter is there, unused) */
	rc__test_cb_alter = 0;
}

/* Plain TCP: no TLS, nothing to bind -- an altered exporter changes nothing (none is taken),
 * as with a libtirpc peer (gss_interop). */
static void plain_tcp_unbound(void **state)
{
	rc_client *c;
	rc_error e;

	(void)state;
	rc__test_cb_alter = 1;
	if (gss_client(L_TCP, false, RC_GSS_INTEGRITY, &c, &e) != RC_OK)
		fail_msg("set_auth_gss over plain TCP: %s", e.detail);
	rc__test_cb_alter = 0;
	exporter_is(c, false, false);
	calls(c);
	rc_client_destroy(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quic_bound),       cmocka_unit_test(tls_bound),
		cmocka_unit_test(mismatch_refused), cmocka_unit_test(unbound),
		cmocka_unit_test(plain_tcp_unbound),
	};
	(void)rt_start;
	(void)tls_who, (void)tls_multi_echo;
	return cmocka_run_group_tests(tests, setup, teardown);
}

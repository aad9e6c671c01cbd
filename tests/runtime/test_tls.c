/*
 * RPC-over-TLS (RFC 9289), remotecall to remotecall over loopback: blocking, started, pipelined
 * and multi-destination calls under TLS (1 MiB echo included), mutual TLS and the identity a
 * procedure sees, the policy table (off / opportunistic / required against servers with and
 * without TLS, TLS-required programs), each failure with its own reason (wrong CA, wrong
 * name, expired certificate, client certificate missing), reconnection, and hostile peers on
 * the raw socket (garbage instead of a ClientHello, a probe then silence, a flood of
 * handshakes beyond the cap), and a slow handshake that idle_ms does not cut short. The certificates are made at start by tls_certs.sh (openssl).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "tests/runtime/rt_fixture.h"
#include "tests/runtime/tls_fixture.h"
#include "transports/tls.h"

#define TW_PROG 0x20000098u /* a second program: WHOTLS, and the TLS-required one */

static const rc_procinfo tw_null_i = {TW_PROG, 1, 0, "NULL", (rc_xdrproc)rc_xdr_void, 0,
                                      (rc_xdrproc)rc_xdr_void, 0};
static const rc_procinfo tw_who_i = {TW_PROG, 1, 1, "WHOTLS", (rc_xdrproc)rc_xdr_void, 0,
                                     (rc_xdrproc)xdr_rt_str, sizeof(char *)};
static const rc_svc_proc tw_procs[] = {{&tw_null_i, rt_null}, {&tw_who_i, tls_who}};
static const rc_svc_prog tw_prog = {TW_PROG, 1, 2, tw_procs};

typedef struct tw_conf {
	const char *cert, *key, *client_ca; /* cert NULL: no TLS */
	rc_tls_clientcert clientcert;
	unsigned threads, max_handshakes;
	uint32_t stall_ms, idle_ms;
	bool require_rt; /* RT_PROG version 1 requires TLS */
} tw_conf;

/* Start the fixture's server (RT_PROG 1, 2 and TW_PROG 1) on tcp://127.0.0.1:0 with conf. */
static void tw_start(rt_server *s, const tw_conf *conf)
{
	rc_server_limits lim = {0};
	char why[256];

	memset(s, 0, sizeof(*s));
	assert_int_equal(rc_server_create(&s->srv), RC_OK);
	assert_int_equal(rc_server_register(s->srv, &rt_prog1, &s->delay_ms), RC_OK);
	assert_int_equal(rc_server_register(s->srv, &rt_prog2, NULL), RC_OK);
	assert_int_equal(rc_server_register(s->srv, &tw_prog, NULL), RC_OK);
	if (conf->cert != NULL) {
		rc_tls_server_opts o = {conf->cert, conf->key, conf->client_ca, conf->clientcert,
		                        conf->max_handshakes};
		rc_status st = rc_server_set_tls(s->srv, &o, why, sizeof(why));
		if (st != RC_OK)
			fail_msg("rc_server_set_tls: %s: %s", rc_status_name(st), why);
	}
	if (conf->require_rt)
		assert_int_equal(rc_server_set_tls_required(s->srv, RT_PROG, 1, true), RC_OK);
	lim.stall_ms = conf->stall_ms;
	lim.idle_ms = conf->idle_ms;
	assert_int_equal(rc_server_set_limits(s->srv, &lim), RC_OK);
	assert_int_equal(rc_server_listen(s->srv, "tcp://127.0.0.1:0", s->uri[0], sizeof(s->uri[0])),
	                 RC_OK);
	s->n = 1;
	rc_server_set_threads(s->srv, conf->threads);
	assert_int_equal(pthread_create(&s->tid, NULL, rt_run, s), 0);
}

/* A client of (prog, 1) at s with these TLS options; asserts the creation's status st (the
 * client is returned only on RC_OK) and fills *err. */
static rc_client *tw_client(rt_server *s, uint32_t prog, const rc_tls_client_opts *o,
                            rc_status want, rc_error *err)
{
	rc_client *c = NULL;
	rc_error e;
	rc_status st = rc_client_create_tls(&c, s->uri[0], prog, 1, o, &e);

	if (st != want) {
		char buf[512];
		fail_msg("create: %s, wanted %s: %s", rc_status_name(st), rc_status_name(want),
		         rc_error_format(&e, buf, sizeof(buf)));
	}
	if (err != NULL)
		*err = e;
	return c;
}

/* WHOTLS on c: the server's view of the call, freed by the caller. */
static char *tw_who_call(rc_client *c)
{
	char *who = NULL;
	assert_int_equal(rc_call(c, 1, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)xdr_rt_str, &who),
	                 RC_OK);
	return who;
}


/* The server configurations (made in setup: the paths depend on the directory). */
static tw_conf C_TLS, C_PLAIN, C_MTLS, C_MTLS_OPT, C_REQ, C_MT;

/* Make the certificates (tls_certs.sh) and the server configurations. */
static int setup(void **state)
{
	char cmd[700];
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/rc-tls-test.%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "bash %s/tests/runtime/tls_certs.sh %s", RC_SOURCE_DIR, dir);
	if (system(cmd) != 0)
		return -1;
	(void)rt_start; /* the fixture's plain start: tw_start replaces it here */
	C_TLS = (tw_conf){.cert = strdup(P("server.pem")), .key = strdup(P("server.key"))};
	C_PLAIN = (tw_conf){0};
	C_MTLS = C_TLS;
	C_MTLS.client_ca = strdup(P("ca.pem"));
	C_MTLS.clientcert = RC_TLS_CERT_REQUIRED;
	C_MTLS_OPT = C_MTLS;
	C_MTLS_OPT.clientcert = RC_TLS_CERT_OPTIONAL;
	C_REQ = C_TLS;
	C_REQ.require_rt = true;
	C_MT = C_TLS;
	C_MT.threads = 4;
	return 0;
}

/* Remove the certificates. */
static int teardown(void **state)
{
	char cmd[300];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Required TLS, blocking calls: NULL, ADD, echoes up to 1 MiB; the procedure sees TLS. */
static void tls_blocking(void **state)
{
	rt_server s;
	rc_tls_client_opts o = {RC_TLS_REQUIRED, P("ca.pem"), NULL, NULL, NULL, NULL};
	rc_client *c, *w;
	int64_t v = 5, r = 0;
	char *who;
	(void)state;
	tw_start(&s, &C_TLS);
	c = tw_client(&s, RT_PROG, &o, RC_OK, NULL);
	assert_true(rc_client_tls(c));
	assert_int_equal(rc_call(c, 0, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void, NULL),
	                 RC_OK);
	assert_int_equal(rc_call(c, 2, (rc_xdrproc)rc_xdr_hyper, &v, (rc_xdrproc)rc_xdr_hyper, &r),
	                 RC_OK);
	tls_echo(c, 0);
	tls_echo(c, 4096);
	tls_echo(c, 64 << 10);
	tls_echo(c, 1 << 20);
	tls_echo(c, 3 << 20); /* larger than any TLS record or socket buffer */
	w = tw_client(&s, TW_PROG, &o, RC_OK, NULL);
	who = tw_who_call(w);
	assert_string_equal(who, "tls"); /* under TLS, no client certificate */
	free(who);
	rc_client_destroy(w);
	rc_client_destroy(c);
	rt_stop(&s);
}

/* The same through the URI's query, against a server with worker threads: started calls
 * (pipelined, driven by rc_async_wait and by the application's poll loop) and a 1 MiB echo. */
static void tls_async_uri(void **state)
{
	rt_server s;
	char uri[700];
	rc_client *c;
	rc_async *h[64];
	int64_t args[64], res[64];
	(void)state;
	tw_start(&s, &C_MT);
	snprintf(uri, sizeof(uri), "%s?tls=required&ca=%s&name=localhost", s.uri[0], P("ca.pem"));
	assert_int_equal(rc_client_create(&c, uri, RT_PROG, 1), RC_OK);
	assert_true(rc_client_tls(c));
	for (int i = 0; i < 64; i++) {
		args[i] = 0;
		assert_int_equal(rc_call_start(c, 2, (rc_xdrproc)rc_xdr_hyper, &args[i],
		                               (rc_xdrproc)rc_xdr_hyper, &res[i], NULL, NULL, &h[i]),
		                 RC_OK);
	}
	for (int i = 0; i < 32; i++) {
		assert_int_equal(rc_async_wait(h[i], 10000), RC_OK);
		rc_async_release(h[i]);
	}
	/* the rest through the application's own loop */
	rt_poll_loop(c, 10000);
	for (int i = 32; i < 64; i++) {
		assert_int_equal(rc_async_status(h[i]), RC_OK);
		rc_async_release(h[i]);
	}
	tls_echo(c, 1 << 20);
	rc_client_destroy(c);
	rt_stop(&s);
}

/* Big started calls under TLS to a client that reads late, on a one-thread server and one
 * with workers: the client's arguments and the server's replies go out non-blocking, their
 * records gathered, and the sockets fill (the client's has a small send buffer) -- the
 * records a socket did not take wait in the TLS layer (counted in the output queue) and
 * leave when it drains. Every echo comes back whole. */
static void tls_big_calls_to_a_late_reader(void **state)
{
	enum { N = 3, SZ = 1 << 20 }; /* (under the 4 MiB of output past which a start waits) */
	const tw_conf *confs[] = {&C_TLS, &C_MT};
	rc_tls_client_opts o = {RC_TLS_REQUIRED, P("ca.pem"), NULL, NULL, NULL, NULL};
	(void)state;
	for (int k = 0; k < 2; k++) {
		rt_server s;
		rc_client *c;
		rc_async *h[N];
		rt_blob in[N], out[N];

		tw_start(&s, confs[k]);
		c = tw_client(&s, RT_PROG, &o, RC_OK, NULL);
		{
			/* a small send buffer: the client's own records outrun the socket too */
			int fd, tmo, sz = 32 << 10;
			short ev;
			assert_int_equal(rc_client_pollinfo(c, &fd, &ev, &tmo), RC_OK);
			assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)), 0);
		}
		for (int i = 0; i < N; i++) {
			in[i].len = SZ;
			in[i].val = malloc(SZ);
			assert_non_null(in[i].val);
			for (size_t j = 0; j < SZ; j++)
				in[i].val[j] = (char)(j * 13 + (size_t)i);
			out[i] = (rt_blob){0, NULL};
			assert_int_equal(rc_call_start(c, 1, (rc_xdrproc)xdr_rt_blob, &in[i],
			                               (rc_xdrproc)xdr_rt_blob, &out[i], NULL, NULL, &h[i]),
			                 RC_OK);
		}
		usleep(200000); /* nothing read meanwhile: the server's sends fill the socket */
		rt_poll_loop(c, 20000);
		for (int i = 0; i < N; i++) {
			assert_int_equal(rc_async_status(h[i]), RC_OK);
			assert_int_equal(out[i].len, SZ);
			assert_memory_equal(out[i].val, in[i].val, SZ);
			rc_async_release(h[i]);
			rc_xdr_free((rc_xdrproc)xdr_rt_blob, &out[i]);
			free(in[i].val);
		}
		tls_echo(c, 1 << 20); /* and a blocking one after */
		rc_client_destroy(c);
		rt_stop(&s);
	}
}

/* A multi-destination call to three TLS clients of one server. */
static void tls_multi(void **state)
{
	rt_server s;
	rc_tls_client_opts o = {RC_TLS_REQUIRED, P("ca.pem"), NULL, NULL, NULL, NULL};
	rc_client *c[3];
	(void)state;
	tw_start(&s, &C_TLS);
	for (int i = 0; i < 3; i++)
		c[i] = tw_client(&s, RT_PROG, &o, RC_OK, NULL);
	tls_multi_echo(c);
	for (int i = 0; i < 3; i++)
		rc_client_destroy(c[i]);
	rt_stop(&s);
}

/* Mutual TLS: the procedure sees the client certificate's subject and SANs; a client
 * without a certificate fails with the server's alert as its reason; one whose certificate
 * another CA signed fails too. Optional client certificates: both kinds of client pass. */
static void tls_mutual(void **state)
{
	rt_server s;
	rc_tls_client_opts o = {RC_TLS_REQUIRED, P("ca.pem"), NULL, P("client.pem"),
	                        P("client.key"), NULL};
	rc_client *c;
	rc_error e;
	char *who, buf[512];
	(void)state;
	tw_start(&s, &C_MTLS);
	c = tw_client(&s, TW_PROG, &o, RC_OK, NULL);
	who = tw_who_call(c);
	assert_string_equal(who, "tls CN=alice,O=remotecall tests DNS:alice.example "
	                         "email:alice@example.org");
	free(who);
	rc_client_destroy(c);

	/* no certificate: TLS 1.3 lets the client finish its handshake; the server's alert then
	 * fails the first call */
	o.cert_file = o.key_file = NULL;
	c = tw_client(&s, TW_PROG, &o, RC_OK, NULL);
	assert_int_equal(rc_call(c, 0, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void, NULL),
	                 RC_TLSFAILED);
	rc_client_geterr(c, &e);
	assert_int_equal(e.status, RC_TLSFAILED);
	assert_non_null(strstr(e.detail, "certificate required"));
	assert_non_null(strstr(rc_error_format(&e, buf, sizeof(buf)), "certificate required"));
	rc_client_destroy(c);

	o.cert_file = P("other-client.pem");
	o.key_file = P("other-client.key");
	c = tw_client(&s, TW_PROG, &o, RC_OK, NULL);
	assert_int_equal(rc_call(c, 0, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void, NULL),
	                 RC_TLSFAILED);
	rc_client_geterr(c, &e);
	assert_non_null(strstr(e.detail, "unknown ca"));
	rc_client_destroy(c);
	rt_stop(&s);

	tw_start(&s, &C_MTLS_OPT);
	o.cert_file = o.key_file = NULL;
	c = tw_client(&s, TW_PROG, &o, RC_OK, NULL);
	who = tw_who_call(c);
	assert_string_equal(who, "tls");
	free(who);
	rc_client_destroy(c);
	o.cert_file = P("client.pem");
	o.key_file = P("client.key");
	c = tw_client(&s, TW_PROG, &o, RC_OK, NULL);
	who = tw_who_call(c);
	assert_non_null(strstr(who, "CN=alice"));
	free(who);
	rc_client_destroy(c);
	rt_stop(&s);
}

/* Each certificate failure, with its own reason: wrong CA, wrong name, expired. */
static void tls_failures(void **state)
{
	rt_server s;
	tw_conf exp = C_TLS;
	rc_tls_client_opts o = {RC_TLS_REQUIRED, P("other-ca.pem"), NULL, NULL, NULL, NULL};
	rc_error e;
	char buf[512];
	(void)state;
	tw_start(&s, &C_TLS);
	tw_client(&s, RT_PROG, &o, RC_TLSFAILED, &e);
	assert_non_null(strstr(e.detail, "unable to get local issuer certificate"));
	assert_non_null(strstr(rc_error_format(&e, buf, sizeof(buf)), "local issuer"));
	o.ca_file = P("ca.pem");
	o.verify_name = "other.example";
	tw_client(&s, RT_PROG, &o, RC_TLSFAILED, &e);
	assert_non_null(strstr(e.detail, "hostname mismatch"));
	{ /* the reason alone, no errno words ("Protocol error") before it */
		char want[512];
		snprintf(want, sizeof(want), "TLS handshake or certificate check failed (%s)",
		         e.detail);
		assert_string_equal(rc_error_format(&e, buf, sizeof(buf)), want);
	}
	o.verify_name = "127.0.0.2";
	tw_client(&s, RT_PROG, &o, RC_TLSFAILED, &e);
	assert_non_null(strstr(e.detail, "IP address mismatch"));
	o.verify_name = "localhost"; /* the certificate's DNS name: passes */
	rc_client_destroy(tw_client(&s, RT_PROG, &o, RC_OK, &e));
	rt_stop(&s);

	exp.cert = P("expired.pem");
	exp.key = P("expired.key");
	tw_start(&s, &exp);
	o.verify_name = NULL;
	tw_client(&s, RT_PROG, &o, RC_TLSFAILED, &e);
	assert_non_null(strstr(e.detail, "certificate has expired"));
	/* opportunistic does not fall back when the server offered TLS and failed the check */
	o.policy = RC_TLS_OPPORTUNISTIC;
	tw_client(&s, RT_PROG, &o, RC_TLSFAILED, &e);
	rt_stop(&s);

	/* set-up errors name the file and what is wrong with it: a missing CA file, a key given
	 * as the certificate, a certificate given as the key, a key that is not the
	 * certificate's */
	o.ca_file = P("nonexistent.pem");
	o.policy = RC_TLS_REQUIRED;
	tw_start(&s, &C_TLS);
	tw_client(&s, RT_PROG, &o, RC_INVAL, &e);
	{
		char want[512];
		snprintf(want, sizeof(want), "invalid argument (TLS CA file %s: No such file or "
		         "directory)", P("nonexistent.pem"));
		assert_string_equal(rc_error_format(&e, buf, sizeof(buf)), want);
	}
	rt_stop(&s);
	{
		rc_server *srv;
		rc_tls_server_opts so = {P("server.key"), P("server.key"), NULL, RC_TLS_CERT_NONE,
		                         0};
		char why[256], want[512];
		assert_int_equal(rc_server_create(&srv), RC_OK);
		assert_int_equal(rc_server_set_tls(srv, &so, why, sizeof(why)), RC_INVAL);
		snprintf(want, sizeof(want), "TLS certificate %s: holds no certificate but a private "
		         "key (a key given as the certificate?)", P("server.key"));
		assert_string_equal(why, want);
		so.cert_file = P("server.pem");
		so.key_file = P("server.pem");
		assert_int_equal(rc_server_set_tls(srv, &so, why, sizeof(why)), RC_INVAL);
		snprintf(want, sizeof(want), "TLS key %s: holds no private key but a certificate (a "
		         "certificate given as the key?)", P("server.pem"));
		assert_string_equal(why, want);
		so.key_file = P("client.key");
		assert_int_equal(rc_server_set_tls(srv, &so, why, sizeof(why)), RC_INVAL);
		snprintf(want, sizeof(want), "TLS key %s does not match the certificate %s",
		         P("client.key"), P("server.pem"));
		assert_string_equal(why, want);
		so.key_file = P("server.key");
		so.clientcert = RC_TLS_CERT_REQUIRED; /* without a client CA */
		assert_int_equal(rc_server_set_tls(srv, &so, why, sizeof(why)), RC_INVAL);
		rc_server_destroy(srv);
	}
}

/* What a refused started call's callback sees: rc_client_geterr's text, rc_async_geterr's. */
static char *tp_seen[2];
static void tp_refused_cb(rc_async *h, rc_status st, void *udata)
{
	rc_error e;
	char buf[200];
	assert_int_equal(st, RC_AUTHERROR);
	rc_client_geterr(udata, &e); /* (udata: the client) */
	tp_seen[0] = strdup(rc_error_format(&e, buf, sizeof buf));
	rc_async_geterr(h, &e);
	tp_seen[1] = strdup(rc_error_format(&e, buf, sizeof buf));
}

/* The policy table against remotecall servers with and without TLS, and a TLS-required
 * program: opportunistic falls back; required fails with RC_TLSUNAVAIL having sent nothing
 * but the probe; plaintext calls to the required program get AUTH_TOOWEAK; UDP stays
 * plaintext. */
static void tls_policy(void **state)
{
	rt_server s;
	rc_tls_client_opts o = {RC_TLS_OPPORTUNISTIC, P("ca.pem"), NULL, NULL, NULL, NULL};
	rc_client *c;
	rc_error e;
	char *who, uri[600];
	int before;
	(void)state;
	tw_start(&s, &C_PLAIN);
	c = tw_client(&s, TW_PROG, &o, RC_OK, NULL);
	assert_false(rc_client_tls(c));
	who = tw_who_call(c);
	assert_string_equal(who, "plain");
	free(who);
	rc_client_destroy(c);
	before = __atomic_load_n(&rt_null_calls, __ATOMIC_SEQ_CST);
	o.policy = RC_TLS_REQUIRED;
	tw_client(&s, RT_PROG, &o, RC_TLSUNAVAIL, &e);
	assert_non_null(strstr(e.detail, "without STARTTLS"));
	assert_int_equal(__atomic_load_n(&rt_null_calls, __ATOMIC_SEQ_CST), before); /* the probe
		is answered by the server itself, never by the NULL routine */
	/* off: no probe at all */
	o.policy = RC_TLS_OFF;
	rc_client_destroy(tw_client(&s, RT_PROG, &o, RC_OK, NULL));
	rt_stop(&s);

	tw_start(&s, &C_REQ);
	assert_int_equal(rc_client_create(&c, s.uri[0], RT_PROG, 1), RC_OK);
	assert_int_equal(rc_call(c, 0, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void, NULL),
	                 RC_AUTHERROR);
	rc_client_geterr(c, &e);
	assert_int_equal(e.auth_stat, 5); /* AUTH_TOOWEAK */
	{
		char buf[200];
		rc_async *h;
		static const char *const weak = "authentication error (AUTH_TOOWEAK: rejected for "
		                                "security reasons)";
		assert_string_equal(rc_error_format(&e, buf, sizeof buf), weak);
		/* a started call's refusal says the same, in its callback (rc_client_geterr and
		 * rc_async_geterr) and through a handle */
		tp_seen[0] = tp_seen[1] = NULL;
		assert_int_equal(rc_call_start(c, 0, NULL, NULL, NULL, NULL, tp_refused_cb, c, &h),
		                 RC_OK);
		assert_int_equal(rc_async_wait(h, 5000), RC_AUTHERROR);
		assert_non_null(tp_seen[0]);
		assert_string_equal(tp_seen[0], weak);
		assert_string_equal(tp_seen[1], weak);
		free(tp_seen[0]);
		free(tp_seen[1]);
		assert_int_equal(rc_call_start(c, 0, NULL, NULL, NULL, NULL, NULL, NULL, &h),
		                 RC_OK);
		rc_async_geterr(h, &e); /* (RC_INPROGRESS or, done already, the refusal) */
		assert_true(e.status == RC_INPROGRESS || e.status == RC_AUTHERROR);
		assert_int_equal(rc_async_wait(h, 5000), RC_AUTHERROR);
		rc_async_geterr(h, &e);
		assert_string_equal(rc_error_format(&e, buf, sizeof buf), weak);
		rc_async_release(h);
	}
	rc_client_destroy(c);
	/* the program's other version and other programs are not required */
	assert_int_equal(rc_client_create(&c, s.uri[0], RT_PROG, 2), RC_OK);
	assert_int_equal(rc_call(c, 0, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void, NULL),
	                 RC_OK);
	rc_client_destroy(c);
	o.policy = RC_TLS_OPPORTUNISTIC;
	c = tw_client(&s, RT_PROG, &o, RC_OK, NULL);
	assert_true(rc_client_tls(c));
	assert_int_equal(rc_call(c, 0, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void, NULL),
	                 RC_OK);
	rc_client_destroy(c);
	rt_stop(&s);

	/* UDP: opportunistic is plaintext, required is refused; bad queries are refused */
	snprintf(uri, sizeof(uri), "udp://127.0.0.1:9?tls=opportunistic");
	assert_int_equal(rc_client_create(&c, uri, RT_PROG, 1), RC_OK);
	assert_false(rc_client_tls(c));
	rc_client_destroy(c);
	assert_int_equal(rc_client_create(&c, "udp://127.0.0.1:9?tls=required", RT_PROG, 1),
	                 RC_NOTSUPP);
	assert_int_equal(rc_client_create(&c, "tcp://127.0.0.1:9?tls=maybe", RT_PROG, 1),
	                 RC_UNKNOWNADDR);
	assert_int_equal(rc_client_create(&c, "tcp://127.0.0.1:9?colour=blue", RT_PROG, 1),
	                 RC_UNKNOWNADDR);
}

/* A connection the server closed (idle) is reopened with probe and handshake again. */
static void tls_reconnect(void **state)
{
	rt_server s;
	tw_conf conf = C_TLS;
	rc_tls_client_opts o = {RC_TLS_REQUIRED, P("ca.pem"), NULL, NULL, NULL, NULL};
	rc_client *c;
	char *who;
	(void)state;
	/* a reconnection's handshake under valgrind can take over 100 ms (no longer cut short by
	 * idle_ms: tls_slow_handshake) */
	conf.idle_ms = 100;
	tw_start(&s, &conf);
	c = tw_client(&s, TW_PROG, &o, RC_OK, NULL);
	for (int i = 0; i < 3; i++) {
		who = tw_who_call(c);
		assert_string_equal(who, "tls");
		free(who);
		usleep(1200 * 1000); /* past idle_ms and the sweeper's period */
	}
	assert_true(rc_client_tls(c));
	rc_client_destroy(c);
	rt_stop(&s);
}

/* A raw TCP connection to s. */
static int tw_raw(rt_server *s)
{
	struct sockaddr_in a = {0};
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;
	const char *colon = strrchr(s->uri[0], ':');
	assert_true(fd >= 0);
	port = atoi(colon + 1);
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Send a probe on fd and read its reply; returns the reply's length (into r). */
static size_t tw_probe(int fd, unsigned char *r, size_t cap)
{
	static const unsigned char probe[44] = {
		0x80, 0, 0, 40, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0x20, 0, 0, 0x99, 0, 0, 0, 1,
		0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	size_t got = 0;
	assert_int_equal(send(fd, probe, sizeof(probe), 0), (ssize_t)sizeof(probe));
	while (got < 4 || got < 4 + (size_t)((r[2] << 8) | r[3])) {
		struct pollfd pf = {fd, POLLIN, 0};
		ssize_t n;
		assert_int_equal(poll(&pf, 1, 5000), 1);
		n = recv(fd, r + got, cap - got, 0);
		assert_true(n > 0);
		got += (size_t)n;
	}
	return got;
}

/* Whether the server has closed fd within ms. */
static bool tw_closed_within(int fd, int ms)
{
	char b[512];
	struct pollfd pf = {fd, POLLIN, 0};
	while (poll(&pf, 1, ms) == 1) {
		ssize_t n = recv(fd, b, sizeof(b), 0);
		if (n <= 0)
			return true;
	}
	return false;
}

/* The process's resident set in KiB (/proc/self/status), or 0. */
static long tw_rss_kib(void)
{
	char line[128];
	long kib = 0;
	FILE *f = fopen("/proc/self/status", "r");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	if (f != NULL)
		fclose(f);
	return kib;
}

/* Whether freed memory is held back from reuse here (ASan's quarantine, TSan, valgrind's
 * freelist), so that RSS says nothing about leaks: their own leak checks cover them then. */
static bool tw_rss_skewed(void)
{
	const char *pre = getenv("LD_PRELOAD");
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
	return true;
#endif
#endif
	return pre != NULL && strstr(pre, "vgpreload") != NULL;
}

/* Hostile peers: garbage instead of a ClientHello, a probe then silence (reaped after
 * stall_ms), a flood of probes beyond the handshake cap, bytes sent after the probe before
 * its reply -- the server stays up and serves a TLS client throughout. */
static void tls_hostile(void **state)
{
	rt_server s;
	tw_conf conf = C_TLS;
	rc_tls_client_opts o = {RC_TLS_REQUIRED, P("ca.pem"), NULL, NULL, NULL, NULL};
	unsigned char r[256];
	int fds[12], fd;
	rc_client *c;
	(void)state;
	conf.stall_ms = 300;
	conf.max_handshakes = 4;
	tw_start(&s, &conf);

	/* the probe's reply: xid, REPLY, ACCEPTED, AUTH_NONE, 8, "STARTTLS", SUCCESS */
	fd = tw_raw(&s);
	assert_int_equal(tw_probe(fd, r, sizeof(r)), 4 + 32);
	assert_memory_equal(r + 20, "\0\0\0\x08STARTTLS\0\0\0\0", 16);
	/* garbage instead of a ClientHello: the handshake fails, the connection is closed */
	assert_int_equal(send(fd, "GET / HTTP/1.0\r\n\r\n", 18, 0), 18);
	assert_true(tw_closed_within(fd, 2000));
	close(fd);

	/* 300 more of them, one after another: memory stays flat (each failed handshake frees
	 * its TLS state; the first 20 warm the allocator up) */
	{
		long before = 0;
		for (int i = 0; i < 320; i++) {
			if (i == 20)
				before = tw_rss_kib();
			fd = tw_raw(&s);
			tw_probe(fd, r, sizeof(r));
			assert_int_equal(send(fd, "\x16\x03\x01\x00\x05hello", 10, 0), 10);
			assert_true(tw_closed_within(fd, 2000));
			close(fd);
		}
		print_message("RSS before %ld KiB, after 300 failed handshakes %ld KiB\n", before,
		              tw_rss_kib());
		if (!tw_rss_skewed())
			assert_true(tw_rss_kib() - before < 2048);
	}

	/* a probe then silence: reaped after stall_ms */
	fd = tw_raw(&s);
	tw_probe(fd, r, sizeof(r));
	assert_true(tw_closed_within(fd, 3000));
	close(fd);

	/* a flood: 12 probes held in their handshakes; beyond the cap of 4 the connection is
	 * closed after the reply, and a real client still gets through once they are reaped */
	{
		int closed = 0;
		for (int i = 0; i < 12; i++) {
			fds[i] = tw_raw(&s);
			tw_probe(fds[i], r, sizeof(r));
		}
		for (int i = 0; i < 12; i++)
			closed += tw_closed_within(fds[i], 50);
		assert_true(closed >= 8); /* the ones over the cap, at once */
		for (int i = 0; i < 12; i++)
			close(fds[i]);
	}
	usleep(1200 * 1000); /* the held ones reaped (stall_ms) */
	c = tw_client(&s, RT_PROG, &o, RC_OK, NULL);
	tls_echo(c, 1 << 16);

	/* bytes after the probe, before its reply: closed (the client did not wait) */
	fd = tw_raw(&s);
	{
		unsigned char two[88];
		static const unsigned char probe[44] = {
			0x80, 0, 0, 40, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0x20, 0, 0, 0x99, 0, 0, 0, 1,
			0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
		memcpy(two, probe, 44);
		memcpy(two + 44, probe, 44);
		assert_int_equal(send(fd, two, sizeof(two), 0), (ssize_t)sizeof(two));
		assert_true(tw_closed_within(fd, 2000));
	}
	close(fd);
	/* a probe with a procedure other than NULL: AUTH_ERROR / AUTH_BADCRED, no TLS */
	fd = tw_raw(&s);
	{
		static const unsigned char bad[44] = {
			0x80, 0, 0, 40, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 0x20, 0, 0, 0x99, 0, 0, 0, 1,
			0, 0, 0, 1, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
		size_t got = 0;
		assert_int_equal(send(fd, bad, sizeof(bad), 0), (ssize_t)sizeof(bad));
		while (got < 24) {
			ssize_t n = recv(fd, r + got, sizeof(r) - got, 0);
			assert_true(n > 0);
			got += (size_t)n;
		}
		assert_memory_equal(r + 8, "\0\0\0\x01\0\0\0\x01\0\0\0\x01\0\0\0\x01", 16);
	}
	close(fd);
	tls_echo(c, 1 << 16); /* still served */
	rc_client_destroy(c);
	rt_stop(&s);
}

/* Send what ssl's write BIO holds on fd, in pieces of at most piece bytes gap_ms apart (0:
 * all at once). */
static void tw_mem_out(SSL *ssl, int fd, size_t piece, int gap_ms)
{
	char b[16384];
	int n;
	while ((n = BIO_read(SSL_get_wbio(ssl), b, sizeof(b))) > 0) {
		for (int off = 0; off < n;) {
			size_t k = piece && (size_t)(n - off) > piece ? piece : (size_t)(n - off);
			if (off > 0 && gap_ms > 0)
				usleep((useconds_t)gap_ms * 1000);
			assert_int_equal(send(fd, b + off, k, MSG_NOSIGNAL), (ssize_t)k);
			off += (int)k;
		}
	}
}

/* Feed ssl's read BIO from fd (waiting up to 5 s); false if the server closed fd. */
static bool tw_mem_in(SSL *ssl, int fd)
{
	char b[16384];
	struct pollfd pf = {fd, POLLIN, 0};
	ssize_t n;
	assert_int_equal(poll(&pf, 1, 5000), 1);
	n = recv(fd, b, sizeof(b), 0);
	if (n <= 0)
		return false;
	assert_int_equal(BIO_write(SSL_get_rbio(ssl), b, (int)n), (int)n);
	return true;
}

/* A client context for the raw TLS clients below: TLS 1.3 with these suites, ALPN sunrpc, the
 * test CA. */
static SSL_CTX *tw_raw_ctx(const char *suites)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	assert_non_null(ctx);
	assert_int_equal(SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION), 1);
	assert_int_equal(SSL_CTX_set_ciphersuites(ctx, suites), 1);
	assert_int_equal(SSL_CTX_set_alpn_protos(ctx, (const unsigned char *)"\x06sunrpc", 7), 0);
	assert_int_equal(SSL_CTX_load_verify_locations(ctx, P("ca.pem"), NULL), 1);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	return ctx;
}

/* Probe and handshake on a new raw connection to s (*fd) over memory BIOs; slow: wait 400 ms
 * after the probe and send the ClientHello in two pieces 400 ms apart. */
static SSL *tw_raw_tls(rt_server *s, SSL_CTX *ctx, bool slow, int *fd)
{
	unsigned char r[256];
	SSL *ssl = SSL_new(ctx);
	int ret;

	*fd = tw_raw(s);
	assert_int_equal(tw_probe(*fd, r, sizeof(r)), 4 + 32);
	assert_non_null(ssl);
	SSL_set_bio(ssl, BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
	assert_int_equal(SSL_set1_host(ssl, "localhost"), 1);
	SSL_set_connect_state(ssl);
	if (slow)
		usleep(400 * 1000); /* past idle_ms and a sweep (250 ms) before the ClientHello */
	ret = SSL_do_handshake(ssl);
	assert_int_equal(SSL_get_error(ssl, ret), SSL_ERROR_WANT_READ);
	tw_mem_out(ssl, *fd, slow ? 40 : 0, slow ? 400 : 0); /* the ClientHello */
	while ((ret = SSL_do_handshake(ssl)) != 1) {
		assert_int_equal(SSL_get_error(ssl, ret), SSL_ERROR_WANT_READ);
		tw_mem_out(ssl, *fd, 0, 0);
		if (!tw_mem_in(ssl, *fd))
			fail_msg("the server closed the connection during the handshake");
	}
	tw_mem_out(ssl, *fd, 0, 0); /* the client's Finished */
	return ssl;
}

/* A NULL call of TW_PROG 1 (xid) on ssl over fd; flip: the record's byte at that offset from
 * its end is flipped on the way (0: none). Whether its reply came (checked) -- false when
 * the server closed the connection instead. */
static bool tw_raw_null(SSL *ssl, int fd, uint32_t xid, int flip)
{
	unsigned char call[44] = {
		0x80, 0, 0, 40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0x20, 0, 0, 0x98, 0, 0, 0, 1,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	unsigned char reply[64], want[16] = {0x80, 0, 0, 0x18, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0};
	size_t got = 0;
	int ret;

	call[7] = want[7] = (unsigned char)xid;
	assert_int_equal(SSL_write(ssl, call, sizeof(call)), (int)sizeof(call));
	if (flip > 0) {
		char b[4096];
		int n = BIO_read(SSL_get_wbio(ssl), b, sizeof(b));
		assert_true(n > flip);
		b[n - flip] ^= 0x10;
		assert_int_equal(send(fd, b, (size_t)n, MSG_NOSIGNAL), n);
	}
	tw_mem_out(ssl, fd, 0, 0);
	while (got < 28) { /* mark, xid, REPLY, ACCEPTED, AUTH_NONE 0, SUCCESS */
		ret = SSL_read(ssl, reply + got, (int)(sizeof(reply) - got));
		if (ret > 0) {
			got += (size_t)ret;
			continue;
		}
		if (flip > 0 && SSL_get_error(ssl, ret) == SSL_ERROR_SSL)
			return false; /* (an alert: the error queue holds it for tw_alert_got) */
		if (SSL_get_error(ssl, ret) != SSL_ERROR_WANT_READ)
			fail_msg("call %u: SSL_read: %s", (unsigned)xid,
			         ERR_reason_error_string(ERR_peek_last_error()));
		tw_mem_out(ssl, fd, 0, 0);
		if (!tw_mem_in(ssl, fd))
			return false;
	}
	assert_int_equal(got, 28);
	assert_memory_equal(reply, want, 16);
	assert_memory_equal(reply + 24, "\0\0\0\0", 4);
	return true;
}

/* The server sent the fatal alert desc (RFC 8446 section 6) on ssl's connection fd -- a record
 * OpenSSL opens with the server's key, so a protected one -- and closed it; the alert may be
 * in ssl's error queue already (tw_raw_null). Fails if the server closed without an alert, or
 * sent a close_notify. */
static void tw_alert_got(SSL *ssl, int fd, int desc)
{
	unsigned long e;
	char b[64];
	int ret;

	while ((e = ERR_peek_error()) == 0) {
		ret = SSL_read(ssl, b, sizeof(b));
		assert_true(ret <= 0);
		if (SSL_get_error(ssl, ret) == SSL_ERROR_ZERO_RETURN)
			fail_msg("a close_notify, not alert %d", desc);
		if (SSL_get_error(ssl, ret) != SSL_ERROR_WANT_READ)
			continue;
		if (!tw_mem_in(ssl, fd))
			fail_msg("the server closed the connection without alert %d", desc);
	}
	assert_int_equal(ERR_GET_REASON(e), SSL_AD_REASON_OFFSET + desc);
	ERR_clear_error();
	assert_true(tw_closed_within(fd, 3000));
}

/*
 * A slow handshake is not an idle connection (nginx: ssl_handshake_timeout apart from the
 * keep-alive timeout): against a server whose idle_ms is 50, a raw client sends its probe,
 * waits 400 ms, then sends its ClientHello in two pieces 400 ms apart, finishes the handshake
 * and calls NULL over TLS. The server still closes a connection that sends nothing (idle_ms),
 * one that stays idle after its handshake (idle_ms from the handshake's end), and a probe
 * then silence (stall_ms from the handshake's start). One thread and worker threads.
 */
static void tls_slow_handshake(void **state)
{
	const tw_conf *confs[2] = {&C_TLS, &C_MT};
	(void)state;
	for (int k = 0; k < 2; k++) {
		rt_server s;
		tw_conf conf = *confs[k];
		unsigned char r[256];
		SSL_CTX *ctx = tw_raw_ctx("TLS_AES_128_GCM_SHA256");
		SSL *ssl;
		int fd;

		conf.idle_ms = 50;
		conf.stall_ms = 3000;
		tw_start(&s, &conf);

		/* connects and sends nothing: closed as idle */
		fd = tw_raw(&s);
		assert_true(tw_closed_within(fd, 3000));
		close(fd);

		/* the slow handshake, then a call */
		ssl = tw_raw_tls(&s, ctx, true, &fd);
		assert_true(tw_raw_null(ssl, fd, 9, 0));
		/* then idle: closed after idle_ms */
		assert_true(tw_closed_within(fd, 3000));
		SSL_free(ssl);
		close(fd);

		/* a probe then silence: not cut short by idle_ms, reaped after stall_ms */
		fd = tw_raw(&s);
		tw_probe(fd, r, sizeof(r));
		assert_false(tw_closed_within(fd, 1000));
		assert_true(tw_closed_within(fd, 8000));
		close(fd);

		SSL_CTX_free(ctx);
		rt_stop(&s);
	}
}

/*
 * The server's record layer (tls.c runs TLS 1.3 records itself after the handshake) against
 * OpenSSL's client, for each suite: calls; a KeyUpdate that asks for the server's (the server
 * answers under its new key), one that does not; then a record with one bit flipped (in the
 * ciphertext, then in the tag): the server closes the connection without a reply. One thread
 * and worker threads.
 */
static void tls_record_layer(void **state)
{
	static const char *suites[3] = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
	                                "TLS_CHACHA20_POLY1305_SHA256"};
	const tw_conf *confs[2] = {&C_TLS, &C_MT};
	(void)state;
	for (int k = 0; k < 2; k++) {
		rt_server s;
		tw_start(&s, confs[k]);
		for (int i = 0; i < 3; i++) {
			SSL_CTX *ctx = tw_raw_ctx(suites[i]);
			int fd;
			SSL *ssl = tw_raw_tls(&s, ctx, false, &fd);

			assert_string_equal(SSL_CIPHER_get_name(SSL_get_current_cipher(ssl)), suites[i]);
			for (uint32_t x = 1; x <= 3; x++)
				assert_true(tw_raw_null(ssl, fd, x, 0));
			assert_int_equal(SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED), 1);
			assert_true(tw_raw_null(ssl, fd, 4, 0));
			assert_true(tw_raw_null(ssl, fd, 5, 0));
			assert_int_equal(SSL_key_update(ssl, SSL_KEY_UPDATE_NOT_REQUESTED), 1);
			assert_true(tw_raw_null(ssl, fd, 6, 0));
			/* a flipped bit: 20 bytes from the end is the ciphertext, 5 the tag */
			assert_false(tw_raw_null(ssl, fd, 7, i == 1 ? 5 : 20));
			tw_alert_got(ssl, fd, SSL_AD_BAD_RECORD_MAC);
			SSL_free(ssl);
			close(fd);
			SSL_CTX_free(ctx);
		}
		rt_stop(&s);
	}
}

/*
 * Records the server's record layer must refuse after the handshake, each on a connection of
 * its own after a call: a flipped bit (bad_record_mac), a header longer than any record
 * (record_overflow), an alert in the clear -- a close_notify, then a fatal one -- (after the
 * handshake every record is protected: unexpected_message), a record of another outer type
 * (unexpected_message). Each time the server answers with that fatal alert, protected (OpenSSL
 * opens it), and closes. A protected close_notify is a clean end: the server closes without an
 * alert. One thread and worker threads.
 */
static void tls_record_alerts(void **state)
{
	static const struct {
		unsigned char rec[7];
		size_t len;
		int alert;
	} bad[] = {
		{{21, 3, 3, 0, 2, 1, 0}, 7, SSL_AD_UNEXPECTED_MESSAGE},  /* plaintext close_notify */
		{{21, 3, 3, 0, 2, 2, 40}, 7, SSL_AD_UNEXPECTED_MESSAGE}, /* plaintext fatal alert */
		{{22, 3, 3, 0, 2, 1, 0}, 7, SSL_AD_UNEXPECTED_MESSAGE},  /* plaintext handshake */
		{{23, 3, 3, 0x48, 0x01}, 5, SSL_AD_RECORD_OVERFLOW},     /* 18,433 bytes */
		{{23, 3, 3, 0, 2, 1, 0}, 7, SSL_AD_BAD_RECORD_MAC},      /* shorter than a tag */
	};
	const tw_conf *confs[2] = {&C_TLS, &C_MT};
	(void)state;
	for (int k = 0; k < 2; k++) {
		rt_server s;
		SSL_CTX *ctx = tw_raw_ctx("TLS_AES_128_GCM_SHA256");
		tw_start(&s, confs[k]);
		for (size_t i = 0; i <= sizeof(bad) / sizeof(bad[0]); i++) {
			int fd;
			SSL *ssl = tw_raw_tls(&s, ctx, false, &fd);
			assert_true(tw_raw_null(ssl, fd, 1, 0));
			if (i < sizeof(bad) / sizeof(bad[0])) {
				assert_int_equal(send(fd, bad[i].rec, bad[i].len, MSG_NOSIGNAL),
				                 (ssize_t)bad[i].len);
				tw_alert_got(ssl, fd, bad[i].alert);
			} else { /* a protected close_notify: closed, no alert */
				char b[64];
				assert_int_equal(SSL_shutdown(ssl), 0);
				tw_mem_out(ssl, fd, 0, 0);
				while (tw_mem_in(ssl, fd))
					;
				assert_true(SSL_read(ssl, b, sizeof(b)) <= 0);
				assert_int_equal(ERR_peek_error(), 0);
			}
			SSL_free(ssl);
			close(fd);
		}
		SSL_CTX_free(ctx);
		rt_stop(&s);
	}
}

/*
 * A raw TLS server for the client's record layer (one connection): answers the AUTH_TLS
 * probe, does the handshake with OpenSSL on the socket, reads the client's first call, then
 * sends `bad` (len bytes, raw, after the handshake) instead of a reply and reads what comes
 * back: the first record's outer type and length (got[0], got[1]; -1 none).
 */
typedef struct tw_rawsrv {
	int lfd;
	char uri[64];
	const unsigned char *bad;
	size_t len;
	int got[2];
	pthread_t th;
} tw_rawsrv;

static int tw_alpn_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                      const unsigned char *in, unsigned inlen, void *arg)
{
	(void)ssl;
	(void)arg;
	return SSL_select_next_proto((unsigned char **)out, outlen, (const unsigned char *)"\x06sunrpc",
	                             7, in, inlen) == OPENSSL_NPN_NEGOTIATED
	           ? SSL_TLSEXT_ERR_OK
	           : SSL_TLSEXT_ERR_ALERT_FATAL;
}

static void *tw_rawsrv_run(void *arg)
{
	tw_rawsrv *rs = arg;
	unsigned char probe[44], reply[36] = {0x80, 0, 0, 32, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
	                                      0, 0, 0, 0, 0, 0, 0, 8, 'S', 'T', 'A', 'R', 'T',
	                                      'T', 'L', 'S', 0, 0, 0, 0};
	unsigned char b[256];
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	SSL *ssl = NULL;
	int fd = accept(rs->lfd, NULL, NULL);
	struct timeval tv = {5, 0};

	rs->got[0] = rs->got[1] = -1;
	if (fd < 0 || ctx == NULL)
		goto out;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
	SSL_CTX_set_num_tickets(ctx, 0);
	SSL_CTX_set_alpn_select_cb(ctx, tw_alpn_cb, NULL);
	if (SSL_CTX_use_certificate_chain_file(ctx, P("server.pem")) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, P("server.key"), SSL_FILETYPE_PEM) != 1)
		goto out;
	if (recv(fd, probe, sizeof(probe), MSG_WAITALL) != (ssize_t)sizeof(probe))
		goto out;
	memcpy(reply + 4, probe + 4, 4); /* the probe's xid */
	if (send(fd, reply, sizeof(reply), MSG_NOSIGNAL) != (ssize_t)sizeof(reply) ||
	    (ssl = SSL_new(ctx)) == NULL || SSL_set_fd(ssl, fd) != 1 || SSL_accept(ssl) != 1 ||
	    SSL_read(ssl, b, sizeof(b)) <= 0) /* the call */
		goto out;
	if (send(fd, rs->bad, rs->len, MSG_NOSIGNAL) != (ssize_t)rs->len)
		goto out;
	if (recv(fd, b, 5, MSG_WAITALL) == 5) {
		rs->got[0] = b[0];
		rs->got[1] = (b[3] << 8) | b[4];
	}
out:
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	if (fd >= 0)
		close(fd);
	return NULL;
}

/*
 * The client's record layer refuses what tls_record_alerts sends the server: against a raw
 * OpenSSL server, a plaintext close_notify after the handshake (instead of the reply) fails
 * the call -- not a clean end of stream -- with "unprotected alert after the handshake", and a
 * record that does not open fails it with "bad record mac"; each time the client sends one
 * protected alert record first (outer type application_data, 2 + 1 + 16 bytes).
 */
static void tls_client_alerts(void **state)
{
	static const unsigned char cn[7] = {21, 3, 3, 0, 2, 1, 0};
	static const unsigned char junk[25] = {23, 3, 3, 0, 20, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
	                                       11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
	const struct {
		const unsigned char *rec;
		size_t len;
		const char *why;
	} cases[2] = {{cn, sizeof(cn), "unprotected alert after the handshake"},
	              {junk, sizeof(junk), "bad record mac"}};
	(void)state;
	for (int i = 0; i < 2; i++) {
		tw_rawsrv rs = {.bad = cases[i].rec, .len = cases[i].len};
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		socklen_t al = sizeof(a);
		rc_tls_client_opts o = {RC_TLS_REQUIRED, P("ca.pem"), "localhost", NULL, NULL, NULL};
		rc_client *c = NULL;
		rc_error e;

		rs.lfd = socket(AF_INET, SOCK_STREAM, 0);
		assert_int_equal(bind(rs.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
		assert_int_equal(listen(rs.lfd, 4), 0);
		assert_int_equal(getsockname(rs.lfd, (struct sockaddr *)&a, &al), 0);
		snprintf(rs.uri, sizeof(rs.uri), "tcp://127.0.0.1:%u", (unsigned)ntohs(a.sin_port));
		assert_int_equal(pthread_create(&rs.th, NULL, tw_rawsrv_run, &rs), 0);
		assert_int_equal(rc_client_create_tls(&c, rs.uri, RT_PROG, 1, &o, &e), RC_OK);
		assert_int_not_equal(rc_call(c, 0, (rc_xdrproc)rc_xdr_void, NULL,
		                             (rc_xdrproc)rc_xdr_void, NULL),
		                     RC_OK);
		rc_client_geterr(c, &e);
		if (strstr(e.detail, cases[i].why) == NULL)
			fail_msg("case %d: %s: %s, wanted %s", i, rc_status_name(e.status), e.detail,
			         cases[i].why);
		rc_client_destroy(c);
		assert_int_equal(pthread_join(rs.th, NULL), 0);
		close(rs.lfd);
		assert_int_equal(rs.got[0], 23);
		assert_int_equal(rs.got[1], 2 + 1 + 16);
	}
}

/*
 * The key usage limit (RFC 8446 section 5.5), lowered to 2 records a key: our client against
 * our server (calls, echoes of many records, both sides sending KeyUpdates all along), then
 * OpenSSL's client, which must follow the server's KeyUpdates to read its replies.
 */
static void tls_key_limit(void **state)
{
	rt_server s;
	rc_tls_client_opts o = {RC_TLS_REQUIRED, P("ca.pem"), NULL, NULL, NULL, NULL};
	rc_client *c;
	SSL_CTX *ctx;
	SSL *ssl;
	int fd;
	(void)state;
	rc__tls_set_key_records(2);
	tw_start(&s, &C_MT);
	c = tw_client(&s, RT_PROG, &o, RC_OK, NULL);
	for (int i = 0; i < 5; i++)
		assert_int_equal(rc_call(c, 0, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void,
		                         NULL),
		                 RC_OK);
	tls_echo(c, 64 << 10);
	tls_echo(c, 1 << 20);
	rc_client_destroy(c);
	ctx = tw_raw_ctx("TLS_AES_128_GCM_SHA256");
	ssl = tw_raw_tls(&s, ctx, false, &fd);
	for (uint32_t x = 1; x <= 6; x++)
		assert_true(tw_raw_null(ssl, fd, x, 0));
	SSL_free(ssl);
	close(fd);
	SSL_CTX_free(ctx);
	rt_stop(&s);
	rc__tls_set_key_records(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tls_blocking), cmocka_unit_test(tls_async_uri),
		cmocka_unit_test(tls_big_calls_to_a_late_reader),
		cmocka_unit_test(tls_multi),    cmocka_unit_test(tls_mutual),
		cmocka_unit_test(tls_failures), cmocka_unit_test(tls_policy),
		cmocka_unit_test(tls_reconnect), cmocka_unit_test(tls_hostile),
		cmocka_unit_test(tls_slow_handshake), cmocka_unit_test(tls_record_layer),
		cmocka_unit_test(tls_key_limit), cmocka_unit_test(tls_record_alerts),
		cmocka_unit_test(tls_client_alerts),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

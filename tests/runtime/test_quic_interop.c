/*
 * RPC-over-QUIC against another implementation: tests/interop/quic_peer.py, a peer written
 * from draft-cel-nfsv4-rpc-over-quicv1 on Python's aioquic, both ways over loopback.
 *
 *   peer client -> remotecall server  calls on client-created streams (pipelined, fragmented,
 *                                     a big one beside small ones, one with FIN), ALPN; and
 *                                     the peer's violations: a bad record and a short one
 *                                     (closed with RPC_PROTOCOL_VIOLATION), a reply the wrong
 *                                     way (dropped), too many streams (STREAM_LIMIT_ERROR),
 *                                     each counted by the listener
 *   remotecall client -> peer server  blocking, pipelined and 1 MiB calls; a call the peer
 *                                     answers after calling the client back on a stream it
 *                                     created (rc_client_serve), having first sent a call the
 *                                     wrong way; the client's close is RPC_NO_ERROR
 *
 * Each peer run is bounded (the peer's own limits, and a poll deadline here) and the peer is
 * killed and reaped whatever happens.
 */
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "tests/runtime/rt_fixture.h"
#include "tests/runtime/tls_fixture.h"
#include "tests/runtime/quic_fixture.h"

/* ---- the peer process --------------------------------------------------------------------- */

typedef struct qpeer {
	pid_t pid;
	int fd;          /* its stdout and stderr */
	char out[65536]; /* what it printed so far */
	size_t len;
} qpeer;

static qpeer *live; /* killed by qp_end (and by the group teardown, should a case fail) */

/* Start quic_peer.py with args (NULL-ended). */
static void qp_start(qpeer *p, const char *const *args)
{
	int fds[2];
	const char *argv[12] = {"python3", NULL};
	char script[512];
	int n = 1;

	snprintf(script, sizeof(script), "%s/tests/interop/quic_peer.py", RC_SOURCE_DIR);
	argv[n++] = script;
	for (; *args != NULL && n < 11; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	memset(p, 0, sizeof(*p));
	assert_int_equal(pipe(fds), 0);
	p->pid = fork();
	assert_true(p->pid >= 0);
	if (p->pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		execvp("python3", (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	p->fd = fds[0];
	live = p;
}

/* Read what the peer prints for up to ms (less once it closes its output): whether it closed. */
static bool qp_read(qpeer *p, int ms)
{
	struct pollfd pf = {p->fd, POLLIN, 0};
	ssize_t n;

	if (p->fd < 0)
		return true;
	if (poll(&pf, 1, ms) <= 0)
		return false;
	n = read(p->fd, p->out + p->len, sizeof(p->out) - 1 - p->len);
	if (n <= 0) {
		close(p->fd);
		p->fd = -1;
		return true;
	}
	p->len += (size_t)n;
	p->out[p->len] = '\0';
	return false;
}

/* Wait up to ms for a line starting with what; the rest of the line in rest (may be NULL). */
static bool qp_line(qpeer *p, const char *what, char *rest, size_t n, int ms)
{
	for (int waited = 0; waited <= ms; waited += 50) {
		for (const char *l = p->out; l != NULL && *l != '\0';) {
			const char *nl = strchr(l, '\n');
			if (nl != NULL && strncmp(l, what, strlen(what)) == 0) {
				if (rest != NULL)
					snprintf(rest, n, "%.*s", (int)(nl - l - strlen(what)), l + strlen(what));
				return true;
			}
			l = nl ? nl + 1 : NULL;
		}
		if (qp_read(p, 50) && waited > 0)
			ms = waited; /* closed: one more look, then give up */
	}
	return false;
}

/* End the peer (SIGTERM unless it already exited) and reap it: its exit status. */
static int qp_end(qpeer *p, bool term)
{
	int ws = 0;

	if (p->pid <= 0)
		return -1;
	if (term)
		kill(p->pid, SIGTERM);
	for (int i = 0; i < 400 && p->fd >= 0; i++) /* up to 40 s of output */
		(void)qp_read(p, 100);
	if (p->fd >= 0) {
		kill(p->pid, SIGKILL);
		close(p->fd);
		p->fd = -1;
	}
	waitpid(p->pid, &ws, 0);
	p->pid = 0;
	live = NULL;
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static int teardown(void **state)
{
	if (live != NULL)
		(void)qp_end(live, true);
	return qw_teardown(state);
}

/* Run the peer as a client of s for one case; it must exit 0. */
static void qp_client_case(rt_server *s, const char *which)
{
	qpeer p;
	char port[16];
	const char *args[] = {"client", "127.0.0.1", port, P("ca.pem"), which, NULL};
	int st;

	snprintf(port, sizeof(port), "%s", strrchr(s->uri[0], ':') + 1);
	qp_start(&p, args);
	st = qp_end(&p, false);
	printf("-- quic_peer.py client %s:\n%s", which, p.out);
	if (st != 0)
		fail_msg("quic_peer.py client %s exited %d", which, st);
}

/* Wait (up to 3 s) until the listener has no connection open. */
static void qw_wait_closed(rt_server *s)
{
	for (int i = 0; i < 60 && qw_stats(s).open_conns > 0; i++)
		usleep(50000);
	assert_int_equal(qw_stats(s).open_conns, 0);
}

/* ---- the peer as client ------------------------------------------------------------------- */

static const qw_conf C_MT = {false, 4, NULL};

/* Calls as the draft says, answered on their streams; the peer's close ends the connection. */
static void peer_client_calls(void **state)
{
	rt_server s;
	rc__quic_stats st;
	(void)state;
	qw_start(&s, &C_MT);
	qp_client_case(&s, "calls");
	qw_wait_closed(&s);
	st = qw_stats(&s);
	assert_int_equal(st.conns, 1);
	assert_int_equal(st.streams, 4);
	assert_int_equal(st.bad_records + st.wrong_direction + st.stream_limit, 0);
	qp_client_case(&s, "alpn"); /* refused in the handshake */
	assert_int_equal(qw_stats(&s).conns, 1);
	assert_true(qw_stats(&s).handshake_fails >= 1);
	rt_stop(&s);
}

/* The peer breaks the draft's rules: each is closed (or dropped) and counted; the listener
 * serves the next connection. */
static void peer_client_violations(void **state)
{
	rt_server s;
	rc__quic_stats st;
	(void)state;
	qw_start(&s, &C_MT);
	qp_client_case(&s, "bad-record");
	qw_wait_closed(&s);
	assert_int_equal(qw_stats(&s).bad_records, 1);
	qp_client_case(&s, "short");
	qw_wait_closed(&s);
	assert_int_equal(qw_stats(&s).bad_records, 2);
	qp_client_case(&s, "wrong-way");
	qw_wait_closed(&s);
	assert_int_equal(qw_stats(&s).wrong_direction, 1);
	qp_client_case(&s, "streams");
	qw_wait_closed(&s);
	st = qw_stats(&s);
	assert_int_equal(st.stream_limit, 1);
	assert_int_equal(st.bad_records, 2);
	assert_int_equal(st.wrong_direction, 1);
	assert_int_equal(st.conns, 4);
	rt_stop(&s);
}

/* ---- the peer as server ------------------------------------------------------------------- */

#define CB_PROG 0x40000b01u

static bool cb_add1(void *a, void *r, rc_svc_req *q)
{
	atomic_int *served = rc_svc_req_context(q);
	atomic_fetch_add(served, 1);
	*(uint32_t *)r = *(uint32_t *)a + 1;
	return true;
}

static const rc_procinfo cb_add1_i = {CB_PROG, 1, 1, "CB_ADD1", (rc_xdrproc)rc_xdr_u_int, 4,
                                      (rc_xdrproc)rc_xdr_u_int, 4};
static const rc_svc_proc cb_procs[] = {{&cb_add1_i, cb_add1}};
static const rc_svc_prog cb_prog = {CB_PROG, 1, 1, cb_procs};

/* A remotecall client of the peer: blocking, 1 MiB and pipelined calls; a call back served;
 * the peer saw no broken rule and the client's RPC_NO_ERROR close. */
static void peer_server(void **state)
{
	qpeer p;
	const char *args[] = {"server", P("server.pem"), P("server.key"), NULL};
	char uri[512], rest[256];
	rc_tls_client_opts o = {RC_TLS_REQUIRED, NULL, NULL, NULL, NULL, NULL};
	rc_client *c;
	rc_async *h[64];
	int64_t in[64], out[64];
	uint32_t n = 41, r = 0;
	atomic_int served = 0;
	(void)state;
	qp_start(&p, args);
	if (!qp_line(&p, "listening ", uri, sizeof(uri), 10000)) {
		qp_end(&p, true);
		fail_msg("quic_peer.py server did not start:\n%s", p.out);
	}
	o.ca_file = P("ca.pem");
	assert_int_equal(rc_client_create_tls(&c, uri, RT_PROG, 1, &o, NULL), RC_OK);
	rc_client_set_timeout(c, 10000);
	assert_int_equal(rc_call(c, 0, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void, NULL),
	                 RC_OK);
	tls_echo(c, 1000);
	tls_echo(c, 1 << 20);
	for (int i = 0; i < 64; i++) {
		in[i] = i * 3;
		assert_int_equal(rc_call_start(c, 2, (rc_xdrproc)rc_xdr_hyper, &in[i],
		                               (rc_xdrproc)rc_xdr_hyper, &out[i], NULL, NULL, &h[i]),
		                 RC_OK);
	}
	for (int i = 0; i < 64; i++) {
		assert_int_equal(rc_async_wait(h[i], 10000), RC_OK);
		assert_int_equal(out[i], i * 3); /* (the peer's ADD gives its argument back) */
		rc_async_release(h[i]);
	}
	assert_int_equal(rc_client_serve(c, &cb_prog, &served), RC_OK);
	assert_int_equal(rc_call(c, 9, (rc_xdrproc)rc_xdr_u_int, &n, (rc_xdrproc)rc_xdr_u_int, &r),
	                 RC_OK);
	assert_int_equal(r, 42);
	assert_int_equal(atomic_load(&served), 1); /* the call the wrong way was not served */
	rc_client_destroy(c);
	assert_true(qp_line(&p, "closed by the client: ", rest, sizeof(rest), 5000));
	assert_string_equal(rest, "application 0x0");
	assert_true(qp_line(&p, "called back on stream ", NULL, 0, 0));
	qp_end(&p, true);
	printf("-- quic_peer.py server:\n%s", p.out);
	assert_null(strstr(p.out, "FAIL"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(peer_client_calls),
		cmocka_unit_test(peer_client_violations),
		cmocka_unit_test(peer_server),
	};
	(void)qw_client; /* (the fixtures' other helpers) */
	(void)tls_multi_echo;
	return cmocka_run_group_tests(tests, qw_setup, teardown);
}

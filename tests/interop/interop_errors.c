/*
 * interop_errors -- error paths between real processes over loopback: a remotecall client
 * against rc-bench-server and tirpc-bench-server (started here, fork/exec, killed at the end
 * even when a case fails).
 *
 *   unknown program / version (with the server's range) / procedure, garbage arguments,
 *   a dead server (stopped: the call times out within its deadline; killed: an error within
 *   the deadline), a TCP server restarted between calls (the client reconnects).
 *
 * The programs are found in $RC_BENCH_BIN (set by ctest).
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <remotecall/remotecall.h>

#include "bench.h"

#define MAX_CHILDREN 16

typedef struct child {
	pid_t pid;
	char udp[256]; /* its listening URIs ("" if none) */
	char tcp[256];
} child;

static pid_t g_children[MAX_CHILDREN];

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void track(pid_t pid)
{
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (g_children[i] == 0) {
			g_children[i] = pid;
			return;
		}
}

static void untrack(pid_t pid)
{
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (g_children[i] == pid)
			g_children[i] = 0;
}

/* Stop a child: SIGCONT (it may be stopped), SIGTERM, up to 3 s, then SIGKILL. Returns its
 * wait status. */
static int stop_child(pid_t pid)
{
	int status = 0;
	if (pid <= 0)
		return 0;
	kill(pid, SIGCONT);
	kill(pid, SIGTERM);
	for (int i = 0; i < 300; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid || (r < 0 && errno == ECHILD)) {
			untrack(pid);
			return status;
		}
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	untrack(pid);
	return status;
}

static void kill_all(void)
{
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (g_children[i] > 0) {
			kill(g_children[i], SIGCONT);
			kill(g_children[i], SIGKILL);
			waitpid(g_children[i], NULL, 0);
			g_children[i] = 0;
		}
}

/*
 * Start $RC_BENCH_BIN/prog with one --listen per URI given (NULL-terminated; an argument
 * starting with "--" is passed as it is) and wait up to 5 s for its "listening" lines. Returns false if it did not come up.
 */
static bool spawn(child *c, const char *prog, ...)
{
	const char *bin = getenv("RC_BENCH_BIN");
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", bin ? bin : ".", prog);
	char *argv[2 + 2 * 8 + 1];
	int argc = 0, nlisten = 0;
	argv[argc++] = path;
	va_list ap;
	va_start(ap, prog);
	const char *uri;
	while ((uri = va_arg(ap, const char *)) != NULL && nlisten < 8) {
		if (strncmp(uri, "--", 2) == 0) { /* an option, e.g. "--threads=4" */
			argv[argc++] = (char *)uri;
			continue;
		}
		argv[argc++] = "--listen";
		argv[argc++] = (char *)uri;
		nlisten++;
	}
	va_end(ap);
	argv[argc] = NULL;

	memset(c, 0, sizeof *c);
	int pfd[2];
	if (pipe(pfd) < 0)
		return false;
	pid_t pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execv(path, argv);
		_exit(127);
	}
	close(pfd[1]);
	track(pid);
	c->pid = pid;

	char buf[2048];
	size_t used = 0;
	int seen = 0;
	uint64_t deadline = now_ms() + 5000;
	while (seen < nlisten) {
		int left = (int)(deadline - now_ms());
		if (left <= 0)
			break;
		struct pollfd p = {.fd = pfd[0], .events = POLLIN};
		if (poll(&p, 1, left) <= 0)
			continue;
		ssize_t n = read(pfd[0], buf + used, sizeof buf - 1 - used);
		if (n <= 0)
			break;
		used += (size_t)n;
		buf[used] = '\0';
		seen = 0;
		for (char *l = buf; (l = strstr(l, "listening ")) != NULL; l++) {
			char u[256];
			if (sscanf(l, "listening %255s", u) == 1 && strchr(l, '\n')) {
				seen++;
				if (strncmp(u, "udp:", 4) == 0)
					snprintf(c->udp, sizeof c->udp, "%s", u);
				else if (strncmp(u, "tcp:", 4) == 0)
					snprintf(c->tcp, sizeof c->tcp, "%s", u);
			}
		}
	}
	close(pfd[0]);
	if (seen < nlisten) {
		fprintf(stderr, "%s did not come up (%d of %d listening lines)\n", path, seen,
		        nlisten);
		stop_child(pid);
		c->pid = 0;
		return false;
	}
	return true;
}

/* ---- shared servers --------------------------------------------------------------------- */

static child g_rc, g_ti;

static int setup_servers(void **state)
{
	(void)state;
	if (!spawn(&g_rc, "rc-bench-server", "udp://127.0.0.1:0", "tcp://127.0.0.1:0", NULL))
		return -1;
	if (!spawn(&g_ti, "tirpc-bench-server", "udp://127.0.0.1:0", "tcp://127.0.0.1:0", NULL))
		return -1;
	return 0;
}

static int teardown_servers(void **state)
{
	(void)state;
	int st1 = stop_child(g_rc.pid), st2 = stop_child(g_ti.pid);
	g_rc.pid = g_ti.pid = 0;
	/* both must exit 0 on SIGTERM */
	if (!WIFEXITED(st1) || WEXITSTATUS(st1) != 0) {
		fprintf(stderr, "rc-bench-server did not exit 0 on SIGTERM (status 0x%x)\n", st1);
		return -1;
	}
	if (!WIFEXITED(st2) || WEXITSTATUS(st2) != 0) {
		fprintf(stderr, "tirpc-bench-server did not exit 0 on SIGTERM (status 0x%x)\n", st2);
		return -1;
	}
	return 0;
}

/* The four (server, transport) URIs. */
static const char *uri_of(int i)
{
	switch (i) {
	case 0: return g_rc.udp;
	case 1: return g_rc.tcp;
	case 2: return g_ti.udp;
	default: return g_ti.tcp;
	}
}

static rc_status call_void(const char *uri, uint32_t prog, uint32_t vers, uint32_t proc,
                           rc_error *err)
{
	rc_client *c = NULL;
	rc_status st = rc_client_create(&c, uri, prog, vers);
	if (st != RC_OK) {
		memset(err, 0, sizeof *err);
		err->status = st;
		return st;
	}
	rc_client_set_timeout(c, 5000);
	st = rc_call(c, proc, rc_xdr_void, NULL, rc_xdr_void, NULL);
	rc_client_geterr(c, err);
	char buf[256];
	print_message("    %s prog %#x vers %u proc %u: %s (%s)\n", uri, prog, vers, proc,
	              rc_status_name(st), rc_error_format(err, buf, sizeof buf));
	rc_client_destroy(c);
	return st;
}

static void test_null_ok(void **state)
{
	(void)state;
	rc_error e;
	for (int i = 0; i < 4; i++)
		assert_int_equal(call_void(uri_of(i), BENCH_PROG, BENCH_VERS, 0, &e), RC_OK);
}

static void test_unknown_program(void **state)
{
	(void)state;
	rc_error e;
	for (int i = 0; i < 4; i++) {
		assert_int_equal(call_void(uri_of(i), BENCH_PROG + 1, 1, 0, &e), RC_PROGUNAVAIL);
		assert_int_equal(e.status, RC_PROGUNAVAIL);
	}
}

static void test_unknown_version(void **state)
{
	(void)state;
	rc_error e;
	for (int i = 0; i < 4; i++) {
		assert_int_equal(call_void(uri_of(i), BENCH_PROG, 7, 0, &e), RC_PROGVERSMISMATCH);
		assert_int_equal(e.status, RC_PROGVERSMISMATCH);
		assert_int_equal(e.low, 1);
		assert_int_equal(e.high, 1);
		char buf[256];
		rc_error_format(&e, buf, sizeof buf);
		assert_non_null(strstr(buf, "1"));
	}
}

static void test_unknown_procedure(void **state)
{
	(void)state;
	rc_error e;
	for (int i = 0; i < 4; i++) {
		assert_int_equal(call_void(uri_of(i), BENCH_PROG, BENCH_VERS, 99, &e),
		                 RC_PROCUNAVAIL);
		assert_int_equal(call_void(uri_of(i), BENCH_PROG, BENCH_VERS, 7, &e),
		                 RC_PROCUNAVAIL);
	}
}

/*
 * ECHO with no argument bytes at all: the server cannot decode a bench_data. (Not asked of
 * libtirpc over UDP: svc_dg decodes from its whole receive buffer, not just the datagram, so
 * it reads a zero length from stale bytes and answers.)
 */
static void test_garbage_args(void **state)
{
	(void)state;
	rc_error e;
	for (int i = 0; i < 4; i++) {
		rc_status st = call_void(uri_of(i), BENCH_PROG, BENCH_VERS, 4, &e);
		if (i != 2)
			assert_int_equal(st, RC_CANTDECODEARGS);
	}
}

/* ADD is not idempotent: every call adds exactly once, also across both transports. */
static void test_add_exactly_once(void **state)
{
	(void)state;
	child s;
	assert_true(spawn(&s, "rc-bench-server", "udp://127.0.0.1:0", "tcp://127.0.0.1:0", NULL));
	rc_client *u = NULL, *t = NULL;
	assert_int_equal(rc_client_create(&u, s.udp, BENCH_PROG, BENCH_VERS), RC_OK);
	assert_int_equal(rc_client_create(&t, s.tcp, BENCH_PROG, BENCH_VERS), RC_OK);
	int64_t expect = 0;
	for (int i = 1; i <= 20; i++) {
		int64_t arg = i, res = -1;
		assert_int_equal(bench_add_1(i % 2 ? u : t, &arg, &res), RC_OK);
		expect += i;
		assert_int_equal(res, expect);
	}
	rc_client_destroy(u);
	rc_client_destroy(t);
	stop_child(s.pid);
}

/*
 * At-most-once over UDP: while the server is stopped the client retransmits ADD (same xid)
 * several times; when it resumes it finds the original and its copies queued. The duplicate
 * request cache must run ADD once and replay the reply for the copies.
 */
static void at_most_once(const char *threads)
{
	child s;
	assert_true(spawn(&s, "rc-bench-server", "udp://127.0.0.1:0", threads, NULL));
	rc_client *c = NULL;
	assert_int_equal(rc_client_create(&c, s.udp, BENCH_PROG, BENCH_VERS), RC_OK);
	assert_int_equal(rc_client_set_timeout(c, 8000), RC_OK);
	assert_int_equal(rc_client_set_retry(c, 100), RC_OK);
	int64_t arg = 10, res = 0;
	assert_int_equal(bench_add_1(c, &arg, &res), RC_OK);
	assert_int_equal(res, 10);

	/* stop the server now; resume it from a second process 1 s later */
	assert_int_equal(kill(s.pid, SIGSTOP), 0);
	pid_t waker = fork();
	assert_true(waker >= 0);
	if (waker == 0) {
		usleep(1000000);
		kill(s.pid, SIGCONT);
		_exit(0);
	}
	arg = 1;
	uint64_t t0 = now_ms();
	rc_status st = bench_add_1(c, &arg, &res);
	print_message("    ADD across a 1 s stop (retry 100 ms): %s, total %lld after %llu ms\n",
	              rc_status_name(st), (long long)res, (unsigned long long)(now_ms() - t0));
	waitpid(waker, NULL, 0);
	assert_int_equal(st, RC_OK);
	assert_int_equal(res, 11);
	usleep(200000); /* let the server chew through the queued copies */
	arg = 0;
	assert_int_equal(bench_add_1(c, &arg, &res), RC_OK);
	print_message("    total afterwards: %lld (11 if ADD ran once)\n", (long long)res);
	assert_int_equal(res, 11);
	rc_client_destroy(c);
	stop_child(s.pid);
}

static void test_udp_retransmit_at_most_once(void **state)
{
	(void)state;
	at_most_once(NULL);
}

/* The same with worker threads: copies of a call may be picked up while it still runs. */
static void test_udp_retransmit_at_most_once_threads(void **state)
{
	(void)state;
	at_most_once("--threads=4");
}

/* A stopped server never answers: the call times out within its deadline. */
static void test_dead_server_stopped(void **state)
{
	(void)state;
	child s;
	assert_true(spawn(&s, "rc-bench-server", "udp://127.0.0.1:0", "tcp://127.0.0.1:0", NULL));
	const char *uris[2] = {s.udp, s.tcp};
	rc_client *c[2];
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rc_client_create(&c[i], uris[i], BENCH_PROG, BENCH_VERS), RC_OK);
		assert_int_equal(rc_client_set_timeout(c[i], 1000), RC_OK);
		assert_int_equal(rc_client_set_retry(c[i], 200), RC_OK);
		assert_int_equal(bench_null_1(c[i]), RC_OK); /* connected and answering */
	}
	assert_int_equal(kill(s.pid, SIGSTOP), 0);
	for (int i = 0; i < 2; i++) {
		uint64_t t0 = now_ms();
		rc_status st = bench_null_1(c[i]);
		uint64_t dt = now_ms() - t0;
		print_message("    stopped server, %s: %s after %llu ms\n", uris[i],
		              rc_status_name(st), (unsigned long long)dt);
		assert_int_equal(st, RC_TIMEDOUT);
		assert_true(dt >= 900);
		assert_true(dt <= 2500);
	}
	/* the server comes back: the clients work again (late replies are discarded) */
	assert_int_equal(kill(s.pid, SIGCONT), 0);
	for (int i = 0; i < 2; i++) {
		int64_t arg = 1, res = 0;
		assert_int_equal(rc_client_set_timeout(c[i], 5000), RC_OK);
		assert_int_equal(bench_add_1(c[i], &arg, &res), RC_OK);
		assert_true(res >= 1);
	}
	/* killed: an error (not a hang) within the deadline */
	assert_int_equal(kill(s.pid, SIGKILL), 0);
	waitpid(s.pid, NULL, 0);
	untrack(s.pid);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rc_client_set_timeout(c[i], 1000), RC_OK);
		uint64_t t0 = now_ms();
		rc_status st = bench_null_1(c[i]);
		uint64_t dt = now_ms() - t0;
		print_message("    killed server, %s: %s after %llu ms\n", uris[i],
		              rc_status_name(st), (unsigned long long)dt);
		assert_int_not_equal(st, RC_OK);
		assert_true(dt <= 2500);
		rc_client_destroy(c[i]);
	}
	/* and a new client to the dead TCP port fails at once or at its first call */
	rc_client *d = NULL;
	uint64_t t0 = now_ms();
	rc_status st = rc_client_create(&d, uris[1], BENCH_PROG, BENCH_VERS);
	if (st == RC_OK) {
		rc_client_set_timeout(d, 1000);
		st = bench_null_1(d);
		rc_client_destroy(d);
	}
	print_message("    new client to a dead TCP port: %s after %llu ms\n", rc_status_name(st),
	              (unsigned long long)(now_ms() - t0));
	assert_int_not_equal(st, RC_OK);
	assert_true(now_ms() - t0 <= 2500);
}

/* The TCP server restarts on the same port between two calls: the client reconnects. */
static void test_tcp_restart(void **state)
{
	(void)state;
	child s;
	assert_true(spawn(&s, "rc-bench-server", "tcp://127.0.0.1:0", NULL));
	char uri[256];
	snprintf(uri, sizeof uri, "%s", s.tcp);
	rc_client *c = NULL;
	assert_int_equal(rc_client_create(&c, uri, BENCH_PROG, BENCH_VERS), RC_OK);
	assert_int_equal(rc_client_set_timeout(c, 3000), RC_OK);
	int64_t arg = 5, res = 0;
	assert_int_equal(bench_add_1(c, &arg, &res), RC_OK);
	assert_int_equal(res, 5);

	int status = stop_child(s.pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	bool up = false;
	for (int i = 0; i < 20 && !up; i++) { /* the port may linger a moment */
		up = spawn(&s, "rc-bench-server", uri, NULL);
		if (!up)
			usleep(100000);
	}
	assert_true(up);
	assert_string_equal(s.tcp, uri);

	rc_status st = bench_add_1(c, &arg, &res);
	print_message("    first call after the restart: %s\n", rc_status_name(st));
	if (st != RC_OK) {
		/* the old connection's failure may surface once; the next call must reconnect */
		assert_true(st == RC_CANTSEND || st == RC_CANTRECV || st == RC_CLOSED);
		st = bench_add_1(c, &arg, &res);
		print_message("    second call after the restart: %s\n", rc_status_name(st));
	}
	assert_int_equal(st, RC_OK);
	assert_int_equal(res, 5); /* a new server: a new total */
	assert_int_equal(bench_null_1(c), RC_OK);
	rc_client_destroy(c);
	stop_child(s.pid);
}

int main(void)
{
	atexit(kill_all);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest shared[] = {
		cmocka_unit_test(test_null_ok),
		cmocka_unit_test(test_unknown_program),
		cmocka_unit_test(test_unknown_version),
		cmocka_unit_test(test_unknown_procedure),
		cmocka_unit_test(test_garbage_args),
	};
	const struct CMUnitTest own[] = {
		cmocka_unit_test(test_add_exactly_once),
		cmocka_unit_test(test_udp_retransmit_at_most_once),
		cmocka_unit_test(test_udp_retransmit_at_most_once_threads),
		cmocka_unit_test(test_dead_server_stopped),
		cmocka_unit_test(test_tcp_restart),
	};
	int failed = cmocka_run_group_tests_name("interop errors (shared servers)", shared,
	                                         setup_servers, teardown_servers);
	failed += cmocka_run_group_tests_name("interop dead and restarted servers", own, NULL,
	                                      NULL);
	kill_all();
	return failed ? 1 : 0;
}

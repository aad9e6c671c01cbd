/*
 * faults_restart -- rc-bench-server killed, stopped and restarted under running clients.
 *
 *   killed mid-run   a UDP and a TCP client call ECHO in a loop (1 s deadline each) while the
 *                    server is SIGKILLed and, 2 s later, started again on the same ports: no
 *                    call outlives its deadline (plus slack), every call during the outage
 *                    fails with a clear status and text, and both clients succeed again soon
 *                    after the server returns -- the same client handles, nothing recreated;
 *   stopped mid-run  the same with SIGSTOP / SIGCONT: calls time out (RC_TIMEDOUT) within their
 *                    deadline while it is frozen, and the replies it sends late to calls that
 *                    already gave up are dropped (later calls get their own replies);
 *   calls in flight  8 WORK(2 s) calls started on one client, the server killed: every one
 *                    completes with an error long before its 10 s deadline (TCP: the broken
 *                    connection; UDP: the ICMP unreachable answering the next retransmission).
 *
 * rc-bench-server is found in $RC_BENCH_BIN; every child is killed at exit, whatever happens.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
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

#define DEADLINE_MS 1000
#define SLACK_MS 1000 /* generous: loaded CI machines, sanitizers */

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the server process ------------------------------------------------------------------ */

static pid_t g_pid; /* the running server, 0 if none */
static char g_udp[128], g_tcp[128];

static void kill_server(int sig)
{
	if (g_pid <= 0)
		return;
	kill(g_pid, SIGCONT);
	kill(g_pid, sig);
	waitpid(g_pid, NULL, 0);
	g_pid = 0;
}

static void at_exit_kill(void)
{
	kill_server(SIGKILL);
}

/* Start rc-bench-server on udp_uri and tcp_uri (port 0 the first time, then the ports it
 * got) and wait up to 5 s for its two "listening" lines. */
static bool spawn_server(const char *udp_uri, const char *tcp_uri)
{
	const char *bin = getenv("RC_BENCH_BIN");
	char path[1024];
	snprintf(path, sizeof path, "%s/rc-bench-server", bin ? bin : ".");
	char *argv[] = {path, "--listen", (char *)udp_uri, "--listen", (char *)tcp_uri,
	                "--threads", "2", NULL};
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
	g_pid = pid;
	char buf[1024];
	size_t used = 0;
	int64_t deadline = now_ms() + 5000;
	int seen = 0;
	while (seen < 2 && now_ms() < deadline) {
		struct pollfd p = {pfd[0], POLLIN, 0};
		if (poll(&p, 1, 100) <= 0)
			continue;
		ssize_t n = read(pfd[0], buf + used, sizeof buf - 1 - used);
		if (n <= 0)
			break;
		used += (size_t)n;
		buf[used] = '\0';
		seen = 0;
		for (char *l = buf; (l = strstr(l, "listening ")) != NULL; l++) {
			char u[128];
			if (sscanf(l, "listening %127s", u) == 1 && strchr(l, '\n')) {
				seen++;
				snprintf(strncmp(u, "udp:", 4) == 0 ? g_udp : g_tcp, sizeof g_udp, "%s", u);
			}
		}
	}
	close(pfd[0]);
	if (seen < 2) {
		fprintf(stderr, "rc-bench-server did not come up\n");
		kill_server(SIGKILL);
		return false;
	}
	return true;
}

static int setup(void **state)
{
	(void)state;
	return spawn_server("udp://127.0.0.1:0", "tcp://127.0.0.1:0") ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	kill_server(SIGTERM);
	return 0;
}

/* ---- a client calling in a loop ----------------------------------------------------------- */

#define MAXREC 20000
typedef struct rec {
	int64_t start, dur;
	rc_status st;
} rec;

typedef struct looper {
	const char *uri;
	rc_client *c;
	pthread_t tid;
	atomic_int stop;
	rec *recs;
	int n;
	char first_err[200]; /* rc_error_format of the first failure */
	int mismatched;       /* ECHO replies with other bytes than sent */
} looper;

static void *loop_main(void *p)
{
	looper *l = p;
	unsigned char out[100];
	uint32_t k = 0;
	while (!atomic_load(&l->stop) && l->n < MAXREC) {
		k++;
		for (size_t i = 0; i < sizeof out; i++)
			out[i] = (unsigned char)(k * 31 + i);
		bench_data arg = {sizeof out, (char *)out}, res = {0, NULL};
		int64_t t0 = now_ms();
		rc_status st = bench_echo_1(l->c, &arg, &res);
		rec *r = &l->recs[l->n++];
		r->start = t0;
		r->dur = now_ms() - t0;
		r->st = st;
		if (st == RC_OK && (res.bench_data_len != sizeof out ||
		                    memcmp(res.bench_data_val, out, sizeof out) != 0))
			l->mismatched++;
		if (st != RC_OK && !l->first_err[0]) {
			rc_error e;
			rc_client_geterr(l->c, &e);
			rc_error_format(&e, l->first_err, sizeof l->first_err);
		}
		rc_xdr_free((rc_xdrproc)xdr_bench_data, &res);
		usleep(st == RC_OK ? 2000 : 20000);
	}
	return NULL;
}

static void loop_start(looper *l, const char *uri)
{
	memset(l, 0, sizeof *l);
	l->uri = uri;
	l->recs = calloc(MAXREC, sizeof *l->recs);
	assert_non_null(l->recs);
	assert_int_equal(rc_client_create(&l->c, uri, BENCH_PROG, BENCH_VERS), RC_OK);
	rc_client_set_timeout(l->c, DEADLINE_MS);
	rc_client_set_retry(l->c, 100);
	assert_int_equal(pthread_create(&l->tid, NULL, loop_main, l), 0);
}

static void loop_stop(looper *l)
{
	atomic_store(&l->stop, 1);
	pthread_join(l->tid, NULL);
	rc_client_destroy(l->c);
}

/*
 * Check one client's record: nothing past its deadline, all fine before down_at, only clear
 * failures (one of ok[]) between, and success again within recover_ms of up_at, through to the
 * end. Prints one line.
 */
static void check_loop(const char *what, looper *l, int64_t down_at, int64_t up_at,
                       const rc_status *allowed, int nallowed, int64_t recover_ms)
{
	int before = 0, during_ok = 0, during_err = 0, after = 0, after_err = 0;
	int64_t maxdur = 0, first_ok_after = -1;
	int counts[64] = {0};
	for (int i = 0; i < l->n; i++) {
		rec *r = &l->recs[i];
		if (r->dur > maxdur)
			maxdur = r->dur;
		if (r->start + r->dur < down_at) {
			before++;
			if (r->st != RC_OK)
				fail_msg("%s: call before the outage failed: %s", what, rc_strerror(r->st));
		} else if (r->start < up_at) {
			if (r->st == RC_OK) {
				during_ok++;
				continue;
			}
			during_err++;
			bool ok = false;
			for (int k = 0; k < nallowed; k++)
				ok |= r->st == allowed[k];
			if (!ok)
				fail_msg("%s: unexpected status during the outage: %s [%s]", what,
				         rc_strerror(r->st), rc_status_name(r->st));
			if ((int)r->st >= 0 && (int)r->st < 64)
				counts[r->st]++;
		} else {
			after++;
			if (r->st == RC_OK && first_ok_after < 0)
				first_ok_after = r->start + r->dur - up_at;
			if (r->st != RC_OK && r->start > up_at + recover_ms)
				fail_msg("%s: call %lld ms after the restart failed: %s", what,
				         (long long)(r->start - up_at), rc_strerror(r->st));
			after_err += r->st != RC_OK;
		}
	}
	char stats[300] = "";
	size_t off = 0;
	for (int s = 0; s < 64; s++)
		if (counts[s])
			off += (size_t)snprintf(stats + off, sizeof stats - off, " %s x%d",
			                        rc_status_name((rc_status)s), counts[s]);
	printf("# %s: %d ok before; during the outage %d failed (%s ) and %d ok; after: %d calls, "
	       "%d failed, first ok %lld ms after the restart; longest call %lld ms; "
	       "first error text: \"%s\"\n",
	       what, before, during_err, stats, during_ok, after, after_err,
	       (long long)first_ok_after, (long long)maxdur, l->first_err);
	assert_int_equal(l->mismatched, 0);
	assert_true(before > 10);
	assert_true(during_err > 0);
	assert_true(l->first_err[0] != '\0');
	assert_true(after > 10);
	assert_true(first_ok_after >= 0 && first_ok_after <= recover_ms);
	assert_true(maxdur <= DEADLINE_MS + SLACK_MS);
}

/* ---- cases ------------------------------------------------------------------------------ */

static void test_killed_and_restarted(void **state)
{
	(void)state;
	char udp[128], tcp[128];
	snprintf(udp, sizeof udp, "%s", g_udp);
	snprintf(tcp, sizeof tcp, "%s", g_tcp);
	looper lu, lt;
	loop_start(&lu, udp);
	loop_start(&lt, tcp);
	usleep(800000);
	int64_t down = now_ms();
	kill_server(SIGKILL);
	usleep(2000000);
	int64_t up = now_ms();
	assert_true(spawn_server(udp, tcp)); /* the same ports */
	up = (up + now_ms()) / 2;
	usleep(2000000);
	loop_stop(&lu);
	loop_stop(&lt);
	/* UDP: ICMP port unreachable (RC_CANTRECV) or no answer (RC_TIMEDOUT); TCP: the reset
	 * connection (RC_CANTRECV), then refused reconnections (RC_CANTSEND). */
	static const rc_status allowed[] = {RC_TIMEDOUT, RC_CANTRECV, RC_CANTSEND};
	check_loop("UDP, server killed 2 s", &lu, down, up, allowed, 3, 1500);
	check_loop("TCP, server killed 2 s", &lt, down, up, allowed, 3, 1500);
	free(lu.recs);
	free(lt.recs);
}

static void test_stopped_and_continued(void **state)
{
	(void)state;
	looper lu, lt;
	loop_start(&lu, g_udp);
	loop_start(&lt, g_tcp);
	usleep(800000);
	int64_t down = now_ms();
	kill(g_pid, SIGSTOP);
	usleep(2500000);
	int64_t up = now_ms();
	kill(g_pid, SIGCONT);
	usleep(2000000);
	loop_stop(&lu);
	loop_stop(&lt);
	static const rc_status allowed[] = {RC_TIMEDOUT};
	check_loop("UDP, server frozen 2.5 s", &lu, down, up, allowed, 1, 1500);
	check_loop("TCP, server frozen 2.5 s", &lt, down, up, allowed, 1, 1500);
	free(lu.recs);
	free(lt.recs);
}

typedef struct inflight {
	int done;
	rc_status st;
	int64_t at;
} inflight;

static void on_done(rc_async *a, rc_status st, void *udata)
{
	(void)a;
	inflight *f = udata;
	f->done++;
	f->st = st;
	f->at = now_ms();
}

static void calls_in_flight_when_killed(const char *uri, const char *what)
{
	rc_client *c;
	assert_int_equal(rc_client_create(&c, uri, BENCH_PROG, BENCH_VERS), RC_OK);
	rc_client_set_timeout(c, 10000);
	rc_client_set_retry(c, 200);
	assert_int_equal(bench_null_1(c), RC_OK);
	enum { N = 8 };
	inflight f[N];
	uint32_t arg = 2000000, res[N];
	memset(f, 0, sizeof f);
	for (int i = 0; i < N; i++)
		assert_int_equal(bench_work_1_async(c, &arg, &res[i], on_done, &f[i], NULL), RC_OK);
	/* drive the client briefly: the calls are with the server */
	int64_t t_end = now_ms() + 200;
	while (now_ms() < t_end) {
		int fd, t;
		short ev;
		rc_client_pollinfo(c, &fd, &ev, &t);
		struct pollfd p = {fd, ev, 0};
		int n = poll(&p, fd >= 0, 20);
		rc_client_advance(c, n > 0 ? p.revents : 0);
	}
	int64_t killed = now_ms();
	kill_server(SIGKILL);
	int64_t limit = killed + 3000;
	int done = 0;
	while (done < N && now_ms() < limit) {
		int fd, t;
		short ev;
		rc_client_pollinfo(c, &fd, &ev, &t);
		struct pollfd p = {fd, ev, 0};
		int n = poll(&p, fd >= 0, t < 0 || t > 50 ? 50 : t);
		rc_client_advance(c, n > 0 ? p.revents : 0);
		done = 0;
		for (int i = 0; i < N; i++)
			done += f[i].done;
	}
	int64_t last = 0;
	for (int i = 0; i < N; i++) {
		assert_int_equal(f[i].done, 1);
		assert_int_not_equal(f[i].st, RC_OK);
		if (f[i].at - killed > last)
			last = f[i].at - killed;
	}
	printf("# %s: %d calls in flight when the server was killed: all failed (%s) within %lld ms "
	       "(deadline 10 s)\n",
	       what, N, rc_status_name(f[0].st), (long long)last);
	assert_true(last <= 2000);
	rc_client_destroy(c);
}

static void test_inflight_tcp(void **state)
{
	(void)state;
	calls_in_flight_when_killed(g_tcp, "TCP");
}

static void test_inflight_udp(void **state)
{
	(void)state;
	calls_in_flight_when_killed(g_udp, "UDP");
}

/*
 * Restarted between calls, quickly: after a successful call the server is killed and started
 * again on the same ports at once (about a millisecond); the very next call on the same TCP
 * client handle succeeds -- the client notices the closed connection before using it and
 * reconnects. Five times in a row.
 */
static void test_quick_restart_between_calls(void **state)
{
	char udp[128], tcp[128];
	rc_client *c;

	(void)state;
	snprintf(udp, sizeof udp, "%s", g_udp);
	snprintf(tcp, sizeof tcp, "%s", g_tcp);
	assert_int_equal(rc_client_create(&c, tcp, BENCH_PROG, BENCH_VERS), RC_OK);
	rc_client_set_timeout(c, DEADLINE_MS);
	for (int i = 0; i < 5; i++) {
		struct timespec a, b;
		assert_int_equal(bench_null_1(c), RC_OK);
		clock_gettime(CLOCK_MONOTONIC, &a);
		kill_server(SIGKILL);
		assert_true(spawn_server(udp, tcp));
		clock_gettime(CLOCK_MONOTONIC, &b);
		int64_t gap_us = (b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000;
		rc_status st = bench_null_1(c);
		printf("# restart %d: server back %lld us after the last call; next call: %s\n", i + 1,
		       (long long)gap_us, rc_strerror(st));
		/* the client probes a stream unused for 200 us; no server restarts faster */
		assert_true(gap_us >= 200);
		assert_int_equal(st, RC_OK);
	}
	rc_client_destroy(c);
}

/* `faults_restart udp-inflight` runs the UDP calls-in-flight case alone (a regression test:
 * the retransmission burst used to eat the ICMP errors, and the calls waited out their
 * deadline). */
int main(int argc, char **argv)
{
	atexit(at_exit_kill);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_killed_and_restarted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stopped_and_continued, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inflight_tcp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quick_restart_between_calls, setup, teardown),
	};
	const struct CMUnitTest udp_inflight[] = {
		cmocka_unit_test_setup_teardown(test_inflight_udp, setup, teardown),
	};
	if (argc > 1 && strcmp(argv[1], "udp-inflight") == 0)
		return cmocka_run_group_tests_name("udp_inflight_icmp", udp_inflight, NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

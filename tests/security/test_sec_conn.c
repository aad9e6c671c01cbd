/*
 * Attack class 6: connection and descriptor exhaustion (CVE-2018-14621, CVE-2018-14622,
 * CVE-2021-46828).
 *
 * The server runs in a child process (this program re-executed with --serve) with its own
 * RLIMIT_NOFILE and short limits (rc_server_set_limits: idle_ms, stall_ms, max_conns). The
 * attacker, in the parent, holds hundreds of connections, stalls records, or never reads its
 * replies. The server must not spin (its CPU time, read from /proc/PID/stat, stays low), must
 * reap idle and stalled connections, must serve a fresh client within 10 s, and must exit
 * cleanly (status 0, which under LeakSanitizer also means no leak) when told to stop.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sec_util.h"

/* ---- the server process ----------------------------------------------------------------- */

static rc_server *child_srv;

static void on_term(int sig)
{
	(void)sig;
	rc_server_stop(child_srv);
}

/* --serve NOFILE IDLE_MS STALL_MS MAX_CONNS THREADS */
static int serve(char **argv)
{
	struct rlimit rl;
	rc_server_limits lim = {0};
	char uri[256];
	struct sigaction sa;

	rl.rlim_cur = rl.rlim_max = (rlim_t)atol(argv[2]);
	lim.idle_ms = (uint32_t)atol(argv[3]);
	lim.stall_ms = (uint32_t)atol(argv[4]);
	lim.max_conns = (uint32_t)atol(argv[5]);
	if (rc_server_create(&child_srv) != RC_OK || rc_server_set_limits(child_srv, &lim) != RC_OK ||
	    rc_server_register(child_srv, &sec_prog1, NULL) != RC_OK ||
	    rc_server_listen(child_srv, "tcp://127.0.0.1:0", uri, sizeof(uri)) != RC_OK)
		return 3;
	rc_server_set_threads(child_srv, (unsigned)atoi(argv[6]));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	if (rl.rlim_cur > 0 && setrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 4;
	printf("%s\n", uri);
	fflush(stdout);
	if (rc_server_run(child_srv) != RC_OK)
		return 5;
	rc_server_destroy(child_srv);
	return 0;
}

typedef struct child {
	pid_t pid;
	char uri[256];
} child;

static char self[4096]; /* this program (readlink: under valgrind, /proc/self/exe is the tool) */
static pid_t live_child; /* killed by the teardown if a test failed before reaping it */

static int kill_leftover(void **state)
{
	(void)state;
	if (live_child > 0) {
		kill(live_child, SIGKILL);
		waitpid(live_child, NULL, 0);
		live_child = 0;
	}
	return 0;
}

static void spawn(child *c, int nofile, int idle_ms, int stall_ms, int max_conns, int threads)
{
	int p[2];
	char a[5][32];
	FILE *f;

	snprintf(a[0], sizeof(a[0]), "%d", nofile);
	snprintf(a[1], sizeof(a[1]), "%d", idle_ms);
	snprintf(a[2], sizeof(a[2]), "%d", stall_ms);
	snprintf(a[3], sizeof(a[3]), "%d", max_conns);
	snprintf(a[4], sizeof(a[4]), "%d", threads);
	assert_int_equal(pipe(p), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execl(self, "test_sec_conn", "--serve", a[0], a[1], a[2], a[3], a[4], (char *)NULL);
		_exit(127);
	}
	live_child = c->pid;
	close(p[1]);
	f = fdopen(p[0], "r");
	assert_non_null(f);
	assert_non_null(fgets(c->uri, sizeof(c->uri), f));
	fclose(f);
	c->uri[strcspn(c->uri, "\n")] = '\0';
}

/* Stop the server; it must exit 0 within 5 s. */
static void reap(child *c)
{
	int status = 0;
	int64_t until = sec_ms() + 5000;
	pid_t r;

	live_child = 0;
	kill(c->pid, SIGTERM);
	while ((r = waitpid(c->pid, &status, WNOHANG)) == 0 && sec_ms() < until)
		usleep(10000);
	if (r == 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &status, 0);
		fail_msg("the server did not stop within 5 s");
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("the server exited with status 0x%x", status);
}

/* The descriptors pid has open, or with sockets_only its sockets alone (a server under
 * valgrind has the tool's descriptors as well). */
static int open_fds_of(pid_t pid, bool sockets_only)
{
	char path[64], link[96], target[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		ssize_t k;
		if (e->d_name[0] == '.')
			continue;
		if (!sockets_only) {
			n++;
			continue;
		}
		snprintf(link, sizeof(link), "%s/%.16s", path, e->d_name);
		k = readlink(link, target, sizeof(target) - 1);
		n += k > 7 && memcmp(target, "socket:", 7) == 0;
	}
	closedir(d);
	return n;
}

static int open_fds(pid_t pid)
{
	return open_fds_of(pid, false);
}

/* CPU ticks (1/100 s) the server used over ms milliseconds. */
static long cpu_over(pid_t pid, int ms)
{
	long t0 = sec_cpu_ticks(pid);
	usleep((useconds_t)ms * 1000);
	return sec_cpu_ticks(pid) - t0;
}

/* A fresh client's null call succeeds within limit_ms (retrying); returns the time it took. */
static int64_t fresh_client(const char *uri, int64_t limit_ms)
{
	int64_t t0 = sec_ms();
	rc_status st;
	do {
		st = sec_null_call(uri, 1000);
	} while (st != RC_OK && sec_ms() - t0 < limit_ms);
	if (st != RC_OK)
		fail_msg("no fresh client served within %lld ms (last: %s)", (long long)limit_ms,
		         rc_strerror(st));
	return sec_ms() - t0;
}

static void close_all(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* ---- the tests -------------------------------------------------------------------------- */

/*
 * 200 idle connections to a server limited to 64 descriptors: accept fails with EMFILE. The
 * server must not spin on the readable listener (CPU over 2 s stays under 10 %), and once the
 * attacker lets go, a fresh client is served.
 */
static void emfile_does_not_spin(void **state)
{
	for (int threads = 1; threads <= 2; threads++) {
		child c;
		int fds[200];
		long ticks;
		(void)state;
		spawn(&c, 64, 60000, 60000, 0, threads);
		for (int i = 0; i < 200; i++)
			assert_true((fds[i] = sec_tcp(c.uri)) >= 0);
		usleep(300000);
		/* the server is out of descriptors: accept fails with EMFILE */
		assert_true(open_fds(c.pid) >= 60);
		ticks = cpu_over(c.pid, 2000);
		print_message("%d thread(s): 200 connections, 64 descriptors: %ld CPU ticks in 2 s, "
		              "%d descriptors open\n", threads, ticks, open_fds(c.pid));
		assert_true(ticks < 20);
		close_all(fds, 200);
		print_message("fresh client served after %lld ms\n",
		              (long long)fresh_client(c.uri, 10000));
		reap(&c);
	}
}

/*
 * ulimit -n + 50 connections held open and idle: the server reaps them after idle_ms (500 ms)
 * and a fresh client is served within 10 s while the attacker keeps reconnecting.
 */
static void idle_connections_reaped(void **state)
{
	enum { NOFILE = 64, N = NOFILE + 50 };
	child c;
	int fds[N], closed = 0;
	int64_t took;
	(void)state;
	spawn(&c, NOFILE, 500, 60000, 0, 1);
	for (int i = 0; i < N; i++)
		assert_true((fds[i] = sec_tcp(c.uri)) >= 0);
	took = fresh_client(c.uri, 10000);
	print_message("%d idle connections: fresh client served after %lld ms\n", N, (long long)took);
	/* every attacker connection was accepted and then closed by the server */
	for (int i = 0; i < N; i++)
		closed += sec_wait_closed(fds[i], 5000);
	assert_int_equal(closed, N);
	close_all(fds, N);
	reap(&c);
}

/* Over max_conns (16) the longest-idle connection makes room: a fresh client gets in. */
static void max_conns_evicts_longest_idle(void **state)
{
	child c;
	int fds[100];
	long ticks;
	(void)state;
	spawn(&c, 0, 60000, 60000, 16, 1);
	for (int i = 0; i < 100; i++)
		assert_true((fds[i] = sec_tcp(c.uri)) >= 0);
	print_message("100 connections, max_conns 16: fresh client served after %lld ms\n",
	              (long long)fresh_client(c.uri, 10000));
	usleep(200000);
	/* the listener and at most max_conns connections (a few more while evicted ones close);
	 * sockets only: a server under valgrind has the tool's descriptors too */
	{
		int n = open_fds_of(c.pid, true);
		print_message("server sockets: %d\n", n);
		assert_true(n >= 1 && n <= 1 + 16 + 2);
	}
	ticks = cpu_over(c.pid, 1000);
	assert_true(ticks < 10);
	close_all(fds, 100);
	reap(&c);
}

/*
 * Slowloris: 40 connections send two bytes of a record mark (or a mark and half a record)
 * and fall silent. stall_ms (500 ms) closes every one of them within 3 s, long before the
 * idle limit (60 s), and a fresh client is served meanwhile.
 */
static void slowloris_stalled_records_reaped(void **state)
{
	enum { N = 40 };
	child c;
	int fds[N], closed = 0;
	unsigned char m[128];
	int64_t t0;
	(void)state;
	spawn(&c, 0, 60000, 500, 0, 1);
	for (int i = 0; i < N; i++) {
		assert_true((fds[i] = sec_tcp(c.uri)) >= 0);
		if (i % 2 == 0) {
			put32(m, 0x80000028u);
			assert_true(sec_send_all(fds[i], m, 2)); /* 2 bytes of the mark */
		} else {
			size_t len = sec_call(m + 4, 1, P_NULL, NULL, 0);
			put32(m, 0x80000000u | (uint32_t)len);
			assert_true(sec_send_all(fds[i], m, 4 + len / 2)); /* half a record */
		}
	}
	t0 = sec_ms();
	assert_int_equal(sec_null_call(c.uri, 2000), RC_OK);
	for (int i = 0; i < N; i++)
		closed += sec_wait_closed(fds[i], 3000);
	print_message("%d stalled connections closed after %lld ms\n", closed,
	              (long long)(sec_ms() - t0));
	assert_int_equal(closed, N);
	close_all(fds, N);
	reap(&c);
}

/*
 * A peer that pipelines calls with 64 KiB replies and never reads them: the server stops
 * reading from it once 256 KiB of replies are queued (bounded memory) and closes it after
 * stall_ms; other clients are served throughout.
 */
static void not_reading_peer(int threads)
{
	static unsigned char batch[16 * (65536 + 64)];
	child c;
	long rss0, rss1;
	int fd, base;
	size_t blen = 0;
	spawn(&c, 0, 60000, 500, 0, threads);
	assert_int_equal(sec_null_call(c.uri, 2000), RC_OK);
	usleep(50000);
	base = open_fds(c.pid);
	rss0 = sec_rss_kib(c.pid);
	fd = sec_tcp(c.uri);
	{
		int small = 4096;
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	}
	/* ECHO calls of 64 KiB: each reply is 64 KiB too */
	for (int i = 0; i < 16; i++) {
		static unsigned char m[65536 + 64];
		static unsigned char payload[4 + 65536];
		size_t len;
		put32(payload, 65536);
		len = sec_call(m, (uint32_t)i, P_ECHO, payload, sizeof(payload));
		put32(batch + blen, (uint32_t)len | 0x80000000u);
		memcpy(batch + blen + 4, m, len);
		blen += 4 + len;
	}
	/* keep sending without reading until the server stops taking them or 8 MiB went */
	{
		size_t sent = 0;
		struct timeval tv = {0, 200000};
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		while (sent < ((size_t)8 << 20)) {
			ssize_t n = send(fd, batch, blen, MSG_NOSIGNAL);
			if (n <= 0)
				break;
			sent += (size_t)n;
		}
		print_message("the non-reading peer got %zu bytes of calls in\n", sent);
	}
	assert_int_equal(sec_null_call(c.uri, 2000), RC_OK);
	rss1 = sec_rss_kib(c.pid);
	print_message("server RSS %ld -> %ld KiB\n", rss0, rss1);
	assert_true(rss1 - rss0 < 8 * 1024 + sec_rss_slack_kib());
	/* closed after stall_ms although it never read a byte */
	{
		int64_t t0 = sec_ms();
		bool gone = false;
		while (!gone && sec_ms() - t0 < 5000) {
			gone = open_fds(c.pid) <= base;
			usleep(50000);
		}
		print_message("non-reading peer closed after %lld ms\n", (long long)(sec_ms() - t0));
		assert_true(gone);
	}
	close(fd);
	reap(&c);
}

static void peer_not_reading_replies(void **state)
{
	(void)state;
	not_reading_peer(1);
}

/* The same against four worker threads, where the calls of the connection run as parallel
 * jobs and the replies that do not fit the socket wait for its output descriptor. */
static void peer_not_reading_replies_workers(void **state)
{
	(void)state;
	not_reading_peer(4);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(emfile_does_not_spin, kill_leftover),
		cmocka_unit_test_teardown(idle_connections_reaped, kill_leftover),
		cmocka_unit_test_teardown(max_conns_evicts_longest_idle, kill_leftover),
		cmocka_unit_test_teardown(slowloris_stalled_records_reaped, kill_leftover),
		cmocka_unit_test_teardown(peer_not_reading_replies, kill_leftover),
		cmocka_unit_test_teardown(peer_not_reading_replies_workers, kill_leftover),
	};
	if (argc == 7 && strcmp(argv[1], "--serve") == 0)
		return serve(argv);
	signal(SIGPIPE, SIG_IGN);
	{
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0)
			return 1;
		self[n] = '\0';
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}

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
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdatomic.h>

#include "sec_util.h"

/* ---- the server process ----------------------------------------------------------------- */

static rc_server *child_srv;

static void on_term(int sig)
{
	(void)sig;
	rc_server_stop(child_srv);
}

/* SEC_PROG version 2, served by the child only: 0 NULL, 1 SLEEP(u_int ms) -> u_int (sleeps at
 * most 10 s, returns ms): a call that stays running while the test floods the server. */
static bool slow_null(void *a, void *r, rc_svc_req *q)
{
	(void)a; (void)r; (void)q;
	return true;
}
static bool slow_sleep(void *a, void *r, rc_svc_req *q)
{
	uint32_t ms = *(uint32_t *)a;
	(void)q;
	usleep((useconds_t)(ms < 10000 ? ms : 10000) * 1000u);
	*(uint32_t *)r = ms;
	return true;
}
static const rc_procinfo slow_null_info = {SEC_PROG, 2, 0, "null", (rc_xdrproc)rc_xdr_void, 0,
                                           (rc_xdrproc)rc_xdr_void, 0};
static const rc_procinfo slow_sleep_info = {SEC_PROG, 2, 1, "sleep", (rc_xdrproc)rc_xdr_u_int, 4,
                                            (rc_xdrproc)rc_xdr_u_int, 4};
static const rc_svc_proc slow_procs[] = {{&slow_null_info, slow_null},
                                         {&slow_sleep_info, slow_sleep}};
static const rc_svc_prog slow_prog = {SEC_PROG, 2, 2, slow_procs};

/* --serve NOFILE IDLE_MS STALL_MS MAX_CONNS THREADS [MAX_INBOUND_MIB] */
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
	if (argv[7] != NULL)
		lim.max_inbound_bytes = (size_t)atol(argv[7]) << 20;
	if (rc_server_create(&child_srv) != RC_OK || rc_server_set_limits(child_srv, &lim) != RC_OK ||
	    rc_server_register(child_srv, &sec_prog1, NULL) != RC_OK ||
	    rc_server_register(child_srv, &slow_prog, NULL) != RC_OK ||
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
static pid_t live_child;    /* killed by the teardown if a test failed before reaping it */
static pid_t live_attacker; /* likewise */

/* The steady client of the flood tests: a null call every 100 ms on one connection until told
 * to stop (steady_run, in a thread the teardown stops if a test failed first). */
typedef struct steady {
	const char *uri;
	atomic_bool stop;
	int calls, failures;
	int64_t worst_ms;
	rc_status first_failure;
} steady;
static steady live_steady;
static pthread_t live_steady_tid;
static bool live_steady_on;

/* Stop the steady client's thread, if it runs. */
static void stop_steady(void)
{
	if (live_steady_on) {
		atomic_store(&live_steady.stop, true);
		pthread_join(live_steady_tid, NULL);
		live_steady_on = false;
	}
}

static int kill_leftover(void **state)
{
	(void)state;
	stop_steady();
	if (live_attacker > 0) {
		kill(live_attacker, SIGKILL);
		waitpid(live_attacker, NULL, 0);
		live_attacker = 0;
	}
	if (live_child > 0) {
		kill(live_child, SIGKILL);
		waitpid(live_child, NULL, 0);
		live_child = 0;
	}
	return 0;
}

static int spawn_inbound_mib; /* the next spawn's max_inbound_bytes in MiB (0: the default) */

static void spawn(child *c, int nofile, int idle_ms, int stall_ms, int max_conns, int threads)
{
	int p[2];
	char a[6][32];
	FILE *f;

	snprintf(a[0], sizeof(a[0]), "%d", nofile);
	snprintf(a[1], sizeof(a[1]), "%d", idle_ms);
	snprintf(a[2], sizeof(a[2]), "%d", stall_ms);
	snprintf(a[3], sizeof(a[3]), "%d", max_conns);
	snprintf(a[4], sizeof(a[4]), "%d", threads);
	snprintf(a[5], sizeof(a[5]), "%d", spawn_inbound_mib);
	assert_int_equal(pipe(p), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execl(self, "test_sec_conn", "--serve", a[0], a[1], a[2], a[3], a[4],
		      spawn_inbound_mib > 0 ? a[5] : (char *)NULL, (char *)NULL);
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
 * server must not spin on the readable listener (CPU over 2 s stays under 10 %): it closes
 * idle connections to take the waiting ones (at least the 200 - 64 that did not fit are
 * closed), then rests; once the attacker lets go, a fresh client is served.
 */
static void emfile_does_not_spin(void **state)
{
	for (int threads = 1; threads <= 2; threads++) {
		child c;
		int fds[200], closed = 0;
		long ticks;
		(void)state;
		spawn(&c, 64, 60000, 60000, 0, threads);
		for (int i = 0; i < 200; i++)
			assert_true((fds[i] = sec_tcp(c.uri)) >= 0);
		usleep(300000);
		ticks = cpu_over(c.pid, 2000);
		for (int i = 0; i < 200; i++)
			closed += sec_wait_closed(fds[i], 1);
		print_message("%d thread(s): 200 connections, 64 descriptors: %ld CPU ticks in 2 s, "
		              "%d descriptors open, %d connections closed to make room\n", threads,
		              ticks, open_fds(c.pid), closed);
		assert_true(ticks < 20);
		assert_true(closed >= 200 - 64);
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

/*
 * The inbound budget (max_inbound_bytes, 32 MiB here): 16 connections each open a 60 MiB
 * record and send up to 8 MiB of it (128 MiB in all), never finishing it. The server holds at
 * most the budget of them (plus a read per connection): its RSS grows by less than budget +
 * 16 x 1 MiB of reads; stats say connections waited; a fresh client's null call is served
 * meanwhile; and the stuck connections are closed after stall_ms. Before the budget the RSS
 * grew by the whole 128 MiB (40 x 60 MiB pinned 2.4 GB).
 */
static void open_records_within_budget(int threads)
{
	enum { N = 16, BUDGET_MIB = 32 };
	static unsigned char chunk[1 << 20];
	child c;
	int fds[N], closed = 0;
	long rss0, rss1;
	size_t total = 0;
	int64_t t0;

	spawn_inbound_mib = BUDGET_MIB;
	spawn(&c, 0, 60000, 2000, 0, threads);
	spawn_inbound_mib = 0;
	assert_int_equal(sec_null_call(c.uri, 2000), RC_OK);
	usleep(50000);
	rss0 = sec_rss_kib(c.pid);
	memset(chunk, 0x5a, sizeof(chunk));
	for (int i = 0; i < N; i++) {
		unsigned char mark[4];
		struct timeval tv = {0, 100000};
		assert_true((fds[i] = sec_tcp(c.uri)) >= 0);
		setsockopt(fds[i], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		put32(mark, 60u << 20); /* a first fragment of 60 MiB, never finished */
		assert_true(sec_send_all(fds[i], mark, 4));
	}
	/* round robin, 1 MiB at a time, until 8 MiB each went or the server stops taking them */
	for (int round = 0; round < 8; round++) {
		size_t moved = 0;
		for (int i = 0; i < N; i++) {
			size_t off = 0;
			while (off < sizeof(chunk)) {
				ssize_t n = send(fds[i], chunk + off, sizeof(chunk) - off, MSG_NOSIGNAL);
				if (n <= 0)
					break;
				off += (size_t)n;
			}
			moved += off;
		}
		total += moved;
		if (moved == 0)
			break;
	}
	t0 = sec_ms();
	assert_int_equal(sec_null_call(c.uri, 2000), RC_OK); /* a fresh client, meanwhile */
	rss1 = sec_rss_kib(c.pid);
	print_message("%d threads: %zu MiB of open records sent; server RSS %ld -> %ld KiB "
	              "(budget %d MiB)\n",
	              threads, total >> 20, rss0, rss1, BUDGET_MIB);
	assert_true(rss1 - rss0 < (BUDGET_MIB + N) * 1024 + sec_rss_slack_kib());
	for (int i = 0; i < N; i++)
		closed += sec_wait_closed(fds[i], 6000);
	print_message("%d stuck connections closed after %lld ms\n", closed,
	              (long long)(sec_ms() - t0));
	assert_int_equal(closed, N);
	close_all(fds, N);
	reap(&c);
}

static void open_records_within_inbound_budget(void **state)
{
	(void)state;
	open_records_within_budget(1);
}

static void open_records_within_inbound_budget_workers(void **state)
{
	(void)state;
	open_records_within_budget(4);
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


/*
 * A peer that reads its reply, but slowly: one ECHO of 16 MiB (more than the kernel's socket
 * buffers take, so most of it waits in the server), its reply read 512 KiB every 50 ms, about
 * 1.6 s in all against stall_ms 300. It moves the reply along, so it is not stalled: the reply
 * arrives whole. (Before, the stall clock ran from the moment the reply was queued, whatever
 * the peer read, and the connection was reset 300 ms later -- as a 64 MiB NFS READ reply to a
 * client reading it at a few MB/s was after the 10 s default.)
 */
static void slow_reader(int threads)
{
	enum { PAY = 16 << 20, REC = 4 + 24 + 4 + PAY };
	static unsigned char buf[512 << 10];
	unsigned char *m = malloc(PAY + 128), *payload = calloc(1, 4 + PAY);
	child c;
	int fd;
	size_t len, got = 0;
	int64_t t0;
	assert_non_null(m);
	assert_non_null(payload);
	spawn(&c, 0, 60000, 300, 0, threads);
	assert_int_equal(sec_null_call(c.uri, 2000), RC_OK);
	fd = sec_tcp(c.uri);
	{
		int small = 65536; /* (the kernel doubles it): most of the reply waits in the server */
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	}
	put32(payload, PAY);
	len = sec_call(m + 4, 1, P_ECHO, payload, 4 + PAY);
	put32(m, (uint32_t)len | 0x80000000u);
	assert_true(sec_send_all(fd, m, len + 4));
	t0 = sec_ms();
	while (got < (size_t)REC && sec_ms() - t0 < 20000) {
		size_t chunk = 0;
		while (chunk < sizeof(buf)) { /* 512 KiB, then a pause */
			struct pollfd pf = {fd, POLLIN, 0};
			ssize_t n;
			if (poll(&pf, 1, 2000) <= 0)
				break;
			n = recv(fd, buf, sizeof(buf) - chunk, 0);
			if (n <= 0)
				goto out;
			chunk += (size_t)n;
		}
		got += chunk;
		if (chunk == 0)
			break;
		usleep(50000);
	}
out:
	print_message("slow reader: %zu of %d bytes in %lld ms\n", got, REC,
	              (long long)(sec_ms() - t0));
	assert_int_equal(got, (size_t)REC);
	assert_true(sec_ms() - t0 > 600); /* it did outlast stall_ms, twice over */
	close(fd);
	free(m);
	free(payload);
	reap(&c);
}

static void slow_reader_of_big_replies_served(void **state)
{
	(void)state;
	slow_reader(1);
}

static void slow_reader_of_big_replies_served_workers(void **state)
{
	(void)state;
	slow_reader(4);
}

/* ---- descriptor floods: nobody locked out (issue 17) ------------------------------------ */

/*
 * The attacker, in a child process (forked before the test starts any thread, and using only
 * system calls): opens n connections to 127.0.0.1:port without waiting for each (a full
 * backlog does not hold it up), sends two bytes of a record mark on every odd one once it is
 * connected -- or, with calls, one whole null call on every one (never reading the reply: the
 * connection completes a request, then idles) -- reports how many connected on fd w ("N\n",
 * after at most 5 s), and holds them until killed.
 */
#define FLOOD_MAX 2000
static void attacker(int port, int n, int w, bool calls)
{
	static struct pollfd pf[FLOOD_MAX];
	static bool sent[FLOOD_MAX];
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
	                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct rlimit rl = {(rlim_t)n + 64, (rlim_t)n + 64};
	unsigned char mark[2] = {0x80, 0x00}, call[64];
	size_t clen = sec_call(call + 4, 7, P_NULL, NULL, 0);
	int64_t until = sec_ms() + 5000;
	int up = 0;
	char line[32];

	put32(call, 0x80000000u | (uint32_t)clen);
	setrlimit(RLIMIT_NOFILE, &rl);
	for (int i = 0; i < n; i++) {
		pf[i].fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		pf[i].events = POLLOUT;
		if (pf[i].fd >= 0 && connect(pf[i].fd, (struct sockaddr *)&a, sizeof(a)) != 0 &&
		    errno != EINPROGRESS) {
			close(pf[i].fd);
			pf[i].fd = -1;
		}
	}
	while (up < n && sec_ms() < until) {
		up = 0;
		poll(pf, (nfds_t)n, 100);
		for (int i = 0; i < n; i++) {
			if (pf[i].fd < 0 || (!sent[i] && !(pf[i].revents & POLLOUT)))
				continue;
			if (!sent[i] && calls &&
			    send(pf[i].fd, call, clen + 4, MSG_NOSIGNAL) != (ssize_t)(clen + 4))
				continue;
			if (!sent[i] && !calls && i % 2 == 1 && send(pf[i].fd, mark, 2, MSG_NOSIGNAL) != 2)
				continue;
			sent[i] = true;
			pf[i].events = 0; /* done with it: poll ignores it from now on */
			up++;
		}
	}
	snprintf(line, sizeof(line), "%d\n", up);
	if (write(w, line, strlen(line)) < 0)
		_exit(1);
	for (;;)
		pause();
}

/* Start the attacker (see attacker()) on the server's port; returns the connections it
 * holds. */
static int start_attacker(const char *uri, int n, bool calls)
{
	int p[2];
	char line[32] = "";
	pid_t pid;
	ssize_t got;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		attacker(sec_port(uri), n, p[1], calls);
		_exit(0);
	}
	live_attacker = pid;
	close(p[1]);
	got = read(p[0], line, sizeof(line) - 1);
	close(p[0]);
	assert_true(got > 0);
	return atoi(line);
}

static void stop_attacker(void)
{
	kill(live_attacker, SIGKILL);
	waitpid(live_attacker, NULL, 0);
	live_attacker = 0;
}

/* The steady client's thread: calls until s->stop, counting calls, failures, the slowest. */
static void *steady_run(void *arg)
{
	steady *s = arg;
	rc_client *c;

	if (rc_client_create(&c, s->uri, SEC_PROG, 1) != RC_OK) {
		s->failures++;
		return NULL;
	}
	rc_client_set_timeout(c, 5000);
	while (!atomic_load(&s->stop)) {
		int64_t t0 = sec_ms();
		rc_status st = rc_call(c, P_NULL, NULL, NULL, NULL, NULL);
		int64_t took = sec_ms() - t0;
		s->calls++;
		if (took > s->worst_ms)
			s->worst_ms = took;
		if (st != RC_OK && s->failures++ == 0)
			s->first_failure = st;
		usleep(100000);
	}
	rc_client_destroy(c);
	return NULL;
}

/* A checker (sanitizer, valgrind) slows the server down: time limits are multiplied by this. */
static int64_t slow_factor(void)
{
	return sec_rss_slack_kib() > 0 ? 10 : 1;
}

/*
 * A server limited to nofile descriptors, a client calling it every 100 ms, then an attacker
 * holding n connections (half idle, half after two bytes of a record mark). Each of five fresh
 * clients' null call is answered within 1 s; the steady client never sees a failure; over the
 * flood the server uses under 30 % of a CPU and its RSS stays flat (what the full connection
 * table costs, then within 1 MiB while the flood goes on). Neither
 * idle_ms (120 s) nor stall_ms (10 s) comes into it: the server makes room by closing the
 * connections that never completed a request.
 */
static void flood(int nofile, int n, int threads)
{
	child c;
	steady *sd = &live_steady;
	long rss0, rss_full = -1, rss1, ticks0, ticks;
	int64_t t0, worst = 0, limit = 1000 * slow_factor(), elapsed;
	int held;

	spawn(&c, nofile, 120000, 10000, 0, threads);
	memset(sd, 0, sizeof(*sd));
	sd->uri = c.uri;
	assert_int_equal(sec_null_call(c.uri, 2000), RC_OK);
	usleep(100000);
	rss0 = sec_rss_kib(c.pid);
	ticks0 = sec_cpu_ticks(c.pid);
	t0 = sec_ms();
	held = start_attacker(c.uri, n, false); /* forked before the steady client's thread */
	assert_int_equal(pthread_create(&live_steady_tid, NULL, steady_run, sd), 0);
	live_steady_on = true;
	for (int i = 0; i < 5; i++) {
		int64_t s0 = sec_ms();
		rc_status st = sec_null_call(c.uri, (uint32_t)limit);
		int64_t took = sec_ms() - s0;
		if (st != RC_OK)
			fail_msg("fresh client %d: %s after %lld ms", i, rc_strerror(st), (long long)took);
		if (took > worst)
			worst = took;
		usleep(200000);
		if (i == 0)
			rss_full = sec_rss_kib(c.pid); /* the table full of the attacker's */
	}
	usleep(1000000); /* the steady client keeps calling through the flood */
	stop_steady();
	elapsed = sec_ms() - t0;
	ticks = sec_cpu_ticks(c.pid) - ticks0;
	rss1 = sec_rss_kib(c.pid);
	print_message("NOFILE %d, %d thread(s), %d connections held: fresh clients answered within "
	              "%lld ms; steady client %d calls, %d failed, slowest %lld ms; server CPU %ld "
	              "ticks in %lld ms (%.0f %%), RSS %ld -> %ld (table full) -> %ld KiB, %d "
	              "descriptors open\n",
	              nofile, threads, held, (long long)worst, sd->calls, sd->failures,
	              (long long)sd->worst_ms, ticks, (long long)elapsed,
	              100.0 * (double)ticks * 10.0 / (double)elapsed, rss0, rss_full, rss1,
	              open_fds(c.pid));
	assert_true(held >= n * 9 / 10);
	if (sd->failures > 0)
		fail_msg("the steady client saw %d failures (first: %s)", sd->failures,
		         rc_strerror(sd->first_failure));
	assert_true(sd->calls >= 10);
	if (slow_factor() == 1) /* a checker's own CPU time would swamp the server's */
		assert_true(ticks * 10 * 100 < 30 * elapsed);
	/* flat: what the full table costs (a few KiB a connection), then no growth */
	assert_true(rss_full - rss0 < nofile * 4 + 2048 + sec_rss_slack_kib());
	assert_true(rss1 - rss_full < 1024 + sec_rss_slack_kib());
	stop_attacker();
	reap(&c);
}

/* NOFILE 64, 200 connections held: one thread, then two worker threads. */
static void flood_200_conns_nofile_64(void **state)
{
	(void)state;
	flood(64, 200, 1);
	flood(64, 200, 2);
}

/* NOFILE 1024, 2,000 connections held. */
static void flood_2000_conns_nofile_1024(void **state)
{
	(void)state;
	flood(1024, 2000, 1);
}

/*
 * Connections doing useful work are never the victims while idle ones exist: with two worker
 * threads and 64 descriptors, one connection has a call running (SLEEP 2.5 s), another 1 MiB of
 * ECHO replies it is not reading yet; then 200 attacker connections each complete a null call
 * and idle -- more recently active than those two, so "longest idle first" alone would pick the
 * two first. 24 fresh clients, kept open, get in (by closing attacker connections), the
 * sleeping call's reply arrives, and every ECHO reply is there to read.
 */
static void busy_connections_never_evicted(void **state)
{
	enum { FRESH = 24 };
	static rc_client *fresh[FRESH];
	static unsigned char batch[16 * (65536 + 64)], r[65536 + 64];
	unsigned char m[128], arg[4];
	child c;
	int sleeper, reader, held, got = 0;
	size_t blen = 0, len;
	int64_t worst = 0;
	(void)state;
	spawn(&c, 64, 120000, 10000, 0, 2);
	/* the not-reading connection: 16 pipelined 64 KiB ECHOs, replies left unread for now */
	reader = sec_tcp(c.uri);
	assert_true(reader >= 0);
	{
		int small = 4096;
		setsockopt(reader, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	}
	for (int i = 0; i < 16; i++) {
		static unsigned char msg[65536 + 64], payload[4 + 65536];
		put32(payload, 65536);
		len = sec_call(msg, 100 + (uint32_t)i, P_ECHO, payload, sizeof(payload));
		put32(batch + blen, (uint32_t)len | 0x80000000u);
		memcpy(batch + blen + 4, msg, len);
		blen += 4 + len;
	}
	assert_true(sec_send_all(reader, batch, blen));
	/* the sleeping call */
	sleeper = sec_tcp(c.uri);
	assert_true(sleeper >= 0);
	put32(arg, 2500);
	len = sec_mkcall(m + 4, 42, 2, SEC_PROG, 2, 1, 0, NULL, 0, arg, 4);
	assert_true(sec_send_record(sleeper, m + 4, len));
	usleep(200000);
	held = start_attacker(c.uri, 200, true);
	usleep(300000); /* the table settles: idle connections that completed a call */
	/* 24 fresh clients, kept open: more than the room left, so idle connections that did
	 * complete a request must be closed too -- the longest idle first, the two busy ones not */
	for (int i = 0; i < FRESH; i++) {
		int64_t s0 = sec_ms();
		rc_status st = rc_client_create(&fresh[i], c.uri, SEC_PROG, 1);
		if (st == RC_OK) {
			rc_client_set_timeout(fresh[i], (uint32_t)(1000 * slow_factor()));
			st = rc_call(fresh[i], P_NULL, NULL, NULL, NULL, NULL);
		}
		if (st != RC_OK)
			fail_msg("fresh client %d: %s", i, rc_strerror(st));
		if (sec_ms() - s0 > worst)
			worst = sec_ms() - s0;
	}
	/* the sleeping call is answered on its connection */
	{
		ssize_t n = sec_recv_record(sleeper, r, sizeof(r), 5000);
		uint32_t xid = 0;
		if (n < 0)
			fail_msg("the running call's connection: no reply (%zd)", n);
		assert_int_equal(sec_reply_kind(r, (size_t)n, &xid, NULL, NULL), ACC_SUCCESS);
		assert_int_equal(xid, 42);
		assert_int_equal(get32(r + 24), 2500);
	}
	/* and every ECHO reply is there to read */
	while (got < 16) {
		ssize_t n = sec_recv_record(reader, r, sizeof(r), 3000);
		if (n < 0)
			fail_msg("the not-reading connection: %d of 16 replies, then %zd", got, n);
		assert_int_equal(n, 24 + 4 + 65536);
		got++;
	}
	print_message("%d idle attacker connections: %d fresh clients answered within %lld ms; "
	              "the running call and the 16 queued replies arrived\n", held, FRESH,
	              (long long)worst);
	for (int i = 0; i < FRESH; i++)
		rc_client_destroy(fresh[i]);
	close(sleeper);
	close(reader);
	stop_attacker();
	reap(&c);
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
		cmocka_unit_test_teardown(slow_reader_of_big_replies_served, kill_leftover),
		cmocka_unit_test_teardown(slow_reader_of_big_replies_served_workers, kill_leftover),
		cmocka_unit_test_teardown(flood_200_conns_nofile_64, kill_leftover),
		cmocka_unit_test_teardown(flood_2000_conns_nofile_1024, kill_leftover),
		cmocka_unit_test_teardown(busy_connections_never_evicted, kill_leftover),
		cmocka_unit_test_teardown(open_records_within_inbound_budget, kill_leftover),
		cmocka_unit_test_teardown(open_records_within_inbound_budget_workers, kill_leftover),
	};
	if ((argc == 7 || argc == 8) && strcmp(argv[1], "--serve") == 0)
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

/*
 * Security tests that expose bugs in the runtime not fixed yet. Each case states the expected
 * (documented) behaviour; ctest registers this program DISABLED until the lead fixes the code
 * (tests/security/CMakeLists.txt). Run it by hand:
 *
 *   build/tests/security/test_sec_known_bugs
 *
 * docs/security.md ("Known gaps") and the reports describe each one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sec_util.h"

static const char *const uris[] = {"tcp://127.0.0.1:0", NULL};

/* A server whose stall limit (300 ms) is far below its idle limit (60 s). */
static sec_server S;

static int setup(void **st)
{
	rc_server_limits lim = {0};
	(void)st;
	lim.idle_ms = 60000;
	lim.stall_ms = 300;
	return sec_start(&S, uris, &lim, 1, 0);
}

static int teardown(void **st)
{
	(void)st;
	sec_stop(&S);
	return 0;
}

/*
 * BUG 1 -- stall detection misses a peer parked right after a fragment header.
 * A peer sends one complete record mark (4 bytes, claiming 100 bytes) and nothing more. The
 * reader has consumed the header (in_frag, nothing of the record yet), so
 * rc_recreader_buffered() is 0 and rc__conn_serve() treats the connection as between records:
 * partial_since stays 0 and only idle_ms (120 s by default) ever closes it. docs/runtime.md
 * promises stall_ms ("a connection stuck inside a record ... closed after 10 s").
 */
static void stall_after_complete_record_mark(void **state)
{
	unsigned char m[4];
	int fd = sec_tcp(S.uri[0]);
	(void)state;
	put32(m, 0x80000064u); /* final fragment of 100 bytes */
	assert_true(sec_send_all(fd, m, 4));
	if (!sec_wait_closed(fd, 3000))
		fail_msg("a connection parked after a 4-byte record mark was not closed within 3 s "
		         "(stall_ms 300)");
	close(fd);
}

/*
 * BUG 2 -- endless empty non-final fragments are never "inside a record".
 * A peer sends 0x00000000 (an empty, non-final fragment) every 50 ms. Each header is consumed
 * at once and nothing is buffered, so the connection never counts as stalled, and since no
 * record ever completes it is not active either -- it stays open until idle_ms. The record
 * cap cannot catch it (the record stays 0 bytes long), and the server spends a wake-up on
 * each header forever. Expected: closed after stall_ms like any other record that does not
 * finish.
 */
static void endless_empty_fragments(void **state)
{
	unsigned char m[4] = {0, 0, 0, 0};
	int fd = sec_tcp(S.uri[0]);
	int64_t t0 = sec_ms();
	bool closed = false;
	(void)state;
	while (!closed && sec_ms() - t0 < 3000) {
		if (!sec_send_all(fd, m, 4))
			closed = true;
		else
			closed = sec_wait_closed(fd, 50);
	}
	if (!closed)
		fail_msg("3 s of empty non-final fragments and the connection is still open "
		         "(stall_ms 300)");
	close(fd);
}

/*
 * BUG 3 -- a client that keeps completing records is reaped as "stalled".
 * partial_since is set when an event ends inside a record and is cleared only when an event
 * ends with nothing buffered. A pipelining client whose sends straddle record boundaries
 * (the rest of call k and half of call k+1, every 100 ms) completes a call every 100 ms, yet
 * after stall_ms (300 ms) the server closes the connection. Under load (large pipelined
 * writes, 16 reads per event) a busy, healthy client is cut off the same way after 10 s.
 * Expected: stall_ms measures time without progress, so completing a record restarts it.
 */
static void progressing_client_not_reaped(void **state)
{
	unsigned char m[64], r[64];
	size_t len = sec_call(m + 4, 0, P_NULL, NULL, 0), half = (len + 4) / 2;
	int fd = sec_tcp(S.uri[0]);
	int answered = 0;
	(void)state;
	put32(m, 0x80000000u | (uint32_t)len);
	/* first half of call 0 */
	assert_true(sec_send_all(fd, m, half));
	for (uint32_t k = 0; k < 20; k++) {
		ssize_t n;
		usleep(100000);
		/* the rest of call k, then the first half of call k+1 */
		put32(m + 4, k);
		if (!sec_send_all(fd, m + half, len + 4 - half))
			break;
		put32(m + 4, k + 1);
		if (!sec_send_all(fd, m, half))
			break;
		n = sec_recv_record(fd, r, sizeof(r), 1000);
		if (n < 0)
			break;
		answered++;
	}
	if (answered != 20)
		fail_msg("a client completing a call every 100 ms was cut off after %d calls "
		         "(stall_ms 300)", answered);
	close(fd);
}

/*
 * BUG 4 (idlc) -- idlc reads any file a line marker names, to the end.
 * A diagnostic prints the offending source line, which idlc loads from the file named by the
 * last `# LINE "FILE"` marker in cpp's output; a .x file can set that name with #line. With
 * #line 1 "/dev/zero" the first error makes idlc read /dev/zero into memory until it runs out
 * (a FIFO would block it forever; /proc/self/mem, /dev/urandom ... likewise). Expected: idlc
 * reports the syntax error and exits 1 promptly, reading only regular files of sane size.
 */
static void idlc_line_marker_names_a_device(void **state)
{
	char path[] = "/tmp/rc-sec-idlcXXXXXX";
	char out[64];
	int fd = mkstemp(path), status = 0;
	pid_t pid;
	int64_t t0 = sec_ms();
	static const char text[] = "#line 1 \"/dev/zero\"\nstruct {\n";
	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	close(fd);
	snprintf(out, sizeof(out), "%s.h", path);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
		/* don't let it take the machine down (the sanitizers need terabytes of address
		 * space for their shadow, so only the alarm bounds it there) */
		struct rlimit rl = {(rlim_t)512 << 20, (rlim_t)512 << 20};
		setrlimit(RLIMIT_AS, &rl);
#endif
		alarm(5);
		execl(RC_IDLC, "idlc", "-h", "-o", out, path, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	unlink(path);
	unlink(out);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 1)
		fail_msg("idlc on '#line 1 \"/dev/zero\"': status 0x%x after %lld ms (want exit 1)",
		         status, (long long)(sec_ms() - t0));
}

/*
 * GAP 5 (hardening) -- the duplicate request cache was bounded in entries, not in bytes: every
 * UDP reply of a procedure other than NULL was kept for drc_ttl_ms (120 s) whatever its size,
 * so 2,000 calls with 60 KB replies held about 60 MiB for two minutes (an NFS READ-like
 * procedure would do it with 100-byte requests). Fixed: replies over 32 bytes hold at most
 * 4 MiB in all (the oldest let go first; their calls stay remembered), so RSS stays within
 * 16 MiB here.
 */
static void drc_bytes_bounded(void **state)
{
	static const char *const u[] = {"udp://127.0.0.1:0", NULL};
	static unsigned char m[65536], r[65536], a[60004];
	sec_server s;
	long r0, r1;
	int fd;
	(void)state;
	assert_int_equal(sec_start(&s, u, NULL, 1, 0), 0);
	fd = sec_udp(s.uri[0]);
	put32(a, 60000);
	r0 = sec_rss_kib(0);
	for (uint32_t i = 0; i < 2000; i++) {
		size_t len = sec_call(m, 100 + i, P_ECHO, a, sizeof(a));
		assert_int_equal(send(fd, m, len, 0), (ssize_t)len);
		assert_true(sec_recv_dgram(fd, r, sizeof(r), 2000) > 0);
	}
	r1 = sec_rss_kib(0);
	close(fd);
	sec_stop(&s);
	if (r1 - r0 >= 16 * 1024 + sec_rss_slack_kib())
		fail_msg("2,000 UDP calls with 60 KB replies: RSS %ld -> %ld KiB (the cache keeps "
		         "every reply)", r0, r1);
}

/*
 * BUG 6 -- the client's fast path decodes some replies without the client's allocation cap.
 * rc__fast() (runtime/client/fast.c) decodes the usual reply (AUTH_NONE verifier, SUCCESS) under
 * the client's budget (4 x the largest message + 4 KiB: about 260 KiB on UDP), but a reply
 * in any other shape -- here the same result behind a 4-byte verifier -- goes through
 * rc_xdrmem_create + rc__reply_header with no rc_xdr_set_limits, i.e. the XDR default of
 * 64 MiB. A 64 KB datagram of 16,000 four-byte elements of a 256-byte C struct then costs
 * the client 4 MB instead of failing RC_CANTDECODERES as the same result does without the
 * verifier (and as it does on the general path, rc__handle). Expected: the same cap on
 * every path.
 */
static int fake_udp;
static bool fake_verifier;

static void *fake_big_reply(void *arg)
{
	static unsigned char r[65536];
	unsigned char call[256];
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	size_t n = 0;
	(void)arg;
	if (recvfrom(fake_udp, call, sizeof(call), 0, (struct sockaddr *)&from, &fl) < 4)
		return NULL;
	memcpy(r, call, 4);
	put32(r + 4, 1);
	put32(r + 8, 0);
	put32(r + 12, 0);                 /* verifier flavor */
	put32(r + 16, fake_verifier ? 4 : 0);
	n = 20 + (fake_verifier ? 4 : 0);
	put32(r + n, 0);                  /* SUCCESS */
	put32(r + n + 4, 16000);          /* sec_bigs count: 16,000 x 256 bytes in C */
	memset(r + n + 8, 0, 64000);
	sendto(fake_udp, r, n + 8 + 64000, 0, (struct sockaddr *)&from, fl);
	return NULL;
}

static void client_fast_path_alloc_cap(void **state)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);
	char uri[64];
	(void)state;
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	fake_udp = socket(AF_INET, SOCK_DGRAM, 0);
	assert_int_equal(bind(fake_udp, (struct sockaddr *)&a, sizeof(a)), 0);
	getsockname(fake_udp, (struct sockaddr *)&a, &al);
	snprintf(uri, sizeof(uri), "udp://127.0.0.1:%d", ntohs(a.sin_port));
	for (int v = 0; v <= 1; v++) {
		rc_client *c;
		pthread_t t;
		sec_bigs res = {0, NULL};
		rc_status st;
		fake_verifier = v;
		assert_int_equal(rc_client_create(&c, uri, SEC_PROG, 1), RC_OK);
		rc_client_set_timeout(c, 2000);
		pthread_create(&t, NULL, fake_big_reply, NULL);
		sec_alloc_reset();
		st = rc_call(c, P_BIG, NULL, NULL, (rc_xdrproc)xdr_sec_bigs, &res);
		pthread_join(t, NULL);
		rc_xdr_free((rc_xdrproc)xdr_sec_bigs, &res);
		rc_client_destroy(c);
		if (st != RC_CANTDECODERES)
			fail_msg("%s verifier: %s, largest allocation %zu bytes (want RC_CANTDECODERES)",
			         v ? "with a" : "without a", rc_status_name(st),
			         (size_t)atomic_load(&sec_alloc_max));
	}
	close(fake_udp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stall_after_complete_record_mark),
		cmocka_unit_test(endless_empty_fragments),
		cmocka_unit_test(progressing_client_not_reaped),
		cmocka_unit_test(idlc_line_marker_names_a_device),
		cmocka_unit_test(drc_bytes_bounded),
		cmocka_unit_test(client_fast_path_alloc_cap),
	};
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}

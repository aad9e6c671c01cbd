/*
 * Attack class 8: hostile replies to a client. A fake server (raw UDP and TCP sockets in a
 * thread of this test) answers the client's calls with replies that are oversized, truncated,
 * of the wrong xid, of a wrong record length, claiming huge results, and with junk floods
 * while the client waits. The client must end each call with a clear status (RC_TIMEDOUT,
 * RC_CANTDECODERES, RC_CANTRECV, RC_MSGTOOLARGE, RC_BADREPLY, ...) within its deadline, never
 * crash, never allocate what a reply claims, and work again once the server behaves.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sec_util.h"

enum mode {
	GOOD,            /* a correct reply: opaque "abcd" */
	SILENT,          /* no reply */
	WRONG_XID_FLOOD, /* thousands of replies to other xids (and junk), never the right one */
	TRUNC_THEN_GOOD, /* the reply header cut at every length, then the whole reply */
	TRUNC_RESULT,    /* a whole header, the result cut short */
	TRUNCATED,       /* only a cut reply (12..23 bytes: a header that does not parse) */
	HUGE_RESULT,     /* SUCCESS, then an opaque claiming 0xFFFFFFFF bytes */
	HUGE_RESULT_FULL,/* SUCCESS, then an opaque claiming 0x7FFFFFFF bytes, datagram filled */
	BAD_VERIFIER,    /* a verifier claiming 0xFFFFFFFF bytes */
	BAD_STATS,       /* accept_stat 99, reject_stat 7, message type 5 */
	RPC_MISMATCH,    /* MSG_DENIED RPC_MISMATCH 2..2 (with the right xid) */
	MARK_HUGE,       /* TCP: record mark 0x7FFFFFFF */
	MARK_FINAL_HUGE, /* TCP: record mark 0xFFFFFFFF */
	SHORT_CLOSE,     /* TCP: a mark for 100 bytes, 50 bytes, close */
	FRAG_FLOOD,      /* TCP: non-final 64 KiB fragments until the client gives up */
	DRIP,            /* TCP: the right reply, one byte every 50 ms */
	STALL_HALF,      /* TCP: a mark for 100 bytes, 50 bytes, then silence (connection open) */
};

static _Atomic int mode = GOOD;
static atomic_bool stopping;
static int ufd = -1, lfd = -1;
static int uport, tport;
static pthread_t uthr, tthr;

/* The good reply to call (xid taken from it): opaque<> "abcd". Returns its length. */
static size_t good_reply(unsigned char *r, const unsigned char *call)
{
	memcpy(r, call, 4);
	put32(r + 4, 1);
	put32(r + 8, 0);
	put32(r + 12, 0);
	put32(r + 16, 0);
	put32(r + 20, 0);
	put32(r + 24, 4);
	memcpy(r + 28, "abcd", 4);
	return 32;
}

/* ---- the fake servers ------------------------------------------------------------------- */

typedef struct sink {
	int fd;
	bool stream;
	struct sockaddr_storage to;
	socklen_t tolen;
} sink;

static bool out(sink *s, const void *msg, size_t len)
{
	if (s->stream) {
		return sec_send_record(s->fd, msg, len);
	}
	return sendto(s->fd, msg, len, 0, (struct sockaddr *)&s->to, s->tolen) == (ssize_t)len;
}

/* Answer one call according to mode. Returns false if the stream should be closed. */
static bool respond(sink *s, const unsigned char *call)
{
	static _Thread_local unsigned char r[65536]; /* two fake servers, two threads */
	size_t len = good_reply(r, call);
	uint32_t xid = get32(call);

	switch ((enum mode)atomic_load(&mode)) {
	case GOOD:
		out(s, r, len);
		break;
	case SILENT:
		break;
	case WRONG_XID_FLOOD:
		/* stops when the client's call is over (mode back to GOOD): else, slowed down (under
		 * valgrind), the floods for the call's retransmissions delay the next good reply past
		 * its deadline */
		for (uint32_t i = 1; i <= 3000 && !atomic_load(&stopping) &&
		                     atomic_load(&mode) == WRONG_XID_FLOOD;
		     i++) {
			put32(r, xid + 1000000 + i); /* far from any xid the client has in flight */
			if (!out(s, r, i % 3 == 0 ? i % 40 : len)) /* some are junk-length */
				return false;
			if (i % 100 == 0)
				usleep(5000); /* spread over the client's wait */
		}
		break;
	case TRUNC_THEN_GOOD:
		for (size_t k = 0; k < 24; k++)
			out(s, r, k);
		out(s, r, len);
		break;
	case TRUNC_RESULT:
		out(s, r, 28);
		break;
	case TRUNCATED:
		out(s, r, 12 + xid % 12);
		break;
	case HUGE_RESULT:
		put32(r + 24, 0xFFFFFFFFu);
		out(s, r, len);
		break;
	case HUGE_RESULT_FULL:
		put32(r + 24, 0x7FFFFFFFu);
		memset(r + 28, 'x', 65507 - 28);
		out(s, r, s->stream ? 65536 : 65507);
		break;
	case BAD_VERIFIER:
		put32(r + 16, 0xFFFFFFFFu);
		out(s, r, len);
		break;
	case BAD_STATS:
		put32(r + 20, 99);
		out(s, r, len);
		put32(r + 8, 1);
		put32(r + 12, 7);
		out(s, r, len);
		put32(r + 4, 5);
		out(s, r, len);
		break;
	case RPC_MISMATCH:
		put32(r + 8, 1);
		put32(r + 12, 0);
		put32(r + 16, 2);
		put32(r + 20, 2);
		out(s, r, 24);
		break;
	case MARK_HUGE:
	case MARK_FINAL_HUGE:
		put32(r, atomic_load(&mode) == MARK_HUGE ? 0x7FFFFFFFu : 0xFFFFFFFFu);
		(void)sec_send_all(s->fd, r, 64);
		break;
	case SHORT_CLOSE:
		put32(r, 0x80000064u);
		(void)sec_send_all(s->fd, r, 54);
		return false;
	case STALL_HALF:
		put32(r, 0x80000064u);
		(void)sec_send_all(s->fd, r, 54);
		return true;
	case FRAG_FLOOD: {
		static unsigned char f[4 + 65536];
		put32(f, 65536);
		for (int i = 0; i < 2048 && !atomic_load(&stopping); i++)
			if (!sec_send_all(s->fd, f, sizeof(f)))
				return false;
		break;
	}
	case DRIP: {
		unsigned char mark[4];
		put32(mark, 0x80000000u | (uint32_t)len);
		(void)sec_send_all(s->fd, mark, 4);
		for (size_t k = 0; k < len; k++) {
			if (atomic_load(&mode) != DRIP || atomic_load(&stopping)) {
				/* the client gave up: finish the record so the stream stays in step */
				return sec_send_all(s->fd, r + k, len - k);
			}
			if (!sec_send_all(s->fd, r + k, 1))
				return false;
			usleep(50000);
		}
		break;
	}
	}
	return true;
}

static void *udp_server(void *arg)
{
	unsigned char call[65536];
	(void)arg;
	while (!atomic_load(&stopping)) {
		sink s = {ufd, false, {0}, sizeof(s.to)};
		struct pollfd pf = {ufd, POLLIN, 0};
		ssize_t n;
		if (poll(&pf, 1, 50) <= 0)
			continue;
		n = recvfrom(ufd, call, sizeof(call), 0, (struct sockaddr *)&s.to, &s.tolen);
		if (n >= 40)
			respond(&s, call);
	}
	return NULL;
}

static void *tcp_server(void *arg)
{
	unsigned char call[65536];
	int cfd = -1;
	(void)arg;
	while (!atomic_load(&stopping)) {
		struct pollfd pf[2] = {{lfd, POLLIN, 0}, {cfd, POLLIN, 0}};
		if (poll(pf, 2, 50) <= 0)
			continue;
		if (pf[0].revents) {
			int nfd = accept(lfd, NULL, NULL);
			if (nfd >= 0) {
				if (cfd >= 0)
					close(cfd);
				cfd = nfd;
			}
			continue;
		}
		if (cfd >= 0 && pf[1].revents) {
			ssize_t n = sec_recv_record(cfd, call, sizeof(call), 1000);
			sink s = {cfd, true, {0}, 0};
			if (n < 0 || (n >= 40 && !respond(&s, call))) {
				close(cfd);
				cfd = -1;
			}
		}
	}
	if (cfd >= 0)
		close(cfd);
	return NULL;
}

static int bound_socket(int type, int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, type, 0);
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		return -1;
	if (type == SOCK_STREAM && listen(fd, 16) != 0)
		return -1;
	getsockname(fd, (struct sockaddr *)&a, &al);
	*port = ntohs(a.sin_port);
	return fd;
}

static int setup(void **st)
{
	(void)st;
	signal(SIGPIPE, SIG_IGN);
	if ((ufd = bound_socket(SOCK_DGRAM, &uport)) < 0 ||
	    (lfd = bound_socket(SOCK_STREAM, &tport)) < 0)
		return -1;
	if (pthread_create(&uthr, NULL, udp_server, NULL) != 0 ||
	    pthread_create(&tthr, NULL, tcp_server, NULL) != 0)
		return -1;
	return 0;
}

static int teardown(void **st)
{
	(void)st;
	atomic_store(&stopping, true);
	pthread_join(uthr, NULL);
	pthread_join(tthr, NULL);
	close(ufd);
	close(lfd);
	return 0;
}

/* ---- the client side -------------------------------------------------------------------- */

static rc_client *client(bool tcp, uint32_t timeout_ms)
{
	char uri[64];
	rc_client *c;
	snprintf(uri, sizeof(uri), "%s://127.0.0.1:%d", tcp ? "tcp" : "udp", tcp ? tport : uport);
	assert_int_equal(rc_client_create(&c, uri, SEC_PROG, 1), RC_OK);
	rc_client_set_timeout(c, timeout_ms);
	rc_client_set_retry(c, 100);
	return c;
}

/* How late a call may end past its deadline: 1 s, 10 s when the suite runs under valgrind
 * (RC_VALGRIND=1, make test-valgrind): a stream reader takes in what keeps arriving up to the
 * record cap (64 MiB, FRAG_FLOOD), tens of ms natively, seconds under valgrind on a loaded VM. */
static int64_t slack_ms(void)
{
	const char *v = getenv("RC_VALGRIND");
	return v && *v && strcmp(v, "0") != 0 ? 10000 : 1000;
}

/* One call in mode m; returns its status, checks it ended by its deadline (plus slack). */
static rc_status call_in(rc_client *c, enum mode m, uint32_t timeout_ms)
{
	sec_bytes arg = {4, "ping"}, res = {0, NULL};
	int64_t t0;
	rc_status st;
	atomic_store(&mode, m);
	t0 = sec_ms();
	st = rc_call(c, P_ECHO, (rc_xdrproc)xdr_sec_opqu, &arg, (rc_xdrproc)xdr_sec_opqu, &res);
	if (sec_ms() - t0 > (int64_t)timeout_ms + slack_ms())
		fail_msg("mode %d: the call took %lld ms (timeout %u)", m, (long long)(sec_ms() - t0),
		         timeout_ms);
	if (st == RC_OK) {
		assert_int_equal(res.len, 4);
		assert_memory_equal(res.val, "abcd", 4);
	}
	rc_xdr_free((rc_xdrproc)xdr_sec_opqu, &res);
	assert_null(res.val);
	atomic_store(&mode, GOOD);
	return st;
}

static void expect(rc_client *c, enum mode m, uint32_t timeout_ms, rc_status want)
{
	rc_status st = call_in(c, m, timeout_ms);
	if (st != want)
		fail_msg("mode %d: %s, want %s", m, rc_status_name(st), rc_status_name(want));
	/* the client works again once the server behaves */
	st = call_in(c, GOOD, timeout_ms);
	if (st != RC_OK)
		fail_msg("after mode %d: the next good call failed with %s", m, rc_status_name(st));
}

static void hostile_udp_replies(void **state)
{
	rc_client *c = client(false, 600);
	(void)state;
	assert_int_equal(call_in(c, GOOD, 600), RC_OK);
	expect(c, SILENT, 600, RC_TIMEDOUT);
	expect(c, WRONG_XID_FLOOD, 600, RC_TIMEDOUT);
	expect(c, TRUNC_THEN_GOOD, 600, RC_OK);
	expect(c, TRUNCATED, 600, RC_TIMEDOUT);   /* a mangled datagram is not the answer */
	expect(c, TRUNC_RESULT, 600, RC_CANTDECODERES); /* as libtirpc's clnt_dg_call */
	expect(c, BAD_VERIFIER, 600, RC_TIMEDOUT);
	expect(c, BAD_STATS, 600, RC_TIMEDOUT);
	sec_alloc_reset();
	expect(c, HUGE_RESULT, 600, RC_CANTDECODERES);
	expect(c, HUGE_RESULT_FULL, 600, RC_CANTDECODERES);
	assert_true(atomic_load(&sec_alloc_max) <= 65536 + 64);
	expect(c, RPC_MISMATCH, 600, RC_VERSMISMATCH);
	{
		rc_error e;
		atomic_store(&mode, RPC_MISMATCH);
		assert_int_equal(rc_call(c, P_NULL, NULL, NULL, NULL, NULL), RC_VERSMISMATCH);
		rc_client_geterr(c, &e);
		assert_int_equal(e.low, 2);
		assert_int_equal(e.high, 2);
		atomic_store(&mode, GOOD);
	}
	rc_client_destroy(c);
}

static void hostile_tcp_replies(void **state)
{
	rc_client *c = client(true, 600);
	(void)state;
	assert_int_equal(call_in(c, GOOD, 600), RC_OK);
	expect(c, SILENT, 600, RC_TIMEDOUT);
	expect(c, WRONG_XID_FLOOD, 600, RC_TIMEDOUT);
	expect(c, TRUNCATED, 600, RC_BADREPLY);
	expect(c, TRUNC_RESULT, 600, RC_CANTDECODERES);
	expect(c, BAD_VERIFIER, 600, RC_BADREPLY);
	expect(c, BAD_STATS, 600, RC_BADREPLY);
	sec_alloc_reset();
	expect(c, HUGE_RESULT, 600, RC_CANTDECODERES);
	expect(c, HUGE_RESULT_FULL, 600, RC_CANTDECODERES);
	expect(c, RPC_MISMATCH, 600, RC_VERSMISMATCH);
	expect(c, MARK_HUGE, 600, RC_MSGTOOLARGE);
	expect(c, MARK_FINAL_HUGE, 600, RC_MSGTOOLARGE);
	/* nothing near 2 GiB was asked for */
	assert_true(atomic_load(&sec_alloc_max) <= (size_t)1 << 20);
	expect(c, SHORT_CLOSE, 600, RC_CANTRECV);
	expect(c, DRIP, 600, RC_TIMEDOUT);  /* a trickle does not stretch the deadline */
	/* half a record, then silence on an open connection: the call times out, and the next
	 * one does not read its reply as the rest of that record (a fresh connection) */
	expect(c, STALL_HALF, 600, RC_TIMEDOUT);
	assert_int_equal(call_in(c, GOOD, 600), RC_OK);
	rc_client_destroy(c);
}

/* Non-final fragments without end: the client gives up at its record cap (64 MiB + 64 KiB) or its
 * deadline, whichever comes first, and never buffers more than the cap. */
static void endless_fragments_to_a_client(void **state)
{
	rc_client *c = client(true, 3000);
	rc_status st;
	(void)state;
	sec_alloc_reset();
	st = call_in(c, FRAG_FLOOD, 3000);
	print_message("endless fragments: %s; largest allocation %zu bytes\n", rc_status_name(st),
	              (size_t)atomic_load(&sec_alloc_max));
	assert_true(st == RC_MSGTOOLARGE || st == RC_TIMEDOUT);
	assert_true(atomic_load(&sec_alloc_max) <= ((size_t)64 << 20) + (128 << 10));
	assert_int_equal(call_in(c, GOOD, 3000), RC_OK);
	rc_client_destroy(c);
}

/* The same floods while calls wait in the general path (started calls, two in flight). */
static void hostile_replies_to_started_calls(void **state)
{
	for (int tcp = 0; tcp <= 1; tcp++) {
		rc_client *c = client(tcp, 500);
		sec_bytes arg = {4, "ping"}, res[2] = {{0, NULL}, {0, NULL}};
		rc_async *a[2];
		(void)state;
		atomic_store(&mode, WRONG_XID_FLOOD);
		for (int i = 0; i < 2; i++)
			assert_int_equal(rc_call_start(c, P_ECHO, (rc_xdrproc)xdr_sec_opqu, &arg,
			                               (rc_xdrproc)xdr_sec_opqu, &res[i], NULL, NULL, &a[i]),
			                 RC_OK);
		for (int i = 0; i < 2; i++) {
			assert_int_equal(rc_async_wait(a[i], 2000), RC_TIMEDOUT);
			rc_async_release(a[i]);
			rc_xdr_free((rc_xdrproc)xdr_sec_opqu, &res[i]);
		}
		atomic_store(&mode, GOOD);
		assert_int_equal(call_in(c, GOOD, 500), RC_OK);
		rc_client_destroy(c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hostile_udp_replies),
		cmocka_unit_test(hostile_tcp_replies),
		cmocka_unit_test(endless_fragments_to_a_client),
		cmocka_unit_test(hostile_replies_to_started_calls),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

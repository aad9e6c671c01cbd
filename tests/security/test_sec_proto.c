/*
 * Attack classes 3, 4 and 5: protocol violations, record marking, malformed credentials.
 *
 *  3  RPC versions other than 2 get RPC_MISMATCH (low = high = 2); reply messages and unknown
 *     message types are dropped without effect -- over TCP and UDP, 10,000 at a time.
 *  4  Record marks of 0x7FFFFFFF / 0xFFFFFFFF / max_record+1, endless non-final fragments and
 *     records over the cap close the connection without allocating the claimed size; trailing
 *     garbage inside a record and arguments cut at every byte offset get GARBAGE_ARGS.
 *  5  AUTH_SYS bodies of 0-19 bytes, machine names longer than the body, 17+ gids, bodies and
 *     verifiers over 400 bytes get AUTH_ERROR / AUTH_BADCRED, over TCP and UDP.
 *
 * After each attack the server answers a fresh null call.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sec_util.h"

static const char *const uris[] = {"udp://127.0.0.1:0", "tcp://127.0.0.1:0", NULL};
static sec_server S;
#define UDP S.uri[0]
#define TCP S.uri[1]

static int setup(void **st)
{
	(void)st;
	/* a 4 MiB record cap, set (the default carries 64 MiB messages, NFS's preferred size):
	 * the record-marking cases below check the cap at work, whatever its value */
	static const rc_server_limits lim = {.max_record = 4u << 20};
	return sec_start(&S, uris, &lim, 1, 0);
}

static int teardown(void **st)
{
	(void)st;
	sec_stop(&S);
	return 0;
}

static void server_still_answers(void)
{
	assert_int_equal(sec_null_call(UDP, 2000), RC_OK);
	assert_int_equal(sec_null_call(TCP, 2000), RC_OK);
}

/*
 * Send msg as one record on fd followed by a null call with xid `marker`, and collect what
 * comes back before the marker's reply: returns the kind of the first reply to msg (-2 if
 * none came), asserting that at most one did.
 */
static int tcp_probe(int fd, const unsigned char *msg, size_t len, uint32_t marker)
{
	unsigned char m[64], r[1024];
	int kind = -2, seen = 0;

	assert_true(sec_send_record(fd, msg, len));
	assert_true(sec_send_record(fd, m, sec_call(m, marker, P_NULL, NULL, 0)));
	for (;;) {
		uint32_t xid = 0;
		ssize_t n = sec_recv_record(fd, r, sizeof(r), 2000);
		int k;
		if (n < 0)
			fail_msg("no reply to the marker call (%zd)", n);
		k = sec_reply_kind(r, (size_t)n, &xid, NULL, NULL);
		if (xid == marker && k == ACC_SUCCESS)
			break;
		kind = k;
		assert_int_equal(++seen, 1);
	}
	return kind;
}

/* The same over UDP: the reply to msg (-2 if none within 200 ms). */
static int udp_probe(int fd, const unsigned char *msg, size_t len)
{
	unsigned char r[1024];
	ssize_t n;
	assert_int_equal(send(fd, msg, len, 0), (ssize_t)len);
	n = sec_recv_dgram(fd, r, sizeof(r), 200);
	if (n < 0)
		return -2;
	return sec_reply_kind(r, (size_t)n, NULL, NULL, NULL);
}

/* ---- 3: protocol violations ------------------------------------------------------------ */

static void rpc_version_mismatch_tcp_udp(void **state)
{
	static const uint32_t vers[] = {0, 1, 3, 4, 0x80000002u, 0xFFFFFFFFu};
	unsigned char m[256], r[256];
	int tfd = sec_tcp(TCP), ufd = sec_udp(UDP);
	(void)state;
	for (size_t i = 0; i < sizeof(vers) / sizeof(vers[0]); i++) {
		size_t len = sec_mkcall(m, 50 + (uint32_t)i, vers[i], SEC_PROG, 1, P_NULL, 0, NULL, 0,
		                        NULL, 0);
		for (int t = 0; t < 2; t++) {
			uint32_t lo = 0, hi = 0, xid = 0;
			ssize_t n;
			if (t == 0) {
				assert_true(sec_send_record(tfd, m, len));
				n = sec_recv_record(tfd, r, sizeof(r), 2000);
			} else {
				assert_int_equal(send(ufd, m, len, 0), (ssize_t)len);
				n = sec_recv_dgram(ufd, r, sizeof(r), 2000);
			}
			assert_int_equal(n, 24);
			assert_int_equal(sec_reply_kind(r, (size_t)n, &xid, &lo, &hi), DEN_RPC_MISMATCH);
			assert_int_equal(xid, 50 + i);
			assert_int_equal(lo, 2);
			assert_int_equal(hi, 2);
		}
	}
	/* version 3 in volume over TCP: 5,000 pipelined, each answered */
	{
		static unsigned char batch[100 * 48];
		size_t blen = 0;
		for (int i = 0; i < 100; i++) {
			size_t len = sec_mkcall(batch + blen + 4, 9000 + (uint32_t)i, 3, SEC_PROG, 1, 0, 0,
			                        NULL, 0, NULL, 0);
			put32(batch + blen, (uint32_t)len | 0x80000000u);
			blen += len + 4;
		}
		for (int round = 0; round < 50; round++) {
			assert_true(sec_send_all(tfd, batch, blen));
			for (int i = 0; i < 100; i++) {
				ssize_t n = sec_recv_record(tfd, r, sizeof(r), 2000);
				assert_int_equal(n, 24);
				assert_int_equal(sec_reply_kind(r, 24, NULL, NULL, NULL), DEN_RPC_MISMATCH);
			}
		}
	}
	close(tfd);
	close(ufd);
	server_still_answers();
}

/* Messages that are not calls: replies (well-formed ones, as a server would send), unknown
 * message types, messages too short to say. */
static size_t not_a_call(unsigned char *m, uint32_t i)
{
	size_t len = sec_call(m, 100000 + i, P_STR, "\0\0\0\1a\0\0\0", 8);
	switch (i % 6) {
	case 0: /* a reply: xid, REPLY, MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS, a result */
		put32(m + 4, 1);
		put32(m + 8, 0);
		put32(m + 12, 0);
		put32(m + 16, 0);
		put32(m + 20, 0);
		return 28;
	case 1: /* a denied reply */
		put32(m + 4, 1);
		put32(m + 8, 1);
		return 24;
	case 2: /* unknown message types */
		put32(m + 4, 2);
		return len;
	case 3:
		put32(m + 4, 0xFFFFFFFFu);
		return len;
	case 4: /* shorter than xid + type */
		return i % 8;
	default: /* a reply with a call's body */
		put32(m + 4, 1);
		return len;
	}
}

static void replies_and_unknown_types_dropped_tcp(void **state)
{
	static unsigned char batch[200 * 80];
	unsigned char r[256], m[64];
	unsigned calls0 = atomic_load(&sec_calls);
	int fd = sec_tcp(TCP);
	(void)state;
	/* 10,000 messages that are not calls, 200 per send, then a null call: its reply is the
	 * first thing that comes back */
	for (uint32_t round = 0; round < 50; round++) {
		size_t blen = 0;
		for (uint32_t i = 0; i < 200; i++) {
			size_t len = not_a_call(batch + blen + 4, round * 200 + i);
			put32(batch + blen, (uint32_t)len | 0x80000000u);
			blen += len + 4;
		}
		assert_true(sec_send_all(fd, batch, blen));
	}
	assert_true(sec_send_record(fd, m, sec_call(m, 31337, P_NULL, NULL, 0)));
	{
		uint32_t xid = 0;
		ssize_t n = sec_recv_record(fd, r, sizeof(r), 5000);
		assert_int_equal(n, 24);
		assert_int_equal(sec_reply_kind(r, 24, &xid, NULL, NULL), ACC_SUCCESS);
		assert_int_equal(xid, 31337);
	}
	/* and nothing else is on the way */
	assert_int_equal(sec_recv_record(fd, r, sizeof(r), 200), -1);
	assert_int_equal(atomic_load(&sec_calls), calls0);
	close(fd);
	server_still_answers();
}

static void replies_and_unknown_types_dropped_udp(void **state)
{
	unsigned char r[256], m[64];
	unsigned calls0 = atomic_load(&sec_calls);
	int fd = sec_udp(UDP);
	(void)state;
	for (uint32_t i = 0; i < 10000; i++) {
		size_t len = not_a_call(m, i);
		assert_int_equal(send(fd, m, len, 0), (ssize_t)len);
		if (i % 64 == 63)
			usleep(100); /* let the server keep up: its socket buffer is not the point */
	}
	{
		uint32_t xid = 0;
		ssize_t n = -1;
		/* the null call is retransmitted (same xid) in case the flood overran the server's
		 * socket buffer and it was dropped there; nothing else may come back */
		for (int i = 0; i < 10 && n < 0; i++) {
			assert_int_equal(send(fd, m, sec_call(m, 31338, P_NULL, NULL, 0), 0), 40);
			n = sec_recv_dgram(fd, r, sizeof(r), 500);
		}
		assert_int_equal(n, 24);
		assert_int_equal(sec_reply_kind(r, 24, &xid, NULL, NULL), ACC_SUCCESS);
		assert_int_equal(xid, 31338);
	}
	/* nothing else comes back (but a second answer to a retransmitted null call) */
	{
		ssize_t n;
		while ((n = sec_recv_dgram(fd, r, sizeof(r), 200)) >= 0)
			assert_true(n >= 4 && get32(r) == 31338);
	}
	assert_int_equal(atomic_load(&sec_calls), calls0);
	close(fd);
	server_still_answers();
}

/* ---- 4: record marking ------------------------------------------------------------------ */

/* Send the record-mark word mark and `body` bytes after it; the server must close. */
static void mark_closes(uint32_t mark, size_t body)
{
	unsigned char m[64], r[64];
	static unsigned char zeros[65536];
	int fd = sec_tcp(TCP);

	/* a first call sets the connection up */
	assert_true(sec_send_record(fd, m, sec_call(m, 1, P_NULL, NULL, 0)));
	assert_true(sec_recv_record(fd, r, sizeof(r), 2000) > 0);
	sec_alloc_reset();
	put32(m, mark);
	assert_true(sec_send_all(fd, m, 4));
	while (body > 0) {
		size_t k = body < sizeof(zeros) ? body : sizeof(zeros);
		if (!sec_send_all(fd, zeros, k))
			break; /* closed while we were sending: fine */
		body -= k;
	}
	if (!sec_wait_closed(fd, 3000))
		fail_msg("record mark 0x%08x: connection still open", mark);
	/* nothing near the claimed size was allocated */
	assert_true(atomic_load(&sec_alloc_max) <= (size_t)1 << 20);
	close(fd);
}

static void huge_record_marks_close_the_connection(void **state)
{
	(void)state;
	mark_closes(0x7FFFFFFFu, 0);             /* non-final, 2 GiB */
	mark_closes(0x7FFFFFFFu, 100);
	mark_closes(0xFFFFFFFFu, 8);             /* final, 2 GiB */
	mark_closes(0x80000000u | ((4u << 20) + 1), 16); /* one byte over the 4 MiB cap */
	server_still_answers();
}

static void endless_fragments_close_at_the_cap(void **state)
{
	static unsigned char frag[4 + 65536];
	size_t sent = 0;
	int fd = sec_tcp(TCP);
	bool closed = false;
	(void)state;
	put32(frag, 65536); /* non-final, 64 KiB of zeros */
	sec_alloc_reset();
	/* the cap is 4 MiB: the connection must be gone well before 16 MiB were sent */
	while (sent < ((size_t)16 << 20)) {
		if (!sec_send_all(fd, frag, sizeof(frag))) {
			closed = true;
			break;
		}
		sent += sizeof(frag);
	}
	if (!closed)
		closed = sec_wait_closed(fd, 3000);
	print_message("endless fragments: closed after %zu bytes sent; largest allocation %zu\n",
	              sent, (size_t)atomic_load(&sec_alloc_max));
	assert_true(closed);
	assert_true(atomic_load(&sec_alloc_max) <= ((size_t)4 << 20) + (128 << 10));
	close(fd);

	/* two fragments that are each under the cap but add up over it */
	fd = sec_tcp(TCP);
	{
		unsigned char h[4];
		static unsigned char zeros[1 << 20];
		put32(h, 3u << 20);
		assert_true(sec_send_all(fd, h, 4));
		for (int i = 0; i < 3; i++)
			assert_true(sec_send_all(fd, zeros, sizeof(zeros)));
		put32(h, 0x80000000u | (2u << 20));
		(void)sec_send_all(fd, h, 4);
		assert_true(sec_wait_closed(fd, 3000));
	}
	close(fd);
	server_still_answers();
}

static void fragmented_call_is_reassembled(void **state)
{
	unsigned char m[256], r[256], args[16];
	size_t len;
	int fd = sec_tcp(TCP);
	ssize_t n;
	(void)state;
	put32(args, 5);
	memcpy(args + 4, "hello\0\0\0", 8);
	len = sec_call(m, 77, P_STR, args, 12);
	/* one fragment per byte, then an empty last fragment */
	for (size_t i = 0; i < len; i++) {
		unsigned char f[5];
		put32(f, 1);
		f[4] = m[i];
		assert_true(sec_send_all(fd, f, 5));
	}
	put32(m, 0x80000000u);
	assert_true(sec_send_all(fd, m, 4));
	n = sec_recv_record(fd, r, sizeof(r), 2000);
	assert_int_equal(n, 28);
	assert_int_equal(sec_reply_kind(r, 28, NULL, NULL, NULL), ACC_SUCCESS);
	assert_int_equal(get32(r + 24), 5);
	close(fd);
}

/* A call with a nested argument: ARRS with three pairs. */
static size_t pairs_call(unsigned char *m, uint32_t xid)
{
	unsigned char a[128];
	size_t n = 0;
	static const char *const s[] = {"alpha", "", "gamma-delta"};
	put32(a, 3);
	n = 4;
	for (int i = 0; i < 3; i++) {
		uint32_t l = (uint32_t)strlen(s[i]);
		put32(a + n, l);
		n += 4;
		memset(a + n, 0, (l + 3) & ~3u);
		memcpy(a + n, s[i], l);
		n += (l + 3) & ~3u;
		put32(a + n, (uint32_t)(i * 1000));
		n += 4;
	}
	return sec_call(m, xid, P_ARRS, a, n);
}

static void trailing_garbage_in_a_record(void **state)
{
	unsigned char m[512];
	size_t len = pairs_call(m, 400);
	int fd = sec_tcp(TCP), ufd = sec_udp(UDP);
	(void)state;
	assert_int_equal(tcp_probe(fd, m, len, 1), ACC_SUCCESS);
	for (size_t extra = 1; extra <= 64; extra++) {
		memset(m + len, 0xA5, extra);
		put32(m, 400 + (uint32_t)extra);
		assert_int_equal(tcp_probe(fd, m, len + extra, 1), ACC_GARBAGE_ARGS);
		assert_int_equal(udp_probe(ufd, m, len + extra), ACC_GARBAGE_ARGS);
	}
	close(fd);
	close(ufd);
	server_still_answers();
}

static void truncated_at_every_offset(void **state)
{
	unsigned char m[512];
	size_t len = pairs_call(m, 500);
	int fd = sec_tcp(TCP), ufd = sec_udp(UDP);
	unsigned calls0 = atomic_load(&sec_calls);
	(void)state;
	for (size_t k = 0; k < len; k++) {
		int kt = tcp_probe(fd, m, k, 1);
		if (k >= 40) {
			/* the header is whole: the arguments are garbage */
			assert_int_equal(kt, ACC_GARBAGE_ARGS);
			assert_int_equal(udp_probe(ufd, m, k), ACC_GARBAGE_ARGS);
		} else if (k < 12) {
			/* not even the RPC version: dropped */
			assert_int_equal(kt, -2);
		} else {
			/* a cut call header is refused, never served */
			assert_true(kt == -2 || kt == DEN_AUTH_BADCRED || kt == ACC_GARBAGE_ARGS);
		}
	}
	assert_int_equal(atomic_load(&sec_calls), calls0);
	assert_int_equal(tcp_probe(fd, m, len, 1), ACC_SUCCESS);
	close(fd);
	close(ufd);
	server_still_answers();
}

/* ---- 5: malformed credentials -------------------------------------------------------------- */

/* An AUTH_SYS body: stamp, machine name, uid, gid, gids. */
static uint32_t authsys(unsigned char *b, const char *machine, uint32_t mlen_claim, uint32_t ngids,
                        uint32_t ngids_claim)
{
	uint32_t n = 0, ml = (uint32_t)strlen(machine);
	put32(b + n, 12345); n += 4;
	put32(b + n, mlen_claim); n += 4;
	memset(b + n, 0, (ml + 3) & ~3u);
	memcpy(b + n, machine, ml);
	n += (ml + 3) & ~3u;
	put32(b + n, 1000); n += 4;
	put32(b + n, 100); n += 4;
	put32(b + n, ngids_claim); n += 4;
	for (uint32_t i = 0; i < ngids; i++) {
		put32(b + n, 2000 + i);
		n += 4;
	}
	return n;
}

/* Both transports: the call with AUTH_SYS body (cred, clen) gets `want`. */
static void auth_case(int tfd, int ufd, const unsigned char *cred, uint32_t clen, int want)
{
	static unsigned char m[70000];
	static uint32_t xid = 600;
	size_t len = sec_mkcall(m, ++xid, 2, SEC_PROG, 1, P_WHO, 1, cred, clen, NULL, 0);
	int kt = tcp_probe(tfd, m, len, 1), ku = udp_probe(ufd, m, len);
	if (kt != want || ku != want)
		fail_msg("AUTH_SYS body of %u bytes: tcp %d udp %d, want %d", clen, kt, ku, want);
}

static void malformed_auth_sys_tcp_udp(void **state)
{
	static unsigned char body[70000];
	char machine[300];
	int tfd = sec_tcp(TCP), ufd = sec_udp(UDP);
	uint32_t n;
	(void)state;
	memset(body, 0, sizeof(body));
	/* bodies of 0..19 bytes */
	for (uint32_t k = 0; k < 20; k++)
		auth_case(tfd, ufd, body, k, DEN_AUTH_BADCRED);
	/* machine name longer than the body, or than 255 */
	static const uint32_t mlens[] = {1, 4, 200, 255, 256, 0x7FFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFDu};
	for (size_t i = 0; i < sizeof(mlens) / sizeof(mlens[0]); i++) {
		n = authsys(body, "", mlens[i], 0, 0);
		auth_case(tfd, ufd, body, n, DEN_AUTH_BADCRED);
	}
	/* 17 and more gids; gid counts beyond the body */
	static const uint32_t ng[] = {17, 18, 100, 0x40000000u, 0xFFFFFFFFu};
	for (size_t i = 0; i < sizeof(ng) / sizeof(ng[0]); i++) {
		n = authsys(body, "host", 4, ng[i] < 100 ? ng[i] : 0, ng[i]);
		auth_case(tfd, ufd, body, n, DEN_AUTH_BADCRED);
	}
	/* 16 gids claimed, 15 present; 3 claimed, 4 present (a body not exactly consumed) */
	n = authsys(body, "host", 4, 15, 16);
	auth_case(tfd, ufd, body, n, DEN_AUTH_BADCRED);
	n = authsys(body, "host", 4, 4, 3);
	auth_case(tfd, ufd, body, n, DEN_AUTH_BADCRED);
	/* credentials over 400 bytes (a 255-byte name and 16 gids is 348: valid) */
	memset(machine, 'm', 255);
	machine[255] = '\0';
	n = authsys(body, machine, 255, 16, 16);
	assert_int_equal(n, 340);
	auth_case(tfd, ufd, body, n, ACC_SUCCESS);
	auth_case(tfd, ufd, body, 401, DEN_AUTH_BADCRED);
	auth_case(tfd, ufd, body, 404, DEN_AUTH_BADCRED);
	auth_case(tfd, ufd, body, 4096, DEN_AUTH_BADCRED);
	auth_case(tfd, ufd, body, 65000, DEN_AUTH_BADCRED);
	/* the well-formed one reaches the routine with the right fields */
	{
		unsigned char m[600], r[600];
		ssize_t rn;
		n = authsys(body, "client.example", 14, 2, 2);
		assert_true(sec_send_record(tfd, m, sec_mkcall(m, 700, 2, SEC_PROG, 1, P_WHO, 1, body,
		                                               n, NULL, 0)));
		rn = sec_recv_record(tfd, r, sizeof(r), 2000);
		assert_true(rn > 28);
		assert_int_equal(sec_reply_kind(r, (size_t)rn, NULL, NULL, NULL), ACC_SUCCESS);
		assert_int_equal(get32(r + 24), strlen("client.example:1000:100:2"));
		assert_memory_equal(r + 28, "client.example:1000:100:2", get32(r + 24));
	}
	/* an unknown flavor is rejected, not parsed */
	{
		unsigned char m[600];
		size_t len = sec_mkcall(m, 701, 2, SEC_PROG, 1, P_WHO, 99, body, 40, NULL, 0);
		assert_int_equal(tcp_probe(tfd, m, len, 1), DEN_AUTH_REJECTEDCRED);
		assert_int_equal(udp_probe(ufd, m, len), DEN_AUTH_REJECTEDCRED);
	}
	/* a verifier over 400 bytes */
	{
		unsigned char m[1200];
		size_t len = sec_mkcall(m, 702, 2, SEC_PROG, 1, P_NULL, 0, NULL, 0, NULL, 0);
		put32(m + 36, 404);
		memset(m + 40, 0, 404);
		assert_int_equal(tcp_probe(tfd, m, len + 404, 1), DEN_AUTH_BADCRED);
		assert_int_equal(udp_probe(ufd, m, len + 404), DEN_AUTH_BADCRED);
	}
	close(tfd);
	close(ufd);
	server_still_answers();
}

static void malformed_auth_volume_tcp(void **state)
{
	static unsigned char batch[100 * 512];
	unsigned char body[512], r[256];
	unsigned calls0 = atomic_load(&sec_calls);
	int fd = sec_tcp(TCP);
	(void)state;
	memset(body, 0, sizeof(body));
	for (uint32_t round = 0; round < 100; round++) {
		size_t blen = 0;
		for (uint32_t i = 0; i < 100; i++) {
			uint32_t v = round * 100 + i, clen;
			switch (v % 4) {
			case 0: clen = v % 20; break;                                  /* too short */
			case 1: clen = authsys(body, "", 0xFFFFFFFFu - v, 0, 0); break; /* long name */
			case 2: clen = authsys(body, "h", 1, 0, 17 + v); break;        /* gids */
			default: clen = 401 + v % 100; break;                           /* too long */
			}
			size_t len = sec_mkcall(batch + blen + 4, v, 2, SEC_PROG, 1, P_WHO, 1, body,
			                        clen > 500 ? 500 : clen, NULL, 0);
			if (clen > 500)
				put32(batch + blen + 4 + 28, clen);
			put32(batch + blen, (uint32_t)len | 0x80000000u);
			blen += len + 4;
		}
		assert_true(sec_send_all(fd, batch, blen));
		for (uint32_t i = 0; i < 100; i++) {
			ssize_t n = sec_recv_record(fd, r, sizeof(r), 2000);
			assert_int_equal(n, 20);
			assert_int_equal(sec_reply_kind(r, 20, NULL, NULL, NULL), DEN_AUTH_BADCRED);
		}
	}
	assert_int_equal(atomic_load(&sec_calls), calls0);
	close(fd);
	server_still_answers();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rpc_version_mismatch_tcp_udp),
		cmocka_unit_test(replies_and_unknown_types_dropped_tcp),
		cmocka_unit_test(replies_and_unknown_types_dropped_udp),
		cmocka_unit_test(huge_record_marks_close_the_connection),
		cmocka_unit_test(endless_fragments_close_at_the_cap),
		cmocka_unit_test(fragmented_call_is_reassembled),
		cmocka_unit_test(trailing_garbage_in_a_record),
		cmocka_unit_test(truncated_at_every_offset),
		cmocka_unit_test(malformed_auth_sys_tcp_udp),
		cmocka_unit_test(malformed_auth_volume_tcp),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * test_udp_batch -- the UDP transport's batch operations (recv_batch: recvmmsg, send_batch:
 * sendmmsg) against a plain socket of the test's own over loopback: datagrams come in order
 * with their senders, an over-long one is dropped and the rest move down, an empty socket
 * says RC_AGAIN, a batch is capped at RC_TP_BATCH, and a datagram the kernel refuses in the
 * middle of a batch is skipped while the others go out.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "transports/transport.h"

typedef struct fixture {
	rc_tp *lsn;                /* the transport under test: a UDP listener */
	struct sockaddr_in at;     /* its address */
	int peer;                  /* the test's own socket */
	struct sockaddr_in peerat; /* its address */
} fixture;

static int setup(void **state)
{
	static fixture f;
	const rc_tp_kind *k = rc__tp_find("udp");
	rc_uri u;
	char bound[128];
	socklen_t len = sizeof(f.peerat);

	if (k == NULL || rc__uri_parse("udp://127.0.0.1:0", &u) != RC_OK ||
	    k->listen(&u, 65536, NULL, &f.lsn, bound, sizeof bound) != RC_OK ||
	    rc__tp_set_nonblock(f.lsn, true) != RC_OK)
		return -1;
	memset(&f.at, 0, sizeof f.at);
	f.at.sin_family = AF_INET;
	f.at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f.at.sin_port = htons((uint16_t)atoi(strrchr(bound, ':') + 1));
	f.peer = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&f.peerat, 0, sizeof f.peerat);
	f.peerat.sin_family = AF_INET;
	f.peerat.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (f.peer < 0 || bind(f.peer, (struct sockaddr *)&f.peerat, sizeof f.peerat) != 0 ||
	    getsockname(f.peer, (struct sockaddr *)&f.peerat, &len) != 0)
		return -1;
	struct timeval tv = {2, 0}; /* a receive that should find something never hangs */
	setsockopt(f.peer, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	f->lsn->vt->close(f->lsn);
	close(f->peer);
	return 0;
}

/* The test socket sends a datagram of n bytes, each byte tag. */
static void send_one(fixture *f, size_t n, unsigned char tag)
{
	unsigned char buf[4096];
	memset(buf, tag, n);
	assert_int_equal(sendto(f->peer, buf, n, 0, (struct sockaddr *)&f->at, sizeof f->at),
	                 (ssize_t)n);
}

/* Slots of cap bytes each over one buffer. */
static void slots(rc_tp_dgram *v, unsigned n, unsigned char *mem, size_t cap)
{
	for (unsigned i = 0; i < n; i++) {
		v[i].buf = mem + i * cap;
		v[i].cap = cap;
		v[i].len = 0;
	}
}

static void recv_in_order_with_senders(void **state)
{
	fixture *f = *state;
	static unsigned char mem[8 * 512];
	rc_tp_dgram v[8];
	unsigned got = 99;

	slots(v, 8, mem, 512);
	assert_int_equal(f->lsn->vt->recv_batch(f->lsn, v, 8, &got), RC_AGAIN); /* empty */
	assert_int_equal(got, 0);
	for (unsigned i = 0; i < 5; i++)
		send_one(f, 10 + i, (unsigned char)('a' + i));
	assert_int_equal(f->lsn->vt->recv_batch(f->lsn, v, 8, &got), RC_OK);
	assert_int_equal(got, 5);
	for (unsigned i = 0; i < 5; i++) {
		const struct sockaddr_in *from = (const struct sockaddr_in *)&v[i].peer.ss;
		assert_int_equal(v[i].len, 10 + i);
		assert_int_equal(v[i].buf[0], 'a' + i);
		assert_int_equal(v[i].buf[v[i].len - 1], 'a' + i);
		assert_int_equal(v[i].peer.len, sizeof(struct sockaddr_in));
		assert_int_equal(from->sin_port, f->peerat.sin_port);
	}
	assert_int_equal(f->lsn->vt->recv_batch(f->lsn, v, 8, &got), RC_AGAIN);
}

static void over_long_is_dropped_and_rest_move_down(void **state)
{
	fixture *f = *state;
	static unsigned char mem[4 * 100];
	rc_tp_dgram v[4];
	unsigned got = 0;

	slots(v, 4, mem, 100);
	send_one(f, 20, 'x');
	send_one(f, 2000, 'L'); /* over its slot: dropped */
	send_one(f, 30, 'y');
	send_one(f, 100, 'z'); /* exactly a slot: kept */
	assert_int_equal(f->lsn->vt->recv_batch(f->lsn, v, 4, &got), RC_OK);
	assert_int_equal(got, 3);
	assert_true(v[0].len == 20 && v[0].buf[0] == 'x');
	assert_true(v[1].len == 30 && v[1].buf[0] == 'y' && v[1].buf[29] == 'y');
	assert_true(v[2].len == 100 && v[2].buf[0] == 'z' && v[2].buf[99] == 'z');
	for (unsigned i = 0; i < 4; i++) /* the slots are still the four buffers, permuted */
		assert_true(v[i].buf >= mem && v[i].buf < mem + sizeof mem && v[i].cap == 100);
	/* only over-long ones waiting: nothing to hand back */
	send_one(f, 3000, 'L');
	assert_int_equal(f->lsn->vt->recv_batch(f->lsn, v, 4, &got), RC_AGAIN);
	assert_int_equal(got, 0);
}

static void batch_is_capped(void **state)
{
	fixture *f = *state;
	static unsigned char mem[(RC_TP_BATCH + 4) * 64];
	rc_tp_dgram v[RC_TP_BATCH + 4];
	unsigned got = 0, total = 0;

	slots(v, RC_TP_BATCH + 4, mem, 64);
	for (unsigned i = 0; i < RC_TP_BATCH + 4; i++)
		send_one(f, 8, (unsigned char)i);
	assert_int_equal(f->lsn->vt->recv_batch(f->lsn, v, RC_TP_BATCH + 4, &got), RC_OK);
	assert_int_equal(got, RC_TP_BATCH);
	total += got;
	for (unsigned i = 0; i < got; i++)
		assert_int_equal(v[i].buf[0], (unsigned char)i);
	assert_int_equal(f->lsn->vt->recv_batch(f->lsn, v, RC_TP_BATCH, &got), RC_OK);
	assert_int_equal(got, 4);
	assert_int_equal(v[0].buf[0], (unsigned char)RC_TP_BATCH);
	total += got;
	assert_int_equal(total, RC_TP_BATCH + 4);
}

static void send_batch_skips_a_refused_one(void **state)
{
	fixture *f = *state;
	unsigned char a[16], b[16], c[16], got[64];
	rc_tp_dgram v[3];
	unsigned sent = 0;
	struct sockaddr_in bad;

	memset(a, 'A', sizeof a);
	memset(b, 'B', sizeof b);
	memset(c, 'C', sizeof c);
	memset(v, 0, sizeof v);
	v[0].buf = a;
	v[0].len = 16;
	v[1].buf = b;
	v[1].len = 16;
	v[2].buf = c;
	v[2].len = 5;
	for (unsigned i = 0; i < 3; i++) {
		memcpy(&v[i].peer.ss, &f->peerat, sizeof f->peerat);
		v[i].peer.len = sizeof f->peerat;
	}
	/* the middle one to port 0: the kernel refuses it (EINVAL) */
	memset(&bad, 0, sizeof bad);
	bad.sin_family = AF_INET;
	bad.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	memcpy(&v[1].peer.ss, &bad, sizeof bad);
	assert_int_equal(f->lsn->vt->send_batch(f->lsn, v, 3, &sent), RC_OK);
	assert_int_equal(sent, 3);
	assert_int_equal(recv(f->peer, got, sizeof got, 0), 16);
	assert_int_equal(got[0], 'A');
	assert_int_equal(recv(f->peer, got, sizeof got, 0), 5);
	assert_int_equal(got[0], 'C');
	assert_int_equal(recv(f->peer, got, sizeof got, MSG_DONTWAIT), -1); /* no 'B' */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(recv_in_order_with_senders),
		cmocka_unit_test(over_long_is_dropped_and_rest_move_down),
		cmocka_unit_test(batch_is_capped),
		cmocka_unit_test(send_batch_skips_a_refused_one),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

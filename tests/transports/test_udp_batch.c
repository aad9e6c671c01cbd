/*
 * test_udp_batch -- the UDP transport's batch operations (recv_batch: recvmmsg, send_batch:
 * sendmmsg) against a plain socket of the test's own over loopback: datagrams come in order
 * with their senders, an over-long one is dropped and the rest move down, an empty socket
 * says RC_AGAIN, a batch is capped at RC_TP_BATCH, and a datagram the kernel refuses in the
 * middle of a batch is skipped while the others go out. Offloads: send_batch sends a run of
 * equal datagrams to one peer as one segmentation-offload send (a socket with UDP_GRO gets it
 * joined, a plain one datagram by datagram), and falls back to one by one where the kernel
 * refuses it (a child in its own network namespace with a 1500-byte MTU); with receive
 * offload on, joined datagrams are cut apart by recv_batch, recv_into and recv, each piece
 * with its sender, the rest waiting (ahead) until taken.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "transports/transport.h"
#include "tests/transports/offload.h"

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

/* Socket fd sends a datagram of n bytes, each byte tag, to `to`. */
static void send_one_to(int fd, const struct sockaddr_in *to, size_t n, unsigned char tag)
{
	unsigned char buf[4096];
	memset(buf, tag, n);
	assert_int_equal(sendto(fd, buf, n, 0, (const struct sockaddr *)to, sizeof *to),
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
	/* empty */
	assert_int_equal(f->lsn->vt->recv_batch(f->lsn, v, 8, &got, RC_TPF_DONTWAIT), RC_AGAIN);
	assert_int_equal(got, 0);
	for (unsigned i = 0; i < 5; i++)
		send_one(f, 10 + i, (unsigned char)('a' + i));
	assert_int_equal(f->lsn->vt->recv_batch(f->lsn, v, 8, &got, RC_TPF_DONTWAIT), RC_OK);
	assert_int_equal(got, 5);
	for (unsigned i = 0; i < 5; i++) {
		const struct sockaddr_in *from = (const struct sockaddr_in *)&v[i].peer.ss;
		assert_int_equal(v[i].len, 10 + i);
		assert_int_equal(v[i].buf[0], 'a' + i);
		assert_int_equal(v[i].buf[v[i].len - 1], 'a' + i);
		assert_int_equal(v[i].peer.len, sizeof(struct sockaddr_in));
		assert_int_equal(from->sin_port, f->peerat.sin_port);
	}
	assert_int_equal(f->lsn->vt->recv_batch(f->lsn, v, 8, &got, RC_TPF_DONTWAIT), RC_AGAIN);
	/* flags 0: a receive that waits for the first and takes what else is there */
	for (unsigned i = 0; i < 3; i++)
		send_one(f, 20, (unsigned char)('p' + i));
	assert_int_equal(f->lsn->vt->recv_batch(f->lsn, v, 8, &got, 0), RC_OK);
	assert_int_equal(got, 3);
	assert_true(v[0].buf[0] == 'p' && v[1].buf[0] == 'q' && v[2].buf[19] == 'r');
	assert_int_equal(f->lsn->vt->recv_batch(f->lsn, v, 8, &got, RC_TPF_DONTWAIT), RC_AGAIN);
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
	assert_int_equal(f->lsn->vt->recv_batch(f->lsn, v, 4, &got, RC_TPF_DONTWAIT), RC_OK);
	assert_int_equal(got, 3);
	assert_true(v[0].len == 20 && v[0].buf[0] == 'x');
	assert_true(v[1].len == 30 && v[1].buf[0] == 'y' && v[1].buf[29] == 'y');
	assert_true(v[2].len == 100 && v[2].buf[0] == 'z' && v[2].buf[99] == 'z');
	for (unsigned i = 0; i < 4; i++) /* the slots are still the four buffers, permuted */
		assert_true(v[i].buf >= mem && v[i].buf < mem + sizeof mem && v[i].cap == 100);
	/* only over-long ones waiting: nothing to hand back */
	send_one(f, 3000, 'L');
	assert_int_equal(f->lsn->vt->recv_batch(f->lsn, v, 4, &got, RC_TPF_DONTWAIT), RC_AGAIN);
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
	assert_int_equal(f->lsn->vt->recv_batch(f->lsn, v, RC_TP_BATCH + 4, &got, RC_TPF_DONTWAIT),
	                 RC_OK);
	assert_int_equal(got, RC_TP_BATCH);
	total += got;
	for (unsigned i = 0; i < got; i++)
		assert_int_equal(v[i].buf[0], (unsigned char)i);
	assert_int_equal(f->lsn->vt->recv_batch(f->lsn, v, RC_TP_BATCH, &got, RC_TPF_DONTWAIT),
	                 RC_OK);
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


/* A listener of the udp kind on 127.0.0.1 (max_record cap), non-blocking, and its address. */
static rc_tp *listener(size_t cap, struct sockaddr_in *at)
{
	const rc_tp_kind *k = rc__tp_find("udp");
	rc_uri u;
	rc_tp *tp = NULL;
	char bound[128];

	if (k == NULL || rc__uri_parse("udp://127.0.0.1:0", &u) != RC_OK ||
	    k->listen(&u, cap, NULL, &tp, bound, sizeof bound) != RC_OK ||
	    rc__tp_set_nonblock(tp, true) != RC_OK)
		return NULL;
	memset(at, 0, sizeof *at);
	at->sin_family = AF_INET;
	at->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	at->sin_port = htons((uint16_t)atoi(strrchr(bound, ':') + 1));
	return tp;
}

/* Send n datagrams of seg bytes (the last of last bytes) from fd to `to` as one segmentation
 * offload send; datagram i is filled with tag + i. */
static void send_joined(int fd, const struct sockaddr_in *to, unsigned n, size_t seg,
                        size_t last, unsigned char tag)
{
	static unsigned char buf[65536];
	union {
		char b[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} ctl;
	uint16_t s16 = (uint16_t)seg;
	size_t len = (n - 1) * seg + last;
	struct iovec iov = {buf, len};
	struct msghdr mh = {.msg_name = (void *)to, .msg_namelen = sizeof *to, .msg_iov = &iov,
	                    .msg_iovlen = 1, .msg_control = ctl.b,
	                    .msg_controllen = sizeof ctl.b};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	for (unsigned i = 0; i < n; i++)
		memset(buf + i * seg, tag + i, i + 1 < n ? seg : last);
	memset(ctl.b, 0, sizeof(ctl.b)); /* (the padding after the data too) */
	cm->cmsg_level = SOL_UDP;
	cm->cmsg_type = UDP_SEGMENT;
	cm->cmsg_len = CMSG_LEN(sizeof s16);
	memcpy(CMSG_DATA(cm), &s16, sizeof s16);
	assert_int_equal(sendmsg(fd, &mh, 0), (ssize_t)len);
}

/* One receive on a plain socket: its length and, when joined, the piece size (*seg). */
static ssize_t recv_gro(int fd, unsigned char *buf, size_t cap, int *seg)
{
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {buf, cap};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
	                    .msg_controllen = sizeof ctl.b};
	ssize_t n = recvmsg(fd, &mh, 0);

	*seg = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO)
			memcpy(seg, CMSG_DATA(cm), sizeof *seg);
	return n;
}

/* A batch for send_batch: datagram i of len[i] bytes, each byte tag[i], to to[i]. */
typedef struct outbatch {
	unsigned char mem[32][2048];
	size_t len[32];
	unsigned char tag[32];
	const struct sockaddr_in *to[32];
	rc_tp_dgram v[32];
} outbatch;

/* Fill b->v[0..n) from the lengths, tags and peers set. */
static void outbatch_fill(outbatch *b, unsigned n)
{
	memset(b->v, 0, n * sizeof b->v[0]);
	for (unsigned i = 0; i < n; i++) {
		memset(b->mem[i], b->tag[i], b->len[i]);
		b->v[i].buf = b->mem[i];
		b->v[i].len = b->len[i];
		memcpy(&b->v[i].peer.ss, b->to[i], sizeof *b->to[i]);
		b->v[i].peer.len = sizeof *b->to[i];
	}
}

static void send_batch_joins_runs_to_one_peer(void **state)
{
	fixture *f = *state;
	static outbatch b;
	static unsigned char r[65536], slotmem[4 * 512];
	rc_tp_dgram in[4];
	unsigned sent = 0, got = 0;
	int one = 1, seg;

	if (!udp_offloads())
		skip();
	/* 10 of 100 bytes, one of 50 (ends the run), 3 of 100, then 2 to the listener itself */
	for (unsigned i = 0; i < 16; i++) {
		b.len[i] = i == 10 ? 50 : 100;
		b.tag[i] = (unsigned char)('a' + i);
		b.to[i] = i < 14 ? &f->peerat : &f->at;
	}
	outbatch_fill(&b, 16);
	assert_int_equal(setsockopt(f->peer, SOL_UDP, UDP_GRO, &one, sizeof one), 0);
	assert_int_equal(f->lsn->vt->send_batch(f->lsn, b.v, 16, &sent), RC_OK);
	assert_int_equal(sent, 16);
	/* the peer, offload on, gets the two runs joined */
	assert_int_equal(recv_gro(f->peer, r, sizeof r, &seg), 1050);
	assert_int_equal(seg, 100);
	for (unsigned i = 0; i < 11; i++)
		assert_true(r[i * 100] == 'a' + i && r[i * 100 + b.len[i] - 1] == 'a' + i);
	assert_int_equal(recv_gro(f->peer, r, sizeof r, &seg), 300);
	assert_int_equal(seg, 100);
	assert_true(r[0] == 'l' && r[299] == 'n');
	one = 0;
	assert_int_equal(setsockopt(f->peer, SOL_UDP, UDP_GRO, &one, sizeof one), 0);
	/* the listener (offload off) gets its two one by one */
	slots(in, 4, slotmem, 512);
	assert_int_equal(f->lsn->vt->recv_batch(f->lsn, in, 4, &got, RC_TPF_DONTWAIT), RC_OK);
	assert_int_equal(got, 2);
	assert_true(in[0].len == 100 && in[0].buf[0] == 'o' && in[1].buf[99] == 'p');
}

static void send_batch_reaches_plain_socket_one_by_one(void **state)
{
	fixture *f = *state;
	static outbatch b;
	static unsigned char r[4096];
	unsigned sent = 0;

	for (unsigned i = 0; i < 32; i++) {
		b.len[i] = i % 7 == 6 ? 20 + i : 64;
		b.tag[i] = (unsigned char)i;
		b.to[i] = &f->peerat;
	}
	outbatch_fill(&b, 32);
	assert_int_equal(f->lsn->vt->send_batch(f->lsn, b.v, 32, &sent), RC_OK);
	assert_int_equal(sent, 32);
	for (unsigned i = 0; i < 32; i++) {
		assert_int_equal(recv(f->peer, r, sizeof r, 0), (ssize_t)b.len[i]);
		assert_true(r[0] == i && r[b.len[i] - 1] == i);
	}
	assert_int_equal(recv(f->peer, r, sizeof r, MSG_DONTWAIT), -1);
}

static void offload_cuts_joined_datagrams(void **state)
{
	fixture *f = *state;
	struct sockaddr_in at;
	rc_tp *lsn;
	static unsigned char mem[32 * 65536];
	unsigned char one[512];
	rc_tp_dgram v[32];
	rc_peer from;
	size_t len;
	unsigned got = 0, seen = 0;

	if (!udp_offloads())
		skip();
	lsn = listener(65536, &at);
	assert_non_null(lsn);
	assert_non_null(lsn->vt->offload);
	assert_true(lsn->vt->offload(lsn));
	assert_false(lsn->vt->ahead(lsn));
	send_joined(f->peer, &at, 21, 64, 30, 'A'); /* 20 of 64 bytes and one of 30 */
	slots(v, 32, mem, 65536);
	assert_int_equal(lsn->vt->recv_batch(lsn, v, 8, &got, RC_TPF_DONTWAIT), RC_OK);
	assert_int_equal(got, 8);
	for (unsigned i = 0; i < 8; i++, seen++) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)&v[i].peer.ss;
		assert_int_equal(v[i].len, 64);
		assert_true(v[i].buf[0] == 'A' + seen && v[i].buf[63] == 'A' + seen);
		assert_int_equal(v[i].peer.len, sizeof *sin);
		assert_int_equal(sin->sin_port, f->peerat.sin_port);
	}
	assert_true(lsn->vt->ahead(lsn)); /* the rest wait, unannounced by the socket */
	assert_int_equal(lsn->vt->recv_into(lsn, one, sizeof one, &len, &from, 0), RC_OK);
	assert_int_equal(len, 64);
	assert_int_equal(one[0], 'A' + seen);
	assert_int_equal(((const struct sockaddr_in *)&from.ss)->sin_port, f->peerat.sin_port);
	seen++;
	assert_int_equal(lsn->vt->recv_batch(lsn, v, 32, &got, RC_TPF_DONTWAIT), RC_OK);
	assert_int_equal(got, 12);
	for (unsigned i = 0; i < 12; i++, seen++)
		assert_true(v[i].len == (seen == 20 ? 30u : 64u) && v[i].buf[0] == 'A' + seen);
	assert_false(lsn->vt->ahead(lsn));
	assert_int_equal(lsn->vt->recv_batch(lsn, v, 32, &got, RC_TPF_DONTWAIT), RC_AGAIN);
	/* a joined packet and a plain datagram in one receive; pieces over max_record dropped */
	send_joined(f->peer, &at, 3, 100, 100, 'a');
	send_one_to(f->peer, &at, 10, 'z');
	assert_int_equal(lsn->vt->recv_batch(lsn, v, 32, &got, RC_TPF_DONTWAIT), RC_OK);
	assert_int_equal(got, 4);
	assert_true(v[0].buf[0] == 'a' && v[1].buf[0] == 'z' && v[1].len == 10);
	assert_true(v[2].buf[0] == 'b' && v[3].buf[0] == 'c' && v[3].len == 100);
	lsn->vt->close(lsn);
	/* a listener whose receivers' buffers cannot hold a joined packet keeps it off */
	lsn = listener(8192, &at);
	assert_non_null(lsn);
	assert_false(lsn->vt->offload(lsn));
	lsn->vt->close(lsn);
}

static void client_cuts_joined_replies(void **state)
{
	fixture *f = *state;
	const rc_tp_kind *k = rc__tp_find("udp");
	char uri[64];
	rc_uri u;
	rc_tp *c = NULL;
	static unsigned char mem[4 * 65536];
	rc_tp_dgram v[4];
	struct sockaddr_in me;
	socklen_t mlen = sizeof me;
	unsigned got = 0;
	void *msg;
	size_t len;

	if (!udp_offloads())
		skip();
	snprintf(uri, sizeof uri, "udp://127.0.0.1:%u", ntohs(f->peerat.sin_port));
	assert_int_equal(rc__uri_parse(uri, &u), RC_OK);
	assert_int_equal(k->connect(&u, 1 << 20, INT64_MAX, &c), RC_OK);
	assert_int_equal(getsockname(c->fd, (struct sockaddr *)&me, &mlen), 0);
	slots(v, 4, mem, 65536);
	/* a client socket turns receive offload on with its first batch receive */
	assert_int_equal(c->vt->recv_batch(c, v, 4, &got, RC_TPF_DONTWAIT), RC_AGAIN);
	send_joined(f->peer, &me, 7, 40, 40, '0');
	assert_int_equal(c->vt->recv(c, &msg, &len, NULL, 0), RC_OK);
	assert_true(len == 40 && ((unsigned char *)msg)[0] == '0');
	assert_true(c->vt->ahead(c));
	assert_int_equal(c->vt->recv_batch(c, v, 4, &got, RC_TPF_DONTWAIT), RC_OK);
	assert_int_equal(got, 4);
	for (unsigned i = 0; i < 4; i++)
		assert_true(v[i].len == 40 && v[i].buf[39] == '1' + i);
	for (unsigned i = 5; i < 7; i++) {
		assert_int_equal(c->vt->recv(c, &msg, &len, NULL, RC_TPF_DONTWAIT), RC_OK);
		assert_true(len == 40 && ((unsigned char *)msg)[0] == '0' + i);
	}
	assert_false(c->vt->ahead(c));
	assert_int_equal(c->vt->recv(c, &msg, &len, NULL, RC_TPF_DONTWAIT), RC_AGAIN);
	c->vt->close(c);
}

/* In a child with its own network namespace (root only), loopback's MTU at 1500: a run of
 * 2000-byte datagrams is more than one segment may be, so the kernel refuses the offload
 * send; send_batch sends them one by one instead (fragmented) and they all arrive. Exit 0:
 * all well, 77: no namespace here, else the failed step. */
static int refused_offload_child(void)
{
	struct ifreq ifr;
	struct sockaddr_in at, pat;
	socklen_t plen = sizeof pat;
	static outbatch b;
	static unsigned char r[4096];
	unsigned sent = 0;
	rc_tp *lsn;
	int s, peer;

	if (unshare(CLONE_NEWNET) != 0)
		return 77;
	if ((s = socket(AF_INET, SOCK_DGRAM, 0)) < 0)
		return 1;
	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	ifr.ifr_mtu = 1500;
	if (ioctl(s, SIOCSIFMTU, &ifr) != 0)
		return 2;
	if (ioctl(s, SIOCGIFFLAGS, &ifr) != 0)
		return 3;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0)
		return 4;
	close(s);
	if ((lsn = listener(65536, &at)) == NULL)
		return 5;
	peer = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&pat, 0, sizeof pat);
	pat.sin_family = AF_INET;
	pat.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(peer, (struct sockaddr *)&pat, sizeof pat) != 0 ||
	    getsockname(peer, (struct sockaddr *)&pat, &plen) != 0)
		return 6;
	for (unsigned i = 0; i < 4; i++) {
		b.len[i] = 2000;
		b.tag[i] = (unsigned char)('w' + i);
		b.to[i] = &pat;
	}
	outbatch_fill(&b, 4);
	for (int round = 0; round < 2; round++) { /* refused each time (that route's MTU) */
		if (lsn->vt->send_batch(lsn, b.v, 4, &sent) != RC_OK || sent != 4)
			return 7;
		for (unsigned i = 0; i < 4; i++)
			if (recv(peer, r, sizeof r, MSG_DONTWAIT) != 2000 || r[0] != b.tag[i] ||
			    r[1999] != b.tag[i])
				return 8;
	}
	lsn->vt->close(lsn);
	return 0;
}

static void refused_offload_falls_back_one_by_one(void **state)
{
	pid_t pid;
	int status = 0;
	(void)state;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(refused_offload_child());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		skip(); /* no network namespace for this user */
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(recv_in_order_with_senders),
		cmocka_unit_test(over_long_is_dropped_and_rest_move_down),
		cmocka_unit_test(batch_is_capped),
		cmocka_unit_test(send_batch_skips_a_refused_one),
		cmocka_unit_test(send_batch_joins_runs_to_one_peer),
		cmocka_unit_test(send_batch_reaches_plain_socket_one_by_one),
		cmocka_unit_test(offload_cuts_joined_datagrams),
		cmocka_unit_test(client_cuts_joined_replies),
		cmocka_unit_test(refused_offload_falls_back_one_by_one),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

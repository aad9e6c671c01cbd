/*
 * test_relay -- the fault-injecting relay itself, in front of a plain UDP echo server (a thread
 * of this test): clean forwarding in order, drop/dup/reorder/delay at the rates asked for and
 * per direction, replies to the right client, the cap on held datagrams, reproducible draws.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "relay.h"

/* ---- a UDP echo server in a thread: echoes "<its source port> <payload>" ------------------ */

typedef struct echo {
	int fd;
	uint16_t port;
	atomic_int stop;
	atomic_int got;
	pthread_t tid;
} echo;

static void *echo_main(void *p)
{
	echo *e = p;
	unsigned char buf[2048], out[2100];
	while (!atomic_load(&e->stop)) {
		struct pollfd pf = {e->fd, POLLIN, 0};
		if (poll(&pf, 1, 20) <= 0)
			continue;
		struct sockaddr_in a;
		socklen_t alen = sizeof a;
		ssize_t n = recvfrom(e->fd, buf, sizeof buf, 0, (struct sockaddr *)&a, &alen);
		if (n < 0)
			continue;
		atomic_fetch_add(&e->got, 1);
		int h = snprintf((char *)out, sizeof out, "%u ", ntohs(a.sin_port));
		memcpy(out + h, buf, (size_t)n);
		sendto(e->fd, out, (size_t)h + (size_t)n, 0, (struct sockaddr *)&a, alen);
	}
	return NULL;
}

static void echo_start(echo *e)
{
	memset(e, 0, sizeof *e);
	e->fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(e->fd >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(bind(e->fd, (struct sockaddr *)&a, sizeof a), 0);
	socklen_t alen = sizeof a;
	getsockname(e->fd, (struct sockaddr *)&a, &alen);
	e->port = ntohs(a.sin_port);
	int sz = 4 << 20;
	setsockopt(e->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
	assert_int_equal(pthread_create(&e->tid, NULL, echo_main, e), 0);
}

static void echo_stop(echo *e)
{
	atomic_store(&e->stop, 1);
	pthread_join(e->tid, NULL);
	close(e->fd);
}

static relay *start(echo *e, relay_opts *o)
{
	char srv[64], err[200];
	snprintf(srv, sizeof srv, "udp://127.0.0.1:%u", e->port);
	o->server = srv;
	relay *r = relay_start(o, err, sizeof err);
	if (!r)
		fail_msg("%s", err);
	return r;
}

static int client_socket(const relay *r)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	                        .sin_port = htons(relay_port(r))};
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	int sz = 4 << 20;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
	return fd;
}

/* Receive one echo within ms; returns its sequence number (or -1), *port the server saw. */
static int recv_one(int fd, int ms, unsigned *port)
{
	struct pollfd pf = {fd, POLLIN, 0};
	if (poll(&pf, 1, ms) <= 0)
		return -1;
	char buf[2200];
	ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	unsigned p = 0;
	int seq = -1;
	if (sscanf(buf, "%u seq %d", &p, &seq) != 2)
		return -1;
	if (port)
		*port = p;
	return seq;
}

static void send_seq(int fd, int seq)
{
	char buf[64];
	int n = snprintf(buf, sizeof buf, "seq %d", seq);
	assert_int_equal(send(fd, buf, (size_t)n, 0), n);
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait (up to 5 s) until the relay has taken n requests off its socket. */
static void wait_taken(relay *r, uint64_t n)
{
	relay_stats st;
	int64_t end = now_ms() + 5000;
	do {
		relay_get_stats(r, &st);
		if (st.in[RELAY_REQ] >= n)
			return;
		usleep(500);
	} while (now_ms() < end);
}

static void note(int s, int n, int *got, int *seen, int *last, int *inversions)
{
	(*got)++;
	if (seen && s < n)
		seen[s]++;
	if (s < *last && inversions)
		(*inversions)++;
	*last = s;
}

/*
 * Send n datagrams in windows of 16, each window taken by the relay before the next leaves
 * (no socket overflows, even under valgrind), then collect replies for ms.
 */
static int send_and_collect(relay *r, int fd, int n, int ms, int *seen, int *inversions)
{
	int got = 0, last = -1, s;
	for (int i = 0; i < n; i++) {
		send_seq(fd, i);
		if (i % 16 == 15)
			wait_taken(r, (uint64_t)i + 1);
		while ((s = recv_one(fd, 0, NULL)) >= 0)
			note(s, n, &got, seen, &last, inversions);
	}
	int64_t end = now_ms() + ms;
	while (now_ms() < end)
		if ((s = recv_one(fd, 50, NULL)) >= 0)
			note(s, n, &got, seen, &last, inversions);
	return got;
}

/* ---- cases ------------------------------------------------------------------------------ */

static void test_clean_in_order(void **state)
{
	(void)state;
	static echo e;
	echo_start(&e);
	relay_opts o = {0};
	relay *r = start(&e, &o);
	int fd = client_socket(r);
	for (int i = 0; i < 500; i++) {
		send_seq(fd, i);
		assert_int_equal(recv_one(fd, 1000, NULL), i);
	}
	relay_stats s;
	relay_get_stats(r, &s);
	assert_int_equal(s.in[RELAY_REQ], 500);
	assert_int_equal(s.out[RELAY_REQ], 500);
	assert_int_equal(s.in[RELAY_REP], 500);
	assert_int_equal(s.out[RELAY_REP], 500);
	assert_int_equal(s.clients, 1);
	close(fd);
	relay_stop(r);
	echo_stop(&e);
}

static void test_drop_rate_per_direction(void **state)
{
	(void)state;
	static echo e;
	echo_start(&e);
	relay_opts o = {.seed = 7};
	o.dir[RELAY_REQ].drop = 0.3;
	relay *r = start(&e, &o);
	int fd = client_socket(r);
	int n = 4000;
	int got = send_and_collect(r, fd, n, 300, NULL, NULL);
	relay_stats s;
	relay_get_stats(r, &s);
	char line[600];
	printf("# drop 0.3 on requests: %d of %d came back; %s\n", got, n,
	       relay_format_stats(&s, line, sizeof line));
	assert_int_equal(s.in[RELAY_REQ], n);
	assert_int_equal(s.out[RELAY_REQ] + s.dropped[RELAY_REQ], n);
	assert_true(s.dropped[RELAY_REQ] > 0.25 * n && s.dropped[RELAY_REQ] < 0.35 * n);
	assert_int_equal(s.dropped[RELAY_REP], 0);
	assert_int_equal((uint64_t)got, s.out[RELAY_REP]);
	assert_int_equal(atomic_load(&e.got), (int)s.out[RELAY_REQ]);
	close(fd);
	relay_stop(r);
	echo_stop(&e);
}

static void test_dup_rate(void **state)
{
	(void)state;
	static echo e;
	echo_start(&e);
	relay_opts o = {.seed = 11};
	o.dir[RELAY_REP].dup = 0.5;
	relay *r = start(&e, &o);
	int fd = client_socket(r);
	int n = 2000;
	int *seen = calloc((size_t)n, sizeof *seen);
	int got = send_and_collect(r, fd, n, 300, seen, NULL);
	int twice = 0, missing = 0;
	for (int i = 0; i < n; i++) {
		twice += seen[i] == 2;
		missing += seen[i] == 0;
	}
	printf("# dup 0.5 on replies: %d replies for %d datagrams, %d twice\n", got, n, twice);
	assert_int_equal(missing, 0);
	assert_true(twice > 0.45 * n && twice < 0.55 * n);
	assert_int_equal(atomic_load(&e.got), n); /* requests untouched */
	free(seen);
	close(fd);
	relay_stop(r);
	echo_stop(&e);
}

static void test_reorder_loses_nothing(void **state)
{
	(void)state;
	static echo e;
	echo_start(&e);
	relay_opts o = {.seed = 3};
	o.dir[RELAY_REQ].reorder = 0.2;
	o.dir[RELAY_REQ].hold_ms = 30;
	relay *r = start(&e, &o);
	int fd = client_socket(r);
	int n = 2000, inv = 0;
	int *seen = calloc((size_t)n, sizeof *seen);
	int got = send_and_collect(r, fd, n, 300, seen, &inv);
	int missing = 0;
	for (int i = 0; i < n; i++)
		missing += seen[i] != 1;
	relay_stats s;
	relay_get_stats(r, &s);
	printf("# reorder 0.2: %d back, %d out of order, %llu held\n", got, inv,
	       (unsigned long long)s.reordered[RELAY_REQ]);
	assert_int_equal(missing, 0);
	assert_true(inv > n / 20);
	assert_true(s.reordered[RELAY_REQ] > 0.15 * n && s.reordered[RELAY_REQ] < 0.25 * n);
	/* a lone held datagram is released by its hold time */
	send_seq(fd, 99999);
	int64_t t0 = now_ms();
	int back = -1;
	for (int k = 0; k < 20 && back != 99999; k++)
		back = recv_one(fd, 500, NULL);
	assert_int_equal(back, 99999);
	assert_true(now_ms() - t0 < 500);
	free(seen);
	close(fd);
	relay_stop(r);
	echo_stop(&e);
}

static void test_delay(void **state)
{
	(void)state;
	static echo e;
	echo_start(&e);
	relay_opts o = {0};
	o.dir[RELAY_REQ].delay_ms = 40;
	o.dir[RELAY_REP].delay_ms = 20;
	o.dir[RELAY_REP].jitter_ms = 20;
	relay *r = start(&e, &o);
	int fd = client_socket(r);
	int64_t lo = 1 << 30, hi = 0;
	for (int i = 0; i < 20; i++) {
		int64_t t0 = now_ms();
		send_seq(fd, i);
		assert_int_equal(recv_one(fd, 2000, NULL), i);
		int64_t d = now_ms() - t0;
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
	}
	printf("# delay 40 + 20..40 ms: round trips %lld..%lld ms\n", (long long)lo, (long long)hi);
	assert_true(lo >= 59);
	assert_true(hi <= 200);
	close(fd);
	relay_stop(r);
	echo_stop(&e);
}

static void test_held_is_bounded(void **state)
{
	(void)state;
	static echo e;
	echo_start(&e);
	relay_opts o = {.max_held = 100};
	o.dir[RELAY_REQ].delay_ms = 2000;
	relay *r = start(&e, &o);
	int fd = client_socket(r);
	relay_stats s;
	for (int i = 0; i < 1000; i++) {
		send_seq(fd, i);
		/* let the relay keep up (slow under valgrind): the kernel would drop what
		 * overflows its socket buffer, and that is not the cap under test */
		for (int w = 0; (i % 64 == 63 || i == 999) && w < 5000; w++) {
			relay_get_stats(r, &s);
			if (s.in[RELAY_REQ] >= (uint64_t)i + 1)
				break;
			usleep(1000);
		}
	}
	relay_get_stats(r, &s);
	printf("# 1000 datagrams delayed 2 s, cap 100: held at most %llu, overflow %llu\n",
	       (unsigned long long)s.max_held_seen, (unsigned long long)s.overflow[RELAY_REQ]);
	assert_int_equal(s.in[RELAY_REQ], 1000);
	assert_int_equal(s.max_held_seen, 100);
	assert_int_equal(s.overflow[RELAY_REQ], 900);
	close(fd);
	relay_stop(r); /* frees the 100 still held */
	echo_stop(&e);
}

static void test_clients_kept_apart(void **state)
{
	(void)state;
	static echo e;
	echo_start(&e);
	relay_opts o = {.seed = 5};
	o.dir[RELAY_REQ].reorder = 0.5;
	o.dir[RELAY_REP].reorder = 0.5;
	o.dir[RELAY_REP].dup = 0.2;
	relay *r = start(&e, &o);
	enum { NC = 8 };
	int fds[NC];
	unsigned ports[NC];
	for (int c = 0; c < NC; c++)
		fds[c] = client_socket(r);
	for (int round = 0; round < 50; round++) {
		for (int c = 0; c < NC; c++)
			send_seq(fds[c], c * 1000 + round);
		for (int c = 0; c < NC; c++) {
			unsigned port = 0;
			int s = recv_one(fds[c], 1000, &port);
			/* a duplicate of the previous round's reply may come first */
			while (s == c * 1000 + round - 1)
				s = recv_one(fds[c], 1000, &port);
			assert_int_equal(s, c * 1000 + round);
			if (round == 0)
				ports[c] = port;
			assert_int_equal(port, ports[c]); /* one upstream address per client */
		}
	}
	for (int c = 0; c < NC; c++)
		for (int d = c + 1; d < NC; d++)
			assert_int_not_equal(ports[c], ports[d]);
	relay_stats s;
	relay_get_stats(r, &s);
	assert_int_equal(s.clients, NC);
	for (int c = 0; c < NC; c++)
		close(fds[c]);
	relay_stop(r);
	echo_stop(&e);
}

/* The same seed and the same traffic, one datagram at a time: the same datagrams lost. */
static void run_pattern(uint64_t seed, char *pat, int n)
{
	static echo e;
	echo_start(&e);
	relay_opts o = {.seed = seed};
	o.dir[RELAY_REQ].drop = 0.5;
	relay *r = start(&e, &o);
	int fd = client_socket(r);
	relay_stats st;
	uint64_t dropped = 0;
	for (int i = 0; i < n; i++) {
		send_seq(fd, i);
		/* the relay's own decision, once it has taken the datagram (a slow machine must not
		 * turn a late reply into a "drop"); a datagram it passed is echoed back */
		for (int w = 0; w < 5000; w++) {
			relay_get_stats(r, &st);
			if (st.in[RELAY_REQ] >= (uint64_t)i + 1)
				break;
			usleep(1000);
		}
		if (st.dropped[RELAY_REQ] > dropped) {
			dropped = st.dropped[RELAY_REQ];
			pat[i] = '0';
		} else {
			pat[i] = '1';
			assert_int_equal(recv_one(fd, 5000, NULL), i);
		}
	}
	pat[n] = '\0';
	close(fd);
	relay_stop(r);
	echo_stop(&e);
}

static void test_seed_reproducible(void **state)
{
	(void)state;
	char a[65], b[65], c[65];
	run_pattern(42, a, 64);
	run_pattern(42, b, 64);
	run_pattern(43, c, 64);
	printf("# seed 42: %s\n# seed 43: %s\n", a, c);
	assert_string_equal(a, b);
	assert_string_not_equal(a, c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_in_order),
		cmocka_unit_test(test_drop_rate_per_direction),
		cmocka_unit_test(test_dup_rate),
		cmocka_unit_test(test_reorder_loses_nothing),
		cmocka_unit_test(test_delay),
		cmocka_unit_test(test_held_is_bounded),
		cmocka_unit_test(test_clients_kept_apart),
		cmocka_unit_test(test_seed_reproducible),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * rc-bench-conns -- many idle connections against one ONC RPC server over TCP.
 *
 *   rc-bench-conns --uri tcp://HOST:PORT --count K [--window W] [--pid PID] [--calls N]
 *                  [--hold-ms MS] [--settle-ms MS] [--json]
 *
 * Speaks the protocol itself (a NULL call of bench.x is a fixed 44-byte record, its reply a
 * 28-byte one), so the same program measures remotecall's and libtirpc's servers alike:
 *
 *   1. idle-free: one fresh connection makes N null calls, one at a time; median and p99.
 *   2. K connections are opened, W at a time in flight: each connects (non-blocking), makes
 *      one null call and, once its reply is in, is held idle. Accept rate = K / the time from
 *      the first connect to the last reply (what a server takes to accept a connection and
 *      answer its first call); beside it the server's CPU time per connection over the same
 *      time (on one host the generator's side of the handshakes often bounds the rate). A
 *      connection that fails is counted and replaced.
 *   3. After settle-ms, the server's RSS (/proc/PID/status, VmRSS) is read again: the growth
 *      over the K connections, per connection. Over hold-ms with all K idle, the server's CPU
 *      time (/proc/PID/stat) is read: what idle connections cost.
 *   4. With all K held, a fresh connection makes N null calls again: median and p99.
 *   5. All K are closed (with a reset: no TIME_WAIT left to crowd the next run's ports), and a
 *      third fresh connection makes N null calls. The ratio is step 4's median over the mean
 *      of steps 1 and 5 (drift over the run -- the machine's other load -- shows as a
 *      difference between those two, and does not pass for an effect of the K).
 *
 * The descriptor limit is raised from soft to hard first; K must leave room under it. Prints
 * one line of text, or with --json one JSON object. Exit 0 when all K were held and both
 * fresh clients answered every call; 1 otherwise (the line still says how far it got); 2 on
 * bad options.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define BENCH_PROG_NUM 0x20524300u /* bench.x's program (BENCH_PROG) */
#define BENCH_VERS_NUM 1u

static const char *progname = "rc-bench-conns";

/* One NULL call of bench.x: record mark, xid, CALL, RPC version 2, program, version,
 * procedure 0, AUTH_NONE credential and verifier (both empty). */
static void null_call(unsigned char out[44], uint32_t xid)
{
	uint32_t w[11] = {0x80000000u | 40, xid, 0, 2, BENCH_PROG_NUM, BENCH_VERS_NUM, 0, 0, 0, 0, 0};
	for (int i = 0; i < 11; i++) {
		uint32_t v = htonl(w[i]);
		memcpy(out + 4 * i, &v, 4);
	}
}

/* Whether r[0..28) is the accepted, successful reply to xid (mark, xid, REPLY,
 * MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS). */
static bool null_reply_ok(const unsigned char r[28], uint32_t xid)
{
	uint32_t w[7];
	for (int i = 0; i < 7; i++) {
		memcpy(&w[i], r + 4 * i, 4);
		w[i] = ntohl(w[i]);
	}
	return w[0] == (0x80000000u | 24) && w[1] == xid && w[2] == 1 && w[3] == 0 && w[4] == 0 &&
	       w[5] == 0 && w[6] == 0;
}

static int64_t now_ns(void)
{
	return (int64_t)bench_now_ns();
}

/* A server's resident set in KiB, or -1. */
static long rss_kib(long pid)
{
	char path[64], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%ld/status", pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmRSS: %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* A process's user + system CPU time in clock ticks, or -1. */
static long cpu_ticks(long pid)
{
	char path[64], buf[1024];
	unsigned long ut, st;
	FILE *f;
	char *p;
	size_t n;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	/* fields after the name: state(3) ... utime(14) stime(15) */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (long)(ut + st);
}

/* Close a client socket with a reset (SO_LINGER 0) instead of leaving it in TIME_WAIT: run
 * after run, tens of thousands of connections in TIME_WAIT would crowd the ephemeral ports and
 * make every later connect search for a free one (the accept rate would measure that). */
static void close_rst(int fd)
{
	struct linger lg = {1, 0};

	(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Read exactly n bytes (blocking socket). */
static bool read_full(int fd, unsigned char *b, size_t n)
{
	while (n > 0) {
		ssize_t k = read(fd, b, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		b += k;
		n -= (size_t)k;
	}
	return true;
}

/* A fresh blocking connection makes n null calls one at a time: median and p99 in µs. False
 * if it could not connect or a call failed. */
static bool fresh_client(const struct sockaddr_in *sa, unsigned n, double *med, double *p99)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	int64_t *t = bench_xmalloc(n * sizeof(*t));
	unsigned char call[44], rep[28];
	bool ok = fd >= 0 && connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;

	if (ok)
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (unsigned i = 0; ok && i < n; i++) {
		uint32_t xid = 0x10000000u + i;
		int64_t t0 = now_ns();
		null_call(call, xid);
		ok = write(fd, call, sizeof call) == (ssize_t)sizeof call && read_full(fd, rep, 28) &&
		     null_reply_ok(rep, xid);
		t[i] = now_ns() - t0;
	}
	if (ok) {
		qsort(t, n, sizeof(*t), cmp_i64);
		*med = (double)t[n / 2] / 1e3;
		*p99 = (double)t[(size_t)n * 99 / 100] / 1e3;
	}
	if (fd >= 0)
		close_rst(fd);
	free(t);
	return ok;
}

typedef struct conn {
	int fd;
	uint8_t state; /* 0 free, 1 connecting, 2 reading its reply, 3 held */
	uint8_t got;   /* reply bytes read */
	unsigned char rep[28];
} conn;

/* Start connection slot i: a non-blocking connect, registered for EPOLLOUT. */
static bool conn_start(int ep, conn *c, uint32_t i, const struct sockaddr_in *sa)
{
	struct epoll_event ev = {.events = EPOLLOUT, .data.u32 = i};
	int one = 1;

	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return false;
	(void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if ((ntohl(sa->sin_addr.s_addr) >> 24) == 127) {
		/* loopback: spread the connections over 8 source addresses (127.0.1.1-8), the port
		 * chosen at connect for the whole 4-tuple; from one address, past ~14,000 connections
		 * to one server every connect scans the ephemeral range for a free port (Linux tries
		 * the even half first) and the accept rate would measure that */
		struct sockaddr_in src = {.sin_family = AF_INET,
		                          .sin_addr.s_addr = htonl(0x7f000101u + (i % 8))};
		(void)setsockopt(c->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
		(void)bind(c->fd, (const struct sockaddr *)&src, sizeof(src));
	}
	if (connect(c->fd, (const struct sockaddr *)sa, sizeof(*sa)) != 0 && errno != EINPROGRESS) {
		close(c->fd);
		c->fd = -1;
		return false;
	}
	c->state = 1;
	c->got = 0;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
		close(c->fd);
		c->fd = -1;
		return false;
	}
	return true;
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: %s --uri tcp://HOST:PORT --count K [--window W] [--pid PID] [--calls N]\n"
	        "       [--hold-ms MS] [--settle-ms MS] [--max-seconds S] [--json]\n"
	        "  --count K      idle connections to hold\n"
	        "  --window W     connections being opened at once [256]\n"
	        "  --pid PID      the server's process: its RSS and CPU time are read\n"
	        "  --calls N      null calls of each fresh client [2000]\n"
	        "  --hold-ms MS   time all K are held idle while the server's CPU is read [2000]\n"
	        "  --settle-ms MS wait before reading the RSS with K held [500]\n"
	        "  --max-seconds S  give up opening connections after S seconds [60]\n",
	        progname);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"uri", required_argument, NULL, 'u'},   {"count", required_argument, NULL, 'k'},
		{"window", required_argument, NULL, 'w'}, {"pid", required_argument, NULL, 'p'},
		{"calls", required_argument, NULL, 'n'}, {"hold-ms", required_argument, NULL, 'H'},
		{"settle-ms", required_argument, NULL, 'S'},
		{"max-seconds", required_argument, NULL, 'm'},
		{"json", no_argument, NULL, 'j'},        {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *uri = NULL;
	uint64_t count = 0, window = 256, pid = 0, calls = 2000, hold_ms = 2000, settle_ms = 500,
	         max_s = 60;
	bool json = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		uint64_t *dst = NULL;
		switch (c) {
		case 'u': uri = optarg; continue;
		case 'k': dst = &count; break;
		case 'w': dst = &window; break;
		case 'p': dst = &pid; break;
		case 'n': dst = &calls; break;
		case 'H': dst = &hold_ms; break;
		case 'S': dst = &settle_ms; break;
		case 'm': dst = &max_s; break;
		case 'j': json = true; continue;
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "%s: bad option '%s'\n", progname, argv[optind - 1]);
			usage(stderr);
			return 2;
		}
		if (!bench_parse_u64(optarg, dst)) {
			fprintf(stderr, "%s: bad number '%s'\n", progname, optarg);
			return 2;
		}
	}
	bench_uri bu;
	char err[128];
	if (uri == NULL || count == 0 || count > 1000000 || window == 0 || calls == 0 ||
	    calls > 10000000 || !bench_parse_uri(uri, &bu, err, sizeof err) || !bu.tcp ||
	    bu.addr.ss_family != AF_INET) {
		fprintf(stderr, "%s: --uri tcp://IPv4:PORT and --count K are required\n", progname);
		usage(stderr);
		return 2;
	}
	struct sockaddr_in sa;
	memcpy(&sa, &bu.addr, sizeof sa);
	uint64_t nofile = bench_raise_nofile();
	if (count + 64 > nofile) {
		fprintf(stderr, "%s: %" PRIu64 " connections need more descriptors than the limit %"
		        PRIu64 " (less 64 of headroom)\n", progname, count, nofile);
		return 2;
	}

	double base_med = 0, base_p99 = 0, held_med = 0, held_p99 = 0;
	bool base_ok = fresh_client(&sa, (unsigned)calls, &base_med, &base_p99);
	long rss0 = pid ? rss_kib((long)pid) : -1;
	long tko0 = pid ? cpu_ticks((long)pid) : -1;

	/* open K connections, W at a time */
	conn *cs = bench_xmalloc(count * sizeof(*cs));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	uint64_t next = 0, held = 0, inflight = 0, failed = 0;
	int64_t t0 = now_ns(), deadline = t0 + (int64_t)max_s * 1000000000LL;
	struct epoll_event evs[256];
	unsigned char call[44];

	for (uint64_t i = 0; i < count; i++)
		cs[i] = (conn){.fd = -1};
	while (held < count && now_ns() < deadline) {
		while (inflight < window && next < count) {
			if (conn_start(ep, &cs[next], (uint32_t)next, &sa)) {
				inflight++;
				next++;
			} else {
				failed++;
				break;
			}
		}
		int n = epoll_wait(ep, evs, 256, 100);
		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n; i++) {
			uint32_t k = evs[i].data.u32;
			conn *x = &cs[k];
			bool bad = (evs[i].events & (EPOLLERR | EPOLLHUP)) != 0;
			if (!bad && x->state == 1) {
				struct epoll_event ev = {.events = EPOLLIN, .data.u32 = k};
				null_call(call, k);
				bad = write(x->fd, call, sizeof call) != (ssize_t)sizeof call ||
				      epoll_ctl(ep, EPOLL_CTL_MOD, x->fd, &ev) != 0;
				x->state = 2;
			} else if (!bad && x->state == 2) {
				ssize_t r = read(x->fd, x->rep + x->got, sizeof x->rep - x->got);
				if (r < 0 && errno == EAGAIN)
					continue;
				bad = r <= 0;
				if (!bad && (x->got += (uint8_t)r) == sizeof x->rep) {
					bad = !null_reply_ok(x->rep, k);
					if (!bad) {
						(void)epoll_ctl(ep, EPOLL_CTL_DEL, x->fd, NULL);
						x->state = 3;
						held++;
						inflight--;
					}
				}
			}
			if (bad) { /* closed, refused or a wrong reply: start this slot again */
				failed++;
				inflight--;
				close(x->fd);
				x->fd = -1;
				x->state = 0;
				if (conn_start(ep, x, k, &sa))
					inflight++;
			}
		}
	}
	int64_t t_open = now_ns() - t0;
	double accept_rate = t_open > 0 ? (double)held * 1e9 / (double)t_open : 0;
	long tko1 = pid ? cpu_ticks((long)pid) : -1;
	/* the server's CPU time per connection opened: what bounds its accept rate when the
	 * load generator, here on the same host, is the slower side */
	double srv_us = tko0 >= 0 && tko1 >= 0 && held > 0
	                    ? (double)(tko1 - tko0) * 1e6 / (double)sysconf(_SC_CLK_TCK) / (double)held
	                    : -1;

	/* all held: settle, RSS, then CPU over hold_ms idle */
	usleep((useconds_t)settle_ms * 1000);
	long rss1 = pid ? rss_kib((long)pid) : -1;
	long tk0 = pid ? cpu_ticks((long)pid) : -1;
	usleep((useconds_t)hold_ms * 1000);
	long tk1 = pid ? cpu_ticks((long)pid) : -1;
	bool held_ok = fresh_client(&sa, (unsigned)calls, &held_med, &held_p99);
	long rss2 = pid ? rss_kib((long)pid) : -1;
	/* connections the server closed meanwhile: readable (EOF) ones */
	uint64_t alive = 0;
	for (uint64_t i = 0; i < count; i++) {
		if (cs[i].state != 3)
			continue;
		char b;
		ssize_t r = recv(cs[i].fd, &b, 1, MSG_DONTWAIT);
		if (r < 0 && errno == EAGAIN)
			alive++;
	}
	for (uint64_t i = 0; i < count; i++)
		if (cs[i].fd >= 0)
			close_rst(cs[i].fd);
	close(ep);
	free(cs);
	/* none held again: a third fresh client, so that drift over the run (the machine's other
	 * load, the caches) shows as a difference between the first and this one */
	usleep((useconds_t)settle_ms * 1000);
	double after_med = 0, after_p99 = 0;
	bool after_ok = fresh_client(&sa, (unsigned)calls, &after_med, &after_p99);

	double per_conn = (rss0 >= 0 && rss1 >= 0 && held > 0)
	                      ? (double)(rss1 - rss0) * 1024.0 / (double)held
	                      : -1;
	double cpu_pct = (tk0 >= 0 && tk1 >= 0 && hold_ms > 0)
	                     ? 100.0 * (double)(tk1 - tk0) / (double)sysconf(_SC_CLK_TCK) /
	                           ((double)hold_ms / 1e3)
	                     : -1;
	/* the idle-free reference: the mean of the medians before and after */
	double ref = after_ok ? (base_med + after_med) / 2 : base_med;
	double ratio = base_ok && held_ok && ref > 0 ? held_med / ref : 0;
	if (json)
		printf("{\"count\":%" PRIu64 ",\"held\":%" PRIu64 ",\"alive\":%" PRIu64
		       ",\"failed\":%" PRIu64 ",\"open_s\":%.3f,\"accept_per_s\":%.0f,"
		       "\"srv_us_per_conn\":%.2f,"
		       "\"rss0_kib\":%ld,\"rss_held_kib\":%ld,\"rss_after_kib\":%ld,"
		       "\"rss_per_conn_b\":%.0f,\"idle_cpu_pct\":%.2f,"
		       "\"base_ok\":%s,\"base_us\":%.2f,\"base_p99_us\":%.2f,"
		       "\"held_ok\":%s,\"held_us\":%.2f,\"held_p99_us\":%.2f,"
		       "\"after_ok\":%s,\"after_us\":%.2f,\"after_p99_us\":%.2f,\"ratio\":%.3f}\n",
		       count, held, alive, failed, (double)t_open / 1e9, accept_rate, srv_us, rss0, rss1,
		       rss2,
		       per_conn, cpu_pct, base_ok ? "true" : "false", base_med, base_p99,
		       held_ok ? "true" : "false", held_med, held_p99, after_ok ? "true" : "false",
		       after_med, after_p99, ratio);
	else
		printf("%" PRIu64 "/%" PRIu64 " connections held (%" PRIu64 " still open, %" PRIu64
		       " failures) in %.2f s: %.0f accepted/s (server CPU %.1f us each); server RSS %ld -> %ld KiB (%.0f B a "
		       "connection), idle CPU %.2f %%; fresh null call %.2f us (p99 %.2f) with none "
		       "held, %.2f us (p99 %.2f) with them, %.2f us (p99 %.2f) after: %.3fx\n",
		       held, count, alive, failed, (double)t_open / 1e9, accept_rate, srv_us, rss0, rss1,
		       per_conn, cpu_pct, base_med, base_p99, held_med, held_p99, after_med, after_p99,
		       ratio);
	return held == count && alive == count && base_ok && held_ok ? 0 : 1;
}

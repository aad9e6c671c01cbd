/*
 * raw-pingpong -- the floor under every RPC number: a hand-made protocol over a plain socket,
 * blocking send + blocking receive, no marshalling (Elliott & Nutt's "Program Three" (UDP)
 * and "Program Four" (TCP)).
 *
 *   raw-pingpong --server URI [--null-rpc [--batch MODE]] [--spin]
 *   raw-pingpong --client URI [--size N] [--calls N] [--warmup N] [--wait block|select]
 *                [--max-seconds S] [--null-rpc] [--spin] [--json]
 *
 * --spin (UDP): never sleep -- receive with MSG_DONTWAIT in a loop (mode "spin"): the floor
 * under rc_client_set_spin / rc_server_set_spin. A spinning side burns a whole core.
 *
 * --wait select: before reading each reply the client waits in select() (with a 25 s timeout,
 * as Sun RPC's clntudp_call did) instead of blocking in recv() straight away: Elliott &
 * Nutt's "select" variants of Programs Three and Four (mode "select" in the output).
 *
 * UDP: the client sends a datagram of N bytes, the server sends the same datagram back.
 * TCP: the client sends a 4-byte big-endian length and N bytes; the server answers with the
 * same. Each side does the least an RPC must: the client sends the message with one write
 * from its call buffer and reads the answer with one read loop into a second buffer (an RPC
 * caller's arguments and results are two places); the server reads each message whole with
 * one read loop -- length and body into one buffer, each read asking for all the room left,
 * never a read of the 4-byte length alone -- and writes it back with one write from there. The server prints "listening URI" (real port) and runs until SIGINT/SIGTERM. The
 * client checks every reply's length and bytes and prints the keys the RPC clients print
 * (impl "raw", mode "pingpong", proc "raw").
 *
 * --null-rpc (UDP): the same loop carrying a real ONC RPC exchange with nothing around it. The
 * client sends bench.x's BENCH_NULL call (40 bytes, a new xid each time) and checks the 24-byte
 * reply's xid and header; the server answers any call with a successful 24-byte reply. Against
 * remotecall's server and client (proc "null") they measure what each side of remotecall adds
 * to the round trip, in place: rc-bench-client -> raw server, raw client -> rc-bench-server.
 *
 * --batch MODE (server, UDP, --null-rpc): answer null calls many at a time, through recvmmsg
 * and sendmmsg (mmsg), those with the kernel's UDP offloads (offload), or io_uring (uring,
 * uring-offload, uring-ms): the floor each kernel interface allows pipelined clients (raw_batch.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common.h"
#include "raw_batch.h"

static const char *progname = "raw-pingpong";
static volatile sig_atomic_t g_stop;
#define MAX_UDP 65507u
#define NULL_CALL_LEN 40u  /* xid CALL 2 prog vers proc, AUTH_NONE credential and verifier */
#define NULL_REPLY_LEN 24u /* xid REPLY MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS */
#define NULL_PROG 0x20524300u /* bench.x: BENCH_PROG, version 1, BENCH_NULL = 0 */

static void put32(unsigned char *p, uint32_t v)
{
	uint32_t be = htonl(v);
	memcpy(p, &be, 4);
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t be;
	memcpy(&be, p, 4);
	return ntohl(be);
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: %s --server URI [--null-rpc [--batch MODE]] [--spin]\n"
	        "       %s --client URI [--size N] [--calls N] [--warmup N] [--wait block|select]\n"
	        "                 [--max-seconds S] [--null-rpc] [--spin] [--json]\n"
	        "  URI is udp://HOST:PORT or tcp://HOST:PORT (server: port 0 picks one)\n"
	        "  --null-rpc  (UDP) send BENCH_NULL calls / answer calls with a 24-byte reply\n"
	        "  --spin      (UDP) busy-poll instead of sleeping in recv (burns a core)\n"
	        "  --batch M   (UDP server, --null-rpc) answer calls in batches: mmsg, offload,\n"
	        "              uring, uring-offload, uring-ms (recvmmsg/sendmmsg; with UDP GRO/GSO;\n"
	        "              io_uring; with GRO/GSO; with a multishot receive)\n",
	        progname, progname);
}

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

/*
 * A message buffer: the 4-byte length at p, the body right behind it at p + 4, on a 64-byte
 * boundary (so a big body goes to and from the kernel as fast as from an aligned buffer);
 * cap bytes from p.
 */
typedef struct msgbuf {
	unsigned char *raw, *p;
	size_t cap;
} msgbuf;

/* Make b hold cap bytes from p, keeping its first keep bytes. False if memory is short (b
 * unchanged). */
static bool msgbuf_grow(msgbuf *b, size_t cap, size_t keep)
{
	void *raw;

	if (posix_memalign(&raw, 64, cap + 64) != 0)
		return false;
	if (keep > 0)
		memcpy((unsigned char *)raw + 60, b->p, keep);
	free(b->raw);
	b->raw = raw;
	b->p = b->raw + 60;
	b->cap = cap;
	return true;
}

/*
 * Read one whole message -- a 4-byte big-endian length, then that many bytes -- into b (grown
 * when the length asks for more, up to 64 MiB) with one read loop: each read asks for
 * everything the buffer can still take, so a small message is one read and a big one as few
 * as the socket allows; the length is not read on its own. The message (header and body)
 * ends up at b->p; its body length in *n. False on EOF, error, or a length over the cap.
 * (Ping-pong: nothing follows a message until it has been answered.)
 */
static bool read_msg(int fd, msgbuf *b, size_t *n)
{
	size_t have = 0, need = 4;
	while (have < need) {
		ssize_t r = read(fd, b->p + have, b->cap - have);
		if (r < 0 && errno == EINTR && !g_stop)
			continue;
		if (r <= 0)
			return false;
		have += (size_t)r;
		if (need == 4 && have >= 4) {
			uint32_t len_be;
			memcpy(&len_be, b->p, 4);
			*n = ntohl(len_be);
			if (*n > (64u << 20))
				return false;
			need = 4 + *n;
			if (need > b->cap && !msgbuf_grow(b, need, have))
				return false;
		}
	}
	return have == need;
}

/* Write b[0..n) whole: one write, looping only on a short one. */
static bool write_all(int fd, const unsigned char *b, size_t n)
{
	while (n) {
		ssize_t w = write(fd, b, n);
		if (w < 0 && errno == EINTR && !g_stop)
			continue;
		if (w <= 0)
			return false;
		b += w;
		n -= (size_t)w;
	}
	return true;
}

/* A TCP connection's thread: each message read whole (one read loop, header and body into one
 * buffer) and written back whole from that buffer (one write). */
static void *tcp_conn(void *p)
{
	int fd = (int)(intptr_t)p;
	msgbuf b = {0};
	size_t n;
	if (msgbuf_grow(&b, 65536 + 4, 0))
		while (read_msg(fd, &b, &n) && write_all(fd, b.p, 4 + n))
			;
	free(b.raw);
	close(fd);
	return NULL;
}

static int run_server(const char *uri, bool rpc, bool spin, const char *batch)
{
	bench_uri u;
	char err[300];
	if (!bench_parse_uri(uri, &u, err, sizeof err)) {
		fprintf(stderr, "%s: %s\n", progname, err);
		return 2;
	}
	int fd = socket(u.addr.ss_family, u.tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
	int one = 1;
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	/* TCP only: on UDP, SO_REUSEADDR lets bind(port 0) hand out a port another socket holds */
	if (u.tcp)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (rpc && u.tcp) {
		fprintf(stderr, "%s: --null-rpc is for UDP\n", progname);
		return 2;
	}
	if (bind(fd, (struct sockaddr *)&u.addr, u.addrlen) < 0 ||
	    (u.tcp && listen(fd, 64) < 0)) {
		fprintf(stderr, "%s: %s: %s\n", progname, uri, strerror(errno));
		return 1;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	char bound[300];
	bench_format_uri(u.tcp, (struct sockaddr *)&ss, bound, sizeof bound);
	printf("listening %s\n", bound);
	fflush(stdout);

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal; /* no SA_RESTART: blocking calls return EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (u.tcp) {
		while (!g_stop) {
			int c = accept(fd, NULL, NULL);
			if (c < 0)
				continue;
			setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
			pthread_t t;
			if (pthread_create(&t, NULL, tcp_conn, (void *)(intptr_t)c) != 0) {
				close(c);
				continue;
			}
			pthread_detach(t);
		}
	} else if (batch != NULL) {
		int rc = raw_batch_serve(fd, batch, &g_stop);
		close(fd);
		return rc;
	} else {
		unsigned char *buf = bench_xmalloc(MAX_UDP);
		while (!g_stop) {
			struct sockaddr_storage from;
			socklen_t fl = sizeof from;
			ssize_t n = recvfrom(fd, buf, MAX_UDP, spin ? MSG_DONTWAIT : 0,
			                     (struct sockaddr *)&from, &fl);
			if (n < 0)
				continue;
			if (rpc) {
				if ((size_t)n < NULL_CALL_LEN || get32(buf + 4) != 0)
					continue; /* not a call */
				put32(buf + 4, 1); /* REPLY; the xid stays */
				memset(buf + 8, 0, NULL_REPLY_LEN - 8);
				n = NULL_REPLY_LEN;
			}
			sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
		}
		free(buf);
	}
	close(fd);
	return 0;
}

/* --wait select: wait until fd is readable (false on timeout or error). */
static bool wait_readable(int fd)
{
	for (;;) {
		fd_set rs;
		FD_ZERO(&rs);
		FD_SET(fd, &rs);
		struct timeval tv = {25, 0};
		int r = select(fd + 1, &rs, NULL, NULL, &tv);
		if (r < 0 && errno == EINTR)
			continue;
		return r > 0;
	}
}

/* A reply to call xid: REPLY, MSG_ACCEPTED, an empty AUTH_NONE verifier, SUCCESS. */
static bool null_reply_ok(const unsigned char *in, size_t got, uint32_t xid)
{
	return got == NULL_REPLY_LEN && get32(in) == xid && get32(in + 4) == 1 && get32(in + 8) == 0 &&
	       get32(in + 12) == 0 && get32(in + 16) == 0 && get32(in + 20) == 0;
}

static int run_client(const char *uri, size_t size, uint64_t calls, uint64_t warmup, bool json,
                      bool sel, uint64_t max_ns, bool rpc, bool spin)
{
	bench_uri u;
	char err[300];
	if (!bench_parse_uri(uri, &u, err, sizeof err) || !u.has_port) {
		fprintf(stderr, "%s: %s\n", progname, u.has_port ? err : "the URI needs a port");
		return 2;
	}
	if (rpc && (u.tcp || size)) {
		fprintf(stderr, "%s: --null-rpc is for UDP, without --size\n", progname);
		return 2;
	}
	if (!u.tcp && size > MAX_UDP) {
		fprintf(stderr, "%s: --size over %u does not fit a UDP datagram\n", progname,
		        MAX_UDP);
		return 2;
	}
	int fd = socket(u.addr.ss_family, u.tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
	int one = 1;
	if (fd < 0 || connect(fd, (struct sockaddr *)&u.addr, u.addrlen) < 0) {
		fprintf(stderr, "%s: %s: %s\n", progname, uri, strerror(errno));
		return 1;
	}
	if (u.tcp)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	else {
		struct timeval tv = {5, 0}; /* a lost datagram fails the run instead of hanging */
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	}
	if (rpc)
		size = NULL_CALL_LEN; /* the call goes out; the reply is checked by its header */
	/* TCP: the message is a 4-byte length and the body, sent from one buffer (tout) and
	 * received into another (tin); out and in are their bodies */
	msgbuf tout = {0}, tin = {0};
	if (!msgbuf_grow(&tout, 4 + size + 1, 0) || !msgbuf_grow(&tin, 4 + size + 1, 0)) {
		fprintf(stderr, "%s: out of memory\n", progname);
		return 1;
	}
	unsigned char *out = tout.p + 4, *in = tin.p + 4;
	put32(tout.p, (uint32_t)size);
	uint32_t xid = (uint32_t)bench_now_ns();
	bench_fill_pattern(out, size);
	if (rpc) {
		static const uint32_t call[10] = {0, 0, 2, NULL_PROG, 1, 0, 0, 0, 0, 0};
		for (int k = 0; k < 10; k++)
			put32(out + 4 * k, call[k]);
	}
	uint64_t *lat = bench_xmalloc(calls * sizeof *lat);
	uint64_t total = warmup + calls, t0 = 0, made = 0;
	for (uint64_t i = 0; i < total; i++) {
		if (i == warmup)
			t0 = bench_now_ns();
		if (i > warmup && max_ns && bench_now_ns() - t0 > max_ns)
			break;
		uint64_t c0 = bench_now_ns();
		bool ok;
		errno = 0;
		size_t got = 0;
		if (u.tcp) {
			/* one write from the call's buffer (header in front), one read loop into the
			 * reply's buffer (header and body together) */
			ok = write_all(fd, tout.p, 4 + size) && (!sel || wait_readable(fd)) &&
			     read_msg(fd, &tin, &got) && got == size;
		} else {
			if (rpc)
				put32(out, ++xid);
			ok = send(fd, out, size, 0) == (ssize_t)size;
			if (ok && sel)
				ok = wait_readable(fd);
			if (ok) {
				ssize_t n;
				if (spin) { /* busy-poll, 5 s at most */
					uint64_t until = bench_now_ns() + 5000000000ull;
					do
						n = recv(fd, in, size + 1, MSG_DONTWAIT);
					while (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
					       bench_now_ns() < until);
				} else {
					n = recv(fd, in, size + 1, 0);
				}
				ok = n >= 0;
				got = ok ? (size_t)n : 0;
				ok = ok && (rpc ? null_reply_ok(in, got, xid) : got == size);
			}
		}
		if (u.tcp)
			in = tin.p + 4; /* (read_msg may have grown it: it never does, got == size) */
		if (!ok || (!rpc && !bench_check_pattern(in, size))) {
			fprintf(stderr, "%s: %s: call %llu failed: %s\n", progname, uri,
			        (unsigned long long)i,
			        errno ? strerror(errno) : "reply of the wrong size or content");
			close(fd);
			free(lat);
			free(tin.raw);
			free(tout.raw);
			return 1;
		}
		if (i >= warmup) {
			lat[i - warmup] = bench_now_ns() - c0;
			made++;
		}
	}
	uint64_t elapsed = bench_now_ns() - t0;
	bench_result r = {
		.impl = "raw",
		.mode = spin ? "spin" : sel ? "select" : "pingpong",
		.uri = uri,
		.dests = 1,
		.proc = rpc ? "null" : "raw",
		.size = rpc ? 0 : size,
		.calls = made,
		.errors = 0,
		.threads = 1,
		.depth = 0,
		.elapsed_ns = elapsed,
		.lat_ns = lat,
		.nlat = made,
	};
	bench_print_result(&r, json);
	close(fd);
	free(lat);
	free(tin.raw);
	free(tout.raw);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"server", required_argument, NULL, 's'},
		{"client", required_argument, NULL, 'c'},
		{"size", required_argument, NULL, 'z'},
		{"calls", required_argument, NULL, 'n'},
		{"warmup", required_argument, NULL, 'w'},
		{"json", no_argument, NULL, 'j'},
		{"wait", required_argument, NULL, 'W'},
		{"max-seconds", required_argument, NULL, 'M'},
		{"null-rpc", no_argument, NULL, 'R'},
		{"spin", no_argument, NULL, 'P'},
		{"batch", required_argument, NULL, 'B'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *server = NULL, *client = NULL, *batch = NULL;
	uint64_t size = 0, calls = 10000, warmup = 100;
	bool json = false, sel = false, rpc = false, spin = false;
	uint64_t max_ns = 0;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's': server = optarg; break;
		case 'c': client = optarg; break;
		case 'z':
			if (!bench_parse_u64(optarg, &size) || size > (64u << 20)) {
				fprintf(stderr, "%s: bad --size '%s'\n", progname, optarg);
				usage(stderr);
				return 2;
			}
			break;
		case 'n':
			if (!bench_parse_u64(optarg, &calls) || calls == 0) {
				fprintf(stderr, "%s: bad --calls '%s'\n", progname, optarg);
				usage(stderr);
				return 2;
			}
			break;
		case 'w':
			if (!bench_parse_u64(optarg, &warmup)) {
				fprintf(stderr, "%s: bad --warmup '%s'\n", progname, optarg);
				usage(stderr);
				return 2;
			}
			break;
		case 'j': json = true; break;
		case 'R': rpc = true; break;
		case 'P': spin = true; break;
		case 'B':
			if (!raw_batch_known(optarg)) {
				fprintf(stderr, "%s: bad --batch '%s'\n", progname, optarg);
				usage(stderr);
				return 2;
			}
			batch = optarg;
			break;
		case 'M': {
			char *end;
			double sec = strtod(optarg, &end);
			if (end == optarg || *end || !(sec > 0) || sec > 1e6) {
				fprintf(stderr, "%s: bad --max-seconds '%s'\n", progname, optarg);
				usage(stderr);
				return 2;
			}
			max_ns = (uint64_t)(sec * 1e9);
			break;
		}
		case 'W':
			if (strcmp(optarg, "block") == 0 || strcmp(optarg, "select") == 0) {
				sel = strcmp(optarg, "select") == 0;
				break;
			}
			fprintf(stderr, "%s: bad --wait '%s'\n", progname, optarg);
			usage(stderr);
			return 2;
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "%s: bad option '%s'\n", progname, argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (spin && sel) {
		fprintf(stderr, "%s: --spin and --wait select exclude each other\n", progname);
		return 2;
	}
	if (spin && strncmp(server ? server : client ? client : "", "udp:", 4) != 0) {
		fprintf(stderr, "%s: --spin is for UDP\n", progname);
		return 2;
	}
	if (batch != NULL && (!server || !rpc || spin || strncmp(server, "udp:", 4) != 0)) {
		fprintf(stderr, "%s: --batch is for a UDP --server with --null-rpc, without --spin\n",
		        progname);
		return 2;
	}
	if (optind < argc || !!server == !!client) {
		fprintf(stderr, "%s: give exactly one of --server and --client\n", progname);
		usage(stderr);
		return 2;
	}
	return server ? run_server(server, rpc, spin, batch)
	              : run_client(client, (size_t)size, calls, warmup, json, sel, max_ns, rpc, spin);
}

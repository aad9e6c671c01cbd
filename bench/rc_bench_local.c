/*
 * rc-bench-local -- the measurements that need client and server code in one program:
 *
 *   rc-bench-local --what ccall [--json]
 *       Elliott & Nutt's Program One / PARPC's "C function call": ns per iteration of an empty
 *       loop and of loops calling a function with no argument, a 2-byte and a 4-byte argument,
 *       for 10^5, 10^6 and 10^7 iterations.
 *   rc-bench-local --what inproc [--proc null|int|send|echo] [--size N] [--calls N] [--json]
 *       PARPC's "local PARPC procedure call": an rc server on inproc:NAME in this process,
 *       called through the generated stubs (the call runs the server's dispatch in the calling
 *       thread; no sockets). Prints the keys rc-bench-client prints (mode "inproc").
 *   rc-bench-local --what first --uri URI [--proc P] [--size N] [--trials N] [--calls N]
 *       DCE's and PARPC's first call: per trial, rc_client_create (connect; rpcbind look-up
 *       when the URI has no port) and the first call (NULL, or P with N bytes), then --calls
 *       later calls; the client is destroyed after each trial.
 *   rc-bench-local --what spawn --server 'CMD ARGS' --listen URI [--trials N] [--json]
 *       PARPC's "initial call to a user server": per trial, start the server process
 *       (CMD ARGS --listen URI), read its "listening URI" line, create a client, make the first
 *       NULL call; then stop the server.
 *   rc-bench-local --what steps --uri URI [--size N] [--calls N] [--json]
 *       Where the time of one call goes (E&N Table 5, DCE Figures 1-2 and Table 2): a call
 *       made by hand with the library's XDR routines over a plain socket to a real server
 *       (rc-bench-server at URI), each step timed with clock_gettime: encode, send syscall,
 *       wait (poll until the reply is readable), receive syscall(s), decode. The server's side
 *       is timed in this process: its recv and send syscalls on a loopback socket pair with
 *       the same message sizes, and its decode + dispatch, procedure and reply encoding through
 *       an in-process rc server whose procedures stamp their entry and exit.
 *
 * With --json every result is one JSON object on one line.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <remotecall/remotecall.h>

#include "bench.h"
#include "common.h"

static const char *progname = "rc-bench-local";

/* ---- the procedures of the in-process server (stamping entry and exit) --------------------- */

static bool g_stamp;            /* steps: stamp the procedures */
static uint64_t g_t_in, g_t_out; /* entry and exit of the last procedure */

#define STAMP_IN()                                                                            \
	do {                                                                                  \
		if (g_stamp)                                                                  \
			g_t_in = bench_now_ns();                                              \
	} while (0)
#define STAMP_OUT()                                                                           \
	do {                                                                                  \
		if (g_stamp)                                                                  \
			g_t_out = bench_now_ns();                                             \
	} while (0)

bool bench_null_1_svc(rc_svc_req *req)
{
	(void)req;
	STAMP_IN();
	STAMP_OUT();
	return true;
}

bool bench_int_1_svc(const int32_t *arg, rc_svc_req *req)
{
	(void)arg;
	(void)req;
	STAMP_IN();
	STAMP_OUT();
	return true;
}

bool bench_send_1_svc(const bench_data *arg, rc_svc_req *req)
{
	(void)arg;
	(void)req;
	STAMP_IN();
	STAMP_OUT();
	return true;
}

bool bench_sendr_1_svc(const bench_data *arg, int32_t *res, rc_svc_req *req)
{
	(void)req;
	STAMP_IN();
	*res = (int32_t)arg->bench_data_len;
	STAMP_OUT();
	return true;
}

bool bench_echo_1_svc(const bench_data *arg, bench_data *res, rc_svc_req *req)
{
	(void)req;
	STAMP_IN();
	res->bench_data_len = arg->bench_data_len;
	res->bench_data_val = NULL;
	if (arg->bench_data_len) {
		res->bench_data_val = malloc(arg->bench_data_len);
		if (!res->bench_data_val)
			return false;
		memcpy(res->bench_data_val, arg->bench_data_val, arg->bench_data_len);
	}
	STAMP_OUT();
	return true;
}

bool bench_work_1_svc(const uint32_t *arg, uint32_t *res, rc_svc_req *req)
{
	(void)req;
	STAMP_IN();
	*res = *arg; /* no sleeping in process */
	STAMP_OUT();
	return true;
}

bool bench_add_1_svc(const int64_t *arg, int64_t *res, rc_svc_req *req)
{
	(void)req;
	static int64_t total;
	STAMP_IN();
	total += *arg;
	*res = total;
	STAMP_OUT();
	return true;
}

/* ---- helpers ----------------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Median of v[0..n) in microseconds (sorts v). */
static double median_us(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, cmp_u64);
	return (double)v[n / 2] / 1e3;
}

static void mean_sd_us(const uint64_t *v, size_t n, double *mean, double *sd)
{
	double s = 0, q = 0;
	for (size_t i = 0; i < n; i++)
		s += (double)v[i] / 1e3;
	*mean = n ? s / (double)n : 0;
	for (size_t i = 0; i < n; i++) {
		double d = (double)v[i] / 1e3 - *mean;
		q += d * d;
	}
	*sd = n > 1 ? sqrt(q / (double)(n - 1)) : 0;
}

static void die(const char *what, rc_status st)
{
	fprintf(stderr, "%s: %s: %s [%s]\n", progname, what, rc_strerror(st), rc_status_name(st));
	exit(1);
}

/* ---- ccall: the C function call baseline --------------------------------------------------- */

__attribute__((noinline)) static void f_noarg(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void f_short(short a)
{
	__asm__ volatile("" : : "r"(a) : "memory");
}

__attribute__((noinline)) static void f_int(int a)
{
	__asm__ volatile("" : : "r"(a) : "memory");
}

/* ns per iteration of loop case c over n iterations: the median of 5 repetitions. */
static double ccall_once(int c, uint64_t n)
{
	uint64_t dts[5];
	for (int r = 0; r < 5; r++) {
		uint64_t t0 = bench_now_ns();
		switch (c) {
		case 0:
			for (uint64_t i = 0; i < n; i++)
				__asm__ volatile("" ::: "memory");
			break;
		case 1:
			for (uint64_t i = 0; i < n; i++)
				f_noarg();
			break;
		case 2:
			for (uint64_t i = 0; i < n; i++)
				f_short((short)i);
			break;
		default:
			for (uint64_t i = 0; i < n; i++)
				f_int((int)i);
			break;
		}
		dts[r] = bench_now_ns() - t0;
	}
	qsort(dts, 5, sizeof dts[0], cmp_u64);
	return (double)dts[2] / (double)n;
}

static void run_ccall(bool json)
{
	static const char *const names[] = {"empty", "noarg", "short", "int"};
	static const uint64_t iters[] = {100000, 1000000, 10000000};
	for (size_t k = 0; k < sizeof iters / sizeof iters[0]; k++) {
		for (int c = 0; c < 4; c++) {
			uint64_t n = iters[k];
			double ns = ccall_once(c, n);
			if (json)
				printf("{\"bench\":\"ccall\",\"case\":\"%s\",\"iters\":%" PRIu64
				       ",\"ns_per_iter\":%.4f}\n",
				       names[c], n, ns);
			else
				printf("ccall %-6s %9" PRIu64 " iterations: %.4f ns/iteration\n",
				       names[c], n, ns);
		}
	}
	fflush(stdout);
}

/* ---- inproc: through the stubs, no sockets ------------------------------------------------- */

static rc_server *start_inproc(const char *name)
{
	rc_server *srv;
	char uri[300], bound[300];
	rc_status st = rc_server_create(&srv);
	if (st != RC_OK)
		die("rc_server_create", st);
	if ((st = bench_prog_1_register(srv, NULL)) != RC_OK)
		die("register", st);
	snprintf(uri, sizeof uri, "inproc:%s", name);
	if ((st = rc_server_listen(srv, uri, bound, sizeof bound)) != RC_OK)
		die(uri, st);
	return srv;
}

/* One call of proc through the stubs; false if it failed or its reply is wrong. */
static bool stub_call(rc_client *c, int proc, const bench_data *arg, size_t size)
{
	rc_status st;
	int32_t iarg = 0x1234, ires = 0;
	bench_data res;
	memset(&res, 0, sizeof res);
	switch (proc) {
	case BP_NULL:
		st = bench_null_1(c);
		break;
	case BP_INT:
		st = bench_int_1(c, &iarg);
		break;
	case BP_SEND:
		st = bench_send_1(c, arg);
		break;
	case BP_SENDR:
		st = bench_sendr_1(c, arg, &ires);
		if (st == RC_OK && ires != (int32_t)size)
			st = RC_CANTDECODERES;
		break;
	case BP_ECHO:
		st = bench_echo_1(c, arg, &res);
		if (st == RC_OK && res.bench_data_len != size)
			st = RC_CANTDECODERES;
		rc_xdr_free((rc_xdrproc)xdr_bench_data, &res);
		break;
	default:
		st = RC_INVAL;
	}
	if (st != RC_OK) {
		fprintf(stderr, "%s: call failed: %s [%s]\n", progname, rc_strerror(st),
		        rc_status_name(st));
		return false;
	}
	return true;
}

static int run_inproc(int proc, size_t size, uint64_t calls, uint64_t warmup, bool json)
{
	rc_server *srv = start_inproc("rc-bench-local");
	rc_client *c;
	rc_status st = rc_client_create(&c, "inproc:rc-bench-local", BENCH_PROG, BENCH_VERS);
	if (st != RC_OK)
		die("rc_client_create inproc", st);
	unsigned char *buf = bench_xmalloc(size);
	bench_fill_pattern(buf, size);
	bench_data arg = {(unsigned)size, (char *)buf};
	uint64_t *lat = bench_xmalloc(calls * sizeof *lat);
	for (uint64_t i = 0; i < warmup; i++)
		if (!stub_call(c, proc, &arg, size))
			return 1;
	uint64_t t0 = bench_now_ns();
	for (uint64_t i = 0; i < calls; i++) {
		uint64_t c0 = bench_now_ns();
		if (!stub_call(c, proc, &arg, size))
			return 1;
		lat[i] = bench_now_ns() - c0;
	}
	uint64_t el = bench_now_ns() - t0;
	bench_result r = {
		.impl = "remotecall", .mode = "inproc", .uri = "inproc:rc-bench-local",
		.dests = 1, .proc = bench_proc_name(proc),
		.size = bench_proc_has_data(proc) ? size : 0, .calls = calls, .errors = 0,
		.threads = 1, .depth = 0, .elapsed_ns = el, .lat_ns = lat, .nlat = calls,
	};
	bench_print_result(&r, json);
	rc_client_destroy(c);
	rc_server_destroy(srv);
	free(lat);
	free(buf);
	return 0;
}

/* ---- first: the first call vs later calls -------------------------------------------------- */

static int run_first(const char *uri, int proc, size_t size, uint64_t trials, uint64_t later,
                     bool json)
{
	unsigned char *buf = bench_xmalloc(size);
	bench_fill_pattern(buf, size);
	bench_data arg = {(unsigned)size, (char *)buf};
	uint64_t *create = bench_xmalloc(trials * sizeof(uint64_t));
	uint64_t *first = bench_xmalloc(trials * sizeof(uint64_t));
	uint64_t *firstcall = bench_xmalloc(trials * sizeof(uint64_t));
	uint64_t *lat = bench_xmalloc((trials * later + 1) * sizeof(uint64_t));
	if (proc == BP_WORK || proc == BP_ADD)
		proc = BP_NULL;
	uint64_t nl = 0;
	for (uint64_t t = 0; t < trials; t++) {
		rc_client *c;
		uint64_t t0 = bench_now_ns();
		rc_status st = rc_client_create(&c, uri, BENCH_PROG, BENCH_VERS);
		uint64_t t1 = bench_now_ns();
		if (st != RC_OK)
			die(uri, st);
		if (!stub_call(c, proc, &arg, size))
			exit(1);
		uint64_t t2 = bench_now_ns();
		create[t] = t1 - t0;
		first[t] = t2 - t0;
		firstcall[t] = t2 - t1;
		for (uint64_t i = 0; i < later; i++) {
			uint64_t c0 = bench_now_ns();
			if (!stub_call(c, proc, &arg, size))
				exit(1);
			lat[nl++] = bench_now_ns() - c0;
		}
		rc_client_destroy(c);
	}
	double fm, fs, cm, cs, lm, ls, km, ks;
	mean_sd_us(first, trials, &fm, &fs);
	mean_sd_us(create, trials, &cm, &cs);
	mean_sd_us(firstcall, trials, &km, &ks);
	mean_sd_us(lat, nl, &lm, &ls);
	double fmed = median_us(first, trials), cmed = median_us(create, trials);
	double kmed = median_us(firstcall, trials), lmed = median_us(lat, nl);
	if (json)
		printf("{\"bench\":\"first\",\"uri\":\"%s\",\"proc\":\"%s\",\"size\":%zu"
		       ",\"trials\":%" PRIu64
		       ",\"first_median_us\":%.3f,\"first_mean_us\":%.3f,\"first_stdev_us\":%.3f"
		       ",\"create_median_us\":%.3f,\"create_mean_us\":%.3f,\"create_stdev_us\":%.3f"
		       ",\"firstcall_median_us\":%.3f,\"firstcall_mean_us\":%.3f"
		       ",\"firstcall_stdev_us\":%.3f"
		       ",\"later_calls\":%" PRIu64 ",\"later_median_us\":%.3f,\"later_mean_us\":%.3f"
		       ",\"later_stdev_us\":%.3f}\n",
		       uri, bench_proc_name(proc), bench_proc_has_data(proc) ? size : 0, trials, fmed,
		       fm, fs, cmed, cm, cs, kmed, km, ks, nl, lmed, lm, ls);
	else
		printf("first call to %s (create + call): median %.1f us (create %.1f us, call %.1f "
		       "us); later calls: median %.1f us\n",
		       uri, fmed, cmed, kmed, lmed);
	fflush(stdout);
	free(create);
	free(first);
	free(firstcall);
	free(lat);
	free(buf);
	return 0;
}

/* ---- spawn: the first call to a server started for it -------------------------------------- */

static int run_spawn(const char *cmd, const char *listen, uint64_t trials, bool json)
{
	char *argv[64];
	char *copy = strdup(cmd);
	int argc = 0;
	for (char *tok = strtok(copy, " "); tok && argc < 60; tok = strtok(NULL, " "))
		argv[argc++] = tok;
	argv[argc++] = "--listen";
	argv[argc++] = (char *)listen;
	argv[argc] = NULL;
	uint64_t *t = bench_xmalloc(trials * sizeof(uint64_t));
	for (uint64_t k = 0; k < trials; k++) {
		int p[2];
		if (pipe(p) < 0) {
			perror("pipe");
			return 1;
		}
		uint64_t t0 = bench_now_ns();
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			dup2(p[1], 1);
			close(p[0]);
			close(p[1]);
			execvp(argv[0], argv);
			_exit(127);
		}
		close(p[1]);
		char line[512];
		size_t n = 0;
		while (n < sizeof line - 1) { /* one line: "listening URI" */
			ssize_t r = read(p[0], line + n, 1);
			if (r <= 0 || line[n] == '\n')
				break;
			n++;
		}
		line[n] = '\0';
		rc_client *c = NULL;
		rc_status st = RC_UNKNOWNADDR;
		if (strncmp(line, "listening ", 10) == 0)
			st = rc_client_create(&c, line + 10, BENCH_PROG, BENCH_VERS);
		if (st == RC_OK)
			st = bench_null_1(c);
		t[k] = bench_now_ns() - t0;
		rc_client_destroy(c);
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		close(p[0]);
		if (st != RC_OK) {
			fprintf(stderr, "%s: spawn '%s': got '%s': %s\n", progname, cmd, line,
			        rc_strerror(st));
			return 1;
		}
	}
	double m, sd;
	mean_sd_us(t, trials, &m, &sd);
	double med = median_us(t, trials);
	if (json)
		printf("{\"bench\":\"spawn\",\"server\":\"%s\",\"listen\":\"%s\",\"trials\":%" PRIu64
		       ",\"first_median_us\":%.3f,\"first_mean_us\":%.3f,\"first_stdev_us\":%.3f}\n",
		       argv[0], listen, trials, med, m, sd);
	else
		printf("start %s and call it: median %.1f us, mean %.1f us\n", argv[0], med, m);
	fflush(stdout);
	free(t);
	free(copy);
	return 0;
}

/* ---- steps: where the time of one call goes ------------------------------------------------ */

enum { ST_ENC, ST_SEND, ST_WAIT, ST_RECV, ST_DEC, ST_TOTAL, ST__N };

/*
 * Encode a CALL (AUTH_NONE) of proc with bench_data arg (proc 2) into buf+4, as the library's
 * client does it: the fixed 40-byte header encoded once with rc_xdr_u_int (hdr), copied and
 * its xid patched per call, the arguments encoded behind it by the generated xdr_bench_data.
 * Returns the message length (0 on failure).
 */
static size_t encode_call(unsigned char *buf, size_t cap, const unsigned char *hdr, uint32_t xid,
                          uint32_t proc, const bench_data *arg)
{
	rc_xdr x;
	uint32_t xid_be = htonl(xid);
	if (cap < 44)
		return 0;
	memcpy(buf + 4, hdr, 40);
	memcpy(buf + 4, &xid_be, 4);
	if (proc != BENCH_SEND)
		return 40;
	rc_xdrmem_create(&x, buf + 44, cap - 44, RC_XDR_ENCODE);
	if (!xdr_bench_data(&x, (bench_data *)arg))
		return 0;
	return 40 + rc_xdr_getpos(&x);
}

/* The fixed words of a call header (xid 0), encoded with rc_xdr_u_int into hdr[40]. */
static bool encode_header(unsigned char *hdr, uint32_t proc)
{
	rc_xdr x;
	uint32_t w[10] = {0, 0, 2, BENCH_PROG, BENCH_VERS, proc, 0, 0, 0, 0};
	rc_xdrmem_create(&x, hdr, 40, RC_XDR_ENCODE);
	for (int i = 0; i < 10; i++)
		if (!rc_xdr_u_int(&x, &w[i]))
			return false;
	return true;
}

/* Decode a reply: true if it answers xid with SUCCESS (and a void result). */
static bool decode_reply(const unsigned char *msg, size_t len, uint32_t xid)
{
	rc_xdr x;
	uint32_t v[5], flavor, vlen, stat;
	rc_xdrmem_create(&x, (void *)msg, len, RC_XDR_DECODE);
	for (int i = 0; i < 3; i++)
		if (!rc_xdr_u_int(&x, &v[i]))
			return false;
	if (v[0] != xid || v[1] != 1 || v[2] != 0)
		return false;
	if (!rc_xdr_u_int(&x, &flavor) || !rc_xdr_u_int(&x, &vlen) || vlen > 400)
		return false;
	if (vlen) {
		unsigned char skip[400];
		if (!rc_xdr_opaque(&x, skip, vlen))
			return false;
	}
	if (!rc_xdr_u_int(&x, &stat) || stat != 0)
		return false;
	return rc_xdr_void(&x, NULL);
}

/* Read one record (TCP) or datagram (UDP) into buf; returns its body length or 0. */
static size_t recv_reply(int fd, bool tcp, unsigned char *buf, size_t cap, unsigned char **body)
{
	if (!tcp) {
		ssize_t n = recv(fd, buf, cap, 0);
		*body = buf;
		return n > 0 ? (size_t)n : 0;
	}
	size_t have = 0, need = 4;
	while (have < need) {
		ssize_t n = recv(fd, buf + have, cap - have, 0);
		if (n <= 0)
			return 0;
		have += (size_t)n;
		if (need == 4 && have >= 4) {
			uint32_t rm = ntohl(*(uint32_t *)(void *)buf);
			need = 4 + (rm & 0x7fffffffu);
			if (need > cap)
				return 0;
		}
	}
	*body = buf + 4;
	return need - 4;
}

/*
 * Time the server's two syscalls on a loopback pair of this transport: receiving a message
 * of in_len bytes that is already queued, and sending one of out_len bytes. Medians in us.
 */
static void syscall_costs(bool tcp, size_t in_len, size_t out_len, int reps, double *recv_us,
                          double *send_us)
{
	int a = -1, b = -1, l = -1, one = 1;
	struct sockaddr_in sa;
	socklen_t sl = sizeof sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*recv_us = *send_us = -1;
	if (tcp) {
		l = socket(AF_INET, SOCK_STREAM, 0);
		if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(l, 1) < 0 ||
		    getsockname(l, (struct sockaddr *)&sa, &sl) < 0)
			goto out;
		a = socket(AF_INET, SOCK_STREAM, 0);
		if (a < 0 || connect(a, (struct sockaddr *)&sa, sizeof sa) < 0)
			goto out;
		b = accept(l, NULL, NULL);
		setsockopt(a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		setsockopt(b, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	} else {
		struct sockaddr_in sb = sa;
		socklen_t sbl = sizeof sb;
		a = socket(AF_INET, SOCK_DGRAM, 0);
		b = socket(AF_INET, SOCK_DGRAM, 0);
		if (a < 0 || b < 0 || bind(b, (struct sockaddr *)&sa, sizeof sa) < 0 ||
		    bind(a, (struct sockaddr *)&sb, sizeof sb) < 0 ||
		    getsockname(b, (struct sockaddr *)&sa, &sl) < 0 ||
		    getsockname(a, (struct sockaddr *)&sb, &sbl) < 0 ||
		    connect(a, (struct sockaddr *)&sa, sizeof sa) < 0 ||
		    connect(b, (struct sockaddr *)&sb, sizeof sb) < 0)
			goto out;
	}
	if (b < 0)
		goto out;
	size_t cap = (in_len > out_len ? in_len : out_len) + 8;
	unsigned char *buf = calloc(1, cap), *rbuf = calloc(1, cap);
	uint64_t *tr = calloc((size_t)reps, sizeof *tr), *ts = calloc((size_t)reps, sizeof *ts);
	if (!buf || !rbuf || !tr || !ts)
		goto out2;
	for (int i = 0; i < reps; i++) {
		/* the server's receive: in_len bytes already queued */
		size_t m = in_len + (tcp ? 4 : 0);
		if (send(a, buf, m, 0) != (ssize_t)m)
			goto out2;
		struct pollfd p = {b, POLLIN, 0};
		poll(&p, 1, 1000);
		if (tcp) { /* let the whole record arrive before timing the read */
			int q = 0;
			for (int k = 0; k < 1000; k++) {
				struct timespec d = {0, 1000};
				if (recv(b, rbuf, cap, MSG_PEEK | MSG_DONTWAIT) >= (ssize_t)m)
					break;
				nanosleep(&d, NULL);
				q++;
			}
			(void)q;
		}
		uint64_t t0 = bench_now_ns();
		size_t got = 0;
		while (got < m) {
			ssize_t r = recv(b, rbuf, cap, 0);
			if (r <= 0)
				goto out2;
			got += (size_t)r;
		}
		tr[i] = bench_now_ns() - t0;
		/* the server's send: out_len bytes (then drained, untimed) */
		m = out_len + (tcp ? 4 : 0);
		t0 = bench_now_ns();
		if (send(b, buf, m, 0) != (ssize_t)m)
			goto out2;
		ts[i] = bench_now_ns() - t0;
		got = 0;
		while (got < m) {
			ssize_t r = recv(a, rbuf, cap, 0);
			if (r <= 0)
				goto out2;
			got += (size_t)r;
		}
	}
	*recv_us = median_us(tr, (size_t)reps);
	*send_us = median_us(ts, (size_t)reps);
out2:
	free(buf);
	free(rbuf);
	free(tr);
	free(ts);
out:
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	if (l >= 0)
		close(l);
}

static int run_steps(const char *uri, size_t size, uint64_t calls, uint64_t warmup, bool json)
{
	bench_uri u;
	char err[300];
	if (!bench_parse_uri(uri, &u, err, sizeof err) || !u.has_port) {
		fprintf(stderr, "%s: %s\n", progname, u.has_port ? err : "the URI needs a port");
		return 2;
	}
	int fd = socket(u.addr.ss_family, u.tcp ? SOCK_STREAM : SOCK_DGRAM, 0), one = 1;
	if (fd < 0 || connect(fd, (struct sockaddr *)&u.addr, u.addrlen) < 0) {
		fprintf(stderr, "%s: %s: %s\n", progname, uri, strerror(errno));
		return 1;
	}
	if (u.tcp)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	uint32_t proc = size ? BENCH_SEND : BENCH_NULL;
	unsigned char *data = bench_xmalloc(size);
	bench_fill_pattern(data, size);
	bench_data arg = {(unsigned)size, (char *)data};
	size_t cap = size + 256;
	unsigned char *out = bench_xmalloc(cap), *in = bench_xmalloc(65536 + 8);
	uint64_t *st[ST__N];
	for (int k = 0; k < ST__N; k++)
		st[k] = bench_xmalloc(calls * sizeof(uint64_t));
	size_t msglen = 0;
	uint32_t xid = (uint32_t)bench_now_ns();
	unsigned char hdr[40];
	if (!encode_header(hdr, proc)) {
		fprintf(stderr, "%s: encode failed\n", progname);
		return 1;
	}
	for (uint64_t i = 0; i < warmup + calls; i++) {
		xid++;
		uint64_t t0 = bench_now_ns();
		msglen = encode_call(out, cap, hdr, xid, proc, &arg);
		uint64_t t1 = bench_now_ns();
		if (!msglen) {
			fprintf(stderr, "%s: encode failed\n", progname);
			return 1;
		}
		ssize_t sent;
		if (u.tcp) {
			uint32_t rm = htonl(0x80000000u | (uint32_t)msglen);
			memcpy(out, &rm, 4);
			sent = send(fd, out, msglen + 4, 0);
			sent = sent == (ssize_t)(msglen + 4) ? (ssize_t)msglen : -1;
		} else {
			sent = send(fd, out + 4, msglen, 0);
		}
		uint64_t t2 = bench_now_ns();
		if (sent != (ssize_t)msglen) {
			fprintf(stderr, "%s: send: %s\n", progname, strerror(errno));
			return 1;
		}
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, 5000) != 1) {
			fprintf(stderr, "%s: no reply within 5 s\n", progname);
			return 1;
		}
		uint64_t t3 = bench_now_ns();
		unsigned char *body;
		size_t blen = recv_reply(fd, u.tcp, in, 65536 + 8, &body);
		uint64_t t4 = bench_now_ns();
		bool ok = blen && decode_reply(body, blen, xid);
		uint64_t t5 = bench_now_ns();
		if (!ok) {
			fprintf(stderr, "%s: bad reply (%zu bytes)\n", progname, blen);
			return 1;
		}
		if (i >= warmup) {
			uint64_t j = i - warmup;
			st[ST_ENC][j] = t1 - t0;
			st[ST_SEND][j] = t2 - t1;
			st[ST_WAIT][j] = t3 - t2;
			st[ST_RECV][j] = t4 - t3;
			st[ST_DEC][j] = t5 - t4;
			st[ST_TOTAL][j] = t5 - t0;
		}
	}
	close(fd);
	double med[ST__N];
	for (int k = 0; k < ST__N; k++)
		med[k] = median_us(st[k], calls);

	/* The server's syscalls: receive the call, send the 24-byte reply. */
	double srecv, ssend;
	syscall_costs(u.tcp, msglen, 24, (int)(calls < 2000 ? calls : 2000), &srecv, &ssend);

	/* The server's decode + dispatch, procedure and reply through an in-process server. */
	rc_server *srv = start_inproc("rc-bench-steps");
	rc_client *c;
	rc_status rs = rc_client_create(&c, "inproc:rc-bench-steps", BENCH_PROG, BENCH_VERS);
	if (rs != RC_OK)
		die("inproc client", rs);
	uint64_t *in_a = bench_xmalloc(calls * sizeof(uint64_t));
	uint64_t *in_p = bench_xmalloc(calls * sizeof(uint64_t));
	uint64_t *in_b = bench_xmalloc(calls * sizeof(uint64_t));
	uint64_t *in_t = bench_xmalloc(calls * sizeof(uint64_t));
	g_stamp = true;
	for (uint64_t i = 0; i < warmup + calls; i++) {
		uint64_t a = bench_now_ns();
		if (!stub_call(c, size ? BP_SEND : BP_NULL, &arg, size))
			return 1;
		uint64_t d = bench_now_ns();
		if (i >= warmup) {
			uint64_t j = i - warmup;
			in_a[j] = g_t_in - a;
			in_p[j] = g_t_out - g_t_in;
			in_b[j] = d - g_t_out;
			in_t[j] = d - a;
		}
	}
	g_stamp = false;
	double ia = median_us(in_a, calls), ip = median_us(in_p, calls);
	double ib = median_us(in_b, calls), it = median_us(in_t, calls);
	rc_client_destroy(c);
	rc_server_destroy(srv);
	/* minus the client's own encoding and decoding, measured above */
	double sdec = ia - med[ST_ENC] > 0 ? ia - med[ST_ENC] : 0;
	double senc = ib - med[ST_DEC] > 0 ? ib - med[ST_DEC] : 0;

	if (json)
		printf("{\"bench\":\"steps\",\"uri\":\"%s\",\"transport\":\"%s\",\"size\":%zu"
		       ",\"msg_bytes\":%zu,\"calls\":%" PRIu64 ",\"enc_us\":%.3f,\"send_us\":%.3f"
		       ",\"wait_us\":%.3f,\"recv_us\":%.3f,\"dec_us\":%.3f,\"total_us\":%.3f"
		       ",\"srv_recv_us\":%.3f,\"srv_decode_dispatch_us\":%.3f,\"srv_proc_us\":%.3f"
		       ",\"srv_encode_us\":%.3f,\"srv_send_us\":%.3f,\"inproc_call_us\":%.3f"
		       ",\"inproc_to_proc_us\":%.3f,\"inproc_from_proc_us\":%.3f}\n",
		       uri, u.tcp ? "tcp" : "udp", size, msglen, calls, med[ST_ENC], med[ST_SEND],
		       med[ST_WAIT], med[ST_RECV], med[ST_DEC], med[ST_TOTAL], srecv, sdec, ip, senc,
		       ssend, it, ia, ib);
	else
		printf("steps %s size %zu: encode %.3f  send %.3f  wait %.3f  recv %.3f  decode "
		       "%.3f  = %.3f us; server: recv %.3f  decode+dispatch %.3f  procedure %.3f  "
		       "encode %.3f  send %.3f us\n",
		       uri, size, med[ST_ENC], med[ST_SEND], med[ST_WAIT], med[ST_RECV],
		       med[ST_DEC], med[ST_TOTAL], srecv, sdec, ip, senc, ssend);
	fflush(stdout);
	for (int k = 0; k < ST__N; k++)
		free(st[k]);
	free(in_a);
	free(in_p);
	free(in_b);
	free(in_t);
	free(out);
	free(in);
	free(data);
	return 0;
}

/* ---- main -------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: %s --what ccall [--json]\n"
	        "       %s --what inproc [--proc null|int|send|sendr|echo] [--size N] [--calls N]\n"
	        "       %s --what first --uri URI [--proc P] [--size N] [--trials N] [--calls N]\n"
	        "       %s --what spawn --server 'CMD ARGS' --listen URI [--trials N]\n"
	        "       %s --what steps --uri URI [--size N] [--calls N] [--warmup N]\n"
	        "  every form takes --json (one JSON object per result line)\n",
	        progname, progname, progname, progname, progname);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"what", required_argument, NULL, 'W'},   {"uri", required_argument, NULL, 'u'},
		{"proc", required_argument, NULL, 'p'},   {"size", required_argument, NULL, 'z'},
		{"calls", required_argument, NULL, 'n'},  {"warmup", required_argument, NULL, 'w'},
		{"trials", required_argument, NULL, 't'}, {"server", required_argument, NULL, 's'},
		{"listen", required_argument, NULL, 'l'}, {"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
	};
	const char *what = NULL, *uri = NULL, *server = NULL, *listen = NULL;
	int proc = BP_NULL;
	uint64_t size = 0, calls = 10000, warmup = 100, trials = 20;
	bool json = false;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		bool ok = true;
		switch (c) {
		case 'W': what = optarg; break;
		case 'u': uri = optarg; break;
		case 's': server = optarg; break;
		case 'l': listen = optarg; break;
		case 'j': json = true; break;
		case 'p': ok = (proc = bench_proc_parse(optarg)) >= 0; break;
		case 'z': ok = bench_parse_u64(optarg, &size) && size <= (64u << 20); break;
		case 'n': ok = bench_parse_u64(optarg, &calls) && calls > 0; break;
		case 'w': ok = bench_parse_u64(optarg, &warmup); break;
		case 't': ok = bench_parse_u64(optarg, &trials) && trials > 0; break;
		case 'h': usage(stdout); return 0;
		default: ok = false;
		}
		if (!ok) {
			fprintf(stderr, "%s: bad option '%s'\n", progname, argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	if (what && strcmp(what, "ccall") == 0) {
		run_ccall(json);
		return 0;
	}
	if (what && strcmp(what, "inproc") == 0)
		return run_inproc(proc, (size_t)size, calls, warmup, json);
	if (what && strcmp(what, "first") == 0 && uri)
		return run_first(uri, proc, (size_t)size, trials, calls, json);
	if (what && strcmp(what, "spawn") == 0 && server && listen)
		return run_spawn(server, listen, trials, json);
	if (what && strcmp(what, "steps") == 0 && uri)
		return run_steps(uri, (size_t)size, calls, warmup, json);
	fprintf(stderr, "%s: --what ccall|inproc|first|spawn|steps (with its options) is required\n",
	        progname);
	usage(stderr);
	return 2;
}

/*
 * rc-bench-server -- serves bench.x with remotecall.
 *
 *   rc-bench-server --listen URI [--listen URI]... [--threads N] [--spin US]
 *                   [--max-record BYTES] [--drc-ttl MS] [--rpcbind] [--rpcbind-takeover] [--work-dist const|exp] [--seed N] [--trace]
 *                   [--stats] [--stats-every MS] [--max-conns N]
 *                   [--tls-cert FILE --tls-key FILE [--tls-ca FILE] [--tls-require]]
 *                   [--drain-ms N] [--log-callers]
 *
 * --tls-cert/--tls-key: offer RPC-over-TLS (rc_server_set_tls); --tls-ca: client
 * certificates are required and must chain to FILE (mutual TLS); --tls-require: bench.x
 * may be called only under TLS (plaintext calls get AUTH_TOOWEAK).
 *
 * --rpcbind: registers with the local rpcbind (rc_server_rpcbind); if anything could not be
 * registered, prints one line per entry (rc_rpcbind_entry_format) on stderr and exits 1.
 * --rpcbind-takeover: the same with RC_RPCBIND_TAKEOVER (replace a live server's entries).
 *
 * --work-dist exp: WORK's argument is a mean; each call sleeps a time drawn from the
 * exponential distribution with that mean (each server process draws independently, as the
 * servers of MultiRPC's Tables I-6..I-9 did) and still returns its argument.
 *
 * --trace: the server records the runtime's trace points (<remotecall/trace.h>) and, when it
 * stops, prints one JSON line with the median of each step of the calls it served
 * (trace_rec.h): dispatch, args, proc, encode, send, total.
 *
 * --stats: when it stops, the server prints one JSON line of its counters (rc_server_get_stats:
 * the duplicate request cache's replays, refusals, ...) and ADD's total, e.g. for the
 * at-most-once tests (tests/faults/amo_pipelined.sh). --stats-every MS prints the same line
 * every MS milliseconds while it serves (the soak test subtracts the cache's bytes from the
 * RSS it watches for leaks).
 *
 * --drc-streams: calls on stream connections go through the duplicate request cache too
 * (rc_server_set_drc_streams for bench.x), keyed by the client's address without its port, so
 * a call a client sends again on a new connection (rc_client_set_resend) runs once.
 *
 * SIGHUP: with --tls-cert, the certificate and key (and --tls-ca) are read again from their
 * files and replace the server's while it serves (rc_server_set_tls): new connections get
 * them, connections under TLS keep theirs. With --gss-principal, the keytab (KRB5_KTNAME) is
 * read again too (rc_server_set_gss a second time): new RPCSEC_GSS contexts are accepted with
 * the keys it holds now, contexts made keep theirs. A line each -- "reloaded TLS",
 * "reloaded keytab" (or "reload failed: why") -- on stderr says how it went.
 *
 * --max-conns N: open stream connections the server keeps at once (rc_server_limits.max_conns;
 * the library's default otherwise). The server raises its descriptor limit from the soft to
 * the hard value at start (bench_raise_nofile), so N may come close to the hard limit.
 *
 * --drain-ms N: SIGTERM drains (rc_server_drain with N ms) instead of stopping: listeners
 * close, every call read is answered, clients that asked are told which calls were never run,
 * and the server exits 0 when its connections are closed or N ms have passed (SIGINT still
 * stops at once). --log-callers: prints "caller ADDR:PORT" (IPv6 as [ADDR]:PORT; "caller
 * unix" / "caller local") the first time a call comes from an address and port -- on a
 * stream, its connection's first call; behind a balancer (?proxy=v2), the client's address;
 * over TLS followed by " tls" and the client certificate's subject if it sent one
 * ("caller 127.0.0.1:40000 tls CN=alice,O=remotecall tests").
 *
 * Prints "listening URI" (the URI actually bound, with the real port) per listener, flushes,
 * and serves until SIGINT or SIGTERM; then exits 0. Bad options: usage on stderr, exit 2.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <remotecall/remotecall.h>

#include "bench.h"
#include "common.h"
#include "trace_rec.h"

static const char *progname = "rc-bench-server";
static rc_server *g_srv;
static _Atomic int64_t g_total; /* ADD's server-wide counter */
static bool g_work_exp;         /* --work-dist exp */
static uint64_t g_seed;         /* --seed */
static _Thread_local uint64_t t_rng;

/* ---- --defer-threads: every call answered later by a pool ------------------------------- */

enum { DF_NULL, DF_INT, DF_SEND, DF_SENDR, DF_ECHO, DF_WORK, DF_ADD };

typedef struct df_item {
	struct df_item *next;
	rc_svc_req *req;
	int proc;
	int64_t v;
	const bench_data *data; /* SENDR, ECHO: the argument (valid until the answer) */
} df_item;

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	df_item *head, *tail;
	unsigned idle; /* pool threads waiting */
	bool stop;
} g_df = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, 0, false};
static unsigned g_defer_threads; /* --defer-threads N (0: answer inline) */

static bool proc_work(uint32_t arg, uint32_t *res);

/* Defer req to the pool when --defer-threads is on: true if it was (the routine returns
 * true and sends nothing); false to answer inline (off, or the call cannot be deferred: an
 * in-process one). */
static __attribute__((noinline)) bool df_defer_slow(rc_svc_req *req, int proc, int64_t v,
                                                   const bench_data *data)
{
	df_item *it;

	if ((it = malloc(sizeof(*it))) == NULL)
		return false;
	if (rc_svc_req_defer(req) != RC_OK) {
		free(it);
		return false;
	}
	*it = (df_item){NULL, req, proc, v, data};
	pthread_mutex_lock(&g_df.mu);
	if (g_df.tail)
		g_df.tail->next = it;
	else
		g_df.head = it;
	g_df.tail = it;
	if (g_df.idle > 0)
		pthread_cond_signal(&g_df.cv);
	pthread_mutex_unlock(&g_df.mu);
	return true;
}

static inline bool df_defer(rc_svc_req *req, int proc, int64_t v, const bench_data *data)
{
	return __builtin_expect(g_defer_threads != 0, 0) && df_defer_slow(req, proc, v, data);
}

/* Answer one deferred call as its routine would have. */
static void df_answer(df_item *it)
{
	switch (it->proc) {
	case DF_NULL: (void)bench_null_1_reply(it->req); break;
	case DF_INT: (void)bench_int_1_reply(it->req); break;
	case DF_SEND: (void)bench_send_1_reply(it->req); break;
	case DF_SENDR: {
		int32_t r = (int32_t)it->data->bench_data_len;
		(void)bench_sendr_1_reply(it->req, &r);
		break;
	}
	case DF_ECHO: (void)bench_echo_1_reply(it->req, it->data); break;
	case DF_WORK: {
		uint32_t r;
		(void)proc_work((uint32_t)it->v, &r);
		(void)bench_work_1_reply(it->req, &r);
		break;
	}
	case DF_ADD: {
		int64_t r = atomic_fetch_add(&g_total, it->v) + it->v;
		(void)bench_add_1_reply(it->req, &r);
		break;
	}
	}
}

/* A pool thread: answer deferred calls until stopped; at the stop, what is left is dropped
 * (the server has stopped: the answers only free the requests). */
static void *df_pool(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&g_df.mu);
	for (;;) {
		df_item *it = g_df.head;
		if (it == NULL) {
			if (g_df.stop)
				break;
			g_df.idle++;
			pthread_cond_wait(&g_df.cv, &g_df.mu);
			g_df.idle--;
			continue;
		}
		bool stop = g_df.stop;
		if ((g_df.head = it->next) == NULL)
			g_df.tail = NULL;
		pthread_mutex_unlock(&g_df.mu);
		if (stop)
			(void)rc_svc_req_drop(it->req);
		else
			df_answer(it);
		free(it);
		pthread_mutex_lock(&g_df.mu);
	}
	pthread_mutex_unlock(&g_df.mu);
	return NULL;
}

/* ---- the procedures ---------------------------------------------------------------------- */

bool bench_null_1_svc(rc_svc_req *req)
{
	(void)df_defer(req, DF_NULL, 0, NULL);
	return true;
}

bool bench_int_1_svc(const int32_t *arg, rc_svc_req *req)
{
	(void)arg;
	(void)df_defer(req, DF_INT, 0, NULL);
	return true;
}

bool bench_send_1_svc(const bench_data *arg, rc_svc_req *req)
{
	(void)arg;
	(void)df_defer(req, DF_SEND, 0, NULL);
	return true;
}

/* SENDR: the number of bytes received. */
bool bench_sendr_1_svc(const bench_data *arg, int32_t *res, rc_svc_req *req)
{
	if (df_defer(req, DF_SENDR, 0, arg))
		return true;
	*res = (int32_t)arg->bench_data_len;
	return true;
}

/* ECHO: the argument's bytes back, without a copy: the result points at them (valid until
 * the reply is encoded) and is not the server's to free (rc_svc_req_keep_result). */
bool bench_echo_1_svc(const bench_data *arg, bench_data *res, rc_svc_req *req)
{
	if (df_defer(req, DF_ECHO, 0, arg))
		return true;
	res->bench_data_len = arg->bench_data_len;
	res->bench_data_val = arg->bench_data_val;
	return rc_svc_req_keep_result(req) == RC_OK;
}

/* WORK: sleep the given microseconds (--work-dist exp: a draw with that mean), return them. */
bool bench_work_1_svc(const uint32_t *arg, uint32_t *res, rc_svc_req *req)
{
	if (df_defer(req, DF_WORK, *arg, NULL))
		return true;
	return proc_work(*arg, res);
}

/* WORK's body: sleep arg microseconds (or a draw with that mean), *res = arg. */
static bool proc_work(uint32_t arg0, uint32_t *res)
{
	const uint32_t *arg = &arg0;
	uint32_t us = *arg;
	if (g_work_exp) {
		if (!t_rng)
			t_rng = bench_seed(g_seed ? g_seed + (uint64_t)(uintptr_t)&t_rng : 0);
		us = bench_draw_exp(&t_rng, (double)*arg);
	}
	struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	*res = *arg;
	return true;
}

/* ADD: add to the server-wide total, return the new total (not idempotent). */
bool bench_add_1_svc(const int64_t *arg, int64_t *res, rc_svc_req *req)
{
	if (df_defer(req, DF_ADD, *arg, NULL))
		return true;
	*res = atomic_fetch_add(&g_total, *arg) + *arg;
	return true;
}

/* ---- main -------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: %s --listen URI [--listen URI]... [--threads N] [--spin US]\n"
	        "       [--defer-threads N]\n"
	        "       [--max-record BYTES] [--rpcbind]\n"
	        "       [--rpcbind-takeover] [--work-dist const|exp] [--seed N] [--trace]\n"
	        "       [--tls-cert FILE --tls-key FILE [--tls-ca FILE] [--tls-require]]\n"
	        "       [--gss-principal NAME [--gss-require none|integrity|privacy]]\n"
	        "  --listen URI   udp://HOST:PORT, tcp://HOST:PORT, unix:/PATH (port 0: any);\n"
	        "                 prints 'listening URI' with the real port for each\n"
	        "  --threads N    worker threads [1]\n"
	        "  --spin US      poll up to US microseconds before sleeping for a request [0]\n"
	        "  --max-record BYTES  largest request record or datagram taken (and twice that\n"
	        "                 for decoding one request's arguments) [4 MiB]\n"
	        "  --drc-ttl MS   how long the duplicate request cache remembers a UDP call after\n"
	        "                 its reply [120000]\n"
	        "  --rpcbind      register with the local rpcbind (unregistered at exit); what\n"
	        "                 fails is listed and the server exits 1\n"
	        "  --rpcbind-takeover  the same, replacing another live server's registration\n"
	        "  --work-dist D  const: WORK sleeps its argument; exp: a draw with that mean [const]\n"
	        "  --seed N       seed of those draws [clock and pid]\n"
	        "  --trace        record the runtime's trace points; at exit print one JSON line of\n"
	        "                 per-step medians\n"
	        "  --stats        at exit print one JSON line of the server's counters and ADD's total\n"
	        "  --stats-every MS  print that line every MS milliseconds too\n"
	        "  --max-conns N  open stream connections kept at once (rc_server_limits.max_conns)\n"
	        "                 [the library's default, 16384]\n"
	        "  --tls-cert FILE --tls-key FILE  offer RPC-over-TLS with this certificate, key\n"
	        "  --tls-ca FILE  require client certificates that chain to FILE (mutual TLS)\n"
	        "  --tls-require  serve bench.x only under TLS (plaintext: AUTH_TOOWEAK)\n"
	        "                 (SIGHUP reads the certificate and key again: new connections\n"
	        "                 get them)\n"
	        "  --drc-streams  the duplicate request cache covers TCP and unix calls too\n"
	        "                 (keyed by the client's address without its port)\n"
	        "  --gss-principal NAME  accept RPCSEC_GSS as NAME (host-based, e.g.\n"
	        "                 rcbench@localhost; keys from KRB5_KTNAME; SIGHUP reads the\n"
	        "                 keytab again: new contexts get its keys)\n"
	        "  --gss-require S  serve bench.x only under RPCSEC_GSS with service S or more\n"
	        "                 (none, integrity, privacy; others: AUTH_TOOWEAK; NULL exempt)\n"
	        "  --drain-ms N   SIGTERM drains (rc_server_drain, N ms at most), then exits 0\n"
	        "  --log-callers  print 'caller ADDR:PORT' for each new caller (a connection's\n"
	        "                 first call; behind ?proxy=v2, the client's address; over TLS\n"
	        "                 followed by 'tls' and the client certificate's subject)\n",
	        progname);
}

/* --stats: one JSON line of the server's counters and ADD's total on stdout. */
static void print_stats(rc_server *srv)
{
	rc_server_stats st;
	if (rc_server_get_stats(srv, &st) != RC_OK)
		return;
	printf("{\"add_total\":%" PRId64 ",\"drc_entries\":%" PRIu64 ",\"drc_bytes\":%" PRIu64
	       ",\"drc_replayed\":%" PRIu64 ",\"drc_in_progress\":%" PRIu64
	       ",\"drc_unanswered\":%" PRIu64 ",\"drc_shed\":%" PRIu64 ",\"drc_refused\":%" PRIu64
	       ",\"conns\":%" PRIu64 ",\"conns_accepted\":%" PRIu64 ",\"conns_evicted\":%" PRIu64
	       ",\"conns_refused\":%" PRIu64 ",\"accept_nofile\":%" PRIu64
	       ",\"conns_proxied\":%" PRIu64 ",\"conns_proxy_refused\":%" PRIu64 "}\n",
	       (int64_t)atomic_load(&g_total), st.drc_entries, st.drc_bytes, st.drc_replayed,
	       st.drc_in_progress, st.drc_unanswered, st.drc_shed, st.drc_refused, st.conns,
	       st.conns_accepted, st.conns_evicted, st.conns_refused, st.accept_nofile,
	       st.conns_proxied, st.conns_proxy_refused);
	fflush(stdout);
}

/* --stats-every: the printing thread, until g_stats_stop. */
static unsigned g_stats_ms;
static bool g_stats_stop;
static pthread_mutex_t g_stats_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_stats_cv = PTHREAD_COND_INITIALIZER;

/* Print the stats line every g_stats_ms ms until told to stop (g_stats_stop, signalled). */
static void *stats_loop(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&g_stats_mu);
	while (!g_stats_stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += g_stats_ms / 1000;
		ts.tv_nsec += (long)(g_stats_ms % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&g_stats_cv, &g_stats_mu, &ts);
		if (!g_stats_stop)
			print_stats(g_srv);
	}
	pthread_mutex_unlock(&g_stats_mu);
	return NULL;
}

/* SIGHUP: the handler writes a byte to this pipe; reload_loop reads it and reloads the TLS
 * certificate and the keytab (rc_server_set_tls and rc_server_set_gss are not for a signal
 * handler: they read files, allocate). */
static int g_hup[2] = {-1, -1};
static rc_tls_server_opts g_tls;  /* cert_file NULL: no TLS to reload */
static const char *g_gss_principal; /* NULL: no keytab to reload */

static void on_hup(int sig)
{
	char b = 1;
	(void)sig;
	if (write(g_hup[1], &b, 1) < 0) {
		/* a reload is pending already */
	}
}

/* Reload the certificate on every byte, until the pipe closes (main, at exit). */
static void *reload_loop(void *arg)
{
	char b, why[256];
	(void)arg;
	while (read(g_hup[0], &b, 1) == 1) {
		rc_status st;
		if (g_tls.cert_file != NULL) {
			st = rc_server_set_tls(g_srv, &g_tls, why, sizeof(why));
			if (st == RC_OK)
				fprintf(stderr, "%s: reloaded TLS\n", progname);
			else
				fprintf(stderr, "%s: reload failed: %s [%s]: %s\n", progname,
				        rc_strerror(st), rc_status_name(st), why);
		}
		if (g_gss_principal != NULL) {
			st = rc_server_set_gss(g_srv, g_gss_principal, NULL, why, sizeof(why));
			if (st == RC_OK)
				fprintf(stderr, "%s: reloaded keytab\n", progname);
			else
				fprintf(stderr, "%s: reload failed: %s [%s]: %s\n", progname,
				        rc_strerror(st), rc_status_name(st), why);
		}
	}
	return NULL;
}

static uint32_t g_drain_ms; /* --drain-ms: SIGTERM drains */

static void on_signal(int sig)
{
	if (g_srv == NULL)
		return;
	if (sig == SIGTERM && g_drain_ms > 0)
		rc_server_drain(g_srv, g_drain_ms); /* (async-signal-safe) */
	else
		rc_server_stop(g_srv);
}

/* --log-callers: the addresses and ports seen (open addressing, string keys), under mu. */
static struct {
	pthread_mutex_t mu;
	char (*seen)[64];
	size_t cap, n;
} g_callers = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

/* The authentication hook of --log-callers: every call passes here before dispatch. */
static uint32_t log_caller(const rc_svc_req *req, void *ctx)
{
	struct sockaddr_storage ss;
	unsigned len = sizeof(ss);
	char host[INET6_ADDRSTRLEN], key[64];
	uint64_t h = 1469598103934665603ull;
	size_t i;

	(void)ctx;
	if (rc_svc_req_caller(req, &ss, &len) != RC_OK || len == 0)
		snprintf(key, sizeof(key), "local");
	else if (ss.ss_family == AF_INET)
		snprintf(key, sizeof(key), "%s:%u",
		         inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host)),
		         ntohs(((struct sockaddr_in *)&ss)->sin_port));
	else if (ss.ss_family == AF_INET6)
		snprintf(key, sizeof(key), "[%s]:%u",
		         inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host,
		                   sizeof(host)),
		         ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
	else
		snprintf(key, sizeof(key), "unix");
	for (const char *p = key; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	pthread_mutex_lock(&g_callers.mu);
	if (g_callers.n * 2 >= g_callers.cap) { /* grow (and rehash) at half full */
		size_t ncap = g_callers.cap ? g_callers.cap * 2 : 1024;
		char(*nt)[64] = calloc(ncap, 64);
		if (nt == NULL) {
			pthread_mutex_unlock(&g_callers.mu);
			return 0;
		}
		for (size_t k = 0; k < g_callers.cap; k++) {
			uint64_t g = 1469598103934665603ull;
			if (g_callers.seen[k][0] == '\0')
				continue;
			for (const char *p = g_callers.seen[k]; *p; p++)
				g = (g ^ (unsigned char)*p) * 1099511628211ull;
			for (i = g % ncap; nt[i][0] != '\0'; i = (i + 1) % ncap)
				;
			memcpy(nt[i], g_callers.seen[k], 64);
		}
		free(g_callers.seen);
		g_callers.seen = nt;
		g_callers.cap = ncap;
	}
	for (i = h % g_callers.cap; g_callers.seen[i][0] != '\0'; i = (i + 1) % g_callers.cap)
		if (strcmp(g_callers.seen[i], key) == 0)
			break;
	if (g_callers.seen[i][0] == '\0') {
		memcpy(g_callers.seen[i], key, sizeof(key));
		g_callers.n++;
		const rc_tls_peer *peer = rc_svc_req_tls_peer(req);
		/* over TLS: " tls", and the client certificate's subject when it sent one */
		printf("caller %s%s%s%s\n", key, rc_svc_req_tls(req) ? " tls" : "", peer ? " " : "",
		       peer ? peer->subject : "");
		fflush(stdout);
	}
	pthread_mutex_unlock(&g_callers.mu);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"listen", required_argument, NULL, 'l'},
		{"threads", required_argument, NULL, 't'},
		{"spin", required_argument, NULL, 'P'},
		{"defer-threads", required_argument, NULL, 'F'},
		{"max-record", required_argument, NULL, 'M'},
		{"drc-ttl", required_argument, NULL, 'D'},
		{"rpcbind", no_argument, NULL, 'r'},
		{"rpcbind-takeover", no_argument, NULL, 'R'},
		{"work-dist", required_argument, NULL, 'w'},
		{"seed", required_argument, NULL, 's'},
		{"trace", no_argument, NULL, 'T'},
		{"stats", no_argument, NULL, 'S'},
		{"stats-every", required_argument, NULL, 'E'},
		{"tls-cert", required_argument, NULL, 'C'},
		{"tls-key", required_argument, NULL, 'K'},
		{"tls-ca", required_argument, NULL, 'A'},
		{"tls-require", no_argument, NULL, 'Q'},
		{"drc-streams", no_argument, NULL, 'Z'},
		{"max-conns", required_argument, NULL, 'N'},
		{"gss-principal", required_argument, NULL, 'G'},
		{"gss-require", required_argument, NULL, 'g'},
		{"drain-ms", required_argument, NULL, 'd'},
		{"log-callers", no_argument, NULL, 'L'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *listen[BENCH_MAX_LISTEN];
	int nlisten = 0;
	uint64_t threads = 1, spin_us = 0, max_record = 0, drc_ttl = 0, max_conns = 0;
	uint64_t defer_threads = 0;
	pthread_t df_tids[256];
	bool rpcbind = false, stats = false, log_callers = false;
	unsigned rpcbind_flags = 0;
	uint64_t stats_every = 0;
	pthread_t stats_tid;
	bool stats_thread = false;
	trace_rec *trace = NULL;
	rc_tls_server_opts tls = {0};
	bool tls_require = false, drc_streams = false;
	const char *gss_principal = NULL; /* --gss-principal */
	rc_gss_service gss_require = RC_GSS_NOT_REQUIRED; /* --gss-require */
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			if (nlisten == BENCH_MAX_LISTEN) {
				fprintf(stderr, "%s: at most %d --listen\n", progname, BENCH_MAX_LISTEN);
				usage(stderr);
				return 2;
			}
			listen[nlisten++] = optarg;
			break;
		case 't':
			if (!bench_parse_u64(optarg, &threads) || threads == 0 || threads > 1024) {
				fprintf(stderr, "%s: bad --threads '%s'\n", progname, optarg);
				usage(stderr);
				return 2;
			}
			break;
		case 'P':
			if (!bench_parse_u64(optarg, &spin_us) || spin_us > 1000000) {
				fprintf(stderr, "%s: bad --spin '%s'\n", progname, optarg);
				usage(stderr);
				return 2;
			}
			break;
		case 'M':
			if (!bench_parse_u64(optarg, &max_record) || max_record < 64 ||
			    max_record > ((uint64_t)1 << 30)) {
				fprintf(stderr, "%s: bad --max-record '%s'\n", progname, optarg);
				usage(stderr);
				return 2;
			}
			break;
		case 'N':
			if (!bench_parse_u64(optarg, &max_conns) || max_conns == 0 ||
			    max_conns > UINT32_MAX) {
				fprintf(stderr, "%s: bad --max-conns '%s'\n", progname, optarg);
				usage(stderr);
				return 2;
			}
			break;
		case 'D':
			if (!bench_parse_u64(optarg, &drc_ttl) || drc_ttl == 0 || drc_ttl > 86400000) {
				fprintf(stderr, "%s: bad --drc-ttl '%s'\n", progname, optarg);
				usage(stderr);
				return 2;
			}
			break;
		case 'r':
			rpcbind = true;
			break;
		case 'R':
			rpcbind = true;
			rpcbind_flags = RC_RPCBIND_TAKEOVER;
			break;
		case 'w':
			if (strcmp(optarg, "const") == 0) {
				g_work_exp = false;
			} else if (strcmp(optarg, "exp") == 0) {
				g_work_exp = true;
			} else {
				fprintf(stderr, "%s: bad --work-dist '%s'\n", progname, optarg);
				usage(stderr);
				return 2;
			}
			break;
		case 's':
			if (!bench_parse_u64(optarg, &g_seed)) {
				fprintf(stderr, "%s: bad --seed '%s'\n", progname, optarg);
				usage(stderr);
				return 2;
			}
			break;
		case 'T':
			if (trace == NULL && (trace = trace_rec_new(true, (size_t)1 << 20)) == NULL) {
				fprintf(stderr, "%s: out of memory\n", progname);
				return 1;
			}
			break;
		case 'S':
			stats = true;
			break;
		case 'E':
			if (!bench_parse_u64(optarg, &stats_every) || stats_every == 0 ||
			    stats_every > 3600000) {
				fprintf(stderr, "%s: bad --stats-every '%s'\n", progname, optarg);
				usage(stderr);
				return 2;
			}
			break;
		case 'C':
			tls.cert_file = optarg;
			break;
		case 'K':
			tls.key_file = optarg;
			break;
		case 'A':
			tls.client_ca_file = optarg;
			tls.clientcert = RC_TLS_CERT_REQUIRED;
			break;
		case 'Q':
			tls_require = true;
			break;
		case 'Z':
			drc_streams = true;
			break;
		case 'G':
			gss_principal = optarg;
			break;
		case 'g':
			gss_require = strcmp(optarg, "none") == 0        ? RC_GSS_NONE
			              : strcmp(optarg, "integrity") == 0 ? RC_GSS_INTEGRITY
			              : strcmp(optarg, "privacy") == 0   ? RC_GSS_PRIVACY
			                                                 : RC_GSS_NOT_REQUIRED;
			if (gss_require == RC_GSS_NOT_REQUIRED) {
				fprintf(stderr, "%s: --gss-require: none, integrity or privacy\n", progname);
				return 2;
			}
			break;
		case 'F':
			if (!bench_parse_u64(optarg, &defer_threads) || defer_threads < 1 ||
			    defer_threads > 256) {
				fprintf(stderr, "%s: --defer-threads: expected 1..256\n", progname);
				return 2;
			}
			break;
		case 'd': {
			uint64_t ms;
			if (!bench_parse_u64(optarg, &ms) || ms == 0 || ms > 3600000) {
				fprintf(stderr, "%s: --drain-ms: expected 1..3600000\n", progname);
				return 2;
			}
			g_drain_ms = (uint32_t)ms;
			break;
		}
		case 'L':
			log_callers = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "%s: bad option '%s'\n", progname, argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || nlisten == 0) {
		if (optind < argc)
			fprintf(stderr, "%s: unexpected argument '%s'\n", progname, argv[optind]);
		else
			fprintf(stderr, "%s: --listen is required\n", progname);
		usage(stderr);
		return 2;
	}

	rc_status st = rc_server_create(&g_srv);
	if (st != RC_OK) {
		fprintf(stderr, "%s: %s\n", progname, rc_strerror(st));
		return 1;
	}
	st = bench_prog_1_register(g_srv, NULL);
	if (st != RC_OK) {
		fprintf(stderr, "%s: register: %s\n", progname, rc_strerror(st));
		return 1;
	}
	if (drc_streams &&
	    (st = rc_server_set_drc_streams(g_srv, BENCH_PROG, BENCH_VERS, true)) != RC_OK) {
		fprintf(stderr, "%s: --drc-streams: %s\n", progname, rc_strerror(st));
		return 1;
	}
	if ((tls.cert_file == NULL) != (tls.key_file == NULL) ||
	    ((tls.client_ca_file || tls_require) && tls.cert_file == NULL)) {
		fprintf(stderr, "%s: --tls-cert and --tls-key go together; --tls-ca and "
		        "--tls-require need them\n", progname);
		usage(stderr);
		return 2;
	}
	if (tls.cert_file != NULL) {
		char why[256];
		if ((st = rc_server_set_tls(g_srv, &tls, why, sizeof(why))) != RC_OK) {
			fprintf(stderr, "%s: TLS: %s [%s]: %s\n", progname, rc_strerror(st),
			        rc_status_name(st), why);
			return 1;
		}
		if (tls_require &&
		    (st = rc_server_set_tls_required(g_srv, BENCH_PROG, BENCH_VERS, true)) != RC_OK) {
			fprintf(stderr, "%s: --tls-require: %s\n", progname, rc_strerror(st));
			return 1;
		}
	}
	if (gss_require != RC_GSS_NOT_REQUIRED && gss_principal == NULL) {
		fprintf(stderr, "%s: --gss-require needs --gss-principal\n", progname);
		return 2;
	}
	if (gss_principal != NULL) {
		char why[400];
		if ((st = rc_server_set_gss(g_srv, gss_principal, NULL, why, sizeof(why))) != RC_OK) {
			fprintf(stderr, "%s: --gss-principal %s: %s [%s]: %s\n", progname, gss_principal,
			        rc_strerror(st), rc_status_name(st), why);
			return 1;
		}
		if (gss_require != RC_GSS_NOT_REQUIRED &&
		    (st = rc_server_set_gss_required(g_srv, BENCH_PROG, BENCH_VERS, gss_require)) !=
		            RC_OK) {
			fprintf(stderr, "%s: --gss-require: %s\n", progname, rc_strerror(st));
			return 1;
		}
	}
	(void)bench_raise_nofile();
	if (max_record > 0 || drc_ttl > 0 || max_conns > 0) {
		rc_server_limits lim = {.max_record = (size_t)max_record,
		                        .max_alloc = (size_t)max_record * 2,
		                        .drc_ttl_ms = (uint32_t)drc_ttl,
		                        .max_conns = (uint32_t)max_conns};
		if ((st = rc_server_set_limits(g_srv, &lim)) != RC_OK) {
			fprintf(stderr, "%s: --max-record/--drc-ttl/--max-conns: %s\n", progname,
			        rc_strerror(st));
			return 1;
		}
	}
	if (trace)
		rc_server_set_trace(g_srv, trace_rec_point, trace);
	if (log_callers)
		rc_server_set_auth(g_srv, log_caller, NULL);
	if (spin_us > 0 && (st = rc_server_set_spin(g_srv, (uint32_t)spin_us)) != RC_OK) {
		fprintf(stderr, "%s: --spin %u: %s\n", progname, (unsigned)spin_us, rc_strerror(st));
		return 1;
	}
	if (threads > 1 && (st = rc_server_set_threads(g_srv, (unsigned)threads)) != RC_OK) {
		fprintf(stderr, "%s: --threads %u: %s\n", progname, (unsigned)threads,
		        rc_strerror(st));
		return 1;
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	pthread_t reload_tid;
	bool reloading = false;
	if ((tls.cert_file != NULL || gss_principal != NULL) && pipe(g_hup) == 0) {
		g_tls = tls;
		g_gss_principal = gss_principal;
		reloading = pthread_create(&reload_tid, NULL, reload_loop, NULL) == 0;
		if (reloading) {
			sa.sa_handler = on_hup;
			sigaction(SIGHUP, &sa, NULL);
		}
	}

	char bound[512];
	for (int i = 0; i < nlisten; i++) {
		st = rc_server_listen(g_srv, listen[i], bound, sizeof bound);
		if (st != RC_OK) {
			rc_error e;
			char why[256];
			rc_server_geterr(g_srv, &e);
			fprintf(stderr, "%s: listen %s: %s [%s]\n", progname, listen[i],
			        rc_error_format(&e, why, sizeof why), rc_status_name(st));
			rc_server_destroy(g_srv);
			return 1;
		}
		printf("listening %s\n", bound);
	}
	if (rpcbind && (st = rc_server_rpcbind_ex(g_srv, true, rpcbind_flags)) != RC_OK) {
		rc_rpcbind_entry ent[2 * BENCH_MAX_LISTEN];
		size_t n = rc_server_rpcbind_entries(g_srv, ent, 2 * BENCH_MAX_LISTEN);
		fprintf(stderr, "%s: rpcbind: %s [%s]\n", progname, rc_strerror(st),
		        rc_status_name(st));
		for (size_t i = 0; i < n && i < 2 * BENCH_MAX_LISTEN; i++) {
			char line[256];
			fprintf(stderr, "%s: rpcbind: %s [%s]\n", progname,
			        rc_rpcbind_entry_format(&ent[i], line, sizeof line),
			        rc_status_name(ent[i].status));
		}
		rc_server_destroy(g_srv);
		return 1;
	}
	fflush(stdout);

	if (stats_every > 0) {
		g_stats_ms = (unsigned)stats_every;
		stats_thread = pthread_create(&stats_tid, NULL, stats_loop, NULL) == 0;
	}
	g_defer_threads = (unsigned)defer_threads;
	for (unsigned i = 0; i < g_defer_threads; i++)
		if (pthread_create(&df_tids[i], NULL, df_pool, NULL) != 0) {
			fprintf(stderr, "%s: --defer-threads: cannot start a thread\n", progname);
			return 1;
		}
	st = rc_server_run(g_srv);
	if (g_defer_threads > 0) { /* the server has stopped: what is left is dropped */
		pthread_mutex_lock(&g_df.mu);
		g_df.stop = true;
		pthread_cond_broadcast(&g_df.cv);
		pthread_mutex_unlock(&g_df.mu);
		for (unsigned i = 0; i < g_defer_threads; i++)
			pthread_join(df_tids[i], NULL);
	}
	if (stats_thread) {
		pthread_mutex_lock(&g_stats_mu);
		g_stats_stop = true;
		pthread_cond_signal(&g_stats_cv);
		pthread_mutex_unlock(&g_stats_mu);
		pthread_join(stats_tid, NULL);
	}
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, NULL); /* no rc_server_stop on a destroyed server */
	if (reloading) { /* the reloader ends at the pipe's end, before the server goes */
		close(g_hup[1]);
		pthread_join(reload_tid, NULL);
		close(g_hup[0]);
	}
	if (stats)
		print_stats(g_srv);
	rc_server_destroy(g_srv);
	g_srv = NULL;
	if (trace) {
		trace_rec_print(trace, stdout);
		trace_rec_free(trace);
	}
	if (st != RC_OK) {
		fprintf(stderr, "%s: %s [%s]\n", progname, rc_strerror(st), rc_status_name(st));
		return 1;
	}
	return 0;
}

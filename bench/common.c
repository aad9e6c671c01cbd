/* bench/common.c -- see common.h. */
#include "common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static const char *const proc_names[BP__COUNT] = {
	"null", "int", "send", "sendr", "echo", "work", "add",
};

const char *bench_proc_name(bench_proc p)
{
	return (p >= 0 && p < BP__COUNT) ? proc_names[p] : NULL;
}

int bench_proc_parse(const char *s)
{
	for (int i = 0; i < BP__COUNT; i++)
		if (strcmp(s, proc_names[i]) == 0)
			return i;
	return -1;
}

bool bench_proc_has_data(bench_proc p)
{
	return p == BP_SEND || p == BP_SENDR || p == BP_ECHO;
}

void *bench_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fprintf(stderr, "out of memory (%zu bytes)\n", n);
		exit(1);
	}
	return p;
}

uint64_t bench_seed(uint64_t s)
{
	if (!s)
		s = bench_now_ns() ^ ((uint64_t)getpid() << 32);
	s ^= 0x9e3779b97f4a7c15u;
	return s ? s : 1;
}

uint32_t bench_draw_exp(uint64_t *state, double mean)
{
	uint64_t x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	/* 53 random bits -> u in (0, 1] */
	double u = ((double)((x * 0x2545f4914f6cdd1du) >> 11) + 1.0) / 9007199254740992.0;
	double v = -mean * log(u);
	if (!(v >= 0))
		return 0;
	if (v >= 4294967295.0)
		return UINT32_MAX;
	return (uint32_t)(v + 0.5);
}

uint64_t bench_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		rlim_t was = rl.rlim_cur;
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			rl.rlim_cur = was;
	}
	return (uint64_t)rl.rlim_cur;
}

bool bench_parse_u64(const char *s, uint64_t *out)
{
	if (!s || !*s || *s == '-')
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s)
		return false;
	uint64_t mul = 1;
	if (*end == 'k' || *end == 'K')
		mul = 1024, end++;
	else if (*end == 'm' || *end == 'M')
		mul = 1024 * 1024, end++;
	else if (*end == 'g' || *end == 'G')
		mul = 1024 * 1024 * 1024, end++;
	if (*end)
		return false;
	if (v > UINT64_MAX / mul)
		return false;
	*out = (uint64_t)v * mul;
	return true;
}

bool bench_parse_i64(const char *s, int64_t *out)
{
	if (!s || !*s)
		return false;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 0);
	if (errno || end == s || *end)
		return false;
	*out = v;
	return true;
}

/* ---- client options ----------------------------------------------------------------------- */

static void client_usage(FILE *f, const char *prog, const bench_mode *modes, int nmodes)
{
	fprintf(f,
	        "usage: %s --uri URI [--uri URI]... --proc null|int|send|sendr|echo|work|add\n"
	        "          [--size BYTES] [--arg N] [--calls N] [--warmup N] [--mode MODE]\n"
	        "          [--depth N] [--threads N] [--arg-dist const|exp] [--seed N] [--json]\n"
	        "          [--keep-going] [--timeout MS] [--spin US] [--max-seconds S]\n"
	        "          [--tls opportunistic|required [--tls-ca FILE]\n"
	        "          [--tls-cert FILE --tls-key FILE] [--tls-name NAME]]\n"
	        "          [--gss none|integrity|privacy [--gss-service NAME]] [--failover]\n"
	        "          [--auth-sys]\n"
	        "  --uri URI      udp://HOST:PORT, tcp://HOST:PORT (no port: ask HOST's rpcbind);\n"
	        "                 with several, one call is one round over all of them\n"
	        "  --proc P       the bench.x procedure to call\n"
	        "  --size BYTES   bench_data length for send/sendr/echo (k/m suffixes) [0]\n"
	        "  --arg N        argument of int, work (microseconds to sleep) and add [0; add: 1]\n"
	        "  --calls N      measured calls [10000]\n"
	        "  --warmup N     calls made before measuring [100]\n"
	        "  --arg-dist D   const: every call sends --arg; exp: each call draws its argument\n"
	        "                 from an exponential distribution with mean --arg [const]\n"
	        "  --seed N       seed of those draws [clock and pid]\n"
	        "  --depth N      calls in flight per URI (modes that take it) [16]\n"
	        "  --threads N    threads sharing one client per URI; calls divided among them [1]\n"
	        "  --json         one JSON object per line\n"
	        "  --keep-going   count failed calls instead of stopping at the first\n"
	        "  --timeout MS   total time one call may take [library default]\n"
	        "  --spin US      poll up to US microseconds for each reply before sleeping [0]\n"
	        "  --max-seconds S  stop measuring after S seconds even if fewer than --calls were\n"
	        "                 made (the output counts the calls made) [no limit]\n"
	        "  --trace        (remotecall, block mode, one thread) record the runtime's trace\n"
	        "                 points; a second JSON line gives each step's median\n"
	        "  --tls P        (remotecall, tcp) RPC-over-TLS: opportunistic or required\n"
	        "  --tls-ca FILE  CAs the server's certificate must chain to [the system's]\n"
	        "  --tls-cert FILE --tls-key FILE  client certificate and key (mutual TLS)\n"
	        "  --tls-name NAME  name the server's certificate must carry [the URI's host]\n"
	        "  --gss S        (remotecall) RPCSEC_GSS with Kerberos, service none, integrity or\n"
	        "                 privacy (a ticket in KRB5CCNAME: kinit first)\n"
	        "  --gss-service NAME  the server's host-based name [rcbench@localhost]\n"
	        "  --failover     (remotecall, tcp) after a server's drain, send the calls it never\n"
	        "                 ran again on a new connection (rc_client_set_failover)\n"
	        "  --auth-sys     (remotecall) AUTH_SYS credentials on every call (this host, the\n"
	        "                 process's uid and gids: rc_client_set_auth_sys)\n"
	        "  --prog N, --vers N, --procnum N   call other numbers (error-path tests;\n"
	        "                 --procnum calls procedure N with void argument and result)\n"
	        "  --mode MODE    how calls are made [%s]:\n",
	        prog, modes[0].name);
	for (int i = 0; i < nmodes; i++)
		fprintf(f, "      %-8s %s\n", modes[i].name, modes[i].help);
}

enum {
	OPT_URI = 1000, OPT_PROC, OPT_SIZE, OPT_ARG, OPT_CALLS, OPT_WARMUP, OPT_MODE, OPT_THREADS,
	OPT_JSON, OPT_DEPTH, OPT_KEEP, OPT_TIMEOUT, OPT_PROG, OPT_VERS, OPT_PROCNUM, OPT_QUIET,
	OPT_HELP, OPT_ARGDIST, OPT_SEED, OPT_MAXSEC, OPT_TRACE, OPT_SPIN, OPT_TLS, OPT_TLS_CA, OPT_TLS_CERT,
	OPT_TLS_KEY, OPT_TLS_NAME, OPT_GSS, OPT_GSS_SERVICE, OPT_FAILOVER, OPT_AUTH_SYS
};

static const struct option client_longopts[] = {
	{"uri", required_argument, NULL, OPT_URI},
	{"proc", required_argument, NULL, OPT_PROC},
	{"size", required_argument, NULL, OPT_SIZE},
	{"arg", required_argument, NULL, OPT_ARG},
	{"calls", required_argument, NULL, OPT_CALLS},
	{"warmup", required_argument, NULL, OPT_WARMUP},
	{"mode", required_argument, NULL, OPT_MODE},
	{"depth", required_argument, NULL, OPT_DEPTH},
	{"threads", required_argument, NULL, OPT_THREADS},
	{"json", no_argument, NULL, OPT_JSON},
	{"keep-going", no_argument, NULL, OPT_KEEP},
	{"quiet", no_argument, NULL, OPT_QUIET},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"spin", required_argument, NULL, OPT_SPIN},
	{"prog", required_argument, NULL, OPT_PROG},
	{"vers", required_argument, NULL, OPT_VERS},
	{"procnum", required_argument, NULL, OPT_PROCNUM},
	{"arg-dist", required_argument, NULL, OPT_ARGDIST},
	{"seed", required_argument, NULL, OPT_SEED},
	{"max-seconds", required_argument, NULL, OPT_MAXSEC},
	{"trace", no_argument, NULL, OPT_TRACE},
	{"tls", required_argument, NULL, OPT_TLS},
	{"tls-ca", required_argument, NULL, OPT_TLS_CA},
	{"tls-cert", required_argument, NULL, OPT_TLS_CERT},
	{"tls-key", required_argument, NULL, OPT_TLS_KEY},
	{"tls-name", required_argument, NULL, OPT_TLS_NAME},
	{"gss", required_argument, NULL, OPT_GSS},
	{"gss-service", required_argument, NULL, OPT_GSS_SERVICE},
	{"failover", no_argument, NULL, OPT_FAILOVER},
	{"auth-sys", no_argument, NULL, OPT_AUTH_SYS},
	{"help", no_argument, NULL, OPT_HELP},
	{NULL, 0, NULL, 0},
};

#define BAD(...)                                                                              \
	do {                                                                                  \
		fprintf(stderr, "%s: ", prog);                                                \
		fprintf(stderr, __VA_ARGS__);                                                 \
		fputc('\n', stderr);                                                          \
		client_usage(stderr, prog, modes, nmodes);                                    \
		exit(2);                                                                      \
	} while (0)

void bench_parse_client(bench_opts *o, int argc, char **argv, const char *prog,
                        const bench_mode *modes, int nmodes)
{
	memset(o, 0, sizeof *o);
	o->proc = -1;
	o->calls = 10000;
	o->warmup = 100;
	o->threads = 1;
	o->prog = o->vers = o->procnum = -1;
	bool depth_set = false;
	uint64_t v;
	int64_t iv;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", client_longopts, NULL)) != -1) {
		switch (c) {
		case OPT_URI:
			if (o->nuris == BENCH_MAX_URIS)
				BAD("at most %d --uri", BENCH_MAX_URIS);
			o->uris[o->nuris++] = optarg;
			break;
		case OPT_PROC:
			if ((o->proc = bench_proc_parse(optarg)) < 0)
				BAD("unknown procedure '%s'", optarg);
			break;
		case OPT_SIZE:
			if (!bench_parse_u64(optarg, &v) || v > UINT32_MAX)
				BAD("bad --size '%s'", optarg);
			o->size = (size_t)v;
			break;
		case OPT_ARG:
			if (!bench_parse_i64(optarg, &o->arg))
				BAD("bad --arg '%s'", optarg);
			o->arg_set = true;
			break;
		case OPT_CALLS:
			if (!bench_parse_u64(optarg, &o->calls) || o->calls == 0)
				BAD("bad --calls '%s'", optarg);
			break;
		case OPT_WARMUP:
			if (!bench_parse_u64(optarg, &o->warmup))
				BAD("bad --warmup '%s'", optarg);
			break;
		case OPT_MODE: {
			int m = -1;
			for (int i = 0; i < nmodes; i++)
				if (strcmp(optarg, modes[i].name) == 0)
					m = i;
			if (m < 0)
				BAD("unknown or unsupported mode '%s'", optarg);
			o->mode = m;
			break;
		}
		case OPT_DEPTH:
			if (!bench_parse_u64(optarg, &v) || v == 0 || v > 1000000)
				BAD("bad --depth '%s'", optarg);
			o->depth = (uint32_t)v;
			depth_set = true;
			break;
		case OPT_THREADS:
			if (!bench_parse_u64(optarg, &v) || v == 0 || v > 1024)
				BAD("bad --threads '%s'", optarg);
			o->threads = (unsigned)v;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_KEEP:
			o->keep_going = true;
			break;
		case OPT_QUIET:
			o->quiet = true;
			break;
		case OPT_TRACE:
			o->trace = true;
			break;
		case OPT_TIMEOUT:
			if (!bench_parse_u64(optarg, &v) || v > UINT32_MAX)
				BAD("bad --timeout '%s'", optarg);
			o->timeout_ms = (uint32_t)v;
			break;
		case OPT_SPIN:
			if (!bench_parse_u64(optarg, &v) || v > 1000000)
				BAD("bad --spin '%s' (microseconds, at most 1000000)", optarg);
			o->spin_us = (uint32_t)v;
			break;
		case OPT_PROG:
			if (!bench_parse_i64(optarg, &iv) || iv < 0 || iv > UINT32_MAX)
				BAD("bad --prog '%s'", optarg);
			o->prog = iv;
			break;
		case OPT_VERS:
			if (!bench_parse_i64(optarg, &iv) || iv < 0 || iv > UINT32_MAX)
				BAD("bad --vers '%s'", optarg);
			o->vers = iv;
			break;
		case OPT_PROCNUM:
			if (!bench_parse_i64(optarg, &iv) || iv < 0 || iv > UINT32_MAX)
				BAD("bad --procnum '%s'", optarg);
			o->procnum = iv;
			break;
		case OPT_ARGDIST:
			if (strcmp(optarg, "const") == 0)
				o->arg_dist = BENCH_DIST_CONST;
			else if (strcmp(optarg, "exp") == 0)
				o->arg_dist = BENCH_DIST_EXP;
			else
				BAD("bad --arg-dist '%s' (const or exp)", optarg);
			break;
		case OPT_SEED:
			if (!bench_parse_u64(optarg, &o->seed))
				BAD("bad --seed '%s'", optarg);
			break;
		case OPT_MAXSEC: {
			char *end;
			double sec = strtod(optarg, &end);
			if (end == optarg || *end || !(sec > 0) || sec > 1e6)
				BAD("bad --max-seconds '%s'", optarg);
			o->max_ns = (uint64_t)(sec * 1e9);
			break;
		}
		case OPT_TLS:
			if (strcmp(optarg, "opportunistic") != 0 && strcmp(optarg, "required") != 0)
				BAD("bad --tls '%s' (opportunistic or required)", optarg);
			o->tls = optarg;
			break;
		case OPT_TLS_CA:
			o->tls_ca = optarg;
			break;
		case OPT_TLS_CERT:
			o->tls_cert = optarg;
			break;
		case OPT_TLS_KEY:
			o->tls_key = optarg;
			break;
		case OPT_TLS_NAME:
			o->tls_name = optarg;
			break;
		case OPT_GSS:
			if (strcmp(optarg, "none") != 0 && strcmp(optarg, "integrity") != 0 &&
			    strcmp(optarg, "privacy") != 0)
				BAD("bad --gss '%s' (none, integrity or privacy)", optarg);
			o->gss = optarg;
			break;
		case OPT_GSS_SERVICE:
			o->gss_service = optarg;
			break;
		case OPT_FAILOVER:
			o->failover = true;
			break;
		case OPT_AUTH_SYS:
			o->auth_sys = true;
			break;
		case OPT_HELP:
			client_usage(stdout, prog, modes, nmodes);
			exit(0);
		default:
			BAD("bad option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		BAD("unexpected argument '%s'", argv[optind]);
	if (o->nuris == 0)
		BAD("--uri is required");
	if (o->proc < 0 && o->procnum < 0)
		BAD("--proc is required");
	if (o->proc < 0)
		o->proc = BP_NULL;
	if (depth_set && !(modes[o->mode].flags & BENCH_MODE_DEPTH))
		BAD("--depth does not apply to --mode %s", modes[o->mode].name);
	if (!depth_set)
		o->depth = (modes[o->mode].flags & BENCH_MODE_DEPTH) ? 16 : 0;
	if (!o->arg_set)
		o->arg = o->proc == BP_ADD ? 1 : 0;
	if (o->proc == BP_WORK && (o->arg < 0 || o->arg > UINT32_MAX))
		BAD("--arg of work is microseconds (0..4294967295)");
	if (o->proc == BP_INT && (o->arg < INT32_MIN || o->arg > INT32_MAX))
		BAD("--arg of int must fit 32 bits");
	if (o->arg_dist == BENCH_DIST_EXP && o->proc != BP_WORK)
		BAD("--arg-dist exp applies to --proc work only");
	if (o->threads > 1 && (modes[o->mode].flags & BENCH_MODE_ONETHREAD))
		BAD("--threads does not apply to --mode %s (one thread drives its clients)",
		    modes[o->mode].name);
	if (o->threads > o->calls)
		o->threads = (unsigned)o->calls;
}

/* ---- URIs ----------------------------------------------------------------------------------- */

bool bench_parse_uri(const char *s, bench_uri *u, char *err, size_t errlen)
{
	memset(u, 0, sizeof *u);
	const char *p;
	if (strncmp(s, "udp://", 6) == 0) {
		p = s + 6;
	} else if (strncmp(s, "tcp://", 6) == 0) {
		u->tcp = true;
		p = s + 6;
	} else {
		snprintf(err, errlen, "'%s': the URI must start with udp:// or tcp://", s);
		return false;
	}
	const char *hend, *rest;
	if (*p == '[') {
		hend = strchr(p, ']');
		if (!hend) {
			snprintf(err, errlen, "'%s': missing ']'", s);
			return false;
		}
		p++;
		rest = hend + 1;
	} else {
		hend = strchr(p, ':');
		if (!hend)
			hend = p + strlen(p);
		rest = hend;
	}
	size_t hl = (size_t)(hend - p);
	if (hl == 0 || hl >= sizeof u->host) {
		snprintf(err, errlen, "'%s': bad host", s);
		return false;
	}
	memcpy(u->host, p, hl);
	u->host[hl] = '\0';
	if (*rest == ':') {
		uint64_t port;
		if (!bench_parse_u64(rest + 1, &port) || port > 65535) {
			snprintf(err, errlen, "'%s': bad port", s);
			return false;
		}
		u->has_port = true;
		u->port = (uint16_t)port;
	} else if (*rest) {
		snprintf(err, errlen, "'%s': junk after the host", s);
		return false;
	}

	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = u->tcp ? SOCK_STREAM : SOCK_DGRAM;
	char portstr[8];
	snprintf(portstr, sizeof portstr, "%u", (unsigned)u->port);
	int rc = getaddrinfo(u->host, portstr, &hints, &res);
	if (rc != 0 || !res) {
		snprintf(err, errlen, "'%s': %s", s, gai_strerror(rc));
		return false;
	}
	memcpy(&u->addr, res->ai_addr, res->ai_addrlen);
	u->addrlen = res->ai_addrlen;
	freeaddrinfo(res);
	return true;
}

void bench_format_uri(bool tcp, const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)(const void *)sa;
		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof host);
		port = ntohs(s6->sin6_port);
		snprintf(buf, len, "%s://[%s]:%u", tcp ? "tcp" : "udp", host, port);
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)(const void *)sa;
		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof host);
		port = ntohs(s4->sin_port);
		snprintf(buf, len, "%s://%s:%u", tcp ? "tcp" : "udp", host, port);
	}
}

char *bench_join_uris(const char *const *uris, int n)
{
	size_t total = 1;
	for (int i = 0; i < n; i++)
		total += strlen(uris[i]) + 1;
	char *s = bench_xmalloc(total), *p = s;
	*p = '\0';
	for (int i = 0; i < n; i++) {
		size_t l = strlen(uris[i]);
		if (i)
			*p++ = ',';
		memcpy(p, uris[i], l);
		p += l;
		*p = '\0';
	}
	return s;
}

/* ---- data -------------------------------------------------------------------------------- */

static inline unsigned char pattern_byte(size_t i, size_t n)
{
	return (unsigned char)((i * 131u + n + (i >> 8)) & 0xffu);
}

void bench_fill_pattern(unsigned char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = pattern_byte(i, n);
}

/* The check compares with a copy of the pattern made once per size (memcmp): a byte-by-byte
 * recomputation cost a 16 MiB echo's client about a quarter of its time, the same for every
 * implementation, which hid their differences. The copies (a few sizes at most) are shared by
 * the threads and kept until exit; a size beyond them is checked byte by byte. */
bool bench_check_pattern(const unsigned char *buf, size_t n)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static struct {
		size_t n;
		unsigned char *b;
	} want[8];
	const unsigned char *w = NULL;

	pthread_mutex_lock(&mu);
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		if (want[k].b != NULL && want[k].n == n) {
			w = want[k].b;
			break;
		}
		if (want[k].b == NULL) {
			if ((want[k].b = malloc(n ? n : 1)) != NULL) {
				want[k].n = n;
				bench_fill_pattern(want[k].b, n);
				w = want[k].b;
			}
			break;
		}
	}
	pthread_mutex_unlock(&mu);
	if (w != NULL)
		return memcmp(buf, w, n) == 0;
	for (size_t i = 0; i < n; i++)
		if (buf[i] != pattern_byte(i, n))
			return false;
	return true;
}

/* ---- results ------------------------------------------------------------------------------ */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* When the process started (monotonic seconds): the wall time its CPU time is set against. */
static double bench_t_start;

static double bench_mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((constructor)) static void bench_mark_start(void)
{
	bench_t_start = bench_mono_s();
}

/* CPU seconds (user + system) this process has used, all threads. */
static double bench_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void bench_print_result(bench_result *r, bool json)
{
	double elapsed_s = (double)r->elapsed_ns / 1e9;
	double us_per_call = r->calls ? (double)r->elapsed_ns / 1e3 / (double)r->calls : 0.0;
	double calls_per_s = elapsed_s > 0 ? (double)r->calls / elapsed_s : 0.0;
	double median_us = 0, p99_us = 0, min_us = 0, max_us = 0, mean_us = 0, stdev_us = 0;
	if (r->lat_ns && r->nlat) {
		double sum = 0, sq = 0;
		for (uint64_t i = 0; i < r->nlat; i++)
			sum += (double)r->lat_ns[i] / 1e3;
		mean_us = sum / (double)r->nlat;
		for (uint64_t i = 0; i < r->nlat; i++) {
			double d = (double)r->lat_ns[i] / 1e3 - mean_us;
			sq += d * d;
		}
		stdev_us = r->nlat > 1 ? sqrt(sq / (double)(r->nlat - 1)) : 0.0;
		qsort(r->lat_ns, r->nlat, sizeof r->lat_ns[0], cmp_u64);
		median_us = (double)r->lat_ns[r->nlat / 2] / 1e3;
		uint64_t i99 = (r->nlat * 99) / 100;
		if (i99 >= r->nlat)
			i99 = r->nlat - 1;
		p99_us = (double)r->lat_ns[i99] / 1e3;
		min_us = (double)r->lat_ns[0] / 1e3;
		max_us = (double)r->lat_ns[r->nlat - 1] / 1e3;
	}
	FILE *f = stdout;
	if (json) {
		fputs("{\"impl\":", f);
		json_string(f, r->impl);
		fputs(",\"mode\":", f);
		json_string(f, r->mode);
		fputs(",\"uri\":", f);
		json_string(f, r->uri);
		fprintf(f, ",\"dests\":%d,\"proc\":", r->dests);
		json_string(f, r->proc);
		fprintf(f,
		        ",\"size\":%zu,\"calls\":%" PRIu64 ",\"errors\":%" PRIu64
		        ",\"threads\":%u,\"depth\":%u,\"elapsed_s\":%.6f,\"us_per_call\":%.3f"
		        ",\"calls_per_s\":%.1f,\"median_us\":%.3f,\"p99_us\":%.3f,\"min_us\":%.3f"
		        ",\"max_us\":%.3f,\"mean_us\":%.3f,\"stdev_us\":%.3f"
		        ",\"cpu_s\":%.3f,\"proc_s\":%.3f}\n",
		        r->size, r->calls, r->errors, r->threads, r->depth, elapsed_s, us_per_call,
		        calls_per_s, median_us, p99_us, min_us, max_us, mean_us, stdev_us, bench_cpu_s(),
		        bench_mono_s() - bench_t_start);
	} else {
		fprintf(f,
		        "%s %s %s proc=%s size=%zu calls=%" PRIu64 " errors=%" PRIu64
		        " threads=%u: %.3f us/call, %.0f calls/s (median %.3f us, p99 %.3f us)\n",
		        r->impl, r->mode, r->uri, r->proc, r->size, r->calls, r->errors, r->threads,
		        us_per_call, calls_per_s, median_us, p99_us);
	}
	fflush(f);
}

void bench_run_workers(void *base, size_t stride, unsigned n, void *(*fn)(void *),
                       pthread_barrier_t *barrier)
{
	pthread_t *tids;

	if (n == 1) {
		pthread_barrier_init(barrier, NULL, 1);
		fn(base);
		pthread_barrier_destroy(barrier);
		return;
	}
	pthread_barrier_init(barrier, NULL, n + 1);
	tids = bench_xmalloc(n * sizeof(*tids));
	for (unsigned i = 0; i < n; i++) {
		int e = pthread_create(&tids[i], NULL, fn, (char *)base + i * stride);
		if (e) {
			fprintf(stderr, "pthread_create: %s\n", strerror(e));
			exit(1);
		}
	}
	pthread_barrier_wait(barrier);
	for (unsigned i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	pthread_barrier_destroy(barrier);
	free(tids);
}

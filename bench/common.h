/*
 * bench/common.h -- what the benchmark programs share: option parsing of the client side,
 * URI parsing, timing, statistics and the output line (JSON or readable).
 *
 * Nothing here depends on remotecall or libtirpc, so the remotecall programs, the libtirpc
 * peer and the raw-socket baseline all print the same keys computed the same way.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#define BENCH_MAX_URIS 1024 /* MultiRPC runs go to 500 servers */
#define BENCH_MAX_LISTEN 16

/* The procedures of bench.x, in procedure-number order. */
typedef enum bench_proc {
	BP_NULL = 0,
	BP_INT = 1,
	BP_SEND = 2,
	BP_SENDR = 3,
	BP_ECHO = 4,
	BP_WORK = 5,
	BP_ADD = 6,
	BP__COUNT
} bench_proc;

/* "null", "int", ... or NULL for an out-of-range value. */
const char *bench_proc_name(bench_proc p);
/* The procedure named s, or -1. */
int bench_proc_parse(const char *s);
/* Whether p sends a bench_data argument (--size applies). */
bool bench_proc_has_data(bench_proc p);

/*
 * A call mode. Programs declare the modes they implement in a table; the option parser looks
 * the --mode word up there, so a new mode (async, multi, ...) is one table entry and its own
 * options (--depth) are checked against the mode's flags.
 */
#define BENCH_MODE_DEPTH 0x1u     /* the mode takes --depth N */
#define BENCH_MODE_ONETHREAD 0x2u /* the mode drives its clients from one thread (no --threads) */
typedef struct bench_mode {
	const char *name;   /* the --mode word */
	unsigned flags;     /* BENCH_MODE_* */
	const char *help;   /* one line for the usage text */
} bench_mode;

/* --arg-dist: the argument of every call is --arg, or drawn per call with mean --arg. */
enum { BENCH_DIST_CONST = 0, BENCH_DIST_EXP = 1 };

/* Options of a benchmark client (rc-bench-client, tirpc-bench-client). */
typedef struct bench_opts {
	/* what the measuring loops read each call, first (one cache line) */
	int proc;           /* bench_proc */
	int mode;           /* index into the program's mode table */
	int64_t procnum;    /* -1: the procedure of --proc; else call this number with void/void */
	uint64_t max_ns;    /* --max-seconds: stop measuring after this long (0: no limit) */
	const char *uris[BENCH_MAX_URIS];
	int nuris;
	size_t size;        /* bytes of bench_data (send, sendr, echo) */
	int64_t arg;        /* int, work (microseconds), add */
	bool arg_set;
	int arg_dist;       /* BENCH_DIST_*: how --arg is drawn per call (work) */
	uint64_t seed;      /* --seed: state of the per-call draws (0: from the clock and pid) */
	uint64_t calls;     /* measured calls (rounds over every URI) */
	uint64_t warmup;    /* calls made before measuring */
	uint32_t depth;     /* modes with BENCH_MODE_DEPTH: calls in flight */
	unsigned threads;   /* threads sharing the client(s) */
	bool json;          /* one JSON object per line */
	bool keep_going;    /* count failed calls instead of stopping at the first */
	bool quiet;         /* print nothing on success */
	bool trace;         /* --trace (rc-bench-client, block mode, one thread): the runtime's
	                       trace points, one more JSON line of per-step medians */
	uint32_t timeout_ms; /* total time one call may take (0: the library's default) */
	uint32_t spin_us;   /* --spin: poll this long for a reply before sleeping (0: don't) */
	/* error-path testing: override the numbers of the call */
	int64_t prog;       /* -1: BENCH_PROG */
	int64_t vers;       /* -1: BENCH_VERS */
	/* RPC-over-TLS (rc-bench-client only): --tls opportunistic|required (NULL: off), the CA,
	 * client certificate and key, and the name to verify */
	const char *tls, *tls_ca, *tls_cert, *tls_key, *tls_name;
	/* RPCSEC_GSS (rc-bench-client only): --gss none|integrity|privacy (NULL: off) and
	 * --gss-service NAME, the server's host-based name [rcbench@localhost] */
	const char *gss, *gss_service;
	bool failover;      /* --failover (rc-bench-client, tcp): rc_client_set_failover */
	bool auth_sys;      /* --auth-sys (rc-bench-client): AUTH_SYS credentials on every call */
} bench_opts;

/*
 * bench_parse_client -- parse argv into *o for the program prog, which implements the modes
 * modes[0..nmodes) (modes[0] is the default). On a bad option prints the reason and the usage
 * on stderr and exits 2; --help prints the usage on stdout and exits 0.
 */
void bench_parse_client(bench_opts *o, int argc, char **argv, const char *prog,
                        const bench_mode *modes, int nmodes);

/* ---- URIs ----------------------------------------------------------------------------------- */

typedef struct bench_uri {
	bool tcp;              /* tcp:// (else udp://) */
	char host[256];        /* without brackets */
	bool has_port;
	uint16_t port;
	struct sockaddr_storage addr; /* resolved (host and port) */
	socklen_t addrlen;
} bench_uri;

/*
 * bench_parse_uri -- parse udp://HOST[:PORT] or tcp://HOST[:PORT] (IPv6 as [ADDR]) and resolve
 * HOST. Returns true, or false with a message in err[0..errlen).
 */
bool bench_parse_uri(const char *s, bench_uri *u, char *err, size_t errlen);

/* bench_format_uri -- "udp://127.0.0.1:5000" / "tcp://[::1]:5000" for a socket address. */
void bench_format_uri(bool tcp, const struct sockaddr *sa, char *buf, size_t len);

/* ---- timing and results ------------------------------------------------------------------ */

static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* What one run measured. lat_ns holds one latency per measured call (may be NULL). */
typedef struct bench_result {
	const char *impl;    /* "remotecall", "tirpc", "raw" */
	const char *mode;    /* "block", "select", "pingpong", ... */
	const char *uri;     /* the URIs, comma-separated */
	int dests;           /* URIs per call */
	const char *proc;
	size_t size;
	uint64_t calls;      /* measured calls attempted */
	uint64_t errors;
	unsigned threads;
	uint32_t depth;      /* 0: not applicable */
	uint64_t elapsed_ns; /* wall time of the measured calls */
	uint64_t *lat_ns;    /* calls entries, sorted in place by bench_print_result */
	uint64_t nlat;
} bench_result;

/*
 * bench_print_result -- one line on stdout (JSON or readable), flushed. Besides the median
 * and percentiles of lat_ns it prints their mean and standard deviation (mean_us, stdev_us),
 * from which a reader computes confidence intervals, and the CPU seconds the whole process
 * used (cpu_s, user + system, all threads) beside its lifetime (proc_s): cpu_s / proc_s is
 * the share of a core it kept busy (about 1 for a side that busy-polls).
 */
void bench_print_result(bench_result *r, bool json);

/* bench_join_uris -- the URIs joined with ',' into a malloc'd string (caller frees). */
char *bench_join_uris(const char *const *uris, int n);

/* bench_fill_pattern / bench_check_pattern -- the bytes every client sends and expects back. */
void bench_fill_pattern(unsigned char *buf, size_t n);
bool bench_check_pattern(const unsigned char *buf, size_t n);

/*
 * bench_draw_exp -- an exponentially distributed value with the given mean, rounded to an
 * integer and capped at UINT32_MAX; *state is a xorshift64* state (never 0), advanced.
 */
uint32_t bench_draw_exp(uint64_t *state, double mean);
/* bench_seed -- a non-zero xorshift state from s (0: from the clock and the pid). */
uint64_t bench_seed(uint64_t s);

/* bench_xmalloc -- malloc that exits with a message on failure (n may be 0). */
void *bench_xmalloc(size_t n);

/* bench_parse_u64 -- a decimal (or 0x hex) number with an optional k/m/g (x1024) suffix. */
bool bench_parse_u64(const char *s, uint64_t *out);
bool bench_parse_i64(const char *s, int64_t *out);

/* bench_raise_nofile -- raise this process's descriptor limit (RLIMIT_NOFILE) from its soft
 * value to its hard one, so a server or load generator can hold many connections; returns the
 * soft limit now in force (unchanged if raising failed). */
uint64_t bench_raise_nofile(void);

/*
 * bench_run_workers -- run fn on each of n workers (worker i at base + i * stride) and return
 * when all have finished. barrier (initialised here, destroyed before returning) is the one
 * the workers wait on after their warm-up: one worker runs in the calling thread, alone at
 * its barrier -- a second thread would make each of its system calls take the
 * shared-descriptor-table path (a reference taken and dropped on the socket's file), which the
 * single-threaded raw ping-pong does not pay; several run in threads released together with
 * the calling thread. Exits with a message if a thread cannot be created.
 */
void bench_run_workers(void *base, size_t stride, unsigned n, void *(*fn)(void *),
                       pthread_barrier_t *barrier);

#endif

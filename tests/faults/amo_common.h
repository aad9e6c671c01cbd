/*
 * tests/faults/amo_common.h -- the at-most-once test shared by its two clients (faults-amo-rc,
 * remotecall; faults-amo-tirpc, libtirpc). Neither library's headers are included here: the
 * two link different XDR routines of the same names.
 *
 * The run: a relay (relay.h) in a thread of the program between the client and a fresh
 * rc-bench-server; calls ADD(1) .. ADD(N) (distinct arguments) through it, several in flight;
 * the relay's tap records every ADD request it actually hands to the server. Then the relay
 * stops, and the client reads the server's total with ADD(0) sent directly.
 *
 * What must hold (amo_check):
 *   - every call returned exactly once (success or an error);
 *   - total == the sum of the distinct arguments the server was handed: each call that
 *     reached the server ran exactly once, however many copies reached it (at most once, and
 *     no call lost inside the server);
 *   - every successful call's argument is among those, and the successful calls' sum <= total
 *     (equal when no call failed);
 *   - the totals the successful calls returned are all different (no reply given to the wrong
 *     call, no stale total).
 */
#ifndef RC_TEST_AMO_COMMON_H
#define RC_TEST_AMO_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "relay.h"

typedef struct amo_opts {
	const char *server;   /* udp://127.0.0.1:PORT of rc-bench-server (required) */
	int calls;            /* N [5000] */
	int inflight;         /* calls in flight [16] */
	int clients;          /* client handles (one source port each) [4] */
	uint32_t retry_ms;    /* first retransmission [20] */
	uint32_t timeout_ms;  /* total per call [5000] */
	double drop, dup, reorder; /* per datagram, both directions [0.3, 0.1, 0.1] */
	uint32_t jitter_ms;   /* random delay 0..J per datagram [0] */
	uint64_t seed;        /* relay seed [1] */
	int expect_fail_max;  /* fail if more calls than this failed [-1: calls / 50] */
} amo_opts;

/* Parse the options (--server --calls --inflight --clients --retry --timeout --drop --dup
 * --reorder --jitter --seed --max-failed); exits 2 on a bad one. */
void amo_parse(int argc, char **argv, const char *prog, amo_opts *o);

/* Per call: filled by the client. */
typedef struct amo_call {
	int done;          /* completions seen (must end at 1) */
	bool ok;
	int64_t ret;       /* total returned when ok */
	char why[24];      /* a short error name when not ok */
} amo_call;

/* The relay, with the tap recording ADD requests handed to the server. */
relay *amo_relay_start(const amo_opts *o);

/* Stop the relay and keep its counters; returns after the server has had time to serve what
 * was handed to it. */
void amo_relay_finish(relay *r);

/* Check and print the summary; 0 if everything holds, 1 otherwise. calls[1..N]. */
int amo_check(const char *impl, const amo_opts *o, const amo_call *calls, int64_t total,
              double elapsed_s);

uint64_t amo_now_ns(void);

#endif

/*
 * trace_rec -- what the benchmark programs do with the runtime's trace points
 * (<remotecall/trace.h>): collect each call's steps and print their medians.
 *
 * A client recorder (rc-bench-client --trace) keeps, per call, the time from rc_call's entry to
 * the message encoded, to the send returned, to the reply received, to the results decoded; a
 * server recorder (rc-bench-server --trace) the time from the request received to the
 * procedure found, to the arguments decoded, to the procedure returned, to the reply encoded,
 * to the reply sent. Only calls that passed every step count.
 */
#ifndef BENCH_TRACE_REC_H
#define BENCH_TRACE_REC_H

#include <stdbool.h>
#include <stdio.h>

#include <remotecall/trace.h>

typedef struct trace_rec trace_rec;

/* trace_rec_new -- a recorder for up to max_calls calls (the rest are counted, not kept), of a
 * client (server false) or a server. NULL when out of memory. */
trace_rec *trace_rec_new(bool server, size_t max_calls);

/* trace_rec_point -- the rc_trace_fn to give rc_client_set_trace / rc_server_set_trace, with
 * the recorder as its argument. Thread-safe. */
void trace_rec_point(void *rec, rc_trace_point pt, uint32_t xid, uint64_t ns);

/* trace_rec_skip -- forget what was recorded so far (the warm-up). */
void trace_rec_skip(trace_rec *r);

/*
 * trace_rec_print -- one JSON line on f: {"trace":"client"|"server","calls":N, and per step
 * "<step>_us" (median) and "<step>_mean_us", then "total_us"}: client steps encode, send, wait,
 * decode; server steps dispatch, args, proc, encode, send. Flushed.
 */
void trace_rec_print(trace_rec *r, FILE *f);

void trace_rec_free(trace_rec *r);

#endif

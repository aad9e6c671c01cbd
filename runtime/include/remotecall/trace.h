/*
 * remotecall -- timestamps of the steps of a call, recorded when asked.
 *
 * A client or a server given a trace function calls it at each step of every call it makes
 * or serves, with the step, the call's transaction id and a CLOCK_MONOTONIC time in
 * nanoseconds. Off by default; while off, a client's blocking call runs code with no trace
 * points at all (one test of a pointer per call), and a server tests one pointer per step.
 * This is how bench/ breaks a round trip down as Elliott & Nutt (Table 5) and DCE (Figures 1-2,
 * Table 2) did: the steps' differences, summed, against the measured round trip.
 *
 * The function runs on the thread making or serving the call, inside the runtime (the
 * client's fast path holds the reader's role, the server is between two system calls): keep
 * it short -- store the numbers, nothing more -- and do not call remotecall from it.
 */
#ifndef REMOTECALL_TRACE_H
#define REMOTECALL_TRACE_H

#include <stdint.h>

#include <remotecall/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The steps, in the order one call passes them. */
typedef enum rc_trace_point {
	/* client (rc_call; started calls report SENT, REPLY and DECODED) */
	RC_TP_CALL_BEGIN = 0, /* rc_call entered */
	RC_TP_ENCODED,        /* call header and arguments encoded */
	RC_TP_SENT,           /* the send system call returned */
	RC_TP_REPLY,          /* the reply to this call was received (waiting included) */
	RC_TP_DECODED,        /* reply header checked and results decoded */
	/* server */
	RC_TP_SRV_RECEIVED, /* the request was received (its receive system call returned) */
	RC_TP_SRV_DISPATCH, /* header, credentials, duplicate cache checked; procedure found */
	RC_TP_SRV_ARGS,     /* arguments decoded; the procedure starts */
	RC_TP_SRV_PROC,     /* the procedure returned */
	RC_TP_SRV_ENCODED,  /* the reply was encoded */
	RC_TP_SRV_SENT,     /* the reply's send system call returned (datagrams and streams
	                       sent at once; not for replies queued behind others) */
	RC_TP_SRV_TOOBIG,   /* the reply did not fit in a datagram: SYSTEM_ERR goes in its place
	                       (counted in rc_server_stats.replies_too_big) */
	RC_TP_COUNT
} rc_trace_point;

/* A trace function: arg as given when it was set, the step, the call's xid, the time. */
typedef void (*rc_trace_fn)(void *arg, rc_trace_point pt, uint32_t xid, uint64_t ns);

/* rc_trace_point_name -- "call_begin", "encoded", ..., "srv_sent", "srv_toobig"; "?" for other values.
 * Static strings. */
const char *rc_trace_point_name(rc_trace_point pt);

#ifdef __cplusplus
}
#endif

#endif

/*
 * tests/faults/relay.h -- a fault-injecting UDP relay (test-only; no dependency on remotecall or
 * libtirpc, so either kind of test program can embed it).
 *
 * The relay listens on one UDP socket. Each client address it hears from gets its own upstream
 * socket connected to the server (so the server sees one distinct address:port per client, as
 * behind a NAT, and the duplicate request cache keys stay per client); what the server sends
 * back on that socket goes to that client. Every datagram, in each direction independently, is
 *
 *   dropped            with probability drop;
 *   else duplicated    with probability dup (two copies, each scheduled on its own);
 *   each copy delayed  by delay_ms + a uniform draw in [0, jitter_ms];
 *   each copy held     with probability reorder: released right after the next datagram of the
 *                      same direction is sent, or after hold_ms, whichever comes first.
 *
 * Draws come from one seeded generator, so a run is reproducible given the same arrival order.
 * Memory is bounded: at most max_held datagrams (and 32 MiB) wait in the relay; one arriving
 * past the cap is dropped and counted as overflow. At most max_clients client addresses are
 * tracked; past that the longest-idle one is forgotten (its upstream socket closed).
 *
 * In-process use (the "test-only transport wrapper" of the faults issue): relay_start() runs the
 * relay in a thread of the calling process; clients created on relay_uri() go through it.
 * The standalone program is rc-relay (rc-relay.c).
 */
#ifndef RC_TEST_RELAY_H
#define RC_TEST_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { RELAY_REQ = 0, RELAY_REP = 1 }; /* client -> server, server -> client */

typedef struct relay_dir_opts {
	double drop;        /* probability a datagram is lost */
	double dup;         /* probability it is sent twice */
	double reorder;     /* probability a copy is held back past the next datagram */
	uint32_t delay_ms;  /* fixed delay of every copy */
	uint32_t jitter_ms; /* plus a uniform random delay in [0, jitter_ms] */
	uint32_t hold_ms;   /* longest a reordered copy waits for a next datagram [50] */
} relay_dir_opts;

/* Called (from the relay's thread) for every datagram the relay sends onward, copies included;
 * dir is RELAY_REQ or RELAY_REP, client a small index of the client address. */
typedef void (*relay_tap_fn)(int dir, unsigned client, const unsigned char *msg, size_t len,
                             void *udata);

typedef struct relay_opts {
	const char *listen;      /* "udp://127.0.0.1:0" (default), "udp://[::1]:0", ... */
	const char *server;      /* "udp://127.0.0.1:PORT" (required) */
	uint64_t seed;           /* 0: 1 */
	relay_dir_opts dir[2];   /* [RELAY_REQ], [RELAY_REP] */
	uint32_t max_held;       /* datagrams waiting in the relay [1024] */
	uint32_t max_clients;    /* client addresses tracked [256] */
	relay_tap_fn tap;        /* optional */
	void *tap_udata;
} relay_opts;

typedef struct relay_stats {
	uint64_t in[2];         /* datagrams received */
	uint64_t out[2];        /* datagrams sent onward (copies included) */
	uint64_t dropped[2];    /* lost on purpose */
	uint64_t duplicated[2]; /* extra copies made */
	uint64_t reordered[2];  /* copies held for reordering */
	uint64_t delayed[2];    /* copies given a non-zero delay */
	uint64_t overflow[2];   /* dropped because the relay held max_held already */
	uint64_t send_errors[2];
	uint64_t retrans;       /* requests whose (client, xid) the relay had seen before */
	uint64_t clients;       /* client addresses seen */
	uint64_t max_held_seen; /* most datagrams waiting at once */
} relay_stats;

typedef struct relay relay;

/* Start a relay in a new thread. Returns NULL with a message in err on failure. */
relay *relay_start(const relay_opts *o, char *err, size_t errlen);
/* "udp://127.0.0.1:PORT": where clients send. */
const char *relay_uri(const relay *r);
uint16_t relay_port(const relay *r);
/* A snapshot of the counters (thread-safe). */
void relay_get_stats(relay *r, relay_stats *s);
/* Change the fault options while running (thread-safe); e.g. a clean phase after a faulty one. */
void relay_set_faults(relay *r, const relay_dir_opts dir[2]);
/* Stop the thread, drop what is still held, close everything, free. NULL is ignored. */
void relay_stop(relay *r);

/* One line of counters ("req in 5000 out 4100 drop 1500 ... | rep ...") into buf. */
char *relay_format_stats(const relay_stats *s, char *buf, size_t len);

/* Parse "udp://HOST:PORT" (IPv6 in brackets) into a socket address; false on error. */
struct sockaddr_storage;
bool relay_parse_uri(const char *uri, struct sockaddr_storage *ss, unsigned *sslen);

#ifdef __cplusplus
}
#endif
#endif

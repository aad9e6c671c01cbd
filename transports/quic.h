/*
 * RPC-over-QUIC (draft-cel-nfsv4-rpc-over-quicv1), internal: the draft's application error
 * codes and the reader that cuts one QUIC stream's bytes into whole RPC messages (RFC 5531
 * record marking, as on TCP). transports/quic*.c are the transport (quic_conn.h); quic_msg.c
 * the reader, which the fuzz target tests/fuzz/fuzz_quic_msg.c drives.
 */
#ifndef RC_TRANSPORTS_QUIC_H
#define RC_TRANSPORTS_QUIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The draft's application error codes (section 3.5), on RESET_STREAM and CONNECTION_CLOSE. */
enum {
	RC_QUIC_NO_ERROR = 0x0,
	RC_QUIC_PROTOCOL_VIOLATION = 0x1,
	RC_QUIC_SERVER_BUSY = 0x2,
	RC_QUIC_REQUEST_DROPPED = 0x3,
	RC_QUIC_UNSPECIFIED_ERROR = 0x4,
};

/*
 * One stream's incoming RPC messages. Bytes are fed as they arrive; a message is whole when
 * its last fragment is; buf[0..len) then holds it as it came, record marks included (so it
 * can be passed on unchanged), and head[] its first 8 bytes of body (XID and message type).
 */
typedef struct rc__qmsg {
	unsigned char *buf; /* the message so far (marks included); the reader's until taken */
	size_t len, cap;
	size_t max;          /* the largest body accepted */
	size_t body;         /* body bytes so far */
	size_t need;         /* bytes of the current fragment still to come */
	bool in_mark;        /* reading a record mark (nmark bytes of it so far) */
	bool last;           /* the current fragment is the message's last */
	unsigned nmark;
	unsigned char head[8];
} rc__qmsg;

enum { RC__QMSG_MORE = 0, RC__QMSG_DONE = 1, RC__QMSG_BAD = -1 };

/* A reader for messages of at most max body bytes. */
void rc__qmsg_init(rc__qmsg *m, size_t max);
/* Free what the reader holds. */
void rc__qmsg_free(rc__qmsg *m);
/*
 * Feed p[0..n): RC__QMSG_DONE -- a message is whole in buf[0..len) after *used bytes of p
 * (feed the rest after rc__qmsg_take or rc__qmsg_next); RC__QMSG_MORE -- all n bytes taken,
 * no message whole yet; RC__QMSG_BAD -- a fragment takes the body over max, or a message
 * ends with fewer than 8 body bytes (no XID and type): the stream is unusable. RC__QMSG_MORE
 * with *used < n never happens. Memory short: RC__QMSG_BAD too.
 */
int rc__qmsg_feed(rc__qmsg *m, const unsigned char *p, size_t n, size_t *used);
/* After RC__QMSG_DONE: hand the message's buffer to the caller (free() it), and start the
 * next message. *len is the message's length with its marks. */
unsigned char *rc__qmsg_take(rc__qmsg *m, size_t *len);
/* The XID and the message type (0 call, 1 reply) of a whole message. */
uint32_t rc__qmsg_xid(const rc__qmsg *m);
uint32_t rc__qmsg_type(const rc__qmsg *m);

/* Tests: the QUIC idle timeout of connections made from now on (ms; 0: the default, 30 s). */
void rc__quic_set_idle_ms(unsigned ms);
/* Tests: while on, client endpoints give their peers no flow-control credit back (a peer
 * that reads nothing); what they held back is given once it is off and their pipe rings. */
void rc__quic_set_withhold(bool on);

/* What a QUIC listener counted (rc__quic_lsn_stats). */
typedef struct rc__quic_stats {
	uint64_t conns;           /* connections whose handshake completed */
	uint64_t handshake_fails; /* connections that failed their handshake */
	uint64_t streams;         /* streams peers opened */
	uint64_t bad_records;     /* connections closed for a bad record (PROTOCOL_VIOLATION) */
	uint64_t stream_limit;    /* connections closed for opening too many streams */
	uint64_t wrong_direction; /* messages dropped for going the wrong way on a stream */
	uint64_t idle_closed;     /* connections ended by the idle timeout */
	uint64_t refused;         /* connections refused at the listener's cap */
	uint64_t open_conns;      /* connections open now */
	uint64_t queued;          /* bytes of replies (and calls back) in streams' send queues
	                             now: taken from pipes, not yet acknowledged (bounded:
	                             RC__Q_PIPE_HELD a pipe, quic_conn.h) */
} rc__quic_stats;

struct rc_tp;
/* What the quic:// listener tp counted (all zero for another transport). */
void rc__quic_lsn_stats(struct rc_tp *tp, rc__quic_stats *out);

#endif

/*
 * The transport interface (internal). A transport owns the bytes: it frames whole RPC messages
 * (record marking on streams), queues and gathers what it cannot send at once, and receives
 * whole messages; the client and server go through this interface only and read a transport's
 * properties (RC_TPP_*), never its scheme or descriptor. Adding a transport is one new file
 * here plus one line in transports.c's table; the client and server code do not change.
 *
 * Buffers: every outgoing message is passed with RC_TP_HEADROOM writable bytes in front of it,
 * so a stream transport writes its record mark there and sends the record with one syscall.
 *
 * Threads: a transport is not locked. Its users serialise sends (and flushes) among
 * themselves and receives among themselves; one send and one receive may run at once, and
 * shutdown may be called from any thread at any time.
 */
#ifndef RC_TRANSPORT_H
#define RC_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <remotecall/status.h>
#include <remotecall/tls.h>

#include "xdr/base.h"

#define RC_TP_HEADROOM 4
/* A stream record with more than this still to come may be received in part (recv_head). */
#define RC_TP_PULL_MIN ((size_t)64 << 10)
#define RC_URI_MAX 1024 /* longest URI accepted */

struct rc__tls_ctx;

/* A parsed URI: scheme://host:port[?query], unix:/path, inproc:name. */
typedef struct rc_uri {
	char scheme[8];
	char host[256];  /* host name or address (no brackets); path or name for unix/inproc */
	int port;        /* -1: none given */
	bool v6literal;  /* host was written in [brackets] */
	char query[RC_URI_MAX]; /* tcp/udp: what followed '?' ("" : nothing): rc__uri_query */
	/* Set by the client, not the parse: its TLS context (NULL: plaintext; tcp only) and the
	 * program and version its TLS probe names. The client owns tls. */
	struct rc__tls_ctx *tls;
	uint32_t prog, vers;
} rc_uri;

/* Parse text into u. RC_UNKNOWNADDR for a malformed or over-long URI, RC_UNKNOWNPROTO for an
 * unknown scheme. */
rc_status rc__uri_parse(const char *text, rc_uri *u);

/* The value of a hex digit, or -1 (a URI's %XX escapes, the TLS key log's secrets). */
static inline int rc__hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/*
 * The keys a URI's query may carry (uri.c holds the one table: a new key is one line
 * there). Each names who takes it -- a client's URI (rc_client_create), a listen URI
 * (rc_server_listen), or both -- and, for a key one side does not take, where that side says
 * the same thing instead (shown in the refusal).
 */
enum { RC__URIQ_CLIENT = 1u, RC__URIQ_LISTEN = 2u };

typedef struct rc__uri_key {
	const char *name;
	const char *values;    /* "off|opportunistic|required": one of these; NULL: any text */
	unsigned sides;        /* RC__URIQ_CLIENT, RC__URIQ_LISTEN, or both */
	const char *elsewhere; /* for the side without it: what to use instead ("" : nothing) */
} rc__uri_key;

/* What rc__uri_query hands each key=value to; false refuses the query (the callee set the
 * detail). */
typedef bool (*rc__uri_key_fn)(void *ctx, const rc__uri_key *key, const char *value);

/*
 * Walk query ("tls=required&ca=/x/ca.pem", no '?') as side (RC__URIQ_CLIENT or
 * RC__URIQ_LISTEN) takes it: each value is %XX-decoded into buf[0..cap) (the strings handed
 * to fn stay there) and, once its key is known to side and the value one of the key's values,
 * handed to fn (NULL: only checked). RC_OK; RC_UNKNOWNADDR for a key side does not take, a bad
 * value, a malformed pair or a query longer than buf -- rc__tp_detail then says which and
 * lists the keys side takes ("URI query: unknown key foo; a client URI takes tls=off|...").
 */
rc_status rc__uri_query(const char *query, unsigned side, rc__uri_key_fn fn, void *ctx,
                        char *buf, size_t cap);

/* A peer address (datagram sender or receiver). */
typedef struct rc_peer {
	struct sockaddr_storage ss;
	socklen_t len;
} rc_peer;

typedef struct rc_tp rc_tp;

/* A piece of a message sent from the caller's memory (gathered): its len bytes go on the wire
 * at offset `at` of the encoded bytes (before the byte there). */
typedef struct rc__gseg {
	size_t at;
	const void *p;
	size_t len;
} rc__gseg;

/* What kind of carrier a transport is: the client and server read these, never the scheme. */
enum {
	RC_TPP_DGRAM = 1u << 0,  /* one message a datagram; lost, duplicated or reordered */
	RC_TPP_STREAM = 1u << 1, /* a reliable byte stream; the transport frames messages */
	RC_TPP_SYNC = 1u << 2,   /* in-process: a send is served before it returns; no descriptor */
	RC_TPP_BACK = 1u << 3,   /* a server connection's back channel (runtime/backchan/backchan.c): the
	                            connection is the server's -- never reconnected, and calls
	                            that come on it are the server's to serve */
};

/* Flags of send and recv. RC_TPF_DONTWAIT is MSG_DONTWAIT's value, so that a socket transport
 * passes it through (flags & RC_TPF_DONTWAIT) without a translation on every call. */
enum {
	RC_TPF_DONTWAIT = MSG_DONTWAIT, /* never block: what cannot go now is queued (streams) */
	RC_TPF_MORE = 1u << 30,         /* more messages follow soon: gather this one (streams) */
	RC_TPF_REPLY_NEXT = 1u << 29,   /* send: a blocking receive of this call's reply follows
	                                   at once on this thread (a hint; a back channel reads
	                                   its connection from before the send: backchan.c) */
	RC_TPF_STEP = 1u << 28,         /* recv (streams, with DONTWAIT; not under TLS): read at
	                                   most RC_TP_STEP_BYTES of a record not yet whole, then
	                                   RC_AGAIN -- the server looks at its inbound budget
	                                   between steps (conn.c) */
};

/* What one RC_TPF_STEP receive reads at most of a record not yet whole. */
#define RC_TP_STEP_BYTES ((size_t)256 << 10)

/* A synchronous transport's listener hands each message it is sent to the server through
 * this: serve msg[0..len) and pass the reply (with RC_TP_HEADROOM bytes before it) to
 * reply(rctx, reply, len), at most once, before returning. */
typedef void (*rc_reply_fn)(void *rctx, unsigned char *msg, size_t len);

/* The way back to a synchronous transport's caller that the server may keep past the
 * delivery (a deferred reply): hold(rctx) keeps it, and the server then calls reply_kept at
 * most once, from any thread -- false: the caller has closed its end, the reply is dropped --
 * and release(rctx) after it (or instead of it: no reply). */
typedef struct rc_tp_reply_to {
	rc_reply_fn reply;
	void *rctx;
	void (*hold)(void *rctx);
	bool (*reply_kept)(void *rctx, unsigned char *msg, size_t len);
	void (*release)(void *rctx);
} rc_tp_reply_to;

typedef struct rc_tp_deliver {
	void (*message)(void *ctx, const void *msg, size_t len, rc_reply_fn reply, void *rctx);
	void *ctx;
	/* Optional: as message, with a way back the server may keep (answers may come later). */
	void (*message_to)(void *ctx, const void *msg, size_t len, const rc_tp_reply_to *to);
} rc_tp_deliver;

/* One datagram of a batch (recv_batch, send_batch): its buffer and length, and its peer. */
typedef struct rc_tp_dgram {
	unsigned char *buf; /* recv_batch: room for cap bytes; send_batch: the message */
	size_t cap;         /* recv_batch: buf's size */
	size_t len;         /* the datagram's length (recv_batch sets it) */
	rc_peer peer;       /* recv_batch: the sender; send_batch: the receiver */
} rc_tp_dgram;

/* The most datagrams one recv_batch / send_batch moves: 64, a pipelined client's usual depth,
 * so that its burst is received and answered in one system call each, as a stream's 64
 * records are (32 took two of each: UDP depth 64 on one core 0.78-0.85x TCP's rate, 0.95-1.0x
 * with 64). A server thread's batch and a datagram client's receive batch hold this many
 * slots (address space; the kernel touches only the pages datagrams land in). */
#define RC_TP_BATCH 64

/*
 * What a transport does. Every message leaves through send (and flush) and arrives through
 * recv, recv_into or accept: framing (record marks), output queues and descriptors stay
 * inside the transport.
 */
typedef struct rc_tp_vt {
	/*
	 * Send the message msg[0..len) (with RC_TP_HEADROOM writable bytes before msg) to the
	 * connected peer, or to `to` for a server's datagram socket. A stream transport sends
	 * what it has queued first, then the record (one gathered write). flags:
	 *  - 0: block until it is all out;
	 *  - RC_TPF_DONTWAIT: send what can go now; a stream transport copies the rest into its
	 *    output queue (outq tells how much waits; flush sends it), a datagram one returns
	 *    RC_AGAIN with nothing sent;
	 *  - RC_TPF_MORE (streams): queue the record (copied) to leave with the next send or
	 *    flush, unless the queue is already large (then it all goes now).
	 * Returns RC_OK (sent or queued); RC_AGAIN (datagram, would block); RC_MSGTOOLARGE;
	 * RC_CANTSEND (errno kept; a stream is then unusable).
	 */
	rc_status (*send)(rc_tp *tp, unsigned char *msg, size_t len, const rc_peer *to,
	                  unsigned flags);
	/*
	 * Streams: send queued output. timeout_ms 0 tries once without blocking, a negative
	 * value blocks until all is out, a positive one waits at most that long. RC_OK when the
	 * queue is empty, RC_AGAIN when some is left, RC_CANTSEND (errno kept). NULL for
	 * transports that never queue.
	 */
	rc_status (*flush)(rc_tp *tp, int timeout_ms);
	/* Bytes waiting in the output queue (0 for transports that never queue). */
	size_t (*outq)(rc_tp *tp);
	/* Bytes already handed to the kernel that the peer has not taken yet (a stream's unsent
	 * or unacknowledged bytes). NULL: none ever (rc__tp_unacked answers 0). */
	size_t (*unacked)(rc_tp *tp);
	/*
	 * Receive one message. flags: RC_TPF_DONTWAIT or 0 (block up to the receive timeout set by
	 * rc__tp_set_rcvtimeo); with DONTWAIT, RC_TPF_STEP (streams: see there). Returns RC_OK with *msg and *len (valid until the next recv on
	 * tp) and the sender in *from if not NULL; RC_AGAIN (nothing yet / timed out); RC_CLOSED
	 * (peer closed); RC_CANTRECV (errno kept); RC_MSGTOOLARGE (a record over the cap: close
	 * the transport).
	 */
	rc_status (*recv)(rc_tp *tp, void **msg, size_t *len, rc_peer *from, unsigned flags);
	/*
	 * Streams (NULL elsewhere): recv, except that a record of which more than RC_TP_PULL_MIN
	 * bytes have not come yet may be handed out in part: RC_OK with *msg, *len its bytes so
	 * far and *rest > 0 the bytes still to come, which must be taken with recv_pull before
	 * anything else is received on tp. *rest 0: a whole record, as recv.
	 */
	rc_status (*recv_head)(rc_tp *tp, void **msg, size_t *len, size_t *rest, unsigned flags);
	/*
	 * After recv_head left bytes to come: dst non-NULL -- read the next n of them (n <= rest)
	 * straight into dst, then the rest after them into the transport: *msg, *len (possibly
	 * empty). dst NULL (n 0) -- the rest, completing the record: *msg, *len the whole record,
	 * the head included (it may have moved). Blocks, for timeout_ms at most in all (it may
	 * lower the receive timeout). RC_OK; RC_AGAIN (timed out), RC_CLOSED, RC_CANTRECV (errno
	 * kept): the record is cut, the stream unusable (close it).
	 */
	rc_status (*recv_pull)(rc_tp *tp, void *dst, size_t n, void **msg, size_t *len,
	                       int timeout_ms);
	/*
	 * Datagram transports only (NULL for streams): receive one datagram into the caller's
	 * buffer, so that several threads can receive on one socket at once. Same returns as recv.
	 */
	rc_status (*recv_into)(rc_tp *tp, void *buf, size_t cap, size_t *len, rc_peer *from,
	                       unsigned flags);
	/*
	 * Datagram transports (NULL elsewhere): receive up to n (<= RC_TP_BATCH) datagrams with one
	 * system call into v[0..n)'s buffers, each with its sender: flags RC_TPF_DONTWAIT, those
	 * waiting; flags 0, waiting for the first (a blocking receive that takes what else is
	 * there). *got is how many landed in v[0..*got), in order; a datagram longer than its
	 * buffer is dropped, and those after it move down (buffers and capacities may be exchanged
	 * among v's entries: v is a pool the caller owns). RC_OK with *got >= 1; RC_AGAIN (none
	 * waiting, only over-long ones, or the wait interrupted by a signal); RC_CANTRECV (errno
	 * kept).
	 */
	rc_status (*recv_batch)(rc_tp *tp, rc_tp_dgram *v, unsigned n, unsigned *got,
	                        unsigned flags);
	/*
	 * Datagram transports (NULL elsewhere): send v[0..n) (n <= RC_TP_BATCH), each msg to its
	 * peer (or the connected one), with as few system calls as the kernel takes them, without
	 * waiting. *sent is how many left; those after are not sent (RC_AGAIN: the socket buffer
	 * is full; a datagram the kernel refuses outright is skipped and counted sent, as a lost
	 * one). RC_OK when all left; RC_AGAIN; RC_CANTSEND (errno kept).
	 */
	rc_status (*send_batch)(rc_tp *tp, const rc_tp_dgram *v, unsigned n, unsigned *sent);
	/* Accept a connection on a listening stream transport: RC_OK, RC_AGAIN, RC_TOOMANY
	 * (descriptors exhausted), RC_NOMEM, RC_LOCALERROR. NULL for other transports. */
	rc_status (*accept)(rc_tp *tp, rc_tp **out, size_t max_record);
	/* Streams and in-process (NULL for datagrams, whose size the network fixes): from now on
	 * carry messages of at most n bytes both ways (max_msg; a stream's record reader refuses
	 * a longer record). Between messages only. */
	void (*set_max_record)(rc_tp *tp, size_t n);
	/* Bytes of an incomplete incoming message held (0 for datagrams). */
	size_t (*buffered)(rc_tp *tp);
	/* Streams: send one message -- len encoded bytes at msg (with the headroom before it, as
	 * send) and the gathered pieces seg[0..n) at their offsets -- behind what is queued. flags
	 * 0: whole before returning (blocking); the pieces are read from the caller's memory,
	 * never copied. RC_TPF_DONTWAIT: what the socket takes now goes from the caller's memory,
	 * the rest is copied into the output queue (as send's). RC_OK (sent or queued),
	 * RC_MSGTOOLARGE, RC_CANTSEND (errno kept), RC_NOMEM. NULL: the transport cannot gather
	 * (nothing is gathered for it). */
	rc_status (*sendv)(rc_tp *tp, unsigned char *msg, size_t len, const rc__gseg *seg,
	                   unsigned n, unsigned flags);
	/* Whether messages may be readable without the descriptor announcing them: the last
	 * receive returned a message and stopped with bytes still held (several records in one
	 * read; TLS records read ahead). A receive then gives a message, or RC_AGAIN once, after
	 * which this is false until a message comes again. NULL: never (rc__tp_ahead). */
	bool (*ahead)(rc_tp *tp);
	/* Datagram listeners: turn receive offload on (several datagrams of one sender taken in
	 * one system call; the receives cut them apart), only while no other thread receives on
	 * tp. Whether it is on. NULL: never. */
	bool (*offload)(rc_tp *tp);
	/* Whether the peer of a stream has closed or reset it (one probe, no waiting). */
	bool (*hung_up)(rc_tp *tp);
	/* End reading (and writing, if `both`) now, from any thread: a receive blocked in another
	 * thread returns, and later ones fail. The transport stays allocated until close. */
	void (*shutdown)(rc_tp *tp, bool both);
	/* Close and free. */
	void (*close)(rc_tp *tp);
	/*
	 * Server side of RPC-over-TLS (NULL where the transport cannot): the STARTTLS reply to a
	 * probe has been sent; start TLS with context tls (a struct rc__tls_ctx) on this
	 * connection. The handshake then runs inside recv/flush, never blocking: recv returns
	 * RC_AGAIN and buffered counts it as an incomplete message until it is done; outq is
	 * non-zero while it waits to write. RC_OK; RC_TOOMANY (the context's handshakes in
	 * progress are at its cap), RC_BADREPLY (the peer sent more after its probe, or a reply
	 * is still queued), RC_NOMEM: close the connection.
	 */
	rc_status (*starttls)(rc_tp *tp, struct rc__tls_ctx *tls);
	/* Whether messages travel under TLS (handshake done), and then in *peer the verified
	 * client certificate's identity, or NULL. NULL for transports without TLS. */
	bool (*secure)(rc_tp *tp, const struct rc_tls_peer **peer);
	/*
	 * Channel bindings (RFC 9266, "tls-exporter"): the value TLS-Exporter(
	 * "EXPORTER-Channel-Binding", empty context, RC_TP_EXPORTER_LEN) of the TLS 1.3 session
	 * under tp -- its connection's, for every stream of one QUIC connection -- into out, and
	 * in *must whether the protocol requires RPCSEC_GSS to bind its contexts to it
	 * (RPC-over-QUIC) rather than recommends it (RPC-over-TLS, RFC 9289). False when tp is
	 * not under TLS (yet). NULL: never under TLS (rc__tp_exporter answers false).
	 */
	bool (*exporter)(rc_tp *tp, unsigned char *out, bool *must);
	/* Server connections: the server is done with this connection's turn (messages received
	 * are no longer in use); keep what is buffered in memory of the connection's own, sized
	 * to it, and let go of buffers it does not need until it is read again. NULL: nothing to
	 * do. */
	void (*park)(rc_tp *tp);
} rc_tp_vt;

/* The common head of every transport. Only transports/ reads fd; the loops that wait on a
 * transport ask rc__tp_pollfd. */
struct rc_tp {
	const rc_tp_vt *vt;
	int fd;          /* private to transports/: the socket, or -1 */
	unsigned props;  /* RC_TPP_* */
	bool listener;   /* a listener: accept (streams) or recv from many peers (datagrams) */
	size_t max_msg;  /* largest message it can carry (UDP: 65507) */
	int rcvtimeo_ms; /* the receive timeout currently set (-1: none) */
	/* A server's connection through a load balancer (?proxy=v2): the client's address its
	 * PROXY header gave, which rc__tp_peer reports in place of the socket's peer; NULL
	 * otherwise. The transport's own (proxy_v2.c sets it), freed with it. */
	struct rc_peer *caller;
};

/* A serving thread has gone quiet (no work for a while): it lets go of the big input buffer
 * it kept for stream connections' big records (stream.c). */
void rc__tp_quiet(void);

/* The descriptor an event loop waits on for tp's input (and output), or -1 for a
 * synchronous transport, which is never waited on. */
static inline int rc__tp_pollfd(const rc_tp *tp)
{
	return tp->fd;
}

/* Whether tp holds bytes a receive may turn into a message with no readiness announced. */
static inline bool rc__tp_ahead(rc_tp *tp)
{
	return tp->vt->ahead != NULL && tp->vt->ahead(tp);
}

/* The bytes of a TLS exporter value for channel bindings (rc_tp_vt.exporter). */
#define RC_TP_EXPORTER_LEN 32

/* tp's channel-binding exporter value (rc_tp_vt.exporter): false, *must false, for a
 * transport without TLS. */
static inline bool rc__tp_exporter(rc_tp *tp, unsigned char *out, bool *must)
{
	*must = false;
	return tp != NULL && tp->vt->exporter != NULL && tp->vt->exporter(tp, out, must);
}

/* tp's unacked bytes (0 for a transport without the op). */
static inline size_t rc__tp_unacked(rc_tp *tp)
{
	return tp->vt->unacked ? tp->vt->unacked(tp) : 0;
}

/* Client side: connect to u, waiting at most until `deadline` (CLOCK_MONOTONIC ns; 0: no
 * limit). RC_OK with *out; RC_UNKNOWNHOST, RC_UNKNOWNADDR, RC_TIMEDOUT, RC_CANTSEND (connect
 * failed, errno kept), RC_NOMEM. */
typedef rc_status (*rc_tp_connect_fn)(const rc_uri *u, size_t max_record, int64_t deadline,
                                      rc_tp **out);
/* Server side: bind (and listen) at u; writes the bound URI. A synchronous transport hands
 * each message to `deliver` (copied); socket transports ignore it. */
typedef rc_status (*rc_tp_listen_fn)(const rc_uri *u, size_t max_record,
                                     const rc_tp_deliver *deliver, rc_tp **out, char *bound,
                                     size_t len);

/* Wrap fd, a socket of the application's this kind carries (rc__tp_adopt has checked it, and
 * bound and listened where needed), as a transport: a listener (a datagram socket, or a
 * listening stream) or a connected stream. RC_OK (tp owns fd now) or RC_NOMEM. */
typedef rc_status (*rc_tp_adopt_fn)(int fd, size_t max_record, bool listener, rc_tp **out);

typedef struct rc_tp_kind {
	const char *scheme;
	unsigned props; /* RC_TPP_* of its transports */
	rc_tp_connect_fn connect;
	rc_tp_listen_fn listen;
	rc_tp_adopt_fn adopt; /* NULL: no socket to adopt (in-process) */
} rc_tp_kind;

/* The transport for a scheme, or NULL. */
const rc_tp_kind *rc__tp_find(const char *scheme);

/* Set tp's blocking receive timeout (ms; 0 = none) if it differs from the current one. */
void rc__tp_set_rcvtimeo(rc_tp *tp, int ms);

/* Put a socket transport's descriptor in blocking or non-blocking mode (and close-on-exec):
 * a server's loops serve a lone UDP listener with blocking receives, the rest non-blocking.
 * RC_OK, RC_LOCALERROR (errno kept), RC_NOTSUPP for a transport without a descriptor. */
rc_status rc__tp_set_nonblock(rc_tp *tp, bool nonblock);

/*
 * send/recv as direct system calls: libc's wrappers are thread-cancellation points and spend
 * more user-space instructions on that bookkeeping than the rest of a null call's client side.
 * remotecall never relies on cancelling a thread inside a send or receive. On x86-64 Linux the
 * system call is made in place (rc__syscall6: the kernel's calling convention, the result or
 * -1 with errno set, as syscall(2) does), which spares libc's generic syscall() its argument
 * shuffle and a call (~12 user-space instructions a send or receive); elsewhere, or with
 * RC_NO_INLINE_SYSCALL defined, libc's syscall().
 */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__x86_64__) && defined(__linux__) && !defined(RC_NO_INLINE_SYSCALL)
static inline __attribute__((always_inline)) long rc__syscall6(long nr, long a1, long a2,
                                                              long a3, long a4, long a5,
                                                              long a6)
{
	unsigned long ret;
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;

	__asm__ __volatile__("syscall"
	                     : "=a"(ret)
	                     : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
	                     : "rcx", "r11", "memory");
	if (__builtin_expect(ret > -4096UL, 0)) {
		errno = -(int)(long)ret;
		return -1;
	}
	return (long)ret;
}
#define RC__SYSCALL6(nr, a1, a2, a3, a4, a5, a6)                                            \
	rc__syscall6((nr), (long)(a1), (long)(a2), (long)(a3), (long)(a4), (long)(a5), (long)(a6))
#else
#define RC__SYSCALL6(nr, a1, a2, a3, a4, a5, a6) syscall((nr), a1, a2, a3, a4, a5, a6)
#endif
static inline ssize_t rc__sendto(int fd, const void *buf, size_t len, int flags,
                                 const struct sockaddr *to, socklen_t tolen)
{
	return RC__SYSCALL6(SYS_sendto, fd, buf, len, flags, to, tolen);
}
static inline ssize_t rc__recvfrom(int fd, void *buf, size_t len, int flags,
                                   struct sockaddr *from, socklen_t *fromlen)
{
	return RC__SYSCALL6(SYS_recvfrom, fd, buf, len, flags, from, fromlen);
}
static inline ssize_t rc__recvmsg(int fd, struct msghdr *msg, int flags)
{
	return RC__SYSCALL6(SYS_recvmsg, fd, msg, flags, 0, 0, 0);
}

/*
 * The transports' own words about the last failure on this thread (e.g. OpenSSL's reason for
 * a failed handshake), for rc_error's detail: set with a printf format, read (never NULL:
 * "" when none), cleared before an operation whose failure should explain itself.
 */
void rc__tp_set_detail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *rc__tp_detail(void);
void rc__tp_clear_detail(void);

/*
 * A socket of the caller's as a server transport (sock.c; the Sun API's svcudp_create(fd),
 * svctcp_create(fd), svcfd_create): a datagram socket becomes a datagram listener, a
 * listening stream socket a stream listener, a connected stream socket one connection
 * (*listener false), an unconnected, unlistening stream socket a listener after listen(); an
 * IP socket not yet bound is bound first to its family's wildcard address, any port. Writes
 * the bound URI (udp://, tcp://, unix:PATH). On success the transport owns fd; on failure
 * the caller still does. RC_OK, RC_INVAL (not a socket), RC_UNKNOWNPROTO (not a datagram or
 * stream socket of AF_INET, AF_INET6 or AF_UNIX), RC_LOCALERROR (bind or listen failed,
 * errno kept), RC_NOMEM.
 */
rc_status rc__tp_adopt(int fd, size_t max_record, rc_tp **out, bool *listener, char *bound,
                       size_t len);
/* Close tp but not its descriptor, which goes back to whoever gave it (rc__tp_adopt). */
void rc__tp_close_keep_fd(rc_tp *tp);
/* The peer address of a connected socket transport (getpeername; through a balancer, the
 * client its PROXY header named: tp->caller): RC_OK with *len set (at
 * most the given *len bytes copied to sa); RC_NOTSUPP without a descriptor or peer. */
rc_status rc__tp_peer(rc_tp *tp, void *sa, unsigned *len);

/* Socket helpers shared by the socket transports (sock.c). */
/* Bind an IP socket not bound yet to its family's wildcard address, any port (an AF_UNIX one
 * is left alone). RC_OK or RC_LOCALERROR (errno kept). */
rc_status rc__sock_bind_if_unbound(int fd, int family);
rc_status rc__resolve(const rc_uri *u, int socktype, rc_peer *out);
rc_status rc__sock_bound_uri(int fd, const char *scheme, char *bound, size_t len);
int rc__sock_cloexec_nonblock(int fd, bool nonblock);
/* Connect fd to a by the deadline (CLOCK_MONOTONIC ns; 0: no limit); leaves it blocking.
 * RC_OK, RC_TIMEDOUT, RC_CANTSEND (errno kept). */
rc_status rc__sock_connect(int fd, const rc_peer *a, int64_t deadline);
/* Wait until fd is ready for poll events ev or timeout_ms passes (negative: no limit). False
 * on timeout (errno EAGAIN) or a poll failure (errno kept). */
bool rc__sock_wait(int fd, short ev, int timeout_ms);
/* rc_broadcast's socket work (bcast.c): an unconnected datagram socket for to's family that
 * may send to broadcast and multicast addresses (-1 with errno); one send (false with errno);
 * the next datagram within wait_ms and its sender (its length; 0: none in time; -1: errno). */
int rc__bcast_socket(const rc_peer *to);
bool rc__bcast_send(int fd, const void *msg, size_t len, const rc_peer *to);
ssize_t rc__bcast_recv(int fd, void *buf, size_t cap, rc_peer *from, int wait_ms);
/* The IPv4 broadcast addresses of this host's interfaces that are up and can broadcast
 * (getifaddrs), with port, into out[0..max): how many. 0 when there are none (or getifaddrs
 * failed: errno kept). */
size_t rc__bcast_ifaddrs(rc_peer *out, size_t max, uint16_t port);
/* The `outq` of transports that never queue output. */
size_t rc__tp_nothing_queued(rc_tp *tp);
/* The `hung_up` of transports without a peer to lose. */
bool rc__tp_never_hung_up(rc_tp *tp);
/* The `buffered` of transports that never hold a partial message. */
size_t rc__tp_nothing_buffered(rc_tp *tp);

#endif

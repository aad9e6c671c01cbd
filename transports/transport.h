/*
 * The transport interface (internal). A transport moves whole RPC messages; the client and
 * server never see sockets' differences. Adding a transport is one new file here plus one line
 * in transports.c's table; the client and server code do not change.
 *
 * Buffers: every outgoing message is passed with RC_TP_HEADROOM writable bytes in front of it,
 * so a stream transport writes its record mark there and sends the record with one syscall.
 */
#ifndef RC_TRANSPORT_H
#define RC_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <remotecall/status.h>

#define RC_TP_HEADROOM 4
#define RC_URI_MAX 1024 /* longest URI accepted */

/* A parsed URI: scheme://host:port, unix:/path, inproc:name. */
typedef struct rc_uri {
	char scheme[8];
	char host[256];  /* host name or address (no brackets); path or name for unix/inproc */
	int port;        /* -1: none given */
	bool v6literal;  /* host was written in [brackets] */
} rc_uri;

/* Parse text into u. RC_UNKNOWNADDR for a malformed or over-long URI, RC_UNKNOWNPROTO for an
 * unknown scheme. */
rc_status rc__uri_parse(const char *text, rc_uri *u);

/* A peer address (datagram sender or receiver). */
typedef struct rc_peer {
	struct sockaddr_storage ss;
	socklen_t len;
} rc_peer;

typedef struct rc_tp rc_tp;

/* What a transport does. The client uses send/recv/close; the server uses all of it. */
typedef struct rc_tp_vt {
	/*
	 * Send the message msg[0..len) (with headroom before msg) to the connected peer, or to
	 * `to` for a server's datagram socket. flags: MSG_DONTWAIT for a non-blocking try. Returns
	 * RC_OK; RC_AGAIN if it would block and nothing was sent; RC_MSGTOOLARGE; RC_CANTSEND
	 * (errno kept). A stream transport may send part and return RC_AGAIN with *sent < len; the
	 * caller continues with send_more.
	 */
	rc_status (*send)(rc_tp *tp, unsigned char *msg, size_t len, const rc_peer *to, int flags,
	                  size_t *sent);
	/*
	 * Receive one message. flags: MSG_DONTWAIT or 0 (block up to the socket's receive timeout).
	 * Returns RC_OK with *msg and *len (valid until the next recv on tp) and the sender in *from
	 * if not NULL; RC_AGAIN (nothing yet / timed out); RC_CLOSED (peer closed); RC_CANTRECV
	 * (errno kept); RC_MSGTOOLARGE (a record over the cap: close the transport).
	 */
	rc_status (*recv)(rc_tp *tp, void **msg, size_t *len, rc_peer *from, int flags);
	/*
	 * Datagram transports only (NULL for streams): receive one datagram into the caller's
	 * buffer, so that several threads can receive on one socket at once. Same returns as recv.
	 */
	rc_status (*recv_into)(rc_tp *tp, void *buf, size_t cap, size_t *len, rc_peer *from,
	                       int flags);
	/* Accept a connection on a listening stream transport: RC_OK, RC_AGAIN, RC_TOOMANY
	 * (descriptors exhausted), RC_LOCALERROR. */
	rc_status (*accept)(rc_tp *tp, rc_tp **out, size_t max_record);
	/* Bytes of an incomplete incoming message held (0 for datagrams). */
	size_t (*buffered)(rc_tp *tp);
	/* Close and free. */
	void (*close)(rc_tp *tp);
} rc_tp_vt;

struct rc_tp {
	const rc_tp_vt *vt;
	int fd;          /* -1 for a transport without a descriptor (in-process) */
	bool stream;     /* byte stream with record marking (tcp, unix) */
	bool listener;   /* a listening stream socket: accept, don't recv */
	size_t max_msg;  /* largest message it can carry (UDP: 65507 - 0) */
	int rcvtimeo_ms; /* the receive timeout currently set on fd (-1: none) */
};

/* Client side: connect to u. RC_OK with *out; RC_UNKNOWNHOST, RC_UNKNOWNADDR, RC_CANTSEND
 * (connect failed, errno kept), RC_NOMEM. */
typedef rc_status (*rc_tp_connect_fn)(const rc_uri *u, size_t max_record, rc_tp **out);
typedef struct rc_server rc_server;
/* Server side: bind (and listen) at u for srv; writes the bound URI. */
typedef rc_status (*rc_tp_listen_fn)(const rc_uri *u, size_t max_record, rc_server *srv,
                                     rc_tp **out, char *bound, size_t len);

typedef struct rc_tp_kind {
	const char *scheme;
	rc_tp_connect_fn connect;
	rc_tp_listen_fn listen;
} rc_tp_kind;

/* The transport for a scheme, or NULL. */
const rc_tp_kind *rc__tp_find(const char *scheme);

/* Set tp's blocking receive timeout (ms; 0 = none) if it differs from the current one. */
void rc__tp_set_rcvtimeo(rc_tp *tp, int ms);

/*
 * send/recv as direct system calls: libc's wrappers are thread-cancellation points and spend
 * more user-space instructions on that bookkeeping than the rest of a null call's client side.
 * remotecall never relies on cancelling a thread inside a send or receive.
 */
#include <sys/syscall.h>
#include <unistd.h>
static inline ssize_t rc__sendto(int fd, const void *buf, size_t len, int flags,
                                 const struct sockaddr *to, socklen_t tolen)
{
	return syscall(SYS_sendto, fd, buf, len, flags, to, tolen);
}
static inline ssize_t rc__recvfrom(int fd, void *buf, size_t len, int flags,
                                   struct sockaddr *from, socklen_t *fromlen)
{
	return syscall(SYS_recvfrom, fd, buf, len, flags, from, fromlen);
}

/* Socket helpers shared by the socket transports (sock.c). */
rc_status rc__resolve(const rc_uri *u, int socktype, rc_peer *out);
rc_status rc__sock_bound_uri(int fd, const char *scheme, char *bound, size_t len);
int rc__sock_cloexec_nonblock(int fd, bool nonblock);
/* The `buffered` of transports that never hold a partial message. */
size_t rc__tp_nothing_buffered(rc_tp *tp);

/*
 * The server's entry for transports without a descriptor (in-process): serve one request
 * message and hand the reply (with headroom before it) to reply(ctx, msg, len), at most once.
 * Defined in runtime/server.c.
 */
typedef void (*rc_reply_fn)(void *ctx, unsigned char *msg, size_t len);
void rc__server_handle_direct(rc_server *srv, const void *msg, size_t len, rc_reply_fn reply,
                              void *ctx);

#endif

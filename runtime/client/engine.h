/*
 * Internal to the client's files: what the engine (engine.c) offers the parts above it --
 * the object (client.c), blocking calls (fast.c), started calls (async.c): calls in flight,
 * completion, replies, reading, sending. Below it, common.h; the picture is there.
 */
#ifndef RC_CLIENT_ENGINE_H
#define RC_CLIENT_ENGINE_H

#include "runtime/client/common.h"

/* Take p off the list of calls in flight, if it is on it (under c->mu). */
void rc__unlink(rc_client *c, rc_async *p);
/* Put p on the list of calls in flight, completing at deadline, first retransmission after
 * retry_ms (under c->mu). */
void rc__register(rc_client *c, rc_async *p, int64_t now, uint32_t retry_ms);
/* Add a started call without callback to the client's handles, or take it off (under c->mu):
 * rc_client_destroy orphans the handles still listed. */
void rc__handle_link(rc_client *c, rc_async *p);
void rc__handle_unlink(rc_client *c, rc_async *p);
/* Free a started call and the message it kept for retransmission. */
void rc__free_call(rc_async *p);
/* Complete p with st, once (under c->mu): the only place a call's outcome is set. Wakes its
 * waiter; queues its callback; frees a handle released while in flight. */
void rc__complete(rc_client *c, rc_async *p, rc_status st);
/* The status of call p whose connection broke with st (RC_CANTSEND, RC_CANTRECV,
 * RC_TIMEDOUT) and errno e, kept in p's error (none for a timeout): a TLS failure (EPROTO) is
 * RC_TLSFAILED with the transport's reason in p's detail. */
rc_status rc__broken_status(rc_async *p, rc_status st, int e);
/* The status of call p whose send failed with r and errno e: RC_MSGTOOLARGE and RC_NOMEM as
 * they are, anything else as rc__broken_status's RC_CANTSEND. */
rc_status rc__send_status(rc_async *p, rc_status r, int e);
/* A call of c too large to send: p's detail says which limit -- this client's max message or
 * its transport's (a UDP datagram) -- and both sizes (len 0: sized again from xargs(args)
 * behind a header of hdrlen). Returns RC_MSGTOOLARGE. */
__attribute__((noinline, cold)) rc_status
rc__toolarge(const rc_client *c, rc_async *p, size_t len, size_t hdrlen, rc_xdrproc xargs,
             const void *args);
/* Fail every call in flight with st and errno detail err (the connection broke); a TLS
 * failure (err EPROTO: only the TLS layer reports it) becomes RC_TLSFAILED, with the
 * transport's words in each call's detail. */
void rc__fail_all(rc_client *c, rc_status st, int err);
/* Close a stream connection (under c->mu, not as a sender): the next call reconnects. Takes
 * the send lock, so no thread is inside a send on it. Datagram clients keep their socket. */
void rc__disconnect(rc_client *c);
/* Run the callbacks of completed calls (without the lock held); each handle is freed after
 * its callback returns. */
void rc__run_callbacks(rc_client *c);
/* Read everything that is there, without waiting (under c->mu): up to 1,024 messages, the
 * peer's calls served whenever a quarter of the queue's room is used, before more are read.
 * Returns the status of the read that ended it (RC_AGAIN or RC_TIMEDOUT: nothing more). */
rc_status rc__read_all(rc_client *c);
/* Retransmit due datagram calls and expire calls past their deadline (under c->mu); return
 * the earliest time something is due for any call. */
int64_t rc__timers(rc_client *c, int64_t now);
/*
 * What the reader does with what the transport gave it (under c->mu): hand a message to its
 * call, or fail the calls a broken connection strands; then give up the reader's role.
 */
void rc__after_recv(rc_client *c, rc_status st, void *msg, size_t len, int e);
/* Send what c's cork queue holds (under c->smu): send_batch, as many system calls as the
 * kernel takes; what the socket refuses (its buffer full) is as if lost, and retransmission
 * covers it, as for a single send. */
void rc__dq_flush(rc_client *c);
/* Encode a call for proc into b: the header template (copied under the lock) then the
 * arguments. RC_OK with *len; RC_MSGTOOLARGE, RC_CANTENCODEARGS, RC_NOMEM. */
rc_status rc__encode(rc_client *c, rc_async *p, rc__encbuf *b, uint32_t proc, rc_xdrproc xargs,
                     const void *args, size_t *len);
/* Send queued stream output, waiting at most timeout_ms (0: not at all; negative: no limit).
 * Under c->smu. RC_OK (nothing left), RC_AGAIN (some left), RC_CANTSEND (errno kept). */
rc_status rc__flush_locked(rc_client *c, int timeout_ms);
/* A send on the stream failed under a thread that is not the reader: fail the calls in flight
 * on that connection and close it (under c->mu). */
void rc__send_failed(rc_client *c, const rc_tp *tp, int e);
/*
 * Start p: connect if needed (by p->deadline), give it an xid, register it as in flight and
 * send msg[0..len) (headroom before msg). flags RC_TPF_DONTWAIT: a started call, which does not
 * wait for the socket (a datagram that does not fit is as if lost; stream output is queued,
 * up to RC__OQ_BLOCK bytes). On failure p is not in flight and the status says why.
 */
rc_status rc__start(rc_client *c, rc_async *p, unsigned char *msg, size_t len, unsigned flags);
/*
 * Renew the credentials of the started calls on c's renew list and send each again (without
 * c->mu; a thread that may block: rc_client_advance, rc_async_wait). The calls were denied for
 * a credential problem (rc__handle); the flavor renews their credentials once -- RPCSEC_GSS
 * makes a new context with calls on this client -- and each goes again as it was encoded,
 * with a new xid, sealed anew. A call whose credentials could not be renewed, or that was
 * released or cancelled meanwhile, ends as that says.
 */
void rc__renew(rc_client *c);
/* Send the calls a drain's notice marked (rc__goaway; c->resend_due) again on a new connection
 * (under c->mu, dropped while it connects): new xids, the messages as first encoded. The
 * connection is tried again until the latest of their deadlines; if none comes, they fail as
 * a failed connect does (rc_client_set_failover). */
void rc__resend(rc_client *c);
/* Wait for p as the reader or beside it (under c->mu), until it completes or `until`. */
void rc__drive(rc_client *c, rc_async *p, int64_t until);
/*
 * Read from the transport as the reader (entered and left under c->mu, which it drops while
 * reading). flags 0 blocks up to wake; RC_TPF_DONTWAIT reads what is there. Returns the
 * transport status of the last read (RC_TIMEDOUT: an in-process transport had no reply).
 */
rc_status rc__read(rc_client *c, int64_t wake, unsigned flags);
/* A blocking call has its reply, on a client that serves (under c->mu): its receive may have
 * read the peer's calls along with it into the transport's buffer, which no descriptor would
 * announce now (the socket has nothing more) -- read and serve them on this thread, as
 * rc_client_advance does, unless a reader is at work (it sees them). */
void rc__serve_ahead_locked(rc_client *c);
void rc__serve_ahead(rc_client *c);

#endif

/*
 * Internal to the client's files (runtime/client/): the client object, a call's object, what
 * common.c and inbound.c offer the others, and the hot path's inline helpers; engine.h adds
 * the engine's functions. The layer's contract:
 *
 * Every call in flight -- a blocking call on the caller's stack, or a started call on the
 * heap -- sits in the client's pending list under its xid. One thread at a time reads from the
 * transport (the "reader"); whatever reply it gets, it decodes into the call the xid names and
 * wakes that call's thread. So a client may be shared by threads, calls on one TCP connection
 * proceed concurrently, and started calls complete from whoever reads: rc_call,
 * rc_async_wait or rc_client_advance. Completion callbacks run only from rc_client_advance,
 * rc_async_wait and rc_client_destroy, never under the client's lock.
 *
 * One engine: every call is started (rc__start: encoded, registered in flight, sent) and then
 * waited for (rc__drive), whether the caller blocks in rc_call, waits in rc_async_wait or is
 * driven from its own loop through rc_client_advance; every reply is decoded by one function
 * (rc__decode) and every call completes once (rc__complete). A blocking call on an idle client
 * first tries one step that needs no lock (rc__fast: send, one receive); anything unusual hands
 * it to the engine, registered as in flight. The fast step is no second engine: it writes the
 * header with the engine's rc__hdr_put, checks the reply (verifier included, through the
 * credentials' flavor) and decodes it with the engine's rc__decode, and only skips the lock
 * and the registration; calls whose credentials seal each transmission (rc__seal) never take
 * it.
 *
 * UDP calls are retransmitted with the same xid, with doubling intervals, inside the call's
 * total deadline. A stream connection that broke is reopened by the next call, within that
 * call's deadline and without the client's lock held. The client never touches a socket: the
 * transport (transports/transport.h) frames, queues and sends.
 */
#ifndef RC_CLIENT_COMMON_H
/* Times one call's credentials are renewed at most: after a refusal for a lost or expired
 * context each time (the server may push the new context out before the call's retry is
 * served), never for a reply that fails its verifier. */
#define RC__RENEWALS 2
#define RC_CLIENT_COMMON_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/auth/auth.h"
#include "runtime/core/rpc.h"

#define RC__MAX_RETRY_MS 4000u
#define RC__IDLE_CHECK_NS 200000LL /* probe a stream idle this long before using it */
#define RC__OQ_BLOCK ((size_t)4 << 20) /* queued output beyond which a started call waits */
#define RC__RETIRED_MAX 16             /* replaced header templates kept before waiting */
#define RC__NOFAST_SPIN 1u             /* rc_client.nofast bits */
#define RC__NOFAST_SEALED 2u
#define RC__NOFAST_FAILOVER 4u
#define RC__INQ_MAX 256u /* calls from the peer held to be served; more are dropped */
#define RC__INQ_SPARE 512u /* a served call's buffer up to this size is kept for the next */

/* A call the peer sent on the client's stream (the back channel), copied, waiting to be
 * served outside the client's lock (rc__serve_inq). */
typedef struct rc__inq {
	struct rc__inq *next;
	size_t len;
	_Alignas(16) unsigned char msg[];
} rc__inq;

/* REPLY (1) then MSG_ACCEPTED (0), as the 8 bytes lie on the wire, read as one word. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
static const uint64_t rc__reply_accepted = (uint64_t)1 << 32;
#else
static const uint64_t rc__reply_accepted = (uint64_t)1 << 24;
#endif
_Static_assert(RC__REPLY == 1 && RC__MSG_ACCEPTED == 0 && RC__SUCCESS == 0, "RFC 5531 values");
/* rc_error's detail text is its last field: the fixed fields are the bytes before it */
_Static_assert(offsetof(rc_error, detail) + sizeof(((rc_error *)0)->detail) == sizeof(rc_error),
               "rc_error.detail last");

/*
 * A call's state (rc_async.state, under the client's mu):
 *
 *   IDLE      not in flight: not started yet (a blocking call before rc__register; the
 *             fast step never leaves IDLE), or its start failed (rc__start unlinked it)
 *   INFLIGHT  on the pending list under its xid, waiting for its reply (rc__register)
 *   DONE      completed, once (rc__complete: st and err set; its waiter woken, its callback
 *             queued); never anything else after
 *
 *   IDLE -> INFLIGHT -> DONE       the usual way
 *   INFLIGHT -> IDLE               its send failed under rc__start (its status says why)
 *   IDLE -> DONE                   rc_client_destroy or a broken connection completes it
 *
 * Apart from the state, who may free a started call: `starting` (rc__start has not returned:
 * a completion meanwhile stands, but the starter frees nothing) and `released` (the
 * application released a no-callback handle while in flight: rc__complete frees it). Lock
 * order on the client: mu before smu, never the reverse.
 */
typedef enum rc__call_state {
	RC__CALL_IDLE = 0,
	RC__CALL_INFLIGHT,
	RC__CALL_DONE,
} rc__call_state;

struct rc_async {
	rc_async *next, *prev; /* pending list, or the done queue (next only) */
	rc_client *clnt;
	uint32_t xid;
	uint32_t retry_ms; /* (xid to res: a blocking call's fast step sets them, one line) */
	rc_xdrproc xres;
	void *res;
	rc_status st;
	rc_error err;
	rc__call_state state; /* under mu: see rc__call_state */
	bool has_cb;
	bool released; /* no-callback handle released while in flight: free at completion */
	bool starting; /* rc__start has not returned: another thread must not free it yet */
	bool handle;   /* a started call without callback: in the client's handle list */
	bool windowed; /* counted in auth->inflight while in flight (auth->window) */
	bool resend;   /* under mu: its server drained before reading it: sent again on a new
	                  connection (rc__resend; rc_client_set_failover) */
	/* A started call denied for a credential problem, waiting on the client's renew list for
	 * its credentials to be renewed and itself sent again (rc__renew): while `renewing`, a
	 * completion (a release, a cancel) is only recorded in renew_st and its renewer ends it.
	 * renewed: how many times it was (at most RC__RENEWALS). */
	bool renewing;
	uint8_t renewed;
	uint32_t renew_why;     /* the auth_stat it was denied with */
	rc_status renew_st;     /* a completion that came while renewing, or RC_OK */
	rc_async *hnext, *hprev; /* that list (the handles rc_client_destroy orphans) */
	rc_async_cb cb;
	void *udata;
	/* datagram retransmission: the message (headroom before it) and its timers */
	unsigned char *msg;
	size_t msglen;
	unsigned char *msgblock; /* heap block holding msg, freed with the call (started calls) */
	/* a flavor that is not plain (auth.h): msg is the call with only its first 24 bytes
	 * before the arguments; each transmission is sealed into wire (credential, verifier,
	 * wrapped arguments) with a fresh number, kept in seqs for the reply's check */
	rc__cl_auth *auth;       /* a reference, or NULL (plain credentials: msg goes as it is) */
	unsigned char *wire;     /* heap block: headroom, then the sealed message */
	size_t wirelen;
	rc__cl_seqs seqs;
	int64_t deadline;
	int64_t next_retry;
	/* a traced blocking call on the general path: when it began and was encoded (0: not
	 * traced, or a started call) */
	uint64_t tr_begin, tr_encoded;
	/* a blocking call sent again after its stream broke (rc_client_set_resend): the xid it
	 * keeps, or 0 (rc__start takes a fresh one) */
	uint32_t resend_xid;
	unsigned resends; /* how many times (rc__resend_due counts them; not reset by init) */
};

/* A call-header template: xid, CALL, 2, prog, vers, proc, cred, verf. Replaced whole (never
 * rewritten in place) when the credentials change, because the fast path copies it without the
 * lock; a replaced one is freed once no fast path can be reading it (rc__retire). */
typedef struct rc__hdr {
	struct rc__hdr *next; /* the retired list */
	size_t len;
	_Alignas(16) unsigned char b[24 + 8 + RC__MAX_AUTH_BYTES + 8];
	const rc__flavor *fl; /* the credentials' flavor (auth.h) */
	rc__cl_auth *auth;    /* a flavor that is not plain: its credentials (a reference), and
	                         b holds the first 24 bytes of a call only; else NULL */
} rc__hdr;

/*
 * A datagram client's receive batch: RC_TP_BATCH slots of RC__DGRAM_SLOT bytes (one
 * allocation; the kernel touches only the pages replies land in) and how many slots the next
 * receive asks for (twice what the last one filled, 2..RC_TP_BATCH).
 */
#define RC__DGRAM_SLOT 65536
typedef struct rc__rxb {
	unsigned want;
	rc_tp_dgram v[RC_TP_BATCH];
	_Alignas(16) unsigned char bytes[];
} rc__rxb;

/*
 * A datagram client's cork queue: copies of requests started while rc_client_advance runs
 * callbacks, sent together when it uncorks. RC__DQ_BYTES of room; a request that does not fit
 * flushes the queue first, one over the whole room goes on its own.
 */
#define RC__DQ_BYTES 65536
typedef struct rc__dq {
	unsigned n;
	size_t used;
	rc_tp_dgram v[RC_TP_BATCH];
	_Alignas(16) unsigned char bytes[RC__DQ_BYTES];
} rc__dq;

struct rc_client {
	/* What <remotecall/sunrpc.h> sees of a client (its struct rc_client): Sun's cl_auth and
	 * the id of the AUTH its clnt_call last applied. Only sunrpc.c uses them; keep first. */
	void *cl_auth;
	uint64_t rc_auth_id;
	/*
	 * What a blocking call's fast step reads and writes, together: two cache lines, then the
	 * template's (hdr0). A call between two system calls finds its lines cold; the fewer, the
	 * cheaper (the client is allocated 64-aligned, rc_client_create).
	 *
	 * `reading` is the reader's role: taken only by compare-and-swap (rc__read under mu; a
	 * blocking call's fast path without it), given up by a plain store. nwaiters counts the
	 * threads waiting on cv. A waiter counts itself before it looks at `reading`, and the
	 * fast path clears `reading` before it looks at the count, so one of them always sees
	 * the other (sequentially consistent atomics) and no wake-up is lost.
	 */
	_Alignas(64) atomic_bool reading;
	atomic_bool queued; /* the transport holds output not yet sent (the fast path then waits) */
	/* A blocking call's fast step sends on a stream without smu: it raises fsending, then
	 * looks at ssending, which a sender under smu raises before it sends and then waits for
	 * fsending to fall (rc__smu_send, rc__smu_sent) -- so at most one of them sends, and a
	 * fast step that finds ssending raised takes smu instead (Dekker's two flags, seq_cst). */
	atomic_bool fsending, ssending;
	bool dgram;
	/* Why blocking calls may not take the fast step, as bits (0: they may): spinning
	 * (rc_client_set_spin), credentials of a flavor that seals every call (rc__seal). */
	_Atomic uint32_t nofast;
	atomic_int nwaiters;
	atomic_uint xid;
	uint32_t timeout_ms, retry_ms;
	bool resend; /* rc_client_set_resend: blocking calls go again, same xid, on a new stream */
	rc_tp *tp;               /* NULL while a stream is disconnected */
	rc__hdr *hdr;            /* the current template (atomic: the fast path reads it) */
	_Atomic int64_t last_io; /* relaxed: the fast path writes it without mu */
	size_t max_msg; /* the cap in force: max_record, or less where the transport is smaller */
	size_t npending;
	rc_async *doneq; /* completed calls whose callbacks have not run (doneq_tail: the last) */
	/* the fast path's heap encode buffer, kept between calls (only the reader uses it) */
	unsigned char *fastbuf;
	size_t fastcap;
	rc_trace_fn trace; /* NULL: off */
	/* The back channel (rc_client_serve): the programs the client answers (a private server,
	 * never run, reached through srv_ops; NULL: none, every call gets PROG_UNAVAIL) and,
	 * under mu, the calls read and not yet served (inq). */
	void *srv;
	const rc__cl_server *srv_ops;
	_Alignas(64) rc__hdr hdr0; /* the first template, never freed */

	uint32_t prog, vers;
	uint32_t spin_us;
	size_t max_record; /* the cap set on calls and replies (rc_client_set_max_message) */
	unsigned big_spare; /* calls that used little of a big kept buffer (rc__keep_buffer) */
	rc_async *pending;
	rc_async *renew; /* under mu: started calls waiting for their credentials' renewal (next) */
	rc_async *doneq_tail;
	rc_async *handles; /* started calls without callback, not yet released */
	rc__hdr *retired;  /* under mu: replaced templates not yet freed */
	unsigned nretired;
	void *trace_arg;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_mutex_t smu; /* one sender at a time on a stream; guards cork */
	/*
	 * Corking: while rc_client_advance runs completion callbacks, calls they start on a
	 * stream are gathered in the transport's output queue (RC_TPF_MORE) and leave in one
	 * write afterwards (pipelined calls cost one system call per batch, not one per call).
	 */
	int cork;
	/* Datagram clients: requests started while corked, copied here and sent together at the
	 * uncork (send_batch); under smu. And the reader's batch of received datagrams (the
	 * reader's role guards it). Both made on first use. */
	rc__dq *dq;
	rc__rxb *rxb;
	bool connecting;    /* under mu: a thread is connecting without the lock */
	const rc_tp_kind *kind;
	rc_uri uri;
	rc__inq *inq, *inq_tail; /* (srv) */
	unsigned ninq;
	rc__inq *inq_spare; /* under mu: one served call's buffer kept for the next (cap in len) */
	/* rc_client_set_failover: on; the xid of this connection's NOTICE call, whose second
	 * answer says the server drained (0: none; set by the connecting thread before the
	 * connection is published, then under mu); calls wait to be sent again (under mu). */
	bool failover;
	uint32_t notice_xid;
	bool resend_due;
};

/* The calling thread's last call on a client, for rc_client_geterr (client.c). */
typedef struct rc__lasterr {
	const rc_client *c;
	bool ok; /* the last call succeeded: e is not filled in (rc_client_geterr gives zeros) */
	rc_error e;
} rc__lasterr;
extern _Thread_local rc__lasterr rc__tls;

#define rc__now() ((int64_t)rc__clock_ns())
#define rc__put32 rc__st32
#define rc__get32 rc__ld32

/* ---- common.c: what every part of the client uses ------------------------------------------- */

/* What a failure of c says in its detail when nothing filled it in: a UDP SYSTEM_ERR may be
 * the server's answer to a reply too big for a datagram. */
void rc__err_explain(const rc_client *c, rc_error *e);
/* Free the retired templates (under c->mu, holding the reader's role: no fast path can be
 * copying one). */
void rc__free_retired(rc_client *c);
/* Release the reader's role and wake whoever waits for it (under c->mu). */
void rc__role_drop_locked(rc_client *c);
/* Whether c's transport holds records read ahead (under c->mu). Its read state is looked at
 * only with the reader's role, taken and given back here: a blocking call's fast step takes
 * the role without the lock, so "no reader" seen under the lock does not keep it still. A
 * reader at work: false (it sees them itself). */
bool rc__ahead_locked(rc_client *c);
/* Connect c's transport by deadline (0: no limit) and make it current. Called without c->mu
 * by the one thread that set c->connecting, or while the client is not yet shared (open).
 * RC_OK, or the transport's failure (errno kept). */
rc_status rc__connect(rc_client *c, int64_t deadline);
/* Ask the server on tp, a connection just made (not yet c's), to tell of a drain; wait for its
 * answer by deadline (0: no limit). RC_OK (c->notice_xid set, or 0 when the server does not
 * drain), or the failure that ends the connection (RC_CLOSED: it closed first -- a balancer
 * with no server, a server that stopped listening; RC_TIMEDOUT). */
rc_status rc__notice(rc_client *c, rc_tp *tp, int64_t deadline);
/* A call's status when (re)connecting failed with st: what the call can report. */
rc_status rc__connect_status(rc_status st);
/* Report step pt of call xid now (tracing on). Out of line: the untraced paths stay small. */
void rc__trace(const rc_client *c, rc_trace_point pt, uint32_t xid);
/* An accepted reply's verifier v, checked through the flavor of p's credentials (a: p->auth,
 * or NULL for plain credentials: the template's): RC_OK, or RC_AUTHERROR with auth_stat
 * AUTH_INVALIDRESP in p->err (as libtirpc's clnt_call). */
rc_status rc__check_verf(const rc_client *c, rc_async *p, rc__cl_auth *a, const rc__verf *v);
/* The results of p's SUCCESS reply from x, unwrapped first by its flavor (a: p->auth, or NULL)
 * if that wraps them. */
bool rc__decode_results(const rc_client *c, rc_async *p, rc__cl_auth *a, rc_xdr *x,
                        const unsigned char *m, size_t len);

/* ---- inbound.c: the calls the peer sends (the back channel, client side) -------------------- */

/* Keep a call the peer sent (under c->mu) for rc__serve_inq; beyond RC__INQ_MAX waiting, or
 * without memory, it is dropped (the peer's call times out, as on a lost datagram). */
void rc__inq_add(rc_client *c, const unsigned char *msg, size_t len);
/* What a reply to the peer's call that could not be sent calls (under c->mu): the engine's
 * rc__send_failed, handed down by whoever serves (the engine, rc_client_advance). */
typedef void (*rc__send_failed_fn)(rc_client *c, const rc_tp *tp, int e);
/* Serve the calls the peer sent (entered and left under c->mu, dropped while each is served,
 * on the calling thread: see rc_client_serve); a reply's failed send calls failed. */
void rc__serve_inq(rc_client *c, rc__send_failed_fn failed);

/* ---- inline: the hot path's own (the engine and the fast step), and the smallest ------------ */

/* Clear e (every field but the detail text, whose first byte says it is empty). */
static inline void rc__err_clear(rc_error *e)
{
	memset(e, 0, offsetof(rc_error, detail));
	e->detail[0] = '\0';
}

/* A call on c succeeded: what rc_client_geterr reports for it, in two stores. */
static inline void rc__set_lastok(const rc_client *c)
{
	rc__tls.c = c;
	rc__tls.ok = true;
}

/* What decoding one reply may allocate: the results of the largest message, four times over
 * (pointers and lengths outgrow their XDR encoding), plus slack for small ones. */
static inline size_t rc__budget(const rc_client *c)
{
	return c->max_msg * 4 + 4096;
}

/* Whether reply m (24 bytes or more) is the usual one: accepted, an empty AUTH_NONE
 * verifier, SUCCESS (three loads) -- all a plain flavor's credentials need to see. */
static inline bool rc__plain_success(const unsigned char *m)
{
	uint64_t type_stat, verflen_accept;
	uint32_t vflavor;

	memcpy(&type_stat, m + 4, 8);
	memcpy(&vflavor, m + 12, 4);
	memcpy(&verflen_accept, m + 16, 8);
	return type_stat == rc__reply_accepted && (vflavor | verflen_accept) == 0;
}

/*
 * Decode reply m[0..len) (len >= 12; its xid names p) into p: the header, then the results
 * with p->xres into p->res. The usual reply (accepted, empty verifier, SUCCESS) is recognised
 * with two loads. Returns the call's status; RC_BADREPLY for a malformed reply, which a
 * datagram client ignores (a forged or mangled datagram: the real reply may still come).
 */
static inline __attribute__((always_inline)) rc_status
rc__decode(const rc_client *c, rc_async *p, const unsigned char *m, size_t len,
           const bool sealable)
{
	rc_xdr x;
	rc_status st, st2 = RC_OK;
	rc__verf v;

	if (len >= 24 && !(sealable && p->auth != NULL)) { /* (a flavor's replies: its checks) */
		if (rc__plain_success(m)) {
			if (p->xres == rc_xdr_void)
				return RC_OK; /* nothing to decode (what follows is ignored, as ever) */
			rc__xdr_decoder(&x, m + 24, len - 24, rc__budget(c));
			if (p->xres(&x, p->res))
				return RC_OK;
			rc__err_clear(&p->err); /* every failure leaves p's error cleared and filled */
			return RC_CANTDECODERES;
		}
	}
	rc__xdr_decoder(&x, m + 4, len - 4, rc__budget(c));
	rc__err_clear(&p->err); /* a blocking call's is not cleared until something fails */
	v.flavor = RC_AUTH_NONE;
	v.len = 0;
	v.body = NULL;
	st = rc__reply_header(&x, &p->err, &v);
	if (st != RC_BADREPLY && st != RC_AUTHERROR && st != RC_VERSMISMATCH) /* accepted */
		st2 = rc__check_verf(c, p, sealable ? p->auth : NULL, &v);
	if (st2 != RC_OK)
		return st2;
	if (st == RC_OK && !rc__decode_results(c, p, sealable ? p->auth : NULL, &x, m, len))
		st = RC_CANTDECODERES;
	return st;
}

/* The call header of template hdr for procedure proc at h (the xid is written when the call
 * gets one): the one writer of a call's header, for the engine (rc__encode) and the fast step
 * alike. Inline; an AUTH_NONE template is a fixed-size copy the compiler inlines. */
static inline __attribute__((always_inline)) void rc__hdr_put(unsigned char *h,
                                                              const rc__hdr *hdr, uint32_t proc)
{
	if (__builtin_expect(hdr->len == 40, 1))
		memcpy(h, hdr->b, 40);
	else
		memcpy(h, hdr->b, hdr->len);
	rc__put32(h + 20, proc);
}

/* A stream send under smu begins: after a fast step's send under way (see fsending). */
static inline void rc__smu_send(rc_client *c)
{
	atomic_store(&c->ssending, true);
	while (atomic_load(&c->fsending))
		sched_yield(); /* one small record's write: its thread is running or runnable */
}

/* ... and has ended (still under smu). */
static inline void rc__smu_sent(rc_client *c)
{
	atomic_store_explicit(&c->ssending, false, memory_order_release);
}

/* Wake threads waiting beside the reader, if any (under c->mu). */
static inline void rc__wake(rc_client *c)
{
	if (c->nwaiters > 0)
		pthread_cond_broadcast(&c->cv);
}

/* The total time a call with options opts may take, in ms. */
static inline uint32_t rc__call_timeout(const rc_client *c, const rc_callopts *opts)
{
	return opts != NULL && opts->timeout_ms != 0 ? opts->timeout_ms : c->timeout_ms;
}

#endif

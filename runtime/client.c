/*
 * The client: one (program, version) at one address, over any transport.
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
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "runtime/auth.h"
#include "runtime/rpc.h"
#include "runtime/server_priv.h"
#include "transports/tls.h"

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
	 * completion (a release, a cancel) is only recorded in renew_st and its renewer ends it. */
	bool renewing, renewed;
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
	 * never run; NULL: none, every call gets PROG_UNAVAIL) and, under mu, the calls read and
	 * not yet served (inq). */
	rc_server *srv;
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
	struct rc__dq *dq;
	struct rc__rxb *rxb;
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

static _Thread_local struct {
	const rc_client *c;
	bool ok; /* the last call succeeded: e is not filled in (rc_client_geterr gives zeros) */
	rc_error e;
} rc__tls;

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

/* What a failure of c says in its detail when nothing filled it in: a UDP SYSTEM_ERR may be
 * the server's answer to a reply too big for a datagram. */
static void rc__err_explain(const rc_client *c, rc_error *e)
{
	if (e->status == RC_SYSTEMERROR && c->dgram && e->detail[0] == '\0')
		snprintf(e->detail, sizeof(e->detail), "%s",
		         "over UDP this is also how a reply that did not fit in a datagram ends: "
		         "use tcp: or unix: for replies over 65,507 bytes");
}

/* rpc.h: keep e as the calling thread's last error on c. The fixed fields are copied, the
 * detail text only when there is one (a call's hot path pays for 28 bytes, not 284). */
void rc__set_lasterr(const rc_client *c, const rc_error *e)
{
	rc__tls.c = c;
	rc__tls.ok = false;
	memcpy(&rc__tls.e, e, offsetof(rc_error, detail));
	if (__builtin_expect(e->detail[0] != '\0', 0))
		memcpy(rc__tls.e.detail, e->detail, sizeof(e->detail));
	else
		rc__tls.e.detail[0] = '\0';
	if (e->status == RC_CANTENCODEARGS && rc__xdr_why[0] != '\0') { /* which value, why */
		snprintf(rc__tls.e.detail, sizeof(rc__tls.e.detail), "%s", rc__xdr_why);
		rc__xdr_why[0] = '\0';
	} else {
		rc__err_explain(c, &rc__tls.e);
	}
}

void rc_client_geterr(const rc_client *clnt, rc_error *err)
{
	if (err == NULL)
		return;
	if (rc__tls.c == clnt && clnt != NULL && !rc__tls.ok)
		*err = rc__tls.e;
	else
		memset(err, 0, sizeof(*err));
}


#define rc__now() ((int64_t)rc__clock_ns())
#define rc__put32 rc__st32
#define rc__get32 rc__ld32

/* ---- the header template --------------------------------------------------------------- */

/* Fill h with the call header of c's program and version and the given credential body
 * (flavor, bytes; credlen at most RC__MAX_AUTH_BYTES). */
static void rc__build_header(const rc_client *c, rc__hdr *h, uint32_t flavor,
                             const unsigned char *cred, size_t credlen)
{
	unsigned char *p = h->b;

	rc__put32(p + 0, 0); /* xid, patched per call */
	rc__put32(p + 4, RC__CALL);
	rc__put32(p + 8, RC__RPCVERS);
	rc__put32(p + 12, c->prog);
	rc__put32(p + 16, c->vers);
	rc__put32(p + 20, 0); /* procedure, patched per call */
	rc__put32(p + 24, flavor);
	rc__put32(p + 28, (uint32_t)credlen);
	if (credlen > 0)
		memcpy(p + 32, cred, credlen);
	p += 32 + credlen;
	rc__put32(p, 0); /* verifier: AUTH_NONE */
	rc__put32(p + 4, 0);
	h->len = 32 + credlen + 8;
	h->next = NULL;
	h->fl = rc__flavor_find(flavor);
	h->auth = NULL;
}

/* Free the retired templates (under c->mu, holding the reader's role: no fast path can be
 * copying one). */
static void rc__free_retired(rc_client *c)
{
	while (c->retired) {
		rc__hdr *h = c->retired;
		c->retired = h->next;
		rc__cl_auth_unref(h->auth);
		free(h);
	}
	c->nretired = 0;
}

/* Release the reader's role and wake whoever waits for it (under c->mu). */
static void rc__role_drop_locked(rc_client *c)
{
	atomic_store(&c->reading, false);
	if (atomic_load(&c->nwaiters) > 0)
		pthread_cond_broadcast(&c->cv);
}

/* Whether c's transport holds records read ahead (under c->mu). Its read state is looked at
 * only with the reader's role, taken and given back here: a blocking call's fast step takes
 * the role without the lock, so "no reader" seen under the lock does not keep it still. A
 * reader at work: false (it sees them itself). */
static bool rc__ahead_locked(rc_client *c)
{
	bool idle = false, ahead;

	if (c->tp == NULL || !atomic_compare_exchange_strong(&c->reading, &idle, true))
		return false;
	ahead = rc__tp_ahead(c->tp);
	rc__role_drop_locked(c);
	return ahead;
}

/*
 * Make a new template current (a fresh copy; the old one is retired, not rewritten, since a
 * fast path may be copying it without the lock). Retired templates are freed at once if the
 * reader's role is free; otherwise later, by the reader (rc__read) -- and past
 * RC__RETIRED_MAX this waits for the role, so they never pile up. RC_OK or RC_NOMEM.
 */
static rc_status rc__install_header(rc_client *c, rc__hdr *h)
{
	bool idle = false;

	pthread_mutex_lock(&c->mu);
	if (c->hdr != &c->hdr0) {
		c->hdr->next = c->retired;
		c->retired = c->hdr;
		c->nretired++;
	}
	__atomic_store_n(&c->hdr, h, __ATOMIC_RELEASE);
	if (h->auth != NULL)
		atomic_fetch_or_explicit(&c->nofast, RC__NOFAST_SEALED, memory_order_relaxed);
	else
		atomic_fetch_and_explicit(&c->nofast, ~RC__NOFAST_SEALED, memory_order_relaxed);
	while (c->retired != NULL) {
		idle = false;
		if (atomic_compare_exchange_strong(&c->reading, &idle, true)) {
			rc__free_retired(c);
			rc__role_drop_locked(c);
			break;
		}
		if (c->nretired <= RC__RETIRED_MAX)
			break; /* the reader frees them */
		atomic_fetch_add(&c->nwaiters, 1);
		if (atomic_load(&c->reading))
			pthread_cond_wait(&c->cv, &c->mu);
		atomic_fetch_sub(&c->nwaiters, 1);
	}
	pthread_mutex_unlock(&c->mu);
	return RC_OK;
}

/* A new template with a plain flavor's credential body, made current (rc__install_header). */
static rc_status rc__set_header(rc_client *c, uint32_t flavor, const unsigned char *cred,
                                size_t credlen)
{
	rc__hdr *h = malloc(sizeof(*h));

	if (h == NULL)
		return RC_NOMEM;
	rc__build_header(c, h, flavor, cred, credlen);
	return rc__install_header(c, h);
}

/* auth.h: credentials of a flavor that is not plain: the template holds the call's first 24
 * bytes and the credentials; each call is sealed through them (rc__seal). */
rc_status rc__client_set_auth(rc_client *clnt, rc__cl_auth *a)
{
	rc__hdr *h;

	if (clnt == NULL || a == NULL || a->fl == NULL || (a->fl->props & RC__FL_PLAIN) ||
	    a->fl->cl_marshal == NULL || a->fl->cl_validate == NULL) {
		rc__cl_auth_unref(a);
		return RC_INVAL;
	}
	if ((h = malloc(sizeof(*h))) == NULL) {
		rc__cl_auth_unref(a);
		return RC_NOMEM;
	}
	rc__build_header(clnt, h, RC_AUTH_NONE, NULL, 0);
	h->len = 24; /* xid through procedure: the rest is the flavor's, per transmission */
	h->fl = a->fl;
	h->auth = a;
	return rc__install_header(clnt, h);
}

/* rpc.h: credentials of a plain flavor, encoded. */
rc_status rc__client_set_cred(rc_client *clnt, uint32_t flavor, const unsigned char *cred,
                              size_t len)
{
	const rc__flavor *fl = rc__flavor_find(flavor);

	if (clnt == NULL || fl == NULL || !(fl->props & RC__FL_PLAIN) ||
	    len > RC__MAX_AUTH_BYTES || (len > 0 && cred == NULL))
		return RC_INVAL;
	return rc__set_header(clnt, flavor, cred, len);
}

rc_status rc_client_set_auth_none(rc_client *clnt)
{
	if (clnt == NULL)
		return RC_INVAL;
	return rc__set_header(clnt, RC_AUTH_NONE, NULL, 0);
}

rc_status rc_client_set_auth_sys(rc_client *clnt, const char *machine, uint32_t uid,
                                 uint32_t gid, const uint32_t *gids, uint32_t ngids)
{
	unsigned char body[RC__MAX_AUTH_BYTES];
	rc_xdr x;
	char *m = (char *)machine;
	uint32_t stamp = (uint32_t)time(NULL);
	uint32_t *g = (uint32_t *)gids;

	if (clnt == NULL || machine == NULL || strlen(machine) > 255 || ngids > 16 ||
	    (ngids > 0 && gids == NULL))
		return RC_INVAL;
	rc_xdrmem_create(&x, body, sizeof(body), RC_XDR_ENCODE);
	if (!rc_xdr_u_int(&x, &stamp) || !rc_xdr_string(&x, &m, 255) || !rc_xdr_u_int(&x, &uid) ||
	    !rc_xdr_u_int(&x, &gid) ||
	    !rc_xdr_array(&x, &g, &ngids, 16, sizeof(uint32_t), (rc_xdrproc)rc_xdr_u_int))
		return RC_INVAL;
	return rc__set_header(clnt, RC_AUTH_SYS, body, rc_xdr_getpos(&x));
}

/* ---- life cycle ------------------------------------------------------------------------- */

static rc_status rc__notice(rc_client *c, rc_tp *tp, int64_t deadline);

/* Connect c's transport by deadline (0: no limit) and make it current. Called without c->mu
 * by the one thread that set c->connecting, or while the client is not yet shared (open).
 * RC_OK, or the transport's failure (errno kept). */
static rc_status rc__connect(rc_client *c, int64_t deadline)
{
	rc_tp *tp = NULL;
	rc_status st;

	rc__tp_clear_detail();
	st = c->kind->connect(&c->uri, c->max_record, deadline, &tp);
	if (st == RC_OK && c->failover && (st = rc__notice(c, tp, deadline)) != RC_OK) {
		tp->vt->close(tp); /* (a balancer with no server behind it closes at once) */
		tp = NULL;
	}

	if (st == RC_OK) {
		size_t m = tp->max_msg;
		c->max_msg = m > c->max_record ? c->max_record : m;
		c->last_io = rc__now();
	}
	/* tp, npending and doneq are stored atomically: rc__fast_eligible reads them unlocked */
	__atomic_store_n(&c->tp, tp, __ATOMIC_RELEASE);
	return st;
}

/* A call's status when (re)connecting failed with st: what the call can report. */
static rc_status rc__connect_status(rc_status st)
{
	switch (st) {
	case RC_NOMEM:
	case RC_TIMEDOUT:
	case RC_TLSFAILED:
	case RC_TLSUNAVAIL:
	case RC_BADREPLY:
		return st;
	default:
		return RC_CANTSEND;
	}
}

/* client.h: whether the connection is under TLS now (under the lock: it may be replaced). */
bool rc_client_tls(rc_client *clnt)
{
	const rc_tls_peer *peer;
	bool on = false;

	if (clnt == NULL)
		return false;
	pthread_mutex_lock(&clnt->mu);
	pthread_mutex_lock(&clnt->smu);
	if (clnt->tp != NULL && clnt->tp->vt->secure != NULL)
		on = clnt->tp->vt->secure(clnt->tp, &peer);
	pthread_mutex_unlock(&clnt->smu);
	pthread_mutex_unlock(&clnt->mu);
	return on;
}

/* A new client of prog, vers over kind, not connected yet (its uri and tls are the caller's
 * to set), or NULL when memory is short. */
static rc_client *rc__client_new(const rc_tp_kind *kind, uint32_t prog, uint32_t vers)
{
	rc_client *c;
	uint32_t x0;

	if ((c = rc__zalloc_lines(sizeof(*c))) == NULL) /* (the fast step's fields: 3 lines) */
		return NULL;
	c->kind = kind;
	c->dgram = (kind->props & RC_TPP_DGRAM) != 0;
	c->prog = prog;
	c->vers = vers;
	c->timeout_ms = RC_DEFAULT_TIMEOUT_MS;
	c->retry_ms = RC_DEFAULT_RETRY_MS;
	c->max_record = RC_DEFAULT_MAX_MESSAGE;
	if (getrandom(&x0, sizeof(x0), GRND_NONBLOCK) != sizeof(x0))
		x0 = (uint32_t)rc__now() ^ ((uint32_t)getpid() << 16);
	atomic_init(&c->xid, x0);
	rc__build_header(c, &c->hdr0, RC_AUTH_NONE, NULL, 0);
	c->hdr = &c->hdr0;
	return c;
}

/* The client's locks, once its transport is there. */
static void rc__client_locks(rc_client *c)
{
	pthread_mutex_init(&c->mu, NULL);
	pthread_mutex_init(&c->smu, NULL);
	rc__cond_init_mono(&c->cv);
}

/* rpc.h: the client's own open, for the layer above (rpcbind.c); the URI has its port. */
rc_status rc__client_open(rc_client **out, const rc_uri *u, uint32_t prog, uint32_t vers)
{
	rc_client *c;
	rc_status st;

	if (out == NULL)
		return RC_INVAL;
	*out = NULL;
	if (u == NULL)
		return RC_INVAL;
	if ((c = rc__client_new(rc__tp_find(u->scheme), prog, vers)) == NULL)
		return RC_NOMEM;
	c->uri = *u; /* u->tls, if set, is the client's from here on (freed by destroy) */
	if ((st = rc__connect(c, rc__now() + (int64_t)c->timeout_ms * 1000000)) != RC_OK) {
		free(c); /* u->tls stays the caller's */
		return st;
	}
	rc__client_locks(c);
	*out = c;
	return RC_OK;
}

/* rpc.h: a client over a transport made elsewhere (a server connection's back channel). */
rc_status rc__client_open_tp(rc_client **out, const rc_tp_kind *kind, rc_tp *tp, uint32_t prog,
                             uint32_t vers)
{
	rc_client *c;

	if ((c = rc__client_new(kind, prog, vers)) == NULL) {
		*out = NULL;
		return RC_NOMEM;
	}
	snprintf(c->uri.scheme, sizeof(c->uri.scheme), "%s", kind->scheme);
	c->uri.port = -1;
	c->tp = tp;
	c->max_msg = tp->max_msg > c->max_record ? c->max_record : tp->max_msg;
	c->last_io = rc__now();
	rc__client_locks(c);
	*out = c;
	return RC_OK;
}

/* rpc.h */
bool rc__client_back(const rc_client *c)
{
	return (c->kind->props & RC_TPP_BACK) != 0;
}

rc_status rc_client_set_timeout(rc_client *clnt, uint32_t total_ms)
{
	if (clnt == NULL || total_ms > RC_MAX_TIMEOUT_MS)
		return RC_INVAL;
	clnt->timeout_ms = total_ms ? total_ms : RC_DEFAULT_TIMEOUT_MS;
	return RC_OK;
}

/* client.h */
rc_status rc_client_set_resend(rc_client *clnt, bool on)
{
	if (clnt == NULL)
		return RC_INVAL;
	if (clnt->dgram)
		return RC_NOTSUPP; /* a datagram client retransmits with the same xid anyway */
	clnt->resend = on;
	return RC_OK;
}

rc_status rc_client_set_retry(rc_client *clnt, uint32_t initial_ms)
{
	if (clnt == NULL || initial_ms > 3600u * 1000)
		return RC_INVAL;
	clnt->retry_ms = initial_ms ? initial_ms : RC_DEFAULT_RETRY_MS;
	return RC_OK;
}

/* client.h: the cap on both directions; a connected transport takes the new one at once. */
rc_status rc_client_set_max_message(rc_client *clnt, size_t bytes)
{
	if (bytes == 0)
		bytes = RC_DEFAULT_MAX_MESSAGE;
	if (clnt == NULL || bytes < 1024 || (uint64_t)bytes > ((uint64_t)4 << 30))
		return RC_INVAL;
	pthread_mutex_lock(&clnt->mu);
	clnt->max_record = bytes;
	if (clnt->tp != NULL) {
		if (clnt->tp->vt->set_max_record != NULL)
			clnt->tp->vt->set_max_record(clnt->tp, bytes);
		clnt->max_msg = clnt->tp->max_msg > bytes ? bytes : clnt->tp->max_msg;
	}
	pthread_mutex_unlock(&clnt->mu);
	return RC_OK;
}

size_t rc_client_get_max_message(const rc_client *clnt)
{
	return clnt ? clnt->max_record : 0;
}

uint32_t rc_client_get_timeout(const rc_client *clnt)
{
	return clnt ? clnt->timeout_ms : 0;
}

uint32_t rc_client_get_retry(const rc_client *clnt)
{
	return clnt ? clnt->retry_ms : 0;
}

rc_status rc_client_set_spin(rc_client *clnt, uint32_t spin_us)
{
	if (clnt == NULL || spin_us > 1000000)
		return RC_INVAL;
	if (clnt->kind->props & RC_TPP_SYNC)
		return RC_NOTSUPP; /* an in-process call is answered before its send returns */
	clnt->spin_us = spin_us;
	if (spin_us > 0)
		atomic_fetch_or_explicit(&clnt->nofast, RC__NOFAST_SPIN, memory_order_relaxed);
	else
		atomic_fetch_and_explicit(&clnt->nofast, ~RC__NOFAST_SPIN, memory_order_relaxed);
	return RC_OK;
}

rc_status rc_client_set_trace(rc_client *clnt, rc_trace_fn fn, void *arg)
{
	if (clnt == NULL)
		return RC_INVAL;
	pthread_mutex_lock(&clnt->mu);
	clnt->trace = fn;
	clnt->trace_arg = arg;
	pthread_mutex_unlock(&clnt->mu);
	return RC_OK;
}

/* Report step pt of call xid now (tracing on). Out of line: the untraced paths stay small. */
static __attribute__((noinline)) void rc__trace(const rc_client *c, rc_trace_point pt,
                                                 uint32_t xid)
{
	c->trace(c->trace_arg, pt, xid, rc__trace_clock());
}

/* ---- completion ------------------------------------------------------------------------- */

/* Take p off the list of calls in flight, if it is on it (under c->mu). */
static void rc__unlink(rc_client *c, rc_async *p)
{
	if (p->state != RC__CALL_INFLIGHT)
		return;
	if (p->prev)
		p->prev->next = p->next;
	else
		c->pending = p->next;
	if (p->next)
		p->next->prev = p->prev;
	p->next = p->prev = NULL;
	p->state = RC__CALL_IDLE;
	if (p->windowed) { /* its place in the credentials' window frees */
		p->windowed = false;
		atomic_fetch_sub(&p->auth->inflight, 1);
	}
	__atomic_store_n(&c->npending, c->npending - 1, __ATOMIC_RELAXED);
}

/* Put p on the list of calls in flight, completing at deadline, first retransmission after
 * retry_ms (under c->mu). */
static void rc__register(rc_client *c, rc_async *p, int64_t now, uint32_t retry_ms)
{
	p->retry_ms = retry_ms;
	p->next_retry = now + (int64_t)retry_ms * 1000000;
	p->st = RC_INPROGRESS;
	p->clnt = c;
	p->next = c->pending;
	p->prev = NULL;
	if (c->pending)
		c->pending->prev = p;
	c->pending = p;
	p->state = RC__CALL_INFLIGHT;
	__atomic_store_n(&c->npending, c->npending + 1, __ATOMIC_RELAXED);
}

/* Add a started call without callback to the client's handles, or take it off (under c->mu):
 * rc_client_destroy orphans the handles still listed. */
static void rc__handle_link(rc_client *c, rc_async *p)
{
	p->handle = true;
	p->hprev = NULL;
	p->hnext = c->handles;
	if (c->handles)
		c->handles->hprev = p;
	c->handles = p;
}

static void rc__handle_unlink(rc_client *c, rc_async *p)
{
	if (!p->handle)
		return;
	if (p->hprev)
		p->hprev->hnext = p->hnext;
	else
		c->handles = p->hnext;
	if (p->hnext)
		p->hnext->hprev = p->hprev;
	p->hnext = p->hprev = NULL;
	p->handle = false;
}

/* Free a started call and the message it kept for retransmission. */
static void rc__free_call(rc_async *p)
{
	free(p->msgblock);
	free(p->wire);
	rc__cl_auth_unref(p->auth);
	free(p);
}

/*
 * A transmission of p, whose credentials are of a flavor that is not plain: msg[0..len) is the
 * call as encoded (its first 24 bytes, xid set, then the arguments); the flavor writes the
 * credential and verifier with a fresh number and wraps the arguments, into p->wire (the last
 * transmission's is freed). The numbers of the last RC__CL_SEQS transmissions stay in p->seqs
 * for the reply's check. Returns the sealed message, or NULL (p->err says why when it can).
 */
static unsigned char *rc__seal(rc_client *c, rc_async *p, const unsigned char *msg, size_t len)
{
	_Alignas(16) unsigned char stack[1024];
	rc__cl_auth *a = p->auth;
	rc__encbuf b;
	rc_xdr x;
	unsigned char *h;
	uint32_t seq;

	rc__encbuf_init(&b, stack, sizeof(stack), c->max_msg);
	rc__encbuf_xdr(&b, &x);
	if ((h = rc_xdr_inline(&x, 24)) == NULL)
		goto fail;
	memcpy(h, msg, 24);
	if (!a->fl->cl_marshal(a, h, &x, &seq, &p->err))
		goto fail;
	if (a->fl->cl_wrap != NULL ? !a->fl->cl_wrap(a, seq, msg + 24, len - 24, &x)
	                           : (len > 24 && !rc_xdr_opaque(&x, (void *)(msg + 24),
	                                                         (uint32_t)(len - 24))))
		goto fail;
	if (p->seqs.n == RC__CL_SEQS) {
		memmove(p->seqs.seq, p->seqs.seq + 1, sizeof(p->seqs.seq[0]) * (RC__CL_SEQS - 1));
		p->seqs.n--;
	}
	p->seqs.seq[p->seqs.n++] = seq;
	free(p->wire);
	p->wire = NULL;
	p->wirelen = rc_xdr_getpos(&x);
	if (b.heap) {
		p->wire = b.data;
		rc__encbuf_detach(&b);
	} else if ((p->wire = malloc(RC_TP_HEADROOM + p->wirelen)) != NULL) {
		memcpy(p->wire, b.data, RC_TP_HEADROOM + p->wirelen);
	} else {
		return NULL;
	}
	return p->wire + RC_TP_HEADROOM;
fail:
	rc__encbuf_free(&b);
	return NULL;
}

/* Wake threads waiting beside the reader, if any (under c->mu). */
static void rc__wake(rc_client *c)
{
	if (c->nwaiters > 0)
		pthread_cond_broadcast(&c->cv);
}

/* Complete p with st, once (under c->mu): the only place a call's outcome is set. Wakes its
 * waiter; queues its callback; frees a handle released while in flight. */
static void rc__complete(rc_client *c, rc_async *p, rc_status st)
{
	if (p->state == RC__CALL_DONE)
		return;
	if (p->renewing) { /* its renewer ends it (rc__renew) */
		if (p->renew_st == RC_OK)
			p->renew_st = st;
		return;
	}
	rc__unlink(c, p);
	p->st = st;
	p->err.status = st;
	p->state = RC__CALL_DONE;
	if (p->has_cb) {
		p->next = NULL;
		if (c->doneq_tail)
			c->doneq_tail->next = p;
		else
			__atomic_store_n(&c->doneq, p, __ATOMIC_RELAXED);
		c->doneq_tail = p;
	} else if (p->released) {
		if (!p->starting) /* (else rc__start frees it as it returns) */
			rc__free_call(p);
		return;
	}
	rc__wake(c);
}

/* What a call that lost its connection to an orderly close says in its detail: that, and its
 * record's size n when it is known (0: not) -- all a client can know of a server that closes the
 * connection on a record over its max_record (RFC 5531 gives it no way to say so). */
static void rc__closed_why(rc_async *p, size_t n)
{
	if (n == 0)
		snprintf(p->err.detail, sizeof(p->err.detail), "the server closed the connection");
	else
		snprintf(p->err.detail, sizeof(p->err.detail),
		         "the server closed the connection after this call's record of %zu bytes, "
		         "unanswered (as a server does on a record over its max_record)", n);
}

/* The status of call p whose connection broke with st (RC_CANTSEND, RC_CANTRECV,
 * RC_TIMEDOUT) and errno e, kept in p's error (none for a timeout): a TLS failure (EPROTO) is
 * RC_TLSFAILED with the transport's reason in p's detail. */
static rc_status rc__broken_status(rc_async *p, rc_status st, int e)
{
	p->err.sys_errno = st == RC_TIMEDOUT ? 0 : e;
	if (st == RC_CANTRECV && e == 0) /* end of stream: no errno to tell it */
		rc__closed_why(p, 0); /* (the fast step's: its size is not kept) */
	if (e != EPROTO)
		return st;
	snprintf(p->err.detail, sizeof(p->err.detail), "%s", rc__tp_detail());
	return RC_TLSFAILED;
}

/* The status of call p whose send failed with r and errno e: RC_MSGTOOLARGE and RC_NOMEM as
 * they are, anything else as rc__broken_status's RC_CANTSEND. */
static rc_status rc__send_status(rc_async *p, rc_status r, int e)
{
	if (r == RC_MSGTOOLARGE || r == RC_NOMEM) {
		p->err.sys_errno = e;
		return r;
	}
	return rc__broken_status(p, RC_CANTSEND, e);
}

/* A write that keeps nothing: rc__call_size's record stream only counts. */
static bool rc__count_write(void *ctx, const void *buf, size_t len)
{
	(void)ctx, (void)buf, (void)len;
	return true;
}

/* The size of a call whose arguments xargs(args) outgrew the encode buffer's cap: hdrlen and
 * the arguments encoded again through a record stream that only counts (0: they do not
 * encode). A failure's path only. */
static size_t rc__call_size(size_t hdrlen, rc_xdrproc xargs, const void *args)
{
	unsigned char buf[2048];
	rc_xdr x;

	if (rc_xdrrec_create(&x, buf, sizeof(buf), rc__count_write, NULL) != RC_OK ||
	    !xargs(&x, (void *)args))
		return 0;
	return hdrlen + rc_xdr_getpos(&x);
}

/* A call of c too large to send: p's detail says which limit -- this client's max message or
 * its transport's (a UDP datagram) -- and both sizes (len 0: sized again from xargs(args)
 * behind a header of hdrlen). Returns RC_MSGTOOLARGE. */
static __attribute__((noinline, cold)) rc_status
rc__toolarge(const rc_client *c, rc_async *p, size_t len, size_t hdrlen, rc_xdrproc xargs,
             const void *args)
{
	size_t limit = c->max_msg;
	bool client = limit >= c->max_record;
	char size[48];

	if (len == 0 && xargs != NULL)
		len = rc__call_size(hdrlen, xargs, args);
	if (len != 0)
		snprintf(size, sizeof(size), "is %zu bytes", len);
	else
		snprintf(size, sizeof(size), "is larger");
	snprintf(p->err.detail, sizeof(p->err.detail),
	         "the call's record %s, over %s of %zu bytes%s", size,
	         client ? "this client's limit" : "the transport's limit", limit,
	         client ? " (rc_client_set_max_message)"
	                : c->dgram ? " (a UDP datagram: use tcp: or unix:)" : "");
	return RC_MSGTOOLARGE;
}

/* Fail every call in flight with st and errno detail err (the connection broke); a TLS
 * failure (err EPROTO: only the TLS layer reports it) becomes RC_TLSFAILED, with the
 * transport's words in each call's detail. */
static void rc__fail_all(rc_client *c, rc_status st, int err)
{
	if (err == EPROTO && st != RC_MSGTOOLARGE)
		st = RC_TLSFAILED;
	while (c->pending) {
		rc_async *p = c->pending;
		c->pending->err.sys_errno = err;
		if (err == EPROTO || err == EDEADLK || st == RC_TOOMANY)
			snprintf(c->pending->err.detail, sizeof(c->pending->err.detail), "%s",
			         rc__tp_detail());
		else if (err == 0 && st == RC_CANTRECV)
			rc__closed_why(p, p->auth && p->wire ? p->wirelen : p->msglen);
		else if (st == RC_MSGTOOLARGE) /* (the stream said how large, over which cap) */
			snprintf(p->err.detail, sizeof(p->err.detail),
			         "the reply's %s: this client's max message "
			         "(rc_client_set_max_message)",
			         rc__tp_detail()[0] ? rc__tp_detail() : "record is over the cap");
		rc__complete(c, c->pending, st);
	}
}

/* Close a stream connection (under c->mu, not as a sender): the next call reconnects. Takes
 * the send lock, so no thread is inside a send on it. Datagram clients keep their socket. */
static void rc__disconnect(rc_client *c)
{
	if (c->tp != NULL && !c->dgram) {
		pthread_mutex_lock(&c->smu);
		c->tp->vt->close(c->tp);
		__atomic_store_n(&c->tp, NULL, __ATOMIC_RELEASE);
		atomic_store(&c->queued, false);
		pthread_mutex_unlock(&c->smu);
	}
}

/*
 * A stream broke under a thread that is not the reader (under c->mu): close it, unless a
 * reader is inside its recv (a blocking call's fast path uses the connection without the
 * lock) -- then shut it down, so that recv fails and the reader closes it itself.
 */
static void rc__break_stream(rc_client *c)
{
	if (atomic_load(&c->reading) && c->tp != NULL)
		c->tp->vt->shutdown(c->tp, true);
	else
		rc__disconnect(c);
}

/* Run the callbacks of completed calls (without the lock held); each handle is freed after
 * its callback returns. */
static void rc__run_callbacks(rc_client *c)
{
	for (;;) {
		rc_async *p;
		pthread_mutex_lock(&c->mu);
		p = c->doneq;
		if (p && p->starting)
			p = NULL; /* its starter still holds it: its callback runs on the next pass */
		if (p) {
			__atomic_store_n(&c->doneq, p->next, __ATOMIC_RELAXED);
			if (c->doneq == NULL)
				c->doneq_tail = NULL;
		}
		pthread_mutex_unlock(&c->mu);
		if (p == NULL)
			return;
		if (p->st == RC_OK) /* rc_client_geterr in the callback: this call's */
			rc__set_lastok(c);
		else
			rc__set_lasterr(c, &p->err);
		p->cb(p, p->st, p->udata);
		rc__free_call(p);
	}
}

/* ---- replies ---------------------------------------------------------------------------- */

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

/* An accepted reply's verifier v, checked through the flavor of p's credentials (a: p->auth,
 * or NULL for plain credentials: the template's): RC_OK, or RC_AUTHERROR with auth_stat
 * AUTH_INVALIDRESP in p->err (as libtirpc's clnt_call). */
static rc_status rc__check_verf(const rc_client *c, rc_async *p, rc__cl_auth *a,
                                const rc__verf *v)
{
	const rc__flavor *fl;
	bool ok;

	if (a != NULL) {
		fl = a->fl;
		ok = fl->cl_validate(a, &p->seqs, v->flavor, v->body, v->len);
	} else {
		fl = __atomic_load_n(&c->hdr, __ATOMIC_ACQUIRE)->fl;
		ok = fl == NULL || rc__cl_plain_verf_ok(fl, v->flavor, v->len);
	}
	if (ok)
		return RC_OK;
	p->err.auth_stat = RC__AUTH_INVALIDRESP;
	snprintf(p->err.detail, sizeof(p->err.detail),
	         "the reply's verifier (flavor %u, %u bytes) is not one %s accepts", v->flavor,
	         v->len, fl->name);
	return RC_AUTHERROR;
}

/* The results of p's SUCCESS reply from x, unwrapped first by its flavor (a: p->auth, or NULL)
 * if that wraps them. */
static bool rc__decode_results(const rc_client *c, rc_async *p, rc__cl_auth *a, rc_xdr *x,
                               const unsigned char *m, size_t len)
{
	const unsigned char *body, *out;
	size_t outn;
	void *owned = NULL;
	rc_xdr y;
	bool ok;

	if (a == NULL || a->fl->cl_unwrap == NULL)
		return p->xres(x, p->res);
	body = m + len - rc_xdr_remaining(x);
	if (!a->fl->cl_unwrap(a, &p->seqs, body, rc_xdr_remaining(x), &out, &outn, &owned))
		return false;
	rc__xdr_decoder(&y, out, outn, rc__budget(c));
	ok = p->xres(&y, p->res);
	free(owned);
	return ok;
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

/* Whether p, just denied with RC_AUTHERROR, is a started call whose credentials' flavor can
 * renew them after this auth_stat, and that was not renewed before (under c->mu). */
static bool rc__renewable(const rc_async *p)
{
	return (p->handle || p->has_cb) && p->msgblock != NULL && !p->renewed && p->auth != NULL &&
	       p->auth->fl->cl_refresh != NULL &&
	       (p->err.auth_stat == RC__AUTH_CREDPROBLEM || p->err.auth_stat == RC__AUTH_CTXPROBLEM);
}

static void rc__send_failed(rc_client *c, const rc_tp *tp, int e);
static void rc__goaway(rc_client *c, const unsigned char *msg, size_t len);
static void rc__resend(rc_client *c);

/* Keep a call the peer sent (under c->mu) for rc__serve_inq; beyond RC__INQ_MAX waiting, or
 * without memory, it is dropped (the peer's call times out, as on a lost datagram). */
static void rc__inq_add(rc_client *c, const unsigned char *msg, size_t len)
{
	rc__inq *q;

	if (c->ninq >= RC__INQ_MAX)
		return;
	if ((q = c->inq_spare) != NULL && q->len >= len)
		c->inq_spare = NULL; /* the last served call's buffer: big enough */
	else if ((q = malloc(sizeof(*q) + (len < RC__INQ_SPARE ? RC__INQ_SPARE : len))) == NULL)
		return;
	q->next = NULL;
	q->len = len;
	memcpy(q->msg, msg, len);
	if (c->inq_tail)
		c->inq_tail->next = q;
	else
		c->inq = q;
	c->inq_tail = q;
	c->ninq++;
	rc__wake(c); /* a waiter beside the reader may serve it */
}

/* A stream send under smu begins: after a fast step's send under way (see fsending). */
static void rc__smu_send(rc_client *c)
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

/* Send a reply to the peer's call on c's stream (rc_reply_fn; headroom before msg), under the
 * send lock; what the socket does not take waits in the output queue (up to RC__OQ_BLOCK, as a
 * started call), flushed by whoever waits or advances next. A failure closes the connection as
 * any failed send does. */
static void rc__inq_reply(void *ctx, unsigned char *msg, size_t len)
{
	rc_client *c = ctx;
	rc_status st = RC_CANTSEND;
	rc_tp *tp;
	int e = 0;

	pthread_mutex_lock(&c->smu);
	tp = c->tp;
	if (tp != NULL) {
		/* queued, not waited for, as a started call's (the peer may be writing to us) */
		unsigned f = tp->vt->outq(tp) < RC__OQ_BLOCK ? RC_TPF_DONTWAIT : 0;
		rc__smu_send(c);
		st = tp->vt->send(tp, msg, len, NULL, c->cork > 0 ? f | RC_TPF_MORE : f);
		e = errno;
		rc__smu_sent(c);
		atomic_store(&c->queued, tp->vt->outq(tp) > 0);
	}
	pthread_mutex_unlock(&c->smu);
	if (st != RC_OK && tp != NULL) {
		pthread_mutex_lock(&c->mu);
		rc__send_failed(c, tp, e);
		pthread_mutex_unlock(&c->mu);
	}
}

/* Answer call m[0..len) (len >= 12) when the client serves nothing: RPC version 2 gets
 * PROG_UNAVAIL, any other RPC_MISMATCH (2, 2). */
static void rc__inq_unavail(rc_client *c, const unsigned char *m, size_t len)
{
	_Alignas(16) unsigned char b[RC_TP_HEADROOM + 24];
	unsigned char *r = b + RC_TP_HEADROOM;
	uint32_t v[6] = {rc__get32(m), RC__REPLY, RC__MSG_ACCEPTED, RC_AUTH_NONE, 0,
	                 RC__PROG_UNAVAIL};

	if (len < 16 || rc__get32(m + 8) != 2) {
		v[2] = RC__MSG_DENIED;
		v[3] = RC__RPC_MISMATCH;
		v[4] = 2;
		v[5] = 2;
	}
	for (int i = 0; i < 6; i++)
		rc__put32(r + 4 * i, v[i]);
	rc__inq_reply(c, r, 24);
}

/* Serve the calls the peer sent (entered and left under c->mu, dropped while each is served,
 * on the calling thread: see rc_client_serve). */
static void rc__serve_inq(rc_client *c)
{
	while (c->inq != NULL) {
		rc__inq *q = c->inq;
		if ((c->inq = q->next) == NULL)
			c->inq_tail = NULL;
		c->ninq--;
		pthread_mutex_unlock(&c->mu);
		if (c->srv != NULL)
			rc__deliver(c->srv, q->msg, q->len, rc__inq_reply, c);
		else
			rc__inq_unavail(c, q->msg, q->len);
		pthread_mutex_lock(&c->mu);
		if (c->inq_spare == NULL && q->len <= RC__INQ_SPARE) {
			q->len = RC__INQ_SPARE; /* (its capacity, while it is the spare) */
			c->inq_spare = q;
		} else {
			free(q);
		}
	}
}

static rc_status rc__read(rc_client *c, int64_t wake, unsigned flags);

/* Read everything that is there, without waiting (under c->mu): up to 1,024 messages, the
 * peer's calls served whenever a quarter of the queue's room is used, before more are read.
 * Returns the status of the read that ended it (RC_AGAIN or RC_TIMEDOUT: nothing more). */
static rc_status rc__read_all(rc_client *c)
{
	rc_status r = RC_OK;

	for (int i = 0; i < 1024 && r == RC_OK; i++) {
		r = rc__read(c, 0, RC_TPF_DONTWAIT);
		if (c->ninq >= RC__INQ_MAX / 4)
			rc__serve_inq(c); /* the peer's calls, before more are read */
	}
	return r;
}

/* A blocking call has its reply, on a client that serves (under c->mu): its receive may have
 * read the peer's calls along with it into the transport's buffer, which no descriptor would
 * announce now (the socket has nothing more) -- read and serve them on this thread, as
 * rc_client_advance does, unless a reader is at work (it sees them). */
static __attribute__((noinline)) void rc__serve_ahead_locked(rc_client *c)
{
	if (rc__ahead_locked(c))
		(void)rc__read_all(c);
	rc__serve_inq(c);
}

static __attribute__((noinline)) void rc__serve_ahead(rc_client *c)
{
	pthread_mutex_lock(&c->mu);
	rc__serve_ahead_locked(c);
	pthread_mutex_unlock(&c->mu);
}

/* Handle one incoming message (under c->mu): decode it into the call its xid names and
 * complete that call; a call from the peer (stream) is queued to be served (rc__serve_inq);
 * anything else (stale, foreign, too short) is dropped. */
static void rc__handle(rc_client *c, const unsigned char *msg, size_t len)
{
	rc_async *p;
	rc_status st;
	uint32_t xid;

	if (len < 12)
		return; /* too short to be a reply: ignore */
	if (rc__get32(msg + 4) == RC__CALL) {
		if (!c->dgram)
			rc__inq_add(c, msg, len); /* the peer calls us: served outside the lock */
		return;
	}
	xid = rc__get32(msg);
	for (p = c->pending; p != NULL; p = p->next)
		if (p->xid == xid)
			break;
	if (p == NULL) {
		if (xid == c->notice_xid && xid != 0)
			rc__goaway(c, msg, len); /* the server drains (rc_client_set_failover) */
		return; /* stale (timed out, cancelled) or foreign: drop */
	}
	if (c->trace != NULL)
		rc__trace(c, RC_TP_REPLY, xid);
	st = rc__decode(c, p, msg, len, true);
	if (st == RC_BADREPLY && c->dgram)
		return; /* keep waiting for the real reply */
	if (c->trace != NULL)
		rc__trace(c, RC_TP_DECODED, xid);
	if (__builtin_expect(st == RC_AUTHERROR, 0) && rc__renewable(p)) {
		/* a started call denied for a credential problem, the first time: it waits for its
		 * credentials to be renewed outside the lock, then goes again (rc__renew) */
		rc__unlink(c, p);
		p->renewing = p->renewed = true;
		p->renew_why = p->err.auth_stat;
		p->renew_st = RC_OK;
		p->next = c->renew;
		c->renew = p;
		rc__wake(c);
		return;
	}
	rc__complete(c, p, st);
}

/* Retransmit due datagram calls and expire calls past their deadline (under c->mu); return
 * the earliest time something is due for any call. */
static int64_t rc__timers(rc_client *c, int64_t now)
{
	int64_t next = INT64_MAX;
	rc_async *p, *n;
	bool expired = false;

	for (p = c->pending; p != NULL; p = n) {
		n = p->next;
		if (now >= p->deadline) {
			rc__complete(c, p, RC_TIMEDOUT);
			expired = true;
			continue;
		}
		if (c->dgram && now >= p->next_retry && c->tp != NULL) {
			/* a flavor that numbers transmissions: sealed again, with a fresh number */
			unsigned char *m = p->auth == NULL ? p->msg : rc__seal(c, p, p->msg, p->msglen);
			size_t mlen = p->auth == NULL ? p->msglen : p->wirelen;
			if (m != NULL &&
			    c->tp->vt->send(c->tp, m, mlen, NULL, RC_TPF_DONTWAIT) == RC_CANTSEND &&
			    errno == ECONNREFUSED) {
				/* ICMP: nothing listens there. Each failed send clears the error the
				 * previous one raised, so act on it here: every call fails now. */
				rc__fail_all(c, RC_CANTRECV, ECONNREFUSED);
				return now;
			}
			p->retry_ms = p->retry_ms * 2 > RC__MAX_RETRY_MS ? RC__MAX_RETRY_MS
			                                                 : p->retry_ms * 2;
			p->next_retry = now + (int64_t)p->retry_ms * 1000000;
		}
		if (p->deadline < next)
			next = p->deadline;
		if (c->dgram && p->next_retry < next)
			next = p->next_retry;
	}
	/* The last call on a stream gave up with part of a record read: the rest belongs to a
	 * call nobody waits for, and could hold the next one up for long (a huge or endless
	 * reply). Start the next call on a fresh connection instead. */
	if (expired && !c->dgram && c->pending == NULL && !atomic_load(&c->reading) &&
	    c->tp != NULL && c->tp->vt->buffered(c->tp) > 0)
		rc__disconnect(c);
	return next;
}

/*
 * What the reader does with what the transport gave it (under c->mu): hand a message to its
 * call, or fail the calls a broken connection strands; then give up the reader's role.
 */
static void rc__after_recv(rc_client *c, rc_status st, void *msg, size_t len, int e)
{
	if (st == RC_OK) {
		c->last_io = rc__now();
		rc__handle(c, msg, len);
	} else if (st == RC_CANTRECV && e == EDEADLK) {
		/* a back channel refused to wait on the one thread that reads its replies: the
		 * calls fail, saying why, and the connection stays */
		rc__fail_all(c, RC_CANTRECV, e);
	} else if (st == RC_TOOMANY) {
		/* a back channel whose server stopped reading at a limit: the calls in flight
		 * could get no reply; they fail, saying which limit, and the connection stays */
		rc__fail_all(c, RC_TOOMANY, e);
	} else if (st == RC_CLOSED || st == RC_CANTRECV || st == RC_MSGTOOLARGE) {
		/* (a TLS failure, errno EPROTO, fails them with RC_TLSFAILED: rc__fail_all) */
		if (!c->dgram) {
			rc__fail_all(c, st == RC_MSGTOOLARGE ? RC_MSGTOOLARGE : RC_CANTRECV, e);
			rc__disconnect(c);
		} else if (c->pending) {
			/* ICMP unreachable on a connected UDP socket: the server is not there. */
			rc__fail_all(c, RC_CANTRECV, e);
		}
	}
	/* the role goes last: msg is the transport's until the next receive, and a fast step
	 * takes the role without c->mu -- its receive would reuse msg under rc__handle */
	c->reading = false;
	rc__wake(c);
}

/*
 * Read from the transport as the reader (entered and left under c->mu, which it drops while
 * reading). flags 0 blocks up to wake; RC_TPF_DONTWAIT reads what is there. Returns the
 * transport status of the last read (RC_TIMEDOUT: an in-process transport had no reply).
 */
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

/* c's receive batch, made on first use (the reader's role held); NULL when memory is short. */
static rc__rxb *rc__rxb_get(rc_client *c)
{
	rc__rxb *b = c->rxb;

	if (b != NULL)
		return b;
	if ((b = malloc(sizeof(*b) + (size_t)RC_TP_BATCH * RC__DGRAM_SLOT)) == NULL)
		return NULL;
	b->want = 2;
	for (unsigned k = 0; k < RC_TP_BATCH; k++) {
		b->v[k].buf = b->bytes + (size_t)k * RC__DGRAM_SLOT;
		b->v[k].cap = RC__DGRAM_SLOT;
	}
	return c->rxb = b;
}

/*
 * The reader's non-blocking read on a datagram client that can batch: every reply waiting,
 * up to the batch's size, with one system call, each handled under c->mu (entered without
 * it, left with it held, as rc__read). Returns the receive's status, except RC_AGAIN after
 * replies were handled when another read would find none: the batch came back short of
 * what it asked (the socket was empty) or no call waits for a reply any more -- the caller
 * stops reading without a receive that says EAGAIN.
 */
static rc_status rc__read_batch(rc_client *c, rc_tp *tp, rc__rxb *b)
{
	unsigned got = 0, want = b->want;
	rc_status st = tp->vt->recv_batch(tp, b->v, want, &got, RC_TPF_DONTWAIT);
	int e = st == RC_CANTRECV ? errno : 0;

	pthread_mutex_lock(&c->mu);
	if (st != RC_OK) {
		rc__after_recv(c, st, NULL, 0, e);
		return st;
	}
	b->want = 2 * got > RC_TP_BATCH ? RC_TP_BATCH : 2 * got;
	for (unsigned k = 0; k + 1 < got; k++)
		rc__handle(c, b->v[k].buf, b->v[k].len);
	rc__after_recv(c, st, b->v[got - 1].buf, b->v[got - 1].len, 0); /* the last; wakes */
	if (got < want || c->npending == 0)
		return RC_AGAIN; /* drained (pieces still held: rc__tp_ahead says so to the loop) */
	return st;
}

static rc_status rc__read(rc_client *c, int64_t wake, unsigned flags)
{
	rc_tp *tp = c->tp;
	rc_status st;
	void *msg;
	size_t len;
	int e;

	bool idle = false;

	if (tp == NULL || !atomic_compare_exchange_strong(&c->reading, &idle, true))
		return RC_AGAIN;
	if (c->retired != NULL)
		rc__free_retired(c); /* the role held: no fast path is copying a template */
	pthread_mutex_unlock(&c->mu);
	if (flags == RC_TPF_DONTWAIT && c->dgram && tp->vt->recv_batch != NULL) {
		rc__rxb *b = rc__rxb_get(c);
		if (b != NULL)
			return rc__read_batch(c, tp, b);
	}
	if (flags == 0) {
		int64_t ns = wake - rc__now();
		int ms = ns <= 0 ? 1 : (int)((ns + 999999) / 1000000);
		if (c->spin_us > 0) {
			int64_t until = rc__now() + (int64_t)c->spin_us * 1000;
			do
				st = tp->vt->recv(tp, &msg, &len, NULL, RC_TPF_DONTWAIT);
			while (st == RC_AGAIN && rc__now() < until);
			if (st != RC_AGAIN)
				goto got;
		}
		if (c->kind->props & RC_TPP_SYNC) {
			/* in-process: the reply is queued by now, or -- if the server deferred the
			 * call -- owed, and this waits for it up to ms; none now and none owed means
			 * none ever */
			rc__tp_set_rcvtimeo(tp, ms);
			st = tp->vt->recv(tp, &msg, &len, NULL, 0);
			if (st == RC_AGAIN && rc__now() < wake)
				st = RC_TIMEDOUT; /* back before wake: nothing owed, no reply ever */
			goto got; /* (RC_AGAIN at wake: the caller looks at its deadlines again) */
		}
		rc__tp_set_rcvtimeo(tp, ms);
	}
	st = tp->vt->recv(tp, &msg, &len, NULL, flags);
got:
	e = st == RC_CANTRECV || st == RC_TOOMANY ? errno : 0;
	pthread_mutex_lock(&c->mu);
	rc__after_recv(c, st, msg, len, e);
	return st;
}

/* ---- sending ---------------------------------------------------------------------------- */

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

/* Send what c's cork queue holds (under c->smu): send_batch, as many system calls as the
 * kernel takes; what the socket refuses (its buffer full) is as if lost, and retransmission
 * covers it, as for a single send. */
static void rc__dq_flush(rc_client *c)
{
	rc__dq *q = c->dq;
	unsigned sent;

	if (q == NULL || q->n == 0)
		return;
	if (c->tp != NULL)
		(void)c->tp->vt->send_batch(c->tp, q->v, q->n, &sent);
	q->n = 0;
	q->used = 0;
}

/* If c is corked, queue a copy of the datagram msg[0..len) to leave at the uncork, and say
 * true; false (send it now) when not corked, too big for the queue, or memory is short.
 * Started calls only: a blocking call made inside a callback waits for its reply, so its
 * request must go at once. */
static bool rc__dq_add(rc_client *c, const unsigned char *msg, size_t len)
{
	rc__dq *q;
	bool queued = false;

	pthread_mutex_lock(&c->smu);
	if (c->cork > 0 && len <= RC__DQ_BYTES) {
		if ((q = c->dq) == NULL && (q = c->dq = calloc(1, sizeof(*q))) == NULL)
			goto out;
		if (q->n == RC_TP_BATCH || len > RC__DQ_BYTES - q->used)
			rc__dq_flush(c);
		memcpy(q->bytes + q->used, msg, len);
		q->v[q->n].buf = q->bytes + q->used;
		q->v[q->n].len = len;
		q->v[q->n].peer.len = 0; /* the connected server */
		q->n++;
		q->used += (len + 7) & ~(size_t)7;
		if (q->used > RC__DQ_BYTES)
			q->used = RC__DQ_BYTES;
		queued = true;
	}
out:
	pthread_mutex_unlock(&c->smu);
	return queued;
}

/*
 * Make sure a stream is connected (under c->mu; drops it while connecting), and probe one that
 * sat idle, unless a reader holds it. One thread connects, by `deadline`; others wait for it.
 * RC_OK, or the failure (RC_TIMEDOUT, RC_CANTSEND, RC_UNKNOWNHOST, RC_NOMEM) with errno in
 * *err.
 */
static rc_status rc__ensure(rc_client *c, int64_t deadline, int *err)
{
	if (c->tp != NULL && !c->dgram && c->npending == 0 && !atomic_load(&c->reading) &&
	    rc__now() - c->last_io > RC__IDLE_CHECK_NS && c->tp->vt->hung_up(c->tp))
		rc__disconnect(c); /* the server closed it: reconnect below */
	while (c->tp == NULL) {
		rc_status st;
		int e;

		if (c->connecting) { /* another thread connects: wait for it, up to deadline */
			struct timespec ts = {(time_t)(deadline / 1000000000),
			                      (long)(deadline % 1000000000)};
			if (rc__now() >= deadline) {
				*err = ETIMEDOUT;
				return RC_TIMEDOUT;
			}
			atomic_fetch_add(&c->nwaiters, 1);
			pthread_cond_timedwait(&c->cv, &c->mu, &ts);
			atomic_fetch_sub(&c->nwaiters, 1);
			continue;
		}
		c->connecting = true;
		pthread_mutex_unlock(&c->mu);
		st = rc__connect(c, deadline);
		e = errno;
		pthread_mutex_lock(&c->mu);
		c->connecting = false;
		pthread_cond_broadcast(&c->cv);
		if (st != RC_OK) {
			*err = e;
			return st;
		}
	}
	return RC_OK;
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

/* Encode a call for proc into b: the header template (copied under the lock) then the
 * arguments. RC_OK with *len; RC_MSGTOOLARGE, RC_CANTENCODEARGS, RC_NOMEM. */
static rc_status rc__encode(rc_client *c, rc_async *p, rc__encbuf *b, uint32_t proc,
                            rc_xdrproc xargs, const void *args, size_t *len)
{
	rc_xdr x;
	unsigned char *h;
	size_t hdrlen;

	rc__encbuf_xdr(b, &x);
	pthread_mutex_lock(&c->mu);
	h = rc_xdr_inline(&x, hdrlen = c->hdr->len);
	if (h != NULL) {
		rc__hdr_put(h, c->hdr, proc);
		if ((p->auth = c->hdr->auth) != NULL) /* sealed at each transmission (rc__seal) */
			rc__cl_auth_ref(p->auth);
	}
	pthread_mutex_unlock(&c->mu);
	if (h == NULL)
		return b->toolarge ? RC_MSGTOOLARGE : RC_NOMEM;
	if (!xargs(&x, (void *)args))
		return b->toolarge ? rc__toolarge(c, p, 0, hdrlen, xargs, args) : RC_CANTENCODEARGS;
	*len = rc_xdr_getpos(&x);
	return RC_OK;
}

/* Send queued stream output, waiting at most timeout_ms (0: not at all; negative: no limit).
 * Under c->smu. RC_OK (nothing left), RC_AGAIN (some left), RC_CANTSEND (errno kept). */
static rc_status rc__flush_locked(rc_client *c, int timeout_ms)
{
	rc_tp *tp = c->tp;
	rc_status st;

	if (tp == NULL || tp->vt->flush == NULL)
		return RC_OK;
	rc__smu_send(c);
	st = tp->vt->flush(tp, timeout_ms);
	atomic_store(&c->queued, tp->vt->outq(tp) > 0);
	rc__smu_sent(c);
	return st;
}

/* A send on the stream failed under a thread that is not the reader: fail the calls in flight
 * on that connection and close it (under c->mu). */
static void rc__send_failed(rc_client *c, const rc_tp *tp, int e)
{
	if (!c->dgram && c->tp == tp && tp != NULL) {
		rc__fail_all(c, RC_CANTSEND, e);
		rc__break_stream(c);
	}
}

/*
 * Wait (under c->mu) until p's credentials have room in their window for one more call in
 * flight (rc__cl_auth.window), reading replies meanwhile as a blocking call does -- the
 * thread that starts calls may be the only one that reads -- and serving the calls the peer
 * makes on the connection (rc_client_serve: the replies that free the window may wait on
 * them), or until p's deadline: RC_TIMEDOUT. A started call beyond the window so waits in
 * rc_call_start; a call is never sent numbered past what the server's window takes.
 */
static rc_status rc__window_wait(rc_client *c, rc_async *p)
{
	rc__cl_auth *a = p->auth;

	while (atomic_load(&a->inflight) >= atomic_load(&a->window)) {
		int64_t now = rc__now();
		if (now >= p->deadline) {
			snprintf(p->err.detail, sizeof(p->err.detail),
			         "%s: the server's window of %u calls stayed full", a->fl->name,
			         (unsigned)atomic_load(&a->window));
			return RC_TIMEDOUT;
		}
		if (c->inq != NULL) {
			rc__serve_inq(c); /* the peer's calls (lets go of mu while each is served) */
		} else if (!atomic_load(&c->reading) && c->tp != NULL) {
			(void)rc__read(c, p->deadline, 0); /* (lets go of mu while it reads) */
		} else {
			struct timespec ts = {(time_t)(p->deadline / 1000000000),
			                      (long)(p->deadline % 1000000000)};
			atomic_fetch_add(&c->nwaiters, 1);
			pthread_cond_timedwait(&c->cv, &c->mu, &ts);
			atomic_fetch_sub(&c->nwaiters, 1);
		}
		if (c->tp == NULL)
			return RC_CANTRECV; /* the connection broke meanwhile */
	}
	return RC_OK;
}

/*
 * A client that serves the peer's calls (rc_client_serve), about to start p with its stream's
 * output queue past RC__OQ_BLOCK: wait (under c->mu, dropped meanwhile) until the queue is
 * under it, flushing it, and reading and serving the peer's calls as they come -- the peer
 * may be waiting on their replies before it reads what we send -- or until p's deadline:
 * RC_TIMEDOUT with a detail. RC_OK; RC_CANTSEND if the connection broke (its calls failed).
 */
static rc_status rc__outq_wait(rc_client *c, rc_async *p)
{
	for (;;) {
		rc_tp *tp = c->tp;
		rc_status st;
		size_t q;
		int e;

		if (tp == NULL)
			return RC_CANTSEND;
		if (c->inq != NULL) {
			rc__serve_inq(c);
			continue;
		}
		pthread_mutex_unlock(&c->mu);
		pthread_mutex_lock(&c->smu);
		st = c->tp == tp ? rc__flush_locked(c, 0) : RC_CANTSEND;
		e = errno;
		q = c->tp == tp ? tp->vt->outq(tp) : 0;
		pthread_mutex_unlock(&c->smu);
		pthread_mutex_lock(&c->mu);
		if (st == RC_CANTSEND) {
			rc__send_failed(c, tp, e);
			return RC_CANTSEND;
		}
		if (q < RC__OQ_BLOCK)
			return RC_OK;
		if (rc__now() >= p->deadline) {
			snprintf(p->err.detail, sizeof(p->err.detail),
			         "the connection's output queue stayed over %zu bytes: the peer reads "
			         "nothing", RC__OQ_BLOCK);
			return RC_TIMEDOUT;
		}
		if (!atomic_load(&c->reading)) {
			/* wait for room to write or for the peer's calls, for at most 10 ms */
			struct pollfd pf = {rc__tp_pollfd(tp), POLLIN | POLLOUT, 0};
			pthread_mutex_unlock(&c->mu);
			(void)poll(&pf, 1, 10);
			pthread_mutex_lock(&c->mu);
			if ((pf.revents & ~POLLOUT) != 0 && c->tp == tp)
				(void)rc__read_all(c);
		} else {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += 10000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			atomic_fetch_add(&c->nwaiters, 1);
			pthread_cond_timedwait(&c->cv, &c->mu, &ts);
			atomic_fetch_sub(&c->nwaiters, 1);
		}
	}
}

/*
 * Start p: connect if needed (by p->deadline), give it an xid, register it as in flight and
 * send msg[0..len) (headroom before msg). flags RC_TPF_DONTWAIT: a started call, which does not
 * wait for the socket (a datagram that does not fit is as if lost; stream output is queued,
 * up to RC__OQ_BLOCK bytes). On failure p is not in flight and the status says why.
 */
static rc_status rc__start(rc_client *c, rc_async *p, unsigned char *msg, size_t len,
                           unsigned flags)
{
	rc_status st;
	int64_t now = rc__now();
	int err = 0;
	rc_tp *tp;

	pthread_mutex_lock(&c->mu);
	if ((st = rc__ensure(c, p->deadline, &err)) != RC_OK) {
		pthread_mutex_unlock(&c->mu);
		p->err.sys_errno = err;
		snprintf(p->err.detail, sizeof(p->err.detail), "%s", rc__tp_detail());
		return rc__connect_status(st);
	}
	if (len > c->max_msg) {
		pthread_mutex_unlock(&c->mu);
		return rc__toolarge(c, p, len, 0, NULL, NULL);
	}
	if (p->auth != NULL && atomic_load(&p->auth->window) != 0 &&
	    (st = rc__window_wait(c, p)) != RC_OK) {
		pthread_mutex_unlock(&c->mu);
		return st;
	}
	if (__builtin_expect(c->srv != NULL, 0) && !c->dgram && (flags & RC_TPF_DONTWAIT) &&
	    atomic_load(&c->queued) && (st = rc__outq_wait(c, p)) != RC_OK) {
		pthread_mutex_unlock(&c->mu);
		return st;
	}
	p->xid = p->resend_xid != 0 ? p->resend_xid /* (the same call again: rc__call) */
	                            : atomic_fetch_add_explicit(&c->xid, 1, memory_order_relaxed) + 1;
	rc__put32(msg, p->xid);
	p->msg = msg; /* (as encoded: what a retransmission starts from) */
	p->msglen = len;
	if (p->auth != NULL) { /* credentials of a flavor that is not plain: seal it */
		if ((msg = rc__seal(c, p, msg, len)) == NULL) {
			pthread_mutex_unlock(&c->mu);
			if (p->err.detail[0] == '\0')
				snprintf(p->err.detail, sizeof(p->err.detail),
				         "%s could not seal the call", p->auth->fl->name);
			return RC_AUTHERROR;
		}
		len = p->wirelen;
		if (len > c->max_msg) {
			pthread_mutex_unlock(&c->mu);
			return rc__toolarge(c, p, len, 0, NULL, NULL); /* (sealed: its size grew) */
		}
	}
	if (c->trace != NULL && p->tr_begin != 0) {
		c->trace(c->trace_arg, RC_TP_CALL_BEGIN, p->xid, p->tr_begin);
		c->trace(c->trace_arg, RC_TP_ENCODED, p->xid, p->tr_encoded);
	}
	{
		int64_t left = (p->deadline - now) / 1000000;
		rc__register(c, p, now, (int64_t)c->retry_ms < left ? c->retry_ms
		                                                     : (uint32_t)(left > 0 ? left : 0));
	}
	if (p->auth != NULL && atomic_load(&p->auth->window) != 0) {
		p->windowed = true; /* (rc__window_wait found room; mu held since) */
		atomic_fetch_add(&p->auth->inflight, 1);
	}
	p->starting = true;
	tp = c->tp;
	pthread_mutex_unlock(&c->mu);
	if (c->dgram && (flags & RC_TPF_DONTWAIT) && tp->vt->send_batch != NULL &&
	    rc__dq_add(c, msg, len)) {
		st = RC_OK; /* corked: leaves with the others at the uncork (rc__dq_flush) */
	} else if (c->dgram || (c->kind->props & RC_TPP_SYNC)) {
		/* datagrams need no send lock; in-process dispatch runs without our lock */
		st = tp->vt->send(tp, msg, len, NULL, c->dgram ? (flags & RC_TPF_DONTWAIT) : 0);
		if (st == RC_AGAIN)
			st = RC_OK; /* socket buffer full: as if lost; retransmission covers it */
	} else {
		unsigned f = 0;
		pthread_mutex_lock(&c->smu);
		if (c->tp != tp) {
			st = RC_CANTSEND; /* the connection broke meanwhile (its calls failed) */
			errno = ECONNRESET;
		} else {
			if (c->cork > 0)
				f |= RC_TPF_MORE;
			if ((flags & RC_TPF_DONTWAIT) && tp->vt->outq(tp) < RC__OQ_BLOCK)
				f |= RC_TPF_DONTWAIT;
			rc__smu_send(c);
			st = tp->vt->send(tp, msg, len, NULL, f);
			atomic_store(&c->queued, tp->vt->outq(tp) > 0);
			rc__smu_sent(c);
		}
		pthread_mutex_unlock(&c->smu);
	}
	{
		int e = errno;
		if (st == RC_OK && c->trace != NULL)
			rc__trace(c, RC_TP_SENT, p->xid);
		pthread_mutex_lock(&c->mu);
		p->starting = false;
		if (st != RC_OK && p->state == RC__CALL_DONE) {
			/* another thread completed it meanwhile (e.g. the connection broke): that
			 * completion stands, and its callback will run */
			st = RC_OK;
		} else if (st != RC_OK && p->resend) {
			st = RC_OK; /* its server drained meanwhile: it goes again (rc__resend) */
		} else if (st == RC_TOOMANY) {
			/* refused by the transport for now (a back channel whose server stopped
			 * reading at a limit): this call fails, saying why; the connection stays */
			rc__unlink(c, p);
			snprintf(p->err.detail, sizeof(p->err.detail), "%s", rc__tp_detail());
		} else if (st != RC_OK) {
			rc__unlink(c, p);
			rc__send_failed(c, tp, e);
			st = rc__send_status(p, st, e);
		}
		if (p->state == RC__CALL_DONE && p->released && !p->has_cb) {
			rc__free_call(p); /* released while it was being sent again (rc__renew) */
			st = RC_OK;
		}
		pthread_mutex_unlock(&c->mu);
	}
	return st;
}

/*
 * Renew the credentials of the started calls on c's renew list and send each again (without
 * c->mu; a thread that may block: rc_client_advance, rc_async_wait). The calls were denied for
 * a credential problem (rc__handle); the flavor renews their credentials once -- RPCSEC_GSS
 * makes a new context with calls on this client -- and each goes again as it was encoded,
 * with a new xid, sealed anew. A call whose credentials could not be renewed, or that was
 * released or cancelled meanwhile, ends as that says.
 */
static void rc__renew(rc_client *c)
{
	rc_async *list, *p, *n;
	rc__cl_auth *a;
	bool ok;

	pthread_mutex_lock(&c->mu);
	list = c->renew;
	c->renew = NULL;
	pthread_mutex_unlock(&c->mu);
	if (list == NULL)
		return;
	a = list->auth;
	ok = a->fl->cl_refresh(a, list->renew_why); /* (may make calls on c) */
	for (p = list; p != NULL; p = n) {
		rc_status st;
		n = p->next;
		p->next = NULL;
		pthread_mutex_lock(&c->mu);
		p->renewing = false;
		st = p->renew_st != RC_OK ? p->renew_st : !ok || p->auth != a ? RC_AUTHERROR : RC_OK;
		pthread_mutex_unlock(&c->mu);
		if (st == RC_OK) {
			free(p->wire); /* (sealed again by rc__start) */
			p->wire = NULL;
			if ((st = rc__start(c, p, p->msg, p->msglen, RC_TPF_DONTWAIT)) == RC_OK)
				continue; /* in flight again (or done, and freed if it was released) */
		}
		pthread_mutex_lock(&c->mu);
		rc__complete(c, p, st); /* (RC_AUTHERROR: its error from the denial stands) */
		pthread_mutex_unlock(&c->mu);
	}
	rc__run_callbacks(c);
}

/* Send what the transport queued before waiting for replies to it (under c->mu, dropped
 * meanwhile), waiting at most until wake. A failure fails the calls in flight. */
static void rc__drain_output(rc_client *c, int64_t wake)
{
	int64_t ns = wake - rc__now();
	int ms = ns <= 0 ? 0 : ns >= (int64_t)INT32_MAX * 1000000 ? -1 : (int)(ns / 1000000);
	rc_status st;
	rc_tp *tp;
	int e;

	pthread_mutex_unlock(&c->mu);
	pthread_mutex_lock(&c->smu);
	tp = c->tp;
	st = rc__flush_locked(c, ms);
	e = errno;
	pthread_mutex_unlock(&c->smu);
	pthread_mutex_lock(&c->mu);
	if (st == RC_CANTSEND)
		rc__send_failed(c, tp, e);
}

/* Wait for p as the reader or beside it (under c->mu), until it completes or `until`. */
static void rc__drive(rc_client *c, rc_async *p, int64_t until)
{
	while (p->state != RC__CALL_DONE) {
		int64_t now, wake;
		if (__builtin_expect(c->resend_due, 0)) {
			rc__resend(c); /* after a drain's notice: on a new connection */
			continue;
		}
		if (c->inq != NULL) {
			rc__serve_inq(c); /* the peer's calls, on this thread (rc_client_serve) */
			continue;
		}
		now = rc__now();
		wake = rc__timers(c, now);
		if (p->state == RC__CALL_DONE || now >= until)
			break;
		if (until < wake)
			wake = until;
		if (c->doneq != NULL && p->has_cb)
			break; /* let the caller run callbacks */
		if (p->renewing)
			break; /* let the caller renew its credentials (rc__renew), without the lock */
		if (atomic_load(&c->queued)) {
			rc__drain_output(c, wake); /* its replies cannot come before it leaves */
			continue;
		}
		if (!c->reading && c->tp != NULL) {
			if (rc__read(c, wake, 0) == RC_TIMEDOUT && p->state != RC__CALL_DONE)
				rc__complete(c, p, RC_TIMEDOUT); /* in-process: no reply was queued */
		} else if (c->tp == NULL) {
			rc__complete(c, p, RC_CANTRECV);
		} else {
			struct timespec ts = {(time_t)(wake / 1000000000), (long)(wake % 1000000000)};
			atomic_fetch_add(&c->nwaiters, 1);
			if (atomic_load(&c->reading))
				pthread_cond_timedwait(&c->cv, &c->mu, &ts);
			atomic_fetch_sub(&c->nwaiters, 1);
		}
	}
}

/* ---- blocking calls --------------------------------------------------------------------- */

/* A reply record read in part (recv_head) while its results decode: rc__pull reads the rest. */
typedef struct rc__puller {
	rc_tp *tp;
	const unsigned char *head; /* the record's first byte, as recv_head handed it out */
	int64_t deadline;          /* the call's (rc__now) */
	rc_status r;               /* RC_OK, or the transport's failure (the record is cut) */
	int e;                     /* its errno */
} rc__puller;

/* recv_pull with what is left of the call's time. */
static rc_status rc__puller_read(rc__puller *pl, void *dst, size_t n, void **msg, size_t *len)
{
	int64_t left = (pl->deadline - rc__now()) / 1000000;

	return pl->tp->vt->recv_pull(pl->tp, dst, n, msg, len,
	                             left < 0 ? 0 : left > INT32_MAX ? INT32_MAX : (int)left);
}

/* x_pull of a reply decoded while its record still comes (see rc_xdr): n bytes straight into
 * dst and the rest into the transport, or (dst NULL) the whole record, as the new window. */
static bool rc__pull(rc_xdr *x, void *dst, size_t n)
{
	rc__puller *pl = x->x_ctx;
	size_t at = (size_t)(x->x_pos - pl->head), base = (size_t)(x->x_base - pl->head);
	unsigned char *m;
	void *mv;
	size_t len;

	x->x_pull = NULL;
	x->x_rest = 0;
	pl->r = rc__puller_read(pl, dst, n, &mv, &len);
	if (pl->r != RC_OK) {
		pl->e = errno;
		x->x_pos = x->x_end; /* nothing more to decode */
		return false;
	}
	m = mv;
	if (dst != NULL) {
		x->x_base = x->x_pos = m; /* what follows dst's bytes */
	} else {
		x->x_base = m + base; /* the whole record: the head may have moved */
		x->x_pos = m + at;
	}
	x->x_end = m + len;
	return true;
}

#define RC__KEEP_MAX (((size_t)4 << 20) + 4096) /* an encode buffer a client keeps for good */
#define RC__KEEP_BIG (((size_t)64 << 20) + 4096) /* a bigger one kept while big calls go on */
#define RC__KEEP_BIG_SPARE 64 /* calls under an eighth of a big kept buffer before it goes */

/* The engine's fields of a blocking call (the fast step needs none of them). */
static inline void rc__call_init(rc_async *p)
{
	p->state = RC__CALL_IDLE;
	p->has_cb = p->released = p->handle = p->windowed = false;
	p->renewing = p->renewed = false;
	p->renew_st = RC_OK;
	p->next = p->prev = NULL;
	p->msgblock = NULL;
	p->tr_begin = p->tr_encoded = 0;
	p->auth = NULL; /* (rc__encode takes the credentials' reference, if they seal) */
	p->wire = NULL;
	p->seqs.n = 0;
	p->resend_xid = 0;
}

/* Hand a heap encode buffer, of a call whose message took len bytes, to the client for the next
 * fast-path call (only the holder of the reader's role). A client keeps at most one: up to
 * RC__KEEP_MAX bytes for good, up to RC__KEEP_BIG while big calls go on -- RC__KEEP_BIG_SPARE
 * calls in a row that use less than an eighth of it let it go (the caller frees it). */
static void rc__keep_buffer(rc_client *c, rc__encbuf *b, size_t len)
{
	if (!b->heap || c->fastbuf != NULL || b->cap > RC__KEEP_BIG)
		return;
	if (b->cap > RC__KEEP_MAX) {
		c->big_spare = len < b->cap / 8 ? c->big_spare + 1 : 0;
		if (c->big_spare > RC__KEEP_BIG_SPARE) {
			c->big_spare = 0;
			return;
		}
	}
	c->fastbuf = b->data;
	c->fastcap = b->cap;
	rc__encbuf_detach(b);
}

/* The fast step's connection broke (a send failed, a reply broke off): give up the reader's
 * role and, on a stream, fail the calls other threads have in flight with st (errno e) and
 * close it -- the next call reconnects. */
static void rc__fast_broken(rc_client *c, rc_status st, int e)
{
	pthread_mutex_lock(&c->mu);
	c->reading = false;
	if (!c->dgram) {
		rc__fail_all(c, st, e);
		rc__disconnect(c);
	}
	rc__wake(c);
	pthread_mutex_unlock(&c->mu);
}

/*
 * The fast step's reply came in part: recv_head handed out the head of a big record
 * (*msg, *len), rest bytes still to come, to be read by the call's deadline. If it is p's
 * reply with the usual header, decode the results with their big data read straight into
 * the result's buffers, read the record to its end, and return 1 (*st set). Otherwise
 * complete the record and return 0 (*msg, *len: the whole record, for the usual path). 2:
 * the record broke off (the peer closed, an error, the deadline): the connection is closed
 * (as the engine would), the reader's role given up, *st set -- the call is over. Out of
 * line: the fast step's null calls should not carry it.
 */
static __attribute__((noinline)) int rc__fast_pull(rc_client *c, rc_async *p, rc_tp *tp,
                                                   void **msg, size_t *len, size_t rest,
                                                   int64_t deadline, bool traced, rc_status *st)
{
	rc__puller pl = {tp, *msg, deadline, RC_OK, 0};
	rc_status r;
	rc_xdr x;
	bool ok;
	int e;

	if (*len >= 24 && rc__get32(pl.head) == p->xid && rc__plain_success(pl.head)) {
		if (traced)
			rc__trace(c, RC_TP_REPLY, p->xid);
		rc__xdr_decoder(&x, pl.head + 24, *len - 24, rc__budget(c));
		x.x_rest = rest;
		x.x_pull = rc__pull;
		x.x_ctx = &pl;
		ok = p->xres(&x, p->res);
		if (pl.r == RC_OK && x.x_pull != NULL) { /* never read: read it (and ignore it) */
			void *m;
			size_t l;
			if ((pl.r = rc__puller_read(&pl, NULL, 0, &m, &l)) != RC_OK)
				pl.e = errno;
		}
		if (pl.r == RC_OK) {
			if (!ok)
				rc__err_clear(&p->err);
			*st = ok ? RC_OK : RC_CANTDECODERES;
			return 1;
		}
	} else if ((pl.r = rc__puller_read(&pl, NULL, 0, msg, len)) == RC_OK) {
		return 0;
	} else {
		pl.e = errno;
	}
	/* cut: a timeout leaves the stream out of step as any failure does */
	r = pl.r == RC_AGAIN ? RC_TIMEDOUT : RC_CANTRECV;
	e = pl.r == RC_AGAIN ? ETIMEDOUT : pl.r == RC_CLOSED ? ECONNRESET : pl.e;
	rc__fast_broken(c, RC_CANTRECV, e);
	rc__err_clear(&p->err);
	*st = rc__broken_status(p, r, e);
	return 2;
}

/* Give up the reader's role without the lock (the fast step), waking waiters if any. */
static inline __attribute__((always_inline)) void rc__role_drop(rc_client *c)
{
	atomic_store(&c->reading, false);
	if (atomic_load(&c->nwaiters) > 0) {
		pthread_mutex_lock(&c->mu);
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
	}
}

/*
 * The fast step of a blocking call: nobody else is using the client, so this thread has taken
 * the reader's role (compare-and-swap, without the lock), and it encodes, sends and receives
 * its reply without registering the call or touching the lock. Anything unusual -- a timeout,
 * another call's reply, an error -- hands the call to the engine, registered as in flight.
 * Returns true if the call finished here (*st set, lock not held), false if the caller
 * continues with rc__drive (p is then in flight and c->mu is held).
 */
static inline __attribute__((always_inline)) bool
rc__fast(rc_client *c, rc_async *p, rc__encbuf *b, uint32_t proc, rc_xdrproc xargs,
         const void *args, rc_status *st, int64_t now, const bool traced, uint64_t t0)
{
	rc_tp *tp = c->tp;
	const rc__hdr *hdr = __atomic_load_n(&c->hdr, __ATOMIC_ACQUIRE);
	unsigned char *msg = rc__encbuf_msg(b), *h;
	uint32_t interval;
	size_t len;
	rc_xdr x;
	void *rmsg = NULL;
	size_t rlen = 0;
	rc_status r;
	int e = 0;
	size_t big = 0; /* a call over max_msg: its size (done:) */
	bool ran_out = false; /* a datagram's receive waited its whole interval (general:) */

	/* the reader's role taken and eligibility checked by the caller; a datagram's step has
	 * no time yet (now 0: rc__call) and keeps no last_io (only streams are probed) */
	if (!c->dgram)
		atomic_store_explicit(&c->last_io, now, memory_order_relaxed);
	if (__builtin_expect(c->fastbuf != NULL, 0) && b->max + RC_TP_HEADROOM >= c->fastcap) {
		/* a message that outgrew the stack last time: reuse its heap buffer */
		b->data = c->fastbuf;
		b->cap = c->fastcap;
		b->heap = true;
		c->fastbuf = NULL;
	}
	p->xid = atomic_fetch_add_explicit(&c->xid, 1, memory_order_relaxed) + 1;
	/* the header template; every buffer has room for it (stack: RC__STACK_MSG bytes). A
	 * template is never rewritten, and one replaced is freed only by a holder of the role. */
	h = b->data + RC_TP_HEADROOM;
	rc__hdr_put(h, hdr, proc); /* the engine's header writer */
	rc__put32(h, p->xid);
	if (traced)
		c->trace(c->trace_arg, RC_TP_CALL_BEGIN, p->xid, t0);
	if (xargs == rc_xdr_void) {
		msg = h; /* nothing to encode after the header (b may be the kept heap buffer) */
		len = hdr->len;
	} else {
		/* big opaque/string data goes from the caller's memory on a stream: the caller
		 * waits for this call, so its arguments outlive the send (sendv) */
		b->gather = tp->vt->sendv != NULL;
		rc__encbuf_xdr_at(b, &x, hdr->len);
		if (!xargs(&x, (void *)args)) {
			*st = b->toolarge ? RC_MSGTOOLARGE : RC_CANTENCODEARGS;
			goto done;
		}
		msg = rc__encbuf_msg(b); /* the buffer may have moved to the heap */
		len = (size_t)(x.x_pos - x.x_base);
	}
	if (__builtin_expect(len + (b->gather ? b->gbytes : 0) > c->max_msg, 0)) {
		big = len + (b->gather ? b->gbytes : 0);
		*st = RC_MSGTOOLARGE;
		goto done;
	}
	if (traced)
		rc__trace(c, RC_TP_ENCODED, p->xid);
	/* a stream's other senders -- a started call of another thread's, the reply to a call
	 * the client serves (rc__inq_reply), the flush of a corked batch -- send under smu, and
	 * may start after the idle check above: this send goes only while none of them does
	 * (fsending), or under smu if one does; a datagram needs neither */
	{
		bool locked = false;
		if (!c->dgram) {
			atomic_store(&c->fsending, true);
			if (__builtin_expect(atomic_load(&c->ssending), 0)) {
				atomic_store(&c->fsending, false);
				pthread_mutex_lock(&c->smu);
				locked = true;
			}
		}
		r = !b->gather || b->nseg == 0 ? tp->vt->send(tp, msg, len, NULL, RC_TPF_REPLY_NEXT)
		                               : tp->vt->sendv(tp, msg, len, b->seg, b->nseg, 0);
		if (locked)
			pthread_mutex_unlock(&c->smu);
		else if (!c->dgram)
			atomic_store_explicit(&c->fsending, false, memory_order_release);
	}
	if (traced && r == RC_OK)
		rc__trace(c, RC_TP_SENT, p->xid);
	if (__builtin_expect(r != RC_OK, 0)) {
		e = errno;
		rc__err_clear(&p->err);
		if (r == RC_TOOMANY) { /* refused for now (see rc__start): the connection stays */
			rc__role_drop(c);
			p->err.sys_errno = e;
			snprintf(p->err.detail, sizeof(p->err.detail), "%s", rc__tp_detail());
			*st = RC_TOOMANY;
			return true;
		}
		rc__fast_broken(c, RC_CANTSEND, e);
		*st = rc__send_status(p, r, e);
		return true;
	}
	interval = c->dgram && c->retry_ms < p->retry_ms ? c->retry_ms : p->retry_ms;
	if (__builtin_expect(tp->rcvtimeo_ms != (int)interval, 0))
		rc__tp_set_rcvtimeo(tp, (int)interval);
	if (p->xres != rc_xdr_void && tp->vt->recv_head != NULL) {
		/* a stream: a big reply's results may decode while it comes (rc__fast_pull) */
		size_t rest;
		r = tp->vt->recv_head(tp, &rmsg, &rlen, &rest, 0);
		if (__builtin_expect(r == RC_OK && rest > 0, 0)) {
			int k = rc__fast_pull(c, p, tp, &rmsg, &rlen, rest,
			                      now + (int64_t)p->retry_ms * 1000000, traced, st);
			if (k == 1)
				goto decoded;
			if (k == 2)
				return true;
		}
	} else {
		r = tp->vt->recv(tp, &rmsg, &rlen, NULL, 0);
	}
	/* (shorter, or a call: the engine) */
	if (__builtin_expect(r == RC_OK && rlen >= 24 && rc__get32(rmsg) == p->xid &&
	                         rc__get32((unsigned char *)rmsg + 4) == RC__REPLY,
	                     1)) {
		if (traced)
			rc__trace(c, RC_TP_REPLY, p->xid);
		*st = rc__decode(c, p, rmsg, rlen, false);
		if (__builtin_expect(*st == RC_BADREPLY, 0) && c->dgram)
			goto general; /* mangled datagram: wait for the real reply */
	decoded:
		if (traced)
			rc__trace(c, RC_TP_DECODED, p->xid);
		/* done: keep the buffer (a heap one: the stack's usual one stays), give up the
		 * reader's role without the lock (see rc_client.reading: the atomic store
		 * publishes fastbuf too) */
		bool ahead = __builtin_expect(c->srv != NULL, 0) && rc__tp_ahead(tp);
		if (b->heap)
			rc__keep_buffer(c, b, len);
		rc__role_drop(c);
		if (__builtin_expect(ahead, 0))
			rc__serve_ahead(c); /* the peer's calls read with the reply */
		return true;
	}
	if (r == RC_CANTRECV || r == RC_TOOMANY)
		e = errno;
	else if (r == RC_AGAIN && (errno == EAGAIN || errno == EWOULDBLOCK))
		ran_out = true;
general:
	if (c->dgram) {
		/* the step read no clock: the call began about now, less the receive's wait if it
		 * ran out (interval ms). As Sun's clnt_udp, which counts its waits, a receive that
		 * ended early (a signal, another call's late reply) is not charged: such a call's
		 * timeout may run up to one retry interval long. */
		now = rc__now() - (ran_out ? (int64_t)interval * 1000000 : 0);
	}
	/* register the call as in flight and let the engine finish it */
	rc__call_init(p);
	rc__err_clear(&p->err);
	p->deadline = now + (int64_t)p->retry_ms * 1000000; /* retry_ms: the call's timeout */
	pthread_mutex_lock(&c->mu);
	p->msg = msg;
	p->msglen = len;
	rc__register(c, p, now, interval);
	rc__after_recv(c, r, rmsg, rlen, e);
	return false;
done:
	rc__err_clear(&p->err);
	if (*st == RC_MSGTOOLARGE) /* which limit, both sizes (big 0: the encoding stopped); hdr
	                              lives while the role is held */
		rc__toolarge(c, p, big, hdr->len, xargs, args);
	rc__role_drop(c);
	return true;
}

/*
 * Take the reader's role for a fast step if nobody holds it, and keep it if the client is
 * idle: no call in flight, no callbacks waiting, no output queued, a connected socket (not an
 * in-process transport), no spinning, and a stream used within RC__IDLE_CHECK_NS or, if
 * older, not closed by the peer meanwhile (one probe; a closed one goes to the engine, which
 * reconnects). The fields are read without the lock: a call another thread registers
 * meanwhile finds the role taken and waits as a follower, and its reply, if it comes first,
 * sends this call down the engine, which hands it over. Returns true with the role held.
 */
static inline __attribute__((always_inline)) bool rc__fast_eligible(rc_client *c, int64_t now)
{
	bool idle = false;
	rc_tp *tp;

	if (__builtin_expect(!atomic_compare_exchange_strong(&c->reading, &idle, true), 0))
		return false;
	tp = __atomic_load_n(&c->tp, __ATOMIC_ACQUIRE);
	if (__builtin_expect(__atomic_load_n(&c->npending, __ATOMIC_RELAXED) == 0 &&
	                         __atomic_load_n(&c->doneq, __ATOMIC_RELAXED) == NULL &&
	                         tp != NULL && !(tp->props & RC_TPP_SYNC) &&
	                         atomic_load_explicit(&c->nofast, memory_order_relaxed) == 0 &&
	                         !atomic_load_explicit(&c->queued, memory_order_relaxed),
	                     1) &&
	    (c->dgram ||
	     now - atomic_load_explicit(&c->last_io, memory_order_relaxed) <= RC__IDLE_CHECK_NS ||
	     !tp->vt->hung_up(tp)))
		return true;
	rc__role_drop(c);
	return false;
}

/* The end of a blocking call p sealed by a flavor (status st): its sealed message and its
 * reference go. True when the call was denied for a credential problem and the flavor
 * renewed itself (cl_refresh), the first time (*refreshed): the call goes again. */
static __attribute__((noinline)) bool rc__unseal(rc_async *p, rc_status st, bool *refreshed)
{
	rc__cl_auth *a = p->auth;
	bool again = st == RC_AUTHERROR && !*refreshed && a->fl->cl_refresh != NULL &&
	             p->err.auth_stat != RC__AUTH_INVALIDRESP && a->fl->cl_refresh(a, p->err.auth_stat);

	free(p->wire);
	p->wire = NULL;
	rc__cl_auth_unref(a);
	p->auth = NULL;
	*refreshed = *refreshed || again;
	return again;
}

/*
 * A blocking call: start, then wait -- the fast step first when the client is idle, else
 * rc__start and rc__drive, the engine started calls use. Inlined twice (rc_call): untraced,
 * with no trace code at all, and traced, reporting each step to the client's trace function.
 */
/*
 * Whether a blocking call that ended with st (p: its xid) goes again (rc_client_set_resend):
 * on a stream client that asked for it, when the connection broke under the call -- it was
 * sent, or may have been, and no reply came (RC_CANTRECV), or its send found the connection
 * broken (RC_CANTSEND) -- and then, once it is being sent again, when a sending's wait ran out
 * (RC_TIMEDOUT: a server drops the copy of a call still running); at most RC__RESENDS times,
 * within one timeout from the break (by: 0 the first time). Returns the time by which it must
 * be answered (non-zero: send it again), or 0; the engine then reconnects and sends it with the same xid, so a server caching
 * stream calls by address without the port (rc_server_set_drc_streams) answers it from its
 * cache if the first sending ran.
 */
#define RC__RESENDS 8u
static __attribute__((noinline, cold)) int64_t rc__resend_due(rc_client *c, rc_status st,
                                                              rc_async *p, uint32_t timeout_ms,
                                                              int64_t by)
{
	if (!c->resend || c->dgram || p->xid == 0)
		return 0;
	if (st == RC_TIMEDOUT ? by == 0 : st != RC_CANTRECV && st != RC_CANTSEND)
		return 0;
	if (by == 0) {
		by = rc__now() + (int64_t)timeout_ms * 1000000;
		p->resends = 0;
	}
	if (p->resends >= RC__RESENDS)
		return 0;
	if (p->resends > 0 && st == RC_CANTSEND) { /* reconnecting failed: a pause, doubling */
		int64_t pause = (int64_t)50000000 << (p->resends - 1), left = by - rc__now();
		if (pause > left)
			pause = left;
		if (pause > 0)
			nanosleep(&(struct timespec){(time_t)(pause / 1000000000),
			                             (long)(pause % 1000000000)}, NULL);
	}
	if (rc__now() >= by)
		return 0;
	p->resends++;
	return by;
}

static inline __attribute__((always_inline)) rc_status
rc__call(rc_client *clnt, uint32_t proc, rc_xdrproc xargs, const void *args, rc_xdrproc xres,
         void *res, uint32_t timeout_ms, const bool traced)
{
	_Alignas(16) unsigned char stack[RC__STACK_MSG]; /* (Sun XDR_INLINE: int32_t stores) */
	rc__encbuf b;
	rc_async p;
	size_t len;
	rc_status st;
	int64_t now;
	uint64_t t0 = traced ? rc__trace_clock() : 0;
	bool refreshed;
	int64_t resend_by = 0; /* sent again after the stream broke: by when (rc__resend_due) */

	/* p.err is cleared only on the way to a failure (rc__err_clear): a call that succeeds in
	 * the fast step never touches it (rc__set_lastok) */
	p.xres = xres ? xres : rc_xdr_void;
	p.res = res;
	p.retry_ms = timeout_ms;
	xargs = xargs ? xargs : rc_xdr_void;
	rc__encbuf_init(&b, stack, sizeof(stack), clnt->max_msg);

	/* a datagram's fast step reads no clock: it needs the time only if it hands the call to
	 * the engine (rc__fast) -- a clock read is a tenth of the library's share of a call */
	now = clnt->dgram ? 0 : rc__now();
	if (__builtin_expect(rc__fast_eligible(clnt, now), 1)) {
		if (__builtin_expect(rc__fast(clnt, &p, &b, proc, xargs, args, &st, now, traced, t0),
		                     1))
			goto out;
		/* p is in flight; the lock is held */
	} else {
		refreshed = false;
		if (clnt->dgram)
			now = rc__now();
	again:
		if (b.data == NULL) /* (sent before, its buffer kept by the client: rc__keep_buffer) */
			rc__encbuf_init(&b, stack, sizeof(stack), clnt->max_msg);
		p.deadline = now + (int64_t)timeout_ms * 1000000;
		rc__call_init(&p);
		if (__builtin_expect(resend_by != 0, 0)) {
			/* a wait for the reply of retry_ms, doubling, within the call's time: a
			 * server that drops the copy of a call still running gets it again */
			int64_t wait = (int64_t)clnt->retry_ms * 1000000
			               << (p.resends < 6 ? p.resends - 1 : 5);
			p.deadline = now + wait < resend_by ? now + wait : resend_by;
			p.resend_xid = p.xid;
		} else {
			p.xid = 0; /* (none until rc__start gives one: nothing sent to send again) */
		}
		rc__err_clear(&p.err);
		st = rc__encode(clnt, &p, &b, proc, xargs, args, &len);
		if (traced) {
			p.tr_begin = t0;
			p.tr_encoded = rc__trace_clock();
		}
		if (st == RC_OK)
			st = rc__start(clnt, &p, rc__encbuf_msg(&b), len, 0);
		if (st != RC_OK)
			goto ended;
		pthread_mutex_lock(&clnt->mu);
	}
	rc__drive(clnt, &p, INT64_MAX);
	rc__unlink(clnt, &p);
	if (__builtin_expect(clnt->srv != NULL, 0))
		rc__serve_ahead_locked(clnt); /* the peer's calls read with the reply */
	{
		bool idle = false;
		if (b.heap && atomic_compare_exchange_strong(&clnt->reading, &idle, true)) {
			rc__keep_buffer(clnt, &b, len);
			rc__role_drop_locked(clnt);
		}
	}
	pthread_mutex_unlock(&clnt->mu);
	st = p.st;
ended: /* (the engine's calls: the fast step's never carry a flavor's seal) */
	if (__builtin_expect(p.auth != NULL, 0) && rc__unseal(&p, st, &refreshed)) {
		now = rc__now(); /* the flavor renewed its credentials: once more, from the start */
		goto again;
	}
out:
	if (__builtin_expect(st == RC_OK, 1)) {
		rc__set_lastok(clnt);
	} else if ((resend_by = rc__resend_due(clnt, st, &p, timeout_ms, resend_by)) != 0) {
		now = rc__now();
		refreshed = false;
		goto again; /* the same call, the same xid, on a new connection */
	} else { /* every way to a failure cleared p.err before filling it in */
		p.err.status = st;
		rc__set_lasterr(clnt, &p.err);
	}
	rc__encbuf_free(&b);
	return st;
}

static __attribute__((noinline)) rc_status rc__call_traced(rc_client *clnt, uint32_t proc,
                                                            rc_xdrproc xargs, const void *args,
                                                            rc_xdrproc xres, void *res,
                                                            uint32_t timeout_ms)
{
	return rc__call(clnt, proc, xargs, args, xres, res, timeout_ms, true);
}

/* The total time a call with options opts may take, in ms. */
static inline uint32_t rc__call_timeout(const rc_client *c, const rc_callopts *opts)
{
	return opts != NULL && opts->timeout_ms != 0 ? opts->timeout_ms : c->timeout_ms;
}

rc_status rc_call_ex(rc_client *clnt, uint32_t proc, rc_xdrproc xargs, const void *args,
                     rc_xdrproc xres, void *res, const rc_callopts *opts)
{
	uint32_t t;

	if (clnt == NULL || (opts != NULL && opts->timeout_ms > RC_MAX_TIMEOUT_MS))
		return RC_INVAL;
	t = rc__call_timeout(clnt, opts);
	if (__builtin_expect(clnt->trace != NULL, 0))
		return rc__call_traced(clnt, proc, xargs, args, xres, res, t);
	return rc__call(clnt, proc, xargs, args, xres, res, t, false);
}

rc_status rc_call(rc_client *clnt, uint32_t proc, rc_xdrproc xargs, const void *args,
                  rc_xdrproc xres, void *res)
{
	if (clnt == NULL)
		return RC_INVAL;
	if (__builtin_expect(clnt->trace != NULL, 0))
		return rc__call_traced(clnt, proc, xargs, args, xres, res, clnt->timeout_ms);
	return rc__call(clnt, proc, xargs, args, xres, res, clnt->timeout_ms, false);
}

/* ---- started calls ---------------------------------------------------------------------- */

rc_status rc_call_start_ex(rc_client *clnt, uint32_t proc, rc_xdrproc xargs, const void *args,
                           rc_xdrproc xres, void *res, const rc_callopts *opts,
                           rc_async_cb cb, void *udata, rc_async **out)
{
	_Alignas(16) unsigned char stack[RC__STACK_MSG]; /* (Sun XDR_INLINE: int32_t stores) */
	rc__encbuf b;
	rc_async *p;
	size_t len;
	rc_status st;

	if (out)
		*out = NULL;
	if (clnt == NULL || (cb == NULL && out == NULL) ||
	    (opts != NULL && opts->timeout_ms > RC_MAX_TIMEOUT_MS))
		return RC_INVAL;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return RC_NOMEM;
	p->xres = xres ? xres : rc_xdr_void;
	p->res = res;
	p->cb = cb;
	p->udata = udata;
	p->has_cb = cb != NULL;
	p->deadline = rc__now() + (int64_t)rc__call_timeout(clnt, opts) * 1000000;
	rc__encbuf_init(&b, stack, sizeof(stack), clnt->max_msg);
	st = rc__encode(clnt, p, &b, proc, xargs ? xargs : rc_xdr_void, args, &len);
	if (st == RC_OK && (clnt->dgram || p->auth != NULL || clnt->failover)) {
		/* keep the message for retransmission, or -- credentials of a flavor that may renew
		 * them -- to send it again after a renewal (rc__renew), or after a drain
		 * (rc_client_set_failover: rc__resend) */
		if (b.heap) {
			p->msgblock = b.data;
			rc__encbuf_detach(&b);
		} else if ((p->msgblock = malloc(len + RC_TP_HEADROOM)) != NULL) {
			memcpy(p->msgblock, b.data, len + RC_TP_HEADROOM);
		} else {
			st = RC_NOMEM;
		}
	}
	if (st == RC_OK) {
		unsigned char *msg = p->msgblock ? p->msgblock + RC_TP_HEADROOM : rc__encbuf_msg(&b);
		if (cb == NULL) {
			pthread_mutex_lock(&clnt->mu);
			rc__handle_link(clnt, p);
			pthread_mutex_unlock(&clnt->mu);
		}
		st = rc__start(clnt, p, msg, len, RC_TPF_DONTWAIT);
		if (st != RC_OK && cb == NULL) {
			pthread_mutex_lock(&clnt->mu);
			rc__handle_unlink(clnt, p);
			pthread_mutex_unlock(&clnt->mu);
		}
	}
	rc__encbuf_free(&b);
	if (st != RC_OK) { /* no handle: rc_client_geterr tells why */
		p->err.status = st;
		rc__set_lasterr(clnt, &p->err);
		rc__free_call(p);
		return st;
	}
	if (out)
		*out = p;
	return RC_OK;
}

rc_status rc_call_start(rc_client *clnt, uint32_t proc, rc_xdrproc xargs, const void *args,
                        rc_xdrproc xres, void *res, rc_async_cb cb, void *udata,
                        rc_async **out)
{
	return rc_call_start_ex(clnt, proc, xargs, args, xres, res, NULL, cb, udata, out);
}

rc_status rc_async_status(const rc_async *call)
{
	rc_client *c;
	rc_status st;

	if (call == NULL)
		return RC_INVAL;
	if ((c = call->clnt) == NULL)
		return call->st; /* orphaned by rc_client_destroy: complete */
	pthread_mutex_lock(&c->mu);
	st = call->state == RC__CALL_DONE ? call->st : RC_INPROGRESS;
	pthread_mutex_unlock(&c->mu);
	return st;
}

rc_status rc_async_wait(rc_async *call, int timeout_ms)
{
	rc_client *c;
	int64_t until;
	rc_status st;
	bool done;

	if (call == NULL)
		return RC_INVAL;
	if ((c = call->clnt) == NULL)
		return call->st;
	until = timeout_ms < 0 ? INT64_MAX : rc__now() + (int64_t)timeout_ms * 1000000;
	pthread_mutex_lock(&c->mu);
	for (;;) {
		rc__drive(c, call, until);
		done = call->state == RC__CALL_DONE;
		st = done ? call->st : RC_INPROGRESS;
		if (!done && call->renewing && rc__now() < until) {
			pthread_mutex_unlock(&c->mu);
			rc__renew(c); /* its credentials, then it goes again */
			pthread_mutex_lock(&c->mu);
			continue;
		}
		if (done || rc__now() >= until || c->doneq == NULL)
			break;
		pthread_mutex_unlock(&c->mu);
		rc__run_callbacks(c);
		pthread_mutex_lock(&c->mu);
	}
	pthread_mutex_unlock(&c->mu);
	/* With a callback, the call may be freed by the callbacks run here: st was read before. */
	rc__run_callbacks(c);
	return st;
}

/* client.h: a completed call's error, as rc_client_geterr gives a blocking call's. */
void rc_async_geterr(const rc_async *call, rc_error *err)
{
	rc_client *c;

	if (err == NULL)
		return;
	memset(err, 0, sizeof(*err));
	if (call == NULL) {
		err->status = RC_INVAL;
		return;
	}
	if ((c = call->clnt) != NULL)
		pthread_mutex_lock(&c->mu);
	if (call->state != RC__CALL_DONE && c != NULL)
		err->status = RC_INPROGRESS;
	else if (call->st != RC_OK)
		*err = call->err; /* (status set at completion: rc__complete) */
	if (c != NULL) {
		rc__err_explain(c, err);
		pthread_mutex_unlock(&c->mu);
	}
}

void rc_async_cancel(rc_async *call)
{
	rc_client *c;

	if (call == NULL || (c = call->clnt) == NULL)
		return;
	pthread_mutex_lock(&c->mu); /* c read first: rc__complete may free a released call */
	rc__complete(c, call, RC_CANCELLED);
	pthread_mutex_unlock(&c->mu);
}

void rc_async_release(rc_async *call)
{
	rc_client *c;

	if (call == NULL || call->has_cb)
		return;
	if ((c = call->clnt) == NULL) { /* orphaned: its client is gone, nothing else holds it */
		rc__free_call(call);
		return;
	}
	pthread_mutex_lock(&c->mu);
	rc__handle_unlink(c, call);
	if (call->state == RC__CALL_DONE) {
		rc__free_call(call);
	} else {
		call->released = true;
		rc__complete(c, call, RC_CANCELLED); /* frees it */
	}
	pthread_mutex_unlock(&c->mu);
}

size_t rc_client_inflight(rc_client *clnt)
{
	size_t n;

	if (clnt == NULL)
		return 0;
	pthread_mutex_lock(&clnt->mu);
	n = clnt->npending;
	pthread_mutex_unlock(&clnt->mu);
	return n;
}

/* ---- the application's loop ------------------------------------------------------------- */

rc_status rc_client_pollinfo(rc_client *clnt, int *fd, short *events, int *timeout_ms)
{
	int64_t next, now;

	if (clnt == NULL || fd == NULL || events == NULL || timeout_ms == NULL)
		return RC_INVAL;
	pthread_mutex_lock(&clnt->mu);
	*fd = clnt->tp ? rc__tp_pollfd(clnt->tp) : -1;
	*events = 0;
	if (*fd >= 0) {
		if (clnt->npending > 0 || clnt->srv != NULL)
			*events |= POLLIN; /* replies, or the peer's calls to the programs served */
		if (atomic_load(&clnt->queued))
			*events |= POLLOUT; /* calls wait in the output queue */
	}
	now = rc__now();
	next = INT64_MAX;
	for (rc_async *p = clnt->pending; p; p = p->next) {
		if (p->deadline < next)
			next = p->deadline;
		if (clnt->dgram && p->next_retry < next)
			next = p->next_retry;
	}
	if (clnt->doneq != NULL || clnt->inq != NULL || (clnt->npending > 0 && *fd < 0) ||
	    ((clnt->npending > 0 || clnt->srv != NULL) && rc__ahead_locked(clnt)))
		next = now; /* work to do at once (replies held that the descriptor won't announce) */
	if (next == INT64_MAX)
		*timeout_ms = -1;
	else if (next <= now)
		*timeout_ms = 0;
	else
		*timeout_ms = (int)((next - now + 999999) / 1000000);
	pthread_mutex_unlock(&clnt->mu);
	return RC_OK;
}

rc_status rc_client_advance(rc_client *clnt, short revents)
{
	rc_status st = RC_OK, fs = RC_OK;
	rc_tp *tp = NULL;
	int e = 0;
	bool renew;

	if (clnt == NULL)
		return RC_INVAL;
	pthread_mutex_lock(&clnt->mu);
	if (clnt->tp != NULL && ((revents & ~POLLOUT) != 0 || (clnt->kind->props & RC_TPP_SYNC) ||
	                         rc__ahead_locked(clnt))) {
		rc_status r = rc__read_all(clnt);
		if (r != RC_OK && r != RC_AGAIN && r != RC_TIMEDOUT)
			st = r == RC_CLOSED ? RC_CANTRECV : r;
	}
	(void)rc__timers(clnt, rc__now());
	if (__builtin_expect(clnt->resend_due, 0))
		rc__resend(clnt); /* after a drain's notice: on a new connection */
	rc__serve_inq(clnt); /* the peer's calls (rc_client_serve) */
	renew = clnt->renew != NULL;
	pthread_mutex_unlock(&clnt->mu);
	if (__builtin_expect(renew, 0))
		rc__renew(clnt); /* started calls denied for a credential problem */

	/* callbacks may start calls: corked, they gather in the output queue */
	pthread_mutex_lock(&clnt->smu);
	clnt->cork++;
	pthread_mutex_unlock(&clnt->smu);
	rc__run_callbacks(clnt);
	pthread_mutex_lock(&clnt->smu);
	if (clnt->cork == 1)
		rc__dq_flush(clnt); /* the datagrams the callbacks started, together */
	if (--clnt->cork == 0 && atomic_load(&clnt->queued)) {
		tp = clnt->tp;
		fs = rc__flush_locked(clnt, 0); /* never blocks: the rest waits for POLLOUT */
		e = errno;
	}
	pthread_mutex_unlock(&clnt->smu);
	if (fs == RC_CANTSEND) {
		pthread_mutex_lock(&clnt->mu);
		rc__send_failed(clnt, tp, e);
		pthread_mutex_unlock(&clnt->mu);
		rc__run_callbacks(clnt);
		st = RC_CANTSEND;
	}
	return st;
}

rc_status rc_client_serve(rc_client *clnt, const rc_svc_prog *def, void *ctx)
{
	rc_status st = RC_OK;

	if (clnt == NULL || def == NULL)
		return RC_INVAL;
	if (clnt->dgram || (clnt->kind->props & (RC_TPP_SYNC | RC_TPP_BACK)))
		return RC_NOTSUPP; /* calls come back only on a stream connection of the client's */
	pthread_mutex_lock(&clnt->mu);
	if (clnt->srv == NULL)
		st = rc_server_create(&clnt->srv);
	if (st == RC_OK)
		st = rc_server_register(clnt->srv, def, ctx);
	pthread_mutex_unlock(&clnt->mu);
	return st;
}

void rc_client_destroy(rc_client *clnt)
{
	if (clnt == NULL)
		return;
	pthread_mutex_lock(&clnt->mu);
	/* Calls still in flight complete as cancelled; their callbacks run now. */
	while (clnt->pending)
		rc__complete(clnt, clnt->pending, RC_CANCELLED);
	while (clnt->renew) { /* started calls waiting for a renewal nobody made */
		rc_async *p = clnt->renew;
		clnt->renew = p->next;
		p->next = NULL;
		p->renewing = false;
		rc__complete(clnt, p, RC_CANCELLED);
	}
	pthread_mutex_unlock(&clnt->mu);
	rc__run_callbacks(clnt);
	/* Handles not yet released outlive the client, complete, until rc_async_release. */
	while (clnt->handles) {
		rc_async *p = clnt->handles;
		rc__handle_unlink(clnt, p);
		p->clnt = NULL;
	}
	if (clnt->tp)
		clnt->tp->vt->close(clnt->tp);
	rc__free_retired(clnt);
	while (clnt->inq != NULL) { /* the peer's calls never served */
		rc__inq *q = clnt->inq;
		clnt->inq = q->next;
		free(q);
	}
	free(clnt->inq_spare);
	rc_server_destroy(clnt->srv);
	if (clnt->hdr != &clnt->hdr0) {
		rc__cl_auth_unref(clnt->hdr->auth);
		free(clnt->hdr);
	}
	pthread_cond_destroy(&clnt->cv);
	pthread_mutex_destroy(&clnt->mu);
	pthread_mutex_destroy(&clnt->smu);
	free(clnt->fastbuf);
	free(clnt->dq);
	free(clnt->rxb);
	rc__tls_ctx_free(clnt->uri.tls); /* after the transport made with it */
	free(clnt);
}

/* ---- failover after a drain (rc_client_set_failover; docs/load-balancing.md) ---------------
 * Each connection starts with a NOTICE call (program 0x3fd7c0de, version 1, procedure 1) that
 * the connecting thread sends and waits for before the connection carries calls: a server
 * that drains (rc_server_drain) answers it SUCCESS with 0 now, and once more, SUCCESS with 1,
 * after the reply of every call it ran, just before it ends the connection. Any other answer
 * (PROG_UNAVAIL from a server without drains) turns the notice off on that connection. The
 * second answer means the calls still in flight were never run: they go again, on a new
 * connection, with new xids, inside their own deadlines.
 */

/* client.h */
rc_status rc_client_set_failover(rc_client *clnt, bool on)
{
	if (clnt == NULL)
		return RC_INVAL;
	if (clnt->dgram || (clnt->kind->props & RC_TPP_SYNC))
		return RC_NOTSUPP;
	pthread_mutex_lock(&clnt->mu);
	clnt->failover = on;
	if (!on) {
		clnt->notice_xid = 0;
	} else if (clnt->tp != NULL && clnt->npending == 0 && clnt->notice_xid == 0) {
		/* connected already (rc_client_create): that connection asks now, or is closed
		 * and the next call's connects and asks */
		int64_t by = rc__now() + (int64_t)clnt->timeout_ms * 1000000;
		pthread_mutex_lock(&clnt->smu);
		bool asked = rc__notice(clnt, clnt->tp, by) == RC_OK;
		pthread_mutex_unlock(&clnt->smu);
		if (!asked)
			rc__disconnect(clnt);
	}
	pthread_mutex_unlock(&clnt->mu);
	if (on) /* blocking calls are registered in flight, so that they can go again */
		atomic_fetch_or_explicit(&clnt->nofast, RC__NOFAST_FAILOVER, memory_order_relaxed);
	else
		atomic_fetch_and_explicit(&clnt->nofast, ~RC__NOFAST_FAILOVER, memory_order_relaxed);
	return RC_OK;
}

/* Ask the server on tp, a connection just made (not yet c's), to tell of a drain; wait for its
 * answer by deadline (0: no limit). RC_OK (c->notice_xid set, or 0 when the server does not
 * drain), or the failure that ends the connection (RC_CLOSED: it closed first -- a balancer
 * with no server, a server that stopped listening; RC_TIMEDOUT). */
static rc_status rc__notice(rc_client *c, rc_tp *tp, int64_t deadline)
{
	_Alignas(8) unsigned char b[RC_TP_HEADROOM + 40];
	unsigned char *m = b + RC_TP_HEADROOM;
	uint32_t xid = atomic_fetch_add_explicit(&c->xid, 1, memory_order_relaxed) + 1;
	static const uint32_t call[9] = {RC__CALL, RC__RPCVERS, RC__CTL_PROG, RC__CTL_VERS,
	                                 RC__CTL_NOTICE, RC_AUTH_NONE, 0, RC_AUTH_NONE, 0};
	rc_status st;

	c->notice_xid = 0;
	rc__put32(m, xid);
	for (int i = 0; i < 9; i++)
		rc__put32(m + 4 + 4 * i, call[i]);
	if ((st = tp->vt->send(tp, m, 40, NULL, 0)) != RC_OK)
		return st;
	for (;;) {
		void *msg;
		size_t len;
		const unsigned char *r;

		st = tp->vt->recv(tp, &msg, &len, NULL, RC_TPF_DONTWAIT);
		if (st == RC_AGAIN) {
			int64_t left = deadline == 0 ? -1 : (deadline - rc__now() + 999999) / 1000000;
			struct pollfd pf = {rc__tp_pollfd(tp), POLLIN, 0};
			if (deadline != 0 && left <= 0)
				return RC_TIMEDOUT;
			(void)poll(&pf, 1, left > INT32_MAX ? INT32_MAX : (int)left);
			continue;
		}
		if (st != RC_OK)
			return st;
		r = msg;
		if (len < 24 || rc__get32(r) != xid || rc__get32(r + 4) != RC__REPLY)
			continue; /* (nothing else can come before it) */
		/* accepted, AUTH_NONE verifier, SUCCESS, 0: the server will tell */
		if (len >= 28 && rc__get32(r + 8) == RC__MSG_ACCEPTED && rc__get32(r + 16) == 0 &&
		    rc__get32(r + 20) == RC__SUCCESS && rc__get32(r + 24) == 0)
			c->notice_xid = xid;
		return RC_OK;
	}
}

/* The NOTICE's second answer came (under mu, as the reader, its role given up): if it says
 * the server drains, every call still in flight was never run -- mark them to go again
 * (rc__resend) and close the connection. */
static void rc__goaway(rc_client *c, const unsigned char *msg, size_t len)
{
	rc_async *p, *n;

	if (len < 28 || rc__get32(msg + 8) != RC__MSG_ACCEPTED || rc__get32(msg + 20) != 0 ||
	    rc__get32(msg + 24) != 1)
		return;
	c->notice_xid = 0;
	for (p = c->pending; p != NULL; p = n) {
		n = p->next;
		if (p->auth == NULL && p->msg != NULL) {
			p->resend = true;
			continue;
		}
		snprintf(p->err.detail, sizeof(p->err.detail),
		         "the server drained; a call with sealed credentials is not sent again");
		rc__complete(c, p, RC_CANTRECV);
	}
	c->resend_due = true;
	rc__disconnect(c);
	rc__wake(c);
}

/* Send the calls marked by rc__goaway again on a new connection (under mu, dropped while it
 * connects): new xids, the messages as first encoded. The connection is tried again until
 * the latest of their deadlines (a balancer may take a moment to find a server up); if none
 * comes, they fail as a failed connect does. */
static void rc__resend(rc_client *c)
{
	int64_t deadline = 0;
	rc_status st = RC_OK;
	rc_async *p, *n;
	rc_tp *tp;
	int err = 0;

	c->resend_due = false;
	for (p = c->pending; p != NULL; p = p->next)
		if (p->resend && p->deadline > deadline)
			deadline = p->deadline;
	if (deadline == 0)
		return;
	while ((st = rc__ensure(c, deadline, &err)) != RC_OK && rc__now() + 20000000 < deadline) {
		struct timespec ts = {0, 20000000};
		pthread_mutex_unlock(&c->mu);
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&c->mu);
	}
	if (st != RC_OK) {
		for (p = c->pending; p != NULL; p = n) {
			n = p->next;
			if (!p->resend)
				continue;
			p->resend = false;
			p->err.sys_errno = err;
			snprintf(p->err.detail, sizeof(p->err.detail),
			         "the server drained, and no new connection: %s", rc__tp_detail());
			rc__complete(c, p, rc__connect_status(st));
		}
		return;
	}
	tp = c->tp;
	pthread_mutex_lock(&c->smu);
	rc__smu_send(c);
	for (p = c->pending; p != NULL && st == RC_OK; p = p->next) {
		if (!p->resend)
			continue;
		p->resend = false;
		p->xid = atomic_fetch_add_explicit(&c->xid, 1, memory_order_relaxed) + 1;
		rc__put32(p->msg, p->xid);
		st = tp->vt->send(tp, p->msg, p->msglen, NULL, RC_TPF_DONTWAIT | RC_TPF_MORE);
	}
	if (st == RC_OK && tp->vt->flush(tp, 0) == RC_CANTSEND)
		st = RC_CANTSEND;
	err = errno;
	atomic_store(&c->queued, tp->vt->outq(tp) > 0);
	rc__smu_sent(c);
	pthread_mutex_unlock(&c->smu);
	if (st != RC_OK)
		rc__send_failed(c, tp, err); /* (the calls in flight fail, as any broken send's) */
}

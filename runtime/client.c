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
 * UDP calls are retransmitted with the same xid, with doubling intervals, inside the call's
 * total deadline. A stream connection that broke is reopened by the next call.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "runtime/rpc.h"

#define RC__MAX_RETRY_MS 4000u
#define RC__CLIENT_MAX_RECORD ((size_t)64 << 20)
#define RC__STACK_MSG 2048
#define RC__IDLE_CHECK_NS 200000LL /* probe a stream idle this long before using it */

/* REPLY (1) then MSG_ACCEPTED (0), as the 8 bytes lie on the wire, read as one word. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
static const uint64_t rc__reply_accepted = (uint64_t)1 << 32;
#else
static const uint64_t rc__reply_accepted = (uint64_t)1 << 24;
#endif
_Static_assert(RC__REPLY == 1 && RC__MSG_ACCEPTED == 0 && RC__SUCCESS == 0, "RFC 5531 values");

struct rc_async {
	rc_async *next, *prev; /* pending list, or the done queue (next only) */
	rc_client *clnt;
	uint32_t xid;
	rc_xdrproc xres;
	void *res;
	rc_status st;
	rc_error err;
	bool done;
	bool pending;  /* linked in the pending list */
	bool has_cb;
	bool released; /* no-callback handle released while in flight: free at completion */
	bool starting; /* rc__start has not returned: another thread must not free it yet */
	rc_async_cb cb;
	void *udata;
	/* datagram retransmission: the message (headroom before it) and its timers */
	unsigned char *msg;
	size_t msglen;
	unsigned char *msgblock; /* heap block holding msg, freed with the call (started calls) */
	int64_t deadline;
	int64_t next_retry;
	uint32_t retry_ms;
	/* a traced blocking call on the general path: when it began and was encoded (0: not
	 * traced, or a started call) */
	uint64_t tr_begin, tr_encoded;
};

struct rc_client {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_mutex_t smu; /* one sender at a time on a stream; guards the fields below */
	/*
	 * Corking: while rc_client_advance runs completion callbacks, calls they start on a
	 * stream are queued here and leave in one send afterwards (pipelined calls cost one
	 * system call per batch, not one per call).
	 */
	int cork;
	unsigned char *outq;
	size_t outlen, outcap;
	rc_tp *outq_tp; /* the connection the queue was built for */
	const rc_tp_kind *kind;
	rc_uri uri;
	rc_tp *tp; /* NULL while a stream is disconnected */
	bool dgram;
	uint32_t prog, vers;
	atomic_uint xid;
	uint32_t timeout_ms, retry_ms, spin_us;
	size_t max_msg;
	_Atomic int64_t last_io; /* relaxed: the fast path writes it without mu */
	/*
	 * A thread is inside tp->recv, and the threads waiting on cv. `reading` is the reader's
	 * role: taken only by compare-and-swap (rc__read under mu; a blocking call's fast path
	 * without it), given up by a plain store. A waiter counts itself before it looks at
	 * `reading`, and the fast path clears `reading` before it looks at the count, so one of
	 * them always sees the other (sequentially consistent atomics) and no wake-up is lost.
	 */
	atomic_bool reading;
	atomic_int nwaiters;
	/* the fast path's heap encode buffer, kept between calls (only the reader uses it) */
	unsigned char *fastbuf;
	size_t fastcap;
	rc_async *pending;
	size_t npending;
	rc_async *doneq, *doneq_tail; /* completed calls whose callbacks have not run */
	/* call header template: xid, CALL, 2, prog, vers, proc, cred, verf */
	unsigned char hdr[24 + 8 + RC__MAX_AUTH_BYTES + 8];
	size_t hdrlen;
	rc_trace_fn trace; /* NULL: off */
	void *trace_arg;
};

static _Thread_local struct {
	const rc_client *c;
	rc_error e;
} rc__tls;

void rc__set_lasterr(const rc_client *c, const rc_error *e)
{
	rc__tls.c = c;
	rc__tls.e = *e;
}

void rc_client_geterr(const rc_client *clnt, rc_error *err)
{
	if (err == NULL)
		return;
	if (rc__tls.c == clnt && clnt != NULL)
		*err = rc__tls.e;
	else
		memset(err, 0, sizeof(*err));
}

char *rc_error_format(const rc_error *err, char *buf, size_t len)
{
	if (buf == NULL || len == 0)
		return buf;
	switch (err->status) {
	case RC_PROGVERSMISMATCH:
		snprintf(buf, len, "%s (server supports %u..%u)", rc_strerror(err->status),
		         err->low, err->high);
		break;
	case RC_VERSMISMATCH:
		snprintf(buf, len, "%s (server speaks %u..%u)", rc_strerror(err->status), err->low,
		         err->high);
		break;
	case RC_AUTHERROR:
		snprintf(buf, len, "%s (auth_stat %u)", rc_strerror(err->status), err->auth_stat);
		break;
	default:
		if (err->sys_errno != 0)
			snprintf(buf, len, "%s: %s", rc_strerror(err->status),
			         strerror(err->sys_errno));
		else
			snprintf(buf, len, "%s", rc_strerror(err->status));
	}
	if (err->rpcbind_vers != 0) { /* rc_client_create_ex's look-up: which rpcbind, and how */
		size_t n = strlen(buf);
		if (err->rpcbind_status != RC_OK)
			snprintf(buf + n, len - n, " (rpcbind version %u: %s)", err->rpcbind_vers,
			         rc_strerror(err->rpcbind_status));
		else
			snprintf(buf + n, len - n, " (rpcbind version %u)", err->rpcbind_vers);
	}
	return buf;
}

static int64_t rc__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void rc__put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static uint32_t rc__get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- the header template --------------------------------------------------------------- */

/* Build the call header with the given credential body (flavor, bytes). */
static void rc__build_header(rc_client *c, uint32_t flavor, const unsigned char *cred,
                             size_t credlen)
{
	unsigned char *p = c->hdr;

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
	c->hdrlen = 32 + credlen + 8;
}

rc_status rc_client_set_auth_none(rc_client *clnt)
{
	if (clnt == NULL)
		return RC_INVAL;
	pthread_mutex_lock(&clnt->mu);
	rc__build_header(clnt, RC_AUTH_NONE, NULL, 0);
	pthread_mutex_unlock(&clnt->mu);
	return RC_OK;
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
	pthread_mutex_lock(&clnt->mu);
	rc__build_header(clnt, RC_AUTH_SYS, body, rc_xdr_getpos(&x));
	pthread_mutex_unlock(&clnt->mu);
	return RC_OK;
}

/* ---- life cycle ------------------------------------------------------------------------- */

static rc_status rc__connect(rc_client *c)
{
	rc_tp *tp = NULL;
	rc_status st = c->kind->connect(&c->uri, RC__CLIENT_MAX_RECORD, &tp);

	/* tp, npending and doneq are stored atomically: rc__fast_eligible reads them unlocked */
	__atomic_store_n(&c->tp, tp, __ATOMIC_RELEASE);
	if (st == RC_OK) {
		size_t m = c->tp->max_msg;
		c->max_msg = m > RC__CLIENT_MAX_RECORD ? RC__CLIENT_MAX_RECORD : m;
		c->last_io = rc__now();
	}
	return st;
}

/* rpc.h: the client's own open, for the layer above (rpcbind.c); the URI has its port. */
rc_status rc__client_open(rc_client **out, const rc_uri *u, uint32_t prog, uint32_t vers)
{
	rc_client *c;
	rc_status st;
	pthread_condattr_t ca;

	if (out == NULL)
		return RC_INVAL;
	*out = NULL;
	if (u == NULL)
		return RC_INVAL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return RC_NOMEM;
	c->uri = *u;
	c->kind = rc__tp_find(c->uri.scheme);
	c->dgram = strcmp(c->uri.scheme, "udp") == 0;
	c->prog = prog;
	c->vers = vers;
	c->timeout_ms = RC_DEFAULT_TIMEOUT_MS;
	c->retry_ms = RC_DEFAULT_RETRY_MS;
	{
		uint32_t x0;
		if (getrandom(&x0, sizeof(x0), GRND_NONBLOCK) != sizeof(x0))
			x0 = (uint32_t)rc__now() ^ ((uint32_t)getpid() << 16);
		atomic_init(&c->xid, x0);
	}
	rc__build_header(c, RC_AUTH_NONE, NULL, 0);

	if ((st = rc__connect(c)) != RC_OK) {
		free(c);
		return st;
	}
	pthread_mutex_init(&c->mu, NULL);
	pthread_mutex_init(&c->smu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	*out = c;
	return RC_OK;
}

rc_status rc_client_set_timeout(rc_client *clnt, uint32_t total_ms)
{
	if (clnt == NULL || total_ms > 24u * 3600 * 1000)
		return RC_INVAL;
	clnt->timeout_ms = total_ms ? total_ms : RC_DEFAULT_TIMEOUT_MS;
	return RC_OK;
}

rc_status rc_client_set_retry(rc_client *clnt, uint32_t initial_ms)
{
	if (clnt == NULL || initial_ms > 3600u * 1000)
		return RC_INVAL;
	clnt->retry_ms = initial_ms ? initial_ms : RC_DEFAULT_RETRY_MS;
	return RC_OK;
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
	clnt->spin_us = spin_us;
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

static void rc__unlink(rc_client *c, rc_async *p)
{
	if (!p->pending)
		return;
	if (p->prev)
		p->prev->next = p->next;
	else
		c->pending = p->next;
	if (p->next)
		p->next->prev = p->prev;
	p->next = p->prev = NULL;
	p->pending = false;
	__atomic_store_n(&c->npending, c->npending - 1, __ATOMIC_RELAXED);
}

static void rc__free_call(rc_async *p)
{
	free(p->msgblock);
	free(p);
}

/* Wake threads waiting beside the reader, if any (under c->mu). */
static void rc__wake(rc_client *c)
{
	if (c->nwaiters > 0)
		pthread_cond_broadcast(&c->cv);
}

/* Complete p with st (under c->mu). Wakes its waiter; queues its callback. */
static void rc__complete(rc_client *c, rc_async *p, rc_status st)
{
	if (p->done)
		return;
	rc__unlink(c, p);
	p->st = st;
	p->err.status = st;
	p->done = true;
	if (p->has_cb) {
		p->next = NULL;
		if (c->doneq_tail)
			c->doneq_tail->next = p;
		else
			__atomic_store_n(&c->doneq, p, __ATOMIC_RELAXED);
		c->doneq_tail = p;
	} else if (p->released) {
		rc__free_call(p);
		return;
	}
	rc__wake(c);
}

/* Fail every call in flight with st (the connection broke), and drop the connection. */
static void rc__fail_all(rc_client *c, rc_status st, int err)
{
	while (c->pending) {
		c->pending->err.sys_errno = err;
		rc__complete(c, c->pending, st);
	}
}

static void rc__disconnect(rc_client *c)
{
	if (c->tp != NULL && !c->dgram) {
		c->tp->vt->close(c->tp);
		__atomic_store_n(&c->tp, NULL, __ATOMIC_RELEASE);
	}
}

/*
 * A stream broke under a thread that is not the reader (under c->mu): close it, unless a
 * reader is inside its recv (a blocking call's fast path uses the connection without the
 * lock) -- then shut it down, so that recv fails and the reader closes it itself.
 */
static void rc__break_stream(rc_client *c)
{
	if (atomic_load(&c->reading) && c->tp != NULL && c->tp->fd >= 0)
		shutdown(c->tp->fd, SHUT_RDWR);
	else
		rc__disconnect(c);
}

/* Run the callbacks of completed calls (without the lock held). */
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
		p->cb(p, p->st, p->udata);
		rc__free_call(p);
	}
}

/* ---- replies ---------------------------------------------------------------------------- */

/* Handle one incoming message (under c->mu): decode it into the call its xid names. */
static void rc__handle(rc_client *c, const unsigned char *msg, size_t len)
{
	rc_async *p;
	rc_xdr x;
	rc_status st;
	uint32_t xid;

	if (len < 12)
		return; /* too short to be a reply: ignore */
	xid = rc__get32(msg);
	for (p = c->pending; p != NULL; p = p->next)
		if (p->xid == xid)
			break;
	if (p == NULL)
		return; /* stale (timed out, cancelled) or foreign: drop */
	if (c->trace != NULL)
		rc__trace(c, RC_TP_REPLY, xid);
	rc_xdrmem_create(&x, (void *)(msg + 4), len - 4, RC_XDR_DECODE);
	rc_xdr_set_limits(&x, c->max_msg * 4 + 4096, 0);
	st = rc__reply_header(&x, &p->err);
	if (st == RC_BADREPLY && c->dgram)
		return; /* a forged or mangled datagram: keep waiting for the real reply */
	if (st == RC_OK && !p->xres(&x, p->res))
		st = RC_CANTDECODERES;
	if (c->trace != NULL)
		rc__trace(c, RC_TP_DECODED, xid);
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
			if (c->tp->vt->send(c->tp, p->msg, p->msglen, NULL, MSG_DONTWAIT, NULL) ==
			        RC_CANTSEND &&
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
	c->reading = false;
	if (st == RC_OK) {
		c->last_io = rc__now();
		rc__handle(c, msg, len);
	} else if (st == RC_CLOSED || st == RC_CANTRECV || st == RC_MSGTOOLARGE) {
		if (!c->dgram) {
			rc__fail_all(c, st == RC_MSGTOOLARGE ? RC_MSGTOOLARGE : RC_CANTRECV, e);
			rc__disconnect(c);
		} else if (c->pending) {
			/* ICMP unreachable on a connected UDP socket: the server is not there. */
			rc__fail_all(c, RC_CANTRECV, e);
		}
	}
	rc__wake(c);
}

/*
 * Read from the transport as the reader (entered and left under c->mu, which it drops while
 * reading). flags 0 blocks up to wake; MSG_DONTWAIT reads what is there. Returns the transport
 * status of the last read.
 */
static rc_status rc__read(rc_client *c, int64_t wake, int flags)
{
	rc_tp *tp = c->tp;
	rc_status st;
	void *msg;
	size_t len;
	int e;

	bool idle = false;

	if (tp == NULL || !atomic_compare_exchange_strong(&c->reading, &idle, true))
		return RC_AGAIN;
	pthread_mutex_unlock(&c->mu);
	if (flags == 0) {
		int64_t ns = wake - rc__now();
		int ms = ns <= 0 ? 1 : (int)((ns + 999999) / 1000000);
		if (c->spin_us > 0) {
			int64_t until = rc__now() + (int64_t)c->spin_us * 1000;
			do
				st = tp->vt->recv(tp, &msg, &len, NULL, MSG_DONTWAIT);
			while (st == RC_AGAIN && rc__now() < until);
			if (st != RC_AGAIN)
				goto got;
		}
		if (tp->fd < 0) {
			st = tp->vt->recv(tp, &msg, &len, NULL, MSG_DONTWAIT);
			if (st == RC_AGAIN)
				st = RC_TIMEDOUT; /* in-process: no reply now means no reply ever */
			goto got;
		}
		rc__tp_set_rcvtimeo(tp, ms);
	}
	st = tp->vt->recv(tp, &msg, &len, NULL, flags);
got:
	e = st == RC_CANTRECV ? errno : 0;
	pthread_mutex_lock(&c->mu);
	rc__after_recv(c, st, msg, len, e);
	return st;
}

/* ---- sending ---------------------------------------------------------------------------- */

/* A stream the peer has closed (or reset): one poll, no waiting. */
static bool rc__hung_up(const rc_tp *tp)
{
	struct pollfd pf = {tp->fd, POLLIN | POLLRDHUP, 0};

	return poll(&pf, 1, 0) == 1 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* Make sure a stream is connected, and probe one that sat idle (under c->mu). */
static rc_status rc__ensure(rc_client *c, int *err)
{
	if (c->tp != NULL && !c->dgram && c->tp->fd >= 0 && c->npending == 0 &&
	    rc__now() - c->last_io > RC__IDLE_CHECK_NS && rc__hung_up(c->tp))
		rc__disconnect(c); /* the server closed it: reconnect below */
	if (c->tp == NULL) {
		rc_status st = rc__connect(c);
		if (st != RC_OK) {
			*err = errno;
			return st;
		}
	}
	return RC_OK;
}

/* Encode a call for proc into b: header template then arguments. */
static rc_status rc__encode(rc_client *c, rc__encbuf *b, uint32_t proc, rc_xdrproc xargs,
                            const void *args, size_t *len)
{
	rc_xdr x;
	unsigned char *h;

	rc__encbuf_xdr(b, &x);
	pthread_mutex_lock(&c->mu);
	h = rc_xdr_inline(&x, c->hdrlen);
	if (h != NULL)
		memcpy(h, c->hdr, c->hdrlen);
	pthread_mutex_unlock(&c->mu);
	if (h == NULL)
		return b->toolarge ? RC_MSGTOOLARGE : RC_NOMEM;
	rc__put32(h + 20, proc);
	if (!xargs(&x, (void *)args))
		return b->toolarge ? RC_MSGTOOLARGE : RC_CANTENCODEARGS;
	*len = rc_xdr_getpos(&x);
	return RC_OK;
}

#define RC__CORK_MAX ((size_t)256 << 10)

/* Queue a record (mark + msg) for tp while corked (under c->smu). False: send it now. */
static bool rc__queue(rc_client *c, rc_tp *tp, const unsigned char *msg, size_t len)
{
	size_t need = c->outlen + len + 4;

	if (need > RC__CORK_MAX)
		return false;
	if (need > c->outcap) {
		size_t ncap = c->outcap ? c->outcap * 2 : 4096;
		unsigned char *nb;
		while (ncap < need)
			ncap *= 2;
		if ((nb = realloc(c->outq, ncap)) == NULL)
			return false;
		c->outq = nb;
		c->outcap = ncap;
	}
	rc__put32(c->outq + c->outlen, (uint32_t)len | RC_XDRREC_LAST_FRAG);
	memcpy(c->outq + c->outlen + 4, msg, len);
	c->outlen = need;
	c->outq_tp = tp;
	return true;
}

/* Send what is queued, blocking until it is all out (under c->smu). */
static rc_status rc__flush_queue(rc_client *c)
{
	size_t off = 0;

	while (off < c->outlen) {
		ssize_t n = rc__sendto(c->outq_tp->fd, c->outq + off, c->outlen - off, MSG_NOSIGNAL,
		                       NULL, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			c->outlen = 0;
			return RC_CANTSEND;
		}
		off += (size_t)n;
	}
	c->outlen = 0;
	return RC_OK;
}

/* Register p (encoded in msg) as in flight and send it. On failure p is not in flight. */
static rc_status rc__start(rc_client *c, rc_async *p, unsigned char *msg, size_t len, int flags)
{
	rc_status st;
	int64_t now = rc__now();
	int err = 0;
	rc_tp *tp;

	pthread_mutex_lock(&c->mu);
	if ((st = rc__ensure(c, &err)) != RC_OK) {
		pthread_mutex_unlock(&c->mu);
		p->err.sys_errno = err;
		return st == RC_NOMEM ? st : RC_CANTSEND;
	}
	if (len > c->max_msg) {
		pthread_mutex_unlock(&c->mu);
		return RC_MSGTOOLARGE;
	}
	p->xid = atomic_fetch_add_explicit(&c->xid, 1, memory_order_relaxed) + 1;
	rc__put32(msg, p->xid);
	if (c->trace != NULL && p->tr_begin != 0) {
		c->trace(c->trace_arg, RC_TP_CALL_BEGIN, p->xid, p->tr_begin);
		c->trace(c->trace_arg, RC_TP_ENCODED, p->xid, p->tr_encoded);
	}
	p->msg = msg;
	p->msglen = len;
	p->deadline = now + (int64_t)c->timeout_ms * 1000000;
	p->retry_ms = c->retry_ms < c->timeout_ms ? c->retry_ms : c->timeout_ms;
	p->next_retry = now + (int64_t)p->retry_ms * 1000000;
	p->st = RC_INPROGRESS;
	p->clnt = c;
	p->next = c->pending;
	p->prev = NULL;
	if (c->pending)
		c->pending->prev = p;
	c->pending = p;
	p->pending = true;
	p->starting = true;
	__atomic_store_n(&c->npending, c->npending + 1, __ATOMIC_RELAXED);
	tp = c->tp;
	if (c->dgram || tp->fd < 0) {
		/* datagrams need no send lock; in-process dispatch runs without our lock */
		pthread_mutex_unlock(&c->mu);
		st = tp->vt->send(tp, msg, len, NULL, c->dgram ? flags : 0, NULL);
		if (st == RC_AGAIN)
			st = RC_OK; /* socket buffer full: as if lost; retransmission covers it */
	} else {
		pthread_mutex_unlock(&c->mu);
		pthread_mutex_lock(&c->smu);
		if (c->outq_tp != tp)
			c->outlen = 0; /* queued for a connection that is gone (its calls failed) */
		if (c->cork > 0 && rc__queue(c, tp, msg, len)) {
			st = RC_OK;
		} else {
			st = rc__flush_queue(c);
			if (st == RC_OK)
				st = tp->vt->send(tp, msg, len, NULL, 0, NULL);
		}
		pthread_mutex_unlock(&c->smu);
	}
	{
		int e = errno;
		if (st == RC_OK && c->trace != NULL)
			rc__trace(c, RC_TP_SENT, p->xid);
		pthread_mutex_lock(&c->mu);
		p->starting = false;
		if (st != RC_OK && p->done) {
			/* another thread completed it meanwhile (e.g. the connection broke): that
			 * completion stands, and its callback will run */
			st = RC_OK;
		} else if (st != RC_OK) {
			rc__unlink(c, p);
			if (!c->dgram && c->tp == tp) {
				rc__fail_all(c, RC_CANTSEND, e);
				rc__break_stream(c);
			}
			p->err.sys_errno = e;
			st = st == RC_MSGTOOLARGE ? st : RC_CANTSEND;
		}
		pthread_mutex_unlock(&c->mu);
	}
	return st;
}

/* Wait for p as the reader or beside it (under c->mu), until it completes or `until`. */
static void rc__drive(rc_client *c, rc_async *p, int64_t until)
{
	while (!p->done) {
		int64_t now = rc__now();
		int64_t wake = rc__timers(c, now);
		if (p->done || now >= until)
			break;
		if (until < wake)
			wake = until;
		if (c->doneq != NULL && p->has_cb)
			break; /* let the caller run callbacks */
		if (!c->reading && c->tp != NULL) {
			if (rc__read(c, wake, 0) == RC_TIMEDOUT && !p->done)
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

#define RC__KEEP_MAX ((size_t)1 << 20) /* the largest encode buffer a client keeps */

/* The general path's fields of a blocking call (the fast path needs none of them). */
static inline void rc__call_init(rc_async *p)
{
	p->pending = p->done = p->has_cb = p->released = false;
	p->next = p->prev = NULL;
	p->msgblock = NULL;
	p->tr_begin = p->tr_encoded = 0;
}

/* Hand a heap encode buffer to the client for the next fast-path call (only the holder of the
 * reader's role). A client keeps at most one, of at most RC__KEEP_MAX bytes. */
static void rc__keep_buffer(rc_client *c, rc__encbuf *b)
{
	if (!b->heap || c->fastbuf != NULL || b->cap > RC__KEEP_MAX)
		return;
	c->fastbuf = b->data;
	c->fastcap = b->cap;
	rc__encbuf_detach(b);
}

/*
 * The fast path of a blocking call: nobody else is using the client, so this thread has taken
 * the reader's role (compare-and-swap, without the lock), and it sends and receives its reply
 * without registering the call or touching the lock. Anything unusual -- a timeout, another
 * call's reply, an error -- hands the call over to the general path, registered as in flight.
 * Returns true if the call finished here (*st set, lock not held), false if the caller
 * continues with rc__drive (p is then in flight and c->mu is held).
 */
static inline __attribute__((always_inline)) bool
rc__fast(rc_client *c, rc_async *p, rc__encbuf *b, uint32_t proc, rc_xdrproc xargs,
         const void *args, rc_status *st, int64_t now, const bool traced, uint64_t t0)
{
	rc_tp *tp = c->tp;
	unsigned char *msg = rc__encbuf_msg(b), *h;
	uint32_t interval;
	size_t len;
	rc_xdr x;
	void *rmsg = NULL;
	size_t rlen = 0;
	rc_status r;
	int e = 0;

	/* the reader's role taken and eligibility checked by the caller */
	atomic_store_explicit(&c->last_io, now, memory_order_relaxed);
	if (c->fastbuf != NULL && b->max + RC_TP_HEADROOM >= c->fastcap) {
		/* a message that outgrew the stack last time: reuse its heap buffer */
		b->data = c->fastbuf;
		b->cap = c->fastcap;
		b->heap = true;
		c->fastbuf = NULL;
	}
	p->xid = atomic_fetch_add_explicit(&c->xid, 1, memory_order_relaxed) + 1;
	/* the header template; every buffer has room for it (stack: RC__STACK_MSG bytes) */
	h = b->data + RC_TP_HEADROOM;
	if (c->hdrlen == 40)
		memcpy(h, c->hdr, 40); /* AUTH_NONE: a fixed-size copy the compiler inlines */
	else
		memcpy(h, c->hdr, c->hdrlen);
	rc__encbuf_xdr_at(b, &x, c->hdrlen);

	rc__put32(h, p->xid);
	rc__put32(h + 20, proc);
	if (traced)
		c->trace(c->trace_arg, RC_TP_CALL_BEGIN, p->xid, t0);
	if (!xargs(&x, (void *)args)) {
		*st = b->toolarge ? RC_MSGTOOLARGE : RC_CANTENCODEARGS;
		goto done;
	}
	msg = rc__encbuf_msg(b); /* the buffer may have moved to the heap */
	len = (size_t)(x.x_pos - x.x_base);
	if (len > c->max_msg) {
		*st = RC_MSGTOOLARGE;
		goto done;
	}
	if (traced)
		rc__trace(c, RC_TP_ENCODED, p->xid);
	r = tp->vt->send(tp, msg, len, NULL, 0, NULL);
	if (traced && r == RC_OK)
		rc__trace(c, RC_TP_SENT, p->xid);
	if (r != RC_OK) {
		e = errno;
		pthread_mutex_lock(&c->mu);
		c->reading = false;
		if (!c->dgram) {
			rc__fail_all(c, RC_CANTSEND, e);
			rc__disconnect(c);
		}
		rc__wake(c);
		pthread_mutex_unlock(&c->mu);
		p->err.sys_errno = e;
		*st = r == RC_MSGTOOLARGE ? r : RC_CANTSEND;
		return true;
	}
	interval = c->dgram && c->retry_ms < c->timeout_ms ? c->retry_ms : c->timeout_ms;
	if (tp->rcvtimeo_ms != (int)interval)
		rc__tp_set_rcvtimeo(tp, (int)interval);
	r = tp->vt->recv(tp, &rmsg, &rlen, NULL, 0);
	if (r == RC_OK && rlen >= 24 && rc__get32(rmsg) == p->xid) {
		const unsigned char *m = rmsg;
		uint64_t type_stat, verflen_accept;
		if (traced)
			rc__trace(c, RC_TP_REPLY, p->xid);
		/* the usual reply: REPLY, MSG_ACCEPTED, a verifier with an empty body, SUCCESS */
		memcpy(&type_stat, m + 4, 8);
		memcpy(&verflen_accept, m + 16, 8);
		if (type_stat == rc__reply_accepted && verflen_accept == 0) {
			rc__xdr_decoder(&x, m + 24, rlen - 24, c->max_msg * 4 + 4096);
			*st = p->xres(&x, p->res) ? RC_OK : RC_CANTDECODERES;
		} else {
			rc__xdr_decoder(&x, m + 4, rlen - 4, c->max_msg * 4 + 4096);
			*st = rc__reply_header(&x, &p->err);
			if (*st == RC_OK && !p->xres(&x, p->res))
				*st = RC_CANTDECODERES;
			if (*st == RC_BADREPLY && c->dgram)
				goto general; /* mangled datagram: wait for the real reply */
		}
		if (traced)
			rc__trace(c, RC_TP_DECODED, p->xid);
		/* done: keep the buffer, give up the reader's role without the lock (see
		 * rc_client.reading: the atomic store publishes fastbuf too) */
		rc__keep_buffer(c, b);
		atomic_store(&c->reading, false);
		if (atomic_load(&c->nwaiters) > 0) {
			pthread_mutex_lock(&c->mu);
			pthread_cond_broadcast(&c->cv);
			pthread_mutex_unlock(&c->mu);
		}
		return true;
	}
	if (r == RC_CANTRECV)
		e = errno;
general:
	/* register the call as in flight and let the general path finish it */
	rc__call_init(p);
	pthread_mutex_lock(&c->mu);
	p->msg = msg;
	p->msglen = len;
	p->deadline = now + (int64_t)c->timeout_ms * 1000000;
	p->retry_ms = interval;
	p->next_retry = now + (int64_t)interval * 1000000;
	p->st = RC_INPROGRESS;
	p->clnt = c;
	p->next = c->pending;
	p->prev = NULL;
	if (c->pending)
		c->pending->prev = p;
	c->pending = p;
	p->pending = true;
	__atomic_store_n(&c->npending, c->npending + 1, __ATOMIC_RELAXED);
	rc__after_recv(c, r, rmsg, rlen, e);
	return false;
done:
	pthread_mutex_lock(&c->mu);
	c->reading = false;
	rc__wake(c);
	pthread_mutex_unlock(&c->mu);
	return true;
}

/*
 * Take the reader's role for a fast-path call if nobody holds it, and keep it if the client is
 * idle: no call in flight, no callbacks waiting, a connected socket, no spinning, and a stream
 * used within RC__IDLE_CHECK_NS or, if older, not closed by the peer meanwhile (one poll; a
 * closed one goes to the general path, which reconnects). The fields
 * are read without the lock: a call another thread registers meanwhile finds the role taken
 * and waits as a follower, and its reply, if it comes first, sends this call down the general
 * path, which hands it over. Returns true with the role held.
 */
static inline __attribute__((always_inline)) bool rc__fast_eligible(rc_client *c, int64_t now)
{
	bool idle = false;
	rc_tp *tp;

	if (!atomic_compare_exchange_strong(&c->reading, &idle, true))
		return false;
	tp = __atomic_load_n(&c->tp, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&c->npending, __ATOMIC_RELAXED) == 0 &&
	    __atomic_load_n(&c->doneq, __ATOMIC_RELAXED) == NULL && tp != NULL && tp->fd >= 0 &&
	    c->spin_us == 0 &&
	    (c->dgram ||
	     now - atomic_load_explicit(&c->last_io, memory_order_relaxed) <= RC__IDLE_CHECK_NS ||
	     !rc__hung_up(tp)))
		return true;
	atomic_store(&c->reading, false);
	if (atomic_load(&c->nwaiters) > 0) {
		pthread_mutex_lock(&c->mu);
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
	}
	return false;
}

/*
 * A blocking call. Inlined twice (rc_call): untraced, with no trace code at all, and traced,
 * reporting each step to the client's trace function.
 */
static inline __attribute__((always_inline)) rc_status
rc__call(rc_client *clnt, uint32_t proc, rc_xdrproc xargs, const void *args, rc_xdrproc xres,
         void *res, const bool traced)
{
	unsigned char stack[RC__STACK_MSG];
	rc__encbuf b;
	rc_async p;
	size_t len;
	rc_status st;
	int64_t now;
	uint64_t t0 = traced ? rc__trace_clock() : 0;

	p.err = (rc_error){0};
	p.xres = xres ? xres : rc_xdr_void;
	p.res = res;
	xargs = xargs ? xargs : rc_xdr_void;
	rc__encbuf_init(&b, stack, sizeof(stack), clnt->max_msg);

	now = rc__now();
	if (rc__fast_eligible(clnt, now)) {
		if (rc__fast(clnt, &p, &b, proc, xargs, args, &st, now, traced, t0)) {
			goto out;
		}
		/* p is in flight; the lock is held */
	} else {
		rc__call_init(&p);
		st = rc__encode(clnt, &b, proc, xargs, args, &len);
		if (traced) {
			p.tr_begin = t0;
			p.tr_encoded = rc__trace_clock();
		}
		if (st == RC_OK)
			st = rc__start(clnt, &p, rc__encbuf_msg(&b), len, 0);
		if (st != RC_OK)
			goto out;
		pthread_mutex_lock(&clnt->mu);
	}
	rc__drive(clnt, &p, INT64_MAX);
	rc__unlink(clnt, &p);
	{
		bool idle = false;
		if (b.heap && atomic_compare_exchange_strong(&clnt->reading, &idle, true)) {
			rc__keep_buffer(clnt, &b);
			atomic_store(&clnt->reading, false);
			if (atomic_load(&clnt->nwaiters) > 0)
				pthread_cond_broadcast(&clnt->cv);
		}
	}
	pthread_mutex_unlock(&clnt->mu);
	st = p.st;
out:
	p.err.status = st;
	rc__set_lasterr(clnt, &p.err);
	rc__encbuf_free(&b);
	return st;
}

static __attribute__((noinline)) rc_status rc__call_traced(rc_client *clnt, uint32_t proc,
                                                            rc_xdrproc xargs, const void *args,
                                                            rc_xdrproc xres, void *res)
{
	return rc__call(clnt, proc, xargs, args, xres, res, true);
}

rc_status rc_call(rc_client *clnt, uint32_t proc, rc_xdrproc xargs, const void *args,
                  rc_xdrproc xres, void *res)
{
	if (clnt == NULL)
		return RC_INVAL;
	if (__builtin_expect(clnt->trace != NULL, 0))
		return rc__call_traced(clnt, proc, xargs, args, xres, res);
	return rc__call(clnt, proc, xargs, args, xres, res, false);
}

/* ---- started calls ---------------------------------------------------------------------- */

rc_status rc_call_start(rc_client *clnt, uint32_t proc, rc_xdrproc xargs, const void *args,
                        rc_xdrproc xres, void *res, rc_async_cb cb, void *udata,
                        rc_async **out)
{
	unsigned char stack[RC__STACK_MSG];
	rc__encbuf b;
	rc_async *p;
	size_t len;
	rc_status st;

	if (out)
		*out = NULL;
	if (clnt == NULL || (cb == NULL && out == NULL))
		return RC_INVAL;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return RC_NOMEM;
	p->xres = xres ? xres : rc_xdr_void;
	p->res = res;
	p->cb = cb;
	p->udata = udata;
	p->has_cb = cb != NULL;
	rc__encbuf_init(&b, stack, sizeof(stack), clnt->max_msg);
	st = rc__encode(clnt, &b, proc, xargs ? xargs : rc_xdr_void, args, &len);
	if (st == RC_OK && clnt->dgram) {
		/* keep the message for retransmission */
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
		st = rc__start(clnt, p, msg, len, MSG_DONTWAIT);
	}
	rc__encbuf_free(&b);
	if (st != RC_OK) {
		rc__free_call(p);
		return st;
	}
	if (out)
		*out = p;
	return RC_OK;
}

rc_status rc_async_status(const rc_async *call)
{
	rc_status st;

	if (call == NULL)
		return RC_INVAL;
	pthread_mutex_lock(&call->clnt->mu);
	st = call->done ? call->st : RC_INPROGRESS;
	pthread_mutex_unlock(&call->clnt->mu);
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
	c = call->clnt;
	until = timeout_ms < 0 ? INT64_MAX : rc__now() + (int64_t)timeout_ms * 1000000;
	pthread_mutex_lock(&c->mu);
	for (;;) {
		rc__drive(c, call, until);
		done = call->done;
		st = done ? call->st : RC_INPROGRESS;
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

void rc_async_cancel(rc_async *call)
{
	rc_client *c;

	if (call == NULL)
		return;
	c = call->clnt; /* rc__complete may free a released call */
	pthread_mutex_lock(&c->mu);
	rc__complete(c, call, RC_CANCELLED);
	pthread_mutex_unlock(&c->mu);
}

void rc_async_release(rc_async *call)
{
	rc_client *c;

	if (call == NULL || call->has_cb)
		return;
	c = call->clnt;
	pthread_mutex_lock(&c->mu);
	if (call->done) {
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

rc_status rc_client_pollinfo(rc_client *clnt, int *fd, short *events, int *timeout_ms)
{
	int64_t next, now;

	if (clnt == NULL || fd == NULL || events == NULL || timeout_ms == NULL)
		return RC_INVAL;
	pthread_mutex_lock(&clnt->mu);
	*fd = clnt->tp ? clnt->tp->fd : -1;
	*events = clnt->npending > 0 && *fd >= 0 ? POLLIN : 0;
	now = rc__now();
	next = INT64_MAX;
	for (rc_async *p = clnt->pending; p; p = p->next) {
		if (p->deadline < next)
			next = p->deadline;
		if (clnt->dgram && p->next_retry < next)
			next = p->next_retry;
	}
	if (clnt->doneq != NULL || (clnt->npending > 0 && *fd < 0))
		next = now; /* work to do at once */
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
	rc_status st = RC_OK;

	if (clnt == NULL)
		return RC_INVAL;
	pthread_mutex_lock(&clnt->mu);
	if (clnt->tp != NULL && (revents != 0 || clnt->tp->fd < 0)) {
		/* read everything that is there */
		for (int i = 0; i < 1024; i++) {
			rc_status r = rc__read(clnt, 0, MSG_DONTWAIT);
			if (r == RC_OK)
				continue;
			if (r != RC_AGAIN && r != RC_TIMEDOUT)
				st = r == RC_CLOSED ? RC_CANTRECV : r;
			break;
		}
	}
	(void)rc__timers(clnt, rc__now());
	pthread_mutex_unlock(&clnt->mu);

	pthread_mutex_lock(&clnt->smu);
	clnt->cork++;
	pthread_mutex_unlock(&clnt->smu);
	rc__run_callbacks(clnt);
	pthread_mutex_lock(&clnt->smu);
	if (--clnt->cork == 0 && clnt->outlen > 0) {
		rc_tp *tp = clnt->outq_tp;
		rc_status fs = rc__flush_queue(clnt);
		int e = errno;
		pthread_mutex_unlock(&clnt->smu);
		if (fs != RC_OK) {
			pthread_mutex_lock(&clnt->mu);
			if (clnt->tp == tp) {
				rc__fail_all(clnt, RC_CANTSEND, e);
				rc__disconnect(clnt);
			}
			pthread_mutex_unlock(&clnt->mu);
			rc__run_callbacks(clnt);
			st = RC_CANTSEND;
		}
	} else {
		pthread_mutex_unlock(&clnt->smu);
	}
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
	pthread_mutex_unlock(&clnt->mu);
	rc__run_callbacks(clnt);
	if (clnt->tp)
		clnt->tp->vt->close(clnt->tp);
	pthread_cond_destroy(&clnt->cv);
	pthread_mutex_destroy(&clnt->mu);
	pthread_mutex_destroy(&clnt->smu);
	free(clnt->outq);
	free(clnt->fastbuf);
	free(clnt);
}

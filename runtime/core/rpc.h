/*
 * Internal to the runtime: ONC RPC v2 message constants (RFC 5531), the growable encode buffer,
 * the reply-header decoder the client uses and the call-header decoder the server uses.
 */
#ifndef RC_RPC_H
#define RC_RPC_H

#include <stdbool.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <remotecall/client.h>
#include <remotecall/server.h>
#include <remotecall/xdr.h>

#include "transports/transport.h"
#include "xdr/base.h"

enum { RC__CALL = 0, RC__REPLY = 1 };
enum { RC__MSG_ACCEPTED = 0, RC__MSG_DENIED = 1 };
enum {
	RC__SUCCESS = 0,
	RC__PROG_UNAVAIL = 1,
	RC__PROG_MISMATCH = 2,
	RC__PROC_UNAVAIL = 3,
	RC__GARBAGE_ARGS = 4,
	RC__SYSTEM_ERR = 5
};
enum { RC__RPC_MISMATCH = 0, RC__AUTH_ERROR = 1 };
enum {
	RC__AUTH_OK = 0,
	RC__AUTH_BADCRED = 1,
	RC__AUTH_REJECTEDCRED = 2,
	RC__AUTH_BADVERF = 3,
	RC__AUTH_REJECTEDVERF = 4,
	RC__AUTH_TOOWEAK = 5
};
#define RC__RPCVERS 2u

/* The program a failover client calls first on each connection to be told of a drain
 * (docs/load-balancing.md, "Drain and failover"): version 1, procedure 1 (NOTICE). Served by
 * server/drain.c, called by client/common.c's rc__notice. */
#define RC__CTL_PROG 0x3fd7c0deu
#define RC__CTL_VERS 1u
#define RC__CTL_NOTICE 1u

/* The time stamps of <remotecall/trace.h>: the shared monotonic clock. */
#define rc__trace_clock rc__clock_ns

/* A bounds-checked reader over a received message. */
typedef struct rc__rd {
	const unsigned char *p, *end;
} rc__rd;

static inline bool rc__rd32(rc__rd *r, uint32_t *v)
{
	if (r->end - r->p < 4)
		return false;
	*v = rc__ld32(r->p);
	r->p += 4;
	return true;
}

/* n opaque bytes plus padding; NULL if the message is shorter. */
static inline const unsigned char *rc__rdn(rc__rd *r, uint32_t n)
{
	size_t k = ((size_t)n + 3) & ~(size_t)3;
	const unsigned char *q = r->p;

	if ((size_t)(r->end - r->p) < k)
		return NULL;
	r->p += k;
	return q;
}

/*
 * A growable encode buffer: starts in caller-provided (stack) memory, moves to the heap when
 * a message outgrows it, and refuses to grow past max (toolarge is then set). The message is
 * encoded at data + RC_TP_HEADROOM.
 */
#define RC__GSEGS 4 /* pieces a message may gather (rc__gseg); more are copied as usual */

typedef struct rc__encbuf {
	unsigned char *data;
	size_t cap;
	size_t max;
	bool heap;
	bool toolarge;
	bool gather;         /* big opaque<> / string<> may be gathered (set before encoding) */
	unsigned nseg;       /* with gather: the gathered pieces, in order */
	size_t gbytes;       /* with gather: their bytes */
	rc__gseg seg[RC__GSEGS];
} rc__encbuf;

static inline void rc__encbuf_init(rc__encbuf *b, void *stack, size_t stacksize, size_t max)
{
	b->data = stack;
	b->cap = stacksize;
	b->max = max;
	b->heap = false;
	b->toolarge = false;
	b->gather = false; /* (nseg and gbytes are set by an encode with gather on) */
}

/* The x_gather of an encode buffer's stream: take data by reference while pieces remain and
 * the whole message stays within the buffer's max (msg.c). */
bool rc__encbuf_gather(rc_xdr *x, const void *p, uint32_t len);

/* Turn gathering on for the rest of an encode on x over b (set up by rc__encbuf_xdr_at). */
static inline void rc__encbuf_gather_on(rc__encbuf *b, rc_xdr *x)
{
	b->gather = true;
	b->nseg = 0;
	b->gbytes = 0;
	x->x_gather = rc__encbuf_gather;
}
/* The x_more of an encode buffer's stream (msg.c). */
bool rc__encbuf_grow(rc_xdr *x, size_t need);

/* An encode stream over b positioned `skip` bytes into the message (the caller wrote them),
 * set up field by field: this is the hot path of every call. */
static inline void rc__encbuf_xdr_at(rc__encbuf *b, rc_xdr *x, size_t skip)
{
	x->x_op = RC_XDR_ENCODE;
	x->x_base = b->data + RC_TP_HEADROOM;
	x->x_pos = x->x_base + skip;
	x->x_end = b->data + b->cap;
	x->x_done = 0;
	x->x_more = rc__encbuf_grow;
	x->x_ctx = b;
	x->x_write = NULL;
	x->x_budget = RC_XDR_DEFAULT_ALLOC_LIMIT;
	x->x_depth = 0;
	x->x_maxdepth = RC_XDR_DEFAULT_MAX_DEPTH;
	x->x_lend_lo = x->x_lend_hi = NULL;
	x->x_gather = NULL;
	x->x_rest = 0;
	x->x_pull = NULL;
	if (b->gather)
		rc__encbuf_gather_on(b, x);
}

/* A decode stream over buf[0..len) allowed to allocate `budget` bytes (field by field, as
 * above). */
static inline void rc__xdr_decoder(rc_xdr *x, const void *buf, size_t len, size_t budget)
{
	x->x_op = RC_XDR_DECODE;
	x->x_base = (unsigned char *)buf;
	x->x_pos = x->x_base;
	x->x_end = x->x_base + len;
	x->x_done = 0;
	x->x_more = NULL;
	x->x_ctx = NULL;
	x->x_write = NULL;
	x->x_budget = budget;
	x->x_depth = 0;
	x->x_maxdepth = RC_XDR_DEFAULT_MAX_DEPTH;
	x->x_lend_lo = x->x_lend_hi = NULL;
	x->x_gather = NULL;
	x->x_rest = 0;
	x->x_pull = NULL;
}
/* rc_xdr_free with a lending window: pointers into [lo, hi) (lent by a decode) stay. */
static inline void rc__xdr_free_lent(rc_xdrproc proc, void *obj, const void *lo, const void *hi)
{
	rc_xdr x;

	rc_xdrmem_create(&x, NULL, 0, RC_XDR_FREE);
	x.x_lend_lo = lo;
	x.x_lend_hi = hi;
	(void)proc(&x, obj);
}

/* Start an encode stream over b, after the headroom. */
void rc__encbuf_xdr(rc__encbuf *b, rc_xdr *x);
/* The message encoded so far: data + headroom, length rc_xdr_getpos(x). */
static inline unsigned char *rc__encbuf_msg(rc__encbuf *b)
{
	return b->data + RC_TP_HEADROOM;
}
static inline void rc__encbuf_free(rc__encbuf *b)
{
	if (b->heap)
		free(b->data);
	b->data = NULL;
	b->heap = false;
}
/* Keep the heap buffer (the caller takes b->data and frees it). */
static inline void rc__encbuf_detach(rc__encbuf *b)
{
	b->data = NULL;
	b->heap = false;
}

/* Send credentials of a plain flavor (auth.h: AUTH_NONE, AUTH_SYS), given encoded (flavor,
 * body of len bytes, at most RC__MAX_AUTH_BYTES), with clnt's calls from now on (the Sun
 * layer's AUTHs). RC_OK, RC_NOMEM, or RC_INVAL (not a plain flavor, a body too long). */
rc_status rc__client_set_cred(rc_client *clnt, uint32_t flavor, const unsigned char *cred,
                              size_t len);

/* An accepted reply's verifier as it came (body points into the reply). */
typedef struct rc__verf {
	uint32_t flavor;
	uint32_t len;
	const unsigned char *body;
} rc__verf;

/*
 * Decode a reply's header from x (positioned after the xid). On RC_OK x is positioned at the
 * results. Otherwise the call's status (RC_PROGUNAVAIL, RC_VERSMISMATCH, ...), with details in
 * *err; RC_BADREPLY if the header is malformed. An accepted reply's verifier (whatever its
 * accept_stat) goes to *v when v is not NULL (a denied reply leaves it
 * untouched); checking it is the caller's, through its credentials' flavor (auth.h).
 */
rc_status rc__reply_header(rc_xdr *x, rc_error *err, rc__verf *v);

/* Thread-local detail of the last call, for rc_client_geterr. */
void rc__set_lasterr(const rc_client *c, const rc_error *e);

/* Put text (another layer's words: GSS's, OpenSSL's, a transport's) into an rc_error detail
 * dst[0..cap): whole when it fits, else cut at the last word boundary that leaves room for
 * "..." (inside a word only when one word fills it), the ellipsis marking the cut (status.c). */
void rc__detail_put(char *dst, size_t cap, const char *text);

/*
 * The client's own open, for the layer above it (rpcbind.c's rc_client_create_ex resolves a
 * udp/tcp URI's missing port first; client.c never calls rpcbind.c): a connected client for
 * prog, vers at u (copied). On RC_OK *out is the caller's to destroy; on failure it is NULL,
 * nothing is left allocated and a failed connect keeps errno. Returns RC_OK, RC_INVAL (NULL
 * out or u), RC_NOMEM, or the transport's connect failure (RC_UNKNOWNHOST, RC_CANTSEND, ...).
 */
rc_status rc__client_open(rc_client **out, const rc_uri *u, uint32_t prog, uint32_t vers);
/* A client of prog, vers over tp, a transport of kind made elsewhere (a server connection's
 * back channel, backchan.c), which the client owns from here on (rc_client_destroy closes it),
 * on success only. RC_OK with *out, or RC_NOMEM (*out NULL). */
rc_status rc__client_open_tp(rc_client **out, const rc_tp_kind *kind, rc_tp *tp, uint32_t prog,
                             uint32_t vers);
/* Whether c calls over a server connection's back channel (rc__client_open_tp). */
bool rc__client_back(const rc_client *c);

/*
 * The server that answers the calls a client's peer sends on the client's connection, as the
 * back channel above the client makes it (backchan/'s rc_client_serve): the client engine
 * knows no server, only these. create makes one into *srv; add registers def (with ctx) on
 * it (rc_server_register's statuses); deliver serves one call, and passes its reply to reply
 * (the engine calls it outside its lock); destroy ends it with the client.
 */
typedef struct rc__cl_server {
	rc_status (*create)(void **srv);
	rc_status (*add)(void *srv, const rc_svc_prog *def, void *ctx);
	void (*deliver)(void *srv, const void *msg, size_t len, rc_reply_fn reply, void *rctx);
	void (*destroy)(void *srv);
} rc__cl_server;
/* rc_client_serve's work on c (not NULL): the server made with ops on first use (kept until
 * rc_client_destroy), and def (not NULL) added to it. rc_client_serve's statuses. */
rc_status rc__client_serve_with(rc_client *c, const rc__cl_server *ops, const rc_svc_prog *def,
                                void *ctx);

/*
 * broadcast.c: rc_broadcast's engine. rc__broadcast_to sends one call to to[0..nto) (IPv4
 * and IPv6 addresses may mix) and hands each successful reply to fn as rc_broadcast does;
 * resends after first_ms, then every interval doubled (double_it) or grown by 2 s up to 14 s.
 * rc__broadcast_ifaces does it to every interface's IPv4 broadcast address at port, doubling
 * (clnt_broadcast's way). Statuses as rc_broadcast's; RC_CANTSEND when no interface can
 * broadcast or no send went out.
 */
rc_status rc__broadcast_to(const rc_peer *to, size_t nto, uint32_t prog, uint32_t vers,
                           uint32_t proc, rc_xdrproc xargs, const void *args, rc_xdrproc xres,
                           size_t res_size, rc_broadcast_fn fn, void *udata,
                           uint32_t timeout_ms, uint32_t first_ms, bool double_it);
rc_status rc__broadcast_ifaces(uint16_t port, uint32_t prog, uint32_t vers, uint32_t proc,
                               rc_xdrproc xargs, const void *args, rc_xdrproc xres,
                               size_t res_size, rc_broadcast_fn fn, void *udata,
                               uint32_t timeout_ms, uint32_t first_ms);

#endif

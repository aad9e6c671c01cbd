/*
 * Auth flavors as objects (RFC 5531 sections 8.2 and 9), internal to the runtime.
 *
 * One interface, used by the server's serve step (serve.c), the client's call engine
 * (client.c, msg.c) and the Sun layer (sunrpc.c), and one registry by flavor number. A flavor
 * says how a call's credential and verifier are made and checked, what verifier a reply
 * carries and how it is checked, and whether (and how) the call's arguments and results are
 * wrapped. The engine and the serve step hold no flavor-specific branch; they ask the object.
 *
 * Flavors here: AUTH_NONE and AUTH_SYS (auth.c), the RFC 9289 AUTH_TLS probe (auth.c; a
 * server side only: a client probes in the transport, transports/tls.c). A new flavor (for
 * example RPCSEC_GSS, flavor 6) is one file with its rc__flavor and one line in the registry
 * (rc__flavors in auth_reg.c); docs/design.md, "Adding an auth flavor".
 *
 * Speed: AUTH_NONE and AUTH_SYS are "plain" flavors (RC__FL_PLAIN): a constant credential, an
 * AUTH_NONE verifier both ways, nothing wrapped. The fast paths test for that property of the
 * object (one load and a bit test), never for flavor numbers, and then write the fixed header
 * bytes themselves; every other flavor takes the general path through the methods below.
 */
#ifndef RC_AUTH_H
#define RC_AUTH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <remotecall/client.h>
#include <remotecall/server.h>
#include <remotecall/xdr.h>
#include "xdr/base.h"

struct rc__wctx;
struct rc__gss_table;
typedef struct rc__flavor rc__flavor;

/* rc__flavor.props */
#define RC__FL_PLAIN 1u /* constant credential, AUTH_NONE verifiers, no wrapping (see above) */

/* svc_accept's answers other than 0 (accepted) and an RFC 5531 auth_stat (1..): */
#define RC__AUTH_DROP 0xFFFFFFFFu     /* drop the call without a reply (e.g. a replayed seq) */
#define RC__AUTH_ANSWERED 0xFFFFFFFEu /* the flavor answered the call itself (its reply is in
                                         the call's reply buffer, length in *rlen): a control
                                         procedure, or the AUTH_TLS probe */

/* RFC 5531 auth_stat values beyond rpc.h's (RFC 2203 adds 13 and 14). */
enum {
	RC__AUTH_INVALIDRESP = 6, /* the client: a reply verifier its flavor rejects */
	RC__AUTH_FAILED = 7,
	RC__AUTH_CREDPROBLEM = 13,
	RC__AUTH_CTXPROBLEM = 14
};

/* ---- server side ------------------------------------------------------------------------ */

/*
 * The flavors sit below the server (server/, which asks them through this interface): they
 * know no server object. What a flavor's server side needs of the server comes with each
 * call -- the call's facts (rc__svc_call), the server's RPCSEC_GSS contexts and counter, and
 * its reply encoders for a call the flavor answers itself (rc__svc_replies) -- and what it
 * learns of the call goes into the call's rc__svc_auth, which the request keeps and its
 * accessors read.
 */
typedef struct rc__svc_call rc__svc_call;
typedef struct rc__svc_auth rc__svc_auth;

/* The server's reply encoders, for a call its flavor answers (RC__AUTH_ANSWERED): each writes
 * a reply to in->xid into in->w's buffer, at most in->max bytes, and returns its length, 0
 * when none can be made (nothing is sent). server/reply.c implements them
 * (rc__flavor_replies).
 * simple -- a reply with no body beyond its status: denied (stat: reject_stat, extra:
 * AUTH_ERROR's auth_stat) or accepted (stat: accept_stat) with an AUTH_NONE verifier.
 * accepted -- an accepted reply through stat with a's verifier (its flavor's svc_verf, else
 * a->verf_flavor and a->verf; a NULL: AUTH_NONE), then the results as sent: body[0..n),
 * padded to a multiple of 4.
 * starttls -- SUCCESS with verifier AUTH_NONE "STARTTLS" (RFC 9289's answer to a probe); the
 * server starts TLS on the connection once it is out. */
typedef struct rc__svc_replies {
	size_t (*simple)(const rc__svc_call *in, bool denied, uint32_t stat, const uint32_t *extra,
	                 int nextra);
	size_t (*accepted)(const rc__svc_call *in, uint32_t stat, const rc__svc_auth *a,
	                   const unsigned char *body, size_t n);
	size_t (*starttls)(const rc__svc_call *in);
} rc__svc_replies;

/* What svc_accept sees of one call (all pointers into the call message, valid during the
 * call; lengths already checked against the message and RC__MAX_AUTH_BYTES). */
struct rc__svc_call {
	const rc__svc_replies *reply; /* the server's encoders, for a call the flavor answers */
	struct rc__wctx *w;          /* the reply buffer they write (the server's) */
	size_t max;                  /* the largest reply */
	struct rc__gss_table *gss;   /* the server's RPCSEC_GSS contexts (rc_server_set_gss), or
	                                NULL: it takes no RPCSEC_GSS call */
	uint64_t *gss_dropped;       /* ... and its count of those dropped unanswered (replays,
	                                outside the window; atomic, relaxed: rc_server_stats) */
	const unsigned char *msg;    /* the call message, from its xid */
	size_t hdrlen;               /* bytes from the xid through the credential's body (what an
	                                RPCSEC_GSS header checksum covers) */
	uint32_t xid, prog, vers, proc;
	uint32_t flavor;             /* the credential */
	const unsigned char *cred;   /* (NULL when credlen is 0) */
	uint32_t credlen;
	uint32_t vflavor;            /* the verifier */
	const unsigned char *verf;
	uint32_t vlen;
	const unsigned char *body;   /* what follows the verifier (arguments, as sent) */
	size_t bodylen;
	bool dgram;                  /* a datagram call */
	struct rc_tp *conn;          /* the connection it came on (NULL: a datagram): its TLS
	                                exporter binds RPCSEC_GSS contexts (rc__tp_exporter) */
	bool tls;                    /* it came on a connection under TLS */
	bool can_tls;                /* ... or on one the server could start TLS on (a stream
	                                that can, and the server has a TLS context) */
};

/* One call's authentication, kept with its request until the reply is made (which may be
 * later, from another thread: a deferred request). The serve step sets fl and zeroes the
 * fields from ctx through verf_len for each call; the flavor fills them. */
struct rc__svc_auth {
	const rc__flavor *fl; /* the flavor that accepted the call */
	void *ctx;            /* the flavor's reference (e.g. a security context); svc_release
	                         lets it go */
	uint32_t seq;         /* the flavor's number for the call (RPCSEC_GSS: seq_num) */
	uint32_t service;     /* how the body is protected (RPCSEC_GSS: 1 none, 2 integrity,
	                         3 privacy); 0 for plain flavors */
	const unsigned char *ctx_id; /* RC__DRC_CTX_ID_LEN bytes naming the security context
	                                the call came under (RPCSEC_GSS: its handle; valid while
	                                ctx is held), NULL for none: part of the duplicate request
	                                cache's key */
	/* a reply verifier the server's auth hook chose (rc_svc_req_set_verf); plain flavors */
	uint32_t verf_flavor;
	uint32_t verf_len;
	unsigned char verf[RC__MAX_AUTH_BYTES];
	/* AUTH_SYS (set by its svc_accept, read only for a call of that flavor: the request's
	 * rc_svc_req_authsys and, for the Sun layer, rc__svc_req_unixcred): the credential, and
	 * Sun's view of it pointing into it */
	rc_authsys sys;
	rc_svc_unixcred ucred;
};

/* ---- client side ------------------------------------------------------------------------ */

/* A client's credentials of a flavor that is not plain: the flavor object and its state,
 * counted (the client's current credentials hold one reference, and each call in flight that
 * was sealed with them one more). Made by the flavor (malloc'd, refs 1); rc__cl_auth_unref
 * lets go of one, the last calls cl_destroy and frees it. */
typedef struct rc__cl_auth {
	const rc__flavor *fl;
	_Atomic unsigned refs;
	void *priv;                               /* the flavor's state */
	/* The most calls in flight under these credentials at once (a server's RPCSEC_GSS
	 * sequence window: a call numbered that far past the oldest unanswered one could be
	 * dropped as too old); 0: no bound. The client's engine makes a call wait before it is
	 * sealed while inflight is at window (rc__start). */
	_Atomic uint32_t window;
	_Atomic uint32_t inflight;                /* calls in flight under them now */
} rc__cl_auth;

/* The sequence numbers a call went out with (a retransmission of a call of a flavor that
 * numbers calls goes with a new one); a reply verifier is checked against each. */
#define RC__CL_SEQS 4
typedef struct rc__cl_seqs {
	unsigned n;                  /* how many of seq are in use (the last RC__CL_SEQS) */
	uint32_t seq[RC__CL_SEQS];
} rc__cl_seqs;

/* ---- the flavor ------------------------------------------------------------------------- */

struct rc__flavor {
	uint32_t number; /* RFC 5531 flavor number */
	const char *name;
	unsigned props;  /* RC__FL_* */

	/* Server (NULL svc_accept: the server does not accept this flavor -- AUTH_REJECTEDCRED). */

	/* Check call *in's credential and verifier; fill *a (a->fl set, the rest zeroed). req is
	 * the call's handle, for the rc_svc_req_* accessors. Returns 0 (accepted), an auth_stat
	 * (the call gets an AUTH_ERROR reply), RC__AUTH_DROP or RC__AUTH_ANSWERED (*rlen: the
	 * reply's length). On anything but 0, a->ctx is left NULL (nothing to release). */
	uint32_t (*svc_accept)(const rc__svc_call *in, rc__svc_auth *a, rc_svc_req *req,
	                       size_t *rlen);
	/* The verifier of an accepted reply to the call a stands for: flavor, body (at most
	 * RC__MAX_AUTH_BYTES) into *vflavor, body, *vlen. False: no reply can be made (it is
	 * dropped). NULL: AUTH_NONE (or the one the auth hook set, a->verf_len). */
	bool (*svc_verf)(const rc__svc_auth *a, uint32_t *vflavor, unsigned char *body,
	                 uint32_t *vlen);
	/* The call's arguments as sent (p, n) -> as the procedure decodes them: *out, *outn, with
	 * *owned a malloc'd block to free once decoded (or NULL when *out points into p). Returns
	 * 0 or an accept_stat (RC__GARBAGE_ARGS) / RC__AUTH_DROP. NULL: the bytes as they are. */
	uint32_t (*svc_unwrap)(const rc__svc_auth *a, const unsigned char *p, size_t n,
	                       const unsigned char **out, size_t *outn, void **owned);
	/* Encode *res with xres into x as the flavor wraps results. False: not encoded (x's
	 * buffer too small, or the flavor failed). NULL: xres straight into x. */
	bool (*svc_wrap)(const rc__svc_auth *a, rc_xdr *x, rc_xdrproc xres, const void *res);
	/* Let go of a->ctx (the reply is made or the call is dropped). NULL: nothing held. */
	void (*svc_release)(rc__svc_auth *a);

	/* Client (all NULL for plain flavors, whose credential the engine keeps in its header
	 * template). Each method may run on any thread; the engine serialises none of them. */

	/* Write a call's credential and verifier into x (after the call's first 24 bytes, head:
	 * xid through procedure, given for a header checksum); *seq: the number this
	 * transmission goes with. A retransmission is marshalled again (a fresh number). False
	 * on failure (the call fails with RC_AUTHERROR; err->detail may say why). */
	bool (*cl_marshal)(rc__cl_auth *a, const unsigned char *head, rc_xdr *x, uint32_t *seq,
	                   rc_error *err);
	/* The call's encoded arguments (args, n) as the flavor protects them, into x, for the
	 * transmission numbered seq. NULL: the bytes as they are. */
	bool (*cl_wrap)(rc__cl_auth *a, uint32_t seq, const unsigned char *args, size_t n,
	                rc_xdr *x);
	/* Check an accepted reply's verifier against the numbers the call went out with. False:
	 * the reply is refused (RC_AUTHERROR, auth_stat RC__AUTH_INVALIDRESP). */
	bool (*cl_validate)(rc__cl_auth *a, const rc__cl_seqs *seqs, uint32_t vflavor,
	                    const unsigned char *body, uint32_t vlen);
	/* A SUCCESS reply's results as sent (body, n) -> as xres decodes them: *out, *outn, with
	 * *owned a malloc'd block to free after decoding (or NULL when *out points into body).
	 * False: RC_CANTDECODERES. NULL: the bytes as they are. */
	bool (*cl_unwrap)(rc__cl_auth *a, const rc__cl_seqs *seqs, const unsigned char *body,
	                  size_t n, const unsigned char **out, size_t *outn, void **owned);
	/* A blocking call was denied with auth_stat why: true if the flavor renewed itself and the
	 * call should go again (once). NULL: never. */
	bool (*cl_refresh)(rc__cl_auth *a, uint32_t why);
	/* Free a->priv (the last reference went). NULL: nothing to free. */
	void (*cl_destroy)(rc__cl_auth *a);
};

/* The registered flavor with this number, or NULL. */
const rc__flavor *rc__flavor_find(uint32_t number);

/* Register fl (a flavor not built into the registry: tests, flavors built separately). False
 * if its number is taken or the table (8) is full. fl must outlive the process's use of it. */
bool rc__flavor_add(const rc__flavor *fl);

/* The built-in flavors (auth.c). */
extern const rc__flavor rc__flavor_none, rc__flavor_sys, rc__flavor_tls;
extern const rc__flavor rc__flavor_gss; /* RPCSEC_GSS (auth_gss.c) */

/* Whether a plain flavor fl's client accepts reply verifier vflavor/vlen: AUTH_NONE (any
 * body), and for AUTH_SYS its AUTH_SHORT (RFC 5531 section 14; the body is not used). */
bool rc__cl_plain_verf_ok(const rc__flavor *fl, uint32_t vflavor, uint32_t vlen);

/* One more reference to a; one fewer (the last calls a->fl->cl_destroy and frees a). */
void rc__cl_auth_ref(rc__cl_auth *a);
void rc__cl_auth_unref(rc__cl_auth *a);

/* Let clnt's calls from now on go with a's credentials (a flavor that is not plain): the
 * client takes the caller's reference to a, on success and on failure. RC_OK, RC_NOMEM,
 * RC_INVAL (NULL, or a plain flavor's: those go through rc__client_set_cred). */
rc_status rc__client_set_auth(rc_client *clnt, rc__cl_auth *a);
/* The channel-binding value of clnt's connection (transports/transport.h: rc__tp_exporter,
 * RC_TP_EXPORTER_LEN bytes into out) and in *must whether its protocol requires RPCSEC_GSS
 * to bind to it (QUIC). False, nothing written, when the connection is not under TLS or QUIC
 * or there is none now (a disconnected client). */
bool rc__client_exporter(rc_client *clnt, unsigned char *out, bool *must);

#endif

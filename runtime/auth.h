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
 * (rc__flavors in auth.c); docs/design.md, "Adding an auth flavor".
 *
 * Speed: AUTH_NONE and AUTH_SYS are "plain" flavors (RC__FL_PLAIN): a constant credential, an
 * AUTH_NONE verifier both ways, nothing wrapped. The fast paths test for that property of the
 * object (one load and a bit test), never for flavor numbers, and then write the fixed header
 * bytes themselves; every other flavor takes the general path through the methods below.
 */
#ifndef RC_AUTH_H
#define RC_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <remotecall/server.h>
#include <remotecall/xdr.h>
#include "xdr/base.h"

struct rc__wctx;
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

/* What svc_accept sees of one call (all pointers into the call message, valid during the
 * call; lengths already checked against the message and RC__MAX_AUTH_BYTES). */
typedef struct rc__svc_call {
	rc_server *srv;
	struct rc__wctx *w;          /* the reply buffer (RC__AUTH_ANSWERED replies go there) */
	size_t max;                  /* the largest reply */
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
	bool dgram;                  /* a datagram call */
	bool tls;                    /* it came on a connection under TLS */
	bool can_tls;                /* ... or on one that could start TLS */
} rc__svc_call;

/* One call's authentication, kept with its request until the reply is made (which may be
 * later, from another thread: a deferred request). Zeroed for each call. */
typedef struct rc__svc_auth {
	const rc__flavor *fl; /* the flavor that accepted the call */
	void *ctx;            /* the flavor's reference (e.g. a security context); svc_release
	                         lets it go */
	uint32_t seq;         /* the flavor's number for the call (RPCSEC_GSS: seq_num) */
	uint32_t service;     /* how the body is protected (RPCSEC_GSS: 1 none, 2 integrity,
	                         3 privacy); 0 for plain flavors */
	/* a reply verifier the server's auth hook chose (rc_svc_req_set_verf); plain flavors */
	uint32_t verf_flavor;
	uint32_t verf_len;
	unsigned char verf[RC__MAX_AUTH_BYTES];
} rc__svc_auth;

/* ---- client side ------------------------------------------------------------------------ */

/* A client's credentials: the flavor object and its state. Plain flavors keep their whole
 * encoded credential here; others keep what they need in priv. Owned by the client (or a Sun
 * AUTH); cl_destroy frees priv. */
typedef struct rc__cl_auth {
	const rc__flavor *fl;
	uint32_t flavor;                          /* the credential's flavor number */
	uint32_t credlen;                         /* plain flavors: the credential's body */
	unsigned char cred[RC__MAX_AUTH_BYTES];
	void *priv;                               /* others: the flavor's state */
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

	/* Check call *in's credential and verifier; fill *a (zeroed, a->fl set) and, for Sun's
	 * view, req's credential fields. Returns 0 (accepted), an auth_stat (the call gets an
	 * AUTH_ERROR reply), RC__AUTH_DROP or RC__AUTH_ANSWERED (*rlen: the reply's length). On
	 * anything but 0, a->ctx is left NULL (nothing to release). */
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

	/* Client (all NULL for plain flavors, which the engine serves from its header template). */

	/* Encode a call's credential and verifier after its first 24 bytes (hdr: xid through
	 * procedure, already in x's buffer at x's position - 24); *seq: the call's number. False
	 * on failure (the call fails with RC_AUTHERROR, err filled). */
	bool (*cl_marshal)(rc__cl_auth *a, rc_xdr *x, uint32_t *seq, rc_error *err);
	/* Check reply verifier (vflavor, body, vlen) against the numbers the call went out with.
	 * False: the reply is refused (RC_AUTHERROR, auth_stat RC__AUTH_INVALIDRESP). NULL for
	 * plain flavors: the engine accepts AUTH_NONE (and AUTH_SHORT for AUTH_SYS) itself. */
	bool (*cl_validate)(rc__cl_auth *a, const rc__cl_seqs *seqs, uint32_t vflavor,
	                    const unsigned char *body, uint32_t vlen);
	/* Encode the arguments with xargs as the flavor wraps them (NULL: xargs straight). */
	bool (*cl_wrap)(rc__cl_auth *a, uint32_t seq, rc_xdr *x, rc_xdrproc xargs, void *args);
	/* Decode the results as the flavor wrapped them (NULL: xres straight). */
	bool (*cl_unwrap)(rc__cl_auth *a, const rc__cl_seqs *seqs, rc_xdr *x, rc_xdrproc xres,
	                  void *res);
	/* The server denied a call with auth_stat why: true if the flavor renewed itself and the
	 * call should go again (once). NULL: never. */
	bool (*cl_refresh)(rc__cl_auth *a, uint32_t why);
	/* Free a's state (priv). NULL: nothing. */
	void (*cl_destroy)(rc__cl_auth *a);
};

/* The registered flavor with this number, or NULL. */
const rc__flavor *rc__flavor_find(uint32_t number);

/* Register fl (a flavor not built into the registry: tests, flavors built separately). False
 * if its number is taken or the table (8) is full. fl must outlive the process's use of it. */
bool rc__flavor_add(const rc__flavor *fl);

/* The built-in flavors (auth.c). */
extern const rc__flavor rc__flavor_none, rc__flavor_sys, rc__flavor_tls;

/* Whether a (a plain flavor's credentials) accepts reply verifier vflavor/vlen: AUTH_NONE,
 * and AUTH_SYS's AUTH_SHORT (RFC 5531 section 14; its body is not used). */
bool rc__cl_plain_verf_ok(const rc__cl_auth *a, uint32_t vflavor, uint32_t vlen);

/* Fill a with a plain flavor's credentials: fl (rc__flavor_none or rc__flavor_sys) and the
 * credential body (len at most RC__MAX_AUTH_BYTES). */
void rc__cl_auth_plain(rc__cl_auth *a, const rc__flavor *fl, const unsigned char *cred,
                       uint32_t len);

#endif

/*
 * Internal to remotecall: RPCSEC_GSS version 1 (RFC 2203) above the system's GSS-API (MIT krb5).
 * Everything between an auth flavor object and the gss_* calls lives here; the flavor object
 * (client and server side) calls it. Nothing here is installed or exported (rc__ names are
 * hidden in libremotecall.so).
 *
 *   gss_xdr.c             the wire types: credential, init arguments and results, integrity and
 *                         privacy bodies; bounded parsers that never read past their input;
 *                         rc__gss_fuzz_one (a libFuzzer entry point)
 *   gss_common.c          errors (gss_display_status text), a locked GSS context ("sec"), MIC
 *                         make/verify, body wrap/unwrap for the three services
 *   gss_client.c          the initiator: context establishment as a step function over tokens,
 *                         atomic sequence numbers, header MIC, reply verifier check
 *   gss_svc.c             the acceptor: a bounded table of contexts keyed by random 16-byte
 *                         handles (per-principal quotas, a separate pool for incomplete
 *                         contexts, idle eviction, expiry at the GSS context lifetime), the
 *                         sequence window (a bitmap), INIT/CONTINUE_INIT/DESTROY, verdicts
 *
 * Memory: every function that returns bytes returns them in an rc__gss_buf the callee
 * allocated with malloc; the caller frees it with rc__gss_buf_free (also harmless on an empty
 * one). On failure such an output is left empty ({NULL, 0}). Inputs are borrowed for the call.
 *
 * Threads: a client (rc__gss_cli) and a server context (rc__gss_svc_ctx) may be used from any
 * number of threads at once; each serialises its own GSS calls under its lock (MIT's contexts
 * are not safe for concurrent use). A table is safe for concurrent use.
 */
#ifndef RC_GSS_H
#define RC_GSS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gssapi/gssapi.h>

/* ---- protocol constants (RFC 2203) ------------------------------------------------------- */

#define RC__GSS_FLAVOR 6u              /* RPCSEC_GSS */
#define RC__GSS_VERSION 1u             /* RPCSEC_GSS_VERS_1 */
#define RC__GSS_MAXSEQ 0x80000000u     /* seq_num >= MAXSEQ is never valid */
#define RC__GSS_HANDLE_LEN 16u         /* the handles this server issues */
#define RC__GSS_HANDLE_MAX 128u        /* the longest handle a credential may carry (parsers) */
#define RC__GSS_WINDOW_DEFAULT 128u    /* the server's sequence window (a bitmap) */
#define RC__GSS_WINDOW_MAX 1024u
#define RC__GSS_TOKEN_MAX 65536u       /* the longest context token accepted in INIT args/results */
#define RC__GSS_CRED_MAX 400u          /* an opaque_auth body (RFC 5531) */

/* RPC auth_stat values RFC 2203 adds (the others are RFC 5531's). */
#define RC__GSS_AUTH_CREDPROBLEM 13u
#define RC__GSS_AUTH_CTXPROBLEM 14u

enum rc__gss_proc {
	RC__GSS_DATA = 0,
	RC__GSS_INIT = 1,
	RC__GSS_CONTINUE_INIT = 2,
	RC__GSS_DESTROY = 3
};

enum rc__gss_service {
	RC__GSS_SVC_NONE = 1,
	RC__GSS_SVC_INTEGRITY = 2,
	RC__GSS_SVC_PRIVACY = 3
};

/* ---- buffers and errors (gss_common.c) --------------------------------------------------- */

/* Bytes a callee allocated (malloc); rc__gss_buf_free releases and empties it. */
typedef struct rc__gss_buf {
	unsigned char *data;
	size_t len;
} rc__gss_buf;

void rc__gss_buf_free(rc__gss_buf *b);

/* What went wrong, with GSS's own words: major/minor are the GSS status codes (0 when the
 * failure was not GSS's: a malformed token, a wrong sequence number, memory), text is
 * "what: <gss_display_status of major>; <of minor>" ("what: <of minor>" alone when major is
 * GSS_S_FAILURE, whose text only says to read the minor's) or a plain sentence. Every
 * function taking an rc__gss_err * accepts NULL. */
typedef struct rc__gss_err {
	uint32_t major;
	uint32_t minor;
	char text[320];
} rc__gss_err;

/* Fill err (if non-NULL) from a GSS status pair (mech krb5 for the minor code), prefixed by
 * what. */
void rc__gss_err_status(rc__gss_err *err, const char *what, OM_uint32 major, OM_uint32 minor);
/* Fill err (if non-NULL) with a plain message (major = minor = 0). */
void rc__gss_err_msg(rc__gss_err *err, const char *what);

/* ---- channel bindings (gss_common.c) ----------------------------------------------------- */

/* The bytes of a TLS exporter value (RFC 9266 "tls-exporter": TLS-Exporter(
 * "EXPORTER-Channel-Binding", empty context, 32)); transports/transport.h's
 * RC_TP_EXPORTER_LEN. */
#define RC__GSS_EXPORTER_LEN 32u
#define RC__GSS_CB_PREFIX "tls-exporter:"

/* Channel bindings as GSS takes them (RFC 5554): no addresses (GSS_C_AF_UNSPEC), and as
 * application data the binding type's name and a colon followed by its data (the RFC 5056
 * convention): "tls-exporter:" and the 32 bytes. */
typedef struct rc__gss_cb {
	struct gss_channel_bindings_struct b;
	unsigned char data[sizeof(RC__GSS_CB_PREFIX) - 1 + RC__GSS_EXPORTER_LEN];
} rc__gss_cb;

/* Fill cb from a connection's exporter value (RC__GSS_EXPORTER_LEN bytes, copied) and return
 * its GSS bindings (&cb->b, pointing into cb: valid while cb is). */
gss_channel_bindings_t rc__gss_cb_make(rc__gss_cb *cb, const unsigned char *exporter);

/* ---- the wire types (gss_xdr.c) ---------------------------------------------------------- */

/* rpc_gss_cred_t with version 1: {version, gss_proc, seq_num, service, opaque handle<>}. On
 * decode, handle points into the input (borrowed). */
typedef struct rc__gss_cred {
	uint32_t version;
	uint32_t proc;     /* enum rc__gss_proc */
	uint32_t seq;
	uint32_t service;  /* enum rc__gss_service */
	uint32_t handle_len;
	const unsigned char *handle;
} rc__gss_cred;

/* Decode a credential body (the opaque_auth body, no flavor or length) of exactly len bytes.
 * Returns 0, or -1 when it is malformed: short, a handle longer than RC__GSS_HANDLE_MAX or
 * than what remains, nonzero padding, bytes left over, or len > RC__GSS_CRED_MAX. Version,
 * proc and service are not range-checked here (the caller answers a wrong version with
 * AUTH_BADCRED). */
int rc__gss_cred_decode(const void *buf, size_t len, rc__gss_cred *out);
/* Encode c into buf (cap bytes). Returns the encoded size; when that is more than cap, or the
 * handle is longer than RC__GSS_HANDLE_MAX, nothing is written (0 for the too-long handle). */
size_t rc__gss_cred_encode(const rc__gss_cred *c, void *buf, size_t cap);

/* rpc_gss_init_arg: opaque gss_token<>. Decode borrows into buf; the token must use exactly
 * len bytes and be at most RC__GSS_TOKEN_MAX. Returns 0 or -1. */
int rc__gss_init_arg_decode(const void *buf, size_t len, const unsigned char **tok,
			    size_t *tok_len);
/* Encode a token as rpc_gss_init_arg into a new buffer. Returns 0, or -1 (no memory, token
 * too long; out empty). */
int rc__gss_init_arg_encode(const void *tok, size_t tok_len, rc__gss_buf *out);

/* rpc_gss_init_res: {opaque handle<>, u_int gss_major, u_int gss_minor, u_int seq_window,
 * opaque gss_token<>}. Decoded handle and token borrow the input. */
typedef struct rc__gss_init_res {
	const unsigned char *handle;
	uint32_t handle_len;
	uint32_t major;
	uint32_t minor;
	uint32_t seq_window;
	const unsigned char *token;
	uint32_t token_len;
} rc__gss_init_res;

/* Decode exactly len bytes of an rpc_gss_init_res. Returns 0, or -1 when malformed (handle
 * over RC__GSS_HANDLE_MAX, token over RC__GSS_TOKEN_MAX, short, bad padding, bytes left). */
int rc__gss_init_res_decode(const void *buf, size_t len, rc__gss_init_res *out);
/* Encode r into a new buffer. Returns 0, or -1 (no memory or a field over its bound). */
int rc__gss_init_res_encode(const rc__gss_init_res *r, rc__gss_buf *out);

/* rpc_gss_integ_data {opaque databody_integ<>; opaque checksum<>} of exactly len bytes: body
 * (the seq + arguments, what the MIC covers) and mic borrow the input. Returns 0 or -1. */
int rc__gss_integ_decode(const void *buf, size_t len, const unsigned char **body,
			 size_t *body_len, const unsigned char **mic, size_t *mic_len);
/* rpc_gss_priv_data {opaque databody_priv<>} of exactly len bytes. Returns 0 or -1. */
int rc__gss_priv_decode(const void *buf, size_t len, const unsigned char **tok, size_t *tok_len);

/* One input through every parser above (and a re-encode of what decodes): the body of a fuzz
 * target. Never reads past data + size; always returns 0. */
int rc__gss_fuzz_one(const uint8_t *data, size_t size);

/* ---- a locked GSS context and the per-call transforms (gss_common.c) --------------------- */

/* A security context and the lock its GSS calls run under. Embedded in rc__gss_cli and
 * rc__gss_svc_ctx; exposed for their files only. */
typedef struct rc__gss_sec rc__gss_sec;

/* The longest plain body of service (RC__GSS_SVC_*) whose protected form (rpc_gss_integ_data
 * or rpc_gss_priv_data with its seq) fits in max_tp bytes, rounded down to a multiple of 4:
 * max_tp for none; 0 when nothing fits or GSS cannot say. */
int rc__gss_sec_max_data(rc__gss_sec *s, uint32_t service, int max_tp);
/* The MIC (gss_get_mic, default QOP) over n bytes. Returns 0, or -1 with err set. */
int rc__gss_sec_mic(rc__gss_sec *s, const void *p, size_t n, rc__gss_buf *out, rc__gss_err *err);
/* Check mic against n bytes (gss_verify_mic; supplementary status bits -- duplicate, old,
 * unsequenced tokens -- are not failures: the RPC sequence window is the replay check).
 * Returns 0, or -1 with err set. */
int rc__gss_sec_verify(rc__gss_sec *s, const void *p, size_t n, const void *mic, size_t mic_len,
		       rc__gss_err *err);
/* The MIC over seq as a 4-byte big-endian word: a reply verifier (or, with seq = the window,
 * the verifier of the INIT reply that completed a context). */
int rc__gss_sec_seq_mic(rc__gss_sec *s, uint32_t seq, rc__gss_buf *out, rc__gss_err *err);

/* Wrap an argument or result body for a service:
 *   NONE       a copy of the body
 *   INTEGRITY  rpc_gss_integ_data: databody_integ = seq (big-endian) + body, checksum = its MIC
 *   PRIVACY    rpc_gss_priv_data: databody_priv = gss_wrap(conf) of seq + body
 * Returns 0, or -1 with err set (also when privacy gets no confidentiality). */
int rc__gss_sec_wrap(rc__gss_sec *s, uint32_t seq, uint32_t service, const void *body, size_t len,
		     rc__gss_buf *out, rc__gss_err *err);
/* The reverse: check the MIC or unwrap (confidentiality required for PRIVACY), and that the
 * seq inside is one of the nseq values of seqs; *got_seq (if non-NULL) receives it. out gets
 * the plain body. Returns 0, or -1 with err set: malformed, a bad MIC, a failed unwrap, a
 * sequence number that does not match. in is never written to (PRIVACY unwraps a copy: MIT's
 * gss_unwrap rotates a token whose RRC field is nonzero in place). */
int rc__gss_sec_unwrap(rc__gss_sec *s, const uint32_t *seqs, unsigned nseq, uint32_t service,
		       const void *in, size_t len, rc__gss_buf *out, uint32_t *got_seq,
		       rc__gss_err *err);

/* ---- client (gss_client.c) ---------------------------------------------------------------- */

typedef struct rc__gss_cli rc__gss_cli;

/* The seqs one call went out with (a retransmission is re-encoded with a fresh seq): a reply
 * whose verifier or wrapped results carry any of the last RC__GSS_SEQS_KEPT is accepted. */
#define RC__GSS_SEQS_KEPT 4u
typedef struct rc__gss_seqs {
	uint32_t seq[RC__GSS_SEQS_KEPT];
	unsigned n;    /* how many are valid, at most RC__GSS_SEQS_KEPT */
	unsigned next; /* where the next one goes (a ring) */
} rc__gss_seqs;

/* Start empty / remember one more seq (the oldest is forgotten past RC__GSS_SEQS_KEPT). */
void rc__gss_seqs_init(rc__gss_seqs *s);
void rc__gss_seqs_add(rc__gss_seqs *s, uint32_t seq);

/* Options of a client context. */
typedef struct rc__gss_cli_opts {
	const char *target;       /* the server, host-based: "nfs@server" (required) */
	uint32_t service;         /* enum rc__gss_service, default (0) integrity */
	const char *initiator;    /* our principal ("user@REALM"), NULL: the default ccache's */
	const char *ccache;       /* a credential cache to take it from, NULL: the default */
	uint32_t lifetime_s;      /* the context lifetime to ask for, 0: the default */
	gss_name_t target_name;   /* the server as a GSS name (copied), instead of target */
	gss_cred_id_t cred;       /* the initiator credential to use, borrowed (the caller keeps
				     it valid while the object lives), instead of initiator/ccache;
				     GSS_C_NO_CREDENTIAL (0): acquire one */
} rc__gss_cli_opts;

/* Make a client context object (no network, no token yet): names are imported and the
 * initiator credential acquired now. Returns 0 with *out the object (free with
 * rc__gss_cli_destroy), or -1 with *out NULL and err set (e.g. no ticket in the ccache). */
int rc__gss_cli_create(rc__gss_cli **out, const rc__gss_cli_opts *o, rc__gss_err *err);
/* Free the object and its GSS context (no DESTROY call: the caller sends that first). */
void rc__gss_cli_destroy(rc__gss_cli *c);

/* The channel bindings the next establishment (rc__gss_cli_init_start, every leg) gives
 * gss_init_sec_context: the exporter value (RC__GSS_EXPORTER_LEN bytes, copied) of the TLS or
 * QUIC connection its INIT calls go on, or NULL: none (GSS_C_NO_CHANNEL_BINDINGS; plain
 * TCP, UDP, Unix). Between establishments only. */
void rc__gss_cli_set_bindings(rc__gss_cli *c, const unsigned char *exporter);

/* Establishment, a step at a time. rc__gss_cli_init_start runs gss_init_sec_context with no
 * input and gives the arguments of the INIT call (rpc_gss_init_arg) to send to NULLPROC with
 * the credential of rc__gss_cli_cred_init and an AUTH_NONE verifier. Each reply goes to
 * rc__gss_cli_init_next: res the reply's results (rpc_gss_init_res), verf the reply verifier
 * body (flavor verf_flavor). It returns
 *    1  another leg: send *args as CONTINUE_INIT (rc__gss_cli_cred_init again gives the cred)
 *    0  established: the final verifier (a MIC over seq_window) checked; *args empty
 *   -1  failed (err: the server's or our GSS status text, a bad verifier, a malformed reply);
 *       the object may be started again with rc__gss_cli_init_start.
 * Mutual authentication is always asked for. Starting again resets the context (after a
 * CREDPROBLEM/CTXPROBLEM the flavor re-establishes this way). Not for concurrent use with the
 * per-call functions on the same object while it runs. */
int rc__gss_cli_init_start(rc__gss_cli *c, rc__gss_buf *args, rc__gss_err *err);
int rc__gss_cli_init_next(rc__gss_cli *c, const void *res, size_t res_len, uint32_t verf_flavor,
			  const void *verf, size_t verf_len, rc__gss_buf *args, rc__gss_err *err);
/* The credential body of the next INIT/CONTINUE_INIT call (proc chosen from the state: INIT
 * before the server gave a handle). Returns the size; nothing written when it exceeds cap. */
size_t rc__gss_cli_cred_init(const rc__gss_cli *c, void *buf, size_t cap);

/* Established? The server's window (0 before), the service asked for. */
bool rc__gss_cli_established(const rc__gss_cli *c);
uint32_t rc__gss_cli_window(const rc__gss_cli *c);
uint32_t rc__gss_cli_service(const rc__gss_cli *c);

/* Change the service of later calls (the Sun API's rpc_gss_set_defaults): 0, or -1 for a
 * service out of range or privacy on a context made without confidentiality. Between calls:
 * a call in flight is unwrapped with the service it went out with only if it did not change. */
int rc__gss_cli_set_service(rc__gss_cli *c, uint32_t service);
/* The longest arguments a call under the current service can carry when the whole protected
 * body may take max_tp bytes (gss_wrap_size_limit for the token, less the XDR around it), a
 * multiple of 4; 0 when nothing fits or before establishment. */
int rc__gss_cli_max_data(rc__gss_cli *c, int max_tp);
/* The established context as GSS sees it: its flags, the seconds it has left, the GSS
 * context itself (borrowed: valid while the object lives and is not re-established). 0, or -1
 * before establishment or when gss_inquire_context fails. */
int rc__gss_cli_inquire(rc__gss_cli *c, uint32_t *flags, uint32_t *lifetime_s,
			gss_ctx_id_t *ctx);

/* A fresh sequence number for one transmission, taken atomically (any thread). Returns 0, or
 * -1 when the numbers are used up (>= MAXSEQ: the context must be made again). */
int rc__gss_cli_next_seq(rc__gss_cli *c, uint32_t *seq);
/* The credential body of a DATA or DESTROY call with seq. Returns its size; nothing written
 * when it exceeds cap; 0 before the context is established. */
size_t rc__gss_cli_cred(const rc__gss_cli *c, uint32_t proc, uint32_t seq, void *buf, size_t cap);
/* The call's verifier body: the MIC over the header bytes hdr (from the xid through the end of
 * the credential body, as on the wire). Returns 0, or -1 with err set. */
int rc__gss_cli_header_verf(rc__gss_cli *c, const void *hdr, size_t len, rc__gss_buf *verf,
			    rc__gss_err *err);
/* Check a reply verifier (flavor, body) against the seqs the call went out with: a MIC over
 * one of them. Returns 0 when it matches one, or -1 with err set. */
int rc__gss_cli_validate(rc__gss_cli *c, const rc__gss_seqs *sent, uint32_t verf_flavor,
			 const void *verf, size_t verf_len, rc__gss_err *err);
/* Arguments for the service (rc__gss_sec_wrap with this client's service); results back
 * (rc__gss_sec_unwrap against sent). Returns 0, or -1 with err set. */
int rc__gss_cli_wrap(rc__gss_cli *c, uint32_t seq, const void *args, size_t len, rc__gss_buf *out,
		     rc__gss_err *err);
int rc__gss_cli_unwrap(rc__gss_cli *c, const rc__gss_seqs *sent, const void *res, size_t len,
		       rc__gss_buf *out, rc__gss_err *err);

/* ---- server (gss_svc.c) ------------------------------------------------------------------- */

typedef struct rc__gss_table rc__gss_table;
typedef struct rc__gss_svc_ctx rc__gss_svc_ctx;

typedef struct rc__gss_table_opts {
	const char *principal;  /* the acceptor: host-based "nfs@host", or a krb5 principal with
				   a '/' ("nfs/host@REALM"); NULL: any key of the keytab */
	const char *keytab;     /* NULL: the default (KRB5_KTNAME) */
	unsigned max_contexts;  /* established contexts kept at most, 0: 1024 */
	unsigned max_principal; /* ... of one principal, 0: a quarter of max_contexts (rounded
				   up) */
	unsigned max_incomplete; /* incomplete (CONTINUE_NEEDED) contexts kept at most, in a pool
				    of their own, 0: a sixteenth of max_contexts (rounded up) */
	uint32_t idle_ms;       /* a context with no call whose header MIC checked out for this
				   long is evicted, 0: 15 minutes */
	uint32_t window;        /* sequence window, 0: RC__GSS_WINDOW_DEFAULT; rounded up to a
				   multiple of 64, at most RC__GSS_WINDOW_MAX */
	uint64_t (*now_ns)(void); /* the clock (tests), NULL: CLOCK_MONOTONIC */
} rc__gss_table_opts;

/* Make a table and acquire its acceptor credential. Returns 0 with *out (free with
 * rc__gss_table_destroy), or -1 with *out NULL and err set (no such key in the keytab...). */
int rc__gss_table_create(rc__gss_table **out, const rc__gss_table_opts *o, rc__gss_err *err);
/* Acquire an acceptor credential for principal from keytab again (as rc__gss_table_create
 * does) and make it the one new contexts are accepted with, from any thread while the table
 * serves; contexts made, or being made, keep working (their keys are in their GSS contexts).
 * The credential replaced is kept until the table is freed (a CONTINUE_INIT may still be
 * under way with it). Returns 0, or -1 with err set and the credential unchanged. */
int rc__gss_table_set_cred(rc__gss_table *t, const char *principal, const char *keytab,
			   rc__gss_err *err);
/* Drop the table's reference to every context and free the table; contexts still referenced
 * by callers live until their last rc__gss_svc_ctx_unref. */
void rc__gss_table_destroy(rc__gss_table *t);

/* The table's bounds (gss_svc.c's header says how each is kept), as in rc__gss_table_opts;
 * a 0 field keeps the current value. */
typedef struct rc__gss_bounds {
	unsigned max_contexts;
	unsigned max_principal;
	unsigned max_incomplete;
	uint32_t idle_ms;
} rc__gss_bounds;

/* Change the table's bounds: contexts over a lower bound go now (the incomplete least
 * recently used first, counted in evicted_incomplete; a principal's over its quota, in
 * evicted_quota; then over the table's bound, the biggest principal's least recently used,
 * in evicted_lru), and the idle ones. Any thread. */
void rc__gss_table_set_bounds(rc__gss_table *t, const rc__gss_bounds *b);

typedef struct rc__gss_stats {
	uint64_t contexts;      /* in the table now: established + incomplete */
	uint64_t established;   /* ... of them established */
	uint64_t incomplete;    /* ... of them incomplete (CONTINUE_NEEDED) */
	uint64_t live;          /* allocated now (in the table or held by a caller) */
	uint64_t created;       /* contexts established */
	uint64_t init_failed;   /* INITs whose token GSS refused */
	uint64_t dropped;       /* replays and below-window requests dropped */
	uint64_t credproblem;   /* unknown handle, expired context, bad header MIC */
	uint64_t ctxproblem;    /* seq >= MAXSEQ */
	uint64_t evicted_lru;   /* established, pushed out by a new one at max_contexts */
	uint64_t evicted_quota; /* established, pushed out by a new one of the same principal
				   at max_principal */
	uint64_t evicted_incomplete; /* incomplete, pushed out by a new one at max_incomplete */
	uint64_t evicted_idle;  /* unused for idle_ms */
	uint64_t expired;       /* past the GSS context lifetime */
	uint64_t destroyed;     /* by DESTROY */
} rc__gss_stats;
void rc__gss_table_stats(rc__gss_table *t, rc__gss_stats *st);

/* What to do with a call, from its credential (rc__gss_svc_accept). */
typedef enum rc__gss_verdict {
	RC__GSS_V_OK = 0,        /* DATA or DESTROY passed: ctx referenced, seq/service/proc set */
	RC__GSS_V_INIT,          /* INIT or CONTINUE_INIT: answer with rc__gss_svc_init */
	RC__GSS_V_DROP,          /* replay or below the window: no reply at all */
	RC__GSS_V_BADCRED,       /* malformed credential or wrong version: AUTH_BADCRED */
	RC__GSS_V_BADVERF,       /* malformed verifier (not RPCSEC_GSS for DATA): AUTH_BADVERF */
	RC__GSS_V_CREDPROBLEM,   /* unknown/expired handle, bad header MIC: RPCSEC_GSS_CREDPROBLEM */
	RC__GSS_V_CTXPROBLEM,    /* seq >= MAXSEQ: RPCSEC_GSS_CTXPROBLEM */
} rc__gss_verdict;

typedef struct rc__gss_accepted {
	rc__gss_verdict verdict;
	rc__gss_svc_ctx *ctx;    /* RC__GSS_V_OK: a reference the caller must rc__gss_svc_ctx_unref */
	uint32_t proc;           /* enum rc__gss_proc of the credential */
	uint32_t seq;
	uint32_t service;
	rc__gss_cred cred;       /* the decoded credential (borrows the caller's cred bytes) */
	/* Set by the caller for rc__gss_svc_init (rc__gss_svc_accept leaves them empty): the
	 * exporter value of the TLS or QUIC connection the call came on (RC__GSS_EXPORTER_LEN
	 * bytes, borrowed; NULL: none), which gss_accept_sec_context then checks the initiator's
	 * bindings against, and whether a context the initiator did not bind to it is refused
	 * (RPC-over-QUIC; MIT accepts an unbound one otherwise, as RPC-over-TLS allows). */
	const unsigned char *exporter;
	bool bind_required;
} rc__gss_accepted;

/* Judge one call: cred/cred_len the credential body, hdr/hdr_len the call header from the xid
 * through the end of the credential body (what the verifier's MIC covers), verf the
 * verifier's flavor and body. DATA and DESTROY: the handle is looked up (unknown or expired ->
 * CREDPROBLEM), the header MIC verified (bad -> CREDPROBLEM) -- and only then is seq checked:
 * >= MAXSEQ -> CTXPROBLEM, replayed or below the window -> DROP (counted), otherwise the window
 * slides and the verdict is OK with a referenced ctx. An accepted DESTROY takes the context out
 * of the table (later calls get CREDPROBLEM); the caller still replies through its reference:
 * the reply verifier and void results, not wrapped (DESTROY's arguments are not unwrapped
 * either -- as Linux does; RFC 2203 leaves it open). INIT/CONTINUE_INIT -> V_INIT (nothing
 * referenced; the caller checks the procedure is NULLPROC, else AUTH_BADCRED).
 * Always fills a->verdict; a->ctx is NULL unless V_OK. */
void rc__gss_svc_accept(rc__gss_table *t, const void *hdr, size_t hdr_len, const void *cred,
			size_t cred_len, uint32_t verf_flavor, const void *verf, size_t verf_len,
			rc__gss_accepted *a);

/* Answer an INIT/CONTINUE_INIT (a from rc__gss_svc_accept with V_INIT; args/args_len the
 * call's arguments, rpc_gss_init_arg). Runs gss_accept_sec_context, with the channel bindings
 * of a->exporter (a mismatch, or none where a->bind_required, is a refusal with
 * GSS_S_BAD_BINDINGS, and err says it); on success (complete or
 * continue needed) the context is in the table under a new random handle (a CONTINUE_INIT's
 * keeps its handle), among the established or the incomplete by the table's bounds
 * (gss_svc.c's header: this may push out others). res gets the
 * encoded rpc_gss_init_res to send as the NULLPROC's results -- also when GSS refused the
 * token (major/minor say why, no handle; counted) -- and *verf_flavor/verf the reply verifier:
 * RPCSEC_GSS with the MIC over seq_window when the context completed, AUTH_NONE (empty)
 * otherwise. Returns
 *    0  reply with res and verf (the caller frees both)
 *   -1  GARBAGE_ARGS: args malformed (err set); nothing to free
 *   -2  CREDPROBLEM: CONTINUE_INIT with an unknown (or already complete) handle, or of a
 *       context evicted while GSS worked on it; nothing to free
 *   -3  SYSTEM_ERR: no memory or no randomness (err set); nothing to free, nothing kept
 * A context that completes is counted in created; the handle is random (getrandom), never
 * derived from pointers.
 */
int rc__gss_svc_init(rc__gss_table *t, const rc__gss_accepted *a, const void *args,
		     size_t args_len, rc__gss_buf *res, uint32_t *verf_flavor, rc__gss_buf *verf,
		     rc__gss_err *err);

/* Take / drop a reference: a context is freed (gss_delete_sec_context) when the table and all
 * callers have let go. Any thread. */
void rc__gss_svc_ctx_ref(rc__gss_svc_ctx *x);
void rc__gss_svc_ctx_unref(rc__gss_svc_ctx *x);

/* The reply verifier body of a call with seq (the MIC over seq). Returns 0, or -1 with err
 * set (the caller then sends no reply). */
int rc__gss_svc_reply_verf(rc__gss_svc_ctx *x, uint32_t seq, rc__gss_buf *out, rc__gss_err *err);
/* The call's arguments for service (from rc__gss_svc_accept): checks the MIC / unwraps and
 * that the seq inside is seq. Returns 0 with out the plain arguments, or -1 (GARBAGE_ARGS)
 * with err set. */
int rc__gss_svc_unwrap_args(rc__gss_svc_ctx *x, uint32_t seq, uint32_t service, const void *in,
			    size_t len, rc__gss_buf *out, rc__gss_err *err);
/* The results wrapped for the call's seq and service. Any thread, any time while referenced
 * (a deferred reply). Returns 0, or -1 with err set (the caller then sends no reply). */
int rc__gss_svc_wrap_results(rc__gss_svc_ctx *x, uint32_t seq, uint32_t service,
			     const void *res, size_t len, rc__gss_buf *out, rc__gss_err *err);
/* The caller: the initiator's principal as GSS displays it ("user@REALM"), the mechanism
 * ("krb5"), the handle. Valid while referenced. */
const char *rc__gss_svc_ctx_principal(const rc__gss_svc_ctx *x);
/* The local user name GSS maps the initiator to (gss_localname: krb5's auth_to_local rules,
 * e.g. "rcuser" for rcuser@DEFAULT.REALM) into buf (cap bytes, NUL-terminated) -- the start of
 * a uid/gid mapping. Returns 0, or -1 with err set (no mapping, or it does not fit). */
int rc__gss_svc_ctx_localname(rc__gss_svc_ctx *x, char *buf, size_t cap, rc__gss_err *err);
const char *rc__gss_svc_ctx_mech(const rc__gss_svc_ctx *x);
const unsigned char *rc__gss_svc_ctx_handle(const rc__gss_svc_ctx *x);
/* The GSS context (borrowed, valid while referenced; GSS calls on it must not race the
 * runtime's, which hold the context's lock: read-only inquiries only). */
gss_ctx_id_t rc__gss_svc_ctx_gss(rc__gss_svc_ctx *x);
/* rc__gss_sec_max_data for the context (rc__gss_cli_max_data's rule, the server's side). */
int rc__gss_svc_ctx_max_data(rc__gss_svc_ctx *x, uint32_t service, int max_tp);
/* Data of an application layer kept with the context (the Sun API's per-context state): the
 * data set, or NULL; rc__gss_svc_ctx_set_app sets it once (false, nothing taken, when it is
 * set already) and the context frees it with free_fn when it goes. Any thread. */
void *rc__gss_svc_ctx_app(const rc__gss_svc_ctx *x);
bool rc__gss_svc_ctx_set_app(rc__gss_svc_ctx *x, void *data, void (*free_fn)(void *));
/* When the context expires, on the table's clock (ns; UINT64_MAX: never). */
uint64_t rc__gss_svc_ctx_expiry(const rc__gss_svc_ctx *x);

#endif

/*
 * remotecall -- Sun RPCSEC_GSS names (opt-in), for porting programs written to libtirpc's
 * <rpc/rpcsec_gss.h> and <rpc/auth_gss.h>: include it, or either of those two from
 * include/remotecall/compat, after <remotecall/sunrpc.h> (they include it). It brings
 * <gssapi/gssapi.h> (MIT krb5's GSS-API, as libtirpc's do).
 *
 * The client: rpc_gss_seccreate / authgss_create_default / authgss_create make a context with
 * the server on the CLIENT now (NULL calls; rc_client_set_auth_gss's protocol) and return an
 * AUTH to put in clnt->cl_auth; calls through clnt_call then go with it. The server:
 * rpc_gss_set_svc_name makes the Sun server (svc_*, <remotecall/sunrpc.h>) accept RPCSEC_GSS
 * (rc_server_set_gss); a dispatch function sees the caller with rpc_gss_getcred.
 *
 * Where it differs from libtirpc's:
 *   - one mechanism, Kerberos v5 ("kerberos_v5", "krb5", or its OID), the default QOP only;
 *   - an AUTH serves the client it was made on only, and auth_destroy sends no
 *     RPCSEC_GSS_DESTROY (the context goes when the client and the AUTH are both gone);
 *   - the server has one acceptor name: rpc_gss_set_svc_name for a second (program, version)
 *     must name the same principal; req_time is not used (the ticket's lifetime is);
 *   - the callback of rpc_gss_set_callback gets no delegated credential
 *     (GSS_C_NO_CREDENTIAL);
 *   - errors are kept per thread (rpc_gss_get_error), as with libtirpc.
 */
#ifndef REMOTECALL_SUNRPC_GSS_H
#define REMOTECALL_SUNRPC_GSS_H

#include <sys/types.h>

#include <gssapi/gssapi.h>

#include <remotecall/sunrpc.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RPCSEC_GSS 6        /* the credential flavor (rq_cred.oa_flavor) */
#define RPCSEC_GSS_VERSION 1

/* ---- <rpc/rpcsec_gss.h> --------------------------------------------------------------------- */

typedef enum {
	rpcsec_gss_svc_default = 0, /* rpc_gss_seccreate: integrity */
	rpcsec_gss_svc_none = 1,
	rpcsec_gss_svc_integrity = 2,
	rpcsec_gss_svc_privacy = 3
} rpc_gss_service_t;

/* A principal name: len bytes at name (not NUL-terminated). */
typedef struct {
	int len;
	char name[1];
} *rpc_gss_principal_t;

/* rpc_gss_seccreate's options: time_req the context lifetime asked for (0: the default; MIT
 * krb5 gives the ticket's lifetime whatever is asked);
 * my_cred the initiator credential (GSS_C_NO_CREDENTIAL: the default ccache's), borrowed --
 * keep it while the AUTH lives; req_flags and input_channel_bindings are not used (mutual
 * authentication, integrity and confidentiality are always asked for). */
typedef struct {
	int req_flags;
	int time_req;
	gss_cred_id_t my_cred;
	gss_channel_bindings_t input_channel_bindings;
} rpc_gss_options_req_t;

#define MAX_GSS_MECH 128
/* rpc_gss_seccreate's results: the GSS status of a failure, the version, the context's flags
 * and seconds left, the GSS context (borrowed: do not delete it), the mechanism. */
typedef struct {
	int major_status;
	int minor_status;
	u_int rpcsec_version;
	int ret_flags;
	int time_ret;
	gss_ctx_id_t gss_context;
	char actual_mechanism[MAX_GSS_MECH];
} rpc_gss_options_ret_t;

/* The caller of an RPCSEC_GSS call (rpc_gss_getcred; rq_clntcred in a dispatch function). */
typedef struct {
	u_int version;
	char *mechanism;                     /* "kerberos_v5" */
	char *qop;                           /* "GSS_C_QOP_DEFAULT" */
	rpc_gss_principal_t client_principal; /* "user@REALM" */
	char *svc_principal;                 /* rpc_gss_set_svc_name's principal */
	rpc_gss_service_t service;           /* this call's */
} rpc_gss_rawcred_t;

/* The caller as a local user (krb5's auth_to_local rules, then the passwd and group
 * databases): at most 16 groups. */
typedef struct {
	uid_t uid;
	gid_t gid;
	short gidlen;
	gid_t *gidlist;
} rpc_gss_ucred_t;

/* A callback's hold on the context's service: locked TRUE keeps every later call of the
 * context to raw_cred->service (others are refused, AUTH_REJECTEDCRED). */
typedef struct {
	bool_t locked;
	rpc_gss_rawcred_t *raw_cred;
} rpc_gss_lock_t;

/* rpc_gss_set_callback's registration: callback runs at the first call of each context to
 * (program, version), before the dispatch function; FALSE refuses the context's calls
 * (AUTH_REJECTEDCRED). *cookie (NULL at first) is kept with the context for rpc_gss_getcred. */
typedef struct {
	u_int program;
	u_int version;
	bool_t (*callback)(struct svc_req *req, gss_cred_id_t deleg, gss_ctx_id_t gss_context,
	                   rpc_gss_lock_t *lock, void **cookie);
} rpc_gss_callback_t;

/* rpc_gss_get_error: the last failure of this thread's RPCSEC_GSS calls. */
typedef struct {
	int rpc_gss_error;  /* RPC_GSS_ER_SUCCESS or RPC_GSS_ER_SYSTEMERROR */
	int system_error;   /* an errno: EINVAL, ENOMEM, EACCES (GSS or the server refused),
	                       ETIMEDOUT, ECONNREFUSED, EIO (another failure) */
} rpc_gss_error_t;
#define RPC_GSS_ER_SUCCESS 0
#define RPC_GSS_ER_SYSTEMERROR 1

typedef gss_OID_desc rpc_gss_OID_desc;
typedef rpc_gss_OID_desc *rpc_gss_OID;

/*
 * rc_sunrpc_gss_seccreate -- rpc_gss_seccreate: establish an RPCSEC_GSS context with the
 * server of clnt as principal names it, host-based ("nfs@server"), mechanism "kerberos_v5"
 * (or "krb5", "kerberosv5", NULL), service (default: integrity), qop NULL or
 * "GSS_C_QOP_DEFAULT"; options_req and options_ret may be NULL. The context is made now with
 * NULL calls on clnt, which then sends its calls under it; the AUTH returned is what to put in
 * clnt->cl_auth (another AUTH there is applied again at the next clnt_call). Returns a new
 * AUTH (free with auth_destroy), or NULL with rpc_gss_get_error, rpc_createerr (cf_stat
 * RPC_AUTHERROR, or the NULL call's status) and options_ret's major/minor set.
 */
AUTH *rc_sunrpc_gss_seccreate(CLIENT *clnt, char *principal, char *mechanism,
                              rpc_gss_service_t service, char *qop,
                              rpc_gss_options_req_t *options_req,
                              rpc_gss_options_ret_t *options_ret);
/* rc_sunrpc_gss_set_defaults -- rpc_gss_set_defaults: calls from now on with service (qop
 * NULL or the default). TRUE, or FALSE (not an RPCSEC_GSS AUTH, a service out of range, an
 * unknown qop). Between calls, not during one. */
bool_t rc_sunrpc_gss_set_defaults(AUTH *auth, rpc_gss_service_t service, char *qop);
/* rc_sunrpc_gss_max_data_length -- rpc_gss_max_data_length: the most argument bytes a call
 * under auth's service carries when its body may take max_tp_unit_len bytes (0 if none). */
int rc_sunrpc_gss_max_data_length(AUTH *auth, int max_tp_unit_len);
/* rc_sunrpc_gss_get_error -- rpc_gss_get_error: this thread's last RPCSEC_GSS error. */
void rc_sunrpc_gss_get_error(rpc_gss_error_t *error);

/*
 * rc_sunrpc_gss_set_svc_name -- rpc_gss_set_svc_name: the Sun server (made now if need be)
 * accepts RPCSEC_GSS as principal ("nfs@host", or "nfs/host@REALM"), keys from the default
 * keytab (KRB5_KTNAME), for every program -- program and version are recorded as the name's
 * (the server has one). Before svc_run. TRUE, or FALSE (an unknown mechanism, no key for the
 * principal, a different principal named before; rpc_gss_get_error says which).
 */
bool_t rc_sunrpc_gss_set_svc_name(char *principal, char *mechanism, u_int req_time,
                                  u_int program, u_int version);
/*
 * rc_sunrpc_gss_getcred -- rpc_gss_getcred, in a dispatch function, of the call being
 * dispatched on this thread: *rcred its raw credential (valid until the dispatch function
 * returns), *ucred the caller as a local user (NULL when krb5 maps it to no local user; valid
 * while the context lives), *cookie the callback's cookie (NULL without one). Any of the
 * three may be NULL. TRUE, or FALSE (not an RPCSEC_GSS call, outside a dispatch).
 */
bool_t rc_sunrpc_gss_getcred(struct svc_req *req, rpc_gss_rawcred_t **rcred,
                             rpc_gss_ucred_t **ucred, void **cookie);
/* rc_sunrpc_gss_svc_max_data_length -- rpc_gss_svc_max_data_length: the most result bytes
 * the reply to the call being dispatched carries under its service when its body may take
 * max_tp_unit_len bytes (0 outside an RPCSEC_GSS dispatch). */
int rc_sunrpc_gss_svc_max_data_length(struct svc_req *req, int max_tp_unit_len);
/* rc_sunrpc_gss_set_callback -- rpc_gss_set_callback: cb->callback for (cb->program,
 * cb->version), replacing one set before (at most 16 pairs). TRUE, or FALSE (NULL, full). */
bool_t rc_sunrpc_gss_set_callback(rpc_gss_callback_t *cb);

#define rpc_gss_seccreate rc_sunrpc_gss_seccreate
#define rpc_gss_set_defaults rc_sunrpc_gss_set_defaults
#define rpc_gss_max_data_length rc_sunrpc_gss_max_data_length
#define rpc_gss_get_error rc_sunrpc_gss_get_error
#define rpc_gss_set_svc_name rc_sunrpc_gss_set_svc_name
#define rpc_gss_getcred rc_sunrpc_gss_getcred
#define rpc_gss_svc_max_data_length rc_sunrpc_gss_svc_max_data_length
#define rpc_gss_set_callback rc_sunrpc_gss_set_callback

/* ---- <rpc/auth_gss.h> ------------------------------------------------------------------------ */

typedef enum {
	RPCSEC_GSS_SVC_NONE = 1,
	RPCSEC_GSS_SVC_INTEGRITY = 2,
	RPCSEC_GSS_SVC_PRIVACY = 3
} rpc_gss_svc_t;

/* authgss_create's security: mech (GSS_C_NO_OID or krb5's), qop (0, the default), svc, cred
 * (GSS_C_NO_CREDENTIAL, or one of the caller's, borrowed), req_flags (not used). */
struct rpc_gss_sec {
	gss_OID mech;
	gss_qop_t qop;
	rpc_gss_svc_t svc;
	gss_cred_id_t cred;
	u_int req_flags;
};

/*
 * rc_sunrpc_authgss_create -- authgss_create: rpc_gss_seccreate with the server's GSS name
 * (copied) and sec; rc_sunrpc_authgss_create_default -- authgss_create_default: with the
 * host-based name service ("nfs@server"). rc_sunrpc_authgss_service -- authgss_service:
 * rpc_gss_set_defaults with svc. rc_sunrpc_is_authgss_client -- is_authgss_client: whether
 * clnt->cl_auth is an RPCSEC_GSS AUTH. Return and errors as rpc_gss_seccreate.
 */
AUTH *rc_sunrpc_authgss_create(CLIENT *clnt, gss_name_t name, struct rpc_gss_sec *sec);
AUTH *rc_sunrpc_authgss_create_default(CLIENT *clnt, char *service, struct rpc_gss_sec *sec);
bool_t rc_sunrpc_authgss_service(AUTH *auth, int svc);
bool_t rc_sunrpc_is_authgss_client(CLIENT *clnt);

#define authgss_create rc_sunrpc_authgss_create
#define authgss_create_default rc_sunrpc_authgss_create_default
#define authgss_service rc_sunrpc_authgss_service
#define is_authgss_client rc_sunrpc_is_authgss_client

/* Sun names remotecall does not provide: a use is a compile error saying why. */
struct authgss_private_data;
bool_t rc_sunrpc_authgss_get_private_data(AUTH *auth, struct authgss_private_data *pd)
	RC__SUNRPC_UNMAPPED("authgss_get_private_data: the kernel-export of a context (rpc.gssd) "
	                    "is not provided; remotecall keeps the context in the client");
#define authgss_get_private_data rc_sunrpc_authgss_get_private_data

#ifdef __cplusplus
}
#endif

#endif

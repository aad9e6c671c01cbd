/*
 * remotecall -- status codes.
 *
 * Every call in remotecall returns an rc_status. RC_OK is 0; every other value says what went
 * wrong. The members mirror Sun RPC's enum clnt_stat (RPC_TIMEDOUT -> RC_TIMEDOUT, ...) plus
 * what the newer call modes need (RC_CANCELLED, RC_MSGTOOLARGE, ...).
 *
 * The list below is the single source of truth: the enum, rc_strerror() and rc_status_name()
 * are all built from it. Append new members at the end so that numeric values stay stable.
 *
 * Which functions return which: a call (rc_call, a started call's status, a multi-call
 * destination) ends in one of OK .. PROGNOTREGISTERED, CANCELLED, MSGTOOLARGE, NOMEM,
 * or BADREPLY (a reply that is not a well-formed RPC reply, on a stream), or -- on a client
 * with TLS (<remotecall/tls.h>) -- TLSUNAVAIL (the policy requires TLS and the server has
 * none) and TLSFAILED (the handshake or a certificate check failed: rc_error's detail says
 * why, in OpenSSL's words); set-up and
 * option functions return OK, INVAL, NOMEM, NOTSUPP (the transport cannot do it: e.g.
 * rc_client_set_spin on an in-process client), LOCALERROR, TOOMANY or the address errors;
 * rc_async_status/rc_async_wait return INPROGRESS while a call runs. AGAIN is returned only by
 * rc_recreader_next (more input needed). CLOSED is internal to the transports (a peer that
 * closed a stream) and is never returned by a public function: a call sees CANTRECV. They stay
 * in the list so that no value ever changes.
 */
#ifndef REMOTECALL_STATUS_H
#define REMOTECALL_STATUS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* RC_STATUS_LIST(X) -- X(NAME, "text") for every status, in enum order (RC_OK first). */
#define RC_STATUS_LIST(X)                                                                     \
	X(OK,                 "success")                                                         \
	X(CANTENCODEARGS,     "can't encode arguments")                                          \
	X(CANTDECODERES,      "can't decode result")                                             \
	X(CANTSEND,           "can't send request")                                              \
	X(CANTRECV,           "can't receive reply")                                             \
	X(TIMEDOUT,           "timed out waiting for a reply")                                   \
	X(VERSMISMATCH,       "RPC version mismatch: server does not speak ONC RPC version 2")   \
	X(AUTHERROR,          "authentication error")                                            \
	X(PROGUNAVAIL,        "program unavailable on the server")                               \
	X(PROGVERSMISMATCH,   "program version mismatch")                                        \
	X(PROCUNAVAIL,        "procedure unavailable in this program version")                   \
	X(CANTDECODEARGS,     "server can't decode arguments (garbage arguments)")               \
	X(SYSTEMERROR,        "remote system error")                                             \
	X(UNKNOWNHOST,        "unknown host")                                                    \
	X(UNKNOWNPROTO,       "unknown protocol or URI scheme")                                  \
	X(UNKNOWNADDR,        "address unknown or malformed")                                    \
	X(PMAPFAILURE,        "port mapper (rpcbind) failure")                                   \
	X(PROGNOTREGISTERED,  "program not registered with rpcbind")                             \
	X(FAILED,             "unspecified failure")                                             \
	X(CANCELLED,          "call cancelled")                                                  \
	X(MSGTOOLARGE,        "message too large for the transport or over the configured cap")  \
	X(NOMEM,              "out of memory")                                                   \
	X(INVAL,              "invalid argument")                                                \
	X(AGAIN,              "would block; try again when the descriptor is ready")             \
	X(INPROGRESS,         "call still in progress")                                          \
	X(CLOSED,             "connection closed by peer")                                       \
	X(BADREPLY,           "malformed or unexpected reply message")                           \
	X(LOCALERROR,         "local system error (see errno detail)")                           \
	X(TOOMANY,            "limit reached (connections, calls in flight or descriptors)")     \
	X(NOTSUPP,            "operation not supported by this transport")                       \
	X(PROGREGISTERED,     "program already registered with rpcbind by a live server")     \
	X(TLSUNAVAIL,         "server does not offer RPC-over-TLS, which the client requires")   \
	X(TLSFAILED,          "TLS handshake or certificate check failed")

/* rc_status -- what every call returns: RC_OK (0) or what went wrong (RC_TIMEDOUT, ...). */
typedef enum rc_status {
#define RC__STATUS_ENUM(name, text) RC_##name,
	RC_STATUS_LIST(RC__STATUS_ENUM)
#undef RC__STATUS_ENUM
	RC__STATUS_COUNT
} rc_status;

/*
 * rc_strerror -- a sentence saying what the status means, in words ("timed out waiting for a
 * reply"). Never NULL: an out-of-range value gives "unknown status". The string is static;
 * the caller does not free it.
 */
const char *rc_strerror(rc_status st);

/*
 * rc_status_name -- the symbolic name of a status ("RC_TIMEDOUT"), for logs. Never NULL
 * ("RC_?" for an out-of-range value); static storage.
 */
const char *rc_status_name(rc_status st);

/* rc_error -- the detail of a failed call (rc_client_geterr) or server set-up
 * (rc_server_geterr); rc_error_format prints it. */
typedef struct rc_error {
	rc_status status;  /* the call's (or the set-up's) status */
	int sys_errno;     /* errno behind RC_CANTSEND, RC_CANTRECV, RC_LOCALERROR; else 0 */
	uint32_t low;      /* RC_PROGVERSMISMATCH, RC_VERSMISMATCH: lowest version supported;
	                      RC_CANTSEND from a client's creation: 1, the connection could not
	                      be made (rc_error_format says "can't connect") */
	uint32_t high;     /*   ... and highest */
	uint32_t auth_stat; /* RC_AUTHERROR: the server's auth_stat (RFC 5531: 1 AUTH_BADCRED ...) */
	uint32_t rpcbind_vers;    /* rc_client_create_ex's rpcbind look-up: the version it asked
	                             last (4, 3: RPCBIND GETADDR; 2: PMAP GETPORT); 0: none */
	rc_status rpcbind_status; /*   ... and how that call ended (RC_OK: rpcbind answered) */
	char detail[256]; /* the transport's own words, or "": for RC_TLSFAILED / RC_TLSUNAVAIL
	                     the reason (OpenSSL's: "certificate verify failed: certificate has
	                     expired", "tlsv13 alert certificate required", ...), for a GSS
	                     failure Kerberos's; a longer text is cut at a word, "..." marking
	                     the cut */
} rc_error;

/* rc_error_format -- "timed out waiting for a reply" / "program version mismatch (server
 * supports 1..2)" / "can't receive reply: Connection refused" / "address already in use
 * (/run/x.sock is in use by a running server)" / "can't connect: Connection refused (port
 * 40321, which rpcbind version 4 gave for the program: nothing listens there)" into buf
 * (always NUL-terminated, truncated to len). A local error (RC_LOCALERROR) is told by its
 * errno alone, a TLS failure by its detail. Returns buf. */
char *rc_error_format(const rc_error *err, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif

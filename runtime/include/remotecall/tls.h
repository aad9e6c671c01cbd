/*
 * remotecall -- RPC-over-TLS (RFC 9289): the types the client and server share.
 *
 * On a TCP connection a client asks for TLS with a probe (a NULL call whose credential is
 * AUTH_TLS); a server with TLS configured answers with the verifier "STARTTLS" and both sides
 * then run a TLS 1.3 handshake (ALPN "sunrpc") on the same connection; RPC records then travel
 * inside TLS. The client's choice is an rc_tls_policy (rc_client_create_tls, or the URI query
 * "?tls=..."); the server's is rc_server_set_tls and rc_server_set_tls_required
 * (<remotecall/server.h>). TLS never runs over UDP. docs/runtime.md has the policy table.
 */
#ifndef REMOTECALL_TLS_H
#define REMOTECALL_TLS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * rc_tls_policy -- what a TCP client does about TLS:
 *  RC_TLS_OFF            plaintext, no probe (the default);
 *  RC_TLS_OPPORTUNISTIC  probe; TLS when the server offers it, else plaintext on the same
 *                        connection (a server that offers TLS but fails the handshake or the
 *                        certificate check fails the connection: no silent downgrade then);
 *  RC_TLS_REQUIRED       probe; a server without TLS fails the connection with
 *                        RC_TLSUNAVAIL before any other call is sent.
 */
typedef enum rc_tls_policy {
	RC_TLS_OFF = 0,
	RC_TLS_OPPORTUNISTIC = 1,
	RC_TLS_REQUIRED = 2
} rc_tls_policy;

/*
 * rc_tls_client_opts -- a client's TLS settings (zero-initialise it; rc_client_create_tls).
 * Every string is read during the call and not kept.
 */
typedef struct rc_tls_client_opts {
	rc_tls_policy policy;
	const char *ca_file;     /* PEM file of trusted CAs; with ca_dir both NULL: the system's */
	const char *ca_dir;      /* directory of hashed CA certificates (c_rehash), or NULL */
	const char *cert_file;   /* PEM client certificate (chain) for mutual TLS, or NULL */
	const char *key_file;    /* its private key (PEM); NULL: in cert_file */
	const char *verify_name; /* DNS name or IP address the server's certificate must carry
	                            (subjectAltName); NULL: the URI's host */
} rc_tls_client_opts;

/*
 * rc_tls_clientcert -- whether a TLS server asks for client certificates: RC_TLS_CERT_NONE
 * (never), RC_TLS_CERT_OPTIONAL (asked; one that is sent must verify against the server's
 * client CA), RC_TLS_CERT_REQUIRED (a client without a valid one fails the handshake).
 */
typedef enum rc_tls_clientcert {
	RC_TLS_CERT_NONE = 0,
	RC_TLS_CERT_OPTIONAL = 1,
	RC_TLS_CERT_REQUIRED = 2
} rc_tls_clientcert;

/*
 * rc_tls_server_opts -- a server's TLS settings (zero-initialise it; rc_server_set_tls). The
 * strings are read during the call and not kept.
 */
typedef struct rc_tls_server_opts {
	const char *cert_file;        /* PEM server certificate (chain); required */
	const char *key_file;         /* its private key (PEM); NULL: in cert_file */
	const char *client_ca_file;   /* PEM CAs that client certificates must chain to; required
	                                 unless clientcert is RC_TLS_CERT_NONE */
	rc_tls_clientcert clientcert; /* see rc_tls_clientcert */
	unsigned max_handshakes;      /* handshakes in progress at once; a probe beyond it has its
	                                 connection closed after the reply (0: 64) */
} rc_tls_server_opts;

/* RC_TLS_DEFAULT_MAX_HANDSHAKES -- a server's cap on handshakes in progress when
 * rc_tls_server_opts.max_handshakes is 0. */
#define RC_TLS_DEFAULT_MAX_HANDSHAKES 64u

/*
 * rc_tls_peer -- who is at the other end of a server's TLS connection, from the client
 * certificate the handshake verified: the subject as one RFC 2253 line
 * ("CN=alice,O=Example") and the subjectAltName entries as text ("DNS:host.example",
 * "IP:192.0.2.1", "email:a@example", "URI:..."). Owned by the connection; valid while the
 * procedure that asked for it runs.
 */
typedef struct rc_tls_peer {
	const char *subject;
	const char *const *sans;
	size_t nsans;
} rc_tls_peer;

#ifdef __cplusplus
}
#endif
#endif

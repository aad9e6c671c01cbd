/*
 * Internal to runtime/gss*.c: RFC 4121 per-message tokens computed from an exported ("lucid")
 * krb5 context, as the Linux kernel's sunrpc does (net/sunrpc/auth_gss/gss_krb5_*.c), instead
 * of one GSS-API call per MIC or wrap. Enctypes 17/18 (RFC 3962) and 19/20 (RFC 8009).
 *
 * Not thread-safe: the caller serializes every call on one context (rc__gss_sec's lock); only
 * the send sequence number is atomic.
 */
#ifndef RC_GSS_KRB5_H
#define RC_GSS_KRB5_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gssapi/gssapi.h>

typedef struct rc__krb5_ctx rc__krb5_ctx;

/* Bytes before the plaintext in a wrap token (header, confounder), and the most a MIC token
 * takes (header, 192-bit checksum). */
#define RC__KRB5_WRAP_PRE 32
#define RC__KRB5_MIC_MAX 40

/* Replace the established context *ctx by an imported copy MIT can still inquire and use, and
 * return the per-message state made from another copy's lucid export -- or NULL (other
 * enctypes, a non-CFX context, any failure, RC_GSS_NO_LUCID set in the environment or
 * rc__krb5_enable(false)): then *ctx is MIT's to use for everything, as before. */
rc__krb5_ctx *rc__krb5_from_gss(gss_ctx_id_t *ctx);
/* Wipe the keys and free (NULL: nothing). */
void rc__krb5_free(rc__krb5_ctx *k);
/* Tests: turn the lucid path off (false) or on for contexts made from now on. */
void rc__krb5_enable(bool on);
/* The enctype of the keys in use (17, 18, 19 or 20). */
int rc__krb5_enctype(const rc__krb5_ctx *k);

/* A MIC token (TOK_ID 04 04) over msg into tok (RC__KRB5_MIC_MAX bytes): its length, or 0. */
size_t rc__krb5_get_mic(rc__krb5_ctx *k, const void *msg, size_t n, unsigned char *tok);
/* 0 if tok is the peer's MIC over msg (no ordering check: RPCSEC_GSS has its window), else -1. */
int rc__krb5_verify_mic(rc__krb5_ctx *k, const void *msg, size_t n, const void *tok, size_t len);

/* The length of the wrap token (with confidentiality) of n bytes of plaintext. */
size_t rc__krb5_wrap_len(const rc__krb5_ctx *k, size_t n);
/* Wrap in place: the caller put n bytes of plaintext at tok + RC__KRB5_WRAP_PRE, and tok has
 * rc__krb5_wrap_len(k, n) bytes. 0, or -1. */
int rc__krb5_wrap(rc__krb5_ctx *k, unsigned char *tok, size_t n);
/* Unwrap the peer's wrap token tok[0..len) in place (any RRC and EC; confidentiality
 * required): 0 with the plaintext at tok + *off, *n bytes long, or -1. */
int rc__krb5_unwrap(rc__krb5_ctx *k, unsigned char *tok, size_t len, size_t *off, size_t *n);

#endif

/*
 * Internal to runtime/gss*.c: the locked GSS context the client and server files share.
 */
#ifndef RC_GSS_INT_H
#define RC_GSS_INT_H

#include <pthread.h>

#include "runtime/auth/gss.h"
#include "runtime/auth/gss_krb5.h"

/* A security context and the lock every GSS call on it runs under (MIT's contexts keep
 * sequence state that concurrent calls would race on). */
struct rc__gss_sec {
	pthread_mutex_t lock;
	gss_ctx_id_t ctx;     /* GSS_C_NO_CONTEXT until a first token was processed */
	rc__krb5_ctx *fast;   /* set once established: per-message tokens without MIT */
};

void rc__gss_sec_init(rc__gss_sec *s);
/* Delete the GSS context (if any) and the lock. */
void rc__gss_sec_fini(rc__gss_sec *s);
/* The context is established (under s->lock): from now on MICs and wraps are computed from its
 * lucid export where the enctype allows (gss_krb5.c), else by MIT as before. */
void rc__gss_sec_established(rc__gss_sec *s);
/* Drop the lucid state (before the context is deleted or replaced; under s->lock). */
void rc__gss_sec_reset(rc__gss_sec *s);
/* Tests: the enctype a client's per-message tokens are computed with by gss_krb5.c, or 0 where
 * MIT computes them. */
int rc__gss_cli_lucid(rc__gss_cli *c);

/* gss_acceptor.c: an acceptor credential (krb5) for principal (host-based "nfs@host", or a
 * krb5 name with a '/'; NULL: any key) from keytab (NULL: the default). Returns 0 with *cred
 * (the caller's, gss_release_cred), or -1 with err set and *cred GSS_C_NO_CREDENTIAL. */
int rc__gss_cred_acquire(const char *principal, const char *keytab, gss_cred_id_t *cred,
			 rc__gss_err *err);

#endif

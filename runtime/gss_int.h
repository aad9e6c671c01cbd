/*
 * Internal to runtime/gss*.c: the locked GSS context the client and server files share.
 */
#ifndef RC_GSS_INT_H
#define RC_GSS_INT_H

#include <pthread.h>

#include "runtime/gss.h"

/* A security context and the lock every GSS call on it runs under (MIT's contexts keep
 * sequence state that concurrent calls would race on). */
struct rc__gss_sec {
	pthread_mutex_t lock;
	gss_ctx_id_t ctx;     /* GSS_C_NO_CONTEXT until a first token was processed */
};

void rc__gss_sec_init(rc__gss_sec *s);
/* Delete the GSS context (if any) and the lock. */
void rc__gss_sec_fini(rc__gss_sec *s);

#endif

/*
 * The registry of auth flavors by number: one line per built-in flavor, and those added at run
 * time (rc__flavor_add). Above every flavor's file (auth.c's AUTH_NONE, AUTH_SYS and AUTH_TLS,
 * auth_gss.c's RPCSEC_GSS), below the serve step, dispatch and the client, which find flavors
 * here; so no flavor's file refers to another's through it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/auth/auth.h"

/* One line per flavor. */
static const rc__flavor *const rc__flavors[] = {
	&rc__flavor_none,
	&rc__flavor_sys,
	&rc__flavor_tls,
	&rc__flavor_gss,
};

/* Flavors added at run time (rc__flavor_add: tests, and flavors built as separate objects). */
#define RC__FLAVORS_ADDED 8
static const rc__flavor *_Atomic rc__added[RC__FLAVORS_ADDED];
static pthread_mutex_t rc__added_mu = PTHREAD_MUTEX_INITIALIZER;

/* auth.h: the registered flavor with this number. */
const rc__flavor *rc__flavor_find(uint32_t number)
{
	for (size_t i = 0; i < sizeof(rc__flavors) / sizeof(rc__flavors[0]); i++)
		if (rc__flavors[i]->number == number)
			return rc__flavors[i];
	for (size_t i = 0; i < RC__FLAVORS_ADDED; i++) {
		const rc__flavor *f = atomic_load_explicit(&rc__added[i], memory_order_acquire);
		if (f == NULL)
			break;
		if (f->number == number)
			return f;
	}
	return NULL;
}

/* auth.h: register fl. */
bool rc__flavor_add(const rc__flavor *fl)
{
	bool ok = false;

	if (fl == NULL)
		return false;
	pthread_mutex_lock(&rc__added_mu);
	if (rc__flavor_find(fl->number) == NULL) {
		for (size_t i = 0; i < RC__FLAVORS_ADDED; i++) {
			if (atomic_load_explicit(&rc__added[i], memory_order_relaxed) == NULL) {
				atomic_store_explicit(&rc__added[i], fl, memory_order_release);
				ok = true;
				break;
			}
		}
	}
	pthread_mutex_unlock(&rc__added_mu);
	return ok;
}

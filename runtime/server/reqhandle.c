/*
 * Request handles (request.h, "Request handles"): the process-wide table of slots that the
 * rc_svc_req * handed to routines names, a slot per request object alive, and each slot's
 * generation. The bottom of the server's layers: defer.c makes, moves on and frees handles;
 * dispatch.c, rpcsec_gss.c and backchan.c's public entries look them up (rc__req_of).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "runtime/server/request.h"

rc__hslot *_Atomic rc__hslots[RC__HCHUNKS]; /* chunks made as needed, never freed */
static pthread_mutex_t rc__hslot_mu = PTHREAD_MUTEX_INITIALIZER; /* what follows, the chunks'
                                                                    making, slots' next */
static uint32_t rc__hslot_fresh = 1;              /* the next slot never used (0 never is) */
static uint32_t rc__hslot_head, rc__hslot_tail;   /* free slots, oldest first; 0: none */

/* Slot i (its chunk exists). */
static rc__hslot *rc__hslot_at(uint32_t i)
{
	return atomic_load_explicit(&rc__hslots[i / RC__HCHUNK], memory_order_acquire) +
	       i % RC__HCHUNK;
}

/* The handle of slot i at generation gen. */
static rc_svc_req *rc__handle_make(uint32_t i, uint32_t gen)
{
	return (rc_svc_req *)(((uintptr_t)i << RC__HGEN_BITS) | gen);
}

/* request.h: a slot (the oldest free one, else a fresh one) and a handle for new r. */
bool rc__req_handle_take(rc__req *r)
{
	rc__hslot *s;
	uint32_t i;

	pthread_mutex_lock(&rc__hslot_mu);
	if ((i = rc__hslot_head) != 0) {
		s = rc__hslot_at(i);
		if ((rc__hslot_head = s->next) == 0)
			rc__hslot_tail = 0;
	} else {
		rc__hslot *_Atomic *chunk = &rc__hslots[rc__hslot_fresh / RC__HCHUNK];
		i = rc__hslot_fresh;
		if ((uint64_t)i >= (uint64_t)RC__HCHUNK * RC__HCHUNKS) {
			pthread_mutex_unlock(&rc__hslot_mu);
			return false;
		}
		if (atomic_load_explicit(chunk, memory_order_relaxed) == NULL) {
			rc__hslot *c = calloc(RC__HCHUNK, sizeof(*c));
			if (c == NULL) {
				pthread_mutex_unlock(&rc__hslot_mu);
				return false;
			}
			atomic_store_explicit(chunk, c, memory_order_release);
		}
		rc__hslot_fresh++;
		s = rc__hslot_at(i);
	}
	s->next = 0;
	atomic_store_explicit(&s->deferred, 0, memory_order_relaxed);
	atomic_store_explicit(&s->req, r, memory_order_relaxed);
	r->hidx = i;
	r->handle = rc__handle_make(i, atomic_load_explicit(&s->gen, memory_order_relaxed));
	pthread_mutex_unlock(&rc__hslot_mu);
	return true;
}

/* request.h: r's slot to its next generation. */
void rc__req_handle_bump(rc__req *r)
{
	rc__hslot *s = rc__hslot_at(r->hidx);
	uint32_t gen = (atomic_load_explicit(&s->gen, memory_order_relaxed) + 1) & RC__HGEN_MASK;

	atomic_store_explicit(&s->deferred, 0, memory_order_relaxed);
	atomic_store_explicit(&s->gen, gen, memory_order_release);
	r->handle = rc__handle_make(r->hidx, gen);
}

/* request.h: free r, its slot back to the free list (stale). */
void rc__req_free(rc__req *r)
{
	rc__hslot *s;

	pthread_mutex_lock(&rc__hslot_mu);
	rc__req_handle_bump(r);
	s = rc__hslot_at(r->hidx);
	atomic_store_explicit(&s->req, NULL, memory_order_relaxed);
	if (rc__hslot_tail != 0)
		rc__hslot_at(rc__hslot_tail)->next = r->hidx;
	else
		rc__hslot_head = r->hidx;
	rc__hslot_tail = r->hidx;
	pthread_mutex_unlock(&rc__hslot_mu);
	free(r->own);
	free(r);
}

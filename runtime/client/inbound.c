/*
 * The calls the client's peer sends on its stream (the back channel's, client side): queued
 * by the reader, served outside the client's lock through the server rc_client_serve set
 * (rc__cl_server), each reply sent on the client's connection (common.h).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/client/common.h"

/* common.h */
void rc__inq_add(rc_client *c, const unsigned char *msg, size_t len)
{
	rc__inq *q;

	if (c->ninq >= RC__INQ_MAX)
		return;
	if ((q = c->inq_spare) != NULL && q->len >= len)
		c->inq_spare = NULL; /* the last served call's buffer: big enough */
	else if ((q = malloc(sizeof(*q) + (len < RC__INQ_SPARE ? RC__INQ_SPARE : len))) == NULL)
		return;
	q->next = NULL;
	q->len = len;
	memcpy(q->msg, msg, len);
	if (c->inq_tail)
		c->inq_tail->next = q;
	else
		c->inq = q;
	c->inq_tail = q;
	c->ninq++;
	rc__wake(c); /* a waiter beside the reader may serve it */
}

/* The way back of the peer's calls being served: the client, and what a failed send calls. */
typedef struct rc__inq_way {
	rc_client *c;
	rc__send_failed_fn failed;
} rc__inq_way;

/* Send a reply to the peer's call on c's stream (rc_reply_fn, ctx an rc__inq_way; headroom
 * before msg), under the send lock; what the socket does not take waits in the output queue
 * (up to RC__OQ_BLOCK, as a started call), flushed by whoever waits or advances next. A
 * failure closes the connection as any failed send does (the way's failed). */
static void rc__inq_reply(void *ctx, unsigned char *msg, size_t len)
{
	const rc__inq_way *w = ctx;
	rc_client *c = w->c;
	rc_status st = RC_CANTSEND;
	rc_tp *tp;
	int e = 0;

	pthread_mutex_lock(&c->smu);
	tp = c->tp;
	if (tp != NULL) {
		/* queued, not waited for, as a started call's (the peer may be writing to us) */
		unsigned f = tp->vt->outq(tp) < RC__OQ_BLOCK ? RC_TPF_DONTWAIT : 0;
		rc__smu_send(c);
		st = tp->vt->send(tp, msg, len, NULL, c->cork > 0 ? f | RC_TPF_MORE : f);
		e = errno;
		rc__smu_sent(c);
		atomic_store(&c->queued, tp->vt->outq(tp) > 0);
	}
	pthread_mutex_unlock(&c->smu);
	if (st != RC_OK && tp != NULL) {
		pthread_mutex_lock(&c->mu);
		w->failed(c, tp, e);
		pthread_mutex_unlock(&c->mu);
	}
}

/* Answer call m[0..len) (len >= 12) when the client serves nothing: RPC version 2 gets
 * PROG_UNAVAIL, any other RPC_MISMATCH (2, 2). */
static void rc__inq_unavail(const rc__inq_way *w, const unsigned char *m, size_t len)
{
	_Alignas(16) unsigned char b[RC_TP_HEADROOM + 24];
	unsigned char *r = b + RC_TP_HEADROOM;
	uint32_t v[6] = {rc__get32(m), RC__REPLY, RC__MSG_ACCEPTED, RC_AUTH_NONE, 0,
	                 RC__PROG_UNAVAIL};

	if (len < 16 || rc__get32(m + 8) != 2) {
		v[2] = RC__MSG_DENIED;
		v[3] = RC__RPC_MISMATCH;
		v[4] = 2;
		v[5] = 2;
	}
	for (int i = 0; i < 6; i++)
		rc__put32(r + 4 * i, v[i]);
	rc__inq_reply((void *)w, r, 24);
}

/* common.h */
void rc__serve_inq(rc_client *c, rc__send_failed_fn failed)
{
	const rc__inq_way w = {c, failed};

	while (c->inq != NULL) {
		rc__inq *q = c->inq;
		if ((c->inq = q->next) == NULL)
			c->inq_tail = NULL;
		c->ninq--;
		pthread_mutex_unlock(&c->mu);
		if (c->srv != NULL)
			c->srv_ops->deliver(c->srv, q->msg, q->len, rc__inq_reply, (void *)&w);
		else
			rc__inq_unavail(&w, q->msg, q->len);
		pthread_mutex_lock(&c->mu);
		if (c->inq_spare == NULL && q->len <= RC__INQ_SPARE) {
			q->len = RC__INQ_SPARE; /* (its capacity, while it is the spare) */
			c->inq_spare = q;
		} else {
			free(q);
		}
	}
}

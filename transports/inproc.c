/*
 * In-process transport (PARPC's "local procedure call"): client and server in one process, no
 * sockets. A listener on inproc:NAME enters NAME and the server's delivery callback in a
 * process-wide table; a client's send hands the message to that callback in the calling thread
 * (the server serves it there) and queues the reply, which the next recv returns. A listener
 * that closes leaves the table first, under the table's write lock, so no call can reach a
 * server that is gone.
 *
 * A server may keep the way back and answer later from another thread (a deferred request):
 * it holds a reference to the client's end, which lives until the last of its own and those
 * references goes; a reply to an end its client has closed is dropped. While replies are
 * owed, a blocking recv waits for one (up to the receive timeout) instead of saying there is
 * none.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "transports/transport.h"

#define RC__INPROC_MAX 64

static pthread_rwlock_t rc__inproc_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct {
	char name[256];
	rc_tp_deliver deliver; /* deliver.message NULL: a free slot */
	rc_tp *tp;
} rc__inproc_tab[RC__INPROC_MAX];

typedef struct rc__reply {
	struct rc__reply *next;
	size_t len;
	unsigned char data[];
} rc__reply;

typedef struct rc__inproc {
	rc_tp tp;
	char name[256];
	rc__reply *head, *tail; /* under mu: replies not yet received */
	rc__reply *cur;         /* the reply last returned by recv */
	pthread_mutex_t mu;
	pthread_cond_t cv;      /* a reply was queued (a blocking recv waits while owed) */
	unsigned refs;          /* under mu: the client's (until close), one per kept way back */
	unsigned owed;          /* under mu: ways back kept and not yet released */
	bool closed;            /* under mu: the client closed its end (replies are dropped) */
} rc__inproc;

static void rc__inproc_free(rc__inproc *c);

/* Queue a copy of a reply for c's recv (any thread). False: c's client has closed its end
 * (the reply is dropped). Out of memory, the reply is lost: the call times out, as a lost
 * datagram's would. */
static bool rc__inproc_queue_kept(void *ctx, unsigned char *msg, size_t len)
{
	rc__inproc *c = ctx;
	rc__reply *r = malloc(sizeof(*r) + len);

	if (r != NULL) {
		r->next = NULL;
		r->len = len;
		memcpy(r->data, msg, len);
	}
	pthread_mutex_lock(&c->mu);
	if (c->closed) {
		pthread_mutex_unlock(&c->mu);
		free(r);
		return false;
	}
	if (r == NULL) {
		pthread_mutex_unlock(&c->mu);
		return true;
	}
	if (c->tail)
		c->tail->next = r;
	else
		c->head = r;
	c->tail = r;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	return true;
}

/* The reply function a client's send passes along: the reply queued for its recv. */
static void rc__inproc_queue(void *ctx, unsigned char *msg, size_t len)
{
	(void)rc__inproc_queue_kept(ctx, msg, len);
}

/* The server keeps the way back to c (a deferred request): a reference, and a reply owed. */
static void rc__inproc_hold(void *ctx)
{
	rc__inproc *c = ctx;

	pthread_mutex_lock(&c->mu);
	c->refs++;
	c->owed++;
	pthread_mutex_unlock(&c->mu);
}

/* ... and lets go of it, replied or not: the last reference frees c. */
static void rc__inproc_release(void *ctx)
{
	rc__inproc *c = ctx;
	bool last;

	pthread_mutex_lock(&c->mu);
	c->owed--;
	last = --c->refs == 0;
	pthread_cond_broadcast(&c->cv); /* (a waiting recv sees nothing more is owed) */
	pthread_mutex_unlock(&c->mu);
	if (last)
		rc__inproc_free(c);
}

/* A client's send: the listener of its name serves msg now, under the table's read lock (so
 * the listener cannot close meanwhile); the reply is queued for recv. RC_CANTSEND (errno
 * ECONNREFUSED) if no listener has the name. */
static rc_status rc__inproc_send(rc_tp *tp, unsigned char *msg, size_t len, const rc_peer *to,
                                 unsigned flags)
{
	rc__inproc *c = (rc__inproc *)tp;
	bool found = false;

	(void)to;
	(void)flags;
	if (len > tp->max_msg)
		return RC_MSGTOOLARGE;
	pthread_rwlock_rdlock(&rc__inproc_lock);
	for (int i = 0; i < RC__INPROC_MAX && !found; i++) {
		const rc_tp_deliver *d = &rc__inproc_tab[i].deliver;
		if (d->message && strcmp(rc__inproc_tab[i].name, c->name) == 0) {
			if (d->message_to != NULL) {
				const rc_tp_reply_to to = {rc__inproc_queue, c, rc__inproc_hold,
				                           rc__inproc_queue_kept, rc__inproc_release};
				d->message_to(d->ctx, msg, len, &to);
			} else {
				d->message(d->ctx, msg, len, rc__inproc_queue, c);
			}
			found = true;
		}
	}
	pthread_rwlock_unlock(&rc__inproc_lock);
	if (!found) {
		errno = ECONNREFUSED;
		return RC_CANTSEND;
	}
	return RC_OK;
}

/* The oldest queued reply (valid until the next recv), or RC_AGAIN: the server queued none,
 * and -- unless it kept the way back to answer later (owed) -- none will come. A blocking
 * recv (flags without RC_TPF_DONTWAIT) waits while replies are owed, up to the receive
 * timeout (tp->rcvtimeo_ms; negative: no limit). */
static rc_status rc__inproc_recv(rc_tp *tp, void **msg, size_t *len, rc_peer *from,
                                 unsigned flags)
{
	rc__inproc *c = (rc__inproc *)tp;
	rc__reply *r;

	(void)from;
	pthread_mutex_lock(&c->mu);
	free(c->cur);
	c->cur = NULL;
	if (c->head == NULL && c->owed > 0 && !(flags & RC_TPF_DONTWAIT)) {
		int ms = tp->rcvtimeo_ms;
		uint64_t at = rc__clock_ns() + (uint64_t)(ms > 0 ? ms : 0) * 1000000u;
		struct timespec until = {(time_t)(at / 1000000000u), (long)(at % 1000000000u)};
		while (c->head == NULL && c->owed > 0)
			if ((ms < 0 ? pthread_cond_wait(&c->cv, &c->mu)
			            : pthread_cond_timedwait(&c->cv, &c->mu, &until)) == ETIMEDOUT)
				break;
	}
	r = c->head;
	if (r != NULL) {
		c->head = r->next;
		if (c->head == NULL)
			c->tail = NULL;
		c->cur = r;
	}
	pthread_mutex_unlock(&c->mu);
	if (r == NULL)
		return RC_AGAIN;
	*msg = r->data;
	*len = r->len;
	return RC_OK;
}

/* Nothing to wake: no thread ever blocks in an in-process transport. */
static void rc__inproc_shutdown(rc_tp *tp, bool both)
{
	(void)tp;
	(void)both;
}

/* Free c and what it queued (its last reference went). */
static void rc__inproc_free(rc__inproc *c)
{
	rc__reply *r, *n;

	for (r = c->head; r; r = n) {
		n = r->next;
		free(r);
	}
	free(c->cur);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* Close: a listener first leaves the name table; the end is freed now, or -- when a server
 * still keeps the way back to it -- by the last release (replies to it are dropped). */
static void rc__inproc_close(rc_tp *tp)
{
	rc__inproc *c = (rc__inproc *)tp;
	bool last;

	if (tp->listener) {
		pthread_rwlock_wrlock(&rc__inproc_lock);
		for (int i = 0; i < RC__INPROC_MAX; i++)
			if (rc__inproc_tab[i].tp == tp)
				memset(&rc__inproc_tab[i], 0, sizeof(rc__inproc_tab[i]));
		pthread_rwlock_unlock(&rc__inproc_lock);
	}
	pthread_mutex_lock(&c->mu);
	c->closed = true;
	last = --c->refs == 0;
	pthread_mutex_unlock(&c->mu);
	if (last)
		rc__inproc_free(c);
}

/* The vt's set_max_record: messages of at most n bytes from now on. */
static void rc__inproc_set_max_record(rc_tp *tp, size_t n)
{
	tp->max_msg = n;
}

static const rc_tp_vt rc__inproc_vt = {
	.send = rc__inproc_send,
	.flush = NULL,
	.outq = rc__tp_nothing_queued,
	.recv = rc__inproc_recv,
	.accept = NULL,
	.set_max_record = rc__inproc_set_max_record,
	.buffered = rc__tp_nothing_buffered,
	.hung_up = rc__tp_never_hung_up,
	.shutdown = rc__inproc_shutdown,
	.close = rc__inproc_close,
};

/* A new in-process transport for name; NULL if memory is short. */
static rc__inproc *rc__inproc_new(const char *name, size_t max_record)
{
	rc__inproc *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->tp.vt = &rc__inproc_vt;
	c->tp.fd = -1;
	c->tp.props = RC_TPP_SYNC;
	c->tp.max_msg = max_record;
	c->tp.rcvtimeo_ms = -1;
	snprintf(c->name, sizeof(c->name), "%s", name);
	pthread_mutex_init(&c->mu, NULL);
	rc__cond_init_mono(&c->cv); /* waits measured on the monotonic clock */
	c->refs = 1; /* its owner's */
	return c;
}

/* A client's end: nothing is looked up until its first send (the server may come later). */
static rc_status rc__inproc_connect(const rc_uri *u, size_t max_record, int64_t deadline,
                                    rc_tp **out)
{
	rc__inproc *c = rc__inproc_new(u->host, max_record);

	(void)deadline;
	if (c == NULL)
		return RC_NOMEM;
	*out = &c->tp;
	return RC_OK;
}

/* Enter u's name in the table with deliver (copied). RC_LOCALERROR if the name is taken,
 * RC_TOOMANY if the table is full, RC_INVAL without a delivery callback, RC_NOMEM. */
static rc_status rc__inproc_listen(const rc_uri *u, size_t max_record,
                                   const rc_tp_deliver *deliver, rc_tp **out, char *bound,
                                   size_t len)
{
	rc__inproc *c;
	int slot = -1;

	if (deliver == NULL || deliver->message == NULL)
		return RC_INVAL;
	pthread_rwlock_wrlock(&rc__inproc_lock);
	for (int i = 0; i < RC__INPROC_MAX; i++) {
		if (rc__inproc_tab[i].deliver.message && strcmp(rc__inproc_tab[i].name, u->host) == 0) {
			pthread_rwlock_unlock(&rc__inproc_lock);
			return RC_LOCALERROR; /* the name is taken */
		}
		if (rc__inproc_tab[i].deliver.message == NULL && slot < 0)
			slot = i;
	}
	if (slot < 0 || (c = rc__inproc_new(u->host, max_record)) == NULL) {
		pthread_rwlock_unlock(&rc__inproc_lock);
		return slot < 0 ? RC_TOOMANY : RC_NOMEM;
	}
	c->tp.listener = true;
	snprintf(rc__inproc_tab[slot].name, sizeof(rc__inproc_tab[slot].name), "%s", u->host);
	rc__inproc_tab[slot].deliver = *deliver;
	rc__inproc_tab[slot].tp = &c->tp;
	pthread_rwlock_unlock(&rc__inproc_lock);
	if (bound && len)
		snprintf(bound, len, "inproc:%s", u->host);
	*out = &c->tp;
	return RC_OK;
}

const rc_tp_kind rc__inproc_kind = {"inproc", RC_TPP_SYNC, rc__inproc_connect,
                                     rc__inproc_listen, NULL};

/*
 * The duplicate request cache: at-most-once execution for retransmitted datagram calls.
 *
 * Rules (docs/runtime.md, "At most once"):
 *   1. Every call admitted is remembered until drc_ttl_ms after its reply was stored (a call
 *      still running is remembered however long it runs). A retransmission meanwhile gets the
 *      stored reply, or is dropped while the call runs; it never runs the procedure again.
 *   2. The cache is bounded by bytes (drc_bytes: entries, the replies kept outside them and the
 *      hash index) and by entries (drc_entries). Entries whose time is up are freed first.
 *   3. When the bound is reached by entries still within their time, replies over
 *      RC__DRC_INLINE bytes are let go, oldest first ("shed"): the call stays remembered, so a
 *      retransmission of it is dropped unanswered instead of being run again.
 *      Large replies also hold at most RC__DRC_BIG_CAP bytes in all (4 MiB), shed likewise.
 *   4. When even that leaves no room, the new call is refused: dropped without running, for
 *      its client to retransmit later. Nothing that ran is ever forgotten early.
 *   5. A call admitted but not run (its arguments did not decode, memory ran out before the
 *      routine) is forgotten at once (rc__drc_cancel): a retransmission may run it, once.
 * Each of these events is counted (rc__drc_get_stats, public through rc_server_get_stats).
 *
 * Entries are kept in admission order (a doubly linked FIFO: the oldest is freed first) and in a hash table
 * that grows with them; a reply up to RC__DRC_INLINE bytes lives inside its entry, a larger one
 * in a block of its own, on a second FIFO that rule 3 sheds from.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>

#include "runtime/server_internal.h"

#define RC__DRC_INLINE 32         /* replies this long live inside the entry (a hyper result: 32) */
#define RC__DRC_MALLOC_OVERHEAD 16 /* what the allocator adds to each block, charged too */
#define RC__DRC_MIN_BUCKETS 256u
#define RC__DRC_ROTATE_MAX 8      /* long-running calls moved past per reclaim */
#define RC__DRC_BIG_CAP ((size_t)4 << 20) /* bytes of large replies kept in all, at most */

enum { RC__DRC_RUNNING, RC__DRC_DONE, RC__DRC_NOREPLY };

typedef struct rc__drc_ent rc__drc_ent;

/* A reply over RC__DRC_INLINE bytes, kept outside its entry. */
typedef struct rc__drc_big {
	struct rc__drc_big *older, *newer; /* the list of large replies, oldest first */
	rc__drc_ent *owner;
	size_t len;
	unsigned char data[];
} rc__drc_big;

struct rc__drc_ent {
	rc__drc_key key;
	rc__drc_ent *chain;  /* hash chain, newest first */
	rc__drc_ent *older, *newer; /* admission order */
	int64_t born;        /* admitted */
	int64_t done_at;     /* reply stored (RC__DRC_DONE / RC__DRC_NOREPLY) */
	uint32_t rlen;
	uint8_t state;
	union {
		unsigned char in[RC__DRC_INLINE]; /* rlen <= RC__DRC_INLINE */
		rc__drc_big *big;                 /* rlen > RC__DRC_INLINE and state DONE */
	} r;
};

#define RC__DRC_ENT_COST (sizeof(rc__drc_ent) + RC__DRC_MALLOC_OVERHEAD)

struct rc__drc {
	pthread_mutex_t mu;
	size_t max_bytes;
	uint32_t max_entries;
	int64_t ttl_ns;
	size_t bytes;     /* entries + large replies + buckets, as charged */
	size_t big_bytes; /* the large replies' part of it */
	uint32_t n;       /* entries */
	uint32_t nbuckets; /* a power of two */
	rc__drc_ent **buckets;
	rc__drc_ent *oldest, *newest;
	rc__drc_big *big_oldest, *big_newest;
	rc__drc_stats st; /* counters (the entries/bytes fields are filled in on reading) */
};

/* Monotonic nanoseconds. */
static int64_t rc__drc_now(void)
{
	return (int64_t)rc__clock_ns(); /* the shared monotonic clock (xdr/base.h) */
}

rc__drc *rc__drc_create(uint32_t entries, size_t bytes, uint32_t ttl_ms)
{
	rc__drc *d;

	if (entries == 0 || bytes < RC__DRC_MIN_BUCKETS * sizeof(rc__drc_ent *) + RC__DRC_ENT_COST)
		return NULL;
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	d->max_entries = entries;
	d->max_bytes = bytes;
	d->ttl_ns = (int64_t)ttl_ms * 1000000;
	d->nbuckets = RC__DRC_MIN_BUCKETS;
	if ((d->buckets = calloc(d->nbuckets, sizeof(*d->buckets))) == NULL) {
		free(d);
		return NULL;
	}
	d->bytes = d->nbuckets * sizeof(*d->buckets);
	pthread_mutex_init(&d->mu, NULL);
	return d;
}

void rc__drc_destroy(rc__drc *d)
{
	if (d == NULL)
		return;
	while (d->oldest != NULL) {
		rc__drc_ent *e = d->oldest;
		d->oldest = e->newer;
		if (e->state == RC__DRC_DONE && e->rlen > RC__DRC_INLINE)
			free(e->r.big);
		free(e);
	}
	free(d->buckets);
	pthread_mutex_destroy(&d->mu);
	free(d);
}

void rc__drc_make_key(rc__drc_key *k, uint32_t xid, uint32_t prog, uint32_t vers,
                      uint32_t proc, const rc_peer *peer, const unsigned char *args,
                      size_t arglen)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	size_t n = arglen < 256 ? arglen : 256;

	memset(k, 0, sizeof(*k));
	k->xid = xid;
	k->prog = prog;
	k->vers = vers;
	k->proc = proc;
	k->arglen = (uint32_t)arglen;
	if (peer != NULL) {
		k->family = peer->ss.ss_family;
		if (peer->ss.ss_family == AF_INET) {
			const struct sockaddr_in *s = (const struct sockaddr_in *)&peer->ss;
			k->port = s->sin_port;
			memcpy(k->addr, &s->sin_addr, 4);
		} else if (peer->ss.ss_family == AF_INET6) {
			const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)&peer->ss;
			k->port = s->sin6_port;
			memcpy(k->addr, &s->sin6_addr, 16);
		}
	}
	for (size_t i = 0; i < n; i++) {
		h ^= args[i];
		h *= 1099511628211ULL;
	}
	k->csum = h;
}

/* The bucket of k in a table of nbuckets (a power of two). */
static uint32_t rc__drc_hash(uint32_t nbuckets, const rc__drc_key *k)
{
	uint64_t h = (uint64_t)k->xid * 0x9E3779B97F4A7C15ULL ^ k->port ^ ((uint64_t)k->proc << 32) ^
	             k->csum;
	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ULL;
	h ^= h >> 32;
	return (uint32_t)h & (nbuckets - 1);
}

/* Whether two keys are the same call. */
static bool rc__drc_eq(const rc__drc_key *a, const rc__drc_key *b)
{
	return a->xid == b->xid && a->prog == b->prog && a->vers == b->vers &&
	       a->proc == b->proc && a->family == b->family && a->port == b->port &&
	       a->arglen == b->arglen && a->csum == b->csum &&
	       memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

/* The newest entry for k, or NULL (under d->mu). */
static rc__drc_ent *rc__drc_find(rc__drc *d, const rc__drc_key *k)
{
	for (rc__drc_ent *e = d->buckets[rc__drc_hash(d->nbuckets, k)]; e; e = e->chain)
		if (rc__drc_eq(&e->key, k))
			return e;
	return NULL;
}

/* Whether e's time is up: its reply was stored more than the TTL ago (under d->mu). */
static bool rc__drc_expired(const rc__drc *d, const rc__drc_ent *e, int64_t now)
{
	return e->state != RC__DRC_RUNNING && now - e->done_at > d->ttl_ns;
}

/* Take e's large reply off the list and free it; e keeps its key (under d->mu). */
static void rc__drc_big_free(rc__drc *d, rc__drc_ent *e)
{
	rc__drc_big *b = e->r.big;

	if (b->older)
		b->older->newer = b->newer;
	else
		d->big_oldest = b->newer;
	if (b->newer)
		b->newer->older = b->older;
	else
		d->big_newest = b->older;
	d->bytes -= sizeof(*b) + b->len + RC__DRC_MALLOC_OVERHEAD;
	d->big_bytes -= sizeof(*b) + b->len + RC__DRC_MALLOC_OVERHEAD;
	free(b);
	e->r.big = NULL;
}

/* Free entry e (under d->mu): out of its hash chain and the FIFO. */
static void rc__drc_free(rc__drc *d, rc__drc_ent *e)
{
	rc__drc_ent **pp = &d->buckets[rc__drc_hash(d->nbuckets, &e->key)];

	while (*pp != NULL && *pp != e)
		pp = &(*pp)->chain;
	if (*pp == e)
		*pp = e->chain;
	if (e->state == RC__DRC_DONE && e->rlen > RC__DRC_INLINE)
		rc__drc_big_free(d, e);
	if (e->older)
		e->older->newer = e->newer;
	else
		d->oldest = e->newer;
	if (e->newer)
		e->newer->older = e->older;
	else
		d->newest = e->older;
	d->n--;
	d->bytes -= RC__DRC_ENT_COST;
	free(e);
}

/* Append e at the newest end of the FIFO (under d->mu; e is in no list). */
static void rc__drc_append(rc__drc *d, rc__drc_ent *e)
{
	e->newer = NULL;
	e->older = d->newest;
	if (d->newest)
		d->newest->newer = e;
	else
		d->oldest = e;
	d->newest = e;
}

/*
 * Free up to max entries whose time is up, oldest first (under d->mu). Stops at the first
 * entry still within its time; an entry still running after a whole TTL (a long call) is moved
 * to the newest end so that it does not hold back the ones behind it (it stays remembered).
 */
static void rc__drc_reclaim(rc__drc *d, int64_t now, size_t max)
{
	int rotated = 0;

	while (max > 0 && d->oldest != NULL) {
		rc__drc_ent *e = d->oldest;
		if (e->state == RC__DRC_RUNNING) {
			if (now - e->born <= d->ttl_ns || e->newer == NULL ||
			    rotated++ >= RC__DRC_ROTATE_MAX)
				break;
			d->oldest = e->newer;
			d->oldest->older = NULL;
			rc__drc_append(d, e);
			continue;
		}
		if (!rc__drc_expired(d, e, now))
			break;
		rc__drc_free(d, e);
		max--;
	}
}

/* Whether cost more bytes (and entry: one more entry) fit the bounds (under d->mu). */
static bool rc__drc_fits(const rc__drc *d, size_t cost, bool entry)
{
	return d->bytes + cost <= d->max_bytes && (!entry || d->n < d->max_entries);
}

/* Let the oldest large reply go; its call stays remembered, unanswerable (under d->mu, with
 * at least one large reply kept). */
static void rc__drc_shed_oldest(rc__drc *d)
{
	rc__drc_ent *o = d->big_oldest->owner;

	rc__drc_big_free(d, o);
	o->state = RC__DRC_NOREPLY;
	d->st.shed++;
}

/*
 * Make room for cost more bytes (and entry: one more entry) without forgetting any call still
 * within its time (under d->mu): free expired entries, then shed large replies oldest first
 * (their calls stay remembered). Returns whether it fits now.
 */
static bool rc__drc_room(rc__drc *d, size_t cost, bool entry, int64_t now)
{
	if (rc__drc_fits(d, cost, entry))
		return true;
	rc__drc_reclaim(d, now, SIZE_MAX);
	while (!rc__drc_fits(d, cost, entry) && d->big_oldest != NULL &&
	       d->bytes + cost > d->max_bytes)
		rc__drc_shed_oldest(d);
	return rc__drc_fits(d, cost, entry);
}

/* Make room under RC__DRC_BIG_CAP for a large reply of cost bytes by shedding the oldest
 * large replies (under d->mu). Returns whether it fits. */
static bool rc__drc_big_room(rc__drc *d, size_t cost)
{
	while (d->big_bytes + cost > RC__DRC_BIG_CAP && d->big_oldest != NULL)
		rc__drc_shed_oldest(d);
	return d->big_bytes + cost <= RC__DRC_BIG_CAP;
}

/* Double the hash table when the entries outnumber its buckets and the bytes allow (under
 * d->mu). Failing to grow is harmless: the chains get longer. */
static void rc__drc_grow(rc__drc *d)
{
	uint32_t nb = d->nbuckets * 2;
	size_t extra = (size_t)d->nbuckets * sizeof(*d->buckets);
	rc__drc_ent **b;

	if (d->n <= d->nbuckets || nb == 0 || d->bytes + extra > d->max_bytes ||
	    (b = calloc(nb, sizeof(*b))) == NULL)
		return;
	for (uint32_t i = 0; i < d->nbuckets; i++) {
		rc__drc_ent *e = d->buckets[i];
		while (e != NULL) { /* chains stay newest first: walk and re-add in reverse */
			rc__drc_ent *next = e->chain, **pp = &b[rc__drc_hash(nb, &e->key)];
			while (*pp != NULL)
				pp = &(*pp)->chain;
			e->chain = NULL;
			*pp = e;
			e = next;
		}
	}
	free(d->buckets);
	d->buckets = b;
	d->nbuckets = nb;
	d->bytes += extra;
}

/* Copy e's stored reply into rb (reset first, with the transport's headroom). False: out of
 * memory (under d->mu). */
static bool rc__drc_copy_out(const rc__drc_ent *e, rc__encbuf *rb, size_t *rlen)
{
	const unsigned char *src = e->rlen > RC__DRC_INLINE ? e->r.big->data : e->r.in;
	size_t need = e->rlen + RC_TP_HEADROOM;
	unsigned char *dst = rb->data;

	if (need > rb->cap) {
		if ((dst = malloc(need)) == NULL)
			return false;
		rc__encbuf_free(rb);
		rb->data = dst;
		rb->cap = need;
		rb->heap = true;
	}
	memcpy(dst + RC_TP_HEADROOM, src, e->rlen);
	*rlen = e->rlen;
	return true;
}

rc__drc_result rc__drc_lookup(rc__drc *d, const rc__drc_key *k, rc__encbuf *rb, size_t *rlen)
{
	rc__drc_ent *e;
	int64_t now = rc__drc_now();
	rc__drc_result r;
	uint32_t h;

	pthread_mutex_lock(&d->mu);
	rc__drc_reclaim(d, now, 32); /* a few at a time: the cost stays flat */
	e = rc__drc_find(d, k);
	if (e != NULL && !rc__drc_expired(d, e, now)) {
		if (e->state == RC__DRC_RUNNING) {
			d->st.in_progress++;
			r = RC__DRC_INPROGRESS;
		} else if (e->state == RC__DRC_NOREPLY) {
			d->st.unanswered++;
			r = RC__DRC_DROP;
		} else if (rc__drc_copy_out(e, rb, rlen)) {
			d->st.replayed++;
			r = RC__DRC_REPLAY;
		} else {
			r = RC__DRC_DROP; /* out of memory: the client retransmits */
		}
		pthread_mutex_unlock(&d->mu);
		return r;
	}
	/* A new call (an expired entry of the same key, if any, is shadowed by the new one and
	 * freed in its turn). */
	if (!rc__drc_room(d, RC__DRC_ENT_COST, true, now) || (e = malloc(sizeof(*e))) == NULL) {
		d->st.refused++;
		pthread_mutex_unlock(&d->mu);
		return RC__DRC_REFUSED;
	}
	e->key = *k;
	e->state = RC__DRC_RUNNING;
	e->born = now;
	e->done_at = 0;
	e->rlen = 0;
	rc__drc_append(d, e);
	d->n++;
	d->bytes += RC__DRC_ENT_COST;
	rc__drc_grow(d);
	h = rc__drc_hash(d->nbuckets, k);
	e->chain = d->buckets[h];
	d->buckets[h] = e;
	pthread_mutex_unlock(&d->mu);
	return RC__DRC_NEW;
}

void rc__drc_store(rc__drc *d, const rc__drc_key *k, const unsigned char *reply, size_t len)
{
	rc__drc_ent *e;
	int64_t now = rc__drc_now();

	pthread_mutex_lock(&d->mu);
	e = rc__drc_find(d, k); /* the newest of the key: the one admitted for this call */
	if (e != NULL && e->state == RC__DRC_RUNNING) {
		size_t cost = sizeof(rc__drc_big) + len + RC__DRC_MALLOC_OVERHEAD;
		rc__drc_big *b;
		e->done_at = now;
		if (len <= RC__DRC_INLINE) {
			memcpy(e->r.in, reply, len);
			e->rlen = (uint32_t)len;
			e->state = RC__DRC_DONE;
		} else if (cost <= RC__DRC_BIG_CAP && rc__drc_big_room(d, cost) &&
		           rc__drc_room(d, cost, false, now) &&
		           (b = malloc(sizeof(*b) + len)) != NULL) {
			memcpy(b->data, reply, len);
			b->len = len;
			b->owner = e;
			b->newer = NULL;
			b->older = d->big_newest;
			if (d->big_newest)
				d->big_newest->newer = b;
			else
				d->big_oldest = b;
			d->big_newest = b;
			d->bytes += cost;
			d->big_bytes += cost;
			e->r.big = b;
			e->rlen = (uint32_t)len;
			e->state = RC__DRC_DONE;
		} else {
			e->state = RC__DRC_NOREPLY; /* remembered, but a retransmission gets no reply */
			d->st.shed++;
		}
	}
	pthread_mutex_unlock(&d->mu);
}

void rc__drc_cancel(rc__drc *d, const rc__drc_key *k)
{
	rc__drc_ent *e;

	pthread_mutex_lock(&d->mu);
	e = rc__drc_find(d, k);
	if (e != NULL && e->state == RC__DRC_RUNNING)
		rc__drc_free(d, e);
	pthread_mutex_unlock(&d->mu);
}

void rc__drc_get_stats(rc__drc *d, rc__drc_stats *out)
{
	pthread_mutex_lock(&d->mu);
	*out = d->st;
	out->entries = d->n;
	out->bytes = d->bytes;
	pthread_mutex_unlock(&d->mu);
}

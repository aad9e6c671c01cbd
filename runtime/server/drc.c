/*
 * The duplicate request cache: at-most-once execution for retransmitted datagram calls.
 *
 * Rules (docs/runtime.md, "At most once"):
 *   1. Every call admitted is remembered until drc_ttl_ms after its reply was stored (a call
 *      still running is remembered however long it runs). A retransmission meanwhile gets the
 *      stored reply, or is dropped while the call runs; it never runs the procedure again.
 *   2. The cache is bounded by bytes (drc_bytes: entries, the replies kept outside them and the
 *      hash index) and by entries (drc_entries). Entries whose time is up are freed first.
 *   3. When the bound is reached by entries still within their time, replies are let go
 *      before calls ("shed"): first those over RC__DRC_INLINE bytes, oldest first; then the
 *      oldest finished entries are compacted into tombstones -- a 64-bit fingerprint of the key
 *      and the time it expires, 24 bytes instead of ~185 -- in the ledger. Either way the call
 *      stays remembered: a retransmission of it is dropped unanswered, never run again. Large
 *      replies also hold at most RC__DRC_BIG_CAP bytes in all (4 MiB), shed likewise.
 *   4. When even that leaves no room, the new call is refused: dropped without running, for
 *      its client to retransmit later. Nothing that ran is ever forgotten early.
 *   5. A call admitted but not run (its arguments did not decode, memory ran out before the
 *      routine) is forgotten at once (rc__drc_cancel): a retransmission may run it, once.
 * Each of these events is counted (rc__drc_get_stats, public through rc_server_get_stats).
 *
 * Entries are kept in admission order (a doubly linked FIFO: the oldest is freed first) and in
 * a hash table that grows with them; a reply up to RC__DRC_INLINE bytes lives inside its
 * entry, a larger one in a block of its own, on a second FIFO that rule 3 sheds from. The
 * ledger is a ring of tombstones in the order they were made (which is their expiry order,
 * near enough: each expires a TTL after its reply) and an open-addressed set of ring
 * positions keyed by fingerprint. Two different calls share a fingerprint with probability
 * about (tombstones) / 2^64: ~10^-13 a call with two million tombstones; the newer would then
 * be dropped until the older's tombstone expires.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>

#include "runtime/server/server_internal.h"

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

/* A tombstone: a finished call whose entry was compacted (rule 3). */
typedef struct rc__drc_tomb {
	uint64_t fp;    /* rc__drc_fp of its key, never 0 */
	int64_t expire; /* when it may be forgotten */
} rc__drc_tomb;

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
	/* the ledger: tombstones ring[(head + i) % rcap], i < ntomb; set[] holds ring index + 1
	 * (0: free), at most half full; both capacities powers of two, charged to bytes */
	rc__drc_tomb *ring;
	uint32_t rcap, head, ntomb;
	uint32_t *set;
	uint32_t scap;
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
	free(d->ring);
	free(d->set);
	pthread_mutex_destroy(&d->mu);
	free(d);
}

void rc__drc_make_key(rc__drc_key *k, uint32_t xid, uint32_t prog, uint32_t vers,
                      uint32_t proc, uint32_t flavor, const unsigned char *ctx_id,
                      const rc_peer *peer, const unsigned char *args, size_t arglen)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	size_t n = arglen < 256 ? arglen : 256;

	memset(k, 0, sizeof(*k));
	k->xid = xid;
	k->prog = prog;
	k->vers = vers;
	k->proc = proc;
	k->flavor = flavor;
	k->arglen = (uint32_t)arglen;
	if (ctx_id != NULL)
		memcpy(k->ctx, ctx_id, sizeof(k->ctx));
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
	       a->proc == b->proc && a->flavor == b->flavor && a->family == b->family &&
	       a->port == b->port && a->arglen == b->arglen && a->csum == b->csum &&
	       memcmp(a->addr, b->addr, sizeof(a->addr)) == 0 &&
	       memcmp(a->ctx, b->ctx, sizeof(a->ctx)) == 0;
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

/* ---- the ledger: tombstones of compacted calls (rule 3) ---------------------------------- */

#define RC__DRC_LEDGER_MIN 1024u /* ring slots of a new ledger */
#define RC__DRC_TOMB_COST (sizeof(rc__drc_tomb) + 2 * sizeof(uint32_t)) /* a ring and two set slots */

/* The fingerprint of a key: its nine words mixed into 64 bits (never 0). */
static uint64_t rc__drc_fp(const rc__drc_key *k)
{
	uint64_t w[9], h = 0x9E3779B97F4A7C15ULL;

	_Static_assert(sizeof(rc__drc_key) == sizeof(w), "the key is nine 64-bit words");
	memcpy(w, k, sizeof(w)); /* rc__drc_make_key zeroes the key first: no stray bytes */
	for (int i = 0; i < 9; i++) {
		h = (h ^ w[i]) * 0xBF58476D1CE4E5B9ULL;
		h ^= h >> 31;
	}
	h *= 0x94D049BB133111EBULL;
	h ^= h >> 29;
	return h != 0 ? h : 1;
}

/* The set slot where a fingerprint's search starts. */
static uint32_t rc__ledger_home(const rc__drc *d, uint64_t fp)
{
	return (uint32_t)(fp >> 32) & (d->scap - 1);
}

/* Whether a tombstone still within its time has fingerprint fp (under d->mu). */
static bool rc__ledger_has(const rc__drc *d, uint64_t fp, int64_t now)
{
	if (d->ntomb == 0)
		return false;
	for (uint32_t i = rc__ledger_home(d, fp); d->set[i] != 0; i = (i + 1) & (d->scap - 1)) {
		const rc__drc_tomb *t = &d->ring[d->set[i] - 1];
		if (t->fp == fp && t->expire > now)
			return true;
	}
	return false;
}

/* Put ring index r in the set (under d->mu; the set is at most half full). */
static void rc__ledger_set_put(rc__drc *d, uint32_t r)
{
	uint32_t i = rc__ledger_home(d, d->ring[r].fp);

	while (d->set[i] != 0)
		i = (i + 1) & (d->scap - 1);
	d->set[i] = r + 1;
}

/* Take ring index r out of the set (under d->mu; it is there): backward-shift deletion, so
 * that every other entry stays reachable from its home slot. */
static void rc__ledger_set_del(rc__drc *d, uint32_t r)
{
	uint32_t m = d->scap - 1, i = rc__ledger_home(d, d->ring[r].fp), j;

	while (d->set[i] != r + 1)
		i = (i + 1) & m;
	for (j = (i + 1) & m; d->set[j] != 0; j = (j + 1) & m) {
		uint32_t k = rc__ledger_home(d, d->ring[d->set[j] - 1].fp);
		if (((j - k) & m) >= ((j - i) & m)) { /* the hole at i lies on j's probe path */
			d->set[i] = d->set[j];
			i = j;
		}
	}
	d->set[i] = 0;
}

/* Free the ledger's arrays (under d->mu; it holds no tombstone). */
static void rc__ledger_release(rc__drc *d)
{
	d->bytes -= (size_t)d->rcap * sizeof(*d->ring) + (size_t)d->scap * sizeof(*d->set);
	free(d->ring);
	free(d->set);
	d->ring = NULL;
	d->set = NULL;
	d->rcap = d->scap = d->head = 0;
}

/* Forget up to max tombstones whose time is up, oldest first; an emptied ledger gives its
 * memory back (under d->mu). */
static void rc__ledger_expire(rc__drc *d, int64_t now, size_t max)
{
	while (max-- > 0 && d->ntomb > 0 && d->ring[d->head].expire <= now) {
		rc__ledger_set_del(d, d->head);
		d->head = (d->head + 1) & (d->rcap - 1);
		d->ntomb--;
	}
	if (d->ntomb == 0 && d->rcap > 0)
		rc__ledger_release(d);
}

/*
 * Make room in the ledger for one more tombstone (under d->mu), doubling it if full. The
 * doubling may take the cache over its byte bound, as long as compacting the entries it holds
 * can pay it back (each compaction frees ~185 bytes and costs none: the slot is paid for; the
 * caller compacts until the cache fits again, all but calls still running). While it doubles,
 * the old and new arrays are both held. False if neither.
 */
static bool rc__ledger_room(rc__drc *d)
{
	uint32_t nr = d->rcap ? d->rcap * 2 : RC__DRC_LEDGER_MIN, ns = nr * 2;
	size_t now_b = (size_t)d->rcap * sizeof(*d->ring) + (size_t)d->scap * sizeof(*d->set);
	size_t new_b = (size_t)nr * sizeof(*d->ring) + (size_t)ns * sizeof(*d->set);
	rc__drc_tomb *ring;
	uint32_t *set;

	if (d->ntomb < d->rcap)
		return true;
	if (nr > (1u << 30) ||
	    d->bytes - now_b + new_b > d->max_bytes + (size_t)d->n * RC__DRC_ENT_COST)
		return false;
	ring = malloc((size_t)nr * sizeof(*ring));
	set = calloc(ns, sizeof(*set));
	if (ring == NULL || set == NULL) {
		free(ring);
		free(set);
		return false;
	}
	for (uint32_t i = 0; i < d->ntomb; i++)
		ring[i] = d->ring[(d->head + i) & (d->rcap - 1)];
	free(d->ring);
	free(d->set);
	d->ring = ring;
	d->set = set;
	d->rcap = nr;
	d->scap = ns;
	d->head = 0;
	d->bytes = d->bytes - now_b + new_b;
	for (uint32_t i = 0; i < d->ntomb; i++)
		rc__ledger_set_put(d, i);
	return true;
}

/*
 * Compact the oldest finished entry into a tombstone (under d->mu): its reply and entry are
 * freed, its call stays remembered until the same time. False if no entry is finished or the
 * ledger has no room.
 */
static bool rc__drc_compact_oldest(rc__drc *d)
{
	rc__drc_ent *e = d->oldest;
	uint32_t r;

	while (e != NULL && e->state == RC__DRC_RUNNING) /* as many as calls running, at most */
		e = e->newer;
	if (e == NULL || !rc__ledger_room(d))
		return false;
	r = (d->head + d->ntomb) & (d->rcap - 1);
	d->ring[r].fp = rc__drc_fp(&e->key);
	d->ring[r].expire = e->done_at + d->ttl_ns;
	rc__ledger_set_put(d, r);
	d->ntomb++;
	if (e->state == RC__DRC_DONE) /* its reply goes now (a NOREPLY one's went before) */
		d->st.shed++;
	rc__drc_free(d, e);
	return true;
}

/* Whether cost more bytes (and entry: one more call) fit the bounds (under d->mu). */
static bool rc__drc_fits(const rc__drc *d, size_t cost, bool entry)
{
	return d->bytes + cost <= d->max_bytes && (!entry || d->n + d->ntomb < d->max_entries);
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
 * Make room for cost more bytes (and entry: one more call) without forgetting any call still
 * within its time (under d->mu): free expired entries and tombstones, then shed large replies
 * oldest first, then compact the oldest finished entries into tombstones (their calls stay
 * remembered either way). Returns whether it fits now.
 */
static bool rc__drc_room(rc__drc *d, size_t cost, bool entry, int64_t now)
{
	if (rc__drc_fits(d, cost, entry))
		return true;
	rc__drc_reclaim(d, now, SIZE_MAX);
	rc__ledger_expire(d, now, SIZE_MAX);
	while (!rc__drc_fits(d, cost, entry) && d->big_oldest != NULL &&
	       d->bytes + cost > d->max_bytes)
		rc__drc_shed_oldest(d);
	while (d->bytes + cost > d->max_bytes && rc__drc_compact_oldest(d))
		;
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
	rc__ledger_expire(d, now, 32);
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
	/* (no fingerprint to compute while there are no tombstones: the usual case) */
	if (d->ntomb != 0 && rc__ledger_has(d, rc__drc_fp(k), now)) { /* compacted: remembered,
	                                                                   no reply kept */
		d->st.unanswered++;
		pthread_mutex_unlock(&d->mu);
		return RC__DRC_DROP;
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
	out->entries = (uint64_t)d->n + d->ntomb;
	out->bytes = d->bytes;
	pthread_mutex_unlock(&d->mu);
}

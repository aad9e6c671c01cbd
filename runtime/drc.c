/*
 * The duplicate request cache: at-most-once execution for retransmitted datagram calls. A
 * fixed number of entries, recycled oldest first, each expiring after a TTL; a hash on the key
 * finds an entry in O(1). Replies up to RC__DRC_INLINE bytes are kept inside the entry.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>

#include "runtime/server_internal.h"

#define RC__DRC_INLINE 256
#define RC__DRC_HEAP_CAP ((size_t)4 << 20) /* bytes of large replies kept in all */

typedef struct rc__drc_ent {
	rc__drc_key key;
	bool used;
	bool done;
	int64_t born;
	uint32_t next; /* hash chain: index + 1, 0 ends */
	size_t rlen;
	unsigned char *rheap;
	unsigned char rin[RC__DRC_INLINE];
} rc__drc_ent;

struct rc__drc {
	pthread_mutex_t mu;
	uint32_t n;
	uint32_t nbuckets;
	uint32_t ring; /* next entry to recycle */
	int64_t ttl_ns;
	size_t heap_bytes; /* bytes of replies kept outside the entries */
	uint32_t *buckets; /* index + 1 of the first entry, 0 empty */
	rc__drc_ent *ents;
};

static int64_t rc__drc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

rc__drc *rc__drc_create(uint32_t entries, uint32_t ttl_ms)
{
	rc__drc *d;

	if (entries == 0 || entries > (1u << 22))
		return NULL;
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	d->n = entries;
	d->nbuckets = entries * 2;
	d->ttl_ns = (int64_t)ttl_ms * 1000000;
	d->buckets = calloc(d->nbuckets, sizeof(*d->buckets));
	d->ents = calloc(entries, sizeof(*d->ents));
	if (d->buckets == NULL || d->ents == NULL) {
		free(d->buckets);
		free(d->ents);
		free(d);
		return NULL;
	}
	pthread_mutex_init(&d->mu, NULL);
	return d;
}

void rc__drc_destroy(rc__drc *d)
{
	if (d == NULL)
		return;
	for (uint32_t i = 0; i < d->n; i++)
		free(d->ents[i].rheap);
	free(d->buckets);
	free(d->ents);
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

static uint32_t rc__drc_hash(const rc__drc *d, const rc__drc_key *k)
{
	uint64_t h = (uint64_t)k->xid * 0x9E3779B97F4A7C15ULL ^ k->port ^ ((uint64_t)k->proc << 32);
	h ^= h >> 29;
	return (uint32_t)(h % d->nbuckets);
}

static bool rc__drc_eq(const rc__drc_key *a, const rc__drc_key *b)
{
	return a->xid == b->xid && a->prog == b->prog && a->vers == b->vers &&
	       a->proc == b->proc && a->family == b->family && a->port == b->port &&
	       a->arglen == b->arglen && a->csum == b->csum &&
	       memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

static rc__drc_ent *rc__drc_find(rc__drc *d, const rc__drc_key *k)
{
	for (uint32_t i = d->buckets[rc__drc_hash(d, k)]; i != 0; i = d->ents[i - 1].next)
		if (rc__drc_eq(&d->ents[i - 1].key, k))
			return &d->ents[i - 1];
	return NULL;
}

/* Take entry e out of its hash chain. */
static void rc__drc_unlink(rc__drc *d, rc__drc_ent *e)
{
	uint32_t idx = (uint32_t)(e - d->ents) + 1;
	uint32_t *pp = &d->buckets[rc__drc_hash(d, &e->key)];

	while (*pp != 0 && *pp != idx)
		pp = &d->ents[*pp - 1].next;
	if (*pp == idx)
		*pp = e->next;
	e->next = 0;
	e->used = false;
	if (e->rheap != NULL)
		d->heap_bytes -= e->rlen;
	free(e->rheap);
	e->rheap = NULL;
}

/* Make room for `len` more heap bytes by forgetting the oldest large replies (other than
 * keep); false if even that is not enough. */
static bool rc__drc_room(rc__drc *d, size_t len, const rc__drc_ent *keep)
{
	for (uint32_t k = 0; k < d->n && d->heap_bytes + len > RC__DRC_HEAP_CAP; k++) {
		rc__drc_ent *o = &d->ents[(d->ring + k) % d->n];
		if (o != keep && o->used && o->done && o->rheap != NULL)
			rc__drc_unlink(d, o);
	}
	return d->heap_bytes + len <= RC__DRC_HEAP_CAP;
}

rc__drc_result rc__drc_lookup(rc__drc *d, const rc__drc_key *k, rc__encbuf *rb, size_t *rlen)
{
	rc__drc_ent *e;
	int64_t now = rc__drc_now();
	uint32_t h;

	pthread_mutex_lock(&d->mu);
	e = rc__drc_find(d, k);
	if (e != NULL && now - e->born <= d->ttl_ns) {
		if (!e->done) {
			pthread_mutex_unlock(&d->mu);
			return RC__DRC_INPROGRESS;
		}
		{
			const unsigned char *src = e->rheap ? e->rheap : e->rin;
			size_t need = e->rlen + RC_TP_HEADROOM;
			unsigned char *dst = rb->data;
			if (need > rb->cap) {
				dst = malloc(need);
				if (dst == NULL) {
					pthread_mutex_unlock(&d->mu);
					return RC__DRC_INPROGRESS; /* drop; the client retries */
				}
				rc__encbuf_free(rb);
				rb->data = dst;
				rb->cap = need;
				rb->heap = true;
			}
			memcpy(dst + RC_TP_HEADROOM, src, e->rlen);
			*rlen = e->rlen;
		}
		pthread_mutex_unlock(&d->mu);
		return RC__DRC_REPLAY;
	}
	if (e != NULL)
		rc__drc_unlink(d, e); /* expired */
	/* recycle the oldest entry */
	e = &d->ents[d->ring];
	d->ring = (d->ring + 1) % d->n;
	if (e->used)
		rc__drc_unlink(d, e);
	e->key = *k;
	e->used = true;
	e->done = false;
	e->born = now;
	e->rlen = 0;
	h = rc__drc_hash(d, k);
	e->next = d->buckets[h];
	d->buckets[h] = (uint32_t)(e - d->ents) + 1;
	pthread_mutex_unlock(&d->mu);
	return RC__DRC_NEW;
}

void rc__drc_store(rc__drc *d, const rc__drc_key *k, const unsigned char *reply, size_t len)
{
	rc__drc_ent *e;

	pthread_mutex_lock(&d->mu);
	e = rc__drc_find(d, k);
	if (e != NULL && !e->done) {
		if (len <= RC__DRC_INLINE) {
			memcpy(e->rin, reply, len);
			e->done = true;
			e->rlen = len;
		} else if (rc__drc_room(d, len, e) && (e->rheap = malloc(len)) != NULL) {
			memcpy(e->rheap, reply, len);
			e->done = true;
			e->rlen = len;
			d->heap_bytes += len;
		} else {
			rc__drc_unlink(d, e); /* cannot keep it: forget the call */
		}
	}
	pthread_mutex_unlock(&d->mu);
}

/*
 * RPCSEC_GSS, the acceptor (RFC 2203 sections 5.2-5.3 and 7): a bounded table of contexts
 * keyed by random 16-byte handles, idle-evicted and expired at the GSS context's lifetime;
 * the sequence window (a bitmap, slid only after the header MIC checked out);
 * INIT/CONTINUE_INIT through gss_accept_sec_context; DESTROY; the per-call transforms.
 *
 * The table's bounds (issue 45: one principal's INITs must not flush everyone's contexts):
 *   - established contexts: at most max, and at most max_principal of one principal (the
 *     initiator GSS authenticated). A new one whose principal is at its quota pushes out that
 *     principal's least recently used (evicted_quota); one that finds the table full pushes
 *     out its own principal's least recently used if it has any, else the least recently used
 *     of the principal holding the most (evicted_lru). So another principal's INITs never
 *     take a context from a principal holding fewer than they do, and never lower the count.
 *   - incomplete contexts (CONTINUE_NEEDED: no principal known yet) are a pool of their own,
 *     at most max_incomplete, least recently used out first (evicted_incomplete); they never
 *     displace an established context. One that completes moves to the established by the
 *     rules above.
 *
 * Locks: the table's lock covers the hash chains, the two pools' LRU lists and counts, the
 * principals (their hash and each one's LRU list of contexts) and each context's
 * in_table/est/last_used; a context's window lock covers its window; its sec.lock every GSS
 * call on it. Never the table's lock inside the other two (gss_delete_sec_context happens
 * after the table's lock is let go).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>

#include "runtime/auth/gss_int.h"
#include "xdr/base.h"

typedef struct rc__gss_princ rc__gss_princ;

/* A list of contexts, most recently used first. */
typedef struct rc__gss_list {
	rc__gss_svc_ctx *head, *tail;
} rc__gss_list;

/* The links of a context: its pool's list, its principal's list. */
enum { POOL = 0, PRINC = 1 };

/* A principal holding established contexts (freed with its last one). */
struct rc__gss_princ {
	rc__gss_princ *hnext;       /* hash chain */
	rc__gss_list ctxs;          /* its contexts */
	unsigned n;
	char name[];
};

struct rc__gss_svc_ctx {
	rc__gss_sec sec;
	atomic_uint refs;
	rc__gss_table *t;              /* referenced: stats and the clock outlive the table */
	unsigned char handle[RC__GSS_HANDLE_LEN];
	atomic_bool complete;
	/* the table's lock */
	bool in_table;
	bool est;                      /* in the established pool (else the incomplete) */
	rc__gss_svc_ctx *hnext;        /* hash chain */
	rc__gss_svc_ctx *lprev, *lnext; /* its pool's LRU list */
	rc__gss_svc_ctx *pprev, *pnext; /* its principal's LRU list (established) */
	rc__gss_princ *pr;             /* its principal (established) */
	uint64_t last_used_ns;
	uint64_t expire_ns;            /* UINT64_MAX: never */
	/* the window lock */
	pthread_mutex_t wlock;
	bool seq_any;
	uint32_t seq_max;
	uint64_t bits[RC__GSS_WINDOW_MAX / 64];
	char *principal;
	gss_name_t src;                /* the initiator (complete contexts) */
	const char *mech;
	_Atomic(void *) app;           /* rc__gss_svc_ctx_set_app's data, freed with app_free */
	void (*app_free)(void *);
};

struct rc__gss_table {
	pthread_mutex_t lock;
	atomic_uint refs;              /* the owner's + one per context allocated */
	_Atomic(gss_cred_id_t) cred;   /* new contexts' (rc__gss_table_set_cred replaces it) */
	struct rc__gss_cred_old *old;  /* the replaced ones (the table's lock), freed with it */
	unsigned max, max_principal, max_incomplete;
	uint64_t idle_ns;
	uint32_t window;
	uint64_t (*now)(void);
	rc__gss_svc_ctx **buckets;
	unsigned mask;
	rc__gss_list est, inc;         /* the two pools */
	unsigned n_est, n_inc;
	rc__gss_princ **pbuckets;      /* principals by name (as many buckets as handles have) */
	atomic_uint_fast64_t live, created, init_failed, dropped, credproblem, ctxproblem,
		evicted_lru, evicted_quota, evicted_incomplete, evicted_idle, expired, destroyed;
};

static uint64_t now_ns(const rc__gss_table *t)
{
	return t->now ? t->now() : rc__clock_ns();
}

/* Unused for idle_ns at now? (Another thread may have stamped last_used after this one read
 * its clock: a last_used in the future is not idle -- the subtraction would wrap.) */
static bool idle(const rc__gss_table *t, const rc__gss_svc_ctx *x, uint64_t now)
{
	return now > x->last_used_ns && now - x->last_used_ns >= t->idle_ns;
}

/* A credential rc__gss_table_set_cred replaced. */
struct rc__gss_cred_old {
	struct rc__gss_cred_old *next;
	gss_cred_id_t cred;
};

static void table_unref(rc__gss_table *t)
{
	OM_uint32 min;
	gss_cred_id_t cred;

	if (atomic_fetch_sub(&t->refs, 1) != 1)
		return;
	if ((cred = atomic_load(&t->cred)) != GSS_C_NO_CREDENTIAL)
		gss_release_cred(&min, &cred);
	while (t->old != NULL) {
		struct rc__gss_cred_old *o = t->old;
		t->old = o->next;
		gss_release_cred(&min, &o->cred);
		free(o);
	}
	free(t->buckets);
	free(t->pbuckets);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

int rc__gss_table_create(rc__gss_table **out, const rc__gss_table_opts *o, rc__gss_err *err)
{
	rc__gss_table_opts def = { 0 };
	rc__gss_table *t;

	*out = NULL;
	if (!o)
		o = &def;
	if (!(t = calloc(1, sizeof *t))) {
		rc__gss_err_msg(err, "out of memory");
		return -1;
	}
	pthread_mutex_init(&t->lock, NULL);
	atomic_init(&t->refs, 1);
	atomic_init(&t->cred, GSS_C_NO_CREDENTIAL);
	t->max = o->max_contexts ? o->max_contexts : 1024;
	t->max_principal = o->max_principal ? o->max_principal : (t->max + 3) / 4;
	t->max_incomplete = o->max_incomplete ? o->max_incomplete : (t->max + 15) / 16;
	t->idle_ns = (uint64_t)(o->idle_ms ? o->idle_ms : 15 * 60 * 1000) * 1000000u;
	uint32_t w = o->window ? o->window : RC__GSS_WINDOW_DEFAULT;
	w = (w + 63) & ~63u;
	t->window = w > RC__GSS_WINDOW_MAX ? RC__GSS_WINDOW_MAX : w;
	t->now = o->now_ns;
	unsigned nb = 16;
	while (nb < t->max && nb < (1u << 20))
		nb <<= 1;
	t->mask = nb - 1;
	if (!(t->buckets = calloc(nb, sizeof *t->buckets)) ||
	    !(t->pbuckets = calloc(nb, sizeof *t->pbuckets))) {
		rc__gss_err_msg(err, "out of memory");
		goto fail;
	}
	gss_cred_id_t cred;
	if (rc__gss_cred_acquire(o->principal, o->keytab, &cred, err))
		goto fail;
	atomic_store(&t->cred, cred);
	*out = t;
	return 0;
fail:
	table_unref(t);
	return -1;
}

int rc__gss_table_set_cred(rc__gss_table *t, const char *principal, const char *keytab,
			   rc__gss_err *err)
{
	struct rc__gss_cred_old *o;
	gss_cred_id_t cred;

	if (!(o = malloc(sizeof *o))) {
		rc__gss_err_msg(err, "out of memory");
		return -1;
	}
	if (rc__gss_cred_acquire(principal, keytab, &cred, err)) {
		free(o);
		return -1;
	}
	pthread_mutex_lock(&t->lock);
	o->cred = atomic_exchange(&t->cred, cred);
	o->next = t->old;
	t->old = o;
	pthread_mutex_unlock(&t->lock);
	return 0;
}

static void ctx_free(rc__gss_svc_ctx *x)
{
	rc__gss_table *t = x->t;

	OM_uint32 min;

	rc__gss_sec_fini(&x->sec);
	pthread_mutex_destroy(&x->wlock);
	if (x->src != GSS_C_NO_NAME)
		gss_release_name(&min, &x->src);
	free(x->principal);
	if (atomic_load(&x->app) != NULL)
		x->app_free(atomic_load(&x->app));
	free(x);
	atomic_fetch_sub(&t->live, 1);
	table_unref(t);
}

void rc__gss_svc_ctx_ref(rc__gss_svc_ctx *x)
{
	atomic_fetch_add(&x->refs, 1);
}

void rc__gss_svc_ctx_unref(rc__gss_svc_ctx *x)
{
	if (x && atomic_fetch_sub(&x->refs, 1) == 1)
		ctx_free(x);
}

static rc__gss_svc_ctx *ctx_new(rc__gss_table *t)
{
	rc__gss_svc_ctx *x = calloc(1, sizeof *x);

	if (!x)
		return NULL;
	rc__gss_sec_init(&x->sec);
	pthread_mutex_init(&x->wlock, NULL);
	atomic_init(&x->refs, 1);
	x->t = t;
	x->expire_ns = UINT64_MAX;
	x->mech = "krb5";
	x->src = GSS_C_NO_NAME;
	atomic_fetch_add(&t->refs, 1);
	atomic_fetch_add(&t->live, 1);
	return x;
}

/* ---- the table (its lock held) ----------------------------------------------------------- */

static rc__gss_svc_ctx **chain(rc__gss_table *t, const unsigned char *h)
{
	return &t->buckets[rc__ld32(h) & t->mask];
}

static rc__gss_svc_ctx *find(rc__gss_table *t, const unsigned char *h)
{
	for (rc__gss_svc_ctx *x = *chain(t, h); x; x = x->hnext)
		if (memcmp(x->handle, h, RC__GSS_HANDLE_LEN) == 0)
			return x;
	return NULL;
}

static rc__gss_svc_ctx **link_prev(rc__gss_svc_ctx *x, int link)
{
	return link == PRINC ? &x->pprev : &x->lprev;
}

static rc__gss_svc_ctx **link_next(rc__gss_svc_ctx *x, int link)
{
	return link == PRINC ? &x->pnext : &x->lnext;
}

static void list_unlink(rc__gss_list *l, rc__gss_svc_ctx *x, int link)
{
	rc__gss_svc_ctx *p = *link_prev(x, link), *n = *link_next(x, link);

	if (p)
		*link_next(p, link) = n;
	else
		l->head = n;
	if (n)
		*link_prev(n, link) = p;
	else
		l->tail = p;
	*link_prev(x, link) = *link_next(x, link) = NULL;
}

static void list_push(rc__gss_list *l, rc__gss_svc_ctx *x, int link)
{
	*link_prev(x, link) = NULL;
	*link_next(x, link) = l->head;
	if (l->head)
		*link_prev(l->head, link) = x;
	else
		l->tail = x;
	l->head = x;
}

/* x was used: to the front of its pool's and its principal's lists. */
static void lru_front(rc__gss_table *t, rc__gss_svc_ctx *x)
{
	rc__gss_list *pool = x->est ? &t->est : &t->inc;

	list_unlink(pool, x, POOL);
	list_push(pool, x, POOL);
	if (x->est) {
		list_unlink(&x->pr->ctxs, x, PRINC);
		list_push(&x->pr->ctxs, x, PRINC);
	}
}

/* ---- principals (the table's lock) ---- */

static rc__gss_princ **princ_chain(rc__gss_table *t, const char *name)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	return &t->pbuckets[h & t->mask];
}

/* The principal called name; with make, made if new (NULL: no memory). */
static rc__gss_princ *princ_find(rc__gss_table *t, const char *name, bool make)
{
	rc__gss_princ **pp = princ_chain(t, name), *p;
	size_t len = strlen(name);

	for (p = *pp; p; p = p->hnext)
		if (strcmp(p->name, name) == 0)
			return p;
	if (!make || !(p = calloc(1, sizeof *p + len + 1)))
		return NULL;
	memcpy(p->name, name, len + 1);
	p->hnext = *pp;
	*pp = p;
	return p;
}

/* The principal holding the most contexts (of two as many, the one whose least recently
 * used is older); NULL when there is none. (A walk over the buckets: only a table at its
 * bound meeting a new principal, or a lower bound, comes here.) */
static rc__gss_princ *princ_biggest(rc__gss_table *t)
{
	rc__gss_princ *best = NULL;

	for (unsigned b = 0; b <= t->mask; b++)
		for (rc__gss_princ *p = t->pbuckets[b]; p; p = p->hnext)
			if (!best || p->n > best->n ||
			    (p->n == best->n &&
			     p->ctxs.tail->last_used_ns < best->ctxs.tail->last_used_ns))
				best = p;
	return best;
}

static void princ_free(rc__gss_table *t, rc__gss_princ *p)
{
	rc__gss_princ **pp = princ_chain(t, p->name);

	while (*pp != p)
		pp = &(*pp)->hnext;
	*pp = p->hnext;
	free(p);
}

/* ---- the table's membership (its lock) ---- */

/* Take x out of the hash chains, its pool and its principal; x keeps its handle and the
 * table's reference stays with the caller. */
static void detach(rc__gss_table *t, rc__gss_svc_ctx *x)
{
	rc__gss_svc_ctx **pp = chain(t, x->handle);

	while (*pp != x)
		pp = &(*pp)->hnext;
	*pp = x->hnext;
	x->hnext = NULL;
	if (x->est) {
		list_unlink(&t->est, x, POOL);
		t->n_est--;
		list_unlink(&x->pr->ctxs, x, PRINC);
		if (--x->pr->n == 0)
			princ_free(t, x->pr);
		x->pr = NULL;
	} else {
		list_unlink(&t->inc, x, POOL);
		t->n_inc--;
	}
	x->est = false;
	x->in_table = false;
}

/* Take x out of the table; the table's reference moves to *dead (a list through hnext) for
 * the caller to drop after letting go of the lock. */
static void unlink_ctx(rc__gss_table *t, rc__gss_svc_ctx *x, rc__gss_svc_ctx **dead)
{
	detach(t, x);
	x->hnext = *dead;
	*dead = x;
}

static void unref_all(rc__gss_svc_ctx *dead)
{
	while (dead) {
		rc__gss_svc_ctx *n = dead->hnext;
		rc__gss_svc_ctx_unref(dead);
		dead = n;
	}
}

/* Evict the idle from a pool's LRU end, and expired contexts met there. */
static void sweep_pool(rc__gss_table *t, rc__gss_list *pool, uint64_t now, rc__gss_svc_ctx **dead)
{
	while (pool->tail) {
		rc__gss_svc_ctx *x = pool->tail;
		if (idle(t, x, now)) {
			atomic_fetch_add(&t->evicted_idle, 1);
		} else if (now >= x->expire_ns) {
			atomic_fetch_add(&t->expired, 1);
		} else {
			break;
		}
		unlink_ctx(t, x, dead);
	}
}

static void sweep(rc__gss_table *t, uint64_t now, rc__gss_svc_ctx **dead)
{
	sweep_pool(t, &t->est, now, dead);
	sweep_pool(t, &t->inc, now, dead);
}

/* Make room for one more established context of principal name: its quota, then the table's
 * bound (its own principal's least recently used first, else the biggest principal's).
 * Returns the principal (made if new), or NULL for no memory. */
static rc__gss_princ *room_established(rc__gss_table *t, const char *name, rc__gss_svc_ctx **dead)
{
	rc__gss_princ *pr = princ_find(t, name, false);

	while (pr && pr->n >= t->max_principal) {
		atomic_fetch_add(&t->evicted_quota, 1);
		unlink_ctx(t, pr->ctxs.tail, dead);
		pr = princ_find(t, name, false); /* (freed with its last context) */
	}
	while (t->n_est >= t->max) {
		rc__gss_princ *v = pr ? pr : princ_biggest(t);
		atomic_fetch_add(&t->evicted_lru, 1);
		unlink_ctx(t, v->ctxs.tail, dead);
		pr = princ_find(t, name, false);
	}
	return pr ? pr : princ_find(t, name, true);
}

void rc__gss_table_set_bounds(rc__gss_table *t, const rc__gss_bounds *b)
{
	rc__gss_svc_ctx *dead = NULL;

	pthread_mutex_lock(&t->lock);
	if (b->max_contexts)
		t->max = b->max_contexts;
	if (b->max_principal)
		t->max_principal = b->max_principal;
	if (b->max_incomplete)
		t->max_incomplete = b->max_incomplete;
	if (b->idle_ms)
		t->idle_ns = (uint64_t)b->idle_ms * 1000000u;
	sweep(t, now_ns(t), &dead);
	/* lower bounds apply now */
	while (t->n_inc > t->max_incomplete) {
		atomic_fetch_add(&t->evicted_incomplete, 1);
		unlink_ctx(t, t->inc.tail, &dead);
	}
	for (unsigned i = 0; i <= t->mask; i++) {
		for (rc__gss_princ *p = t->pbuckets[i]; p; p = p->hnext) {
			while (p->n > t->max_principal) { /* (p keeps one at least: not freed) */
				atomic_fetch_add(&t->evicted_quota, 1);
				unlink_ctx(t, p->ctxs.tail, &dead);
			}
		}
	}
	while (t->n_est > t->max) {
		atomic_fetch_add(&t->evicted_lru, 1);
		unlink_ctx(t, princ_biggest(t)->ctxs.tail, &dead);
	}
	pthread_mutex_unlock(&t->lock);
	unref_all(dead);
}

/* Put x in its pool by the rules at the top: an established one (x->complete) under its
 * principal, else among the incomplete. A fresh x (one reference given to the table) gets a
 * random handle; an x in the table (an incomplete one a CONTINUE_INIT just completed) keeps
 * its handle and moves. Returns 0; -2 when x is not fresh but was taken out meanwhile
 * (evicted: nothing done); -1 (no randomness) or -3 (no memory): x is then not in the table,
 * and for an x that was, the table's reference went to *dead. */
static int place(rc__gss_table *t, rc__gss_svc_ctx *x, bool fresh, rc__gss_svc_ctx **dead)
{
	uint64_t now = now_ns(t);
	rc__gss_princ *pr = NULL;

	if (!fresh && !x->in_table)
		return -2;
	if (!fresh)
		detach(t, x);
	sweep(t, now, dead);
	if (x->complete) {
		if (!(pr = room_established(t, x->principal, dead)))
			goto fail;
	} else {
		while (t->n_inc >= t->max_incomplete && t->inc.tail) {
			atomic_fetch_add(&t->evicted_incomplete, 1);
			unlink_ctx(t, t->inc.tail, dead);
		}
	}
	while (fresh) {
		if (getrandom(x->handle, sizeof x->handle, 0) != (ssize_t)sizeof x->handle) {
			if (pr && pr->n == 0)
				princ_free(t, pr);
			return -1;
		}
		if (!find(t, x->handle))
			break;
	}
	rc__gss_svc_ctx **pp = chain(t, x->handle);
	x->hnext = *pp;
	*pp = x;
	x->in_table = true;
	x->est = pr != NULL;
	if (pr) {
		x->pr = pr;
		pr->n++;
		list_push(&pr->ctxs, x, PRINC);
		list_push(&t->est, x, POOL);
		t->n_est++;
	} else {
		list_push(&t->inc, x, POOL);
		t->n_inc++;
	}
	x->last_used_ns = now;
	return 0;
fail:
	if (!fresh) {
		x->hnext = *dead;
		*dead = x;
	}
	return -3;
}

/* x was used by a call whose header MIC checked out: stamp it and move it to the LRU front
 * (a forged call never keeps a context alive or pushes others out). */
static void touch(rc__gss_table *t, rc__gss_svc_ctx *x)
{
	pthread_mutex_lock(&t->lock);
	if (x->in_table) {
		uint64_t now = now_ns(t);
		if (now > x->last_used_ns)
			x->last_used_ns = now;
		lru_front(t, x);
	}
	pthread_mutex_unlock(&t->lock);
}

/* The context under handle h, referenced; NULL when unknown, idle past its time or expired
 * (those are taken out). With stamp, it also counts as used (rc__gss_svc_init's
 * CONTINUE_INIT); rc__gss_svc_accept stamps through touch() once the MIC is good. */
static rc__gss_svc_ctx *lookup(rc__gss_table *t, const unsigned char *h, size_t hlen, bool stamp)
{
	rc__gss_svc_ctx *dead = NULL, *x = NULL;

	if (hlen != RC__GSS_HANDLE_LEN)
		return NULL;
	pthread_mutex_lock(&t->lock);
	uint64_t now = now_ns(t); /* under the lock: stamps go forward */
	x = find(t, h);
	if (x && now >= x->expire_ns) {
		atomic_fetch_add(&t->expired, 1);
		unlink_ctx(t, x, &dead);
		x = NULL;
	} else if (x && idle(t, x, now)) {
		atomic_fetch_add(&t->evicted_idle, 1);
		unlink_ctx(t, x, &dead);
		x = NULL;
	} else if (x) {
		rc__gss_svc_ctx_ref(x);
		if (stamp) {
			x->last_used_ns = now;
			lru_front(t, x);
		}
	}
	sweep(t, now, &dead);
	pthread_mutex_unlock(&t->lock);
	unref_all(dead);
	return x;
}

/* Take x out of the table if it is still there; whether it was. */
static bool remove_ctx(rc__gss_table *t, rc__gss_svc_ctx *x)
{
	rc__gss_svc_ctx *dead = NULL;

	pthread_mutex_lock(&t->lock);
	bool was = x->in_table;
	if (was)
		unlink_ctx(t, x, &dead);
	pthread_mutex_unlock(&t->lock);
	unref_all(dead);
	return was;
}

void rc__gss_table_destroy(rc__gss_table *t)
{
	rc__gss_svc_ctx *dead = NULL;

	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	while (t->est.head)
		unlink_ctx(t, t->est.head, &dead);
	while (t->inc.head)
		unlink_ctx(t, t->inc.head, &dead);
	pthread_mutex_unlock(&t->lock);
	unref_all(dead);
	table_unref(t);
}

void rc__gss_table_stats(rc__gss_table *t, rc__gss_stats *st)
{
	pthread_mutex_lock(&t->lock);
	st->contexts = t->n_est + t->n_inc;
	st->established = t->n_est;
	st->incomplete = t->n_inc;
	pthread_mutex_unlock(&t->lock);
	st->live = atomic_load(&t->live);
	st->created = atomic_load(&t->created);
	st->init_failed = atomic_load(&t->init_failed);
	st->dropped = atomic_load(&t->dropped);
	st->credproblem = atomic_load(&t->credproblem);
	st->ctxproblem = atomic_load(&t->ctxproblem);
	st->evicted_lru = atomic_load(&t->evicted_lru);
	st->evicted_quota = atomic_load(&t->evicted_quota);
	st->evicted_incomplete = atomic_load(&t->evicted_incomplete);
	st->evicted_idle = atomic_load(&t->evicted_idle);
	st->expired = atomic_load(&t->expired);
	st->destroyed = atomic_load(&t->destroyed);
}

/* ---- the sequence window ----------------------------------------------------------------- */

static bool bit_test_set(uint64_t *bits, uint32_t i)
{
	uint64_t m = (uint64_t)1 << (i % 64);
	bool was = bits[i / 64] & m;

	bits[i / 64] |= m;
	return was;
}

static void bit_clear(uint64_t *bits, uint32_t i)
{
	bits[i / 64] &= ~((uint64_t)1 << (i % 64));
}

/* Admit seq into x's window (RFC 2203 5.3.3.1): true if new and within or above the window
 * (which then slides), false for a replay or a seq below it. */
static bool window_admit(rc__gss_svc_ctx *x, uint32_t seq, uint32_t w)
{
	bool ok = true;

	pthread_mutex_lock(&x->wlock);
	if (!x->seq_any || seq > x->seq_max) {
		if (!x->seq_any || seq - x->seq_max >= w) {
			memset(x->bits, 0, sizeof x->bits);
		} else {
			for (uint32_t s = x->seq_max + 1; s != seq; s++)
				bit_clear(x->bits, s % w);
			bit_clear(x->bits, seq % w);
		}
		x->seq_any = true;
		x->seq_max = seq;
		bit_test_set(x->bits, seq % w);
	} else if (x->seq_max - seq >= w) {
		ok = false; /* below the window */
	} else if (bit_test_set(x->bits, seq % w)) {
		ok = false; /* replay */
	}
	pthread_mutex_unlock(&x->wlock);
	return ok;
}

/* ---- accepting calls --------------------------------------------------------------------- */

void rc__gss_svc_accept(rc__gss_table *t, const void *hdr, size_t hdr_len, const void *cred,
			size_t cred_len, uint32_t verf_flavor, const void *verf, size_t verf_len,
			rc__gss_accepted *a)
{
	memset(a, 0, sizeof *a);
	a->verdict = RC__GSS_V_BADCRED;
	if (rc__gss_cred_decode(cred, cred_len, &a->cred) || a->cred.version != RC__GSS_VERSION ||
	    a->cred.proc > RC__GSS_DESTROY || a->cred.service < RC__GSS_SVC_NONE ||
	    a->cred.service > RC__GSS_SVC_PRIVACY)
		return;
	a->proc = a->cred.proc;
	a->seq = a->cred.seq;
	a->service = a->cred.service;
	if (a->proc == RC__GSS_INIT || a->proc == RC__GSS_CONTINUE_INIT) {
		/* an AUTH_NONE verifier (RFC 2203 5.2.2) */
		a->verdict = verf_flavor == 0 && verf_len == 0 ? RC__GSS_V_INIT : RC__GSS_V_BADVERF;
		return;
	}
	if (verf_flavor != RC__GSS_FLAVOR || verf_len > RC__MAX_AUTH_BYTES) {
		a->verdict = RC__GSS_V_BADVERF;
		return;
	}
	rc__gss_svc_ctx *x = lookup(t, a->cred.handle, a->cred.handle_len, false);
	if (!x || !x->complete) {
		rc__gss_svc_ctx_unref(x);
		atomic_fetch_add(&t->credproblem, 1);
		a->verdict = RC__GSS_V_CREDPROBLEM;
		return;
	}
	/* the header MIC before anything about the seq is believed */
	if (rc__gss_sec_verify(&x->sec, hdr, hdr_len, verf, verf_len, NULL)) {
		rc__gss_svc_ctx_unref(x);
		atomic_fetch_add(&t->credproblem, 1);
		a->verdict = RC__GSS_V_CREDPROBLEM;
		return;
	}
	if (a->seq >= RC__GSS_MAXSEQ) {
		rc__gss_svc_ctx_unref(x);
		atomic_fetch_add(&t->ctxproblem, 1);
		a->verdict = RC__GSS_V_CTXPROBLEM;
		return;
	}
	if (!window_admit(x, a->seq, t->window)) {
		rc__gss_svc_ctx_unref(x);
		atomic_fetch_add(&t->dropped, 1);
		a->verdict = RC__GSS_V_DROP;
		return;
	}
	if (a->proc == RC__GSS_DESTROY) {
		if (remove_ctx(t, x)) /* (not if evicted meanwhile: counted there) */
			atomic_fetch_add(&t->destroyed, 1);
	} else {
		touch(t, x);
	}
	a->ctx = x;
	a->verdict = RC__GSS_V_OK;
}

/* The rpc_gss_init_res of a refused token: GSS's status, no handle, and whatever error token
 * GSS produced. */
static int init_refused(rc__gss_table *t, OM_uint32 maj, OM_uint32 min, gss_buffer_desc *otok,
			rc__gss_buf *res, uint32_t *verf_flavor, rc__gss_buf *verf,
			rc__gss_err *err)
{
	rc__gss_init_res ir = { NULL, 0, maj, min, 0, otok->value, (uint32_t)otok->length };

	atomic_fetch_add(&t->init_failed, 1);
	rc__gss_err_status(err, "gss_accept_sec_context", maj, min);
	*verf_flavor = 0;
	verf->data = NULL;
	verf->len = 0;
	if (otok->length > RC__GSS_TOKEN_MAX)
		ir.token_len = 0;
	return rc__gss_init_res_encode(&ir, res) ? -3 : 0; /* (no memory) */
}

int rc__gss_svc_init(rc__gss_table *t, const rc__gss_accepted *a, const void *args,
		     size_t args_len, rc__gss_buf *res, uint32_t *verf_flavor, rc__gss_buf *verf,
		     rc__gss_err *err)
{
	const unsigned char *tok;
	size_t tok_len;
	OM_uint32 maj, min, lifetime = 0;
	rc__gss_svc_ctx *x;
	int r = -1;

	res->data = NULL;
	res->len = 0;
	verf->data = NULL;
	verf->len = 0;
	*verf_flavor = 0;
	if (rc__gss_init_arg_decode(args, args_len, &tok, &tok_len)) {
		rc__gss_err_msg(err, "malformed rpc_gss_init_arg");
		return -1;
	}
	bool fresh = a->proc == RC__GSS_INIT;
	if (fresh) {
		if (!(x = ctx_new(t))) {
			rc__gss_err_msg(err, "out of memory");
			return -3;
		}
	} else {
		x = lookup(t, a->cred.handle, a->cred.handle_len, true);
		if (!x || x->complete) {
			rc__gss_svc_ctx_unref(x);
			atomic_fetch_add(&t->credproblem, 1);
			rc__gss_err_msg(err, "CONTINUE_INIT with an unknown handle");
			return -2;
		}
	}
	/* from here x is our reference (a new context's only one until it is in the table) */
	gss_buffer_desc itok = { tok_len, (void *)tok }, otok = GSS_C_EMPTY_BUFFER;
	gss_name_t src = GSS_C_NO_NAME;
	gss_OID mech = GSS_C_NO_OID;
	rc__gss_cb cb;
	OM_uint32 flags = 0;
	pthread_mutex_lock(&x->sec.lock);
	maj = gss_accept_sec_context(&min, &x->sec.ctx, atomic_load(&t->cred), &itok,
				     a->exporter != NULL ? rc__gss_cb_make(&cb, a->exporter)
							 : GSS_C_NO_CHANNEL_BINDINGS,
				     &src, &mech, &otok, &flags, NULL, NULL);
	if (maj == GSS_S_COMPLETE && a->bind_required && !(flags & GSS_C_CHANNEL_BOUND_FLAG)) {
		/* MIT accepts an initiator that bound nothing (all-zero bindings in its checksum);
		 * RPC-over-QUIC does not: refused as a mismatch, without the token that would
		 * complete the initiator's side */
		OM_uint32 m2;
		gss_release_buffer(&m2, &otok);
		pthread_mutex_unlock(&x->sec.lock);
		r = init_refused(t, GSS_S_BAD_BINDINGS, 0, &otok, res, verf_flavor, verf, NULL);
		rc__gss_err_msg(err, "gss_accept_sec_context: the initiator did not bind the context "
				"to the connection (channel bindings tls-exporter, required over QUIC)");
		goto drop;
	}
	if (maj == GSS_S_COMPLETE) {
		OM_uint32 m2, maj2 = gss_inquire_context(&m2, x->sec.ctx, NULL, NULL, &lifetime,
							 NULL, NULL, NULL, NULL);
		if (GSS_ERROR(maj2)) {
			maj = maj2;
			min = m2;
		} else {
			rc__gss_sec_established(&x->sec);
		}
	}
	pthread_mutex_unlock(&x->sec.lock);
	if (GSS_ERROR(maj)) {
		r = init_refused(t, maj, min, &otok, res, verf_flavor, verf, err);
		goto drop;
	}
	if (maj == GSS_S_COMPLETE) {
		gss_buffer_desc dn = GSS_C_EMPTY_BUFFER;
		OM_uint32 m2;
		if (!GSS_ERROR(gss_display_name(&m2, src, &dn, NULL))) {
			x->principal = strndup(dn.value, dn.length);
			gss_release_buffer(&m2, &dn);
		}
		if (!x->principal) {
			rc__gss_err_msg(err, "out of memory");
			r = -3;
			goto drop;
		}
		if (mech != GSS_C_NO_OID && (mech->length != gss_mech_krb5->length ||
		    memcmp(mech->elements, gss_mech_krb5->elements, mech->length) != 0))
			x->mech = "unknown";
		x->expire_ns = lifetime == GSS_C_INDEFINITE ? UINT64_MAX :
			       now_ns(t) + (uint64_t)lifetime * 1000000000u;
		/* the verifier of the reply that completes the context: a MIC over seq_window */
		rc__gss_err e;
		if (rc__gss_sec_seq_mic(&x->sec, t->window, verf, &e)) {
			if (err)
				*err = e;
			r = init_refused(t, e.major ? e.major : GSS_S_FAILURE, e.minor, &otok, res,
					 verf_flavor, verf, NULL);
			goto drop;
		}
		*verf_flavor = RC__GSS_FLAVOR;
		x->src = src; /* kept for rc__gss_svc_ctx_localname */
		src = GSS_C_NO_NAME;
		x->complete = true;
	}
	if (fresh || maj == GSS_S_COMPLETE) { /* into the table, or to the established pool */
		rc__gss_svc_ctx *dead = NULL;
		if (fresh)
			rc__gss_svc_ctx_ref(x); /* the table's */
		pthread_mutex_lock(&t->lock);
		int bad = place(t, x, fresh, &dead);
		pthread_mutex_unlock(&t->lock);
		unref_all(dead);
		if (bad) {
			if (fresh)
				rc__gss_svc_ctx_unref(x);
			rc__gss_buf_free(verf);
			*verf_flavor = 0;
			if (bad == -2) {
				atomic_fetch_add(&t->credproblem, 1);
				rc__gss_err_msg(err, "CONTINUE_INIT of a context evicted meanwhile");
				r = -2;
			} else {
				rc__gss_err_msg(err, bad == -1 ? "getrandom failed" : "out of memory");
				r = -3;
			}
			goto drop_ref;
		}
	}
	if (maj == GSS_S_COMPLETE)
		atomic_fetch_add(&t->created, 1);
	/* x->handle is fixed once inserted, and our reference keeps x */
	rc__gss_init_res ir = { x->handle, RC__GSS_HANDLE_LEN, maj, 0, t->window, otok.value,
				(uint32_t)otok.length };
	if (otok.length > RC__GSS_TOKEN_MAX || rc__gss_init_res_encode(&ir, res)) {
		rc__gss_buf_free(verf);
		*verf_flavor = 0;
		rc__gss_err_msg(err, "out of memory");
		remove_ctx(t, x);
		r = -3;
		goto drop_ref;
	}
	r = 0;
	goto drop_ref;
drop:
	if (!fresh)
		remove_ctx(t, x);
drop_ref:
	rc__gss_svc_ctx_unref(x);
	gss_release_buffer(&min, &otok);
	if (src != GSS_C_NO_NAME)
		gss_release_name(&min, &src);
	return r;
}

/* ---- per call ---------------------------------------------------------------------------- */

int rc__gss_svc_reply_verf(rc__gss_svc_ctx *x, uint32_t seq, rc__gss_buf *out, rc__gss_err *err)
{
	return rc__gss_sec_seq_mic(&x->sec, seq, out, err);
}

int rc__gss_svc_unwrap_args(rc__gss_svc_ctx *x, uint32_t seq, uint32_t service, const void *in,
			    size_t len, rc__gss_buf *out, rc__gss_err *err)
{
	return rc__gss_sec_unwrap(&x->sec, &seq, 1, service, in, len, out, NULL, err);
}

int rc__gss_svc_wrap_results(rc__gss_svc_ctx *x, uint32_t seq, uint32_t service,
			     const void *res, size_t len, rc__gss_buf *out, rc__gss_err *err)
{
	return rc__gss_sec_wrap(&x->sec, seq, service, res, len, out, err);
}

const char *rc__gss_svc_ctx_principal(const rc__gss_svc_ctx *x)
{
	return x->principal;
}

int rc__gss_svc_ctx_localname(rc__gss_svc_ctx *x, char *buf, size_t cap, rc__gss_err *err)
{
	gss_buffer_desc ln = GSS_C_EMPTY_BUFFER;
	OM_uint32 maj, min;

	if (x->src == GSS_C_NO_NAME) {
		rc__gss_err_msg(err, "the context is not established");
		return -1;
	}
	maj = gss_localname(&min, x->src, (gss_OID)gss_mech_krb5, &ln);
	if (GSS_ERROR(maj)) {
		rc__gss_err_status(err, "gss_localname", maj, min);
		return -1;
	}
	int r = -1;
	if (ln.length < cap && !memchr(ln.value, 0, ln.length)) {
		memcpy(buf, ln.value, ln.length);
		buf[ln.length] = 0;
		r = 0;
	} else {
		rc__gss_err_msg(err, "gss_localname: the name does not fit");
	}
	gss_release_buffer(&min, &ln);
	return r;
}

const char *rc__gss_svc_ctx_mech(const rc__gss_svc_ctx *x)
{
	return x->mech;
}

const unsigned char *rc__gss_svc_ctx_handle(const rc__gss_svc_ctx *x)
{
	return x->handle;
}

uint64_t rc__gss_svc_ctx_expiry(const rc__gss_svc_ctx *x)
{
	return x->expire_ns;
}

gss_ctx_id_t rc__gss_svc_ctx_gss(rc__gss_svc_ctx *x)
{
	return x->sec.ctx;
}

int rc__gss_svc_ctx_max_data(rc__gss_svc_ctx *x, uint32_t service, int max_tp)
{
	return rc__gss_sec_max_data(&x->sec, service, max_tp);
}

void *rc__gss_svc_ctx_app(const rc__gss_svc_ctx *x)
{
	return atomic_load(&((rc__gss_svc_ctx *)x)->app);
}

bool rc__gss_svc_ctx_set_app(rc__gss_svc_ctx *x, void *data, void (*free_fn)(void *))
{
	void *none = NULL;

	/* app_free is written before data is published: whoever frees sees it */
	if (atomic_load(&x->app) != NULL)
		return false;
	pthread_mutex_lock(&x->wlock);
	if (atomic_load(&x->app) == NULL) {
		x->app_free = free_fn;
		atomic_compare_exchange_strong(&x->app, &none, data);
		pthread_mutex_unlock(&x->wlock);
		return true;
	}
	pthread_mutex_unlock(&x->wlock);
	return false;
}

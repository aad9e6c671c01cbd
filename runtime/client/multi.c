/*
 * Multi-destination calls (MultiRPC's MultiRPC, PARPC's parallel call): the arguments are
 * encoded once; each destination's call is a started call (rc_call_start) whose arguments are
 * those bytes; one poll loop over every client drives them all, and each completion runs the
 * user's handler, which may stop the rest.
 */
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/core/rpc.h"

/* Arguments encoded once, copied behind each destination's header. */
typedef struct rc__raw {
	unsigned char *p;
	size_t n; /* a multiple of 4: XDR encodings are */
} rc__raw;

/* Encode pre-encoded arguments r (decoding and freeing have nothing to do). */
static bool rc__xdr_raw(rc_xdr *x, rc__raw *r)
{
	return x->x_op != RC_XDR_ENCODE || rc_xdr_opaque(x, r->p, (uint32_t)r->n);
}

/* Encoding into a growable heap buffer (any size). */
static bool rc__grow(rc_xdr *x, size_t need)
{
	rc__raw *r = x->x_ctx;
	size_t used = (size_t)(x->x_pos - x->x_base), ncap = (size_t)(x->x_end - x->x_base) * 2;
	unsigned char *np;

	if (ncap < used + need)
		ncap = used + need;
	if ((np = realloc(r->p, ncap)) == NULL)
		return false;
	r->p = np;
	x->x_base = np;
	x->x_pos = np + used;
	x->x_end = np + ncap;
	return true;
}

typedef struct rc__multi {
	rc_multi_fn handler;
	void *udata;
	rc_xdrproc xres;
	size_t res_size;
	unsigned char *results;
	size_t left;     /* destinations not yet completed */
	bool stopped;    /* the handler said stop */
	bool expired;    /* the overall deadline passed */
	struct rc__dest *dests;
	size_t n;
} rc__multi;

/* Sort idx[0..n) so that equal clients are adjacent, stable (bottom-up merge sort, no shared
 * state, O(n log n)); tmp is scratch of n entries. */
static void rc__merge_sort(rc_client *const *c, size_t *idx, size_t *tmp, size_t n)
{
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t a = lo, b = mid, k = lo;
			while (a < mid && b < hi)
				tmp[k++] = (uintptr_t)c[idx[b]] < (uintptr_t)c[idx[a]] ? idx[b++] : idx[a++];
			while (a < mid)
				tmp[k++] = idx[a++];
			while (b < hi)
				tmp[k++] = idx[b++];
		}
		memcpy(idx, tmp, n * sizeof(*idx));
	}
}

typedef struct rc__dest {
	rc__multi *m;
	size_t index;
	rc_async *call; /* NULL once completed */
} rc__dest;

/* A destination's call completed: run the handler once (unless stopped), count it, free its
 * result; a handler that says stop cancels the rest. */
static void rc__multi_done(rc_async *call, rc_status st, void *udata)
{
	rc__dest *d = udata;
	rc__multi *m = d->m;
	void *res = m->res_size ? m->results + d->index * m->res_size : NULL;

	(void)call;
	d->call = NULL;
	m->left--;
	if (!m->stopped) {
		if (st == RC_CANCELLED && m->expired)
			st = RC_TIMEDOUT;
		if (!m->handler(d->index, st, st == RC_OK ? res : NULL, m->udata)) {
			m->stopped = true;
			/* abandon the rest: they complete as cancelled, without the handler */
			for (size_t i = 0; i < m->n; i++)
				if (m->dests[i].call != NULL)
					rc_async_cancel(m->dests[i].call);
		}
	}
	if (res != NULL)
		rc_xdr_free(m->xres, res);
}

/* The shared monotonic clock (xdr/base.h) in milliseconds. */
static int64_t rc__ms_now(void)
{
	return (int64_t)(rc__clock_ns() / 1000000u);
}

/* client.h. */
rc_status rc_multicall(rc_client *const *clients, size_t n, uint32_t proc, rc_xdrproc xargs,
                       const void *args, rc_xdrproc xres, size_t res_size, rc_multi_fn handler,
                       void *udata, int timeout_ms)
{
	rc__multi m;
	rc__raw raw = {NULL, 0};
	struct pollfd *pf = NULL;
	size_t *who = NULL, *first = NULL;
	rc_xdr x;
	rc_status st = RC_OK;
	int64_t deadline = timeout_ms < 0 ? INT64_MAX : rc__ms_now() + timeout_ms;

	if (clients == NULL || n == 0 || handler == NULL ||
	    (xres != NULL && xres != rc_xdr_void && res_size == 0))
		return RC_INVAL;
	for (size_t i = 0; i < n; i++)
		if (clients[i] == NULL)
			return RC_INVAL;
	xargs = xargs ? xargs : rc_xdr_void;
	xres = xres ? xres : rc_xdr_void;
	if (xres == rc_xdr_void)
		res_size = 0;

	/* encode the arguments once */
	if ((raw.p = malloc(256)) == NULL)
		return RC_NOMEM;
	rc_xdrmem_create(&x, raw.p, 256, RC_XDR_ENCODE);
	x.x_more = rc__grow;
	x.x_ctx = &raw;
	if (!xargs(&x, (void *)args)) {
		free(raw.p);
		return RC_CANTENCODEARGS;
	}
	raw.n = rc_xdr_getpos(&x);

	memset(&m, 0, sizeof(m));
	m.handler = handler;
	m.udata = udata;
	m.xres = xres;
	m.res_size = res_size;
	m.n = n;
	m.dests = calloc(n, sizeof(*m.dests));
	m.results = res_size ? calloc(n, res_size) : NULL;
	pf = calloc(n, sizeof(*pf));
	who = calloc(n, sizeof(*who));
	first = calloc(n, sizeof(*first));
	if (m.dests == NULL || (res_size && m.results == NULL) || pf == NULL || who == NULL ||
	    first == NULL) {
		st = RC_NOMEM;
		goto out;
	}
	/* first[i]: the first destination using the same client as i (each client polled once) */
	for (size_t i = 0; i < n; i++)
		who[i] = i;
	rc__merge_sort(clients, who, first, n);
	for (size_t k = 0; k < n; k++)
		first[who[k]] = (k > 0 && clients[who[k - 1]] == clients[who[k]]) ? first[who[k - 1]]
		                                                                   : who[k];

	/* start every destination's call; one that cannot start fails at once, alone */
	for (size_t i = 0; i < n; i++) {
		rc__dest *d = &m.dests[i];
		rc_status s;
		d->m = &m;
		d->index = i;
		m.left++;
		s = rc_call_start(clients[i], proc, (rc_xdrproc)rc__xdr_raw, &raw, xres,
		                  res_size ? m.results + i * res_size : NULL, rc__multi_done, d,
		                  &d->call);
		if (s != RC_OK) {
			d->call = NULL;
			m.left--;
			if (!m.stopped && !handler(i, s, NULL, udata)) {
				m.stopped = true;
				for (size_t k = 0; k < i; k++)
					if (m.dests[k].call != NULL)
						rc_async_cancel(m.dests[k].call);
			}
		}
		if (m.stopped)
			break;
	}

	/* drive them all from one poll loop */
	while (m.left > 0) {
		size_t np = 0;
		int wait = -1;
		int64_t now = rc__ms_now();

		if (now >= deadline && !m.expired) {
			m.expired = true;
			for (size_t i = 0; i < n; i++)
				if (m.dests[i].call != NULL)
					rc_async_cancel(m.dests[i].call);
		}
		for (size_t i = 0; i < n; i++) {
			int fd, t;
			short ev;
			if (first[i] != i)
				continue; /* the same client as an earlier destination */
			if (rc_client_inflight(clients[i]) == 0 && !m.expired && !m.stopped)
				continue;
			rc_client_pollinfo(clients[i], &fd, &ev, &t);
			pf[np].fd = fd;
			pf[np].events = ev;
			pf[np].revents = 0;
			who[np++] = i;
			if (t >= 0 && (wait < 0 || t < wait))
				wait = t;
		}
		if (deadline != INT64_MAX) {
			int64_t left = deadline - now;
			if (left < 0)
				left = 0;
			if (wait < 0 || left < wait)
				wait = (int)left;
		}
		if (m.stopped || m.expired)
			wait = 0; /* cancelled calls complete on the next advance */
		if (np > 0 && poll(pf, np, wait) < 0)
			continue; /* EINTR: look at the clock again */
		for (size_t k = 0; k < np; k++)
			rc_client_advance(clients[who[k]], pf[k].fd >= 0 ? pf[k].revents : 0);
	}
	st = m.stopped ? RC_CANCELLED : RC_OK;
out:
	free(pf);
	free(who);
	free(first);
	free(m.dests);
	free(m.results);
	free(raw.p);
	return st;
}

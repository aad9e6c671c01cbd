/* The benchmark programs' trace recorder (trace_rec.h). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace_rec.h"

#define OPEN 64 /* calls whose steps are being collected at once */
#define MAXSTEPS 6

typedef struct open_call {
	uint32_t xid;
	unsigned seen; /* bit i: point first + i reported */
	uint64_t t[MAXSTEPS];
} open_call;

struct trace_rec {
	pthread_mutex_t mu;
	rc_trace_point first, last; /* the points of one call, in order */
	int nsteps;                 /* last - first */
	const char *const *names;
	open_call open[OPEN];
	size_t max, n, dropped;
	uint64_t *d[MAXSTEPS]; /* per step (and [nsteps]: the total), one entry per call */
};

static const char *const client_steps[] = {"encode", "send", "wait", "decode"};
static const char *const server_steps[] = {"dispatch", "args", "proc", "encode", "send"};

trace_rec *trace_rec_new(bool server, size_t max_calls)
{
	trace_rec *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	pthread_mutex_init(&r->mu, NULL);
	r->first = server ? RC_TP_SRV_RECEIVED : RC_TP_CALL_BEGIN;
	r->last = server ? RC_TP_SRV_SENT : RC_TP_DECODED;
	r->nsteps = (int)(r->last - r->first);
	r->names = server ? server_steps : client_steps;
	r->max = max_calls ? max_calls : 1;
	for (int i = 0; i <= r->nsteps; i++)
		if ((r->d[i] = calloc(r->max, sizeof(uint64_t))) == NULL) {
			trace_rec_free(r);
			return NULL;
		}
	return r;
}

void trace_rec_free(trace_rec *r)
{
	if (r == NULL)
		return;
	for (int i = 0; i < MAXSTEPS; i++)
		free(r->d[i]);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

void trace_rec_point(void *arg, rc_trace_point pt, uint32_t xid, uint64_t ns)
{
	trace_rec *r = arg;
	open_call *o;
	int k;

	if (pt < r->first || pt > r->last)
		return;
	k = (int)(pt - r->first);
	pthread_mutex_lock(&r->mu);
	o = &r->open[xid % OPEN];
	if (pt == r->first || o->xid != xid) {
		o->xid = xid;
		o->seen = 0;
	}
	o->t[k] = ns;
	o->seen |= 1u << k;
	if (pt == r->last && o->seen == (1u << (r->nsteps + 1)) - 1) {
		if (r->n < r->max) {
			for (int i = 0; i < r->nsteps; i++)
				r->d[i][r->n] = o->t[i + 1] - o->t[i];
			r->d[r->nsteps][r->n] = o->t[r->nsteps] - o->t[0];
			r->n++;
		} else {
			r->dropped++;
		}
		o->seen = 0;
	}
	pthread_mutex_unlock(&r->mu);
}

void trace_rec_skip(trace_rec *r)
{
	pthread_mutex_lock(&r->mu);
	r->n = r->dropped = 0;
	pthread_mutex_unlock(&r->mu);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Median and mean of v[0..n) in microseconds (v is sorted in place). */
static void stats(uint64_t *v, size_t n, double *median, double *mean)
{
	double sum = 0;

	*median = *mean = 0;
	if (n == 0)
		return;
	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < n; i++)
		sum += (double)v[i];
	*median = (n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2) / 1e3;
	*mean = sum / (double)n / 1e3;
}

void trace_rec_print(trace_rec *r, FILE *f)
{
	double med, mean;

	pthread_mutex_lock(&r->mu);
	fprintf(f, "{\"trace\":\"%s\",\"calls\":%zu,\"dropped\":%zu",
	        r->first == RC_TP_CALL_BEGIN ? "client" : "server", r->n, r->dropped);
	for (int i = 0; i <= r->nsteps; i++) {
		const char *name = i < r->nsteps ? r->names[i] : "total";
		stats(r->d[i], r->n, &med, &mean);
		fprintf(f, ",\"%s_us\":%.3f,\"%s_mean_us\":%.3f", name, med, name, mean);
	}
	fprintf(f, "}\n");
	fflush(f);
	pthread_mutex_unlock(&r->mu);
}

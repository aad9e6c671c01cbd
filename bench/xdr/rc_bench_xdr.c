/*
 * rc-bench-xdr -- marshalling throughput of remotecall's XDR beside libtirpc's, same run.
 *
 *   rc-bench-xdr [--json] [--reps N] [--elems N] [--min-ms N]
 *
 * Cases (each encoded into / decoded from a memory stream; decode into a buffer the caller
 * provides, so neither side allocates inside the timed loop):
 *   int32   rc_xdr_array(..., rc_xdr_int)     vs xdr_array(..., xdr_int)      (1 Mi elements)
 *   hyper   rc_xdr_array(..., rc_xdr_hyper)   vs xdr_array(..., xdr_hyper)
 *   double  rc_xdr_array(..., rc_xdr_double)  vs xdr_array(..., xdr_double)
 *   opaque  rc_xdr_bytes                      vs xdr_bytes                    (4 MiB)
 * plus memcpy of the int32 payload for reference.
 *
 * Each repetition runs the operation until at least --min-ms have passed and yields MB/s
 * (10^6 bytes of XDR payload per second); the report gives the median over --reps
 * repetitions and the ratio remotecall / libtirpc. Pin it to one CPU: taskset -c 1 ...
 * --json prints one JSON object per line instead of the table.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rpc/rpc.h>

#include <remotecall/xdr.h>

static int g_reps = 15;
static double g_min_ms = 20;
static uint32_t g_elems = 1u << 20;
static bool g_json;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One operation over the whole payload; false on failure (the benchmark then aborts). */
typedef bool (*op_fn)(void *ctx);

/* Median MB/s over g_reps repetitions of op, each at least g_min_ms long. */
static double measure(op_fn op, void *ctx, size_t bytes)
{
	double *mbps = calloc((size_t)g_reps, sizeof(double)), med;
	if (!op(ctx)) { /* warm-up, and a check that the operation works at all */
		fprintf(stderr, "rc-bench-xdr: operation failed\n");
		exit(1);
	}
	for (int r = 0; r < g_reps; r++) {
		double t0 = now_s(), t;
		long iters = 0;
		do {
			if (!op(ctx)) {
				fprintf(stderr, "rc-bench-xdr: operation failed\n");
				exit(1);
			}
			iters++;
			t = now_s() - t0;
		} while (t * 1e3 < g_min_ms);
		mbps[r] = (double)bytes * (double)iters / t / 1e6;
	}
	qsort(mbps, (size_t)g_reps, sizeof(double), cmp_double);
	med = mbps[g_reps / 2];
	free(mbps);
	return med;
}

/* ---- the operations ---------------------------------------------------------------------- */

struct arr_ctx {
	void *data;      /* elements to encode */
	void *out;       /* the caller's buffer decode fills */
	uint32_t n;
	uint32_t elsize;
	unsigned char *wire;
	size_t wire_len;
	rc_xdrproc rp;
	xdrproc_t tp;
};

static bool rc_arr_enc(void *c)
{
	struct arr_ctx *a = c;
	rc_xdr x;
	uint32_t n = a->n;
	void *p = a->data;
	rc_xdrmem_create(&x, a->wire, a->wire_len, RC_XDR_ENCODE);
	return rc_xdr_array(&x, &p, &n, UINT32_MAX, a->elsize, a->rp);
}

static bool rc_arr_dec(void *c)
{
	struct arr_ctx *a = c;
	rc_xdr x;
	uint32_t n = 0;
	void *p = a->out;
	rc_xdrmem_create(&x, a->wire, a->wire_len, RC_XDR_DECODE);
	return rc_xdr_array(&x, &p, &n, UINT32_MAX, a->elsize, a->rp) && n == a->n;
}

static bool ti_arr_enc(void *c)
{
	struct arr_ctx *a = c;
	XDR x;
	u_int n = a->n;
	char *p = a->data;
	bool ok;
	xdrmem_create(&x, (char *)a->wire, (u_int)a->wire_len, XDR_ENCODE);
	ok = xdr_array(&x, &p, &n, UINT32_MAX, a->elsize, a->tp);
	xdr_destroy(&x);
	return ok;
}

static bool ti_arr_dec(void *c)
{
	struct arr_ctx *a = c;
	XDR x;
	u_int n = 0;
	char *p = a->out;
	bool ok;
	xdrmem_create(&x, (char *)a->wire, (u_int)a->wire_len, XDR_DECODE);
	ok = xdr_array(&x, &p, &n, UINT32_MAX, a->elsize, a->tp) && n == a->n;
	xdr_destroy(&x);
	return ok;
}

static bool rc_bytes_enc(void *c)
{
	struct arr_ctx *a = c;
	rc_xdr x;
	uint32_t n = a->n;
	char *p = a->data;
	rc_xdrmem_create(&x, a->wire, a->wire_len, RC_XDR_ENCODE);
	return rc_xdr_bytes(&x, &p, &n, UINT32_MAX);
}

static bool rc_bytes_dec(void *c)
{
	struct arr_ctx *a = c;
	rc_xdr x;
	uint32_t n = 0;
	char *p = a->out;
	rc_xdrmem_create(&x, a->wire, a->wire_len, RC_XDR_DECODE);
	return rc_xdr_bytes(&x, &p, &n, UINT32_MAX) && n == a->n;
}

static bool ti_bytes_enc(void *c)
{
	struct arr_ctx *a = c;
	XDR x;
	u_int n = a->n;
	char *p = a->data;
	bool ok;
	xdrmem_create(&x, (char *)a->wire, (u_int)a->wire_len, XDR_ENCODE);
	ok = xdr_bytes(&x, &p, &n, UINT32_MAX);
	xdr_destroy(&x);
	return ok;
}

static bool ti_bytes_dec(void *c)
{
	struct arr_ctx *a = c;
	XDR x;
	u_int n = 0;
	char *p = a->out;
	bool ok;
	xdrmem_create(&x, (char *)a->wire, (u_int)a->wire_len, XDR_DECODE);
	ok = xdr_bytes(&x, &p, &n, UINT32_MAX) && n == a->n;
	xdr_destroy(&x);
	return ok;
}

static bool do_memcpy(void *c)
{
	struct arr_ctx *a = c;
	memcpy(a->out, a->data, (size_t)a->n * a->elsize);
	return ((volatile unsigned char *)a->out)[0] == ((unsigned char *)a->data)[0];
}

/* ---- reporting --------------------------------------------------------------------------- */

static void report(const char *name, const char *op, size_t bytes, double rc, double ti)
{
	if (g_json)
		printf("{\"bench\":\"xdr\",\"case\":\"%s\",\"op\":\"%s\",\"elements\":%u,"
		       "\"bytes\":%zu,\"reps\":%d,\"rc_mbps\":%.1f,\"tirpc_mbps\":%.1f,"
		       "\"ratio\":%.2f}\n",
		       name, op, (unsigned)g_elems, bytes, g_reps, rc, ti, rc / ti);
	else
		printf("%-8s %-7s %10zu  %12.1f  %12.1f  %7.2fx\n", name, op, bytes, rc, ti,
		       rc / ti);
	fflush(stdout);
}

/* Encode and decode one array kind with both libraries; check they agree on the bytes. */
static void bench_array(const char *name, uint32_t elsize, rc_xdrproc rp, xdrproc_t tp)
{
	struct arr_ctx a;
	size_t bytes = (size_t)g_elems * elsize;
	unsigned char *tiwire;
	double rc, ti;

	memset(&a, 0, sizeof(a));
	a.n = g_elems;
	a.elsize = elsize;
	a.rp = rp;
	a.tp = tp;
	a.data = malloc(bytes);
	a.out = malloc(bytes);
	a.wire_len = 4 + bytes;
	a.wire = malloc(a.wire_len);
	tiwire = malloc(a.wire_len);
	for (size_t i = 0; i < bytes; i++)
		((unsigned char *)a.data)[i] = (unsigned char)(i * 131 + (i >> 11));
	if (elsize == 8 && rp == (rc_xdrproc)rc_xdr_double) /* finite doubles, no NaN games */
		for (uint32_t i = 0; i < a.n; i++)
			((double *)a.data)[i] = i * 0.25 - 1000.0;

	/* both encoders produce the same bytes */
	if (!ti_arr_enc(&a))
		exit(1);
	memcpy(tiwire, a.wire, a.wire_len);
	if (!rc_arr_enc(&a) || memcmp(tiwire, a.wire, a.wire_len) != 0) {
		fprintf(stderr, "rc-bench-xdr: %s: remotecall and libtirpc disagree\n", name);
		exit(1);
	}
	rc = measure(rc_arr_enc, &a, bytes);
	ti = measure(ti_arr_enc, &a, bytes);
	report(name, "encode", bytes, rc, ti);
	rc = measure(rc_arr_dec, &a, bytes);
	if (memcmp(a.out, a.data, bytes) != 0) {
		fprintf(stderr, "rc-bench-xdr: %s: decode mismatch\n", name);
		exit(1);
	}
	ti = measure(ti_arr_dec, &a, bytes);
	report(name, "decode", bytes, rc, ti);
	free(a.data);
	free(a.out);
	free(a.wire);
	free(tiwire);
}

static void bench_opaque(void)
{
	struct arr_ctx a;
	size_t bytes = (size_t)g_elems * 4;
	double rc, ti;

	memset(&a, 0, sizeof(a));
	a.n = (uint32_t)bytes;
	a.elsize = 1;
	a.data = malloc(bytes);
	a.out = malloc(bytes);
	a.wire_len = 4 + bytes;
	a.wire = malloc(a.wire_len);
	memset(a.data, 0xa5, bytes);
	rc = measure(rc_bytes_enc, &a, bytes);
	ti = measure(ti_bytes_enc, &a, bytes);
	report("opaque", "encode", bytes, rc, ti);
	rc = measure(rc_bytes_dec, &a, bytes);
	ti = measure(ti_bytes_dec, &a, bytes);
	report("opaque", "decode", bytes, rc, ti);
	free(a.data);
	free(a.out);
	free(a.wire);
}

static void bench_memcpy(void)
{
	struct arr_ctx a;
	size_t bytes = (size_t)g_elems * 4;
	double mb;

	memset(&a, 0, sizeof(a));
	a.n = g_elems;
	a.elsize = 4;
	a.data = malloc(bytes);
	a.out = malloc(bytes);
	memset(a.data, 1, bytes);
	mb = measure(do_memcpy, &a, bytes);
	if (g_json)
		printf("{\"bench\":\"xdr\",\"case\":\"memcpy\",\"op\":\"copy\",\"bytes\":%zu,"
		       "\"reps\":%d,\"mbps\":%.1f}\n",
		       bytes, g_reps, mb);
	else
		printf("%-8s %-7s %10zu  %12.1f  %12s  %8s\n", "memcpy", "copy", bytes, mb, "-", "-");
	free(a.data);
	free(a.out);
}

static void usage(void)
{
	fprintf(stderr, "usage: rc-bench-xdr [--json] [--reps N] [--elems N] [--min-ms N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			g_json = true;
		else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
			g_reps = atoi(argv[++i]);
		else if (strcmp(argv[i], "--elems") == 0 && i + 1 < argc)
			g_elems = (uint32_t)strtoul(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--min-ms") == 0 && i + 1 < argc)
			g_min_ms = atof(argv[++i]);
		else
			usage();
	}
	if (g_reps < 1 || g_elems < 1 || g_elems > (1u << 28) || g_min_ms < 0)
		usage();
	if (!g_json) {
		printf("rc-bench-xdr: %u elements, median of %d repetitions of >= %.0f ms; "
		       "MB/s = 10^6 payload bytes/s\n",
		       (unsigned)g_elems, g_reps, g_min_ms);
		printf("%-8s %-7s %10s  %12s  %12s  %8s\n", "case", "op", "bytes", "remotecall",
		       "libtirpc", "ratio");
	}
	bench_array("int32", 4, (rc_xdrproc)rc_xdr_int, (xdrproc_t)xdr_int);
	bench_array("hyper", 8, (rc_xdrproc)rc_xdr_hyper, (xdrproc_t)xdr_hyper);
	bench_array("double", 8, (rc_xdrproc)rc_xdr_double, (xdrproc_t)xdr_double);
	bench_opaque();
	bench_memcpy();
	return 0;
}

/*
 * faults-amo-rc -- the at-most-once test with the remotecall client (see amo_common.h).
 *
 *   faults-amo-rc --server udp://127.0.0.1:PORT [--calls 5000] [--inflight 16] [--clients 4]
 *                 [--retry 20] [--timeout 5000] [--drop 0.3] [--dup 0.1] [--reorder 0.1] ...
 *
 * The calls are started with rc_call_start (the generated bench_add_1_async) on --clients
 * clients of the relay, --inflight in flight in all, and driven from one poll() loop with
 * rc_client_pollinfo / rc_client_advance; a call that completes starts the next one.
 * Exit 0 when every property holds, 1 otherwise.
 */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <remotecall/remotecall.h>

#include "amo_common.h"
#include "bench.h"

static amo_opts o;
static amo_call *g_calls;
static int64_t *g_res;
static int *g_client_of;
static rc_client **g_cl;
static int g_next = 1, g_done;

static void start_on(int ci);

static void on_done(rc_async *a, rc_status st, void *udata)
{
	(void)a;
	int i = (int)(intptr_t)udata;
	amo_call *c = &g_calls[i];
	c->done++;
	if (st == RC_OK) {
		c->ok = true;
		c->ret = g_res[i];
	} else {
		snprintf(c->why, sizeof c->why, "%s", rc_status_name(st));
	}
	g_done++;
	start_on(g_client_of[i]); /* keep the window full */
}

static void start_on(int ci)
{
	while (g_next <= o.calls) {
		int i = g_next++;
		int64_t arg = i;
		g_client_of[i] = ci;
		rc_status st = bench_add_1_async(g_cl[ci], &arg, &g_res[i], on_done,
		                                 (void *)(intptr_t)i, NULL);
		if (st == RC_OK)
			return;
		/* refused at once: it completed (with an error), the callback will never run */
		g_calls[i].done++;
		snprintf(g_calls[i].why, sizeof g_calls[i].why, "start:%s", rc_status_name(st));
		g_done++;
	}
}

static int64_t read_total(void)
{
	rc_client *c;
	int64_t zero = 0, total = -1;
	if (rc_client_create(&c, o.server, BENCH_PROG, BENCH_VERS) != RC_OK) {
		fprintf(stderr, "faults-amo-rc: cannot reach the server at %s\n", o.server);
		exit(1);
	}
	rc_client_set_timeout(c, 3000);
	rc_client_set_retry(c, 100);
	rc_status st = bench_add_1(c, &zero, &total);
	rc_client_destroy(c);
	if (st != RC_OK) {
		fprintf(stderr, "faults-amo-rc: reading the total: %s\n", rc_strerror(st));
		exit(1);
	}
	return total;
}

int main(int argc, char **argv)
{
	amo_parse(argc, argv, "faults-amo-rc", &o);
	g_calls = calloc((size_t)o.calls + 1, sizeof *g_calls);
	g_res = calloc((size_t)o.calls + 1, sizeof *g_res);
	g_client_of = calloc((size_t)o.calls + 1, sizeof *g_client_of);
	g_cl = calloc((size_t)o.clients, sizeof *g_cl);
	struct pollfd *pf = calloc((size_t)o.clients, sizeof *pf);
	if (!g_calls || !g_res || !g_client_of || !g_cl || !pf)
		return 1;

	relay *r = amo_relay_start(&o);
	for (int ci = 0; ci < o.clients; ci++) {
		rc_status st = rc_client_create(&g_cl[ci], relay_uri(r), BENCH_PROG, BENCH_VERS);
		if (st != RC_OK) {
			fprintf(stderr, "faults-amo-rc: client: %s\n", rc_strerror(st));
			return 1;
		}
		rc_client_set_timeout(g_cl[ci], o.timeout_ms);
		rc_client_set_retry(g_cl[ci], o.retry_ms);
	}

	uint64_t t0 = amo_now_ns();
	for (int k = 0; k < o.inflight; k++)
		start_on(k % o.clients);
	uint64_t limit = t0 + 150ull * 1000000000ull; /* far past any deadline: a hang is a failure */
	while (g_done < o.calls && amo_now_ns() < limit) {
		int timeout = 100;
		for (int ci = 0; ci < o.clients; ci++) {
			int fd, t;
			short ev;
			rc_client_pollinfo(g_cl[ci], &fd, &ev, &t);
			pf[ci] = (struct pollfd){fd, ev, 0};
			if (t >= 0 && t < timeout)
				timeout = t;
		}
		poll(pf, (nfds_t)o.clients, timeout);
		for (int ci = 0; ci < o.clients; ci++)
			rc_client_advance(g_cl[ci], pf[ci].fd >= 0 ? pf[ci].revents : 0);
	}
	double elapsed = (double)(amo_now_ns() - t0) / 1e9;
	if (g_done < o.calls)
		fprintf(stderr, "faults-amo-rc: %d calls still open after 150 s\n", o.calls - g_done);
	g_next = o.calls + 1; /* start nothing more */
	for (int ci = 0; ci < o.clients; ci++)
		rc_client_destroy(g_cl[ci]); /* completes anything left with RC_CANCELLED */

	amo_relay_finish(r);
	int64_t total = read_total();
	int rc = amo_check("remotecall", &o, g_calls, total, elapsed);
	free(pf);
	free(g_cl);
	free(g_client_of);
	free(g_res);
	free(g_calls);
	return rc;
}

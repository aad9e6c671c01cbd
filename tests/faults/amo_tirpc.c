/*
 * faults-amo-tirpc -- the at-most-once test with libtirpc's client (see amo_common.h), against
 * rc-bench-server: the peer's retransmissions (same xid, clnt_dg) must meet remotecall's
 * duplicate request cache.
 *
 *   faults-amo-tirpc --server udp://127.0.0.1:PORT [--calls 5000] [--inflight 16] ...
 *
 * tirpc-bench-client cannot be used as it is: it retransmits after a fixed 500 ms and sends
 * one argument for every call. Here --inflight threads each own a clnt_dg CLIENT on the relay
 * (CLSET_RETRY_TIMEOUT --retry, CLSET_TIMEOUT --timeout; libtirpc doubles the wait after each
 * retransmission) and take the next argument from a shared counter; --clients is ignored (one
 * client address per thread).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "amo_common.h"
#include "bench.h" /* rpcgen's */

static amo_opts o;
static amo_call *g_calls;
static atomic_int g_next = 1;

static CLIENT *make_client(const char *uri)
{
	struct sockaddr_storage ss;
	unsigned len;
	if (!relay_parse_uri(uri, &ss, &len))
		return NULL;
	int fd = socket(ss.ss_family, SOCK_DGRAM, 0);
	if (fd < 0)
		return NULL;
	struct netbuf nb = {.maxlen = len, .len = len, .buf = &ss};
	CLIENT *cl = clnt_dg_create(fd, &nb, BENCH_PROG, BENCH_VERS, 0, 0);
	if (!cl) {
		close(fd);
		return NULL;
	}
	clnt_control(cl, CLSET_FD_CLOSE, NULL);
	return cl;
}

static void set_times(CLIENT *cl, uint32_t total_ms, uint32_t retry_ms)
{
	struct timeval tv = {(time_t)(total_ms / 1000), (suseconds_t)(total_ms % 1000) * 1000};
	clnt_control(cl, CLSET_TIMEOUT, (char *)&tv);
	struct timeval rt = {(time_t)(retry_ms / 1000), (suseconds_t)(retry_ms % 1000) * 1000};
	clnt_control(cl, CLSET_RETRY_TIMEOUT, (char *)&rt);
}

static void *worker(void *p)
{
	const char *uri = p;
	CLIENT *cl = make_client(uri);
	if (!cl) {
		fprintf(stderr, "faults-amo-tirpc: %s\n", clnt_spcreateerror(uri));
		return (void *)1;
	}
	set_times(cl, o.timeout_ms, o.retry_ms);
	for (;;) {
		int i = atomic_fetch_add(&g_next, 1);
		if (i > o.calls)
			break;
		quad_t arg = i, res = 0;
		enum clnt_stat st = bench_add_1(&arg, &res, cl);
		amo_call *c = &g_calls[i];
		c->done++;
		if (st == RPC_SUCCESS) {
			c->ok = true;
			c->ret = res;
		} else {
			snprintf(c->why, sizeof c->why, "%s", clnt_sperrno(st));
		}
	}
	clnt_destroy(cl);
	return NULL;
}

int main(int argc, char **argv)
{
	amo_parse(argc, argv, "faults-amo-tirpc", &o);
	g_calls = calloc((size_t)o.calls + 1, sizeof *g_calls);
	pthread_t *tids = calloc((size_t)o.inflight, sizeof *tids);
	if (!g_calls || !tids)
		return 1;
	o.clients = o.inflight;

	relay *r = amo_relay_start(&o);
	uint64_t t0 = amo_now_ns();
	int failed = 0;
	for (int t = 0; t < o.inflight; t++)
		if (pthread_create(&tids[t], NULL, worker, (void *)relay_uri(r)) != 0)
			return 1;
	for (int t = 0; t < o.inflight; t++) {
		void *ret;
		pthread_join(tids[t], &ret);
		failed += ret != NULL;
	}
	double elapsed = (double)(amo_now_ns() - t0) / 1e9;
	amo_relay_finish(r);
	if (failed)
		return 1;

	CLIENT *cl = make_client(o.server);
	if (!cl)
		return 1;
	set_times(cl, 3000, 100);
	quad_t zero = 0, total = -1;
	enum clnt_stat st = bench_add_1(&zero, &total, cl);
	clnt_destroy(cl);
	if (st != RPC_SUCCESS) {
		fprintf(stderr, "faults-amo-tirpc: reading the total: %s\n", clnt_sperrno(st));
		return 1;
	}
	int rc = amo_check("libtirpc", &o, g_calls, (int64_t)total, elapsed);
	free(tids);
	free(g_calls);
	return rc;
}

/*
 * The bench procedures in rpcgen's default style (static results, returned by address), for
 * the unmodified rpcgen _svc.c built on remotecall (porting_rpcgen): the "static result" habit
 * that must work. echo returns the argument's bytes in a static buffer.
 */
#include <string.h>

#include "bench.h"

static long long total;

/* BENCH_NULL. */
void *bench_null_1_svc(void *arg, struct svc_req *req)
{
	static char dummy;
	(void)arg, (void)req;
	return &dummy;
}

/* BENCH_INT. */
void *bench_int_1_svc(int *arg, struct svc_req *req)
{
	static char dummy;
	(void)arg, (void)req;
	return &dummy;
}

/* BENCH_SEND. */
void *bench_send_1_svc(bench_data *arg, struct svc_req *req)
{
	static char dummy;
	(void)arg, (void)req;
	return &dummy;
}

/* BENCH_SENDR: the length. */
int *bench_sendr_1_svc(bench_data *arg, struct svc_req *req)
{
	static int n;
	(void)req;
	n = (int)arg->bench_data_len;
	return &n;
}

/* BENCH_ECHO: a static copy (at most 64 KiB; longer is cut). */
bench_data *bench_echo_1_svc(bench_data *arg, struct svc_req *req)
{
	static char buf[65536];
	static bench_data res;
	(void)req;
	res.bench_data_len = arg->bench_data_len < sizeof(buf) ? arg->bench_data_len : sizeof(buf);
	memcpy(buf, arg->bench_data_val, res.bench_data_len);
	res.bench_data_val = buf;
	return &res;
}

/* BENCH_WORK: the argument back. */
u_int *bench_work_1_svc(u_int *arg, struct svc_req *req)
{
	static u_int r;
	(void)req;
	r = *arg;
	return &r;
}

/* BENCH_ADD: the running total. */
quad_t *bench_add_1_svc(quad_t *arg, struct svc_req *req)
{
	static quad_t r;
	(void)req;
	total += *arg;
	r = total;
	return &r;
}

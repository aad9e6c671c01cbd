/*
 * The bench procedures in rpcgen -M style (result by pointer, freeresult), for the unmodified
 * rpcgen -M _svc.c built on remotecall (tests/porting: porting_rpcgen). echo copies, sendr
 * counts, add keeps a running total.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static long long total;

/* BENCH_NULL: nothing. */
bool_t bench_null_1_svc(void *arg, void *res, struct svc_req *req)
{
	(void)arg, (void)res, (void)req;
	return TRUE;
}

/* BENCH_INT: nothing. */
bool_t bench_int_1_svc(int *arg, void *res, struct svc_req *req)
{
	(void)arg, (void)res, (void)req;
	return TRUE;
}

/* BENCH_SEND: nothing. */
bool_t bench_send_1_svc(bench_data *arg, void *res, struct svc_req *req)
{
	(void)arg, (void)res, (void)req;
	return TRUE;
}

/* BENCH_SENDR: the length. */
bool_t bench_sendr_1_svc(bench_data *arg, int *res, struct svc_req *req)
{
	(void)req;
	*res = (int)arg->bench_data_len;
	return TRUE;
}

/* BENCH_ECHO: a malloc'd copy (freed by bench_prog_1_freeresult). */
bool_t bench_echo_1_svc(bench_data *arg, bench_data *res, struct svc_req *req)
{
	(void)req;
	res->bench_data_len = arg->bench_data_len;
	res->bench_data_val = malloc(arg->bench_data_len + 1);
	if (res->bench_data_val == NULL)
		return FALSE;
	memcpy(res->bench_data_val, arg->bench_data_val, arg->bench_data_len);
	return TRUE;
}

/* BENCH_WORK: the argument back. */
bool_t bench_work_1_svc(u_int *arg, u_int *res, struct svc_req *req)
{
	(void)req;
	*res = *arg;
	return TRUE;
}

/* BENCH_ADD: the running total. */
bool_t bench_add_1_svc(quad_t *arg, quad_t *res, struct svc_req *req)
{
	(void)req;
	total += *arg;
	*res = total;
	return TRUE;
}

/* rpcgen -M: called after each reply to free the result. */
int bench_prog_1_freeresult(SVCXPRT *transp, xdrproc_t xdr_result, caddr_t result)
{
	(void)transp;
	xdr_free(xdr_result, result);
	return 1;
}

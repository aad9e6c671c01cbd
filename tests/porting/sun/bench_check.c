/*
 * bench_check HOST PROTO [FAMILY] -- a client of the bench program through rpcgen -M's client stubs
 * (4000 bytes: libtirpc's UDP buffers hold 8800) (built twice: against libtirpc, and against remotecall's compat headers): echo 3 sizes, add
 * twice (the total grows by exactly what was added), sendr, and procedure 99 (must fail with
 * "Procedure unavailable"). With FAMILY (the hand-written netpath server): BENCH_INT must be
 * refused as too weak (svcerr_weakauth) and BENCH_WORK must answer FAMILY, the address family
 * the server's svc_getcaller saw (2 AF_INET, 10 AF_INET6). Prints "ok ..." per check, "FAIL ..." and exits 1 on a mismatch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static int fails;

/* Report one check. */
static void check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	if (!ok)
		fails++;
}

int main(int argc, char **argv)
{
	struct timeval tmo = {5, 0};
	CLIENT *c;
	size_t sizes[3] = {0, 13, 4000};
	quad_t a = 5, t1 = 0, t2 = 0;
	int n = -1;
	char *buf;
	enum clnt_stat st;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: bench_check HOST PROTO [FAMILY]\n");
		return 2;
	}
	c = clnt_create(argv[1], BENCH_PROG, BENCH_VERS, argv[2]);
	if (c == NULL) {
		clnt_pcreateerror(argv[1]);
		return 1;
	}
	buf = malloc(9000);
	for (size_t i = 0; i < 9000; i++)
		buf[i] = (char)(i * 7 + 1);
	for (int i = 0; i < 3; i++) {
		bench_data in = {(u_int)sizes[i], buf}, out = {0, NULL};
		char what[64];
		st = bench_echo_1(&in, &out, c);
		snprintf(what, sizeof(what), "echo %zu bytes", sizes[i]);
		check(st == RPC_SUCCESS && out.bench_data_len == sizes[i] &&
		          (sizes[i] == 0 || memcmp(out.bench_data_val, buf, sizes[i]) == 0),
		      what);
		xdr_free((xdrproc_t)xdr_bench_data, (char *)&out);
	}
	st = bench_add_1(&a, &t1, c);
	check(st == RPC_SUCCESS, "add");
	st = bench_add_1(&a, &t2, c);
	check(st == RPC_SUCCESS && t2 == t1 + 5, "add again: total grew by 5");
	{
		bench_data in = {13, buf};
		st = bench_sendr_1(&in, &n, c);
		check(st == RPC_SUCCESS && n == 13, "sendr 13");
	}
	st = clnt_call(c, 99, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_void, NULL, tmo);
	check(st == RPC_PROCUNAVAIL, "procedure 99 unavailable");
	printf("     %s\n", clnt_sperror(c, "procedure 99"));
	if (argc == 4) {
		int i = 1;
		u_int fam = 99, want = (u_int)atoi(argv[3]);
		char msg[128];
		st = bench_int_1(&i, NULL, c);
		snprintf(msg, sizeof(msg), "%s", clnt_sperror(c, "int"));
		check(st == RPC_AUTHERROR &&
		          strcmp(msg, "int: RPC: Authentication error; why = Client credential too weak") ==
		              0,
		      msg);
		st = bench_work_1(&fam, &fam, c);
		snprintf(msg, sizeof(msg), "svc_getcaller's family %u, want %u", fam, want);
		check(st == RPC_SUCCESS && fam == want, msg);
	}
	clnt_destroy(c);
	free(buf);
	return fails ? 1 : 0;
}

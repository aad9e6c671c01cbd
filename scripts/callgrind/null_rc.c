/*
 * null_rc URI N -- N blocking BENCH_NULL calls through the generated stub, nothing else: the
 * client side of scripts/callgrind/null-call.sh (instructions per call, remotecall).
 */
#include <stdio.h>
#include <stdlib.h>

#include <remotecall/remotecall.h>

#include "bench.h"

int main(int argc, char **argv)
{
	rc_client *c;
	int n;

	if (argc != 3)
		return 2;
	n = atoi(argv[2]);
	if (rc_client_create(&c, argv[1], BENCH_PROG, BENCH_VERS) != RC_OK)
		return 1;
	for (int i = 0; i < n; i++)
		if (bench_null_1(c) != RC_OK)
			return 1;
	rc_client_destroy(c);
	return 0;
}

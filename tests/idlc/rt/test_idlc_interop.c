/*
 * test_idlc_interop -- idlc's XDR routines for nfs_prot.x, mount.x and nlm_prot.x against
 * rpcgen's with libtirpc (the rt_tirpc program), one named case per value of rt_fill.h:
 *
 *   1. idlc encodes the value; rt_tirpc encodes the same value: the bytes must be equal;
 *   2. idlc decodes rt_tirpc's bytes and encodes the result again: equal again;
 *   3. rt_tirpc decodes idlc's bytes, encodes again, and compares (rt_tirpc check).
 *
 * The two sides are separate programs that exchange files: rpcgen's headers and
 * remotecall's never meet in one translation unit.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define RT_PROC rc_xdrproc
#ifndef RT_FILL
#define RT_FILL "rt_fill.h"
#endif
#include RT_FILL

/* tirpc -- run "rt_tirpc MODE CASE FILE"; its exit status (or -1 if it did not exit). */
static int
tirpc(const char *mode, const char *name, const char *file)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(RT_TIRPC, RT_TIRPC, mode, name, file, (char *)NULL);
		_exit(127);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static size_t
encode(const rt_case *c, void *obj, unsigned char *buf, size_t cap)
{
	rc_xdr x;
	rc_xdrmem_create(&x, buf, cap, RC_XDR_ENCODE);
	if (!c->proc(&x, obj))
		return 0;
	return rc_xdr_getpos(&x);
}

static void
run_case(void **state)
{
	const rt_case *c = *state;
	static unsigned char mine[RT_MAXWIRE], theirs[RT_MAXWIRE], again[RT_MAXWIRE];
	char tfile[4096], ifile[4096];
	snprintf(tfile, sizeof tfile, "%s/%s.tirpc", RT_WORKDIR, c->name);
	snprintf(ifile, sizeof ifile, "%s/%s.idlc", RT_WORKDIR, c->name);

	/* 1. the same value, encoded by both */
	void *obj = calloc(1, c->size);
	c->fill(obj);
	size_t n = encode(c, obj, mine, sizeof mine);
	free(obj);
	assert_true(n > 0);
	assert_int_equal(tirpc("encode", c->name, tfile), 0);
	FILE *f = fopen(tfile, "rb");
	assert_non_null(f);
	size_t len = fread(theirs, 1, sizeof theirs, f);
	fclose(f);
	assert_int_equal(len, n);
	assert_memory_equal(mine, theirs, n);

	/* 2. libtirpc's bytes through idlc's decoder and encoder */
	obj = calloc(1, c->size);
	rc_xdr x;
	rc_xdrmem_create(&x, theirs, len, RC_XDR_DECODE);
	assert_true(c->proc(&x, obj));
	assert_int_equal(rc_xdr_getpos(&x), len);
	assert_int_equal(encode(c, obj, again, sizeof again), len);
	assert_memory_equal(again, theirs, len);
	rc_xdr_free(c->proc, obj);
	free(obj);

	/* 3. idlc's bytes through libtirpc's decoder and encoder */
	f = fopen(ifile, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(mine, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(tirpc("check", c->name, ifile), 0);
}

int
main(void)
{
	struct CMUnitTest tests[RT_NCASES];
	mkdir(RT_WORKDIR, 0755);
	for (size_t i = 0; i < RT_NCASES; i++) {
		memset(&tests[i], 0, sizeof tests[i]);
		tests[i].name = rt_cases[i].name;
		tests[i].test_func = run_case;
		tests[i].initial_state = (void *)&rt_cases[i];
	}
	return _cmocka_run_group_tests("test_idlc_interop", tests, RT_NCASES, NULL, NULL);
}

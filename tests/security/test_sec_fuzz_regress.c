/*
 * The fuzz targets' inputs replayed in the ordinary test suite (gcc, no libFuzzer): every seed
 * in tests/fuzz/corpus/TARGET/ and every input that once crashed a target, kept in
 * tests/fuzz/regress/TARGET/, goes through the same harness code as in fuzzing (the fuzz
 * sources are compiled in with their entry points renamed), so the harnesses' checks -- reply
 * well-formed, AUTH_SYS against the reference parser, reassembly against the reference --
 * hold on them in every build, and a fixed crash stays fixed.
 *
 * To add a crash found by tests/fuzz/run.sh: copy BUILD/fuzz/crash-TARGET-* into
 * tests/fuzz/regress/TARGET/ under a name that says what it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sec_util.h"

int fuzz_call_one(const uint8_t *data, size_t size);
int fuzz_authsys_one(const uint8_t *data, size_t size);
int fuzz_recreader_one(const uint8_t *data, size_t size);
int fuzz_reply_one(const uint8_t *data, size_t size);

/* Run fn on every file of RC_FUZZ_DIR/sub/target; returns how many. */
static int replay_dir(const char *sub, const char *target,
                      int (*fn)(const uint8_t *, size_t))
{
	char dir[1024], path[2048];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/%s/%s", RC_FUZZ_DIR, sub, target);
	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		FILE *f;
		uint8_t *buf;
		long len;
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if ((f = fopen(path, "rb")) == NULL)
			continue;
		fseek(f, 0, SEEK_END);
		len = ftell(f);
		fseek(f, 0, SEEK_SET);
		buf = malloc(len > 0 ? (size_t)len : 1);
		assert_non_null(buf);
		assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
		fclose(f);
		print_message("%s/%s/%s\n", sub, target, e->d_name);
		fn(buf, (size_t)len);
		free(buf);
		n++;
	}
	closedir(d);
	return n;
}

static void replay(const char *target, int (*fn)(const uint8_t *, size_t))
{
	int seeds = replay_dir("corpus", target, fn);
	int crashes = replay_dir("regress", target, fn);
	print_message("%s: %d seeds, %d regression inputs\n", target, seeds, crashes);
	assert_true(seeds > 0);
}

static void call_path(void **state) { (void)state; replay("fuzz_call", fuzz_call_one); }
static void authsys(void **state) { (void)state; replay("fuzz_authsys", fuzz_authsys_one); }
static void recreader(void **state) { (void)state; replay("fuzz_recreader", fuzz_recreader_one); }
static void reply_path(void **state) { (void)state; replay("fuzz_reply", fuzz_reply_one); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(call_path),
		cmocka_unit_test(authsys),
		cmocka_unit_test(recreader),
		cmocka_unit_test(reply_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

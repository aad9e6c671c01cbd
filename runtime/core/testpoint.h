/*
 * Test-only delay points. RC__TEST_POINT(where) marks a place where a race window opens (a
 * thread between two steps another thread may act in). In the library it compiles to
 * nothing; a test that compiles a runtime file into itself with RC_TEST_HOOKS defined (see
 * tests/runtime/CMakeLists.txt) defines rc__test_point and may set it, before starting any
 * thread, to a function that waits at the named point so the window opens on every run.
 */
#ifndef RC_RUNTIME_TESTPOINT_H
#define RC_RUNTIME_TESTPOINT_H

#ifdef RC_TEST_HOOKS
/* The test's hook (defined by the test; NULL: none). where: "file.what", a static string. */
extern void (*rc__test_point)(const char *where);
#define RC__TEST_POINT(where)                                                                \
	do {                                                                                  \
		if (rc__test_point != NULL)                                                   \
			rc__test_point(where);                                                \
	} while (0)
#else
#define RC__TEST_POINT(where) ((void)0)
#endif

#endif

/*
 * Attack class 9: long URIs, Unix paths and host names (CVE-2022-23218, CVE-2022-23219: glibc's
 * svcunix_create / clnt_create copied a caller's path or host into fixed buffers). 200- and
 * 4096-byte (and boundary-length) inputs to rc_client_create and rc_server_listen must give a
 * clear error (RC_UNKNOWNADDR, RC_UNKNOWNPROTO, RC_UNKNOWNHOST), quickly and without a name
 * service look-up, and the longest valid ones must work. The tests run under
 * AddressSanitizer in the sanitizer build, which catches any overflow.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sec_util.h"

static char *rep(const char *prefix, char ch, size_t n, const char *suffix)
{
	size_t p = strlen(prefix), s = strlen(suffix);
	char *u = malloc(p + n + s + 1);
	assert_non_null(u);
	memcpy(u, prefix, p);
	memset(u + p, ch, n);
	memcpy(u + p + n, suffix, s + 1);
	return u;
}

/* "a.a.a...." of exactly n characters (labels of one letter). */
static char *dotted(const char *prefix, size_t n, const char *suffix)
{
	char *u = rep(prefix, 'a', n, suffix);
	for (size_t i = 1; i < n; i += 2)
		u[strlen(prefix) + i] = '.';
	if (n % 2 == 0)
		u[strlen(prefix) + n - 1] = 'a';
	return u;
}

typedef struct {
	char *uri;
	rc_status want; /* RC_OK: any error but these three is a failure; see check() */
} named;

/* Hostile names and what both rc_client_create and rc_server_listen must say. */
static size_t hostile(named *v)
{
	size_t n = 0;
	static const size_t lens[] = {200, 4096};
	for (size_t i = 0; i < 2; i++) {
		size_t L = lens[i];
		v[n++] = (named){rep("tcp://", 'a', L, ":1"), RC_UNKNOWNADDR};  /* one label > 63 */
		v[n++] = (named){rep("udp://", 'a', L, ""), RC_UNKNOWNADDR};
		v[n++] = (named){rep("unix:/", 'p', L, ""), RC_UNKNOWNADDR};    /* > sun_path */
		v[n++] = (named){rep("unix:///tmp/", 'p', L, ""), RC_UNKNOWNADDR};
		v[n++] = (named){rep("", 'x', L, "://h:1"),
		                 L > 1024 ? RC_UNKNOWNADDR : RC_UNKNOWNPROTO};  /* scheme */
		v[n++] = (named){rep("tcp://h:", '9', L, ""), RC_UNKNOWNADDR};  /* port */
		v[n++] = (named){rep("tcp://[", '1', L, "]:1"),
		                 L < 256 ? RC_UNKNOWNHOST : RC_UNKNOWNADDR};    /* v6 literal */
		v[n++] = (named){rep("tcp://[", ':', L, "]:1"),
		                 L < 256 ? RC_UNKNOWNHOST : RC_UNKNOWNADDR};
		v[n++] = (named){rep("tcp://h:1/", 'z', L, ""), RC_UNKNOWNADDR}; /* path after port */
	}
	/* 4096 bytes of inproc name (the 200-byte one is a valid name: see below) */
	v[n++] = (named){rep("inproc:", 'n', 4096, ""), RC_UNKNOWNADDR};
	v[n++] = (named){rep("inproc:", 'n', 256, ""), RC_UNKNOWNADDR};
	/* DNS names: 254 characters is over the 253 limit; a 64-character label is over 63 */
	v[n++] = (named){dotted("tcp://", 254, ":1"), RC_UNKNOWNADDR};
	v[n++] = (named){rep("tcp://", 'a', 64, ".example:1"), RC_UNKNOWNADDR};
	v[n++] = (named){dotted("udp://", 4001, ":1"), RC_UNKNOWNADDR};
	/* the whole URI over 1,024 bytes */
	v[n++] = (named){rep("unix:/", 'u', 1025 - 6, ""), RC_UNKNOWNADDR};
	v[n++] = (named){rep("tcp://h:1", ' ', 1030, ""), RC_UNKNOWNADDR};
	/* host names with bytes a name cannot hold */
	v[n++] = (named){rep("tcp://h%", 'x', 200, ":1"), RC_UNKNOWNADDR};
	v[n++] = (named){rep("tcp://h/", '/', 200, ":1"), RC_UNKNOWNADDR};
	v[n++] = (named){rep("tcp://", '\xff', 200, ":1"), RC_UNKNOWNADDR};
	return n;
}

static void check(const char *what, const char *uri, rc_status got, rc_status want, int64_t ms)
{
	if (got != want)
		fail_msg("%s(%.40s... [%zu bytes]): %s, want %s", what, uri, strlen(uri),
		         rc_status_name(got), rc_status_name(want));
	/* refused on sight: no name service was asked */
	if (ms > 200)
		fail_msg("%s(%.40s... [%zu bytes]) took %lld ms", what, uri, strlen(uri),
		         (long long)ms);
}

static void client_long_names(void **state)
{
	named v[64];
	size_t n = hostile(v);
	(void)state;
	for (size_t i = 0; i < n; i++) {
		rc_client *c = (rc_client *)&c;
		int64_t t0 = sec_ms();
		rc_status st = rc_client_create(&c, v[i].uri, SEC_PROG, 1);
		check("rc_client_create", v[i].uri, st, v[i].want, sec_ms() - t0);
		assert_null(c);
		free(v[i].uri);
	}
}

static void server_long_names(void **state)
{
	named v[64];
	size_t n = hostile(v);
	rc_server *srv;
	(void)state;
	assert_int_equal(rc_server_create(&srv), RC_OK);
	for (size_t i = 0; i < n; i++) {
		char bound[16] = "untouched";
		int64_t t0 = sec_ms();
		rc_status st = rc_server_listen(srv, v[i].uri, bound, sizeof(bound));
		check("rc_server_listen", v[i].uri, st, v[i].want, sec_ms() - t0);
		assert_string_equal(bound, "");
		free(v[i].uri);
	}
	rc_server_destroy(srv);
}

/* The longest names that are valid work end to end; a short `bound` buffer is truncated and
 * terminated. */
static void longest_valid_names_work(void **state)
{
	rc_server *srv;
	sec_server s;
	char bound[300], tiny[8];
	const char *u[2] = {NULL, NULL};
	/* unix: a path of 107 bytes fits sun_path (108 with its NUL); 108 does not (the pid
	 * keeps concurrent runs apart) */
	char dir[64];
	snprintf(dir, sizeof(dir), "unix:/tmp/rc-sec-%d-", (int)getpid());
	char *p107 = rep(dir, 'p', 107 - (strlen(dir) - 5), "");
	char *p108 = rep(dir, 'p', 108 - (strlen(dir) - 5), "");
	char *in200 = rep("inproc:", 'n', 200, "");
	(void)state;
	assert_int_equal(strlen(p107 + 5), 107);
	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_listen(srv, p108, NULL, 0), RC_UNKNOWNADDR);
	rc_server_destroy(srv);

	u[0] = p107;
	assert_int_equal(sec_start(&s, u, NULL, 1, 0), 0);
	assert_string_equal(s.uri[0], p107);
	assert_int_equal(sec_null_call(p107, 2000), RC_OK);
	{
		rc_client *c = (rc_client *)&c;
		assert_int_equal(rc_client_create(&c, p108, SEC_PROG, 1), RC_UNKNOWNADDR);
		assert_null(c);
	}
	sec_stop(&s);
	assert_int_equal(access(p107 + 5, F_OK), -1); /* the socket file was removed */

	/* a 200-byte in-process name; the bound URI truncated to a short buffer */
	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_register(srv, &sec_prog1, NULL), RC_OK);
	memset(tiny, 'z', sizeof(tiny));
	assert_int_equal(rc_server_listen(srv, in200, tiny, sizeof(tiny)), RC_OK);
	assert_int_equal(tiny[sizeof(tiny) - 1], '\0');
	assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
	assert_int_equal(sec_null_call(in200, 1000), RC_OK);
	assert_int_equal(rc_server_listen(srv, "tcp://127.0.0.1:0", bound, sizeof(bound)), RC_OK);
	assert_non_null(strstr(bound, "tcp://127.0.0.1:"));
	rc_server_destroy(srv);
	free(p107);
	free(p108);
	free(in200);
}

/* Long names inside the protocol: AUTH_SYS machine names and gid lists set by a client. */
static void long_auth_sys_fields(void **state)
{
	static const char *const u[] = {"tcp://127.0.0.1:0", NULL};
	sec_server s;
	rc_client *c;
	char name[4097], *who = NULL;
	uint32_t gids[17] = {0};
	(void)state;
	assert_int_equal(sec_start(&s, u, NULL, 1, 0), 0);
	assert_int_equal(rc_client_create(&c, s.uri[0], SEC_PROG, 1), RC_OK);
	memset(name, 'm', sizeof(name) - 1);
	name[4096] = '\0';
	assert_int_equal(rc_client_set_auth_sys(c, name, 1, 1, NULL, 0), RC_INVAL);
	name[256] = '\0';
	assert_int_equal(rc_client_set_auth_sys(c, name, 1, 1, NULL, 0), RC_INVAL);
	assert_int_equal(rc_client_set_auth_sys(c, "h", 1, 1, gids, 17), RC_INVAL);
	name[255] = '\0';
	assert_int_equal(rc_client_set_auth_sys(c, name, 7, 8, gids, 16), RC_OK);
	assert_int_equal(rc_call(c, P_WHO, NULL, NULL, (rc_xdrproc)xdr_sec_str, &who), RC_OK);
	assert_non_null(who);
	assert_int_equal(strlen(who), 255 + strlen(":7:8:16"));
	rc_xdr_free((rc_xdrproc)xdr_sec_str, &who);
	/* error text into tiny buffers */
	{
		rc_error e = {.status = RC_PROGVERSMISMATCH, .low = 1, .high = 4294967295u};
		char b1[1] = {'x'}, b5[5];
		rc_error_format(&e, b1, sizeof(b1));
		assert_int_equal(b1[0], '\0');
		rc_error_format(&e, b5, sizeof(b5));
		assert_int_equal(strlen(b5), 4);
	}
	rc_client_destroy(c);
	sec_stop(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(client_long_names),
		cmocka_unit_test(server_long_names),
		cmocka_unit_test(longest_valid_names_work),
		cmocka_unit_test(long_auth_sys_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_transports -- listener behaviour of the socket transports.
 *
 * A UDP listener must own its port: binding port 0 never yields a port another socket holds,
 * and a second listener on a held port fails instead of silently sharing (and stealing) its
 * datagrams, which SO_REUSEADDR on a UDP socket would allow on Linux.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <remotecall/remotecall.h>

#define NSRV 4     /* a server holds at most 64 listeners */
#define PERSRV 50
#define NLISTEN (NSRV * PERSRV)

static int port_of(const char *uri)
{
	const char *c = strrchr(uri, ':');

	return c ? atoi(c + 1) : -1;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* 200 UDP listeners on port 0 (4 servers of 50): 200 distinct ports. */
static void udp_port0_ports_are_distinct(void **state)
{
	static int ports[NLISTEN];
	rc_server *srv[NSRV];
	char bound[128];

	(void)state;
	for (int s = 0; s < NSRV; s++) {
		assert_int_equal(rc_server_create(&srv[s]), RC_OK);
		for (int i = 0; i < PERSRV; i++) {
			assert_int_equal(rc_server_listen(srv[s], "udp://127.0.0.1:0", bound, sizeof bound),
			                 RC_OK);
			ports[s * PERSRV + i] = port_of(bound);
			assert_true(ports[s * PERSRV + i] > 0);
		}
	}
	qsort(ports, NLISTEN, sizeof ports[0], cmp_int);
	for (int i = 1; i < NLISTEN; i++)
		assert_int_not_equal(ports[i - 1], ports[i]);
	for (int s = 0; s < NSRV; s++)
		rc_server_destroy(srv[s]);
}

/* A second server asking for the port a first one listens on is refused with EADDRINUSE. */
static void held_port_is_refused(const char *scheme)
{
	rc_server *a, *b;
	char bound[128], uri[160];

	assert_int_equal(rc_server_create(&a), RC_OK);
	assert_int_equal(rc_server_create(&b), RC_OK);
	snprintf(uri, sizeof uri, "%s://127.0.0.1:0", scheme);
	assert_int_equal(rc_server_listen(a, uri, bound, sizeof bound), RC_OK);
	snprintf(uri, sizeof uri, "%s://127.0.0.1:%d", scheme, port_of(bound));
	errno = 0;
	assert_int_equal(rc_server_listen(b, uri, NULL, 0), RC_LOCALERROR);
	assert_int_equal(errno, EADDRINUSE);
	rc_server_destroy(b);
	rc_server_destroy(a);
}

static void udp_held_port_is_refused(void **state)
{
	(void)state;
	held_port_is_refused("udp");
}

static void tcp_held_port_is_refused(void **state)
{
	(void)state;
	held_port_is_refused("tcp");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(udp_port0_ports_are_distinct),
		cmocka_unit_test(udp_held_port_is_refused),
		cmocka_unit_test(tcp_held_port_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

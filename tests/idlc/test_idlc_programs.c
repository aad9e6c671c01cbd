/*
 * test_idlc_programs -- a .x of several programs links on each side with that side's
 * routines only (idlc's weak references, docs/idl.md "Several programs in one file"), and a
 * program whose routines the link lacks is refused with RC_PROCUNAVAIL. Built three times
 * from this file:
 *
 *   SIDE_SERVICE   programs/jobs2.x with JOB_PROG's routine only: serves it and calls it
 *                  (in-process transport); JOBCB_PROG is refused
 *   SIDE_CALLBACK  programs/jobs2.x with JOBCB_PROG's routine only: the reverse
 *   SIDE_NFS4      world/nfs4_prot.x with NFS4_CALLBACK's routines only, served by a client
 *                  (rc_client_serve, on a loopback TCP connection); NFS4_PROGRAM is refused
 *
 * That each executable links at all is half of the test: before, each needed the other
 * side's routines (undefined reference to jobcb_done_1_svc).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#ifdef SIDE_NFS4
#include "nfs4_prot.h"
#else
#include "jobs2.h"
#endif

static int calls; /* routines run */

#if defined(SIDE_SERVICE)
bool
job_submit_1_svc(const int32_t *arg, int32_t *res, rc_svc_req *req)
{
	(void)req;
	calls++;
	*res = *arg + 1;
	return true;
}
#define MINE (&job_prog_1_program)
#define OTHER (&jobcb_prog_1_program)
#elif defined(SIDE_CALLBACK)
bool
jobcb_done_1_svc(const int32_t *arg, rc_svc_req *req)
{
	(void)req;
	calls += *arg;
	return true;
}
#define MINE (&jobcb_prog_1_program)
#define OTHER (&job_prog_1_program)
#elif defined(SIDE_NFS4)
bool
cb_null_1_svc(rc_svc_req *req)
{
	(void)req;
	calls++;
	return true;
}

bool
cb_compound_1_svc(const CB_COMPOUND4args *arg, CB_COMPOUND4res *res, rc_svc_req *req)
{
	(void)arg;
	(void)res;
	(void)req;
	return false;
}
#define MINE (&nfs4_callback_1_program)
#define OTHER (&nfs4_program_4_program)
#else
#error "build with SIDE_SERVICE, SIDE_CALLBACK or SIDE_NFS4"
#endif

/* The table of the program whose routines are linked keeps them; the other's are empty. */
static void
test_tables(void **state)
{
	(void)state;
	for (size_t i = 0; i < MINE->nprocs; i++)
		assert_non_null(MINE->procs[i].fn);
	for (size_t i = 0; i < OTHER->nprocs; i++)
		assert_null(OTHER->procs[i].fn);
}

/* A server registers the program it has the routines of and refuses the other. */
static void
test_register(void **state)
{
	(void)state;
	rc_server *srv = NULL;
	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_register(srv, OTHER, NULL), RC_PROCUNAVAIL);
	assert_int_equal(rc_server_register(srv, MINE, NULL), RC_OK);
	rc_server_destroy(srv);
}

#ifndef SIDE_NFS4
static rc_server *srv;

static void *
serve(void *arg)
{
	(void)arg;
	rc_server_run(srv);
	return NULL;
}

/* The linked routine answers a call through the generated stub. */
static void
test_call(void **state)
{
	(void)state;
	pthread_t t;
	rc_client *c = NULL;
	char bound[128];

	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_register(srv, MINE, NULL), RC_OK);
	assert_int_equal(rc_server_listen(srv, "inproc:idlc-programs", bound, sizeof bound), RC_OK);
	assert_int_equal(pthread_create(&t, NULL, serve, NULL), 0);
	assert_int_equal(rc_client_create(&c, bound, MINE->prog, MINE->vers), RC_OK);
	calls = 0;
#ifdef SIDE_SERVICE
	int32_t res = 0;
	assert_int_equal(job_submit_1(c, &(int32_t){ 41 }, &res), RC_OK);
	assert_int_equal(res, 42);
	assert_int_equal(calls, 1);
#else
	assert_int_equal(jobcb_done_1(c, &(int32_t){ 3 }), RC_OK);
	assert_int_equal(calls, 3);
#endif
	rc_client_destroy(c);
	rc_server_stop(srv);
	pthread_join(t, NULL);
	rc_server_destroy(srv);
}
#else
/* A client of NFSv4.1 serves the callback program on its connection and not the server's
 * program (rc_client_serve); nothing is called back here: the registration is the point. */
static void
test_call(void **state)
{
	(void)state;
	rc_server *srv = NULL;
	rc_client *c = NULL;
	char bound[128];

	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_listen(srv, "tcp://127.0.0.1:0", bound, sizeof bound), RC_OK);
	assert_int_equal(rc_client_create(&c, bound, NFS4_PROGRAM, NFS_V4), RC_OK);
	assert_int_equal(rc_client_serve(c, OTHER, NULL), RC_PROCUNAVAIL);
	assert_int_equal(rc_client_serve(c, MINE, NULL), RC_OK);
	rc_client_destroy(c);
	rc_server_destroy(srv);
}
#endif

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_register),
		cmocka_unit_test(test_call),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

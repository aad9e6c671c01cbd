/*
 * test_idlc_calls -- the client stubs and server tables idlc generates for golden/basic.x
 * and golden/lists.x, calling each other through remotecall (in-process transport): void
 * and non-void arguments and results, several arguments, strings, unions, two versions, the
 * server context, the multi stubs' typed handlers, and a 100 000-node list sent and
 * returned.
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

#include "basic.h"
#include "lists.h"

#define URI "inproc:idlc-calls"

static int ctx_tag;           /* the context registered with basic_prog_1 */
static bool ctx_ok = true;    /* every call saw it */
static int64_t put_seen;      /* what BASIC_PUT received */
static char put_name[64];

/* ---- the server procedures (the user's side) ---------------------------------------- */

static void
check_ctx(rc_svc_req *req)
{
	if (rc_svc_req_context(req) != &ctx_tag)
		ctx_ok = false;
}

bool
basic_null_1_svc(rc_svc_req *req)
{
	check_ctx(req);
	return true;
}

bool
basic_add_1_svc(const int32_t *arg1, const int32_t *arg2, int32_t *res, rc_svc_req *req)
{
	check_ctx(req);
	*res = *arg1 + *arg2;
	return true;
}

bool
basic_get_1_svc(const arrays *arg, result *res, rc_svc_req *req)
{
	check_ctx(req);
	if (arg->str != NULL && arg->str[0] != '\0') {
		res->which = (color)99; /* the default arm: a message */
		res->result_u.message = strdup(arg->str);
		return res->result_u.message != NULL;
	}
	res->which = GREEN;
	res->result_u.value = arg->fixed[0] + (int32_t)arg->dvar.dvar_len;
	return true;
}

bool
basic_name_1_svc(char *const *arg, char **res, rc_svc_req *req)
{
	check_ctx(req);
	if (asprintf(res, "hello, %s", *arg) < 0)
		return false;
	return true;
}

bool
basic_put_1_svc(const handle *arg1, const name *arg2, const int64_t *arg3, rc_svc_req *req)
{
	check_ctx(req);
	put_seen = *arg3 + (*arg1)[15];
	snprintf(put_name, sizeof put_name, "%s", *arg2);
	return true;
}

bool
basic_ping_1_svc(bool *res, rc_svc_req *req)
{
	check_ctx(req);
	*res = true;
	return true;
}

bool
basic_get_2_svc(const flag *arg, scalars *res, rc_svc_req *req)
{
	(void)req;
	res->uh = arg->set ? arg->flag_u.stamp : 0;
	res->col = BLUE;
	return true;
}

bool
lists_reverse_1_svc(const list *arg, list *res, rc_svc_req *req)
{
	(void)req;
	list out = NULL;
	for (const node *p = *arg; p != NULL; p = p->next) {
		node *n = calloc(1, sizeof *n);
		if (n == NULL)
			return false; /* what was built so far is in *res and is freed */
		n->value = p->value;
		n->next = out;
		out = n;
		*res = out;
	}
	*res = out;
	return true;
}

/* ---- the server ----------------------------------------------------------------------- */

static rc_server *srv;
static pthread_t srv_thread;

static void *
serve(void *arg)
{
	(void)arg;
	rc_server_run(srv);
	return NULL;
}

static int
setup(void **state)
{
	(void)state;
	char bound[256];
	if (rc_server_create(&srv) != RC_OK)
		return -1;
	if (basic_prog_1_register(srv, &ctx_tag) != RC_OK ||
	    basic_prog_2_register(srv, NULL) != RC_OK || lists_prog_1_register(srv, NULL) != RC_OK)
		return -1;
	if (rc_server_listen(srv, URI, bound, sizeof bound) != RC_OK)
		return -1;
	return pthread_create(&srv_thread, NULL, serve, NULL) == 0 ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	rc_server_stop(srv);
	pthread_join(srv_thread, NULL);
	rc_server_destroy(srv);
	return 0;
}

static rc_client *
client(uint32_t prog, uint32_t vers)
{
	rc_client *c = NULL;
	assert_int_equal(rc_client_create(&c, URI, prog, vers), RC_OK);
	return c;
}

/* ---- the calls -------------------------------------------------------------------------- */

static void
test_tables(void **state)
{
	(void)state;
	assert_int_equal(basic_prog_1_program.prog, BASIC_PROG);
	assert_int_equal(basic_prog_1_program.vers, BASIC_V1);
	assert_int_equal(basic_prog_1_program.nprocs, 6);
	assert_ptr_equal(basic_prog_1_program.procs[1].info, &basic_add_1_info);
	assert_int_equal(basic_prog_2_program.nprocs, 1);
	assert_ptr_equal(basic_prog_2_program.procs[0].info, &basic_get_2_info);
}

static void
test_void_and_scalars(void **state)
{
	(void)state;
	rc_client *c = client(BASIC_PROG, BASIC_V1);
	assert_int_equal(basic_null_1(c), RC_OK);
	int32_t a = 40, b = 2, sum = 0;
	assert_int_equal(basic_add_1(c, &a, &b, &sum), RC_OK);
	assert_int_equal(sum, 42);
	bool up = false;
	assert_int_equal(basic_ping_1(c, &up), RC_OK);
	assert_true(up);
	rc_client_destroy(c);
	assert_true(ctx_ok);
}

/* The async stub (several arguments) and the multi stub (several clients, void argument). */
static int async_done;
static rc_status async_st;

static void
on_async(rc_async *call, rc_status st, void *udata)
{
	(void)call;
	(void)udata;
	async_done++;
	async_st = st;
}

static int multi_calls;

static bool
on_multi(size_t index, rc_status st, bool *res, void *udata)
{
	(void)udata;
	if (st == RC_OK && *res && index < 3)
		multi_calls++;
	return true;
}

static void
test_async_and_multi_stubs(void **state)
{
	(void)state;
	rc_client *c = client(BASIC_PROG, BASIC_V1);
	rc_async *call = NULL;
	int32_t a = 40, b = 2, sum = 0;
	assert_int_equal(basic_add_1_async(c, &a, &b, &sum, NULL, NULL, &call), RC_OK);
	assert_int_equal(rc_async_wait(call, 5000), RC_OK);
	assert_int_equal(sum, 42);
	rc_async_release(call);
	assert_int_equal(basic_add_1_async(c, &a, &b, &sum, on_async, NULL, NULL), RC_OK);
	assert_int_equal(async_done, 0); /* never inside the start */
	while (async_done == 0)
		rc_client_advance(c, 0);
	assert_int_equal(async_done, 1);
	assert_int_equal(async_st, RC_OK);

	rc_client *cs[3] = {c, client(BASIC_PROG, BASIC_V1), client(BASIC_PROG, BASIC_V1)};
	assert_int_equal(basic_ping_1_multi(cs, 3, on_multi, NULL, 5000), RC_OK);
	assert_int_equal(multi_calls, 3);
	for (int i = 0; i < 3; i++)
		rc_client_destroy(cs[i]);
	assert_true(ctx_ok);
}

/* What the typed multi handlers below saw. */
typedef struct multi_seen {
	int calls;
	int32_t sum;
	bool bad;   /* a result or status that should not have come */
} multi_seen;

static bool
on_add(size_t index, rc_status st, int32_t *res, void *udata)
{
	multi_seen *m = udata;
	if (st != RC_OK || res == NULL || index >= 3)
		m->bad = true;
	else
		m->sum += *res;
	m->calls++;
	return true;
}

static bool
on_get2(size_t index, rc_status st, scalars *res, void *udata)
{
	multi_seen *m = udata;
	if (st != RC_OK || res == NULL || index >= 2 || res->uh != 77 || res->col != BLUE)
		m->bad = true;
	m->calls++;
	return true;
}

static bool
on_null(size_t index, rc_status st, void *res, void *udata)
{
	multi_seen *m = udata;
	if (st != RC_OK || res != NULL || index >= 3)
		m->bad = true;
	m->calls++;
	return true;
}

static bool
on_stop(size_t index, rc_status st, int32_t *res, void *udata)
{
	multi_seen *m = udata;
	(void)index;
	(void)st;
	(void)res;
	m->calls++;
	return false;
}

/* The multi stubs with typed handlers of each shape -- several arguments and a scalar result,
 * a struct result, a void result -- reached through the generated trampolines: the caller's
 * udata arrives, a handler's "stop" ends the call with RC_CANCELLED, a NULL handler is
 * refused. (idlc_multi_fnsan runs this under -fsanitize=function.) */
static void
test_multi_typed_handlers(void **state)
{
	(void)state;
	rc_client *cs[3] = {client(BASIC_PROG, BASIC_V1), client(BASIC_PROG, BASIC_V1),
	                    client(BASIC_PROG, BASIC_V1)};
	int32_t a = 40, b = 2;
	multi_seen m = { 0 };
	assert_int_equal(basic_add_1_multi(cs, 3, &a, &b, on_add, &m, 5000), RC_OK);
	assert_int_equal(m.calls, 3);
	assert_int_equal(m.sum, 126);
	assert_false(m.bad);

	memset(&m, 0, sizeof m);
	assert_int_equal(basic_null_1_multi(cs, 3, on_null, &m, 5000), RC_OK);
	assert_int_equal(m.calls, 3);
	assert_false(m.bad);

	memset(&m, 0, sizeof m);
	assert_int_equal(basic_add_1_multi(cs, 3, &a, &b, on_stop, &m, 5000), RC_CANCELLED);
	assert_int_equal(m.calls, 1);
	assert_int_equal(basic_add_1_multi(cs, 3, &a, &b, NULL, &m, 5000), RC_INVAL);
	assert_int_equal(m.calls, 1);

	rc_client *v2[2] = {client(BASIC_PROG, BASIC_V2), client(BASIC_PROG, BASIC_V2)};
	flag f = { .set = true, .flag_u.stamp = 77 };
	memset(&m, 0, sizeof m);
	assert_int_equal(basic_get_2_multi(v2, 2, &f, on_get2, &m, 5000), RC_OK);
	assert_int_equal(m.calls, 2);
	assert_false(m.bad);

	for (int i = 0; i < 3; i++)
		rc_client_destroy(cs[i]);
	rc_client_destroy(v2[0]);
	rc_client_destroy(v2[1]);
	assert_true(ctx_ok);
}

static void
test_structs_unions_strings(void **state)
{
	(void)state;
	rc_client *c = client(BASIC_PROG, BASIC_V1);
	double dv[3] = { 1, 2, 3 };
	arrays in = { .fixed = { 7 }, .dvar = { 3, dv }, .str = "", .bounded = "" };
	result out = { 0 };
	assert_int_equal(basic_get_1(c, &in, &out), RC_OK);
	assert_int_equal(out.which, GREEN);
	assert_int_equal(out.result_u.value, 10);
	rc_xdr_free((rc_xdrproc)xdr_result, &out);

	in.str = "from the client";
	memset(&out, 0, sizeof out);
	assert_int_equal(basic_get_1(c, &in, &out), RC_OK);
	assert_int_equal(out.which, 99);
	assert_string_equal(out.result_u.message, "from the client");
	rc_xdr_free((rc_xdrproc)xdr_result, &out);

	char *who = "idlc", *greeting = NULL;
	assert_int_equal(basic_name_1(c, &who, &greeting), RC_OK);
	assert_string_equal(greeting, "hello, idlc");
	rc_xdr_free((rc_xdrproc)rc_xdr_wrapstring, &greeting);

	handle h;
	memcpy(h, "0123456789abcdeZ", sizeof h);
	name n = "three args";
	int64_t big = 1ll << 40;
	assert_int_equal(basic_put_1(c, (const handle *)&h, &n, &big), RC_OK);
	assert_true(put_seen == (1ll << 40) + 'Z');
	assert_string_equal(put_name, "three args");
	rc_client_destroy(c);
	assert_true(ctx_ok);
}

static void
test_second_version(void **state)
{
	(void)state;
	rc_client *c = client(BASIC_PROG, BASIC_V2);
	flag f = { .set = true, .flag_u.stamp = 0xfedcba9876543210ull };
	scalars s = { 0 };
	assert_int_equal(basic_get_2(c, &f, &s), RC_OK);
	assert_true(s.uh == 0xfedcba9876543210ull);
	assert_int_equal(s.col, BLUE);
	rc_client_destroy(c);
}

static void
test_list_call(void **state)
{
	(void)state;
	rc_client *c = client(LISTS_PROG, LISTS_V1);
	rc_client_set_timeout(c, 60000);
	enum { N = 100000 };
	list in = NULL;
	for (int i = N - 1; i >= 0; i--) {
		node *p = calloc(1, sizeof *p);
		assert_non_null(p);
		p->value = i;
		p->next = in;
		in = p;
	}
	list out = NULL;
	assert_int_equal(lists_reverse_1(c, &in, &out), RC_OK);
	int i = N - 1;
	for (node *p = out; p != NULL; p = p->next, i--)
		assert_int_equal(p->value, i);
	assert_int_equal(i, -1);
	rc_xdr_free((rc_xdrproc)xdr_list, &out);
	rc_xdr_free((rc_xdrproc)xdr_list, &in);
	rc_client_destroy(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_void_and_scalars),
		cmocka_unit_test(test_async_and_multi_stubs),
		cmocka_unit_test(test_multi_typed_handlers),
		cmocka_unit_test(test_structs_unions_strings),
		cmocka_unit_test(test_second_version),
		cmocka_unit_test(test_list_call),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

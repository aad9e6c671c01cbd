/*
 * test_sunrpc -- <remotecall/sunrpc.h>: Sun's XDR names give the bytes remotecall's give,
 * xdr_long keeps to 32 bits, struct netbuf round-trips, and the CLIENT calls (clntudp_create,
 * clnt_call, clnt_control, clnt_perror and friends) work against a remotecall server and
 * report failures with Sun's statuses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <rpc/rpc.h> /* the compatibility folder's: <remotecall/sunrpc.h> */

#include "../runtime/rt_fixture.h"

/* A Sun-style routine, as rpcgen's %-lines write them. */
struct sample {
	int i;
	u_int u;
	long l;
	char *s;
	bool_t b;
};

static bool_t xdr_sample(XDR *xdrs, struct sample *objp)
{
	if (!xdr_int(xdrs, &objp->i) || !xdr_u_int(xdrs, &objp->u) || !xdr_long(xdrs, &objp->l))
		return (FALSE);
	if (!xdr_string(xdrs, &objp->s, 64) || !xdr_bool(xdrs, &objp->b))
		return (FALSE);
	return (TRUE);
}

static void sun_names_encode_like_remotecall(void **state)
{
	char a[128], b[128];
	XDR x;
	rc_xdr y;
	struct sample s = {-7, 42, 123456, "hello", TRUE};
	int32_t l32 = 123456;
	uint32_t u = 42;
	int32_t i = -7;
	char *str = "hello";
	bool t = true;

	(void)state;
	xdrmem_create(&x, a, sizeof(a), XDR_ENCODE);
	assert_true(xdr_sample(&x, &s));
	rc_xdrmem_create(&y, b, sizeof(b), RC_XDR_ENCODE);
	assert_true(rc_xdr_int(&y, &i) && rc_xdr_u_int(&y, &u) && rc_xdr_int(&y, &l32) &&
	            rc_xdr_string(&y, &str, 64) && rc_xdr_bool(&y, &t));
	assert_int_equal(xdr_getpos(&x), rc_xdr_getpos(&y));
	assert_memory_equal(a, b, rc_xdr_getpos(&y));
	xdr_destroy(&x);

	/* and back, through the Sun names; xdr_free releases the string */
	struct sample d = {0, 0, 0, NULL, FALSE};
	xdrmem_create(&x, a, (u_int)rc_xdr_getpos(&y), XDR_DECODE);
	assert_true(xdr_sample(&x, &d));
	assert_int_equal(d.i, -7);
	assert_int_equal(d.l, 123456);
	assert_string_equal(d.s, "hello");
	assert_true(d.b);
	xdr_free((xdrproc_t)xdr_sample, (char *)&d);
	assert_null(d.s);
}

static void xdr_long_is_32_bits(void **state)
{
	char buf[8];
	XDR x;
	long big = 1L << 40, neg = -5, back = 0;
	unsigned long ubig = 1UL << 33;

	(void)state;
	xdrmem_create(&x, buf, sizeof(buf), XDR_ENCODE);
	assert_false(xdr_long(&x, &big));     /* would be truncated: refused */
	assert_false(xdr_u_long(&x, &ubig));
	assert_true(xdr_long(&x, &neg));
	assert_int_equal(xdr_getpos(&x), 4); /* 4 bytes on the wire */
	xdrmem_create(&x, buf, 4, XDR_DECODE);
	assert_true(xdr_long(&x, &back));
	assert_int_equal(back, -5);
}

static void netbuf_round_trip(void **state)
{
	char wire[64], addr[] = "0123456789";
	struct netbuf in = {16, 10, addr}, out = {0, 0, NULL};
	XDR x;

	(void)state;
	xdrmem_create(&x, wire, sizeof(wire), XDR_ENCODE);
	assert_true(xdr_netbuf(&x, &in));
	assert_int_equal(xdr_getpos(&x), 4 + 4 + 12); /* maxlen, len, 10 bytes padded */
	xdrmem_create(&x, wire, (u_int)xdr_getpos(&x), XDR_DECODE);
	assert_true(xdr_netbuf(&x, &out));
	assert_int_equal(out.maxlen, 16);
	assert_int_equal(out.len, 10);
	assert_memory_equal(out.buf, addr, 10);
	xdr_free((xdrproc_t)xdr_netbuf, (char *)&out);
	assert_null(out.buf);
}

/* An AUTH_SYS body through Sun's struct authunix_parms gives the bytes the server parses, and
 * netobj round-trips. */
static void authunix_parms_and_netobj(void **state)
{
	char buf[256];
	u_int gids[2] = {10, 20};
	struct authunix_parms in = {77, "box", 1000, 100, 2, gids}, out;
	netobj n = {3, "abc"}, m = {0, NULL};
	XDR x;

	(void)state;
	memset(&out, 0, sizeof(out));
	xdrmem_create(&x, buf, sizeof(buf), XDR_ENCODE);
	assert_true(xdr_authunix_parms(&x, &in));
	assert_int_equal(xdr_getpos(&x), 4 + 4 + 4 + 4 + 4 + 4 + 8); /* "box" padded to 4 */
	assert_true(xdr_netobj(&x, &n));
	xdrmem_create(&x, buf, sizeof(buf), XDR_DECODE);
	assert_true(xdr_authunix_parms(&x, &out));
	assert_int_equal(out.aup_time, 77);
	assert_string_equal(out.aup_machname, "box");
	assert_int_equal(out.aup_uid, 1000);
	assert_int_equal(out.aup_len, 2);
	assert_int_equal(out.aup_gids[1], 20);
	assert_true(xdr_netobj(&x, &m));
	assert_int_equal(m.n_len, 3);
	assert_memory_equal(m.n_bytes, "abc", 3);
	xdr_free((xdrproc_t)xdr_authunix_parms, (char *)&out);
	xdr_free((xdrproc_t)xdr_netobj, (char *)&m);
	assert_null(out.aup_machname);
	/* 17 gids: over AUTH_SYS's 16 */
	u_int many[17] = {0};
	struct authunix_parms big = {1, "h", 0, 0, 17, many};
	xdrmem_create(&x, buf, sizeof(buf), XDR_ENCODE);
	assert_false(xdr_authunix_parms(&x, &big));
}

/* XDR_INLINE (rpcgen's fast path stores and loads int32_t through it): a pointer at an aligned
 * position, NULL at a misaligned one -- the caller then codes field by field. */
static void xdr_inline_is_aligned(void **state)
{
	_Alignas(16) unsigned char buf[64];
	int32_t *p;
	XDR x;

	(void)state;
	xdrmem_create(&x, (char *)buf, sizeof(buf), XDR_ENCODE);
	p = XDR_INLINE(&x, 8);
	assert_ptr_equal(p, buf);
	IXDR_PUT_INT32(p, 7);
	assert_int_equal(buf[3], 7);
	xdrmem_create(&x, (char *)buf + 1, sizeof(buf) - 1, XDR_ENCODE);
	assert_null(XDR_INLINE(&x, 8));
	assert_int_equal(xdr_getpos(&x), 0); /* nothing taken */
	xdrmem_create(&x, (char *)buf + 2, sizeof(buf) - 2, XDR_DECODE);
	assert_null(XDR_INLINE(&x, 4));
}

static void statuses_map_to_sun_values(void **state)
{
	(void)state;
	assert_int_equal(rc_sunrpc_stat(RC_OK), RPC_SUCCESS);
	assert_int_equal(rc_sunrpc_stat(RC_TIMEDOUT), 5);
	assert_int_equal(rc_sunrpc_stat(RC_PROCUNAVAIL), 10);
	assert_int_equal(rc_sunrpc_stat(RC_PROGNOTREGISTERED), 15);
	assert_int_equal(rc_sunrpc_stat(RC_PMAPFAILURE), RPC_PMAPFAILURE);
	assert_int_equal(rc_sunrpc_stat(RC_CLOSED), RPC_CANTRECV);
	assert_int_equal(rc_sunrpc_stat(RC_CANCELLED), RPC_FAILED);
	/* libtirpc's words */
	assert_string_equal(clnt_sperrno(RPC_TIMEDOUT), "RPC: Timed out");
	assert_string_equal(clnt_sperrno(RPC_PROCUNAVAIL), "RPC: Procedure unavailable");
	assert_string_equal(clnt_sperrno(RPC_PROGNOTREGISTERED), "RPC: Program not registered");
	assert_string_equal(clnt_sperrno(RPC_PMAPFAILURE), "RPC: Port mapper failure");
}

static void create_errors(void **state)
{
	(void)state;
	assert_null(clnt_create("127.0.0.1", RT_PROG, 1, "carrier-pigeon"));
	assert_string_equal(clnt_spcreateerror("here"), "here: RPC: Unknown protocol");
	assert_int_equal(rpc_createerr.cf_stat, RPC_UNKNOWNPROTO);
	assert_null(clnt_create("no-such-host.invalid", RT_PROG, 1, "udp"));
	assert_int_equal(rpc_createerr.cf_stat, RPC_UNKNOWNHOST);
	assert_string_equal(clnt_spcreateerror("x"), "x: RPC: Unknown host");
	/* the nettypes are known (the host is not) */
	const char *const types[] = {"udp6", "tcp6", "netpath", "visible", "circuit_v",
	                             "datagram_v", "circuit_n", "datagram_n"};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		assert_null(clnt_create("no-such-host.invalid", RT_PROG, 1, types[i]));
		assert_int_equal(rpc_createerr.cf_stat, RPC_UNKNOWNHOST);
	}
	/* a port that refuses: the rpcbind look-up's failure in libtirpc's form */
	struct sockaddr_in a;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(9);
	int sock = RPC_ANYSOCK;
	assert_null(clnttcp_create(&a, RT_PROG, 1, &sock, 0, 0));
	assert_int_not_equal(rpc_createerr.cf_stat, RPC_SUCCESS);
	assert_non_null(strstr(clnt_spcreateerror("y"), "y: RPC: "));
}

/* The server's port, from its bound URI. */
static struct sockaddr_in addr_of(const char *uri)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)atoi(strrchr(uri, ':') + 1));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static void clnt_calls_a_remotecall_server(void **state)
{
	const char *const uris[] = {"udp://127.0.0.1:0", "tcp://127.0.0.1:0", NULL};
	struct timeval tmo = {5, 0}, got = {0, 0}, rt = {0, 300000};
	rt_server s;
	int sock = RPC_ANYSOCK;

	(void)state;
	assert_int_equal(rt_start(&s, uris, 1), 0);
	for (int k = 0; k < 2; k++) {
		struct sockaddr_in a = addr_of(s.uri[k]);
		CLIENT *c = k == 0 ? clntudp_create(&a, RT_PROG, 1, rt, &sock)
		                   : clnttcp_create(&a, RT_PROG, 1, &sock, 0, 0);
		int64_t in = 5, out = 0;
		char *err;

		assert_non_null(c);
		assert_int_equal(sock, -1);
		assert_int_equal(clnt_call(c, 0, xdr_void, NULL, xdr_void, NULL, tmo), RPC_SUCCESS);
		assert_int_equal(clnt_call(c, 2, xdr_hyper, &in, xdr_hyper, &out, tmo), RPC_SUCCESS);
		assert_true(out >= 5);
		/* a procedure the program does not have: Sun's status, and the words for it */
		assert_int_equal(clnt_call(c, 99, xdr_void, NULL, xdr_void, NULL, tmo),
		                 RPC_PROCUNAVAIL);
		err = clnt_sperror(c, "call");
		assert_string_equal(err, "call: RPC: Procedure unavailable");
		struct rpc_err re;
		clnt_geterr(c, &re);
		assert_int_equal(re.re_status, RPC_PROCUNAVAIL);
		/* a version the server does not have: libtirpc's detail */
		CLIENT *c2 = k == 0 ? clntudp_create(&a, RT_PROG, 7, rt, &sock)
		                    : clnttcp_create(&a, RT_PROG, 7, &sock, 0, 0);
		assert_non_null(c2);
		assert_int_equal(clnt_call(c2, 0, xdr_void, NULL, xdr_void, NULL, tmo),
		                 RPC_PROGVERSMISMATCH);
		assert_string_equal(clnt_sperror(c2, "v7"), "v7: RPC: Program/version mismatch; "
		                                             "low version = 1, high version = 2");
		clnt_geterr(c2, &re);
		assert_int_equal(re.re_vers.low, 1);
		assert_int_equal(re.re_vers.high, 2);
		clnt_destroy(c2);
		/* timeouts through clnt_control */
		assert_true(clnt_control(c, CLGET_TIMEOUT, &got));
		assert_int_equal(got.tv_sec, 5); /* clnt_call's timeout became the client's */
		struct timeval two = {2, 500000};
		assert_true(clnt_control(c, CLSET_TIMEOUT, &two));
		assert_true(clnt_control(c, CLGET_TIMEOUT, &got));
		assert_int_equal(got.tv_sec, 2);
		assert_int_equal(got.tv_usec, 500000);
		assert_false(clnt_control(c, 99, &got));
		clnt_destroy(c);
	}
	rt_stop(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sun_names_encode_like_remotecall),
		cmocka_unit_test(xdr_long_is_32_bits),
		cmocka_unit_test(netbuf_round_trip),
		cmocka_unit_test(authunix_parms_and_netobj),
		cmocka_unit_test(xdr_inline_is_aligned),
		cmocka_unit_test(statuses_map_to_sun_values),
		cmocka_unit_test(create_errors),
		cmocka_unit_test(clnt_calls_a_remotecall_server),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_sunrpc_svc -- the Sun server API of <remotecall/sunrpc.h> (runtime/sunrpc_svc.c) on
 * remotecall, without rpcbind (svc_register's protocol 0): a dispatch function answers through
 * svc_getargs / svc_sendreply / svcerr_* and sees Sun's svc_req fields; remotecall clients
 * over UDP and TCP get each reply as the right rc_status; svc_getcaller, svc_exit, and the
 * application's own select loop over svc_fdset / svc_getreqset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <sys/select.h>
#include <unistd.h>

#include <rpc/rpc.h> /* the compatibility folder's: <remotecall/sunrpc.h> */

#define PROG 0x20000177u

static SVCXPRT *udp, *tcp;

/* The dispatch function of (PROG, 1): one behaviour a procedure. */
static void dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	int v = 0;
	u_int fam;
	const struct authunix_parms *au;

	switch (rq->rq_proc) {
	case NULLPROC:
		svc_sendreply(xprt, (xdrproc_t)xdr_void, NULL);
		break;
	case 1: /* v + 1 */
		if (!svc_getargs(xprt, (xdrproc_t)xdr_int, (caddr_t)&v)) {
			svcerr_decode(xprt);
			break;
		}
		v++;
		svc_sendreply(xprt, (xdrproc_t)xdr_int, (caddr_t)&v);
		svc_freeargs(xprt, (xdrproc_t)xdr_int, (caddr_t)&v);
		break;
	case 2:
		svcerr_progvers(xprt, 3, 5);
		break;
	case 3:
		svcerr_auth(xprt, AUTH_BADCRED);
		break;
	case 4:
		svcerr_systemerr(xprt);
		break;
	case 5: /* the caller's address family (0 on a stream) */
		fam = svc_getcaller(xprt)->sin_family;
		svc_sendreply(xprt, (xdrproc_t)xdr_u_int, (caddr_t)&fam);
		break;
	case 6: /* Sun's request fields: prog + vers + proc, or the AUTH_SYS uid */
		au = rq->rq_clntcred;
		v = rq->rq_cred.oa_flavor == AUTH_SYS && au != NULL ? (int)au->aup_uid
		                                                  : (int)(rq->rq_prog + rq->rq_vers +
		                                                          rq->rq_proc);
		if (rq->rq_xprt != xprt || xprt->xp_port != (rq->rq_xprt == udp ? udp : tcp)->xp_port)
			v = -1; /* rq_xprt is the transport handed to the dispatch function */
		svc_sendreply(xprt, (xdrproc_t)xdr_int, (caddr_t)&v);
		break;
	case 7: /* no reply */
		break;
	default:
		svcerr_noproc(xprt);
		break;
	}
}

/* Another dispatch function (a second registration of (PROG, 1) must name the first). */
static void other(struct svc_req *rq, SVCXPRT *xprt)
{
	(void)rq;
	svcerr_noprog(xprt);
}

/* svc_run on a thread. */
static void *runner(void *arg)
{
	(void)arg;
	svc_run();
	return NULL;
}

/* A remotecall client of (PROG, vers) at the transport's port. */
static rc_client *client_of(const char *scheme, SVCXPRT *x, uint32_t vers)
{
	char uri[64];
	rc_client *c = NULL;

	snprintf(uri, sizeof(uri), "%s://127.0.0.1:%u", scheme, (unsigned)x->xp_port);
	assert_int_equal(rc_client_create(&c, uri, PROG, vers), RC_OK);
	rc_client_set_timeout(c, 3000);
	return c;
}

static void registration(void **state)
{
	(void)state;
	/* outside a dispatch there is no call to answer */
	assert_false(svc_sendreply(NULL, (xdrproc_t)xdr_void, NULL));
	assert_false(svc_getargs(NULL, (xdrproc_t)xdr_void, NULL));
	assert_null(svcudp_create(5)); /* not RPC_ANYSOCK */
	udp = svcudp_create(RPC_ANYSOCK);
	tcp = svctcp_create(RPC_ANYSOCK, 0, 0);
	assert_non_null(udp);
	assert_non_null(tcp);
	assert_int_equal(udp->xp_sock, -1);
	assert_true(udp->xp_port > 0 && tcp->xp_port > 0);
	assert_true(svc_register(udp, PROG, 1, dispatch, 0));
	assert_true(svc_register(tcp, PROG, 1, dispatch, 0));
	assert_false(svc_register(tcp, PROG, 1, other, 0));
	assert_true(svc_register(tcp, PROG, 9, other, 0));
	svc_unregister(PROG, 9);
	assert_non_null(getnetconfigent("tcp6"));
	assert_null(getnetconfigent("carrier-pigeon"));
}

/* What procedure 6 answers clnt_call (a Sun stub's call) with. */
static int uid_seen(CLIENT *c)
{
	struct timeval tmo = {5, 0};
	int out = -1;

	assert_int_equal(clnt_call(c, 6, (xdrproc_t)xdr_void, NULL, (xdrproc_t)xdr_int,
	                           (caddr_t)&out, tmo),
	                 RPC_SUCCESS);
	return out;
}

/* Sun's credentials: an AUTH in clnt->cl_auth is what clnt_call sends from then on (the
 * dispatch function's procedure 6 answers the AUTH_SYS uid, else PROG + 1 + 6). */
static void sun_credentials(CLIENT *c)
{
	int gids[20];
	AUTH *a;

	for (int i = 0; i < 20; i++)
		gids[i] = 100 + i;
	a = authsys_create("there", 777, 8, 20, gids);
	assert_non_null(a);
	assert_int_equal(a->ah_cred.oa_flavor, AUTH_SYS);
	/* stamp, "there" (4 + 8), uid, gid, 16 gids (at most 16 are sent) */
	assert_int_equal(a->ah_cred.oa_length, 4 + 12 + 4 + 4 + 4 + 16 * 4);
	c->cl_auth = a;
	assert_int_equal(uid_seen(c), 777);
	/* a replacement -- maybe at the same address -- is sent too */
	auth_destroy(a);
	a = authunix_create("there", 778, 8, 0, NULL);
	c->cl_auth = a;
	assert_int_equal(uid_seen(c), 778);
	auth_destroy(a);
	c->cl_auth = authnone_create();
	assert_int_equal(uid_seen(c), (int)(PROG + 1 + 6));
	auth_destroy(c->cl_auth); /* the shared AUTH_NONE: left alone */
	a = authsys_create_default();
	assert_non_null(a);
	c->cl_auth = a;
	assert_int_equal(uid_seen(c), (int)geteuid());
	auth_destroy(a);
	c->cl_auth = NULL; /* a native client's: its credentials stay as they are */
	assert_null(authsys_create(NULL, 1, 1, 0, NULL));
	assert_null(authsys_create("x", 1, 1, -1, NULL));
}

static void calls_over_udp_and_tcp(void **state)
{
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, runner, NULL), 0);
	for (int k = 0; k < 2; k++) {
		rc_client *c = client_of(k ? "tcp" : "udp", k ? tcp : udp, 1);
		rc_error e;
		int32_t in = 41, out = 0;
		uint32_t fam = 99;

		assert_int_equal(rc_call(c, 0, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void,
		                         NULL),
		                 RC_OK);
		assert_int_equal(rc_call(c, 1, (rc_xdrproc)rc_xdr_int, &in, (rc_xdrproc)rc_xdr_int,
		                         &out),
		                 RC_OK);
		assert_int_equal(out, 42);
		/* no argument where an int is expected: svc_getargs fails, svcerr_decode */
		assert_int_equal(rc_call(c, 1, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_int,
		                         &out),
		                 RC_CANTDECODEARGS);
		assert_int_equal(rc_call(c, 2, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void,
		                         NULL),
		                 RC_PROGVERSMISMATCH);
		rc_client_geterr(c, &e);
		assert_int_equal(e.low, 3);
		assert_int_equal(e.high, 5);
		assert_int_equal(rc_call(c, 3, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void,
		                         NULL),
		                 RC_AUTHERROR);
		rc_client_geterr(c, &e);
		assert_int_equal(e.auth_stat, AUTH_BADCRED);
		assert_int_equal(rc_call(c, 4, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void,
		                         NULL),
		                 RC_SYSTEMERROR);
		assert_int_equal(rc_call(c, 5, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_u_int,
		                         &fam),
		                 RC_OK);
		assert_int_equal(fam, k ? 0 : AF_INET);
		assert_int_equal(rc_call(c, 6, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_int,
		                         &out),
		                 RC_OK);
		assert_int_equal(out, (int32_t)(PROG + 1 + 6));
		assert_int_equal(rc_client_set_auth_sys(c, "here", 4321, 7, NULL, 0), RC_OK);
		assert_int_equal(rc_call(c, 6, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_int,
		                         &out),
		                 RC_OK);
		assert_int_equal(out, 4321);
		sun_credentials(c);
		assert_int_equal(rc_call(c, 99, (rc_xdrproc)rc_xdr_void, NULL,
		                         (rc_xdrproc)rc_xdr_void, NULL),
		                 RC_PROCUNAVAIL);
		rc_client_set_timeout(c, 300);
		assert_int_equal(rc_call(c, 7, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void,
		                         NULL),
		                 RC_TIMEDOUT);
		rc_client_destroy(c);
		/* a version not registered: the server's own reply, with the range */
		c = client_of(k ? "tcp" : "udp", k ? tcp : udp, 2);
		assert_int_equal(rc_call(c, 0, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void,
		                         NULL),
		                 RC_PROGVERSMISMATCH);
		rc_client_destroy(c);
	}
	svc_exit();
	assert_int_equal(pthread_join(t, NULL), 0);
}

/* A client call from another thread, for the select loop. */
static void *one_call(void *arg)
{
	int32_t in = 1, out = 0;
	rc_client *c = client_of("udp", udp, 1);

	rc_status st = rc_call(c, 1, (rc_xdrproc)rc_xdr_int, &in, (rc_xdrproc)rc_xdr_int, &out);

	atomic_store((atomic_int *)arg, st == RC_OK && out != 2 ? RC_FAILED : st);
	rc_client_destroy(c);
	return NULL;
}

static void own_select_loop(void **state)
{
	pthread_t t;
	atomic_int st = RC_INPROGRESS; /* written by one_call's thread (atomic: ThreadSanitizer) */

	(void)state;
	assert_true(svc_maxfd >= 0);
	assert_int_equal(pthread_create(&t, NULL, one_call, (void *)&st), 0);
	for (int i = 0; i < 200 && atomic_load(&st) == RC_INPROGRESS; i++) {
		fd_set r = svc_fdset;
		struct timeval tv = {0, 20000};
		if (select(svc_maxfd + 1, &r, NULL, NULL, &tv) > 0)
			svc_getreqset(&r);
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(atomic_load(&st), RC_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(registration),
		cmocka_unit_test(own_select_loop), /* before svc_run: svc_exit ends the server */
		cmocka_unit_test(calls_over_udp_and_tcp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_sunrpc_svc -- the Sun server API of <remotecall/sunrpc.h> (runtime/sun/sunrpc_svc.c) on
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
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/rpc.h> /* the compatibility folder's: <remotecall/sunrpc.h> */

#define PROG 0x20000177u

static SVCXPRT *udp, *tcp;
/* Made from sockets of the test's: a UDP socket, a TCP socket bound but not listening, and
 * one end of a unix socket pair (svcfd_create); the test speaks raw RPC on the other end. */
static SVCXPRT *own_udp, *own_tcp, *own_fd;
static int pair[2] = {-1, -1};

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
	case 5: /* the caller's address family (svc_getcaller) */
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

/* svcudp_create / svctcp_create / svcfd_create on the caller's sockets; svc_destroy closes. */
static void sockets_of_the_callers(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int us = socket(AF_INET, SOCK_DGRAM, 0), ts = socket(AF_INET, SOCK_STREAM, 0), b;
	SVCXPRT *x;
	u_short port;

	assert_true(us >= 0 && ts >= 0);
	assert_null(svcudp_create(ts)); /* a stream socket: refused, still ours */
	assert_null(svctcp_create(us, 0, 0));
	assert_null(svcfd_create(-1, 0, 0));
	assert_int_equal(bind(ts, (struct sockaddr *)&a, sizeof(a)), 0);
	own_udp = svcudp_create(us); /* not bound: bound to any port */
	own_tcp = svctcp_create(ts, 0, 0); /* bound, not listening: put in listen() */
	assert_non_null(own_udp);
	assert_non_null(own_tcp);
	assert_int_equal(own_udp->xp_sock, us);
	assert_int_equal(own_tcp->xp_sock, ts);
	assert_true(own_udp->xp_port > 0 && own_tcp->xp_port > 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
	own_fd = svcfd_create(pair[0], 0, 0);
	assert_non_null(own_fd);
	assert_int_equal(own_fd->xp_sock, pair[0]);
	assert_string_equal(own_fd->xp_netid, "unix");
	assert_true(svc_register(own_udp, PROG, 1, dispatch, 0));
	assert_true(svc_register(own_tcp, PROG, 1, dispatch, 0));
	assert_true(svc_register(own_fd, PROG, 1, dispatch, 0));
	/* svc_destroy closes the listener: its port can be bound again */
	x = svcudp_create(RPC_ANYSOCK);
	assert_non_null(x);
	port = x->xp_port;
	svc_destroy(x);
	a.sin_addr.s_addr = htonl(INADDR_ANY);
	a.sin_port = htons(port);
	b = socket(AF_INET, SOCK_DGRAM, 0);
	assert_int_equal(bind(b, (struct sockaddr *)&a, sizeof(a)), 0);
	close(b);
}

/* One call (PROG, 1, proc) in raw RPC on a connected stream fd: arg NULL for none. The
 * accept_stat, and the 4-byte result in *res. */
static uint32_t raw_call(int fd, uint32_t proc, const int32_t *arg, uint32_t *res)
{
	uint32_t m[12] = {0, htonl(77), 0, htonl(2), htonl(PROG), htonl(1), htonl(proc)};
	unsigned char r[32];
	size_t n = arg ? 12 : 11, got = 0;

	m[0] = htonl(0x80000000u | (uint32_t)((n - 1) * 4));
	if (arg)
		m[11] = htonl((uint32_t)*arg);
	assert_int_equal(write(fd, m, n * 4), (ssize_t)(n * 4));
	while (got < sizeof(r)) { /* mark, xid, REPLY, ACCEPTED, verifier, accept_stat, result */
		ssize_t k = read(fd, r + got, sizeof(r) - got);
		assert_true(k > 0);
		got += (size_t)k;
	}
	memcpy(res, r + 28, 4);
	*res = ntohl(*res);
	memcpy(m, r + 24, 4);
	return ntohl(m[0]);
}

static void registration(void **state)
{
	(void)state;
	/* outside a dispatch there is no call to answer */
	assert_false(svc_sendreply(NULL, (xdrproc_t)xdr_void, NULL));
	assert_false(svc_getargs(NULL, (xdrproc_t)xdr_void, NULL));
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
	sockets_of_the_callers(); /* after udp and tcp: rq_xprt is the first of a kind */
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

/* The transports made from the test's sockets serve like the others. */
static void callers_sockets_serve(void)
{
	int32_t in = 41, out = 0;
	uint32_t res = 0;
	rc_client *c;

	for (int k = 0; k < 2; k++) {
		c = client_of(k ? "tcp" : "udp", k ? own_tcp : own_udp, 1);
		assert_int_equal(rc_call(c, 1, (rc_xdrproc)rc_xdr_int, &in, (rc_xdrproc)rc_xdr_int,
		                         &out),
		                 RC_OK);
		assert_int_equal(out, 42);
		rc_client_destroy(c);
	}
	assert_int_equal(raw_call(pair[1], 1, &in, &res), 0); /* SUCCESS */
	assert_int_equal(res, 42);
	assert_int_equal(raw_call(pair[1], 5, NULL, &res), 0);
	assert_int_equal(res, AF_UNIX); /* svc_getcaller on a unix connection */
	close(pair[1]);
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
		assert_int_equal(fam, AF_INET); /* the datagram's sender, the connection's peer */
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
	callers_sockets_serve();
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

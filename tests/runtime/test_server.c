/* The server against hand-made messages over real sockets: protocol replies, authentication,
 * the duplicate request cache, worker threads, IPv6, the application's own loop, stopping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <errno.h>

#include "rt_fixture.h"
#include "tests/transports/offload.h"

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v;
}
static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A socket of type (SOCK_DGRAM, SOCK_STREAM) connected to a server's 127.0.0.1 URI, with a
 * 1 s receive timeout. */
static int sock_to(const char *uri, int type)
{
	int port = atoi(strrchr(uri, ':') + 1), fd = socket(AF_INET, type, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct timeval tv = {1, 0};
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static int udp_to(const char *uri)
{
	return sock_to(uri, SOCK_DGRAM);
}

/* Build a call: xid, CALL, rpcvers, prog, vers, proc, cred (flavor, body), AUTH_NONE verf,
 * then args. Returns its length. */
static size_t mkcall(unsigned char *b, uint32_t xid, uint32_t rpcvers, uint32_t prog,
                     uint32_t vers, uint32_t proc, uint32_t flavor, const void *cred,
                     uint32_t credlen, const void *args, size_t arglen)
{
	size_t n = 0;
	put32(b + n, xid); n += 4;
	put32(b + n, 0); n += 4;
	put32(b + n, rpcvers); n += 4;
	put32(b + n, prog); n += 4;
	put32(b + n, vers); n += 4;
	put32(b + n, proc); n += 4;
	put32(b + n, flavor); n += 4;
	put32(b + n, credlen); n += 4;
	if (credlen)
		memcpy(b + n, cred, credlen);
	n += (credlen + 3) & ~3u;
	put32(b + n, 0); n += 4;
	put32(b + n, 0); n += 4;
	if (arglen)
		memcpy(b + n, args, arglen);
	n += arglen;
	return n;
}

/* Send and receive one datagram; returns the reply length or -1 (no reply within 1 s). */
static ssize_t exchange(int fd, const void *msg, size_t len, unsigned char *rep, size_t cap)
{
	assert_int_equal(send(fd, msg, len, 0), (ssize_t)len);
	return recv(fd, rep, cap, 0);
}

static const char *const uris[] = {"udp://127.0.0.1:0", "tcp://127.0.0.1:0", NULL};
static rt_server S;

static int setup(void **st) { (void)st; return rt_start(&S, uris, 1); }
static int teardown(void **st) { (void)st; rt_stop(&S); return 0; }

static void rpc_version_3_gets_rpc_mismatch(void **state)
{
	unsigned char m[256], r[256];
	int fd = udp_to(S.uri[0]);
	(void)state;
	ssize_t n = exchange(fd, m, mkcall(m, 77, 3, RT_PROG, 1, 0, 0, NULL, 0, NULL, 0), r, sizeof(r));
	assert_int_equal(n, 24);
	assert_int_equal(get32(r), 77);
	assert_int_equal(get32(r + 4), 1);  /* REPLY */
	assert_int_equal(get32(r + 8), 1);  /* MSG_DENIED */
	assert_int_equal(get32(r + 12), 0); /* RPC_MISMATCH */
	assert_int_equal(get32(r + 16), 2); /* low */
	assert_int_equal(get32(r + 20), 2); /* high */
	close(fd);
}

static void replies_and_junk_are_dropped(void **state)
{
	unsigned char m[256], r[256];
	int fd = udp_to(S.uri[0]);
	(void)state;
	mkcall(m, 5, 2, RT_PROG, 1, 0, 0, NULL, 0, NULL, 0);
	put32(m + 4, 1); /* a REPLY sent to the server */
	assert_int_equal(exchange(fd, m, 40, r, sizeof(r)), -1);
	put32(m + 4, 9); /* an unknown message type */
	assert_int_equal(exchange(fd, m, 40, r, sizeof(r)), -1);
	assert_int_equal(exchange(fd, m, 3, r, sizeof(r)), -1); /* 3 bytes */
	/* the server still answers a null call */
	assert_int_equal(exchange(fd, m, mkcall(m, 6, 2, RT_PROG, 1, 0, 0, NULL, 0, NULL, 0), r, sizeof(r)), 24);
	assert_int_equal(get32(r + 20), 0); /* SUCCESS */
	close(fd);
}

static void malformed_auth_sys_is_badcred(void **state)
{
	unsigned char m[1024], r[256], body[600];
	int fd = udp_to(S.uri[0]);
	(void)state;
	/* bodies of 0..19 bytes */
	memset(body, 0, sizeof(body));
	for (uint32_t k = 0; k < 20; k += 4) {
		ssize_t n = exchange(fd, m, mkcall(m, 100 + k, 2, RT_PROG, 1, 0, 1, body, k, NULL, 0), r, sizeof(r));
		assert_int_equal(n, 20);
		assert_int_equal(get32(r + 8), 1);  /* MSG_DENIED */
		assert_int_equal(get32(r + 12), 1); /* AUTH_ERROR */
		assert_int_equal(get32(r + 16), 1); /* AUTH_BADCRED */
	}
	/* machine name longer than the body */
	put32(body + 4, 200);
	assert_int_equal(exchange(fd, m, mkcall(m, 200, 2, RT_PROG, 1, 0, 1, body, 20, NULL, 0), r, sizeof(r)), 20);
	assert_int_equal(get32(r + 16), 1);
	/* 17 gids */
	memset(body, 0, sizeof(body));
	put32(body + 4, 0);           /* empty machine name */
	put32(body + 16, 17);         /* gid count */
	assert_int_equal(exchange(fd, m, mkcall(m, 201, 2, RT_PROG, 1, 0, 1, body, 20 + 17 * 4, NULL, 0), r, sizeof(r)), 20);
	assert_int_equal(get32(r + 16), 1);
	/* credentials over 400 bytes */
	assert_int_equal(exchange(fd, m, mkcall(m, 202, 2, RT_PROG, 1, 0, 1, body, 404, NULL, 0), r, sizeof(r)), 20);
	assert_int_equal(get32(r + 16), 1);
	/* an unknown flavor is rejected */
	assert_int_equal(exchange(fd, m, mkcall(m, 203, 2, RT_PROG, 1, 0, 99, NULL, 0, NULL, 0), r, sizeof(r)), 20);
	assert_int_equal(get32(r + 16), 2); /* AUTH_REJECTEDCRED */
	/* a well-formed AUTH_SYS with 16 gids is accepted */
	put32(body + 16, 16);
	assert_int_equal(exchange(fd, m, mkcall(m, 204, 2, RT_PROG, 1, 0, 1, body, 20 + 16 * 4, NULL, 0), r, sizeof(r)), 24);
	assert_int_equal(get32(r + 20), 0);
	close(fd);
}

static void trailing_and_truncated_args_are_garbage(void **state)
{
	unsigned char m[256], r[256], a[12] = {0, 0, 0, 0, 0, 0, 0, 1, 9, 9, 9, 9};
	int fd = udp_to(S.uri[0]);
	(void)state;
	/* ADD takes a hyper: 12 bytes is trailing garbage, 0..7 bytes truncated */
	for (size_t k = 0; k <= 12; k += (k == 7 ? 5 : 1)) {
		ssize_t n = exchange(fd, m, mkcall(m, 300 + k, 2, RT_PROG, 1, 2, 0, NULL, 0, a, k), r, sizeof(r));
		assert_int_equal(n, 24);
		assert_int_equal(get32(r + 20), 4); /* GARBAGE_ARGS */
	}
	close(fd);
}

static void retransmission_runs_once(void **state)
{
	unsigned char m[256], r1[256], r2[256], a[8] = {0, 0, 0, 0, 0, 0, 0, 5};
	int fd = udp_to(S.uri[0]);
	int64_t before = rt_total_now();
	size_t len = mkcall(m, 4242, 2, RT_PROG, 1, 2, 0, NULL, 0, a, 8);
	(void)state;
	ssize_t n1 = exchange(fd, m, len, r1, sizeof(r1));
	ssize_t n2 = exchange(fd, m, len, r2, sizeof(r2)); /* same xid: a retransmission */
	assert_int_equal(n1, 32);
	assert_int_equal(n2, 32);
	assert_memory_equal(r1, r2, 32);
	assert_int_equal(rt_total_now() - before, 5); /* executed once */
	/* a new xid runs again */
	put32(m, 4243);
	assert_int_equal(exchange(fd, m, len, r2, sizeof(r2)), 32);
	assert_int_equal(rt_total_now() - before, 10);
	close(fd);
}

/*
 * At most once does not depend on load: a retransmission that comes after 3,000 other calls
 * (the old cache recycled its 1,024 entries oldest first and ran it again) still gets the
 * first reply, and ADD does not run twice.
 */
static void retransmission_after_many_calls_runs_once(void **state)
{
	unsigned char m[256], r1[256], r2[256], a[8] = {0, 0, 0, 0, 0, 0, 0, 7};
	int fd = udp_to(S.uri[0]);
	int64_t before = rt_total_now();
	size_t len = mkcall(m, 900000, 2, RT_PROG, 1, 2, 0, NULL, 0, a, 8);
	rc_server_stats st0, st1;
	(void)state;
	assert_int_equal(rc_server_get_stats(S.srv, &st0), RC_OK);
	assert_int_equal(exchange(fd, m, len, r1, sizeof(r1)), 32);
	a[7] = 1;
	for (uint32_t i = 1; i <= 3000; i++) {
		unsigned char o[256], r[256];
		size_t ol = mkcall(o, 900000 + i, 2, RT_PROG, 1, 2, 0, NULL, 0, a, 8);
		assert_int_equal(exchange(fd, o, ol, r, sizeof(r)), 32);
	}
	assert_int_equal(rt_total_now() - before, 7 + 3000);
	assert_int_equal(exchange(fd, m, len, r2, sizeof(r2)), 32); /* the late retransmission */
	assert_memory_equal(r1, r2, 32);
	assert_int_equal(rt_total_now() - before, 7 + 3000); /* not run again */
	assert_int_equal(rc_server_get_stats(S.srv, &st1), RC_OK);
	assert_int_equal(st1.drc_replayed - st0.drc_replayed, 1);
	assert_true(st1.drc_entries >= 3001);
	assert_int_equal(st1.drc_refused, 0);
	close(fd);
}

/*
 * A cache bounded at 64 KiB: when the calls within their TTL fill it, the oldest are compacted
 * (remembered without their replies) and then a new call is refused -- dropped unrun, counted
 * in drc_refused -- rather than an old one forgotten. The newest admitted calls are answered
 * from the cache, the oldest get no answer; none runs again. Once their TTL (3 s) has passed,
 * new calls run.
 */
static void full_cache_refuses_new_calls(void **state)
{
	static const char *const u[] = {"udp://127.0.0.1:0", NULL};
	rc_server_limits lim = {.drc_bytes = 64 << 10, .drc_ttl_ms = 3000};
	rt_server s2;
	unsigned char m[256], r[256], a[8] = {0, 0, 0, 0, 0, 0, 0, 1};
	int fd, admitted = 0, refused_at = 0;
	int64_t before = rt_total_now(), ran;
	rc_server_stats st;
	(void)state;
	assert_int_equal(rt_start_lim(&s2, u, 1, &lim), 0);
	fd = udp_to(s2.uri[0]);
	{ /* short waits: a refused call is never answered */
		struct timeval tv = {0, 100000};
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	for (uint32_t i = 1; i <= 10000 && refused_at == 0; i++) {
		ssize_t n = exchange(fd, m, mkcall(m, i, 2, RT_PROG, 1, 2, 0, NULL, 0, a, 8), r, sizeof(r));
		if (n == 32)
			admitted++;
		else
			refused_at = (int)i;
	}
	ran = rt_total_now() - before;
	assert_int_equal(rc_server_get_stats(s2.srv, &st), RC_OK);
	print_message("64 KiB cache: %d calls admitted, then refused (%llu bytes, %llu entries)\n",
	              admitted, (unsigned long long)st.drc_bytes, (unsigned long long)st.drc_entries);
	assert_true(refused_at > 1000);    /* ~400 entries, the rest compacted at 24 bytes */
	assert_int_equal(ran, admitted);   /* the refused call did not run */
	assert_int_equal(st.drc_refused, 1);
	assert_true(st.drc_bytes <= lim.drc_bytes);
	/* every admitted call is still remembered: the newest are replayed, the oldest (compacted)
	 * dropped -- not run again */
	for (uint32_t i = (uint32_t)admitted - 49; i <= (uint32_t)admitted; i++) {
		assert_int_equal(exchange(fd, m, mkcall(m, i, 2, RT_PROG, 1, 2, 0, NULL, 0, a, 8), r, sizeof(r)), 32);
		assert_int_equal((int64_t)get32(r + 28), (int64_t)(before + i)); /* its own total */
	}
	{
		struct timeval tv = {0, 30000};
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	for (uint32_t i = 1; i <= 20; i++)
		assert_int_equal(exchange(fd, m, mkcall(m, i, 2, RT_PROG, 1, 2, 0, NULL, 0, a, 8), r, sizeof(r)), -1);
	assert_int_equal(rt_total_now() - before, ran);
	assert_int_equal(rc_server_get_stats(s2.srv, &st), RC_OK);
	assert_int_equal(st.drc_replayed, 50);
	assert_int_equal(st.drc_unanswered, 20);
	assert_true(st.drc_shed >= 20);
	/* after the TTL the refused call's retransmission runs */
	usleep(3200000);
	{
		struct timeval tv = {1, 0};
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	assert_int_equal(exchange(fd, m, mkcall(m, (uint32_t)refused_at, 2, RT_PROG, 1, 2, 0, NULL, 0, a, 8), r, sizeof(r)), 32);
	assert_int_equal(rt_total_now() - before, ran + 1);
	close(fd);
	rt_stop(&s2);
}

/*
 * A full connection table (max_conns 4) makes room for a newcomer by closing the connection
 * that did nothing the longest -- one that never completed a request, before one that did --
 * and rc_server_get_stats counts it.
 */
static void full_table_evicts_and_counts(void **state)
{
	static const char *const u[] = {"tcp://127.0.0.1:0", NULL};
	rc_server_limits lim = {.max_conns = 4};
	rt_server s2;
	unsigned char m[256], r[256];
	int fd[5];
	rc_server_stats st;
	(void)state;
	assert_int_equal(rt_start_lim(&s2, u, 1, &lim), 0);
	/* fd[0] completes a call and idles; fd[1..3] connect and say nothing */
	fd[0] = sock_to(s2.uri[0], SOCK_STREAM);
	put32(m, 0x80000000u | (uint32_t)mkcall(m + 4, 1, 2, RT_PROG, 1, 0, 0, NULL, 0, NULL, 0));
	assert_int_equal(send(fd[0], m, 44, 0), 44);
	assert_int_equal(recv(fd[0], r, sizeof(r), 0), 28);
	for (int i = 1; i < 4; i++)
		fd[i] = sock_to(s2.uri[0], SOCK_STREAM);
	usleep(150000); /* past the grace a newcomer has to send its first request */
	fd[4] = sock_to(s2.uri[0], SOCK_STREAM);
	put32(m, 0x80000000u | (uint32_t)mkcall(m + 4, 2, 2, RT_PROG, 1, 0, 0, NULL, 0, NULL, 0));
	assert_int_equal(send(fd[4], m, 44, 0), 44);
	assert_int_equal(recv(fd[4], r, sizeof(r), 0), 28); /* the newcomer is served */
	assert_int_equal(get32(r + 4), 2);
	/* the oldest of those that never completed a request was closed, fd[0] was not */
	assert_int_equal(recv(fd[1], r, sizeof(r), 0), 0);
	assert_int_equal(send(fd[0], m, 44, 0), 44);
	assert_int_equal(recv(fd[0], r, sizeof(r), 0), 28);
	for (int i = 0; i < 100; i++) { /* the doomed one is freed by its own handler, soon */
		assert_int_equal(rc_server_get_stats(s2.srv, &st), RC_OK);
		if (st.conns == 4)
			break;
		usleep(10000);
	}
	assert_int_equal(st.conns_accepted, 5);
	assert_int_equal(st.conns_evicted, 1);
	assert_int_equal(st.conns_refused, 0);
	assert_int_equal(st.accept_nofile, 0);
	assert_int_equal(st.conns, 4);
	for (int i = 0; i < 5; i++)
		close(fd[i]);
	rt_stop(&s2);
}

static uint32_t deny_uid_0(const rc_svc_req *req, void *ctx)
{
	const rc_authsys *s = rc_svc_req_authsys(req);
	(void)ctx;
	return s != NULL && s->uid == 0 ? 5 /* AUTH_TOOWEAK */ : 0;
}

static void auth_hook_rejects(void **state)
{
	static const char *const u[] = {"tcp://127.0.0.1:0", NULL};
	rt_server s;
	rc_client *c;
	rc_error e;
	(void)state;
	/* the hook is set before the server runs: start one of our own */
	memset(&s, 0, sizeof(s));
	assert_int_equal(rc_server_create(&s.srv), RC_OK);
	assert_int_equal(rc_server_register(s.srv, &rt_prog1, NULL), RC_OK);
	assert_int_equal(rc_server_listen(s.srv, u[0], s.uri[0], sizeof(s.uri[0])), RC_OK);
	rc_server_set_auth(s.srv, deny_uid_0, NULL);
	assert_int_equal(pthread_create(&s.tid, NULL, rt_run, &s), 0);
	assert_int_equal(rc_client_create(&c, s.uri[0], RT_PROG, 1), RC_OK);
	assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_OK);
	rc_client_set_auth_sys(c, "h", 0, 0, NULL, 0);
	assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_AUTHERROR);
	rc_client_geterr(c, &e);
	assert_int_equal(e.auth_stat, 5);
	rc_client_set_auth_sys(c, "h", 1000, 0, NULL, 0);
	assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_OK);
	rc_client_destroy(c);
	rt_stop(&s);
}

static void registration_rules(void **state)
{
	rc_server *srv;
	static const rc_svc_proc dup[] = {{&rt_null_1, rt_null}, {&rt_null_1, rt_null}};
	static const rc_svc_prog dupprog = {RT_PROG, 9, 2, dup};
	/* a routine not linked (idlc's tables of a .x with several programs) */
	static const rc_svc_proc unlinked[] = {{&rt_null_1, NULL}};
	static const rc_svc_prog unlinkedprog = {RT_PROG, 8, 1, unlinked};
	(void)state;
	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_register(srv, &rt_prog1, NULL), RC_OK);
	assert_int_equal(rc_server_register(srv, &rt_prog1, NULL), RC_INVAL); /* twice */
	assert_int_equal(rc_server_register(srv, &dupprog, NULL), RC_INVAL); /* dup procedure */
	assert_int_equal(rc_server_register(srv, &unlinkedprog, NULL), RC_PROCUNAVAIL);
	assert_int_equal(rc_server_register(srv, NULL, NULL), RC_INVAL);
	/* the least RPCSEC_GSS service, as rc_gss_service (0: no rule) */
	assert_int_equal(rc_server_set_gss_required(srv, RT_PROG, 1, RC_GSS_INTEGRITY), RC_OK);
	assert_int_equal(rc_server_set_gss_required(srv, RT_PROG, 1, RC_GSS_NOT_REQUIRED), RC_OK);
	assert_int_equal(rc_server_set_gss_required(srv, RT_PROG, 1, (rc_gss_service)4), RC_INVAL);
	assert_int_equal(rc_server_set_gss_required(srv, RT_PROG, 7, RC_GSS_PRIVACY),
	                 RC_PROGUNAVAIL);
	assert_int_equal(rc_server_listen(srv, "bogus://x", NULL, 0), RC_UNKNOWNPROTO);
	assert_int_equal(rc_server_listen(srv, "udp://127.0.0.1:99999", NULL, 0), RC_UNKNOWNADDR);
	assert_int_equal(rc_server_run(srv), RC_INVAL); /* nothing to listen on */
	rc_server_destroy(srv);
}

typedef struct { rc_client *c; int n, ok; } targ;
static void *adder(void *p)
{
	targ *a = p;
	for (int i = 0; i < a->n; i++) {
		uint32_t ms = 2, r;
		if (rc_call(a->c, 3, (rc_xdrproc)rc_xdr_u_int, &ms, (rc_xdrproc)rc_xdr_u_int, &r) == RC_OK)
			a->ok++;
	}
	return NULL;
}

static void worker_threads_serve_in_parallel(void **state)
{
	static const char *const u[] = {"tcp://127.0.0.1:0", "udp://127.0.0.1:0", NULL};
	rt_server s;
	struct timespec t0, t1;
	pthread_t th[4];
	targ a[4];
	(void)state;
	assert_int_equal(rt_start(&s, u, 4), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(rc_client_create(&a[i].c, s.uri[i % 2], RT_PROG, 1), RC_OK);
		a[i].n = 25;
		a[i].ok = 0;
		pthread_create(&th[i], NULL, adder, &a[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(a[i].ok, 25);
		rc_client_destroy(a[i].c);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* 100 calls of 2 ms each: serially 200 ms or more; four workers overlap them */
	double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	print_message("4 workers, 100 x 2 ms calls: %.0f ms\n", ms);
	rt_stop(&s);
}

/* MEET(n) from n threads sharing one client (tcp:// or unix://): each returns n only if the
 * server ran all n calls at once. A server serving a connection's calls one after another
 * answers the first after 5 s with 1. */
typedef struct { rc_client *c; uint32_t n, got; rc_status st; } meet_arg;
static void *meeter(void *p)
{
	meet_arg *m = p;
	m->st = rc_call(m->c, 7, (rc_xdrproc)rc_xdr_u_int, &m->n, (rc_xdrproc)rc_xdr_u_int, &m->got);
	return NULL;
}

static void calls_on_one_connection_run_in_parallel(void **state)
{
	char path[64];
	snprintf(path, sizeof(path), "unix:///tmp/rc-test-meet-%d.sock", (int)getpid());
	const char *const u[] = {"tcp://127.0.0.1:0", path, NULL};
	rt_server s;
	(void)state;
	assert_int_equal(rt_start(&s, u, 4), 0);
	for (int k = 0; k < 2; k++) {
		rc_client *c;
		pthread_t th[4];
		meet_arg m[4];
		assert_int_equal(rc_client_create(&c, s.uri[k], RT_PROG, 1), RC_OK);
		/* blocking calls from four threads */
		rt_meet_reset();
		for (int i = 0; i < 4; i++) {
			m[i] = (meet_arg){c, 4, 0, RC_INPROGRESS};
			pthread_create(&th[i], NULL, meeter, &m[i]);
		}
		for (int i = 0; i < 4; i++) {
			pthread_join(th[i], NULL);
			assert_int_equal(m[i].st, RC_OK);
			assert_int_equal(m[i].got, 4);
		}
		/* started calls from one thread, all in flight at once */
		rc_async *a[3];
		uint32_t three = 3, got[3];
		rt_meet_reset();
		for (int i = 0; i < 3; i++)
			assert_int_equal(rc_call_start(c, 7, (rc_xdrproc)rc_xdr_u_int, &three,
			                               (rc_xdrproc)rc_xdr_u_int, &got[i], NULL, NULL, &a[i]),
			                 RC_OK);
		for (int i = 0; i < 3; i++) {
			assert_int_equal(rc_async_wait(a[i], 10000), RC_OK);
			rc_async_release(a[i]);
			assert_int_equal(got[i], 3);
		}
		rc_client_destroy(c);
	}
	rt_stop(&s);
}

/* 500 echo calls in flight on one connection to a server with 3 workers: each reply matches
 * its call, whatever order they come back in. */
static void pipelined_calls_on_threaded_server(void **state)
{
	static const char *const u[] = {"tcp://127.0.0.1:0", NULL};
	enum { N = 500 };
	rt_server s;
	rc_client *c;
	static rc_async *a[N];
	static rt_blob in[N], out[N];
	static char bufs[N][16];
	(void)state;
	assert_int_equal(rt_start(&s, u, 3), 0);
	assert_int_equal(rc_client_create(&c, s.uri[0], RT_PROG, 1), RC_OK);
	for (int i = 0; i < N; i++) {
		in[i].len = (uint32_t)snprintf(bufs[i], sizeof(bufs[i]), "call %d", i);
		in[i].val = bufs[i];
		out[i] = (rt_blob){0, NULL};
		assert_int_equal(rc_call_start(c, 1, (rc_xdrproc)xdr_rt_blob, &in[i],
		                               (rc_xdrproc)xdr_rt_blob, &out[i], NULL, NULL, &a[i]),
		                 RC_OK);
	}
	for (int i = 0; i < N; i++) {
		assert_int_equal(rc_async_wait(a[i], 10000), RC_OK);
		rc_async_release(a[i]);
		assert_int_equal(out[i].len, in[i].len);
		assert_memory_equal(out[i].val, in[i].val, in[i].len);
		rc_xdr_free((rc_xdrproc)xdr_rt_blob, &out[i]);
	}
	rc_client_destroy(c);
	rt_stop(&s);
}

/* Big replies on streams leave from the result's memory (gathered, not copied into the reply
 * buffer) before the result is freed: with one thread and with workers, over TCP and a unix
 * socket, three 1 MiB echoes started and not read for 200 ms (the server's socket fills: the
 * rest of each reply is queued) and a blocking 3 MiB one all come back whole. */
static void big_replies_gathered(void **state)
{
	static const char *const tcp[] = {"tcp://127.0.0.1:0", NULL};
	static const char *const unx[] = {"unix:///tmp/rc-test-gather.sock", NULL};
	static const struct { const char *const *uris; unsigned threads; } setups[] = {
		{tcp, 1}, {tcp, 3}, {unx, 1}, {unx, 2}};
	enum { N = 3, SZ = 1 << 20, BIG = 3 << 20 };
	(void)state;
	for (size_t k = 0; k < sizeof(setups) / sizeof(setups[0]); k++) {
		rt_server s;
		rc_client *c;
		rc_async *a[N];
		rt_blob in[N + 1], out[N + 1];

		assert_int_equal(rt_start(&s, setups[k].uris, setups[k].threads), 0);
		assert_int_equal(rc_client_create(&c, s.uri[0], RT_PROG, 1), RC_OK);
		for (int i = 0; i <= N; i++) {
			in[i].len = i < N ? SZ : BIG;
			in[i].val = malloc(in[i].len);
			assert_non_null(in[i].val);
			for (size_t j = 0; j < in[i].len; j++)
				in[i].val[j] = (char)(j * 31 + (size_t)i);
			out[i] = (rt_blob){0, NULL};
		}
		for (int i = 0; i < N; i++)
			assert_int_equal(rc_call_start(c, 1, (rc_xdrproc)xdr_rt_blob, &in[i],
			                               (rc_xdrproc)xdr_rt_blob, &out[i], NULL, NULL, &a[i]),
			                 RC_OK);
		usleep(200000);
		rt_poll_loop(c, 10000);
		assert_int_equal(rc_call(c, 1, (rc_xdrproc)xdr_rt_blob, &in[N], (rc_xdrproc)xdr_rt_blob,
		                         &out[N]),
		                 RC_OK);
		for (int i = 0; i <= N; i++) {
			if (i < N) {
				assert_int_equal(rc_async_status(a[i]), RC_OK);
				rc_async_release(a[i]);
			}
			assert_int_equal(out[i].len, in[i].len);
			assert_memory_equal(out[i].val, in[i].val, in[i].len);
			rc_xdr_free((rc_xdrproc)xdr_rt_blob, &out[i]);
			free(in[i].val);
		}
		rc_client_destroy(c);
		rt_stop(&s);
	}
}

/* A client that goes away while its calls run on worker threads: the server finishes them,
 * drops the connection (no crash, no leak under the sanitizers) and serves the next client. */
static void peer_gone_while_calls_run(void **state)
{
	static const char *const u[] = {"tcp://127.0.0.1:0", NULL};
	rt_server s;
	rc_client *c;
	rc_async *a[6];
	uint32_t ms = 100, r[6];
	(void)state;
	assert_int_equal(rt_start(&s, u, 3), 0);
	for (int round = 0; round < 3; round++) {
		assert_int_equal(rc_client_create(&c, s.uri[0], RT_PROG, 1), RC_OK);
		for (int i = 0; i < 6; i++)
			assert_int_equal(rc_call_start(c, 3, (rc_xdrproc)rc_xdr_u_int, &ms,
			                               (rc_xdrproc)rc_xdr_u_int, &r[i], NULL, NULL, &a[i]),
			                 RC_OK);
		usleep(20000); /* the first calls are running */
		for (int i = 0; i < 6; i++)
			rc_async_release(a[i]);
		rc_client_destroy(c);
	}
	assert_int_equal(rc_client_create(&c, s.uri[0], RT_PROG, 1), RC_OK);
	ms = 1;
	assert_int_equal(rc_call(c, 3, (rc_xdrproc)rc_xdr_u_int, &ms, (rc_xdrproc)rc_xdr_u_int, &r[0]), RC_OK);
	assert_int_equal(r[0], 1);
	rc_client_destroy(c);
	usleep(400000); /* let the calls of the vanished clients finish before stopping */
	rt_stop(&s);
}

/* Read exactly n bytes; false on timeout, EOF or error. */
static bool read_n(int fd, unsigned char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = recv(fd, p, n, 0);
		if (k <= 0)
			return false;
		p += k;
		n -= (size_t)k;
	}
	return true;
}

/* One reply record (single fragment) into rep; returns its xid, or 0 if none came within 1 s. */
static uint32_t read_reply(int fd, unsigned char *rep, size_t cap)
{
	unsigned char mark[4];
	size_t len;
	if (!read_n(fd, mark, 4))
		return 0;
	len = get32(mark) & 0x7fffffffu;
	assert_true(len >= 4 && len <= cap);
	assert_true(read_n(fd, rep, len));
	return get32(rep);
}

/* Send null calls with xids xid .. xid + n - 1: datagrams, or records in one write. */
static void send_nulls(int fd, bool stream, uint32_t xid, uint32_t n)
{
	unsigned char m[64 * 64];
	size_t len = 0;
	assert_true(n <= 64);
	for (uint32_t i = 0; i < n; i++) {
		size_t k = mkcall(m + len + 4, xid + i, 2, RT_PROG, 1, 0, 0, NULL, 0, NULL, 0);
		if (!stream) {
			assert_int_equal(send(fd, m + len + 4, k, 0), (ssize_t)k);
			continue;
		}
		put32(m + len, (uint32_t)k | 0x80000000u);
		len += 4 + k;
	}
	if (stream)
		assert_int_equal(send(fd, m, len, 0), (ssize_t)len);
}

/* The next reply's xid (0: none within 1 s). */
static uint32_t recv_xid(int fd, bool stream)
{
	unsigned char r[64];
	if (stream)
		return read_reply(fd, r, sizeof(r));
	return recv(fd, r, sizeof(r), 0) == 24 ? get32(r) : 0;
}

/* The one-thread epoll loop serves a request an event while calls and replies alternate,
 * skipping the read that would only say EAGAIN; a burst that follows must still be answered
 * whole (what is left keeps the descriptor ready). UDP and TCP. */
static void burst_after_ping_pong(void **state)
{
	enum { BURST = 48 };
	(void)state;
	for (int t = 0; t < 2; t++) {
		bool stream = t == 1, seen[BURST];
		int fd = sock_to(S.uri[t], stream ? SOCK_STREAM : SOCK_DGRAM), rcv = 1 << 20;
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
		for (uint32_t k = 0; k < 3; k++) {
			for (uint32_t i = 0; i < 20; i++) { /* one at a time */
				send_nulls(fd, stream, 1000 + i, 1);
				assert_int_equal(recv_xid(fd, stream), 1000 + i);
			}
			send_nulls(fd, stream, 5000, BURST); /* then all at once (TCP: one write) */
			memset(seen, 0, sizeof(seen));
			for (int i = 0; i < BURST; i++) {
				uint32_t x = recv_xid(fd, stream) - 5000;
				assert_true(x < BURST && !seen[x]);
				seen[x] = true;
			}
		}
		close(fd);
	}
}

/*
 * Datagram batches (recvmmsg / sendmmsg) on each serving loop: the blocking loop of a lone UDP
 * listener with one and with two threads, and the epoll loop (UDP beside TCP) with two
 * threads. Each gets bursts of 48 null calls between ping-pongs -- every reply comes, once --
 * and a burst that carries the same ADD three times among the nulls: the duplicate request
 * cache still runs it once and answers each copy that is not dropped as a duplicate in
 * progress with the same reply.
 */
/* Read replies on fd until none comes for 1 s; how many were ADD replies (32 bytes), each of
 * xid. */
static int count_adds(int fd, uint32_t xid)
{
	unsigned char r[256];
	int adds = 0;

	for (;;) {
		ssize_t n = recv(fd, r, sizeof(r), 0);
		if (n < 0)
			return adds; /* 1 s without a reply: all in */
		if (n == 32) {
			assert_int_equal(get32(r), xid);
			adds++;
		}
	}
}

static void datagram_batches_on_every_loop(void **state)
{
	static const char *const one[] = {"udp://127.0.0.1:0", NULL};
	static const char *const two[] = {"udp://127.0.0.1:0", "tcp://127.0.0.1:0", NULL};
	static const struct { const char *const *uris; unsigned threads; } setups[] = {
		{one, 1}, {one, 2}, {two, 2}};
	enum { BURST = 48 };
	(void)state;
	for (size_t k = 0; k < sizeof(setups) / sizeof(setups[0]); k++) {
		rt_server s;
		bool seen[BURST];
		unsigned char m[256], a[8] = {0, 0, 0, 0, 0, 0, 0, 3};
		int rcv = 1 << 20, fd, adds = 0;
		int64_t before;

		assert_int_equal(rt_start(&s, setups[k].uris, setups[k].threads), 0);
		fd = udp_to(s.uri[0]);
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
		for (uint32_t t = 0; t < 3; t++) {
			for (uint32_t i = 0; i < 10; i++) {
				send_nulls(fd, false, 1000 + i, 1);
				assert_int_equal(recv_xid(fd, false), 1000 + i);
			}
			send_nulls(fd, false, 5000, BURST);
			memset(seen, 0, sizeof(seen));
			for (int i = 0; i < BURST; i++) {
				uint32_t x = recv_xid(fd, false) - 5000;
				assert_true(x < BURST && !seen[x]);
				seen[x] = true;
			}
		}
		/* ADD 3 three times (one xid) inside a burst of nulls */
		before = rt_total_now();
		size_t len = mkcall(m, 7777, 2, RT_PROG, 1, 2, 0, NULL, 0, a, 8);
		send_nulls(fd, false, 6000, 20);
		for (int i = 0; i < 3; i++)
			assert_int_equal(send(fd, m, len, 0), (ssize_t)len);
		send_nulls(fd, false, 6020, 20);
		adds = count_adds(fd, 7777);
		assert_true(adds >= 1 && adds <= 3);
		assert_int_equal(rt_total_now() - before, 3); /* ran once */
		close(fd);
		rt_stop(&s);
	}
}

/* Send n copies of msg[0..len) (each copy's xid = xid + i when xid_step) from fd as one
 * segmentation-offload send: the server's socket, with receive offload on, takes them joined
 * in one receive. */
static void send_joined(int fd, const unsigned char *msg, size_t len, uint32_t xid,
                        bool xid_step, unsigned n)
{
	static unsigned char buf[64 * 256];
	union {
		char b[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} ctl;
	uint16_t seg = (uint16_t)len;
	struct iovec iov = {buf, n * len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
	                    .msg_controllen = sizeof ctl.b};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	assert_true(n <= 64 && len <= 256);
	for (unsigned i = 0; i < n; i++) {
		memcpy(buf + i * len, msg, len);
		put32(buf + i * len, xid + (xid_step ? i : 0));
	}
	memset(ctl.b, 0, sizeof(ctl.b)); /* (the padding after the data too) */
	cm->cmsg_level = SOL_UDP;
	cm->cmsg_type = UDP_SEGMENT;
	cm->cmsg_len = CMSG_LEN(sizeof seg);
	memcpy(CMSG_DATA(cm), &seg, sizeof seg);
	assert_int_equal(sendmsg(fd, &mh, 0), (ssize_t)(n * len));
}

/*
 * Pipelined calls sent with segmentation offload (as remotecall's clients send them) reach
 * a server that turned receive offload on: one receive takes a whole burst joined, and the
 * server cuts it apart. On every loop -- blocking receives with one thread and with two, the
 * epoll loop with one thread and with workers -- each call of a 48-call burst is answered once
 * (32 fit a batch: the rest wait in the transport, which no epoll wake-up announces), and an
 * ADD joined three times with itself runs once.
 */
static void joined_datagrams_on_every_loop(void **state)
{
	static const char *const one[] = {"udp://127.0.0.1:0", NULL};
	static const char *const two[] = {"udp://127.0.0.1:0", "tcp://127.0.0.1:0", NULL};
	static const struct { const char *const *uris; unsigned threads; } setups[] = {
		{one, 1}, {one, 2}, {two, 1}, {two, 2}};
	enum { BURST = 48 };
	(void)state;
	if (!udp_offloads())
		skip();
	for (size_t k = 0; k < sizeof(setups) / sizeof(setups[0]); k++) {
		rt_server s;
		bool seen[BURST];
		unsigned char m[256], add[256], a[8] = {0, 0, 0, 0, 0, 0, 0, 3};
		int rcv = 1 << 20, fd, adds = 0;
		size_t len, alen;
		int64_t before;

		assert_int_equal(rt_start(&s, setups[k].uris, setups[k].threads), 0);
		fd = udp_to(s.uri[0]);
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
		len = mkcall(m, 0, 2, RT_PROG, 1, 0, 0, NULL, 0, NULL, 0);
		for (uint32_t t = 0; t < 4; t++) { /* the first burst turns the offload on */
			for (uint32_t i = 0; i < 5; i++) {
				send_nulls(fd, false, 1000 + i, 1);
				assert_int_equal(recv_xid(fd, false), 1000 + i);
			}
			send_joined(fd, m, len, 5000 + 100 * t, true, BURST);
			memset(seen, 0, sizeof(seen));
			for (int i = 0; i < BURST; i++) {
				uint32_t x = recv_xid(fd, false) - (5000 + 100 * t);
				assert_true(x < BURST && !seen[x]);
				seen[x] = true;
			}
		}
		before = rt_total_now();
		alen = mkcall(add, 7777, 2, RT_PROG, 1, 2, 0, NULL, 0, a, 8);
		send_joined(fd, m, len, 6000, true, 20);
		send_joined(fd, add, alen, 7777, false, 3);
		send_joined(fd, m, len, 6020, true, 20);
		adds = count_adds(fd, 7777);
		assert_true(adds >= 1 && adds <= 3);
		assert_int_equal(rt_total_now() - before, 3); /* ran once */
		close(fd);
		rt_stop(&s);
	}
}

/*
 * With worker threads a datagram listener is armed one-shot: the worker that takes its event
 * re-arms it. An over-long datagram (over max_record) is dropped when read; the listener must
 * still be re-armed, or no worker would hear the calls after it.
 */
static void overlong_datagram_does_not_silence_threaded_listener(void **state)
{
	static const char *const two[] = {"udp://127.0.0.1:0", "tcp://127.0.0.1:0", NULL};
	rc_server_limits lim = {.max_record = 1024};
	rt_server s;
	unsigned char big[2000], m[128], r[128];
	int fd;
	(void)state;
	memset(big, 0x55, sizeof(big));
	assert_int_equal(rt_start_lim(&s, two, 2, &lim), 0);
	fd = udp_to(s.uri[0]);
	for (uint32_t i = 0; i < 3; i++) {
		size_t len = mkcall(m, 900 + i, 2, RT_PROG, 1, 0, 0, NULL, 0, NULL, 0);
		assert_int_equal(send(fd, big, sizeof(big), 0), (ssize_t)sizeof(big));
		usleep(20000); /* let a worker take the event for it alone */
		assert_int_equal(exchange(fd, m, len, r, sizeof(r)), 24);
		assert_int_equal(get32(r), 900 + i);
	}
	close(fd);
	rt_stop(&s);
}

/*
 * Ten short calls and one long one, pipelined in one write on one connection to two workers:
 * the short calls' replies (gathered into few sends) come back while the long one still runs.
 * The long one is MEET(2), which the test completes itself once those replies are in; a reply
 * held back until the long call ends would not come within 1 s. The long call is sent first
 * (the worker that reads the batch runs it) or last (taken from the job queue after the short
 * ones: it must send their gathered replies before it starts).
 */
static void short_replies_do_not_wait_for_a_long_call(void **state)
{
	static const char *const u[] = {"tcp://127.0.0.1:0", NULL};
	rt_server s;
	(void)state;
	assert_int_equal(rt_start(&s, u, 2), 0);
	for (int round = 0; round < 6; round++) {
		unsigned char batch[11 * 64], rep[256], arg[4];
		size_t blen = 0;
		bool seen[11] = {false};
		int fd = sock_to(s.uri[0], SOCK_STREAM);
		uint32_t gate = round % 2 == 0 ? 1 : 11;
		rt_meet_reset();
		for (uint32_t xid = 1; xid <= 11; xid++) {
			size_t len;
			put32(arg, 2); /* MEET(2), or the null procedure */
			len = mkcall(batch + blen + 4, xid, 2, RT_PROG, 1, xid == gate ? 7 : 0, 0, NULL,
			             0, arg, xid == gate ? 4 : 0);
			put32(batch + blen, (uint32_t)len | 0x80000000u);
			blen += 4 + len;
		}
		assert_int_equal(send(fd, batch, blen, 0), (ssize_t)blen);
		for (int i = 0; i < 10; i++) {
			uint32_t xid = read_reply(fd, rep, sizeof(rep));
			if (xid == 0)
				fail_msg("round %d: only %d short replies before the long call ended", round, i);
			assert_true(xid >= 1 && xid <= 11 && xid != gate && !seen[xid - 1]);
			seen[xid - 1] = true;
		}
		rt_meet_enter(); /* the second "caller" of MEET opens the gate */
		assert_int_equal(read_reply(fd, rep, sizeof(rep)), gate);
		assert_int_equal(get32(rep + 24), 2); /* MEET saw two callers */
		close(fd);
	}
	rt_stop(&s);
}

static void ipv6_loopback(void **state)
{
	static const char *const u[] = {"udp://[::1]:0", "tcp://[::1]:0", NULL};
	rt_server s;
	(void)state;
	if (rt_start(&s, u, 1) != 0) {
		print_message("no IPv6 loopback here: skipped\n");
		skip();
	}
	for (int i = 0; i < 2; i++) {
		rc_client *c;
		assert_non_null(strstr(s.uri[i], "[::1]"));
		assert_int_equal(rc_client_create(&c, s.uri[i], RT_PROG, 1), RC_OK);
		assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_OK);
		rc_client_destroy(c);
	}
	rt_stop(&s);
}

static void application_loop_drives_server(void **state)
{
	rc_server *srv;
	rc_client *c;
	rc_async *a;
	char uri[256];
	uint32_t one = 1, r = 0;
	(void)state;
	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_register(srv, &rt_prog1, NULL), RC_OK);
	assert_int_equal(rc_server_listen(srv, "tcp://127.0.0.1:0", uri, sizeof(uri)), RC_OK);
	assert_int_equal(rc_client_create(&c, uri, RT_PROG, 1), RC_OK);
	assert_int_equal(rc_call_start(c, 3, (rc_xdrproc)rc_xdr_u_int, &one, (rc_xdrproc)rc_xdr_u_int, &r, NULL, NULL, &a), RC_OK);
	/* one thread, one poll loop over the server's descriptor and the client's */
	for (int i = 0; i < 200 && rc_async_status(a) == RC_INPROGRESS; i++) {
		int cfd, tmo;
		short ev;
		rc_client_pollinfo(c, &cfd, &ev, &tmo);
		struct pollfd p[2] = {{rc_server_fd(srv), POLLIN, 0}, {cfd, ev, 0}};
		poll(p, 2, 50);
		if (p[0].revents)
			rc_server_step(srv, 0);
		rc_client_advance(c, p[1].revents);
	}
	assert_int_equal(rc_async_status(a), RC_OK);
	assert_int_equal(r, 1);
	rc_async_release(a);
	rc_client_destroy(c);
	rc_server_destroy(srv);
}

static void *stopper(void *p)
{
	usleep(100000);
	rc_server_stop(p);
	return NULL;
}

static void stop_from_another_thread(void **state)
{
	static const char *const kinds[][3] = {{"udp://127.0.0.1:0", NULL, NULL},
	                                       {"udp://127.0.0.1:0", "tcp://127.0.0.1:0", NULL}};
	(void)state;
	for (int k = 0; k < 2; k++) {
		rc_server *srv;
		pthread_t t;
		assert_int_equal(rc_server_create(&srv), RC_OK);
		for (int i = 0; kinds[k][i]; i++)
			assert_int_equal(rc_server_listen(srv, kinds[k][i], NULL, 0), RC_OK);
		rc_server_set_threads(srv, 2);
		pthread_create(&t, NULL, stopper, srv);
		assert_int_equal(rc_server_run(srv), RC_OK);
		pthread_join(t, NULL);
		rc_server_destroy(srv);
	}
}

/* Descriptors registered in the epoll set fd (its /proc fdinfo's "tfd:" lines). */
static int epoll_members(int fd)
{
	char path[64], line[256];
	int n = 0;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += strncmp(line, "tfd:", 4) == 0;
	fclose(f);
	return n;
}

static void *runner(void *p)
{
	rc_server_run(p);
	return NULL;
}

/* A server of rt_prog1 listening on uris (NULL-terminated), the first one's URI in uri, with
 * rc_server_run started on thread t and a client c of it that has had one call served (so
 * the server is running). */
static rc_server *running_server(const char *const *uris, char *uri, size_t len, pthread_t *t,
                                 rc_client **c)
{
	rc_server *srv;
	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_register(srv, &rt_prog1, NULL), RC_OK);
	for (int i = 0; uris[i]; i++)
		assert_int_equal(rc_server_listen(srv, uris[i], i ? NULL : uri, i ? 0 : len), RC_OK);
	pthread_create(t, NULL, runner, srv);
	assert_int_equal(rc_client_create(c, uri, RT_PROG, 1), RC_OK);
	return srv;
}

/* One SLEEP(1 ms) call through c: it must succeed and return 1. */
static void sleep_call(rc_client *c)
{
	uint32_t one = 1, r = 0;
	assert_int_equal(rc_call(c, 3, (rc_xdrproc)rc_xdr_u_int, &one, (rc_xdrproc)rc_xdr_u_int, &r), RC_OK);
	assert_int_equal(r, 1);
}

static void stop_running(rc_server *srv, pthread_t t, rc_client *c)
{
	rc_client_destroy(c);
	rc_server_stop(srv);
	pthread_join(t, NULL);
}

/* A server with one UDP listener serves it by blocking receives alone: the socket is out of
 * the epoll set while rc_server_run runs (its wake-up callback would run on every datagram)
 * and back in it afterwards; no listener can be added meanwhile. */
static void single_udp_listener_served_outside_epoll(void **state)
{
	static const char *const udp[] = {"udp://127.0.0.1:0", NULL};
	rc_server *srv;
	rc_client *c;
	pthread_t t;
	char uri[256];
	int before;
	(void)state;
	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_listen(srv, udp[0], NULL, 0), RC_OK);
	before = epoll_members(rc_server_fd(srv)); /* the same set up as running_server's */
	rc_server_destroy(srv);
	assert_true(before >= 1);

	srv = running_server(udp, uri, sizeof(uri), &t, &c);
	sleep_call(c); /* served: rc_server_run is running */
	assert_int_equal(epoll_members(rc_server_fd(srv)), before - 1);
	assert_int_equal(rc_server_listen(srv, "tcp://127.0.0.1:0", NULL, 0), RC_INVAL);
	sleep_call(c);
	stop_running(srv, t, c);
	assert_int_equal(epoll_members(rc_server_fd(srv)), before);
	rc_server_destroy(srv);
}

static uint32_t no_auth(const rc_svc_req *req, void *ctx)
{
	(void)req;
	(void)ctx;
	return 0;
}

/* What must be set before rc_server_run is refused while it runs, and the server goes on. */
static void running_server_refuses_changes(void **state)
{
	static const char *const both[] = {"tcp://127.0.0.1:0", "udp://127.0.0.1:0", NULL};
	rc_server *srv;
	rc_client *c;
	pthread_t t;
	char uri[256];
	(void)state;
	srv = running_server(both, uri, sizeof(uri), &t, &c);
	sleep_call(c);
	/* (registrations are taken while it runs: test_live) */
	assert_int_equal(rc_server_listen(srv, "udp://127.0.0.1:0", NULL, 0), RC_INVAL);
	assert_int_equal(rc_server_set_conn_hook(srv, NULL, NULL), RC_INVAL);
	assert_int_equal(rc_server_set_drc_streams(srv, RC_DRC_EVERY_PROGRAM, 0, true), RC_INVAL);
	assert_int_equal(rc_server_set_drc(srv, false), RC_INVAL);
	assert_int_equal(rc_server_set_proc_stats(srv, true), RC_INVAL);
	assert_int_equal(rc_server_set_call_log(srv, NULL, NULL), RC_INVAL);
	assert_int_equal(rc_server_set_auth(srv, no_auth, NULL), RC_INVAL);
	assert_int_equal(rc_server_set_trace(srv, NULL, NULL), RC_INVAL);
	assert_int_equal(rc_server_set_threads(srv, 4), RC_INVAL);
	assert_int_equal(rc_server_set_spin(srv, 10), RC_INVAL);
	assert_int_equal(rc_server_run(srv), RC_INVAL); /* a second loop */
	assert_int_equal(rc_server_step(srv, 0), RC_INVAL);
	sleep_call(c);
	stop_running(srv, t, c);
	rc_server_destroy(srv);
}

/* rc_server_set_spin: a spinning server answers on both loops (a lone UDP listener's blocking
 * receives, and the epoll loop), stops when told to, and refuses a window over one second. */
static void spinning_server_serves_and_stops(void **state)
{
	static const char *const lone[] = {"udp://127.0.0.1:0", NULL};
	static const char *const both[] = {"tcp://127.0.0.1:0", "udp://127.0.0.1:0", NULL};
	const char *const *sets[] = {lone, both};
	(void)state;
	for (int k = 0; k < 2; k++) {
		rc_server *srv;
		rc_client *c;
		pthread_t t;
		char uri[256];
		assert_int_equal(rc_server_create(&srv), RC_OK);
		assert_int_equal(rc_server_set_spin(NULL, 10), RC_INVAL);
		assert_int_equal(rc_server_set_spin(srv, 1000001), RC_INVAL);
		assert_int_equal(rc_server_set_spin(srv, 300), RC_OK);
		assert_int_equal(rc_server_register(srv, &rt_prog1, NULL), RC_OK);
		for (int i = 0; sets[k][i]; i++)
			assert_int_equal(rc_server_listen(srv, sets[k][i], i ? NULL : uri,
			                                  i ? 0 : sizeof(uri)), RC_OK);
		pthread_create(&t, NULL, runner, srv);
		assert_int_equal(rc_client_create(&c, uri, RT_PROG, 1), RC_OK);
		for (int i = 0; i < 200; i++)
			sleep_call(c);
		stop_running(srv, t, c); /* joins: a spinning loop still sees the stop */
		rc_server_destroy(srv);
	}
}

/* Whether something accepts connections at unix path p. */
static bool unix_live(const char *p)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0), r;
	snprintf(a.sun_path, sizeof a.sun_path, "%s", p);
	r = connect(fd, (struct sockaddr *)&a, sizeof a);
	close(fd);
	return r == 0;
}

/* A unix path is never taken from a server that listens on it (refused with EADDRINUSE and
 * the reason); a dead server's socket file is replaced; a file of another kind is left as it
 * is; and a server that closes removes the path only while it is still the file it bound, not
 * one another server has bound there since. */
static void unix_path_never_taken_from_a_live_server(void **state)
{
	const char *p = "/tmp/rc-test-taken.sock", *q = "/tmp/rc-test-stale.sock";
	rc_server *a, *b;
	rc_error e;
	char buf[256];
	(void)state;
	unlink(p);
	assert_int_equal(rc_server_create(&a), RC_OK);
	assert_int_equal(rc_server_listen(a, "unix:/tmp/rc-test-taken.sock", NULL, 0), RC_OK);
	assert_int_equal(rc_server_create(&b), RC_OK);
	assert_int_equal(rc_server_listen(b, "unix:/tmp/rc-test-taken.sock", NULL, 0),
	                 RC_LOCALERROR);
	rc_server_geterr(b, &e);
	assert_int_equal(e.status, RC_LOCALERROR);
	assert_int_equal(e.sys_errno, EADDRINUSE);
	assert_string_equal(rc_error_format(&e, buf, sizeof buf),
	                    "address already in use (/tmp/rc-test-taken.sock is in use by a "
	                    "running server)");
	assert_true(unix_live(p)); /* still the first server's */

	/* the first goes; its path has been replaced by hand and bound by b since: b keeps it */
	assert_int_equal(unlink(p), 0);
	assert_int_equal(rc_server_listen(b, "unix:/tmp/rc-test-taken.sock", NULL, 0), RC_OK);
	rc_server_geterr(b, &e);
	assert_int_equal(e.status, RC_OK);
	rc_server_destroy(a);
	assert_int_equal(access(p, F_OK), 0);
	assert_true(unix_live(p));
	rc_server_destroy(b); /* its own file: removed */
	assert_int_equal(access(p, F_OK), -1);

	/* a socket file nobody listens on is a dead server's: replaced */
	{
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);
		unlink(q);
		snprintf(sa.sun_path, sizeof sa.sun_path, "%s", q);
		assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
		close(fd); /* the file stays */
		assert_int_equal(access(q, F_OK), 0);
		assert_int_equal(rc_server_create(&a), RC_OK);
		assert_int_equal(rc_server_listen(a, "unix:/tmp/rc-test-stale.sock", NULL, 0), RC_OK);
		assert_true(unix_live(q));
		rc_server_destroy(a);
	}

	/* a regular file is never removed nor changed */
	FILE *f = fopen("/tmp/rc-test-notasock", "w");
	fputs("keep me", f);
	fclose(f);
	assert_int_equal(rc_server_create(&a), RC_OK);
	assert_int_equal(rc_server_listen(a, "unix:/tmp/rc-test-notasock", NULL, 0), RC_LOCALERROR);
	rc_server_geterr(a, &e);
	assert_int_equal(e.sys_errno, EADDRINUSE);
	assert_non_null(strstr(e.detail, "not a socket"));
	rc_server_destroy(a);
	f = fopen("/tmp/rc-test-notasock", "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof buf, f));
	assert_string_equal(buf, "keep me");
	fclose(f);
	unlink("/tmp/rc-test-notasock");
}

/* A failed listen says why through rc_server_geterr: a port in use, a malformed address (the
 * server's own: "local address"). */
static void listen_errors_say_why(void **state)
{
	rc_server *a, *b;
	rc_error e;
	char at[128], buf[256];
	(void)state;
	assert_int_equal(rc_server_create(&a), RC_OK);
	assert_int_equal(rc_server_create(&b), RC_OK);
	assert_int_equal(rc_server_listen(a, "tcp://127.0.0.1:0", at, sizeof at), RC_OK);
	assert_int_equal(rc_server_listen(b, at, NULL, 0), RC_LOCALERROR);
	rc_server_geterr(b, &e);
	assert_string_equal(rc_error_format(&e, buf, sizeof buf), "address already in use");
	assert_int_equal(rc_server_listen(b, "tcp://127.0.0.1:80x", NULL, 0), RC_UNKNOWNADDR);
	rc_server_geterr(b, &e);
	assert_string_equal(rc_error_format(&e, buf, sizeof buf),
	                    "address unknown or malformed (local address tcp://127.0.0.1:80x)");

	/* a query key the listen side does not take is refused, never ignored: an unknown one,
	 * and a client's (tls=required would look like a TLS policy this listener does not run) */
	assert_int_equal(rc_server_listen(b, "tcp://127.0.0.1:0?foo=bar", at, sizeof at),
	                 RC_UNKNOWNADDR);
	assert_string_equal(at, "");
	rc_server_geterr(b, &e);
	assert_string_equal(rc_error_format(&e, buf, sizeof buf),
	                    "address unknown or malformed (URI query: unknown key foo; a listen "
	                    "URI takes proxy=v2, proxy_from, streams)");
	{
		static const char *const refused[][2] = {
			{"tcp://127.0.0.1:0?tls=required",
			 "URI query: tls is a client URI's key (server TLS: rc_server_set_tls, "
			 "rc_server_set_tls_required); a listen URI takes proxy=v2, proxy_from, streams"},
			{"udp://127.0.0.1:0?ca=x.pem",
			 "URI query: ca is a client URI's key (a server's: rc_tls_server_opts); a "
			 "listen URI takes proxy=v2, proxy_from, streams"},
			/* a load balancer's keys: PROXY v2 on stream listeners only */
			{"udp://127.0.0.1:0?proxy=v2", "URI query: proxy=v2 takes a tcp or unix listener"},
			{"tcp://127.0.0.1:0?proxy_from=127.0.0.1",
			 "URI query: proxy_from needs proxy=v2"},
			{"tcp://127.0.0.1:0?proxy=v1", "URI query: proxy=v1; proxy takes v2"},
			{"tcp://127.0.0.1:0?proxy=v2&proxy_from=10.0.0.0/40",
			 "URI query: proxy_from=10.0.0.0/40 is not an address or ADDRESS/BITS"},
		};
		for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
			assert_int_equal(rc_server_listen(b, refused[i][0], NULL, 0),
			                 RC_UNKNOWNADDR);
			rc_server_geterr(b, &e);
			assert_string_equal(e.detail, refused[i][1]);
		}
	}
	rc_server_destroy(a);
	rc_server_destroy(b);
}

static int toobig_traced;
static void toobig_trace(void *arg, rc_trace_point pt, uint32_t xid, uint64_t ns)
{
	(void)arg, (void)xid, (void)ns;
	if (pt == RC_TP_SRV_TOOBIG)
		__atomic_add_fetch(&toobig_traced, 1, __ATOMIC_RELAXED);
}

/* A reply over a datagram's 65,507 bytes: the caller gets SYSTEM_ERR at once (not a timeout),
 * told that it may be the reply's size; the server counts it and traces it. A reply that fits
 * still goes. */
static void udp_reply_too_big_is_system_err(void **state)
{
	static const char *const uris[] = {"udp://127.0.0.1:0", NULL};
	rt_server s;
	rc_client *c;
	rc_error e;
	rc_server_stats stt;
	rt_sized in = {70000, {0, NULL}};
	rt_blob out = {0, NULL};
	struct timespec t0, t1;
	(void)state;
	memset(&s, 0, sizeof s);
	assert_int_equal(rc_server_create(&s.srv), RC_OK);
	assert_int_equal(rc_server_register(s.srv, &rt_prog1, &s.delay_ms), RC_OK);
	assert_int_equal(rc_server_listen(s.srv, uris[0], s.uri[0], sizeof s.uri[0]), RC_OK);
	assert_int_equal(rc_server_set_trace(s.srv, toobig_trace, NULL), RC_OK);
	assert_int_equal(pthread_create(&s.tid, NULL, rt_run, &s), 0);

	assert_int_equal(rc_client_create(&c, s.uri[0], RT_PROG, 1), RC_OK);
	rc_client_set_timeout(c, 10000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(rc_call(c, 8, (rc_xdrproc)xdr_rt_sized, &in, (rc_xdrproc)xdr_rt_big, &out),
	                 RC_SYSTEMERROR);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 5); /* answered, not waited out */
	rc_client_geterr(c, &e);
	assert_non_null(strstr(e.detail, "datagram"));
	assert_int_equal(rc_server_get_stats(s.srv, &stt), RC_OK);
	assert_int_equal(stt.replies_too_big, 1);
	assert_int_equal(__atomic_load_n(&toobig_traced, __ATOMIC_RELAXED), 1);
	in.n = 60000;
	assert_int_equal(rc_call(c, 8, (rc_xdrproc)xdr_rt_sized, &in, (rc_xdrproc)xdr_rt_big, &out),
	                 RC_OK);
	assert_true(rt_sized_ok(&out, 60000));
	rc_xdr_free((rc_xdrproc)xdr_rt_big, &out);
	rc_client_destroy(c);
	rt_stop(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rpc_version_3_gets_rpc_mismatch),
		cmocka_unit_test(replies_and_junk_are_dropped),
		cmocka_unit_test(malformed_auth_sys_is_badcred),
		cmocka_unit_test(trailing_and_truncated_args_are_garbage),
		cmocka_unit_test(retransmission_runs_once),
		cmocka_unit_test(datagram_batches_on_every_loop),
		cmocka_unit_test(joined_datagrams_on_every_loop),
		cmocka_unit_test(overlong_datagram_does_not_silence_threaded_listener),
		cmocka_unit_test(retransmission_after_many_calls_runs_once),
		cmocka_unit_test(full_cache_refuses_new_calls),
		cmocka_unit_test(full_table_evicts_and_counts),
		cmocka_unit_test(auth_hook_rejects),
		cmocka_unit_test(registration_rules),
		cmocka_unit_test(worker_threads_serve_in_parallel),
		cmocka_unit_test(calls_on_one_connection_run_in_parallel),
		cmocka_unit_test(pipelined_calls_on_threaded_server),
		cmocka_unit_test(big_replies_gathered),
		cmocka_unit_test(peer_gone_while_calls_run),
		cmocka_unit_test(burst_after_ping_pong),
		cmocka_unit_test(short_replies_do_not_wait_for_a_long_call),
		cmocka_unit_test(ipv6_loopback),
		cmocka_unit_test(application_loop_drives_server),
		cmocka_unit_test(stop_from_another_thread),
		cmocka_unit_test(single_udp_listener_served_outside_epoll),
		cmocka_unit_test(running_server_refuses_changes),
		cmocka_unit_test(spinning_server_serves_and_stops),
		cmocka_unit_test(unix_path_never_taken_from_a_live_server),
		cmocka_unit_test(listen_errors_say_why),
		cmocka_unit_test(udp_reply_too_big_is_system_err),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * The back channel, client side (rc_client_serve): a peer written here by hand (raw record
 * marks on a TCP or Unix socket) plays a server that calls the client back on the client's
 * own connection -- while the client waits in rc_call, while it is idle and driven by
 * rc_client_pollinfo/rc_client_advance, and while its handler calls the peer again -- and a
 * hostile one that sends replies nobody asked for and calls to programs the client does not
 * serve (PROG_UNAVAIL, or RPC_MISMATCH; the connection is kept).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <remotecall/remotecall.h>

#include "rt_raw.h"

#define FWD_PROG 0x20000a01u /* the peer's program, which the client calls */
#define CB_PROG 0x40000a01u  /* the client's program, which the peer calls back */
#define NCB 64               /* callbacks per forward call */

/* ---- the raw peer ------------------------------------------------------------------------ */

typedef struct peer {
	int lfd;
	char uri[128];
	char path[108];
	pthread_t th;
	void (*script)(struct peer *, int fd);
	int failures; /* checks the peer's script found false */
} peer;

#define PCHECK(P, cond)                                                                       \
	do {                                                                                      \
		if (!(cond)) {                                                                        \
			fprintf(stderr, "peer check failed line %d: %s\n", __LINE__, #cond);          \
			(P)->failures++;                                                              \
		}                                                                                     \
	} while (0)

/* A call: xid CALL 2 prog vers proc AUTH_NONE(0,0) AUTH_NONE(0,0) [arg]. */
static bool send_call(int fd, uint32_t xid, uint32_t rpcvers, uint32_t prog, uint32_t proc,
                      uint32_t arg)
{
	uint32_t w[11] = {xid, 0, rpcvers, prog, 1, proc, 0, 0, 0, 0, arg};
	return send_words(fd, w, 11);
}

/* An accepted SUCCESS reply with one word of result. */
static bool send_reply(int fd, uint32_t xid, uint32_t res)
{
	uint32_t w[7] = {xid, 1, 0, 0, 0, 0, res};
	return send_words(fd, w, 7);
}

static void *peer_main(void *arg)
{
	peer *p = arg;
	int fd = accept(p->lfd, NULL, NULL);
	if (fd < 0) {
		p->failures++;
		return NULL;
	}
	p->script(p, fd);
	close(fd);
	return NULL;
}

static void peer_start(peer *p, bool unix_sock, void (*script)(peer *, int))
{
	memset(p, 0, sizeof(*p));
	p->script = script;
	if (unix_sock) {
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		snprintf(p->path, sizeof(p->path), "/tmp/rc_bidir_%d.sock", (int)getpid());
		unlink(p->path);
		snprintf(a.sun_path, sizeof(a.sun_path), "%s", p->path);
		p->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
		assert_true(p->lfd >= 0);
		assert_int_equal(bind(p->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
		snprintf(p->uri, sizeof(p->uri), "unix://%s", p->path);
	} else {
		struct sockaddr_in a = {.sin_family = AF_INET};
		socklen_t al = sizeof(a);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		p->lfd = socket(AF_INET, SOCK_STREAM, 0);
		assert_true(p->lfd >= 0);
		assert_int_equal(bind(p->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
		assert_int_equal(getsockname(p->lfd, (struct sockaddr *)&a, &al), 0);
		snprintf(p->uri, sizeof(p->uri), "tcp://127.0.0.1:%u", ntohs(a.sin_port));
	}
	assert_int_equal(listen(p->lfd, 4), 0);
	assert_int_equal(pthread_create(&p->th, NULL, peer_main, p), 0);
}

static void peer_stop(peer *p)
{
	pthread_join(p->th, NULL);
	close(p->lfd);
	if (p->path[0])
		unlink(p->path);
	assert_int_equal(p->failures, 0);
}

/* ---- the client's program: CB_PROG 1, procedure 1 adds one, procedure 2 calls the peer ---- */

typedef struct cbctx {
	rc_client *clnt; /* for procedure 2 */
	int served;
} cbctx;

static bool cb_add(void *args, void *res, rc_svc_req *req)
{
	cbctx *x = rc_svc_req_context(req);
	__atomic_fetch_add(&x->served, 1, __ATOMIC_RELAXED);
	*(uint32_t *)res = *(uint32_t *)args + 1;
	return true;
}

/* Calls the peer's procedure 3 from inside the handler, on the same client. */
static bool cb_nested(void *args, void *res, rc_svc_req *req)
{
	cbctx *x = rc_svc_req_context(req);
	uint32_t a = *(uint32_t *)args, r = 0;
	if (rc_call(x->clnt, 3, (rc_xdrproc)rc_xdr_u_int, &a, (rc_xdrproc)rc_xdr_u_int, &r) !=
	    RC_OK)
		return false;
	__atomic_fetch_add(&x->served, 1, __ATOMIC_RELAXED);
	*(uint32_t *)res = r;
	return true;
}

static const rc_procinfo cb_info[2] = {
    {CB_PROG, 1, 1, "CB_ADD", (rc_xdrproc)rc_xdr_u_int, 4, (rc_xdrproc)rc_xdr_u_int, 4},
    {CB_PROG, 1, 2, "CB_NESTED", (rc_xdrproc)rc_xdr_u_int, 4, (rc_xdrproc)rc_xdr_u_int, 4},
};
static const rc_svc_proc cb_procs[2] = {{&cb_info[0], cb_add}, {&cb_info[1], cb_nested}};
static const rc_svc_prog cb_prog = {CB_PROG, 1, 2, cb_procs};

/* ---- scripts ------------------------------------------------------------------------------ */

/* Each forward call (proc 1, arg a) draws NCB callbacks CB_ADD(a * 100 + i), all sent at
 * once, and is answered a + 1000 once every one of them is answered right. Forward calls
 * may be pipelined: the records are handled in the order they come, until the client closes. */
#define MAXFWD 256
static void script_callbacks(peer *p, int fd)
{
	uint32_t w[64], fxid[MAXFWD], farg[MAXFWD];
	unsigned left[MAXFWD], nf = 0;
	unsigned char seen[MAXFWD][NCB];
	int n;
	memset(seen, 0, sizeof(seen));
	while ((n = recv_words(fd, w, 64)) > 0) {
		if (w[1] == 0) { /* a forward call */
			PCHECK(p, n == 11 && w[3] == FWD_PROG && w[5] == 1 && nf < MAXFWD);
			if (nf >= MAXFWD)
				return;
			fxid[nf] = w[0];
			farg[nf] = w[10];
			left[nf] = NCB;
			for (uint32_t i = 0; i < NCB; i++)
				PCHECK(p, send_call(fd, 0x70000000u + nf * NCB + i, 2, CB_PROG, 1,
				                    farg[nf] * 100 + i));
			nf++;
			continue;
		}
		/* a reply to a callback */
		PCHECK(p, n == 7 && w[1] == 1 && w[2] == 0 && w[5] == 0);
		if (n == 7 && w[0] >= 0x70000000u && w[0] < 0x70000000u + nf * NCB) {
			uint32_t f = (w[0] - 0x70000000u) / NCB, k = (w[0] - 0x70000000u) % NCB;
			PCHECK(p, !seen[f][k] && w[6] == farg[f] * 100 + k + 1);
			seen[f][k] = 1;
			if (--left[f] == 0)
				PCHECK(p, send_reply(fd, fxid[f], farg[f] + 1000));
		}
	}
}

/* The client serves callbacks while it waits for its reply: every one answered, on TCP. */
static void run_during_call(bool unix_sock)
{
	peer p;
	rc_client *c;
	cbctx x = {NULL, 0};
	peer_start(&p, unix_sock, script_callbacks);
	assert_int_equal(rc_client_create(&c, p.uri, FWD_PROG, 1), RC_OK);
	rc_client_set_timeout(c, 10000);
	assert_int_equal(rc_client_serve(c, &cb_prog, &x), RC_OK);
	for (uint32_t k = 0; k < 8; k++) {
		uint32_t r = 0;
		assert_int_equal(rc_call(c, 1, (rc_xdrproc)rc_xdr_u_int, &k, (rc_xdrproc)rc_xdr_u_int,
		                         &r),
		                 RC_OK);
		assert_int_equal(r, k + 1000);
	}
	assert_int_equal(x.served, 8 * NCB);
	rc_client_destroy(c);
	peer_stop(&p);
}

static void served_during_call_tcp(void **state)
{
	(void)state;
	run_during_call(false);
}

static void served_during_call_unix(void **state)
{
	(void)state;
	run_during_call(true);
}

/* Pipelined: 64 forward calls started at once, each drawing NCB callbacks, driven by
 * rc_client_advance from a poll loop. */
static void pipelined_both_ways(void **state)
{
	peer p;
	rc_client *c;
	cbctx x = {NULL, 0};
	rc_async *h[64];
	uint32_t arg[64], res[64];
	(void)state;
	peer_start(&p, false, script_callbacks);
	assert_int_equal(rc_client_create(&c, p.uri, FWD_PROG, 1), RC_OK);
	rc_client_set_timeout(c, 20000);
	assert_int_equal(rc_client_serve(c, &cb_prog, &x), RC_OK);
	for (uint32_t k = 0; k < 64; k++) {
		arg[k] = k;
		assert_int_equal(rc_call_start(c, 1, (rc_xdrproc)rc_xdr_u_int, &arg[k],
		                               (rc_xdrproc)rc_xdr_u_int, &res[k], NULL, NULL, &h[k]),
		                 RC_OK);
	}
	while (rc_client_inflight(c) > 0) {
		struct pollfd pf;
		int tmo;
		assert_int_equal(rc_client_pollinfo(c, &pf.fd, &pf.events, &tmo), RC_OK);
		pf.revents = 0;
		if (pf.fd >= 0)
			assert_true(poll(&pf, 1, tmo < 0 || tmo > 1000 ? 1000 : tmo) >= 0);
		rc_client_advance(c, pf.revents);
	}
	for (uint32_t k = 0; k < 64; k++) {
		assert_int_equal(rc_async_status(h[k]), RC_OK);
		assert_int_equal(res[k], k + 1000);
		rc_async_release(h[k]);
	}
	assert_int_equal(x.served, 64 * NCB);
	rc_client_destroy(c);
	peer_stop(&p);
}

/* Four threads share one serving client, 50 blocking calls each, every call drawing NCB
 * callbacks: whichever thread reads a callback serves it, each gets its own reply. */
#define NTHR 4
#define PERTHR 50
typedef struct thr_arg {
	rc_client *c;
	uint32_t base;
	int ok;
} thr_arg;

static void *thr_calls(void *v)
{
	thr_arg *t = v;
	for (uint32_t k = 0; k < PERTHR; k++) {
		uint32_t a = t->base + k, r = 0;
		if (rc_call(t->c, 1, (rc_xdrproc)rc_xdr_u_int, &a, (rc_xdrproc)rc_xdr_u_int, &r) ==
		        RC_OK &&
		    r == a + 1000)
			t->ok++;
	}
	return NULL;
}

static void threads_share_client(void **state)
{
	peer p;
	rc_client *c;
	cbctx x = {NULL, 0};
	pthread_t th[NTHR];
	thr_arg t[NTHR];
	(void)state;
	peer_start(&p, false, script_callbacks);
	assert_int_equal(rc_client_create(&c, p.uri, FWD_PROG, 1), RC_OK);
	rc_client_set_timeout(c, 20000);
	assert_int_equal(rc_client_serve(c, &cb_prog, &x), RC_OK);
	for (int i = 0; i < NTHR; i++) {
		t[i] = (thr_arg){c, (uint32_t)i * 1000, 0};
		assert_int_equal(pthread_create(&th[i], NULL, thr_calls, &t[i]), 0);
	}
	for (int i = 0; i < NTHR; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(t[i].ok, PERTHR);
	}
	assert_int_equal(x.served, NTHR * PERTHR * NCB);
	rc_client_destroy(c);
	peer_stop(&p);
}

/* The peer answers one forward call, then calls the idle client back once. */
static void script_idle(peer *p, int fd)
{
	uint32_t w[64];
	int n = recv_words(fd, w, 64);
	PCHECK(p, n == 10); /* (void argument) */
	PCHECK(p, send_reply(fd, w[0], 5));
	PCHECK(p, send_call(fd, 0x51, 2, CB_PROG, 1, 41));
	n = recv_words(fd, w, 64);
	PCHECK(p, n == 7 && w[0] == 0x51 && w[1] == 1 && w[5] == 0 && w[6] == 42);
	n = recv_words(fd, w, 64); /* the client closes */
	PCHECK(p, n == -1);
}

/* An idle client's descriptor asks for POLLIN while it serves; rc_client_advance serves. */
static void served_when_idle(void **state)
{
	peer p;
	rc_client *c;
	cbctx x = {NULL, 0};
	uint32_t r = 0;
	(void)state;
	peer_start(&p, false, script_idle);
	assert_int_equal(rc_client_create(&c, p.uri, FWD_PROG, 1), RC_OK);
	assert_int_equal(rc_client_serve(c, &cb_prog, &x), RC_OK);
	assert_int_equal(rc_call(c, 1, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_u_int, &r),
	                 RC_OK);
	assert_int_equal(r, 5);
	for (int i = 0; i < 100 && x.served == 0; i++) {
		struct pollfd pf;
		int tmo;
		assert_int_equal(rc_client_pollinfo(c, &pf.fd, &pf.events, &tmo), RC_OK);
		assert_true(pf.fd >= 0 && (pf.events & POLLIN));
		pf.revents = 0;
		assert_true(poll(&pf, 1, 100) >= 0);
		assert_int_equal(rc_client_advance(c, pf.revents), RC_OK);
	}
	assert_int_equal(x.served, 1);
	rc_client_destroy(c);
	peer_stop(&p);
}

/* Forward call A (proc 1); callback CB_NESTED(7); the client's handler calls proc 3 (answered
 * 7 * 2); the callback's reply carries 14; then A is answered. */
static void script_nested(peer *p, int fd)
{
	uint32_t w[64];
	int n = recv_words(fd, w, 64);
	uint32_t a = w[0];
	PCHECK(p, n == 11 && w[5] == 1);
	PCHECK(p, send_call(fd, 0x99, 2, CB_PROG, 2, 7));
	n = recv_words(fd, w, 64);
	PCHECK(p, n == 11 && w[1] == 0 && w[5] == 3 && w[10] == 7);
	PCHECK(p, send_reply(fd, w[0], w[10] * 2));
	n = recv_words(fd, w, 64);
	PCHECK(p, n == 7 && w[0] == 0x99 && w[5] == 0 && w[6] == 14);
	PCHECK(p, send_reply(fd, a, 77));
	PCHECK(p, recv_words(fd, w, 64) == -1);
}

/* A handler calls the peer again on the same client while the client's own call waits. */
static void handler_calls_back(void **state)
{
	peer p;
	rc_client *c;
	cbctx x = {NULL, 0};
	uint32_t r = 0, a = 1;
	(void)state;
	peer_start(&p, false, script_nested);
	assert_int_equal(rc_client_create(&c, p.uri, FWD_PROG, 1), RC_OK);
	rc_client_set_timeout(c, 10000);
	x.clnt = c;
	assert_int_equal(rc_client_serve(c, &cb_prog, &x), RC_OK);
	assert_int_equal(rc_call(c, 1, (rc_xdrproc)rc_xdr_u_int, &a, (rc_xdrproc)rc_xdr_u_int, &r),
	                 RC_OK);
	assert_int_equal(r, 77);
	assert_int_equal(x.served, 1);
	rc_client_destroy(c);
	peer_stop(&p);
}

/* Hostile: a reply to an xid never sent, a call to a program not served, a call of RPC
 * version 3 -- each before the real reply, which must still arrive. */
static void script_hostile(peer *p, int fd)
{
	uint32_t w[64];
	int n = recv_words(fd, w, 64);
	uint32_t a = w[0];
	PCHECK(p, n == 10); /* (void argument) */
	PCHECK(p, send_reply(fd, a ^ 0x5555u, 9)); /* unknown xid: ignored */
	PCHECK(p, send_call(fd, 0x61, 2, 0x12345, 1, 0));
	n = recv_words(fd, w, 64);
	PCHECK(p, n == 6 && w[0] == 0x61 && w[1] == 1 && w[2] == 0 && w[5] == 1); /* PROG_UNAVAIL */
	PCHECK(p, send_call(fd, 0x62, 3, CB_PROG, 1, 0));
	n = recv_words(fd, w, 64);
	PCHECK(p, n == 6 && w[0] == 0x62 && w[1] == 1 && w[2] == 1 && w[3] == 0 && w[4] == 2 &&
	              w[5] == 2); /* MSG_DENIED RPC_MISMATCH 2..2 */
	PCHECK(p, send_reply(fd, a, 3));
	PCHECK(p, recv_words(fd, w, 64) == -1);
}

static void run_hostile(bool serving)
{
	peer p;
	rc_client *c;
	cbctx x = {NULL, 0};
	uint32_t r = 0;
	peer_start(&p, false, script_hostile);
	assert_int_equal(rc_client_create(&c, p.uri, FWD_PROG, 1), RC_OK);
	rc_client_set_timeout(c, 10000);
	if (serving)
		assert_int_equal(rc_client_serve(c, &cb_prog, &x), RC_OK);
	assert_int_equal(rc_call(c, 1, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_u_int, &r),
	                 RC_OK);
	assert_int_equal(r, 3);
	assert_int_equal(x.served, 0);
	rc_client_destroy(c);
	peer_stop(&p);
}

static void hostile_peer_serving_nothing(void **state)
{
	(void)state;
	run_hostile(false);
}

static void hostile_peer_unregistered_program(void **state)
{
	(void)state;
	run_hostile(true);
}

/* The peer reads the forward calls, sends callbacks and closes without reading their
 * replies or answering anything. */
static void script_close(peer *p, int fd)
{
	uint32_t w[64];
	for (int k = 0; k < 4; k++)
		PCHECK(p, recv_words(fd, w, 64) == 11);
	for (uint32_t i = 0; i < NCB; i++)
		PCHECK(p, send_call(fd, 0x300 + i, 2, CB_PROG, 1, i));
}

/* The connection closes with forward calls in flight and callbacks read but perhaps not yet
 * served: every call completes with an error, nothing hangs (and nothing leaks: the sanitizer
 * build runs this too). */
static void closed_with_both_in_flight(void **state)
{
	peer p;
	rc_client *c;
	cbctx x = {NULL, 0};
	rc_async *h[4];
	uint32_t arg[4], res[4], r = 0;
	(void)state;
	peer_start(&p, false, script_close);
	assert_int_equal(rc_client_create(&c, p.uri, FWD_PROG, 1), RC_OK);
	rc_client_set_timeout(c, 10000);
	assert_int_equal(rc_client_serve(c, &cb_prog, &x), RC_OK);
	for (uint32_t k = 0; k < 3; k++) {
		arg[k] = k;
		assert_int_equal(rc_call_start(c, 1, (rc_xdrproc)rc_xdr_u_int, &arg[k],
		                               (rc_xdrproc)rc_xdr_u_int, &res[k], NULL, NULL, &h[k]),
		                 RC_OK);
	}
	arg[3] = 3;
	{
		rc_status st = rc_call(c, 1, (rc_xdrproc)rc_xdr_u_int, &arg[3],
		                       (rc_xdrproc)rc_xdr_u_int, &r);
		assert_true(st == RC_CANTRECV || st == RC_CANTSEND);
	}
	for (int k = 0; k < 3; k++) {
		rc_status st = rc_async_wait(h[k], 5000);
		assert_true(st == RC_CANTRECV || st == RC_CANTSEND);
		rc_async_release(h[k]);
	}
	assert_true(x.served <= NCB);
	rc_client_destroy(c);
	peer_stop(&p);
}

/* Datagram clients have no back channel; bad arguments. */
static void serve_refused(void **state)
{
	rc_client *c;
	(void)state;
	assert_int_equal(rc_client_create(&c, "udp://127.0.0.1:9", FWD_PROG, 1), RC_OK);
	assert_int_equal(rc_client_serve(c, &cb_prog, NULL), RC_NOTSUPP);
	assert_int_equal(rc_client_serve(c, NULL, NULL), RC_INVAL);
	assert_int_equal(rc_client_serve(NULL, &cb_prog, NULL), RC_INVAL);
	rc_client_destroy(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(served_during_call_tcp),
	    cmocka_unit_test(served_during_call_unix),
	    cmocka_unit_test(pipelined_both_ways),
	    cmocka_unit_test(threads_share_client),
	    cmocka_unit_test(served_when_idle),
	    cmocka_unit_test(handler_calls_back),
	    cmocka_unit_test(hostile_peer_serving_nothing),
	    cmocka_unit_test(hostile_peer_unregistered_program),
	    cmocka_unit_test(closed_with_both_in_flight),
	    cmocka_unit_test(serve_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

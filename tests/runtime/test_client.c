/* The client against a real server over every transport: calls, errors, timeouts, threads,
 * select-based driving, started calls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <poll.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <signal.h>
#include <sys/socket.h>
#include <arpa/inet.h>

#include "rt_fixture.h"
#include "tests/transports/offload.h"

static const char *const rt_uris[] = {"udp://127.0.0.1:0", "tcp://127.0.0.1:0",
                                      "unix:/tmp/rc-test-client.sock", "inproc:test-client",
                                      NULL};
static rt_server S;

static int setup(void **st)
{
	(void)st;
	return rt_start(&S, rt_uris, 1);
}

static int teardown(void **st)
{
	(void)st;
	rt_stop(&S);
	return 0;
}

static rc_client *connect_to(int i, uint32_t vers)
{
	rc_client *c = NULL;
	assert_int_equal(rc_client_create(&c, S.uri[i], RT_PROG, vers), RC_OK);
	assert_non_null(c);
	return c;
}

static void echo_sizes_on(int i)
{
	static const size_t sizes[] = {0, 1, 4, 400, 4000, 8000, 60000, 1u << 20};
	rc_client *c = connect_to(i, 1);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		rt_blob in = {(uint32_t)sizes[k], malloc(sizes[k] + 1)}, out = {0, NULL};
		rc_status st;
		for (size_t j = 0; j < sizes[k]; j++)
			in.val[j] = (char)(j * 31 + k);
		st = rc_call(c, 1, (rc_xdrproc)xdr_rt_blob, &in, (rc_xdrproc)xdr_rt_blob, &out);
		if (i == 0 && sizes[k] > 65000) {
			assert_int_equal(st, RC_MSGTOOLARGE); /* too big for a datagram: said so */
		} else {
			assert_int_equal(st, RC_OK);
			assert_int_equal(out.len, in.len);
			assert_memory_equal(out.val, in.val, in.len);
		}
		rc_xdr_free((rc_xdrproc)xdr_rt_blob, &out);
		free(in.val);
		/* a void call after each: one following a message that outgrew the stack goes out
		 * of the heap buffer the client kept */
		assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_OK);
	}
	rc_client_destroy(c);
}

static void echo_udp(void **st) { (void)st; echo_sizes_on(0); }
static void echo_tcp(void **st) { (void)st; echo_sizes_on(1); }
static void echo_unix(void **st) { (void)st; echo_sizes_on(2); }
static void echo_inproc(void **st) { (void)st; echo_sizes_on(3); }

static void errors_each_kind(void **state)
{
	(void)state;
	for (int i = 0; i < 4; i++) {
		rc_client *c;
		rc_error e;
		/* unknown procedure */
		c = connect_to(i, 1);
		assert_int_equal(rc_call(c, 77, NULL, NULL, NULL, NULL), RC_PROCUNAVAIL);
		/* routine failed: SYSTEM_ERR */
		assert_int_equal(rc_call(c, 4, NULL, NULL, NULL, NULL), RC_SYSTEMERROR);
		/* garbage arguments: ADD wants 8 bytes, send 4 */
		{
			int32_t v = 5;
			assert_int_equal(rc_call(c, 2, (rc_xdrproc)rc_xdr_int, &v, (rc_xdrproc)rc_xdr_hyper,
			                         &(int64_t){0}),
			                 RC_CANTDECODEARGS);
		}
		rc_client_destroy(c);
		/* unknown version: the range comes back */
		c = connect_to(i, 7);
		assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_PROGVERSMISMATCH);
		rc_client_geterr(c, &e);
		assert_int_equal(e.status, RC_PROGVERSMISMATCH);
		assert_int_equal(e.low, 1);
		assert_int_equal(e.high, 2);
		rc_client_destroy(c);
		/* unknown program */
		assert_int_equal(rc_client_create(&c, S.uri[i], RT_PROG + 1, 1), RC_OK);
		assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_PROGUNAVAIL);
		rc_client_destroy(c);
	}
}

static void auth_sys_reaches_server(void **state)
{
	rc_client *c = connect_to(1, 1);
	uint32_t gids[3] = {10, 20, 30};
	char *who = NULL;
	(void)state;
	assert_int_equal(rc_client_set_auth_sys(c, "host-a", 1000, 100, gids, 3), RC_OK);
	assert_int_equal(rc_call(c, 5, NULL, NULL, (rc_xdrproc)xdr_rt_str, &who), RC_OK);
	assert_string_equal(who, "host-a:1000:100:3");
	rc_xdr_free((rc_xdrproc)xdr_rt_str, &who);
	assert_int_equal(rc_client_set_auth_none(c), RC_OK);
	assert_int_equal(rc_call(c, 5, NULL, NULL, (rc_xdrproc)xdr_rt_str, &who), RC_OK);
	assert_string_equal(who, "none");
	rc_xdr_free((rc_xdrproc)xdr_rt_str, &who);
	assert_int_equal(rc_client_set_auth_sys(c, "x", 0, 0, gids, 17), RC_INVAL);
	rc_client_destroy(c);
}

static void bad_uris(void **state)
{
	rc_client *c = (rc_client *)1;
	char longhost[5000];
	(void)state;
	assert_int_equal(rc_client_create(&c, "ftp://x:1", 1, 1), RC_UNKNOWNPROTO);
	assert_null(c);
	assert_int_equal(rc_client_create(&c, "udp://127.0.0.1:99999", 1, 1), RC_UNKNOWNADDR);
	assert_int_equal(rc_client_create(&c, "udp://[::1", 1, 1), RC_UNKNOWNADDR);
	assert_int_equal(rc_client_create(&c, "udp:127.0.0.1:5", 1, 1), RC_UNKNOWNADDR);
	assert_int_equal(rc_client_create(&c, "tcp://no-such-host.invalid:5", 1, 1), RC_UNKNOWNHOST);
	memset(longhost, 'a', sizeof(longhost));
	memcpy(longhost, "tcp://", 6);
	longhost[200] = '\0';
	assert_int_equal(rc_client_create(&c, longhost, 1, 1), RC_UNKNOWNADDR);
	longhost[200] = 'a';
	longhost[4096] = '\0';
	assert_int_equal(rc_client_create(&c, longhost, 1, 1), RC_UNKNOWNADDR);
	memcpy(longhost, "unix:/", 6);
	longhost[200] = '\0';
	assert_int_equal(rc_client_create(&c, longhost, 1, 1), RC_UNKNOWNADDR);
	assert_int_equal(rc_client_create(NULL, "udp://1.2.3.4:5", 1, 1), RC_INVAL);
	assert_int_equal(rc_client_create(&c, NULL, 1, 1), RC_INVAL);
}

/* rc_broadcast's reply handler where none may come. */
static bool never_reply(void *udata, const void *res, const struct sockaddr *from,
                        unsigned fromlen)
{
	(void)udata, (void)res, (void)from, (void)fromlen;
	fail_msg("a reply to a broadcast that should not have gone");
	return true;
}

/* A client URI's query is checked against the one key table a listen URI's also goes through
 * (test_server listen_errors_say_why): an unknown key, a bad value and a malformed pair are
 * refused with the keys a client takes. */
static void uri_query_refusals_list_keys(void **state)
{
	static const char *const keys = "a client URI takes tls=off|opportunistic|required, ca, "
	                                "cadir, cert, key, name, streams";
	rc_client *c = NULL;
	rc_error e;
	char want[200];
	(void)state;
	assert_int_equal(rc_client_create_ex(&c, "tcp://127.0.0.1:9?colour=blue", 1, 1, &e),
	                 RC_UNKNOWNADDR);
	assert_null(c);
	snprintf(want, sizeof want, "URI query: unknown key colour; %s", keys);
	assert_string_equal(e.detail, want);
	assert_int_equal(rc_client_create_ex(&c, "tcp://127.0.0.1:9?tls=maybe", 1, 1, &e),
	                 RC_UNKNOWNADDR);
	assert_string_equal(e.detail, "URI query: tls=maybe; tls takes off|opportunistic|required");
	assert_int_equal(rc_client_create_ex(&c, "udp://127.0.0.1:9?ca=a.pem&tls", 1, 1, &e),
	                 RC_UNKNOWNADDR);
	snprintf(want, sizeof want, "URI query: tls is not key=value; %s", keys);
	assert_string_equal(e.detail, want);
	assert_int_equal(rc_client_create_ex(&c, "udp://127.0.0.1:9?name=%4", 1, 1, &e),
	                 RC_UNKNOWNADDR);
	assert_string_equal(e.detail, "URI query: the value of name is malformed (%XX escapes) or "
	                              "too long");
	/* a broadcast takes no query (its keys are TLS's; none over UDP): refused, not ignored */
	assert_int_equal(rc_broadcast("udp://127.0.0.1:9?tls=off", RT_PROG, 1, 0,
	                              (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void, 0,
	                              never_reply, NULL, 1),
	                 RC_UNKNOWNADDR);
	/* what the table takes is taken: an escaped value, off */
	assert_int_equal(rc_client_create_ex(&c, "udp://127.0.0.1:9?name=a%2Db&tls=off", 1, 1, &e),
	                 RC_OK);
	rc_client_destroy(c);
}

/* A socket of type (SOCK_DGRAM, SOCK_STREAM) bound to a free loopback port, listening if
 * asked, and its URI ("udp://" or "tcp://127.0.0.1:PORT") in uri: a peer the test plays. */
static int loopback_socket(int type, bool listening, char *uri, size_t urisize)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	int fd = socket(AF_INET, type, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	if (listening)
		assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	snprintf(uri, urisize, "%s://127.0.0.1:%u", type == SOCK_DGRAM ? "udp" : "tcp",
	         (unsigned)ntohs(a.sin_port));
	return fd;
}

static void dead_server_times_out(void **state)
{
	rc_client *c;
	struct timespec a, b;
	double ms;
	(void)state;
	/* a UDP port nobody listens on: ICMP refusal or timeout, within the deadline */
	assert_int_equal(rc_client_create(&c, "udp://127.0.0.1:9", RT_PROG, 1), RC_OK);
	rc_client_set_timeout(c, 300);
	clock_gettime(CLOCK_MONOTONIC, &a);
	rc_status st = rc_call(c, 0, NULL, NULL, NULL, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_true(st == RC_TIMEDOUT || st == RC_CANTRECV);
	ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
	assert_true(ms < 1000);
	rc_client_destroy(c);
	/* a TCP port nobody listens on: refused at create */
	assert_int_equal(rc_client_create(&c, "tcp://127.0.0.1:9", RT_PROG, 1), RC_CANTSEND);
}

/* A UDP call nobody answers (a bound socket that never replies: no ICMP refusal) ends with
 * RC_TIMEDOUT when its total time is up -- not early, and not a retry interval late: the fast
 * step reads no clock (rc__call) and charges its first receive's whole wait when it ran out. */
static void silent_udp_times_out_on_time(void **state)
{
	struct timespec t0, t1;
	char uri[64];
	int fd = loopback_socket(SOCK_DGRAM, false, uri, sizeof uri);
	rc_client *c;
	double ms;

	(void)state;
	assert_int_equal(rc_client_create(&c, uri, RT_PROG, 1), RC_OK);
	assert_int_equal(rc_client_set_timeout(c, 300), RC_OK);
	assert_int_equal(rc_client_set_retry(c, 100), RC_OK);
	for (int i = 0; i < 2; i++) { /* the fast step, then again on a client that timed out */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_TIMEDOUT);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
		assert_true(ms >= 295);
		assert_true(ms < 390); /* (a wait not charged would end near 400) */
	}
	rc_client_destroy(c);
	close(fd);
}

static void slow_call_times_out(void **state)
{
	rc_client *c = connect_to(1, 1);
	uint32_t ms = 400, res = 0;
	(void)state;
	rc_client_set_timeout(c, 100);
	assert_int_equal(rc_call(c, 3, (rc_xdrproc)rc_xdr_u_int, &ms, (rc_xdrproc)rc_xdr_u_int, &res),
	                 RC_TIMEDOUT);
	/* the late reply is discarded and the next call is answered correctly */
	rc_client_set_timeout(c, 5000);
	ms = 1;
	usleep(500000);
	assert_int_equal(rc_call(c, 3, (rc_xdrproc)rc_xdr_u_int, &ms, (rc_xdrproc)rc_xdr_u_int, &res),
	                 RC_OK);
	assert_int_equal(res, 1);
	rc_client_destroy(c);
}

typedef struct { rc_client *c; int n; int ok; } thr_arg;

static void *thr_adds(void *p)
{
	thr_arg *a = p;
	for (int i = 0; i < a->n; i++) {
		int64_t v = 1, r = 0;
		if (rc_call(a->c, 2, (rc_xdrproc)rc_xdr_hyper, &v, (rc_xdrproc)rc_xdr_hyper, &r) == RC_OK)
			a->ok++;
	}
	return NULL;
}

static void threads_share_client(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++) {
		rc_client *c = connect_to(i, 1);
		pthread_t t[6];
		thr_arg a[6];
		int64_t before, after, zero = 0;
		assert_int_equal(rc_call(c, 2, (rc_xdrproc)rc_xdr_hyper, &zero, (rc_xdrproc)rc_xdr_hyper, &before), RC_OK);
		for (int k = 0; k < 6; k++) {
			a[k] = (thr_arg){c, 300, 0};
			pthread_create(&t[k], NULL, thr_adds, &a[k]);
		}
		for (int k = 0; k < 6; k++) {
			pthread_join(t[k], NULL);
			assert_int_equal(a[k].ok, 300);
		}
		assert_int_equal(rc_call(c, 2, (rc_xdrproc)rc_xdr_hyper, &zero, (rc_xdrproc)rc_xdr_hyper, &after), RC_OK);
		assert_int_equal(after - before, 1800);
		rc_client_destroy(c);
	}
}

/* Drive c from a poll() loop of our own until *done reaches target (at most spins turns). */
static void drive(rc_client *c, const int *done, int target, int spins)
{
	for (int i = 0; *done < target && i < spins; i++) {
		int fd, tmo;
		short ev;
		assert_int_equal(rc_client_pollinfo(c, &fd, &ev, &tmo), RC_OK);
		struct pollfd pf = {fd, ev, 0};
		int n = fd >= 0 ? poll(&pf, 1, tmo < 0 ? 1000 : tmo) : 0;
		rc_client_advance(c, n > 0 ? pf.revents : 0);
	}
}

static int cb_count;
static rc_status cb_last;
static void on_done(rc_async *call, rc_status st, void *udata)
{
	(void)call;
	cb_count++;
	cb_last = st;
	(*(int *)udata)++;
}

static void select_driven_calls(void **state)
{
	(void)state;
	for (int i = 0; i < 4; i++) {
		rc_client *c = connect_to(i, 1);
		int64_t args[32], res[32];
		int done = 0;
		cb_count = 0;
		for (int k = 0; k < 32; k++) {
			args[k] = 0;
			assert_int_equal(rc_call_start(c, 2, (rc_xdrproc)rc_xdr_hyper, &args[k],
			                               (rc_xdrproc)rc_xdr_hyper, &res[k], on_done, &done, NULL),
			                 RC_OK);
		}
		assert_int_equal(cb_count, 0); /* never inside the start call */
		drive(c, &done, 32, 10000);
		assert_int_equal(done, 32);
		assert_int_equal(cb_count, 32);
		if (cb_last != RC_OK)
			print_error("transport %d: %s\n", i, rc_strerror(cb_last));
		assert_int_equal(cb_last, RC_OK);
		assert_int_equal(rc_client_inflight(c), 0);
		rc_client_destroy(c);
	}
}

/*
 * Pipelined echo calls re-issued from their callbacks (as a pipelining client does), on every
 * transport: over UDP the callbacks' calls are corked and leave together (sendmmsg) and the
 * replies are read in batches (recvmmsg). Every reply must reach its own call -- each echo
 * carries its slot and round -- and each call completes once.
 */
typedef struct pslot {
	rc_client *c;
	uint32_t k, round;
	char out[16], in[16];
	rt_blob arg, res;
	int *done, *started, total;
	bool bad;
} pslot;

static void pipe_start(pslot *s);

static void on_pipe(rc_async *call, rc_status st, void *udata)
{
	pslot *s = udata;
	(void)call;
	(*s->done)++;
	if (st != RC_OK || s->res.len != s->arg.len || memcmp(s->res.val, s->out, s->arg.len) != 0)
		s->bad = true;
	rc_xdr_free((rc_xdrproc)xdr_rt_blob, &s->res);
	if (*s->started < s->total)
		pipe_start(s);
}

static void pipe_start(pslot *s)
{
	s->round++;
	snprintf(s->out, sizeof(s->out), "%u:%u", s->k, s->round);
	s->arg.len = (uint32_t)strlen(s->out);
	s->arg.val = s->out;
	memset(&s->res, 0, sizeof(s->res));
	(*s->started)++;
	assert_int_equal(rc_call_start(s->c, 1, (rc_xdrproc)xdr_rt_blob, &s->arg,
	                               (rc_xdrproc)xdr_rt_blob, &s->res, on_pipe, s, NULL),
	                 RC_OK);
}

static void pipelined_calls_reissued_from_callbacks(void **state)
{
	enum { DEPTH = 48, TOTAL = 3000 };
	static pslot slot[DEPTH];
	(void)state;
	for (int i = 0; i < 4; i++) {
		rc_client *c = connect_to(i, 1);
		int done = 0, started = 0;
		for (uint32_t k = 0; k < DEPTH; k++) {
			slot[k] = (pslot){.c = c, .k = k, .done = &done, .started = &started,
			                  .total = TOTAL};
			pipe_start(&slot[k]);
		}
		drive(c, &done, TOTAL, 100000);
		assert_int_equal(done, TOTAL);
		assert_int_equal(started, TOTAL);
		for (uint32_t k = 0; k < DEPTH; k++)
			assert_false(slot[k].bad);
		assert_int_equal(rc_client_inflight(c), 0);
		rc_client_destroy(c);
	}
}

/* 64 started calls on a stream: the first 32 waited for one by one (the waiting thread reads
 * the replies, several a read), the rest through the application's poll loop, which must be
 * told of replies already read -- the descriptor will not announce them. Before the fix the
 * loop slept until the calls' deadline. */
static void replies_read_ahead_reach_poll_loop(void **state)
{
	int64_t args[64], res[64];
	rc_async *h[64];
	(void)state;
	for (int i = 1; i < 4; i++) { /* the stream transports */
		rc_client *c = connect_to(i, 1);
		int64_t t0 = (int64_t)time(NULL);
		for (int k = 0; k < 64; k++) {
			args[k] = k;
			assert_int_equal(rc_call_start(c, 2, (rc_xdrproc)rc_xdr_hyper, &args[k],
			                               (rc_xdrproc)rc_xdr_hyper, &res[k], NULL, NULL, &h[k]),
			                 RC_OK);
		}
		for (int k = 0; k < 32; k++) {
			assert_int_equal(rc_async_wait(h[k], 10000), RC_OK);
			rc_async_release(h[k]);
		}
		rt_poll_loop(c, 1000);
		for (int k = 32; k < 64; k++) {
			assert_int_equal(rc_async_status(h[k]), RC_OK);
			rc_async_release(h[k]);
		}
		assert_true((int64_t)time(NULL) - t0 < 5); /* not a sleep until a deadline */
		rc_client_destroy(c);
	}
}

/* A fake UDP server's reply to call xid: MSG_ACCEPTED, AUTH_NONE, SUCCESS, a hyper v. */
static size_t fake_reply(unsigned char *b, uint32_t xid, int64_t v)
{
	uint32_t w[8] = {htonl(xid), htonl(1), 0, 0, 0, 0, htonl((uint32_t)((uint64_t)v >> 32)),
	                 htonl((uint32_t)v)};
	memcpy(b, w, sizeof w);
	return sizeof w;
}

/* The fake server's socket fd takes the next call (within 2 s): its xid, its sender in *from. */
static uint32_t fake_take(int fd, struct sockaddr_storage *from, socklen_t *fromlen)
{
	unsigned char m[512];
	uint32_t x;
	struct pollfd p = {fd, POLLIN, 0};

	assert_int_equal(poll(&p, 1, 2000), 1);
	*fromlen = sizeof *from;
	assert_true(recvfrom(fd, m, sizeof m, 0, (struct sockaddr *)from, fromlen) >= 4);
	memcpy(&x, m, 4);
	return ntohl(x);
}

/*
 * UDP with receive offload on: a server that answers pipelined calls with one segmentation
 * offload send (remotecall's does) delivers the replies joined. A thread waiting for one
 * reply takes that datagram; the other replies are cut apart into the transport, where no
 * readiness of the descriptor announces them: the application's poll loop must still see
 * them at once (rc_client_pollinfo "now", rc_client_advance reading them).
 */
static void joined_replies_reach_poll_loop(void **state)
{
	enum { N = 48 };
	struct sockaddr_in at = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_storage cli;
	socklen_t alen = sizeof at, clen;
	static unsigned char out[N * 32];
	union {
		char b[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} ctl;
	uint16_t seg = 32;
	struct iovec iov = {out, sizeof out};
	struct msghdr mh = {.msg_name = &cli, .msg_iov = &iov, .msg_iovlen = 1,
	                    .msg_control = ctl.b, .msg_controllen = sizeof ctl.b};
	struct cmsghdr *cm;
	int64_t args[N], res[N];
	rc_async *h[N];
	char uri[64];
	rc_client *c;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	unsigned char m[64];
	int64_t t0;
	(void)state;

	if (!udp_offloads()) {
		close(fd);
		skip();
	}
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&at, sizeof at), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&at, &alen), 0);
	snprintf(uri, sizeof uri, "udp://127.0.0.1:%u", ntohs(at.sin_port));
	assert_int_equal(rc_client_create(&c, uri, RT_PROG, 1), RC_OK);
	assert_int_equal(rc_client_set_retry(c, 4000), RC_OK); /* no retransmission meanwhile */
	/* one call answered through the poll loop: the client's batch receive turns its receive
	 * offload on */
	args[0] = 7;
	assert_int_equal(rc_call_start(c, 2, (rc_xdrproc)rc_xdr_hyper, &args[0],
	                               (rc_xdrproc)rc_xdr_hyper, &res[0], NULL, NULL, &h[0]), RC_OK);
	uint32_t x = fake_take(fd, &cli, &clen);
	assert_int_equal(sendto(fd, m, fake_reply(m, x, 7), 0, (struct sockaddr *)&cli, clen), 32);
	rt_poll_loop(c, 100);
	assert_int_equal(rc_async_status(h[0]), RC_OK);
	assert_int_equal(res[0], 7);
	rc_async_release(h[0]);
	/* N calls; the fake server takes them all, then answers them in one joined send */
	for (int k = 0; k < N; k++) {
		args[k] = k;
		assert_int_equal(rc_call_start(c, 2, (rc_xdrproc)rc_xdr_hyper, &args[k],
		                               (rc_xdrproc)rc_xdr_hyper, &res[k], NULL, NULL, &h[k]),
		                 RC_OK);
	}
	for (int k = 0; k < N; k++)
		fake_reply(out + 32 * k, fake_take(fd, &cli, &clen), 1000 + k);
	mh.msg_namelen = clen;
	cm = CMSG_FIRSTHDR(&mh);
	memset(ctl.b, 0, sizeof(ctl.b)); /* (the padding after the data too) */
	cm->cmsg_level = SOL_UDP;
	cm->cmsg_type = UDP_SEGMENT;
	cm->cmsg_len = CMSG_LEN(sizeof seg);
	memcpy(CMSG_DATA(cm), &seg, sizeof seg);
	assert_int_equal(sendmsg(fd, &mh, 0), (ssize_t)sizeof out);
	t0 = (int64_t)time(NULL);
	assert_int_equal(rc_async_wait(h[0], 5000), RC_OK); /* takes the joined datagram */
	rt_poll_loop(c, 1000);
	for (int k = 0; k < N; k++) {
		assert_int_equal(rc_async_status(h[k]), RC_OK);
		assert_int_equal(res[k], 1000 + k);
		rc_async_release(h[k]);
	}
	assert_true((int64_t)time(NULL) - t0 < 3); /* not a sleep until a deadline */
	rc_client_destroy(c);
	close(fd);
}

static void started_call_wait_cancel(void **state)
{
	rc_client *c = connect_to(1, 1);
	rc_async *a = NULL, *b = NULL;
	uint32_t ms = 300, r1 = 0, r2 = 0, one = 1;
	int done = 0;
	(void)state;
	assert_int_equal(rc_call_start(c, 3, (rc_xdrproc)rc_xdr_u_int, &ms, (rc_xdrproc)rc_xdr_u_int,
	                               &r1, NULL, NULL, &a), RC_OK);
	assert_int_equal(rc_async_status(a), RC_INPROGRESS);
	rc_async_cancel(a);
	assert_int_equal(rc_async_status(a), RC_CANCELLED);
	rc_async_release(a);
	assert_int_equal(rc_call_start(c, 3, (rc_xdrproc)rc_xdr_u_int, &one, (rc_xdrproc)rc_xdr_u_int,
	                               &r2, NULL, NULL, &b), RC_OK);
	assert_int_equal(rc_async_wait(b, 5000), RC_OK);
	assert_int_equal(r2, 1);
	rc_async_release(b);
	/* destroy with a call in flight: its callback runs once, cancelled */
	cb_count = 0;
	assert_int_equal(rc_call_start(c, 3, (rc_xdrproc)rc_xdr_u_int, &ms, (rc_xdrproc)rc_xdr_u_int,
	                               &r1, on_done, &done, NULL), RC_OK);
	rc_client_destroy(c);
	assert_int_equal(cb_count, 1);
	assert_int_equal(cb_last, RC_CANCELLED);
}

static void tcp_reconnects_after_server_restart(void **state)
{
	static const char *const uris[] = {"tcp://127.0.0.1:0", NULL};
	rt_server s2;
	rc_client *c;
	char uri[256];
	(void)state;
	assert_int_equal(rt_start(&s2, uris, 1), 0);
	snprintf(uri, sizeof(uri), "%s", s2.uri[0]);
	assert_int_equal(rc_client_create(&c, uri, RT_PROG, 1), RC_OK);
	assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_OK);
	rt_stop(&s2);
	/* restart on the same port */
	{
		const char *again[] = {uri, NULL};
		assert_int_equal(rt_start(&s2, again, 1), 0);
	}
	usleep(150000);
	assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_OK);
	rc_client_destroy(c);
	rt_stop(&s2);
}

static int64_t ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A started call without callback outlives its client: rc_client_destroy completes it with
 * RC_CANCELLED and it stays valid until released (was a use after free, and unreleased handles
 * of a destroyed client leaked). Run under valgrind / ASan by the sanitizer passes. */
static void handle_outlives_client(void **state)
{
	for (int i = 0; i < 2; i++) {
		rc_client *c = connect_to(i, 1);
		rc_async *a = NULL, *b = NULL;
		uint32_t ms = 400, r1 = 0, one = 0, r2 = 0;
		(void)state;
		assert_int_equal(rc_call_start(c, 3, (rc_xdrproc)rc_xdr_u_int, &one,
		                               (rc_xdrproc)rc_xdr_u_int, &r2, NULL, NULL, &b), RC_OK);
		assert_int_equal(rc_async_wait(b, 5000), RC_OK); /* b done, not released */
		assert_int_equal(rc_call_start(c, 3, (rc_xdrproc)rc_xdr_u_int, &ms,
		                               (rc_xdrproc)rc_xdr_u_int, &r1, NULL, NULL, &a), RC_OK);
		rc_client_destroy(c); /* a still in flight */
		assert_int_equal(rc_async_status(a), RC_CANCELLED);
		assert_int_equal(rc_async_wait(a, 1000), RC_CANCELLED);
		rc_async_cancel(a); /* no effect, no client touched */
		assert_int_equal(rc_async_status(b), RC_OK);
		rc_async_release(a);
		rc_async_release(b);
	}
}

/* Flip the credentials while another thread calls through the lock-free fast path: every call
 * succeeds and carries one of the two credentials whole (was a data race on the header
 * template: ThreadSanitizer reported it; make test-tsan runs this). */
static atomic_int flip_stop;
/* Under valgrind (RC_VALGRIND=1) timing bounds are this many times wider: it runs one thread
 * at a time, many times slower. */
static int vg_slow(void)
{
	const char *vg = getenv("RC_VALGRIND");
	return vg != NULL && *vg != '\0' && *vg != '0' ? 5 : 1;
}

static void *thr_flip(void *p)
{
	rc_client *c = p;
	for (int i = 0; !atomic_load(&flip_stop); i++) {
		if (i & 1)
			assert_int_equal(rc_client_set_auth_none(c), RC_OK);
		else
			assert_int_equal(rc_client_set_auth_sys(c, "flip", 7, 8, NULL, 0), RC_OK);
		/* a change between calls, not a thread that holds the client's lock back to back:
		 * under valgrind's one-thread-at-a-time scheduler a tight loop here took the lock
		 * again each time it let go and starved the caller into RC_TIMEDOUT */
		if ((i & 7) == 7)
			usleep(50);
	}
	return NULL;
}

static void auth_change_during_calls(void **state)
{
	rc_client *c = connect_to(0, 1);
	pthread_t t;
	(void)state;
	atomic_store(&flip_stop, 0);
	assert_int_equal(pthread_create(&t, NULL, thr_flip, c), 0);
	for (int i = 0; i < 2000; i++) {
		char *who = NULL;
		assert_int_equal(rc_call(c, 5, NULL, NULL, (rc_xdrproc)xdr_rt_str, &who), RC_OK);
		assert_true(strcmp(who, "none") == 0 || strcmp(who, "flip:7:8:0") == 0);
		rc_xdr_free((rc_xdrproc)xdr_rt_str, &who);
	}
	atomic_store(&flip_stop, 1);
	pthread_join(t, NULL);
	rc_client_destroy(c);
}

static rc_client *watched;
static atomic_int watch_max_ms;
static atomic_int watch_stop;
/* Measure how long rc_client_inflight (which takes the client's lock) blocks while another
 * thread reconnects. */
static void *thr_watch(void *p)
{
	(void)p;
	while (!atomic_load(&watch_stop)) {
		int64_t t0 = ms_now();
		(void)rc_client_inflight(watched);
		int d = (int)(ms_now() - t0);
		if (d > atomic_load(&watch_max_ms))
			atomic_store(&watch_max_ms, d);
		usleep(5000);
	}
	return NULL;
}

/* A reconnect honours the call's deadline and does not hold the client's lock: against a peer
 * whose SYNs are dropped, a call with a 300 ms timeout fails with RC_TIMEDOUT in well under the
 * kernel's connect timeout, and another thread is never blocked meanwhile (was a blocking
 * connect() with no deadline under the client's mutex). */
static void reconnect_has_deadline_and_no_lock(void **state)
{
	static const char *const uris[] = {"tcp://127.0.0.1:0", NULL};
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	rt_server s2;
	rc_client *c;
	int port, fills[4], l, one = 1;
	pthread_t t;
	rc_callopts o = {.timeout_ms = 300};
	int64_t t0;
	rc_status st;
	(void)state;
	assert_int_equal(rt_start(&s2, uris, 1), 0);
	assert_int_equal(rc_client_create(&c, s2.uri[0], RT_PROG, 1), RC_OK);
	assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_OK);
	port = atoi(strrchr(s2.uri[0], ':') + 1);
	rt_stop(&s2);
	/* its port now belongs to a listener whose accept queue is full: further SYNs are
	 * dropped, and a connect hangs (the kernel retries for over a minute) */
	l = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
	a.sin_port = htons((uint16_t)port);
	assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(l, 0), 0);
	for (int i = 0; i < 4; i++) {
		fills[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		(void)connect(fills[i], (struct sockaddr *)&a, sizeof(a));
	}
	usleep(50000);
	watched = c;
	atomic_store(&watch_max_ms, 0);
	atomic_store(&watch_stop, 0);
	assert_int_equal(pthread_create(&t, NULL, thr_watch, NULL), 0);
	t0 = ms_now();
	st = rc_call_ex(c, 0, NULL, NULL, NULL, NULL, &o);
	assert_true(ms_now() - t0 < 900 * vg_slow()); /* 300 ms asked */
	assert_int_equal(st, RC_TIMEDOUT);
	atomic_store(&watch_stop, 1);
	pthread_join(t, NULL);
	/* the lock was free during the connect */
	assert_true(atomic_load(&watch_max_ms) < 150 * vg_slow());
	rc_client_destroy(c);
	close(l);
	for (int i = 0; i < 4; i++)
		close(fills[i]);
}

/* A peer that accepts and never reads: started calls never block the caller, the client asks
 * for POLLOUT while output waits, and rc_client_advance never blocks (rc_call_start blocked in
 * send and rc_client_advance flushed with blocking sends; pollinfo never asked for POLLOUT). */
static void advance_never_blocks_on_full_socket(void **state)
{
	char uri[64];
	int l = loopback_socket(SOCK_STREAM, true, uri, sizeof uri), peer;
	rc_client *c;
	static char big[256 << 10];
	rt_blob arg = {sizeof(big), big}, res[64];
	rc_async *h[64];
	int fd, tmo, n;
	short ev;
	bool pollout = false;
	(void)state;
	assert_int_equal(rc_client_create(&c, uri, RT_PROG, 1), RC_OK);
	peer = accept(l, NULL, NULL);
	assert_true(peer >= 0);
	alarm(20); /* a blocked send would hang here: the alarm ends the test as failed */
	memset(res, 0, sizeof(res));
	for (n = 0; n < 64; n++) {
		int64_t t0 = ms_now();
		assert_int_equal(rc_call_start(c, 1, (rc_xdrproc)xdr_rt_blob, &arg,
		                               (rc_xdrproc)xdr_rt_blob, &res[n], NULL, NULL, &h[n]),
		                 RC_OK);
		assert_true(ms_now() - t0 < 1000);
		assert_int_equal(rc_client_pollinfo(c, &fd, &ev, &tmo), RC_OK);
		if (ev & POLLOUT) {
			pollout = true;
			break;
		}
	}
	assert_true(pollout); /* 16 MiB never fit the socket buffers */
	{
		int64_t t0 = ms_now();
		assert_int_equal(rc_client_advance(c, POLLOUT), RC_OK);
		assert_true(ms_now() - t0 < 1000);
	}
	alarm(0);
	for (int i = 0; i <= n && i < 64; i++)
		rc_async_release(h[i]);
	rc_client_destroy(c);
	close(peer);
	close(l);
}

/* ---- big replies decoded while they come (recv_head / recv_pull / x_pull) ------------------ */

/*
 * A scripted stream server: for each call it reads, it sends the reply record a script makes
 * (the call's xid put in front), in two pieces with a pause between them, so that the client
 * sees the head of the record before the rest. Steps: what to send for the 1st, 2nd, ... call.
 */
enum { PR_PLAIN, PR_STALE_FIRST, PR_CLOSE_MID, PR_STALL_MID, PR_TRICKLE, PR_FRAGS };
typedef struct pr_step {
	int how;
	unsigned char *body; /* the reply after its xid: REPLY ... results */
	size_t len;
} pr_step;
typedef struct pr_server {
	int lfd;
	char uri[64];
	pr_step steps[12];
	int nsteps;
	pthread_t th;
} pr_server;

/* Read one whole call record (any fragments) from fd; its xid in *xid. False at EOF/error. */
static bool pr_read_call(int fd, uint32_t *xid)
{
	bool last = false, first = true;
	while (!last) {
		unsigned char h[4];
		uint32_t mark, n;
		if (recv(fd, h, 4, MSG_WAITALL) != 4)
			return false;
		mark = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
		last = (mark & 0x80000000u) != 0;
		n = mark & 0x7fffffffu;
		while (n > 0) {
			unsigned char b[4096];
			ssize_t k = recv(fd, b, n < sizeof b ? n : sizeof b, 0);
			if (k <= 0)
				return false;
			if (first && k >= 4) {
				*xid = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
				first = false;
			}
			n -= (uint32_t)k;
		}
	}
	return true;
}

static void pr_put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static bool pr_send_all(int fd, const void *b, size_t n)
{
	const unsigned char *p = b;
	while (n > 0) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		if (k <= 0)
			return false;
		p += k;
		n -= (size_t)k;
	}
	return true;
}

/* Send body (with xid in front) as one record: the first `cut` bytes of the record, a pause of
 * pause_ms, then the rest (or nothing, for close/stall). frags: as 3 fragments instead. */
static bool pr_send_reply(int fd, uint32_t xid, const pr_step *st)
{
	size_t rl = 4 + st->len, cut = 8192;
	unsigned char *rec = malloc(4 + rl);
	bool ok;
	assert_non_null(rec);
	pr_put32(rec, 0x80000000u | (uint32_t)rl);
	pr_put32(rec + 4, xid);
	memcpy(rec + 8, st->body, st->len);
	if (st->how == PR_FRAGS) {
		/* three fragments: [xid..1000), [1000..rl/2), [rl/2..rl) */
		size_t a = 1000, b = rl / 2;
		unsigned char h[4];
		pr_put32(h, (uint32_t)a);
		ok = pr_send_all(fd, h, 4) && pr_send_all(fd, rec + 4, a);
		pr_put32(h, (uint32_t)(b - a));
		ok = ok && pr_send_all(fd, h, 4) && pr_send_all(fd, rec + 4 + a, b - a);
		pr_put32(h, 0x80000000u | (uint32_t)(rl - b));
		ok = ok && pr_send_all(fd, h, 4) && pr_send_all(fd, rec + 4 + b, rl - b);
		free(rec);
		return ok;
	}
	ok = pr_send_all(fd, rec, cut);
	usleep(30000);
	if (st->how == PR_CLOSE_MID) {
		free(rec);
		return false; /* the caller closes */
	}
	if (st->how == PR_STALL_MID) {
		usleep(600000); /* past the client's timeout */
		free(rec);
		return false;
	}
	if (st->how == PR_TRICKLE) { /* a byte every 40 ms, for 1.2 s: each read is quick */
		for (int i = 0; i < 30 && ok; i++) {
			ok = pr_send_all(fd, rec + cut + i, 1);
			usleep(40000);
		}
		free(rec);
		return false;
	}
	ok = ok && pr_send_all(fd, rec + cut, 4 + rl - cut);
	free(rec);
	return ok;
}

static void *pr_run(void *arg)
{
	pr_server *ps = arg;
	int i = 0;
	while (i < ps->nsteps) {
		int fd = accept(ps->lfd, NULL, NULL);
		uint32_t xid;
		if (fd < 0)
			break;
		while (i < ps->nsteps && pr_read_call(fd, &xid)) {
			const pr_step *st = &ps->steps[i++];
			if (st->how == PR_STALE_FIRST) {
				pr_step plain = *st;
				plain.how = PR_PLAIN;
				if (!pr_send_reply(fd, xid - 1000, &plain)) /* nobody's: dropped */
					break;
			}
			if (!pr_send_reply(fd, xid, st))
				break;
		}
		close(fd);
	}
	return NULL;
}

static void pr_start(pr_server *ps)
{
	ps->lfd = loopback_socket(SOCK_STREAM, true, ps->uri, sizeof ps->uri);
	assert_int_equal(pthread_create(&ps->th, NULL, pr_run, ps), 0);
}

static void pr_stop(pr_server *ps)
{
	shutdown(ps->lfd, SHUT_RDWR);
	close(ps->lfd);
	pthread_join(ps->th, NULL);
	for (int i = 0; i < ps->nsteps; i++)
		free(ps->steps[i].body);
}

/* The body of a successful reply (after the xid) with results r[0..rlen). */
static pr_step pr_success(int how, const unsigned char *r, size_t rlen)
{
	pr_step st = {how, malloc(20 + rlen), 20 + rlen};
	assert_non_null(st.body);
	memset(st.body, 0, 20);
	st.body[3] = 1; /* REPLY; MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS */
	memcpy(st.body + 20, r, rlen);
	return st;
}

/* Results: opaque<> of n pattern bytes, then `after` (n.b. XDR-encoded) bytes. */
static unsigned char *pr_opaque(size_t n, const unsigned char *after, size_t alen, size_t *len)
{
	size_t pad = (4 - n % 4) % 4;
	unsigned char *r = calloc(1, 4 + n + pad + alen);
	assert_non_null(r);
	pr_put32(r, (uint32_t)n);
	for (size_t i = 0; i < n; i++)
		r[4 + i] = (unsigned char)(i * 31 + 7);
	if (alen > 0)
		memcpy(r + 4 + n + pad, after, alen);
	*len = 4 + n + pad + alen;
	return r;
}

static bool pr_pattern_ok(const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)b[i] != (unsigned char)(i * 31 + 7))
			return false;
	return true;
}

/* A result with fields after its big data: opaque<>, u_int, string. */
typedef struct { rt_blob d; uint32_t tag; char *name; } pr_mixed;
static bool xdr_pr_mixed(rc_xdr *x, pr_mixed *m)
{
	return xdr_rt_blob(x, &m->d) && rc_xdr_u_int(x, &m->tag) && xdr_rt_str(x, &m->name);
}
/* A big result with no opaque in it: u_int<> of 300,000 elements. */
typedef struct { uint32_t len; uint32_t *val; } pr_ints;
static bool xdr_pr_ints(rc_xdr *x, pr_ints *v)
{
	return rc_xdr_array(x, (char **)&v->val, &v->len, 1u << 20, sizeof(uint32_t),
	                    (rc_xdrproc)rc_xdr_u_int);
}

/*
 * Big replies whose head comes before their rest: opaque results decoded into memory of their
 * own and into the caller's buffer (odd lengths: padding in the rest), fields after the big
 * data, a big array of ints (no opaque: the record completes first), a reply of nobody's
 * before the call's own, and a reply in three fragments. Every byte checked; the connection
 * stays in step from call to call.
 */
static void big_replies_decode_as_they_come(void **state)
{
	pr_server ps = {0};
	const size_t big = (1u << 20) + 3;
	unsigned char after[16] = {0, 0, 0, 42, 0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o', 0, 0, 0};
	unsigned char *r, *ints;
	size_t rl;
	rc_client *c;
	(void)state;

	r = pr_opaque(big, NULL, 0, &rl);
	ps.steps[ps.nsteps++] = pr_success(PR_PLAIN, r, rl);     /* 0: own memory */
	ps.steps[ps.nsteps++] = pr_success(PR_PLAIN, r, rl);     /* 1: caller's buffer */
	ps.steps[ps.nsteps++] = pr_success(PR_STALE_FIRST, r, rl); /* 2: nobody's reply first */
	ps.steps[ps.nsteps++] = pr_success(PR_FRAGS, r, rl);     /* 3: three fragments */
	free(r);
	r = pr_opaque(big, after, sizeof after, &rl);
	ps.steps[ps.nsteps++] = pr_success(PR_PLAIN, r, rl); /* 4: fields after the data */
	free(r);
	ints = malloc(4 + 300000 * 4);
	assert_non_null(ints);
	pr_put32(ints, 300000);
	for (uint32_t i = 0; i < 300000; i++)
		pr_put32(ints + 4 + 4 * i, i * 3);
	ps.steps[ps.nsteps++] = pr_success(PR_PLAIN, ints, 4 + 300000 * 4); /* 5: ints */
	free(ints);
	pr_start(&ps);

	assert_int_equal(rc_client_create(&c, ps.uri, RT_PROG, 1), RC_OK);
	{
		rt_blob arg = {0, NULL}, res = {0, NULL};
		assert_int_equal(rc_call(c, 1, (rc_xdrproc)xdr_rt_blob, &arg, (rc_xdrproc)xdr_rt_blob,
		                         &res),
		                 RC_OK);
		assert_int_equal(res.len, big);
		assert_true(pr_pattern_ok(res.val, big));
		rc_xdr_free((rc_xdrproc)xdr_rt_blob, &res);
	}
	{
		rt_blob arg = {0, NULL}, res;
		char *mine = malloc(big + 100);
		assert_non_null(mine);
		for (int k = 1; k <= 2; k++) { /* 1: plain, 2: after a reply of nobody's */
			res.len = (uint32_t)(big + 100);
			res.val = mine;
			memset(mine, 0, big + 100);
			assert_int_equal(rc_call(c, 1, (rc_xdrproc)xdr_rt_blob, &arg,
			                         (rc_xdrproc)xdr_rt_blob, &res),
			                 RC_OK);
			assert_ptr_equal(res.val, mine); /* into the caller's buffer */
			assert_int_equal(res.len, big);
			assert_true(pr_pattern_ok(mine, big));
		}
		res.len = 0; /* 3: fragments, into fresh memory */
		res.val = NULL;
		assert_int_equal(rc_call(c, 1, (rc_xdrproc)xdr_rt_blob, &arg,
		                         (rc_xdrproc)xdr_rt_blob, &res),
		                 RC_OK);
		assert_int_equal(res.len, big);
		assert_true(pr_pattern_ok(res.val, big));
		rc_xdr_free((rc_xdrproc)xdr_rt_blob, &res);
		free(mine);
	}
	{
		rt_blob arg = {0, NULL};
		pr_mixed m = {{0, NULL}, 0, NULL};
		assert_int_equal(rc_call(c, 1, (rc_xdrproc)xdr_rt_blob, &arg, (rc_xdrproc)xdr_pr_mixed,
		                         &m),
		                 RC_OK);
		assert_int_equal(m.d.len, big);
		assert_true(pr_pattern_ok(m.d.val, big));
		assert_int_equal(m.tag, 42);
		assert_string_equal(m.name, "hello");
		rc_xdr_free((rc_xdrproc)xdr_pr_mixed, &m);
	}
	{
		rt_blob arg = {0, NULL};
		pr_ints v = {0, NULL};
		assert_int_equal(rc_call(c, 1, (rc_xdrproc)xdr_rt_blob, &arg, (rc_xdrproc)xdr_pr_ints,
		                         &v),
		                 RC_OK);
		assert_int_equal(v.len, 300000);
		for (uint32_t i = 0; i < 300000; i++)
			if (v.val[i] != i * 3)
				fail_msg("element %u: %u", i, v.val[i]);
		rc_xdr_free((rc_xdrproc)xdr_pr_ints, &v);
	}
	rc_client_destroy(c);
	pr_stop(&ps);
}

/*
 * A big reply cut after its head -- the server stalls past the call's timeout, trickles the
 * rest a byte at a time (each read quick, the whole past the timeout), or closes -- on a
 * connection in use (the head comes to the call's own read): the call fails (never
 * hangs) with RC_TIMEDOUT or RC_CANTRECV, the connection goes, and the next call reconnects
 * and succeeds. A big reply whose data is longer than the result's buffer fails to decode,
 * and the connection stays in step for the next call.
 */
static void big_reply_cut_midway(void **state)
{
	static const int how[] = {PR_PLAIN, PR_STALL_MID, PR_PLAIN, PR_TRICKLE, PR_PLAIN,
	                          PR_CLOSE_MID, PR_PLAIN, PR_PLAIN, PR_PLAIN};
	static const rc_status want[] = {RC_OK, RC_TIMEDOUT, RC_OK, RC_TIMEDOUT, RC_OK,
	                                 RC_CANTRECV, RC_OK, RC_CANTDECODERES, RC_OK};
	const int n = (int)(sizeof how / sizeof how[0]);
	pr_server ps = {0};
	const size_t big = 1u << 20;
	unsigned char *r;
	size_t rl;
	rc_client *c;
	char *mine = malloc(big);
	(void)state;

	assert_non_null(mine);
	r = pr_opaque(big, NULL, 0, &rl);
	for (int i = 0; i < n; i++)
		ps.steps[ps.nsteps++] = pr_success(how[i], r, rl);
	free(r);
	pr_start(&ps);
	assert_int_equal(rc_client_create(&c, ps.uri, RT_PROG, 1), RC_OK);
	for (int i = 0; i < n; i++) {
		rt_blob arg = {0, NULL}, res = {(uint32_t)big, mine};
		struct timespec t0, t1;
		bool slow = how[i] == PR_STALL_MID || how[i] == PR_TRICKLE;
		if (i == 7)
			res.len = 1000; /* too small for the data */
		assert_int_equal(rc_client_set_timeout(c, slow ? 300 : 5000), RC_OK);
		memset(mine, 0, big);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (rc_call(c, 1, (rc_xdrproc)xdr_rt_blob, &arg, (rc_xdrproc)xdr_rt_blob, &res) !=
		    want[i]) {
			rc_error e;
			char b[200];
			rc_client_geterr(c, &e);
			fail_msg("call %d: %s, want %s", i, rc_error_format(&e, b, sizeof b),
			         rc_strerror(want[i]));
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (slow) /* the call's timeout holds however the rest trickles in */
			assert_true((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 <
			            900);
		if (want[i] == RC_OK) {
			assert_ptr_equal(res.val, mine);
			assert_int_equal(res.len, big);
			assert_true(pr_pattern_ok(mine, big));
		}
		if (slow)
			usleep(how[i] == PR_STALL_MID ? 500000 : 1000000); /* until the server closes */
	}
	free(mine);
	rc_client_destroy(c);
	pr_stop(&ps);
}

/* SIZED with data of dlen bytes asking for n back: the call's status; on RC_OK the reply is
 * checked. The call record is 48 bytes plus dlen padded, the reply record 28 plus n padded. */
static rc_status sized_call(rc_client *c, uint32_t dlen, uint32_t n)
{
	rt_sized in = {n, {dlen, calloc(1, dlen ? dlen : 1)}};
	rt_blob out = {0, NULL};
	rc_status st;

	assert_non_null(in.data.val);
	st = rc_call(c, 8, (rc_xdrproc)xdr_rt_sized, &in, (rc_xdrproc)xdr_rt_big, &out);
	if (st == RC_OK) {
		assert_true(rt_sized_ok(&out, n));
	} else {
		char why[512];
		rc_error e;
		rc_client_geterr(c, &e);
		print_message("SIZED(%u bytes in, %u out): %s\n", dlen, n,
		              rc_error_format(&e, why, sizeof(why)));
	}
	rc_xdr_free((rc_xdrproc)xdr_rt_big, &out);
	free(in.data.val);
	return st;
}

/* NFS servers advertise 64 MiB as their preferred READ and WRITE size (nfs-ganesha's FSINFO):
 * with the defaults, a reply record of 64 MiB + 128 bytes and a call record of 64 MiB + 112
 * bytes pass over TCP and Unix. With a lowered cap, a call or a reply one byte over it fails
 * with RC_MSGTOOLARGE (the call before anything is sent), and the next call succeeds. */
static void messages_of_64mib_both_ways(void **state)
{
	const uint32_t mib64 = 64u << 20;
	/* 64 MiB each way takes seconds natively, over a minute under valgrind on a loaded VM
	 * (RC_VALGRIND=1, make test-valgrind) */
	const char *vg = getenv("RC_VALGRIND");
	uint32_t timeout_ms = vg != NULL && *vg != '\0' && *vg != '0' ? 300000 : 60000;

	(void)state;
	for (int i = 1; i <= 2; i++) {
		rc_client *c = connect_to(i, 1);
		size_t cap;

		rc_client_set_timeout(c, timeout_ms);
		assert_int_equal(rc_client_get_max_message(c), RC_DEFAULT_MAX_MESSAGE);
		assert_int_equal(sized_call(c, 0, mib64 + 100), RC_OK);  /* reply 64 MiB + 128 */
		assert_int_equal(sized_call(c, mib64 + 64, 0), RC_OK);   /* call 64 MiB + 112 */

		/* a cap of one byte less than a 1 MiB + 112 call record refuses it, the exact cap
		 * takes it */
		cap = (1u << 20) + 112;
		assert_int_equal(rc_client_set_max_message(c, cap - 1), RC_OK);
		assert_int_equal(sized_call(c, (1u << 20) + 64, 0), RC_MSGTOOLARGE);
		assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_OK);
		assert_int_equal(rc_client_set_max_message(c, cap), RC_OK);
		assert_int_equal(sized_call(c, (1u << 20) + 64, 0), RC_OK);

		/* the same for a 1 MiB + 128 reply record: the connection is closed under it, the
		 * next call reconnects */
		cap = (1u << 20) + 128;
		assert_int_equal(rc_client_set_max_message(c, cap - 1), RC_OK);
		assert_int_equal(sized_call(c, 0, (1u << 20) + 100), RC_MSGTOOLARGE);
		assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_OK);
		assert_int_equal(rc_client_set_max_message(c, cap), RC_OK);
		assert_int_equal(sized_call(c, 0, (1u << 20) + 100), RC_OK);

		/* out of range; 0 is the default again; 1 GiB is accepted */
		assert_int_equal(rc_client_set_max_message(c, 1023), RC_INVAL);
		assert_int_equal(rc_client_set_max_message(c, (size_t)1 << 30), RC_OK);
		assert_int_equal(rc_client_set_max_message(c, 0), RC_OK);
		assert_int_equal(rc_client_get_max_message(c), RC_DEFAULT_MAX_MESSAGE);
		assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_OK);
		rc_client_destroy(c);
	}
}

static bool xdr_str4(rc_xdr *x, char **s)
{
	return rc_xdr_string(x, s, 4);
}

/* A peer that accepts one connection on lfd, reads what comes within 200 ms, and closes it:
 * a server that died during the call. */
static void *close_mid_call(void *arg)
{
	int lfd = *(int *)arg, fd = accept(lfd, NULL, NULL);
	if (fd >= 0) {
		char b[256];
		struct pollfd pf = {fd, POLLIN, 0};
		if (poll(&pf, 1, 200) > 0)
			(void)recv(fd, b, sizeof b, 0);
		close(fd);
	}
	return NULL;
}

/* Each failure says what happened, through rc_error_format: a refused connection, a string
 * over its bound (which value, which bound), a server that closed the connection during the
 * call (TCP and, with the server gone, UDP's refusal). */
static void errors_name_their_cause(void **state)
{
	char uri[64], buf[256];
	/* a port nothing listens on: bound, never listened */
	int lfd = loopback_socket(SOCK_STREAM, false, uri, sizeof uri);
	rc_client *c = NULL;
	rc_error e;
	pthread_t th;

	(void)state;
	assert_int_equal(rc_client_create_ex(&c, uri, RT_PROG, 1, &e), RC_CANTSEND);
	rc_error_format(&e, buf, sizeof buf);
	assert_non_null(strstr(buf, "Connection refused"));

	/* the same port, listening: the peer closes during the call */
	assert_int_equal(listen(lfd, 4), 0);
	assert_int_equal(pthread_create(&th, NULL, close_mid_call, &lfd), 0);
	assert_int_equal(rc_client_create(&c, uri, RT_PROG, 1), RC_OK);
	assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_CANTRECV);
	rc_client_geterr(c, &e);
	rc_error_format(&e, buf, sizeof buf);
	assert_non_null(strstr(buf, "closed the connection"));
	rc_client_destroy(c);
	pthread_join(th, NULL);
	close(lfd);

	/* a string over its bound */
	c = connect_to(1, 1);
	{
		char *s = "0123456789";
		assert_int_equal(rc_call(c, 0, (rc_xdrproc)xdr_str4, &s, NULL, NULL),
		                 RC_CANTENCODEARGS);
		rc_client_geterr(c, &e);
		rc_error_format(&e, buf, sizeof buf);
		assert_string_equal(buf, "can't encode arguments (a string of 10 bytes is over its "
		                         "declared bound of 4)");
		/* the next failure of another kind does not repeat it */
		assert_int_equal(rc_call(c, 99, NULL, NULL, NULL, NULL), RC_PROCUNAVAIL);
		rc_client_geterr(c, &e);
		assert_string_equal(e.detail, "");
	}
	rc_client_destroy(c);
}

/* A call or reply over a size limit says which limit and both sizes: the client's own max
 * message (a call before anything is sent; a reply as its record mark arrives), a UDP
 * datagram's, and -- as far as the protocol lets a client know -- a server's max_record,
 * which closes the connection: the client says the server closed it after this call's
 * record of N bytes. Blocking and started calls alike. */
static void toolarge_says_which_limit(void **state)
{
	static const char *const srv_uris[] = {"udp://127.0.0.1:0", "tcp://127.0.0.1:0", NULL};
	rc_server_limits lim = {.max_record = 8192};
	rt_blob in = {10000, calloc(1, 70000)}, out = {0, NULL};
	rt_sized sz = {10000, {0, NULL}};
	rt_server small;
	rc_client *c;
	rc_async *h;
	rc_error e;
	char buf[300];
	(void)state;

	/* the client's cap, on a call: header 40 + length 4 + 10,000 bytes */
	c = connect_to(1, 1);
	assert_int_equal(rc_client_set_max_message(c, 4096), RC_OK);
	assert_int_equal(rc_call(c, 1, (rc_xdrproc)xdr_rt_blob, &in, (rc_xdrproc)xdr_rt_blob, &out),
	                 RC_MSGTOOLARGE);
	rc_client_geterr(c, &e);
	assert_string_equal(e.detail, "the call's record is 10044 bytes, over this client's limit "
	                              "of 4096 bytes (rc_client_set_max_message)");
	assert_int_equal(rc_call_start(c, 1, (rc_xdrproc)xdr_rt_blob, &in, (rc_xdrproc)xdr_rt_blob,
	                               &out, NULL, NULL, &h),
	                 RC_MSGTOOLARGE);
	rc_client_geterr(c, &e); /* (a start that fails leaves no handle: the client says) */
	assert_string_equal(e.detail, "the call's record is 10044 bytes, over this client's limit "
	                              "of 4096 bytes (rc_client_set_max_message)");
	/* ... on a reply: 24 bytes of header, 4 of length, 10,000 of data */
	assert_int_equal(rc_call(c, 8, (rc_xdrproc)xdr_rt_sized, &sz, (rc_xdrproc)xdr_rt_big, &out),
	                 RC_MSGTOOLARGE);
	rc_client_geterr(c, &e);
	assert_string_equal(rc_error_format(&e, buf, sizeof buf),
	                    "message too large for the transport or over the configured cap (the "
	                    "reply's record of at least 10028 bytes over the cap of 4096: this "
	                    "client's max message (rc_client_set_max_message))");
	rc_client_destroy(c);

	/* a datagram's limit */
	c = connect_to(0, 1);
	in.len = 70000;
	assert_int_equal(rc_call(c, 1, (rc_xdrproc)xdr_rt_blob, &in, (rc_xdrproc)xdr_rt_blob, &out),
	                 RC_MSGTOOLARGE);
	rc_client_geterr(c, &e);
	assert_string_equal(e.detail, "the call's record is 70044 bytes, over the transport's "
	                              "limit of 65507 bytes (a UDP datagram: use tcp: or unix:)");
	rc_client_destroy(c);

	/* a server's max_record: it closes the connection, the client tells what it knows */
	assert_int_equal(rt_start_lim(&small, srv_uris, 0, &lim), 0);
	assert_int_equal(rc_client_create(&c, small.uri[1], RT_PROG, 1), RC_OK);
	in.len = 10000;
	assert_int_equal(rc_call(c, 1, (rc_xdrproc)xdr_rt_blob, &in, (rc_xdrproc)xdr_rt_blob, &out),
	                 RC_CANTRECV);
	rc_client_geterr(c, &e);
	assert_string_equal(e.detail, "the server closed the connection after this call's record "
	                              "of 10044 bytes, unanswered (as a server does on a record "
	                              "over its max_record)");
	rc_client_destroy(c);
	rt_stop(&small);
	free(in.val);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(echo_udp),
		cmocka_unit_test(echo_tcp),
		cmocka_unit_test(echo_unix),
		cmocka_unit_test(echo_inproc),
		cmocka_unit_test(errors_each_kind),
		cmocka_unit_test(auth_sys_reaches_server),
		cmocka_unit_test(bad_uris),
		cmocka_unit_test(uri_query_refusals_list_keys),
		cmocka_unit_test(toolarge_says_which_limit),
		cmocka_unit_test(dead_server_times_out),
		cmocka_unit_test(silent_udp_times_out_on_time),
		cmocka_unit_test(slow_call_times_out),
		cmocka_unit_test(threads_share_client),
		cmocka_unit_test(select_driven_calls),
		cmocka_unit_test(pipelined_calls_reissued_from_callbacks),
		cmocka_unit_test(replies_read_ahead_reach_poll_loop),
		cmocka_unit_test(joined_replies_reach_poll_loop),
		cmocka_unit_test(started_call_wait_cancel),
		cmocka_unit_test(tcp_reconnects_after_server_restart),
		cmocka_unit_test(handle_outlives_client),
		cmocka_unit_test(auth_change_during_calls),
		cmocka_unit_test(reconnect_has_deadline_and_no_lock),
		cmocka_unit_test(advance_never_blocks_on_full_socket),
		cmocka_unit_test(big_replies_decode_as_they_come),
		cmocka_unit_test(big_reply_cut_midway),
		cmocka_unit_test(messages_of_64mib_both_ways),
		cmocka_unit_test(errors_name_their_cause),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

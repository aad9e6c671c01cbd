/*
 * Fuzz target: the client's reply path -- reply header, result decoding, xid matching, and for
 * streams the record reader and connection handling -- with a fake server (sockets inside
 * this process) that answers each call with the fuzz input.
 *
 *   byte 0: transport and call mode
 *             0 UDP, started call (rc_call_start + rc_client_advance: the general path)
 *             1 UDP, blocking call (rc_call: the fast path); the input is queued before the
 *               call, followed by a valid reply so the call always ends
 *             2 Unix stream, started call: the input is written raw (record marks and all),
 *               then a valid reply record, then the connection is closed
 *             3 Unix stream, blocking call on a connection in use (the fast path, where a
 *               big reply decodes while it comes): a fake in a thread answers a first call
 *               well, then the second with the input (raw, or -- byte 2 bit 1 -- behind a
 *               record mark announcing 100,000 bytes more than come), then closes
 *   byte 1: the result type (opaque<>, string<>, list, tree, union chain, pair array, u_int)
 *   byte 2: bit 0 -- put the call's xid into the reply (UDP: bytes 0..3; stream: 4..7)
 *   rest:   the reply
 *
 * Checks: no crash, no sanitizer report, no leak (results are freed with rc_xdr_free whatever
 * the status); a call that succeeded decoded a result that encodes again.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sec_util.h"

static const struct {
	rc_xdrproc x;
} results[] = {
	{(rc_xdrproc)xdr_sec_opqu}, {(rc_xdrproc)xdr_sec_stru}, {(rc_xdrproc)xdr_sec_list},
	{(rc_xdrproc)xdr_sec_tree}, {(rc_xdrproc)xdr_sec_chain}, {(rc_xdrproc)xdr_sec_pairs},
	{(rc_xdrproc)rc_xdr_u_int},
};
#define NRESULTS (sizeof(results) / sizeof(results[0]))

static int ufake = -1, lfake = -1;
static int sfake = -1; /* the fake's end of the client's current stream connection */
static int lfake2 = -1; /* mode 3's listener */
static rc_client *uclnt, *sclnt, *bclnt;
static struct sockaddr_storage uaddr; /* the UDP client's address */
static socklen_t uaddrlen;
static uint32_t last_xid;

static size_t good_reply(unsigned char *r, uint32_t xid)
{
	put32(r, xid);
	put32(r + 4, 1);
	memset(r + 8, 0, 16); /* MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS */
	memset(r + 24, 0, 8); /* a result of zeros: empty or absent for every type */
	return 32;
}

static char sock_path[108], sock_path2[108];

static void cleanup(void)
{
	unlink(sock_path);
	unlink(sock_path2);
}

/* A fake's listening Unix socket /tmp/rc-fuzz-reply<tag>-PID.sock (its path into path, 108
 * bytes) and a client of it (*clnt). Returns the listener. */
static int unix_fake(const char *tag, char *path, rc_client **clnt)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char uri[160];
	int l;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "/tmp/rc-fuzz-reply%s-%d.sock", tag,
	         (int)getpid());
	unlink(sun.sun_path);
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sun, sizeof(sun)) != 0 || listen(l, 16) != 0)
		abort();
	snprintf(path, sizeof(sock_path), "%s", sun.sun_path);
	snprintf(uri, sizeof(uri), "unix:%s", sun.sun_path);
	if (rc_client_create(clnt, uri, SEC_PROG, 1) != RC_OK)
		abort();
	rc_client_set_timeout(*clnt, 60000);
	return l;
}

static void setup(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);
	char uri[160];
	unsigned char m[256];
	ssize_t n;

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	ufake = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (ufake < 0 || bind(ufake, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    getsockname(ufake, (struct sockaddr *)&a, &al) != 0)
		abort();
	snprintf(uri, sizeof(uri), "udp://127.0.0.1:%d", ntohs(a.sin_port));
	if (rc_client_create(&uclnt, uri, SEC_PROG, 1) != RC_OK)
		abort();
	rc_client_set_timeout(uclnt, 60000);
	rc_client_set_retry(uclnt, 3600000); /* no retransmissions while fuzzing */
	/* one call to learn the client's address and xid */
	{
		rc_async *c;
		if (rc_call_start(uclnt, 0, NULL, NULL, NULL, NULL, NULL, NULL, &c) != RC_OK)
			abort();
		uaddrlen = sizeof(uaddr);
		n = recvfrom(ufake, m, sizeof(m), 0, (struct sockaddr *)&uaddr, &uaddrlen);
		if (n < 4)
			abort();
		last_xid = get32(m);
		rc_async_release(c);
	}

	atexit(cleanup);
	lfake = unix_fake("", sock_path, &sclnt);
	if ((sfake = accept(lfake, NULL, NULL)) < 0)
		abort();
	lfake2 = unix_fake("-b", sock_path2, &bclnt);
}

/* Read and drop whatever waits on fd. */
static void drain(int fd)
{
	unsigned char b[65536];
	while (recv(fd, b, sizeof(b), MSG_DONTWAIT) > 0)
		;
}

static int client_fd(rc_client *c)
{
	int fd, tmo;
	short ev;
	rc_client_pollinfo(c, &fd, &ev, &tmo);
	return fd;
}

static void check_result(rc_xdrproc x, void *res)
{
	static unsigned char buf[1 << 20];
	rc_xdr e;
	rc_xdrmem_create(&e, buf, sizeof(buf), RC_XDR_ENCODE);
	(void)x(&e, res); /* may legitimately not fit; must not crash */
}

static void udp_started(rc_xdrproc x, void *res, bool patch, const uint8_t *d, size_t n)
{
	unsigned char m[65536];
	rc_async *c;
	ssize_t got;

	if (rc_call_start(uclnt, P_ECHO, NULL, NULL, x, res, NULL, NULL, &c) != RC_OK)
		abort();
	got = recv(ufake, m, sizeof(m), MSG_DONTWAIT);
	if (got < 4)
		abort();
	last_xid = get32(m);
	memcpy(m, d, n);
	if (patch && n >= 4)
		put32(m, last_xid);
	sendto(ufake, m, n, 0, (struct sockaddr *)&uaddr, uaddrlen);
	rc_client_advance(uclnt, POLLIN);
	if (rc_async_status(c) == RC_OK)
		check_result(x, res);
	rc_async_release(c);
}

static void udp_blocking(rc_xdrproc x, void *res, bool patch, const uint8_t *d, size_t n)
{
	unsigned char m[65536];
	uint32_t xid = last_xid + 1; /* the client numbers its calls in order */
	rc_status st;

	memcpy(m, d, n);
	if (patch && n >= 4)
		put32(m, xid);
	sendto(ufake, m, n, 0, (struct sockaddr *)&uaddr, uaddrlen);
	sendto(ufake, m, good_reply(m, xid), 0, (struct sockaddr *)&uaddr, uaddrlen);
	st = rc_call(uclnt, P_ECHO, NULL, NULL, x, res);
	if (st == RC_OK)
		check_result(x, res);
	drain(client_fd(uclnt));
	if (recv(ufake, m, sizeof(m), MSG_DONTWAIT) >= 4)
		last_xid = get32(m);
	drain(ufake);
}

/*
 * Every stream input runs on a connection of its own: the client connects (at setup, or when
 * the call starts after the previous input's connection closed), the fake accepts, reads the
 * call, writes the input and a valid reply, and closes; the client is driven until the call
 * completed and the client noticed the close, so the next input starts the same way.
 */
static void stream_started(rc_xdrproc x, void *res, bool patch, const uint8_t *d, size_t n)
{
	static unsigned char m[1 << 17];
	unsigned char r[64];
	rc_async *c;
	ssize_t got;
	uint32_t xid;

	if (rc_call_start(sclnt, P_ECHO, NULL, NULL, x, res, NULL, NULL, &c) != RC_OK)
		abort();
	if (sfake < 0 && (sfake = accept(lfake, NULL, NULL)) < 0)
		abort();
	got = recv(sfake, m, sizeof(m), 0);
	if (got < 8)
		abort();
	xid = get32(m + 4);
	if (n > sizeof(m))
		n = sizeof(m);
	memcpy(m, d, n);
	if (patch && n >= 8)
		put32(m + 4, xid);
	(void)send(sfake, m, n, MSG_NOSIGNAL);
	put32(r, 0x80000000u | (uint32_t)good_reply(r + 4, xid));
	(void)send(sfake, r, 36, MSG_NOSIGNAL);
	close(sfake);
	sfake = -1;
	for (int i = 0; i < 1024 && (rc_async_status(c) == RC_INPROGRESS || client_fd(sclnt) >= 0);
	     i++) {
		struct pollfd pf = {client_fd(sclnt), POLLIN, 0};
		if (pf.fd < 0 || poll(&pf, 1, 1000) <= 0)
			break;
		rc_client_advance(sclnt, pf.revents);
	}
	if (rc_async_status(c) == RC_INPROGRESS || client_fd(sclnt) >= 0)
		abort(); /* a closed connection with a call on it must end the call */
	if (rc_async_status(c) == RC_OK)
		check_result(x, res);
	rc_async_release(c);
}

/* Mode 3: the fake's side, in a thread while the client blocks in rc_call. */
typedef struct bjob {
	const uint8_t *d;
	size_t n;
	bool patch, big;
} bjob;

/* Read one call (whole: the client's calls here are small, one read brings them); its xid. */
static bool read_call(int fd, uint32_t *xid)
{
	unsigned char m[4096];
	ssize_t got = recv(fd, m, sizeof(m), 0);
	if (got < 8)
		return false;
	*xid = get32(m + 4);
	return true;
}

static void *blocking_fake(void *arg)
{
	static unsigned char m[(1 << 17) + 4];
	const bjob *j = arg;
	size_t off = j->big ? 4 : 0, n = j->n;
	uint32_t xid;
	int fd = accept(lfake2, NULL, NULL);
	struct timeval tv = {5, 0};

	if (fd < 0)
		abort();
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (read_call(fd, &xid)) { /* the first call: answered well */
		put32(m, 0x80000000u | (uint32_t)good_reply(m + 4, xid));
		(void)send(fd, m, 36, MSG_NOSIGNAL);
	}
	if (read_call(fd, &xid)) { /* the second: the input */
		if (n > sizeof(m) - off)
			n = sizeof(m) - off;
		if (j->big)
			put32(m, 0x80000000u | (uint32_t)(n + 100000));
		memcpy(m + off, j->d, n);
		if (j->patch && off + n >= 8)
			put32(m + 4, xid);
		(void)send(fd, m, off + n, MSG_NOSIGNAL);
	}
	close(fd);
	return NULL;
}

static void stream_blocking(rc_xdrproc x, void *res, bool patch, bool big, const uint8_t *d,
                            size_t n)
{
	bjob j = {d, n, patch, big};
	pthread_t t;

	if (pthread_create(&t, NULL, blocking_fake, &j) != 0)
		abort();
	/* the first call connects (the last input's connection is closed: a try on it fails) */
	for (int i = 0; i < 3 && rc_call(bclnt, 0, NULL, NULL, NULL, NULL) != RC_OK; i++)
		;
	if (rc_call(bclnt, P_ECHO, NULL, NULL, x, res) == RC_OK)
		check_result(x, res);
	pthread_join(t, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char res[256];
	rc_xdrproc x;
	bool patch;

	if (size < 3 || size > 65000)
		return 0;
	if (uclnt == NULL)
		setup();
	x = results[data[1] % NRESULTS].x;
	patch = data[2] & 1;
	memset(res, 0, sizeof(res));
	switch (data[0] % 4) {
	case 0:
		udp_started(x, res, patch, data + 3, size - 3);
		break;
	case 1:
		udp_blocking(x, res, patch, data + 3, size - 3);
		break;
	case 2:
		stream_started(x, res, patch, data + 3, size - 3);
		break;
	default:
		stream_blocking(x, res, patch, (data[2] & 2) != 0, data + 3, size - 3);
		break;
	}
	rc_xdr_free(x, res);
	return 0;
}

/* Shared support of the security tests: see sec_util.h. */
#include "sec_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- a server in a thread ---------------------------------------------------------------- */

static void *sec_run(void *arg)
{
	sec_server *s = arg;
	rc_server_run(s->srv);
	return NULL;
}

int sec_start(sec_server *s, const char *const *uris, const rc_server_limits *lim,
              unsigned threads, size_t stack_kib)
{
	pthread_attr_t attr;
	int rc;

	memset(s, 0, sizeof(*s));
	if (rc_server_create(&s->srv) != RC_OK)
		return -1;
	if (lim != NULL && rc_server_set_limits(s->srv, lim) != RC_OK)
		return -1;
	if (rc_server_register(s->srv, &sec_prog1, NULL) != RC_OK)
		return -1;
	for (int i = 0; uris[i]; i++) {
		if (rc_server_listen(s->srv, uris[i], s->uri[i], sizeof(s->uri[i])) != RC_OK)
			return -1;
		s->n++;
	}
	rc_server_set_threads(s->srv, threads);
	pthread_attr_init(&attr);
	if (stack_kib > 0)
		pthread_attr_setstacksize(&attr, stack_kib * 1024);
	rc = pthread_create(&s->tid, &attr, sec_run, s);
	pthread_attr_destroy(&attr);
	return rc == 0 ? 0 : -1;
}

void sec_stop(sec_server *s)
{
	rc_server_stop(s->srv);
	pthread_join(s->tid, NULL);
	rc_server_destroy(s->srv);
	s->srv = NULL;
}

/* ---- the attacker ---------------------------------------------------------------------- */

void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int sec_port(const char *uri)
{
	const char *c = strrchr(uri, ':');
	return c ? atoi(c + 1) : -1;
}

static int sec_socket_to(int type, int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	struct timeval tv = {2, 0};
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (type == SOCK_STREAM)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int sec_udp(const char *uri) { return sec_socket_to(SOCK_DGRAM, sec_port(uri)); }
int sec_tcp(const char *uri) { return sec_socket_to(SOCK_STREAM, sec_port(uri)); }
int sec_tcp_port(int port) { return sec_socket_to(SOCK_STREAM, port); }

size_t sec_mkcall(unsigned char *b, uint32_t xid, uint32_t rpcvers, uint32_t prog, uint32_t vers,
                  uint32_t proc, uint32_t flavor, const void *cred, uint32_t credlen,
                  const void *args, size_t arglen)
{
	size_t n = 0, padded = ((size_t)credlen + 3) & ~(size_t)3;
	put32(b + n, xid); n += 4;
	put32(b + n, 0); n += 4;
	put32(b + n, rpcvers); n += 4;
	put32(b + n, prog); n += 4;
	put32(b + n, vers); n += 4;
	put32(b + n, proc); n += 4;
	put32(b + n, flavor); n += 4;
	put32(b + n, credlen); n += 4;
	memset(b + n, 0, padded);
	if (cred != NULL && credlen > 0)
		memcpy(b + n, cred, credlen);
	n += padded;
	put32(b + n, 0); n += 4;
	put32(b + n, 0); n += 4;
	if (arglen > 0)
		memcpy(b + n, args, arglen);
	return n + arglen;
}

size_t sec_call(unsigned char *b, uint32_t xid, uint32_t proc, const void *args, size_t arglen)
{
	return sec_mkcall(b, xid, 2, SEC_PROG, 1, proc, 0, NULL, 0, args, arglen);
}

bool sec_send_all(int fd, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

bool sec_send_record(int fd, const void *msg, size_t len)
{
	unsigned char mark[4];
	put32(mark, (uint32_t)len | 0x80000000u);
	return sec_send_all(fd, mark, 4) && sec_send_all(fd, msg, len);
}

/* Read exactly n bytes before the deadline: 0, -1 timeout, -2 closed. */
static int sec_read_n(int fd, unsigned char *p, size_t n, int64_t deadline)
{
	while (n > 0) {
		int64_t left = deadline - sec_ms();
		struct pollfd pf = {fd, POLLIN, 0};
		ssize_t got;
		if (left <= 0)
			return -1;
		if (poll(&pf, 1, (int)left) <= 0)
			continue;
		got = recv(fd, p, n, MSG_DONTWAIT);
		if (got == 0)
			return -2;
		if (got < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
				continue;
			return -2;
		}
		p += got;
		n -= (size_t)got;
	}
	return 0;
}

ssize_t sec_recv_record(int fd, unsigned char *buf, size_t cap, int timeout_ms)
{
	int64_t deadline = sec_ms() + timeout_ms;
	size_t len = 0;

	for (;;) {
		unsigned char h[4];
		uint32_t mark, flen;
		int rc = sec_read_n(fd, h, 4, deadline);
		if (rc != 0)
			return rc;
		mark = get32(h);
		flen = mark & 0x7fffffffu;
		if (flen > cap - len)
			return -3;
		if ((rc = sec_read_n(fd, buf + len, flen, deadline)) != 0)
			return rc;
		len += flen;
		if (mark & 0x80000000u)
			return (ssize_t)len;
	}
}

ssize_t sec_recv_dgram(int fd, unsigned char *buf, size_t cap, int timeout_ms)
{
	struct pollfd pf = {fd, POLLIN, 0};
	if (poll(&pf, 1, timeout_ms) <= 0)
		return -1;
	return recv(fd, buf, cap, MSG_DONTWAIT);
}

int sec_reply_kind(const unsigned char *r, size_t n, uint32_t *xid, uint32_t *low, uint32_t *high)
{
	if (n < 12 || get32(r + 4) != 1)
		return -1;
	if (xid)
		*xid = get32(r);
	if (get32(r + 8) == 0) { /* MSG_ACCEPTED: verifier, accept_stat */
		uint32_t vlen;
		if (n < 20)
			return -1;
		vlen = get32(r + 16);
		if (vlen > 400 || n < 24 + ((vlen + 3) & ~3u))
			return -1;
		return (int)get32(r + 20 + ((vlen + 3) & ~3u));
	}
	if (get32(r + 8) != 1 || n < 16)
		return -1;
	if (get32(r + 12) == 0) { /* RPC_MISMATCH */
		if (n < 24)
			return -1;
		if (low)
			*low = get32(r + 16);
		if (high)
			*high = get32(r + 20);
		return DEN_RPC_MISMATCH;
	}
	if (get32(r + 12) == 1 && n >= 20) {
		uint32_t st = get32(r + 16);
		return st == 1 ? DEN_AUTH_BADCRED : st == 2 ? DEN_AUTH_REJECTEDCRED : DEN_AUTH_OTHER;
	}
	return -1;
}

bool sec_wait_closed(int fd, int timeout_ms)
{
	int64_t deadline = sec_ms() + timeout_ms;
	unsigned char buf[65536];

	for (;;) {
		int64_t left = deadline - sec_ms();
		struct pollfd pf = {fd, POLLIN | POLLRDHUP, 0};
		ssize_t got;
		if (left <= 0)
			return false;
		if (poll(&pf, 1, (int)left) <= 0)
			continue;
		got = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			return true;
	}
}

rc_status sec_null_call(const char *uri, uint32_t timeout_ms)
{
	rc_client *c;
	rc_status st = rc_client_create(&c, uri, SEC_PROG, 1);

	if (st != RC_OK)
		return st;
	rc_client_set_timeout(c, timeout_ms);
	rc_client_set_retry(c, timeout_ms / 4 ? timeout_ms / 4 : 1);
	st = rc_call(c, P_NULL, NULL, NULL, NULL, NULL);
	rc_client_destroy(c);
	return st;
}

/* ---- measurements ----------------------------------------------------------------------- */

long sec_rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	if (pid == 0)
		snprintf(path, sizeof(path), "/proc/self/status");
	else
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			kib = strtol(line + 6, NULL, 10);
	fclose(f);
	return kib;
}

long sec_cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;
	size_t n;

	if (pid == 0)
		snprintf(path, sizeof(path), "/proc/self/stat");
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the command name may hold spaces: fields are counted from the last ')' */
	if ((p = strrchr(buf, ')')) == NULL)
		return -1;
	/* after ") ": state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
	 * utime(14) stime(15) */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (long)(ut + st);
}

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif

long sec_rss_slack_kib(void)
{
#ifdef RUNNING_ON_VALGRIND
	if (RUNNING_ON_VALGRIND)
		return 24 * 1024;
#endif
#if defined(__SANITIZE_THREAD__)
	return 256 * 1024; /* ThreadSanitizer's shadow memory grows with every byte touched */
#endif
#if defined(__SANITIZE_ADDRESS__)
	/* AddressSanitizer holds freed blocks in its quarantine (4 MiB here, sec_alloc.c) and in
	 * per-thread caches, with redzones around each: a server with worker threads, which copies
	 * every request of a busy connection, shows ~8 MiB over its ~2 MiB of live growth */
	return 16 * 1024;
#endif
	return 0;
}

int64_t sec_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}


/*
 * tests/faults/relay.c -- the fault-injecting UDP relay (see relay.h). One thread, one poll
 * loop over the listening socket, one upstream socket per client address and a wake-up pipe.
 */
#include "relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RELAY_MAX_DGRAM 65536
#define RELAY_MAX_BYTES (32u << 20) /* bytes held at most, whatever max_held says */
#define RELAY_XIDS (1u << 16)       /* slots of the (client, xid) table that counts retransmissions */

typedef struct rclient {
	struct sockaddr_storage addr;
	socklen_t len;
	int fd; /* upstream, connected to the server; -1: free slot */
	unsigned id;
	int64_t last;
} rclient;

typedef struct held {
	unsigned char *data;
	size_t len;
	int dir;
	unsigned slot, id; /* the client (slot and id: a forgotten client's datagrams are dropped) */
	int64_t due;       /* not before */
	bool after_next;   /* reordered: released once a later datagram of dir went out */
	uint64_t seq;      /* sent_seq[dir] when held */
	int64_t hold_ns;   /* reordered: released anyway this long after due */
} held;

struct relay {
	relay_opts o;
	char server[256];
	struct sockaddr_storage srv;
	socklen_t srvlen;
	int lfd;
	int wake[2];
	pthread_t tid;
	atomic_int stop;
	pthread_mutex_t mu; /* stats and fault options */
	char uri[80];
	uint16_t port;
	rclient *clients;
	unsigned next_id;
	held *held;
	uint32_t nheld;
	size_t held_bytes;
	uint64_t rng;
	uint64_t sent_seq[2];
	uint64_t *xids;
	uint32_t nxids;
	relay_stats st;
	unsigned char buf[RELAY_MAX_DGRAM];
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t next_rand(relay *r)
{
	uint64_t z = (r->rng += 0x9E3779B97F4A7C15ULL); /* splitmix64 */
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static bool draw(relay *r, double p)
{
	if (p <= 0)
		return false;
	return (double)(next_rand(r) >> 11) * 0x1.0p-53 < p;
}

bool relay_parse_uri(const char *uri, struct sockaddr_storage *ss, unsigned *sslen)
{
	char host[256];
	const char *p, *port;
	size_t n;
	struct addrinfo hints, *ai = NULL;

	if (strncmp(uri, "udp://", 6) != 0)
		return false;
	p = uri + 6;
	if (*p == '[') {
		const char *e = strchr(p, ']');
		if (!e || e[1] != ':')
			return false;
		n = (size_t)(e - p - 1);
		if (n >= sizeof host)
			return false;
		memcpy(host, p + 1, n);
		port = e + 2;
	} else {
		const char *e = strrchr(p, ':');
		if (!e)
			return false;
		n = (size_t)(e - p);
		if (n >= sizeof host)
			return false;
		memcpy(host, p, n);
		port = e + 1;
	}
	host[n] = '\0';
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_DGRAM;
	if (getaddrinfo(host, port, &hints, &ai) != 0 || !ai)
		return false;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*sslen = (unsigned)ai->ai_addrlen;
	freeaddrinfo(ai);
	return true;
}

static void bigbufs(int fd)
{
	int sz = 4 << 20;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/* ---- counting retransmissions ----------------------------------------------------------- */

static void note_xid(relay *r, unsigned id, const unsigned char *m, size_t len)
{
	if (len < 8)
		return;
	uint32_t xid = (uint32_t)m[0] << 24 | (uint32_t)m[1] << 16 | (uint32_t)m[2] << 8 | m[3];
	uint64_t key = ((uint64_t)id << 32 | xid) | (1ULL << 63);
	uint64_t h = key * 0x9E3779B97F4A7C15ULL;
	if (r->nxids >= RELAY_XIDS / 2) { /* full enough: start over (counts stay approximate) */
		memset(r->xids, 0, RELAY_XIDS * sizeof *r->xids);
		r->nxids = 0;
	}
	for (uint32_t i = (uint32_t)(h >> 48);; i = (i + 1) & (RELAY_XIDS - 1)) {
		if (r->xids[i] == key) {
			r->st.retrans++;
			return;
		}
		if (r->xids[i] == 0) {
			r->xids[i] = key;
			r->nxids++;
			return;
		}
	}
}

/* ---- sending ---------------------------------------------------------------------------- */

static void emit(relay *r, int dir, unsigned slot, unsigned id, const unsigned char *m,
                 size_t len)
{
	rclient *c = &r->clients[slot];
	ssize_t n;

	if (c->fd < 0 || c->id != id) {
		r->st.send_errors[dir]++; /* the client was forgotten meanwhile */
		return;
	}
	if (dir == RELAY_REQ)
		n = send(c->fd, m, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	else
		n = sendto(r->lfd, m, len, MSG_DONTWAIT | MSG_NOSIGNAL,
		           (struct sockaddr *)&c->addr, c->len);
	if (n < 0) {
		r->st.send_errors[dir]++;
		return;
	}
	r->st.out[dir]++;
	r->sent_seq[dir]++;
	if (r->o.tap)
		r->o.tap(dir, id, m, len, r->o.tap_udata);
}

static void release(relay *r, int64_t now, bool all_due)
{
	bool again = true;
	while (again) {
		again = false;
		for (uint32_t i = 0; i < r->nheld; i++) {
			held *h = &r->held[i];
			bool go;
			if (all_due)
				go = true;
			else if (now < h->due)
				go = false;
			else if (!h->after_next)
				go = true;
			else
				go = r->sent_seq[h->dir] > h->seq || now >= h->due + h->hold_ns;
			if (!go)
				continue;
			held x = *h;
			r->held[i] = r->held[--r->nheld];
			r->held_bytes -= x.len;
			if (!all_due)
				emit(r, x.dir, x.slot, x.id, x.data, x.len);
			free(x.data);
			again = true; /* sending may release another reordered copy */
			break;
		}
	}
}

/* One copy of a datagram: out now, or held. */
static void schedule(relay *r, int dir, unsigned slot, const unsigned char *m, size_t len,
                     int64_t now)
{
	const relay_dir_opts *d = &r->o.dir[dir];
	int64_t delay = (int64_t)d->delay_ms * 1000000;
	if (d->jitter_ms)
		delay += (int64_t)(next_rand(r) % ((uint64_t)d->jitter_ms * 1000 + 1)) * 1000;
	bool reorder = draw(r, d->reorder);
	if (delay == 0 && !reorder) {
		emit(r, dir, slot, r->clients[slot].id, m, len);
		return;
	}
	if (r->nheld >= r->o.max_held || r->held_bytes + len > RELAY_MAX_BYTES) {
		r->st.overflow[dir]++;
		return;
	}
	unsigned char *copy = malloc(len ? len : 1);
	if (!copy) {
		r->st.overflow[dir]++;
		return;
	}
	memcpy(copy, m, len);
	held *h = &r->held[r->nheld++];
	h->data = copy;
	h->len = len;
	h->dir = dir;
	h->slot = slot;
	h->id = r->clients[slot].id;
	h->due = now + delay;
	h->after_next = reorder;
	h->seq = r->sent_seq[dir];
	h->hold_ns = (int64_t)(d->hold_ms ? d->hold_ms : 50) * 1000000;
	r->held_bytes += len;
	if (r->nheld > r->st.max_held_seen)
		r->st.max_held_seen = r->nheld;
	if (delay)
		r->st.delayed[dir]++;
	if (reorder)
		r->st.reordered[dir]++;
}

static void process(relay *r, int dir, unsigned slot, const unsigned char *m, size_t len)
{
	const relay_dir_opts *d = &r->o.dir[dir];
	int64_t now = now_ns();

	r->st.in[dir]++;
	if (dir == RELAY_REQ)
		note_xid(r, r->clients[slot].id, m, len);
	if (draw(r, d->drop)) {
		r->st.dropped[dir]++;
		return;
	}
	int copies = 1;
	if (draw(r, d->dup)) {
		copies = 2;
		r->st.duplicated[dir]++;
	}
	for (int i = 0; i < copies; i++)
		schedule(r, dir, slot, m, len, now);
	release(r, now, false); /* a reordered copy goes out after the one just sent */
}

/* The slot of client addr (a new one, possibly recycling the longest-idle), or -1. */
static int client_slot(relay *r, const struct sockaddr_storage *a, socklen_t len)
{
	int freeslot = -1, oldest = -1;
	for (uint32_t i = 0; i < r->o.max_clients; i++) {
		rclient *c = &r->clients[i];
		if (c->fd < 0) {
			if (freeslot < 0)
				freeslot = (int)i;
			continue;
		}
		if (c->len == len && memcmp(&c->addr, a, len) == 0) {
			c->last = now_ns();
			return (int)i;
		}
		if (oldest < 0 || c->last < r->clients[oldest].last)
			oldest = (int)i;
	}
	if (freeslot < 0) {
		freeslot = oldest;
		close(r->clients[oldest].fd);
		r->clients[oldest].fd = -1;
	}
	int fd = socket(r->srv.ss_family, SOCK_DGRAM, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&r->srv, r->srvlen) != 0) {
		close(fd);
		return -1;
	}
	bigbufs(fd);
	rclient *c = &r->clients[freeslot];
	memcpy(&c->addr, a, len);
	c->len = len;
	c->fd = fd;
	c->id = ++r->next_id;
	c->last = now_ns();
	r->st.clients++;
	return freeslot;
}

/* ---- the loop --------------------------------------------------------------------------- */

static void *relay_main(void *p)
{
	relay *r = p;
	uint32_t nc = r->o.max_clients;
	struct pollfd *pf = calloc(nc + 2, sizeof *pf);
	unsigned *slots = calloc(nc + 2, sizeof *slots);
	if (!pf || !slots) {
		free(pf);
		free(slots);
		return NULL;
	}
	while (!atomic_load(&r->stop)) {
		int n = 0, timeout = 100;
		pthread_mutex_lock(&r->mu);
		int64_t now = now_ns();
		for (uint32_t i = 0; i < r->nheld; i++) {
			const held *h = &r->held[i];
			int64_t t = h->due + (h->after_next ? h->hold_ns : 0) - now;
			int ms = t <= 0 ? 0 : (int)((t + 999999) / 1000000);
			if (ms < timeout)
				timeout = ms;
		}
		pf[n++] = (struct pollfd){r->wake[0], POLLIN, 0};
		pf[n++] = (struct pollfd){r->lfd, POLLIN, 0};
		for (uint32_t i = 0; i < nc; i++)
			if (r->clients[i].fd >= 0) {
				slots[n] = i;
				pf[n++] = (struct pollfd){r->clients[i].fd, POLLIN, 0};
			}
		pthread_mutex_unlock(&r->mu);

		if (poll(pf, (nfds_t)n, timeout) < 0 && errno != EINTR)
			break;
		if (pf[0].revents) {
			char b[64];
			while (read(r->wake[0], b, sizeof b) > 0)
				;
		}
		pthread_mutex_lock(&r->mu);
		/* replies first: reading requests may recycle a client slot */
		for (int i = 2; i < n; i++) {
			if (!pf[i].revents)
				continue;
			rclient *c = &r->clients[slots[i]];
			for (int k = 0; k < 64 && c->fd == pf[i].fd; k++) {
				ssize_t got = recv(c->fd, r->buf, sizeof r->buf, MSG_DONTWAIT);
				if (got < 0) {
					if (errno == EAGAIN || errno == EWOULDBLOCK)
						break;
					continue; /* ECONNREFUSED: the server is not there (yet); go on */
				}
				c->last = now_ns();
				process(r, RELAY_REP, slots[i], r->buf, (size_t)got);
			}
		}
		if (pf[1].revents) {
			for (int k = 0; k < 64; k++) {
				struct sockaddr_storage a;
				socklen_t alen = sizeof a;
				ssize_t got = recvfrom(r->lfd, r->buf, sizeof r->buf, MSG_DONTWAIT,
				                       (struct sockaddr *)&a, &alen);
				if (got < 0) {
					if (errno == EAGAIN || errno == EWOULDBLOCK)
						break;
					continue;
				}
				int s = client_slot(r, &a, alen);
				if (s < 0) {
					r->st.in[RELAY_REQ]++;
					r->st.send_errors[RELAY_REQ]++;
					continue;
				}
				process(r, RELAY_REQ, (unsigned)s, r->buf, (size_t)got);
			}
		}
		release(r, now_ns(), false);
		pthread_mutex_unlock(&r->mu);
	}
	free(pf);
	free(slots);
	return NULL;
}

relay *relay_start(const relay_opts *o, char *err, size_t errlen)
{
	relay *r = calloc(1, sizeof *r);
	struct sockaddr_storage la;
	unsigned lalen = 0;
	const char *listen = o->listen ? o->listen : "udp://127.0.0.1:0";

#define FAIL(...)                                    \
	do {                                             \
		if (err)                                     \
			snprintf(err, errlen, __VA_ARGS__);      \
		goto fail;                                   \
	} while (0)
	if (!r) {
		if (err)
			snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->lfd = r->wake[0] = r->wake[1] = -1;
	r->o = *o;
	if (!r->o.max_held)
		r->o.max_held = 1024;
	if (!r->o.max_clients)
		r->o.max_clients = 256;
	r->rng = o->seed ? o->seed : 1;
	if (!o->server || strlen(o->server) >= sizeof r->server)
		FAIL("relay: no server address");
	strcpy(r->server, o->server);
	r->o.server = r->server;
	r->o.listen = NULL;
	unsigned slen;
	if (!relay_parse_uri(o->server, &r->srv, &slen))
		FAIL("relay: bad server address '%s'", o->server);
	r->srvlen = slen;
	if (!relay_parse_uri(listen, &la, &lalen))
		FAIL("relay: bad listen address '%s'", listen);
	r->clients = calloc(r->o.max_clients, sizeof *r->clients);
	r->held = calloc(r->o.max_held, sizeof *r->held);
	r->xids = calloc(RELAY_XIDS, sizeof *r->xids);
	if (!r->clients || !r->held || !r->xids)
		FAIL("relay: out of memory");
	for (uint32_t i = 0; i < r->o.max_clients; i++)
		r->clients[i].fd = -1;
	if ((r->lfd = socket(la.ss_family, SOCK_DGRAM, 0)) < 0)
		FAIL("relay: socket: %s", strerror(errno));
	if (bind(r->lfd, (struct sockaddr *)&la, lalen) != 0)
		FAIL("relay: bind %s: %s", listen, strerror(errno));
	bigbufs(r->lfd);
	socklen_t blen = sizeof la;
	getsockname(r->lfd, (struct sockaddr *)&la, &blen);
	char host[INET6_ADDRSTRLEN];
	if (la.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&la;
		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof host);
		r->port = ntohs(s6->sin6_port);
		snprintf(r->uri, sizeof r->uri, "udp://[%s]:%u", host, r->port);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&la;
		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof host);
		r->port = ntohs(s4->sin_port);
		snprintf(r->uri, sizeof r->uri, "udp://%s:%u", host, r->port);
	}
	if (pipe2(r->wake, O_NONBLOCK | O_CLOEXEC) != 0)
		FAIL("relay: pipe: %s", strerror(errno));
	pthread_mutex_init(&r->mu, NULL);
	int e = pthread_create(&r->tid, NULL, relay_main, r);
	if (e) {
		pthread_mutex_destroy(&r->mu);
		FAIL("relay: pthread_create: %s", strerror(e));
	}
	return r;
fail:
	if (r->lfd >= 0)
		close(r->lfd);
	if (r->wake[0] >= 0) {
		close(r->wake[0]);
		close(r->wake[1]);
	}
	free(r->clients);
	free(r->held);
	free(r->xids);
	free(r);
	return NULL;
#undef FAIL
}

const char *relay_uri(const relay *r)
{
	return r->uri;
}

uint16_t relay_port(const relay *r)
{
	return r->port;
}

void relay_get_stats(relay *r, relay_stats *s)
{
	pthread_mutex_lock(&r->mu);
	*s = r->st;
	pthread_mutex_unlock(&r->mu);
}

void relay_set_faults(relay *r, const relay_dir_opts dir[2])
{
	pthread_mutex_lock(&r->mu);
	r->o.dir[0] = dir[0];
	r->o.dir[1] = dir[1];
	pthread_mutex_unlock(&r->mu);
	ssize_t n = write(r->wake[1], "x", 1);
	(void)n;
}

void relay_stop(relay *r)
{
	if (!r)
		return;
	atomic_store(&r->stop, 1);
	ssize_t n = write(r->wake[1], "x", 1);
	(void)n;
	pthread_join(r->tid, NULL);
	release(r, 0, true); /* frees what is held, sends nothing */
	for (uint32_t i = 0; i < r->o.max_clients; i++)
		if (r->clients[i].fd >= 0)
			close(r->clients[i].fd);
	close(r->lfd);
	close(r->wake[0]);
	close(r->wake[1]);
	pthread_mutex_destroy(&r->mu);
	free(r->clients);
	free(r->held);
	free(r->xids);
	free(r);
}

char *relay_format_stats(const relay_stats *s, char *buf, size_t len)
{
	static const char *const name[2] = {"req", "rep"};
	size_t off = 0;
	for (int d = 0; d < 2 && off < len; d++) {
		int w = snprintf(buf + off, len - off,
		                 "%s%s in %llu out %llu drop %llu dup %llu reorder %llu delay %llu "
		                 "overflow %llu senderr %llu",
		                 d ? " | " : "", name[d], (unsigned long long)s->in[d],
		                 (unsigned long long)s->out[d], (unsigned long long)s->dropped[d],
		                 (unsigned long long)s->duplicated[d],
		                 (unsigned long long)s->reordered[d], (unsigned long long)s->delayed[d],
		                 (unsigned long long)s->overflow[d],
		                 (unsigned long long)s->send_errors[d]);
		if (w < 0)
			break;
		off += (size_t)w;
	}
	if (off < len)
		snprintf(buf + off, len - off, " | retransmissions %llu clients %llu max-held %llu",
		         (unsigned long long)s->retrans, (unsigned long long)s->clients,
		         (unsigned long long)s->max_held_seen);
	return buf;
}

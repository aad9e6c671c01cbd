/*
 * The PROXY protocol, version 2 (HAProxy's "proxy-protocol.txt", section 2.2): the binary
 * header a load balancer (HAProxy's send-proxy-v2, nginx's proxy_protocol, Envoy, AWS NLB,
 * GCP) writes at the start of each connection it opens to a server, naming the client it
 * carries. A listener with ?proxy=v2 reads it before anything else (runtime/proxy.c drives
 * it); its source address then stands for the connection's peer (rc__tp_peer).
 *
 * Three pieces, each usable alone: the parser (rc__proxy_parse, pure: what the fuzz target
 * drives), the reader (rc__proxy_read: exactly the header's bytes off a non-blocking socket,
 * never a byte of what follows, so the stream transport starts at the first record), and the
 * trusted-balancer list (?proxy_from=CIDR,...). Plus the two socket steps of a drained
 * connection's close (rc__tp_shutdown_write, rc__tp_discard).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "transports/proxy_v2.h"
#include "transports/transport.h"

static const unsigned char rc__pp2_sig[12] = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D,
                                              0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};

/* proxy_v2.h */
int rc__proxy_parse(const unsigned char *b, size_t len, size_t *need, rc__proxy_hdr *h)
{
	size_t n = len < 12 ? len : 12, alen, hlen;
	unsigned ver_cmd, fam;
	const unsigned char *p, *end;

	memset(h, 0, sizeof(*h));
	if (memcmp(b, rc__pp2_sig, n) != 0)
		return -1; /* not a v2 header (a v1 text line, or a client without a balancer) */
	if (len < 16) {
		*need = 16;
		return 0;
	}
	ver_cmd = b[12];
	fam = b[13];
	alen = (size_t)b[14] << 8 | b[15];
	hlen = 16 + alen;
	if ((ver_cmd >> 4) != 2 || (ver_cmd & 0x0F) > 1 || hlen > RC__PROXY_MAX)
		return -1;
	if (len < hlen) {
		*need = hlen;
		return 0;
	}
	h->local = (ver_cmd & 0x0F) == 0;
	p = b + 16;
	end = b + hlen;
	switch (fam >> 4) { /* the address family; fam & 0x0F: 0 unspec, 1 stream, 2 dgram */
	case 0x0: /* AF_UNSPEC: no addresses */
		break;
	case 0x1: { /* AF_INET: src, dst (4 bytes each), src port, dst port */
		struct sockaddr_in *s = (struct sockaddr_in *)&h->src.ss;
		if (alen < 12)
			return -1;
		s->sin_family = AF_INET;
		memcpy(&s->sin_addr, p, 4);
		memcpy(&s->sin_port, p + 8, 2);
		h->src.len = sizeof(*s);
		p += 12;
		break;
	}
	case 0x2: { /* AF_INET6: 16 bytes each, then the ports */
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&h->src.ss;
		if (alen < 36)
			return -1;
		s->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, p, 16);
		memcpy(&s->sin6_port, p + 32, 2);
		h->src.len = sizeof(*s);
		p += 36;
		break;
	}
	case 0x3: /* AF_UNIX: two 108-byte paths; the peer stays the socket's own */
		if (alen < 216)
			return -1;
		p += 216;
		break;
	default:
		return -1;
	}
	if ((fam & 0x0F) > 2)
		return -1;
	/* an address the balancer could not name (UNSPEC, UNIX) leaves the socket's peer */
	if (h->local || (fam & 0x0F) == 0)
		h->src.len = 0;
	/* the TLVs after the addresses: each type, 16-bit length, value -- exactly to the end */
	while (p < end) {
		size_t vlen;
		if (end - p < 3)
			return -1;
		vlen = (size_t)p[1] << 8 | p[2];
		if ((size_t)(end - p - 3) < vlen)
			return -1;
		p += 3 + vlen;
	}
	return (int)hlen;
}

/* proxy_v2.h */
rc_status rc__proxy_read(rc_tp *tp, rc__proxy_rd *rd, rc__proxy_hdr *h)
{
	for (;;) {
		size_t need = 0;
		ssize_t got;
		int r = rd->have > 0 ? rc__proxy_parse(rd->buf, rd->have, &need, h) : 0;

		if (r > 0)
			return RC_OK;
		if (r < 0)
			return RC_BADREPLY;
		if (rd->have == 0)
			need = 16;
		/* exactly up to what the header needs: never a byte of the first record */
		got = recv(tp->fd, rd->buf + rd->have, need - rd->have, MSG_DONTWAIT);
		if (got == 0)
			return RC_CLOSED;
		if (got < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? RC_AGAIN
			                                                                 : RC_CANTRECV;
		rd->have += (size_t)got;
	}
}

/* proxy_v2.h */
rc_status rc__proxy_set_caller(rc_tp *tp, const rc_peer *src)
{
	rc_peer *p;

	if (src->len == 0)
		return RC_OK; /* LOCAL (the balancer's own check), or no address: the socket's */
	if ((p = malloc(sizeof(*p))) == NULL)
		return RC_NOMEM;
	*p = *src;
	free(tp->caller);
	tp->caller = p;
	return RC_OK;
}

/* One CIDR ("10.0.0.0/8", "::1", "fd00::/8") into e; false if malformed. */
static bool rc__cidr_parse(const char *s, size_t n, rc__proxy_cidr *e)
{
	char buf[64];
	const char *slash;
	long bits;
	int maxbits;

	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	memset(e, 0, sizeof(*e));
	if ((slash = strchr(buf, '/')) != NULL)
		buf[slash - buf] = '\0';
	if (inet_pton(AF_INET, buf, e->addr) == 1) {
		e->family = AF_INET;
		maxbits = 32;
	} else if (inet_pton(AF_INET6, buf, e->addr) == 1) {
		e->family = AF_INET6;
		maxbits = 128;
	} else {
		return false;
	}
	bits = maxbits;
	if (slash != NULL) {
		char *endp;
		const char *q = slash + 1;
		if (*q < '0' || *q > '9')
			return false;
		bits = strtol(q, &endp, 10);
		if (*endp != '\0' || bits < 0 || bits > maxbits)
			return false;
	}
	e->bits = (unsigned)bits;
	return true;
}

/* proxy_v2.h */
bool rc__proxy_from_add(rc__proxy_from *f, const char *list)
{
	const char *p = list;

	while (*p != '\0') {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (f->n >= RC__PROXY_FROM_MAX) {
			rc__tp_set_detail("URI query: proxy_from takes at most %d networks",
			                  RC__PROXY_FROM_MAX);
			return false;
		}
		if (!rc__cidr_parse(p, n, &f->net[f->n])) {
			rc__tp_set_detail("URI query: proxy_from=%.*s is not an address or "
			                  "ADDRESS/BITS", (int)(n < 60 ? n : 60), p);
			return false;
		}
		f->n++;
		p += n + (comma != NULL);
	}
	return true;
}

/* Whether the first bits of a and b agree. */
static bool rc__bits_eq(const unsigned char *a, const unsigned char *b, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	if (memcmp(a, b, whole) != 0)
		return false;
	return rest == 0 || ((a[whole] ^ b[whole]) & (0xFF00u >> rest) & 0xFF) == 0;
}

/* proxy_v2.h */
bool rc__proxy_from_ok(const rc__proxy_from *f, rc_tp *tp)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	unsigned char a[16];
	int fam;

	if (f->n == 0)
		return true;
	if (getpeername(tp->fd, (struct sockaddr *)&ss, &sl) != 0)
		return false;
	fam = ss.ss_family;
	if (fam == AF_INET) {
		memcpy(a, &((struct sockaddr_in *)&ss)->sin_addr, 4);
	} else if (fam == AF_INET6) {
		const struct in6_addr *v6 = &((struct sockaddr_in6 *)&ss)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(v6)) { /* a v4 balancer on a dual-stack listener */
			fam = AF_INET;
			memcpy(a, v6->s6_addr + 12, 4);
		} else {
			memcpy(a, v6->s6_addr, 16);
		}
	} else {
		return false; /* a Unix-domain peer has no address to trust */
	}
	for (unsigned i = 0; i < f->n; i++)
		if (f->net[i].family == fam && rc__bits_eq(a, f->net[i].addr, f->net[i].bits))
			return true;
	return false;
}

/* proxy_v2.h */
void rc__tp_shutdown_write(rc_tp *tp)
{
	if (tp->fd >= 0)
		(void)shutdown(tp->fd, SHUT_WR);
}

/* proxy_v2.h */
rc_status rc__tp_discard(rc_tp *tp)
{
	unsigned char sink[4096];

	if (tp->fd < 0)
		return RC_CLOSED;
	for (int i = 0; i < 64; i++) {
		ssize_t got = recv(tp->fd, sink, sizeof(sink), MSG_DONTWAIT);
		if (got == 0)
			return RC_CLOSED;
		if (got < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? RC_AGAIN
			                                                                 : RC_CANTRECV;
	}
	return RC_AGAIN;
}

/*
 * The PROXY protocol, version 2 (HAProxy's "proxy-protocol.txt", section 2.2) -- and its
 * version 1 text line (section 2.1), taken too, as HAProxy's accept-proxy does: the header
 * a load balancer (HAProxy's send-proxy-v2, nginx's proxy_protocol, Envoy, AWS NLB,
 * GCP) writes at the start of each connection it opens to a server, naming the client it
 * carries. A listener with ?proxy=v2 reads it before anything else (runtime/server/proxy.c drives
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

/* A v1 port: 1 to 5 decimal digits, no leading zero, at most 65535; false otherwise. */
static bool rc__v1_port(const char *s, uint16_t *port)
{
	unsigned long v = 0;
	size_t n = strlen(s);

	if (n == 0 || n > 5 || (n > 1 && s[0] == '0'))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > 65535)
		return false;
	*port = htons((uint16_t)v);
	return true;
}

/* The v1 (text) header (proxy-protocol.txt section 2.1): "PROXY TCP4|TCP6 SRC DST SPORT
 * DPORT\r\n" or "PROXY UNKNOWN...\r\n", at most RC__PROXY_V1_MAX bytes; rc__proxy_parse's
 * returns. Strict: single spaces, printable ASCII, both addresses of the named family,
 * decimal ports. UNKNOWN (the balancer could not name the client) keeps the socket's peer. */
static int rc__proxy_parse_v1(const unsigned char *b, size_t len, size_t *need,
                              rc__proxy_hdr *h)
{
	char line[RC__PROXY_V1_MAX], *f[6], *q;
	const unsigned char *lf = memchr(b, '\n', len < RC__PROXY_V1_MAX ? len : RC__PROXY_V1_MAX);
	size_t hlen, nf = 0;
	unsigned char dst[16];
	int fam;

	if (lf == NULL) {
		if (len >= RC__PROXY_V1_MAX)
			return -1;
		*need = len + 1; /* (its length is known only at its end) */
		return 0;
	}
	hlen = (size_t)(lf - b) + 1;
	if (hlen < 8 || b[hlen - 2] != '\r')
		return -1;
	memcpy(line, b + 6, hlen - 8); /* between "PROXY " and "\r\n" */
	line[hlen - 8] = '\0';
	for (size_t i = 0; i < hlen - 8; i++)
		if (line[i] < 0x20 || line[i] > 0x7E)
			return -1;
	if (strncmp(line, "UNKNOWN", 7) == 0 && (line[7] == '\0' || line[7] == ' '))
		return (int)hlen; /* the rest of an UNKNOWN line is ignored, as the spec says */
	for (q = line; nf < 6; q++) { /* split at single spaces */
		f[nf++] = q;
		if ((q = strchr(q, ' ')) == NULL)
			break;
		*q = '\0';
	}
	if (nf != 5)
		return -1;
	if (strcmp(f[0], "TCP4") == 0)
		fam = AF_INET;
	else if (strcmp(f[0], "TCP6") == 0)
		fam = AF_INET6;
	else
		return -1;
	if (fam == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&h->src.ss;
		if (inet_pton(AF_INET, f[1], &s->sin_addr) != 1 || inet_pton(AF_INET, f[2], dst) != 1 ||
		    !rc__v1_port(f[3], &s->sin_port) || !rc__v1_port(f[4], &(uint16_t){0}))
			return -1;
		s->sin_family = AF_INET;
		h->src.len = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&h->src.ss;
		if (inet_pton(AF_INET6, f[1], &s->sin6_addr) != 1 ||
		    inet_pton(AF_INET6, f[2], dst) != 1 || !rc__v1_port(f[3], &s->sin6_port) ||
		    !rc__v1_port(f[4], &(uint16_t){0}))
			return -1;
		s->sin6_family = AF_INET6;
		h->src.len = sizeof(*s);
	}
	return (int)hlen;
}

/* proxy_v2.h */
int rc__proxy_parse(const unsigned char *b, size_t len, size_t *need, rc__proxy_hdr *h)
{
	size_t n = len < 12 ? len : 12, alen, hlen;
	unsigned ver_cmd, fam;
	const unsigned char *p, *end;

	memset(h, 0, sizeof(*h));
	if (len == 0) {
		*need = 8; /* (both versions' headers are longer: v1's shortest is 15) */
		return 0;
	}
	if (b[0] == 'P') {
		if (memcmp(b, "PROXY ", len < 6 ? len : 6) != 0)
			return -1;
		if (len < 6) {
			*need = 6;
			return 0;
		}
		return rc__proxy_parse_v1(b, len, need, h);
	}
	if (memcmp(b, rc__pp2_sig, n) != 0)
		return -1; /* not a header (a client without a balancer) */
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

/* recv's result as the reader's status: RC_OK (bytes came), RC_CLOSED, RC_AGAIN,
 * RC_CANTRECV. */
static rc_status rc__recv_status(ssize_t got)
{
	if (got > 0)
		return RC_OK;
	if (got == 0)
		return RC_CLOSED;
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? RC_AGAIN : RC_CANTRECV;
}

/* proxy_v2.h */
rc_status rc__proxy_read(rc_tp *tp, rc__proxy_rd *rd, rc__proxy_hdr *h)
{
	for (;;) {
		size_t need = 0, want;
		ssize_t got;
		rc_status st;
		int r = rc__proxy_parse(rd->buf, rd->have, &need, h);

		if (r > 0)
			return RC_OK;
		if (r < 0)
			return RC_BADREPLY;
		want = need - rd->have;
		if (rd->have >= 6 && rd->buf[0] == 'P') {
			/* v1: its end is its line feed. What has come is looked at, and taken up to
			 * the line feed if it is there (else all of it: all of it is the header's). */
			const unsigned char *lf;
			want = RC__PROXY_V1_MAX - rd->have;
			got = recv(tp->fd, rd->buf + rd->have, want, MSG_DONTWAIT | MSG_PEEK);
			if ((st = rc__recv_status(got)) != RC_OK)
				return st;
			lf = memchr(rd->buf + rd->have, '\n', (size_t)got);
			want = lf ? (size_t)(lf - (rd->buf + rd->have)) + 1 : (size_t)got;
		}
		/* exactly up to what the header needs: never a byte of the first record */
		got = recv(tp->fd, rd->buf + rd->have, want, MSG_DONTWAIT);
		if ((st = rc__recv_status(got)) != RC_OK)
			return st;
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
		rc_status st = rc__recv_status(recv(tp->fd, sink, sizeof(sink), MSG_DONTWAIT));
		if (st != RC_OK)
			return st;
	}
	return RC_AGAIN;
}

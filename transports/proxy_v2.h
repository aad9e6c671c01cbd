/*
 * PROXY protocol v2 (proxy_v2.c): the header parser, its reader on a connection just
 * accepted, the trusted-balancer list of ?proxy_from=, and the socket steps of a drained
 * connection's close. Internal.
 */
#ifndef RC_PROXY_V2_H
#define RC_PROXY_V2_H

#include <stdbool.h>
#include <stddef.h>

#include "transports/transport.h"

/* The longest header taken: 16 bytes of fixed part, then addresses and TLVs. The spec allows
 * 65,535 bytes of the latter; balancers send tens (HAProxy's unique-id and SSL TLVs, AWS's
 * VPC endpoint id), so a longer one is refused as malformed rather than buffered. */
#define RC__PROXY_MAX 1040
/* The longest v1 (text) header, its CRLF included (the spec's 107). */
#define RC__PROXY_V1_MAX 107

typedef struct rc__proxy_hdr {
	bool local; /* LOCAL: the balancer's own connection (a health check): no client */
	rc_peer src;  /* the client's address and port; len 0: none given (the socket's peer
	                 stands) */
} rc__proxy_hdr;

/*
 * Parse b[0..len), the first bytes of a connection, as a PROXY header: v2 (binary) or v1
 * (text, "PROXY TCP4 ...\r\n"). Returns its length (> 0) once b holds all of it and it is
 * valid, with *h filled in; 0 when more bytes are needed (*need: how many in all, at least
 * len + 1; for v1, whose length shows only at its end, len + 1); -1 when it is not a valid
 * header. v2: no signature, version other than 2, command other than LOCAL or PROXY, an
 * unknown family or protocol, an address block shorter than its family's, TLVs that do not
 * fill it exactly, or longer than RC__PROXY_MAX. v1: no line feed within RC__PROXY_V1_MAX
 * bytes, no CR before it, a protocol other than TCP4, TCP6 or UNKNOWN, other than five
 * fields split by single spaces, an address not of its family, a port not decimal 0..65535
 * (no leading zero), a byte outside printable ASCII. Reads nothing outside b[0..len);
 * allocates nothing.
 */
int rc__proxy_parse(const unsigned char *b, size_t len, size_t *need, rc__proxy_hdr *h);

/* A header being read: the bytes so far. */
typedef struct rc__proxy_rd {
	size_t have;
	unsigned char buf[RC__PROXY_MAX];
} rc__proxy_rd;

/*
 * Read the rest of the header (v2 or v1) on tp (a connection just accepted, non-blocking),
 * never past its end -- a v1 line is peeked at (MSG_PEEK) and taken up to its line feed --
 * and parse it into *h. RC_OK (whole and valid); RC_AGAIN (more to come: wait for input);
 * RC_BADREPLY (malformed, or not a PROXY header); RC_CLOSED (the peer closed); RC_CANTRECV
 * (errno kept).
 */
rc_status rc__proxy_read(rc_tp *tp, rc__proxy_rd *rd, rc__proxy_hdr *h);

/* Let src stand for tp's peer from now on (rc__tp_peer gives it; tp owns the copy, freed
 * with it). A src of length 0 changes nothing. RC_OK or RC_NOMEM (nothing changed). */
rc_status rc__proxy_set_caller(rc_tp *tp, const rc_peer *src);

/* The balancers whose headers are believed (?proxy_from=10.0.0.0/8,::1): none means any. */
#define RC__PROXY_FROM_MAX 16
typedef struct rc__proxy_cidr {
	int family;       /* AF_INET or AF_INET6 */
	unsigned bits;    /* prefix length */
	unsigned char addr[16];
} rc__proxy_cidr;

typedef struct rc__proxy_from {
	unsigned n;
	rc__proxy_cidr net[RC__PROXY_FROM_MAX];
} rc__proxy_from;

/* Add the comma-separated networks of list ("10.0.0.0/8,127.0.0.1,::1/128"; an address alone
 * is a host) to f. False (rc__tp_detail says which) for a malformed one or more than
 * RC__PROXY_FROM_MAX in all. */
bool rc__proxy_from_add(rc__proxy_from *f, const char *list);

/* Whether tp's socket peer (the balancer itself, not the header's client) is in f; an empty
 * f takes any peer, a non-empty one no Unix-domain peer. A v4-mapped IPv6 peer matches as
 * IPv4. */
bool rc__proxy_from_ok(const rc__proxy_from *f, rc_tp *tp);

/* A drained connection's close (runtime/server/drain.c): end the sending side (the peer reads EOF
 * after the last reply), then read and throw away what the peer still sends until it closes,
 * so that closing never resets the replies it has not read yet (a lingering close, as
 * nginx's lingering_close). Discard: RC_CLOSED (the peer closed, or tp is gone), RC_AGAIN
 * (nothing more yet), RC_CANTRECV (reset; errno kept). */
void rc__tp_shutdown_write(rc_tp *tp);
rc_status rc__tp_discard(rc_tp *tp);

#endif

/*
 * rc_broadcast (client.h): one UDP call to a broadcast or multicast address, a handler per
 * successful reply with the responder's address, an overall deadline, retransmission on
 * clnt_broadcast's rhythm (4 s, then 6, 8, ... 14 s). The socket work is transports/bcast.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <remotecall/client.h>

#include "runtime/core/rpc.h"
#include "transports/transport.h"

#define RC__BCAST_MAX_REPLY 65536  /* the largest reply datagram read */
#define RC__BCAST_MAX_SEEN 4096    /* responders remembered (beyond: each may answer again) */

/* Whether a is in seen[0..n) (same family, address and port). */
static bool rc__seen(const rc_peer *seen, size_t n, const rc_peer *a)
{
	for (size_t i = 0; i < n; i++)
		if (seen[i].len == a->len && memcmp(&seen[i].ss, &a->ss, a->len) == 0)
			return true;
	return false;
}

/* Encode the call (AUTH_NONE) into b; its length, or 0 when the arguments do not encode. */
static size_t rc__bcast_encode(rc__encbuf *b, uint32_t xid, uint32_t prog, uint32_t vers,
                               uint32_t proc, rc_xdrproc xargs, const void *args)
{
	uint32_t head[10] = {xid, RC__CALL, RC__RPCVERS, prog, vers, proc, 0, 0, 0, 0};
	rc_xdr x;

	rc__encbuf_xdr(b, &x);
	for (int i = 0; i < 10; i++)
		if (!rc_xdr_u_int(&x, &head[i]))
			return 0;
	if (!xargs(&x, (void *)args))
		return 0;
	return rc_xdr_getpos(&x);
}

/*
 * One reply datagram: RC_OK and the handler's verdict in *stop when it is a successful reply
 * to xid whose result decodes; anything else (another xid, an error reply, a bad result) is
 * ignored (false).
 */
static bool rc__bcast_reply(const unsigned char *msg, size_t len, uint32_t xid, rc_xdrproc xres,
                            size_t res_size, const rc_peer *from, rc_broadcast_fn fn,
                            void *udata, bool *stop)
{
	rc_xdr x;
	rc_error e;
	uint32_t rxid;
	void *res;
	bool ok;

	memset(&e, 0, sizeof(e));
	rc__xdr_decoder(&x, msg, len, (size_t)16 << 20);
	if (!rc_xdr_u_int(&x, &rxid) || rxid != xid || rc__reply_header(&x, &e, NULL) != RC_OK)
		return false;
	if ((res = calloc(1, res_size ? res_size : 1)) == NULL)
		return false;
	ok = xres(&x, res);
	if (ok)
		*stop = fn(udata, res, (const struct sockaddr *)&from->ss, (unsigned)from->len);
	rc_xdr_free(xres, res);
	free(res);
	return ok;
}

/*
 * rpc.h: send the call to every address of to[0..nto) (IPv4 and IPv6 ones may mix: a socket
 * per family), then collect replies until the deadline or the handler stops it; resend after
 * first_ms, then after each wait grown by 2 s (up to 14 s) or doubled (double_it).
 */
rc_status rc__broadcast_to(const rc_peer *to, size_t nto, uint32_t prog, uint32_t vers,
                           uint32_t proc, rc_xdrproc xargs, const void *args, rc_xdrproc xres,
                           size_t res_size, rc_broadcast_fn fn, void *udata,
                           uint32_t timeout_ms, uint32_t first_ms, bool double_it)
{
	unsigned char stack[512];
	rc__encbuf b;
	rc_peer from;
	rc_peer *seen = NULL;
	size_t nseen = 0, len;
	unsigned char *buf = NULL;
	uint32_t xid;
	int64_t now, deadline, next_send;
	int64_t interval = (int64_t)first_ms * 1000000;
	rc_status st = RC_TIMEDOUT;
	int fd[2] = {-1, -1}; /* IPv4, IPv6 */
	bool stop = false;

	if (getrandom(&xid, sizeof(xid), 0) != sizeof(xid))
		xid = (uint32_t)rc__clock_ns();
	rc__encbuf_init(&b, stack, sizeof(stack), RC__BCAST_MAX_REPLY);
	if ((len = rc__bcast_encode(&b, xid, prog, vers, proc, xargs, args)) == 0) {
		rc__encbuf_free(&b);
		return RC_CANTENCODEARGS;
	}
	buf = malloc(RC__BCAST_MAX_REPLY);
	seen = calloc(RC__BCAST_MAX_SEEN, sizeof(*seen));
	if (buf == NULL || seen == NULL) {
		st = RC_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < nto; i++) {
		int f = to[i].ss.ss_family == AF_INET6;
		if (fd[f] < 0 && (fd[f] = rc__bcast_socket(&to[i])) < 0) {
			st = RC_CANTSEND;
			goto out;
		}
	}
	now = (int64_t)rc__clock_ns();
	deadline = now + (int64_t)timeout_ms * 1000000;
	next_send = now;
	st = RC_TIMEDOUT;
	while (!stop && (now = (int64_t)rc__clock_ns()) < deadline) {
		ssize_t n = 0;
		int64_t until = next_send < deadline ? next_send : deadline;
		int wait;
		if (now >= next_send) {
			size_t sent = 0;
			for (size_t i = 0; i < nto; i++) /* one unreachable network spoils no other */
				sent += rc__bcast_send(fd[to[i].ss.ss_family == AF_INET6], rc__encbuf_msg(&b),
				                       len, &to[i]);
			if (sent == 0) {
				st = RC_CANTSEND;
				break;
			}
			next_send = now + interval;
			if (double_it)
				interval *= 2;
			else if (interval < (int64_t)14000 * 1000000)
				interval += (int64_t)2000 * 1000000;
			continue;
		}
		wait = (int)((until - now + 999999) / 1000000);
		for (int f = 0; f < 2 && n == 0; f++) /* (both families: short turns on each) */
			if (fd[f] >= 0)
				n = rc__bcast_recv(fd[f], buf, RC__BCAST_MAX_REPLY, &from,
				                   fd[!f] >= 0 ? (wait < 10 ? wait : 10) : wait);
		if (n < 0) {
			st = RC_CANTRECV;
			break;
		}
		if (n == 0 || rc__seen(seen, nseen, &from))
			continue;
		if (rc__bcast_reply(buf, (size_t)n, xid, xres, res_size, &from, fn, udata, &stop) &&
		    nseen < RC__BCAST_MAX_SEEN)
			seen[nseen++] = from;
	}
	if (stop)
		st = RC_OK;
out:
	for (int f = 0; f < 2; f++)
		if (fd[f] >= 0) {
			int e = errno;
			close(fd[f]);
			errno = e;
		}
	free(buf);
	free(seen);
	rc__encbuf_free(&b);
	return st;
}

/* client.h: one destination, clnt_broadcast's rhythm (4 s, then 6, 8, ... 14 s). */
rc_status rc_broadcast(const char *uri, uint32_t prog, uint32_t vers, uint32_t proc,
                       rc_xdrproc xargs, const void *args, rc_xdrproc xres, size_t res_size,
                       rc_broadcast_fn fn, void *udata, uint32_t timeout_ms)
{
	rc_uri u;
	rc_peer to;
	rc_status st;

	if (uri == NULL || xargs == NULL || xres == NULL || fn == NULL)
		return RC_INVAL;
	if ((st = rc__uri_parse(uri, &u)) != RC_OK)
		return st;
	if (strcmp(u.scheme, "udp") != 0)
		return RC_UNKNOWNPROTO;
	if (u.port <= 0 || u.query[0] != '\0') /* (a query's keys are TLS's: none over UDP) */
		return RC_UNKNOWNADDR;
	if ((st = rc__resolve(&u, SOCK_DGRAM, &to)) != RC_OK)
		return st;
	return rc__broadcast_to(&to, 1, prog, vers, proc, xargs, args, xres, res_size, fn, udata,
	                        timeout_ms, 4000, false);
}

/* rpc.h: to every interface's IPv4 broadcast address at port. */
rc_status rc__broadcast_ifaces(uint16_t port, uint32_t prog, uint32_t vers, uint32_t proc,
                               rc_xdrproc xargs, const void *args, rc_xdrproc xres,
                               size_t res_size, rc_broadcast_fn fn, void *udata,
                               uint32_t timeout_ms, uint32_t first_ms)
{
	rc_peer to[32];
	size_t n = rc__bcast_ifaddrs(to, sizeof(to) / sizeof(to[0]), port);

	if (n == 0)
		return RC_CANTSEND; /* no interface can broadcast */
	return rc__broadcast_to(to, n, prog, vers, proc, xargs, args, xres, res_size, fn, udata,
	                        timeout_ms, first_ms, true);
}

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

#include "runtime/rpc.h"
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
	if (!rc_xdr_u_int(&x, &rxid) || rxid != xid || rc__reply_header(&x, &e) != RC_OK)
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

/* client.h: send, then collect replies until the deadline or the handler stops it. */
rc_status rc_broadcast(const char *uri, uint32_t prog, uint32_t vers, uint32_t proc,
                       rc_xdrproc xargs, const void *args, rc_xdrproc xres, size_t res_size,
                       rc_broadcast_fn fn, void *udata, uint32_t timeout_ms)
{
	unsigned char stack[512];
	rc__encbuf b;
	rc_uri u;
	rc_peer to, from;
	rc_peer *seen = NULL;
	size_t nseen = 0, len;
	unsigned char *buf = NULL;
	uint32_t xid;
	int64_t now, deadline, next_send;
	int64_t interval = (int64_t)4000 * 1000000; /* clnt_broadcast: 4 s, then 6, 8, ... */
	rc_status st = RC_TIMEDOUT;
	int fd;
	bool stop = false;

	if (uri == NULL || xargs == NULL || xres == NULL || fn == NULL)
		return RC_INVAL;
	if ((st = rc__uri_parse(uri, &u)) != RC_OK)
		return st;
	if (strcmp(u.scheme, "udp") != 0)
		return RC_UNKNOWNPROTO;
	if (u.port <= 0)
		return RC_UNKNOWNADDR;
	if ((st = rc__resolve(&u, SOCK_DGRAM, &to)) != RC_OK)
		return st;
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
	if ((fd = rc__bcast_socket(&to)) < 0) {
		st = RC_CANTSEND;
		goto out;
	}
	now = (int64_t)rc__clock_ns();
	deadline = now + (int64_t)timeout_ms * 1000000;
	next_send = now;
	st = RC_TIMEDOUT;
	while (!stop && (now = (int64_t)rc__clock_ns()) < deadline) {
		ssize_t n;
		int64_t until = next_send < deadline ? next_send : deadline;
		if (now >= next_send) {
			if (!rc__bcast_send(fd, rc__encbuf_msg(&b), len, &to)) {
				st = RC_CANTSEND;
				break;
			}
			next_send = now + interval;
			if (interval < (int64_t)14000 * 1000000)
				interval += (int64_t)2000 * 1000000;
			continue;
		}
		n = rc__bcast_recv(fd, buf, RC__BCAST_MAX_REPLY, &from,
		                   (int)((until - now + 999999) / 1000000));
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
	{
		int e = errno;
		close(fd);
		errno = e;
	}
out:
	free(buf);
	free(seen);
	rc__encbuf_free(&b);
	return st;
}

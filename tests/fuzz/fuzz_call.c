/*
 * Fuzz target: the server's request path (call header, credentials, dispatch, argument
 * decoding, reply encoding) on arbitrary bytes, through rc__server_handle_direct -- the entry
 * the in-process transport (inproc:) hands every request message to. The server has the
 * security tests' program registered (tests/security/sec_prog.c: strings, opaque, arrays,
 * lists, trees, self-referencing unions, unbounded lengths).
 *
 * Inputs whose xid is odd (bit 0 of byte 3) go instead as a datagram to a second server
 * listening on loopback UDP, driven with rc_server_step (the public loop API): that adds the
 * datagram transport and the duplicate request cache (8 entries kept 50 ms, so recycling,
 * expiry and replays of earlier inputs all happen).
 *
 * Checks: no crash, no sanitizer report, no leak; at most one reply; a reply carries the
 * call's xid, says REPLY and parses as a reply message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sec_util.h"
#include "runtime/server/server_internal.h"

static rc_server *srv, *usrv;
static int ufd = -1;

typedef struct seen {
	const uint8_t *call;
	size_t len;
	int replies;
} seen;

static void on_reply(void *ctx, unsigned char *msg, size_t len)
{
	seen *s = ctx;
	if (++s->replies > 1 || len < 12 || s->len < 4 || memcmp(msg, s->call, 4) != 0 ||
	    get32(msg + 4) != 1 || sec_reply_kind(msg, len, NULL, NULL, NULL) < 0)
		abort();
}

static void setup_udp(void)
{
	rc_server_limits lim = {0};
	char uri[128];
	lim.max_alloc = 1u << 20;
	lim.drc_entries = 8;
	lim.drc_ttl_ms = 50;
	if (rc_server_create(&usrv) != RC_OK || rc_server_set_limits(usrv, &lim) != RC_OK ||
	    rc_server_register(usrv, &sec_prog1, NULL) != RC_OK ||
	    rc_server_listen(usrv, "udp://127.0.0.1:0", uri, sizeof(uri)) != RC_OK ||
	    (ufd = sec_udp(uri)) < 0)
		abort();
}

static void over_udp(const uint8_t *data, size_t size)
{
	static unsigned char r[65536];
	seen s = {data, size, 0};
	ssize_t n;

	if (size > 65507)
		return;
	if (usrv == NULL)
		setup_udp();
	if (send(ufd, data, size, 0) != (ssize_t)size)
		abort();
	rc_server_step(usrv, 0);
	while ((n = recv(ufd, r, sizeof(r), MSG_DONTWAIT)) >= 0)
		on_reply(&s, r, (size_t)n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	seen s = {data, size, 0};

	if (size >= 4 && (data[3] & 1)) {
		over_udp(data, size);
		return 0;
	}

	if (srv == NULL) {
		rc_server_limits lim = {0};
		lim.max_alloc = 1u << 20; /* a smaller allocation cap: the fuzzer's RSS limit */
		if (rc_server_create(&srv) != RC_OK || rc_server_set_limits(srv, &lim) != RC_OK ||
		    rc_server_register(srv, &sec_prog1, NULL) != RC_OK)
			abort();
	}
	rc__server_handle_direct(srv, data, size, on_reply, &s);
	return 0;
}

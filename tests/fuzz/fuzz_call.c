/*
 * Fuzz target: the server's request path (call header, credentials, dispatch, argument
 * decoding, reply encoding) on arbitrary bytes, through rc__server_handle_direct -- the entry
 * the in-process transport (inproc:) hands every request message to. The server has the
 * security tests' program registered (tests/security/sec_prog.c: strings, opaque, arrays,
 * lists, trees, self-referencing unions, unbounded lengths).
 *
 * Checks: no crash, no sanitizer report, no leak; at most one reply; a reply carries the
 * call's xid, says REPLY and parses as a reply message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sec_util.h"
#include "transports/transport.h"

static rc_server *srv;

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	seen s = {data, size, 0};

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

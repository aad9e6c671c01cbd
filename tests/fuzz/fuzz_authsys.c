/*
 * Fuzz target: AUTH_SYS credentials through the server's call path. The input is a credential
 * body; it is sent as an AUTH_SYS call to WHO (which answers "machine:uid:gid:ngids" from the
 * parsed credentials) through rc__server_handle_direct. A reference parser written here from
 * RFC 5531 section 14 and docs/runtime.md (body at most 400 bytes and exactly consumed,
 * machine name at most 255 bytes, at most 16 gids) decides what the answer must be: the
 * server must accept exactly the bodies the reference accepts, report the same fields, and
 * answer AUTH_ERROR / AUTH_BADCRED to all others.
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sec_util.h"
#include "runtime/server/server_internal.h"

static rc_server *srv;

typedef struct result {
	int kind;
	char who[400];
	int replies;
} result;

static void on_reply(void *ctx, unsigned char *msg, size_t len)
{
	result *r = ctx;
	r->replies++;
	r->kind = sec_reply_kind(msg, len, NULL, NULL, NULL);
	if (r->kind == ACC_SUCCESS) {
		uint32_t n;
		if (len < 28 || (n = get32(msg + 24)) >= sizeof(r->who) || len < 28 + n)
			abort();
		memcpy(r->who, msg + 28, n);
		r->who[n] = '\0';
	}
}

/* The reference: the expected WHO string, or false for a credential to refuse. */
static bool reference(const uint8_t *b, size_t n, char *out, size_t cap)
{
	uint32_t mlen, uid, gid, ng;
	size_t off;
	char machine[256];

	if (n > 400 || n < 20)
		return false;
	mlen = get32(b + 4);
	if (mlen > 255)
		return false;
	off = 8 + (((size_t)mlen + 3) & ~(size_t)3);
	if (off + 12 > n)
		return false;
	memcpy(machine, b + 8, mlen);
	machine[mlen] = '\0';
	uid = get32(b + off);
	gid = get32(b + off + 4);
	ng = get32(b + off + 8);
	if (ng > 16 || off + 12 + (size_t)ng * 4 != n)
		return false;
	snprintf(out, cap, "%s:%u:%u:%u", machine, uid, gid, ng);
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char msg[1024];
	char want[400];
	result r = {0};
	size_t len;
	bool ok;

	if (size > 600)
		return 0;
	if (srv == NULL && (rc_server_create(&srv) != RC_OK ||
	                    rc_server_register(srv, &sec_prog1, NULL) != RC_OK))
		abort();
	len = sec_mkcall(msg, 1, 2, SEC_PROG, 1, P_WHO, 1, data, (uint32_t)size, NULL, 0);
	rc__server_handle_direct(srv, msg, len, on_reply, &r);
	ok = reference(data, size, want, sizeof(want));
	if (r.replies != 1)
		abort();
	if (ok ? (r.kind != ACC_SUCCESS || strcmp(r.who, want) != 0) : r.kind != DEN_AUTH_BADCRED)
		abort();
	return 0;
}

/* rc_status texts and names, built from the one list in status.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <remotecall/status.h>

#include "runtime/core/rpc.h"

static const char *const rc__status_text[] = {
#define RC__TEXT(name, text) text,
	RC_STATUS_LIST(RC__TEXT)
#undef RC__TEXT
};

static const char *const rc__status_names[] = {
#define RC__NAME(name, text) "RC_" #name,
	RC_STATUS_LIST(RC__NAME)
#undef RC__NAME
};

const char *rc_strerror(rc_status st)
{
	if ((unsigned)st >= (unsigned)RC__STATUS_COUNT)
		return "unknown status";
	return rc__status_text[st];
}

const char *rc_status_name(rc_status st)
{
	if ((unsigned)st >= (unsigned)RC__STATUS_COUNT)
		return "RC_?";
	return rc__status_names[st];
}

/* rpc.h: text whole, or cut at a word with "..." after it. */
void rc__detail_put(char *dst, size_t cap, const char *text)
{
	size_t n = strlen(text), k;

	if (cap == 0)
		return;
	if (n < cap || cap < 8) {
		snprintf(dst, cap, "%s", text);
		return;
	}
	k = cap - 4; /* text[0..k) kept, then "..." and the NUL */
	while (k > 0 && text[k] != ' ')
		k--; /* back to a space: what is kept ends a word */
	if (k == 0)
		k = cap - 4; /* one word fills it */
	while (k > 0 && strchr(" ,;:.", text[k - 1]) != NULL)
		k--; /* "found..." rather than "found; ..." */
	memcpy(dst, text, k);
	memcpy(dst + k, "...", 4);
}

/* The auth_stat values of RFC 5531 (1..7), its Kerberos ones (8..12) and RFC 2203's (13,
 * 14): name, then RFC 5531's words. */
static const char *const rc__auth_stats[][2] = {
	{NULL, NULL}, /* AUTH_OK: not a refusal */
	{"AUTH_BADCRED", "bad credential (seal broken)"},
	{"AUTH_REJECTEDCRED", "client must begin new session"},
	{"AUTH_BADVERF", "bad verifier (seal broken)"},
	{"AUTH_REJECTEDVERF", "verifier expired or replayed"},
	{"AUTH_TOOWEAK", "rejected for security reasons"},
	{"AUTH_INVALIDRESP", "bogus response verifier"},
	{"AUTH_FAILED", "reason unknown"},
	{"AUTH_KERB_GENERIC", "kerberos generic error"},
	{"AUTH_TIMEEXPIRE", "time of credential expired"},
	{"AUTH_TKT_FILE", "problem with ticket file"},
	{"AUTH_DECODE", "can't decode authenticator"},
	{"AUTH_NET_ADDR", "wrong net address in ticket"},
	{"RPCSEC_GSS_CREDPROBLEM", "no credentials for user"},
	{"RPCSEC_GSS_CTXPROBLEM", "problem with context"},
};

/* status.h: the status in words, then what the error adds to it. */
char *rc_error_format(const rc_error *err, char *buf, size_t len)
{
	/* a client's creation that could not connect (low 1): no request was sent */
	bool at_connect = err->status == RC_CANTSEND && err->low == 1;
	int en = err->sys_errno;

	if (buf == NULL || len == 0)
		return buf;
	if ((err->status == RC_TLSFAILED || err->status == RC_TLSUNAVAIL) && en == EPROTO)
		en = 0; /* the TLS layer's mark, not a reason: the detail says why */
	switch (err->status) {
	case RC_PROGVERSMISMATCH:
		snprintf(buf, len, "%s (server supports %u..%u)", rc_strerror(err->status),
		         err->low, err->high);
		break;
	case RC_VERSMISMATCH:
		snprintf(buf, len, "%s (server speaks %u..%u)", rc_strerror(err->status), err->low,
		         err->high);
		break;
	case RC_AUTHERROR: /* the server's auth_stat by name; none (0: refused on this side) */
		if (err->auth_stat == 0)
			snprintf(buf, len, "%s", rc_strerror(err->status));
		else if (err->auth_stat < sizeof(rc__auth_stats) / sizeof(rc__auth_stats[0]))
			snprintf(buf, len, "%s (%s: %s)", rc_strerror(err->status),
			         rc__auth_stats[err->auth_stat][0],
			         rc__auth_stats[err->auth_stat][1]);
		else
			snprintf(buf, len, "%s (auth_stat %u, not one RFC 5531 or 2203 names)",
			         rc_strerror(err->status), err->auth_stat);
		break;
	case RC_LOCALERROR: /* "local system error (see errno detail)" adds nothing to it */
		if (err->sys_errno != 0) {
			snprintf(buf, len, "%s", strerror(err->sys_errno));
			if (buf[0] >= 'A' && buf[0] <= 'Z' && (buf[1] < 'A' || buf[1] > 'Z'))
				buf[0] = (char)(buf[0] - 'A' + 'a'); /* "address already in use" */
		} else {
			snprintf(buf, len, "%s", rc_strerror(err->status));
		}
		break;
	default: {
		const char *what = at_connect ? "can't connect" : rc_strerror(err->status);
		if (en != 0)
			snprintf(buf, len, "%s: %s", what, strerror(en));
		else
			snprintf(buf, len, "%s", what);
	}
	}
	if (err->detail[0] != '\0') { /* the transport's own words (TLS: OpenSSL's reason) */
		size_t n = strlen(buf);
		snprintf(buf + n, len - n, " (%s)", err->detail);
	}
	if (err->rpcbind_vers != 0 && !at_connect) {
		/* rc_client_create_ex's look-up: which rpcbind, and how (a failed connect's detail
		 * names the port rpcbind gave instead) */
		size_t n = strlen(buf);
		if (err->rpcbind_status != RC_OK)
			snprintf(buf + n, len - n, " (rpcbind version %u: %s)", err->rpcbind_vers,
			         rc_strerror(err->rpcbind_status));
		else
			snprintf(buf + n, len - n, " (rpcbind version %u)", err->rpcbind_vers);
	}
	return buf;
}

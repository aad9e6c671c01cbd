/* rc_status texts and names, built from the one list in status.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <remotecall/status.h>

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
	case RC_AUTHERROR:
		snprintf(buf, len, "%s (auth_stat %u)", rc_strerror(err->status), err->auth_stat);
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

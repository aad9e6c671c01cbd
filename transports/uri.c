/*
 * A URI's query (?key=value&...): the one table of the keys a client or a listen URI takes --
 * a new key is one line here -- and the parse that checks each against it (rc__uri_query,
 * transport.h). Below every transport: TLS reads a client's keys through it, the URI parse
 * and the server's listen step above them.
 */
#include <stdio.h>
#include <string.h>

#include "transports/transport.h"

/* The keys of a URI's query: one line a key (see transport.h). A listen URI's are a load
 * balancer's (runtime/server/proxy.c reads them: rc__lsn_uri_key); a client's are RPC-over-TLS's
 * (transports/tls.c reads them: rc__tls_query_parse). */
static const rc__uri_key rc__uri_keys[] = {
	{"tls", "off|opportunistic|required", RC__URIQ_CLIENT,
	 "server TLS: rc_server_set_tls, rc_server_set_tls_required"},
	{"ca", NULL, RC__URIQ_CLIENT, "a server's: rc_tls_server_opts"},
	{"cadir", NULL, RC__URIQ_CLIENT, "a server's: rc_tls_server_opts"},
	{"cert", NULL, RC__URIQ_CLIENT, "a server's: rc_tls_server_opts"},
	{"key", NULL, RC__URIQ_CLIENT, "a server's: rc_tls_server_opts"},
	{"name", NULL, RC__URIQ_CLIENT, ""},
	/* a listener behind a load balancer (runtime/server/proxy.c, transports/proxy_v2.c) */
	{"proxy", "v2", RC__URIQ_LISTEN, ""},
	{"proxy_from", NULL, RC__URIQ_LISTEN, ""},
	/* quic:// (transports/quic.c): a client's pool of streams; a listener's cap on the
	 * streams one client connection opens */
	{"streams", NULL, RC__URIQ_CLIENT | RC__URIQ_LISTEN, ""},
};
#define RC__NURIKEYS (sizeof(rc__uri_keys) / sizeof(rc__uri_keys[0]))

/* "client URI" / "listen URI". */
static const char *rc__uri_side(unsigned side)
{
	return side == RC__URIQ_LISTEN ? "listen URI" : "client URI";
}

/* The keys side takes, for a refusal: "tls=off|opportunistic|required, ca, ..." (a key with
 * values lists them), or "no keys". */
static const char *rc__uri_keys_of(unsigned side, char *out, size_t cap)
{
	size_t n = 0;

	out[0] = '\0';
	for (size_t i = 0; i < RC__NURIKEYS; i++) {
		const rc__uri_key *k = &rc__uri_keys[i];
		if (!(k->sides & side) || n >= cap)
			continue;
		n += (size_t)snprintf(out + n, cap - n, "%s%s%s%s", n ? ", " : "", k->name,
		                      k->values ? "=" : "", k->values ? k->values : "");
	}
	return n ? out : "no keys";
}

/* The key of query pair p[0..klen), or NULL. */
static const rc__uri_key *rc__uri_key_find(const char *p, size_t klen)
{
	for (size_t i = 0; i < RC__NURIKEYS; i++)
		if (strlen(rc__uri_keys[i].name) == klen &&
		    strncmp(p, rc__uri_keys[i].name, klen) == 0)
			return &rc__uri_keys[i];
	return NULL;
}

/* Whether v is one of values ("a|b|c"). */
static bool rc__uri_value_ok(const char *values, const char *v)
{
	size_t vl = strlen(v);

	for (const char *p = values; *p != '\0';) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		if (n == vl && strncmp(p, v, n) == 0)
			return true;
		p += n + (bar != NULL);
	}
	return false;
}

/* Decode the value q[0..end) (%XX escapes) into buf[*used..cap), NUL-terminated; false for a
 * bad escape, a NUL byte or no room. */
static bool rc__uri_value(const char *q, const char *end, char *buf, size_t *used, size_t cap)
{
	for (; q < end; q++) {
		int ch = (unsigned char)*q;
		if (ch == '%') {
			int hi = q + 2 < end ? rc__hexval(q[1]) : -1;
			int lo = hi >= 0 ? rc__hexval(q[2]) : -1;
			if (lo < 0)
				return false;
			ch = hi * 16 + lo;
			q += 2;
		}
		if (ch == 0 || *used + 1 >= cap)
			return false;
		buf[(*used)++] = (char)ch;
	}
	if (*used >= cap)
		return false;
	buf[(*used)++] = '\0';
	return true;
}

/* See transport.h: check each pair against the table, then hand it to fn. */
rc_status rc__uri_query(const char *query, unsigned side, rc__uri_key_fn fn, void *ctx,
                        char *buf, size_t cap)
{
	char keys[160];
	const char *p = query;
	size_t used = 0;

	while (*p != '\0') {
		const char *eq = strchr(p, '='), *amp = strchr(p, '&');
		const char *end = amp ? amp : p + strlen(p);
		const rc__uri_key *k;
		char *val = buf + used;
		int klen;

		if (eq == NULL || eq > end) {
			rc__tp_set_detail("URI query: %.*s is not key=value; a %s takes %s",
			                  (int)(end - p < 40 ? end - p : 40), p, rc__uri_side(side),
			                  rc__uri_keys_of(side, keys, sizeof(keys)));
			return RC_UNKNOWNADDR;
		}
		klen = (int)(eq - p < 40 ? eq - p : 40);
		if ((k = rc__uri_key_find(p, (size_t)(eq - p))) == NULL) {
			rc__tp_set_detail("URI query: unknown key %.*s; a %s takes %s", klen, p,
			                  rc__uri_side(side),
			                  rc__uri_keys_of(side, keys, sizeof(keys)));
			return RC_UNKNOWNADDR;
		}
		if (!(k->sides & side)) {
			const bool alt = k->elsewhere[0] != '\0';
			rc__tp_set_detail("URI query: %s is a %s's key%s%s%s; a %s takes %s",
			                  k->name, rc__uri_side(k->sides), alt ? " (" : "",
			                  k->elsewhere, alt ? ")" : "", rc__uri_side(side),
			                  rc__uri_keys_of(side, keys, sizeof(keys)));
			return RC_UNKNOWNADDR;
		}
		if (!rc__uri_value(eq + 1, end, buf, &used, cap)) {
			rc__tp_set_detail("URI query: the value of %s is malformed (%%XX escapes) "
			                  "or too long", k->name);
			return RC_UNKNOWNADDR;
		}
		if (k->values != NULL && !rc__uri_value_ok(k->values, val)) {
			rc__tp_set_detail("URI query: %s=%.40s; %s takes %s", k->name, val, k->name,
			                  k->values);
			return RC_UNKNOWNADDR;
		}
		if (fn != NULL && !fn(ctx, k, val))
			return RC_UNKNOWNADDR;
		p = amp ? amp + 1 : end;
	}
	return RC_OK;
}

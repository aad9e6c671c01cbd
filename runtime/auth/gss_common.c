/*
 * RPCSEC_GSS: error text, the locked GSS context, and the per-call transforms both sides share
 * (MICs, the integrity and privacy bodies of RFC 2203 section 5.3.2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gssapi/gssapi_krb5.h>

#include "runtime/auth/gss_int.h"
#include "xdr/base.h"

/* Append every message gss_display_status has for code to text[*at..cap). */
static void status_text(char *text, size_t cap, size_t *at, OM_uint32 code, int type)
{
	OM_uint32 ctx = 0, maj, min;
	gss_buffer_desc msg;
	int first = 1;

	do {
		maj = gss_display_status(&min, code, type, type == GSS_C_MECH_CODE ?
					 (gss_OID)gss_mech_krb5 : GSS_C_NO_OID, &ctx, &msg);
		if (GSS_ERROR(maj))
			break;
		if (*at < cap) {
			int n = snprintf(text + *at, cap - *at, "%s%.*s", first ? "" : ", ",
					 (int)msg.length, (const char *)msg.value);
			if (n > 0)
				*at += (size_t)n < cap - *at ? (size_t)n : cap - *at - 1;
		}
		first = 0;
		gss_release_buffer(&min, &msg);
	} while (ctx != 0);
}

void rc__gss_err_status(rc__gss_err *err, const char *what, OM_uint32 major, OM_uint32 minor)
{
	if (!err)
		return;
	err->major = major;
	err->minor = minor;
	size_t at = 0, cap = sizeof err->text;
	int n = snprintf(err->text, cap, "%s: ", what);
	at = n > 0 && (size_t)n < cap ? (size_t)n : cap - 1;
	if (GSS_ROUTINE_ERROR(major) == GSS_S_FAILURE && minor != 0) {
		/* "Unspecified GSS failure.  Minor code may provide more information": the minor
		 * code's text alone says what happened ("Server x@R not found in Kerberos
		 * database") */
		status_text(err->text, cap, &at, minor, GSS_C_MECH_CODE);
		return;
	}
	status_text(err->text, cap, &at, major, GSS_C_GSS_CODE);
	if (minor && at + 2 < cap) {
		memcpy(err->text + at, "; ", 3);
		at += 2;
		status_text(err->text, cap, &at, minor, GSS_C_MECH_CODE);
	}
}

void rc__gss_err_msg(rc__gss_err *err, const char *what)
{
	if (!err)
		return;
	err->major = 0;
	err->minor = 0;
	snprintf(err->text, sizeof err->text, "%s", what);
}

gss_channel_bindings_t rc__gss_cb_make(rc__gss_cb *cb, const unsigned char *exporter)
{
	const size_t pre = sizeof(RC__GSS_CB_PREFIX) - 1;

	memset(&cb->b, 0, sizeof cb->b); /* addresses GSS_C_AF_UNSPEC (0), empty */
	memcpy(cb->data, RC__GSS_CB_PREFIX, pre);
	memcpy(cb->data + pre, exporter, RC__GSS_EXPORTER_LEN);
	cb->b.application_data.length = sizeof cb->data;
	cb->b.application_data.value = cb->data;
	return &cb->b;
}

void rc__gss_sec_init(rc__gss_sec *s)
{
	pthread_mutex_init(&s->lock, NULL);
	s->ctx = GSS_C_NO_CONTEXT;
	s->fast = NULL;
}

void rc__gss_sec_established(rc__gss_sec *s)
{
	rc__krb5_free(s->fast);
	s->fast = rc__krb5_from_gss(&s->ctx);
}

void rc__gss_sec_reset(rc__gss_sec *s)
{
	rc__krb5_free(s->fast);
	s->fast = NULL;
}

void rc__gss_sec_fini(rc__gss_sec *s)
{
	OM_uint32 min;

	rc__gss_sec_reset(s);
	if (s->ctx != GSS_C_NO_CONTEXT)
		gss_delete_sec_context(&min, &s->ctx, GSS_C_NO_BUFFER);
	pthread_mutex_destroy(&s->lock);
}

/* Move a GSS buffer into an rc__gss_buf (a copy: GSS's allocator is its own). */
static int take(gss_buffer_desc *g, rc__gss_buf *out, rc__gss_err *err)
{
	OM_uint32 min;

	out->len = g->length;
	out->data = malloc(g->length ? g->length : 1);
	if (out->data)
		memcpy(out->data, g->value, g->length);
	gss_release_buffer(&min, g);
	if (!out->data) {
		out->len = 0;
		rc__gss_err_msg(err, "out of memory");
		return -1;
	}
	return 0;
}

int rc__gss_sec_max_data(rc__gss_sec *s, uint32_t service, int max_tp)
{
	OM_uint32 maj, min, lim = 0;
	long room;

	if (max_tp <= 0)
		return 0;
	if (service == RC__GSS_SVC_NONE)
		return max_tp;
	/* integrity: len, seq, body, len, MIC -- the MIC costs what a wrap without
	 * confidentiality adds; privacy: len, wrap(seq, body) */
	room = service == RC__GSS_SVC_INTEGRITY ? (long)max_tp - 12 : (long)max_tp - 4;
	if (room <= 0 || (service != RC__GSS_SVC_INTEGRITY && service != RC__GSS_SVC_PRIVACY))
		return 0;
	pthread_mutex_lock(&s->lock);
	maj = s->ctx == GSS_C_NO_CONTEXT ? GSS_S_NO_CONTEXT
		: gss_wrap_size_limit(&min, s->ctx, service == RC__GSS_SVC_PRIVACY,
				      GSS_C_QOP_DEFAULT, (OM_uint32)room, &lim);
	pthread_mutex_unlock(&s->lock);
	if (GSS_ERROR(maj))
		return 0;
	room = (long)lim - (service == RC__GSS_SVC_PRIVACY ? 4 : 0); /* the seq inside */
	return room > 0 ? (int)(room & ~3L) : 0;
}

int rc__gss_sec_mic(rc__gss_sec *s, const void *p, size_t n, rc__gss_buf *out, rc__gss_err *err)
{
	gss_buffer_desc in = { n, (void *)p }, mic = GSS_C_EMPTY_BUFFER;
	OM_uint32 maj, min;

	out->data = NULL;
	out->len = 0;
	pthread_mutex_lock(&s->lock);
	if (s->fast) {
		unsigned char *t = malloc(RC__KRB5_MIC_MAX);
		size_t tl = t ? rc__krb5_get_mic(s->fast, p, n, t) : 0;
		pthread_mutex_unlock(&s->lock);
		if (!tl) {
			free(t);
			rc__gss_err_msg(err, t ? "MIC: the crypto library failed" : "out of memory");
			return -1;
		}
		out->data = t;
		out->len = tl;
		return 0;
	}
	maj = gss_get_mic(&min, s->ctx, GSS_C_QOP_DEFAULT, &in, &mic);
	pthread_mutex_unlock(&s->lock);
	if (GSS_ERROR(maj)) {
		rc__gss_err_status(err, "gss_get_mic", maj, min);
		return -1;
	}
	return take(&mic, out, err);
}

int rc__gss_sec_verify(rc__gss_sec *s, const void *p, size_t n, const void *mic, size_t mic_len,
		       rc__gss_err *err)
{
	gss_buffer_desc in = { n, (void *)p }, tok = { mic_len, (void *)mic };
	OM_uint32 maj, min;

	pthread_mutex_lock(&s->lock);
	if (s->fast) {
		int r = rc__krb5_verify_mic(s->fast, p, n, mic, mic_len);
		pthread_mutex_unlock(&s->lock);
		if (r)
			rc__gss_err_status(err, "verify MIC", GSS_S_BAD_SIG, 0);
		return r;
	}
	maj = gss_verify_mic(&min, s->ctx, &in, &tok, NULL);
	pthread_mutex_unlock(&s->lock);
	if (GSS_ERROR(maj)) {
		rc__gss_err_status(err, "gss_verify_mic", maj, min);
		return -1;
	}
	return 0;
}

int rc__gss_sec_seq_mic(rc__gss_sec *s, uint32_t seq, rc__gss_buf *out, rc__gss_err *err)
{
	unsigned char w[4];

	rc__st32(w, seq);
	return rc__gss_sec_mic(s, w, 4, out, err);
}

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* opaque<> of n bytes at p: length word, data, zero padding. Returns the end. */
static unsigned char *put_opaque(unsigned char *p, const void *data, size_t n)
{
	rc__st32(p, (uint32_t)n);
	if (n)
		memcpy(p + 4, data, n);
	memset(p + 4 + n, 0, pad4(n) - n);
	return p + 4 + pad4(n);
}

/* Service none: the bytes as they are, in a block of out's own. 0, or -1 (no memory). */
static int rc__gss_copy(rc__gss_buf *out, const void *p, size_t len, rc__gss_err *err)
{
	if (!(out->data = malloc(len ? len : 1))) {
		rc__gss_err_msg(err, "out of memory");
		return -1;
	}
	if (len)
		memcpy(out->data, p, len);
	out->len = len;
	return 0;
}

int rc__gss_sec_wrap(rc__gss_sec *s, uint32_t seq, uint32_t service, const void *body, size_t len,
		     rc__gss_buf *out, rc__gss_err *err)
{
	OM_uint32 maj, min;

	out->data = NULL;
	out->len = 0;
	if (len > UINT32_MAX - 8) {
		rc__gss_err_msg(err, "body too long to wrap");
		return -1;
	}
	switch (service) {
	case RC__GSS_SVC_NONE:
		return rc__gss_copy(out, body, len, err);
	case RC__GSS_SVC_INTEGRITY: {
		/* databody_integ in place, then its MIC appended */
		size_t dlen = 4 + len, room = 4 + pad4(dlen) + 4 + 64;
		unsigned char *p = malloc(room);
		if (!p) {
			rc__gss_err_msg(err, "out of memory");
			return -1;
		}
		rc__st32(p, (uint32_t)dlen);
		rc__st32(p + 4, seq);
		if (len)
			memcpy(p + 8, body, len);
		memset(p + 4 + dlen, 0, pad4(dlen) - dlen);
		gss_buffer_desc in = { dlen, p + 4 }, mic = GSS_C_EMPTY_BUFFER;
		pthread_mutex_lock(&s->lock);
		if (s->fast) {
			unsigned char t[RC__KRB5_MIC_MAX];
			size_t tl = rc__krb5_get_mic(s->fast, p + 4, dlen, t);
			pthread_mutex_unlock(&s->lock);
			if (!tl) {
				free(p);
				rc__gss_err_msg(err, "MIC: the crypto library failed");
				return -1;
			}
			/* room has 64 bytes for the MIC: it fits */
			out->len = (size_t)(put_opaque(p + 4 + pad4(dlen), t, tl) - p);
			out->data = p;
			return 0;
		}
		maj = gss_get_mic(&min, s->ctx, GSS_C_QOP_DEFAULT, &in, &mic);
		pthread_mutex_unlock(&s->lock);
		if (GSS_ERROR(maj)) {
			free(p);
			rc__gss_err_status(err, "gss_get_mic", maj, min);
			return -1;
		}
		size_t at = 4 + pad4(dlen), need = at + 4 + pad4(mic.length);
		if (need > room) {
			unsigned char *q = realloc(p, need);
			if (!q) {
				free(p);
				gss_release_buffer(&min, &mic);
				rc__gss_err_msg(err, "out of memory");
				return -1;
			}
			p = q;
		}
		put_opaque(p + at, mic.value, mic.length);
		gss_release_buffer(&min, &mic);
		out->data = p;
		out->len = need;
		return 0;
	}
	case RC__GSS_SVC_PRIVACY: {
		pthread_mutex_lock(&s->lock);
		if (s->fast) {
			/* the token built in the reply's block: seq and body where the wrap
			 * wants its plaintext, encrypted in place */
			size_t tl = rc__krb5_wrap_len(s->fast, 4 + len);
			unsigned char *o = tl <= UINT32_MAX - 8 ? malloc(4 + pad4(tl)) : NULL;
			int r = -1;
			if (o) {
				unsigned char *t = o + 4;
				rc__st32(t + RC__KRB5_WRAP_PRE, seq);
				if (len)
					memcpy(t + RC__KRB5_WRAP_PRE + 4, body, len);
				r = rc__krb5_wrap(s->fast, t, 4 + len);
			}
			pthread_mutex_unlock(&s->lock);
			if (r) {
				free(o);
				rc__gss_err_msg(err, o ? "wrap: the crypto library failed"
						       : "out of memory");
				return -1;
			}
			rc__st32(o, (uint32_t)tl);
			memset(o + 4 + tl, 0, pad4(tl) - tl);
			out->data = o;
			out->len = 4 + pad4(tl);
			return 0;
		}
		pthread_mutex_unlock(&s->lock);
		unsigned char *plain = malloc(4 + len);
		if (!plain) {
			rc__gss_err_msg(err, "out of memory");
			return -1;
		}
		rc__st32(plain, seq);
		if (len)
			memcpy(plain + 4, body, len);
		gss_buffer_desc in = { 4 + len, plain }, tok = GSS_C_EMPTY_BUFFER;
		int conf = 0;
		pthread_mutex_lock(&s->lock);
		maj = gss_wrap(&min, s->ctx, 1, GSS_C_QOP_DEFAULT, &in, &conf, &tok);
		pthread_mutex_unlock(&s->lock);
		free(plain);
		if (GSS_ERROR(maj)) {
			rc__gss_err_status(err, "gss_wrap", maj, min);
			return -1;
		}
		if (!conf || tok.length > UINT32_MAX - 8) {
			gss_release_buffer(&min, &tok);
			rc__gss_err_msg(err, "gss_wrap: no confidentiality");
			return -1;
		}
		out->len = 4 + pad4(tok.length);
		if (!(out->data = malloc(out->len))) {
			out->len = 0;
			gss_release_buffer(&min, &tok);
			rc__gss_err_msg(err, "out of memory");
			return -1;
		}
		put_opaque(out->data, tok.value, tok.length);
		gss_release_buffer(&min, &tok);
		return 0;
	}
	default:
		rc__gss_err_msg(err, "unknown RPCSEC_GSS service");
		return -1;
	}
}

/* The seq + body in plain[0..n): check seq against seqs. */
static int seq_check(const unsigned char *plain, size_t n, const uint32_t *seqs, unsigned nseq,
		     uint32_t *got_seq, rc__gss_err *err)
{
	if (n < 4) {
		rc__gss_err_msg(err, "wrapped body shorter than its sequence number");
		return -1;
	}
	uint32_t seq = rc__ld32(plain);
	unsigned i;
	for (i = 0; i < nseq && seqs[i] != seq; i++)
		;
	if (i == nseq) {
		rc__gss_err_msg(err, "sequence number in the wrapped body does not match the call's");
		return -1;
	}
	if (got_seq)
		*got_seq = seq;
	return 0;
}

/* The seq + body in plain[0..n): check seq against seqs and copy the body out. */
static int seq_body(const unsigned char *plain, size_t n, const uint32_t *seqs, unsigned nseq,
		    rc__gss_buf *out, uint32_t *got_seq, rc__gss_err *err)
{
	if (seq_check(plain, n, seqs, nseq, got_seq, err))
		return -1;
	out->len = n - 4;
	if (!(out->data = malloc(out->len ? out->len : 1))) {
		out->len = 0;
		rc__gss_err_msg(err, "out of memory");
		return -1;
	}
	if (out->len)
		memcpy(out->data, plain + 4, out->len);
	return 0;
}

int rc__gss_sec_unwrap(rc__gss_sec *s, const uint32_t *seqs, unsigned nseq, uint32_t service,
		       const void *in, size_t len, rc__gss_buf *out, uint32_t *got_seq,
		       rc__gss_err *err)
{
	const unsigned char *a, *b;
	size_t al, bl;
	OM_uint32 maj, min;

	out->data = NULL;
	out->len = 0;
	switch (service) {
	case RC__GSS_SVC_NONE:
		return rc__gss_copy(out, in, len, err);
	case RC__GSS_SVC_INTEGRITY:
		if (rc__gss_integ_decode(in, len, &a, &al, &b, &bl)) {
			rc__gss_err_msg(err, "malformed rpc_gss_integ_data");
			return -1;
		}
		if (rc__gss_sec_verify(s, a, al, b, bl, err))
			return -1;
		return seq_body(a, al, seqs, nseq, out, got_seq, err);
	case RC__GSS_SVC_PRIVACY: {
		if (rc__gss_priv_decode(in, len, &a, &al)) {
			rc__gss_err_msg(err, "malformed rpc_gss_priv_data");
			return -1;
		}
		/* MIT's gss_unwrap rotates a token with a nonzero RRC field in place (seen: a
		 * corrupted token changed the caller's bytes), so it gets a private copy */
		unsigned char *copy = malloc(al ? al : 1);
		if (!copy) {
			rc__gss_err_msg(err, "out of memory");
			return -1;
		}
		if (al)
			memcpy(copy, a, al);
		gss_buffer_desc tok = { al, copy }, plain = GSS_C_EMPTY_BUFFER;
		int conf = 0;
		pthread_mutex_lock(&s->lock);
		if (s->fast) {
			size_t off, pn;
			int r = rc__krb5_unwrap(s->fast, copy, al, &off, &pn);
			pthread_mutex_unlock(&s->lock);
			if (r) {
				free(copy);
				rc__gss_err_status(err, "unwrap", GSS_S_BAD_SIG, 0);
				return -1;
			}
			/* the body moves to the front of the copy, which becomes out's */
			if (seq_check(copy + off, pn, seqs, nseq, got_seq, err)) {
				free(copy);
				return -1;
			}
			memmove(copy, copy + off + 4, pn - 4);
			out->data = copy;
			out->len = pn - 4;
			return 0;
		}
		maj = gss_unwrap(&min, s->ctx, &tok, &plain, &conf, NULL);
		pthread_mutex_unlock(&s->lock);
		free(copy);
		if (GSS_ERROR(maj)) {
			rc__gss_err_status(err, "gss_unwrap", maj, min);
			return -1;
		}
		int r = -1;
		if (!conf)
			rc__gss_err_msg(err, "gss_unwrap: the body was not encrypted");
		else
			r = seq_body(plain.value, plain.length, seqs, nseq, out, got_seq, err);
		gss_release_buffer(&min, &plain);
		return r;
	}
	default:
		rc__gss_err_msg(err, "unknown RPCSEC_GSS service");
		return -1;
	}
}

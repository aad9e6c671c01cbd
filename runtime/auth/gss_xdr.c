/*
 * RPCSEC_GSS's wire types (RFC 2203 section 5): bounded parsers over a byte range and encoders.
 * Every length is checked against what remains before it is used; nothing here allocates on
 * decode (the results borrow the input).
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/auth/gss.h"
#include "xdr/base.h"

/* gss.h: the encoders' buffers (malloc) go back. */
void rc__gss_buf_free(rc__gss_buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = 0;
}

/* A read cursor over [p, end). */
typedef struct rd {
	const unsigned char *p;
	const unsigned char *end;
} rd;

static int rd_u32(rd *r, uint32_t *v)
{
	if ((size_t)(r->end - r->p) < 4)
		return -1;
	*v = rc__ld32(r->p);
	r->p += 4;
	return 0;
}

/* opaque<max>: the length, the bytes, zero padding to 4. */
static int rd_opaque(rd *r, uint32_t max, const unsigned char **data, uint32_t *len)
{
	uint32_t n;

	if (rd_u32(r, &n) || n > max)
		return -1;
	size_t padded = ((size_t)n + 3) & ~(size_t)3;
	if ((size_t)(r->end - r->p) < padded)
		return -1;
	for (size_t i = n; i < padded; i++)
		if (r->p[i] != 0)
			return -1;
	*data = r->p;
	*len = n;
	r->p += padded;
	return 0;
}

static unsigned char *wr_u32(unsigned char *p, uint32_t v)
{
	rc__st32(p, v);
	return p + 4;
}

static unsigned char *wr_opaque(unsigned char *p, const void *data, uint32_t n)
{
	p = wr_u32(p, n);
	if (n)
		memcpy(p, data, n);
	size_t padded = ((size_t)n + 3) & ~(size_t)3;
	memset(p + n, 0, padded - n);
	return p + padded;
}

static size_t opaque_size(size_t n)
{
	return 4 + ((n + 3) & ~(size_t)3);
}

int rc__gss_cred_decode(const void *buf, size_t len, rc__gss_cred *out)
{
	rd r = { buf, (const unsigned char *)buf + len };

	if (len > RC__GSS_CRED_MAX)
		return -1;
	memset(out, 0, sizeof *out);
	if (rd_u32(&r, &out->version) || rd_u32(&r, &out->proc) || rd_u32(&r, &out->seq) ||
	    rd_u32(&r, &out->service) ||
	    rd_opaque(&r, RC__GSS_HANDLE_MAX, &out->handle, &out->handle_len) || r.p != r.end)
		return -1;
	return 0;
}

size_t rc__gss_cred_encode(const rc__gss_cred *c, void *buf, size_t cap)
{
	if (c->handle_len > RC__GSS_HANDLE_MAX)
		return 0;
	size_t need = 16 + opaque_size(c->handle_len);
	if (need > cap)
		return need;
	unsigned char *p = buf;
	p = wr_u32(p, c->version);
	p = wr_u32(p, c->proc);
	p = wr_u32(p, c->seq);
	p = wr_u32(p, c->service);
	wr_opaque(p, c->handle, c->handle_len);
	return need;
}

int rc__gss_init_arg_decode(const void *buf, size_t len, const unsigned char **tok,
			    size_t *tok_len)
{
	rd r = { buf, (const unsigned char *)buf + len };
	uint32_t n;

	if (rd_opaque(&r, RC__GSS_TOKEN_MAX, tok, &n) || r.p != r.end)
		return -1;
	*tok_len = n;
	return 0;
}

int rc__gss_init_arg_encode(const void *tok, size_t tok_len, rc__gss_buf *out)
{
	out->data = NULL;
	out->len = 0;
	if (tok_len > RC__GSS_TOKEN_MAX)
		return -1;
	size_t need = opaque_size(tok_len);
	if (!(out->data = malloc(need)))
		return -1;
	wr_opaque(out->data, tok, (uint32_t)tok_len);
	out->len = need;
	return 0;
}

int rc__gss_init_res_decode(const void *buf, size_t len, rc__gss_init_res *out)
{
	rd r = { buf, (const unsigned char *)buf + len };

	memset(out, 0, sizeof *out);
	if (rd_opaque(&r, RC__GSS_HANDLE_MAX, &out->handle, &out->handle_len) ||
	    rd_u32(&r, &out->major) || rd_u32(&r, &out->minor) || rd_u32(&r, &out->seq_window) ||
	    rd_opaque(&r, RC__GSS_TOKEN_MAX, &out->token, &out->token_len) || r.p != r.end)
		return -1;
	return 0;
}

int rc__gss_init_res_encode(const rc__gss_init_res *res, rc__gss_buf *out)
{
	out->data = NULL;
	out->len = 0;
	if (res->handle_len > RC__GSS_HANDLE_MAX || res->token_len > RC__GSS_TOKEN_MAX)
		return -1;
	size_t need = opaque_size(res->handle_len) + 12 + opaque_size(res->token_len);
	unsigned char *p = malloc(need);
	if (!p)
		return -1;
	out->data = p;
	out->len = need;
	p = wr_opaque(p, res->handle, res->handle_len);
	p = wr_u32(p, res->major);
	p = wr_u32(p, res->minor);
	p = wr_u32(p, res->seq_window);
	wr_opaque(p, res->token, res->token_len);
	return 0;
}

int rc__gss_integ_decode(const void *buf, size_t len, const unsigned char **body,
			 size_t *body_len, const unsigned char **mic, size_t *mic_len)
{
	rd r = { buf, (const unsigned char *)buf + len };
	uint32_t bn, mn;

	if (rd_opaque(&r, UINT32_MAX, body, &bn) || rd_opaque(&r, RC__GSS_TOKEN_MAX, mic, &mn) ||
	    r.p != r.end)
		return -1;
	*body_len = bn;
	*mic_len = mn;
	return 0;
}

int rc__gss_priv_decode(const void *buf, size_t len, const unsigned char **tok, size_t *tok_len)
{
	rd r = { buf, (const unsigned char *)buf + len };
	uint32_t n;

	if (rd_opaque(&r, UINT32_MAX, tok, &n) || r.p != r.end)
		return -1;
	*tok_len = n;
	return 0;
}

int rc__gss_fuzz_one(const uint8_t *data, size_t size)
{
	rc__gss_cred c;
	rc__gss_init_res ir;
	const unsigned char *a, *b;
	size_t al, bl;
	rc__gss_buf out;

	if (rc__gss_cred_decode(data, size, &c) == 0) {
		unsigned char re[RC__GSS_CRED_MAX];
		size_t n = rc__gss_cred_encode(&c, re, sizeof re);
		if (n != size || memcmp(re, data, size) != 0)
			abort(); /* what decodes must re-encode to the same bytes */
	}
	if (rc__gss_init_res_decode(data, size, &ir) == 0 && rc__gss_init_res_encode(&ir, &out) == 0) {
		if (out.len != size || memcmp(out.data, data, size) != 0)
			abort();
		rc__gss_buf_free(&out);
	}
	if (rc__gss_init_arg_decode(data, size, &a, &al) == 0 && rc__gss_init_arg_encode(a, al, &out) == 0) {
		if (out.len != size || memcmp(out.data, data, size) != 0)
			abort();
		rc__gss_buf_free(&out);
	}
	if (rc__gss_integ_decode(data, size, &a, &al, &b, &bl) == 0 &&
	    (a < data || a + al > data + size || b < data || b + bl > data + size))
		abort();
	if (rc__gss_priv_decode(data, size, &a, &al) == 0 && (a < data || a + al > data + size))
		abort();
	return 0;
}

/* Message plumbing shared by client and server: the encode buffer and reply headers. */
#include <stdlib.h>
#include <string.h>

#include "runtime/core/rpc.h"

/* rpc.h: record a gathered piece at the stream's position. */
bool rc__encbuf_gather(rc_xdr *x, const void *p, uint32_t len)
{
	rc__encbuf *b = x->x_ctx;
	size_t at = (size_t)(x->x_pos - x->x_base);

	if (b->nseg == RC__GSEGS || b->gbytes + len + at > b->max) /* (the copy says toolarge) */
		return false;
	b->seg[b->nseg++] = (rc__gseg){at, p, len};
	b->gbytes += len;
	return true;
}

/* x_more of an encode buffer: grow to hold `need` more bytes, doubling. */
bool rc__encbuf_grow(rc_xdr *x, size_t need)
{
	rc__encbuf *b = x->x_ctx;
	size_t used = (size_t)(x->x_pos - b->data);
	size_t ncap = b->cap * 2;
	unsigned char *nd;

	if (ncap < used + need)
		ncap = used + need;
	if (ncap > b->max + RC_TP_HEADROOM)
		ncap = b->max + RC_TP_HEADROOM;
	if (ncap < used + need) {
		b->toolarge = true;
		return false;
	}
	if (b->heap) {
		nd = realloc(b->data, ncap);
		if (nd == NULL)
			return false;
	} else {
		nd = malloc(ncap);
		if (nd == NULL)
			return false;
		memcpy(nd, b->data, used);
	}
	b->data = nd;
	b->cap = ncap;
	b->heap = true;
	x->x_base = nd + RC_TP_HEADROOM;
	x->x_pos = nd + used;
	x->x_end = nd + ncap;
	return true;
}

/* rpc.h: an encode stream over b after the headroom, growing b as needed. */
void rc__encbuf_xdr(rc__encbuf *b, rc_xdr *x)
{
	rc_xdrmem_create(x, b->data + RC_TP_HEADROOM, b->cap - RC_TP_HEADROOM, RC_XDR_ENCODE);
	x->x_more = rc__encbuf_grow;
	x->x_ctx = b;
}

/* Read an opaque_auth (flavor, body of at most 400 bytes) into *v. */
static bool rc__read_auth(rc_xdr *x, rc__verf *v)
{
	if (!rc_xdr_u_int(x, &v->flavor) || !rc_xdr_u_int(x, &v->len) ||
	    v->len > RC__MAX_AUTH_BYTES)
		return false;
	v->body = v->len == 0 ? NULL : rc_xdr_inline(x, v->len);
	return v->len == 0 || v->body != NULL;
}

/* rpc.h: decode a reply header (after the xid) into a status and *err's details. */
rc_status rc__reply_header(rc_xdr *x, rc_error *err, rc__verf *vf)
{
	uint32_t mtype, stat, v;
	rc__verf skip;

	if (!rc_xdr_u_int(x, &mtype) || mtype != RC__REPLY || !rc_xdr_u_int(x, &stat))
		return RC_BADREPLY;
	if (stat == RC__MSG_ACCEPTED) {
		if (!rc__read_auth(x, vf != NULL ? vf : &skip) || !rc_xdr_u_int(x, &v))
			return RC_BADREPLY;
		switch (v) {
		case RC__SUCCESS:
			return RC_OK;
		case RC__PROG_UNAVAIL:
			return RC_PROGUNAVAIL;
		case RC__PROG_MISMATCH:
			if (!rc_xdr_u_int(x, &err->low) || !rc_xdr_u_int(x, &err->high))
				return RC_BADREPLY;
			return RC_PROGVERSMISMATCH;
		case RC__PROC_UNAVAIL:
			return RC_PROCUNAVAIL;
		case RC__GARBAGE_ARGS:
			return RC_CANTDECODEARGS;
		case RC__SYSTEM_ERR:
			return RC_SYSTEMERROR;
		default:
			return RC_BADREPLY;
		}
	}
	if (stat == RC__MSG_DENIED) {
		if (!rc_xdr_u_int(x, &v))
			return RC_BADREPLY;
		if (v == RC__RPC_MISMATCH) {
			if (!rc_xdr_u_int(x, &err->low) || !rc_xdr_u_int(x, &err->high))
				return RC_BADREPLY;
			return RC_VERSMISMATCH;
		}
		if (v == RC__AUTH_ERROR) {
			if (!rc_xdr_u_int(x, &err->auth_stat))
				return RC_BADREPLY;
			return RC_AUTHERROR;
		}
	}
	return RC_BADREPLY;
}

/*
 * The built-in auth flavors and the registry (auth.h): AUTH_NONE, AUTH_SYS (RFC 5531 sections
 * 9 and 14) and the server side of RFC 9289's AUTH_TLS probe.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/auth/auth.h"
#include "runtime/core/rpc.h"

#define RC__AUTH_SHORT 2u /* AUTH_SYS's shorthand verifier (RFC 5531 section 14) */

/* ---- AUTH_NONE -------------------------------------------------------------------------- */

/* A server accepts AUTH_NONE as it comes: neither its credential's body nor its verifier is
 * used (RFC 5531 section 9.1), as libtirpc and the Linux kernel do. */
static uint32_t rc__none_accept(const rc__svc_call *in, rc__svc_auth *a, rc_svc_req *req,
                                size_t *rlen)
{
	(void)in, (void)a, (void)req, (void)rlen;
	return 0;
}

const rc__flavor rc__flavor_none = {
	.number = RC_AUTH_NONE,
	.name = "AUTH_NONE",
	.props = RC__FL_PLAIN,
	.svc_accept = rc__none_accept,
};

/* ---- AUTH_SYS --------------------------------------------------------------------------- */

/* Parse an AUTH_SYS body (RFC 5531 section 14): exactly len bytes, bounded fields. */
static bool rc__parse_authsys(const unsigned char *body, uint32_t len, rc_authsys *a)
{
	rc_xdr x;
	uint32_t mlen, ng;

	if (body == NULL || len < 20)
		return false; /* stamp, empty name, uid, gid, gid count */
	rc_xdrmem_create(&x, (void *)body, len, RC_XDR_DECODE);
	if (!rc_xdr_u_int(&x, &a->stamp) || !rc_xdr_u_int(&x, &mlen) || mlen > 255 ||
	    rc_xdr_remaining(&x) < ((mlen + 3) & ~3u) + 12)
		return false;
	if (!rc_xdr_opaque(&x, a->machine, mlen))
		return false;
	a->machine[mlen] = '\0';
	if (!rc_xdr_u_int(&x, &a->uid) || !rc_xdr_u_int(&x, &a->gid) || !rc_xdr_u_int(&x, &ng) ||
	    ng > 16 || rc_xdr_remaining(&x) != (size_t)ng * 4)
		return false;
	a->ngids = ng;
	for (uint32_t i = 0; i < ng; i++)
		if (!rc_xdr_u_int(&x, &a->gids[i]))
			return false;
	return true;
}

/* The credential parsed into a->sys, and Sun's view of it (a->ucred) pointing there. */
static uint32_t rc__sys_accept(const rc__svc_call *in, rc__svc_auth *a, rc_svc_req *req,
                               size_t *rlen)
{
	(void)req, (void)rlen;
	if (!rc__parse_authsys(in->cred, in->credlen, &a->sys))
		return RC__AUTH_BADCRED;
	a->ucred.aup_time = a->sys.stamp;
	a->ucred.aup_machname = a->sys.machine;
	a->ucred.aup_uid = a->sys.uid;
	a->ucred.aup_gid = a->sys.gid;
	a->ucred.aup_len = a->sys.ngids;
	a->ucred.aup_gids = a->sys.gids;
	return 0;
}

const rc__flavor rc__flavor_sys = {
	.number = RC_AUTH_SYS,
	.name = "AUTH_SYS",
	.props = RC__FL_PLAIN,
	.svc_accept = rc__sys_accept,
};

/* ---- AUTH_TLS (RFC 9289 section 4.1), the server's side --------------------------------- */

/*
 * The probe: a NULL call with an empty AUTH_TLS credential, answered before the program is
 * looked up, as the Linux kernel does (authentication first):
 *  - not the NULL procedure, a credential body, or a second probe under TLS: AUTH_BADCRED;
 *  - a server without TLS, or a datagram or in-process call (!in->can_tls): SUCCESS, empty
 *    verifier;
 *  - else SUCCESS with verifier AUTH_NONE "STARTTLS", and the serving thread told to start
 *    TLS once that reply is out.
 * Any other use of the flavor is answered here as well: AUTH_TLS credentials are a probe
 * only, never the credentials of a call that runs.
 */
static uint32_t rc__tls_accept(const rc__svc_call *in, rc__svc_auth *a, rc_svc_req *req,
                               size_t *rlen)
{
	(void)a, (void)req;
	if (in->proc != 0 || in->credlen != 0 || in->tls)
		return RC__AUTH_BADCRED;
	if (!in->can_tls)
		*rlen = in->reply->simple(in, false, RC__SUCCESS, NULL, 0);
	else
		*rlen = in->reply->starttls(in);
	return RC__AUTH_ANSWERED;
}

const rc__flavor rc__flavor_tls = {
	.number = RC_AUTH_TLS,
	.name = "AUTH_TLS",
	.props = 0,
	.svc_accept = rc__tls_accept,
};

/* ---- client helpers for plain flavors --------------------------------------------------- */

/* auth.h: whether a plain flavor's client takes this reply verifier. */
bool rc__cl_plain_verf_ok(const rc__flavor *fl, uint32_t vflavor, uint32_t vlen)
{
	if (vlen > RC__MAX_AUTH_BYTES)
		return false;
	/* AUTH_NONE's body is not used (a probe's reply carries "STARTTLS" in it) */
	return vflavor == RC_AUTH_NONE || (vflavor == RC__AUTH_SHORT && fl == &rc__flavor_sys);
}

/* auth.h: references to a client's credentials. */
void rc__cl_auth_ref(rc__cl_auth *a)
{
	atomic_fetch_add_explicit(&a->refs, 1, memory_order_relaxed);
}

void rc__cl_auth_unref(rc__cl_auth *a)
{
	if (a == NULL || atomic_fetch_sub_explicit(&a->refs, 1, memory_order_acq_rel) != 1)
		return;
	if (a->fl->cl_destroy != NULL)
		a->fl->cl_destroy(a);
	free(a);
}

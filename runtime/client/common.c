/*
 * What every part of the client uses (common.h): the calling thread's last error, the
 * reader's role and the header templates it retires, connecting, and tracing.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "runtime/client/common.h"

/* common.h */
_Thread_local rc__lasterr rc__tls;

/* common.h */
void rc__err_explain(const rc_client *c, rc_error *e)
{
	if (e->status == RC_SYSTEMERROR && c->dgram && e->detail[0] == '\0')
		snprintf(e->detail, sizeof(e->detail), "%s",
		         "over UDP this is also how a reply that did not fit in a datagram ends: "
		         "use tcp: or unix: for replies over 65,507 bytes");
}

/* rpc.h: keep e as the calling thread's last error on c. The fixed fields are copied, the
 * detail text only when there is one (a call's hot path pays for 28 bytes, not 284). */
void rc__set_lasterr(const rc_client *c, const rc_error *e)
{
	rc__tls.c = c;
	rc__tls.ok = false;
	memcpy(&rc__tls.e, e, offsetof(rc_error, detail));
	if (__builtin_expect(e->detail[0] != '\0', 0))
		memcpy(rc__tls.e.detail, e->detail, sizeof(e->detail));
	else
		rc__tls.e.detail[0] = '\0';
	if (e->status == RC_CANTENCODEARGS && rc__xdr_why[0] != '\0') { /* which value, why */
		snprintf(rc__tls.e.detail, sizeof(rc__tls.e.detail), "%s", rc__xdr_why);
		rc__xdr_why[0] = '\0';
	} else {
		rc__err_explain(c, &rc__tls.e);
	}
}

void rc_client_geterr(const rc_client *clnt, rc_error *err)
{
	if (err == NULL)
		return;
	if (rc__tls.c == clnt && clnt != NULL && !rc__tls.ok)
		*err = rc__tls.e;
	else
		memset(err, 0, sizeof(*err));
}

/* common.h */
void rc__free_retired(rc_client *c)
{
	while (c->retired) {
		rc__hdr *h = c->retired;
		c->retired = h->next;
		rc__cl_auth_unref(h->auth);
		free(h);
	}
	c->nretired = 0;
}

/* common.h */
void rc__role_drop_locked(rc_client *c)
{
	atomic_store(&c->reading, false);
	if (atomic_load(&c->nwaiters) > 0)
		pthread_cond_broadcast(&c->cv);
}

/* common.h */
bool rc__ahead_locked(rc_client *c)
{
	bool idle = false, ahead;

	if (c->tp == NULL || !atomic_compare_exchange_strong(&c->reading, &idle, true))
		return false;
	ahead = rc__tp_ahead(c->tp);
	rc__role_drop_locked(c);
	return ahead;
}

/* common.h */
rc_status rc__connect(rc_client *c, int64_t deadline)
{
	rc_tp *tp = NULL;
	rc_status st;

	rc__tp_clear_detail();
	st = c->kind->connect(&c->uri, c->max_record, deadline, &tp);
	if (st == RC_OK && c->failover && (st = rc__notice(c, tp, deadline)) != RC_OK) {
		tp->vt->close(tp); /* (a balancer with no server behind it closes at once) */
		tp = NULL;
	}

	if (st == RC_OK) {
		size_t m = tp->max_msg;
		c->max_msg = m > c->max_record ? c->max_record : m;
		c->last_io = rc__now();
	}
	/* tp, npending and doneq are stored atomically: rc__fast_eligible reads them unlocked */
	__atomic_store_n(&c->tp, tp, __ATOMIC_RELEASE);
	return st;
}

/* common.h */
rc_status rc__notice(rc_client *c, rc_tp *tp, int64_t deadline)
{
	_Alignas(8) unsigned char b[RC_TP_HEADROOM + 40];
	unsigned char *m = b + RC_TP_HEADROOM;
	uint32_t xid = atomic_fetch_add_explicit(&c->xid, 1, memory_order_relaxed) + 1;
	static const uint32_t call[9] = {RC__CALL, RC__RPCVERS, RC__CTL_PROG, RC__CTL_VERS,
	                                 RC__CTL_NOTICE, RC_AUTH_NONE, 0, RC_AUTH_NONE, 0};
	rc_status st;

	c->notice_xid = 0;
	rc__put32(m, xid);
	for (int i = 0; i < 9; i++)
		rc__put32(m + 4 + 4 * i, call[i]);
	if ((st = tp->vt->send(tp, m, 40, NULL, 0)) != RC_OK)
		return st;
	for (;;) {
		void *msg;
		size_t len;
		const unsigned char *r;

		st = tp->vt->recv(tp, &msg, &len, NULL, RC_TPF_DONTWAIT);
		if (st == RC_AGAIN) {
			int64_t left = deadline == 0 ? -1 : (deadline - rc__now() + 999999) / 1000000;
			struct pollfd pf = {rc__tp_pollfd(tp), POLLIN, 0};
			if (deadline != 0 && left <= 0)
				return RC_TIMEDOUT;
			(void)poll(&pf, 1, left > INT32_MAX ? INT32_MAX : (int)left);
			continue;
		}
		if (st != RC_OK)
			return st;
		r = msg;
		if (len < 24 || rc__get32(r) != xid || rc__get32(r + 4) != RC__REPLY)
			continue; /* (nothing else can come before it) */
		/* accepted, AUTH_NONE verifier, SUCCESS, 0: the server will tell */
		if (len >= 28 && rc__get32(r + 8) == RC__MSG_ACCEPTED && rc__get32(r + 16) == 0 &&
		    rc__get32(r + 20) == RC__SUCCESS && rc__get32(r + 24) == 0)
			c->notice_xid = xid;
		return RC_OK;
	}
}

/* common.h */
rc_status rc__connect_status(rc_status st)
{
	switch (st) {
	case RC_NOMEM:
	case RC_TIMEDOUT:
	case RC_TLSFAILED:
	case RC_TLSUNAVAIL:
	case RC_BADREPLY:
		return st;
	default:
		return RC_CANTSEND;
	}
}

/* common.h */
__attribute__((noinline)) void rc__trace(const rc_client *c, rc_trace_point pt,
                                                 uint32_t xid)
{
	c->trace(c->trace_arg, pt, xid, rc__trace_clock());
}

/* common.h */
rc_status rc__check_verf(const rc_client *c, rc_async *p, rc__cl_auth *a,
                                const rc__verf *v)
{
	const rc__flavor *fl;
	bool ok;

	if (a != NULL) {
		fl = a->fl;
		ok = fl->cl_validate(a, &p->seqs, v->flavor, v->body, v->len);
	} else {
		fl = __atomic_load_n(&c->hdr, __ATOMIC_ACQUIRE)->fl;
		ok = fl == NULL || rc__cl_plain_verf_ok(fl, v->flavor, v->len);
	}
	if (ok)
		return RC_OK;
	p->err.auth_stat = RC__AUTH_INVALIDRESP;
	snprintf(p->err.detail, sizeof(p->err.detail),
	         "the reply's verifier (flavor %u, %u bytes) is not one %s accepts", v->flavor,
	         v->len, fl->name);
	return RC_AUTHERROR;
}

/* common.h */
bool rc__decode_results(const rc_client *c, rc_async *p, rc__cl_auth *a, rc_xdr *x,
                               const unsigned char *m, size_t len)
{
	const unsigned char *body, *out;
	size_t outn;
	void *owned = NULL;
	rc_xdr y;
	bool ok;

	if (a == NULL || a->fl->cl_unwrap == NULL)
		return p->xres(x, p->res);
	body = m + len - rc_xdr_remaining(x);
	if (!a->fl->cl_unwrap(a, &p->seqs, body, rc_xdr_remaining(x), &out, &outn, &owned))
		return false;
	rc__xdr_decoder(&y, out, outn, rc__budget(c));
	ok = p->xres(&y, p->res);
	free(owned);
	return ok;
}

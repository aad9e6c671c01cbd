/*
 * What the TLS and QUIC tests share (test_tls.c, test_quic.c): the certificates' folder and
 * paths in it, the WHOTLS procedure (what a procedure sees of TLS) and a checked echo.
 * Include after rt_fixture.h.
 */
#ifndef TLS_FIXTURE_H
#define TLS_FIXTURE_H

static char dir[256];      /* the certificates */
static char path_buf[8][512];

/* dir/name, in one of 8 rotating buffers. */
static const char *P(const char *name)
{
	static int k;
	char *b = path_buf[k++ & 7];
	snprintf(b, sizeof(path_buf[0]), "%s/%s", dir, name);
	return b;
}

/* WHOTLS(void) -> string: "plain", or "tls" followed by the peer's subject and SANs. */
static bool tls_who(void *a, void *r, rc_svc_req *q)
{
	char buf[1024];
	const rc_tls_peer *p = rc_svc_req_tls_peer(q);
	size_t n;

	(void)a;
	if (!rc_svc_req_tls(q)) {
		snprintf(buf, sizeof(buf), "plain");
	} else if (p == NULL) {
		snprintf(buf, sizeof(buf), "tls");
	} else {
		n = (size_t)snprintf(buf, sizeof(buf), "tls %s", p->subject ? p->subject : "-");
		for (size_t i = 0; i < p->nsans && n < sizeof(buf); i++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, " %s", p->sans[i]);
	}
	*(char **)r = strdup(buf);
	return *(char **)r != NULL;
}
/* ECHO of n pattern bytes on c, checked. */
static void tls_echo(rc_client *c, size_t n)
{
	rt_blob in, out = {0, NULL};
	in.len = (uint32_t)n;
	in.val = malloc(n ? n : 1);
	assert_non_null(in.val);
	for (size_t i = 0; i < n; i++)
		in.val[i] = (char)(i * 7 + 3);
	assert_int_equal(rc_call(c, 1, (rc_xdrproc)xdr_rt_blob, &in, (rc_xdrproc)xdr_rt_blob, &out),
	                 RC_OK);
	assert_int_equal(out.len, n);
	assert_memory_equal(out.val, in.val, n);
	rc_xdr_free((rc_xdrproc)xdr_rt_blob, &out);
	free(in.val);
}

static bool tls_multi_fn(size_t index, rc_status st, void *res, void *udata)
{
	const rt_blob *b = res;
	assert_int_equal(st, RC_OK);
	assert_int_equal(b->len, 1 << 20);
	((int *)udata)[index]++;
	return true;
}

/* One echo of 1 MiB to the three clients c[0..3) at once (rc_multicall): each answers once. */
static void tls_multi_echo(rc_client **c)
{
	int seen[3] = {0, 0, 0};
	rt_blob in = {1 << 20, NULL};
	in.val = calloc(1, in.len);
	assert_non_null(in.val);
	assert_int_equal(rc_multicall(c, 3, 1, (rc_xdrproc)xdr_rt_blob, &in,
	                              (rc_xdrproc)xdr_rt_blob, sizeof(rt_blob), tls_multi_fn, seen,
	                              20000),
	                 RC_OK);
	assert_int_equal(seen[0] + seen[1] + seen[2], 3);
	free(in.val);
}

#endif

/*
 * test_auth -- auth flavors as objects (runtime/auth/auth.h): the registry; each built-in flavor
 * on the server's serve step (the auth_stat a bad credential gets); a flavor registered here
 * that uses every server method (credential and verifier checks, its own reply verifiers,
 * wrapped arguments and results, silent drops, answering itself, releasing what it holds);
 * the auth hook's own reply verifier; and the client checking every reply verifier through
 * its credentials' flavor (a fake server sends the verifiers).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "runtime/auth/auth.h"
#include "runtime/core/rpc.h"
#include "runtime/server/server_internal.h"
#include "runtime/server/reply.h"
#include "rt_fixture.h"

/* ---- bytes ------------------------------------------------------------------------------ */

typedef struct got {
	bool called;
	unsigned char buf[1024];
	size_t len;
} got;

static void on_reply(void *ctx, unsigned char *msg, size_t len)
{
	got *g = ctx;
	assert_false(g->called);
	g->called = true;
	assert_true(len <= sizeof(g->buf));
	memcpy(g->buf, msg, len);
	g->len = len;
}

static uint32_t word(const unsigned char *b, size_t i)
{
	const unsigned char *p = b + 4 * i;
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put(unsigned char *b, size_t i, uint32_t v)
{
	b[4 * i] = (unsigned char)(v >> 24);
	b[4 * i + 1] = (unsigned char)(v >> 16);
	b[4 * i + 2] = (unsigned char)(v >> 8);
	b[4 * i + 3] = (unsigned char)v;
}

/* Serve the words w[0..n) and return what came back. */
static got serve(rc_server *srv, const uint32_t *w, size_t n)
{
	unsigned char req[256];
	got g = {0};
	assert_true(n * 4 <= sizeof(req));
	for (size_t i = 0; i < n; i++)
		put(req, i, w[i]);
	rc__server_handle_direct(srv, req, 4 * n, on_reply, &g);
	return g;
}

/* ---- a flavor made for the test: XSUM ------------------------------------------------------
 *
 * credential: one word, the caller's key (0xDEAD: drop the call; 0xFACE: the flavor answers
 *             PROC_UNAVAIL itself);
 * verifier:   XSUM, one word: the sum of the header's words through the credential, xor key;
 * reply verifier: XSUM, one word: key + 1;
 * arguments:  a word, key, then the procedure's arguments (another key: GARBAGE_ARGS);
 * results:    a word, key ^ 0xFFFF, then the procedure's results.
 */
#define XSUM 0x7E57u

static atomic_int xs_held; /* contexts accepted and not yet released */
/* server modes for the client tests */
static atomic_bool xs_drop_even;     /* even keys are dropped (a lost transmission) */
static atomic_int xs_reject_next;    /* this many calls get AUTH_CREDPROBLEM */
static atomic_bool xs_bad_reply_verf; /* reply verifiers one off */

static uint32_t xs_sum(const unsigned char *p, size_t n)
{
	uint32_t s = 0;
	for (size_t i = 0; i + 4 <= n; i += 4)
		s += word(p + i, 0);
	return s;
}

static uint32_t xs_accept(const rc__svc_call *in, rc__svc_auth *a, rc_svc_req *req, size_t *rlen)
{
	uint32_t key;
	(void)req;
	if (in->credlen != 4)
		return RC__AUTH_BADCRED;
	key = word(in->cred, 0);
	if (in->vflavor != XSUM || in->vlen != 4 ||
	    word(in->verf, 0) != (xs_sum(in->msg, in->hdrlen) ^ key))
		return RC__AUTH_BADVERF;
	if (key == 0xDEAD || (atomic_load(&xs_drop_even) && key % 2 == 0))
		return RC__AUTH_DROP;
	if (atomic_load(&xs_reject_next) > 0) {
		atomic_fetch_sub(&xs_reject_next, 1);
		return RC__AUTH_CREDPROBLEM;
	}
	if (key == 0xFACE) {
		*rlen = rc__reply_simple(in->w, in->max, in->xid, false, RC__PROC_UNAVAIL, NULL, 0);
		return RC__AUTH_ANSWERED;
	}
	a->seq = key;
	a->service = 1;
	a->ctx = &xs_held; /* something to let go of */
	atomic_fetch_add(&xs_held, 1);
	return 0;
}

static bool xs_verf(const rc__svc_auth *a, uint32_t *vflavor, unsigned char *body, uint32_t *vlen)
{
	*vflavor = XSUM;
	put(body, 0, a->seq + 1 + (atomic_load(&xs_bad_reply_verf) ? 1 : 0));
	*vlen = 4;
	return true;
}

static uint32_t xs_unwrap(const rc__svc_auth *a, const unsigned char *p, size_t n,
                          const unsigned char **out, size_t *outn, void **owned)
{
	unsigned char *copy;
	if (n < 4 || word(p, 0) != a->seq)
		return RC__GARBAGE_ARGS;
	if ((copy = malloc(n - 4 + 1)) == NULL) /* a block of its own, as a real flavor's */
		return RC__SYSTEM_ERR;
	memcpy(copy, p + 4, n - 4);
	*out = copy;
	*outn = n - 4;
	*owned = copy;
	return 0;
}

static bool xs_wrap(const rc__svc_auth *a, rc_xdr *x, rc_xdrproc xres, const void *res)
{
	uint32_t tag = a->seq ^ 0xFFFFu;
	return rc_xdr_u_int(x, &tag) && xres(x, (void *)res);
}

static void xs_release(rc__svc_auth *a)
{
	assert_ptr_equal(a->ctx, &xs_held);
	atomic_fetch_sub(&xs_held, 1);
}

/* The client's side: every transmission numbered afresh (key = the number). */
static atomic_uint xs_next = 1;
static atomic_int xs_refreshes, xs_destroyed;

static bool xs_marshal(rc__cl_auth *a, const unsigned char *head, rc_xdr *x, uint32_t *seq,
                       rc_error *err)
{
	unsigned char hdr[36];
	uint32_t w[6], key = atomic_fetch_add(&xs_next, 1);
	(void)a, (void)err;
	memcpy(hdr, head, 24);
	put(hdr, 6, XSUM);
	put(hdr, 7, 4);
	put(hdr, 8, key);
	w[0] = XSUM, w[1] = 4, w[2] = key;
	w[3] = XSUM, w[4] = 4, w[5] = xs_sum(hdr, 36) ^ key;
	for (int i = 0; i < 6; i++)
		if (!rc_xdr_u_int(x, &w[i]))
			return false;
	*seq = key;
	return true;
}

static bool xs_cl_wrap(rc__cl_auth *a, uint32_t seq, const unsigned char *args, size_t n,
                       rc_xdr *x)
{
	(void)a;
	return rc_xdr_u_int(x, &seq) && (n == 0 || rc_xdr_opaque(x, (void *)args, (uint32_t)n));
}

static bool xs_seen(const rc__cl_seqs *seqs, uint32_t v)
{
	for (unsigned i = 0; i < seqs->n; i++)
		if (seqs->seq[i] == v)
			return true;
	return false;
}

static bool xs_validate(rc__cl_auth *a, const rc__cl_seqs *seqs, uint32_t vflavor,
                        const unsigned char *body, uint32_t vlen)
{
	(void)a;
	return vflavor == XSUM && vlen == 4 && xs_seen(seqs, word(body, 0) - 1);
}

static bool xs_cl_unwrap(rc__cl_auth *a, const rc__cl_seqs *seqs, const unsigned char *body,
                         size_t n, const unsigned char **out, size_t *outn, void **owned)
{
	(void)a;
	if (n < 4 || !xs_seen(seqs, word(body, 0) ^ 0xFFFFu))
		return false;
	*out = body + 4;
	*outn = n - 4;
	*owned = NULL;
	return true;
}

static bool xs_refresh(rc__cl_auth *a, uint32_t why)
{
	(void)a;
	atomic_fetch_add(&xs_refreshes, 1);
	return why == RC__AUTH_CREDPROBLEM;
}

static void xs_destroy(rc__cl_auth *a)
{
	assert_ptr_equal(a->priv, &xs_destroyed);
	atomic_fetch_add(&xs_destroyed, 1);
}

static const rc__flavor xs_flavor = {
	.number = XSUM,
	.name = "XSUM",
	.props = 0,
	.svc_accept = xs_accept,
	.svc_verf = xs_verf,
	.svc_unwrap = xs_unwrap,
	.svc_wrap = xs_wrap,
	.svc_release = xs_release,
	.cl_marshal = xs_marshal,
	.cl_wrap = xs_cl_wrap,
	.cl_validate = xs_validate,
	.cl_unwrap = xs_cl_unwrap,
	.cl_refresh = xs_refresh,
	.cl_destroy = xs_destroy,
};

/* A client's XSUM credentials (one reference, the caller's). */
static rc__cl_auth *xs_credentials(void)
{
	rc__cl_auth *a = calloc(1, sizeof(*a));
	assert_non_null(a);
	a->fl = &xs_flavor;
	atomic_init(&a->refs, 1);
	a->priv = &xs_destroyed;
	return a;
}

/* An XSUM call of procedure proc with key, argument words args[0..nargs) after the key word
 * (wrapped as XSUM wraps), into w; returns its word count. A bad verifier when badverf. */
static size_t xs_call(uint32_t *w, uint32_t xid, uint32_t proc, uint32_t key,
                      const uint32_t *args, size_t nargs, uint32_t argkey, bool badverf)
{
	unsigned char hdr[36]; /* the nine words through the credential */
	size_t n = 0;
	w[n++] = xid, w[n++] = 0, w[n++] = 2, w[n++] = RT_PROG, w[n++] = 1, w[n++] = proc;
	w[n++] = XSUM, w[n++] = 4, w[n++] = key;
	for (size_t i = 0; i < 9; i++)
		put(hdr, i, w[i]);
	w[n++] = XSUM, w[n++] = 4, w[n++] = (xs_sum(hdr, 36) ^ key) + (badverf ? 1 : 0);
	w[n++] = argkey;
	for (size_t i = 0; i < nargs; i++)
		w[n++] = args[i];
	return n;
}

/* ---- the registry and the built-in flavors ---------------------------------------------- */

static void registry(void **state)
{
	(void)state;
	assert_ptr_equal(rc__flavor_find(RC_AUTH_NONE), &rc__flavor_none);
	assert_ptr_equal(rc__flavor_find(RC_AUTH_SYS), &rc__flavor_sys);
	assert_ptr_equal(rc__flavor_find(RC_AUTH_TLS), &rc__flavor_tls);
	assert_null(rc__flavor_find(77));
	assert_true(rc__flavor_none.props & RC__FL_PLAIN);
	assert_true(rc__flavor_sys.props & RC__FL_PLAIN);
	assert_false(rc__flavor_tls.props & RC__FL_PLAIN);
	/* a number taken is refused; a new one is found once added */
	{
		static const rc__flavor dup = {.number = RC_AUTH_SYS, .name = "dup"};
		assert_false(rc__flavor_add(&dup));
		assert_ptr_equal(rc__flavor_find(RC_AUTH_SYS), &rc__flavor_sys);
	}
	assert_true(rc__flavor_add(&xs_flavor) || rc__flavor_find(XSUM) == &xs_flavor);
	assert_ptr_equal(rc__flavor_find(XSUM), &xs_flavor);
	assert_false(rc__flavor_add(&xs_flavor));
}

/* Each built-in flavor's bad credentials get the auth_stat RFC 5531 gives them. */
static void builtin_flavors_on_the_serve_step(void **state)
{
	static const struct {
		const char *name;
		uint32_t w[24];
		size_t n;
		int denied;    /* 1: AUTH_ERROR with auth_stat stat; 0: accepted with accept_stat */
		uint32_t stat;
	} t[] = {
		{"AUTH_NONE, empty", {1, 0, 2, RT_PROG, 1, 0, 0, 0, 0, 0}, 10, 0, 0},
		{"AUTH_NONE with a body and a verifier body (not used)",
		 {2, 0, 2, RT_PROG, 1, 0, 0, 4, 9, 0, 4, 9}, 12, 0, 0},
		{"AUTH_SYS", {3, 0, 2, RT_PROG, 1, 0, 1, 20, 5, 0, 0, 0, 0, 0, 0}, 15, 0, 0},
		{"AUTH_SYS, 17 groups", {4, 0, 2, RT_PROG, 1, 0, 1, 20, 5, 0, 0, 0, 17, 0, 0}, 15, 1,
		 RC__AUTH_BADCRED},
		{"AUTH_SYS, no body", {5, 0, 2, RT_PROG, 1, 0, 1, 0, 0, 0}, 10, 1, RC__AUTH_BADCRED},
		{"AUTH_SYS, bytes after the groups",
		 {6, 0, 2, RT_PROG, 1, 0, 1, 24, 5, 0, 0, 0, 0, 7, 0, 0}, 16, 1, RC__AUTH_BADCRED},
		{"AUTH_TLS probe", {7, 0, 2, RT_PROG, 1, 0, 7, 0, 0, 0}, 10, 0, 0},
		{"AUTH_TLS on procedure 2", {8, 0, 2, RT_PROG, 1, 2, 7, 0, 0, 0}, 10, 1,
		 RC__AUTH_BADCRED},
		{"unregistered flavor 77", {9, 0, 2, RT_PROG, 1, 0, 77, 0, 0, 0}, 10, 1,
		 RC__AUTH_REJECTEDCRED},
		{"RPCSEC_GSS (not built in)", {10, 0, 2, RT_PROG, 1, 0, 6, 0, 0, 0}, 10, 1,
		 RC__AUTH_REJECTEDCRED},
	};
	rc_server *srv;
	(void)state;
	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_register(srv, &rt_prog1, NULL), RC_OK);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		got g;
		print_message("case: %s\n", t[i].name);
		g = serve(srv, t[i].w, t[i].n);
		assert_true(g.called);
		assert_int_equal(word(g.buf, 0), t[i].w[0]);
		assert_int_equal(word(g.buf, 2), (uint32_t)t[i].denied);
		if (t[i].denied) {
			assert_int_equal(word(g.buf, 3), 1); /* AUTH_ERROR */
			assert_int_equal(word(g.buf, 4), t[i].stat);
		} else {
			assert_int_equal(word(g.buf, 3), 0); /* verifier AUTH_NONE, empty */
			assert_int_equal(word(g.buf, 4), 0);
			assert_int_equal(word(g.buf, 5), t[i].stat);
		}
	}
	rc_server_destroy(srv);
}

/* XSUM through every server method. */
static void a_flavor_object_on_the_serve_step(void **state)
{
	rc_server *srv;
	uint32_t w[64];
	size_t n;
	got g;
	(void)state;
	assert_true(rc__flavor_add(&xs_flavor) || rc__flavor_find(XSUM) == &xs_flavor);
	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_register(srv, &rt_prog1, NULL), RC_OK);
	atomic_store(&xs_held, 0);

	/* NULL: the flavor's verifier, its wrapping of a void result (the tag word alone) */
	n = xs_call(w, 100, 0, 41, NULL, 0, 41, false);
	g = serve(srv, w, n);
	assert_true(g.called);
	assert_int_equal(word(g.buf, 2), 0);      /* accepted */
	assert_int_equal(word(g.buf, 3), XSUM);   /* the flavor's reply verifier */
	assert_int_equal(word(g.buf, 4), 4);
	assert_int_equal(word(g.buf, 5), 42);     /* key + 1 */
	assert_int_equal(word(g.buf, 6), 0);      /* SUCCESS */
	assert_int_equal(word(g.buf, 7), 41 ^ 0xFFFFu);
	assert_int_equal(g.len, 32);
	assert_int_equal(atomic_load(&xs_held), 0); /* released once answered */

	/* ECHO of 4 bytes, unwrapped then wrapped */
	{
		uint32_t args[] = {4, 0x61626364};
		n = xs_call(w, 101, 1, 7, args, 2, 7, false);
		g = serve(srv, w, n);
		assert_int_equal(word(g.buf, 5), 8);
		assert_int_equal(word(g.buf, 6), 0);
		assert_int_equal(word(g.buf, 7), 7 ^ 0xFFFFu);
		assert_int_equal(word(g.buf, 8), 4);
		assert_int_equal(word(g.buf, 9), 0x61626364);
		assert_int_equal(g.len, 40);
	}
	/* arguments wrapped for another key: GARBAGE_ARGS, with the flavor's verifier */
	{
		uint32_t args[] = {4, 0x61626364};
		n = xs_call(w, 102, 1, 7, args, 2, 8, false);
		g = serve(srv, w, n);
		assert_int_equal(word(g.buf, 2), 0);
		assert_int_equal(word(g.buf, 3), XSUM);
		assert_int_equal(word(g.buf, 6), RC__GARBAGE_ARGS);
	}
	/* a bad verifier: AUTH_ERROR / AUTH_BADVERF */
	n = xs_call(w, 103, 0, 5, NULL, 0, 5, true);
	g = serve(srv, w, n);
	assert_int_equal(word(g.buf, 2), 1);
	assert_int_equal(word(g.buf, 3), 1);
	assert_int_equal(word(g.buf, 4), RC__AUTH_BADVERF);
	/* dropped without a reply */
	n = xs_call(w, 104, 0, 0xDEAD, NULL, 0, 0xDEAD, false);
	g = serve(srv, w, n);
	assert_false(g.called);
	/* answered by the flavor itself */
	n = xs_call(w, 105, 0, 0xFACE, NULL, 0, 0xFACE, false);
	g = serve(srv, w, n);
	assert_true(g.called);
	assert_int_equal(word(g.buf, 5), RC__PROC_UNAVAIL);
	/* an unknown procedure and a routine that fails: the flavor's verifier on both */
	n = xs_call(w, 106, 99, 9, NULL, 0, 9, false);
	g = serve(srv, w, n);
	assert_int_equal(word(g.buf, 3), XSUM);
	assert_int_equal(word(g.buf, 5), 10);
	assert_int_equal(word(g.buf, 6), RC__PROC_UNAVAIL);
	n = xs_call(w, 107, 4, 9, NULL, 0, 9, false);
	g = serve(srv, w, n);
	assert_int_equal(word(g.buf, 3), XSUM);
	assert_int_equal(word(g.buf, 6), RC__SYSTEM_ERR);
	/* and an AUTH_NONE call after them all: the plain 24-byte reply */
	{
		uint32_t nw[] = {108, 0, 2, RT_PROG, 1, 0, 0, 0, 0, 0};
		g = serve(srv, nw, 10);
		assert_int_equal(g.len, 24);
		assert_int_equal(word(g.buf, 3), 0);
	}
	assert_int_equal(atomic_load(&xs_held), 0); /* every accepted call let go */
	rc_server_destroy(srv);
}

/* ---- the auth hook's reply verifier ----------------------------------------------------- */

static uint32_t short_hook(const rc_svc_req *req, void *ctx)
{
	static const unsigned char shorthand[8] = "SHORTHND";
	(void)ctx;
	if (rc_svc_req_flavor(req) == RC_AUTH_SYS)
		assert_int_equal(rc_svc_req_set_verf(req, 2 /* AUTH_SHORT */, shorthand, 8), RC_OK);
	assert_int_equal(rc_svc_req_set_verf(req, 0, NULL, 401), RC_INVAL);
	return 0;
}

static void hook_supplies_a_verifier(void **state)
{
	rc_server *srv;
	got g;
	uint32_t sys[] = {1, 0, 2, RT_PROG, 1, 0, 1, 20, 5, 0, 0, 0, 0, 0, 0};
	uint32_t none[] = {2, 0, 2, RT_PROG, 1, 0, 0, 0, 0, 0};
	(void)state;
	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_register(srv, &rt_prog1, NULL), RC_OK);
	assert_int_equal(rc_server_set_auth(srv, short_hook, NULL), RC_OK);
	g = serve(srv, sys, 15);
	assert_int_equal(word(g.buf, 3), 2);
	assert_int_equal(word(g.buf, 4), 8);
	assert_memory_equal(g.buf + 20, "SHORTHND", 8);
	assert_int_equal(word(g.buf, 7), 0); /* SUCCESS */
	g = serve(srv, none, 10);            /* the next call: AUTH_NONE's again */
	assert_int_equal(g.len, 24);
	assert_int_equal(word(g.buf, 3), 0);
	assert_int_equal(rc_svc_req_set_verf(NULL, 0, NULL, 0), RC_INVAL);
	rc_server_destroy(srv);

	/* end to end: an AUTH_SYS client takes the AUTH_SHORT reply */
	{
		rt_server s;
		memset(&s, 0, sizeof(s));
		assert_int_equal(rc_server_create(&s.srv), RC_OK);
		assert_int_equal(rc_server_register(s.srv, &rt_prog1, NULL), RC_OK);
		assert_int_equal(rc_server_set_auth(s.srv, short_hook, NULL), RC_OK);
		assert_int_equal(rc_server_listen(s.srv, "tcp://127.0.0.1:0", s.uri[0], 256), RC_OK);
		assert_int_equal(rc_server_listen(s.srv, "udp://127.0.0.1:0", s.uri[1], 256), RC_OK);
		assert_int_equal(pthread_create(&s.tid, NULL, rt_run, &s), 0);
		for (int i = 0; i < 2; i++) {
			rc_client *c;
			uint32_t gids[1] = {5};
			assert_int_equal(rc_client_create(&c, s.uri[i], RT_PROG, 1), RC_OK);
			assert_int_equal(rc_client_set_auth_sys(c, "m", 1, 2, gids, 1), RC_OK);
			assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_OK);
			rc_client_destroy(c);
		}
		rt_stop(&s);
	}
}

/* ---- the client checks reply verifiers -------------------------------------------------- */

/* A fake UDP server answering every call with SUCCESS, an empty result and the verifier
 * (vflavor, vbody of vlen bytes) set before each call. */
static struct {
	int fd, port;
	pthread_t tid;
	atomic_bool stop;
	_Atomic uint32_t vflavor, vlen;
	unsigned char vbody[8];
} fk;

static void *fake_server(void *arg)
{
	(void)arg;
	while (!atomic_load(&fk.stop)) {
		unsigned char call[512], r[64];
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		struct pollfd pf = {fk.fd, POLLIN, 0};
		ssize_t n;
		uint32_t vl = atomic_load(&fk.vlen);
		if (poll(&pf, 1, 50) <= 0)
			continue;
		n = recvfrom(fk.fd, call, sizeof(call), 0, (struct sockaddr *)&from, &fl);
		if (n < 40)
			continue;
		memcpy(r, call, 4);
		put(r, 1, 1);
		put(r, 2, 0);
		put(r, 3, atomic_load(&fk.vflavor));
		put(r, 4, vl);
		memcpy(r + 20, fk.vbody, vl);
		put(r + 20 + vl, 0, 0); /* SUCCESS */
		sendto(fk.fd, r, 24 + vl, 0, (struct sockaddr *)&from, fl);
	}
	return NULL;
}

static void client_checks_reply_verifiers(void **state)
{
	static const struct {
		const char *name;
		bool sys;          /* AUTH_SYS credentials, else AUTH_NONE */
		uint32_t vflavor, vlen;
		rc_status want;
	} t[] = {
		{"AUTH_NONE client, AUTH_NONE verifier", false, 0, 0, RC_OK},
		{"AUTH_NONE client, AUTH_NONE verifier with a body", false, 0, 8, RC_OK},
		{"AUTH_NONE client, AUTH_SHORT verifier", false, 2, 8, RC_AUTHERROR},
		{"AUTH_SYS client, AUTH_SHORT verifier", true, 2, 8, RC_OK},
		{"AUTH_NONE client, RPCSEC_GSS verifier", false, 6, 0, RC_AUTHERROR},
		{"AUTH_SYS client, RPCSEC_GSS verifier", true, 6, 8, RC_AUTHERROR},
		{"AUTH_SYS client, AUTH_SYS verifier", true, 1, 0, RC_AUTHERROR},
	};
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);
	char uri[64];
	(void)state;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fk.fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(fk.fd >= 0);
	assert_int_equal(bind(fk.fd, (struct sockaddr *)&a, sizeof(a)), 0);
	getsockname(fk.fd, (struct sockaddr *)&a, &al);
	fk.port = ntohs(a.sin_port);
	memcpy(fk.vbody, "STARTTLS", 8);
	atomic_store(&fk.stop, false);
	assert_int_equal(pthread_create(&fk.tid, NULL, fake_server, NULL), 0);
	snprintf(uri, sizeof(uri), "udp://127.0.0.1:%d", fk.port);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		rc_client *c;
		rc_status st;
		rc_error e;
		print_message("case: %s\n", t[i].name);
		atomic_store(&fk.vflavor, t[i].vflavor);
		atomic_store(&fk.vlen, t[i].vlen);
		assert_int_equal(rc_client_create(&c, uri, RT_PROG, 1), RC_OK);
		rc_client_set_timeout(c, 2000);
		if (t[i].sys)
			assert_int_equal(rc_client_set_auth_sys(c, "m", 1, 1, NULL, 0), RC_OK);
		st = rc_call(c, 0, NULL, NULL, NULL, NULL);
		assert_int_equal(st, t[i].want);
		if (st == RC_AUTHERROR) {
			rc_client_geterr(c, &e);
			assert_int_equal(e.auth_stat, RC__AUTH_INVALIDRESP);
			assert_non_null(strstr(e.detail, "verifier"));
		}
		/* the same through a started call (the engine's path) */
		{
			rc_async *as;
			assert_int_equal(rc_call_start(c, 0, NULL, NULL, NULL, NULL, NULL, NULL, &as), RC_OK);
			assert_int_equal(rc_async_wait(as, 2000), t[i].want);
			rc_async_release(as);
		}
		rc_client_destroy(c);
	}
	atomic_store(&fk.stop, true);
	pthread_join(fk.tid, NULL);
	close(fk.fd);
}

/* A server of rt_prog1 that knows XSUM on UDP (uri[0]) and TCP (uri[1]), running on *tid. */
static void xs_serve(rt_server *s, pthread_t *tid, char uri[2][256])
{
	assert_true(rc__flavor_add(&xs_flavor) || rc__flavor_find(XSUM) == &xs_flavor);
	assert_int_equal(rc_server_create(&s->srv), RC_OK);
	assert_int_equal(rc_server_register(s->srv, &rt_prog1, NULL), RC_OK);
	assert_int_equal(rc_server_listen(s->srv, "udp://127.0.0.1:0", uri[0], 256), RC_OK);
	assert_int_equal(rc_server_listen(s->srv, "tcp://127.0.0.1:0", uri[1], 256), RC_OK);
	assert_int_equal(pthread_create(tid, NULL, rt_run, s), 0);
}

/* A client with XSUM credentials against a server that knows XSUM, over UDP and TCP: each
 * call sealed (credential, verifier over the header, wrapped arguments), its reply checked and
 * unwrapped; blocking and started calls; a UDP retransmission sealed again with a fresh number
 * (the server drops the first); a credential problem refreshed once; a reply whose verifier
 * fails the flavor's check refused; the credentials freed with the client. */
static void a_flavor_object_on_the_client(void **state)
{
	rc_server *srv;
	pthread_t tid;
	char uri[2][256];
	rt_server s;
	(void)state;
	xs_serve(&s, &tid, uri);
	srv = s.srv;
	atomic_store(&xs_held, 0);
	atomic_store(&xs_destroyed, 0);
	for (int i = 0; i < 2; i++) {
		rc_client *c;
		rt_blob in = {4, "abcd"}, out = {0, NULL};
		rc_error e;
		print_message("over %s\n", uri[i]);
		assert_int_equal(rc_client_create(&c, uri[i], RT_PROG, 1), RC_OK);
		rc_client_set_timeout(c, 3000);
		rc_client_set_retry(c, 100);
		assert_int_equal(rc__client_set_auth(c, xs_credentials()), RC_OK);
		/* blocking */
		for (int k = 0; k < 3; k++) {
			assert_int_equal(rc_call(c, 1, (rc_xdrproc)xdr_rt_blob, &in, (rc_xdrproc)xdr_rt_blob,
			                         &out),
			                 RC_OK);
			assert_int_equal(out.len, 4);
			assert_memory_equal(out.val, "abcd", 4);
			rc_xdr_free((rc_xdrproc)xdr_rt_blob, &out);
		}
		assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_OK);
		/* started */
		{
			rc_async *as;
			assert_int_equal(rc_call_start(c, 1, (rc_xdrproc)xdr_rt_blob, &in,
			                               (rc_xdrproc)xdr_rt_blob, &out, NULL, NULL, &as),
			                 RC_OK);
			assert_int_equal(rc_async_wait(as, 3000), RC_OK);
			rc_async_release(as);
			assert_memory_equal(out.val, "abcd", 4);
			rc_xdr_free((rc_xdrproc)xdr_rt_blob, &out);
		}
		/* a credential problem: refreshed and sent again -- at most twice (RC__RENEWALS, as
		 * Linux's tk_cred_retry): refused a third time, the call ends */
		atomic_store(&xs_refreshes, 0);
		atomic_store(&xs_reject_next, 1);
		assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_OK);
		assert_int_equal(atomic_load(&xs_refreshes), 1);
		atomic_store(&xs_reject_next, 2);
		assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_OK);
		assert_int_equal(atomic_load(&xs_refreshes), 3);
		atomic_store(&xs_refreshes, 1);
		atomic_store(&xs_reject_next, 3);
		assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_AUTHERROR);
		rc_client_geterr(c, &e);
		assert_int_equal(e.auth_stat, RC__AUTH_CREDPROBLEM);
		assert_int_equal(atomic_load(&xs_refreshes), 3);
		atomic_store(&xs_reject_next, 0);
		/* a reply verifier the flavor refuses */
		atomic_store(&xs_bad_reply_verf, true);
		assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_AUTHERROR);
		rc_client_geterr(c, &e);
		assert_int_equal(e.auth_stat, RC__AUTH_INVALIDRESP);
		assert_non_null(strstr(e.detail, "XSUM"));
		atomic_store(&xs_bad_reply_verf, false);
		/* UDP: the first transmission lost (even number), the retransmission sealed again */
		if (i == 0) {
			int ok = 0;
			unsigned first = atomic_load(&xs_next);
			atomic_store(&xs_drop_even, true);
			for (int k = 0; k < 4; k++) {
				ok += rc_call(c, 1, (rc_xdrproc)xdr_rt_blob, &in, (rc_xdrproc)xdr_rt_blob,
				              &out) == RC_OK;
				rc_xdr_free((rc_xdrproc)xdr_rt_blob, &out);
			}
			atomic_store(&xs_drop_even, false);
			assert_int_equal(ok, 4);
			/* at least three of the four went twice, each time with a new number */
			assert_true(atomic_load(&xs_next) - first >= 7);
		}
		/* back to AUTH_NONE: the fast path again */
		assert_int_equal(rc_client_set_auth_none(c), RC_OK);
		assert_int_equal(rc_call(c, 0, NULL, NULL, NULL, NULL), RC_OK);
		rc_client_destroy(c);
		assert_int_equal(atomic_load(&xs_destroyed), i + 1); /* the credentials went */
	}
	rc_server_stop(srv);
	pthread_join(tid, NULL);
	rc_server_destroy(srv);
	assert_int_equal(atomic_load(&xs_held), 0);
}

static atomic_int rn_done;
static rc_status rn_st;
static void rn_cb(rc_async *h, rc_status st, void *udata)
{
	(void)h, (void)udata;
	rn_st = st;
	atomic_fetch_add(&rn_done, 1);
}

/* A started call denied for a credential problem has its credentials renewed (the flavor's
 * refresh, once) and goes again, whether its caller waits for it (rc_async_wait) or drives
 * the client from its loop (rc_client_advance, a callback); denied again after the renewal,
 * it ends with RC_AUTHERROR. Over UDP and TCP. */
static void started_call_renewed(void **state)
{
	rc_server *srv;
	pthread_t tid;
	char uri[2][256];
	rt_server s;
	(void)state;
	xs_serve(&s, &tid, uri);
	srv = s.srv;
	for (int i = 0; i < 2; i++) {
		rc_client *c;
		rt_blob in = {4, "wxyz"}, out = {0, NULL};
		rc_async *h;
		rc_error e;
		assert_int_equal(rc_client_create(&c, uri[i], RT_PROG, 1), RC_OK);
		rc_client_set_timeout(c, 5000);
		assert_int_equal(rc__client_set_auth(c, xs_credentials()), RC_OK);
		print_message("over %s\n", uri[i]);
		/* waited for */
		atomic_store(&xs_refreshes, 0);
		atomic_store(&xs_reject_next, 1);
		assert_int_equal(rc_call_start(c, 1, (rc_xdrproc)xdr_rt_blob, &in,
		                               (rc_xdrproc)xdr_rt_blob, &out, NULL, NULL, &h),
		                 RC_OK);
		assert_int_equal(rc_async_wait(h, 5000), RC_OK);
		rc_async_release(h);
		assert_int_equal(atomic_load(&xs_refreshes), 1);
		assert_memory_equal(out.val, "wxyz", 4);
		rc_xdr_free((rc_xdrproc)xdr_rt_blob, &out);
		/* driven from a loop, with a callback */
		atomic_store(&rn_done, 0);
		atomic_store(&xs_reject_next, 1);
		assert_int_equal(rc_call_start(c, 1, (rc_xdrproc)xdr_rt_blob, &in,
		                               (rc_xdrproc)xdr_rt_blob, &out, rn_cb, NULL, NULL),
		                 RC_OK);
		for (int k = 0; k < 500 && atomic_load(&rn_done) == 0; k++) {
			struct pollfd pf = {-1, 0, 0};
			int ms = 0;
			assert_int_equal(rc_client_pollinfo(c, &pf.fd, &pf.events, &ms), RC_OK);
			(void)poll(&pf, pf.fd >= 0 ? 1 : 0, ms < 0 || ms > 10 ? 10 : ms);
			(void)rc_client_advance(c, pf.revents);
		}
		assert_int_equal(atomic_load(&rn_done), 1);
		assert_int_equal(rn_st, RC_OK);
		assert_int_equal(atomic_load(&xs_refreshes), 2);
		assert_memory_equal(out.val, "wxyz", 4);
		rc_xdr_free((rc_xdrproc)xdr_rt_blob, &out);
		/* denied again after its renewals: the call ends, renewed twice (RC__RENEWALS) */
		atomic_store(&xs_reject_next, 3);
		assert_int_equal(rc_call_start(c, 1, (rc_xdrproc)xdr_rt_blob, &in,
		                               (rc_xdrproc)xdr_rt_blob, &out, NULL, NULL, &h),
		                 RC_OK);
		assert_int_equal(rc_async_wait(h, 5000), RC_AUTHERROR);
		{ /* its handle says why, the auth_stat by name */
			char buf[200];
			rc_async_geterr(h, &e);
			assert_int_equal(e.auth_stat, RC__AUTH_CREDPROBLEM);
			assert_string_equal(rc_error_format(&e, buf, sizeof buf),
			                    "authentication error (RPCSEC_GSS_CREDPROBLEM: no "
			                    "credentials for user)");
		}
		rc_async_release(h);
		assert_int_equal(atomic_load(&xs_refreshes), 4);
		atomic_store(&xs_reject_next, 0);
		/* released while it waits for the renewal: nothing left behind (valgrind) */
		atomic_store(&xs_reject_next, 1);
		assert_int_equal(rc_call_start(c, 1, (rc_xdrproc)xdr_rt_blob, &in,
		                               (rc_xdrproc)xdr_rt_blob, &out, NULL, NULL, &h),
		                 RC_OK);
		usleep(50000);
		(void)rc_client_advance(c, POLLIN); /* (the denial read; renewed and sent again) */
		rc_async_release(h);
		atomic_store(&xs_reject_next, 0);
		rc_client_destroy(c);
		usleep(200000); /* (datagrams it left in the server's queue are served, not counted
		                   against the next transport's rejection) */
	}
	rc_server_stop(srv);
	pthread_join(tid, NULL);
	rc_server_destroy(srv);
}

/* A program whose one procedure takes 20 ms and counts the calls running at once. */
#define WIN_PROG 0x20000179u
static atomic_int win_now, win_max;

static bool win_slow(void *a, void *r, rc_svc_req *q)
{
	int n = atomic_fetch_add(&win_now, 1) + 1, m = atomic_load(&win_max);
	(void)q;
	while (n > m && !atomic_compare_exchange_weak(&win_max, &m, n))
		;
	usleep(20000);
	atomic_fetch_sub(&win_now, 1);
	*(uint32_t *)r = *(uint32_t *)a;
	return true;
}

static const rc_procinfo win_slow_1 = {WIN_PROG, 1, 1, "SLOW", (rc_xdrproc)rc_xdr_u_int, 4,
                                       (rc_xdrproc)rc_xdr_u_int, 4};
static const rc_svc_proc win_procs[] = {{&win_slow_1, win_slow}};
static const rc_svc_prog win_prog = {WIN_PROG, 1, 1, win_procs};

/* 12 calls started at once with XSUM credentials of the given window on a 4-worker server
 * (one TCP connection: its calls run in parallel); the most that ran at once. */
static int win_run(const char *uri, uint32_t window)
{
	rc_client *c;
	rc__cl_auth *a = xs_credentials();
	rc_async *h[12];
	uint32_t in[12], out[12];
	atomic_store(&win_now, 0);
	atomic_store(&win_max, 0);
	atomic_store(&a->window, window);
	assert_int_equal(rc_client_create(&c, uri, WIN_PROG, 1), RC_OK);
	rc_client_set_timeout(c, 10000);
	assert_int_equal(rc__client_set_auth(c, a), RC_OK); /* (takes a) */
	for (int i = 0; i < 12; i++) {
		in[i] = 100u + (uint32_t)i;
		assert_int_equal(rc_call_start(c, 1, (rc_xdrproc)rc_xdr_u_int, &in[i],
		                               (rc_xdrproc)rc_xdr_u_int, &out[i], NULL, NULL, &h[i]),
		                 RC_OK);
	}
	for (int i = 0; i < 12; i++) {
		assert_int_equal(rc_async_wait(h[i], 10000), RC_OK);
		assert_int_equal(out[i], in[i]);
		rc_async_release(h[i]);
	}
	rc_client_destroy(c);
	return atomic_load(&win_max);
}

/* Credentials with a window (a server's RPCSEC_GSS sequence window) bound the calls in flight
 * under them: a started call beyond it waits in rc_call_start, reading replies, until one is
 * answered. Without a window the same calls run four at a time on four workers. */
static void window_bounds_calls_in_flight(void **state)
{
	rc_server *srv;
	pthread_t tid;
	char uri[256];
	rt_server s;
	int unbounded, bounded;
	(void)state;
	assert_true(rc__flavor_add(&xs_flavor) || rc__flavor_find(XSUM) == &xs_flavor);
	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_register(srv, &win_prog, NULL), RC_OK);
	assert_int_equal(rc_server_listen(srv, "tcp://127.0.0.1:0", uri, sizeof uri), RC_OK);
	assert_int_equal(rc_server_set_threads(srv, 4), RC_OK);
	s.srv = srv;
	assert_int_equal(pthread_create(&tid, NULL, rt_run, &s), 0);
	unbounded = win_run(uri, 0);
	bounded = win_run(uri, 2);
	print_message("at once: %d without a window, %d with a window of 2\n", unbounded, bounded);
	assert_true(unbounded > 2); /* (the test could tell) */
	assert_true(bounded >= 1 && bounded <= 2);
	rc_server_stop(srv);
	pthread_join(tid, NULL);
	rc_server_destroy(srv);
}

/* A deferring program for the test below: 1 TWICE(u_int) -> u_int, answered by a thread. */
#define AD_PROG 0x20000178u
static rc_svc_req *ad_req;
static uint32_t ad_arg;
static pthread_mutex_t ad_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ad_cv = PTHREAD_COND_INITIALIZER;

static bool ad_twice(void *a, void *r, rc_svc_req *q)
{
	(void)r;
	if (rc_svc_req_defer(q) != RC_OK)
		return false;
	pthread_mutex_lock(&ad_mu);
	ad_arg = *(uint32_t *)a;
	ad_req = q;
	pthread_cond_broadcast(&ad_cv);
	pthread_mutex_unlock(&ad_mu);
	return true;
}

static void *ad_answer(void *arg)
{
	uint32_t res;
	(void)arg;
	pthread_mutex_lock(&ad_mu);
	while (ad_req == NULL)
		pthread_cond_wait(&ad_cv, &ad_mu);
	res = ad_arg * 2;
	usleep(20000); /* after the serving thread has let go */
	assert_int_equal(atomic_load(&xs_held), 1); /* the deferred request holds its flavor's */
	assert_int_equal(rc_svc_req_reply(ad_req, (rc_xdrproc)rc_xdr_u_int, &res), RC_OK);
	ad_req = NULL;
	pthread_mutex_unlock(&ad_mu);
	return NULL;
}

static const rc_procinfo ad_twice_1 = {AD_PROG, 1, 1, "TWICE", (rc_xdrproc)rc_xdr_u_int, 4,
                                       (rc_xdrproc)rc_xdr_u_int, 4};
static const rc_svc_proc ad_procs[] = {{&ad_twice_1, ad_twice}};
static const rc_svc_prog ad_prog = {AD_PROG, 1, 1, ad_procs};

/* A deferred request of a flavor's call: its reply, made on another thread after the routine
 * returned, carries the flavor's verifier and wrapping, and the flavor's reference goes then. */
static void a_flavor_on_a_deferred_reply(void **state)
{
	rc_server *srv;
	pthread_t tid, ans;
	char uri[2][256];
	rt_server s;
	(void)state;
	assert_true(rc__flavor_add(&xs_flavor) || rc__flavor_find(XSUM) == &xs_flavor);
	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_register(srv, &ad_prog, NULL), RC_OK);
	assert_int_equal(rc_server_listen(srv, "tcp://127.0.0.1:0", uri[0], 256), RC_OK);
	assert_int_equal(rc_server_listen(srv, "udp://127.0.0.1:0", uri[1], 256), RC_OK);
	s.srv = srv;
	assert_int_equal(pthread_create(&tid, NULL, rt_run, &s), 0);
	atomic_store(&xs_held, 0);
	for (int i = 0; i < 2; i++) {
		rc_client *c;
		uint32_t in = 21 + (uint32_t)i, out = 0;
		assert_int_equal(rc_client_create(&c, uri[i], AD_PROG, 1), RC_OK);
		rc_client_set_timeout(c, 5000);
		assert_int_equal(rc__client_set_auth(c, xs_credentials()), RC_OK);
		assert_int_equal(pthread_create(&ans, NULL, ad_answer, NULL), 0);
		assert_int_equal(rc_call(c, 1, (rc_xdrproc)rc_xdr_u_int, &in, (rc_xdrproc)rc_xdr_u_int,
		                         &out),
		                 RC_OK);
		assert_int_equal(out, in * 2);
		pthread_join(ans, NULL);
		assert_int_equal(atomic_load(&xs_held), 0);
		rc_client_destroy(c);
	}
	rc_server_stop(srv);
	pthread_join(tid, NULL);
	rc_server_destroy(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(registry),
		cmocka_unit_test(builtin_flavors_on_the_serve_step),
		cmocka_unit_test(a_flavor_object_on_the_serve_step),
		cmocka_unit_test(hook_supplies_a_verifier),
		cmocka_unit_test(client_checks_reply_verifiers),
		cmocka_unit_test(a_flavor_object_on_the_client),
		cmocka_unit_test(window_bounds_calls_in_flight),
		cmocka_unit_test(started_call_renewed),
		cmocka_unit_test(a_flavor_on_a_deferred_reply),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

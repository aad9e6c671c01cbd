/* The RPCSEC_GSS core (runtime/auth/gss.h) on a real wire before the runtime's plumbing exists: a
 * bare ONC RPC client and server over TCP (record marking, headers written and read here)
 * that use only rc__gss_* for the security -- so the core's bytes can be checked against
 * libtirpc's RPCSEC_GSS both ways (tests/gss/gss_wire.sh). Program GSS_ECHO_PROG of
 * tirpc_gss_common.h.
 *
 *   gss_wire_peer server [--name nfs@localhost]
 *       prints "port N"; serves one connection at a time until killed: INIT/CONTINUE_INIT,
 *       DATA (NULL, ECHO returning the data and the caller's principal), DESTROY; replays
 *       dropped, CREDPROBLEM/CTXPROBLEM as AUTH_ERROR.
 *   gss_wire_peer client --port N [--name nfs@localhost] [--service none|integrity|privacy]
 *                        [--echo BYTES] [--calls N] [--expect-principal P] [--destroy]
 *       establishes a context, checks an ECHO (bytes and principal), times N NULL calls
 *       ("null SVC N calls us_per_call X"), optionally sends DESTROY and checks the context
 *       is gone (the next call gets AUTH_ERROR CREDPROBLEM).
 *   gss_wire_peer hostile --port N [--name nfs@localhost] [--bound B] [--idle-ms MS]
 *       against remotecall's runtime (gss_rc_peer server, its STATS procedure): replays,
 *       window edges, forged header MICs, corrupted and truncated bodies, MAXSEQ, an unknown
 *       handle, DESTROY with a bad MIC, a flood of INITs and of random handles (the table at
 *       most B, memory flat, the evictions counted); with --idle-ms, only that a context idle
 *       for 1.5x MS is gone.
 *       Prints a line per check; exit 0 when all held (gss_hostile.sh).
 *   gss_wire_peer spoof --port N --udp-port U [--name nfs@localhost]
 *       against gss_rc_peer server --require off listening on TCP N and UDP U: a context made
 *       over TCP, then from one UDP socket an AUTH_SYS ECHO call with the xid and arguments
 *       of the RPCSEC_GSS ECHO call that follows it: the latter must get its own reply (the
 *       duplicate request cache's key holds the flavor and the context handle).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "runtime/auth/gss.h"
#include "xdr/base.h"

#define PROG 0x20000528u
#define VERS 1u
#define MAXREC (16u << 20)

/* ---- records ------------------------------------------------------------------------------ */

static int read_full(int fd, void *p, size_t n)
{
	unsigned char *b = p;
	while (n) {
		ssize_t r = read(fd, b, n);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return -1;
		}
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

/* One record (all fragments); *buf malloc'd. Returns its length or -1. */
static ssize_t read_rec(int fd, unsigned char **buf)
{
	size_t len = 0;
	unsigned char *b = NULL;
	for (;;) {
		unsigned char m[4];
		if (read_full(fd, m, 4))
			goto fail;
		uint32_t w = rc__ld32(m), n = w & 0x7fffffffu;
		if (len + n > MAXREC)
			goto fail;
		unsigned char *nb = realloc(b, len + n + 1);
		if (!nb)
			goto fail;
		b = nb;
		if (read_full(fd, b + len, n))
			goto fail;
		len += n;
		if (w & 0x80000000u)
			break;
	}
	*buf = b;
	return (ssize_t)len;
fail:
	free(b);
	return -1;
}

static int write_rec(int fd, const unsigned char *p, size_t n)
{
	unsigned char m[4];
	rc__st32(m, 0x80000000u | (uint32_t)n);
	if (write(fd, m, 4) != 4)
		return -1;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A growing output buffer. */
typedef struct out {
	unsigned char *p;
	size_t n, cap;
} out;

static void put(out *o, const void *d, size_t n)
{
	if (o->n + n + 4 > o->cap) {
		o->cap = (o->n + n + 4) * 2;
		o->p = realloc(o->p, o->cap);
		if (!o->p)
			abort();
	}
	if (n)
		memcpy(o->p + o->n, d, n);
	o->n += n;
}

static void put32(out *o, uint32_t v)
{
	unsigned char w[4];
	rc__st32(w, v);
	put(o, w, 4);
}

static void put_opaque(out *o, const void *d, size_t n)
{
	static const unsigned char z[4];
	put32(o, (uint32_t)n);
	put(o, d, n);
	put(o, z, (4 - n % 4) % 4);
}

/* A read cursor. */
typedef struct in {
	const unsigned char *p, *end;
	int bad;
} in;

static uint32_t get32(in *i)
{
	if (i->end - i->p < 4) {
		i->bad = 1;
		return 0;
	}
	uint32_t v = rc__ld32(i->p);
	i->p += 4;
	return v;
}

static const unsigned char *get_opaque(in *i, uint32_t *len, uint32_t max)
{
	uint32_t n = get32(i);
	size_t padded = ((size_t)n + 3) & ~(size_t)3;
	if (i->bad || n > max || (size_t)(i->end - i->p) < padded) {
		i->bad = 1;
		return NULL;
	}
	const unsigned char *d = i->p;
	i->p += padded;
	*len = n;
	return d;
}

/* ---- server ------------------------------------------------------------------------------- */

static void reply_denied(int fd, uint32_t xid, uint32_t auth_stat)
{
	out o = { 0 };
	put32(&o, xid);
	put32(&o, 1); /* REPLY */
	put32(&o, 1); /* MSG_DENIED */
	put32(&o, 1); /* AUTH_ERROR */
	put32(&o, auth_stat);
	write_rec(fd, o.p, o.n);
	free(o.p);
}

static void reply_accepted(int fd, uint32_t xid, uint32_t vflavor, const rc__gss_buf *verf,
			   uint32_t stat, const void *res, size_t len)
{
	out o = { 0 };
	put32(&o, xid);
	put32(&o, 1);
	put32(&o, 0); /* MSG_ACCEPTED */
	put32(&o, vflavor);
	put_opaque(&o, verf ? verf->data : NULL, verf ? verf->len : 0);
	put32(&o, stat);
	put(&o, res, len);
	write_rec(fd, o.p, o.n);
	free(o.p);
}

static void serve_one(rc__gss_table *t, int fd, const unsigned char *msg, size_t len)
{
	in i = { msg, msg + len, 0 };
	rc__gss_err e = { 0 };
	uint32_t xid = get32(&i), mtype = get32(&i), rpcv = get32(&i), prog = get32(&i);
	uint32_t vers = get32(&i), proc = get32(&i), cfl = get32(&i), cl = 0, vfl, vl = 0;
	const unsigned char *cred = get_opaque(&i, &cl, RC__MAX_AUTH_BYTES);
	size_t hdr_len = (size_t)(i.p - msg);
	vfl = get32(&i);
	const unsigned char *verf = get_opaque(&i, &vl, RC__MAX_AUTH_BYTES);
	if (i.bad || mtype != 0 || rpcv != 2)
		return; /* not a call: ignored */
	const unsigned char *args = i.p;
	size_t args_len = (size_t)(i.end - i.p);
	if (prog != PROG || vers != VERS) {
		reply_accepted(fd, xid, 0, NULL, 1 /* PROG_UNAVAIL */, NULL, 0);
		return;
	}
	if (cfl != RC__GSS_FLAVOR) {
		if (proc == 0)
			reply_accepted(fd, xid, 0, NULL, 0, NULL, 0);
		else
			reply_denied(fd, xid, 5 /* AUTH_TOOWEAK */);
		return;
	}
	rc__gss_accepted a;
	rc__gss_svc_accept(t, msg, hdr_len, cred, cl, vfl, verf, vl, &a);
	switch (a.verdict) {
	case RC__GSS_V_INIT: {
		rc__gss_buf res, v;
		uint32_t vf;
		if (proc != 0) {
			reply_denied(fd, xid, 2 /* AUTH_BADCRED */);
			return;
		}
		int r = rc__gss_svc_init(t, &a, args, args_len, &res, &vf, &v, &e);
		if (r == 0)
			reply_accepted(fd, xid, vf, &v, 0, res.data, res.len);
		else if (r == -1)
			reply_accepted(fd, xid, 0, NULL, 4 /* GARBAGE_ARGS */, NULL, 0);
		else if (r == -2)
			reply_denied(fd, xid, RC__GSS_AUTH_CREDPROBLEM);
		else
			reply_accepted(fd, xid, 0, NULL, 5 /* SYSTEM_ERR */, NULL, 0);
		if (r)
			fprintf(stderr, "gss_wire_peer: INIT: %s\n", e.text);
		rc__gss_buf_free(&res);
		rc__gss_buf_free(&v);
		return;
	}
	case RC__GSS_V_DROP:
		fprintf(stderr, "gss_wire_peer: dropped seq %u\n", a.seq);
		return;
	case RC__GSS_V_BADCRED:
		reply_denied(fd, xid, 2);
		return;
	case RC__GSS_V_BADVERF:
		reply_denied(fd, xid, 4);
		return;
	case RC__GSS_V_CREDPROBLEM:
		reply_denied(fd, xid, RC__GSS_AUTH_CREDPROBLEM);
		return;
	case RC__GSS_V_CTXPROBLEM:
		reply_denied(fd, xid, RC__GSS_AUTH_CTXPROBLEM);
		return;
	case RC__GSS_V_OK:
		break;
	}
	rc__gss_buf rv, plain = { 0 }, wr = { 0 };
	if (rc__gss_svc_reply_verf(a.ctx, a.seq, &rv, &e)) {
		fprintf(stderr, "gss_wire_peer: reply verifier: %s (no reply)\n", e.text);
		rc__gss_svc_ctx_unref(a.ctx);
		return;
	}
	if (a.proc == RC__GSS_DESTROY) { /* void results, not wrapped (as Linux does) */
		reply_accepted(fd, xid, RC__GSS_FLAVOR, &rv, 0, NULL, 0);
		goto done;
	}
	if (rc__gss_svc_unwrap_args(a.ctx, a.seq, a.service, args, args_len, &plain, &e)) {
		fprintf(stderr, "gss_wire_peer: arguments: %s\n", e.text);
		reply_accepted(fd, xid, RC__GSS_FLAVOR, &rv, 4, NULL, 0);
		goto done;
	}
	out res = { 0 };
	if (proc == 1) { /* ECHO: opaque data<> -> {opaque data<>; string principal<>} */
		in ai = { plain.data, plain.data + plain.len, 0 };
		uint32_t dl = 0;
		const unsigned char *d = get_opaque(&ai, &dl, 8u << 20);
		if (ai.bad || ai.p != ai.end) {
			reply_accepted(fd, xid, RC__GSS_FLAVOR, &rv, 4, NULL, 0);
			goto done;
		}
		const char *who = rc__gss_svc_ctx_principal(a.ctx);
		put_opaque(&res, d, dl);
		put_opaque(&res, who, strlen(who));
	} else if (proc != 0) {
		reply_accepted(fd, xid, RC__GSS_FLAVOR, &rv, 3 /* PROC_UNAVAIL */, NULL, 0);
		goto done;
	}
	if (rc__gss_svc_wrap_results(a.ctx, a.seq, a.service, res.p, res.n, &wr, &e))
		fprintf(stderr, "gss_wire_peer: results: %s (no reply)\n", e.text);
	else
		reply_accepted(fd, xid, RC__GSS_FLAVOR, &rv, 0, wr.data, wr.len);
	free(res.p);
done:
	rc__gss_buf_free(&rv);
	rc__gss_buf_free(&plain);
	rc__gss_buf_free(&wr);
	rc__gss_svc_ctx_unref(a.ctx);
}

static int server(const char *name)
{
	rc__gss_table_opts o = { .principal = name };
	rc__gss_table *t;
	rc__gss_err e = { 0 };
	if (rc__gss_table_create(&t, &o, &e)) {
		fprintf(stderr, "gss_wire_peer: %s\n", e.text);
		return 1;
	}
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in sin = { .sin_family = AF_INET };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t sl = sizeof sin;
	if (bind(ls, (struct sockaddr *)&sin, sizeof sin) || listen(ls, 16) ||
	    getsockname(ls, (struct sockaddr *)&sin, &sl)) {
		perror("gss_wire_peer: listen");
		return 1;
	}
	printf("port %d\n", ntohs(sin.sin_port));
	fflush(stdout);
	for (;;) {
		int fd = accept(ls, NULL, NULL);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		unsigned char *m;
		ssize_t n;
		while ((n = read_rec(fd, &m)) >= 0) {
			serve_one(t, fd, m, (size_t)n);
			free(m);
		}
		close(fd);
	}
}

/* ---- client ------------------------------------------------------------------------------- */

static int fd_c;
static uint32_t xid_c = 0x51000000u;

typedef struct reply {
	unsigned char *msg;
	uint32_t denied, stat; /* denied: 1 with stat the auth_stat; else stat the accept_stat */
	uint32_t vflavor, vlen;
	const unsigned char *verf, *res;
	size_t res_len;
} reply;

/* Send a call (header through the credential in hdr, then verifier, then body) and read the
 * reply with the same xid. */
static int call_raw(const out *hdr, uint32_t vfl, const rc__gss_buf *verf, const void *body,
		    size_t blen, reply *r)
{
	out o = { 0 };
	put(&o, hdr->p, hdr->n);
	put32(&o, vfl);
	put_opaque(&o, verf ? verf->data : NULL, verf ? verf->len : 0);
	put(&o, body, blen);
	int bad = write_rec(fd_c, o.p, o.n);
	free(o.p);
	if (bad)
		return -1;
	memset(r, 0, sizeof *r);
	ssize_t n = read_rec(fd_c, &r->msg);
	if (n < 0)
		return -1;
	in i = { r->msg, r->msg + n, 0 };
	uint32_t xid = get32(&i), mt = get32(&i), rs = get32(&i);
	if (i.bad || xid != rc__ld32(hdr->p) || mt != 1)
		return -1;
	if (rs == 1) {
		r->denied = 1;
		uint32_t why = get32(&i);
		r->stat = why == 1 ? get32(&i) : 1000 + why;
		return i.bad ? -1 : 0;
	}
	r->vflavor = get32(&i);
	r->verf = get_opaque(&i, &r->vlen, RC__MAX_AUTH_BYTES);
	r->stat = get32(&i);
	r->res = i.p;
	r->res_len = (size_t)(i.end - i.p);
	return i.bad ? -1 : 0;
}

static void header(out *h, uint32_t proc, const void *cred, size_t cl)
{
	h->n = 0;
	put32(h, ++xid_c);
	put32(h, 0);
	put32(h, 2);
	put32(h, PROG);
	put32(h, VERS);
	put32(h, proc);
	put32(h, RC__GSS_FLAVOR);
	put_opaque(h, cred, cl);
}

static int establish(rc__gss_cli *c)
{
	rc__gss_buf args;
	rc__gss_err e = { 0 };
	out h = { 0 };
	int r;
	if (rc__gss_cli_init_start(c, &args, &e)) {
		fprintf(stderr, "gss_wire_peer: %s\n", e.text);
		return -1;
	}
	do {
		unsigned char cred[RC__GSS_CRED_MAX];
		size_t cl = rc__gss_cli_cred_init(c, cred, sizeof cred);
		reply rp;
		header(&h, 0, cred, cl);
		if (call_raw(&h, 0, NULL, args.data, args.len, &rp) || rp.denied || rp.stat) {
			fprintf(stderr, "gss_wire_peer: INIT call failed (denied %u, stat %u)\n",
				rp.denied, rp.stat);
			rc__gss_buf_free(&args);
			free(rp.msg);
			free(h.p);
			return -1;
		}
		rc__gss_buf_free(&args);
		r = rc__gss_cli_init_next(c, rp.res, rp.res_len, rp.vflavor, rp.verf, rp.vlen, &args, &e);
		free(rp.msg);
	} while (r == 1);
	free(h.p);
	if (r) {
		fprintf(stderr, "gss_wire_peer: %s\n", e.text);
		return -1;
	}
	return 0;
}

/* One DATA (or DESTROY) call: args wrapped, reply verified, results unwrapped into *res.
 * Returns 0, or the auth_stat of a denial (> 0), or -1. */
static int gss_call(rc__gss_cli *c, uint32_t gproc, uint32_t proc, const void *a, size_t al,
		    rc__gss_buf *res)
{
	rc__gss_err e = { 0 };
	uint32_t seq;
	unsigned char cred[RC__GSS_CRED_MAX];
	out h = { 0 };
	rc__gss_buf v = { 0 }, w = { 0 };
	reply rp = { 0 };
	int st = -1;

	res->data = NULL;
	res->len = 0;
	if (rc__gss_cli_next_seq(c, &seq))
		return -1;
	size_t cl = rc__gss_cli_cred(c, gproc, seq, cred, sizeof cred);
	header(&h, proc, cred, cl);
	if (rc__gss_cli_header_verf(c, h.p, h.n, &v, &e))
		goto out;
	if (gproc == RC__GSS_DATA) {
		if (rc__gss_cli_wrap(c, seq, a, al, &w, &e))
			goto out;
	}
	if (call_raw(&h, RC__GSS_FLAVOR, &v, w.data, w.len, &rp)) {
		snprintf(e.text, sizeof e.text, "no reply");
		goto out;
	}
	if (rp.denied) {
		st = (int)rp.stat;
		snprintf(e.text, sizeof e.text, "denied, auth_stat %u", rp.stat);
		goto out;
	}
	rc__gss_seqs sent;
	rc__gss_seqs_init(&sent);
	rc__gss_seqs_add(&sent, seq);
	if (rc__gss_cli_validate(c, &sent, rp.vflavor, rp.verf, rp.vlen, &e))
		goto out;
	if (rp.stat) {
		snprintf(e.text, sizeof e.text, "accept_stat %u", rp.stat);
		goto out;
	}
	if (gproc == RC__GSS_DESTROY) {
		st = 0;
		goto out;
	}
	if (rc__gss_cli_unwrap(c, &sent, rp.res, rp.res_len, res, &e))
		goto out;
	st = 0;
out:
	if (st < 0)
		fprintf(stderr, "gss_wire_peer: call %u/%u: %s\n", gproc, proc, e.text);
	free(rp.msg);
	free(h.p);
	rc__gss_buf_free(&v);
	rc__gss_buf_free(&w);
	return st;
}

static double now_us(void)
{
	return (double)rc__clock_ns() / 1e3;
}

/* fd_c: a TCP connection to 127.0.0.1:port. 0, or -1 (printed). */
static int connect_c(int port)
{
	int one = 1;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd_c = socket(AF_INET, SOCK_STREAM, 0);
	if (fd_c < 0 || connect(fd_c, (struct sockaddr *)&sin, sizeof sin)) {
		perror("gss_wire_peer: connect");
		return -1;
	}
	setsockopt(fd_c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return 0;
}

/* ---- hostile calls against a server ------------------------------------------------------- */

/* A whole call (header, verifier, arguments wrapped for seq) in rec; *hlen the header's
 * length (the verifier's flavor follows it). 0, or -1. */
static int build(rc__gss_cli *c, uint32_t gproc, uint32_t proc, uint32_t seq, const void *a,
		 size_t al, out *rec, size_t *hlen)
{
	unsigned char cred[RC__GSS_CRED_MAX];
	rc__gss_err e = { 0 };
	rc__gss_buf v = { 0 }, w = { 0 };
	size_t cl = rc__gss_cli_cred(c, gproc, seq, cred, sizeof cred);

	header(rec, proc, cred, cl);
	*hlen = rec->n;
	if (rc__gss_cli_header_verf(c, rec->p, rec->n, &v, &e) ||
	    (gproc == RC__GSS_DATA && rc__gss_cli_wrap(c, seq, a, al, &w, &e))) {
		fprintf(stderr, "gss_wire_peer: build: %s\n", e.text);
		rc__gss_buf_free(&v);
		return -1;
	}
	put32(rec, RC__GSS_FLAVOR);
	put_opaque(rec, v.data, v.len);
	put(rec, w.data, w.len);
	rc__gss_buf_free(&v);
	rc__gss_buf_free(&w);
	return 0;
}

/* Outcomes of one call (sent as rec is) */
#define O_DROPPED (-2)   /* no reply within 500 ms */
#define O_ACCEPT 100     /* + accept_stat */
#define O_DENIED 200     /* + auth_stat */

static int outcome(const out *rec)
{
	unsigned char *msg = NULL;
	struct pollfd pf = { fd_c, POLLIN, 0 };
	int r = -1;

	if (write_rec(fd_c, rec->p, rec->n))
		return -1;
	if (poll(&pf, 1, 500) == 0)
		return O_DROPPED;
	ssize_t n = read_rec(fd_c, &msg);
	if (n < 0)
		return -1;
	in i = { msg, msg + n, 0 };
	uint32_t xid = get32(&i), mt = get32(&i), rs = get32(&i);
	if (!i.bad && xid == rc__ld32(rec->p) && mt == 1) {
		if (rs == 1) {
			uint32_t why = get32(&i);
			r = why == 1 ? O_DENIED + (int)get32(&i) : -1;
		} else {
			uint32_t vl;
			(void)get32(&i);
			(void)get_opaque(&i, &vl, RC__MAX_AUTH_BYTES);
			r = O_ACCEPT + (int)get32(&i);
		}
		if (i.bad)
			r = -1;
	}
	free(msg);
	return r;
}

static int hostile_fails;

static void expect_outcome(const char *what, const out *rec, int want)
{
	int got = outcome(rec);

	if (got == want) {
		printf("ok: %s\n", what);
	} else {
		printf("FAIL: %s: outcome %d, want %d\n", what, got, want);
		hostile_fails++;
	}
}

/* One call of c as built (gproc, proc, seq, no arguments), its outcome. */
static int plain(rc__gss_cli *c, uint32_t gproc, uint32_t seq)
{
	out rec = { 0 };
	size_t hl;
	int r = build(c, gproc, 0, seq, NULL, 0, &rec, &hl) ? -1 : outcome(&rec);
	free(rec.p);
	return r;
}

/* STATS (procedure 2 of gss_rc_peer) under c: dropped, contexts, rss_kb (and evicted, when
 * not NULL). 0, or -1. */
static int stats_ev(rc__gss_cli *c, unsigned long long *dropped, unsigned long long *contexts,
		    long *rss, unsigned long long *evicted)
{
	unsigned long long ev;
	rc__gss_buf r;
	uint32_t len = 0;
	char text[128];

	if (gss_call(c, RC__GSS_DATA, 2, NULL, 0, &r))
		return -1;
	in ri = { r.data, r.data + r.len, 0 };
	const unsigned char *t = get_opaque(&ri, &len, sizeof text - 1);
	int ok = !ri.bad && t != NULL;
	if (ok) {
		memcpy(text, t, len);
		text[len] = 0;
		ok = sscanf(text, "dropped=%llu contexts=%llu rss_kb=%ld evicted=%llu", dropped,
			    contexts, rss, &ev) == 4;
	}
	rc__gss_buf_free(&r);
	if (ok && evicted)
		*evicted = ev;
	return ok ? 0 : -1;
}

static int stats(rc__gss_cli *c, unsigned long long *dropped, unsigned long long *contexts,
		 long *rss)
{
	return stats_ev(c, dropped, contexts, rss, NULL);
}

static rc__gss_cli *new_context(const char *name, uint32_t svc)
{
	rc__gss_cli_opts o = { .target = name, .service = svc };
	rc__gss_cli *c;
	rc__gss_err e = { 0 };

	if (rc__gss_cli_create(&c, &o, &e)) {
		fprintf(stderr, "gss_wire_peer: %s\n", e.text);
		return NULL;
	}
	if (establish(c)) {
		rc__gss_cli_destroy(c);
		return NULL;
	}
	return c;
}

/* The hostile calls of gss_hostile.sh against gss_rc_peer's server (remotecall's runtime),
 * whose table holds `bound` contexts at most. */
static int hostile(int port, const char *name, unsigned bound, int idle_ms)
{
	rc__gss_cli *c, *p;
	out rec = { 0 }, a = { 0 };
	size_t hl;
	uint32_t seq;
	unsigned long long d0, d1, n0, n1;
	long rss0, rss1;

	if (connect_c(port) || !(c = new_context(name, RC__GSS_SVC_INTEGRITY)) ||
	    !(p = new_context(name, RC__GSS_SVC_PRIVACY)))
		return 1;
	if (idle_ms > 0) { /* the idle bound: a context unused for idle_ms is gone */
		if (plain(c, RC__GSS_DATA, 1000) != O_ACCEPT) {
			printf("FAIL: a first call\n");
			return 1;
		}
		usleep((useconds_t)idle_ms * 1500);
		build(c, RC__GSS_DATA, 0, 1001, NULL, 0, &rec, &hl);
		expect_outcome("a context idle for 1.5x gss_idle_ms: CREDPROBLEM (evicted)", &rec,
			       O_DENIED + RC__GSS_AUTH_CREDPROBLEM);
		free(rec.p);
		rc__gss_cli_destroy(c);
		rc__gss_cli_destroy(p);
		close(fd_c);
		return hostile_fails ? 1 : 0;
	}
	if (stats(p, &d0, &n0, &rss0)) { /* (p: c's seqs are chosen by hand below) */
		printf("FAIL: STATS\n");
		return 1;
	}
	put_opaque(&a, "hostile", 7);

	/* the same call twice: the second is dropped unanswered (and counted) */
	rc__gss_cli_next_seq(c, &seq);
	build(c, RC__GSS_DATA, 1, seq, a.p, a.n, &rec, &hl);
	expect_outcome("a call", &rec, O_ACCEPT);
	expect_outcome("the same call replayed: dropped", &rec, O_DROPPED);

	/* above the window (accepted, the window moves), then below it: dropped */
	seq += 1000;
	rec.n = 0;
	build(c, RC__GSS_DATA, 1, seq, a.p, a.n, &rec, &hl);
	expect_outcome("a seq 1000 above: served (the window slides)", &rec, O_ACCEPT);
	rec.n = 0;
	build(c, RC__GSS_DATA, 1, seq - 500, a.p, a.n, &rec, &hl);
	expect_outcome("a seq 500 below the newest (under the 128 window): dropped", &rec, O_DROPPED);
	rec.n = 0;
	build(c, RC__GSS_DATA, 1, seq - 5, a.p, a.n, &rec, &hl);
	expect_outcome("a seq 5 below, not seen yet (in the window): served", &rec, O_ACCEPT);

	/* a forged header MIC: CREDPROBLEM, and the window does not move for it */
	rec.n = 0;
	build(c, RC__GSS_DATA, 1, seq + 2000, a.p, a.n, &rec, &hl);
	rec.p[hl + 8 + 10] ^= 0x40;
	expect_outcome("a forged header MIC: CREDPROBLEM", &rec, O_DENIED + RC__GSS_AUTH_CREDPROBLEM);
	rec.n = 0;
	build(c, RC__GSS_DATA, 1, seq + 10, a.p, a.n, &rec, &hl);
	expect_outcome("then seq+10: served (the forged seq+2000 did not slide the window)", &rec,
		       O_ACCEPT);
	seq += 2001;

	/* the integrity body's MIC corrupted, or the body cut short: GARBAGE_ARGS */
	rec.n = 0;
	build(c, RC__GSS_DATA, 1, seq++, a.p, a.n, &rec, &hl);
	size_t body = hl + 8 + ((rc__ld32(rec.p + hl + 4) + 3u) & ~3u);
	size_t mic = body + 4 + ((rc__ld32(rec.p + body) + 3u) & ~3u) + 4;
	rec.p[mic + 8] ^= 0x01;
	expect_outcome("integrity: the body's MIC corrupted: GARBAGE_ARGS", &rec, O_ACCEPT + 4);
	rec.n = 0;
	build(c, RC__GSS_DATA, 1, seq++, a.p, a.n, &rec, &hl);
	rec.n -= 12;
	expect_outcome("integrity: the body truncated: GARBAGE_ARGS", &rec, O_ACCEPT + 4);

	/* privacy: the wrap token corrupted, or truncated: GARBAGE_ARGS */
	uint32_t ps;
	rc__gss_cli_next_seq(p, &ps);
	rec.n = 0;
	build(p, RC__GSS_DATA, 1, ps, a.p, a.n, &rec, &hl);
	body = hl + 8 + ((rc__ld32(rec.p + hl + 4) + 3u) & ~3u);
	rec.p[body + 4 + rc__ld32(rec.p + body) / 2] ^= 0x10;
	expect_outcome("privacy: the wrap token corrupted: GARBAGE_ARGS", &rec, O_ACCEPT + 4);
	rc__gss_cli_next_seq(p, &ps);
	rec.n = 0;
	build(p, RC__GSS_DATA, 1, ps, a.p, a.n, &rec, &hl);
	rec.n -= 8;
	expect_outcome("privacy: the wrap token truncated: GARBAGE_ARGS", &rec, O_ACCEPT + 4);

	/* seq at MAXSEQ: CTXPROBLEM */
	rec.n = 0;
	build(c, RC__GSS_DATA, 0, RC__GSS_MAXSEQ, NULL, 0, &rec, &hl);
	expect_outcome("seq MAXSEQ: CTXPROBLEM", &rec, O_DENIED + RC__GSS_AUTH_CTXPROBLEM);

	/* an unknown handle (the credential's handle changed): CREDPROBLEM */
	rec.n = 0;
	build(c, RC__GSS_DATA, 0, seq++, NULL, 0, &rec, &hl);
	rec.p[24 + 8 + 16 + 4 + 3] ^= 0x5a;
	expect_outcome("an unknown handle: CREDPROBLEM", &rec, O_DENIED + RC__GSS_AUTH_CREDPROBLEM);

	/* DESTROY with a bad MIC: refused, the context lives on */
	rec.n = 0;
	build(c, RC__GSS_DESTROY, 0, seq++, NULL, 0, &rec, &hl);
	rec.p[hl + 8 + 10] ^= 0x40;
	expect_outcome("DESTROY with a forged MIC: CREDPROBLEM", &rec,
		       O_DENIED + RC__GSS_AUTH_CREDPROBLEM);
	rec.n = 0;
	build(c, RC__GSS_DATA, 1, seq++, a.p, a.n, &rec, &hl);
	expect_outcome("the context after it: still served", &rec, O_ACCEPT);

	if (stats(p, &d1, &n1, &rss1) || d1 - d0 != 2) {
		printf("FAIL: gss_dropped grew by %llu, want 2 (the replay, the old seq)\n", d1 - d0);
		hostile_fails++;
	} else {
		printf("ok: gss_dropped counted both drops (%llu -> %llu)\n", d0, d1);
	}

	/* a flood of INITs: the table stays at its bound; then of random handles */
	unsigned long long dq, nq;
	long rss_warm = 0;
	for (int i = 0; i < 600; i++) {
		rc__gss_cli *x = new_context(name, RC__GSS_SVC_INTEGRITY);
		if (!x) {
			printf("FAIL: INIT %d\n", i);
			hostile_fails++;
			break;
		}
		if (i == 99 && stats(x, &dq, &nq, &rss_warm))
			hostile_fails++;
		rc__gss_cli_destroy(x); /* (no DESTROY sent: the server keeps it until evicted) */
	}
	int st = plain(c, RC__GSS_DATA, seq++);
	if (st == O_DENIED + (int)RC__GSS_AUTH_CREDPROBLEM)
		printf("ok: the first context was pushed out by the flood (least recently used)\n");
	else {
		printf("FAIL: the first context after the flood: outcome %d\n", st);
		hostile_fails++;
	}
	rc__gss_cli_destroy(c);
	c = new_context(name, RC__GSS_SVC_INTEGRITY);
	for (int i = 0; c && i < 5000; i++) {
		rec.n = 0;
		build(c, RC__GSS_DATA, 0, (uint32_t)i + 1, NULL, 0, &rec, &hl);
		if (getrandom(rec.p + 24 + 8 + 20, RC__GSS_HANDLE_LEN, 0) != RC__GSS_HANDLE_LEN ||
		    outcome(&rec) != O_DENIED + (int)RC__GSS_AUTH_CREDPROBLEM) {
			printf("FAIL: random handle %d not refused with CREDPROBLEM\n", i);
			hostile_fails++;
			break;
		}
	}
	unsigned long long ev = 0;
	if (!c || stats_ev(c, &d1, &n1, &rss1, &ev)) {
		printf("FAIL: STATS after the floods\n");
		hostile_fails++;
	} else {
		/* (600 contexts made into a table of `bound`: all but `bound` were pushed out) */
		printf("%s: gss_evicted %llu after 600 INITs into a table of %u\n",
		       ev >= 600 - bound ? "ok" : "FAIL", ev, bound);
		if (ev < 600 - bound)
			hostile_fails++;
		printf("%s: 600 INITs and 5000 random handles: contexts %llu (bound %u), RSS %ld kB "
		       "after 100 INITs, %ld kB at the end\n",
		       n1 <= bound && rss1 - rss_warm < 2048 ? "ok" : "FAIL", n1, bound, rss_warm, rss1);
		if (n1 > bound || rss1 - rss_warm >= 2048)
			hostile_fails++;
	}
	free(rec.p);
	free(a.p);
	if (c)
		rc__gss_cli_destroy(c);
	rc__gss_cli_destroy(p);
	close(fd_c);
	return hostile_fails ? 1 : 0;
}

static int client(int port, const char *name, const char *svcname, int echo, int calls,
		  const char *expect, int destroy)
{
	uint32_t svc = !strcmp(svcname, "none") ? RC__GSS_SVC_NONE :
		       !strcmp(svcname, "privacy") ? RC__GSS_SVC_PRIVACY : RC__GSS_SVC_INTEGRITY;
	rc__gss_cli_opts o = { .target = name, .service = svc };
	rc__gss_cli *c;
	rc__gss_err e = { 0 };
	int bad = 0, one = 1;

	if (rc__gss_cli_create(&c, &o, &e)) {
		fprintf(stderr, "gss_wire_peer: %s\n", e.text);
		return 1;
	}
	(void)one;
	if (connect_c(port) || establish(c)) {
		rc__gss_cli_destroy(c);
		return 1;
	}
	printf("established, window %u\n", rc__gss_cli_window(c));
	/* ECHO */
	out a = { 0 };
	unsigned char *d = malloc((size_t)echo + 1);
	for (int i = 0; i < echo; i++)
		d[i] = (unsigned char)(i * 31 + 7);
	put_opaque(&a, d, (size_t)echo);
	rc__gss_buf r;
	if (gss_call(c, RC__GSS_DATA, 1, a.p, a.n, &r)) {
		bad++;
	} else {
		in ri = { r.data, r.data + r.len, 0 };
		uint32_t dl = 0, pl = 0;
		const unsigned char *rd = get_opaque(&ri, &dl, 8u << 20);
		const unsigned char *who = get_opaque(&ri, &pl, 1024);
		if (ri.bad || dl != (uint32_t)echo || memcmp(rd, d, dl) != 0) {
			fprintf(stderr, "gss_wire_peer: ECHO returned other bytes\n");
			bad++;
		} else {
			printf("principal %.*s\necho %d ok\n", (int)pl, who, echo);
			if (expect && (strlen(expect) != pl || memcmp(expect, who, pl) != 0)) {
				fprintf(stderr, "gss_wire_peer: principal %.*s, want %s\n", (int)pl, who,
					expect);
				bad++;
			}
		}
	}
	rc__gss_buf_free(&r);
	free(a.p);
	free(d);
	/* NULL calls, timed */
	double t0 = now_us();
	for (int i = 0; i < calls && !bad; i++) {
		if (gss_call(c, RC__GSS_DATA, 0, NULL, 0, &r))
			bad++;
		rc__gss_buf_free(&r);
	}
	if (calls > 0)
		printf("null %s %d calls us_per_call %.2f\n", svcname, calls, (now_us() - t0) / calls);
	if (destroy && !bad) {
		if (gss_call(c, RC__GSS_DESTROY, 0, NULL, 0, &r)) {
			bad++;
		} else {
			int st = gss_call(c, RC__GSS_DATA, 0, NULL, 0, &r);
			printf("after DESTROY: %s\n", st == (int)RC__GSS_AUTH_CREDPROBLEM ?
			       "CREDPROBLEM" : st == 0 ? "still served" : "other error");
			if (st != (int)RC__GSS_AUTH_CREDPROBLEM)
				bad++;
		}
	}
	close(fd_c);
	rc__gss_cli_destroy(c);
	return bad ? 1 : 0;
}

/* ---- a spoofed AUTH_SYS duplicate over UDP (issue 45) --------------------------------------- */

/* Send rec on the connected UDP socket u and wait up to 2 s for the datagram answering its
 * xid into buf (cap bytes). Its length, or -1. */
static ssize_t udp_call(int u, const out *rec, unsigned char *buf, size_t cap)
{
	struct pollfd pf = { u, POLLIN, 0 };

	if (send(u, rec->p, rec->n, 0) != (ssize_t)rec->n)
		return -1;
	while (poll(&pf, 1, 2000) == 1) {
		ssize_t n = recv(u, buf, cap, 0);
		if (n >= 12 && rc__ld32(buf) == rc__ld32(rec->p))
			return n;
	}
	return -1;
}

/* A call from one UDP address and port (the victim's) with an AUTH_SYS credential and the
 * xid and ECHO arguments the victim's RPCSEC_GSS call will carry -- what an attacker who
 * spoofs the victim's address and predicts its xid sends -- then the victim's call itself:
 * it must get its own answer (the reply verifier checks out, the data and the principal are
 * its), not the spoof's reply from the duplicate request cache, nor be dropped as a
 * duplicate. The server (gss_rc_peer --require off) takes both flavors. 0 when it held. */
static int spoof(int port, int udp_port, const char *name)
{
	static const char data[] = "the victim's arguments";
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)udp_port) };
	unsigned char buf[4096];
	rc__gss_cli *c;
	out a = { 0 }, s = { 0 }, cb = { 0 }, rec = { 0 };
	uint32_t xid, seq;
	size_t hl;
	int u, bad = 1;

	if (connect_c(port) || !(c = new_context(name, RC__GSS_SVC_INTEGRITY)))
		return 1;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	u = socket(AF_INET, SOCK_DGRAM, 0);
	if (u < 0 || connect(u, (struct sockaddr *)&sin, sizeof sin)) {
		perror("gss_wire_peer: udp");
		goto out;
	}
	put_opaque(&a, data, sizeof data - 1); /* ECHO's argument: opaque<> */
	xid = xid_c + 1000;
	/* the spoof: AUTH_SYS {stamp, machinename, uid 0, gid 0, no gids}, AUTH_NONE verifier */
	put32(&cb, 1);
	put_opaque(&cb, "intruder", 8);
	put32(&cb, 0);
	put32(&cb, 0);
	put32(&cb, 0);
	put32(&s, xid);
	put32(&s, 0);
	put32(&s, 2);
	put32(&s, PROG);
	put32(&s, VERS);
	put32(&s, 1);
	put32(&s, 1); /* AUTH_SYS */
	put_opaque(&s, cb.p, cb.n);
	put32(&s, 0);
	put32(&s, 0);
	put(&s, a.p, a.n);
	ssize_t n = udp_call(u, &s, buf, sizeof buf);
	if (n < 24 || rc__ld32(buf + 8) != 0) {
		printf("FAIL: the AUTH_SYS call was not answered as accepted (%zd bytes)\n", n);
		goto out;
	}
	printf("ok: the spoofed AUTH_SYS call (xid %u) ran\n", xid);
	/* the victim's call: same xid, same address and port, same arguments */
	xid_c = xid - 1;
	if (rc__gss_cli_next_seq(c, &seq) || build(c, RC__GSS_DATA, 1, seq, a.p, a.n, &rec, &hl))
		goto out;
	n = udp_call(u, &rec, buf, sizeof buf);
	if (n < 0) {
		printf("FAIL: the RPCSEC_GSS call with the spoof's xid got no reply (dropped as a "
		       "duplicate)\n");
		goto out;
	}
	in i = { buf, buf + n, 0 };
	uint32_t vl = 0;
	(void)get32(&i);
	(void)get32(&i);
	uint32_t rs = get32(&i), vfl = get32(&i);
	const unsigned char *v = get_opaque(&i, &vl, RC__MAX_AUTH_BYTES);
	uint32_t st = get32(&i);
	rc__gss_seqs sent;
	rc__gss_err e = { 0 };
	rc__gss_buf res = { 0 };
	rc__gss_seqs_init(&sent);
	rc__gss_seqs_add(&sent, seq);
	if (i.bad || rs != 0 || st != 0) {
		printf("FAIL: the RPCSEC_GSS call: reply_stat %u accept_stat %u\n", rs, st);
		goto out;
	}
	if (rc__gss_cli_validate(c, &sent, vfl, v, vl, &e)) {
		printf("FAIL: the RPCSEC_GSS call got another call's reply (verifier flavor %u: "
		       "%s)\n", vfl, e.text);
		goto out;
	}
	if (rc__gss_cli_unwrap(c, &sent, i.p, (size_t)(i.end - i.p), &res, &e)) {
		printf("FAIL: the RPCSEC_GSS call's results: %s\n", e.text);
		goto out;
	}
	in ri = { res.data, res.data + res.len, 0 };
	uint32_t dl = 0, pl = 0;
	const unsigned char *d = get_opaque(&ri, &dl, sizeof buf);
	const unsigned char *pr = get_opaque(&ri, &pl, sizeof buf);
	bad = ri.bad || dl != sizeof data - 1 || memcmp(d, data, dl) != 0 || pl < 7 ||
	      memcmp(pr, "rcuser@", 7) != 0;
	printf("%s: the RPCSEC_GSS call with the spoof's xid got its own reply (principal "
	       "%.*s)\n", bad ? "FAIL" : "ok", ri.bad ? 0 : (int)pl, ri.bad ? "" : (const char *)pr);
	rc__gss_buf_free(&res);
out:
	if (u >= 0)
		close(u);
	free(a.p);
	free(s.p);
	free(cb.p);
	free(rec.p);
	close(fd_c);
	rc__gss_cli_destroy(c);
	return bad;
}

int main(int argc, char **argv)
{
	const char *name = "nfs@localhost", *svc = "integrity", *expect = NULL;
	int port = 0, udp_port = 0, echo = 1000, calls = 100, destroy = 0, bound = 1024, idle_ms = 0;
	if (argc < 2)
		goto usage;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--name") && i + 1 < argc)
			name = argv[++i];
		else if (!strcmp(argv[i], "--port") && i + 1 < argc)
			port = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--udp-port") && i + 1 < argc)
			udp_port = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--service") && i + 1 < argc)
			svc = argv[++i];
		else if (!strcmp(argv[i], "--echo") && i + 1 < argc)
			echo = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
			calls = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--expect-principal") && i + 1 < argc)
			expect = argv[++i];
		else if (!strcmp(argv[i], "--destroy"))
			destroy = 1;
		else if (!strcmp(argv[i], "--bound") && i + 1 < argc)
			bound = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--idle-ms") && i + 1 < argc)
			idle_ms = atoi(argv[++i]);
		else
			goto usage;
	}
	if (!strcmp(argv[1], "server"))
		return server(name);
	if (!strcmp(argv[1], "client") && port > 0)
		return client(port, name, svc, echo, calls, expect, destroy);
	if (!strcmp(argv[1], "hostile") && port > 0)
		return hostile(port, name, (unsigned)bound, idle_ms);
	if (!strcmp(argv[1], "spoof") && port > 0 && udp_port > 0)
		return spoof(port, udp_port, name);
usage:
	fprintf(stderr, "usage: see the comment at the top of gss_wire_peer.c\n");
	return 2;
}

/*
 * remotecall's RPCSEC_GSS peers for the interop tests (gss_interop.sh): the interface of
 * tirpc_gss_common.h (GSS_ECHO_PROG: NULL, ECHO(opaque) -> {opaque data, string principal}),
 * served and called through the public API -- rc_server_set_gss and rc_svc_req_gss_principal,
 * rc_client_set_auth_gss.
 *
 *   gss_rc_peer server [--name nfs@localhost] [--require off|none|integrity|privacy] [--listen URI]...
 *                      [--gss-contexts N] [--gss-idle-ms MS]
 *                      [--tls-cert PEM --tls-key KEY [--tls-required yes]]
 *       prints "listening URI" per listener, serves until killed; ECHO answers with the data
 *       and the caller's principal, STATS (procedure 2) with "dropped=N contexts=N rss_kb=N
 *       evicted=N" (rc_server_stats.gss_dropped, gss_contexts; VmRSS; gss_evicted); --gss-contexts and --gss-idle-ms
 *       are rc_server_limits' bounds of the context table, set after rc_server_set_gss;
 *       --tls-cert/--tls-key offer RPC-over-TLS (rc_server_set_tls), --tls-required yes
 *       refuses the program's plaintext calls (rc_server_set_tls_required); a call that is not RPCSEC_GSS, or under a service less
 *       than --require's (default none), gets AUTH_TOOWEAK (the NULL procedure aside:
 *       rc_server_set_gss_required); --require off takes every flavor (ECHO then answers
 *       another flavor's call with an empty principal)
 *   gss_rc_peer client --uri URI [--name nfs@localhost] [--service none|integrity|privacy]
 *                      [--echo BYTES] [--calls N] [--expect-principal P] [--pause FILE]
 *       establishes a context, echoes BYTES (checked, and the principal), then times N NULL
 *       calls: prints "echo BYTES ok" and "null N calls X us/call"; exit 0 when all went well.
 *       --pause FILE: then creates FILE.paused, waits (30 s at most) for FILE.resumed, and
 *       echoes again on the same client ("echo BYTES ok again") -- the server may have been
 *       restarted meanwhile, so the client must make its context again by itself
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <remotecall/remotecall.h>
#include <remotecall/tls.h>

#define GSS_ECHO_PROG 0x20000528u
#define GSS_ECHO_MAX (8u << 20)

typedef struct blob {
	uint32_t len;
	char *val;
} blob;

typedef struct echo_res {
	blob data;
	char *principal;
} echo_res;

static bool xdr_blob(rc_xdr *x, blob *b)
{
	return rc_xdr_bytes(x, &b->val, &b->len, GSS_ECHO_MAX);
}

static bool xdr_echo_res(rc_xdr *x, echo_res *r)
{
	return xdr_blob(x, &r->data) && rc_xdr_string(x, &r->principal, 1024);
}

static bool xdr_nothing(rc_xdr *x, void *p)
{
	(void)x, (void)p;
	return true;
}

/* ---- server ----------------------------------------------------------------------------- */

static bool srv_null(void *a, void *r, rc_svc_req *q)
{
	(void)a, (void)r, (void)q;
	return true;
}

static bool srv_echo(void *a, void *r, rc_svc_req *q)
{
	const blob *in = a;
	echo_res *out = r;
	const char *who = rc_svc_req_gss_principal(q);

	if (who == NULL)
		who = ""; /* another flavor (--require off) */
	out->data.len = in->len;
	out->data.val = malloc(in->len ? in->len : 1);
	out->principal = strdup(who);
	if (out->data.val == NULL || out->principal == NULL)
		return false;
	memcpy(out->data.val, in->val, in->len);
	return true;
}

/* STATS (procedure 2, this peer's own): "dropped=N contexts=N rss_kb=N evicted=N" -- the
 * server's rc_server_stats.gss_dropped and gss_contexts, its resident memory, and
 * rc_server_stats.gss_evicted. */
static rc_server *the_srv;

static long rss_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "VmRSS:", 6) == 0)
			kb = atol(line + 6);
	if (f != NULL)
		fclose(f);
	return kb;
}

static bool srv_stats(void *a, void *r, rc_svc_req *q)
{
	char **out = r, buf[128];
	rc_server_stats st;

	(void)a, (void)q;
	if (rc_server_get_stats(the_srv, &st) != RC_OK)
		return false;
	snprintf(buf, sizeof(buf), "dropped=%llu contexts=%llu rss_kb=%ld evicted=%llu",
	         (unsigned long long)st.gss_dropped, (unsigned long long)st.gss_contexts, rss_kb(),
	         (unsigned long long)st.gss_evicted);
	return (*out = strdup(buf)) != NULL;
}

static bool xdr_text(rc_xdr *x, char **s)
{
	return rc_xdr_string(x, s, 1024);
}

static const rc_procinfo p_null = {GSS_ECHO_PROG, 1, 0, "NULL", (rc_xdrproc)xdr_nothing, 0,
                                   (rc_xdrproc)xdr_nothing, 0};
static const rc_procinfo p_echo = {GSS_ECHO_PROG, 1, 1, "ECHO", (rc_xdrproc)xdr_blob,
                                   sizeof(blob), (rc_xdrproc)xdr_echo_res, sizeof(echo_res)};
static const rc_procinfo p_stats = {GSS_ECHO_PROG, 1, 2, "STATS", (rc_xdrproc)xdr_nothing, 0,
                                    (rc_xdrproc)xdr_text, sizeof(char *)};
static const rc_svc_proc procs[] = {{&p_null, srv_null}, {&p_echo, srv_echo},
                                    {&p_stats, srv_stats}};
static const rc_svc_prog prog = {GSS_ECHO_PROG, 1, 3, procs};

static int server(int argc, char **argv)
{
	const char *name = "nfs@localhost";
	rc_server *srv;
	char why[400], uri[256];

	rc_gss_service min = RC_GSS_NONE;
	rc_server_limits lim = {0};
	rc_tls_server_opts tls = {0};
	bool tls_required = false;

	if (rc_server_create(&srv) != RC_OK || rc_server_register(srv, &prog, NULL) != RC_OK)
		return 1;
	the_srv = srv;
	for (int i = 2; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--name") == 0)
			name = argv[i + 1];
		else if (strcmp(argv[i], "--gss-contexts") == 0)
			lim.gss_contexts = (uint32_t)atol(argv[i + 1]);
		else if (strcmp(argv[i], "--gss-idle-ms") == 0)
			lim.gss_idle_ms = (uint32_t)atol(argv[i + 1]);
		else if (strcmp(argv[i], "--tls-cert") == 0)
			tls.cert_file = argv[i + 1];
		else if (strcmp(argv[i], "--tls-key") == 0)
			tls.key_file = argv[i + 1];
		else if (strcmp(argv[i], "--tls-required") == 0)
			tls_required = strcmp(argv[i + 1], "yes") == 0;
		else if (strcmp(argv[i], "--require") == 0)
			min = strcmp(argv[i + 1], "privacy") == 0     ? RC_GSS_PRIVACY
			      : strcmp(argv[i + 1], "integrity") == 0 ? RC_GSS_INTEGRITY
			      : strcmp(argv[i + 1], "off") == 0       ? RC_GSS_NOT_REQUIRED
			                                              : RC_GSS_NONE;
	}
	if (rc_server_set_gss_required(srv, GSS_ECHO_PROG, 1, min) != RC_OK)
		return 1;
	if (rc_server_set_gss(srv, name, NULL, why, sizeof(why)) != RC_OK) {
		fprintf(stderr, "gss_rc_peer: rc_server_set_gss: %s\n", why);
		return 1;
	}
	if (rc_server_set_limits(srv, &lim) != RC_OK) /* (after: the table takes them then) */
		return 1;
	if (tls.cert_file != NULL && rc_server_set_tls(srv, &tls, why, sizeof(why)) != RC_OK) {
		fprintf(stderr, "gss_rc_peer: rc_server_set_tls: %s\n", why);
		return 1;
	}
	if (tls_required && rc_server_set_tls_required(srv, GSS_ECHO_PROG, 1, true) != RC_OK)
		return 1;
	for (int i = 2; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--listen") != 0)
			continue;
		if (rc_server_listen(srv, argv[i + 1], uri, sizeof(uri)) != RC_OK) {
			fprintf(stderr, "gss_rc_peer: cannot listen on %s\n", argv[i + 1]);
			return 1;
		}
		printf("listening %s\n", uri);
	}
	fflush(stdout);
	rc_server_run(srv);
	rc_server_destroy(srv);
	return 0;
}

/* ---- client ----------------------------------------------------------------------------- */

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* ECHO of bytes bytes on c, the data and (if expect) the principal checked: 0, or 1 printed. */
static int echo(rc_client *c, long bytes, const char *expect, const char *round)
{
	blob in = {(uint32_t)bytes, malloc((size_t)bytes + 1)};
	echo_res out = {{0, NULL}, NULL};
	char text[512];
	rc_error e;
	rc_status st;
	int fails = 0;

	for (long i = 0; i < bytes; i++)
		in.val[i] = (char)(i * 31 + 7);
	st = rc_call(c, 1, (rc_xdrproc)xdr_blob, &in, (rc_xdrproc)xdr_echo_res, &out);
	if (st != RC_OK) {
		rc_client_geterr(c, &e);
		fprintf(stderr, "gss_rc_peer: ECHO%s: %s\n", round,
		        rc_error_format(&e, text, sizeof(text)));
		fails++;
	} else if (out.data.len != in.len || memcmp(out.data.val, in.val, in.len) != 0) {
		fprintf(stderr, "gss_rc_peer: ECHO%s: the data came back changed\n", round);
		fails++;
	} else if (expect != NULL && (out.principal == NULL || strcmp(out.principal, expect))) {
		fprintf(stderr, "gss_rc_peer: ECHO%s: principal %s, want %s\n", round,
		        out.principal ? out.principal : "(none)", expect);
		fails++;
	} else {
		printf("echo %ld ok%s (principal %s)\n", bytes, round, out.principal);
	}
	rc_xdr_free((rc_xdrproc)xdr_echo_res, &out);
	free(in.val);
	return fails;
}

static int client(int argc, char **argv)
{
	const char *uri = NULL, *name = "nfs@localhost", *expect = NULL, *svc = "integrity";
	const char *pause = NULL;
	long bytes = 1000, calls = 100;
	rc_gss_service service = RC_GSS_INTEGRITY;
	rc_client *c;
	rc_error e;
	char text[512];
	rc_status st;
	int fails = 0;

	for (int i = 2; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--uri") == 0)
			uri = argv[i + 1];
		else if (strcmp(argv[i], "--name") == 0)
			name = argv[i + 1];
		else if (strcmp(argv[i], "--service") == 0)
			svc = argv[i + 1];
		else if (strcmp(argv[i], "--echo") == 0)
			bytes = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--calls") == 0)
			calls = atol(argv[i + 1]);
		else if (strcmp(argv[i], "--expect-principal") == 0)
			expect = argv[i + 1];
		else if (strcmp(argv[i], "--pause") == 0)
			pause = argv[i + 1];
	}
	service = strcmp(svc, "none") == 0 ? RC_GSS_NONE
	          : strcmp(svc, "privacy") == 0 ? RC_GSS_PRIVACY : RC_GSS_INTEGRITY;
	if (uri == NULL || bytes < 0 || bytes > (long)GSS_ECHO_MAX) {
		fprintf(stderr, "usage: gss_rc_peer client --uri URI [...]\n");
		return 2;
	}
	if (rc_client_create(&c, uri, GSS_ECHO_PROG, 1) != RC_OK) {
		fprintf(stderr, "gss_rc_peer: cannot make a client for %s\n", uri);
		return 1;
	}
	rc_client_set_timeout(c, 10000);
	if ((st = rc_client_set_auth_gss(c, name, service, &e)) != RC_OK) {
		fprintf(stderr, "gss_rc_peer: rc_client_set_auth_gss: %s\n",
		        rc_error_format(&e, text, sizeof(text)));
		rc_client_destroy(c);
		return 1;
	}
	fails += echo(c, bytes, expect, "");
	{
		double t0 = now_us();
		for (long i = 0; i < calls; i++) {
			if ((st = rc_call(c, 0, NULL, NULL, NULL, NULL)) != RC_OK) {
				rc_client_geterr(c, &e);
				fprintf(stderr, "gss_rc_peer: NULL: %s\n",
				        rc_error_format(&e, text, sizeof(text)));
				fails++;
				break;
			}
		}
		if (calls > 0)
			printf("null %ld calls %.1f us/call\n", calls, (now_us() - t0) / (double)calls);
	}
	if (pause != NULL && fails == 0) {
		char f[512];
		FILE *fp;
		snprintf(f, sizeof(f), "%s.paused", pause);
		if ((fp = fopen(f, "w")) != NULL)
			fclose(fp);
		snprintf(f, sizeof(f), "%s.resumed", pause);
		for (int i = 0; i < 300 && (fp = fopen(f, "r")) == NULL; i++) {
			struct timespec ts = {0, 100000000};
			nanosleep(&ts, NULL);
		}
		if (fp != NULL)
			fclose(fp);
		fails += echo(c, bytes, expect, " again");
	}
	rc_client_destroy(c);
	fflush(stdout);
	return fails == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "server") == 0)
		return server(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "client") == 0)
		return client(argc, argv);
	fprintf(stderr, "usage: gss_rc_peer server|client ... (see the top of gss_rc_peer.c)\n");
	return 2;
}

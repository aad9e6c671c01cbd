/*
 * idlc -- NAME_server.c (idlc -a, -Ss): a sample server to edit, rpcgen -Ss's counterpart for
 * remotecall's own API. One body per procedure, with the signature NAME.h declares,
 *
 *   bool proc_V_svc(const ARG *arg, RES *res, rc_svc_req *req)
 *
 * answering a zero-filled result (the server hands it in zeroed; strings in it are made empty
 * and malloc'd, since XDR cannot send a NULL one and the server frees the result after the
 * reply); and main(), which creates an rc_server, registers every program version, listens
 * on UDP and TCP (any port, or the URIs given), prints where, registers with rpcbind (a
 * warning when it cannot) and serves until SIGINT or SIGTERM. Made from the header pass.
 */

#include "idlc.h"

/* gen_proc -- the body of one procedure to fill in. */
static void
gen_proc(idlc_gen *g, const idlc_proc *p)
{
	idlc_buf *b = g->out;
	bool has_res = p->result->kind != IDLC_T_VOID;

	idlc_buf_printf(b, "\n/* %s: fill in. */\n", p->name);
	idlc_emit_svc_sig(g, p);
	idlc_buf_puts(b, "\n{\n");
	if (p->nparams == 1)
		idlc_buf_puts(b, "\t(void)arg;\n");
	for (int i = 1; p->nparams > 1 && i <= p->nparams; i++)
		idlc_buf_printf(b, "\t(void)arg%d;\n", i);
	idlc_buf_puts(b, "\t(void)req;\n");
	if (has_res) {
		idlc_buf_puts(b, "\t/* fill in: compute *res; it arrives zero-filled, and what it holds"
		              " allocated\n\t * is freed once the reply is sent */\n");
		size_t at = b->len;
		idlc_emit_fill_strings(g, p->result, "*res", "res->", 1, true);
		if (b->len == at)
			idlc_buf_puts(b, "\t(void)res;\n");
	} else {
		idlc_buf_puts(b, "\t/* fill in */\n");
	}
	idlc_buf_puts(b, "\treturn true;\n}\n");
}

/* gen_procs -- the bodies of one version's procedures. */
static void
gen_procs(idlc_gen *g, const idlc_version *v)
{
	idlc_buf_printf(g->out, "\n/* ---- program %s, version %s ---- */\n", v->prog->name,
	                v->name);
	for (const idlc_proc *p = v->procs; p != NULL; p = p->next)
		gen_proc(g, p);
}

/* gen_table_entry -- one version in main's table of programs. */
static void
gen_table_entry(idlc_gen *g, const idlc_version *v)
{
	idlc_buf_printf(g->out, "\t\t&%s_program,\n", idlc_prog_cname(g, v));
}

/* idlc_gen_sample_svc -- NAME_server.c (see the top of this file). */
void
idlc_gen_sample_svc(idlc_gen *g)
{
	idlc_buf *b = g->out;

	idlc_emit_sample_head(g,
	                      "@N@_server.c -- a sample server of @X@, written by idlc -a (or -Ss) "
	                      "for you to edit.\n\n"
	                      "usage: @N@_server [URI...]\n\n"
	                      "It serves every program version of @X@; each procedure below answers a "
	                      "zero-filled result until you fill it in. It listens on the URIs given, "
	                      "by default udp://0.0.0.0:0 and tcp://0.0.0.0:0 (port 0: any free port), "
	                      "and prints a line \"listening URI\" for each, with the port it got: a "
	                      "client can be given that URI (@N@_client udp://HOST:PORT). It also "
	                      "registers with the local rpcbind, so that clients given only HOST find "
	                      "it; without rpcbind it prints a warning and serves all the same. SIGINT "
	                      "or SIGTERM stop it (exit status 0); 1 when it cannot start.",
	                      "#include <signal.h>\n#include <stdio.h>\n#include <stdlib.h>\n");
	int n = idlc_for_each_version(g, gen_procs);

	idlc_buf_puts(b,
	              "\nstatic rc_server *srv;\n"
	              "\n/* on_signal -- SIGINT, SIGTERM: rc_server_run returns soon. */\n"
	              "static void\non_signal(int sig)\n{\n"
	              "\t(void)sig;\n"
	              "\trc_server_stop(srv); /* async-signal-safe */\n"
	              "}\n"
	              "\nint\nmain(int argc, char **argv)\n{\n"
	              "\tstatic const char *const any[] = { \"udp://0.0.0.0:0\", \"tcp://0.0.0.0:0\" };\n");
	if (n > 0) {
		idlc_buf_puts(b, "\tstatic const rc_svc_prog *const programs[] = {\n");
		idlc_for_each_version(g, gen_table_entry);
		idlc_buf_puts(b, "\t};\n");
	}
	idlc_buf_puts(b,
	              "\tconst char *const *uris = argc > 1 ? (const char *const *)argv + 1 : any;\n"
	              "\tint nuris = argc > 1 ? argc - 1 : 2;\n"
	              "\tchar bound[256], why[256];\n"
	              "\trc_error err;\n\n"
	              "\trc_status st = rc_server_create(&srv);\n"
	              "\tif (st != RC_OK) {\n"
	              "\t\tfprintf(stderr, \"%s: %s\\n\", argv[0], rc_strerror(st));\n"
	              "\t\treturn 1;\n"
	              "\t}\n");
	if (n > 0)
		idlc_buf_puts(b,
		              "\tfor (size_t i = 0; i < sizeof programs / sizeof programs[0] && "
		              "st == RC_OK; i++)\n"
		              "\t\tst = rc_server_register(srv, programs[i], NULL);\n");
	else
		idlc_expand(g, b, "\t/* @X@ defines no program: nothing to register */\n");
	idlc_buf_puts(b,
	              "\tfor (int i = 0; i < nuris && st == RC_OK; i++) {\n"
	              "\t\tst = rc_server_listen(srv, uris[i], bound, sizeof bound);\n"
	              "\t\tif (st == RC_OK) {\n"
	              "\t\t\tprintf(\"listening %s\\n\", bound);\n"
	              "\t\t} else { /* why, in words: \"address already in use\", ... */\n"
	              "\t\t\trc_server_geterr(srv, &err);\n"
	              "\t\t\tfprintf(stderr, \"%s: %s: %s\\n\", argv[0], uris[i],\n"
	              "\t\t\t        rc_error_format(&err, why, sizeof why));\n"
	              "\t\t}\n"
	              "\t}\n"
	              "\tif (st != RC_OK) {\n"
	              "\t\trc_server_destroy(srv);\n"
	              "\t\treturn 1;\n"
	              "\t}\n"
	              "\tst = rc_server_rpcbind(srv, true);\n"
	              "\tif (st != RC_OK)\n"
	              "\t\tfprintf(stderr, \"%s: warning: not registered with rpcbind: %s; clients \"\n"
	              "\t\t        \"must be given a URI with the port\\n\", argv[0], rc_strerror(st));\n"
	              "\tfflush(stdout); /* whoever started the server may read the ports */\n\n"
	              "\tsignal(SIGINT, on_signal);\n"
	              "\tsignal(SIGTERM, on_signal);\n"
	              "\tst = rc_server_run(srv);\n"
	              "\tsignal(SIGINT, SIG_IGN); /* no rc_server_stop on a destroyed server */\n"
	              "\tsignal(SIGTERM, SIG_IGN);\n"
	              "\trc_server_destroy(srv); /* and off rpcbind */\n"
	              "\tif (st != RC_OK) {\n"
	              "\t\tfprintf(stderr, \"%s: %s\\n\", argv[0], rc_strerror(st));\n"
	              "\t\treturn 1;\n"
	              "\t}\n"
	              "\treturn 0;\n}\n");
}

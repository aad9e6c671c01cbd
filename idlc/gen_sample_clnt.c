/*
 * idlc -- NAME_client.c (idlc -a, -Sc): a sample client to edit, rpcgen -Sc's counterpart for
 * remotecall's own API. Per program version a function
 *
 *   static int prog_V(const char *uri)
 *
 * that creates a client for the version at uri (rc_client_create), calls each of its
 * procedures once through the blocking stub with zero-filled arguments (strings empty: XDR
 * cannot send a NULL one), prints the call's status and a scalar or string result, frees the
 * result as NAME.h says, and returns how many calls failed; and main(), which takes HOST or a
 * URI and calls every version's function. Made from the header pass: it includes NAME.h.
 */

#include "idlc.h"

/* arg_ref -- how the sample passes its variable `name` of type t to a stub: "&name", or with
 * a cast for an array typedef (C before C23 will not add const to a pointer to an array). */
static const char *
arg_ref(idlc_gen *g, const idlc_type *t, const char *name)
{
	const idlc_def *d;
	idlc_buf b = { 0 };
	idlc_resolve_alias(t, &d);
	if (d != NULL && d->kind == IDLC_DEF_TYPEDEF && d->decl->kind == IDLC_D_FIXED)
		idlc_buf_printf(&b, "(%s)", idlc_const_ptr_param(g, t, ""));
	idlc_buf_printf(&b, "&%s", name);
	const char *s = idlc_arena_strdup(&g->unit->arena, b.data);
	idlc_buf_free(&b);
	return s;
}

/* print_result -- a printf of res at indent when its type prints as a number or a string. */
static void
print_result(idlc_gen *g, const idlc_type *t, int indent)
{
	const idlc_def *d;
	const idlc_type *r = idlc_resolve_alias(t, &d);
	const char *fmt = NULL, *val = NULL;

	if (idlc_type_is_string(t)) {
		fmt = "\\\"%s\\\"";
		val = "res";
	} else if (d != NULL && d->kind == IDLC_DEF_ENUM) {
		fmt = "%lld";
		val = "(long long)res";
	} else {
		switch (r->kind) {
		case IDLC_T_INT: case IDLC_T_HYPER: case IDLC_T_SHORT: case IDLC_T_CHAR:
			fmt = "%lld";
			val = "(long long)res";
			break;
		case IDLC_T_UINT: case IDLC_T_UHYPER: case IDLC_T_USHORT: case IDLC_T_UCHAR:
			fmt = "%llu";
			val = "(unsigned long long)res";
			break;
		case IDLC_T_FLOAT: case IDLC_T_DOUBLE:
			fmt = "%g";
			val = "(double)res";
			break;
		case IDLC_T_BOOL:
			fmt = "%s";
			val = "res ? \"true\" : \"false\"";
			break;
		default:
			return;
		}
	}
	idlc_indent(g->out, indent);
	idlc_buf_printf(g->out, "if (st == RC_OK)\n");
	idlc_indent(g->out, indent + 1);
	idlc_buf_printf(g->out, "printf(\"\\tresult %s\\n\", %s);\n", fmt, val);
}

/* arg_name -- the sample's variable for argument i (1-based) of p: "arg", or "arg2" when p
 * takes several (the stub's parameter names). */
static const char *
arg_name(idlc_gen *g, const idlc_proc *p, int i)
{
	char n[32];
	if (p->nparams == 1)
		return "arg";
	snprintf(n, sizeof n, "arg%d", i);
	return idlc_arena_strdup(&g->unit->arena, n);
}

/* gen_call -- one procedure's call, in a block of its own. */
static void
gen_call(idlc_gen *g, const idlc_proc *p)
{
	idlc_buf *b = g->out;
	const char *name = idlc_proc_cname(g, p);
	const idlc_param *args = p->nparams > 0 ? p->params : NULL;
	bool has_res = p->result->kind != IDLC_T_VOID;
	int i = 1;

	idlc_buf_printf(b, "\n\t/* %s */\n\t{\n", p->name);
	for (const idlc_param *a = args; a != NULL; a = a->next, i++) {
		idlc_buf_puts(b, "\t\t");
		idlc_decl_text(b, idlc_param_ctype(g, a->type), arg_name(g, p, i));
		idlc_buf_puts(b, ";\n");
	}
	if (has_res) {
		idlc_buf_puts(b, "\t\t");
		idlc_decl_text(b, idlc_param_ctype(g, p->result), "res;\n");
	}
	if (args != NULL || has_res)
		idlc_buf_putc(b, '\n');
	i = 1;
	for (const idlc_param *a = args; a != NULL; a = a->next, i++) {
		const char *v = arg_name(g, p, i);
		idlc_buf m = { 0 };
		idlc_buf_printf(b, "\t\tmemset(&%s, 0, sizeof(%s));\n", v, v);
		idlc_buf_printf(&m, "%s.", v);
		idlc_emit_fill_strings(g, a->type, v, m.data, 2, false);
		idlc_buf_free(&m);
	}
	if (has_res)
		idlc_buf_puts(b, "\t\tmemset(&res, 0, sizeof(res));\n");
	idlc_buf_printf(b, "\t\tst = %s(clnt", name);
	i = 1;
	for (const idlc_param *a = args; a != NULL; a = a->next, i++)
		idlc_buf_printf(b, ", %s", arg_ref(g, a->type, arg_name(g, p, i)));
	idlc_buf_printf(b, "%s);\n", has_res ? ", &res" : "");
	idlc_buf_puts(b, "\t\trc_client_geterr(clnt, &err); /* the failure's cause, in words */\n");
	idlc_buf_printf(b, "\t\tprintf(\"%s: %%s\\n\", rc_error_format(&err, why, sizeof why));\n",
	                name);
	idlc_buf_puts(b, "\t\tfailed += st != RC_OK;\n");
	if (has_res)
		print_result(g, p->result, 2);
	if (has_res && idlc_type_owns_memory(p->result))
		idlc_buf_printf(b, "\t\trc_xdr_free(%s_info.xres, &res); /* after a failure too */\n",
		                name);
	idlc_buf_puts(b, "\t}\n");
}

/* gen_version -- static int prog_V(const char *uri): every procedure of v once. */
static void
gen_version(idlc_gen *g, const idlc_version *v)
{
	idlc_buf *b = g->out;
	const char *pname = idlc_prog_cname(g, v);

	idlc_buf t = { 0 };
	idlc_buf_printf(&t, "%s -- every procedure of program %s, version %s once, at uri. Returns "
	                "the number of calls that failed.", pname, v->prog->name, v->name);
	idlc_buf_putc(b, '\n');
	idlc_emit_comment(b, 0, t.data);
	idlc_buf_free(&t);
	idlc_buf_printf(b,
	                "static int\n%s(const char *uri)\n{\n"
	                "\trc_client *clnt;\n"
	                "\trc_error err;\n"
	                "\tchar why[256];\n"
	                "\trc_status st = rc_client_create_ex(&clnt, uri, %s, %s, &err);\n"
	                "\tint failed = 0;\n\n"
	                "\tif (st != RC_OK) {\n"
	                "\t\tprintf(\"%s: %%s: %%s\\n\", uri, rc_error_format(&err, why, sizeof why));\n"
	                "\t\treturn 1;\n"
	                "\t}\n",
	                pname, v->prog->name, v->name, pname);
	for (const idlc_proc *p = v->procs; p != NULL; p = p->next)
		gen_call(g, p);
	idlc_buf_puts(b, "\n\trc_client_destroy(clnt);\n\treturn failed;\n}\n");
}

/* gen_main_call -- main's call of one version's function. */
static void
gen_main_call(idlc_gen *g, const idlc_version *v)
{
	idlc_buf_printf(g->out, "\tfailed += %s(uri);\n", idlc_prog_cname(g, v));
}

/* idlc_gen_sample_clnt -- NAME_client.c (see the top of this file). */
void
idlc_gen_sample_clnt(idlc_gen *g)
{
	idlc_buf *b = g->out;

	idlc_emit_sample_head(g,
	                      "@N@_client.c -- a sample client of @X@, written by idlc -a (or -Sc) "
	                      "for you to edit.\n\n"
	                      "usage: @N@_client HOST|URI\n\n"
	                      "It calls every procedure of every program version of @X@ once, with "
	                      "zero-filled arguments (strings empty), and prints each call's status "
	                      "(and a number's or a string's result). HOST alone means udp://HOST: the "
	                      "port of each program version comes from HOST's rpcbind. A URI names the "
	                      "transport and may give the port: udp://HOST:PORT, tcp://HOST:PORT, "
	                      "tcp://HOST, unix:/PATH (<remotecall/client.h>); @N@_server prints the "
	                      "URIs it listens on. Exit status: 0 when every call succeeded, 1 when one "
	                      "failed, 2 on a usage error.",
	                      "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n");
	int n = idlc_for_each_version(g, gen_version);
	idlc_buf_printf(b,
	                "\nint\nmain(int argc, char **argv)\n{\n"
	                "\tchar uri[1024];\n"
	                "\tint failed = 0, len;\n\n"
	                "\tif (argc != 2) {\n"
	                "\t\tfprintf(stderr, \"usage: %%s HOST|URI\\n\", argv[0]);\n"
	                "\t\treturn 2;\n"
	                "\t}\n"
	                "\tif (strstr(argv[1], \"://\") != NULL || strncmp(argv[1], \"unix:\", 5) == 0 ||\n"
	                "\t    strncmp(argv[1], \"inproc:\", 7) == 0)\n"
	                "\t\tlen = snprintf(uri, sizeof uri, \"%%s\", argv[1]);\n"
	                "\telse\n"
	                "\t\tlen = snprintf(uri, sizeof uri, \"udp://%%s\", argv[1]);\n"
	                "\tif (len < 0 || (size_t)len >= sizeof uri) {\n"
	                "\t\tfprintf(stderr, \"%%s: address too long\\n\", argv[0]);\n"
	                "\t\treturn 2;\n"
	                "\t}\n");
	if (n == 0)
		idlc_expand(g, b, "\t/* @X@ defines no program: nothing to call */\n");
	idlc_for_each_version(g, gen_main_call);
	idlc_buf_puts(b, "\treturn failed != 0;\n}\n");
}

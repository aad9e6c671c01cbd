/*
 * idlc -- NAME_clnt.c: one reentrant client stub per procedure,
 *
 *   rc_status proc_V(rc_client *clnt, const ARG *arg, RES *res)
 *
 * calling rc_call(). A void argument or result has no parameter; a procedure of several
 * arguments takes one pointer per argument and packs them into its proc_V_argument struct.
 * Beside it, for the other call modes:
 *
 *   rc_status proc_V_async(rc_client *clnt, const ARG *arg, RES *res,
 *                          rc_async_cb done, void *udata, rc_async **call)   rc_call_start()
 *   rc_status proc_V_multi(rc_client *const *clnts, size_t n, const ARG *arg,
 *                          proc_V_multi_fn handler, void *udata, int timeout_ms)  rc_multicall()
 *
 * The stubs name no XDR routine: the procedure's number, routines and result size come from
 * its descriptor proc_V_info (NAME_xdr.c), the one place they are written. Nor do they cast
 * a function pointer: the multi stub hands rc_multicall a trampoline of rc_multi_fn's exact
 * type, which calls the caller's typed handler (calling a function through a pointer to
 * another function type is undefined behaviour, and -fsanitize=function and CFI stop it).
 */
#include <inttypes.h>

#include "idlc.h"

/* pack_args -- the stub's first lines: its descriptor "rc__pi" (and, for the multi stub,
 * the trampoline's context "rc__ctx"), then, for a procedure of several arguments, their copy
 * into its argument struct "arg". */
static void
pack_args(idlc_gen *g, const idlc_proc *p, bool multi)
{
	const char *name = idlc_proc_cname(g, p);
	idlc_buf_printf(g->out, "\tconst rc_procinfo *rc__pi = &%s_info;\n", name);
	if (multi)
		idlc_buf_printf(g->out, "\trc__%s_multi_ctx rc__ctx = { handler, udata };\n", name);
	if (p->nparams > 1) {
		idlc_buf_printf(g->out, "\t%s_argument arg;\n\n", name);
		for (int i = 1; i <= p->nparams; i++)
			idlc_buf_printf(g->out, "\tmemcpy(&arg.arg%d, arg%d, sizeof(arg.arg%d));\n", i,
			                i, i);
	} else {
		idlc_buf_putc(g->out, '\n');
	}
}

/* args_then_result -- "rc__pi->proc, rc__pi->xargs, ARGS, rc__pi->xres, " then "res" (or
 * NULL for a void result), or, for the multi stub, "rc__pi->res_size". */
static void
args_then_result(idlc_gen *g, const idlc_proc *p, bool multi)
{
	idlc_buf *b = g->out;
	idlc_buf_printf(b, "rc__pi->proc, rc__pi->xargs, %s, rc__pi->xres, ",
	                p->nparams == 0 ? "NULL" : p->nparams == 1 ? "arg" : "&arg");
	if (multi)
		idlc_buf_puts(b, "rc__pi->res_size");
	else
		idlc_buf_puts(b, p->result->kind == IDLC_T_VOID ? "NULL" : "res");
}

/*
 * gen_trampoline -- what the multi stub of p hands rc_multicall instead of the caller's
 * handler: a struct holding the handler and its udata, and a function of rc_multi_fn's
 * exact type that calls the handler with its own udata (res converts from void * to the
 * result type, as C allows for object pointers).
 */
static void
gen_trampoline(idlc_gen *g, const idlc_proc *p)
{
	const char *name = idlc_proc_cname(g, p);
	idlc_buf_printf(g->out,
	                "\n/* %s_multi's handler and udata, for the trampoline below. */\n"
	                "typedef struct rc__%s_multi_ctx {\n"
	                "\t%s_multi_fn handler;\n"
	                "\tvoid *udata;\n"
	                "} rc__%s_multi_ctx;\n"
	                "\n"
	                "/* rc_multi_fn's exact type: calls %s_multi's typed handler. */\n"
	                "static bool\n"
	                "rc__%s_multi_cb(size_t index, rc_status st, void *res, void *udata)\n"
	                "{\n"
	                "\tconst rc__%s_multi_ctx *rc__ctx = udata;\n"
	                "\n"
	                "\treturn rc__ctx->handler(index, st, res, rc__ctx->udata);\n"
	                "}\n",
	                name, name, name, name, name, name, name);
}

/* gen_stub -- the blocking, async and multi stubs of procedure p. */
static void
gen_stub(idlc_gen *g, const idlc_proc *p)
{
	idlc_buf *b = g->out;
	const char *name = idlc_proc_cname(g, p);

	idlc_buf_putc(b, '\n');
	idlc_emit_clnt_sig(g, p, true);
	idlc_buf_puts(b, "\n{\n");
	pack_args(g, p, false);
	idlc_buf_puts(b, "\treturn rc_call(clnt, ");
	args_then_result(g, p, false);
	idlc_buf_puts(b, ");\n}\n");

	idlc_buf_putc(b, '\n');
	idlc_emit_async_sig(g, p, true);
	idlc_buf_puts(b, "\n{\n");
	pack_args(g, p, false);
	idlc_buf_puts(b, "\treturn rc_call_start(clnt, ");
	args_then_result(g, p, false);
	idlc_buf_puts(b, ", done, udata, call);\n}\n");

	gen_trampoline(g, p);
	idlc_buf_putc(b, '\n');
	idlc_emit_multi_sig(g, p, true);
	idlc_buf_puts(b, "\n{\n");
	pack_args(g, p, true);
	idlc_buf_puts(b, "\t/* a NULL handler stays NULL: rc_multicall refuses it */\n");
	idlc_buf_puts(b, "\treturn rc_multicall(clnts, n, ");
	args_then_result(g, p, true);
	idlc_buf_printf(b, ", handler != NULL ? rc__%s_multi_cb : NULL, &rc__ctx, timeout_ms);\n}\n",
	                name);
}

/* idlc_gen_clnt -- NAME_clnt.c: the header, the %-lines of this pass, the stubs. */
void
idlc_gen_clnt(idlc_gen *g)
{
	idlc_buf what = { 0 };
	bool multi = false;

	for (const idlc_def *d = g->unit->defs; d != NULL; d = d->next)
		if (d->kind == IDLC_DEF_PROGRAM)
			for (const idlc_version *v = d->versions; v != NULL; v = v->next)
				for (const idlc_proc *p = v->procs; p != NULL; p = p->next)
					multi |= p->nparams > 1;

	idlc_buf_printf(&what, "%s_clnt.c", g->base);
	idlc_gen_banner(g, what.data);
	idlc_buf_free(&what);
	if (multi)
		idlc_buf_puts(g->out, "#include <string.h>\n\n");
	idlc_buf_printf(g->out, "#include \"%s\"\n", g->header);
	for (const idlc_def *d = g->unit->defs; d != NULL; d = d->next)
		if (d->kind == IDLC_DEF_PASSTHRU)
			idlc_gen_passthru(g, d);
	for (const idlc_def *d = g->unit->defs; d != NULL; d = d->next)
		if (d->kind == IDLC_DEF_PROGRAM)
			for (const idlc_version *v = d->versions; v != NULL; v = v->next)
				for (const idlc_proc *p = v->procs; p != NULL; p = p->next)
					gen_stub(g, p);
}

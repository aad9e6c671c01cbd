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
 */
#include <inttypes.h>

#include "idlc.h"

/* pack_args -- a procedure of several arguments copies them into its argument struct. */
static void
pack_args(idlc_gen *g, const idlc_proc *p)
{
	if (p->nparams > 1) {
		idlc_buf_printf(g->out, "\t%s_argument arg;\n\n", idlc_proc_cname(g, p));
		for (int i = 1; i <= p->nparams; i++)
			idlc_buf_printf(g->out, "\tmemcpy(&arg.arg%d, arg%d, sizeof(arg.arg%d));\n", i,
			                i, i);
	}
}

/* args_then_result -- "(rc_xdrproc)xdr_ARG, arg, (rc_xdrproc)xdr_RES" for the call, then ", res"
 * (with_res) or ", sizeof (RES)" (multi) or nothing. */
static void
args_then_result(idlc_gen *g, const idlc_proc *p, int tail)
{
	idlc_buf *b = g->out;
	if (p->nparams == 0)
		idlc_buf_puts(b, "(rc_xdrproc)rc_xdr_void, NULL, ");
	else if (p->nparams == 1)
		idlc_buf_printf(b, "(rc_xdrproc)%s, arg, ", idlc_param_proc(g, p->params->type));
	else
		idlc_buf_printf(b, "(rc_xdrproc)xdr_%s_argument, &arg, ", idlc_proc_cname(g, p));
	if (p->result->kind == IDLC_T_VOID) {
		idlc_buf_puts(b, tail == 2 ? "(rc_xdrproc)rc_xdr_void, 0" : "(rc_xdrproc)rc_xdr_void, NULL");
		return;
	}
	idlc_buf_printf(b, "(rc_xdrproc)%s, ", idlc_param_proc(g, p->result));
	if (tail == 2)
		idlc_buf_printf(b, "sizeof(%s)", idlc_param_ctype(g, p->result));
	else
		idlc_buf_puts(b, "res");
}

/* gen_stub -- the blocking, async and multi stubs of procedure p. */
static void
gen_stub(idlc_gen *g, const idlc_proc *p)
{
	idlc_buf *b = g->out;

	idlc_buf_putc(b, '\n');
	idlc_emit_clnt_sig(g, p, true);
	idlc_buf_puts(b, "\n{\n");
	pack_args(g, p);
	idlc_buf_printf(b, "\treturn rc_call(clnt, %s, ", p->name);
	args_then_result(g, p, 1);
	idlc_buf_puts(b, ");\n}\n");

	idlc_buf_putc(b, '\n');
	idlc_emit_async_sig(g, p, true);
	idlc_buf_puts(b, "\n{\n");
	pack_args(g, p);
	idlc_buf_printf(b, "\treturn rc_call_start(clnt, %s, ", p->name);
	args_then_result(g, p, 1);
	idlc_buf_puts(b, ", done, udata, call);\n}\n");

	idlc_buf_putc(b, '\n');
	idlc_emit_multi_sig(g, p, true);
	idlc_buf_puts(b, "\n{\n");
	pack_args(g, p);
	idlc_buf_printf(b, "\treturn rc_multicall(clnts, n, %s, ", p->name);
	args_then_result(g, p, 2);
	idlc_buf_puts(b, ", (rc_multi_fn)handler, udata, timeout_ms);\n}\n");
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

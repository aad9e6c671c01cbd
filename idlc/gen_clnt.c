/*
 * idlc -- NAME_clnt.c: one reentrant client stub per procedure,
 *
 *   rc_status proc_V(rc_client *clnt, const ARG *arg, RES *res)
 *
 * calling rc_call(). A void argument or result has no parameter; a procedure of several
 * arguments takes one pointer per argument and packs them into its proc_V_argument struct.
 */
#include <inttypes.h>

#include "idlc.h"

/* gen_stub -- the stub of procedure p. */
static void
gen_stub(idlc_gen *g, const idlc_proc *p)
{
	idlc_buf *b = g->out;
	const char *name = idlc_proc_cname(g, p);

	idlc_buf_putc(b, '\n');
	idlc_emit_clnt_sig(g, p, true);
	idlc_buf_puts(b, "\n{\n");
	if (p->nparams > 1) {
		idlc_buf_printf(b, "\t%s_argument arg;\n\n", name);
		for (int i = 1; i <= p->nparams; i++)
			idlc_buf_printf(b, "\tmemcpy(&arg.arg%d, arg%d, sizeof(arg.arg%d));\n", i, i, i);
	}
	idlc_buf_printf(b, "\treturn rc_call(clnt, %s, ", p->name);
	if (p->nparams == 0)
		idlc_buf_puts(b, "(rc_xdrproc)rc_xdr_void, NULL, ");
	else if (p->nparams == 1)
		idlc_buf_printf(b, "(rc_xdrproc)%s, arg, ", idlc_param_proc(g, p->params->type));
	else
		idlc_buf_printf(b, "(rc_xdrproc)xdr_%s_argument, &arg, ", name);
	if (p->result->kind == IDLC_T_VOID)
		idlc_buf_puts(b, "(rc_xdrproc)rc_xdr_void, NULL);\n");
	else
		idlc_buf_printf(b, "(rc_xdrproc)%s, res);\n", idlc_param_proc(g, p->result));
	idlc_buf_puts(b, "}\n");
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

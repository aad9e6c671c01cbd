/*
 * idlc -- NAME_svc.c: the server side. Per procedure a static wrapper of type rc_svc_fn
 * that unpacks the decoded argument and calls the user's
 *
 *   bool proc_V_svc(const ARG *arg, RES *res, rc_svc_req *req)
 *
 * per procedure the typed reply of a call its routine deferred (rc_svc_req_defer),
 *
 *   rc_status proc_V_reply(rc_svc_req *req, const RES *res)
 *
 * and per version the table rc_svc_prog prog_V_program and prog_V_register(). No main():
 * the application owns the server.
 *
 * A file of several programs (a service and its callback program, NFSv4's NFS4_PROGRAM and
 * NFS4_CALLBACK) is linked by both sides, each of which writes the routines of one program
 * only: there every proc_V_svc is a weak reference (#pragma weak), the tables are writable,
 * and a constructor empties (fn NULL) the entries whose routine the link lacks, so that
 * rc_server_register and rc_client_serve refuse that program with RC_PROCUNAVAIL. A file of
 * one program keeps strong references and const tables: a missing routine fails the link.
 */
#include <inttypes.h>

#include "idlc.h"

/* gen_wrapper -- static bool rc__proc_V(void *rc__args, void *rc__res, rc_svc_req *rc__req) */
static void
gen_wrapper(idlc_gen *g, const idlc_proc *p)
{
	idlc_buf *b = g->out;
	const char *name = idlc_proc_cname(g, p);
	bool has_res = p->result->kind != IDLC_T_VOID;

	/* rc__ names: a type of the .x file may be called args or res */
	idlc_buf_printf(b, "\nstatic bool\nrc__%s(void *rc__args, void *rc__res, rc_svc_req *rc__req)"
	                "\n{\n", name);
	if (p->nparams > 1)
		idlc_buf_printf(b, "\t%s_argument *rc__argp = rc__args;\n\n", name);
	if (p->nparams == 0)
		idlc_buf_puts(b, "\t(void)rc__args;\n");
	if (!has_res)
		idlc_buf_puts(b, "\t(void)rc__res;\n");
	idlc_buf_printf(b, "\treturn %s_svc(", name);
	const char *sep = "";
	if (p->nparams == 1) {
		idlc_buf_puts(b, "rc__args");
		sep = ", ";
	} else if (p->nparams > 1) {
		/* cast: C before C23 will not add const to a pointer to an array implicitly */
		int i = 1;
		for (const idlc_param *a = p->params; a != NULL; a = a->next, i++) {
			idlc_buf_printf(b, "%s(%s)&rc__argp->arg%d", sep,
			                idlc_const_ptr_param(g, a->type, ""), i);
			sep = ", ";
		}
	}
	if (has_res) {
		idlc_buf_printf(b, "%src__res", sep);
		sep = ", ";
	}
	idlc_buf_printf(b, "%src__req);\n}\n", sep);

	/* the typed reply of a deferred call: the result's own XDR routine */
	idlc_buf_putc(b, '\n');
	idlc_emit_reply_sig(g, p, true);
	if (has_res)
		idlc_buf_printf(b, "\n{\n\treturn rc_svc_req_reply(req, %s_info.xres, res);\n}\n", name);
	else
		idlc_buf_printf(b, "\n{\n\treturn rc_svc_req_reply(req, %s_info.xres, NULL);\n}\n",
		                name);
}

/* gen_linked -- of a file of several programs: the constructor that empties the entries of
 * version v's table whose routine (a weak reference) this link lacks. */
static void
gen_linked(idlc_gen *g, const idlc_version *v)
{
	idlc_buf *b = g->out;
	const char *pname = idlc_prog_cname(g, v);
	int i = 0;

	idlc_buf_printf(b, "\n/* a routine this link lacks: rc_server_register refuses %s "
	                "(RC_PROCUNAVAIL) */\n__attribute__((constructor)) static void\n"
	                "rc__%s_linked(void)\n{\n", pname, pname);
	for (const idlc_proc *p = v->procs; p != NULL; p = p->next, i++)
		idlc_buf_printf(b, "\tif (!%s_svc)\n\t\trc__%s_procs[%d].fn = NULL;\n",
		                idlc_proc_cname(g, p), pname, i);
	idlc_buf_puts(b, "}\n");
}

/* gen_version -- the wrappers, the table and the registration of one version; weak (a file
 * of several programs: the comment at the top) or not. */
static void
gen_version(idlc_gen *g, const idlc_version *v, bool weak)
{
	idlc_buf *b = g->out;
	const char *pname = idlc_prog_cname(g, v);

	for (const idlc_proc *p = v->procs; p != NULL; p = p->next) {
		if (weak)
			idlc_buf_printf(b, "\n#pragma weak %s_svc\n", idlc_proc_cname(g, p));
		gen_wrapper(g, p);
	}
	idlc_buf_printf(b, "\nstatic %src_svc_proc rc__%s_procs[] = {\n", weak ? "" : "const ",
	                pname);
	for (const idlc_proc *p = v->procs; p != NULL; p = p->next) {
		const char *name = idlc_proc_cname(g, p);
		idlc_buf_printf(b, "\t{ &%s_info, rc__%s },\n", name, name);
	}
	idlc_buf_puts(b, "};\n");
	if (weak)
		gen_linked(g, v);
	idlc_buf_printf(b, "\nconst rc_svc_prog %s_program = {\n\t%s, %s, %d, rc__%s_procs\n};\n",
	                pname, v->prog->name, v->name, v->nprocs, pname);
	idlc_buf_printf(b,
	                "\nrc_status\n%s_register(rc_server *srv, void *ctx)\n{\n"
	                "\treturn rc_server_register(srv, &%s_program, ctx);\n}\n",
	                pname, pname);
}

/* idlc_gen_svc -- NAME_svc.c: the header, the %-lines of this pass, the server tables. */
void
idlc_gen_svc(idlc_gen *g)
{
	idlc_buf what = { 0 };
	idlc_buf_printf(&what, "%s_svc.c", g->base);
	idlc_gen_banner(g, what.data);
	idlc_buf_free(&what);
	idlc_buf_printf(g->out, "#include \"%s\"\n", g->header);
	for (const idlc_def *d = g->unit->defs; d != NULL; d = d->next)
		if (d->kind == IDLC_DEF_PASSTHRU)
			idlc_gen_passthru(g, d);
	int nprogs = 0;
	for (const idlc_def *d = g->unit->defs; d != NULL; d = d->next)
		nprogs += d->kind == IDLC_DEF_PROGRAM;
	for (const idlc_def *d = g->unit->defs; d != NULL; d = d->next)
		if (d->kind == IDLC_DEF_PROGRAM)
			for (const idlc_version *v = d->versions; v != NULL; v = v->next)
				gen_version(g, v, nprogs > 1);
}

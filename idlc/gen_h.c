/*
 * idlc -- NAME.h: constants, types and their xdr_T prototypes in the order of the .x file,
 * then, per program version, the procedure descriptors, client stubs, the server procedures
 * the user writes, and the registration table.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "idlc.h"

/* guard -- the include guard macro for the header of base: IDLC_NFS_PROT_H. */
static void
guard(idlc_buf *b, const char *base)
{
	idlc_buf_puts(b, "IDLC_");
	for (const char *p = base; *p; p++)
		idlc_buf_putc(b, isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_');
	idlc_buf_puts(b, "_H");
}

/* prototype -- "bool xdr_T(rc_xdr *xdrs, T *objp);" */
static void
prototype(idlc_gen *g, const char *name)
{
	idlc_buf_printf(g->out, "bool xdr_%s(rc_xdr *xdrs, %s *objp);\n", name, name);
}

/* gen_enum -- enum NAME { ... }; typedef enum NAME NAME; */
static void
gen_enum(idlc_gen *g, const idlc_def *d)
{
	idlc_buf *b = g->out;
	const idlc_enumerator *prev = NULL;
	idlc_buf_printf(b, "enum %s {\n", d->name);
	for (const idlc_enumerator *e = d->enums; e != NULL; prev = e, e = e->next) {
		idlc_buf_printf(b, "\t%s = ", e->name);
		if (e->value != NULL)
			idlc_emit_expr(b, e->value);
		else if (e->known)
			idlc_buf_printf(b, "%" PRId64, e->v);
		else if (prev != NULL)
			idlc_buf_printf(b, "%s + 1", prev->name);
		else
			idlc_buf_puts(b, "0");
		idlc_buf_puts(b, e->next ? ",\n" : "\n");
	}
	idlc_buf_printf(b, "};\ntypedef enum %s %s;\n", d->name, d->name);
	prototype(g, d->name);
}

/* gen_struct -- struct NAME { ... }; typedef struct NAME NAME; */
static void
gen_struct(idlc_gen *g, const idlc_def *d)
{
	idlc_buf *b = g->out;
	idlc_buf_printf(b, "struct %s {\n", d->name);
	for (const idlc_decl *f = d->fields; f != NULL; f = f->next)
		idlc_emit_member(g, f, 1);
	if (d->no_members) /* C has no empty structs */
		idlc_buf_puts(b, "\tchar rc__unused; /* no field holds data */\n");
	idlc_buf_printf(b, "};\ntypedef struct %s %s;\n", d->name, d->name);
	prototype(g, d->name);
}

/* gen_union -- struct NAME { D d; union { arms } NAME_u; }; (rpcgen's shape) */
static void
gen_union(idlc_gen *g, const idlc_def *d)
{
	idlc_buf *b = g->out;
	idlc_buf_printf(b, "struct %s {\n", d->name);
	idlc_emit_member(g, d->discrim, 1);
	if (!d->all_void) {
		idlc_buf_puts(b, "\tunion {\n");
		for (const idlc_arm *a = d->arms; a != NULL; a = a->next)
			if (a->decl != NULL)
				idlc_emit_member(g, a->decl, 2);
		idlc_buf_printf(b, "\t} %s_u;\n", d->name);
	}
	idlc_buf_printf(b, "};\ntypedef struct %s %s;\n", d->name, d->name);
	prototype(g, d->name);
}

/* gen_program_defines -- #define PROG n, VERS n, PROC n (each name once). */
static void
gen_program_defines(idlc_gen *g, const idlc_def *d)
{
	idlc_buf *b = g->out;
	idlc_buf_printf(b, "#define %s ", d->name);
	idlc_emit_define_value(b, d->number);
	idlc_buf_putc(b, '\n');
	for (const idlc_version *v = d->versions; v != NULL; v = v->next) {
		idlc_sym *vs = idlc_sym_lookup(g->unit, v->name);
		if (vs == NULL || vs->vers == v) {
			idlc_buf_printf(b, "\n#define %s ", v->name);
			idlc_emit_define_value(b, v->number);
			idlc_buf_putc(b, '\n');
		}
		for (const idlc_proc *p = v->procs; p != NULL; p = p->next) {
			idlc_sym *ps = idlc_sym_lookup(g->unit, p->name);
			if (ps != NULL && ps->proc != p)
				continue;
			idlc_buf_printf(b, "#define %s ", p->name);
			idlc_emit_define_value(b, p->number);
			idlc_buf_putc(b, '\n');
		}
	}
}

/* gen_argument_struct -- struct proc_V_argument for a procedure of several arguments. */
static void
gen_argument_struct(idlc_gen *g, const idlc_proc *p)
{
	idlc_buf *b = g->out;
	const char *name = idlc_proc_cname(g, p);
	idlc_buf_printf(b, "struct %s_argument {\n", name);
	int i = 1;
	for (const idlc_param *a = p->params; a != NULL; a = a->next, i++) {
		const char *ct = idlc_param_ctype(g, a->type);
		size_t n = strlen(ct);
		idlc_buf_printf(b, "\t%s%sarg%d;\n", ct, n && ct[n - 1] == '*' ? "" : " ", i);
	}
	idlc_buf_printf(b, "};\ntypedef struct %s_argument %s_argument;\n", name, name);
	idlc_buf_printf(b, "bool xdr_%s_argument(rc_xdr *xdrs, %s_argument *objp);\n\n", name,
	                name);
}

/*
 * gen_proc_comment -- the comment above a procedure's declarations: where the .x file defines
 * it, as it was written there, and who frees its result in each call mode.
 */
static void
gen_proc_comment(idlc_gen *g, const idlc_proc *p)
{
	const char *name = idlc_proc_cname(g, p);
	const char *file = strrchr(p->loc.file, '/');
	idlc_buf t = { 0 };

	idlc_buf_printf(&t, "%s, %s:%d: %s %s(", p->name, file ? file + 1 : p->loc.file,
	                p->loc.line, idlc_type_spelling(g, p->result), p->name);
	if (p->nparams == 0)
		idlc_buf_puts(&t, "void");
	for (const idlc_param *a = p->nparams ? p->params : NULL; a != NULL; a = a->next)
		idlc_buf_printf(&t, "%s%s", a == p->params ? "" : ", ", idlc_type_spelling(g, a->type));
	idlc_buf_printf(&t, ") = %" PRIu32 ".\n", p->num);
	if (p->result->kind == IDLC_T_VOID)
		idlc_buf_puts(&t, "No result: nothing to free.");
	else if (!idlc_type_owns_memory(p->result))
		idlc_buf_printf(&t, "The result (%s) holds no allocated memory: nothing to free.",
		                idlc_param_ctype(g, p->result));
	else
		idlc_buf_printf(&t,
		                "%s, %s_async: the caller frees what decoding left in *res, after a "
		                "success or a failure alike, with rc_xdr_free(%s_info.xres, res).\n"
		                "%s_multi: each result is freed when its handler returns.\n"
		                "%s_svc: the server frees what it leaves in *res once the reply is "
		                "sent.",
		                name, name, name, name, name);
	idlc_emit_comment(g->out, 0, t.data);
	idlc_buf_free(&t);
}

/* gen_version -- the declarations of one program version. */
static void
gen_version(idlc_gen *g, const idlc_version *v)
{
	idlc_buf *b = g->out;
	const char *pname = idlc_prog_cname(g, v);
	idlc_buf_printf(b, "\n/* program %s, version %s (%" PRIu32 ") */\n\n", v->prog->name,
	                v->name, v->num);
	for (const idlc_proc *p = v->procs; p != NULL; p = p->next)
		if (p->nparams > 1)
			gen_argument_struct(g, p);
	for (const idlc_proc *p = v->procs; p != NULL; p = p->next) {
		if (p != v->procs)
			idlc_buf_putc(b, '\n');
		gen_proc_comment(g, p);
		idlc_buf_printf(b, "extern const rc_procinfo %s_info;\n", idlc_proc_cname(g, p));
		idlc_emit_proc_xdr_max(g, p);
		idlc_emit_clnt_sig(g, p, false);
		idlc_buf_puts(b, ";\n");
		idlc_emit_async_sig(g, p, false);
		idlc_buf_puts(b, ";\n");
		idlc_emit_multi_fn(g, p);
		idlc_emit_multi_sig(g, p, false);
		idlc_buf_puts(b, ";\n");
		idlc_emit_svc_sig(g, p);
		idlc_buf_puts(b, ";\n");
		idlc_emit_reply_sig(g, p, false);
		idlc_buf_puts(b, ";\n");
	}
	idlc_buf_printf(b, "\nextern const rc_svc_prog %s_program;\n", pname);
	idlc_buf_printf(b, "rc_status %s_register(rc_server *srv, void *ctx);\n", pname);
	idlc_emit_version_xdr_max(g, v);
}

/* idlc_gen_header -- NAME.h (see the top of this file). */
void
idlc_gen_header(idlc_gen *g)
{
	idlc_buf *b = g->out;
	idlc_buf gd = { 0 };
	guard(&gd, g->base);

	idlc_gen_banner(g, g->header);
	idlc_buf_printf(b, "#ifndef %s\n#define %s\n\n", gd.data, gd.data);
	idlc_buf_puts(b, "#include <stdio.h>\n#include <remotecall/remotecall.h>\n\n");
	idlc_buf_puts(b, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
	idlc_prelude_decls(g->unit, b);

	bool programs = false;
	for (const idlc_def *d = g->unit->defs; d != NULL; d = d->next) {
		switch (d->kind) {
		case IDLC_DEF_PASSTHRU:
			idlc_gen_passthru(g, d);
			continue;
		case IDLC_DEF_CONST:
			idlc_buf_printf(b, "#define %s ", d->name);
			if (d->str != NULL)
				idlc_buf_puts(b, d->str);
			else
				idlc_emit_define_value(b, d->value);
			idlc_buf_putc(b, '\n');
			/* consecutive constants stay together */
			if (d->next == NULL || d->next->kind != IDLC_DEF_CONST)
				idlc_buf_putc(b, '\n');
			continue;
		case IDLC_DEF_ENUM:
			gen_enum(g, d);
			break;
		case IDLC_DEF_STRUCT:
			gen_struct(g, d);
			break;
		case IDLC_DEF_UNION:
			gen_union(g, d);
			break;
		case IDLC_DEF_TYPEDEF:
			if (d->self_alias)
				continue;
			if (d->std_alias) /* C has it: a second typedef could only clash */
				idlc_buf_printf(b, "/* %s: <stdint.h>'s type, restated by the .x file */\n",
				                d->name);
			else
				idlc_emit_typedef(g, d->decl);
			prototype(g, d->name);
			break;
		case IDLC_DEF_PROGRAM:
			programs = true;
			gen_program_defines(g, d);
			break;
		}
		idlc_emit_xdr_max(g, d);      /* bounds.c: nothing for a program */
		idlc_emit_print_decls(g, d); /* gen_print.c: likewise */
		idlc_buf_putc(b, '\n');
	}

	size_t next;
	const idlc_sym **ext = idlc_extern_types(g->unit, &next);
	if (next > 0)
		idlc_buf_puts(b, "/* external types: the program supplies their XDR routines */\n");
	for (size_t i = 0; i < next; i++)
		prototype(g, ext[i]->name);
	if (next > 0)
		idlc_buf_putc(b, '\n');
	free(ext);

	if (programs) {
		for (const idlc_def *d = g->unit->defs; d != NULL; d = d->next)
			if (d->kind == IDLC_DEF_PROGRAM)
				for (const idlc_version *v = d->versions; v != NULL; v = v->next)
					gen_version(g, v);
		idlc_emit_print_decls(g, NULL);
		idlc_buf_putc(b, '\n');
	}

	idlc_buf_puts(b, "#ifdef __cplusplus\n}\n#endif\n\n");
	idlc_buf_printf(b, "#endif /* !%s */\n", gd.data);
	idlc_buf_free(&gd);
}

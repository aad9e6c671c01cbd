/*
 * idlc -- NAME_xdr.c: bool xdr_T(rc_xdr *, T *) for every type, in the order of the .x file
 * (with its %-lines), the routines of the argument structs of procedures taking several
 * arguments, and one rc_procinfo per procedure.
 *
 * A struct whose last field links to the struct itself (a list) is coded in a loop: on the
 * wire each node is followed by a bool "more" and the next node -- the bytes rpcgen's
 * recursive code produces -- but encoding, decoding and freeing a list of any length take
 * constant stack and linear time. A struct whose one self-link is not its last field (a
 * chain) is coded field by field, but freed in the same loop.
 */
#include <inttypes.h>
#include <string.h>

#include "idlc.h"

/* open_routine -- "bool\nxdr_NAME(rc_xdr *xdrs, NAME *objp)\n{\n" */
static void
open_routine(idlc_gen *g, const char *name)
{
	idlc_buf_printf(g->out, "\nbool\nxdr_%s(rc_xdr *xdrs, %s *objp)\n{\n", name, name);
}

/* field -- the XDR call(s) for field f of *objp. */
static void
field(idlc_gen *g, const idlc_decl *f, const char *prefix, int indent)
{
	idlc_buf ptr = { 0 }, val = { 0 }, memb = { 0 };
	idlc_buf_printf(&ptr, "&objp->%s%s", prefix, f->name);
	idlc_buf_printf(&val, "objp->%s%s", prefix, f->name);
	idlc_buf_printf(&memb, "objp->%s%s.", prefix, f->name);
	idlc_emit_xdr_decl(g, f, ptr.data, val.data, memb.data, indent);
	idlc_buf_free(&ptr);
	idlc_buf_free(&val);
	idlc_buf_free(&memb);
}

/* gen_enum -- enums travel as a signed 32-bit int. */
static void
gen_enum(idlc_gen *g, const idlc_def *d)
{
	open_routine(g, d->name);
	idlc_buf_puts(g->out, "\treturn rc_xdr_enum(xdrs, (int32_t *)objp);\n}\n");
}

/* unused -- "(void)xdrs; (void)objp;" for a routine that codes nothing (zero-length arrays). */
static void
unused(idlc_gen *g)
{
	idlc_buf_puts(g->out, "\t(void)xdrs;\n\t(void)objp;\n");
}

/* gen_struct -- the fields in order. */
static void
gen_struct(idlc_gen *g, const idlc_def *d)
{
	open_routine(g, d->name);
	if (d->no_members)
		unused(g);
	for (const idlc_decl *f = d->fields; f != NULL; f = f->next)
		field(g, f, "", 1);
	idlc_buf_puts(g->out, "\treturn true;\n}\n");
}

/* gen_node -- the static routine coding one node of the list or chain d: its fields but the
 * link `next`. */
static void
gen_node(idlc_gen *g, const idlc_def *d, const idlc_decl *next)
{
	idlc_buf *b = g->out;
	bool any = false;

	idlc_buf_printf(b, "\n/* One node of %s: its fields but %s. */\n", d->name, next->name);
	idlc_buf_printf(b, "static bool\nrc__xdr_%s_node(rc_xdr *xdrs, %s *objp)\n{\n", d->name,
	                d->name);
	for (const idlc_decl *f = d->fields; f != NULL; f = f->next) {
		if (f == next)
			continue;
		if (f->kind != IDLC_D_VOID && !idlc_decl_empty(f))
			any = true;
		field(g, f, "", 1);
	}
	if (!any)
		unused(g);
	idlc_buf_puts(b, "\treturn true;\n}\n");
}

/* gen_free_loop -- the RC_XDR_FREE case of xdr_NAME for a list or chain linked by `next`:
 * each node's fields freed, then the node, one after the other (constant stack). */
static void
gen_free_loop(idlc_gen *g, const idlc_def *d, const char *next)
{
	const char *n = d->name;
	idlc_buf_printf(g->out,
	                "\tif (xdrs->x_op == RC_XDR_FREE) {\n"
	                "\t\trc__cur = objp->%s;\n"
	                "\t\tobjp->%s = NULL;\n"
	                "\t\tif (!rc__xdr_%s_node(xdrs, objp))\n"
	                "\t\t\treturn false;\n"
	                "\t\twhile (rc__cur != NULL) {\n"
	                "\t\t\trc__next = rc__cur->%s;\n"
	                "\t\t\trc__cur->%s = NULL;\n"
	                "\t\t\tif (!rc_xdr_reference(xdrs, &rc__cur, sizeof(%s), "
	                "(rc_xdrproc)rc__xdr_%s_node))\n"
	                "\t\t\t\treturn false;\n"
	                "\t\t\trc__cur = rc__next;\n"
	                "\t\t}\n"
	                "\t\treturn true;\n"
	                "\t}\n",
	                next, next, n, next, next, n, n);
}

/* gen_list -- a list struct: a static routine for one node's own fields, and xdr_NAME
 * walking the links in a loop (see the top of this file). Nodes are allocated (decode) and
 * freed (free) by rc_xdr_reference, under the stream's allocation budget. */
static void
gen_list(idlc_gen *g, const idlc_def *d)
{
	idlc_buf *b = g->out;
	const char *n = d->name;
	const char *next = d->list_next->name;

	gen_node(g, d, d->list_next);
	open_routine(g, n);
	idlc_buf_printf(b,
	                "\t/* a list: walked in a loop, so its length costs no stack */\n"
	                "\t%s *rc__cur, *rc__next;\n"
	                "\tbool rc__more;\n"
	                "\n", n);
	gen_free_loop(g, d, next);
	idlc_buf_printf(b,
	                "\tif (!rc__xdr_%s_node(xdrs, objp))\n"
	                "\t\treturn false;\n"
	                "\tfor (;;) {\n"
	                "\t\trc__more = objp->%s != NULL;\n"
	                "\t\tif (!rc_xdr_bool(xdrs, &rc__more))\n"
	                "\t\t\treturn false;\n"
	                "\t\tif (!rc__more) {\n"
	                "\t\t\tobjp->%s = NULL;\n"
	                "\t\t\treturn true;\n"
	                "\t\t}\n"
	                "\t\tif (!rc_xdr_reference(xdrs, &objp->%s, sizeof(%s), "
	                "(rc_xdrproc)rc__xdr_%s_node))\n"
	                "\t\t\treturn false;\n"
	                "\t\tobjp = objp->%s;\n"
	                "\t}\n"
	                "}\n",
	                n, next, next, next, n, n, next);
}

/* gen_chain -- a struct with one self-link that is not its last field: coded field by field
 * (the next node sits inside this one on the wire), freed in a loop. */
static void
gen_chain(idlc_gen *g, const idlc_def *d)
{
	gen_node(g, d, d->chain_next);
	open_routine(g, d->name);
	idlc_buf_printf(g->out,
	                "\t/* a chain: freed in a loop, so its length costs no stack */\n"
	                "\t%s *rc__cur, *rc__next;\n"
	                "\n", d->name);
	gen_free_loop(g, d, d->chain_next->name);
	for (const idlc_decl *f = d->fields; f != NULL; f = f->next)
		field(g, f, "", 1);
	idlc_buf_puts(g->out, "\treturn true;\n}\n");
}

/* gen_union -- the discriminant, then a switch over the arms. */
static void
gen_union(idlc_gen *g, const idlc_def *d)
{
	idlc_buf *b = g->out;
	const idlc_decl *disc = d->discrim;
	const idlc_def *en;
	const idlc_type *rt = idlc_resolve_alias(disc->type, &en);
	idlc_buf prefix = { 0 };
	idlc_buf_printf(&prefix, "%s_u.", d->name);

	open_routine(g, d->name);
	field(g, disc, "", 1);
	/* a bool is switched on as an int (gcc warns about switch on a boolean) */
	idlc_buf_printf(b, "\tswitch (%sobjp->%s) {\n", rt->kind == IDLC_T_BOOL ? "(int)" : "",
	                disc->name);
	for (const idlc_arm *a = d->arms; a != NULL; a = a->next) {
		if (a->decl == NULL)
			continue;
		for (const idlc_case *c = a->cases; c != NULL; c = c->next) {
			if (c->value == NULL) {
				idlc_buf_puts(b, "\tdefault:\n");
			} else {
				idlc_buf_puts(b, "\tcase ");
				idlc_emit_expr(b, c->value);
				idlc_buf_puts(b, ":\n");
			}
		}
		field(g, a->decl, prefix.data, 2);
		idlc_buf_puts(b, "\t\tbreak;\n");
	}
	if (!d->has_default)
		idlc_buf_puts(b, "\tdefault:\n\t\treturn false; /* no arm for this discriminant */\n");
	idlc_buf_puts(b, "\t}\n\treturn true;\n}\n");
	idlc_buf_free(&prefix);
}

/* gen_typedef -- the typedef's declaration, coded through objp. */
static void
gen_typedef(idlc_gen *g, const idlc_def *d)
{
	open_routine(g, d->name);
	if (idlc_decl_empty(d->decl))
		unused(g);
	idlc_emit_xdr_decl(g, d->decl, "objp", "*objp", "objp->", 1);
	idlc_buf_puts(g->out, "\treturn true;\n}\n");
}

/* gen_argument -- the routine of struct proc_V_argument. */
static void
gen_argument(idlc_gen *g, const idlc_proc *p)
{
	const char *name = idlc_proc_cname(g, p);
	char *full = idlc_arena_alloc(&g->unit->arena, strlen(name) + sizeof "_argument");
	strcpy(full, name);
	strcat(full, "_argument");
	open_routine(g, full);
	int i = 1;
	for (const idlc_param *a = p->params; a != NULL; a = a->next, i++) {
		idlc_decl d = { 0 };
		char argn[32];
		snprintf(argn, sizeof argn, "arg%d", i);
		d.kind = IDLC_D_PLAIN;
		d.type = a->type;
		d.name = argn;
		field(g, &d, "", 1);
	}
	idlc_buf_puts(g->out, "\treturn true;\n}\n");
}

/* gen_procinfo -- const rc_procinfo proc_V_info = { ... }; */
static void
gen_procinfo(idlc_gen *g, const idlc_proc *p)
{
	idlc_buf *b = g->out;
	const char *name = idlc_proc_cname(g, p);
	const idlc_version *v = p->vers;
	idlc_buf_printf(b, "\nconst rc_procinfo %s_info = {\n", name);
	idlc_buf_printf(b, "\t%s, %s, %s, \"%s\",\n", v->prog->name, v->name, p->name, p->name);
	if (p->nparams == 0)
		idlc_buf_puts(b, "\t(rc_xdrproc)rc_xdr_void, 0,\n");
	else if (p->nparams == 1)
		idlc_buf_printf(b, "\t(rc_xdrproc)%s, sizeof(%s),\n",
		                idlc_param_proc(g, p->params->type),
		                idlc_param_ctype(g, p->params->type));
	else
		idlc_buf_printf(b, "\t(rc_xdrproc)xdr_%s_argument, sizeof(%s_argument),\n", name,
		                name);
	if (p->result->kind == IDLC_T_VOID)
		idlc_buf_puts(b, "\t(rc_xdrproc)rc_xdr_void, 0\n");
	else
		idlc_buf_printf(b, "\t(rc_xdrproc)%s, sizeof(%s)\n", idlc_param_proc(g, p->result),
		                idlc_param_ctype(g, p->result));
	idlc_buf_puts(b, "};\n");
}

/* idlc_gen_xdr -- NAME_xdr.c (see the top of this file). */
void
idlc_gen_xdr(idlc_gen *g)
{
	idlc_buf what = { 0 };
	idlc_buf_printf(&what, "%s_xdr.c", g->base);
	idlc_gen_banner(g, what.data);
	idlc_buf_free(&what);
	idlc_buf_printf(g->out, "#include \"%s\"\n", g->header);

	for (const idlc_def *d = g->unit->defs; d != NULL; d = d->next) {
		switch (d->kind) {
		case IDLC_DEF_PASSTHRU:
			idlc_gen_passthru(g, d);
			break;
		case IDLC_DEF_ENUM:
			gen_enum(g, d);
			break;
		case IDLC_DEF_STRUCT:
			if (d->list_next != NULL)
				gen_list(g, d);
			else if (d->chain_next != NULL)
				gen_chain(g, d);
			else
				gen_struct(g, d);
			break;
		case IDLC_DEF_UNION:
			gen_union(g, d);
			break;
		case IDLC_DEF_TYPEDEF:
			if (!d->self_alias)
				gen_typedef(g, d);
			break;
		case IDLC_DEF_CONST:
		case IDLC_DEF_PROGRAM:
			break;
		}
	}

	for (const idlc_def *d = g->unit->defs; d != NULL; d = d->next) {
		if (d->kind != IDLC_DEF_PROGRAM)
			continue;
		for (const idlc_version *v = d->versions; v != NULL; v = v->next) {
			for (const idlc_proc *p = v->procs; p != NULL; p = p->next)
				if (p->nparams > 1)
					gen_argument(g, p);
			for (const idlc_proc *p = v->procs; p != NULL; p = p->next)
				gen_procinfo(g, p);
		}
	}
}

/*
 * idlc -- the largest XDR encoding of every type, for NAME.h's TYPE_XDR_MAX and the
 * procedures' proc_V_CALL_XDR_MAX / proc_V_REPLY_XDR_MAX (docs/idl.md, section 7b).
 *
 * A type is bounded when every value of it encodes in at most N bytes, N known here:
 *
 *   int, unsigned int, enum, bool, float (and char, short: XDR sends them as int)   4
 *   hyper, unsigned hyper, double                                                  8
 *   quadruple                                                                     16
 *   opaque[n]                  pad4(n)        opaque<n>, string<n>     4 + pad4(n)
 *   T x[n]                     n * max(T)     T x<n>                   4 + n * max(T)
 *   T *x (optional data)       4 + max(T)     void                     0
 *   struct                     the sum of its fields
 *   union                      its discriminant + the largest arm (default included)
 *   typedef                    its declaration; netobj 4 + 1024, des_block 8
 *
 * Unbounded: <> without a maximum, a type that contains itself (lists), an external type
 * (a %#include'd one: its size is not in view), a size written with a constant idlc cannot
 * evaluate, and any total above INT64_MAX. Each definition's bound is computed once and
 * kept in it (idlc_def.xdr_max_state), so nested types cost linear time.
 */
#include <inttypes.h>

#include "idlc.h"

/* The results kept in idlc_def.xdr_max_state. */
enum { ST_NEW = 0, ST_BUSY, ST_BOUNDED, ST_UNBOUNDED };

#define LIMIT ((uint64_t)INT64_MAX)

/* add -- *acc += n unless that passes LIMIT (then false). */
static bool
add(uint64_t *acc, uint64_t n)
{
	if (n > LIMIT || *acc > LIMIT - n)
		return false;
	*acc += n;
	return true;
}

/* mul -- a * b into *out unless that passes LIMIT (then false). */
static bool
mul(uint64_t a, uint64_t b, uint64_t *out)
{
	if (a != 0 && b > LIMIT / a)
		return false;
	*out = a * b;
	return true;
}

/* size_of -- the count or maximum of d, when idlc knows it (false otherwise). */
static bool
size_of(const idlc_decl *d, uint64_t *n)
{
	const idlc_expr *e = d->size;
	if (e == NULL || !e->known || e->big || e->value < 0)
		return false;
	*n = (uint64_t)e->value;
	return true;
}

static bool def_max(const idlc_def *d, uint64_t *out);

/* type_max -- the largest encoding of one value of t. */
static bool
type_max(const idlc_type *t, uint64_t *out)
{
	switch (t->kind) {
	case IDLC_T_VOID:
		*out = 0;
		return true;
	case IDLC_T_INT: case IDLC_T_UINT: case IDLC_T_BOOL: case IDLC_T_FLOAT:
	case IDLC_T_CHAR: case IDLC_T_UCHAR: case IDLC_T_SHORT: case IDLC_T_USHORT:
		*out = 4;
		return true;
	case IDLC_T_HYPER: case IDLC_T_UHYPER: case IDLC_T_DOUBLE:
		*out = 8;
		return true;
	case IDLC_T_QUAD:
		*out = 16;
		return true;
	case IDLC_T_STRING: case IDLC_T_OPAQUE: /* only in a declaration with a size */
		return false;
	case IDLC_T_NAMED:
		break;
	}
	if (t->sym != NULL && t->sym->kind == IDLC_S_PRELUDE && t->sym->pre != NULL) {
		if (t->sym->pre->special == IDLC_PRE_NETOBJ) {
			*out = 4 + 1024; /* opaque<MAX_NETOBJ_SZ> */
			return true;
		}
		if (t->sym->pre->special == IDLC_PRE_DES_BLOCK) {
			*out = 8; /* opaque[8] */
			return true;
		}
	}
	const idlc_def *d = idlc_type_def(t);
	return d != NULL && def_max(d, out);
}

/* idlc_decl_xdr_max -- see idlc.h. */
bool
idlc_decl_xdr_max(const idlc_decl *d, uint64_t *out)
{
	uint64_t n, elem;
	const idlc_type *t = d->type;

	switch (d->kind) {
	case IDLC_D_VOID:
		*out = 0;
		return true;
	case IDLC_D_PLAIN:
		return type_max(t, out);
	case IDLC_D_PTR: /* a bool "present", then the value */
		if (!type_max(t, &elem))
			return false;
		*out = 4;
		return add(out, elem);
	case IDLC_D_FIXED:
		if (!size_of(d, &n))
			return false;
		if (t->kind == IDLC_T_OPAQUE) {
			*out = (n + 3) & ~(uint64_t)3;
			return true;
		}
		return type_max(t, &elem) && mul(n, elem, out);
	case IDLC_D_VAR:
		if (!size_of(d, &n))
			return false;
		*out = 4; /* the length */
		if (t->kind == IDLC_T_OPAQUE || t->kind == IDLC_T_STRING)
			return add(out, (n + 3) & ~(uint64_t)3);
		return type_max(t, &elem) && mul(n, elem, &n) && add(out, n);
	}
	return false;
}

/* compute -- the bound of definition d (its fields, arms or declaration). */
static bool
compute(const idlc_def *d, uint64_t *out)
{
	uint64_t n;
	*out = 0;
	switch (d->kind) {
	case IDLC_DEF_ENUM:
		*out = 4;
		return true;
	case IDLC_DEF_STRUCT:
		for (const idlc_decl *f = d->fields; f != NULL; f = f->next)
			if (!idlc_decl_xdr_max(f, &n) || !add(out, n))
				return false;
		return true;
	case IDLC_DEF_UNION: {
		uint64_t arm = 0;
		for (const idlc_arm *a = d->arms; a != NULL; a = a->next) {
			if (a->decl == NULL)
				continue;
			if (!idlc_decl_xdr_max(a->decl, &n))
				return false;
			if (n > arm)
				arm = n;
		}
		return idlc_decl_xdr_max(d->discrim, out) && add(out, arm);
	}
	case IDLC_DEF_TYPEDEF:
		return idlc_decl_xdr_max(d->decl, out);
	default:
		return false;
	}
}

/* def_max -- the bound of d, computed once; a definition met again while its own bound is
 * being computed contains itself: unbounded. */
static bool
def_max(const idlc_def *d, uint64_t *out)
{
	/* the definition lives in the unit's arena, which is not const: the generators read a
	 * const AST, and this cache is the one thing they write */
	idlc_def *m = (idlc_def *)d;
	switch (m->xdr_max_state) {
	case ST_BUSY:
	case ST_UNBOUNDED:
		return false;
	case ST_BOUNDED:
		*out = m->xdr_max;
		return true;
	default:
		break;
	}
	m->xdr_max_state = ST_BUSY;
	uint64_t n;
	bool ok = compute(d, &n);
	m->xdr_max_state = ok ? ST_BOUNDED : ST_UNBOUNDED;
	m->xdr_max = ok ? n : 0;
	*out = m->xdr_max;
	return ok;
}

/* idlc_def_xdr_max -- see idlc.h. */
bool
idlc_def_xdr_max(const idlc_def *d, uint64_t *out)
{
	if (d->kind == IDLC_DEF_TYPEDEF && d->self_alias)
		return false;
	return def_max(d, out);
}

/* idlc_proc_xdr_max -- see idlc.h. */
bool
idlc_proc_xdr_max(const idlc_proc *p, bool reply, uint64_t *out)
{
	uint64_t n;
	*out = 0;
	if (reply) {
		idlc_decl d = { .kind = IDLC_D_PLAIN, .type = p->result };
		return idlc_decl_xdr_max(&d, out);
	}
	for (const idlc_param *a = p->nparams ? p->params : NULL; a != NULL; a = a->next) {
		idlc_decl d = { .kind = IDLC_D_PLAIN, .type = a->type };
		if (!idlc_decl_xdr_max(&d, &n) || !add(out, n))
			return false;
	}
	return true;
}

/* idlc_emit_xdr_max -- see idlc.h. */
void
idlc_emit_xdr_max(idlc_gen *g, const idlc_def *d)
{
	uint64_t n;
	if (idlc_def_xdr_max(d, &n))
		idlc_buf_printf(g->out, "#define %s_XDR_MAX %" PRIu64 "\n", d->name, n);
}

/* idlc_emit_proc_xdr_max -- see idlc.h. */
void
idlc_emit_proc_xdr_max(idlc_gen *g, const idlc_proc *p)
{
	uint64_t n;
	const char *name = idlc_proc_cname(g, p);
	if (idlc_proc_xdr_max(p, false, &n))
		idlc_buf_printf(g->out, "#define %s_CALL_XDR_MAX %" PRIu64 "\n", name, n);
	if (idlc_proc_xdr_max(p, true, &n))
		idlc_buf_printf(g->out, "#define %s_REPLY_XDR_MAX %" PRIu64 "\n", name, n);
}

/* idlc_emit_version_xdr_max -- see idlc.h. */
void
idlc_emit_version_xdr_max(idlc_gen *g, const idlc_version *v)
{
	uint64_t call = 0, reply = 0, n;
	bool call_ok = true, reply_ok = true;
	for (const idlc_proc *p = v->procs; p != NULL; p = p->next) {
		if (idlc_proc_xdr_max(p, false, &n) && call_ok)
			call = n > call ? n : call;
		else
			call_ok = false;
		if (idlc_proc_xdr_max(p, true, &n) && reply_ok)
			reply = n > reply ? n : reply;
		else
			reply_ok = false;
	}
	const char *pname = idlc_prog_cname(g, v);
	if (call_ok)
		idlc_buf_printf(g->out, "#define %s_CALL_XDR_MAX %" PRIu64 "\n", pname, call);
	if (reply_ok)
		idlc_buf_printf(g->out, "#define %s_REPLY_XDR_MAX %" PRIu64 "\n", pname, reply);
}

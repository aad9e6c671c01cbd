/*
 * idlc -- AST builders (called by the parser's actions), the parse driver, and the analysis
 * of %-lines (#include and #define lines idlc learns names from).
 */
#include <stdlib.h>
#include <string.h>

#include "idlc.h"
#include "parser.h"

/* idlc_parse_error -- report a lexical or syntax error (not in quiet mode); count it. */
void
idlc_parse_error(idlc_parse *ps, const idlc_loc *loc, const char *fmt, ...)
{
	ps->errors++;
	if (ps->quiet)
		return;
	idlc_buf msg = { 0 };
	va_list ap;
	va_start(ap, fmt);
	idlc_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	idlc_error(ps->diag, loc, "%s", msg.data ? msg.data : "");
	idlc_buf_free(&msg);
}

/* idlc_str -- s[0..n) copied into the unit's arena. */
const char *
idlc_str(idlc_parse *ps, const char *s, size_t n)
{
	return idlc_arena_strndup(&ps->unit->arena, s, n);
}

/* new_node -- n zeroed bytes in the unit's arena. */
static void *
new_node(idlc_parse *ps, size_t n)
{
	return idlc_arena_alloc(&ps->unit->arena, n);
}

/* ---------------------------------------------------------------------------------------- */
/* Expressions                                                                              */
/* ---------------------------------------------------------------------------------------- */

/* digit_value -- the value of hex digit c, or -1. */
static int
digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * idlc_expr_num -- an integer literal: decimal, hex (0x...) or octal (0...), up to
 * UINT64_MAX (above INT64_MAX it is marked big). A malformed or too large literal is reported
 * here and gives a node marked bad (value unknown).
 */
idlc_expr *
idlc_expr_num(idlc_parse *ps, const char *text, idlc_loc loc)
{
	idlc_expr *e = new_node(ps, sizeof(*e));
	e->kind = IDLC_EX_NUM;
	e->loc = loc;
	e->text = text;
	e->depth = 1;

	const char *p = text;
	int base = 10;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	} else if (p[0] == '0' && p[1] != '\0') {
		base = 8;
		p += 1;
	}
	uint64_t v = 0;
	bool overflow = false;
	if (*p == '\0') {
		if (base == 16) {
			idlc_parse_error(ps, &loc, "invalid integer constant '%s'", text);
			e->bad = true;
			return e;
		}
	}
	for (; *p; p++) {
		int d = digit_value(*p);
		if (d < 0 || d >= base) {
			if (base == 8 && d >= 0 && d < 10)
				idlc_parse_error(ps, &loc, "invalid digit '%c' in octal constant '%s'",
				                 *p, text);
			else
				idlc_parse_error(ps, &loc, "invalid integer constant '%s'", text);
			e->bad = true;
			return e;
		}
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			overflow = true;
		else
			v = v * (uint64_t)base + (uint64_t)d;
	}
	if (overflow) {
		idlc_parse_error(ps, &loc, "integer constant '%s' is too large (over 64 bits)", text);
		e->bad = true;
		return e;
	}
	e->num = (int64_t)v;
	e->big = v > (uint64_t)INT64_MAX;
	return e;
}

/* idlc_expr_name -- a name used as a number (resolved by check.c). */
idlc_expr *
idlc_expr_name(idlc_parse *ps, const char *name, idlc_loc loc)
{
	idlc_expr *e = new_node(ps, sizeof(*e));
	e->kind = IDLC_EX_NAME;
	e->loc = loc;
	e->text = name;
	e->depth = 1;
	return e;
}

/* too_deep -- e nests deeper than IDLC_MAX_EXPR_DEPTH: report it once and replace it with a
 * bad literal, so that no later pass recurses through it. */
static idlc_expr *
too_deep(idlc_parse *ps, idlc_expr *e)
{
	if (e->depth <= IDLC_MAX_EXPR_DEPTH || e->bad)
		return e;
	idlc_parse_error(ps, &e->loc, "expression nested too deeply (more than %d levels)",
	                 IDLC_MAX_EXPR_DEPTH);
	idlc_expr *z = new_node(ps, sizeof(*z));
	z->kind = IDLC_EX_NUM;
	z->loc = e->loc;
	z->text = "0";
	z->depth = 1;
	z->bad = true;
	return z;
}

/* idlc_expr_unary -- op e, for op '-', '+' or '~'. */
idlc_expr *
idlc_expr_unary(idlc_parse *ps, int op, idlc_expr *e, idlc_loc loc)
{
	idlc_expr *u = new_node(ps, sizeof(*u));
	u->kind = IDLC_EX_UNARY;
	u->op = op;
	u->lhs = e;
	u->loc = loc;
	u->depth = e->depth + 1;
	u->bad = e->bad;
	if (e->bad)
		return e;
	return too_deep(ps, u);
}

/* idlc_expr_binary -- l op r; loc is the operator's. */
idlc_expr *
idlc_expr_binary(idlc_parse *ps, int op, idlc_expr *l, idlc_expr *r, idlc_loc loc)
{
	if (l->bad)
		return l;
	if (r->bad)
		return r;
	idlc_expr *b = new_node(ps, sizeof(*b));
	b->kind = IDLC_EX_BINARY;
	b->op = op;
	b->lhs = l;
	b->rhs = r;
	b->loc = loc;
	b->depth = (l->depth > r->depth ? l->depth : r->depth) + 1;
	return too_deep(ps, b);
}

/* idlc_expr_paren -- (e): the same node, one level deeper. */
idlc_expr *
idlc_expr_paren(idlc_parse *ps, idlc_expr *e)
{
	if (e->bad)
		return e;
	e->paren = true;
	e->depth++;
	return too_deep(ps, e);
}

/* ---------------------------------------------------------------------------------------- */
/* Types, declarations, lists                                                               */
/* ---------------------------------------------------------------------------------------- */

/* idlc_type_prim -- a built-in type, spelled `spelling`. */
idlc_type *
idlc_type_prim(idlc_parse *ps, idlc_tkind k, const char *spelling, idlc_loc loc)
{
	idlc_type *t = new_node(ps, sizeof(*t));
	t->kind = k;
	t->loc = loc;
	t->spelling = spelling;
	return t;
}

/* idlc_type_named -- a type named `name`, written with tag (struct/union/enum) or not. */
idlc_type *
idlc_type_named(idlc_parse *ps, idlc_tag tag, const char *name, idlc_loc loc)
{
	idlc_type *t = new_node(ps, sizeof(*t));
	t->kind = IDLC_T_NAMED;
	t->loc = loc;
	t->name = name;
	t->tag = tag;
	t->spelling = name;
	return t;
}

/* idlc_decl_new -- a declaration of `name` with type t (NULL for void). */
idlc_decl *
idlc_decl_new(idlc_parse *ps, idlc_dkind k, idlc_type *t, const char *name, idlc_loc loc,
              idlc_expr *size)
{
	idlc_decl *d = new_node(ps, sizeof(*d));
	d->kind = k;
	d->type = t;
	d->name = name;
	d->loc = loc;
	d->size = size;
	return d;
}

/* Appending to the singly linked lists in constant time: the first node of a list keeps a
 * pointer to the last. NULL (an element error recovery dropped) is skipped. */
#define APPEND(T, list, x)                                  \
	do {                                                \
		if ((x) == NULL)                            \
			return (list);                      \
		if ((list) == NULL)                         \
			return (x);                         \
		T *last_ = (list)->last ? (list)->last : (list); \
		last_->next = (x);                          \
		(list)->last = (x)->last ? (x)->last : (x); \
		return (list);                              \
	} while (0)

/* idlc_decl_append -- list with d added at its end. */
idlc_decl *
idlc_decl_append(idlc_decl *list, idlc_decl *d)
{
	APPEND(idlc_decl, list, d);
}

/* idlc_enumerator_new -- enumerator `name` = value (NULL: implicit). */
idlc_enumerator *
idlc_enumerator_new(idlc_parse *ps, const char *name, idlc_loc loc, idlc_expr *value)
{
	idlc_enumerator *e = new_node(ps, sizeof(*e));
	e->name = name;
	e->loc = loc;
	e->value = value;
	return e;
}

/* idlc_enumerator_append -- list with e added at its end. */
idlc_enumerator *
idlc_enumerator_append(idlc_enumerator *list, idlc_enumerator *e)
{
	APPEND(idlc_enumerator, list, e);
}

/* idlc_case_new -- a case label (value NULL: default). */
idlc_case *
idlc_case_new(idlc_parse *ps, idlc_expr *value, idlc_loc loc)
{
	idlc_case *c = new_node(ps, sizeof(*c));
	c->value = value;
	c->loc = loc;
	return c;
}

/* idlc_case_append -- list with c added at its end. */
idlc_case *
idlc_case_append(idlc_case *list, idlc_case *c)
{
	APPEND(idlc_case, list, c);
}

/* idlc_arm_new -- a union arm: its labels and its declaration. */
idlc_arm *
idlc_arm_new(idlc_parse *ps, idlc_case *cases, idlc_decl *decl)
{
	idlc_arm *a = new_node(ps, sizeof(*a));
	a->cases = cases;
	a->decl = decl;
	return a;
}

/* idlc_arm_append -- list with a added at its end. */
idlc_arm *
idlc_arm_append(idlc_arm *list, idlc_arm *a)
{
	APPEND(idlc_arm, list, a);
}

/* idlc_param_new -- a procedure argument of type t, optionally named. */
idlc_param *
idlc_param_new(idlc_parse *ps, idlc_type *t, const char *name, idlc_loc loc)
{
	idlc_param *p = new_node(ps, sizeof(*p));
	p->type = t;
	p->name = name;
	p->loc = loc;
	return p;
}

/* idlc_param_sized -- see idlc.h. The message shows the declaration with its size and the
 * typedef that gives the type that size (T); a string may also drop its bound. */
idlc_param *
idlc_param_sized(idlc_parse *ps, idlc_type *t, const char *name, idlc_loc from,
                 const char *size, idlc_loc to)
{
	static const char *const tags[] = { "", "struct ", "union ", "enum " };
	const char *tag = tags[t->tag];
	idlc_loc at = from;
	if (to.file == from.file && to.line == from.line && to.col >= from.col)
		at.len = to.col + to.len - from.col;
	if (t->kind == IDLC_T_STRING && size[0] == '<')
		idlc_parse_error(ps, &at,
		                 "an argument cannot have a size: declare a type (typedef string T%s;) "
		                 "and use it, or write 'string %s' (no bound)", size, name);
	else
		idlc_parse_error(ps, &at,
		                 "an argument cannot have a size: declare a type (typedef %s%s T%s;) "
		                 "and use it", tag, t->spelling, size);
	return idlc_param_new(ps, t, name, from);
}

/* idlc_param_append -- list with p added at its end. */
idlc_param *
idlc_param_append(idlc_param *list, idlc_param *p)
{
	APPEND(idlc_param, list, p);
}

/* idlc_proc_new -- a procedure; a lone void argument means no argument. */
idlc_proc *
idlc_proc_new(idlc_parse *ps, idlc_type *result, const char *name, idlc_loc loc,
              idlc_param *params, idlc_expr *number)
{
	idlc_proc *p = new_node(ps, sizeof(*p));
	p->result = result;
	p->name = name;
	p->loc = loc;
	p->params = params;
	p->number = number;
	for (idlc_param *q = params; q != NULL; q = q->next)
		p->nparams++;
	if (p->nparams == 1 && params->type->kind == IDLC_T_VOID)
		p->nparams = 0;
	return p;
}

/* idlc_proc_append -- list with p added at its end. */
idlc_proc *
idlc_proc_append(idlc_proc *list, idlc_proc *p)
{
	APPEND(idlc_proc, list, p);
}

/* idlc_version_new -- a program version. */
idlc_version *
idlc_version_new(idlc_parse *ps, const char *name, idlc_loc loc, idlc_proc *procs,
                 idlc_expr *number)
{
	idlc_version *v = new_node(ps, sizeof(*v));
	v->name = name;
	v->loc = loc;
	v->procs = procs;
	v->number = number;
	return v;
}

/* idlc_version_append -- list with v added at its end. */
idlc_version *
idlc_version_append(idlc_version *list, idlc_version *v)
{
	APPEND(idlc_version, list, v);
}

/* ---------------------------------------------------------------------------------------- */
/* Definitions                                                                              */
/* ---------------------------------------------------------------------------------------- */

/* new_def -- a definition of kind k appended to the unit, with the next order number,
 * after the %-lines held back while it was being parsed. */
static idlc_def *
new_def(idlc_parse *ps, idlc_dfkind k, const char *name, idlc_loc loc)
{
	idlc_unit *u = ps->unit;
	if (ps->held != NULL && k != IDLC_DEF_PASSTHRU) {
		for (idlc_def *h = ps->held; h != NULL; h = h->next)
			h->order = u->order++;
		*u->tail = ps->held;
		u->tail = ps->held_tail;
		ps->held = NULL;
	}
	idlc_def *d = new_node(ps, sizeof(*d));
	d->kind = k;
	d->name = name;
	d->loc = loc;
	d->order = u->order++;
	*u->tail = d;
	u->tail = &d->next;
	return d;
}

/* idlc_def_const -- const name = value (or = the string constant str). */
void
idlc_def_const(idlc_parse *ps, const char *name, idlc_loc loc, idlc_expr *value,
               const char *str)
{
	idlc_def *d = new_def(ps, IDLC_DEF_CONST, name, loc);
	d->value = value;
	d->str = str;
}

/* idlc_def_enum -- enum name { list }. */
void
idlc_def_enum(idlc_parse *ps, const char *name, idlc_loc loc, idlc_enumerator *list)
{
	idlc_def *d = new_def(ps, IDLC_DEF_ENUM, name, loc);
	d->enums = list;
}

/* idlc_def_struct -- struct name { fields }; nothing if every field was a syntax error. */
void
idlc_def_struct(idlc_parse *ps, const char *name, idlc_loc loc, idlc_decl *fields)
{
	if (fields == NULL)
		return; /* every field was a syntax error */
	idlc_def *d = new_def(ps, IDLC_DEF_STRUCT, name, loc);
	d->fields = fields;
}

/* idlc_def_union -- union name switch (discrim) { arms }; nothing without arms. */
void
idlc_def_union(idlc_parse *ps, const char *name, idlc_loc loc, idlc_decl *discrim,
               idlc_arm *arms)
{
	if (arms == NULL)
		return;
	idlc_def *d = new_def(ps, IDLC_DEF_UNION, name, loc);
	d->discrim = discrim;
	d->arms = arms;
}

/* idlc_def_typedef -- typedef decl. */
void
idlc_def_typedef(idlc_parse *ps, idlc_decl *decl)
{
	idlc_def *d = new_def(ps, IDLC_DEF_TYPEDEF, decl->name, decl->loc);
	d->decl = decl;
}

/* idlc_def_program -- program name { vers } = number. */
void
idlc_def_program(idlc_parse *ps, const char *name, idlc_loc loc, idlc_version *vers,
                 idlc_expr *number)
{
	idlc_def *d = new_def(ps, IDLC_DEF_PROGRAM, name, loc);
	d->versions = vers;
	d->number = number;
}

/* idlc_hold_passthru -- a %-line met inside a definition: it will go before that
 * definition (rpcgen prints a %-line when it reads it, before the definition it is in). */
void
idlc_hold_passthru(idlc_parse *ps, const char *text, const idlc_loc *loc)
{
	idlc_def *d = new_node(ps, sizeof(*d));
	d->kind = IDLC_DEF_PASSTHRU;
	d->loc = *loc;
	d->text = text;
	if (ps->held == NULL)
		ps->held_tail = &ps->held;
	*ps->held_tail = d;
	ps->held_tail = &d->next;
}

/* skip_ws -- p past blanks. */
static const char *
skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/*
 * idlc_def_passthru -- a %-line. Besides being copied to the output, two kinds teach idlc
 * names: "%#include ..." (types and constants idlc cannot see may come from that header) and
 * "%#define NAME value" with a constant expression as value (NAME becomes a known constant).
 */
void
idlc_def_passthru(idlc_parse *ps, const char *text, idlc_loc loc)
{
	idlc_def *d = new_def(ps, IDLC_DEF_PASSTHRU, NULL, loc);
	d->text = text;
	if (ps->quiet)
		return;

	const char *p = skip_ws(text);
	if (*p != '#')
		return;
	p = skip_ws(p + 1);
	if (strncmp(p, "include", 7) == 0) {
		if (!ps->unit->include_seen) {
			ps->unit->include_seen = true;
			ps->unit->include_loc = loc;
		}
		return;
	}
	if (strncmp(p, "define", 6) != 0 || (p[6] != ' ' && p[6] != '\t'))
		return;
	p = skip_ws(p + 6);
	const char *name = p;
	while (*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
	       (p > name && *p >= '0' && *p <= '9'))
		p++;
	if (p == name || *p == '(')
		return; /* not a name, or a function-like macro */
	d->name = idlc_str(ps, name, (size_t)(p - name));
	/* the value, with backslash-newlines removed */
	idlc_buf v = { 0 };
	for (; *p; p++) {
		if (p[0] == '\\' && p[1] == '\n')
			p++;
		else
			idlc_buf_putc(&v, *p);
	}
	idlc_buf_putc(&v, '\0');
	d->value = idlc_parse_expr_text(ps->unit, v.data, &loc);
	idlc_buf_free(&v);
}

/* ---------------------------------------------------------------------------------------- */
/* Parsing                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* run -- parse text[0..n) with the grammar chosen by start. Returns the errors counted. */
static int
run(idlc_parse *ps, const char *text, size_t n)
{
	if (n > (size_t)0x3fffffff) {
		idlc_loc loc = { ps->file, 0, 0, 0 };
		idlc_parse_error(ps, &loc, "input too large");
		return ps->errors;
	}
	if (idlc_lex_init(ps, text, n) != 0)
		idlc_oom();
	if (idlc_yyparse(ps->scanner, ps) != 0 && ps->errors == 0)
		ps->errors++;
	idlc_lex_destroy(ps);
	return ps->errors;
}

/* idlc_parse_text -- parse cpp's output into u (see idlc.h). */
int
idlc_parse_text(idlc_unit *u, const char *text, size_t n)
{
	idlc_parse ps = { 0 };
	ps.unit = u;
	ps.diag = u->diag;
	ps.file = idlc_intern(u->input);
	ps.line = 1;
	ps.col = 1;
	ps.start_token = START_SPEC;
	int errors = run(&ps, text, n);
	if (ps.held != NULL) { /* an unfinished definition: keep its %-lines anyway */
		*u->tail = ps.held;
		u->tail = ps.held_tail;
	}
	idlc_diag_flush(u->diag);
	return errors;
}

/* idlc_parse_expr_text -- s as a constant expression, or NULL (quietly). */
idlc_expr *
idlc_parse_expr_text(idlc_unit *u, const char *s, const idlc_loc *loc)
{
	idlc_parse ps = { 0 };
	ps.unit = u;
	ps.diag = u->diag;
	ps.file = loc->file;
	ps.line = loc->line;
	ps.col = loc->col;
	ps.quiet = true;
	ps.start_token = START_EXPR;
	if (run(&ps, s, strlen(s)) != 0)
		return NULL;
	return ps.expr_result;
}

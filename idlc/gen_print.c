/*
 * idlc -- NAME_print.c (idlc --print): bool rc_print_T(FILE *f, const T *v) for every type T
 * of the .x file, writing one JSON value (no white space, no newline), and by procedure
 * NAME_print_args / NAME_print_res for tracing. The JSON (docs/idl.md, section 7c):
 *
 *   struct          an object, the .x member names as keys, in .x order
 *   union           an object: the discriminant under its .x name, then the arm under its
 *                   name (nothing more for a void arm or a value no arm takes)
 *   enum            its enumerator's name as a string; a value no enumerator has, a number
 *   integers        numbers, 64-bit ones exact (every digit); bool true/false
 *   float, double   numbers (%.9g / %.17g: they read back to the same value); NaN and the
 *                   infinities, which JSON lacks, null
 *   quadruple       a string of the 32 hex digits of its XDR encoding
 *   string<>        a JSON string: " \ and control characters escaped, valid UTF-8 copied,
 *                   any other byte as \u00XX; a NULL pointer null
 *   opaque          a string of lower-case hex digits, two per byte
 *   arrays          arrays; optional data (T *x) null or the value
 *   a list          (a struct whose last field links to itself) nested as written, printed
 *                   in a loop (constant stack)
 *   external types  null (their printers are not in view)
 *
 * Each printer returns false when writing failed (ferror), true otherwise.
 */
#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#include "idlc.h"

/* The helpers every NAME_print.c starts with (static inline: an unused one costs nothing). */
static const char helpers[] =
	"#if defined(__GNUC__)\n#define RC__P_UNUSED __attribute__((unused))\n#else\n"
	"#define RC__P_UNUSED\n#endif\n\n"
	"static inline RC__P_UNUSED bool\nrc__p_put(FILE *f, const char *s)\n{\n"
	"\treturn fputs(s, f) >= 0;\n}\n\n"
	"static inline RC__P_UNUSED bool\nrc__p_i64(FILE *f, int64_t v)\n{\n"
	"\treturn fprintf(f, \"%\" PRId64, v) >= 0;\n}\n\n"
	"static inline RC__P_UNUSED bool\nrc__p_u64(FILE *f, uint64_t v)\n{\n"
	"\treturn fprintf(f, \"%\" PRIu64, v) >= 0;\n}\n\n"
	"/* digits: 9 for a float, 17 for a double (enough to read the same value back) */\n"
	"static inline RC__P_UNUSED bool\nrc__p_real(FILE *f, double v, int digits)\n{\n"
	"\tif (isnan(v) || isinf(v))\n\t\treturn rc__p_put(f, \"null\");\n"
	"\treturn fprintf(f, \"%.*g\", digits, v) >= 0;\n}\n\n"
	"/* n bytes as a string of hex digits; NULL (with n > 0) as null */\n"
	"static inline RC__P_UNUSED bool\nrc__p_hex(FILE *f, const void *p, size_t n)\n{\n"
	"\tstatic const char digit[] = \"0123456789abcdef\";\n"
	"\tconst unsigned char *b = p;\n\n"
	"\tif (b == NULL && n > 0)\n\t\treturn rc__p_put(f, \"null\");\n"
	"\tputc('\"', f);\n"
	"\tfor (size_t i = 0; i < n; i++) {\n"
	"\t\tputc(digit[b[i] >> 4], f);\n"
	"\t\tputc(digit[b[i] & 15], f);\n"
	"\t}\n"
	"\treturn putc('\"', f) != EOF && !ferror(f);\n}\n\n"
	"/* the length of the valid UTF-8 sequence at s (2 to 4 bytes), 0 if there is none */\n"
	"static inline RC__P_UNUSED size_t\nrc__p_utf8(const unsigned char *s)\n{\n"
	"\tunsigned lo = 0x80, hi = 0xbf;\n"
	"\tsize_t n;\n\n"
	"\tif (s[0] >= 0xc2 && s[0] <= 0xdf)\n\t\tn = 2;\n"
	"\telse if (s[0] >= 0xe0 && s[0] <= 0xef)\n"
	"\t\tn = 3, lo = s[0] == 0xe0 ? 0xa0 : lo, hi = s[0] == 0xed ? 0x9f : hi;\n"
	"\telse if (s[0] >= 0xf0 && s[0] <= 0xf4)\n"
	"\t\tn = 4, lo = s[0] == 0xf0 ? 0x90 : lo, hi = s[0] == 0xf4 ? 0x8f : hi;\n"
	"\telse\n\t\treturn 0;\n"
	"\tif (s[1] < lo || s[1] > hi)\n\t\treturn 0;\n"
	"\tfor (size_t i = 2; i < n; i++)\n"
	"\t\tif (s[i] < 0x80 || s[i] > 0xbf)\n\t\t\treturn 0;\n"
	"\treturn n;\n}\n\n"
	"/* a C string as a JSON string (see the top of this file); NULL as null */\n"
	"static inline RC__P_UNUSED bool\nrc__p_str(FILE *f, const char *s)\n{\n"
	"\tconst unsigned char *p = (const unsigned char *)s;\n"
	"\tsize_t n;\n\n"
	"\tif (s == NULL)\n\t\treturn rc__p_put(f, \"null\");\n"
	"\tputc('\"', f);\n"
	"\twhile (*p != 0) {\n"
	"\t\tif (*p == '\"' || *p == '\\\\') {\n"
	"\t\t\tputc('\\\\', f);\n\t\t\tputc(*p++, f);\n"
	"\t\t} else if (*p >= 0x20 && *p < 0x80) {\n"
	"\t\t\tputc(*p++, f);\n"
	"\t\t} else if (*p >= 0x80 && (n = rc__p_utf8(p)) > 0) {\n"
	"\t\t\tfwrite(p, 1, n, f);\n\t\t\tp += n;\n"
	"\t\t} else {\n"
	"\t\t\tfprintf(f, \"\\\\u%04x\", *p++);\n"
	"\t\t}\n"
	"\t}\n"
	"\treturn putc('\"', f) != EOF && !ferror(f);\n}\n\n"
	"/* a value of an external type: its printer is not in view */\n"
	"static inline RC__P_UNUSED bool\nrc__p_ext(FILE *f, const void *p)\n{\n"
	"\t(void)p;\n\treturn rc__p_put(f, \"null\");\n}\n\n"
	"/* a quadruple as the hex digits of its 16 XDR bytes */\n"
	"static inline RC__P_UNUSED bool\nrc__p_quad(FILE *f, const rc_quadruple *q)\n{\n"
	"\tunsigned char b[16];\n"
	"\trc_quadruple v = *q;\n"
	"\trc_xdr x;\n\n"
	"\trc_xdrmem_create(&x, b, sizeof b, RC_XDR_ENCODE);\n"
	"\tif (!rc_xdr_quadruple(&x, &v))\n\t\treturn rc__p_put(f, \"null\");\n"
	"\treturn rc__p_hex(f, b, sizeof b);\n}\n";

/* fmt -- printf into a string of the unit's arena. */
static const char *fmt(idlc_gen *g, const char *f, ...) IDLC_PRINTF(2, 3);

static const char *
fmt(idlc_gen *g, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	const char *s = idlc_gen_vstr(g, f, ap);
	va_end(ap);
	return s;
}

/* check -- "if (!EXPR)\n\treturn false;" at indent. */
static void
check(idlc_gen *g, int indent, const char *expr)
{
	idlc_indent(g->out, indent);
	idlc_buf_printf(g->out, "if (!%s)\n", expr);
	idlc_indent(g->out, indent + 1);
	idlc_buf_puts(g->out, "return false;\n");
}

/* put -- check(rc__p_put(f, "TEXT")), TEXT given as C string contents. */
static void
put(idlc_gen *g, int indent, const char *text)
{
	check(g, indent, fmt(g, "rc__p_put(f, \"%s\")", text));
}

/* value -- a C expression (true on success) printing one value of type t: the object is
 * val, its address at. */
static const char *
value(idlc_gen *g, const idlc_type *t, const char *val, const char *at)
{
	switch (t->kind) {
	case IDLC_T_VOID:
		return "rc__p_put(f, \"null\")";
	case IDLC_T_INT: case IDLC_T_HYPER: case IDLC_T_CHAR: case IDLC_T_SHORT:
		return fmt(g, "rc__p_i64(f, (int64_t)%s)", val);
	case IDLC_T_UINT: case IDLC_T_UHYPER: case IDLC_T_UCHAR: case IDLC_T_USHORT:
		return fmt(g, "rc__p_u64(f, (uint64_t)%s)", val);
	case IDLC_T_BOOL:
		return fmt(g, "rc__p_put(f, %s ? \"true\" : \"false\")", val);
	case IDLC_T_FLOAT:
		return fmt(g, "rc__p_real(f, (double)%s, 9)", val);
	case IDLC_T_DOUBLE:
		return fmt(g, "rc__p_real(f, %s, 17)", val);
	case IDLC_T_QUAD:
		return fmt(g, "rc__p_quad(f, %s)", at);
	case IDLC_T_STRING:
		return fmt(g, "rc__p_str(f, %s)", val);
	case IDLC_T_OPAQUE:
		return "rc__p_put(f, \"null\")";
	case IDLC_T_NAMED:
		break;
	}
	if (t->sym != NULL && t->sym->kind == IDLC_S_PRELUDE && t->sym->pre != NULL) {
		if (t->sym->pre->special == IDLC_PRE_NETOBJ)
			return fmt(g, "rc__p_hex(f, (%s)->n_bytes, (%s)->n_len)", at, at);
		if (t->sym->pre->special == IDLC_PRE_DES_BLOCK)
			return fmt(g, "rc__p_hex(f, (%s)->c, 8)", at);
	}
	if (idlc_type_def(t) == NULL) /* external: no printer in view */
		return fmt(g, "rc__p_ext(f, %s)", at);
	return fmt(g, "rc_print_%s(f, %s)", t->name, at);
}

/* size -- the C text of d's count. */
static const char *
size(idlc_gen *g, const idlc_decl *d)
{
	idlc_buf b = { 0 };
	idlc_emit_expr(&b, d->size);
	const char *s = idlc_arena_strdup(&g->unit->arena, b.data);
	idlc_buf_free(&b);
	return s;
}

/* array -- "[e,e,...]" over elems[0..count); a variable array's elems may be NULL (none). */
static void
array(idlc_gen *g, const idlc_type *t, const char *elems, const char *count, bool var,
      int indent)
{
	put(g, indent, "[");
	idlc_indent(g->out, indent);
	idlc_buf_printf(g->out, "for (size_t rc__i = 0; %s%s%src__i < (size_t)(%s); rc__i++) {\n",
	                var ? elems : "", var ? " != NULL && " : "", "", count);
	check(g, indent + 1, "(rc__i == 0 || rc__p_put(f, \",\"))");
	const char *el = fmt(g, "(%s)[rc__i]", elems);
	check(g, indent + 1, value(g, t, el, fmt(g, "&%s", el)));
	idlc_indent(g->out, indent);
	idlc_buf_puts(g->out, "}\n");
	put(g, indent, "]");
}

/* decl -- statements printing the object of declaration d, named val (the object), at (its
 * address) and memb (the prefix of its members), as in idlc_emit_xdr_decl. */
static void
decl(idlc_gen *g, const idlc_decl *d, const char *val, const char *at, const char *memb,
     int indent)
{
	const idlc_type *t = d->type;
	if (idlc_decl_empty(d)) {
		put(g, indent, t->kind == IDLC_T_OPAQUE ? "\\\"\\\"" : "[]");
		return;
	}
	switch (d->kind) {
	case IDLC_D_VOID:
		put(g, indent, "null");
		return;
	case IDLC_D_PLAIN:
		check(g, indent, value(g, t, val, at));
		return;
	case IDLC_D_FIXED:
		if (t->kind == IDLC_T_OPAQUE)
			check(g, indent, fmt(g, "rc__p_hex(f, %s, %s)", val, size(g, d)));
		else
			array(g, t, val, size(g, d), false, indent);
		return;
	case IDLC_D_VAR:
		if (t->kind == IDLC_T_STRING)
			check(g, indent, fmt(g, "rc__p_str(f, %s)", val));
		else if (t->kind == IDLC_T_OPAQUE)
			check(g, indent, fmt(g, "rc__p_hex(f, %s%s_val, %s%s_len)", memb, d->name, memb,
			                     d->name));
		else
			array(g, t, fmt(g, "%s%s_val", memb, d->name), fmt(g, "%s%s_len", memb, d->name),
			      true, indent);
		return;
	case IDLC_D_PTR:
		idlc_indent(g->out, indent);
		idlc_buf_printf(g->out, "if (%s == NULL) {\n", val);
		put(g, indent + 1, "null");
		idlc_indent(g->out, indent);
		idlc_buf_puts(g->out, "} else {\n");
		check(g, indent + 1, value(g, t, fmt(g, "(*%s)", val), val));
		idlc_indent(g->out, indent);
		idlc_buf_puts(g->out, "}\n");
		return;
	}
}

/* field -- the key of field f ("{" before the first, "," before the others) and its value;
 * prefix: "" for a struct's fields, "NAME_u." for a union's arms. */
static void
field(idlc_gen *g, const idlc_decl *f, const char *prefix, bool first, int indent)
{
	put(g, indent, fmt(g, "%s\\\"%s\\\":", first ? "{" : ",", f->name));
	decl(g, f, fmt(g, "v->%s%s", prefix, f->name), fmt(g, "&v->%s%s", prefix, f->name),
	     fmt(g, "v->%s%s.", prefix, f->name), indent);
}

/* open_printer -- "bool\nrc_print_NAME(FILE *f, const NAME *v)\n{\n" */
static void
open_printer(idlc_gen *g, const char *name)
{
	idlc_buf_printf(g->out, "\nbool\nrc_print_%s(FILE *f, const %s *v)\n{\n", name, name);
}

/* gen_struct -- an object of the fields; a list in a loop (see the top of this file). */
static void
gen_struct(idlc_gen *g, const idlc_def *d)
{
	const idlc_decl *next = d->list_next;
	bool first = true;
	open_printer(g, d->name);
	if (d->no_members)
		idlc_buf_puts(g->out, "\t(void)v;\n");
	if (next == NULL) {
		for (const idlc_decl *f = d->fields; f != NULL; f = f->next, first = false)
			field(g, f, "", first, 1);
		idlc_buf_puts(g->out, "\treturn rc__p_put(f, \"}\");\n}\n");
		return;
	}
	idlc_buf_puts(g->out, "\t/* a list: printed in a loop, each node inside the one before */\n"
	                      "\tsize_t rc__open = 0;\n\n\tfor (;;) {\n\t\trc__open++;\n");
	for (const idlc_decl *f = d->fields; f != NULL; f = f->next, first = false)
		if (f != next)
			field(g, f, "", first, 2);
	put(g, 2, fmt(g, "%s\\\"%s\\\":", first ? "{" : ",", next->name));
	idlc_buf_printf(g->out, "\t\tif (v->%s == NULL)\n\t\t\tbreak;\n\t\tv = v->%s;\n\t}\n",
	                next->name, next->name);
	put(g, 1, "null");
	idlc_buf_puts(g->out, "\tfor (; rc__open > 0; rc__open--)\n");
	check(g, 2, "rc__p_put(f, \"}\")");
	idlc_buf_puts(g->out, "\treturn true;\n}\n");
}

/* gen_union -- {"discriminant": d, "arm": value} over a switch like xdr_NAME's. */
static void
gen_union(idlc_gen *g, const idlc_def *d)
{
	const idlc_def *en;
	const idlc_type *rt = idlc_resolve_alias(d->discrim->type, &en);
	const char *prefix = fmt(g, "%s_u.", d->name);

	open_printer(g, d->name);
	field(g, d->discrim, "", true, 1);
	idlc_buf_printf(g->out, "\tswitch (%sv->%s) {\n", rt->kind == IDLC_T_BOOL ? "(int)" : "",
	                d->discrim->name);
	for (const idlc_arm *a = d->arms; a != NULL; a = a->next) {
		if (a->decl == NULL)
			continue;
		for (const idlc_case *c = a->cases; c != NULL; c = c->next) {
			if (c->value == NULL) {
				idlc_buf_puts(g->out, "\tdefault:\n");
			} else {
				idlc_buf_puts(g->out, "\tcase ");
				idlc_emit_expr(g->out, c->value);
				idlc_buf_puts(g->out, ":\n");
			}
		}
		if (a->decl->kind != IDLC_D_VOID)
			field(g, a->decl, prefix, false, 2);
		idlc_buf_puts(g->out, "\t\tbreak;\n");
	}
	if (!d->has_default)
		idlc_buf_puts(g->out, "\tdefault:\n\t\tbreak; /* no arm for this discriminant */\n");
	idlc_buf_puts(g->out, "\t}\n\treturn rc__p_put(f, \"}\");\n}\n");
}

/* gen_enum -- the enumerator's name; a number for a value none has. */
static void
gen_enum(idlc_gen *g, const idlc_def *d)
{
	open_printer(g, d->name);
	for (const idlc_enumerator *e = d->enums; e != NULL; e = e->next)
		idlc_buf_printf(g->out, "\tif (*v == %s)\n\t\treturn rc__p_put(f, \"\\\"%s\\\"\");\n",
		                e->name, e->name);
	idlc_buf_puts(g->out, "\treturn rc__p_i64(f, (int64_t)*v);\n}\n");
}

/* gen_typedef -- the declaration, through v. */
static void
gen_typedef(idlc_gen *g, const idlc_def *d)
{
	open_printer(g, d->name);
	if (idlc_decl_empty(d->decl))
		idlc_buf_puts(g->out, "\t(void)v;\n");
	decl(g, d->decl, "(*v)", "v", "v->", 1);
	idlc_buf_puts(g->out, "\treturn true;\n}\n");
}

/* idlc_print_prefix -- see idlc.h. */
const char *
idlc_print_prefix(idlc_gen *g)
{
	char *s = idlc_arena_strdup(&g->unit->arena, g->base);
	for (char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p))
			*p = '_';
	if (isdigit((unsigned char)s[0]))
		return fmt(g, "_%s", s);
	return s;
}

/* gen_by_proc -- NAME_print_args (res false) or NAME_print_res: a switch over every
 * procedure of every program version. */
static void
gen_by_proc(idlc_gen *g, bool res)
{
	idlc_buf *b = g->out;
	const char *what = res ? "res" : "args";
	idlc_buf_printf(b, "\nbool\n%s_print_%s(FILE *f, uint32_t prog, uint32_t vers, uint32_t proc, "
	                "const void *%s)\n{\n\t(void)%s;\n", idlc_print_prefix(g), what, what, what);
	for (const idlc_def *d = g->unit->defs; d != NULL; d = d->next) {
		if (d->kind != IDLC_DEF_PROGRAM)
			continue;
		for (const idlc_version *v = d->versions; v != NULL; v = v->next) {
			idlc_buf_printf(b, "\tif (prog == %" PRIu32 "u && vers == %" PRIu32 "u) {\n"
			                "\t\tswitch (proc) {\n", d->num, v->num);
			for (const idlc_proc *p = v->procs; p != NULL; p = p->next) {
				idlc_buf_printf(b, "\t\tcase %" PRIu32 "u: /* %s */\n", p->num, p->name);
				if (!res && p->nparams > 1) {
					const char *an = fmt(g, "%s_argument", idlc_proc_cname(g, p));
					idlc_buf_printf(b, "\t\t\t{\n\t\t\t\tconst %s *a = args;\n\n", an);
					int i = 1;
					for (const idlc_param *a = p->params; a != NULL; a = a->next, i++) {
						put(g, 4, i == 1 ? "[" : ",");
						check(g, 4, value(g, a->type, fmt(g, "a->arg%d", i),
						                  fmt(g, "&a->arg%d", i)));
					}
					idlc_buf_puts(b, "\t\t\t\treturn rc__p_put(f, \"]\");\n\t\t\t}\n");
					continue;
				}
				const idlc_type *t = res ? p->result : p->nparams ? p->params->type : NULL;
				if (t == NULL || t->kind == IDLC_T_VOID) {
					idlc_buf_puts(b, "\t\t\treturn rc__p_put(f, \"null\");\n");
					continue;
				}
				const char *at = fmt(g, "((%s const *)%s)", idlc_param_ctype(g, t), what);
				idlc_buf_printf(b, "\t\t\treturn %s;\n", value(g, t, fmt(g, "(*%s)", at), at));
			}
			idlc_buf_puts(b, "\t\tdefault:\n\t\t\tbreak;\n\t\t}\n\t}\n");
		}
	}
	idlc_buf_puts(b, "\treturn false;\n}\n");
}

/* idlc_emit_print_decls -- see idlc.h. */
void
idlc_emit_print_decls(idlc_gen *g, const idlc_def *d)
{
	idlc_buf *b = g->out;
	if (d == NULL) {
		const char *n = idlc_print_prefix(g);
		idlc_emit_comment(b, 0, "NAME_print.c (idlc --print): a call's arguments or results as "
		                  "one JSON value, by procedure -- null for void, an array for several "
		                  "arguments; false for a procedure not in this file or a failed write.");
		idlc_buf_printf(b, "bool %s_print_args(FILE *f, uint32_t prog, uint32_t vers, "
		                "uint32_t proc, const void *args);\n", n);
		idlc_buf_printf(b, "bool %s_print_res(FILE *f, uint32_t prog, uint32_t vers, "
		                "uint32_t proc, const void *res);\n", n);
		return;
	}
	if (d->kind != IDLC_DEF_ENUM && d->kind != IDLC_DEF_STRUCT && d->kind != IDLC_DEF_UNION &&
	    (d->kind != IDLC_DEF_TYPEDEF || d->self_alias))
		return;
	idlc_buf_printf(b, "bool rc_print_%s(FILE *f, const %s *v);\n", d->name, d->name);
}

/* gen_type -- the printer of type definition d. */
static void
gen_type(idlc_gen *g, const idlc_def *d)
{
	if (d->kind == IDLC_DEF_ENUM)
		gen_enum(g, d);
	else if (d->kind == IDLC_DEF_STRUCT)
		gen_struct(g, d);
	else if (d->kind == IDLC_DEF_UNION)
		gen_union(g, d);
	else
		gen_typedef(g, d);
}

/* idlc_for_each_type -- see idlc.h. */
void
idlc_for_each_type(idlc_gen *g, void (*fn)(idlc_gen *, const idlc_def *))
{
	for (const idlc_def *d = g->unit->defs; d != NULL; d = d->next)
		if (d->kind == IDLC_DEF_ENUM || d->kind == IDLC_DEF_STRUCT ||
		    d->kind == IDLC_DEF_UNION || (d->kind == IDLC_DEF_TYPEDEF && !d->self_alias))
			fn(g, d);
}

/* idlc_gen_print -- NAME_print.c (see the top of this file). */
void
idlc_gen_print(idlc_gen *g)
{
	idlc_gen_banner(g, fmt(g, "%s_print.c", g->base));
	idlc_buf_printf(g->out, "#include <inttypes.h>\n#include <math.h>\n\n#include \"%s\"\n\n%s",
	                g->header, helpers);
	idlc_for_each_type(g, gen_type);
	if (idlc_for_each_version(g, NULL) > 0) {
		gen_by_proc(g, false);
		gen_by_proc(g, true);
	}
}

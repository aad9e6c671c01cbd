/*
 * idlc -- name resolution and semantic checks, a unit (one parse) at a time.
 *
 * Names share one namespace, as they do in the generated C: constants, enumerators, types,
 * program/version/procedure names (each becomes a #define or a typedef). Lookup order:
 * this unit's definitions and %#defines, then the header pass's (the .c files include the
 * header), then the prelude (names Sun's headers give every rpcgen user: TRUE, u_int,
 * netobj, ...). A name found nowhere is an error -- unless a %#include line may provide it,
 * or it is written "struct X": then idlc assumes it, as rpcgen does, with a warning.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "idlc.h"

/* ---------------------------------------------------------------------------------------- */
/* The prelude                                                                              */
/* ---------------------------------------------------------------------------------------- */

/* netobj's and des_block's declaration: the same string, so the header includes it once */
static const char SUNTYPES_DECL[] =
	"/* Sun's netobj (opaque<MAX_NETOBJ_SZ>) and des_block (opaque[8]), with their XDR\n"
	" * routines xdr_netobj and xdr_des_block */\n"
	"#include <remotecall/suntypes.h>\n";

static const idlc_prelude prelude[] = {
	/* constants */
	{ "TRUE", false, IDLC_T_VOID, 0, 1, "#ifndef TRUE\n#define TRUE 1\n#endif\n" },
	{ "FALSE", false, IDLC_T_VOID, 0, 0, "#ifndef FALSE\n#define FALSE 0\n#endif\n" },
	{ "MAXNETNAMELEN", false, IDLC_T_VOID, 0, 255,
	  "#ifndef MAXNETNAMELEN\n#define MAXNETNAMELEN 255\n#endif\n" },
	{ "MAX_NETOBJ_SZ", false, IDLC_T_VOID, 0, 1024,
	  "#ifndef MAX_NETOBJ_SZ\n#define MAX_NETOBJ_SZ 1024\n#endif\n" },
	/* the RFC 5531 authentication flavors of <rpc/auth.h>, spelled as libtirpc does */
	{ "AUTH_NONE", false, IDLC_T_VOID, 0, 0, "#ifndef AUTH_NONE\n#define AUTH_NONE 0\n#endif\n" },
	{ "AUTH_NULL", false, IDLC_T_VOID, 0, 0, "#ifndef AUTH_NULL\n#define AUTH_NULL 0\n#endif\n" },
	{ "AUTH_SYS", false, IDLC_T_VOID, 0, 1, "#ifndef AUTH_SYS\n#define AUTH_SYS 1\n#endif\n" },
	{ "AUTH_UNIX", false, IDLC_T_VOID, 0, 1,
	  "#ifndef AUTH_UNIX\n#ifndef AUTH_SYS\n#define AUTH_SYS 1\n#endif\n"
	  "#define AUTH_UNIX AUTH_SYS\n#endif\n" },
	{ "AUTH_SHORT", false, IDLC_T_VOID, 0, 2,
	  "#ifndef AUTH_SHORT\n#define AUTH_SHORT 2\n#endif\n" },
	{ "AUTH_DH", false, IDLC_T_VOID, 0, 3, "#ifndef AUTH_DH\n#define AUTH_DH 3\n#endif\n" },
	{ "AUTH_DES", false, IDLC_T_VOID, 0, 3,
	  "#ifndef AUTH_DES\n#ifndef AUTH_DH\n#define AUTH_DH 3\n#endif\n"
	  "#define AUTH_DES AUTH_DH\n#endif\n" },
	{ "AUTH_KERB", false, IDLC_T_VOID, 0, 4, "#ifndef AUTH_KERB\n#define AUTH_KERB 4\n#endif\n" },
	{ "RPCSEC_GSS", false, IDLC_T_VOID, 0, 6,
	  "#ifndef RPCSEC_GSS\n#define RPCSEC_GSS 6\n#endif\n" },
	/* integer type names of Sun's <rpc/types.h> and <stdint.h> */
	{ "u_int", true, IDLC_T_UINT, 0, 0, NULL },
	{ "u_long", true, IDLC_T_UINT, 0, 0, NULL },
	{ "uint32_t", true, IDLC_T_UINT, 0, 0, NULL },
	{ "u_int32_t", true, IDLC_T_UINT, 0, 0, NULL },
	{ "u_int32", true, IDLC_T_UINT, 0, 0, NULL },
	{ "int32_t", true, IDLC_T_INT, 0, 0, NULL },
	{ "int32", true, IDLC_T_INT, 0, 0, NULL },
	{ "enum_t", true, IDLC_T_INT, 0, 0, NULL },
	{ "bool_t", true, IDLC_T_BOOL, 0, 0, NULL },
	{ "int64_t", true, IDLC_T_HYPER, 0, 0, NULL },
	{ "quad_t", true, IDLC_T_HYPER, 0, 0, NULL },
	{ "longlong_t", true, IDLC_T_HYPER, 0, 0, NULL },
	{ "uint64_t", true, IDLC_T_UHYPER, 0, 0, NULL },
	{ "u_int64_t", true, IDLC_T_UHYPER, 0, 0, NULL },
	{ "u_quad_t", true, IDLC_T_UHYPER, 0, 0, NULL },
	{ "u_longlong_t", true, IDLC_T_UHYPER, 0, 0, NULL },
	{ "int16_t", true, IDLC_T_SHORT, 0, 0, NULL },
	{ "uint16_t", true, IDLC_T_USHORT, 0, 0, NULL },
	{ "u_int16_t", true, IDLC_T_USHORT, 0, 0, NULL },
	{ "u_short", true, IDLC_T_USHORT, 0, 0, NULL },
	{ "u_char", true, IDLC_T_UCHAR, 0, 0, NULL },
	{ "uint8_t", true, IDLC_T_UCHAR, 0, 0, NULL },
	{ "u_int8_t", true, IDLC_T_UCHAR, 0, 0, NULL },
	{ "rpcprog_t", true, IDLC_T_UINT, 0, 0, NULL },
	{ "rpcvers_t", true, IDLC_T_UINT, 0, 0, NULL },
	{ "rpcproc_t", true, IDLC_T_UINT, 0, 0, NULL },
	{ "rpcprot_t", true, IDLC_T_UINT, 0, 0, NULL },
	{ "rpcport_t", true, IDLC_T_UINT, 0, 0, NULL },
	/* Sun's counted byte string and DES block: their one definition is remotecall's (shared
	 * with <remotecall/sunrpc.h>, so a port may include both); one #include for the two */
	{ "netobj", true, IDLC_T_NAMED, IDLC_PRE_NETOBJ, 0, SUNTYPES_DECL },
	{ "des_block", true, IDLC_T_NAMED, IDLC_PRE_DES_BLOCK, 0, SUNTYPES_DECL },
};

/* ---------------------------------------------------------------------------------------- */
/* Symbol tables                                                                            */
/* ---------------------------------------------------------------------------------------- */


/* tab_get -- the symbol `name` of t, or NULL. */
static idlc_sym *
tab_get(const idlc_symtab *t, const char *name)
{
	if (t->cap == 0)
		return NULL;
	size_t i = idlc_strhash(name) & (t->cap - 1);
	while (t->slots[i] != NULL) {
		if (strcmp(t->slots[i]->name, name) == 0)
			return t->slots[i];
		i = (i + 1) & (t->cap - 1);
	}
	return NULL;
}

/* tab_put -- add s to t, or replace the symbol of the same name. */
static void
tab_put(idlc_symtab *t, idlc_sym *s)
{
	if ((t->count + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		idlc_sym **slots = idlc_xcalloc(cap, sizeof(*slots));
		for (size_t i = 0; i < t->cap; i++) {
			if (t->slots[i] == NULL)
				continue;
			size_t j = idlc_strhash(t->slots[i]->name) & (cap - 1);
			while (slots[j] != NULL)
				j = (j + 1) & (cap - 1);
			slots[j] = t->slots[i];
		}
		free(t->slots);
		t->slots = slots;
		t->cap = cap;
	}
	size_t i = idlc_strhash(s->name) & (t->cap - 1);
	while (t->slots[i] != NULL) {
		if (strcmp(t->slots[i]->name, s->name) == 0) {
			t->slots[i] = s;
			return;
		}
		i = (i + 1) & (t->cap - 1);
	}
	t->slots[i] = s;
	t->count++;
}

/* idlc_unit_init -- an empty unit (see idlc.h). */
void
idlc_unit_init(idlc_unit *u, idlc_pass p, idlc_diag *d, const char *input)
{
	memset(u, 0, sizeof(*u));
	u->pass = p;
	u->diag = d;
	u->tail = &u->defs;
	u->input = input;
}

/* idlc_unit_free -- free u's arena and symbol table. */
void
idlc_unit_free(idlc_unit *u)
{
	idlc_arena_free(&u->arena);
	free(u->syms.slots);
	memset(&u->syms, 0, sizeof(u->syms));
	u->defs = NULL;
	u->tail = &u->defs;
}

/* new_sym -- a symbol of u (arena-allocated), not yet in the table. */
static idlc_sym *
new_sym(idlc_unit *u, idlc_skind k, const char *name, const idlc_loc *loc, int order)
{
	idlc_sym *s = idlc_arena_alloc(&u->arena, sizeof(*s));
	s->kind = k;
	s->name = name;
	if (loc)
		s->loc = *loc;
	s->order = order;
	s->ready = order;
	s->owner = u;
	return s;
}

/* prelude_sym -- the symbol of prelude entry `name` in u (created on first use), or NULL. */
static idlc_sym *
prelude_sym(idlc_unit *u, const char *name)
{
	for (size_t i = 0; i < sizeof prelude / sizeof prelude[0]; i++) {
		if (strcmp(prelude[i].name, name) != 0)
			continue;
		idlc_sym *s = new_sym(u, IDLC_S_PRELUDE, prelude[i].name, NULL, -1);
		s->pre = &prelude[i];
		s->is_type = prelude[i].is_type;
		s->known = true;
		s->value = prelude[i].value;
		s->state = 2;
		s->ready = -1;
		tab_put(&u->syms, s);
		return s;
	}
	return NULL;
}

/* idlc_sym_lookup -- see idlc.h. */
idlc_sym *
idlc_sym_lookup(idlc_unit *u, const char *name)
{
	idlc_sym *s = tab_get(&u->syms, name);
	if (s != NULL)
		return s;
	if (u->env != NULL) {
		s = tab_get(&u->env->syms, name);
		if (s != NULL && !(s->kind == IDLC_S_EXTERN && s->undefined))
			return s;
	}
	return prelude_sym(u, name);
}

/* ---------------------------------------------------------------------------------------- */
/* Helpers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* idlc_lower -- a lower-case copy of s in arena a. */
char *
idlc_lower(idlc_arena *a, const char *s)
{
	char *p = idlc_arena_strdup(a, s);
	for (char *q = p; *q; q++)
		if (*q >= 'A' && *q <= 'Z')
			*q = (char)(*q - 'A' + 'a');
	return p;
}

/* idlc_type_def -- the definition a named type refers to, or NULL. */
const idlc_def *
idlc_type_def(const idlc_type *t)
{
	if (t == NULL || t->kind != IDLC_T_NAMED || t->sym == NULL)
		return NULL;
	if (t->sym->kind != IDLC_S_TYPE)
		return NULL;
	return t->sym->def;
}

/* idlc_resolve_alias -- follow plain typedef aliases from t (see idlc.h). */
const idlc_type *
idlc_resolve_alias(const idlc_type *t, const idlc_def **out_def)
{
	const idlc_def *d = NULL;
	for (int guard = 0; guard < 100000; guard++) {
		d = idlc_type_def(t);
		if (d == NULL || d->kind != IDLC_DEF_TYPEDEF || d->decl->kind != IDLC_D_PLAIN)
			break;
		t = d->decl->type;
	}
	if (out_def)
		*out_def = d;
	return t;
}

/* sym_kind_name -- what kind of name s is, for messages. */
static const char *
sym_kind_name(const idlc_sym *s)
{
	switch (s->kind) {
	case IDLC_S_CONST: return "a constant";
	case IDLC_S_ENUMVAL: return "an enumerator";
	case IDLC_S_TYPE:
		switch (s->def->kind) {
		case IDLC_DEF_ENUM: return "an enum";
		case IDLC_DEF_STRUCT: return "a struct";
		case IDLC_DEF_UNION: return "a union";
		default: return "a typedef";
		}
	case IDLC_S_PROG: return "a program";
	case IDLC_S_VERS: return "a version";
	case IDLC_S_PROC: return "a procedure";
	case IDLC_S_PCTDEF: return "a %#define";
	case IDLC_S_PRELUDE: return s->is_type ? "a type" : "a constant";
	case IDLC_S_EXTERN: return s->is_type ? "a type" : "a constant";
	}
	return "a name";
}

/* tag_name -- "struct", "union" or "enum". */
static const char *
tag_name(idlc_tag t)
{
	switch (t) {
	case IDLC_TAG_STRUCT: return "struct";
	case IDLC_TAG_UNION: return "union";
	case IDLC_TAG_ENUM: return "enum";
	default: return "";
	}
}

/* note_defined -- "note: 'X' is defined here" pointing at s, when s has a location. */
static void
note_defined(idlc_unit *u, const idlc_sym *s, const char *what)
{
	if (s->loc.file != NULL)
		idlc_note(u->diag, &s->loc, "%s%s'%s' is %s here", what, *what ? " " : "", s->name,
		          s->kind == IDLC_S_EXTERN ? "declared" : "defined");
}

/* ---------------------------------------------------------------------------------------- */
/* Names the generated C could not use                                                      */
/* ---------------------------------------------------------------------------------------- */

static const char *const c_keywords[] = {
	"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
	"enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
	"restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
	"typedef", "union", "unsigned", "void", "volatile", "while", "_Alignas", "_Alignof",
	"_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary", "_Noreturn", "_Static_assert",
	"_Thread_local",
};

/* what <remotecall/remotecall.h> brings in (stdbool.h, stddef.h, stdint.h) and memcpy */
static const char *const std_names[] = {
	"bool", "true", "false", "NULL", "offsetof", "size_t", "ptrdiff_t", "wchar_t",
	"max_align_t", "SIZE_MAX", "PTRDIFF_MIN", "PTRDIFF_MAX", "WCHAR_MIN", "WCHAR_MAX",
	"WINT_MIN", "WINT_MAX", "SIG_ATOMIC_MIN", "SIG_ATOMIC_MAX", "intmax_t", "uintmax_t",
	"intptr_t", "uintptr_t", "INTMAX_MIN", "INTMAX_MAX", "UINTMAX_MAX", "INTPTR_MIN",
	"INTPTR_MAX", "UINTPTR_MAX", "INTMAX_C", "UINTMAX_C", "memcpy",
};

/* the parameters of the generated functions: no macro may have these names... */
static const char *const gen_params[] = {
	"xdrs", "objp", "clnt", "arg", "res", "req", "srv", "ctx",
};
/* ...and no type or enumerator these, which a later parameter's type could need */
static const char *const gen_first_params[] = { "xdrs", "objp", "clnt", "arg" };

/* stdint_name -- [u]int[_least|_fast]N_t, [U]INT[_LEAST|_FAST]N_{MAX,MIN,C}. */
static bool
stdint_name(const char *s)
{
	bool upper = s[0] == 'U' || s[0] == 'I';
	if (*s == 'u' || *s == 'U')
		s++;
	if (strncmp(s, upper ? "INT" : "int", 3) != 0)
		return false;
	s += 3;
	if (strncmp(s, upper ? "_LEAST" : "_least", 6) == 0)
		s += 6;
	else if (strncmp(s, upper ? "_FAST" : "_fast", 5) == 0)
		s += 5;
	if (*s < '0' || *s > '9')
		return false;
	while (*s >= '0' && *s <= '9')
		s++;
	if (!upper)
		return strcmp(s, "_t") == 0;
	return strcmp(s, "_MAX") == 0 || strcmp(s, "_MIN") == 0 || strcmp(s, "_C") == 0;
}

/* What a name names, for reserved(). */
typedef enum { NAME_MEMBER, NAME_TYPE, NAME_MACRO } name_use;

/*
 * reserved -- why `name` cannot name something in the generated C, or NULL if it can.
 * Members (fields, arms) live inside structs and only avoid keywords and library macros
 * (remotecall's rc_/RC_ prefix is reserved only for top-level names);
 * types and enumerators must not hide the generated functions' first parameters; macros
 * (constants, program, version and procedure names) must not replace any parameter.
 */
static const char *
reserved(const char *name, name_use use)
{
	for (size_t i = 0; i < sizeof c_keywords / sizeof c_keywords[0]; i++)
		if (strcmp(name, c_keywords[i]) == 0)
			return "a C keyword";
	for (size_t i = 0; i < sizeof std_names / sizeof std_names[0]; i++)
		if (strcmp(name, std_names[i]) == 0)
			return "a name of the C library";
	if (stdint_name(name))
		return "a name of <stdint.h>";
	if (name[0] == '_' && (name[1] == '_' || (name[1] >= 'A' && name[1] <= 'Z')))
		return "reserved for the C implementation";
	/* a member cannot clash with remotecall's names (RFC 5661 has rc_sequenceid) */
	if (use == NAME_MEMBER)
		return NULL;
	if (strncmp(name, "rc_", 3) == 0 || strncmp(name, "RC_", 3) == 0)
		return "reserved for remotecall (rc_, RC_)";
	if (use == NAME_MACRO) {
		for (size_t i = 0; i < sizeof gen_params / sizeof gen_params[0]; i++)
			if (strcmp(name, gen_params[i]) == 0)
				return "a parameter name of the generated functions";
	} else {
		for (size_t i = 0; i < sizeof gen_first_params / sizeof gen_first_params[0]; i++)
			if (strcmp(name, gen_first_params[i]) == 0)
				return "a parameter name of the generated functions";
	}
	if (strncmp(name, "arg", 3) == 0 && name[3] >= '0' && name[3] <= '9') {
		const char *p = name + 3;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p == '\0')
			return "a parameter name of the generated functions";
	}
	return NULL;
}

/* check_member_name -- a field, arm or discriminant name: no keyword, and no macro of this
 * file or of the C library (the #define would replace it). */
static void
check_member_name(idlc_unit *u, const idlc_decl *d)
{
	const char *why = reserved(d->name, NAME_MEMBER);
	if (why != NULL) {
		idlc_error(u->diag, &d->loc, "'%s' cannot be used as a name: it is %s", d->name, why);
		return;
	}
	const idlc_sym *s = tab_get(&u->syms, d->name);
	if (s != NULL && (s->kind == IDLC_S_CONST || s->kind == IDLC_S_PROG ||
	                  s->kind == IDLC_S_VERS || s->kind == IDLC_S_PROC ||
	                  s->kind == IDLC_S_PCTDEF)) {
		idlc_error(u->diag, &d->loc,
		           "'%s' cannot be used as a name here: it is %s, a #define in C", d->name,
		           sym_kind_name(s));
		note_defined(u, s, "");
	}
}

/* ---------------------------------------------------------------------------------------- */
/* Declaring names                                                                          */
/* ---------------------------------------------------------------------------------------- */

/*
 * declare -- add symbol s to u; a name already defined is an error (with a note at the first
 * definition), except that a %#define yields to a real definition (and the other way round:
 * the %-line is the programmer's C, not idlc's business) and program, version and procedure
 * names may repeat (their numbers are compared later). Returns false if s was not added.
 */
static bool
declare(idlc_unit *u, idlc_sym *s)
{
	const char *why = NULL;
	/* "typedef int int32_t;" may restate <stdint.h>'s type: check_typedef decides */
	if (s->kind == IDLC_S_TYPE && s->def->kind == IDLC_DEF_TYPEDEF && stdint_name(s->name))
		why = NULL;
	else if (s->kind == IDLC_S_TYPE || s->kind == IDLC_S_ENUMVAL)
		why = reserved(s->name, NAME_TYPE);
	else if (s->kind != IDLC_S_PCTDEF)
		why = reserved(s->name, NAME_MACRO);
	if (why != NULL)
		idlc_error(u->diag, &s->loc, "'%s' cannot be used as a name: it is %s", s->name, why);
	idlc_sym *old = tab_get(&u->syms, s->name);
	if (old == NULL || old->kind == IDLC_S_PRELUDE) {
		tab_put(&u->syms, s);
		return true;
	}
	if (old->kind == IDLC_S_PCTDEF) {
		if (s->kind != IDLC_S_PCTDEF)
			tab_put(&u->syms, s);
		return s->kind != IDLC_S_PCTDEF;
	}
	if (s->kind == IDLC_S_PCTDEF)
		return false;
	if ((s->kind == IDLC_S_VERS && old->kind == IDLC_S_VERS) ||
	    (s->kind == IDLC_S_PROC && old->kind == IDLC_S_PROC))
		return false;
	idlc_error(u->diag, &s->loc, "redefinition of '%s'", s->name);
	idlc_note(u->diag, &old->loc, "'%s' was defined here as %s", old->name,
	          sym_kind_name(old));
	return false;
}

/* declare_all -- the symbols of every definition of u, in order. */
static void
declare_all(idlc_unit *u)
{
	for (idlc_def *d = u->defs; d != NULL; d = d->next) {
		idlc_sym *s;
		switch (d->kind) {
		case IDLC_DEF_CONST:
			s = new_sym(u, IDLC_S_CONST, d->name, &d->loc, d->order);
			s->def = d;
			s->expr = d->value;
			declare(u, s);
			break;
		case IDLC_DEF_ENUM: {
			s = new_sym(u, IDLC_S_TYPE, d->name, &d->loc, d->order);
			s->def = d;
			declare(u, s);
			int sub = 0;
			for (idlc_enumerator *e = d->enums; e != NULL; e = e->next) {
				s = new_sym(u, IDLC_S_ENUMVAL, e->name, &e->loc, d->order);
				s->def = d;
				s->en = e;
				s->sub = sub++;
				e->sym = s;
				declare(u, s);
			}
			break;
		}
		case IDLC_DEF_STRUCT:
		case IDLC_DEF_UNION:
			s = new_sym(u, IDLC_S_TYPE, d->name, &d->loc, d->order);
			s->def = d;
			declare(u, s);
			break;
		case IDLC_DEF_TYPEDEF:
			if (d->decl->kind == IDLC_D_VOID) {
				idlc_error(u->diag, &d->loc, "a typedef cannot declare 'void'");
				break;
			}
			/* typedef struct foo foo;  -- C's idiom; the struct already has that name */
			if (d->decl->kind == IDLC_D_PLAIN && d->decl->type->tag != IDLC_TAG_NONE &&
			    strcmp(d->decl->type->name, d->name) == 0) {
				d->self_alias = true;
				break;
			}
			s = new_sym(u, IDLC_S_TYPE, d->name, &d->loc, d->order);
			s->def = d;
			declare(u, s);
			break;
		case IDLC_DEF_PROGRAM:
			s = new_sym(u, IDLC_S_PROG, d->name, &d->loc, d->order);
			s->def = d;
			s->expr = d->number;
			declare(u, s);
			for (idlc_version *v = d->versions; v != NULL; v = v->next) {
				v->prog = d;
				s = new_sym(u, IDLC_S_VERS, v->name, &v->loc, d->order);
				s->def = d;
				s->vers = v;
				s->expr = v->number;
				declare(u, s);
				for (idlc_proc *p = v->procs; p != NULL; p = p->next) {
					p->vers = v;
					s = new_sym(u, IDLC_S_PROC, p->name, &p->loc, d->order);
					s->def = d;
					s->proc = p;
					s->expr = p->number;
					declare(u, s);
				}
			}
			break;
		case IDLC_DEF_PASSTHRU:
			/* a %#define: a constant (expr NULL when its value is not a constant
			 * expression: then it may also name a type) */
			if (d->name != NULL) {
				s = new_sym(u, IDLC_S_PCTDEF, d->name, &d->loc, d->order);
				s->def = d;
				s->expr = d->value;
				declare(u, s);
			}
			break;
		}
	}
}

/* ---------------------------------------------------------------------------------------- */
/* A small hash index, for the duplicate checks (linear in the size of a definition)        */
/* ---------------------------------------------------------------------------------------- */

typedef struct hidx {
	struct hent {
		uint64_t key;       /* a value, or a string's hash */
		const char *name;   /* for strings: the string (NULL for values) */
		const void *item;
	} *e;
	size_t cap;
	size_t n;
} hidx;

/* hidx_add -- remember item under (key, name) unless an item with the same key (and the
 * same name, when name is not NULL) is there: then return that one and add nothing. */
static const void *
hidx_add(hidx *x, uint64_t key, const char *name, const void *item)
{
	if ((x->n + 1) * 2 > x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 32;
		struct hent *e = idlc_xcalloc(cap, sizeof(*e));
		for (size_t i = 0; i < x->cap; i++) {
			if (x->e[i].item == NULL)
				continue;
			size_t j = (size_t)(x->e[i].key * 0x9e3779b97f4a7c15ull >> 7) & (cap - 1);
			while (e[j].item != NULL)
				j = (j + 1) & (cap - 1);
			e[j] = x->e[i];
		}
		free(x->e);
		x->e = e;
		x->cap = cap;
	}
	size_t j = (size_t)(key * 0x9e3779b97f4a7c15ull >> 7) & (x->cap - 1);
	while (x->e[j].item != NULL) {
		if (x->e[j].key == key && (name == NULL || strcmp(x->e[j].name, name) == 0))
			return x->e[j].item;
		j = (j + 1) & (x->cap - 1);
	}
	x->e[j].key = key;
	x->e[j].name = name;
	x->e[j].item = item;
	x->n++;
	return NULL;
}

/* hidx_find -- the item under key, or NULL. */
static const void *
hidx_find(const hidx *x, uint64_t key)
{
	if (x->cap == 0)
		return NULL;
	size_t j = (size_t)(key * 0x9e3779b97f4a7c15ull >> 7) & (x->cap - 1);
	while (x->e[j].item != NULL) {
		if (x->e[j].key == key)
			return x->e[j].item;
		j = (j + 1) & (x->cap - 1);
	}
	return NULL;
}

/* hidx_add_name -- hidx_add keyed by a string. */
static const void *
hidx_add_name(hidx *x, const char *name, const void *item)
{
	return hidx_add(x, idlc_strhash(name), name, item);
}

/* hidx_free -- release the index; it is empty again. */
static void
hidx_free(hidx *x)
{
	free(x->e);
	memset(x, 0, sizeof(*x));
}

/* ---------------------------------------------------------------------------------------- */
/* Constant expressions                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* How an expression is evaluated. */
typedef struct ectx {
	idlc_unit *u;
	int order;               /* names must be usable before this order; -1: anywhere */
	const idlc_def *in_enum; /* evaluating a value of this enum... */
	int in_sub;              /* ...for its enumerator number in_sub */
	bool quiet;              /* no diagnostics (%#define values) */
	int ready;               /* out: the largest `ready` of the names used */
	bool in_case;            /* a case label: an unknown name is a C constant (warning) */
} ectx;

/* Deepest chain of constants defined in terms of constants defined later. */
#define MAX_FORWARD 256
static int forward_depth;

static bool eval(ectx *c, idlc_expr *e);
static bool eval_sym(idlc_unit *u, idlc_sym *s, bool quiet);
static void check_enum(idlc_unit *u, idlc_def *d);

/* fail -- report an error about e unless quiet. */
static bool
fail(ectx *c, const idlc_expr *e, const char *fmt, ...) IDLC_PRINTF(3, 4);

static bool
fail(ectx *c, const idlc_expr *e, const char *fmt, ...)
{
	if (c->quiet)
		return false;
	idlc_buf msg = { 0 };
	va_list ap;
	va_start(ap, fmt);
	idlc_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	idlc_error(c->u->diag, &e->loc, "%s", msg.data);
	idlc_buf_free(&msg);
	return false;
}

/* one_edit -- a and b differ by one edit: a letter changed, added or removed, or two
 * neighbours swapped ("strin", "sting", "strnig" for "string"). */
static bool
one_edit(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i = 0;

	if (la < lb)
		return one_edit(b, a);
	if (la - lb > 1)
		return false;
	while (i < lb && a[i] == b[i])
		i++;
	if (la == lb + 1)
		return strcmp(a + i + 1, b + i) == 0;
	if (i == la)
		return false; /* the same */
	if (strcmp(a + i + 1, b + i + 1) == 0)
		return true;
	return i + 1 < la && a[i] == b[i + 1] && a[i + 1] == b[i] &&
	       strcmp(a + i + 2, b + i + 2) == 0;
}

/* suggest_in -- a type of t one edit from name, or NULL. */
static const char *
suggest_in(const idlc_symtab *t, const char *name)
{
	for (size_t i = 0; i < t->cap; i++) {
		const idlc_sym *s = t->slots[i];
		if (s != NULL && s->kind == IDLC_S_TYPE && one_edit(s->name, name))
			return s->name;
	}
	return NULL;
}

/* suggest_type -- a type keyword, a prelude type or a type of u one edit from name (an
 * undefined type's "did you mean"), or NULL; none for names of one or two letters, which
 * are one edit from too much. */
static const char *
suggest_type(const idlc_unit *u, const char *name)
{
	static const char *const keywords[] = { "int", "unsigned", "hyper", "float", "double",
		                                "quadruple", "bool", "string", "opaque", "void",
		                                "char", "short", "long", "struct", "union", "enum",
		                                "typedef" };
	const char *hit;

	if (strlen(name) < 3)
		return NULL;
	for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
		if (one_edit(keywords[i], name))
			return keywords[i];
	for (size_t i = 0; i < sizeof prelude / sizeof prelude[0]; i++)
		if (prelude[i].is_type && one_edit(prelude[i].name, name))
			return prelude[i].name;
	if ((hit = suggest_in(&u->syms, name)) == NULL && u->env != NULL)
		hit = suggest_in(&u->env->syms, name);
	return hit;
}

/* assume_extern -- the name of e is defined nowhere idlc can see: assume it (warning) if a
 * %#include may declare it, if it is a type (an external type, as rpcgen assumes) or a case
 * label (a C constant); else report it as undefined. Either way a symbol is made so that
 * later uses say nothing more. */
static idlc_sym *
assume_extern(idlc_unit *u, const char *name, const idlc_loc *loc, bool is_type, idlc_tag tag,
              bool quiet, bool case_label)
{
	const idlc_unit *inc = u->include_seen ? u : (u->env && u->env->include_seen ? u->env : NULL);
	idlc_sym *s = new_sym(u, IDLC_S_EXTERN, name, NULL, -1);
	s->is_type = is_type;
	s->tag = tag;
	s->ready = -1;
	s->state = 2;
	if (quiet)
		return s; /* do not remember: a real use may still report it */
	const char *near = is_type ? suggest_type(u, name) : NULL;
	idlc_buf hint = { 0 };
	if (near != NULL)
		idlc_buf_printf(&hint, "; did you mean '%s'?", near);
	const char *mean = near != NULL ? hint.data : "";
	if (is_type && u->strict && (inc == NULL || tag != IDLC_TAG_NONE)) {
		/* --strict: no external types but those a %#include line may declare */
		s->undefined = true;
		if (tag != IDLC_TAG_NONE)
			idlc_error(u->diag, loc, "undefined type '%s %s' (--strict)%s",
			           tag_name(tag), name, mean);
		else
			idlc_error(u->diag, loc, "undefined type '%s' (--strict)%s", name, mean);
	} else if (is_type && tag != IDLC_TAG_NONE) {
		idlc_warning(u->diag, loc,
		             "'%s %s' is not defined in this file; assuming it is declared elsewhere, "
		             "with xdr_%s()%s", tag_name(tag), name, name, mean);
	} else if (inc != NULL) {
		if (is_type)
			idlc_warning(u->diag, loc,
			             "type '%s' is not defined in this file; assuming the header a "
			             "%%#include line includes declares it, with xdr_%s()%s", name,
			             name, mean);
		else
			idlc_warning(u->diag, loc,
			             "'%s' is not defined in this file; assuming the header a %%#include "
			             "line includes defines it", name);
		idlc_note(u->diag, &inc->include_loc, "the %%#include line is here");
	} else if (is_type) {
		/* as rpcgen: an external type; NAME.h declares the routine the program supplies */
		s->proto = true;
		idlc_warning(u->diag, loc,
		             "type '%s' is not defined in this file; assuming it is an external type "
		             "whose xdr_%s() the program supplies%s", name, name, mean);
	} else if (case_label) {
		idlc_warning(u->diag, loc,
		             "'%s' is not defined in this file; assuming it is a C constant (from a "
		             "%%-line or a header), as rpcgen does", name);
	} else {
		s->undefined = true;
		idlc_error(u->diag, loc, "undefined constant '%s'", name);
	}
	idlc_buf_free(&hint);
	s->loc = *loc;
	tab_put(&u->syms, s);
	return s;
}

/* check_ready -- a use of s at e must come after s is usable in C (c->order). */
static bool
check_ready(ectx *c, const idlc_expr *e, const idlc_sym *s)
{
	if (c->order < 0 || s->owner != c->u || s->ready < 0)
		return true;
	bool ok = s->ready < c->order;
	if (s->kind == IDLC_S_ENUMVAL && s->def == c->in_enum)
		ok = s->sub < c->in_sub;
	if (ok)
		return true;
	if (c->quiet)
		return false;
	idlc_error(c->u->diag, &e->loc, "'%s' is used before it is defined", s->name);
	idlc_note(c->u->diag, &s->loc, "'%s' is defined here", s->name);
	return false;
}

/* eval_name -- the value of a name used in an expression. */
static bool
eval_name(ectx *c, idlc_expr *e)
{
	idlc_unit *u = c->u;
	idlc_sym *s = idlc_sym_lookup(u, e->text);
	if (s == NULL)
		s = assume_extern(u, e->text, &e->loc, false, IDLC_TAG_NONE, c->quiet, c->in_case);
	e->sym = s;
	switch (s->kind) {
	case IDLC_S_TYPE:
		return fail(c, e, "'%s' is %s, not a constant", s->name, sym_kind_name(s));
	case IDLC_S_PRELUDE:
	case IDLC_S_EXTERN:
		if (s->is_type)
			return fail(c, e, "'%s' is a type, not a constant", s->name);
		if (s->kind == IDLC_S_PRELUDE && !c->quiet)
			s->used = true;
		if (s->kind == IDLC_S_EXTERN)
			return false; /* value unknown: fine, nothing to check */
		break;
	case IDLC_S_CONST:
		if (s->def->str != NULL)
			return fail(c, e, "'%s' is a string constant, not a number", s->name);
		/* fall through */
	default:
		if (s->owner == u)
			eval_sym(u, s, c->quiet);
		else if (s->state != 2)
			return false;
		if (!check_ready(c, e, s))
			return false;
		break;
	}
	if (s->ready > c->ready)
		c->ready = s->ready;
	if (!s->known)
		return false;
	e->value = s->value;
	e->big = s->big;
	return true;
}

/* The arithmetic of constant expressions: wide enough for any two 64-bit operands. */
__extension__ typedef __int128 wide;

/* wide_of -- the value of a known expression, signed or unsigned 64-bit. */
static wide
wide_of(const idlc_expr *e)
{
	return e->big ? (wide)(uint64_t)e->value : (wide)e->value;
}

/* store -- e's value is r if r is a 64-bit value, signed or unsigned; else an overflow. */
static bool
store(ectx *c, idlc_expr *e, wide r)
{
	if (r < (wide)INT64_MIN || r > (wide)UINT64_MAX)
		return fail(c, e, "integer overflow in constant expression (over 64 bits)");
	e->big = r > (wide)INT64_MAX;
	e->value = (int64_t)(uint64_t)r;
	e->known = true;
	return true;
}

/*
 * eval -- the value of e: 64-bit constants, signed or unsigned (values from INT64_MIN to
 * UINT64_MAX), computed exactly, with every result outside that range an error. '~' of an
 * unsigned value (above INT64_MAX) is taken on 64 bits, as C does. Returns whether the value
 * is known (e->known, e->value, e->big); false also after a reported error.
 */
static bool
eval(ectx *c, idlc_expr *e)
{
	wide a, b, r = 0;
	e->known = false;
	if (e->bad)
		return false;
	switch (e->kind) {
	case IDLC_EX_NUM:
		e->value = e->num;
		e->known = true;
		return true;
	case IDLC_EX_NAME:
		e->known = eval_name(c, e);
		return e->known;
	case IDLC_EX_UNARY:
		if (!eval(c, e->lhs))
			return false;
		a = wide_of(e->lhs);
		if (e->op == '-')
			r = -a;
		else if (e->op == '~')
			r = e->lhs->big ? (wide)(uint64_t)~(uint64_t)a : ~a;
		else
			r = a;
		return store(c, e, r);
	case IDLC_EX_BINARY: {
		bool lk = eval(c, e->lhs);
		bool rk = eval(c, e->rhs);
		if (!lk || !rk)
			return false;
		a = wide_of(e->lhs);
		b = wide_of(e->rhs);
		switch (e->op) {
		case '+': r = a + b; break;
		case '-': r = a - b; break;
		case '*':
			if (__builtin_mul_overflow(a, b, &r))
				return fail(c, e, "integer overflow in constant expression (over 64 bits)");
			break;
		case '/':
		case '%':
			if (b == 0)
				return fail(c, e, "division by zero in constant expression");
			r = e->op == '/' ? a / b : a % b;
			break;
		case '|': r = a | b; break;
		case '&': r = a & b; break;
		case '^': r = a ^ b; break;
		case IDLC_OP_SHL:
			if (b < 0 || b > 63)
				return fail(c, e, "shift count %" PRId64 " is out of range",
				            (int64_t)b);
			if (a < 0)
				return fail(c, e, "left shift of a negative value");
			r = a << b;
			break;
		case IDLC_OP_SHR:
			if (b < 0 || b > 63)
				return fail(c, e, "shift count %" PRId64 " is out of range",
				            (int64_t)b);
			r = a >> b;
			break;
		default:
			return false;
		}
		return store(c, e, r);
	}
	}
	return false;
}

/*
 * eval_sym -- compute the value of a constant-like symbol of u once (CONST, PCTDEF, PROG,
 * VERS, PROC, ENUMVAL). A constant defined in terms of itself is an error. Returns whether
 * the symbol is usable (its value may still be unknown).
 */
static bool
eval_sym(idlc_unit *u, idlc_sym *s, bool quiet)
{
	if (s->state == 2)
		return true;
	if (s->kind == IDLC_S_ENUMVAL) {
		/* enumerators are evaluated with their enum; an enumerator of the enum being
		 * evaluated that comes later is not done yet */
		if (!s->def->checked && forward_depth < MAX_FORWARD) {
			forward_depth++;
			check_enum(u, s->def);
			forward_depth--;
		}
		return s->state == 2;
	}
	if (s->state == 1) {
		if (!quiet)
			idlc_error(u->diag, &s->loc, "'%s' is defined in terms of itself", s->name);
		return false;
	}
	if (forward_depth >= MAX_FORWARD) {
		if (!quiet)
			idlc_error(u->diag, &s->loc,
			           "constants defined in terms of later constants nest too deeply");
		return false;
	}
	s->state = 1;
	forward_depth++;
	ectx c = { u, -1, NULL, 0, quiet || s->kind == IDLC_S_PCTDEF, s->order, false };
	s->known = s->expr != NULL && eval(&c, s->expr);
	if (s->known) {
		s->value = s->expr->value;
		s->big = s->expr->big;
	}
	s->ready = c.ready;
	forward_depth--;
	s->state = 2;
	return true;
}

/* eval_in -- evaluate e for a use at `order` (-1: anywhere). */
static bool
eval_in(idlc_unit *u, idlc_expr *e, int order)
{
	ectx c = { u, order, NULL, 0, false, -1, false };
	return eval(&c, e);
}

/* eval_case -- evaluate the case label e (anywhere; unknown names are C constants). */
static bool
eval_case(idlc_unit *u, idlc_expr *e)
{
	ectx c = { u, -1, NULL, 0, false, -1, true };
	return eval(&c, e);
}

/* fits -- whether v is in [lo, hi]. */
static bool
fits(int64_t v, int64_t lo, int64_t hi)
{
	return v >= lo && v <= hi;
}

/* val_in -- whether the known value of e is in [lo, hi] (an unsigned value above INT64_MAX
 * never is). */
static bool
val_in(const idlc_expr *e, int64_t lo, int64_t hi)
{
	return !e->big && fits(e->value, lo, hi);
}

/* val_text -- the value of e in decimal, for messages (buf: 24 bytes). */
static const char *
val_text(const idlc_expr *e, char *buf)
{
	if (e->big)
		snprintf(buf, 24, "%" PRIu64, (uint64_t)e->value);
	else
		snprintf(buf, 24, "%" PRId64, e->value);
	return buf;
}

/* ---------------------------------------------------------------------------------------- */
/* Checking definitions                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* check_const -- a const's value: computed (errors reported there); string escapes. */
static void
check_const(idlc_unit *u, idlc_def *d)
{
	if (d->str != NULL) {
		/* the string goes into C as written: only C's escapes */
		for (const char *p = d->str + 1; *p; p++) {
			if (*p != '\\')
				continue;
			p++;
			if (*p != '\0' && strchr("ntvbrfa\\?'\"01234567", *p) != NULL)
				continue;
			if (*p == 'x' && isxdigit((unsigned char)p[1]))
				continue;
			idlc_error(u->diag, &d->loc, "unknown escape sequence '\\%c' in string constant '%s'",
			           *p, d->name);
			break;
		}
		return;
	}
	idlc_sym *s = tab_get(&u->syms, d->name);
	if (s == NULL || s->def != d)
		return;
	eval_sym(u, s, false); /* any 64-bit value, signed or unsigned */
}

/* check_enum -- enumerator values: known, within int, and no accidental duplicates (an
 * implicit value equal to an earlier one). Explicit duplicates are aliases and allowed. */
static void
check_enum(idlc_unit *u, idlc_def *d)
{
	if (d->checked)
		return;
	d->checked = true;
	d->csize = 4;
	int64_t prev = -1;
	bool prev_known = true;
	int sub = 0;
	hidx values = { 0 };
	for (idlc_enumerator *e = d->enums; e != NULL; e = e->next, sub++) {
		if (e->value != NULL) {
			ectx c = { u, d->order, d, sub, false, -1, false };
			e->known = eval(&c, e->value);
			e->v = e->value->value;
			if (e->known && e->value->big) {
				char vb[24];
				idlc_error(u->diag, &e->value->loc,
				           "value of enumerator '%s' (%s) is outside the range of int",
				           e->name, val_text(e->value, vb));
				e->known = false;
			}
		} else {
			e->known = prev_known;
			e->v = prev + 1;
		}
		if (e->known && !fits(e->v, INT32_MIN, INT32_MAX)) {
			idlc_error(u->diag, e->value ? &e->value->loc : &e->loc,
			           "value of enumerator '%s' (%" PRId64 ") is outside the range of int",
			           e->name, e->v);
			e->known = false;
		}
		if (e->known) {
			const idlc_enumerator *o = hidx_add(&values, (uint64_t)e->v, NULL, e);
			if (o != NULL && e->value == NULL) {
				idlc_error(u->diag, &e->loc,
				           "enumerator '%s' gets the value %" PRId64
				           " implicitly, which '%s' already has",
				           e->name, e->v, o->name);
				idlc_note(u->diag, &o->loc, "'%s' is defined here", o->name);
			}
		}
		if (e->sym != NULL && e->sym->def == d) {
			e->sym->known = e->known;
			e->sym->value = e->v;
			e->sym->state = 2;
		}
		prev = e->known ? e->v : prev;
		prev_known = e->known;
	}
	hidx_free(&values);
}

/* Where a declaration appears. */
typedef enum { IN_FIELD, IN_ARM, IN_TYPEDEF, IN_DISCRIM } where_t;

/*
 * resolve_type -- resolve the name of t (a use inside definition `cur`, at order `order`;
 * -1 for procedure signatures, which the header declares after every type). `ptr`: the use
 * is through a pointer (T *x, T x<>), where C accepts a struct that is not yet complete.
 * Prelude aliases (u_int, ...) become their primitive.
 */
static void
resolve_type(idlc_unit *u, idlc_type *t, const idlc_def *cur, int order, bool ptr)
{
	if (t->kind != IDLC_T_NAMED)
		return;
	idlc_sym *s = idlc_sym_lookup(u, t->name);
	if (s == NULL) {
		s = assume_extern(u, t->name, &t->loc, true, t->tag, false, false);
	}
	t->sym = s;
	switch (s->kind) {
	case IDLC_S_PRELUDE:
		if (!s->is_type) {
			idlc_error(u->diag, &t->loc, "'%s' is a constant, not a type", t->name);
			return;
		}
		s->used = true;
		if (s->pre->special == 0)
			t->kind = s->pre->kind;
		return;
	case IDLC_S_EXTERN:
		if (!s->is_type && !s->undefined)
			idlc_error(u->diag, &t->loc, "'%s' is a constant, not a type", t->name);
		return;
	case IDLC_S_PCTDEF:
		if (s->expr != NULL) {
			idlc_error(u->diag, &t->loc, "'%s' is a constant, not a type", t->name);
			note_defined(u, s, "");
		} else if (!s->is_type) {
			/* "%#define ndmp4_u_quad unsigned long long" (NDMP): a C type */
			s->is_type = true;
			s->proto = true;
			idlc_warning(u->diag, &t->loc,
			             "'%s' is a %%#define; assuming it names a C type whose xdr_%s() "
			             "the program supplies", t->name, t->name);
			note_defined(u, s, "");
		}
		return;
	case IDLC_S_TYPE:
		break;
	default:
		idlc_error(u->diag, &t->loc, "'%s' is %s, not a type", t->name, sym_kind_name(s));
		note_defined(u, s, "");
		return;
	}

	const idlc_def *d = s->def;
	idlc_tag want = t->tag;
	if ((want == IDLC_TAG_STRUCT && d->kind != IDLC_DEF_STRUCT) ||
	    (want == IDLC_TAG_UNION && d->kind != IDLC_DEF_UNION) ||
	    (want == IDLC_TAG_ENUM && d->kind != IDLC_DEF_ENUM)) {
		idlc_error(u->diag, &t->loc, "'%s' is %s, not %s %s", t->name, sym_kind_name(s),
		           want == IDLC_TAG_ENUM ? "an" : "a", tag_name(want));
		idlc_note(u->diag, &d->loc, "'%s' is defined here", d->name);
		return;
	}
	if (order < 0 || s->owner != u || d->order < order)
		return;
	if (ptr && (d->kind == IDLC_DEF_STRUCT || d->kind == IDLC_DEF_UNION)) {
		t->use_tag = true; /* "struct foo *": C accepts an incomplete struct here */
		return;
	}
	if (d == cur)
		idlc_error(u->diag, &t->loc, "'%s' cannot contain itself (use a pointer: '%s *')",
		           t->name, t->name);
	else
		idlc_error(u->diag, &t->loc, "type '%s' is used before it is defined", t->name);
	if (d != cur)
		idlc_note(u->diag, &d->loc, "'%s' is defined here", d->name);
}

/* check_size -- the size or maximum of declaration d: 0..2^32-1 (a fixed size must be defined
 * before: it appears in the header). A fixed array of 0 elements holds nothing (and has no C
 * member: see idlc_decl_empty). */
static void
check_size(idlc_unit *u, idlc_decl *d, int order)
{
	if (d->size == NULL)
		return;
	bool fixed = d->kind == IDLC_D_FIXED;
	if (!eval_in(u, d->size, fixed ? order : -1))
		return;
	char vb[24];
	if (!d->size->big && d->size->value < 0)
		idlc_error(u->diag, &d->size->loc, "%s of '%s' is negative (%s)",
		           fixed ? "size" : "maximum size", d->name, val_text(d->size, vb));
	else if (!val_in(d->size, 0, UINT32_MAX))
		idlc_error(u->diag, &d->size->loc, "size of '%s' (%s) does not fit in 32 bits",
		           d->name, val_text(d->size, vb));
}

/* The largest object C accepts is PTRDIFF_MAX bytes; idlc refuses types near that. */
#define MAX_CSIZE ((uint64_t)1 << 62)

/* add_sat -- a + b, saturated just above MAX_CSIZE. */
static uint64_t
add_sat(uint64_t a, uint64_t b)
{
	return a > MAX_CSIZE || b > MAX_CSIZE || a + b > MAX_CSIZE ? MAX_CSIZE + 1 : a + b;
}

/* mul_sat -- a * b, saturated just above MAX_CSIZE. */
static uint64_t
mul_sat(uint64_t a, uint64_t b)
{
	if (a == 0 || b == 0)
		return 0;
	return a > MAX_CSIZE / b ? MAX_CSIZE + 1 : a * b;
}

/* type_csize -- about sizeof(C type of t); definitions are complete before their by-value
 * uses, so their csize is known. */
static uint64_t
type_csize(const idlc_type *t)
{
	switch (t->kind) {
	case IDLC_T_CHAR: case IDLC_T_UCHAR: case IDLC_T_BOOL: case IDLC_T_OPAQUE:
		return 1;
	case IDLC_T_SHORT: case IDLC_T_USHORT:
		return 2;
	case IDLC_T_INT: case IDLC_T_UINT: case IDLC_T_FLOAT:
		return 4;
	case IDLC_T_HYPER: case IDLC_T_UHYPER: case IDLC_T_DOUBLE: case IDLC_T_STRING:
		return 8;
	case IDLC_T_QUAD:
		return 16;
	case IDLC_T_NAMED: {
		const idlc_def *d = idlc_type_def(t);
		return d != NULL && d->csize > 0 ? d->csize : 16;
	}
	case IDLC_T_VOID:
		break;
	}
	return 0;
}

/* decl_csize -- about sizeof the member d declares; an error if C would refuse it. */
static uint64_t
decl_csize(idlc_unit *u, const idlc_decl *d)
{
	uint64_t n;
	switch (d->kind) {
	case IDLC_D_PLAIN:
		return type_csize(d->type);
	case IDLC_D_FIXED:
		if (d->size == NULL || !d->size->known || d->size->value <= 0)
			return type_csize(d->type);
		n = mul_sat(type_csize(d->type), (uint64_t)d->size->value);
		if (n > MAX_CSIZE) {
			idlc_error(u->diag, &d->loc, "'%s' is too large for C (over 2^62 bytes)", d->name);
			return 1;
		}
		return n;
	case IDLC_D_VAR:
		return 16;
	case IDLC_D_PTR:
		return 8;
	case IDLC_D_VOID:
		break;
	}
	return 0;
}

/* check_decl -- one declaration of definition `cur`, appearing `where`. */
static void
check_decl(idlc_unit *u, idlc_decl *d, const idlc_def *cur, where_t where)
{
	if (d->kind == IDLC_D_VOID) {
		if (where != IN_ARM)
			idlc_error(u->diag, &d->loc,
			           "'void' is only allowed as a union arm, procedure argument or result");
		return;
	}
	idlc_type *t = d->type;
	if (t->kind == IDLC_T_STRING) {
		if (d->kind == IDLC_D_FIXED)
			idlc_error(u->diag, &d->loc,
			           "string '%s' cannot have a fixed size; declare it 'string %s<N>'",
			           d->name, d->name);
		else if (d->kind == IDLC_D_PLAIN)
			idlc_error(u->diag, &d->loc,
			           "string '%s' needs a maximum size: 'string %s<N>' or 'string %s<>'",
			           d->name, d->name, d->name);
		else if (d->kind == IDLC_D_PTR)
			idlc_error(u->diag, &d->loc,
			           "'string *%s' is not allowed; declare it 'string %s<>'", d->name,
			           d->name);
	} else if (t->kind == IDLC_T_OPAQUE) {
		if (d->kind == IDLC_D_PLAIN)
			idlc_error(u->diag, &d->loc,
			           "opaque '%s' needs a size: 'opaque %s[N]' (fixed) or 'opaque %s<N>' "
			           "(variable)", d->name, d->name, d->name);
		else if (d->kind == IDLC_D_PTR)
			idlc_error(u->diag, &d->loc,
			           "'opaque *%s' is not allowed; declare it 'opaque %s<>'", d->name,
			           d->name);
	}
	bool ptr = d->kind == IDLC_D_PTR || d->kind == IDLC_D_VAR;
	resolve_type(u, t, cur, cur->order, ptr);
	check_size(u, d, cur->order);
	(void)where;
}

/* check_struct -- the fields of a struct: each declaration, names unique; find the field
 * that makes it a linked list (encoded iteratively). */
static void
check_struct(idlc_unit *u, idlc_def *d)
{
	hidx names = { 0 };
	d->no_members = true;
	for (idlc_decl *f = d->fields; f != NULL; f = f->next) {
		check_decl(u, f, d, IN_FIELD);
		if (f->kind == IDLC_D_VOID)
			continue;
		if (!idlc_decl_empty(f))
			d->no_members = false;
		check_member_name(u, f);
		d->csize = add_sat(d->csize, decl_csize(u, f));
		const idlc_decl *g = hidx_add_name(&names, f->name, f);
		if (g != NULL) {
			idlc_error(u->diag, &f->loc, "duplicate field '%s' in struct '%s'", f->name,
			           d->name);
			idlc_note(u->diag, &g->loc, "'%s' is declared here", g->name);
		}
	}
	hidx_free(&names);
	if (d->csize > MAX_CSIZE)
		idlc_error(u->diag, &d->loc, "struct '%s' is too large for C (over 2^62 bytes)",
		           d->name);
}

/* self_link -- whether field f is an optional pointer to struct d itself, written "d *f" or
 * through a pointer typedef ("typedef d *list;  list f;"). */
static bool
self_link(const idlc_decl *f, const idlc_def *d)
{
	if (f->kind == IDLC_D_PTR)
		return idlc_type_def(f->type) == d;
	if (f->kind != IDLC_D_PLAIN)
		return false;
	const idlc_def *td;
	const idlc_type *t = idlc_resolve_alias(f->type, &td);
	(void)t;
	if (td == NULL || td->kind != IDLC_DEF_TYPEDEF || td->decl->kind != IDLC_D_PTR)
		return false;
	return idlc_type_def(td->decl->type) == d;
}

/* find_list -- a struct whose last field, and only that one, links to the struct itself is
 * a list; its code walks the list in a loop. With one self-link elsewhere it is a chain:
 * coded recursively (the wire puts the next node inside this one; decoding and encoding are
 * bounded by the depth limit), but freed in a loop, since a chain built in memory can be
 * any length. */
static void
find_list(idlc_def *d)
{
	int links = 0;
	idlc_decl *last = NULL, *link = NULL;
	for (idlc_decl *f = d->fields; f != NULL; f = f->next) {
		if (f->kind != IDLC_D_VOID && self_link(f, d)) {
			links++;
			link = f;
		}
		last = f;
	}
	if (links == 1 && link == last)
		d->list_next = last;
	else if (links == 1)
		d->chain_next = link;
}

/* discrim_kind -- the kind a discriminant's type resolves to; *en its enum (if any).
 * IDLC_T_VOID: not known (external). */
static idlc_tkind
discrim_kind(const idlc_type *t, const idlc_def **en)
{
	const idlc_def *d;
	t = idlc_resolve_alias(t, &d);
	*en = NULL;
	if (t->kind != IDLC_T_NAMED)
		return t->kind;
	if (d != NULL && d->kind == IDLC_DEF_ENUM) {
		*en = d;
		return IDLC_T_NAMED;
	}
	if (d == NULL && t->sym != NULL &&
	    (t->sym->kind == IDLC_S_EXTERN || t->sym->kind == IDLC_S_PCTDEF))
		return IDLC_T_VOID;
	return IDLC_T_OPAQUE; /* something not allowed: struct, union, array... */
}

/* check_union -- discriminant type, case values (type, range, duplicates), arms. */
static void
check_union(idlc_unit *u, idlc_def *d)
{
	idlc_decl *disc = d->discrim;
	const idlc_def *en = NULL;
	idlc_tkind dk = IDLC_T_VOID;

	if (disc->kind == IDLC_D_VOID) {
		idlc_error(u->diag, &disc->loc, "union '%s' cannot switch on 'void'", d->name);
	} else {
		check_decl(u, disc, d, IN_DISCRIM);
		check_member_name(u, disc);
		dk = discrim_kind(disc->type, &en);
		bool ok = disc->kind == IDLC_D_PLAIN &&
		          (dk == IDLC_T_INT || dk == IDLC_T_UINT || dk == IDLC_T_BOOL ||
		           dk == IDLC_T_NAMED || dk == IDLC_T_VOID);
		if (!ok) {
			const char *sp = disc->type->spelling ? disc->type->spelling : "?";
			idlc_error(u->diag, &disc->type->loc,
			           "union '%s' cannot switch on '%s%s': a discriminant must be int, "
			           "unsigned int, bool or an enum", d->name, sp,
			           disc->kind == IDLC_D_PLAIN ? "" : disc->kind == IDLC_D_PTR ? " *" :
			           disc->kind == IDLC_D_FIXED ? "[]" : "<>");
			dk = IDLC_T_VOID;
		}
	}

	const idlc_case *dflt = NULL;
	bool any_data = false;
	hidx values = { 0 }, names = { 0 }, enum_values = { 0 };
	uint64_t arms_size = 0;
	for (idlc_arm *a = d->arms; a != NULL; a = a->next) {
		for (idlc_case *c = a->cases; c != NULL; c = c->next) {
			if (c->value == NULL) {
				if (dflt != NULL) {
					idlc_error(u->diag, &c->loc, "union '%s' has more than one default arm",
					           d->name);
					idlc_note(u->diag, &dflt->loc, "the first default is here");
				}
				dflt = c;
				continue;
			}
			if (!eval_case(u, c->value))
				continue;
			int64_t v = c->value->value;
			const idlc_sym *vs = c->value->kind == IDLC_EX_NAME ? c->value->sym : NULL;
			if (c->value->big && dk != IDLC_T_VOID) {
				char vb[24];
				idlc_error(u->diag, &c->value->loc,
				           "case value %s is outside the range of the discriminant",
				           val_text(c->value, vb));
				continue;
			}
			if (dk == IDLC_T_NAMED && en != NULL) {
				bool member = false;
				if (vs != NULL && vs->kind == IDLC_S_ENUMVAL) {
					member = vs->def == en;
				} else {
					if (enum_values.n == 0)
						for (idlc_enumerator *e = en->enums; e != NULL; e = e->next)
							if (e->known)
								hidx_add(&enum_values, (uint64_t)e->v, NULL, e);
					member = hidx_find(&enum_values, (uint64_t)v) != NULL;
				}
				if (!member) {
					if (c->value->kind == IDLC_EX_NAME)
						idlc_error(u->diag, &c->value->loc,
						           "case value '%s' is not a member of enum '%s'",
						           c->value->text, en->name);
					else
						idlc_error(u->diag, &c->value->loc,
						           "case value %" PRId64 " is not a value of enum '%s'", v,
						           en->name);
					continue;
				}
			} else if (dk == IDLC_T_BOOL && v != 0 && v != 1) {
				idlc_error(u->diag, &c->value->loc,
				           "case value %" PRId64 " is not a bool (FALSE or TRUE)", v);
				continue;
			} else if (dk == IDLC_T_INT && !fits(v, INT32_MIN, INT32_MAX)) {
				idlc_error(u->diag, &c->value->loc,
				           "case value %" PRId64 " is outside the range of int", v);
				continue;
			} else if (dk == IDLC_T_UINT && !fits(v, 0, UINT32_MAX)) {
				idlc_error(u->diag, &c->value->loc,
				           "case value %" PRId64 " is outside the range of unsigned int", v);
				continue;
			}
			/* duplicates */
			const idlc_case *o = hidx_add(&values, (uint64_t)v, NULL, c);
			if (o != NULL) {
				idlc_error(u->diag, &c->value->loc,
				           "duplicate case value %" PRId64 " in union '%s'", v, d->name);
				idlc_note(u->diag, &o->value->loc, "previous case with value %" PRId64
				          " is here", v);
				c->value->known = false;
			}
		}
		if (a->decl == NULL)
			continue;
		check_decl(u, a->decl, d, IN_ARM);
		if (a->decl->kind == IDLC_D_VOID)
			continue;
		if (!idlc_decl_empty(a->decl))
			any_data = true;
		check_member_name(u, a->decl);
		uint64_t sz = decl_csize(u, a->decl);
		if (sz > arms_size)
			arms_size = sz;
		const idlc_decl *b = hidx_add_name(&names, a->decl->name, a->decl);
		if (b != NULL) {
			idlc_error(u->diag, &a->decl->loc, "duplicate arm '%s' in union '%s'",
			           a->decl->name, d->name);
			idlc_note(u->diag, &b->loc, "'%s' is declared here", b->name);
		}
	}
	hidx_free(&values);
	hidx_free(&names);
	hidx_free(&enum_values);
	d->has_default = dflt != NULL;
	d->all_void = !any_data;
	d->csize = add_sat(8, arms_size);
	/* the arms live in the member <union>_u */
	if (any_data && disc->kind != IDLC_D_VOID) {
		size_t n = strlen(d->name);
		if (strncmp(disc->name, d->name, n) == 0 && strcmp(disc->name + n, "_u") == 0)
			idlc_error(u->diag, &disc->loc,
			           "the discriminant cannot be called '%s': the arms of union '%s' are "
			           "its member '%s'", disc->name, d->name, disc->name);
	}
}

/* The exact-width types of <stdint.h> a typedef of the file may restate, and the primitive
 * each must be: "typedef int int32_t;" (NFSv4's files) names the same C type. */
static const struct {
	const char *name;
	idlc_tkind kind;
} std_types[] = {
	{ "int16_t", IDLC_T_SHORT }, { "uint16_t", IDLC_T_USHORT }, { "int32_t", IDLC_T_INT },
	{ "uint32_t", IDLC_T_UINT }, { "int64_t", IDLC_T_HYPER }, { "uint64_t", IDLC_T_UHYPER },
	{ "uint8_t", IDLC_T_UCHAR },
};

/* check_std_alias -- a typedef named like a <stdint.h> type: it must restate that type (a
 * plain declaration of the same primitive); then NAME.h emits no C typedef for it. */
static void
check_std_alias(idlc_unit *u, idlc_def *d)
{
	const idlc_decl *x = d->decl;
	for (size_t i = 0; i < sizeof std_types / sizeof std_types[0]; i++) {
		if (strcmp(std_types[i].name, d->name) != 0)
			continue;
		if (x->kind == IDLC_D_PLAIN && x->type->kind == std_types[i].kind) {
			d->std_alias = true;
			return;
		}
		break;
	}
	idlc_error(u->diag, &d->loc,
	           "'%s' cannot be used as a name: it is a name of <stdint.h>, and this typedef "
	           "is not the same type", d->name);
}

/* check_typedef -- the declaration of a typedef; "typedef struct foo foo;" must name a
 * struct (union, enum) foo; one named like a <stdint.h> type must restate it. */
static void
check_typedef(idlc_unit *u, idlc_def *d)
{
	if (d->decl->kind == IDLC_D_VOID)
		return;
	if (d->self_alias) {
		resolve_type(u, d->decl->type, d, d->order, false);
		return;
	}
	check_decl(u, d->decl, d, IN_TYPEDEF);
	d->csize = decl_csize(u, d->decl);
	if (stdint_name(d->name))
		check_std_alias(u, d);
}

/* idlc_decl_empty -- see idlc.h. */
bool
idlc_decl_empty(const idlc_decl *d)
{
	return d->kind == IDLC_D_FIXED && d->size != NULL && d->size->known && !d->size->big &&
	       d->size->value == 0;
}

/* number -- evaluate a program/version/procedure number: 0..2^32-1. */
static bool
number(idlc_unit *u, idlc_expr *e, const char *what, const char *name, uint32_t *out)
{
	if (!eval_in(u, e, -1))
		return false;
	if (!val_in(e, 0, UINT32_MAX)) {
		char vb[24];
		idlc_error(u->diag, &e->loc, "%s number of '%s' (%s) is not in 0..4294967295",
		           what, name, val_text(e, vb));
		return false;
	}
	*out = (uint32_t)e->value;
	return true;
}

/* check_same_number -- a version or procedure name used again must have the same number.
 * Returns false if it reported that it does not. */
static bool
check_same_number(idlc_unit *u, const char *what, const char *name, const idlc_loc *loc,
                  const idlc_expr *num, bool known)
{
	idlc_sym *s = tab_get(&u->syms, name);
	if (s == NULL || s->expr == num || !known)
		return true;
	if (s->expr == NULL || !s->expr->known || s->expr->value == num->value)
		return true;
	idlc_error(u->diag, loc, "%s '%s' is defined again with a different number (%" PRId64
	           ", was %" PRId64 ")", what, name, num->value, s->expr->value);
	idlc_note(u->diag, &s->loc, "'%s' is first defined here", name);
	return false;
}

/* check_param_type -- an argument or result type of a procedure. */
static void
check_param_type(idlc_unit *u, idlc_type *t, const idlc_def *prog)
{
	if (t->kind == IDLC_T_OPAQUE) {
		idlc_error(u->diag, &t->loc,
		           "'opaque' needs a size: declare a type (typedef opaque T<N>;) and use it");
		return;
	}
	resolve_type(u, t, prog, -1, true);
}

/* clash -- the definition of this file called `name`, if any (not a procedure name). */
static idlc_sym *
clash(idlc_unit *u, const char *name)
{
	idlc_sym *s = tab_get(&u->syms, name);
	return s != NULL && s->kind != IDLC_S_PROC && s->kind != IDLC_S_PRELUDE ? s : NULL;
}

/* check_cname -- the generated C name `name` (for what is at loc, called `what`) must be
 * new: not generated for something else (cnames) and not a definition of the file. */
static void
check_cname(idlc_unit *u, const char *name, const char *what, const idlc_loc *loc,
            idlc_symtab *cnames, int order)
{
	idlc_sym *old = tab_get(cnames, name);
	idlc_sym *c = clash(u, name);
	if (old != NULL) {
		idlc_error(u->diag, loc, "%s gets the C name '%s', like %s", what, name, old->what);
		idlc_note(u->diag, &old->loc, "%s is defined here", old->what);
	} else if (c != NULL) {
		idlc_error(u->diag, loc, "%s gets the C name '%s', which is already %s", what, name,
		           sym_kind_name(c));
		note_defined(u, c, "");
	} else {
		/* remembered under the generated name, reported with the source name */
		idlc_sym *s = new_sym(u, IDLC_S_PROC, name, loc, order);
		s->what = idlc_arena_strdup(&u->arena, what);
		tab_put(cnames, s);
	}
}

/* check_proc_cnames -- proc_V, proc_V_svc, proc_V_info, proc_V_argument, proc_V_async,
 * proc_V_multi, proc_V_multi_fn. */
static void
check_proc_cnames(idlc_unit *u, const idlc_proc *p, const idlc_version *v, const idlc_def *d,
                  idlc_symtab *cnames)
{
	static const char *const suffix[] = { "", "_svc", "_info", "_argument", "_async", "_multi",
		                                    "_multi_fn" };
	idlc_buf what = { 0 };
	idlc_buf_printf(&what, "procedure '%s'", p->name);
	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		if (i == 3 && p->nparams < 2)
			continue; /* no argument struct */
		idlc_buf b = { 0 };
		idlc_buf_printf(&b, "%s_%" PRIu32 "%s", p->name, v->num, suffix[i]);
		char *cname = idlc_lower(&u->arena, b.data);
		idlc_buf_free(&b);
		if (i == 0 && tab_get(cnames, cname) != NULL) {
			/* one message for the procedure, not one per suffix */
			check_cname(u, cname, what.data, &p->loc, cnames, d->order);
			break;
		}
		check_cname(u, cname, what.data, &p->loc, cnames, d->order);
	}
	idlc_buf_free(&what);
}

/* check_prog_cnames -- prog_V_program, prog_V_register. */
static void
check_prog_cnames(idlc_unit *u, const idlc_version *v, const idlc_def *d, idlc_symtab *cnames)
{
	static const char *const suffix[] = { "_program", "_register" };
	idlc_buf what = { 0 };
	idlc_buf_printf(&what, "version '%s' of program '%s'", v->name, d->name);
	for (size_t i = 0; i < 2; i++) {
		idlc_buf b = { 0 };
		idlc_buf_printf(&b, "%s_%" PRIu32 "%s", d->name, v->num, suffix[i]);
		char *cname = idlc_lower(&u->arena, b.data);
		idlc_buf_free(&b);
		check_cname(u, cname, what.data, &v->loc, cnames, d->order);
	}
	idlc_buf_free(&what);
}

/* check_program -- numbers (range, duplicates), names, procedure signatures, and the C
 * names the procedures get. */
static void
check_program(idlc_unit *u, idlc_def *d, idlc_symtab *cnames, hidx *progs)
{
	bool pk = number(u, d->number, "program", d->name, &d->num);
	if (pk) {
		const idlc_def *o = hidx_add(progs, d->num, NULL, d);
		if (o != NULL) {
			idlc_error(u->diag, &d->number->loc,
			           "program number %" PRIu32 " is already used by program '%s'", d->num,
			           o->name);
			idlc_note(u->diag, &o->loc, "'%s' is defined here", o->name);
		}
	}
	hidx vnums = { 0 };
	for (idlc_version *v = d->versions; v != NULL; v = v->next) {
		bool vk = number(u, v->number, "version", v->name, &v->num);
		check_same_number(u, "version", v->name, &v->loc, v->number, vk);
		const idlc_version *ov = vk ? hidx_add(&vnums, v->num, NULL, v) : NULL;
		if (ov != NULL) {
			idlc_error(u->diag, &v->number->loc,
			           "version number %" PRIu32 " is used twice in program '%s'", v->num,
			           d->name);
			idlc_note(u->diag, &ov->loc, "version '%s' has it already", ov->name);
		}
		hidx pnames = { 0 }, pnums = { 0 };
		v->nprocs = 0;
		for (idlc_proc *p = v->procs; p != NULL; p = p->next) {
			v->nprocs++;
			bool nk = number(u, p->number, "procedure", p->name, &p->num);
			bool reported = false;
			const idlc_proc *o = hidx_add_name(&pnames, p->name, p);
			if (o != NULL) {
				idlc_error(u->diag, &p->loc, "procedure '%s' is defined twice in version '%s'",
				           p->name, v->name);
				idlc_note(u->diag, &o->loc, "'%s' is first defined here", o->name);
				reported = true;
			} else if (nk && (o = hidx_add(&pnums, p->num, NULL, p)) != NULL) {
				idlc_error(u->diag, &p->number->loc,
				           "procedure number %" PRIu32 " is used twice in version '%s'",
				           p->num, v->name);
				idlc_note(u->diag, &o->loc, "procedure '%s' has it already", o->name);
			}
			if (!reported)
				reported = !check_same_number(u, "procedure", p->name, &p->loc, p->number,
				                              nk);
			check_param_type(u, p->result, d);
			for (idlc_param *a = p->params; a != NULL; a = a->next) {
				if (a->type->kind == IDLC_T_VOID) {
					if (p->nparams != 0)
						idlc_error(u->diag, &a->loc,
						           "'void' must be the only argument of '%s'", p->name);
					continue;
				}
				check_param_type(u, a->type, d);
			}
			/* the C names: proc_V must be unique and not clash with a type or const */
			if (vk && !reported)
				check_proc_cnames(u, p, v, d, cnames);
		}
		hidx_free(&pnames);
		hidx_free(&pnums);
		if (vk && ov == NULL)
			check_prog_cnames(u, v, d, cnames);
	}
	hidx_free(&vnums);
}

/* idlc_check -- see idlc.h. */
int
idlc_check(idlc_unit *u)
{
	int before = idlc_diag_errors(u->diag);
	idlc_symtab cnames = { 0 };
	hidx progs = { 0 };

	declare_all(u);
	/* in order; a constant using an enumerator of a later enum evaluates that enum */
	for (idlc_def *d = u->defs; d != NULL; d = d->next) {
		switch (d->kind) {
		case IDLC_DEF_CONST:
			check_const(u, d);
			break;
		case IDLC_DEF_ENUM:
			check_enum(u, d);
			break;
		case IDLC_DEF_STRUCT:
			check_struct(u, d);
			break;
		case IDLC_DEF_UNION:
			check_union(u, d);
			break;
		case IDLC_DEF_TYPEDEF:
			check_typedef(u, d);
			break;
		case IDLC_DEF_PROGRAM:
			check_program(u, d, &cnames, &progs);
			break;
		case IDLC_DEF_PASSTHRU:
			break;
		}
	}
	for (idlc_def *d = u->defs; d != NULL; d = d->next)
		if (d->kind == IDLC_DEF_STRUCT)
			find_list(d);
	free(cnames.slots);
	hidx_free(&progs);
	idlc_diag_flush(u->diag);
	return idlc_diag_errors(u->diag) - before;
}

/* idlc_prelude_decls -- append to b what the header must declare for the prelude names u
 * uses (TRUE, netobj, ...), in a fixed order. */
void
idlc_prelude_decls(idlc_unit *u, idlc_buf *b)
{
	const char *last = NULL; /* entries sharing a declaration are adjacent: SUNTYPES_DECL */
	for (size_t i = 0; i < sizeof prelude / sizeof prelude[0]; i++) {
		if (prelude[i].cdecl == NULL || prelude[i].cdecl == last)
			continue;
		idlc_sym *s = tab_get(&u->syms, prelude[i].name);
		if (s != NULL && s->kind == IDLC_S_PRELUDE && s->used) {
			idlc_buf_puts(b, prelude[i].cdecl);
			idlc_buf_putc(b, '\n');
			last = prelude[i].cdecl;
		}
	}
}

/* extern_cmp -- qsort order of symbols: by name. */
static int
extern_cmp(const void *a, const void *b)
{
	return strcmp((*(const idlc_sym *const *)a)->name, (*(const idlc_sym *const *)b)->name);
}

/* idlc_extern_types -- see idlc.h. */
const idlc_sym **
idlc_extern_types(idlc_unit *u, size_t *n)
{
	const idlc_sym **v = idlc_xcalloc(u->syms.count + 1, sizeof(*v));
	*n = 0;
	for (size_t i = 0; i < u->syms.cap; i++) {
		const idlc_sym *s = u->syms.slots[i];
		if (s != NULL && s->proto && s->is_type)
			v[(*n)++] = s;
	}
	qsort(v, *n, sizeof(*v), extern_cmp);
	return v;
}

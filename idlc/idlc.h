/*
 * idlc -- the interface compiler of remotecall: internal header.
 *
 * Passes, one file each:
 *
 *   main.c      command line; runs cpp once per output (RPC_HDR, RPC_XDR, ...), writes files
 *   lexer.l     cpp output -> tokens (reentrant flex); follows # line markers
 *   parser.y    tokens -> AST (pure bison); actions only call the builders of ast.c
 *   ast.c       AST builders, the arena, %-line analysis
 *   check.c     name resolution and semantic checks (a unit at a time)
 *   gen_h.c     NAME.h        gen_xdr.c   NAME_xdr.c
 *   gen_clnt.c  NAME_clnt.c   gen_svc.c   NAME_svc.c
 *   gen_sample_clnt.c  NAME_client.c   gen_sample_svc.c  NAME_server.c
 *   gen_makefile.c     Makefile.NAME   (the samples of -a, -Sc, -Ss, -Sm)
 *   gen_print.c  NAME_print.c (--print)   gen_fuzz.c  NAME_fuzz.c (--fuzz)
 *   bounds.c    the largest XDR encoding of types and procedures (TYPE_XDR_MAX)
 *   gen_common.c  what the generators share (C type names, expressions, XDR calls)
 *   diag.c      diagnostics (file:line:col: error: ..., source line, caret) and source cache
 *   util.c      memory, growable buffers
 *
 * Internal names are idlc_ (shared) or static.
 */
#ifndef IDLC_IDLC_H
#define IDLC_IDLC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ast.h"

#if defined(__GNUC__)
#define IDLC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define IDLC_NORETURN __attribute__((noreturn))
#else
#define IDLC_PRINTF(f, a)
#define IDLC_NORETURN
#endif

/* ---------------------------------------------------------------------------------------- */
/* util.c -- memory and buffers                                                             */
/* ---------------------------------------------------------------------------------------- */

/* idlc_xmalloc / idlc_xrealloc / idlc_xstrdup -- allocate or die: on failure they print
 * "idlc: out of memory" and exit(2). The caller frees the result with free(). */
void *idlc_xmalloc(size_t n);
void *idlc_xcalloc(size_t n, size_t size);
void *idlc_xrealloc(void *p, size_t n);
char *idlc_xstrdup(const char *s);
IDLC_NORETURN void idlc_oom(void);

/* An arena: many small zeroed allocations freed together. */
typedef struct idlc_arena_chunk idlc_arena_chunk;
typedef struct idlc_arena {
	idlc_arena_chunk *head;
} idlc_arena;

/* idlc_arena_alloc -- n zeroed bytes owned by the arena (dies on out of memory). */
void *idlc_arena_alloc(idlc_arena *a, size_t n);
/* idlc_arena_strndup -- a NUL-terminated copy of s[0..n) owned by the arena. */
char *idlc_arena_strndup(idlc_arena *a, const char *s, size_t n);
char *idlc_arena_strdup(idlc_arena *a, const char *s);
/* idlc_arena_free -- release every allocation of the arena; it may be used again. */
void idlc_arena_free(idlc_arena *a);

/* A growable byte buffer, always NUL-terminated once anything was written. */
typedef struct idlc_buf {
	char *data;
	size_t len;
	size_t cap;
} idlc_buf;

void idlc_buf_putn(idlc_buf *b, const char *s, size_t n);
void idlc_buf_puts(idlc_buf *b, const char *s);
void idlc_buf_putc(idlc_buf *b, char c);
void idlc_buf_printf(idlc_buf *b, const char *fmt, ...) IDLC_PRINTF(2, 3);
void idlc_buf_vprintf(idlc_buf *b, const char *fmt, va_list ap);
/* idlc_buf_free -- release the buffer's memory; it is empty and usable again. */
void idlc_buf_free(idlc_buf *b);

/* idlc_strhash -- FNV-1a (32 bits) of s: the one string hash of idlc's tables. */
uint32_t idlc_strhash(const char *s);
/* idlc_intern -- a copy of s that lives until idlc_intern_free(); equal strings give the
 * same pointer. Used for file names in locations. */
const char *idlc_intern(const char *s);
void idlc_intern_free(void);

/* ---------------------------------------------------------------------------------------- */
/* diag.c -- diagnostics                                                                    */
/* ---------------------------------------------------------------------------------------- */

/*
 * Diagnostics are printed to stderr in the GNU format, each followed by the source line and
 * a caret line:
 *
 *   file.x:3:5: error: undefined type 'foo'
 *       foo x;
 *       ^~~
 *
 * An error or warning starts a group; notes join the group before it. A group identical to
 * one already printed is dropped, so the passes that parse the same file again (one per
 * output) report each problem once.
 */
typedef struct idlc_diag idlc_diag;

/* Most errors idlc prints: the next one is replaced by "too many errors; idlc stops here"
 * and everything after it is dropped (the lexer also stops reading at this many). */
#define IDLC_MAX_ERRORS 100

idlc_diag *idlc_diag_new(FILE *out);
void idlc_diag_free(idlc_diag *d);
void idlc_error(idlc_diag *d, const idlc_loc *loc, const char *fmt, ...) IDLC_PRINTF(3, 4);
void idlc_warning(idlc_diag *d, const idlc_loc *loc, const char *fmt, ...) IDLC_PRINTF(3, 4);
void idlc_note(idlc_diag *d, const idlc_loc *loc, const char *fmt, ...) IDLC_PRINTF(3, 4);
/* idlc_diag_flush -- print the pending group (if new). Called at the end of every pass. */
void idlc_diag_flush(idlc_diag *d);
/* Errors printed so far (after de-duplication), warnings likewise. */
int idlc_diag_errors(const idlc_diag *d);
int idlc_diag_warnings(const idlc_diag *d);

/*
 * idlc_src_line -- line `line` of file `file` as the user wrote it (before cpp), without its
 * newline; *len receives its length. NULL if the file cannot be read or is shorter. The text
 * is cached and owned by d.
 */
const char *idlc_src_line(idlc_diag *d, const char *file, int line, size_t *len);

/*
 * idlc_src_column -- where the token text[0..n) really starts on line `line` of `file`. cpp
 * squeezes white space, so the column the lexer counts in cpp's output can be wrong; this
 * searches the original line from just after the previous token found on the same line.
 * Returns the 1-based column, or fallback if the token is not there (it came from a macro).
 */
int idlc_src_column(idlc_diag *d, const char *file, int line, const char *text, size_t n,
                    int fallback);

/* ---------------------------------------------------------------------------------------- */
/* Symbols and units (check.c)                                                              */
/* ---------------------------------------------------------------------------------------- */

typedef enum idlc_pass {
	IDLC_PASS_HDR,  /* NAME.h, cpp with -DRPC_HDR */
	IDLC_PASS_XDR,  /* NAME_xdr.c, -DRPC_XDR */
	IDLC_PASS_CLNT, /* NAME_clnt.c, -DRPC_CLNT */
	IDLC_PASS_SVC,  /* NAME_svc.c, -DRPC_SVC */
	IDLC_NPASS
} idlc_pass;

typedef enum idlc_skind {
	IDLC_S_CONST,   /* const NAME = ...; */
	IDLC_S_ENUMVAL, /* an enumerator */
	IDLC_S_TYPE,    /* a struct, union, enum or typedef */
	IDLC_S_PROG,    /* a program, version or procedure name (each is a #define) */
	IDLC_S_VERS,
	IDLC_S_PROC,
	IDLC_S_PCTDEF,  /* %#define NAME value */
	IDLC_S_PRELUDE, /* a name idlc knows from Sun's headers: TRUE, u_int, netobj, ... */
	IDLC_S_EXTERN   /* a name declared by a header a %#include line includes (assumed) */
} idlc_skind;

/* Special prelude types: the generated header declares them when used. */
#define IDLC_PRE_NETOBJ 1
#define IDLC_PRE_DES_BLOCK 2

typedef struct idlc_prelude {
	const char *name;
	bool is_type;
	idlc_tkind kind;    /* alias types: the primitive they stand for */
	int special;        /* IDLC_PRE_NETOBJ, IDLC_PRE_DES_BLOCK, or 0 */
	int64_t value;      /* constants */
	const char *cdecl;  /* what the header must declare (NULL: nothing) */
} idlc_prelude;

struct idlc_unit;

typedef struct idlc_sym {
	idlc_skind kind;
	const char *name;
	idlc_loc loc;
	int order;                 /* position in the file (see idlc_def.order) */
	int sub;                   /* ENUMVAL: index in its enum */
	int ready;                 /* the C name is usable after this order (-1: always) */
	bool undefined;            /* EXTERN: reported as an error (not assumed) */
	bool proto;                /* EXTERN or PCTDEF type: NAME.h declares its xdr_ routine */
	const struct idlc_unit *owner;
	idlc_def *def;             /* CONST, TYPE, PROG: the definition; ENUMVAL: its enum */
	idlc_enumerator *en;       /* ENUMVAL */
	idlc_version *vers;        /* VERS */
	idlc_proc *proc;           /* PROC */
	idlc_expr *expr;           /* CONST, PCTDEF: the value */
	const idlc_prelude *pre;   /* PRELUDE */
	bool is_type;              /* EXTERN / PRELUDE: a type, not a constant */
	idlc_tag tag;              /* EXTERN type: written with this tag */
	/* value of a constant (check) */
	int state;                 /* 0 not evaluated, 1 being evaluated, 2 done */
	bool known;
	int64_t value;
	bool big;                  /* value is above INT64_MAX (see idlc_expr.big) */
	bool used;                 /* PRELUDE: the header must declare it */
	const char *what;          /* a generated C name: what it was generated for */
} idlc_sym;

typedef struct idlc_symtab {
	idlc_sym **slots;
	size_t cap;
	size_t count;
} idlc_symtab;

/* One parse of the input (one pass) and everything derived from it. */
typedef struct idlc_unit {
	idlc_pass pass;
	idlc_arena arena;
	idlc_diag *diag;
	idlc_def *defs;
	idlc_def **tail;
	int order;                     /* next definition's order */
	bool include_seen;             /* a %#include line was seen (in this pass) */
	idlc_loc include_loc;
	idlc_symtab syms;
	const struct idlc_unit *env;   /* the header pass, consulted for names this pass lacks */
	const char *input;             /* the .x file as named on the command line */
	bool strict;                   /* --strict: an undefined type is an error (check.c) */
} idlc_unit;

/* idlc_unit_init -- an empty unit for pass p reporting to d. */
void idlc_unit_init(idlc_unit *u, idlc_pass p, idlc_diag *d, const char *input);
/* idlc_unit_free -- release the AST, symbols and strings of u. */
void idlc_unit_free(idlc_unit *u);

/* idlc_sym_lookup -- the symbol `name` of u (own definitions, %#defines, then the header
 * pass's, then the prelude), or NULL. Does not mark prelude symbols used. */
idlc_sym *idlc_sym_lookup(idlc_unit *u, const char *name);

/*
 * idlc_check -- resolve every name of u and check it: undefined and duplicate names, types
 * used before their definition, numbers out of range, duplicate procedure/version/program
 * numbers, duplicate union cases and enum values, string/opaque misuse, union discriminant
 * types. Reports through u->diag; returns the number of errors it found.
 */
int idlc_check(idlc_unit *u);

/* Helpers for the generators (check.c). */

/* idlc_resolve_typedefs -- follow typedef aliases ("typedef foo bar;") from t to the first
 * type that is not a plain alias; *out_def receives the struct/union/enum/typedef definition
 * reached, or NULL for a primitive or external type. Returns that type. */
const idlc_type *idlc_resolve_alias(const idlc_type *t, const idlc_def **out_def);
/* idlc_type_def -- the definition a named type refers to (NULL: primitive or external). */
const idlc_def *idlc_type_def(const idlc_type *t);
/* idlc_lower -- a lower-case copy of s, in arena a. */
char *idlc_lower(idlc_arena *a, const char *s);
/* idlc_prelude_decls -- the C declarations of the prelude names u uses (TRUE, netobj...). */
void idlc_prelude_decls(idlc_unit *u, idlc_buf *b);
/* idlc_extern_types -- the types u uses that nothing in view declares (a %#define, or no
 * definition at all), whose xdr_ routines the program supplies: a malloc'd array of *n
 * symbols, sorted by name (the caller frees the array). */
const idlc_sym **idlc_extern_types(idlc_unit *u, size_t *n);
/* idlc_decl_empty -- whether d is a fixed array of 0 elements (it holds and codes nothing,
 * and has no C member: C has no zero-length arrays). */
bool idlc_decl_empty(const idlc_decl *d);

/* ---------------------------------------------------------------------------------------- */
/* ast.c -- builders (called by the parser actions) and the parse                           */
/* ---------------------------------------------------------------------------------------- */

/* The state of one parse: the unit it fills and the lexer's position. */
typedef struct idlc_parse {
	idlc_unit *unit;
	idlc_diag *diag;
	void *scanner;
	/* lexer position in cpp's output, mapped by # line markers */
	const char *file;
	int line;
	int col;
	int start_token;       /* the first token handed to the parser (selects the grammar) */
	bool quiet;            /* no diagnostics (parsing %#define values) */
	int errors;            /* errors this parse reported (quiet ones included) */
	idlc_expr *expr_result;/* IDLC start: the expression parsed */
	bool stop;             /* the lexer hit an unrecoverable problem: end the input */
	int parens;            /* parentheses open in the current definition (lexer) */
	int depth;             /* braces open: a %-line inside a definition is held back... */
	idlc_def *held;        /* ...and goes before that definition, as with rpcgen */
	idlc_def **held_tail;
	/* a %-line continued with backslashes over several lines (see lexer.l) */
	int pct_last;          /* the last source line that belongs to it (0: none) */
	const char *pct_text;
	idlc_loc pct_loc;
} idlc_parse;

/*
 * idlc_parse_text -- parse cpp's output text[0..n) into u (appending definitions). Syntax
 * errors are reported and counted; returns the number of errors.
 */
int idlc_parse_text(idlc_unit *u, const char *text, size_t n);

/*
 * idlc_parse_expr_text -- parse s as a constant expression, quietly (for %#define values).
 * Returns the expression (allocated in u's arena), or NULL if s is not one.
 */
idlc_expr *idlc_parse_expr_text(idlc_unit *u, const char *s, const idlc_loc *loc);

/* Lexer glue (lexer.l). */
int idlc_lex_init(idlc_parse *ps, const char *text, size_t n);
void idlc_lex_destroy(idlc_parse *ps);
/* The parser (parser.y). */
int idlc_yyparse(void *scanner, idlc_parse *ps);

/* idlc_hold_passthru -- a %-line inside a definition goes before the definition. */
void idlc_hold_passthru(idlc_parse *ps, const char *text, const idlc_loc *loc);

/* Report a lexical or syntax error at loc (counted; silent when ps->quiet). */
void idlc_parse_error(idlc_parse *ps, const idlc_loc *loc, const char *fmt, ...)
	IDLC_PRINTF(3, 4);

/* Builders: each allocates in the unit's arena and returns the new node. */
const char *idlc_str(idlc_parse *ps, const char *s, size_t n);
idlc_expr *idlc_expr_num(idlc_parse *ps, const char *text, idlc_loc loc);
idlc_expr *idlc_expr_name(idlc_parse *ps, const char *name, idlc_loc loc);
idlc_expr *idlc_expr_unary(idlc_parse *ps, int op, idlc_expr *e, idlc_loc loc);
idlc_expr *idlc_expr_binary(idlc_parse *ps, int op, idlc_expr *l, idlc_expr *r, idlc_loc loc);
idlc_expr *idlc_expr_paren(idlc_parse *ps, idlc_expr *e);

idlc_type *idlc_type_prim(idlc_parse *ps, idlc_tkind k, const char *spelling, idlc_loc loc);
idlc_type *idlc_type_named(idlc_parse *ps, idlc_tag tag, const char *name, idlc_loc loc);

idlc_decl *idlc_decl_new(idlc_parse *ps, idlc_dkind k, idlc_type *t, const char *name,
                         idlc_loc loc, idlc_expr *size);
idlc_decl *idlc_decl_append(idlc_decl *list, idlc_decl *d);

idlc_enumerator *idlc_enumerator_new(idlc_parse *ps, const char *name, idlc_loc loc,
                                     idlc_expr *value);
idlc_enumerator *idlc_enumerator_append(idlc_enumerator *list, idlc_enumerator *e);

idlc_case *idlc_case_new(idlc_parse *ps, idlc_expr *value, idlc_loc loc);
idlc_case *idlc_case_append(idlc_case *list, idlc_case *c);
idlc_arm *idlc_arm_new(idlc_parse *ps, idlc_case *cases, idlc_decl *decl);
idlc_arm *idlc_arm_append(idlc_arm *list, idlc_arm *a);

idlc_param *idlc_param_new(idlc_parse *ps, idlc_type *t, const char *name, idlc_loc loc);
/* idlc_param_sized -- an argument written with a size (`opaque value<>`, `string key<N>`,
 * `int v[N]`), which the RPC language does not allow: reports it, with the typedef to declare
 * instead, over `from` to `to`; returns the argument without its size. */
idlc_param *idlc_param_sized(idlc_parse *ps, idlc_type *t, const char *name, idlc_loc from,
                             const char *size, idlc_loc to);
idlc_param *idlc_param_append(idlc_param *list, idlc_param *p);
idlc_proc *idlc_proc_new(idlc_parse *ps, idlc_type *result, const char *name, idlc_loc loc,
                         idlc_param *params, idlc_expr *number);
idlc_proc *idlc_proc_append(idlc_proc *list, idlc_proc *p);
idlc_version *idlc_version_new(idlc_parse *ps, const char *name, idlc_loc loc,
                               idlc_proc *procs, idlc_expr *number);
idlc_version *idlc_version_append(idlc_version *list, idlc_version *v);

/* Definitions are appended to the unit as they are parsed. */
void idlc_def_const(idlc_parse *ps, const char *name, idlc_loc loc, idlc_expr *value,
                    const char *str);
void idlc_def_enum(idlc_parse *ps, const char *name, idlc_loc loc, idlc_enumerator *list);
void idlc_def_struct(idlc_parse *ps, const char *name, idlc_loc loc, idlc_decl *fields);
void idlc_def_union(idlc_parse *ps, const char *name, idlc_loc loc, idlc_decl *discrim,
                    idlc_arm *arms);
void idlc_def_typedef(idlc_parse *ps, idlc_decl *decl);
void idlc_def_program(idlc_parse *ps, const char *name, idlc_loc loc, idlc_version *vers,
                      idlc_expr *number);
void idlc_def_passthru(idlc_parse *ps, const char *text, idlc_loc loc);

/* ---------------------------------------------------------------------------------------- */
/* Generators                                                                               */
/* ---------------------------------------------------------------------------------------- */

/* The widest line idlc composes (a tab counts to the next multiple of 8). */
#define IDLC_MAX_COLUMNS 100

/* What every generator needs to name things. */
typedef struct idlc_gen {
	idlc_unit *unit;
	const char *base;     /* input name without folder and .x: "nfs_prot" */
	const char *header;   /* the header the .c files include: "nfs_prot.h" */
	idlc_buf *out;
	bool rpcgen_types;    /* --rpcgen-types: C types with rpcgen's layout (gen_common.c) */
	/* byte ranges of out copied from the .x file (%-lines): idlc_gen_wrap leaves them */
	size_t *verbatim;     /* pairs [start, end) */
	size_t nverbatim;     /* pairs used */
	size_t cverbatim;     /* pairs allocated */
} idlc_gen;

/* Each writes one output file's text to g->out. */
void idlc_gen_header(idlc_gen *g);
void idlc_gen_xdr(idlc_gen *g);
void idlc_gen_clnt(idlc_gen *g);
void idlc_gen_svc(idlc_gen *g);
/* The samples of -a / -S*, from the header pass: NAME_client.c, NAME_server.c (to edit) and
 * Makefile.NAME. */
void idlc_gen_sample_clnt(idlc_gen *g);
void idlc_gen_sample_svc(idlc_gen *g);
void idlc_gen_makefile(idlc_gen *g);

/* --print: NAME_print.c, the JSON printers; --fuzz: NAME_fuzz.c, a libFuzzer target. Both
 * from the header pass. */
void idlc_gen_print(idlc_gen *g);
void idlc_gen_fuzz(idlc_gen *g);
/* idlc_emit_print_decls -- NAME.h's declarations of what NAME_print.c defines for type d
 * (rc_print_T), or for the whole file (NAME_print_args / NAME_print_res) when d is NULL. */
void idlc_emit_print_decls(idlc_gen *g, const idlc_def *d);
/* idlc_print_prefix -- "NAME" made an identifier (arena string): the prefix of the
 * per-procedure printers and of NAME_fuzz.c's names. */
const char *idlc_print_prefix(idlc_gen *g);

/* idlc_gen_vstr -- vprintf into a string of g's unit's arena (gen_common.c). */
const char *idlc_gen_vstr(idlc_gen *g, const char *fmt, va_list ap);
/* idlc_for_each_type -- fn(g, d) for every type definition of g's unit -- enum, struct,
 * union, typedef but a self-alias -- in file order (gen_print.c). */
void idlc_for_each_type(idlc_gen *g, void (*fn)(idlc_gen *, const idlc_def *));

/* bounds.c -- the largest XDR encoding, in bytes (see the top of bounds.c). Each returns
 * false when there is no bound idlc can state (then *out is meaningless). */
bool idlc_decl_xdr_max(const idlc_decl *d, uint64_t *out);
/* idlc_def_xdr_max -- of a struct, union, enum or typedef (a self-alias has none). */
bool idlc_def_xdr_max(const idlc_def *d, uint64_t *out);
/* idlc_proc_xdr_max -- of p's arguments (reply false: the call body) or its result. */
bool idlc_proc_xdr_max(const idlc_proc *p, bool reply, uint64_t *out);
/* "#define T_XDR_MAX n" for d when bounded; nothing otherwise. */
void idlc_emit_xdr_max(idlc_gen *g, const idlc_def *d);
/* "#define proc_V_CALL_XDR_MAX n" and "..._REPLY_XDR_MAX n", each when bounded. */
void idlc_emit_proc_xdr_max(idlc_gen *g, const idlc_proc *p);
/* "#define prog_V_CALL_XDR_MAX n" (REPLY too): the largest over v's procedures, when all
 * are bounded. */
void idlc_emit_version_xdr_max(idlc_gen *g, const idlc_version *v);

/* gen_common.c */
void idlc_gen_banner(idlc_gen *g, const char *what);
/* idlc_gen_passthru -- a %-line, copied without its % (and recorded as verbatim). */
void idlc_gen_passthru(idlc_gen *g, const idlc_def *d);
/*
 * idlc_gen_wrap -- the last step of every output: each line of g->out wider than
 * IDLC_MAX_COLUMNS that idlc composed (not a %-line, a preprocessor line or a comment) is
 * broken after the commas of its outermost bracketed list, continuation lines aligned under
 * the list's first item (one tab deeper than the line when that is too far right). A line
 * with no such list keeps its width. Frees g's verbatim ranges.
 */
void idlc_gen_wrap(idlc_gen *g);
/* idlc_emit_comment -- a block comment at indent tabs holding text (paragraphs separated by
 * '\n'), filled to IDLC_MAX_COLUMNS. */
void idlc_emit_comment(idlc_buf *b, int indent, const char *text);
/* idlc_type_spelling -- t as the .x file wrote it ("unsigned int", "struct foo"); arena. */
const char *idlc_type_spelling(idlc_gen *g, const idlc_type *t);
/* idlc_type_owns_memory -- whether a decoded value of type t may hold memory the decode
 * allocated (strings, variable arrays, optional data; external types are assumed to). */
bool idlc_type_owns_memory(const idlc_type *t);
void idlc_emit_expr(idlc_buf *b, const idlc_expr *e);
void idlc_emit_define_value(idlc_buf *b, const idlc_expr *e);
void idlc_emit_clnt_sig(idlc_gen *g, const idlc_proc *p, bool definition);
void idlc_emit_svc_sig(idlc_gen *g, const idlc_proc *p);
void idlc_emit_reply_sig(idlc_gen *g, const idlc_proc *p, bool definition);
void idlc_emit_async_sig(idlc_gen *g, const idlc_proc *p, bool definition);
void idlc_emit_multi_sig(idlc_gen *g, const idlc_proc *p, bool definition);
void idlc_emit_multi_fn(idlc_gen *g, const idlc_proc *p);
const char *idlc_ctype(idlc_gen *g, const idlc_type *t);
void idlc_emit_member(idlc_gen *g, const idlc_decl *d, int indent);
void idlc_emit_typedef(idlc_gen *g, const idlc_decl *d);
const char *idlc_elem_proc(idlc_gen *g, const idlc_type *t);
void idlc_emit_xdr_decl(idlc_gen *g, const idlc_decl *d, const char *ptr, const char *val,
                        const char *memb, int indent);
void idlc_indent(idlc_buf *b, int n);
/* Names rpcgen gives: "add_1" (proc_V), "prog_1" (prog_V). Arena strings. */
const char *idlc_proc_cname(idlc_gen *g, const idlc_proc *p);
const char *idlc_prog_cname(idlc_gen *g, const idlc_version *v);
/* The C type of a procedure argument or result; "void" for void. */
const char *idlc_param_ctype(idlc_gen *g, const idlc_type *t);
/* The XDR routine and sizeof expression of a procedure argument or result. */
const char *idlc_param_proc(idlc_gen *g, const idlc_type *t);
/* "const T *name" for a parameter pointing to type t (handles char *). */
const char *idlc_const_ptr_param(idlc_gen *g, const idlc_type *t, const char *name);
/* idlc_decl_text -- "T name" into b, without a space after a '*'. */
void idlc_decl_text(idlc_buf *b, const char *type, const char *name);
/* idlc_type_is_string -- whether a value of type t is a C string (string, or a typedef of
 * string<N>, through aliases). */
bool idlc_type_is_string(const idlc_type *t);
/*
 * idlc_emit_fill_strings -- for the samples: statements at indent that give every string of a
 * zero-filled value of type t an empty string (XDR cannot send a NULL one): the value itself,
 * or the string members of a struct and of the structs it holds (not those in arrays,
 * unions or optional data). The value is named val ("arg", "*res"), its members' prefix memb
 * ("arg.", "res->"). alloc: malloc'd strings (calloc(1, 1); "return false" when out of
 * memory), else the literal "".
 */
void idlc_emit_fill_strings(idlc_gen *g, const idlc_type *t, const char *val, const char *memb,
                            int indent, bool alloc);
/* idlc_expand -- text into b with @N@ replaced by NAME (g->base), @X@ by the .x file's name
 * without its folder, @F@ by the options that change the output (" --rpcgen-types" or ""). */
void idlc_expand(idlc_gen *g, idlc_buf *b, const char *text);
/* idlc_emit_sample_head -- a sample's opening: text (expanded) as a block comment, the
 * #include lines `includes`, a blank line, #include "NAME.h". */
void idlc_emit_sample_head(idlc_gen *g, const char *text, const char *includes);
/* idlc_for_each_version -- fn(g, v) for every version of every program of g's unit, in file
 * order (fn may be NULL); returns how many there are. */
int idlc_for_each_version(idlc_gen *g, void (*fn)(idlc_gen *, const idlc_version *));

#endif

/*
 * idlc -- the abstract syntax tree of an RPC language (.x) file.
 *
 * The parser (parser.y) builds it through the builders declared here (ast.c); check.c
 * resolves names and fills the "check" fields; the generators (gen_*.c) read it.
 *
 * Every node carries the location of the token that names it (file:line:col). All nodes and
 * strings live in the unit's arena and are freed with it (idlc_unit_free), so a node that a
 * syntax error discards needs no destructor.
 */
#ifndef IDLC_AST_H
#define IDLC_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A position in a source file: file name (interned, never freed before exit), 1-based line
 * and column, and the length of the token there (for the ~~~ under the caret). */
typedef struct idlc_loc {
	const char *file;
	int line;
	int col;
	int len;
} idlc_loc;

struct idlc_sym;
struct idlc_def;

/* ---------------------------------------------------------------------------------------- */
/* Constant expressions                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* Constants are 64-bit, signed or unsigned: a value is in [INT64_MIN, UINT64_MAX], held in an
 * int64_t with a flag `big` for those above INT64_MAX (then the bits are the uint64_t). */

typedef enum idlc_expr_kind {
	IDLC_EX_NUM,    /* an integer literal: text is its spelling, num its value */
	IDLC_EX_NAME,   /* a name: a const, an enumerator, a program/version/procedure name... */
	IDLC_EX_UNARY,  /* op lhs: op is '-', '+' or '~' */
	IDLC_EX_BINARY  /* lhs op rhs: op is one of + - * / % | & ^ or IDLC_OP_SHL/SHR */
} idlc_expr_kind;

#define IDLC_OP_SHL 256
#define IDLC_OP_SHR 257

typedef struct idlc_expr {
	idlc_expr_kind kind;
	idlc_loc loc;
	int op;
	const char *text;
	int64_t num;      /* NUM: its value (as uint64_t when `big`) */
	struct idlc_expr *lhs, *rhs;
	int depth;  /* nesting depth, parentheses included (bounded by IDLC_MAX_EXPR_DEPTH) */
	bool paren; /* written in parentheses */
	bool bad;   /* a literal that did not parse (already reported) */
	/* check */
	bool known;            /* value is known (false: it uses a name defined outside idlc's view) */
	int64_t value;
	bool big;              /* value (num) is above INT64_MAX: read it as uint64_t */
	struct idlc_sym *sym;  /* IDLC_EX_NAME: what the name resolved to */
} idlc_expr;

#define IDLC_MAX_EXPR_DEPTH 200

/* ---------------------------------------------------------------------------------------- */
/* Types and declarations                                                                   */
/* ---------------------------------------------------------------------------------------- */

typedef enum idlc_tkind {
	IDLC_T_VOID,
	IDLC_T_INT,    /* int, long, int32_t ...           -> int32_t   rc_xdr_int */
	IDLC_T_UINT,   /* unsigned int, unsigned, u_int... -> uint32_t  rc_xdr_u_int */
	IDLC_T_HYPER,  /* hyper                            -> int64_t   rc_xdr_hyper */
	IDLC_T_UHYPER, /* unsigned hyper                   -> uint64_t  rc_xdr_u_hyper */
	IDLC_T_FLOAT,
	IDLC_T_DOUBLE,
	IDLC_T_QUAD,   /* quadruple                        -> rc_quadruple */
	IDLC_T_BOOL,   /* bool                             -> bool      rc_xdr_bool */
	IDLC_T_CHAR,   /* char                             -> char      rc_xdr_char */
	IDLC_T_UCHAR,  /* unsigned char, u_char */
	IDLC_T_SHORT,  /* short                            -> int16_t */
	IDLC_T_USHORT, /* unsigned short, u_short */
	IDLC_T_STRING,
	IDLC_T_OPAQUE,
	IDLC_T_NAMED   /* a name: a struct, union, enum or typedef of this file, or external */
} idlc_tkind;

typedef enum idlc_tag {
	IDLC_TAG_NONE = 0,
	IDLC_TAG_STRUCT,
	IDLC_TAG_UNION,
	IDLC_TAG_ENUM
} idlc_tag;

typedef struct idlc_type {
	idlc_tkind kind;
	idlc_loc loc;
	const char *name;     /* IDLC_T_NAMED: the name as written */
	idlc_tag tag;         /* "struct foo", "union foo", "enum foo" */
	const char *spelling; /* how the type was written, for messages ("unsigned int", "u_int") */
	/* check */
	struct idlc_sym *sym; /* IDLC_T_NAMED: the definition (or external/prelude symbol) */
	bool use_tag;         /* emit "struct NAME": a pointer to a struct not yet complete here */
} idlc_type;

typedef enum idlc_dkind {
	IDLC_D_PLAIN, /* T x       */
	IDLC_D_FIXED, /* T x[N]    */
	IDLC_D_VAR,   /* T x<N> / T x<> */
	IDLC_D_PTR,   /* T *x      */
	IDLC_D_VOID   /* void      */
} idlc_dkind;

typedef struct idlc_decl {
	idlc_dkind kind;
	idlc_loc loc; /* of the name (of "void" for a void declaration) */
	const char *name;
	idlc_type *type;
	idlc_expr *size; /* FIXED: the count; VAR: the maximum, NULL for <> */
	struct idlc_decl *next;
	struct idlc_decl *last;  /* parse: the last node of the list (kept in its first) */
} idlc_decl;

typedef struct idlc_enumerator {
	const char *name;
	idlc_loc loc;
	idlc_expr *value; /* NULL: previous value + 1 (0 for the first) */
	struct idlc_enumerator *next;
	struct idlc_enumerator *last;  /* parse: the last node of the list (kept in its first) */
	/* check */
	int64_t v;
	bool known;
	struct idlc_sym *sym;
} idlc_enumerator;

typedef struct idlc_case {
	idlc_expr *value; /* NULL: "default" */
	idlc_loc loc;     /* of "case"/"default" */
	struct idlc_case *next;
	struct idlc_case *last;  /* parse: the last node of the list (kept in its first) */
} idlc_case;

typedef struct idlc_arm {
	idlc_case *cases;
	idlc_decl *decl; /* IDLC_D_VOID for "void;" */
	struct idlc_arm *next;
	struct idlc_arm *last;  /* parse: the last node of the list (kept in its first) */
} idlc_arm;

/* ---------------------------------------------------------------------------------------- */
/* Programs                                                                                 */
/* ---------------------------------------------------------------------------------------- */

typedef struct idlc_param {
	idlc_type *type; /* IDLC_T_VOID for "(void)" */
	const char *name; /* optional name written after the type (rpcgen -N style), or NULL */
	idlc_loc loc;
	struct idlc_param *next;
	struct idlc_param *last;  /* parse: the last node of the list (kept in its first) */
} idlc_param;

typedef struct idlc_proc {
	const char *name;
	idlc_loc loc;
	idlc_type *result; /* IDLC_T_VOID for void */
	idlc_param *params;
	int nparams;       /* 0 when the argument is void */
	idlc_expr *number;
	struct idlc_proc *next;
	struct idlc_proc *last;  /* parse: the last node of the list (kept in its first) */
	/* check */
	struct idlc_version *vers;
	uint32_t num;
} idlc_proc;

typedef struct idlc_version {
	const char *name;
	idlc_loc loc;
	idlc_proc *procs;
	idlc_expr *number;
	struct idlc_version *next;
	struct idlc_version *last;  /* parse: the last node of the list (kept in its first) */
	/* check */
	struct idlc_def *prog;
	uint32_t num;
	int nprocs;
} idlc_version;

/* ---------------------------------------------------------------------------------------- */
/* Definitions                                                                              */
/* ---------------------------------------------------------------------------------------- */

typedef enum idlc_dfkind {
	IDLC_DEF_CONST,
	IDLC_DEF_ENUM,
	IDLC_DEF_STRUCT,
	IDLC_DEF_UNION,
	IDLC_DEF_TYPEDEF,
	IDLC_DEF_PROGRAM,
	IDLC_DEF_PASSTHRU /* a %-line */
} idlc_dfkind;

typedef struct idlc_def {
	idlc_dfkind kind;
	idlc_loc loc; /* of the name (of the % for a %-line) */
	const char *name;
	int order;    /* position in the file: definitions before this one have a smaller order */
	struct idlc_def *next;

	idlc_expr *value;        /* CONST: numeric value (NULL for a string constant) */
	const char *str;         /* CONST: string constant, with its quotes */
	idlc_enumerator *enums;  /* ENUM */
	idlc_decl *fields;       /* STRUCT */
	idlc_decl *discrim;      /* UNION: the discriminant declaration */
	idlc_arm *arms;          /* UNION */
	idlc_decl *decl;         /* TYPEDEF */
	idlc_version *versions;  /* PROGRAM */
	idlc_expr *number;       /* PROGRAM */
	const char *text;        /* PASSTHRU: the line without its leading % */

	/* check */
	bool checked;            /* ENUM: its values were computed */
	uint64_t csize;          /* STRUCT, UNION, TYPEDEF, ENUM: about sizeof in C (saturated) */
	uint32_t num;            /* PROGRAM: the program number */
	bool self_alias;         /* TYPEDEF "typedef struct foo foo;": no new type */
	bool std_alias;          /* TYPEDEF "typedef int int32_t;": <stdint.h> has the C type */
	bool no_members;         /* STRUCT: every field is a zero-length array (no C member) */
	idlc_decl *list_next;    /* STRUCT: the field that links a list (T *next), or NULL */
	idlc_decl *chain_next;   /* STRUCT: its one self-link when not last: freed in a loop */
	bool has_default;        /* UNION */
	bool all_void;           /* UNION: no arm carries data (no <union>_u member) */

	/* bounds.c: the largest XDR encoding, computed once (0 not yet, 1 being computed,
	 * 2 bounded by xdr_max bytes, 3 unbounded) */
	int xdr_max_state;
	uint64_t xdr_max;
} idlc_def;

#endif

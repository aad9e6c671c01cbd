/*
 * idlc -- the grammar of the RPC language (RFC 5531 section 12, RFC 4506 section 6, and
 * rpcgen's extensions): pure bison, locations, verbose errors, no conflicts.
 *
 * Actions only call the builders of ast.c. Names are resolved later (check.c), so a type
 * may be used before the parser has seen its definition. Nodes live in an arena, so values
 * the error recovery throws away need no %destructor.
 */
%define api.pure full
%define api.prefix {idlc_yy}
%define api.location.type {idlc_loc}
%define parse.error verbose
%locations
%expect 0
%lex-param {void *scanner}
%parse-param {void *scanner} {idlc_parse *ps}

%code requires {
#include <string.h>

#include "idlc.h"
}

%code provides {
int idlc_yylex(IDLC_YYSTYPE *yylval, idlc_loc *yylloc, void *scanner);
void idlc_yyerror(idlc_loc *loc, void *scanner, idlc_parse *ps, const char *msg);
}

%code {
/* The location of a rule is that of its first symbol (or, for an empty rule, where the
 * previous symbol was). */
#define YYLLOC_DEFAULT(Cur, Rhs, N)                                     \
	do {                                                            \
		if (N) {                                                \
			(Cur) = YYRHSLOC(Rhs, 1);                       \
		} else {                                                \
			(Cur) = YYRHSLOC(Rhs, 0);                       \
			(Cur).len = 0;                                  \
		}                                                       \
	} while (0)
}

%union {
	const char *str;
	idlc_expr *expr;
	idlc_type *type;
	idlc_decl *decl;
	idlc_enumerator *en;
	idlc_case *cases;
	idlc_arm *arm;
	idlc_param *param;
	idlc_proc *proc;
	idlc_version *vers;
}

%token <str> IDENT "identifier"
%token <str> NUMBER "number"
%token <str> STRCONST "string constant"
%token <str> PASSTHRU "%-line"
%token KW_CONST "const" KW_ENUM "enum" KW_STRUCT "struct" KW_UNION "union"
%token KW_SWITCH "switch" KW_CASE "case" KW_DEFAULT "default" KW_TYPEDEF "typedef"
%token KW_OPAQUE "opaque" KW_STRING "string" KW_UNSIGNED "unsigned" KW_INT "int"
%token KW_HYPER "hyper" KW_FLOAT "float" KW_DOUBLE "double" KW_QUADRUPLE "quadruple"
%token KW_BOOL "bool" KW_VOID "void" KW_PROGRAM "program" KW_VERSION "version"
%token KW_LONG "long" KW_SHORT "short" KW_CHAR "char"
%token SHL "<<" SHR ">>"
%token START_SPEC START_EXPR

%type <expr> expr
%type <type> type_spec
%type <decl> declaration fields field
%type <en> enumerators enumerator
%type <cases> labels label
%type <arm> arms arm
%type <param> params param
%type <proc> procs proc
%type <vers> versions version
%type <type> proc_type

%left '|'
%left '^'
%left '&'
%left SHL SHR
%left '+' '-'
%left '*' '/' '%'
%precedence UNARY

%%

start
	: START_SPEC specification
	| START_EXPR expr               { ps->expr_result = $2; }
	;

specification
	: %empty
	| specification definition
	;

definition
	/* const NAME = expr ;  |  const NAME = "string" ; */
	: KW_CONST IDENT '=' expr ';'   { idlc_def_const(ps, $2, @2, $4, NULL); }
	| KW_CONST IDENT '=' STRCONST ';' { idlc_def_const(ps, $2, @2, NULL, $4); }
	/* typedef declaration ; */
	| KW_TYPEDEF declaration ';'    { idlc_def_typedef(ps, $2); }
	/* enum NAME { A = 1, B, ... } ; */
	| KW_ENUM IDENT '{' enumerators opt_comma '}' ';'
	                                { idlc_def_enum(ps, $2, @2, $4); }
	/* struct NAME { declaration ; ... } ; */
	| KW_STRUCT IDENT '{' fields '}' ';'
	                                { idlc_def_struct(ps, $2, @2, $4); }
	/* union NAME switch (declaration) { case V: declaration ; ... default: ... } ; */
	| KW_UNION IDENT KW_SWITCH '(' declaration ')' '{' arms '}' ';'
	                                { idlc_def_union(ps, $2, @2, $5, $8); }
	/* program NAME { version ... } = N ; */
	| KW_PROGRAM IDENT '{' versions '}' '=' expr ';'
	                                { idlc_def_program(ps, $2, @2, $4, $7); }
	| PASSTHRU                      { idlc_def_passthru(ps, $1, @1); }
	| error ';'
	;

opt_comma
	: %empty
	| ','
	;

enumerators
	: enumerator                    { $$ = $1; }
	| enumerators ',' enumerator    { $$ = idlc_enumerator_append($1, $3); }
	;

enumerator
	: IDENT                         { $$ = idlc_enumerator_new(ps, $1, @1, NULL); }
	| IDENT '=' expr                { $$ = idlc_enumerator_new(ps, $1, @1, $3); }
	;

fields
	: field                         { $$ = $1; }
	| fields field                  { $$ = idlc_decl_append($1, $2); }
	;

field
	: declaration ';'               { $$ = $1; }
	| error ';'                     { $$ = NULL; }
	;

arms
	: arm                           { $$ = $1; }
	| arms arm                      { $$ = idlc_arm_append($1, $2); }
	;

arm
	/* case A: case B: declaration ; */
	: labels declaration ';'        { $$ = idlc_arm_new(ps, $1, $2); }
	| error ';'                     { $$ = NULL; }
	;

labels
	: label                         { $$ = $1; }
	| labels label                  { $$ = idlc_case_append($1, $2); }
	;

label
	: KW_CASE expr ':'              { $$ = idlc_case_new(ps, $2, @1); }
	| KW_DEFAULT ':'                { $$ = idlc_case_new(ps, NULL, @1); }
	;

declaration
	: type_spec IDENT               { $$ = idlc_decl_new(ps, IDLC_D_PLAIN, $1, $2, @2, NULL); }
	| type_spec IDENT '[' expr ']'  { $$ = idlc_decl_new(ps, IDLC_D_FIXED, $1, $2, @2, $4); }
	| type_spec IDENT '<' '>'       { $$ = idlc_decl_new(ps, IDLC_D_VAR, $1, $2, @2, NULL); }
	| type_spec IDENT '<' expr '>'  { $$ = idlc_decl_new(ps, IDLC_D_VAR, $1, $2, @2, $4); }
	| type_spec '*' IDENT           { $$ = idlc_decl_new(ps, IDLC_D_PTR, $1, $3, @3, NULL); }
	| KW_VOID                       { $$ = idlc_decl_new(ps, IDLC_D_VOID, NULL, NULL, @1, NULL); }
	;

type_spec
	: KW_INT                        { $$ = idlc_type_prim(ps, IDLC_T_INT, "int", @1); }
	| KW_UNSIGNED KW_INT            { $$ = idlc_type_prim(ps, IDLC_T_UINT, "unsigned int", @1); }
	| KW_UNSIGNED                   { $$ = idlc_type_prim(ps, IDLC_T_UINT, "unsigned", @1); }
	| KW_LONG                       { $$ = idlc_type_prim(ps, IDLC_T_INT, "long", @1); }
	| KW_UNSIGNED KW_LONG           { $$ = idlc_type_prim(ps, IDLC_T_UINT, "unsigned long", @1); }
	| KW_HYPER                      { $$ = idlc_type_prim(ps, IDLC_T_HYPER, "hyper", @1); }
	| KW_UNSIGNED KW_HYPER          { $$ = idlc_type_prim(ps, IDLC_T_UHYPER, "unsigned hyper", @1); }
	| KW_SHORT                      { $$ = idlc_type_prim(ps, IDLC_T_SHORT, "short", @1); }
	| KW_UNSIGNED KW_SHORT          { $$ = idlc_type_prim(ps, IDLC_T_USHORT, "unsigned short", @1); }
	| KW_CHAR                       { $$ = idlc_type_prim(ps, IDLC_T_CHAR, "char", @1); }
	| KW_UNSIGNED KW_CHAR           { $$ = idlc_type_prim(ps, IDLC_T_UCHAR, "unsigned char", @1); }
	| KW_FLOAT                      { $$ = idlc_type_prim(ps, IDLC_T_FLOAT, "float", @1); }
	| KW_DOUBLE                     { $$ = idlc_type_prim(ps, IDLC_T_DOUBLE, "double", @1); }
	| KW_QUADRUPLE                  { $$ = idlc_type_prim(ps, IDLC_T_QUAD, "quadruple", @1); }
	| KW_BOOL                       { $$ = idlc_type_prim(ps, IDLC_T_BOOL, "bool", @1); }
	| KW_STRING                     { $$ = idlc_type_prim(ps, IDLC_T_STRING, "string", @1); }
	| KW_OPAQUE                     { $$ = idlc_type_prim(ps, IDLC_T_OPAQUE, "opaque", @1); }
	| IDENT                         { $$ = idlc_type_named(ps, IDLC_TAG_NONE, $1, @1); }
	| KW_STRUCT IDENT               { $$ = idlc_type_named(ps, IDLC_TAG_STRUCT, $2, @2); }
	| KW_UNION IDENT                { $$ = idlc_type_named(ps, IDLC_TAG_UNION, $2, @2); }
	| KW_ENUM IDENT                 { $$ = idlc_type_named(ps, IDLC_TAG_ENUM, $2, @2); }
	;

versions
	: version                       { $$ = $1; }
	| versions version              { $$ = idlc_version_append($1, $2); }
	;

version
	/* version NAME { procedure ... } = N ; */
	: KW_VERSION IDENT '{' procs '}' '=' expr ';'
	                                { $$ = idlc_version_new(ps, $2, @2, $4, $7); }
	;

procs
	: proc                          { $$ = $1; }
	| procs proc                    { $$ = idlc_proc_append($1, $2); }
	;

proc
	/* RESULT NAME(ARG, ...) = N ; */
	: proc_type IDENT '(' params ')' '=' expr ';'
	                                { $$ = idlc_proc_new(ps, $1, $2, @2, $4, $7); }
	| error ';'                     { $$ = NULL; }
	;

proc_type
	: type_spec                     { $$ = $1; }
	| KW_VOID                       { $$ = idlc_type_prim(ps, IDLC_T_VOID, "void", @1); }
	;

params
	: param                         { $$ = $1; }
	| params ',' param              { $$ = idlc_param_append($1, $3); }
	;

param
	: proc_type                     { $$ = idlc_param_new(ps, $1, NULL, @1); }
	| type_spec IDENT               { $$ = idlc_param_new(ps, $1, $2, @1); }
	/* not RPC language: an argument is a type (and a name); a size needs a typedef */
	| type_spec IDENT '<' '>'       { $$ = idlc_param_sized(ps, $1, $2, @1, "<>", @4); }
	| type_spec IDENT '<' expr '>'  { $$ = idlc_param_sized(ps, $1, $2, @1, "<N>", @5); }
	| type_spec IDENT '[' expr ']'  { $$ = idlc_param_sized(ps, $1, $2, @1, "[N]", @5); }
	;

expr
	: NUMBER                        { $$ = idlc_expr_num(ps, $1, @1); }
	| IDENT                         { $$ = idlc_expr_name(ps, $1, @1); }
	| '(' expr ')'                  { $$ = idlc_expr_paren(ps, $2); }
	| '-' expr %prec UNARY          { $$ = idlc_expr_unary(ps, '-', $2, @1); }
	| '+' expr %prec UNARY          { $$ = idlc_expr_unary(ps, '+', $2, @1); }
	| '~' expr %prec UNARY          { $$ = idlc_expr_unary(ps, '~', $2, @1); }
	| expr '+' expr                 { $$ = idlc_expr_binary(ps, '+', $1, $3, @2); }
	| expr '-' expr                 { $$ = idlc_expr_binary(ps, '-', $1, $3, @2); }
	| expr '*' expr                 { $$ = idlc_expr_binary(ps, '*', $1, $3, @2); }
	| expr '/' expr                 { $$ = idlc_expr_binary(ps, '/', $1, $3, @2); }
	| expr '%' expr                 { $$ = idlc_expr_binary(ps, '%', $1, $3, @2); }
	| expr '|' expr                 { $$ = idlc_expr_binary(ps, '|', $1, $3, @2); }
	| expr '&' expr                 { $$ = idlc_expr_binary(ps, '&', $1, $3, @2); }
	| expr '^' expr                 { $$ = idlc_expr_binary(ps, '^', $1, $3, @2); }
	| expr SHL expr                 { $$ = idlc_expr_binary(ps, IDLC_OP_SHL, $1, $3, @2); }
	| expr SHR expr                 { $$ = idlc_expr_binary(ps, IDLC_OP_SHR, $1, $3, @2); }
	;

%%

/* idlc_yyerror -- bison's report of a syntax error, at the offending token; its "memory
 * exhausted" (the stack is full) becomes a located "nested too deeply". */
void
idlc_yyerror(idlc_loc *loc, void *scanner, idlc_parse *ps, const char *msg)
{
	(void)scanner;
	/* the lexer ended the input after reporting why: the parser's complaint adds nothing */
	if (ps->stop && ps->errors > 0)
		return;
	/* bison's stack is full: only nesting (a chain of unary operators) gets there */
	if (strcmp(msg, "memory exhausted") == 0) {
		idlc_parse_error(ps, loc, "nested too deeply for the parser (%d levels)",
		                 YYMAXDEPTH);
		return;
	}
	idlc_parse_error(ps, loc, "%s", msg);
}

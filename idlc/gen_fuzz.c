/*
 * idlc -- NAME_fuzz.c (idlc --fuzz): a libFuzzer target for the XDR routines of NAME.x.
 *
 * The first input byte (two bytes when the file has more than 256 types) picks one of the
 * types -- every struct, union, enum and typedef, and the argument structs of procedures
 * taking several arguments -- and the rest is decoded as that type, under a 1 MiB allocation
 * budget. A value that decodes must: have consumed at most TYPE_XDR_MAX bytes (bounded
 * types), encode again to as many bytes, decode from those, and encode to the same bytes.
 * Both values are then freed with rc_xdr_free, and the allocations made meanwhile must all
 * have been freed (counted through the sanitizer runtime's malloc/free hooks when the target
 * runs under one). A failure prints the type and what failed, then aborts.
 *
 * Compile-time options of the generated file (docs/idl.md, section 7d):
 *   -DRC_FUZZ_ENTRY=fn  the entry point is fn, not LLVMFuzzerTestOneInput, and the caller
 *                       counts allocations (to link several targets into one fuzzer)
 *   -DRC_FUZZ_MAIN      a main() running each file named on its command line through the
 *                       entry point, or with none a fixed set of inputs for every type
 */
#include <inttypes.h>

#include "idlc.h"

/* The fixed part: declarations before the table. */
static const char head[] =
	"#include <stdbool.h>\n"
	"#include <stdint.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <string.h>\n"
	"\n"
	"#include \"@H@\"\n"
	"\n"
	"#ifndef RC_FUZZ_ENTRY\n"
	"#define RC_FUZZ_ENTRY LLVMFuzzerTestOneInput\n"
	"#define RC__FUZZ_COUNT 1\n"
	"#else\n"
	"#define RC__FUZZ_COUNT 0\n"
	"#endif\n"
	"\n"
	"/* One type: its name, XDR routine, C size and, when bounded, TYPE_XDR_MAX. */\n"
	"typedef struct rc__fuzz_type {\n"
	"\tconst char *name;\n"
	"\trc_xdrproc proc;\n"
	"\tsize_t size;\n"
	"\tbool bounded;\n"
	"\tuint64_t max;\n"
	"} rc__fuzz_type;\n"
	"\n"
	"static const rc__fuzz_type rc__fuzz_types[] = {\n";

/* The fixed part: everything after the table. */
static const char tail[] =
	"\t{ NULL, NULL, 0, false, 0 },\n"
	"};\n"
	"\n"
	"#define RC__FUZZ_NTYPES (sizeof rc__fuzz_types / sizeof rc__fuzz_types[0] - 1)\n"
	"\n"
	"/* rc__fuzz_fail -- say which type failed which check, and abort. */\n"
	"static void\n"
	"rc__fuzz_fail(const rc__fuzz_type *t, const char *what)\n"
	"{\n"
	"\tfprintf(stderr, \"@N@_fuzz: %s: %s\\n\", t->name, what);\n"
	"\tabort();\n"
	"}\n"
	"\n"
	"/* rc__fuzz_one -- decode data as t, then the round trip (see the top of this file). */\n"
	"static void\n"
	"rc__fuzz_one(const rc__fuzz_type *t, const uint8_t *data, size_t size)\n"
	"{\n"
	"\tvoid *a = calloc(1, t->size), *b = calloc(1, t->size);\n"
	"\tunsigned char *e1 = NULL, *e2 = NULL;\n"
	"\tsize_t used;\n"
	"\trc_xdr x;\n"
	"\n"
	"\tif (a == NULL || b == NULL)\n"
	"\t\tabort();\n"
	"\trc_xdrmem_create(&x, (void *)data, size, RC_XDR_DECODE);\n"
	"\trc_xdr_set_limits(&x, 1u << 20, 0);\n"
	"\tif (t->proc(&x, a)) {\n"
	"\t\tused = rc_xdr_getpos(&x);\n"
	"\t\tif (t->bounded && used > t->max)\n"
	"\t\t\trc__fuzz_fail(t, \"decoded more bytes than its XDR_MAX\");\n"
	"\t\te1 = malloc(used + 8);\n"
	"\t\te2 = malloc(used + 8);\n"
	"\t\tif (e1 == NULL || e2 == NULL)\n"
	"\t\t\tabort();\n"
	"\t\trc_xdrmem_create(&x, e1, used + 8, RC_XDR_ENCODE);\n"
	"\t\tif (!t->proc(&x, a) || rc_xdr_getpos(&x) != used)\n"
	"\t\t\trc__fuzz_fail(t, \"a decoded value does not encode to as many bytes\");\n"
	"\t\trc_xdrmem_create(&x, e1, used, RC_XDR_DECODE);\n"
	"\t\trc_xdr_set_limits(&x, 1u << 20, 0);\n"
	"\t\tif (!t->proc(&x, b) || rc_xdr_getpos(&x) != used)\n"
	"\t\t\trc__fuzz_fail(t, \"its encoding does not decode again\");\n"
	"\t\trc_xdrmem_create(&x, e2, used + 8, RC_XDR_ENCODE);\n"
	"\t\tif (!t->proc(&x, b) || rc_xdr_getpos(&x) != used || memcmp(e1, e2, used) != 0)\n"
	"\t\t\trc__fuzz_fail(t, \"the round trip changed its bytes\");\n"
	"\t}\n"
	"\trc_xdr_free(t->proc, a);\n"
	"\trc_xdr_free(t->proc, b);\n"
	"\tfree(a);\n"
	"\tfree(b);\n"
	"\tfree(e1);\n"
	"\tfree(e2);\n"
	"}\n"
	"\n"
	"#if RC__FUZZ_COUNT && defined(__GNUC__)\n"
	"/* The sanitizer runtimes' malloc/free hooks (absent without one: the count is skipped). */\n"
	"int __sanitizer_install_malloc_and_free_hooks(void (*m)(const volatile void *, size_t),\n"
	"                                              void (*f)(const volatile void *))\n"
	"\t__attribute__((weak));\n"
	"static long rc__fuzz_live;\n"
	"static bool rc__fuzz_counting;\n"
	"\n"
	"static void\n"
	"rc__fuzz_on_malloc(const volatile void *p, size_t n)\n"
	"{\n"
	"\t(void)p;\n"
	"\t(void)n;\n"
	"\tif (rc__fuzz_counting)\n"
	"\t\trc__fuzz_live++;\n"
	"}\n"
	"\n"
	"static void\n"
	"rc__fuzz_on_free(const volatile void *p)\n"
	"{\n"
	"\tif (rc__fuzz_counting && p != NULL)\n"
	"\t\trc__fuzz_live--;\n"
	"}\n"
	"\n"
	"/* rc__fuzz_hooks -- whether allocations are counted (hooks installed on the first call). */\n"
	"static bool\n"
	"rc__fuzz_hooks(void)\n"
	"{\n"
	"\tstatic int state; /* 0 not tried, 1 no hooks, 2 installed */\n"
	"\n"
	"\tif (state == 0)\n"
	"\t\tstate = __sanitizer_install_malloc_and_free_hooks != NULL &&\n"
	"\t\t        __sanitizer_install_malloc_and_free_hooks(rc__fuzz_on_malloc,\n"
	"\t\t                                                  rc__fuzz_on_free) != 0 ? 2 : 1;\n"
	"\treturn state == 2;\n"
	"}\n"
	"#endif\n"
	"\n"
	"int RC_FUZZ_ENTRY(const uint8_t *data, size_t size);\n"
	"\n"
	"/* The entry point: see the top of this file. Always returns 0. */\n"
	"int\n"
	"RC_FUZZ_ENTRY(const uint8_t *data, size_t size)\n"
	"{\n"
	"\tsize_t pick = RC__FUZZ_NTYPES > 256 ? 2 : 1, i;\n"
	"\n"
	"\tif (RC__FUZZ_NTYPES == 0 || size < pick)\n"
	"\t\treturn 0;\n"
	"\ti = pick == 2 ? (size_t)data[0] << 8 | data[1] : data[0];\n"
	"#if RC__FUZZ_COUNT && defined(__GNUC__)\n"
	"\tbool counted = rc__fuzz_hooks();\n"
	"\n"
	"\trc__fuzz_live = 0;\n"
	"\trc__fuzz_counting = counted;\n"
	"\trc__fuzz_one(&rc__fuzz_types[i % RC__FUZZ_NTYPES], data + pick, size - pick);\n"
	"\trc__fuzz_counting = false;\n"
	"\tif (counted && rc__fuzz_live != 0)\n"
	"\t\trc__fuzz_fail(&rc__fuzz_types[i % RC__FUZZ_NTYPES],\n"
	"\t\t              \"an allocation outlived the decode, encode and free\");\n"
	"#else\n"
	"\trc__fuzz_one(&rc__fuzz_types[i % RC__FUZZ_NTYPES], data + pick, size - pick);\n"
	"#endif\n"
	"\treturn 0;\n"
	"}\n"
	"\n"
	"#ifdef RC_FUZZ_MAIN\n"
	"/* main -- each file named runs through the entry point; with none, every type gets\n"
	" * inputs of 0 to 64 zero bytes and of 0 to 64 0xff bytes. */\n"
	"int\n"
	"main(int argc, char **argv)\n"
	"{\n"
	"\tunsigned char in[66];\n"
	"\n"
	"\tfor (int a = 1; a < argc; a++) {\n"
	"\t\tFILE *fp = fopen(argv[a], \"rb\");\n"
	"\t\tunsigned char *buf = NULL;\n"
	"\t\tsize_t n = 0, cap = 0, got;\n"
	"\n"
	"\t\tif (fp == NULL) {\n"
	"\t\t\tperror(argv[a]);\n"
	"\t\t\treturn 2;\n"
	"\t\t}\n"
	"\t\tdo {\n"
	"\t\t\tif (n == cap && (buf = realloc(buf, cap = cap * 2 + 4096)) == NULL)\n"
	"\t\t\t\tabort();\n"
	"\t\t\tgot = fread(buf + n, 1, cap - n, fp);\n"
	"\t\t\tn += got;\n"
	"\t\t} while (got > 0);\n"
	"\t\tfclose(fp);\n"
	"\t\tRC_FUZZ_ENTRY(buf, n);\n"
	"\t\tfree(buf);\n"
	"\t}\n"
	"\tfor (size_t t = 0; argc == 1 && t < RC__FUZZ_NTYPES; t++) {\n"
	"\t\tfor (size_t len = 0; len <= 64; len += 4) {\n"
	"\t\t\tfor (int fill = 0; fill <= 0xff; fill += 0xff) {\n"
	"\t\t\t\tsize_t pick = RC__FUZZ_NTYPES > 256 ? 2 : 1;\n"
	"\n"
	"\t\t\t\tmemset(in, fill, sizeof in);\n"
	"\t\t\t\tin[0] = (unsigned char)(pick == 2 ? t >> 8 : t);\n"
	"\t\t\t\tin[pick - 1] = (unsigned char)t;\n"
	"\t\t\t\tRC_FUZZ_ENTRY(in, pick + len);\n"
	"\t\t\t}\n"
	"\t\t}\n"
	"\t}\n"
	"\treturn 0;\n"
	"}\n"
	"#endif\n";

/* entry -- one row of the table: type name (its C type is the same name). */
static void
entry(idlc_gen *g, const char *name, const idlc_def *d)
{
	uint64_t max;
	if (d != NULL && idlc_def_xdr_max(d, &max))
		idlc_buf_printf(g->out, "\t{ \"%s\", (rc_xdrproc)xdr_%s, sizeof(%s), true, %s_XDR_MAX },\n",
		                name, name, name, name);
	else
		idlc_buf_printf(g->out, "\t{ \"%s\", (rc_xdrproc)xdr_%s, sizeof(%s), false, 0 },\n",
		                name, name, name);
}

/* type_entry -- the row of type definition d. */
static void
type_entry(idlc_gen *g, const idlc_def *d)
{
	entry(g, d->name, d);
}

/* argument_entries -- the rows of v's struct proc_V_argument (procedures of several
 * arguments). */
static void
argument_entries(idlc_gen *g, const idlc_version *v)
{
	for (const idlc_proc *p = v->procs; p != NULL; p = p->next) {
		if (p->nparams < 2)
			continue;
		const char *c = idlc_proc_cname(g, p);
		uint64_t max;
		bool bounded = idlc_proc_xdr_max(p, false, &max); /* the struct is the call body */
		idlc_buf_printf(g->out, "\t{ \"%s_argument\", (rc_xdrproc)xdr_%s_argument, "
		                "sizeof(%s_argument), %s, %s%s },\n", c, c, c,
		                bounded ? "true" : "false", bounded ? c : "0",
		                bounded ? "_CALL_XDR_MAX" : "");
	}
}

/* expand -- text with @H@ replaced by the header's name and @N@ by the prefix. */
static void
expand(idlc_gen *g, const char *text)
{
	const char *prefix = idlc_print_prefix(g);
	for (const char *p = text; *p; p++) {
		if (p[0] == '@' && (p[1] == 'H' || p[1] == 'N') && p[2] == '@') {
			idlc_buf_puts(g->out, p[1] == 'H' ? g->header : prefix);
			p += 2;
		} else {
			idlc_buf_putc(g->out, *p);
		}
	}
}

/* idlc_gen_fuzz -- NAME_fuzz.c (see the top of this file). */
void
idlc_gen_fuzz(idlc_gen *g)
{
	idlc_buf what = { 0 };
	idlc_buf_printf(&what, "%s_fuzz.c", g->base);
	idlc_gen_banner(g, what.data);
	idlc_buf_free(&what);
	idlc_emit_comment(g->out, 0,
	                  "A libFuzzer target for the XDR routines of this interface: the first byte "
	                  "(two bytes past 256 types) picks a type, the rest is decoded as one; a "
	                  "value that decodes must stay within TYPE_XDR_MAX, encode to the bytes it "
	                  "came from in length, decode again and encode to the same bytes; "
	                  "everything allocated meanwhile must be freed.\n"
	                  "clang -fsanitize=fuzzer,address,undefined NAME_fuzz.c NAME_xdr.c "
	                  "-lremotecall; -DRC_FUZZ_ENTRY=fn renames the entry point (the caller then "
	                  "counts allocations); -DRC_FUZZ_MAIN adds a main() that runs the files it "
	                  "is given, or a fixed set of inputs.");
	expand(g, head);
	idlc_for_each_type(g, type_entry);
	idlc_for_each_version(g, argument_entries);
	expand(g, tail);
}

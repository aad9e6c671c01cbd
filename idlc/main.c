/*
 * idlc -- command line driver.
 *
 *   idlc [-D NAME[=V]] [-I DIR] [-o DIR|FILE] [-h|-c|-l|-m|-a|-Sc|-Ss|-Sm] [--rpcgen-types]
 *        [--strict] [--print] [--fuzz] NAME.x
 *
 * --print and --fuzz add NAME_print.c and NAME_fuzz.c to the four outputs (from the header
 * pass, as the samples).
 *
 * Like rpcgen, idlc runs the C preprocessor once per output, with RPC_HDR, RPC_XDR,
 * RPC_CLNT or RPC_SVC defined, and parses and checks each result. The header pass is
 * always run first: it reports the problems, and the other passes look up in it the names
 * their own text lacks (the .c files include the header). Diagnostics repeated by later
 * passes are printed once. Nothing is written unless every pass succeeded; each output is
 * written to a temporary file in its folder and renamed into place.
 *
 * -a adds the samples of rpcgen -a -- NAME_client.c, NAME_server.c, Makefile.NAME -- made from
 * the header pass (they include NAME.h). Like rpcgen, it never overwrites one: an existing
 * sample stops idlc before anything is written, and the samples are linked into place (not
 * renamed) before the other outputs are renamed, so a sample that appears meanwhile is left
 * alone and nothing else is written.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "idlc.h"

#ifndef IDLC_VERSION
#define IDLC_VERSION "0.0.0"
#endif

extern char **environ;

static const char usage_text[] =
	"usage: idlc [-D NAME[=VALUE]] [-I DIR] [-o DIR|FILE] [-h|-c|-l|-m|-a|-Sc|-Ss|-Sm]\n"
	"            [--rpcgen-types] [--strict] [--print] [--fuzz] NAME.x\n"
	"\n"
	"Compile an ONC RPC interface (the RPC language of rpcgen) into C for remotecall.\n"
	"Without -h/-c/-l/-m/-Sc/-Ss/-Sm, write NAME.h, NAME_xdr.c, NAME_clnt.c and NAME_svc.c\n"
	"into the folder given by -o (default: the current folder).\n"
	"\n"
	"  -a           also write the samples NAME_client.c (a client calling every procedure\n"
	"               once), NAME_server.c (procedure bodies to fill in and a main) and\n"
	"               Makefile.NAME (make -f Makefile.NAME builds NAME_client, NAME_server);\n"
	"               an existing sample is never overwritten (error, nothing written)\n"
	"  -h           write only the header (NAME.h)\n"
	"  -c           write only the XDR routines (NAME_xdr.c)\n"
	"  -l           write only the client stubs (NAME_clnt.c)\n"
	"  -m           write only the server tables (NAME_svc.c)\n"
	"  -Sc          write only the sample client (NAME_client.c)\n"
	"  -Ss          write only the sample server (NAME_server.c)\n"
	"  -Sm          write only the sample makefile (Makefile.NAME)\n"
	"               with one of these, -o names the file; without -o, standard output\n"
	"  -o PATH      output folder, or output file with -h/-c/-l/-m/-Sc/-Ss/-Sm\n"
	"  -D NAME[=V]  define a macro for the C preprocessor\n"
	"  -I DIR       add DIR to the preprocessor's include path\n"
	"  --rpcgen-types  C types with rpcgen's layout: int, unsigned int, long (64-bit on\n"
	"               LP64), unsigned long, short, a 4-byte bool (int32_t); default: the\n"
	"               <stdint.h> types, bool, and long as int32_t\n"
	"  --strict     a type the file does not define is an error (default: a warning, and\n"
	"               an external type whose xdr_T() the program supplies, as rpcgen)\n"
	"  --print      also write NAME_print.c: bool rc_print_TYPE(FILE *, const TYPE *)\n"
	"               printing one JSON value, for every type, and NAME_print_args /\n"
	"               NAME_print_res printing a call's arguments / results by procedure\n"
	"  --fuzz       also write NAME_fuzz.c: a libFuzzer target (LLVMFuzzerTestOneInput)\n"
	"               decoding, re-encoding and freeing every type\n"
	"  --help       show this text\n"
	"  --version    show the version\n"
	"\n"
	"The preprocessor is 'cpp' from PATH, or the program named by $IDLC_CPP.\n"
	"Exit status: 0 success, 1 errors in the input, 2 usage or system error.\n";

static const char *const pass_macro[IDLC_NPASS] = {
	"-DRPC_HDR", "-DRPC_XDR", "-DRPC_CLNT", "-DRPC_SVC"
};

/* The files idlc writes: the four of every run, then the samples of -a. */
enum { OUT_HDR, OUT_XDR, OUT_CLNT, OUT_SVC, OUT_SAMPLE_CLNT, OUT_SAMPLE_SVC, OUT_MAKEFILE,
       OUT_PRINT, OUT_FUZZ, NOUT };

static const struct outkind {
	const char *flag;          /* the option that writes it alone */
	idlc_pass pass;            /* the pass it is made from */
	const char *name;          /* its file name; %s: NAME */
	bool sample;               /* written by -a, and never over an existing file */
	void (*gen)(idlc_gen *);
} outkind[NOUT] = {
	{ "-h", IDLC_PASS_HDR, "%s.h", false, idlc_gen_header },
	{ "-c", IDLC_PASS_XDR, "%s_xdr.c", false, idlc_gen_xdr },
	{ "-l", IDLC_PASS_CLNT, "%s_clnt.c", false, idlc_gen_clnt },
	{ "-m", IDLC_PASS_SVC, "%s_svc.c", false, idlc_gen_svc },
	{ "-Sc", IDLC_PASS_HDR, "%s_client.c", true, idlc_gen_sample_clnt },
	{ "-Ss", IDLC_PASS_HDR, "%s_server.c", true, idlc_gen_sample_svc },
	{ "-Sm", IDLC_PASS_HDR, "Makefile.%s", true, idlc_gen_makefile },
	/* --print and --fuzz add their file to the four (see parse_args) */
	{ "--print", IDLC_PASS_HDR, "%s_print.c", false, idlc_gen_print },
	{ "--fuzz", IDLC_PASS_HDR, "%s_fuzz.c", false, idlc_gen_fuzz },
};

/* Command line. */
typedef struct options {
	const char **cpp_args; /* -D and -I, as cpp arguments */
	size_t ncpp;
	const char *out;       /* -o */
	int only;              /* -1: the four outputs (with -a, the samples too); else OUT_ */
	bool samples;          /* -a */
	bool rpcgen_types;     /* --rpcgen-types */
	bool strict;           /* --strict */
	bool extra[NOUT];      /* --print, --fuzz: OUT_PRINT, OUT_FUZZ written too */
	const char *input;
} options;

/* fatal_usage -- report a usage error and exit 2. */
static void
fatal_usage(const char *fmt, const char *arg)
{
	fputs("idlc: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'idlc --help' for more information.\n", stderr);
	exit(2);
}

/* parse_args -- fill o from argv; exits on --help, --version and usage errors. */
static void
parse_args(int argc, char **argv, options *o)
{
	o->cpp_args = idlc_xcalloc((size_t)argc * 2 + 1, sizeof(*o->cpp_args));
	o->only = -1;
	bool dashdash = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (dashdash || a[0] != '-' || a[1] == '\0') {
			if (o->input != NULL)
				fatal_usage("more than one input file ('%s')", a);
			o->input = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			dashdash = true;
		} else if (strcmp(a, "--help") == 0) {
			fputs(usage_text, stdout);
			free(o->cpp_args);
			exit(0);
		} else if (strcmp(a, "--rpcgen-types") == 0) {
			o->rpcgen_types = true;
		} else if (strcmp(a, "--strict") == 0) {
			o->strict = true;
		} else if (strcmp(a, "--print") == 0 || strcmp(a, "--fuzz") == 0) {
			if (o->only >= 0)
				fatal_usage("%s adds a file to the four; not with -h, -c, -l, -m, -Sc, -Ss, "
				            "-Sm", a);
			o->extra[a[2] == 'p' ? OUT_PRINT : OUT_FUZZ] = true;
		} else if (strcmp(a, "--version") == 0) {
			printf("idlc (remotecall) %s\n", IDLC_VERSION);
			free(o->cpp_args);
			exit(0);
		} else if (a[1] == 'D' || a[1] == 'I') {
			const char *v = a + 2;
			if (*v == '\0') {
				if (i + 1 >= argc)
					fatal_usage("option '%s' needs an argument", a);
				v = argv[++i];
			}
			o->cpp_args[o->ncpp++] = a[1] == 'D' ? "-D" : "-I";
			o->cpp_args[o->ncpp++] = v;
		} else if (a[1] == 'o') {
			const char *v = a + 2;
			if (*v == '\0') {
				if (i + 1 >= argc)
					fatal_usage("option '%s' needs an argument", a);
				v = argv[++i];
			}
			o->out = v;
		} else {
			int k = strcmp(a, "-a") == 0 ? NOUT : 0;
			while (k < NOUT && strcmp(a, outkind[k].flag) != 0)
				k++;
			if ((k == NOUT && strcmp(a, "-a") != 0) || k == OUT_PRINT || k == OUT_FUZZ)
				fatal_usage("unknown option '%s'", a);
			if (k < NOUT && (o->extra[OUT_PRINT] || o->extra[OUT_FUZZ]))
				fatal_usage("--print and --fuzz add a file to the four; not with %s", a);
			if ((k == NOUT && o->only >= 0) || (k < NOUT && (o->samples ||
			                                                 (o->only >= 0 && o->only != k))))
				fatal_usage("only one of -h, -c, -l, -m, -a, -Sc, -Ss, -Sm may be given (%s)",
				            a);
			if (k == NOUT)
				o->samples = true;
			else
				o->only = k;
		}
	}
	if (o->input == NULL)
		fatal_usage("%s", "no input file");
}

/* run_cpp -- the preprocessor's output for pass p into out. Returns 0, or the exit status
 * idlc must give (after saying why): 1 when cpp reported a problem in the input (an
 * unterminated comment, a missing #include: its messages went to stderr), 2 when it could
 * not run or was killed. */
static int
run_cpp(const options *o, idlc_pass p, idlc_buf *out)
{
	const char *cpp = getenv("IDLC_CPP");
	if (cpp == NULL || *cpp == '\0')
		cpp = "cpp";
	const char **argv = idlc_xcalloc(o->ncpp + 6, sizeof(*argv));
	size_t n = 0;
	argv[n++] = cpp;
	argv[n++] = "-C";
	argv[n++] = pass_macro[p];
	for (size_t i = 0; i < o->ncpp; i++)
		argv[n++] = o->cpp_args[i];
	argv[n++] = o->input;
	argv[n] = NULL;

	int fds[2];
	if (pipe(fds) != 0) {
		fprintf(stderr, "idlc: error: pipe: %s\n", strerror(errno));
		free(argv);
		return 2;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	pid_t pid;
	int rc = posix_spawnp(&pid, cpp, &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	free(argv);
	close(fds[1]);
	if (rc != 0) {
		fprintf(stderr, "idlc: error: cannot run the C preprocessor '%s': %s\n", cpp,
		        strerror(rc));
		close(fds[0]);
		return 2;
	}
	char chunk[65536];
	for (;;) {
		ssize_t got = read(fds[0], chunk, sizeof chunk);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		idlc_buf_putn(out, chunk, (size_t)got);
	}
	close(fds[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			status = -1;
			break;
		}
	}
	if (status != 0) {
		fprintf(stderr, "idlc: error: the C preprocessor failed on '%s'\n", o->input);
		return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 127 ? 1 : 2;
	}
	if (out->data == NULL)
		idlc_buf_putn(out, "", 0);
	return 0;
}

/* wanted -- whether o asks for output k. */
static bool
wanted(const options *o, int k)
{
	if (o->only >= 0)
		return o->only == k;
	if (k == OUT_PRINT || k == OUT_FUZZ)
		return o->extra[k];
	return !outkind[k].sample || o->samples;
}

/* One output file. */
typedef struct output {
	int kind;        /* OUT_ */
	char *path;      /* where it goes (NULL: standard output) */
	char *tmp;       /* the temporary file written first */
	bool no_clobber; /* a sample of -a: linked into place, never over an existing file */
	bool placed;     /* such a sample, linked (removed again if a later step fails) */
	idlc_buf text;
} output;

/* write_tmp -- write o->text to a new temporary file next to o->path. */
static bool
write_tmp(output *o)
{
	const char *slash = strrchr(o->path, '/');
	size_t dirlen = slash ? (size_t)(slash - o->path) + 1 : 0;
	const char *base = o->path + dirlen;
	size_t n = strlen(o->path) + 16;
	o->tmp = idlc_xmalloc(n);
	snprintf(o->tmp, n, "%.*s.%s.XXXXXX", (int)dirlen, o->path, base);
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		fprintf(stderr, "idlc: error: cannot create a file next to '%s': %s\n", o->path,
		        strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		return false;
	}
	mode_t mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	size_t off = 0;
	while (off < o->text.len) {
		ssize_t w = write(fd, o->text.data + off, o->text.len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fprintf(stderr, "idlc: error: cannot write '%s': %s\n", o->tmp, strerror(errno));
			close(fd);
			return false;
		}
		off += (size_t)w;
	}
	if (close(fd) != 0) {
		fprintf(stderr, "idlc: error: cannot write '%s': %s\n", o->tmp, strerror(errno));
		return false;
	}
	return true;
}

/* input_base -- the input's name without folder and ".x" (arena string of u). */
static const char *
input_base(idlc_arena *a, const char *input)
{
	const char *s = strrchr(input, '/');
	s = s ? s + 1 : input;
	size_t n = strlen(s);
	if (n > 2 && strcmp(s + n - 2, ".x") == 0)
		n -= 2;
	return idlc_arena_strndup(a, s, n);
}

/* out_path -- where output k goes: dir + "/" + its name for NAME base, malloc'd. */
static char *
out_path(const char *dir, int k, const char *base)
{
	size_t n = strlen(dir) + strlen(outkind[k].name) + strlen(base) + 2;
	char *p = idlc_xmalloc(n);
	int at = snprintf(p, n, "%s/", dir);
	snprintf(p + at, n - (size_t)at, outkind[k].name, base);
	return p;
}

/* samples_exist -- with -a: say which samples exist already (idlc does not overwrite them,
 * as rpcgen does not); true if one does. */
static bool
samples_exist(const options *o)
{
	bool found = false;
	if (!o->samples)
		return false;
	idlc_arena names = { 0 };
	const char *base = input_base(&names, o->input);
	for (int k = 0; k < NOUT; k++) {
		struct stat st;
		if (!outkind[k].sample)
			continue;
		char *path = out_path(o->out ? o->out : ".", k, base);
		if (lstat(path, &st) == 0 || errno != ENOENT) {
			fprintf(stderr, "idlc: error: '%s' exists; idlc -a does not overwrite a sample "
			        "(remove it first)\n", path);
			found = true;
		}
		free(path);
	}
	idlc_arena_free(&names);
	return found;
}

/* place -- move out's temporary file into place: rename, or for a sample link (fails if the
 * file has appeared meanwhile) then unlink. Returns false after saying why. */
static bool
place(output *out)
{
	if (!out->no_clobber) {
		if (rename(out->tmp, out->path) == 0)
			return true;
	} else if (link(out->tmp, out->path) == 0) {
		out->placed = true;
		unlink(out->tmp);
		return true;
	} else if (errno == EEXIST) {
		fprintf(stderr, "idlc: error: '%s' exists; idlc -a does not overwrite a sample "
		        "(remove it first)\n", out->path);
		return false;
	}
	fprintf(stderr, "idlc: error: cannot create '%s': %s\n", out->path, strerror(errno));
	return false;
}

/* main -- see the top of this file and --help. */
int
main(int argc, char **argv)
{
	options o = { 0 };
	parse_args(argc, argv, &o);

	FILE *probe = fopen(o.input, "r");
	if (probe == NULL) {
		fprintf(stderr, "idlc: error: cannot open '%s': %s\n", o.input, strerror(errno));
		free(o.cpp_args);
		return 2;
	}
	fclose(probe);
	if (samples_exist(&o)) {
		free(o.cpp_args);
		return 2;
	}

	bool run_pass[IDLC_NPASS] = { true }; /* the header pass always runs */
	for (int k = 0; k < NOUT; k++)
		if (wanted(&o, k))
			run_pass[outkind[k].pass] = true;
	idlc_diag *diag = idlc_diag_new(stderr);
	idlc_unit units[IDLC_NPASS];
	bool used[IDLC_NPASS] = { false };
	bool ok = true;
	int status = 0;

	for (int p = 0; p < IDLC_NPASS; p++) {
		/* the header pass always runs: the others look names up in it */
		if (!run_pass[p])
			continue;
		idlc_unit *u = &units[p];
		idlc_unit_init(u, (idlc_pass)p, diag, o.input);
		u->strict = o.strict;
		used[p] = true;
		if (p != IDLC_PASS_HDR)
			u->env = &units[IDLC_PASS_HDR];
		idlc_buf text = { 0 };
		int cpp_status = run_cpp(&o, (idlc_pass)p, &text);
		if (cpp_status != 0) {
			idlc_buf_free(&text);
			ok = false;
			status = cpp_status;
			break;
		}
		int errs = idlc_parse_text(u, text.data, text.len);
		idlc_buf_free(&text);
		if (errs == 0)
			errs = idlc_check(u);
		if (errs != 0 || idlc_diag_errors(diag) != 0) {
			ok = false;
			status = 1;
			break;
		}
	}
	idlc_diag_flush(diag);
	if (idlc_diag_errors(diag) != 0 && status == 0)
		status = 1;

	output outs[NOUT];
	memset(outs, 0, sizeof outs);
	int nout = 0;
	if (ok && status == 0) {
		idlc_arena names = { 0 };
		const char *base = input_base(&names, o.input);
		char *header = idlc_xmalloc(strlen(base) + 3);
		sprintf(header, "%s.h", base);
		/* the samples first: they are placed first (see place) */
		for (int i = 0; i < NOUT; i++) {
			int k = (i + OUT_SAMPLE_CLNT) % NOUT;
			if (!wanted(&o, k))
				continue;
			output *out = &outs[nout++];
			out->kind = k;
			out->no_clobber = outkind[k].sample && o.only < 0;
			idlc_gen g = { &units[outkind[k].pass], base, header, &out->text, o.rpcgen_types,
			               NULL, 0, 0 };
			outkind[k].gen(&g);
			idlc_gen_wrap(&g);
			if (o.only >= 0)
				out->path = o.out ? idlc_xstrdup(o.out) : NULL;
			else
				out->path = out_path(o.out ? o.out : ".", k, base);
		}
		free(header);
		idlc_arena_free(&names);

		/* write every file to a temporary first: a failure leaves nothing behind */
		for (int i = 0; i < nout && status == 0; i++) {
			if (outs[i].path == NULL) {
				if (fwrite(outs[i].text.data, 1, outs[i].text.len, stdout) !=
				        outs[i].text.len || fflush(stdout) != 0) {
					fprintf(stderr, "idlc: error: cannot write the output: %s\n",
					        strerror(errno));
					status = 2;
				}
			} else if (!write_tmp(&outs[i])) {
				status = 2;
			}
		}
		for (int i = 0; i < nout; i++) {
			if (outs[i].tmp == NULL)
				continue;
			if (status == 0 && !place(&outs[i]))
				status = 2;
			if (status != 0)
				unlink(outs[i].tmp);
		}
		for (int i = 0; i < nout && status != 0; i++)
			if (outs[i].placed) /* a later sample failed: take back the earlier ones */
				unlink(outs[i].path);
	}

	for (int i = 0; i < nout; i++) {
		free(outs[i].path);
		free(outs[i].tmp);
		idlc_buf_free(&outs[i].text);
	}
	for (int p = 0; p < IDLC_NPASS; p++)
		if (used[p])
			idlc_unit_free(&units[p]);
	idlc_diag_free(diag);
	idlc_intern_free();
	free(o.cpp_args);
	return status;
}

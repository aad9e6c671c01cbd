/*
 * test_idlc_cli -- idlc's command line: what it writes where, -D/-I, exit statuses, that a
 * failure leaves no file behind, the samples of -a and -Sc/-Ss/-Sm (and that -a never
 * overwrites one), and that bad input never crashes it.
 *
 * Each case runs the idlc binary (IDLC_PATH) in a fresh folder under IDLC_WORKDIR.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#ifndef IDLC_PATH
#error IDLC_PATH must name the idlc binary
#endif

/* ---------------------------------------------------------------------------------------- */

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* fresh_dir -- an empty folder IDLC_WORKDIR/name; returns its path (static storage). */
static const char *
fresh_dir(const char *name)
{
	static char path[4096];
	snprintf(path, sizeof path, "%s/%s", IDLC_WORKDIR, name);
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "mkdir -p '%s'", path);
	assert_int_equal(system(tmp), 0);
	return path;
}

/* write_file -- dir/name := text (n bytes; n == (size_t)-1: strlen). */
static void
write_file(const char *dir, const char *name, const char *text, size_t n)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	if (n == (size_t)-1)
		n = strlen(text);
	assert_int_equal(fwrite(text, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* read_file -- the contents of dir/name (malloc'd, NUL-terminated) or NULL. */
static char *
read_file(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	size_t got;
	while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += got;
		if (cap - len < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
	}
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/* count_files -- entries of dir, "." and ".." excepted. */
static int
count_files(const char *dir)
{
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
	FILE *p = popen(cmd, "r");
	int n = -1;
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

/* unlink_in -- remove dir/name. */
static void
unlink_in(const char *dir, const char *name)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	assert_int_equal(unlink(path), 0);
}

/*
 * run -- run idlc with args (NULL-terminated) in folder cwd, with IDLC_CPP set to cpp if
 * not NULL. Its stdout and stderr are returned in *out / *err (malloc'd) when not NULL.
 * Returns the exit status, or 128 + the signal that killed it.
 */
static int
run(const char *cwd, const char *cpp, char **out, char **err, ...)
{
	const char *argv[64];
	int argc = 0;
	va_list ap;
	argv[argc++] = IDLC_PATH;
	va_start(ap, err);
	const char *a;
	while ((a = va_arg(ap, const char *)) != NULL && argc < 63)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;

	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (chdir(cwd) != 0)
			_exit(99);
		int o = open(".stdout", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(".stderr", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (o < 0 || e < 0)
			_exit(99);
		dup2(o, 1);
		dup2(e, 2);
		close(o);
		close(e);
		if (cpp != NULL)
			setenv("IDLC_CPP", cpp, 1);
		execv(IDLC_PATH, (char *const *)argv);
		_exit(98);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	char *o = read_file(cwd, ".stdout");
	char *e = read_file(cwd, ".stderr");
	char path[4096];
	snprintf(path, sizeof path, "%s/.stdout", cwd);
	unlink(path);
	snprintf(path, sizeof path, "%s/.stderr", cwd);
	unlink(path);
	if (out)
		*out = o;
	else
		free(o);
	if (err)
		*err = e;
	else
		free(e);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static const char small_x[] =
	"const N = 3;\n"
	"struct pt { int x; int y; };\n"
	"typedef pt pts<N>;\n"
	"program P { version V { pts GET(pt) = 1; } = 1; } = 0x20000000;\n";

/* fresh_out -- a fresh folder `name` holding small.x and an empty folder out (its path into
 * out[0..n)), and `idlc [opt] -o out small.x` run there, silent and successful. Returns the
 * folder. */
static const char *
fresh_out(const char *name, const char *opt, char *out, size_t n)
{
	const char *d = fresh_dir(name);
	snprintf(out, n, "%s/out", d);
	assert_int_equal(mkdir(out, 0755), 0);
	write_file(d, "small.x", small_x, (size_t)-1);
	char *err;
	if (opt != NULL)
		assert_int_equal(run(d, NULL, NULL, &err, opt, "-o", "out", "small.x", NULL), 0);
	else
		assert_int_equal(run(d, NULL, NULL, &err, "-o", "out", "small.x", NULL), 0);
	assert_string_equal(err, "");
	free(err);
	return d;
}

/* assert_same_file -- dir1/name and dir2/name hold the same text. */
static void
assert_same_file(const char *dir1, const char *dir2, const char *name)
{
	char *a = read_file(dir1, name), *b = read_file(dir2, name);
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a, b);
	free(a);
	free(b);
}

/* assert_one_output -- in d, `idlc opt small.x` prints what d/name holds, and `idlc opt -o
 * file small.x` writes it to d/file (printing nothing). */
static void
assert_one_output(const char *d, const char *opt, const char *name, const char *file)
{
	char *out, *want = read_file(d, name);
	assert_non_null(want);
	assert_int_equal(run(d, NULL, &out, NULL, opt, "small.x", NULL), 0);
	assert_string_equal(out, want);
	free(out);
	assert_int_equal(run(d, NULL, &out, NULL, opt, "-o", file, "small.x", NULL), 0);
	assert_string_equal(out, "");
	free(out);
	char *got = read_file(d, file);
	assert_string_equal(got, want);
	free(got);
	free(want);
}

/* ---------------------------------------------------------------------------------------- */

static void
test_help(void **state)
{
	(void)state;
	const char *d = fresh_dir("help");
	char *out;
	assert_int_equal(run(d, NULL, &out, NULL, "--help", NULL), 0);
	assert_true(strncmp(out, "usage: idlc ", 12) == 0);
	assert_non_null(strstr(out, "-o PATH"));
	assert_non_null(strstr(out, "  -a  "));
	assert_non_null(strstr(out, "  -Sc  "));
	assert_non_null(strstr(out, "  -Ss  "));
	free(out);
}

static void
test_version(void **state)
{
	(void)state;
	const char *d = fresh_dir("version");
	char *out;
	assert_int_equal(run(d, NULL, &out, NULL, "--version", NULL), 0);
	assert_string_equal(out, "idlc (remotecall) " IDLC_VERSION_TEXT "\n");
	free(out);
}

static void
test_usage_errors(void **state)
{
	(void)state;
	const char *d = fresh_dir("usage");
	char *err;
	write_file(d, "a.x", small_x, (size_t)-1);
	assert_int_equal(run(d, NULL, NULL, &err, NULL), 2);
	assert_non_null(strstr(err, "no input file"));
	free(err);
	assert_int_equal(run(d, NULL, NULL, &err, "-z", "a.x", NULL), 2);
	assert_non_null(strstr(err, "unknown option '-z'"));
	free(err);
	assert_int_equal(run(d, NULL, NULL, &err, "-h", "-c", "a.x", NULL), 2);
	assert_non_null(strstr(err, "only one of -h, -c, -l, -m"));
	free(err);
	assert_int_equal(run(d, NULL, NULL, &err, "a.x", "-o", NULL), 2);
	assert_non_null(strstr(err, "needs an argument"));
	free(err);
	assert_int_equal(run(d, NULL, NULL, &err, "a.x", "b.x", NULL), 2);
	assert_non_null(strstr(err, "more than one input"));
	free(err);
	assert_int_equal(run(d, NULL, NULL, &err, "missing.x", NULL), 2);
	assert_non_null(strstr(err, "cannot open 'missing.x'"));
	free(err);
	assert_int_equal(count_files(d), 1); /* only a.x */
}

static void
test_default_outputs(void **state)
{
	(void)state;
	char out[4096 + 8]; /* the folder is at most PATH_MAX */
	const char *d = fresh_out("default", NULL, out, sizeof out);
	const char *names[] = { "small.h", "small_xdr.c", "small_clnt.c", "small_svc.c" };
	for (int i = 0; i < 4; i++) {
		char *t = read_file(out, names[i]);
		assert_non_null(t);
		assert_non_null(strstr(t, "generated by idlc from small.x"));
		free(t);
	}
	assert_int_equal(count_files(out), 4); /* no temporary file left */

	/* no -o: the current folder */
	assert_int_equal(run(d, NULL, NULL, NULL, "small.x", NULL), 0);
	assert_int_equal(count_files(d), 6);
	assert_same_file(d, out, "small_xdr.c");
}

static void
test_single_outputs(void **state)
{
	(void)state;
	const char *d = fresh_dir("single");
	write_file(d, "small.x", small_x, (size_t)-1);
	assert_int_equal(run(d, NULL, NULL, NULL, "small.x", NULL), 0);
	const char *opt[] = { "-h", "-c", "-l", "-m" };
	const char *names[] = { "small.h", "small_xdr.c", "small_clnt.c", "small_svc.c" };
	for (int i = 0; i < 4; i++)
		assert_one_output(d, opt[i], names[i], "one.c");
	assert_int_equal(count_files(d), 6); /* small.x, four outputs, one.c */
}

/* The files idlc -a writes for small.x (the four outputs and the three samples). */
static const char *const sample_names[7] = {
	"small.h", "small_xdr.c", "small_clnt.c", "small_svc.c",
	"small_client.c", "small_server.c", "Makefile.small"
};

static void
test_samples_written(void **state)
{
	(void)state;
	char out[4096 + 8]; /* the folder is at most PATH_MAX */
	const char *d = fresh_out("samples", "-a", out, sizeof out);
	assert_int_equal(count_files(out), 7); /* no temporary file left */
	for (int i = 0; i < 7; i++) {
		char *t = read_file(out, sample_names[i]);
		assert_non_null(t);
		free(t);
	}
	char *c = read_file(out, "small_client.c");
	assert_non_null(strstr(c, "\nint\nmain(int argc, char **argv)\n"));
	assert_non_null(strstr(c, "rc_client_create_ex(&clnt, uri, P, V, &err)"));
	assert_non_null(strstr(c, "rc_error_format(&err, why, sizeof why)")); /* causes told */
	assert_non_null(strstr(c, "st = get_1(clnt, &arg, &res);"));
	assert_non_null(strstr(c, "rc_xdr_free(get_1_info.xres, &res);")); /* pts owns memory */
	free(c);
	char *s = read_file(out, "small_server.c");
	assert_non_null(strstr(s, "bool get_1_svc(const pt *arg, pts *res, rc_svc_req *req)\n{"));
	assert_non_null(strstr(s, "fill in"));
	assert_non_null(strstr(s, "&p_1_program,"));
	assert_non_null(strstr(s, "rc_server_rpcbind(srv, true)"));
	assert_non_null(strstr(s, "rc_server_geterr(srv, &err);")); /* a failed listen says why */
	free(s);
	char *m = read_file(out, "Makefile.small");
	assert_non_null(strstr(m, "$(GENERATED): small.x\n\t$(IDLC) $(IDLCFLAGS) small.x\n"));
	assert_non_null(strstr(m, "pkg-config --libs remotecall"));
	assert_non_null(strstr(m, "\nclean:\n"));
	free(m);

	/* the samples without -o go to the current folder, the same text */
	assert_int_equal(run(d, NULL, NULL, NULL, "-a", "small.x", NULL), 0);
	assert_int_equal(count_files(d), 9); /* small.x, out, the seven */
	for (int i = 0; i < 7; i++)
		assert_same_file(d, out, sample_names[i]);
}

static void
test_samples_not_overwritten(void **state)
{
	(void)state;
	const char *d = fresh_dir("samples_exist");
	write_file(d, "small.x", small_x, (size_t)-1);
	write_file(d, "small_server.c", "my server\n", (size_t)-1);
	char *err;
	/* an existing sample: exit status 2, an error naming it, nothing written */
	assert_int_equal(run(d, NULL, NULL, &err, "-a", "small.x", NULL), 2);
	assert_non_null(strstr(err, "idlc: error: './small_server.c' exists; idlc -a does not "
	                            "overwrite"));
	assert_null(strstr(err, "small_client.c"));
	free(err);
	assert_int_equal(count_files(d), 2);
	char *t = read_file(d, "small_server.c");
	assert_string_equal(t, "my server\n");
	free(t);

	/* every existing one is named; a makefile counts too */
	write_file(d, "Makefile.small", "all:\n", (size_t)-1);
	assert_int_equal(run(d, NULL, NULL, &err, "-a", "small.x", NULL), 2);
	assert_non_null(strstr(err, "'./small_server.c' exists"));
	assert_non_null(strstr(err, "'./Makefile.small' exists"));
	free(err);
	assert_int_equal(count_files(d), 3);

	/* once they are gone, -a writes them; a second -a refuses again */
	unlink_in(d, "small_server.c");
	unlink_in(d, "Makefile.small");
	assert_int_equal(run(d, NULL, NULL, NULL, "-a", "small.x", NULL), 0);
	assert_int_equal(count_files(d), 8);
	assert_int_equal(run(d, NULL, NULL, &err, "-a", "small.x", NULL), 2);
	assert_non_null(strstr(err, "'./small_client.c' exists"));
	free(err);
	/* without -a the four outputs are rewritten as always */
	assert_int_equal(run(d, NULL, NULL, NULL, "small.x", NULL), 0);
	assert_int_equal(count_files(d), 8);
}

static void
test_sample_stdout(void **state)
{
	(void)state;
	const char *d = fresh_dir("sample_stdout");
	write_file(d, "small.x", small_x, (size_t)-1);
	assert_int_equal(run(d, NULL, NULL, NULL, "-a", "-o", ".", "small.x", NULL), 0);
	const char *opt[] = { "-Sc", "-Ss", "-Sm" };
	/* to standard output the text -a wrote; -o names the file, which may exist (only -a
	 * keeps samples) */
	for (int i = 0; i < 3; i++)
		assert_one_output(d, opt[i], sample_names[4 + i], sample_names[4 + i]);
	assert_int_equal(count_files(d), 8);
	/* only the sample client: no server, no main of a server */
	char *out;
	assert_int_equal(run(d, NULL, &out, NULL, "-Sc", "small.x", NULL), 0);
	assert_null(strstr(out, "get_1_svc"));
	free(out);
	/* -a and the one-output options exclude each other */
	char *err;
	assert_int_equal(run(d, NULL, NULL, &err, "-a", "-Sc", "small.x", NULL), 2);
	assert_non_null(strstr(err, "only one of -h, -c, -l, -m, -a, -Sc, -Ss, -Sm"));
	free(err);
	assert_int_equal(run(d, NULL, NULL, &err, "-Ss", "-a", "small.x", NULL), 2);
	assert_non_null(strstr(err, "only one of"));
	free(err);
	assert_int_equal(run(d, NULL, NULL, &err, "-Sx", "small.x", NULL), 2);
	assert_non_null(strstr(err, "unknown option '-Sx'"));
	free(err);
	assert_int_equal(count_files(d), 8);
}

static void
test_failure_writes_nothing(void **state)
{
	(void)state;
	const char *d = fresh_dir("failure");
	write_file(d, "bad.x", "struct s { int x[UNDEF]; };\n", (size_t)-1);
	write_file(d, "bad.h", "old contents\n", (size_t)-1);
	char *err;
	assert_int_equal(run(d, NULL, NULL, &err, "bad.x", NULL), 1);
	assert_non_null(strstr(err, "bad.x:1:18: error: undefined constant 'UNDEF'"));
	free(err);
	char *h = read_file(d, "bad.h");
	assert_string_equal(h, "old contents\n");
	free(h);
	assert_int_equal(count_files(d), 2);

	/* an output folder that does not exist: nothing written, status 2 */
	write_file(d, "good.x", small_x, (size_t)-1);
	assert_int_equal(run(d, NULL, NULL, &err, "-o", "no/such/dir", "good.x", NULL), 2);
	assert_non_null(strstr(err, "cannot create a file next to 'no/such/dir/good.h'"));
	free(err);
	assert_int_equal(count_files(d), 3);
}

static void
test_cpp_options(void **state)
{
	(void)state;
	const char *d = fresh_dir("cpp");
	char inc[4096 + 8];
	snprintf(inc, sizeof inc, "%s/inc", d); /* d is at most PATH_MAX */
	assert_int_equal(mkdir(inc, 0755), 0);
	write_file(inc, "sub.x", "typedef int from_sub;\n", (size_t)-1);
	write_file(d, "opt.x",
	           "#include \"sub.x\"\n"
	           "#ifdef WITH_X\n"
	           "struct with_x { from_sub a[SIZE]; };\n"
	           "#endif\n",
	           (size_t)-1);
	char *out, *err;
	/* without -I the include is not found: cpp says so, idlc fails: an input error, 1 */
	assert_int_equal(run(d, NULL, NULL, &err, "-h", "opt.x", NULL), 1);
	assert_non_null(strstr(err, "the C preprocessor failed"));
	free(err);
	assert_int_equal(run(d, NULL, &out, NULL, "-h", "-I", "inc", "opt.x", NULL), 0);
	assert_non_null(strstr(out, "typedef int32_t from_sub;"));
	assert_null(strstr(out, "with_x"));
	free(out);
	assert_int_equal(run(d, NULL, &out, NULL, "-h", "-Iinc", "-D", "WITH_X", "-DSIZE=7",
	                     "opt.x", NULL), 0);
	assert_non_null(strstr(out, "struct with_x {\n\tfrom_sub a[7];\n};"));
	free(out);
	/* an error in the included file names that file */
	write_file(inc, "sub.x", "typedef int from_sub[NOTHING];\n", (size_t)-1);
	assert_int_equal(run(d, NULL, NULL, &err, "-h", "-Iinc", "opt.x", NULL), 1);
	assert_non_null(strstr(err, "inc/sub.x:1:22: error: undefined constant 'NOTHING'\n"
	                            "typedef int from_sub[NOTHING];\n"
	                            "                     ^~~~~~~\n"));
	free(err);
}

static void
test_cpp_missing(void **state)
{
	(void)state;
	const char *d = fresh_dir("nocpp");
	write_file(d, "a.x", small_x, (size_t)-1);
	char *err;
	assert_int_equal(run(d, "/nonexistent/cpp", NULL, &err, "a.x", NULL), 2);
	assert_non_null(strstr(err, "cannot run the C preprocessor '/nonexistent/cpp'"));
	free(err);
	assert_int_equal(count_files(d), 1);
}

static void
test_warning_is_not_failure(void **state)
{
	(void)state;
	const char *d = fresh_dir("warning");
	write_file(d, "w.x", "struct s { struct elsewhere *p; };\n", (size_t)-1);
	char *err;
	assert_int_equal(run(d, NULL, NULL, &err, "w.x", NULL), 0);
	assert_non_null(strstr(err, "w.x:1:19: warning: 'struct elsewhere' is not defined in this "
	                            "file; assuming it is declared elsewhere, with xdr_elsewhere()"));
	free(err);
	assert_int_equal(count_files(d), 5);
}

/* An undefined type one edit from a known type or keyword keeps rpcgen's meaning (an external
 * type: a warning, exit 0) and says which name was meant; --strict makes it an error. */
static void
test_undefined_type_near(void **state)
{
	(void)state;
	const char *d = fresh_dir("near");
	write_file(d, "t.x", "typedef int myint;\nstruct s {\n\tstrin name;\n\tmyin n;\n"
	           "\tfoo_t f;\n};\n", (size_t)-1);
	char *err;
	assert_int_equal(run(d, NULL, NULL, &err, "t.x", NULL), 0);
	assert_string_equal(err,
	        "t.x:3:2: warning: type 'strin' is not defined in this file; assuming it is an "
	        "external type whose xdr_strin() the program supplies; did you mean 'string'?\n"
	        "\tstrin name;\n"
	        "\t^~~~~\n"
	        "t.x:4:2: warning: type 'myin' is not defined in this file; assuming it is an "
	        "external type whose xdr_myin() the program supplies; did you mean 'myint'?\n"
	        "\tmyin n;\n"
	        "\t^~~~\n"
	        "t.x:5:2: warning: type 'foo_t' is not defined in this file; assuming it is an "
	        "external type whose xdr_foo_t() the program supplies\n"
	        "\tfoo_t f;\n"
	        "\t^~~~~\n");
	free(err);
	assert_int_equal(count_files(d), 5);
	unlink_in(d, "t.h");
	unlink_in(d, "t_xdr.c");
	unlink_in(d, "t_clnt.c");
	unlink_in(d, "t_svc.c");
	assert_int_equal(run(d, NULL, NULL, &err, "--strict", "t.x", NULL), 1);
	assert_string_equal(err,
	        "t.x:3:2: error: undefined type 'strin' (--strict); did you mean 'string'?\n"
	        "\tstrin name;\n"
	        "\t^~~~~\n"
	        "t.x:4:2: error: undefined type 'myin' (--strict); did you mean 'myint'?\n"
	        "\tmyin n;\n"
	        "\t^~~~\n"
	        "t.x:5:2: error: undefined type 'foo_t' (--strict)\n"
	        "\tfoo_t f;\n"
	        "\t^~~~~\n");
	free(err);
	assert_int_equal(count_files(d), 1);
}

/* Every pass parses the file again: a problem is still reported once. */
static void
test_diagnostics_once(void **state)
{
	(void)state;
	const char *d = fresh_dir("once");
	/* the %#include makes the undefined type a warning, so all four passes run */
	write_file(d, "once.x", "%#include <stdio.h>\nstruct s { later_t x; };\n", (size_t)-1);
	char *err;
	assert_int_equal(run(d, NULL, NULL, &err, "once.x", NULL), 0);
	const char *p = strstr(err, "warning:");
	assert_non_null(p);
	assert_null(strstr(p + 1, "warning:"));
	free(err);
	write_file(d, "once.x", "struct s { int a[-1]; };\n", (size_t)-1);
	assert_int_equal(run(d, NULL, NULL, &err, "-c", "once.x", NULL), 1);
	p = strstr(err, "error:");
	assert_non_null(p);
	assert_null(strstr(p + 1, "error:"));
	free(err);
}

/* Deep nesting is refused, never a stack overflow. */
static void
test_deep_expressions(void **state)
{
	(void)state;
	const char *d = fresh_dir("deep");
	size_t n = 100000;
	char *s = malloc(n * 2 + 64);
	size_t len = (size_t)sprintf(s, "const X = ");
	memset(s + len, '(', n);
	len += n;
	s[len++] = '1';
	memset(s + len, ')', n);
	len += n;
	len += (size_t)sprintf(s + len, ";\n");
	write_file(d, "parens.x", s, len);

	len = (size_t)sprintf(s, "const Y = 1");
	for (size_t i = 0; i < 50000; i++)
		len += (size_t)sprintf(s + len, "+1");
	len += (size_t)sprintf(s + len, ";\nconst Z = ");
	for (size_t i = 0; i < 20000; i++)
		len += (size_t)sprintf(s + len, "-");
	len += (size_t)sprintf(s + len, "1;\n");
	write_file(d, "chain.x", s, len);
	free(s);

	char *err;
	assert_int_equal(run(d, NULL, NULL, &err, "-h", "parens.x", NULL), 1);
	assert_non_null(strstr(err, "error:"));
	free(err);
	assert_int_equal(run(d, NULL, NULL, &err, "-h", "chain.x", NULL), 1);
	assert_non_null(strstr(err, "expression nested too deeply (more than 200 levels)"));
	free(err);
}

/* What cpp refuses is an error in the input: exit status 1, like idlc's own errors (2 is
 * for usage and system errors: a preprocessor that cannot run). */
static void
test_cpp_errors_are_input_errors(void **state)
{
	(void)state;
	const char *d = fresh_dir("cpperr");
	char *err;
	write_file(d, "open.x", "const A = 1; /* never closed\n", (size_t)-1);
	assert_int_equal(run(d, NULL, NULL, &err, "open.x", NULL), 1);
	assert_non_null(strstr(err, "unterminated comment"));
	assert_non_null(strstr(err, "idlc: error: the C preprocessor failed on 'open.x'"));
	free(err);
	write_file(d, "inc.x", "#include \"not-there.x\"\n", (size_t)-1);
	assert_int_equal(run(d, NULL, NULL, &err, "inc.x", NULL), 1);
	free(err);
	assert_int_equal(count_files(d), 2);
}

/* Deep nesting gets a located message, never the parser's "memory exhausted". */
static void
test_nested_too_deeply(void **state)
{
	(void)state;
	const char *d = fresh_dir("nested");
	size_t n = 10000;
	char *s = malloc(n * 2 + 64);
	size_t len = (size_t)sprintf(s, "const X = ");
	memset(s + len, '(', n);
	len += n;
	len += (size_t)sprintf(s + len, "1;\n");
	write_file(d, "parens.x", s, len);
	len = (size_t)sprintf(s, "const Y = ");
	memset(s + len, '~', n * 2);
	len += n * 2;
	len += (size_t)sprintf(s + len, "1;\n");
	write_file(d, "tildes.x", s, len);
	free(s);
	char *err;
	assert_int_equal(run(d, NULL, NULL, &err, "-h", "parens.x", NULL), 1);
	const char *first = "parens.x:1:211: error: expression nested too deeply (more than 200 "
	                    "levels)\n";
	assert_true(strncmp(err, first, strlen(first)) == 0);
	assert_null(strstr(err, "memory exhausted"));
	assert_null(strstr(err, "syntax error"));
	free(err);
	assert_int_equal(run(d, NULL, NULL, &err, "-h", "tildes.x", NULL), 1);
	assert_non_null(strstr(err, "tildes.x:1:10004: error: nested too deeply for the parser "
	                            "(10000 levels)\n"));
	assert_null(strstr(err, "memory exhausted"));
	free(err);
}

/* A 400 KB line is quoted around the column, not whole. */
static void
test_long_line_clipped(void **state)
{
	(void)state;
	const char *d = fresh_dir("longline");
	size_t n = 400000;
	char *s = malloc(n + 64);
	size_t len = (size_t)sprintf(s, "const A = 1;");
	memset(s + len, ' ', n);
	len += n;
	len += (size_t)sprintf(s + len, "const B = @;\n");
	write_file(d, "wide.x", s, len);
	free(s);
	char *err;
	assert_int_equal(run(d, NULL, NULL, &err, "-h", "wide.x", NULL), 1);
	const char *want = "wide.x:1:400023: error: stray '@' in input\n...";
	assert_true(strncmp(err, want, strlen(want)) == 0);
	/* the excerpt: "...", the 80 characters before the column, the rest of the line (here
	 * "@;"); the caret under the column */
	const char *line = err + strlen(want) - 3, *nl = strchr(line, '\n');
	assert_int_equal(nl - line, 3 + 80 + 2);
	assert_true(strncmp(nl - 12, "const B = @;", 12) == 0);
	const char *caret = nl + 1;
	assert_int_equal(strchr(caret, '^') - caret, 3 + 80);
	assert_true(strlen(err) < 1000);
	free(err);
}

/* Semantic errors stop at 100, as syntax errors do. */
static void
test_semantic_error_limit(void **state)
{
	(void)state;
	const char *d = fresh_dir("semlimit");
	char *s = malloc(200 * 64);
	size_t len = 0;
	for (int i = 0; i < 200; i++)
		len += (size_t)sprintf(s + len, "struct s%d { int a[N%d]; };\n", i, i);
	write_file(d, "many.x", s, len);
	free(s);
	char *err;
	assert_int_equal(run(d, NULL, NULL, &err, "many.x", NULL), 1);
	int n = 0;
	for (const char *p = err; (p = strstr(p, "error:")) != NULL; p++)
		n++;
	assert_int_equal(n, 101);
	assert_non_null(strstr(err, "many.x:101:21: error: too many errors; idlc stops here\n"));
	assert_null(strstr(err, "N101"));
	free(err);
}

/* Garbage of every kind: exit status 1 or 2 (cpp may refuse it), never a crash. */
static void
test_garbage(void **state)
{
	(void)state;
	const char *d = fresh_dir("garbage");
	uint32_t seed = 12345;
	char buf[8192];
	static const char *const pieces[] = {
		"struct", "union", "switch", "case", "default", "enum", "const", "typedef",
		"program", "version", "string", "opaque", "int", "unsigned", "hyper", "void",
		"{", "}", "(", ")", "[", "]", "<", ">", ";", ",", "=", "*", ":", "+", "-",
		"<<", ">>", "x", "y", "0x", "07", "9", "999999999999999999999", "\"s\"", "%",
		"\n%pass\n", "/*", "*/", "@", "\\", "\n", " ", "TRUE", "bool", "-2147483648"
	};
	for (int round = 0; round < 60; round++) {
		size_t len = 0;
		if (round % 3 == 0) {
			/* raw bytes */
			for (len = 0; len < sizeof buf; len++) {
				seed = seed * 1103515245u + 12345u;
				buf[len] = (char)(seed >> 16);
			}
		} else {
			/* token soup */
			while (len < sizeof buf - 64) {
				seed = seed * 1103515245u + 12345u;
				const char *p = pieces[(seed >> 16) % (sizeof pieces / sizeof pieces[0])];
				len += (size_t)snprintf(buf + len, sizeof buf - len, "%s ", p);
			}
		}
		write_file(d, "g.x", buf, len);
		int st = run(d, NULL, NULL, NULL, "g.x", NULL);
		if (st != 1 && st != 2 && st != 0)
			fail_msg("round %d: idlc exited with status %d", round, st);
	}
}

/* A file full of errors stops after a bounded number of them. */
static void
test_error_limit(void **state)
{
	(void)state;
	const char *d = fresh_dir("limit");
	char *s = malloc(10000 * 4);
	size_t len = 0;
	for (int i = 0; i < 10000; i++)
		len += (size_t)sprintf(s + len, "@\n");
	write_file(d, "many.x", s, len);
	free(s);
	char *err;
	assert_int_equal(run(d, NULL, NULL, &err, "many.x", NULL), 1);
	int n = 0;
	for (const char *p = err; (p = strstr(p, "error:")) != NULL; p++)
		n++;
	assert_true(n >= 1 && n <= 101);
	assert_non_null(strstr(err, "error: too many errors; idlc stops here"));
	free(err);
}

/* Long names and long lines: no fixed-size buffer in the way. */
static void
test_long_names(void **state)
{
	(void)state;
	const char *d = fresh_dir("long");
	size_t n = 200000;
	char *name = malloc(n + 1);
	memset(name, 'a', n);
	name[n] = '\0';
	char *s = malloc(n * 3 + 256);
	size_t len = (size_t)sprintf(s, "struct %s { int %s; };\nconst C_%s = 1;\n", name, name,
	                             name);
	write_file(d, "long.x", s, len);
	char *out;
	assert_int_equal(run(d, NULL, &out, NULL, "-c", "long.x", NULL), 0);
	assert_non_null(strstr(out, name));
	free(out);
	/* and an error about a long name */
	len = (size_t)sprintf(s, "struct s { int x[%s]; };\n", name);
	write_file(d, "long.x", s, len);
	char *err;
	assert_int_equal(run(d, NULL, NULL, &err, "long.x", NULL), 1);
	assert_non_null(strstr(err, "undefined constant 'aaaa"));
	free(err);
	free(s);
	free(name);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_default_outputs),
		cmocka_unit_test(test_single_outputs),
		cmocka_unit_test(test_failure_writes_nothing),
		cmocka_unit_test(test_samples_written),
		cmocka_unit_test(test_samples_not_overwritten),
		cmocka_unit_test(test_sample_stdout),
		cmocka_unit_test(test_cpp_options),
		cmocka_unit_test(test_cpp_missing),
		cmocka_unit_test(test_warning_is_not_failure),
		cmocka_unit_test(test_undefined_type_near),
		cmocka_unit_test(test_diagnostics_once),
		cmocka_unit_test(test_deep_expressions),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_error_limit),
		cmocka_unit_test(test_cpp_errors_are_input_errors),
		cmocka_unit_test(test_nested_too_deeply),
		cmocka_unit_test(test_long_line_clipped),
		cmocka_unit_test(test_semantic_error_limit),
		cmocka_unit_test(test_long_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

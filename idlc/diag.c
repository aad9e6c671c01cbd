/*
 * idlc -- diagnostics in the GNU format, and the cache of source lines they quote.
 */
#include <sys/stat.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "idlc.h"

/* One source file as the user wrote it, split into lines. */
typedef struct srcfile {
	struct srcfile *next;  /* hash chain */
	const char *name;      /* interned */
	char *text;            /* NULL if the file could not be read */
	size_t *lines;         /* offset of each line's start */
	size_t nlines;
} srcfile;

#define SRC_BUCKETS 256u
#define SEEN_MIN 64u

struct idlc_diag {
	FILE *out;
	int errors;
	int warnings;
	idlc_buf group;        /* the pending group */
	bool group_error;      /* ...starts with an error (else a warning) */
	bool group_open;
	bool capped;           /* IDLC_MAX_ERRORS were printed: drop everything from now on */
	char **seen;           /* printed groups (open addressing) */
	size_t seen_cap;
	size_t seen_count;
	srcfile *src[SRC_BUCKETS];
	/* idlc_src_column's cursor: the last token found */
	const char *cur_file;
	int cur_line;
	size_t cur_pos;
};

/* idlc_diag_new -- a diagnostics sink printing to out. */
idlc_diag *
idlc_diag_new(FILE *out)
{
	idlc_diag *d = idlc_xcalloc(1, sizeof(*d));
	d->out = out;
	return d;
}

/* idlc_diag_free -- flush what is pending and free d with its source cache. */
void
idlc_diag_free(idlc_diag *d)
{
	if (d == NULL)
		return;
	idlc_diag_flush(d);
	idlc_buf_free(&d->group);
	for (size_t i = 0; i < d->seen_cap; i++)
		free(d->seen[i]);
	free(d->seen);
	for (unsigned h = 0; h < SRC_BUCKETS; h++) {
		srcfile *f = d->src[h];
		while (f != NULL) {
			srcfile *next = f->next;
			free(f->text);
			free(f->lines);
			free(f);
			f = next;
		}
	}
	free(d);
}


/* seen_add -- remember text; false if it was already there. */
static bool
seen_add(idlc_diag *d, const char *text)
{
	if (d->seen_count * 2 >= d->seen_cap) {
		size_t cap = d->seen_cap ? d->seen_cap * 2 : SEEN_MIN;
		char **slots = idlc_xcalloc(cap, sizeof(*slots));
		for (size_t i = 0; i < d->seen_cap; i++) {
			if (d->seen[i] == NULL)
				continue;
			size_t j = idlc_strhash(d->seen[i]) & (cap - 1);
			while (slots[j] != NULL)
				j = (j + 1) & (cap - 1);
			slots[j] = d->seen[i];
		}
		free(d->seen);
		d->seen = slots;
		d->seen_cap = cap;
	}
	size_t j = idlc_strhash(text) & (d->seen_cap - 1);
	while (d->seen[j] != NULL) {
		if (strcmp(d->seen[j], text) == 0)
			return false;
		j = (j + 1) & (d->seen_cap - 1);
	}
	d->seen[j] = idlc_xstrdup(text);
	d->seen_count++;
	return true;
}

/* idlc_diag_flush -- print the pending group unless an identical one was printed. */
void
idlc_diag_flush(idlc_diag *d)
{
	if (!d->group_open)
		return;
	d->group_open = false;
	if (seen_add(d, d->group.data)) {
		fputs(d->group.data, d->out);
		fflush(d->out);
		if (d->group_error)
			d->errors++;
		else
			d->warnings++;
	}
	d->group.len = 0;
	if (d->group.data)
		d->group.data[0] = '\0';
}

/* idlc_diag_errors -- errors printed so far. */
int
idlc_diag_errors(const idlc_diag *d)
{
	return d->errors;
}

/* idlc_diag_warnings -- warnings printed so far. */
int
idlc_diag_warnings(const idlc_diag *d)
{
	return d->warnings;
}

#define SRC_MAX ((long)64 << 20) /* the largest source file shown in diagnostics */

/* load -- the cached source file `name` (interned), reading it on first use. */
static srcfile *
load(idlc_diag *d, const char *name)
{
	unsigned h = (unsigned)(idlc_strhash(name) % SRC_BUCKETS);
	for (srcfile *f = d->src[h]; f != NULL; f = f->next)
		if (f->name == name)
			return f;

	srcfile *f = idlc_xcalloc(1, sizeof(*f));
	f->name = name;
	f->next = d->src[h];
	d->src[h] = f;

	/* only a regular file of sane size: a line marker may name anything (/dev/zero) */
	FILE *fp = fopen(name, "rb");
	struct stat sb;
	if (fp == NULL)
		return f;
	if (fstat(fileno(fp), &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size > SRC_MAX) {
		fclose(fp);
		return f;
	}
	idlc_buf b = { 0 };
	char chunk[8192];
	size_t n, total = 0;
	while (total < SRC_MAX && (n = fread(chunk, 1, sizeof chunk, fp)) > 0) {
		idlc_buf_putn(&b, chunk, n);
		total += n;
	}
	fclose(fp);
	if (b.data == NULL)
		idlc_buf_putn(&b, "", 0);
	f->text = b.data;

	size_t cap = 64;
	f->lines = idlc_xmalloc(cap * sizeof(*f->lines));
	f->lines[f->nlines++] = 0;
	for (size_t i = 0; i < b.len; i++) {
		if (b.data[i] != '\n')
			continue;
		if (f->nlines == cap) {
			cap *= 2;
			f->lines = idlc_xrealloc(f->lines, cap * sizeof(*f->lines));
		}
		f->lines[f->nlines++] = i + 1;
	}
	return f;
}

/* idlc_src_line -- line `line` of `file`, without its line end; NULL if unavailable. */
const char *
idlc_src_line(idlc_diag *d, const char *file, int line, size_t *len)
{
	if (file == NULL || line < 1)
		return NULL;
	srcfile *f = load(d, idlc_intern(file));
	if (f->text == NULL || (size_t)line > f->nlines)
		return NULL;
	const char *s = f->text + f->lines[line - 1];
	const char *e = strchr(s, '\n');
	size_t n = e ? (size_t)(e - s) : strlen(s);
	if (n > 0 && s[n - 1] == '\r')
		n--;
	*len = n;
	return s;
}

/* is_word -- a character of an identifier or number. */
static bool
is_word(char c)
{
	return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* idlc_src_column -- the column where text[0..n) starts on the original line (see idlc.h). */
int
idlc_src_column(idlc_diag *d, const char *file, int line, const char *text, size_t n,
                int fallback)
{
	size_t len;
	const char *s = idlc_src_line(d, file, line, &len);
	if (s == NULL || n == 0)
		return fallback;
	if (d->cur_file != file || d->cur_line != line) {
		d->cur_file = file;
		d->cur_line = line;
		d->cur_pos = 0;
	}
	bool word = is_word(text[0]);
	for (size_t i = d->cur_pos; i + n <= len; i++) {
		if (memcmp(s + i, text, n) != 0)
			continue;
		/* a name must not be found inside a longer name */
		if (word && ((i > 0 && is_word(s[i - 1])) || (i + n < len && is_word(s[i + n]))))
			continue;
		d->cur_pos = i + n;
		return (int)i + 1;
	}
	return fallback;
}

/* The widest source excerpt shown, and how much of it comes before the column. */
#define DIAG_LINE_MAX 160u
#define DIAG_LINE_BEFORE 80u

/* emit -- add to the group "file:line:col: kind: message", then the source line (at most
 * DIAG_LINE_MAX characters of it, around the column) and a caret under the column. */
static void
emit(idlc_diag *d, const idlc_loc *loc, const char *kind, const char *fmt, va_list ap)
{
	idlc_buf *b = &d->group;
	if (loc != NULL && loc->file != NULL && loc->line > 0)
		idlc_buf_printf(b, "%s:%d:%d: %s: ", loc->file, loc->line, loc->col, kind);
	else if (loc != NULL && loc->file != NULL)
		idlc_buf_printf(b, "%s: %s: ", loc->file, kind);
	else
		idlc_buf_printf(b, "idlc: %s: ", kind);
	idlc_buf_vprintf(b, fmt, ap);
	idlc_buf_putc(b, '\n');

	size_t len;
	const char *s = loc ? idlc_src_line(d, loc->file, loc->line, &len) : NULL;
	if (s == NULL)
		return;
	size_t col = loc->col > 0 ? (size_t)loc->col - 1 : 0;
	if (col > len)
		col = len;
	/* a long line is shown around the column, "..." marking what is left out */
	size_t from = 0, to = len;
	if (len > DIAG_LINE_MAX) {
		from = col > DIAG_LINE_BEFORE ? col - DIAG_LINE_BEFORE : 0;
		to = from + DIAG_LINE_MAX < len ? from + DIAG_LINE_MAX : len;
	}
	const char *dots = from > 0 ? "..." : "";
	idlc_buf_puts(b, dots);
	idlc_buf_putn(b, s + from, to - from);
	idlc_buf_puts(b, to < len ? "...\n" : "\n");
	idlc_buf_puts(b, from > 0 ? "   " : "");
	for (size_t i = from; i < col; i++)
		idlc_buf_putc(b, s[i] == '\t' ? '\t' : ' ');
	idlc_buf_putc(b, '^');
	for (int i = 1; i < loc->len && col + (size_t)i < to; i++)
		idlc_buf_putc(b, '~');
	idlc_buf_putc(b, '\n');
}

/* emit_stop -- emit with its own variable arguments (for the message past the cap). */
static void
emit_stop(idlc_diag *d, const idlc_loc *loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(d, loc, "error", fmt, ap);
	va_end(ap);
}

/* idlc_error -- report an error at loc (starts a new group). Past IDLC_MAX_ERRORS printed
 * errors it says "too many errors; idlc stops here" instead, once, and nothing more. */
void
idlc_error(idlc_diag *d, const idlc_loc *loc, const char *fmt, ...)
{
	va_list ap;
	idlc_diag_flush(d);
	if (d->capped)
		return;
	d->group_open = true;
	d->group_error = true;
	if (d->errors >= IDLC_MAX_ERRORS) {
		d->capped = true;
		emit_stop(d, loc, "too many errors; idlc stops here");
		return;
	}
	va_start(ap, fmt);
	emit(d, loc, "error", fmt, ap);
	va_end(ap);
}

/* idlc_warning -- report a warning at loc (starts a new group; nothing once capped). */
void
idlc_warning(idlc_diag *d, const idlc_loc *loc, const char *fmt, ...)
{
	va_list ap;
	idlc_diag_flush(d);
	if (d->capped)
		return;
	d->group_open = true;
	d->group_error = false;
	va_start(ap, fmt);
	emit(d, loc, "warning", fmt, ap);
	va_end(ap);
}

/* idlc_note -- add a note at loc to the current group (ignored without one). */
void
idlc_note(idlc_diag *d, const idlc_loc *loc, const char *fmt, ...)
{
	va_list ap;
	if (!d->group_open)
		return;
	va_start(ap, fmt);
	emit(d, loc, "note", fmt, ap);
	va_end(ap);
}

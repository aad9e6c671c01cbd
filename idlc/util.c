/*
 * idlc -- memory, arenas, growable buffers and interned strings.
 */
#include <stdlib.h>
#include <string.h>

#include "idlc.h"

/* idlc_oom -- report that memory ran out and exit with status 2. */
void
idlc_oom(void)
{
	fputs("idlc: out of memory\n", stderr);
	exit(2);
}

/* idlc_xmalloc -- malloc(n) or die; n == 0 still returns a unique pointer. */
void *
idlc_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (p == NULL)
		idlc_oom();
	return p;
}

/* idlc_xcalloc -- calloc(n, size) or die. */
void *
idlc_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (p == NULL)
		idlc_oom();
	return p;
}

/* idlc_xrealloc -- realloc(p, n) or die. */
void *
idlc_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (q == NULL)
		idlc_oom();
	return q;
}

/* idlc_xstrdup -- strdup(s) or die. */
char *
idlc_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = idlc_xmalloc(n);
	memcpy(p, s, n);
	return p;
}

/* ---------------------------------------------------------------------------------------- */

struct idlc_arena_chunk {
	idlc_arena_chunk *next;
	size_t used;
	size_t cap;
	max_align_t data[];
};

#define IDLC_ARENA_CHUNK 65536u

/* idlc_arena_alloc -- n zeroed bytes, aligned for any type, owned by a. */
void *
idlc_arena_alloc(idlc_arena *a, size_t n)
{
	const size_t align = sizeof(max_align_t);
	idlc_arena_chunk *c = a->head;

	n = (n + align - 1) / align * align;
	if (n == 0)
		n = align;
	if (c == NULL || c->cap - c->used < n) {
		size_t cap = n > IDLC_ARENA_CHUNK ? n : IDLC_ARENA_CHUNK;
		c = idlc_xmalloc(sizeof(*c) + cap);
		c->cap = cap;
		c->used = 0;
		c->next = a->head;
		a->head = c;
	}
	void *p = (char *)c->data + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

/* idlc_arena_strndup -- copy s[0..n) into a, NUL-terminated. */
char *
idlc_arena_strndup(idlc_arena *a, const char *s, size_t n)
{
	char *p = idlc_arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* idlc_arena_strdup -- copy the string s into a. */
char *
idlc_arena_strdup(idlc_arena *a, const char *s)
{
	return idlc_arena_strndup(a, s, strlen(s));
}

/* idlc_arena_free -- free every chunk of a; a is empty afterwards. */
void
idlc_arena_free(idlc_arena *a)
{
	idlc_arena_chunk *c = a->head;
	while (c != NULL) {
		idlc_arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
}

/* ---------------------------------------------------------------------------------------- */

/* reserve -- make room for n more bytes plus the terminating NUL. */
static void
reserve(idlc_buf *b, size_t n)
{
	if (n > SIZE_MAX / 2 - b->len)
		idlc_oom();
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		b->data = idlc_xrealloc(b->data, cap);
		b->cap = cap;
	}
}

/* idlc_buf_putn -- append s[0..n). */
void
idlc_buf_putn(idlc_buf *b, const char *s, size_t n)
{
	reserve(b, n);
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

/* idlc_buf_puts -- append the string s. */
void
idlc_buf_puts(idlc_buf *b, const char *s)
{
	idlc_buf_putn(b, s, strlen(s));
}

/* idlc_buf_putc -- append one character. */
void
idlc_buf_putc(idlc_buf *b, char c)
{
	idlc_buf_putn(b, &c, 1);
}

/* idlc_buf_vprintf -- append printf-formatted text. */
void
idlc_buf_vprintf(idlc_buf *b, const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	reserve(b, (size_t)n);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

/* idlc_buf_printf -- append printf-formatted text. */
void
idlc_buf_printf(idlc_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	idlc_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

/* idlc_buf_free -- free the buffer's memory and reset it. */
void
idlc_buf_free(idlc_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

/* ---------------------------------------------------------------------------------------- */

/* Interned strings (file names), in a hash table of chains. */
typedef struct interned {
	struct interned *next;
	char s[];
} interned;

#define INTERN_BUCKETS 1024u
static interned *intern_tab[INTERN_BUCKETS];

/* idlc_strhash -- FNV-1a (32 bits) of the string s: idlc's one string hash (the intern table,
 * the symbol tables of check.c, diag.c's tables). */
uint32_t
idlc_strhash(const char *s)
{
	uint32_t h = 2166136261u;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* idlc_intern -- the unique copy of s. */
const char *
idlc_intern(const char *s)
{
	unsigned h = idlc_strhash(s) % INTERN_BUCKETS;
	for (interned *i = intern_tab[h]; i != NULL; i = i->next)
		if (strcmp(i->s, s) == 0)
			return i->s;
	size_t n = strlen(s) + 1;
	interned *i = idlc_xmalloc(sizeof(*i) + n);
	memcpy(i->s, s, n);
	i->next = intern_tab[h];
	intern_tab[h] = i;
	return i->s;
}

/* idlc_intern_free -- free every interned string (at exit). */
void
idlc_intern_free(void)
{
	for (unsigned h = 0; h < INTERN_BUCKETS; h++) {
		while (intern_tab[h] != NULL) {
			interned *next = intern_tab[h]->next;
			free(intern_tab[h]);
			intern_tab[h] = next;
		}
	}
}

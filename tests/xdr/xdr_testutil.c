#include "xdr_testutil.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct tu_alloc tu_alloc;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

void tu_alloc_reset(void)
{
	memset(&tu_alloc, 0, sizeof(tu_alloc));
}

/* Count one call asking for n bytes; false if it is the one to fail. */
static bool tu__count(size_t n)
{
	tu_alloc.calls++;
	if (n > tu_alloc.max_request)
		tu_alloc.max_request = n;
	tu_alloc.total_request += n;
	if (tu_alloc.fail_at != 0 && tu_alloc.calls == tu_alloc.fail_at) {
		tu_alloc.failed++;
		return false;
	}
	return true;
}

void *__wrap_malloc(size_t n)
{
	void *p;
	if (!tu__count(n))
		return NULL;
	p = __real_malloc(n);
	if (p != NULL) {
		tu_alloc.fresh++;
		tu_alloc.live++;
	}
	return p;
}

void *__wrap_calloc(size_t n, size_t m)
{
	void *p;
	/* the request size saturates rather than wraps */
	size_t req = (m != 0 && n > SIZE_MAX / m) ? SIZE_MAX : n * m;
	if (!tu__count(req))
		return NULL;
	p = __real_calloc(n, m);
	if (p != NULL) {
		tu_alloc.fresh++;
		tu_alloc.live++;
	}
	return p;
}

void *__wrap_realloc(void *old, size_t n)
{
	void *p;
	if (!tu__count(n))
		return NULL;
	p = __real_realloc(old, n);
	if (old == NULL && p != NULL) {
		tu_alloc.fresh++;
		tu_alloc.live++;
	}
	return p;
}

void __wrap_free(void *p)
{
	if (p != NULL) {
		tu_alloc.frees++;
		tu_alloc.live--;
	}
	__real_free(p);
}

static size_t tu__pagesize(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* Layout: [pages holding the buffer][guard page]; the buffer ends at the guard. */
static size_t tu__span(size_t len)
{
	size_t ps = tu__pagesize();
	return (len + ps - 1) / ps * ps + ps;
}

void *tu_guard_alloc(size_t len)
{
	size_t ps = tu__pagesize();
	size_t span = tu__span(len);
	unsigned char *m = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	                        -1, 0);
	if (m == MAP_FAILED)
		abort();
	if (mprotect(m + span - ps, ps, PROT_NONE) != 0)
		abort();
	return m + span - ps - len;
}

void tu_guard_free(void *p, size_t len)
{
	size_t ps = tu__pagesize();
	size_t span = tu__span(len);
	unsigned char *end = (unsigned char *)p + len; /* start of the guard page */
	munmap(end + ps - span, span);
}

void *tu_guard_dup(const void *src, size_t len)
{
	void *p = tu_guard_alloc(len);
	if (len > 0)
		memcpy(p, src, len);
	return p;
}

bool tu_sink_write(void *ctx, const void *buf, size_t len)
{
	struct tu_sink *s = ctx;
	if (s->fail_after != 0 && s->writes >= s->fail_after)
		return false;
	s->writes++;
	if (s->len + len > s->cap) {
		size_t ncap = s->cap ? s->cap : 256;
		unsigned char *nd;
		while (ncap < s->len + len)
			ncap *= 2;
		nd = __real_realloc(s->data, ncap);
		if (nd == NULL)
			abort();
		s->data = nd;
		s->cap = ncap;
	}
	memcpy(s->data + s->len, buf, len);
	s->len += len;
	return true;
}

void tu_sink_free(struct tu_sink *s)
{
	__real_free(s->data);
	memset(s, 0, sizeof(*s));
}

uint64_t tu_rand(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/*
 * The allocator seen through the linker's --wrap: the largest single request and the blocks
 * still live, over every thread. Only calls from objects linked into the test program (the
 * test and libremotecall.a) pass through here; libc's own internal allocations do not.
 */
#include "sec_util.h"

#include <stdlib.h>

atomic_size_t sec_alloc_max;
atomic_long sec_alloc_live;
atomic_size_t sec_alloc_calls;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

void sec_alloc_reset(void)
{
	atomic_store(&sec_alloc_max, 0);
	atomic_store(&sec_alloc_calls, 0);
}

static void sec__note(size_t n)
{
	size_t cur = atomic_load(&sec_alloc_max);
	atomic_fetch_add(&sec_alloc_calls, 1);
	while (n > cur && !atomic_compare_exchange_weak(&sec_alloc_max, &cur, n))
		;
}

void *__wrap_malloc(size_t n)
{
	void *p;
	sec__note(n);
	if ((p = __real_malloc(n)) != NULL)
		atomic_fetch_add(&sec_alloc_live, 1);
	return p;
}

void *__wrap_calloc(size_t n, size_t m)
{
	void *p;
	sec__note((m != 0 && n > SIZE_MAX / m) ? SIZE_MAX : n * m);
	if ((p = __real_calloc(n, m)) != NULL)
		atomic_fetch_add(&sec_alloc_live, 1);
	return p;
}

void *__wrap_realloc(void *old, size_t n)
{
	void *p;
	sec__note(n);
	p = __real_realloc(old, n);
	if (old == NULL && p != NULL)
		atomic_fetch_add(&sec_alloc_live, 1);
	else if (old != NULL && n == 0 && p == NULL)
		atomic_fetch_sub(&sec_alloc_live, 1);
	return p;
}

void __wrap_free(void *p)
{
	if (p != NULL)
		atomic_fetch_sub(&sec_alloc_live, 1);
	__real_free(p);
}

/*
 * Under AddressSanitizer, freed memory waits in a quarantine (256 MiB by default) before it is
 * reused, which would show as RSS growth in the memory-bound assertions. A small quarantine
 * keeps use-after-free detection for recent frees and makes RSS mean what it means without
 * the sanitizer. (An ASAN_OPTIONS environment variable still overrides this.)
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "quarantine_size_mb=4:thread_local_quarantine_size_kb=64";
}

/*
 * Fuzz target: the fuzzers idlc --fuzz writes for the examples' .x files and idlc's golden
 * corpus, linked into one (each compiled with -DRC_FUZZ_ENTRY=fuzz_gen_NAME, the list in the
 * generated fuzz_gen_corpus.h). Byte 0 picks the file; the rest goes to its entry point,
 * which picks a type and checks the round trip (idlc/gen_fuzz.c). Renamed entry points leave
 * the allocation count to the caller: here, every allocation made during the call must have
 * been freed when it returns (through the sanitizer runtime's malloc/free hooks).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <sanitizer/allocator_interface.h>

#define FUZZ_GEN(n) int fuzz_gen_##n(const uint8_t *data, size_t size);
#include "fuzz_gen_corpus.h"
#undef FUZZ_GEN

static const struct {
	const char *name;
	int (*entry)(const uint8_t *, size_t);
} files[] = {
#define FUZZ_GEN(n) { #n, fuzz_gen_##n },
#include "fuzz_gen_corpus.h"
#undef FUZZ_GEN
};

static long live;
static bool counting;

static void
on_malloc(const volatile void *p, size_t n)
{
	(void)p;
	(void)n;
	if (counting)
		live++;
}

static void
on_free(const volatile void *p)
{
	if (counting && p != NULL)
		live--;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool hooked;
	size_t f;

	if (!hooked && !__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free))
		abort();
	hooked = true;
	if (size < 1)
		return 0;
	f = data[0] % (sizeof files / sizeof files[0]);
	live = 0;
	counting = true;
	files[f].entry(data + 1, size - 1);
	counting = false;
	if (live != 0) {
		fprintf(stderr, "fuzz_gen_corpus: %s: %ld allocations outlived the call\n",
		        files[f].name, live);
		abort();
	}
	return 0;
}

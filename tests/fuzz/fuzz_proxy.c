/*
 * Fuzz target: the PROXY protocol header parser (transports/proxy_v2.c: v2, and v1's text
 * line; seeds of both, v1's words in fuzz_proxy.dict), with its own consistency checks. For an input of len bytes: the whole parse gives a length n (> 0), 0
 * (more needed: *need beyond len) or -1. A header found whole is found whole at exactly n
 * bytes too, with the same client address; every shorter prefix asks for more (never refuses
 * what a longer input accepts), with *need never beyond n. The input as text also goes through
 * the ?proxy_from= list parser.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transports/proxy_v2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rc__proxy_hdr h, h2;
	size_t need = 0, need2;
	int n;

	n = rc__proxy_parse(data, size, &need, &h);
	if (n == 0 && need <= size)
		abort();
	if (n > 0) {
		if ((size_t)n > size || (size_t)n > RC__PROXY_MAX)
			abort();
		if (rc__proxy_parse(data, (size_t)n, &need2, &h2) != n || h2.local != h.local ||
		    h2.src.len != h.src.len || memcmp(&h2.src.ss, &h.src.ss, h.src.len) != 0)
			abort();
		for (size_t k = 0; k < (size_t)n; k += 1 + k / 4) {
			need2 = 0;
			if (rc__proxy_parse(data, k, &need2, &h2) != 0 || need2 <= k ||
			    need2 > (size_t)n)
				abort();
		}
	}
	if (size < 512) {
		char text[512];
		rc__proxy_from f;
		memcpy(text, data, size);
		text[size] = '\0';
		memset(&f, 0, sizeof(f));
		(void)rc__proxy_from_add(&f, text);
		if (f.n > RC__PROXY_FROM_MAX)
			abort();
	}
	return 0;
}

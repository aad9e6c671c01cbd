/*
 * Fuzz target: RPCSEC_GSS's wire parsers (runtime/auth/gss_xdr.c) -- the credential, the INIT
 * arguments and results, the integrity and privacy bodies -- through rc__gss_fuzz_one, which
 * also checks that whatever decodes re-encodes to the same bytes and that every borrowed
 * pointer stays inside the input (it aborts otherwise; ASan catches an over-read).
 */
#include <stddef.h>
#include <stdint.h>

#include "runtime/auth/gss.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return rc__gss_fuzz_one(data, size);
}

/*
 * Fuzz target: idlc's front end and generators, in process. The input is treated as the C
 * preprocessor's output for a .x file (idlc runs cpp, then parses its output: this target
 * starts where cpp ends). As idlc's main() does, it runs the four passes (header, XDR, client,
 * server), each parsed and checked, the later ones consulting the header pass, and generates
 * the four outputs into memory when every pass is clean.
 *
 * Diagnostics print a source excerpt, read from the file a line marker (# 1 "file") names: an
 * input naming a device or /proc file would make that read the fuzzer's problem, so inputs
 * with an absolute path ("/...) or a parent folder (../) in it is skipped. (That idlc reads any file a
 * marker names -- #line 1 "/dev/zero" hangs it -- is tracked in
 * tests/security/test_sec_known_bugs.c.)
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "idlc.h"

static FILE *devnull;

static bool names_a_path(const uint8_t *d, size_t n)
{
	for (size_t i = 0; i + 2 < n; i++)
		if ((d[i] == '"' && d[i + 1] == '/') || (d[i] == '.' && d[i + 1] == '.' && d[i + 2] == '/'))
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the four passes' outputs, then --print's and --fuzz's (from the header pass) */
	static void (*const gen[IDLC_NPASS + 2])(idlc_gen *) = {
		idlc_gen_header, idlc_gen_xdr, idlc_gen_clnt, idlc_gen_svc, idlc_gen_print,
		idlc_gen_fuzz
	};
	idlc_unit units[IDLC_NPASS];
	bool used[IDLC_NPASS] = {false}, ok = true;
	idlc_diag *diag;

	if (size > 65536 || names_a_path(data, size))
		return 0;
	if (devnull == NULL && (devnull = fopen("/dev/null", "w")) == NULL)
		abort();
	diag = idlc_diag_new(devnull);
	for (int p = 0; p < IDLC_NPASS && ok; p++) {
		idlc_unit *u = &units[p];
		idlc_unit_init(u, (idlc_pass)p, diag, "fuzz.x");
		used[p] = true;
		if (p != IDLC_PASS_HDR)
			u->env = &units[IDLC_PASS_HDR];
		int errs = idlc_parse_text(u, (const char *)data, size);
		if (errs == 0)
			errs = idlc_check(u);
		ok = errs == 0 && idlc_diag_errors(diag) == 0;
	}
	idlc_diag_flush(diag);
	if (ok) {
		for (int p = 0; p < IDLC_NPASS + 2; p++) {
			idlc_buf out = {0};
			idlc_gen g = {.unit = &units[p < IDLC_NPASS ? p : IDLC_PASS_HDR], .base = "fuzz", .header = "fuzz.h", .out = &out,
			              .rpcgen_types = (size & 1) != 0};
			gen[p](&g);
			idlc_gen_wrap(&g); /* the last step of every output; frees g's records */
			idlc_buf_free(&out);
		}
	}
	for (int p = 0; p < IDLC_NPASS; p++)
		if (used[p])
			idlc_unit_free(&units[p]);
	idlc_diag_free(diag);
	idlc_intern_free();
	return 0;
}

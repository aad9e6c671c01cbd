/*
 * fill.h -- values of tooling.x's types for the tooling tests: the largest value of `all`
 * (every arm, array and string at its maximum: it encodes to exactly all_XDR_MAX bytes) and
 * values with the extremes a JSON printer must get right.
 */
#ifndef TOOL_FILL_H
#define TOOL_FILL_H

#include <string.h>

#include "tooling.h"

static char tool_ten[] = "0123456789";                      /* name<10> at its maximum */
static point tool_point = { INT32_MIN, UINT64_MAX, -0.5, true, 1.5f };

/* tool_fill_max -- the largest `all`: both outer arms the 48-byte names, 7 bytes of var7,
 * two opt each with a point, four hypers. Points into static storage: not freed. */
static inline void
tool_fill_max(all *a, int64_t *hs, opt *os)
{
	memset(a, 0, sizeof *a);
	for (int i = 0; i < 2; i++) {
		a->o[i].k = 2;
		for (int j = 0; j < N; j++)
			a->o[i].outer_u.ns[j] = tool_ten;
		os[i].p = &tool_point;
	}
	a->v.var7_len = 7;
	a->v.var7_val = "\x01\x02\x03\x04\x05\x06\x07";
	a->os.os_len = 2;
	a->os.os_val = os;
	for (int i = 0; i < 4; i++)
		hs[i] = INT64_MIN + i;
	a->hs.hypers_len = 4;
	a->hs.hypers_val = hs;
	a->s = -2;
	a->uc = 255;
}

#endif

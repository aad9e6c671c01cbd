/*
 * layout_probe -- sizeof and offsetof of sunlay.x's types, built twice by idlc_layout_sunlay:
 * against rpcgen's sunlay.h (with libtirpc's headers) and against idlc --rpcgen-types'
 * sunlay.h (with remotecall's). The two outputs must be the same.
 */
#include <stddef.h>
#include <stdio.h>

#include "sunlay.h"

#define T(t) printf("%s %zu\n", #t, sizeof(t))
#define M(t, m) printf("%s.%s %zu %zu\n", #t, #m, offsetof(t, m), sizeof(((t *)0)->m))

/* main -- print the layout, one line per type and member. */
int
main(void)
{
	T(along);
	T(aulong);
	T(sunlay_scalars);
	M(sunlay_scalars, u);
	M(sunlay_scalars, l);
	M(sunlay_scalars, ul);
	M(sunlay_scalars, ul2);
	M(sunlay_scalars, b);
	M(sunlay_scalars, s);
	M(sunlay_scalars, us);
	M(sunlay_scalars, c);
	M(sunlay_scalars, uc);
	M(sunlay_scalars, h);
	M(sunlay_scalars, uh);
	M(sunlay_scalars, f);
	M(sunlay_scalars, d);
	M(sunlay_scalars, al);
	T(sunlay_pathconf);
	M(sunlay_pathconf, no_trunc);
	M(sunlay_pathconf, case_preserving);
	T(sunlay_type);
	T(sunlay_header);
	M(sunlay_header, time_stamp);
	M(sunlay_header, message_type);
	M(sunlay_header, message);
	M(sunlay_header, error);
	T(sunlay_arrays);
	M(sunlay_arrays, lv);
	M(sunlay_arrays, ulf);
	M(sunlay_arrays, bv);
	M(sunlay_arrays, bf);
	M(sunlay_arrays, opt);
	M(sunlay_arrays, sv);
	T(sunlay_u);
	M(sunlay_u, sunlay_u_u);
	return 0;
}

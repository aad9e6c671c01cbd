/*
 * test_idlc_tooling -- what idlc generates for today's tooling, on tool/tooling.x:
 * TYPE_XDR_MAX and the procedures' CALL/REPLY bounds against hand-computed values (every
 * XDR construct: nested unions, fixed arrays of strings, optional data, quadruples...), no
 * bound for an unbounded type, and the largest value of a type encoding to exactly its bound.
 * (The printers: print_values.c and check_print.py; the fuzzer: tooling_fuzz_smoke.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fill.h"

/* Unbounded types get no bound: a list, an unbounded string and what holds one, and a
 * procedure returning a list (so its version has no REPLY bound either). */
#if defined(node_XDR_MAX) || defined(text_XDR_MAX) || defined(holder_XDR_MAX) || \
    defined(list_1_REPLY_XDR_MAX) || defined(tool_1_REPLY_XDR_MAX)
#error "an unbounded type has an XDR_MAX"
#endif

/* An integer constant expression: usable for a static buffer and in #if. */
static unsigned char static_buf[all_XDR_MAX];
#if all_XDR_MAX != 244
#error "all_XDR_MAX is not 244"
#endif

/* Every bounded type of tooling.x, by hand (RFC 4506: 4-byte units, padding to 4). */
static void
type_bounds(void **state)
{
	(void)state;
	assert_int_equal(color_XDR_MAX, 4);             /* an enum */
	assert_int_equal(name_XDR_MAX, 4 + 12);         /* string<10>: length + 10 padded to 12 */
	assert_int_equal(fixed5_XDR_MAX, 8);            /* opaque[5]: no length, padded */
	assert_int_equal(var7_XDR_MAX, 4 + 8);          /* opaque<7> */
	assert_int_equal(names_XDR_MAX, 3 * 16);        /* name[N]: a fixed array of strings */
	assert_int_equal(hypers_XDR_MAX, 4 + 4 * 8);    /* hyper<4> */
	assert_int_equal(point_XDR_MAX, 4 + 8 + 8 + 4 + 4); /* int, u_hyper, double, bool, float */
	assert_int_equal(inner_XDR_MAX, 4 + 28);        /* color + the largest arm (point) */
	assert_int_equal(outer_XDR_MAX, 4 + 48);        /* int + max(inner 32, names 48, fixed5 8) */
	assert_int_equal(opt_XDR_MAX, 4 + 28);          /* point *: present flag + point */
	/* outer[2] + var7 + opt<2> + quadruple + hypers + short + unsigned char */
	assert_int_equal(all_XDR_MAX, 2 * 52 + 12 + (4 + 2 * 32) + 16 + 36 + 4 + 4);
	assert_int_equal(sizeof static_buf, 244);
}

/* The procedures: the call body (arguments, in order) and the reply body (the result). */
static void
proc_bounds(void **state)
{
	(void)state;
	assert_int_equal(get_1_CALL_XDR_MAX, 28);       /* point */
	assert_int_equal(get_1_REPLY_XDR_MAX, 244);     /* all */
	assert_int_equal(put_1_CALL_XDR_MAX, 16 + 8);   /* name, hyper */
	assert_int_equal(put_1_REPLY_XDR_MAX, 0);       /* void */
	assert_int_equal(list_1_CALL_XDR_MAX, 0);       /* void */
	assert_int_equal(tool_1_CALL_XDR_MAX, 28);      /* the largest call of the version */
}

/* The largest value of `all` encodes to exactly all_XDR_MAX bytes, and no further. */
static void
largest_value_fills_the_bound(void **state)
{
	all a;
	int64_t hs[4];
	opt os[2];
	rc_xdr x;

	(void)state;
	tool_fill_max(&a, hs, os);
	rc_xdrmem_create(&x, static_buf, sizeof static_buf, RC_XDR_ENCODE);
	assert_true(xdr_all(&x, &a));
	assert_int_equal(rc_xdr_getpos(&x), all_XDR_MAX);
	/* one more byte in a string: over name<10>, it does not encode */
	a.o[1].outer_u.ns[2] = "01234567890";
	rc_xdrmem_create(&x, static_buf, sizeof static_buf, RC_XDR_ENCODE);
	assert_false(xdr_all(&x, &a));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(type_bounds),
		cmocka_unit_test(proc_bounds),
		cmocka_unit_test(largest_value_fills_the_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

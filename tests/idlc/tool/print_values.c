/*
 * print_values -- tooling.x's values through the printers idlc --print generated, one JSON
 * value per line on standard output, in the order check_print.py expects them (it parses
 * each line with Python's json module and compares the exact values).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fill.h"

/* line -- end the value just printed (and stop at once if the printer failed). */
static void
line(bool ok)
{
	if (!ok) {
		fprintf(stderr, "print_values: a printer failed\n");
		exit(1);
	}
	putchar('\n');
}

int
main(void)
{
	FILE *f = stdout;
	color c = GREEN;
	name s = "a\"b\\c\n\x01\xc3\xa9\xff/"; /* quote, backslash, control, UTF-8, a lone byte */
	name none = NULL;
	fixed5 f5 = { 0x00, 0x01, (char)0xab, (char)0xcd, (char)0xff };
	var7 v7 = { 3, "\xde\xad\xbe" };
	names ns = { "0123456789", "x", "" };
	int64_t hv[2] = { INT64_MIN, INT64_MAX };
	hypers hs = { 2, hv };
	inner in_red = { RED, { .r = -1 } }, in_blue = { BLUE, { .r = 0 } };
	inner in_green = { GREEN, { .p = { 7, 0, 1e300, false, 0.1f } } };
	outer out_raw = { 9, { .raw = { 1, 2, 3, 4, 5 } } };
	outer out_in = { 1, { .in = { RED, { .r = 42 } } } };
	opt o_null = { NULL };
	point nan_pt = { 0, 0, NAN, false, INFINITY };
	node n3 = { 3, NULL }, n2 = { 2, &n3 }, n1 = { 1, &n2 };
	holder h = { "hi", 5 };
	all a;
	int64_t ah[4];
	opt aos[2];
	put_1_argument pa = { "ab", -5 };
	static const unsigned char one[16] = { 0x3f, 0xff }; /* 1.0 as an XDR quadruple */
	rc_xdr x;

	tool_fill_max(&a, ah, aos);
	rc_xdrmem_create(&x, (void *)one, sizeof one, RC_XDR_DECODE);
	if (!rc_xdr_quadruple(&x, &a.q))
		return 1;

	line(rc_print_point(f, &tool_point));
	line(rc_print_color(f, &c));
	c = (color)7;
	line(rc_print_color(f, &c));
	line(rc_print_name(f, &s));
	line(rc_print_name(f, &none));
	line(rc_print_fixed5(f, &f5));
	line(rc_print_var7(f, &v7));
	line(rc_print_names(f, &ns));
	line(rc_print_hypers(f, &hs));
	line(rc_print_inner(f, &in_red));
	line(rc_print_inner(f, &in_blue));
	line(rc_print_inner(f, &in_green));
	line(rc_print_outer(f, &out_raw));
	line(rc_print_outer(f, &out_in));
	line(rc_print_opt(f, &o_null));
	line(rc_print_point(f, &nan_pt));
	line(rc_print_node(f, &n1));
	line(rc_print_holder(f, &h));
	line(rc_print_all(f, &a));
	/* by procedure: several arguments as an array, void as null, a list result */
	line(tooling_print_args(f, TOOL, TOOLV, PUT, &pa));
	line(tooling_print_args(f, TOOL, TOOLV, GET, &tool_point));
	line(tooling_print_args(f, TOOL, TOOLV, LIST, NULL));
	line(tooling_print_res(f, TOOL, TOOLV, LIST, &n2));
	line(tooling_print_res(f, TOOL, TOOLV, PUT, NULL));
	/* not a procedure of this file: false, nothing printed */
	printf("%s\n", tooling_print_args(f, TOOL, TOOLV, 99, NULL) ? "true" : "false");
	printf("%s\n", tooling_print_res(f, TOOL, 2, GET, NULL) ? "true" : "false");
	return fflush(stdout) == 0 ? 0 : 1;
}

/*
 * rt_case.h -- what the value files of the differential tests share (rt_fill.h, rt4_fill.h):
 * a case is a named value of one type, its XDR routine and a function filling it. The value
 * file defines rt_cases[] with RT_CASE, then includes rt_find.h. The includer defines
 * RT_PROC, its XDR routine type (xdrproc_t or rc_xdrproc).
 */
#ifndef RT_CASE_H
#define RT_CASE_H

#include <stddef.h>
#include <string.h>

typedef struct rt_case {
	const char *name;
	RT_PROC proc;
	void (*fill)(void *obj);
	size_t size;
} rt_case;

#define RT_CASE(name, type) { #name, (RT_PROC)xdr_##type, fill_##name, sizeof(type) }

#define RT_MAXWIRE 65536

#endif

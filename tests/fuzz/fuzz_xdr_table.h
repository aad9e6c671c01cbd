/* The XDR routines of the system's interfaces, for fuzz_xdr_sys (tables generated at build
 * time from idlc's headers by gen_xdr_table.cmake). */
#ifndef FUZZ_XDR_TABLE_H
#define FUZZ_XDR_TABLE_H

#include <stddef.h>

#include <remotecall/xdr.h>

typedef struct fuzz_xdr_type {
	const char *iface; /* "nfs_prot" */
	const char *name;  /* "fattr" */
	rc_xdrproc proc;   /* xdr_fattr */
	size_t size;       /* sizeof(fattr) */
} fuzz_xdr_type;

/* Every interface's table (each ends with a NULL proc); the list ends with NULL. */
extern const fuzz_xdr_type *const fuzz_xdr_all[];

#endif

/*
 * Stand-in for <sys/cdefs.h> (see README in this folder): glibc's, plus FreeBSD's
 * __FBSDID(), which tirpc's crypt.x uses in a %-line and glibc does not define.
 */
#include_next <sys/cdefs.h>
#ifndef __FBSDID
#define __FBSDID(s) struct rc__fbsdid_unused
#endif

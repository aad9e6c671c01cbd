/*
 * Stand-in for Sun's <rpc/types.h> (see README in this folder): only the basic type names
 * the %-lines of rpcsvc/nis.x (and the <rpcsvc/nislib.h> it includes) use. None of the
 * XDR API: the generated code uses remotecall's.
 */
#ifndef RC_SUNSTUB_RPC_TYPES_H
#define RC_SUNSTUB_RPC_TYPES_H
#include <stdint.h>
typedef int32_t bool_t;
typedef unsigned int u_int;
typedef unsigned long u_long;
typedef unsigned short u_short;
typedef unsigned char u_char;
#endif

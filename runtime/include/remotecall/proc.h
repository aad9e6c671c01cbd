/*
 * remotecall -- procedure descriptors.
 *
 * An rc_procinfo describes one remote procedure: its numbers, its name and how to code its
 * argument and result. idlc emits one per procedure (NAME_xdr.c, declared in NAME.h as
 * `extern const rc_procinfo proc_V_info;`); the generic non-blocking and multi-destination
 * calls take one instead of a list of routines, and the server's dispatch table points at them.
 */
#ifndef REMOTECALL_PROC_H
#define REMOTECALL_PROC_H

#include <stddef.h>
#include <stdint.h>

#include <remotecall/xdr.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * RC_DEFAULT_MAX_MESSAGE -- the largest call and reply record a client sends and takes, and
 * the largest request record a server accepts, unless set otherwise (rc_client_set_max_message,
 * rc_server_limits.max_record): a 64 MiB payload (NFS's preferred READ and WRITE size on
 * servers such as nfs-ganesha) plus 64 KiB for its headers. Memory grows with what a peer
 * actually sends; nothing of this size is reserved.
 */
#define RC_DEFAULT_MAX_MESSAGE (((size_t)64 << 20) + ((size_t)64 << 10))

/*
 * rc_procinfo -- one procedure as idlc describes it (proc_V_info): its numbers and name, the
 * XDR routines and C sizes of its argument and result. Static data; client stubs and server
 * tables point to it.
 */
typedef struct rc_procinfo {
	uint32_t prog;      /* program number */
	uint32_t vers;      /* version number */
	uint32_t proc;      /* procedure number */
	const char *name;   /* procedure name as written in the .x file, e.g. "BENCH_ECHO" */
	rc_xdrproc xargs;   /* argument routine; rc_xdr_void when the argument is void */
	size_t args_size;   /* sizeof the argument type; 0 when void */
	rc_xdrproc xres;    /* result routine; rc_xdr_void when the result is void */
	size_t res_size;    /* sizeof the result type; 0 when void */
} rc_procinfo;

#ifdef __cplusplus
}
#endif
#endif

/*
 * remotecall -- the server.
 *
 * An rc_server listens on URIs of the client's form (port 0 picks a free port), dispatches
 * calls to registered (program, version) tables, and replies.
 *
 * A registration is an rc_svc_prog: a table of rc_svc_proc, one per procedure, in any order.
 * idlc emits one per version (NAME_svc.c) together with proc_V_register(); the user writes
 * the procedure bodies it calls.
 */
#ifndef REMOTECALL_SERVER_H
#define REMOTECALL_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <remotecall/proc.h>
#include <remotecall/status.h>
#include <remotecall/xdr.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rc_server rc_server;

/* One call being served; valid only during the procedure it is passed to. */
typedef struct rc_svc_req rc_svc_req;

/*
 * A server routine. args points to the decoded argument (NULL when void), res to a zeroed
 * result object (NULL when void). Return true to send *res as the reply, false to reply
 * SYSTEM_ERR. After the reply the server frees, with rc_xdr_free, what decoding allocated in
 * *args and whatever the routine left allocated in *res (so a routine returns malloc'd data).
 */
typedef bool (*rc_svc_fn)(void *args, void *res, rc_svc_req *req);

typedef struct rc_svc_proc {
	const rc_procinfo *info; /* numbers and routines of the procedure */
	rc_svc_fn fn;            /* the routine that serves it */
} rc_svc_proc;

typedef struct rc_svc_prog {
	uint32_t prog;
	uint32_t vers;
	size_t nprocs;
	const rc_svc_proc *procs; /* nprocs entries, any order, distinct procedure numbers */
} rc_svc_prog;

/*
 * rc_server_register -- serve def on this server; ctx is handed to every call of it (see
 * rc_svc_req_context). def must outlive the server (idlc's tables are static). Returns RC_OK,
 * RC_INVAL (NULL def, duplicate procedure numbers, or (prog, vers) already registered),
 * RC_NOMEM.
 */
rc_status rc_server_register(rc_server *srv, const rc_svc_prog *def, void *ctx);

/* rc_svc_req_context -- the ctx given to rc_server_register for this call's program. */
void *rc_svc_req_context(const rc_svc_req *req);

/* rc_svc_req_proc -- the descriptor of the procedure being served. */
const rc_procinfo *rc_svc_req_proc(const rc_svc_req *req);

#ifdef __cplusplus
}
#endif
#endif

/*
 * Stand-in for Sun's <rpc/auth_sys.h> (see README in this folder), for world/nfs4_prot.x's
 * %-lines: struct authsys_parms with libtirpc's member names and the prototype of its XDR
 * routine, which a remotecall program supplies (rt/authsys_rc.c does for the tests).
 */
#ifndef RC_SUNSTUB_RPC_AUTH_SYS_H
#define RC_SUNSTUB_RPC_AUTH_SYS_H
#include <remotecall/xdr.h>
struct authsys_parms {
	unsigned long aup_time;
	char *aup_machname;
	unsigned int aup_uid;
	unsigned int aup_gid;
	unsigned int aup_len;
	unsigned int *aup_gids;
};
bool xdr_authsys_parms(rc_xdr *xdrs, struct authsys_parms *p);
#endif

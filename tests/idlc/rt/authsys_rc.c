/*
 * authsys_rc -- xdr_authsys_parms for remotecall, the routine of the type world/nfs4_prot.x
 * takes from <rpc/auth_sys.h> (../sunstub/rpc/auth_sys.h): what a program using that file
 * supplies. The same bytes as libtirpc's: time, machine name (at most 255 bytes), uid, gid,
 * up to 16 gids.
 */
#include <rpc/auth_sys.h>

/* xdr_authsys_parms -- code *p; what a decode allocated is released by RC_XDR_FREE. */
bool
xdr_authsys_parms(rc_xdr *xdrs, struct authsys_parms *p)
{
	return rc_xdr_u_long(xdrs, &p->aup_time) && rc_xdr_string(xdrs, &p->aup_machname, 255) &&
	       rc_xdr_u_int(xdrs, &p->aup_uid) && rc_xdr_u_int(xdrs, &p->aup_gid) &&
	       rc_xdr_array(xdrs, &p->aup_gids, &p->aup_len, 16, sizeof(unsigned int),
	                    (rc_xdrproc)rc_xdr_u_int);
}

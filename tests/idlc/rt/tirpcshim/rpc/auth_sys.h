/*
 * <rpc/auth_sys.h> for rt_tirpc4: world/nfs4_prot.x's %-lines include it (Solaris and glibc
 * had it); libtirpc declares the same struct in <rpc/auth_unix.h> and names its routine
 * xdr_authunix_parms.
 */
#include <rpc/auth_unix.h>
#define xdr_authsys_parms xdr_authunix_parms

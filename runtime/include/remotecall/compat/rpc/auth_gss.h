/* <rpc/auth_gss.h> for programs ported from libtirpc's RPCSEC_GSS: remotecall's compatibility
 * names (<remotecall/sunrpc_gss.h>). Put include/remotecall/compat on the include path to use it. */
#include <remotecall/sunrpc_gss.h>

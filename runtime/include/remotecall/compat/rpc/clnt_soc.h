/* <rpc/clnt_soc.h> for programs ported from Sun RPC: remotecall's compatibility names
 * (<remotecall/sunrpc.h>). Put include/remotecall/compat on the include path to use it. */
#include <remotecall/sunrpc.h>

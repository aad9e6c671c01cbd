/* <netconfig.h> for programs ported from TI-RPC: remotecall's compatibility names
 * (<remotecall/sunrpc.h>: struct netconfig, getnetconfigent). */
#include <remotecall/sunrpc.h>

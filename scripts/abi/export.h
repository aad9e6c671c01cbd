/* export.h -- forced (-include) into every source of libremotecall.so, which is compiled with
 * -fvisibility=hidden: what the public headers declare is compiled with default visibility,
 * everything else (the rc__ internals) stays inside the library. remotecall.map then names the
 * exported symbols' version node. The static archive does not use this file.
 * <remotecall/sunrpc.h> declares its own struct rc_client, so only the two files that define
 * the Sun API (sunrpc.c, sunrpc_svc.c, sunrpc_gss.c: RC__EXPORT_SUNRPC) see it here, with the
 * RPCSEC_GSS names of <remotecall/sunrpc_gss.h>. */
#pragma GCC visibility push(default)
#include <remotecall/remotecall.h>
#include <remotecall/tls.h>
#ifdef RC__EXPORT_SUNRPC
#include <remotecall/sunrpc.h>
#include <remotecall/sunrpc_gss.h>
#endif
#pragma GCC visibility pop

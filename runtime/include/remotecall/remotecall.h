/* remotecall -- everything: XDR, status codes, client and server. */
#ifndef REMOTECALL_REMOTECALL_H
#define REMOTECALL_REMOTECALL_H

#include <remotecall/status.h>
#include <remotecall/xdr.h>
#include <remotecall/proc.h>
#include <remotecall/client.h>
#include <remotecall/server.h>
#include <remotecall/trace.h>

#endif

/*
 * remotecall -- the client.
 *
 * An rc_client is a long-lived handle on one (program, version) at one server address. Create
 * it from a URI:
 *
 *   udp://HOST:PORT   tcp://HOST:PORT   unix:/PATH   inproc:NAME
 *   udp://[::1]:PORT  tcp://HOST        (no port: ask HOST's rpcbind, port 111)
 *
 * and call procedures through the stubs idlc generates (proc_V(client, &arg, &res)), which
 * call rc_call(). A client may be shared by threads.
 */
#ifndef REMOTECALL_CLIENT_H
#define REMOTECALL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <remotecall/proc.h>
#include <remotecall/status.h>
#include <remotecall/xdr.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rc_client rc_client;

/*
 * rc_client_create -- a client for program prog, version vers at uri. On RC_OK *out is a new
 * client the caller destroys with rc_client_destroy(); on failure *out is NULL and nothing
 * needs freeing. Returns RC_UNKNOWNPROTO (bad scheme), RC_UNKNOWNADDR (malformed URI or
 * address), RC_UNKNOWNHOST, RC_PROGNOTREGISTERED / RC_PMAPFAILURE (rpcbind look-up),
 * RC_CANTSEND (connect failed), RC_NOMEM, RC_INVAL (NULL arguments).
 */
rc_status rc_client_create(rc_client **out, const char *uri, uint32_t prog, uint32_t vers);

/* rc_client_destroy -- close the client and free it. NULL is ignored. */
void rc_client_destroy(rc_client *clnt);

/*
 * rc_call -- the generic blocking call: encode args with xargs, send procedure proc, wait for
 * the reply within the client's timeout (retransmitting on UDP with the same xid), decode the
 * result into res with xres. A result that decoding allocated belongs to the caller, who
 * releases it with rc_xdr_free(xres, res); after a failure res may hold partial data, which
 * rc_xdr_free also releases. Returns RC_OK or the failure (RC_TIMEDOUT, RC_PROCUNAVAIL, ...);
 * rc_client_error() tells more.
 */
rc_status rc_call(rc_client *clnt, uint32_t proc, rc_xdrproc xargs, const void *args,
                  rc_xdrproc xres, void *res);

#ifdef __cplusplus
}
#endif
#endif

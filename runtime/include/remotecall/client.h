/*
 * remotecall -- the client.
 *
 * An rc_client is a long-lived handle on one (program, version) at one server address. Create
 * it from a URI:
 *
 *   udp://HOST:PORT   tcp://HOST:PORT   unix:/PATH   inproc:NAME
 *   udp://[::1]:PORT  tcp://HOST        (no port: ask HOST's rpcbind, port 111)
 *   tcp://HOST:PORT?tls=required&ca=ca.pem   (RPC-over-TLS: see rc_client_create_tls)
 *   quic://HOST:PORT?ca=ca.pem               (RPC-over-QUIC; quic://HOST: its rpcbind's
 *                                             netid quic/quic6 entry, read with DUMP)
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
#include <remotecall/tls.h>
#include <remotecall/trace.h>
#include <remotecall/xdr.h>

#ifdef __cplusplus
extern "C" {
#endif

/* rc_client -- a client handle (opaque): rc_client_create to make one, rc_client_destroy. */
typedef struct rc_client rc_client;

/*
 * rc_client_create -- a client for program prog, version vers at uri. On RC_OK *out is a new
 * client the caller destroys with rc_client_destroy(); on failure *out is NULL and nothing
 * needs freeing. Returns RC_UNKNOWNPROTO (bad scheme), RC_UNKNOWNADDR (malformed URI or
 * address), RC_UNKNOWNHOST, RC_PROGNOTREGISTERED / RC_PMAPFAILURE (rpcbind look-up),
 * RC_CANTSEND (connect failed), RC_NOMEM, RC_INVAL (NULL arguments). rc_client_create_ex
 * (below) also says why: the errno, and which rpcbind version the look-up asked.
 */
rc_status rc_client_create(rc_client **out, const char *uri, uint32_t prog, uint32_t vers);

/*
 * rc_client_destroy -- close the client and free it. NULL is ignored. Calls still in flight
 * complete with RC_CANCELLED first: started calls with a callback have it run (from this
 * function) and are freed after it; a started call without a callback stays valid, complete
 * with RC_CANCELLED (or the status it had), until rc_async_release() frees it -- the only use
 * of such a handle after its client is gone besides rc_async_status(), rc_async_wait()
 * (which return its status at once) and rc_async_cancel() (no effect). No other thread may
 * use the client, or its handles, while it is destroyed.
 */
void rc_client_destroy(rc_client *clnt);

/*
 * rc_call -- the generic blocking call: encode args with xargs, send procedure proc, wait for
 * the reply within the client's timeout (retransmitting on UDP with the same xid), decode the
 * result into res with xres. A result that decoding allocated belongs to the caller, who
 * releases it with rc_xdr_free(xres, res); after a failure res may hold partial data, which
 * rc_xdr_free also releases. Returns RC_OK or the failure (RC_TIMEDOUT, RC_PROCUNAVAIL, ...);
 * rc_client_geterr() tells more. A reply that is not a well-formed RPC reply fails the call
 * with RC_BADREPLY on a stream (a datagram client ignores it and keeps waiting).
 */
rc_status rc_call(rc_client *clnt, uint32_t proc, rc_xdrproc xargs, const void *args,
                  rc_xdrproc xres, void *res);

/* rc_callopts -- options of one call (rc_call_ex, rc_call_start_ex); zero-initialise it. */
typedef struct rc_callopts {
	/* The total time this call may take -- connecting, sending, retransmissions and the
	 * reply -- in ms (0: the client's timeout, rc_client_set_timeout). At most
	 * RC_MAX_TIMEOUT_MS. */
	uint32_t timeout_ms;
} rc_callopts;

#define RC_MAX_TIMEOUT_MS (24u * 3600 * 1000) /* one day */

/*
 * rc_call_ex -- rc_call with options for this call only (opts NULL: as rc_call). Same
 * ownership and returns as rc_call, plus RC_INVAL for a timeout over RC_MAX_TIMEOUT_MS.
 */
rc_status rc_call_ex(rc_client *clnt, uint32_t proc, rc_xdrproc xargs, const void *args,
                     rc_xdrproc xres, void *res, const rc_callopts *opts);

/* ---- options ----------------------------------------------------------------------------- */

#define RC_DEFAULT_TIMEOUT_MS 25000u /* total time a blocking call may take (Sun's 25 s) */
#define RC_DEFAULT_RETRY_MS 500u     /* UDP: first retransmission; doubles up to 4 s */

/*
 * rc_client_set_timeout -- the total time one call may take, retransmissions included
 * (0: RC_DEFAULT_TIMEOUT_MS). Returns RC_OK or RC_INVAL. On UDP, as Sun's clnt_udp counts its
 * waits, a blocking call's first wait for a reply counts in full when it runs out; one that
 * ends early (a signal, a late reply to an earlier call) is not counted, so such a call may
 * run up to one retry interval past its timeout.
 */
rc_status rc_client_set_timeout(rc_client *clnt, uint32_t total_ms);

/*
 * rc_client_set_resend -- stream clients (TCP, TLS, unix): whether a blocking call (rc_call,
 * idlc's stubs) whose connection breaks under it -- RC_CANTRECV: sent, no reply; RC_CANTSEND:
 * the send found it broken -- is sent again, as the Linux NFS client does: the client
 * reconnects and sends the same call with the SAME xid (the same arguments and credential;
 * a flavor that numbers its calls gives it a fresh number), and again, on that connection,
 * each time no reply came within the retry interval (rc_client_set_retry's, doubling: a
 * server drops the copy of a call still running), up to 8 sendings within one timeout
 * (rc_client_set_timeout) from the break -- so such a call may take up to twice its timeout
 * -- a failed reconnection waiting 50 ms, doubling, before the next. A server that
 * caches stream calls by the client's address without its port (remotecall's
 * rc_server_set_drc_streams, the Linux NFS server) then answers a call that already ran
 * from its cache, so together they run a call at most once across reconnects -- as long as
 * the server still remembers the call (drc_ttl_ms) and the client reconnects from the same
 * address. Without such a server the call may run twice: off by default. Calls started with
 * rc_call_start still end with RC_CANTRECV when their connection breaks. Returns RC_OK;
 * RC_INVAL (NULL clnt); RC_NOTSUPP (a datagram client: its retransmissions keep the xid
 * anyway).
 */
rc_status rc_client_set_resend(rc_client *clnt, bool on);

/*
 * rc_client_set_retry -- UDP only: wait this long for a reply before retransmitting the call
 * with the same xid; the wait doubles after each retransmission, up to 4 s, always within the
 * call's total timeout (0: RC_DEFAULT_RETRY_MS). Returns RC_OK or RC_INVAL.
 */
rc_status rc_client_set_retry(rc_client *clnt, uint32_t initial_ms);

/* rc_client_get_timeout / rc_client_get_retry -- the client's total call timeout and first
 * UDP retransmission interval, in ms (0 for a NULL client). */
uint32_t rc_client_get_timeout(const rc_client *clnt);
uint32_t rc_client_get_retry(const rc_client *clnt);

/*
 * rc_client_set_max_message -- the largest call record this client sends and the largest reply
 * record it takes, in bytes (0: RC_DEFAULT_MAX_MESSAGE, a 64 MiB payload plus its headers;
 * from 1 KiB to 4 GiB). A call over it fails with RC_MSGTOOLARGE before anything is sent; a
 * reply over it fails its call with RC_MSGTOOLARGE and, on a stream, closes the connection
 * (the next call reconnects). Memory is taken as a message comes, never reserved for the cap.
 * Datagrams stay within 65,507 bytes whatever this says. Set it while no call is in flight on
 * the client. Returns RC_OK, or RC_INVAL (NULL client, a size out of range).
 */
rc_status rc_client_set_max_message(rc_client *clnt, size_t bytes);

/* rc_client_get_max_message -- the client's cap on a call or reply record (0 for NULL). */
size_t rc_client_get_max_message(const rc_client *clnt);

/*
 * rc_client_set_failover -- opt-in (on: true), for a stream client of servers that drain
 * (rc_server_drain), e.g. behind a load balancer: each connection it opens first asks the
 * server to tell it when it drains (one round trip, before the connection carries calls).
 * When a server drains, it answers every call it ran and then says so; this client then
 * sends the calls still without a reply -- which that server never ran -- again, with new
 * xids, on a new connection (through a balancer, to another server), inside each call's own
 * deadline. What is guaranteed (docs/load-balancing.md, "Drain and failover"): no call runs
 * twice because of the failover; a call resent after a drain's notice completes as any call
 * does. What is not: a call is resent only on that notice -- a server that closes without it
 * (a crash, an idle close, another implementation, a drain's timeout) fails the calls in
 * flight as without the option, since it may have run them; calls with credentials that
 * seal each message (RPCSEC_GSS) are not resent (they fail, RC_CANTRECV); replies come in
 * the order calls are answered, as ever. Costs, while on: started calls keep a copy of their
 * message until they complete, and blocking calls take the general path (no fast step). Set
 * it before the first call. Returns RC_OK; RC_INVAL for a NULL client; RC_NOTSUPP for a
 * datagram or in-process client (a datagram is retransmitted anyway).
 */
rc_status rc_client_set_failover(rc_client *clnt, bool on);

/*
 * rc_client_set_spin -- opt-in: before blocking for a reply, poll the socket for up to spin_us
 * microseconds (0, the default, blocks at once). Trades CPU for latency. Returns RC_OK,
 * RC_INVAL (over one second), RC_NOTSUPP (an in-process client: nothing to wait for).
 */
rc_status rc_client_set_spin(rc_client *clnt, uint32_t spin_us);

/*
 * rc_client_set_trace -- from now on call fn(arg, step, xid, ns) at each step of every call
 * this client makes (<remotecall/trace.h>: RC_TP_CALL_BEGIN .. RC_TP_DECODED); fn NULL turns
 * tracing off (the default). Set it while no call is in flight on the client. Nothing is
 * copied or allocated; arg stays the caller's. Returns RC_OK, or RC_INVAL for a NULL client.
 */
rc_status rc_client_set_trace(rc_client *clnt, rc_trace_fn fn, void *arg);

/*
 * rc_client_set_auth_sys -- send AUTH_SYS credentials (RFC 5531 section 14) with every call
 * from now on: machine name (at most 255 bytes), uid, gid and up to 16 supplementary gids,
 * copied. rc_client_set_auth_none() goes back to AUTH_NONE. Returns RC_OK or RC_INVAL.
 */
rc_status rc_client_set_auth_sys(rc_client *clnt, const char *machine, uint32_t uid,
                                 uint32_t gid, const uint32_t *gids, uint32_t ngids);
rc_status rc_client_set_auth_none(rc_client *clnt);

/* rc_gss_service -- what RPCSEC_GSS protects: the caller's identity only (NONE), the
 * arguments and results against change (INTEGRITY), or against change and reading (PRIVACY). */
typedef enum rc_gss_service { RC_GSS_NONE = 1, RC_GSS_INTEGRITY = 2, RC_GSS_PRIVACY = 3 } rc_gss_service;

/*
 * rc_client_set_auth_gss -- RPCSEC_GSS (RFC 2203) with Kerberos v5: establish a security
 * context with the server target, a host-based service name ("nfs@server"), as the principal
 * of the default credential cache (KRB5CCNAME; kinit first), with NULL calls on clnt now, and
 * send every later call under it with service: each transmission numbered afresh, its header
 * signed, its arguments and results protected as service says, and every reply's verifier
 * checked against the numbers its call went out with. Replaces the client's credentials (as
 * rc_client_set_auth_sys does); set it before calls, not during them. Returns RC_OK; RC_INVAL
 * (NULL, a service out of range); RC_NOMEM; RC_AUTHERROR when GSS or the server refused the
 * context (err, if not NULL, says why in GSS's words: no ticket, unknown server principal,
 * ...); the status of a NULL call that failed (RC_TIMEDOUT, RC_CANTRECV, ...). On failure the
 * client is left with AUTH_NONE. A call the server refuses because it lost or expired the
 * context (RPCSEC_GSS_CREDPROBLEM / CTXPROBLEM, auth_stat 13 / 14) makes the context again
 * and goes again -- at most twice, as Linux's client, since the server may push the new
 * context out before the retry is served: a blocking call on its own thread, a started call
 * when its client is next driven (rc_async_wait, rc_client_advance: that thread makes the
 * context); replies to calls sent under the context before a renewal are still checked with
 * that context's keys. Calls in
 * flight under the context never outnumber the server's sequence window (its INIT reply: 128
 * for remotecall, 5 for libtirpc): a call beyond it waits before it is numbered -- a started
 * one inside rc_call_start -- reading replies and serving the peer's calls (rc_client_serve)
 * meanwhile, until its deadline: then RC_TIMEDOUT, its detail naming the window.
 */
rc_status rc_client_set_auth_gss(rc_client *clnt, const char *target, rc_gss_service service,
                                 rc_error *err);

/* ---- errors in detail ----------------------------------------------------------------------- */

/* rc_error and rc_error_format are in <remotecall/status.h>. */

/*
 * rc_client_geterr -- details of the last call the calling thread made on clnt (status RC_OK
 * if it succeeded or none was made); in a started call's completion callback, that call's
 * (rc_async_geterr says the same of any completed handle). Thread-safe: each thread sees its
 * own calls.
 */
void rc_client_geterr(const rc_client *clnt, rc_error *err);


/*
 * rc_client_create_ex -- rc_client_create, filling *err (if not NULL) whatever happens; its
 * status is what the function returns. A URI with a port: a failed connect's errno is in
 * sys_errno. A udp/tcp URI without one asks HOST's rpcbind, port 111, over the URI's
 * transport: RPCBIND version 4 GETADDR, then 3, then PMAP version 2 GETPORT, going down only
 * while the one asked answers "program version mismatch" or "procedure unavailable"; any
 * other failure ends the look-up. rpcbind_vers is then the version asked last and
 * rpcbind_status how that call ended: RC_OK when rpcbind answered (status RC_OK, or
 * RC_PROGNOTREGISTERED: it knows no address for prog, vers on that transport), else the call's
 * failure (RC_CANTRECV, RC_CANTSEND, RC_TIMEDOUT, ...) with its errno in sys_errno (e.g.
 * ECONNREFUSED: nothing listens on port 111) and status RC_PMAPFAILURE. rc_error_format
 * prints it all ("port mapper (rpcbind) failure: Connection refused (rpcbind version 4: can't
 * receive reply)"). A connect that fails (RC_CANTSEND: nothing was sent) sets err->low to 1
 * and reads "can't connect: Connection refused"; when rpcbind gave the port, the detail names
 * it ("(port 40321, which rpcbind version 4 gave for the program: nothing listens there)":
 * a registration left by a server that is gone). Ownership and returns as rc_client_create;
 * err stays the caller's.
 */
rc_status rc_client_create_ex(rc_client **out, const char *uri, uint32_t prog, uint32_t vers,
                              rc_error *err);

/*
 * rc_client_create_tls -- rc_client_create_ex with RPC-over-TLS settings (RFC 9289;
 * <remotecall/tls.h>). The URI's query may carry them too -- tls=off|opportunistic|required,
 * ca=FILE, cadir=DIR, cert=FILE, key=FILE, name=NAME (%XX escapes allowed) -- and the
 * non-NULL (policy: non-off) fields of tls (NULL: none) override the query's. With a policy
 * other than off, a tcp client probes the server on every connection (creation and each
 * reconnection) and, when the server offers TLS, runs a TLS 1.3 handshake (ALPN "sunrpc"),
 * verifying the server's certificate against the CA and the name (default: the URI's host),
 * all within the client's timeout; every call then travels under TLS. A server without TLS:
 * opportunistic goes on in plaintext, required fails with RC_TLSUNAVAIL and sends nothing
 * else. UDP never uses TLS (opportunistic: plaintext; required: RC_NOTSUPP).
 * Ownership as rc_client_create (the strings of tls are read now, not kept). Returns those of
 * rc_client_create_ex, plus RC_TLSUNAVAIL, RC_TLSFAILED (handshake or certificate check;
 * err->detail has OpenSSL's reason), RC_INVAL (unreadable CA, certificate or key file: detail
 * names the file and what is wrong with it -- missing, not PEM, a key given as the
 * certificate, a key that is not the certificate's), RC_NOTSUPP, RC_UNKNOWNADDR (a bad query). A server that refuses the client's
 * certificate may let the handshake finish (TLS 1.3) and fail the first call instead: that
 * call then ends with RC_TLSFAILED and the reason in rc_client_geterr's detail.
 */
rc_status rc_client_create_tls(rc_client **out, const char *uri, uint32_t prog, uint32_t vers,
                               const rc_tls_client_opts *tls, rc_error *err);

/* ---- the back channel: calls from the server on the client's connection -------------------- */

struct rc_svc_prog; /* <remotecall/server.h> */

/*
 * rc_client_serve -- answer calls to def (a program and version, as rc_server_register takes
 * it; idlc's tables) that the peer sends on this client's stream connection (TCP, TLS, Unix):
 * calls in both directions on one connection (RFC 8167), the client needs no listening socket.
 * ctx is handed to def's handlers. Several programs may be registered; register them before
 * starting the calls that may make the peer call back (registration is not synchronised with
 * serving). A call to a program not registered gets PROG_UNAVAIL -- a client that serves
 * nothing answers every incoming call so. A client keeps up to 256 incoming calls waiting to be
 * served; more are dropped (the peer's call times out).
 * Who runs the handlers: the thread that reads the peer's call, without the client's locks --
 * one in rc_call (it serves while it waits for its own reply), rc_async_wait, or
 * rc_client_advance (when idle the client's descriptor, from rc_client_pollinfo, asks for
 * POLLIN while programs are registered, so the application's loop calls rc_client_advance when
 * a call arrives). A handler may call the peer again on this same client (blocking or
 * started): it does not deadlock, and callbacks arriving meanwhile are served by the nested
 * call. rc_svc_req_defer returns RC_NOTSUPP in a client's handlers (answer before returning).
 * Returns RC_OK; RC_INVAL (clnt or def NULL, or def invalid as rc_server_register says);
 * RC_PROCUNAVAIL (def's routines are not linked into this program, as rc_server_register);
 * RC_NOTSUPP on a datagram or in-process client (the back channel needs a stream);
 * RC_NOMEM. Nothing is owned by the client but its copy of the registration.
 */
rc_status rc_client_serve(rc_client *clnt, const struct rc_svc_prog *def, void *ctx);

/* rc_client_tls -- whether the client's current connection runs under TLS (false for a
 * plaintext fallback, UDP, or while disconnected). */
bool rc_client_tls(rc_client *clnt);

/* ---- driving calls from the application's own loop --------------------------------------- */

/* rc_async -- a started call's handle (rc_call_start, idlc's proc_V_async): "async" in a name
 * is the older word for a started call, kept so that no program breaks. */
typedef struct rc_async rc_async;

/*
 * Completion callback: runs exactly once per started call, from rc_client_advance() or
 * rc_async_wait() (never inside rc_call_start), with the call's final status (RC_OK,
 * RC_TIMEDOUT, RC_CANCELLED, ...); its detail is rc_async_geterr(call) -- or
 * rc_client_geterr on its client, in the callback. The handle is freed when the callback
 * returns.
 */
typedef void (*rc_async_cb)(rc_async *call, rc_status st, void *udata);

/*
 * rc_call_start -- encode and send a call without waiting for its reply. The reply is decoded
 * into res (caller-owned; it must stay valid until the call completes) with xres.
 * With cb: the call completes through cb, and the handle is freed after cb returns; *out (if
 * not NULL) receives the handle, usable until then (e.g. to cancel).
 * Without cb: *out receives the handle; poll it with rc_async_status()/rc_async_wait() and
 * free it with rc_async_release().
 * The call never waits for the socket: on a stream, what the socket does not take at once waits
 * in the client's output queue (rc_client_pollinfo then asks for POLLOUT, and
 * rc_client_advance or any wait sends it); only past 4 MiB queued does a start block.
 * Returns RC_OK, or an error (RC_CANTENCODEARGS, RC_MSGTOOLARGE, RC_CANTSEND, RC_TIMEDOUT
 * (reconnecting took the call's whole time), RC_NOMEM, RC_INVAL); on error no handle exists
 * and cb will never run. A handle without callback outlives its client: see
 * rc_client_destroy.
 */
rc_status rc_call_start(rc_client *clnt, uint32_t proc, rc_xdrproc xargs, const void *args,
                        rc_xdrproc xres, void *res, rc_async_cb cb, void *udata,
                        rc_async **out);

/* rc_call_start_ex -- rc_call_start with options for this call only (opts NULL: as
 * rc_call_start); its deadline counts from now. Same ownership and returns, plus RC_INVAL for
 * a timeout over RC_MAX_TIMEOUT_MS. */
rc_status rc_call_start_ex(rc_client *clnt, uint32_t proc, rc_xdrproc xargs, const void *args,
                           rc_xdrproc xres, void *res, const rc_callopts *opts,
                           rc_async_cb cb, void *udata, rc_async **out);

/* rc_async_status -- RC_INPROGRESS while the call is in flight, then its final status. */
rc_status rc_async_status(const rc_async *call);

/*
 * rc_async_geterr -- the detail of a started call's failure, as rc_client_geterr gives a
 * blocking call's (auth_stat, errno, the transport's or GSS's words, which size limit):
 * status RC_OK and nothing else for a call that succeeded, RC_INPROGRESS while it is in
 * flight, RC_INVAL for a NULL call. Use it in the completion callback (the handle is valid
 * until the callback returns) or before rc_async_release. In a callback, rc_client_geterr on
 * the call's client says the same (it is set for the calling thread before the callback
 * runs). err stays the caller's.
 */
void rc_async_geterr(const rc_async *call, rc_error *err);

/*
 * rc_async_wait -- block (driving the client) until call completes or timeout_ms passes
 * (negative: no limit but the call's own deadline). Returns the call's final status, or
 * RC_INPROGRESS if timeout_ms passed first.
 */
rc_status rc_async_wait(rc_async *call, int timeout_ms);

/* rc_async_cancel -- complete the call now with RC_CANCELLED (no effect if already done); a
 * reply arriving later is discarded. */
void rc_async_cancel(rc_async *call);

/* rc_async_release -- free a handle started without a callback; cancels it if in flight. */
void rc_async_release(rc_async *call);

/*
 * rc_client_pollinfo -- what the application's loop should wait for: *fd (or -1 when nothing
 * needs waiting on a descriptor), *events (POLLIN and/or POLLOUT) and *timeout_ms until the
 * next deadline (retransmission or expiry; -1: none). Returns RC_OK.
 */
rc_status rc_client_pollinfo(rc_client *clnt, int *fd, short *events, int *timeout_ms);

/*
 * rc_client_advance -- do what is ready without blocking: read replies, complete their calls,
 * retransmit or expire calls whose time has come, send queued calls as far as the socket
 * takes them. revents are poll()'s results for fd (0 if only the timeout passed). Runs
 * completion callbacks; calls they start on a stream are gathered and leave in one write when
 * they return. Never blocks. Returns RC_OK, or the transport error that failed every call in
 * flight (they completed with it).
 */
rc_status rc_client_advance(rc_client *clnt, short revents);

/* rc_client_inflight -- calls started and not yet completed. */
size_t rc_client_inflight(rc_client *clnt);

/* ---- one call to many servers (MultiRPC, PARPC) ----------------------------------------- */

/*
 * Handler of a multi-destination call. It runs at most once per destination, in the order the
 * outcomes arrive, from the thread that called rc_multicall: index is the destination's place in
 * the clients array, st its status (RC_OK, RC_TIMEDOUT, RC_PROGUNAVAIL, ...), res its decoded
 * result when st is RC_OK (NULL otherwise). The result belongs to the call and is released
 * (rc_xdr_free) when the handler returns: copy what you keep. Return true to go on, false to
 * stop the whole call (PARPC's `break`): the destinations not yet heard from are abandoned,
 * their handler never runs, and their late replies are discarded.
 */
typedef bool (*rc_multi_fn)(size_t index, rc_status st, void *res, void *udata);

/*
 * rc_multicall -- call procedure proc on every client in clients[0..n) at once with the same
 * arguments, encoded once, and run handler for each destination as its reply or failure
 * arrives. One destination's failure never ends the others. timeout_ms bounds the whole call
 * (negative: only each client's own timeout): when it passes, every destination not yet heard
 * from gets RC_TIMEDOUT. The clients may use different transports; the same client may appear
 * more than once. While the call runs, no other thread may use these clients.
 * Returns the batch's status: RC_OK when every destination was handled (each may still have
 * failed: see the handler's st), RC_CANCELLED when the handler stopped the call, RC_INVAL (NULL
 * or empty arguments, res_size 0 with a non-void xres), RC_CANTENCODEARGS, RC_NOMEM.
 */
rc_status rc_multicall(rc_client *const *clients, size_t n, uint32_t proc, rc_xdrproc xargs,
                       const void *args, rc_xdrproc xres, size_t res_size, rc_multi_fn handler,
                       void *udata, int timeout_ms);

/* ---- broadcast -------------------------------------------------------------------------------- */

struct sockaddr;

/*
 * rc_broadcast_fn -- rc_broadcast's handler, called once per server that answered with
 * success: res points to its decoded result (rc_broadcast's object of res_size bytes; what
 * decoding allocated is freed after the handler returns -- copy what you keep), from and
 * fromlen to its address (a struct sockaddr_in or sockaddr_in6). udata is rc_broadcast's.
 * Return true to stop collecting.
 */
typedef bool (*rc_broadcast_fn)(void *udata, const void *res, const struct sockaddr *from,
                                unsigned fromlen);

/*
 * rc_broadcast -- one UDP call of procedure proc of (prog, vers) to a broadcast or multicast
 * address, uri "udp://ADDR:PORT" (the port is required: the servers' own), with *args coded by
 * xargs and AUTH_NONE credentials. Each successful reply (its result decoded by xres into a
 * zeroed object of res_size bytes) goes to fn, on the calling thread, at most once per
 * responder address; error replies (program unavailable, ...), replies to other calls and
 * results that do not decode are ignored. The call is sent again after 4 s, then 6, 8, ...
 * 14 s (clnt_broadcast's rhythm) with the same xid until timeout_ms have passed or fn returns
 * true. Nothing is left allocated. Returns RC_OK (fn stopped it), RC_TIMEDOUT (the deadline
 * passed, however many replies came: count them in udata), RC_INVAL (a NULL uri, routine or
 * fn), RC_UNKNOWNPROTO (not udp), RC_UNKNOWNADDR (malformed, no port, a ?query: none is
 * taken), RC_UNKNOWNHOST,
 * RC_CANTENCODEARGS, RC_CANTSEND / RC_CANTRECV (errno kept), RC_NOMEM.
 */
rc_status rc_broadcast(const char *uri, uint32_t prog, uint32_t vers, uint32_t proc,
                       rc_xdrproc xargs, const void *args, rc_xdrproc xres, size_t res_size,
                       rc_broadcast_fn fn, void *udata, uint32_t timeout_ms);

#ifdef __cplusplus
}
#endif
#endif

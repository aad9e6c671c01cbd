/*
 * remotecall -- the server.
 *
 * An rc_server listens on URIs of the client's form (port 0 picks a free port), dispatches
 * calls to registered (program, version) tables, and replies.
 *
 * A registration is an rc_svc_prog: a table of rc_svc_proc, one per procedure, in any order.
 * idlc emits one per version (NAME_svc.c) together with prog_V_register(); the user writes
 * the procedure bodies it calls.
 */
#ifndef REMOTECALL_SERVER_H
#define REMOTECALL_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <remotecall/client.h> /* rc_client, rc_gss_service */
#include <remotecall/proc.h>
#include <remotecall/status.h>
#include <remotecall/tls.h>
#include <remotecall/trace.h>
#include <remotecall/xdr.h>

#ifdef __cplusplus
extern "C" {
#endif

/* rc_server -- a server (opaque): rc_server_create to make one, rc_server_destroy. */
typedef struct rc_server rc_server;

/* AUTH_SYS credentials as the caller sent them (RFC 5531 section 14). */
typedef struct rc_authsys {
	uint32_t stamp;
	char machine[256]; /* NUL-terminated */
	uint32_t uid;
	uint32_t gid;
	uint32_t ngids;
	uint32_t gids[16];
} rc_authsys;

/* rc_opaque_auth -- a credential as it came on the wire (Sun's struct opaque_auth). */
typedef struct rc_opaque_auth {
	uint32_t oa_flavor;   /* RC_AUTH_NONE, RC_AUTH_SYS, ... */
	char *oa_base;        /* its body, inside the request (NULL when empty) */
	unsigned oa_length;   /* the body's length */
} rc_opaque_auth;

/* rc_svc_unixcred -- AUTH_SYS credentials in Sun's shape (struct authunix_parms). */
typedef struct rc_svc_unixcred {
	unsigned long aup_time;
	char *aup_machname;
	uint32_t aup_uid;
	uint32_t aup_gid;
	unsigned aup_len;
	uint32_t *aup_gids;
} rc_svc_unixcred;

/*
 * rc_svc_req -- one call being served (opaque: read it with the rc_svc_req_* accessors). Valid
 * during the routine it is passed to, and after it -- until exactly one of rc_svc_req_reply,
 * rc_svc_req_error or rc_svc_req_drop -- when the routine deferred it (rc_svc_req_defer).
 * A Sun dispatch function gets Sun's view of it instead (<remotecall/sunrpc.h>, struct
 * svc_req).
 *
 * The pointer is a handle, not the request's address: it names the request and its
 * generation. Once a deferred request is answered (reply, error or drop, whatever the answer
 * returned but RC_INVAL), every later use of its handle is refused -- an answer returns
 * RC_INVAL and sends nothing, an accessor returns its NULL/0 value -- even after the request's
 * memory has been reused for another call or freed, and after its server is destroyed: a
 * stale answer never reaches another caller. Two limits: the check holds for uses one after
 * the other (a handle used on one thread while another answers it is a race, as with any
 * object being freed; two answers racing each other are safe: one wins, the other gets
 * RC_INVAL); and a handle is taken for a live one again only after its slot's generation has
 * wrapped, 2^32 answers or frees later on a 64-bit build (2^10 on a 32-bit one), slots reused
 * oldest first. A handle kept past a routine that did not defer its call is not valid either,
 * but is detected only as far as the call's state allows (an answer outside the routine is
 * refused with RC_INVAL; an accessor may read the thread's next call).
 */
typedef struct rc_svc_req rc_svc_req;

/*
 * A server routine. args points to the decoded argument (NULL when void), res to a zeroed
 * result object (NULL when void). Return true to send *res as the reply, false to reply
 * SYSTEM_ERR. After the reply the server frees, with rc_xdr_free, what decoding allocated in
 * *args and whatever the routine left allocated in *res (so a routine returns malloc'd data),
 * unless it called rc_svc_req_keep_result. The argument is valid until the routine returns
 * and its reply is encoded: a variable-length opaque of RC_XDR_LEND_MIN bytes or more points
 * into the request's own buffer (no copy), so a routine must copy what it keeps.
 */
typedef bool (*rc_svc_fn)(void *args, void *res, rc_svc_req *req);

/* rc_svc_proc -- one procedure a server serves: its descriptor and the routine that serves it. */
typedef struct rc_svc_proc {
	const rc_procinfo *info; /* numbers and routines of the procedure */
	rc_svc_fn fn;            /* the routine that serves it (NULL: not linked, see
	                            rc_server_register) */
} rc_svc_proc;

/* rc_svc_prog -- one (program, version) and its procedures, for rc_server_register (idlc's
 * prog_V_program). */
typedef struct rc_svc_prog {
	uint32_t prog;
	uint32_t vers;
	size_t nprocs;
	const rc_svc_proc *procs; /* nprocs entries, any order, distinct procedure numbers */
} rc_svc_prog;

/*
 * rc_server_register -- serve def on this server; ctx is handed to every call of it (see
 * rc_svc_req_context). def must outlive the server (idlc's tables are static). Before
 * rc_server_run or while it runs, from any thread: a serving thread finds the registration
 * whole, or not yet (calls before it get PROG_UNAVAIL); the per-program rules
 * (rc_server_set_tls_required, rc_server_set_gss_required, rc_server_set_drc_streams) are set
 * while the server is stopped. Returns RC_OK,
 * RC_INVAL (NULL def, duplicate procedure numbers, (prog, vers) already registered),
 * RC_PROCUNAVAIL (a procedure of def has no routine: fn NULL -- idlc's
 * table of a .x with several programs whose proc_V_svc routines this program does not link,
 * docs/idl.md), RC_NOMEM.
 */
rc_status rc_server_register(rc_server *srv, const rc_svc_prog *def, void *ctx);

/*
 * rc_svc_rawfn -- a raw dispatcher: serves every procedure of one (program, version) itself
 * (Sun's svc_register dispatch functions sit on it). It reads req->rq_proc, decodes the
 * arguments with rc_svc_req_getargs, and answers with rc_svc_req_reply or rc_svc_req_error;
 * a call it leaves unanswered gets no reply. ctx is rc_server_register_raw's.
 */
typedef void (*rc_svc_rawfn)(rc_svc_req *req, void *ctx);

/*
 * rc_server_register_raw -- serve (prog, vers) with fn, which sees every procedure (0
 * included). The same rules as rc_server_register (also while the server runs). Returns RC_OK,
 * RC_INVAL (NULL srv or fn, (prog, vers) already registered), RC_NOMEM.
 */
rc_status rc_server_register_raw(rc_server *srv, uint32_t prog, uint32_t vers, rc_svc_rawfn fn,
                                 void *ctx);

/*
 * rc_server_unregister -- stop serving (prog, vers) (either kind of registration), also while
 * the server runs, from any thread: calls read after it returns get PROG_UNAVAIL (or
 * PROG_MISMATCH); calls under way and deferred requests of it finish as usual (a registration
 * taken out while running is kept, a few hundred bytes, until rc_server_destroy). Returns
 * RC_OK, RC_INVAL (NULL srv), or RC_PROGUNAVAIL when (prog, vers) is not registered.
 */
rc_status rc_server_unregister(rc_server *srv, uint32_t prog, uint32_t vers);

/*
 * rc_svc_req_getargs -- in a raw dispatcher: decode the call's arguments into *args (zeroed
 * by the caller) with xargs, under the server's allocation cap. What decoding allocated is the
 * caller's, released with rc_xdr_free(xargs, args). Returns RC_OK, RC_CANTDECODEARGS
 * (truncated, over a bound or trailing bytes), RC_INVAL (not a raw call).
 */
rc_status rc_svc_req_getargs(rc_svc_req *req, rc_xdrproc xargs, void *args);

/*
 * rc_svc_req_reply -- in a raw dispatcher: reply SUCCESS with *res coded by xres (res stays
 * the caller's). A second reply replaces the first. On a deferred request (typed or raw;
 * rc_svc_req_defer), from any thread: the reply is encoded and sent now and req is freed;
 * RC_CANTSEND and RC_CANCELLED then say it could not go (see rc_svc_req_defer). Returns RC_OK; RC_CANTENCODEARGS when
 * xres fails, RC_MSGTOOLARGE when the reply is over max_record or, on a datagram, over 65,507
 * bytes (the reply becomes SYSTEM_ERR either way; a datagram one is counted in
 * rc_server_stats.replies_too_big); RC_INVAL (not a raw call, or a deferred request answered
 * already: nothing sent).
 */
rc_status rc_svc_req_reply(rc_svc_req *req, rc_xdrproc xres, const void *res);

/*
 * rc_svc_req_defer -- inside a routine (typed or raw): answer this call later. The routine
 * returns (a typed routine's return value and *res are then ignored) and nothing is sent;
 * req stays valid, from any thread, until exactly one of rc_svc_req_reply (a typed routine's:
 * idlc's proc_V_reply(req, &res)), rc_svc_req_error or rc_svc_req_drop answers it and frees
 * it. Meanwhile the connection goes on reading and serving other calls, with one thread or
 * many; replies leave in the order they are made. The argument the routine got stays valid
 * at the same address until the answer, but what it points to is decoded again into memory
 * the request owns: take pointers into it after this call, not before. A retransmitted
 * datagram of a deferred call is absorbed until the answer, then gets the cached reply.
 * At lim.max_deferred_conn deferred requests of one stream connection, or max_deferred in
 * the server, the server stops reading the connection until one is answered. Returns RC_OK;
 * RC_INVAL (NULL, not inside the routine, deferred already); RC_NOTSUPP (a call through a
 * synchronous transport that cannot keep its way back -- the in-process one can; its caller
 * waits for the answer); RC_TOOMANY (a datagram or in-process call with max_deferred
 * reached: answer it now); RC_NOMEM. On any failure the call is still the routine's to
 * answer.
 *
 * If the connection closes (an in-process caller's client is destroyed) before the answer,
 * the answer returns RC_CANTSEND; if the server stops (rc_server_run returns) or is
 * destroyed first, RC_CANCELLED -- either way req is freed, and nothing of the server's is
 * touched after it is gone. rc_server_destroy waits
 * for answers already under way on other threads, never for requests not yet answered.
 * Any answer after the first returns RC_INVAL and sends nothing (see rc_svc_req).
 */
rc_status rc_svc_req_defer(rc_svc_req *req);

/*
 * rc_svc_req_drop -- answer a deferred request with no reply at all (the caller times out or
 * retransmits; a datagram's duplicate-cache entry is forgotten, so a retransmission runs
 * again), and free it. Returns RC_OK; RC_CANCELLED (the server stopped or went: freed all
 * the same); RC_INVAL (NULL, a request that is not deferred, or one answered already: nothing
 * done).
 */
rc_status rc_svc_req_drop(rc_svc_req *req);

/* The error replies rc_svc_req_error sends (RFC 5531). */
typedef enum rc_svc_err {
	RC_SVC_PROG_UNAVAIL = 1, /* accepted, PROG_UNAVAIL */
	RC_SVC_PROG_MISMATCH,    /* accepted, PROG_MISMATCH with lo..hi */
	RC_SVC_PROC_UNAVAIL,     /* accepted, PROC_UNAVAIL */
	RC_SVC_GARBAGE_ARGS,     /* accepted, GARBAGE_ARGS */
	RC_SVC_SYSTEM_ERR,       /* accepted, SYSTEM_ERR */
	RC_SVC_AUTH_ERROR        /* denied, AUTH_ERROR with the auth_stat lo */
} rc_svc_err;

/*
 * rc_svc_req_error -- in a raw dispatcher, or on a deferred request from any thread (sent now,
 * req freed, as rc_svc_req_reply): answer with error err (lo and hi: the version
 * range of RC_SVC_PROG_MISMATCH; lo: the auth_stat of RC_SVC_AUTH_ERROR; else unused).
 * Replaces an earlier reply. Returns RC_OK, or RC_INVAL (not a raw call, unknown err, or a
 * deferred request answered already: nothing sent); on a deferred request also RC_CANTSEND
 * and RC_CANCELLED, as rc_svc_req_reply.
 */
rc_status rc_svc_req_error(rc_svc_req *req, rc_svc_err err, uint32_t lo, uint32_t hi);

/*
 * rc_svc_req_caller -- the caller's address: copies up to *len bytes of it into sa and sets
 * *len to its length: a datagram's sender, a stream connection's peer (getpeername: a
 * sockaddr_in/in6, or a sockaddr_un on a unix socket) -- on a listener behind a load balancer
 * (?proxy=v2), the client its PROXY header named (the balancer's own address for its LOCAL
 * health checks); for an in-process call *len is set to 0. Returns RC_OK, or RC_INVAL for
 * NULL arguments.
 */
rc_status rc_svc_req_caller(const rc_svc_req *req, void *sa, unsigned *len);

/* ---- life cycle ------------------------------------------------------------------------ */

/* rc_server_create -- a server with no listeners and no programs. On RC_OK *out is the caller's
 * to destroy; on RC_NOMEM *out is NULL. */
rc_status rc_server_create(rc_server **out);

/* rc_server_destroy -- close every listener and connection, remove from rpcbind what it
 * registered there and rpcbind still lists at its address (rc_server_rpcbind), free the
 * server. It must not be running (stop it and let rc_server_run return). */
void rc_server_destroy(rc_server *srv);

/*
 * rc_server_listen -- listen on uri (udp://HOST:PORT, tcp://HOST:PORT, unix:/PATH,
 * inproc:NAME; port 0 picks a free port). A query (?key=value) is refused, RC_UNKNOWNADDR,
 * unless the listen side takes its keys -- none yet: a client's keys such as tls=required
 * are refused too, with a detail naming the server's way (rc_server_set_tls,
 * rc_server_set_tls_required). The URI actually bound (with the real port) is
 * written to bound (if not NULL, NUL-terminated, truncated to len). Listen before
 * rc_server_run. Returns RC_OK, RC_INVAL (NULL srv or uri, or a running server),
 * RC_UNKNOWNPROTO, RC_UNKNOWNADDR, RC_UNKNOWNHOST, RC_LOCALERROR (bind/listen failed: errno
 * kept), RC_TOOMANY, RC_NOMEM; rc_server_geterr says why in words. unix:/PATH: a socket file
 * a live server listens on is left alone (RC_LOCALERROR, EADDRINUSE), as is a file of any
 * other kind; one nobody accepts on (a dead server's) is replaced. Closing the listener
 * removes the file only if it is still the one it bound.
 */
rc_status rc_server_listen(rc_server *srv, const char *uri, char *bound, size_t len);

/*
 * rc_server_geterr -- how the last rc_server_listen or rc_server_listen_fd on srv ended:
 * status RC_OK if it succeeded; else the status, errno for RC_LOCALERROR (EADDRINUSE: the
 * port is taken, or a server still listens on the unix path; EADDRNOTAVAIL: not an address of
 * this machine; EACCES, ...) and in detail what the transport or the address check says
 * ("/run/x.sock is in use by a running server", "local address tcp://127.0.0.1:80x"). Print
 * it with rc_error_format. err stays the caller's; a NULL srv gives status RC_INVAL. An
 * RC_INVAL returned for a NULL argument or a running server is not recorded.
 */
void rc_server_geterr(const rc_server *srv, rc_error *err);

/*
 * rc_server_listen_fd -- serve a socket the application opened (inetd's descriptor, a socket
 * set up with options of its own; the Sun API's svcudp_create(fd) / svcfd_create): a
 * datagram socket, or a listening stream socket, becomes a listener; a connected stream
 * socket (TCP or unix) is served as one connection; an unconnected stream socket is put in
 * listen(). An IP socket not bound yet is bound to its family's wildcard address, any port.
 * The URI it is bound at (for a connection: its local address) is written to bound as by
 * rc_server_listen. On RC_OK the server owns fd (it closes it); on any other status fd is
 * still the caller's (bound or listening if it came to that), but for a connection that
 * could not be taken for want of memory (RC_NOMEM: closed). Not while the server runs.
 * Returns RC_OK,
 * RC_INVAL (NULL srv, fd not a socket, a running server), RC_UNKNOWNPROTO (not a datagram or
 * stream socket of AF_INET, AF_INET6 or AF_UNIX), RC_LOCALERROR (bind or listen failed:
 * errno kept), RC_TOOMANY (too many listeners), RC_NOMEM.
 */
rc_status rc_server_listen_fd(rc_server *srv, int fd, char *bound, size_t len);

/*
 * rc_server_unlisten -- close the listener bound at uri (the bound URI rc_server_listen or
 * rc_server_listen_fd wrote); connections it accepted stay. Not while the server runs.
 * Returns RC_OK, or RC_INVAL (NULL arguments, a running server, no listener bound there).
 */
rc_status rc_server_unlisten(rc_server *srv, const char *uri);

/* Limits; a 0 field keeps the current value. Defaults in brackets. */
typedef struct rc_server_limits {
	size_t max_record;      /* largest request record or datagram accepted, and largest reply
	                           [RC_DEFAULT_MAX_MESSAGE: 64 MiB + 64 KiB] */
	size_t max_alloc;       /* what decoding one request's arguments may allocate [16 MiB] */
	uint32_t max_conns;     /* open stream connections (see below) [16384] */
	uint32_t idle_ms;       /* a connection idle this long is closed [120000] (never during
	                           a TLS handshake, which stall_ms bounds) */
	uint32_t stall_ms;      /* a connection stuck in a partial record this long is closed [10000] */
	uint32_t drc_entries;   /* calls the duplicate request cache (UDP) remembers at most [4194304] */
	uint32_t drc_ttl_ms;    /* how long it remembers a call after its reply [120000] */
	size_t drc_bytes;       /* bytes it holds at most: entries, replies, index [64 MiB] */
	uint32_t max_deferred_conn; /* requests of one stream connection deferred at once: at
	                               this many the server stops reading it until one is
	                               answered [64] */
	uint32_t max_deferred;  /* requests deferred at once in the whole server: at this many
	                           stream connections are not read, and a datagram call cannot be
	                           deferred (RC_TOOMANY) [65536] */
	uint32_t gss_contexts;  /* established RPCSEC_GSS contexts kept at most
	                           (rc_server_set_gss): a new one at the bound pushes out its own
	                           principal's least recently used, or if it has none the least
	                           recently used of the principal holding the most [1024] */
	uint32_t gss_idle_ms;   /* an RPCSEC_GSS context no call used for this long is dropped
	                           (its client makes another) [900000: 15 minutes] */
	uint32_t gss_contexts_per_principal; /* established RPCSEC_GSS contexts of one
	                           principal kept at most: its new one over it pushes out its
	                           least recently used [256] */
	uint32_t gss_incomplete; /* RPCSEC_GSS contexts still being made (CONTINUE_NEEDED) kept
	                           at most, apart from gss_contexts: they never push out an
	                           established one [64] */
	size_t max_parked_conn; /* request bytes one stream connection may have read and parked
	                           (not yet dispatched) past its caps while calls back on it wait
	                           for replies -- the reading that finds those replies goes on;
	                           past this the calls back fail at once with RC_TOOMANY
	                           (rc_server_stats.backcalls_starved) [4 MiB] */
	size_t max_inbound_bytes; /* bytes the server holds at most for requests not yet
	                           served, over all connections: partial records, requests read
	                           and queued, parked or running, deferred requests' arguments.
	                           At it, connections inside a record of 64 KiB or more are not
	                           read (closed once stalled past stall_ms); the others, and
	                           replies to calls back, still are [256 MiB: a quarter of a
	                           1 GiB VM; 40 peers holding 60 MiB records open pin ~260 MiB] */
} rc_server_limits;

/*
 * Stream connections: when the table is full (max_conns) or accept fails for want of
 * descriptors, the server closes connections doing no useful work to make room -- first those
 * that never completed a request and have had 50 ms to send one, oldest first, then the one
 * longest idle -- never one being read, with calls running or replies queued. A spare
 * descriptor kept in reserve lets it accept the waiting connection at once; with nothing to
 * close, the listener waits (off its epoll set, at most 100 ms at a time) instead of spinning.
 * rc_server_get_stats counts evictions and accept failures.
 */

/*
 * The duplicate request cache (UDP, every procedure but 0) never forgets a call before
 * drc_ttl_ms have passed since its reply: a retransmission within that time gets the stored
 * reply and never runs the procedure again. Calls are told apart by client address and port,
 * xid, program, version, procedure, credential flavor (and RPCSEC_GSS context), argument
 * length and a checksum of the arguments. A call costs about 185 bytes with its reply (plus
 * the reply if over 32 bytes). When drc_bytes or drc_entries would be exceeded by calls still
 * within their time, replies go before calls: replies over 32 bytes first, then the oldest
 * calls are kept as 24-byte fingerprints without their replies -- either way a retransmission
 * of such a call is dropped unanswered, never run again -- and only then are new calls refused
 * (dropped unrun: their clients retransmit). rc_server_get_stats counts each. The defaults
 * remember ~2.2 million calls: 18,000 a second sustained over 120 s; the process may briefly
 * hold about twice drc_bytes while the fingerprint table doubles.
 */

/*
 * rc_server_set_limits -- apply the non-zero fields of lim (copied; a record cap under 64
 * bytes counts as 64; lower gss_* bounds drop the contexts over them now, least recently
 * used first). From any thread, also while the server runs; then each field takes effect on
 * its own (a call may see one field changed before another):
 *   max_alloc                 the next request decoded;
 *   max_conns                 the next accept (lowering it closes nothing: accepts over it
 *                             make room as a full table does);
 *   idle_ms, stall_ms         the sweeper's next walk (within 250 ms), for every connection;
 *                             TLS handshakes and PROXY headers that start from then on;
 *   max_deferred_conn, max_deferred, max_parked_conn, max_inbound_bytes
 *                             the next read of each connection; connections held at a cap
 *                             that was raised are read again at once;
 *   gss_*                     now (lower bounds drop the contexts over them).
 * max_record and drc_* cannot change while the server runs (buffers, listeners and the
 * duplicate request cache are made with them): a lim that changes one of them is refused
 * whole. Returns RC_OK, or RC_INVAL for NULL arguments, or a running server and a max_record
 * or drc_* field that is neither 0 nor its current value (nothing applied).
 */
rc_status rc_server_set_limits(rc_server *srv, const rc_server_limits *lim);

/* rc_server_stats -- what a server has done, for operators (rc_server_get_stats). Counters
 * count from rc_server_create (or the last rc_server_set_limits that changed the cache). */
typedef struct rc_server_stats {
	/* duplicate request cache (UDP) */
	uint64_t drc_entries;     /* calls remembered now */
	uint64_t drc_bytes;       /* bytes held now, as charged against drc_bytes */
	uint64_t drc_replayed;    /* retransmissions answered with the stored reply */
	uint64_t drc_in_progress; /* retransmissions of calls still running: dropped */
	uint64_t drc_unanswered;  /* retransmissions of calls whose reply was let go: dropped */
	uint64_t drc_shed;        /* replies let go, or never kept, for want of room */
	uint64_t drc_refused;     /* new calls dropped unrun for want of room (clients retransmit) */
	/* stream connections */
	uint64_t conns;           /* open now (including those being closed) */
	uint64_t conns_accepted;  /* accepted and served */
	uint64_t conns_evicted;   /* closed to make room: out of descriptors or over max_conns */
	uint64_t conns_refused;   /* closed at once: no room and none that could be closed */
	uint64_t accept_nofile;   /* accepts that failed for want of descriptors (EMFILE, ENFILE) */
	/* replies */
	uint64_t replies_too_big; /* datagram replies over 65,507 bytes (or max_record): the
	                             caller got SYSTEM_ERR instead (use a stream transport) */
	/* RPCSEC_GSS (rc_server_set_gss) */
	uint64_t gss_dropped;     /* calls dropped unanswered: a replayed sequence number, or one
	                             below the context's window */
	uint64_t gss_contexts;    /* contexts held now */
	uint64_t gss_evicted;     /* contexts pushed out to make room for new ones (at
	                             gss_contexts, gss_contexts_per_principal or gss_incomplete;
	                             not the idle or expired) */
	/* flow control (docs/runtime.md, "Limits") */
	uint64_t inbound_bytes;   /* bytes held now for requests not yet served (max_inbound_bytes) */
	uint64_t inbound_waits;   /* times a connection was left unread at max_inbound_bytes */
	uint64_t requests_parked; /* requests read past a connection's caps and parked, so that
	                             replies to calls back behind them were read */
	uint64_t backcalls_starved; /* calls back failed at once (RC_TOOMANY): their connection
	                             had max_parked_conn bytes parked, so no reply could be read */
	/* behind a load balancer (listen URI ?proxy=v2; docs/load-balancing.md) */
	uint64_t conns_proxied;       /* connections admitted with a valid PROXY header (v2 or v1) */
	uint64_t conns_proxy_refused; /* closed unserved: no header, a malformed one, silent for
	                                 stall_ms, or from a balancer not in ?proxy_from */
	uint64_t draining;            /* 1 once rc_server_drain's drain has begun, else 0 */
	/* RPC-over-QUIC listeners (quic://; docs/runtime.md, "RPC-over-QUIC"), all of them
	 * together; each stream a client opens is also one of the stream connections above */
	uint64_t quic_conns;           /* QUIC connections whose handshake completed */
	uint64_t quic_open_conns;      /* ... open now */
	uint64_t quic_handshake_fails; /* failed their handshake (a bad certificate, no ALPN
	                                  "sunrpc", ...) */
	uint64_t quic_streams;         /* streams clients opened */
	uint64_t quic_bad_records;     /* closed with RPC_PROTOCOL_VIOLATION: a record over
	                                  max_record or too short to be RPC */
	uint64_t quic_stream_limit;    /* closed for opening more streams than allowed */
	uint64_t quic_wrong_direction; /* messages dropped for going the wrong way on a stream */
	uint64_t quic_idle_closed;     /* ended by the idle timeout */
	uint64_t quic_refused;         /* refused at the listener's connection cap */
	uint64_t quic_queued;          /* bytes of replies and calls back queued to QUIC peers now,
	                                  sent or not, until acknowledged (bounded per stream: a
	                                  peer that withholds credit stops being read) */
} rc_server_stats;

/*
 * rc_server_drain -- stop gracefully, losing no call (docs/load-balancing.md, "Drain and
 * failover"): stop accepting (stream listeners stop listening: connects are refused, so a
 * load balancer's health check marks the server down); stop reading each connection and
 * datagram listener; answer every call already dispatched; tell each connection whose client
 * asked (rc_client_set_failover) that the calls it has no reply to were never run; end the
 * sending side, read until the client closes, close; and when nothing is left -- or
 * timeout_ms after the drain began, when the rest are cut -- stop, so that rc_server_run
 * returns (RC_OK). Returns at once; the drain runs on the serving threads. Async-signal-safe
 * (a SIGTERM handler may call it); calling it again changes nothing. A server served by
 * blocking receives on one datagram listener answers each datagram as it reads it: there the
 * drain is rc_server_stop. Returns RC_OK, or RC_INVAL for a NULL server.
 */
rc_status rc_server_drain(rc_server *srv, uint32_t timeout_ms);

/*
 * rc_server_get_stats -- copy the server's counters into *out; callable from any thread, also
 * while it runs. Returns RC_OK, or RC_INVAL for NULL arguments (*out untouched).
 */
rc_status rc_server_get_stats(rc_server *srv, rc_server_stats *out);

/*
 * rc_server_set_threads -- serve with n worker threads (0 or 1: the calling thread alone;
 * at most 1024). With several, calls run in parallel even on one connection, and a
 * connection's replies may then come back in a different order from its calls. Set it before
 * rc_server_run. Returns RC_OK; RC_INVAL for a NULL server, n over 1024 or a running server;
 * RC_LOCALERROR when the job queue's eventfd cannot be made (n > 1; nothing changed).
 */
rc_status rc_server_set_threads(rc_server *srv, unsigned n);

/*
 * rc_server_set_spin -- opt-in busy-polling: a serving thread about to sleep for the next
 * request (a blocking receive, or epoll_wait) first polls without sleeping for up to spin_us
 * microseconds (0, the default: it sleeps at once). It trades CPU for latency: a request that
 * arrives within the window is taken without the wake-up of a sleeping thread, and each
 * serving thread burns up to spin_us of CPU after every request it serves (a whole core while
 * requests come closer together than that). Set it before rc_server_run. Returns RC_OK;
 * RC_INVAL for a NULL or running server, or spin_us over 1 s.
 */
rc_status rc_server_set_spin(rc_server *srv, uint32_t spin_us);

/*
 * rc_server_set_trace -- from now on call fn(arg, step, xid, ns) at each step of every call
 * the server serves (<remotecall/trace.h>: RC_TP_SRV_RECEIVED .. RC_TP_SRV_SENT), on the
 * thread serving it -- with worker threads, from several threads at once. fn NULL turns
 * tracing off (the default). Set it before rc_server_run. Nothing is copied or allocated; arg
 * stays the caller's. The trace is per step and carries the xid only: the per-call record
 * (program, version, procedure, connection, outcome, bytes, time) is the call log
 * (rc_server_set_call_log). Returns RC_OK, or RC_INVAL for a NULL or running server.
 */
rc_status rc_server_set_trace(rc_server *srv, rc_trace_fn fn, void *arg);

/*
 * rc_server_run -- serve until rc_server_stop. A server whose only listener is UDP serves it
 * by blocking receives (the socket leaves rc_server_fd's set until the run ends); any other
 * runs an epoll loop. Returns RC_OK after a stop, or an error if the loop could not run
 * (RC_LOCALERROR with errno, RC_INVAL if nothing is listening or it is running already).
 */
rc_status rc_server_run(rc_server *srv);

/* rc_server_stop -- make rc_server_run return soon. Async-signal-safe; callable from any
 * thread or a signal handler. */
void rc_server_stop(rc_server *srv);

/*
 * For the application's own loop: rc_server_fd is one descriptor (an epoll set) that becomes
 * readable when the server has work; then call rc_server_step(srv, 0). rc_server_step(srv,
 * timeout_ms) also waits up to timeout_ms itself. Returns RC_OK, RC_LOCALERROR, or RC_INVAL
 * (NULL srv, or rc_server_run is serving it).
 */
int rc_server_fd(rc_server *srv);
rc_status rc_server_step(rc_server *srv, int timeout_ms);

/*
 * rc_server_rpcbind -- on: register every (program, version) this server serves, on each of
 * its UDP and TCP listeners, with the local rpcbind: now, and again whenever rc_server_listen
 * or rc_server_register adds one. Off, and at rc_server_destroy: remove what it registered,
 * where rpcbind still lists this server's address (another server's registration stays).
 * Without RC_RPCBIND_TAKEOVER it never replaces another live server's registration. The rules
 * and returns are rc_server_rpcbind_ex's (flags 0).
 */
rc_status rc_server_rpcbind(rc_server *srv, bool on);

/* RC_RPCBIND_TAKEOVER -- rc_server_rpcbind_ex flag: replace other servers' registrations of
 * the same program and version, live or not (what rpcgen's main does with pmap_unset). */
#define RC_RPCBIND_TAKEOVER 0x1u

/*
 * rc_server_rpcbind_ex -- rc_server_rpcbind with flags (0 or RC_RPCBIND_TAKEOVER).
 *
 * How: RPCBIND version 4 SET, UNSET and DUMP over rpcbind's local socket (/run/rpcbind.sock,
 * else /var/run/rpcbind.sock: rpcbind takes SET and UNSET only there unless started with -i
 * or -L); without one, PMAP version 2 SET, UNSET and DUMP over UDP to 127.0.0.1:111 (IPv4
 * only).
 *
 * What: one entry per (program, version) and listener: netid udp or tcp and the socket's
 * IPv4 address, or udp6 or tcp6 and its IPv6 address, as a universal address ("0.0.0.0.8.1").
 * A socket bound to [::] that takes IPv4 too (IPV6_V6ONLY off, Linux's default) serves both,
 * so it is registered as both: udp6/tcp6 "::.P1.P2" and udp/tcp "0.0.0.0.P1.P2" (the latter
 * only when no IPv4 listener of that protocol is registered). A quic:// listener is registered
 * as netid quic (IPv4) or quic6 (IPv6) at its UDP address (draft-cel-nfsv4-rpc-over-quicv1).
 *
 * Others' registrations: an entry rpcbind already holds for (program, version, netid) at
 * another address is checked by a NULL call to that address (1 s). Answered by a server of
 * that program and version (any reply but program unavailable, program version mismatch or
 * RPC version mismatch): it is left alone and this entry fails with RC_PROGREGISTERED. Not
 * answered: it is stale and replaced (a quic/quic6 entry, whose server cannot be asked
 * without trusting its certificate: live while something on this host holds its UDP port). With
 * RC_RPCBIND_TAKEOVER there is no check: the first registration of each (program, version)
 * removes it for every netid first. PMAP version 2 knows (program, version) only as a whole:
 * one live holder refuses every entry of it not yet this server's. Two listeners of one
 * netid: rpcbind keeps the first and refuses the other (RC_PMAPFAILURE, holder the first).
 *
 * Whatever can be registered is; rc_server_rpcbind_entries tells per entry what happened.
 * Returns RC_OK (every entry registered; or off), RC_PROGREGISTERED (a live server holds one
 * or more), RC_PMAPFAILURE (rpcbind unreachable, or it refused or failed an entry), RC_NOMEM,
 * RC_INVAL (NULL srv, unknown flags). Not while the server is being destroyed.
 */
rc_status rc_server_rpcbind_ex(rc_server *srv, bool on, unsigned flags);

/* rc_rpcbind_entry -- one registration rc_server_rpcbind made or tried. */
typedef struct rc_rpcbind_entry {
	uint32_t prog;
	uint32_t vers;
	char netid[8];    /* "udp", "tcp", "udp6", "tcp6", "quic", "quic6" */
	char uaddr[64];   /* the universal address registered or tried ("0.0.0.0.8.1") */
	rc_status status; /* RC_OK: registered. RC_PROGREGISTERED: a live server holds it (at
	                     holder). RC_PMAPFAILURE: rpcbind answered SET with false. RC_NOTSUPP:
	                     PMAP version 2 cannot register IPv6. Else how the call to rpcbind
	                     failed (RC_TIMEDOUT, RC_CANTRECV, RC_AUTHERROR, ...) */
	int sys_errno;    /* the errno behind a failed call, else 0 */
	char holder[64];  /* the address rpcbind listed for (prog, vers, netid) before, when not
	                     uaddr ("": none); a longer one is truncated */
} rc_rpcbind_entry;

/*
 * rc_server_rpcbind_entries -- the entries of srv's latest registration, by (program,
 * version) then listener: copies up to max of them to out (NULL is fine when max is 0) and
 * returns how many there are; 0 when registration is off or was never asked for.
 */
size_t rc_server_rpcbind_entries(rc_server *srv, rc_rpcbind_entry *out, size_t max);

/*
 * rc_rpcbind_entry_format -- e as one line into buf (always NUL-terminated, truncated to
 * len): "program 100003 version 3 udp 0.0.0.0.8.1: registered", "program 100003 version 3
 * tcp6 ::.8.1: not registered: a live server holds it at ::.8.3 (RC_RPCBIND_TAKEOVER takes
 * over)". Returns buf.
 */
char *rc_rpcbind_entry_format(const rc_rpcbind_entry *e, char *buf, size_t len);

/* ---- authentication ---------------------------------------------------------------------- */

/* RC_AUTH_NONE, RC_AUTH_SYS -- the credential flavors the server parses (RFC 5531). */
#define RC_AUTH_NONE 0u
#define RC_AUTH_SYS 1u

/* rc_svc_req_prog, rc_svc_req_vers, rc_svc_req_procnum -- the program, version and procedure
 * number the call named (0 for a NULL req). */
uint32_t rc_svc_req_prog(const rc_svc_req *req);
uint32_t rc_svc_req_vers(const rc_svc_req *req);
uint32_t rc_svc_req_procnum(const rc_svc_req *req);

/* rc_svc_req_cred -- the call's credential as it came (flavor and body; the body lives as
 * long as the request), or NULL for a NULL req. */
const rc_opaque_auth *rc_svc_req_cred(const rc_svc_req *req);

/* rc_svc_req_flavor -- the credential flavor of the call (RC_AUTH_NONE, RC_AUTH_SYS, ...). */
uint32_t rc_svc_req_flavor(const rc_svc_req *req);

/* rc_svc_req_authsys -- the parsed AUTH_SYS credentials, or NULL if the flavor is another. */
const rc_authsys *rc_svc_req_authsys(const rc_svc_req *req);

/*
 * An authentication hook: runs for every call before dispatch. Return 0 to accept, or an
 * RFC 5531 auth_stat (1 AUTH_BADCRED, 2 AUTH_REJECTEDCRED, 5 AUTH_TOOWEAK, ...) to reject the
 * call with an AUTH_ERROR reply.
 */
typedef uint32_t (*rc_svc_authfn)(const rc_svc_req *req, void *ctx);
/* rc_server_set_auth -- install (fn) or remove (NULL) the hook; set it before rc_server_run.
 * Returns RC_OK, or RC_INVAL for a NULL or running server. */
rc_status rc_server_set_auth(rc_server *srv, rc_svc_authfn fn, void *ctx);

/*
 * rc_svc_req_set_verf -- the verifier the reply to req carries (flavor and a body of at most
 * 400 bytes, copied), instead of AUTH_NONE's empty one: for a hook (or routine) that answers
 * AUTH_SYS or AUTH_NONE calls with a verifier of its own (e.g. AUTH_SHORT). Call it from the
 * auth hook, or from the routine before it returns; a deferred request keeps it. Returns
 * RC_OK; RC_NOTSUPP when the call's flavor makes its own verifiers; RC_INVAL for a NULL req,
 * a body over 400 bytes (or NULL with len > 0), or a request not being served.
 */
rc_status rc_svc_req_set_verf(const rc_svc_req *req, uint32_t flavor, const void *body,
                              uint32_t len);

/* rc_svc_req_context -- the ctx given to rc_server_register for this call's program. */
void *rc_svc_req_context(const rc_svc_req *req);

/* rc_svc_req_proc -- the descriptor of the procedure being served. */
const rc_procinfo *rc_svc_req_proc(const rc_svc_req *req);

/* ---- RPCSEC_GSS (RFC 2203, Kerberos v5) ---------------------------------------------------- */

/* RC_AUTH_GSS -- the credential flavor of RPCSEC_GSS. */
#define RC_AUTH_GSS 6u

/*
 * rc_server_set_gss -- accept RPCSEC_GSS calls (services none, integrity and privacy) as
 * principal, a host-based name ("nfs@host") or a Kerberos one ("nfs/host@REALM"; NULL: any
 * key of the keytab), with keys from keytab (NULL: KRB5_KTNAME or the system's). Contexts are
 * kept in a bounded table (rc_server_limits.gss_contexts, 1,024 established, at most
 * gss_contexts_per_principal, 256, of one principal, so that one principal's INITs never push
 * out another's contexts while it holds more than they do; gss_incomplete, 64, still being
 * made, apart; idle ones go after gss_idle_ms, 15 minutes, expired ones at their lifetime)
 * under random 16-byte handles, each with a 128-call sequence window: a replayed or
 * too old call is dropped unanswered (rc_server_stats.gss_dropped). The first call is made
 * before rc_server_run. A second call -- while the server runs, from any thread, or stopped --
 * reloads the keytab: it acquires the acceptor credential for principal from keytab again
 * (a rotated service key, a new keytab file or name) and contexts made from then on are
 * accepted with it; contexts already made, and their calls, go on under their own keys
 * (the credential replaced is kept until rc_server_destroy). Returns RC_OK; RC_AUTHERROR
 * when the acceptor credential cannot be had (why, if not NULL, gets GSS's words, whylen
 * bytes at most; a reload that fails changes nothing); RC_INVAL for a NULL server, or a
 * first call on a running one. The table is freed with the server.
 */
rc_status rc_server_set_gss(rc_server *srv, const char *principal, const char *keytab,
                            char *why, size_t whylen);

/* RC_GSS_NOT_REQUIRED -- rc_server_set_gss_required's "no rule": any flavor is taken. */
#define RC_GSS_NOT_REQUIRED ((rc_gss_service)0)

/*
 * rc_server_set_gss_required -- the least protection (prog, vers), registered before, takes:
 * min_service RC_GSS_NONE (RPCSEC_GSS, any service), RC_GSS_INTEGRITY (integrity or privacy),
 * RC_GSS_PRIVACY (privacy); RC_GSS_NOT_REQUIRED removes the rule. (The parameter was a
 * uint32_t 0..3 before: the same values, the same ABI.) Calls with less -- another flavor, or
 * a weaker service -- are refused with AUTH_ERROR / AUTH_TOOWEAK (the client sees
 * RC_AUTHERROR, auth_stat 5); the NULL procedure is exempt (pings and the context's own control
 * calls). Returns RC_OK; RC_INVAL for a NULL or running server or min_service over
 * RC_GSS_PRIVACY; RC_PROGUNAVAIL when (prog, vers) is not registered.
 */
rc_status rc_server_set_gss_required(rc_server *srv, uint32_t prog, uint32_t vers,
                                     rc_gss_service min_service);

/* rc_svc_req_gss_principal -- the caller's principal ("user@REALM") of an RPCSEC_GSS call,
 * valid until its reply; NULL for any other flavor. rc_svc_req_gss_service -- its service
 * (1 none, 2 integrity, 3 privacy; 0 for another flavor). */
const char *rc_svc_req_gss_principal(const rc_svc_req *req);
uint32_t rc_svc_req_gss_service(const rc_svc_req *req);

/* ---- RPC-over-TLS (RFC 9289; <remotecall/tls.h>) ------------------------------------------ */

/* RC_AUTH_TLS -- the credential flavor of RFC 9289's probe (a NULL call asking for TLS). */
#define RC_AUTH_TLS 7u

/*
 * rc_server_set_tls -- offer TLS on the server's TCP (and unix) connections: a client's
 * AUTH_TLS probe is answered with "STARTTLS" and a TLS 1.3 handshake (ALPN "sunrpc") follows
 * on the connection, run by the server's loops without blocking them; it counts as an
 * incomplete record for stall_ms, and at most opts->max_handshakes run at once (a probe
 * beyond them has its connection closed after the reply). Without it, probes get the empty
 * verifier ("no TLS here"), as over UDP always. The files are read now (opts is not kept).
 * A second call replaces the settings -- also while the server runs, from any thread (a
 * certificate's rotation): handshakes that start after it returns use the new certificate,
 * key and client CAs; connections already under TLS keep their session, and the context
 * they were made from is kept until rc_server_destroy (a few KB per replacement); a call
 * that fails changes nothing. Returns RC_OK; RC_INVAL
 * (NULL srv, NULL opts, a missing or unreadable certificate, key or CA file --
 * why, if not NULL, then receives OpenSSL's reason, NUL-terminated, truncated to whylen),
 * RC_NOMEM.
 */
rc_status rc_server_set_tls(rc_server *srv, const rc_tls_server_opts *opts, char *why,
                            size_t whylen);

/*
 * rc_server_set_tls_required -- whether (prog, vers), registered before, may be called only
 * under TLS: plaintext calls to it (the probe aside) are then refused with AUTH_ERROR /
 * AUTH_TOOWEAK (the client sees RC_AUTHERROR, auth_stat 5). Returns RC_OK; RC_INVAL for a NULL
 * or running server; RC_PROGUNAVAIL when (prog, vers) is not registered.
 */
rc_status rc_server_set_tls_required(rc_server *srv, uint32_t prog, uint32_t vers,
                                     bool required);

/*
 * rc_svc_req_keep_result -- in a server routine (rc_svc_fn): the result's memory is not the
 * server's to free after the reply -- the routine points it into memory it keeps, or into its
 * own arguments (an echo returns its argument's bytes without copying them: they stay valid
 * until the reply is encoded). Returns RC_OK, or RC_INVAL for NULL.
 */
rc_status rc_svc_req_keep_result(rc_svc_req *req);

/* rc_svc_req_tls -- whether the call came over TLS (false for UDP and in-process calls); a
 * deferred request still says. */
bool rc_svc_req_tls(const rc_svc_req *req);

/*
 * rc_svc_req_tls_peer -- the identity in the client certificate the TLS handshake verified
 * (subject and subjectAltNames), or NULL: a plaintext call, or a client that sent no
 * certificate. The memory is the connection's, valid while the procedure runs (NULL once it
 * deferred the request); copy what you keep. Lets an application map a certificate to a user
 * instead of trusting AUTH_SYS.
 */
const rc_tls_peer *rc_svc_req_tls_peer(const rc_svc_req *req);

/* ---- the back channel: calls from the server to a client on the client's connection ------ */

/*
 * rc_server_conn -- a handle on one of the server's stream connections (TCP, TLS, Unix) that
 * the application may keep after the request that gave it is answered -- a subscription
 * service keeps its subscribers' handles, or the clients rc_server_conn_backchannel makes on
 * them, to call them back later. The handle outlives the connection: once the connection
 * closes (the peer leaves, the server ends it, rc_server_destroy), rc_server_conn_open says
 * false and calls over it fail; the handle is freed by its last release. Holding a handle
 * does not keep its connection open: an idle one is closed after idle_ms, and one may be
 * evicted to make room, as any other (the connection hook, rc_server_set_conn_hook, says when
 * it closed); only a connection whose calls back wait for replies is neither. Not for
 * datagram or in-process requests (RC_NOTSUPP).
 */
typedef struct rc_server_conn rc_server_conn;
typedef struct rc_client rc_client; /* <remotecall/client.h> */

/*
 * rc_svc_req_conn -- the handle of the connection req came on: in a routine, or for a deferred
 * request until it is answered. *out is the caller's reference, to give back with
 * rc_server_conn_release (every call gives one more; all calls for one connection give the
 * same handle). Returns RC_OK; RC_INVAL (NULL req or out); RC_NOTSUPP (a datagram or
 * in-process request: no connection to call back on); RC_CANTSEND (its connection is closing
 * or closed); RC_NOMEM. *out is NULL on failure.
 */
rc_status rc_svc_req_conn(rc_svc_req *req, rc_server_conn **out);

/* rc_server_conn_release -- give back a reference rc_svc_req_conn gave (NULL: nothing). The
 * connection stays open: only the handle's memory goes with its last reference. */
void rc_server_conn_release(rc_server_conn *sc);

/* rc_server_conn_open -- whether the handle's connection is still open for calls back (false
 * once its reading has ended or it closed, and for NULL). */
bool rc_server_conn_open(const rc_server_conn *sc);

/*
 * rc_server_conn_backchannel -- a client that calls prog, vers on the peer of sc's connection,
 * over that connection (RFC 8167's bidirectional RPC; the peer answers with rc_client_serve,
 * or any ONC RPC peer that serves calls on its connection, as NFSv4.1 clients do). It works
 * with every call mode a client has -- rc_call (with its timeout), rc_call_start and
 * rc_async_wait, rc_client_pollinfo/rc_client_advance in the application's loop (the
 * descriptor is the back channel's own, readable when replies wait) -- and takes the usual
 * settings (timeout, AUTH_SYS credentials with rc_client_set_auth_sys; RPCSEC_GSS is not
 * supported on a back channel yet: rc_client_set_auth_gss returns RC_NOTSUPP). Its calls go
 * out in the connection's order with the server's replies, under its TLS when it has TLS (the
 * peer's identity holds both ways); the replies come through the server's loops, which hand
 * the back channel every reply whose xid it sent, among its last 65,536 calls, and drop
 * replies nobody asked for. Several back channels may share a connection.
 *
 * Threads: the reply is read by the server's loops, so a routine may make a blocking call back
 * before it answers only on a server with worker threads (rc_server_set_threads >= 2) and one
 * of them free to read; on a one-thread server (or in rc_server_step) a blocking call from the
 * serving thread itself fails at once with RC_CANTRECV (detail: why) instead of waiting for a
 * reply only it could read -- start the call there (rc_call_start), defer the request, and
 * answer it from the call's callback.
 *
 * The client is the caller's (rc_client_destroy), holds a reference to sc's handle, and may
 * outlive the request, the connection and the server: once the connection is gone its calls
 * in flight fail with RC_CANTRECV and new ones with RC_CANTSEND, never a hang. Destroying it
 * leaves the connection open. rc_client_serve on it returns RC_NOTSUPP (calls that come on the
 * connection are the server's). Returns RC_OK with *out; RC_INVAL (NULL sc or out);
 * RC_CANTSEND (the connection has closed); RC_NOMEM. *out is NULL on failure.
 */
rc_status rc_server_conn_backchannel(rc_server_conn *sc, uint32_t prog, uint32_t vers,
                                     rc_client **out);

/*
 * rc_svc_req_backchannel -- rc_svc_req_conn, then rc_server_conn_backchannel on the handle:
 * a client that calls prog, vers back on the connection req came on (the handle's reference
 * is the client's). Returns as the two do: RC_OK, RC_INVAL, RC_NOTSUPP (datagram, in-process),
 * RC_CANTSEND, RC_NOMEM; *out NULL on failure.
 */
rc_status rc_svc_req_backchannel(rc_svc_req *req, uint32_t prog, uint32_t vers,
                                 rc_client **out);

/* ---- connection life (docs/runtime.md, "Connection life") -------------------------------- */

/* What rc_server_set_conn_hook's hook is told about a stream connection. */
typedef enum rc_conn_event {
	RC_CONN_OPEN = 1, /* accepted (or handed over by rc_server_listen_fd): before its first call */
	RC_CONN_CLOSE     /* closed, whoever closed it: after its last call and its last reply */
} rc_conn_event;

/* The connection hook: sc is the connection's handle, valid during the call (take a
 * reference of your own with rc_server_conn_retain to keep it past CLOSE). */
typedef void (*rc_conn_hook)(rc_server_conn *sc, rc_conn_event ev, void *ctx);

/*
 * rc_server_set_conn_hook -- tell fn(sc, ev, ctx) about every stream connection (TCP, TLS,
 * unix) the server takes from now on: RC_CONN_OPEN once, before any of its calls is served,
 * and RC_CONN_CLOSE once, after its last call was served and its last reply (deferred ones
 * too) sent or failed -- whoever closed it: the peer, rc_server_conn_close, idle_ms or
 * stall_ms, making room (max_conns), rc_server_destroy. Both are told for every connection
 * OPEN was told for, never CLOSE without OPEN. NULL fn removes the hook (connections opened
 * under it still get their CLOSE).
 *
 * Thread and locks: OPEN runs on the thread that accepted the connection (a loop's thread; or
 * rc_server_listen_fd's caller), CLOSE on the thread that let go of the connection last (a
 * loop's thread, a thread answering its last deferred request, a thread whose blocking call
 * back was reading the connection, rc_server_run's or rc_server_destroy's caller),
 * each with no lock of the server held. The hook may call anything of the server's API but
 * rc_server_destroy and rc_server_set_conn_hook -- rc_server_conn_set_data,
 * rc_server_conn_close, rc_server_foreach_conn, rc_server_conn_backchannel, answers to
 * deferred requests -- but it holds up the thread that runs it, so it should be short
 * (queue long work). Connections under a hook are served as a deferral's are (their calls
 * back may leave from any thread): a one-thread server pays a little per call for them.
 * Set it before rc_server_run. Returns RC_OK, or RC_INVAL (NULL srv, a running server).
 */
rc_status rc_server_set_conn_hook(rc_server *srv, rc_conn_hook fn, void *ctx);

/* rc_server_conn_set_data -- attach the application's pointer to sc's connection (NULL
 * clears it); rc_server_conn_data -- read it (NULL for a NULL sc, or none set). From any
 * thread (the pointer is stored atomically); the server never reads or frees it: free what it
 * points to on RC_CONN_CLOSE. A routine finds it through rc_svc_req_conn. */
void rc_server_conn_set_data(rc_server_conn *sc, void *data);
void *rc_server_conn_data(const rc_server_conn *sc);

/* rc_server_conn_retain -- one more reference to sc (given back with rc_server_conn_release);
 * returns sc. For a hook or a rc_server_foreach_conn visitor that keeps the handle. */
rc_server_conn *rc_server_conn_retain(rc_server_conn *sc);

/*
 * rc_server_conn_close -- close sc's connection, from any thread (the hook included): its
 * socket is shut down now, so no more of its calls are read, its calls back fail at once
 * (RC_CANTRECV in flight, RC_CANTSEND for new ones) and rc_server_conn_open says false; calls
 * already running finish, and answers to its deferred requests return RC_CANTSEND, as when
 * the peer leaves. The hook's RC_CONN_CLOSE follows once the last of them is done. Returns
 * RC_OK (closing, or closed already: nothing to do) or RC_INVAL (NULL sc). Not after rc_server_destroy has begun on its server.
 */
rc_status rc_server_conn_close(rc_server_conn *sc);

/*
 * rc_server_foreach_conn -- call fn(sc, ctx) for each open stream connection of srv that has
 * a handle -- every one when a connection hook is set (rc_server_set_conn_hook); else those a
 * routine took with rc_svc_req_conn -- until fn returns false. The connections are those open
 * when the call began (each handle referenced meanwhile; one that closes during the walk is
 * still visited, rc_server_conn_open then says false); fn runs on the caller's thread, with no
 * lock of the server held, and may call rc_server_conn_close. Any thread, while the server
 * runs or not (not during rc_server_destroy). Returns RC_OK; RC_INVAL (NULL srv or fn);
 * RC_NOMEM (nothing visited).
 */
rc_status rc_server_foreach_conn(rc_server *srv, bool (*fn)(rc_server_conn *sc, void *ctx),
                                 void *ctx);

/* rc_svc_req_xid -- the transaction id of the call (0 for a NULL or stale req). With the
 * client's address, program, version and procedure it names the call to a duplicate cache of
 * the application's own. */
uint32_t rc_svc_req_xid(const rc_svc_req *req);

/* ---- the duplicate request cache --------------------------------------------------------- */

/*
 * rc_server_set_drc -- whether the server keeps a duplicate request cache at all (on by
 * default, for datagram calls; off: none is kept, every call runs, rc_server_stats' drc_*
 * stay 0; on again: an empty one, with the drc_* limits). Not while the server runs. Returns
 * RC_OK; RC_INVAL (NULL srv, a running server); RC_NOMEM (on: no cache could be made).
 */
rc_status rc_server_set_drc(rc_server *srv, bool on);

/* RC_DRC_EVERY_PROGRAM -- rc_server_set_drc_streams's prog for the whole server. */
#define RC_DRC_EVERY_PROGRAM 0u

/*
 * rc_server_set_drc_streams -- whether calls on stream connections (TCP, TLS, unix) to
 * (prog, vers), registered before, go through the duplicate request cache too (off by
 * default); prog RC_DRC_EVERY_PROGRAM: to every program registered now or later (vers
 * ignored; a program's own setting made after it wins). A stream call is keyed as the Linux
 * NFS server keys it: the client's address WITHOUT its port (behind a ?proxy=v2 listener, the
 * client its PROXY header named; unix peers share one, empty, address), so a
 * call a client retransmits on a new connection after a reconnect -- the same xid, program,
 * version, procedure, arguments and credential (flavor; RPCSEC_GSS: the context) -- is
 * answered from the cache, or dropped while the first still runs, never run twice (the
 * remotecall client retransmits that way: docs/runtime.md, "At most once across
 * reconnects"). NULL procedures are never cached. A cached stream call's reply is copied into
 * the cache (big results are not sent from their own memory then). Not while the server
 * runs. Returns RC_OK; RC_INVAL (NULL srv, a running server); RC_PROGUNAVAIL ((prog, vers)
 * not registered).
 */
rc_status rc_server_set_drc_streams(rc_server *srv, uint32_t prog, uint32_t vers, bool on);

/* ---- counters and the call log (docs/runtime.md, "Operating a server") ------------------- */

#define RC_LATENCY_BUCKETS 24          /* rc_proc_stats.latency's buckets */
#define RC_STATS_PROC_ALL 0xffffffffu  /* rc_proc_stats.proc of a program's row: its sum */
#define RC_STATS_PROC_UNKNOWN 0xfffffffeu /* ... of calls to procedures it does not have */

/*
 * rc_proc_stats -- what one procedure of one (program, version) was asked and answered, since
 * rc_server_set_proc_stats turned counting on. A call counts once, when its reply is made (or
 * it is dropped or deferred), in exactly one outcome: calls == success + garbage_args +
 * system_err + proc_unavail + auth_error + no_reply + deferred.
 */
typedef struct rc_proc_stats {
	uint32_t prog, vers, proc; /* proc RC_STATS_PROC_ALL: the program's rows summed */
	uint64_t calls;
	uint64_t success;      /* answered SUCCESS (a duplicate-cache replay answers as it did) */
	uint64_t garbage_args; /* GARBAGE_ARGS: the arguments did not decode */
	uint64_t system_err;   /* SYSTEM_ERR: the routine returned false, memory, a reply too big */
	uint64_t proc_unavail; /* PROC_UNAVAIL */
	uint64_t auth_error;   /* denied: AUTH_ERROR (a flavor, tls_required, gss_required) */
	uint64_t no_reply;     /* none sent: a duplicate of a call still running, a raw
	                          dispatcher that did not answer, a flavor's drop */
	uint64_t deferred;     /* deferred (rc_svc_req_defer): answered later, not timed here */
	uint64_t bytes_in;     /* request records (without record marks) */
	uint64_t bytes_out;    /* replies made inline (a big gathered result's bytes included) */
	/* the time from the request's receipt to its reply made, calls answered inline: bucket 0
	 * under 1 us, bucket k in [2^(k-1), 2^k) us, the last one everything above */
	uint64_t latency[RC_LATENCY_BUCKETS];
} rc_proc_stats;

/*
 * rc_server_set_proc_stats -- count every call to a registered (program, version) by
 * procedure (on) or stop counting and forget the counts (off, the default). Counting takes
 * the serve step's traced path (as rc_server_set_trace does): a few atomic additions and two
 * clock reads a call; a server that never turns it on pays nothing. Calls to programs not
 * registered are not counted (rc_server_set_call_log sees them). Not while the server runs.
 * Returns RC_OK; RC_INVAL (NULL srv, a running server); RC_NOMEM.
 */
rc_status rc_server_set_proc_stats(rc_server *srv, bool on);

/*
 * rc_server_get_proc_stats -- copy up to max rows into out, one per procedure called at least
 * once and one per program (proc RC_STATS_PROC_ALL) after its procedures, and return how many
 * rows there are (0 when counting is off). From any thread, while the server runs: each
 * counter is exact (atomic), a row read during calls may be a call or two behind another.
 */
size_t rc_server_get_proc_stats(rc_server *srv, rc_proc_stats *out, size_t max);

/* How a call ended, for the call log. */
typedef enum rc_call_outcome {
	RC_CALL_SUCCESS = 0,
	RC_CALL_PROG_UNAVAIL,
	RC_CALL_PROG_MISMATCH,
	RC_CALL_PROC_UNAVAIL,
	RC_CALL_GARBAGE_ARGS,
	RC_CALL_SYSTEM_ERR,
	RC_CALL_RPC_MISMATCH,
	RC_CALL_AUTH_ERROR, /* auth_stat says which */
	RC_CALL_NO_REPLY,
	RC_CALL_DEFERRED
} rc_call_outcome;

/* rc_call_record -- one call served, for the call log. */
typedef struct rc_call_record {
	uint32_t xid, prog, vers, proc;
	rc_call_outcome outcome;
	uint32_t auth_stat;     /* RC_CALL_AUTH_ERROR: the auth_stat sent; else 0 */
	rc_server_conn *conn;   /* its connection's handle, valid during the log call: a stream
	                           connection's that has one (every one under a connection hook);
	                           NULL for datagram and in-process calls */
	bool dgram;
	size_t bytes_in, bytes_out;
	uint64_t ns;            /* receipt to reply made (0: not measured, deferred) */
	uint64_t conn_id;       /* its stream connection's number in the server, 1, 2, ... in
	                           the order connections were admitted, with or without a handle
	                           (calls of one connection share it); 0 for datagram and
	                           in-process calls */
} rc_call_record;

/* The call log's function: rec is valid during the call only. */
typedef void (*rc_call_log_fn)(const rc_call_record *rec, void *ctx);

/*
 * rc_server_set_call_log -- call fn(rec, ctx) once for every call the server serves (those
 * it cannot parse as a call aside), when its reply is made, dropped or deferred: on the
 * serving thread, with no lock of the server held (a reply may still be queued); keep it
 * short. It takes the traced path, as rc_server_set_proc_stats. fn NULL turns it off. Not
 * while the server runs. Returns RC_OK, or RC_INVAL (NULL srv, a running server).
 */
rc_status rc_server_set_call_log(rc_server *srv, rc_call_log_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif

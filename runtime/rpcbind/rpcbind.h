/*
 * Internal to the rpcbind layer (rpcbind.c) and its tests: universal addresses and the
 * registrations a server's sockets give.
 *
 * The layer sits above the client and the server and calls down only: rc_client_create_ex
 * resolves a missing port, then opens through client.c's rc__client_open (rpc.h);
 * rc_server_rpcbind reads the server through rc__server_view and learns of new listeners and
 * programs through the hook it installs (server_internal.h). Neither client.c nor server.c
 * calls rpcbind.c.
 */
#ifndef RC_RPCBIND_H
#define RC_RPCBIND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "runtime/core/rpc.h"

#define RC__RPCB_NETID_MAX 8  /* "udp6" and its kin, NUL included */
#define RC__RPCB_UADDR_MAX 64 /* an IPv6 universal address with its port, NUL included */

/* One (netid, universal address) a listening socket serves. */
typedef struct rc__rpcb_addr {
	char netid[RC__RPCB_NETID_MAX];
	char uaddr[RC__RPCB_UADDR_MAX];
	bool implied; /* the IPv4 side of a dual-stack [::] socket (registered only when no IPv4
	                 listener of the protocol is) */
} rc__rpcb_addr;

/*
 * What the listening socket fd serves, from its bound address (getsockname) and, for IPv6,
 * IPV6_V6ONLY: an IPv4 socket gives udp/tcp; an IPv6 one udp6/tcp6, and one bound to [::]
 * that accepts IPv4 too (IPV6_V6ONLY off) also gives udp/tcp 0.0.0.0.P (implied); a socket
 * bound to a v4-mapped address gives the IPv4 netid alone. Writes up to 2 entries to out and
 * returns how many: 0 for a Unix-domain socket or an address that cannot be read.
 */
size_t rc__rpcb_lsn_addrs(int fd, bool dgram, rc__rpcb_addr out[2]);

/*
 * What a QUIC listener bound at uri (quic://ADDR:PORT, ADDR a literal) serves: netid quic for
 * an IPv4 address, quic6 for an IPv6 one (draft-cel-nfsv4-rpc-over-quicv1). Writes 1 entry to
 * out and returns 1; 0 for a URI that is not quic:// with a literal address and a port.
 */
size_t rc__rpcb_quic_addrs(const char *uri, rc__rpcb_addr out[1]);

/* The universal address of sa ("127.0.0.1.8.1", "::1.8.1"); false for another family or a
 * buffer too short. */
bool rc__uaddr_format(const struct sockaddr *sa, char *ua, size_t len);

/* The port of a universal address ("h1.h2.h3.h4.p1.p2" or "v6addr.p1.p2"), or -1 if it has
 * none (RFC 5665 section 5.2.3.3/4). */
int rc__uaddr_port(const char *ua);

/*
 * A URI to reach a universal address of netid udp, tcp, udp6, tcp6, quic or quic6 from this
 * host: the
 * wildcard 0.0.0.0 becomes 127.0.0.1 and :: becomes [::1]. RC_OK, or RC_UNKNOWNADDR for
 * another netid or a malformed address.
 */
rc_status rc__uaddr_uri(const char *netid, const char *ua, char *uri, size_t len);

/*
 * SET (set) or UNSET one registration with the local rpcbind (its local socket, RPCBIND v4;
 * else PMAP v2 over loopback UDP): (prog, vers, netid) at uaddr; UNSET with netid "" removes
 * every netid (PMAP v2: always). RC_OK when rpcbind agreed, RC_PMAPFAILURE when it refused
 * or cannot be reached, RC_NOTSUPP for an IPv6 SET over PMAP v2, else how the call failed.
 */
rc_status rc__rpcb_local_set(bool set, uint32_t prog, uint32_t vers, const char *netid,
                             const char *uaddr);

#endif

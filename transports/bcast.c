/*
 * The socket side of rc_broadcast (runtime/rpcbind/broadcast.c): an unconnected UDP socket allowed
 * to send to broadcast and multicast addresses, one send, and a receive with a deadline that
 * reports the sender.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transports/transport.h"

/* transport.h: a datagram socket for to's family with SO_BROADCAST, multicast TTL 1 and
 * loopback; close-on-exec, non-blocking. -1 with errno on failure. */
int rc__bcast_socket(const rc_peer *to)
{
	int one = 1, ttl = 1;
	int fd = socket(to->ss.ss_family, SOCK_DGRAM, 0);

	if (fd < 0)
		return -1;
	if (rc__sock_cloexec_nonblock(fd, true) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (to->ss.ss_family == AF_INET)
		(void)setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl));
	else
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &ttl, sizeof(ttl));
	return fd;
}

/* transport.h: send msg to `to` whole; false with errno. */
bool rc__bcast_send(int fd, const void *msg, size_t len, const rc_peer *to)
{
	ssize_t n = rc__sendto(fd, msg, len, 0, (const struct sockaddr *)&to->ss, to->len);

	return n == (ssize_t)len;
}

/* transport.h: the next datagram into buf within wait_ms: its length, with the sender in
 * *from; 0 when none came in time (or a signal cut the wait); -1 with errno on an error. A
 * datagram longer than cap is cut to cap. */
ssize_t rc__bcast_recv(int fd, void *buf, size_t cap, rc_peer *from, int wait_ms)
{
	struct pollfd p = {fd, POLLIN, 0};
	ssize_t n;
	int r = poll(&p, 1, wait_ms);

	if (r <= 0)
		return r < 0 && errno != EINTR ? -1 : 0;
	from->len = sizeof(from->ss);
	n = rc__recvfrom(fd, buf, cap, 0, (struct sockaddr *)&from->ss, &from->len);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	return n;
}

/* transport.h: the interfaces' IPv4 broadcast addresses (as libtirpc's clnt_broadcast finds
 * them), each once. */
size_t rc__bcast_ifaddrs(rc_peer *out, size_t max, uint16_t port)
{
	struct ifaddrs *all, *i;
	size_t n = 0;

	if (getifaddrs(&all) != 0)
		return 0;
	for (i = all; i != NULL && n < max; i = i->ifa_next) {
		struct sockaddr_in a;
		bool dup = false;
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
		    !(i->ifa_flags & IFF_UP) || !(i->ifa_flags & IFF_BROADCAST) ||
		    i->ifa_broadaddr == NULL)
			continue;
		memcpy(&a, i->ifa_broadaddr, sizeof(a));
		a.sin_port = htons(port);
		for (size_t k = 0; k < n && !dup; k++)
			dup = memcmp(&out[k].ss, &a, sizeof(a)) == 0;
		if (dup)
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		memcpy(&out[n].ss, &a, sizeof(a));
		out[n].len = sizeof(a);
		n++;
	}
	freeifaddrs(all);
	return n;
}

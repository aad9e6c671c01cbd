/*
 * offload.h -- for the tests of UDP offloads (test_udp_batch, test_server, test_client).
 */
#ifndef RC_TESTS_OFFLOAD_H
#define RC_TESTS_OFFLOAD_H

#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>

/* Whether this kernel has UDP segmentation and receive offload (Linux 4.18 and 5.0): the
 * offload cases are skipped without them. */
static inline bool udp_offloads(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), v = 1200, one = 1;
	bool ok = fd >= 0 && setsockopt(fd, SOL_UDP, UDP_SEGMENT, &v, sizeof v) == 0 &&
	          setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof one) == 0;

	if (fd >= 0)
		close(fd);
	return ok;
}

#endif

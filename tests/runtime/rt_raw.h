/*
 * Raw ONC RPC records for the tests' hand-written peers (test_bidir, test_backchan): whole
 * reads and writes on a socket, and one-fragment records of 32-bit words.
 */
#ifndef RT_RAW_H
#define RT_RAW_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

/* Read or write all n bytes at b (false: end of stream or an error). */
static inline bool full_io(int fd, void *b, size_t n, bool wr)
{
	unsigned char *p = b;
	while (n > 0) {
		ssize_t k = wr ? write(fd, p, n) : read(fd, p, n);
		if (k <= 0) {
			if (k < 0 && errno == EINTR)
				continue;
			return false;
		}
		p += k;
		n -= (size_t)k;
	}
	return true;
}

/* One record (one fragment) of n 32-bit words. */
static inline bool send_words(int fd, const uint32_t *w, unsigned n)
{
	uint32_t b[64];
	b[0] = htonl(0x80000000u | (n * 4));
	for (unsigned i = 0; i < n; i++)
		b[1 + i] = htonl(w[i]);
	return full_io(fd, b, 4 * (n + 1), true);
}

/* Read one record into w (up to cap words); returns the word count, -1 at the end. */
static inline int recv_words(int fd, uint32_t *w, unsigned cap)
{
	uint32_t mark, len;
	if (!full_io(fd, &mark, 4, false))
		return -1;
	len = ntohl(mark) & 0x7fffffffu;
	if (len % 4 != 0 || len / 4 > cap || !full_io(fd, w, len, false))
		return -1;
	for (unsigned i = 0; i < len / 4; i++)
		w[i] = ntohl(w[i]);
	return (int)(len / 4);
}

#endif

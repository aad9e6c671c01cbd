/*
 * Gathered sends (a client's stream call with big opaque<> / string<> arguments): the encode
 * buffer takes up to RC__GSEGS big items by reference, and the stream transport's sendv puts
 * the record on the wire with them in place -- the same bytes as the plain encoding, read from
 * the other end of a socket pair. Five big items: four gathered, the fifth copied; odd lengths
 * (padding after a gathered piece) and encoded bytes between and after the pieces.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtime/core/rpc.h"
#include "transports/transport.h"

enum { NBIG = 5 };
static const uint32_t sizes[NBIG] = {70001, 65536, 65539, 131072, 65537};
static char *big[NBIG];
static char *str; /* a 65538-character string */

/* The message: an int, then per big item an opaque<> and an int, then the string, an int. */
static bool xdr_msg(rc_xdr *x, void *unused)
{
	uint32_t v = 7;
	(void)unused;
	if (!rc_xdr_u_int(x, &v))
		return false;
	for (int i = 0; i < NBIG; i++) {
		uint32_t n = sizes[i];
		v = 100 + (uint32_t)i;
		if (!rc_xdr_bytes(x, &big[i], &n, UINT32_MAX) || !rc_xdr_u_int(x, &v))
			return false;
	}
	v = 9;
	return rc_xdr_string(x, &str, UINT32_MAX) && rc_xdr_u_int(x, &v);
}

typedef struct reader {
	int fd;
	unsigned char *buf;
	size_t want, got;
} reader;

static void *read_all(void *arg)
{
	reader *r = arg;
	while (r->got < r->want) {
		ssize_t n = read(r->fd, r->buf + r->got, r->want - r->got);
		if (n <= 0)
			break;
		r->got += (size_t)n;
	}
	return NULL;
}

static void gathered_record_is_the_plain_encoding(void **state)
{
	size_t total = 4 + 4 + 65538 + 2 + 4, plainlen;
	unsigned char *plain;
	rc__encbuf b;
	rc_xdr x;
	rc_tp *tp = NULL;
	int sv[2];
	pthread_t t;
	reader r;
	(void)state;
	for (int i = 0; i < NBIG; i++) {
		big[i] = malloc(sizes[i]);
		for (uint32_t k = 0; k < sizes[i]; k++)
			big[i][k] = (char)(k * 31 + (uint32_t)i);
		total += 4 + ((sizes[i] + 3) & ~3u) + 4;
	}
	str = malloc(65539);
	memset(str, 's', 65538);
	str[65538] = '\0';
	/* the plain encoding */
	plain = malloc(total);
	rc_xdrmem_create(&x, plain, total, RC_XDR_ENCODE);
	assert_true(xdr_msg(&x, NULL));
	plainlen = rc_xdr_getpos(&x);
	assert_int_equal(plainlen, total);
	/* the gathered one */
	rc__encbuf_init(&b, NULL, 0, 1u << 24);
	b.data = malloc(4096);
	b.cap = 4096;
	b.heap = true;
	b.gather = true;
	rc__encbuf_xdr_at(&b, &x, 0);
	assert_true(xdr_msg(&x, NULL));
	assert_int_equal(b.nseg, RC__GSEGS); /* the fifth big item was copied */
	assert_int_equal((size_t)(x.x_pos - x.x_base) + b.gbytes, total);
	/* through the stream transport */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(rc__tp_find("unix")->adopt(sv[0], 1u << 24, false, &tp), RC_OK);
	assert_non_null(tp->vt->sendv);
	r = (reader){sv[1], malloc(total + 4), total + 4, 0};
	assert_int_equal(pthread_create(&t, NULL, read_all, &r), 0);
	assert_int_equal(tp->vt->sendv(tp, rc__encbuf_msg(&b), (size_t)(x.x_pos - x.x_base), b.seg,
	                               b.nseg, 0),
	                 RC_OK);
	pthread_join(t, NULL);
	assert_int_equal(r.got, total + 4);
	assert_int_equal(r.buf[0], 0x80); /* one last fragment of total bytes */
	assert_int_equal(((size_t)r.buf[1] << 16) | ((size_t)r.buf[2] << 8) | r.buf[3], total);
	assert_memory_equal(r.buf + 4, plain, total);
	tp->vt->close(tp);
	close(sv[1]);
	rc__encbuf_free(&b);
	free(r.buf);
	free(plain);
	free(str);
	for (int i = 0; i < NBIG; i++)
		free(big[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gathered_record_is_the_plain_encoding),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

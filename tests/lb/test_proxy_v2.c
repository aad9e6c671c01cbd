/* test_proxy_v2 -- the PROXY protocol v2 header parser (transports/proxy_v2.c) and the
 * trusted-balancer list of ?proxy_from=, as named cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <string.h>

#include "transports/proxy_v2.h"

static const unsigned char sig[12] = {0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D,
                                      0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A};

/* A v2 header into b: command cmd (0 LOCAL, 1 PROXY), family byte fam, alen bytes of body. */
static size_t hdr(unsigned char *b, unsigned cmd, unsigned fam, const unsigned char *body,
                  size_t alen)
{
	memcpy(b, sig, 12);
	b[12] = (unsigned char)(0x20 | cmd);
	b[13] = (unsigned char)fam;
	b[14] = (unsigned char)(alen >> 8);
	b[15] = (unsigned char)alen;
	memcpy(b + 16, body, alen);
	return 16 + alen;
}

static const unsigned char v4body[12] = {10, 1, 2, 3, 127, 0, 0, 1, 0x30, 0x39, 0x08, 0x01};

static void tcp4_gives_the_client(void **state)
{
	unsigned char b[64];
	size_t n = hdr(b, 1, 0x11, v4body, 12), need = 0;
	rc__proxy_hdr h;
	const struct sockaddr_in *s = (const struct sockaddr_in *)&h.src.ss;

	(void)state;
	assert_int_equal(rc__proxy_parse(b, n, &need, &h), (int)n);
	assert_false(h.local);
	assert_int_equal(h.src.len, sizeof(struct sockaddr_in));
	assert_int_equal(s->sin_family, AF_INET);
	assert_int_equal(ntohs(s->sin_port), 12345);
	assert_int_equal(ntohl(s->sin_addr.s_addr), 0x0A010203);
}

static void tcp6_gives_the_client(void **state)
{
	unsigned char body[36] = {0}, b[64];
	size_t n, need;
	rc__proxy_hdr h;

	(void)state;
	body[15] = 1;  /* ::1 */
	body[32] = 0x01, body[33] = 0xBB; /* port 443 */
	n = hdr(b, 1, 0x21, body, 36);
	assert_int_equal(rc__proxy_parse(b, n, &need, &h), (int)n);
	assert_int_equal(h.src.ss.ss_family, AF_INET6);
	assert_int_equal(ntohs(((struct sockaddr_in6 *)&h.src.ss)->sin6_port), 443);
}

static void local_keeps_the_socket_peer(void **state)
{
	unsigned char b[64];
	size_t n = hdr(b, 0, 0x00, NULL, 0), need;
	rc__proxy_hdr h;

	(void)state;
	assert_int_equal(rc__proxy_parse(b, n, &need, &h), 16);
	assert_true(h.local);
	assert_int_equal(h.src.len, 0);
}

static void partial_asks_for_more(void **state)
{
	unsigned char b[64];
	size_t n = hdr(b, 1, 0x11, v4body, 12), need = 0;
	rc__proxy_hdr h;

	(void)state;
	assert_int_equal(rc__proxy_parse(b, 5, &need, &h), 0);
	assert_int_equal(need, 16);
	assert_int_equal(rc__proxy_parse(b, 20, &need, &h), 0);
	assert_int_equal(need, n);
}

static void tlvs_must_fill_the_block(void **state)
{
	unsigned char body[32], b[64];
	size_t need;
	rc__proxy_hdr h;

	(void)state;
	memcpy(body, v4body, 12);
	body[12] = 0x04, body[13] = 0, body[14] = 2, body[15] = 'o', body[16] = 'k'; /* NOOP */
	assert_int_equal(rc__proxy_parse(b, hdr(b, 1, 0x11, body, 17), &need, &h), 33);
	body[14] = 3; /* its length runs past the block */
	assert_int_equal(rc__proxy_parse(b, hdr(b, 1, 0x11, body, 17), &need, &h), -1);
	assert_int_equal(rc__proxy_parse(b, hdr(b, 1, 0x11, body, 14), &need, &h), -1);
}

static void malformed_is_refused(void **state)
{
	unsigned char b[64], rpc[8] = {0x80, 0, 0, 0x28, 0, 0, 0, 1};
	size_t n, need;
	rc__proxy_hdr h;

	(void)state;
	assert_int_equal(rc__proxy_parse(rpc, sizeof(rpc), &need, &h), -1); /* no header */
	assert_int_equal(rc__proxy_parse((const unsigned char *)"PROXY TCP4 ", 11, &need, &h), -1);
	n = hdr(b, 1, 0x11, v4body, 12);
	b[12] = 0x11; /* version 1 in the binary form */
	assert_int_equal(rc__proxy_parse(b, n, &need, &h), -1);
	n = hdr(b, 2, 0x11, v4body, 12); /* command 2 */
	assert_int_equal(rc__proxy_parse(b, n, &need, &h), -1);
	n = hdr(b, 1, 0x11, v4body, 8); /* an IPv4 block too short */
	assert_int_equal(rc__proxy_parse(b, n, &need, &h), -1);
	n = hdr(b, 1, 0x41, v4body, 12); /* family 4 */
	assert_int_equal(rc__proxy_parse(b, n, &need, &h), -1);
	b[14] = 0xFF, b[15] = 0xFF; /* longer than RC__PROXY_MAX */
	assert_int_equal(rc__proxy_parse(b, 16, &need, &h), -1);
}

static void proxy_from_parses_cidrs(void **state)
{
	rc__proxy_from f;

	(void)state;
	memset(&f, 0, sizeof(f));
	assert_true(rc__proxy_from_add(&f, "10.0.0.0/8,127.0.0.1,::1/128"));
	assert_int_equal(f.n, 3);
	assert_int_equal(f.net[0].bits, 8);
	assert_int_equal(f.net[1].bits, 32);
	assert_int_equal(f.net[2].family, AF_INET6);
	assert_false(rc__proxy_from_add(&f, "10.0.0.0/33"));
	assert_false(rc__proxy_from_add(&f, "example.com"));
	assert_false(rc__proxy_from_add(&f, "10.0.0.1/"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tcp4_gives_the_client),
		cmocka_unit_test(tcp6_gives_the_client),
		cmocka_unit_test(local_keeps_the_socket_peer),
		cmocka_unit_test(partial_asks_for_more),
		cmocka_unit_test(tlvs_must_fill_the_block),
		cmocka_unit_test(malformed_is_refused),
		cmocka_unit_test(proxy_from_parses_cidrs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_proxy_v2 -- the PROXY protocol header parser (transports/proxy_v2.c: v2, and v1's text
 * line) and the trusted-balancer list of ?proxy_from=, as named cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
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
	if (alen > 0) /* (body may be NULL then) */
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
	assert_int_equal(rc__proxy_parse((const unsigned char *)"PROXZ TCP4 ", 11, &need, &h), -1);
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

/* rc__proxy_parse on the text s (its whole length). */
static int v1(const char *s, size_t *need, rc__proxy_hdr *h)
{
	return rc__proxy_parse((const unsigned char *)s, strlen(s), need, h);
}

static void v1_tcp4_gives_the_client(void **state)
{
	static const char line[] = "PROXY TCP4 192.0.2.7 127.0.0.1 4242 2049\r\n";
	char b[128];
	size_t need;
	rc__proxy_hdr h;
	struct sockaddr_in *s = (struct sockaddr_in *)&h.src.ss;

	(void)state;
	/* the first record's bytes after it are not the header's */
	snprintf(b, sizeof(b), "%s\x80\x01\x02\x03", line);
	assert_int_equal(v1(b, &need, &h), (int)strlen(line));
	assert_false(h.local);
	assert_int_equal(h.src.len, sizeof(*s));
	assert_int_equal(s->sin_family, AF_INET);
	assert_int_equal(ntohs(s->sin_port), 4242);
	assert_int_equal(ntohl(s->sin_addr.s_addr), 0xC0000207);
}

static void v1_tcp6_gives_the_client(void **state)
{
	size_t need;
	rc__proxy_hdr h;
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)&h.src.ss;
	unsigned char want[16];

	(void)state;
	assert_int_equal(v1("PROXY TCP6 2001:db8::7 ::1 65535 0\r\n", &need, &h), 36);
	assert_int_equal(h.src.len, sizeof(*s));
	assert_int_equal(s->sin6_family, AF_INET6);
	assert_int_equal(ntohs(s->sin6_port), 65535);
	inet_pton(AF_INET6, "2001:db8::7", want);
	assert_memory_equal(&s->sin6_addr, want, 16);
}

static void v1_unknown_keeps_the_socket_peer(void **state)
{
	size_t need;
	rc__proxy_hdr h;

	(void)state;
	assert_int_equal(v1("PROXY UNKNOWN\r\n", &need, &h), 15);
	assert_int_equal(h.src.len, 0);
	/* what follows UNKNOWN is ignored, as the spec says */
	assert_int_equal(v1("PROXY UNKNOWN ffff:f...f:ffff 1 2\r\n", &need, &h), 35);
	assert_int_equal(h.src.len, 0);
}

static void v1_partial_asks_for_more(void **state)
{
	static const char line[] = "PROXY TCP4 192.0.2.7 127.0.0.1 4242 2049\r\n";
	size_t need = 0, n = strlen(line);
	rc__proxy_hdr h;

	(void)state;
	assert_int_equal(rc__proxy_parse((const unsigned char *)line, 0, &need, &h), 0);
	assert_int_equal(need, 8); /* no more than the shortest header (v1 UNKNOWN: 15) */
	assert_int_equal(rc__proxy_parse((const unsigned char *)line, 3, &need, &h), 0);
	assert_int_equal(need, 6);
	for (size_t k = 6; k < n; k++) {
		assert_int_equal(rc__proxy_parse((const unsigned char *)line, k, &need, &h), 0);
		assert_int_equal(need, k + 1);
	}
}

static void v1_malformed_is_refused(void **state)
{
	static const char *const bad[] = {
		"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n",        /* no CR */
		"PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n",      /* no such protocol */
		"PROXY tcp4 1.2.3.4 5.6.7.8 1 2\r\n",
		"PROXY TCP4 ::1 ::1 1 2\r\n",              /* addresses not of the family */
		"PROXY TCP6 1.2.3.4 5.6.7.8 1 2\r\n",
		"PROXY TCP4 1.2.3.4 5.6.7.999 1 2\r\n",
		"PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n",  /* ports */
		"PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n",
		"PROXY TCP4 1.2.3.4 5.6.7.8 -1 2\r\n",
		"PROXY TCP4 1.2.3.4 5.6.7.8 1 \r\n",
		"PROXY TCP4  1.2.3.4 5.6.7.8 1 2\r\n",     /* spaces */
		"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 \r\n",
		"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n",    /* fields */
		"PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n",
		"PROXY TCP4\r\n",
		"PROXY \r\n",
		"PROXY UNKNOWNX\r\n",
		"PROXY UNKNOWN\t\r\n",                     /* not printable */
		"PROXY\r\n",                                /* not "PROXY " */
	};
	char longer[RC__PROXY_V1_MAX + 8];
	size_t need;
	rc__proxy_hdr h;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (v1(bad[i], &need, &h) != -1)
			fail_msg("taken: %s", bad[i]);
	/* no line feed within the longest header: refused, not waited for */
	memset(longer, 'x', sizeof(longer));
	memcpy(longer, "PROXY UNKNOWN ", 14);
	assert_int_equal(rc__proxy_parse((const unsigned char *)longer, RC__PROXY_V1_MAX - 1,
	                                 &need, &h), 0);
	assert_int_equal(rc__proxy_parse((const unsigned char *)longer, RC__PROXY_V1_MAX, &need,
	                                 &h), -1);
	/* the longest taken: 107 bytes, CRLF included */
	memcpy(longer + RC__PROXY_V1_MAX - 2, "\r\n", 2);
	assert_int_equal(rc__proxy_parse((const unsigned char *)longer, sizeof(longer), &need, &h),
	                 RC__PROXY_V1_MAX);
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
		cmocka_unit_test(v1_tcp4_gives_the_client),
		cmocka_unit_test(v1_tcp6_gives_the_client),
		cmocka_unit_test(v1_unknown_keeps_the_socket_peer),
		cmocka_unit_test(v1_partial_asks_for_more),
		cmocka_unit_test(v1_malformed_is_refused),
		cmocka_unit_test(proxy_from_parses_cidrs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

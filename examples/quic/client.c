/*
 * quic -- call SHOUT over RPC-over-QUIC: one blocking call, then eight started at once,
 * which the client spreads over its pool of QUIC streams.
 *
 *   quic --ca FILE URI        (URI: quic://HOST:PORT, optionally ?streams=N)
 *
 * --ca: the CA that signed the server's certificate (the URI may say ?ca=FILE instead).
 * Exits 0 when every answer is right.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "quic.h"

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"ca", required_argument, NULL, 'a'},
	                                     {NULL, 0, NULL, 0}};
	rc_tls_client_opts tls = {RC_TLS_REQUIRED, NULL, NULL, NULL, NULL, NULL};
	rc_client *c;
	rc_error err;
	char buf[256], *in[8], *out[8] = {0}, *res = NULL, *arg = "hello over quic";
	rc_async *h[8];
	int o, bad = 0;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o != 'a')
			return 2;
		tls.ca_file = optarg;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: quic --ca FILE quic://HOST:PORT\n");
		return 2;
	}
	if (rc_client_create_tls(&c, argv[optind], QUIC_PROG, QUIC_VERS, &tls, &err) !=
	    RC_OK) {
		fprintf(stderr, "quic: %s\n", rc_error_format(&err, buf, sizeof(buf)));
		return 1;
	}
	if (shout_1(c, &arg, &res) != RC_OK)
		return 1;
	printf("%s -> %s (TLS: %s)\n", arg, res, rc_client_tls(c) ? "yes" : "no");
	rc_xdr_free(shout_1_info.xres, &res);
	for (int i = 0; i < 8; i++) {
		static char words[8][16];
		snprintf(words[i], sizeof(words[i]), "stream call %d", i);
		in[i] = words[i];
		if (shout_1_async(c, &in[i], &out[i], NULL, NULL, &h[i]) != RC_OK)
			return 1;
	}
	for (int i = 0; i < 8; i++) {
		if (rc_async_wait(h[i], 5000) != RC_OK || out[i] == NULL ||
		    strcasecmp(out[i], in[i]) != 0 || strcmp(out[i], in[i]) == 0)
			bad++;
		else
			printf("%s -> %s\n", in[i], out[i]);
		rc_async_release(h[i]);
		rc_xdr_free(shout_1_info.xres, &out[i]);
	}
	rc_client_destroy(c);
	return bad == 0 ? 0 : 1;
}

/*
 * quic-server -- SHOUT(s) answers s in capitals, over RPC-over-QUIC (quic://).
 *
 *   quic-server --cert FILE --key FILE [--listen URI]
 *
 *   --cert, --key  the server's certificate and key (PEM): QUIC is TLS 1.3 always, so a
 *                  quic:// listener needs them (rc_server_set_tls, as for RPC-over-TLS)
 *   --listen URI   where to listen (default quic://127.0.0.1:0: any free UDP port)
 *
 * Prints "listening URI" with the port it got, serves until SIGINT or SIGTERM, exits 0.
 */
#include <ctype.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quic.h"

bool shout_1_svc(char *const *arg, char **res, rc_svc_req *req)
{
	const rc_tls_peer *who = rc_svc_req_tls_peer(req); /* NULL: no client certificate */

	(void)who;
	if ((*res = strdup(*arg)) == NULL)
		return false;
	for (char *p = *res; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	return true;
}

static rc_server *srv;

static void on_signal(int sig)
{
	(void)sig;
	rc_server_stop(srv);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"listen", required_argument, NULL, 'l'},
	                                     {"cert", required_argument, NULL, 'c'},
	                                     {"key", required_argument, NULL, 'k'},
	                                     {NULL, 0, NULL, 0}};
	const char *listen = "quic://127.0.0.1:0";
	rc_tls_server_opts tls = {0};
	char bound[256], why[256];
	rc_status st;
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o == 'l')
			listen = optarg;
		else if (o == 'c')
			tls.cert_file = optarg;
		else if (o == 'k')
			tls.key_file = optarg;
		else
			return 2;
	}
	if (tls.cert_file == NULL) {
		fprintf(stderr, "usage: quic-server --cert FILE --key FILE [--listen URI]\n");
		return 2;
	}
	if ((st = rc_server_create(&srv)) != RC_OK ||
	    (st = quic_prog_1_register(srv, NULL)) != RC_OK) {
		fprintf(stderr, "quic-server: %s\n", rc_strerror(st));
		return 1;
	}
	/* the certificate first: the quic:// listener takes it from here */
	if ((st = rc_server_set_tls(srv, &tls, why, sizeof(why))) != RC_OK) {
		fprintf(stderr, "quic-server: TLS: %s: %s\n", rc_strerror(st), why);
		return 1;
	}
	if ((st = rc_server_listen(srv, listen, bound, sizeof(bound))) != RC_OK) {
		rc_error e;
		rc_server_geterr(srv, &e);
		fprintf(stderr, "quic-server: listen %s: %s\n", listen,
		        rc_error_format(&e, why, sizeof(why)));
		return 1;
	}
	printf("listening %s\n", bound);
	fflush(stdout);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	st = rc_server_run(srv);
	rc_server_destroy(srv);
	return st == RC_OK ? 0 : 1;
}

/* hello-server URI -- serves hello.x on URI; prints "listening URI"; stops on SIGTERM. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hello.h"

bool greet_1_svc(char *const *name, char **res, rc_svc_req *req)
{
	size_t n = strlen(*name) + 8;

	(void)req;
	if ((*res = malloc(n)) == NULL)
		return false;
	snprintf(*res, n, "hello, %s", *name);
	return true;
}

bool add_1_svc(const pair *p, int32_t *res, rc_svc_req *req)
{
	(void)req;
	*res = p->a + p->b;
	return true;
}

static rc_server *srv;

static void on_term(int sig)
{
	(void)sig;
	rc_server_stop(srv);
}

int main(int argc, char **argv)
{
	char uri[256];

	if (argc != 2 || rc_server_create(&srv) != RC_OK ||
	    hello_prog_1_register(srv, NULL) != RC_OK ||
	    rc_server_listen(srv, argv[1], uri, sizeof(uri)) != RC_OK) {
		fprintf(stderr, "usage: hello-server URI (or the server could not start)\n");
		return 1;
	}
	signal(SIGTERM, on_term);
	printf("listening %s\n", uri);
	fflush(stdout);
	rc_server_run(srv);
	signal(SIGTERM, SIG_IGN);
	rc_server_destroy(srv);
	return 0;
}

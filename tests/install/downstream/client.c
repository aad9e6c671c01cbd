/* hello-client URI NAME -- GREET(NAME) and ADD(2, 40) on URI; prints both results. */
#include <stdio.h>

#include "hello.h"

int main(int argc, char **argv)
{
	rc_client *c;
	rc_status st;
	char *greeting = NULL;
	pair p = {2, 40};
	int32_t sum = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: hello-client URI NAME\n");
		return 2;
	}
	if ((st = rc_client_create(&c, argv[1], HELLO_PROG, HELLO_VERS)) != RC_OK ||
	    (st = greet_1(c, &argv[2], &greeting)) != RC_OK || (st = add_1(c, &p, &sum)) != RC_OK) {
		fprintf(stderr, "hello-client: %s\n", rc_strerror(st));
		return 1;
	}
	printf("%s\n2 + 40 = %d\n", greeting, (int)sum);
	rc_xdr_free((rc_xdrproc)rc_xdr_wrapstring, &greeting);
	rc_client_destroy(c);
	return 0;
}

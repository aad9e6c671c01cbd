/*
 * leases -- two connections to a leases-server, and what the server keeps for each.
 * Connection A takes the leases named on the command line; connection B asks for the first
 * of them and is refused while A holds it; A's client is destroyed (its connection closes,
 * and the server's connection hook gives its leases back); B asks again until the lease is
 * its own, within 5 s. Prints each answer, and HELD at the end.
 *
 *   leases URI [NAME...]        (without NAME: alpha beta)
 *
 * Exits 0 when everything went as described, 1 otherwise.
 */
#include <stdio.h>
#include <time.h>

#include "leases.h"

static int fail(const char *what, rc_status st)
{
	fprintf(stderr, "leases: %s: %s\n", what, rc_strerror(st));
	return 1;
}

int main(int argc, char **argv)
{
	const char *defaults[] = {"alpha", "beta"};
	const char **names = argc > 2 ? (const char **)argv + 2 : defaults;
	int n = argc > 2 ? argc - 2 : 2;
	rc_client *a, *b;
	uint32_t got = 0, held = 0;
	rc_status st;

	if (argc < 2) {
		fprintf(stderr, "usage: %s URI [NAME...]\n", argv[0]);
		return 2;
	}
	/* two clients: two connections, each with its own state on the server */
	rc_error err;
	char why[256];
	if ((st = rc_client_create_ex(&a, argv[1], LEASES_PROG, LEASES_VERS, &err)) != RC_OK ||
	    (st = rc_client_create_ex(&b, argv[1], LEASES_PROG, LEASES_VERS, &err)) != RC_OK) {
		fprintf(stderr, "%s: %s: %s\n", argv[0], argv[1],
		        rc_error_format(&err, why, sizeof why));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		lease_name name = (char *)names[i];
		if ((st = leases_acquire_1(a, &name, &got)) != RC_OK)
			return fail("ACQUIRE", st);
		printf("A: %s %s\n", names[i], got ? "granted" : "refused");
	}
	lease_name first = (char *)names[0];
	if ((st = leases_acquire_1(b, &first, &got)) != RC_OK)
		return fail("ACQUIRE", st);
	printf("B: %s %s while A holds it\n", names[0], got ? "granted" : "refused");
	if (got)
		return 1;

	rc_client_destroy(a); /* A's connection closes: the server releases its leases */
	printf("A: disconnected\n");
	for (int tries = 0; !got && tries < 100; tries++) {
		if (tries > 0)
			nanosleep(&(struct timespec){0, 50000000}, NULL); /* the hook runs soon after */
		if ((st = leases_acquire_1(b, &first, &got)) != RC_OK)
			return fail("ACQUIRE", st);
	}
	printf("B: %s %s after A left\n", names[0], got ? "granted" : "still refused");
	if ((st = leases_held_1(b, &held)) != RC_OK)
		return fail("HELD", st);
	printf("leases held: %u\n", held);
	rc_client_destroy(b);
	return got && held == 1 ? 0 : 1;
}

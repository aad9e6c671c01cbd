/*
 * rstatus -- one line per host, in the manner of rup(1): how long it has been up, how many
 * users, what load. One blocking call per host.
 *
 *   rstatus URI...            e.g. rstatus udp://127.0.0.1:40001 tcp://server:40002
 *
 * Exits 0 when every host answered, 1 otherwise (the failures are on stderr).
 */
#include <inttypes.h>
#include <stdio.h>

#include "rstatus.h"

/* "3 days,  4:05" / "4:05" / "12 min" */
static void format_uptime(uint64_t s, char *buf, size_t len)
{
	uint64_t days = s / 86400, hours = s % 86400 / 3600, mins = s % 3600 / 60;
	int n = 0;

	if (days > 0)
		n = snprintf(buf, len, "%" PRIu64 " day%s, ", days, days == 1 ? "" : "s");
	if (n < 0 || (size_t)n >= len)
		return;
	if (days > 0 || hours > 0)
		snprintf(buf + n, len - (size_t)n, "%2" PRIu64 ":%02" PRIu64, hours, mins);
	else
		snprintf(buf + n, len - (size_t)n, "%" PRIu64 " min", mins);
}

/* Ask one host; print its line. Returns RC_OK or why it failed. */
static rc_status show(const char *uri)
{
	rc_client *clnt;
	rstatus rs = {0};
	char up[64];

	rc_status st = rc_client_create(&clnt, uri, RSTATUS_PROG, RSTATUS_VERS);
	if (st != RC_OK)
		return st;
	st = rc_client_set_timeout(clnt, 5000); /* a host that is down: give up after 5 s */
	if (st == RC_OK)
		st = rstatus_get_1(clnt, &rs);
	if (st == RC_OK) {
		format_uptime(rs.uptime, up, sizeof up);
		printf("%-20s up %s, %3u user%s, load average: %.2f, %.2f, %.2f\n", rs.host, up,
		       rs.users, rs.users == 1 ? " " : "s", rs.load[0], rs.load[1], rs.load[2]);
	}
	rc_xdr_free((rc_xdrproc)xdr_rstatus, &rs); /* the host name decoding allocated */
	rc_client_destroy(clnt);
	return st;
}

int main(int argc, char **argv)
{
	int failed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s URI...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		rc_status st = show(argv[i]);
		if (st != RC_OK) {
			fprintf(stderr, "%s: %s: %s\n", argv[0], argv[i], rc_strerror(st));
			failed = 1;
		}
	}
	return failed;
}

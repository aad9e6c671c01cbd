/*
 * rstatus -- one line per host, in the manner of rup(1): how long it has been up, how many
 * users, what load. One blocking call per host, or one broadcast call to all of them.
 *
 *   rstatus URI...            e.g. rstatus udp://127.0.0.1:40001 tcp://server:40002
 *   rstatus -b udp://ADDR:PORT [MS]
 *                             one call to a broadcast (or multicast) address, e.g.
 *                             udp://192.168.1.255:40001: a line per server that answers within
 *                             MS milliseconds (default 2000), then how many did
 *
 * Exits 0 when every host answered (with -b: when one did), 1 otherwise (the failures are on
 * stderr).
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

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

/* Print one host's line. */
static void print_line(const rstatus *rs)
{
	char up[64];

	format_uptime(rs->uptime, up, sizeof up);
	printf("%-20s up %s, %3u user%s, load average: %.2f, %.2f, %.2f\n", rs->host, up,
	       rs->users, rs->users == 1 ? " " : "s", rs->load[0], rs->load[1], rs->load[2]);
}

/* rc_broadcast's handler: each answer's line, with the address it came from; never stops. */
static bool on_answer(void *udata, const void *res, const struct sockaddr *from, unsigned len)
{
	char addr[64] = "?";

	(void)len;
	if (from->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)from)->sin_addr, addr,
		          sizeof addr);
	else if (from->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)from)->sin6_addr,
		          addr, sizeof addr);
	print_line(res);
	printf("%-20s (answered from %s)\n", "", addr);
	(*(int *)udata)++;
	return false;
}

/* rup's way: one call to every host at a broadcast address; RC_OK when one answered. */
static rc_status broadcast(const char *uri, uint32_t ms)
{
	int n = 0;
	rc_status st = rc_broadcast(uri, RSTATUS_PROG, RSTATUS_VERS, RSTATUS_GET,
	                            (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)xdr_rstatus,
	                            sizeof(rstatus), on_answer, &n, ms);

	printf("broadcast to %s: %d host%s answered\n", uri, n, n == 1 ? "" : "s");
	if (st == RC_TIMEDOUT) /* the deadline ends every broadcast */
		st = n > 0 ? RC_OK : RC_TIMEDOUT;
	return st;
}

/* Ask one host; print its line. Returns RC_OK, or the failure with why (len bytes) saying it
 * in words ("can't connect: Connection refused"). */
static rc_status show(const char *uri, char *why, size_t len)
{
	rc_client *clnt;
	rstatus rs = {0};
	rc_error err;

	rc_status st = rc_client_create_ex(&clnt, uri, RSTATUS_PROG, RSTATUS_VERS, &err);
	if (st != RC_OK) {
		rc_error_format(&err, why, len);
		return st;
	}
	st = rc_client_set_timeout(clnt, 5000); /* a host that is down: give up after 5 s */
	if (st == RC_OK)
		st = rstatus_get_1(clnt, &rs);
	if (st == RC_OK)
		print_line(&rs);
	rc_client_geterr(clnt, &err);
	rc_error_format(&err, why, len);
	rc_xdr_free((rc_xdrproc)xdr_rstatus, &rs); /* the host name decoding allocated */
	rc_client_destroy(clnt);
	return st;
}

int main(int argc, char **argv)
{
	int failed = 0;

	if (argc < 2 || (strcmp(argv[1], "-b") == 0 && (argc < 3 || argc > 4))) {
		fprintf(stderr, "usage: %s URI... | %s -b udp://ADDR:PORT [MS]\n", argv[0], argv[0]);
		return 2;
	}
	if (strcmp(argv[1], "-b") == 0) {
		rc_status st = broadcast(argv[2], argc == 4 ? (uint32_t)strtoul(argv[3], NULL, 10)
		                                            : 2000);
		if (st != RC_OK)
			fprintf(stderr, "%s: %s: %s\n", argv[0], argv[2], rc_strerror(st));
		return st != RC_OK;
	}
	for (int i = 1; i < argc; i++) {
		char why[256];
		rc_status st = show(argv[i], why, sizeof why);
		if (st != RC_OK) {
			fprintf(stderr, "%s: %s: %s\n", argv[0], argv[i], why);
			failed = 1;
		}
	}
	return failed;
}

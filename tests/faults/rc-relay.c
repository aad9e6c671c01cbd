/*
 * rc-relay -- a fault-injecting UDP relay between RPC clients and one server (loopback tests).
 *
 *   rc-relay --server udp://HOST:PORT [--listen udp://127.0.0.1:0] [--seed N]
 *            [--drop P] [--dup P] [--reorder P] [--delay MS] [--jitter MS] [--hold MS]
 *            [--req-drop P] [--rep-drop P] ... (any fault option prefixed req- or rep-
 *            applies to one direction only: req = client to server, rep = server to client)
 *            [--max-held N] [--max-clients N]
 *
 * --drop/--dup/--reorder are probabilities in [0, 1], drawn independently per datagram;
 * --delay MS delays every datagram, --jitter MS adds a uniform random 0..MS; a reordered
 * datagram is held until the next one of its direction has gone out (or --hold MS passed).
 * Prints "listening udp://HOST:PORT" (flushed), relays until SIGTERM or SIGINT, then prints
 * its counters on stderr ("rc-relay: req in N out N drop N ...") and exits 0. Bad options:
 * usage on stderr, exit 2.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relay.h"

static const char *progname = "rc-relay";

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: %s --server udp://HOST:PORT [--listen udp://HOST:PORT] [--seed N]\n"
	        "       [--drop P] [--dup P] [--reorder P] [--delay MS] [--jitter MS] [--hold MS]\n"
	        "       [--req-OPTION V] [--rep-OPTION V] [--max-held N] [--max-clients N]\n"
	        "  P: probability in [0,1]; req-/rep- prefixed options set one direction only\n"
	        "  (req: client to server, rep: server to client)\n",
	        progname);
}

static bool parse_prob(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0.0 && v <= 1.0))
		return false;
	*out = v;
	return true;
}

static bool parse_u32(const char *s, uint32_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v > 0xFFFFFFFFull || *s == '-')
		return false;
	*out = (uint32_t)v;
	return true;
}

int main(int argc, char **argv)
{
	enum { O_SERVER = 1, O_LISTEN, O_SEED, O_MAXHELD, O_MAXCLIENTS, O_HELP, O_FAULT = 100 };
	/* fault options: base index k (0 drop, 1 dup, 2 reorder, 3 delay, 4 jitter, 5 hold),
	 * direction d (0 both, 1 req, 2 rep) -> val O_FAULT + d * 10 + k */
	static const char *const fnames[] = {"drop", "dup", "reorder", "delay", "jitter", "hold"};
	struct option longopts[32];
	char names[18][16];
	int n = 0;
	longopts[n++] = (struct option){"server", required_argument, NULL, O_SERVER};
	longopts[n++] = (struct option){"listen", required_argument, NULL, O_LISTEN};
	longopts[n++] = (struct option){"seed", required_argument, NULL, O_SEED};
	longopts[n++] = (struct option){"max-held", required_argument, NULL, O_MAXHELD};
	longopts[n++] = (struct option){"max-clients", required_argument, NULL, O_MAXCLIENTS};
	longopts[n++] = (struct option){"help", no_argument, NULL, O_HELP};
	for (int d = 0; d < 3; d++)
		for (int k = 0; k < 6; k++) {
			char *nm = names[d * 6 + k];
			snprintf(nm, sizeof names[0], "%s%s", d == 0 ? "" : d == 1 ? "req-" : "rep-",
			         fnames[k]);
			longopts[n++] = (struct option){nm, required_argument, NULL, O_FAULT + d * 10 + k};
		}
	longopts[n] = (struct option){NULL, 0, NULL, 0};

	relay_opts o;
	memset(&o, 0, sizeof o);
	o.seed = 1;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		uint32_t u = 0;
		double p = 0;
		switch (c) {
		case O_SERVER:
			o.server = optarg;
			continue;
		case O_LISTEN:
			o.listen = optarg;
			continue;
		case O_SEED: {
			char *end;
			errno = 0;
			o.seed = strtoull(optarg, &end, 0);
			if (errno || end == optarg || *end) {
				fprintf(stderr, "%s: bad --seed '%s'\n", progname, optarg);
				usage(stderr);
				return 2;
			}
			continue;
		}
		case O_MAXHELD:
		case O_MAXCLIENTS:
			if (!parse_u32(optarg, &u) || u == 0 || u > 1000000) {
				fprintf(stderr, "%s: bad %s '%s'\n", progname, argv[optind - 1], optarg);
				usage(stderr);
				return 2;
			}
			if (c == O_MAXHELD)
				o.max_held = u;
			else
				o.max_clients = u;
			continue;
		case O_HELP:
			usage(stdout);
			return 0;
		default:
			break;
		}
		if (c < O_FAULT || c >= O_FAULT + 30) {
			fprintf(stderr, "%s: bad option '%s'\n", progname, argv[optind - 1]);
			usage(stderr);
			return 2;
		}
		int d = (c - O_FAULT) / 10, k = (c - O_FAULT) % 10;
		bool ok = k <= 2 ? parse_prob(optarg, &p) : parse_u32(optarg, &u) && u <= 600000;
		if (!ok) {
			fprintf(stderr, "%s: bad --%s%s '%s'\n", progname,
			        d == 0 ? "" : d == 1 ? "req-" : "rep-", fnames[k], optarg);
			usage(stderr);
			return 2;
		}
		for (int dir = 0; dir < 2; dir++) {
			if (d != 0 && d - 1 != dir)
				continue;
			relay_dir_opts *x = &o.dir[dir];
			switch (k) {
			case 0: x->drop = p; break;
			case 1: x->dup = p; break;
			case 2: x->reorder = p; break;
			case 3: x->delay_ms = u; break;
			case 4: x->jitter_ms = u; break;
			case 5: x->hold_ms = u; break;
			}
		}
	}
	if (optind < argc || !o.server) {
		if (optind < argc)
			fprintf(stderr, "%s: unexpected argument '%s'\n", progname, argv[optind]);
		else
			fprintf(stderr, "%s: --server is required\n", progname);
		usage(stderr);
		return 2;
	}

	/* Signals are taken synchronously by the main thread (the relay's thread inherits the mask). */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	char err[300];
	relay *r = relay_start(&o, err, sizeof err);
	if (!r) {
		fprintf(stderr, "%s: %s\n", progname, err);
		return 1;
	}
	printf("listening %s\n", relay_uri(r));
	fflush(stdout);
	int sig = 0;
	sigwait(&set, &sig);
	relay_stats s;
	relay_get_stats(r, &s);
	relay_stop(r);
	char line[600];
	fprintf(stderr, "%s: %s\n", progname, relay_format_stats(&s, line, sizeof line));
	return 0;
}

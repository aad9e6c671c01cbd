/*
 * The rpcbind layer (runtime/rpcbind/rpcbind.c): universal addresses, what a listening socket is
 * registered as, the entry report's text and rc_client_create_ex's detail -- and, against a
 * real rpcbind, the registration rules: a [::] listener registered for IPv4 and IPv6, a live
 * server's registration never taken over by surprise, a stale one replaced, RC_RPCBIND_TAKEOVER,
 * two listeners of one netid, listeners added later, and the look-up's errno when rpcbind is
 * gone.
 *
 * The live cases need RC_TEST_RPCBIND=1 (tests/interop/with-rpcbind.sh sets it after starting a
 * private rpcbind, in a network namespace of its own when it can); otherwise they are skipped.
 * The last case stops rpcbind; it runs only when RC_TEST_RPCBIND_PID names one this run may
 * stop.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "rt_fixture.h"
#include "runtime/rpcbind/rpcbind.h"

#define RB_PROG 100000u

/* ---- without rpcbind ---------------------------------------------------------------------- */

static void uaddr_ports(void **state)
{
	(void)state;
	assert_int_equal(rc__uaddr_port("127.0.0.1.8.1"), 2049);
	assert_int_equal(rc__uaddr_port("::.8.1"), 2049);
	assert_int_equal(rc__uaddr_port("::1.0.111"), 111);
	assert_int_equal(rc__uaddr_port("fe80::1.255.255"), 65535);
	assert_int_equal(rc__uaddr_port(""), -1);
	assert_int_equal(rc__uaddr_port("8.1"), -1);
	assert_int_equal(rc__uaddr_port(".8.1"), -1);
	assert_int_equal(rc__uaddr_port("127.0.0.1.256.1"), -1);
	assert_int_equal(rc__uaddr_port("127.0.0.1.8."), -1);
	assert_int_equal(rc__uaddr_port("127.0.0.1.8.1x"), -1);
	assert_int_equal(rc__uaddr_port("127.0.0.1.+8.1"), -1);
	assert_int_equal(rc__uaddr_port("127.0.0.1.0008.1"), -1);
}

static void uaddr_uris(void **state)
{
	char uri[128];
	(void)state;
	assert_int_equal(rc__uaddr_uri("udp", "0.0.0.0.8.1", uri, sizeof(uri)), RC_OK);
	assert_string_equal(uri, "udp://127.0.0.1:2049");
	assert_int_equal(rc__uaddr_uri("tcp", "10.1.2.3.0.111", uri, sizeof(uri)), RC_OK);
	assert_string_equal(uri, "tcp://10.1.2.3:111");
	assert_int_equal(rc__uaddr_uri("tcp6", "::.8.1", uri, sizeof(uri)), RC_OK);
	assert_string_equal(uri, "tcp://[::1]:2049");
	assert_int_equal(rc__uaddr_uri("udp6", "fd00::2.4.0", uri, sizeof(uri)), RC_OK);
	assert_string_equal(uri, "udp://[fd00::2]:1024");
	assert_int_equal(rc__uaddr_uri("local", "/run/rpcbind.sock", uri, sizeof(uri)),
	                 RC_UNKNOWNADDR);
	assert_int_equal(rc__uaddr_uri("udp", "::.8.1", uri, sizeof(uri)), RC_UNKNOWNADDR);
	assert_int_equal(rc__uaddr_uri("udp6", "127.0.0.1.8.1", uri, sizeof(uri)), RC_UNKNOWNADDR);
	assert_int_equal(rc__uaddr_uri("tcp", "10.0.0.1.0.0", uri, sizeof(uri)), RC_UNKNOWNADDR);
	assert_int_equal(rc__uaddr_uri("tcp", "10.0.0.1", uri, sizeof(uri)), RC_UNKNOWNADDR);
	assert_int_equal(rc__uaddr_uri("udp", "0.0.0.0.8.1", uri, 10), RC_UNKNOWNADDR);
	/* the draft's netids for RPC-over-QUIC */
	assert_int_equal(rc__uaddr_uri("quic", "0.0.0.0.8.1", uri, sizeof(uri)), RC_OK);
	assert_string_equal(uri, "quic://127.0.0.1:2049");
	assert_int_equal(rc__uaddr_uri("quic6", "fd00::2.4.0", uri, sizeof(uri)), RC_OK);
	assert_string_equal(uri, "quic://[fd00::2]:1024");
	assert_int_equal(rc__uaddr_uri("quic", "::.8.1", uri, sizeof(uri)), RC_UNKNOWNADDR);
	assert_int_equal(rc__uaddr_uri("quic6", "127.0.0.1.8.1", uri, sizeof(uri)),
	                 RC_UNKNOWNADDR);
}

/* A QUIC listener's bound URI gives netid quic or quic6 and its universal address; anything
 * else gives nothing. */
static void quic_listener_entries(void **state)
{
	rc__rpcb_addr a[1];
	(void)state;
	assert_int_equal(rc__rpcb_quic_addrs("quic://127.0.0.1:2049", a), 1);
	assert_string_equal(a[0].netid, "quic");
	assert_string_equal(a[0].uaddr, "127.0.0.1.8.1");
	assert_false(a[0].implied);
	assert_int_equal(rc__rpcb_quic_addrs("quic://[::1]:1024", a), 1);
	assert_string_equal(a[0].netid, "quic6");
	assert_string_equal(a[0].uaddr, "::1.4.0");
	assert_int_equal(rc__rpcb_quic_addrs("quic://0.0.0.0:443", a), 1);
	assert_string_equal(a[0].uaddr, "0.0.0.0.1.187");
	assert_int_equal(rc__rpcb_quic_addrs("tcp://127.0.0.1:2049", a), 0);
	assert_int_equal(rc__rpcb_quic_addrs("quic://localhost:2049", a), 0);
	assert_int_equal(rc__rpcb_quic_addrs("quic://127.0.0.1", a), 0);
	assert_int_equal(rc__rpcb_quic_addrs("quic://", a), 0);
	assert_int_equal(rc__rpcb_quic_addrs(NULL, a), 0);
}

/* A socket of family/type bound to addr (a numeric host), port 0; v6only -1 leaves
 * IPV6_V6ONLY as the system sets it. Returns the descriptor and its port. */
static int bound(int family, int type, const char *addr, int v6only, unsigned *port)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd = socket(family, type, 0);

	assert_true(fd >= 0);
	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, addr, &s4->sin_addr), 1);
		sl = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, addr, &s6->sin6_addr), 1);
		sl = sizeof(*s6);
		if (v6only >= 0)
			assert_int_equal(setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only,
			                            sizeof(v6only)), 0);
	}
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, sl), 0);
	sl = sizeof(ss);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &sl), 0);
	*port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
	                                : ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

/* a must be netid at host (a universal address's host part) and port, implied or not. */
static void check_addr(const rc__rpcb_addr *a, const char *netid, const char *host,
                       unsigned port, bool implied)
{
	char want[64];

	snprintf(want, sizeof(want), "%s.%u.%u", host, port >> 8, port & 255);
	assert_string_equal(a->netid, netid);
	assert_string_equal(a->uaddr, want);
	assert_int_equal(a->implied, implied);
}

static void listener_entries(void **state)
{
	rc__rpcb_addr a[2];
	unsigned port;
	int fd;
	(void)state;

	fd = bound(AF_INET, SOCK_DGRAM, "127.0.0.1", -1, &port);
	assert_int_equal(rc__rpcb_lsn_addrs(fd, true, a), 1);
	check_addr(&a[0], "udp", "127.0.0.1", port, false);
	close(fd);
	/* [::] taking IPv4 too: both, the IPv4 side marked implied, on the same port */
	fd = bound(AF_INET6, SOCK_STREAM, "::", 0, &port);
	assert_int_equal(rc__rpcb_lsn_addrs(fd, false, a), 2);
	check_addr(&a[0], "tcp6", "::", port, false);
	check_addr(&a[1], "tcp", "0.0.0.0", port, true);
	close(fd);
	/* [::] IPv6 only: what it serves, no more */
	fd = bound(AF_INET6, SOCK_DGRAM, "::", 1, &port);
	assert_int_equal(rc__rpcb_lsn_addrs(fd, true, a), 1);
	check_addr(&a[0], "udp6", "::", port, false);
	close(fd);
	/* ::1 never takes IPv4 */
	fd = bound(AF_INET6, SOCK_DGRAM, "::1", 0, &port);
	assert_int_equal(rc__rpcb_lsn_addrs(fd, true, a), 1);
	check_addr(&a[0], "udp6", "::1", port, false);
	close(fd);
	/* a v4-mapped address serves that IPv4 address alone */
	fd = bound(AF_INET6, SOCK_DGRAM, "::ffff:127.0.0.1", 0, &port);
	assert_int_equal(rc__rpcb_lsn_addrs(fd, true, a), 1);
	check_addr(&a[0], "udp", "127.0.0.1", port, false);
	close(fd);
	/* Unix-domain: not registered */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(rc__rpcb_lsn_addrs(fd, false, a), 0);
	close(fd);
	assert_int_equal(rc__rpcb_lsn_addrs(-1, false, a), 0);
}

static void entry_text(void **state)
{
	rc_rpcbind_entry e = {.prog = 100003, .vers = 3, .netid = "udp", .uaddr = "0.0.0.0.8.1"};
	char buf[256], tiny[8];
	(void)state;

	assert_string_equal(rc_rpcbind_entry_format(&e, buf, sizeof(buf)),
	                    "program 100003 version 3 udp 0.0.0.0.8.1: registered");
	snprintf(e.holder, sizeof(e.holder), "0.0.0.0.8.2");
	assert_string_equal(rc_rpcbind_entry_format(&e, buf, sizeof(buf)),
	                    "program 100003 version 3 udp 0.0.0.0.8.1: registered (replacing "
	                    "0.0.0.0.8.2)");
	e.status = RC_PROGREGISTERED;
	assert_string_equal(rc_rpcbind_entry_format(&e, buf, sizeof(buf)),
	                    "program 100003 version 3 udp 0.0.0.0.8.1: not registered: a live "
	                    "server holds it at 0.0.0.0.8.2 (RC_RPCBIND_TAKEOVER takes over)");
	e.status = RC_PMAPFAILURE;
	assert_string_equal(rc_rpcbind_entry_format(&e, buf, sizeof(buf)),
	                    "program 100003 version 3 udp 0.0.0.0.8.1: rpcbind refused to "
	                    "register it (0.0.0.0.8.2 is registered)");
	e.holder[0] = '\0';
	assert_string_equal(rc_rpcbind_entry_format(&e, buf, sizeof(buf)),
	                    "program 100003 version 3 udp 0.0.0.0.8.1: rpcbind refused to "
	                    "register it");
	e.status = RC_CANTRECV;
	e.sys_errno = ECONNREFUSED;
	assert_string_equal(rc_rpcbind_entry_format(&e, buf, sizeof(buf)),
	                    "program 100003 version 3 udp 0.0.0.0.8.1: not registered: rpcbind: "
	                    "can't receive reply: Connection refused");
	e.status = RC_NOTSUPP;
	assert_string_equal(rc_rpcbind_entry_format(&e, buf, sizeof(buf)),
	                    "program 100003 version 3 udp 0.0.0.0.8.1: not registered: PMAP "
	                    "version 2 registers IPv4 only");
	assert_string_equal(rc_rpcbind_entry_format(&e, tiny, sizeof(tiny)), "program");
	assert_string_equal(rc_rpcbind_entry_format(NULL, buf, sizeof(buf)), "");
	assert_string_equal(rc_status_name(RC_PROGREGISTERED), "RC_PROGREGISTERED");
	assert_int_equal(rc_server_rpcbind_entries(NULL, NULL, 0), 0);
	assert_int_equal(rc_server_rpcbind_ex(NULL, true, 0), RC_INVAL);
	assert_int_equal(rc_server_rpcbind_ex(NULL, true, 2), RC_INVAL);
}

static void create_ex_details(void **state)
{
	rc_client *c = (rc_client *)1;
	rc_error e;
	char buf[256];
	(void)state;

	assert_int_equal(rc_client_create_ex(&c, "udp://[::1", RT_PROG, 1, &e), RC_UNKNOWNADDR);
	assert_null(c);
	assert_int_equal(e.status, RC_UNKNOWNADDR);
	assert_int_equal(e.rpcbind_vers, 0);
	assert_int_equal(rc_client_create_ex(NULL, "udp://127.0.0.1:1", RT_PROG, 1, &e), RC_INVAL);
	assert_int_equal(e.status, RC_INVAL);
	assert_int_equal(rc_client_create_ex(&c, NULL, RT_PROG, 1, NULL), RC_INVAL);
	/* a port nothing listens on: the connect's errno */
	assert_int_equal(rc_client_create_ex(&c, "tcp://127.0.0.1:1", RT_PROG, 1, &e), RC_CANTSEND);
	assert_null(c);
	assert_int_equal(e.status, RC_CANTSEND);
	assert_int_equal(e.sys_errno, ECONNREFUSED);
	assert_int_equal(e.rpcbind_vers, 0);
	assert_int_equal(e.low, 1); /* could not connect */
	assert_string_equal(rc_error_format(&e, buf, sizeof(buf)),
	                    "can't connect: Connection refused");
	/* the detail's text for a look-up */
	e.status = RC_PMAPFAILURE;
	e.rpcbind_vers = 4;
	e.rpcbind_status = RC_CANTRECV;
	assert_string_equal(rc_error_format(&e, buf, sizeof(buf)),
	                    "port mapper (rpcbind) failure: Connection refused (rpcbind version 4: "
	                    "can't receive reply)");
	e.status = RC_PROGNOTREGISTERED;
	e.sys_errno = 0;
	e.rpcbind_vers = 2;
	e.rpcbind_status = RC_OK;
	assert_string_equal(rc_error_format(&e, buf, sizeof(buf)),
	                    "program not registered with rpcbind (rpcbind version 2)");
	/* a URI with its port never asks rpcbind */
	assert_int_equal(rc_client_create_ex(&c, "udp://127.0.0.1:9", RT_PROG, 1, &e), RC_OK);
	assert_int_equal(e.status, RC_OK);
	assert_int_equal(e.rpcbind_vers, 0);
	rc_client_destroy(c);
}

/* ---- against a real rpcbind --------------------------------------------------------------- */

/* Skip unless rpcbind runs for this run as mode says: "1" (with its local socket) or "pmap"
 * (tests/interop/with-rpcbind.sh --pmap-only: no local socket, SET over loopback UDP allowed). */
static void need_mode(const char *mode)
{
	const char *v = getenv("RC_TEST_RPCBIND");
	if (v == NULL || strcmp(v, mode) != 0) {
		print_message("     (no rpcbind of this kind for this run: tests/interop/with-rpcbind.sh"
		              "%s runs it)\n", strcmp(mode, "1") ? " --pmap-only" : "");
		skip();
	}
}

static void need_rpcbind(void)
{
	need_mode("1");
}

typedef struct rb_rpcb {
	uint32_t prog, vers;
	char *netid, *addr, *owner;
} rb_rpcb;

static bool xdr_rb_rpcb(rc_xdr *x, rb_rpcb *r)
{
	return rc_xdr_u_int(x, &r->prog) && rc_xdr_u_int(x, &r->vers) &&
	       rc_xdr_string(x, &r->netid, 255) && rc_xdr_string(x, &r->addr, 255) &&
	       rc_xdr_string(x, &r->owner, 255);
}

/* PMAP v2's mapping, four words: prog, vers, prot, port. */
static bool xdr_rb_pmap(rc_xdr *x, uint32_t *m)
{
	return rc_xdr_u_int(x, &m[0]) && rc_xdr_u_int(x, &m[1]) && rc_xdr_u_int(x, &m[2]) &&
	       rc_xdr_u_int(x, &m[3]);
}

static bool xdr_rb_str(rc_xdr *x, char **s)
{
	return rc_xdr_string(x, s, 255);
}

/* RPCBIND v4 GETADDR of (prog, vers) asked over rpcbind_uri (its transport picks the netid):
 * the port rpcbind gives, 0 if none. */
static int rb_port(const char *rpcbind_uri, uint32_t prog, uint32_t vers)
{
	rc_client *c;
	rb_rpcb q = {prog, vers, "", "", ""};
	char *ua = NULL;
	int port;

	assert_int_equal(rc_client_create(&c, rpcbind_uri, RB_PROG, 4), RC_OK);
	assert_int_equal(rc_call(c, 3, (rc_xdrproc)xdr_rb_rpcb, &q, (rc_xdrproc)xdr_rb_str, &ua),
	                 RC_OK);
	rc_client_destroy(c);
	port = ua[0] ? rc__uaddr_port(ua) : 0;
	free(ua);
	return port;
}

/* RPCBIND v4 SET or UNSET over the local socket. */
static bool rb_change(uint32_t proc, uint32_t prog, uint32_t vers, const char *netid,
                      const char *uaddr)
{
	rc_client *c;
	rb_rpcb q = {prog, vers, (char *)netid, (char *)uaddr, "superuser"};
	bool ok = false;

	assert_int_equal(rc_client_create(&c, "unix:/run/rpcbind.sock", RB_PROG, 4), RC_OK);
	assert_int_equal(rc_call(c, proc, (rc_xdrproc)xdr_rb_rpcb, &q, (rc_xdrproc)rc_xdr_bool, &ok),
	                 RC_OK);
	rc_client_destroy(c);
	return ok;
}

static int port_of(const char *uri)
{
	return atoi(strrchr(uri, ':') + 1);
}

/* srv's entries (at most 16) into e; returns how many. */
static size_t entries(rc_server *srv, rc_rpcbind_entry *e)
{
	size_t n = rc_server_rpcbind_entries(srv, e, 16);
	char line[256];

	assert_true(n <= 16);
	for (size_t i = 0; i < n; i++)
		print_message("     %s [%s]\n", rc_rpcbind_entry_format(&e[i], line, sizeof(line)),
		              rc_status_name(e[i].status));
	return n;
}

/* A null call to RT_PROG version 1 through a URI without a port. */
static void call_through_rpcbind(const char *uri)
{
	rc_client *c;
	rc_error e;

	assert_int_equal(rc_client_create_ex(&c, uri, RT_PROG, 1, &e), RC_OK);
	assert_int_equal(e.rpcbind_vers, 4);
	assert_int_equal(rc_call(c, 0, (rc_xdrproc)rc_xdr_void, NULL, (rc_xdrproc)rc_xdr_void, NULL),
	                 RC_OK);
	rc_client_destroy(c);
}

/* Before each live case: nothing of RT_PROG registered. */
static void clean_slate(void)
{
	(void)rb_change(2, RT_PROG, 1, "", "");
	(void)rb_change(2, RT_PROG, 2, "", "");
}

static const char *const dual_uris[] = {"udp://[::]:0", "tcp://[::]:0", NULL};

static void dual_stack_registered_for_ipv4_and_ipv6(void **state)
{
	static const char *const netids[] = {"udp6", "tcp6", "udp", "tcp"};
	rt_server a;
	rc_rpcbind_entry e[16];
	(void)state;

	need_rpcbind();
	clean_slate();
	assert_int_equal(rt_start(&a, dual_uris, 1), 0);
	assert_int_equal(rc_server_rpcbind(a.srv, true), RC_OK);
	assert_int_equal(entries(a.srv, e), 8); /* versions 1 and 2, four netids each */
	for (size_t i = 0; i < 8; i++) {
		assert_int_equal(e[i].prog, RT_PROG);
		assert_int_equal(e[i].vers, 1 + i / 4);
		assert_string_equal(e[i].netid, netids[i % 4]);
		assert_int_equal(e[i].status, RC_OK);
		assert_int_equal(rc__uaddr_port(e[i].uaddr), port_of(a.uri[i % 2]));
	}
	/* found over IPv4 and IPv6, UDP and TCP */
	assert_int_equal(rb_port("udp://127.0.0.1:111", RT_PROG, 1), port_of(a.uri[0]));
	assert_int_equal(rb_port("tcp://127.0.0.1:111", RT_PROG, 1), port_of(a.uri[1]));
	assert_int_equal(rb_port("udp://[::1]:111", RT_PROG, 2), port_of(a.uri[0]));
	assert_int_equal(rb_port("tcp://[::1]:111", RT_PROG, 2), port_of(a.uri[1]));
	call_through_rpcbind("udp://127.0.0.1");
	call_through_rpcbind("tcp://127.0.0.1");
	call_through_rpcbind("udp://[::1]");
	call_through_rpcbind("tcp://[::1]");
	rt_stop(&a);
	/* unregistered at destroy */
	assert_int_equal(rb_port("udp://127.0.0.1:111", RT_PROG, 1), 0);
	assert_int_equal(rb_port("tcp://[::1]:111", RT_PROG, 1), 0);
}

static const char *const v4_uris[] = {"udp://127.0.0.1:0", "tcp://127.0.0.1:0", NULL};

static void live_server_kept_then_taken_over(void **state)
{
	rt_server a, b, c;
	rc_rpcbind_entry e[16];
	char ua[64];
	(void)state;

	need_rpcbind();
	clean_slate();
	assert_int_equal(rt_start(&a, v4_uris, 1), 0);
	assert_int_equal(rc_server_rpcbind(a.srv, true), RC_OK);
	/* b: refused while a answers; nothing of a's changes */
	assert_int_equal(rt_start(&b, v4_uris, 1), 0);
	assert_int_equal(rc_server_rpcbind(b.srv, true), RC_PROGREGISTERED);
	assert_int_equal(entries(b.srv, e), 4);
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(e[i].status, RC_PROGREGISTERED);
		snprintf(ua, sizeof(ua), "127.0.0.1.%d.%d", port_of(a.uri[i % 2]) >> 8,
		         port_of(a.uri[i % 2]) & 255);
		assert_string_equal(e[i].holder, ua);
	}
	assert_int_equal(rb_port("udp://127.0.0.1:111", RT_PROG, 1), port_of(a.uri[0]));
	assert_int_equal(rb_port("tcp://127.0.0.1:111", RT_PROG, 2), port_of(a.uri[1]));
	rt_stop(&b); /* b's exit leaves a's registration alone */
	assert_int_equal(rb_port("udp://127.0.0.1:111", RT_PROG, 1), port_of(a.uri[0]));
	assert_int_equal(rb_port("tcp://127.0.0.1:111", RT_PROG, 1), port_of(a.uri[1]));

	/* c takes over, explicitly */
	assert_int_equal(rt_start(&c, v4_uris, 1), 0);
	assert_int_equal(rc_server_rpcbind_ex(c.srv, true, RC_RPCBIND_TAKEOVER), RC_OK);
	assert_int_equal(entries(c.srv, e), 4);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(e[i].status, RC_OK);
	assert_int_equal(rb_port("udp://127.0.0.1:111", RT_PROG, 1), port_of(c.uri[0]));
	assert_int_equal(rb_port("tcp://127.0.0.1:111", RT_PROG, 2), port_of(c.uri[1]));
	rt_stop(&a); /* a's exit removes nothing of c's */
	assert_int_equal(rb_port("udp://127.0.0.1:111", RT_PROG, 1), port_of(c.uri[0]));
	assert_int_equal(rb_port("tcp://127.0.0.1:111", RT_PROG, 2), port_of(c.uri[1]));
	call_through_rpcbind("tcp://127.0.0.1");
	rt_stop(&c);
	assert_int_equal(rb_port("udp://127.0.0.1:111", RT_PROG, 1), 0);
}

static void stale_registration_replaced(void **state)
{
	rt_server a;
	rc_rpcbind_entry e[16];
	char stale[64];
	unsigned port;
	int fd;
	(void)state;

	need_rpcbind();
	clean_slate();
	/* a registration left by a server that is gone: nothing answers at its port */
	fd = bound(AF_INET, SOCK_DGRAM, "127.0.0.1", -1, &port);
	close(fd);
	snprintf(stale, sizeof(stale), "127.0.0.1.%u.%u", port >> 8, port & 255);
	assert_true(rb_change(1, RT_PROG, 1, "udp", stale));
	assert_int_equal(rb_port("udp://127.0.0.1:111", RT_PROG, 1), (int)port);

	assert_int_equal(rt_start(&a, v4_uris, 1), 0);
	assert_int_equal(rc_server_rpcbind(a.srv, true), RC_OK);
	assert_int_equal(entries(a.srv, e), 4);
	assert_string_equal(e[0].netid, "udp");
	assert_int_equal(e[0].vers, 1);
	assert_int_equal(e[0].status, RC_OK);
	assert_string_equal(e[0].holder, stale);
	assert_int_equal(rb_port("udp://127.0.0.1:111", RT_PROG, 1), port_of(a.uri[0]));
	rt_stop(&a);
}

/* A registration left by a server that is gone, met by a client: the message names the port
 * rpcbind gave and says nothing listens there (not "can't send request ... (rpcbind version
 * 4)", which reads as if rpcbind failed). */
static void stale_registration_named(void **state)
{
	rc_client *c = NULL;
	rc_error e;
	char stale[64], buf[256], want[256];
	unsigned port;
	int fd;
	(void)state;

	need_rpcbind();
	clean_slate();
	fd = bound(AF_INET, SOCK_STREAM, "127.0.0.1", -1, &port); /* bound, never listening */
	snprintf(stale, sizeof(stale), "127.0.0.1.%u.%u", port >> 8, port & 255);
	assert_true(rb_change(1, RT_PROG, 1, "tcp", stale));
	assert_int_equal(rc_client_create_ex(&c, "tcp://127.0.0.1", RT_PROG, 1, &e), RC_CANTSEND);
	assert_null(c);
	snprintf(want, sizeof(want), "can't connect: Connection refused (port %u, which rpcbind "
	         "version 4 gave for the program: nothing listens there)", port);
	assert_string_equal(rc_error_format(&e, buf, sizeof(buf)), want);
	close(fd);
	clean_slate();
}

static void two_listeners_of_one_netid(void **state)
{
	static const char *const uris[] = {"udp://127.0.0.1:0", "udp://127.0.0.1:0",
	                                   "tcp://127.0.0.1:0", NULL};
	rt_server a;
	rc_rpcbind_entry e[16];
	(void)state;

	need_rpcbind();
	clean_slate();
	assert_int_equal(rt_start(&a, uris, 1), 0);
	assert_int_equal(rc_server_rpcbind(a.srv, true), RC_PMAPFAILURE);
	assert_int_equal(entries(a.srv, e), 6);
	for (size_t v = 0; v < 2; v++) {
		rc_rpcbind_entry *p = &e[3 * v];
		assert_int_equal(p[0].vers, v + 1);
		assert_string_equal(p[0].netid, "udp");
		assert_int_equal(p[0].status, RC_OK);
		assert_string_equal(p[1].netid, "udp");
		assert_int_equal(rc__uaddr_port(p[1].uaddr), port_of(a.uri[1]));
		assert_int_equal(p[1].status, RC_PMAPFAILURE); /* rpcbind's answer: false */
		assert_string_equal(p[1].holder, p[0].uaddr);
		assert_string_equal(p[2].netid, "tcp");
		assert_int_equal(p[2].status, RC_OK); /* what could be registered was */
	}
	assert_int_equal(rb_port("udp://127.0.0.1:111", RT_PROG, 2), port_of(a.uri[0]));
	assert_int_equal(rb_port("tcp://127.0.0.1:111", RT_PROG, 2), port_of(a.uri[2]));
	rt_stop(&a);
	assert_int_equal(rb_port("udp://127.0.0.1:111", RT_PROG, 2), 0);
}

static const rc_svc_proc one_procs[] = {{&rt_null_1, rt_null}};
static const rc_svc_prog one_prog = {RT_PROG, 1, 1, one_procs};

static void later_listeners_and_off(void **state)
{
	rc_server *srv;
	rc_rpcbind_entry e[16];
	char u[2][256];
	(void)state;

	need_rpcbind();
	clean_slate();
	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_register(srv, &one_prog, NULL), RC_OK);
	assert_int_equal(rc_server_listen(srv, "udp://127.0.0.1:0", u[0], sizeof(u[0])), RC_OK);
	assert_int_equal(rc_server_rpcbind(srv, true), RC_OK);
	assert_int_equal(entries(srv, e), 1);
	assert_int_equal(rb_port("tcp://127.0.0.1:111", RT_PROG, 1), 0);
	/* a listener added later is registered at once */
	assert_int_equal(rc_server_listen(srv, "tcp://127.0.0.1:0", u[1], sizeof(u[1])), RC_OK);
	assert_int_equal(entries(srv, e), 2);
	assert_int_equal(e[1].status, RC_OK);
	assert_int_equal(rb_port("tcp://127.0.0.1:111", RT_PROG, 1), port_of(u[1]));
	/* off: removed, and the report is empty */
	assert_int_equal(rc_server_rpcbind(srv, false), RC_OK);
	assert_int_equal(entries(srv, e), 0);
	assert_int_equal(rb_port("udp://127.0.0.1:111", RT_PROG, 1), 0);
	assert_int_equal(rb_port("tcp://127.0.0.1:111", RT_PROG, 1), 0);
	/* on again: registered again */
	assert_int_equal(rc_server_rpcbind(srv, true), RC_OK);
	assert_int_equal(rb_port("udp://127.0.0.1:111", RT_PROG, 1), port_of(u[0]));
	rc_server_destroy(srv);
	assert_int_equal(rb_port("udp://127.0.0.1:111", RT_PROG, 1), 0);
}

/* Whether a TCP connect to 127.0.0.1:111 is refused. */
static bool port111_refused(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(111)};
	int fd = socket(AF_INET, SOCK_STREAM, 0), r;

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	r = connect(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	return r != 0 && errno == ECONNREFUSED;
}

/* PMAP v2 SET (proc 1) or UNSET (2) over loopback UDP; rpcbind's answer. */
static bool pm_change(uint32_t proc, uint32_t vers, uint32_t prot, uint32_t port)
{
	rc_client *c;
	uint32_t m[4] = {RT_PROG, vers, prot, port};
	bool ok = false;

	assert_int_equal(rc_client_create(&c, "udp://127.0.0.1:111", RB_PROG, 2), RC_OK);
	assert_int_equal(rc_call(c, proc, (rc_xdrproc)xdr_rb_pmap, m, (rc_xdrproc)rc_xdr_bool, &ok),
	                 RC_OK);
	rc_client_destroy(c);
	return ok;
}

static void pmap_v2_fallback(void **state)
{
	rt_server a, b;
	rc_server *srv;
	rc_rpcbind_entry e[16];
	char u[2][256];
	unsigned port;
	int fd;
	(void)state;

	need_mode("pmap");
	(void)pm_change(2, 1, 0, 0);
	(void)pm_change(2, 2, 0, 0);
	/* [::]: the IPv4 side registered, IPv6 not (PMAP knows none) */
	assert_int_equal(rt_start(&a, dual_uris, 1), 0);
	assert_int_equal(rc_server_rpcbind(a.srv, true), RC_PMAPFAILURE);
	assert_int_equal(entries(a.srv, e), 8);
	for (size_t i = 0; i < 8; i++)
		assert_int_equal(e[i].status, i % 4 < 2 ? RC_NOTSUPP : RC_OK);
	assert_int_equal(rb_port("udp://127.0.0.1:111", RT_PROG, 1), port_of(a.uri[0]));
	assert_int_equal(rb_port("tcp://127.0.0.1:111", RT_PROG, 2), port_of(a.uri[1]));
	call_through_rpcbind("udp://127.0.0.1");
	/* a second server is refused while a answers; its exit leaves a's entries */
	assert_int_equal(rt_start(&b, v4_uris, 1), 0);
	assert_int_equal(rc_server_rpcbind(b.srv, true), RC_PROGREGISTERED);
	assert_int_equal(entries(b.srv, e), 4);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(e[i].status, RC_PROGREGISTERED);
	rt_stop(&b);
	assert_int_equal(rb_port("udp://127.0.0.1:111", RT_PROG, 1), port_of(a.uri[0]));
	rt_stop(&a);
	assert_int_equal(rb_port("udp://127.0.0.1:111", RT_PROG, 1), 0);
	assert_int_equal(rb_port("tcp://127.0.0.1:111", RT_PROG, 2), 0);

	/* a stale tcp entry met when a tcp listener is added: PMAP's UNSET takes both protocols,
	 * so the udp entry already registered is registered again */
	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_register(srv, &one_prog, NULL), RC_OK);
	assert_int_equal(rc_server_listen(srv, "udp://127.0.0.1:0", u[0], sizeof(u[0])), RC_OK);
	assert_int_equal(rc_server_rpcbind(srv, true), RC_OK);
	fd = bound(AF_INET, SOCK_STREAM, "127.0.0.1", -1, &port);
	close(fd);
	assert_true(pm_change(1, 1, 6, port));
	assert_int_equal(rc_server_listen(srv, "tcp://127.0.0.1:0", u[1], sizeof(u[1])), RC_OK);
	assert_int_equal(entries(srv, e), 2);
	assert_int_equal(e[0].status, RC_OK);
	assert_int_equal(e[1].status, RC_OK);
	assert_int_equal(rc__uaddr_port(e[1].holder), (int)port);
	assert_int_equal(rb_port("udp://127.0.0.1:111", RT_PROG, 1), port_of(u[0]));
	assert_int_equal(rb_port("tcp://127.0.0.1:111", RT_PROG, 1), port_of(u[1]));
	rc_server_destroy(srv);
	assert_int_equal(rb_port("udp://127.0.0.1:111", RT_PROG, 1), 0);
	assert_int_equal(rb_port("tcp://127.0.0.1:111", RT_PROG, 1), 0);
}

/* Last: stops rpcbind, then asks it. */
static void lookup_and_registration_without_rpcbind(void **state)
{
	const char *pid = getenv("RC_TEST_RPCBIND_PID");
	rc_client *c;
	rc_error e;
	rc_server *srv;
	rc_rpcbind_entry ent[16];
	char buf[256];
	(void)state;

	need_rpcbind();
	if (pid == NULL || atoi(pid) <= 0) {
		print_message("     (RC_TEST_RPCBIND_PID unset: rpcbind is not this run's to stop)\n");
		skip();
	}
	assert_int_equal(kill(atoi(pid), SIGTERM), 0);
	for (int i = 0; i < 100 && !port111_refused(); i++)
		usleep(50000);
	assert_true(port111_refused());

	assert_int_equal(rc_client_create_ex(&c, "udp://127.0.0.1", RT_PROG, 1, &e), RC_PMAPFAILURE);
	assert_null(c);
	assert_int_equal(e.status, RC_PMAPFAILURE);
	assert_int_equal(e.rpcbind_vers, 4);
	assert_int_equal(e.rpcbind_status, RC_CANTRECV);
	assert_int_equal(e.sys_errno, ECONNREFUSED);
	print_message("     udp: %s\n", rc_error_format(&e, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "Connection refused (rpcbind version 4"));

	assert_int_equal(rc_client_create_ex(&c, "tcp://127.0.0.1", RT_PROG, 1, &e), RC_PMAPFAILURE);
	assert_int_equal(e.rpcbind_vers, 4);
	assert_int_equal(e.rpcbind_status, RC_CANTSEND);
	assert_int_equal(e.sys_errno, ECONNREFUSED);
	print_message("     tcp: %s\n", rc_error_format(&e, buf, sizeof(buf)));

	/* registration: refused, each entry saying why */
	assert_int_equal(rc_server_create(&srv), RC_OK);
	assert_int_equal(rc_server_register(srv, &one_prog, NULL), RC_OK);
	assert_int_equal(rc_server_listen(srv, "udp://127.0.0.1:0", buf, sizeof(buf)), RC_OK);
	assert_int_equal(rc_server_rpcbind(srv, true), RC_PMAPFAILURE);
	assert_int_equal(entries(srv, ent), 1);
	assert_int_not_equal(ent[0].status, RC_OK);
	assert_int_not_equal(ent[0].status, RC_PROGREGISTERED);
	rc_server_destroy(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(uaddr_ports),
		cmocka_unit_test(uaddr_uris),
		cmocka_unit_test(listener_entries),
		cmocka_unit_test(quic_listener_entries),
		cmocka_unit_test(entry_text),
		cmocka_unit_test(create_ex_details),
		cmocka_unit_test(dual_stack_registered_for_ipv4_and_ipv6),
		cmocka_unit_test(live_server_kept_then_taken_over),
		cmocka_unit_test(stale_registration_replaced),
		cmocka_unit_test(stale_registration_named),
		cmocka_unit_test(two_listeners_of_one_netid),
		cmocka_unit_test(later_listeners_and_off),
		cmocka_unit_test(pmap_v2_fallback),
		cmocka_unit_test(lookup_and_registration_without_rpcbind),
	};
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

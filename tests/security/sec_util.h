/*
 * Shared support of the security tests (tests/security): a hand-written test program with the
 * argument shapes attacks aim at, a server running in a thread (or a child process), a raw
 * attacker (hand-made messages over plain sockets), and measurements (RSS, CPU time, the
 * largest allocation asked for).
 *
 * The program SEC_PROG version 1 (no idlc):
 *    0 NULL
 *    1 STR(string<1024>)              -> u_int length
 *    2 OPQ(opaque<65536>)             -> u_int length
 *    3 ARR(int<1000>)                 -> u_int count         (bulk path)
 *    4 ARRS(pair<1000>)               -> u_int count         (pair: string<64>, int)
 *    5 LIST(node *)                   -> u_int nodes         (struct node { node *next; int v; })
 *    6 TREE(tree)                     -> u_int nodes         (struct tree { tree kids<>; int v; })
 *    7 UNION(chain)                   -> u_int depth         (union chain switch (int d)
 *                                                              { case 1: chain *next; default: void; })
 *    8 WHO(void)                      -> string              ("machine:uid:gid:ngids" or "none")
 *    9 STRU(string<>)                 -> u_int length        (no bound)
 *   10 OPQU(opaque<>)                 -> u_int length        (no bound)
 *   11 ARRU(int<>)                    -> u_int count         (no bound)
 *   12 BIG(big<>)                     -> u_int count         (big: one int on the wire, 256
 *                                                              bytes in C: count x size)
 *   13 ECHO(opaque<>)                 -> opaque<>
 */
#ifndef SEC_UTIL_H
#define SEC_UTIL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <remotecall/remotecall.h>

#define SEC_PROG 0x2000A5ECu
enum {
	P_NULL = 0, P_STR = 1, P_OPQ = 2, P_ARR = 3, P_ARRS = 4, P_LIST = 5, P_TREE = 6,
	P_UNION = 7, P_WHO = 8, P_STRU = 9, P_OPQU = 10, P_ARRU = 11, P_BIG = 12, P_ECHO = 13
};

/* RFC 5531 numbers, spelled out for the hand-made messages. */
enum { ACC_SUCCESS = 0, ACC_PROG_UNAVAIL = 1, ACC_PROG_MISMATCH = 2, ACC_PROC_UNAVAIL = 3,
       ACC_GARBAGE_ARGS = 4, ACC_SYSTEM_ERR = 5 };
/* sec_reply_kind() results for denied replies */
enum { DEN_RPC_MISMATCH = 100, DEN_AUTH_BADCRED = 201, DEN_AUTH_REJECTEDCRED = 202,
       DEN_AUTH_OTHER = 299 };

/* ---- the program's types --------------------------------------------------------------- */

typedef struct { uint32_t len; char *val; } sec_bytes;
typedef struct { uint32_t len; int32_t *val; } sec_ints;
typedef struct { char *s; int32_t v; } sec_pair;
typedef struct { uint32_t len; sec_pair *val; } sec_pairs;
typedef struct sec_node { struct sec_node *next; int32_t v; } sec_node;
typedef struct sec_tree { struct { uint32_t len; struct sec_tree *val; } kids; int32_t v; } sec_tree;
typedef struct sec_chain { int32_t d; union { struct sec_chain *next; } u; } sec_chain;
typedef struct { int32_t v; unsigned char pad[252]; } sec_big;
typedef struct { uint32_t len; sec_big *val; } sec_bigs;

bool xdr_sec_str(rc_xdr *x, char **s);
bool xdr_sec_opq(rc_xdr *x, sec_bytes *b);
bool xdr_sec_arr(rc_xdr *x, sec_ints *a);
bool xdr_sec_pairs(rc_xdr *x, sec_pairs *a);
bool xdr_sec_list(rc_xdr *x, sec_node **head);
bool xdr_sec_tree(rc_xdr *x, sec_tree *t);
bool xdr_sec_chain(rc_xdr *x, sec_chain *c);
bool xdr_sec_stru(rc_xdr *x, char **s);
bool xdr_sec_opqu(rc_xdr *x, sec_bytes *b);
bool xdr_sec_arru(rc_xdr *x, sec_ints *a);
bool xdr_sec_bigs(rc_xdr *x, sec_bigs *a);

extern const rc_svc_prog sec_prog1;
extern atomic_uint sec_calls; /* routines run (any procedure but NULL) */

/* ---- a server in a thread ---------------------------------------------------------------- */

typedef struct sec_server {
	rc_server *srv;
	pthread_t tid;
	char uri[4][256];
	int n;
} sec_server;

/* Start a server with the program registered, limits lim (NULL: defaults), listening on each
 * of uris (NULL-terminated), run by `threads` workers in a thread whose stack is stack_kib
 * KiB (0: default). Returns 0 or -1. */
int sec_start(sec_server *s, const char *const *uris, const rc_server_limits *lim,
              unsigned threads, size_t stack_kib);
void sec_stop(sec_server *s);

/* ---- the attacker ---------------------------------------------------------------------- */

void put32(unsigned char *p, uint32_t v);
uint32_t get32(const unsigned char *p);

/* The port of a bound URI (".../HOST:PORT"). */
int sec_port(const char *uri);
/* Blocking sockets connected to a udp:// or tcp:// URI on 127.0.0.1, with a 2 s receive
 * timeout. */
int sec_udp(const char *uri);
int sec_tcp(const char *uri);
/* A TCP connection to 127.0.0.1:port, non-blocking connect allowed to stay pending (for
 * floods); -1 on failure. */
int sec_tcp_port(int port);

/*
 * A call message: xid, CALL, rpcvers, prog, vers, proc, credential (flavor, body credlen
 * bytes: cred, or zeros if cred is NULL), AUTH_NONE verifier, then args. Returns its length.
 */
size_t sec_mkcall(unsigned char *b, uint32_t xid, uint32_t rpcvers, uint32_t prog, uint32_t vers,
                  uint32_t proc, uint32_t flavor, const void *cred, uint32_t credlen,
                  const void *args, size_t arglen);
/* A well-formed call to SEC_PROG v1 with AUTH_NONE. */
size_t sec_call(unsigned char *b, uint32_t xid, uint32_t proc, const void *args, size_t arglen);

/* Send all of buf (blocking). Returns true if it all went. */
bool sec_send_all(int fd, const void *buf, size_t len);
/* One record: a single final fragment. */
bool sec_send_record(int fd, const void *msg, size_t len);
/*
 * Receive one record (reassembling fragments) into buf. Returns its length, -1 if nothing
 * complete came within timeout_ms, -2 if the peer closed or reset the connection, -3 if it
 * does not fit cap.
 */
ssize_t sec_recv_record(int fd, unsigned char *buf, size_t cap, int timeout_ms);
/* One datagram within timeout_ms, or -1. */
ssize_t sec_recv_dgram(int fd, unsigned char *buf, size_t cap, int timeout_ms);

/*
 * What a reply says: an accept_stat (ACC_*) for an accepted reply, DEN_RPC_MISMATCH (and
 * low and high if not NULL), DEN_AUTH_BADCRED, DEN_AUTH_REJECTEDCRED, DEN_AUTH_OTHER; -1 for a
 * message that is not a well-formed reply. *xid gets the xid.
 */
int sec_reply_kind(const unsigned char *r, size_t n, uint32_t *xid, uint32_t *low, uint32_t *high);

/* True if the peer closes fd (EOF or reset) within timeout_ms; whatever it sends before is
 * read and discarded. */
bool sec_wait_closed(int fd, int timeout_ms);

/* A null call through a fresh rc_client on uri (timeout_ms total). */
rc_status sec_null_call(const char *uri, uint32_t timeout_ms);

/* ---- measurements ----------------------------------------------------------------------- */

/* VmRSS of pid (0: this process) in KiB, or -1. */
long sec_rss_kib(pid_t pid);
/* utime + stime of pid (0: this process) in clock ticks, or -1. */
long sec_cpu_ticks(pid_t pid);
/*
 * Extra RSS the memory-bound assertions allow for the checker the test runs under: 0 natively;
 * 16 MiB under AddressSanitizer (its quarantine, which sec_alloc.c keeps at 4 MiB, per-thread
 * caches and redzones), 256 MiB under ThreadSanitizer (shadow memory); valgrind holds freed
 * blocks back (--freelist-vol, 20 MB) before reusing them, so 24 MiB more there.
 */
long sec_rss_slack_kib(void);
/* Monotonic milliseconds. */
int64_t sec_ms(void);

/*
 * The allocator, as seen through the linker's --wrap (sec_alloc.c; the program must link
 * with LINKER:--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free, which rc_sec_test does).
 * Counts cover the library and the test's own code, all threads.
 */
extern atomic_size_t sec_alloc_max;   /* the largest single request since the last reset */
extern atomic_long sec_alloc_live;    /* blocks allocated and not yet freed */
extern atomic_size_t sec_alloc_calls; /* allocation calls since the last reset */
void sec_alloc_reset(void);

#endif

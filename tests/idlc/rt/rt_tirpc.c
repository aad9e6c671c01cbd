/*
 * rt_tirpc -- the libtirpc side of test_idlc_interop: rpcgen's XDR routines for
 * nfs_prot.x, mount.x and nlm_prot.x, linked with libtirpc. A program of its own, so that
 * rpcgen's and remotecall's names never meet.
 *
 *   rt_tirpc encode CASE FILE   fill CASE (rt_fill.h), encode it, write the bytes to FILE
 *   rt_tirpc check CASE FILE    decode FILE, encode the result again: it must give FILE's
 *                               bytes, and so must encoding CASE afresh
 *
 * Exit status 0 on success, 1 on a mismatch or failure (with a message on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>

#define RT_PROC xdrproc_t
#ifndef RT_FILL
#define RT_FILL "rt_fill.h"
#endif
#include RT_FILL

/* encode_case -- c's value encoded into buf; its length, or 0 on failure. */
static unsigned
encode_obj(const rt_case *c, void *obj, char *buf, unsigned cap)
{
	XDR x;
	xdrmem_create(&x, buf, cap, XDR_ENCODE);
	if (!c->proc(&x, obj))
		return 0;
	return xdr_getpos(&x);
}

int
main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: rt_tirpc encode|check CASE FILE\n");
		return 2;
	}
	const rt_case *c = rt_find(argv[2]);
	if (c == NULL) {
		fprintf(stderr, "rt_tirpc: no case '%s'\n", argv[2]);
		return 2;
	}
	static char mine[RT_MAXWIRE], theirs[RT_MAXWIRE], again[RT_MAXWIRE];
	void *obj = calloc(1, c->size);
	c->fill(obj);
	unsigned n = encode_obj(c, obj, mine, sizeof mine);
	free(obj);
	if (n == 0) {
		fprintf(stderr, "rt_tirpc: %s: libtirpc cannot encode the value\n", c->name);
		return 1;
	}

	if (strcmp(argv[1], "encode") == 0) {
		FILE *f = fopen(argv[3], "wb");
		if (f == NULL || fwrite(mine, 1, n, f) != n || fclose(f) != 0) {
			perror(argv[3]);
			return 1;
		}
		return 0;
	}
	if (strcmp(argv[1], "check") != 0)
		return 2;

	FILE *f = fopen(argv[3], "rb");
	if (f == NULL) {
		perror(argv[3]);
		return 1;
	}
	size_t len = fread(theirs, 1, sizeof theirs, f);
	fclose(f);

	obj = calloc(1, c->size);
	XDR x;
	xdrmem_create(&x, theirs, (u_int)len, XDR_DECODE);
	if (!c->proc(&x, obj) || xdr_getpos(&x) != len) {
		fprintf(stderr, "rt_tirpc: %s: libtirpc cannot decode idlc's %zu bytes\n", c->name,
		        len);
		return 1;
	}
	unsigned m = encode_obj(c, obj, again, sizeof again);
	xdr_free(c->proc, obj);
	free(obj);
	if (m != len || memcmp(again, theirs, len) != 0) {
		fprintf(stderr, "rt_tirpc: %s: decoding idlc's bytes and encoding again differs\n",
		        c->name);
		return 1;
	}
	if (n != len || memcmp(mine, theirs, len) != 0) {
		fprintf(stderr, "rt_tirpc: %s: idlc's bytes differ from libtirpc's (%zu vs %u)\n",
		        c->name, len, n);
		return 1;
	}
	return 0;
}

/* The security tests' program SEC_PROG version 1 (see sec_util.h), also linked into the
 * call-path fuzz targets (tests/fuzz). */
#include "sec_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the program ------------------------------------------------------------------------ */

atomic_uint sec_calls;

bool xdr_sec_str(rc_xdr *x, char **s) { return rc_xdr_string(x, s, 1024); }
bool xdr_sec_opq(rc_xdr *x, sec_bytes *b) { return rc_xdr_bytes(x, &b->val, &b->len, 65536); }
bool xdr_sec_arr(rc_xdr *x, sec_ints *a)
{
	return rc_xdr_array(x, &a->val, &a->len, 1000, sizeof(int32_t), (rc_xdrproc)rc_xdr_int);
}
static bool xdr_sec_pair(rc_xdr *x, sec_pair *p)
{
	return rc_xdr_string(x, &p->s, 64) && rc_xdr_int(x, &p->v);
}
bool xdr_sec_pairs(rc_xdr *x, sec_pairs *a)
{
	return rc_xdr_array(x, &a->val, &a->len, 1000, sizeof(sec_pair), (rc_xdrproc)xdr_sec_pair);
}
static bool xdr_sec_node(rc_xdr *x, sec_node *n)
{
	return rc_xdr_pointer(x, &n->next, sizeof(sec_node), (rc_xdrproc)xdr_sec_node) &&
	       rc_xdr_int(x, &n->v);
}
bool xdr_sec_list(rc_xdr *x, sec_node **head)
{
	return rc_xdr_pointer(x, head, sizeof(sec_node), (rc_xdrproc)xdr_sec_node);
}
bool xdr_sec_tree(rc_xdr *x, sec_tree *t)
{
	return rc_xdr_array(x, &t->kids.val, &t->kids.len, UINT32_MAX, sizeof(sec_tree),
	                    (rc_xdrproc)xdr_sec_tree) &&
	       rc_xdr_int(x, &t->v);
}
static bool xdr_sec_chain_next(rc_xdr *x, void *u)
{
	return rc_xdr_pointer(x, u, sizeof(sec_chain), (rc_xdrproc)xdr_sec_chain);
}
static const rc_xdr_discrim sec_chain_arms[] = {{1, xdr_sec_chain_next}, {0, NULL}};
bool xdr_sec_chain(rc_xdr *x, sec_chain *c)
{
	return rc_xdr_union(x, &c->d, &c->u, sec_chain_arms, rc_xdr_void);
}
bool xdr_sec_stru(rc_xdr *x, char **s) { return rc_xdr_string(x, s, UINT32_MAX); }
bool xdr_sec_opqu(rc_xdr *x, sec_bytes *b) { return rc_xdr_bytes(x, &b->val, &b->len, UINT32_MAX); }
bool xdr_sec_arru(rc_xdr *x, sec_ints *a)
{
	return rc_xdr_array(x, &a->val, &a->len, UINT32_MAX, sizeof(int32_t), (rc_xdrproc)rc_xdr_int);
}
static bool xdr_sec_big(rc_xdr *x, sec_big *b) { return rc_xdr_int(x, &b->v); }
bool xdr_sec_bigs(rc_xdr *x, sec_bigs *a)
{
	return rc_xdr_array(x, &a->val, &a->len, UINT32_MAX, sizeof(sec_big), (rc_xdrproc)xdr_sec_big);
}

static void counted(void) { atomic_fetch_add(&sec_calls, 1); }

static bool sp_null(void *a, void *r, rc_svc_req *q) { (void)a; (void)r; (void)q; return true; }
static bool sp_str(void *a, void *r, rc_svc_req *q)
{
	(void)q; counted();
	*(uint32_t *)r = (uint32_t)strlen(*(char **)a);
	return true;
}
static bool sp_bytes(void *a, void *r, rc_svc_req *q)
{
	(void)q; counted();
	*(uint32_t *)r = ((sec_bytes *)a)->len;
	return true;
}
static bool sp_ints(void *a, void *r, rc_svc_req *q)
{
	(void)q; counted();
	*(uint32_t *)r = ((sec_ints *)a)->len;
	return true;
}
static bool sp_pairs(void *a, void *r, rc_svc_req *q)
{
	(void)q; counted();
	*(uint32_t *)r = ((sec_pairs *)a)->len;
	return true;
}
static bool sp_list(void *a, void *r, rc_svc_req *q)
{
	uint32_t n = 0;
	(void)q; counted();
	for (sec_node *p = *(sec_node **)a; p; p = p->next)
		n++;
	*(uint32_t *)r = n;
	return true;
}
static uint32_t tree_nodes(const sec_tree *t)
{
	uint32_t n = 1;
	for (uint32_t i = 0; i < t->kids.len; i++)
		n += tree_nodes(&t->kids.val[i]);
	return n;
}
static bool sp_tree(void *a, void *r, rc_svc_req *q)
{
	(void)q; counted();
	*(uint32_t *)r = tree_nodes(a);
	return true;
}
static bool sp_chain(void *a, void *r, rc_svc_req *q)
{
	uint32_t n = 0;
	(void)q; counted();
	for (const sec_chain *c = a; c && c->d == 1; c = c->u.next)
		n++;
	*(uint32_t *)r = n;
	return true;
}
static bool sp_who(void *a, void *r, rc_svc_req *q)
{
	const rc_authsys *s = rc_svc_req_authsys(q);
	char buf[300], *out;
	int n;
	(void)a; counted();
	if (s)
		n = snprintf(buf, sizeof(buf), "%s:%u:%u:%u", s->machine, s->uid, s->gid, s->ngids);
	else
		n = snprintf(buf, sizeof(buf), "none");
	if ((out = malloc((size_t)n + 1)) == NULL)
		return false;
	memcpy(out, buf, (size_t)n + 1);
	*(char **)r = out;
	return true;
}
static bool sp_bigs(void *a, void *r, rc_svc_req *q)
{
	(void)q; counted();
	*(uint32_t *)r = ((sec_bigs *)a)->len;
	return true;
}
static bool sp_echo(void *a, void *r, rc_svc_req *q)
{
	sec_bytes *in = a, *out = r;
	(void)q; counted();
	if ((out->val = malloc(in->len ? in->len : 1)) == NULL)
		return false;
	memcpy(out->val, in->val, in->len);
	out->len = in->len;
	return true;
}

#define SEC_INFO(n, num, xa, sa, xr, sr) \
	static const rc_procinfo si_##n = {SEC_PROG, 1, num, #n, (rc_xdrproc)xa, sa, (rc_xdrproc)xr, sr};
SEC_INFO(null, P_NULL, rc_xdr_void, 0, rc_xdr_void, 0)
SEC_INFO(str, P_STR, xdr_sec_str, sizeof(char *), rc_xdr_u_int, 4)
SEC_INFO(opq, P_OPQ, xdr_sec_opq, sizeof(sec_bytes), rc_xdr_u_int, 4)
SEC_INFO(arr, P_ARR, xdr_sec_arr, sizeof(sec_ints), rc_xdr_u_int, 4)
SEC_INFO(arrs, P_ARRS, xdr_sec_pairs, sizeof(sec_pairs), rc_xdr_u_int, 4)
SEC_INFO(list, P_LIST, xdr_sec_list, sizeof(sec_node *), rc_xdr_u_int, 4)
SEC_INFO(tree, P_TREE, xdr_sec_tree, sizeof(sec_tree), rc_xdr_u_int, 4)
SEC_INFO(chain, P_UNION, xdr_sec_chain, sizeof(sec_chain), rc_xdr_u_int, 4)
SEC_INFO(who, P_WHO, rc_xdr_void, 0, xdr_sec_str, sizeof(char *))
SEC_INFO(stru, P_STRU, xdr_sec_stru, sizeof(char *), rc_xdr_u_int, 4)
SEC_INFO(opqu, P_OPQU, xdr_sec_opqu, sizeof(sec_bytes), rc_xdr_u_int, 4)
SEC_INFO(arru, P_ARRU, xdr_sec_arru, sizeof(sec_ints), rc_xdr_u_int, 4)
SEC_INFO(big, P_BIG, xdr_sec_bigs, sizeof(sec_bigs), rc_xdr_u_int, 4)
SEC_INFO(echo, P_ECHO, xdr_sec_opqu, sizeof(sec_bytes), xdr_sec_opqu, sizeof(sec_bytes))

static const rc_svc_proc sec_procs[] = {
	{&si_null, sp_null}, {&si_str, sp_str}, {&si_opq, sp_bytes}, {&si_arr, sp_ints},
	{&si_arrs, sp_pairs}, {&si_list, sp_list}, {&si_tree, sp_tree}, {&si_chain, sp_chain},
	{&si_who, sp_who}, {&si_stru, sp_str}, {&si_opqu, sp_bytes}, {&si_arru, sp_ints},
	{&si_big, sp_bigs}, {&si_echo, sp_echo},
};
const rc_svc_prog sec_prog1 = {SEC_PROG, 1, sizeof(sec_procs) / sizeof(sec_procs[0]), sec_procs};

/*
 * rt4_fill.h -- values of NFSv4.1 types (world/nfs4_prot.x, RFC 5662), written once and
 * compiled twice, as rt_fill.h: into rt_tirpc4 (rpcgen's header, libtirpc) and into
 * test_idlc_interop4 (idlc's header, remotecall). They cover what idlc once refused in this
 * file -- 64-bit constants, rc_-prefixed members, AUTH_* flavors as case labels, the
 * %#include'd authsys_parms -- and COMPOUND requests and replies of several operations.
 *
 * Nested objects live in static storage: filling is repeatable and nothing is freed.
 */
#ifndef RT4_FILL_H
#define RT4_FILL_H

#include <string.h>

#include "nfs4_prot.h"

#include "rt_case.h"

static char rt4_bytes[64] = "\x10\x32\x54\x76\x98\xba\xdc\xfe\x01\x23\x45\x67\x89\xab\xcd\xef"
                            "abcdefghijklmnopqrstuvwxyz012345";

/* rt4_session -- a session id (opaque[16]) made from salt. */
static void
rt4_session(char *sid, int salt)
{
	for (int i = 0; i < NFS4_SESSIONID_SIZE; i++)
		sid[i] = (char)(i * 11 + salt);
}

static void
fill_nfs4_referring_list(void *p)
{
	static referring_call4 calls[2];
	referring_call_list4 *o = p;
	rt4_session(o->rcl_sessionid, 5);
	calls[0].rc_sequenceid = 7;
	calls[0].rc_slotid = 0;
	calls[1].rc_sequenceid = 0xfffffffeu;
	calls[1].rc_slotid = 63;
	o->rcl_referring_calls.rcl_referring_calls_len = 2;
	o->rcl_referring_calls.rcl_referring_calls_val = calls;
}

static void
fill_nfs4_cb_sequence(void *p)
{
	static referring_call_list4 lists[2];
	CB_SEQUENCE4args *o = p;
	rt4_session(o->csa_sessionid, 1);
	o->csa_sequenceid = 42;
	o->csa_slotid = 3;
	o->csa_highest_slotid = 15;
	o->csa_cachethis = 1;
	fill_nfs4_referring_list(&lists[0]);
	rt4_session(lists[1].rcl_sessionid, 9);
	lists[1].rcl_referring_calls.rcl_referring_calls_len = 0;
	lists[1].rcl_referring_calls.rcl_referring_calls_val = NULL;
	o->csa_referring_call_lists.csa_referring_call_lists_len = 2;
	o->csa_referring_call_lists.csa_referring_call_lists_val = lists;
}

static void
fill_nfs4_change_info(void *p)
{
	change_info4 *o = p;
	o->atomic = 1;
	o->before = NFS4_UINT64_MAX;
	o->after = NFS4_INT64_MAX;
}

static void
fill_nfs4_time_negative(void *p)
{
	nfstime4 *o = p;
	o->seconds = -1 - ((int64_t)1 << 40);
	o->nseconds = 999999999;
}

static void
fill_nfs4_cb_sec_none(void *p)
{
	callback_sec_parms4 *o = p;
	o->cb_secflavor = AUTH_NONE;
}

static void
fill_nfs4_cb_sec_sys(void *p)
{
	static unsigned int gids[3] = { 0, 100, 0xfffffffeu };
	callback_sec_parms4 *o = p;
	o->cb_secflavor = AUTH_SYS;
	o->callback_sec_parms4_u.cbsp_sys_cred.aup_time = 1700000000;
	o->callback_sec_parms4_u.cbsp_sys_cred.aup_machname = "client.example.org";
	o->callback_sec_parms4_u.cbsp_sys_cred.aup_uid = 1000;
	o->callback_sec_parms4_u.cbsp_sys_cred.aup_gid = 1000;
	o->callback_sec_parms4_u.cbsp_sys_cred.aup_len = 3;
	o->callback_sec_parms4_u.cbsp_sys_cred.aup_gids = (void *)gids;
}

static void
fill_nfs4_cb_sec_gss(void *p)
{
	callback_sec_parms4 *o = p;
	o->cb_secflavor = RPCSEC_GSS;
	o->callback_sec_parms4_u.cbsp_gss_handles.gcbp_service = RPC_GSS_SVC_PRIVACY;
	o->callback_sec_parms4_u.cbsp_gss_handles.gcbp_handle_from_server.gsshandle4_t_len = 9;
	o->callback_sec_parms4_u.cbsp_gss_handles.gcbp_handle_from_server.gsshandle4_t_val =
		rt4_bytes;
	o->callback_sec_parms4_u.cbsp_gss_handles.gcbp_handle_from_client.gsshandle4_t_len = 0;
	o->callback_sec_parms4_u.cbsp_gss_handles.gcbp_handle_from_client.gsshandle4_t_val =
		NULL;
}

/* rt4_stateid -- a stateid made from salt. */
static void
rt4_stateid(stateid4 *s, int salt)
{
	s->seqid = (unsigned)salt;
	memcpy(s->other, rt4_bytes + salt % 8, sizeof s->other);
}

static void
fill_nfs4_compound_args(void *p)
{
	static nfs_argop4 ops[7];
	static uint32_t mask[2] = { 0x0010011a, 0x00b0a23a };
	COMPOUND4args *o = p;
	o->tag.utf8string_len = 7;
	o->tag.utf8string_val = "rc-test";
	o->minorversion = 1;
	ops[0].argop = OP_SEQUENCE;
	rt4_session(ops[0].nfs_argop4_u.opsequence.sa_sessionid, 3);
	ops[0].nfs_argop4_u.opsequence.sa_sequenceid = 1;
	ops[0].nfs_argop4_u.opsequence.sa_slotid = 0;
	ops[0].nfs_argop4_u.opsequence.sa_highest_slotid = 0;
	ops[0].nfs_argop4_u.opsequence.sa_cachethis = 0;
	ops[1].argop = OP_PUTFH;
	ops[1].nfs_argop4_u.opputfh.object.nfs_fh4_len = 28;
	ops[1].nfs_argop4_u.opputfh.object.nfs_fh4_val = rt4_bytes + 2;
	ops[2].argop = OP_READ;
	rt4_stateid(&ops[2].nfs_argop4_u.opread.stateid, 4);
	ops[2].nfs_argop4_u.opread.offset = NFS4_MAXFILEOFF;
	ops[2].nfs_argop4_u.opread.count = 1048576;
	ops[3].argop = OP_WRITE;
	rt4_stateid(&ops[3].nfs_argop4_u.opwrite.stateid, 6);
	ops[3].nfs_argop4_u.opwrite.offset = 4096;
	ops[3].nfs_argop4_u.opwrite.stable = FILE_SYNC4;
	ops[3].nfs_argop4_u.opwrite.data.data_len = 13;
	ops[3].nfs_argop4_u.opwrite.data.data_val = rt4_bytes + 16;
	ops[4].argop = OP_GETATTR;
	ops[4].nfs_argop4_u.opgetattr.attr_request.bitmap4_len = 2;
	ops[4].nfs_argop4_u.opgetattr.attr_request.bitmap4_val = mask;
	ops[5].argop = OP_GETFH;
	ops[6].argop = OP_ILLEGAL;
	o->argarray.argarray_len = 7;
	o->argarray.argarray_val = ops;
}

static void
fill_nfs4_compound_res(void *p)
{
	static nfs_resop4 res[4];
	static uint32_t mask[1] = { 0x0000001a };
	COMPOUND4res *o = p;
	o->status = NFS4_OK;
	o->tag.utf8string_len = 0;
	o->tag.utf8string_val = NULL;
	res[0].resop = OP_SEQUENCE;
	res[0].nfs_resop4_u.opsequence.sr_status = NFS4_OK;
	rt4_session(res[0].nfs_resop4_u.opsequence.SEQUENCE4res_u.sr_resok4.sr_sessionid, 3);
	res[0].nfs_resop4_u.opsequence.SEQUENCE4res_u.sr_resok4.sr_sequenceid = 1;
	res[0].nfs_resop4_u.opsequence.SEQUENCE4res_u.sr_resok4.sr_slotid = 0;
	res[0].nfs_resop4_u.opsequence.SEQUENCE4res_u.sr_resok4.sr_highest_slotid = 31;
	res[0].nfs_resop4_u.opsequence.SEQUENCE4res_u.sr_resok4.sr_target_highest_slotid = 31;
	res[0].nfs_resop4_u.opsequence.SEQUENCE4res_u.sr_resok4.sr_status_flags =
		SEQ4_STATUS_CB_PATH_DOWN;
	res[1].resop = OP_PUTFH;
	res[1].nfs_resop4_u.opputfh.status = NFS4_OK;
	res[2].resop = OP_READ;
	res[2].nfs_resop4_u.opread.status = NFS4_OK;
	res[2].nfs_resop4_u.opread.READ4res_u.resok4.eof = 1;
	res[2].nfs_resop4_u.opread.READ4res_u.resok4.data.data_len = 5;
	res[2].nfs_resop4_u.opread.READ4res_u.resok4.data.data_val = rt4_bytes + 20;
	res[3].resop = OP_GETATTR;
	res[3].nfs_resop4_u.opgetattr.status = NFS4_OK;
	res[3].nfs_resop4_u.opgetattr.GETATTR4res_u.resok4.obj_attributes.attrmask.bitmap4_len = 1;
	res[3].nfs_resop4_u.opgetattr.GETATTR4res_u.resok4.obj_attributes.attrmask.bitmap4_val =
		mask;
	res[3].nfs_resop4_u.opgetattr.GETATTR4res_u.resok4.obj_attributes.attr_vals
		.attrlist4_len = 12;
	res[3].nfs_resop4_u.opgetattr.GETATTR4res_u.resok4.obj_attributes.attr_vals
		.attrlist4_val = rt4_bytes;
	o->resarray.resarray_len = 4;
	o->resarray.resarray_val = res;
}

static void
fill_nfs4_compound_err(void *p)
{
	static nfs_resop4 res[1];
	COMPOUND4res *o = p;
	o->status = NFS4ERR_BADSESSION;
	o->tag.utf8string_len = 3;
	o->tag.utf8string_val = "err";
	res[0].resop = OP_SEQUENCE;
	res[0].nfs_resop4_u.opsequence.sr_status = NFS4ERR_BADSESSION;
	o->resarray.resarray_len = 1;
	o->resarray.resarray_val = res;
}

static void
fill_nfs4_readdir(void *p)
{
	static entry4 e[3];
	static uint32_t mask[1] = { 0x00100000 };
	static const char *const names[3] = { "alpha", "b", "a-much-longer-file-name.txt" };
	READDIR4resok *o = p;
	memcpy(o->cookieverf, rt4_bytes, NFS4_VERIFIER_SIZE);
	for (int i = 0; i < 3; i++) {
		e[i].cookie = (uint64_t)i << 40 | 3;
		e[i].name.utf8string_len = (unsigned)strlen(names[i]);
		e[i].name.utf8string_val = (char *)names[i];
		e[i].attrs.attrmask.bitmap4_len = 1;
		e[i].attrs.attrmask.bitmap4_val = mask;
		e[i].attrs.attr_vals.attrlist4_len = 8;
		e[i].attrs.attr_vals.attrlist4_val = rt4_bytes + 8 * i;
		e[i].nextentry = i < 2 ? &e[i + 1] : NULL;
	}
	o->reply.entries = &e[0];
	o->reply.eof = 1;
}

/* ---- the cases ---- */

static const rt_case rt_cases[] = {
	RT_CASE(nfs4_referring_list, referring_call_list4),
	RT_CASE(nfs4_cb_sequence, CB_SEQUENCE4args),
	RT_CASE(nfs4_change_info, change_info4),
	RT_CASE(nfs4_time_negative, nfstime4),
	RT_CASE(nfs4_cb_sec_none, callback_sec_parms4),
	RT_CASE(nfs4_cb_sec_sys, callback_sec_parms4),
	RT_CASE(nfs4_cb_sec_gss, callback_sec_parms4),
	RT_CASE(nfs4_compound_args, COMPOUND4args),
	RT_CASE(nfs4_compound_res, COMPOUND4res),
	RT_CASE(nfs4_compound_err, COMPOUND4res),
	RT_CASE(nfs4_readdir, READDIR4resok),
};

#include "rt_find.h"

#endif

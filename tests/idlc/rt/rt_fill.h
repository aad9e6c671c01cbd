/*
 * rt_fill.h -- values of nfs_prot.x, mount.x and nlm_prot.x types, written once and compiled
 * twice: into rt_tirpc (against rpcgen's headers and libtirpc) and into test_idlc_interop
 * (against idlc's headers and remotecall). The two generators give the types the same names
 * and shapes, so the same assignments fill both; the XDR bytes must then be the same.
 *
 * The includer defines RT_PROC, its XDR routine type (xdrproc_t or rc_xdrproc) (rt_case.h).
 * Nested objects live in static storage: filling is repeatable and nothing is freed.
 */
#ifndef RT_FILL_H
#define RT_FILL_H

#include <string.h>

#include "mount.h"
#include "nfs_prot.h"
#include "nlm_prot.h"

#include "rt_case.h"

static char rt_bytes[64] = "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10"
                           "\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x20";

/* ---- nfs_prot.x ---- */

static void
rt_fh(nfs_fh *fh, int salt)
{
	for (int i = 0; i < NFS_FHSIZE; i++)
		fh->data[i] = (char)(i * 7 + salt);
}

static void
rt_fattr(fattr *a)
{
	a->type = NFREG;
	a->mode = 0100644;
	a->nlink = 1;
	a->uid = 1000;
	a->gid = 0xfffffffeu;
	a->size = 123456789;
	a->blocksize = 4096;
	a->rdev = 0;
	a->blocks = 30141;
	a->fsid = 0x80000001u;
	a->fileid = 424242;
	a->atime.seconds = 1700000000;
	a->atime.useconds = 999999;
	a->mtime.seconds = 1;
	a->mtime.useconds = 2;
	a->ctime.seconds = 0xffffffffu;
	a->ctime.useconds = 0;
}

static void
fill_nfs_fattr(void *p)
{
	rt_fattr(p);
}

static void
fill_nfs_attrstat_ok(void *p)
{
	attrstat *o = p;
	o->status = NFS_OK;
	rt_fattr(&o->attrstat_u.attributes);
}

static void
fill_nfs_attrstat_err(void *p)
{
	attrstat *o = p;
	o->status = NFSERR_STALE;
}

static void
fill_nfs_diropargs(void *p)
{
	diropargs *o = p;
	rt_fh(&o->dir, 3);
	o->name = "file.txt";
}

static void
fill_nfs_readres(void *p)
{
	readres *o = p;
	o->status = NFS_OK;
	rt_fattr(&o->readres_u.reply.attributes);
	o->readres_u.reply.data.data_len = 13;
	o->readres_u.reply.data.data_val = rt_bytes;
}

static void
fill_nfs_writeargs(void *p)
{
	writeargs *o = p;
	rt_fh(&o->file, 9);
	o->beginoffset = 0;
	o->offset = 8192;
	o->totalcount = 8195;
	o->data.data_len = 3;
	o->data.data_val = rt_bytes + 5;
}

static void
fill_nfs_readdirres(void *p)
{
	static entry e[3];
	static const char *const names[3] = { ".", "..", "a-longer-file-name" };
	readdirres *o = p;
	for (int i = 0; i < 3; i++) {
		e[i].fileid = (unsigned)(100 + i);
		e[i].name = (char *)names[i];
		memcpy(e[i].cookie, rt_bytes + i, NFS_COOKIESIZE);
		e[i].nextentry = i < 2 ? &e[i + 1] : NULL;
	}
	o->status = NFS_OK;
	o->readdirres_u.reply.entries = &e[0];
	o->readdirres_u.reply.eof = 1;
}

static void
fill_nfs_readdirres_empty(void *p)
{
	readdirres *o = p;
	o->status = NFS_OK;
	o->readdirres_u.reply.entries = NULL;
	o->readdirres_u.reply.eof = 1;
}

static void
fill_nfs_symlinkargs(void *p)
{
	symlinkargs *o = p;
	rt_fh(&o->from.dir, 1);
	o->from.name = "link";
	o->to = "../target/of/the/link";
	o->attributes.mode = 0777;
	o->attributes.uid = (unsigned)-1;
	o->attributes.gid = (unsigned)-1;
	o->attributes.size = (unsigned)-1;
	o->attributes.atime.seconds = 5;
	o->attributes.atime.useconds = 6;
	o->attributes.mtime.seconds = 7;
	o->attributes.mtime.useconds = 8;
}

static void
fill_nfs_statfsres(void *p)
{
	statfsres *o = p;
	o->status = NFS_OK;
	o->statfsres_u.reply.tsize = 8192;
	o->statfsres_u.reply.bsize = 512;
	o->statfsres_u.reply.blocks = 1000000;
	o->statfsres_u.reply.bfree = 2000;
	o->statfsres_u.reply.bavail = 1000;
}

static void
fill_nfs_readlinkres(void *p)
{
	readlinkres *o = p;
	o->status = NFS_OK;
	o->readlinkres_u.data = "target/path";
}

/* ---- mount.x ---- */

static void
fill_mount_fhstatus_ok(void *p)
{
	fhstatus *o = p;
	o->fhs_status = 0;
	memcpy(o->fhstatus_u.fhs_fhandle, rt_bytes, FHSIZE);
}

static void
fill_mount_fhstatus_err(void *p)
{
	fhstatus *o = p;
	o->fhs_status = 13;
}

static void
fill_mount_mountlist(void *p)
{
	static struct mountbody b[3];
	static const char *const hosts[3] = { "alpha", "beta.example.org", "c" };
	static const char *const dirs[3] = { "/export", "/home/user", "/" };
	mountlist *o = p;
	for (int i = 0; i < 3; i++) {
		b[i].ml_hostname = (char *)hosts[i];
		b[i].ml_directory = (char *)dirs[i];
		b[i].ml_next = i < 2 ? &b[i + 1] : NULL;
	}
	*o = &b[0];
}

static void
fill_mount_exports(void *p)
{
	static struct groupnode g[2];
	static struct exportnode x[2];
	exports *o = p;
	g[0].gr_name = "staff";
	g[0].gr_next = &g[1];
	g[1].gr_name = "wheel";
	g[1].gr_next = NULL;
	x[0].ex_dir = "/export/a";
	x[0].ex_groups = &g[0];
	x[0].ex_next = &x[1];
	x[1].ex_dir = "/export/bb";
	x[1].ex_groups = NULL;
	x[1].ex_next = NULL;
	*o = &x[0];
}

static void
fill_mount_dirpath(void *p)
{
	dirpath *o = p;
	*o = "/export/home";
}

/* ---- nlm_prot.x ---- */

static void
rt_lock(struct nlm_lock *l)
{
	l->caller_name = "client.example.org";
	l->fh.n_len = 32;
	l->fh.n_bytes = rt_bytes;
	l->oh.n_len = 7;
	l->oh.n_bytes = rt_bytes + 1;
	l->svid = -12345;
	l->l_offset = 0;
	l->l_len = 0xffffffffu;
}

static void
fill_nlm_testres_denied(void *p)
{
	nlm_testres *o = p;
	o->cookie.n_len = 5;
	o->cookie.n_bytes = rt_bytes;
	o->stat.stat = nlm_denied;
	o->stat.nlm_testrply_u.holder.exclusive = 1;
	o->stat.nlm_testrply_u.holder.svid = 77;
	o->stat.nlm_testrply_u.holder.oh.n_len = 0;
	o->stat.nlm_testrply_u.holder.oh.n_bytes = NULL;
	o->stat.nlm_testrply_u.holder.l_offset = 10;
	o->stat.nlm_testrply_u.holder.l_len = 20;
}

static void
fill_nlm_testres_granted(void *p)
{
	nlm_testres *o = p;
	o->cookie.n_len = 1;
	o->cookie.n_bytes = rt_bytes;
	o->stat.stat = nlm_granted;
}

static void
fill_nlm_lockargs(void *p)
{
	nlm_lockargs *o = p;
	o->cookie.n_len = 8;
	o->cookie.n_bytes = rt_bytes + 8;
	o->block = 1;
	o->exclusive = 0;
	rt_lock(&o->alock);
	o->reclaim = 1;
	o->state = 3;
}

static void
fill_nlm_shareargs(void *p)
{
	nlm_shareargs *o = p;
	o->cookie.n_len = 2;
	o->cookie.n_bytes = rt_bytes;
	o->share.caller_name = "sharer";
	o->share.fh.n_len = 3;
	o->share.fh.n_bytes = rt_bytes;
	o->share.oh.n_len = 4;
	o->share.oh.n_bytes = rt_bytes;
	o->share.mode = fsm_DR;
	o->share.access = fsa_RW;
	o->reclaim = 0;
}

static void
fill_nlm_notify(void *p)
{
	nlm_notify *o = p;
	o->name = "rebooted-host";
	o->state = -7;
}

static void
fill_nlm_res(void *p)
{
	nlm_res *o = p;
	o->cookie.n_len = 0;
	o->cookie.n_bytes = NULL;
	o->stat.stat = nlm_denied_grace_period;
}

/* ---- the cases ---- */

static const rt_case rt_cases[] = {
	RT_CASE(nfs_fattr, fattr),
	RT_CASE(nfs_attrstat_ok, attrstat),
	RT_CASE(nfs_attrstat_err, attrstat),
	RT_CASE(nfs_diropargs, diropargs),
	RT_CASE(nfs_readres, readres),
	RT_CASE(nfs_writeargs, writeargs),
	RT_CASE(nfs_readdirres, readdirres),
	RT_CASE(nfs_readdirres_empty, readdirres),
	RT_CASE(nfs_symlinkargs, symlinkargs),
	RT_CASE(nfs_statfsres, statfsres),
	RT_CASE(nfs_readlinkres, readlinkres),
	RT_CASE(mount_fhstatus_ok, fhstatus),
	RT_CASE(mount_fhstatus_err, fhstatus),
	RT_CASE(mount_mountlist, mountlist),
	RT_CASE(mount_exports, exports),
	RT_CASE(mount_dirpath, dirpath),
	RT_CASE(nlm_testres_denied, nlm_testres),
	RT_CASE(nlm_testres_granted, nlm_testres),
	RT_CASE(nlm_lockargs, nlm_lockargs),
	RT_CASE(nlm_shareargs, nlm_shareargs),
	RT_CASE(nlm_notify, nlm_notify),
	RT_CASE(nlm_res, nlm_res),
};

#include "rt_find.h"

#endif

/*
 * nfs41_ganesha -- an NFSv4.1 client built with idlc (tests/idlc/world/nfs4_prot.x) against a
 * real nfs-ganesha that ganesha.sh starts on loopback:
 *
 *   nfs41_ganesha PORT
 *
 * 0. First, without ganesha: the callback handler's answers to CB_COMPOUND (CB_SEQUENCE +
 *    CB_RECALL, a CB_SEQUENCE of another session) and CB_NULL, against an rc_server playing
 *    the NFS server's part (fake_nfs below) -- since ganesha sends none of them here.
 * 1. The back channel (RFC 5661 section 2.10.3.1): the client serves NFS4_CALLBACK
 *    (rc_client_serve: CB_NULL, CB_COMPOUND) on its own connection, then EXCHANGE_ID and
 *    CREATE_SESSION with CREATE_SESSION4_FLAG_CONN_BACK_CHAN and csa_cb_program
 *    NFS4_CALLBACK. Checked: ganesha grants the back channel (csr_flags) and made its callback
 *    client on this connection (SEQUENCE's sr_status_flags lack SEQ4_STATUS_CB_PATH_DOWN,
 *    which a second client, whose session has no back channel, gets), and forward calls go on
 *    beside the registration: OPEN (creating a file, asking for a delegation), WRITE, CLOSE
 *    (ganesha.sh checks the file's bytes in the export).
 *    ganesha 4.3 calls on a v4.1 back channel only to recall a delegation or a layout (no
 *    CB_NULL: it probes with CB_NULL for v4.0 only), and its VFS FSAL grants no delegation
 *    (fs_info.delegations is 0): the OPEN's answer is checked to say so
 *    (OPEN_DELEGATE_NONE_EXT, WND4_NOT_SUPP_FTYPE). Were one granted, it would be returned
 *    (DELEGRETURN) after the WRITE; were one recalled, the handler answers CB_SEQUENCE
 *    (checking the session) and CB_RECALL (NFS4_OK).
 * 2. The call of ganesha's callback client that can be drawn: NFSv4.0's CB_NULL, sent during
 *    SETCLIENTID_CONFIRM (with NFSV4 { Delegations = true; }) on a connection ganesha opens
 *    to the callback address -- an rc_server serving the same idlc table answers it.
 * 3. DESTROY_SESSION and DESTROY_CLIENTID.
 *
 * Prints "ok ..." / "FAIL ..." lines and what ganesha sent; exits 0 when every check passed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nfs4_prot.h"

#define FILE_NAME "rc-nfs41-probe"
#define FILE_TEXT "written by remotecall over NFSv4.1\n"

static int failures;

static bool check(bool ok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%s ", ok ? "ok  " : "FAIL");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
	if (!ok)
		failures++;
	return ok;
}

/* ---- the callback program's handlers ------------------------------------------------------ */

/* What arrived on one registration of NFS4_CALLBACK (its context). The back channel's
 * handlers run on the main thread (inside its calls); the v4.0 server's on its own thread. */
typedef struct cb_state {
	atomic_int nulls, compounds, sequences, recalls, bad_sessions;
	atomic_uint null_flavor;
	sessionid4 sessionid; /* ours, set before any call can name it */
	stateid4 recall_stateid; /* the last CB_RECALL's, for DELEGRETURN */
} cb_state;

bool cb_null_1_svc(rc_svc_req *req)
{
	cb_state *st = rc_svc_req_context(req);
	atomic_store(&st->null_flavor, rc_svc_req_flavor(req));
	atomic_fetch_add(&st->nulls, 1);
	return true;
}

/* CB_COMPOUND: CB_SEQUENCE first (it must name our session), CB_RECALL answered NFS4_OK (the
 * main thread then returns the delegation), any other operation NFS4ERR_NOTSUPP (every CB
 * result begins with its status; only that is sent when it is not NFS4_OK). The result is
 * malloc'd: the server frees it after the reply. */
bool cb_compound_1_svc(const CB_COMPOUND4args *arg, CB_COMPOUND4res *res, rc_svc_req *req)
{
	cb_state *st = rc_svc_req_context(req);
	unsigned n = arg->argarray.argarray_len;
	atomic_fetch_add(&st->compounds, 1);
	res->status = NFS4_OK;
	if (n == 0)
		return true;
	if (!(res->resarray.resarray_val = calloc(n, sizeof(nfs_cb_resop4))))
		return false;
	for (unsigned i = 0; i < n && res->status == NFS4_OK; i++) {
		const nfs_cb_argop4 *op = &arg->argarray.argarray_val[i];
		nfs_cb_resop4 *r = &res->resarray.resarray_val[i];
		res->resarray.resarray_len = i + 1;
		r->resop = op->argop;
		if (op->argop == OP_CB_SEQUENCE && i == 0) {
			const CB_SEQUENCE4args *a = &op->nfs_cb_argop4_u.opcbsequence;
			CB_SEQUENCE4res *s = &r->nfs_cb_resop4_u.opcbsequence;
			atomic_fetch_add(&st->sequences, 1);
			if (memcmp(a->csa_sessionid, st->sessionid, sizeof(sessionid4)) != 0) {
				atomic_fetch_add(&st->bad_sessions, 1);
				s->csr_status = NFS4ERR_BADSESSION;
			} else {
				CB_SEQUENCE4resok *ok = &s->CB_SEQUENCE4res_u.csr_resok4;
				s->csr_status = NFS4_OK;
				memcpy(ok->csr_sessionid, a->csa_sessionid, sizeof(sessionid4));
				ok->csr_sequenceid = a->csa_sequenceid;
				ok->csr_slotid = a->csa_slotid;
				ok->csr_highest_slotid = a->csa_highest_slotid;
				ok->csr_target_highest_slotid = a->csa_highest_slotid;
			}
			res->status = s->csr_status;
		} else if (op->argop == OP_CB_SEQUENCE || i == 0) {
			/* CB_SEQUENCE anywhere but first, or first missing */
			r->nfs_cb_resop4_u.opcbsequence.csr_status = NFS4ERR_SEQUENCE_POS;
			res->status = NFS4ERR_SEQUENCE_POS;
		} else if (op->argop == OP_CB_RECALL) {
			st->recall_stateid = op->nfs_cb_argop4_u.opcbrecall.stateid;
			atomic_fetch_add(&st->recalls, 1);
			r->nfs_cb_resop4_u.opcbrecall.status = NFS4_OK;
		} else if (op->argop >= OP_CB_GETATTR && op->argop <= OP_CB_NOTIFY_DEVICEID) {
			r->nfs_cb_resop4_u.opcbrecall.status = NFS4ERR_NOTSUPP;
			res->status = NFS4ERR_NOTSUPP;
		} else {
			r->resop = OP_CB_ILLEGAL;
			r->nfs_cb_resop4_u.opcbillegal.status = NFS4ERR_OP_ILLEGAL;
			res->status = NFS4ERR_OP_ILLEGAL;
		}
	}
	return true;
}

/* ---- the handler checked first against remotecall's own server --------------------------- */

/*
 * ganesha sends no CB_COMPOUND here (see the head comment), so the handler's answers are
 * first checked against an rc_server playing the NFS server's part: its COMPOUND routine
 * calls the client back on the client's connection (rc_svc_req_backchannel) with CB_SEQUENCE
 * naming the SEQUENCE's session + CB_RECALL, then with another session, then CB_NULL, and
 * keeps what came back.
 */
typedef struct fake_nfs {
	atomic_int calls; /* COMPOUNDs served, counted after the fields below are written: the
	                   * client reads them after it (the reply's order through the socket is
	                   * one ThreadSanitizer cannot see) */
	rc_status st_ok, st_bad, st_null;
	nfsstat4 ok_status, bad_status;
	unsigned ok_len, bad_len;
	bool echoed;                /* CB_SEQUENCE's result named the session and sequence */
	nfsstat4 recall_status;
} fake_nfs;

#define FAKE_DELEG "rc-deleg-sid" /* 12 bytes: a stateid's other */

bool nfsproc4_null_4_svc(rc_svc_req *req)
{
	(void)req;
	return true;
}

bool nfsproc4_compound_4_svc(const COMPOUND4args *arg, COMPOUND4res *res, rc_svc_req *req)
{
	fake_nfs *f = rc_svc_req_context(req);
	rc_client *back;
	res->status = NFS4_OK; /* no results: the client asks nothing of this server */
	if (arg->argarray.argarray_len < 1 || arg->argarray.argarray_val[0].argop != OP_SEQUENCE ||
	    rc_svc_req_backchannel(req, NFS4_CALLBACK, NFS_CB, &back) != RC_OK)
		return false;
	nfs_cb_argop4 ops[2] = {{.argop = OP_CB_SEQUENCE}, {.argop = OP_CB_RECALL}};
	CB_SEQUENCE4args *sa = &ops[0].nfs_cb_argop4_u.opcbsequence;
	memcpy(sa->csa_sessionid, arg->argarray.argarray_val[0].nfs_argop4_u.opsequence.sa_sessionid,
	       sizeof(sessionid4));
	sa->csa_sequenceid = 1;
	CB_RECALL4args *ra = &ops[1].nfs_cb_argop4_u.opcbrecall;
	ra->stateid.seqid = 1;
	memcpy(ra->stateid.other, FAKE_DELEG, sizeof ra->stateid.other);
	ra->fh = (nfs_fh4){.nfs_fh4_len = 4, .nfs_fh4_val = "fh01"};
	CB_COMPOUND4args cb = {.minorversion = 1, .argarray = {2, ops}};
	CB_COMPOUND4res cr = {0};
	f->st_ok = cb_compound_1(back, &cb, &cr);
	f->ok_status = cr.status;
	f->ok_len = cr.resarray.resarray_len;
	if (f->st_ok == RC_OK && f->ok_len == 2) {
		const CB_SEQUENCE4res *sr = &cr.resarray.resarray_val[0].nfs_cb_resop4_u.opcbsequence;
		f->echoed = sr->csr_status == NFS4_OK &&
		            memcmp(sr->CB_SEQUENCE4res_u.csr_resok4.csr_sessionid, sa->csa_sessionid,
		                   sizeof(sessionid4)) == 0 &&
		            sr->CB_SEQUENCE4res_u.csr_resok4.csr_sequenceid == 1;
		f->recall_status = cr.resarray.resarray_val[1].nfs_cb_resop4_u.opcbrecall.status;
	}
	rc_xdr_free(cb_compound_1_info.xres, &cr);
	sa->csa_sessionid[0] ^= 1; /* another session: refused */
	memset(&cr, 0, sizeof cr);
	f->st_bad = cb_compound_1(back, &cb, &cr);
	f->bad_status = cr.status;
	f->bad_len = cr.resarray.resarray_len;
	rc_xdr_free(cb_compound_1_info.xres, &cr);
	f->st_null = cb_null_1(back);
	rc_client_destroy(back);
	atomic_fetch_add(&f->calls, 1);
	return true;
}

/* ---- the forward channel ------------------------------------------------------------------- */

typedef struct nfs_client {
	const char *name;
	rc_client *clnt;
	uint32_t minor;
	clientid4 clientid;
	sequenceid4 create_seq; /* EXCHANGE_ID's eir_sequenceid */
	sessionid4 sessionid;
	bool have_session;
	sequenceid4 slot_seq; /* slot 0's last sequence id */
	uint32_t seq_flags;   /* the last SEQUENCE's sr_status_flags */
} nfs_client;

#define MAX_OPS 8

/*
 * compound -- one COMPOUND of n operations, preceded by SEQUENCE on slot 0 when the client
 * has a session. Returns the status of the compound (NFS4_OK: every operation succeeded), or
 * -1 when the call itself failed; *res (the caller frees it with free_res) holds the results
 * of the operations given, SEQUENCE's left out.
 */
static int compound(nfs_client *c, const nfs_argop4 *ops, unsigned n, COMPOUND4res *res)
{
	nfs_argop4 all[MAX_OPS + 1];
	unsigned k = 0;
	if (c->have_session) {
		SEQUENCE4args *s = &all[k].nfs_argop4_u.opsequence;
		all[k].argop = OP_SEQUENCE;
		memcpy(s->sa_sessionid, c->sessionid, sizeof(sessionid4));
		s->sa_sequenceid = ++c->slot_seq;
		s->sa_slotid = 0;
		s->sa_highest_slotid = 0;
		s->sa_cachethis = false;
		k++;
	}
	if (n)
		memcpy(&all[k], ops, n * sizeof *ops);
	COMPOUND4args a = {.minorversion = c->minor,
	                   .argarray = {.argarray_len = k + n, .argarray_val = all}};
	memset(res, 0, sizeof *res);
	rc_status st = nfsproc4_compound_4(c->clnt, &a, res);
	if (st != RC_OK) {
		printf("     %s: COMPOUND: %s\n", c->name, rc_strerror(st));
		return -1;
	}
	if (k && res->resarray.resarray_len > 0) {
		const SEQUENCE4res *sr = &res->resarray.resarray_val[0].nfs_resop4_u.opsequence;
		if (sr->sr_status == NFS4_OK)
			c->seq_flags = sr->SEQUENCE4res_u.sr_resok4.sr_status_flags;
		/* hand back the operations' results alone */
		memmove(res->resarray.resarray_val, res->resarray.resarray_val + 1,
		        (res->resarray.resarray_len - 1) * sizeof(nfs_resop4));
		res->resarray.resarray_len--;
	}
	if (res->status != NFS4_OK)
		printf("     %s: COMPOUND status %d after %u operation(s)\n", c->name, res->status,
		       res->resarray.resarray_len);
	return res->status;
}

/* free_res -- what compound's decoding allocated (SEQUENCE's result, moved out, had none). */
static void free_res(COMPOUND4res *res)
{
	rc_xdr_free(nfsproc4_compound_4_info.xres, res);
}

/* connect_client -- an rc_client of NFSv4 at port, AUTH_SYS root, waiting up to wait_s for the
 * server to answer NULL. */
static rc_client *connect_client(int port, int wait_s)
{
	char uri[64];
	snprintf(uri, sizeof uri, "tcp://127.0.0.1:%d", port);
	for (int i = 0; i < wait_s * 10; i++) {
		rc_client *clnt;
		if (rc_client_create(&clnt, uri, NFS4_PROGRAM, NFS_V4) == RC_OK) {
			rc_client_set_timeout(clnt, 15000);
			if (rc_client_set_auth_sys(clnt, "rc-nfs41", 0, 0, NULL, 0) == RC_OK &&
			    nfsproc4_null_4(clnt) == RC_OK)
				return clnt;
			rc_client_destroy(clnt);
		}
		usleep(100 * 1000);
	}
	return NULL;
}

static void set_owner(char *buf, size_t len, const char *what)
{
	snprintf(buf, len, "remotecall-nfs41-%s-%ld-%ld", what, (long)getpid(), (long)time(NULL));
}

/* exchange_id -- EXCHANGE_ID (v4.1): the client's clientid and CREATE_SESSION's sequence. */
static bool exchange_id(nfs_client *c, const char *owner)
{
	nfs_argop4 op = {.argop = OP_EXCHANGE_ID};
	EXCHANGE_ID4args *a = &op.nfs_argop4_u.opexchange_id;
	memcpy(a->eia_clientowner.co_verifier, "rc-nfs41", NFS4_VERIFIER_SIZE);
	a->eia_clientowner.co_ownerid.co_ownerid_len = (unsigned)strlen(owner);
	a->eia_clientowner.co_ownerid.co_ownerid_val = (char *)owner;
	a->eia_flags = EXCHGID4_FLAG_USE_NON_PNFS;
	a->eia_state_protect.spa_how = SP4_NONE;
	COMPOUND4res res;
	int st = compound(c, &op, 1, &res);
	bool ok = st == NFS4_OK && res.resarray.resarray_len == 1;
	if (ok) {
		const EXCHANGE_ID4resok *r =
		        &res.resarray.resarray_val[0].nfs_resop4_u.opexchange_id.EXCHANGE_ID4res_u.eir_resok4;
		c->clientid = r->eir_clientid;
		c->create_seq = r->eir_sequenceid;
	}
	free_res(&res);
	return check(ok, "%s: EXCHANGE_ID (status %d)", c->name, st);
}

/* create_session -- CREATE_SESSION, with a back channel (program NFS4_CALLBACK, AUTH_SYS)
 * when back; *csr_flags gets the server's flags. */
static bool create_session(nfs_client *c, bool back, uint32_t *csr_flags)
{
	nfs_argop4 op = {.argop = OP_CREATE_SESSION};
	CREATE_SESSION4args *a = &op.nfs_argop4_u.opcreate_session;
	callback_sec_parms4 sec = {.cb_secflavor = RC_AUTH_SYS};
	sec.callback_sec_parms4_u.cbsp_sys_cred.aup_machname = "rc-nfs41";
	a->csa_clientid = c->clientid;
	a->csa_sequence = c->create_seq;
	a->csa_flags = back ? CREATE_SESSION4_FLAG_CONN_BACK_CHAN : 0;
	a->csa_fore_chan_attrs = (channel_attrs4){.ca_maxrequestsize = 1 << 20,
	                                          .ca_maxresponsesize = 1 << 20,
	                                          .ca_maxresponsesize_cached = 8192,
	                                          .ca_maxoperations = 16,
	                                          .ca_maxrequests = 1};
	a->csa_back_chan_attrs = (channel_attrs4){.ca_maxrequestsize = 16384,
	                                          .ca_maxresponsesize = 16384,
	                                          .ca_maxresponsesize_cached = 0,
	                                          .ca_maxoperations = 8,
	                                          .ca_maxrequests = 1};
	a->csa_cb_program = NFS4_CALLBACK;
	a->csa_sec_parms.csa_sec_parms_len = 1;
	a->csa_sec_parms.csa_sec_parms_val = &sec;
	COMPOUND4res res;
	int st = compound(c, &op, 1, &res);
	bool ok = st == NFS4_OK && res.resarray.resarray_len == 1;
	if (ok) {
		const CREATE_SESSION4resok *r = &res.resarray.resarray_val[0]
		                                         .nfs_resop4_u.opcreate_session
		                                         .CREATE_SESSION4res_u.csr_resok4;
		memcpy(c->sessionid, r->csr_sessionid, sizeof(sessionid4));
		c->have_session = true;
		c->slot_seq = 0;
		*csr_flags = r->csr_flags;
	}
	free_res(&res);
	return check(ok, "%s: CREATE_SESSION%s (status %d)", c->name,
	             back ? " with CREATE_SESSION4_FLAG_CONN_BACK_CHAN" : "", st);
}

/* reclaim_complete -- SEQUENCE + RECLAIM_COMPLETE (needed before the first OPEN). */
static bool reclaim_complete(nfs_client *c)
{
	nfs_argop4 op = {.argop = OP_RECLAIM_COMPLETE};
	COMPOUND4res res;
	int st = compound(c, &op, 1, &res);
	free_res(&res);
	return check(st == NFS4_OK, "%s: SEQUENCE + RECLAIM_COMPLETE (status %d)", c->name, st);
}

/* sequence -- SEQUENCE alone: a round trip on the session. */
static bool sequence(nfs_client *c)
{
	COMPOUND4res res;
	int st = compound(c, NULL, 0, &res);
	free_res(&res);
	return check(st == NFS4_OK, "%s: SEQUENCE (status %d)", c->name, st);
}

/* destroy -- DESTROY_SESSION, then DESTROY_CLIENTID, each alone in its compound. */
static void destroy(nfs_client *c)
{
	nfs_argop4 op = {.argop = OP_DESTROY_SESSION};
	memcpy(op.nfs_argop4_u.opdestroy_session.dsa_sessionid, c->sessionid, sizeof(sessionid4));
	COMPOUND4res res;
	c->have_session = false;
	int st = compound(c, &op, 1, &res);
	free_res(&res);
	check(st == NFS4_OK, "%s: DESTROY_SESSION (status %d)", c->name, st);
	op = (nfs_argop4){.argop = OP_DESTROY_CLIENTID};
	op.nfs_argop4_u.opdestroy_clientid.dca_clientid = c->clientid;
	st = compound(c, &op, 1, &res);
	free_res(&res);
	check(st == NFS4_OK, "%s: DESTROY_CLIENTID (status %d)", c->name, st);
}

/* component -- a name as NFSv4 carries it (utf8string). */
static component4 component(const char *s)
{
	return (component4){.utf8string_len = (unsigned)strlen(s), .utf8string_val = (char *)s};
}

/*
 * open_write_close -- PUTROOTFH, LOOKUP "export", OPEN FILE_NAME (create, read and write,
 * asking for a write delegation), GETFH; WRITE FILE_TEXT; CLOSE. Checks the delegation
 * answer; returns a granted one (on the file) with DELEGRETURN.
 */
static void open_write_close(nfs_client *c)
{
	nfs_argop4 ops[4] = {{.argop = OP_PUTROOTFH}, {.argop = OP_LOOKUP}, {.argop = OP_OPEN},
	                     {.argop = OP_GETFH}};
	ops[1].nfs_argop4_u.oplookup.objname = component("export");
	OPEN4args *o = &ops[2].nfs_argop4_u.opopen;
	char owner[] = "rc-nfs41-open-owner";
	o->share_access = OPEN4_SHARE_ACCESS_BOTH | OPEN4_SHARE_ACCESS_WANT_WRITE_DELEG;
	o->share_deny = OPEN4_SHARE_DENY_NONE;
	o->owner.clientid = c->clientid;
	o->owner.owner.owner_len = (unsigned)strlen(owner);
	o->owner.owner.owner_val = owner;
	o->openhow.opentype = OPEN4_CREATE;
	o->openhow.openflag4_u.how.mode = UNCHECKED4; /* no attributes: an empty fattr4 */
	o->claim.claim = CLAIM_NULL;
	o->claim.open_claim4_u.file = component(FILE_NAME);
	COMPOUND4res res;
	int st = compound(c, ops, 4, &res);
	if (!check(st == NFS4_OK && res.resarray.resarray_len == 4,
	           "%s: SEQUENCE + PUTROOTFH + LOOKUP + OPEN(create %s) + GETFH (status %d)",
	           c->name, FILE_NAME, st)) {
		free_res(&res);
		return;
	}
	const OPEN4resok *ok = &res.resarray.resarray_val[2].nfs_resop4_u.opopen.OPEN4res_u.resok4;
	const nfs_fh4 *fh = &res.resarray.resarray_val[3].nfs_resop4_u.opgetfh.GETFH4res_u.resok4.object;
	stateid4 open_sid = ok->stateid;
	const open_delegation4 *d = &ok->delegation;
	printf("     OPEN's delegation: type %d", d->delegation_type);
	if (d->delegation_type == OPEN_DELEGATE_NONE_EXT)
		printf(", why none %d", d->open_delegation4_u.od_whynone.ond_why);
	printf("\n");
	check(d->delegation_type == OPEN_DELEGATE_NONE_EXT &&
	              d->open_delegation4_u.od_whynone.ond_why == WND4_NOT_SUPP_FTYPE,
	      "%s: OPEN asked for a write delegation: ganesha's VFS FSAL grants none "
	      "(OPEN_DELEGATE_NONE_EXT, WND4_NOT_SUPP_FTYPE) -- if this fails because one was "
	      "granted, a recall can now be drawn: extend this test",
	      c->name);

	/* PUTFH + WRITE + CLOSE (+ DELEGRETURN of a delegation granted after all) */
	nfs_argop4 w[4] = {{.argop = OP_PUTFH}, {.argop = OP_WRITE}, {.argop = OP_CLOSE},
	                   {.argop = OP_DELEGRETURN}};
	unsigned nw = 3;
	w[0].nfs_argop4_u.opputfh.object = *fh;
	WRITE4args *wa = &w[1].nfs_argop4_u.opwrite;
	wa->stateid = open_sid;
	wa->offset = 0;
	wa->stable = FILE_SYNC4;
	wa->data.data_len = (unsigned)strlen(FILE_TEXT);
	wa->data.data_val = FILE_TEXT;
	w[2].nfs_argop4_u.opclose.open_stateid = open_sid;
	if (d->delegation_type == OPEN_DELEGATE_WRITE || d->delegation_type == OPEN_DELEGATE_READ) {
		w[3].nfs_argop4_u.opdelegreturn.deleg_stateid =
		        d->delegation_type == OPEN_DELEGATE_WRITE ? d->open_delegation4_u.write.stateid
		                                                  : d->open_delegation4_u.read.stateid;
		nw = 4;
	}
	COMPOUND4res wres;
	st = compound(c, w, nw, &wres);
	bool wrote = st == NFS4_OK && wres.resarray.resarray_len == nw &&
	             wres.resarray.resarray_val[1].nfs_resop4_u.opwrite.WRITE4res_u.resok4.count ==
	                     strlen(FILE_TEXT);
	check(wrote, "%s: SEQUENCE + PUTFH + WRITE(%zu bytes) + CLOSE%s (status %d)", c->name,
	      strlen(FILE_TEXT), nw == 4 ? " + DELEGRETURN" : "", st);
	free_res(&wres);
	free_res(&res);
}

/* ---- NFSv4.0's CB_NULL, to an rc_server ----------------------------------------------------- */

static void *run_server(void *srv)
{
	rc_server_run(srv);
	return NULL;
}

/* An rc_server run by a thread of its own, on a free loopback port. */
typedef struct test_server {
	rc_server *srv;
	pthread_t thr;
	int port;
} test_server;

/* start_server -- ts serving def with ctx (threads workers), checked as what. */
static bool start_server(test_server *ts, const rc_svc_prog *def, void *ctx, unsigned threads,
                         const char *what)
{
	char bound[128];
	bool ok = rc_server_create(&ts->srv) == RC_OK;
	if (ok && (rc_server_set_threads(ts->srv, threads) != RC_OK ||
	           rc_server_register(ts->srv, def, ctx) != RC_OK ||
	           rc_server_listen(ts->srv, "tcp://127.0.0.1:0", bound, sizeof bound) != RC_OK ||
	           pthread_create(&ts->thr, NULL, run_server, ts->srv) != 0)) {
		rc_server_destroy(ts->srv);
		ok = false;
	}
	if (ok)
		ts->port = atoi(strrchr(bound, ':') + 1);
	return check(ok, "%s", what);
}

static void stop_server(test_server *ts)
{
	rc_server_stop(ts->srv);
	pthread_join(ts->thr, NULL);
	rc_server_destroy(ts->srv);
}

/* handler_self_check -- the callback handler's answers, against fake_nfs (above). */
static void handler_self_check(void)
{
	static cb_state st; /* outlives the client */
	fake_nfs f = {0};
	test_server ts;
	/* two workers: the routine's blocking call back needs another thread to read its reply */
	if (!start_server(&ts, &nfs4_program_4_program, &f, 2,
	                  "self-check: an rc_server playing the NFS server"))
		return;
	nfs_client c = {.name = "self-check client", .minor = 1, .have_session = true};
	memcpy(c.sessionid, "rc-self-session!", sizeof(sessionid4));
	memcpy(st.sessionid, c.sessionid, sizeof(sessionid4));
	if ((c.clnt = connect_client(ts.port, 5)) != NULL &&
	    check(rc_client_serve(c.clnt, &nfs4_callback_1_program, &st) == RC_OK,
	          "self-check: rc_client_serve(NFS4_CALLBACK)")) {
		COMPOUND4res res;
		int s = compound(&c, NULL, 0, &res); /* SEQUENCE: the server calls back meanwhile */
		free_res(&res);
		check(s == NFS4_OK && atomic_load(&f.calls) == 1, "self-check: the COMPOUND (status %d)",
		      s);
		check(f.st_ok == RC_OK && f.ok_status == NFS4_OK && f.ok_len == 2 && f.echoed &&
		              f.recall_status == NFS4_OK &&
		              memcmp(st.recall_stateid.other, FAKE_DELEG, 12) == 0,
		      "self-check: CB_SEQUENCE + CB_RECALL answered NFS4_OK, the session echoed "
		      "(%s, status %d, %u results)", rc_strerror(f.st_ok), f.ok_status, f.ok_len);
		check(f.st_bad == RC_OK && f.bad_status == NFS4ERR_BADSESSION && f.bad_len == 1,
		      "self-check: a CB_SEQUENCE naming another session: NFS4ERR_BADSESSION "
		      "(status %d, %u results)", f.bad_status, f.bad_len);
		check(f.st_null == RC_OK && atomic_load(&st.nulls) == 1, "self-check: CB_NULL");
		check(atomic_load(&st.compounds) == 2 && atomic_load(&st.sequences) == 2 &&
		              atomic_load(&st.recalls) == 1 && atomic_load(&st.bad_sessions) == 1,
		      "self-check: the handler counted 2 CB_COMPOUND, 2 CB_SEQUENCE, 1 CB_RECALL, "
		      "1 other session");
	} else if (!c.clnt) {
		check(false, "self-check: connect");
	}
	rc_client_destroy(c.clnt);
	stop_server(&ts);
}

static void v40_cb_null(int port)
{
	cb_state st = {0};
	test_server ts;
	if (!start_server(&ts, &nfs4_callback_1_program, &st, 1,
	                  "v4.0: an rc_server serving NFS4_CALLBACK"))
		return;
	char raddr[64], owner[96];
	snprintf(raddr, sizeof raddr, "127.0.0.1.%d.%d", ts.port >> 8, ts.port & 255);
	set_owner(owner, sizeof owner, "v40");

	nfs_client c = {.name = "v4.0 client", .minor = 0};
	if ((c.clnt = connect_client(port, 5)) == NULL) {
		check(false, "v4.0: connect");
		goto out;
	}
	nfs_argop4 op = {.argop = OP_SETCLIENTID};
	SETCLIENTID4args *a = &op.nfs_argop4_u.opsetclientid;
	memcpy(a->client.verifier, "rc-nfs40", NFS4_VERIFIER_SIZE);
	a->client.id.id_len = (unsigned)strlen(owner);
	a->client.id.id_val = owner;
	a->callback.cb_program = NFS4_CALLBACK;
	a->callback.cb_location.na_r_netid = "tcp";
	a->callback.cb_location.na_r_addr = raddr;
	a->callback_ident = 1;
	COMPOUND4res res;
	int s = compound(&c, &op, 1, &res);
	if (!check(s == NFS4_OK && res.resarray.resarray_len == 1,
	           "v4.0: SETCLIENTID with callback tcp %s (status %d)", raddr, s)) {
		free_res(&res);
		goto out;
	}
	const SETCLIENTID4resok *r =
	        &res.resarray.resarray_val[0].nfs_resop4_u.opsetclientid.SETCLIENTID4res_u.resok4;
	op = (nfs_argop4){.argop = OP_SETCLIENTID_CONFIRM};
	op.nfs_argop4_u.opsetclientid_confirm.clientid = r->clientid;
	memcpy(op.nfs_argop4_u.opsetclientid_confirm.setclientid_confirm, r->setclientid_confirm,
	       NFS4_VERIFIER_SIZE);
	free_res(&res);
	s = compound(&c, &op, 1, &res); /* ganesha calls CB_NULL before it answers */
	free_res(&res);
	check(s == NFS4_OK, "v4.0: SETCLIENTID_CONFIRM (status %d)", s);
	printf("     v4.0 callback server: %d CB_NULL, %d CB_COMPOUND\n", atomic_load(&st.nulls),
	       atomic_load(&st.compounds));
	check(atomic_load(&st.nulls) == 1 && atomic_load(&st.null_flavor) == RC_AUTH_SYS,
	      "v4.0: ganesha's CB_NULL (AUTH_SYS) arrived and was answered during the confirm");
out:
	rc_client_destroy(c.clnt);
	stop_server(&ts);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s PORT\n", argv[0]);
		return 2;
	}
	int port = atoi(argv[1]);
	int wait_s = getenv("RC_VALGRIND") ? 60 : 20;
	handler_self_check();
	static cb_state back; /* the back channel's: outlives the client */
	char owner[96], owner2[96];

	nfs_client a = {.name = "client A", .minor = 1};
	if (!check((a.clnt = connect_client(port, wait_s)) != NULL,
	           "ganesha answers NULL on tcp://127.0.0.1:%d", port))
		return 1;
	/* serve the callback program on this connection before the session can draw calls */
	check(rc_client_serve(a.clnt, &nfs4_callback_1_program, &back) == RC_OK,
	      "client A: rc_client_serve(NFS4_CALLBACK)");
	set_owner(owner, sizeof owner, "a");
	uint32_t flags = 0;
	if (!exchange_id(&a, owner) || !create_session(&a, true, &flags))
		goto out;
	memcpy(back.sessionid, a.sessionid, sizeof(sessionid4));
	check(flags & CREATE_SESSION4_FLAG_CONN_BACK_CHAN,
	      "client A: ganesha granted the back channel (csr_flags 0x%x)", flags);
	if (reclaim_complete(&a))
		check(!(a.seq_flags & SEQ4_STATUS_CB_PATH_DOWN),
		      "client A: SEQUENCE: the callback path is up (sr_status_flags 0x%x)",
		      a.seq_flags);

	/* the control: a client whose session has no back channel is told its path is down */
	nfs_client b = {.name = "client B", .minor = 1};
	if ((b.clnt = connect_client(port, 5)) != NULL) {
		set_owner(owner2, sizeof owner2, "b");
		uint32_t bflags = 0;
		if (exchange_id(&b, owner2) && create_session(&b, false, &bflags)) {
			if (reclaim_complete(&b))
				check(b.seq_flags & SEQ4_STATUS_CB_PATH_DOWN,
				      "client B (no back channel): SEQUENCE says "
				      "SEQ4_STATUS_CB_PATH_DOWN (sr_status_flags 0x%x)",
				      b.seq_flags);
			destroy(&b);
		}
		rc_client_destroy(b.clnt);
	} else {
		check(false, "client B: connect");
	}

	open_write_close(&a);
	v40_cb_null(port);
	/* a round trip on A after everything, so that anything ganesha sent is served */
	sequence(&a);
	destroy(&a);
	printf("     back channel: %d CB_NULL, %d CB_COMPOUND (%d CB_SEQUENCE, %d CB_RECALL)\n",
	       atomic_load(&back.nulls), atomic_load(&back.compounds),
	       atomic_load(&back.sequences), atomic_load(&back.recalls));
	check(atomic_load(&back.bad_sessions) == 0,
	      "back channel: every CB_SEQUENCE named client A's session");
out:
	rc_client_destroy(a.clnt);
	printf("%s: %d failure(s)\n", argv[0], failures);
	return failures ? 1 : 0;
}

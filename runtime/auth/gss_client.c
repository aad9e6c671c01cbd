/*
 * RPCSEC_GSS, the initiator (RFC 2203 sections 5.2 and 5.3): context establishment as a step
 * function over the tokens of INIT/CONTINUE_INIT calls, atomic sequence numbers, the header
 * MIC, the reply verifier check against the seqs a call went out with.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>

#include "runtime/auth/gss_int.h"
#include "xdr/base.h"

enum cli_state { CLI_IDLE, CLI_INIT_SENT, CLI_ESTABLISHED, CLI_FAILED };

/* Contexts kept from before renewals, for the replies to calls sent under them. */
#define RC__GSS_PREV 4

struct rc__gss_cli {
	rc__gss_sec sec;
	gss_name_t target;
	gss_cred_id_t cred;        /* the initiator's, GSS_C_NO_CREDENTIAL: the default */
	bool cred_borrowed;        /* cred is the caller's (opts.cred): not released here */
	_Atomic uint32_t service;  /* rc__gss_cli_set_service may change it between calls */
	OM_uint32 ret_flags;       /* what gss_init_sec_context gave */
	uint32_t lifetime_s;
	enum cli_state state;
	bool gss_done;             /* gss_init_sec_context said COMPLETE */
	uint32_t handle_len;
	unsigned char handle[RC__GSS_HANDLE_MAX];
	uint32_t window;
	bool bound;                /* cb: the next establishment's channel bindings */
	rc__gss_cb cb;
	atomic_uint_fast32_t seq;  /* the next sequence number */
	/* The contexts before the last renewals (rc__gss_cli_init_start), newest first, or NULL:
	 * calls sent under them may still be in flight, and their replies' verifiers and wrapping
	 * are their keys', not the new context's. The oldest goes when a renewal needs its place;
	 * read and freed under sec.lock. */
	rc__gss_sec *prev[RC__GSS_PREV];
};

void rc__gss_seqs_init(rc__gss_seqs *s)
{
	memset(s, 0, sizeof *s);
}

void rc__gss_seqs_add(rc__gss_seqs *s, uint32_t seq)
{
	s->seq[s->next] = seq;
	s->next = (s->next + 1) % RC__GSS_SEQS_KEPT;
	if (s->n < RC__GSS_SEQS_KEPT)
		s->n++;
}

int rc__gss_cli_create(rc__gss_cli **out, const rc__gss_cli_opts *o, rc__gss_err *err)
{
	OM_uint32 maj, min;
	rc__gss_cli *c;

	*out = NULL;
	if (!o || (!o->target && o->target_name == GSS_C_NO_NAME)) {
		rc__gss_err_msg(err, "no target service name");
		return -1;
	}
	uint32_t svc = o->service ? o->service : RC__GSS_SVC_INTEGRITY;
	if (svc < RC__GSS_SVC_NONE || svc > RC__GSS_SVC_PRIVACY) {
		rc__gss_err_msg(err, "unknown RPCSEC_GSS service");
		return -1;
	}
	if (!(c = calloc(1, sizeof *c))) {
		rc__gss_err_msg(err, "out of memory");
		return -1;
	}
	rc__gss_sec_init(&c->sec);
	atomic_init(&c->service, svc);
	c->lifetime_s = o->lifetime_s;
	c->cred = GSS_C_NO_CREDENTIAL;
	c->target = GSS_C_NO_NAME;
	atomic_init(&c->seq, 1);
	if (o->target_name != GSS_C_NO_NAME) {
		maj = gss_duplicate_name(&min, o->target_name, &c->target);
		if (GSS_ERROR(maj)) {
			rc__gss_err_status(err, "gss_duplicate_name (target)", maj, min);
			goto fail;
		}
	} else {
		gss_buffer_desc tn = { strlen(o->target), (void *)o->target };
		maj = gss_import_name(&min, &tn, GSS_C_NT_HOSTBASED_SERVICE, &c->target);
		if (GSS_ERROR(maj)) {
			rc__gss_err_status(err, "gss_import_name (target)", maj, min);
			goto fail;
		}
	}
	if (o->cred != GSS_C_NO_CREDENTIAL) {
		c->cred = o->cred;
		c->cred_borrowed = true;
		*out = c;
		return 0;
	}
	gss_name_t me = GSS_C_NO_NAME;
	if (o->initiator) {
		gss_buffer_desc in = { strlen(o->initiator), (void *)o->initiator };
		maj = gss_import_name(&min, &in, GSS_KRB5_NT_PRINCIPAL_NAME, &me);
		if (GSS_ERROR(maj)) {
			rc__gss_err_status(err, "gss_import_name (initiator)", maj, min);
			goto fail;
		}
	}
	gss_OID_set_desc mechs = { 1, (gss_OID)gss_mech_krb5 };
	gss_key_value_element_desc kv = { "ccache", o->ccache };
	gss_key_value_set_desc store = { 1, &kv };
	maj = gss_acquire_cred_from(&min, me, GSS_C_INDEFINITE, &mechs, GSS_C_INITIATE,
				    o->ccache ? &store : GSS_C_NO_CRED_STORE, &c->cred, NULL, NULL);
	if (me != GSS_C_NO_NAME) {
		OM_uint32 m2;
		gss_release_name(&m2, &me);
	}
	if (GSS_ERROR(maj)) {
		rc__gss_err_status(err, "gss_acquire_cred (initiator)", maj, min);
		goto fail;
	}
	*out = c;
	return 0;
fail:
	rc__gss_cli_destroy(c);
	return -1;
}

void rc__gss_cli_destroy(rc__gss_cli *c)
{
	OM_uint32 min;

	if (!c)
		return;
	if (c->target != GSS_C_NO_NAME)
		gss_release_name(&min, &c->target);
	if (c->cred != GSS_C_NO_CREDENTIAL && !c->cred_borrowed)
		gss_release_cred(&min, &c->cred);
	rc__gss_sec_fini(&c->sec);
	for (unsigned i = 0; i < RC__GSS_PREV; i++)
		if (c->prev[i] != NULL) {
			rc__gss_sec_fini(c->prev[i]);
			free(c->prev[i]);
		}
	free(c);
}

/* One gss_init_sec_context step with input (NULL: the first); the output token becomes the
 * INIT/CONTINUE_INIT arguments. Returns 1 (token in args: send it), 0 (complete, nothing to
 * send) or -1. */
static int init_step(rc__gss_cli *c, const void *in, size_t in_len, rc__gss_buf *args,
		     rc__gss_err *err)
{
	OM_uint32 maj, min, flags = 0;
	gss_buffer_desc itok = { in_len, (void *)in }, otok = GSS_C_EMPTY_BUFFER;
	OM_uint32 req = GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG |
			GSS_C_CONF_FLAG; /* asked always: rc__gss_cli_set_service may turn to privacy */

	pthread_mutex_lock(&c->sec.lock);
	maj = gss_init_sec_context(&min, c->cred, &c->sec.ctx, c->target, (gss_OID)gss_mech_krb5,
				   req, c->lifetime_s ? c->lifetime_s : GSS_C_INDEFINITE,
				   c->bound ? &c->cb.b : GSS_C_NO_CHANNEL_BINDINGS,
				   in ? &itok : GSS_C_NO_BUFFER, NULL,
				   &otok, &flags, NULL);
	if (maj == GSS_S_COMPLETE)
		rc__gss_sec_established(&c->sec);
	pthread_mutex_unlock(&c->sec.lock);
	if (GSS_ERROR(maj)) {
		OM_uint32 m2;
		rc__gss_err_status(err, "gss_init_sec_context", maj, min);
		gss_release_buffer(&m2, &otok);
		return -1;
	}
	if (maj == GSS_S_COMPLETE) {
		c->gss_done = true;
		c->ret_flags = flags;
		if (!(flags & GSS_C_MUTUAL_FLAG) || !(flags & GSS_C_INTEG_FLAG) ||
		    (rc__gss_cli_service(c) == RC__GSS_SVC_PRIVACY && !(flags & GSS_C_CONF_FLAG))) {
			gss_release_buffer(&min, &otok);
			rc__gss_err_msg(err, "gss_init_sec_context: the context lacks mutual "
					"authentication, integrity or confidentiality");
			return -1;
		}
	}
	if (otok.length == 0) {
		gss_release_buffer(&min, &otok);
		if (maj == GSS_S_COMPLETE)
			return 0;
		rc__gss_err_msg(err, "gss_init_sec_context: continue needed but no token");
		return -1;
	}
	int r = rc__gss_init_arg_encode(otok.value, otok.length, args);
	gss_release_buffer(&min, &otok);
	if (r) {
		rc__gss_err_msg(err, "context token too long or out of memory");
		return -1;
	}
	return 1;
}

void rc__gss_cli_set_bindings(rc__gss_cli *c, const unsigned char *exporter)
{
	if ((c->bound = exporter != NULL))
		(void)rc__gss_cb_make(&c->cb, exporter);
}

int rc__gss_cli_init_start(rc__gss_cli *c, rc__gss_buf *args, rc__gss_err *err)
{
	OM_uint32 min;

	args->data = NULL;
	args->len = 0;
	/* an established context is kept, newest first, for the replies to the calls still in
	 * flight under it (the oldest kept goes); other threads verify under sec.lock meanwhile */
	pthread_mutex_lock(&c->sec.lock);
	rc__gss_sec *keep = NULL;
	if (c->state == CLI_ESTABLISHED && c->sec.ctx != GSS_C_NO_CONTEXT &&
	    (keep = malloc(sizeof(*keep))) != NULL) {
		rc__gss_sec *old = c->prev[RC__GSS_PREV - 1];
		rc__gss_sec_init(keep);
		keep->ctx = c->sec.ctx;
		keep->fast = c->sec.fast;
		c->sec.ctx = GSS_C_NO_CONTEXT;
		c->sec.fast = NULL;
		memmove(&c->prev[1], &c->prev[0], (RC__GSS_PREV - 1) * sizeof(c->prev[0]));
		c->prev[0] = keep;
		if (old != NULL) {
			rc__gss_sec_fini(old);
			free(old);
		}
	}
	rc__gss_sec_reset(&c->sec);
	if (c->sec.ctx != GSS_C_NO_CONTEXT)
		gss_delete_sec_context(&min, &c->sec.ctx, GSS_C_NO_BUFFER);
	pthread_mutex_unlock(&c->sec.lock);
	c->gss_done = false;
	c->handle_len = 0;
	c->window = 0;
	atomic_store(&c->seq, 1);
	c->state = CLI_FAILED;
	int r = init_step(c, NULL, 0, args, err);
	if (r != 1) {
		if (r == 0)
			rc__gss_err_msg(err, "gss_init_sec_context: complete without a token");
		return -1;
	}
	c->state = CLI_INIT_SENT;
	return 0;
}

int rc__gss_cli_init_next(rc__gss_cli *c, const void *res, size_t res_len, uint32_t verf_flavor,
			  const void *verf, size_t verf_len, rc__gss_buf *args, rc__gss_err *err)
{
	rc__gss_init_res ir;

	args->data = NULL;
	args->len = 0;
	if (c->state != CLI_INIT_SENT) {
		rc__gss_err_msg(err, "no context establishment under way");
		return -1;
	}
	c->state = CLI_FAILED;
	if (rc__gss_init_res_decode(res, res_len, &ir)) {
		rc__gss_err_msg(err, "malformed rpc_gss_init_res");
		return -1;
	}
	if (ir.major == GSS_S_BAD_BINDINGS) { /* (MIT's minor code says "Success" here) */
		rc__gss_err_status(err, c->bound ? "the server refused the context's channel bindings "
					 "(tls-exporter, RFC 9266)"
				   : "the server requires channel bindings (tls-exporter, RFC 9266), "
				     "and this connection gave none", ir.major, 0);
		return -1;
	}
	if (ir.major != GSS_S_COMPLETE && ir.major != GSS_S_CONTINUE_NEEDED) {
		rc__gss_err_status(err, "the server's gss_accept_sec_context", ir.major, ir.minor);
		return -1;
	}
	if (ir.handle_len == 0) {
		rc__gss_err_msg(err, "rpc_gss_init_res without a context handle");
		return -1;
	}
	memcpy(c->handle, ir.handle, ir.handle_len);
	c->handle_len = ir.handle_len;
	int r = 0;
	if (!c->gss_done) {
		if (ir.token_len == 0) {
			rc__gss_err_msg(err, "rpc_gss_init_res without the server's token");
			return -1;
		}
		r = init_step(c, ir.token, ir.token_len, args, err);
		if (r < 0)
			return -1;
	} else if (ir.token_len != 0) {
		rc__gss_err_msg(err, "a token from the server after our side completed");
		return -1;
	}
	if (ir.major == GSS_S_CONTINUE_NEEDED) {
		if (r != 1) {
			rc__gss_err_msg(err, "the server continues but we have no token for it");
			return -1;
		}
		c->state = CLI_INIT_SENT;
		return 1;
	}
	/* the server completed */
	if (r == 1 || !c->gss_done) {
		rc__gss_buf_free(args);
		rc__gss_err_msg(err, "the server completed the context before we did");
		return -1;
	}
	if (ir.seq_window == 0) {
		rc__gss_err_msg(err, "rpc_gss_init_res with a zero sequence window");
		return -1;
	}
	if (verf_flavor != RC__GSS_FLAVOR) {
		rc__gss_err_msg(err, "the INIT reply's verifier is not RPCSEC_GSS");
		return -1;
	}
	unsigned char w[4];
	rc__st32(w, ir.seq_window);
	if (rc__gss_sec_verify(&c->sec, w, 4, verf, verf_len, err))
		return -1;
	c->window = ir.seq_window;
	c->state = CLI_ESTABLISHED;
	return 0;
}

size_t rc__gss_cli_cred_init(const rc__gss_cli *c, void *buf, size_t cap)
{
	rc__gss_cred cr = { RC__GSS_VERSION, c->handle_len ? RC__GSS_CONTINUE_INIT : RC__GSS_INIT,
			    0, rc__gss_cli_service(c), c->handle_len, c->handle };

	return rc__gss_cred_encode(&cr, buf, cap);
}

bool rc__gss_cli_established(const rc__gss_cli *c)
{
	return c->state == CLI_ESTABLISHED;
}

uint32_t rc__gss_cli_window(const rc__gss_cli *c)
{
	return c->window;
}

uint32_t rc__gss_cli_service(const rc__gss_cli *c)
{
	return atomic_load_explicit(&((rc__gss_cli *)c)->service, memory_order_relaxed);
}

int rc__gss_cli_set_service(rc__gss_cli *c, uint32_t service)
{
	if (service < RC__GSS_SVC_NONE || service > RC__GSS_SVC_PRIVACY)
		return -1;
	if (service == RC__GSS_SVC_PRIVACY && c->state == CLI_ESTABLISHED &&
	    !(c->ret_flags & GSS_C_CONF_FLAG))
		return -1;
	atomic_store_explicit(&c->service, service, memory_order_relaxed);
	return 0;
}

int rc__gss_cli_max_data(rc__gss_cli *c, int max_tp)
{
	if (c->state != CLI_ESTABLISHED)
		return 0;
	return rc__gss_sec_max_data(&c->sec, rc__gss_cli_service(c), max_tp);
}

int rc__gss_cli_inquire(rc__gss_cli *c, uint32_t *flags, uint32_t *lifetime_s,
			gss_ctx_id_t *ctx)
{
	OM_uint32 maj, min, life = 0, fl = 0;

	if (c->state != CLI_ESTABLISHED)
		return -1;
	pthread_mutex_lock(&c->sec.lock);
	maj = gss_inquire_context(&min, c->sec.ctx, NULL, NULL, &life, NULL, &fl, NULL, NULL);
	pthread_mutex_unlock(&c->sec.lock);
	if (GSS_ERROR(maj))
		return -1;
	*flags = fl;
	*lifetime_s = life;
	*ctx = c->sec.ctx;
	return 0;
}

int rc__gss_cli_next_seq(rc__gss_cli *c, uint32_t *seq)
{
	uint_fast32_t s = atomic_fetch_add(&c->seq, 1);

	if (s >= RC__GSS_MAXSEQ) {
		atomic_store(&c->seq, RC__GSS_MAXSEQ); /* stays used up, never wraps */
		return -1;
	}
	*seq = (uint32_t)s;
	return 0;
}

size_t rc__gss_cli_cred(const rc__gss_cli *c, uint32_t proc, uint32_t seq, void *buf, size_t cap)
{
	if (c->state != CLI_ESTABLISHED)
		return 0;
	rc__gss_cred cr = { RC__GSS_VERSION, proc, seq, rc__gss_cli_service(c), c->handle_len, c->handle };
	return rc__gss_cred_encode(&cr, buf, cap);
}

int rc__gss_cli_header_verf(rc__gss_cli *c, const void *hdr, size_t len, rc__gss_buf *verf,
			    rc__gss_err *err)
{
	return rc__gss_sec_mic(&c->sec, hdr, len, verf, err);
}

int rc__gss_cli_validate(rc__gss_cli *c, const rc__gss_seqs *sent, uint32_t verf_flavor,
			 const void *verf, size_t verf_len, rc__gss_err *err)
{
	if (verf_flavor != RC__GSS_FLAVOR) {
		rc__gss_err_msg(err, "the reply's verifier is not RPCSEC_GSS");
		return -1;
	}
	if (sent->n == 0) {
		rc__gss_err_msg(err, "no sequence number to check the reply verifier against");
		return -1;
	}
	/* newest first: the usual match */
	for (unsigned i = 0; i < sent->n; i++) {
		unsigned k = (sent->next + RC__GSS_SEQS_KEPT - 1 - i) % RC__GSS_SEQS_KEPT;
		unsigned char w[4];
		rc__st32(w, sent->seq[k]);
		if (rc__gss_sec_verify(&c->sec, w, 4, verf, verf_len, err) == 0)
			return 0;
	}
	/* a call sent under the context before the last renewal: its keys */
	int r = -1;
	pthread_mutex_lock(&c->sec.lock);
	for (unsigned g = 0; g < RC__GSS_PREV && c->prev[g] != NULL && r != 0; g++)
		for (unsigned i = 0; r != 0 && i < sent->n; i++) {
			unsigned k = (sent->next + RC__GSS_SEQS_KEPT - 1 - i) % RC__GSS_SEQS_KEPT;
			unsigned char w[4];
			rc__st32(w, sent->seq[k]);
			r = rc__gss_sec_verify(c->prev[g], w, 4, verf, verf_len, err);
		}
	pthread_mutex_unlock(&c->sec.lock);
	return r;
}

int rc__gss_cli_wrap(rc__gss_cli *c, uint32_t seq, const void *args, size_t len, rc__gss_buf *out,
		     rc__gss_err *err)
{
	return rc__gss_sec_wrap(&c->sec, seq, rc__gss_cli_service(c), args, len, out, err);
}

int rc__gss_cli_unwrap(rc__gss_cli *c, const rc__gss_seqs *sent, const void *res, size_t len,
		       rc__gss_buf *out, rc__gss_err *err)
{
	int r = rc__gss_sec_unwrap(&c->sec, sent->seq, sent->n, rc__gss_cli_service(c), res, len, out,
	                           NULL, err);
	if (r == 0)
		return 0;
	/* a call sent under the context before the last renewal: its keys */
	pthread_mutex_lock(&c->sec.lock);
	for (unsigned g = 0; g < RC__GSS_PREV && c->prev[g] != NULL && r != 0; g++)
		r = rc__gss_sec_unwrap(c->prev[g], sent->seq, sent->n, rc__gss_cli_service(c), res, len,
		                       out, NULL, err);
	pthread_mutex_unlock(&c->sec.lock);
	return r;
}

int rc__gss_cli_lucid(rc__gss_cli *c)
{
	pthread_mutex_lock(&c->sec.lock);
	int et = c->sec.fast ? rc__krb5_enctype(c->sec.fast) : 0;
	pthread_mutex_unlock(&c->sec.lock);
	return et;
}

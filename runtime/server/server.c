/*
 * The server's life cycle, listeners and loops: the top of its layers (base.h lists
 * them): conn.c (stream connections) and dgram.c (datagram listeners) below it, serve.c (one
 * request) below them, then dispatch.c (the table), defer.c (requests kept), reply.c (the
 * encoders and the one way out). The layer above (rpcbind.c) reads the server through
 * rc__server_view and hears of changes through its hook (server_internal.h).
 *
 * Loops: a server whose only listener is one UDP socket serves it with blocking receives (one
 * syscall in, one out, per call; every worker thread blocks on the same socket). Otherwise an
 * epoll loop serves listeners and connections; with worker threads, every thread waits on the
 * same epoll set for one event at a time and each descriptor is armed one-shot, so one
 * connection is read by one thread at a time -- but its calls run in parallel, as jobs
 * (rc__conn_serve_mt).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "runtime/core/rpc.h"
#include "runtime/server/server_internal.h"
#include "runtime/server/listener.h"
#include "transports/quic.h"
#include "transports/tls.h"

/* server_internal.h: a copy of the socket listeners and registrations, under srv->mu. */
rc_status rc__server_view(rc_server *srv, rc__srv_view *v)
{
	size_t nprogs = 0;

	memset(v, 0, sizeof(*v));
	pthread_mutex_lock(&srv->mu);
	for (int b = 0; b < RC__NBUCKETS; b++)
		for (rc__reg *r = srv->buckets[b]; r; r = r->next)
			nprogs++;
	v->lsn = calloc(srv->nlsn ? srv->nlsn : 1, sizeof(*v->lsn));
	v->progs = calloc(nprogs ? nprogs : 1, sizeof(*v->progs));
	if (v->lsn == NULL || v->progs == NULL) {
		pthread_mutex_unlock(&srv->mu);
		rc__server_view_free(v);
		return RC_NOMEM;
	}
	for (size_t i = 0; i < srv->nlsn; i++) {
		if (srv->lsn[i]->tp->props & RC_TPP_SYNC)
			continue;
		v->lsn[v->nlsn].fd = rc__tp_pollfd(srv->lsn[i]->tp);
		v->lsn[v->nlsn].dgram = srv->lsn[i]->dgram;
		if (strncmp(srv->lsn[i]->uri, "quic://", 7) == 0 &&
		    strlen(srv->lsn[i]->uri) < sizeof(v->lsn[v->nlsn].quic)) /* (ADDR:PORT: short) */
			memcpy(v->lsn[v->nlsn].quic, srv->lsn[i]->uri, strlen(srv->lsn[i]->uri) + 1);
		v->nlsn++;
	}
	for (int b = 0; b < RC__NBUCKETS; b++) {
		for (rc__reg *r = srv->buckets[b]; r; r = r->next) {
			v->progs[v->nprogs].prog = r->prog;
			v->progs[v->nprogs].vers = r->vers;
			v->nprogs++;
		}
	}
	pthread_mutex_unlock(&srv->mu);
	return RC_OK;
}

/* server_internal.h: free what rc__server_view allocated. */
void rc__server_view_free(rc__srv_view *v)
{
	free(v->lsn);
	free(v->progs);
	memset(v, 0, sizeof(*v));
}

/* server_internal.h: install (or with NULL remove) the one hook of the layer above. */
void rc__server_set_hook(rc_server *srv, rc__srv_hook fn, void *ctx)
{
	pthread_mutex_lock(&srv->mu);
	srv->hook = fn;
	srv->hook_ctx = ctx;
	pthread_mutex_unlock(&srv->mu);
}

/* server_internal.h: the ctx installed with fn, or NULL if fn is not the hook. */
void *rc__server_hook_ctx(rc_server *srv, rc__srv_hook fn)
{
	void *ctx;

	pthread_mutex_lock(&srv->mu);
	ctx = srv->hook == fn ? srv->hook_ctx : NULL;
	pthread_mutex_unlock(&srv->mu);
	return ctx;
}


/* server.h: default limits, the epoll set with the stop eventfd, the duplicate cache. */
rc_status rc_server_create(rc_server **out)
{
	rc_server *srv;
	struct epoll_event ev;

	if (out == NULL)
		return RC_INVAL;
	*out = NULL;
	if ((srv = rc__zalloc_lines(sizeof(*srv))) == NULL)
		return RC_NOMEM;
	srv->lim.max_record = RC_DEFAULT_MAX_MESSAGE;
	srv->dgram_max = RC__UDP_MAX;
	srv->lim.max_alloc = 16u << 20;
	srv->lim.max_conns = 16384;
	srv->lim.idle_ms = 120000;
	srv->lim.stall_ms = 10000;
	srv->lim.drc_entries = 1u << 22;
	srv->lim.drc_ttl_ms = 120000;
	srv->lim.drc_bytes = (size_t)64 << 20;
	srv->lim.max_deferred_conn = 64;
	srv->lim.max_deferred = 65536;
	srv->lim.gss_contexts = 1024;
	srv->lim.gss_contexts_per_principal = 256;
	srv->lim.gss_incomplete = 64;
	srv->lim.gss_idle_ms = 15 * 60 * 1000;
	srv->lim.max_parked_conn = (size_t)4 << 20;
	srv->lim.max_inbound_bytes = (size_t)256 << 20;
	srv->epfd = epoll_create1(EPOLL_CLOEXEC);
	srv->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	srv->jobfd = -1; /* made by rc_server_set_threads */
	srv->reserve_fd = -1; /* opened with the first stream listener */
	if (srv->epfd < 0 || srv->stopfd < 0) {
		if (srv->epfd >= 0)
			close(srv->epfd);
		if (srv->stopfd >= 0)
			close(srv->stopfd);
		free(srv);
		return RC_LOCALERROR;
	}
	srv->stop_ev = RC__EV_STOP;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = &srv->stop_ev;
	epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->stopfd, &ev);
	srv->job_ev = RC__EV_JOB;
	pthread_mutex_init(&srv->mu, NULL);
	pthread_mutex_init(&srv->poolmu, NULL);
	pthread_cond_init(&srv->answered, NULL);
	srv->defer_room = rc__defer_room; /* (the request layer re-arms held connections through it) */
	srv->room_freed = rc__room_freed; /* (and a closed connection resumes listeners) */
	srv->inbound_room = rc__inbound_room; /* (and those waiting for the inbound budget) */
	srv->ctl_serve = rc__ctl_serve; /* (and the serve step answers a drain's notice call) */
	srv->aux_tick = rc__aux_tick;       /* (and admission's timer runs proxy.c's and drain.c's) */
	srv->proxy_begin = rc__proxy_begin; /* (and hands a ?proxy=v2 listener's connections up) */
	srv->drc = rc__drc_create(srv->lim.drc_entries, srv->lim.drc_bytes, srv->lim.drc_ttl_ms);
	*out = srv;
	return RC_OK;
}

/* server.h: the duplicate request cache's and the connections' counters. */
rc_status rc_server_get_stats(rc_server *srv, rc_server_stats *out)
{
	rc__drc_stats d = {0};

	if (srv == NULL || out == NULL)
		return RC_INVAL;
	if (srv->drc != NULL)
		rc__drc_get_stats(srv->drc, &d);
	memset(out, 0, sizeof(*out));
	out->drc_entries = d.entries;
	out->drc_bytes = d.bytes;
	out->drc_replayed = d.replayed;
	out->drc_in_progress = d.in_progress;
	out->drc_unanswered = d.unanswered;
	out->drc_shed = d.shed;
	out->drc_refused = d.refused;
	pthread_mutex_lock(&srv->mu);
	out->conns = srv->nconns;
	out->conns_accepted = srv->n_accepted;
	out->conns_evicted = srv->n_evicted;
	out->conns_refused = srv->n_refused;
	out->accept_nofile = srv->n_nofile;
	out->conns_proxied = srv->n_proxied;
	out->conns_proxy_refused = srv->n_proxy_refused;
	out->draining = srv->draining;
	for (size_t i = 0; i < srv->nlsn; i++) {
		rc__quic_stats q; /* (all zero for a listener that is not quic://) */
		rc__quic_lsn_stats(srv->lsn[i]->tp, &q);
		out->quic_conns += q.conns;
		out->quic_open_conns += q.open_conns;
		out->quic_handshake_fails += q.handshake_fails;
		out->quic_streams += q.streams;
		out->quic_bad_records += q.bad_records;
		out->quic_stream_limit += q.stream_limit;
		out->quic_wrong_direction += q.wrong_direction;
		out->quic_idle_closed += q.idle_closed;
		out->quic_refused += q.refused;
		out->quic_queued += q.queued;
	}
	pthread_mutex_unlock(&srv->mu);
	out->replies_too_big = __atomic_load_n(&srv->n_toobig, __ATOMIC_RELAXED);
	out->gss_dropped = __atomic_load_n(&srv->n_gss_dropped, __ATOMIC_RELAXED);
	rc__gss_get_stats(srv, &out->gss_contexts, &out->gss_evicted);
	out->inbound_bytes = atomic_load_explicit(&srv->inbound, memory_order_relaxed);
	out->inbound_waits = __atomic_load_n(&srv->n_inbound_waits, __ATOMIC_RELAXED);
	out->requests_parked = __atomic_load_n(&srv->n_parked, __ATOMIC_RELAXED);
	out->backcalls_starved = __atomic_load_n(&srv->n_starved, __ATOMIC_RELAXED);
	return RC_OK;
}

/* ---- the duplicate request cache's switches (stream calls: accept.c keys them) --------- */

/* Whether any program's stream calls are cached (under srv->mu; kept in drc_streams_any). */
static bool rc__drc_streams_any(rc_server *srv)
{
	if (srv->drc_streams_all)
		return true;
	for (int b = 0; b < RC__NBUCKETS; b++)
		for (rc__reg *r = srv->buckets[b]; r != NULL; r = r->next)
			if (r->drc_streams)
				return true;
	return false;
}

/* server.h */
rc_status rc_server_set_drc(rc_server *srv, bool on)
{
	rc_status st = RC_OK;

	if (srv == NULL || atomic_load(&srv->running))
		return RC_INVAL;
	pthread_mutex_lock(&srv->mu);
	if (!on) {
		rc__drc_destroy(srv->drc);
		srv->drc = NULL;
	} else if (srv->drc == NULL &&
	           (srv->drc = rc__drc_create(srv->lim.drc_entries, srv->lim.drc_bytes,
	                                      srv->lim.drc_ttl_ms)) == NULL) {
		st = RC_NOMEM;
	}
	pthread_mutex_unlock(&srv->mu);
	return st;
}

/* server.h */
rc_status rc_server_set_drc_streams(rc_server *srv, uint32_t prog, uint32_t vers, bool on)
{
	rc_status st = RC_OK;

	if (srv == NULL || atomic_load(&srv->running))
		return RC_INVAL;
	pthread_mutex_lock(&srv->mu);
	if (prog == RC_DRC_EVERY_PROGRAM) {
		srv->drc_streams_all = on;
		for (int b = 0; b < RC__NBUCKETS; b++)
			for (rc__reg *r = srv->buckets[b]; r != NULL; r = r->next)
				r->drc_streams = on;
	} else {
		rc__reg *r = rc__find(srv, prog, vers);
		if (r == NULL)
			st = RC_PROGUNAVAIL;
		else
			r->drc_streams = on;
	}
	srv->drc_streams_any = rc__drc_streams_any(srv);
	pthread_mutex_unlock(&srv->mu);
	return st;
}

/* server.h. */
rc_status rc_server_set_trace(rc_server *srv, rc_trace_fn fn, void *arg)
{
	if (srv == NULL || atomic_load(&srv->running))
		return RC_INVAL;
	srv->trace = fn != NULL || srv->obs == NULL ? fn : rc__obs_nop; /* (stats.c counts) */
	srv->trace_arg = arg;
	return RC_OK;
}

/* server.h: more than one thread needs the job eventfd (made here, once). */
rc_status rc_server_set_threads(rc_server *srv, unsigned n)
{
	struct epoll_event ev;

	if (srv == NULL || n > 1024 || atomic_load(&srv->running))
		return RC_INVAL;
	if (n > 1 && srv->jobfd < 0) {
		/* the job queue's eventfd: level-triggered and non-zero while jobs wait, so waiting
		 * workers keep waking while there is work */
		if ((srv->jobfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
			return RC_LOCALERROR;
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		ev.data.ptr = &srv->job_ev;
		if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->jobfd, &ev) != 0) {
			close(srv->jobfd);
			srv->jobfd = -1;
			return RC_LOCALERROR;
		}
	}
	srv->threads = n;
	return RC_OK;
}

/* server.h: the spin window, in ns for the loops. */
rc_status rc_server_set_spin(rc_server *srv, uint32_t spin_us)
{
	if (srv == NULL || spin_us > 1000000 || atomic_load(&srv->running))
		return RC_INVAL;
	srv->spin_ns = (int64_t)spin_us * 1000;
	return RC_OK;
}

/* server.h. */
rc_status rc_server_set_auth(rc_server *srv, rc_svc_authfn fn, void *ctx)
{
	if (srv == NULL || atomic_load(&srv->running))
		return RC_INVAL;
	srv->auth = fn;
	srv->auth_ctx = ctx;
	return RC_OK;
}

/* server.h: the transport's listen, then (socket transports) non-blocking and into epoll. */
/* Make a transport just opened a listener of srv: armed on the epoll set (non-blocking) and
 * recorded; its bound URI written to bound. On failure the transport is closed, and its
 * socket too unless keep_fd (the application's, rc_server_listen_fd). */
static rc_status rc__lsn_add(rc_server *srv, rc_tp *tp, const char *uri, char *bound,
                             size_t len, bool keep_fd)
{
	rc__lsn *l;

	if ((l = calloc(1, sizeof(*l))) == NULL) {
		if (keep_fd)
			rc__tp_close_keep_fd(tp);
		else
			tp->vt->close(tp);
		return RC_NOMEM;
	}
	l->kind = RC__EV_LISTENER;
	l->tp = tp;
	snprintf(l->uri, sizeof(l->uri), "%s", uri);
	l->dgram = (l->tp->props & RC_TPP_DGRAM) != 0;
	if (!(l->tp->props & RC_TPP_SYNC) &&
	    (rc__tp_set_nonblock(l->tp, !l->dgram) != RC_OK ||
	     !rc__arm(srv, EPOLL_CTL_ADD, l->tp, l, EPOLLIN))) {
		int e = errno;
		if (keep_fd)
			rc__tp_close_keep_fd(l->tp);
		else
			l->tp->vt->close(l->tp);
		free(l);
		errno = e;
		return RC_LOCALERROR;
	}
	pthread_mutex_lock(&srv->mu);
	if (!l->dgram && !(l->tp->props & RC_TPP_SYNC)) {
		srv->use_reserve = true; /* the spare descriptor of conn.c's admission */
		rc__reserve_take(srv);
	}
	srv->lsn[srv->nlsn++] = l;
	pthread_mutex_unlock(&srv->mu);
	if (bound && len)
		snprintf(bound, len, "%s", l->uri);
	rc__server_notify(srv, RC__SRV_CHANGED);
	return RC_OK;
}

/* Keep st, the status of a set-up call about uri, in srv's error (rc_server_geterr): errno
 * for a local error, the transport's words or what was wrong with the address. Returns st. */
static rc_status rc__setup_status(rc_server *srv, rc_status st, const char *uri)
{
	rc_error *e = &srv->err;
	int en = errno;

	memset(e, 0, sizeof(*e));
	e->status = st;
	if (st == RC_OK)
		return st;
	if (st == RC_LOCALERROR)
		e->sys_errno = en;
	if (rc__tp_detail()[0] != '\0')
		snprintf(e->detail, sizeof(e->detail), "%s", rc__tp_detail());
	else if (st == RC_UNKNOWNADDR || st == RC_UNKNOWNHOST)
		snprintf(e->detail, sizeof(e->detail), "local address %s", uri ? uri : "?");
	else if (st == RC_TOOMANY)
		snprintf(e->detail, sizeof(e->detail), "at most %d listeners", RC__MAX_LISTENERS);
	else if (st == RC_UNKNOWNPROTO)
		snprintf(e->detail, sizeof(e->detail), "%s", uri ? uri : "not a socket of a kind served");
	return st;
}

/* server.h: how the last listen on srv ended. */
void rc_server_geterr(const rc_server *srv, rc_error *err)
{
	if (err == NULL)
		return;
	if (srv == NULL) {
		memset(err, 0, sizeof(*err));
		err->status = RC_INVAL;
		return;
	}
	*err = srv->err;
}

/* rc_server_listen's work: parse, listen, add the listener. */
static rc_status rc__listen(rc_server *srv, const char *uri, char *bound, size_t len)
{
	rc_uri u;
	rc_status st;
	rc_tp *tp;
	char at[RC_URI_MAX];
	const rc_tp_kind *k;
	const rc_tp_deliver deliver = {rc__deliver, srv, rc__deliver_to};
	rc__lsn_opts o;

	memset(&o, 0, sizeof(o));

	if ((st = rc__uri_parse(uri, &u)) != RC_OK)
		return st;
	/* a key the listen side does not take is refused, never ignored (a client's ?tls=required
	 * would otherwise look like a TLS policy the server does not run) */
	if (u.query[0] != '\0' &&
	    (st = rc__uri_query(u.query, RC__URIQ_LISTEN, rc__lsn_uri_key, &o, at, sizeof(at))) !=
	            RC_OK)
		return st;
	if (srv->nlsn >= RC__MAX_LISTENERS)
		return RC_TOOMANY;
	k = rc__tp_find(u.scheme);
	if ((o.proxy || o.from.n > 0) && (!o.proxy || !(k->props & RC_TPP_STREAM))) {
		rc__tp_set_detail("URI query: %s", o.proxy ? "proxy=v2 takes a tcp or unix listener"
		                                           : "proxy_from needs proxy=v2");
		return RC_UNKNOWNADDR;
	}
	u.tls = srv->tls; /* (quic:// takes its certificates from it; the others ignore it) */
	if ((st = k->listen(&u, srv->lim.max_record, &deliver, &tp, at, sizeof(at))) != RC_OK)
		return st;
	if ((st = rc__lsn_add(srv, tp, at, bound, len, false)) == RC_OK && o.proxy) {
		srv->lsn[srv->nlsn - 1]->proxy = true; /* (not running: nothing reads it yet) */
		srv->lsn[srv->nlsn - 1]->proxy_from = o.from;
	}
	return st;
}

rc_status rc_server_listen(rc_server *srv, const char *uri, char *bound, size_t len)
{
	if (bound && len)
		bound[0] = '\0';
	if (srv == NULL || uri == NULL || atomic_load(&srv->running))
		return RC_INVAL;
	rc__tp_clear_detail();
	return rc__setup_status(srv, rc__listen(srv, uri, bound, len), uri);
}

/* rc_server_listen_fd's work. */
static rc_status rc__listen_fd(rc_server *srv, int fd, char *bound, size_t len)
{
	rc_status st;
	rc_tp *tp;
	bool listener;
	char at[RC_URI_MAX];

	if (srv->nlsn >= RC__MAX_LISTENERS)
		return RC_TOOMANY;
	if ((st = rc__tp_adopt(fd, srv->lim.max_record, &tp, &listener, at, sizeof(at))) != RC_OK)
		return st;
	if (!listener) {
		if (rc__tp_set_nonblock(tp, true) != RC_OK) {
			rc__tp_close_keep_fd(tp); /* the caller's again */
			return RC_LOCALERROR;
		}
		if (bound && len)
			snprintf(bound, len, "%s", at);
		return rc__conn_admit(srv, tp);
	}
	return rc__lsn_add(srv, tp, at, bound, len, true);
}

/* server.h: serve a socket of the caller's -- a listener, or one connection. */
rc_status rc_server_listen_fd(rc_server *srv, int fd, char *bound, size_t len)
{
	if (bound && len)
		bound[0] = '\0';
	if (srv == NULL || fd < 0 || atomic_load(&srv->running))
		return RC_INVAL;
	rc__tp_clear_detail();
	return rc__setup_status(srv, rc__listen_fd(srv, fd, bound, len), NULL);
}

/* server.h: close the listener bound at uri. */
rc_status rc_server_unlisten(rc_server *srv, const char *uri)
{
	rc__lsn *l = NULL;

	if (srv == NULL || uri == NULL || atomic_load(&srv->running))
		return RC_INVAL;
	pthread_mutex_lock(&srv->mu);
	for (size_t i = 0; i < srv->nlsn; i++) {
		if (strcmp(srv->lsn[i]->uri, uri) != 0)
			continue;
		l = srv->lsn[i];
		memmove(&srv->lsn[i], &srv->lsn[i + 1], (srv->nlsn - i - 1) * sizeof(srv->lsn[0]));
		srv->nlsn--;
		break;
	}
	pthread_mutex_unlock(&srv->mu);
	if (l == NULL)
		return RC_INVAL;
	if (l->dgram)
		rc__defer_orphan(srv, l); /* its deferred calls cannot be answered on it any more */
	if (!(l->tp->props & RC_TPP_SYNC) && !l->paused)
		rc__disarm(srv, l->tp);
	l->tp->vt->close(l->tp);
	free(l);
	rc__server_notify(srv, RC__SRV_CHANGED);
	return RC_OK;
}

/* server.h: make the TLS context from opts (files read now) and keep it in place of any
 * earlier one. */
rc_status rc_server_set_tls(rc_server *srv, const rc_tls_server_opts *opts, char *why,
                            size_t whylen)
{
	rc__tls_ctx *ctx;
	rc_status st;

	if (srv == NULL || opts == NULL)
		return RC_INVAL;
	rc__tp_clear_detail();
	if ((st = rc__tls_server_ctx(opts, &ctx)) != RC_OK) {
		if (why != NULL && whylen > 0)
			snprintf(why, whylen, "%s", rc__tp_detail());
		return st;
	}
	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (!rc__tls_replace(srv, ctx)) { /* (live.c: connections under the old one keep it) */
		rc__tls_ctx_free(ctx);
		return RC_NOMEM;
	}
	return RC_OK;
}

/* server.h: tell the layer above, drop queued jobs, close connections and listeners, free the
 * table and the cache. */
void rc_server_destroy(rc_server *srv)
{
	const rc__back_hooks *back;

	if (srv == NULL)
		return;
	rc__server_notify(srv, RC__SRV_DESTROY); /* the hook's last call: it lets go of srv */
	/* the listeners first, without srv->mu: an in-process one's close waits for calls being
	 * delivered through it, which may take srv->mu (to defer) */
	for (size_t i = 0; i < srv->nlsn; i++) {
		srv->lsn[i]->tp->vt->close(srv->lsn[i]->tp);
		free(srv->lsn[i]);
	}
	srv->nlsn = 0;
	rc__defer_orphan(srv, NULL); /* (the application's own loop may have deferred some) */
	pthread_mutex_lock(&srv->mu);
	/* back channels' callers reading connections themselves (conn.c): hung up, they end
	 * their turns; none takes one from now on */
	srv->destroying = true;
	back = atomic_load_explicit(&srv->back, memory_order_acquire); /* NULL: no back channel */
	for (rc__conn *c = srv->conns; back != NULL && c != NULL; c = c->next)
		back->hangup(c);
	while (srv->backreaders > 0)
		pthread_cond_wait(&srv->answered, &srv->mu);
	while (srv->jobq) { /* queued when the server stopped: never run */
		rc__job *j = srv->jobq;
		srv->jobq = j->next;
		free(j);
	}
	srv->use_reserve = false; /* closing connections does not take it back */
	rc__proxy_destroy(srv);   /* those still in their PROXY header */
	while (srv->conns)
		rc__conn_close(srv, srv->conns);
	pthread_mutex_unlock(&srv->mu);
	rc__connlife_drain(srv); /* their CLOSEs, without the lock */
	pthread_mutex_lock(&srv->mu);
	while (srv->conn_pool) { /* (no loop runs now: no event of theirs is about) */
		rc__conn *c = srv->conn_pool;
		srv->conn_pool = c->next;
		free(c);
	}
	if (srv->reserve_fd >= 0)
		close(srv->reserve_fd);
	for (int b = 0; b < RC__NBUCKETS; b++) {
		while (srv->buckets[b]) {
			rc__reg *r = srv->buckets[b];
			srv->buckets[b] = r->next;
			rc__reg_free(r);
		}
	}
	while (srv->reg_retired != NULL) { /* unregistered while it ran (dispatch.c) */
		rc__reg *r = srv->reg_retired;
		srv->reg_retired = r->retired;
		rc__reg_free(r);
	}
	pthread_mutex_unlock(&srv->mu);
	rc__drc_destroy(srv->drc);
	rc__tls_old_free(srv); /* after the connections made from them */
	rc__obs_free(srv);
	rc__gss_free(srv);          /* after the requests deferred under its contexts */
	free(srv->step_rbuf);
	free(srv->step_batch);
	close(srv->epfd);
	close(srv->stopfd);
	if (srv->jobfd >= 0)
		close(srv->jobfd);
	rc__req_pool_free(srv);
	pthread_mutex_destroy(&srv->poolmu);
	pthread_mutex_destroy(&srv->mu);
	pthread_cond_destroy(&srv->answered);
	free(srv);
}

/* server.h: the epoll descriptor. */
int rc_server_fd(rc_server *srv)
{
	return srv ? srv->epfd : -1;
}

/*
 * Resume paused listeners that are due; every 250 ms, close idle and stalled connections --
 * walking the table only when one of them can be due: the walk notes the earliest time one
 * can (a connection's idle_ms after its last activity, stall_ms after its partial record or
 * its end of reading began), and a connection whose clock starts after the walk is due no
 * sooner than min(idle_ms, stall_ms) from it. Activity only moves a deadline later, so idle
 * connections cost a walk per idle_ms, not four a second. (A connection whose reading ends
 * after the walk, with its last activity before it, may get up to twice stall_ms for its last
 * replies.) A TLS handshake under way is never idle: it has stall_ms from its start (as nginx's
 * ssl_handshake_timeout), and its connection's idle clock starts when it ends.
 */
static void rc__sweep(rc_server *srv, int64_t now)
{
	int64_t idle = (int64_t)RC__LIM(srv, idle_ms) * 1000000;
	int64_t stall = (int64_t)RC__LIM(srv, stall_ms) * 1000000;
	int64_t due;

	pthread_mutex_lock(&srv->mu);
	if (atomic_load_explicit(&srv->wake_at, memory_order_relaxed) != 0)
		rc__lsn_wake(srv, now);
	if (now < srv->next_sweep || now < srv->next_walk) {
		pthread_mutex_unlock(&srv->mu);
		rc__connlife_drain(srv); /* (connections a drain's step closed: connlife.c) */
		return;
	}
	srv->next_sweep = now + 250000000LL;
	due = now + (idle < stall ? idle : stall);
	for (rc__conn *c = srv->conns; c; c = c->next) {
		int64_t at;
		if (c->end != RC__CONN_LIVE)
			continue;
		if (c->handshake_until != 0) {
			/* a TLS handshake: stall_ms from its start, never idle_ms; once it has
			 * ended, the idle clock runs from its end */
			int64_t end = atomic_load_explicit(&c->handshake_end, memory_order_relaxed);
			if (end == 0) {
				if (now > c->handshake_until)
					rc__conn_doom(srv, c);
				else if (c->handshake_until < due)
					due = c->handshake_until;
				if (now + idle < due) /* to see its end in time for idle_ms after it */
					due = now + idle;
				continue;
			}
			c->handshake_until = 0;
			if (end > c->last_active)
				c->last_active = end;
		}
		if (c->state == RC__CONN_DEAD) {
			/* reading is over; its last replies got stall_ms to go out */
			at = c->last_active + stall;
		} else {
			/* a connection the application keeps (its handle) is never idle */
			at = rc__conn_kept(c) ? INT64_MAX : c->last_active + idle;
			if (c->partial_since && c->partial_since + stall < at)
				at = c->partial_since + stall;
		}
		if (now > at)
			rc__conn_doom(srv, c);
		else if (at < due)
			due = at;
	}
	srv->next_walk = due;
	pthread_mutex_unlock(&srv->mu);
	rc__connlife_drain(srv);
}

/*
 * A serving thread found nothing to do for a whole wait (250 ms) after doing some work: the
 * load has gone, for now. Give the heap's free pages back to the system (glibc keeps what was
 * freed -- connections' buffers, big requests and replies -- resident otherwise; the buffers
 * still in use stay), at most once a second for the whole server. False when another thread
 * did so less than a second ago (what this one has just let go is not given back yet: the
 * caller asks again after its next empty wait).
 */
static bool rc__quiet(rc_server *srv, int64_t now)
{
#ifdef __GLIBC__
	int64_t last = atomic_load_explicit(&srv->trimmed_at, memory_order_relaxed);

	if (now - last < 1000000000LL ||
	    !atomic_compare_exchange_strong(&srv->trimmed_at, &last, now))
		return false;
	(void)malloc_trim(0);
#else
	(void)srv, (void)now;
#endif
	return true;
}

/* One turn of the epoll loop: wait up to timeout_ms, hand each event to its handler
 * (listener, connection, job queue, output descriptor, stop), then sweep. RC_LOCALERROR if
 * epoll_wait fails. */
static rc_status rc__step(rc_server *srv, rc__wctx *w, int timeout_ms)
{
	struct epoll_event evs[64];
	int n;

	/* with worker threads, one event at a time: an event taken with others would wait behind
	 * whatever long call the first one runs, while other workers sit idle */
	n = 0;
	if (srv->spin_ns > 0 && timeout_ms != 0) { /* rc_server_set_spin: poll before sleeping */
		int64_t until = rc__now() + srv->spin_ns;
		do
			n = epoll_wait(srv->epfd, evs, srv->threads > 1 ? 1 : 64, 0);
		while (n == 0 && !atomic_load(&srv->stop) && rc__now() < until);
	}
	if (n == 0)
		n = epoll_wait(srv->epfd, evs, srv->threads > 1 ? 1 : 64,
		               rc__wake_timeout(srv, timeout_ms));
	if (n < 0) {
		if (errno == EINTR)
			return RC_OK;
		return RC_LOCALERROR;
	}
	if (n > 0) {
		w->worked = true;
	} else if (n == 0 && w->worked && timeout_ms != 0) {
		/* a whole wait with nothing to do, after work: quiet */
		rc__reply_release(w); /* a big reply's buffer kept for the next: not while quiet */
		rc__tp_quiet();       /* nor a big request's */
		w->worked = !rc__quiet(srv, rc__now()); /* not trimmed yet: again after the next */
	}
	for (int i = 0; i < n && !atomic_load(&srv->stop); i++) {
		int kind = *(int *)evs[i].data.ptr;
		if (kind == RC__EV_STOP) {
			/* rc_server_drain's request comes this way too (drain.c) */
			if (!atomic_load(&srv->drain_asked) || !rc__drain_begin(srv))
				atomic_store(&srv->stop, 1);
		} else if (kind == RC__EV_LISTENER) {
			rc__lsn *l = evs[i].data.ptr;
			if (l->dgram) {
				rc__dgram_event(srv, w, l);
			} else {
				rc__accept(srv, l);
			}
		} else if (kind == RC__EV_CONN) {
			rc__conn_event(srv, w, evs[i].data.ptr, evs[i].events);
		} else if (kind == RC__EV_JOB) {
			rc__job_next(srv, w);
		} else if (kind == RC__EV_OUT) {
			rc__conn_out(srv, ((rc__outev *)evs[i].data.ptr)->c);
		} else if (kind == RC__EV_PROXY) {
			rc__proxy_event(srv, evs[i].data.ptr); /* a PROXY header comes (proxy.c) */
		}
	}
	rc__sweep(srv, rc__now());
	return RC_OK;
}

/* server.h: one rc__step with a reply buffer on this stack (the datagram buffer is kept). */
rc_status rc_server_step(rc_server *srv, int timeout_ms)
{
	rc__wctx w;
	rc_status st;

	if (srv == NULL || atomic_load(&srv->running))
		return RC_INVAL;
	rc__wctx_init(&w, srv);
	w.rbuf = srv->step_rbuf; /* kept between steps */
	w.batch = srv->step_batch;
	srv->loop_thread = pthread_self(); /* serving alone, on this thread (backchan.c) */
	atomic_store(&srv->loop_alone, true);
	st = rc__step(srv, &w, timeout_ms);
	rc__connlife_drain(srv); /* (connections an answer's orphaning closed) */
	atomic_store(&srv->loop_alone, false);
	srv->step_rbuf = w.rbuf;
	srv->step_batch = w.batch;
	w.rbuf = NULL;
	w.batch = NULL;
	rc__wctx_fini(&w);
	return st;
}

/* ---- the loops ---------------------------------------------------------------------------- */

/* The fast path: the only listener is one datagram socket; block in recv. */
static bool rc__single_dgram(rc_server *srv)
{
	return srv->nlsn == 1 && srv->lsn[0]->dgram;
}

/* A serving thread: blocking receives on a lone datagram listener, else the epoll loop, until
 * the server stops. */
static void *rc__worker(void *arg)
{
	rc_server *srv = arg;
	rc__wctx w;

	rc__wctx_init(&w, srv);
	if (rc__single_dgram(srv)) {
		rc__lsn *l = srv->lsn[0];
		while (!atomic_load(&srv->stop))
			rc__dgram_serve(srv, &w, l, 1 << 30, 0, false);
	} else {
		while (!atomic_load(&srv->stop))
			if (rc__step(srv, &w, 250) != RC_OK)
				break;
	}
	rc__wctx_fini(&w);
	return NULL;
}

/* server.h: take a lone datagram listener out of epoll (blocking receives), start the worker
 * threads, serve on this one too, join them, and put the listener back. */
rc_status rc_server_run(rc_server *srv)
{
	pthread_t tids[1024];
	unsigned n, started = 0;
	bool single;
	rc_status st = RC_OK;

	if (srv == NULL || srv->nlsn == 0 || atomic_exchange(&srv->running, true))
		return RC_INVAL; /* from here on (or already) running: no listener is added */
	n = srv->threads > 1 ? srv->threads : 1;
	single = rc__single_dgram(srv);
	if (single) {
		/* Served by blocking receives alone. The socket leaves the epoll set meanwhile:
		 * while it is in one, every datagram's arrival also runs epoll's wake-up callback,
		 * which cost ~0.3 us a round trip on loopback. */
		rc__disarm(srv, srv->lsn[0]->tp);
		if (rc__tp_set_nonblock(srv->lsn[0]->tp, false) != RC_OK) {
			/* cannot happen for a socket we made; served by the epoll loop instead */
			single = false;
			(void)rc__arm(srv, EPOLL_CTL_ADD, srv->lsn[0]->tp, srv->lsn[0], EPOLLIN);
		}
	}
	if (n > 1) /* before the threads receive */
		for (unsigned i = 0; i < srv->nlsn; i++)
			if (srv->lsn[i]->dgram)
				rc__lsn_offload(srv, srv->lsn[i]);
	for (unsigned i = 1; i < n; i++)
		if (pthread_create(&tids[started], NULL, rc__worker, srv) == 0)
			started++;
	if (started == 0) { /* serving alone, on this thread (backchan.c) */
		srv->loop_thread = pthread_self();
		atomic_store(&srv->loop_alone, true);
	}
	rc__worker(srv);
	atomic_store(&srv->loop_alone, false);
	for (unsigned i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	if (single) { /* back as rc_server_step expects it */
		if (rc__tp_set_nonblock(srv->lsn[0]->tp, true) != RC_OK ||
		    !rc__arm(srv, EPOLL_CTL_ADD, srv->lsn[0]->tp, srv->lsn[0], EPOLLIN))
			st = RC_LOCALERROR; /* rc_server_step could not serve it any more */
	}
	rc__defer_orphan(srv, NULL); /* answers to what is still deferred say RC_CANCELLED */
	rc__connlife_drain(srv);     /* (connections their orphaning closed) */
	atomic_store(&srv->running, false);
	return st;
}

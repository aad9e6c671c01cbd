/*
 * Listeners behind a load balancer (?proxy=v2): each connection accepted on one must first
 * bring a PROXY header, v2 or v1 (transports/proxy_v2.c reads and parses it); until it has, it is
 * not a connection of the server's -- not in srv->conns, not counted against max_conns, never
 * served -- but a small object of its own here, armed one-shot for input. Once the header is
 * whole its client's address stands for the connection's peer (rc__tp_peer, so
 * rc_svc_req_caller, the Sun layer's svc_getcaller, the authentication callback's checks and
 * anything else that asks see the client, not the balancer) and the connection is admitted
 * (rc__conn_admit) as any other. One without a valid header, from a balancer not in
 * ?proxy_from, or silent for stall_ms, is closed unserved and counted
 * (rc_server_stats.conns_proxy_refused). A listener without ?proxy=v2 never comes here: its
 * calls cost what they did.
 *
 * Lifetime: a pending connection is freed only by its own event handler (one-shot: one thread
 * at a time), or by rc_server_destroy; the sweep (rc__proxy_sweep) and a drain only shut its
 * socket down, which raises its event -- the conn.c rule, for the same reason. Above admission
 * (accept.c), which hands it a proxied listener's connections through srv->proxy_begin.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "runtime/server/listener.h"

typedef struct rc__pxconn {
	int kind; /* RC__EV_PROXY */
	struct rc__pxconn *next, *prev;
	rc_tp *tp;
	int64_t until;  /* the header must be whole by then */
	bool busy;      /* under srv->mu: its handler runs */
	bool ended;     /* under srv->mu: shut down (swept, drained): its handler frees it */
	rc__proxy_rd rd;
} rc__pxconn;

/* listener.h: a listen URI's keys (the only ones a listen URI takes are these). */
bool rc__lsn_uri_key(void *ctx, const rc__uri_key *key, const char *value)
{
	rc__lsn_opts *o = ctx;

	if (strcmp(key->name, "proxy") == 0) {
		o->proxy = true; /* (the table allows only "v2") */
		return true;
	}
	if (strcmp(key->name, "proxy_from") == 0)
		return rc__proxy_from_add(&o->from, value);
	return true;
}

/* Unlink px (under mu). */
static void rc__px_unlink(rc_server *srv, rc__pxconn *px)
{
	if (px->prev)
		px->prev->next = px->next;
	else
		srv->pxconns = px->next;
	if (px->next)
		px->next->prev = px->prev;
	srv->npx--;
}

/* Closed unserved: counted (under mu). */
static void rc__px_refuse(rc_server *srv, rc_tp *tp)
{
	srv->n_proxy_refused++;
	tp->vt->close(tp);
}

/* listener.h */
void rc__proxy_begin(rc_server *srv, rc__lsn *l, rc_tp *tp)
{
	rc__pxconn *px;
	int64_t wake;

	pthread_mutex_lock(&srv->mu);
	/* not a balancer this listener believes, or too many headers awaited: closed at once */
	if (!rc__proxy_from_ok(&l->proxy_from, tp) || srv->npx >= srv->lim.max_conns ||
	    srv->draining || (px = calloc(1, sizeof(*px))) == NULL) {
		rc__px_refuse(srv, tp);
		pthread_mutex_unlock(&srv->mu);
		return;
	}
	px->kind = RC__EV_PROXY;
	px->tp = tp;
	px->until = rc__now() + (int64_t)srv->lim.stall_ms * 1000000;
	px->next = srv->pxconns;
	if (srv->pxconns)
		srv->pxconns->prev = px;
	srv->pxconns = px;
	srv->npx++;
	/* the sweep looks at it by its time (rc__lsn_wake -> rc__aux_tick) */
	if (srv->aux_next == 0 || px->until < srv->aux_next)
		srv->aux_next = px->until;
	wake = atomic_load_explicit(&srv->wake_at, memory_order_relaxed);
	if (wake == 0 || px->until < wake)
		atomic_store_explicit(&srv->wake_at, px->until, memory_order_relaxed);
	if (!rc__arm(srv, EPOLL_CTL_ADD, tp, px, EPOLLIN | EPOLLRDHUP | EPOLLONESHOT)) {
		rc__px_unlink(srv, px);
		rc__px_refuse(srv, tp);
		free(px);
	}
	pthread_mutex_unlock(&srv->mu);
}

/* listener.h */
void rc__proxy_event(rc_server *srv, void *arg)
{
	rc__pxconn *px = arg;
	rc__proxy_hdr h;
	rc_status st;
	bool ended;

	pthread_mutex_lock(&srv->mu);
	px->busy = true;
	ended = px->ended;
	pthread_mutex_unlock(&srv->mu);
	st = ended ? RC_CLOSED : rc__proxy_read(px->tp, &px->rd, &h);
	pthread_mutex_lock(&srv->mu);
	px->busy = false;
	if (st == RC_AGAIN && !px->ended) {
		if (rc__arm(srv, EPOLL_CTL_MOD, px->tp, px, EPOLLIN | EPOLLRDHUP | EPOLLONESHOT)) {
			pthread_mutex_unlock(&srv->mu);
			return;
		}
		st = RC_NOMEM;
	}
	rc__px_unlink(srv, px);
	rc__disarm(srv, px->tp);
	if (st == RC_OK && !px->ended && rc__proxy_set_caller(px->tp, &h.src) == RC_OK) {
		srv->n_proxied++;
		pthread_mutex_unlock(&srv->mu);
		(void)rc__conn_admit(srv, px->tp); /* (counted refused there if it fails) */
	} else {
		rc__px_refuse(srv, px->tp); /* malformed, missing, closed, late */
		pthread_mutex_unlock(&srv->mu);
	}
	free(px);
}

/* listener.h: shut down those past their time, or all while draining (under mu); when
 * the next is due. */
int64_t rc__proxy_sweep(rc_server *srv, int64_t now)
{
	int64_t next = 0;

	for (rc__pxconn *px = srv->pxconns; px != NULL; px = px->next) {
		if (px->ended)
			continue;
		if (srv->draining || now >= px->until) {
			px->ended = true; /* its handler (the event this raises) frees it */
			px->tp->vt->shutdown(px->tp, true);
		} else if (next == 0 || px->until < next) {
			next = px->until;
		}
	}
	return next;
}

/* listener.h */
void rc__proxy_destroy(rc_server *srv)
{
	while (srv->pxconns != NULL) {
		rc__pxconn *px = srv->pxconns;
		rc__px_unlink(srv, px);
		px->tp->vt->close(px->tp);
		free(px);
	}
}

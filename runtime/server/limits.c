/*
 * The server's limits (rc_server_limits), set while stopped or while serving
 * (docs/runtime.md, "Changes while serving").
 *
 * While the server runs, a field changes under srv->mu with a relaxed atomic store, one field
 * at a time. Readers that hold srv->mu (the connection table's caps, deferral, the inbound
 * budget's release) read it plainly; the others (the sweeper's clocks, the decoders' max_alloc,
 * a reading turn's inbound and parking checks) through RC__LIM, a relaxed atomic load -- so a
 * call or a turn sees each field old or new, never torn, and may see one field changed before
 * another. After a change the writer wakes what a raised limit frees (connections held at
 * a deferral cap or at the inbound budget are looked at again) and makes the sweeper walk the
 * table at its next tick, so shorter idle_ms / stall_ms apply from then.
 *
 * Two groups cannot change under a running server and are refused (RC_INVAL, nothing
 * applied): max_record (the listeners' and connections' buffers and the datagram offload were
 * sized with it) and drc_* (the duplicate request cache is made anew for them, and serving
 * threads read it without a lock). A field equal to its current value is not a change.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "runtime/server/server_internal.h"
#include "runtime/server/listener.h"
#include "xdr/base.h"

/* Whether lim asks, while the server runs, for a change that only a stopped server takes. */
static bool rc__limits_need_stop(const rc_server *srv, const rc_server_limits *lim)
{
	return (lim->max_record && (lim->max_record < 64 ? 64 : lim->max_record) !=
	                                   srv->lim.max_record) ||
	       (lim->drc_entries && lim->drc_entries != srv->lim.drc_entries) ||
	       (lim->drc_ttl_ms && lim->drc_ttl_ms != srv->lim.drc_ttl_ms) ||
	       (lim->drc_bytes && lim->drc_bytes != srv->lim.drc_bytes);
}

/* The fields a running server takes (docs/runtime.md has when each takes effect). */
#define RC__LIVE_LIMITS(X)                                                               \
	X(max_alloc) X(max_conns) X(idle_ms) X(stall_ms) X(max_deferred_conn)           \
	X(max_deferred) X(max_parked_conn) X(max_inbound_bytes) X(gss_contexts)         \
	X(gss_contexts_per_principal) X(gss_incomplete) X(gss_idle_ms)

/* Store lim->f into srv->lim.f when it is not 0 (under srv->mu). */
#define RC__LIM_SET(f)                                                                   \
	if (lim->f)                                                                      \
		__atomic_store_n(&srv->lim.f, lim->f, __ATOMIC_RELAXED);

/* server.h: zero fields keep their value. Stopped: a cache change makes a fresh cache.
 * Running: the live fields only (the header above). */
rc_status rc_server_set_limits(rc_server *srv, const rc_server_limits *lim)
{
	bool running, gss;

	if (srv == NULL || lim == NULL)
		return RC_INVAL;
	pthread_mutex_lock(&srv->mu);
	running = atomic_load(&srv->running);
	if (running && rc__limits_need_stop(srv, lim)) {
		pthread_mutex_unlock(&srv->mu);
		return RC_INVAL;
	}
	if (!running && lim->max_record) {
		srv->lim.max_record = lim->max_record < 64 ? 64 : lim->max_record;
		srv->dgram_max = srv->lim.max_record < RC__UDP_MAX ? srv->lim.max_record : RC__UDP_MAX;
	}
	RC__LIVE_LIMITS(RC__LIM_SET)
	gss = lim->gss_contexts || lim->gss_contexts_per_principal || lim->gss_incomplete ||
	      lim->gss_idle_ms;
	if (!running && (lim->drc_entries || lim->drc_ttl_ms || lim->drc_bytes)) {
		if (lim->drc_entries)
			srv->lim.drc_entries = lim->drc_entries;
		if (lim->drc_ttl_ms)
			srv->lim.drc_ttl_ms = lim->drc_ttl_ms;
		if (lim->drc_bytes)
			srv->lim.drc_bytes = lim->drc_bytes;
		rc__drc_destroy(srv->drc);
		srv->drc = rc__drc_create(srv->lim.drc_entries, srv->lim.drc_bytes,
		                          srv->lim.drc_ttl_ms);
	}
	if (running) {
		srv->next_walk = 0; /* the sweeper walks at its next tick, with the new clocks */
		srv->defer_room(srv);   /* held at a deferral cap that was raised */
		srv->inbound_room(srv); /* held at an inbound budget that was raised */
	}
	pthread_mutex_unlock(&srv->mu);
	if (running)
		rc__connlife_drain(srv); /* (a connection re-armed may have been closed) */
	if (gss)
		rc__gss_apply_limits(srv); /* (the table's own lock; contexts over a lower bound go) */
	return RC_OK;
}

/*
 * RPC-over-QUIC: pipes and streams (transports/quic_conn.h). Whole messages move between a
 * pipe -- the box the runtime's end shares with the endpoint, rung through a Unix socket
 * pair -- and the QUIC streams the draft puts them on; flow-control credit is held back while
 * the runtime has RC__Q_PIPE_HIWAT bytes waiting and given back as it takes them; the other
 * way, records are taken from the runtime only while the pipe's unacknowledged bytes leave
 * room (RC__Q_PIPE_HELD), and a box over its bounds is choked (quic_conn.h).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <unistd.h>

#include "transports/quic_ngtcp2.h"
#include "transports/quic_conn.h"

static atomic_bool rc__q_withhold;

void rc__quic_set_withhold(bool on)
{
	atomic_store(&rc__q_withhold, on);
}

void rc__q_count(rc__qep *ep, uint64_t *ctr)
{
	pthread_mutex_lock(&ep->mu);
	(*ctr)++;
	pthread_mutex_unlock(&ep->mu);
}

/* ---- pipes -------------------------------------------------------------------------------- */

static void rc__qstrm_write_credit(rc__qstrm *s);

/* Free a list of chunks and their bytes. */
static void rc__qchunks_free(rc__qchunk *c)
{
	while (c != NULL) {
		rc__qchunk *n = c->next;
		rc__qchunk_free(c);
		c = n;
	}
}

void rc__qbox_ring(int fd)
{
	char b = 1;

	(void)!send(fd, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

void rc__qbox_release(rc__qbox *b)
{
	if (b == NULL || atomic_fetch_sub(&b->refs, 1) != 1)
		return;
	rc__qchunks_free(b->toward);
	rc__qchunks_free(b->from);
	pthread_mutex_destroy(&b->mu);
	free(b);
}

/* A pipe ends (its runtime end closed, or its connection gone): its streams forget it; the
 * runtime takes what was queued to it, then finds its end closed. */
void rc__qpipe_kill(rc__qpipe *p)
{
	if (p->dead)
		return;
	p->dead = true;
	pthread_mutex_lock(&p->box->mu);
	p->box->gone = true;
	pthread_mutex_unlock(&p->box->mu);
	(void)epoll_ctl(p->qc->ep->epfd, EPOLL_CTL_DEL, p->fd, NULL);
	close(p->fd);
	p->fd = -1;
	for (rc__qstrm *s = p->qc->streams; s != NULL; s = s->next)
		if (s->pipe == p) {
			s->pipe = NULL;
			if (!s->gone)
				s->fin_want = true;
		}
	if (p->qc->cpipe == p) /* a client's runtime closed: end the connection */
		rc__qc_close(p->qc, RC__NG_CLOSE_APP, RC_QUIC_NO_ERROR);
}

void rc__qpipe_free(rc__qpipe *p)
{
	rc__qbox_release(p->box);
	free(p);
}

/* Ring p's runtime end unless a byte already waits there (under the box's lock). */
static void rc__qpipe_bell(rc__qpipe *p)
{
	if (!p->box->bell) {
		p->box->bell = true;
		rc__qbox_ring(p->fd);
	}
}

/* Queue msg[0..len) (taken: freed with the chunk) to the runtime, and ring if it was not: the
 * first time in a turn of the endpoint's loop at once (a small message read beside a big one's
 * packets does not wait for all of them), after that at the end of the turn's events
 * (rc__qep_ring_due) -- a runtime that runs when rung and takes each message as it comes
 * would otherwise be rung, and switched to, once a message. Its connection then looks at its
 * pipes before it flushes (rang). */
static void rc__qpipe_put(rc__qpipe *p, unsigned char *msg, size_t len)
{
	rc__qep *ep = p != NULL ? p->qc->ep : NULL;
	rc__qchunk *c;
	rc__qbox *b;
	bool later = false;

	if (p == NULL || p->dead || (c = calloc(1, sizeof(*c))) == NULL) {
		free(msg);
		return;
	}
	c->p = msg;
	c->len = len;
	b = p->box;
	pthread_mutex_lock(&b->mu);
	if (b->toward_tail)
		b->toward_tail->next = c;
	else
		b->toward = c;
	b->toward_tail = c;
	b->toward_bytes += len;
	if (!b->bell && p->rung != ep->turn) {
		rc__qpipe_bell(p);
		p->rung = ep->turn;
	} else if (!b->bell) {
		later = true;
	}
	pthread_mutex_unlock(&b->mu);
	if (later && !p->due) {
		p->due = true;
		p->due_next = ep->due;
		ep->due = p;
	}
	p->qc->rang = true;
}

void rc__qep_ring_due(rc__qep *ep)
{
	while (ep->due != NULL) {
		rc__qpipe *p = ep->due;
		rc__qbox *b = p->box;

		ep->due = p->due_next;
		p->due = false;
		p->due_next = NULL;
		if (p->dead)
			continue;
		pthread_mutex_lock(&b->mu);
		/* (the runtime may have taken them all meanwhile, unrung: then no byte -- it
		 * would stay unread with nothing behind it) */
		if (b->toward != NULL)
			rc__qpipe_bell(p);
		pthread_mutex_unlock(&b->mu);
	}
}

/* No more messages come toward p's runtime end (after those queued): a server connection's
 * client has ended its stream. */
void rc__qpipe_fin(rc__qpipe *p)
{
	rc__qbox *b = p->box;

	pthread_mutex_lock(&b->mu);
	b->fin = true;
	rc__qpipe_bell(p);
	pthread_mutex_unlock(&b->mu);
}

/* ---- streams ------------------------------------------------------------------------------ */

rc__qstrm *rc__qstrm_new(rc__qconn *qc, int64_t id, rc__qpipe *p, bool local)
{
	rc__qstrm *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->id = id;
	s->qc = qc;
	s->pipe = p;
	s->local = local;
	rc__qmsg_init(&s->in, qc->ep->max_record);
	s->next = qc->streams;
	qc->streams = s;
	(void)ngtcp2_conn_set_stream_user_data(qc->conn, id, s);
	if (local)
		qc->nlocal++;
	return s;
}

void rc__qstrm_free(rc__qstrm *s)
{
	if (s->held > 0)
		rc__qstrm_acked(s, s->held); /* never to be acknowledged: its pipe has room */
	rc__qchunks_free(s->sq);
	rc__qmsg_free(&s->in);
	free(s);
}

/* Queue chunk c (taken) on stream s: the bytes queued (its len), or 0 (dropped). */
static size_t rc__qstrm_put(rc__qstrm *s, rc__qchunk *c)
{
	size_t len = c->len;

	if (s == NULL || s->gone || s->fin_want) {
		rc__qchunk_free(c);
		return 0;
	}
	c->next = NULL;
	c->off = s->end;
	s->end += len;
	s->unsent += len;
	if (s->sq_tail)
		s->sq_tail->next = c;
	else
		s->sq = c;
	s->sq_tail = c;
	if (s->snext == NULL) {
		s->snext = c;
		s->snext_pos = 0;
	}
	s->held += len;
	s->qc->ep->held += len;
	return len;
}

void rc__qstrm_acked(rc__qstrm *s, size_t n)
{
	s->held -= n;
	s->qc->ep->held -= n;
	if (s->pipe != NULL) {
		rc__qbox *b = s->pipe->box;
		pthread_mutex_lock(&b->mu);
		b->held -= n;
		if (b->from != NULL && b->held < RC__Q_PIPE_HELD)
			s->pipe->kick = true; /* the endpoint's loop takes more (rc__qpipe_take) */
		pthread_mutex_unlock(&b->mu);
	}
}

/* Give back the flow-control credit of bytes delivered (or held back while the pipe was
 * full). */
void rc__qstrm_credit(rc__qstrm *s, uint64_t n)
{
	if (!s->qc->ep->server && atomic_load_explicit(&rc__q_withhold, memory_order_relaxed)) {
		s->owed += n; /* (tests: a peer that reads nothing) */
		return;
	}
	if (s->pipe != NULL) {
		rc__qbox *b = s->pipe->box;
		bool hold;
		pthread_mutex_lock(&b->mu);
		hold = b->toward_bytes >= RC__Q_PIPE_HIWAT;
		if (hold)
			b->owed = true;
		pthread_mutex_unlock(&b->mu);
		if (hold) {
			s->owed += n;
			return;
		}
	}
	(void)ngtcp2_conn_extend_max_stream_offset(s->qc->conn, s->id, n);
	ngtcp2_conn_extend_max_offset(s->qc->conn, n);
}

static void rc__qstrm_write_credit(rc__qstrm *s)
{
	uint64_t n = s->owed;

	s->owed = 0;
	rc__qstrm_credit(s, n);
}

/* ---- routing ------------------------------------------------------------------------------ */

void rc__qc_close(rc__qconn *qc, int how, int64_t code)
{
	if (!qc->close_want) {
		qc->close_want = true;
		qc->close_how = how;
		qc->close_code = code;
	}
}

/* A client's stream for its next call of len bytes: the least busy of the pool, or a new one
 * while the pool is not full and every open one has calls out. Small calls the runtime handed
 * over together (one take) go RC__Q_STICK at a time on one stream -- a burst of pipelined
 * calls on a few streams, not spread one by one over all: the server then has a few
 * connections to read and answer, not one for each stream -- while a call that comes alone
 * (or a big one) takes the least busy. */
static rc__qstrm *rc__qc_pick_call(rc__qconn *qc, size_t len)
{
	rc__qstrm *best = NULL, *st = qc->stick;
	int64_t id;

	if (st != NULL && qc->stick_left > 0 && len < RC__Q_BIG && !st->gone && !st->fin_want &&
	    st->unsent < RC__Q_BIG) {
		qc->stick_left--;
		return st;
	}

	for (rc__qstrm *s = qc->streams; s != NULL; s = s->next) {
		if (!s->local || s->gone || s->fin_want)
			continue;
		if (best == NULL || s->calls + s->unsent / 65536 < best->calls + best->unsent / 65536)
			best = s;
	}
	if ((best == NULL || best->calls > 0) && qc->nlocal < qc->ep->streams &&
	    ngtcp2_conn_open_bidi_stream(qc->conn, &id, NULL) == 0) {
		rc__qstrm *s = rc__qstrm_new(qc, id, qc->cpipe, true);
		if (s != NULL)
			best = s;
	}
	qc->stick = len < RC__Q_BIG ? best : NULL;
	qc->stick_left = RC__Q_STICK - 1;
	return best;
}

/* A whole message -- chunk c (taken), record marked -- of type `type` and XID xid came from
 * pipe p: send it on the stream the draft says. The bytes queued, or 0 (dropped: nowhere to
 * go). */
static size_t rc__qpipe_route(rc__qpipe *p, uint32_t type, uint32_t xid, rc__qchunk *c)
{
	rc__qconn *qc = p->qc;
	rc__qstrm *s = NULL;
	int64_t id;

	if (type == 0 && qc->ep->server) { /* a call back: on the pipe's own server stream */
		if (p->back == NULL && ngtcp2_conn_open_bidi_stream(qc->conn, &id, NULL) == 0)
			p->back = rc__qstrm_new(qc, id, p, true);
		s = p->back;
	} else if (type == 0) {
		s = rc__qc_pick_call(qc, c->len);
	} else if (type == 1 && qc->ep->server) {
		s = p->home;
	} else if (type == 1) { /* a client's reply to a call back: where the call came from */
		for (unsigned i = 0; i < qc->nback; i++) {
			if (qc->back[i].xid != xid)
				continue;
			for (rc__qstrm *t = qc->streams; t != NULL; t = t->next)
				if (t->id == qc->back[i].sid)
					s = t;
			qc->back[i] = qc->back[--qc->nback];
			break;
		}
	}
	if (s != NULL && type == 0)
		s->calls++;
	return rc__qstrm_put(s, c); /* (s NULL: dropped -- nowhere to go) */
}

/* A whole message came on stream s: check its direction, pass it to the pipe. */
static void rc__qstrm_route(rc__qstrm *s, unsigned char *msg, size_t len, uint32_t type,
                            uint32_t xid)
{
	rc__qconn *qc = s->qc;

	if (type != (s->local ? 1u : 0u)) { /* the draft: dropped silently */
		rc__q_count(qc->ep, &qc->ep->st.wrong_direction);
		free(msg);
		return;
	}
	if (s->local && s->calls > 0)
		s->calls--;
	if (!s->local && !qc->ep->server) {
		if (qc->nback == RC__Q_BACKMAP) { /* too many calls back at once: drop this one */
			free(msg);
			return;
		}
		qc->back[qc->nback].xid = xid;
		qc->back[qc->nback++].sid = s->id;
	}
	rc__qpipe_put(s->pipe, msg, len);
}

/* Bytes p[0..n) of stream s: whole messages on; a bad record closes the connection. */
void rc__qstrm_feed(rc__qstrm *s, const uint8_t *p, size_t n)
{
	while (n > 0) {
		size_t used = 0, len;
		int r = rc__qmsg_feed(&s->in, p, n, &used);
		if (r == RC__QMSG_BAD) {
			rc__q_count(s->qc->ep, &s->qc->ep->st.bad_records);
			rc__qc_close(s->qc, RC__NG_CLOSE_APP, RC_QUIC_PROTOCOL_VIOLATION);
			return;
		}
		if (r == RC__QMSG_MORE)
			return;
		uint32_t type = rc__qmsg_type(&s->in), xid = rc__qmsg_xid(&s->in);
		unsigned char *msg = rc__qmsg_take(&s->in, &len);
		if (s->pipe == NULL)
			free(msg);
		else
			rc__qstrm_route(s, msg, len, type, xid);
		p += used;
		n -= used;
	}
}

/* Read the endpoint's end of p dry: true when it is closed (the runtime's end is gone). */
static bool rc__qpipe_drain(rc__qep *ep, rc__qpipe *p)
{
	ssize_t n;

	/* (one read takes every bell waiting; a short one says the end is empty) */
	while ((n = read(p->fd, ep->rx, sizeof(ep->rx))) == (ssize_t)sizeof(ep->rx))
		;
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
}

/* Poll p's end for input (on) or for hang-ups only (off: its box is choked). */
static void rc__qpipe_poll(rc__qpipe *p, bool on)
{
	struct epoll_event ev = {.events = EPOLLRDHUP | (on ? EPOLLIN : 0), .data.ptr = p};

	if (p->polled != on && !p->dead &&
	    epoll_ctl(p->qc->ep->epfd, EPOLL_CTL_MOD, p->fd, &ev) == 0)
		p->polled = on;
}

void rc__qpipe_take(rc__qpipe *p)
{
	rc__qbox *b = p->box;
	rc__qchunk *c, *last = NULL;
	size_t took = 0, queued = 0;
	bool eof = false, on;

	p->kick = false;
	pthread_mutex_lock(&b->mu);
	c = b->from;
	while (b->from != NULL && (b->spread || b->held + took < RC__Q_PIPE_HELD)) {
		last = b->from;
		took += last->len;
		b->from = last->next;
	}
	if (last != NULL) {
		last->next = NULL;
		if (b->from == NULL)
			b->from_tail = NULL;
		b->from_bytes -= took;
		atomic_store_explicit(&b->from_seen, b->from_bytes, memory_order_relaxed);
	} else {
		c = NULL;
	}
	pthread_mutex_unlock(&b->mu);
	while (c != NULL) {
		rc__qchunk *next = c->next;
		if (c->len >= 12 && !p->dead) { /* a record mark, an XID and a type at least */
			const unsigned char *h = c->p + 4;
			uint32_t xid = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
			uint32_t type = (uint32_t)h[4] << 24 | (uint32_t)h[5] << 16 | (uint32_t)h[6] << 8 | h[7];
			queued += rc__qpipe_route(p, type, xid, c);
		} else {
			rc__qchunk_free(c);
		}
		c = next;
	}
	p->qc->stick = NULL; /* (a burst is what one take brings; and no stream is kept past it) */
	pthread_mutex_lock(&b->mu);
	b->held += queued;
	if (b->choked && !rc__qbox_full(b)) {
		/* room again: the runtime's end writable (the filler read), its bells heard */
		eof = rc__qpipe_drain(p->qc->ep, p);
		b->choked = false;
		b->attn = false;
		p->kick = b->from != NULL; /* (records sent while choked rang no bell) */
	}
	on = !b->choked;
	pthread_mutex_unlock(&b->mu);
	rc__qpipe_poll(p, on);
	if (eof)
		rc__qpipe_kill(p);
}

void rc__qpipe_read(rc__qep *ep, rc__qpipe *p, uint32_t events)
{
	rc__qbox *b = p->box;
	bool eof, credit;

	pthread_mutex_lock(&b->mu);
	if (b->choked) {
		/* its end holds the filler: unread, polled only for a hang-up */
		eof = (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0;
	} else {
		eof = rc__qpipe_drain(ep, p);
		b->attn = false;
	}
	credit = b->toward_bytes < RC__Q_PIPE_HIWAT;
	pthread_mutex_unlock(&b->mu);
	rc__qpipe_take(p);
	if (credit)
		for (rc__qstrm *s = p->qc->streams; s != NULL; s = s->next)
			if (s->pipe == p && s->owed > 0)
				rc__qstrm_write_credit(s);
	if (eof)
		rc__qpipe_kill(p);
}

/* A new pipe of qc; the runtime's end in *rfd and *box. NULL when descriptors or memory are
 * short. */
rc__qpipe *rc__qpipe_new(rc__qconn *qc, int *rfd, rc__qbox **box)
{
	int sv[2];
	rc__qpipe *p;
	rc__qbox *b;
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP};

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	if ((b = calloc(1, sizeof(*b))) == NULL) {
		free(p);
		return NULL;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		free(b);
		free(p);
		return NULL;
	}
	pthread_mutex_init(&b->mu, NULL);
	atomic_init(&b->refs, 2);
	(void)fcntl(sv[0], F_SETFL, O_NONBLOCK);
	{
		/* the runtime's end sends bells and, choked, filler: a small buffer fills fast */
		int small = 4096;
		(void)setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	}
	p->kind = RC__QEV_PIPE;
	p->polled = true;
	p->fd = sv[0];
	p->qc = qc;
	p->box = b;
	ev.data.ptr = p;
	if (epoll_ctl(qc->ep->epfd, EPOLL_CTL_ADD, p->fd, &ev) != 0) {
		close(sv[0]);
		close(sv[1]);
		pthread_mutex_destroy(&b->mu);
		free(b);
		free(p);
		return NULL;
	}
	p->next = qc->pipes;
	qc->pipes = p;
	*rfd = sv[1];
	*box = b;
	return p;
}

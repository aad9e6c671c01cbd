/*
 * RPC-over-QUIC: pipes and streams (transports/quic_priv.h). Whole messages move between a
 * pipe -- the Unix socket pair whose other end the runtime holds -- and the QUIC streams the
 * draft puts them on; flow-control credit is given back as the pipe takes the bytes.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <unistd.h>

#include "transports/quic_ngtcp2.h"
#include "transports/quic_priv.h"

void rc__q_count(rc__qep *ep, uint64_t *ctr)
{
	pthread_mutex_lock(&ep->mu);
	(*ctr)++;
	pthread_mutex_unlock(&ep->mu);
}

/* ---- pipes -------------------------------------------------------------------------------- */

static void rc__qstrm_write_credit(rc__qstrm *s);

static void rc__qpipe_arm(rc__qpipe *p, bool out)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (out ? EPOLLOUT : 0),
	                         .data.ptr = p};

	if (p->out_armed == out)
		return;
	p->out_armed = out;
	(void)epoll_ctl(p->qc->ep->epfd, EPOLL_CTL_MOD, p->fd, &ev);
}

/* A pipe ends (its runtime end closed, or its connection gone): its streams forget it. */
void rc__qpipe_kill(rc__qpipe *p)
{
	if (p->dead)
		return;
	p->dead = true;
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

/* Free a list of chunks and their bytes. */
static void rc__qchunks_free(rc__qchunk *c)
{
	while (c != NULL) {
		rc__qchunk *n = c->next;
		free(c->p);
		free(c);
		c = n;
	}
}

void rc__qpipe_free(rc__qpipe *p)
{
	rc__qchunks_free(p->oq);
	rc__qmsg_free(&p->in);
	free(p);
}

/* Write what is queued to the runtime, as far as the socket takes it. */
void rc__qpipe_flush(rc__qpipe *p)
{
	while (!p->dead && p->oq != NULL) {
		struct iovec iov[16];
		int n = 0;
		ssize_t w;

		for (rc__qchunk *c = p->oq; c != NULL && n < 16; c = c->next, n++) {
			iov[n].iov_base = c->p + (n == 0 ? p->oq_off : 0);
			iov[n].iov_len = c->len - (n == 0 ? p->oq_off : 0);
		}
		w = writev(p->fd, iov, n);
		if (w < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			rc__qpipe_kill(p);
			return;
		}
		p->oq_bytes -= (size_t)w;
		while (w > 0) {
			rc__qchunk *c = p->oq;
			size_t left = c->len - p->oq_off;
			if ((size_t)w < left) {
				p->oq_off += (size_t)w;
				break;
			}
			w -= (ssize_t)left;
			p->oq = c->next;
			p->oq_off = 0;
			free(c->p);
			free(c);
		}
		if (p->oq == NULL)
			p->oq_tail = NULL;
	}
	if (p->dead)
		return;
	rc__qpipe_arm(p, p->oq != NULL);
	if (p->oq_bytes < RC__Q_PIPE_HIWAT)
		for (rc__qstrm *s = p->qc->streams; s != NULL; s = s->next)
			if (s->pipe == p && s->owed > 0)
				rc__qstrm_write_credit(s);
}

/* Queue msg[0..len) (taken: freed with the chunk) to the runtime. */
static void rc__qpipe_put(rc__qpipe *p, unsigned char *msg, size_t len)
{
	rc__qchunk *c;

	if (p == NULL || p->dead || (c = calloc(1, sizeof(*c))) == NULL) {
		free(msg);
		return;
	}
	c->p = msg;
	c->len = len;
	if (p->oq_tail)
		p->oq_tail->next = c;
	else
		p->oq = c;
	p->oq_tail = c;
	p->oq_bytes += len;
	rc__qpipe_flush(p);
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
	rc__qchunks_free(s->sq);
	rc__qmsg_free(&s->in);
	free(s);
}

/* Queue msg[0..len) (taken) on stream s. */
static void rc__qstrm_put(rc__qstrm *s, unsigned char *msg, size_t len)
{
	rc__qchunk *c;

	if (s == NULL || s->gone || s->fin_want || (c = calloc(1, sizeof(*c))) == NULL) {
		free(msg);
		return;
	}
	c->p = msg;
	c->len = len;
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
}

/* Give back the flow-control credit of bytes delivered (or held back while the pipe was
 * full). */
void rc__qstrm_credit(rc__qstrm *s, uint64_t n)
{
	if (s->pipe != NULL && s->pipe->oq_bytes >= RC__Q_PIPE_HIWAT) {
		s->owed += n;
		return;
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

/* A client's stream for its next call: the least busy of the pool, or a new one while the
 * pool is not full and every open one has calls out. */
static rc__qstrm *rc__qc_pick_call(rc__qconn *qc)
{
	rc__qstrm *best = NULL;
	int64_t id;

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
	return best;
}

/* A whole message msg[0..len) of type `type` and XID xid came from pipe p: send it on the
 * stream the draft says. */
static void rc__qpipe_route(rc__qpipe *p, uint32_t type, uint32_t xid, unsigned char *msg,
                            size_t len)
{
	rc__qconn *qc = p->qc;
	rc__qstrm *s = NULL;
	int64_t id;

	if (type == 0 && qc->ep->server) { /* a call back: on the pipe's own server stream */
		if (p->back == NULL && ngtcp2_conn_open_bidi_stream(qc->conn, &id, NULL) == 0)
			p->back = rc__qstrm_new(qc, id, p, true);
		s = p->back;
	} else if (type == 0) {
		s = rc__qc_pick_call(qc);
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
	rc__qstrm_put(s, msg, len); /* (s NULL: dropped -- nowhere to go) */
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

/* The runtime's end of p is readable (or closed). */
void rc__qpipe_read(rc__qep *ep, rc__qpipe *p)
{
	for (int rounds = 0; rounds < 16 && !p->dead; rounds++) {
		ssize_t n = read(p->fd, ep->rx, sizeof(ep->rx));
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			rc__qpipe_kill(p);
			return;
		}
		const unsigned char *b = ep->rx;
		size_t left = (size_t)n;
		while (left > 0) {
			size_t used = 0, len;
			int r = rc__qmsg_feed(&p->in, b, left, &used);
			if (r == RC__QMSG_BAD) {
				rc__qpipe_kill(p);
				return;
			}
			if (r == RC__QMSG_MORE)
				break;
			uint32_t type = rc__qmsg_type(&p->in), xid = rc__qmsg_xid(&p->in);
			unsigned char *msg = rc__qmsg_take(&p->in, &len);
			rc__qpipe_route(p, type, xid, msg, len);
			b += used;
			left -= used;
		}
		if ((size_t)n < sizeof(ep->rx))
			return;
	}
}

/* A new pipe of qc; the runtime's end in *rfd. NULL when descriptors or memory are short. */
rc__qpipe *rc__qpipe_new(rc__qconn *qc, int *rfd)
{
	int sv[2];
	rc__qpipe *p;
	int sz = 4 << 20;
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP};

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		free(p);
		return NULL;
	}
	for (int i = 0; i < 2; i++) {
		(void)setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		(void)setsockopt(sv[i], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	(void)fcntl(sv[0], F_SETFL, O_NONBLOCK);
	p->kind = RC__QEV_PIPE;
	p->fd = sv[0];
	p->qc = qc;
	rc__qmsg_init(&p->in, qc->ep->max_record);
	ev.data.ptr = p;
	if (epoll_ctl(qc->ep->epfd, EPOLL_CTL_ADD, p->fd, &ev) != 0) {
		close(sv[0]);
		close(sv[1]);
		rc__qmsg_free(&p->in);
		free(p);
		return NULL;
	}
	p->next = qc->pipes;
	qc->pipes = p;
	*rfd = sv[1];
	return p;
}

/*
 * RPC-over-QUIC: the endpoint (transports/quic_conn.h) -- a UDP socket and the thread that
 * runs ngtcp2 on it for its connections: packets in (UDP_GRO) and out (UDP_SEGMENT batches),
 * the streams' bytes written round-robin, timers, the pipes' events, and what ended reaped.
 */

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include <gnutls/crypto.h>

#include "transports/quic_ngtcp2.h"
#include "transports/quic_conn.h"

static atomic_uint rc__q_idle_ms;

void rc__quic_set_idle_ms(unsigned ms)
{
	atomic_store(&rc__q_idle_ms, ms);
}

static void rc__qc_free(rc__qconn *qc)
{
	for (rc__qpipe *p = qc->pipes, *n; p != NULL; p = n) {
		n = p->next;
		rc__qpipe_kill(p);
		rc__qpipe_free(p);
	}
	for (rc__qstrm *s = qc->streams, *n; s != NULL; s = n) {
		n = s->next;
		rc__qstrm_free(s);
	}
	if (qc->conn)
		ngtcp2_conn_del(qc->conn);
	if (qc->ses)
		gnutls_deinit(qc->ses);
	rc__qpeer_release(qc->who);
	free(qc);
}

/* Send buf[0..len) to qc's peer: one packet, or (len > seg) packets of seg bytes, the last
 * maybe shorter, as one UDP GSO send. A batch the kernel will not segment goes one packet at a
 * time, and GSO stays off for the endpoint. A send the socket cannot take now is dropped, as
 * the network may drop it: QUIC's loss recovery sends it again. */
static void rc__qc_send_gso(rc__qconn *qc, const uint8_t *buf, size_t len, size_t seg)
{
	rc__qep *ep = qc->ep;
	struct iovec iov = {(void *)buf, len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	union {
		char b[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} ctl;

	if (ep->server) {
		mh.msg_name = &qc->peer;
		mh.msg_namelen = qc->peerlen;
	}
	if (len > seg && ep->gso) {
		struct cmsghdr *cm = (struct cmsghdr *)ctl.b;
		uint16_t s16 = (uint16_t)seg;

		memset(ctl.b, 0, sizeof(ctl.b));
		cm->cmsg_level = SOL_UDP;
		cm->cmsg_type = UDP_SEGMENT;
		cm->cmsg_len = CMSG_LEN(sizeof(s16));
		memcpy(CMSG_DATA(cm), &s16, sizeof(s16));
		mh.msg_control = ctl.b;
		mh.msg_controllen = sizeof(ctl.b);
		if (sendmsg(ep->ufd, &mh, MSG_DONTWAIT) >= 0 || errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		ep->gso = false; /* (EIO, EINVAL, ENOPROTOOPT...: the kernel or device cannot) */
		mh.msg_control = NULL;
		mh.msg_controllen = 0;
	}
	for (size_t off = 0; off < len; off += seg) {
		iov.iov_base = (void *)(buf + off);
		iov.iov_len = len - off < seg ? len - off : seg;
		(void)sendmsg(ep->ufd, &mh, MSG_DONTWAIT);
	}
}

/* Send one packet of qc's. */
static void rc__qc_send(rc__qconn *qc, const uint8_t *pkt, size_t len)
{
	rc__qc_send_gso(qc, pkt, len, len);
}

/* qc's stream with bytes (or a FIN) to write that is not blocked this round: the one after
 * the last served (by stream ID, wrapping round), so each stream with data gets every n-th
 * packet -- a small call on one stream waits for one packet of a big one, not for all of it. */
static rc__qstrm *rc__qc_pick_write(rc__qconn *qc)
{
	rc__qstrm *next = NULL, *lowest = NULL;

	for (rc__qstrm *s = qc->streams; s != NULL; s = s->next) {
		if (s->gone || s->round == qc->round || (s->unsent == 0 && (!s->fin_want || s->fin_sent)))
			continue;
		if (s->id > qc->last_sent && (next == NULL || s->id < next->id))
			next = s;
		if (lowest == NULL || s->id < lowest->id)
			lowest = s;
	}
	if (next == NULL)
		next = lowest;
	if (next != NULL)
		qc->last_sent = next->id;
	return next;
}

/* Mark n bytes of s given to ngtcp2. */
static void rc__qstrm_sent(rc__qstrm *s, size_t n)
{
	s->unsent -= n;
	while (n > 0 && s->snext != NULL) {
		size_t left = s->snext->len - s->snext_pos;
		if (n < left) {
			s->snext_pos += n;
			return;
		}
		n -= left;
		s->snext = s->snext->next;
		s->snext_pos = 0;
	}
}

/* Fail qc now (an error from ngtcp2): a CONNECTION_CLOSE if one can be made, then gone. */
static void rc__qc_fail(rc__qconn *qc, int how, int64_t code)
{
	uint8_t pkt[RC__Q_PKT];
	ngtcp2_ssize n;

	if (qc->dead)
		return;
	if (!ngtcp2_conn_is_in_closing_period(qc->conn) &&
	    !ngtcp2_conn_is_in_draining_period(qc->conn) &&
	    (n = rc__ng_write_close(qc->conn, pkt, sizeof(pkt), how, code, rc__q_now())) > 0)
		rc__qc_send(qc, pkt, (size_t)n);
	qc->dead = true;
}

/* Write what qc has to send: stream data, acknowledgements, a close. Packets are written
 * one after another into the endpoint's tx buffer and leave in batches (rc__qc_send_gso): a
 * batch ends with a packet shorter than its first, or when the next might not fit. At most
 * RC__Q_TX_TURN bytes a turn: then true (more may wait), and the loop goes round -- the pipes,
 * a small call just sent -- before it writes more of a big message. */
static bool rc__qc_flush(rc__qconn *qc)
{
	size_t turn = 0;
	uint8_t *tx = qc->ep->tx;
	size_t blen = 0, seg = 0, nseg = 0;
	size_t pmax = ngtcp2_conn_get_path_max_tx_udp_payload_size(qc->conn);
	ngtcp2_path_storage ps;
	ngtcp2_pkt_info pi;
	uint64_t ts = rc__q_now();
	rc__qstrm *s = NULL;

	if (qc->dead)
		return false;
	if (pmax > RC__Q_PKT_LO)
		pmax = RC__Q_PKT_LO;
	if (qc->close_want) {
		rc__qc_fail(qc, qc->close_how, qc->close_code);
		return false;
	}
	ngtcp2_path_storage_zero(&ps);
	qc->round++;
	for (int guard = 0; guard < 100000; guard++) {
		ngtcp2_vec v[16];
		size_t nv = 0, covered = 0;
		int64_t sid = -1;
		uint32_t fl = NGTCP2_WRITE_STREAM_FLAG_MORE;
		ngtcp2_ssize wlen = -1, n;

		if (s == NULL && qc->handshaken)
			s = rc__qc_pick_write(qc);
		if (s != NULL) {
			sid = s->id;
			for (rc__qchunk *c = s->snext; c != NULL && nv < 16; c = c->next, nv++) {
				size_t skip = c == s->snext ? s->snext_pos : 0;
				v[nv].base = c->p + skip;
				v[nv].len = c->len - skip;
				covered += v[nv].len;
			}
			if (s->fin_want && covered == s->unsent)
				fl |= NGTCP2_WRITE_STREAM_FLAG_FIN;
		}
		n = ngtcp2_conn_writev_stream(qc->conn, &ps.path, &pi, tx + blen, pmax, &wlen, fl,
		                              sid, v, nv, ts);
		if (n == NGTCP2_ERR_WRITE_MORE && s != NULL) {
			rc__qstrm_sent(s, (size_t)wlen);
			if ((fl & NGTCP2_WRITE_STREAM_FLAG_FIN) && s->unsent == 0)
				s->fin_sent = true;
			s = NULL;
			continue;
		}
		if (s != NULL && (n == NGTCP2_ERR_STREAM_DATA_BLOCKED || n == NGTCP2_ERR_STREAM_SHUT_WR ||
		                  n == NGTCP2_ERR_STREAM_NOT_FOUND)) {
			s->round = qc->round;
			s = NULL;
			continue;
		}
		if (n < 0) {
			if (blen > 0)
				rc__qc_send_gso(qc, tx, blen, seg);
			rc__qc_fail(qc, RC__NG_CLOSE_LIBERR, n);
			return false;
		}
		if (s != NULL && wlen >= 0) {
			rc__qstrm_sent(s, (size_t)wlen);
			if ((fl & NGTCP2_WRITE_STREAM_FLAG_FIN) && s->unsent == 0)
				s->fin_sent = true;
		}
		s = NULL;
		if (n == 0)
			break;
		if (blen > 0 && (size_t)n > seg) { /* longer than the batch's: the batch goes first */
			rc__qc_send_gso(qc, tx, blen, seg);
			memmove(tx, tx + blen, (size_t)n);
			blen = 0;
		}
		if (blen == 0) {
			seg = (size_t)n;
			nseg = 0;
		}
		blen += (size_t)n;
		turn += (size_t)n;
		nseg++;
		if ((size_t)n < seg || blen + pmax > RC__Q_GSO_BYTES || nseg == RC__Q_GSO_SEGS ||
		    !qc->ep->gso) {
			rc__qc_send_gso(qc, tx, blen, seg);
			blen = 0;
			if (turn >= RC__Q_TX_TURN)
				return true;
		}
	}
	if (blen > 0)
		rc__qc_send_gso(qc, tx, blen, seg);
	return false;
}

/* ---- the endpoint's thread ---------------------------------------------------------------- */

/* The connection a packet is for (server): by its destination connection ID. */
static rc__qconn *rc__qep_find(rc__qep *ep, const uint8_t *pkt, size_t len)
{
	ngtcp2_version_cid vc;

	if (ngtcp2_pkt_decode_version_cid(&vc, pkt, len, RC__Q_SCIDLEN) != 0)
		return NULL;
	for (rc__qconn *qc = ep->conns; qc != NULL; qc = qc->next)
		for (size_t i = 0; i < qc->ncids; i++)
			if (qc->cids[i].datalen == vc.dcidlen &&
			    memcmp(qc->cids[i].data, vc.dcid, vc.dcidlen) == 0)
				return qc;
	return NULL;
}

/* A server's new connection from an Initial packet, or NULL (dropped). */
static rc__qconn *rc__qep_accept(rc__qep *ep, const uint8_t *pkt, size_t len,
                                 const struct sockaddr_storage *from, socklen_t fromlen)
{
	ngtcp2_pkt_hd hd;
	rc__qconn *qc;
	ngtcp2_cid scid;
	ngtcp2_callbacks cb;
	ngtcp2_settings st;
	ngtcp2_transport_params tp;
	ngtcp2_path path;

	if (ngtcp2_accept(&hd, pkt, len) != 0)
		return NULL;
	if (ep->nconns >= RC__Q_MAX_CONNS) {
		rc__q_count(ep, &ep->st.refused);
		return NULL;
	}
	if ((qc = calloc(1, sizeof(*qc))) == NULL)
		return NULL;
	qc->ep = ep;
	memcpy(&qc->peer, from, fromlen);
	qc->peerlen = fromlen;
	qc->locallen = sizeof(qc->local);
	(void)getsockname(ep->ufd, (struct sockaddr *)&qc->local, &qc->locallen);
	scid.datalen = RC__Q_SCIDLEN;
	(void)gnutls_rnd(GNUTLS_RND_RANDOM, scid.data, scid.datalen);
	rc__q_callbacks(&cb, true);
	rc__q_settings(ep, from, &st, &tp);
	rc__ng_set_original_dcid(&tp, &hd.dcid);
	path.local.addr = (ngtcp2_sockaddr *)&qc->local;
	path.local.addrlen = qc->locallen;
	path.remote.addr = (ngtcp2_sockaddr *)&qc->peer;
	path.remote.addrlen = qc->peerlen;
	path.user_data = NULL;
	qc->cids[qc->ncids++] = hd.dcid;
	qc->cids[qc->ncids++] = scid;
	if (ngtcp2_conn_server_new(&qc->conn, &hd.scid, &scid, &path, hd.version, &cb, &st, &tp,
	                           NULL, qc) != 0 ||
	    rc__q_session(qc) != 0) {
		rc__qc_free(qc);
		return NULL;
	}
	qc->next = ep->conns;
	ep->conns = qc;
	ep->nconns++;
	return qc;
}

/* A library error from reading a packet: what it means for qc. */
static void rc__qc_read_error(rc__qconn *qc, int rv)
{
	rc__qep *ep = qc->ep;

	if (rv == NGTCP2_ERR_DRAINING || rv == NGTCP2_ERR_CLOSING || rv == NGTCP2_ERR_DROP_CONN) {
		qc->dead = true; /* the peer closed it (or we did) */
		return;
	}
	if (rv == NGTCP2_ERR_STREAM_LIMIT)
		rc__q_count(ep, &ep->st.stream_limit);
	if (!qc->handshaken) {
		int tls = ngtcp2_conn_get_tls_error(qc->conn);
		unsigned vs = 0;
		rc__q_count(ep, &ep->st.handshake_fails);
		pthread_mutex_lock(&ep->mu);
		if (!ep->server && ep->state == 0) {
			gnutls_datum_t out = {NULL, 0};
			if (gnutls_session_get_verify_cert_status(qc->ses) != 0 &&
			    (vs = gnutls_session_get_verify_cert_status(qc->ses)) != 0 &&
			    gnutls_certificate_verification_status_print(vs, GNUTLS_CRT_X509, &out, 0) == 0) {
				snprintf(ep->why, sizeof(ep->why), "QUIC TLS: %.*s", (int)out.size,
				         (const char *)out.data);
				gnutls_free(out.data);
			} else {
				snprintf(ep->why, sizeof(ep->why), "QUIC handshake: %s%s%s",
				         ngtcp2_strerror(rv), tls ? ": " : "",
				         tls ? gnutls_strerror(tls) : "");
			}
			ep->state = -1;
			pthread_cond_broadcast(&ep->cv);
		}
		pthread_mutex_unlock(&ep->mu);
	}
	if (rv == NGTCP2_ERR_CRYPTO && ngtcp2_conn_get_tls_alert(qc->conn) != 0) /* RFC 9001 4.8 */
		rc__qc_fail(qc, RC__NG_CLOSE_TLS, ngtcp2_conn_get_tls_alert(qc->conn));
	else
		rc__qc_fail(qc, RC__NG_CLOSE_LIBERR, rv);
}

/* One datagram (a QUIC packet, or several coalesced) from `from`: to its connection. */
static void rc__qep_packet(rc__qep *ep, uint8_t *pkt, size_t n, struct sockaddr_storage *from,
                           socklen_t fl)
{
	rc__qconn *qc;
	ngtcp2_path path;
	ngtcp2_pkt_info pi = {0};
	int rv;

	if (ep->server) {
		if ((qc = rc__qep_find(ep, pkt, n)) == NULL &&
		    (qc = rc__qep_accept(ep, pkt, n, from, fl)) == NULL)
			return;
	} else if ((qc = ep->conns) == NULL) {
		return;
	}
	if (qc->dead)
		return;
	path.local.addr = (ngtcp2_sockaddr *)&qc->local;
	path.local.addrlen = qc->locallen;
	path.remote.addr = (ngtcp2_sockaddr *)from;
	path.remote.addrlen = fl;
	path.user_data = NULL;
	rv = ngtcp2_conn_read_pkt(qc->conn, &path, &pi, pkt, n, rc__q_now());
	if (rv != 0)
		rc__qc_read_error(qc, rv);
}

/* Read the datagrams waiting on the endpoint's socket, up to RC__Q_RX_TURN bytes: then the
 * loop goes round (acknowledgements, other streams' data, the pipes) before it reads more, so
 * a burst of one big message does not hold up the rest. With receive offload (UDP_GRO) one
 * read may bring several datagrams of one sender, joined: each piece of the size the control
 * message gives (the last maybe shorter) is a datagram. */
static void rc__qep_read(rc__qep *ep)
{
	for (size_t got = 0; got < RC__Q_RX_TURN;) {
		struct sockaddr_storage from;
		struct iovec iov = {ep->rx, sizeof(ep->rx)};
		union {
			char b[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} ctl;
		struct msghdr mh = {.msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov,
		                    .msg_iovlen = 1, .msg_control = ctl.b,
		                    .msg_controllen = sizeof(ctl.b)};
		ssize_t n = recvmsg(ep->ufd, &mh, MSG_DONTWAIT);
		size_t seg;

		if (n < 0)
			return;
		got += (size_t)n;
		seg = (size_t)n;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO) {
				int v;
				memcpy(&v, CMSG_DATA(cm), sizeof(v));
				if (v > 0)
					seg = (size_t)v;
			}
		for (size_t off = 0; off < (size_t)n; off += seg)
			rc__qep_packet(ep, ep->rx + off, (size_t)n - off < seg ? (size_t)n - off : seg,
			               &from, mh.msg_namelen);
	}
}

/* Run qc's timers that are due; the next deadline (ns, UINT64_MAX: none). */
static uint64_t rc__qc_expire(rc__qconn *qc, uint64_t now)
{
	uint64_t at;
	int rv;

	if (qc->dead)
		return UINT64_MAX;
	at = ngtcp2_conn_get_expiry(qc->conn);
	if (at > now)
		return at;
	rv = ngtcp2_conn_handle_expiry(qc->conn, now);
	if (rv == NGTCP2_ERR_IDLE_CLOSE) {
		rc__q_count(qc->ep, &qc->ep->st.idle_closed);
		qc->dead = true;
		return UINT64_MAX;
	}
	if (rv != 0) {
		if (rv == NGTCP2_ERR_HANDSHAKE_TIMEOUT && !qc->handshaken)
			rc__qc_read_error(qc, rv);
		else
			rc__qc_fail(qc, RC__NG_CLOSE_LIBERR, rv);
		return UINT64_MAX;
	}
	return 0; /* flushed next, then asked again */
}

/* Free what ended in this round: dead connections, dead pipes. */
static void rc__qep_reap(rc__qep *ep)
{
	for (rc__qconn **pq = &ep->conns; *pq != NULL;) {
		rc__qconn *qc = *pq;
		if (qc->dead) {
			*pq = qc->next;
			ep->nconns--;
			if (qc->handshaken) {
				pthread_mutex_lock(&ep->mu);
				ep->st.open_conns--;
				pthread_mutex_unlock(&ep->mu);
			}
			rc__qc_free(qc);
			continue;
		}
		for (rc__qpipe **pp = &qc->pipes; *pp != NULL;) {
			rc__qpipe *p = *pp;
			if (p->dead) {
				*pp = p->next;
				if (qc->cpipe == p)
					qc->cpipe = NULL;
				rc__qpipe_free(p);
			} else {
				pp = &p->next;
			}
		}
		for (rc__qstrm **ps = &qc->streams; *ps != NULL;) {
			rc__qstrm *s = *ps;
			if (s->gone) {
				*ps = s->next;
				rc__qstrm_free(s);
			} else {
				ps = &s->next;
			}
		}
		pq = &qc->next;
	}
}

static void *rc__qep_run(void *arg)
{
	rc__qep *ep = arg;
	struct epoll_event evs[64];
	size_t told = 0;

	while (!atomic_load(&ep->stop)) {
		uint64_t now = rc__q_now(), next = UINT64_MAX;
		int tmo = -1, n;
		bool more = false;

		for (rc__qconn *qc = ep->conns; qc != NULL; qc = qc->next) {
			for (rc__qpipe *p = qc->pipes; p != NULL; p = p->next) {
				/* acknowledgments made room; or the runtime was given messages this
				 * turn and has answered already (another core, or it ran when rung):
				 * the answers leave with the acknowledgment due, in one packet */
				if (p->dead || !(p->kick || (qc->rang && atomic_load_explicit(
				                                 &p->box->from_seen, memory_order_relaxed) > 0)))
					continue;
				rc__qpipe_take(p);
				more |= p->kick;
			}
			qc->rang = false;
			(void)rc__qc_expire(qc, now);
			more |= rc__qc_flush(qc);
		}
		rc__qep_reap(ep);
		if (ep->held != told) {
			pthread_mutex_lock(&ep->mu);
			ep->st.queued = told = ep->held;
			pthread_mutex_unlock(&ep->mu);
		}

		for (rc__qconn *qc = ep->conns; qc != NULL; qc = qc->next) {
			uint64_t at = ngtcp2_conn_get_expiry(qc->conn);
			if (!qc->dead && at < next)
				next = at;
		}
		if (next != UINT64_MAX)
			tmo = next <= now ? 0 : (int)((next - now + 999999) / 1000000);
		if (more)
			tmo = 0;
		n = epoll_wait(ep->epfd, evs, 64, tmo);
		ep->turn++;
		for (int i = 0; i < n; i++) {
			int *tag = evs[i].data.ptr;
			if (*tag == RC__QEV_UDP) {
				rc__qep_read(ep);
			} else if (*tag == RC__QEV_WAKE) {
				uint64_t v;
				(void)!read(ep->wfd, &v, sizeof(v));
			} else {
				rc__qpipe *p = (rc__qpipe *)tag;
				if (p->dead)
					continue;
				rc__qpipe_read(ep, p, evs[i].events);
			}
		}
		rc__qep_ring_due(ep);
	}
	for (rc__qconn *qc = ep->conns; qc != NULL; qc = qc->next)
		if (!qc->dead)
			rc__qc_fail(qc, RC__NG_CLOSE_APP, RC_QUIC_NO_ERROR);
	return NULL;
}

/* ---- endpoints ---------------------------------------------------------------------------- */

void rc__qep_free(rc__qep *ep)
{
	if (ep->started) {
		uint64_t one = 1;
		atomic_store(&ep->stop, true);
		(void)!write(ep->wfd, &one, sizeof(one));
		pthread_join(ep->thr, NULL);
	}
	while (ep->conns != NULL) {
		rc__qconn *qc = ep->conns;
		ep->conns = qc->next;
		rc__qc_free(qc);
	}
	while (ep->acq != NULL) {
		rc__qacc *a = ep->acq;
		ep->acq = a->next;
		close(a->fd);
		rc__qbox_release(a->box);
		rc__qpeer_release(a->who);
		free(a);
	}
	rc__qpeer_release(ep->who);
	if (ep->cred)
		gnutls_certificate_free_credentials(ep->cred);
	for (int *fd = &ep->ufd; fd <= &ep->afd; fd++)
		if (*fd >= 0)
			close(*fd);
	pthread_mutex_destroy(&ep->mu);
	pthread_cond_destroy(&ep->cv);
	free(ep);
}

/* A new endpoint on UDP socket ufd (taken), not running yet. */
rc__qep *rc__qep_new(int ufd, bool server, size_t max_record)
{
	rc__qep *ep = calloc(1, sizeof(*ep));
	struct epoll_event ev = {.events = EPOLLIN};
	unsigned idle = atomic_load(&rc__q_idle_ms);

	if (ep == NULL) {
		close(ufd);
		return NULL;
	}
	ep->ufd = ufd;
	ep->wfd = ep->epfd = ep->afd = -1;
	ep->server = server;
	ep->max_record = max_record;
	ep->ev_udp = RC__QEV_UDP;
	ep->ev_wake = RC__QEV_WAKE;
	ep->idle_ns = (uint64_t)(idle ? idle : RC__Q_IDLE_MS) * NGTCP2_MILLISECONDS;
	pthread_mutex_init(&ep->mu, NULL);
	pthread_cond_init(&ep->cv, NULL);
	(void)fcntl(ufd, F_SETFL, O_NONBLOCK);
	(void)fcntl(ufd, F_SETFD, FD_CLOEXEC);
	for (int i = 0, sz = RC__Q_SOCKBUF; i < 2; i++) { /* bursts of a window's packets */
		int force = i ? SO_SNDBUFFORCE : SO_RCVBUFFORCE, opt = i ? SO_SNDBUF : SO_RCVBUF;
		if (setsockopt(ufd, SOL_SOCKET, force, &sz, sizeof(sz)) != 0)
			(void)setsockopt(ufd, SOL_SOCKET, opt, &sz, sizeof(sz));
	}
	{
		int one = 1;
		(void)setsockopt(ufd, SOL_UDP, UDP_GRO, &one, sizeof(one));
		ep->gso = true; /* until a send says otherwise (rc__qc_send_gso) */
	}
	if ((ep->wfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    (ep->afd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    (ep->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		goto fail;
	ev.data.ptr = &ep->ev_udp;
	if (epoll_ctl(ep->epfd, EPOLL_CTL_ADD, ufd, &ev) != 0)
		goto fail;
	ev.data.ptr = &ep->ev_wake;
	if (epoll_ctl(ep->epfd, EPOLL_CTL_ADD, ep->wfd, &ev) != 0)
		goto fail;
	if (gnutls_certificate_allocate_credentials(&ep->cred) != 0) {
		ep->cred = NULL;
		goto fail;
	}
	return ep;
fail:
	rc__qep_free(ep);
	return NULL;
}

/* Load the endpoint's certificates from the TLS context's files: RC_OK or RC_INVAL (detail
 * set). */
rc_status rc__qep_certs(rc__qep *ep, const rc__tls_files *f)
{
	int rv = 0;
	const char *what = "";

	if (f->cert_file != NULL) {
		what = f->cert_file;
		rv = gnutls_certificate_set_x509_key_file(ep->cred, f->cert_file,
		                                          f->key_file ? f->key_file : f->cert_file,
		                                          GNUTLS_X509_FMT_PEM);
	}
	if (rv >= 0 && f->ca_file != NULL) {
		what = f->ca_file;
		rv = gnutls_certificate_set_x509_trust_file(ep->cred, f->ca_file, GNUTLS_X509_FMT_PEM);
	}
	if (rv >= 0 && f->ca_dir != NULL) {
		what = f->ca_dir;
		rv = gnutls_certificate_set_x509_trust_dir(ep->cred, f->ca_dir, GNUTLS_X509_FMT_PEM);
	}
	if (rv >= 0 && !ep->server && f->ca_file == NULL && f->ca_dir == NULL) {
		what = "the system's CAs";
		rv = gnutls_certificate_set_x509_system_trust(ep->cred);
	}
	if (rv < 0) {
		rc__tp_set_detail("QUIC TLS: %s: %s", what, gnutls_strerror(rv));
		return RC_INVAL;
	}
	return RC_OK;
}

rc_status rc__qep_start(rc__qep *ep)
{
	if (pthread_create(&ep->thr, NULL, rc__qep_run, ep) != 0)
		return RC_NOMEM;
	ep->started = true;
	return RC_OK;
}

/*
 * UDP: one datagram is one message. Client sockets are connected (the kernel then drops
 * datagrams from anyone but the server); a server socket answers each sender with sendto.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transports/transport.h"


/* The largest packet UDP_GRO hands over: one IP packet's payload. */
#define RC__GRO_MAX 65536
/* The most bytes of pieces that may wait (a listener's receivers falling behind). */
#define RC__PEND_MAX (4u << 20)

/*
 * Receive offload (UDP_GRO): the kernel may hand over several datagrams of one sender joined
 * in one receive (a GSO send, or datagrams a receive path coalesced), cut at a size a control
 * message gives (the last piece may be shorter). The receive paths cut them apart here; the
 * pieces not handed out yet wait in `pend`, as runs of a rc__udp_run header and its bytes,
 * and leave before the socket is read again (ahead says so to loops that wait for the
 * descriptor). A listener's receivers may be several threads: `mu` guards pend.
 */
typedef struct rc__udp_run {
	uint32_t seg, len, off; /* piece size, the run's bytes, how many were handed out */
	uint32_t pad;
	rc_peer from; /* the sender */
} rc__udp_run;

typedef struct rc__udp {
	rc_tp tp;
	atomic_bool no_gso;  /* segmentation offload refused once: send one by one */
	bool gro;            /* UDP_GRO on (rc__udp_gro_on) */
	bool can_gro;        /* it may be turned on, and has not been asked yet */
	atomic_bool pending; /* pieces wait in pend (ahead reads it without mu) */
	size_t maxlen;  /* the longest datagram accepted */
	size_t bufsize; /* buf's size: maxlen, or RC__GRO_MAX under gro */
	/* (the fields above, one cache line: what a call's send and receive read) */
	pthread_mutex_t mu;  /* pend, pend_head, pend_used, pend_cap */
	unsigned char *pend;
	size_t pend_head, pend_used, pend_cap;
	_Alignas(64) unsigned char buf[]; /* receive buffer (recv: one reader at a time); on a
	                                     line's start, as the whole (a reply: one line) */
} rc__udp;

/* Append the pieces of data[0..len) after the first (pieces of seg bytes, the last possibly
 * shorter), sent from ss, to u's pending runs (under u->mu). Pieces over maxlen are dropped;
 * when memory is short, or RC__PEND_MAX bytes already wait, the pieces are lost, as datagrams
 * dropped on the way would be (the caller retransmits). */
static void rc__udp_pend_add(rc__udp *u, const unsigned char *data, size_t len, size_t seg,
                             const struct sockaddr_storage *ss, socklen_t sslen)
{
	size_t need, rest = len - seg;
	rc__udp_run run = {(uint32_t)seg, (uint32_t)rest, 0, 0, {.len = sslen}};

	if (seg > u->maxlen || rest == 0)
		return;
	if (sslen > 0)
		memcpy(&run.from.ss, ss, sslen);
	need = sizeof(run) + ((rest + 15) & ~(size_t)15);
	if (u->pend_cap - u->pend_used < need && u->pend_head > 0) {
		/* what was taken leaves room at the front: the runs left move there */
		memmove(u->pend, u->pend + u->pend_head, u->pend_used - u->pend_head);
		u->pend_used -= u->pend_head;
		u->pend_head = 0;
	}
	if (u->pend_cap - u->pend_used < need) {
		size_t cap = u->pend_cap ? u->pend_cap : 65536;
		unsigned char *p;

		if (u->pend_used + need > RC__PEND_MAX)
			return; /* receivers far behind: lost, as on a full socket buffer */
		while (cap - u->pend_used < need)
			cap *= 2;
		if ((p = realloc(u->pend, cap)) == NULL)
			return;
		u->pend = p;
		u->pend_cap = cap;
	}
	memcpy(u->pend + u->pend_used, &run, sizeof(run));
	memcpy(u->pend + u->pend_used + sizeof(run), data + seg, rest);
	u->pend_used += need;
	atomic_store_explicit(&u->pending, true, memory_order_relaxed);
}

/* Copy the next pending piece into buf[0..cap) (under u->mu): true with *len and *from
 * set, false when none waits. A piece over cap is dropped. */
static bool rc__udp_pend_take(rc__udp *u, void *buf, size_t cap, size_t *len, rc_peer *from)
{
	while (u->pend_head != u->pend_used) {
		rc__udp_run run;
		size_t n;
		unsigned char *at;

		memcpy(&run, u->pend + u->pend_head, sizeof(run));
		at = u->pend + u->pend_head + sizeof(run) + run.off;
		n = run.len - run.off < run.seg ? run.len - run.off : run.seg;
		run.off += (uint32_t)n;
		if (run.off < run.len) {
			memcpy(u->pend + u->pend_head, &run, sizeof(run));
		} else {
			u->pend_head += sizeof(run) + ((run.len + 15) & ~(size_t)15);
			if (u->pend_head == u->pend_used) {
				u->pend_head = u->pend_used = 0;
				atomic_store_explicit(&u->pending, false, memory_order_relaxed);
			}
		}
		if (n > cap)
			continue;
		memcpy(buf, at, n); /* (under mu: an add may move the runs) */
		*len = n;
		if (from != NULL) {
			from->len = run.from.len;
			memcpy(&from->ss, &run.from.ss, run.from.len);
		}
		return true;
	}
	return false;
}

/* Room for the control message a receive with receive offload gets (UDP_GRO: an int). */
typedef union rc__udp_grocmsg {
	char b[CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
} rc__udp_grocmsg;

/* The piece size of a joined packet from msg's control messages, or 0. */
static size_t rc__udp_gro_seg(const struct msghdr *msg)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR((struct msghdr *)msg); cm != NULL;
	     cm = CMSG_NXTHDR((struct msghdr *)msg, cm))
		if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO) {
			int v;
			memcpy(&v, CMSG_DATA(cm), sizeof(v));
			return v > 0 ? (size_t)v : 0;
		}
	return 0;
}

/* Cut a joined packet received in buf[0..*len) with control messages in mh: the first piece
 * stays, the rest pend. */
static void rc__udp_gro_cut(rc__udp *u, unsigned char *buf, size_t *len,
                            const struct msghdr *mh)
{
	size_t seg = rc__udp_gro_seg(mh);

	if (seg > 0 && *len > seg) {
		pthread_mutex_lock(&u->mu);
		rc__udp_pend_add(u, buf, *len, seg, mh->msg_name, mh->msg_name ? mh->msg_namelen : 0);
		pthread_mutex_unlock(&u->mu);
		*len = seg;
	}
}

/* A gro socket's receive of one datagram into buf[0..cap): a pending piece, else one
 * recvmsg, cut when joined. cap must hold a joined packet (RC__GRO_MAX), or the part of one
 * beyond it is lost; a listener's receiver passes `from` (the pieces pend with it). Returns
 * as recv_into. (The lone call's path: kept lean, inlined.) */
static inline __attribute__((always_inline)) rc_status
rc__udp_gro_recv(rc__udp *u, unsigned char *buf, size_t cap, size_t *len, rc_peer *from,
                 unsigned tflags)
{
	rc__udp_grocmsg ctl;
	struct iovec iov = {buf, cap};
	struct msghdr mh;
	size_t n;
	ssize_t r;

	if (atomic_load_explicit(&u->pending, memory_order_relaxed)) {
		bool took;

		pthread_mutex_lock(&u->mu);
		took = rc__udp_pend_take(u, buf, cap, len, from);
		pthread_mutex_unlock(&u->mu);
		if (took)
			return RC_OK;
	}
	mh.msg_name = from != NULL ? &from->ss : NULL;
	mh.msg_namelen = from != NULL ? sizeof(from->ss) : 0;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = ctl.b;
	mh.msg_controllen = sizeof(ctl.b);
	mh.msg_flags = 0;
	r = rc__recvmsg(u->tp.fd, &mh, (int)(tflags & RC_TPF_DONTWAIT));
	if (r < 0)
		return errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK ? RC_AGAIN
		                                                                  : RC_CANTRECV;
	if (from != NULL)
		from->len = mh.msg_namelen;
	if (mh.msg_flags & MSG_TRUNC)
		return RC_AGAIN; /* over any message we accept: dropped */
	n = (size_t)r;
	if (mh.msg_controllen > 0) /* a control message: perhaps joined */
		rc__udp_gro_cut(u, buf, &n, &mh);
	if (n > u->maxlen)
		return RC_AGAIN; /* over the cap: dropped */
	*len = n;
	return RC_OK;
}

/* A send that failed with errno: tried again after a signal, else its status. Out of the
 * send's way (its registers stay few). */
static __attribute__((noinline, cold)) rc_status
rc__udp_send_failed(rc_tp *tp, unsigned char *msg, size_t len, const rc_peer *to, int flags)
{
	while (errno == EINTR)
		if (rc__sendto(tp->fd, msg, len, flags, to ? (const struct sockaddr *)&to->ss : NULL,
		               to ? to->len : 0) >= 0)
			return RC_OK;
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return RC_AGAIN;
	if (errno == EMSGSIZE)
		return RC_MSGTOOLARGE;
	return RC_CANTSEND;
}

static rc_status rc__udp_send(rc_tp *tp, unsigned char *msg, size_t len, const rc_peer *to,
                              unsigned tflags)
{
	int flags = (int)(tflags & RC_TPF_DONTWAIT) | MSG_NOSIGNAL;

	if (len > tp->max_msg)
		return RC_MSGTOOLARGE;
	if (rc__sendto(tp->fd, msg, len, flags, to ? (const struct sockaddr *)&to->ss : NULL,
	               to ? to->len : 0) >= 0)
		return RC_OK;
	return rc__udp_send_failed(tp, msg, len, to, flags);
}

static __attribute__((noinline)) rc_status
rc__udp_gro_recv_into(rc_tp *tp, void *buf, size_t cap, size_t *len, rc_peer *from,
                      unsigned tflags);

/* recv_into's body, inlined in recv too (a lone call's receive). */
static inline __attribute__((always_inline)) rc_status
rc__udp_recv_one(rc_tp *tp, void *buf, size_t cap, size_t *len, rc_peer *from, unsigned tflags)
{
	int flags = (int)(tflags & RC_TPF_DONTWAIT);
	ssize_t n;

	if (((rc__udp *)tp)->gro)
		return rc__udp_gro_recv_into(tp, buf, cap, len, from, tflags);
	for (;;) {
		if (from != NULL) {
			from->len = sizeof(from->ss);
			n = rc__recvfrom(tp->fd, buf, cap, flags | MSG_TRUNC,
			                 (struct sockaddr *)&from->ss, &from->len);
		} else {
			n = rc__recvfrom(tp->fd, buf, cap, flags | MSG_TRUNC, NULL, NULL);
		}
		if (n >= 0)
			break;
		if (errno == EINTR)
			return RC_AGAIN; /* let the caller look at its deadline and stop flag */
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return RC_AGAIN;
		if (errno == ECONNREFUSED)
			return RC_CANTRECV; /* ICMP port unreachable on a connected socket */
		return RC_CANTRECV;
	}
	if ((size_t)n > cap)
		return RC_AGAIN; /* truncated datagram: over any message we accept; drop it */
	*len = (size_t)n;
	return RC_OK;
}

static rc_status rc__udp_recv_into(rc_tp *tp, void *buf, size_t cap, size_t *len,
                                   rc_peer *from, unsigned tflags)
{
	return rc__udp_recv_one(tp, buf, cap, len, from, tflags);
}

/* Point message header m at one buffer of len bytes and a peer address of namelen bytes at
 * name (NULL: the connected peer). */
static inline void rc__udp_mmsg(struct mmsghdr *m, struct iovec *iov, void *buf, size_t len,
                                void *name, socklen_t namelen)
{
	iov->iov_base = buf;
	iov->iov_len = len;
	memset(&m->msg_hdr, 0, sizeof(m->msg_hdr));
	m->msg_hdr.msg_name = name;
	m->msg_hdr.msg_namelen = name != NULL ? namelen : 0;
	m->msg_hdr.msg_iov = iov;
	m->msg_hdr.msg_iovlen = 1;
}

/*
 * Turn receive offload (UDP_GRO) on for u, once; whether it is on. Only while no other
 * thread receives on u: a receive already in the kernel without a control buffer could be
 * handed a joined packet it cannot cut. A listener needs receivers' buffers that hold a joined
 * packet (max_record of RC__GRO_MAX or more: the server's datagram buffers are then that big).
 */
static bool rc__udp_gro_on(rc__udp *u)
{
	int one = 1;

	if (!u->gro && u->can_gro) {
		u->can_gro = false; /* asked once */
		u->gro = setsockopt(u->tp.fd, SOL_UDP, UDP_GRO, &one, sizeof(one)) == 0;
	}
	return u->gro;
}

/* Hand pending pieces out into v[k..n) (copies); returns the new k. */
static unsigned rc__udp_pend_fill(rc__udp *u, rc_tp_dgram *v, unsigned k, unsigned n)
{
	if (k >= n || !atomic_load_explicit(&u->pending, memory_order_relaxed))
		return k;
	pthread_mutex_lock(&u->mu);
	while (k < n && rc__udp_pend_take(u, v[k].buf, v[k].cap, &v[k].len, &v[k].peer))
		k++;
	pthread_mutex_unlock(&u->mu);
	return k;
}

/*
 * Cut joined packet v[k] (len bytes, pieces of seg; received last, nothing pending) straight
 * into the free slots v[k+1..n): one copy a piece, not two through pend. Its first piece
 * stays in v[k]; the pieces no slot takes (or a slot too small for) pend. Returns how many
 * slots hold a datagram now (k + 1 and the pieces placed).
 */
static unsigned rc__udp_gro_fill(rc__udp *u, rc_tp_dgram *v, unsigned k, unsigned n,
                                 size_t len, size_t seg, const struct msghdr *mh)
{
	size_t off = seg;
	unsigned j = k + 1;

	if (seg <= u->maxlen)
		for (; j < n && off < len && v[j].cap >= seg; j++, off += seg) {
			size_t piece = len - off < seg ? len - off : seg;

			memcpy(v[j].buf, v[k].buf + off, piece);
			v[j].len = piece;
			v[j].peer.len = v[k].peer.len;
			memcpy(&v[j].peer.ss, &v[k].peer.ss, v[k].peer.len);
		}
	if (off < len) { /* the rest pend (rc__udp_pend_add keeps all but its first piece) */
		pthread_mutex_lock(&u->mu);
		rc__udp_pend_add(u, v[k].buf + off - seg, len - off + seg, seg, mh->msg_name,
		                 mh->msg_name ? mh->msg_namelen : 0);
		pthread_mutex_unlock(&u->mu);
	}
	v[k].len = seg;
	return j;
}

/* The vt's recv_batch: recvmmsg of up to n datagrams, over-long ones dropped; under gro,
 * pending pieces first, and joined packets cut (the last one's pieces fill the slots left,
 * rc__udp_gro_fill; an earlier one's pend, then fill the slots left). */
static rc_status rc__udp_recv_batch(rc_tp *tp, rc_tp_dgram *v, unsigned n, unsigned *got,
                                    unsigned flags)
{
	rc__udp *u = (rc__udp *)tp;
	struct mmsghdr m[RC_TP_BATCH];
	struct iovec iov[RC_TP_BATCH];
	rc__udp_grocmsg ctl[RC_TP_BATCH];
	unsigned k = 0, k0 = 0;
	int r;

	*got = 0;
	if (n > RC_TP_BATCH)
		n = RC_TP_BATCH;
	if (!u->gro && !tp->listener)
		(void)rc__udp_gro_on(u); /* a client socket: its receivers take turns */
	if (u->gro && (k0 = rc__udp_pend_fill(u, v, 0, n)) == n) {
		*got = n;
		return RC_OK;
	}
	for (unsigned i = k0; i < n; i++) {
		rc__udp_mmsg(&m[i], &iov[i], v[i].buf, v[i].cap, &v[i].peer.ss, sizeof(v[i].peer.ss));
		if (u->gro) {
			m[i].msg_hdr.msg_control = ctl[i].b;
			m[i].msg_hdr.msg_controllen = sizeof(ctl[i].b);
		}
	}
	if ((flags & RC_TPF_DONTWAIT) || k0 > 0) {
		do
			r = recvmmsg(tp->fd, m + k0, n - k0, MSG_DONTWAIT, NULL);
		while (r < 0 && errno == EINTR);
	} else { /* (a signal: RC_AGAIN, the caller looks at its stop flag) */
		r = recvmmsg(tp->fd, m, n, MSG_WAITFORONE, NULL);
	}
	if (r < 0) {
		*got = k0;
		if (k0 > 0)
			return RC_OK;
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? RC_AGAIN
		                                                                  : RC_CANTRECV;
	}
	k = k0;
	for (unsigned i = k0; i < k0 + (unsigned)r; i++) {
		size_t len = m[i].msg_len, seg = 0; /* seg > 0: joined, cut into the slots left */

		if (m[i].msg_hdr.msg_flags & MSG_TRUNC)
			continue; /* over any message we accept: dropped */
		if (u->gro && m[i].msg_hdr.msg_controllen > 0 &&
		    (seg = rc__udp_gro_seg(&m[i].msg_hdr)) > 0 && len > seg) {
			if (i + 1 < k0 + (unsigned)r ||
			    atomic_load_explicit(&u->pending, memory_order_relaxed)) {
				/* more after it, or pieces already wait: its pieces pend, in order */
				rc__udp_gro_cut(u, v[i].buf, &len, &m[i].msg_hdr);
				seg = 0;
			} else {
				len = seg; /* the last: rc__udp_gro_fill below */
			}
		} else {
			seg = 0;
		}
		if (len > u->maxlen)
			continue;
		if (k != i) { /* move it down over a dropped one: swap the buffers, copy the sender */
			unsigned char *b = v[k].buf;
			size_t cap = v[k].cap;
			v[k].buf = v[i].buf;
			v[k].cap = v[i].cap;
			v[i].buf = b;
			v[i].cap = cap;
			memcpy(&v[k].peer.ss, &v[i].peer.ss, m[i].msg_hdr.msg_namelen);
		}
		v[k].len = len;
		v[k].peer.len = m[i].msg_hdr.msg_namelen;
		if (seg > 0) /* (the last message: nothing after it to keep) */
			k = rc__udp_gro_fill(u, v, k, n, m[i].msg_len, seg, &m[i].msg_hdr);
		else
			k++;
	}
	if (u->gro)
		k = rc__udp_pend_fill(u, v, k, n);
	*got = k;
	return k > 0 ? RC_OK : RC_AGAIN;
}

/* The vt's ahead: pieces of a joined packet wait to be handed out. */
static bool rc__udp_ahead(rc_tp *tp)
{
	rc__udp *u = (rc__udp *)tp;

	return atomic_load_explicit(&u->pending, memory_order_relaxed);
}

/*
 * Generic segmentation offload (UDP_SEGMENT, Linux 4.18): datagrams of one batch that go to
 * the same peer with the same length (the last of a run may be shorter) leave as one send,
 * which the stack carries as one packet and cuts into datagrams at the last moment (on
 * loopback: at the receiving socket). Up to RC__GSO_SEGS of them and RC__GSO_BYTES in all
 * (one IP packet's worth). A run the kernel refuses goes again one by one (rc__udp_send_some).
 */
#define RC__GSO_SEGS 64
#define RC__GSO_BYTES 65000

static bool rc__udp_same_peer(const rc_tp_dgram *a, const rc_tp_dgram *b)
{
	return a->peer.len == b->peer.len &&
	       (a->peer.len == 0 || memcmp(&a->peer.ss, &b->peer.ss, a->peer.len) == 0);
}

/* send_batch's work: sendmmsg, runs to one peer as GSO sends when gso, resumed after a
 * partial batch; a datagram the kernel refuses outright (EMSGSIZE, an unreachable peer) is
 * skipped as lost. A run whose offload is refused goes again one by one: the offload stays
 * on after EMSGSIZE (a datagram over the route's MTU: that run's), off after the others (the
 * kernel or the device cannot). */
static rc_status rc__udp_send_some(rc_tp *tp, const rc_tp_dgram *v, unsigned n,
                                   unsigned *sent, bool gso)
{
	rc__udp *u = (rc__udp *)tp;
	struct mmsghdr m[RC_TP_BATCH];
	struct iovec iov[RC_TP_BATCH];
	union {
		char b[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} ctl[RC_TP_BATCH];
	unsigned first[RC_TP_BATCH + 1], ng = 0, g = 0;

	for (unsigned i = 0, j; i < n; i = j) {
		size_t seg = v[i].len, total = seg;

		for (j = i + 1; gso && j < n && j - i < RC__GSO_SEGS && v[j].len <= seg && v[j].len > 0 &&
		                total + v[j].len <= RC__GSO_BYTES && rc__udp_same_peer(&v[i], &v[j]);
		     j++) {
			total += v[j].len;
			if (v[j].len < seg) {
				j++;
				break; /* a shorter one ends the run */
			}
		}
		for (unsigned k = i; k < j; k++) {
			iov[k].iov_base = v[k].buf;
			iov[k].iov_len = v[k].len;
		}
		memset(&m[ng].msg_hdr, 0, sizeof(m[ng].msg_hdr));
		if (v[i].peer.len > 0) {
			m[ng].msg_hdr.msg_name = (void *)&v[i].peer.ss;
			m[ng].msg_hdr.msg_namelen = v[i].peer.len;
		}
		m[ng].msg_hdr.msg_iov = &iov[i];
		m[ng].msg_hdr.msg_iovlen = j - i;
		if (j - i > 1) {
			struct cmsghdr *cm = (struct cmsghdr *)ctl[ng].b;
			uint16_t s16 = (uint16_t)seg;

			memset(ctl[ng].b, 0, sizeof(ctl[ng].b)); /* (the padding after the data too) */
			cm->cmsg_level = SOL_UDP;
			cm->cmsg_type = UDP_SEGMENT;
			cm->cmsg_len = CMSG_LEN(sizeof(s16));
			memcpy(CMSG_DATA(cm), &s16, sizeof(s16));
			m[ng].msg_hdr.msg_control = ctl[ng].b;
			m[ng].msg_hdr.msg_controllen = sizeof(ctl[ng].b);
		}
		first[ng++] = i;
	}
	first[ng] = n;
	while (g < ng) {
		int r = sendmmsg(tp->fd, m + g, ng - g, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (r > 0) {
			g += (unsigned)r;
		} else if (r < 0 && errno == EINTR) {
			continue;
		} else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			*sent = first[g];
			return RC_AGAIN;
		} else if (r < 0 && (errno == EBADF || errno == ENOTSOCK || errno == EFAULT)) {
			*sent = first[g];
			return RC_CANTSEND; /* not a datagram's fault: the socket's */
		} else if (m[g].msg_hdr.msg_controllen > 0 &&
		           (errno == EMSGSIZE || errno == EINVAL || errno == EIO ||
		            errno == ENOPROTOOPT || errno == EOPNOTSUPP)) {
			unsigned more = 0;
			rc_status st;

			if (errno != EMSGSIZE)
				atomic_store_explicit(&u->no_gso, true, memory_order_relaxed);
			st = rc__udp_send_some(tp, v + first[g], first[g + 1] - first[g], &more, false);
			if (st != RC_OK) {
				*sent = first[g] + more;
				return st;
			}
			gso = !atomic_load_explicit(&u->no_gso, memory_order_relaxed);
			st = rc__udp_send_some(tp, v + first[g + 1], n - first[g + 1], &more, gso);
			*sent = first[g + 1] + more;
			return st;
		} else {
			g++; /* this one refused: lost, as if dropped on the way */
		}
	}
	*sent = n;
	return RC_OK;
}

/* The vt's send_batch (rc__udp_send_some). */
static rc_status rc__udp_send_batch(rc_tp *tp, const rc_tp_dgram *v, unsigned n,
                                    unsigned *sent)
{
	rc__udp *u = (rc__udp *)tp;

	if (n > RC_TP_BATCH)
		n = RC_TP_BATCH;
	return rc__udp_send_some(tp, v, n, sent,
	                         !atomic_load_explicit(&u->no_gso, memory_order_relaxed));
}

static rc_status rc__udp_recv(rc_tp *tp, void **msg, size_t *len, rc_peer *from,
                              unsigned flags)
{
	rc__udp *u = (rc__udp *)tp;
	rc_status st = rc__udp_recv_one(tp, u->buf, u->bufsize, len, from, flags);

	if (st == RC_OK)
		*msg = u->buf;
	return st;
}

/* recv_into on a socket with receive offload on (not inlined: the plain receive stays
 * lean). */
static __attribute__((noinline)) rc_status
rc__udp_gro_recv_into(rc_tp *tp, void *buf, size_t cap, size_t *len, rc_peer *from,
                      unsigned tflags)
{
	rc__udp *u = (rc__udp *)tp;
	rc_status st;

	if (cap >= RC__GRO_MAX || tp->listener)
		return rc__udp_gro_recv(u, buf, cap, len, from, tflags);
	/* a small buffer on a client socket (one reader): through u->buf */
	if ((st = rc__udp_gro_recv(u, u->buf, u->bufsize, len, from, tflags)) != RC_OK)
		return st;
	if (*len > cap)
		return RC_AGAIN; /* over the caller's buffer: dropped */
	memcpy(buf, u->buf, *len);
	return RC_OK;
}

/* The vt's offload (listeners; the server calls it while it alone receives). */
static bool rc__udp_offload(rc_tp *tp)
{
	return rc__udp_gro_on((rc__udp *)tp);
}

static void rc__udp_shutdown(rc_tp *tp, bool both)
{
	(void)shutdown(tp->fd, both ? SHUT_RDWR : SHUT_RD); /* wakes blocked receivers */
}

static void rc__udp_close(rc_tp *tp)
{
	if (tp->fd >= 0)
		close(tp->fd);
	free(((rc__udp *)tp)->pend);
	pthread_mutex_destroy(&((rc__udp *)tp)->mu);
	free(tp);
}

static const _Alignas(64) rc_tp_vt rc__udp_vt = { /* (64: send and recv on one line) */
	.send = rc__udp_send,
	.flush = NULL,
	.outq = rc__tp_nothing_queued,
	.recv = rc__udp_recv,
	.recv_into = rc__udp_recv_into,
	.recv_batch = rc__udp_recv_batch,
	.send_batch = rc__udp_send_batch,
	.accept = NULL,
	.buffered = rc__tp_nothing_buffered,
	.ahead = rc__udp_ahead,
	.offload = rc__udp_offload,
	.hung_up = rc__tp_never_hung_up,
	.shutdown = rc__udp_shutdown,
	.close = rc__udp_close,
};

/* A transport for socket fd. try_gro: receive offload may be turned on later
 * (rc__udp_gro_on). */
static rc__udp *rc__udp_new(int fd, size_t max_record, bool listener, bool try_gro)
{
	size_t maxlen = max_record < RC__UDP_MAX ? max_record : RC__UDP_MAX;
	bool can_gro = try_gro && (!listener || max_record >= RC__GRO_MAX);
	size_t bufsize = can_gro && !listener ? RC__GRO_MAX : maxlen;
	rc__udp *u = rc__alloc_lines(sizeof(*u) + bufsize);

	if (u == NULL)
		return NULL;
	memset(u, 0, sizeof(*u));
	pthread_mutex_init(&u->mu, NULL);
	u->tp.listener = listener;
	u->tp.vt = &rc__udp_vt;
	u->tp.fd = fd;
	u->tp.props = RC_TPP_DGRAM;
	u->tp.max_msg = RC__UDP_MAX;
	u->tp.rcvtimeo_ms = -1;
	u->maxlen = maxlen;
	u->bufsize = bufsize;
	u->can_gro = can_gro;
	return u;
}

static rc_status rc__udp_connect(const rc_uri *uri, size_t max_record, int64_t deadline,
                                 rc_tp **out)
{
	rc_peer peer;
	rc__udp *u;
	rc_status st;
	int fd, sz = 256 << 10;

	if (uri->port < 0)
		return RC_UNKNOWNADDR;
	if ((st = rc__resolve(uri, SOCK_DGRAM, &peer)) != RC_OK)
		return st;
	fd = socket(peer.ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return RC_CANTSEND;
	/* best effort: a larger buffer only absorbs bursts of pipelined replies */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if ((st = rc__sock_connect(fd, &peer, deadline)) != RC_OK) {
		int e = errno;
		close(fd);
		errno = e;
		return st;
	}
	if ((u = rc__udp_new(fd, max_record, false, true)) == NULL) {
		close(fd);
		return RC_NOMEM;
	}
	*out = &u->tp;
	return RC_OK;
}

static rc_status rc__udp_listen(const rc_uri *uri, size_t max_record,
                                const rc_tp_deliver *deliver, rc_tp **out, char *bound,
                                size_t len)
{
	rc_peer addr;
	rc__udp *u;
	rc_status st;
	int fd, sz = 1 << 20;

	(void)deliver;
	if (uri->port < 0)
		return RC_UNKNOWNADDR;
	if ((st = rc__resolve(uri, SOCK_DGRAM, &addr)) != RC_OK)
		return st;
	fd = socket(addr.ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return RC_LOCALERROR;
	/* No SO_REUSEADDR: on UDP it buys nothing (no TIME_WAIT) and lets bind(port 0) hand out a
	 * port another socket already holds. */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz)); /* best effort, as above */
	if (bind(fd, (struct sockaddr *)&addr.ss, addr.len) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return RC_LOCALERROR;
	}
	if ((u = rc__udp_new(fd, max_record, true, true)) == NULL) {
		close(fd);
		return RC_NOMEM;
	}
	rc__sock_bound_uri(fd, "udp", bound, len);
	*out = &u->tp;
	return RC_OK;
}

/* The kind's adopt (rc_tp_adopt_fn): a datagram socket of the caller's, as a listener. */
static rc_status rc__udp_adopt(int fd, size_t max_record, bool listener, rc_tp **out)
{
	rc__udp *u = rc__udp_new(fd, max_record, true, false); /* its options stay the caller's */

	(void)listener; /* (always one) */
	if (u == NULL)
		return RC_NOMEM;
	*out = &u->tp;
	return RC_OK;
}

const rc_tp_kind rc__udp_kind = {"udp", RC_TPP_DGRAM, rc__udp_connect, rc__udp_listen,
                                 rc__udp_adopt};

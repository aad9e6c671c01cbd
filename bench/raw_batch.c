/*
 * raw-pingpong --server udp://... --null-rpc --batch MODE: a UDP null-call server with nothing
 * around the kernel interface, to measure which interface batches datagrams best (issue 15:
 * recvmmsg/sendmmsg against io_uring). Every mode answers each ONC RPC call it receives with
 * the 24-byte successful reply raw-pingpong's --null-rpc server sends, to its sender.
 *
 *   mmsg     recvmmsg (up to 64, waiting for the first) and one sendmmsg of the replies
 *   offload  the same, with the kernel's UDP offloads: UDP_GRO on the socket (joined datagrams
 *            of one sender cut apart here) and the replies to one joined datagram sent as one
 *            UDP_SEGMENT message -- what remotecall's UDP transport does
 *   uring    io_uring (liburing): 64 receives posted at once; each completion queues its reply
 *            as a send and posts its receive again; one io_uring_submit_and_wait per round
 *            hands the kernel every queued send and receive and waits for the next completion
 *   uring-offload  uring with offload's UDP_GRO and UDP_SEGMENT
 *   uring-ms io_uring with one multishot receive (IORING_RECV_MULTISHOT) into a registered
 *            buffer ring: one posted receive yields completions until the ring runs dry
 *
 * Each runs until *stop is set (SIGINT/SIGTERM) and returns 0, or 1 with a message if its set-up
 * fails. Nothing here is remotecall: the figures are the floor each interface allows.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#ifdef RC_HAVE_URING
#include <liburing.h>
#endif

#include "common.h"
#include "raw_batch.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

#define NSLOT 64u         /* datagrams (or joined datagrams) taken per system call */
#define SLOT_BUF 2048u    /* a datagram without offload: null calls are 40 bytes */
#define JOINED_BUF 65536u /* a joined datagram under UDP_GRO */
#define CALL_MIN 40u
#define REPLY_LEN 24u
#define MAX_SEGS 64u

static volatile sig_atomic_t *rb_stop; /* raw-pingpong's stop flag (SIGINT, SIGTERM) */
#define g_stop (*rb_stop)

static inline uint32_t rb_get32(const unsigned char *p)
{
	uint32_t be;
	memcpy(&be, p, 4);
	return ntohl(be);
}

/* Write the reply to the call at in[0..n) into out (REPLY_LEN bytes); false if in is no call. */
static inline bool rb_reply(const unsigned char *in, size_t n, unsigned char *out)
{
	if (n < CALL_MIN || rb_get32(in + 4) != 0)
		return false;
	memcpy(out, in, 4); /* the xid */
	memset(out + 4, 0, REPLY_LEN - 4);
	out[7] = 1; /* REPLY; MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS are zeros */
	return true;
}

/* Write the replies to the calls in in[0..n) -- one datagram, or datagrams joined at seg
 * bytes each (seg 0: not joined) -- into out, REPLY_LEN bytes each, at most MAX_SEGS. Returns
 * how many. */
static size_t rb_replies(const unsigned char *in, size_t n, size_t seg, unsigned char *out)
{
	size_t nrep = 0;

	if (seg == 0 || seg > n)
		seg = n;
	for (size_t at = 0; at < n && nrep < MAX_SEGS; at += seg)
		if (rb_reply(in + at, n - at < seg ? n - at : seg, out + nrep * REPLY_LEN))
			nrep++;
	return nrep;
}

/* Turn receive offload (UDP_GRO) on for fd; false with a message if the kernel refuses. */
static bool rb_gro_on(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof one) == 0)
		return true;
	fprintf(stderr, "raw-pingpong: UDP_GRO: %s\n", strerror(errno));
	return false;
}

/* The size of the datagrams joined in a receive's buffer (UDP_GRO), 0 if not joined. */
static size_t rb_gro_size(struct msghdr *mh)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c))
		if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO) {
			int g;
			memcpy(&g, CMSG_DATA(c), sizeof g);
			return g > 0 ? (size_t)g : 0;
		}
	return 0;
}

/* Mark mh as REPLY_LEN-byte datagrams joined (UDP_SEGMENT), its control message in ctl (room
 * for a cmsg of a uint16_t). */
static void rb_segment(struct msghdr *mh, char *ctl, size_t room)
{
	uint16_t sz = REPLY_LEN;
	struct cmsghdr *c;

	memset(ctl, 0, room);
	mh->msg_control = ctl;
	mh->msg_controllen = CMSG_SPACE(sizeof sz);
	c = CMSG_FIRSTHDR(mh);
	c->cmsg_level = IPPROTO_UDP;
	c->cmsg_type = UDP_SEGMENT;
	c->cmsg_len = CMSG_LEN(sizeof sz);
	memcpy(CMSG_DATA(c), &sz, sizeof sz);
}

/* sendmmsg all of v[0..n), looping on partial sends; a refused message is skipped. */
static void rb_sendall(int fd, struct mmsghdr *v, unsigned n)
{
	while (n > 0 && !g_stop) {
		int k = sendmmsg(fd, v, n, 0);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			k = 1; /* skip the one the kernel refuses (as a lost datagram) */
		}
		v += k;
		n -= (unsigned)k;
	}
}

/* mmsg, and offload when gro: UDP_GRO on (a joined datagram's calls answered by one
 * UDP_SEGMENT message). */
static int rb_mmsg(int fd, bool gro)
{
	static unsigned char in[NSLOT][JOINED_BUF], out[NSLOT][MAX_SEGS * REPLY_LEN];
	static struct sockaddr_storage from[NSLOT];
	/* control-message room: UDP_GRO gives an int, UDP_SEGMENT takes a uint16_t */
	static union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ictl[NSLOT], octl[NSLOT];
	struct iovec iv[NSLOT], ov[NSLOT];
	struct mmsghdr im[NSLOT], om[NSLOT];

	if (gro && !rb_gro_on(fd))
		return 1;
	for (unsigned i = 0; i < NSLOT; i++) {
		iv[i] = (struct iovec){in[i], gro ? JOINED_BUF : SLOT_BUF};
		memset(&im[i], 0, sizeof im[i]);
		im[i].msg_hdr.msg_iov = &iv[i];
		im[i].msg_hdr.msg_iovlen = 1;
	}
	while (!g_stop) {
		unsigned k = 0;
		for (unsigned i = 0; i < NSLOT; i++) {
			im[i].msg_hdr.msg_name = &from[i];
			im[i].msg_hdr.msg_namelen = sizeof from[i];
			im[i].msg_hdr.msg_control = gro ? ictl[i].b : NULL;
			im[i].msg_hdr.msg_controllen = gro ? sizeof ictl[i].b : 0;
		}
		int n = recvmmsg(fd, im, NSLOT, MSG_WAITFORONE, NULL);
		if (n <= 0)
			continue;
		for (int i = 0; i < n; i++) {
			size_t nrep = rb_replies(in[i], im[i].msg_len,
			                         gro ? rb_gro_size(&im[i].msg_hdr) : 0, out[k]);
			if (nrep == 0)
				continue;
			ov[k] = (struct iovec){out[k], nrep * REPLY_LEN};
			memset(&om[k], 0, sizeof om[k]);
			om[k].msg_hdr.msg_name = &from[i];
			om[k].msg_hdr.msg_namelen = im[i].msg_hdr.msg_namelen;
			om[k].msg_hdr.msg_iov = &ov[k];
			om[k].msg_hdr.msg_iovlen = 1;
			if (nrep > 1)
				rb_segment(&om[k].msg_hdr, octl[k].b, sizeof octl[k].b);
			k++;
		}
		rb_sendall(fd, om, k);
	}
	return 0;
}

#ifdef RC_HAVE_URING

#define RING_DEPTH 512u
#define NSEND 256u
#define TAG_RECV (1ull << 32)
#define TAG_SEND (2ull << 32)

/* A posted receive (uring) and a send in flight (both uring modes). */
struct rb_recv {
	unsigned char buf[JOINED_BUF];
	struct sockaddr_storage from;
	struct iovec iov;
	struct msghdr mh;
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
};
struct rb_send {
	unsigned char reply[MAX_SEGS * REPLY_LEN];
	struct sockaddr_storage to;
	struct iovec iov;
	struct msghdr mh;
	union {
		char b[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} ctl;
};
static bool rb_gro; /* uring-offload: UDP_GRO on, replies to a joined datagram joined */

/* A free submission entry of ring, submitting what is queued if it is full; NULL (with a
 * message) if there is none even then. */
static struct io_uring_sqe *rb_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (sqe == NULL) {
		io_uring_submit(ring);
		if ((sqe = io_uring_get_sqe(ring)) == NULL)
			fprintf(stderr, "raw-pingpong: io_uring: no free submission entry\n");
	}
	return sqe;
}

static struct rb_send rb_sends[NSEND];
static unsigned rb_free[NSEND], rb_nfree;

/* Queue the replies to the calls in in[0..n) from `from` as one send: one call, or under
 * rb_gro the datagrams joined at seg bytes each (one UDP_SEGMENT send of their replies).
 * False if no SQE or send slot is free (the replies are then dropped, as lost datagrams) or
 * in holds no call. */
static bool rb_queue_reply(struct io_uring *ring, const unsigned char *in, size_t n, size_t seg,
                           const void *from, socklen_t fl, int fd)
{
	struct io_uring_sqe *sqe;
	struct rb_send *s;
	size_t nrep;
	unsigned j;

	if (rb_nfree == 0)
		return false;
	j = rb_free[rb_nfree - 1];
	s = &rb_sends[j];
	if ((nrep = rb_replies(in, n, seg, s->reply)) == 0 || (sqe = rb_sqe(ring)) == NULL)
		return false;
	rb_nfree--;
	memcpy(&s->to, from, fl);
	s->iov = (struct iovec){s->reply, nrep * REPLY_LEN};
	memset(&s->mh, 0, sizeof s->mh);
	s->mh.msg_name = &s->to;
	s->mh.msg_namelen = fl;
	s->mh.msg_iov = &s->iov;
	s->mh.msg_iovlen = 1;
	if (nrep > 1)
		rb_segment(&s->mh, s->ctl.b, sizeof s->ctl.b);
	io_uring_prep_sendmsg(sqe, fd, &s->mh, 0);
	io_uring_sqe_set_data64(sqe, TAG_SEND | j);
	return true;
}

static bool rb_ring_init(struct io_uring *ring)
{
	struct io_uring_params p;
	int e;

	memset(&p, 0, sizeof p);
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN;
	if ((e = io_uring_queue_init_params(RING_DEPTH, ring, &p)) < 0) {
		memset(&p, 0, sizeof p); /* an older kernel: without the hints */
		e = io_uring_queue_init_params(RING_DEPTH, ring, &p);
	}
	if (e < 0) {
		fprintf(stderr, "raw-pingpong: io_uring_queue_init: %s\n", strerror(-e));
		return false;
	}
	rb_nfree = NSEND;
	for (unsigned j = 0; j < NSEND; j++)
		rb_free[j] = j;
	return true;
}

/* Post receive i (r) on fd; false if the ring has no room (see rb_sqe). */
static bool rb_post_recv(struct io_uring *ring, struct rb_recv *r, unsigned i, int fd)
{
	struct io_uring_sqe *sqe = rb_sqe(ring);

	if (sqe == NULL)
		return false;
	r->iov = (struct iovec){r->buf, rb_gro ? JOINED_BUF : SLOT_BUF};
	memset(&r->mh, 0, sizeof r->mh);
	r->mh.msg_name = &r->from;
	r->mh.msg_namelen = sizeof r->from;
	r->mh.msg_iov = &r->iov;
	r->mh.msg_iovlen = 1;
	if (rb_gro) {
		r->mh.msg_control = r->ctl.b;
		r->mh.msg_controllen = sizeof r->ctl.b;
	}
	io_uring_prep_recvmsg(sqe, fd, &r->mh, 0);
	io_uring_sqe_set_data64(sqe, TAG_RECV | i);
	return true;
}

static int rb_uring(int fd, bool gro)
{
	static struct rb_recv rv[NSLOT];
	struct io_uring ring;
	int rc = 0;

	rb_gro = gro;
	if ((gro && !rb_gro_on(fd)) || !rb_ring_init(&ring))
		return 1;
	for (unsigned i = 0; i < NSLOT && rc == 0; i++)
		if (!rb_post_recv(&ring, &rv[i], i, fd))
			rc = 1;
	while (rc == 0 && !g_stop) {
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0;
		int e = io_uring_submit_and_wait(&ring, 1);
		if (e < 0 && e != -EINTR && e != -EBUSY) {
			fprintf(stderr, "raw-pingpong: io_uring_submit_and_wait: %s\n", strerror(-e));
			rc = 1;
			break;
		}
		io_uring_for_each_cqe(&ring, head, cqe)
		{
			uint64_t d = io_uring_cqe_get_data64(cqe);
			unsigned i = (unsigned)(d & 0xffffffffu);
			seen++;
			if ((d & ~0xffffffffull) == TAG_SEND) {
				rb_free[rb_nfree++] = i;
				continue;
			}
			if (cqe->res > 0)
				rb_queue_reply(&ring, rv[i].buf, (size_t)cqe->res,
				               gro ? rb_gro_size(&rv[i].mh) : 0, &rv[i].from,
				               rv[i].mh.msg_namelen, fd);
			if (!rb_post_recv(&ring, &rv[i], i, fd))
				rc = 1;
		}
		io_uring_cq_advance(&ring, seen);
	}
	io_uring_queue_exit(&ring);
	return rc;
}

/* The multishot receive's buffers: NBUF of MS_BUF bytes, each holding an io_uring_recvmsg_out
 * header, the sender's address and the datagram. */
#define NBUF 256u
#define MS_BUF 2048u
#define BGID 7

static int rb_uring_ms(int fd)
{
	static unsigned char bufs[NBUF][MS_BUF];
	struct io_uring ring;
	struct io_uring_buf_ring *br;
	struct io_uring_buf_reg reg;
	struct msghdr mh;
	bool posted = false;
	void *mem;
	int e, rc = 0;

	if (!rb_ring_init(&ring))
		return 1;
	if (posix_memalign(&mem, 4096, NBUF * sizeof(struct io_uring_buf)) != 0) {
		io_uring_queue_exit(&ring);
		return 1;
	}
	br = mem;
	memset(&reg, 0, sizeof reg);
	reg.ring_addr = (uint64_t)(uintptr_t)br;
	reg.ring_entries = NBUF;
	reg.bgid = BGID;
	if ((e = io_uring_register_buf_ring(&ring, &reg, 0)) < 0) {
		fprintf(stderr, "raw-pingpong: io_uring_register_buf_ring: %s\n", strerror(-e));
		io_uring_queue_exit(&ring);
		free(mem);
		return 1;
	}
	io_uring_buf_ring_init(br);
	for (unsigned b = 0; b < NBUF; b++)
		io_uring_buf_ring_add(br, bufs[b], MS_BUF, (unsigned short)b,
		                      io_uring_buf_ring_mask(NBUF), (int)b);
	io_uring_buf_ring_advance(br, NBUF);
	memset(&mh, 0, sizeof mh);
	mh.msg_namelen = sizeof(struct sockaddr_storage);
	while (!g_stop) {
		struct io_uring_cqe *cqe;
		unsigned head, seen = 0, back = 0;
		if (!posted) {
			struct io_uring_sqe *sqe = rb_sqe(&ring);
			if (sqe == NULL) {
				rc = 1;
				break;
			}
			io_uring_prep_recvmsg_multishot(sqe, fd, &mh, 0);
			sqe->flags |= IOSQE_BUFFER_SELECT;
			sqe->buf_group = BGID;
			io_uring_sqe_set_data64(sqe, TAG_RECV);
			posted = true;
		}
		e = io_uring_submit_and_wait(&ring, 1);
		if (e < 0 && e != -EINTR && e != -EBUSY) {
			fprintf(stderr, "raw-pingpong: io_uring_submit_and_wait: %s\n", strerror(-e));
			rc = 1;
			break;
		}
		io_uring_for_each_cqe(&ring, head, cqe)
		{
			uint64_t d = io_uring_cqe_get_data64(cqe);
			seen++;
			if ((d & ~0xffffffffull) == TAG_SEND) {
				rb_free[rb_nfree++] = (unsigned)(d & 0xffffffffu);
				continue;
			}
			if (!(cqe->flags & IORING_CQE_F_MORE))
				posted = false; /* the multishot receive ended (ring dry, error): again */
			if (cqe->res > 0 && (cqe->flags & IORING_CQE_F_BUFFER)) {
				unsigned b = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
				struct io_uring_recvmsg_out *o =
				        io_uring_recvmsg_validate(bufs[b], cqe->res, &mh);
				if (o != NULL && !(o->flags & MSG_TRUNC))
					rb_queue_reply(&ring, io_uring_recvmsg_payload(o, &mh),
					               io_uring_recvmsg_payload_length(o, cqe->res, &mh), 0,
					               io_uring_recvmsg_name(o), o->namelen, fd);
				io_uring_buf_ring_add(br, bufs[b], MS_BUF, (unsigned short)b,
				                      io_uring_buf_ring_mask(NBUF), (int)back++);
			}
		}
		if (back > 0)
			io_uring_buf_ring_advance(br, (int)back);
		io_uring_cq_advance(&ring, seen);
	}
	io_uring_queue_exit(&ring);
	free(mem);
	return rc;
}
#endif /* RC_HAVE_URING */

bool raw_batch_known(const char *mode)
{
	return strcmp(mode, "mmsg") == 0 || strcmp(mode, "offload") == 0 ||
	       strcmp(mode, "uring") == 0 || strcmp(mode, "uring-offload") == 0 ||
	       strcmp(mode, "uring-ms") == 0;
}

int raw_batch_serve(int fd, const char *mode, volatile sig_atomic_t *stop)
{
	rb_stop = stop;
	if (strcmp(mode, "mmsg") == 0 || strcmp(mode, "offload") == 0)
		return rb_mmsg(fd, strcmp(mode, "offload") == 0);
#ifdef RC_HAVE_URING
	if (strcmp(mode, "uring") == 0)
		return rb_uring(fd, false);
	if (strcmp(mode, "uring-offload") == 0)
		return rb_uring(fd, true);
	if (strcmp(mode, "uring-ms") == 0)
		return rb_uring_ms(fd);
#endif
	fprintf(stderr, "raw-pingpong: --batch %s: built without liburing\n", mode);
	return 2;
}

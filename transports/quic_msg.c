/*
 * RPC-over-QUIC's stream reader (quic.h): RFC 5531 record marking over one QUIC stream's
 * bytes, whole messages kept with their marks so they pass on unchanged. Every length comes
 * from the peer: it is checked against the cap before memory is taken for it.
 */
#include <stdlib.h>
#include <string.h>

#include "transports/quic.h"

/* quic.h */
void rc__qmsg_init(rc__qmsg *m, size_t max)
{
	memset(m, 0, sizeof(*m));
	m->max = max;
	m->in_mark = true;
}

/* quic.h */
void rc__qmsg_free(rc__qmsg *m)
{
	free(m->buf);
	m->buf = NULL;
	m->len = m->cap = 0;
}

/* Room for n more bytes in m->buf; false when memory is short. */
static bool rc__qmsg_room(rc__qmsg *m, size_t n)
{
	size_t want = m->len + n, cap;
	unsigned char *b;

	if (want <= m->cap)
		return true;
	cap = m->cap ? m->cap : 256;
	while (cap < want)
		cap *= 2;
	if ((b = realloc(m->buf, cap)) == NULL)
		return false;
	m->buf = b;
	m->cap = cap;
	return true;
}

/* Start the next message (the buffer kept, emptied). */
static void rc__qmsg_restart(rc__qmsg *m)
{
	m->len = 0;
	m->body = 0;
	m->need = 0;
	m->in_mark = true;
	m->last = false;
	m->nmark = 0;
}

/* quic.h */
int rc__qmsg_feed(rc__qmsg *m, const unsigned char *p, size_t n, size_t *used)
{
	size_t at = 0;

	while (at < n || (!m->in_mark && m->need == 0)) {
		if (m->in_mark) {
			unsigned take = 4 - m->nmark;
			if (take > n - at)
				take = (unsigned)(n - at);
			if (!rc__qmsg_room(m, take))
				return RC__QMSG_BAD;
			memcpy(m->buf + m->len, p + at, take);
			m->len += take;
			m->nmark += take;
			at += take;
			if (m->nmark < 4)
				break;
			const unsigned char *mk = m->buf + m->len - 4;
			uint32_t h = (uint32_t)mk[0] << 24 | (uint32_t)mk[1] << 16 |
			             (uint32_t)mk[2] << 8 | mk[3];
			size_t flen = h & 0x7fffffffu;
			if (flen > m->max - m->body)
				return RC__QMSG_BAD;
			m->need = flen;
			m->last = (h & 0x80000000u) != 0;
			m->in_mark = false;
			m->nmark = 0;
			/* the whole fragment at once: it is within the cap */
			if (!rc__qmsg_room(m, flen))
				return RC__QMSG_BAD;
			continue;
		}
		if (m->need > 0) {
			size_t take = m->need < n - at ? m->need : n - at;
			for (size_t i = 0; m->body + i < 8 && i < take; i++)
				m->head[m->body + i] = p[at + i];
			memcpy(m->buf + m->len, p + at, take);
			m->len += take;
			m->body += take;
			m->need -= take;
			at += take;
			if (m->need > 0)
				break;
		}
		/* a fragment is complete */
		m->in_mark = true;
		if (m->last) {
			*used = at;
			if (m->body < 8)
				return RC__QMSG_BAD;
			return RC__QMSG_DONE;
		}
	}
	*used = at;
	return RC__QMSG_MORE;
}

/* quic.h */
unsigned char *rc__qmsg_take(rc__qmsg *m, size_t *len)
{
	unsigned char *b = m->buf;

	*len = m->len;
	m->buf = NULL;
	m->cap = 0;
	rc__qmsg_restart(m);
	return b;
}

static uint32_t rc__qmsg_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* quic.h */
uint32_t rc__qmsg_xid(const rc__qmsg *m)
{
	return rc__qmsg_be32(m->head);
}

/* quic.h */
uint32_t rc__qmsg_type(const rc__qmsg *m)
{
	return rc__qmsg_be32(m->head + 4);
}

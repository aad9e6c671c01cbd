/* The table of transports by URI scheme. A new transport adds one line here. */
#include <string.h>

#include "transports/transport.h"

extern const rc_tp_kind rc__udp_kind, rc__tcp_kind, rc__unix_kind, rc__inproc_kind;

static const rc_tp_kind *const rc__kinds[] = {
	&rc__udp_kind,
	&rc__tcp_kind,
	&rc__unix_kind,
	&rc__inproc_kind,
};

const rc_tp_kind *rc__tp_find(const char *scheme)
{
	for (size_t i = 0; i < sizeof(rc__kinds) / sizeof(rc__kinds[0]); i++)
		if (strcmp(rc__kinds[i]->scheme, scheme) == 0)
			return rc__kinds[i];
	return NULL;
}

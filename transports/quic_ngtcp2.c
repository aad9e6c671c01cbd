/*
 * ngtcp2's version differences, in one file (see quic_ngtcp2.h). 1.0 renamed
 * ngtcp2_connection_close_error to ngtcp2_ccerr (with its setters and getter), gave
 * ngtcp2_conn_shutdown_stream a flags argument and added original_dcid_present.
 */
#include <string.h>

#include "transports/quic_ngtcp2.h"

#define RC__NG_1X (NGTCP2_VERSION_NUM >= 0x010000)

/* quic_ngtcp2.h */
int rc__ng_shutdown_stream(ngtcp2_conn *conn, int64_t stream_id, uint64_t code)
{
#if RC__NG_1X
	return ngtcp2_conn_shutdown_stream(conn, 0, stream_id, code);
#else
	return ngtcp2_conn_shutdown_stream(conn, stream_id, code);
#endif
}

/* quic_ngtcp2.h */
ngtcp2_ssize rc__ng_write_close(ngtcp2_conn *conn, uint8_t *buf, size_t cap, int how,
                                int64_t code, ngtcp2_tstamp ts)
{
	ngtcp2_path_storage ps;
	ngtcp2_pkt_info pi;
#if RC__NG_1X
	ngtcp2_ccerr e;

	ngtcp2_ccerr_default(&e);
	if (how == RC__NG_CLOSE_APP)
		ngtcp2_ccerr_set_application_error(&e, (uint64_t)code, NULL, 0);
	else if (how == RC__NG_CLOSE_TRANSPORT)
		ngtcp2_ccerr_set_transport_error(&e, (uint64_t)code, NULL, 0);
	else if (how == RC__NG_CLOSE_TLS)
		ngtcp2_ccerr_set_tls_alert(&e, (uint8_t)code, NULL, 0);
	else
		ngtcp2_ccerr_set_liberr(&e, (int)code, NULL, 0);
#else
	ngtcp2_connection_close_error e;

	ngtcp2_connection_close_error_default(&e);
	if (how == RC__NG_CLOSE_APP)
		ngtcp2_connection_close_error_set_application_error(&e, (uint64_t)code, NULL, 0);
	else if (how == RC__NG_CLOSE_TRANSPORT)
		ngtcp2_connection_close_error_set_transport_error(&e, (uint64_t)code, NULL, 0);
	else if (how == RC__NG_CLOSE_TLS)
		ngtcp2_connection_close_error_set_transport_error_tls_alert(&e, (uint8_t)code, NULL, 0);
	else
		ngtcp2_connection_close_error_set_transport_error_liberr(&e, (int)code, NULL, 0);
#endif
	ngtcp2_path_storage_zero(&ps);
	return ngtcp2_conn_write_connection_close(conn, &ps.path, &pi, buf, cap, &e, ts);
}

/* quic_ngtcp2.h */
uint64_t rc__ng_peer_close(ngtcp2_conn *conn, bool *app)
{
#if RC__NG_1X
	const ngtcp2_ccerr *e = ngtcp2_conn_get_ccerr(conn);

	*app = e->type == NGTCP2_CCERR_TYPE_APPLICATION;
	return e->error_code;
#else
	ngtcp2_connection_close_error e;

	ngtcp2_conn_get_connection_close_error(conn, &e);
	*app = e.type == NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION;
	return e.error_code;
#endif
}

/* quic_ngtcp2.h */
void rc__ng_set_original_dcid(ngtcp2_transport_params *params, const ngtcp2_cid *dcid)
{
	params->original_dcid = *dcid;
#if RC__NG_1X
	params->original_dcid_present = 1;
#endif
}

/* quic_ngtcp2.h */
const char *rc__ng_version(void)
{
	const ngtcp2_info *i = ngtcp2_version(0);

	return i != NULL ? i->version_str : NGTCP2_VERSION;
}

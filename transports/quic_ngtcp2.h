/*
 * The ngtcp2 calls whose shape differs between ngtcp2 0.x (Debian 12: 0.12.1) and 1.x
 * (internal). transports/quic.c calls ngtcp2 only through these for anything that changed
 * between the two; quic_ngtcp2.c is the one file with version conditionals, so a newer
 * libngtcp2 drops in by changing that file alone. Everything else quic.c uses
 * (ngtcp2_conn_read_pkt, ngtcp2_conn_writev_stream, ngtcp2_accept, the callbacks it sets by
 * name, the crypto helpers) has the same shape in both.
 */
#ifndef RC_TRANSPORTS_QUIC_NGTCP2_H
#define RC_TRANSPORTS_QUIC_NGTCP2_H

#include <stdbool.h>
#include <stdint.h>

#include <ngtcp2/ngtcp2.h>

/* Reset both directions of a stream with the application error code (RESET_STREAM and
 * STOP_SENDING). 0 or an ngtcp2 error. */
int rc__ng_shutdown_stream(ngtcp2_conn *conn, int64_t stream_id, uint64_t code);

/* What a CONNECTION_CLOSE carries: an application code (the draft's RPC_* codes), a
 * transport code (RFC 9000's), the one ngtcp2 infers from a library error it returned, or
 * CRYPTO_ERROR with the TLS alert the handshake failed with (RFC 9001 4.8: 0x100 + alert). */
enum { RC__NG_CLOSE_APP, RC__NG_CLOSE_TRANSPORT, RC__NG_CLOSE_LIBERR, RC__NG_CLOSE_TLS };

/* Write a CONNECTION_CLOSE packet into buf[0..cap): how says what code is (a library error
 * as a negative int). The packet's length, or a negative ngtcp2 error (nothing to send). */
ngtcp2_ssize rc__ng_write_close(ngtcp2_conn *conn, uint8_t *buf, size_t cap, int how,
                                int64_t code, ngtcp2_tstamp ts);

/* The error code the peer closed the connection with (CONNECTION_CLOSE), and whether it was
 * an application code (*app). */
uint64_t rc__ng_peer_close(ngtcp2_conn *conn, bool *app);

/* A server's transport parameters name the client's original destination connection ID. */
void rc__ng_set_original_dcid(ngtcp2_transport_params *params, const ngtcp2_cid *dcid);

/* The version of libngtcp2 running ("0.12.1"). */
const char *rc__ng_version(void);

#endif

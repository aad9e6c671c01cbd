#!/usr/bin/env bash
# examples/quic/run.sh [BIN] -- a certificate made with openssl, a quic:// server, a client
# making a blocking call and eight started calls over its pool of QUIC streams.
. "$(dirname "$0")/../lib.sh" "$@"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
	-keyout "$LOGS/key.pem" -out "$LOGS/cert.pem" >/dev/null 2>&1 || { echo "openssl failed"; exit 1; }
serve srv "$BIN/quic-server" --cert "$LOGS/cert.pem" --key "$LOGS/key.pem"
run "$BIN/quic" --ca "$LOGS/cert.pem" "$srv?streams=4"
finish

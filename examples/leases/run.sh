#!/usr/bin/env bash
# examples/leases/run.sh [BIN] -- two connections to one leases-server: A takes alpha and
# beta, B is refused alpha, A leaves, the server's connection hook releases A's leases, and
# B gets alpha.
. "$(dirname "$0")/../lib.sh" "$@"
serve srv "$BIN/leases-server"
run "$BIN/leases" "$srv" alpha beta
finish srv

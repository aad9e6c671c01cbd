#!/usr/bin/env bash
# examples/rstatus/run.sh [BIN] -- two status servers, on UDP and on TCP; one line for each.
. "$(dirname "$0")/../lib.sh" "$@"
serve udp_host "$BIN/rstatus-server" --listen udp://127.0.0.1:0
serve tcp_host "$BIN/rstatus-server" --listen tcp://127.0.0.1:0
run "$BIN/rstatus" "$udp_host" "$tcp_host"
finish

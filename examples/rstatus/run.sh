#!/usr/bin/env bash
# examples/rstatus/run.sh [BIN] -- two status servers, on UDP and on TCP; one line for each;
# then the same question broadcast (rc_broadcast) to the UDP one's address.
. "$(dirname "$0")/../lib.sh" "$@"
serve udp_host "$BIN/rstatus-server" --listen udp://127.0.0.1:0
serve tcp_host "$BIN/rstatus-server" --listen tcp://127.0.0.1:0
run "$BIN/rstatus" "$udp_host" "$tcp_host"
# rup's way: one call to an address every server listens on. Over loopback that is the UDP
# server's own address; on a network, the subnet's broadcast address and the servers' port.
run "$BIN/rstatus" -b "$udp_host" 500
finish

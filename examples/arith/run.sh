#!/usr/bin/env bash
# examples/arith/run.sh [BIN [N [--json]]] -- three arithmetic servers answering after 0, 150 and
# 300 ms: blocking calls to the first, then DOUBLE and TRIPLE to all three at once (argument N,
# 21); --json logs the blocking calls as JSON lines (idlc --print's printers on the trace).
. "$(dirname "$0")/../lib.sh" "$@"
serve fast "$BIN/arith-server" --listen udp://127.0.0.1:0
serve medium "$BIN/arith-server" --listen tcp://127.0.0.1:0 --delay 150
serve slow "$BIN/arith-server" --listen udp://127.0.0.1:0 --delay 300
run "$BIN/arith" --arg "${2:-21}" ${3:+"$3"} "$fast" "$medium" "$slow"
finish

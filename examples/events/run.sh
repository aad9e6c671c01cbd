#!/usr/bin/env bash
# examples/events/run.sh [BIN] -- calls of 300, 100 and 200 ms from the command line and one
# of 50 ms typed on standard input, all in flight at once; they complete shortest first.
. "$(dirname "$0")/../lib.sh" "$@"
serve srv "$BIN/events-server" --listen udp://127.0.0.1:0
run "$BIN/events" "$srv" 300 100 200 <<<50
finish

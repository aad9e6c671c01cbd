#!/usr/bin/env bash
# examples/notify/run.sh [BIN] -- a subscriber with no listening socket gets the server's ticks
# and its own published event over the connection it made: over TCP, then (3 events, topic
# "news") over a Unix socket.
. "$(dirname "$0")/../lib.sh" "$@"
serve tcp "$BIN/notify-server" --tick-ms 100
run "$BIN/notify" "$tcp" 5
serve unx "$BIN/notify-server" --listen "unix:${TMPDIR:-/tmp}/rc-notify-$$.sock" --tick-ms 100
run "$BIN/notify" "$unx" 3 news
finish tcp unx

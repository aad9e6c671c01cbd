#!/usr/bin/env bash
# tests/faults/relay.sh BIN SELF -- the standalone rc-relay: bad options exit 2; it starts,
# prints its "listening" line, carries rc-bench-client's calls (UDP) to rc-bench-server through
# duplication and reordering, and through loss in a run with --drop; SIGTERM stops it (exit 0)
# with its counters on stderr.
BIN=$1 SELF=$2
T_LIMIT=${T_LIMIT:-60}
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

expect_fail "no --server" "server is required" "$SELF/rc-relay"
expect_fail "probability over 1" "bad --drop" "$SELF/rc-relay" --server udp://127.0.0.1:9 --drop 1.5
expect_fail "unknown option" "bad option" "$SELF/rc-relay" --server udp://127.0.0.1:9 --frob 1

start_server srv "$BIN/rc-bench-server" --listen udp://127.0.0.1:0 || finish
start_server rel "$SELF/rc-relay" --server "$srv_udp" --dup 0.3 --reorder 0.3 --hold 5 \
	--seed 9 || finish
expect_out "ECHO 4000 bytes x 200 through dup 0.3 + reorder 0.3" '"errors":0' \
	"$BIN/rc-bench-client" --uri "$rel_udp" --proc echo --size 4000 --calls 200 --warmup 0 --json
stop_server rel
CHECKS=$((CHECKS + 1))
if grep -Eq '^rc-relay: req in [0-9]+ out [0-9]+ drop 0 dup [1-9][0-9]* reorder [1-9]' "$TMPD/rel.err"; then
	echo "ok   counters on stderr: $(cat "$TMPD/rel.err")"
else
	fail "rc-relay's counters missing on stderr: $(cat "$TMPD/rel.err")"
fi

start_server rel2 "$SELF/rc-relay" --server "$srv_udp" --req-drop 0.2 --rep-delay 5 \
	--seed 3 || finish
expect_out "NULL x 20 through 20 % request loss (500 ms retransmissions)" '"errors":0' \
	"$BIN/rc-bench-client" --uri "$rel2_udp" --proc null --calls 20 --warmup 0 --timeout 20000 --json
stop_server rel2
CHECKS=$((CHECKS + 1))
if grep -Eq 'drop [1-9][0-9]* .* \| rep in [0-9]+ out [0-9]+ drop 0 dup 0 reorder 0 delay [1-9]' "$TMPD/rel2.err"; then
	echo "ok   per-direction: $(cat "$TMPD/rel2.err")"
else
	fail "per-direction counters wrong: $(cat "$TMPD/rel2.err")"
fi
stop_server srv
finish

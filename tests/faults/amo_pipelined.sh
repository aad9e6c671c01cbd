#!/usr/bin/env bash
# tests/faults/amo_pipelined.sh BIN SELF DEPTH [CLIENTS] [CALLS] -- at most once under
# pipelining (issue 17): a fresh rc-bench-server (UDP, 2 worker threads) behind rc-relay at
# 20 % loss, 10 % duplication and 20 % reordering both ways; CLIENTS (4) rc-bench-client
# processes each make CALLS (5,000) ADD(1) calls, DEPTH in flight (--mode async --keep-going).
# Every client must report its calls and 0 errors (its async ADD check: totals all different
# and growing with the calls completed), and the server's total, printed at its exit
# (--stats), must be exactly CLIENTS x CALLS: no call ran twice, however late its copies came.
# The clients' --timeout is 60 s: at 36 % loss a round trip, a 25 s deadline (9 tries with the
# client's 0.5 s .. 4 s back-off) leaves a call about 1 chance in 10,000 to time out.
BIN=$1 SELF=$2 DEPTH=$3 NCLI=${4:-4} NCALLS=${5:-5000}
T_LIMIT=${T_LIMIT:-240}
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

start_server srv "$BIN/rc-bench-server" --listen udp://127.0.0.1:0 --threads 2 --stats || finish
start_server rel "$SELF/rc-relay" --server "$srv_udp" --drop 0.2 --dup 0.1 --reorder 0.2 \
	--seed 17 || finish

t0=$(date +%s%N)
for i in $(seq 1 "$NCLI"); do
	bg_run "$T_LIMIT" "$TMPD/cli$i.out" "$TMPD/cli$i.err" "$BIN/rc-bench-client" --uri "$rel_udp" \
		--proc add --mode async --depth "$DEPTH" --calls "$NCALLS" --warmup 0 --keep-going \
		--timeout 60000 --json
done
# client_done N STATUS: client N must have exited 0 with all its calls made and 0 errors.
client_done() {
	if [ "$2" -ne 0 ] || ! grep -q "\"calls\":$NCALLS,\"errors\":0," "$TMPD/cli$1.out"; then
		fail "client $1 (exit $2): $(cat "$TMPD/cli$1.out")"
		head -12 "$TMPD/cli$1.err" | sed 's/^/    /'
	else
		echo "ok   client $1: $NCALLS ADD calls at depth $DEPTH, 0 errors"
	fi
}
bg_wait client_done
secs=$(( ($(date +%s%N) - t0) / 1000000 ))
stop_server rel
stop_server srv
echo "     relay: $(cat "$TMPD/rel.err")"
stats=$(grep '^{"add_total"' "$TMPD/srv.out")
echo "     server: $stats"
CHECKS=$((CHECKS + 1))
want=$((NCLI * NCALLS))
if printf '%s\n' "$stats" | grep -q "^{\"add_total\":$want,"; then
	echo "ok   server total $want = $NCLI x $NCALLS ADD(1) calls, each run once (${secs} ms)"
else
	fail "server total is not $want: ${stats:-no --stats line}"
fi
finish

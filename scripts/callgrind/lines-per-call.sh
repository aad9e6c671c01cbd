#!/usr/bin/env bash
# scripts/callgrind/lines-per-call.sh [BUILD] -- the cache lines of code and of data one blocking
# UDP null call touches in user space, and its instructions, for remotecall's server and client
# beside the hand-made null call's (raw-pingpong --null-rpc), each process traced in turn under
# valgrind's lackey (lines.py). Between two system calls a call finds its lines cold (the
# kernel's work and the other process's evict them), so fewer lines is less time: a
# deterministic companion to the timed ratio (bench/pinned-ratio.sh null). The client figures
# include the bench programs' measuring loops (bench_now_ns, result checks).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
B=$(cd "${1:-$root/build}" && pwd)/bench
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rc-lines.XXXXXX")
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"' EXIT
# lk NAME PROGRAM ARGS...: PROGRAM under lackey, its trace in $tmp/NAME.trace; exec'd, so that
# `lk ... &` leaves valgrind itself as $! (the kill below reaches it)
lk() { exec valgrind --tool=lackey --trace-mem=yes --log-file="$tmp/$1.trace" "${@:2}"; }
uri() { # uri FILE: wait for its 'listening URI' line and print URI
	for _ in $(seq 200); do
		grep -q '^listening ' "$1" && break
		sleep 0.1
	done
	awk '/^listening / { print $2; exit }' "$1"
}
n=300
# the servers traced, driven by plain clients
(lk rcs "$B/rc-bench-server" --listen udp://127.0.0.1:0 >"$tmp/rcs.out" 2>&1) &
pids+=($!)
(lk hs "$B/raw-pingpong" --server udp://127.0.0.1:0 --null-rpc >"$tmp/hs.out" 2>&1) &
pids+=($!)
"$B/rc-bench-client" --uri "$(uri "$tmp/rcs.out")" --proc null --calls $n --warmup 0 --quiet
"$B/raw-pingpong" --client "$(uri "$tmp/hs.out")" --null-rpc --calls $n --warmup 0 >/dev/null
sleep 0.5
kill "${pids[@]}"
wait 2>/dev/null || true
pids=()
# the clients traced, against plain servers
"$B/rc-bench-server" --listen udp://127.0.0.1:0 >"$tmp/s.out" 2>&1 &
pids+=($!)
"$B/raw-pingpong" --server udp://127.0.0.1:0 --null-rpc >"$tmp/h.out" 2>&1 &
pids+=($!)
(lk rcc "$B/rc-bench-client" --uri "$(uri "$tmp/s.out")" --proc null --calls $n --warmup 0 --quiet)
(lk hc "$B/raw-pingpong" --client "$(uri "$tmp/h.out")" --null-rpc --calls $n --warmup 0 >/dev/null)
for t in "rcs remotecall server" "hs hand-made server" "rcc remotecall client" \
	"hc hand-made client"; do
	set -- $t
	printf '%-22s %s\n' "${*:2}:" "$(CALLS=$n python3 "$here/lines.py" <"$tmp/$1.trace")"
done

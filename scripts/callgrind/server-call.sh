#!/usr/bin/env bash
# scripts/callgrind/server-call.sh udp|tcp [BUILD] [N] -- user-space instructions per blocking
# null call, server side (issue 27's server budget).
#
# BUILD's rc-bench-server runs under valgrind --tool=callgrind, once driven by N and once by 2N
# null calls of BUILD's rc-bench-client (--warmup 0, not under valgrind), then stopped with
# SIGTERM; (Ir(2N) - Ir(N)) / N is the cost of one call, start-up and exit excluded. N is 2000
# unless given. Prints the figure alone on stdout. With KEEP=DIR the two profiles are kept as
# DIR/server.N.cg and DIR/server.2N.cg (compare them with cgdiff.py).
#
# UDP is deterministic (the same figure run after run). TCP is not: whether the server's
# connection finds the next call already there or waits in epoll depends on timing, and the
# figure moves by hundreds between runs (several runs; their median or their most common value).
set -euo pipefail
tr=${1:?udp or tcp}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
B=$(cd "${2:-$root/build}" && pwd)
n=${3:-2000}
# CLIENT_VG=1: the client runs under valgrind too (as bench/run.sh steps runs it), so both
# sides are equally slow and a stream server finds its next call as a real one would
CLIENT_PRE=
[ -n "${CLIENT_VG:-}" ] && CLIENT_PRE="valgrind --tool=none -q"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rc-scg.XXXXXX")
sp=
trap '[ -n "$sp" ] && kill "$sp" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

ir() { # ir CALLS: instructions the whole server run took while serving CALLS null calls
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$B/bench/rc-bench-server" \
		--listen "$tr://127.0.0.1:0" >"$tmp/srv.out" 2>"$tmp/srv.err" &
	sp=$!
	for _ in $(seq 400); do
		grep -q '^listening ' "$tmp/srv.out" && break
		sleep 0.05
	done
	local u
	u=$(awk '/^listening / { print $2; exit }' "$tmp/srv.out")
	[ -n "$u" ] || { cat "$tmp/srv.err" >&2; exit 1; }
	$CLIENT_PRE "$B/bench/rc-bench-client" --uri "$u" --proc null --calls "$1" --warmup 0 --quiet >/dev/null
	kill -TERM "$sp"
	wait "$sp" || { cat "$tmp/srv.err" >&2; exit 1; }
	sp=
	[ -n "${KEEP:-}" ] && cp "$tmp/cg.out" "$KEEP/server.$1.cg"
	awk '/^(summary|totals):/ { print $2; exit }' "$tmp/cg.out"
}
a=$(ir "$n")
b=$(ir $((2 * n)))
echo $(((b - a) / n))

#!/usr/bin/env bash
# bench/run.sh [--build DIR] [--quick|--full] [--out FILE] -- run the call benchmarks.
#
# For each transport (udp, tcp), each pinning (server and client on one core; on two cores when
# the machine has them) and each peer pair (rc->rc, tirpc->tirpc, rc->tirpc, tirpc->rc, raw),
# runs NULL and ECHO at a few sizes and appends one JSON line per run to FILE (default
# DIR/bench/results.jsonl), tagged with "transport", "pin" and "server". Prints a table at the
# end. Every server started is stopped on exit.
set -u
BUILD=build
MODE=quick
OUT=
while [ $# -gt 0 ]; do
	case $1 in
	--build) BUILD=$2; shift 2 ;;
	--quick) MODE=quick; shift ;;
	--full) MODE=full; shift ;;
	--out) OUT=$2; shift 2 ;;
	*) echo "usage: $0 [--build DIR] [--quick|--full] [--out FILE]" >&2; exit 2 ;;
	esac
done
B=$BUILD/bench
OUT=${OUT:-$B/results.jsonl}
for p in rc-bench-server rc-bench-client tirpc-bench-server tirpc-bench-client raw-pingpong; do
	[ -x "$B/$p" ] || { echo "$0: $B/$p is missing (build first)" >&2; exit 1; }
done
if [ $MODE = quick ]; then CALLS=20000; BIG=200; else CALLS=200000; BIG=2000; fi
TASKSET=$(command -v taskset || true)
NCPU=$(nproc 2>/dev/null || echo 1)
PINS="same"
[ "$NCPU" -ge 2 ] && PINS="same cross"

SRV_PID=
cleanup() { [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null && wait "$SRV_PID" 2>/dev/null; }
trap cleanup EXIT
trap 'exit 1' INT TERM

pin() { # pin CORE CMD...
	if [ -n "$TASKSET" ]; then "$TASKSET" -c "$1" "${@:2}"; else "${@:2}"; fi
}

start() { # start CORE SERVER-COMMAND... -> sets URI
	local f i=0
	f=$(mktemp)
	pin "$@" >"$f" 2>/dev/null &
	SRV_PID=$!
	until grep -q '^listening ' "$f"; do
		i=$((i + 1))
		[ $i -gt 100 ] && { echo "$0: server $* did not start" >&2; rm -f "$f"; exit 1; }
		sleep 0.05
	done
	URI=$(awk '/^listening /{ print $2; exit }' "$f")
	rm -f "$f"
}

stop() { kill "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; SRV_PID=; }

tag() { # tag TRANSPORT PIN SERVER: add fields to the JSON line on stdin
	sed "s/^{/{\"transport\":\"$1\",\"pin\":\"$2\",\"server\":\"$3\",/" | tee -a "$OUT"
}

: >>"$OUT"
FIRST=$(($(wc -l <"$OUT") + 1))
echo "# $(date -u +%FT%TZ) $MODE, $NCPU cpus, results appended to $OUT" >&2
for tr in udp tcp; do
	sizes="0 4000"
	[ $tr = tcp ] && sizes="0 4000 65536"
	for pn in $PINS; do
		sc=0; cc=0
		[ $pn = cross ] && cc=1
		for pair in rc:rc tirpc:tirpc rc:tirpc tirpc:rc; do
			cl=${pair%%:*}; sv=${pair##*:}
			start $sc "$B/$sv-bench-server" --listen "$tr://127.0.0.1:0"
			pin $cc "$B/$cl-bench-client" --uri "$URI" --proc null --calls $CALLS --json | tag $tr $pn $sv
			for s in $sizes; do
				pin $cc "$B/$cl-bench-client" --uri "$URI" --proc echo --size $s --calls $CALLS --json | tag $tr $pn $sv
			done
			[ $tr = tcp ] && pin $cc "$B/$cl-bench-client" --uri "$URI" --proc echo --size 1m --calls $BIG --json | tag $tr $pn $sv
			if [ $cl = rc ]; then
				pin $cc "$B/rc-bench-client" --mode select --uri "$URI" --proc null --calls $CALLS --json | tag $tr $pn $sv
			fi
			stop
		done
		start $sc "$B/raw-pingpong" --server "$tr://127.0.0.1:0"
		for s in $sizes; do
			pin $cc "$B/raw-pingpong" --client "$URI" --size $s --calls $CALLS --json | tag $tr $pn raw
		done
		stop
	done
done >/dev/null

# a table of this run
python3 - "$OUT" "$FIRST" <<'EOF' 2>/dev/null || tail -n +"$FIRST" "$OUT"
import json, sys
lines = open(sys.argv[1]).read().splitlines()[int(sys.argv[2]) - 1:]
rows = [json.loads(l) for l in lines if l.startswith("{")]
cols = ("transport", "pin", "impl", "server", "mode", "proc", "size", "us_per_call", "median_us", "p99_us")
print(" ".join(f"{c:>11}" for c in cols))
for r in rows:
    print(" ".join(f"{r[c]:>11.2f}" if isinstance(r[c], float) else f"{r[c]!s:>11}" for c in cols))
EOF

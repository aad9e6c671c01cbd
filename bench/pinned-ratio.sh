#!/usr/bin/env bash
# bench/pinned-ratio.sh tls|udp|null|null-tcp [BUILD] [RUNS] -- one-core ratios of issues 30
# and 27, client and server both pinned to core 0 (taskset -c 0), the figures of a ratio
# measured back to back in each run against the same servers; prints every run and the medians.
#   tls  20,000 blocking null calls over RPC-over-TLS / the same over plaintext TCP (us/call)
#   udp  50,000 null calls, --mode async --depth 64, UDP / TCP (calls/s)
#   null 50,000 blocking null calls over UDP (rc-bench-server listening on UDP alone, as in
#        bench/run.sh's null-call target) / raw-pingpong's 0-byte and 40-byte exchanges and
#        its hand-made null call (--null-rpc: the same 40- and 24-byte messages) (us/call)
#   null-tcp  the same over TCP (no hand-made null call: nan)
#   syscalls  system calls per call, client and server, of the udp pair's calls (UDP, then
#        TCP), counted with perf stat's syscall tracepoints (root): runs of RUNS x 50,000 and
#        twice that, the difference / RUNS x 50,000 (start-up left out); errors: those that
#        returned < 0 (EAGAIN)
# Certificates are made in a temporary directory with tests/runtime/tls_certs.sh.
set -euo pipefail
what=${1:?tls, udp, null, null-tcp or syscalls}
root=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${2:-$root/build}" && pwd)
R=${3:-7}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rc-ratio.XXXXXX")
sp=
trap '[ -n "$sp" ] && kill "$sp" 2>/dev/null; rm -rf "$tmp"' EXIT

field() { python3 -c "import json,sys; print(json.loads(sys.stdin.readline())['$1'])"; }
listening() { # listening FILE...: wait until each file has a 'listening' line, then a little
	local f
	for f in "$@"; do
		for _ in $(seq 100); do
			grep -q '^listening' "$f" && break
			sleep 0.05
		done
	done
	sleep 0.2
}

if [ "$what" = null ] || [ "$what" = null-tcp ]; then
	tr=udp
	[ "$what" = null-tcp ] && tr=tcp
	taskset -c 0 "$B/bench/rc-bench-server" --listen "$tr://127.0.0.1:0" >"$tmp/srv" 2>&1 &
	sp=$!
	taskset -c 0 "$B/bench/raw-pingpong" --server "$tr://127.0.0.1:0" >"$tmp/raw" 2>&1 &
	rp=$!
	hp=
	echo "listening -" >"$tmp/hand"
	[ $tr = udp ] && { # the hand-made null call: the same 40- and 24-byte messages
		taskset -c 0 "$B/bench/raw-pingpong" --server udp://127.0.0.1:0 --null-rpc >"$tmp/hand" 2>&1 &
		hp=$!
	}
	trap 'kill $sp $rp $hp 2>/dev/null; rm -rf "$tmp"' EXIT
	listening "$tmp/srv" "$tmp/raw" "$tmp/hand"
	ur=$(awk '/^listening/ { print $2; exit }' "$tmp/srv")
	uw=$(awk '/^listening/ { print $2; exit }' "$tmp/raw")
	uh=$(awk '/^listening/ { print $2; exit }' "$tmp/hand")
	for _ in $(seq "$R"); do
		a=$(taskset -c 0 "$B/bench/rc-bench-client" --uri "$ur" --proc null --warmup 1000 \
			--calls 50000 --json | field us_per_call)
		b=$(taskset -c 0 "$B/bench/raw-pingpong" --client "$uw" --size 0 --warmup 1000 \
			--calls 50000 --json | field us_per_call)
		c=$(taskset -c 0 "$B/bench/raw-pingpong" --client "$uw" --size 40 --warmup 1000 \
			--calls 50000 --json | field us_per_call)
		d=nan
		[ -n "$hp" ] && d=$(taskset -c 0 "$B/bench/raw-pingpong" --client "$uh" --null-rpc \
			--warmup 1000 --calls 50000 --json | field us_per_call)
		echo "$a $b $c $d"
	done | python3 -c '
import statistics, sys
rows = [tuple(map(float, l.split())) for l in sys.stdin]
for a, b, c, d in rows:
    print("rc null %.3f  raw 0 B %.3f  raw 40 B %.3f  hand null %.3f us/call  ratio %.3f / %.3f / %.3f" %
          (a, b, c, d, a / b, a / c, a / d))
m = [statistics.median(r[i] for r in rows) for i in range(4)]
print("median rc null %.3f  raw 0 B %.3f  raw 40 B %.3f  hand null %.3f  ratio of medians %.3f / %.3f / %.3f"
      "  median of ratios %.3f / %.3f / %.3f  hand null / raw 0 B %.3f" %
      (m[0], m[1], m[2], m[3], m[0] / m[1], m[0] / m[2], m[0] / m[3],
       statistics.median(r[0] / r[1] for r in rows), statistics.median(r[0] / r[2] for r in rows),
       statistics.median(r[0] / r[3] for r in rows), statistics.median(r[3] / r[1] for r in rows)))'
	exit 0
fi

if [ "$what" = syscalls ]; then
	taskset -c 0 "$B/bench/rc-bench-server" --listen udp://127.0.0.1:0 \
		--listen tcp://127.0.0.1:0 >"$tmp/srv" 2>&1 &
	sp=$!
	listening "$tmp/srv"
	ev="-e raw_syscalls:sys_enter -e raw_syscalls:sys_exit --filter ret<0"
	n=$((50000 * R))
	for tr in udp tcp; do
		u=$(awk -v t=$tr '/^listening/ && index($2, t) == 1 { print $2 }' "$tmp/srv")
		for k in 1 2; do # n and 2n calls: the difference leaves start-up and exit out
			perf stat -x, -o "$tmp/s$k" $ev -p "$sp" &
			pp=$!
			sleep 0.3
			perf stat -x, -o "$tmp/c$k" $ev taskset -c 0 "$B/bench/rc-bench-client" --uri "$u" \
				--proc null --calls $((k * n)) --warmup 0 --mode async --depth 64 --quiet
			kill -INT $pp
			wait $pp || true
		done
		python3 -c '
import sys
def count(f):
    c = {}
    for l in open(f):
        x = l.strip().split(",")
        if len(x) > 2 and x[0].isdigit():
            c[x[2]] = int(x[0])
    return c.get("raw_syscalls:sys_enter", 0), c.get("raw_syscalls:sys_exit", 0)
n, d = int(sys.argv[1]), sys.argv[3]
per = [(b - a) / n for a, b in zip(count(d + "/c1") + count(d + "/s1"), count(d + "/c2") + count(d + "/s2"))]
print("%s syscalls/call client %.4f (errors %.4f)  server %.4f (errors %.4f)  sum %.4f" %
      (sys.argv[2], per[0], per[1], per[2], per[3], per[0] + per[2]))' "$n" $tr "$tmp"
	done
	exit 0
fi

if [ "$what" = tls ]; then
	bash "$root/tests/runtime/tls_certs.sh" "$tmp/c" >/dev/null 2>&1
	taskset -c 0 "$B/bench/rc-bench-server" --listen tcp://127.0.0.1:0 \
		--tls-cert "$tmp/c/server.pem" --tls-key "$tmp/c/server.key" >"$tmp/srv" 2>&1 &
else
	taskset -c 0 "$B/bench/rc-bench-server" --listen udp://127.0.0.1:0 \
		--listen tcp://127.0.0.1:0 >"$tmp/srv" 2>&1 &
fi
sp=$!
listening "$tmp/srv"
ut=$(awk '/^listening tcp/ { print $2 }' "$tmp/srv")
uu=$(awk '/^listening udp/ { print $2 }' "$tmp/srv")
for _ in $(seq "$R"); do
	if [ "$what" = tls ]; then
		a=$(taskset -c 0 "$B/bench/rc-bench-client" --uri "$ut" --proc null --calls 20000 --json \
			--tls required --tls-ca "$tmp/c/ca.pem" 2>/dev/null | field us_per_call)
		b=$(taskset -c 0 "$B/bench/rc-bench-client" --uri "$ut" --proc null --calls 20000 --json |
			field us_per_call)
	else
		a=$(taskset -c 0 "$B/bench/rc-bench-client" --uri "$uu" --proc null --calls 50000 \
			--mode async --depth 64 --json | field calls_per_s)
		b=$(taskset -c 0 "$B/bench/rc-bench-client" --uri "$ut" --proc null --calls 50000 \
			--mode async --depth 64 --json | field calls_per_s)
	fi
	echo "$a $b"
done | python3 -c '
import statistics, sys
what = sys.argv[1]
names = ("tls us/call", "plain us/call") if what == "tls" else ("udp calls/s", "tcp calls/s")
rows = [tuple(map(float, l.split())) for l in sys.stdin]
for a, b in rows:
    print("%s %.2f  %s %.2f  ratio %.3f" % (names[0], a, names[1], b, a / b))
ma, mb = statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
print("median %s %.2f  %s %.2f  ratio of medians %.3f  median of ratios %.3f" %
      (names[0], ma, names[1], mb, ma / mb, statistics.median(r[0] / r[1] for r in rows)))' "$what"

#!/usr/bin/env bash
# bench/tests/modes.sh BIN -- rc-bench-client's async and multi modes (and the other options the
# benchmark suite relies on) print correct JSON and verify every reply; failures propagate.
# BIN is the folder holding rc-bench-*, tirpc-bench-*, raw-pingpong. No performance is asserted.
set -u
BIN=${1:?usage: modes.sh BIN}
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/rc-bench-modes.XXXXXX")
PIDS=""
FAILS=0
CHECKS=0
cleanup() {
	local p
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	sleep 0.1
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMPD"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() { FAILS=$((FAILS + 1)); echo "FAIL $*"; }

# start NAME CMD... -- start a server, wait for one "listening" line per --listen; sets NAME_udp/NAME_tcp
start() {
	local name=$1 n=0 a i=0 pid
	shift
	for a in "$@"; do case $a in --listen | --server) n=$((n + 1)) ;; esac; done
	: >"$TMPD/$name.out" # exists before the loop reads it (else grep -c prints nothing)
	"$@" >"$TMPD/$name.out" 2>"$TMPD/$name.err" &
	pid=$!
	PIDS="$PIDS $pid"
	while [ "$(grep -c '^listening ' "$TMPD/$name.out" 2>/dev/null)" -lt "$n" ]; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$pid" 2>/dev/null; then
			fail "$name did not start: $(cat "$TMPD/$name.err")"
			exit 1
		fi
		sleep 0.05
	done
	eval "${name}_udp=$(awk '/^listening udp/ { print $2; exit }' "$TMPD/$name.out")"
	eval "${name}_tcp=$(awk '/^listening tcp/ { print $2; exit }' "$TMPD/$name.out")"
}

# json DESC 'PYTHON-CONDITION' CMD... -- CMD exits 0 and prints one JSON line r satisfying the
# condition (a Python expression over r)
json() {
	local desc=$1 cond=$2 rc
	shift 2
	CHECKS=$((CHECKS + 1))
	timeout 60 "$@" >"$TMPD/out" 2>"$TMPD/err"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$desc: exit $rc: $(head -c 400 "$TMPD/err")"
		return
	fi
	if python3 - "$cond" "$TMPD/out" <<'EOF'; then echo "ok   $desc"; else fail "$desc: $(head -c 400 "$TMPD/out")"; fi
import json, sys
lines = [l for l in open(sys.argv[2]) if l.startswith("{")]
if len(lines) != 1:
    sys.exit(1)
r = json.loads(lines[0])
keys = ("impl", "mode", "uri", "dests", "proc", "size", "calls", "errors", "threads", "depth", "elapsed_s",
        "us_per_call", "calls_per_s", "median_us", "p99_us", "min_us", "max_us", "mean_us", "stdev_us")
if "bench" not in r and not all(k in r for k in keys):
    print("missing keys", [k for k in keys if k not in r])
    sys.exit(1)
sys.exit(0 if eval(sys.argv[1], {"r": r}) else 1)
EOF
}

# expect_fail DESC CODE PATTERN CMD... -- CMD exits with CODE and PATTERN (grep -E) on stderr
expect_fail() {
	local desc=$1 code=$2 pat=$3 rc
	shift 3
	CHECKS=$((CHECKS + 1))
	timeout 60 "$@" >"$TMPD/out" 2>"$TMPD/err"
	rc=$?
	if [ $rc -eq "$code" ] && grep -Eq -e "$pat" "$TMPD/err"; then
		echo "ok   $desc"
	else
		fail "$desc: exit $rc (want $code), stderr: $(head -c 300 "$TMPD/err")"
	fi
}

C=$BIN/rc-bench-client
start rc "$BIN/rc-bench-server" --listen udp://127.0.0.1:0 --listen tcp://127.0.0.1:0
start ti "$BIN/tirpc-bench-server" --listen udp://127.0.0.1:0 --listen tcp://127.0.0.1:0
start ex "$BIN/rc-bench-server" --work-dist exp --seed 7 --listen udp://127.0.0.1:0

# ---- async -----------------------------------------------------------------------------------------
json "async null, TCP, depth 64" 'r["mode"] == "async" and r["depth"] == 64 and r["calls"] == 20000 and r["errors"] == 0 and r["dests"] == 1 and r["proc"] == "null"' \
	"$C" --mode async --depth 64 --uri "$rc_tcp" --proc null --calls 20000 --json
json "async echo 3000 bytes, UDP, depth 8 (bytes verified)" 'r["mode"] == "async" and r["size"] == 3000 and r["calls"] == 2000 and r["errors"] == 0' \
	"$C" --mode async --depth 8 --uri "$rc_udp" --proc echo --size 3000 --calls 2000 --json
json "async echo to the libtirpc server, TCP, depth 16" 'r["calls"] == 2000 and r["errors"] == 0 and r["depth"] == 16' \
	"$C" --mode async --depth 16 --uri "$ti_tcp" --proc echo --size 100 --calls 2000 --json
json "async sendr on two clients at once, depth 4 each" 'r["dests"] == 2 and r["calls"] == 1000 and r["errors"] == 0' \
	"$C" --mode async --depth 4 --uri "$rc_udp" --uri "$rc_tcp" --proc sendr --size 10 --calls 1000 --json
json "async add (non-idempotent, totals checked)" 'r["errors"] == 0 and r["calls"] == 500' \
	"$C" --mode async --depth 1 --uri "$rc_tcp" --proc add --arg 3 --calls 500 --json
json "async work with exponential arguments (each result checked)" 'r["errors"] == 0 and r["calls"] == 50' \
	"$C" --mode async --depth 4 --uri "$rc_udp" --proc work --arg 200 --arg-dist exp --seed 1 --calls 50 --json
json "async default depth is 16" 'r["depth"] == 16' \
	"$C" --mode async --uri "$rc_tcp" --proc null --calls 100 --json

# ---- multi -----------------------------------------------------------------------------------------
json "multi echo to three servers (rc UDP, rc TCP, libtirpc UDP)" 'r["mode"] == "multi" and r["dests"] == 3 and r["calls"] == 200 and r["errors"] == 0 and r["uri"].count(",") == 2' \
	"$C" --mode multi --uri "$rc_udp" --uri "$rc_tcp" --uri "$ti_udp" --proc echo --size 2000 --calls 200 --json
json "multi null to one server" 'r["mode"] == "multi" and r["dests"] == 1 and r["errors"] == 0' \
	"$C" --mode multi --uri "$rc_udp" --proc null --calls 300 --json
json "multi work, 2 ms, two servers, one round = one multi-call" 'r["dests"] == 2 and r["calls"] == 10 and r["min_us"] >= 1500' \
	"$C" --mode multi --uri "$rc_udp" --uri "$ex_udp" --proc work --arg 2000 --calls 10 --warmup 0 --json
json "multi work with exponential arguments" 'r["errors"] == 0 and r["calls"] == 10' \
	"$C" --mode multi --uri "$rc_udp" --uri "$rc_tcp" --proc work --arg 500 --arg-dist exp --calls 10 --json
json "multi add to the same server twice per round" 'r["errors"] == 0 and r["dests"] == 2' \
	"$C" --mode multi --uri "$rc_tcp" --uri "$rc_tcp" --proc add --calls 50 --json
json "block work against a --work-dist exp server (argument returned)" 'r["errors"] == 0 and r["calls"] == 20' \
	"$C" --uri "$ex_udp" --proc work --arg 300 --calls 20 --json

# ---- failures propagate --------------------------------------------------------------------------
expect_fail "multi: a wrong version fails every destination, exit 1" 1 "version mismatch|PROGVERSMISMATCH" \
	"$C" --mode multi --uri "$rc_udp" --uri "$rc_tcp" --proc null --vers 9 --calls 5
expect_fail "async: an unknown procedure fails, exit 1" 1 "procedure unavailable|PROCUNAVAIL" \
	"$C" --mode async --depth 4 --uri "$rc_tcp" --procnum 99 --calls 20
expect_fail "multi: an unreachable destination is reported by its URI" 1 "udp://127\.0\.0\.1:9" \
	"$C" --mode multi --uri "$rc_udp" --uri udp://127.0.0.1:9 --proc null --calls 3 --timeout 400
expect_fail "--depth only for modes that take it" 2 "--depth does not apply" "$C" --uri "$rc_udp" --proc null --depth 4
expect_fail "--threads not with --mode async" 2 "--threads does not apply" "$C" --mode async --threads 2 --uri "$rc_udp" --proc null
expect_fail "--threads not with --mode multi" 2 "--threads does not apply" "$C" --mode multi --threads 2 --uri "$rc_udp" --proc null
expect_fail "--arg-dist exp only with work" 2 "applies to --proc work" "$C" --uri "$rc_udp" --proc null --arg-dist exp
expect_fail "bad --work-dist" 2 "bad --work-dist" "$BIN/rc-bench-server" --work-dist poisson --listen udp://127.0.0.1:0

# ---- the other programs the suite runs ------------------------------------------------------------
start rw "$BIN/raw-pingpong" --server udp://127.0.0.1:0
json "raw-pingpong --wait select" 'r["mode"] == "select" and r["errors"] == 0 and r["size"] == 4' \
	"$BIN/raw-pingpong" --client "$rw_udp" --wait select --size 4 --calls 200 --json
start nr "$BIN/raw-pingpong" --server udp://127.0.0.1:0 --null-rpc
json "raw-pingpong --null-rpc client against rc-bench-server (headers checked)" 'r["impl"] == "raw" and r["proc"] == "null" and r["calls"] == 300 and r["errors"] == 0' \
	"$BIN/raw-pingpong" --client "$rc_udp" --null-rpc --calls 300 --json
json "rc-bench-client against raw-pingpong --null-rpc" 'r["impl"] == "remotecall" and r["proc"] == "null" and r["calls"] == 300 and r["errors"] == 0' \
	"$C" --uri "$nr_udp" --proc null --calls 300 --json
expect_fail "raw-pingpong --null-rpc: an echo is not a reply" 1 "wrong size or content" \
	"$BIN/raw-pingpong" --client "$rw_udp" --null-rpc --calls 3
expect_fail "raw-pingpong --null-rpc is for UDP" 2 "for UDP" "$BIN/raw-pingpong" --client tcp://127.0.0.1:9 --null-rpc
# busy-polling (--spin, fixed names): the raw floor, a spinning server and a spinning client
start sp "$BIN/rc-bench-server" --listen udp://127.0.0.1:0 --listen tcp://127.0.0.1:0 --spin 200
json "rc-bench-client --spin 200 against rc-bench-server --spin 200, UDP (epoll loop)" 'r["errors"] == 0 and r["calls"] == 500' \
	"$BIN/rc-bench-client" --uri "$sp_udp" --proc null --calls 500 --spin 200 --json
json "rc-bench-client --spin 200, TCP, echo 3000 bytes" 'r["errors"] == 0 and r["calls"] == 300' \
	"$BIN/rc-bench-client" --uri "$sp_tcp" --proc echo --size 3000 --calls 300 --spin 200 --json
start s1 "$BIN/rc-bench-server" --listen udp://127.0.0.1:0 --spin 50
json "rc-bench-server --spin 50 on a lone UDP listener (blocking receives)" 'r["errors"] == 0 and r["calls"] == 500' \
	"$BIN/rc-bench-client" --uri "$s1_udp" --proc add --arg 1 --calls 500 --json
start rs "$BIN/raw-pingpong" --server udp://127.0.0.1:0 --spin
json "raw-pingpong --spin (both sides)" 'r["mode"] == "spin" and r["errors"] == 0 and r["calls"] == 500' \
	"$BIN/raw-pingpong" --client "$rs_udp" --spin --size 40 --calls 500 --json
kill $(echo $PIDS | awk '{ print $NF }') 2>/dev/null # a spinning server burns a core: stop it now
# batched null-call servers (raw-pingpong --batch, the udpio experiment): each answers every call
# of a pipelined client; the io_uring ones only where liburing was built in and the kernel
# allows io_uring (said so when skipped)
for m in mmsg offload uring uring-offload uring-ms; do
	"$BIN/raw-pingpong" --server udp://127.0.0.1:0 --null-rpc --batch $m >"$TMPD/b.out" 2>"$TMPD/b.err" &
	bp=$!
	i=0
	while ! grep -q '^listening ' "$TMPD/b.out" && kill -0 $bp 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	sleep 0.1 # a set-up failure (io_uring refused) ends the server right after its line
	if ! kill -0 $bp 2>/dev/null && grep -Eq 'without liburing|io_uring_queue_init|buf_ring' "$TMPD/b.err"; then
		echo "skip raw-pingpong --batch $m: $(head -c 200 "$TMPD/b.err")"
		continue
	fi
	bu=$(awk '/^listening /{ print $2; exit }' "$TMPD/b.out")
	json "raw-pingpong --batch $m answers 2000 pipelined calls" 'r["errors"] == 0 and r["calls"] == 2000' \
		"$BIN/rc-bench-client" --mode async --depth 64 --uri "$bu" --proc null --calls 2000 --json
	kill $bp 2>/dev/null
	wait $bp 2>/dev/null
done
expect_fail "raw-pingpong --batch needs a UDP --null-rpc server" 2 "null-rpc" \
	"$BIN/raw-pingpong" --server udp://127.0.0.1:0 --batch mmsg
expect_fail "raw-pingpong --batch: an unknown mode" 2 "bad --batch" \
	"$BIN/raw-pingpong" --server udp://127.0.0.1:0 --null-rpc --batch sendfile
expect_fail "raw-pingpong --spin is for UDP" 2 "for UDP" "$BIN/raw-pingpong" --client tcp://127.0.0.1:9 --spin
expect_fail "rc-bench-server --spin over one second" 2 "bad --spin" "$BIN/rc-bench-server" --listen udp://127.0.0.1:0 --spin 2000000
expect_fail "tirpc-bench-client has no --spin" 2 "no busy-polling" "$BIN/tirpc-bench-client" --uri udp://127.0.0.1:9 --proc null --spin 10
json "rc-bench-local inproc echo (verified)" 'r["mode"] == "inproc" and r["calls"] == 1000 and r["size"] == 4000' \
	"$BIN/rc-bench-local" --what inproc --proc echo --size 4000 --calls 1000 --json
json "rc-bench-local steps (one JSON line, every step)" 'r["bench"] == "steps" and all(r[k] >= 0 for k in ("enc_us", "send_us", "wait_us", "recv_us", "dec_us", "srv_recv_us", "srv_send_us", "srv_decode_dispatch_us"))' \
	"$BIN/rc-bench-local" --what steps --uri "$rc_udp" --size 1392 --calls 200 --json
json "rc-bench-local first (by port, TCP)" 'r["bench"] == "first" and r["trials"] == 3 and r["later_calls"] == 30' \
	"$BIN/rc-bench-local" --what first --uri "$rc_tcp" --trials 3 --calls 10 --json
json "rc-bench-local spawn" 'r["bench"] == "spawn" and r["trials"] == 2' \
	"$BIN/rc-bench-local" --what spawn --server "$BIN/rc-bench-server" --listen tcp://127.0.0.1:0 --trials 2 --json

# ---- --trace: the runtime's trace points, client and server ------------------------------------
start tr "$BIN/rc-bench-server" --trace --listen udp://127.0.0.1:0
tr_pid=${PIDS##* }
CHECKS=$((CHECKS + 1))
if timeout 60 "$BIN/rc-bench-client" --uri "$tr_udp" --proc echo --size 100 --calls 300 --trace \
	--json >"$TMPD/trc.out" 2>"$TMPD/trc.err" && python3 -c '
import json, sys
a, b = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert a["calls"] == 300 and a["errors"] == 0
assert b["trace"] == "client" and b["calls"] == 300
steps = ("encode", "send", "wait", "decode")
assert all(b[k + "_us"] >= 0 for k in steps) and b["wait_us"] > 0
# the steps partition each call, so their means add up to the mean total (medians need not:
# unpinned, some calls are same-core and some cross-core)
assert abs(sum(b[k + "_mean_us"] for k in steps) - b["total_mean_us"]) < 0.02 * b["total_mean_us"] + 0.01
' "$TMPD/trc.out"; then
	echo "ok   rc-bench-client --trace: a result line, then the client's steps"
else
	fail "rc-bench-client --trace: $(head -c 400 "$TMPD/trc.out") $(head -c 200 "$TMPD/trc.err")"
fi
kill "$tr_pid"
for _ in $(seq 50); do grep -q '^{"trace"' "$TMPD/tr.out" 2>/dev/null && break; sleep 0.1; done
CHECKS=$((CHECKS + 1))
if python3 -c '
import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{\"trace\"")][0]
assert r["trace"] == "server" and r["calls"] >= 300
assert all(r[k + "_us"] >= 0 for k in ("dispatch", "args", "proc", "encode", "send", "total"))
' "$TMPD/tr.out"; then
	echo "ok   rc-bench-server --trace: the server's steps at exit"
else
	fail "rc-bench-server --trace: $(cat "$TMPD/tr.out")"
fi
expect_fail "rc-bench-client --trace needs one thread" 2 "one thread" \
	"$BIN/rc-bench-client" --uri "$rc_udp" --proc null --threads 2 --trace
expect_fail "tirpc-bench-client refuses --trace" 2 "trace points" \
	"$BIN/tirpc-bench-client" --uri "$rc_udp" --proc null --trace

echo "$((CHECKS - FAILS))/$CHECKS checks passed"
[ $FAILS -eq 0 ]

#!/usr/bin/env bash
# bench/run.sh -- the paper-reproduction benchmark suite (what `make bench` runs).
#
#   bench/run.sh [--build DIR] [--quick|--full|--smoke] [--only EXP[,EXP...]] [--out DIR]
#                [--no-netns] [--no-report]
#
# Re-runs the experiments of the five papers in /work/shared/seeds on this machine with
# remotecall, the libtirpc peer and a raw-socket baseline, in one run:
#
#   en        Elliott & Nutt Tables 2-3: C calls; RPC vs raw UDP/TCP, block vs select, 0/2/4-byte
#             arguments, local and remote, client and server on one core and on two
#   steps     where the time of one call goes (E&N Table 5, DCE Figures 1-2 and Table 2)
#   courier   Larus Tables 1-4 and 9: 0/4/400/4000-byte arguments, with and without a result,
#             TCP vs UDP
#   dce       Khandker et al. Figure 3 (latency vs request size, first vs later calls) and
#             Table 1 (throughput with 1-10 caller threads sharing one client)
#   parpc     Martin et al. Figure 6: C call, in-process, local, remote, first calls
#   multirpc  Satyanarayanan & Siegel Tables I-1..I-9: iterative vs multi-call to N servers
#   pipeline  beyond the papers: pipelined async calls at depths 1-256 beside libtirpc
#   xdr       beyond the papers: XDR encode/decode MB/s beside libtirpc
#   tls       beyond the papers: RPC-over-TLS (RFC 9289) null call and 4 KiB / 64 KiB / 1 MiB
#             echo beside plaintext, with `openssl speed -evp aes-128-gcm` as the crypto limit
#   quic      beyond the papers: RPC-over-QUIC beside RPC-over-TLS (issue 43): null call, pipelined
#             depth 64, 1 MiB echo, and null calls during a 16 MiB echo on the same client
#             (head-of-line blocking), server on core 0 and client on core 1
#   bulk      beyond the papers: echo of 64 KiB / 1 MiB / 16 MiB over TCP, remotecall beside
#             libtirpc and a raw socket echoing the same bytes, one core and two
#   load      beyond the papers: one server's throughput under 1-4 client processes, each with
#             16 null calls in flight, UDP and TCP, remotecall's server beside libtirpc's
#   spin      beyond the papers: UDP null calls across two cores with both sides busy-polling
#             (rc-bench-server/-client --spin US) beside raw-pingpong --spin, and both sleeping,
#             with the share of a core each side keeps busy
#   udpio     beyond the papers: which kernel interface a UDP server should batch datagrams
#             with -- recvmmsg/sendmmsg, io_uring, each with and without UDP GRO/GSO (raw-pingpong
#             --batch) -- beside rc-bench-server, under one pipelined client: calls/s and the
#             server's CPU time per call
#   conns     beyond the papers: K idle TCP connections (1k, 5k, 15k: up to the descriptor limit
#             less headroom) held against rc-bench-server and tirpc-bench-server: accept rate,
#             server RSS per idle connection, its CPU while they idle, a fresh client's null
#             call (median, p99) with none held and with them (rc-bench-conns)
#
# "Remote" runs servers and clients in two network namespaces joined by a veth pair (MTU 1500,
# 10.250.0.1/24 and 10.250.0.2/24) when running as root and `ip netns` works; otherwise only
# "local" (loopback) runs and the report says why. Every process, namespace and rpcbind this
# script starts is stopped on exit. A failing step is written down (failures.jsonl and the
# report) and the run goes on.
#
# Results: bench/results/<timestamp>/ (raw.jsonl, meta.json, report.md, *.csv, *.png) and the
# symlink bench/results/latest; --out DIR writes to DIR instead (and leaves latest alone).
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
BUILD=$ROOT/build
MODE=quick
ONLY=""
OUT=""
USE_NETNS=1
REPORT=1
ALL_EXPS="en steps courier dce parpc multirpc pipeline xdr tls quic bulk load spin udpio conns defer gss callback"
CMDLINE="$0 $*"

usage() {
	sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
	case $1 in
	--build) BUILD=$2; shift 2 ;;
	--quick) MODE=quick; shift ;;
	--full) MODE=full; shift ;;
	--smoke) MODE=smoke; shift ;;
	--only) ONLY=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--no-netns) USE_NETNS=0; shift ;;
	--no-report) REPORT=0; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "$0: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
done
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
B=$BUILD/bench
EXPS=$ALL_EXPS
if [ -n "$ONLY" ]; then
	EXPS=""
	for e in ${ONLY//,/ }; do
		case " $ALL_EXPS " in
		*" $e "*) EXPS="$EXPS $e" ;;
		*) echo "$0: unknown experiment '$e' (one of: $ALL_EXPS)" >&2; exit 2 ;;
		esac
	done
fi
for p in rc-bench-server rc-bench-client rc-bench-local tirpc-bench-server tirpc-bench-client \
	raw-pingpong; do
	[ -x "$B/$p" ] || { echo "$0: $B/$p is missing (build first: make build)" >&2; exit 1; }
done

TS=$(date -u +%Y%m%dT%H%M%SZ)
if [ -n "$OUT" ]; then
	RES=$OUT
	LINK_LATEST=0
else
	RES=$HERE/results/$TS
	LINK_LATEST=1
fi
mkdir -p "$RES" || exit 1
RES=$(cd "$RES" && pwd)
RAW=$RES/raw.jsonl
FAILS=$RES/failures.jsonl
LOG=$RES/run.log
: >"$RAW"
: >"$FAILS"
: >"$LOG"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/rcbench.XXXXXX")

# ---- sizes of the run --------------------------------------------------------------------------
# TRIALS: repetitions of every measurement (interleaved); CALLS: calls per measurement.
case $MODE in
smoke)
	TRIALS=1; TARGET_TRIALS=2; MAXS=1; CALLS=200; CALLS_SLOW=100; STEP_CALLS=200; FIRST_TRIALS=3; PARPC_TRIALS=3
	MR_WORKS="10"; MR_NS="1 2"; MR_NS_1S=""; MR_ITER_ROUNDS=1; MR_MULTI_ROUNDS=2
	MR_NULL_TRIALS=2; MR_NULL_CALLS=100
	PIPE_DEPTHS="1 16"; PIPE_CALLS=2000; DCE_THREADS="1 2"; DCE_CALLS=200
	FIG3_SIZES="0 1500 4016"; FIG3_FIRST="0 4016"; FIG3_CALLS=100; XDR_ARGS="--reps 1 --min-ms 2 --elems 4096"
	PINS="cross"; ;;
quick)
	TRIALS=3; TARGET_TRIALS=9; MAXS=1.5; CALLS=4000; CALLS_SLOW=2000; STEP_CALLS=3000; FIRST_TRIALS=20; PARPC_TRIALS=32
	MR_WORKS="100"; MR_NS="1 2 5 10 20 50"; MR_NS_1S=""; MR_ITER_ROUNDS=3; MR_MULTI_ROUNDS=5
	MR_NULL_TRIALS=5; MR_NULL_CALLS=1000
	PIPE_DEPTHS="1 2 4 8 16 32 64 128 256"; PIPE_CALLS=200000; DCE_THREADS="1 2 3 4 5 6 7 8 9 10"
	DCE_CALLS=10000
	FIG3_SIZES="0 512 1024 1424 1428 1432 1436 1472 1480 1500 2000 2904 2908 2912 2960 3000 4016 4360 4400 5832 5836 8192 12048 16064 24096 32768 49152 65000"
	FIG3_FIRST="0 4016 16064 24096 65000"; FIG3_CALLS=1000; XDR_ARGS="--reps 5 --min-ms 10"
	PINS="same cross"; ;;
full)
	TRIALS=7; TARGET_TRIALS=21; MAXS=10; CALLS=20000; CALLS_SLOW=10000; STEP_CALLS=20000; FIRST_TRIALS=128; PARPC_TRIALS=128
	MR_WORKS="10 50 100 1000"; MR_NS="1 2 5 10 20 50 100 200 500"; MR_NS_1S="1 2 5 10 20 50"
	MR_ITER_ROUNDS=3; MR_MULTI_ROUNDS=10; MR_NULL_TRIALS=10; MR_NULL_CALLS=1000
	PIPE_DEPTHS="1 2 4 8 16 32 64 128 256"; PIPE_CALLS=1000000; DCE_THREADS="1 2 3 4 5 6 7 8 9 10"
	DCE_CALLS=30000
	FIG3_SIZES=""
	for s in 0 256 512 1024 1392 1393; do FIG3_SIZES="$FIG3_SIZES $s"; done
	# UDP fragments carry 1480 bytes of IP payload; a call adds 8 (UDP) + 44 (header, length)
	# bytes: fragment k+1 starts at 1480k - 52 bytes of data. TCP segments carry 1448 bytes
	# (MSS with timestamps); a record adds 4 + 44 bytes: segment k+1 starts at 1448k - 48.
	for k in 1 2 3 4 5 6; do
		u=$((1480 * k - 52)); t=$((1448 * k - 48))
		FIG3_SIZES="$FIG3_SIZES $((u - 4)) $u $((u + 4)) $((t - 4)) $t $((t + 4))"
	done
	for s in 1472 1480 1500 2944 2960 3000 4016 4017 4096 8032 8033 8192 12048 12049 16064 16065 \
		16384 20080 20081 24096 24097 32128 32129 32768 40000 48192 48193 49152 56000 60000 \
		64256 65000 65460; do
		FIG3_SIZES="$FIG3_SIZES $s"
	done
	FIG3_SIZES=$(printf '%s\n' $FIG3_SIZES | sort -n | uniq | tr '\n' ' ')
	FIG3_FIRST="0 1392 4016 8032 16064 24096 32768 65000"; FIG3_CALLS=3000; XDR_ARGS=""
	PINS="same cross"; ;;
esac
NCPU=$(nproc 2>/dev/null || echo 1)
if [ "$NCPU" -lt 2 ]; then PINS="same"; fi
# cores: "cross" = server on core 0, client on core 1; "same" = both on core 1 (core 0 alone)
srv_core() { if [ "$1" = same ]; then echo $((NCPU > 1 ? 1 : 0)); else echo 0; fi; }
cli_core() { echo $((NCPU > 1 ? 1 : 0)); }

# ---- progress ------------------------------------------------------------------------------------
# Rough seconds per experiment (quick mode on a 2-core VM); scaled by how the finished ones went.
declare -A EST_quick=([en]=80 [steps]=20 [courier]=35 [dce]=90 [parpc]=25 [multirpc]=110 [pipeline]=30 [xdr]=8 [tls]=40 [quic]=45 [bulk]=45 [load]=40 [spin]=20 [udpio]=45 [conns]=90 [defer]=25 [gss]=30 [callback]=15)
declare -A EST_full=([en]=500 [steps]=60 [courier]=180 [dce]=400 [parpc]=120 [multirpc]=1800 [pipeline]=120 [xdr]=30 [tls]=150 [quic]=120 [bulk]=330 [load]=120 [spin]=60 [udpio]=120 [conns]=300 [defer]=60 [gss]=90 [callback]=60)
declare -A EST_smoke=([en]=4 [steps]=2 [courier]=3 [dce]=5 [parpc]=3 [multirpc]=3 [pipeline]=2 [xdr]=1 [tls]=4 [quic]=8 [bulk]=6 [load]=4 [spin]=3 [udpio]=6 [conns]=10 [defer]=3 [gss]=8 [callback]=5)
est() { local v="EST_${MODE}[$1]"; echo "${!v:-30}"; }
START=$(date +%s)
EXP_START=$START
CUR_EXP=""
DONE_EST=0
DONE_ACT=0
LAST_PRINT=0
IS_TTY=0
[ -t 2 ] && IS_TTY=1
fmt_t() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }
progress() { # progress TEXT
	local now el cur left scale100 e rem=0 seen=0
	now=$(date +%s)
	el=$((now - START))
	cur=$((now - EXP_START))
	scale100=100
	[ "$DONE_EST" -gt 0 ] && scale100=$((DONE_ACT * 100 / DONE_EST))
	[ $scale100 -lt 50 ] && scale100=50
	[ $scale100 -gt 300 ] && scale100=300
	for e in $EXPS; do
		if [ $seen = 1 ]; then rem=$((rem + $(est "$e"))); fi
		[ "$e" = "$CUR_EXP" ] && seen=1
	done
	left=$(( (rem + $(est "$CUR_EXP")) * scale100 / 100 - cur ))
	[ $left -lt $((rem * scale100 / 100)) ] && left=$((rem * scale100 / 100))
	local line="[$CUR_EXP] $1 | elapsed $(fmt_t $el) | ~$(fmt_t $left) left"
	echo "$(date -u +%T) $line" >>"$LOG"
	if [ $IS_TTY = 1 ]; then
		printf '\r\033[K%s' "${line:0:$(( $(tput cols 2>/dev/null || echo 120) - 1 ))}" >&2
	elif [ $((now - LAST_PRINT)) -ge 10 ]; then
		echo "$line" >&2
		LAST_PRINT=$now
	fi
}
load1() { cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0; }
exp_begin() {
	CUR_EXP=$1
	EXP_START=$(date +%s)
	EXP_LOAD=$(load1)
	LAST_PRINT=0
	progress "start"
}
exp_end() {
	local now
	now=$(date +%s)
	DONE_EST=$((DONE_EST + $(est "$CUR_EXP")))
	DONE_ACT=$((DONE_ACT + now - EXP_START))
	echo "$(date -u +%T) [$CUR_EXP] done in $((now - EXP_START)) s" >>"$LOG"
	echo "{\"exp\":\"$CUR_EXP\",\"part\":\"duration\",\"seconds\":$((now - EXP_START)),\"load1_start\":$EXP_LOAD,\"load1_end\":$(load1)}" >>"$RAW"
	[ $IS_TTY = 1 ] && printf '\r\033[K' >&2
	echo "[$CUR_EXP] done in $(fmt_t $((now - EXP_START)))" >&2
}

# ---- processes, namespaces, cleanup --------------------------------------------------------------
PIDS=""
NS_S=""
NS_C=""
NETNS_NOTE="not requested (--no-netns)"
OWN_RPCBIND=""
# Every process started is also listed in $TMP/pids: the experiments run in subshells (a crash
# in one must not end the run), and what they start is stopped here whatever happened to them.
track() { echo "$1" >>"$TMP/pids"; }
cleanup() {
	local p all
	all="$PIDS $(cat "$TMP/pids" 2>/dev/null)"
	for p in $all; do kill "$p" 2>/dev/null; done
	sleep 0.2
	for p in $all; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	if [ -n "$OWN_RPCBIND" ]; then kill "$OWN_RPCBIND" 2>/dev/null; wait "$OWN_RPCBIND" 2>/dev/null; fi
	[ -n "$NS_S" ] && ip netns del "$NS_S" 2>/dev/null
	[ -n "$NS_C" ] && ip netns del "$NS_C" 2>/dev/null
	rm -rf "$TMP"
	[ $IS_TTY = 1 ] && printf '\r\033[K' >&2
}
trap cleanup EXIT
trap 'echo "$0: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM

setup_netns() {
	NS_S=rcb-s-$$
	NS_C=rcb-c-$$
	local vs=rcbs$$ vc=rcbc$$ e=$TMP/netns.err
	if [ "$(id -u)" != 0 ]; then NETNS_NOTE="not root: local (loopback) runs only"; NS_S=""; NS_C=""; return 1; fi
	if ! command -v ip >/dev/null; then NETNS_NOTE="no 'ip' command: local runs only"; NS_S=""; NS_C=""; return 1; fi
	if ! { ip netns add "$NS_S" && ip netns add "$NS_C" &&
		ip link add "$vs" type veth peer name "$vc" &&
		ip link set "$vs" netns "$NS_S" && ip link set "$vc" netns "$NS_C" &&
		ip -n "$NS_S" addr add 10.250.0.1/24 dev "$vs" &&
		ip -n "$NS_C" addr add 10.250.0.2/24 dev "$vc" &&
		ip -n "$NS_S" link set lo up && ip -n "$NS_C" link set lo up &&
		ip -n "$NS_S" link set "$vs" mtu 1500 up && ip -n "$NS_C" link set "$vc" mtu 1500 up; } 2>"$e"; then
		NETNS_NOTE="ip netns failed ($(head -c 200 "$e" | tr '\n' ' ')): local runs only"
		ip netns del "$NS_S" 2>/dev/null; ip netns del "$NS_C" 2>/dev/null
		ip link del "$vs" 2>/dev/null
		NS_S=""; NS_C=""
		return 1
	fi
	# Segment and fragment in software at 1500 bytes, as on a wire: no 64 KiB GSO super-packets.
	local gso="gso_max_size 1500"
	if ! { ip -n "$NS_S" link set "$vs" gso_max_size 1500 && ip -n "$NS_C" link set "$vc" gso_max_size 1500; } 2>/dev/null; then
		gso="default GSO (gso_max_size not settable)"
	fi
	NETNS_NOTE="two namespaces $NS_S (10.250.0.1) and $NS_C (10.250.0.2) joined by a veth pair, MTU 1500, $gso"
	return 0
}
if [ $USE_NETNS = 1 ]; then setup_netns; fi
WHERES="local"
[ -n "$NS_S" ] && WHERES="local remote"
# where the "remote"-only experiments run: remote when we have it
FAR=local
[ -n "$NS_S" ] && FAR=remote

host_of() { if [ "$1" = remote ]; then echo 10.250.0.1; else echo 127.0.0.1; fi; }
# srv_pre WHERE / cli_pre WHERE: run in the server's / client's namespace
# (words to put in front of a command; used unquoted, so they vanish for local)
srv_pre() { if [ "$1" = remote ]; then echo "ip netns exec $NS_S"; fi; }
cli_pre() { if [ "$1" = remote ]; then echo "ip netns exec $NS_C"; fi; }

# srv VAR WHERE CORE CMD... -- start a server pinned to CORE on WHERE's server side, wait for
# its "listening" lines (one per --listen); sets VAR_PID and VAR (its URIs, space-separated).
# Returns 1 (and writes a failure) if it does not come up within 10 s.
srv() {
	local var=$1 where=$2 core=$3
	shift 3
	local f want=0 a i=0 pid n
	f=$(mktemp "$TMP/srv.XXXXXX") # empty before the server starts: no stale "listening" line
	for a in "$@"; do case $a in --listen | --server) want=$((want + 1)) ;; esac; done
	[ $want = 0 ] && want=1
	$(srv_pre "$where") taskset -c "$core" "$@" >"$f" 2>"$f.err" &
	pid=$!
	PIDS="$PIDS $pid"
	track $pid
	while :; do
		n=$(grep -c '^listening ' "$f" 2>/dev/null)
		[ "${n:-0}" -ge "$want" ] && break
		i=$((i + 1))
		if [ $i -gt 200 ] || ! kill -0 "$pid" 2>/dev/null; then
			note_fail "{\"exp\":\"$CUR_EXP\",\"what\":\"server start\"}" 1 "$*" "$f.err"
			kill "$pid" 2>/dev/null
			eval "${var}_PID="
			eval "$var="
			return 1
		fi
		sleep 0.05
	done
	eval "${var}_PID=$pid"
	eval "${var}_OUT=$f"
	eval "$var=\"$(awk '/^listening /{ printf "%s ", $2 }' "$f")\""
	return 0
}
# stop PID... -- stop servers (SIGTERM, then wait)
stop() {
	local p
	for p in "$@"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done
	for p in "$@"; do
		[ -n "$p" ] || continue
		wait "$p" 2>/dev/null
		PIDS=$(echo " $PIDS " | sed "s/ $p / /")
	done
}
# uri_of LIST SCHEME -- the first URI of LIST with that scheme
uri_of() { local u; for u in $1; do case $u in "$2"://*) echo "$u"; return ;; esac; done; }

# note_fail TAGS RC CMD ERRFILE -- record a failed step
note_fail() {
	python3 - "$1" "$2" "$3" "$4" >>"$FAILS" <<'EOF'
import json, sys
tags = json.loads(sys.argv[1])
try:
    err = open(sys.argv[4], errors="replace").read().strip().splitlines()[-4:]
except OSError:
    err = []
tags.update({"rc": int(sys.argv[2]), "cmd": sys.argv[3], "stderr": "\n".join(err)})
print(json.dumps(tags))
EOF
	echo "$(date -u +%T) FAILED rc=$2: $3" >>"$LOG"
}

# rec TAGS TIMEOUT CMD... -- run CMD (bounded by TIMEOUT seconds), add TAGS (a JSON fragment
# without braces) to each JSON line it prints and append them to raw.jsonl
rec() {
	local tags=$1 tmo=$2 rc
	shift 2
	timeout -k 5 "$tmo" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q '^{' "$TMP/out"; then
		[ $rc -eq 0 ] && rc=99
		note_fail "{$tags}" $rc "$*" "$TMP/err"
		return 1
	fi
	grep '^{' "$TMP/out" | sed "s/^{/{$tags,/" >>"$RAW"
}

# ---- metadata --------------------------------------------------------------------------------------
write_meta() {
	local cc ccver btype commit dirty tirpc
	cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
	ccver=$("${cc:-cc}" --version 2>/dev/null | head -1)
	btype=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
	commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)
	dirty=$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null | wc -l)
	tirpc=$(dpkg-query -W -f '${Version}' libtirpc3 2>/dev/null || dpkg-query -W -f '${Version}' libtirpc3t64 2>/dev/null)
	python3 - "$RES/meta.json" <<EOF
import json, sys
meta = {
  "timestamp": "$TS", "mode": "$MODE", "experiments": "$EXPS".split(),
  "command": """$CMDLINE""",
  "uname": """$(uname -srvmo)""",
  "cpu": """$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')""",
  "ncpu": $NCPU,
  "mem_mb": $(awk '/MemTotal/{ print int($2 / 1024) }' /proc/meminfo),
  "compiler": """$ccver""", "build_type": "$btype", "build_dir": "$BUILD",
  "commit": "$commit", "dirty_files": ${dirty:-0},
  "libtirpc": "$tirpc",
  "netns": """$NETNS_NOTE""", "remote": "$FAR",
  "pins": "$PINS", "trials": $TRIALS, "calls": $CALLS, "max_seconds": $MAXS,
  "loadavg_start": "$(cat /proc/loadavg 2>/dev/null)",
  "taskset": "cross = server on core 0, client on core 1; same = both on core $(cli_core)",
}
json.dump(meta, open(sys.argv[1], "w"), indent=1)
EOF
}
write_meta

# ==== the experiments ===============================================================================

# ---- en: Elliott & Nutt Tables 2-3 ------------------------------------------------------------------
exp_en() {
	local where pin sc cc t a rc_arg raw_n
	progress "C function calls"
	rec '"exp":"en","part":"ccall"' 120 taskset -c "$(cli_core)" "$B/rc-bench-local" --what ccall --json
	for where in $WHERES; do
		local H
		H=$(host_of $where)
		for pin in $PINS; do
			sc=$(srv_core $pin)
			cc=$(cli_core)
			srv RCS $where "$sc" "$B/rc-bench-server" --listen "udp://$H:0" --listen "tcp://$H:0" || continue
			srv TIS $where "$sc" "$B/tirpc-bench-server" --listen "udp://$H:0" --listen "tcp://$H:0" || { stop "$RCS_PID"; continue; }
			srv RWU $where "$sc" "$B/raw-pingpong" --server "udp://$H:0"
			srv RWT $where "$sc" "$B/raw-pingpong" --server "tcp://$H:0"
			if [ $where = local ] && [ -n "$RWU" ]; then
				# the null-call target: remotecall null vs raw ping-pong of 0 bytes, of 1 byte
				# (an empty datagram is a cheaper case in the kernel) and of the call's 40
				# bytes (and libtirpc's null call), interleaved, more trials (the
				# ratio of each trial counts). remotecall's server listens on UDP alone, as the
				# raw server does (one socket, one blocking receive a request), so the two
				# servers do the same system calls. Then the same exchange hand-made on both
				# sides (raw-pingpong --null-rpc: 40-byte call, 24-byte reply) and with
				# remotecall on one side only: what the wire bytes, remotecall's server and
				# its client each add, in place (role hh, hr, rh).
				local u0 k t0
				srv RCT $where "$sc" "$B/rc-bench-server" --listen "udp://$H:0"
				srv RWN $where "$sc" "$B/raw-pingpong" --server "udp://$H:0" --null-rpc
				u0=$(uri_of "$RCT" udp)
				t0=$(uri_of "$TIS" udp)
				for k in $(seq 1 $TARGET_TRIALS); do
					[ -n "$u0" ] || break
					progress "$where, $pin cores, null call vs raw ping-pong $k/$TARGET_TRIALS"
					local tg="\"exp\":\"en\",\"part\":\"target\",\"where\":\"$where\",\"pin\":\"$pin\",\"tr\":\"udp\",\"trial\":$k"
					rec "$tg" 120 taskset -c "$cc" "$B/rc-bench-client" --uri "$u0" --proc null --warmup 1000 --calls $CALLS --max-seconds $MAXS --json
					rec "$tg" 120 taskset -c "$cc" "$B/raw-pingpong" --client $RWU --size 0 --warmup 1000 --calls $CALLS --max-seconds $MAXS --json
					rec "$tg" 120 taskset -c "$cc" "$B/raw-pingpong" --client $RWU --size 1 --warmup 1000 --calls $CALLS --max-seconds $MAXS --json
					rec "$tg" 120 taskset -c "$cc" "$B/raw-pingpong" --client $RWU --size 40 --warmup 1000 --calls $CALLS --max-seconds $MAXS --json
					rec "$tg" 120 taskset -c "$cc" "$B/tirpc-bench-client" --uri "$t0" --proc null --warmup 1000 --calls $CALLS --max-seconds $MAXS --json
					[ -n "$RWN" ] || continue
					rec "$tg,\"role\":\"hh\"" 120 taskset -c "$cc" "$B/raw-pingpong" --client $RWN --null-rpc --warmup 1000 --calls $CALLS --max-seconds $MAXS --json
					rec "$tg,\"role\":\"hr\"" 120 taskset -c "$cc" "$B/raw-pingpong" --client "$u0" --null-rpc --warmup 1000 --calls $CALLS --max-seconds $MAXS --json
					rec "$tg,\"role\":\"rh\"" 120 taskset -c "$cc" "$B/rc-bench-client" --uri $RWN --proc null --warmup 1000 --calls $CALLS --max-seconds $MAXS --json
				done
				stop "$RCT_PID"
				[ -z "$RWN" ] || stop "$RWN_PID"
			fi
			for t in $(seq 1 $TRIALS); do
				for a in noarg 2byte 4byte; do
					progress "$where, $pin cores, trial $t/$TRIALS, $a"
					case $a in
					noarg) rc_arg="--proc null"; raw_n=0 ;;
					2byte) rc_arg="--proc int --arg 4660"; raw_n=2 ;;
					4byte) rc_arg="--proc int --arg 305419896"; raw_n=4 ;;
					esac
					local tag="\"exp\":\"en\",\"part\":\"calls\",\"where\":\"$where\",\"pin\":\"$pin\",\"arg\":\"$a\",\"trial\":$t"
					local tr u
					for tr in udp tcp; do
						u=$(uri_of "$RCS" $tr)
						rec "$tag,\"tr\":\"$tr\"" 120 $(cli_pre $where) taskset -c "$cc" "$B/rc-bench-client" --uri "$u" $rc_arg --calls $CALLS --max-seconds $MAXS --json
						if [ $tr = udp ]; then u=$RWU; else u=$RWT; fi
						[ -n "$u" ] && rec "$tag,\"tr\":\"$tr\"" 120 $(cli_pre $where) taskset -c "$cc" "$B/raw-pingpong" --client $u --size $raw_n --calls $CALLS --max-seconds $MAXS --json
						u=$(uri_of "$RCS" $tr)
						rec "$tag,\"tr\":\"$tr\"" 120 $(cli_pre $where) taskset -c "$cc" "$B/rc-bench-client" --mode select --uri "$u" $rc_arg --calls $CALLS --max-seconds $MAXS --json
						if [ $tr = udp ]; then u=$RWU; else u=$RWT; fi
						[ -n "$u" ] && rec "$tag,\"tr\":\"$tr\"" 120 $(cli_pre $where) taskset -c "$cc" "$B/raw-pingpong" --client $u --wait select --size $raw_n --calls $CALLS --max-seconds $MAXS --json
						u=$(uri_of "$TIS" $tr)
						rec "$tag,\"tr\":\"$tr\"" 120 $(cli_pre $where) taskset -c "$cc" "$B/tirpc-bench-client" --uri "$u" $rc_arg --calls $CALLS --max-seconds $MAXS --json
					done
				done
			done
			stop "$RCS_PID" "$TIS_PID" "$RWU_PID" "$RWT_PID"
		done
	done
}

# ---- steps: where the time of one call goes ------------------------------------------------------
exp_steps() {
	local where=$FAR H pin sc cc s tr u
	H=$(host_of $where)
	for pin in $PINS; do
		sc=$(srv_core $pin)
		cc=$(cli_core)
		srv RCS $where "$sc" "$B/rc-bench-server" --listen "udp://$H:0" --listen "tcp://$H:0" || continue
		for tr in udp tcp; do
			u=$(uri_of "$RCS" $tr)
			for s in 0 1392 4016 8032 16064 24096; do
				[ $tr = tcp ] && [ $s != 0 ] && [ $s != 4016 ] && [ $s != 24096 ] && continue
				progress "$where, $pin cores, $tr, $s bytes"
				local tag="\"exp\":\"steps\",\"where\":\"$where\",\"pin\":\"$pin\",\"tr\":\"$tr\""
				rec "$tag,\"series\":\"steps\"" 120 $(cli_pre $where) taskset -c "$cc" "$B/rc-bench-local" --what steps --uri "$u" --size $s --calls $STEP_CALLS --json
				if [ $s = 0 ]; then
					rec "$tag,\"series\":\"lib\"" 120 $(cli_pre $where) taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc null --calls $STEP_CALLS --json
				else
					rec "$tag,\"series\":\"lib\"" 120 $(cli_pre $where) taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc send --size $s --calls $STEP_CALLS --json
				fi
			done
		done
		stop "$RCS_PID"
		# The runtime's own trace points (rc_client_set_trace / rc_server_set_trace): the
		# client's and the server's steps of the same calls, one traced server per size.
		for tr in udp tcp; do
			for s in 0 1392 4016 8032 16064 24096; do
				[ $tr = tcp ] && [ $s != 0 ] && [ $s != 4016 ] && [ $s != 24096 ] && continue
				progress "$where, $pin cores, $tr, $s bytes, trace points"
				srv RTS $where "$sc" "$B/rc-bench-server" --trace --listen "$tr://$H:0" || continue
				u=$(uri_of "$RTS" $tr)
				local ttag="\"exp\":\"steps\",\"where\":\"$where\",\"pin\":\"$pin\",\"tr\":\"$tr\",\"size\":$s,\"series\":\"trace\""
				if [ $s = 0 ]; then
					rec "$ttag" 120 $(cli_pre $where) taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc null --calls $STEP_CALLS --trace --json
				else
					rec "$ttag" 120 $(cli_pre $where) taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc send --size $s --calls $STEP_CALLS --trace --json
				fi
				stop "$RTS_PID"
				rec "$ttag" 10 grep '^{"trace"' "$RTS_OUT"
			done
		done
	done
	steps_callgrind
}

# Instructions per call by function (callgrind), grouped into steps: the user-space half of
# E&N's profile. Client and server both run under callgrind (local, null calls); each pair runs
# N and 2N calls and the report takes the difference, so start-up and one-time costs cancel.
steps_callgrind() {
	command -v valgrind >/dev/null || { echo "$(date -u +%T) steps: no valgrind, no callgrind profile" >>"$LOG"; return; }
	command -v callgrind_annotate >/dev/null || return
	local n=2000 tr u k f side
	[ $MODE = smoke ] && n=200
	for tr in udp tcp; do
		for k in $n $((2 * n)); do
			progress "callgrind profile of $k null calls over $tr"
			srv CGS local 0 valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.server.$tr.$k" "$B/rc-bench-server" --listen "$tr://127.0.0.1:0" || continue
			u=$(uri_of "$CGS" $tr)
			timeout 300 valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.client.$tr.$k" "$B/rc-bench-client" --uri "$u" --proc null --calls $k --warmup 0 --quiet >/dev/null 2>"$TMP/cg.err" ||
				note_fail "{\"exp\":\"steps\",\"what\":\"callgrind client $tr\"}" $? "valgrind rc-bench-client" "$TMP/cg.err"
			stop "$CGS_PID"
			for side in client server; do
				f=$TMP/cg.$side.$tr.$k
				[ -s "$f" ] || continue
				callgrind_annotate --inclusive=no --threshold=100 --auto=no "$f" 2>/dev/null |
					python3 "$HERE/report.py" --callgrind-self "$side" "$tr" "$k" >>"$RAW" ||
					echo "$(date -u +%T) steps: callgrind_annotate failed for $side $tr $k" >>"$LOG"
			done
		done
	done
}

# ---- courier: Larus Tables 1-4, 9 -----------------------------------------------------------------
exp_courier() {
	local where=$FAR H sc cc t s p tr u impl
	H=$(host_of $where)
	sc=$(srv_core cross)
	cc=$(cli_core)
	srv RCS $where "$sc" "$B/rc-bench-server" --listen "udp://$H:0" --listen "tcp://$H:0" || return
	srv TIS $where "$sc" "$B/tirpc-bench-server" --listen "udp://$H:0" --listen "tcp://$H:0"
	for t in $(seq 1 $TRIALS); do
		for s in 0 4 400 4000; do
			progress "$where, trial $t/$TRIALS, $s-byte argument"
			for p in send sendr; do
				for tr in udp tcp; do
					local tag="\"exp\":\"courier\",\"where\":\"$where\",\"pin\":\"cross\",\"tr\":\"$tr\",\"trial\":$t"
					u=$(uri_of "$RCS" $tr)
					rec "$tag,\"series\":\"block\"" 120 $(cli_pre $where) taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc $p --size $s --calls $CALLS_SLOW --max-seconds $MAXS --json
					u=$(uri_of "$TIS" $tr)
					[ -n "$u" ] && rec "$tag,\"series\":\"block\"" 120 $(cli_pre $where) taskset -c "$cc" "$B/tirpc-bench-client" --uri "$u" --proc $p --size $s --calls $CALLS_SLOW --max-seconds $MAXS --json
					if [ $p = send ]; then # Courier's no-result calls did not wait: calls in flight
						u=$(uri_of "$RCS" $tr)
						rec "$tag,\"series\":\"nowait\"" 120 $(cli_pre $where) taskset -c "$cc" "$B/rc-bench-client" --mode async --depth 16 --uri "$u" --proc $p --size $s --calls $((CALLS_SLOW * 4)) --max-seconds $MAXS --json
					fi
				done
			done
		done
	done
	stop "$RCS_PID" "$TIS_PID"
}

# ---- dce: Khandker et al. Figure 3, Table 1, first calls ---------------------------------------------
exp_dce() {
	local where=$FAR H pin sc cc s tr u n p
	H=$(host_of $where)
	cc=$(cli_core)
	# Figure 3: latency vs request size, later calls and first calls
	for pin in $PINS; do
		sc=$(srv_core $pin)
		srv RCS $where "$sc" "$B/rc-bench-server" --listen "udp://$H:0" --listen "tcp://$H:0" || continue
		for tr in udp tcp; do
			u=$(uri_of "$RCS" $tr)
			for s in $FIG3_SIZES; do
				[ $tr = udp ] && [ $s -gt 65460 ] && continue
				progress "Figure 3: $pin cores, $tr, $s bytes"
				rec "\"exp\":\"dce\",\"part\":\"fig3\",\"where\":\"$where\",\"pin\":\"$pin\",\"tr\":\"$tr\",\"series\":\"later\"" 120 \
					$(cli_pre $where) taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc send --size $s --calls $FIG3_CALLS --max-seconds $MAXS --warmup 20 --json
			done
			# the same sizes echoed by remotecall and by a raw socket: which jumps are the kernel's
			srv RWS $where "$sc" "$B/raw-pingpong" --server "$tr://$H:0"
			for s in $FIG3_FIRST; do
				[ $tr = udp ] && [ $s -gt 65460 ] && continue
				progress "Figure 3 echo vs raw echo: $pin cores, $tr, $s bytes"
				rec "\"exp\":\"dce\",\"part\":\"fig3\",\"where\":\"$where\",\"pin\":\"$pin\",\"tr\":\"$tr\",\"series\":\"echo\"" 120 \
					$(cli_pre $where) taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc echo --size $s --calls $FIG3_CALLS --max-seconds $MAXS --warmup 20 --json
				[ -n "$RWS" ] && rec "\"exp\":\"dce\",\"part\":\"fig3\",\"where\":\"$where\",\"pin\":\"$pin\",\"tr\":\"$tr\",\"series\":\"rawecho\"" 120 \
					$(cli_pre $where) taskset -c "$cc" "$B/raw-pingpong" --client $RWS --size $s --calls $FIG3_CALLS --max-seconds $MAXS --warmup 20 --json
			done
			stop "$RWS_PID"
			for s in $FIG3_FIRST; do
				[ $tr = udp ] && [ $s -gt 65460 ] && continue
				progress "Figure 3 first calls: $pin cores, $tr, $s bytes"
				rec "\"exp\":\"dce\",\"part\":\"fig3\",\"where\":\"$where\",\"pin\":\"$pin\",\"tr\":\"$tr\",\"series\":\"first\"" 120 \
					$(cli_pre $where) taskset -c "$cc" "$B/rc-bench-local" --what first --uri "$u" --proc send --size $s --trials $FIRST_TRIALS --calls 10 --json
			done
		done
		stop "$RCS_PID"
	done
	# Table 1: throughput with 1..10 caller threads sharing one client
	sc=$(srv_core cross)
	srv RCS $where "$sc" "$B/rc-bench-server" --listen "udp://$H:0" --listen "tcp://$H:0" || return
	srv TIS $where "$sc" "$B/tirpc-bench-server" --listen "udp://$H:0" --listen "tcp://$H:0"
	for tr in udp tcp; do
		for n in $DCE_THREADS; do
			progress "Table 1: $tr, $n caller threads"
			for p in null send; do
				local tag="\"exp\":\"dce\",\"part\":\"threads\",\"where\":\"$where\",\"pin\":\"cross\",\"tr\":\"$tr\""
				local sz=""
				[ $p = send ] && sz="--size 4016"
				u=$(uri_of "$RCS" $tr)
				rec "$tag" 120 $(cli_pre $where) taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc $p $sz --threads $n --calls $DCE_CALLS --max-seconds $MAXS --json
				u=$(uri_of "$TIS" $tr)
				[ -n "$u" ] && rec "$tag" 120 $(cli_pre $where) taskset -c "$cc" "$B/tirpc-bench-client" --uri "$u" --proc $p $sz --threads $n --calls $DCE_CALLS --max-seconds $MAXS --json
			done
		done
	done
	stop "$RCS_PID" "$TIS_PID"
	# first call vs later calls: by port, and through rpcbind (local)
	dce_first
}

rpcbind_up() { timeout 5 rpcinfo -p 127.0.0.1 >/dev/null 2>&1; }
dce_first() {
	local where H sc cc tr u
	cc=$(cli_core)
	sc=$(srv_core cross)
	for where in $WHERES; do
		H=$(host_of $where)
		srv RCS $where "$sc" "$B/rc-bench-server" --listen "udp://$H:0" --listen "tcp://$H:0" || continue
		for tr in udp tcp; do
			progress "first calls: $where, $tr, by port"
			u=$(uri_of "$RCS" $tr)
			rec "\"exp\":\"dce\",\"part\":\"first\",\"where\":\"$where\",\"tr\":\"$tr\",\"how\":\"port\"" 300 \
				$(cli_pre $where) taskset -c "$cc" "$B/rc-bench-local" --what first --uri "$u" --trials $FIRST_TRIALS --calls 100 --json
		done
		stop "$RCS_PID"
	done
	# through rpcbind: the system's if one runs, else a private one (stopped after)
	if ! command -v rpcinfo >/dev/null; then
		note_fail '{"exp":"dce","what":"rpcbind look-up"}' 77 "rpcinfo not installed" /dev/null
		return
	fi
	if ! rpcbind_up; then
		local rb
		rb=$(command -v rpcbind || ls /usr/sbin/rpcbind /sbin/rpcbind 2>/dev/null | head -1)
		if [ "$(id -u)" != 0 ] || [ -z "$rb" ]; then
			note_fail '{"exp":"dce","what":"rpcbind look-up"}' 77 "no rpcbind running and cannot start one" /dev/null
			return
		fi
		mkdir -p /run/rpcbind 2>/dev/null
		"$rb" -f -w >"$TMP/rpcbind.log" 2>&1 &
		OWN_RPCBIND=$!
		track $OWN_RPCBIND
		local i=0
		until rpcbind_up; do
			i=$((i + 1))
			if [ $i -gt 50 ]; then
				note_fail '{"exp":"dce","what":"private rpcbind"}' 1 "$rb -f -w" "$TMP/rpcbind.log"
				kill "$OWN_RPCBIND" 2>/dev/null; wait "$OWN_RPCBIND" 2>/dev/null; OWN_RPCBIND=""
				return
			fi
			sleep 0.1
		done
		echo "$(date -u +%T) dce: started a private rpcbind (pid $OWN_RPCBIND)" >>"$LOG"
	fi
	rpcinfo -d 542262016 1 >/dev/null 2>&1
	if srv RCS local "$sc" "$B/rc-bench-server" --rpcbind --listen "udp://127.0.0.1:0" --listen "tcp://127.0.0.1:0"; then
		for tr in udp tcp; do
			progress "first calls: local, $tr, through rpcbind"
			rec "\"exp\":\"dce\",\"part\":\"first\",\"where\":\"local\",\"tr\":\"$tr\",\"how\":\"rpcbind\"" 300 \
				taskset -c "$cc" "$B/rc-bench-local" --what first --uri "$tr://127.0.0.1" --trials $FIRST_TRIALS --calls 100 --json
		done
		stop "$RCS_PID"
	fi
	if [ -n "$OWN_RPCBIND" ]; then
		kill "$OWN_RPCBIND" 2>/dev/null
		wait "$OWN_RPCBIND" 2>/dev/null
		OWN_RPCBIND=""
	fi
}

# ---- parpc: Martin et al. Figure 6 --------------------------------------------------------------------
exp_parpc() {
	local where H sc cc tr u
	cc=$(cli_core)
	sc=$(srv_core cross)
	progress "C calls and in-process calls"
	rec '"exp":"parpc","part":"ccall"' 120 taskset -c "$cc" "$B/rc-bench-local" --what ccall --json
	rec '"exp":"parpc","part":"inproc"' 120 taskset -c "$cc" "$B/rc-bench-local" --what inproc --calls $((CALLS * 10)) --json
	for where in $WHERES; do
		H=$(host_of $where)
		srv RCS $where "$sc" "$B/rc-bench-server" --listen "udp://$H:0" --listen "tcp://$H:0" || continue
		for tr in tcp udp; do
			progress "$where calls and first calls, $tr"
			u=$(uri_of "$RCS" $tr)
			rec "\"exp\":\"parpc\",\"part\":\"call\",\"where\":\"$where\",\"tr\":\"$tr\"" 120 \
				$(cli_pre $where) taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc null --calls $CALLS --max-seconds $MAXS --json
			# the first call to a running ("resident") server, by host name where there is one
			[ $where = local ] && u=${u/127.0.0.1/localhost}
			rec "\"exp\":\"parpc\",\"part\":\"first\",\"where\":\"$where\",\"tr\":\"$tr\"" 300 \
				$(cli_pre $where) taskset -c "$cc" "$B/rc-bench-local" --what first --uri "$u" --trials $PARPC_TRIALS --calls 10 --json
		done
		stop "$RCS_PID"
		# the first call to a server started for it ("user server")
		progress "$where first call to a server started for it"
		local cmd="taskset -c $sc $B/rc-bench-server"
		[ $where = remote ] && cmd="ip netns exec $NS_S $cmd"
		rec "\"exp\":\"parpc\",\"part\":\"spawn\",\"where\":\"$where\",\"tr\":\"tcp\"" 300 \
			$(cli_pre $where) taskset -c "$cc" "$B/rc-bench-local" --what spawn --server "$cmd" --listen "tcp://$H:0" --trials $PARPC_TRIALS --json
	done
}

# ---- multirpc: Satyanarayanan & Siegel Tables I-1..I-9 ---------------------------------------------------
# MR_URIS gets the URIs of N fresh rc-bench-server processes (each stands for a machine).
# Defence in depth: if two servers ever share a port (older remotecall set SO_REUSEADDR on its
# UDP listener, and Linux then may give two port-0 sockets the same port), the one whose port
# another already holds is restarted until every port is distinct (count: part "port-collisions").
MR_PIDS=""
MR_URIS=""
declare -a MR_PID MR_URI
mr_launch() { # mr_launch I DIST: start server I in the background (file $TMP/mr.I)
	local f=$TMP/mr.$1
	: >"$f" # empty before the server starts: no stale "listening" line
	$(srv_pre $FAR) taskset -c "$(srv_core cross)" "$B/rc-bench-server" --work-dist "$2" --listen "udp://$(host_of $FAR):0" >"$f" 2>"$f.err" &
	MR_PID[$1]=$!
	track $!
}
mr_wait() { # mr_wait I...: wait until each server I printed its URI (60 s in all); sets MR_URI[I]
	local i k=0 missing
	while :; do
		missing=""
		for i in "$@"; do grep -q '^listening ' "$TMP/mr.$i" 2>/dev/null || missing="$missing $i"; done
		[ -z "$missing" ] && break
		k=$((k + 1))
		if [ $k -gt 600 ]; then
			note_fail "{\"exp\":\"multirpc\",\"what\":\"start servers\"}" 1 "rc-bench-server ($(echo $missing | wc -w) of $# not listening)" "$TMP/mr.${missing##* }.err"
			return 1
		fi
		sleep 0.1
	done
	for i in "$@"; do MR_URI[$i]=$(awk '/^listening /{ print $2; exit }' "$TMP/mr.$i"); done
}
mr_start() { # mr_start N DIST
	local n=$1 dist=$2 i again tries=0 restarts=0
	declare -A seen
	MR_PID=()
	MR_URI=()
	rm -f "$TMP"/mr.*
	for i in $(seq 1 "$n"); do mr_launch "$i" "$dist"; done
	mr_wait $(seq 1 "$n") || return 1
	while :; do
		seen=()
		again=""
		for i in $(seq 1 "$n"); do
			if [ -n "${seen[${MR_URI[$i]}]:-}" ]; then again="$again $i"; else seen[${MR_URI[$i]}]=$i; fi
		done
		[ -z "$again" ] && break
		tries=$((tries + 1))
		if [ $tries -gt 20 ]; then
			note_fail '{"exp":"multirpc","what":"distinct ports"}' 1 "servers kept sharing ports:$again" /dev/null
			break
		fi
		for i in $again; do kill "${MR_PID[$i]}" 2>/dev/null; wait "${MR_PID[$i]}" 2>/dev/null; done
		for i in $again; do mr_launch "$i" "$dist"; restarts=$((restarts + 1)); done
		mr_wait $again || return 1
	done
	echo "{\"exp\":\"multirpc\",\"part\":\"port-collisions\",\"dist\":\"$dist\",\"servers\":$n,\"restarts\":$restarts}" >>"$RAW"
	MR_PIDS="${MR_PID[*]}"
	PIDS="$PIDS $MR_PIDS"
	MR_URIS="${MR_URI[*]}"
}
mr_stop() { stop $MR_PIDS; MR_PIDS=""; }

exp_multirpc() {
	local where=$FAR cc dist w n t maxn=0 args ns rounds
	cc=$(cli_core)
	for n in $MR_NS; do [ "$n" -gt $maxn ] && maxn=$n; done
	for dist in const exp; do
		progress "starting $maxn servers ($dist work)"
		mr_start $maxn $dist || { mr_stop; continue; }
		local all=($MR_URIS)
		if [ $dist = const ]; then # Table I-1: null RPC vs null multi-call to one server
			for t in $(seq 1 $MR_NULL_TRIALS); do
				progress "Table I-1 trial $t/$MR_NULL_TRIALS"
				local tag="\"exp\":\"multirpc\",\"part\":\"null\",\"where\":\"$where\",\"trial\":$t"
				rec "$tag" 120 $(cli_pre $where) taskset -c "$cc" "$B/rc-bench-client" --uri "${all[0]}" --proc null --calls $MR_NULL_CALLS --json
				rec "$tag" 120 $(cli_pre $where) taskset -c "$cc" "$B/rc-bench-client" --mode multi --uri "${all[0]}" --proc null --calls $MR_NULL_CALLS --json
			done
		fi
		for w in $MR_WORKS; do
			ns=$MR_NS
			[ "$w" -ge 1000 ] && ns=$MR_NS_1S
			for n in $ns; do
				args=""
				for u in "${all[@]:0:$n}"; do args="$args --uri $u"; done
				local tag="\"exp\":\"multirpc\",\"part\":\"work\",\"where\":\"$where\",\"dist\":\"$dist\",\"work_ms\":$w,\"n\":$n"
				# timeouts: rounds x (n x work) for the iterative calls, generously
				local tmo=$(( (MR_ITER_ROUNDS + 1) * n * w * 3 / 1000 + 60 ))
				progress "$dist ${w} ms, $n servers: iterative"
				rec "$tag" $tmo $(cli_pre $where) taskset -c "$cc" "$B/rc-bench-client" $args --proc work --arg $((w * 1000)) \
					--calls $MR_ITER_ROUNDS --warmup 0 --timeout 120000 --json
				progress "$dist ${w} ms, $n servers: multi"
				tmo=$(( (MR_MULTI_ROUNDS + 1) * w * 20 / 1000 + 60 ))
				rec "$tag" $tmo $(cli_pre $where) taskset -c "$cc" "$B/rc-bench-client" --mode multi $args --proc work --arg $((w * 1000)) \
					--calls $MR_MULTI_ROUNDS --warmup 1 --timeout 120000 --json
			done
		done
		mr_stop
	done
}

# ---- pipeline: async depth 1..256 beside libtirpc ---------------------------------------------------------
exp_pipeline() {
	local where=local pin sc cc t d n tr u
	cc=$(cli_core)
	for pin in $PINS; do
		sc=$(srv_core $pin)
		srv RCS $where "$sc" "$B/rc-bench-server" --listen "tcp://127.0.0.1:0" --listen "udp://127.0.0.1:0" || continue
		srv TIS $where "$sc" "$B/tirpc-bench-server" --listen "tcp://127.0.0.1:0" --listen "udp://127.0.0.1:0"
		for t in $(seq 1 $TRIALS); do
			for tr in tcp udp; do
				local tag="\"exp\":\"pipeline\",\"where\":\"$where\",\"pin\":\"$pin\",\"tr\":\"$tr\",\"trial\":$t"
				progress "$pin cores, $tr, trial $t/$TRIALS: blocking calls"
				u=$(uri_of "$TIS" $tr)
				[ -n "$u" ] && rec "$tag" 120 taskset -c "$cc" "$B/tirpc-bench-client" --uri "$u" --proc null --calls $CALLS --max-seconds $MAXS --json
				u=$(uri_of "$RCS" $tr)
				rec "$tag" 120 taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc null --calls $CALLS --max-seconds $MAXS --json
				for d in $PIPE_DEPTHS; do
					[ $tr = udp ] && [ $d -gt 64 ] && continue # a datagram socket's buffers, not a pipe
					progress "$pin cores, $tr, trial $t/$TRIALS: depth $d"
					n=$((CALLS * d))
					[ $n -gt $PIPE_CALLS ] && n=$PIPE_CALLS
					rec "$tag" 120 taskset -c "$cc" "$B/rc-bench-client" --mode async --depth $d --uri "$u" --proc null --calls $n --max-seconds $MAXS --warmup $((d * 4)) --json
				done
			done
		done
		stop "$RCS_PID" "$TIS_PID"
	done
}

# ---- xdr: marshalling throughput beside libtirpc ------------------------------------------------------------
exp_xdr() {
	local x=$B/xdr/rc-bench-xdr
	if [ ! -x "$x" ]; then
		note_fail '{"exp":"xdr"}' 1 "$x is missing (libtirpc not found at build time?)" /dev/null
		return
	fi
	progress "rc-bench-xdr"
	rec '"exp":"xdr"' 300 taskset -c "$(cli_core)" "$x" $XDR_ARGS --json
}

# ---- tls: RPC-over-TLS beside plaintext (issue 16) ---------------------------------------------------------
# One server offering TLS; the same client binary with and without --tls required; null and
# echo of 4 KiB, 64 KiB, 1 MiB, on one core and across two. The cipher's own speed on the
# client's core (openssl speed, 16 KiB blocks: TLS records) is the crypto limit the report
# sets the 1 MiB echo against.
exp_tls() {
	local where=local pin sc cc t spec p sz n tag u c=$TMP/tls-certs sp
	cc=$(cli_core)
	if ! bash "$ROOT/tests/runtime/tls_certs.sh" "$c" >"$TMP/tls.err" 2>&1; then
		note_fail '{"exp":"tls","what":"certificates"}' 1 "tests/runtime/tls_certs.sh" "$TMP/tls.err"
		return
	fi
	progress "openssl speed -evp aes-128-gcm"
	sp=$(taskset -c "$cc" openssl speed -evp aes-128-gcm -seconds 1 -bytes 16384 2>/dev/null |
		awk 'toupper($1) == "AES-128-GCM" { sub(/k$/, "", $2); print $2 * 1000 }')
	[ -n "$sp" ] && echo "{\"exp\":\"tls\",\"part\":\"aes\",\"bytes_per_s\":$sp}" >>"$RAW"
	for pin in $PINS; do
		sc=$(srv_core $pin)
		srv RCS $where "$sc" "$B/rc-bench-server" --listen "tcp://127.0.0.1:0" \
			--tls-cert "$c/server.pem" --tls-key "$c/server.key" || continue
		u=$(uri_of "$RCS" tcp)
		for t in $(seq 1 $TRIALS); do
			for spec in null:0 echo:4096 echo:65536 echo:1048576; do
				p=${spec%%:*}
				sz=${spec##*:}
				n=$CALLS
				[ "$sz" -ge 65536 ] && n=$((CALLS / 10))
				[ "$sz" -ge 1048576 ] && n=$((CALLS / 40 + 5))
				for sec in plain tls; do
					progress "$pin cores, trial $t/$TRIALS: $p $sz $sec"
					tag="\"exp\":\"tls\",\"where\":\"$where\",\"pin\":\"$pin\",\"sec\":\"$sec\",\"trial\":$t"
					if [ $sec = tls ]; then
						rec "$tag" 120 taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc $p --size $sz \
							--calls $n --max-seconds $MAXS --json --tls required --tls-ca "$c/ca.pem"
					else
						rec "$tag" 120 taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc $p --size $sz \
							--calls $n --max-seconds $MAXS --json
					fi
				done
			done
		done
		stop "$RCS_PID"
	done
}

# ---- quic: RPC-over-QUIC beside RPC-over-TLS (issue 43) -----------------------------------------------------
# One rc-bench-server listening on tcp:// (TLS offered) and quic:// with the same certificate,
# server on core 0 and client on core 1 (the issue's targets); per trial, interleaved, over
# each of TLS-over-TCP and QUIC: null calls, pipelined null calls at depth 64, a 1 MiB echo,
# and rc-bench-hol (null calls every 2 ms, latency from their scheduled start, idle and
# during three 16 MiB echoes on the same client). The head-of-line rows run against a second
# server, with two serving threads (--threads 2: a server that expects big and small calls
# at once serves connections on more than one thread), also on core 0; the QUIC row measures,
# in the same rc-bench-hol run, the floor: the same null calls and echoes on two TLS-over-TCP
# connections of their own (--floor-uri), where nothing of the client's is shared.
exp_quic() {
	local where=local sc cc t tr u ut uq uht uhq c=$TMP/quic-certs tag n1 nd ne
	sc=$(srv_core cross)
	cc=$(cli_core)
	if ! bash "$ROOT/tests/runtime/tls_certs.sh" "$c" >"$TMP/quic.err" 2>&1; then
		note_fail '{"exp":"quic","what":"certificates"}' 1 "tests/runtime/tls_certs.sh" "$TMP/quic.err"
		return
	fi
	srv RCS $where "$sc" "$B/rc-bench-server" --listen "tcp://127.0.0.1:0" --listen "quic://127.0.0.1:0" \
		--tls-cert "$c/server.pem" --tls-key "$c/server.key" --max-record 41943040 || return
	ut=$(uri_of "$RCS" tcp)
	uq=$(uri_of "$RCS" quic)
	srv RCH $where "$sc" "$B/rc-bench-server" --listen "tcp://127.0.0.1:0" --listen "quic://127.0.0.1:0" \
		--tls-cert "$c/server.pem" --tls-key "$c/server.key" --max-record 41943040 --threads 2 || { stop "$RCS_PID"; return; }
	uht=$(uri_of "$RCH" tcp)
	uhq=$(uri_of "$RCH" quic)
	n1=$CALLS; nd=$((PIPE_CALLS / 10)); ne=$((CALLS / 100 + 5))
	for t in $(seq 1 $TRIALS); do
		for tr in tls quic; do
			tag="\"exp\":\"quic\",\"where\":\"$where\",\"pin\":\"cross\",\"tr\":\"$tr\",\"trial\":$t"
			if [ $tr = tls ]; then u=("$ut" --tls required); else u=("$uq"); fi
			progress "trial $t/$TRIALS: $tr null, depth 64, 1 MiB echo"
			rec "$tag,\"what\":\"null\"" 120 taskset -c "$cc" "$B/rc-bench-client" --uri "${u[@]}" \
				--tls-ca "$c/ca.pem" --proc null --calls $n1 --max-seconds $MAXS --json
			rec "$tag,\"what\":\"depth64\"" 120 taskset -c "$cc" "$B/rc-bench-client" --uri "${u[@]}" \
				--tls-ca "$c/ca.pem" --proc null --mode async --depth 64 --calls $nd --max-seconds $MAXS --json
			rec "$tag,\"what\":\"echo1m\"" 120 taskset -c "$cc" "$B/rc-bench-client" --uri "${u[@]}" \
				--tls-ca "$c/ca.pem" --proc echo --size 1048576 --calls $ne --max-seconds $MAXS --json
			progress "trial $t/$TRIALS: $tr null calls during 16 MiB echoes"
			if [ $tr = tls ]; then u=("$uht"); else u=("$uhq" --floor-uri "$uht"); fi
			rec "$tag,\"what\":\"hol\"" 180 taskset -c "$cc" "$B/rc-bench-hol" --uri "${u[@]}" \
				--tls-ca "$c/ca.pem" --size 16777216 --echoes 3 --calls 200 --period-us 2000
		done
	done
	stop "$RCS_PID" "$RCH_PID"
}

# ---- bulk: big echoes beside libtirpc and a raw socket (issue 15) ------------------------------------------
# rc-bench-server (records up to 40 MiB), tirpc-bench-server and raw-pingpong's TCP echo, one
# of each, on one core with the client and on the other; the same echo sizes through each,
# interleaved, TARGET_TRIALS times (the 1 MiB and 16 MiB rows are targets, and a 1 MiB echo
# across two cores is noisy). Calls per measurement shrink with the size.
# Each server first answers one untimed echo of the biggest size, so every trial meets it in
# the same state: a fresh tirpc-bench-server's glibc malloc grows its heap for each 1 MiB
# call's argument and result and trims it again after the reply (two brk up, one down, ~500
# page faults a call), twice as slow as once a bigger message has raised malloc's mmap and
# trim thresholds -- so trial 1 (before any 16 MiB echo) used to measure another libtirpc than
# the trials after it. The warmed state is the one a long-running server keeps, and libtirpc's
# faster one.
exp_bulk() {
	local where=local pin sc cc t sz n tag u
	cc=$(cli_core)
	for pin in $PINS; do
		sc=$(srv_core $pin)
		srv RCS $where "$sc" "$B/rc-bench-server" --listen "tcp://127.0.0.1:0" --max-record 41943040 || continue
		srv TIS $where "$sc" "$B/tirpc-bench-server" --listen "tcp://127.0.0.1:0"
		srv RWS $where "$sc" "$B/raw-pingpong" --server "tcp://127.0.0.1:0"
		progress "$pin cores: one untimed 16 MiB echo through each server"
		u=$(uri_of "$RCS" tcp)
		timeout -k 5 120 taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc echo --size 16777216 --calls 1 --warmup 0 >/dev/null 2>&1
		u=$(uri_of "$TIS" tcp)
		[ -n "$u" ] && timeout -k 5 120 taskset -c "$cc" "$B/tirpc-bench-client" --uri "$u" --proc echo --size 16777216 --calls 1 --warmup 0 >/dev/null 2>&1
		u=$(uri_of "$RWS" tcp)
		[ -n "$u" ] && timeout -k 5 120 taskset -c "$cc" "$B/raw-pingpong" --client "$u" --size 16777216 --calls 1 --warmup 0 >/dev/null 2>&1
		for t in $(seq 1 $TARGET_TRIALS); do
			for sz in 65536 1048576 16777216; do
				n=$((CALLS / 4))
				[ "$sz" -ge 1048576 ] && n=$((CALLS / 40 + 10))
				[ "$sz" -ge 16777216 ] && n=$((CALLS / 400 + 4))
				progress "$pin cores, trial $t/$TARGET_TRIALS: echo $sz bytes"
				tag="\"exp\":\"bulk\",\"where\":\"$where\",\"pin\":\"$pin\",\"trial\":$t"
				u=$(uri_of "$RCS" tcp)
				rec "$tag" 300 taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc echo --size $sz --calls $n --max-seconds $MAXS --warmup 2 --json
				u=$(uri_of "$TIS" tcp)
				[ -n "$u" ] && rec "$tag" 300 taskset -c "$cc" "$B/tirpc-bench-client" --uri "$u" --proc echo --size $sz --calls $n --max-seconds $MAXS --warmup 2 --json
				u=$(uri_of "$RWS" tcp)
				[ -n "$u" ] && rec "$tag" 300 taskset -c "$cc" "$B/raw-pingpong" --client "$u" --size $sz --calls $n --max-seconds $MAXS --warmup 2 --json
			done
		done
		stop "$RCS_PID" "$TIS_PID" "$RWS_PID"
	done
}

# ---- load: one server, 1-4 client processes (issue 15) ---------------------------------------------------------
# The server on one core, the N clients together on the other (each rc-bench-client --mode async
# --depth 16 of null calls for MAXS seconds, started at once); each client's line is recorded
# with nclients, and the report sums their calls/s. remotecall's server and libtirpc's, UDP and
# TCP, with the same clients (remotecall's: libtirpc has no calls in flight).
exp_load() {
	local where=local sc cc t tr n k u impl pids f
	sc=$(srv_core cross)
	cc=$(cli_core)
	srv RCS $where "$sc" "$B/rc-bench-server" --listen "udp://127.0.0.1:0" --listen "tcp://127.0.0.1:0" || return
	srv TIS $where "$sc" "$B/tirpc-bench-server" --listen "udp://127.0.0.1:0" --listen "tcp://127.0.0.1:0"
	for t in $(seq 1 $TRIALS); do
		for tr in udp tcp; do
			for impl in remotecall tirpc; do
				for n in 1 2 3 4; do
					progress "trial $t/$TRIALS, $tr, $impl server, $n client processes"
					pids=""
					for k in $(seq 1 $n); do
						f=$TMP/load.$k
						if [ $impl = remotecall ]; then u=$(uri_of "$RCS" $tr); else u=$(uri_of "$TIS" $tr); fi
						[ -n "$u" ] || continue
						timeout -k 5 120 taskset -c "$cc" "$B/rc-bench-client" --mode async --depth 16 --uri "$u" \
							--proc null --calls 10000000 --max-seconds $MAXS --warmup 64 --json >"$f" 2>"$f.err" &
						pids="$pids $!"
					done
					for k in $pids; do wait $k; done
					for k in $(seq 1 $n); do
						f=$TMP/load.$k
						if grep -q '^{' "$f" 2>/dev/null; then
							grep '^{' "$f" | sed "s/^{/{\"exp\":\"load\",\"where\":\"$where\",\"tr\":\"$tr\",\"server\":\"$impl\",\"nclients\":$n,\"client\":$k,\"trial\":$t,/" >>"$RAW"
						else
							note_fail "{\"exp\":\"load\",\"tr\":\"$tr\",\"server\":\"$impl\",\"nclients\":$n}" 1 "client $k" "$f.err"
						fi
					done
				done
			done
		done
	done
	stop "$RCS_PID" "$TIS_PID"
}

# ---- spin: busy-polling on both sides (issue 15) ------------------------------------------------------------
# UDP null calls across two cores (where a spinning side has a core of its own; on one core a
# spinner only takes the time its peer needs), four series per trial: remotecall with both
# sides sleeping in the kernel, remotecall with both sides polling for SPIN_US before sleeping,
# and raw-pingpong sleeping and spinning (the floor). Each series gets a fresh server, stopped
# after it, so a spinning server never runs beside another series; the server's CPU time
# during the client's run is recorded beside the client's (cpu_s / proc_s).
SPIN_US=200
srv_cpu_ticks() { # srv_cpu_ticks PID: utime + stime of a process, in clock ticks
	awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0
}
rec_srv_cpu() { # rec_srv_cpu TAG A B: record a server's CPU time from tick count A to B
	echo "{$1,\"part\":\"server\",\"cpu_s\":$(awk -v a="$2" -v b="$3" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", (b - a) / hz }')}" >>"$RAW"
}
exp_spin() {
	local where=local sc cc t series u tag a n
	sc=$(srv_core cross)
	cc=$(cli_core)
	n=$((CALLS * 5))
	for t in $(seq 1 $TRIALS); do
		for series in rc-sleep rc-spin raw-sleep raw-spin; do
			progress "cross cores, trial $t/$TRIALS: $series"
			tag="\"exp\":\"spin\",\"where\":\"$where\",\"pin\":\"cross\",\"series\":\"$series\",\"trial\":$t"
			case $series in
			rc-sleep) srv RCS $where "$sc" "$B/rc-bench-server" --listen "udp://127.0.0.1:0" || continue ;;
			rc-spin) srv RCS $where "$sc" "$B/rc-bench-server" --listen "udp://127.0.0.1:0" --spin $SPIN_US || continue ;;
			raw-sleep) srv RCS $where "$sc" "$B/raw-pingpong" --server "udp://127.0.0.1:0" || continue ;;
			raw-spin) srv RCS $where "$sc" "$B/raw-pingpong" --server "udp://127.0.0.1:0" --spin || continue ;;
			esac
			u=$(uri_of "$RCS" udp)
			a=$(srv_cpu_ticks "$RCS_PID")
			case $series in
			rc-sleep) rec "$tag" 120 taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc null --calls $n --max-seconds $MAXS --json ;;
			rc-spin) rec "$tag" 120 taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc null --calls $n --max-seconds $MAXS --spin $SPIN_US --json ;;
			raw-sleep) rec "$tag" 120 taskset -c "$cc" "$B/raw-pingpong" --client "$u" --size 0 --calls $n --max-seconds $MAXS --json ;;
			raw-spin) rec "$tag" 120 taskset -c "$cc" "$B/raw-pingpong" --client "$u" --size 0 --calls $n --max-seconds $MAXS --spin --json ;;
			esac
			rec_srv_cpu "$tag" "$a" "$(srv_cpu_ticks "$RCS_PID")"
			stop "$RCS_PID"
		done
	done
}

# ---- defer: deferred replies (issue 27) ---------------------------------------------------------------
# rc-bench-server answering every call inline, and with --defer-threads 1: every call deferred
# (rc_svc_req_defer) to a pool thread that answers it (proc_V_reply). Pipelined null and ADD
# calls, depth 64, one TCP connection, server and client on one core and on two; calls/s. And
# blocking null calls (one at a time: what a deferral adds to one call's latency, µs).
exp_defer() {
	local where=local pin sc cc t series u tag proc n
	cc=$(cli_core)
	n=$PIPE_CALLS
	for pin in $PINS; do
		sc=$(srv_core $pin)
		for series in inline defer; do
			case $series in
			inline) srv RCS $where "$sc" "$B/rc-bench-server" --listen "tcp://127.0.0.1:0" || continue ;;
			defer) srv RCS $where "$sc" "$B/rc-bench-server" --listen "tcp://127.0.0.1:0" --defer-threads 1 || continue ;;
			esac
			u=$(uri_of "$RCS" tcp)
			for t in $(seq 1 $TRIALS); do
				for proc in null add; do
					progress "$pin cores, $series, $proc, trial $t/$TRIALS"
					tag="\"exp\":\"defer\",\"where\":\"$where\",\"pin\":\"$pin\",\"series\":\"$series\",\"proc\":\"$proc\",\"trial\":$t"
					rec "$tag" 120 taskset -c "$cc" "$B/rc-bench-client" --mode async --depth 64 --uri "$u" --proc $proc --calls $n --max-seconds $MAXS --warmup 256 --json
				done
				progress "$pin cores, $series, blocking null, trial $t/$TRIALS"
				tag="\"exp\":\"defer\",\"where\":\"$where\",\"pin\":\"$pin\",\"series\":\"$series-block\",\"trial\":$t"
				rec "$tag" 120 taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc null --calls $CALLS --max-seconds $MAXS --json
			done
			stop "$RCS_PID"
		done
	done
}

# ---- callback: calls in both directions on one connection (issue 29) --------------------------------
# rc-bench-callback: a server and a client in one process over loopback TCP, the server's threads
# on one core and the client's on the same or the other; on one connection, the client's
# blocking NULL calls (forward) and the server's blocking NULL calls back to the client
# (callback: server -> client -> server, the client serving from its poll loop), µs per call;
# then both pipelined, depth 64, calls/s. A target's row: TARGET_TRIALS trials, each measuring
# both back to back in one process (the report takes the median of the trials' ratios).
exp_callback() {
	local pin sc cc t tag
	cc=$(cli_core)
	for pin in $PINS; do
		sc=$(srv_core $pin)
		for t in $(seq 1 $TARGET_TRIALS); do
			progress "$pin cores, trial $t/$TARGET_TRIALS"
			tag="\"exp\":\"callback\",\"pin\":\"$pin\",\"trial\":$t"
			rec "$tag" 180 taskset -c "$sc,$cc" "$B/rc-bench-callback" --server-cpu "$sc" --client-cpu "$cc" --calls $((CALLS * 2)) --depth 64 --json
		done
	done
}

# ---- gss: RPCSEC_GSS with Kerberos (issue 28) -------------------------------------------------------
# In a throw-away MIT realm (tests/gss/krb5_fixture.sh, in a subshell: its traps are its own):
# blocking null calls over TCP, server and client on one core, plain (AUTH_NONE) and under
# RPCSEC_GSS none / integrity / privacy (rc-bench-server --gss-principal, rc-bench-client
# --gss), and libtirpc's own client and server (tests/gss/tirpc_gss_{server,client}) the same
# way; then 1 MiB echoes under integrity and privacy beside plaintext.
exp_gss() {
	local fx="$ROOT/tests/gss/krb5_fixture.sh" tb="$B/../tests/gss"
	if [ ! -f "$fx" ]; then
		note_fail '{"exp":"gss","what":"fixture"}' 1 "$fx" /dev/null
		return
	fi
	(
		# shellcheck source=/dev/null
		. "$fx"
		if ! krb5_fixture_start 2>"$TMP/kdc.err"; then
			note_fail '{"exp":"gss","what":"KDC"}' 77 "krb5_fixture_start" "$TMP/kdc.err"
			exit 0
		fi
		local sc cc t s u tag n=$((CALLS * 2)) tport
		sc=$(srv_core same)
		cc=$(cli_core same)
		srv RCS local "$sc" "$B/rc-bench-server" --listen "tcp://127.0.0.1:0" \
			--gss-principal rcbench@localhost || exit 0
		u=$(uri_of "$RCS" tcp)
		for t in $(seq 1 $TRIALS); do
			for s in plain sys none integrity privacy; do
				progress "rc null, $s, trial $t/$TRIALS"
				tag="\"exp\":\"gss\",\"side\":\"rc\",\"service\":\"$s\",\"proc\":\"null\",\"trial\":$t"
				if [ $s = plain ]; then
					rec "$tag" 120 taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc null --calls $n --max-seconds $MAXS --json
				elif [ $s = sys ]; then # AUTH_SYS: the re-anchored krb5i target's base
					rec "$tag" 120 taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc null --calls $n --max-seconds $MAXS --auth-sys --json
				else
					rec "$tag" 120 taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc null --calls $n --max-seconds $MAXS --gss $s --json
				fi
			done
			for s in plain integrity privacy; do
				progress "rc 1 MiB echo, $s, trial $t/$TRIALS"
				tag="\"exp\":\"gss\",\"side\":\"rc\",\"service\":\"$s\",\"proc\":\"echo\",\"trial\":$t"
				if [ $s = plain ]; then
					rec "$tag" 120 taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc echo --size 1048576 --calls 50 --max-seconds $MAXS --json
				else
					rec "$tag" 120 taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc echo --size 1048576 --calls 50 --max-seconds $MAXS --gss $s --json
				fi
			done
		done
		stop "$RCS_PID"
		# the same server and client with MIT's GSS-API making every token (RC_GSS_NO_LUCID:
		# the per-message path runtime/auth/gss_krb5.c replaces), side rc-mit, in the same run
		export RC_GSS_NO_LUCID=1
		if srv RCM local "$sc" "$B/rc-bench-server" --listen "tcp://127.0.0.1:0" \
			--gss-principal rcbench@localhost; then
			u=$(uri_of "$RCM" tcp)
			for t in $(seq 1 $TRIALS); do
				for s in integrity privacy; do
					progress "rc (MIT per message) null, $s, trial $t/$TRIALS"
					tag="\"exp\":\"gss\",\"side\":\"rc-mit\",\"service\":\"$s\",\"proc\":\"null\",\"trial\":$t"
					rec "$tag" 120 taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc null --calls $n --max-seconds $MAXS --gss $s --json
					tag="\"exp\":\"gss\",\"side\":\"rc-mit\",\"service\":\"$s\",\"proc\":\"echo\",\"trial\":$t"
					rec "$tag" 120 taskset -c "$cc" "$B/rc-bench-client" --uri "$u" --proc echo --size 1048576 --calls 50 --max-seconds $MAXS --gss $s --json
				done
			done
			stop "$RCM_PID"
		fi
		unset RC_GSS_NO_LUCID
		if [ -x "$tb/tirpc_gss_server" ] && [ -x "$tb/tirpc_gss_client" ]; then
			taskset -c "$sc" "$tb/tirpc_gss_server" --name rcbench@localhost >"$TMP/tgs.out" 2>"$TMP/tgs.err" &
			local tpid=$!
			for _ in $(seq 100); do grep -q '^port ' "$TMP/tgs.out" && break; sleep 0.05; done
			tport=$(sed -n 's/^port \([0-9]*\)$/\1/p' "$TMP/tgs.out")
			# its "... us_per_call X" line as the JSON rec takes
			printf '%s\n' '#!/bin/sh' \
				'"$@" | awk '"'"'/us_per_call/ { printf "{\"us_per_call\":%s}\n", $NF }'"'" >"$TMP/tgc.sh"
			for t in $(seq 1 $TRIALS); do
				for s in authnone none integrity privacy; do
					progress "libtirpc null, $s, trial $t/$TRIALS"
					tag="\"exp\":\"gss\",\"side\":\"tirpc\",\"service\":\"${s/authnone/plain}\",\"proc\":\"null\",\"trial\":$t"
					rec "$tag" 120 sh "$TMP/tgc.sh" taskset -c "$cc" "$tb/tirpc_gss_client" --port "$tport" --name rcbench@localhost --service $s --calls $n
				done
			done
			kill $tpid 2>/dev/null
			wait $tpid 2>/dev/null
		fi
		krb5_fixture_stop
	)
}

# ---- udpio: the kernel interface under a UDP server (issue 15) --------------------------------------------------
# One rc-bench-client on one core keeps 64 null calls in flight over UDP against a server on
# the other: rc-bench-server, and raw-pingpong's null-call servers, one datagram per system
# call (plain) or batched (--batch): recvmmsg/sendmmsg, io_uring, each without and with the
# kernel's UDP offloads (GRO joining a sender's datagrams, GSO sending replies joined), and
# io_uring's multishot receive. A fresh server per series; its CPU time during the client's
# run is recorded (part "server"), so the report gives server CPU µs per call -- what the
# interface costs -- beside calls/s, which the client may bound.
UDPIO_SERIES="rc plain mmsg offload uring uring-offload uring-ms"
exp_udpio() {
	local where=local sc cc t series u tag a n
	sc=$(srv_core cross)
	cc=$(cli_core)
	n=$((CALLS * 100))
	for t in $(seq 1 $TRIALS); do
		for series in $UDPIO_SERIES; do
			progress "cross cores, trial $t/$TRIALS: UDP server $series"
			tag="\"exp\":\"udpio\",\"where\":\"$where\",\"pin\":\"cross\",\"series\":\"$series\",\"trial\":$t"
			case $series in
			rc) srv RCS $where "$sc" "$B/rc-bench-server" --listen "udp://127.0.0.1:0" || continue ;;
			plain) srv RCS $where "$sc" "$B/raw-pingpong" --server "udp://127.0.0.1:0" --null-rpc || continue ;;
			*) srv RCS $where "$sc" "$B/raw-pingpong" --server "udp://127.0.0.1:0" --null-rpc --batch $series || continue ;;
			esac
			u=$(uri_of "$RCS" udp)
			a=$(srv_cpu_ticks "$RCS_PID")
			rec "$tag" 120 taskset -c "$cc" "$B/rc-bench-client" --mode async --depth 64 --uri "$u" --proc null \
				--calls $n --max-seconds $MAXS --warmup 256 --json
			rec_srv_cpu "$tag" "$a" "$(srv_cpu_ticks "$RCS_PID")"
			stop "$RCS_PID"
		done
	done
}

# ---- conns: many idle connections (issue 30) -----------------------------------------------------------------
# rc-bench-conns on one core holds K TCP connections (each made one null call, then idles)
# against a fresh server on the other -- rc-bench-server --max-conns above K, and
# tirpc-bench-server -- and reports how fast they were accepted (and the server's CPU per
# connection), the server's RSS per idle connection, its CPU while all K idle, and a fresh
# client's null call (median, p99) before and with them. K goes up to the descriptor limit
# less headroom (each side needs K descriptors); libtirpc's larger K only in full runs (its
# accept slows down and its fresh client waits behind a scan of every connection).
exp_conns() {
	local where=local sc cc t impl k ks tag lim n
	sc=$(srv_core cross)
	cc=$(cli_core)
	lim=$(ulimit -Hn)
	case $MODE in smoke) ks="200 1000"; n=200 ;; quick) ks="1000 5000 15000"; n=1000 ;; *) ks="1000 5000 15000"; n=2000 ;; esac
	for t in $(seq 1 $TRIALS); do
		for k in $ks; do
			[ "$k" -le $((lim - 1024)) ] || k=$((lim - 1024))
			[ "$k" -ge 100 ] || continue
			for impl in remotecall tirpc; do
				[ "$impl" = tirpc ] && [ "$MODE" != full ] && [ "$k" -gt 5000 ] && continue
				progress "trial $t/$TRIALS: $k idle connections, $impl server"
				tag="\"exp\":\"conns\",\"where\":\"$where\",\"pin\":\"cross\",\"server\":\"$impl\",\"k\":$k,\"trial\":$t"
				if [ "$impl" = remotecall ]; then
					srv RCS $where "$sc" "$B/rc-bench-server" --listen "tcp://127.0.0.1:0" --max-conns $((k + 512)) || continue
				else
					srv RCS $where "$sc" "$B/tirpc-bench-server" --listen "tcp://127.0.0.1:0" || continue
				fi
				rec "$tag" 240 taskset -c "$cc" "$B/rc-bench-conns" --uri "$(uri_of "$RCS" tcp)" --count "$k" \
					--pid "$RCS_PID" --calls $n --hold-ms 2000 --max-seconds 120 --json
				stop "$RCS_PID"
			done
		done
	done
}

# ==== run ========================================================================================================
echo "bench: $MODE run of [$(echo $EXPS)] -> $RES" >&2
echo "bench: remote = $NETNS_NOTE" >&2
for e in $EXPS; do
	exp_begin "$e"
	# in a subshell: a script error inside one experiment is recorded and the run goes on
	( "exp_$e" )
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "{\"exp\":\"$e\",\"what\":\"the experiment script stopped\",\"rc\":$rc,\"cmd\":\"exp_$e\",\"stderr\":\"see run.log and the terminal\"}" >>"$FAILS"
		echo "$(date -u +%T) [$e] the experiment script stopped with status $rc" >>"$LOG"
	fi
	exp_end
done
END=$(date +%s)
echo "{\"exp\":\"all\",\"part\":\"duration\",\"seconds\":$((END - START))}" >>"$RAW"

if [ $REPORT = 1 ]; then
	if python3 "$HERE/report.py" "$RES" >>"$LOG" 2>"$TMP/report.err"; then
		echo "bench: report $RES/report.md" >&2
	else
		echo "bench: the report generator failed:" >&2
		cat "$TMP/report.err" >&2
	fi
fi
if [ $LINK_LATEST = 1 ]; then
	ln -sfn "$TS" "$HERE/results/latest"
fi
NF=$(wc -l <"$FAILS")
echo "bench: done in $(fmt_t $((END - START))); $NF failed step(s)$([ "$NF" -gt 0 ] && echo ": see $FAILS")" >&2
exit 0

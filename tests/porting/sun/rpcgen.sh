#!/usr/bin/env bash
# tests/porting/sun/rpcgen.sh BIN BENCHBIN -- run under tests/interop/with-rpcbind.sh (a private
# rpcbind). The servers built from rpcgen's unmodified output on remotecall (BIN/sun-*-server:
# bench default and -M, rstat, rusers, sm_inter, msg) must link no libtirpc, register with
# rpcbind (rpcinfo -p lists every version over udp and tcp) and answer rpcinfo -u and -t for
# each; the bench servers must also serve a libtirpc client (tirpc-bench-check) and a
# remotecall one (sun-bench-check, rpcgen -M stubs on the compat headers), over udp and tcp;
# and the remotecall client must serve against libtirpc's bench server. Everything started is
# stopped.
set -u
BIN=${1:?usage: rpcgen.sh BIN BENCHBIN}
BENCHBIN=${2:?usage: rpcgen.sh BIN BENCHBIN}
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/rc-sunport.XXXXXX")
PID=""
FAILS=0
CHECKS=0
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMPD"' EXIT
ok() { CHECKS=$((CHECKS + 1)); echo "ok   $*"; }
fail() { CHECKS=$((CHECKS + 1)); FAILS=$((FAILS + 1)); echo "FAIL $*"; }
check() { # check WHAT CMD... -- the command must succeed
	local what=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$what"; else fail "$what: $(printf '%s' "$out" | tr '\n' '|')"; fi
}

# start NAME PROG NVERS -- start BIN/sun-NAME-server and wait until rpcbind lists its NVERS
# versions over udp and tcp.
start() {
	local name=$1 prog=$2 nv=$3 i=0 n
	"$BIN/sun-$name-server" >"$TMPD/$name.out" 2>&1 &
	PID=$!
	while :; do
		n=$(rpcinfo -p 127.0.0.1 2>/dev/null | awk -v p="$prog" '$1 == p' | wc -l)
		[ "$n" -ge $((nv * 2)) ] && break
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$PID" 2>/dev/null; then
			fail "$name: not registered ($n entries): $(tr '\n' '|' <"$TMPD/$name.out")"
			stop
			return 1
		fi
		sleep 0.05
	done
	ok "$name: registered with rpcbind, $nv version(s) over udp and tcp"
}
stop() {
	kill "$PID" 2>/dev/null
	wait "$PID" 2>/dev/null
	PID=""
}

# serve NAME PROG VERS... -- start, rpcinfo -u/-t each version, stop.
serve() {
	local name=$1 prog=$2
	shift 2
	if ldd "$BIN/sun-$name-server" 2>/dev/null | grep -q tirpc; then
		fail "$name: sun-$name-server links libtirpc"
	else
		ok "$name: no libtirpc in sun-$name-server"
	fi
	start "$name" "$prog" $# || return
	for v in "$@"; do
		check "$name: rpcinfo -u 127.0.0.1 $prog $v" rpcinfo -u 127.0.0.1 "$prog" "$v"
		check "$name: rpcinfo -t 127.0.0.1 $prog $v" rpcinfo -t 127.0.0.1 "$prog" "$v"
	done
	# a version it does not serve: rpcinfo reports the mismatch, naming the range
	if out=$(rpcinfo -u 127.0.0.1 "$prog" 99 2>&1); then
		fail "$name: version 99 answered: $out"
	elif printf '%s' "$out" | grep -q "version mismatch"; then
		ok "$name: version 99 refused: $(printf '%s' "$out" | head -1)"
	else
		fail "$name: version 99: $out"
	fi
}

BENCH=542262016 # 0x20524300
for name in bench benchM; do
	serve $name $BENCH 1 || continue
	for proto in udp tcp; do
		if [ -x "$BIN/tirpc-bench-check" ]; then
			check "$name: libtirpc client over $proto" "$BIN/tirpc-bench-check" 127.0.0.1 $proto
		fi
		check "$name: remotecall client over $proto" "$BIN/sun-bench-check" 127.0.0.1 $proto
	done
	stop
done
serve msg 536870913 1 && stop
[ -x "$BIN/sun-rstat-server" ] && serve rstat 100001 1 2 3 && stop
[ -x "$BIN/sun-rusers-server" ] && serve rusers 100002 3 && stop
[ -x "$BIN/sun-sm_inter-server" ] && serve sm_inter 100024 1 && stop

# remotecall's client against libtirpc's server
if [ -x "$BENCHBIN/tirpc-bench-server" ]; then
	"$BENCHBIN/tirpc-bench-server" --listen udp://127.0.0.1:0 --listen tcp://127.0.0.1:0 \
		--rpcbind >"$TMPD/tirpc.out" 2>&1 &
	PID=$!
	i=0
	while [ "$(rpcinfo -p 127.0.0.1 2>/dev/null | awk -v p=$BENCH '$1 == p' | wc -l)" -lt 2 ]; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$PID" 2>/dev/null; then
			fail "tirpc-bench-server did not register: $(tr '\n' '|' <"$TMPD/tirpc.out")"
			break
		fi
		sleep 0.05
	done
	for proto in udp tcp; do
		check "libtirpc server: remotecall client over $proto" "$BIN/sun-bench-check" 127.0.0.1 $proto
	done
	stop
fi
echo "$CHECKS checks, $FAILS failed"
[ $FAILS -eq 0 ]

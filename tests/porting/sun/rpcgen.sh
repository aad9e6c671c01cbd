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

# registered NAME PROG NETIDS -- wait until rpcbind lists program PROG under exactly NETIDS
# (rpcinfo -s's sorted, space-separated form, e.g. "tcp udp ") while server PID $PID lives.
registered() {
	local name=$1 prog=$2 want=$3 i=0 got
	while :; do
		got=$(rpcinfo -s 127.0.0.1 2>/dev/null | awk -v p="$prog" '$1 == p { print $3 }' |
			tr , '\n' | sort | tr '\n' ' ')
		[ "$got" = "$want" ] && break
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$PID" 2>/dev/null; then
			fail "$name: not registered as '$want' ('$got'): $(tr '\n' '|' <"$TMPD/$name.out")"
			stop
			return 1
		fi
		sleep 0.05
	done
}

# start NAME PROG NVERS -- start BIN/sun-NAME-server and wait until rpcbind lists its NVERS
# versions over udp and tcp.
start() {
	local name=$1 prog=$2 nv=$3 v
	# a server killed before (rpcgen's main has no signal handler) leaves its registrations;
	# remove them first, or the wait below could see them and return before this server's
	# own pmap_unset and registrations run (it failed so once under a loaded ASan run)
	for v in $(rpcinfo -p 127.0.0.1 2>/dev/null | awk -v p="$prog" '$1 == p { print $2 }' | sort -u); do
		rpcinfo -d "$prog" "$v" 2>/dev/null
	done
	"$BIN/sun-$name-server" >"$TMPD/$name.out" 2>&1 &
	PID=$!
	registered "$name" "$prog" "tcp udp " || return 1
	if [ "$(rpcinfo -p 127.0.0.1 | awk -v p="$prog" '$1 == p' | wc -l)" -ne $((nv * 2)) ]; then
		fail "$name: rpcbind does not list $nv version(s) over udp and tcp"
		stop
		return 1
	fi
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

# A hand-written server on svc_create("netpath"): registered as udp, tcp, udp6 and tcp6; every
# nettype of clnt_create reaches it, from remotecall and from libtirpc (IPv6 included).
"$BIN/sun-netpath-server" >"$TMPD/netpath.out" 2>&1 &
PID=$!
if registered netpath $BENCH "tcp tcp6 udp udp6 "; then
	grep -q "^listening 4$" "$TMPD/netpath.out" && ok "netpath: svc_create made 4 transports"
	# (the third argument: the address family svc_getcaller must see, the datagram's sender's
	# or the connection's peer's)
	for pf in udp:2 tcp:2 netpath:2 visible:2 circuit_v:2 datagram_v:2 circuit_n:2 datagram_n:2; do
		check "netpath: remotecall client, nettype ${pf%:*}" \
			"$BIN/sun-bench-check" 127.0.0.1 "${pf%:*}" "${pf#*:}"
	done
	for pf in udp6:10 tcp6:10; do
		check "netpath: remotecall client, nettype ${pf%:*}" \
			"$BIN/sun-bench-check" ::1 "${pf%:*}" "${pf#*:}"
	done
	# libtirpc over every netid (its clnt_create knows udp and tcp only; rpcinfo -T all four)
	for proto in udp tcp; do
		if [ -x "$BIN/tirpc-bench-check" ]; then
			check "netpath: libtirpc client over $proto" "$BIN/tirpc-bench-check" 127.0.0.1 $proto \
				2
		fi
	done
	check "netpath: rpcinfo -T udp" rpcinfo -T udp 127.0.0.1 $BENCH 1
	check "netpath: rpcinfo -T tcp" rpcinfo -T tcp 127.0.0.1 $BENCH 1
	check "netpath: rpcinfo -T udp6" rpcinfo -T udp6 ::1 $BENCH 1
	check "netpath: rpcinfo -T tcp6" rpcinfo -T tcp6 ::1 $BENCH 1
	check "netpath: rpcinfo -u" rpcinfo -u 127.0.0.1 $BENCH 1
	stop
	# a killed Sun server leaves its registrations (as libtirpc's does): remove them
	rpcinfo -d $BENCH 1 2>/dev/null
fi

# remotecall's client against libtirpc's server
if [ -x "$BENCHBIN/tirpc-bench-server" ]; then
	"$BENCHBIN/tirpc-bench-server" --listen udp://127.0.0.1:0 --listen tcp://127.0.0.1:0 \
		--rpcbind >"$TMPD/tirpc.out" 2>&1 &
	PID=$!
	registered tirpc $BENCH "tcp udp "
	for proto in udp tcp netpath visible circuit_v datagram_v circuit_n datagram_n; do
		check "libtirpc server: remotecall client, nettype $proto" \
			"$BIN/sun-bench-check" 127.0.0.1 $proto
	done
	stop
fi
echo "$CHECKS checks, $FAILS failed"
[ $FAILS -eq 0 ]

#!/usr/bin/env bash
# tests/runtime/broadcast.sh BIN [RSTAT] -- broadcast calls across a bridge: a client network
# namespace (bridge br0, 10.231.0.1/24) and three server namespaces joined to it by veth pairs
# (10.231.0.11-13), each with its own rpcbind (-r: it forwards CALLIT; bcast_host.sh). Servers
# 1 and 2 serve program 0x20000100 on UDP port 7777, registered with their rpcbind; server 3
# serves another program on the same port (it answers "program unavailable", which must not
# count; its rpcbind does not know 0x20000100, so it stays silent to CALLIT).
#   rc_broadcast to 10.231.0.255:7777 must collect exactly the replies of 1 and 2 (each once,
#   with its address) and time out; with a handler that stops after one, exactly one and
#   RC_OK.
#   The Sun API's (bcast_sun, on the compat headers): rpc_broadcast_exp and clnt_broadcast,
#   through every server's rpcbind, must collect exactly 1 and 2, with the program's port.
#   rup (libtirpc's clnt_broadcast; Debian rstat-client), when installed and RSTAT (rpcgen's
#   rstat server built on remotecall) is given: servers 1 and 2 also run RSTAT, and rup must
#   list exactly those two hosts.
# Needs root and ip netns: else it skips (77). Everything it makes is removed.
set -u
BIN=${1:?usage: broadcast.sh BIN [RSTAT]}
RSTAT=${2:-}
[ -n "$RSTAT" ] && [ ! -x "$RSTAT" ] && RSTAT=""
PEER=$BIN/bcast_peer
HERE=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
	echo "SKIP: needs root and ip(8) for network namespaces"
	exit 77
fi
T=rcb$$
NS="${T}c ${T}1 ${T}2 ${T}3"
PIDS=""
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/rc-bcast.XXXXXX")
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	for n in $NS; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$TMPD"
}
trap cleanup EXIT
FAILS=0
CHECKS=0
ok() { CHECKS=$((CHECKS + 1)); echo "ok   $*"; }
fail() { CHECKS=$((CHECKS + 1)); FAILS=$((FAILS + 1)); echo "FAIL $*"; }

if ! ip netns add "${T}c" 2>/dev/null; then
	echo "SKIP: cannot make a network namespace here"
	exit 77
fi
set -e
ip -n "${T}c" link set lo up
ip -n "${T}c" link add br0 type bridge
ip -n "${T}c" addr add 10.231.0.1/24 brd 10.231.0.255 dev br0
ip -n "${T}c" link set br0 up
for i in 1 2 3; do
	ip netns add "${T}$i"
	ip -n "${T}$i" link set lo up
	ip -n "${T}c" link add "v$i" type veth peer name eth0 netns "${T}$i"
	ip -n "${T}c" link set "v$i" master br0 up
	ip -n "${T}$i" addr add "10.231.0.1$i/24" brd 10.231.0.255 dev eth0
	ip -n "${T}$i" link set eth0 up
done
set +e
echo "     namespaces ${T}c (client, br0) and ${T}1..3 (servers) joined by veth pairs"

PROG=0x20000100
for i in 1 2 3; do
	prog=$PROG
	[ $i = 3 ] && prog=0x20000101
	rstat=""
	[ $i != 3 ] && rstat=$RSTAT
	ip netns exec "${T}$i" unshare -m bash "$HERE/bcast_host.sh" "$PEER" 7777 $prog $i \
		$rstat >"$TMPD/s$i.out" 2>&1 &
	PIDS="$PIDS $!"
done
for i in 1 2 3; do
	n=0
	until grep -q listening "$TMPD/s$i.out"; do
		n=$((n + 1))
		[ $n -gt 100 ] && { fail "server $i did not start: $(cat "$TMPD/s$i.out")"; exit 1; }
		sleep 0.05
	done
done
# bridge ports take a moment to forward
sleep 0.5

# replies_are WHAT PORT -- $out (shown) must hold exactly the replies of servers 1 and 2, with
# their addresses (":PORT" after them when PORT is given)
replies_are() {
	local got want="reply 1 from 10.231.0.11$2|reply 2 from 10.231.0.12$2|"
	echo "$out" | sed 's/^/     /'
	got=$(echo "$out" | grep '^reply' | sort | tr '\n' '|')
	[ "$got" = "$want" ] && ok "$1: exactly the replies of servers 1 and 2, with their addresses" ||
		fail "$1: replies '$got'"
}

out=$(ip netns exec "${T}c" "$PEER" rc udp://10.231.0.255:7777 $PROG 1500)
replies_are rc_broadcast ""
echo "$out" | grep -q '^replies 2 status RC_TIMEDOUT$' && ok "rc_broadcast: 2 replies, RC_TIMEDOUT at the deadline" ||
	fail "rc_broadcast: $(echo "$out" | tail -1)"

out=$(ip netns exec "${T}c" "$PEER" rc udp://10.231.0.255:7777 $PROG 1500 1)
echo "$out" | grep -q '^replies 1 status RC_OK$' && ok "rc_broadcast: the handler stops it after one (RC_OK)" ||
	fail "rc_broadcast, stop after one: $(echo "$out" | tr '\n' '|')"

out=$(ip netns exec "${T}c" "$PEER" rc udp://10.231.0.255:7777 0x20000102 800)
echo "$out" | grep -q '^replies 0 status RC_TIMEDOUT$' && ok "rc_broadcast: a program nobody serves: no replies" ||
	fail "rc_broadcast, unserved program: $(echo "$out" | tr '\n' '|')"

# The Sun API through rpcbind (CALLIT to port 111 of the interface's broadcast address)
out=$(ip netns exec "${T}c" "$BIN/bcast_sun" exp $PROG 500 1000)
replies_are "rpc_broadcast_exp (the program's port)" :7777
echo "$out" | grep -q '^replies 2 status RPC: Timed out$' &&
	ok "rpc_broadcast_exp: RPC_TIMEDOUT at the end" || fail "rpc_broadcast_exp: $(echo "$out" | tail -1)"
echo "$out" | grep -q 'bad netbuf' && fail "rpc_broadcast_exp: eachresult's netbuf or netconfig"
out=$(ip netns exec "${T}c" "$BIN/bcast_sun" clnt $PROG 2)
replies_are clnt_broadcast :7777
echo "$out" | grep -q '^replies 2 status RPC: Success$' &&
	ok "clnt_broadcast: eachresult's TRUE ends it (RPC_SUCCESS)" ||
	fail "clnt_broadcast: $(echo "$out" | tail -1)"

if [ -n "$RSTAT" ] && command -v rup >/dev/null; then
	out=$(ip netns exec "${T}c" timeout 60 rup 2>&1)
	echo "$out" | sed 's/^/     /'
	hosts=$(echo "$out" | grep -c ' up ')
	if [ "$hosts" = 2 ] && echo "$out" | grep -q '10.231.0.11' && echo "$out" | grep -q '10.231.0.12'; then
		ok "rup (libtirpc's clnt_broadcast) lists exactly the two remotecall rstat servers"
	else
		fail "rup: $(echo "$out" | tr '\n' '|')"
	fi
else
	echo "     (rup or the rstat server missing: the rup check is skipped)"
fi

echo "$CHECKS checks, $FAILS failed"
[ $FAILS -eq 0 ]

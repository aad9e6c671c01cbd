#!/usr/bin/env bash
# tests/porting/port.sh BIN -- the message program as written for rpcgen + libtirpc (orig-*)
# and as ported to remotecall (ported-*): every client against every server, over TCP on
# loopback. Each server must print the message, each client "Message delivered to 127.0.0.1".
# Everything it starts is stopped.
set -u
BIN=${1:?usage: port.sh BIN}
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/rc-porting.XXXXXX")
PIDS=""
FAILS=0
CHECKS=0
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$TMPD"' EXIT
fail() { FAILS=$((FAILS + 1)); echo "FAIL $*"; }

for srv in orig ported; do
	out=$TMPD/$srv.out
	: >"$out"
	"$BIN/$srv-msg-server" >"$out" 2>&1 &
	pid=$!
	PIDS="$PIDS $pid"
	i=0
	while ! grep -q '^listening ' "$out"; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$pid" 2>/dev/null; then
			echo "FAIL $srv-msg-server did not start: $(cat "$out")"
			exit 1
		fi
		sleep 0.05
	done
	port=$(awk '/^listening /{ n = split($2, a, ":"); print a[n]; exit }' "$out")
	for cli in orig ported; do
		CHECKS=$((CHECKS + 1))
		msg="hello from $cli to $srv"
		if got=$(timeout 20 "$BIN/$cli-rprintmsg" 127.0.0.1 "$port" "$msg" 2>&1) &&
			[ "$got" = "Message delivered to 127.0.0.1" ] && grep -qxF "message: $msg" "$out"; then
			echo "ok   $cli client -> $srv server: $got"
		else
			fail "$cli client -> $srv server: '$got'; server printed: $(tr '\n' '|' <"$out")"
		fi
	done
	# an error path: a procedure the server does not have, reported through clnt_perror
	kill "$pid"
	wait "$pid" 2>/dev/null
done
CHECKS=$((CHECKS + 1))
if got=$(timeout 20 "$BIN/ported-rprintmsg" 127.0.0.1 9 "nobody" 2>&1); then
	fail "ported client to a closed port succeeded: $got"
elif printf '%s' "$got" | grep -q "^127.0.0.1: "; then
	echo "ok   ported client, no server: $got"
else
	fail "ported client, no server: '$got'"
fi
echo "$CHECKS checks, $FAILS failed"
[ $FAILS -eq 0 ]

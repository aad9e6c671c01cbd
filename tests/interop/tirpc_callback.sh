#!/usr/bin/env bash
# tests/interop/tirpc_callback.sh CLIENT SERVER -- a libtirpc client (tirpc-callback) of a
# remotecall server that calls its clients back on their connections (examples/notify's
# notify-server). libtirpc has no back channel: the call the server sends it is skipped by its
# clnt_vc_call (a record that is not a reply), so the server's call back times out after its
# 2 s, the subscriber is dropped, and the libtirpc client's own calls succeed as usual -- its
# PUBLISH is answered "took 0" once the server has given up on it. Checks exactly that.
set -u
CLIENT=$1 SERVER=$2
LOG=$(mktemp)
FAIL=0
trap 'kill $SPID 2>/dev/null; wait $SPID 2>/dev/null; rm -f "$LOG"' EXIT
timeout 60 "$SERVER" --tick-ms 600000 >"$LOG" 2>&1 &
SPID=$!
for _ in $(seq 100); do grep -q '^listening ' "$LOG" && break; sleep 0.05; done
URI=$(sed -n 's/^listening //p' "$LOG")
[ -n "$URI" ] || { echo "FAIL: the server did not start"; cat "$LOG"; exit 1; }
OUT=$(timeout 30 "$CLIENT" "$URI" 10 2>&1) || { echo "FAIL: tirpc-callback exited $?"; FAIL=1; }
echo "$OUT"
echo "$OUT" | grep -Eq '^subscribe: RPC_SUCCESS id [0-9]+$' || { echo "FAIL: subscribe"; FAIL=1; }
ms=$(echo "$OUT" | sed -nE 's/^publish: RPC_SUCCESS took 0 in ([0-9]+) ms$/\1/p')
if [ -z "$ms" ]; then
	echo "FAIL: publish did not succeed with took 0"; FAIL=1
elif [ "$ms" -lt 1500 ]; then
	echo "FAIL: publish answered in $ms ms: the server's call back should have waited its 2 s"; FAIL=1
fi
kill -TERM $SPID; wait $SPID; st=$?
sed 's/^/    server | /' "$LOG"
[ $st -eq 0 ] || { echo "FAIL: the server exited $st"; FAIL=1; }
grep -Eq '^subscriber [0-9]+ dropped: timed out' "$LOG" ||
	{ echo "FAIL: the server did not drop the libtirpc subscriber on its timeout"; FAIL=1; }
[ $FAIL -eq 0 ] && echo "ok   a libtirpc client ignores a call back; the server times it out"
exit $FAIL

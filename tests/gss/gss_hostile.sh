#!/usr/bin/env bash
# tests/gss/gss_hostile.sh BIN -- ctest gss_hostile: hostile RPCSEC_GSS calls over TCP against
# remotecall's runtime (BIN/gss_rc_peer server: rc_server_set_gss, rc_server_limits'
# gss_contexts 16) from BIN/gss_wire_peer hostile, which writes each call by hand: a replay
# and a too old seq dropped and counted (gss_dropped), a forged header MIC and an unknown
# handle CREDPROBLEM, MAXSEQ CTXPROBLEM, corrupted or truncated integrity and privacy bodies
# GARBAGE_ARGS, DESTROY with a bad MIC refused, 600 INITs and 5000 random handles (the table
# stays at 16, the server's memory flat, gss_evicted counts the rest). Then gss_idle_ms 700:
# an idle context is gone, and
# remotecall's client (gss_rc_peer client --pause) makes its context again by itself and its
# call succeeds. Last, gss_wire_peer spoof over UDP: a spoofed AUTH_SYS duplicate of an
# RPCSEC_GSS call's xid and arguments does not block or answer it (the duplicate request
# cache's key). Run inside krb5_fixture.sh's realm.
set -u
BIN=${1:?usage: gss_hostile.sh BIN}
: "${RC_KRB5_DIR:?run inside tests/gss/krb5_fixture.sh}"
. "$(dirname "$0")/serve_lib.sh"
FAILS=0

# start_rc ARGS...: gss_rc_peer's server on a loopback port, PORT set
PORT_SED='s/^listening tcp:\/\/127.0.0.1:\([0-9]*\)$/\1/p'
# (a sanitizer build: ASan's quarantine holds freed memory back on purpose, which is not what
# the RSS check measures)
start_rc() {
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0 start_server "$BIN/gss_rc_peer" server --name nfs@localhost --listen tcp://127.0.0.1:0 "$@"
}
stop_rc() {
	kill -0 "$SRV" 2>/dev/null || { echo "FAIL: the server died"; cat "$TMPD/srv.err"; FAILS=$((FAILS + 1)); }
	kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null; SRV=
}

start_rc --gss-contexts 16
timeout 300 "$BIN/gss_wire_peer" hostile --port "$PORT" --bound 16 >"$TMPD/h" 2>&1 || FAILS=$((FAILS + 1))
cat "$TMPD/h"
stop_rc

start_rc --gss-idle-ms 700
timeout 60 "$BIN/gss_wire_peer" hostile --port "$PORT" --idle-ms 700 >"$TMPD/h" 2>&1 || FAILS=$((FAILS + 1))
cat "$TMPD/h"
# remotecall's client: a context the server let go idle is made again, transparently
P="$TMPD/pause"
timeout 60 "$BIN/gss_rc_peer" client --uri "tcp://127.0.0.1:$PORT" --echo 100 --calls 1 \
	--pause "$P" >"$TMPD/cl" 2>&1 &
CL=$!
for _ in $(seq 400); do [ -e "$P.paused" ] && break; sleep 0.05; done
sleep 1.1
touch "$P.resumed"
if wait "$CL" && grep -q '^echo 100 ok again' "$TMPD/cl"; then
	echo "ok: remotecall's client after its context went idle (700 ms): made again, call served"
else
	echo "FAIL: remotecall's client after an idle eviction:"; cat "$TMPD/cl"
	FAILS=$((FAILS + 1))
fi
stop_rc

# The duplicate request cache's key holds the flavor and the context handle (issue 45): an
# AUTH_SYS call from the victim's UDP address and port with the xid and arguments of its
# RPCSEC_GSS call that follows neither answers nor blocks that call.
start_rc --require off --listen udp://127.0.0.1:0
UPORT=$(sed -n 's/^listening udp:\/\/127.0.0.1:\([0-9]*\)$/\1/p' "$TMPD/srv.out")
timeout 60 "$BIN/gss_wire_peer" spoof --port "$PORT" --udp-port "$UPORT" >"$TMPD/h" 2>&1 || FAILS=$((FAILS + 1))
cat "$TMPD/h"
stop_rc
[ $FAILS -eq 0 ] && echo "gss_hostile: all passed" || echo "gss_hostile: $FAILS failed"
exit $((FAILS > 0))

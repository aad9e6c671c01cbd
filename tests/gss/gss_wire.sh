#!/usr/bin/env bash
# tests/gss/gss_wire.sh BIN -- ctest gss_wire: the RPCSEC_GSS core (runtime/auth/gss.h) on a real
# TCP wire against libtirpc's RPCSEC_GSS, before the runtime's plumbing exists. BIN holds
# gss_wire_peer (a bare RPC client/server over the core), tirpc_gss_server and
# tirpc_gss_client. For each service (none, integrity, privacy):
#   1. the core's client -> libtirpc's server (rpc_gss_set_svc_name + rpc_gss_getcred): the
#      context, ECHO's bytes, the principal libtirpc saw, 100 NULL calls
#   2. libtirpc's client (rpc_gss_seccreate) -> the core's server: the same, checked by
#      libtirpc's own verifier and unwrap code
#   3. the core's client -> the core's server, then DESTROY: the next call gets CREDPROBLEM
# Run inside the realm of krb5_fixture.sh (`krb5_fixture.sh run bash gss_wire.sh BIN`).
set -u
BIN=${1:?usage: gss_wire.sh BIN}
: "${RC_KRB5_DIR:?run inside tests/gss/krb5_fixture.sh}"
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/rc-gss-wire.XXXXXX")
PIDS=
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	rm -rf "$TMPD"
}
trap cleanup EXIT
FAILS=0
VG=()
if [ -n "${RC_VALGRIND:-}" ]; then
	VG=(valgrind -q --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite
	    --error-exitcode=97 --suppressions="$(cd "$(dirname "$0")/.." && pwd)/valgrind.supp")
fi

start() { # NAME CMD...: start a server, wait for "port N", set PORT
	local name=$1
	shift
	"$@" >"$TMPD/$name.out" 2>"$TMPD/$name.err" &
	PIDS="$PIDS $!"
	PORT=
	for _ in $(seq 300); do
		PORT=$(sed -n 's/^port \([0-9]*\)$/\1/p' "$TMPD/$name.out")
		[ -n "$PORT" ] && return 0
		sleep 0.05
	done
	echo "FAIL: $name did not start"; cat "$TMPD/$name.err"
	exit 1
}

check() { # WHAT CMD...: run a client, want exit 0 and the echo line
	local what=$1
	shift
	if timeout 120 "$@" >"$TMPD/cl" 2>&1 && grep -q '^echo 3000 ok$' "$TMPD/cl" &&
		grep -q '^principal rcuser@RC.TEST$' "$TMPD/cl"; then
		echo "ok: $what: $(grep -E '^(null|after)' "$TMPD/cl" | tr '\n' ' ')"
	else
		echo "FAIL: $what:"
		sed 's/^/    /' "$TMPD/cl"
		FAILS=$((FAILS + 1))
	fi
}

start tirpc "$BIN/tirpc_gss_server" --name nfs@localhost
TPORT=$PORT
start core "${VG[@]}" "$BIN/gss_wire_peer" server --name nfs@localhost
CPORT=$PORT
for svc in none integrity privacy; do
	check "core client -> libtirpc server, $svc" "${VG[@]}" "$BIN/gss_wire_peer" client \
		--port "$TPORT" --service "$svc" --echo 3000 --calls 100 \
		--expect-principal rcuser@RC.TEST
	check "libtirpc client -> core server, $svc" "$BIN/tirpc_gss_client" --port "$CPORT" \
		--service "$svc" --echo 3000 --calls 100 --expect-principal rcuser@RC.TEST
	check "core client -> core server, $svc, DESTROY" "${VG[@]}" "$BIN/gss_wire_peer" client \
		--port "$CPORT" --service "$svc" --echo 3000 --calls 100 --destroy \
		--expect-principal rcuser@RC.TEST
	grep -q '^after DESTROY: CREDPROBLEM$' "$TMPD/cl" ||
		{ echo "FAIL: the context served after DESTROY"; FAILS=$((FAILS + 1)); }
done
for p in $PIDS; do
	kill -0 "$p" 2>/dev/null || { echo "FAIL: a server died"; cat "$TMPD"/*.err; FAILS=$((FAILS + 1)); }
done
[ $FAILS -eq 0 ] && echo "gss_wire: all passed" || echo "gss_wire: $FAILS failed"
exit $((FAILS > 0))

#!/usr/bin/env bash
# tests/gss/sun_gss.sh BIN [TIRPC_BIN] -- ctest gss_sunrpc: the Sun RPCSEC_GSS API
# (<remotecall/sunrpc_gss.h>). BIN/sun_gss_client and BIN/sun_gss_server are libtirpc's test
# programs (tirpc_gss_client.c, tirpc_gss_server.c: rpc_gss_seccreate, rpc_gss_get_error,
# rpc_gss_set_svc_name, rpc_gss_getcred, svc_vc_create, svc_run) recompiled unchanged against
# remotecall's compat headers. They run against each other and, with TIRPC_BIN (the libtirpc
# builds), against libtirpc both ways: services none, integrity and privacy, ECHO's 5000 bytes
# back and the principal rcuser@RC.TEST as rpc_gss_getcred gave it, then 100 NULL calls. Then
# BIN/sun_gss_api checks the rest of the API (sun_gss_api.c). Run inside the realm of
# krb5_fixture.sh.
set -u
BIN=${1:?usage: sun_gss.sh BIN [TIRPC_BIN]}
TBIN=${2:-}
: "${RC_KRB5_DIR:?run inside tests/gss/krb5_fixture.sh}"
. "$(dirname "$0")/serve_lib.sh"
FAILS=0

stop_server() {
	if ! kill -0 "$SRV" 2>/dev/null; then
		echo "FAIL: the server died"; cat "$TMPD/srv.err"
		FAILS=$((FAILS + 1))
	fi
	kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null; SRV=
}

# pair CLIENT SERVER LABEL
pair() {
	local cl=$1 sv=$2 label=$3
	start_server "$sv" --name nfs@localhost
	for svc in none integrity privacy; do
		if timeout 60 "$cl" --port "$PORT" --name nfs@localhost --service "$svc" \
			--echo 5000 --calls 100 --expect-principal rcuser@RC.TEST >"$TMPD/cl" 2>&1 &&
			grep -q '^echo 5000 ok$' "$TMPD/cl"; then
			echo "ok: $label, $svc: $(grep '^null' "$TMPD/cl")"
		else
			echo "FAIL: $label, $svc:"; cat "$TMPD/cl"
			FAILS=$((FAILS + 1))
		fi
	done
	stop_server
}

pair "$BIN/sun_gss_client" "$BIN/sun_gss_server" "Sun API client -> Sun API server (remotecall both)"
if [ -n "$TBIN" ]; then
	pair "$BIN/sun_gss_client" "$TBIN/tirpc_gss_server" "Sun API client (remotecall) -> libtirpc server"
	pair "$TBIN/tirpc_gss_client" "$BIN/sun_gss_server" "libtirpc client -> Sun API server (remotecall)"
else
	echo "note: libtirpc not built: the libtirpc pairs are not run"
fi

# the server refuses a principal it has no key for, with rpc_gss_get_error's EACCES
if timeout 30 "$BIN/sun_gss_server" --name nosuch@localhost >"$TMPD/bad.out" 2>"$TMPD/bad.err"; then
	echo "FAIL: sun_gss_server started with a principal missing from the keytab"
	FAILS=$((FAILS + 1))
elif grep -q "rpc_gss_set_svc_name(nosuch@localhost) failed (1, 13)" "$TMPD/bad.err"; then
	echo "ok: rpc_gss_set_svc_name refuses a principal with no key (1, EACCES)"
else
	echo "FAIL: sun_gss_server with a missing principal:"; cat "$TMPD/bad.err"
	FAILS=$((FAILS + 1))
fi

if [ -x "$BIN/sun_gss_api" ]; then
	if timeout 120 "$BIN/sun_gss_api" >"$TMPD/api" 2>&1; then
		sed 's/^/  /' "$TMPD/api"; echo "ok: sun_gss_api"
	else
		echo "FAIL: sun_gss_api:"; cat "$TMPD/api"
		FAILS=$((FAILS + 1))
	fi
fi
[ $FAILS -eq 0 ] && echo "sun_gss: all passed" || echo "sun_gss: $FAILS failed"
exit $((FAILS > 0))

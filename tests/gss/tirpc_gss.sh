#!/usr/bin/env bash
# tests/gss/tirpc_gss.sh BIN -- ctest gss_tirpc_tirpc: libtirpc's RPCSEC_GSS client against
# libtirpc's RPCSEC_GSS server (BIN/tirpc_gss_client, BIN/tirpc_gss_server), services none,
# integrity and privacy: ECHO's bytes come back and the server saw rcuser@RC.TEST through
# rpc_gss_getcred; then 200 timed NULL calls each. Run inside the realm of krb5_fixture.sh
# (`krb5_fixture.sh run bash tirpc_gss.sh BIN`).
#
# DESTROY is not exercised: libtirpc 1.3.3's server frees a context before it dispatches its
# DESTROY (issue 28); RC_GSS_TIRPC_DESTROY=1 runs one client with --destroy and reports what
# the server did, without failing the test.
set -u
BIN=${1:?usage: tirpc_gss.sh BIN}
: "${RC_KRB5_DIR:?run inside tests/gss/krb5_fixture.sh}"
. "$(dirname "$0")/serve_lib.sh"
FAILS=0

start_server "$BIN/tirpc_gss_server" --name nfs@localhost
for svc in none integrity privacy; do
	if timeout 60 "$BIN/tirpc_gss_client" --port "$PORT" --name nfs@localhost --service "$svc" \
		--echo 5000 --calls 200 --expect-principal rcuser@RC.TEST >"$TMPD/cl.$svc" 2>&1 &&
		grep -q '^echo 5000 ok$' "$TMPD/cl.$svc"; then
		echo "ok: libtirpc client -> libtirpc server, $svc: $(grep '^null' "$TMPD/cl.$svc")"
	else
		echo "FAIL: libtirpc client -> libtirpc server, $svc:"
		cat "$TMPD/cl.$svc"
		FAILS=$((FAILS + 1))
	fi
done
if ! kill -0 "$SRV" 2>/dev/null; then
	echo "FAIL: tirpc_gss_server died"; cat "$TMPD/srv.err"
	FAILS=$((FAILS + 1))
fi

if [ -n "${RC_GSS_TIRPC_DESTROY:-}" ]; then
	kill "$SRV"; wait "$SRV" 2>/dev/null
	start_server "$BIN/tirpc_gss_server" --name nfs@localhost --null-getcred
	timeout 60 "$BIN/tirpc_gss_client" --port "$PORT" --service integrity --calls 0 --destroy \
		>"$TMPD/cl.destroy" 2>&1
	echo "DESTROY (informational): client exit $?: $(tr '\n' ' ' <"$TMPD/cl.destroy")"
	sleep 0.2
	if kill -0 "$SRV" 2>/dev/null; then
		echo "DESTROY (informational): the server is still alive"
	else
		wait "$SRV"; echo "DESTROY (informational): the server died, status $?"; SRV=
		tail -3 "$TMPD/srv.err"
	fi
fi
[ $FAILS -eq 0 ] && echo "tirpc_gss: all passed" || echo "tirpc_gss: $FAILS failed"
exit $((FAILS > 0))

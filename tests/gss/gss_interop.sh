#!/usr/bin/env bash
# tests/gss/gss_interop.sh BIN -- ctest gss_interop: RPCSEC_GSS through remotecall's runtime
# (rc_server_set_gss, rc_client_set_auth_gss; BIN/gss_rc_peer) against libtirpc's
# (BIN/tirpc_gss_server, BIN/tirpc_gss_client) both ways over TCP, and remotecall to
# remotecall over TCP and UDP, services none, integrity and privacy: ECHO's bytes come back
# and the server saw rcuser@RC.TEST. Run inside krb5_fixture.sh's realm.
set -u
BIN=${1:?usage: gss_interop.sh BIN}
: "${RC_KRB5_DIR:?run inside tests/gss/krb5_fixture.sh}"
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/rc-gss-interop.XXXXXX")
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	rm -rf "$TMPD"
}
trap cleanup EXIT
FAILS=0
WHO=rcuser@RC.TEST
# remotecall's own programs under valgrind in the valgrind pass
VG=()
[ -n "${RC_VALGRIND:-}" ] && VG=(valgrind -q --error-exitcode=97 --leak-check=full
	--errors-for-leak-kinds=definite --suppressions="$(dirname "$0")/../valgrind.supp")

wait_for() { # wait_for FILE PATTERN PID
	for _ in $(seq 400); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

"$BIN/tirpc_gss_server" --name nfs@localhost >"$TMPD/ts.out" 2>"$TMPD/ts.err" &
PIDS+=($!)
wait_for "$TMPD/ts.out" '^port ' $! || { echo "FAIL: tirpc_gss_server did not start"; cat "$TMPD/ts.err"; exit 1; }
TPORT=$(sed -n 's/^port \([0-9]*\)$/\1/p' "$TMPD/ts.out")

"${VG[@]}" "$BIN/gss_rc_peer" server --name nfs@localhost --listen tcp://127.0.0.1:0 \
	--listen udp://127.0.0.1:0 >"$TMPD/rs.out" 2>"$TMPD/rs.err" &
RS=$!
PIDS+=($RS)
wait_for "$TMPD/rs.out" '^listening udp' $RS || { echo "FAIL: gss_rc_peer server did not start"; cat "$TMPD/rs.err"; exit 1; }
RTCP=$(awk '/^listening tcp/ { print $2 }' "$TMPD/rs.out")
RUDP=$(awk '/^listening udp/ { print $2 }' "$TMPD/rs.out")
RPORT=${RTCP##*:}

run() { # run LABEL CMD...
	local label=$1; shift
	if timeout 120 "$@" >"$TMPD/cl.out" 2>&1 && grep -q '^echo .* ok' "$TMPD/cl.out"; then
		echo "ok: $label: $(grep '^null' "$TMPD/cl.out")"
	else
		echo "FAIL: $label:"; cat "$TMPD/cl.out"
		FAILS=$((FAILS + 1))
	fi
}
# tooweak LABEL CMD...: the client must fail with AUTH_TOOWEAK (auth_stat 5, by name)
tooweak() {
	local label=$1; shift
	if "$@" >"$TMPD/weak.out" 2>&1; then
		echo "FAIL: $label accepted"; FAILS=$((FAILS + 1))
	elif grep -q 'AUTH_TOOWEAK' "$TMPD/weak.out"; then
		echo "ok: $label refused (AUTH_TOOWEAK)"
	else
		echo "FAIL: $label: $(cat "$TMPD/weak.out")"; FAILS=$((FAILS + 1))
	fi
}

# With libtirpc the echo stays under 64 KiB: libtirpc 1.3.3 cannot wrap more for integrity or
# privacy (its own client against its own server gets "can't decode arguments" at 70,000
# bytes: xdr_rpc_gss_wrap_data takes the body with XDR_INLINE from its record buffer).
for svc in none integrity privacy; do
	run "remotecall client -> libtirpc server, tcp, $svc" "${VG[@]}" "$BIN/gss_rc_peer" client \
		--uri "tcp://127.0.0.1:$TPORT" --service $svc --echo 60000 --calls 100 --expect-principal $WHO
	run "libtirpc client -> remotecall server, tcp, $svc" "$BIN/tirpc_gss_client" --port "$RPORT" \
		--name nfs@localhost --service $svc --echo 60000 --calls 100 --expect-principal $WHO
	run "remotecall -> remotecall, tcp, $svc" "${VG[@]}" "$BIN/gss_rc_peer" client --uri "$RTCP" \
		--service $svc --echo 1000000 --calls 100 --expect-principal $WHO
	run "remotecall -> remotecall, udp, $svc" "${VG[@]}" "$BIN/gss_rc_peer" client --uri "$RUDP" \
		--service $svc --echo 8000 --calls 100 --expect-principal $WHO
done
# the server restarted under a client (its contexts gone): the next call is refused with
# RPCSEC_GSS_CREDPROBLEM, and the client makes a context again by itself and goes on
"${VG[@]}" "$BIN/gss_rc_peer" client --uri "$RTCP" --service integrity --echo 1000 --calls 10 \
	--expect-principal $WHO --pause "$TMPD/p" >"$TMPD/re.out" 2>&1 &
RC_CL=$!
for _ in $(seq 600); do [ -e "$TMPD/p.paused" ] && break; sleep 0.05; done
kill "$RS"; wait "$RS" 2>/dev/null
"${VG[@]}" "$BIN/gss_rc_peer" server --name nfs@localhost --listen "$RTCP" >"$TMPD/rs2.out" 2>"$TMPD/rs2.err" &
RS=$!
PIDS+=($RS)
wait_for "$TMPD/rs2.out" '^listening' $RS || { echo "FAIL: the restarted server did not start"; cat "$TMPD/rs2.err"; FAILS=$((FAILS + 1)); }
touch "$TMPD/p.resumed"
if wait "$RC_CL" && grep -q '^echo 1000 ok again' "$TMPD/re.out"; then
	echo "ok: a context the restarted server lost is made again by the client"
else
	echo "FAIL: context after a server restart:"; cat "$TMPD/re.out"; FAILS=$((FAILS + 1))
fi
# a program that requires privacy refuses integrity (AUTH_TOOWEAK) and takes privacy
"${VG[@]}" "$BIN/gss_rc_peer" server --name nfs@localhost --require privacy \
	--listen tcp://127.0.0.1:0 >"$TMPD/rp.out" 2>"$TMPD/rp.err" &
RP=$!
PIDS+=($RP)
if wait_for "$TMPD/rp.out" '^listening' $RP; then
	RPU=$(awk '/^listening tcp/ { print $2 }' "$TMPD/rp.out")
	tooweak "integrity where privacy is required" \
		"$BIN/gss_rc_peer" client --uri "$RPU" --service integrity --calls 0
	run "privacy where privacy is required" "$BIN/gss_rc_peer" client --uri "$RPU" \
		--service privacy --echo 100 --calls 0 --expect-principal $WHO
else
	echo "FAIL: gss_rc_peer --require privacy did not start"; FAILS=$((FAILS + 1))
fi
# RPCSEC_GSS inside RPC-over-TLS (RFC 9289 allows both at once): a server that requires TLS
# for the program, remotecall's client with ?tls=required, each service; a plaintext client
# is refused (AUTH_TOOWEAK)
if bash "$(dirname "$0")/../runtime/tls_certs.sh" "$TMPD/certs" >/dev/null 2>&1; then
	"${VG[@]}" "$BIN/gss_rc_peer" server --name nfs@localhost --listen tcp://127.0.0.1:0 \
		--tls-cert "$TMPD/certs/server.pem" --tls-key "$TMPD/certs/server.key" \
		--tls-required yes >"$TMPD/rt.out" 2>"$TMPD/rt.err" &
	RT=$!
	PIDS+=($RT)
	if wait_for "$TMPD/rt.out" '^listening' $RT; then
		RTU=$(awk '/^listening tcp/ { print $2 }' "$TMPD/rt.out")
		for svc in none integrity privacy; do
			run "remotecall -> remotecall, GSS over TLS, $svc" "${VG[@]}" "$BIN/gss_rc_peer" \
				client --uri "$RTU?tls=required&ca=$TMPD/certs/ca.pem" --service $svc \
				--echo 100000 --calls 100 --expect-principal $WHO
		done
		tooweak "GSS without TLS where TLS is required" \
			"$BIN/gss_rc_peer" client --uri "$RTU" --service privacy --calls 0
	else
		echo "FAIL: gss_rc_peer with TLS did not start: $(cat "$TMPD/rt.err")"; FAILS=$((FAILS + 1))
	fi
else
	echo "FAIL: tls_certs.sh could not make certificates (openssl)"; FAILS=$((FAILS + 1))
fi
# a client without a ticket for the name gets GSS's own words
if "$BIN/gss_rc_peer" client --uri "$RTCP" --name nosuch@localhost --calls 0 >"$TMPD/bad.out" 2>&1; then
	echo "FAIL: a context with an unknown service principal was made"; FAILS=$((FAILS + 1))
elif grep -qi 'not found\|unknown\|server' "$TMPD/bad.out"; then
	echo "ok: unknown service principal refused: $(tr '\n' ' ' <"$TMPD/bad.out")"
else
	echo "FAIL: unknown service principal: $(cat "$TMPD/bad.out")"; FAILS=$((FAILS + 1))
fi
for p in "$RS" "${PIDS[0]}"; do
	kill -0 "$p" 2>/dev/null || { echo "FAIL: a server died"; cat "$TMPD/rs.err" "$TMPD/ts.err"; FAILS=$((FAILS + 1)); }
done
[ $FAILS -eq 0 ] && echo "gss_interop: all passed"
exit $((FAILS > 0))

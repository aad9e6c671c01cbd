#!/usr/bin/env bash
# tests/lb/haproxy_tls.sh BIN CFG -- RPC-over-TLS (RFC 9289) through a real HAProxy in TCP
# passthrough mode (issue 42), on loopback: two rc-bench-servers listening with ?proxy=v2 and
# TLS certificates that require client certificates (mutual TLS, tests/runtime/tls_certs.sh),
# HAProxy in front with the recipe docs/haproxy-remotecall.cfg (CFG) unchanged; everything
# started is stopped at the end.
#   1. both servers are UP by the (plaintext) RPC NULL check
#   2. rc-bench-client --tls required with alice's certificate: its calls succeed under TLS,
#      and the server saw a TLS caller with alice's subject (--log-callers)
#   3. an independent client (tests/interop/tls_peer.py: Python's ssl) with alice's
#      certificate: probe, handshake, calls; the server logged its own address and port and
#      alice's subject -- the PROXY header was read before the TLS handshake, and both reach
#      the server
#   4. a client certificate from another CA: the handshake fails, no call is served
#   5. HAProxy again with send-proxy (PROXY v1) in place of send-proxy-v2: checks and 3 again
#   6. servers made TLS-only (--tls-require), the recipe's check pointed at remotecall's
#      control program (0x3fd7c0de, NULL): UP; a plaintext call refused; 3 again
BIN=$1 CFG=$2
T_LIMIT=${T_LIMIT:-30}
RC_TMP_PREFIX=rc-lbtls
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../interop/lib.sh
. "$HERE/../interop/lib.sh"
# shellcheck source=lib.sh
. "$HERE/lib.sh"
C=$TMPD/certs
bash "$HERE/../runtime/tls_certs.sh" "$C" || { fail "tls_certs.sh"; finish; }
ALICE='CN=alice,O=remotecall tests'

srv_args=(--log-callers --tls-cert "$C/server.pem" --tls-key "$C/server.key" --tls-ca "$C/ca.pem")
start_server s1 "$BIN/rc-bench-server" --listen 'tcp://127.0.0.1:0?proxy=v2' "${srv_args[@]}" || finish
start_server s2 "$BIN/rc-bench-server" --listen 'tcp://127.0.0.1:0?proxy=v2' "${srv_args[@]}" || finish
start_haproxy "$CFG" "127.0.0.1:$s1_tcp_port" "127.0.0.1:$s2_tcp_port"
both_up

# 2. remotecall's own TLS client, with alice's certificate.
cli_tls=(--tls required --tls-ca "$C/ca.pem" --tls-name localhost)
expect_out "rc-bench-client --tls required through HAProxy: 200 ADD calls under TLS" '^tls: on$' \
	"$BIN/rc-bench-client" --uri "tcp://127.0.0.1:$LBP" --proc add --arg 1 --calls 200 \
	--warmup 0 "${cli_tls[@]}" --tls-cert "$C/client.pem" --tls-key "$C/client.key"
CHECKS=$((CHECKS + 1))
if grep -q "^caller 127.0.0.1:[0-9]* tls $ALICE\$" "$TMPD/s1.out" "$TMPD/s2.out"; then
	echo "ok   a server saw the rc client under TLS, with alice's certificate"
else
	fail "no server logged a TLS caller with $ALICE: $(cat "$TMPD/s1.out" "$TMPD/s2.out")"
fi

# 3. The independent client: its own address and port, and its certificate, reach the server.
# py_client WHAT: tls_peer.py through HAProxy with alice's certificate (a counted check).
py_client() {
	local st port
	timeout "$T_LIMIT" python3 "$HERE/../interop/tls_peer.py" client 127.0.0.1 "$LBP" \
		"$C/ca.pem" --cert "$C/client.pem" --key "$C/client.key" >"$TMPD/py.out" 2>&1
	st=$?
	port=$(sed -n 's/^local port //p' "$TMPD/py.out")
	CHECKS=$((CHECKS + 1))
	if [ "$st" -eq 0 ] && [ -n "$port" ] &&
		grep -q "^caller 127.0.0.1:$port tls $ALICE\$" "$TMPD/s1.out" "$TMPD/s2.out"; then
		echo "ok   Python ssl client through HAProxy ($1): the server saw 127.0.0.1:$port and $ALICE"
	else
		fail "python client, $1 (exit $st, port ${port:-?}): $(cat "$TMPD/py.out"); servers: $(cat "$TMPD/s1.out" "$TMPD/s2.out")"
	fi
}
py_client send-proxy-v2

# 4. A certificate the servers' CA did not sign: no TLS, no call.
expect_fail "a client certificate from another CA is refused through HAProxy" "RC_TLSFAILED" \
	"$BIN/rc-bench-client" --uri "tcp://127.0.0.1:$LBP" --proc null --calls 1 --warmup 0 \
	--timeout 3000 "${cli_tls[@]}" --tls-cert "$C/other-client.pem" --tls-key "$C/other-client.key"
CHECKS=$((CHECKS + 1))
if grep -q "mallory" "$TMPD/s1.out" "$TMPD/s2.out"; then
	fail "a server served mallory: $(grep mallory "$TMPD/s1.out" "$TMPD/s2.out")"
else
	echo "ok   no server logged a call from mallory's certificate"
fi

# 5. The same recipe with send-proxy (PROXY v1, the text line) in place of send-proxy-v2.
stop_haproxy
sed 's/send-proxy-v2/send-proxy/' "$CFG" >"$TMPD/v1.cfg"
grep -q '^[[:space:]]*default-server send-proxy check' "$TMPD/v1.cfg" || { fail "no send-proxy in v1.cfg"; finish; }
start_haproxy "$TMPD/v1.cfg" "127.0.0.1:$s1_tcp_port" "127.0.0.1:$s2_tcp_port"
both_up
py_client "send-proxy: PROXY v1"

# 6. TLS-only servers (--tls-require: plaintext calls to bench.x, NULL included, get
# AUTH_TOOWEAK), the check pointed at remotecall's control program (docs/load-balancing.md).
stop_haproxy
stop_server s1
stop_server s2
start_server s1 "$BIN/rc-bench-server" --listen "tcp://127.0.0.1:$s1_tcp_port?proxy=v2" \
	"${srv_args[@]}" --tls-require || finish
start_server s2 "$BIN/rc-bench-server" --listen "tcp://127.0.0.1:$s2_tcp_port?proxy=v2" \
	"${srv_args[@]}" --tls-require || finish
sed 's/2052430000000001/3fd7c0de00000001/' "$CFG" >"$TMPD/ctl.cfg"
grep -q 'send-binary 800000280000000100000000000000023fd7c0de00000001' "$TMPD/ctl.cfg" ||
	{ fail "the check's program not replaced in ctl.cfg"; finish; }
start_haproxy "$TMPD/ctl.cfg" "127.0.0.1:$s1_tcp_port" "127.0.0.1:$s2_tcp_port"
both_up
read -r _ r < <(null_call "$LBP")
CHECKS=$((CHECKS + 1))
if [ "$r" = 0000000700000001000000010000000100000005 ]; then
	echo "ok   TLS-only servers: a plaintext NULL to bench.x is refused AUTH_TOOWEAK"
else
	fail "plaintext NULL to TLS-only servers: reply ${r:-none}"
fi
py_client "TLS-only servers, the check on the control program"

stop_server s1
stop_server s2
stop_haproxy
finish

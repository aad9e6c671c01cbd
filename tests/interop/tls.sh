#!/usr/bin/env bash
# tests/interop/tls.sh BIN -- RPC-over-TLS (RFC 9289) between real processes on loopback:
# rc-bench-client <-> rc-bench-server for every bench.x procedure in every mode; an independent
# Python peer (tls_peer.py, the standard ssl module) as client of rc-bench-server and as server
# for rc-bench-client; a relay that checks no cleartext RPC record follows the STARTTLS reply;
# the policy matrix against libtirpc (opportunistic falls back, required fails having sent only
# the probe; libtirpc's client is served in plaintext by an optional server and refused with
# AUTH_TOOWEAK by a requiring one); mutual TLS.
BIN=$1
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
command -v python3 >/dev/null || { echo "python3 missing"; exit 1; }
PY=python3 # by name: lib.sh runs only our own programs (named by path) under valgrind
C=$TMPD/certs
bash "$HERE/../runtime/tls_certs.sh" "$C" || { fail "tls_certs.sh"; finish; }
CA=(--tls-ca "$C/ca.pem")

# expect_tls DESC on|off CMD... -- CMD must succeed and report "tls: on|off" (rc-bench-client).
expect_tls() {
	local desc=$1 want=$2
	shift 2
	expect_out "$desc" "^tls: $want\$" "$@"
}
# tap_result NAME -- the relay NAME must have said "tap ok" for every connection, and once at
# least; its output is then cleared.
tap_result() {
	local out=$TMPD/$1.out i=0
	CHECKS=$((CHECKS + 1))
	while ! grep -q '^tap ' "$out" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	sleep 0.3
	if grep -q '^tap FAIL' "$out" || ! grep -q '^tap ok' "$out"; then
		fail "$1: $(grep '^tap' "$out" | head -3 | tr '\n' ' ')"
	else
		echo "ok   $1: $(grep -c '^tap ok' "$out") connection(s) checked"
	fi
	grep -v '^tap ' "$out" >"$out.k"; mv "$out.k" "$out"
}

start_server rc "$BIN/rc-bench-server" --listen tcp://127.0.0.1:0 --listen udp://127.0.0.1:0 \
	--tls-cert "$C/server.pem" --tls-key "$C/server.key" || finish

# remotecall <-> remotecall: every procedure, every mode
for proc in null int send sendr echo work add; do
	expect_tls "rc->rc tls $proc block" on "$BIN/rc-bench-client" --uri "$rc_tcp" --proc $proc \
		--size 4k --calls 20 --warmup 2 --tls required "${CA[@]}"
done
for mode in select async multi; do
	expect_tls "rc->rc tls echo 1 MiB $mode" on "$BIN/rc-bench-client" --uri "$rc_tcp" \
		--uri "$rc_tcp" --proc echo --size 1m --calls 5 --warmup 1 --mode $mode --tls required "${CA[@]}"
done
expect_tls "rc->rc tls echo 1 MiB, 4 threads on one client" on "$BIN/rc-bench-client" \
	--uri "$rc_tcp" --proc echo --size 1m --calls 8 --warmup 1 --threads 4 --tls required "${CA[@]}"
expect_tls "rc->rc opportunistic gets TLS" on "$BIN/rc-bench-client" --uri "$rc_tcp" --proc null \
	--calls 5 --tls opportunistic "${CA[@]}" --tls-name localhost
expect_fail "rc->rc wrong name" "hostname mismatch" "$BIN/rc-bench-client" --uri "$rc_tcp" \
	--proc null --calls 1 --tls required "${CA[@]}" --tls-name nothere.example
expect_fail "rc->rc wrong CA" "unable to get local issuer" "$BIN/rc-bench-client" \
	--uri "$rc_tcp" --proc null --calls 1 --tls required --tls-ca "$C/other-ca.pem"

# the independent peer as client: probe, handshake, calls, a second probe, a UDP probe
expect_out "python ssl client -> rc server" "ok   a probe over UDP" \
	"$PY" "$HERE/tls_peer.py" client 127.0.0.1 "$rc_tcp_port" "$C/ca.pem" --udp-port "$rc_udp_port"

# the wire: nothing but TLS records after STARTTLS
start_server tap "$PY" "$HERE/tls_peer.py" tap "$rc_tcp_port" tls --listen || finish
expect_tls "rc->tap->rc tls echo" on "$BIN/rc-bench-client" --uri "$tap_tcp" --proc echo \
	--size 64k --calls 10 --tls required "${CA[@]}"
tap_result tap
stop_server tap

# the independent peer as server
start_server py "$PY" "$HERE/tls_peer.py" server "$C/server.pem" "$C/server.key" --listen || finish
expect_tls "rc client -> python ssl server null" on "$BIN/rc-bench-client" --uri "$py_tcp" \
	--proc null --calls 20 --tls required "${CA[@]}"
expect_tls "rc client -> python ssl server echo 1 MiB async" on "$BIN/rc-bench-client" \
	--uri "$py_tcp" --proc echo --size 1m --calls 4 --mode async --depth 2 --tls required "${CA[@]}"
stop_server py

# libtirpc server (no TLS): opportunistic falls back, required sends nothing but the probe
start_server ti "$BIN/tirpc-bench-server" --listen tcp://127.0.0.1:0 || finish
expect_tls "rc opportunistic -> tirpc server falls back" off "$BIN/rc-bench-client" \
	--uri "$ti_tcp" --proc echo --size 4k --calls 20 --tls opportunistic "${CA[@]}"
start_server tap2 "$PY" "$HERE/tls_peer.py" tap "$ti_tcp_port" probe --listen || finish
expect_fail "rc required -> tirpc server" "does not offer RPC-over-TLS.*RC_TLSUNAVAIL" \
	"$BIN/rc-bench-client" --uri "$tap2_tcp" --proc null --calls 1 --tls required "${CA[@]}"
tap_result tap2
stop_server tap2
stop_server ti

# libtirpc client -> remotecall server: TLS optional (plaintext served), required (TOOWEAK)
expect_ok "tirpc client -> rc server with TLS optional" "$BIN/tirpc-bench-client" \
	--uri "$rc_tcp" --proc echo --size 4k --calls 20
stop_server rc
start_server rcq "$BIN/rc-bench-server" --listen tcp://127.0.0.1:0 --tls-cert "$C/server.pem" \
	--tls-key "$C/server.key" --tls-require --tls-ca "$C/ca.pem" || finish
expect_fail "tirpc client -> rc server requiring TLS" "too weak" "$BIN/tirpc-bench-client" \
	--uri "$rcq_tcp" --proc null --calls 1
# mutual TLS (--tls-ca on the server)
expect_tls "rc->rc mutual TLS" on "$BIN/rc-bench-client" --uri "$rcq_tcp" --proc echo --size 4k \
	--calls 10 --tls required "${CA[@]}" --tls-cert "$C/client.pem" --tls-key "$C/client.key"
expect_fail "rc->rc mutual TLS without a client certificate" "certificate required" \
	"$BIN/rc-bench-client" --uri "$rcq_tcp" --proc null --calls 1 --tls required "${CA[@]}"
stop_server rcq
finish

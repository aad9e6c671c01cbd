#!/usr/bin/env bash
# tests/lb/haproxy.sh BIN CFG -- remotecall servers behind a real HAProxy (issue 42), on
# loopback: two rc-bench-servers listening with ?proxy=v2, HAProxy in front with the recipe
# docs/haproxy-remotecall.cfg (CFG: send-proxy-v2, the RPC NULL health check), a free port and
# a temporary folder; everything started is stopped at the end (HAProxy included).
#   1. both servers are UP by the NULL check (HAProxy's admin socket: show servers state)
#   2. a client's own address and port are what the server sees (--log-callers)
#   3. a connection without a PROXY header is closed unserved and counted
#   4. 100,000 pipelined ADD calls (--failover) through HAProxy while the server they are on
#      is drained (SIGTERM, --drain-ms 5000) and restarted: the client reports 0 errors, the
#      drained server exits 0 within its drain time, and the servers' ADD totals add up to
#      exactly 100,000 (no call ran twice, none was lost)
BIN=$1 CFG=$2
T_LIMIT=${T_LIMIT:-60}
RC_TMP_PREFIX=rc-lb
# shellcheck source=../interop/lib.sh
. "$(dirname "$0")/../interop/lib.sh"
command -v haproxy >/dev/null || { echo "haproxy not installed (scripts/install-deps.sh)"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

DRAIN_MS=5000
srv_args=(--drain-ms "$DRAIN_MS" --log-callers --stats --stats-every 20)
start_server s1 "$BIN/rc-bench-server" --listen 'tcp://127.0.0.1:0?proxy=v2' "${srv_args[@]}" || finish
start_server s2 "$BIN/rc-bench-server" --listen 'tcp://127.0.0.1:0?proxy=v2' "${srv_args[@]}" || finish
LBP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export RC_LB_ADDR=127.0.0.1:$LBP RC_S1=127.0.0.1:$s1_tcp_port RC_S2=127.0.0.1:$s2_tcp_port
export RC_LB_SOCK=$TMPD/haproxy.sock
timeout 120 haproxy -f "$CFG" -db >"$TMPD/haproxy.out" 2>&1 &
hap_pid=$!
PIDS="$PIDS $hap_pid"

# state NAME: HAProxy's operational state of server NAME (2: UP, 0: DOWN).
state() {
	python3 - "$RC_LB_SOCK" "$1" <<'PY' 2>/dev/null
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1]); s.sendall(b"show servers state remotecall\n")
out = b""
while True:
    b = s.recv(65536)
    if not b: break
    out += b
for line in out.decode().splitlines():
    f = line.split()
    if len(f) > 5 and f[3] == sys.argv[2]: print(f[5])
PY
}
# wait_up NAME: up to 5 s for NAME to be UP.
wait_up() {
	local i
	for i in $(seq 100); do [ "$(state "$1")" = 2 ] && return 0; sleep 0.05; done
	return 1
}
CHECKS=$((CHECKS + 1))
if wait_up s1 && wait_up s2; then
	echo "ok   HAProxy marks both servers UP by the RPC NULL check"
else
	fail "servers not UP: s1 $(state s1), s2 $(state s2)"; cat "$TMPD/haproxy.out"; finish
fi

# 2. A raw client through HAProxy: one NULL call; the server must log its own address:port.
port=$(python3 - "$LBP" <<'PY'
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
call = struct.pack(">10I", 7, 0, 2, 0x20524300, 1, 0, 0, 0, 0, 0)
s.sendall(struct.pack(">I", 0x80000000 | len(call)) + call)
r = s.recv(64)
assert len(r) >= 28 and struct.unpack(">I", r[4:8])[0] == 7, r
print(s.getsockname()[1])
PY
)
CHECKS=$((CHECKS + 1))
if [ -n "$port" ] && grep -q "^caller 127.0.0.1:$port\$" "$TMPD/s1.out" "$TMPD/s2.out"; then
	echo "ok   the server saw the client's own address 127.0.0.1:$port (PROXY v2)"
else
	fail "no server logged caller 127.0.0.1:${port:-?}"
fi

# 3. Straight to s1, without a header: closed, no reply, counted.
python3 - "$s1_tcp_port" <<'PY' >"$TMPD/raw.out" 2>&1
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
call = struct.pack(">10I", 9, 0, 2, 0x20524300, 1, 0, 0, 0, 0, 0)
s.sendall(struct.pack(">I", 0x80000000 | len(call)) + call)
try:
    r = s.recv(64)
except ConnectionResetError:
    r = b""
print("reply" if r else "closed")
PY
sleep 0.1
CHECKS=$((CHECKS + 1))
if grep -q '^closed$' "$TMPD/raw.out" &&
	grep '^{"add_total"' "$TMPD/s1.out" | tail -1 | grep -q '"conns_proxy_refused":[1-9]'; then
	echo "ok   a connection without a PROXY header is closed unanswered and counted"
else
	fail "header-less connection: $(cat "$TMPD/raw.out"); $(tail -1 "$TMPD/s1.out")"
fi

# 4. 100,000 pipelined ADD(1) calls while the server they are on drains and restarts.
NCALLS=100000
timeout "$T_LIMIT" "$BIN/rc-bench-client" --uri "tcp://127.0.0.1:$LBP" --proc add --arg 1 \
	--mode async --depth 32 --calls $NCALLS --warmup 0 --failover --timeout 20000 --json \
	>"$TMPD/cli.out" 2>"$TMPD/cli.err" &
cli_pid=$!
PIDS="$PIDS $cli_pid"
who=""
for i in $(seq 500); do # the server whose ADD total moves first carries the client
	for n in s1 s2; do
		grep '^{"add_total"' "$TMPD/$n.out" | tail -1 | grep -q '"add_total":[1-9]' &&
			{ who=$n; break 2; }
	done
	sleep 0.01
done
totals=0
if [ -z "$who" ]; then
	fail "no server saw the client's calls"
else
	pid=$(eval "echo \$${who}_pid") port=$(eval "echo \$${who}_tcp_port")
	t0=$(date +%s%N)
	kill -TERM "$pid"
	wait "$pid"
	st=$? ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	CHECKS=$((CHECKS + 1))
	t=$(grep '^{"add_total"' "$TMPD/$who.out" | tail -1 | sed 's/^{"add_total":\([0-9]*\),.*/\1/')
	totals=$((totals + t))
	if [ "$st" -eq 0 ] && [ "$ms" -le "$DRAIN_MS" ] && [ "$t" -lt $NCALLS ]; then
		echo "ok   $who drained mid-run ($t calls run there) and exited 0 in $ms ms"
	else
		fail "$who: exit $st after $ms ms (drain time $DRAIN_MS), $t calls run there"
	fi
	mv "$TMPD/$who.out" "$TMPD/$who.first.out"
	start_server "$who" "$BIN/rc-bench-server" --listen "tcp://127.0.0.1:$port?proxy=v2" \
		"${srv_args[@]}" || finish
	CHECKS=$((CHECKS + 1))
	if wait_up "$who"; then echo "ok   $who restarted and UP again"; else fail "$who not UP again"; fi
fi
wait "$cli_pid"
st=$?
CHECKS=$((CHECKS + 1))
if [ "$st" -eq 0 ] && grep -q "\"calls\":$NCALLS,\"errors\":0," "$TMPD/cli.out"; then
	echo "ok   $NCALLS pipelined calls through HAProxy, 0 errors"
else
	fail "client (exit $st): $(cat "$TMPD/cli.out") $(head -3 "$TMPD/cli.err")"
fi
for n in s1 s2; do
	pid=$(eval "echo \$${n}_pid")
	kill -TERM "$pid"; wait "$pid"
	t=$(grep '^{"add_total"' "$TMPD/$n.out" | tail -1 | sed 's/^{"add_total":\([0-9]*\),.*/\1/')
	totals=$((totals + ${t:-0}))
done
CHECKS=$((CHECKS + 1))
if [ "$totals" -eq $NCALLS ]; then
	echo "ok   the servers ran $totals ADD calls in all: each call exactly once"
else
	fail "the servers ran $totals ADD calls, not $NCALLS"
fi
kill -TERM "$hap_pid" 2>/dev/null
wait "$hap_pid" 2>/dev/null
finish

#!/usr/bin/env bash
# tests/lb/haproxy.sh BIN CFG -- remotecall servers behind a real HAProxy (issue 42), on
# loopback: two rc-bench-servers listening with ?proxy=v2, HAProxy in front with the recipe
# docs/haproxy-remotecall.cfg (CFG: send-proxy-v2, the RPC NULL health check), a free port and
# a temporary folder; everything started is stopped at the end (HAProxy included).
#   1. both servers are UP by the NULL check (HAProxy's admin socket: show servers state)
#   2. a client's own address and port are what the server sees (--log-callers)
#   3. a connection without a PROXY header is closed unserved and counted; headers written by
#      hand (v1 text, whole and split; v1 UNKNOWN; v2), each followed by a call in the same
#      send, are taken and their clients seen; a malformed v1 line is refused
#   4. 100,000 pipelined ADD calls (--failover) through HAProxy while the server they are on
#      is drained (SIGTERM, --drain-ms 5000) and restarted: the client reports 0 errors, the
#      drained server exits 0 within its drain time, and the servers' ADD totals add up to
#      exactly 100,000 (no call ran twice, none was lost)
BIN=$1 CFG=$2
T_LIMIT=${T_LIMIT:-60}
RC_TMP_PREFIX=rc-lb
# shellcheck source=../interop/lib.sh
. "$(dirname "$0")/../interop/lib.sh"
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

DRAIN_MS=5000
# SRV_THREADS (the lb_haproxy_threads test: 4): each server's worker threads
srv_args=(--drain-ms "$DRAIN_MS" --log-callers --stats --stats-every 20 --threads "${SRV_THREADS:-1}")
start_server s1 "$BIN/rc-bench-server" --listen 'tcp://127.0.0.1:0?proxy=v2' "${srv_args[@]}" || finish
start_server s2 "$BIN/rc-bench-server" --listen 'tcp://127.0.0.1:0?proxy=v2' "${srv_args[@]}" || finish
start_haproxy "$CFG" "127.0.0.1:$s1_tcp_port" "127.0.0.1:$s2_tcp_port"
both_up

# 2. A raw client through HAProxy: one NULL call; the server must log its own address:port.
read -r port rep < <(null_call "$LBP")
CHECKS=$((CHECKS + 1))
if [ "${rep:0:16}" = 0000000700000001 ] && grep -q "^caller 127.0.0.1:$port\$" "$TMPD/s1.out" "$TMPD/s2.out"; then
	echo "ok   the server saw the client's own address 127.0.0.1:$port (PROXY v2)"
else
	fail "no server logged caller 127.0.0.1:${port:-?} (reply ${rep:-?})"
fi

# 3. Straight to s1, without a header: closed, no reply, counted.
read -r port rep < <(null_call "$s1_tcp_port")
sleep 0.1
CHECKS=$((CHECKS + 1))
if [ "$rep" = - ] &&
	grep '^{"add_total"' "$TMPD/s1.out" | tail -1 | grep -q '"conns_proxy_refused":[1-9]'; then
	echo "ok   a connection without a PROXY header is closed unanswered and counted"
else
	fail "header-less connection: reply $rep; $(tail -1 "$TMPD/s1.out")"
fi

# 3b. Straight to s1 with headers written by hand, each followed by a NULL call in the same
# send (the header's reader must take no byte of the call), or split: PROXY v1 (text) as
# HAProxy's send-proxy writes it, v1 UNKNOWN, v2; a malformed v1 line is refused.
python3 - "$s1_tcp_port" <<'PY' >"$TMPD/hand.out" 2>&1
import socket, struct, sys, time
def v2(ip, port):
    body = socket.inet_aton(ip) + socket.inet_aton("127.0.0.1") + struct.pack(">HH", port, 2049)
    return b"\r\n\r\n\x00\r\nQUIT\n\x21\x11" + struct.pack(">H", len(body)) + body
cases = [("v1 one send", [b"PROXY TCP4 192.0.2.1 127.0.0.1 1001 2049\r\n"]),
         ("v1 split", [b"PROXY TCP4 192.0", b".2.2 127.0.0.1 1002 2049\r", b"\n"]),
         ("v1 UNKNOWN", [b"PROXY UNKNOWN\r\n"]),
         ("v2 one send", [v2("192.0.2.4", 1004)]),
         ("v1 malformed", [b"PROXY TCP4 192.0.2.5 127.0.0.1 1005 2049\n"])]
for xid, (name, parts) in enumerate(cases, 100):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
    call = struct.pack(">10I", xid, 0, 2, 0x20524300, 1, 0, 0, 0, 0, 0)
    parts = parts[:-1] + [parts[-1] + struct.pack(">I", 0x80000000 | len(call)) + call]
    for p in parts:
        s.sendall(p)
        time.sleep(0.02)
    try:
        r = s.recv(64)
    except ConnectionResetError:
        r = b""
    ok = len(r) >= 28 and struct.unpack(">I", r[4:8])[0] == xid
    print("%s: %s %d" % (name, "reply" if ok else "closed", s.getsockname()[1]))
PY
CHECKS=$((CHECKS + 1))
lport=$(sed -n 's/^v1 UNKNOWN: reply //p' "$TMPD/hand.out")
if grep -q '^v1 one send: reply' "$TMPD/hand.out" && grep -q '^caller 192.0.2.1:1001$' "$TMPD/s1.out" &&
	grep -q '^v1 split: reply' "$TMPD/hand.out" && grep -q '^caller 192.0.2.2:1002$' "$TMPD/s1.out" &&
	[ -n "$lport" ] && grep -q "^caller 127.0.0.1:$lport\$" "$TMPD/s1.out" &&
	grep -q '^v2 one send: reply' "$TMPD/hand.out" && grep -q '^caller 192.0.2.4:1004$' "$TMPD/s1.out" &&
	grep -q '^v1 malformed: closed' "$TMPD/hand.out" && ! grep -q '^caller 192.0.2.5:' "$TMPD/s1.out"; then
	echo "ok   headers by hand: v1 (whole, split), v1 UNKNOWN and v2 taken, each with its call; malformed v1 refused"
else
	fail "headers by hand: $(tr '\n' ';' <"$TMPD/hand.out"); s1: $(grep '^caller' "$TMPD/s1.out" | tr '\n' ';')"
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
stop_haproxy
finish

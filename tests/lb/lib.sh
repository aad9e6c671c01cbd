# tests/lb/lib.sh -- shared by the tests/lb scripts (bash). Source it after tests/interop/lib.sh
# (TMPD, PIDS, fail, finish); it needs haproxy and python3 (exits 77, skipped, without them).
#
#   start_haproxy CFG S1 S2   HAProxy with the recipe CFG in front of the servers S1 and S2
#                             (HOST:PORT each) on a free loopback port: sets LBP (its port),
#                             hap_pid, and exports RC_LB_ADDR, RC_S1, RC_S2, RC_LB_SOCK
#   stop_haproxy              SIGTERM it and wait
#   state NAME                HAProxy's operational state of server NAME (2: UP, 0: DOWN)
#   wait_up NAME              up to 5 s for NAME to be UP
#   both_up                   (a counted check) s1 and s2 UP, else the script finishes
#   null_call PORT            one NULL call to bench.x, xid 7, on 127.0.0.1:PORT: prints the
#                             local port and the reply after its record mark in hex ("-": none)
command -v haproxy >/dev/null || { echo "haproxy not installed (scripts/install-deps.sh)"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

start_haproxy() {
	LBP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	export RC_LB_ADDR=127.0.0.1:$LBP RC_S1=$2 RC_S2=$3 RC_LB_SOCK=$TMPD/haproxy.sock
	timeout 120 haproxy -f "$1" -db >"$TMPD/haproxy.out" 2>&1 &
	hap_pid=$!
	PIDS="$PIDS $hap_pid"
}

stop_haproxy() {
	kill -TERM "$hap_pid" 2>/dev/null
	wait "$hap_pid" 2>/dev/null
}

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

wait_up() {
	local i
	for i in $(seq 100); do [ "$(state "$1")" = 2 ] && return 0; sleep 0.05; done
	return 1
}

# both_up: checks (counted) that HAProxy marks s1 and s2 UP by the RPC NULL check; finishes
# the script if not.
both_up() {
	CHECKS=$((CHECKS + 1))
	if wait_up s1 && wait_up s2; then
		echo "ok   HAProxy marks both servers UP by the RPC NULL check"
	else
		fail "servers not UP: s1 $(state s1), s2 $(state s2)"; cat "$TMPD/haproxy.out"; finish
	fi
}

null_call() {
	python3 - "$1" <<'PY'
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
call = struct.pack(">10I", 7, 0, 2, 0x20524300, 1, 0, 0, 0, 0, 0)
s.sendall(struct.pack(">I", 0x80000000 | len(call)) + call)
try:
    r = s.recv(64)
except ConnectionResetError:
    r = b""
print(s.getsockname()[1], r[4:].hex() or "-")
PY
}

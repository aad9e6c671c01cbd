#!/usr/bin/env bash
# tests/lb/drain_dgram.sh BIN -- a drain (rc-bench-server --drain-ms, SIGTERM) with datagram
# listeners, on loopback ("Datagrams: stop reading, answer what was read",
# docs/load-balancing.md). In each layout:
#   - a UDP WORK call of 400 ms is sent and read (the server is inside it) when SIGTERM comes:
#     its reply still arrives
#   - beside a stream listener, a client connection held open keeps the drain going (the server
#     lingers until it closes); a UDP call sent then gets no reply, though the server still
#     runs; the held connection reads EOF (the server ended its side), closes, and the server
#     exits 0 within its drain time
#   - without a connection to wait for, the drain ends at once -- the UDP call in progress is
#     still answered (rc_server_run waits for its threads) -- and so does a lone UDP listener's
#     (served by blocking receives): exit 0
# Layouts: udp beside tcp with --threads 1 and 4 (a connection held, and not), udp alone with
# --threads 4.
BIN=$1
T_LIMIT=${T_LIMIT:-20}
RC_TMP_PREFIX=rc-lbdg
# shellcheck source=../interop/lib.sh
. "$(dirname "$0")/../interop/lib.sh"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
# S: how much slower things are (under valgrind, RC_VALGRIND: 10 times)
S=1
[ -n "${RC_VALGRIND:-}" ] && S=10
DRAIN_MS=$((3000 * S))

# drain_case NAME THREADS tcp|notcp [nohold]
drain_case() {
	local name=$1 threads=$2 tcp=$3 hold=${4:-hold} args st t0 held
	args=(--listen udp://127.0.0.1:0 --drain-ms "$DRAIN_MS" --threads "$threads")
	[ "$tcp" = tcp ] && args=(--listen tcp://127.0.0.1:0 "${args[@]}")
	start_server "$name" "$BIN/rc-bench-server" "${args[@]}" || return
	held=$(eval "echo \${${name}_tcp_port:-0}")
	[ "$hold" = hold ] || held=0
	t0=$(date +%s%N)
	timeout "$T_LIMIT" python3 - "$(eval "echo \$${name}_pid")" \
		"$(eval "echo \$${name}_udp_port")" "$held" "$S" \
		>"$TMPD/$name.py" 2>&1 <<'PY'
import os, signal, socket, struct, sys, time
pid, uport, tport, S = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
PROG, WORK = 0x20524300, 5

def call(xid, proc, args=b""):
    return struct.pack(">10I", xid, 0, 2, PROG, 1, proc, 0, 0, 0, 0) + args

def reply_of(data, xid):  # the result word of an accepted SUCCESS reply to xid, else None
    w = struct.unpack(">%dI" % (len(data) // 4), data[:len(data) // 4 * 4])
    return w[6] if len(w) >= 7 and w[0] == xid and w[1:6] == (1, 0, 0, 0, 0) else None

held = None
if tport:  # a client connection, kept open: the drain lingers on it
    held = socket.create_connection(("127.0.0.1", tport), timeout=5 * S)
    m = call(1, 0)
    held.sendall(struct.pack(">I", 0x80000000 | len(m)) + m)
    assert len(held.recv(64)) >= 28, "no reply to NULL on the held connection"
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.connect(("127.0.0.1", uport))
u.sendall(call(2, WORK, struct.pack(">I", 400000 * S)))
time.sleep(0.15 * S)  # read: the server sleeps in it
os.kill(pid, signal.SIGTERM)
u.settimeout(3 * S)
r = reply_of(u.recv(65536), 2)
print("read before the drain: %s" % ("answered" if r == 400000 * S else "bad reply %r" % r))
if held:
    time.sleep(0.2 * S)  # the drain has begun
    u.sendall(call(3, 0))
    u.settimeout(0.5 * S)
    try:
        got = u.recv(65536)
        print("sent during the drain: answered %r" % got)
    except socket.timeout:
        os.kill(pid, 0)  # (raises if the server is gone: then the silence proves nothing)
        print("sent during the drain: no reply, the server still draining")
    held.settimeout(3 * S)
    print("held connection: %s" % ("EOF" if held.recv(64) == b"" else "data"))
    held.close()
PY
	st=$?
	CHECKS=$((CHECKS + 1))
	if [ $st -eq 0 ] && grep -q '^read before the drain: answered$' "$TMPD/$name.py" &&
		{ [ "$held" = 0 ] ||
			{ grep -q '^sent during the drain: no reply, the server still draining$' "$TMPD/$name.py" &&
				grep -q '^held connection: EOF$' "$TMPD/$name.py"; }; }; then
		echo "ok   $name: $(tr '\n' ';' <"$TMPD/$name.py")"
	else
		fail "$name (exit $st): $(cat "$TMPD/$name.py")"
	fi
	wait_exit "$name" "$t0"
}

# wait_exit NAME T0: NAME must exit 0 within the drain time from T0 (date +%s%N).
wait_exit() {
	local pid st ms
	pid=$(eval "echo \$${1}_pid")
	timeout $((DRAIN_MS / 1000 + 2)) tail --pid="$pid" -f /dev/null
	kill -KILL "$pid" 2>/dev/null
	wait "$pid"
	st=$? ms=$((($(date +%s%N) - $2) / 1000000))
	CHECKS=$((CHECKS + 1))
	if [ $st -eq 0 ] && [ $ms -le $DRAIN_MS ]; then
		echo "ok   $1 exited 0, $ms ms after the test began"
	else
		fail "$1: exit $st after $ms ms (drain time $DRAIN_MS)"
	fi
}

drain_case udp_tcp_t1 1 tcp
drain_case udp_tcp_t4 4 tcp
drain_case udp_tcp_t4_nohold 4 tcp nohold
drain_case udp_alone_t4 4 notcp
finish

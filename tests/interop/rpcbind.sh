#!/usr/bin/env bash
# tests/interop/rpcbind.sh BIN -- rpcbind and rpcinfo against remotecall:
#   rc-bench-server --rpcbind shows in `rpcinfo -p`, answers `rpcinfo -u/-t HOST PROG VERS`,
#   `rpcinfo -n PORT ...` and the version probe (`rpcinfo -u HOST PROG`), is found by
#   rc-bench-client and tirpc-bench-client given a URI without a port, and is gone from
#   `rpcinfo -p` after it stops; the reverse with tirpc-bench-server --rpcbind.
# Needs root and rpcbind: uses the running rpcbind, or starts a private one (and stops only
# that one). Exits 77 (ctest SKIP_RETURN_CODE) when rpcbind cannot run here.
# (This rpcinfo asks rpcbind even with -n PORT, so rpcinfo checks all live here.)
BIN=$1
. "$(dirname "$0")/lib.sh"
PROG=542262016 # 0x20524300

RPCBIND=$(command -v rpcbind || ls /usr/sbin/rpcbind /sbin/rpcbind 2>/dev/null | head -1)
RPCINFO=$(command -v rpcinfo || ls /usr/sbin/rpcinfo /sbin/rpcinfo 2>/dev/null | head -1)
if [ -z "$RPCINFO" ]; then echo "SKIP: rpcinfo not installed"; exit 77; fi
OWN_RPCBIND=""
if ! timeout 5 "$RPCINFO" -p 127.0.0.1 >/dev/null 2>&1; then
	if [ "$(id -u)" != 0 ] || [ -z "$RPCBIND" ]; then
		echo "SKIP: no rpcbind running, and cannot start one (need root and rpcbind)"
		exit 77
	fi
	mkdir -p /run/rpcbind 2>/dev/null
	"$RPCBIND" -f -w >"$TMPD/rpcbind.log" 2>&1 &
	OWN_RPCBIND=$!
	PIDS="$PIDS $OWN_RPCBIND"
	i=0
	until timeout 2 "$RPCINFO" -p 127.0.0.1 >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 30 ] || ! kill -0 "$OWN_RPCBIND" 2>/dev/null; then
			echo "SKIP: rpcbind would not start here:"
			cat "$TMPD/rpcbind.log"
			exit 77
		fi
		sleep 0.1
	done
	echo "     started a private rpcbind (pid $OWN_RPCBIND)"
else
	echo "     using the rpcbind already running"
fi
# a registration left behind by a killed server would confuse the look-ups
"$RPCINFO" -d $PROG 1 >/dev/null 2>&1

registered() { # registered PROTO PORT -> 0 if rpcinfo -p lists PROG 1 PROTO PORT
	timeout 10 "$RPCINFO" -p 127.0.0.1 | awk -v p=$PROG -v t="$1" -v n="$2" \
		'$1 == p && $2 == 1 && $3 == t && $4 == n { f = 1 } END { exit !f }'
}

for S in rc tirpc; do
	start_server srv "$BIN/$S-bench-server" --rpcbind --listen udp://127.0.0.1:0 --listen tcp://127.0.0.1:0 || finish
	CHECKS=$((CHECKS + 2))
	registered udp "$srv_udp_port" && echo "ok   $S server: rpcinfo -p lists udp $srv_udp_port" ||
		fail "$S server: rpcinfo -p lacks $PROG 1 udp $srv_udp_port: $("$RPCINFO" -p 127.0.0.1 | grep $PROG)"
	registered tcp "$srv_tcp_port" && echo "ok   $S server: rpcinfo -p lists tcp $srv_tcp_port" ||
		fail "$S server: rpcinfo -p lacks $PROG 1 tcp $srv_tcp_port"
	expect_out "$S server: rpcinfo -u HOST PROG VERS" "program $PROG version 1 ready and waiting" \
		"$RPCINFO" -u 127.0.0.1 $PROG 1
	expect_out "$S server: rpcinfo -t HOST PROG VERS" "program $PROG version 1 ready and waiting" \
		"$RPCINFO" -t 127.0.0.1 $PROG 1
	expect_out "$S server: rpcinfo -n PORT -u" "program $PROG version 1 ready and waiting" \
		"$RPCINFO" -n $srv_udp_port -u 127.0.0.1 $PROG 1
	expect_out "$S server: rpcinfo -n PORT -t" "program $PROG version 1 ready and waiting" \
		"$RPCINFO" -n $srv_tcp_port -t 127.0.0.1 $PROG 1
	# no version: rpcinfo calls version 0, reads the range from PROG_MISMATCH, then pings 1
	expect_out "$S server: rpcinfo -u HOST PROG (version probe)" "program $PROG version 1 ready and waiting" \
		"$RPCINFO" -u 127.0.0.1 $PROG
	expect_out "$S server: rpcinfo -t HOST PROG (version probe)" "program $PROG version 1 ready and waiting" \
		"$RPCINFO" -t 127.0.0.1 $PROG
	expect_fail "$S server: rpcinfo -u HOST PROG 2 (version mismatch)" "version 2 is not available|not available|mismatch" \
		"$RPCINFO" -u 127.0.0.1 $PROG 2
	for C in rc tirpc; do
		expect_ok "$C client finds the $S server through rpcbind (udp)" \
			"$BIN/$C-bench-client" --uri udp://127.0.0.1 --proc echo --size 4000 --calls 10 --json
		expect_ok "$C client finds the $S server through rpcbind (tcp)" \
			"$BIN/$C-bench-client" --uri tcp://127.0.0.1 --proc echo --size 40000 --calls 10 --json
	done
	stop_server srv
	CHECKS=$((CHECKS + 1))
	if timeout 10 "$RPCINFO" -p 127.0.0.1 | awk -v p=$PROG '$1 == p { f = 1 } END { exit !f }'; then
		fail "$S server: still registered after it stopped: $("$RPCINFO" -p 127.0.0.1 | grep $PROG)"
		"$RPCINFO" -d $PROG 1 >/dev/null 2>&1
	else
		echo "ok   $S server: unregistered at exit"
	fi
done
# a program nobody registered
expect_fail "rc client, unregistered program" "RC_PROGNOTREGISTERED|not registered" \
	"$BIN/rc-bench-client" --uri udp://127.0.0.1 --proc null --prog 542262099 --calls 1

if [ -n "$OWN_RPCBIND" ]; then
	kill -TERM "$OWN_RPCBIND" 2>/dev/null
	wait "$OWN_RPCBIND" 2>/dev/null
	echo "     stopped the private rpcbind"
fi
finish

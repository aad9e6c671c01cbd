#!/usr/bin/env bash
# tests/interop/rpcbind.sh BIN -- rpcbind and rpcinfo against remotecall:
#   rc-bench-server --rpcbind shows in `rpcinfo -p`, answers `rpcinfo -u/-t HOST PROG VERS`,
#   `rpcinfo -n PORT ...` and the version probe (`rpcinfo -u HOST PROG`), is found by
#   rc-bench-client and tirpc-bench-client given a URI without a port, and is gone from
#   `rpcinfo -p` after it stops; the reverse with tirpc-bench-server --rpcbind.
#   A server on [::] (dual-stack) is registered for what it serves: `rpcinfo -p`, `rpcinfo -T
#   udp/tcp/udp6/tcp6` and libtirpc's clnt_create by IPv4 name all find it. A second server of
#   the program is refused while the first (remotecall's or libtirpc's) answers, naming
#   program, version and netid, and takes over with --rpcbind-takeover; the first one's exit
#   then leaves the second's registration alone. A QUIC listener is registered as netid
#   quic, and a quic:// URI without a port is resolved through rpcbind.
# Needs root and rpcbind: runs in a network namespace of its own with a private rpcbind where
# it can (rpcbind-env.sh), else uses the running rpcbind or starts one (and stops only that
# one). Exits 77 (ctest SKIP_RETURN_CODE) when rpcbind cannot run here.
# (This rpcinfo asks rpcbind even with -n PORT, so rpcinfo checks all live here.)
. "$(dirname "$0")/rpcbind-env.sh"
rpcbind_isolate "$0" "$@"
BIN=$1
. "$(dirname "$0")/lib.sh"
PROG=542262016 # 0x20524300
rpcbind_up
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
# ---- registration rules (issue 17) ----------------------------------------------------------
unregistered() { # unregistered -> 0 if rpcinfo -p lists nothing of PROG
	! timeout 10 "$RPCINFO" -p 127.0.0.1 | awk -v p=$PROG '$1 == p { f = 1 } END { exit !f }'
}
listed() { # listed NETID PORT -> 0 if rpcbind's v3 dump lists PROG 1 NETID at port PORT
	timeout 10 "$RPCINFO" 127.0.0.1 | awk -v p=$PROG -v t="$1" -v s=".$(($2 / 256)).$(($2 % 256))" \
		'$1 == p && $2 == 1 && $3 == t && substr($4, length($4) - length(s) + 1) == s { f = 1 }
		 END { exit !f }'
}
check() { # check DESC CMD... -> one check: CMD must succeed
	local desc=$1
	shift
	CHECKS=$((CHECKS + 1))
	if "$@"; then echo "ok   $desc"; else fail "$desc: $("$RPCINFO" 127.0.0.1 | grep $PROG)"; fi
}
refused_lines() { # refused_lines NETID... -> LAST_OUT names PROG 1 NETID as held, for each
	local n
	for n in "$@"; do
		check "  ... names program $PROG version 1 $n" grep -Eq \
			"program $PROG version 1 $n [^ ]+: not registered: a live server holds it" \
			<<<"$LAST_OUT"
	done
}
V6=(--listen 'udp://[::]:0' --listen 'tcp://[::]:0')

# a [::] listener is dual-stack: registered as udp6/tcp6 and udp/tcp
start_server d1 "$BIN/rc-bench-server" --rpcbind "${V6[@]}" || finish
check "[::] server: rpcinfo -p lists udp $d1_udp_port" registered udp "$d1_udp_port"
check "[::] server: rpcinfo -p lists tcp $d1_tcp_port" registered tcp "$d1_tcp_port"
check "[::] server: rpcinfo lists udp6 $d1_udp_port" listed udp6 "$d1_udp_port"
check "[::] server: rpcinfo lists tcp6 $d1_tcp_port" listed tcp6 "$d1_tcp_port"
for T in udp tcp; do
	expect_out "[::] server: rpcinfo -T $T 127.0.0.1 PROG VERS" "program $PROG version 1 ready and waiting" \
		"$RPCINFO" -T $T 127.0.0.1 $PROG 1
done
for T in udp6 tcp6; do
	expect_out "[::] server: rpcinfo -T $T ::1 PROG VERS" "program $PROG version 1 ready and waiting" \
		"$RPCINFO" -T $T ::1 $PROG 1
done
for H in 127.0.0.1 localhost; do
	for T in udp tcp; do
		expect_ok "[::] server: libtirpc clnt_create($H, \"$T\") finds it" \
			"$BIN/tirpc-bench-client" --uri $T://$H --proc null --calls 5
	done
done
expect_ok "[::] server: rc client finds it over IPv6" \
	"$BIN/rc-bench-client" --uri 'udp://[::1]' --proc null --calls 5

# a second server of the program: refused while the first answers, naming what it refused
expect_fail "second [::] server refused while the first answers" "RC_PROGREGISTERED" \
	"$BIN/rc-bench-server" --rpcbind "${V6[@]}" &&
	refused_lines udp6 tcp6 udp tcp
check "  ... the first server's registration is unchanged" registered udp "$d1_udp_port"
check "  ... (udp6 too)" listed udp6 "$d1_udp_port"

# --rpcbind-takeover takes over; the first server's exit leaves the second's entries
start_server d2 "$BIN/rc-bench-server" --rpcbind-takeover "${V6[@]}" || finish
check "--rpcbind-takeover: rpcinfo -p lists its udp $d2_udp_port" registered udp "$d2_udp_port"
check "--rpcbind-takeover: rpcinfo lists its tcp6 $d2_tcp_port" listed tcp6 "$d2_tcp_port"
stop_server d1
check "first server's exit: the second's udp stays" registered udp "$d2_udp_port"
check "first server's exit: the second's tcp6 stays" listed tcp6 "$d2_tcp_port"
expect_out "rpcinfo -T udp6 ::1 reaches the second server" "program $PROG version 1 ready and waiting" \
	"$RPCINFO" -T udp6 ::1 $PROG 1

# a server killed without unregistering leaves stale entries: the next server replaces them
kill -KILL "$d2_pid"; wait "$d2_pid" 2>/dev/null; d2_pid=""
check "killed server: its entries stay behind" registered udp "$d2_udp_port"
start_server d3 "$BIN/rc-bench-server" --rpcbind "${V6[@]}" || finish
check "stale entries replaced without --rpcbind-takeover (udp)" registered udp "$d3_udp_port"
check "stale entries replaced without --rpcbind-takeover (tcp6)" listed tcp6 "$d3_tcp_port"
stop_server d3
check "unregistered when the last server stops" unregistered

# libtirpc's server first: remotecall's refuses to take its registration
start_server t1 "$BIN/tirpc-bench-server" --rpcbind --listen udp://127.0.0.1:0 --listen tcp://127.0.0.1:0 || finish
expect_fail "rc server refused while libtirpc's server answers" "RC_PROGREGISTERED" \
	"$BIN/rc-bench-server" --rpcbind --listen udp://127.0.0.1:0 --listen tcp://127.0.0.1:0 &&
	refused_lines udp tcp
check "  ... libtirpc's registration is unchanged" registered udp "$t1_udp_port"
stop_server t1
"$RPCINFO" -d $PROG 1 >/dev/null 2>&1

# a QUIC listener is registered as netid quic (draft-cel-nfsv4-rpc-over-quicv1), found by a
# client given quic:// without a port (RPCBIND DUMP: GETADDR answers for the netid asked on)
C=$TMPD/certs
bash "$(dirname "$0")/../runtime/tls_certs.sh" "$C" >/dev/null 2>&1 || fail "tls_certs.sh"
QS=(--tls-cert "$C/server.pem" --tls-key "$C/server.key")
start_server q1 "$BIN/rc-bench-server" --rpcbind --listen quic://127.0.0.1:0 "${QS[@]}" || finish
q1_quic_port=$(awk -F: '/^listening quic/ { print $3; exit }' "$TMPD/q1.out")
check "QUIC server: rpcbind's dump lists quic $q1_quic_port" listed quic "$q1_quic_port"
expect_ok "rc client quic:// without a port finds it through rpcbind" "$BIN/rc-bench-client" \
	--uri quic://127.0.0.1 --tls-ca "$C/ca.pem" --proc null --calls 5
expect_fail "second QUIC server refused while the first holds its port" "RC_PROGREGISTERED" \
	"$BIN/rc-bench-server" --rpcbind --listen quic://127.0.0.1:0 "${QS[@]}"
kill -KILL "$q1_pid"; wait "$q1_pid" 2>/dev/null; q1_pid=""
check "killed QUIC server: its entry stays behind" listed quic "$q1_quic_port"
start_server q2 "$BIN/rc-bench-server" --rpcbind --listen quic://127.0.0.1:0 "${QS[@]}" || finish
q2_quic_port=$(awk -F: '/^listening quic/ { print $3; exit }' "$TMPD/q2.out")
check "stale quic entry replaced by the next server" listed quic "$q2_quic_port"
stop_server q2
check "QUIC server: quic unregistered at exit" unregistered
expect_fail "rc client quic://, program not registered" "RC_PROGNOTREGISTERED|not registered" \
	"$BIN/rc-bench-client" --uri quic://127.0.0.1 --tls-ca "$C/ca.pem" --proc null --calls 1

# a program nobody registered
expect_fail "rc client, unregistered program" "RC_PROGNOTREGISTERED|not registered" \
	"$BIN/rc-bench-client" --uri udp://127.0.0.1 --proc null --prog 542262099 --calls 1

rpcbind_down
finish

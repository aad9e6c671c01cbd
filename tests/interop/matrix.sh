#!/usr/bin/env bash
# tests/interop/matrix.sh BIN CLIENT SERVER -- every procedure of bench.x from CLIENT (rc or
# tirpc) to SERVER (rc or tirpc), over UDP and TCP, bench_data sizes 0 4 400 4000 8000 and
# (TCP) 1 MiB; ECHO's bytes are verified by the client. Real processes over loopback.
BIN=$1
CLIENT=$2
SERVER=$3
. "$(dirname "$0")/lib.sh"

CL="$BIN/$CLIENT-bench-client"
start_server srv "$BIN/$SERVER-bench-server" --listen udp://127.0.0.1:0 --listen tcp://127.0.0.1:0 || finish

# quick calls: a handful each, verified
C="--calls 3 --warmup 1 --json"
for tr in udp tcp; do
	uri=$(eval "echo \$srv_$tr")
	sizes="0 4 400 4000 8000"
	[ $tr = tcp ] && sizes="$sizes 1048576"
	expect_ok "$CLIENT->$SERVER $tr null" "$CL" --uri "$uri" --proc null $C
	expect_ok "$CLIENT->$SERVER $tr int" "$CL" --uri "$uri" --proc int --arg -7 $C
	expect_ok "$CLIENT->$SERVER $tr work 200us" "$CL" --uri "$uri" --proc work --arg 200 $C
	expect_ok "$CLIENT->$SERVER $tr add" "$CL" --uri "$uri" --proc add --arg 3 $C
	for p in send sendr echo; do
		for s in $sizes; do
			expect_ok "$CLIENT->$SERVER $tr $p size $s" "$CL" --uri "$uri" --proc $p --size $s $C
		done
	done
	# the JSON line carries the keys the report reads
	if expect_ok "$CLIENT->$SERVER $tr echo json keys" "$CL" --uri "$uri" --proc echo --size 100 --calls 50 --json; then
		for k in mode uri proc size calls errors us_per_call calls_per_s median_us p99_us; do
			printf '%s\n' "$LAST_OUT" | grep -q "\"$k\":" || fail "JSON line lacks \"$k\": $LAST_OUT"
		done
		printf '%s\n' "$LAST_OUT" | grep -q '"errors":0,' || fail "errors in: $LAST_OUT"
	fi
	expect_ok "$CLIENT->$SERVER $tr echo 4 threads" "$CL" --uri "$uri" --proc echo --size 1000 --threads 4 --calls 200 --json
	if [ "$CLIENT" = rc ]; then
		for s in 0 4000 8000; do
			expect_ok "$CLIENT->$SERVER $tr select echo size $s" "$CL" --mode select --uri "$uri" --proc echo --size $s $C
		done
		[ $tr = tcp ] && expect_ok "$CLIENT->$SERVER $tr select echo 1 MiB" "$CL" --mode select --uri "$uri" --proc echo --size 1048576 $C
		expect_ok "$CLIENT->$SERVER $tr select add 2 threads" "$CL" --mode select --uri "$uri" --proc add --threads 2 --calls 100 --json
	fi
done
# one call = one round over both listeners
expect_ok "$CLIENT->$SERVER udp+tcp rounds" "$CL" --uri "$srv_udp" --uri "$srv_tcp" --proc echo --size 400 $C
[ "$CLIENT" = rc ] && expect_ok "$CLIENT->$SERVER udp+tcp select rounds" "$CL" --mode select --uri "$srv_udp" --uri "$srv_tcp" --proc echo --size 400 $C
stop_server srv
finish

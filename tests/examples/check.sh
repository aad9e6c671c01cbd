#!/usr/bin/env bash
# tests/examples/check.sh EXAMPLE EXAMPLES_DIR BIN -- run EXAMPLES_DIR/EXAMPLE/run.sh BIN (it
# starts the servers, runs the client, stops the servers) and check what it printed: the
# specific lines each example must produce, not only its exit status.
#
# Every run is bounded by timeout, which on expiry signals the whole process group: run.sh,
# its servers and its client. run.sh itself stops its servers on any exit.
set -u
EX=$1 DIR=$2 BIN=$3
FAILS=0
OUT=""

fail() {
	FAILS=$((FAILS + 1))
	echo "FAIL $*"
}

# run_example [ARGS...] -- run.sh BIN ARGS (the run.sh of folder $FOLDER, default EXAMPLE,
# within RUN_SECS, default 20); sets OUT (stdout and stderr); it must exit 0.
run_example() {
	local st=0
	OUT=$(timeout -k 2 "${RUN_SECS:-20}" bash "$DIR/${FOLDER:-$EX}/run.sh" "$BIN" "$@" 2>&1) || st=$?
	printf '%s\n' "$OUT" | sed 's/^/    | /'
	[ $st -eq 0 ] || fail "$EX/run.sh $* exited with status $st"
}

# has PATTERN DESC -- some line of OUT matches PATTERN (grep -E)
has() {
	printf '%s\n' "$OUT" | grep -Eq -- "$1" || fail "$2: no line matches /$1/"
}

# count PATTERN N DESC -- exactly N lines of OUT match PATTERN
count() {
	local n
	n=$(printf '%s\n' "$OUT" | grep -Ec -- "$1")
	[ "$n" -eq "$2" ] || fail "$3: $n lines match /$1/, expected $2"
}

# lacks PATTERN DESC -- no line of OUT matches PATTERN
lacks() {
	if printf '%s\n' "$OUT" | grep -Eq -- "$1"; then fail "$2: a line matches /$1/"; fi
}

# a client pointed at a port nobody listens on must say why and exit 1
refused() {
	local out st=0
	out=$(timeout 10 "$BIN/$1" "${@:2}" tcp://127.0.0.1:1 </dev/null 2>&1) || st=$?
	[ $st -eq 1 ] || fail "$1 against a closed port exited with status $st, expected 1"
	printf '%s\n' "$out" | grep -q "tcp://127.0.0.1:1: can't connect: Connection refused" ||
		fail "$1 against a closed port: no error text in: $out"
}

case $EX in
rstatus)
	run_example
	host=$(uname -n)
	load='[0-9]+\.[0-9]{2}'
	count "^$host +up ([0-9]+ days?, +)?([0-9 ]?[0-9]:[0-9]{2}|[0-9]+ min), +[0-9]+ users?, load average: $load, $load, $load$" 3 \
		"one line per host (two hosts), and one for the broadcast's answer"
	count '^ +\(answered from 127\.0\.0\.1\)$' 1 "the broadcast's answer names its address"
	has '^broadcast to udp://127\.0\.0\.1:[0-9]+: 1 host answered$' "the broadcast's count"
	refused rstatus
	;;
printers)
	run_example
	has '^asking 3 printers for their queues at once$' "the multi call"
	has '^  laser +queue 3 +udp://127\.0\.0\.1:[0-9]+$' "laser's answer"
	has '^  inkjet +queue 0 +tcp://127\.0\.0\.1:[0-9]+$' "inkjet's answer"
	lacks '^  plotter' "plotter answers after 1 s; the call stopped before"
	has '^inkjet is idle: stopped early, 1 printer not heard from$' "the early stop"
	count '^  not waited for: udp://127\.0\.0\.1:[0-9]+$' 1 "the abandoned printer"
	has '^printed "report\.pdf" on inkjet as job 1$' "the PRINT call on the idle printer"
	has '^\[inkjet\] inkjet: job 1 "report\.pdf" from [^ ]+, 3 pages \(queue now 1\)$' \
		"inkjet's log of the job"
	count '^\[(laser|plotter)\]' 0 "the busy printers got no job"
	# the order: laser's answer, then inkjet's, then the stop
	order=$(printf '%s\n' "$OUT" | grep -E '^  (laser|inkjet) |^inkjet is idle' | cut -c1-12 | tr -s ' ' | tr '\n' '/')
	[ "$order" = " laser / inkjet /inkjet is id/" ] || fail "order of the answers: $order"
	refused printers
	;;
arith)
	for n in 21 -1234; do
		run_example $n
		has "^  double\($n\) = $((2 * n)), triple\($n\) = $((3 * n)) in [0-9.]+ ms$" \
			"blocking calls with $n"
		count "^  double\($n\) = $((2 * n)) from (udp|tcp)://127\.0\.0\.1:[0-9]+ after [0-9.]+ ms$" 3 \
			"DOUBLE($n) answered by each of the three servers"
		count "^  triple\($n\) = $((3 * n)) from (udp|tcp)://127\.0\.0\.1:[0-9]+ after [0-9.]+ ms$" 3 \
			"TRIPLE($n) answered by each of the three servers"
		count '^  3 of 3 answered in [0-9.]+ ms$' 2 "both multi calls complete"
		# every answer is 2x / 3x its argument (no stray line with another value)
		bad=$(printf '%s\n' "$OUT" | grep -oE '(double|triple)\(-?[0-9]+\) = -?[0-9]+' |
			awk -F'[() =]+' '{ k = $1 == "double" ? 2 : 3; if ($3 != k * $2) print }')
		[ -z "$bad" ] || fail "wrong answers: $bad"
		# answers arrive fastest server first: delays 0, 150, 300 ms
		for p in double triple; do
			times=$(printf '%s\n' "$OUT" | sed -nE "s/^  $p\(.*\) = .* after ([0-9]+)\.[0-9] ms$/\1/p" | tr '\n' ' ')
			set -- $times
			if [ $# -ne 3 ] || [ "$1" -ge 140 ] || [ "$2" -lt 140 ] || [ "$2" -ge 290 ] || [ "$3" -lt 290 ]; then
				fail "$p: arrival times (ms) $times, expected <140, 140..289, >=290"
			fi
		done
		# at once: the slowest server's 300 ms, not the 450 ms of one after another
		for t in $(printf '%s\n' "$OUT" | sed -nE 's/^  3 of 3 answered in ([0-9]+)\.[0-9] ms$/\1/p'); do
			[ "$t" -lt 440 ] || fail "a multi call took $t ms: not at once"
		done
	done
	# --json: the blocking calls' arguments and results, printed by idlc --print's printers
	run_example 7 --json
	has '^\{"xid":[0-9]+,"proc":"DOUBLE","args":7\}$' "DOUBLE's argument as JSON"
	has '^\{"xid":[0-9]+,"proc":"DOUBLE","res":14\}$' "DOUBLE's result as JSON"
	has '^\{"xid":[0-9]+,"proc":"TRIPLE","res":21\}$' "TRIPLE's result as JSON"
	refused arith
	;;
events)
	run_example
	for c in "1 300" "2 100" "3 200" "4 50"; do
		set -- $c
		count "^\[ *[0-9]+ ms\] call $1 started: wait $2 ms$" 1 "call $1 started"
		count "^\[ *[0-9]+ ms\] call $1 done: the server waited $2 ms$" 1 "call $1 completed with its result"
	done
	order=$(printf '%s\n' "$OUT" | sed -nE 's/^\[ *[0-9]+ ms\] call ([0-9]) done.*/\1/p' | tr -d '\n')
	[ "$order" = 4231 ] || fail "completion order $order, expected 4231 (shortest wait first)"
	has '^\[ *[0-9]+ ms\] [0-9]+ call\(s\) in flight$' "the application's own timer ticked"
	has '^4 of 4 calls completed$' "the summary"
	lacks 'failed' "no call failed"
	refused events
	;;
leases)
	run_example
	has '^A: alpha granted$' "A took alpha"
	has '^A: beta granted$' "A took beta"
	has '^B: alpha refused while A holds it$' "B was refused what A held"
	has '^B: alpha granted after A left$' "A's leases went with its connection"
	has '^leases held: 1$' "only B's lease is left"
	count 'connection [0-9]+ opened$' 2 "the hook saw both connections open"
	has 'connection 1 closed: 2 lease\(s\) released$' "A's CLOSE released its two leases"
	has 'connection 2 closed: 1 lease\(s\) released$' "B's CLOSE, at the end, released its one"
	refused leases
	;;
notify)
	run_example
	count '^subscribed as [0-9]+; no listening socket: events come on this client.s connection$' 2 \
		"each subscriber subscribed"
	count '^published "hello from subscriber [0-9]+" to [1-9][0-9]* subscriber\(s\)$' 2 \
		"each published, delivered to itself at least"
	has '^event [0-9]+: tick [0-9]+$' "the server's ticks came"
	has '^event [0-9]+: hello from subscriber [0-9]+$' "a published event came"
	count '^[0-9]+ event\(s\), its own among them$' 2 "each got its events, its own among them"
	has 'subscriber [0-9]+: topic "all"$' "the server saw the TCP subscriber"
	has 'subscriber [0-9]+: topic "news"$' "the server saw the Unix subscriber"
	has 'subscriber [0-9]+ dropped: ' "the server dropped a subscriber that left"
	refused notify
	;;
jobs | jobs_krb5i)
	# 10,000 jobs at once, default limits; each client gives up after 5 s saying what was
	# missing (run.sh), well before RUN_SECS. Under a checker (sanitizers, valgrind: several
	# times slower) 2,000, each client given 55 s (lib.sh), the run 150 s.
	FOLDER=jobs
	modes="tcp unix tls"
	[ $EX = jobs_krb5i ] && modes=krb5i
	jobs=10000 secs=40
	[ -n "${RC_CHECKER:-}${RC_VALGRIND:-}" ] && jobs=2000 secs=150
	RUN_SECS=$secs run_example $jobs $modes
	for m in $modes; do
		count "^$m:\$" 1 "the $m run"
		count "^\[$m\] $jobs jobs run, 0 calls back failed, 0 answers failed\$" 1 \
			"$m: the server ran every job and called each back"
	done
	n=$(printf '%s\n' $modes | wc -l)
	count "^$jobs job\\(s\\) submitted to (tcp://127\\.0\\.0\\.1:[0-9]+|unix:/).*, all at once; $jobs answered, $jobs called back, in [0-9]+ ms\$" \
		"$n" "every client got its $jobs answers and calls back"
	count '^every job answered once and called back once, on this connection$' "$n" \
		"every client checked each job"
	has '^  worker [1-4] ran [0-9]+$' "the workers' counts"
	lacks '^  worker ([5-9]|[1-9][0-9]+) ran' "four workers, no more"
	lacks 'FAILED' "no client failed"
	refused jobs
	;;
quic)
	run_example
	has '^hello over quic -> HELLO OVER QUIC \(TLS: yes\)$' "the blocking call, under TLS"
	count '^stream call [0-7] -> STREAM CALL [0-7]$' 8 "the eight started calls answered"
	;;
*)
	echo "unknown example '$EX'"
	exit 2
	;;
esac
if [ $FAILS -ne 0 ]; then
	echo "$EX: $FAILS checks failed"
	exit 1
fi
echo "$EX: ok"

#!/usr/bin/env bash
# tests/faults/soak.sh -- the soak test: one rc-bench-server (UDP + TCP, 2 worker threads),
# N faults-soak-client processes of mixed calls (NULL / ECHO of varied sizes / ADD, UDP and TCP,
# clients recreated every few seconds, pipelined bursts) for the run's length, the server's
# memory sampled from /proc/PID/status into a CSV.
#
#   soak.sh --bin BENCH_BIN --self FAULTS_BIN [--minutes M | --seconds S] [--clients N]
#           [--out DIR] [--interval S] [--warmup S] [--rss-growth-kib K] [--seed N]
#           [--relay "RC-RELAY OPTIONS"] [--drc-ttl MS]
#
# --drc-ttl sets how long the server's duplicate request cache remembers a call (default 120 s).
# A run much shorter than that measures the cache filling up, and with it the allocator's
# overhead on what the cache holds (heap fragmentation under its churn: ~10% more, which
# stops growing once entries expire); a TTL under the warm-up lets the cache reach its steady
# state first, so that growth after the warm-up is the server's own.
#
# --relay sends the clients' UDP calls through rc-relay with those fault options (e.g.
# "--drop 0.1 --dup 0.2 --reorder 0.2 --jitter 5"): retransmissions, replays of cached replies
# (large ECHO replies too) and reordered replies, with the same checks.
#
# Passes when: every client exits 0 (no failed call, every ECHO returned its own bytes, every
# ADD total grew), the server's total equals the sum of every client's ADDs (none lost, none
# run twice), the server's RSS after the clients have left (the last sample, a second or more
# after the last client ended) is within --rss-growth-kib (default 4096; negative: reported, not
# checked) plus a quarter of the cache's bytes (the allocator's overhead around its entries) of
# its RSS at start, its descriptor count returns to where it was, and it exits 0 on
# SIGTERM. The RSS after the clients left is the server's less what its duplicate request cache
# holds then (drc_kib, from rc-bench-server --stats-every): the cache remembers every UDP call
# for 120 s by design, bounded by its own byte cap, and is not a leak. Memory still held then is
# what the server keeps or lost: a quiet server gives freed heap pages back (docs/runtime.md,
# "Memory after load"). The growth under load -- the median of the last quarter of the samples
# after the warm-up against the first quarter, less the cache -- is reported, not checked:
# while the cache fills, its entries land among freed echo buffers and pin their pages (heap
# fragmentation, given back when the load ends).
# DIR gets rss.csv (elapsed_s,rss_kib,hwm_kib,threads,fds,drc_kib), client-N.txt and
# summary.txt.
# Every process started is killed on exit, whatever happens.
set -u
BIN="" SELF="" SECONDS_RUN=20 CLIENTS=4 OUT="" INTERVAL="" WARMUP="" GROWTH=4096 SEED=0 RELAY=
DRCTTL=
while [ $# -gt 0 ]; do
	case $1 in
	--bin) BIN=$2; shift 2 ;;
	--self) SELF=$2; shift 2 ;;
	--minutes) SECONDS_RUN=$(($2 * 60)); shift 2 ;;
	--seconds) SECONDS_RUN=$2; shift 2 ;;
	--clients) CLIENTS=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--interval) INTERVAL=$2; shift 2 ;;
	--warmup) WARMUP=$2; shift 2 ;;
	--rss-growth-kib) GROWTH=$2; shift 2 ;;
	--seed) SEED=$2; shift 2 ;;
	--relay) RELAY=$2; shift 2 ;;
	--drc-ttl) DRCTTL=$2; shift 2 ;;
	*) echo "soak.sh: bad option $1" >&2; exit 2 ;;
	esac
done
[ -n "$BIN" ] && [ -n "$SELF" ] || { echo "soak.sh: --bin and --self are required" >&2; exit 2; }
# Under valgrind the server's RSS is valgrind's own (shadow memory, a 20 MB freelist of blocks
# held back): the curve is written, its growth not checked; valgrind checks the leaks.
[ -n "${RC_VALGRIND:-}" ] && GROWTH=-1
[ -n "$INTERVAL" ] || INTERVAL=$([ "$SECONDS_RUN" -le 60 ] && echo 1 || echo 5)
# warm-up: a quarter of the run, 5..60 s
if [ -z "$WARMUP" ]; then
	WARMUP=$((SECONDS_RUN / 4))
	[ "$WARMUP" -lt 5 ] && WARMUP=5
	[ "$WARMUP" -gt 60 ] && WARMUP=60
fi
[ "$SEED" -ne 0 ] || SEED=$(date +%s)
T_LIMIT=60
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
[ -n "$OUT" ] || OUT=$TMPD/out
mkdir -p "$OUT"
CSV=$OUT/rss.csv

echo "soak: $CLIENTS clients x ${SECONDS_RUN} s, RSS every ${INTERVAL} s, warm-up ${WARMUP} s, seed $SEED"
start_server srv "$BIN/rc-bench-server" --listen udp://127.0.0.1:0 --listen tcp://127.0.0.1:0 \
	--threads 2 --stats-every 500 ${DRCTTL:+--drc-ttl "$DRCTTL"} || finish

udp=$srv_udp
if [ -n "$RELAY" ]; then
	# shellcheck disable=SC2086
	start_server rel "$SELF/rc-relay" --server "$srv_udp" $RELAY || finish
	udp=$rel_udp
	echo "     UDP calls go through rc-relay $RELAY"
fi

# the sampler: one line per interval until the server is gone
(
	t0=$(date +%s%N)
	echo "elapsed_s,rss_kib,hwm_kib,threads,fds,drc_kib"
	while [ -r "/proc/$srv_pid/status" ]; do
		s=$(awk '/^VmRSS:/ {r=$2} /^VmHWM:/ {h=$2} /^Threads:/ {t=$2} END {print r "," h "," t}' \
			"/proc/$srv_pid/status" 2>/dev/null)
		f=$(ls "/proc/$srv_pid/fd" 2>/dev/null | wc -l)
		c=$(grep -o '"drc_bytes":[0-9]*' "$TMPD/srv.out" 2>/dev/null | tail -1 | cut -d: -f2)
		now=$(date +%s%N)
		d=$(((now - t0) / 100000000))
		[ -n "$s" ] && printf '%d.%d,%s,%s,%d\n' $((d / 10)) $((d % 10)) "$s" "$f" $((${c:-0} / 1024))
		sleep "$INTERVAL"
	done
) >"$CSV" &
sampler=$!
PIDS="$PIDS $sampler"

for i in $(seq 1 "$CLIENTS"); do
	bg_run $((SECONDS_RUN + 60)) "$OUT/client-$i.txt" "$OUT/client-$i.txt" \
		"$SELF/faults-soak-client" --udp "$udp" --tcp "$srv_tcp" --seconds "$SECONDS_RUN" \
		--id "$i" --seed $((SEED + i))
done
# client_done N STATUS: client N must have exited 0.
client_done() {
	if [ "$2" -ne 0 ]; then
		fail "client $1 exited with status $2: $(tail -5 "$OUT/client-$1.txt")"
	else
		echo "ok   $(tail -1 "$OUT/client-$1.txt")"
	fi
}
bg_wait client_done
sleep 1 # let the descriptor count settle (closed connections) before the last sample
sleep "$INTERVAL"

# ADD: the server's total is the sum of every client's successful ADDs
CHECKS=$((CHECKS + 1))
want=$(awk '/^client / { for (i = 1; i < NF; i++) if ($i == "add_sum") s += $(i + 1) } END { printf "%.0f\n", s }' "$OUT"/client-*.txt)
got=$(timeout 20 "$SELF/faults-soak-client" --read-total --udp "$srv_udp" | awk '{print $2}')
if [ "$got" = "$want" ]; then
	echo "ok   server total $got = the sum of the clients' ADDs"
else
	fail "server total '$got' != the clients' ADDs $want"
fi
calls=$(awk '/^client / { s += $4 } END { printf "%.0f\n", s }' "$OUT"/client-*.txt)
sessions=$(awk '/^client / { for (i = 1; i < NF; i++) if ($i == "sessions") s += $(i + 1) } END { printf "%.0f\n", s }' "$OUT"/client-*.txt)
if [ -n "$RELAY" ]; then
	stop_server rel
	echo "     $(cat "$TMPD/rel.err")"
fi
stop_server srv
kill "$sampler" 2>/dev/null
wait "$sampler" 2>/dev/null

# RSS after the warm-up, while the clients ran, less the duplicate request cache's bytes: the
# median of the first quarter of those samples against the median of the last quarter (single samples swing by a few MiB with the
# large ECHO buffers in flight; a leak raises the whole curve)
CHECKS=$((CHECKS + 1))
read -r base end max fd0 fd1 n idle drc idrc <<<"$(awk -F, -v w="$WARMUP" -v e="$SECONDS_RUN" '
	function median(a, lo, hi,   m, i, j, t, b) {
		m = 0
		for (i = lo; i <= hi; i++) b[++m] = a[i]
		for (i = 2; i <= m; i++) { t = b[i]; for (j = i - 1; j >= 1 && b[j] > t; j--) b[j + 1] = b[j]; b[j + 1] = t }
		return b[int((m + 1) / 2)]
	}
	NR > 1 { idle = $2; idrc = $6; fd1 = $5 }
	NR > 1 && $1 >= w && $1 <= e { r[++n] = $2 - $6; if ($2 + 0 > max) max = $2 + 0; if (fd0 == "") fd0 = $5; drc = $6 }
	END {
		k = int(n / 4); if (k < 2) k = 2; if (k > n) k = n
		if (n == 0) { print 0, 0, 0, fd0 + 0, fd1 + 0, 0, idle + 0, 0, idrc + 0; exit }
		print median(r, 1, k), median(r, n - k + 1, n), max + 0, fd0 + 0, fd1 + 0, n, idle + 0, drc + 0, idrc + 0
	}' "$CSV")"
first=$(awk -F, 'NR == 2 { print $2; exit }' "$CSV")
growth=$((end - base))
left=$((idle - idrc - ${first:-0}))
# the allowance: --rss-growth-kib, plus a quarter of what the cache holds then -- its bytes are
# counted without the allocator's overhead, and its entries, allocated among the load's
# buffers all run long, pin the pages around them when the load ends (measured: 10-14 MiB
# with a 64 MiB cache; 57 MiB before a quiet server gave free pages back)
allow=$((GROWTH + idrc / 4))
summary="soak: $CLIENTS clients, ${SECONDS_RUN} s, $calls calls in $sessions sessions; server RSS (KiB): ${first:-?} at start; less the duplicate request cache's holdings ($drc at the end), median $base just after the ${WARMUP} s warm-up, median $end at the end of the run (growth under load $growth); peak $max; after the clients left $idle, of which the cache $idrc: $left over the start (limit $allow: $GROWTH + a quarter of the cache); descriptors $fd0 -> $fd1; $n samples under load in $CSV"
echo "$summary" | tee "$OUT/summary.txt"
if [ "$n" -lt 4 ]; then
	fail "too few RSS samples after the warm-up ($n)"
elif [ "$GROWTH" -lt 0 ]; then
	echo "ok   RSS after the clients left, less the cache: $left KiB over the start (not checked: --rss-growth-kib $GROWTH)"
elif [ "$left" -gt "$allow" ]; then
	fail "server RSS after the clients left, less the cache, is $left KiB over its start (limit $allow KiB)"
else
	echo "ok   RSS after the clients left, less the cache, $left KiB over the start <= $allow KiB"
fi
CHECKS=$((CHECKS + 1))
if [ "$fd1" -gt "$fd0" ]; then
	fail "server descriptors grew: $fd0 -> $fd1"
else
	echo "ok   descriptors $fd0 -> $fd1"
fi
finish

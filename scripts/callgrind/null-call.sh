#!/usr/bin/env bash
# scripts/callgrind/null-call.sh [BUILD] -- user-space instructions per blocking null call,
# client side, remotecall vs libtirpc, over loopback UDP and TCP (issue 4's measure).
#
# Each client is a minimal loop (null_rc.c, null_tirpc.c, compiled here against BUILD's
# libraries and generated bench.x code) run under valgrind --tool=callgrind for 1000 and for
# 2000 calls; the difference divided by 1000 is the cost of one call, start-up excluded. The
# servers are BUILD's rc-bench-server and tirpc-bench-server.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
B=$(cd "${1:-$root/build}" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rc-cg.XXXXXX")
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"' EXIT

cc=${CC:-cc}
$cc -O2 -g "$here/null_rc.c" -I"$B/bench/rc" -I"$root/xdr/include" -I"$root/runtime/include" \
	"$B/bench/libbench_rc_idl.a" "$B/libremotecall.a" -lssl -lcrypto -lgssapi_krb5 -lngtcp2_crypto_gnutls -lngtcp2 -lgnutls -lpthread -o "$tmp/null_rc"
$cc -O2 -g "$here/null_tirpc.c" -I"$B/bench/tirpc" -I/usr/include/tirpc \
	"$B/bench/libbench_tirpc_idl.a" -ltirpc -o "$tmp/null_tirpc"

serve() { # serve NAME PROGRAM: start it on UDP and TCP port 0, set NAME_udp / NAME_tcp
	"$2" --listen udp://127.0.0.1:0 --listen tcp://127.0.0.1:0 >"$tmp/$1.out" &
	pids+=($!)
	for _ in $(seq 100); do
		[ "$(grep -c '^listening ' "$tmp/$1.out")" -ge 2 ] && break
		sleep 0.05
	done
	eval "$1_udp=$(awk '/^listening udp/ { print $2 }' "$tmp/$1.out")"
	eval "$1_tcp=$(awk '/^listening tcp/ { print $2 }' "$tmp/$1.out")"
}
ir() { # ir CMD...: instructions the whole run took
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$@" >/dev/null 2>"$tmp/cg.err" ||
		{ cat "$tmp/cg.err" >&2; exit 1; }
	awk '/^(summary|totals):/ { print $2; exit }' "$tmp/cg.out"
}
per_call() { # per_call CMD... (N is appended): (Ir(2000) - Ir(1000)) / 1000
	local a b
	a=$(ir "$@" 1000)
	b=$(ir "$@" 2000)
	echo $(((b - a) / 1000))
}

serve rc "$B/bench/rc-bench-server"
serve ti "$B/bench/tirpc-bench-server"
printf '%-6s %12s %12s %8s\n' transport remotecall libtirpc ratio
for tr in udp tcp; do
	eval "u=\$rc_$tr t=\$ti_$tr"
	r=$(per_call "$tmp/null_rc" "$u")
	l=$(per_call "$tmp/null_tirpc" "$tr" "${t##*:}")
	printf '%-6s %12s %12s %8s\n' "$tr" "$r" "$l" "$(awk -v a="$r" -v b="$l" 'BEGIN { printf "%.2f", a / b }')"
done

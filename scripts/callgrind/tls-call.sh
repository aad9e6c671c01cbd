#!/usr/bin/env bash
# scripts/callgrind/tls-call.sh [BUILD] -- user-space instructions per blocking null call over
# RPC-over-TLS beside plaintext TCP, client and server side (issue 30 item 4's measure).
#
# Client: null_rc (null-call.sh's minimal loop) under valgrind --tool=callgrind for 1000 and
# 2000 calls against a native rc-bench-server; the difference / 1000 is one call. Server:
# rc-bench-server under callgrind, served 2000 and 4000 calls by a native null_rc, stopped by
# SIGTERM; the difference / 2000 (its loop's timed wake-ups make it vary by a few hundred).
# CG_KEEP=DIR keeps the profiles there (cli|srv.SEC.N; callgrind_annotate them, or
# cgdiff.py A B N for what one call costs by function).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
B=$(cd "${1:-$root/build}" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rc-cgtls.XXXXXX")
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$tmp"' EXIT

cc=${CC:-cc}
$cc -O2 -g "$here/null_rc.c" -I"$B/bench/rc" -I"$root/xdr/include" -I"$root/runtime/include" \
	"$B/bench/libbench_rc_idl.a" "$B/libremotecall.a" -lssl -lcrypto -lgssapi_krb5 -lngtcp2_crypto_gnutls -lngtcp2 -lgnutls -lpthread -o "$tmp/null_rc"
bash "$root/tests/runtime/tls_certs.sh" "$tmp/c" >/dev/null 2>&1
tlsargs=(--tls-cert "$tmp/c/server.pem" --tls-key "$tmp/c/server.key")

# serve OUT [valgrind...]: start rc-bench-server on TCP port 0 with TLS offered; set uri, spid
serve() {
	local out=$1
	shift
	"$@" "$B/bench/rc-bench-server" --listen tcp://127.0.0.1:0 "${tlsargs[@]}" >"$out" 2>"$out.err" &
	spid=$!
	pids+=($spid)
	for _ in $(seq 400); do
		grep -q '^listening ' "$out" && break
		sleep 0.05
	done
	uri=$(awk '/^listening tcp/ { print $2 }' "$out")
}
ir() { # ir FILE: instructions of a profile
	awk '/^(summary|totals):/ { print $2; exit }' "$1"
}
suffix() { # suffix SEC: the URI's query for SEC
	[ "$1" = tls ] && echo "?tls=required&ca=$tmp/c/ca.pem" || echo ""
}

serve "$tmp/srv.out"
native=$uri
printf '%-6s %10s %10s\n' sec client server
for sec in plain tls; do
	q=$(suffix $sec)
	for n in 1000 2000; do
		valgrind --tool=callgrind --callgrind-out-file="$tmp/cli.$sec.$n" "$tmp/null_rc" "$native$q" $n \
			>/dev/null 2>"$tmp/cg.err" || { cat "$tmp/cg.err" >&2; echo "client $sec $n failed" >&2; exit 1; }
	done
	c=$((($(ir "$tmp/cli.$sec.2000") - $(ir "$tmp/cli.$sec.1000")) / 1000))
	for n in 2000 4000; do
		serve "$tmp/vs.out" valgrind --tool=callgrind --callgrind-out-file="$tmp/srv.$sec.$n"
		"$tmp/null_rc" "$uri$q" $n || { echo "null_rc against the profiled server ($sec $n) failed" >&2; exit 1; }
		kill -TERM "$spid"
		wait "$spid" || true
	done
	s=$((($(ir "$tmp/srv.$sec.4000") - $(ir "$tmp/srv.$sec.2000")) / 2000))
	printf '%-6s %10s %10s\n' $sec $c $s
	if [ -n "${CG_KEEP:-}" ]; then
		mkdir -p "$CG_KEEP"
		cp "$tmp/cli.$sec."* "$tmp/srv.$sec."* "$CG_KEEP/"
	fi
done

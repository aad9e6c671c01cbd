#!/usr/bin/env bash
# tests/faults/amo.sh BIN SELF IMPL [ARGS...] -- the at-most-once test (see amo_common.h):
# a fresh rc-bench-server (UDP, 2 worker threads), then SELF/faults-amo-IMPL (IMPL rc or tirpc)
# through its in-process relay at 30 % loss, 10 % duplication and 10 % reordering both ways.
# Extra ARGS go to faults-amo-IMPL (e.g. --calls 20000 --seed 7). Bounded by timeout; the
# server is killed on exit whatever happens.
BIN=$1 SELF=$2 IMPL=$3
shift 3
T_LIMIT=${T_LIMIT:-120}
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

start_server srv "$BIN/rc-bench-server" --listen udp://127.0.0.1:0 --threads 2 || finish
CHECKS=$((CHECKS + 1))
vg_cmd "$SELF/faults-amo-$IMPL" --server "$srv_udp" "$@"
timeout "$T_LIMIT" "${VG_CMD[@]}"
st=$?
[ $st -eq 0 ] || fail "faults-amo-$IMPL exited with status $st"
stop_server srv
finish

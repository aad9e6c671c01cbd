# tests/faults/lib.sh -- the fault scripts use the interop scripts' helpers (bash), with their
# own temporary-folder prefix. Source it after setting BIN (the folder holding rc-bench-*,
# tirpc-bench-*).
RC_TMP_PREFIX=rc-faults
# shellcheck source=../interop/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../interop/lib.sh"

# bg_run LIMIT OUT ERR CMD... -- run CMD (under valgrind when asked) in the background under
# timeout LIMIT, stdout to OUT, stderr to ERR (ERR = OUT: both to OUT); its pid joins BG_PIDS,
# and PIDS (killed on exit).
BG_PIDS=""
bg_run() {
	local limit=$1 out=$2 err=$3
	shift 3
	vg_cmd "$@"
	if [ "$err" = "$out" ]; then
		timeout "$limit" "${VG_CMD[@]}" >"$out" 2>&1 &
	else
		timeout "$limit" "${VG_CMD[@]}" >"$out" 2>"$err" &
	fi
	BG_PIDS="$BG_PIDS $!"
	PIDS="$PIDS $!"
}

# bg_wait CHECK -- wait for each of BG_PIDS in start order and call CHECK N STATUS for it (N
# from 1), one check each; BG_PIDS is empty afterwards.
bg_wait() {
	local p i=0 st
	for p in $BG_PIDS; do
		i=$((i + 1))
		wait "$p"
		st=$?
		CHECKS=$((CHECKS + 1))
		"$1" "$i" "$st"
	done
	BG_PIDS=""
}

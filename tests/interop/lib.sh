# tests/interop/lib.sh -- shared by the interop scripts (bash). Source it after setting BIN
# (the folder holding rc-bench-*, tirpc-bench-*, raw-pingpong).
#
#   start_server NAME PROGRAM ARGS...   start in the background, wait (5 s) for one
#                                       "listening URI" line per --listen (or --server); sets NAME_pid,
#                                       NAME_udp, NAME_tcp (URIs) and NAME_udp_port, NAME_tcp_port
#   stop_server NAME                    SIGTERM, wait up to 3 s (SIGKILL after), check exit 0
#   expect_ok DESC CMD...               run CMD under timeout; it must exit 0
#   expect_fail DESC PATTERN CMD...     CMD must exit non-zero with PATTERN (grep -E) in its output
#   expect_out DESC PATTERN CMD...      CMD must exit 0 with PATTERN in its output
#   finish                              print the summary; exit 1 if anything failed
#   vg CMD...                           run CMD (under valgrind when asked, see below)
#
# Everything started is killed on exit, whatever happens.
#
# RC_VALGRIND=1 in the environment (make test-valgrind): remotecall's own programs started
# through these helpers -- any command named by a path, except the libtirpc peers -- run under
# valgrind memcheck, each writing $TMPD/vg.PID.log; finish fails if a log shows an error or a
# definite leak, and the start-up wait is longer.
set -u
: "${BIN:?BIN must name the folder of the benchmark programs}"
T_LIMIT=${T_LIMIT:-60}
START_TICKS=100 # of 50 ms
[ -n "${RC_VALGRIND:-}" ] && { T_LIMIT=$((T_LIMIT * 5)); START_TICKS=600; }
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/${RC_TMP_PREFIX:-rc-interop}.XXXXXX")
PIDS=""
FAILS=0
CHECKS=0

VG_SUPP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/valgrind.supp
VG_LOGS=0
# vg_cmd CMD...: sets the array VG_CMD to CMD, prefixed with valgrind when RC_VALGRIND is set
# and CMD is one of ours.
vg_cmd() {
	VG_CMD=("$@")
	[ -n "${RC_VALGRIND:-}" ] || return 0
	case $1 in */*) ;; *) return 0 ;; esac
	case ${1##*/} in *tirpc*) return 0 ;; esac
	VG_CMD=(valgrind -q --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite
		--error-exitcode=97 --suppressions="$VG_SUPP" --log-file="$TMPD/vg.%p.log" "$@")
	VG_LOGS=1
}
vg() {
	vg_cmd "$@"
	"${VG_CMD[@]}"
}
# vg_check: every valgrind log written so far must be empty (-q prints only errors and leaks).
vg_check() {
	local f
	[ "$VG_LOGS" = 1 ] || return 0
	for f in "$TMPD"/vg.*.log; do
		[ -s "$f" ] || continue
		fail "valgrind found errors ($(basename "$f")):"
		head -40 "$f" | sed 's/^/    /'
		: >"$f"
	done
}

cleanup() {
	local p
	for p in $PIDS; do kill -CONT "$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null; done
	sleep 0.2
	for p in $PIDS; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMPD"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 1' INT TERM HUP

fail() {
	FAILS=$((FAILS + 1))
	echo "FAIL $*"
}

start_server() {
	local name=$1
	shift
	local out=$TMPD/$name.out err=$TMPD/$name.err n=0 a i=0 pid
	for a in "$@"; do case $a in --listen | --server) n=$((n + 1)) ;; esac; done
	: >"$out"; : >"$err"
	vg_cmd "$@"
	"${VG_CMD[@]}" >"$out" 2>"$err" &
	pid=$!
	PIDS="$PIDS $pid"
	eval "${name}_pid=$pid"
	while [ "$(grep -c '^listening ' "$out" 2>/dev/null)" -lt "$n" ]; do
		i=$((i + 1))
		if [ $i -gt "$START_TICKS" ] || ! kill -0 "$pid" 2>/dev/null; then
			fail "$name ($*) did not start"
			sed 's/^/    /' "$err"
			return 1
		fi
		sleep 0.05
	done
	local u t
	u=$(awk '/^listening udp/ { print $2; exit }' "$out")
	t=$(awk '/^listening tcp/ { print $2; exit }' "$out")
	eval "${name}_udp='$u'; ${name}_tcp='$t'; ${name}_udp_port='${u##*:}'; ${name}_tcp_port='${t##*:}'"
	echo "     $name: pid $pid, ${u:-no udp} ${t:-no tcp}"
	return 0
}

stop_server() {
	local name=$1 pid i=0 st
	pid=$(eval "echo \${${name}_pid:-}")
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		fail "$name did not stop within 3 s of SIGTERM"
	fi
	wait "$pid"
	st=$?
	CHECKS=$((CHECKS + 1))
	if [ $st -ne 0 ]; then
		fail "$name exited with status $st after SIGTERM"
		sed 's/^/    /' "$TMPD/$name.err"
	fi
	eval "${name}_pid=''"
}

expect_ok() {
	local desc=$1 out st
	shift
	CHECKS=$((CHECKS + 1))
	vg_cmd "$@"
	out=$(timeout "$T_LIMIT" "${VG_CMD[@]}" 2>&1)
	st=$?
	if [ $st -ne 0 ]; then
		fail "$desc (exit $st): $*"
		printf '%s\n' "$out" | head -20 | sed 's/^/    /'
		return 1
	fi
	LAST_OUT=$out
	echo "ok   $desc"
	return 0
}

expect_fail() {
	local desc=$1 pat=$2 out st
	shift 2
	CHECKS=$((CHECKS + 1))
	vg_cmd "$@"
	out=$(timeout "$T_LIMIT" "${VG_CMD[@]}" 2>&1)
	st=$?
	LAST_OUT=$out
	if [ $st -eq 0 ] || [ $st -eq 124 ] || ! printf '%s\n' "$out" | grep -Eq -- "$pat"; then
		fail "$desc (exit $st, expected failure matching /$pat/): $*"
		printf '%s\n' "$out" | head -20 | sed 's/^/    /'
		return 1
	fi
	echo "ok   $desc: $(printf '%s\n' "$out" | grep -E -- "$pat" | head -1)"
	return 0
}

finish() {
	local p i
	if [ "$VG_LOGS" = 1 ]; then
		# servers still running write their leak report when they exit
		for p in $PIDS; do kill -TERM "$p" 2>/dev/null; done
		for p in $PIDS; do
			i=0
			while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		done
		vg_check
	fi
	echo "$CHECKS checks, $FAILS failed"
	[ "$FAILS" -eq 0 ]
	exit $?
}

# expect_out DESC PATTERN CMD... -- CMD must exit 0 with PATTERN (grep -E) in its output.
expect_out() {
	local desc=$1 pat=$2
	shift 2
	expect_ok "$desc" "$@" || return 1
	if ! printf '%s\n' "$LAST_OUT" | grep -Eq -- "$pat"; then
		fail "$desc: output lacks /$pat/"
		printf '%s\n' "$LAST_OUT" | head -20 | sed 's/^/    /'
		return 1
	fi
	return 0
}

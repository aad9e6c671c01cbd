# examples/lib.sh -- what the examples' run.sh scripts share (bash). A run.sh sources it with
# its own arguments: the first, if given, is the folder of the example programs (default:
# build/examples next to this file).
#
#   serve VAR PROGRAM ARGS...   start a server in the background, wait (5 s at most) for its
#                               "listening URI" line and set VAR to the URI. Its output is
#                               kept in $LOGS/VAR.log.
#   run PROGRAM ARGS...         run a client (10 s at most), remember its exit status
#   finish [VAR...]             stop every server (SIGTERM; each must exit 0), print the logs
#                               of the servers named, exit 0 if all went well
#
# Whatever happens, every server started is stopped when the script exits.
#
# RC_VALGRIND=1 in the environment (make test-valgrind) runs every program under valgrind
# memcheck: an error or a definite leak makes it exit with status 97, which fails the script.
set -u
VG=()
WAIT_TICKS=100 CLIENT_SECS=10
if [ -n "${RC_CHECKER:-}" ]; then # a sanitizer build (tests/examples/CMakeLists.txt): slower
	WAIT_TICKS=600 CLIENT_SECS=60
fi
if [ -n "${RC_VALGRIND:-}" ]; then
	VG=(valgrind -q --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite
	    --error-exitcode=97 --suppressions="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/valgrind.supp")
	WAIT_TICKS=600 CLIENT_SECS=60
fi
BIN=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../build/examples}
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/rc-example.XXXXXX")
SERVERS=""
STATUS=0

stop_servers() {
	local s name pid i
	for s in $SERVERS; do kill -TERM "${s#*:}" 2>/dev/null; done
	for s in $SERVERS; do
		name=${s%%:*} pid=${s#*:} i=0
		while kill -0 "$pid" 2>/dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
		if kill -0 "$pid" 2>/dev/null; then
			kill -KILL "$pid" 2>/dev/null
			echo "$name did not stop within 3 s of SIGTERM" >&2
			STATUS=1
		fi
		wait "$pid" || {
			echo "$name exited with status $?:" >&2
			grep -v '^listening ' "$LOGS/$name.log" | tail -40 >&2
			STATUS=1
		}
	done
	SERVERS=""
}
trap 'stop_servers; rm -rf "$LOGS"' EXIT
trap 'exit 1' INT TERM HUP

serve() {
	local var=$1 i=0 pid uri=""
	shift
	if [ ! -x "$1" ]; then
		echo "$1: not built (build first, or give the programs' folder: $0 BUILD/examples)" >&2
		exit 1
	fi
	: >"$LOGS/$var.log" # before the server starts, which is not at once
	"${VG[@]}" "$@" >"$LOGS/$var.log" 2>&1 &
	pid=$!
	SERVERS="$SERVERS $var:$pid"
	while [ -z "$uri" ]; do
		uri=$(awk '/^listening / { print $2; exit }' "$LOGS/$var.log")
		[ -n "$uri" ] && break
		if ! kill -0 "$pid" 2>/dev/null || [ $i -ge $WAIT_TICKS ]; then
			echo "$var ($*) did not start:" >&2
			cat "$LOGS/$var.log" >&2
			exit 1
		fi
		sleep 0.05
		i=$((i + 1))
	done
	printf -v "$var" '%s' "$uri"
}

run() {
	local st=0
	timeout $CLIENT_SECS "${VG[@]}" "$@" || st=$?
	if [ $st -ne 0 ]; then
		echo "${1##*/} exited with status $st" >&2
		STATUS=1
	fi
}

finish() {
	local var
	stop_servers
	for var in "$@"; do
		grep -v '^listening ' "$LOGS/$var.log" | sed "s/^/[$var] /"
	done
	exit $STATUS
}

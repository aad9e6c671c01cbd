# tests/gss/serve_lib.sh -- sourced by tirpc_gss.sh and sun_gss.sh: a temporary folder TMPD
# (removed at exit, with the server), and start_server PROGRAM ARGS..., which runs a server
# that prints "port N" once it listens (or a line PORT_SED, a sed script, finds the port in)
# and sets SRV (its pid) and PORT.
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/rc-gss-serve.XXXXXX")
SRV=
cleanup() {
	[ -n "$SRV" ] && kill "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
	rm -rf "$TMPD"
}
trap cleanup EXIT

start_server() {
	local prog=$1
	shift
	"$prog" "$@" >"$TMPD/srv.out" 2>"$TMPD/srv.err" &
	SRV=$!
	PORT=
	for _ in $(seq 200); do
		PORT=$(sed -n "${PORT_SED:-s/^port \([0-9]*\)$/\1/p}" "$TMPD/srv.out")
		[ -n "$PORT" ] && return 0
		kill -0 "$SRV" 2>/dev/null || break
		sleep 0.05
	done
	echo "FAIL: $prog did not start"; cat "$TMPD/srv.err"
	exit 1
}

# tests/install/common.sh -- sourced by install.sh and deb.sh: counted checks and the
# downstream hello pair. The caller sets TMPD (a scratch folder) and, for a library outside
# the loader's path, LIBDIR; it calls stop_pids from its exit trap.
PIDS=""
FAILS=0
CHECKS=0
fail() { FAILS=$((FAILS + 1)); echo "FAIL $*"; }
ok() { echo "ok   $*"; }
check() { # check DESC CMD...: CMD must succeed (output shown on failure)
	local desc=$1
	shift
	CHECKS=$((CHECKS + 1))
	if "$@" >"$TMPD/out" 2>&1; then ok "$desc"; else fail "$desc"; tail -30 "$TMPD/out" | sed 's/^/    /'; return 1; fi
}
stop_pids() {
	local p
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
}

# run_pair NAME DIR: start DIR/hello-server on port 0, run DIR/hello-client against it
run_pair() {
	local name=$1 dir=$2 out=$TMPD/$1.srv i=0 uri pid
	: >"$out"
	LD_LIBRARY_PATH=${LIBDIR:-} "$dir/hello-server" udp://127.0.0.1:0 >"$out" 2>&1 &
	pid=$!
	PIDS="$PIDS $pid"
	while ! grep -q '^listening ' "$out"; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$pid" 2>/dev/null; then
			CHECKS=$((CHECKS + 1))
			fail "$name: server did not start: $(cat "$out")"
			return
		fi
		sleep 0.05
	done
	uri=$(awk '/^listening /{ print $2; exit }' "$out")
	CHECKS=$((CHECKS + 1))
	if LD_LIBRARY_PATH=${LIBDIR:-} timeout 20 "$dir/hello-client" "$uri" world >"$TMPD/$name.cli" 2>&1 &&
		grep -qx 'hello, world' "$TMPD/$name.cli" && grep -qx '2 + 40 = 42' "$TMPD/$name.cli"; then
		ok "$name: client against server: $(tr '\n' ' ' <"$TMPD/$name.cli")"
	else
		fail "$name: client: $(cat "$TMPD/$name.cli")"
	fi
	kill "$pid"
	wait "$pid" 2>/dev/null
}

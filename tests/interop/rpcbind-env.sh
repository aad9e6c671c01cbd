# tests/interop/rpcbind-env.sh -- a private rpcbind for a test script (bash). Source it first,
# call rpcbind_isolate before anything else, then source lib.sh and call rpcbind_up:
#
#   rpcbind_isolate SCRIPT ARGS...  as root where unshare(1) and ip(8) work: run SCRIPT again
#                                   in network and mount namespaces of its own (its own
#                                   loopback, a tmpfs on /run), so its rpcbind, registrations
#                                   and ports touch nothing of the machine's or of tests
#                                   running beside it. Returns only where that cannot be done.
#   rpcbind_up [ARGS]               use the rpcbind running here, or start one with ARGS
#                                   added to -f -w (root needed):
#                                   sets RPCINFO and RPCBIND_PID (the one started, else empty);
#                                   exits 77 (ctest's skip) with a message when none can run
#   rpcbind_down                    stop the rpcbind rpcbind_up started, if any
rpcbind_isolate() {
	[ -z "${RC_RPCBIND_NS:-}" ] || {
		ip link set lo up && mount -t tmpfs -o mode=0755 rc-rpcbind /run || {
			echo "SKIP: cannot set up the private namespace"
			exit 77
		}
		return 0
	}
	[ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null || return 0
	unshare -n -m sh -c 'ip link set lo up && mount -t tmpfs none /run' 2>/dev/null || return 0
	RC_RPCBIND_NS=1 exec unshare -n -m bash "$@"
}

rpcbind_up() {
	local rpcbind i=0
	rpcbind=$(command -v rpcbind || ls /usr/sbin/rpcbind /sbin/rpcbind 2>/dev/null | head -1)
	RPCINFO=$(command -v rpcinfo || ls /usr/sbin/rpcinfo /sbin/rpcinfo 2>/dev/null | head -1)
	RPCBIND_PID=""
	if [ -z "$RPCINFO" ]; then echo "SKIP: rpcinfo not installed"; exit 77; fi
	if timeout 5 "$RPCINFO" -p 127.0.0.1 >/dev/null 2>&1; then
		echo "     using the rpcbind already running"
		return 0
	fi
	if [ "$(id -u)" != 0 ] || [ -z "$rpcbind" ]; then
		echo "SKIP: no rpcbind running, and cannot start one (need root and rpcbind)"
		exit 77
	fi
	mkdir -p /run/rpcbind 2>/dev/null
	"$rpcbind" -f -w "$@" >"$TMPD/rpcbind.log" 2>&1 &
	RPCBIND_PID=$!
	PIDS="$PIDS $RPCBIND_PID"
	until timeout 2 "$RPCINFO" -p 127.0.0.1 >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 30 ] || ! kill -0 "$RPCBIND_PID" 2>/dev/null; then
			echo "SKIP: rpcbind would not start here:"
			cat "$TMPD/rpcbind.log"
			exit 77
		fi
		sleep 0.1
	done
	echo "     started a private rpcbind (pid $RPCBIND_PID${RC_RPCBIND_NS:+, own network namespace})"
}

rpcbind_down() {
	[ -n "$RPCBIND_PID" ] || return 0
	kill -TERM "$RPCBIND_PID" 2>/dev/null
	wait "$RPCBIND_PID" 2>/dev/null
	echo "     stopped the private rpcbind"
	RPCBIND_PID=""
}

#!/usr/bin/env bash
# tests/runtime/bcast_host.sh PEER PORT PROG ID [RSTAT] -- one server host of broadcast.sh, run
# in the host's network namespace under `unshare -m`: a private rpcbind (a tmpfs on /run;
# -r: it forwards CALLIT, which clnt_broadcast sends) and `PEER serve PORT PROG ID rpcbind`
# registered with it; with RSTAT (a server of rstat.x), that too (rup's program). Prints the
# server's "listening" once everything is registered; SIGTERM stops all of it.
set -u
PEER=$1 PORT=$2 PROG=$3 ID=$4 RSTAT=${5:-}
PIDS=""
trap 'for p in $PIDS; do kill $p 2>/dev/null; done; wait; exit 0' TERM INT
mount -t tmpfs -o mode=0755 rc-bcast /run && mkdir -p /run/rpcbind || exit 1
rpcbind -f -w -r &
PIDS="$!"
i=0
until rpcinfo -p 127.0.0.1 >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -gt 100 ] && { echo "rpcbind did not start"; exit 1; }
	sleep 0.05
done
if [ -n "$RSTAT" ]; then
	"$RSTAT" >/dev/null 2>&1 &
	PIDS="$! $PIDS"
	i=0
	until rpcinfo -p 127.0.0.1 2>/dev/null | grep -q ' 100001 '; do
		i=$((i + 1))
		[ $i -gt 100 ] && { echo "rstat server not registered"; exit 1; }
		sleep 0.05
	done
fi
"$PEER" serve "$PORT" "$PROG" "$ID" rpcbind &
PIDS="$! $PIDS"
wait

#!/usr/bin/env bash
# tests/interop/with-rpcbind.sh [--pmap-only] PROGRAM ARGS... -- run a test program beside a
# private rpcbind (rpcbind-env.sh: its own network namespace where possible), with
# RC_TEST_RPCBIND=1 and, when the rpcbind was started here, RC_TEST_RPCBIND_PID (the program
# may stop it). --pmap-only: rpcbind started with -i and its local socket removed, so a
# server can register only with PMAP version 2 over loopback UDP; RC_TEST_RPCBIND=pmap. Only in
# a private namespace (it would take the machine's rpcbind socket away otherwise).
# Exits with the program's status, or 77 (skip) when no such rpcbind can run.
. "$(dirname "$0")/rpcbind-env.sh"
rpcbind_isolate "$0" "$@"
MODE=1
if [ "${1:-}" = --pmap-only ]; then
	MODE=pmap
	shift
	if [ -z "${RC_RPCBIND_NS:-}" ]; then
		echo "SKIP: --pmap-only needs a private network and mount namespace (root, unshare)"
		exit 77
	fi
fi
BIN=$(dirname "$1")
. "$(dirname "$0")/lib.sh"
if [ $MODE = pmap ]; then
	rpcbind_up -i
	rm -f /run/rpcbind.sock
	echo "     removed rpcbind's local socket: PMAP version 2 over UDP only"
else
	rpcbind_up
fi
RC_TEST_RPCBIND=$MODE RC_TEST_RPCBIND_PID=$RPCBIND_PID vg "$@"
st=$?
rpcbind_down
[ $st -eq 0 ] || exit $st
finish

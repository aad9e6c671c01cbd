#!/usr/bin/env bash
# tests/interop/with-rpcbind.sh PROGRAM ARGS... -- run a test program beside a private rpcbind
# (rpcbind-env.sh: its own network namespace where possible), with RC_TEST_RPCBIND=1 and, when
# the rpcbind was started here, RC_TEST_RPCBIND_PID (the program may stop it). Exits with the
# program's status, or 77 (skip) when no rpcbind can run.
. "$(dirname "$0")/rpcbind-env.sh"
rpcbind_isolate "$0" "$@"
BIN=$(dirname "$1")
. "$(dirname "$0")/lib.sh"
rpcbind_up
RC_TEST_RPCBIND=1 RC_TEST_RPCBIND_PID=$RPCBIND_PID vg "$@"
st=$?
rpcbind_down
[ $st -eq 0 ] || exit $st
finish

#!/usr/bin/env bash
# tests/runtime/layers.sh LIB -- the runtime's layers call downward only. The rpcbind layer
# (runtime/rpcbind.c: rc_client_create's look-up, rc_server_rpcbind) sits above the client and
# the server, so no member of LIB (libremotecall.a) may use a symbol rpcbind.c.o defines but
# rpcbind.c.o itself and the Sun RPC compatibility layer above it (sunrpc.c.o, whose
# clnt_create calls rc_client_create, and sunrpc_svc.c.o, whose pmap_set calls
# rc__rpcb_local_set). Fails naming each member and symbol that breaks this.
set -u
LIB=$1
members() { # members DEFINED|UNDEFINED -> "member symbol" lines
	local opt=--defined-only
	[ "$1" = UNDEFINED ] && opt=-u
	nm -A $opt "$LIB" | awk '{ split($1, p, ":"); t = $(NF - 1); if (t ~ /^[TDBRU]$/) print p[2], $NF }'
}
defs=$(members DEFINED | awk '$1 == "rpcbind.c.o" { print $2 }')
if [ -z "$defs" ]; then
	echo "FAIL: $LIB has no rpcbind.c.o defining symbols"
	exit 1
fi
bad=$(members UNDEFINED | awk -v d="$defs" '
	BEGIN { n = split(d, a, "\n"); for (i = 1; i <= n; i++) s[a[i]] = 1 }
	$1 != "rpcbind.c.o" && $1 != "sunrpc.c.o" && $1 != "sunrpc_svc.c.o" && ($2 in s) { print "     " $1 " uses " $2 }')
if [ -n "$bad" ]; then
	echo "FAIL: calls up into the rpcbind layer:"
	echo "$bad"
	exit 1
fi
echo "ok   nothing below the rpcbind layer calls it ($(echo "$defs" | wc -l) symbols checked)"

#!/usr/bin/env bash
# tests/runtime/layers.sh LIB -- the runtime's layers call downward only. The rpcbind layer
# (runtime/rpcbind.c: rc_client_create's look-up, rc_server_rpcbind) sits above the client and
# the server, so no member of LIB (libremotecall.a) may use a symbol rpcbind.c.o defines but
# rpcbind.c.o itself and the Sun RPC compatibility layer above it (sunrpc.c.o, whose
# clnt_create calls rc_client_create, and sunrpc_svc.c.o, whose pmap_set calls
# rc__rpcb_local_set). Fails naming each member and symbol that breaks this. Then the same
# for the server's layers and the transports' (the layers function below).
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

# layers NAME LIST: LIST names members top to bottom, one layer a line (the members on one line
# do not use each other at all); each may use what members below it define, never what a
# member above it or beside it defines. Fails naming each use that breaks this.
layers() {
	local name=$1 list=$2 bad
	bad=$( { echo "$list" | awk '{ for (i = 1; i <= NF; i++) print "L", $i, NR }'
		 members DEFINED | awk '{ print "D", $1, $2 }'
		 members UNDEFINED | awk '{ print "U", $1, $2 }'; } | awk '
		$1 == "L" { level[$2] = $3; next }
		$1 == "D" { if ($2 in level) owner[$3] = $2; next }
		$1 == "U" && ($2 in level) && ($3 in owner) && owner[$3] != $2 &&
		    level[owner[$3]] <= level[$2] { print "     " $2 " uses " $3 " of " owner[$3] }')
	if [ -n "$bad" ]; then
		echo "FAIL: $name are called sideways or up:"
		echo "$bad"
		exit 1
	fi
	echo "ok   $name call downward only ($(echo "$list" | wc -w) files)"
}

# The server's own layers (docs/design.md, "Layers"; runtime/server_priv.h).
layers "the server's layers" "server.c.o connctl.c.o
conn.c.o dgram.c.o direct.c.o
connlife.c.o live.c.o
backchan.c.o
serve.c.o
stats.c.o
dispatch.c.o
defer.c.o
auth_reg.c.o
auth_gss.c.o
auth.c.o
reply.c.o
drc.c.o
reqhandle.c.o"

# The client's: making an RPCSEC_GSS context takes calls, so it sits above the client; the
# flavors, below it, never call it.
layers "the client's layers" "auth_gss_cl.c.o backchan.c.o
client.c.o
auth_reg.c.o
auth_gss.c.o
auth.c.o"

# The transports (transports/transport.h): the table, URI parsing and socket adoption on top;
# then each transport; TLS, a byte layer under the stream transport; a URI query's key table
# (TLS reads a client's keys through it); the socket helpers.
layers "the transports' layers" "transports.c.o
stream.c.o udp.c.o inproc.c.o bcast.c.o
tls.c.o
uriquery.c.o
sock.c.o"

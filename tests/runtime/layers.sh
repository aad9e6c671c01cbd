#!/usr/bin/env bash
# tests/runtime/layers.sh LIB -- the library's layers call downward only (docs/design.md,
# "Layers"): one ordered list of the members of LIB (libremotecall.a), the runtime's folders
# and the transports together, top to bottom; each may use what members below it define,
# never what a member above it or beside it defines, so a circle anywhere fails. Then the
# client and the server, which the list must place one above the other, are checked apart:
# neither uses what the other defines (the back channel, above both, joins them). Fails
# naming each member and symbol that breaks this.
set -u
LIB=$1
members() { # members DEFINED|UNDEFINED -> "member symbol" lines
	local opt=--defined-only
	[ "$1" = UNDEFINED ] && opt=-u
	nm -A $opt "$LIB" | awk '{ split($1, p, ":"); t = $(NF - 1); if (t ~ /^[TDBRU]$/) print p[2], $NF }'
}
if ! members DEFINED | grep -q '^rpcbind\.c\.o '; then
	echo "FAIL: $LIB has no rpcbind.c.o defining symbols"
	exit 1
fi

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
	# every member of LIB but xdr/'s is in the list: a new file takes its place in a layer
	bad=$(nm -A --defined-only "$LIB" 2>/dev/null | awk -F: '{ print $2 }' | sort -u |
		grep -v '^xdr_' | grep -vxF -f <(echo "$list" | tr ' ' '\n'))
	if [ -n "$bad" ]; then
		echo "FAIL: $name: members in no layer (add them to the list):"
		echo "$bad" | sed 's/^/     /'
		exit 1
	fi
	echo "ok   $name call downward only ($(echo "$list" | wc -w) files)"
}

# Folder by folder, top down: sun/, rpcbind/, backchan/ (the connection hook and a handle's
# controls, with the client's RPCSEC_GSS context making, which takes calls; then the back
# channels and handles), client/ (multi-calls; started and blocking calls; the object; the
# engine; the peer's calls; what all of it uses), server/ (its loop, and its limits changed
# while serving; draining; PROXY headers; admission; TLS swapped live; listener kinds; serve
# step; counters; dispatch table and its RPCSEC_GSS contexts; requests; the reply path; the
# cache; request handles), auth/ (the registry; the flavors, which answer a call through the
# encoders the serve step hands them and call nothing of server/; the GSS core: the
# contexts, the acceptor's keytab credential, what both sides share), core/, then
# transports/ (the table and URI parsing; QUIC -- its transports, its endpoint, its sessions,
# its pipes and streams -- above the stream transport it borrows from;
# each transport; QUIC's helpers; TLS's connections above its contexts; the PROXY header
# parser; the URI query keys; the socket helpers).
layers "the library's layers" "sunrpc_gss.c.o
sunrpc.c.o
sunrpc_svc.c.o
rpcbind.c.o broadcast.c.o
connctl.c.o connlife.c.o client_serve.c.o auth_gss_cl.c.o
backchan.c.o
multi.c.o
async.c.o fast.c.o
client.c.o
engine.c.o
inbound.c.o
common.c.o
server.c.o limits.c.o
drain.c.o
proxy.c.o
accept.c.o
live.c.o
conn.c.o dgram.c.o direct.c.o
serve.c.o
stats.c.o
dispatch.c.o rpcsec_gss.c.o
defer.c.o
reply.c.o
drc.c.o
reqhandle.c.o
auth_reg.c.o
auth_gss.c.o
auth.c.o
gss_client.c.o gss_svc.c.o
gss_acceptor.c.o
gss_common.c.o
gss_krb5.c.o gss_xdr.c.o
msg.c.o trace.c.o
status.c.o
transports.c.o
quic.c.o
quic_ep.c.o
quic_tls.c.o
quic_stream.c.o
stream.c.o udp.c.o inproc.c.o bcast.c.o
quic_msg.c.o quic_ngtcp2.c.o
tls.c.o
tls_ctx.c.o
proxy_v2.c.o
uri.c.o
sock.c.o"

# apart NAME A B: no member of the list A uses what a member of B defines, nor B of A.
apart() {
	local name=$1 a=$2 b=$3 bad
	bad=$( { echo "$a" | awk '{ for (i = 1; i <= NF; i++) print "L", $i, "A" }'
		 echo "$b" | awk '{ for (i = 1; i <= NF; i++) print "L", $i, "B" }'
		 members DEFINED | awk '{ print "D", $1, $2 }'
		 members UNDEFINED | awk '{ print "U", $1, $2 }'; } | awk '
		$1 == "L" { side[$2] = $3; next }
		$1 == "D" { if ($2 in side) owner[$3] = $2; next }
		$1 == "U" && ($2 in side) && ($3 in owner) && side[owner[$3]] != side[$2] {
		    print "     " $2 " uses " $3 " of " owner[$3] }')
	if [ -n "$bad" ]; then
		echo "FAIL: $name know each other:"
		echo "$bad"
		exit 1
	fi
	echo "ok   $name know nothing of each other"
}

apart "the client and the server" "multi.c.o async.c.o fast.c.o client.c.o engine.c.o
inbound.c.o common.c.o" "server.c.o drain.c.o proxy.c.o accept.c.o live.c.o
conn.c.o dgram.c.o direct.c.o serve.c.o stats.c.o dispatch.c.o rpcsec_gss.c.o defer.c.o reply.c.o
drc.c.o reqhandle.c.o"

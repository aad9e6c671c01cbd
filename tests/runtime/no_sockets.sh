#!/usr/bin/env bash
# tests/runtime/no_sockets.sh SRCDIR -- the client and the server's pieces own no bytes: they
# never call send/recv (or their variants) on a socket, write a record mark or read a
# transport's descriptor; only transports/ does (docs/design.md, "The transport interface").
# Fails naming each line that breaks this.
set -u
cd "$1/runtime" || exit 1
pat='((^|[^>a-z_.])(send|sendto|sendmsg|sendmmsg|recv|recvfrom|recvmsg|recvmmsg|writev|readv|rc__sendto|rc__recvfrom|shutdown|ioctl|setsockopt|getsockopt)\s*\()|->fd\b|RC_XDRREC_LAST_FRAG'
bad=$(grep -nE "$pat" client.c server.c dispatch.c serve.c conn.c jobs.c multi.c | grep -vE '^\S+:[0-9]+:\s*(/\*|\*)')
if [ -n "$bad" ]; then
	echo "FAIL: socket or framing work outside transports/:"
	echo "$bad"
	exit 1
fi
echo "ok   client.c, multi.c and the server's files leave sockets and framing to transports/"

#!/usr/bin/env bash
# tests/nfs41/ganesha.sh PROGRAM -- start a throw-away nfs-ganesha on loopback and run
# PROGRAM (nfs41_ganesha) against it: PROGRAM PORT. Then check the file PROGRAM wrote through
# NFS is in the export with its bytes, and stop ganesha, whatever happened (trap), checking
# it is gone.
#
# ganesha: VFS export of a temporary folder at /export, NFSv4 only (minor versions 0 and 1),
# on 127.0.0.1 at a free port, NLM, RQUOTA and UDP off, no grace period, delegations on
# (NFSV4 { Delegations }: ganesha probes a v4.0 client's callback with CB_NULL only then), its
# pid file, log, recovery and credential cache folders in the temporary folder (Kerberos off:
# nothing is written outside it). As root where unshare(1) and ip(8) work, it all runs in
# network and mount namespaces of its own (tests/interop/rpcbind-env.sh), so ganesha's rpcbind
# (un)registrations reach no rpcbind of the machine's. Every step is bounded in time.
#
# Exits 77 (ctest's skip) when ganesha cannot run at all: not root, no CAP_DAC_READ_SEARCH
# (its VFS FSAL opens files by handle; without it OPEN fails with NFS4ERR_PERM), ganesha.nfsd
# or its VFS FSAL not installed (Debian: nfs-ganesha nfs-ganesha-vfs). RC_VALGRIND=1 runs
# PROGRAM under valgrind memcheck (make test-valgrind).
set -u
PROG=${1:?usage: ganesha.sh PROGRAM}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

[ "$(id -u)" = 0 ] || { echo "SKIP: ganesha.nfsd needs root (it serves files as their owners)"; exit 77; }
GANESHA=$(command -v ganesha.nfsd || ls /usr/bin/ganesha.nfsd /usr/sbin/ganesha.nfsd 2>/dev/null | head -1)
[ -n "$GANESHA" ] || { echo "SKIP: ganesha.nfsd not installed (Debian: nfs-ganesha)"; exit 77; }
compgen -G '/usr/lib*/ganesha/libfsalvfs.so' >/dev/null ||
	compgen -G '/usr/lib/*/ganesha/libfsalvfs.so' >/dev/null ||
	{ echo "SKIP: ganesha's VFS FSAL not installed (Debian: nfs-ganesha-vfs)"; exit 77; }

# The VFS FSAL opens files by handle (open_by_handle_at): CAP_DAC_READ_SEARCH, which a
# container may withhold from root.
capeff=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status 2>/dev/null)
[ -z "$capeff" ] || (( (16#$capeff >> 2) & 1 )) ||
	{ echo "SKIP: no CAP_DAC_READ_SEARCH here, which ganesha's VFS FSAL needs (open_by_handle_at)"; exit 77; }

# shellcheck source=../interop/rpcbind-env.sh
. "$HERE/../interop/rpcbind-env.sh"
rpcbind_isolate "$0" "$@"

TMPD=$(mktemp -d "${TMPDIR:-/tmp}/rc-nfs41.XXXXXX")
GPID=""
stop_ganesha() {
	[ -n "$GPID" ] || return 0
	kill -TERM "$GPID" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$GPID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$GPID" 2>/dev/null
	wait "$GPID" 2>/dev/null
	GPID=""
}
trap 'stop_ganesha; rm -rf "$TMPD"' EXIT

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null)
[ -n "$PORT" ] || PORT=$((20000 + RANDOM % 20000))
mkdir -p "$TMPD/export" "$TMPD/recovery"
# In its own network namespace (loopback alone) ganesha listens on every address: it resolves
# Bind_addr with AI_ADDRCONFIG, which fails where no other interface has an address.
BIND="	Bind_addr = 127.0.0.1;"
[ -n "${RC_RPCBIND_NS:-}" ] && BIND=""
cat >"$TMPD/ganesha.conf" <<CONF
NFS_CORE_PARAM {
	NFS_Port = $PORT;
$BIND
	NFS_Protocols = 4;
	Enable_NLM = false;
	Enable_RQUOTA = false;
	Enable_UDP = false;
}
NFS_KRB5 {
	Active_krb5 = false;
	CCacheDir = "$TMPD/ccache";
}
NFSV4 {
	Graceless = true;
	Lease_Lifetime = 15;
	Delegations = true;
	Minor_Versions = 0, 1;
	RecoveryRoot = "$TMPD/recovery";
}
EXPORT {
	Export_Id = 1;
	Path = "$TMPD/export";
	Pseudo = /export;
	Access_Type = RW;
	Squash = No_Root_Squash;
	Protocols = 4;
	Transports = TCP;
	SecType = sys;
	Delegations = RW;
	FSAL { Name = VFS; }
}
LOG { Default_Log_Level = EVENT; }
CONF

# -F: in the foreground, our child; the outer timeout bounds it should everything else fail.
timeout -k 5 120 "$GANESHA" -F -f "$TMPD/ganesha.conf" -L "$TMPD/ganesha.log" \
	-p "$TMPD/ganesha.pid" -N NIV_EVENT >"$TMPD/ganesha.out" 2>&1 &
GPID=$!
for _ in $(seq 200); do
	grep -q "NFS SERVER INITIALIZED" "$TMPD/ganesha.log" 2>/dev/null && break
	kill -0 "$GPID" 2>/dev/null || break
	sleep 0.1
done
if ! grep -q "NFS SERVER INITIALIZED" "$TMPD/ganesha.log" 2>/dev/null; then
	echo "FAIL: ganesha did not start within 20 s"
	tail -n 30 "$TMPD/ganesha.log" "$TMPD/ganesha.out" 2>/dev/null
	exit 1
fi
echo "     $(grep -o 'Ganesha Version [0-9.]*' "$TMPD/ganesha.log" | head -1) on" \
	"tcp://127.0.0.1:$PORT${RC_RPCBIND_NS:+ (own network namespace)}, export $TMPD/export"

VG=()
[ -n "${RC_VALGRIND:-}" ] && VG=(valgrind -q --error-exitcode=97 --leak-check=full
	--errors-for-leak-kinds=definite --suppressions="$HERE/../valgrind.supp")
FAIL=0
# PROGRAM waits (20 s, 60 under valgrind) for ganesha to answer NULL
timeout 150 "${VG[@]}" "$PROG" "$PORT"
st=$?
[ $st -eq 0 ] || { echo "FAIL: ${PROG##*/} exited $st"; FAIL=1; }

want="written by remotecall over NFSv4.1"
got=$(cat "$TMPD/export/rc-nfs41-probe" 2>/dev/null)
if [ "$got" = "$want" ]; then
	echo "ok   the export holds the file written through NFS, with its bytes"
else
	echo "FAIL: $TMPD/export/rc-nfs41-probe holds \"$got\", not \"$want\""; FAIL=1
fi

kill -0 "$GPID" 2>/dev/null || { echo "FAIL: ganesha died during the test"; FAIL=1; }
pid=$(cat "$TMPD/ganesha.pid" 2>/dev/null)
stop_ganesha
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
	echo "FAIL: ganesha (pid $pid) still runs after it was stopped"; FAIL=1
	kill -KILL "$pid" 2>/dev/null
fi
if [ $FAIL -ne 0 ]; then
	echo "---- ganesha's log"
	tail -n 60 "$TMPD/ganesha.log" "$TMPD/ganesha.out" 2>/dev/null
fi
[ $FAIL -eq 0 ] && echo "ok   ganesha stopped"
exit $FAIL

#!/bin/bash
# bench/gss_ab.sh [BUILD] -- a quick pinned A/B of RPCSEC_GSS costs in one throw-away realm:
# null calls plain / krb5i / krb5i with MIT making every token (RC_GSS_NO_LUCID=1) / krb5p /
# libtirpc's krb5i, and 1 MiB echoes plain / krb5p / krb5p with MIT per message; servers and
# clients all on core 1, T interleaved trials of N calls (env T, N). Prints "row us" lines;
# the medians are what to quote. bench/run.sh --only gss is the reference run.
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$ROOT/build}; TB=$B/tests/gss; N=${N:-20000}; T=${T:-9}
W=$(mktemp -d "${TMPDIR:-/tmp}/gss-ab.XXXXXX")
. "$ROOT/tests/gss/krb5_fixture.sh"
krb5_fixture_start || exit 1
start() { # env... -> uri
	local f=$(mktemp $W/srv.XXXX)
	env "$@" taskset -c 1 $B/bench/rc-bench-server --listen tcp://127.0.0.1:0 --gss-principal rcbench@localhost >$f 2>&1 &
	echo $! >>$W/pids
	for i in $(seq 100); do grep -q '^listening' $f && break; sleep 0.05; done
	awk '/^listening /{print $2; exit}' $f
}
rm -f $W/pids
U1=$(start RC_GSS_NO_LUCID=0)
U2=$(start RC_GSS_NO_LUCID=1)
taskset -c 1 $TB/tirpc_gss_server --name rcbench@localhost >$W/tgs.out 2>&1 & P3=$!
for i in $(seq 100); do grep -q '^port ' $W/tgs.out && break; sleep 0.05; done
TP=$(sed -n 's/^port \([0-9]*\)$/\1/p' $W/tgs.out)
us() { "$@" --json | python3 -c 'import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])["us_per_call"])'; }
for t in $(seq $T); do
	echo "plain $(us taskset -c 1 $B/bench/rc-bench-client --uri $U1 --proc null --calls $N)"
	echo "krb5i $(us taskset -c 1 $B/bench/rc-bench-client --uri $U1 --proc null --calls $N --gss integrity)"
	echo "krb5i-mit $(RC_GSS_NO_LUCID=1 us taskset -c 1 $B/bench/rc-bench-client --uri $U2 --proc null --calls $N --gss integrity)"
	echo "krb5p $(us taskset -c 1 $B/bench/rc-bench-client --uri $U1 --proc null --calls $N --gss privacy)"
	echo "tirpc-krb5i $(taskset -c 1 $TB/tirpc_gss_client --port $TP --name rcbench@localhost --service integrity --calls $N | awk '/us_per_call/{print $NF}')"
	echo "echo-plain $(us taskset -c 1 $B/bench/rc-bench-client --uri $U1 --proc echo --size 1048576 --calls 30)"
	echo "echo-krb5p $(us taskset -c 1 $B/bench/rc-bench-client --uri $U1 --proc echo --size 1048576 --calls 30 --gss privacy)"
	echo "echo-krb5p-mit $(RC_GSS_NO_LUCID=1 us taskset -c 1 $B/bench/rc-bench-client --uri $U2 --proc echo --size 1048576 --calls 30 --gss privacy)"
done
kill $(cat $W/pids) $P3 || true
wait $(cat $W/pids) $P3 || true  # not the KDC: the fixture stops it
rm -rf "$W"
krb5_fixture_stop

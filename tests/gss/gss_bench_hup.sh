#!/usr/bin/env bash
# tests/gss/gss_bench_hup.sh BENCHDIR -- rc-bench-server --gss-principal reloads its keytab on
# SIGHUP (rc_server_set_gss a second time), inside krb5_fixture.sh's realm: the service key of
# rcbench/localhost is rotated into the server's keytab (KRB5_KTNAME) and a SIGHUP says
# "reloaded keytab"; a client holding a fresh ticket (the new kvno) is then served; a keytab
# that has gone makes the SIGHUP say "reload failed" while the server goes on serving.
set -u
B=${1:?usage: gss_bench_hup.sh BENCHDIR}
. "$(dirname "$0")/serve_lib.sh"
[ -n "${RC_KRB5_DIR:-}" ] || { echo "SKIP: run under krb5_fixture.sh"; exit 77; }
export PATH=$PATH:/usr/sbin:/sbin
kt=$TMPD/bench.keytab
cp "$RC_KRB5_DIR/keytab" "$kt"
export KRB5_KTNAME=FILE:$kt

PORT_SED='s|^listening tcp://127.0.0.1:\([0-9]*\)$|\1|p'
start_server "$B/rc-bench-server" --listen tcp://127.0.0.1:0 --gss-principal rcbench@localhost
u=tcp://127.0.0.1:$PORT
calls() { # a few krb5i null calls on a new client (a new context)
	"$B/rc-bench-client" --uri "$u" --proc null --calls 20 --warmup 1 --gss integrity \
		--gss-service rcbench@localhost >/dev/null 2>>"$TMPD/cli.err"
}
hups() { grep -c "$1" "$TMPD/srv.err"; }
hup_until() { # PATTERN COUNT: send SIGHUP, wait (5 s) for the COUNTth PATTERN line
	kill -HUP "$SRV"
	for _ in $(seq 100); do
		[ "$(hups "$1")" -ge "$2" ] && return 0
		sleep 0.05
	done
	echo "FAIL: no '$1' line after SIGHUP"; cat "$TMPD/srv.err"; exit 1
}

calls || { echo "FAIL: krb5i calls before the rotation"; cat "$TMPD/cli.err"; exit 1; }
hup_until "reloaded keytab" 1
# a new key, a new kvno, into the server's keytab; tickets without the old service ticket
kadmin.local -r RC.TEST -q "ktadd -k $kt rcbench/localhost" >/dev/null 2>&1 ||
	{ echo "FAIL: kadmin.local ktadd"; exit 1; }
kinit -k -t "$RC_KRB5_USER_KEYTAB" rcuser >/dev/null 2>&1 || { echo "FAIL: kinit"; exit 1; }
hup_until "reloaded keytab" 2
calls || { echo "FAIL: krb5i calls with the new key"; cat "$TMPD/cli.err"; exit 1; }
# the keytab gone: the reload fails and says so; the server keeps serving
mv "$kt" "$kt.away"
hup_until "reload failed" 1
mv "$kt.away" "$kt"
calls || { echo "FAIL: krb5i calls after a failed reload"; cat "$TMPD/cli.err"; exit 1; }
kill -TERM "$SRV"
wait "$SRV"
st=$?
SRV=
[ $st -eq 0 ] || { echo "FAIL: rc-bench-server exited $st"; cat "$TMPD/srv.err"; exit 1; }
grep -E "reload" "$TMPD/srv.err"
echo "PASS: keytab reloaded on SIGHUP"

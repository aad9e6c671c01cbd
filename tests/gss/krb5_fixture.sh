#!/usr/bin/env bash
# tests/gss/krb5_fixture.sh -- a throw-away MIT Kerberos realm on 127.0.0.1 for the RPCSEC_GSS
# tests, in a temporary folder, touching nothing in /etc (as MIT's k5test does).
#
# Two ways to use it:
#   tests/gss/krb5_fixture.sh run CMD [ARGS...]
#       start the realm, run CMD with the environment below, stop the realm (always), exit
#       with CMD's status -- or 77 (ctest's SKIP_RETURN_CODE) with a message on stderr when the
#       KDC cannot be started here (no krb5kdc/kdb5_util/kadmin.local/kinit, no port).
#   . tests/gss/krb5_fixture.sh; krb5_fixture_start || exit 77; ...; krb5_fixture_stop
#       from another script (start installs an EXIT trap that stops it; a caller that sets its
#       own EXIT trap calls krb5_fixture_stop there).
#
# What it makes (realm RC.TEST; krb5kdc -n on a free port, UDP and TCP):
#   service principals nfs/localhost, rcbench/localhost, host/localhost (random keys) in the
#   keytab $KRB5_KTNAME -- so host-based names nfs@localhost, rcbench@localhost resolve to
#   them (dns_canonicalize_hostname = false, rdns = false: localhost stays localhost);
#   the user rcuser@RC.TEST with password $RC_KRB5_PASSWORD, its keys also in
#   $RC_KRB5_USER_KEYTAB, and a ticket for it in $KRB5CCNAME (kinit).
# Environment exported: KRB5_CONFIG KRB5_KDC_PROFILE KRB5_KTNAME KRB5CCNAME KRB5RCACHEDIR
#   RC_KRB5_DIR RC_KRB5_REALM RC_KRB5_USER RC_KRB5_PASSWORD RC_KRB5_USER_KEYTAB RC_KRB5_PORT
#   RC_KRB5_KDC_PID. Set RC_KRB5_TRACE=1 to get KRB5_TRACE=$RC_KRB5_DIR/trace.log.

krb5_fixture__find() { # NAME: its path, also from /usr/sbin for a normal user
	PATH=$PATH:/usr/sbin:/sbin:/usr/local/sbin command -v "$1"
}

# A port no one listens on, TCP and UDP (bound and released; a race with another process is
# caught by the KDC failing to start, and start tries again with another).
krb5_fixture__port() {
	python3 - <<'PY' 2>/dev/null || echo $((20000 + RANDOM % 40000))
import socket
for _ in range(50):
    t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    t.bind(("127.0.0.1", 0))
    p = t.getsockname()[1]
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        u.bind(("127.0.0.1", p))
    except OSError:
        t.close(); continue
    t.close(); u.close(); print(p); break
PY
}

krb5_fixture_stop() {
	if [ -n "${RC_KRB5_KDC_PID:-}" ]; then
		kill "$RC_KRB5_KDC_PID" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$RC_KRB5_KDC_PID" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$RC_KRB5_KDC_PID" 2>/dev/null
		wait "$RC_KRB5_KDC_PID" 2>/dev/null
		RC_KRB5_KDC_PID=
	fi
	if [ -n "${RC_KRB5_DIR:-}" ] && [ -d "$RC_KRB5_DIR" ] && [ -z "${RC_KRB5_KEEP:-}" ]; then
		rm -rf "$RC_KRB5_DIR"
	fi
	RC_KRB5_DIR=
}

krb5_fixture__skip() {
	echo "krb5_fixture: SKIP: $*" >&2
	krb5_fixture_stop
	return 77
}

krb5_fixture_start() {
	local kdc kdb kadm kinit_ d port i ok=0
	kdc=$(krb5_fixture__find krb5kdc) || { krb5_fixture__skip "no krb5kdc (Debian krb5-kdc)"; return; }
	kdb=$(krb5_fixture__find kdb5_util) || { krb5_fixture__skip "no kdb5_util (krb5-kdc)"; return; }
	kadm=$(krb5_fixture__find kadmin.local) || { krb5_fixture__skip "no kadmin.local (krb5-admin-server)"; return; }
	kinit_=$(krb5_fixture__find kinit) || { krb5_fixture__skip "no kinit (krb5-user)"; return; }
	d=$(mktemp -d "${TMPDIR:-/tmp}/rc-krb5.XXXXXX") || { krb5_fixture__skip "no temporary folder"; return; }
	export RC_KRB5_DIR=$d RC_KRB5_REALM=RC.TEST RC_KRB5_USER=rcuser
	export RC_KRB5_PASSWORD=rc-user-pw-$RANDOM RC_KRB5_USER_KEYTAB=$d/user.keytab
	export KRB5_CONFIG=$d/krb5.conf KRB5_KDC_PROFILE=$d/kdc.conf KRB5_KTNAME=FILE:$d/keytab
	export KRB5CCNAME=FILE:$d/ccache KRB5RCACHEDIR=$d
	[ -n "${RC_KRB5_TRACE:-}" ] && export KRB5_TRACE=$d/trace.log
	trap krb5_fixture_stop EXIT
	for i in 1 2 3 4 5; do
		port=$(krb5_fixture__port)
		cat >"$KRB5_CONFIG" <<CONF
[libdefaults]
	default_realm = RC.TEST
	dns_lookup_kdc = false
	dns_lookup_realm = false
	dns_canonicalize_hostname = false
	rdns = false
	ignore_acceptor_hostname = false
	forwardable = false
	ticket_lifetime = 10h
	default_ccache_name = FILE:$d/ccache
	default_keytab_name = FILE:$d/keytab
[realms]
	RC.TEST = {
		kdc = 127.0.0.1:$port
		admin_server = 127.0.0.1:$((port + 1))
	}
[domain_realm]
	localhost = RC.TEST
	.localhost = RC.TEST
[logging]
	default = FILE:$d/krb5.log
CONF
		cat >"$KRB5_KDC_PROFILE" <<CONF
[kdcdefaults]
	kdc_ports = $port
	kdc_tcp_ports = $port
[realms]
	RC.TEST = {
		database_name = $d/principal
		key_stash_file = $d/stash
		acl_file = $d/kadm5.acl
		max_life = 10h
		max_renewable_life = 0
		supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal aes256-cts-hmac-sha384-192:normal aes128-cts-hmac-sha256-128:normal
	}
[logging]
	kdc = FILE:$d/kdc.log
	admin_server = FILE:$d/kadmin.log
CONF
		: >"$d/kadm5.acl"
		if [ ! -e "$d/principal" ]; then
			"$kdb" -r RC.TEST create -s -P "master-$RANDOM$RANDOM" >"$d/setup.log" 2>&1 || {
				cat "$d/setup.log" >&2; krb5_fixture__skip "kdb5_util create failed"; return; }
			{
				for p in nfs/localhost rcbench/localhost host/localhost; do
					echo "addprinc -randkey $p"
				done
				echo "ktadd -k $d/keytab nfs/localhost rcbench/localhost host/localhost"
				echo "addprinc -pw $RC_KRB5_PASSWORD rcuser"
				echo "ktadd -norandkey -k $d/user.keytab rcuser"
			} | "$kadm" -r RC.TEST >>"$d/setup.log" 2>&1 || {
				cat "$d/setup.log" >&2; krb5_fixture__skip "kadmin.local failed"; return; }
		fi
		# the KDC dies with this shell even when it is killed outright (setpriv --pdeathsig,
		# util-linux), so a test that times out leaves no KDC behind
		local pds=()
		setpriv --help 2>/dev/null | grep -q pdeathsig && pds=(setpriv --pdeathsig TERM)
		"${pds[@]}" "$kdc" -n -r RC.TEST >>"$d/kdc.out" 2>&1 &
		RC_KRB5_KDC_PID=$!
		export RC_KRB5_KDC_PID RC_KRB5_PORT=$port
		# ready when kinit gets a ticket (200 x 50 ms)
		for _ in $(seq 200); do
			kill -0 "$RC_KRB5_KDC_PID" 2>/dev/null || break
			if "$kinit_" -k -t "$RC_KRB5_USER_KEYTAB" rcuser >>"$d/kinit.log" 2>&1; then
				ok=1
				break
			fi
			sleep 0.05
		done
		[ $ok -eq 1 ] && break
		kill "$RC_KRB5_KDC_PID" 2>/dev/null
		wait "$RC_KRB5_KDC_PID" 2>/dev/null
		RC_KRB5_KDC_PID=
	done
	if [ $ok -ne 1 ]; then
		cat "$d/kdc.out" "$d/kdc.log" "$d/kinit.log" >&2 2>/dev/null
		krb5_fixture__skip "the KDC did not start (5 ports tried)"
		return
	fi
	# the password works too (kinit reads it from stdin when that is not a terminal)
	"$kinit_" rcuser <<<"$RC_KRB5_PASSWORD" >>"$d/kinit.log" 2>&1 ||
		"$kinit_" -k -t "$RC_KRB5_USER_KEYTAB" rcuser >>"$d/kinit.log" 2>&1
	return 0
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	case "${1:-}" in
	run)
		shift
		[ $# -ge 1 ] || { echo "usage: $0 run CMD [ARGS...]" >&2; exit 2; }
		krb5_fixture_start || exit $?
		# make test-valgrind (RC_VALGRIND=1): a program of ours named by a path runs under
		# valgrind memcheck (not the libtirpc peers)
		if [ -n "${RC_VALGRIND:-}" ] && [[ $1 == */* ]] && [[ ${1##*/} != *tirpc* ]]; then
			supp=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/valgrind.supp
			set -- valgrind -q --leak-check=full --show-leak-kinds=definite \
				--errors-for-leak-kinds=definite --error-exitcode=97 \
				--suppressions="$supp" "$@"
		fi
		# in the background so that a TERM (ctest's timeout) runs the traps at once
		"$@" &
		child=$!
		trap 'kill $child 2>/dev/null; exit 143' TERM INT HUP
		wait $child
		st=$?
		krb5_fixture_stop
		exit $st
		;;
	*)
		echo "usage: $0 run CMD [ARGS...]   (or source it: krb5_fixture_start / krb5_fixture_stop)" >&2
		exit 2
		;;
	esac
fi

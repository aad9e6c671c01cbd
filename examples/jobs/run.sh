#!/usr/bin/env bash
# examples/jobs/run.sh [BIN] [JOBS] [MODE...] -- JOBS pipelined jobs (default 1000) through
# jobs-server's four workers, each called back on the client's own connection, over each MODE:
#   tcp unix tls   (the default: all three; tls makes a throw-away CA and certificate with
#                   openssl, tests/runtime/tls_certs.sh)
#   krb5i          RPCSEC_GSS with integrity as host@localhost: run it inside a Kerberos realm,
#                  tests/gss/krb5_fixture.sh run examples/jobs/run.sh BIN 1000 krb5i
# Every limit is the library's default. The client gives up, saying what was missing, after
# 5 s (JOBS_DEADLINE_MS; 5 s less than lib.sh's client time under valgrind).
. "$(dirname "$0")/../lib.sh" "${1:-}"
JOBS=${2:-1000}
shift $(($# > 2 ? 2 : $#))
MODES=${*:-tcp unix tls}
DEADLINE_MS=${JOBS_DEADLINE_MS:-$((CLIENT_SECS > 10 ? (CLIENT_SECS - 5) * 1000 : 5000))}
for mode in $MODES; do
	extra=() query=""
	case $mode in
	tcp) serve tcp "$BIN/jobs-server" ;;
	unix) serve unix "$BIN/jobs-server" --listen "unix:${TMPDIR:-/tmp}/rc-jobs-$$.sock" ;;
	tls)
		certs=$LOGS/certs
		bash "$(dirname "$0")/../../tests/runtime/tls_certs.sh" "$certs" || exit 1
		serve tls "$BIN/jobs-server" --tls-cert "$certs/server.pem" --tls-key "$certs/server.key"
		query="?tls=required&ca=$certs/ca.pem"
		;;
	krb5i)
		if [ -z "${KRB5_KTNAME:-}" ]; then
			echo "krb5i needs a Kerberos realm: tests/gss/krb5_fixture.sh run $0 ..." >&2
			exit 1
		fi
		serve krb5i "$BIN/jobs-server" --gss-principal host@localhost
		extra=(--gss host@localhost)
		;;
	*)
		echo "unknown mode '$mode' (tcp unix tls krb5i)" >&2
		exit 2
		;;
	esac
	echo "$mode:"
	run "$BIN/jobs" "${!mode}$query" --jobs "$JOBS" --deadline-ms "$DEADLINE_MS" "${extra[@]}"
done
finish $MODES

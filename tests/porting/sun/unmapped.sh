#!/usr/bin/env bash
# tests/porting/sun/unmapped.sh CC INCLUDE-DIRS... -- a Sun name remotecall does not map is a
# compile error naming what to use instead: each snippet below must fail to compile with its
# message, and a control snippet using mapped names must compile (so the failures are not a
# broken include path).
set -u
CC=${1:?usage: unmapped.sh CC INCLUDE-DIRS...}
shift
INC=()
for d in "$@"; do INC+=("-I$d"); done
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/rc-unmapped.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT
FAILS=0
CHECKS=0
compile() { # compile NAME BODY -> status; stderr in $TMPD/NAME.err
	printf '#include <rpc/rpc.h>\n#include <rpc/pmap_clnt.h>\n#include <rpc/auth_gss.h>\nint main(void)\n{\n%s\nreturn 0;\n}\n' \
		"$2" >"$TMPD/$1.c"
	"$CC" -c -o "$TMPD/$1.o" "${INC[@]}" "$TMPD/$1.c" 2>"$TMPD/$1.err"
}
refused() { # refused NAME BODY MESSAGE
	CHECKS=$((CHECKS + 1))
	if compile "$1" "$2"; then
		FAILS=$((FAILS + 1))
		echo "FAIL $1 compiled"
	elif grep -qF "$3" "$TMPD/$1.err"; then
		echo "ok   $1: $(grep -m1 -F "$3" "$TMPD/$1.err" | sed 's/.*error: //' | cut -c1-110)"
	else
		FAILS=$((FAILS + 1))
		echo "FAIL $1: $(head -3 "$TMPD/$1.err")"
	fi
}
CHECKS=$((CHECKS + 1))
if compile control 'SVCXPRT *x = svcudp_create(RPC_ANYSOCK); (void)x; pmap_unset(1, 1);
	AUTH *a = authsys_create_default(); auth_destroy(a); x = svcfd_create(0, 0, 0);
	(void)clnt_broadcast(1, 1, 1, (xdrproc_t)xdr_void, 0, (xdrproc_t)xdr_void, 0, 0);
	struct rpc_createerr_check { int x; }; (void)clnt_spcreateerror("x");'; then
	echo "ok   control: mapped names compile"
else
	FAILS=$((FAILS + 1))
	echo "FAIL control: $(head -3 "$TMPD/control.err")"
fi
refused authdes 'AUTH *a = authdes_seccreate("n", 60, "h", 0); (void)a;' "AUTH_DES"
refused authgss_private 'struct authgss_private_data *pd = 0; (void)authgss_get_private_data(0, pd);' \
	"kernel-export of a context"
echo "$CHECKS checks, $FAILS failed"
[ $FAILS -eq 0 ]

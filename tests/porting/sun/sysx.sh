#!/usr/bin/env bash
# tests/porting/sun/sysx.sh CC SRCDIR LIBRARY -- the system's .x files, ported by recompiling:
# for every /usr/include/rpcsvc/*.x, rpcb_prot.x and crypt.x (libtirpc's), rpcgen -a's
# unmodified output (the header, XDR routines, client stubs, the _svc.c with main and the
# sample client and server), default and -M style, must compile with
#   CC -std=gnu11 -Wall -Wno-unused-variable -Werror -I COMPAT -include remotecall/sunrpc.h
# and its servers and clients link with LIBRARY alone (no libtirpc). -Wno-unused-variable:
# rpcgen declares `register int32_t *buf;` in every XDR routine and uses it in few (as with
# libtirpc). The files' own faults aside, as with libtirpc: nis*.x carry Solaris' `#pragma
# ident` (-Wno-unknown-pragmas), crypt.x FreeBSD's __FBSDID (defined empty), and
# nis_callback.x includes Solaris' "nis_clnt.h" (an empty one here) and <rpcsvc/nis.h> (made
# by rpcgen -h from nis.x); nis.x continues %-lines with a backslash, which rpcgen cannot read
# (it stops with "definition keyword expected"): they are joined first. And rpcgen -M's sample
# server returns an uninitialised `bool_t retval` (its own template, -Wno-uninitialized).
set -u
CC=${1:?usage: sysx.sh CC SRCDIR LIBRARY}
SRC=${2:?usage: sysx.sh CC SRCDIR LIBRARY}
LIB=${3:?usage: sysx.sh CC SRCDIR LIBRARY}
LIB=$(cd "$(dirname "$LIB")" && pwd)/$(basename "$LIB")
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/rc-sysx.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT
FAILS=0
CHECKS=0
ok() { CHECKS=$((CHECKS + 1)); echo "ok   $*"; }
fail() { CHECKS=$((CHECKS + 1)); FAILS=$((FAILS + 1)); echo "FAIL $*"; }

XS=""
for x in /usr/include/rpcsvc/*.x /usr/include/tirpc/rpc/rpcb_prot.x \
	/usr/include/tirpc/rpcsvc/crypt.x; do
	[ -e "$x" ] && XS="$XS $x"
done
if [ -z "$XS" ]; then
	echo "no system .x files: skipped"
	exit 77
fi
CF=(-std=gnu11 -Wall -Wno-unused-variable -Werror -I"$SRC/runtime/include/remotecall/compat"
	-I"$SRC/runtime/include" -I"$SRC/xdr/include" -include remotecall/sunrpc.h)
LIBS=("$LIB" -lssl -lcrypto -lgssapi_krb5 -lngtcp2_crypto_gnutls -lngtcp2 -lgnutls -pthread)
# a sanitizer build's library needs its flags in the programs too
if [ -n "${RC_DOWNSTREAM_CFLAGS:-}" ]; then
	CF+=($RC_DOWNSTREAM_CFLAGS)
	LIBS+=($RC_DOWNSTREAM_CFLAGS)
fi

# compile STYLE NAME DIR FILE EXTRA... -- FILE.c into FILE.o
compile() {
	local style=$1 name=$2 dir=$3 f=$4
	shift 4
	if (cd "$dir" && "$CC" "${CF[@]}" -I. -I"$dir/inc" "$@" -c "$f.c" -o "$f.o" \
		>"$f.log" 2>&1); then
		return 0
	fi
	fail "$name ($style): $f.c: $(grep -m3 -E 'error' "$dir/$f.log" | tr '\n' '|')"
	return 1
}

for style in default -M; do
	for x in $XS; do
		n=$(basename "$x" .x)
		d=$TMPD/$style/$n
		mkdir -p "$d/inc/rpcsvc"
		cp "$(dirname "$x")"/*.x "$d/"
		sed -i -e ':a' -e '/^%.*\\$/N; s/\\\n[[:space:]]*/ /; ta' "$d/nis.x" 2>/dev/null
		flags=""
		[ "$style" = -M ] && flags=-M
		if ! (cd "$d" && rpcgen $flags -a "$n.x" >"$d/rpcgen.log" 2>&1); then
			fail "$n ($style): rpcgen -a failed: $(tr '\n' '|' <"$d/rpcgen.log")"
			continue
		fi
		extra=()
		case $n in
		nis*) extra+=(-Wno-unknown-pragmas) ;;
		crypt) extra+=('-D__FBSDID(s)=') ;;
		esac
		more=""
		if [ "$n" = nis_callback ]; then
			: >"$d/inc/nis_clnt.h"
			(cd "$d" && rpcgen -h -o inc/rpcsvc/nis.h nis.x && rpcgen -c -o nis_xdr.c nis.x) \
				>>"$d/rpcgen.log" 2>&1
			compile "$style" "$n" "$d" nis_xdr "${extra[@]}" -I"$d/inc/rpcsvc" || continue
			more=nis_xdr.o
		fi
		good=1
		for f in "$d"/*.c; do
			f=$(basename "$f" .c)
			[ "$n" = nis_callback ] && [ "$f" = nis_xdr ] && continue
			fx=()
			[ "$style" = -M ] && [ "$f" = "${n}_server" ] &&
				fx=(-Wno-uninitialized)
			compile "$style" "$n" "$d" "$f" "${extra[@]}" "${fx[@]}" || good=0
		done
		[ $good = 1 ] || continue
		xdr=""
		[ -e "$d/${n}_xdr.o" ] && xdr=${n}_xdr.o
		if [ ! -e "$d/${n}_svc.c" ]; then # no program (nis_object.x): types only
			ok "$n ($style): compiles (types only)"
			continue
		fi
		if ! (cd "$d" && "$CC" -o server "${n}_svc.o" "${n}_server.o" $xdr $more "${LIBS[@]}" \
			>link.log 2>&1 &&
			"$CC" -o client "${n}_clnt.o" "${n}_client.o" $xdr $more "${LIBS[@]}" \
				>>link.log 2>&1); then
			fail "$n ($style): link: $(grep -m3 -E 'undefined|error' "$d/link.log" | tr '\n' '|')"
			continue
		fi
		if nm -u "$d/server" "$d/client" | grep -q -E ' (svc|clnt|xdr|pmap|rpcb)_'; then
			fail "$n ($style): links Sun symbols from elsewhere: $(nm -u "$d/server" |
				grep -E ' (svc|clnt|xdr|pmap|rpcb)_' | head -3 | tr '\n' ' ')"
			continue
		fi
		ok "$n ($style): compiles -Werror, server and client link with remotecall alone"
	done
done
echo "sysx: $((CHECKS - FAILS))/$CHECKS passed"
[ $FAILS = 0 ]

#!/usr/bin/env bash
# tests/install/install.sh BUILD -- install BUILD into a temporary prefix (cmake --install) and
# build tests/install/downstream against the installed package both ways, then run each
# build's client against its server over loopback:
#   1. CMake: find_package(remotecall) + remotecall_generate (CMAKE_PREFIX_PATH = the prefix),
#      with the default (shared) library and with -DREMOTECALL_USE_STATIC=ON (the archive)
#   2. make: pkg-config --cflags/--libs remotecall, idlc found on PATH
#   3. idlc -a: in a folder holding only samples/calc.x, `idlc -a calc.x` and
#      `make -f Makefile.calc` build the samples calc_server and calc_client; the client
#      calls the server (its printed port, no rpcbind needed) over UDP and over TCP and gets
#      the zero-filled results; `make -f Makefile.calc clean` leaves the .x and the samples
# Also checks what was installed (both libraries, headers, idlc, man page, package files), that
# the pkg-config file validates and prints clean absolute paths. Everything it starts is
# stopped; the prefix is removed.
set -u
BUILD=$(cd "${1:?usage: install.sh BUILD}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/rc-install.XXXXXX")
. "$HERE/common.sh"
cleanup() {
	stop_pids
	rm -rf "$TMPD"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

P=$TMPD/prefix
check "cmake --install into a fresh prefix" cmake --install "$BUILD" --prefix "$P" || exit 1
LIBDIR=$(cd "$(dirname "$(find "$P" -name remotecall.pc | head -1)")/.." && pwd)
# (the programs find libremotecall.so.0 there, run_pair's LD_LIBRARY_PATH: not a system prefix)
for f in bin/idlc include/remotecall/remotecall.h include/remotecall/xdr.h \
	include/remotecall/client.h include/remotecall/server.h include/remotecall/trace.h \
	share/man/man1/idlc.1; do
	check "installed: $f" test -e "$P/$f"
done
for f in libremotecall.a libremotecall.so libremotecall.so.0; do
	check "installed: $f" test -e "$LIBDIR/$f"
done
check "installed: libremotecall.so.0's SONAME" sh -c \
	"readelf -d '$LIBDIR/libremotecall.so.0' | grep -q 'SONAME.*\[libremotecall\.so\.0\]'"
check "installed: the CMake package" test -e "$LIBDIR/cmake/remotecall/remotecallConfig.cmake"
export PKG_CONFIG_PATH=$LIBDIR/pkgconfig
check "pkg-config --validate remotecall" pkg-config --validate remotecall
# written at install time for the prefix installed to: clean absolute paths, no "lib/pkgconfig/../.."
check "pkg-config prints the prefix's folders as clean paths" sh -c \
	"[ \"\$(pkg-config --variable=includedir remotecall)\" = '$P/include' ] &&
	 [ \"\$(pkg-config --variable=libdir remotecall)\" = '$LIBDIR' ] &&
	 [ \"\$(pkg-config --variable=idlc remotecall)\" = '$P/bin/idlc' ] &&
	 [ \"\$(echo \$(pkg-config --cflags remotecall))\" = '-I$P/include' ] &&
	 pkg-config --cflags --libs --static remotecall | grep -qvF -e '/..' -e '/./'"
check "pkg-config: shared by default, --static adds OpenSSL and threads" sh -c \
	"[ \"\$(echo \$(pkg-config --libs remotecall))\" = '-L$LIBDIR -lremotecall' ] &&
	 [ \"\$(echo \$(pkg-config --static --libs remotecall))\" = '-L$LIBDIR -lremotecall -lssl -lcrypto -lgssapi_krb5 -lngtcp2_crypto_gnutls -lngtcp2 -lgnutls -pthread' ]"
check "the man page formats" sh -c "command -v man >/dev/null || exit 0; MANWIDTH=80 man -l '$P/share/man/man1/idlc.1' | grep -q 'compile an ONC RPC interface'"
check "idlc --version from the prefix" "$P/bin/idlc" --version

# 1. CMake
cp -r "$HERE/downstream" "$TMPD/cm"
DF=${RC_DOWNSTREAM_CFLAGS:-} # the library's sanitizer flags, when it was built with them
check "CMake downstream configures (find_package)" \
	cmake -S "$TMPD/cm" -B "$TMPD/cm/build" -DCMAKE_PREFIX_PATH="$P" \
	"-DCMAKE_C_FLAGS=$DF" "-DCMAKE_EXE_LINKER_FLAGS=$DF" &&
	check "CMake downstream builds (remotecall_generate)" cmake --build "$TMPD/cm/build" -j 2 &&
	run_pair cmake "$TMPD/cm/build"
# idlc re-runs when the .x changes
if [ -x "$TMPD/cm/build/hello-client" ]; then
	touch "$TMPD/cm/hello.x"
	CHECKS=$((CHECKS + 1))
	if cmake --build "$TMPD/cm/build" 2>&1 | grep -q 'idlc hello.x'; then
		ok "CMake downstream: idlc runs again after hello.x changed"
	else
		fail "CMake downstream: hello.x changed but idlc did not run"
	fi
fi

# 1b. CMake, the static archive asked for (REMOTECALL_USE_STATIC): no libremotecall.so needed
cp -r "$HERE/downstream" "$TMPD/cms"
check "CMake downstream with -DREMOTECALL_USE_STATIC=ON builds against libremotecall.a" \
	cmake -S "$TMPD/cms" -B "$TMPD/cms/build" -DCMAKE_PREFIX_PATH="$P" -DREMOTECALL_USE_STATIC=ON \
	"-DCMAKE_C_FLAGS=$DF" "-DCMAKE_EXE_LINKER_FLAGS=$DF" &&
	check "CMake downstream (static) builds" cmake --build "$TMPD/cms/build" -j 2 &&
	check "CMake downstream (static): the programs need no libremotecall.so" sh -c \
		"! readelf -d '$TMPD/cms/build/hello-client' | grep -q 'NEEDED.*libremotecall'" &&
	run_pair cmake-static "$TMPD/cms/build"

# 2. make + pkg-config + idlc on PATH
cp -r "$HERE/downstream" "$TMPD/mk"
check "make downstream builds (pkg-config, idlc on PATH)" \
	env PATH="$P/bin:$PATH" make -C "$TMPD/mk" "CC=cc $DF" &&
	run_pair make "$TMPD/mk"

# 3. idlc -a: the samples and their makefile, in a folder holding only calc.x
S=$TMPD/samples
mkdir "$S" && cp "$HERE/samples/calc.x" "$S/"
# run_samples: start calc_server (any ports), run calc_client at its UDP and its TCP URI
run_samples() {
	local out=$TMPD/calc.srv i=0 pid proto uri st
	: >"$out"
	LD_LIBRARY_PATH=$LIBDIR "$S/calc_server" >"$out" 2>"$TMPD/calc.srv.err" &
	pid=$!
	PIDS="$PIDS $pid"
	while [ "$(grep -c '^listening ' "$out")" -lt 2 ]; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$pid" 2>/dev/null; then
			CHECKS=$((CHECKS + 1))
			fail "samples: calc_server did not start: $(cat "$out" "$TMPD/calc.srv.err")"
			kill "$pid" 2>/dev/null
			return
		fi
		sleep 0.05
	done
	printf '%s\n' 'calc_add_1: success' '	result 0' 'calc_sub_1: success' '	result 0' \
		'calc_reset_1: success' 'calc_echo_1: success' '	result ""' >"$TMPD/calc.want"
	for proto in udp tcp; do
		# the server listens on 0.0.0.0; the client calls it at 127.0.0.1
		uri=$(awk -v p="$proto" '$1 == "listening" && index($2, p "://") == 1 { print $2; exit }' \
			"$out" | sed 's|//0\.0\.0\.0:|//127.0.0.1:|')
		CHECKS=$((CHECKS + 1))
		if LD_LIBRARY_PATH=$LIBDIR timeout 20 "$S/calc_client" "$uri" >"$TMPD/calc.cli" 2>&1 &&
			diff "$TMPD/calc.want" "$TMPD/calc.cli" >/dev/null; then
			ok "samples: calc_client $uri: every call answered, zero-filled results"
		else
			fail "samples: calc_client $uri: $(cat "$TMPD/calc.cli")"
		fi
	done
	kill -INT "$pid"
	wait "$pid"
	st=$?
	CHECKS=$((CHECKS + 1))
	if [ $st -eq 0 ]; then
		ok "samples: calc_server stops on SIGINT, exit status 0"
	else
		fail "samples: calc_server exit status $st after SIGINT: $(cat "$TMPD/calc.srv.err")"
	fi
}
check "idlc -a calc.x writes the seven files" env PATH="$P/bin:$PATH" sh -c \
	"cd '$S' && idlc -a calc.x && [ \$(ls | wc -l) -eq 8 ] &&
	 ls calc_client.c calc_server.c Makefile.calc calc.h calc_xdr.c calc_clnt.c calc_svc.c" &&
	check "idlc -a calc.x again: refuses to overwrite the samples (exit 2)" sh -c \
		"cd '$S' && '$P/bin/idlc' -a calc.x 2>&1; [ \$? -eq 2 ]" &&
	check "make -f Makefile.calc builds calc_client and calc_server (idlc on PATH)" \
		env PATH="$P/bin:$PATH" sh -c "cd '$S' && rm -f calc.h calc_xdr.c calc_clnt.c calc_svc.c &&
		make -f Makefile.calc 'CC=cc $DF' 'CFLAGS=-g -O2 -std=c11 -Wall -Wextra -Werror'" &&
	run_samples &&
	check "make -f Makefile.calc clean leaves calc.x and the samples" sh -c \
		"cd '$S' && make -f Makefile.calc clean && [ \"\$(ls | tr '\n' ' ')\" = 'Makefile.calc calc.x calc_client.c calc_server.c ' ]"

echo "$CHECKS checks, $FAILS failed"
[ $FAILS -eq 0 ]

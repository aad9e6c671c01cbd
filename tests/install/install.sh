#!/usr/bin/env bash
# tests/install/install.sh BUILD -- install BUILD into a temporary prefix (cmake --install) and
# build tests/install/downstream against the installed package both ways, then run each
# build's client against its server over loopback:
#   1. CMake: find_package(remotecall) + remotecall_generate (CMAKE_PREFIX_PATH = the prefix)
#   2. make: pkg-config --cflags/--libs remotecall, idlc found on PATH
#   3. idlc -a: in a folder holding only samples/calc.x, `idlc -a calc.x` and
#      `make -f Makefile.calc` build the samples calc_server and calc_client; the client
#      calls the server (its printed port, no rpcbind needed) over UDP and over TCP and gets
#      the zero-filled results; `make -f Makefile.calc clean` leaves the .x and the samples
# Also checks what was installed (library, headers, idlc, man page, package files) and that
# the pkg-config file validates. Everything it starts is stopped; the prefix is removed.
set -u
BUILD=$(cd "${1:?usage: install.sh BUILD}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/rc-install.XXXXXX")
PIDS=""
FAILS=0
CHECKS=0
cleanup() {
	local p
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMPD"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() { FAILS=$((FAILS + 1)); echo "FAIL $*"; }
ok() { echo "ok   $*"; }
check() { # check DESC CMD...: CMD must succeed (output shown on failure)
	local desc=$1
	shift
	CHECKS=$((CHECKS + 1))
	if "$@" >"$TMPD/out" 2>&1; then ok "$desc"; else fail "$desc"; tail -30 "$TMPD/out" | sed 's/^/    /'; return 1; fi
}

P=$TMPD/prefix
check "cmake --install into a fresh prefix" cmake --install "$BUILD" --prefix "$P" || exit 1
LIBDIR=$(cd "$(dirname "$(find "$P" -name remotecall.pc | head -1)")/.." && pwd)
# (a shared build's programs find libremotecall.so.0 there: the prefix is not a system one)
for f in bin/idlc include/remotecall/remotecall.h include/remotecall/xdr.h \
	include/remotecall/client.h include/remotecall/server.h include/remotecall/trace.h \
	share/man/man1/idlc.1; do
	check "installed: $f" test -e "$P/$f"
done
check "installed: the library" sh -c "ls '$LIBDIR'/libremotecall.*"
check "installed: the CMake package" test -e "$LIBDIR/cmake/remotecall/remotecallConfig.cmake"
export PKG_CONFIG_PATH=$LIBDIR/pkgconfig
check "pkg-config --validate remotecall" pkg-config --validate remotecall
check "pkg-config's include and lib folders are the prefix's (relocated)" sh -c \
	"[ \"\$(cd \"\$(pkg-config --variable=includedir remotecall)\" && pwd -P)\" = \"\$(cd '$P/include' && pwd -P)\" ] &&
	 [ -e \"\$(pkg-config --variable=libdir remotecall)/pkgconfig/remotecall.pc\" ] &&
	 [ -x \"\$(pkg-config --variable=idlc remotecall)\" ]"
check "the man page formats" sh -c "command -v man >/dev/null || exit 0; MANWIDTH=80 man -l '$P/share/man/man1/idlc.1' | grep -q 'compile an ONC RPC interface'"
check "idlc --version from the prefix" "$P/bin/idlc" --version

# run_pair NAME DIR: start DIR/hello-server on port 0, run DIR/hello-client against it
run_pair() {
	local name=$1 dir=$2 out=$TMPD/$1.srv i=0 uri pid
	: >"$out"
	LD_LIBRARY_PATH=$LIBDIR "$dir/hello-server" udp://127.0.0.1:0 >"$out" 2>&1 &
	pid=$!
	PIDS="$PIDS $pid"
	while ! grep -q '^listening ' "$out"; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$pid" 2>/dev/null; then
			CHECKS=$((CHECKS + 1))
			fail "$name: server did not start: $(cat "$out")"
			return
		fi
		sleep 0.05
	done
	uri=$(awk '/^listening /{ print $2; exit }' "$out")
	CHECKS=$((CHECKS + 1))
	if LD_LIBRARY_PATH=$LIBDIR timeout 20 "$dir/hello-client" "$uri" world >"$TMPD/$name.cli" 2>&1 &&
		grep -qx 'hello, world' "$TMPD/$name.cli" && grep -qx '2 + 40 = 42' "$TMPD/$name.cli"; then
		ok "$name: client against server: $(tr '\n' ' ' <"$TMPD/$name.cli")"
	else
		fail "$name: client: $(cat "$TMPD/$name.cli")"
	fi
	kill "$pid"
	wait "$pid" 2>/dev/null
}

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

#!/usr/bin/env bash
# tests/install/make_install.sh SRC [SANITIZERS] -- ctest make_install: `make install` needs and builds
# only what the library and idlc need, while the README's `make test` and `make bench` stay
# as they were:
#   1. install-deps.sh --build-only lists the build set (compiler, CMake, flex, bison,
#      OpenSSL, pkg-config) and none of the test or benchmark packages; the default set still
#      has them all, and the Debian tools for the package test
#   2. make -n: install runs install-deps.sh --build-only and configures with the tests,
#      benchmarks and examples off; test and bench still run the full install-deps.sh, then
#      ctest / bench/run.sh --quick; deb runs scripts/build-deb.sh
#   3. make install BUILD=... PREFIX=/opt/remotecall DESTDIR=...: builds no test, benchmark or
#      example, installs both libraries, idlc and a remotecall.pc with clean absolute paths
#      under DESTDIR. (Not in a sanitizer build -- SANITIZERS non-empty -- nor the valgrind
#      pass: the build is the same plain one there, and the plain pass has made it.)
set -u
SRC=$(cd "${1:?usage: make_install.sh SRC}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/rc-mkinstall.XXXXXX")
. "$HERE/common.sh"
trap 'rm -rf "$TMPD"' EXIT
trap 'exit 1' INT TERM

# 1.
build_set=$("$SRC/scripts/install-deps.sh" --build-only --print | tr '\n' ' ')
full_set=$("$SRC/scripts/install-deps.sh" --print | tr '\n' ' ')
has() { case " $1" in *" $2 "*) return 0 ;; esac; return 1; }
check "install-deps.sh --build-only: the build set ($build_set)" sh -c \
	"for p in cmake make gcc flex bison libssl-dev libkrb5-dev pkg-config; do
		case ' $build_set' in *\" \$p \"*) ;; *) echo \"no \$p\"; exit 1 ;; esac; done"
for p in libcmocka-dev libtirpc-dev rpcbind valgrind gnuplot-nox clang-19 liburing-dev rstat-client krb5-kdc lintian; do
	CHECKS=$((CHECKS + 1))
	if has "$build_set" "$p"; then fail "install-deps.sh --build-only wants $p"; fi
	if ! has "$full_set" "$p"; then fail "install-deps.sh (make test, make bench) lacks $p"; fi
done
ok "install-deps.sh: test, benchmark and Debian tools in the default set only"

# 2.
dry() { # make -n, each command on one line
	make -n -C "$SRC" "$@" BUILD="$TMPD/b" PREFIX=/opt/remotecall DESTDIR="$TMPD/root" 2>&1 |
		sed -e ':a' -e '/\\$/N; s/\\\n[[:space:]]*/ /; ta'
}
dry install >"$TMPD/install.n"
check "make -n install: install-deps.sh --build-only, never the full set" sh -c \
	"grep -q 'scripts/install-deps.sh --build-only\$' '$TMPD/install.n' &&
	 ! grep -q 'scripts/install-deps.sh\$' '$TMPD/install.n'"
check "make -n install: configures without tests, benchmarks and examples, installs to PREFIX" sh -c \
	"grep -- '-DRC_BUILD_TESTS=OFF' '$TMPD/install.n' | grep -- '-DRC_BUILD_BENCH=OFF' |
	 grep -- '-DRC_BUILD_EXAMPLES=OFF' | grep -q -- '-DCMAKE_INSTALL_PREFIX=/opt/remotecall' &&
	 grep -q 'cmake --install $TMPD/b-install' '$TMPD/install.n'"
check "make -n test: full install-deps.sh, then ctest (as before)" sh -c \
	"dry_out=\$(make -n -C '$SRC' test BUILD='$TMPD/b' 2>&1) &&
	 echo \"\$dry_out\" | grep -q 'scripts/install-deps.sh\$' && echo \"\$dry_out\" | grep -q 'ctest '"
check "make -n bench: full install-deps.sh, then bench/run.sh --quick (as before)" sh -c \
	"dry_out=\$(make -n -C '$SRC' bench BUILD='$TMPD/b' 2>&1) &&
	 echo \"\$dry_out\" | grep -q 'scripts/install-deps.sh\$' && echo \"\$dry_out\" | grep -q 'bench/run.sh .*--quick'"
check "make -n deb: install-deps.sh --deb, scripts/build-deb.sh" sh -c \
	"dry_out=\$(make -n -C '$SRC' deb 2>&1) && echo \"\$dry_out\" | grep -q 'install-deps.sh --deb\$' &&
	 echo \"\$dry_out\" | grep -q 'scripts/build-deb.sh build-deb\$'"

# 3.
if [ -n "${2:-}" ] || [ "${RC_VALGRIND:-0}" = 1 ]; then
	echo "$CHECKS checks, $FAILS failed (the real make install only in the plain pass)"
	[ $FAILS -eq 0 ]
	exit
fi
R=$TMPD/root/opt/remotecall
# (JOBS=1: ctest -j2 counts this test as one CPU; the tests beside it must not starve)
check "make install BUILD=... PREFIX=/opt/remotecall DESTDIR=...: builds and installs" \
	timeout 600 make -C "$SRC" install JOBS=1 BUILD="$TMPD/b" PREFIX=/opt/remotecall DESTDIR="$TMPD/root" &&
	check "make install built no tests, benchmarks or examples" sh -c \
		"[ ! -e '$TMPD/b-install/tests' ] && [ ! -e '$TMPD/b-install/bench' ] &&
		 [ ! -e '$TMPD/b-install/examples' ] && [ -x '$TMPD/b-install/idlc/idlc' ]" &&
	check "make install: libremotecall.a, libremotecall.so.0, idlc, headers under DESTDIR/PREFIX" sh -c \
		"ls '$R'/lib*/libremotecall.a '$R'/lib*/libremotecall.so.0 '$R/bin/idlc' \
		    '$R/include/remotecall/remotecall.h'" &&
	check "make install: remotecall.pc names PREFIX itself (not DESTDIR), no '..'" sh -c \
		"pc=\$(ls '$R'/lib*/pkgconfig/remotecall.pc) && grep -qx 'prefix=/opt/remotecall' \"\$pc\" &&
		 ! grep -qF -e '..' -e '$TMPD' -e pcfiledir \"\$pc\""

echo "$CHECKS checks, $FAILS failed"
[ $FAILS -eq 0 ]

#!/usr/bin/env bash
# tests/install/deb.sh SRC BUILD [SANITIZERS] -- ctest deb_packages: the Debian packages as a
# user meets them. `make deb`'s script (scripts/build-deb.sh, lintian included: no error, no
# warning) builds libremotecall0, libremotecall-dev and idlc in BUILD/deb-test; then
#   1. their metadata: SONAME, multiarch paths, computed Depends (libc6, libssl3, libngtcp2,
#      libgnutls30), the
#      symbols and shlibs files, copyright and changelog in each
#   2. dpkg -i of the three into this machine; the loader cache knows libremotecall.so.0;
#      pkg-config prints clean system paths; idlc and its man page are there
#   3. tests/install/downstream built against the installed files only -- make + pkg-config
#      (shared, and the static archive with pkg-config --static's libraries; not -static --
#      MIT krb5 ships no static archives, so since RPCSEC_GSS no program with remotecall is
#      fully static), CMake
#      find_package (shared, and
#      COMPONENTS static) -- and each client run against its server over loopback
#   4. dpkg --purge of the three: none left installed, none of their files left, the loader
#      cache no longer names the library.
# The packages are purged on every exit (failure and signals included); each step is bounded
# by `timeout` and the whole by a watchdog, well inside ctest's TIMEOUT. Exit 77 (ctest
# SKIP_RETURN_CODE), with the reason, when this cannot run as meant: not root, dpkg-buildpackage / debhelper / lintian
# missing, one of the packages already installed (it is not ours to remove), a sanitizer
# build (SANITIZERS non-empty) or the valgrind pass (RC_VALGRIND=1) -- these build the same
# packages as the plain pass and would only repeat it.
set -u
SRC=$(cd "${1:?usage: deb.sh SRC BUILD [SANITIZERS]}" && pwd)
BUILD=$(cd "${2:?usage: deb.sh SRC BUILD [SANITIZERS]}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
PKGS="idlc libremotecall-dev libremotecall0"
skip() { echo "SKIP deb_packages: $*"; exit 77; }

[ -z "${3:-}" ] || skip "a sanitizer build ($3); the plain pass (make test) builds and installs the packages"
[ "${RC_VALGRIND:-0}" != 1 ] || skip "the valgrind pass; the plain pass (make test) builds and installs the packages"
[ "$(id -u)" -eq 0 ] || skip "not root (dpkg -i into this machine needs it; CI runs as root)"
for t in dpkg dpkg-deb dpkg-buildpackage dh dpkg-shlibdeps lintian pkg-config cmake make cc readelf; do
	command -v "$t" >/dev/null || skip "$t missing (scripts/install-deps.sh --deb installs the Debian tools)"
done
# one run at a time on this machine
LOCKDIR=/run/lock
[ -d $LOCKDIR ] && [ -w $LOCKDIR ] || LOCKDIR=/tmp
exec 9>"$LOCKDIR/remotecall-deb-test.lock"
flock -w 300 9 || skip "another deb_packages run held the lock for 5 min"
for p in $PKGS; do
	if dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^.[^n]'; then
		skip "$p is already on this machine ($(dpkg-query -W -f='${db:Status-Abbrev} ${Version}' "$p")); not ours to remove"
	fi
done
[ ! -e /usr/include/remotecall ] || skip "/usr/include/remotecall exists (a make install PREFIX=/usr?); the packages would clash with it"

TMPD=$(mktemp -d "${TMPDIR:-/tmp}/rc-deb.XXXXXX")
. "$HERE/common.sh"
INSTALLED=0
purge() { # the machine as it was: our packages gone
	[ $INSTALLED -eq 1 ] || return 0
	timeout 120 dpkg --purge $PKGS >"$TMPD/purge.log" 2>&1
}
cleanup() {
	stop_pids
	[ ! -e "$TMPD/overtime" ] || echo "FAIL deb_packages: over 1100 s, stopped by its watchdog"
	if [ $INSTALLED -eq 1 ]; then
		purge || { echo "FAIL dpkg --purge $PKGS at exit:"; cat "$TMPD/purge.log"; }
	fi
	rm -rf "$TMPD"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
# A watchdog: past 1100 s (a step's own timeout at most 600 s more; ctest's TIMEOUT is 1800 s,
# and ctest's kill could not be trapped) the script ends itself and its exit trap purges.
# (Its output goes nowhere: ctest waits for every holder of the test's stdout to end.)
(
	sleep 1100 &
	s=$!
	trap 'kill $s; exit 0' TERM
	wait $s && touch "$TMPD/overtime" && kill -TERM $$
) >/dev/null 2>&1 </dev/null &
PIDS=$!

OUT=$BUILD/deb-test # (its own folder: the other tests use the build tree)
# One compiler at a time (DEB_JOBS=1): ctest -j2 counts this test as one CPU, and the timing
# tests that run beside it must not starve.
T0=$SECONDS
check "make deb's script builds the three packages, lintian clean (no error, no warning)" \
	timeout 600 env DEB_JOBS=1 "$SRC/scripts/build-deb.sh" "$OUT" || { cat "$OUT/dpkg-buildpackage.log" 2>/dev/null | tail -30; exit 1; }
echo "     (built and checked in $((SECONDS - T0)) s: $(cd "$OUT" && ls -s --block-size=K ./*.deb | tr '\n' ' '))"
grep -E '^(build-deb: lintian|[EWIPXO]: )' "$TMPD/out" | sed 's/^/     /'
V=$(sed -n 's/^project(remotecall VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
ARCH=$(dpkg --print-architecture)
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
deb() { echo "$OUT/${1}_${V}_$ARCH.deb"; }
for p in $PKGS; do
	check "$p: the .deb is there" test -s "$(deb $p)" || exit 1
done

# 1. metadata
check "libremotecall0: libremotecall.so.0 in /usr/lib/$MA, SONAME libremotecall.so.0" sh -c \
	"dpkg-deb -c '$(deb libremotecall0)' | grep -q ' ./usr/lib/$MA/libremotecall.so.0 -> libremotecall.so.$V\$' &&
	 mkdir '$TMPD/x' && dpkg-deb -x '$(deb libremotecall0)' '$TMPD/x' &&
	 readelf -d '$TMPD/x/usr/lib/$MA/libremotecall.so.$V' | grep -q 'SONAME.*\[libremotecall\.so\.0\]'"
check "libremotecall0: Depends computed by dpkg-shlibdeps (libc6, libssl3, libngtcp2, libgnutls30)" sh -c \
	"dpkg-deb -f '$(deb libremotecall0)' Depends | grep -q 'libc6 (>= ' &&
	 dpkg-deb -f '$(deb libremotecall0)' Depends | grep -q 'libssl3 (>= ' &&
	 dpkg-deb -f '$(deb libremotecall0)' Depends | grep -q 'libngtcp2-[0-9]* (>= ' &&
	 dpkg-deb -f '$(deb libremotecall0)' Depends | grep -q 'libngtcp2-crypto-gnutls[0-9]* (>= ' &&
	 dpkg-deb -f '$(deb libremotecall0)' Depends | grep -q 'libgnutls30 (>= '"
check "libremotecall0: symbols file (every export, node REMOTECALL_0), shlibs and ldconfig trigger" sh -c \
	"dpkg-deb -I '$(deb libremotecall0)' symbols >'$TMPD/symbols' &&
	 [ \$(grep -c '@REMOTECALL_0 ' '$TMPD/symbols') -eq $(wc -l <"$SRC/scripts/abi/libremotecall.so.0.symbols") ] &&
	 dpkg-deb -I '$(deb libremotecall0)' shlibs | grep -q '^libremotecall 0 libremotecall0' &&
	 dpkg-deb -I '$(deb libremotecall0)' triggers | grep -q 'ldconfig'"
check "libremotecall-dev: headers, libremotecall.a, the .so link, remotecall.pc, CMake package" sh -c \
	"dpkg-deb -c '$(deb libremotecall-dev)' >'$TMPD/dev.list' &&
	 for f in include/remotecall/remotecall.h include/remotecall/sunrpc.h lib/$MA/libremotecall.a \
		lib/$MA/libremotecall.so lib/$MA/pkgconfig/remotecall.pc \
		lib/$MA/cmake/remotecall/remotecallConfig.cmake; do
		grep -q \" ./usr/\$f\\( \\|\$\\)\" '$TMPD/dev.list' || { echo \"no \$f\"; exit 1; }; done &&
	 dpkg-deb -f '$(deb libremotecall-dev)' Depends | grep -q 'libremotecall0 (= $V)'"
check "idlc: /usr/bin/idlc and idlc(1); Depends cpp" sh -c \
	"dpkg-deb -c '$(deb idlc)' | grep -q ' ./usr/bin/idlc\$' &&
	 dpkg-deb -c '$(deb idlc)' | grep -q ' ./usr/share/man/man1/idlc.1.gz\$' &&
	 dpkg-deb -f '$(deb idlc)' Depends | grep -q '\\bcpp\\b'"
for p in $PKGS; do
	check "$p: copyright and changelog" sh -c \
		"dpkg-deb -c '$(deb $p)' | grep -q ' ./usr/share/doc/$p/copyright\$' &&
		 dpkg-deb -c '$(deb $p)' | grep -q ' ./usr/share/doc/$p/changelog.gz\$'"
done

# 2. install into this machine
INSTALLED=1
check "dpkg -i the three packages" timeout 120 dpkg -i "$(deb libremotecall0)" "$(deb libremotecall-dev)" "$(deb idlc)" ||
	exit 1
for p in $PKGS; do
	check "$p is installed" sh -c "dpkg-query -W -f='\${Status}' $p | grep -qx 'install ok installed'"
done
check "the loader cache has libremotecall.so.0 (ldconfig trigger)" sh -c \
	"ldconfig -p | grep -Eq 'libremotecall.so.0 .*=> (/usr)?/lib/$MA/libremotecall.so.0\$'"
check "pkg-config: clean system paths, shared by default, --static adds OpenSSL, GSS, ngtcp2, GnuTLS" sh -c \
	"pkg-config --validate remotecall &&
	 [ \"\$(pkg-config --variable=libdir remotecall)\" = /usr/lib/$MA ] &&
	 [ \"\$(pkg-config --variable=includedir remotecall)\" = /usr/include ] &&
	 [ \"\$(pkg-config --variable=idlc remotecall)\" = /usr/bin/idlc ] &&
	 [ \"\$(echo \$(pkg-config --libs remotecall))\" = -lremotecall ] &&
	 [ \"\$(echo \$(pkg-config --static --libs remotecall))\" = '-lremotecall -lssl -lcrypto -lgssapi_krb5 -lngtcp2_crypto_gnutls -lngtcp2 -lgnutls -pthread' ]"
check "idlc --version is $V; man -w idlc finds idlc(1)" sh -c \
	"/usr/bin/idlc --version | grep -qF '$V' && { ! command -v man >/dev/null || man -w idlc | grep -q '^/usr/share/man/man1/idlc.1.gz\$'; }"

# 3. downstream builds against the installed files only (no prefix, no PKG_CONFIG_PATH)
unset PKG_CONFIG_PATH CMAKE_PREFIX_PATH LD_LIBRARY_PATH LIBDIR
needs_so() { readelf -d "$1" | grep -q 'NEEDED.*\[libremotecall\.so\.0\]'; }
cp -r "$HERE/downstream" "$TMPD/mk"
check "make + pkg-config: builds (shared)" timeout 120 make -C "$TMPD/mk" &&
	check "make + pkg-config: hello-client needs libremotecall.so.0" needs_so "$TMPD/mk/hello-client" &&
	run_pair make-shared "$TMPD/mk"
cp -r "$HERE/downstream" "$TMPD/mks"
# the archive by path (beside libremotecall.so, -lremotecall would take the .so), then what
# pkg-config --static adds
static_libs="$(pkg-config --variable=libdir remotecall)/libremotecall.a $(pkg-config --static --libs remotecall | sed 's/-lremotecall//')"
check "make + libremotecall.a + pkg-config --static's libraries: builds ($static_libs)" \
	timeout 120 make -C "$TMPD/mks" LDLIBS="$static_libs" &&
	check "make + libremotecall.a: hello-client does not need libremotecall.so" sh -c \
		"! readelf -d '$TMPD/mks/hello-client' | grep -q 'NEEDED.*libremotecall'" &&
	run_pair make-static "$TMPD/mks"
cp -r "$HERE/downstream" "$TMPD/cm"
check "CMake find_package(remotecall): configures and builds (shared)" sh -c \
	"timeout 120 cmake -S '$TMPD/cm' -B '$TMPD/cm/build' && timeout 120 cmake --build '$TMPD/cm/build'" &&
	check "CMake: hello-client needs libremotecall.so.0" needs_so "$TMPD/cm/build/hello-client" &&
	run_pair cmake-shared "$TMPD/cm/build"
cp -r "$HERE/downstream" "$TMPD/cms"
check "CMake find_package(remotecall COMPONENTS static idlc): configures and builds" sh -c \
	"timeout 120 cmake -S '$TMPD/cms' -B '$TMPD/cms/build' -DHELLO_STATIC=ON &&
	 timeout 120 cmake --build '$TMPD/cms/build'" &&
	check "CMake (static): hello-client does not need libremotecall.so" sh -c \
		"! readelf -d '$TMPD/cms/build/hello-client' | grep -q 'NEEDED.*libremotecall'" &&
	run_pair cmake-static "$TMPD/cms/build"

# 4. removal
for p in $PKGS; do dpkg -L "$p" 2>/dev/null; done | sort -u >"$TMPD/files"
check "dpkg --purge the three packages" purge && INSTALLED=0
for p in $PKGS; do
	check "$p is gone (dpkg-query)" sh -c "! dpkg-query -W -f='\${db:Status-Abbrev}' $p 2>/dev/null | grep -q '^.[^n]'"
done
check "none of their files is left ($(wc -l <"$TMPD/files") paths; shared folders aside)" sh -c \
	"left=\$(while read -r f; do [ -e \"\$f\" ] && [ ! -d \"\$f\" ] && echo \"\$f\"; done <'$TMPD/files');
	 for d in /usr/include/remotecall /usr/lib/$MA/cmake/remotecall /usr/share/doc/idlc \
		/usr/share/doc/libremotecall0 /usr/share/doc/libremotecall-dev; do
		[ -e \"\$d\" ] && left=\"\$left \$d\"; done; [ -z \"\$left\" ] || { echo \"left: \$left\"; exit 1; }"
check "the loader cache no longer names libremotecall.so.0" sh -c "! ldconfig -p | grep -q libremotecall"

echo "$CHECKS checks, $FAILS failed ($((SECONDS - T0)) s)"
[ $FAILS -eq 0 ]

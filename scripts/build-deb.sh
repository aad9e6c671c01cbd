#!/usr/bin/env bash
# scripts/build-deb.sh [OUT] -- `make deb`: the Debian packages libremotecall0,
# libremotecall-dev and idlc, built with dpkg-buildpackage (debhelper, CMake) from a copy of
# this tree in OUT/src (default build-deb/) with scripts/debian/ as its debian/ folder, then
# checked by lintian (any error or warning fails; justified ones are overridden, with the
# reason, in scripts/debian/*.lintian-overrides). The .deb files land in OUT.
# libremotecall0's symbols file is made from the committed ABI list
# (scripts/abi/libremotecall.so.0.symbols): a symbol of node REMOTECALL_0 dates from 0.1.0, one
# of node REMOTECALL_X.Y from X.Y.
#   LINTIAN=0   skip lintian        DEB_JOBS=N   parallel build jobs (default: nproc)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$SRC/build-deb}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
for t in dpkg-buildpackage dh dpkg-shlibdeps; do
	command -v "$t" >/dev/null || {
		echo "build-deb: $t missing (scripts/install-deps.sh --deb installs it)" >&2; exit 2; }
done

# the tree as it is (tracked and new files, none that git ignores: no build folders)
rm -rf "$OUT/src" "$OUT"/*.deb "$OUT"/*.buildinfo "$OUT"/*.changes
mkdir "$OUT/src"
if git -C "$SRC" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git -C "$SRC" ls-files -z --cached --others --exclude-standard |
		(cd "$SRC" && tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -C "$OUT/src" -xf -
else
	tar -C "$SRC" --exclude='./build*' --exclude=./.git -cf - . | tar -C "$OUT/src" -xf -
fi
cp -r "$SRC/scripts/debian" "$OUT/src/debian"

# the project's version is the package's (a native package: no Debian revision)
want=$(sed -n 's/^project(remotecall VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
have=$(cd "$OUT/src" && dpkg-parsechangelog -S Version)
if [ "$want" != "$have" ]; then
	echo "build-deb: scripts/debian/changelog is at $have, CMakeLists.txt at $want:" \
		"add a changelog entry (dch -v $want)" >&2
	exit 1
fi

{
	echo "libremotecall.so.0 libremotecall0 #MINVER#"
	echo "* Build-Depends-Package: libremotecall-dev"
	awk '{ s = $2; sub(/@@/, "@", s); if ($1 == "A") s = s "@" s
	       node = s; sub(/.*@REMOTECALL_/, "", node)
	       print " " s " " (node == "0" ? "0.1.0" : node) }' \
		"$SRC/scripts/abi/libremotecall.so.0.symbols"
} >"$OUT/src/debian/libremotecall0.symbols"

cd "$OUT/src"
DEB_BUILD_OPTIONS="nocheck noautodbgsym parallel=${DEB_JOBS:-$(nproc)}" \
	dpkg-buildpackage -b -us -uc >"$OUT/dpkg-buildpackage.log" 2>&1 || {
	tail -40 "$OUT/dpkg-buildpackage.log" >&2
	echo "build-deb: dpkg-buildpackage failed (log: $OUT/dpkg-buildpackage.log)" >&2
	exit 1
}
cd "$OUT"
ls -l ./*.deb
if [ "${LINTIAN:-1}" != 0 ]; then
	command -v lintian >/dev/null || {
		echo "build-deb: lintian missing (scripts/install-deps.sh --deb installs it)" >&2; exit 2; }
	# (run as root in CI: lintian allows it for an unpacked .deb)
	lintian --fail-on error,warning --display-info --show-overrides ./*.deb
	echo "build-deb: lintian: no errors, no warnings"
fi

#!/usr/bin/env bash
# scripts/abi/check.sh LIB ARCHIVE [--update] -- the ABI check (ctest abi_symbols): LIB (a
# built libremotecall.so.N) must have the SONAME and exactly the exported symbols committed in
# scripts/abi/<SONAME>.symbols (`nm -D --defined-only`, addresses dropped, sorted), each in
# its version node. An export added or removed fails with the difference; to accept it on
# purpose, run with --update and commit the list (docs/install.md, "ABI and versioning").
# And LIB must export every public (rc_, not rc__) function ARCHIVE (the libremotecall.a of
# the same build) defines: one declared in a header that scripts/abi/export.h does not bring
# in would be compiled hidden, and an --update would drop it without a word.
set -euo pipefail
LIB=${1:?usage: check.sh LIB ARCHIVE [--update]}
ARCHIVE=${2:?usage: check.sh LIB ARCHIVE [--update]}
HERE=$(cd "$(dirname "$0")" && pwd)
command -v nm >/dev/null && command -v readelf >/dev/null || {
	echo "abi: nm or readelf missing (binutils)"; exit 77; }
soname=$(readelf -d "$LIB" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" != "libremotecall.so.0" ]; then
	echo "abi: SONAME is '$soname', want libremotecall.so.0 (a new SONAME needs a new list)"
	exit 1
fi
list=$HERE/$soname.symbols
now=$(LC_ALL=C nm -D --defined-only "$LIB" | awk '{ print $2, $3 }' | LC_ALL=C sort)
public=$(LC_ALL=C nm -g --defined-only "$ARCHIVE" 2>/dev/null | awk 'NF == 3 && $3 ~ /^rc_[a-z]/ { print $3 }' |
	LC_ALL=C sort -u)
hidden=$(LC_ALL=C comm -23 <(echo "$public") <(sed 's/^[A-Z] //; s/@.*//' <<<"$now" | LC_ALL=C sort -u))
if [ -n "$hidden" ]; then
	echo "abi: public in $(basename "$ARCHIVE") but not exported by $(basename "$LIB")" \
		"(declared in a header scripts/abi/export.h does not include?):"
	echo "$hidden"
	exit 1
fi
if [ "${3:-}" = --update ]; then
	printf '%s\n' "$now" >"$list"
	echo "abi: wrote $(wc -l <"$list") symbols to $list"
	exit 0
fi
if ! diff -u --label "$list (committed)" --label "$LIB (built)" "$list" - <<<"$now"; then
	echo "abi: the exported symbols changed (+ new export, - removed); if on purpose:"
	echo "     scripts/abi/check.sh $LIB $ARCHIVE --update, and commit the list"
	exit 1
fi
bad=$(grep -v -e '^A REMOTECALL_' -e '^[TDBRV] rc_[a-z][A-Za-z0-9_]*@@REMOTECALL_' <<<"$now" || true)
if [ -n "$bad" ]; then
	echo "abi: exports outside rc_* or without a REMOTECALL_ version node:"
	echo "$bad"
	exit 1
fi
echo "abi: $soname exports the $(wc -l <<<"$now") committed symbols (version nodes included)"

#!/usr/bin/env bash
# Installs, through the system package manager, the Debian packages remotecall's build, tests
# and benchmarks need -- only those that are missing. Safe to run again: it does nothing when
# everything is present.
#
#   scripts/install-deps.sh          what `make test` and `make bench` need
#   scripts/install-deps.sh --fuzz   that, plus clang (libFuzzer) for `make fuzz`
set -euo pipefail

# g++: the public and generated headers are compiled as C++17 (cxx_public_headers, idlc_*);
# clang-19 (with its sanitizer runtimes): idlc_multi_fnsan builds the generated stubs with
# -fsanitize=function, which checks C code from clang 17 on (Debian 12's clang is 14);
# rstat-client: rup, a real clnt_broadcast user, in the broadcast and porting tests;
# liburing-dev: raw-pingpong --batch uring (make bench's io_uring rows)
pkgs=(cmake make gcc g++ flex bison libcmocka-dev libtirpc-dev rpcbind rpcsvc-proto pkg-config
      libssl-dev openssl python3 valgrind iproute2 util-linux procps gnuplot-nox clang-19
      libclang-rt-19-dev rstat-client liburing-dev)
for a in "$@"; do
	case $a in
	--fuzz) pkgs+=(clang libclang-rt-dev) ;;
	*) echo "install-deps: unknown option $a" >&2; exit 2 ;;
	esac
done

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-deps: missing packages (${missing[*]}) and no apt-get; install them by hand" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 && sudo="sudo" || {
		echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1; }
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

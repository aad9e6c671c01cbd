#!/usr/bin/env bash
# Installs, through the system package manager, the Debian packages remotecall needs -- only
# those that are missing. Safe to run again: it does nothing when everything is present.
#
#   scripts/install-deps.sh              what `make test` and `make bench` need (all below but fuzz)
#   scripts/install-deps.sh --build-only what building and installing the library and idlc need
#                                        (`make install`)
#   scripts/install-deps.sh --deb        that, plus what `make deb` needs (dpkg-dev, debhelper,
#                                        lintian)
#   scripts/install-deps.sh --fuzz       the full set plus clang (libFuzzer) for `make fuzz`
#   --print                              list the packages of the chosen set and exit
set -euo pipefail

# The library and idlc: a C11 compiler, CMake, flex + bison (idlc), OpenSSL 3 (RPC-over-TLS),
# MIT krb5's GSS-API (RPCSEC_GSS), ngtcp2 with its GnuTLS helper and GnuTLS (RPC-over-QUIC).
build_pkgs=(cmake make gcc flex bison libssl-dev libkrb5-dev pkg-config
            libngtcp2-dev libngtcp2-crypto-gnutls-dev libgnutls28-dev)
# make deb: dpkg-buildpackage with debhelper, lintian on what it built
deb_pkgs=(dpkg-dev debhelper fakeroot lintian)
# The tests and benchmarks, and the package test (ctest deb_packages: deb_pkgs):
# g++: the public and generated headers are compiled as C++17 (cxx_public_headers, idlc_*);
# clang-19 (with its sanitizer runtimes): idlc_multi_fnsan builds the generated stubs with
# -fsanitize=function, which checks C code from clang 17 on (Debian 12's clang is 14);
# rstat-client: rup, a real clnt_broadcast user, in the broadcast and porting tests;
# liburing-dev: raw-pingpong --batch uring (make bench's io_uring rows);
# krb5-kdc krb5-admin-server krb5-user: the throw-away Kerberos realm of the RPCSEC_GSS tests
# (tests/gss/krb5_fixture.sh: krb5kdc, kdb5_util, kadmin.local, kinit);
# nfs-ganesha nfs-ganesha-vfs: the NFSv4.1 server of tests/nfs41 (a session with a back channel);
# haproxy: the load balancer of tests/lb (PROXY v2, RPC health checks, drains);
# python3-pip: aioquic from PyPI, the other QUIC stack of the RPC-over-QUIC interop test (below)
test_pkgs=(g++ libcmocka-dev libtirpc-dev rpcbind rpcsvc-proto openssl python3 valgrind iproute2
           util-linux procps gnuplot-nox clang-19 libclang-rt-19-dev rstat-client liburing-dev
           krb5-kdc krb5-admin-server krb5-user nfs-ganesha nfs-ganesha-vfs haproxy python3-pip)
pkgs=("${build_pkgs[@]}" "${test_pkgs[@]}" "${deb_pkgs[@]}")
print=0
for a in "$@"; do
	case $a in
	--build-only) pkgs=("${build_pkgs[@]}") ;;
	--deb) pkgs=("${build_pkgs[@]}" "${deb_pkgs[@]}") ;;
	--fuzz) pkgs+=(clang libclang-rt-dev) ;;
	--print) print=1 ;;
	*) echo "install-deps: unknown option $a" >&2; exit 2 ;;
	esac
done
if [ $print -eq 1 ]; then
	printf '%s\n' "${pkgs[@]}"
	exit 0
fi

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
# aioquic (PyPI; Debian 12 has no package): tests/interop's RPC-over-QUIC peer; with the test
# set only (not --build-only / --deb).
aioquic_step() {
	case " ${pkgs[*]} " in
	*" python3-pip "*)
		python3 -c 'import aioquic' 2>/dev/null ||
			python3 -m pip install -q aioquic 2>/dev/null ||
			python3 -m pip install -q --break-system-packages aioquic ;;
	esac
}
if [ ${#missing[@]} -eq 0 ]; then
	aioquic_step
	exit 0
fi

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
aioquic_step

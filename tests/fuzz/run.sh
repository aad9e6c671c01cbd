#!/usr/bin/env bash
# tests/fuzz/run.sh SECONDS [TARGET...] -- build the libFuzzer targets with clang and run each
# for SECONDS (default 60), one after another.
#
#   build:   BUILD (default build-fuzz) configured with CC=clang, -DRC_FUZZ=ON,
#            -DRC_SANITIZE=address,undefined; only the fuzz targets are built
#   corpus:  BUILD/fuzz/corpus/TARGET, seeded from tests/fuzz/corpus/TARGET (kept between runs)
#   output:  BUILD/fuzz/TARGET.log (libFuzzer's output; -print_final_stats=1), crashes as
#            BUILD/fuzz/crash-TARGET-* (reproduce: BUILD/tests/fuzz/TARGET FILE)
#   JOBS:    parallel fuzzing processes per target (default 1; more uses libFuzzer's -fork)
#
# Exit status 0 when no target found a crash; 1 otherwise (the crashing inputs are listed).
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-60}
shift || true
BUILD=${BUILD:-build-fuzz}
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
JOBS=${JOBS:-1}
CC=${CC:-$(command -v clang || command -v clang-14)}
root=$(pwd)
targets=(fuzz_call fuzz_authsys fuzz_reply fuzz_recreader fuzz_quic_msg fuzz_xdr_sys fuzz_idlc fuzz_gss fuzz_proxy
  fuzz_gen_nfs_prot fuzz_gen_nfs4_prot fuzz_gen_corpus)
[ $# -eq 0 ] || targets=("$@")

cmake -S . -B "$BUILD" -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DRC_FUZZ=ON -DRC_SANITIZE=address,undefined -DRC_BUILD_BENCH=OFF >/dev/null
cmake --build "$BUILD" -j "$(nproc 2>/dev/null || echo 2)" --target "${targets[@]}" >/dev/null

out="$BUILD/fuzz"
mkdir -p "$out"
status=0
printf '%-16s %12s %10s %8s  %s\n' target executions exec/s cov result
for t in "${targets[@]}"; do
  bin="$BUILD/tests/fuzz/$t"
  [ -x "$bin" ] || { echo "$t: not built (skipped)"; continue; }
  corpus="$out/corpus/$t"
  mkdir -p "$corpus"
  [ -d "tests/fuzz/corpus/$t" ] && cp -n tests/fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null || true
  dict=-close_fd_mask=0
  [ -f "tests/fuzz/$t.dict" ] && dict=-dict="$root/tests/fuzz/$t.dict"
  log="$out/$t.log"
  rc=0
  par=()
  [ "$JOBS" -le 1 ] || par=(-fork="$JOBS")
  ( cd "$out" && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
      "$bin" "$dict" "${par[@]}" -max_total_time="$secs" \
      -print_final_stats=1 -rss_limit_mb=2048 -timeout=10 \
      -artifact_prefix="crash-$t-" "corpus/$t" ) >"$log" 2>&1 || rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{s+=$2} END {print s+0}')
  eps=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | awk '{s+=$2} END {print s+0}')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  if [ "$rc" -ne 0 ] || ls "$out"/crash-"$t"-* >/dev/null 2>&1; then
    status=1
    res="CRASH: $(ls "$out"/crash-"$t"-* 2>/dev/null | tr '\n' ' ')"
  else
    res=ok
  fi
  printf '%-16s %12s %10s %8s  %s\n' "$t" "$execs" "$eps" "${cov:-?}" "$res"
done
exit $status

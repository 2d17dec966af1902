#!/usr/bin/env bash
# fuzz.sh [SECONDS | --build-only] — builds the libFuzzer targets (clang-14, ASan+UBSan) in build-fuzz/ and
# runs each for SECONDS (default 60): fuzz_define on the language (seeds: tests/fuzz/seeds_define
# and examples/tc, dictionary tests/fuzz/tc.dict) and fuzz_run on shapes/dtypes/strides.
# Exits non-zero on any crash, leak or sanitizer report; reproducers land in build-fuzz/artifacts/.
# --build-only: the build alone (CI builds it on one core while the other runs the timing tests).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
command -v clang++-14 >/dev/null || { echo "fuzz.sh: needs clang-14 (apt-get install clang-14 libclang-rt-14-dev)"; exit 2; }
# -O0 -g1, as the ASan build (tools/sanitize.sh): half the compile time of -O1 (a file of the
# cpu backend: 9.3 s against 19.6 s), which CI spends on one core while the other runs tests.
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1 -DNDEBUG" \
  -DTC_FUZZ=ON -DTC_BUILD_TESTS=OFF -DTC_SANITIZE=address,undefined >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzz_define fuzz_run
[ "$seconds" = --build-only ] && exit 0
mkdir -p build-fuzz/corpus_define build-fuzz/corpus_run build-fuzz/artifacts
cp -n tests/fuzz/seeds_define/*.tc examples/tc/*.tc build-fuzz/corpus_define/ 2>/dev/null || true
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The two targets run at once, each for SECONDS on a core of its own (they are single-threaded):
# the step takes SECONDS instead of twice that.
fuzz_one() {  # fuzz_one TARGET: runs it, exit status 1 on a crash, leak or sanitizer report
  local target=$1 dict="" corpus=build-fuzz/corpus_${1#fuzz_}
  [ "$target" = fuzz_define ] && dict="-dict=tests/fuzz/tc.dict"
  build-fuzz/tests/fuzz/$target $corpus $dict -max_total_time="$seconds" -max_len=4096 -timeout=10 \
    -rss_limit_mb=4096 -artifact_prefix=build-fuzz/artifacts/ -print_final_stats=1 2>build-fuzz/$target.log
}
echo "--- fuzz_define and fuzz_run for ${seconds}s each, at once"
declare -A pid
for target in fuzz_define fuzz_run; do fuzz_one $target & pid[$target]=$!; done
status=0
for target in fuzz_define fuzz_run; do
  if ! wait "${pid[$target]}"; then
    status=1
    echo "--- $target FAILED:"
    tail -50 build-fuzz/$target.log
  fi
  echo "--- $target:"
  grep -E "stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added" build-fuzz/$target.log || true
done
exit $status

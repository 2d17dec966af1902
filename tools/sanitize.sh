#!/usr/bin/env bash
# sanitize.sh [address|thread|all] — builds libtc and the whole test suite under sanitizers
# and runs it: ASan+UBSan (build-asan/, leak detection on) and ThreadSanitizer (build-tsan/).
# Any sanitizer report fails the test that caused it (-fno-sanitize-recover=all). Part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-all}
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run() {  # run NAME SANITIZERS
  local dir=build-$1 start=$(date +%s)
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTC_SANITIZE="$2" >/dev/null
  cmake --build "$dir" -j"$(nproc)"
  ctest --test-dir "$dir" --output-on-failure -j2
  echo "sanitize: $1 ($2) took $(( $(date +%s) - start )) s"
}
if [ "$which" = address ] || [ "$which" = all ]; then
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1 run asan address,undefined
fi
if [ "$which" = thread ] || [ "$which" = all ]; then
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 run tsan thread
fi

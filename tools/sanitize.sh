#!/usr/bin/env bash
# sanitize.sh [address|thread|all] — builds libtc and the whole test suite under sanitizers
# and runs it: ASan+UBSan (build-asan/, leak detection on) and ThreadSanitizer (build-tsan/).
# Any sanitizer report fails the test that caused it (-fno-sanitize-recover=all). Part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-all}
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Halide compiles on a stack of its own reached with swapcontext, which ASan and TSan do not
# support (false reports after an exception thrown there): compile on the caller's stack.
export HL_COMPILER_STACK_SIZE=0
# The e2e tests labelled `knob-variant` (the cuda corpus, random sizes and NVRTC again at other
# knob settings: tests of the generated code, which sanitizers do not change) run in the plain
# build only; under ASan they took 15 minutes of test time on a 2-core VM and put CI near its
# 90-minute limit. One variant, e2e.cuda.corpus_shared_unroll_tree, is not so labelled: it keeps
# the shared-memory, unrolling and lane-reduction paths of the code generator under ASan.
run() {  # run NAME SANITIZERS [CMAKE ARGS...]
  local dir=build-$1 san=$2 start=$(date +%s)
  shift 2
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTC_SANITIZE="$san" "$@" >/dev/null
  cmake --build "$dir" -j"$(nproc)"
  ctest --test-dir "$dir" --output-on-failure -j2 -LE knob-variant
  echo "sanitize: $dir ($san) took $(( $(date +%s) - start )) s"
}
if [ "$which" = address ] || [ "$which" = all ]; then
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1 run asan address,undefined
fi
if [ "$which" = thread ] || [ "$which" = all ]; then
  # The e2e corpus is single-threaded Python; under TSan it runs on the reference backend only
  # (the cpu backend's JIT reserves address space that TSan's shadow memory can fail to map
  # under memory pressure; the cuda emulation is single-threaded host code). The ABI tests,
  # threads included, use the cpu backend here too.
  # ignore_noninstrumented_modules: libHalide and LLVM are not instrumented; TSan cannot see the
  # synchronisation of their function-local statics and reported their first use from two
  # compiling threads as races (issue 10's measurements; libtc's own code stays checked).
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1 \
    run tsan thread -DTC_E2E_BACKENDS=reference -DTC_E2E_CUDA_EMULATION=OFF
fi

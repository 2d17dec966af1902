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
# Tests labelled `plain-only` run in the plain build only: the cuda corpus and random sizes
# emulated again at other knob settings, NVRTC at the default and at atomic knobs (tests of the
# generated code and of NVRTC, code no sanitizer sees into; the libtc code they run — isl
# scheduling, the printer, the NVRTC wrapper — runs under ASan in e2e.cuda.<case>,
# e2e.cuda.nvrtc_corpus_other_knobs (shared memory, unrolling, lane reductions),
# e2e.cuda.backend and the differential fuzzer's cuda run), and fuzz.diff.smoke (CI's
# differential step runs 900 programs on this build). docs/design/reliability.md has the table of
# what each sanitizer covers and links the times.
# Line tables (-g1): reports keep file:line. ASan+UBSan at -O0: the build took 577 s at -O1 and
# 311 s at -O0, its tests 755 s and 847 s (most of their time is in Halide, LLVM, NumPy and the
# host compiler, which are not instrumented). ThreadSanitizer stays at -O1: its build (211 s)
# is already a third of ASan's at -O1.
run() {  # run NAME SANITIZERS OPT EXCLUDED-LABELS [CMAKE ARGS...]
  local dir=build-$1 san=$2 opt=$3 excluded=$4 start=$(date +%s)
  shift 4
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="$opt -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$opt -g1 -DNDEBUG" \
    -DTC_SANITIZE="$san" "$@" >/dev/null
  cmake --build "$dir" -j"$(nproc)"
  local built=$(date +%s)
  ctest --test-dir "$dir" --output-on-failure -j2 -LE "$excluded"
  echo "sanitize: $dir ($san) took $(( $(date +%s) - start )) s (build $(( built - start )) s, tests $(( $(date +%s) - built )) s)"
}
if [ "$which" = address ] || [ "$which" = all ]; then
  # intercept_tls_get_addr=0: the sanitizer runtime's DTLS tracking can take a block of
  # dynamic TLS for an old glibc's header by its address alone (google/sanitizers#1322), then
  # LeakSanitizer scans a bogus range at exit and dies ("Tracer caught signal 11") after a
  # passing test, depending on where the loader put the libraries NVRTC opens. Without it
  # LeakSanitizer still scans every thread's static TLS; dynamic TLS holds no libtc pointer.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1:intercept_tls_get_addr=0 \
    run asan address,undefined -O0 plain-only
fi
if [ "$which" = thread ] || [ "$which" = all ]; then
  # ThreadSanitizer reports races between threads: it runs the tests that start threads (the
  # ABI tests, threads and parallel compiles included; the thread pool under every cpu kernel;
  # the tuner's compile threads; the cache's concurrent writers; the bindings; e2e.regressions and
  # e2e.random_sizes, whose cpu kernels run on the thread pool). The one-case corpus tests are
  # left out (TC_E2E_BACKENDS empty). Until 2026-11 TSan ran them on the reference backend, a
  # single-threaded interpreter called from single-threaded Python, where TSan has nothing to
  # check (ASan+UBSan run them all); on the cpu backend they never ran under TSan (its shadow
  # memory and the JIT's address-space reservations fail under memory pressure), and the cuda
  # emulation runs its threads one at a time on one host thread. The gtest programs labelled
  # single-threaded (the cuda backend's, cpu_targets') start no thread: left out too (CudaResources
  # alone took 25 s of NVRTC under TSan). The schedule's tests (label kernel-bits) check the
  # values of JIT-compiled code, which TSan does not see into; the thread pool their kernels run
  # on runs under it here in abi.test_threads, e2e.random_sizes, e2e.regressions, the bindings
  # and the GETT tests (Contraction.*, whose packing and micro-kernels are libtc's own code).
  # ignore_noninstrumented_modules: libHalide and LLVM are not instrumented; TSan cannot see the
  # synchronisation of their function-local statics and reported their first use from two
  # compiling threads as races (libtc's own code stays checked).
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1 \
    run tsan thread -O1 "plain-only|single-threaded|kernel-bits" -DTC_E2E_BACKENDS= -DTC_E2E_CUDA_EMULATION=OFF -DTC_FRONT_END_TESTS=OFF
fi

#!/usr/bin/env bash
# difftest.sh [PROGRAMS] [BUILD_DIR] [difftest.py options] — the differential program fuzzer
# (tests/fuzz/diff) as CI runs it: PROGRAMS random TC programs (default 600) run on the cpu
# (or, with `--backend cuda --option cuda.emulate=1`, the cuda) and reference backends of
# BUILD_DIR's libtc (default build-asan: ASan+UBSan, so the reference — the oracle — runs under
# UBSan, and any sanitizer report is a crash the fuzzer reports). The seed is derived from the
# source tree (TC_DIFFTEST_SEED overrides it), so a run is reproducible: the same sources, seed
# and count give the same programs. Failing cases are written, minimised, under BUILD_DIR/difftest.
# Exits non-zero on any disagreement, crash or hang. For an hour: see docs/design/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/.."
programs=${1:-600}
build=${2:-build-asan}
shift $(( $# < 2 ? $# : 2 ))
extra=("$@")  # e.g. --backend cuda --option cuda.emulate=1
tag=$(printf '%s' "${extra[*]:-}" | tr -c 'A-Za-z0-9.=\n' '_' | sed 's/^_*//')
lib=$build/src/libtc.so
[ -e "$lib" ] || { echo "difftest.sh: no $lib (build it first)"; exit 2; }
# The seed: src/'s tree id, so the programs change exactly when the compiler does.
seed=${TC_DIFFTEST_SEED:-$(( 0x$(git rev-parse --short=7 HEAD:src 2>/dev/null || echo 1) ))}
env=(TC_LIBRARY="$lib")
if grep -q '^TC_SANITIZE:STRING=.*address' "$build/CMakeCache.txt" 2>/dev/null; then
  # HL_COMPILER_STACK_SIZE=0: Halide compiles on the caller's stack instead of switching to its
  # own with swapcontext, which ASan does not support (it reports false stack errors after an
  # exception thrown there).
  env+=(LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libstdc++.so)"
        ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
        HL_COMPILER_STACK_SIZE=0)
fi
echo "difftest.sh: seed $seed, $programs programs, $lib ${extra[*]:-}"
# Programs run on every core at once (--jobs: the same programs and report as one at a time).
env "${env[@]}" /usr/bin/python3 tests/fuzz/diff/difftest.py --seed "$seed" --programs "$programs" \
  --jobs "${TC_DIFFTEST_JOBS:-$(nproc)}" --out "$build/difftest${tag:+-$tag}" --minimize-budget 60 --timeout 120 \
  "${extra[@]}"

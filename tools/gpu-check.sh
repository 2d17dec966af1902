#!/usr/bin/env bash
# gpu-check.sh — the GPU run in one go, on a machine with an NVIDIA GPU, its driver,
# PyTorch with CUDA and compute-sanitizer (the device machine), from the repository root, with
# the library built on the usual machine from the same sources carried along: .gpu/ made by
# tools/gpu-pack.sh (stripped libtc, the candidate runner, the runtime libraries' .debs; what
# fits the device tool's 64 MiB carry limit), else build/ with .bundle/:
#   1. the device and driver (nvidia-smi);
#   2. the e2e corpus on backend=cuda with real kDLCUDA tensors (PyTorch CUDA tensors through
#      the Python binding) against NumPy's expectations: default knobs, then other knobs
#      (shared memory, unrolling, reductions across lanes by shuffles and by atomics, the row
#      route forced, matrix products through cuBLAS: cuda.blas=1);
#   3. the Python binding's tests (PyTorch CUDA tensors in and out included); tc_tune on GPU
#      tensors, candidates in the candidate runner, some crashing it (tests/gpu/tune_on_gpu.py);
#      tc.custom_op on CUDA tensors, gradcheck, meta tensors and torch.compile(fullgraph=True)
#      (tests/gpu/custom_op_on_gpu.py);
#   4. compute-sanitizer memcheck and racecheck on a few kernels (matmul, softmax, a gather, a
#      scatter), racecheck and synccheck with shared memory and shuffles and on the row route,
#      memcheck of a matmul through cuBLAS;
#   5. where a call's time goes, GPU and host (bench/gpu_call.py); the benchmark kernels
#      against PyTorch eager CUDA (bench/gpu.py), default knobs and after
#      a short tc_tune; matrix products against cuBLAS: generated, cuda.blas=1, TF32, float16
#      and bfloat16 (bench/gpu_gemm.py).
# Everything is logged under ${OUT:-gpu-check-out}/ (with GPU_CHECK_TAR=FILE, the logs go to a
# temporary folder and are packed into FILE instead: the device tool returns at most 8 files);
# the exit status is non-zero if any step failed. GPU_CHECK_ONLY=REGEX runs only the steps
# whose names match (the device tool allows 10 minutes a call: run the checks and the
# benchmarks in two calls); each step is stopped after GPU_CHECK_STEP_TIMEOUT seconds (600).
# GPU_CHECK_JOBS=N runs up to N checks at once (the GPU and the CPUs shared; their verdicts are
# printed at the end in order); the benchmarks always run alone, after every check has ended.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -n "${GPU_CHECK_TAR:-}" ]; then out=$(mktemp -d); else out=${OUT:-gpu-check-out}; fi
mkdir -p "$out"
only=${GPU_CHECK_ONLY:-.}
step_timeout=${GPU_CHECK_STEP_TIMEOUT:-600}
if [ -f .gpu/lib/libtc.so ]; then
  source .gpu/bundle/unpack.sh
  export TC_LIBRARY=$PWD/.gpu/lib/libtc.so LD_LIBRARY_PATH=$PWD/.gpu/lib:$PWD/.gpu/deps:$LD_LIBRARY_PATH  # the runner's libtc too
else
  [ -f .bundle/unpack.sh ] && source .bundle/unpack.sh
  export TC_LIBRARY=$PWD/build/src/libtc.so
fi
export PYTHONPATH=$PWD/bindings/python:$PWD/tests/e2e
py=${PYTHON:-python3}
status=0
parallel=${GPU_CHECK_JOBS:-1}
steps=()
run_step() {  # run_step NAME COMMAND...: runs it, logs to $out/NAME.log, its verdict to $out/NAME.result
  local name=$1 t0=$SECONDS; shift
  if timeout -k 10 "$step_timeout" "$@" > "$out/$name.log" 2>&1; then
    echo "   ok ($((SECONDS - t0)) s): $(tail -n 1 "$out/$name.log")" > "$out/$name.result"
  else echo "   FAILED ($((SECONDS - t0)) s): $(tail -n 3 "$out/$name.log")" > "$out/$name.result"; fi
}
report() { cat "$out/$1.result"; grep -q '^   FAILED' "$out/$1.result" && status=1; return 0; }
step() {  # step NAME COMMAND...: with GPU_CHECK_JOBS=N, up to N steps at once (benchmarks alone)
  local name=$1
  [[ $name =~ $only ]] || return 0
  echo "== $name: ${*:2}"
  if (( parallel > 1 )) && [[ $name != bench* ]]; then
    while (( $(jobs -rp | wc -l) >= parallel )); do wait -n; done
    steps+=("$name"); run_step "$@" &
  else
    wait; run_step "$@"; report "$name"
  fi
}
step device nvidia-smi
step corpus "$py" tests/gpu/corpus_on_gpu.py
step corpus_other_knobs "$py" tests/gpu/corpus_on_gpu.py --option cuda.fusion=min --option cuda.tile=8x4 \
  --option cuda.block=16x4 --option cuda.grid=3x2 --option cuda.shared=1 --option cuda.unroll=4
step corpus_shared_tree "$py" tests/gpu/corpus_on_gpu.py --option cuda.shared=1 --option cuda.unroll=32 \
  --option cuda.reduction=tree --option cuda.rowwise=0
step corpus_atomic "$py" tests/gpu/corpus_on_gpu.py --option cuda.reduction=atomic --option cuda.fusion=min \
  --option cuda.rowwise=0
step corpus_block_tree "$py" tests/gpu/corpus_on_gpu.py --option cuda.reduction=tree --option cuda.block=64x4 \
  --option cuda.tile=16x16x64 --option cuda.rowwise=0
step corpus_rowwise "$py" tests/gpu/corpus_on_gpu.py --option cuda.rowwise=1
step corpus_blas "$py" tests/gpu/corpus_on_gpu.py --option cuda.blas=1
step corpus_tf32 "$py" tests/gpu/corpus_on_gpu.py --option cuda.tf32=1 --tf32
step python_tests "$py" -m unittest discover -s bindings/python/tests -v
if [ -x .gpu/lib/tc/faulty-runner ]; then faulty=.gpu/lib/tc/faulty-runner; else faulty=build/tests/tune/faulty-runner; fi
step tune_on_gpu "$py" tests/gpu/tune_on_gpu.py --faulty-runner "$faulty"
step custom_op "$py" tests/gpu/custom_op_on_gpu.py
for k in accept.matmul accept.softmax_temporaries accept.lut_embedding_bag accept.scatter_histogram_int32; do
  step "memcheck.$k" compute-sanitizer --tool memcheck --error-exitcode 1 "$py" tests/gpu/corpus_on_gpu.py "$k"
  step "racecheck.$k" compute-sanitizer --tool racecheck --error-exitcode 1 "$py" tests/gpu/corpus_on_gpu.py "$k"
done
for k in accept.softmax_temporaries accept.layernorm; do  # the row route's trees and barriers
  step "racecheck.rowwise.$k" compute-sanitizer --tool racecheck --error-exitcode 1 "$py" tests/gpu/corpus_on_gpu.py \
    --option cuda.rowwise=1 --option cuda.block=64x2 "$k"
  step "synccheck.rowwise.$k" compute-sanitizer --tool synccheck --error-exitcode 1 "$py" tests/gpu/corpus_on_gpu.py \
    --option cuda.rowwise=1 --option cuda.block=64x2 "$k"
done
step "memcheck.blas.accept.matmul" compute-sanitizer --tool memcheck --error-exitcode 1 "$py" tests/gpu/corpus_on_gpu.py \
  --option cuda.blas=1 accept.matmul
for k in accept.matmul accept.softmax_temporaries; do  # shared memory and the lanes' shuffles and atomics
  step "racecheck.shared_tree.$k" compute-sanitizer --tool racecheck --error-exitcode 1 "$py" tests/gpu/corpus_on_gpu.py \
    --option cuda.shared=1 --option cuda.reduction=tree "$k"
  step "synccheck.shared_tree.$k" compute-sanitizer --tool synccheck --error-exitcode 1 "$py" tests/gpu/corpus_on_gpu.py \
    --option cuda.shared=1 --option cuda.reduction=tree "$k"
  step "memcheck.atomic.$k" compute-sanitizer --tool memcheck --error-exitcode 1 "$py" tests/gpu/corpus_on_gpu.py \
    --option cuda.reduction=atomic "$k"
  step "synccheck.block_tree.$k" compute-sanitizer --tool synccheck --error-exitcode 1 "$py" tests/gpu/corpus_on_gpu.py \
    --option cuda.reduction=tree --option cuda.block=128x2 --option cuda.tile=16x16x128 "$k"
  step "racecheck.block_tree.$k" compute-sanitizer --tool racecheck --error-exitcode 1 "$py" tests/gpu/corpus_on_gpu.py \
    --option cuda.reduction=tree --option cuda.block=128x2 --option cuda.tile=16x16x128 "$k"
done
step bench_call "$py" bench/gpu_call.py
step bench "$py" bench/gpu.py
step bench_tuned "$py" bench/gpu.py --tune 60 --only sgemm,conv2d,softmax,lut1
step bench_gemm "$py" bench/gpu_gemm.py --tiles
wait; for name in "${steps[@]}"; do echo "== $name"; report "$name"; done
echo "gpu-check: $( [ $status = 0 ] && echo all steps passed || echo some steps FAILED ) (logs in $out/)"
[ -n "${GPU_CHECK_TAR:-}" ] && tar czf "$GPU_CHECK_TAR" -C "$out" . && echo "gpu-check: logs packed in $GPU_CHECK_TAR"
exit $status

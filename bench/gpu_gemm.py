"""gpu_gemm.py - matrix products on an NVIDIA GPU: libtc's generated kernel (default knobs), libtc's
library route (cuda.blas=1) and, for float32, TF32 (cuda.tf32=1) against PyTorch eager CUDA
(cuBLAS; TF32 off in matmul, PyTorch's default, except for the tf32 row), each in a process of
its own, on the same inputs, median of CUDA-event times; the results checked against PyTorch's.
Gives the shares of cuBLAS that docs/guide/gpus.md quotes. Part of tools/gpu-check.sh.

    TC_LIBRARY=build/src/libtc.so PYTHONPATH=bindings/python python3 bench/gpu_gemm.py [--only a,b]
        [--reps 30] [--tiles]

--tiles: the generated kernel also at each tensor-core tile auto did not take (float16 and
bfloat16: 128x128x16, 64x64x16; TF32: 64x64x8), one row each ("libtc-tile-128x128x16"), and for
float32 compiled for 2 blocks an SM (cuda.gemm_blocks=2: at most 128 registers; "libtc-blocks-2").
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu import time_cuda  # noqa: E402

# name: (dtype, M, K, N, B transposed)
CASES = {
    "sgemm_1024": ("float32", 1024, 1024, 1024, False),
    "tmm_128x1024x1000": ("float32", 128, 1024, 1000, True),
    "sgemm_4096": ("float32", 4096, 4096, 4096, False),
    "hgemm_4096": ("float16", 4096, 4096, 4096, False),
    "bgemm_4096": ("bfloat16", 4096, 4096, 4096, False),
}
# framework: libtc options (None: PyTorch)
FRAMEWORKS = {"torch": None, "libtc": {}, "libtc-blas": {"cuda.blas": "1"}}
TF32 = {"torch-tf32": None, "libtc-tf32": {"cuda.tf32": "1"}}
# --tiles: the tensor-core tiles besides auto's, per dtype
OTHER_TILES = {"float16": ["128x128x16", "64x64x16"], "bfloat16": ["128x128x16", "64x64x16"], "float32": ["64x64x8"]}


def options_of(framework):
    """libtc's options for a framework's name (None: PyTorch)."""
    if framework.startswith("libtc-blocks-"):
        return {"cuda.gemm_blocks": framework[len("libtc-blocks-"):]}
    if framework.startswith("libtc-tile-"):
        return {"cuda.gemm_tile": framework[len("libtc-tile-"):]}
    if framework.startswith("libtc-tf32-tile-"):
        return {"cuda.tf32": "1", "cuda.gemm_tile": framework[len("libtc-tf32-tile-"):]}
    return {**FRAMEWORKS, **TF32}[framework]


def frameworks_of(dtype, tiles):
    names = list(FRAMEWORKS) + (list(TF32) if dtype == "float32" else [])
    if tiles:
        prefix = "libtc-tf32-tile-" if dtype == "float32" else "libtc-tile-"
        names += [prefix + t for t in OTHER_TILES[dtype]]
        if dtype == "float32":
            names.append("libtc-blocks-2")
    return names


def source(dtype, transposed):
    b = "%s(N,K) B" % dtype if transposed else "%s(K,N) B" % dtype
    read = "B(j,k)" if transposed else "B(k,j)"
    return "def mm(%s(M,K) A, %s) -> (C) {\n  C(i,j) +=! A(i,k) * %s\n}\n" % (dtype, b, read)


def child(framework, name, reps):
    import torch
    dtype, m, k, n, transposed = CASES[name]
    tdtype = getattr(torch, dtype)
    g = torch.Generator().manual_seed(0)
    a = torch.randn(m, k, generator=g).to(tdtype).cuda()
    b = (torch.randn(n, k, generator=g) if transposed else torch.randn(k, n, generator=g)).to(tdtype).cuda()
    torch.backends.cuda.matmul.allow_tf32 = framework == "torch-tf32"
    t0 = time.perf_counter()
    options = options_of(framework)
    if options is None:
        fn = (lambda: a @ b.T) if transposed else (lambda: a @ b)
    else:
        import tc
        kernel = tc.define(source(dtype, transposed)).compile("mm", a, b, backend="cuda", cache="off", **options)
        fn = lambda: kernel(a, b)  # noqa: E731
        info = kernel.describe()
        print(info, file=sys.stderr)
    compile_s = time.perf_counter() - t0
    med, best = time_cuda(fn, 3, reps)
    out = fn()
    path = tempfile.mktemp(suffix=".npy")
    np.save(path, out.float().cpu().numpy())
    print(json.dumps({"median_ms": med, "best_ms": best, "result": path, "compile_s": compile_s}))


def run_child(framework, name, reps):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", framework, name, "--reps", str(reps)]
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=180)
        print("== %s %s\n%s" % (framework, name, r.stderr), file=sys.stderr)
    except subprocess.TimeoutExpired:
        return {"error": "no result in 180 s"}
    if r.returncode != 0:
        return {"error": " ".join((r.stderr or r.stdout).strip().splitlines()[-1:])[:200]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--child", nargs=2)
    ap.add_argument("--tiles", action="store_true")
    args = ap.parse_args()
    if args.child:
        return child(args.child[0], args.child[1], args.reps)
    names = args.only.split(",") if args.only else list(CASES)
    print("| product | framework | median ms | best ms | TFLOP/s | share of torch | max rel. error | compile s |")
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        dtype, m, k, n, _ = CASES[name]
        flops = 2.0 * m * n * k
        frameworks = frameworks_of(dtype, args.tiles)
        rows = {f: run_child(f, name, args.reps) for f in frameworks}
        for f in frameworks:
            r = rows[f]
            if "error" in r:
                print("| %s | %s | error: %s | | | | | |" % (name, f, r["error"]))
                continue
            ref = rows["torch-tf32" if "tf32" in f else "torch"]
            share, err = "-", "-"
            if "median_ms" in ref:
                share = "%.2f" % (ref["median_ms"] / r["median_ms"])
                got, want = np.load(r["result"]), np.load(ref["result"])
                err = "%.2g" % (np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))
            print("| %s | %s | %.3f | %.3f | %.1f | %s | %s | %.1f |" % (
                name, f, r["median_ms"], r["best_ms"], flops / r["median_ms"] / 1e9, share, err, r["compile_s"]))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())

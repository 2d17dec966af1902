"""gpu.py - the benchmark kernels (bench/kernels.py) on an NVIDIA GPU: libtc's cuda backend
against PyTorch eager CUDA, each framework in a process of its own, on the same inputs (made
from the same seed), times from CUDA events (median of --reps runs after --warmup), results
checked against each other. Part of tools/gpu-check.sh; needs a GPU, PyTorch with CUDA and
libtc's Python binding.

    TC_LIBRARY=build/src/libtc.so PYTHONPATH=bindings/python python3 bench/gpu.py [--only a,b]
        [--reps 50] [--tune SECONDS] [--quick] [--child-timeout 120]

--tune SECONDS: before timing, `tc_tune` searches the cuda knobs for that long per kernel (into
a temporary cache) and libtc is timed with the tuned kernel too.

Both sides compute in float32: PyTorch's cuDNN convolutions run with TF32 off
(torch.backends.cudnn.allow_tf32, on by default in PyTorch, rounds their operands to 10 bits:
conv2d and group_conv then disagree with libtc by about 3e-4 and run on tensor cores), as its
matmuls are by default. --torch-tf32 keeps PyTorch's default instead (the time a user who
leaves it gets; compare with libtc's cuda.tf32=1).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness import make_inputs, max_rel_error, tolerance, tclib  # noqa: E402
from kernels import KERNELS  # noqa: E402


def cuda_inputs(kernel, sizes):
    import torch
    program = tclib.Program(kernel.source.read_text())
    arrays = make_inputs(program, kernel, sizes, np.random.default_rng(0))
    return [torch.from_numpy(a).cuda() for a in arrays]


def time_cuda(fn, warmup, reps):
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return float(np.median(times)), float(min(times))


def child(framework, name, quick, warmup, reps, cache, torch_tf32=False):
    """One framework, one kernel: prints a JSON line (median and best ms, result file, seconds
    per phase)."""
    phases, t0 = {}, time.perf_counter()

    def phase(what):
        nonlocal t0
        phases[what] = round(time.perf_counter() - t0, 3)
        t0 = time.perf_counter()

    import torch
    import tc
    torch.backends.cudnn.allow_tf32 = torch_tf32
    phase("import")
    kernel = next(k for k in KERNELS if k.name == name)
    sizes = kernel.quick if quick else kernel.sizes
    ins = cuda_inputs(kernel, sizes)
    phase("inputs")
    if framework == "torch":
        fn = lambda: kernel.torch_fn(sizes, *ins)  # noqa: E731
    else:
        prog = tc.define(kernel.source.read_text())
        options = {"backend": "cuda", "cache": cache or "off"}
        if framework == "libtc-tuned":
            prog.tune(name, *ins, budget=int(os.environ["TC_GPU_TUNE"]), progress=False, **options)
        k = prog.compile(name, *ins, **options)
        fn = lambda: k(*ins)  # noqa: E731
    phase("compile")
    med, best = time_cuda(fn, warmup, reps)
    phase("timing")
    out = fn()
    outs = out if isinstance(out, tuple) else (out,)
    path = tempfile.mktemp(suffix=".npz")
    np.savez(path, *[o.cpu().numpy() for o in outs])
    phase("result")
    print(json.dumps({"median_ms": med, "best_ms": best, "result": path, "seconds": phases}))


def run_child(framework, name, args, cache=None, env=None):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", framework, name, "--reps", str(args.reps),
           "--warmup", str(args.warmup)] + (["--quick"] if args.quick else []) + (["--cache", cache] if cache else []) + \
          (["--torch-tf32"] if args.torch_tf32 else [])
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                           timeout=args.child_timeout + args.tune)
    except subprocess.TimeoutExpired:
        return {"error": "no result in %d s" % (args.child_timeout + args.tune)}
    finally:  # where a child's time goes, on stderr: the table stays on stdout
        print("%s %s: %.1f s" % (framework, name, time.perf_counter() - t0), file=sys.stderr)
    if r.returncode != 0:
        return {"error": (r.stderr or r.stdout).strip().splitlines()[-1:]}
    result = json.loads(r.stdout.strip().splitlines()[-1])
    print("  %s" % result["seconds"], file=sys.stderr)
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--tune", type=int, default=0)
    ap.add_argument("--child-timeout", type=int, default=120, help="seconds a child may take (plus --tune)")
    ap.add_argument("--child", nargs=2)
    ap.add_argument("--cache")
    ap.add_argument("--torch-tf32", action="store_true", help="PyTorch's default: cuDNN convolutions through TF32")
    args = ap.parse_args()
    if args.child:
        return child(args.child[0], args.child[1], args.quick, args.warmup, args.reps, args.cache, args.torch_tf32)
    names = args.only.split(",") if args.only else [k.name for k in KERNELS]
    frameworks = ["torch", "libtc"] + (["libtc-tuned"] if args.tune else [])
    env = dict(os.environ, TC_GPU_TUNE=str(args.tune))
    print("| kernel | " + " | ".join("%s ms (median/best)" % f for f in frameworks) + " | libtc/torch | agree |")
    print("|---|" + "---|" * (len(frameworks) + 2))
    for name in names:
        kernel = next(k for k in KERNELS if k.name == name)
        cache = tempfile.mkdtemp(prefix="tc-gpu-bench-")
        rows = {f: run_child(f, name, args, cache if f == "libtc-tuned" else None, env) for f in frameworks}
        cells, agree = [], "?"
        for f in frameworks:
            r = rows[f]
            cells.append("error: %s" % r["error"] if "error" in r else "%.3f / %.3f" % (r["median_ms"], r["best_ms"]))
        if all("result" in rows[f] for f in ("torch", "libtc")):
            ref, got = np.load(rows["torch"]["result"]), np.load(rows["libtc"]["result"])
            err = max(max_rel_error(got[k], ref[k]) for k in ref.files)
            agree = "yes" if err <= tolerance(kernel.reduction(kernel.quick if args.quick else kernel.sizes)) \
                else "NO (%.2g)" % err
            ratio = "%.2f" % (rows["libtc"]["median_ms"] / rows["torch"]["median_ms"])
        else:
            ratio = "-"
        print("| %s | %s | %s | %s |" % (name, " | ".join(cells), ratio, agree))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())

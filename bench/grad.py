"""grad.py - gradients: libtc's generated gradient kernels (tc_gradient, cpu backend) against
PyTorch's autograd backward, on the bench kernels at their bench sizes (--quick: small).

Fair in the way bench.py is (bench/README.md): each framework runs in a fresh process of its
own (libtc, then PyTorch, per run), with the same thread count set before either loads
(OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, libtc's threads= option, torch.set_num_threads),
warm-up calls untimed, medians of repeated calls, the load average recorded; --runs N repeats
the whole measurement so the runs' agreement shows. Both sides compute the same thing: the
gradients of every floating-point input for one given gradient of each output (PyTorch:
torch.autograd.grad on a recorded forward, retain_graph, so only the backward is timed;
libtc: the "<name>_grad" kernel, which recomputes the forward values it needs). The two
gradients are compared before anything is timed.

    python3 bench/grad.py [--threads 2] [--runs 2] [--reps 20] [--quick] [--kernels mm,...]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

DEFAULT_KERNELS = "sgemm,tmm,tbmm,conv2d,group_conv,fcrelu,mlp3,softmax,layernorm,lut1,maxpool"


def median_ms(fn, warmup, reps, budget_s=20.0):
    for _ in range(warmup):
        fn()
    times, start = [], time.perf_counter()
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if time.perf_counter() - start > budget_s:
            break
    return statistics.median(times) * 1e3, len(times)


def child_libtc(args, work, names):
    import harness  # after the thread variables are set
    from kernels import KERNELS
    tclib = harness.tclib
    out = {}
    for k in [k for k in KERNELS if k.name in names]:
        data = np.load(os.path.join(work, k.name + ".npz"))
        inputs = [data["in%d" % i] for i in range(int(data["n_in"]))]
        d_outs = [data["dout%d" % i] for i in range(int(data["n_dout"]))]
        prog = tclib.Program(k.source.read_text(), k.name + ".tc")
        grad = prog.gradient(k.name)
        opts = {"backend": "cpu", "threads": str(args.threads), "cache": "off"}
        t0 = time.perf_counter()
        kernel = grad.compile(k.name + "_grad", inputs + d_outs, opts)
        compile_ms = (time.perf_counter() - t0) * 1e3
        outs = [np.empty(s, d) for d, s in kernel.output_info()]
        ms, n = median_ms(kernel.bind(inputs + d_outs, outs), 2, args.reps)
        fwd = prog.compile(k.name, inputs, opts)
        fouts = [np.empty(s, d) for d, s in fwd.output_info()]
        fwd_ms, _ = median_ms(fwd.bind(inputs, fouts), 2, args.reps)
        np.savez(os.path.join(work, k.name + ".libtc.npz"), *outs)
        out[k.name] = {"grad_ms": ms, "calls": n, "forward_ms": fwd_ms, "compile_ms": compile_ms,
                       "statements": grad.source().count("\n  ") }
    return out


def child_torch(args, work, names):
    import torch
    torch.set_num_threads(args.threads)
    from kernels import KERNELS
    out = {}
    for k in [k for k in KERNELS if k.name in names]:
        data = np.load(os.path.join(work, k.name + ".npz"))
        sizes = json.loads(str(data["sizes"]))
        inputs = [torch.from_numpy(data["in%d" % i]) for i in range(int(data["n_in"]))]
        leaves = [x.requires_grad_() if x.is_floating_point() else x for x in inputs]
        result = k.torch_fn(sizes, *leaves)
        results = list(result) if isinstance(result, tuple) else [result]
        d_outs = [torch.from_numpy(data["dout%d" % i]) for i in range(int(data["n_dout"]))]
        wrt = [x for x in leaves if x.is_floating_point()]

        def backward():
            return torch.autograd.grad(results, wrt, d_outs, retain_graph=True)
        ms, n = median_ms(backward, 2, args.reps)
        np.savez(os.path.join(work, k.name + ".torch.npz"), *[g.numpy() for g in backward()])
        out[k.name] = {"grad_ms": ms, "calls": n}
    return out


def prepare(args, work, names):
    """Inputs and output gradients, once, for both frameworks."""
    import harness
    from kernels import KERNELS
    rng = np.random.default_rng(1)
    for k in [k for k in KERNELS if k.name in names]:
        sizes = k.quick if args.quick else k.sizes
        prog = harness.tclib.Program(k.source.read_text(), k.name + ".tc")
        inputs = harness.make_inputs(prog, k, sizes, rng)
        shapes = prog.infer_outputs(k.name, inputs)
        d_outs = [(rng.random(shape, dtype=dtype) * 2 - 1) for dtype, shape in shapes]
        arrays = {"in%d" % i: a for i, a in enumerate(inputs)}
        arrays.update({"dout%d" % i: a for i, a in enumerate(d_outs)})
        np.savez(os.path.join(work, k.name + ".npz"), n_in=len(inputs), n_dout=len(d_outs),
                 sizes=json.dumps(sizes), **arrays)


def spawn(args, mode, work, names):
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OPENBLAS_NUM_THREADS=str(args.threads),
               MKL_NUM_THREADS=str(args.threads))
    cmd = [sys.executable, os.path.abspath(__file__), "--child", mode, "--work", work, "--threads",
           str(args.threads), "--reps", str(args.reps), "--kernels", ",".join(names)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s child failed:\n%s" % (mode, p.stderr[-3000:]))
    return json.loads(p.stdout.strip().splitlines()[-1])


def agreement(work, name):
    a = np.load(os.path.join(work, name + ".libtc.npz"))
    b = np.load(os.path.join(work, name + ".torch.npz"))
    worst = 0.0
    for x, y in zip([a[f] for f in a.files], [b[f] for f in b.files]):
        scale = max(1.0, float(np.max(np.abs(y)))) if y.size else 1.0
        worst = max(worst, float(np.max(np.abs(x - y))) / scale if x.size else 0.0)
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--kernels", default=DEFAULT_KERNELS)
    ap.add_argument("--child")
    ap.add_argument("--work")
    args = ap.parse_args()
    names = args.kernels.split(",")
    if args.child:
        fn = child_libtc if args.child == "libtc" else child_torch
        print(json.dumps(fn(args, args.work, names)))
        return 0
    print("load average at start: %.2f %.2f %.2f" % os.getloadavg())
    if os.getloadavg()[0] > 0.5:
        print("warning: load average above 0.5; the machine is not idle")
    with tempfile.TemporaryDirectory(prefix="tc-grad-bench-") as work:
        prepare(args, work, names)
        runs = []
        for r in range(args.runs):
            tc, pt = spawn(args, "libtc", work, names), spawn(args, "pytorch", work, names)
            runs.append((tc, pt))
        runs_label = " / ".join("run %d" % (i + 1) for i in range(args.runs))

        def per_run(values):
            return " / ".join("%.3f" % v for v in values)

        def agree(values):  # every run within +-10% of the runs' median
            mid = statistics.median(values)
            return "yes" if all(abs(v - mid) <= 0.10 * mid for v in values) else "no"
        print("| kernel | libtc forward ms | libtc gradient ms (%s) | PyTorch backward ms (%s) | gradient / PyTorch "
              "(%s) | runs within +-10%% (libtc, PyTorch) | max rel. diff | compile ms |" % ((runs_label,) * 3))
        print("|---|---:|---:|---:|---:|---|---:|---:|")
        for n in names:
            tc_ms = [r[0][n]["grad_ms"] for r in runs]
            pt_ms = [r[1][n]["grad_ms"] for r in runs]
            ratios = " / ".join("%.2f" % (a / b) for a, b in zip(tc_ms, pt_ms))
            print("| %s | %.3f | %s | %s | %s | %s, %s | %.1e | %.0f |" % (
                n, runs[0][0][n]["forward_ms"], per_run(tc_ms), per_run(pt_ms), ratios, agree(tc_ms), agree(pt_ms),
                agreement(work, n), runs[0][0][n]["compile_ms"]))
    print("load average at end: %.2f %.2f %.2f" % os.getloadavg())
    return 0


if __name__ == "__main__":
    sys.exit(main())

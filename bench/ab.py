#!/usr/bin/env python3
"""ab.py - libtc against libtc: one bench kernel compiled with two or more option sets in one
process, their calls alternated, so that every variant meets the same machine state.

bench.py times each framework in a process of its own, which is what a fair comparison of
frameworks needs; but on a VM whose speed drifts for minutes at a time (docs/design/cpu-backend.md:
"Small kernels vary between processes"), two libtc variants timed in processes a minute apart can differ by
2x for reasons that have nothing to do with them. A knob's effect is measured here instead:
the variants share a process, a thread pool and the same inputs, and are called in turn
(A B A B ..., in blocks of --block calls), so a drift slows all of them alike. The result is
each variant's median and minimum, and its median's ratio to the first variant's. Every
variant's outputs are checked against the first's (bit for bit unless --tolerance).

    /usr/bin/python3 bench/ab.py lut1 "checked=0" "checked=1"
    /usr/bin/python3 bench/ab.py fcrelu "" "cpu.panel=streamed" "cpu.panel=both" --threads 2

A variant is a space-separated list of KEY=VALUE options applied over backend=cpu,
threads=--threads, cache=off; "" is the default schedule. TC_LIBRARY names the library
(default: build/src/libtc.so). Run by hand on an idle machine, like bench.py; not part of CI.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("kernel", help="a bench kernel (bench/kernels/NAME.tc)")
    p.add_argument("variants", nargs="+", help='option sets, e.g. "checked=0" "checked=1"')
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--calls", type=int, default=1000, help="timed calls per variant (default 1000)")
    p.add_argument("--block", type=int, default=10, help="calls of one variant in a row (default 10)")
    p.add_argument("--tolerance", type=float, default=0.0,
                   help="largest relative difference from the first variant's outputs (default 0: bits)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="the kernel's --quick sizes (a smoke test)")
    p.add_argument("--source", help="read the kernel's def from this .tc file instead (same name and sizes):"
                   " a rewrite of a bench kernel timed against its knobs")
    p.add_argument("--describe", action="store_true",
                   help="print each variant's schedule (tc_kernel_describe) before timing")
    return p.parse_args(argv)


def options_of(text, threads, harness):
    """A variant's options: harness.libtc_options (the bench's own reading of KEY=VALUE over
    backend=cpu and threads) with the cache off; an item that is not KEY=VALUE is refused."""
    items = text.split()
    for item in items:
        if "=" not in item:
            sys.exit("ab.py: option %r is not KEY=VALUE" % item)
    args = argparse.Namespace(backend="cpu", threads=threads, option=["cache=off"] + items)
    return harness.libtc_options(args)


def main(argv):
    args = parse_args(argv)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.environ.setdefault("TC_LIBRARY", os.path.join(repo, "build", "src", "libtc.so"))
    import harness  # after the thread counts are set (it imports NumPy)
    from kernels import KERNELS

    kernel = next((k for k in KERNELS if k.name == args.kernel), None)
    if kernel is None:
        sys.exit("ab.py: no bench kernel %r (have: %s)" % (args.kernel, ", ".join(k.name for k in KERNELS)))
    source = args.source or str(kernel.source)
    with open(source) as f:
        program = harness.tclib.Program(f.read(), source)
    sizes = kernel.quick if args.quick else kernel.sizes
    inputs = harness.make_inputs(program, kernel, sizes, np.random.default_rng(args.seed))
    tensors = [harness.tclib.Tensor(a) for a in inputs]
    calls, outputs, compile_ms = [], [], []
    for text in args.variants:
        t0 = time.perf_counter()
        kernel_ = program.compile(kernel.name, tensors, harness.tclib.Options(options_of(text, args.threads, harness)))
        compile_ms.append((time.perf_counter() - t0) * 1e3)
        outs = [np.empty(shape, dtype) for dtype, shape in kernel_.output_info()]
        calls.append(kernel_.bind(inputs, outs))
        if args.describe:
            print("== %s\n%s" % (text or "(default)", kernel_.describe()))
        outputs.append(outs)
    for fn in calls:  # warm-up, and the outputs to compare
        for _ in range(3):
            fn()
    for v in range(1, len(calls)):
        err = harness.max_rel_error(outputs[v], outputs[0])
        if err > args.tolerance:
            sys.exit("ab.py: variant %r differs from %r by %.3g (relative)" % (
                args.variants[v], args.variants[0], err))
    times = [[] for _ in calls]
    load = os.getloadavg()[0]
    done = 0
    while done < args.calls:
        n = min(args.block, args.calls - done)
        for v, fn in enumerate(calls):
            for _ in range(n):
                t0 = time.perf_counter()
                fn()
                times[v].append(time.perf_counter() - t0)
        done += n
    print("%s, %d threads, %d calls per variant in blocks of %d, load average %.2f at the start%s" % (
        kernel.name, args.threads, args.calls, args.block, load, " (above 0.5: not an idle machine)" if load > 0.5 else ""))
    base = statistics.median(times[0])
    width = max(len(t or "(default)") for t in args.variants)
    for text, ts, c in zip(args.variants, times, compile_ms):
        med = statistics.median(ts)
        print("  %-*s  median %9.4f ms  min %9.4f ms  x%.3f  (compile %.0f ms)" % (
            width, text or "(default)", med * 1e3, min(ts) * 1e3, med / base, c))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main(sys.argv[1:])

#!/usr/bin/python3
"""compile_time.py - how long tc_compile takes on the cpu backend: each of the paper's 12
kernels (bench/kernels, at their --quick sizes) compiled from scratch (cache=off) under a few
knob sets, in one process, after a primer compile that pays the process's one-time set-up.
Prints each kernel's median compile time in ms per knob set and the sum of the medians. For
A/B between two builds, run it once with each library (TC_LIBRARY=... or --library), or pair
the two commands with farm-bench. Run by hand; not part of CI.

    /usr/bin/python3 bench/compile_time.py [--library PATH] [--reps N] [--only NAME,...]
        [--knobs 'K=V K=V' ...] [--json]

--knobs: one knob set per occurrence (space-separated K=V pairs; '' is the defaults). Default:
the defaults, and cpu.contract=0 (the contractions through the Halide pipeline, which the
default sends to the packed-GEMM route that compiles in about a millisecond).
"""
import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--library", help="libtc.so to load (default: $TC_LIBRARY, else build/src/libtc.so)")
    p.add_argument("--reps", type=int, default=3, help="compiles of each kernel per knob set (default 3)")
    p.add_argument("--only", help="comma-separated kernel names")
    p.add_argument("--knobs", action="append", help="a knob set, 'K=V K=V' (repeatable)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    return p.parse_args()


def main():
    args = parse_args()
    os.environ["TC_LIBRARY"] = args.library or os.environ.get("TC_LIBRARY") or str(REPO / "build/src/libtc.so")
    sys.path.insert(0, str(HERE))
    import numpy as np
    import harness
    from harness import tclib
    from procs import PRIMER_INPUT, PRIMER_SOURCE

    knob_sets = args.knobs if args.knobs else ["", "cpu.contract=0"]
    kernels = harness.selected_kernels(args)  # exits naming an unknown --only kernel
    base = {"backend": "cpu", "threads": "2", "cache": "off"}
    tclib.Program(PRIMER_SOURCE, "<primer>").compile("bench_primer", [PRIMER_INPUT], tclib.Options(base))
    rng = np.random.default_rng(0)
    result = {}
    for knobs in knob_sets:
        opts = dict(base, **dict(kv.split("=", 1) for kv in knobs.split()))
        options = tclib.Options(opts)
        per_kernel = result[knobs or "defaults"] = {}
        for k in kernels:
            program = tclib.Program(k.source.read_text(), str(k.source))
            tensors = [tclib.Tensor(a) for a in harness.make_inputs(program, k, k.quick, rng)]
            times = []
            for _ in range(args.reps):
                t0 = time.perf_counter()
                program.compile(k.name, tensors, options)
                times.append((time.perf_counter() - t0) * 1e3)
            per_kernel[k.name] = statistics.median(times)
    if args.json:
        print(json.dumps(result))
        return
    names = [k.name for k in kernels]
    sets = list(result)
    print("median compile ms (cache=off, %d compiles each), %s" % (args.reps, os.environ["TC_LIBRARY"]))
    print("%-12s" % "kernel" + "".join("%18s" % s[:18] for s in sets))
    for n in names:
        print("%-12s" % n + "".join("%18.1f" % result[s][n] for s in sets))
    print("%-12s" % "sum" + "".join("%18.1f" % sum(result[s].values()) for s in sets))


if __name__ == "__main__":
    main()

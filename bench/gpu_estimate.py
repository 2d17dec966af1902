"""gpu_estimate.py - the benchmark kernels (bench/kernels.py) profiled without a GPU: each compiled
for the cuda backend's emulation at its benchmark sizes and given to tc_kernel_profile, which
estimates its time on a named GPU (docs/guide/gpus.md, "Profiles without a GPU"). One row per kernel:
the estimate, what bounds it, and the figures behind it. No GPU needed; the sampled blocks run
on the host, so the big kernels take tens of seconds each.

    TC_LIBRARY=build/src/libtc.so /usr/bin/python3 bench/gpu_estimate.py [--gpu h200] [--only a,b]
        [--option KEY=VALUE]... [--quick]

--dump DIR instead writes, per kernel, the CUDA C and the launches of the libtc in TC_LIBRARY
(DIR/NAME.cu, DIR/NAME.launches: "kernel grid block" per line) for tools/dev/profile_text,
which profiles a text made by another commit's libtc with this one's profiler.
"""
import argparse
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness import make_inputs, tclib  # noqa: E402
from kernels import KERNELS  # noqa: E402

LAUNCH = re.compile(r"^  (\w+) grid (\d+x\d+x\d+) block (\d+x\d+x\d+)$")


TENSOR = re.compile(r"^  (input|output|temporary) (\w+): (\w+)\((.*)\)$")


def tensor_bytes(program, entry, sizes):
    """(name, bytes) of every tensor of def `entry` at `sizes`, from tc_program_describe."""
    out = []
    for line in program.describe(entry).splitlines():
        m = TENSOR.match(line)
        if m:
            n = 1
            # The extents, as a tuple expression over the sizes (they may call max and min).
            for d in eval("(%s,)" % m.group(4), {"max": max, "min": min}, dict(sizes)) if m.group(4) else []:
                n *= d
            out.append((m.group(2), n * np.dtype(m.group(3)).itemsize))
    return out


def dump(kernel, program, entry, sizes, base):
    """What tc-profile-text reads, for compiled `kernel` of def `entry` at `sizes`: base.cu (its
    code), base.launches ("kernel grid block" per line), base.tensors ("name bytes" per line)."""
    with open(base + ".cu", "w") as f:
        f.write(kernel.code())
    with open(base + ".launches", "w") as f:
        for line in kernel.describe().splitlines():
            m = LAUNCH.match(line)
            if m:
                f.write("%s %s %s\n" % m.groups())
    with open(base + ".tensors", "w") as f:
        for name, nbytes in tensor_bytes(program, entry, sizes):
            f.write("%s %d\n" % (name, nbytes))
        for line in kernel.describe().splitlines():  # the contraction route's split sums
            m = re.match(r"^scratch: (\d+) bytes$", line)
            if m:
                f.write("scratch %s\n" % m.group(1))


def compiled(kernel, sizes, options):
    program = tclib.Program(kernel.source.read_text())
    inputs = make_inputs(program, kernel, sizes, np.random.default_rng(0))
    k = program.compile(kernel.name, inputs, dict({"backend": "cuda", "cuda.emulate": "1", "cache": "off"}, **options))
    return k, program, inputs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--only")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--dump", metavar="DIR")
    args = ap.parse_args()
    options = dict(kv.split("=", 1) for kv in args.option)
    names = args.only.split(",") if args.only else [k.name for k in KERNELS]
    if not args.dump:
        print("| kernel | estimated µs (%s) | bound | launches | work_balance | sectors/request (ideal) | "
              "bank ways | occupancy |" % args.gpu)
        print("|---|---|---|---|---|---|---|---|")
    for name in names:
        kernel = next(k for k in KERNELS if k.name == name)
        sizes = kernel.quick if args.quick else kernel.sizes
        k, program, inputs = compiled(kernel, sizes, options)
        if args.dump:
            os.makedirs(args.dump, exist_ok=True)
            dump(k, program, name, sizes, os.path.join(args.dump, name))
            continue
        outputs = [np.zeros(shape, dtype) for dtype, shape in k.output_info()]
        text = k.profile(inputs, outputs, args.gpu)
        launches = tclib.profile_figures(text)
        total = float(text.strip().splitlines()[-1].split()[1])
        busiest = max(launches, key=lambda f: float(f["estimated_us"]))
        bound = re.search(r"bound: (\w+)", text.split(busiest["kernel"], 1)[1]).group(1)
        ideal = re.findall(r"sectors_per_request \S+ \(ideal (\S+)\)", text)
        print("| %s | %.1f | %s (%s) | %d | %s | %s | %s | %s |" % (
            name, total, bound, busiest["kernel"], len(launches),
            "/".join(f["work_balance"] for f in launches),
            "/".join("%s (%s)" % (f["sectors_per_request"], i) for f, i in zip(launches, ideal)),
            "/".join(f["bank_conflict_ways"] for f in launches),
            "/".join(f["occupancy"] for f in launches)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

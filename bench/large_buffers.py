"""large_buffers.py - what 64-bit buffer offsets cost on the cpu backend.

Each kernel runs at two sizes on either side of 2^31 bytes: below, its buffers have 32-bit
offsets; above, the kernel is compiled with Halide's large_buffers (libtc chooses it only
there). Prints the median time per call and per element of each, so the two can be compared
at (nearly) the same size. Each size runs in a fresh process (--reps calls after one warm-up).

    /usr/bin/python3 bench/large_buffers.py [--reps 7] [--threads 2] [--library build/src/libtc.so]

Needs about 10 GB of memory. Run it on an otherwise idle machine (bench/README.md).
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = {
    # name: (source, sizes below and above 2^31 bytes of the largest tensor)
    "scale (Y = 2X)": ("def scale(float(N) X) -> (Y) { Y(i) = 2 * X(i) }", (500_000_000, 600_000_000)),
    "row sums": ("def rows(float(R,D) X) -> (S) { S(r) +=! X(r, d) }", (5_000_000, 6_000_000)),
    "embedding gather (1M rows of 100)": ("def embed(float(E,D) T, int32(N) I) -> (O) { O(n, d) = T(I(n), d) }",
                                          (5_000_000, 6_000_000)),
}

CHILD = r"""
import json, os, sys, time, statistics
sys.path.insert(0, os.path.join(sys.argv[1], "bindings", "python"))
import numpy as np, tc
name, src, size, reps, threads = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
rng = np.random.default_rng(0)
if name.startswith("scale"):
    ins = [np.ones(size, np.float32)]
elif name.startswith("row"):
    ins = [np.ones((size, 100), np.float32)]
else:
    ins = [np.ones((size, 100), np.float32), rng.integers(0, size, 1_000_000).astype(np.int32)]
p = tc.define(src)
k = p.compile(None, *ins, cache="off", threads=threads)
large = "large_buffers" in k.describe()
out = k(*ins)
times = []
for _ in range(reps):
    t = time.perf_counter(); k(*ins, out=(out,)); times.append(time.perf_counter() - t)
elements = out.size
print(json.dumps({"ms": statistics.median(times) * 1e3, "ns_per_element": statistics.median(times) * 1e9 / elements,
                  "large": large, "bytes": max(x.nbytes for x in ins)}))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--threads", default="2")
    ap.add_argument("--library", default=os.path.join(ROOT, "build", "src", "libtc.so"))
    a = ap.parse_args()
    env = dict(os.environ, TC_LIBRARY=os.path.abspath(a.library))
    print(f"libtc {a.library}; threads {a.threads}; median of {a.reps} calls; load average {os.getloadavg()[0]:.2f}")
    print("| kernel | largest tensor, bytes | offsets | median ms | ns per output element |")
    print("|---|---|---|---|---|")
    for name, (src, sizes) in KERNELS.items():
        for size in sizes:
            out = subprocess.run([sys.executable, "-c", CHILD, ROOT, name, src, str(size), str(a.reps), a.threads],
                                 env=env, check=True, capture_output=True, text=True).stdout
            r = json.loads(out.strip().splitlines()[-1])
            print(f"| {name} | {r['bytes']} | {'64-bit (large_buffers)' if r['large'] else '32-bit'} | "
                  f"{r['ms']:.1f} | {r['ns_per_element']:.3f} |")


if __name__ == "__main__":
    main()

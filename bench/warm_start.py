"""warm_start.py - tc_compile on a cache hit, timed in fresh processes.

Tunes mm (float32 256x128 . 128x192) once into a private cache (tc_tune, a few seconds), then for
each way of writing the same def - the tuned source, the def renamed with its tensors and
variables renamed, reformatted, and after another def - starts --procs fresh processes, each of
which times its first tc_compile (a hit: the record's code linked, or compiled again from the
knobs where it cannot be used) and then --later more compiles of the same def in the same process
(each a hit). Prints the median and the largest of each, and whether every compile hit and
loaded the stored code ("code loaded from the cache" in tc_kernel_describe).

  /usr/bin/python3 bench/warm_start.py [--procs 9] [--later 5] [--budget 3] [--library build/src/libtc.so]

Timings depend on the machine's load: run it on an otherwise idle machine (bench/README.md).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = {
    "tuned source": "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }",
    "renamed": "def product(float(M,K) Left, float(K,N) Right) -> (Out) { Out(r,c) +=! Left(r,kk) * Right(kk,c) }",
    "reformatted": "def mm(float(M, K) A,\n       float(K, N) B)\n  -> (C)\n{\n  # a comment\n  C(i, j) +=! A(i, k) * B(k, j)\n}\n",
    "after another def": "def scale(float(N) X) -> (Y) { Y(i) = 2 * X(i) }\n"
                         "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }",
}
ENTRY = {"tuned source": "mm", "renamed": "product", "reformatted": "mm", "after another def": "mm"}

CHILD = r"""
import os, sys, time, json
sys.path.insert(0, os.path.join(sys.argv[1], "bindings", "python"))
import numpy as np
import tc
src, entry, cache, later = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
A = np.ones((256, 128), np.float32); B = np.ones((128, 192), np.float32)
p = tc.define(src)
times, hits, loaded = [], [], []
for _ in range(1 + later):
    t = time.perf_counter()
    k = p.compile(entry, A, B, cache=cache)
    times.append((time.perf_counter() - t) * 1e3)
    hits.append(k.cache_hit); loaded.append("code loaded from the cache" in k.describe())
print(json.dumps({"ms": times, "hit": all(hits), "loaded": all(loaded)}))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=int, default=9)
    ap.add_argument("--later", type=int, default=5)
    ap.add_argument("--budget", type=float, default=3)
    ap.add_argument("--library", default=os.path.join(ROOT, "build", "src", "libtc.so"))
    a = ap.parse_args()
    env = dict(os.environ, TC_LIBRARY=os.path.abspath(a.library))
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.path.join(tmp, "cache")
        tune = ("import os, sys; sys.path.insert(0, os.path.join(sys.argv[1], 'bindings', 'python'))\n"
                "import numpy as np, tc\n"
                "A = np.ones((256, 128), np.float32); B = np.ones((128, 192), np.float32)\n"
                "tc.define(sys.argv[2]).tune('mm', A, B, budget=float(sys.argv[4]), progress=False, cache=sys.argv[3])\n")
        subprocess.run([sys.executable, "-c", tune, ROOT, SOURCES["tuned source"], cache, str(a.budget)], env=env, check=True)
        print(f"libtc {a.library}; mm 256x128x192 tuned for {a.budget:g} s; {a.procs} fresh processes per source, "
              f"{a.later} later compiles each; load average {os.getloadavg()[0]:.2f}")
        print("| source | first compile, median ms | first, max ms | later compiles, median ms | later, max ms | every compile a hit with the stored code |")
        print("|---|---|---|---|---|---|")
        for name, src in SOURCES.items():
            first, later, ok = [], [], True
            for _ in range(a.procs):
                out = subprocess.run([sys.executable, "-c", CHILD, ROOT, src, ENTRY[name], cache, str(a.later)], env=env,
                                     check=True, capture_output=True, text=True).stdout
                r = json.loads(out.strip().splitlines()[-1])
                first.append(r["ms"][0]); later += r["ms"][1:]; ok = ok and r["hit"] and r["loaded"]
            print(f"| {name} | {statistics.median(first):.2f} | {max(first):.2f} | {statistics.median(later):.2f} | "
                  f"{max(later):.2f} | {'yes' if ok else 'no'} |")


if __name__ == "__main__":
    main()

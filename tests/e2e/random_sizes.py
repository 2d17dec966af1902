"""random_sizes.py - a backend (default cpu) against the reference backend on randomly drawn sizes.

For each kernel below, --trials times: draw sizes (seeded; the seed is printed so a failure can
be replayed with --seed), build inputs, run both backends on the same inputs and compare with a
tolerance that scales with the reduction length. Odd sizes on purpose: they exercise the
schedule's partial tiles and vector tails, which the corpus's small fixed shapes may not.

    TC_LIBRARY=build/src/libtc.so /usr/bin/python3 tests/e2e/random_sizes.py [--trials N] [--seed S]
        [--backend B] [--option KEY=VALUE]... [--max-elements N]

--max-elements N: sizes are drawn again (from the same stream) until no input has more than N
elements: the cuda emulation runs a block's threads one after another (as coroutines where they
synchronise), so a large draw took 80 s where a typical one takes 0.5 s.
"""
import argparse
import sys
import time

import numpy as np

import corpus
import tclib

F32 = np.float32

# name: (source, entry, sizes -> inputs, reduction length from sizes)
KERNELS = {
    "matmul": ("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }",
               lambda r, s: [r.standard_normal((s["M"], s["K"])), r.standard_normal((s["K"], s["N"]))],
               lambda s: s["K"]),
    "tmm": ("def tmm(float(M,K) A, float(N,K) B) -> (C) { C(m,n) +=! A(m,k) * B(n,k) }",
            lambda r, s: [r.standard_normal((s["M"], s["K"])), r.standard_normal((s["N"], s["K"]))],
            lambda s: s["K"]),
    "tbmm": ("def tbmm(float(B,N,K) X, float(B,M,K) Y) -> (Z) { Z(b,n,m) +=! X(b,n,k) * Y(b,m,k) }",
             lambda r, s: [r.standard_normal((s["B"] % 5 + 1, s["N"], s["K"])),
                           r.standard_normal((s["B"] % 5 + 1, s["M"], s["K"]))],
             lambda s: s["K"]),
    "conv2d": ("""def conv(float(N,C,H,W) I, float(M,C,KH,KW) Wt) -> (O) {
                    O(n,m,h,w) +=! I(n,c,h+kh,w+kw) * Wt(m,c,kh,kw) }""",
               lambda r, s: [r.standard_normal((s["N"] % 3 + 1, s["C"] % 9 + 1, s["H"] + 2, s["W"] + 2)),
                             r.standard_normal((s["M"] % 9 + 1, s["C"] % 9 + 1, 3, 3))],
               lambda s: (s["C"] % 9 + 1) * 9),
    "softmax": ("""def softmax(float(N,D) X) -> (O, mx, e, s) {
                     mx(n) max=! X(n,d)
                     e(n,d) = exp(X(n,d) - mx(n))
                     s(n) +=! e(n,d)
                     O(n,d) = e(n,d) / s(n) }""",
                lambda r, s: [r.standard_normal((s["N"], s["D"]))], lambda s: s["D"]),
    "fcrelu": ("""def fcrelu(float(B,K) I, float(O,K) W, float(O) Bias) -> (R) {
                    R(b,o) +=! I(b,k) * W(o,k)
                    R(b,o) = fmax(R(b,o) + Bias(o), 0) }""",
               lambda r, s: [r.standard_normal((s["B"], s["K"])), r.standard_normal((s["O"], s["K"])),
                             r.standard_normal((s["O"],))],
               lambda s: s["K"]),
    "maxpool": ("""def pool(float(N,C,H,W) I) -> (O) {
                     O(n,c,h,w) max=! I(n,c,2*h+kh,2*w+kw) where kh in 0:2, kw in 0:2 }""",
                lambda r, s: [r.standard_normal((s["N"] % 3 + 1, s["C"], 2 * s["H"], 2 * s["W"]))], lambda s: 1),
    "lut": ("""def lut(float(E,D) LUT, int32(B,L) I) -> (O) { O(b,d) +=! LUT(I(b,l), d) }""",
            lambda r, s: [r.standard_normal((s["E"], s["D"])),
                          r.integers(0, s["E"], (s["B"], s["L"])).astype(np.int32)],
            lambda s: s["L"]),
    "rowsum_int": ("def rs(int32(M,N) A) -> (S) { S(i) +=! A(i,j) }",
                   lambda r, s: [r.integers(-100, 100, (s["M"], s["N"])).astype(np.int32)], lambda s: 1),
}

SIZE_NAMES = ["M", "K", "N", "C", "H", "W", "D", "B", "O", "E", "L"]


def draw_sizes(r):
    return {k: int(r.integers(1, 70)) for k in SIZE_NAMES}


def as_inputs(arrays):
    return [a.astype(F32) if a.dtype == np.float64 else a for a in arrays]


def run_backend(prog, entry, inputs, backend, options=None):
    k = prog.compile(entry, inputs, dict(options or {}, backend=backend))
    outs = [np.zeros(shape, dtype) for dtype, shape in k.output_info()]
    k.run(inputs, outs)
    return outs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--only", default=None)
    ap.add_argument("--backend", default="cpu", help="the backend compared with the reference")
    ap.add_argument("--max-elements", type=int, default=None, help="redraw sizes whose inputs are larger")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="extra tc_options for the compared backend (e.g. cuda.emulate=1)")
    args = ap.parse_args()
    options = dict(o.split("=", 1) for o in args.option)
    seed = args.seed if args.seed is not None else int(time.time()) % 100000
    print("seed %d (replay with --seed %d)" % (seed, seed))
    r = np.random.default_rng(seed)
    failures = 0
    for name, (src, make, red) in KERNELS.items():
        if args.only and name not in args.only.split(","):
            continue
        prog = tclib.Program(src)
        entry = prog.def_names()[0]
        for t in range(args.trials):
            while True:
                sizes = draw_sizes(r)
                inputs = as_inputs(make(r, sizes))
                if not args.max_elements or max(a.size for a in inputs) <= args.max_elements:
                    break
            t0 = time.perf_counter()
            ref = run_backend(prog, entry, inputs, "reference")
            t1 = time.perf_counter()
            got = run_backend(prog, entry, inputs, args.backend, options)
            seconds = "(reference %.2f s, %s %.2f s)" % (t1 - t0, args.backend, time.perf_counter() - t1)
            shapes = [a.shape for a in inputs]
            try:
                for i, (g, e) in enumerate(zip(got, ref)):
                    rtol, atol = corpus.tolerance(e.dtype, red(sizes))
                    corpus.compare("%s output %d" % (name, i), g, e, rtol, atol)
                print("PASS %s inputs %s %s" % (name, shapes, seconds))
            except corpus.Failure as f:
                failures += 1
                print("FAIL %s inputs %s: %s" % (name, shapes, f))
    print("%d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

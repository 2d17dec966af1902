#!/usr/bin/python3
"""contractions.py - libtc against NumPy's and PyTorch's einsum on tensor contractions no one
tuned libtc for: the 48 of the TCCG benchmark (Springer and Bientinesi, "Design of a
high-performance GEMM-like tensor-tensor multiplication", 2016: coupled-cluster terms CCSD and
CCSD(T), AO-to-MO transformations, tensor-times-matrix products), sized as TCCG sizes them (the
largest tensor about --megabytes, stride-1 indices multiples of 24, the others of 4), and 10
more: plain matrix products at 1024^3 and 5136x5120x5136 (the sizes of the sgemm targets),
attention, multi-head projections and tensor networks. Run by hand on an idle
machine; not part of CI.

    /usr/bin/python3 bench/contractions.py [--dtype float32|float64|both] [--threads N]
        [--only NAME,...] [--megabytes MB] [--reps N] [--budget S] [--markdown] [--option K=V]
        [--tune SECONDS] [--interleave]

Each framework runs in a fresh process of its own (libtc, then NumPy, then PyTorch) with the
same thread count (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, torch.set_num_threads, libtc's
option threads), on identical inputs (the same seeded generator in each process). A call is
timed until --reps calls or --budget seconds (the median is reported); libtc's compile is timed
apart. NumPy is `np.einsum(spec, A, B, optimize=True)` (pairwise through tensordot, OpenBLAS),
PyTorch `torch.einsum` (permute + bmm). Every result is checked against NumPy's on a sample of
its elements. The FP32 FMA peak (bench/peak.c) is measured before and after, and % of peak is
against the higher of the two (a slow spell only lowers a reading); float64 figures
are given against half of it. Columns: GFLOP of one call, each framework's median ms, libtc's
ratio to the faster peer, libtc's GFLOP/s and % of peak.

With --interleave, each contraction's processes run one after another (libtc, NumPy, PyTorch,
then the next contraction), so that a slow spell of the machine (minutes long on the developers'
VMs, up to 1.5x) falls on every framework's figure of that contraction alike; without it, one
process per framework times every contraction.

With --tune SECONDS, one more process tunes every contraction (tc_tune, at most SECONDS each)
into a cache of the run's own, and one more times the kernels compiled from that cache: the
columns "tuned ms" and "tuned / default" (the default kernel is the libtc column, cache off).

The TCCG strings are column-major (their first index is the fastest); here each is written in
TC's row-major order, its index strings reversed: TCCG's "abcd-aebf-fdec" is
`C(d,c,b,a) +=! A(f,b,e,a) * B(c,e,d,f)`.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MARK = "contraction-result: "

# TCCG's benchmark (column-major strings, C-A-B) in its four groups, all 48.
TCCG = {
    "ccsd": ["ij-ik-kj", "ij-ikl-ljk", "ij-kil-lkj", "ijk-ikl-lj", "ijk-il-jlk", "ijk-ilk-jl", "ijk-ilk-lj",
             "ijk-ilmk-mjl", "ijkl-imjn-lnkm", "ijkl-imjn-nlmk", "ijkl-imkn-jnlm", "ijkl-imkn-njml",
             "ijkl-imln-jnkm", "ijkl-imln-njmk", "ijkl-imnj-nlkm", "ijkl-imnk-njml", "ijkl-minj-nlmk",
             "ijkl-mink-jnlm", "ijkl-minl-njmk"],
    "intensli": ["abj-bka-kj", "ajb-kba-jk", "abjc-cbka-kj", "ajbc-ckba-jk", "abjc-kbac-jk", "abjcd-dkbac-jk",
                 "adbjc-cbdka-kj", "ajbdc-ckbad-jk"],
    "ao2mo": ["aqrs-pa-pqrs", "abrs-qb-aqrs", "abcs-rc-abrs"],
    "ccsd_t": ["abcijk-ijma-mkbc", "abcijk-ijmb-mkac", "abcijk-ijmc-mkab", "abcijk-ikma-mjbc", "abcijk-ikmb-mjac",
               "abcijk-ikmc-mjab", "abcijk-jkma-mibc", "abcijk-jkmb-miac", "abcijk-jkmc-miab", "abcijk-eiab-jkec",
               "abcijk-eiac-jkeb", "abcijk-eibc-jkea", "abcijk-ejab-ikec", "abcijk-ejac-ikeb", "abcijk-ejbc-ikea",
               "abcijk-ekab-ijec", "abcijk-ekac-ijeb", "abcijk-ekbc-ijea"],
}
# TCCG fixes j = 24 in the intensli group.
TCCG_FIXED = {"intensli": {"j": 24}}

# Row-major specs (C-A-B) with their sizes: attention with heads, multi-head projections,
# tensor-times-matrix (Tucker), tensor-network contractions.
OTHERS = [
    ("sgemm_1024", "ij-ik-kj", {"i": 1024, "j": 1024, "k": 1024}),
    ("sgemm_5136", "ij-ik-kj", {"i": 5136, "j": 5136, "k": 5120}),
    ("attn_scores", "bhqk-bqhd-bkhd", {"b": 8, "h": 16, "q": 512, "k": 512, "d": 64}),
    ("attn_values", "bqhd-bhqk-bkhd", {"b": 8, "h": 16, "q": 512, "k": 512, "d": 64}),
    ("mh_project", "bshe-bsd-dhe", {"b": 8, "s": 512, "d": 1024, "h": 16, "e": 64}),
    ("mh_merge", "bsd-bshe-hed", {"b": 8, "s": 512, "d": 1024, "h": 16, "e": 64}),
    ("ttm_mode1", "rjk-ijk-ir", {"i": 256, "j": 256, "k": 256, "r": 64}),
    ("ttm_mode2", "irk-ijk-jr", {"i": 256, "j": 256, "k": 256, "r": 64}),
    ("mps_env", "ace-abcd-bde", {"a": 64, "b": 64, "c": 64, "d": 32, "e": 64}),
    ("peps_pair", "abcdef-abgx-xcdefg", {"a": 8, "b": 8, "c": 8, "d": 8, "e": 8, "f": 8, "g": 16, "x": 16}),
]


def tccg_sizes(spec, megabytes, itemsize, fixed):
    """TCCG's sizes for a column-major spec: the largest tensor about `megabytes`, every index
    about the same size, each stride-1 index (the first of a tensor) a multiple of 24, the
    others of 4 (nearest)."""
    c, a, b = spec.split("-")
    average = (megabytes * 2 ** 20 / itemsize) ** (1.0 / max(len(c), len(a), len(b)))
    sizes = dict(fixed)
    for x in set(c + a + b):
        if x in sizes:
            continue
        if x in (c[0], a[0], b[0]):
            sizes[x] = int((average + 23) // 24 * 24)
        else:
            up, down = int((average + 3) // 4 * 4), max(4, int(average // 4 * 4))
            sizes[x] = up if abs(average - up) < abs(average - down) else down
    return sizes


def contractions(megabytes, itemsize):
    """[(name, row-major spec "C-A-B", sizes)]: TCCG's 48 (reversed to row-major), then OTHERS."""
    out = []
    for group, specs in TCCG.items():
        for i, spec in enumerate(specs):
            sizes = tccg_sizes(spec, megabytes, itemsize, TCCG_FIXED.get(group, {}))
            out.append(("%s%d" % (group, i), "-".join(t[::-1] for t in spec.split("-")), sizes))
    return out + OTHERS


def gflop(spec, sizes):
    return 2.0 * math.prod(sizes[x] for x in set(spec.replace("-", ""))) / 1e9


def tc_source(spec, dtype):
    c, a, b = spec.split("-")
    t = "float" if dtype == "float32" else "double"
    dims = lambda s: ",".join(x.upper() for x in s)  # noqa: E731
    return "def contract(%s(%s) lhs, %s(%s) rhs) -> (out) { out(%s) +=! lhs(%s) * rhs(%s) }" % (
        t, dims(a), t, dims(b), ",".join(c), ",".join(a), ",".join(b))


def inputs(spec, sizes, dtype, seed):
    import numpy as np
    _, a, b = spec.split("-")
    rng = np.random.default_rng(seed)
    return [(rng.random(tuple(sizes[x] for x in s), dtype=np.float64) * 2 - 1).astype(dtype) for s in (a, b)]


def sample(c):
    """Every 997th element of the result, and its largest magnitude: what the driver compares."""
    flat = c.reshape(-1)
    return flat[::997].astype(float).tolist(), float(abs(flat).max()) if flat.size else 0.0


def time_calls(fn, reps, budget):
    fn()  # warm-up: first-touch of the output, the peers' plan caches
    times, start = [], time.perf_counter()
    while len(times) < reps and (not times or time.perf_counter() - start < budget):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def knobs_of(describe):
    """The knobs a kernel was compiled with: those of its description's "cache: hit ...: KNOBS
    (tuned" line where it came from the cache, else the "options:" line's cpu.* values."""
    lines = describe.splitlines()
    hit = next((l for l in lines if l.startswith("cache: hit") and "': " in l), None)
    if hit:
        return dict(kv.split("=", 1) for kv in hit.split("': ", 1)[1].split(" (tuned")[0].split())
    return dict(kv.split("=", 1) for l in lines if l.startswith("options: ") for kv in l[9:].split()
                if kv.startswith("cpu."))


def changed_knobs(tuned, default):
    """The tuned knobs that differ from the default kernel's ("default" if none)."""
    changed = ["%s=%s" % (k, v) for k, v in tuned.get("knobs", {}).items() if default.get("knobs", {}).get(k) != v]
    return " ".join(changed) if changed else "default"


def libtc_options(args, **extra):
    options = {"threads": str(args.threads), "cache": "off"}
    options.update(dict(o.split("=", 1) for o in args.option))
    options.update(extra)
    return options


def child(args):
    """One framework's process: every contraction, one result line each (`tune`: tunes them)."""
    import numpy as np
    if args.child == "torch":
        import torch
        torch.set_num_threads(args.threads)
    if args.child in ("libtc", "tuned", "tune"):
        os.environ.setdefault("TC_LIBRARY", str(REPO / "build" / "src" / "libtc.so"))  # as bench/run.sh does
        sys.path.insert(0, str(REPO / "tests" / "e2e"))
        import tclib
    for name, spec, sizes in selected(args):
        for dtype in dtypes(args):
            A, B = inputs(spec, sizes, dtype, args.seed)
            c, a, b = spec.split("-")
            out = np.empty(tuple(sizes[x] for x in c), dtype=dtype)
            result = {"name": name, "dtype": dtype}
            if args.child == "tune":
                options = libtc_options(args, cache=args.cache, **{"tune.budget": str(args.tune),
                                                                   "tune.threads": str(args.threads)})
                t0 = time.perf_counter()
                tclib.Program(tc_source(spec, dtype)).tune("contract", [A, B], tclib.Options(options))
                result["tune_s"] = time.perf_counter() - t0
                print(MARK + json.dumps(result), flush=True)
                print("  tuned %s %s in %.1f s" % (name, dtype, result["tune_s"]), file=sys.stderr, flush=True)
                continue
            if args.child in ("libtc", "tuned"):
                options = libtc_options(args, **({"cache": args.cache} if args.child == "tuned" else {}))
                prog = tclib.Program(tc_source(spec, dtype))
                t0 = time.perf_counter()
                kernel = prog.compile("contract", [A, B], tclib.Options(options))
                result["compile_ms"] = (time.perf_counter() - t0) * 1e3
                result["route"] = "contraction" if "contraction route: " in kernel.describe() else "pipeline"
                result["cache_hit"] = kernel.cache_hit()
                result["knobs"] = knobs_of(kernel.describe())
                fn = kernel.bind([A, B], [out])
            elif args.child == "numpy":
                expr = "%s,%s->%s" % (a, b, c)
                fn = lambda: np.einsum(expr, A, B, optimize=True, out=out)  # noqa: E731
            else:
                import torch
                ta, tb = torch.from_numpy(A), torch.from_numpy(B)
                expr = "%s,%s->%s" % (a, b, c)
                fn = lambda: torch.einsum(expr, ta, tb)  # noqa: E731  (no out=: it allocates its result)
            times = time_calls(fn, args.reps, args.budget)
            if args.child == "torch":
                out = fn().numpy()
            result["ms"] = statistics.median(times) * 1e3
            result["calls"] = len(times)
            result["sample"], result["max"] = sample(out)
            print(MARK + json.dumps(result), flush=True)
            print("  %s %s %s: %.3f ms" % (args.child, name, dtype, result["ms"]), file=sys.stderr, flush=True)
    return 0


def selected(args):
    itemsize = 8 if args.dtype == "float64" else 4
    all_ = contractions(args.megabytes, itemsize)
    if not args.only:
        return all_
    names = args.only.split(",")
    unknown = set(names) - {n for n, _, _ in all_}
    if unknown:
        sys.exit("contractions.py: no contraction %s" % ", ".join(sorted(unknown)))
    return [c for c in all_ if c[0] in names]


def dtypes(args):
    return ["float32", "float64"] if args.dtype == "both" else [args.dtype]


def run_child(framework, args, passthrough=None):
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", framework] + (passthrough or args.passthrough)
    env = dict(os.environ)
    for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[v] = str(args.threads)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=env)
    if p.returncode != 0:
        sys.exit("contractions.py: the %s process failed (exit %d)" % (framework, p.returncode))
    return {(r["name"], r["dtype"]): r for r in
            (json.loads(line[len(MARK):]) for line in p.stdout.splitlines() if line.startswith(MARK))}


def agree(mine, theirs, dtype):
    tol = 1e-3 if dtype == "float32" else 1e-10
    scale = max(theirs["max"], 1e-30)
    return all(abs(x - y) <= tol * scale for x, y in zip(mine["sample"], theirs["sample"]))


def load_average():
    return os.getloadavg()[0]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", choices=("float32", "float64", "both"), default="float32")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--only", metavar="NAME,...")
    ap.add_argument("--megabytes", type=float, default=200.0,
                    help="TCCG's size of the largest tensor, in MiB (default 200, TCCG's own)")
    ap.add_argument("--reps", type=int, default=5, help="timed calls per contraction (default 5)")
    ap.add_argument("--budget", type=float, default=10.0, help="seconds of timed calls at most (default 10)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="libtc option")
    ap.add_argument("--frameworks", default="libtc,numpy,torch")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--interleave", action="store_true",
                    help="per contraction, each framework's process in turn (the machine's slow spells then "
                         "fall on all of them alike) instead of one process per framework for all")
    ap.add_argument("--tune", type=int, metavar="SECONDS",
                    help="also tune each contraction for at most SECONDS and time the tuned kernel")
    ap.add_argument("--cache", help=argparse.SUPPRESS)  # the tuned kernels' cache (children)
    ap.add_argument("--child", choices=("libtc", "numpy", "torch", "tune", "tuned"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args)
    args.passthrough = [a for a in argv if a not in ("--markdown", "--interleave")]
    frameworks = args.frameworks.split(",")
    if args.tune is not None:
        import tempfile
        args.cache = tempfile.mkdtemp(prefix="tc-contractions-")
        args.passthrough += ["--cache", args.cache]
        # the tuned kernels timed right after the default ones: the machine's drift between them least
        frameworks = ["tune"] + [f for fw in frameworks for f in ([fw, "tuned"] if fw == "libtc" else [fw])]
    sys.path.insert(0, str(HERE))
    import peak
    peak_before = peak.measure(args.threads)["gflops"]
    load = load_average()
    results = {fw: {} for fw in frameworks}
    if args.interleave:
        rest = [a for i, a in enumerate(args.passthrough)
                if a != "--only" and not (i > 0 and args.passthrough[i - 1] == "--only") and not a.startswith("--only=")]
        for name, _, _ in selected(args):
            for fw in frameworks:
                results[fw].update(run_child(fw, args, rest + ["--only", name]))
    else:
        for fw in frameworks:
            print("contractions.py: %s ..." % fw, file=sys.stderr, flush=True)
            results[fw] = run_child(fw, args)
    peak_after = peak.measure(args.threads)["gflops"]
    report(args, results, peak_before, peak_after, load)
    if args.cache:
        import shutil
        shutil.rmtree(args.cache, ignore_errors=True)
    return 0


def report(args, results, peak_before, peak_after, load):
    # The higher of the two: a VM's slow spell lowers a reading, never raises it, so the share of
    # the higher one is the conservative figure (a mean of 122 and 241 made libtc look 113% of peak).
    peak32 = max(peak_before, peak_after)
    sep = " | " if args.markdown else "  "
    print("# contractions: %d threads, FP32 FMA peak %.1f GFLOP/s before, %.1f after (float64: half), "
          "load average %.2f at the start" % (args.threads, peak_before, peak_after, load))
    head = ["contraction", "spec (row-major C-A-B)", "dtype", "GFLOP", "libtc ms", "compile ms", "NumPy ms",
            "PyTorch ms", "libtc / best peer", "libtc GFLOP/s", "% peak", "agrees"]
    tuned_ratios = []
    if args.tune is not None:
        head += ["tuned ms", "tuned / default", "tuned knobs"]
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print(sep.join(head))
    ratios, at_or_below, n = [], 0, 0
    for name, spec, sizes in selected(args):
        for dtype in dtypes(args):
            key = (name, dtype)
            lt, npy, tor = (results.get(fw, {}).get(key) for fw in ("libtc", "numpy", "torch"))
            g = gflop(spec, sizes)
            peers = [r["ms"] for r in (npy, tor) if r]
            best = min(peers) if peers else None
            ratio = lt["ms"] / best if lt and best else None
            if ratio:
                ratios.append(ratio)
                at_or_below += ratio <= 1.0
                n += 1
            rate = g / (lt["ms"] / 1e3) if lt else None
            pk = peak32 if dtype == "float32" else peak32 / 2
            ok = "yes" if lt and npy and agree(lt, npy, dtype) else ("-" if not (lt and npy) else "NO")
            row = [name, spec, dtype, "%.2f" % g, "%.2f" % lt["ms"] if lt else "-",
                   "%.1f" % lt["compile_ms"] if lt else "-", "%.2f" % npy["ms"] if npy else "-",
                   "%.2f" % tor["ms"] if tor else "-", "%.2f" % ratio if ratio else "-",
                   "%.1f" % rate if rate else "-", "%.0f%%" % (100 * rate / pk) if rate else "-", ok]
            if args.tune is not None:
                tu = results.get("tuned", {}).get(key)
                tr = tu["ms"] / lt["ms"] if tu and lt else None
                if tr:
                    tuned_ratios.append(tr)
                hit = "" if not tu or tu.get("cache_hit") else " (not from the cache)"
                row += ["%.2f%s" % (tu["ms"], hit) if tu else "-", "%.3f" % tr if tr else "-",
                        changed_knobs(tu, lt) if tu and lt else "-"]
            print(("| " + " | ".join(row) + " |") if args.markdown else sep.join(row))
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print("\nlibtc at or below the best peer on %d of %d; geomean ratio %.2f; worst %.2f" %
              (at_or_below, n, geo, max(ratios)))
    if tuned_ratios:
        geo = math.exp(sum(math.log(r) for r in tuned_ratios) / len(tuned_ratios))
        print("tuned / default (each in a fresh process): geomean %.3f, best %.3f, worst %.3f; "
              "tuned to the default knobs on %d of %d" %
              (geo, min(tuned_ratios), max(tuned_ratios),
               sum(1 for k, r in results.get("tuned", {}).items()
                   if changed_knobs(r, results.get("libtc", {}).get(k, {})) == "default"), len(tuned_ratios)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

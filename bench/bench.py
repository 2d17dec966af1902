#!/usr/bin/python3
"""bench.py - the benchmark of issue 3 (run by hand, never in CI): times the TC paper's kernels
in libtc, PyTorch (CPU) and NumPy (OpenBLAS) on identical inputs with the same number of
threads, checks that the results agree and prints a table. Usage: bench/README.md.

This file reads the command line and sets the thread counts in the environment before
anything loads NumPy, OpenBLAS or PyTorch; harness.py does the work, kernels.py lists the
kernels and bench/kernels/*.tc holds their TC sources.
"""
import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
# --quick's defaults: small sizes (the reference backend interprets) and few repetitions
QUICK_DEFAULTS = dict(reps=3, warmup=1, budget=2.0)
FULL_DEFAULTS = dict(reps=20, warmup=2, budget=10.0)


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="bench.py", description="libtc vs PyTorch vs NumPy on the TC paper's kernels.")
    p.add_argument("--backend", default="cpu",
                   help="libtc backend (option 'backend'; default cpu, 'reference' to smoke-test)")
    p.add_argument("--threads", type=int, default=os.cpu_count(),
                   help="threads for every framework (default: the number of cores, %(default)s);"
                        " libtc gets option threads=N with the cpu backend")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="extra libtc option (repeatable; overrides backend/threads)")
    p.add_argument("--only", metavar="NAME,...", help="run only these kernels")
    p.add_argument("--quick", action="store_true",
                   help="small sizes and few runs: a smoke test of the script (< 1 min)")
    p.add_argument("--reps", type=int, help="timed runs per framework (default %d, quick %d)"
                   % (FULL_DEFAULTS["reps"], QUICK_DEFAULTS["reps"]))
    p.add_argument("--warmup", type=int, help="untimed runs first (default %d, quick %d)"
                   % (FULL_DEFAULTS["warmup"], QUICK_DEFAULTS["warmup"]))
    p.add_argument("--budget", type=float, metavar="SECONDS",
                   help="time per kernel and framework after which timing stops early "
                        "(default %g, quick %g)"
                        % (FULL_DEFAULTS["budget"], QUICK_DEFAULTS["budget"]))
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--libtc-only", action="store_true",
                   help="time libtc alone: no PyTorch or NumPy runs in the process (whose idle "
                        "worker threads can spin beside libtc's), results unchecked; for "
                        "comparing two libtc builds")
    p.add_argument("--markdown", action="store_true",
                   help="print the table as Markdown (for docs/performance.md)")
    args = p.parse_args(argv)
    for key, value in (QUICK_DEFAULTS if args.quick else FULL_DEFAULTS).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.threads < 1 or args.reps < 1 or args.warmup < 0:
        p.error("--threads and --reps must be >= 1, --warmup >= 0")
    if any("=" not in kv for kv in args.option):
        p.error("--option takes KEY=VALUE")
    args.argv = list(argv)
    return args


def main(argv):
    args = parse_args(argv)
    for var in THREAD_VARIABLES:
        os.environ[var] = str(args.threads)
    library = os.environ.setdefault("TC_LIBRARY", str(REPO / "build" / "src" / "libtc.so"))
    if not Path(library).is_file():
        sys.exit("bench: no libtc at %s (build it, or set TC_LIBRARY)" % library)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import harness  # loads NumPy, PyTorch and libtc: after the thread variables are set
    return harness.run(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/python3
"""bench.py - the benchmark of the TC paper's kernels (run by hand, never in CI): times the TC paper's
kernels in libtc, PyTorch (CPU) and NumPy (OpenBLAS) on identical inputs, each framework in a
fresh process of its own with the same number of threads, checks that the results agree and
prints a table. Usage: bench/README.md.

This file reads the command line and sets the thread counts in the environment before
anything loads NumPy, OpenBLAS or PyTorch. plain.py drives the default table, tuned.py that of
--tune; both start their measuring processes through procs.py (bench.py --child MODE);
harness.py holds what they share, fair.py the load average, run agreement and BLAS checks,
kernels.py lists the kernels and bench/kernels/*.tc holds their TC sources.
"""
import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
# --quick's defaults: small sizes (the reference backend interprets) and few repetitions
QUICK_DEFAULTS = dict(reps=3, warmup=1, budget=2.0, min_time=0.0)
FULL_DEFAULTS = dict(reps=20, warmup=2, budget=10.0, min_time=0.25)


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
    p.add_argument("--min-time", type=float, metavar="SECONDS",
                   help="timed calls go on past --reps until they add up to this, within the budget: a "
                        "kernel of 25 us is timed 10000 times, not 20 (default %g, quick %g)"
                        % (FULL_DEFAULTS["min_time"], QUICK_DEFAULTS["min_time"]))
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--libtc-only", action="store_true",
                   help="time libtc alone: no PyTorch or NumPy process is started, results "
                        "unchecked; for comparing two libtc builds")
    p.add_argument("--markdown", action="store_true",
                   help="print the table as Markdown (for docs/results/)")
    p.add_argument("--tune", type=int, metavar="SECONDS",
                   help="also tune every kernel with tc_tune for at most SECONDS (a whole number)"
                        " into a bench-private cache, and report default vs tuned libtc, the "
                        "peers, and cold vs warm compile times, each in a fresh process; 0: "
                        "tune nothing, use the records already in --cache")
    p.add_argument("--cache", metavar="DIR",
                   help="with --tune: the cache directory to tune into and compile from (created "
                        "0700 if missing, kept); default: a temporary one, removed afterwards")
    p.add_argument("--plot", metavar="FILE.png",
                   help="with --tune: draw the tuner's convergence per kernel (best time against "
                        "seconds, default and best peer as lines) into FILE.png (bench/plot.py; "
                        "needs python3-matplotlib)")
    p.add_argument("--runs", "--rounds", type=int, default=1, metavar="N",
                   help="repeat the whole measurement N times, fresh processes each time; the "
                        "table gives the median of the runs' medians and the fastest call, and"
                        " from 2 on each run's times and whether the runs agree within 10%% "
                        "(default 1; --rounds is the old name, with --tune)")
    p.add_argument("--no-peak", action="store_true",
                   help="do not measure the machine's FMA peak (bench/peak.c) first; the "
                        "'%% peak' columns stay empty")
    p.add_argument("--peak-seconds", type=float, default=1.0, metavar="S",
                   help="seconds of each peak measurement (default 1; 5 runs, the median)")
    # internal: one measuring process (bench/procs.py)
    p.add_argument("--child", choices=("libtc", "cold", "warm", "tune", "pytorch", "numpy"),
                   help=argparse.SUPPRESS)
    p.add_argument("--workdir", help=argparse.SUPPRESS)
    p.add_argument("--save-outputs", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    for key, value in (QUICK_DEFAULTS if args.quick else FULL_DEFAULTS).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.threads < 1 or args.reps < 1 or args.warmup < 0 or args.runs < 1:
        p.error("--threads, --reps and --runs must be >= 1, --warmup >= 0")
    if any("=" not in kv for kv in args.option):
        p.error("--option takes KEY=VALUE")
    if args.tune is None and args.cache is not None:
        p.error("--cache goes with --tune")
    if args.plot is not None and not args.tune:
        p.error("--plot goes with --tune SECONDS (a tuning run to draw)")
    if args.tune is not None and not args.child:
        if args.tune < 0:
            p.error("--tune must be >= 0")
        if args.tune == 0 and args.cache is None:
            p.error("--tune 0 measures the records of an existing cache: give --cache DIR")
        keys = {kv.partition("=")[0] for kv in args.option}
        if keys & {"cache", "tune.budget"}:
            p.error("with --tune, give the cache as --cache DIR and the budget as --tune SECONDS")
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
    # these load NumPy and libtc (PyTorch on first use): after the thread variables
    if args.child:
        import procs
        return procs.child(args)
    if args.tune is not None:
        import tuned
        return tuned.drive(args)
    import plain
    return plain.run(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

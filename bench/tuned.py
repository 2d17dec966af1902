"""tuned.py - `bench.py --tune SECONDS`: per kernel, libtc's default kernel against
the one tc_tune finds in SECONDS, PyTorch and NumPy, and tc_compile's time without the cache
(cold) and from it (warm). Usage and the meaning of every column: bench/README.md.

Every measurement runs in a fresh child process (procs.py), so that each framework has a process
of its own with the same thread count and no other framework's worker threads beside it, and
so that each compile time is that of a fresh process: one `tune` process tunes every kernel
into the bench's cache; then, per run (--runs), a `cold` and a `warm` process per kernel (the
default schedule with cache=off; the kernel compiled from the tuned cache: what a user's
process gets), and one `pytorch` and one `numpy` process.
"""
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import List, Optional

import harness
import procs
from harness import Timing, fmt_num, plural, progress, tclib, tolerance
# --quick's search: a smoke test of the path, not a tuning (tc_tune's defaults: 16 and 8)
QUICK_TUNE = {"tune.population": "4", "tune.generations": "2"}
WARM_TARGET_MS, RATIO_TARGET = 20.0, 30.0  # the targets for a warm compile


# ---- the children ----------------------------------------------------------------------------

def tune_options(args):
    """The tc_tune options: the bench's libtc options, the cache, the budget, tune.threads =
    --threads and (--quick) a small search; an explicit --option tune.KEY=... wins."""
    opts = harness.libtc_options(args)
    opts["cache"] = args.cache
    opts["tune.budget"] = str(args.tune)
    explicit = {kv.partition("=")[0] for kv in args.option}
    defaults = dict(QUICK_TUNE if args.quick else {}, **{"tune.threads": str(args.threads)})
    for key, value in defaults.items():
        if key not in explicit:
            opts[key] = value
    return opts


def child_tune(args, kernels):
    options = tclib.Options(tune_options(args))
    results = {}
    for kernel in kernels:
        progress(kernel.name, "tuning (at most %d s)" % args.tune)
        program = tclib.Program(kernel.source.read_text(), procs.source_name(kernel))
        inputs = procs.load_inputs(args, kernel)
        last = {}

        trace = []  # (seconds, best ms) after every candidate: --plot's line

        def seen(p):
            last.update(candidates=p.candidates_done, best_ms=p.best_ms, default_ms=p.default_ms,
                        generation=p.generation)
            measured = 0 < p.best_ms < float("inf")  # JSON to the driver: no inf
            trace.append((p.elapsed_s, p.best_ms if measured else None))
            return False
        t0 = time.perf_counter()
        try:
            tuned = program.tune(kernel.name, inputs, options, seen)
            rec = dict(last, describe=tuned.describe())
        except tclib.TCError as e:
            rec = dict(last, error=str(e))
        rec["seconds"] = time.perf_counter() - t0
        rec["trace"] = trace
        results[kernel.name] = rec
        if "error" not in rec and "best_ms" in rec:
            progress(kernel.name, "tuned: %d candidates in %.1f s, best %s ms, default %s ms"
                     % (rec["candidates"], rec["seconds"], fmt_num(rec["best_ms"]),
                        fmt_num(rec["default_ms"])))
    return {"kernels": results}


# ---- the driver ------------------------------------------------------------------------------

@dataclass
class TunedRow:
    name: str
    sizes: dict
    tol: float
    flops: Optional[float] = None
    default: Optional[Timing] = None
    tuned: Optional[Timing] = None
    pytorch: Optional[Timing] = None
    numpy: Optional[Timing] = None
    cold_ms: Optional[float] = None
    warm_ms: Optional[float] = None
    warm_hit: Optional[bool] = None   # tc_kernel_cache_hit in every warm process
    err: Optional[float] = None       # the larger of default's and tuned's, vs PyTorch
    tune: dict = field(default_factory=dict)
    warm_describe: str = ""
    runs: dict = field(default_factory=dict)  # column label -> each run's median
    problems: List[str] = field(default_factory=list)


# mode -> the label of its times
TIMED = {"cold": "default", "warm": "tuned", "pytorch": "PyTorch", "numpy": "NumPy"}


def cache_line(describe):
    return next((l for l in describe.splitlines() if l.startswith("cache:")), "")


def drive(args):
    kernels = harness.selected_kernels(args)
    tc_options = harness.checked_libtc_options(args)
    if args.tune > 0:
        try:
            tclib.Options(dict(tune_options(args), cache="off"))
        except tclib.TCError as e:
            sys.exit("bench: libtc rejects the tuning options: %s" % e.message)
    with procs.Session(args, kernels) as session:
        args.cache_was_temporary = args.cache is None
        if args.cache_was_temporary:
            args.cache = os.path.join(session.workdir, "cache")
            os.mkdir(args.cache, 0o700)
        elif not os.path.isdir(args.cache):
            os.makedirs(args.cache, 0o700)
        names = [k.name for k in kernels]
        tune = {}
        if args.tune > 0:
            result = session.run_child("tune", names)
            tune = result["kernels"] if result else {}
        for rnd in range(args.runs):
            for name in names:
                for mode in ("cold", "warm"):
                    session.run_child(mode, [name], rnd)
            if not args.libtc_only:
                for mode in ("pytorch", "numpy"):
                    session.run_child(mode, names, rnd)
        rows = [assemble(args, session, k, tune) for k in kernels]
        if args.plot:
            draw(args, rows)
        return report(args, tc_options, session, rows)


def draw(args, rows):
    """--plot: each kernel's tuning trace, with its default and best peer (medians) as lines."""
    import plot
    kernels = []
    for r in rows:
        peer_name, peer = harness.best_peer(r)
        kernels.append((r.name, r.tune.get("trace", []), r.default.median_ms if r.default else None,
                        peer.median_ms if peer else None, peer_name and "best peer (%s)" % peer_name))
    plot.convergence(args.plot, kernels, "tc_tune, at most %d s per kernel, %d threads" % (args.tune, args.threads))
    progress("plot", "convergence written to %s" % args.plot)


def assemble(args, session, kernel, tune):
    """A kernel's row from the children's results."""
    sizes = kernel.quick if args.quick else kernel.sizes
    row = TunedRow(kernel.name, sizes, tolerance(kernel.reduction(sizes)),
                   kernel.flops(sizes) if kernel.flops else None)
    row.tune = tune.get(row.name, {})
    if row.tune.get("error"):
        row.problems.append("tc_tune: %s" % row.tune["error"])
    for mode in ("cold", "warm"):
        primer_errors = {p["primer_error"] for run in session.results
                         for p in run.get(mode, []) if row.name in p["kernels"]
                         and "primer_error" in p}
        row.problems += ["%s primer: %s" % (mode, e) for e in sorted(primer_errors)]
        recs = session.records(mode, row.name)
        errors = {r["error"] for r in recs if r and "error" in r}
        row.problems += ["libtc (%s): %s" % (mode, e) for e in sorted(errors)]
        ok = [r for r in recs if r and "error" not in r]
        compile_ms = procs.median_of(ok, "compile_ms")
        if mode == "cold":
            row.cold_ms = compile_ms
        else:
            row.warm_ms = compile_ms
            if ok:
                row.warm_hit = all(r["cache_hit"] for r in ok)
                row.warm_describe = ok[0]["describe"]
    if row.warm_hit is False:
        improved = row.tune.get("best_ms", 0) < row.tune.get("default_ms", 0)
        if improved or args.tune == 0:
            row.problems.append("warm compile missed the cache (tc_kernel_cache_hit 0): %s"
                                % cache_line(row.warm_describe))
    for mode, label in TIMED.items():
        if mode in ("pytorch", "numpy") and args.libtc_only:
            continue
        recs = session.records(mode, row.name)
        setattr(row, {"cold": "default", "warm": "tuned"}.get(mode, mode), procs.combine(recs))
        if mode != "numpy" or kernel.numpy_fn:
            row.runs[label] = procs.run_medians(recs)
    row.err = session.check_outputs(row.name, row.tol, {
        "cold": "libtc default", "warm": "libtc tuned", "numpy": "NumPy"}, row.problems)
    return row


# ---- the table -------------------------------------------------------------------------------

def columns(args):
    tuned = "tuned (%d s)" % args.tune if args.tune else "tuned (cache)"
    return (["kernel"] + harness.time_columns("default") + harness.time_columns(tuned)
            + ["tuned/default"] + harness.time_columns("PyTorch")
            + harness.time_columns("NumPy") + ["tuned/best peer", "default % peak",
                                              "tuned % peak", "cold compile ms",
                                              "warm compile ms", "cold/warm", "max rel err",
                                              "tol", "check"])


def ratio(a, b):
    return fmt_num(a / b) if a is not None and b else "-"


def table_cells(row, args, peak_gflops):
    best_name, best = harness.best_peer(row)
    ms = lambda t: t.median_ms if t else None
    warm = "-" if row.warm_ms is None else fmt_num(row.warm_ms)
    if row.warm_hit is False:
        warm += " (miss)"
    check = "ok" if not row.problems else "error" if row.default is None else "FAIL"
    return ([row.name] + harness.time_cells(row.default, args.reps)
            + harness.time_cells(row.tuned, args.reps) + [ratio(ms(row.tuned), ms(row.default))]
            + harness.time_cells(row.pytorch, args.reps) + harness.time_cells(row.numpy, args.reps)
            + [ratio(ms(row.tuned), ms(best)) + (" (%s)" % best_name if best else ""),
               harness.percent_of_peak(row.flops, row.default, peak_gflops),
               harness.percent_of_peak(row.flops, row.tuned, peak_gflops),
               "-" if row.cold_ms is None else fmt_num(row.cold_ms), warm,
               ratio(row.cold_ms, row.warm_ms) if row.warm_hit else "-",
               "%.1e" % row.err if row.err is not None else "-", "%.0e" % row.tol, check])


def method_lines(args):
    cache = "a temporary cache directory, removed afterwards" if args.cache_was_temporary \
        else "cache %s" % args.cache
    tuning = ("tuning: tc_tune, at most %d s per kernel, options %s, into %s" % (
        args.tune, " ".join("%s=%s" % kv for kv in tune_options(args).items()
                            if kv[0].startswith("tune.")), cache) if args.tune
              else "tuning: none (--tune 0); tuned kernels from the records already in %s"
              % cache)
    return [tuning,
            "every framework and every libtc compile in a fresh process of its own, %s each; "
            "per kernel: %s, then %s, at most %g s; %s of the measurement after the "
            "tuning" % (plural(args.threads, "thread"), plural(args.warmup, "warm-up call"),
                        harness.timed_calls(args), args.budget, plural(args.runs, "run"))]


def compile_summary(rows, session):
    cold = [r.cold_ms for r in rows if r.cold_ms is not None]
    warm = [r.warm_ms for r in rows if r.warm_ms is not None and r.warm_hit]
    lines = []
    if cold:
        lines.append("cold compile (tc_compile, cache=off): median %s ms over %s"
                     % (fmt_num(statistics.median(cold)), plural(len(cold), "kernel")))
    if warm:
        med_warm = statistics.median(warm)
        lines.append("warm compile (tc_compile, cache hit): median %s ms over the %d of %s "
                     "that hit (target: <= %g ms)"
                     % (fmt_num(med_warm), len(warm), plural(len(rows), "kernel"),
                        WARM_TARGET_MS))
        both = [r for r in rows if r.cold_ms is not None and r.warm_hit and r.warm_ms]
        if both:
            lines.append("cold/warm: %sx (median cold over median warm, the kernels that hit; "
                         "median of their own ratios %sx; target: >= %gx)" % (
                             fmt_num(statistics.median(r.cold_ms for r in both) / med_warm),
                             fmt_num(statistics.median(r.cold_ms / r.warm_ms for r in both)),
                             RATIO_TARGET))
    else:
        lines.append("warm compile: no kernel hit the cache")
    primer = {mode: session.values(mode, "primer_compile_ms") for mode in ("cold", "warm")}
    if primer["cold"]:
        lines.append("a process's first compile (the primer def, not in the table): median "
                     "%s ms with cache=off, %s with the cache" % (
                         fmt_num(statistics.median(primer["cold"])),
                         "%s ms" % fmt_num(statistics.median(primer["warm"]))
                         if primer["warm"] else "-"))
    return lines


def tuned_lines(row):
    """What the tuner did and the knobs the warm compile got, for the footnote."""
    t = row.tune
    parts = []
    if "candidates" in t:
        parts.append("tc_tune measured %s in %.1f s (best %s ms, default %s ms)"
                     % (plural(t["candidates"], "candidate"), t["seconds"],
                        fmt_num(t["best_ms"]), fmt_num(t["default_ms"])))
    line = cache_line(row.warm_describe)
    if line:
        parts.append(line)
    if row.warm_hit is False and "best_ms" in t and t["best_ms"] >= t["default_ms"]:
        parts.append("no record: nothing faster than the default was found, so the tuned "
                     "column is the default compiled again")
    return "; ".join(parts) or "-"


def report(args, tc_options, session, rows):
    sections, warnings = procs.runs_section(args, [
        (r.name, r.runs, "tuned/best peer", harness.run_ratios(r.runs, "tuned")) for r in rows])
    header = session.header_lines(tc_options, method_lines(args), warnings)
    notes = [
        "ms: median wall time of one call (with --runs, the median of the runs' medians); min: "
        "the fastest call; * fewer timed runs than %d (time budget)" % args.reps,
        "default: tc_compile with cache=off; tuned: compiled from the tuned cache in a fresh "
        "process; tuned/best peer: tuned over the faster of PyTorch and NumPy (< 1: libtc "
        "faster); % peak: GFLOP/s over the FMA peak with the same threads (bench/peak.c, "
        "header)",
        "compile: tc_compile alone, in a fresh process after one compile of a primer def; "
        "(miss): tc_kernel_cache_hit was 0",
    ] + compile_summary(rows, session)
    sections = [("Tuned", ["%s: %s" % (r.name, tuned_lines(r)) for r in rows])] + sections + [
        ("Sizes", harness.sizes_lines(rows)), ("Processes", session.process_lines())]
    problems = [("bench", p) for p in session.problems] + [(r.name, p) for r in rows
                                                           for p in r.problems]
    return harness.print_report(args, header, harness.render_table(
        [table_cells(r, args, session.peak_gflops()) for r in rows], args.markdown, columns(args)), notes, sections,
        problems)

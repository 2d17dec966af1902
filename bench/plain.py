"""plain.py - bench.py without --tune: per kernel, libtc's default schedule
against PyTorch and NumPy, each framework timed in a fresh process of its own (procs.py: one
libtc, one PyTorch and one NumPy process per run, in that order), the results checked against
PyTorch's. With --runs N the whole measurement is repeated N times and the runs' agreement
reported. The meaning of every column: bench/README.md.
"""
import statistics
from dataclasses import dataclass, field
from typing import List, Optional

import harness
import procs
from harness import Timing, fmt_num, plural, tolerance

# mode -> the column label of its framework
FRAMEWORKS = {"libtc": "libtc", "pytorch": "PyTorch", "numpy": "NumPy"}


@dataclass
class Row:
    name: str
    sizes: dict
    flops: Optional[float]
    tol: float
    libtc: Optional[Timing] = None
    pytorch: Optional[Timing] = None
    numpy: Optional[Timing] = None
    compile_ms: Optional[float] = None
    err: Optional[float] = None           # libtc vs PyTorch
    runs: dict = field(default_factory=dict)  # framework label -> each run's median
    problems: List[str] = field(default_factory=list)


def run(args):
    kernels = harness.selected_kernels(args)
    tc_options = harness.checked_libtc_options(args)
    tc_options.setdefault("cache", "off")  # as the libtc process gets them (procs)
    names = [k.name for k in kernels]
    modes = ["libtc"] if args.libtc_only else list(FRAMEWORKS)
    with procs.Session(args, kernels) as session:
        for rnd in range(args.runs):
            for mode in modes:
                session.run_child(mode, names, rnd)
        rows = [assemble(args, session, k, modes) for k in kernels]
        return report(args, tc_options, session, rows)


def assemble(args, session, kernel, modes):
    sizes = kernel.quick if args.quick else kernel.sizes
    row = Row(kernel.name, sizes, kernel.flops(sizes) if kernel.flops else None,
              tolerance(kernel.reduction(sizes)))
    for mode in modes:
        recs = session.records(mode, kernel.name)
        if mode == "numpy" and not kernel.numpy_fn:
            continue
        setattr(row, mode, procs.combine(recs))
        row.runs[FRAMEWORKS[mode]] = procs.run_medians(recs)
        if mode == "libtc":
            errors = {r["error"] for r in recs if r and "error" in r}
            row.problems += ["libtc: %s" % e for e in sorted(errors)]
            row.compile_ms = procs.median_of(recs, "compile_ms")
    row.err = session.check_outputs(kernel.name, row.tol, {"libtc": "libtc", "numpy": "NumPy"},
                                    row.problems)
    return row


# ---- the table -------------------------------------------------------------------------------

def columns():
    return (["kernel"] + harness.time_columns("libtc") + harness.time_columns("PyTorch")
            + harness.time_columns("NumPy") + ["libtc/best", "libtc GFLOP/s",
                                              "libtc % peak", "best other GFLOP/s", "compile ms", "max rel err",
                                              "tol", "check"])


def table_cells(row, reps, peak_gflops):
    best_name, best = harness.best_peer(row)
    gflops = lambda t: fmt_num(row.flops / t.median_ms / 1e6) if row.flops and t else ""
    check = "ok" if not row.problems else "error" if row.libtc is None else "FAIL"
    return ([row.name] + harness.time_cells(row.libtc, reps)
            + harness.time_cells(row.pytorch, reps) + harness.time_cells(row.numpy, reps)
            + [fmt_num(row.libtc.median_ms / best.median_ms) if row.libtc and best else "-",
               gflops(row.libtc), harness.percent_of_peak(row.flops, row.libtc, peak_gflops),
               "%s (%s)" % (gflops(best), best_name) if gflops(best) else "",
               "%.1f" % row.compile_ms if row.compile_ms is not None else "-",
               "%.1e" % row.err if row.err is not None else "-", "%.0e" % row.tol, check])


def report(args, tc_options, session, rows):
    method = ("each framework in a fresh process of its own (%s), %s each; per kernel: %s, "
              "then %s, at most %g s; %s of the whole measurement" % (
                  "libtc only: --libtc-only" if args.libtc_only
                  else "libtc, PyTorch, NumPy, in that order", plural(args.threads, "thread"),
                  plural(args.warmup, "warm-up call"), harness.timed_calls(args),
                  args.budget, plural(args.runs, "run")))
    sections, warnings = procs.runs_section(args, [
        (r.name, r.runs, "libtc/best", harness.run_ratios(r.runs, "libtc")) for r in rows])
    header = session.header_lines(tc_options, [method], warnings)
    notes = [
        "ms: median wall time of one call (with --runs, the median of the runs' medians); min: "
        "the fastest call; * fewer timed runs than %d (time budget)" % args.reps,
        "libtc/best: libtc's median over the faster of PyTorch and NumPy (< 1: libtc faster)",
        "% peak: libtc's GFLOP/s over the FMA peak with the same threads (bench/peak.c, header)",
        "compile ms: tc_compile in the libtc process, after one compile of a primer def "
        "(median over runs); max rel err: max |libtc - PyTorch| / max |PyTorch| over all "
        "outputs; must be <= tol",
    ]
    primer = session.values("libtc", "primer_compile_ms")
    if primer:
        notes.append("a process's first compile (the primer def, not in the table): median "
                     "%s ms" % fmt_num(statistics.median(primer)))
    sections += [("Sizes", harness.sizes_lines(rows)), ("Processes", session.process_lines())]
    problems = [("bench", p) for p in session.problems]
    problems += [("bench", "libtc primer: %s" % e)
                 for e in sorted(set(session.values("libtc", "primer_error")))]
    problems += [(r.name, p) for r in rows for p in r.problems]
    return harness.print_report(args, header, harness.render_table(
        [table_cells(r, args.reps, session.peak_gflops()) for r in rows], args.markdown, columns()), notes, sections,
        problems)

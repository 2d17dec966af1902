"""harness.py - runs bench.py's kernels: makes each kernel's inputs from its TC signature,
compiles and times it in libtc, times PyTorch and NumPy on the same arrays, checks that the
results agree and renders the table (plain text or Markdown).

Imported by bench.py only after it has put the thread counts into the environment, because
OpenBLAS and OpenMP read them when NumPy and PyTorch load.
"""
import datetime
import gc
import math
import os
import shlex
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

import numpy as np
import torch

from kernels import KERNELS

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "e2e"))
import tclib  # noqa: E402  (tests/e2e/tclib.py, the ctypes shim over libtc)

FLOAT32_EPS = 2.0 ** -23


# ---- inputs, timing, agreement ---------------------------------------------------------------

def make_inputs(program, kernel, sizes, rng):
    """One array per input of the TC def: floats uniform in [-1, 1), integer inputs (gather
    indices) uniform in 0:sizes[kernel.index_bounds[name]]."""
    arrays = []
    for name, dtype, dims in program.input_params(kernel.name):
        missing = [d for d in dims if not d.isdigit() and d not in sizes]
        if missing:
            raise ValueError("%s: no size for %s of input '%s'" % (kernel.name, missing, name))
        shape = tuple(int(d) if d.isdigit() else sizes[d] for d in dims)
        if np.issubdtype(dtype, np.integer):
            arrays.append(rng.integers(0, sizes[kernel.index_bounds[name]], shape, dtype=dtype))
        else:
            arrays.append(rng.random(shape, dtype=dtype) * 2 - 1)
    return arrays


def measure(fn, warmup, reps, budget_s):
    """Calls fn `warmup` times untimed, then up to `reps` times timed, stopping once budget_s
    seconds have passed since the start; a call that alone overruns the budget during the
    warmup is the only sample. Returns (seconds of each timed call, fn's last result)."""
    gc.collect()
    gc.disable()
    try:
        times, start = [], time.perf_counter()
        for i in range(warmup + reps):
            t0 = time.perf_counter()
            result = fn()
            t1 = time.perf_counter()
            if i >= warmup or t1 - start > budget_s and not times:
                times.append(t1 - t0)
            if t1 - start > budget_s:
                break
        return times, result
    finally:
        gc.enable()


def as_arrays(result):
    """A framework's result (a tensor/array or a tuple of them) as a list of NumPy arrays."""
    items = result if isinstance(result, (tuple, list)) else [result]
    return [t.numpy() if isinstance(t, torch.Tensor) else np.asarray(t) for t in items]


def max_rel_error(got, ref):
    """max |got - ref| / max |ref| over all outputs (float64; inf on a shape mismatch)."""
    if len(got) != len(ref):
        return float("inf")
    worst = 0.0
    for g, r in zip(got, ref):
        if g.shape != r.shape:
            return float("inf")
        g64, r64 = g.astype(np.float64), r.astype(np.float64)
        scale = max(float(np.abs(r64).max(initial=0.0)), np.finfo(np.float32).tiny)
        worst = max(worst, float(np.abs(g64 - r64).max(initial=0.0)) / scale)
    return worst


def tolerance(reduction_length):
    """Float32 rounding allowance for sums of `reduction_length` terms (and a few ulps of
    exp/rsqrt), relative to the largest output."""
    return max(16, 4 * reduction_length) * FLOAT32_EPS


# ---- one kernel ------------------------------------------------------------------------------

@dataclass
class Timing:
    median_ms: float
    samples: int


def timing_of(times):
    return Timing(statistics.median(times) * 1e3, len(times))


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
    problems: List[str] = field(default_factory=list)

    def best_other(self):
        """(name, Timing) of the faster of PyTorch and NumPy."""
        others = [(n, t) for n, t in (("PyTorch", self.pytorch), ("NumPy", self.numpy)) if t]
        return min(others, key=lambda nt: nt[1].median_ms) if others else (None, None)


def run_kernel(kernel, args, tc_options):
    sizes = kernel.quick if args.quick else kernel.sizes
    row = Row(kernel.name, sizes, kernel.flops(sizes) if kernel.flops else None,
              tolerance(kernel.reduction(sizes)))
    timed = dict(warmup=args.warmup, reps=args.reps, budget_s=args.budget)
    program = tclib.Program(kernel.source.read_text(), str(kernel.source.relative_to(REPO)))
    inputs = make_inputs(program, kernel, sizes, np.random.default_rng(args.seed))

    progress(kernel.name, "libtc")
    try:
        t0 = time.perf_counter()
        tc_kernel = program.compile(kernel.name, inputs, tc_options)
        row.compile_ms = (time.perf_counter() - t0) * 1e3
        tc_outputs = [np.empty(shape, dtype) for dtype, shape in tc_kernel.output_info()]
        times, _ = measure(tc_kernel.bind(inputs, tc_outputs), **timed)
        row.libtc = timing_of(times)
    except tclib.TCError as e:
        row.problems.append("libtc: %s" % e)
        tc_outputs = None
    if args.libtc_only:
        return row

    progress(kernel.name, "PyTorch")
    tensors = [torch.from_numpy(a) for a in inputs]
    times, result = measure(lambda: kernel.torch_fn(sizes, *tensors), **timed)
    row.pytorch = timing_of(times)
    reference = as_arrays(result)

    if kernel.numpy_fn:
        progress(kernel.name, "NumPy")
        times, result = measure(lambda: kernel.numpy_fn(sizes, *inputs), **timed)
        row.numpy = timing_of(times)
        numpy_err = max_rel_error(as_arrays(result), reference)
        if not numpy_err <= row.tol:
            row.problems.append("NumPy disagrees with PyTorch: max rel. error %.2e > %.2e"
                                % (numpy_err, row.tol))

    if tc_outputs is not None:  # as the last timed run left them: no kernel accumulates
        row.err = max_rel_error(tc_outputs, reference)
        if not row.err <= row.tol:
            row.problems.append("libtc disagrees with PyTorch: max rel. error %.2e > %.2e"
                                % (row.err, row.tol))
    return row


def progress(kernel, framework):
    print("  %-10s %s" % (kernel, framework), file=sys.stderr, flush=True)


# ---- the table -------------------------------------------------------------------------------

COLUMNS = ["kernel", "libtc ms", "PyTorch ms", "NumPy ms", "libtc/best",
           "libtc GFLOP/s", "best other GFLOP/s", "compile ms", "max rel err", "tol", "check"]


def fmt_num(v):
    """Three significant digits, no exponent (whole numbers from 100 up)."""
    if v >= 100 or v <= 0:
        return "%.0f" % v
    return "%.*f" % (2 - math.floor(math.log10(v)), v)


def fmt_ms(t, reps):
    if t is None:
        return "-"
    return fmt_num(t.median_ms) + ("*" if t.samples < reps else "")


def table_cells(row, reps):
    best_name, best = row.best_other()
    gflops = lambda t: fmt_num(row.flops / t.median_ms / 1e6) if row.flops and t else ""
    check = "ok" if not row.problems else "error" if row.libtc is None else "FAIL"
    return [row.name, fmt_ms(row.libtc, reps), fmt_ms(row.pytorch, reps), fmt_ms(row.numpy, reps),
            fmt_num(row.libtc.median_ms / best.median_ms) if row.libtc and best else "-",
            gflops(row.libtc), "%s (%s)" % (gflops(best), best_name) if gflops(best) else "",
            "%.1f" % row.compile_ms if row.compile_ms is not None else "-",
            "%.1e" % row.err if row.err is not None else "-", "%.0e" % row.tol, check]


def render_table(cells, markdown):
    if markdown:
        lines = ["| " + " | ".join(COLUMNS) + " |",
                 "|" + "|".join("---" if i == 0 else "---:" for i in range(len(COLUMNS))) + "|"]
        lines += ["| " + " | ".join(c).replace("*", "\\*") + " |" for c in cells]
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in [COLUMNS] + cells) for i in range(len(COLUMNS))]
    fmt = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                              for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([fmt(COLUMNS), fmt(["-" * w for w in widths])] + [fmt(c) for c in cells])


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return "unknown CPU"


def header_lines(args, tc_options):
    opts = ",".join("%s=%s" % kv for kv in tc_options.items())
    return [
        "CPU: %s (%d cores); threads: %d" % (cpu_model(), os.cpu_count(), args.threads),
        "libtc %s (options %s); PyTorch %s; NumPy %s" % (tclib.version(), opts,
                                                          torch.__version__, np.__version__),
        "date: %s" % datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "command: bench.py %s" % " ".join(shlex.quote(a) for a in args.argv),
        "median of up to %d timed runs after %d warm-up runs, at most %g s each" % (
            args.reps, args.warmup, args.budget),
    ]


def report(rows, args, tc_options):
    md = args.markdown
    bullet = "- " if md else ""
    out = [bullet + h for h in header_lines(args, tc_options)] + [""]
    out.append(render_table([table_cells(r, args.reps) for r in rows], md))
    notes = ["ms: median wall time of one call; * fewer timed runs than %d (time budget)."
             % args.reps,
             "libtc/best: libtc's time over the faster of PyTorch and NumPy (< 1: libtc faster).",
             "max rel err: max |libtc - PyTorch| / max |PyTorch| over all outputs; "
             "must be <= tol."]
    out += [""] + [bullet + n for n in notes] + ["", "Sizes:"]
    out += ["%s%s: %s" % (bullet, r.name, " ".join("%s=%d" % kv for kv in r.sizes.items()))
            for r in rows]
    problems = [(r.name, p) for r in rows for p in r.problems]
    if problems:
        out += ["", "Problems:"] + ["%s%s: %s" % (bullet, n, p) for n, p in problems]
    print("\n".join(out))
    return 1 if problems else 0


# ---- entry -----------------------------------------------------------------------------------

def libtc_options(args):
    """The options dict for tc_compile: backend, threads (cpu backend only), then each
    --option KEY=VALUE (an empty VALUE drops KEY: `--option threads=` passes no threads)."""
    opts = {"backend": args.backend}
    if args.backend == "cpu":
        opts["threads"] = str(args.threads)
    for kv in args.option:
        key, _, value = kv.partition("=")
        opts[key] = value
        if not value:
            del opts[key]
    return opts


def run(args):
    torch.set_num_threads(args.threads)
    selected = KERNELS
    if args.only:
        names = args.only.split(",")
        unknown = set(names) - {k.name for k in KERNELS}
        if unknown:
            sys.exit("bench: unknown kernel(s) %s; known: %s"
                     % (", ".join(sorted(unknown)), ", ".join(k.name for k in KERNELS)))
        selected = [k for k in KERNELS if k.name in names]
    tc_options = libtc_options(args)
    try:
        tclib.Options(tc_options)
    except tclib.TCError as e:
        sys.exit("bench: libtc rejects the options %s: %s" % (tc_options, e.message))
    with torch.inference_mode():
        rows = [run_kernel(k, args, tc_options) for k in selected]
    return report(rows, args, tc_options)

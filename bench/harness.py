"""harness.py - what bench.py's modes share: each kernel's inputs from its TC signature, the
timing loop, the agreement check, libtc's options, the number formats, the table renderer and
the report's frame (plain text or Markdown). procs.py runs the measuring processes, plain.py
and tuned.py drive them and lay out their tables.

Imported by bench.py only after it has put the thread counts into the environment, because
OpenBLAS and OpenMP read them when NumPy and PyTorch load.
"""
import datetime
import gc
import math
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kernels import KERNELS, torch  # torch: imported on first use (a PyTorch process's)

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


def measure(fn, warmup, reps, budget_s, min_timed_s=0.0):
    """Calls fn `warmup` times untimed, then `reps` times timed and more while the timed calls
    add up to less than min_timed_s (a median of 20 calls of a 25 us kernel swings 10-30%
    between sessions on a noisy VM), stopping once budget_s seconds have passed since the
    start; a call that alone overruns the budget during the warmup is the only sample. Returns
    (seconds of each timed call, fn's last result)."""
    gc.collect()
    gc.disable()
    try:
        times, start, timed, i = [], time.perf_counter(), 0.0, 0
        while i < warmup + reps or timed < min_timed_s:
            t0 = time.perf_counter()
            result = fn()
            t1 = time.perf_counter()
            if i >= warmup or t1 - start > budget_s and not times:
                times.append(t1 - t0)
                timed += t1 - t0
            i += 1
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


def best_peer(row):
    """(name, Timing) of the faster (by median) of a row's PyTorch and NumPy, or (None, None)."""
    peers = [(n, t) for n, t in (("PyTorch", row.pytorch), ("NumPy", row.numpy)) if t]
    return min(peers, key=lambda nt: nt[1].median_ms) if peers else (None, None)


def percent_of_peak(flops, timing, peak_gflops):
    """A run's GFLOP/s (median time) as a share of the FMA peak (bench/peak.py), as "68%"; ""
    where the kernel counts no flops or no peak was measured."""
    if not flops or not timing or not peak_gflops:
        return ""
    return "%.0f%%" % (100.0 * flops / timing.median_ms / 1e6 / peak_gflops)


def run_ratios(runs, label):
    """runs: column label -> each run's median. Per run: `label`'s median over the faster of
    PyTorch's and NumPy's (None where one is missing)."""
    ratios = []
    for run, ms in enumerate(runs[label]):
        peers = [runs[p][run] for p in ("PyTorch", "NumPy")
                 if p in runs and runs[p][run] is not None]
        ratios.append(ms / min(peers) if ms is not None and peers else None)
    return ratios


def progress(kernel, what):
    print("  %-10s %s" % (kernel, what), file=sys.stderr, flush=True)


# ---- numbers and tables --------------------------------------------------------------------

@dataclass
class Timing:
    median_ms: float  # over runs: the median of each run's median
    min_ms: float     # the fastest call of all runs
    samples: int      # timed calls in the run with the fewest


def fmt_num(v):
    """Three significant digits, no exponent (whole numbers from 100 up)."""
    if v >= 100 or v <= 0:
        return "%.0f" % v
    return "%.*f" % (2 - math.floor(math.log10(v)), v)


def plural(n, noun):
    return "%d %s%s" % (n, noun, "" if n == 1 else "s")


def timed_calls(args):
    """The timed calls per kernel and framework, as the report states them."""
    more = " (more until they add up to %g s)" % args.min_time if args.min_time > 0 else ""
    return "up to %s%s" % (plural(args.reps, "timed call"), more)


def time_columns(label):
    """The two columns of one framework's time: median and minimum."""
    return ["%s ms" % label, "%s min" % label]


def time_cells(t, reps):
    """Median (* when a run had fewer timed calls than reps, the budget having run out) and
    minimum, in ms; '-' for none."""
    if t is None:
        return ["-", "-"]
    return [fmt_num(t.median_ms) + ("*" if t.samples < reps else ""), fmt_num(t.min_ms)]


def render_table(cells, markdown, cols):
    """The table of `cells` under `cols`: Markdown, or plain text with aligned columns."""
    if markdown:
        lines = ["| " + " | ".join(cols) + " |",
                 "|" + "|".join("---" if i == 0 else "---:" for i in range(len(cols))) + "|"]
        lines += ["| " + " | ".join(c).replace("*", "\\*") + " |" for c in cells]
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in [cols] + cells) for i in range(len(cols))]
    fmt = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                              for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([fmt(cols), fmt(["-" * w for w in widths])] + [fmt(c) for c in cells])


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return "unknown CPU"


def now():
    return datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")


def quoted(argv):
    return " ".join(shlex.quote(a) for a in argv)


def sizes_lines(rows):
    """Each row's kernel and sizes (rows have name and sizes)."""
    return ["%s: %s" % (r.name, " ".join("%s=%d" % kv for kv in r.sizes.items())) for r in rows]


def print_report(args, header, table, notes, sections, problems):
    """Prints a report: the header lines, the table, the notes, each (title, lines) section and
    the problems ((who, what) pairs), as bullets with --markdown. The exit status: 1 if there
    are problems."""
    bullet = "- " if args.markdown else ""
    out = [bullet + h for h in header] + ["", table, ""] + [bullet + n for n in notes]
    for title, lines in sections + [("Problems", ["%s: %s" % p for p in problems])]:
        if lines:
            out += ["", title + ":"] + [""] * bool(bullet) + [
                bullet + l if bullet and l and not l.startswith("|") else l for l in lines]
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


def selected_kernels(args):
    """KERNELS, or those --only names (in KERNELS' order); exits on an unknown name."""
    if not args.only:
        return list(KERNELS)
    names = args.only.split(",")
    unknown = set(names) - {k.name for k in KERNELS}
    if unknown:
        sys.exit("bench: unknown kernel(s) %s; known: %s"
                 % (", ".join(sorted(unknown)), ", ".join(k.name for k in KERNELS)))
    return [k for k in KERNELS if k.name in names]


def checked_libtc_options(args):
    """libtc_options(args), after libtc has accepted them (exits otherwise)."""
    tc_options = libtc_options(args)
    try:
        tclib.Options(tc_options)
    except tclib.TCError as e:
        sys.exit("bench: libtc rejects the options %s: %s" % (tc_options, e.message))
    return tc_options

"""procs.py - the measuring processes of bench.py (a fair benchmark). Every mode times
every framework in a fresh child process of its own (`bench.py --child MODE ...`, internal),
all with the same thread count, so that no framework runs beside another's worker threads (or
right after them in the same process):

  libtc    compile a one-statement primer def (the process's one-time initialisation), then
           every kernel with the bench's libtc options (cache=off unless --option cache=...),
           and time each (the plain table);
  cold     the same with cache=off, usually for one kernel ("default" of --tune);
  warm     the same from the tuned cache ("tuned" of --tune; tuned.py);
  tune     tc_tune every kernel into the bench's cache (tuned.child_tune);
  pytorch, numpy: time that framework on every kernel; also name the BLAS it has loaded.

The driver's side is a Session: it makes the inputs once and saves them as .npy files that every
child loads, so all frameworks see identical arrays; it runs no kernel itself and never imports
PyTorch. Before each child it reads the load average. A child prints one line
`bench-result: <JSON>` on stdout (progress goes to stderr) and, in the first run, saves its
outputs as .npy, which the driver compares with PyTorch's.
"""
import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import fair
import harness
import peak
from harness import Timing, fmt_num, max_rel_error, measure, progress, tclib
from kernels import torch

BENCH_PY = Path(__file__).resolve().parent / "bench.py"
RESULT_MARK = "bench-result: "
# what the report calls each mode's process
LABELS = {"libtc": "libtc", "cold": "libtc default (cache=off)", "warm": "libtc tuned (cache)",
          "tune": "tc_tune", "pytorch": "PyTorch", "numpy": "NumPy"}
# Compiled first in every libtc process, so that each kernel's compile time is that of a
# process's second compile: the first pays the one-time initialisation (LLVM and Halide tables,
# the cache's LMDB environment), which the report gives separately.
PRIMER_SOURCE = "def bench_primer(float(N) X) -> (Y) {\n  Y(i) = X(i) + X(i)\n}\n"
PRIMER_INPUT = np.arange(64, dtype=np.float32)


# ---- the children ----------------------------------------------------------------------------

def source_name(kernel):
    return str(kernel.source.relative_to(harness.REPO))


def input_path(workdir, kernel, i):
    return Path(workdir) / "inputs" / ("%s.%d.npy" % (kernel, i))


def output_path(workdir, kernel, mode, i):
    return Path(workdir) / "outputs" / ("%s.%s.%d.npy" % (kernel, mode, i))


def load_inputs(args, kernel):
    manifest = json.loads((Path(args.workdir) / "inputs" / "manifest.json").read_text())
    return [np.load(input_path(args.workdir, kernel.name, i))
            for i in range(manifest[kernel.name])]


def save_outputs(args, kernel, mode, arrays):
    if args.save_outputs:
        for i, a in enumerate(arrays):
            np.save(output_path(args.workdir, kernel.name, mode, i), a)


def timed_runs(args, fn):
    """measure(fn) with the bench's warm-up, repetitions and budget: ({ms: median, min_ms,
    samples}, fn's last result)."""
    times, result = measure(fn, warmup=args.warmup, reps=args.reps, budget_s=args.budget, min_timed_s=args.min_time)
    return ({"ms": statistics.median(times) * 1e3, "min_ms": min(times) * 1e3,
             "samples": len(times)}, result)


def libtc_child_options(args):
    """libtc: the bench's options, cache=off unless --option cache=... says otherwise (the
    plain table times the default schedule, not what a user's cache holds); cold: cache=off;
    warm: the tuned cache."""
    opts = harness.libtc_options(args)
    if args.child == "libtc":
        opts.setdefault("cache", "off")
    else:
        opts["cache"] = args.cache if args.child == "warm" else "off"
    return opts


def child_libtc(args, kernels):
    """libtc, cold or warm: the primer, then each kernel's compile and timing."""
    options = tclib.Options(libtc_child_options(args))
    out = {"kernels": {}}
    try:
        primer = tclib.Program(PRIMER_SOURCE, "<bench primer>")
        t0 = time.perf_counter()
        primer.compile("bench_primer", [PRIMER_INPUT], options)
        out["primer_compile_ms"] = (time.perf_counter() - t0) * 1e3
    except tclib.TCError as e:
        out["primer_error"] = str(e)
    for kernel in kernels:
        progress(kernel.name, "%s, compile" % LABELS[args.child])
        rec = out["kernels"][kernel.name] = {}
        try:
            program = tclib.Program(kernel.source.read_text(), source_name(kernel))
            inputs = load_inputs(args, kernel)
            tensors = [tclib.Tensor(a) for a in inputs]
            t0 = time.perf_counter()
            compiled = program.compile(kernel.name, tensors, options)
            rec["compile_ms"] = (time.perf_counter() - t0) * 1e3
            rec["cache_hit"] = compiled.cache_hit()
            rec["describe"] = compiled.describe()
            outputs = [np.empty(shape, dtype) for dtype, shape in compiled.output_info()]
            timing, _ = timed_runs(args, compiled.bind(inputs, outputs))
            rec.update(timing)
            save_outputs(args, kernel, args.child, outputs)
        except tclib.TCError as e:
            rec["error"] = str(e)
    return out


def torch_blas():
    """fair.this_process_blas() after a torch matmul, with the build's BLAS_INFO."""
    a = torch.ones(64, 64)
    torch.mm(a, a)
    kind, text = fair.this_process_blas()
    info = [w for w in torch.__config__.show().replace(",", " ").split()
            if w.startswith("BLAS_INFO=")]
    return kind, text + ("; torch built with %s" % info[0] if info else "")


def child_peer(args, kernels):
    """pytorch or numpy: that framework on every kernel it has a form of."""
    if args.child == "pytorch":
        torch.set_num_threads(args.threads)
        version, (kind, blas) = torch.__version__, torch_blas()
        call = lambda kernel, sizes, inputs: kernel.torch_fn(
            sizes, *[torch.from_numpy(a) for a in inputs])
    else:
        version, (kind, blas) = np.__version__, fair.numpy_blas()
        call = lambda kernel, sizes, inputs: kernel.numpy_fn(sizes, *inputs)
    out = {"version": version, "blas": blas, "blas_kind": kind, "kernels": {}}
    with torch.inference_mode() if args.child == "pytorch" else contextlib.nullcontext():
        for kernel in kernels:
            if args.child == "numpy" and not kernel.numpy_fn:
                continue
            progress(kernel.name, LABELS[args.child])
            sizes = kernel.quick if args.quick else kernel.sizes
            inputs = load_inputs(args, kernel)
            timing, result = timed_runs(args, lambda: call(kernel, sizes, inputs))
            out["kernels"][kernel.name] = timing
            save_outputs(args, kernel, args.child, harness.as_arrays(result))
    return out


def child(args):
    """bench.py --child MODE: one measuring process; prints its result line."""
    kernels = harness.selected_kernels(args)
    if args.child == "tune":
        import tuned
        result = tuned.child_tune(args, kernels)
    elif args.child in ("pytorch", "numpy"):
        result = child_peer(args, kernels)
    else:
        result = child_libtc(args, kernels)
    result["pid"] = os.getpid()
    sys.stdout.write(RESULT_MARK + json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


# ---- the driver ------------------------------------------------------------------------------

def child_command(args, mode, names, save):
    cmd = [sys.executable, str(BENCH_PY), "--child", mode, "--workdir", args.workdir,
           "--backend", args.backend, "--threads", str(args.threads), "--seed", str(args.seed),
           "--reps", str(args.reps), "--warmup", str(args.warmup), "--budget", str(args.budget),
           "--min-time", str(args.min_time),
           "--only", ",".join(names)]
    if args.tune is not None:
        cmd += ["--cache", args.cache, "--tune", str(args.tune)]
    for kv in args.option:
        cmd += ["--option", kv]
    if args.quick:
        cmd.append("--quick")
    if save:
        cmd.append("--save-outputs")
    return cmd


def combine(records):
    """Timing over runs: the median of each run's median, the minimum of all runs' minima, the
    fewest samples of a run."""
    recs = [r for r in records if r and "ms" in r]
    if not recs:
        return None
    return Timing(statistics.median(r["ms"] for r in recs), min(r["min_ms"] for r in recs),
                  min(r["samples"] for r in recs))


def median_of(records, key):
    """The median of `key` over the records that have it (None if none)."""
    values = [r[key] for r in records if r and r.get(key) is not None]
    return statistics.median(values) if values else None


def run_medians(records):
    """Each run's median (None where that run has none)."""
    return [r["ms"] if r and "ms" in r else None for r in records]


class Session:
    """The driver's side of one bench.py invocation: a private work directory (mode 0700,
    removed on close) with the inputs, the children run in it, their results per run, the load
    average before the run and before each child, and the problems about processes."""

    def __init__(self, args, kernels):
        self.args = args
        self.load_before = fair.read_load()
        warning = fair.load_warning([("at the start", self.load_before)])
        if warning:
            print("bench: " + warning, file=sys.stderr, flush=True)
        self.workdir = args.workdir = tempfile.mkdtemp(prefix="tc-bench-")
        self.results = [dict() for _ in range(args.runs)]  # run -> mode -> [result]
        self.processes = []  # one dict per child
        self.intervals = []  # (start, end, CPU seconds) of each finished child: fair.own_load
        self.problems = []   # about processes, not one kernel
        self.peak = self.measure_peak()
        try:
            self.prepare(kernels)
        except BaseException:
            shutil.rmtree(self.workdir, ignore_errors=True)
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.workdir, ignore_errors=True)

    def measure_peak(self):
        """The FMA peak with the session's thread count and with 1 thread (bench/peak.py), in
        processes of their own before any framework's; None with --no-peak, --child, or when
        it cannot be measured (then a problem says why)."""
        if self.args.no_peak or self.args.child:
            return None
        try:
            return {n: peak.measure(n, self.args.peak_seconds) for n in sorted({1, self.args.threads})}
        except RuntimeError as e:
            self.problems.append("FMA peak not measured: %s" % e)
            return None

    def peak_gflops(self):
        """The FMA peak of the session's thread count in GFLOP/s, or None."""
        return self.peak[self.args.threads]["gflops"] if self.peak else None

    def prepare(self, kernels):
        """Saves each kernel's inputs under workdir/inputs."""
        (Path(self.workdir) / "inputs").mkdir()
        (Path(self.workdir) / "outputs").mkdir()
        manifest = {}
        for kernel in kernels:
            sizes = kernel.quick if self.args.quick else kernel.sizes
            program = tclib.Program(kernel.source.read_text(), source_name(kernel))
            inputs = harness.make_inputs(program, kernel, sizes,
                                         np.random.default_rng(self.args.seed))
            for i, a in enumerate(inputs):
                np.save(input_path(self.workdir, kernel.name, i), a)
            manifest[kernel.name] = len(inputs)
        (Path(self.workdir) / "inputs" / "manifest.json").write_text(json.dumps(manifest))

    def run_child(self, mode, names, run=None):
        """Runs one child of run `run` (0-based; None: the tuning, before the runs),
        saving its outputs in the first run; its result dict, or None (the reason appended to
        problems)."""
        label = "%s process (%s)" % (LABELS[mode], ",".join(names))
        when = "tuning" if run is None else "run %d of %d" % (run + 1, self.args.runs)
        load, start = fair.read_load(), time.monotonic()
        others = None if load is None else max(0.0, load - fair.own_load(self.intervals, start))
        print("bench: %s, %s; load average %s%s" % (
            when, label, "unknown" if load is None else "%.2f" % load,
            " (not idle)" if fair.load_warning([("", others)]) else ""),
            file=sys.stderr, flush=True)
        cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run(child_command(self.args, mode, names, run == 0),
                              stdout=subprocess.PIPE, text=True)
        cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        end = time.monotonic()
        cpu = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime
        self.intervals.append((start, end, cpu))
        lines = [l for l in proc.stdout.splitlines() if l.startswith(RESULT_MARK)]
        result = json.loads(lines[-1][len(RESULT_MARK):]) if lines else None
        self.processes.append(dict(when=when.split(" of ")[0], label=label,
                                   framework=LABELS[mode], load=load,
                                   others=others, seconds=end - start, cpu=cpu,
                                   pid=result.get("pid") if result else None))
        if proc.returncode != 0 or not result:
            self.problems.append("%s, %s: exited with status %d%s" % (
                when, label, proc.returncode, "" if lines else " without a result"))
            return None
        if run is not None:
            self.results[run].setdefault(mode, []).append(result)
        return result

    # ---- the results ----

    def records(self, mode, name):
        """Per run: kernel `name`'s record from that run's `mode` processes (None if none)."""
        return [next((r["kernels"][name] for r in run.get(mode, []) if name in r["kernels"]),
                     None) for run in self.results]

    def values(self, mode, key):
        """`key` of every `mode` process that has it, over all runs."""
        return [r[key] for run in self.results for r in run.get(mode, []) if key in r]

    def load_outputs(self, name, mode):
        paths = sorted(Path(self.workdir, "outputs").glob("%s.%s.*.npy" % (name, mode)),
                       key=lambda p: int(p.name.rsplit(".", 2)[1]))
        return [np.load(p) for p in paths] or None

    def check_outputs(self, name, tol, modes, problems):
        """Compares each of modes {mode: label}'s outputs with PyTorch's; appends a problem for
        each beyond tol; the largest error of the libtc modes (None if none compared)."""
        reference = self.load_outputs(name, "pytorch")
        if reference is None:
            return None
        errs = []
        for mode, label in modes.items():
            got = self.load_outputs(name, mode)
            if got is None:
                continue
            err = max_rel_error(got, reference)
            if mode != "numpy":
                errs.append(err)
            if not err <= tol:
                problems.append("%s disagrees with PyTorch: max rel. error %.2e > %.2e"
                                % (label, err, tol))
        return max(errs) if errs else None

    # ---- the report's lines ----

    def load_readings(self):
        """(what, load) pairs: at the start, and other processes' share before each child."""
        return [("at the start", self.load_before)] + [
            ("before the %s process (%s)" % (p["framework"], p["when"]), p["others"])
            for p in self.processes]

    def header_lines(self, tc_options, lines, warnings=()):
        """The report's header: machine, versions, date, command, `lines` (the mode's method),
        load average, BLAS, then the warnings (the session's and `warnings`), which also go to
        stderr."""
        args = self.args
        opts = ",".join("%s=%s" % kv for kv in tc_options.items())
        first = lambda mode, key, default: next(iter(self.values(mode, key)), default)
        out = [
            "CPU: %s (%d cores); threads: %d for every framework" % (
                harness.cpu_model(), os.cpu_count(), args.threads),
            "libtc %s (options %s); PyTorch %s; NumPy %s" % (
                tclib.version(), opts, first("pytorch", "version", "not run"), np.__version__),
            "date: %s" % harness.now(),
            "command: bench.py %s" % harness.quoted(args.argv),
        ] + lines
        if self.peak:
            out.append("FMA peak (bench/peak.c): " + "; ".join(
                peak.describe(p) for _, p in sorted(self.peak.items(), reverse=True)))
        loads = [p["load"] for p in self.processes if p["load"] is not None]
        out.append("load average (1 min): %s at the start; %s" % (
            "unknown" if self.load_before is None else "%.2f" % self.load_before,
            "before each of the %d processes %.2f to %.2f (see Processes)" % (
                len(loads), min(loads), max(loads)) if loads else "no process ran"))
        for mode in ("numpy", "pytorch"):
            blas = first(mode, "blas", None)
            if blas:
                out.append("%s's BLAS: %s" % (LABELS[mode], blas))
        warnings = self.warnings() + list(warnings)
        for w in warnings:
            print("bench: " + w, file=sys.stderr, flush=True)
        return out + warnings

    def warnings(self):
        """A load average above fair.LOAD_LIMIT; NumPy not on OpenBLAS."""
        out = []
        load = fair.load_warning(self.load_readings())
        if load:
            out.append(load)
        kind = next(iter(self.values("numpy", "blas_kind")), "openblas")
        if kind != "openblas":
            out.append("WARNING: NumPy does not use OpenBLAS (%s): the NumPy column is not "
                       "the OpenBLAS peer; bench/run.sh installs libopenblas0-pthread and "
                       "selects it" % next(iter(self.values("numpy", "blas"))))
        return out

    def process_lines(self):
        """One line per child: run, framework, pid, load average before it, time."""
        out = []
        for p in self.processes:
            load = "unknown" if p["load"] is None else "%.2f, of which other processes %.2f" \
                % (p["load"], p["others"])
            out.append("%s, %s: pid %s; load average before it %s; %.1f s, %.1f s CPU"
                       % (p["when"], p["label"], p["pid"] or "?", load, p["seconds"],
                          p["cpu"]))
        return out


def runs_section(args, entries):
    """With --runs N >= 2, the Runs section: per kernel and run each framework's median and the
    ratio, then the spread between runs. entries: per kernel (name, {framework: each run's
    median}, ratio label, each run's ratio). Returns ([(title, lines)] or [], [warning] or [])
    the warning naming the kernels whose runs disagree by more than fair.RUN_AGREEMENT."""
    if args.runs < 2 or not entries:
        return [], []
    frameworks = list(dict.fromkeys(f for _, values, _, _ in entries for f in values))
    ratio_label = entries[0][2]
    ms = lambda v: "-" if v is None else fmt_num(v)
    pct = lambda v: "-" if v is None else "%.1f%%" % (100 * v)
    per_run, spreads, flagged = [], [], []
    for name, values, _, ratios in entries:
        per_run += [[name, str(run + 1)] + [ms(values[f][run]) if f in values else "-"
                                            for f in frameworks] + [ms(ratio)]
                    for run, ratio in enumerate(ratios)]
        bad = fair.disagreeing(values)
        flagged += [name] if bad else []
        spreads.append([name] + [pct(fair.spread(values.get(f, []))) for f in frameworks]
                       + [pct(fair.spread(ratios)), "NO (%s)" % ", ".join(bad) if bad else "ok"])
    limit = round(100 * fair.RUN_AGREEMENT)
    lines = [harness.render_table(per_run, args.markdown, ["kernel", "run"] + [
        "%s ms" % f for f in frameworks] + [ratio_label]), "",
        "spread: max/min - 1 of the runs' medians; agree: every framework's within %d%%"
        % limit, "",
        harness.render_table(spreads, args.markdown, ["kernel"] + frameworks
                             + [ratio_label, "agree"])]
    warnings = ["WARNING: the %d runs disagree by more than %d%% on %s (see Runs)"
                % (args.runs, limit, ", ".join(flagged))] if flagged else []
    return [("Runs", lines)], warnings

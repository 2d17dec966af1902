#!/usr/bin/python3
"""difftest.py - differential fuzzer: libtc's cpu backend (or --backend B --option K=V, e.g. the
cuda backend's emulation) against its reference backend.

What it does: generates random valid TC programs with inputs (gen.py), runs each on
backend=reference and backend=cpu in a worker subprocess (worker.py, through
tests/e2e/tclib.py), compares, and on a disagreement, crash or hang minimises the case
(minimize.py) and writes a self-contained reproducer. It never crashes itself on a libtc
failure: a dead worker is a 'crash', a worker past --timeout is restarted and the program run
again with 5 times the limit (a slow machine is not a hang: it is counted 'slow'), and past
that too it is a 'hang'.

Comparison rule (also in README.md):
  * statuses: both TC_OK, or both the same error status (tclib.STATUS names); a program both
    backends reject before tc_run is counted as "rejected", not as a failure;
  * on TC_OK: the inferred output dtypes/shapes (tc_infer_outputs and tc_kernel_output_info)
    must be equal; inputs must be unchanged and no byte next to an output view may change;
  * integer outputs bit for bit; bool outputs byte for byte (so a bool byte other than 0/1
    is a difference);
  * float outputs element by element: equal (+0 == -0), or both NaN (any payload), or the
    same infinity; in a program with a reduction (R = the longest reduction, the product of
    its reduction variables' extents, plus one where it adds to the tensor's values (`+=`
    without `!`: the cpu backend fuses product and sum), > 1) also finite with |ref - cpu| <=
    max(8 ulp(max(|ref|, |cpu|)), 8 * eps * R * S), where ulp/eps are those of the output
    dtype and S = the largest finite magnitude in that reference output (at least 1): the
    cpu backend splits float sums and products into vector lanes (reassociated). Every other
    operation is specified to the bit, exp included (docs/guide/language.md, "Scalar semantics").
  * documented differences (counted, not failures): a NaN or infinity on one side only, in a
    program with a += reduction (a float sum split into vector lanes overflows in another
    order: docs/guide/language.md, "Scalar semantics"); any float difference in a program with a
    += reduction that goes away with the products unfused (`cpu.fma=0`/`cuda.fma=0`): the fused
    multiply-add's single rounding, beyond the tolerance where terms cancel (judge).

What it does not do: find bugs both backends share (same wrong answer, front-end or tc_run
validation bugs), check error messages (only statuses), or measure performance.

Usage: see README.md.  /usr/bin/python3 tests/fuzz/diff/difftest.py --time 300
"""
import argparse
import collections
import concurrent.futures
import json
import os
import queue
import random
import shutil
import sys
import tempfile
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "e2e"))

import gen  # noqa: E402
import minimize  # noqa: E402
import tcast  # noqa: E402
import tclib  # noqa: E402
from worker import WorkerClient  # noqa: E402

ULPS = 8
# The backend tested against the reference, and its extra options (--backend, --option).
TESTED = ["cpu", {}]
DEFAULT_LIBRARY = os.path.normpath(os.path.join(HERE, "..", "..", "..", "build", "src", "libtc.so"))


# ---- running one case on both backends -----------------------------------------------------------

class Runner:
    def __init__(self, client):
        self.client = client

    def request(self, case, backend, extra_options=None):
        opts = dict(case["options"], backend=backend, **(extra_options or {}))
        req = {"source": tcast.fmt_prog(case["prog"]) if "source" not in case else case["source"],
               "entry": case["prog"].entry if case.get("prog") else case["entry"],
               "inputs": [{"data": i["data"], "layout": i["layout"], "as_bool": i.get("as_bool", False)}
                          for i in case["inputs"]],
               "outputs": case["outputs"], "out_seed": case["out_seed"], "options": opts}
        return self.client.request(req)

    def both(self, case):
        return {"reference": self.request(case, "reference"), "tested": self.request(case, TESTED[0], TESTED[1])}


# ---- comparing --------------------------------------------------------------------------------------

class Verdict:
    """kind: 'pass' | 'rejected' | 'documented' | 'fail'; sig: the failure's kind (a tuple)
    used to keep the failure while minimising and to group failures into classes."""

    def __init__(self, kind, sig=None, detail=""):
        self.kind, self.sig, self.detail = kind, sig, detail

    @property
    def failed(self):
        return self.kind == "fail"


def status_text(r):
    return "OK" if r["status"] == "TC_OK" else "%s at %s" % (r["status"], r["stage"])


def compare(case, results):
    ref, cpu = results["reference"], results["tested"]
    for backend, (how, r) in (("reference", ref), (TESTED[0], cpu)):
        if how == "crash":
            return Verdict("fail", ("crash", backend, r["signal"] or "exit %s" % r["returncode"]),
                           "%s worker died: %s" % (backend, r["signal"] or r["returncode"]))
        if how == "hang":
            return Verdict("fail", ("hang", backend), "%s worker timed out" % backend)
        if "harness_error" in r:
            return Verdict("fail", ("harness-error", backend), r["harness_error"])
    ref, cpu = ref[1], cpu[1]
    if ref["status"] != cpu["status"]:
        tag = runtime_tag(case, ref if ref["status"] == "TC_ERROR_RUNTIME" else cpu)
        sig = ("status", "ref " + ref["status"], TESTED[0] + " " + cpu["status"]) + ((tag,) if tag else ())
        for r in (ref, cpu):
            if r["status"] in ("TC_ERROR_INTERNAL", "TC_ERROR_COMPILE", "TC_ERROR_UNSUPPORTED"):
                sig += (message_key(r["message"]),)
        return Verdict("fail", sig,
                       "reference: %s: %s\n%s: %s: %s" % (status_text(ref), ref["message"], TESTED[0],
                                                         status_text(cpu), cpu["message"]))
    if ref["status"] != "TC_OK":
        if ref["stage"] in ("define", "infer", "compile") and cpu["stage"] in ("define", "infer", "compile"):
            return Verdict("rejected", detail="%s: %s" % (status_text(ref), ref["message"]))
        return Verdict("pass", detail=status_text(ref))
    for name, r in (("reference", ref), (TESTED[0], cpu)):
        if r["infer"] != r["kernel_info"]:
            return Verdict("fail", ("info", name), "%s: tc_infer_outputs %s but tc_kernel_output_info %s"
                           % (name, r["infer"], r["kernel_info"]))
    if ref["infer"] != cpu["infer"]:
        return Verdict("fail", ("info", "backends"), "output infos: reference %s, %s %s"
                       % (ref["infer"], TESTED[0], cpu["infer"]))
    for name, r in (("reference", ref), (TESTED[0], cpu)):
        if r["inputs_changed"]:
            return Verdict("fail", ("input-modified", name), "%s changed inputs %s" % (name, r["inputs_changed"]))
        for i, w in enumerate(r["outside_written"]):
            if w:
                return Verdict("fail", ("wrote-outside-output", name),
                               "%s wrote bytes %s relative to output %d" % (name, w, i))
    return compare_outputs(case, ref, cpu)


def message_key(message):
    """The gist of an error message, without names and numbers: 'could not find var # to
    reorder in the argument list' (used to tell internal errors apart)."""
    import re
    text = (message or "").replace("internal error:", "").replace("Error:", "").strip()
    text = text.split("\n")[0]
    text = re.sub(r"'[^']*'", "#", text)
    text = re.sub(r"[\w$.]*[\d$][\w$.]*", "#", text)
    text = re.sub(r"\b(in schedule for|on) #(\.update\(#\))?", r"\1 #", text, flags=re.I)
    return " ".join(text.split())[:70]


def runtime_tag(case, r):
    """For a TC_ERROR_RUNTIME on one side only: where the bad read is. 'dead statement' (its
    result is never used), 'guarded' (its statement has a ?: / && / || and a gather), or None."""
    import re
    if r["status"] != "TC_ERROR_RUNTIME" or not case.get("prog") or case.get("source"):
        return None
    m = re.search(r":(\d+):\d+: error", r["message"] or "")
    if not m:
        return None
    hit = tcast.statement_at_line(case["prog"], int(m.group(1)))
    if hit is None:
        return None
    d, si = hit
    if (d.name, si) in tcast.dead_statements(case["prog"]):
        return "dead statement"
    s = d.body[si]
    if s.is_call:
        return None
    nodes = [n for e in s.exprs() for n in e.walk()]
    branchy = any(n.k == "tern" or (n.k == "bin" and n.op in ("&&", "||")) for n in nodes)
    gather = any(n.k == "acc" and any(tcast.reads_tensor(a) for a in n.args) for n in nodes)
    return "guarded" if branchy and gather else None


def judge(runner, case):
    """(results, verdict) of `case` run on both backends. A float value difference in a program
    with a += reduction whose products the tested backend fuses (`cpu.fma`/`cuda.fma`, on by
    default) is run again unfused; where that run agrees, the difference is the fused
    multiply-add's single rounding (documented: docs/guide/language.md, "Scalar semantics"),
    which exceeds the tolerance where terms cancel: -1.8e308 * 0.75 + -1.8e308 * -0.75 is 0
    unfused, the first product's rounding error (5e291) fused."""
    results = runner.both(case)
    verdict = compare(case, results)
    fma = TESTED[0] + ".fma"
    if (verdict.failed and verdict.sig[0] == "value" and str(verdict.sig[1]).startswith(("float", "bfloat"))
            and has_sum_reduction(case) and dict(case["options"], **TESTED[1]).get(fma, "1") != "0"):
        unfused = runner.request(case, TESTED[0], dict(TESTED[1], **{fma: "0"}))
        if compare(case, {"reference": results["reference"], "tested": unfused}).kind in ("pass", "documented"):
            return results, Verdict("documented", ("fused multiply-add rounding",), verdict.detail)
    return results, verdict


def compare_outputs(case, ref, cpu):
    names = [o.name for o in case["prog"].entry_def().outputs] if case.get("prog") else None
    for i, ((dtype, shape), a, b) in enumerate(zip(ref["infer"], ref["outputs"], cpu["outputs"])):
        label = names[i] if names and i < len(names) else "output %d" % i
        bad, sub = diff_output(dtype, a, b, case.get("red_len", 1))
        if bad is None:
            continue
        detail = describe_diff(label, dtype, a, b, bad)
        if sub in ("nan-vs-number", "inf-vs-finite", "inf-sign") and has_sum_reduction(case):
            return Verdict("documented", ("reassociated sum overflowed",), detail)
        return Verdict("fail", ("value", dtype, sub), detail)
    return Verdict("pass")


def has_sum_reduction(case):
    """A += reduction: the cpu backend may split a float sum into vector lanes, and partial sums
    in another order may overflow (inf, or inf - inf = NaN) where the reference's did not."""
    prog = case.get("prog")
    if prog is None:
        return False
    return any(not s.is_call and s.op.startswith("+=") for d in prog.defs for s in d.body)


def diff_output(dtype, a, b, red_len):
    """(indices of differing elements or None, sub-kind of the difference)."""
    dt = tclib.np_dtype_named(dtype) if isinstance(dtype, str) else np.dtype(dtype)
    coarser = 1.0
    if tclib.is_bf16(dt):  # bfloat16 bits: compared as values, ulps 2^16 times float32's
        a, b, dt, coarser = tclib.from_bf16(a), tclib.from_bf16(b), np.dtype(np.float32), 65536.0
    if dt.kind != "f":
        ne = a != b
        if not ne.any():
            return None, None
        if dt == np.bool_:
            return np.argwhere(ne), ("bool-byte-not-0/1" if ((b != 0) & (b != 1)).any() else "bool")
        return np.argwhere(ne), "int"
    ok = float_close(a, b, dt, red_len, coarser)
    if ok.all():
        return None, None
    bad = ~ok
    return np.argwhere(bad), float_subkind(a[bad], b[bad])


def float_close(a, b, dt, red_len, coarser=1.0):
    """Element-wise: the comparison rule of the module docstring. `coarser`: the type's ulp and
    eps over dt's (bfloat16 compared as float32: 2^16)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    nan_a, nan_b = np.isnan(a64), np.isnan(b64)
    inf = np.isinf(a64) | np.isinf(b64)
    with np.errstate(invalid="ignore", over="ignore"):
        same = (a64 == b64) | (nan_a & nan_b)
        finite = np.isfinite(a64) & np.isfinite(b64)
        big = np.maximum(np.abs(a), np.abs(b)).astype(dt)
        ulp = np.spacing(big).astype(np.float64) * coarser
        ref_finite = np.abs(a64[np.isfinite(a64)])
        scale = max(1.0, float(ref_finite.max())) if ref_finite.size else 1.0
        eps = float(np.finfo(dt).eps) * coarser
        # No reduction: every operation is specified to the bit (exp included). A reduction may
        # be split into vector lanes (reassociated) on cpu.
        tol = np.maximum(ULPS * ulp, ULPS * eps * red_len * scale) if red_len > 1 else np.zeros_like(ulp)
        close = finite & (np.abs(a64 - b64) <= tol)
    return same | (close & ~inf)


def float_subkind(a, b):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if (np.isnan(a64) != np.isnan(b64)).any():
        return "nan-vs-number"
    if (np.isinf(a64) != np.isinf(b64)).any():
        return "inf-vs-finite"
    if (np.isinf(a64) & np.isinf(b64)).any():
        return "inf-sign"
    if ((a64 == 0) != (b64 == 0)).any():
        return "zero-vs-nonzero"
    return "beyond-tolerance"


def describe_diff(label, dtype, a, b, bad):
    if dtype == "bfloat16" or (not isinstance(dtype, str) and tclib.is_bf16(dtype)):
        a, b = tclib.from_bf16(a), tclib.from_bf16(b)
    lines = ["%s (%s%s): %d element(s) differ" % (label, dtype, list(a.shape), len(bad))]
    for idx in bad[:6]:
        t = tuple(int(x) for x in idx)
        lines.append("  %s%s: reference %r, %s %r" % (label, list(t), a[t].item(), TESTED[0], b[t].item()))
    return "\n".join(lines)


# ---- saving and loading cases -----------------------------------------------------------------------

def case_to_json(case, arrays_file):
    ins = []
    for i, spec in enumerate(case["inputs"]):
        dtype = "bfloat16" if tclib.is_bf16(spec["data"].dtype) else str(spec["data"].dtype)
        d = {"name": spec["name"], "dtype": dtype, "shape": list(spec["data"].shape),
             "layout": spec["layout"], "as_bool": bool(spec.get("as_bool")), "npz_key": "in%d" % i}
        if spec["data"].size <= 64:
            d["values"] = json_values(spec["data"])
        ins.append(d)
    return {"entry": case["prog"].entry, "options": case["options"], "inputs": ins,
            "outputs": case["outputs"], "out_seed": case["out_seed"], "red_len": case.get("red_len", 1),
            "flags": case.get("flags", {}), "npz": arrays_file, "ast": case["prog"].to_json()}


def json_values(a):
    flat = []
    for x in a.reshape(-1).tolist():
        if isinstance(x, float) and not np.isfinite(x):
            flat.append(repr(x))
        else:
            flat.append(x)
    return flat


def save_case(directory, stem, case, results, verdict, replay_cmd, library):
    os.makedirs(directory, exist_ok=True)
    npz = stem + ".npz"
    arrays = {"in%d" % i: s["data"] for i, s in enumerate(case["inputs"])}
    summary = {}
    for backend, (how, r) in results.items():
        if how != "ok" or "harness_error" in r:
            summary[backend] = {"outcome": how, "info": {k: v for k, v in r.items() if k != "outputs"}}
            continue
        summary[backend] = {"status": r["status"], "stage": r["stage"], "message": r["message"],
                            "outputs": [json_values(o) if o.size <= 64 else "see npz"
                                        for o in r.get("outputs", [])]}
        for i, o in enumerate(r.get("outputs", [])):
            arrays["%s_out%d" % (backend[:3], i)] = o
    np.savez(os.path.join(directory, npz), **arrays)
    source = tcast.fmt_prog(case["prog"])
    with open(os.path.join(directory, stem + ".tc"), "w") as f:
        f.write(source)
    j = case_to_json(case, npz)
    j.update({"source_file": stem + ".tc", "source": source, "verdict": verdict.kind,
              "signature": list(verdict.sig) if verdict.sig else None, "detail": verdict.detail,
              "results": summary, "replay": replay_cmd, "library": library})
    with open(os.path.join(directory, stem + ".json"), "w") as f:
        json.dump(j, f, indent=1, default=str)
    return os.path.join(directory, stem + ".json")


def load_case(path):
    with open(path) as f:
        j = json.load(f)
    base = os.path.dirname(os.path.abspath(path))
    arrays = np.load(os.path.join(base, j["npz"]))
    prog = tcast.Prog.from_json(j["ast"])
    case = {"prog": prog, "options": j["options"], "outputs": j["outputs"], "out_seed": j["out_seed"],
            "red_len": j.get("red_len", 1), "flags": j.get("flags", {}), "inputs": []}
    for spec in j["inputs"]:
        data = arrays[spec["npz_key"]]
        if spec.get("dtype") == "bfloat16":  # .npz keeps the bits, not the dtype's metadata
            data = data.astype(tclib.BF16)
        case["inputs"].append({"name": spec["name"], "data": data,
                               "layout": spec["layout"], "as_bool": spec["as_bool"]})
    src_file = os.path.join(base, j.get("source_file", ""))
    if j.get("source_file") and os.path.exists(src_file):
        with open(src_file) as f:
            text = f.read()
        if text != tcast.fmt_prog(prog):
            case["source"] = text  # edited by hand: run the file as it is
    return case


# ---- the driver -------------------------------------------------------------------------------------

# A program past --timeout is run again with this many times the limit before it is a hang.
kSlowFactor = 5


class Stats:
    def __init__(self):
        self.programs = self.rejected = self.documented = self.passed = 0
        self.disagreements = self.crashes = self.hangs = self.harness = 0
        self.slow = 0       # past --timeout, finished within kSlowFactor times it
        self.fuzz_time = 0.0
        self.classes = {}   # signature -> [count, example path]


class Driver:
    def __init__(self, args):
        self.args = args
        self.out = None
        self.library = prepare_library(args)
        env = dict(os.environ, TC_LIBRARY=self.library)
        self.client = WorkerClient(args.timeout, env=env)
        self.runner = Runner(self.client)
        self.version = check_library(self.client)
        self.stats = Stats()
        self.minimized = {}

    def log(self, msg):
        print(msg, flush=True)

    def vlog(self, msg):
        if self.args.verbose:
            print(msg, flush=True)

    def evaluate(self, case):
        return judge(self.runner, case)

    def fuzz(self):
        args = self.args
        seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
        self.log("seed %d (replay this run with --seed %d)" % (seed, seed))
        self.out = os.path.abspath(args.out or os.path.join(tempfile.gettempdir(), "tcdiff-%d" % seed))
        self.log("failing cases go to %s" % self.out)
        self.log("library %s (libtc %s, copied from %s)" % (self.library, self.version, args.library))
        rng = random.Random(seed)
        generator = gen.Generator(rng, disabled=args.disable, focus=args.focus)
        start = time.time()
        n = 0

        def more():
            if args.programs is not None:
                return n < args.programs
            return time.time() - start < args.time

        # The programs are drawn in order from the one generator and run on `jobs` workers at
        # once; results are accounted in program order (so --jobs changes neither the programs
        # nor the report), and failures are minimised on the driver's own worker.
        idle = queue.Queue()
        pool = [Runner(WorkerClient(args.timeout, env=self.client.env)) for _ in range(max(1, args.jobs))]
        for r in pool:
            idle.put(r)

        def run(case):
            runner = idle.get()
            try:
                t0 = time.time()
                results, verdict = judge(runner, case)
                slow = False
                if verdict.failed and verdict.sig[0] == "hang":
                    # Past --timeout, which is not yet a hang: a slow machine, a sanitizer
                    # build or the other workers can make a long program slower. It is run
                    # again with kSlowFactor times the limit; only then does it count.
                    runner.client.timeout = args.timeout * kSlowFactor
                    try:
                        results, verdict = judge(runner, case)
                    finally:
                        runner.client.timeout = args.timeout
                    slow = not (verdict.failed and verdict.sig[0] == "hang")
                return results, verdict, time.time() - t0, slow
            finally:
                idle.put(runner)

        pending = collections.deque()
        with concurrent.futures.ThreadPoolExecutor(len(pool)) as executor:
            while more() or pending:
                while more() and len(pending) < 2 * len(pool):
                    n += 1
                    case = generator.case()
                    pending.append((n, case, executor.submit(run, case)))
                k, case, future = pending.popleft()
                results, verdict, secs, slow = future.result()
                self.stats.fuzz_time += secs / len(pool)
                if slow:
                    self.stats.slow += 1
                    self.log("slow program %d: past --timeout %g s, finished within %g s" %
                             (k, args.timeout, args.timeout * kSlowFactor))
                self.account(k, case, results, verdict)
        for r in pool:
            r.client.stop()
            cleanup(r.client)
        self.client.stop()
        return self.summary(time.time() - start)

    def account(self, n, case, results, verdict):
        st = self.stats
        st.programs += 1
        self.vlog("---- program %d: %s %s\n%s" % (n, verdict.kind, verdict.sig or "", tcast.fmt_prog(case["prog"])))
        if verdict.kind == "rejected":
            st.rejected += 1
            st.passed += 1
            self.vlog("rejected: " + verdict.detail)
            return
        if verdict.kind == "documented":
            st.documented += 1
            st.passed += 1
            return
        if not verdict.failed:
            st.passed += 1
            return
        kind = verdict.sig[0]
        if kind == "crash":
            st.crashes += 1
        elif kind == "hang":
            st.hangs += 1
        elif kind == "harness-error":
            st.harness += 1
        else:
            st.disagreements += 1
        self.log("FAIL program %d: %s\n%s" % (n, " / ".join(verdict.sig), verdict.detail))
        path = self.report(n, case, results, verdict)
        entry = st.classes.setdefault(verdict.sig, [0, path])
        entry[0] += 1

    def report(self, n, case, results, verdict):
        slug = "-".join(str(x) for x in verdict.sig).replace(" ", "_").replace("/", "_").replace(":", "")
        directory = os.path.join(self.out, "%04d-%s" % (n, slug)[:90])
        cmd = lambda stem: "TC_LIBRARY=%s /usr/bin/python3 %s --replay %s" % (
            self.args.library, os.path.join(HERE, "difftest.py"), os.path.join(directory, stem + ".json"))
        path = save_case(directory, "orig", case, results, verdict, cmd("orig"), self.library)
        done = self.minimized.get(verdict.sig, 0)
        if verdict.sig[0] in ("hang", "harness-error") or done >= self.args.minimize_per_class \
                or self.args.minimize_budget <= 0:
            self.log("  saved %s" % path)
            return path
        self.minimized[verdict.sig] = done + 1
        small = self.minimize(case, verdict.sig)
        results, v2 = self.evaluate(small)
        if v2.sig != verdict.sig:
            self.log("  minimised case no longer reproduces; kept the original")
            return path
        path = save_case(directory, "min", small, results, v2, cmd("min"), self.library)
        self.log("  minimised reproducer %s:\n%s  %s" % (path, indent(tcast.fmt_prog(small["prog"])),
                                                          v2.detail.replace("\n", "\n  ")))
        return path

    def minimize(self, case, sig):
        def still_fails(cand):
            _, v = self.evaluate(cand)
            return v.sig == sig

        m = minimize.Minimizer(still_fails, self.args.minimize_budget, log=self.vlog)
        t0 = time.time()
        try:
            small = m.run(case)
        except Exception:
            self.log("  minimiser failed (a fuzzer bug; the original case is kept):\n"
                     + traceback.format_exc())
            return case
        self.log("  minimised in %.0f s (%d checks)" % (time.time() - t0, m.checks))
        return small

    def summary(self, elapsed):
        st = self.stats
        rate = st.programs / elapsed if elapsed > 0 else 0.0
        frate = st.programs / st.fuzz_time if st.fuzz_time > 0 else 0.0
        if st.classes:
            self.log("failure classes (signature: count, example):")
            for sig, (count, path) in sorted(st.classes.items(), key=lambda kv: -kv[1][0]):
                self.log("  %s: %d, %s" % (" / ".join(sig), count, path))
        self.log("summary: %d programs in %.0f s (%.2f programs/s overall, %.2f programs/s fuzzing "
                 "without minimisation), %d rejected by the front end (%.0f%%), %d documented "
                 "differences, %d disagreements, %d crashes, %d hangs%s%s"
                 % (st.programs, elapsed, rate, frate, st.rejected,
                    100.0 * st.rejected / max(1, st.programs), st.documented, st.disagreements,
                    st.crashes, st.hangs, ", %d harness errors" % st.harness if st.harness else "",
                    ", %d slow (past --timeout, then finished)" % st.slow if st.slow else ""))
        failed = st.programs - st.passed
        self.log("%d passed, %d failed" % (st.passed, failed))
        return 1 if failed else 0

    def replay(self, path):
        case = load_case(path)
        self.log("library %s" % self.library)
        self.log("source:\n" + indent(case.get("source") or tcast.fmt_prog(case["prog"])))
        for spec in case["inputs"]:
            self.log("input %s %s %s layout=%s%s:\n%s" % (
                spec["name"], spec["data"].dtype, list(spec["data"].shape), spec["layout"]["kind"],
                " (bytes passed as bool)" if spec.get("as_bool") else "", indent(repr(spec["data"]))))
        self.log("options %s" % case["options"])
        results, verdict = self.evaluate(case)
        for backend, (how, r) in results.items():
            if how != "ok":
                self.log("%s: %s %s" % (backend, how, r))
            elif "harness_error" in r:
                self.log("%s: harness error %s" % (backend, r["harness_error"]))
            else:
                self.log("%s: %s%s" % (backend, status_text(r), (": " + r["message"]) if r["message"] else ""))
                for i, o in enumerate(r.get("outputs", [])):
                    self.log("  output %d: %s" % (i, np.array2string(o, threshold=64)))
        self.log("verdict: %s %s\n%s" % (verdict.kind, " / ".join(verdict.sig) if verdict.sig else "",
                                          verdict.detail))
        if self.args.minimize and verdict.failed:
            small = self.minimize(case, verdict.sig)
            results, v2 = self.evaluate(small)
            out = save_case(os.path.dirname(os.path.abspath(path)), "reminimized", small, results, v2,
                            "", self.library)
            self.log("minimised to %s:\n%s" % (out, indent(tcast.fmt_prog(small["prog"]))))
        self.client.stop()
        return 1 if verdict.failed else 0


def indent(text):
    return "".join("  " + line + "\n" for line in text.rstrip("\n").split("\n"))


def prepare_library(args):
    """The library the workers load: a private copy unless --no-copy-library, so that a
    rebuild during the run does not change (or break) what is being tested. A copy taken
    while the file is being rewritten is retried."""
    lib = os.path.realpath(args.library)
    if not os.path.exists(lib):
        sys.exit("library %s not found (set TC_LIBRARY or --library)" % args.library)
    if args.no_copy_library:
        return lib
    dst = os.path.join(tempfile.mkdtemp(prefix="tcdiff-lib-"), "libtc.so")
    for _ in range(60):
        before = os.stat(lib)
        shutil.copy2(lib, dst)
        after = os.stat(lib)
        with open(dst, "rb") as f:
            elf = f.read(4) == b"\x7fELF"
        if elf and (before.st_size, before.st_mtime) == (after.st_size, after.st_mtime) \
                and os.path.getsize(dst) == after.st_size and time.time() - after.st_mtime > 2:
            return dst
        time.sleep(5)
    sys.exit("library %s keeps changing; try again later" % lib)


def check_library(client):
    """Loads the library in a worker once; exits with the reason if it cannot."""
    how, res = client.request({"op": "version"})
    if how != "ok" or "harness_error" in res:
        sys.exit("cannot load libtc in the worker: %s" % (res.get("harness_error") or res))
    return res["version"]


def parse_args(argv):
    ap = argparse.ArgumentParser(description="differential fuzzer: libtc cpu backend vs reference backend")
    ap.add_argument("--seed", type=int, default=None, help="random seed (default: random, always printed)")
    ap.add_argument("--backend", default="cpu", help="the backend tested against the reference (default cpu)")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="extra options for the tested backend (e.g. cuda.emulate=1)")
    ap.add_argument("--time", type=float, default=120.0, help="seconds to fuzz (default 120)")
    ap.add_argument("--programs", type=int, default=None, help="number of programs (overrides --time)")
    ap.add_argument("--out", default=None, help="directory for failing cases (default $TMPDIR/tcdiff-SEED)")
    ap.add_argument("--replay", default=None, help="re-run a saved case (its .json file)")
    ap.add_argument("--minimize", action="store_true", help="with --replay: minimise it again")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per backend run before a hang")
    ap.add_argument("--jobs", type=int, default=1,
                    help="programs run at once, each pair in a worker of its own (default 1); the same "
                         "programs and report as with 1")
    ap.add_argument("--minimize-budget", type=float, default=90.0, help="seconds per minimisation (0: off)")
    ap.add_argument("--minimize-per-class", type=int, default=1,
                    help="minimise at most this many failures of each signature (default 1)")
    ap.add_argument("--disable", default="", help="comma-separated generator features to turn off: "
                    + ", ".join(sorted(gen.FEATURES)))
    ap.add_argument("--focus", choices=sorted(gen.FOCUS), default=None,
                    help="every program of this kind (a long run over one class of programs)")
    ap.add_argument("--library", default=os.environ.get("TC_LIBRARY", DEFAULT_LIBRARY),
                    help="libtc.so (default $TC_LIBRARY or build/src/libtc.so)")
    ap.add_argument("--no-copy-library", action="store_true",
                    help="load the library in place instead of a private copy")
    ap.add_argument("--self-test", action="store_true",
                    help="check that worker crashes and hangs are detected, then exit")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    args.disable = [x for x in args.disable.split(",") if x]
    TESTED[0], TESTED[1] = args.backend, dict(o.split("=", 1) for o in args.option)
    return args


def self_test(args):
    """Checks that a worker crash and a worker hang are detected and the worker restarts."""
    library = prepare_library(args)
    client = WorkerClient(timeout=3, env=dict(os.environ, TC_LIBRARY=library))
    ok = True
    for op, want in (("selftest-crash", "crash"), ("selftest-hang", "hang")):
        how, info = client.request({"op": op})
        print("%s: %s %s" % (op, how, info.get("signal", "")))
        ok = ok and how == want
        how, info = client.request({"op": "version"})
        print("  restarted worker: %s %s" % (how, info))
        ok = ok and how == "ok" and "version" in info
    client.stop()
    cleanup(client, library)
    print("self-test %s" % ("passed" if ok else "FAILED"))
    return 0 if ok else 1


def cleanup(client, library=None):
    shutil.rmtree(client.log_dir, ignore_errors=True)
    if library and os.path.basename(os.path.dirname(library)).startswith("tcdiff-lib-"):
        shutil.rmtree(os.path.dirname(library), ignore_errors=True)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.self_test:
        return self_test(args)
    driver = Driver(args)
    try:
        if args.replay:
            return driver.replay(args.replay)
        return driver.fuzz()
    finally:
        driver.client.stop()
        cleanup(driver.client, driver.library)


if __name__ == "__main__":
    sys.exit(main())

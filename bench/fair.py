"""fair.py - what bench.py checks about a measurement besides the times: the
machine's load average, whether consecutive runs agree, and which BLAS library a process
actually uses. Standard library only, so that it can be imported before NumPy and run on its
own by bench/run.sh:

    /usr/bin/python3 bench/fair.py      # names NumPy's BLAS; exit status 1 unless OpenBLAS

The pure parts (load_warning, own_load, agreement of runs, blas_paths, describe_blas) are
tested by tests/bench/test_bench_fair.py.
"""
import ctypes
import math
import os
import re
import sys

# ---- load average ----------------------------------------------------------------------------

LOAD_LIMIT = 0.5      # a 1-minute load average above this: not an idle machine
LOAD_TAU_S = 60.0     # the time constant of the kernel's 1-minute load average


def read_load():
    """The 1-minute load average (os.getloadavg; None where the system has none)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def own_load(intervals, now):
    """The part of the 1-minute load average at `now` that the bench's own earlier processes
    account for. intervals: (start, end, cpu_seconds) of each finished child; a child counts
    as cpu_seconds / (end - start) runnable threads from start to end, which the kernel's
    exponential average (time constant 60 s) then forgets. An estimate from below: a thread
    that waits for a core, or for the disk, adds to the load but not to the CPU time."""
    total = 0.0
    for start, end, cpu in intervals:
        if end > start and now >= end:
            rate = cpu / (end - start)
            total += rate * (math.exp(-(now - end) / LOAD_TAU_S)
                             - math.exp(-(now - start) / LOAD_TAU_S))
    return total


def load_warning(readings, limit=LOAD_LIMIT):
    """readings: (what, load) pairs, the load being that of other processes (None: unknown).
    A warning when any is above `limit` (the machine was not idle), else None."""
    high = [(what, load) for what, load in readings if load is not None and load > limit]
    if not high:
        return None
    what, load = max(high, key=lambda wl: wl[1])
    return ("WARNING: the load average was above %g at %d of %d readings (highest: %.2f %s): "
            "these numbers are not from an idle machine" % (limit, len(high), len(readings),
                                                            load, what))


# ---- agreement of consecutive runs -----------------------------------------------------------

RUN_AGREEMENT = 0.10  # two consecutive runs agree within +-10% per kernel


def spread(values):
    """max / min - 1 of positive numbers (None for fewer than two)."""
    values = [v for v in values if v is not None]
    if len(values) < 2 or min(values) <= 0:
        return None
    return max(values) / min(values) - 1


def disagreeing(per_framework, limit=RUN_AGREEMENT):
    """per_framework: name -> each run's median. The names whose runs spread by more than
    `limit` (in the order given)."""
    return [name for name, values in per_framework.items()
            if (s := spread(values)) is not None and s > limit]


# ---- BLAS ------------------------------------------------------------------------------------

# file names of BLAS implementations: reference/OpenBLAS libblas.so.3, libopenblas*.so*,
# libcblas, MKL, BLIS, ATLAS, FlexiBLAS
BLAS_FILE = re.compile(r"^lib(?:c?blas|openblas\w*|mkl_\w+|blis\w*|[st]?atlas|flexiblas\w*)"
                       r"[-.\w]*\.so(?:\.[\d.]+)?$")
OPENBLAS_PARALLEL = {0: "serial", 1: "pthread", 2: "openmp"}


def blas_paths(maps_text):
    """The BLAS libraries in a /proc/PID/maps text, each path once, in the order first seen."""
    paths = []
    for line in maps_text.splitlines():
        fields = line.split(None, 5)
        if len(fields) == 6 and fields[5].startswith("/"):
            path = fields[5].strip()
            if BLAS_FILE.match(os.path.basename(path)) and path not in paths:
                paths.append(path)
    return paths


def describe_blas(paths, config=None, parallel=None):
    """(kind, text) naming the BLAS of a process whose maps list `paths` (realpaths). kind:
    'openblas', 'reference', 'mkl', 'other' or 'none'. config: openblas_get_config()'s text
    where a library exports it, parallel: openblas_get_parallel() (0 serial, 1 pthread,
    2 OpenMP)."""
    if not paths:
        return "none", "no BLAS library loaded (linked statically, or not yet used)"
    # the library the client links by name (libblas.so.3, libcblas) first, the rest after it
    primary = next((p for p in paths if re.match(r"libc?blas\.", os.path.basename(p))), paths[0])
    others = [os.path.basename(p) for p in paths if p != primary]
    where = primary + (" (also mapped: %s)" % ", ".join(others) if others else "")
    if config or any("openblas" in p.lower() for p in paths):
        words = (config or "").split()
        version = words[1] if len(words) > 1 and words[0].lower() == "openblas" else ""
        variant = OPENBLAS_PARALLEL.get(parallel)
        if variant is None:
            match = re.search(r"openblas-(pthread|openmp|serial)", where)
            variant = match.group(1) if match else ""
        name = " ".join(w for w in ("OpenBLAS", version, variant) if w)
        return "openblas", "%s: %s" % (name, where)
    if any("mkl" in os.path.basename(p) for p in paths):
        return "mkl", "MKL: %s" % where
    if os.path.basename(os.path.dirname(primary)) == "blas" and \
            os.path.basename(primary).startswith("libblas"):
        return "reference", "reference BLAS: %s" % where
    return "other", "BLAS: %s" % where


def openblas_config(paths):
    """(openblas_get_config(), openblas_get_parallel()) of the first of `paths` that exports
    them (the library is already loaded: dlopen only finds it), else (None, None)."""
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
            get_config = lib.openblas_get_config
        except (OSError, AttributeError):
            continue
        get_config.restype = ctypes.c_char_p
        parallel = getattr(lib, "openblas_get_parallel", None)
        return (get_config().decode(errors="replace"),
                parallel() if parallel is not None else None)
    return None, None


def this_process_blas():
    """(kind, text): the BLAS this process has loaded (call after a BLAS call, np.dot or a
    torch matmul, so that a lazily loaded library is there)."""
    with open("/proc/self/maps") as f:
        paths = [os.path.realpath(p) for p in blas_paths(f.read())]
    paths = list(dict.fromkeys(paths))
    return describe_blas(paths, *openblas_config(paths))


def numpy_blas():
    """this_process_blas() after a NumPy matrix product."""
    import numpy as np
    a = np.ones((64, 64), dtype=np.float32)
    np.dot(a, a)
    return this_process_blas()


def main():
    kind, text = numpy_blas()
    print("NumPy's BLAS: %s" % text)
    if kind != "openblas":
        print("fair.py: warning: NumPy does not use OpenBLAS", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""nvrtc_corpus.py - every accepted corpus program's CUDA C compiled to a cubin by NVRTC, for each
architecture given (default sm_80 and sm_90), with no GPU: tc_compile with backend=cuda and an
explicit cuda.arch. Prints each architecture's compile times (isl scheduling, printing and
NVRTC together: what tc_compile takes) and fails on any compile error. Skipped (exit 0) when
NVRTC is not installed.

    TC_LIBRARY=build/src/libtc.so /usr/bin/python3 tests/e2e/nvrtc_corpus.py [--arch sm_80,sm_90]
        [--option KEY=VALUE]... [CASE...]
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402
import run_corpus  # noqa: E402
import tclib  # noqa: E402


def compile_case(case, arch, extra):
    opts = {"backend": "cuda", "cuda.arch": arch}
    opts.update(extra)
    t0 = time.perf_counter()
    kernel = case.compile(opts)
    seconds = time.perf_counter() - t0
    if "TC's scalar semantics" not in kernel.code():  # the prelude (a def with nothing to do has no kernel)
        raise corpus.Failure("no CUDA C in the kernel's code")
    return seconds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="sm_80,sm_90")
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="more backend options (e.g. cuda.shared=1)")
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    cases = [(n, c) for n, c in run_corpus.select(run_corpus.all_cases(), args.cases)
             if c.kind == "accept" and (c.backends is None or "cuda" in c.backends)]
    extra = dict(kv.split("=", 1) for kv in args.option)
    failed = 0
    for arch in args.arch.split(","):
        times = []
        for name, case in cases:
            try:
                times.append(compile_case(case, arch, extra))
            except tclib.TCError as e:
                if e.status == tclib.TC_ERROR_UNSUPPORTED and "NVRTC" in (e.message or ""):
                    print("SKIP: %s" % e.message.splitlines()[0])
                    return 0
                failed += 1
                print("FAIL %s %s: %s" % (arch, name, e.message))
            except corpus.Failure as f:
                failed += 1
                print("FAIL %s %s: %s" % (arch, name, f))
        if times:
            print("%s: %d programs compiled to cubins in %.1f s (median %.0f ms, max %.0f ms)" % (
                arch, len(times), sum(times), 1000 * statistics.median(times), 1000 * max(times)))
    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

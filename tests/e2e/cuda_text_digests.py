"""cuda_text_digests.py - the SHA-256 of the CUDA C printed for every accepted corpus program at
every cuda knob set the e2e tests use, one line per program and knob set: run it before and after
a change to the printer that must not change its output, and diff the two files.

Compiles with cuda.emulate=1 (no GPU, no NVRTC: the emulation's host objects are kept by text, so
a second run of unchanged texts only schedules and prints).

    TC_LIBRARY=build/src/libtc.so /usr/bin/python3 tests/e2e/cuda_text_digests.py > before.txt
"""
import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_corpus  # noqa: E402
import tclib  # noqa: E402

# The knob sets of tests/e2e/CMakeLists.txt's cuda tests (the nvrtc ones' too), and the
# printer's other switches.
KNOB_SETS = [
    {},
    {"cuda.fusion": "min", "cuda.tile": "8x4", "cuda.block": "16x4", "cuda.grid": "3x2", "cuda.private": "0",
     "cuda.shared": "1", "cuda.unroll": "4"},
    {"cuda.shared": "1", "cuda.unroll": "32", "cuda.reduction": "tree", "cuda.rowwise": "0"},
    {"cuda.reduction": "atomic", "cuda.fusion": "preserve3", "cuda.tile": "8x4", "cuda.block": "32x3x2",
     "cuda.grid": "3x2", "cuda.rowwise": "0"},
    {"cuda.reduction": "tree", "cuda.block": "64x4", "cuda.tile": "16x16x64", "cuda.rowwise": "0"},
    {"cuda.shared": "1", "cuda.unroll": "8", "cuda.reduction": "tree", "cuda.rowwise": "0"},
    {"cuda.reduction": "atomic", "cuda.rowwise": "0"},
    {"cuda.rowwise": "1"},
    {"cuda.fma": "0", "cuda.regtile": "1"},
    {"cuda.regtile": "4x4"},
    {"checked": "0"},
]


def main():
    cases = [(n, c) for n, c in run_corpus.all_cases()
             if c.kind == "accept" and (c.backends is None or "cuda" in c.backends)]
    for knobs in KNOB_SETS:
        label = ",".join("%s=%s" % kv for kv in sorted(knobs.items())) or "default"
        for name, case in cases:
            opts = {"backend": "cuda", "cuda.emulate": "1"}
            opts.update(knobs)
            try:
                code = case.compile(opts).code()
                digest = hashlib.sha256(code.encode()).hexdigest()[:16]
            except tclib.TCError as e:
                digest = "error %d %s" % (e.status, (e.message or "").splitlines()[0])
            print("%s %s %s" % (label, name, digest), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""profile_text.py - tc-profile-text (tools/dev/profile_text), which profiles a text printed by
any libtc commit, against tc_kernel_profile on this libtc's own texts: the same report, so its
statement marks (found in the text) and the printer's (PrintOptions::statement_marks) agree.

    TC_LIBRARY=build/src/libtc.so /usr/bin/python3 tests/e2e/profile_text.py PATH/TO/tc-profile-text
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

import tclib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import gpu_estimate  # noqa: E402  (its dump() writes what tc-profile-text reads)

SOFTMAX = ("def softmax(float(N,D) X) -> (O) {\n  mx(n) max=! X(n,d)\n  e(n,d) = exp(X(n,d) - mx(n))\n"
           "  s(n) +=! e(n,d)\n  O(n,d) = e(n,d) / s(n)\n}")
CASES = [  # name, source, input shapes, the sizes they bind, knobs: the contraction route, the row
    # route, isl's schedule (one launch per statement)
    ("mm", "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", [(64, 48), (48, 64)],
     dict(M=64, K=48, N=64), {}),
    ("softmax", SOFTMAX, [(40, 96)], dict(N=40, D=96), {}),
    ("softmax", SOFTMAX, [(40, 96)], dict(N=40, D=96), {"cuda.fusion": "min", "cuda.rowwise": "0"}),
]


def main(tool):
    failed = 0
    with tempfile.TemporaryDirectory() as d:
        for name, src, shapes, sizes, knobs in CASES:
            inputs = [np.zeros(s, np.float32) for s in shapes]
            p = tclib.Program(src)
            k = p.compile(name, inputs, dict({"backend": "cuda", "cuda.emulate": "1"}, **knobs))
            outputs = [np.zeros(shape, dtype) for dtype, shape in k.output_info()]
            want = k.profile(inputs, outputs)
            base = os.path.join(d, name)
            gpu_estimate.dump(k, p, name, sizes, base)
            got = subprocess.run([tool, base + ".cu", base + ".launches", base + ".tensors"], capture_output=True,
                                 text=True).stdout
            if got != want or "launch 1 of" not in got:
                failed += 1
                print("FAIL %s:\n--- tc_kernel_profile\n%s--- tc-profile-text\n%s" % (name, want, got))
            else:
                print("PASS %s %s (%d launches)" % (name, knobs, got.count("\nlaunch ") + 1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

"""tune_on_gpu.py - tc_tune on backend=cuda with real kDLCUDA tensors (PyTorch CUDA tensors),
on a machine with an NVIDIA GPU: the outputs are GPU memory, the candidates run in the
candidate runner (tune.isolation=auto is process for GPU tensors), and a candidate that
crashes its runner (the test runner tests/tune/faulty_runner.cpp, whose TC_TEST_RUNNER_FAULT
crashes every candidate with cuda.shared=1 while the start has cuda.shared=0) fails alone. Part of tools/gpu-check.sh; not
run by ctest (CI has no GPU).

--emulate runs the same checks on the host (cuda.emulate=1, NumPy arrays,
tune.isolation=process): how this script is checked without a GPU.

    TC_LIBRARY=build/src/libtc.so PYTHONPATH=bindings/python python3 tests/gpu/tune_on_gpu.py [--emulate]
        [--faulty-runner PATH]

--faulty-runner: the test runner (default build/tests/tune/faulty-runner; tools/gpu-pack.sh
puts it at .gpu/lib/tc/faulty-runner).
"""
import argparse
import os
import re
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "bindings", "python"))
import tc  # noqa: E402

MM = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--emulate", action="store_true")
    ap.add_argument("--faulty-runner", default=os.path.join(REPO, "build", "tests", "tune", "faulty-runner"))
    args = ap.parse_args()
    if not os.access(args.faulty_runner, os.X_OK):
        sys.exit("tune_on_gpu: no test runner at %s (built with the tests; --faulty-runner names another)"
                 % args.faulty_runner)
    rng = np.random.default_rng(7)
    a = rng.integers(-4, 5, size=(64, 48)).astype(np.float32)  # small integers: exact sums
    b = rng.integers(-4, 5, size=(48, 40)).astype(np.float32)
    want = a @ b
    # Two generations on any machine (tune.generations ends the search, never the budget).
    options = {"backend": "cuda", "cache": "off", "cuda.shared": 0, "tune.population": 8, "tune.generations": 2}
    if args.emulate:
        ins = (a, b)
        options.update({"cuda.emulate": 1, "tune.isolation": "process"})
        host = lambda x: np.asarray(x)  # noqa: E731
    else:
        import torch
        ins = tuple(torch.from_numpy(x).cuda() for x in (a, b))
        host = lambda x: x.cpu().numpy()  # noqa: E731
    prog = tc.define(MM)

    kernel = prog.tune("mm", *ins, budget=86400, progress=False, **options)
    text = kernel.describe()
    assert "candidates measured in candidate runner processes (" in text, text
    np.testing.assert_array_equal(host(kernel(*ins)), want)
    print("tuned in the runner:", re.search(r"tuned now: [^;]*", text).group(0))

    os.environ["TC_CANDIDATE_RUNNER"] = args.faulty_runner
    os.environ["TC_TEST_RUNNER_FAULT"] = "cuda.shared=1"
    try:
        kernel = prog.tune("mm", *ins, budget=86400, progress=False, **options)
    finally:
        del os.environ["TC_TEST_RUNNER_FAULT"], os.environ["TC_CANDIDATE_RUNNER"]
    text = kernel.describe()
    started = int(re.search(r"candidate runner processes \((\d+) started", text).group(1))
    assert started >= 2, text  # some candidate had cuda.shared=1 and took its runner down
    assert "cuda.shared=0" in text, text
    np.testing.assert_array_equal(host(kernel(*ins)), want)
    print("with crashing candidates: %d runners started;" % started, re.search(r"tuned now: [^;]*", text).group(0))
    print("tune_on_gpu: ok")


if __name__ == "__main__":
    sys.exit(main())

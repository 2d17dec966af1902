"""corpus_on_gpu.py - the e2e corpus on backend=cuda with real kDLCUDA tensors (PyTorch CUDA
tensors through the Python binding) against NumPy's expectations, on a machine with an NVIDIA
GPU. Part of tools/gpu-check.sh; not run by ctest (CI has no GPU).

Each accepted case: inputs moved to the GPU, the kernel compiled with backend=cuda (cuda.arch
auto: the device's) plus any --option, run (outputs allocated by torch on the device, launched
on torch's current stream; cases that accumulate into given outputs get them through out=),
synchronised, compared with the case's expectation at the corpus's tolerances. Rejected cases
are not run here (their statuses do not depend on the device; e2e.cuda.* checks them).

    TC_LIBRARY=build/src/libtc.so PYTHONPATH=bindings/python:tests/e2e python3 tests/gpu/corpus_on_gpu.py
        [--option KEY=VALUE]... [--tf32] [CASE...]
"""
import argparse
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "e2e"))
import corpus  # noqa: E402
import run_corpus  # noqa: E402
import tc  # noqa: E402
import tclib  # noqa: E402


def to_gpu(a):
    a = np.array(a, order="C")  # not ascontiguousarray: it makes 0-d arrays 1-d
    if tclib.is_bf16(a.dtype):  # the corpus's bfloat16 is a uint16 array of the bits
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16).cuda()
    return torch.from_numpy(a).cuda()


def to_host(t):
    t = t.cpu()
    return t.view(torch.int16).numpy().view(tclib.BF16) if t.dtype == torch.bfloat16 else t.numpy()


def run_case(case, options):
    rng = corpus.rng_for(case.name)
    ins = case.inputs(rng)
    init = [np.asarray(a) for a in case.init(rng)] if case.init is not None else None
    exp = case.expect(*[np.array(a) for a in ins], **({"init": [a.copy() for a in init]} if init else {}))
    exp = [np.asarray(e) for e in exp]
    prog = tc.define(case.src)
    gins = [to_gpu(np.asarray(a)) for a in ins]
    opts = dict(options, backend="cuda", **(case.options or {}))
    kernel = prog.compile(case.entry, *gins, **opts)
    if init is not None or not gins:  # a def without inputs: no input says where outputs go
        outs = [to_gpu(a) for a in (init if init is not None else [np.zeros_like(e) for e in exp])]
        kernel(*gins, out=tuple(outs))
    else:
        got = kernel(*gins)
        outs = list(got) if isinstance(got, tuple) else [got]
    torch.cuda.synchronize()
    for i, (o, e) in enumerate(zip(outs, exp)):
        if case.rtol is not None or case.atol is not None:
            rtol, atol = (case.rtol or 0.0), (case.atol or 0.0)
        else:
            rtol, atol = corpus.tolerance(e.dtype, case.red, case.ulps)
        corpus.compare("output %d" % i, to_host(o), e, rtol, atol)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--tf32", action="store_true", help="hold float32 results to TF32's epsilon (cuda.tf32=1)")
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    corpus.TF32 = args.tf32
    options = dict(o.split("=", 1) for o in args.option)
    cases = [(n, c) for n, c in run_corpus.select(run_corpus.all_cases(), args.cases)
             if c.kind == "accept" and (c.backends is None or "cuda" in c.backends)]
    passed = failed = 0
    for name, case in cases:
        t0 = time.perf_counter()
        try:
            run_case(case, options)
            passed += 1
            print("PASS %s (%.3fs)" % (name, time.perf_counter() - t0))
        except (corpus.Failure, tc.Error, RuntimeError, TypeError, ValueError) as e:
            failed += 1
            print("FAIL %s: %s" % (name, e))
        sys.stdout.flush()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

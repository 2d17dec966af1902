"""gpu_call.py - where a libtc call on PyTorch CUDA tensors spends its time, per benchmark kernel:
the GPU's own time (kernels and memsets from the CUDA profiler, per call), the host's time per
call through the Python binding (outputs allocated, and with out=), through tc_run_async called
directly with DLTensors built once (the C library's own cost), and PyTorch eager's host time for
the same work; then the binding's ten costliest Python functions (cProfile). Host times are the
mean over --calls back-to-back calls queued without waiting (a host time above the GPU's is the
call's cost; below it, the queue hides it). PyTorch's convolutions in float32 (TF32 off, as
in bench/gpu.py). One process, all kernels (a diagnostic: bench/gpu.py
gives the timings that compare frameworks, each in its own process).

    TC_LIBRARY=build/src/libtc.so PYTHONPATH=bindings/python python3 bench/gpu_call.py
        [--only sgemm,softmax] [--calls 300]
"""
import argparse
import contextlib
import cProfile
import ctypes
import io
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu import cuda_inputs  # noqa: E402
from kernels import KERNELS  # noqa: E402


def host_us(fn, calls):
    import torch
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / calls * 1e6


def gpu_us(fn, calls):
    """The GPU's busy time per call: kernels and memsets the CUDA profiler saw."""
    import torch
    from torch.profiler import profile, ProfilerActivity
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    total, names = 0.0, set()
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            total += e.time_range.elapsed_us()
            names.add(e.name[:40])
    return total / calls, sorted(names)


def direct(kernel, ins, outs):
    """tc_run_async with DLTensor arrays borrowed once: the C library's cost alone."""
    import torch
    from tc._library import lib
    from tc._tensors import _borrow_all
    stack = contextlib.ExitStack()
    inputs = _borrow_all(stack, ins, "input", False)
    outputs = _borrow_all(stack, outs, "output", True)
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    run = lib.tc_run_async
    handle, n_in, n_out = kernel._handle, len(ins), len(outs)
    return lambda: run(handle, inputs, n_in, outputs, n_out, stream), stack


def top_python(fn, calls, lines=10):
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        fn()
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(lines)
    return text.getvalue()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="sgemm,tmm,softmax,lut1,conv2d,layernorm")
    ap.add_argument("--calls", type=int, default=300)
    args = ap.parse_args()
    import torch
    import tc
    torch.backends.cudnn.allow_tf32 = False  # float32 on both sides (bench/gpu.py)
    rows, profiles = [], []
    for name in args.only.split(","):
        kernel = next(k for k in KERNELS if k.name == name)
        ins = cuda_inputs(kernel, kernel.sizes)
        k = tc.define(kernel.source.read_text()).compile(name, *ins, backend="cuda", cache="off")
        first = k(*ins)
        outs = first if isinstance(first, tuple) else (first,)
        run_direct, stack = direct(k, ins, outs)
        with stack:
            fns = {
                "call": lambda: k(*ins),
                "call out=": lambda: k(*ins, out=outs),
                "tc_run_async": run_direct,
                "torch": lambda: kernel.torch_fn(kernel.sizes, *ins),
            }
            gpu, names = gpu_us(fns["call out="], 50)
            torch_gpu, _ = gpu_us(fns["torch"], 50)
            host = {what: host_us(fn, args.calls) for what, fn in fns.items()}
        rows.append((name, gpu, torch_gpu, host, names))
        profiles.append((name, top_python(fns["call"], args.calls)))
    print("| kernel | libtc GPU us | torch GPU us | host us: call | call out= | tc_run_async | torch |")
    print("|---|---|---|---|---|---|---|")
    for name, gpu, torch_gpu, host, _ in rows:
        print("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |" % (
            name, gpu, torch_gpu, host["call"], host["call out="], host["tc_run_async"], host["torch"]))
    for name, _, _, _, names in rows:
        print("%s GPU work: %s" % (name, ", ".join(names)))
    for name, text in profiles:
        print("\n== %s: the binding's costliest Python functions over %d calls\n%s" % (name, args.calls, text))


if __name__ == "__main__":
    main()

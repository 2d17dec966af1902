"""custom_op_on_gpu.py - tc.custom_op on the GPU machine's PyTorch (2.11: torch.library.custom_op):
the operator on CUDA tensors (backend=cuda, torch's current stream) against torch's matmul,
gradcheck through it on CUDA in float64, meta tensors, and torch.compile(fullgraph=True) of a
small model calling it, on the CPU and on CUDA: traced without a graph break (fullgraph raises
on one) and the same result as eager. Part of tools/gpu-check.sh; not run by ctest (CI has no
GPU; bindings/python/tests/test_custom_op.py covers the CPU side with Debian's PyTorch).

    TC_LIBRARY=build/src/libtc.so PYTHONPATH=bindings/python python3 tests/gpu/custom_op_on_gpu.py
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "bindings", "python"))
import tc  # noqa: E402

MM = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }"


def main():
    print("torch", torch.__version__, "modern registration:", hasattr(torch.library, "custom_op"))
    op = tc.custom_op(tc.define(MM), "mm", "gpucheck::mm", cache="off")
    dop = tc.custom_op(tc.define(MM.replace("float(", "double(")), "mm", "gpucheck::mmd", cache="off")
    g = torch.Generator(device="cuda").manual_seed(1)
    A = torch.randn(96, 64, device="cuda", generator=g)
    B = torch.randn(64, 80, device="cuda", generator=g)
    C = op(A, B)
    assert C.device.type == "cuda", C.device
    torch.testing.assert_close(C, A @ B, rtol=1e-4, atol=1e-4)
    print("cuda eager: ok")
    meta = op(A.to("meta"), B.to("meta"))
    assert meta.device.type == "meta" and tuple(meta.shape) == (96, 80), meta
    print("meta: ok")
    Ad = torch.randn(8, 6, dtype=torch.float64, device="cuda", generator=g, requires_grad=True)
    Bd = torch.randn(6, 5, dtype=torch.float64, device="cuda", generator=g, requires_grad=True)
    assert torch.autograd.gradcheck(dop, (Ad, Bd))
    print("cuda gradcheck: ok")
    if not hasattr(torch, "compile"):
        print("torch.compile: not in this PyTorch")
        return

    def model(x, w):
        return torch.relu(op(x, w)) + 1

    for device in ("cpu", "cuda"):
        x, w = A.to(device), B.to(device)
        compiled = torch.compile(model, fullgraph=True)
        torch.testing.assert_close(compiled(x, w), model(x, w), rtol=1e-4, atol=1e-4)
        print("torch.compile(fullgraph=True) on %s: ok" % device)


if __name__ == "__main__":
    main()

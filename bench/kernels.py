"""kernels.py - the benchmark's kernels: for each one its TC source
(bench/kernels/NAME.tc, entry def NAME), its sizes (the TC paper's, scaled to a 2-core machine)
and --quick sizes, and the same computation in PyTorch and, where NumPy has it in a natural
form, in NumPy.

The inputs themselves are made by the harness from the TC def's signature: one array per
input parameter, shaped by `sizes`; integer (index) inputs draw from 0:sizes[index_bounds[name]].
The PyTorch and NumPy functions take the sizes and the input tensors in the def's order and
return one tensor or a tuple (one per TC output, same shapes).
"""
import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Optional

import numpy as np


class LazyModule:
    """A module imported on its first attribute access: the processes of `bench.py --tune`
    that time libtc or NumPy alone import this file but never load PyTorch."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        return getattr(importlib.import_module(self._name), attr)


torch = LazyModule("torch")
F = LazyModule("torch.nn.functional")

KERNEL_DIR = Path(__file__).resolve().parent / "kernels"


@dataclass(frozen=True)
class Kernel:
    name: str
    sizes: Dict[str, int]
    quick: Dict[str, int]
    torch_fn: Callable
    numpy_fn: Optional[Callable] = None
    # input name -> size name: the integer input indexes 0:that size (gathers)
    index_bounds: Dict[str, str] = field(default_factory=dict)
    # longest chain of float additions into one output element (scales the tolerance)
    reduction: Callable[[dict], int] = lambda s: 1
    # floating-point operations of one run (multiply-adds count 2), for GFLOP/s
    flops: Optional[Callable[[dict], float]] = None

    @property
    def source(self):
        return KERNEL_DIR / (self.name + ".tc")


def conv_out(s, dim, kdim):
    """Output extent of a valid (unpadded, stride 1) convolution."""
    return s[dim] - s[kdim] + 1


def np_softmax(s, X):
    e = np.exp(X - X.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def np_layernorm(s, X, gamma, beta):
    xc = X - X.mean(axis=1, keepdims=True)
    var = (xc * xc).mean(axis=1, keepdims=True)
    return xc / np.sqrt(var + 1e-5) * gamma + beta


def np_fcrelu(I, W, bias):
    return np.maximum(I @ W.T + bias, 0)


def torch_fcrelu(I, W, bias):
    return torch.relu(F.linear(I, W, bias))


def np_maxpool2x2(s, X):
    ho, wo = s["H"] // 2, s["W"] // 2
    return X[:, :, :2 * ho, :2 * wo].reshape(s["B"], s["C"], ho, 2, wo, 2).max(axis=(3, 5))


def torch_group_conv(s, I, W1):
    # (N,G,C,H,W) and (G,F,C,KH,KW) are the memory layouts of conv2d's grouped tensors
    out = F.conv2d(I.flatten(1, 2), W1.flatten(0, 1), groups=s["G"])
    return out.unflatten(1, (s["G"], s["F"]))


KERNELS = [
    Kernel("sgemm",
           sizes=dict(M=1024, K=1024, N=1024), quick=dict(M=64, K=64, N=64),
           torch_fn=lambda s, A, B: A @ B,
           numpy_fn=lambda s, A, B: A @ B,
           reduction=lambda s: s["K"],
           flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"]),
    Kernel("tmm",
           sizes=dict(M=128, K=1024, N=1000), quick=dict(M=16, K=64, N=125),
           torch_fn=lambda s, A, B: A @ B.T,
           numpy_fn=lambda s, A, B: A @ B.T,
           reduction=lambda s: s["K"],
           flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"]),
    Kernel("tbmm",
           sizes=dict(B=500, N=26, M=26, K=72), quick=dict(B=50, N=13, M=13, K=36),
           torch_fn=lambda s, X, Y: torch.bmm(X, Y.transpose(1, 2)),
           numpy_fn=lambda s, X, Y: X @ Y.transpose(0, 2, 1),
           reduction=lambda s: s["K"],
           flops=lambda s: 2.0 * s["B"] * s["N"] * s["M"] * s["K"]),
    Kernel("group_conv",
           sizes=dict(N=32, G=32, C=4, F=4, H=56, W=56, KH=3, KW=3),
           quick=dict(N=2, G=8, C=4, F=4, H=14, W=14, KH=3, KW=3),
           torch_fn=torch_group_conv,
           reduction=lambda s: s["C"] * s["KH"] * s["KW"],
           flops=lambda s: 2.0 * s["N"] * s["G"] * s["F"] * conv_out(s, "H", "KH")
           * conv_out(s, "W", "KW") * s["C"] * s["KH"] * s["KW"]),
    Kernel("conv2d",
           sizes=dict(N=8, C=64, M=64, H=56, W=56, KH=3, KW=3),
           quick=dict(N=1, C=16, M=16, H=14, W=14, KH=3, KW=3),
           torch_fn=lambda s, I, W1: F.conv2d(I, W1),
           reduction=lambda s: s["C"] * s["KH"] * s["KW"],
           flops=lambda s: 2.0 * s["N"] * s["M"] * conv_out(s, "H", "KH")
           * conv_out(s, "W", "KW") * s["C"] * s["KH"] * s["KW"]),
    Kernel("lut1",
           sizes=dict(E=100000, D=64, B=128, L=50), quick=dict(E=12500, D=64, B=32, L=25),
           index_bounds=dict(I="E"),
           torch_fn=lambda s, LUT, I: F.embedding_bag(I, LUT, mode="sum"),
           numpy_fn=lambda s, LUT, I: LUT[I].sum(axis=1),
           reduction=lambda s: s["L"]),
    Kernel("lut2",
           sizes=dict(E1=100000, E2=100000, D=64, B=128, L1=50, L2=50),
           quick=dict(E1=12500, E2=12500, D=64, B=32, L1=25, L2=25),
           index_bounds=dict(I1="E1", I2="E2"),
           torch_fn=lambda s, LUT1, I1, LUT2, I2: (F.embedding_bag(I1, LUT1, mode="sum"),
                                                F.embedding_bag(I2, LUT2, mode="sum")),
           numpy_fn=lambda s, LUT1, I1, LUT2, I2: (LUT1[I1].sum(axis=1), LUT2[I2].sum(axis=1)),
           reduction=lambda s: max(s["L1"], s["L2"])),
    Kernel("fcrelu",
           sizes=dict(B=128, K=1024, N=1000), quick=dict(B=16, K=128, N=125),
           torch_fn=lambda s, I, W, bias: torch_fcrelu(I, W, bias),
           numpy_fn=lambda s, I, W, bias: np_fcrelu(I, W, bias),
           reduction=lambda s: s["K"] + 1,
           flops=lambda s: 2.0 * s["B"] * s["N"] * s["K"]),
    Kernel("mlp3",
           sizes=dict(B=128, M=128, O=64, P=32, Q=2), quick=dict(B=16, M=128, O=64, P=32, Q=2),
           torch_fn=lambda s, I, W1, B1, W2, B2, W3, B3:
               torch_fcrelu(torch_fcrelu(torch_fcrelu(I, W1, B1), W2, B2), W3, B3),
           numpy_fn=lambda s, I, W1, B1, W2, B2, W3, B3:
               np_fcrelu(np_fcrelu(np_fcrelu(I, W1, B1), W2, B2), W3, B3),
           reduction=lambda s: s["M"] + s["O"] + s["P"] + 3,
           flops=lambda s: 2.0 * s["B"] * (s["M"] * s["O"] + s["O"] * s["P"] + s["P"] * s["Q"])),
    Kernel("softmax",
           sizes=dict(N=128, D=1000), quick=dict(N=16, D=1000),
           torch_fn=lambda s, X: torch.softmax(X, dim=1),
           numpy_fn=np_softmax,
           reduction=lambda s: s["D"]),
    Kernel("layernorm",
           sizes=dict(N=128, D=1024), quick=dict(N=16, D=1024),
           torch_fn=lambda s, X, gamma, beta: F.layer_norm(X, (s["D"],), gamma, beta, eps=1e-5),
           numpy_fn=np_layernorm,
           reduction=lambda s: s["D"]),
    Kernel("maxpool",
           sizes=dict(B=32, C=64, H=56, W=56), quick=dict(B=4, C=16, H=28, W=28),
           torch_fn=lambda s, X: F.max_pool2d(X, 2),
           numpy_fn=np_maxpool2x2),
]

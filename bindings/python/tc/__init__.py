"""tc - Python binding of libtc, the Tensor Comprehensions compiler (pure Python over ctypes).

    import numpy as np, tc
    prog = tc.define("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }")
    A, B = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    k = prog.compile("mm", A, B, backend="reference")   # options go to tc_options_set
    C = k(A, B)                    # NumPy in -> NumPy out (torch in -> torch out)
    k(A, B, out=(C,))              # into caller buffers
    C = prog.mm(A, B)              # compiles once per input signature, then reuses the kernel
    tc.infer_outputs(prog, "mm", A, B)  # [TensorInfo(dtype='float32', shape=(2, 4))]
    tc.option_info()               # [OptionInfo(key='backend', values='cpu|reference', ...), ...]
    k = prog.tune("mm", A, B, budget=30)   # search the knobs, store the best in the cache
    prog.compile("mm", A, B).cache_hit     # True: later compiles use the tuned knobs
    tc.cache_export("tuned.tccache"); tc.cache_import("tuned.tccache")  # move a cache
    tc.cache_list(); tc.cache_verify(); tc.cache_clear()   # records, damage, empty it
    tc.cache_push("redis://host:6379", "~/.tc-key")        # share with a cluster (cache_pull)
    g = prog.gradient("mm")        # a new Program: def mm_grad(A, B, d_C) -> (d_A, d_B)
    f = tc.autograd(prog, "mm")    # torch tensors in, recorded for torch.autograd (backward:
                                   # mm_grad); PyTorch is imported only here
    op = tc.custom_op(prog, "mm", "mylib::mm")  # torch.ops.mylib.mm: CPU, CUDA, Meta, autograd

Tensors go in and out through DLPack without copies (any object with __dlpack__; strides and
offsets are honoured). Failures raise tc.Error subclasses carrying libtc's status and message.
Options are libtc's: tc.option_info() lists every key of the loaded library (key, allowed
values, default, help), general keys first, then backend knobs such as "cpu.tile".
All checking and computing happens in libtc; this package only crosses the boundary. The
library is found through TC_LIBRARY, the build tree, the dynamic loader or pkg-config (see
_library.py); tc.library_path says which one was loaded.
"""
from . import _library
from ._cache import (CacheDamage, CacheRecord, CacheTrial, cache_clear, cache_export, cache_import, cache_list,
                     cache_pull, cache_push, cache_verify)
from ._kernel import Kernel
from ._options import OptionInfo, Options, option_info
from ._program import Entry, Param, Program, autograd, custom_op, define, gradient, infer_outputs
from ._progress import TuneProgress
from ._tensors import Tensor, TensorInfo
from .errors import (Error, TcCacheError, TcCompileError, TcInternalError,
                     TcInvalidArgumentError, TcNoMemoryError, TcRuntimeError, TcSemanticError,
                     TcShapeError, TcSyntaxError, TcUnsupportedError)

__version__ = "0.2.0"  # the libtc version this binding was written for (pyproject reads it)

library_path = _library.path  # the libtc that was loaded


def library_version():
    """The loaded libtc's version string, e.g. "0.2.0"."""
    return _library.lib.tc_version_string().decode()


__all__ = ["define", "infer_outputs", "gradient", "autograd", "custom_op", "option_info", "cache_export",
           "cache_import", "cache_list", "cache_push", "cache_pull", "cache_verify", "cache_clear", "Program", "Kernel",
           "Entry", "Options", "Tensor", "TensorInfo", "Param", "OptionInfo", "TuneProgress",
           "CacheRecord", "CacheTrial", "CacheDamage", "Error", "TcInvalidArgumentError",
           "TcSyntaxError", "TcSemanticError", "TcShapeError", "TcUnsupportedError", "TcCompileError",
           "TcRuntimeError", "TcCacheError", "TcNoMemoryError", "TcInternalError",
           "library_path", "library_version", "__version__"]

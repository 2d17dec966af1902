"""_tensors.py - tensors across the boundary: DLTensor arrays borrowed (zero-copy) from the
caller's objects, a kernel's input signature, libtc's tensor info as TensorInfo, and the GPU
libraries (PyTorch, CuPy) that allocate CUDA outputs and give the stream; outputs returned as
the same kind of array as the inputs."""
import collections
import sys

from . import _dlpack

TensorInfo = collections.namedtuple("TensorInfo", "dtype shape")  # ("float32", (2, 3))
TensorInfo.__doc__ = "dtype name and shape of a tensor (tc_tensor_info)"

Tensor = _dlpack.Tensor


def _borrow_all(stack, objs, what, writable):
    """A DLTensor array over objs, borrowed (zero-copy) until `stack` closes."""
    array = (_dlpack.DLTensor * max(1, len(objs)))()
    for i, obj in enumerate(objs):
        borrowed = _dlpack.borrow(obj, "%s %d" % (what, i), writable)
        stack.callback(borrowed.release)
        array[i] = borrowed.tensor
    return array


def _signature(array, count):
    """What a kernel is specialised to: each input's dtype and shape."""
    return tuple((t.dtype.code, t.dtype.bits, t.dtype.lanes,
                  tuple(t.shape[d] for d in range(t.ndim))) for t in array[:count])


def _tensor_info(info):
    return TensorInfo(_dlpack.dtype_name(info.dtype), tuple(info.shape[:info.ndim]))


class _Torch:
    """PyTorch CUDA tensors: outputs by torch.zeros on the input's device, work on torch's
    current stream of that device."""

    def __init__(self, torch):
        self.torch = torch

    def zeros(self, info, like):
        return self.torch.zeros(info.shape, dtype=getattr(self.torch, info.dtype), device=like.device)

    def stream(self, like):
        return self.torch.cuda.current_stream(like.device).cuda_stream


class _CuPy:
    """CuPy arrays: outputs by cupy.zeros on the input's device, work on CuPy's current stream."""

    def __init__(self, cupy):
        self.cupy = cupy

    def zeros(self, info, like):
        with like.device:
            return self.cupy.zeros(info.shape, dtype=info.dtype)

    def stream(self, like):
        with like.device:
            return self.cupy.cuda.get_current_stream().ptr


def _gpu_library(tensor):
    """How to allocate outputs and find the stream for a tensor in CUDA memory (kDLCUDA, a
    backend=cuda kernel's), None for any other tensor."""
    device = getattr(tensor, "__dlpack_device__", None)
    if device is None or device()[0] != _dlpack.kDLCUDA:
        return None
    library = type(tensor).__module__.partition(".")[0]
    if library == "torch":
        return _Torch(sys.modules["torch"])
    if library == "cupy":
        return _CuPy(sys.modules["cupy"])
    raise TypeError("a %s tensor in CUDA memory: pass out=(...) tensors (libtc allocates CUDA outputs "
                    "through PyTorch or CuPy only)" % type(tensor).__name__)


def _same_kind(template, tensor):
    """`tensor` as the kind of array `template` is, without a copy: NumPy through
    __array_interface__ (NumPy < 2 makes from_dlpack arrays read-only and cannot take bool),
    other libraries (PyTorch, ...) through their from_dlpack. A tc.Tensor if there is no such
    library or it cannot take this dtype (bool in PyTorch < 2.0, bfloat16 in NumPy)."""
    if template is None or isinstance(template, Tensor):
        return tensor
    library = type(template).__module__.partition(".")[0]
    module = sys.modules.get(library)
    if library == "numpy":
        return tensor if tensor.dtype == "bfloat16" else module.asarray(tensor)
    from_dlpack = getattr(module, "from_dlpack", None)
    if from_dlpack is None:
        return tensor
    try:
        return from_dlpack(tensor)
    except (BufferError, RuntimeError, TypeError, ValueError):
        return tensor

"""_tensors.py - tensors across the boundary: DLTensor arrays borrowed (zero-copy) from the
caller's objects, a kernel's input signature, libtc's tensor info as TensorInfo, and the GPU
libraries (PyTorch, CuPy) that allocate CUDA outputs and give the stream; outputs returned as
the same kind of array as the inputs."""
import collections
import ctypes
import sys

from . import _dlpack

TensorInfo = collections.namedtuple("TensorInfo", "dtype shape")  # ("float32", (2, 3))
TensorInfo.__doc__ = "dtype name and shape of a tensor (tc_tensor_info)"

Tensor = _dlpack.Tensor


def _borrow_all(stack, objs, what, writable):
    """A DLTensor array over objs, borrowed (zero-copy) until `stack` closes."""
    torch_tensor = _torch_tensor_type()
    tensors = []
    for i, obj in enumerate(objs):
        tensor = _describe_torch(obj) if torch_tensor is not None and isinstance(obj, torch_tensor) else None
        if tensor is None:
            borrowed = _dlpack.borrow(obj, "%s %d" % (what, i), writable)
            stack.callback(borrowed.release)
            tensor = borrowed.tensor
        tensors.append(tensor)
    if not tensors:
        return (_dlpack.DLTensor * 1)()
    return (_dlpack.DLTensor * len(tensors))(*tensors)


def _torch_tensor_type():
    torch = sys.modules.get("torch")
    return getattr(torch, "Tensor", None)


_TORCH_STRIDED = None
_TORCH_DTYPES = None  # torch dtype -> DLDataType, made on first use (PyTorch imported by then)
_INT64_ARRAYS = [ctypes.c_int64 * max(1, n) for n in range(65)]  # by ndim (TC_MAX_NDIM and more)


def _describe_torch(tensor):
    """The DLTensor of a plain PyTorch tensor (strided, no autograd, no conjugate or negative
    view, a dtype TC has, in CPU or CUDA memory) made straight from its attributes: what its
    __dlpack__ exports, without the capsule's round trip, which is most of a small call's cost.
    Its shape and strides live as long as the DLTensor (ctypes keeps them in its _objects),
    which the array _borrow_all makes keeps. None for any other tensor: the caller takes the
    capsule path, whose errors (a tensor that requires grad, ...) are PyTorch's words."""
    global _TORCH_DTYPES, _TORCH_STRIDED
    if _TORCH_DTYPES is None:
        torch = sys.modules["torch"]
        _TORCH_STRIDED = torch.strided
        _TORCH_DTYPES = {getattr(torch, name): _dlpack.DLDataType(code, bits, 1)
                         for name, (code, bits) in _dlpack.DTYPES.items() if hasattr(torch, name)}
    dtype = _TORCH_DTYPES.get(tensor.dtype)
    ndim = tensor.dim()
    if (dtype is None or ndim >= len(_INT64_ARRAYS) or tensor.layout is not _TORCH_STRIDED or tensor.requires_grad
            or tensor.is_conj() or tensor.is_neg()):
        return None
    if tensor.is_cuda:
        device = _dlpack.DLDevice(_dlpack.kDLCUDA, tensor.get_device())
    elif tensor.device.type == "cpu":
        device = _dlpack.DLDevice(_dlpack.kDLCPU, 0)
    else:
        return None
    array = _INT64_ARRAYS[ndim]
    return _dlpack.DLTensor(tensor.data_ptr(), device, ndim, dtype, array(*tensor.shape), array(*tensor.stride()), 0)


def _signature(array, count):
    """What a kernel is specialised to: each input's dtype and shape."""
    return tuple((t.dtype.code, t.dtype.bits, t.dtype.lanes,
                  tuple(t.shape[d] for d in range(t.ndim))) for t in array[:count])


def _tensor_info(info):
    return TensorInfo(_dlpack.dtype_name(info.dtype), tuple(info.shape[:info.ndim]))


class _Torch:
    """PyTorch tensors: outputs on the input's device (torch.empty where the kernel sets every
    element, else torch.zeros); CUDA work on torch's current stream of that device."""

    def __init__(self, torch):
        self.torch = torch
        # The raw stream handle without building a torch.cuda.Stream object (PyTorch's
        # internal call, which Inductor's generated code uses too); the public one otherwise.
        self._raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)

    def zeros(self, info, like):
        return self.torch.zeros(info.shape, dtype=getattr(self.torch, info.dtype), device=like.device)

    def empty(self, info, like):
        return self.torch.empty(info.shape, dtype=getattr(self.torch, info.dtype), device=like.device)

    def stream(self, like):
        if self._raw_stream is not None:
            return self._raw_stream(like.get_device())
        return self.torch.cuda.current_stream(like.device).cuda_stream


class _CuPy:
    """CuPy arrays: outputs by cupy.zeros on the input's device, work on CuPy's current stream."""

    def __init__(self, cupy):
        self.cupy = cupy

    def zeros(self, info, like):
        with like.device:
            return self.cupy.zeros(info.shape, dtype=info.dtype)

    def empty(self, info, like):
        with like.device:
            return self.cupy.empty(info.shape, dtype=info.dtype)

    def stream(self, like):
        with like.device:
            return self.cupy.cuda.get_current_stream().ptr


_TORCH = None  # the _Torch, made on first use


def _torch_library():
    global _TORCH
    if _TORCH is None:
        _TORCH = _Torch(sys.modules["torch"])
    return _TORCH


def _host_library(tensor):
    """PyTorch for a torch tensor in CPU memory (outputs then allocated by torch, as torch
    tensors, without a tc.Tensor in between), None for any other object."""
    torch_tensor = _torch_tensor_type()
    if torch_tensor is not None and isinstance(tensor, torch_tensor) and tensor.device.type == "cpu":
        return _torch_library()
    return None


def _gpu_library(tensor):
    """How to allocate outputs and find the stream for a tensor in CUDA memory (kDLCUDA, a
    backend=cuda kernel's), None for any other tensor."""
    torch_tensor = _torch_tensor_type()
    if torch_tensor is not None and isinstance(tensor, torch_tensor):
        return _torch_library() if tensor.is_cuda else None
    device = getattr(tensor, "__dlpack_device__", None)
    if device is None or device()[0] != _dlpack.kDLCUDA:
        return None
    library = type(tensor).__module__.partition(".")[0]
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

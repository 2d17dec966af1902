"""_tensors.py - tensors across the boundary: DLTensor arrays borrowed (zero-copy) from the
caller's objects, a kernel's input signature, libtc's tensor info as TensorInfo, and the GPU
libraries (PyTorch, CuPy) that allocate CUDA outputs and give the stream; outputs returned as
the same kind of array as the inputs."""
import collections
import ctypes
import struct
import sys

from . import _dlpack

TensorInfo = collections.namedtuple("TensorInfo", "dtype shape")  # ("float32", (2, 3))
TensorInfo.__doc__ = "dtype name and shape of a tensor (tc_tensor_info)"

Tensor = _dlpack.Tensor


def _borrow_all(stack, objs, what, writable):
    """A DLTensor array over objs, borrowed (zero-copy) until `stack` closes."""
    array = (_dlpack.DLTensor * max(1, len(objs)))()
    torch_tensor = _torch_tensor_type()
    plain = []  # (position, tensor, its fields) of plain torch tensors
    for i, obj in enumerate(objs):
        fields = _torch_fields(obj) if torch_tensor is not None and isinstance(obj, torch_tensor) else None
        if fields is not None:
            plain.append((i, obj, fields))
            continue
        borrowed = _dlpack.borrow(obj, "%s %d" % (what, i), writable)
        stack.callback(borrowed.release)
        array[i] = borrowed.tensor
    if plain:
        _write_torch(array, plain)
    return array


def _torch_tensor_type():
    torch = sys.modules.get("torch")
    return getattr(torch, "Tensor", None)


_TORCH_STRIDED = None
_TORCH_DTYPES = None  # torch dtype -> (DLPack type code, bits), made on first use (PyTorch imported by then)
# DLTensor's fields as C lays them out: data, device (type, id), ndim, dtype (code, bits, lanes),
# shape, strides, byte_offset.
_DLTENSOR = struct.Struct("@PiiiBBHPPQ")
assert _DLTENSOR.size == ctypes.sizeof(_dlpack.DLTensor)


def _torch_fields(tensor):
    """((code, bits), device type, device id) of a plain PyTorch tensor (strided, no autograd, no
    conjugate or negative view, a dtype TC has, in CPU or CUDA memory), which _write_torch
    describes from its attributes: the DLTensor its __dlpack__ exports, without the capsule's
    round trip (most of a small call's cost). None for any other tensor: the caller takes the
    capsule path, whose errors (a tensor that requires grad, ...) are PyTorch's words."""
    global _TORCH_DTYPES, _TORCH_STRIDED
    if _TORCH_DTYPES is None:
        torch = sys.modules["torch"]
        _TORCH_STRIDED = torch.strided
        _TORCH_DTYPES = {getattr(torch, name): code_bits for name, code_bits in _dlpack.DTYPES.items()
                         if hasattr(torch, name)}
    dtype = _TORCH_DTYPES.get(tensor.dtype)
    if (dtype is None or tensor.layout is not _TORCH_STRIDED or tensor.requires_grad or tensor.is_conj()
            or tensor.is_neg()):
        return None
    if tensor.is_cuda:
        return dtype, _dlpack.kDLCUDA, tensor.get_device()
    if tensor.device.type == "cpu":
        return dtype, _dlpack.kDLCPU, 0
    return None


def _write_torch(array, plain):
    """Writes each plain torch tensor's DLTensor into `array` at its position, the shapes and
    strides of all of them in one int64 table that lives as long as the array."""
    dims = []
    for _, tensor, _ in plain:
        dims += tensor.shape
        dims += tensor.stride()
    table = (ctypes.c_int64 * max(1, len(dims)))(*dims)
    array.dims = table
    base, at = ctypes.addressof(table), 0
    for i, tensor, ((code, bits), device_type, device_id) in plain:
        ndim = tensor.dim()
        _DLTENSOR.pack_into(array, i * _DLTENSOR.size, tensor.data_ptr(), device_type, device_id, ndim, code, bits, 1,
                            base + 8 * at, base + 8 * (at + ndim), 0)
        at += 2 * ndim


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

    def allocate(self, info, like, zeroed):
        make = self.torch.zeros if zeroed else self.torch.empty
        return make(info.shape, dtype=getattr(self.torch, info.dtype), device=like.device)

    def stream(self, like):
        if self._raw_stream is not None:
            return self._raw_stream(like.get_device())
        return self.torch.cuda.current_stream(like.device).cuda_stream


class _CuPy:
    """CuPy arrays: outputs by cupy.zeros on the input's device, work on CuPy's current stream."""

    def __init__(self, cupy):
        self.cupy = cupy

    def allocate(self, info, like, zeroed):
        with like.device:
            return (self.cupy.zeros if zeroed else self.cupy.empty)(info.shape, dtype=info.dtype)

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

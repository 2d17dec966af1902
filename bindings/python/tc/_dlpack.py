"""_dlpack.py - the DLPack side of the binding: C structs, consuming `__dlpack__` capsules, and
tc.Tensor (a minimal producer for outputs).

Consuming (borrow): obj.__dlpack__() hands over a DLManagedTensor in a PyCapsule named
"dltensor" ("dltensor_versioned" for DLPack >= 1.0 producers, asked for with max_version). The
capsule is renamed "used_dltensor[_versioned]" as the protocol requires and its DLTensor is
passed to libtc unchanged - same data pointer, strides and byte_offset - so nothing is copied.
The producer's deleter runs when the borrow ends, right after the C call. Checking dtype,
shape, strides and device is libtc's job, not this module's.

Producing (Tensor): a zero-filled, row-major CPU buffer of a given dtype and shape that exports
itself through __dlpack__ (np.from_dlpack / torch.from_dlpack wrap it without a copy) and
through __array_interface__ (np.asarray, which also works for bool: NumPy < 1.25 and
PyTorch < 2.0 cannot pass bool through DLPack).

CPython only (capsules are handled with ctypes.pythonapi). The structs and DTYPES also serve
tests/e2e/tclib.py, which imports this module without the package (see _library.py).
"""
import ctypes
import sys

kDLCPU = 1
kDLCUDA = 2
_READ_ONLY_FLAG = 1  # DLPACK_FLAG_BITMASK_READ_ONLY (DLPack 1.0)

# dtype name -> (DLPack type code, bits); the dtypes TC has (tc.h: bool is code 6, 8 bits).
DTYPES = {
    "bool": (6, 8),
    "uint8": (1, 8), "uint16": (1, 16), "uint32": (1, 32), "uint64": (1, 64),
    "int8": (0, 8), "int16": (0, 16), "int32": (0, 32), "int64": (0, 64),
    "float16": (2, 16), "float32": (2, 32), "float64": (2, 64), "bfloat16": (4, 16),
}
_DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
# for __array_interface__; NumPy has no bfloat16: its bits are shown as uint16
_TYPESTR_KIND = {0: "i", 1: "u", 2: "f", 4: "u", 6: "b"}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)  # void (*)(DLManagedTensor[Versioned] *)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _Deleter), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


def dtype_name(dl_dtype):
    """'float32' for a DLDataType TC knows, else a description of the DLPack type."""
    if dl_dtype.lanes == 1 and (dl_dtype.code, dl_dtype.bits) in _DTYPE_NAMES:
        return _DTYPE_NAMES[(dl_dtype.code, dl_dtype.bits)]
    return "dlpack(code=%d, bits=%d, lanes=%d)" % (dl_dtype.code, dl_dtype.bits, dl_dtype.lanes)


# ---- capsules --------------------------------------------------------------------------------

def _capsule_function(name, restype, *argtypes):
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


# Capsule names are passed as addresses of the never-freed strings below.
_py, _vp = ctypes.py_object, ctypes.c_void_p
_capsule_is_valid = _capsule_function("PyCapsule_IsValid", ctypes.c_int, _py, _vp)
_capsule_get_pointer = _capsule_function("PyCapsule_GetPointer", _vp, _py, _vp)
_capsule_set_name = _capsule_function("PyCapsule_SetName", ctypes.c_int, _py, _vp)
_CapsuleDestructor = ctypes.CFUNCTYPE(None, _vp)
_capsule_new = _capsule_function("PyCapsule_New", _py, _vp, _vp, _CapsuleDestructor)
# The destructor receives a capsule whose refcount is already 0: use raw pointers there.
_capsule_is_valid_raw = _capsule_function("PyCapsule_IsValid", ctypes.c_int, _vp, _vp)
_capsule_get_pointer_raw = _capsule_function("PyCapsule_GetPointer", _vp, _vp, _vp)


def _static_string(text):
    """A C string that is never freed: a capsule's name must outlive it, and capsules can be
    destroyed during interpreter shutdown, after this module's objects are gone."""
    libc = ctypes.CDLL(None)
    libc.strdup.restype, libc.strdup.argtypes = _vp, [ctypes.c_char_p]
    return libc.strdup(text)


_NAME = _static_string(b"dltensor")
_NAME_VERSIONED = _static_string(b"dltensor_versioned")
_USED_NAME = _static_string(b"used_dltensor")
_USED_NAME_VERSIONED = _static_string(b"used_dltensor_versioned")


class Borrowed:
    """One tensor taken from obj.__dlpack__(): .tensor is its DLTensor (a view into producer
    memory); release() gives it back by calling the producer's deleter (exactly once)."""

    __slots__ = ("tensor", "_managed", "_deleter")

    def __init__(self, tensor, managed, deleter):
        self.tensor, self._managed, self._deleter = tensor, managed, deleter

    def release(self):
        deleter, self._deleter = self._deleter, None
        if deleter:
            deleter(self._managed)


def borrow(obj, what, writable):
    """Takes obj's DLTensor through the capsule protocol. `what` names obj in errors; a
    writable borrow refuses a tensor its producer marked read-only."""
    export = getattr(obj, "__dlpack__", None)
    if export is None:
        raise TypeError("%s: expected a tensor with __dlpack__ (a NumPy array, torch tensor, "
                        "tc.Tensor, ...), got %s" % (what, type(obj).__name__))
    try:
        capsule = export(max_version=(1, 0))
    except TypeError:  # a producer older than DLPack 1.0 has no max_version
        capsule = export()
    if _capsule_is_valid(capsule, _NAME_VERSIONED):
        address = _capsule_get_pointer(capsule, _NAME_VERSIONED)
        managed = DLManagedTensorVersioned.from_address(address)
        if managed.version.major != 1:
            raise BufferError("%s: DLPack version %d.%d is not supported (1.x is)"
                              % (what, managed.version.major, managed.version.minor))
        if writable and managed.flags & _READ_ONLY_FLAG:
            raise BufferError("%s: the tensor is read-only" % what)
        _capsule_set_name(capsule, _USED_NAME_VERSIONED)
    elif _capsule_is_valid(capsule, _NAME):
        address = _capsule_get_pointer(capsule, _NAME)
        managed = DLManagedTensor.from_address(address)
        _capsule_set_name(capsule, _USED_NAME)
    else:
        raise TypeError("%s: __dlpack__ returned %r, not an unused DLPack capsule"
                        % (what, capsule))
    # The DLTensor stays a view into the producer's struct, valid until release().
    return Borrowed(managed.dl_tensor, address, managed.deleter)


# ---- tc.Tensor: the producer ------------------------------------------------------------------

# Exported DLManagedTensor[Versioned] address -> what must stay alive until its deleter runs.
_exported = {}


def _delete_exported(address, _exported=_exported):  # the dict is bound: survives shutdown
    _exported.pop(address, None)


def _destroy_capsule(capsule):
    for name in (_NAME, _NAME_VERSIONED):  # still unconsumed: nobody else will delete it
        if _capsule_is_valid_raw(capsule, name):
            _delete_exported(_capsule_get_pointer_raw(capsule, name))


_delete_exported_c = _Deleter(_delete_exported)
_destroy_capsule_c = _CapsuleDestructor(_destroy_capsule)
# Consumers may call these after this module is torn down (arrays freed at exit): never free them.
for _callback in (_delete_exported_c, _destroy_capsule_c):
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(_callback))


class Tensor:
    """A zero-filled, row-major CPU tensor owned by Python: what a kernel returns when its inputs
    do not come from a library with `from_dlpack` (or that library cannot take the dtype).
    Wrap it without a copy with np.from_dlpack(t), torch.from_dlpack(t) or np.asarray(t)
    (a bfloat16 tensor: torch.from_dlpack; np.asarray gives its bits as uint16)."""

    def __init__(self, dtype, shape):
        if dtype not in DTYPES:
            raise ValueError("unknown dtype %r (TC dtypes: %s)" % (dtype, ", ".join(DTYPES)))
        self.dtype = dtype
        self.shape = tuple(int(s) for s in shape)
        code, bits = DTYPES[dtype]
        self._dl_dtype = DLDataType(code, bits, 1)
        self.itemsize = bits // 8
        count = 1
        for s in self.shape:
            if s < 0:
                raise ValueError("negative extent in shape %r" % (self.shape,))
            count *= s
        self.size = count
        # ctypes zero-fills; at least one byte so the buffer has an address.
        self._buffer = (ctypes.c_ubyte * max(1, count * self.itemsize))()
        self.strides = tuple(_row_major_strides(self.shape))  # in elements, as DLPack counts

    @property
    def data_ptr(self):
        return ctypes.addressof(self._buffer)

    def __dlpack_device__(self):
        return (kDLCPU, 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if dl_device is not None and tuple(dl_device) != (kDLCPU, 0):
            raise BufferError("tc.Tensor lives on the CPU (kDLCPU, 0), not on %r" % (dl_device,))
        if copy:
            raise BufferError("tc.Tensor exports its own memory; it does not copy")
        versioned = max_version is not None and max_version[0] >= 1
        managed = DLManagedTensorVersioned() if versioned else DLManagedTensor()
        if versioned:
            managed.version = DLPackVersion(1, 0)
        shape = (ctypes.c_int64 * max(1, len(self.shape)))(*self.shape)
        strides = (ctypes.c_int64 * max(1, len(self.shape)))(*self.strides)
        t = managed.dl_tensor
        t.data = self.data_ptr
        t.device = DLDevice(kDLCPU, 0)
        t.ndim = len(self.shape)
        t.dtype = self._dl_dtype
        t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = 0
        managed.deleter = _delete_exported_c
        address = ctypes.addressof(managed)
        _exported[address] = (managed, shape, strides, self)
        return _capsule_new(address, _NAME_VERSIONED if versioned else _NAME, _destroy_capsule_c)

    @property
    def __array_interface__(self):
        code, bits = DTYPES[self.dtype]
        byte_order = "|" if bits == 8 else ("<" if sys.byteorder == "little" else ">")
        return {"version": 3, "shape": self.shape, "data": (self.data_ptr, False),
                "strides": None, "typestr": "%s%s%d" % (byte_order, _TYPESTR_KIND[code], bits // 8)}

    def __repr__(self):
        return "tc.Tensor(dtype=%r, shape=%r)" % (self.dtype, self.shape)


def _row_major_strides(shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= max(1, extent)
    return reversed(strides)

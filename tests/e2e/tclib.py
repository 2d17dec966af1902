"""tclib.py - a small private ctypes shim over libtc.so for the e2e corpus.

Not the real Python binding, but built on its ctypes declaration of include/tc/tc.h
(bindings/python/tc: the signatures and tc_* structs of _library.py, the DLPack structs and
dtype codes of _dlpack.py, the statuses of _status.py), so that the C API is declared once. What
it adds is what the tests need and the binding does not offer: NumPy arrays as DLTensors in any
layout, malformed ones included (explicit strides, byte_offset, overridden fields), and errors
that name the stage that failed. The library comes from the environment variable TC_LIBRARY
only, and is loaded by the first call that needs it. Every failing call raises TCError carrying
(status, message, stage).
"""
import ctypes
import importlib
import importlib.util
import os
import sys

import numpy as np

# The binding's package, under a private name so that a process that also imports the real `tc`
# gets the real one, and without running its __init__.py: that loads libtc at once (without
# TC_LIBRARY, whichever one it finds), whereas this module is imported before libtc is built
# (CMake runs run_corpus.py --list at configure time). libtc is loaded when _library is first
# imported, by lib().
_BINDING = "_tclib_binding"
_BINDING_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))), "bindings", "python", "tc")


def _binding_module(name):
    if _BINDING not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            _BINDING, os.path.join(_BINDING_DIR, "__init__.py"),
            submodule_search_locations=[_BINDING_DIR])
        sys.modules[_BINDING] = importlib.util.module_from_spec(spec)
    return importlib.import_module(_BINDING + "." + name)


_dlpack = _binding_module("_dlpack")
DLDevice, DLDataType, DLTensor = _dlpack.DLDevice, _dlpack.DLDataType, _dlpack.DLTensor

STATUS = {"TC_OK": 0}
STATUS.update((name, status) for status, name in _binding_module("_status").STATUS_NAMES.items())
STATUS_NAME = {v: k for k, v in STATUS.items()}
globals().update(STATUS)


class TCError(Exception):
    def __init__(self, status, message, stage):
        super().__init__("%s: %s (%d): %s" % (stage, STATUS_NAME.get(status, "?"), status, message))
        self.status = status
        self.message = message
        self.stage = stage


# ---- dtypes ---------------------------------------------------------------------------------

# NumPy has no bfloat16: a bfloat16 tensor is a uint16 array of its bits whose dtype carries
# the metadata {"tc": "bfloat16"} (BF16; corpus.bf16 and from_bf16 convert).
BF16 = np.dtype(np.uint16, metadata={"tc": "bfloat16"})
_NP_TO_DL = {np.dtype(name): code_bits for name, code_bits in _dlpack.DTYPES.items() if name != "bfloat16"}
_DL_TO_NP = {v: k for k, v in _NP_TO_DL.items()}


def is_bf16(np_dtype):
    metadata = np.dtype(np_dtype).metadata
    return bool(metadata) and metadata.get("tc") == "bfloat16"


def bf16(x):
    """float values -> BF16 bits: to float32, then rounded to nearest even on the lower 16 bits;
    NaN gives 0x7fc0 (libtc's and PyTorch's rule)."""
    f = np.asarray(x, np.float32)
    b = f.view(np.uint32).astype(np.uint64)
    u = np.uint64  # typed constants: a 0-d uint64 with a Python int would promote to float64
    rounded = ((b + u(0x7FFF) + ((b >> u(16)) & u(1))) >> u(16)).astype(np.uint16)
    return np.where(np.isnan(f), np.uint16(0x7FC0), rounded).astype(BF16)


def from_bf16(a):
    """BF16 bits -> float32 values."""
    return (np.asarray(a).astype(np.uint32) << np.uint32(16)).view(np.float32)


def np_dtype_named(name):
    """The NumPy dtype tests use for a TC dtype name (BF16 for bfloat16)."""
    return BF16 if name == "bfloat16" else np.dtype(name)


def dl_dtype(np_dtype):
    code, bits = _dlpack.DTYPES["bfloat16"] if is_bf16(np_dtype) else _NP_TO_DL[np.dtype(np_dtype)]
    return DLDataType(code, bits, 1)


def np_dtype(dl):
    key = (dl.code, dl.bits)
    if dl.lanes == 1 and key == _dlpack.DTYPES["bfloat16"]:
        return BF16
    if dl.lanes != 1 or key not in _DL_TO_NP:
        raise ValueError("no NumPy dtype for DLPack dtype code=%d bits=%d lanes=%d"
                         % (dl.code, dl.bits, dl.lanes))
    return _DL_TO_NP[key]


# ---- NumPy array -> DLTensor -----------------------------------------------------------------

def _root(arr):
    base = arr
    while isinstance(base.base, np.ndarray):
        base = base.base
    return base


class Tensor:
    """Keeps a DLTensor and the ctypes arrays/NumPy array it points into alive.

    layout: "auto"   - strides NULL for C-contiguous arrays, explicit otherwise;
            "strides" - always explicit strides;
    byte_offset: pass the root buffer as data and the array's start as byte_offset.
    Extra keyword overrides (for negative tests): shape=, strides=, dtype=, ndim=, device_type=.
    """

    def __init__(self, arr, layout="auto", byte_offset=False, **override):
        if not isinstance(arr, np.ndarray):
            arr = np.asarray(arr)
        self.arr = arr
        item = arr.itemsize
        shape = list(override.get("shape", arr.shape))
        if "strides" in override:
            strides = override["strides"]
        elif layout == "strides" or not arr.flags.c_contiguous:
            strides = []
            for s in arr.strides:
                if s % item:
                    raise ValueError("stride %d bytes is not a multiple of itemsize %d" % (s, item))
                strides.append(s // item)
        else:
            strides = None
        ndim = override.get("ndim", len(shape))
        self._shape = (ctypes.c_int64 * max(1, len(shape)))(*shape)
        self._strides = None if strides is None else (ctypes.c_int64 * max(1, len(strides)))(*strides)
        if arr.size == 0:
            data, off = arr.ctypes.data, 0
        elif byte_offset:
            root = _root(arr)
            data = root.ctypes.data
            off = arr.ctypes.data - data
            if off < 0:
                raise ValueError("array starts before its root buffer")
        else:
            data, off = arr.ctypes.data, 0
        dt = override.get("dtype", None)
        self.dl = DLTensor()
        self.dl.data = override.get("data", data)
        self.dl.device = DLDevice(override.get("device_type", _dlpack.kDLCPU), 0)
        self.dl.ndim = ndim
        self.dl.dtype = dl_dtype(arr.dtype) if dt is None else dt
        self.dl.shape = ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64))
        self.dl.strides = (None if self._strides is None
                           else ctypes.cast(self._strides, ctypes.POINTER(ctypes.c_int64)))
        self.dl.byte_offset = off


def _tensor_array(tensors):
    ts = [t if isinstance(t, Tensor) else Tensor(t) for t in tensors]
    arr = (DLTensor * max(1, len(ts)))()
    for i, t in enumerate(ts):
        arr[i] = t.dl
    return ts, arr


# ---- the library -----------------------------------------------------------------------------

_lib = None  # set once libtc is loaded; the destructors below call it only then


def _library():
    """The binding's _library module: libtc loaded, its functions and structs declared."""
    if not os.environ.get("TC_LIBRARY"):
        # Without it the binding would search on (build tree, dynamic loader) and the tests
        # could run a libtc other than the one they were given.
        raise RuntimeError("set TC_LIBRARY to the path of libtc.so")
    return _binding_module("_library")


def lib():
    global _lib
    if _lib is None:
        _lib = _library().lib
    return _lib


def last_error():
    m = lib().tc_last_error_message()
    return m.decode("utf-8", "replace") if m is not None else None


def _check(status, stage):
    if status != 0:
        raise TCError(status, last_error(), stage)


def _enc(s):
    return None if s is None else s.encode("utf-8")


def version():
    return lib().tc_version_string().decode()


def _info_to_py(info):
    return np_dtype(info.dtype), tuple(int(info.shape[i]) for i in range(info.ndim))


class Options:
    def __init__(self, opts=None):
        h = ctypes.c_void_p()
        _check(lib().tc_options_create(ctypes.byref(h)), "options_create")
        self.h = h
        for k, v in (opts or {}).items():
            self.set(k, v)

    def set(self, key, value):
        _check(lib().tc_options_set(self.h, _enc(key), _enc(value)), "options_set")

    def get(self, key):
        v = ctypes.c_char_p()
        _check(lib().tc_options_get(self.h, _enc(key), ctypes.byref(v)), "options_get")
        return v.value.decode()

    def __del__(self):
        if getattr(self, "h", None) and _lib is not None:
            _lib.tc_options_destroy(self.h)
            self.h = None


def param_dims(p):
    """A tc_param_info's dims as strings; ndim -1 (a type with '...'): up to the first NULL."""
    n = p.ndim
    if n < 0:
        n = next((d for d in range(len(p.dims)) if not p.dims[d]), len(p.dims))
    return [p.dims[d].decode() for d in range(n)]


class Program:
    def __init__(self, source, source_name=None):
        h = ctypes.c_void_p()
        if source_name is None:
            st = lib().tc_define(ctypes.byref(h), _enc(source))
        else:
            st = lib().tc_define_named(ctypes.byref(h), _enc(source), _enc(source_name))
        _check(st, "define")
        self.h = h

    def __del__(self):
        if getattr(self, "h", None) and _lib is not None:
            _lib.tc_program_destroy(self.h)
            self.h = None

    def def_names(self):
        n = ctypes.c_size_t()
        _check(lib().tc_program_num_defs(self.h, ctypes.byref(n)), "num_defs")
        out = []
        for i in range(n.value):
            s = ctypes.c_char_p()
            _check(lib().tc_program_def_name(self.h, i, ctypes.byref(s)), "def_name")
            out.append(s.value.decode())
        return out

    def num_params(self, entry=None):
        ni, no = ctypes.c_size_t(), ctypes.c_size_t()
        _check(lib().tc_program_num_params(self.h, _enc(entry), ctypes.byref(ni), ctypes.byref(no)),
               "num_params")
        return ni.value, no.value

    def input_params(self, entry=None):
        """[(name, NumPy dtype, dims strings)] of the def's inputs (tc_program_input_info)."""
        ni, _ = self.num_params(entry)
        res = []
        for i in range(ni):
            p = _library().ParamInfo()
            _check(lib().tc_program_input_info(self.h, _enc(entry), i, ctypes.byref(p)),
                   "input_info")
            res.append((p.name.decode(), np_dtype(p.dtype), param_dims(p)))
        return res

    def output_params(self, entry=None):
        """[(name, dims strings)] of the def's outputs as tc_program_output_info reports them."""
        _, no = self.num_params(entry)
        res = []
        for i in range(no):
            p = _library().ParamInfo()
            _check(lib().tc_program_output_info(self.h, _enc(entry), i, ctypes.byref(p)),
                   "output_info")
            res.append((p.name.decode(), param_dims(p)))
        return res

    def gradient(self, entry=None):
        """tc_gradient: a new Program holding '<entry>_grad'."""
        g = Program.__new__(Program)
        h = ctypes.c_void_p()
        _check(lib().tc_gradient(ctypes.byref(h), self.h, _enc(entry)), "gradient")
        g.h = h
        return g

    def source(self):
        s = ctypes.c_char_p()
        _check(lib().tc_program_source(self.h, ctypes.byref(s)), "source")
        return s.value.decode()

    def describe(self, entry=None):
        s = ctypes.c_char_p()
        _check(lib().tc_program_describe(self.h, _enc(entry), ctypes.byref(s)), "describe")
        return s.value.decode()

    def infer_outputs(self, entry, inputs):
        """[(numpy dtype, shape)] for the given inputs (arrays or Tensors)."""
        keep, arr = _tensor_array(inputs)
        n = ctypes.c_size_t(0)
        _check(lib().tc_infer_outputs(self.h, _enc(entry), arr, len(keep), None, ctypes.byref(n)),
               "infer_outputs")
        cap = n.value
        infos = _library().sized_array(_library().TensorInfo, cap)
        n = ctypes.c_size_t(cap)
        _check(lib().tc_infer_outputs(self.h, _enc(entry), arr, len(keep), infos, ctypes.byref(n)),
               "infer_outputs")
        return [_info_to_py(infos[i]) for i in range(n.value)]

    def compile(self, entry, inputs, options=None):
        keep, arr = _tensor_array(inputs)
        opts = None
        if options is not None:
            opts = options if isinstance(options, Options) else Options(options)
        h = ctypes.c_void_p()
        _check(lib().tc_compile(ctypes.byref(h), self.h, _enc(entry), arr, len(keep),
                                opts.h if opts else None), "compile")
        return Kernel(h)

    def tune(self, entry, inputs, options=None, progress=None):
        """tc_tune: the best kernel found (stored in the options' cache). progress, if given,
        is called with the tc_tune_progress struct after every measured candidate; a true
        return value stops the search. An exception in it stops the search and is raised."""
        keep, arr = _tensor_array(inputs)
        opts = None
        if options is not None:
            opts = options if isinstance(options, Options) else Options(options)
        raised = []

        def trampoline(p, user):
            try:
                return 1 if progress(p.contents) else 0
            except BaseException as e:  # noqa: B036 - re-raised once tc_tune has returned
                raised.append(e)
                return 1
        callback_type = _library().TuneCallback
        callback = callback_type(trampoline) if progress is not None else callback_type()
        h = ctypes.c_void_p()
        st = lib().tc_tune(ctypes.byref(h), self.h, _enc(entry), arr, len(keep),
                           opts.h if opts else None, callback, None)
        kernel = Kernel(h) if h else None
        if raised:
            raise raised[0]
        _check(st, "tune")
        return kernel


def profile_figures(text):
    """tc_kernel_profile's report as a list, per launch, of {"kernel": name, figure: its first
    word} (e.g. "fma": "131072", "work_balance": "1.00")."""
    launches = []
    for line in text.splitlines():
        if line.startswith("launch "):
            launches.append({"kernel": line.split()[4].rstrip(",")})
        elif line.startswith("  ") and launches:
            key, value = line.split()[:2]
            launches[-1][key] = value
    return launches


class Kernel:
    def __init__(self, h):
        self.h = h

    def __del__(self):
        if getattr(self, "h", None) and _lib is not None:
            _lib.tc_kernel_destroy(self.h)
            self.h = None

    def output_info(self):
        n = ctypes.c_size_t()
        _check(lib().tc_kernel_num_outputs(self.h, ctypes.byref(n)), "kernel_num_outputs")
        res = []
        for i in range(n.value):
            info = _library().TensorInfo()
            _check(lib().tc_kernel_output_info(self.h, i, ctypes.byref(info)), "kernel_output_info")
            res.append(_info_to_py(info))
        return res

    def output_overwritten(self):
        """tc_kernel_output_overwritten per output: True where tc_run sets every element."""
        res = []
        for i in range(len(self.output_info())):
            flag = ctypes.c_int()
            _check(lib().tc_kernel_output_overwritten(self.h, i, ctypes.byref(flag)), "kernel_output_overwritten")
            res.append(bool(flag.value))
        return res

    def describe(self):
        s = ctypes.c_char_p()
        _check(lib().tc_kernel_describe(self.h, ctypes.byref(s)), "kernel_describe")
        return s.value.decode()

    def code(self):
        """tc_kernel_code: the code the kernel runs, as text."""
        s = ctypes.c_char_p()
        _check(lib().tc_kernel_code(self.h, ctypes.byref(s)), "kernel_code")
        return s.value.decode()

    def cache_hit(self):
        """tc_kernel_cache_hit: True if the kernel's knob values came from the cache."""
        hit = ctypes.c_int()
        _check(lib().tc_kernel_cache_hit(self.h, ctypes.byref(hit)), "kernel_cache_hit")
        return bool(hit.value)

    def run(self, inputs, outputs):
        kin, ain = _tensor_array(inputs)
        kout, aout = _tensor_array(outputs)
        _check(lib().tc_run(self.h, ain, len(kin), aout, len(kout)), "run")

    def profile(self, inputs, outputs, gpu=None):
        """tc_kernel_profile: the report's text."""
        kin, ain = _tensor_array(inputs)
        kout, aout = _tensor_array(outputs)
        s = ctypes.c_char_p()
        _check(lib().tc_kernel_profile(self.h, ain, len(kin), aout, len(kout), gpu.encode() if gpu else None,
                                       ctypes.byref(s)), "kernel_profile")
        return s.value.decode()

    def bind(self, inputs, outputs):
        """A no-argument function running the kernel on these tensors, converted to DLTensors
        once: for timing, where run()'s conversion on every call would be measured too."""
        kin, ain = _tensor_array(inputs)
        kout, aout = _tensor_array(outputs)

        def run_bound():
            _check(lib().tc_run(self.h, ain, len(kin), aout, len(kout)), "run")
        return run_bound

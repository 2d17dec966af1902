"""_library.py - finds and loads libtc.so and declares the C API (include/tc/tc.h) for ctypes.

This is the only module that knows where the library lives and what the C signatures are. It
does no tensor handling (see _dlpack.py) and no error translation (see errors.py).

The e2e test harness (tests/e2e/tclib.py) declares none of the C API itself: it imports this
module, _dlpack.py and _status.py under a private package name, without running __init__.py
(which would load libtc as soon as the harness is imported). So these modules reach each other
only through relative imports and must not rely on __init__.py having run.

Search order, first hit wins:
  1. the TC_LIBRARY environment variable (a path to libtc.so);
  2. the library the installed wheel carries (tc/_lib/libtc.so.0: `pip install ./bindings/python`
     after the README's set-up);
  3. the build tree, when this package is imported from a source checkout
     (<repo>/build/src/libtc.so);
  4. the installed library, through the dynamic loader ("libtc.so.0": LD_LIBRARY_PATH,
     the ldconfig cache, the default directories);
  5. pkg-config's libdir for tc (an install in a prefix listed in PKG_CONFIG_PATH).
"""
import ctypes
import os
import shutil
import subprocess

from ._dlpack import DLDataType, DLTensor

TC_MAX_NDIM = 16
_SONAME = "libtc.so.0"


class Sized(ctypes.Structure):
    """A struct the library fills: its first field, `size`, is set to the struct's size when it
    is made (tc.h's conventions), so that a later libtc whose struct has grown writes only what
    this one holds. Elements of a ctypes array are made without __init__: sized_array sets
    theirs."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.size = ctypes.sizeof(self)


def sized_array(struct, count):
    """An array of `count` (at least 1) Sized structs, each one's size set."""
    array = (struct * max(1, count))()
    for element in array:
        element.size = ctypes.sizeof(struct)
    return array


class TensorInfo(Sized):
    """tc_tensor_info: dtype and shape of one tensor."""
    _fields_ = [("size", ctypes.c_uint32), ("dtype", DLDataType), ("ndim", ctypes.c_int32),
                ("shape", ctypes.c_int64 * TC_MAX_NDIM)]


class ParamInfo(Sized):
    """tc_param_info: a def's parameter as written (dims are strings owned by the program)."""
    _fields_ = [("size", ctypes.c_uint32), ("name", ctypes.c_char_p), ("dtype", DLDataType),
                ("ndim", ctypes.c_int32), ("dims", ctypes.c_char_p * TC_MAX_NDIM)]


class TuneProgress(ctypes.Structure):
    """tc_tune_progress: where a tc_tune search stands, passed to its callback (the library
    sets its size)."""
    _fields_ = [("size", ctypes.c_uint32), ("generation", ctypes.c_int32), ("generations", ctypes.c_int32),
                ("candidates_done", ctypes.c_int64), ("candidates_planned", ctypes.c_int64),
                ("best_ms", ctypes.c_double), ("default_ms", ctypes.c_double),
                ("elapsed_s", ctypes.c_double), ("budget_s", ctypes.c_double)]


class CacheEntry(Sized):
    """tc_cache_entry: one record of a cache listing (strings owned by the listing)."""
    _fields_ = [("size", ctypes.c_uint32), ("key_hash", ctypes.c_char_p), ("key", ctypes.c_char_p), ("def_", ctypes.c_char_p),
                ("sizes", ctypes.c_char_p), ("backend", ctypes.c_char_p), ("target", ctypes.c_char_p),
                ("knobs", ctypes.c_char_p), ("best_ms", ctypes.c_double), ("default_ms", ctypes.c_double),
                ("candidates", ctypes.c_int64), ("date", ctypes.c_char_p), ("libtc", ctypes.c_char_p),
                ("family", ctypes.c_char_p), ("artefact_bytes", ctypes.c_int64),
                ("history_count", ctypes.c_int64)]


class CacheHistoryEntry(Sized):
    """tc_cache_history_entry: one candidate of a key's tuning history."""
    _fields_ = [("size", ctypes.c_uint32), ("knobs", ctypes.c_char_p), ("outcome", ctypes.c_char_p), ("ms", ctypes.c_double),
                ("why", ctypes.c_char_p), ("date", ctypes.c_char_p)]


# tc_tune_callback: int (*)(const tc_tune_progress *progress, void *user); non-zero stops.
TuneCallback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(TuneProgress), ctypes.c_void_p)


def _candidates():
    """(description, path-or-soname) pairs in search order."""
    env = os.environ.get("TC_LIBRARY")
    if env:
        yield "TC_LIBRARY", env
        return  # an explicit choice: never fall back to another library silently
    bundled = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_lib", _SONAME)
    if os.path.exists(bundled):
        yield "the wheel's", bundled
    # <repo>/bindings/python/tc/_library.py -> <repo>/build/src/libtc.so
    bindings_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    build_lib = os.path.join(os.path.dirname(bindings_dir), "build", "src", "libtc.so")
    if os.path.basename(bindings_dir) == "bindings" and os.path.exists(build_lib):
        yield "build tree", build_lib
    yield "dynamic loader", _SONAME
    pkg_config = shutil.which("pkg-config")
    if pkg_config:
        try:
            libdir = subprocess.run([pkg_config, "--variable=libdir", "tc"], capture_output=True,
                                    text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            libdir = ""
        if libdir:
            yield "pkg-config", os.path.normpath(os.path.join(libdir, _SONAME))


def _load():
    tried = []
    for where, path in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s): %s" % (path, where, e))
    raise ImportError("tc: cannot load libtc; set TC_LIBRARY to the path of libtc.so. Tried:\n  "
                      + "\n  ".join(tried))


def _declare(lib):
    P, vp, sz = ctypes.POINTER, ctypes.c_void_p, ctypes.c_size_t
    cs, i = ctypes.c_char_p, ctypes.c_int
    signatures = {
        "tc_version_number": (i, []),
        "tc_version_string": (cs, []),
        "tc_strerror": (cs, [i]),
        "tc_last_error_message": (cs, []),
        "tc_option_info": (i, [sz, P(cs), P(cs), P(cs), P(cs)]),
        "tc_define": (i, [P(vp), cs]),
        "tc_define_named": (i, [P(vp), cs, cs]),
        "tc_program_destroy": (None, [vp]),
        "tc_program_num_defs": (i, [vp, P(sz)]),
        "tc_program_def_name": (i, [vp, sz, P(cs)]),
        "tc_program_num_params": (i, [vp, cs, P(sz), P(sz)]),
        "tc_program_input_info": (i, [vp, cs, sz, P(ParamInfo)]),
        "tc_program_output_info": (i, [vp, cs, sz, P(ParamInfo)]),
        "tc_program_describe": (i, [vp, cs, P(cs)]),
        "tc_program_source": (i, [vp, P(cs)]),
        "tc_gradient": (i, [P(vp), vp, cs]),
        "tc_infer_outputs": (i, [vp, cs, P(DLTensor), sz, P(TensorInfo), P(sz)]),
        "tc_options_create": (i, [P(vp)]),
        "tc_options_set": (i, [vp, cs, cs]),
        "tc_options_get": (i, [vp, cs, P(cs)]),
        "tc_options_destroy": (None, [vp]),
        "tc_compile": (i, [P(vp), vp, cs, P(DLTensor), sz, vp]),
        "tc_tune": (i, [P(vp), vp, cs, P(DLTensor), sz, vp, TuneCallback, vp]),
        "tc_cache_export": (i, [cs, cs]),
        "tc_cache_import": (i, [cs, cs]),
        "tc_cache_list": (i, [P(vp), cs]),
        "tc_cache_list_remote": (i, [P(vp), vp]),
        "tc_cache_push": (i, [cs, vp, P(sz)]),
        "tc_cache_pull": (i, [cs, vp, P(sz)]),
        "tc_cache_listing_destroy": (None, [vp]),
        "tc_cache_listing_count": (i, [vp, P(sz)]),
        "tc_cache_listing_entry": (i, [vp, sz, P(CacheEntry)]),
        "tc_cache_listing_history": (i, [vp, sz, sz, P(CacheHistoryEntry)]),
        "tc_cache_listing_history_total": (i, [vp, P(sz)]),
        "tc_cache_listing_damage_count": (i, [vp, P(sz)]),
        "tc_cache_listing_damage": (i, [vp, sz, P(cs), P(cs)]),
        "tc_cache_clear": (i, [cs]),
        "tc_kernel_num_outputs": (i, [vp, P(sz)]),
        "tc_kernel_output_info": (i, [vp, sz, P(TensorInfo)]),
        "tc_kernel_output_overwritten": (i, [vp, sz, P(ctypes.c_int)]),
        "tc_kernel_describe": (i, [vp, P(cs)]),
        "tc_kernel_code": (i, [vp, P(cs)]),
        "tc_kernel_cache_hit": (i, [vp, P(i)]),
        "tc_kernel_profile": (i, [vp, P(DLTensor), sz, P(DLTensor), sz, cs, P(cs)]),
        "tc_run": (i, [vp, P(DLTensor), sz, P(DLTensor), sz]),
        "tc_run_async": (i, [vp, P(DLTensor), sz, P(DLTensor), sz, vp]),
        "tc_kernel_destroy": (None, [vp]),
    }
    for name, (restype, argtypes) in signatures.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = restype, argtypes
    return lib


lib, path = _load()
_declare(lib)

"""_api.py - programs, kernels and options: the Python face of tc_define, the tc_program_*
queries, tc_gradient, tc_infer_outputs, tc_option_info, tc_options_*, tc_compile, tc_tune,
tc_run and the compilation cache (tc_kernel_cache_hit, tc_cache_export, tc_cache_import,
tc_cache_list, tc_cache_clear).

Everything is decided by libtc (parsing, types, shapes, strides, option values); this module
only moves arguments across: tensors through DLPack (_dlpack.py), statuses into exceptions
(errors.py).

Ownership: each Program, Kernel and Options owns one C handle and destroys it when it is
garbage-collected or closed (close(), or a `with` block). A Kernel does not need its Program.
Thread safety is tc.h's: Programs and Kernels may be used by any number of threads at once
(ctypes releases the GIL during each C call, so kernels run in parallel); do not change an
Options while another thread compiles with it.
"""
import collections
import contextlib
import ctypes
import math
import os
import re
import sys
import types

from . import _dlpack
from . import _library
from ._library import lib
from .errors import check

TensorInfo = collections.namedtuple("TensorInfo", "dtype shape")  # ("float32", (2, 3))
TensorInfo.__doc__ = "dtype name and shape of a tensor (tc_tensor_info)"
Param = collections.namedtuple("Param", "name dtype dims")  # ("A", "float32", ("M", "K"))
Param.__doc__ = ("a def's parameter as written (tc_param_info); dims are size names, literals "
                 "or, for outputs, the inferred extent in size names")
OptionInfo = collections.namedtuple("OptionInfo", "key values default help")
OptionInfo.__doc__ = ("an option key of the loaded libtc (tc_option_info): its key, its allowed "
                      "values as text (\"cpu|reference\", \"auto|1..64\"), its default and one "
                      "line of help")

TuneProgress = collections.namedtuple(
    "TuneProgress", "generation generations candidates_done candidates_planned best_ms "
                    "default_ms elapsed_s budget_s")
TuneProgress.__doc__ = ("where a Program.tune search stands (tc_tune_progress), given to its "
                        "progress callable after every measured candidate: the 1-based current "
                        "generation and the planned number, candidates measured and planned, "
                        "median time in ms of the best so far and of the default (the options' "
                        "own knob values), seconds elapsed and the budget in seconds")

CacheRecord = collections.namedtuple(
    "CacheRecord", "key_hash key def_ sizes backend target knobs best_ms default_ms candidates date "
                   "libtc family artefact_bytes history")
CacheRecord.__doc__ = ("one record of a compilation cache (tc_cache_entry): def_ is the def's "
                       "name, sizes \"M=64 K=32 N=48\", knobs the tuned values as options take "
                       "them, best_ms and default_ms the median times, history the key's tuning "
                       "history as CacheTrial tuples (timed fastest first, then failures)")
CacheTrial = collections.namedtuple("CacheTrial", "knobs outcome ms why date")
CacheTrial.__doc__ = ("one candidate of a tuning history (tc_cache_history_entry): outcome is "
                      "\"measured\", \"cut-off\", \"compile-failed\", \"run-failed\" or "
                      "\"wrong-result\"; ms the median (cut-off: its one run; failures: 0)")
CacheDamage = collections.namedtuple("CacheDamage", "id why")
CacheDamage.__doc__ = "a damaged cache entry: \"record <hash>\" or \"history <hash>:<hash>\", and why"

__all__ = ["define", "infer_outputs", "gradient", "autograd", "custom_op", "option_info", "cache_export",
           "cache_import", "cache_push", "cache_pull", "cache_list", "cache_verify", "cache_clear", "Program",
           "Kernel", "Entry",
           "Options", "TensorInfo", "Param", "OptionInfo", "TuneProgress", "CacheRecord",
           "CacheTrial", "CacheDamage", "Tensor"]

Tensor = _dlpack.Tensor


def _enc(text):
    """A str (or bytes) as a C string; C strings end at NUL, so one inside is an error."""
    if text is None:
        return None
    if not isinstance(text, (str, bytes)):
        raise TypeError("expected a str, got %s" % type(text).__name__)
    raw = text if isinstance(text, bytes) else text.encode("utf-8")
    if b"\0" in raw:
        raise ValueError("%r contains a NUL character, which a C string cannot hold"
                         % (text[:40] + "..." if len(text) > 40 else text))
    return raw


def _dec(raw):
    return raw.decode("utf-8", "replace")


class _Handle:
    """Owns one C handle and destroys it exactly once."""

    # The tc_*_destroy function, held by the class so that it is still there when objects are
    # collected at interpreter exit, after module globals are cleared.
    _destroy = None

    def __init__(self, handle):
        self._handle = handle

    def close(self):
        """Frees the C object now; later calls on this object fail with TcInvalidArgumentError."""
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            self._destroy(handle)

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _option_text(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def option_info():
    """[OptionInfo] of every option key the loaded libtc knows (tc_option_info), in its order:
    the general keys (backend, checked, threads) first, then each backend's knobs ("cpu.tile",
    ...). Any key may be passed to Options, Program.compile or Options.set with any of its
    allowed values; keys with a dot go through a dict: prog.compile("mm", A, B,
    **{"cpu.tile": "8x2"}).

        tc.option_info()[0]   # OptionInfo(key='backend', values='cpu|reference', default='cpu',
                              #            help='which backend compiles the kernel (...)')
    """
    infos = []
    while True:
        key, values, default, help_ = (ctypes.c_char_p() for _ in range(4))
        # Past the last option libtc answers TC_ERROR_INVALID_ARGUMENT: the end of the list.
        if lib.tc_option_info(len(infos), ctypes.byref(key), ctypes.byref(values),
                              ctypes.byref(default), ctypes.byref(help_)) != 0:
            return infos
        infos.append(OptionInfo(_dec(key.value), _dec(values.value), _dec(default.value),
                                _dec(help_.value)))


class Options(_Handle):
    """tc_options: compile options as key=value strings (True/False become "1"/"0"). libtc
    checks every key and value in set(): unknown ones raise TcInvalidArgumentError.
    tc.option_info() lists the keys, their allowed values and defaults."""

    _destroy = staticmethod(lib.tc_options_destroy)

    def __init__(self, **options):
        handle = ctypes.c_void_p()
        check(lib.tc_options_create(ctypes.byref(handle)))
        _Handle.__init__(self, handle)
        for key, value in options.items():
            self.set(key, value)

    def set(self, key, value):
        check(lib.tc_options_set(self._handle, _enc(key), _enc(_option_text(value))))

    def get(self, key):
        """The value of key: what was set, else libtc's default."""
        value = ctypes.c_char_p()
        check(lib.tc_options_get(self._handle, _enc(key), ctypes.byref(value)))
        return _dec(value.value)


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


class Kernel(_Handle):
    """One def compiled for one input signature (tc_kernel). Call it with the inputs:
    `k(A, B)` returns the output (a tuple if the def has several), allocated zero-filled as the
    same kind of array as the first input; `k(A, B, out=(C,))` writes into caller tensors and
    returns them (reductions without '!' accumulate into their contents)."""

    _destroy = staticmethod(lib.tc_kernel_destroy)

    def __init__(self, handle, entry):
        _Handle.__init__(self, handle)
        self.entry = entry
        count = ctypes.c_size_t()
        check(lib.tc_kernel_num_outputs(self._handle, ctypes.byref(count)))
        infos = []
        for i in range(count.value):
            info = _library.TensorInfo()
            check(lib.tc_kernel_output_info(self._handle, i, ctypes.byref(info)))
            infos.append(_tensor_info(info))
        self.outputs = tuple(infos)  # what tc_run expects: TensorInfo per output

    @property
    def cache_hit(self):
        """True if the kernel's knob values came from the compilation cache
        (tc_kernel_cache_hit); describe() says from where, or why the cache was not used."""
        hit = ctypes.c_int()
        check(lib.tc_kernel_cache_hit(self._handle, ctypes.byref(hit)))
        return bool(hit.value)

    @property
    def cache_tier(self):
        """Which cache tier served the kernel's knob values: "local", "remote" (option
        cache.remote; the record is now in the local cache too) or None (tc_kernel_cache_hit)."""
        hit = ctypes.c_int()
        check(lib.tc_kernel_cache_hit(self._handle, ctypes.byref(hit)))
        return {0: None, 1: "local", 2: "remote"}[hit.value]

    def describe(self):
        """libtc's description of the kernel (tc_kernel_describe): its options, where its knob
        values came from (cache hit, miss, or why the cache was not used) and its schedule."""
        text = ctypes.c_char_p()
        check(lib.tc_kernel_describe(self._handle, ctypes.byref(text)))
        return _dec(text.value)

    _LAUNCH = re.compile(r"^  (\w+) grid (\d+)x(\d+)x(\d+) block (\d+)x(\d+)x(\d+)$")
    _RESOURCES = re.compile(r"^    (\d+) registers, (\d+) bytes spilled, (\d+) bytes stack, (\d+) bytes shared, "
                            r"occupancy (\d+)% \((\d+) of (\d+) warps a SM, (\d+) blocks; limit: ([\w ]+)\)$")

    def resources(self):
        """A backend=cuda kernel's launches as dicts, from describe(): "kernel", "grid" and
        "block" (3-tuples), and for a cubin (cuda.arch=sm_NN compiles one with no GPU) what ptxas
        reports and the theoretical occupancy: "registers", "spilled_bytes", "stack_bytes",
        "shared_bytes", "occupancy" (0 to 1), "warps_per_sm", "max_warps_per_sm",
        "blocks_per_sm", "limit" ("registers", "shared memory", "threads" or "blocks"). An
        emulated kernel's launches have no resource keys; other backends have no launches: []."""
        launches = []
        for line in self.describe().splitlines():
            m = self._LAUNCH.match(line)
            if m:
                g = [int(x) for x in m.groups()[1:]]
                launches.append({"kernel": m.group(1), "grid": tuple(g[:3]), "block": tuple(g[3:])})
                continue
            m = self._RESOURCES.match(line)
            if m and launches:
                n = [int(x) for x in m.groups()[:8]]
                launches[-1].update(registers=n[0], spilled_bytes=n[1], stack_bytes=n[2], shared_bytes=n[3],
                                    occupancy=n[4] / 100.0, warps_per_sm=n[5], max_warps_per_sm=n[6],
                                    blocks_per_sm=n[7], limit=m.group(9))
        return launches

    def code(self):
        """The code the kernel runs, as text (tc_kernel_code): for backend=cpu the Halide loop
        nest. TcUnsupportedError for backend=reference (an interpreter: no code)."""
        text = ctypes.c_char_p()
        check(lib.tc_kernel_code(self._handle, ctypes.byref(text)))
        return _dec(text.value)

    def __call__(self, *inputs, out=None):
        with contextlib.ExitStack() as stack:
            gpu = _gpu_library(inputs[0]) if inputs else None
            return self._run(stack, _borrow_all(stack, inputs, "input", False), inputs, out, gpu)

    _PROFILE_LAUNCH = re.compile(r"^launch \d+ of \d+: (\w+), grid (\S+), block (\S+)$")

    def profile(self, *inputs, gpu="h100"):
        """A GPU profile made without a GPU (tc_kernel_profile), for a backend=cuda kernel
        compiled with cuda.emulate=1, run on these host inputs (outputs allocated here): a dict
        with "launches" (per launch a dict: "kernel", "grid", "block" and each figure's number,
        e.g. "fma", "work_balance", "sectors_per_request", "bank_conflict_ways",
        "estimated_us"), "estimated_us" (their sum, an estimate for `gpu`: "h100", "h200",
        "a100"; not a measurement) and "text" (libtc's report). TcUnsupportedError for other
        kernels."""
        with contextlib.ExitStack() as stack:
            input_array = _borrow_all(stack, inputs, "input", False)
            results = [Tensor(info.dtype, info.shape) for info in self.outputs]
            output_array = _borrow_all(stack, results, "output", True)
            text = ctypes.c_char_p()
            check(lib.tc_kernel_profile(self._handle, input_array, len(inputs), output_array, len(results),
                                        _enc(gpu), ctypes.byref(text)))
            report = _dec(text.value)
        out = {"launches": [], "text": report}
        for line in report.splitlines():
            m = self._PROFILE_LAUNCH.match(line)
            if m:
                out["launches"].append({"kernel": m.group(1), "grid": m.group(2), "block": m.group(3)})
            elif line.startswith("  ") and out["launches"]:
                key, value = line.split()[:2]
                try:
                    out["launches"][-1][key] = float(value.rstrip("%"))
                except ValueError:  # occupancy "unknown"
                    out["launches"][-1][key] = value
            elif line.startswith("estimated_us "):
                out["estimated_us"] = float(line.split()[1])
        return out

    def _run(self, stack, input_array, inputs, out, gpu=None):
        """gpu: what _gpu_library gave for the first input (None: host tensors)."""
        if out is None:
            if gpu is not None:  # outputs on the inputs' device, by their library
                results = [gpu.zeros(info, inputs[0]) for info in self.outputs]
            else:
                results = [Tensor(info.dtype, info.shape) for info in self.outputs]
        else:
            results = list(out) if isinstance(out, (tuple, list)) else [out]
        output_array = _borrow_all(stack, results, "output", True)
        if gpu is not None:  # queued on the library's current stream of that device
            check(lib.tc_run_async(self._handle, input_array, len(inputs), output_array, len(results),
                                   ctypes.c_void_p(gpu.stream(inputs[0]))))
        else:
            check(lib.tc_run(self._handle, input_array, len(inputs), output_array, len(results)))
        if out is None and gpu is None:
            results = [_same_kind(inputs[0] if inputs else None, r) for r in results]
        return results[0] if len(results) == 1 else tuple(results)

    def __repr__(self):
        return "tc.Kernel(entry=%r, outputs=%r)" % (self.entry, self.outputs)


class Entry:
    """prog.NAME or prog["NAME"]: calls def NAME, compiling it with default options the first
    time it sees an input signature (dtypes and shapes) and reusing that kernel after."""

    def __init__(self, program, name):
        self.program, self.name = program, name

    def __call__(self, *inputs, out=None):
        kernels = self.program._kernels
        with contextlib.ExitStack() as stack:
            array = _borrow_all(stack, inputs, "input", False)
            key = (self.name, _signature(array, len(inputs)))
            kernel = kernels.get(key)
            if kernel is None:
                # Two threads may both compile; setdefault keeps one (kernels are immutable).
                kernel = kernels.setdefault(key, self.program._compile(self.name, array,
                                                                       len(inputs), None))
            return kernel._run(stack, array, inputs, out, _gpu_library(inputs[0]) if inputs else None)

    def __repr__(self):
        return "tc.Entry(%r)" % self.name


class Program(_Handle):
    """Parsed and checked TC source: one or more defs (tc_program), immutable."""

    _destroy = staticmethod(lib.tc_program_destroy)

    def __init__(self, handle):
        _Handle.__init__(self, handle)
        self._kernels = {}  # (entry, input signature) -> Kernel, for Entry

    @property
    def defs(self):
        """The def names, in source order."""
        count = ctypes.c_size_t()
        check(lib.tc_program_num_defs(self._handle, ctypes.byref(count)))
        names = []
        for i in range(count.value):
            name = ctypes.c_char_p()
            check(lib.tc_program_def_name(self._handle, i, ctypes.byref(name)))
            names.append(_dec(name.value))
        return tuple(names)

    @property
    def kernels(self):
        """The kernels prog.NAME(...) calls compiled and reuse, keyed by (def name, input
        signature: (dtype code, bits, lanes, shape) per input); read-only."""
        return types.MappingProxyType(self._kernels)

    def _params(self, entry, outputs):
        num_inputs, num_outputs = ctypes.c_size_t(), ctypes.c_size_t()
        check(lib.tc_program_num_params(self._handle, _enc(entry), ctypes.byref(num_inputs),
                                        ctypes.byref(num_outputs)))
        query = lib.tc_program_output_info if outputs else lib.tc_program_input_info
        params = []
        for i in range((num_outputs if outputs else num_inputs).value):
            p = _library.ParamInfo()
            check(query(self._handle, _enc(entry), i, ctypes.byref(p)))
            # ndim -1: a type with '...' (rank-polymorphic); its dims end at the first NULL
            ndim = p.ndim if p.ndim >= 0 else next(
                (d for d in range(len(p.dims)) if not p.dims[d]), len(p.dims))
            params.append(Param(_dec(p.name), _dlpack.dtype_name(p.dtype),
                                tuple(_dec(p.dims[d]) for d in range(ndim))))
        return params

    def inputs(self, entry=None):
        """[Param] of def `entry`'s inputs (entry None: the only def)."""
        return self._params(entry, outputs=False)

    def outputs(self, entry=None):
        """[Param] of def `entry`'s outputs, dtypes and extents inferred."""
        return self._params(entry, outputs=True)

    @property
    def source(self):
        """The program's TC source (tc_program_source): the text given to tc.define."""
        text = ctypes.c_char_p()
        check(lib.tc_program_source(self._handle, ctypes.byref(text)))
        return _dec(text.value)

    def gradient(self, entry=None):
        """A new Program holding one def, "<entry>_grad": reverse-mode differentiation of def
        `entry` (entry None: the only def) by libtc (tc_gradient). Its inputs are entry's
        inputs followed by "d_<output>" for each floating-point output (that output's dtype
        and shape); its outputs are "d_<input>" for each floating-point input, in input order.
        Integer inputs and outputs carry no gradient. `.source` gives the generated TC.
        Raises TcUnsupportedError, naming the statement and the reason, where libtc cannot
        express a gradient (a '*=' reduction, no floating-point input or output, ...).
        tc.autograd wraps this for PyTorch's autograd."""
        handle = ctypes.c_void_p()
        check(lib.tc_gradient(ctypes.byref(handle), self._handle, _enc(entry)))
        return Program(handle)

    def describe(self, entry=None):
        """libtc's description of the inferred extents and index ranges of def `entry`."""
        text = ctypes.c_char_p()
        check(lib.tc_program_describe(self._handle, _enc(entry), ctypes.byref(text)))
        return _dec(text.value)

    def infer_outputs(self, entry, *inputs):
        """[TensorInfo] of def `entry`'s outputs for these inputs: tensors (only their dtypes
        and shapes are read) or TensorInfo(dtype, shape) (a signature without data: what
        tc.custom_op's meta kernel has of meta tensors)."""
        with contextlib.ExitStack() as stack:
            tensors = [x for x in inputs if not isinstance(x, TensorInfo)]
            borrowed = iter(_borrow_all(stack, tensors, "input", False)[:len(tensors)])
            array = (_dlpack.DLTensor * max(1, len(inputs)))()
            shapes = []  # kept alive until the calls below
            for i, x in enumerate(inputs):
                if isinstance(x, TensorInfo):
                    if x.dtype not in _dlpack.DTYPES:
                        raise ValueError("input %d: dtype %r is not one TC has (%s)" % (i, x.dtype, ", ".join(_dlpack.DTYPES)))
                    shapes.append((ctypes.c_int64 * max(1, len(x.shape)))(*x.shape))
                    code, bits = _dlpack.DTYPES[x.dtype]
                    array[i] = _dlpack.DLTensor(None, _dlpack.DLDevice(_dlpack.kDLCPU, 0), len(x.shape),
                                                _dlpack.DLDataType(code, bits, 1), shapes[-1], None, 0)
                else:
                    array[i] = next(borrowed)
            count = ctypes.c_size_t(0)
            check(lib.tc_infer_outputs(self._handle, _enc(entry), array, len(inputs), None,
                                       ctypes.byref(count)))
            infos = _library.sized_array(_library.TensorInfo, count.value)
            check(lib.tc_infer_outputs(self._handle, _enc(entry), array, len(inputs), infos,
                                       ctypes.byref(count)))
            return [_tensor_info(infos[i]) for i in range(count.value)]

    def compile(self, entry, *inputs, **options):
        """Kernel for def `entry` specialised to the inputs' dtypes and shapes; keyword
        arguments are tc options (backend="reference", checked=False, ...)."""
        with contextlib.ExitStack() as stack:
            array = _borrow_all(stack, inputs, "input", False)
            opts = stack.enter_context(Options(**options)) if options else None
            return self._compile(entry, array, len(inputs), opts)

    def tune(self, entry, *inputs, budget=60, progress=True, **options):
        """Searches the backend's knobs for the fastest kernel of def `entry` on these inputs
        (tc_tune), stores the best in the compilation cache and returns it as a Kernel; a later
        compile() with the same def, shapes and cache finds it (kernel.cache_hit).

        The inputs' data is used to measure and check candidates (only read). Keyword arguments
        are tc options as for compile(): the knobs set are the search's starting point (the
        "default"), cache="auto"|"off"|DIR names the cache, and tune.strategy,
        tune.population, tune.generations, tune.patience and tune.threads shape the search
        (keys with a dot go through a dict: **{"tune.population": 8}); tune.isolation="process" measures candidates
        in a child process where a crash or a hang (tune.timeout seconds) fails only that
        candidate (the default for GPU tensors). budget: seconds for the search (option
        tune.budget, 0 to 86400 with up to 3 decimals); the starting point is measured and
        stored first, whatever the budget (0: that alone), and the best so far is kept when
        it runs out.

        progress: True prints the search's progress on stderr (one line rewritten in place on a
        terminal, else a line per generation); False prints nothing; a callable is called with
        a TuneProgress after every measured candidate and stops the search (keeping the best so
        far) by returning something true. An exception it raises stops the search and is
        raised again here once tc_tune has returned. Candidates are timed one at a time: keep
        the machine otherwise idle. Raises TcCacheError if the cache cannot be written."""
        if "tune.budget" in options:
            raise TypeError("Program.tune: give the budget as budget=, not as tune.budget")
        if budget is not None:
            if isinstance(budget, float) and budget.is_integer():
                budget = int(budget)
            options["tune.budget"] = budget
        if progress is True:
            reporter = _ProgressLine(entry, sys.stderr)
            report = reporter.update
        elif progress is False or progress is None:
            reporter, report = None, None
        elif callable(progress):
            reporter, report = None, progress
        else:
            raise TypeError("Program.tune: progress must be True, False or a callable, not %s"
                            % type(progress).__name__)
        raised = []

        def trampoline(p, user):
            # Runs inside tc_tune: nothing may propagate into C, so exceptions (KeyboardInterrupt
            # included) stop the search and are raised after tc_tune returns.
            try:
                c = p.contents
                stop = report(TuneProgress(c.generation, c.generations, c.candidates_done,
                                           c.candidates_planned, c.best_ms, c.default_ms,
                                           c.elapsed_s, c.budget_s))
                return 1 if stop else 0
            except BaseException as e:  # noqa: B036 - re-raised below
                raised.append(e)
                return 1

        callback = _library.TuneCallback(trampoline) if report is not None \
            else _library.TuneCallback()
        with contextlib.ExitStack() as stack:
            array = _borrow_all(stack, inputs, "input", False)
            opts = stack.enter_context(Options(**options))
            handle = ctypes.c_void_p()
            try:
                status = lib.tc_tune(ctypes.byref(handle), self._handle, _enc(entry), array,
                                     len(inputs), opts._handle, callback, None)
            finally:
                if reporter is not None:
                    reporter.finish()
            if raised:
                if handle:
                    lib.tc_kernel_destroy(handle)
                raise raised[0]
            check(status)
            return Kernel(handle, entry)

    def _compile(self, entry, array, count, options):
        handle = ctypes.c_void_p()
        check(lib.tc_compile(ctypes.byref(handle), self._handle, _enc(entry), array, count,
                             options._handle if options is not None else None))
        return Kernel(handle, entry)

    def __getitem__(self, entry):
        if entry not in self.defs:
            raise KeyError("no def %r in this program (defs: %s)" % (entry, ", ".join(self.defs)))
        return Entry(self, entry)

    def __getattr__(self, name):
        # Only reached for names that are not attributes; "_" names are never defs here.
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self.defs:
            return Entry(self, name)
        raise AttributeError("tc.Program has no attribute or def %r (defs: %s)"
                             % (name, ", ".join(self.defs)))

    def __repr__(self):
        return "tc.Program(defs=%r)" % (self.defs,) if self._handle else "tc.Program(closed)"


def _ms(value):
    return "%.3g ms" % value if math.isfinite(value) and value > 0 else "-"


class _ProgressLine:
    """Program.tune(progress=True): the search's progress on a stream (stderr). On a terminal
    one line rewritten with "\\r" after every candidate; otherwise one line per generation (the
    last state of each) and the final state."""

    def __init__(self, entry, stream):
        self.entry, self.stream = entry, stream
        try:
            self.tty = stream.isatty()
        except (AttributeError, ValueError):
            self.tty = False
        self.last, self.printed, self.width = None, None, 0

    def _text(self, p):
        speedup = ""
        if math.isfinite(p.best_ms) and math.isfinite(p.default_ms) and p.best_ms > 0 \
                and p.default_ms > 0:
            speedup = " (%.2fx)" % (p.default_ms / p.best_ms)
        return ("tc.tune %s: generation %d/%d, candidates %d/%d, best %s%s, default %s, "
                "%.1f/%.0f s" % (self.entry, p.generation, p.generations, p.candidates_done,
                                 p.candidates_planned, _ms(p.best_ms), speedup,
                                 _ms(p.default_ms), p.elapsed_s, p.budget_s))

    def _write(self, text):
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass  # a closed or broken stderr must not stop the search

    def update(self, p):
        if self.tty:
            text = self._text(p)
            self._write("\r" + text + " " * max(0, self.width - len(text)))
            self.width = len(text)
        elif self.last is not None and p.generation != self.last.generation:
            self._write(self._text(self.last) + "\n")
            self.printed = self.last
        self.last = p
        return False

    def finish(self):
        if self.tty:
            if self.width:
                self._write("\n")
        elif self.last is not None and self.last is not self.printed:
            self._write(self._text(self.last) + "\n")


def _dir(cache_dir):
    if cache_dir is None:
        return None
    return _enc(os.fspath(cache_dir))


def cache_export(file, cache_dir=None):
    """Writes every record of a compilation cache (cache_dir None: the default that option
    cache="auto" uses) into one portable file, whole or not at all (tc_cache_export). Paths may
    be str or os.PathLike. Raises TcCacheError naming the path and the problem."""
    check(lib.tc_cache_export(_dir(cache_dir), _enc(os.fspath(file))))


def cache_import(file, cache_dir=None):
    """Merges a file written by cache_export into a compilation cache (cache_dir None: the
    default; created 0700 if missing), keeping the faster entry per key (tc_cache_import).
    Records tuned for another target are kept but not used here. Raises TcCacheError for a
    file that is not such an export, naming the path and the problem."""
    check(lib.tc_cache_import(_dir(cache_dir), _enc(os.fspath(file))))


def _remote_options(remote, remote_key, options):
    """Options naming the remote tier: cache.remote=remote, cache.remote_key=remote_key."""
    opts = dict(options)
    opts["cache.remote"] = remote
    if remote_key is not None:
        opts["cache.remote_key"] = os.fspath(remote_key)
    return Options(**opts)


def cache_push(remote, remote_key, cache_dir=None, **options):
    """Copies every record and tuning history entry of a local compilation cache (cache_dir
    None: the default) to the remote tier at `remote` ("redis://HOST:PORT[/DB]" or
    "unix:///PATH"), signing each with the secret in the file `remote_key` (tc_cache_push); the
    remote keeps the faster record per key. Returns the number of records it stored. Further
    options, e.g. **{"cache.remote_timeout": 1000}. Raises TcCacheError naming the server, the
    key file or the cache."""
    count = ctypes.c_size_t()
    with _remote_options(remote, remote_key, options) as opts:
        check(lib.tc_cache_push(_dir(cache_dir), opts._handle, ctypes.byref(count)))
    return count.value


def cache_pull(remote, remote_key, cache_dir=None, **options):
    """The other way: the remote tier's records whose signature verifies, and their history,
    into a local cache (created 0700 if missing), keeping the faster per key (tc_cache_pull).
    Returns the number of records stored locally."""
    count = ctypes.c_size_t()
    with _remote_options(remote, remote_key, options) as opts:
        check(lib.tc_cache_pull(_dir(cache_dir), opts._handle, ctypes.byref(count)))
    return count.value


@contextlib.contextmanager
def _listing(cache_dir, remote=None, remote_key=None):
    """A tc_cache_listing of the cache (or of the remote tier), destroyed on leaving the block."""
    handle = ctypes.c_void_p()
    if remote is None:
        check(lib.tc_cache_list(ctypes.byref(handle), _dir(cache_dir)))
    else:
        with _remote_options(remote, remote_key, {}) as opts:
            check(lib.tc_cache_list_remote(ctypes.byref(handle), opts._handle))
    try:
        yield handle
    finally:
        lib.tc_cache_listing_destroy(handle)


def _text(raw):
    return raw.decode("utf-8", "replace")


def cache_list(cache_dir=None, remote=None, remote_key=None):
    """Every sound record of a compilation cache (cache_dir None: the default) with its tuning
    history, as CacheRecord tuples in key-hash order (tc_cache_list). Raises TcCacheError for a
    directory without a cache ("no cache at ..."); damaged entries are left out (cache_verify
    names them). With remote (and remote_key, as for cache_push): the remote tier's records
    whose signature verifies (tc_cache_list_remote)."""
    records = []
    with _listing(cache_dir, remote, remote_key) as h:
        count = ctypes.c_size_t()
        check(lib.tc_cache_listing_count(h, ctypes.byref(count)))
        for i in range(count.value):
            e = _library.CacheEntry()
            check(lib.tc_cache_listing_entry(h, i, ctypes.byref(e)))
            history = []
            for j in range(e.history_count):
                t = _library.CacheHistoryEntry()
                check(lib.tc_cache_listing_history(h, i, j, ctypes.byref(t)))
                history.append(CacheTrial(_text(t.knobs), _text(t.outcome), t.ms, _text(t.why), _text(t.date)))
            records.append(CacheRecord(_text(e.key_hash), _text(e.key), _text(e.def_), _text(e.sizes),
                                       _text(e.backend), _text(e.target), _text(e.knobs), e.best_ms,
                                       e.default_ms, e.candidates, _text(e.date), _text(e.libtc),
                                       _text(e.family), e.artefact_bytes, tuple(history)))
    return records


def cache_verify(cache_dir=None, remote=None, remote_key=None):
    """Checks every record and history entry of a compilation cache (checksum, encoding,
    schema, stored under its own key) and returns the damaged ones as CacheDamage tuples; an
    empty list means the cache is sound. Raises TcCacheError for a directory without a cache.
    With remote (and remote_key): the remote tier's, whose records must also carry a valid
    signature ("signature does not verify ..." for one signed with another key or changed)."""
    with _listing(cache_dir, remote, remote_key) as h:
        count = ctypes.c_size_t()
        check(lib.tc_cache_listing_damage_count(h, ctypes.byref(count)))
        damage = []
        for i in range(count.value):
            ident, why = ctypes.c_char_p(), ctypes.c_char_p()
            check(lib.tc_cache_listing_damage(h, i, ctypes.byref(ident), ctypes.byref(why)))
            damage.append(CacheDamage(_text(ident.value), _text(why.value)))
    return damage


def cache_clear(cache_dir=None):
    """Removes every record and history entry of a compilation cache in one transaction; the
    files stay (tc_cache_clear). Raises TcCacheError for a directory without a cache."""
    check(lib.tc_cache_clear(_dir(cache_dir)))


def define(source, name=None):
    """Parses and checks TC source (tc_define; with `name`, tc_define_named: diagnostics start
    with it, e.g. "mm.tc:2:14: error: ..."). Raises TcSyntaxError, TcSemanticError, ..."""
    handle = ctypes.c_void_p()
    if name is None:
        check(lib.tc_define(ctypes.byref(handle), _enc(source)))
    else:
        check(lib.tc_define_named(ctypes.byref(handle), _enc(source), _enc(name)))
    return Program(handle)


def infer_outputs(program, entry, *inputs):
    """[TensorInfo] of def `entry`'s outputs for these inputs; see Program.infer_outputs."""
    return program.infer_outputs(entry, *inputs)


def gradient(program, entry=None):
    """The gradient Program of def `entry` (tc_gradient); see Program.gradient."""
    return program.gradient(entry)


def custom_op(program, entry, qualname, **options):
    """Def `entry` (None: the only def) registered as the PyTorch operator `qualname`
    ("namespace::name") and returned as torch.ops.namespace.name: CPU and CUDA kernels (each
    compiled once per input signature with `options`; on CUDA with backend=cuda), a Meta/fake
    kernel from tc_infer_outputs, and autograd from tc_gradient where libtc can differentiate
    the def. Through torch.library.custom_op with PyTorch >= 2.4 (torch.compile traces it),
    torch.library.Library before (eager and torch.jit.script). Raises ValueError for a bad
    name, TcInvalidArgumentError for a bad option, ImportError without PyTorch. See
    _torch_op.py."""
    try:
        from . import _torch_op  # imports torch: only here, never at `import tc`
    except ModuleNotFoundError as e:
        if e.name != "torch":
            raise
        raise ImportError("tc.custom_op needs PyTorch, which cannot be imported here: %s" % e) from e
    return _torch_op.custom_op(program, entry, qualname, **options)


def autograd(program, entry=None, **options):
    """Def `entry` (None: the only def) as a callable on PyTorch tensors that records for
    torch.autograd: forward runs `entry`, backward libtc's "<entry>_grad" (Program.gradient,
    generated here, once), each compiled once per input signature with `options` (as for
    Program.compile). Gradients flow to floating-point inputs; integer outputs are not
    differentiable. Raises TcUnsupportedError now if libtc cannot differentiate the def, and
    ImportError if PyTorch cannot be imported. See _autograd.py."""
    try:
        from . import _autograd  # imports torch: only here, never at `import tc`
    except ModuleNotFoundError as e:
        if e.name != "torch":
            raise
        raise ImportError("tc.autograd needs PyTorch, which cannot be imported here: %s" % e) from e
    return _autograd.Autograd(program, entry, **options)

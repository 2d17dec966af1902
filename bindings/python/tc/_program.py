"""_program.py - programs: tc_define, the tc_program_* queries, tc_gradient,
tc_infer_outputs, tc_compile and tc_tune (Program, and prog.NAME's Entry), and the functions
that go with them (define, infer_outputs, gradient, custom_op, autograd).

Everything is decided by libtc (parsing, types, shapes, strides, option values); this module
only moves arguments across: tensors through DLPack (_dlpack.py, _tensors.py), statuses into
exceptions (errors.py).

Ownership: each Program, Kernel and Options owns one C handle and destroys it when it is
garbage-collected or closed (close(), or a `with` block). A Kernel does not need its Program.
Thread safety is tc.h's: Programs and Kernels may be used by any number of threads at once
(ctypes releases the GIL during each C call, so kernels run in parallel); do not change an
Options while another thread compiles with it.
"""
import collections
import contextlib
import ctypes
import sys
import types

from . import _dlpack
from . import _library
from ._handle import _Handle, _dec, _enc
from ._kernel import Kernel
from ._library import lib
from ._options import Options
from ._progress import TuneProgress, _ProgressLine
from ._tensors import TensorInfo, _borrow_all, _gpu_library, _signature, _tensor_info
from .errors import check

Param = collections.namedtuple("Param", "name dtype dims")  # ("A", "float32", ("M", "K"))
Param.__doc__ = ("a def's parameter as written (tc_param_info); dims are size names, literals "
                 "or, for outputs, the inferred extent in size names")


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
        candidate (the default for GPU tensors, and for host tensors whose kernel takes a
        second or more a call, where a candidate far slower than the best is killed early). budget: seconds for the search (option
        tune.budget, 0 to 86400 with up to 3 decimals); the starting point is measured and
        stored first, whatever the budget (0: that alone), and the best so far is kept when
        it runs out.

        progress: True prints the search's progress on stderr (one line rewritten in place on a
        terminal, else a line per generation); False prints nothing; a callable is called with
        a TuneProgress after every measured candidate and stops the search (keeping the best so
        far) by returning something true (the last call, after the search, is the result's:
        the start's time where the final comparison gave the result back to it). An exception it raises stops the search and is
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

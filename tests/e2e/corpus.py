"""corpus.py - the case types of the e2e corpus and how one case is checked.

Accept: a TC program that must define, infer, compile and run, producing the outputs that the
case's NumPy function `expect` computes from the same inputs.
Reject: a TC program (or call) that must fail at a given stage with a given status and a message
containing given fragments.
"""
import re
import time
import zlib

import numpy as np

import tclib

F16, F32, F64 = np.float16, np.float32, np.float64
BF16 = tclib.BF16  # a uint16 array of bfloat16 bits (NumPy has no bfloat16)
bf16, from_bf16 = tclib.bf16, tclib.from_bf16
FLOAT_TYPES = (np.dtype(F16), np.dtype(F32), np.dtype(F64))


# ---- deterministic inputs --------------------------------------------------------------------

def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def rf(rng, *shape, lo=-1.0, hi=1.0, dtype=F32):
    """Uniform floats in [lo, hi)."""
    return rng.uniform(lo, hi, shape).astype(dtype)


def ri(rng, *shape, lo=-9, hi=10, dtype=np.int32):
    """Uniform integers in [lo, hi)."""
    return rng.integers(lo, hi, shape).astype(dtype)


def full_range(rng, dtype, *shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


# ---- output buffers --------------------------------------------------------------------------

def sentinel(dtype):
    """Garbage the runner puts into output buffers before tc_run (unwritten elements must be 0)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return True
    if dtype.kind == "f":
        return 1234.5
    return 77


def out_sliced(shape, dtype):
    """A non-contiguous view (every other element, offset by one) into a sentinel-filled parent."""
    parent = np.full(tuple(2 * s + 1 for s in shape), sentinel(dtype), dtype)
    return parent[tuple(slice(1, 1 + 2 * s, 2) for s in shape)]


def out_fortran(shape, dtype):
    return np.asfortranarray(np.full(shape, sentinel(dtype), dtype))


def out_offset(shape, dtype):
    """A contiguous block that starts 3 elements into its parent (for byte_offset)."""
    n = int(np.prod(shape, dtype=np.int64))
    parent = np.full(n + 5, sentinel(dtype), dtype)
    return parent[3:3 + n].reshape(shape)


def root_of(arr):
    base = arr
    while isinstance(base.base, np.ndarray):
        base = base.base
    return base


def footprint_mask(view):
    """Byte mask over view's root buffer: True where view's elements live."""
    root = root_of(view)
    nbytes = root.nbytes
    mask = np.zeros(nbytes, bool)
    start = view.ctypes.data - root.ctypes.data
    if view.size == 0:
        return mask
    idx = np.indices(view.shape).reshape(view.ndim, -1) if view.ndim else np.zeros((0, 1), int)
    offs = start + (np.asarray(view.strides, dtype=np.int64)[:, None] * idx).sum(axis=0)
    for b in range(view.itemsize):
        mask[offs + b] = True
    return mask


# ---- tolerances ------------------------------------------------------------------------------

# float32 results computed from operands rounded to TF32 (cuda.tf32=1: run_corpus.py --tf32) are
# held to TF32's epsilon instead of float32's.
TF32 = False


def tolerance(dtype, red=1, ulps=8.0):
    """(rtol, atol) for a float result that sums `red` terms of magnitude about 1."""
    dtype = np.dtype(dtype)
    if tclib.is_bf16(dtype):
        eps = 2.0 ** -7
    elif dtype not in FLOAT_TYPES:
        return 0.0, 0.0
    elif TF32 and dtype == np.float32:
        eps = 2.0 ** -10
    else:
        eps = float(np.finfo(dtype).eps)
    t = ulps * eps * max(1.0, float(red))
    return t, t


class Failure(Exception):
    pass


def _fmt(a, limit=8):
    a = np.asarray(a)
    flat = a.reshape(-1)
    s = np.array2string(flat[:limit], precision=6, separator=", ")
    return s + (" ..." if flat.size > limit else "")


def compare(name, got, exp, rtol, atol):
    got = np.asarray(got)
    exp = np.asarray(exp)
    if got.shape != exp.shape:
        raise Failure("%s: shape %s, expected %s" % (name, got.shape, exp.shape))
    if exp.dtype in FLOAT_TYPES or tclib.is_bf16(exp.dtype):
        g = (from_bf16(got) if tclib.is_bf16(exp.dtype) else got).astype(F64)
        e = (from_bf16(exp) if tclib.is_bf16(exp.dtype) else exp).astype(F64)
        ok = np.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
        ok |= (g == e)  # infinities
    else:
        ok = got == exp
    if not np.all(ok):
        bad = np.argwhere(~ok) if got.ndim else [()]
        where = tuple(int(x) for x in bad[0]) if got.ndim else ()
        raise Failure("%s: %d of %d elements differ (rtol=%g atol=%g); first at %s: got %r, "
                      "expected %r\n      got      %s\n      expected %s"
                      % (name, int((~ok).sum()), ok.size, rtol, atol, where,
                         got[where].item(), exp[where].item(), _fmt(got), _fmt(exp)))


def _norm_dims(s):
    return re.sub(r"\s+", "", s)


# ---- accept cases ----------------------------------------------------------------------------

class Accept:
    """A program that must be accepted and compute `expect(*inputs)`.

    inputs(rng)       -> list of NumPy arrays (views allowed: strided, Fortran, sliced, 0-d)
    expect(*inputs)   -> list of expected outputs (exact dtype and shape); with init, called as
                         expect(*inputs, init=list_of_initial_outputs)
    init(rng)         -> initial contents of the outputs (for '+=' without '!', sgemm, ...)
    out_layout(shape, dtype) -> output buffer (a view into a sentinel-filled parent)
    red               reduction length, scales float tolerances; rtol/atol override them
    in_layout         "auto" (NULL strides when C-contiguous) or "strides" (always explicit)
    byte_offset       pass every tensor as root buffer + byte_offset
    dims              expected tc_program_output_info dims per output (whitespace-insensitive)
    defs              expected tc_program_def_name list
    allow_unsupported TC_ERROR_UNSUPPORTED is acceptable (float16); default: any float16 tensor
    backends          None, or the backends the case applies to
    """
    kind = "accept"

    def __init__(self, name, src, inputs, expect, entry=None, init=None, out_layout=None, red=1,
                 rtol=None, atol=None, ulps=8.0, in_layout="auto", byte_offset=False, dims=None,
                 defs=None, allow_unsupported=None, options=None, backends=None, note=""):
        self.name, self.src, self.inputs, self.expect, self.entry = name, src, inputs, expect, entry
        self.init, self.out_layout, self.red = init, out_layout, red
        self.rtol, self.atol, self.ulps = rtol, atol, ulps
        self.in_layout, self.byte_offset, self.dims, self.defs = in_layout, byte_offset, dims, defs
        self.allow_unsupported, self.options, self.backends = allow_unsupported, options, backends
        self.note = note

    def tensors(self, arrays):
        return [tclib.Tensor(a, layout=self.in_layout, byte_offset=self.byte_offset) for a in arrays]

    def compile(self, options):
        """The kernel for this case's own inputs under `options` (the case's options win)."""
        opts = dict(options)
        opts.update(self.options or {})
        tensors = self.tensors(self.inputs(rng_for(self.name)))
        return tclib.Program(self.src).compile(self.entry, tensors, opts)

    def run(self, backend, extra_options):
        rng = rng_for(self.name)
        ins = self.inputs(rng)
        ins_copy = [np.array(a, copy=True) for a in ins]
        init = None
        if self.init is not None:
            init = [np.asarray(a) for a in self.init(rng)]
            exp = self.expect(*[np.array(a) for a in ins], init=[a.copy() for a in init])
        else:
            exp = self.expect(*[np.array(a) for a in ins])
        exp = [np.asarray(e) for e in exp]
        allow_unsup = self.allow_unsupported
        if allow_unsup is None:
            allow_unsup = any(np.dtype(a.dtype) == np.float16 for a in list(ins) + exp)

        prog = tclib.Program(self.src)
        if self.defs is not None:
            names = prog.def_names()
            if names != self.defs:
                raise Failure("def names %s, expected %s" % (names, self.defs))
        if self.dims is not None:
            params = prog.output_params(self.entry)
            got = [[_norm_dims(d) for d in dims] for _, dims in params]
            want = [[_norm_dims(d) for d in dims] for dims in self.dims]
            if got != want:
                raise Failure("output dims %s, expected %s" % ([d for _, d in params], self.dims))

        tensors = self.tensors
        try:
            info = prog.infer_outputs(self.entry, tensors(ins))
            opts = {"backend": backend}
            opts.update(extra_options)
            opts.update(self.options or {})
            kernel = prog.compile(self.entry, tensors(ins), opts)
            kinfo = kernel.output_info()
            want = [(np.dtype(e.dtype), tuple(e.shape)) for e in exp]
            if [(np.dtype(d), s) for d, s in info] != want:
                raise Failure("tc_infer_outputs gave %s, expected %s" % (info, want))
            if [(np.dtype(d), s) for d, s in kinfo] != want:
                raise Failure("tc_kernel_output_info gave %s, expected %s" % (kinfo, want))

            outs = []
            # An output the kernel says it sets whole keeps the sentinel even where the case
            # gives initial contents: the results must not change (tc_kernel_output_overwritten).
            overwritten = kernel.output_overwritten()
            for i, e in enumerate(exp):
                o = (self.out_layout(e.shape, e.dtype) if self.out_layout
                     else np.full(e.shape, sentinel(e.dtype), e.dtype))
                if init is not None and not overwritten[i]:
                    o[...] = init[i]
                outs.append(o)
            before = [(root_of(o).copy(), footprint_mask(o)) for o in outs]
            kernel.run(tensors(ins), tensors(outs))
        except tclib.TCError as err:
            if allow_unsup and err.status == tclib.TC_ERROR_UNSUPPORTED and err.stage != "define":
                return "unsupported (allowed): " + (err.message or "").splitlines()[0]
            raise

        for i, (a, c) in enumerate(zip(ins, ins_copy)):
            if not np.array_equal(np.asarray(a), c, equal_nan=a.dtype.kind == "f"):
                raise Failure("input %d was modified by tc_run" % i)
        for i, (o, e) in enumerate(zip(outs, exp)):
            if self.rtol is not None or self.atol is not None:
                rtol, atol = (self.rtol or 0.0), (self.atol or 0.0)
            else:
                rtol, atol = tolerance(e.dtype, self.red, self.ulps)
            compare("output %d" % i, o, e, rtol, atol)
            root0, mask = before[i]
            r1 = root_of(o)
            if not r1.flags.c_contiguous:
                continue
            r0 = root0.reshape(-1).view(np.uint8)
            r1 = r1.reshape(-1).view(np.uint8)
            if r0 is not None and r1 is not None and not np.array_equal(r0[~mask], r1[~mask]):
                raise Failure("output %d: tc_run wrote outside the output's elements" % i)
        return None


# ---- reject cases ----------------------------------------------------------------------------

STAGES = ("define", "infer", "compile", "shape", "run", "options")


class Reject:
    """A program or call that must fail.

    stage:  "define"  - tc_define (or tc_define_named with source_name) fails
            "infer"   - tc_infer_outputs fails
            "compile" - tc_compile fails
            "shape"   - both tc_infer_outputs and tc_compile fail with the same status
            "run"     - tc_run fails (compiled with inputs(rng); run with run_args)
            "options" - tc_options_set(key, value) fails (options = {key: value})
    status: the expected TC_ERROR_* code
    fragments: substrings the message must contain; regex: patterns (re.M) it must match
    location: True checks "<def>:<line>:<col>: error:" at the start plus a caret line
    run_args(rng, inputs, kernel_output_info) -> (inputs, outputs): arrays or tclib.Tensors
    """
    kind = "reject"

    def __init__(self, name, src, stage, status, fragments=(), regex=(), location=False,
                 inputs=None, entry=None, run_args=None, options=None, source_name=None,
                 backends=None, note=""):
        assert stage in STAGES, stage
        self.name, self.src, self.stage, self.status = name, src, stage, status
        self.fragments, self.regex, self.location = list(fragments), list(regex), location
        self.inputs, self.entry, self.run_args, self.options = inputs, entry, run_args, options
        self.source_name, self.backends, self.note = source_name, backends, note

    def _expect_error(self, fn, what):
        try:
            fn()
        except tclib.TCError as err:
            return err
        raise Failure("%s succeeded; expected %s" % (what, tclib.STATUS_NAME[self.status]))

    def _check_error(self, err):
        if err.status != self.status:
            raise Failure("status %s (%d), expected %s; message: %s"
                          % (tclib.STATUS_NAME.get(err.status, "?"), err.status,
                             tclib.STATUS_NAME[self.status], err.message))
        msg = err.message or ""
        for f in self.fragments:
            if f not in msg:
                raise Failure("message lacks %r: %s" % (f, msg))
        for r in self.regex:
            if not re.search(r, msg, re.M):
                raise Failure("message does not match /%s/: %s" % (r, msg))
        if self.location:
            if not re.match(r"^[^\s:]+:\d+:\d+: error: ", msg):
                raise Failure("message does not start with '<def>:<line>:<col>: error: ': %s" % msg)
            if not re.search(r"^\s*\^[\^~]*\s*$", msg, re.M):
                raise Failure("message has no caret line: %s" % msg)
        return msg

    def run(self, backend, extra_options):
        rng = rng_for(self.name)
        opts = {"backend": backend}
        opts.update(extra_options)
        if self.stage == "options":
            o = tclib.Options()
            (k, v), = self.options.items()
            err = self._expect_error(lambda: o.set(k, v), "tc_options_set(%r, %r)" % (k, v))
            return self._check_error(err)
        opts.update(self.options or {})
        if self.stage == "define":
            err = self._expect_error(lambda: tclib.Program(self.src, self.source_name), "tc_define")
            return self._check_error(err)
        prog = tclib.Program(self.src, self.source_name)
        ins = self.inputs(rng) if self.inputs else []
        msg = None
        if self.stage in ("infer", "shape"):
            err = self._expect_error(lambda: prog.infer_outputs(self.entry, ins), "tc_infer_outputs")
            msg = self._check_error(err)
        if self.stage in ("compile", "shape"):
            err = self._expect_error(lambda: prog.compile(self.entry, ins, opts), "tc_compile")
            msg = self._check_error(err)
        if self.stage == "run":
            kernel = prog.compile(self.entry, ins, opts)
            rins, routs = self.run_args(rng, ins, kernel.output_info())
            err = self._expect_error(lambda: kernel.run(rins, routs), "tc_run")
            msg = self._check_error(err)
        return msg


def run_case(case, backend, extra_options=None):
    """-> (ok, seconds, detail)"""
    t0 = time.perf_counter()
    try:
        detail = case.run(backend, extra_options or {})
        return True, time.perf_counter() - t0, detail
    except Failure as f:
        return False, time.perf_counter() - t0, str(f)
    except tclib.TCError as e:
        return False, time.perf_counter() - t0, "unexpected error at %s: %s (%d): %s" % (
            e.stage, tclib.STATUS_NAME.get(e.status, "?"), e.status, e.message)
    except Exception as e:  # a bug in the case itself, or a crash in the shim
        import traceback
        return False, time.perf_counter() - t0, "exception: %s\n%s" % (e, traceback.format_exc())

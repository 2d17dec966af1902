"""_autograd.py - tc.autograd: a TC def as a PyTorch autograd function whose backward is the
gradient def libtc generates for it (tc_gradient, Program.gradient).

    prog = tc.define("def mm(double(M,K) A, double(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }")
    mm = tc.autograd(prog, backend="reference")      # options as for Program.compile
    C = mm(A, B)                                       # records for autograd
    C.sum().backward()                                 # A.grad, B.grad from "mm_grad"

Forward compiles def `entry` once per input signature (dtypes and shapes) and runs it;
backward runs "<entry>_grad" on (inputs..., d_<output> per floating-point output), compiled
once per signature too, and hands autograd d_<input> for each floating-point input (None for
integer inputs). Both go through Program.compile and Kernel calls, so tensors cross by DLPack
without copies and every check is libtc's. Integer outputs are marked non-differentiable.
The backward is not itself differentiable (once_differentiable): a second derivative would
need the gradient of "<entry>_grad", which tc.autograd does not build.

This module imports torch; tc imports it only when tc.autograd is first called, so that
`import tc` never loads PyTorch (bindings.python.test_library checks that).
"""
import types

import torch
from torch.autograd.function import once_differentiable

from ._options import Options

__all__ = ["Autograd", "is_float", "run_cached"]


def run_cached(kernels, kind, program, entry, options, tensors):
    """Def `entry` of `program` run on tensors with kernels[(kind, signature)], compiled with
    `options` the first time that signature comes; the outputs as a list."""
    key = (kind, tuple((t.dtype, tuple(t.shape)) for t in tensors))
    kernel = kernels.get(key)
    if kernel is None:
        # Two threads may both compile; setdefault keeps one (kernels are immutable).
        kernel = kernels.setdefault(key, program.compile(entry, *tensors, **options))
    results = kernel(*tensors)
    return list(results) if isinstance(results, tuple) else [results]


def is_float(dtype):
    """Whether a Param dtype name carries a gradient (tc.h: floating-point ones do)."""
    return dtype.startswith("float") or dtype == "bfloat16"


class Autograd:
    """tc.autograd(prog, entry, **options): call it on torch tensors as you would call
    prog.<entry>; the result records for autograd. Attributes: program, entry, options,
    gradient (the Program holding "<entry>_grad", generated once, here), kernels (read-only:
    (("forward"|"backward"), input signature) -> Kernel)."""

    def __init__(self, program, entry=None, *, gradient_program=None, **options):
        # The gradient first: libtc resolves entry None (the only def) and says what cannot be
        # differentiated (TcUnsupportedError) now, not at the first backward. `gradient_program`:
        # program.gradient(entry) where the caller has it already (tc.custom_op).
        self.gradient = gradient_program if gradient_program is not None else program.gradient(entry)
        self.program = program
        self.entry = entry if entry is not None else program.defs[0]
        (self.gradient_entry,) = self.gradient.defs
        self.options = dict(options)
        Options(**self.options).close()  # a bad key or value: TcInvalidArgumentError now
        inputs, outputs = program.inputs(self.entry), program.outputs(self.entry)
        self._float_inputs = [i for i, p in enumerate(inputs) if is_float(p.dtype)]
        self._float_outputs = [j for j, p in enumerate(outputs) if is_float(p.dtype)]
        self._num_inputs = len(inputs)
        # Gradients are matched to inputs by position (tc.h's order), so a gradient def whose
        # signature differs from that rule would hand autograd the wrong tensors: refuse it.
        expected = (len(inputs) + len(self._float_outputs), len(self._float_inputs))
        got = (len(self.gradient.inputs()), len(self.gradient.outputs()))
        if got != expected:
            raise RuntimeError("tc.autograd: %s has %d inputs and %d outputs; tc.h's rule for %s "
                               "gives %d and %d" % ((self.gradient_entry,) + got + (self.entry,)
                                                    + expected))
        self._kernels = {}

    @property
    def kernels(self):
        return types.MappingProxyType(self._kernels)

    def _run(self, kind, tensors):
        """Runs def entry ("forward") or entry_grad ("backward") on tensors, compiling it the
        first time this signature comes; returns the outputs as a list."""
        program, entry = (self.program, self.entry) if kind == "forward" else (self.gradient, self.gradient_entry)
        return run_cached(self._kernels, kind, program, entry, self.options, tensors)

    def float_output_meta(self, outputs):
        """(shape, dtype, device) of each floating-point output: what input_grads needs of them."""
        return [(outputs[j].shape, outputs[j].dtype, outputs[j].device) for j in self._float_outputs]

    def input_grads(self, inputs, float_outputs, grads, needs):
        """The gradient of each input (None where it has none or needs[i] is false) from the
        outputs' grads, by "<entry>_grad"; float_outputs: float_output_meta(outputs)."""
        d_outputs = []
        for j, (shape, dtype, device) in zip(self._float_outputs, float_outputs):
            g = grads[j]
            # Autograd often passes expanded (stride 0, from .sum()) or transposed grads. libtc
            # reads any non-negative strides, but the cpu backend's loops are fastest on dense
            # rows: mm_grad at 256x256 took 0.83 ms on an expanded or transposed d_C and
            # 0.58 ms copying it first (contiguous() is free on a dense grad).
            d_outputs.append(torch.zeros(shape, dtype=dtype, device=device) if g is None else g.contiguous())
        d_inputs = self._run("backward", [x.detach() for x in inputs] + d_outputs)
        result = [None] * self._num_inputs
        for i, d in zip(self._float_inputs, d_inputs):
            if needs[i]:
                result[i] = d
        return tuple(result)

    def __call__(self, *inputs):
        for i, x in enumerate(inputs):
            if not isinstance(x, torch.Tensor):
                raise TypeError("tc.autograd(%s): input %d is a %s, not a torch.Tensor"
                                % (self.entry, i, type(x).__name__))
        outputs = _Function.apply(self, *inputs)
        return outputs[0] if len(outputs) == 1 else outputs

    def __repr__(self):
        return "tc.autograd(entry=%r, gradient=%r, options=%r)" % (
            self.entry, self.gradient_entry, self.options)


class _Function(torch.autograd.Function):
    @staticmethod
    def forward(ctx, fn, *inputs):
        # DLPack refuses tensors that require grad; detached views share their memory.
        outputs = fn._run("forward", [x.detach() for x in inputs])
        ctx.fn = fn
        ctx.save_for_backward(*inputs)
        # Shapes and dtypes only: a None grad becomes zeros of these, without keeping outputs.
        ctx.float_outputs = fn.float_output_meta(outputs)
        # Integer and bool outputs have no gradient. A bool output is a tc.Tensor where PyTorch
        # cannot take bool through DLPack (< 2.0); autograd passes such non-tensors through.
        float_outputs = set(fn._float_outputs)
        ctx.mark_non_differentiable(*(o for j, o in enumerate(outputs)
                                      if j not in float_outputs and isinstance(o, torch.Tensor)))
        # Unused outputs' grads arrive as None (not zeros torch allocates for every output,
        # integer ones included); backward fills in zeros only for what the kernel reads.
        ctx.set_materialize_grads(False)
        return tuple(outputs)

    @staticmethod
    @once_differentiable
    def backward(ctx, *grads):
        return (None,) + ctx.fn.input_grads(ctx.saved_tensors, ctx.float_outputs, grads, ctx.needs_input_grad[1:])

"""_torch_op.py - tc.custom_op: a TC def as a PyTorch operator, torch.ops.<ns>.<name>.

    prog = tc.define("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }")
    mm = tc.custom_op(prog, "mm", "mylib::mm")      # torch.ops.mylib.mm
    C = mm(A, B)                                     # eager, CPU or CUDA tensors
    torch.ops.mylib.mm(A.to("meta"), B.to("meta"))   # shapes and dtypes only (tc_infer_outputs)

What is registered for the operator:
- its schema, from the def's signature (tc_program_input_info / _output_info): one `Tensor` per
  input, named as in the def, and a `Tensor` (or a tuple of them) per output. Sizes and dtypes
  are checked by libtc when the kernel is compiled, as for Program.compile;
- a CPU kernel and a CUDA kernel: the def compiled once per device and input signature (dtypes
  and shapes) with `options` (on CUDA with backend=cuda, on the CPU with the backend `options`
  names if it is a host one, cpu otherwise) and run on the tensors without a copy (DLPack); on
  CUDA on torch's current stream of the inputs' device (Kernel calls do), inputs made
  contiguous first (the cuda backend takes dense tensors);
- a Meta kernel (a "fake" one with PyTorch >= 2.4): the outputs' shapes and dtypes from
  tc_infer_outputs, nothing compiled or run;
- autograd, when libtc can differentiate the def (tc_gradient): backward runs "<entry>_grad"
  (tc.autograd's machinery) on the device of the inputs; without a gradient, no autograd
  formula is registered and a backward through the op fails as PyTorch's does for such ops.

Two registrations, chosen by the PyTorch in use:
- PyTorch >= 2.4: torch.library.custom_op with the schema, register_kernel("cuda"),
  register_fake, register_autograd: torch.compile(fullgraph=True) traces a model calling the op
  without a graph break (tools/gpu-check.sh checks it on the GPU machine's PyTorch);
- older (Debian's 1.13): torch.library.Library(ns, "DEF"), define, impl for CPU, CUDA, Meta and
  Autograd (a torch.autograd.Function that calls the op again below autograd): eager mode and
  torch.jit.script (tests/python: test_custom_op.py).

An operator lives as long as the process (PyTorch has no way to remove one); registering the
same "ns::name" twice is a RuntimeError, raised here on every PyTorch (2.11 itself lets a
second torch.library.custom_op of a name pass). This module imports torch: tc imports it only when
tc.custom_op is first called.
"""
import re
import threading

import torch

from ._options import Options
from ._tensors import TensorInfo
from ._autograd import Autograd, is_float, run_cached
from .errors import TcUnsupportedError

__all__ = ["custom_op"]

_QUALNAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)::([A-Za-z_][A-Za-z0-9_]*)$")
_HOST_BACKENDS = ("cpu", "reference")

# One Library("ns", "DEF") per namespace (PyTorch < 2.4 allows one): ops are defined into it.
_LIBRARIES = {}
_LIBRARIES_LOCK = threading.Lock()
# The "ns::name" tc.custom_op registered in this process.
_REGISTERED = set()
_REGISTERED_LOCK = threading.Lock()


def _modern_torch():
    library = torch.library
    return all(hasattr(library, f) for f in ("custom_op", "register_fake", "register_autograd"))


class _Op:
    """What the registered kernels share: the program, its signature and gradient program, the
    forward kernels (per device type and signature) and one Autograd per device type for the
    backward."""

    def __init__(self, program, entry, qualname, options):
        m = _QUALNAME.match(qualname)
        if not m:
            raise ValueError("tc.custom_op: the operator's name must be 'namespace::name' with two "
                             "identifiers, got %r" % (qualname,))
        self.qualname = qualname
        self.namespace, self.name = m.groups()
        self.program = program
        self.entry = entry if entry is not None else program.defs[0] if len(program.defs) == 1 else None
        if self.entry is None:
            raise ValueError("tc.custom_op: the program has %d defs (%s): name the entry"
                             % (len(program.defs), ", ".join(program.defs)))
        self.inputs, self.outputs = program.inputs(self.entry), program.outputs(self.entry)
        self.options = dict(options)
        Options(**self.options).close()  # a bad key or value: TcInvalidArgumentError now
        try:
            self.gradient = program.gradient(self.entry)
        except TcUnsupportedError:  # no autograd formula registered
            self.gradient = None
        self._kernels = {}   # (device type, input signature) -> the forward Kernel
        self._autograd = {}  # device type -> Autograd (its backward kernels)
        self._lock = threading.Lock()

    @property
    def differentiable(self):
        return self.gradient is not None

    @property
    def schema(self):
        """'(Tensor A, Tensor B) -> Tensor': the def's signature in PyTorch's schema language."""
        args = ", ".join("Tensor " + p.name for p in self.inputs)
        returns = "Tensor" if len(self.outputs) == 1 else "(" + ", ".join("Tensor" for _ in self.outputs) + ")"
        return "(%s) -> %s" % (args, returns)

    def options_for(self, device_type):
        """`options` with the backend of a device type: cuda on CUDA; on the CPU the backend
        `options` names if it is a host one, cpu otherwise."""
        options = dict(self.options)
        if device_type == "cuda":
            options["backend"] = "cuda"
        elif options.get("backend", "cpu") not in _HOST_BACKENDS:
            options["backend"] = "cpu"
        return options

    def autograd(self, device_type):
        """The Autograd object (backward kernels, compiled once per signature) of a device type."""
        with self._lock:
            if device_type not in self._autograd:
                self._autograd[device_type] = Autograd(self.program, self.entry, gradient_program=self.gradient,
                                                       **self.options_for(device_type))
            return self._autograd[device_type]

    def run(self, *inputs):
        """The def on the inputs' device: a tuple of torch tensors, one per output."""
        device = inputs[0].device.type if inputs else "cpu"
        # DLPack refuses tensors that require grad (below autograd they still say so): detached
        # views share their memory.
        inputs = [x.detach().contiguous() if device == "cuda" else x.detach() for x in inputs]
        outputs = run_cached(self._kernels, device, self.program, self.entry, self.options_for(device), inputs)
        return tuple(o if isinstance(o, torch.Tensor) else torch.as_tensor(_numpy(o)) for o in outputs)

    def fake(self, *inputs):
        """Empty tensors with the outputs' shapes and dtypes on the inputs' device."""
        infos = self.program.infer_outputs(
            self.entry, *(TensorInfo(str(x.dtype).replace("torch.", ""), tuple(x.shape)) for x in inputs))
        device = inputs[0].device if inputs else torch.device("meta")
        return tuple(torch.empty(i.shape, dtype=getattr(torch, i.dtype), device=device) for i in infos)

    def float_output_meta(self, outputs):
        """What backward_of needs of the outputs (differentiable ops only)."""
        return self.autograd(outputs[0].device.type).float_output_meta(outputs)

    def backward_of(self, inputs, float_outputs, grads, needs):
        device = inputs[0].device.type if inputs else "cpu"
        return self.autograd(device).input_grads(inputs, float_outputs, grads, needs)

    def single(self, outputs):
        return outputs[0] if len(self.outputs) == 1 else outputs


def _numpy(obj):
    import numpy  # a bool output PyTorch < 2.0 cannot take through DLPack: a tc.Tensor
    return numpy.asarray(obj)


def _register_modern(op):
    qualname = op.qualname

    def forward(*inputs):
        return op.single(op.run(*inputs))

    custom = torch.library.custom_op(qualname, forward, mutates_args=(), device_types=("cpu", "cuda"),
                                     schema=op.schema)
    torch.library.register_fake(qualname)(lambda *inputs: op.single(op.fake(*inputs)))
    if op.differentiable:
        def setup_context(ctx, inputs, output):
            outputs = output if isinstance(output, tuple) else (output,)
            ctx.save_for_backward(*inputs)
            ctx.float_outputs = op.float_output_meta(outputs)

        def backward(ctx, *grads):
            return op.backward_of(ctx.saved_tensors, ctx.float_outputs, grads, ctx.needs_input_grad)

        torch.library.register_autograd(qualname, backward, setup_context=setup_context)
    del custom
    return getattr(getattr(torch.ops, op.namespace), op.name)


class _LegacyFunction(torch.autograd.Function):
    """Autograd for PyTorch < 2.4: forward calls the op below autograd (its CPU, CUDA or Meta
    kernel), backward the gradient def."""

    @staticmethod
    def forward(ctx, op, *inputs):
        guard = torch._C._AutoDispatchBelowAutograd()
        try:
            outputs = getattr(getattr(torch.ops, op.namespace), op.name)(*inputs)
        finally:
            del guard
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        ctx.op = op
        ctx.save_for_backward(*inputs)
        ctx.float_outputs = op.float_output_meta(outputs)
        ctx.mark_non_differentiable(*(o for j, o in enumerate(outputs) if not is_float(op.outputs[j].dtype)))
        ctx.set_materialize_grads(False)
        return outputs

    @staticmethod
    def backward(ctx, *grads):
        if ctx.float_outputs and ctx.float_outputs[0][2].type == "meta":
            raise RuntimeError("tc.custom_op: no backward on meta tensors")
        return (None,) + ctx.op.backward_of(ctx.saved_tensors, ctx.float_outputs, grads, ctx.needs_input_grad[1:])


def _register_legacy(op):
    with _LIBRARIES_LOCK:
        library = _LIBRARIES.get(op.namespace)
        if library is None:
            library = _LIBRARIES[op.namespace] = torch.library.Library(op.namespace, "DEF")
    library.define(op.name + op.schema)
    library.impl(op.name, lambda *inputs: op.single(op.run(*inputs)), "CPU")
    library.impl(op.name, lambda *inputs: op.single(op.run(*inputs)), "CUDA")
    library.impl(op.name, lambda *inputs: op.single(op.fake(*inputs)), "Meta")
    if op.differentiable:
        library.impl(op.name, lambda *inputs: op.single(_LegacyFunction.apply(op, *inputs)), "Autograd")
    return getattr(getattr(torch.ops, op.namespace), op.name)


def custom_op(program, entry, qualname, **options):
    """See tc.custom_op."""
    op = _Op(program, entry, qualname, options)
    with _REGISTERED_LOCK:
        if op.qualname in _REGISTERED:
            raise RuntimeError("tc.custom_op: '%s' is already registered in this process (PyTorch cannot remove "
                               "an operator): choose another name" % op.qualname)
        registered = _register_modern(op) if _modern_torch() else _register_legacy(op)
        _REGISTERED.add(op.qualname)
    return registered

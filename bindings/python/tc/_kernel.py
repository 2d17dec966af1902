"""_kernel.py - Kernel: one def compiled for one input signature (tc_kernel): calling it
(tc_run, tc_run_async on a GPU library's stream), its description, resources, code and GPU
profile."""
import contextlib
import ctypes
import re

from . import _library
from ._handle import _Handle, _dec, _enc
from ._library import lib
from ._tensors import Tensor, _borrow_all, _gpu_library, _host_library, _same_kind, _tensor_info
from .errors import check


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
        infos, overwritten = [], []
        for i in range(count.value):
            info, flag = _library.TensorInfo(), ctypes.c_int()
            check(lib.tc_kernel_output_info(self._handle, i, ctypes.byref(info)))
            check(lib.tc_kernel_output_overwritten(self._handle, i, ctypes.byref(flag)))
            infos.append(_tensor_info(info))
            overwritten.append(bool(flag.value))
        self.outputs = tuple(infos)  # what tc_run expects: TensorInfo per output
        # per output: the kernel sets every element (tc_kernel_output_overwritten), so an output
        # PyTorch or CuPy allocates is not zeroed first (on a GPU: one fill kernel less a call)
        self._overwritten = tuple(overwritten)

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
        maker = None  # the library that allocates the outputs: the inputs' (PyTorch, CuPy), else tc.Tensor
        if out is None:
            maker = gpu if gpu is not None else _host_library(inputs[0]) if inputs else None
            if maker is not None:  # outputs on the inputs' device, by their library
                results = [maker.allocate(info, inputs[0], not whole)
                           for info, whole in zip(self.outputs, self._overwritten)]
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
        if out is None and maker is None:
            results = [_same_kind(inputs[0] if inputs else None, r) for r in results]
        return results[0] if len(results) == 1 else tuple(results)

    def __repr__(self):
        return "tc.Kernel(entry=%r, outputs=%r)" % (self.entry, self.outputs)

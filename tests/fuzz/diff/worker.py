"""worker.py - runs one TC program on one backend through libtc, in a child process.

The child (`python3 worker.py`) reads requests from stdin and answers on its original stdout
(length-prefixed pickles); libtc's and Halide's own prints go to stderr. A request names the
source, entry, backend, options, the inputs (values plus a memory layout: contiguous, explicit
strides, Fortran, strided slice, transposed, stride-0 broadcast, byte_offset; bool given as
uint8 bytes) and the output layouts and fill seed. The child defines, infers, compiles and
runs, and answers with the stage and status of the first failure (if any), the inferred and
compiled output infos, the outputs (bool outputs as their raw bytes), whether the bytes around
every output view and every input buffer were left alone, and timings.
WorkerClient (used by the driver) starts the child with the caller's environment (so
TC_LIBRARY, LD_PRELOAD and ASAN_OPTIONS reach it), enforces a per-request timeout, and turns
a dead child into a 'crash' (with the signal and the tail of its stderr) and a timeout into a
'hang' (the child's process group is killed); the next request starts a fresh child.
It does not compare anything: the driver does.
"""
import faulthandler
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CANARY = 0xA5
PAD = 16  # canary elements on each side of an output view


# ---- messages ---------------------------------------------------------------------------------

def write_msg(f, obj):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    f.write(struct.pack("<Q", len(data)) + data)
    f.flush()


def read_msg(f):
    head = f.read(8)
    if len(head) < 8:
        return None
    (n,) = struct.unpack("<Q", head)
    return pickle.loads(f.read(n))


# ---- inputs and outputs as memory layouts ----------------------------------------------------------

def dtype_name(d):
    """A TC dtype name of the NumPy dtype tclib gave ("bfloat16" for its BF16)."""
    import tclib
    return "bfloat16" if tclib.is_bf16(d) else np.dtype(d).name


def garbage(dtype):
    return np.array(77 if np.dtype(dtype).kind in "iub" else 1234.5).astype(dtype)


def input_view(spec):
    """(array view with the spec's layout and values, byte_offset flag)."""
    data = np.asarray(spec["data"])
    lay = spec["layout"]
    kind = lay["kind"]
    if kind in ("contig", "explicit") or data.size == 0:
        return data.copy(), False
    if kind == "fortran":
        return np.asfortranarray(data), False
    if kind == "transposed":
        return np.ascontiguousarray(data.T).T, False
    if kind == "broadcast":
        idx = tuple(slice(0, 1) if i in lay["dims"] else slice(None) for i in range(data.ndim))
        return np.broadcast_to(data[idx].copy(), data.shape), False
    if kind == "strided":
        pshape = tuple(st + step * n + 1 for st, step, n in zip(lay["starts"], lay["steps"], data.shape))
        parent = np.full(pshape, garbage(data.dtype), data.dtype)
        view = parent[tuple(slice(st, st + step * n, step)
                            for st, step, n in zip(lay["starts"], lay["steps"], data.shape))]
        view[...] = data
        return view, False
    if kind == "offset":
        off = lay["offset"]
        flat = np.full(data.size + off + 2, garbage(data.dtype), data.dtype)
        view = flat[off:off + data.size].reshape(data.shape)
        view[...] = data
        return view, True
    raise ValueError("unknown input layout " + kind)


def root(arr):
    base = arr
    while isinstance(base.base, np.ndarray):
        base = base.base
    return base


def init_values(seed, index, dtype, shape):
    """What an output buffer holds before tc_run (same on both backends)."""
    rng = np.random.default_rng([seed, index])
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dt.kind == "f":
        return (rng.integers(-6, 7, shape) * 0.5).astype(dt)
    if dt.kind == "u":
        return rng.integers(0, 7, shape).astype(dt)
    return rng.integers(-3, 4, shape).astype(dt)


def output_view(spec, index, seed, dtype, shape):
    """(flat canary buffer, view into it filled with init values, byte_offset flag)."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    kind = spec["layout"]["kind"]
    if kind in ("sliced", "fortran") and (n == 0 or len(shape) == 0):
        kind = "contig"
    if kind == "sliced":
        core = int(np.prod([2 * s + 1 for s in shape], dtype=np.int64))
    else:
        core = n + spec["layout"].get("offset", 0)
    flat = np.empty(core + 2 * PAD, dt)
    flat.view(np.uint8)[...] = CANARY
    body = flat[PAD:PAD + core]
    byte_offset = False
    if kind == "sliced":
        parent = body.reshape(tuple(2 * s + 1 for s in shape))
        view = parent[tuple(slice(1, 1 + 2 * s, 2) for s in shape)]
    elif kind == "fortran":
        view = body[:n].reshape(tuple(reversed(shape))).T
    elif kind == "offset":
        off = spec["layout"]["offset"]
        view = body[off:off + n].reshape(shape)
        byte_offset = True
    else:
        view = body[:n].reshape(shape)
    view[...] = init_values(seed, index, dt, shape)
    return flat, view, byte_offset


def footprint(flat, view):
    """Byte mask over flat: True where the view's elements live."""
    mask = np.zeros(flat.nbytes, bool)
    if view.size == 0:
        return mask
    start = view.__array_interface__["data"][0] - flat.__array_interface__["data"][0]
    idx = np.indices(view.shape).reshape(view.ndim, -1) if view.ndim else np.zeros((0, 1), np.int64)
    offs = start + (np.asarray(view.strides, dtype=np.int64)[:, None] * idx).sum(axis=0)
    for b in range(view.itemsize):
        mask[offs + b] = True
    return mask


# ---- one request (in the child) ---------------------------------------------------------------------

def run_request(req):
    import tclib
    res = {"stage": None, "status": "TC_OK", "message": None, "times": {}}

    def failed(stage, e):
        res.update(stage=stage, status=tclib.STATUS_NAME.get(e.status, str(e.status)), message=e.message)
        return res

    t0 = time.time()
    try:
        prog = tclib.Program(req["source"], "case.tc")
    except tclib.TCError as e:
        return failed("define", e)
    views, tensors = [], []
    for spec in req["inputs"]:
        view, off = input_view(spec)
        over = {"dtype": tclib.dl_dtype(np.bool_)} if spec.get("as_bool") else {}
        layout = "strides" if spec["layout"]["kind"] == "explicit" else "auto"
        views.append(view)
        tensors.append(tclib.Tensor(view, layout=layout, byte_offset=off, **over))
    before = [root(v).tobytes() for v in views]
    try:
        infos = prog.infer_outputs(req["entry"], tensors)
    except tclib.TCError as e:
        return failed("infer", e)
    res["infer"] = [(dtype_name(d), s) for d, s in infos]
    try:
        kernel = prog.compile(req["entry"], tensors, req["options"])
    except tclib.TCError as e:
        return failed("compile", e)
    res["times"]["compile"] = time.time() - t0
    kinfo = kernel.output_info()
    res["kernel_info"] = [(dtype_name(d), s) for d, s in kinfo]
    outs, flats, otensors = [], [], []
    for i, (dtype, shape) in enumerate(kinfo):
        spec = req["outputs"][i] if i < len(req["outputs"]) else {"layout": {"kind": "contig"}}
        flat, view, off = output_view(spec, i, req["out_seed"], dtype, shape)
        outs.append(view)
        flats.append(flat)
        otensors.append(tclib.Tensor(view, byte_offset=off))
    canary_before = [f.tobytes() for f in flats]
    t1 = time.time()
    try:
        kernel.run(tensors, otensors)
    except tclib.TCError as e:
        failed("run", e)
    res["times"]["run"] = time.time() - t1
    res["outputs"] = [np.array(o.view(np.uint8) if o.dtype == np.bool_ else o) for o in outs]
    res["outside_written"] = [_outside_written(f, o, b) for f, o, b in zip(flats, outs, canary_before)]
    res["inputs_changed"] = [i for i, (v, b) in enumerate(zip(views, before)) if root(v).tobytes() != b]
    return res


def _outside_written(flat, view, before):
    """Byte offsets (relative to the view's first byte) outside the view that changed."""
    now = np.frombuffer(flat.tobytes(), np.uint8)
    old = np.frombuffer(before, np.uint8)
    changed = (now != old) & ~footprint(flat, view)
    if not changed.any():
        return []
    start = view.__array_interface__["data"][0] - flat.__array_interface__["data"][0]
    return [int(x) - start for x in np.nonzero(changed)[0][:8]]


def child_main():
    faulthandler.enable()  # a Python traceback on a fatal signal (then the previous handler runs)
    sys.path.insert(0, os.path.join(HERE, "..", "..", "e2e"))
    proto_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    proto_in = sys.stdin.buffer
    while True:
        req = read_msg(proto_in)
        if req is None or req.get("op") == "exit":
            return
        try:
            if req.get("op") == "version":
                import tclib
                res = {"version": tclib.version()}
            elif req.get("op") == "selftest-crash":
                os.kill(os.getpid(), signal.SIGSEGV)
            elif req.get("op") == "selftest-hang":
                time.sleep(3600)
            else:
                res = run_request(req)
        except Exception:
            res = {"harness_error": traceback.format_exc()}
        write_msg(proto_out, res)


# ---- the parent's side ----------------------------------------------------------------------------

class WorkerClient:
    """A child worker with a timeout per request; restarted after a crash or a hang."""

    def __init__(self, timeout, log_dir=None, env=None):
        self.timeout = timeout
        self.log_dir = log_dir or tempfile.mkdtemp(prefix="tcdiff-worker-")
        self.env = dict(os.environ if env is None else env)
        self.proc = None
        self.starts = 0

    def start(self):
        self.starts += 1
        self.log_path = os.path.join(self.log_dir, "worker-%d.stderr" % self.starts)
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                     env=self.env, start_new_session=True)

    def request(self, req, timeout=None):
        """('ok', result) | ('crash', info) | ('hang', info)."""
        if self.proc is None:
            self.start()
        try:
            write_msg(self.proc.stdin, req)
        except (BrokenPipeError, OSError):
            return self._dead()
        deadline = time.time() + (timeout or self.timeout)
        head = self._read_exact(8, deadline)
        if head is None:
            return self._hang_or_dead(deadline)
        (n,) = struct.unpack("<Q", head)
        body = self._read_exact(n, deadline)
        if body is None:
            return self._hang_or_dead(deadline)
        return "ok", pickle.loads(body)

    def _read_exact(self, n, deadline):
        fd = self.proc.stdout.fileno()
        chunks, got = [], 0
        while got < n:
            left = deadline - time.time()
            if left <= 0:
                return None
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                return None
            chunk = os.read(fd, n - got)
            if not chunk:
                return None
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def _hang_or_dead(self, deadline):
        if self.proc.poll() is None and time.time() >= deadline:
            self.kill()
            return "hang", {"stderr": self._stderr_tail()}
        return self._dead()

    def _dead(self):
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
        info = {"returncode": code, "signal": _signame(code), "stderr": self._stderr_tail()}
        self.proc = None
        return "crash", info

    def _stderr_tail(self, limit=6000):
        try:
            self.log.flush()
            with open(self.log_path, "rb") as f:
                data = f.read()
            return data[-limit:].decode("utf-8", "replace")
        except OSError:
            return ""

    def kill(self):
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.proc = None

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                write_msg(self.proc.stdin, {"op": "exit"})
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.kill()
        self.proc = None


def _signame(code):
    if code is None or code >= 0:
        return None
    try:
        return signal.Signals(-code).name
    except ValueError:
        return "signal %d" % -code


if __name__ == "__main__":
    child_main()

"""gradients.py - tc_gradient's generated kernels against finite differences, on every backend.

For each case: the forward def in float64, random inputs (seeded by the case name), a random
gradient d_O per floating-point output; the gradient kernel <entry>_grad runs on the backend
under test and every element of every d_<input> is compared with the central difference of
L = sum over outputs of sum(d_O * O), whose forward runs on the reference backend. Then the
rejections: defs whose gradient cannot be expressed must be TC_ERROR_UNSUPPORTED with a message
naming the reason. `--corpus` sweeps the whole accept corpus (cases_accept.py) the same way:
every def tc_gradient accepts must give a gradient that checks, compiles and agrees with the
finite differences (24 sampled elements per input) on both backends. `--fuzz N` takes N random
programs of the differential fuzzer (tests/fuzz/diff/gen.py, seed --seed): tc_gradient never
fails with anything but UNSUPPORTED, and each gradient it makes gives the same results (or the
same error) on both backends. Not torch-based (bindings/python/tests/test_autograd.py runs
torch.autograd.gradcheck through the Python binding).

    TC_LIBRARY=build/src/libtc.so /usr/bin/python3 tests/e2e/gradients.py [--backend B] [NAME...]
    ... gradients.py --list
    ... gradients.py --corpus
    ... gradients.py --fuzz 100 [--seed 7]
"""
import argparse
import os
import re
import sys
import zlib

import numpy as np

import tclib

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "..", "..", "bench", "kernels")
TC_ERROR_UNSUPPORTED = -5


def bench(name):
    with open(os.path.join(KERNELS, name + ".tc")) as f:
        return f.read()


def n(*shape):
    return lambda r: r.standard_normal(shape)


def pos(*shape):
    return lambda r: r.uniform(0.5, 2.0, shape)


def idx(hi, *shape):
    return lambda r: r.integers(0, hi, shape).astype(np.int32)


def perm(*shape):
    """Distinct values (no ties for max/min reductions)."""
    return lambda r: r.permutation(int(np.prod(shape))).reshape(shape) / 7.0 - 1.0


# name: (source, [input makers]); entry is the only def unless the name says "entry:name".
CASES = {
    "mm": ("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", [n(3, 4), n(4, 5)]),
    "tmm": (bench("tmm"), [n(3, 4), n(5, 4)]),
    "tbmm": (bench("tbmm"), [n(2, 3, 4), n(2, 5, 4)]),
    "conv2d": (bench("conv2d"), [n(2, 2, 5, 5), n(3, 2, 3, 3)]),
    "group_conv": (bench("group_conv"), [n(1, 2, 2, 4, 4), n(2, 2, 2, 3, 3)]),
    "fcrelu": (bench("fcrelu"), [n(3, 4), n(5, 4), n(5)]),
    "fcrelu_in_place": ("""def fcrelu(float(B,M) I, float(N,M) W1, float(N) B1) -> (O1) {
                             O1(b,n) +=! I(b,m) * W1(n,m)
                             O1(b,n) = O1(b,n) + B1(n)
                             O1(b,n) = fmax(O1(b,n), 0)
                           }""", [n(3, 4), n(5, 4), n(5)]),
    "mlp3": (bench("mlp3"), [n(2, 3), n(4, 3), n(4), n(3, 4), n(3), n(2, 3), n(2)]),
    "softmax": (bench("softmax"), [n(3, 5)]),
    "layernorm": (bench("layernorm"), [n(3, 6), n(6), n(6)]),
    "lut1": (bench("lut1"), [n(6, 3), idx(6, 2, 4)]),
    "lut2": (bench("lut2"), [n(5, 3), idx(5, 2, 3), n(4, 3), idx(4, 2, 2)]),
    "maxpool": (bench("maxpool"), [perm(1, 2, 4, 6)]),
    "maxpool_odd_sizes": (bench("maxpool"), [perm(1, 1, 5, 7)]),
    "stride_3_window_2": ("""def s(float(N) X) -> (O) {
                              O(i) +=! X(3 * i + k) * X(3 * i + k) where k in 0:2 }""", [n(8)]),
    "maxpool_where": ("""def pool(float(N,C,H,W) I) -> (O) {
                           O(n,c,h,w) max=! I(n,c,2*h+kh,2*w+kw) where kh in 0:2, kw in 0:2 }""", [perm(2, 1, 4, 4)]),
    "min_accumulate": ("""def m(float(N,K) A, float(N) B) -> (O) {
                            O(i) = B(i)
                            O(i) min= A(i,k) }""", [perm(3, 4), lambda r: perm(3)(r) + 0.5 / 7]),
    "max_repeated_read": ("def g(float(N) X) -> (O) { O() max=! X(min(k, 2)) where k in 0:4 }",
                          [lambda r: np.array([1.0, 0.0, 3.0])]),
    "max_init_then_accumulate": ("""def g(float(N,K) X) -> (O) {
                                     O(i) = X(i, 0)
                                     O(i) max= X(i, k) }""", [lambda r: np.array([[3.0, 1.0, 2.0], [0.0, 4.0, 1.0]])]),
    "max_edge_replicated": ("""def g(float(N) X) -> (O) {
                                O(i) max=! X(min(max(i + k - 1, 0), N - 1)) where i in 0:N, k in 0:3 }""",
                            [lambda r: np.array([5.0, 1.0, 2.0, 3.0])]),
    "sum_accumulate": ("""def s(float(N,K) A, float(N) B) -> (O) {
                            O(i) = B(i) * B(i)
                            O(i) += A(i,k) * B(i) }""", [n(3, 4), n(3)]),
    "pad_guarded": ("def pad1(float(N) A) -> (O) { O(i) = (i >= 1 && i <= N) ? A(i - 1) : 0 where i in 0:N+2 }",
                    [n(5)]),
    "shifted_sum": ("def sh(float(N) A) -> (O) { O(i) = A(i) + 2 * A(i + 1) }", [n(6)]),
    "diagonal": ("def dg(float(N,N) A) -> (O) { O(i) = A(i, i) * A(i, i) }", [n(4, 4)]),
    "broadcast_count": ("def bc(float(N) A, float(K) B) -> (O) { O(i) +=! A(i) + B(k) }", [n(3), n(4)]),
    "elementwise": ("""def ew(float(N) X, float(N) P) -> (O) {
                         O(i) = tanh(X(i)) + exp(X(i)) * sqrt(P(i)) + log(P(i)) + pow(P(i), X(i))
                              + 1 / (1 + exp(-X(i))) + atan2(X(i), P(i)) + hypot(X(i), P(i)) + erf(X(i))
                              + fmin(X(i), P(i)) + abs(X(i)) * sin(X(i)) - cos(P(i)) / P(i) + expm1(X(i))
                              + log1p(P(i)) + rsqrt(P(i)) + cbrt(P(i)) + atan(X(i)) + asinh(X(i)) + sinh(X(i))
                              + cosh(X(i)) + exp2(X(i)) + log2(P(i)) + log10(P(i)) + fma(X(i), P(i), X(i))
                              + max(X(i), 0.1) + min(P(i), 1.5) + fmax(X(i), P(i)) + fabs(P(i)) + tan(X(i) / 4)
                              + asin(X(i) / 4) + acos(X(i) / 4) + atanh(X(i) / 4) + acosh(P(i) + 1)
                              + erfc(X(i)) + copysign(X(i), P(i) - 1) + fmod(X(i), P(i)) + floor(X(i))
                              + ceil(X(i)) + round(X(i)) + trunc(X(i)) }""",
                    [n(6), pos(6)]),
    "relu_ternary": ("def r(float(N) X) -> (O) { O(i) = X(i) > 0 ? X(i) : 0.1 * X(i) }", [n(7)]),
    "two_outputs": ("""def two(float(N) X, float(N) Y) -> (S, P) {
                         S(i) = X(i) + Y(i)
                         P(i) = X(i) * S(i) }""", [n(4), n(4)]),
    "scalar_input": ("def sc(float a, float(N) X) -> (O, t) { O(i) = a * X(i) * X(i)\n t +=! O(i) * a }",
                     [lambda r: np.array(r.standard_normal()), n(5)]),
    "integer_path": ("""def ip(float(N) X, int32(N) I) -> (O, C) {
                         C(i) = int32(X(i) * 10) + I(i)
                         O(i) = X(i) * float(C(i)) + float(I(i)) }""", [n(5), idx(9, 5)]),
    "cast_chain": ("def cc(float(N) X) -> (O) { O(i) = double(float32(X(i)) * 2) + float32(X(i)) }", [n(4)]),
    "call_between_defs": ("""def sq(float(N) A) -> (B) { B(i) = A(i) * A(i) }
                             def f(float(N) X) -> (O) { T = sq(X)\n O(i) = T(i) + X(i) }""", [n(4)],),
    "zero_gradient_input": ("def z(float(N) X, float(N) Y) -> (O) { O(i) = X(i) + floor(Y(i)) }", [n(3), n(3)]),
    "gather_and_affine": ("""def ga(float(E,D) T, int32(B) I) -> (O) {
                              O(b, d) = T(I(b), d) * T(I(b), D - 1 - d) }""", [n(5, 3), idx(5, 4)]),
    # Integer arguments of float builtins: each derivative computes with them converted, as the
    # call does (i * 3000000 squared overflows int32; the literal does not fit one).
    "integer_builtin_arguments": ("""def ib(float(N) X) -> (O) {
                                      O(i) = atan2(i * 3000000, X(i) + 4) + hypot(i, X(i)) + atan2(x, X(i) + 4)
                                             + pow(X(i) + 4, i) where x = -9223372036854775807 }""", [n(5)]),
}
ENTRY = {"call_between_defs": "f"}
# Through a rounding cast the finite difference sees the rounding steps: a looser tolerance.
TOLERANCE = {"cast_chain": 2e-2}

# name: (source, message fragment)
REJECTIONS = {
    "product_reduction": ("def p(float(N,K) A) -> (O) { O(i) *=! A(i,k) }", "'*=' reductions"),
    "caller_content": ("""def sgemm(float a, float b, float(N,M) A, float(M,K) B) -> (C) {
                            C(i,j) = b * C(i,j)
                            C(i,j) += a * A(i,k) * B(k,j) }""", "as the caller passed it"),
    "integer_only": ("def p(int32(N,K) A) -> (O) { O(i) +=! A(i,k) }", "no floating-point input"),
    "integer_outputs": ("def p(float(N) A) -> (O) { O(i) = int32(A(i)) }", "no floating-point output"),
    "polymorphic": ("def r(float(...) X) -> (O) { O(...) = fmax(X(...), 0) }", "rank-polymorphic"),
    "float_modulo": ("def m(float(N) A, float(N) B) -> (O) { O(i) = A(i) % B(i) }", "'%'"),
}


# Accept-corpus cases whose finite differences legitimately disagree: a ?: choosing between
# equal values (a kink: the difference sees half of each side), size-0 inputs (min=! of none
# is +inf, so the loss is NaN), infinite outputs, and cases that need checked=0 to run at all.
CORPUS_SKIP = {
    "comparisons_logic": "ties on purpose at a ?: kink",
    "zero_size_input": "the loss of empty reductions is NaN",
    "gather_unchecked_clamps": "needs checked=0",
    "scatter_unchecked_skips_bad_indices": "needs checked=0",
    "scatter_unchecked_skips_bad_uint8_and_gathered_reads_clamp": "needs checked=0",
    "bfloat16_conversions": "its outputs are bfloat16 casts: finite differences of 8-bit values",
    "float_min_max_of_equal_zeros": "its outputs are infinities (1 / 0)",
}


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def all_double(src):
    """Every def's floating-point parameters as float64 (float16, bfloat16 and float32 included)."""
    return re.sub(r"def [^{]*\{",
                  lambda m: re.sub(r"\b(float|float32|float16|half|bfloat16|bf16)\b(?=\s*[(\s])", "double", m.group(0)),
                  src)


def run(prog, entry, inputs, backend):
    kernel = prog.compile(entry, inputs, {"backend": backend})
    outs = [np.zeros(shape, dtype) for dtype, shape in kernel.output_info()]
    kernel.run(inputs, outs)
    return outs


def check(name, backend):
    src, makers = CASES[name]
    entry = ENTRY.get(name)
    rng = rng_for(name)
    prog = tclib.Program(all_double(src))
    entry = entry or prog.def_names()[-1]
    inputs = [m(rng) for m in makers]
    inputs = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in inputs]
    outs = run(prog, entry, inputs, "reference")
    d_outs = [rng.standard_normal(o.shape) for o in outs if o.dtype.kind == "f"]
    grad = prog.gradient(entry)
    finite_difference_check(name, prog, grad, entry, inputs, d_outs, (backend,))


def finite_difference_check(name, prog, grad, entry, inputs, d_outs, backends, samples=None, rng=None):
    """Every (or `samples` random) element of every d_<input> against central differences."""
    float_inputs = [k for k, a in enumerate(inputs) if a.dtype.kind == "f"]
    got = {b: run(grad, entry + "_grad", inputs + d_outs, b) for b in backends}
    for b in backends:
        if len(got[b]) != len(float_inputs):
            raise AssertionError("%d gradients for %d floating-point inputs" % (len(got[b]), len(float_inputs)))

    def loss(args):
        o = [x for x in run(prog, entry, args, "reference") if x.dtype.kind == "f"]
        return sum(float(np.sum(a * d)) for a, d in zip(o, d_outs))

    for gi, k in enumerate(float_inputs):
        points = list(np.ndindex(*inputs[k].shape))
        if samples is not None and len(points) > samples:
            points = [points[i] for i in rng.choice(len(points), samples, replace=False)]
        for pos_ in points:
            args = [a.copy() for a in inputs]
            eps = 1e-6 * max(1.0, abs(float(inputs[k][pos_])))
            args[k][pos_] += eps
            up = loss(args)
            args[k][pos_] -= 2 * eps
            down = loss(args)
            numeric = (up - down) / (2 * eps)
            for b in backends:
                g = got[b][gi]
                if g.shape != inputs[k].shape:
                    raise AssertionError("d_input %d has shape %s, input %s" % (k, g.shape, inputs[k].shape))
                if not abs(numeric - g[pos_]) <= TOLERANCE.get(name, 1e-5) * max(1.0, abs(numeric)):
                    raise AssertionError("%s on %s: d_input %d at %s: gradient %r, finite difference %r\n%s"
                                         % (name, b, k, pos_, g[pos_], numeric, grad.source()))


def corpus_sweep():
    """The accept corpus: returns (checked, refused) counts; raises on the first bad gradient."""
    import cases_accept
    checked = refused = 0
    for case in cases_accept.CASES:
        if case.name in CORPUS_SKIP:
            continue
        prog = tclib.Program(all_double(case.src))
        entry = case.entry or prog.def_names()[-1]
        rng = rng_for(case.name)
        inputs = [np.asarray(a) for a in case.inputs(rng)]
        inputs = [tclib.from_bf16(a).astype(np.float64) if tclib.is_bf16(a.dtype)
                  else a.astype(np.float64) if a.dtype.kind == "f" else a for a in inputs]
        try:
            grad = prog.gradient(entry)
        except tclib.TCError as e:
            if e.status != TC_ERROR_UNSUPPORTED:  # anything else is a generator bug
                raise AssertionError("%s: %s" % (case.name, e))
            refused += 1
            continue
        outs = run(prog, entry, inputs, "reference")
        d_outs = [rng.standard_normal(o.shape).astype(o.dtype) for o in outs if o.dtype.kind == "f"]
        finite_difference_check(case.name, prog, grad, entry, inputs, d_outs, ("reference", "cpu"), 24, rng)
        checked += 1
    return checked, refused


def extreme(x):
    """Whether float tensor x holds a value beyond 1e20 in magnitude, an infinity or a NaN."""
    if tclib.is_bf16(x.dtype):
        x = tclib.from_bf16(x)
    if x.dtype.kind != "f":
        return False
    with np.errstate(invalid="ignore"):
        return not bool(np.all(np.abs(x.astype(np.float64)) <= 1e20))


def fuzz_sweep(programs, seed):
    """The differential fuzzer's random programs through tc_gradient: returns counts."""
    import random
    sys.path.insert(0, os.path.join(HERE, "..", "fuzz", "diff"))
    import gen
    import tcast
    generator = gen.Generator(random.Random(seed))
    counts = {"gradients": 0, "refused": 0, "not defined": 0, "extreme inputs": 0, "agree": 0}
    for k in range(programs):
        case = generator.case()
        src = tcast.fmt_prog(case["prog"])
        try:
            prog = tclib.Program(src)
        except tclib.TCError:
            counts["not defined"] += 1
            continue
        try:
            grad = prog.gradient("main")
        except tclib.TCError as e:
            if e.status != TC_ERROR_UNSUPPORTED:
                raise AssertionError("program %d (seed %d): %s\n%s" % (k, seed, e, src))
            counts["refused"] += 1
            continue
        counts["gradients"] += 1
        if any(spec["as_bool"] for spec in case["inputs"]):
            continue
        inputs = [np.ascontiguousarray(np.asarray(spec["data"])) for spec in case["inputs"]]
        # A gradient is a sum, which the cpu backend may reassociate (documented): with values
        # near float's limits or infinities in it, the order decides whatever is left.
        if any(extreme(x) for x in inputs):
            counts["extreme inputs"] += 1
            continue
        try:
            shapes = prog.infer_outputs("main", inputs)
        except tclib.TCError:
            continue
        d_outs = [tclib.bf16(np.ones(shape)) if tclib.is_bf16(dtype) else np.ones(shape, dtype)
                  for dtype, shape in shapes if np.dtype(dtype).kind == "f" or tclib.is_bf16(dtype)]
        results = []
        for backend in ("reference", "cpu"):
            try:
                results.append(run(grad, "main_grad", inputs + d_outs, backend))
            except tclib.TCError as e:
                results.append(e.status)
        a, b = results
        if isinstance(a, int) or isinstance(b, int):
            if a != b:
                raise AssertionError("program %d (seed %d): reference %r, cpu %r\n%s" % (
                    k, seed, a if isinstance(a, int) else "ok", b if isinstance(b, int) else "ok", grad.source()))
            continue
        for x, y in zip(a, b):
            if tclib.is_bf16(x.dtype):
                x, y = tclib.from_bf16(x), tclib.from_bf16(y)
            xf, yf = x.astype(np.float64), y.astype(np.float64)
            with np.errstate(invalid="ignore"):
                close = (xf == yf) | (np.isnan(xf) & np.isnan(yf)) | (np.abs(xf - yf) <= 1e-3 * np.maximum(1, np.abs(xf)))
            if not close.all():
                raise AssertionError("program %d (seed %d): the backends' gradients differ\n%s" % (k, seed, grad.source()))
        counts["agree"] += 1
    return counts


def reject(name):
    src, fragment = REJECTIONS[name]
    prog = tclib.Program(src)
    try:
        prog.gradient(prog.def_names()[-1])
    except tclib.TCError as e:
        if e.status != TC_ERROR_UNSUPPORTED or fragment not in (e.message or ""):
            raise AssertionError("status %d, message %r; expected UNSUPPORTED with %r" % (e.status, e.message, fragment))
        return
    raise AssertionError("tc_gradient accepted it")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="reference")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--corpus", action="store_true", help="sweep the accept corpus on both backends")
    ap.add_argument("--fuzz", type=int, default=0, help="this many random programs of the differential fuzzer")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    if args.list:
        print("\n".join(["grad." + c for c in CASES] + ["grad_reject." + c for c in REJECTIONS]))
        return 0
    if args.corpus:
        checked, refused = corpus_sweep()
        print("accept corpus: %d gradients agree with finite differences on both backends, %d defs refused "
              "(UNSUPPORTED), %d skipped" % (checked, refused, len(CORPUS_SKIP)))
        return 0
    if args.fuzz:
        print("fuzzed programs (seed %d): %s" % (args.seed, fuzz_sweep(args.fuzz, args.seed)))
        return 0
    names = args.names or ["grad." + c for c in CASES] + ["grad_reject." + c for c in REJECTIONS]
    failed = 0
    for full in names:
        kind, _, name = full.partition(".")
        try:
            check(name, args.backend) if kind == "grad" else reject(name)
            print("PASS", full)
        except Exception as e:  # noqa: BLE001 - report every case
            failed += 1
            print("FAIL", full, "-", e)
    print("%d passed, %d failed" % (len(names) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

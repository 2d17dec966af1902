"""test_autograd.py - tc.gradient (tc_gradient) and tc.autograd.

The generated gradient programs: their def name, source, inputs and outputs (names, dtypes,
shapes), independence from the program they came from, and the errors for what libtc cannot
differentiate. tc.autograd: torch.autograd.gradcheck in float64 on backend=reference and
backend=cpu of the benchmark corpus (bench/kernels/*.tc, the texts themselves with float made
double), the TC paper's fcrelu with in-place updates, elementwise builtins, a ternary ReLU, two
outputs and a scalar input; and the binding's own work: grads autograd passes as None,
non-contiguous grads, integer and bool outputs, integer inputs and inputs that need no grad,
float32 and float64 against PyTorch's own gradients, half, one gradient program per callable
and one compile per signature, and the errors tc.autograd raises itself.

Run: TC_LIBRARY=build/src/libtc.so PYTHONPATH=bindings/python /usr/bin/python3 -m unittest
test_autograd (ctest: bindings.python.test_autograd). Skipped without PyTorch.
"""
import os
import re
import subprocess
import sys
import unittest
import zlib

import numpy as np

try:
    import torch
except ImportError as e:  # ctest registers this module only where torch imports
    raise unittest.SkipTest("PyTorch cannot be imported: %s" % e)

import tc

KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench",
                       "kernels")

MM = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }"


def corpus(name):
    """bench/kernels/NAME.tc with float(...) made double(...): gradcheck's finite differences
    need float64."""
    with open(os.path.join(KERNELS, name + ".tc")) as f:
        text = f.read()
    double, count = re.subn(r"\bfloat\(", "double(", text)
    assert count, "%s.tc declares no float tensor" % name
    return double


# ---- the gradcheck cases: name -> (TC source, entry, inputs from a seeded generator) -------------

def uniform(g, *shape, lo=-1.0, hi=1.0):
    """float64 in [lo, hi) that requires grad. Values within 1e-6 of a kink (ReLU's 0, a max)
    would make finite differences straddle it; in (-1, 1) that is a 1e-6 chance per element,
    and the generators are seeded, so the data is the same every run."""
    return (torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).requires_grad_()


def distinct(g, *shape):
    """float64 values 0.1 apart in random order: a max over any window has one winner, and a
    finite-difference step of 1e-6 never changes which."""
    n = 1
    for s in shape:
        n *= s
    return (torch.randperm(n, generator=g).to(torch.float64).reshape(shape) / 10).requires_grad_()


def indices(g, high, *shape):
    return torch.randint(0, high, shape, generator=g, dtype=torch.int32)


FCRELU_PAPER = """
def fcrelu(double(B,M) I, double(N,M) W1, double(N) B1) -> (O1) {
  O1(b,n) +=! I(b,m) * W1(n,m)
  O1(b,n) = O1(b,n) + B1(n)
  O1(b,n) = fmax(O1(b,n), 0)
}
"""


def elementwise(name, expression, lo=-1.0, hi=1.0):
    """A one-statement def O(i) = expression of X(i), on X in [lo, hi)."""
    source = "def %s(double(N) X) -> (O) { O(i) = %s }" % (name, expression)
    return source, name, lambda g: (uniform(g, 5, lo=lo, hi=hi),)


CASES = {
    "mm": (corpus("sgemm"), "sgemm", lambda g: (uniform(g, 3, 4), uniform(g, 4, 2))),
    "tmm": (corpus("tmm"), "tmm", lambda g: (uniform(g, 3, 4), uniform(g, 2, 4))),
    "tbmm": (corpus("tbmm"), "tbmm", lambda g: (uniform(g, 2, 3, 4), uniform(g, 2, 2, 4))),
    "conv2d": (corpus("conv2d"), "conv2d",
               lambda g: (uniform(g, 1, 2, 4, 4), uniform(g, 2, 2, 2, 2))),
    "group_conv": (corpus("group_conv"), "group_conv",
                   lambda g: (uniform(g, 1, 2, 2, 4, 4), uniform(g, 2, 2, 2, 2, 2))),
    "fcrelu": (corpus("fcrelu"), "fcrelu",
               lambda g: (uniform(g, 3, 4), uniform(g, 2, 4), uniform(g, 2))),
    "fcrelu_paper": (FCRELU_PAPER, "fcrelu",
                     lambda g: (uniform(g, 3, 4), uniform(g, 2, 4), uniform(g, 2))),
    "mlp3": (corpus("mlp3"), "mlp3",
             lambda g: (uniform(g, 2, 4), uniform(g, 3, 4), uniform(g, 3), uniform(g, 3, 3),
                        uniform(g, 3), uniform(g, 2, 3), uniform(g, 2))),
    "softmax": (corpus("softmax"), "softmax", lambda g: (uniform(g, 3, 4),)),
    "layernorm": (corpus("layernorm"), "layernorm",
                  lambda g: (uniform(g, 3, 4), uniform(g, 4), uniform(g, 4))),
    "lut1": (corpus("lut1"), "lut1", lambda g: (uniform(g, 5, 3), indices(g, 5, 2, 3))),
    "lut2": (corpus("lut2"), "lut2",
             lambda g: (uniform(g, 5, 3), indices(g, 5, 2, 3), uniform(g, 4, 3),
                        indices(g, 4, 2, 2))),
    "maxpool": (corpus("maxpool"), "maxpool", lambda g: (distinct(g, 1, 2, 4, 4),)),
    "tanh": elementwise("f_tanh", "tanh(X(i))"),
    "exp": elementwise("f_exp", "exp(X(i))"),
    "log": elementwise("f_log", "log(X(i))", lo=0.5, hi=2.0),
    "sqrt": elementwise("f_sqrt", "sqrt(X(i))", lo=0.5, hi=2.0),
    "sigmoid": elementwise("f_sigmoid", "1 / (1 + exp(-X(i)))"),
    "relu_ternary": elementwise("f_relu", "X(i) > 0 ? X(i) : 0"),
    "pow": ("def f_pow(double(N) X, double(N) Y) -> (O) { O(i) = pow(X(i), Y(i)) }", "f_pow",
            lambda g: (uniform(g, 5, lo=0.5, hi=2.0), uniform(g, 5))),
    "two_outputs": ("def two(double(M,K) X, double(K) v) -> (y, z) {\n"
                    "  y(i) +=! X(i,k) * v(k)\n  z(i,k) = X(i,k) * X(i,k)\n}", "two",
                    lambda g: (uniform(g, 3, 4), uniform(g, 4))),
    "scalar_input": ("def axpy(double a, double(N) X, double(N) Y) -> (O) {\n"
                     "  O(i) = a * X(i) + Y(i)\n}", "axpy",
                     lambda g: (uniform(g), uniform(g, 5), uniform(g, 5))),
}


def case_inputs(name):
    # crc32, not hash(): str hashes change per process unless PYTHONHASHSEED is set
    return CASES[name][2](torch.Generator().manual_seed(zlib.crc32(name.encode())))


class _Gradcheck:
    """gradcheck of every case on one backend (subclasses set BACKEND)."""
    BACKEND = None

    def gradcheck(self, name):
        source, entry, _ = CASES[name]
        f = tc.autograd(tc.define(source, name=name + ".tc"), entry, backend=self.BACKEND)
        inputs = case_inputs(name)
        # In float64 the analytical Jacobian and central differences agree to 1e-9 or better on
        # these sizes; gradcheck's default tolerances (atol 1e-5, rtol 1e-3) would pass a
        # gradient that is 0.1% off. A failure raises, reporting the Jacobians that differ.
        self.assertTrue(torch.autograd.gradcheck(f, inputs, eps=1e-6, atol=1e-8, rtol=1e-6))
        # One signature throughout: the def and its gradient compiled once each.
        self.assertEqual([k[0] for k in f.kernels], ["forward", "backward"])


def _add_gradcheck_tests(cls):
    for name in CASES:
        setattr(cls, "test_" + name, lambda self, name=name: self.gradcheck(name))
    return cls


@_add_gradcheck_tests
class GradcheckReference(_Gradcheck, unittest.TestCase):
    BACKEND = "reference"


@_add_gradcheck_tests
class GradcheckCpu(_Gradcheck, unittest.TestCase):
    BACKEND = "cpu"


# ---- the gradient programs -----------------------------------------------------------------------

class GradientProgram(unittest.TestCase):
    def test_mm_grad_signature_and_source(self):
        prog = tc.define(MM)
        g = tc.gradient(prog, "mm")
        self.assertIsInstance(g, tc.Program)
        self.assertEqual(g.defs, ("mm_grad",))
        self.assertIn("def mm_grad", g.source)
        self.assertEqual(prog.source, MM)  # the original is untouched
        self.assertEqual(g.inputs(), [tc.Param("A", "float32", ("M", "K")),
                                      tc.Param("B", "float32", ("K", "N")),
                                      tc.Param("d_C", "float32", ("M", "N"))])
        self.assertEqual(g.outputs(), [tc.Param("d_A", "float32", ("M", "K")),
                                       tc.Param("d_B", "float32", ("K", "N"))])
        A, B, dC = torch.zeros(3, 5), torch.zeros(5, 2), torch.zeros(3, 2)
        self.assertEqual(g.infer_outputs("mm_grad", A, B, dC),
                         [tc.TensorInfo("float32", (3, 5)), tc.TensorInfo("float32", (5, 2))])
        # entry None is the only def; the method and the function are the same call
        self.assertEqual(prog.gradient().source, g.source)

    def test_generated_source_defines_the_same_program(self):
        g = tc.define(MM).gradient()
        again = tc.define(g.source)
        self.assertEqual(again.defs, g.defs)
        self.assertEqual(again.inputs("mm_grad"), g.inputs("mm_grad"))
        self.assertEqual(again.outputs("mm_grad"), g.outputs("mm_grad"))

    def test_gradient_outlives_its_program(self):
        prog = tc.define(MM)
        g = prog.gradient("mm")
        prog.close()
        A, B, dC = torch.ones(2, 3), torch.ones(3, 4), torch.ones(2, 4)
        dA, dB = g.compile("mm_grad", A, B, dC, backend="reference")(A, B, dC)
        torch.testing.assert_close(dA, dC @ B.T)
        torch.testing.assert_close(dB, A.T @ dC)

    def test_integer_inputs_and_outputs_carry_no_gradient(self):
        g = tc.define(corpus("lut1")).gradient()
        self.assertEqual([p.name for p in g.inputs()], ["LUT", "I", "d_O"])
        self.assertEqual([(p.name, p.dtype) for p in g.outputs()], [("d_LUT", "float64")])
        prog = tc.define("def f(double(N) X, int32(N) K) -> (Y, J) {\n"
                         "  Y(i) = X(i) * double(K(i))\n  J(i) = K(i) + 1\n}")
        g = prog.gradient("f")
        self.assertEqual([(p.name, p.dtype) for p in g.inputs()],
                         [("X", "float64"), ("K", "int32"), ("d_Y", "float64")])
        self.assertEqual([p.name for p in g.outputs()], ["d_X"])

    def test_integer_only_program_is_unsupported(self):
        prog = tc.define("def twice(int32(N) X) -> (Y) { Y(i) = X(i) * 2 }")
        with self.assertRaises(NotImplementedError) as cm:
            prog.gradient()
        e = cm.exception
        self.assertIs(type(e), tc.TcUnsupportedError)
        self.assertEqual(e.status_name, "TC_ERROR_UNSUPPORTED")
        self.assertIn("cannot differentiate 'twice'", e.message)
        self.assertIn("no floating-point input", e.message)

    def test_product_reduction_is_unsupported_naming_the_statement(self):
        prog = tc.define("def prod(float(N,K) A) -> (P) {\n  P(i) *=! A(i,k)\n}", name="prod.tc")
        with self.assertRaises(tc.TcUnsupportedError) as cm:
            tc.gradient(prog, "prod")
        message = cm.exception.message
        self.assertIn("prod.tc:2:", message)  # where the statement is, and why
        self.assertIn("cannot differentiate 'prod': '*=' reductions have no gradient", message)
        self.assertIn("P(i) *=! A(i,k)", message)
        with self.assertRaises(tc.TcUnsupportedError):
            tc.autograd(prog)  # refused when the callable is made, not at the first backward

    def test_entry_errors_are_libtcs(self):
        prog = tc.define(MM + "\ndef twice(float(N) X) -> (Y) { Y(i) = X(i) * 2 }")
        with self.assertRaises(tc.TcInvalidArgumentError) as cm:
            prog.gradient()  # two defs: which one?
        self.assertIn("mm, twice", cm.exception.message)
        with self.assertRaises(tc.TcInvalidArgumentError) as cm:
            prog.gradient("nope")
        self.assertIn("nope", cm.exception.message)
        self.assertEqual(prog.gradient("twice").defs, ("twice_grad",))


# ---- tc.autograd's own work ----------------------------------------------------------------------

def leaf(t):
    return t.detach().clone().requires_grad_()


class AutogradCallable(unittest.TestCase):
    def setUp(self):
        g = torch.Generator().manual_seed(5)
        self.A = torch.randn(3, 4, generator=g, dtype=torch.float64)
        self.B = torch.randn(4, 2, generator=g, dtype=torch.float64)

    def test_matches_torch_in_float32_and_float64(self):
        mm = tc.autograd(tc.define(MM.replace("float", "double")), backend="reference")
        mm32 = tc.autograd(tc.define(MM), backend="reference")
        for f, dtype in ((mm, torch.float64), (mm32, torch.float32)):
            A, B = leaf(self.A.to(dtype)), leaf(self.B.to(dtype))
            W = torch.randn(3, 2, generator=torch.Generator().manual_seed(6), dtype=dtype)
            C = f(A, B)
            self.assertIsInstance(C, torch.Tensor)
            self.assertEqual(C.dtype, dtype)
            torch.testing.assert_close(C, A @ B)
            got = torch.autograd.grad((C * W).sum(), (A, B))
            want = torch.autograd.grad(((A @ B) * W).sum(), (A, B))
            for g, w in zip(got, want):
                self.assertEqual(g.dtype, dtype)
                torch.testing.assert_close(g, w)

    def test_only_inputs_that_require_grad_get_one(self):
        mm = tc.autograd(tc.define(MM.replace("float", "double")), backend="reference")
        A, B = leaf(self.A), self.B.clone()  # B does not require grad
        mm(A, B).sum().backward()
        torch.testing.assert_close(A.grad, torch.ones(3, 2, dtype=torch.float64) @ B.T)
        self.assertIsNone(B.grad)

    def test_half(self):
        mm = tc.autograd(tc.define(MM.replace("float", "half")), backend="reference")
        # small integers: exact in half; PyTorch's CPU matmul has no half, so float32 checks
        A, B = (torch.tensor(x, dtype=torch.float16, requires_grad=True)
                for x in ([[1, -2, 0], [3, 1, 2]], [[2, 1], [0, -1], [1, 3]]))
        W = torch.tensor([[1, 2], [-1, 0]], dtype=torch.float16)
        (mm(A, B) * W).sum().backward()
        self.assertEqual((A.grad.dtype, B.grad.dtype), (torch.float16, torch.float16))
        self.assertEqual(A.grad.tolist(), (W.float() @ B.detach().float().T).tolist())
        self.assertEqual(B.grad.tolist(), (A.detach().float().T @ W.float()).tolist())

    def test_non_contiguous_grads(self):
        mm = tc.autograd(tc.define(MM.replace("float", "double")), backend="reference")
        A, B = leaf(self.A), leaf(self.B)
        W = torch.randn(2, 3, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
        # C.t() makes C's grad W.t(), a transposed view; C.sum() an expanded one (stride 0).
        for loss in (lambda C: (C.t() * W).sum(), lambda C: C.sum(), lambda C: C[:, 1].sum()):
            got = torch.autograd.grad(loss(mm(A, B)), (A, B))
            want = torch.autograd.grad(loss(A @ B), (A, B))
            for g, w in zip(got, want):
                torch.testing.assert_close(g, w)

    def test_unused_output_grad_is_none(self):
        # A loss of one output: autograd passes None for the other's grad (tc.autograd turns
        # materialisation off), which the binding makes zeros for the gradient kernel.
        source, entry, _ = CASES["two_outputs"]
        f = tc.autograd(tc.define(source), entry, backend="reference")
        X, v = leaf(self.A), leaf(self.B[:, 0])
        dX, dv = torch.autograd.grad(f(X, v)[0].sum(), (X, v))      # y = X v only
        want = torch.autograd.grad((X @ v).sum(), (X, v))
        torch.testing.assert_close(dX, want[0])
        torch.testing.assert_close(dv, want[1])
        dX, dv = torch.autograd.grad(f(X, v)[1].sum(), (X, v))      # z = X * X only
        torch.testing.assert_close(dX, 2 * X.detach())
        torch.testing.assert_close(dv, torch.zeros_like(v))         # z does not use v

    def test_integer_and_bool_outputs_are_not_differentiable(self):
        prog = tc.define("def f(double(N) X, int32(N) K) -> (Y, J, P) {\n"
                         "  Y(i) = X(i) * double(K(i))\n  J(i) = K(i) + 1\n  P(i) = X(i) > 0\n}")
        f = tc.autograd(prog, backend="reference")
        X, K = leaf(self.A[0]), torch.tensor([1, -2, 3, 0], dtype=torch.int32)
        Y, J, P = f(X, K)
        self.assertTrue(Y.requires_grad)
        self.assertFalse(J.requires_grad)
        self.assertEqual(J.dtype, torch.int32)
        self.assertEqual(J.tolist(), [2, -1, 4, 1])
        if isinstance(P, torch.Tensor):
            self.assertFalse(P.requires_grad)
        else:  # PyTorch < 2.0 cannot take bool through DLPack: the binding's tc.Tensor
            self.assertIsInstance(P, tc.Tensor)
        self.assertEqual(np.asarray(P).tolist(), (X > 0).tolist())
        (dX,) = torch.autograd.grad(Y.sum(), (X,))
        torch.testing.assert_close(dX, K.to(torch.float64))

    def test_integer_input_gets_no_gradient(self):
        f = tc.autograd(tc.define(corpus("lut1")), backend="reference")
        g = torch.Generator().manual_seed(3)
        LUT, I = uniform(g, 5, 3), indices(g, 5, 2, 4)
        O = f(LUT, I)
        O.backward(torch.ones_like(O))
        want = torch.zeros(5, 3, dtype=torch.float64)
        want.index_add_(0, I.flatten().long(), torch.ones(8, 3, dtype=torch.float64))
        torch.testing.assert_close(LUT.grad, want)  # row e: how often e was looked up
        self.assertIsNone(I.grad)

    def test_gradient_once_kernels_once_per_signature(self):
        prog = tc.define(MM.replace("float", "double"))
        mm = tc.autograd(prog, "mm", backend="reference")
        gradient = mm.gradient
        self.assertEqual(mm.gradient_entry, "mm_grad")
        for _ in range(2):
            A, B = leaf(self.A), leaf(self.B)
            mm(A, B).sum().backward()
        self.assertIs(mm.gradient, gradient)
        self.assertEqual(sorted(k[0] for k in mm.kernels), ["backward", "forward"])
        A2 = leaf(self.A[:2])
        mm(A2, leaf(self.B)).sum().backward()  # a new signature: a kernel of each
        self.assertEqual(sorted(k[0] for k in mm.kernels), ["backward", "backward", "forward",
                                                            "forward"])
        for kernel in mm.kernels.values():
            self.assertIn("reference", kernel.describe())

    def test_no_grad_runs_forward_only(self):
        mm = tc.autograd(tc.define(MM.replace("float", "double")), backend="reference")
        with torch.no_grad():
            C = mm(leaf(self.A), leaf(self.B))
        self.assertFalse(C.requires_grad)
        torch.testing.assert_close(C, self.A @ self.B)
        self.assertEqual([k[0] for k in mm.kernels], ["forward"])

    def test_argument_errors(self):
        prog = tc.define(MM)
        with self.assertRaises(tc.TcInvalidArgumentError) as cm:
            tc.autograd(prog, backend="no-such-backend")  # checked when the callable is made
        self.assertIn("no-such-backend", cm.exception.message)
        mm = tc.autograd(prog)
        with self.assertRaises(TypeError) as cm:
            mm(self.A.float().numpy(), self.B.float())
        self.assertIn("input 0 is a ndarray, not a torch.Tensor", str(cm.exception))
        with self.assertRaises(tc.TcShapeError):
            mm(self.A.float(), self.A.float())  # libtc checks shapes: K is 4, got 3

    def test_without_torch_is_an_import_error(self):
        # A fresh interpreter in which `import torch` fails: import tc works, autograd says why.
        probe = ("import sys; sys.modules['torch'] = None\n"
                 "import tc\nprog = tc.define(%r)\nprog.gradient()\n"
                 "try:\n    tc.autograd(prog)\nexcept ImportError as e:\n    print(e)\n" % MM)
        r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("tc.autograd needs PyTorch", r.stdout)


if __name__ == "__main__":
    unittest.main()

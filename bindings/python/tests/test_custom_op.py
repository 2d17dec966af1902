"""test_custom_op.py - tc.custom_op: a TC def as a PyTorch operator (torch.ops.<ns>.<name>).

On the PyTorch at hand (Debian's 1.13 in CI: the torch.library.Library registration; >= 2.4:
torch.library.custom_op): the schema from the def's signature; eager calls on the CPU against
PyTorch's own result (one output and two, an integer output); meta tensors give the outputs'
shapes and dtypes without compiling anything, and a shape libtc refuses is its error there too;
torch.jit.script of a function calling the op; torch.autograd.gradcheck through the op in
float64 (mm, fcrelu with two statements), grads of float32 inputs against PyTorch's, an input
that needs no grad; a def libtc cannot differentiate still runs forward; one compile per
signature; the errors custom_op raises itself (bad name, several defs and no entry, a bad
option, the same name twice). tools/gpu-check.sh runs the CUDA kernel and torch.compile.

Run: TC_LIBRARY=build/src/libtc.so PYTHONPATH=bindings/python /usr/bin/python3 -m unittest
test_custom_op (ctest: bindings.python.test_custom_op). Skipped without PyTorch.
"""
import unittest

try:
    import torch
except ImportError as e:  # ctest registers this module only where torch imports
    raise unittest.SkipTest("PyTorch cannot be imported: %s" % e)

import tc

MM = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }"
MMD = MM.replace("float(", "double(")
FCRELU = """def fcrelu(double(B,M) I, double(N,M) W1, double(N) B1) -> (O1) {
  O1(b, n) +=! I(b, m) * W1(n, m)
  O1(b, n) = O1(b, n) + B1(n)
  O1(b, n) = fmax(O1(b, n), 0)
}"""
TWO = """def two(float(N) X, float(N) Y) -> (S, D, C) {
  S(i) = X(i) + Y(i)
  D(i) = X(i) - Y(i)
  C(i) = int32(X(i) > Y(i))
}"""
ROWPROD = "def rowprod(float(M,N) X) -> (P) { P(i) *=! X(i,j) }"  # tc_gradient refuses '*=' 


def mm_op():
    """torch.ops.tctest.mm, registered once for the module's tests."""
    if not hasattr(torch.ops.tctest, "mm"):
        tc.custom_op(tc.define(MM), "mm", "tctest::mm")
    return torch.ops.tctest.mm


def two_op():
    """torch.ops.tctest.two, registered once for the module's tests."""
    if not hasattr(torch.ops.tctest, "two"):
        tc.custom_op(tc.define(TWO), None, "tctest::two")
    return torch.ops.tctest.two


def mm_scripted(A, B):
    return torch.ops.tctest.mm(A, B) * 2


class CustomOp(unittest.TestCase):
    def test_eager_cpu(self):
        op = mm_op()
        g = torch.Generator().manual_seed(1)
        A, B = torch.randn(7, 5, generator=g), torch.randn(5, 3, generator=g)
        C = op(A, B)
        self.assertIsInstance(C, torch.Tensor)
        torch.testing.assert_close(C, A @ B)
        torch.testing.assert_close(op(A.t().contiguous().t(), B), A @ B)  # strided input

    def test_schema_from_the_signature(self):
        mm_op()
        schema = str(torch.ops.tctest.mm.default._schema)
        self.assertIn("tctest::mm(Tensor A, Tensor B) -> Tensor", schema)

    def test_several_outputs_and_an_integer_one(self):
        op = two_op()
        X, Y = torch.tensor([1.0, 5.0, 2.0]), torch.tensor([2.0, 1.0, 2.0])
        S, D, C = op(X, Y)
        torch.testing.assert_close(S, X + Y)
        torch.testing.assert_close(D, X - Y)
        self.assertEqual(C.dtype, torch.int32)
        self.assertEqual(C.tolist(), [0, 1, 0])
        self.assertIn("-> (Tensor, Tensor, Tensor)", str(op.default._schema))

    def test_meta_tensors(self):
        op = mm_op()
        C = op(torch.empty(7, 5, device="meta"), torch.empty(5, 3, device="meta"))
        self.assertEqual((C.device.type, tuple(C.shape), C.dtype), ("meta", (7, 3), torch.float32))
        S, D, C = two_op()(torch.empty(4, device="meta"), torch.empty(4, device="meta"))
        self.assertEqual([t.dtype for t in (S, D, C)], [torch.float32, torch.float32, torch.int32])
        # libtc's shape check, without data: K is 5 from A, B says 4
        with self.assertRaises(tc.TcShapeError) as e:
            op(torch.empty(7, 5, device="meta"), torch.empty(4, 3, device="meta"))
        self.assertIn("size 'K' is 5", str(e.exception))

    def test_jit_script(self):
        mm_op()
        scripted = torch.jit.script(mm_scripted)
        A, B = torch.ones(2, 3), torch.ones(3, 4)
        torch.testing.assert_close(scripted(A, B), torch.full((2, 4), 6.0))
        self.assertIn("tctest::mm", str(scripted.graph))

    def test_gradcheck(self):
        op = tc.custom_op(tc.define(MMD), "mm", "tctest::mmd")
        g = torch.Generator().manual_seed(2)
        A = torch.randn(4, 3, dtype=torch.float64, generator=g, requires_grad=True)
        B = torch.randn(3, 5, dtype=torch.float64, generator=g, requires_grad=True)
        self.assertTrue(torch.autograd.gradcheck(op, (A, B)))
        fc = tc.custom_op(tc.define(FCRELU), "fcrelu", "tctest::fcrelu")
        I = torch.randn(3, 4, dtype=torch.float64, generator=g, requires_grad=True)
        W = torch.randn(5, 4, dtype=torch.float64, generator=g, requires_grad=True)
        b = torch.randn(5, dtype=torch.float64, generator=g, requires_grad=True)
        self.assertTrue(torch.autograd.gradcheck(fc, (I, W, b)))

    def test_grads_against_pytorch(self):
        op = mm_op()
        g = torch.Generator().manual_seed(3)
        A = torch.randn(6, 4, generator=g, requires_grad=True)
        B = torch.randn(4, 5, generator=g)  # needs no grad
        op(A, B).sum().backward()
        A2 = A.detach().clone().requires_grad_()
        (A2 @ B).sum().backward()
        torch.testing.assert_close(A.grad, A2.grad)
        self.assertIsNone(B.grad)

    def test_a_def_without_a_gradient_runs_forward(self):
        op = tc.custom_op(tc.define(ROWPROD), None, "tctest::rowprod")
        X = torch.tensor([[1.0, 7.0, 3.0], [2.0, 0.5, 4.0]])
        torch.testing.assert_close(op(X), torch.tensor([21.0, 4.0]))

    def test_one_compile_per_signature(self):
        prog = tc.define(MM)
        compiles = []
        original = prog.compile

        def counting(*args, **kwargs):
            compiles.append(args[0])
            return original(*args, **kwargs)

        prog.compile = counting
        op = tc.custom_op(prog, "mm", "tctest::counted")
        for _ in range(3):
            op(torch.ones(2, 3), torch.ones(3, 4))
        op(torch.ones(2, 3), torch.ones(3, 5))
        self.assertEqual(compiles, ["mm", "mm"])

    def test_options_reach_the_kernel(self):
        op = tc.custom_op(tc.define(MM), "mm", "tctest::mm_reference", backend="reference")
        torch.testing.assert_close(op(torch.ones(2, 3), torch.ones(3, 4)), torch.full((2, 4), 3.0))

    def test_errors(self):
        prog = tc.define(MM)
        for bad in ("mm", "tctest:mm", "tctest::", "1ns::mm", "tctest::mm::x"):
            with self.assertRaises(ValueError) as e:
                tc.custom_op(prog, "mm", bad)
            self.assertIn("'namespace::name'", str(e.exception))
        with self.assertRaises(ValueError) as e:
            tc.custom_op(tc.define(MM + "\n" + TWO), None, "tctest::nope")
        self.assertIn("name the entry", str(e.exception))
        with self.assertRaises(tc.TcInvalidArgumentError):
            tc.custom_op(prog, "mm", "tctest::bad_option", **{"cpu.tile": "banana"})
        with self.assertRaises(tc.TcInvalidArgumentError):
            tc.custom_op(prog, "nothere", "tctest::no_def")
        mm_op()
        with self.assertRaises(RuntimeError) as e:  # one operator per name
            tc.custom_op(prog, "mm", "tctest::mm")
        self.assertIn("'tctest::mm' is already registered", str(e.exception))


if __name__ == "__main__":
    unittest.main()

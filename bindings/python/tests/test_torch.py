"""test_torch.py - the Python binding on PyTorch tensors: torch in -> torch out (zero-copy),
strided and offset views, out= into a view of a larger tensor, 0-d tensors, several dtypes,
mixing with NumPy, and the bool fallback (PyTorch < 2.0 cannot take bool through DLPack).
"""
import unittest

import numpy as np
import torch

import tc

MM = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }"


def small_ints(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-4, 5, shape, generator=g).to(dtype)


class Torch(unittest.TestCase):
    def setUp(self):
        self.prog = tc.define(MM)

    def test_torch_in_torch_out(self):
        A, B = small_ints(3, 5, seed=1), small_ints(5, 4, seed=2)
        C = self.prog.compile("mm", A, B)(A, B)
        self.assertIsInstance(C, torch.Tensor)
        self.assertEqual(C.dtype, torch.float32)
        self.assertEqual(tuple(C.shape), (3, 4))
        self.assertTrue(torch.equal(C, A @ B))
        C[0, 0] = 99  # an ordinary, writable tensor
        self.assertEqual(float(C[0, 0]), 99)

    def test_strided_views(self):
        base = small_ints(8, 12, seed=3)
        A = base[1:7:2, 2:12:2]          # 3x5, steps and an offset
        B = small_ints(4, 5, seed=4).t()  # transposed
        self.assertFalse(A.is_contiguous() or B.is_contiguous())
        self.assertTrue(torch.equal(self.prog.mm(A, B), A @ B))

    def test_plain_tensors_are_described_as_their_capsules_describe_them(self):
        # The binding writes a plain torch tensor's DLTensor from its attributes: field for field
        # what its __dlpack__ capsule holds (a view with an offset, a transposed one, 0-d, bool,
        # bfloat16, int8); a tensor that requires grad takes the capsule path, whose error is
        # PyTorch's.
        import contextlib
        from tc import _tensors
        base = torch.arange(96, dtype=torch.float32).reshape(8, 12)
        tensors = [base[1:7:2, 2:12:2], base.t(), torch.tensor(2.5, dtype=torch.float64),
                   torch.tensor([True, False]), torch.ones(3, 2, dtype=torch.bfloat16), torch.zeros(2, 3, 4, dtype=torch.int8)]
        for t in tensors:
            self.assertIsNotNone(_tensors._torch_fields(t))
        with contextlib.ExitStack() as stack:
            fast = _tensors._borrow_all(stack, tensors, "input", False)
            for i, t in enumerate(tensors):
                try:
                    slow = tc._dlpack.borrow(t, "input", False)
                except RuntimeError:  # PyTorch < 2.0 exports no bool tensor; the binding takes them
                    self.assertEqual(t.dtype, torch.bool)
                    continue
                stack.callback(slow.release)
                a, b = fast[i], slow.tensor
                self.assertEqual((a.data or 0) + a.byte_offset, (b.data or 0) + b.byte_offset, i)
                self.assertEqual((a.device.device_type, a.device.device_id, a.ndim), (b.device.device_type, b.device.device_id, b.ndim))
                self.assertEqual((a.dtype.code, a.dtype.bits, a.dtype.lanes), (b.dtype.code, b.dtype.bits, b.dtype.lanes))
                self.assertEqual([a.shape[d] for d in range(a.ndim)], [b.shape[d] for d in range(b.ndim)])
                self.assertEqual([a.strides[d] for d in range(a.ndim)], list(t.stride()))
        positive = tc.define("def pos(bool(N) M, float(N) X) -> (Y) { Y(i) = M(i) ? X(i) : 0 }")
        Y = positive.pos(torch.tensor([True, False, True]), torch.tensor([1.0, 2.0, 3.0]))
        self.assertEqual(Y.tolist(), [1.0, 0.0, 3.0])
        grad = torch.ones(3, 5, requires_grad=True)
        self.assertIsNone(_tensors._torch_fields(grad))
        with self.assertRaisesRegex(RuntimeError, "require"):
            self.prog.mm(grad, torch.ones(5, 2))

    def test_out_into_a_view_writes_the_original_tensor(self):
        A, B = small_ints(3, 5, seed=5), small_ints(5, 4, seed=6)
        big = torch.full((6, 8), -1.0)
        view = big[::2, 1::2]  # 3x4
        self.assertIs(self.prog.mm(A, B, out=(view,)), view)
        expected = torch.full((6, 8), -1.0)
        expected[::2, 1::2] = A @ B
        self.assertTrue(torch.equal(big, expected))

    def test_empty_output_beside_a_non_empty_one(self):
        # torch.empty(0) may have a NULL data pointer: the other output must still be computed.
        prog = tc.define("def f(float(N) A, float(M) B) -> (O, P) { O(i) = A(i) * 2  P(j) = B(j) }")
        A, B = torch.tensor([1.0, 2.0, 3.0]), torch.empty(0)
        O, P = torch.zeros(3), torch.empty(0)
        prog.compile("f", A, B)(A, B, out=(O, P))
        self.assertEqual(O.tolist(), [2.0, 4.0, 6.0])

    def test_zero_dim_and_dtypes(self):
        prog = tc.define("def f(double(N) A, double s, int64(N) I) -> (B, J) {\n"
                         "  B(i) = A(i) * s\n  J(i) = I(i) * 3\n}")
        A = torch.arange(4, dtype=torch.float64)
        I = torch.tensor([1, -2, 2**40, 0], dtype=torch.int64)
        B, J = prog.f(A, torch.tensor(0.5, dtype=torch.float64), I)
        self.assertEqual((B.dtype, J.dtype), (torch.float64, torch.int64))
        self.assertTrue(torch.equal(B, A * 0.5))
        self.assertTrue(torch.equal(J, I * 3))

    def test_bfloat16_in_and_out(self):
        prog = tc.define("def f(bf16(N) X, bfloat16(N) Y) -> (S, F) {\n  S(i) = X(i) * Y(i) + 1\n"
                         "  F(i) = float(X(i))\n}")
        X = torch.tensor([1.0, -3.0, 1.0 + 2 ** -7, float("nan")], dtype=torch.bfloat16)
        Y = torch.tensor([3.0, 3.0, 3.0, 1.0], dtype=torch.bfloat16)
        S, F = prog.f(X, Y)
        self.assertEqual((S.dtype, F.dtype), (torch.bfloat16, torch.float32))
        # every product rounded to bfloat16 (3 + 3 * 2^-7 ties to 3 + 2^-5), then + 1 rounded again
        want = (X.float() * Y.float()).to(torch.bfloat16).float() + 1
        self.assertTrue(torch.equal(S[:3].float(), want[:3].to(torch.bfloat16).float()), (S, want))
        self.assertEqual(S[2].item(), 4.03125)
        self.assertEqual(S.view(torch.int16)[3].item(), 0x7FC0)  # NaN: 0x7fc0, as PyTorch's
        torch.testing.assert_close(F[:3], X[:3].float())

    def test_bfloat16_output_of_numpy_inputs_is_a_tc_tensor(self):
        prog = tc.define("def f(float(N) X) -> (B) { B(i) = bf16(X(i)) }")
        B = prog.f(np.array([1.0, 1.0 + 2 ** -8, 3.0], np.float32))
        self.assertIsInstance(B, tc.Tensor)  # NumPy has no bfloat16
        self.assertEqual(B.dtype, "bfloat16")
        t = torch.from_dlpack(B)
        self.assertEqual(t.dtype, torch.bfloat16)
        self.assertEqual(t.tolist(), [1.0, 1.0, 3.0])  # 1 + 2^-8 ties to 1

    def test_output_kind_follows_the_first_input(self):
        A, B = small_ints(2, 3, seed=7), small_ints(3, 2, seed=8)
        self.assertIsInstance(self.prog.mm(A.numpy(), B), np.ndarray)
        self.assertIsInstance(self.prog.mm(A, B.numpy()), torch.Tensor)

    def test_torch_view_of_a_tc_tensor_shares_memory(self):
        t = tc.Tensor("float32", (2, 2))
        as_torch, as_numpy = torch.from_dlpack(t), np.asarray(t)
        as_torch[1, 0] = 5
        self.assertEqual(as_numpy[1, 0], 5)

    def test_outputs_are_allocated_by_torch(self):
        # A bool output too, which PyTorch 1.x cannot take through DLPack: torch allocates the
        # outputs of torch inputs, so no tc.Tensor goes through from_dlpack.
        prog = tc.define("def pos(float(N) A) -> (P, S) { P(i) = A(i) > 0\n S(i) += A(i) }")
        A = torch.tensor([-1.0, 2.0, 0.0, 3.0])
        P, S = prog.pos(A)
        self.assertIsInstance(P, torch.Tensor)
        self.assertEqual(P.dtype, torch.bool)
        np.testing.assert_array_equal(P.numpy(), [False, True, False, True])
        np.testing.assert_array_equal(S.numpy(), A.numpy())  # '+=' into zeros: S was not left uninitialised
        k = prog.compile("pos", A)
        self.assertEqual(k._overwritten, (True, False))

if __name__ == "__main__":
    unittest.main()


class CudaBackend(unittest.TestCase):
    """backend=cuda from Python without a GPU: the emulation on torch CPU tensors, and the
    device checks. (CUDA tensors themselves are tested by tools/gpu-check.sh on a GPU.)"""

    def setUp(self):
        self.prog = tc.define(MM)

    def test_emulated_kernel_on_torch_tensors(self):
        A, B = small_ints(3, 5, seed=5), small_ints(5, 4, seed=6)
        k = self.prog.compile("mm", A, B, backend="cuda", **{"cuda.emulate": "1"})
        C = k(A, B)
        self.assertIsInstance(C, torch.Tensor)
        self.assertTrue(torch.equal(C, A @ B))
        self.assertIn('extern "C" __global__ void mm_k0(', k.code())

    def test_a_cuda_tensor_of_another_library_needs_out(self):
        class Foreign:  # says it lives in CUDA memory; libtc cannot allocate its outputs
            def __dlpack_device__(self):
                return (2, 0)

            def __dlpack__(self, **kwargs):
                raise AssertionError("not reached")

        k = self.prog.compile("mm", torch.zeros(3, 5), torch.zeros(5, 4))
        with self.assertRaisesRegex(TypeError, "libtc allocates CUDA outputs through PyTorch or CuPy only"):
            k(Foreign(), Foreign())

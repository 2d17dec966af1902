"""test_numpy.py - the Python binding end to end on NumPy arrays: compile/call, the prog.NAME
shortcut and its kernel cache, infer_outputs, out= (zero-copy, accumulation), strided views,
0-d tensors, multiple outputs, dtypes, options, introspection, ownership and threads.

Run: TC_LIBRARY=build/src/libtc.so PYTHONPATH=bindings/python /usr/bin/python3 -m unittest
(ctest does this: bindings.python.*). Expected values come from NumPy.
"""
import gc
import threading
import unittest

import numpy as np

import tc

MM = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }"
TWO_OUTPUTS = """
def stats(float(M,K) X, float(K) v) -> (y, z) {
  y(i) +=! X(i,k) * v(k)
  z(i,k) = X(i,k) * 2
}
"""


def small_ints(shape, dtype=np.float32, seed=0):
    """Small integers as floats: every sum below is exact, so results compare with ==."""
    return np.random.default_rng(seed).integers(-4, 5, size=shape).astype(dtype)


class CompileAndCall(unittest.TestCase):
    def setUp(self):
        self.prog = tc.define(MM)
        self.A, self.B = small_ints((3, 5), seed=1), small_ints((5, 4), seed=2)

    def test_kernel_call_matches_numpy(self):
        k = self.prog.compile("mm", self.A, self.B)
        C = k(self.A, self.B)
        self.assertIsInstance(C, np.ndarray)
        self.assertEqual(C.dtype, np.float32)
        np.testing.assert_array_equal(C, self.A @ self.B)
        self.assertEqual(k.outputs, (tc.TensorInfo("float32", (3, 4)),))
        self.assertEqual(k.entry, "mm")

    def test_output_is_a_writable_view_of_the_buffer_libtc_wrote(self):
        C = self.prog.compile("mm", self.A, self.B)(self.A, self.B)
        self.assertTrue(C.flags.writeable)
        self.assertIsInstance(C.base, tc.Tensor)  # no copy: C views the tc.Tensor's memory
        C[0, 0] = 1234
        self.assertEqual(np.asarray(C.base)[0, 0], 1234)

    def test_out_writes_into_a_strided_view_of_the_callers_array(self):
        k = self.prog.compile("mm", self.A, self.B)
        big = np.full((7, 9), -1.0, np.float32)
        view = big[1:7:2, 1:9:2]  # 3x4, strides (18, 2) elements, starts at an offset
        self.assertFalse(view.flags.c_contiguous)
        result = k(self.A, self.B, out=(view,))
        self.assertIs(result, view)
        expected = np.full((7, 9), -1.0, np.float32)
        expected[1:7:2, 1:9:2] = self.A @ self.B
        np.testing.assert_array_equal(big, expected)  # written in place, nothing else touched

    def test_strided_and_offset_input_views(self):
        base = small_ints((10, 12), seed=3)
        A = base[1:7:2, 2:12:2]            # 3x5, row/column steps and an offset
        B = np.asfortranarray(small_ints((5, 4), seed=4))  # column-major
        Bt = small_ints((4, 5), seed=5).T  # a transposed view
        k = self.prog.compile("mm", A, B)
        np.testing.assert_array_equal(k(A, B), A @ B)
        np.testing.assert_array_equal(k(A, Bt), A @ Bt)

    def test_shortcut_compiles_once_per_signature(self):
        C1 = self.prog.mm(self.A, self.B)
        np.testing.assert_array_equal(C1, self.A @ self.B)
        self.assertEqual(len(self.prog.kernels), 1)
        kernel = next(iter(self.prog.kernels.values()))
        C2 = self.prog.mm(self.A + 1, self.B)  # same signature: the same kernel
        np.testing.assert_array_equal(C2, (self.A + 1) @ self.B)
        self.assertEqual(len(self.prog.kernels), 1)
        self.assertIs(next(iter(self.prog.kernels.values())), kernel)
        A2 = small_ints((2, 5), seed=6)   # new shape: a second kernel
        np.testing.assert_array_equal(self.prog.mm(A2, self.B), A2 @ self.B)
        self.assertEqual(len(self.prog.kernels), 2)
        np.testing.assert_array_equal(self.prog["mm"](self.A, self.B), self.A @ self.B)
        self.assertEqual(len(self.prog.kernels), 2)

    def test_infer_outputs(self):
        self.assertEqual(tc.infer_outputs(self.prog, "mm", self.A, self.B),
                         [tc.TensorInfo("float32", (3, 4))])
        prog = tc.define(TWO_OUTPUTS)
        X, v = small_ints((2, 6)), small_ints((6,))
        self.assertEqual(prog.infer_outputs("stats", X, v),
                         [tc.TensorInfo("float32", (2,)), tc.TensorInfo("float32", (2, 6))])

    def test_multiple_outputs(self):
        prog = tc.define(TWO_OUTPUTS)
        X, v = small_ints((3, 4), seed=7), small_ints((4,), seed=8)
        y, z = prog.stats(X, v)
        np.testing.assert_array_equal(y, X @ v)
        np.testing.assert_array_equal(z, X * 2)
        y2, z2 = np.empty(3, np.float32), np.empty((3, 4), np.float32)
        self.assertEqual(prog.compile("stats", X, v)(X, v, out=(y2, z2)), (y2, z2))
        np.testing.assert_array_equal(y2, X @ v)
        np.testing.assert_array_equal(z2, X * 2)

    def test_zero_dim_inputs_and_outputs(self):
        prog = tc.define("def s(float(N) A, float k) -> (B, total) {\n"
                         "  B(i) = A(i) * k\n  total +=! A(i)\n}")
        A, k = small_ints((5,), seed=9), np.array(3.0, np.float32)
        B, total = prog.s(A, k)
        np.testing.assert_array_equal(B, A * 3)
        self.assertEqual(total.shape, ())
        self.assertEqual(float(total), float(A.sum()))
        self.assertEqual(prog.infer_outputs("s", A, k)[1], tc.TensorInfo("float32", ()))

    def test_accumulation_reads_out(self):
        # '+=' without '!' accumulates into the output's contents: fresh outputs start at 0.
        prog = tc.define("def acc(float(N) A) -> (B) { B(i) += A(i) }")
        A = small_ints((4,), seed=10)
        np.testing.assert_array_equal(prog.acc(A), A)
        B = np.array([10, 20, 30, 40], np.float32)
        prog.acc(A, out=(B,))
        prog.acc(A, out=B)  # a single tensor is accepted for a single output
        np.testing.assert_array_equal(B, np.array([10, 20, 30, 40], np.float32) + 2 * A)

    def test_dtypes_bool_integers_half(self):
        prog = tc.define("def f(int32(N) A, uint8(N) B, half(N) H) -> (gt, inc, twice) {\n"
                         "  gt(i) = A(i) > int32(B(i))\n"
                         "  inc(i) = B(i) + 1\n"
                         "  twice(i) = H(i) * 2\n}")
        A = np.array([-1, 5, 300, 7], np.int32)
        B = np.array([0, 5, 255, 6], np.uint8)
        H = np.array([0.5, -1.5, 2.0, 1024.0], np.float16)
        gt, inc, twice = prog.f(A, B, H)
        self.assertEqual(gt.dtype, np.bool_)
        np.testing.assert_array_equal(gt, A > B.astype(np.int32))
        self.assertEqual(inc.dtype, np.uint8)
        np.testing.assert_array_equal(inc, np.array([1, 6, 0, 7], np.uint8))  # wraps
        self.assertEqual(twice.dtype, np.float16)
        np.testing.assert_array_equal(twice, H * 2)

    def test_empty_reduction(self):
        A, B = np.zeros((3, 0), np.float32), np.zeros((0, 2), np.float32)
        C = self.prog.mm(A, B)
        self.assertEqual(C.shape, (3, 2))
        np.testing.assert_array_equal(C, np.zeros((3, 2), np.float32))


class OptionsAndIntrospection(unittest.TestCase):
    def test_options_go_through_libtc(self):
        default = tc.Options().get("backend")  # whatever this libtc's default is
        self.assertTrue(default)
        opts = tc.Options(backend="reference", checked=False)
        self.assertEqual(opts.get("backend"), "reference")
        self.assertEqual(opts.get("checked"), "0")
        opts.set("checked", True)
        self.assertEqual(opts.get("checked"), "1")

    def test_compile_with_options(self):
        prog = tc.define(MM)
        A, B = small_ints((2, 3), seed=11), small_ints((3, 2), seed=12)
        for options in ({"backend": "reference"}, {"backend": "reference", "checked": False}):
            k = prog.compile("mm", A, B, **options)
            np.testing.assert_array_equal(k(A, B), A @ B)

    def test_defs_params_describe(self):
        prog = tc.define(MM + "\n" + TWO_OUTPUTS, name="two.tc")
        self.assertEqual(prog.defs, ("mm", "stats"))
        self.assertEqual(prog.inputs("mm"), [tc.Param("A", "float32", ("M", "K")),
                                             tc.Param("B", "float32", ("K", "N"))])
        self.assertEqual(prog.outputs("stats"), [tc.Param("y", "float32", ("M",)),
                                                 tc.Param("z", "float32", ("M", "K"))])
        text = prog.describe("mm")
        self.assertIn("output C: float32(M, N)", text)
        self.assertIn("k in 0:K (reduction)", text)
        self.assertTrue(callable(prog.stats))
        self.assertIn("mm", repr(prog))

    def test_version(self):
        self.assertRegex(tc.library_version(), r"^\d+\.\d+\.\d+$")
        # The package and the library it loads agree on major.minor.
        self.assertEqual(tc.__version__.split(".")[:2], tc.library_version().split(".")[:2])


class Ownership(unittest.TestCase):
    def test_kernel_outlives_its_program(self):
        prog = tc.define(MM)
        A, B = small_ints((2, 3), seed=13), small_ints((3, 2), seed=14)
        k = prog.compile("mm", A, B)
        del prog
        gc.collect()
        np.testing.assert_array_equal(k(A, B), A @ B)

    def test_output_outlives_kernel(self):
        A, B = small_ints((2, 3), seed=15), small_ints((3, 2), seed=16)
        C = tc.define(MM).compile("mm", A, B)(A, B)
        gc.collect()
        np.testing.assert_array_equal(C, A @ B)

    def test_closed_handles_fail_cleanly(self):
        prog = tc.define(MM)
        A, B = small_ints((2, 3)), small_ints((3, 2))
        k = prog.compile("mm", A, B)
        with prog:
            pass  # a with block closes the program
        with self.assertRaises(tc.TcInvalidArgumentError):
            prog.compile("mm", A, B)
        k.close()
        k.close()  # idempotent
        with self.assertRaises(tc.TcInvalidArgumentError):
            k(A, B)


class Threads(unittest.TestCase):
    def test_one_kernel_many_threads(self):
        prog = tc.define(MM)
        A = [small_ints((8, 16), seed=20 + t) for t in range(4)]
        B = small_ints((16, 8), seed=30)
        k = prog.compile("mm", A[0], B)
        results, errors = [None] * 4, []

        def work(t):
            try:
                for _ in range(20):
                    results[t] = k(A[t], B)
            except Exception as e:  # reported below, in the main thread
                errors.append(e)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(errors, [])
        for t in range(4):
            np.testing.assert_array_equal(results[t], A[t] @ B)


class CudaResources(unittest.TestCase):
    """Kernel.resources(): a cuda cubin's launches with ptxas's report and the occupancy,
    compiled for an explicit architecture (no GPU needed; skipped without NVRTC)."""

    def test_cubin_resources(self):
        A, B = small_ints((64, 48)), small_ints((48, 80), seed=1)
        try:
            k = tc.define(MM).compile("mm", A, B, backend="cuda", **{"cuda.arch": "sm_90"})
        except tc.TcUnsupportedError as e:
            self.skipTest(str(e).splitlines()[0])
        (launch,) = k.resources()
        self.assertEqual(launch["kernel"], "mm_k0")
        self.assertEqual(launch["block"], (256, 1, 1))  # the contraction route's block
        self.assertEqual(launch["grid"], (3, 2, 1))  # 80 / 32 x 64 / 32 tiles of 32 x 32
        self.assertEqual(launch["spilled_bytes"], 0)
        self.assertGreater(launch["registers"], 16)
        self.assertGreater(launch["shared_bytes"], 0)
        self.assertTrue(0 < launch["occupancy"] <= 1)
        self.assertEqual(launch["max_warps_per_sm"], 64)

    def test_emulated_and_cpu_kernels(self):
        A, B = small_ints((6, 4)), small_ints((4, 5), seed=1)
        (launch,) = tc.define(MM).compile("mm", A, B, backend="cuda", **{"cuda.emulate": "1"}).resources()
        self.assertNotIn("registers", launch)
        self.assertEqual(tc.define(MM).compile("mm", A, B, backend="cpu").resources(), [])


class CudaProfile(unittest.TestCase):
    """Kernel.profile(): a GPU profile of an emulated cuda kernel, made on the host."""

    def test_profile_of_a_product(self):
        A, B = small_ints((64, 32)), small_ints((32, 64), seed=1)
        k = tc.define(MM).compile("mm", A, B, backend="cuda", **{"cuda.emulate": "1"})
        p = k.profile(A, B, gpu="h200")
        (launch,) = p["launches"]
        self.assertEqual(launch["kernel"], "mm_k0")
        self.assertEqual(launch["fma"], 64 * 32 * 64)
        self.assertEqual(launch["work_balance"], 1.0)
        self.assertGreater(p["estimated_us"], 0)
        self.assertIn("on h200: H200", p["text"])
        with self.assertRaises(tc.TcUnsupportedError):
            tc.define(MM).compile("mm", A, B, backend="cpu").profile(A, B)


if __name__ == "__main__":
    unittest.main()


class Source(unittest.TestCase):
    def test_source_is_the_text_defined(self):
        self.assertEqual(tc.define(TWO_OUTPUTS).source, TWO_OUTPUTS)


class RankPolymorphism(unittest.TestCase):
    """A def with '...' is one operator for every rank: prog.NAME compiles one kernel per rank."""

    SRC = """
def relu(float(...) X) -> (O) { O(...) = fmax(X(...), 0) }
def bmm(float(..., M, K) A, float(..., K, N) B) -> (C) {
  C(..., m, n) +=! A(..., m, k) * B(..., k, n)
}
"""

    def test_every_rank(self):
        prog = tc.define(self.SRC)
        for shape in [(), (5,), (2, 3), (2, 1, 3, 2)]:
            X = small_ints(shape, seed=len(shape))
            np.testing.assert_array_equal(prog.relu(X), np.maximum(X, 0))
        for batch in [(), (3,), (2, 2)]:
            A, B = small_ints(batch + (2, 4), seed=3), small_ints(batch + (4, 3), seed=4)
            np.testing.assert_array_equal(prog.bmm(A, B), np.matmul(A, B))
        self.assertEqual(len([k for k in prog.kernels if k[0] == "relu"]), 4)

    def test_introspection_shows_the_ellipsis(self):
        prog = tc.define(self.SRC)
        self.assertEqual([p.dims for p in prog.inputs("bmm")], [("...", "M", "K"), ("...", "K", "N")])
        self.assertEqual([p.dims for p in prog.outputs("bmm")], [("...", "M", "N")])

    def test_disagreeing_inputs(self):
        prog = tc.define(self.SRC)
        with self.assertRaises(tc.TcShapeError) as err:
            prog.bmm(small_ints((2, 2, 4)), small_ints((4, 3)))
        self.assertIn("every '...' of a def denotes the same dimensions", str(err.exception))

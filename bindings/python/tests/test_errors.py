"""test_errors.py - every failure is a tc.Error subclass chosen by libtc's status, carrying the
status and libtc's full message; bad Python-side arguments raise the usual TypeError /
ValueError; nothing crashes.
"""
import threading
import unittest

import numpy as np

import tc

MM = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }"


class Statuses(unittest.TestCase):
    def assert_error(self, cm, cls, status, status_name, *fragments):
        e = cm.exception
        self.assertIs(type(e), cls)
        self.assertIsInstance(e, tc.Error)
        self.assertEqual(e.status, status)
        self.assertEqual(e.status_name, status_name)
        for fragment in fragments:
            self.assertIn(fragment, e.message)
            self.assertIn(fragment, str(e))
        self.assertIn(status_name, str(e))

    def test_syntax_error_is_a_python_syntax_error_with_location(self):
        src = "def f(float(N) A) -> (B) {\n  B(i) = A(i) +\n}"
        with self.assertRaises(SyntaxError) as cm:
            tc.define(src, name="f.tc")
        self.assert_error(cm, tc.TcSyntaxError, -2, "TC_ERROR_SYNTAX",
                          "f.tc:3:1: error: expected an expression")
        e = cm.exception
        self.assertEqual((e.filename, e.lineno, e.offset, e.text), ("f.tc", 3, 1, "}"))
        self.assertEqual(e.message.splitlines()[1:], ["}", "^"])  # source line and caret

    def test_semantic_error_names_the_place(self):
        with self.assertRaises(tc.TcSemanticError) as cm:
            tc.define("def e(float(N) A) -> (B) { B(i) = C(i) }")
        self.assert_error(cm, tc.TcSemanticError, -3, "TC_ERROR_SEMANTIC",
                          "e:1:35: error: unknown tensor or function 'C'")

    def test_shape_error_at_compile(self):
        prog = tc.define(MM)
        A, B = np.zeros((2, 3), np.float32), np.zeros((4, 2), np.float32)
        with self.assertRaises(ValueError) as cm:
            prog.compile("mm", A, B)
        self.assert_error(cm, tc.TcShapeError, -4, "TC_ERROR_SHAPE",
                          "input 'B'", "size 'K' is 3", "got 4")
        with self.assertRaises(tc.TcShapeError):
            prog.mm(A, B)  # the shortcut compiles too
        with self.assertRaises(tc.TcShapeError):
            tc.infer_outputs(prog, "mm", A, B)
        self.assertEqual(len(prog.kernels), 0)  # nothing cached for a failed compile

    def test_shape_and_dtype_errors_at_run(self):
        prog = tc.define(MM)
        A, B = np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32)
        k = prog.compile("mm", A, B)
        with self.assertRaises(tc.TcShapeError) as cm:
            k(np.zeros((3, 3), np.float32), B)
        self.assertIn("'A'", cm.exception.message)
        with self.assertRaises(tc.TcShapeError) as cm:
            k(A.astype(np.float64), B)
        self.assertIn("float32", cm.exception.message)
        with self.assertRaises(tc.TcShapeError) as cm:
            k(A, B, out=(np.zeros((2, 3), np.float32),))
        with self.assertRaises(tc.TcShapeError) as cm:
            k(A[:, ::-1], B)  # libtc takes non-negative strides only
        self.assertIn("negative stride", cm.exception.message)

    def test_output_aliasing_an_input(self):
        prog = tc.define("def f(float(N) A) -> (B) { B(i) = A(i) * 2 }")
        A = np.arange(4, dtype=np.float32)
        with self.assertRaises(tc.TcShapeError) as cm:
            prog.f(A, out=(A,))
        self.assertIn("overlaps input 'A'", cm.exception.message)
        np.testing.assert_array_equal(A, np.arange(4, dtype=np.float32))

    def test_counts_and_entries(self):
        prog = tc.define(MM)
        A, B = np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32)
        k = prog.compile("mm", A, B)
        with self.assertRaises(tc.TcInvalidArgumentError) as cm:
            k(A)
        self.assert_error(cm, tc.TcInvalidArgumentError, -1, "TC_ERROR_INVALID_ARGUMENT",
                          "takes 2 inputs, got 1")
        with self.assertRaises(tc.TcInvalidArgumentError) as cm:
            k(A, B, out=())
        self.assertIn("takes 1 output, got 0", cm.exception.message)
        with self.assertRaises(tc.TcInvalidArgumentError) as cm:
            prog.compile("nope", A, B)
        self.assertIn("no def named 'nope'", cm.exception.message)
        with self.assertRaises(KeyError):
            prog["nope"]
        with self.assertRaises(AttributeError):
            prog.nope

    def test_runtime_error(self):
        prog = tc.define("def g(float(N) T, int32(M) I) -> (O) { O(i) = T(I(i)) }")
        T, I = np.arange(4, dtype=np.float32), np.array([0, 7], np.int32)
        with self.assertRaises(RuntimeError) as cm:
            prog.g(T, I)
        self.assert_error(cm, tc.TcRuntimeError, -7, "TC_ERROR_RUNTIME",
                          "reads 'T' out of bounds: index 7")

    def test_option_values_are_checked_by_libtc(self):
        prog = tc.define(MM)
        A, B = np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32)
        with self.assertRaises(tc.TcInvalidArgumentError) as cm:
            prog.compile("mm", A, B, backend="no-such-backend")
        self.assertIn("option 'backend' cannot be 'no-such-backend'", cm.exception.message)
        with self.assertRaises(tc.TcInvalidArgumentError) as cm:
            prog.compile("mm", A, B, no_such_key=1)
        self.assertIn("unknown option 'no_such_key'", cm.exception.message)
        with self.assertRaises(tc.TcInvalidArgumentError):
            tc.Options().get("no_such_key")
        opts = tc.Options(backend="reference")
        with self.assertRaises(tc.TcInvalidArgumentError):
            opts.set("backend", "")
        self.assertEqual(opts.get("backend"), "reference")  # a failed set changes nothing

    def test_messages_are_per_thread(self):
        # Each thread raises with its own failure's message, not another thread's.
        prog = tc.define(MM)
        seen = {}

        def fail(t):
            A = np.zeros((2, 3 + t), np.float32)
            B = np.zeros((10, 2), np.float32)
            for _ in range(50):
                try:
                    prog.compile("mm", A, B)
                except tc.TcShapeError as e:
                    seen.setdefault(t, set()).add(e.message)

        threads = [threading.Thread(target=fail, args=(t,)) for t in range(3)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        for t in range(3):
            self.assertEqual(len(seen[t]), 1)
            self.assertIn("size 'K' is %d" % (3 + t), seen[t].pop())


class PythonSideArguments(unittest.TestCase):
    def test_non_tensor_inputs(self):
        prog = tc.define(MM)
        with self.assertRaises(TypeError) as cm:
            prog.mm([[1.0, 2.0]], np.zeros((2, 2), np.float32))
        self.assertIn("input 0", str(cm.exception))
        self.assertIn("__dlpack__", str(cm.exception))

    def test_nul_in_strings(self):
        with self.assertRaises(ValueError):
            tc.define("def f(float(N) A) -> (B) { B(i) = A(i) }\0garbage")
        with self.assertRaises(ValueError):
            tc.Options().set("backend", "reference\0")

    def test_read_only_numpy_output(self):
        prog = tc.define("def f(float(N) A) -> (B) { B(i) = A(i) * 2 }")
        A = np.arange(3, dtype=np.float32)
        out = np.zeros(3, np.float32)
        out.flags.writeable = False
        with self.assertRaises(BufferError):  # NumPy < 2 refuses to export read-only arrays
            prog.f(A, out=(out,))
        np.testing.assert_array_equal(out, np.zeros(3, np.float32))

    def test_define_type_errors(self):
        with self.assertRaises(TypeError):
            tc.define(42)


if __name__ == "__main__":
    unittest.main()

"""test_dlpack.py - the DLPack protocol on both sides: consuming capsules (legacy "dltensor" and
versioned "dltensor_versioned", renamed "used_..." once taken, the producer's deleter called
exactly once, also when libtc rejects the call, read-only tensors refused as outputs) and
tc.Tensor as a producer (zero-copy into NumPy, __array_interface__, device/copy requests).
"""
import ctypes
import unittest

import numpy as np

import tc
from tc import _dlpack  # white-box: the producer's table of live exports

_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype, _capsule_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

DOUBLE = "def f(float(N) A) -> (B) { B(i) = A(i) * 2 }"


def filled(dtype, values):
    t = tc.Tensor(dtype, (len(values),))
    np.asarray(t)[:] = values
    return t


class LegacyProducer:
    """A pre-DLPack-1.0 producer: __dlpack__ has no max_version (like NumPy 1.x, torch 1.x)."""

    def __init__(self, tensor):
        self.tensor, self.capsules = tensor, []

    def __dlpack__(self, stream=None):
        capsule = self.tensor.__dlpack__()
        self.capsules.append(capsule)
        return capsule

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


class VersionedProducer:
    """A DLPack 1.0 producer; read_only sets DLPACK_FLAG_BITMASK_READ_ONLY."""

    def __init__(self, tensor, read_only=False):
        self.tensor, self.read_only, self.capsules, self.requests = tensor, read_only, [], []

    def __dlpack__(self, stream=None, max_version=None):
        self.requests.append(max_version)
        capsule = self.tensor.__dlpack__(max_version=max_version)
        if self.read_only:
            address = _capsule_pointer(capsule, b"dltensor_versioned")
            _dlpack.DLManagedTensorVersioned.from_address(address).flags |= 1
        self.capsules.append(capsule)
        return capsule

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


class Consuming(unittest.TestCase):
    def setUp(self):
        self.prog = tc.define(DOUBLE)
        self.live = len(_dlpack._exported)

    def tearDown(self):
        # Every capsule taken was given back: the producer's deleter ran once per export.
        self.assertEqual(len(_dlpack._exported), self.live)

    def test_legacy_capsule(self):
        src = LegacyProducer(filled("float32", [1, 2, 3]))
        out = LegacyProducer(tc.Tensor("float32", (3,)))
        self.prog.f(src, out=(out,))
        np.testing.assert_array_equal(np.asarray(out.tensor), [2, 4, 6])
        self.assertEqual(_capsule_name(src.capsules[0]), b"used_dltensor")
        self.assertEqual(_capsule_name(out.capsules[0]), b"used_dltensor")

    def test_versioned_capsule(self):
        src = VersionedProducer(filled("float32", [1, 2, 3]))
        B = self.prog.f(src)
        self.assertEqual(src.requests[0], (1, 0))  # the binding asks for DLPack 1.0
        self.assertEqual(_capsule_name(src.capsules[0]), b"used_dltensor_versioned")
        self.assertIsInstance(B, tc.Tensor)  # not from a library with from_dlpack
        np.testing.assert_array_equal(np.asarray(B), [2, 4, 6])

    def test_read_only_tensor_is_an_input_but_not_an_output(self):
        src = VersionedProducer(filled("float32", [1, 2, 3]), read_only=True)
        np.testing.assert_array_equal(np.asarray(self.prog.f(src)), [2, 4, 6])
        out = VersionedProducer(tc.Tensor("float32", (3,)), read_only=True)
        with self.assertRaises(BufferError) as cm:
            self.prog.f(filled("float32", [1, 2, 3]), out=(out,))
        self.assertIn("output 0: the tensor is read-only", str(cm.exception))
        np.testing.assert_array_equal(np.asarray(out.tensor), [0, 0, 0])

    def test_deleters_run_when_libtc_rejects_the_call(self):
        k = self.prog.compile("f", filled("float32", [1, 2, 3]))
        with self.assertRaises(tc.TcShapeError):
            k(LegacyProducer(filled("float32", [1, 2])))
        with self.assertRaises(tc.TcInvalidArgumentError):
            k(LegacyProducer(filled("float32", [1, 2, 3])), out=(tc.Tensor("float32", (3,)),) * 2)
        # tearDown checks that nothing is still held

    def test_bool_input_through_a_tc_tensor(self):
        # NumPy < 1.25 cannot export bool through DLPack; a tc.Tensor can.
        prog = tc.define("def count(bool(N) M) -> (n) { n +=! int32(M(i)) }")
        mask = tc.Tensor("bool", (5,))
        np.asarray(mask)[:] = [True, False, True, True, False]
        self.assertEqual(int(np.asarray(prog.count(mask))), 3)

    def test_not_a_capsule(self):
        class Liar:
            def __dlpack__(self, stream=None):
                return "not a capsule"

        with self.assertRaises(TypeError) as cm:
            self.prog.f(Liar())
        self.assertIn("not an unused DLPack capsule", str(cm.exception))

    def test_capsule_cannot_be_consumed_twice(self):
        capsule = filled("float32", [1, 2, 3]).__dlpack__()

        class Replay:
            def __dlpack__(self, stream=None):
                return capsule

        self.prog.f(Replay())
        with self.assertRaises(TypeError):
            self.prog.f(Replay())  # renamed "used_dltensor": nobody may take it again


class Producing(unittest.TestCase):
    def test_zero_copy_into_numpy(self):
        t = tc.Tensor("float64", (2, 3))
        self.assertEqual(t.strides, (3, 1))
        via_dlpack, via_interface = np.from_dlpack(t), np.asarray(t)
        via_interface[1, 2] = 7.5
        self.assertEqual(via_dlpack[1, 2], 7.5)  # both view t's buffer
        self.assertEqual(via_dlpack.ctypes.data, t.data_ptr)
        np.testing.assert_array_equal(via_dlpack, np.array([[0, 0, 0], [0, 0, 7.5]]))

    def test_array_interface_dtypes(self):
        for dtype in ("bool", "uint8", "int16", "int32", "uint64", "float16", "float32"):
            a = np.asarray(tc.Tensor(dtype, (4,)))
            self.assertEqual(a.dtype, np.dtype(dtype))
            self.assertEqual(a.shape, (4,))
            self.assertFalse(a.any())  # zero-filled

    def test_bfloat16_bits_through_the_array_interface(self):
        t = tc.Tensor("bfloat16", (3,))
        self.assertEqual((t.dtype, t.itemsize), ("bfloat16", 2))
        a = np.asarray(t)  # NumPy has no bfloat16: the bits as uint16
        self.assertEqual(a.dtype, np.uint16)
        a[1] = 0x3F80
        self.assertEqual(np.asarray(t)[1], 0x3F80)

    def test_zero_dim_and_empty(self):
        self.assertEqual(np.from_dlpack(tc.Tensor("int32", ())).shape, ())
        self.assertEqual(np.from_dlpack(tc.Tensor("int32", (3, 0))).shape, (3, 0))

    def test_requests_it_cannot_serve(self):
        t = tc.Tensor("float32", (2,))
        with self.assertRaises(BufferError):
            t.__dlpack__(dl_device=(2, 0))
        with self.assertRaises(BufferError):
            t.__dlpack__(copy=True)
        with self.assertRaises(ValueError):
            tc.Tensor("complex64", (2,))
        with self.assertRaises(ValueError):
            tc.Tensor("float32", (2, -1))

    def test_unconsumed_capsule_is_freed(self):
        live = len(_dlpack._exported)
        capsule = tc.Tensor("float32", (2,)).__dlpack__()
        self.assertEqual(len(_dlpack._exported), live + 1)
        del capsule  # the capsule's destructor calls the deleter
        self.assertEqual(len(_dlpack._exported), live)


if __name__ == "__main__":
    unittest.main()

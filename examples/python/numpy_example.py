"""numpy_example.py - matrix multiply and a fused two-output kernel with libtc from NumPy.

    pip install ./bindings/python        # or PYTHONPATH=bindings/python
    python3 examples/python/numpy_example.py

libtc is found through TC_LIBRARY, the loader's path (an installed libtc.so.0) or pkg-config.
Exits 0 when every result matches NumPy.
"""
import numpy as np

import tc

SOURCE = """
def mm(float(M,K) A, float(K,N) B) -> (C) {
  C(i,j) +=! A(i,k) * B(k,j)
}
def relu_rowsum(float(M,N) X) -> (Y, S) {
  Y(i,j) = max(X(i,j), 0)
  S(i) +=! Y(i,j)
}
"""

rng = np.random.default_rng(0)
A = rng.standard_normal((64, 32)).astype(np.float32)
B = rng.standard_normal((32, 48)).astype(np.float32)

prog = tc.define(SOURCE, name="example.tc")
print("libtc", tc.library_version(), "from", tc.library_path)
print("outputs of mm:", tc.infer_outputs(prog, "mm", A, B))

k = prog.compile("mm", A, B, backend="reference")  # options go to tc_options_set
C = k(A, B)                                         # a new NumPy array
np.testing.assert_allclose(C, A @ B, rtol=1e-4, atol=1e-4)

out = np.empty((64, 48), np.float32)
k(A, B, out=(out,))                                 # into a caller buffer, no copy
np.testing.assert_allclose(out, A @ B, rtol=1e-4, atol=1e-4)

Y, S = prog.relu_rowsum(C.T)                        # a transposed view: strides are honoured
np.testing.assert_allclose(Y, np.maximum(C.T, 0), rtol=1e-6)
np.testing.assert_allclose(S, np.maximum(C.T, 0).sum(axis=1), rtol=1e-4, atol=1e-3)

try:
    prog.mm(A, A)                                   # K mismatch: 32 vs 64
except tc.TcShapeError as e:
    print("as expected:", e)
else:
    raise SystemExit("a shape mismatch was not reported")
print("numpy example: ok")

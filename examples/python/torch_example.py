"""torch_example.py - a TC kernel on PyTorch tensors: torch in, torch out, no copies.

    pip install ./bindings/python        # or PYTHONPATH=bindings/python
    python3 examples/python/torch_example.py

Exits 0 when the results match PyTorch.
"""
import torch

import tc

prog = tc.define("""
def linear_relu(float(B,I) x, float(O,I) w, float(O) b) -> (y) {
  y(n,o) = b(o)
  y(n,o) += x(n,i) * w(o,i)
  y(n,o) = max(y(n,o), 0)
}
""")

torch.manual_seed(0)
x, w, b = torch.randn(16, 32), torch.randn(8, 32), torch.randn(8)
y = prog.linear_relu(x, w, b)                   # compiled on first use for these shapes
assert isinstance(y, torch.Tensor)
torch.testing.assert_close(y, torch.relu(x @ w.T + b), rtol=1e-4, atol=1e-4)

big = torch.zeros(16, 20)
prog.linear_relu(x, w, b, out=big[:, 4:12])     # into a strided view of a larger tensor
torch.testing.assert_close(big[:, 4:12], y)
assert big[:, :4].abs().sum() == 0 and big[:, 12:].abs().sum() == 0
print("torch example: ok (%d kernel compiled)" % len(prog.kernels))

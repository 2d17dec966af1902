#!/usr/bin/env bash
# pip_venv.sh PYTHON SOURCE_DIR LIBTC_SO — the Python package installed as the docs say on
# Debian 12 (PEP 668 forbids pip into the system Python): a fresh venv with
# --system-site-packages (Debian's NumPy and PyTorch), `pip install ./bindings/python` offline,
# then, from another directory with no TC_LIBRARY, LD_LIBRARY_PATH or PYTHONPATH, `import tc`
# loads the libtc the wheel carries and runs a matmul. LIBTC_SO is the library the wheel takes
# (TC_LIBRARY at build time; the README's set-up makes <repo>/build/src/libtc.so, its default).
set -euo pipefail
python=$1 src=$2 lib=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv --system-site-packages "$tmp/venv"
TC_LIBRARY="$lib" "$tmp/venv/bin/pip" install --no-index --no-deps --no-cache-dir --disable-pip-version-check -q \
  "$src/bindings/python"
ls "$tmp"/venv/lib/python3*/site-packages/tc/_lib/libtc.so.0 >/dev/null
cd "$tmp"
env -u TC_LIBRARY -u LD_LIBRARY_PATH -u PYTHONPATH "$tmp/venv/bin/python" - "$tmp/venv" <<'PY'
import sys
import numpy as np
import tc
venv = sys.argv[1]
assert tc.__file__.startswith(venv), tc.__file__
assert tc.library_path.startswith(venv) and tc.library_path.endswith("tc/_lib/libtc.so.0"), tc.library_path
p = tc.define("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }")
A = np.arange(12, dtype=np.float32).reshape(4, 3)
B = np.arange(6, dtype=np.float32).reshape(3, 2)
C = p.compile("mm", A, B)(A, B)
np.testing.assert_allclose(C, A @ B)
print("pip_venv: tc %s from %s, libtc %s; mm right" % (tc.__version__, tc.__file__, tc.library_version()))
PY

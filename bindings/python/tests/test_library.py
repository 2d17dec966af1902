"""test_library.py - how `import tc` finds libtc (TC_LIBRARY, the dynamic loader, pkg-config),
what it says when it cannot, and that the package imports no third-party module. Each case
imports tc in a fresh interpreter; the package is copied to a temporary directory so that no
build tree is next to it.
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tc")
LIBRARY = os.environ.get("TC_LIBRARY", "")

PROBE = """
import sys, tc
prog = tc.define("def f(float(N) A) -> (B) { B(i) = A(i) + 1 }")
t = tc.Tensor("float32", (3,))
k = prog.compile("f", t)
print(tc.library_path)
print(sorted(m for m in ("numpy", "torch") if m in sys.modules))
"""


@unittest.skipUnless(os.path.isfile(LIBRARY), "set TC_LIBRARY to the built libtc.so")
class Discovery(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tc-python-discovery-")
        shutil.copytree(PACKAGE, os.path.join(cls.tmp, "tc"),
                        ignore=shutil.ignore_patterns("__pycache__"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def probe(self, **env):
        clean = {k: v for k, v in os.environ.items()
                 if k not in ("TC_LIBRARY", "LD_LIBRARY_PATH", "PKG_CONFIG_PATH", "PYTHONPATH")}
        # The loader's path loses the folders holding a libtc, and keeps the others: where
        # libtc's own dependencies were put (the GPU machine's unpacked LMDB, Halide, isl).
        others = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":")
                  if d and not glob.glob(os.path.join(d, "libtc.so*"))]
        if env.get("LD_LIBRARY_PATH"):
            others.insert(0, env.pop("LD_LIBRARY_PATH"))
        if others:
            clean["LD_LIBRARY_PATH"] = ":".join(others)
        clean.update(env, PYTHONPATH=self.tmp, PYTHONDONTWRITEBYTECODE="1")
        return subprocess.run([sys.executable, "-c", PROBE], env=clean, capture_output=True,
                              text=True, timeout=60)

    def test_tc_library_variable(self):
        r = self.probe(TC_LIBRARY=LIBRARY)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines(), [LIBRARY, "[]"])  # and no numpy/torch import

    def test_bad_tc_library_is_an_import_error_naming_it(self):
        r = self.probe(TC_LIBRARY="/nonexistent/libtc.so")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("ImportError: tc: cannot load libtc; set TC_LIBRARY", r.stderr)
        self.assertIn("/nonexistent/libtc.so (TC_LIBRARY)", r.stderr)

    def test_dynamic_loader(self):
        r = self.probe(LD_LIBRARY_PATH=os.path.dirname(LIBRARY))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines()[0], "libtc.so.0")

    @unittest.skipUnless(shutil.which("pkg-config"), "no pkg-config")
    def test_pkg_config(self):
        if self.probe().returncode == 0:
            self.skipTest("a libtc.so.0 is installed on the loader's path; it would be found first")
        libdir = os.path.dirname(os.path.realpath(LIBRARY))
        pc_dir = os.path.join(self.tmp, "pkgconfig")
        os.makedirs(pc_dir, exist_ok=True)
        with open(os.path.join(pc_dir, "tc.pc"), "w") as f:
            f.write("libdir=%s\nName: tc\nDescription: test\nVersion: 0.1.0\n"
                    "Libs: -L${libdir} -ltc\n" % libdir)
        r = self.probe(PKG_CONFIG_PATH=pc_dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines()[0], os.path.join(libdir, "libtc.so.0"))


if __name__ == "__main__":
    unittest.main()

"""The fairness checks of bench/, without timing anything: which BLAS a process's
/proc/self/maps names, the load-average warning, the agreement of consecutive runs, bench.py's
--runs option, one smoke run of bench.py's default mode (each framework in a process of its
own) on the reference backend at --quick sizes (skipped without NumPy and PyTorch), and one of
bench/ab.py (two schedules of a kernel in one process).

ctest: bench.fair (tests/bench/CMakeLists.txt), with TC_LIBRARY set to the libtc.so built.
By hand: TC_LIBRARY=build/src/libtc.so /usr/bin/python3 -m unittest -v test_bench_fair (here).
"""
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
import bench  # noqa: E402  (bench/bench.py: argparse only at import)
import fair  # noqa: E402  (bench/fair.py: the standard library only)
import peak  # noqa: E402  (bench/peak.py: the standard library only)

TRIPLET = "/usr/lib/x86_64-linux-gnu"


def maps(*paths):
    """A /proc/self/maps text mapping each path (and some lines that name no file)."""
    lines = ["55d0c0a00000-55d0c0a21000 rw-p 00000000 00:00 0                          [heap]",
             "7f1c2a000000-7f1c2a021000 rw-p 00000000 00:00 0 "]
    for i, path in enumerate(paths):
        for perms in ("r--p", "r-xp"):
            lines.append("7f1c%08x-7f1c%08x %s 00000000 08:01 %d                    %s"
                         % (i * 0x10000, i * 0x10000 + 0x8000, perms, 4000 + i, path))
    lines.append("7ffd5e1c0000-7ffd5e1e1000 rw-p 00000000 00:00 0                          [stack]")
    return "\n".join(lines) + "\n"


class BlasIdentification(unittest.TestCase):
    def test_debian_openblas_pthread(self):
        text = maps(TRIPLET + "/libgomp.so.1.0.0", TRIPLET + "/openblas-pthread/libblas.so.3",
                    TRIPLET + "/openblas-pthread/liblapack.so.3",
                    TRIPLET + "/openblas-pthread/libopenblasp-r0.3.21.so")
        paths = fair.blas_paths(text)
        self.assertEqual(paths, [TRIPLET + "/openblas-pthread/libblas.so.3",
                                 TRIPLET + "/openblas-pthread/libopenblasp-r0.3.21.so"])
        kind, name = fair.describe_blas(
            paths, "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64", 1)
        self.assertEqual(kind, "openblas")
        self.assertTrue(name.startswith(
            "OpenBLAS 0.3.21 pthread: %s/openblas-pthread/libblas.so.3" % TRIPLET), name)

    def test_openblas_without_its_config(self):
        # the variant from the directory when openblas_get_config could not be called
        kind, name = fair.describe_blas([TRIPLET + "/openblas-openmp/libblas.so.3"])
        self.assertEqual((kind, name),
                         ("openblas", "OpenBLAS openmp: %s/openblas-openmp/libblas.so.3" % TRIPLET))

    def test_reference_blas(self):
        text = maps(TRIPLET + "/blas/libblas.so.3.11.0", TRIPLET + "/lapack/liblapack.so.3.11.0")
        paths = fair.blas_paths(text)
        self.assertEqual(paths, [TRIPLET + "/blas/libblas.so.3.11.0"])
        self.assertEqual(fair.describe_blas(paths),
                         ("reference", "reference BLAS: %s/blas/libblas.so.3.11.0" % TRIPLET))

    def test_wheel_openblas_and_mkl(self):
        wheel = "/opt/venv/lib/python3.11/site-packages/numpy.libs/" \
                "libopenblas64_p-r0-15028c96.3.21.so"
        self.assertEqual(fair.describe_blas(fair.blas_paths(maps(wheel)))[0], "openblas")
        mkl = "/opt/intel/lib/libmkl_rt.so.2"
        self.assertEqual(fair.describe_blas(fair.blas_paths(maps(mkl)))[0], "mkl")

    def test_no_blas(self):
        text = maps(TRIPLET + "/libc.so.6", TRIPLET + "/libgomp.so.1.0.0")
        self.assertEqual(fair.blas_paths(text), [])
        self.assertEqual(fair.describe_blas([])[0], "none")

    def test_this_process(self):
        # whatever is loaded here: a (kind, text) pair, never an exception
        kind, text = fair.this_process_blas()
        self.assertIn(kind, ("openblas", "reference", "mkl", "other", "none"))
        self.assertTrue(text)


class LoadAverage(unittest.TestCase):
    def test_threshold(self):
        self.assertEqual(fair.LOAD_LIMIT, 0.5)
        self.assertIsNone(fair.load_warning([("before the run", 0.2), ("before x", 0.5)]))
        self.assertIsNone(fair.load_warning([("before the run", None)]))
        warning = fair.load_warning([("before the run", 0.1), ("before the NumPy process", 0.51),
                                     ("before the PyTorch process", 0.7)])
        self.assertIn("not from an idle machine", warning)
        self.assertIn("2 of 3 readings", warning)
        self.assertIn("0.70 before the PyTorch process", warning)

    def test_own_load(self):
        self.assertEqual(fair.own_load([], 100.0), 0.0)
        # two busy threads for one time constant, just ended: 2 (1 - 1/e)
        self.assertAlmostEqual(fair.own_load([(0.0, 60.0, 120.0)], 60.0),
                               2 * (1 - 1 / 2.718281828459045), places=6)
        # forgotten with the time constant of the 1-minute average
        later = fair.own_load([(0.0, 60.0, 120.0)], 120.0)
        self.assertAlmostEqual(later, fair.own_load([(0.0, 60.0, 120.0)], 60.0) / 2.71828,
                               places=4)
        self.assertEqual(fair.own_load([(0.0, 60.0, 120.0)], 30.0), 0.0)  # not yet ended


class RunAgreement(unittest.TestCase):
    def test_spread(self):
        self.assertAlmostEqual(fair.spread([2.0, 2.5, 2.2]), 0.25)
        self.assertIsNone(fair.spread([1.0]))
        self.assertIsNone(fair.spread([1.0, None]))

    def test_twelve_percent_flagged_eight_not(self):
        self.assertEqual(fair.RUN_AGREEMENT, 0.10)
        runs = {"libtc": [1.0, 1.08], "PyTorch": [1.12, 1.0], "NumPy": [3.0, 3.0 * 1.12],
                "none": [None, 2.0]}
        self.assertEqual(fair.disagreeing(runs), ["PyTorch", "NumPy"])
        self.assertEqual(fair.disagreeing({"libtc": [5.0, 5.4, 5.2]}), [])


class Options(unittest.TestCase):
    def test_runs(self):
        self.assertEqual(bench.parse_args([]).runs, 1)
        self.assertEqual(bench.parse_args(["--runs", "3"]).runs, 3)
        # --rounds, --tune's old name for it, is the same option
        args = bench.parse_args(["--tune", "0", "--cache", "/tmp/x", "--rounds", "2"])
        self.assertEqual(args.runs, 2)
        with open(os.devnull, "w") as devnull:
            saved, sys.stderr = sys.stderr, devnull
            try:
                with self.assertRaises(SystemExit):
                    bench.parse_args(["--runs", "0"])
                with self.assertRaises(SystemExit):  # --plot draws a tuning run
                    bench.parse_args(["--plot", "/tmp/x.png"])
            finally:
                sys.stderr = saved
        self.assertEqual(bench.parse_args(["--tune", "5", "--plot", "/tmp/x.png"]).plot, "/tmp/x.png")


def have(module):
    return importlib.util.find_spec(module) is not None


@unittest.skipUnless(have("matplotlib"), "needs python3-matplotlib (tools/install-deps.sh installs it)")
class ConvergencePlot(unittest.TestCase):
    def test_writes_a_png_with_a_panel_per_kernel(self):
        import tempfile
        import plot  # bench/plot.py
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "tune.png")
            plot.convergence(path, [
                ("sgemm", [(0.1, 20.0), (0.5, None), (1.2, 12.0), (3.0, 7.5)], 18.0, 7.3, "best peer (NumPy)"),
                ("softmax", [], 0.1, None, None),  # no trace, no peer: an empty panel, no failure
            ], "tc_tune, at most 60 s per kernel, 2 threads")
            with open(path, "rb") as f:
                head = f.read(8)
            self.assertEqual(head, b"\x89PNG\r\n\x1a\n")
            self.assertGreater(os.path.getsize(path), 10000)


@unittest.skipUnless(have("numpy") and have("torch"), "needs NumPy and PyTorch")
class PeakProbe(unittest.TestCase):
    """bench/peak.c through bench/peak.py: compiled with this machine's compiler, run, parsed;
    and the '% peak' cells. Nothing is compared with a time."""

    def test_measures_a_positive_peak(self):
        p = peak.measure(1, seconds=0.05)
        self.assertEqual(p["threads"], 1)
        self.assertGreater(p["gflops"], 0)
        self.assertGreaterEqual(p["best"], p["gflops"])
        self.assertIn(p["lanes"], (4, 8, 16))
        self.assertEqual(p["chains"], 12)
        self.assertIn("GFLOP/s with 1 thread", peak.describe(p))

    def test_the_multiply_adds_read_registers_only(self):
        # A multiply-add with a memory operand (the constant kept on the stack) measured a
        # quarter below the rate OpenBLAS's sgemm reached, and every '% peak' came out high.
        with tempfile.TemporaryDirectory(prefix="tc-peak-asm-") as tmp:
            asm = os.path.join(tmp, "peak.s")
            subprocess.run(peak.build_command(asm, assembly=True), check=True)
            fmas = [l.strip() for l in open(asm) if l.strip().startswith("vfmadd") and "ps" in l.split()[0]]
        if not fmas:
            self.skipTest("no vector multiply-add on this CPU (-march=native)")
        self.assertGreaterEqual(len(fmas), 12, fmas)  # one per chain at least
        self.assertEqual([f for f in fmas if "(" in f], [], "multiply-adds reading memory")

    def test_bad_thread_count_is_an_error(self):
        with self.assertRaises(RuntimeError):
            peak.measure(0, seconds=0.05)

    def test_percent_of_peak(self):
        import harness
        timing = harness.Timing(median_ms=10.0, min_ms=9.0, samples=5)
        self.assertEqual(harness.percent_of_peak(2e9, timing, 400.0), "50%")  # 200 of 400 GFLOP/s
        self.assertEqual(harness.percent_of_peak(None, timing, 400.0), "")
        self.assertEqual(harness.percent_of_peak(2e9, timing, None), "")


class Smoke(unittest.TestCase):
    def test_each_framework_in_its_process(self):
        library = os.environ.get("TC_LIBRARY", str(REPO / "build" / "src" / "libtc.so"))
        if not Path(library).is_file():
            self.skipTest("no libtc at %s (set TC_LIBRARY)" % library)
        proc = subprocess.run(
            [sys.executable, str(REPO / "bench" / "bench.py"), "--quick", "--backend",
             "reference", "--only", "sgemm,softmax", "--threads", "1", "--reps", "1",
             "--peak-seconds", "0.05", "--markdown"],
            env=dict(os.environ, TC_LIBRARY=library), capture_output=True, text=True,
            timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        out = proc.stdout
        for framework in ("libtc", "PyTorch", "NumPy"):
            self.assertIn("run 1, %s process (sgemm,softmax): pid " % framework, out)
        self.assertIn("load average (1 min): ", out)
        self.assertIn("load average before it", out)
        self.assertIn("NumPy's BLAS: ", out)
        self.assertIn("PyTorch's BLAS: ", out)
        # The FMA peak in the header, and sgemm's share of it in its own column (softmax
        # counts no flops: empty there).
        self.assertIn("FMA peak (bench/peak.c): ", out)
        header = next(l for l in out.splitlines() if l.startswith("| kernel |"))
        column = [c.strip() for c in header.split("|")].index("libtc % peak")
        sgemm = next(l for l in out.splitlines() if l.startswith("| sgemm |"))
        self.assertRegex([c.strip() for c in sgemm.split("|")][column], r"^[0-9]+%$")

    def test_ab_alternates_variants_in_one_process(self):
        """bench/ab.py: two variants of one kernel, their outputs compared bit for bit, each
        variant's median and its ratio to the first's; a variant that is not KEY=VALUE is
        refused by name. On the reference backend, like the smoke run above (the sanitizer
        builds run this test too, and TSan's build keeps the cpu backend's JIT out of Python)."""
        library = os.environ.get("TC_LIBRARY", str(REPO / "build" / "src" / "libtc.so"))
        if not Path(library).is_file():
            self.skipTest("no libtc at %s (set TC_LIBRARY)" % library)
        ab = [sys.executable, str(REPO / "bench" / "ab.py"), "sgemm", "--quick", "--threads", "1",
              "--calls", "4", "--block", "2"]
        env = dict(os.environ, TC_LIBRARY=library)
        proc = subprocess.run(ab + ["backend=reference", "backend=reference checked=0"], env=env, capture_output=True,
                              text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("sgemm, 1 threads, 4 calls per variant in blocks of 2", proc.stdout)
        self.assertRegex(proc.stdout, r"backend=reference +median +[0-9.]+ ms +min +[0-9.]+ ms +x1\.000")
        self.assertRegex(proc.stdout, r"backend=reference checked=0 +median +[0-9.]+ ms .* x[0-9.]+")
        bad = subprocess.run(ab + ["backend=reference", "tile16"], env=env, capture_output=True, text=True,
                             timeout=120)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("option 'tile16' is not KEY=VALUE", bad.stderr)


if __name__ == "__main__":
    unittest.main()

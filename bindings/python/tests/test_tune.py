"""test_tune.py - Program.tune (tc_tune), Kernel.cache_hit (tc_kernel_cache_hit),
tc.cache_export / tc.cache_import and tc.cache_list / cache_verify / cache_clear, against a
private cache directory per test (option cache=DIR), so the user's cache is never read or
written.

Run: TC_LIBRARY=build/src/libtc.so PYTHONPATH=bindings/python /usr/bin/python3 -m unittest
(ctest does this: bindings.python.test_tune).
"""
import io
import os
import shutil
import tempfile
import unittest

import numpy as np

import tc
from tc import _progress

MM = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }"

# A deliberately bad starting point, so the search has something to improve on; small so the
# whole test stays within seconds.
BAD_START = {"cpu.vectorize": 1, "cpu.tile": "1x1", "threads": 1, "tune.population": 4,
             "tune.generations": 2}


def _inputs():
    rng = np.random.default_rng(7)
    # Small integers as floats: every product and sum is exact, whatever the loop order.
    A = rng.integers(-4, 5, size=(48, 32)).astype(np.float32)
    B = rng.integers(-4, 5, size=(32, 40)).astype(np.float32)
    return A, B


class Tune(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tc-test-tune-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.cache = os.path.join(self.dir, "cache")
        self.prog = tc.define(MM)
        self.A, self.B = _inputs()
        self.expected = self.A @ self.B

    def tune(self, progress, cache=None, **extra):
        options = dict(BAD_START, cache=cache or self.cache)
        options.update(extra)
        return self.prog.tune("mm", self.A, self.B, budget=30, progress=progress, **options)

    def test_tune_then_compile_hits_the_cache(self):
        calls = []

        def record(p):
            calls.append(p)
            return False

        k = self.tune(record)
        self.assertIsInstance(k, tc.Kernel)
        np.testing.assert_array_equal(k(self.A, self.B), self.expected)
        self.assertTrue(calls)
        for p in calls:
            self.assertIsInstance(p, tc.TuneProgress)
            self.assertGreaterEqual(p.generation, 1)
            self.assertLessEqual(p.generation, p.generations)
            self.assertEqual(p.generations, 2)
            self.assertEqual(p.budget_s, 30)
            self.assertGreaterEqual(p.candidates_done, 1)
            self.assertGreaterEqual(p.elapsed_s, 0)
        done = [p.candidates_done for p in calls]
        self.assertEqual(done, sorted(done))
        self.assertFalse(self.prog.compile("mm", self.A, self.B, cache="off").cache_hit)
        cached = self.prog.compile("mm", self.A, self.B, cache=self.cache)
        self.assertTrue(cached.cache_hit, cached.describe())
        np.testing.assert_array_equal(cached(self.A, self.B), self.expected)
        # tc_kernel_code lowers again: a kernel linked from the cache has its loop nest too.
        self.assertIn("produce ", cached.code())
        with self.assertRaises(tc.TcUnsupportedError):
            self.prog.compile("mm", self.A, self.B, backend="reference").code()

    def test_true_from_the_callable_stops_after_one_call(self):
        calls = []

        def stop(p):
            calls.append(p)
            return True

        k = self.tune(stop)
        self.assertEqual(len(calls), 1)
        np.testing.assert_array_equal(k(self.A, self.B), self.expected)

    def test_exception_in_the_callable_stops_and_propagates(self):
        calls = []

        def boom(p):
            calls.append(p)
            raise ValueError("stop here")

        with self.assertRaisesRegex(ValueError, "stop here"):
            self.tune(boom)
        self.assertEqual(len(calls), 1)

    def test_progress_false_and_bad_progress(self):
        k = self.tune(False, cache="off", **{"tune.population": 2, "tune.generations": 1})
        np.testing.assert_array_equal(k(self.A, self.B), self.expected)
        with self.assertRaises(TypeError):
            self.tune("yes")
        with self.assertRaises(TypeError):
            self.prog.tune("mm", self.A, self.B, **{"tune.budget": 5})

    def test_progress_lines_when_not_a_tty(self):
        stream = io.StringIO()
        line = _progress._ProgressLine("mm", stream)
        for gen, done in ((1, 1), (1, 2), (2, 3), (2, 4)):
            line.update(tc.TuneProgress(gen, 2, done, 4, 0.5, 1.0, 0.1 * done, 30.0))
        line.finish()
        lines = stream.getvalue().splitlines()
        self.assertEqual(len(lines), 2, lines)  # one per generation
        self.assertIn("generation 1/2", lines[0])
        self.assertIn("candidates 4/4", lines[1])
        self.assertNotIn("\r", stream.getvalue())

    def test_bad_options_raise_before_tuning(self):
        with self.assertRaises(tc.TcInvalidArgumentError):
            self.prog.tune("mm", self.A, self.B, progress=False, **{"tune.population": 0})
        with self.assertRaises(tc.TcInvalidArgumentError):
            self.prog.tune("nope", self.A, self.B, progress=False, cache="off")


class CacheFiles(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tc-test-cache-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.prog = tc.define(MM)
        self.A, self.B = _inputs()

    def test_export_then_import_into_another_cache(self):
        first, other = os.path.join(self.dir, "first"), os.path.join(self.dir, "other")
        self.prog.tune("mm", self.A, self.B, budget=30, progress=False, cache=first,
                       **BAD_START)
        self.assertFalse(self.prog.compile("mm", self.A, self.B, cache=other).cache_hit)
        exported = os.path.join(self.dir, "tuned.tccache")
        tc.cache_export(exported, cache_dir=first)
        self.assertTrue(os.path.isfile(exported))
        tc.cache_import(exported, cache_dir=other)
        k = self.prog.compile("mm", self.A, self.B, cache=other)
        self.assertTrue(k.cache_hit, k.describe())
        np.testing.assert_array_equal(k(self.A, self.B), self.A @ self.B)

    def test_list_verify_and_clear(self):
        cache = os.path.join(self.dir, "cache")
        with self.assertRaises(tc.TcCacheError) as caught:
            tc.cache_list(cache)
        self.assertIn("no cache at '%s'" % cache, str(caught.exception))
        self.prog.tune("mm", self.A, self.B, budget=30, progress=False, cache=cache, **BAD_START)
        everything = tc.cache_list(cache)
        # Besides the tuned kernel, the tuner keeps Halide's runtime object (warm start).
        self.assertIn("(shared code)", [r.def_ for r in everything])
        records = [r for r in everything if r.def_ != "(shared code)"]
        self.assertEqual(len(records), 1)
        r = records[0]
        self.assertIsInstance(r, tc.CacheRecord)
        self.assertEqual((r.def_, r.sizes, r.backend), ("mm", "M=48 K=32 N=40", "cpu"))
        # The tuner stores the start itself when no candidate beats it (a 1.5 us kernel and 8
        # candidates can tie), so the record's best is at most its default.
        self.assertLessEqual(r.best_ms, r.default_ms)
        self.assertIn("cpu.tile=", r.knobs)
        self.assertTrue(r.history)
        self.assertTrue(all(isinstance(t, tc.CacheTrial) for t in r.history))
        # The winner is in its history as measured. Its time there is the search's; the record's
        # is the confirmation's when the winner gave way to the start (a 3 us kernel: noise).
        self.assertIn((r.knobs, "measured"), [(t.knobs, t.outcome) for t in r.history])
        self.assertEqual(tc.cache_verify(cache), [])
        tc.cache_clear(cache)
        self.assertEqual(tc.cache_list(cache), [])
        self.assertTrue(os.path.isfile(os.path.join(cache, "data.mdb")))

    def test_a_polymorphic_def_is_stored_per_rank_with_its_ellipsis_sizes(self):
        cache = os.path.join(self.dir, "cache")
        prog = tc.define("def bmm(float(..., M, K) A, float(..., K, N) B) -> (C) {\n"
                         "  C(..., m, n) +=! A(..., m, k) * B(..., k, n)\n}")
        A, B = self.A.reshape(2, 24, 32), np.stack([self.B, self.B])
        prog.tune("bmm", A, B, budget=30, progress=False, cache=cache, **BAD_START)
        prog.tune("bmm", self.A, self.B, budget=30, progress=False, cache=cache, **BAD_START)
        sizes = sorted(r.sizes for r in tc.cache_list(cache) if r.def_ == "bmm")
        self.assertEqual(sizes, ["...[0]=2 M=24 K=32 N=40", "M=48 K=32 N=40"])
        k = prog.compile("bmm", A, B, cache=cache, threads=1)
        self.assertTrue(k.cache_hit)
        np.testing.assert_array_equal(k(A, B), np.matmul(A, B))

    def test_importing_junk_raises_the_cache_error(self):
        junk = os.path.join(self.dir, "junk.tccache")
        with open(junk, "wb") as f:
            f.write(b"this is not a libtc cache export\n" * 10)
        with self.assertRaises(tc.TcCacheError) as caught:
            tc.cache_import(junk, cache_dir=os.path.join(self.dir, "cache"))
        self.assertEqual(caught.exception.status_name, "TC_ERROR_CACHE")
        with self.assertRaises(tc.TcCacheError):
            tc.cache_import(os.path.join(self.dir, "missing.tccache"),
                            cache_dir=os.path.join(self.dir, "cache"))


if __name__ == "__main__":
    unittest.main()

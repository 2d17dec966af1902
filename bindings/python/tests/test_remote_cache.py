"""test_remote_cache.py - the remote cache tier from Python: Kernel.cache_tier after a tune
published to a real redis-server (started here on a free loopback port, stopped here),
tc.cache_push / tc.cache_pull, and tc.cache_list / tc.cache_verify with remote=.

Run: TC_LIBRARY=build/src/libtc.so PYTHONPATH=bindings/python /usr/bin/python3 -m unittest
(ctest does this: bindings.python.test_remote_cache).
"""
import os
import shutil
import sys
import tempfile
import unittest

import numpy as np

import tc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "common"))
from redis_server import RedisServer, write_key  # noqa: E402

MM = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }"
SMALL = {"tune.population": 4, "tune.generations": 2, "tune.patience": 0}


@unittest.skipUnless(shutil.which("redis-server"), "no redis-server (Debian's redis-server; tools/install-deps.sh installs it)")
class RemoteCache(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tc-test-remote-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        server = RedisServer(self.dir)
        self.addCleanup(server.kill)
        self.url = server.url
        self.key = write_key(os.path.join(self.dir, "key"))
        # 5 s: a loaded machine's stall must not turn a hit into a miss (the default is 300 ms).
        self.remote = {"cache.remote": self.url, "cache.remote_key": self.key, "cache.remote_timeout": 5000}
        rng = np.random.default_rng(3)
        self.A = rng.integers(-4, 5, size=(24, 16)).astype(np.float32)
        self.B = rng.integers(-4, 5, size=(16, 20)).astype(np.float32)
        self.prog = tc.define(MM)

    def cache(self, name):
        return os.path.join(self.dir, name)

    def test_tiers_after_a_published_tune(self):
        self.prog.tune("mm", self.A, self.B, budget=30, progress=False, cache=self.cache("a"), **SMALL, **self.remote)
        k = self.prog.compile("mm", self.A, self.B, cache=self.cache("b"), **self.remote)
        self.assertEqual(k.cache_tier, "remote", k.describe())
        self.assertTrue(k.cache_hit)
        np.testing.assert_array_equal(k(self.A, self.B), self.A @ self.B)
        self.assertEqual(self.prog.compile("mm", self.A, self.B, cache=self.cache("b"), **self.remote).cache_tier,
                         "local")
        self.assertIsNone(self.prog.compile("mm", self.A, self.B, cache=self.cache("c")).cache_tier)
        records = tc.cache_list(remote=self.url, remote_key=self.key)
        self.assertEqual(sorted(r.def_ for r in records), ["(shared code)", "mm"])
        self.assertEqual(tc.cache_verify(remote=self.url, remote_key=self.key), [])

    def test_push_pull(self):
        self.prog.tune("mm", self.A, self.B, budget=30, progress=False, cache=self.cache("a"), **SMALL)
        self.assertEqual(tc.cache_push(self.url, self.key, cache_dir=self.cache("a")), 2)
        self.assertEqual(tc.cache_pull(self.url, self.key, cache_dir=self.cache("d")), 2)
        self.assertEqual([r.key for r in tc.cache_list(self.cache("d"))], [r.key for r in tc.cache_list(self.cache("a"))])
        os.chmod(self.key, 0o644)
        with self.assertRaisesRegex(tc.TcCacheError, "can be read or written by group or others"):
            tc.cache_pull(self.url, self.key, cache_dir=self.cache("d"))
        with self.assertRaisesRegex(tc.TcInvalidArgumentError, "not a redis:// or unix:// URL"):
            tc.cache_push("http://localhost:80", self.key, cache_dir=self.cache("a"))


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""remote_processes.py - the cache's remote tier across processes, with the `tc` tool and a real
Debian redis-server started here on a free loopback port (temporary directory, no persistence)
and stopped here:

  - a kernel tuned in one process (its own local cache) is a remote hit in a second process with
    another local cache, which keeps it: a third process hits it locally;
  - Redis killed (SIGKILL) in the middle of a tune and restarted empty: the tune still succeeds
    and publishes its winner to the restarted server; a tune whose server stays down succeeds too,
    saying the remote was not updated;
  - 8 processes tuning different kernels at once: every record reaches the server;
  - tc cache push / pull / ls --remote / verify --remote, a record changed in Redis counted by
    verify, and a key file others can read refused.

Usage: remote_processes.py TC_BINARY
"""
import os
import select
import signal
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from redis_server import RedisServer, write_key  # noqa: E402

TC = None  # the tc binary, from argv

MM = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }\n"


class RemoteProcesses(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="tc-remote-")
        self.dir = self.tmp.name
        self.redis = RedisServer(self.dir)
        self.key = write_key(os.path.join(self.dir, "key"))
        self.tc_file = os.path.join(self.dir, "mm.tc")
        with open(self.tc_file, "w") as f:
            f.write(MM)
        self.env = dict(os.environ, TC_CACHE_REMOTE=self.redis.url, TC_CACHE_REMOTE_KEY=self.key)

    def tearDown(self):
        self.redis.kill()
        self.tmp.cleanup()

    def remote(self):
        # 5 s: a loaded machine's stall must not turn a hit into a miss (the default is 300 ms).
        return ["--option", "cache.remote=" + self.redis.url, "--option", "cache.remote_key=" + self.key,
                "--option", "cache.remote_timeout=5000"]

    def tune_cmd(self, cache, size="M=32,K=24,N=40", budget=30, extra=()):
        return [TC, "tune", self.tc_file, "--size", size, "--cache", os.path.join(self.dir, cache),
                "--budget", str(budget), "--option", "tune.population=4", "--option", "tune.patience=0",
                "--option", "tune.generations=2"] + self.remote() + list(extra)

    def tc(self, *args, check=True):
        r = subprocess.run([TC] + list(args), capture_output=True, text=True, env=self.env, timeout=300)
        if check:
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r

    def explain(self, cache, size="M=32,K=24,N=40"):
        """The provenance line of a compile in a new process with local cache `cache`."""
        r = self.tc("run", self.tc_file, "--size", size, "--option", "cache=" + os.path.join(self.dir, cache),
                    *self.remote(), "--explain")
        return next(l for l in r.stdout.splitlines() if l.startswith("cache:"))

    def remote_defs(self):
        """The SIZES column of every kernel record `tc cache ls --remote` lists."""
        out = self.tc("cache", "ls", "--remote").stdout.splitlines()
        return sorted(l.split()[1] for l in out[1:] if l.startswith("mm "))

    def test_tuned_in_one_process_a_hit_in_another(self):
        self.tc(*self.tune_cmd("a")[1:])
        line = self.explain("b")
        self.assertIn("cache: hit in remote '%s' (kept in '%s/b')" % (self.redis.url, self.dir), line)
        self.assertIn("code loaded from the cache", line)
        self.assertIn("cache: hit in '%s/b'" % self.dir, self.explain("b"))
        self.assertIn("cache: miss", self.explain("c", size="M=8,K=8,N=8"))

    def test_redis_killed_mid_tune_and_restarted(self):
        # The server goes down in the middle of a search and comes back, empty, before its end;
        # the tune finishes and publishes to the restarted server. Decided by events, not by
        # time: the tune's first progress line (its starting point measured, the remote read
        # before the search) is the middle; the tune is stopped (SIGSTOP) while Redis is killed
        # and restarted, and continued once the new server answers, so that its end comes after.
        # Two generations, whatever the machine's speed (no budget ends it): after the first
        # line a whole generation's compilation still stands between the tune and its end.
        tune = subprocess.Popen(self.tune_cmd("a", budget=86400), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        ready, _, _ = select.select([tune.stderr], [], [], 300)  # a hang guard
        first = tune.stderr.readline() if ready else ""
        os.kill(tune.pid, signal.SIGSTOP)
        self.assertIn("generation 1/2, candidate 1/", first)
        self.redis.kill()
        self.redis.start()
        os.kill(tune.pid, signal.SIGCONT)
        out, err = tune.communicate(timeout=300)
        self.assertEqual(tune.returncode, 0, out + first + err)
        self.assertIn("published: record stored", out)
        self.assertEqual(self.remote_defs(), ["M=32"])
        # Down for good: the tune succeeds, stores locally, and says the remote was not updated.
        self.redis.kill()
        r = subprocess.run(self.tune_cmd("b", size="M=16,K=24,N=40"), capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("remote not updated: remote cache '%s': cannot connect" % self.redis.url, r.stdout)
        self.assertIn("stored in '%s/b'" % self.dir, r.stdout)

    def test_eight_tuners_at_once_publish_every_record(self):
        sizes = ["M=%d,K=16,N=24" % m for m in range(9, 17)]
        procs = [subprocess.Popen(self.tune_cmd("p%d" % i, size=s), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for i, s in enumerate(sizes)]
        for p in procs:
            out, err = p.communicate(timeout=600)
            self.assertEqual(p.returncode, 0, out + err)
            self.assertIn("; published: ", out)
        self.assertEqual(self.remote_defs(), sorted("M=%d" % m for m in range(9, 17)))
        r = self.tc("cache", "verify", "--remote")
        self.assertRegex(r.stdout, r"^9 records and \d+ history entries sound, 0 damaged$")

    def test_push_pull_ls_verify_and_the_key_rules(self):
        self.tc("tune", self.tc_file, "--size", "M=32,K=24,N=40", "--cache", os.path.join(self.dir, "a"),
                "--option", "tune.population=4", "--option", "tune.generations=1")  # local only
        r = self.tc("cache", "push", "--cache", os.path.join(self.dir, "a"))
        self.assertEqual(r.stdout, "2 records stored in the remote cache\n")
        r = self.tc("cache", "pull", "--remote", self.redis.url, "--remote-key", self.key,
                    "--cache", os.path.join(self.dir, "c"))
        self.assertEqual(r.stdout, "2 records stored in the local cache\n")
        local = self.tc("cache", "ls", "--cache", os.path.join(self.dir, "c")).stdout
        self.assertEqual(self.tc("cache", "ls", "--remote").stdout, local)
        self.assertRegex(self.tc("cache", "verify", "--remote").stdout, r"^2 records and \d+ history entries sound")
        # One byte changed in Redis: verify names it and exits 1; ls counts it on stderr.
        victim = next(k for k in self.redis.cli("--scan", "--pattern", "libtc:record:*").split())
        self.redis.cli("SETRANGE", victim, "200", "Z")
        r = self.tc("cache", "verify", "--remote", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("damaged: record %s: signature does not verify" % victim[len("libtc:record:"):][:16], r.stdout)
        self.assertIn("1 damaged entry in the cache", self.tc("cache", "ls", "--remote").stderr)
        # A key file others can read is refused, naming the file.
        os.chmod(self.key, 0o644)
        r = self.tc("cache", "push", "--cache", os.path.join(self.dir, "a"), check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("remote cache key file '%s' can be read or written by group or others (mode 644)" % self.key,
                      r.stderr)
        # No remote named at all.
        r = subprocess.run([TC, "cache", "ls", "--remote"], capture_output=True, text=True,
                           env={k: v for k, v in self.env.items() if k != "TC_CACHE_REMOTE"})
        self.assertEqual(r.returncode, 1)
        self.assertIn("give --remote URL or set TC_CACHE_REMOTE", r.stderr)


if __name__ == "__main__":
    TC = sys.argv.pop(1)
    unittest.main(verbosity=2)

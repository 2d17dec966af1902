"""remote_cache.py - the cache's remote tier, timed in fresh processes.

Starts Debian's redis-server on a free loopback port (temporary directory, stopped at the end),
tunes mm (float32 256x128 . 128x192) once with cache.remote set (tc_tune publishes its winner),
then times tc_compile, each the first compile of a fresh process:

  remote hit     an empty local cache: the record (and the cpu backend's shared code, Halide's
                 runtime) fetched from Redis, its signature checked, kept locally, its code linked;
  local hit      the same local cache again in the next process (after the transfer);
  no remote      cache.remote=off and an empty local cache: compiled (the baseline of the three
                 fallbacks below);
  server down    nothing listens on the port: connection refused, then compiled;
  silent server  a server that accepts and never answers: one cache.remote_timeout (300 ms)
                 spent, then compiled; later compiles in the same process skip it (paused).

Each case but the first also times --later more compiles in the same process (hits; or, for
the last three, compiles without a record, the process's Halide runtime built already).

  /usr/bin/python3 bench/remote_cache.py [--procs 9] [--budget 3] [--library build/src/libtc.so]

Timings depend on the machine's load: run it on an otherwise idle machine (bench/README.md).
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "common"))
from redis_server import RedisServer, free_port, write_key  # noqa: E402
MM = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }"

CHILD = r"""
import os, sys, time, json
sys.path.insert(0, os.path.join(sys.argv[1], "bindings", "python"))
import numpy as np
import tc
options, later = json.loads(sys.argv[2]), int(sys.argv[3])
A = np.ones((256, 128), np.float32); B = np.ones((128, 192), np.float32)
p = tc.define(sys.argv[4])
times, tiers = [], []
for _ in range(1 + later):
    t = time.perf_counter()
    k = p.compile("mm", A, B, **options)
    times.append((time.perf_counter() - t) * 1e3)
    tiers.append(k.cache_tier)
print(json.dumps({"ms": times, "tiers": tiers, "describe": k.describe().splitlines()[1]}))
"""


def silent_server():
    """A loopback server that accepts connections and never answers; its port."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    held = []
    threading.Thread(target=lambda: [held.append(s.accept()) for _ in iter(int, 1)], daemon=True).start()
    return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--procs", type=int, default=9)
    ap.add_argument("--later", type=int, default=3)
    ap.add_argument("--budget", type=float, default=3)
    ap.add_argument("--library", default=os.path.join(ROOT, "build", "src", "libtc.so"))
    a = ap.parse_args()
    env = dict(os.environ, TC_LIBRARY=os.path.abspath(a.library))
    with tempfile.TemporaryDirectory(prefix="tc-bench-remote-") as tmp:
        server = RedisServer(tmp)
        try:
            key = write_key(os.path.join(tmp, "key"))
            remote = {"cache.remote": server.url, "cache.remote_key": key}
            tune = ("import os, sys, json; sys.path.insert(0, os.path.join(sys.argv[1], 'bindings', 'python'))\n"
                    "import numpy as np, tc\n"
                    "A = np.ones((256, 128), np.float32); B = np.ones((128, 192), np.float32)\n"
                    "tc.define(sys.argv[2]).tune('mm', A, B, budget=float(sys.argv[3]), progress=False,"
                    " **json.loads(sys.argv[4]))\n")
            subprocess.run([sys.executable, "-c", tune, ROOT, MM, str(a.budget),
                            json.dumps(dict(remote, cache=os.path.join(tmp, "tuner")))], env=env, check=True)

            def child(options, later=0):
                out = subprocess.run([sys.executable, "-c", CHILD, ROOT, json.dumps(options), str(later), MM], env=env,
                                     check=True, capture_output=True, text=True).stdout
                return json.loads(out.strip().splitlines()[-1])

            silent = silent_server()
            rows = {name: ([], [], set()) for name in
                    ["remote hit", "local hit", "no remote", "server down", "silent server"]}
            for i in range(a.procs):
                local = os.path.join(tmp, "local%d" % i)
                cases = [("remote hit", dict(remote, cache=local), 0),
                         ("local hit", dict(remote, cache=local), a.later),
                         ("no remote", {"cache": os.path.join(tmp, "none%d" % i)}, a.later),
                         ("server down", dict(remote, cache=os.path.join(tmp, "down%d" % i),
                                              **{"cache.remote": "redis://127.0.0.1:%d" % free_port()}), a.later),
                         ("silent server", dict(remote, cache=os.path.join(tmp, "silent%d" % i),
                                                **{"cache.remote": "redis://127.0.0.1:%d" % silent}), a.later)]
                for name, options, later in cases:
                    r = child(options, later)
                    rows[name][0].append(r["ms"][0])
                    rows[name][1].extend(r["ms"][1:])
                    rows[name][2].add(str(r["tiers"][0]))
        finally:
            server.kill()
        print(f"libtc {a.library}; mm 256x128x192 tuned for {a.budget:g} s; {a.procs} fresh processes per case; "
              f"load average {os.getloadavg()[0]:.2f}")
        print("| case | first tc_compile, median ms | first, max ms | later compiles, median ms | tier served |")
        print("|---|---|---|---|---|")
        for name, (first, later, tiers) in rows.items():
            later_text = f"{statistics.median(later):.2f}" if later else "-"
            print(f"| {name} | {statistics.median(first):.2f} | {max(first):.2f} | {later_text} | "
                  f"{', '.join(sorted(tiers))} |")


if __name__ == "__main__":
    main()

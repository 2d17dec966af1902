#!/usr/bin/env python3
"""regressions.py - the defects a review of trust found that the corpus cannot express, each in a child
process so that a crash fails the test instead of killing it:

  empty_output_null_data   an output of extent 0 with data == NULL beside a non-empty one (7)
  threads_under_ulimit     threads=1024 under a 3 GB address-space limit: a status, no abort (3)
  temporary_under_ulimit   a temporary larger than a memory limit allows: TC_ERROR_NO_MEMORY
                           naming it, on every backend (14)
  huge_temporary_reference a 4e12-byte temporary on the reference backend: TC_ERROR_NO_MEMORY (14)
  quiet_stderr             nothing from Halide on the host's stderr (14)
  cli_bad_sizes            tc run with negative or huge sizes, tc check on a NUL byte (17)
  cli_options              tc options lists the keys; tc run --option sets any of them, and a
                           bad one fails with libtc's message
  cli_explain              tc run --explain compiles and describes without running: the cpu
                           schedule; for cuda.arch=sm_90 (no GPU) the launch with its registers,
                           spills, shared memory and occupancy
  cli_profile              tc run --profile [--gpu a100] prints a cuda.emulate=1 kernel's GPU profile
                           and estimate; without emulation it fails, saying why
  cli_float16              tc run's checksums of float16 and bfloat16 programs (converted by libtc itself,
                           the CLI includes tc.h only) are those of the former built-in encoder
  cli_tune                 tc tune into a temporary cache prints the winner ("tuned now:") and
                           a summary with the result's times, not the search's;
                           tc run reads that cache; tc cache export/import round-trip it;
                           --budget 0.1 still measures and stores the starting point
  cli_cache                tc cache ls after a tune lists the def and sizes, show its knobs,
                           key and history; verify exits 0 on the clean cache, and 1 naming
                           the record after a byte of it is changed in data.mdb; clear empties
                           it (data.mdb stays, 0600); a missing cache is an error naming it
  cli_ellipsis             tc check prints '...' signatures; tc run takes --size ...=2x3
  cli_grad                 tc grad prints the gradient def; a refused def and a wrong --entry
                           exit 1 with the reason
  cli_kept_code            two tc processes with cache=off in one new $TMPDIR: the first builds the cpu
                           backend's Halide runtime object and the kernel's object and keeps them, the
                           second takes them (the files are not written again); a kept file whose
                           checksum fails, and one whose checksum holds but which is no object, are built
                           again and replaced, and the result is the same
  cli_tune_together_killed two tc tune processes tuning one key into one cache at once both
                           succeed, leaving one sound record that tc run uses; a third, killed
                           with SIGKILL right after its first record landed, leaves a cache
                           that verifies clean and runs the killed process's kernel

    TC_LIBRARY=build/src/libtc.so TC_CLI=build/programs/tc/tc python3 regressions.py [NAME...]

Prints one line per check and "N passed, M failed". The memory checks are skipped when a
sanitizer runtime is preloaded (its shadow memory needs more address space than any limit, and
its operator new aborts on an impossible size).
"""
import contextlib
import hashlib
import os
import re
import resource
import subprocess
import shutil
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BACKENDS = ("reference", "cpu")


def child(code, limit_bytes=None, timeout=300):
    """Runs `code` in a fresh interpreter (tclib and numpy imported); returns (rc, out, err)."""
    prelude = "import sys; sys.path.insert(0, %r)\nimport numpy as np, tclib\n%s" % (HERE, OUTCOME)

    def limit():
        if limit_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    p = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True,
                       text=True, timeout=timeout, preexec_fn=limit)
    return p.returncode, p.stdout, p.stderr


# Defined in every child: runs `call` and prints "ran", or the status of the TCError it raised
# followed by whether each fragment is in its message.
OUTCOME = """
def outcome(call, *fragments):
    try:
        call()
        print("ran")
    except tclib.TCError as e:
        print(tclib.STATUS_NAME[e.status], *[f in e.message for f in fragments])
"""


def sanitized():
    return any(s in os.environ.get("LD_PRELOAD", "") for s in ("asan", "tsan", "ubsan"))


def expect_lines(rc, out, err, wanted):
    if rc != 0:
        raise AssertionError("child exited with %d\nstdout: %s\nstderr: %s" % (rc, out, err[-2000:]))
    got = out.strip().splitlines()
    if got != wanted:
        raise AssertionError("got %r, expected %r (stderr: %s)" % (got, wanted, err[-500:]))


def empty_output_null_data():
    for backend in BACKENDS:
        rc, out, err = child("""
            prog = tclib.Program("def f(float(N) A, float(M) B) -> (O, P) { O(i) = A(i) * 2  P(j) = B(j) }")
            A, B = np.array([1, 2, 3], np.float32), np.zeros(0, np.float32)
            k = prog.compile("f", [A, B], {"backend": %r})
            O, P = np.zeros(3, np.float32), np.zeros(0, np.float32)
            k.run([A, B], [O, tclib.Tensor(P, data=None)])
            print(O.tolist())
        """ % backend)
        expect_lines(rc, out, err, ["[2.0, 4.0, 6.0]"])


def threads_under_ulimit():
    rc, out, err = child("""
        src = "def f(float(N,M) A) -> (O) { O(i,j) = A(i,j) + 1 }"
        A = np.ones((4096, 64), np.float32)
        prog = tclib.Program(src)
        O = np.zeros_like(A)
        # "ran" if the system had room for 1023 threads after all
        outcome(lambda: prog.compile("f", [A], {"threads": "1024"}).run([A], [O]), "threads=1024")
        # The workers that did start stay in the pool and hold their stacks: with so little
        # address space left, compiling again may itself run out of memory (a status too).
        outcome(lambda: prog.compile("f", [A], {"threads": "2"}).run([A], [O]))
        print(float(O.sum()) == 2.0 * A.size)
    """, limit_bytes=3 * 10 ** 9)
    lines = out.strip().splitlines()
    second_ok = lines[1:] == ["ran", "True"] or lines[1:2] == ["TC_ERROR_NO_MEMORY"]
    if rc != 0 or not second_ok or lines[0] not in ("ran", "TC_ERROR_NO_MEMORY True"):
        raise AssertionError("rc %d, stdout %r, stderr %s" % (rc, out, err[-1500:]))


def temporary_under_ulimit():
    # 1.5 GB of temporary under a limit of what the process has mapped plus 1 GB.
    for backend in BACKENDS:
        rc, out, err = child("""
            prog = tclib.Program("def f(float(N) A, float(M) B) -> (O) { t(i,j) = A(i) * B(j)  O(i) +=! t(i,j) }")
            A, B = np.ones(20000, np.float32), np.ones(20000, np.float32)
            k = prog.compile("f", [A, B], {"backend": %r})
            import resource
            with open("/proc/self/statm") as f:
                mapped = int(f.read().split()[0]) * resource.getpagesize()
            resource.setrlimit(resource.RLIMIT_AS, (mapped + 10 ** 9, mapped + 10 ** 9))
            outcome(lambda: k.run([A, B], [np.zeros(20000, np.float32)]), "'t'", "out of memory")
        """ % backend)
        expect_lines(rc, out, err, ["TC_ERROR_NO_MEMORY True True"])


def huge_temporary_reference():
    # 4e12 bytes: more than any machine this runs on, refused by the allocator at once.
    rc, out, err = child("""
        prog = tclib.Program("def f(float(N) A) -> (O) { t(i,j) = A(i) * A(j)  O(i) +=! t(i,j) }")
        A = np.zeros(1000000, np.float32)
        outcome(lambda: prog.compile("f", [A], {"backend": "reference"}).run([A], [np.zeros(1000000, np.float32)]),
                "'t'", "4000000000000 bytes")
    """)
    expect_lines(rc, out, err, ["TC_ERROR_NO_MEMORY True True"])


def quiet_stderr():
    # Programs Halide used to warn about on stderr: a 10^12 temporary (compiled only: with
    # 64-bit offsets it compiles, and running it asks for 4 TB, which a sanitizer's
    # allocator refuses by aborting), a guaranteed failure.
    rc, out, err = child("""
        for src, n in [("def f(float(N) A) -> (O) { t(i,j) = A(i) * A(j)  O(i) +=! t(i,j) }", 1000000),
                       ("def g(float(N) A, int32(N) I) -> (O) { O(i) = A(I(i)) }", 4)]:
            prog = tclib.Program(src)
            ins = [np.ones(n, np.float32)] + ([np.full(n, 99, np.int32)] if "I" in src else [])
            entry = src.split()[1].split("(")[0]
            if entry == "f":
                outcome(lambda: prog.compile(entry, ins))
            else:
                outcome(lambda: prog.compile(entry, ins).run(ins, [np.zeros(n, np.float32)]))
    """)
    # A preloaded sanitizer runtime warns about Halide's own stack switching: not libtc's output.
    ours = [line for line in err.splitlines() if not (sanitized() and re.match(r"==\d+==WARNING", line))]
    if rc != 0 or any(line.strip() for line in ours):
        raise AssertionError("rc %d; the host's stderr got: %r" % (rc, err[-1500:]))
    if out.split() != ["ran", "TC_ERROR_RUNTIME"]:
        raise AssertionError("statuses %r" % out)


def cli_bad_sizes():
    cli = os.environ.get("TC_CLI")
    if not cli:
        raise Skip("TC_CLI is not set")
    mm = os.path.join(HERE, "..", "..", "examples", "tc", "mm.tc")
    cases = [("M=-5,K=3,N=2", "0..2147483647"), ("M=99999999999,K=3,N=2", "0..2147483647")]
    if not sanitized():  # ASan's operator new aborts instead of throwing
        cases.append(("M=2000000000,K=2000000000,N=2", "cannot allocate"))
    for sizes, fragment in cases:
        p = subprocess.run([cli, "run", mm, "--size", sizes], capture_output=True, text=True, timeout=120)
        if p.returncode not in (1, 2) or fragment not in p.stderr:
            raise AssertionError("tc run --size %s: rc %d, stderr %r" % (sizes, p.returncode, p.stderr))
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "tc-nul-%d.tc" % os.getpid())
    with open(path, "wb") as f:
        f.write(b"def f(float(N) A) -> (O) { O(i) = A(i) }\0 garbage")
    try:
        p = subprocess.run([cli, "check", path], capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(path)
    if p.returncode != 1 or "NUL byte" not in p.stderr:
        raise AssertionError("tc check on a NUL byte: rc %d, stderr %r" % (p.returncode, p.stderr))


def cli():
    path = os.environ.get("TC_CLI")
    if not path:
        raise Skip("TC_CLI is not set")
    return path


def run_cli(*args, timeout=120):
    return subprocess.run([cli(), *args], capture_output=True, text=True, timeout=timeout)


MM_SOURCE = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }\n"


@contextlib.contextmanager
def mm_dir(prefix):
    """A temporary directory holding mm.tc (the matmul the CLI checks tune), removed afterwards."""
    tmp = tempfile.mkdtemp(prefix=prefix)
    try:
        src = os.path.join(tmp, "mm.tc")
        with open(src, "w") as f:
            f.write(MM_SOURCE)
        yield tmp, src
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def expect_cli(p, what, rc=0, out=(), err=()):
    """p (a finished tc command) if it exited with rc and printed every `out` on stdout and every
    `err` on stderr; else AssertionError with all it printed."""
    if p.returncode != rc or any(o not in p.stdout for o in out) or any(e not in p.stderr for e in err):
        raise AssertionError("%s: rc %d (expected %d; stdout should hold %r, stderr %r), stdout %r, "
                             "stderr %r" % (what, p.returncode, rc, out, err, p.stdout, p.stderr))
    return p


def cli_options():
    p = run_cli("options")
    rows = {line.split()[0]: line.split() for line in p.stdout.splitlines() if line.strip()}
    backend = rows.get("backend", [])[1:3]  # key, values, default, help...
    if p.returncode != 0 or backend != ["cpu|reference|cuda", "cpu"] or "cpu.tile" not in rows or "cuda.tile" not in rows:
        raise AssertionError("tc options: rc %d, stdout %r, stderr %r"
                             % (p.returncode, p.stdout, p.stderr))
    mm = os.path.join(HERE, "..", "..", "examples", "tc", "mm.tc")
    for extra in (["--option", "cpu.tile=8x2"], ["--option", "cpu.tile=8x2", "--option", "threads=2"],
                  ["--backend", "reference", "--option", "checked=0"]):
        p = run_cli("run", mm, "--size", "M=64,K=32,N=48", *extra)
        if p.returncode != 0 or "output C: shape (64, 48) checksum" not in p.stdout:
            raise AssertionError("tc run %s: rc %d, stdout %r, stderr %r"
                                 % (" ".join(extra), p.returncode, p.stdout, p.stderr))
    bad = [(["--option", "cpu.tile=0x0"], 1,
            "option 'cpu.tile' cannot be '0x0' (allowed: auto|1..4096x1..4096)"),
           (["--option", "no.such=1"], 1, "unknown option 'no.such'"),
           (["--backend", "no-such"], 1, "option 'backend' cannot be 'no-such'"),
           (["--option", "cpu.tile"], 2, "--option expects KEY=VALUE")]
    for extra, rc, fragment in bad:
        p = run_cli("run", mm, "--size", "M=64,K=32,N=48", *extra)
        if p.returncode != rc or fragment not in p.stderr or p.stdout:
            raise AssertionError("tc run %s: rc %d (expected %d), stdout %r, stderr %r"
                                 % (" ".join(extra), p.returncode, rc, p.stdout, p.stderr))


def cli_explain():
    mm = os.path.join(HERE, "..", "..", "examples", "tc", "mm.tc")
    p = expect_cli(run_cli("run", mm, "--size", "M=64,K=32,N=48", "--explain"), "tc run --explain",
                   out=["backend: cpu", "options: "])
    if "checksum" in p.stdout:
        raise AssertionError("tc run --explain ran the kernel: %r" % p.stdout)
    p = run_cli("run", mm, "--size", "M=128,K=64,N=128", "--backend", "cuda", "--option", "cuda.arch=sm_90", "--explain")
    if p.returncode != 0 and "NVRTC" in p.stderr:
        raise Skip("no NVRTC: " + p.stderr.splitlines()[0])
    expect_cli(p, "tc run --explain, cuda sm_90", out=["mm_k0 grid 4x4x1 block 256x1x1\n    ", " registers, 0 bytes spilled,",
                                                      "occupancy "])
    if "checksum" in p.stdout:
        raise AssertionError("tc run --explain ran the kernel: %r" % p.stdout)


def cli_profile():
    if os.environ.get("TC_E2E_CUDA_EMULATION") == "0":  # ThreadSanitizer's build: coroutines unseen by it
        raise Skip("the cuda emulation is off in this build's e2e tests")
    mm = os.path.join(HERE, "..", "..", "examples", "tc", "mm.tc")
    p = expect_cli(run_cli("run", mm, "--size", "M=64,K=32,N=64", "--backend", "cuda", "--option", "cuda.emulate=1",
                           "--profile", "--gpu", "a100"), "tc run --profile",
                   out=["launch 1 of ", "  work_balance 1.00 ", "  fma 131072\n", "  estimated_us ", " on a100: A100 "])
    if "checksum" in p.stdout:
        raise AssertionError("tc run --profile printed a run's checksum: %r" % p.stdout)
    p = run_cli("run", mm, "--size", "M=64,K=32,N=64", "--profile")
    if p.returncode == 0 or "a profile is made for backend=cuda kernels compiled with cuda.emulate=1" not in p.stderr:
        raise AssertionError("tc run --profile on the cpu backend: exit %d, %r" % (p.returncode, p.stderr))


# Checksums the CLI printed when it encoded float16 itself (support/half.h), to the last digit.
FLOAT16_PROGRAMS = [
    ("def mix(float16(N) A, float(N) B, int32(N) I) -> (O, P, Q) {\n"
     "  O(i) = A(i) * 2 + float16(B(i))\n  P(i) = float(A(i)) + B(i)\n  Q(i) = float16(I(i)) * A(i)\n}\n",
     ["--size", "N=1000", "--int-range", "-100:100"], BACKENDS,
     ["output O: shape (1000), checksum 35.8124847", "output P: shape (1000), checksum 16.0410793",
      "output Q: shape (1000), checksum 1113.8812"]),
    ("def edge(float16(N) A, float16 c) -> (S, H, P, T) {\n  S(i) = A(i) * 0.0001\n"
     "  H(i) = float16(float(A(i)) * 0.00001)\n  P(i) = abs(A(i)) * 100000 + c\n  T = c * 3\n}\n",
     ["--size", "N=5000"], BACKENDS,
     ["output S: shape (5000), checksum -0.000665068626",
      "output H: shape (5000), checksum -6.53862953e-05",
      "output P: shape (5000), checksum inf", "output T: shape () checksum -0.780761719"]),
    ("def mmh(float16(M,K) A, float16(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }\n",
     ["--size", "M=37,K=53,N=29"], ("reference",), ["output C: shape (37, 29) checksum 3.86354065"]),
    # bfloat16: drawn as float32 and converted by libtc like float16; checksums taken
    # when the CLI learnt it (reference and cpu agree to the last digit)
    ("def bmix(bf16(N) A, float(N) B, int32(N) I) -> (O, P, Q) {\n"
     "  O(i) = A(i) * 2 + bf16(B(i))\n  P(i) = float(A(i)) + B(i)\n  Q(i) = bfloat16(I(i)) * A(i)\n}\n",
     ["--size", "N=1000", "--int-range", "-100:100"], BACKENDS,
     ["output O: shape (1000), checksum 35.8165283", "output P: shape (1000), checksum 16.0555351",
      "output Q: shape (1000), checksum 1111.52243"]),
]


def cli_float16():
    cli()
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "tc-float16-%d.tc" % os.getpid())
    try:
        for source, args, backends, wanted in FLOAT16_PROGRAMS:
            with open(path, "w") as f:
                f.write(source)
            for backend in backends:
                p = run_cli("run", path, "--backend", backend, *args)
                got = [line for line in p.stdout.splitlines() if line.startswith("output ")]
                if p.returncode != 0 or got != wanted:
                    raise AssertionError("tc run --backend %s of %s: rc %d, got %r, expected %r, "
                                         "stderr %r" % (backend, source.split("(")[0], p.returncode,
                                                        got, wanted, p.stderr))
    finally:
        if os.path.exists(path):
            os.unlink(path)

def cli_tune():
    with mm_dir("tc-cli-tune-") as (tmp, src):
        cache, cache2 = os.path.join(tmp, "cache"), os.path.join(tmp, "cache2")
        sizes = ["--size", "M=64,K=32,N=48"]

        # A bad start (scalar tiles) so that the search has something to find.
        p = run_cli("tune", src, *sizes, "--cache", cache, "--budget", "30",
                    "--option", "tune.population=4", "--option", "tune.generations=2",
                    "--option", "cpu.vectorize=1", "--option", "cpu.tile=1x1", timeout=120)
        expect_cli(p, "tc tune")
        if "tuned now:" not in p.stdout or "options:" not in p.stdout or "generation " not in p.stderr:
            raise AssertionError("tc tune: stdout %r, stderr %r" % (p.stdout, p.stderr))
        # The summary gives the result's times (after the confirmation), not the search's.
        result = re.search(r"tuned now: .*, best (\S+) ms, start (\S+) ms", p.stdout)
        summary = re.search(r"^best (\S+) ms, default (\S+) ms \(speed-up", p.stdout, re.M)
        if not result or not summary or result.groups() != summary.groups():
            raise AssertionError("tc tune: the summary's times are not the result's: %r" % p.stdout)
        # tc run does not print the kernel's description: only that it runs from the cache.
        p = run_cli("run", src, *sizes, "--option", "cache=" + cache)
        expect_cli(p, "tc run with the tuned cache")
        if "output C: shape (64, 48) checksum" not in p.stdout:
            raise AssertionError("tc run with the tuned cache: stdout %r" % p.stdout)
        export = os.path.join(tmp, "export.tccache")
        expect_cli(run_cli("cache", "export", export, "--cache", cache), "tc cache export")
        if not os.path.isfile(export):
            raise AssertionError("tc cache export wrote no '%s'" % export)
        expect_cli(run_cli("cache", "import", export, "--cache", cache2), "tc cache import")
        if not os.path.isdir(cache2):
            raise AssertionError("tc cache import created no '%s'" % cache2)

        # A budget shorter than one compilation: the starting point is measured and stored
        # all the same, and the summary says so (on any machine, however slow). Patience is
        # off: where an earlier run kept every candidate's code, dozens of candidates fit in
        # 0.1 s and three stale generations would end the search before the budget does.
        short = os.path.join(tmp, "short")
        p = expect_cli(run_cli("tune", src, "--size", "M=256,K=256,N=256", "--cache", short, "--budget", "0.1",
                               "--option", "tune.patience=0", timeout=300), "tc tune --budget 0.1",
                       out=["tuned now: ", "the budget of 0.1 s ran out", "stored in '%s'" % short],
                       err=["generation 1/1000, candidate 1/"])
        if "tuned now: 0 candidates" in p.stdout or "nothing stored" in p.stdout:
            raise AssertionError("tc tune --budget 0.1: %r" % p.stdout)
        expect_cli(run_cli("cache", "ls", "--cache", short), "tc cache ls after tc tune --budget 0.1",
                   out=["M=256 K=256 N=256", "2 records, "])


def cli_cache():
    with mm_dir("tc-cli-cache-") as (tmp, src):
        cache = os.path.join(tmp, "cache")

        missing = os.path.join(tmp, "missing")
        for sub in ("ls", "show", "verify", "clear"):
            expect_cli(run_cli("cache", sub, "--cache", missing), "tc cache %s of a missing cache" % sub, rc=1,
               err=["no cache at '%s'" % missing])
        if os.path.exists(missing):
            raise AssertionError("tc cache created '%s'" % missing)
        # A bad start (scalar tiles): the search stores a record.
        expect_cli(run_cli("tune", src, "--size", "M=64,K=32,N=48", "--cache", cache, "--budget", "30",
                   "--option", "tune.population=4", "--option", "tune.generations=2",
                   "--option", "cpu.vectorize=1", "--option", "cpu.tile=1x1", timeout=120), "tc tune")
        p = expect_cli(run_cli("cache", "ls", "--cache", cache), "tc cache ls",
               out=["DEF", "SPEED-UP", "HISTORY", "2 records, "])
        # The tuner also stored Halide's runtime object (warm start): a row of its own.
        if not [line for line in p.stdout.splitlines() if line.startswith("(shared code) ") and "KiB of code" in line]:
            raise AssertionError("tc cache ls: no row for the shared code in %r" % p.stdout)
        row = [line for line in p.stdout.splitlines() if line.startswith("mm ")]
        if len(row) != 1 or "M=64 K=32 N=48" not in row[0] or " cpu " not in row[0]:
            raise AssertionError("tc cache ls: no row for mm M=64 K=32 N=48 on cpu in %r" % p.stdout)
        p = expect_cli(run_cli("cache", "show", "mm", "--cache", cache), "tc cache show",
               out=["knobs       cpu.vectorize=", "key         | tc-cache-key", "history     ", "measured "])
        key_hash = re.search(r"^record ([0-9a-f]{64})$", p.stdout, re.M).group(1)
        expect_cli(run_cli("cache", "show", key_hash[:8], "--cache", cache), "tc cache show HASH", out=[key_hash])
        expect_cli(run_cli("cache", "show", "nothing", "--cache", cache), "tc cache show of no record", rc=1,
           err=["no record of a def 'nothing'"])
        expect_cli(run_cli("cache", "verify", "--cache", cache), "tc cache verify of a clean cache",
           out=["2 records and ", " 0 damaged"])
        # One changed byte in the stored record (every copy of it in the file, live or freed):
        # its checksum no longer matches.
        data = os.path.join(cache, "data.mdb")
        with open(data, "rb") as f:
            raw = f.read()
        if b"\ndef:2:mm\n" not in raw:
            raise AssertionError("no record of mm found in %s" % data)
        with open(data, "wb") as f:
            f.write(raw.replace(b"\ndef:2:mm\n", b"\ndef:2:mn\n"))
        expect_cli(run_cli("cache", "verify", "--cache", cache), "tc cache verify of a damaged cache", rc=1,
           out=["damaged: record %s: record checksum mismatch" % key_hash[:16], "1 record and "])
        expect_cli(run_cli("cache", "ls", "--cache", cache), "tc cache ls of a damaged cache",
           out=["1 record,"], err=["1 damaged entry in the cache (tc cache verify names it)"])
        expect_cli(run_cli("cache", "clear", "--cache", cache), "tc cache clear")
        expect_cli(run_cli("cache", "verify", "--cache", cache), "tc cache verify after clear",
           out=["0 records and 0 history entries sound, 0 damaged"])
        mode = os.stat(data).st_mode & 0o777
        if mode != 0o600:
            raise AssertionError("%s has mode %o after clear, expected 600" % (data, mode))


def cli_kept_code():
    mm = os.path.join(HERE, "..", "..", "examples", "tc", "mm.tc")
    with tempfile.TemporaryDirectory(prefix="tc-kept-code-") as tmp:
        env = dict(os.environ, TMPDIR=tmp)

        def run(what):
            p = subprocess.run([cli(), "run", mm, "--size", "M=8,K=4,N=8", "--option", "cache=off"], env=env,
                               capture_output=True, text=True, timeout=120)
            expect_cli(p, what, out=["output C: shape (8, 8) checksum"])
            return p.stdout.splitlines()[0]

        def sound(data):
            return hashlib.sha256(data[:-64]).hexdigest().encode() == data[-64:]

        output = run("the first process")
        for store, what in (("tc-cpu-runtime-kept-%d", "Halide runtime"), ("tc-cpu-objects-kept-%d", "kernel object")):
            kept = os.path.join(tmp, store % os.getuid())
            files = os.listdir(kept) if os.path.isdir(kept) else []
            if len(files) != 1 or os.stat(kept).st_mode & 0o777 != 0o700:
                raise AssertionError("kept %ss after one process: %r in %s" % (what, files, kept))
            path = os.path.join(kept, files[0])
            with open(path, "rb") as f:
                data = f.read()
            if not sound(data) or len(data) < 1000:
                raise AssertionError("the kept %s (%d bytes) does not end with its SHA-256" % (what, len(data)))
            first = os.stat(path).st_ino
            if run("the second process") != output or os.stat(path).st_ino != first:
                raise AssertionError("the second process wrote the kept %s again instead of taking it" % what)
            junk = b"mm\nno object at all"
            for how, damaged in (("a byte changed", data[:100] + bytes([data[100] ^ 1]) + data[101:]),
                                 ("no object, its checksum sound", junk + hashlib.sha256(junk).hexdigest().encode())):
                with open(path, "wb") as f:
                    f.write(damaged)
                if run("a process finding a kept %s with %s" % (what, how)) != output:
                    raise AssertionError("a kept %s with %s changed the result" % (what, how))
                with open(path, "rb") as f:
                    now = f.read()
                if now == damaged or not sound(now):
                    raise AssertionError("a kept %s with %s was not replaced by a sound one" % (what, how))


def cli_tune_together_killed():
    with mm_dir("tc-cli-together-") as (tmp, src):
        cache = os.path.join(tmp, "cache")

        def tune(size, budget, generations, patience=3):
            # A bad start (scalar tiles): the first candidate that beats it is stored at once.
            return subprocess.Popen([cli(), "tune", src, "--size", size, "--cache", cache, "--budget", str(budget),
                                     "--option", "tune.population=6", "--option", "tune.generations=%d" % generations,
                                     "--option", "tune.patience=%d" % patience,
                                     "--option", "tune.threads=1", "--option", "cpu.vectorize=1",
                                     "--option", "cpu.tile=1x1"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        os.mkdir(cache, 0o700)
        together = [tune("M=64,K=32,N=48", 30, 3) for _ in range(2)]
        for i, p in enumerate(together):
            out, err = p.communicate(timeout=300)
            if p.returncode != 0 or "tuned now:" not in out:
                raise AssertionError("tc tune #%d of two at once: rc %d, stdout %r, stderr %r"
                                     % (i, p.returncode, out, err))
        expect_cli(run_cli("cache", "verify", "--cache", cache), "tc cache verify after two tunes at once",
           out=[" 0 damaged"])
        rows = [line for line in run_cli("cache", "ls", "--cache", cache).stdout.splitlines()
                if line.startswith("mm ") and "M=64 K=32 N=48" in line]
        if len(rows) != 1:
            raise AssertionError("two tunes of one key left %d records of it: %r" % (len(rows), rows))
        expect_cli(run_cli("run", src, "--size", "M=64,K=32,N=48", "--option", "cache=" + cache),
           "tc run from the cache two tunes wrote", out=["output C: shape (64, 48) checksum"])
        # Killed with SIGKILL while tuning, right after its first record landed (the starting
        # point's, stored before the search; still measuring and writing its history). A size
        # whose scalar start every candidate beats (160x128x144: 1.1 ms against 0.1), and no
        # early stop, so that the search is still running when the record lands.
        victim = tune("M=160,K=128,N=144", 120, 100, patience=1000)
        deadline, stored = time.time() + 120, False
        while time.time() < deadline and victim.poll() is None and not stored:
            stored = "M=160 K=128 N=144" in run_cli("cache", "ls", "--cache", cache).stdout
            time.sleep(0.05)
        victim.kill()
        victim.communicate()
        if not stored:
            raise AssertionError("the process to kill stored no record in 120 s (rc %s)" % victim.returncode)
        expect_cli(run_cli("cache", "verify", "--cache", cache), "tc cache verify after kill -9", out=[" 0 damaged"])
        expect_cli(run_cli("run", src, "--size", "M=160,K=128,N=144", "--option", "cache=" + cache),
           "tc run from the cache of the killed process", out=["output C: shape (160, 144) checksum"])


def cli_ellipsis():
    """tc check prints a rank-polymorphic def's signature with '...'; tc run takes what '...'
    stands for as --size ...=AxB (none: ...=) and says so when it is missing."""
    tmp = tempfile.mkdtemp(prefix="tc-ellipsis-")
    try:
        src = os.path.join(tmp, "bmm.tc")
        with open(src, "w") as f:
            f.write("def bmm(float(..., M, K) A, float(..., K, N) B) -> (C) {\n"
                    "  C(..., m, n) +=! A(..., m, k) * B(..., k, n)\n}\n")
        expect_cli(run_cli("check", src), "tc check of a polymorphic def",
                   out=["input A: float32(..., M, K)", "output C: float32(..., M, N)", "... in 0:..."])
        expect_cli(run_cli("run", src, "--size", "M=3,K=4,N=5,...=2x3"), "tc run with two batch axes",
                   out=["output C: shape (2, 3, 3, 5) checksum"])
        expect_cli(run_cli("run", src, "--size", "M=3,K=4,N=5,...="), "tc run with no batch axis",
                   out=["output C: shape (3, 5) checksum"])
        expect_cli(run_cli("run", src, "--size", "M=3,K=4,N=5"), "tc run without ...=", rc=1,
                   err=["has '...' in its type; pass its extents with --size ...=2x3"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class Skip(Exception):
    pass


def cli_grad():
    """`tc grad` prints the generated gradient def; a def it cannot differentiate is exit 1 with
    the reason; a wrong --entry names the defs."""
    cli = os.environ.get("TC_CLI")
    if not cli:
        raise Skip("TC_CLI is not set")
    mm = os.path.join(HERE, "..", "..", "examples", "tc", "mm.tc")
    p = subprocess.run([cli, "grad", mm], capture_output=True, text=True, timeout=60)
    if p.returncode != 0 or "def mm_grad(" not in p.stdout or "d_A(i, k) +=! d_C(i, j) * B(k, j)" not in p.stdout:
        raise AssertionError("tc grad mm.tc: rc %d, stdout %r, stderr %r" % (p.returncode, p.stdout, p.stderr))
    p = subprocess.run([cli, "grad", mm, "--entry", "nope"], capture_output=True, text=True, timeout=60)
    if p.returncode != 1 or "no def named 'nope'" not in p.stderr:
        raise AssertionError("tc grad --entry nope: rc %d, stderr %r" % (p.returncode, p.stderr))
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "tc-prod-%d.tc" % os.getpid())
    with open(path, "w") as f:
        f.write("def p(float(N,K) A) -> (O) {\n  O(i) *=! A(i,k)\n}\n")
    try:
        p = subprocess.run([cli, "grad", path], capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(path)
    if p.returncode != 1 or ":2:8: error: cannot differentiate 'p': '*=' reductions" not in p.stderr:
        raise AssertionError("tc grad of a product: rc %d, stderr %r" % (p.returncode, p.stderr))


CHECKS = [empty_output_null_data, threads_under_ulimit, temporary_under_ulimit, huge_temporary_reference,
          quiet_stderr, cli_bad_sizes, cli_options, cli_explain, cli_profile, cli_float16, cli_tune, cli_cache,
          cli_kept_code, cli_tune_together_killed, cli_ellipsis, cli_grad]
# Under a sanitizer: memory limits break its shadow memory, and its operator new aborts on an
# impossible size instead of throwing std::bad_alloc.
NEEDS_PLAIN_MEMORY = {threads_under_ulimit, temporary_under_ulimit, huge_temporary_reference}


def main():
    wanted = sys.argv[1:]
    passed = failed = 0
    for check in CHECKS:
        if wanted and check.__name__ not in wanted:
            continue
        try:
            if check in NEEDS_PLAIN_MEMORY and sanitized():
                raise Skip("a sanitizer runtime is preloaded")
            check()
            print("PASS", check.__name__)
            passed += 1
        except Skip as s:
            print("SKIP", check.__name__, "(%s)" % s)
        except Exception as e:  # noqa: BLE001 - report every failure the same way
            print("FAIL", check.__name__, "-", e)
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

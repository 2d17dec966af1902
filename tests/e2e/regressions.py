#!/usr/bin/env python3
"""regressions.py - the defects of issue 9 that the corpus cannot express, each in a child
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
  cli_float16              tc run's checksums of float16 programs (converted by libtc itself,
                           the CLI includes tc.h only) are those of the former built-in encoder
  cli_tune                 tc tune into a temporary cache prints the winner ("tuned now:");
                           tc run reads that cache; tc cache export/import round-trip it; the
                           listing subcommands (tc cache ls) say they are not available, exit 2

    TC_LIBRARY=build/src/libtc.so TC_CLI=build/tools/tc/tc python3 regressions.py [NAME...]

Prints one line per check and "N passed, M failed". The memory checks are skipped when a
sanitizer runtime is preloaded (its shadow memory needs more address space than any limit, and
its operator new aborts on an impossible size).
"""
import os
import re
import resource
import subprocess
import shutil
import sys
import tempfile
import textwrap

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
    # Programs Halide used to warn about on stderr: a 10^12 temporary, a guaranteed failure.
    rc, out, err = child("""
        for src, n in [("def f(float(N) A) -> (O) { t(i,j) = A(i) * A(j)  O(i) +=! t(i,j) }", 1000000),
                       ("def g(float(N) A, int32(N) I) -> (O) { O(i) = A(I(i)) }", 4)]:
            prog = tclib.Program(src)
            ins = [np.ones(n, np.float32)] + ([np.full(n, 99, np.int32)] if "I" in src else [])
            outcome(lambda: prog.compile(src.split()[1].split("(")[0], ins).run(ins, [np.zeros(n, np.float32)]))
    """)
    # A preloaded sanitizer runtime warns about Halide's own stack switching: not libtc's output.
    ours = [line for line in err.splitlines() if not (sanitized() and re.match(r"==\d+==WARNING", line))]
    if rc != 0 or any(line.strip() for line in ours):
        raise AssertionError("rc %d; the host's stderr got: %r" % (rc, err[-1500:]))
    if out.split() != ["TC_ERROR_UNSUPPORTED", "TC_ERROR_RUNTIME"]:
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


def cli_options():
    p = run_cli("options")
    rows = {line.split()[0]: line.split() for line in p.stdout.splitlines() if line.strip()}
    backend = rows.get("backend", [])[1:3]  # key, values, default, help...
    if p.returncode != 0 or backend != ["cpu|reference", "cpu"] or "cpu.tile" not in rows:
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
    tmp = tempfile.mkdtemp(prefix="tc-cli-tune-")
    try:
        src = os.path.join(tmp, "mm.tc")
        with open(src, "w") as f:
            f.write("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }\n")
        cache, cache2 = os.path.join(tmp, "cache"), os.path.join(tmp, "cache2")
        sizes = ["--size", "M=64,K=32,N=48"]

        def ok(p, what, rc=0):
            if p.returncode != rc:
                raise AssertionError("%s: rc %d (expected %d), stdout %r, stderr %r"
                                     % (what, p.returncode, rc, p.stdout, p.stderr))
        # A bad start (scalar tiles) so that the search has something to find.
        p = run_cli("tune", src, *sizes, "--cache", cache, "--budget", "30",
                    "--option", "tune.population=4", "--option", "tune.generations=2",
                    "--option", "cpu.vectorize=1", "--option", "cpu.tile=1x1", timeout=120)
        ok(p, "tc tune")
        if "tuned now:" not in p.stdout or "options:" not in p.stdout or "generation " not in p.stderr:
            raise AssertionError("tc tune: stdout %r, stderr %r" % (p.stdout, p.stderr))
        # tc run does not print the kernel's description: only that it runs from the cache.
        p = run_cli("run", src, *sizes, "--option", "cache=" + cache)
        ok(p, "tc run with the tuned cache")
        if "output C: shape (64, 48) checksum" not in p.stdout:
            raise AssertionError("tc run with the tuned cache: stdout %r" % p.stdout)
        export = os.path.join(tmp, "export.tccache")
        ok(run_cli("cache", "export", export, "--cache", cache), "tc cache export")
        if not os.path.isfile(export):
            raise AssertionError("tc cache export wrote no '%s'" % export)
        ok(run_cli("cache", "import", export, "--cache", cache2), "tc cache import")
        if not os.path.isdir(cache2):
            raise AssertionError("tc cache import created no '%s'" % cache2)
        p = run_cli("cache", "ls", "--cache", cache)
        ok(p, "tc cache ls", rc=2)
        if "not available yet" not in p.stderr:
            raise AssertionError("tc cache ls: stderr %r" % p.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class Skip(Exception):
    pass


CHECKS = [empty_output_null_data, threads_under_ulimit, temporary_under_ulimit, huge_temporary_reference,
          quiet_stderr, cli_bad_sizes, cli_options, cli_float16, cli_tune]
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

"""peak.py - the machine's FP32 FMA peak (bench/peak.c), so that every contraction's
GFLOP/s can also be given as a share of what this CPU can do with the same thread count.

    /usr/bin/python3 bench/peak.py [--threads N] [--seconds S]

prints the peak with 1 thread and with N (default: all cores). bench.py measures it once per
session, before any framework's process starts (procs.Session), and shows it in the header and
as the "% peak" column. Compiles peak.c with the system C compiler (cc, -O2 -march=native) into
a temporary directory each time (about 0.2 s).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LINE = re.compile(r"^peak threads=(\d+) gflops=([0-9.]+) best=([0-9.]+) runs=(\d+) lanes=(\d+) chains=(\d+)$")


def build_command(output, assembly=False):
    """The command compiling peak.c into `output` with $CC (default cc): a program, or where
    `assembly` its assembly text (what tests/bench checks)."""
    flags = ["-O2", "-march=native", "-ffp-contract=fast", "-pthread"] + (["-S"] if assembly else [])
    return [os.environ.get("CC", "cc")] + flags + [os.path.join(HERE, "peak.c"), "-o", output]


def measure(threads, seconds=1.0):
    """{"threads", "gflops" (the median of 5 runs), "best", "lanes", "chains"}; raises
    RuntimeError naming what failed (no compiler, a compile error, a bad output)."""
    with tempfile.TemporaryDirectory(prefix="tc-peak-") as tmp:
        exe = os.path.join(tmp, "peak")
        cmd = build_command(exe)
        try:
            built = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as e:
            raise RuntimeError("cannot run the C compiler %r: %s" % (cmd[0], e))
        if built.returncode != 0:
            raise RuntimeError("%s failed: %s" % (" ".join(cmd), built.stderr.strip()[:500]))
        ran = subprocess.run([exe, str(threads), str(seconds)], capture_output=True, text=True)
        m = LINE.match(ran.stdout.strip())
        if ran.returncode != 0 or not m:
            raise RuntimeError("peak %d: exit %d, %r" % (threads, ran.returncode,
                                                        (ran.stdout + ran.stderr).strip()[:300]))
        return {"threads": int(m.group(1)), "gflops": float(m.group(2)), "best": float(m.group(3)),
                "lanes": int(m.group(5)), "chains": int(m.group(6))}


def describe(p):
    return "%.1f GFLOP/s with %d thread%s (best of 5: %.1f; %d-lane FMA, %d chains a thread)" % (
        p["gflops"], p["threads"], "" if p["threads"] == 1 else "s", p["best"], p["lanes"], p["chains"])


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--seconds", type=float, default=1.0, help="per measurement (default 1)")
    args = ap.parse_args(argv)
    try:
        for threads in sorted({1, args.threads}):
            print("FMA peak: " + describe(measure(threads, args.seconds)))
    except RuntimeError as e:
        print("peak.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

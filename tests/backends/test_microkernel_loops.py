"""The contraction route's micro-kernels as libtc's machine code holds them: the loop that runs
the sum does four steps a turn (a step is MR x NV multiply-adds), so that its counter, compare
and branch do not take an issue slot on the multiply-add ports every step (one step a turn held
a float64 GEMM 7% below OpenBLAS's). Read with objdump from the library's symbols; skipped where
objdump or the symbols are missing (a stripped library). Nothing is timed."""
import os
import re
import shutil
import subprocess
import unittest

# Kernel symbol (in tc::backends::cpu's anonymous namespace) -> multiply-adds a step.
KERNELS = {
    "_ZN2tc8backends3cpu12_GLOBAL__N_19f32_12x32ElPKfS4_PfPKlb": 12 * 2,  # AVX-512: 12 rows x 2 vectors
    "_ZN2tc8backends3cpu12_GLOBAL__N_19f64_12x16ElPKdS4_PdPKlb": 12 * 2,
    "_ZN2tc8backends3cpu12_GLOBAL__N_18f32_6x16ElPKfS4_PfPKlb": 6 * 2,  # AVX2: 6 rows x 2 vectors
    "_ZN2tc8backends3cpu12_GLOBAL__N_17f64_6x8ElPKdS4_PdPKlb": 6 * 2,
}
STEPS_A_TURN = 4
INSTRUCTION = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")


def instructions(library, symbol):
    """(address, mnemonic, operands) of the symbol's instructions; [] when it has none."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "--disassemble=" + symbol, library],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        m = INSTRUCTION.match(line)
        if m:
            found.append((int(m.group(1), 16), m.group(2), m.group(3)))
    return found


def most_multiply_adds_in_a_loop(code):
    """The most vector multiply-adds between a backward branch and its target."""
    best = 0
    for address, mnemonic, operands in code:
        if not mnemonic.startswith("j"):
            continue
        target = re.match(r"([0-9a-f]+)\b", operands)
        if not target or int(target.group(1), 16) >= address:
            continue
        start = int(target.group(1), 16)
        best = max(best, sum(1 for a, m, _ in code if start <= a <= address and m.startswith("vfmadd")))
    return best


class MicroKernelLoops(unittest.TestCase):
    def test_the_sum_runs_four_steps_a_turn(self):
        library = os.environ.get("TC_LIBRARY", "")
        if not os.path.isfile(library):
            self.skipTest("no libtc at %r (set TC_LIBRARY)" % library)
        if not shutil.which("objdump"):
            self.skipTest("no objdump")
        checked = 0
        for symbol, per_step in KERNELS.items():
            code = instructions(library, symbol)
            if not code:
                continue
            checked += 1
            with self.subTest(kernel=symbol):
                self.assertGreaterEqual(most_multiply_adds_in_a_loop(code), STEPS_A_TURN * per_step,
                                        "the sum's loop does fewer than %d steps a turn" % STEPS_A_TURN)
        if not checked:
            self.skipTest("no micro-kernel symbols in %s (stripped?)" % library)

    def test_one_step_a_turn_is_caught(self):
        # The reading itself: a loop of one step is found and counted as one step.
        code = [(0x10, "vmovaps", "(%rdi),%zmm1")] + [(0x14 + i, "vfmadd231ps", "%zmm1,%zmm2,%zmm3") for i in range(24)]
        code.append((0x40, "jb", "10 <f+0x10>"))
        self.assertEqual(most_multiply_adds_in_a_loop(code), 24)


if __name__ == "__main__":
    unittest.main()

"""The contraction route's micro-kernels as libtc's machine code holds them: the loop that runs
the sum does four steps a turn (a step is MR x NV multiply-adds), so that its counter, compare
and branch do not take an issue slot on the multiply-add ports every step (one step a turn held
a float64 GEMM 7% below OpenBLAS's); the transposing packs fetch the next group's runs inside
their loop (without, a panel of runs far apart waited on every line: intensli1 float64 9.8 ms
against 6.7); the packing of a panel fetches each row's next run and one three runs ahead
(GCC dropped calls to a function whose only effect was a prefetch: the loop then fetched
nothing, ccsd2 48 -> 57 ms). Read with objdump from the library's symbols; skipped where objdump or the
symbols are missing (a stripped library). Nothing is timed."""
import os
import re
import shutil
import subprocess
import unittest

# Kernel (a function of tc::backends::cpu's anonymous namespace, found by its name whatever its
# parameters) -> multiply-adds a step.
KERNELS = {
    "f32_12x32": 12 * 2,  # AVX-512: 12 rows x 2 vectors
    "f64_12x16": 12 * 2,
    "f32_6x16": 6 * 2,  # AVX2: 6 rows x 2 vectors
    "f64_6x8": 6 * 2,
}
NAMESPACE = "_ZN2tc8backends3cpu12_GLOBAL__N_1"
STEPS_A_TURN = 4
PACKS = "pack_transposed"  # in every symbol of the transposing packs (wrappers and templates)
PANEL = NAMESPACE + "10pack_panelI"  # pack_panel<float>, pack_panel<double>
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


def symbols_containing(library, text):
    out = subprocess.run(["nm", library], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    return sorted({line.split()[-1] for line in out.splitlines() if text in line and len(line.split()) == 3})


def loops(code):
    """(first, last) address of each loop: a backward branch to an address of the code's own (a
    tail call jumps out of it) and its target."""
    first = code[0][0] if code else 0
    for address, mnemonic, operands in code:
        target = re.match(r"([0-9a-f]+)\b", operands) if mnemonic.startswith("j") else None
        if target and first <= int(target.group(1), 16) < address:
            yield int(target.group(1), 16), address


def most_in_a_loop(code, prefix):
    """The most instructions whose mnemonic starts with `prefix` in one loop."""
    return max((sum(1 for a, m, _ in code if start <= a <= end and m.startswith(prefix)) for start, end in loops(code)),
               default=0)


def most_multiply_adds_in_a_loop(code):
    return most_in_a_loop(code, "vfmadd")


class MicroKernelLoops(unittest.TestCase):
    def library(self):
        library = os.environ.get("TC_LIBRARY", "")
        if not os.path.isfile(library):
            self.skipTest("no libtc at %r (set TC_LIBRARY)" % library)
        if not shutil.which("objdump"):
            self.skipTest("no objdump")
        return library

    def test_the_transposing_packs_fetch_ahead_in_their_loop(self):
        library = self.library()
        checked = 0
        for symbol in symbols_containing(library, PACKS):
            code = instructions(library, symbol)
            if not any(loops(code)):  # a wrapper that jumps to the template's code
                continue
            checked += 1
            with self.subTest(pack=symbol):
                self.assertGreaterEqual(most_in_a_loop(code, "prefetch"), 1, "no fetch ahead in the packing loop")
        if not checked:
            self.skipTest("no packing symbols in %s (stripped?)" % library)

    def test_a_panel_fetches_the_next_run_and_one_further(self):
        library = self.library()
        panels = symbols_containing(library, PANEL)
        if not panels:
            self.assertFalse(symbols_containing(library, PACKS), "no pack_panel found by the name in PANEL")
            self.skipTest("no packing symbols in %s (stripped?)" % library)
        for symbol in panels:
            with self.subTest(panel=symbol):
                self.assertGreaterEqual(most_in_a_loop(instructions(library, symbol), "prefetch"), 2,
                                        "pack_panel's loop over runs fetches fewer than two runs ahead")

    def test_the_sum_runs_four_steps_a_turn(self):
        library = self.library()
        checked = 0
        for name, per_step in KERNELS.items():
            # A mangled name: the namespace, the name's length and the name, then "E" and the
            # parameters' types.
            symbols = symbols_containing(library, "%s%d%sE" % (NAMESPACE, len(name), name))
            code = instructions(library, symbols[0]) if symbols else []
            if not code:
                continue
            checked += 1
            with self.subTest(kernel=name):
                self.assertGreaterEqual(most_multiply_adds_in_a_loop(code), STEPS_A_TURN * per_step,
                                        "the sum's loop does fewer than %d steps a turn" % STEPS_A_TURN)
        if not checked:
            # A library with the packs' symbols has the kernels' too: missing, they were renamed.
            self.assertFalse(symbols_containing(library, PACKS), "no micro-kernel found by the names in KERNELS")
            self.skipTest("no micro-kernel symbols in %s (stripped?)" % library)

    def test_one_step_a_turn_is_caught(self):
        # The reading itself: a loop of one step is found and counted as one step.
        code = [(0x10, "vmovaps", "(%rdi),%zmm1")] + [(0x14 + i, "vfmadd231ps", "%zmm1,%zmm2,%zmm3") for i in range(24)]
        code.append((0x40, "jb", "10 <f+0x10>"))
        self.assertEqual(most_multiply_adds_in_a_loop(code), 24)


if __name__ == "__main__":
    unittest.main()

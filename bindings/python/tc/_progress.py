"""_progress.py - a search's progress (tc_tune_progress) as TuneProgress, and the line
Program.tune(progress=True) prints on stderr."""
import collections
import math

TuneProgress = collections.namedtuple(
    "TuneProgress", "generation generations candidates_done candidates_planned best_ms "
                    "default_ms elapsed_s budget_s")
TuneProgress.__doc__ = ("where a Program.tune search stands (tc_tune_progress), given to its "
                        "progress callable after every measured candidate: the 1-based current "
                        "generation and the planned number, candidates measured and planned, "
                        "median time in ms of the best so far and of the default (the options' "
                        "own knob values), seconds elapsed and the budget in seconds")


def _ms(value):
    return "%.3g ms" % value if math.isfinite(value) and value > 0 else "-"


class _ProgressLine:
    """Program.tune(progress=True): the search's progress on a stream (stderr). On a terminal
    one line rewritten with "\\r" after every candidate; otherwise one line per generation (the
    last state of each) and the final state."""

    def __init__(self, entry, stream):
        self.entry, self.stream = entry, stream
        try:
            self.tty = stream.isatty()
        except (AttributeError, ValueError):
            self.tty = False
        self.last, self.printed, self.width = None, None, 0

    def _text(self, p):
        speedup = ""
        if math.isfinite(p.best_ms) and math.isfinite(p.default_ms) and p.best_ms > 0 \
                and p.default_ms > 0:
            speedup = " (%.2fx)" % (p.default_ms / p.best_ms)
        return ("tc.tune %s: generation %d/%d, candidates %d/%d, best %s%s, default %s, "
                "%.1f/%.0f s" % (self.entry, p.generation, p.generations, p.candidates_done,
                                 p.candidates_planned, _ms(p.best_ms), speedup,
                                 _ms(p.default_ms), p.elapsed_s, p.budget_s))

    def _write(self, text):
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass  # a closed or broken stderr must not stop the search

    def update(self, p):
        if self.tty:
            text = self._text(p)
            self._write("\r" + text + " " * max(0, self.width - len(text)))
            self.width = len(text)
        elif self.last is not None and p.generation != self.last.generation:
            self._write(self._text(self.last) + "\n")
            self.printed = self.last
        self.last = p
        return False

    def finish(self):
        if self.tty:
            if self.width:
                self._write("\n")
        elif self.last is not None and self.last is not self.printed:
            self._write(self._text(self.last) + "\n")

#!/usr/bin/env python3
"""run_corpus.py - run the e2e corpus of TC programs against libtc.

    TC_LIBRARY=build/src/libtc.so /usr/bin/python3 tests/e2e/run_corpus.py [--backend B]
        [--option KEY=VALUE]... [--tf32] [--list] [-v] [CASE...]

CASE is a full name ("accept.matmul", "reject.write_input"), a bare case name ("matmul"), or a
glob ("accept.layout_*"). Prints one line per case and ends with "N passed, M failed"; the exit
status is non-zero when any case fails.
"""
import argparse
import fnmatch
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import corpus  # noqa: E402
import cases_accept  # noqa: E402
import cases_reject  # noqa: E402
import cases_trust  # noqa: E402


def all_cases():
    cases = [(c.kind + "." + c.name, c)
             for c in cases_accept.CASES + cases_reject.CASES + cases_trust.ACCEPT + cases_trust.REJECT]
    names = [n for n, _ in cases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise SystemExit("duplicate case names: %s" % sorted(dup))
    return cases


def select(cases, patterns):
    if not patterns:
        return cases
    chosen = []
    for pat in patterns:
        hits = [(n, c) for n, c in cases
                if fnmatch.fnmatchcase(n, pat) or fnmatch.fnmatchcase(n.split(".", 1)[1], pat)]
        if not hits:
            raise SystemExit("no case matches %r (see --list)" % pat)
        for h in hits:
            if h not in chosen:
                chosen.append(h)
    return chosen


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--backend", default=os.environ.get("TC_BACKEND", "reference"))
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="extra tc_options for every compile (e.g. checked=0)")
    ap.add_argument("--list", action="store_true", help="print the case names and exit")
    ap.add_argument("-v", "--verbose", action="store_true", help="print notes and messages")
    ap.add_argument("--dry-run", action="store_true",
                    help="only build each accept case's inputs and NumPy expectations")
    ap.add_argument("--tf32", action="store_true",
                    help="hold float32 results to TF32's epsilon (for --option cuda.tf32=1)")
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    corpus.TF32 = args.tf32

    cases = select(all_cases(), args.cases)
    if args.list:
        for n, _ in cases:
            print(n)
        return 0

    if args.dry_run:
        for name, c in cases:
            if c.kind == "accept":
                rng = corpus.rng_for(c.name)
                ins = c.inputs(rng)
                if c.init is not None:
                    exp = c.expect(*ins, init=c.init(rng))
                else:
                    exp = c.expect(*ins)
                print("%s: in %s -> out %s" % (name, [(str(a.dtype), a.shape) for a in ins],
                                              [(str(e.dtype), e.shape) for e in exp]))
        return 0

    extra_options = dict(o.split("=", 1) for o in args.option)
    passed = failed = skipped = 0
    for name, c in cases:
        if c.backends is not None and args.backend not in c.backends:
            skipped += 1
            print("SKIP %s (only for backend %s)" % (name, ", ".join(c.backends)))
            continue
        ok, secs, detail = corpus.run_case(c, args.backend, extra_options)
        if ok:
            passed += 1
            extra = ""
            if detail and (args.verbose or c.kind == "accept"):
                extra = " - " + (detail if args.verbose else detail.splitlines()[0])
            print("PASS %s (%.3fs)%s" % (name, secs, extra))
        else:
            failed += 1
            print("FAIL %s (%.3fs): %s" % (name, secs, detail))
            if c.note:
                print("     note: %s" % c.note)
        if args.verbose and ok and c.note:
            print("     note: %s" % c.note)
        sys.stdout.flush()
    if skipped:
        print("%d skipped (backend %s)" % (skipped, args.backend))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Checks that every #include in src/ respects the stage layering declared in src/CMakeLists.txt.

Why: each pipeline stage is its own static library (tc_stage(...) in src/CMakeLists.txt) that
links only the stages below it, but all stages share one include root (src/), and libtc.so
links every stage. So a source can #include a header of a stage its library does not link
(lang including ir/bind.h), or Halide's header outside the two stages that link Halide, and
neither the compiler nor the linker notices. This script is that missing check (ctest
layering.includes).

What it does:
  - reads the stage table from the tc_stage(...) calls in src/CMakeLists.txt (SOURCES, LINKS,
    PRIVATE_LINKS; the table is not repeated here);
  - gives every .h/.cpp under src/ a stage: the stage that lists a source with the same path
    and stem (ir/bind.h goes with ir/bind.cpp, backends/registry.h with backends/registry.cpp),
    else the stage whose sources sit in the file's folder (support/half.h -> tc_support); where
    several stages have sources in one folder (src/backends/), the one the others link;
  - computes what each stage may see: itself, the stages it links (PUBLIC or PRIVATE) and,
    transitively, their PUBLIC links; likewise the external targets (Halide::Halide);
  - checks each `#include "..."` or `#include <...>` that resolves to a header under src/: the
    header's stage must be the file's own stage or one it may see; `#include <Halide.h>` only in
    a stage that links Halide::Halide; and a header that includes Halide.h (directly or through
    other headers) of a stage that has Halide (privately) must not be included from a stage
    without it;
  - checks that programs/tc (the command-line tool, a user of libtc.so only) includes only the
    public API (include/, i.e. tc/tc.h), its own headers and system headers;
  - reports a file under src/ that no stage owns, and a .cpp that no stage lists (not built).
Output: one line per violation, "src/x/y.cpp:12: includes ir/bind.h (stage tc_ir), but tc_lang
links only: tc_support", exit status 1; with none, a one-line summary and exit status 0; a
table it cannot read (src/CMakeLists.txt changed shape), exit status 2.

What it does not do: it reads text, not the preprocessor: an include under #if counts whatever
the condition (comments are skipped); it resolves includes against the file's folder, include/
and src/ only (anything else is a system or third-party header and is not checked, except the
external headers in EXTERNAL_HEADERS); it does not check symbol-level dependencies (a
declaration copied instead of included), the tests, or that tc_stage() itself gives every stage
the same include directories.

Usage: check_layering.py [--root REPO]   (default: the checkout this script is in)
"""

import argparse
import os
import re
import sys
from collections import deque

# The multi-value arguments of tc_stage() (its cmake_parse_arguments).
STAGE_KEYWORDS = ("SOURCES", "LINKS", "PRIVATE_LINKS")
# External headers whose include path comes only with a CMake target: #include name -> target.
EXTERNAL_HEADERS = {"Halide.h": "Halide::Halide"}
# Likewise for a family of headers by the start of their name: prefix -> target.
EXTERNAL_PREFIXES = {"llvm/": "LLVM::ORC"}
SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc")
TOOL_DIR = "programs/tc"

INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)
# C/C++ comments (blanked, newlines kept) and the literals that may contain comment markers.
C_TOKEN_RE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
CMAKE_TOKEN_RE = re.compile(r'"(?:\\.|[^"\\])*"|#[^\n]*')
STAGE_CALL_RE = re.compile(r'\btc_stage\s*\(([^()]*)\)')


class TableError(Exception):
    """src/CMakeLists.txt does not have the shape this script reads."""


class Stage:
    def __init__(self, name, line):
        self.name, self.line = name, line
        self.args = {k: [] for k in STAGE_KEYWORDS}
        self.visible = []           # stages whose headers it may include, in table order
        self.externals = set()      # external targets whose headers it may include


def blank_comments(text, token_re, is_comment):
    """Replaces each comment with its newlines only, so line numbers stay right."""
    return token_re.sub(lambda m: "\n" * m.group(0).count("\n") if is_comment(m.group(0)) else m.group(0), text)


def read_stages(root):
    path = os.path.join(root, "src", "CMakeLists.txt")
    with open(path, encoding="utf-8") as f:
        text = blank_comments(f.read(), CMAKE_TOKEN_RE, lambda t: t.startswith("#"))
    stages = {}
    for m in STAGE_CALL_RE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        where = "src/CMakeLists.txt:%d" % line
        words = m.group(1).split()
        if not words:
            raise TableError("%s: tc_stage() without a name" % where)
        stage, keyword = Stage(words[0], line), None
        if stage.name in stages:
            raise TableError("%s: stage %s declared twice" % (where, stage.name))
        for w in words[1:]:
            if w in STAGE_KEYWORDS:
                keyword = w
            elif re.fullmatch(r"[A-Z][A-Z0-9_]*", w):
                raise TableError("%s: unknown tc_stage keyword %s (this script reads %s)"
                                 % (where, w, ", ".join(STAGE_KEYWORDS)))
            elif keyword is None or "$" in w or '"' in w:
                raise TableError("%s: cannot read %r in tc_stage(%s ...): plain names after %s only"
                                 % (where, w, stage.name, "/".join(STAGE_KEYWORDS)))
            else:
                stage.args[keyword].append(w)
        stages[stage.name] = stage
    if not stages:
        raise TableError("src/CMakeLists.txt: no tc_stage(...) calls found")
    for s in stages.values():
        for w in s.args["LINKS"] + s.args["PRIVATE_LINKS"]:
            if w.startswith("tc_") and w not in stages:
                raise TableError("src/CMakeLists.txt:%d: %s links %s, which is no stage" % (s.line, s.name, w))
    return stages


def compute_visibility(stages):
    """A stage sees the stages it links (PUBLIC or PRIVATE) and, from each, its PUBLIC links."""
    order = list(stages)
    for s in stages.values():
        direct = s.args["LINKS"] + s.args["PRIVATE_LINKS"]
        seen, todo = set(), deque(w for w in direct if w in stages)
        s.externals = {w for w in direct if w not in stages}
        while todo:
            t = todo.popleft()
            if t in seen:
                continue
            if t == s.name:
                raise TableError("src/CMakeLists.txt:%d: %s links itself through %s"
                                 % (s.line, s.name, ", ".join(sorted(seen))))
            seen.add(t)
            for w in stages[t].args["LINKS"]:
                if w in stages:
                    todo.append(w)
                else:
                    s.externals.add(w)
        s.visible = [n for n in order if n in seen]


class Ownership:
    """Which stage a file under src/ belongs to, from the stages' source lists."""

    def __init__(self, root, stages):
        self.by_stem, by_dir = {}, {}
        for s in stages.values():
            for src in s.args["SOURCES"]:
                if not os.path.isfile(os.path.join(root, "src", src)):
                    raise TableError("src/CMakeLists.txt:%d: %s lists %s, which is not in src/" % (s.line, s.name, src))
                stem = os.path.splitext(os.path.normpath(src))[0]
                if self.by_stem.get(stem, s.name) != s.name:
                    raise TableError("src/CMakeLists.txt:%d: %s and %s both list %s.*"
                                     % (s.line, self.by_stem[stem], s.name, stem))
                self.by_stem[stem] = s.name
                names = by_dir.setdefault(os.path.dirname(stem), [])
                if s.name not in names:
                    names.append(s.name)
        # A folder shared by several stages belongs to the one all the others see (its base).
        self.by_dir = {}
        for d, names in by_dir.items():
            base = [n for n in names if all(n == o or n in stages[o].visible for o in names)]
            if len(base) != 1:
                raise TableError("src/%s: sources of %s, none of which the others link: cannot tell whose its"
                                 " other headers are" % (d, ", ".join(names)))
            self.by_dir[d] = base[0]

    def stage_of(self, rel):
        """rel: a path relative to src/."""
        stem = os.path.splitext(rel)[0]
        return self.by_stem.get(stem) or self.by_dir.get(os.path.dirname(stem))


def scan_includes(path):
    """[(line, '<' or '"', name)] of a C/C++ file, comments skipped."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = blank_comments(f.read(), C_TOKEN_RE, lambda t: t.startswith("/"))
    return [(text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2).strip()) for m in INCLUDE_RE.finditer(text)]


def list_files(root, folder, recursive=True):
    found = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
        dirnames.sort()
        found += [os.path.relpath(os.path.join(dirpath, n), root) for n in sorted(filenames) if n.endswith(SOURCE_SUFFIXES)]
        if not recursive:
            break
    return [f.replace(os.sep, "/") for f in found]


def resolve(root, including, bracket, name):
    """Where an include lands, as the tc_stage() include directories (include/, src/) see it:
    ('public', path under include/) | ('project', path under src/) | ('local', repo path: a
    header beside a programs/tc file) | ('external', target) | None (a system or third-party header)."""
    dirs = ([os.path.dirname(including)] if bracket == '"' else []) + ["include", "src"]
    for d in dirs:
        rel = os.path.normpath(os.path.join(d, name)).replace(os.sep, "/")
        if rel.startswith("../") or not os.path.isfile(os.path.join(root, rel)):
            continue
        if rel.startswith("include/"):
            return ("public", rel[len("include/"):])
        if rel.startswith("src/"):
            return ("project", rel[len("src/"):])
        return ("local", rel)
    if name in EXTERNAL_HEADERS:
        return ("external", EXTERNAL_HEADERS[name])
    for prefix, target in EXTERNAL_PREFIXES.items():
        if name.startswith(prefix):
            return ("external", target)
    return None


def check(root):
    stages = read_stages(root)
    compute_visibility(stages)
    owners = Ownership(root, stages)
    order = list(stages)

    src_files = list_files(root, "src")
    includes = {f: [(line, resolve(root, f, b, name), b, name) for line, b, name in scan_includes(os.path.join(root, f))]
                for f in src_files}

    def external_chain(header, target):
        """The include chain from src/<header> to the external target's header, or None."""
        start = "src/" + header
        parent, todo = {start: None}, deque([start])
        while todo:
            f = todo.popleft()
            for line, res, _, name in includes.get(f, []):
                if res == ("external", target):
                    chain, at = ["%s:%d" % (f[len("src/"):], line)], f
                    while parent[at] is not None:
                        at, ln = parent[at]
                        chain.append("%s:%d" % (at[len("src/"):], ln))
                    return list(reversed(chain))
                if res and res[0] == "project" and "src/" + res[1] not in parent:
                    parent["src/" + res[1]] = (f, line)
                    todo.append("src/" + res[1])
        return None

    def links_only(s):
        return "%s links only: %s" % (s.name, ", ".join(s.visible)) if s.visible else "%s links no stage" % s.name

    def linked_by(target):
        has = ["%s (%s)" % (n, "PRIVATE" if target in stages[n].args["PRIVATE_LINKS"] else "PUBLIC")
               for n in order if target in stages[n].args["LINKS"] + stages[n].args["PRIVATE_LINKS"]]
        return ", ".join(has) or "no stage"

    violations, count = [], 0
    for f in src_files:
        rel = f[len("src/"):]
        name = owners.stage_of(rel)
        if name is None:
            violations.append("%s: belongs to no stage: no tc_stage(...) in src/CMakeLists.txt has sources in src/%s"
                              % (f, os.path.dirname(rel)))
            continue
        if rel.endswith((".cpp", ".cc")) and os.path.splitext(rel)[0] not in owners.by_stem:
            violations.append("%s: in the folder of %s but in no stage's SOURCES (src/CMakeLists.txt): it is not built"
                              % (f, name))
        s = stages[name]
        for line, res, bracket, inc in includes[f]:
            count += 1
            if res is None or res[0] in ("public", "local"):
                continue
            if res[0] == "external":
                if res[1] not in s.externals:
                    violations.append("%s:%d: includes <%s>, but %s does not link %s (linked by: %s)"
                                      % (f, line, inc, name, res[1], linked_by(res[1])))
                continue
            hstage = owners.stage_of(res[1])
            if hstage is None:
                continue  # reported as a file of no stage
            if hstage != name and hstage not in s.visible:
                violations.append("%s:%d: includes %s (stage %s), but %s" % (f, line, res[1], hstage, links_only(s)))
                continue
            # A header that brings an external header its own stage has (privately) into a stage
            # without it; headers of stages without it are reported where they include it.
            for target in sorted(stages[hstage].externals - s.externals):
                chain = external_chain(res[1], target)
                if chain:
                    inc_name = [k for k, v in list(EXTERNAL_HEADERS.items()) + [(p + "...", t) for p, t in
                                                                          EXTERNAL_PREFIXES.items()] if v == target][0]
                    violations.append("%s:%d: includes %s (stage %s), which includes <%s> (%s), but %s does not link %s"
                                      " (linked by: %s)" % (f, line, res[1], hstage, inc_name, " -> ".join(chain),
                                                            name, target, linked_by(target)))

    public_api = ", ".join(p[len("include/"):] for p in list_files(root, "include")) or "include/"
    tool_files = list_files(root, TOOL_DIR, recursive=False)
    for f in tool_files:
        for line, b, inc in scan_includes(os.path.join(root, f)):
            count += 1
            res = resolve(root, f, b, inc)
            if res is None or res[0] in ("public", "local"):
                continue
            what = ("%s (stage %s)" % (res[1], owners.stage_of(res[1]) or "none") if res[0] == "project"
                    else "<%s> (%s)" % (inc, res[1]))
            violations.append("%s:%d: includes %s, but %s uses only the public API (%s)" % (f, line, what, TOOL_DIR, public_api))

    return violations, "%d stages (src/CMakeLists.txt), %d files, %d includes" % (
        len(stages), len(src_files) + len(tool_files), count)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(here),
                    help="the repository root: src/CMakeLists.txt, src/, include/, programs/tc (default: %(default)s)")
    args = ap.parse_args()
    try:
        violations, summary = check(args.root)
    except (TableError, OSError) as e:
        print("check_layering: %s" % e, file=sys.stderr)
        return 2
    for v in violations:
        print(v)
    if violations:
        print("check_layering: %d layering violation(s) in %s" % (len(violations), summary), file=sys.stderr)
        return 1
    print("check_layering: %s: no layering violations" % summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())

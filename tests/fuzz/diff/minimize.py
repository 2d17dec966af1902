"""minimize.py - shrinks a failing case while the same kind of failure persists.

What it does: greedy passes over a case (tcast AST + inputs + options), each candidate checked
by the caller's `still_fails(case) -> bool`:
  drop statements (and the outputs they alone wrote), drop outputs, drop unused defs and
  inputs, drop where-clause items (lets are inlined), replace subexpressions by one of their
  operands or by a literal, shrink sizes (slicing the inputs), simplify input values, make
  layouts contiguous, drop schedule options. Passes repeat until none makes progress or the
  time / candidate budget is spent.
What it does not do: decide what "the same failure" is (the driver passes still_fails), or
keep the case valid (an invalid candidate simply does not reproduce the failure).
"""
import copy
import time

import numpy as np

import tcast as T


def copy_case(case):
    c = dict(case)
    c["prog"] = case["prog"].copy()
    c["inputs"] = [dict(i, data=np.array(i["data"]), layout=copy.deepcopy(i["layout"])) for i in case["inputs"]]
    c["outputs"] = copy.deepcopy(case["outputs"])
    c["options"] = dict(case["options"])
    return c


class Minimizer:
    def __init__(self, still_fails, budget_s=120.0, max_checks=20000, log=None):
        self.still_fails = still_fails
        self.deadline = time.time() + budget_s
        self.max_checks = max_checks
        self.checks = 0
        self.log = log or (lambda msg: None)

    def out_of_budget(self):
        return time.time() > self.deadline or self.checks >= self.max_checks

    def try_(self, cand):
        if cand is None or self.out_of_budget():
            return False
        self.checks += 1
        return self.still_fails(cand)

    def run(self, case):
        passes = [self.drop_statements, self.drop_outputs, self.drop_where, self.simplify_exprs,
                  self.shrink_sizes, self.drop_inputs, self.simplify_layouts, self.simplify_values]
        progress = True
        while progress and not self.out_of_budget():
            progress = False
            for p in passes:
                new = p(case)
                if new is not None:
                    case = new
                    progress = True
                    self.log("minimize: %s -> %d statements, %d checks" % (
                        p.__name__, sum(len(d.body) for d in case["prog"].defs), self.checks))
        return case

    # -- statements, outputs, defs -----------------------------------------------------------------
    def drop_statements(self, case):
        changed = None
        di = 0
        while di < len(case["prog"].defs):
            si = len(case["prog"].defs[di].body) - 1
            while si >= 0 and di < len(case["prog"].defs):
                if si < len(case["prog"].defs[di].body):
                    cand = without_statement(case, di, si)
                    if self.try_(cand):
                        case = changed = cand
                si -= 1
            di += 1
        return changed

    def drop_outputs(self, case):
        changed = None
        d = case["prog"].entry_def()
        i = len(d.outputs) - 1
        while i >= 0 and len(case["prog"].entry_def().outputs) > 1:
            cand = copy_case(case)
            del cand["prog"].entry_def().outputs[i]
            if i < len(cand["outputs"]):
                del cand["outputs"][i]
            if self.try_(cand):
                case = changed = cand
            i -= 1
        return changed

    def drop_where(self, case):
        changed = None
        for di, d in enumerate(case["prog"].defs):
            for si, s in enumerate(d.body):
                if s.is_call:
                    continue
                wi = len(s.where) - 1
                while wi >= 0:
                    cand = copy_case(case)
                    st = cand["prog"].defs[di].body[si]
                    if wi < len(st.where):
                        w = st.where.pop(wi)
                        if w[0] == "let":
                            st.rhs = T.substitute(st.rhs, {w[1]: w[2]})
                        if self.try_(cand):
                            case = changed = cand
                    wi -= 1
        return changed

    # -- expressions --------------------------------------------------------------------------------
    def simplify_exprs(self, case):
        changed = None
        for di in range(len(case["prog"].defs)):
            for si in range(len(case["prog"].defs[di].body)):
                st = case["prog"].defs[di].body[si]
                if st.is_call:
                    continue
                for root_i in range(len(list(st.exprs()))):
                    path = []
                    new = self.simplify_at(case, di, si, root_i, path)
                    if new is not None:
                        case = changed = new
        return changed

    def simplify_at(self, case, di, si, root_i, path):
        """Replaces the node at path (pre-order descent) by something smaller, then recurses."""
        changed = None
        node = node_at(case, di, si, root_i, path)
        if node is None:
            return None
        for repl in replacements(node):
            cand = copy_case(case)
            if set_node(cand, di, si, root_i, path, repl) and self.try_(cand):
                case = changed = cand
                node = node_at(case, di, si, root_i, path)
                break
        if node is None:
            return changed
        for ci in range(len(node.args)):
            new = self.simplify_at(case, di, si, root_i, path + [ci])
            if new is not None:
                case = changed = new
        return changed

    # -- sizes and inputs ---------------------------------------------------------------------------
    def shrink_sizes(self, case):
        changed = None
        d = case["prog"].entry_def()
        for name in d.sizes():
            cur = size_of(case, name)
            if cur is None:
                continue
            for new in sorted({0, 1, 2, cur // 2, cur - 1}):
                if new >= cur:
                    continue
                cand = with_size(case, name, new)
                if self.try_(cand):
                    case = changed = cand
                    break
        return changed

    def drop_inputs(self, case):
        changed = None
        d = case["prog"].entry_def()
        for i in range(len(d.inputs) - 1, -1, -1):
            name = case["prog"].entry_def().inputs[i].name if i < len(case["prog"].entry_def().inputs) else None
            if name is None or mentions(case["prog"].entry_def(), name):
                continue
            cand = copy_case(case)
            del cand["prog"].entry_def().inputs[i]
            del cand["inputs"][i]
            if self.try_(cand):
                case = changed = cand
        return changed

    def simplify_layouts(self, case):
        changed = None
        for i, spec in enumerate(case["inputs"]):
            if spec["layout"]["kind"] != "contig":
                cand = copy_case(case)
                cand["inputs"][i]["layout"] = {"kind": "contig"}
                if self.try_(cand):
                    case = changed = cand
        for i, spec in enumerate(case["outputs"]):
            if spec["layout"]["kind"] != "contig":
                cand = copy_case(case)
                cand["outputs"][i]["layout"] = {"kind": "contig"}
                if self.try_(cand):
                    case = changed = cand
        knobs = [k for k in case["options"] if k != "checked"]
        if knobs:
            cand = copy_case(case)
            cand["options"] = {"checked": case["options"].get("checked", "1")}
            if self.try_(cand):
                case = changed = cand
        return changed

    def simplify_values(self, case):
        changed = None
        for i in range(len(case["inputs"])):
            data = case["inputs"][i]["data"]
            if data.size == 0:
                continue
            for fill in (0, 1):
                if np.all(data == fill):
                    continue
                cand = copy_case(case)
                cand["inputs"][i]["data"] = np.full_like(data, fill)
                if self.try_(cand):
                    case = changed = cand
                    break
            data = case["inputs"][i]["data"]
            if data.size <= 24:
                for j in range(data.size):
                    for fill in (0, 1):
                        flat = data.reshape(-1)
                        if flat[j] == fill or (flat[j] == 0 and fill == 1):
                            continue
                        cand = copy_case(case)
                        cand["inputs"][i]["data"].reshape(-1)[j] = fill
                        if self.try_(cand):
                            case = changed = cand
                            data = case["inputs"][i]["data"]
                            break
        return changed


# ---- case surgery ---------------------------------------------------------------------------------

def without_statement(case, di, si):
    cand = copy_case(case)
    prog = cand["prog"]
    d = prog.defs[di]
    del d.body[si]
    if not d.body:
        return None
    written = set()
    for s in d.body:
        written |= set(s.outs if s.is_call else [s.lhs])
    keep = [i for i, o in enumerate(d.outputs) if o.name in written]
    if not keep:
        return None
    if d.name == prog.entry:
        cand["outputs"] = [cand["outputs"][i] for i in keep if i < len(cand["outputs"])]
    elif len(keep) != len(d.outputs):
        for other in prog.defs:
            for s in other.body:
                if s.is_call and s.callee == d.name:
                    s.outs = [s.outs[i] for i in keep]
    d.outputs = [d.outputs[i] for i in keep]
    drop_unused_defs(prog)
    return cand


def drop_unused_defs(prog):
    used = {prog.entry}
    changed = True
    while changed:
        changed = False
        for d in prog.defs:
            if d.name in used:
                for s in d.body:
                    if s.is_call and s.callee not in used:
                        used.add(s.callee)
                        changed = True
    prog.defs = [d for d in prog.defs if d.name in used]


def node_at(case, di, si, root_i, path):
    st = case["prog"].defs[di].body[si]
    roots = list(st.exprs())
    if root_i >= len(roots):
        return None
    n = roots[root_i]
    for ci in path:
        if ci >= len(n.args):
            return None
        n = n.args[ci]
    return n


def set_node(case, di, si, root_i, path, repl):
    st = case["prog"].defs[di].body[si]
    if not path:
        if root_i == 0:
            st.rhs = repl
            return True
        return _set_where_root(st, root_i, repl)
    parent = node_at(case, di, si, root_i, path[:-1])
    if parent is None or path[-1] >= len(parent.args):
        return False
    parent.args[path[-1]] = repl
    return True


def _set_where_root(st, root_i, repl):
    i = 1
    for wi, w in enumerate(st.where):
        n = 2 if w[0] == "in" else 1
        if root_i < i + n:
            if w[0] == "in":
                parts = [w[2], w[3]]
                parts[root_i - i] = repl
                st.where[wi] = ("in", w[1], parts[0], parts[1])
            elif w[0] == "let":
                st.where[wi] = ("let", w[1], repl)
            else:
                st.where[wi] = ("exists", repl)
            return True
        i += n
    return False


def replacements(node):
    """Smaller expressions to try in place of node: its operands, then literals."""
    out = []
    if node.k in ("bin", "un", "tern", "call"):
        for a in node.args:
            out.append(a.copy())
    if node.k not in ("int", "flt"):
        out += [T.lit(0), T.lit(1)]
    if node.k == "flt" and node.val not in ("0.0", "1.0"):
        out += [T.flit("1.0"), T.flit("0.0")]
    if node.k == "int" and node.val > 1:
        out += [T.lit(1), T.lit(0)]
    return out


def size_of(case, name):
    d = case["prog"].entry_def()
    for p, spec in zip(d.inputs, case["inputs"]):
        for i, x in enumerate(p.dims or []):
            if x == name:
                return spec["data"].shape[i]
    return None


def with_size(case, name, new):
    cand = copy_case(case)
    d = cand["prog"].entry_def()
    for p, spec in zip(d.inputs, cand["inputs"]):
        dims = p.dims or []
        if name not in dims:
            continue
        idx = tuple(slice(0, new) if x == name else slice(None) for x in dims)
        spec["data"] = np.ascontiguousarray(spec["data"][idx])
        if spec["layout"]["kind"] == "broadcast":
            spec["layout"] = {"kind": "contig"}
    return cand


def mentions(d, name):
    for s in d.body:
        if s.is_call:
            if name in s.args:
                return True
            continue
        for e in s.exprs():
            for n in e.walk():
                if (n.k == "acc" and n.val == name) or (n.k == "dim" and n.val[0] == name):
                    return True
    return False

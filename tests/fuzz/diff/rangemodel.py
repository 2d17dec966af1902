"""rangemodel.py - a concrete model of libtc's range inference, for the generator.

What it does: given a def and concrete input shapes, it predicts what libtc's front end will do
(src/infer/range_inference.cpp, src/ir/bind.cpp): the range of every index variable of every
statement, the extents of outputs and temporaries, the preconditions of unguarded reads, and
whether every guarded read is really guarded (so that no backend reads outside a tensor when
the index data is in range). It solves the in-bounds conditions by brute force over a window
of integers rather than symbolically, and evaluates "for all values of the resolved variables"
at the ends of their ranges, as Halide's and_condition_over_domain does for monotone
subscripts.
What it does not do: decide anything about values (gathers are data-dependent: the generator
chooses their index data), or predict every rejection exactly: a mismatch only means the
program is rejected by libtc (counted by the driver) or is less interesting.
"""
import itertools

import tcast
from tcast import NotEvaluable

WINDOW = 400          # brute-force window for solving in-bounds conditions: [-WINDOW, WINDOW]
MAX_POINTS = 20000    # guard checks enumerate at most this many points of a statement's domain


class ModelReject(Exception):
    """libtc would reject the program (or the model cannot tell what it would do)."""


class Access:
    """A tensor read: the node, whether it is guarded, and its path conditions
    [(condition, truth)] from ?: branches and && / || right operands."""

    def __init__(self, node, guarded, path):
        self.node, self.guarded, self.path = node, guarded, path


def collect_accesses(e, guarded=False, path=(), out=None):
    out = [] if out is None else out
    if e.k == "acc":
        out.append(Access(e, guarded, list(path)))
    for i, a in enumerate(e.args):
        p = path
        g = guarded
        if e.k == "tern" and i > 0:
            g = True
            p = path + ((e.args[0], i == 1),)
        elif e.k == "bin" and e.op in ("&&", "||") and i == 1:
            g = True
            p = path + ((e.args[0], e.op == "&&"),)
        collect_accesses(a, g, p, out)
    return out


class DefModel:
    def __init__(self):
        self.sizes = {}
        self.extents = {}      # tensor -> [int]
        self.types = {}        # tensor -> dtype
        self.ranges = []       # per body statement: {var: (lo, hi)}
        self.red_len = 1       # the longest reduction (product of reduction-variable extents)
        self.callees = {}      # callee name -> [DefModel] (one per call)


class Analyzer:
    def __init__(self, prog, d, input_shapes, depth=0):
        if depth > 8:
            raise ModelReject("calls nested too deeply")
        self.prog, self.d, self.depth = prog, d, depth
        self.m = DefModel()
        self.inputs = {p.name: p for p in d.inputs}
        self._bind_sizes(input_shapes)
        self.known = {p.name: True for p in d.inputs}
        for p in d.inputs:
            self.m.extents[p.name] = list(input_shapes[p.name])
        self.writers = {}
        for si, s in enumerate(d.body):
            for name in (s.outs if s.is_call else [s.lhs]):
                if name in self.inputs:
                    raise ModelReject("writes input " + name)
                self.writers.setdefault(name, []).append(si)
        self.state = ["pending"] * len(d.body)
        self.ranges = [dict() for _ in d.body]
        self.lhs_free = [[] for _ in d.body]
        self.call_ext = {}   # (stmt, output name) -> extents

    # -- sizes ----------------------------------------------------------------------------------
    def _bind_sizes(self, shapes):
        for p in self.d.inputs:
            shape = shapes[p.name]
            if len(shape) != p.rank:
                raise ModelReject("rank of " + p.name)
            for dd, n in zip(p.dims or [], shape):
                if isinstance(dd, int):
                    if dd != n:
                        raise ModelReject("literal dim of " + p.name)
                elif self.m.sizes.setdefault(dd, n) != n:
                    raise ModelReject("size %s disagrees" % dd)

    def env(self):
        env = dict(self.m.sizes)
        for t, ext in self.m.extents.items():
            if self.known.get(t):
                for i, n in enumerate(ext):
                    env[("dim", t, i)] = n
        return env

    # -- the fixpoint ---------------------------------------------------------------------------
    def run(self):
        while self.state.count("done") < len(self.state):
            progress = False
            for si, s in enumerate(self.d.body):
                if self.state[si] != "pending" or not self.attempt(si):
                    continue
                progress = True
                for name in (s.outs if s.is_call else [s.lhs]):
                    if not self.known.get(name):
                        self.finalize(name)
            for name in self.writers:
                if not self.known.get(name) and self.finalize(name):
                    progress = True
            if not progress:
                raise ModelReject("range inference deadlock")
        for o in self.d.outputs:
            if o.name not in self.writers:
                raise ModelReject("output %s never written" % o.name)
        self.m.ranges = self.ranges
        self.check_reads()
        return self.m

    def attempt(self, si):
        s = self.d.body[si]
        if s.is_call:
            return self.attempt_call(si, s)
        env = self.env()
        ranges = {}
        for w in s.where:
            if w[0] == "in":
                try:
                    ranges[w[1]] = (tcast.eval_int(w[2], env), tcast.eval_int(w[3], env))
                except NotEvaluable:
                    return False
        rhs, exists = tcast.inline_lets(s)
        vs = statement_vars(s, rhs, exists, self.names())
        unresolved = [v for v in vs if v not in ranges]
        accesses = [a for e in [rhs] + exists for a in collect_accesses(e) if a.node.val != s.lhs]
        for a in accesses:
            if a.node.val not in self.m.extents and a.node.val not in self.writers:
                raise ModelReject("reads unknown tensor " + a.node.val)
        blocked = False
        while unresolved:
            found = {}
            for a in accesses:
                for dd, sub in enumerate(a.node.args):
                    b = self.constrain(a.node.val, dd, sub, ranges, unresolved, found)
                    blocked = blocked or b
            if not found:
                break
            for v, (lo, hi) in found.items():
                if lo is None or hi is None:
                    raise ModelReject("infinite range for " + v)
                ranges[v] = (max(lo, 0), hi + 1)
                unresolved.remove(v)
        if unresolved and blocked:
            return False
        in_acc = set()
        for a in accesses:
            for sub in a.node.args:
                in_acc |= tcast.free_vars(sub, set(vs))
        for v in unresolved:
            if v not in s.idx or v in in_acc:
                raise ModelReject("cannot infer range of " + v)
        self.ranges[si] = ranges
        self.lhs_free[si] = list(unresolved)
        self.state[si] = "waitlhs" if unresolved else "done"
        return True

    def names(self):
        """Identifiers that are not index variables: sizes and tensors."""
        return set(self.m.sizes) | set(self.inputs) | set(self.writers)

    def constrain(self, tensor, dd, sub, ranges, unresolved, found):
        """Adds the in-bounds condition of subscript dd to found; returns True if blocked."""
        if tcast.reads_tensor(sub):
            return False
        fv = tcast.free_vars(sub, set(unresolved) | set(ranges))
        unres = [v for v in fv if v in unresolved]
        if len(unres) != 1:
            return False
        if not self.known.get(tensor):
            return True
        v = unres[0]
        others = sorted(fv - {v})
        ext = self.m.extents[tensor][dd]
        lo, hi = solve_interval(sub, v, others, ranges, ext, self.env())
        if v in found:
            clo, chi = found[v]
            lo = clo if lo is None else (lo if clo is None else max(lo, clo))
            hi = chi if hi is None else (hi if chi is None else min(hi, chi))
        found[v] = (lo, hi)
        return False

    def attempt_call(self, si, s):
        callee = self.prog.get(s.callee)
        if callee is None or callee is self.d:
            raise ModelReject("bad callee " + s.callee)
        if len(s.args) != len(callee.inputs) or len(s.outs) != len(callee.outputs):
            raise ModelReject("call arity")
        shapes = {}
        for a, p in zip(s.args, callee.inputs):
            if a not in self.m.extents and a not in self.writers:
                raise ModelReject("call argument " + a)
            if not self.known.get(a):
                return False
            shapes[p.name] = self.m.extents[a]
        sub = Analyzer(self.prog, callee, shapes, self.depth + 1).run_typed(
            {p.name: p.dtype for p in callee.inputs})
        self.m.callees.setdefault(s.callee, []).append(sub)
        for out, o in zip(s.outs, callee.outputs):
            self.call_ext[(si, out)] = sub.extents[o.name]
        self.m.red_len = max(self.m.red_len, sub.red_len)
        self.state[si] = "done"
        return True

    def finalize(self, name):
        ws = self.writers[name]
        if any(self.state[w] == "pending" for w in ws):
            return False
        first = self.d.body[ws[0]]
        rank = len(self.call_ext[(ws[0], name)]) if first.is_call else len(first.idx)
        ext = []
        for dd in range(rank):
            e = None
            for w in ws:
                s = self.d.body[w]
                if s.is_call:
                    h = self.call_ext[(w, name)][dd]
                else:
                    if len(s.idx) != rank:
                        raise ModelReject("rank of " + name)
                    h = self.ranges[w].get(s.idx[dd], (None, None))[1]
                if h is not None:
                    e = h if e is None else max(e, h)
            if e is None:
                e = self.annotated_dim(name, dd)
            ext.append(max(e, 0))
        self.m.extents[name] = ext
        for w in ws:
            s = self.d.body[w]
            for v in self.lhs_free[w]:
                self.ranges[w][v] = (0, ext[s.idx.index(v)])
            self.lhs_free[w] = []
            self.state[w] = "done"
        self.known[name] = True
        return True

    def annotated_dim(self, name, dd):
        for o in self.d.outputs:
            if o.name == name and o.annotation and o.annotation[1]:
                x = o.annotation[1][dd]
                return x if isinstance(x, int) else self.m.sizes[x]
        raise ModelReject("no access constrains an lhs index of " + name)

    # -- after inference: preconditions, guards, annotations ------------------------------------
    def check_reads(self):
        for o in self.d.outputs:
            if o.annotation and o.annotation[1] is not None:
                want = [x if isinstance(x, int) else self.m.sizes.get(x, -1) for x in o.annotation[1]]
                if want != self.m.extents[o.name]:
                    raise ModelReject("annotated shape of " + o.name)
        for si, s in enumerate(self.d.body):
            if s.is_call:
                continue
            rng = self.ranges[si]
            if any(hi <= lo for lo, hi in rng.values()):
                continue
            red = [v for v in rng if v not in s.idx]
            n = 1
            for v in red:
                n *= rng[v][1] - rng[v][0]
            # `+=` (no `!`) adds the terms to the tensor's entry values: one more term, so a
            # single product added to them is a chain of two (the cpu backend fuses it into one
            # multiply-add, one rounding where the reference rounds the product first).
            if s.op != "=" and not s.op.endswith("!"):
                n += 1
            self.m.red_len = max(self.m.red_len, n)
            rhs, exists = tcast.inline_lets(s)
            for a in collect_accesses(rhs):
                if a.node.val == s.lhs:
                    continue
                if not a.guarded:
                    self.check_precondition(a, rng)
                else:
                    self.check_guard(a, rng)

    def check_precondition(self, a, rng):
        ext = self.m.extents[a.node.val]
        env = self.env()
        for dd, sub in enumerate(a.node.args):
            if tcast.reads_tensor(sub):
                continue
            fv = sorted(tcast.free_vars(sub, set(rng)))
            for corner in itertools.product(*[(rng[v][0], rng[v][1] - 1) for v in fv]):
                env.update(zip(fv, corner))
                x = tcast.eval_int(sub, env)
                if not 0 <= x < ext[dd]:
                    raise ModelReject("precondition %s" % tcast.fmt(a.node))

    def check_guard(self, a, rng):
        """Every point where the path to the access is taken must read in bounds."""
        ext = self.m.extents[a.node.val]
        env = self.env()
        names = set(rng)
        fv = set()
        for sub in a.node.args:
            if not tcast.reads_tensor(sub):
                fv |= tcast.free_vars(sub, names)
        conds = []
        for c, truth in a.path:
            if tcast.reads_tensor(c) or not _int_only(c):
                conds = None
                break
            conds.append((c, truth))
            fv |= tcast.free_vars(c, names)
        fv = sorted(fv)
        points = 1
        for v in fv:
            points *= max(0, rng[v][1] - rng[v][0])
        if points > MAX_POINTS:
            raise ModelReject("guard domain too large to check")
        for pt in itertools.product(*[range(rng[v][0], rng[v][1]) for v in fv]):
            env.update(zip(fv, pt))
            if conds is not None and not all(bool(tcast.eval_int(c, env)) == t for c, t in conds):
                continue
            for dd, sub in enumerate(a.node.args):
                if tcast.reads_tensor(sub):
                    continue
                x = tcast.eval_int(sub, env)
                if not 0 <= x < ext[dd]:
                    raise ModelReject("unguarded read %s" % tcast.fmt(a.node))

    def run_typed(self, input_types):
        m = self.run()
        callee_types = {}
        for s in self.d.body:
            if s.is_call:
                callee = self.prog.get(s.callee)
                ct = tcast.type_def(callee, {p.name: p.dtype for p in callee.inputs},
                                    self._callee_types(callee), repair=False)
                callee_types[s.callee] = [ct[o.name] for o in callee.outputs]
        try:
            m.types = tcast.type_def(self.d, input_types, callee_types, repair=False)
        except tcast.TypeReject as e:
            raise ModelReject("type: %s" % e)
        return m

    def _callee_types(self, callee):
        out = {}
        for s in callee.body:
            if s.is_call:
                c = self.prog.get(s.callee)
                ct = tcast.type_def(c, {p.name: p.dtype for p in c.inputs}, self._callee_types(c),
                                    repair=False)
                out[s.callee] = [ct[o.name] for o in c.outputs]
        return out


def _int_only(e):
    """True if e is built from integer literals, variables, sizes, T.d and integer operators."""
    for n in e.walk():
        if n.k in ("flt", "acc"):
            return False
        if n.k == "call" and n.val not in ("min", "max", "abs"):
            return False
    return True


def statement_vars(s, rhs, exists, names):
    """Index variables of a statement in order: lhs first, then in order of appearance."""
    out = list(s.idx)
    for e in [rhs] + exists:
        for n in e.walk():
            if n.k == "var" and n.val not in names and n.val not in out:
                out.append(n.val)
    return out


def solve_interval(sub, v, others, ranges, ext, env):
    """Inclusive [lo, hi] of v such that 0 <= sub < ext for both ends of every other
    variable's range (None: unbounded on that side)."""
    corners = list(itertools.product(*[(ranges[o][0], ranges[o][1] - 1) for o in others]))
    env = dict(env)

    def holds(x, side):
        env[v] = x
        for c in corners:
            env.update(zip(others, c))
            val = tcast.eval_int(sub, env)
            if side == 0 and val < 0:
                return False
            if side == 1 and val >= ext:
                return False
        return True

    lo = hi = None
    for side in (0, 1):
        l, h = _half_line([holds(x, side) for x in range(-WINDOW, WINDOW + 1)], sub)
        if l is not None:
            lo = l if lo is None else max(lo, l)
        if h is not None:
            hi = h if hi is None else min(hi, h)
    return lo, hi


def _half_line(ok, sub):
    """(lo, hi) of a half-line given as booleans over the window; None on an open side."""
    n = len(ok)
    if all(ok):
        return None, None
    if not any(ok):
        raise ModelReject("no value satisfies %s" % tcast.fmt(sub))
    first = ok.index(True)
    last = n - 1 - ok[::-1].index(True)
    if not all(ok[first:last + 1]):
        raise ModelReject("non-monotone subscript %s" % tcast.fmt(sub))
    if first == 0 and last == n - 1:
        return None, None
    if first == 0:
        return None, last - WINDOW
    if last == n - 1:
        return first - WINDOW, None
    raise ModelReject("bounded on both sides by one condition: %s" % tcast.fmt(sub))


def analyze(prog, input_shapes):
    """Model of the entry def for {input name: shape}; raises ModelReject."""
    d = prog.entry_def()
    return Analyzer(prog, d, input_shapes).run_typed({p.name: p.dtype for p in d.inputs})

"""tcast.py - the fuzzer's model of a TC program: AST, printer, typing, integer evaluation.

What it does:
  - a small mutable AST (Ex expressions, St statements, Call statements, Def, Prog) that the
    generator builds, the minimiser rewrites and the printer turns into TC source;
  - a JSON round trip for it (saved reproducers keep the AST so they can be re-minimised);
  - a port of libtc's typing rules (src/lang/typing.cpp and sema.cpp: weak literals, promotion,
    the integer-literal-must-fit check) that can *repair* a literal that does not fit instead
    of rejecting it;
  - an evaluator of integer expressions over index variables and sizes (guards, subscripts,
    where-clause bounds) with Halide's Euclidean '/' and '%'.
What it does not do: evaluate tensor values (the reference backend is the oracle), or model
range inference (rangemodel.py does).
"""

# ---- scalar types -----------------------------------------------------------------------------

DTYPES = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
          "float16", "float32", "float64", "bfloat16"]
KIND = {"bool": "b", "uint8": "u", "uint16": "u", "uint32": "u", "uint64": "u", "int8": "i",
        "int16": "i", "int32": "i", "int64": "i", "float16": "f", "float32": "f", "float64": "f",
        "bfloat16": "f"}
BITS = {"bool": 8, "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64, "int8": 8, "int16": 16,
        "int32": 32, "int64": 64, "float16": 16, "float32": 32, "float64": 64, "bfloat16": 16}
# Spellings the language accepts for each type (src/support/dtype.cpp).
SPELLINGS = {"float32": ["float32", "float"], "float64": ["float64", "double"],
             "float16": ["float16", "half"], "int32": ["int32", "int"], "uint8": ["uint8", "byte"],
             "int8": ["int8", "char"], "int64": ["int64", "long"], "bfloat16": ["bfloat16", "bf16"]}
ALIAS = {s: t for t, ss in SPELLINGS.items() for s in ss}
ALIAS.update({t: t for t in DTYPES})

BUILTINS_1 = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "cbrt",
              "fabs", "floor", "ceil", "round", "trunc", "sin", "cos", "tan", "asin", "acos",
              "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc"]
BUILTINS_2 = ["pow", "atan2", "hypot", "fmod", "fmax", "fmin", "copysign"]
BUILTINS_3 = ["fma"]
GENERIC = {"min": 2, "max": 2, "abs": 1}
FLOAT_MATH = set(BUILTINS_1 + BUILTINS_2 + BUILTINS_3)
ARITY = dict(GENERIC)
ARITY.update({b: 1 for b in BUILTINS_1})
ARITY.update({b: 2 for b in BUILTINS_2})
ARITY.update({b: 3 for b in BUILTINS_3})

COMPARISONS = {"<", "<=", ">", ">=", "==", "!="}
BINARY_OPS = ["+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||"]
REDUCE_OPS = ["+=", "*=", "min=", "max=", "+=!", "*=!", "min=!", "max=!"]


def is_float(t):
    return KIND[t] == "f"


def is_int(t):
    return KIND[t] in "ui"


def int_range(t):
    """[lo, hi] of an integer (or bool) type."""
    if t == "bool":
        return 0, 1
    b = BITS[t]
    if KIND[t] == "u":
        return 0, (1 << b) - 1
    return -(1 << (b - 1)), (1 << (b - 1)) - 1


# ---- AST --------------------------------------------------------------------------------------

class Ex:
    """An expression node.

    k: 'int' (val: int >= 0), 'flt' (val: literal text), 'var' (val: index variable, size or
    let name), 'dim' (val: (tensor, d) for T.d), 'acc' (val: tensor, args: subscripts,
    op 'bare' for a bare 0-d read), 'un' (op '-' '!'), 'bin' (op), 'tern' (args c, a, b),
    'call' (val: builtin or cast type spelling, args).
    """
    __slots__ = ("k", "op", "val", "args", "ty")

    def __init__(self, k, val=None, args=None, op=None):
        self.k, self.val, self.args, self.op = k, val, list(args or []), op
        self.ty = None

    def copy(self):
        e = Ex(self.k, self.val, [a.copy() for a in self.args], self.op)
        e.ty = self.ty
        return e

    def walk(self):
        yield self
        for a in self.args:
            yield from a.walk()

    def to_json(self):
        d = {"k": self.k}
        if self.val is not None:
            d["val"] = list(self.val) if isinstance(self.val, tuple) else self.val
        if self.op is not None:
            d["op"] = self.op
        if self.args:
            d["args"] = [a.to_json() for a in self.args]
        return d

    @staticmethod
    def from_json(d):
        val = d.get("val")
        if d["k"] == "dim":
            val = tuple(val)
        return Ex(d["k"], val, [Ex.from_json(a) for a in d.get("args", [])], d.get("op"))


def lit(v):
    """An integer literal; a negative value is a negated literal, as the parser builds it."""
    return Ex("int", v) if v >= 0 else Ex("un", op="-", args=[Ex("int", -v)])


def flit(text):
    return Ex("flt", text)


def var(name):
    return Ex("var", name)


def acc(tensor, subs, bare=False):
    return Ex("acc", tensor, subs, "bare" if bare else None)


def un(op, a):
    return Ex("un", op=op, args=[a])


def bin_(op, a, b):
    return Ex("bin", op=op, args=[a, b])


def tern(c, a, b):
    return Ex("tern", args=[c, a, b])


def call(name, *args):
    return Ex("call", name, list(args))


def dim(tensor, d):
    return Ex("dim", (tensor, d))


def conj(conds):
    """c1 && c2 && ... (None for an empty list)."""
    out = None
    for c in conds:
        out = c if out is None else bin_("&&", out, c)
    return out


class St:
    """A statement: lhs(idx...) op rhs where items.

    where: list of ('in', var, lo, hi) | ('let', name, Ex) | ('exists', Ex).
    bare: a 0-d lhs written as 'T' instead of 'T()'."""

    def __init__(self, lhs, idx, op, rhs, where=None, bare=False):
        self.lhs, self.idx, self.op, self.rhs = lhs, list(idx), op, rhs
        self.where = list(where or [])
        self.bare = bare

    is_call = False

    def copy(self):
        return St(self.lhs, self.idx, self.op, self.rhs.copy(),
                  [_copy_where(w) for w in self.where], self.bare)

    def exprs(self):
        """Every expression root of the statement (rhs, let values, exists, range bounds)."""
        yield self.rhs
        for w in self.where:
            if w[0] == "in":
                yield w[2]
                yield w[3]
            else:
                yield w[-1]

    def to_json(self):
        return {"lhs": self.lhs, "idx": self.idx, "op": self.op, "rhs": self.rhs.to_json(),
                "bare": self.bare, "where": [_where_json(w) for w in self.where]}


class Call:
    """A call statement: out1, out2 = callee(arg1, ...)."""
    is_call = True

    def __init__(self, outs, callee, args):
        self.outs, self.callee, self.args = list(outs), callee, list(args)

    def copy(self):
        return Call(self.outs, self.callee, self.args)

    def exprs(self):
        return iter(())

    def to_json(self):
        return {"call": self.callee, "outs": self.outs, "args": self.args}


def _copy_where(w):
    if w[0] == "in":
        return ("in", w[1], w[2].copy(), w[3].copy())
    if w[0] == "let":
        return ("let", w[1], w[2].copy())
    return ("exists", w[1].copy())


def _where_json(w):
    if w[0] == "in":
        return ["in", w[1], w[2].to_json(), w[3].to_json()]
    if w[0] == "let":
        return ["let", w[1], w[2].to_json()]
    return ["exists", w[1].to_json()]


def _where_from_json(w):
    if w[0] == "in":
        return ("in", w[1], Ex.from_json(w[2]), Ex.from_json(w[3]))
    if w[0] == "let":
        return ("let", w[1], Ex.from_json(w[2]))
    return ("exists", Ex.from_json(w[1]))


class Param:
    """A def input: spelling name(dims); dims None for a 0-d scalar ('float a')."""

    def __init__(self, name, spelling, dims):
        self.name, self.spelling, self.dims = name, spelling, dims

    @property
    def dtype(self):
        return ALIAS[self.spelling]

    @property
    def rank(self):
        return len(self.dims) if self.dims else 0

    def to_json(self):
        return {"name": self.name, "type": self.spelling, "dims": self.dims}


class Out:
    """A def output; annotation (spelling, dims) or None."""

    def __init__(self, name, annotation=None):
        self.name, self.annotation = name, annotation

    def to_json(self):
        return {"name": self.name, "annotation": self.annotation}


class Def:
    def __init__(self, name, inputs, outputs, body):
        self.name, self.inputs, self.outputs, self.body = name, inputs, outputs, body

    def copy(self):
        return Def(self.name, [Param(p.name, p.spelling, list(p.dims) if p.dims else p.dims)
                               for p in self.inputs],
                   [Out(o.name, o.annotation) for o in self.outputs], [s.copy() for s in self.body])

    def to_json(self):
        return {"name": self.name, "inputs": [p.to_json() for p in self.inputs],
                "outputs": [o.to_json() for o in self.outputs],
                "body": [s.to_json() for s in self.body]}

    def input_names(self):
        return [p.name for p in self.inputs]

    def output_names(self):
        return [o.name for o in self.outputs]

    def sizes(self):
        """Size names declared by the inputs, in order of first appearance."""
        out = []
        for p in self.inputs:
            for d in p.dims or []:
                if isinstance(d, str) and d not in out:
                    out.append(d)
        return out


class Prog:
    def __init__(self, defs, entry):
        self.defs, self.entry = defs, entry

    def copy(self):
        return Prog([d.copy() for d in self.defs], self.entry)

    def get(self, name):
        for d in self.defs:
            if d.name == name:
                return d
        return None

    def entry_def(self):
        return self.get(self.entry)

    def to_json(self):
        return {"entry": self.entry, "defs": [d.to_json() for d in self.defs]}

    @staticmethod
    def from_json(j):
        defs = []
        for d in j["defs"]:
            body = []
            for s in d["body"]:
                if "call" in s:
                    body.append(Call(s["outs"], s["call"], s["args"]))
                else:
                    body.append(St(s["lhs"], s["idx"], s["op"], Ex.from_json(s["rhs"]),
                                   [_where_from_json(w) for w in s["where"]], s.get("bare", False)))
            outs = [Out(o["name"], tuple(o["annotation"]) if o.get("annotation") else None)
                    for o in d["outputs"]]
            defs.append(Def(d["name"], [Param(p["name"], p["type"], p["dims"]) for p in d["inputs"]],
                            outs, body))
        return Prog(defs, j["entry"])


# ---- printer ----------------------------------------------------------------------------------

def _atom(e):
    return e.k in ("int", "flt", "var", "dim", "acc", "call")


def fmt(e):
    """TC source of an expression, parenthesised so that precedence never matters."""
    k = e.k
    if k == "int":
        return str(e.val)
    if k == "flt":
        return e.val
    if k == "var":
        return e.val
    if k == "dim":
        return "%s.%d" % e.val
    if k == "acc":
        if e.op == "bare" and not e.args:
            return e.val
        return "%s(%s)" % (e.val, ", ".join(fmt(a) for a in e.args))
    if k == "call":
        return "%s(%s)" % (e.val, ", ".join(fmt(a) for a in e.args))
    if k == "un":
        return e.op + _sub(e.args[0])
    if k == "bin":
        return "%s %s %s" % (_sub(e.args[0]), e.op, _sub(e.args[1]))
    if k == "tern":
        return "%s ? %s : %s" % tuple(_sub(a) for a in e.args)
    raise ValueError("bad node " + k)


def _sub(e):
    return fmt(e) if _atom(e) else "(" + fmt(e) + ")"


def fmt_stmt(s):
    if s.is_call:
        return "%s = %s(%s)" % (", ".join(s.outs), s.callee, ", ".join(s.args))
    lhs = s.lhs if (s.bare and not s.idx) else "%s(%s)" % (s.lhs, ", ".join(s.idx))
    text = "%s %s %s" % (lhs, s.op, fmt(s.rhs))
    items = []
    for w in s.where:
        if w[0] == "in":
            items.append("%s in %s:%s" % (w[1], fmt(w[2]), fmt(w[3])))
        elif w[0] == "let":
            items.append("%s = %s" % (w[1], fmt(w[2])))
        else:
            items.append("exists %s" % fmt(w[1]))
    if items:
        text += " where " + ", ".join(items)
    return text


def fmt_def(d):
    ins = []
    for p in d.inputs:
        ins.append("%s %s" % (p.spelling, p.name) if p.dims is None else
                   "%s(%s) %s" % (p.spelling, ",".join(str(x) for x in p.dims), p.name))
    outs = []
    for o in d.outputs:
        if o.annotation is None:
            outs.append(o.name)
        else:
            spelling, dims = o.annotation
            outs.append("%s %s" % (spelling, o.name) if not dims else
                        "%s(%s) %s" % (spelling, ",".join(str(x) for x in dims), o.name))
    lines = ["def %s(%s) -> (%s) {" % (d.name, ", ".join(ins), ", ".join(outs))]
    lines += ["  " + fmt_stmt(s) for s in d.body]
    lines.append("}")
    return "\n".join(lines)


def fmt_prog(p):
    return "\n".join(fmt_def(d) for d in p.defs) + "\n"


# ---- integer evaluation (guards, subscripts, bounds) --------------------------------------------

class NotEvaluable(Exception):
    """The expression reads tensor data or floats: not decidable without running it."""


def ediv(a, b):
    """Halide's (Euclidean) integer division; x / 0 == 0."""
    if b == 0:
        return 0
    q = a // b if b > 0 else -(a // -b)
    if a - q * b < 0:
        q += 1 if b < 0 else -1
    return q


def emod(a, b):
    if b == 0:
        return 0
    return a - b * ediv(a, b)


def eval_int(e, env):
    """Value of an integer expression; env maps variable/size names and ('dim', T, d) to ints."""
    k = e.k
    if k == "int":
        return e.val
    if k == "var":
        if e.val not in env:
            raise NotEvaluable(e.val)
        return env[e.val]
    if k == "dim":
        key = ("dim",) + tuple(e.val)
        if key not in env:
            raise NotEvaluable(str(e.val))
        return env[key]
    if k == "un":
        v = eval_int(e.args[0], env)
        return -v if e.op == "-" else int(not v)
    if k == "bin":
        a = eval_int(e.args[0], env)
        if e.op == "&&":
            return int(bool(a) and bool(eval_int(e.args[1], env)))
        if e.op == "||":
            return int(bool(a) or bool(eval_int(e.args[1], env)))
        b = eval_int(e.args[1], env)
        return _int_binop(e.op, a, b)
    if k == "tern":
        return eval_int(e.args[1], env) if eval_int(e.args[0], env) else eval_int(e.args[2], env)
    if k == "call" and e.val in ("min", "max", "abs"):
        vals = [eval_int(a, env) for a in e.args]
        return {"min": min, "max": max, "abs": lambda x: abs(x)}[e.val](*vals)
    raise NotEvaluable(k)


def _int_binop(op, a, b):
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return ediv(a, b)
    if op == "%":
        return emod(a, b)
    return int({"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b,
                "!=": a != b}[op])


def free_vars(e, names):
    """Index variables of e (names: the set of identifiers that are index variables)."""
    return {n.val for n in e.walk() if n.k == "var" and n.val in names}


def reads_tensor(e):
    return any(n.k == "acc" for n in e.walk())


# ---- typing (a port of sema.cpp/typing.cpp) -------------------------------------------------------

class TypeReject(Exception):
    pass


def arith(t):
    return "int32" if t == "bool" else t


def promote_strong(a, b):
    if a == b:
        return a
    a, b = arith(a), arith(b)
    if is_float(a) != is_float(b):
        return a if is_float(a) else b
    if {a, b} == {"float16", "bfloat16"}:
        return "float32"  # neither holds the other's values
    if BITS[a] != BITS[b]:
        return a if BITS[a] > BITS[b] else b
    if KIND[a] == "u":
        return a
    return b


def unify(a, b):
    (ta, wa), (tb, wb) = a, b
    if wa and wb:
        return ("float32" if is_float(ta) or is_float(tb) else "int32"), True
    if wa or wb:
        w, s = (a, b) if wa else (b, a)
        if is_float(w[0]) and not is_float(s[0]):
            return "float32", False
        return ("int32" if s[0] == "bool" else s[0]), False
    return promote_strong(ta, tb), False


class Typer:
    """Types expressions like sema does. repair=True clips integer literals into the type they
    are used with (libtc would reject them); repair=False raises TypeReject instead."""

    def __init__(self, tensor_types, repair):
        self.tt = tensor_types
        self.repair = repair

    def type_of(self, e):
        k = e.k
        if k == "int":
            return self._set(e, ("int32", True))
        if k == "flt":
            return self._set(e, ("float32", True))
        if k == "var" or k == "dim":
            return self._set(e, ("int32", False))
        if k == "acc":
            for a in e.args:
                t, _ = self.type_of(a)
                if not is_int(t):
                    raise TypeReject("subscript of %s is %s" % (e.val, t))
            return self._set(e, (self.tt[e.val], False))
        if k == "un":
            t, w = self.type_of(e.args[0])
            if e.op == "!":
                return self._set(e, ("bool", False))
            return self._set(e, (arith(t), w))
        if k == "bin":
            a = self.type_of(e.args[0])
            b = self.type_of(e.args[1])
            if e.op in ("&&", "||"):
                return self._set(e, ("bool", False))
            u = unify(a, b)[0]
            if u == "bool" and e.op not in ("==", "!="):
                u = "int32"
            for x in e.args:
                self.settle(x, u)
            return self._set(e, ("bool" if e.op in COMPARISONS else u, False))
        if k == "tern":
            self.type_of(e.args[0])
            r = unify(self.type_of(e.args[1]), self.type_of(e.args[2]))
            for x in e.args[1:]:
                self.settle(x, r[0])
            return self._set(e, (r[0], False))
        if k == "call":
            if e.val in ALIAS and e.val not in ARITY:
                self.type_of(e.args[0])
                return self._set(e, (ALIAS[e.val], False))
            r = self.type_of(e.args[0])
            for a in e.args[1:]:
                r = unify(r, self.type_of(a))
            for a in e.args:
                self.settle(a, r[0])
            t = r[0]
            if e.val in FLOAT_MATH and not is_float(t):
                t = "float32"
            if t == "bool":
                t = "int32"
            return self._set(e, (t, False))
        raise ValueError(k)

    @staticmethod
    def _set(e, tw):
        e.ty = tw
        return tw

    def settle(self, e, t):
        if not e.ty[1]:
            return
        self._check_fits(e, t)
        e.ty = (t, False)
        for a in e.args:
            self.settle(a, t)

    def _check_fits(self, e, t):
        negated = e.k == "un" and e.op == "-" and e.args[0].k == "int"
        if e.k != "int" and not negated:
            return
        if not (is_int(t) or t == "bool"):
            return
        lo, hi = int_range(t)
        v = -e.args[0].val if negated else e.val
        if lo <= v <= hi:
            return
        if not self.repair:
            raise TypeReject("literal %d does not fit %s" % (v, t))
        v = min(max(v, lo), hi)
        if v >= 0:
            e.k, e.val, e.args, e.op = "int", v, [], None
        else:
            e.args[0].val = -v


def inline_lets(st):
    """(rhs, exists list) of a statement with its where-clause lets substituted (as sema does)."""
    lets = {}
    for w in st.where:
        if w[0] == "let":
            lets[w[1]] = substitute(w[2], lets)
    rhs = substitute(st.rhs, lets)
    exists = [substitute(w[1], lets) for w in st.where if w[0] == "exists"]
    return rhs, exists


def substitute(e, lets):
    if e.k == "var" and e.val in lets:
        return lets[e.val].copy()
    n = Ex(e.k, e.val, [substitute(a, lets) for a in e.args], e.op)
    return n


def type_def(d, input_types, callee_types, repair):
    """Types of every tensor of def d (dict name -> dtype), like sema's fixpoint rounds.

    callee_types: def name -> list of output dtypes (for call statements). With repair=True,
    literals that do not fit are clipped in place (in the statements, not in let copies: the
    generator only extracts lets from non-literal subtrees). Raises TypeReject."""
    tt = dict(input_types)
    annotated = {o.name: ALIAS[o.annotation[0]] for o in d.outputs if o.annotation}
    written = []
    for s in d.body:
        for name in (s.outs if s.is_call else [s.lhs]):
            if name not in written and name not in input_types:
                written.append(name)
    for name in written:
        tt[name] = annotated.get(name, "float32")
    for _ in range(16):
        now = {}
        for s in d.body:
            if s.is_call:
                for name, t in zip(s.outs, callee_types[s.callee]):
                    now[name] = unify(now[name], (t, False)) if name in now else (t, False)
                continue
            typer = Typer(tt, repair)
            rhs, exists = _typed_parts(s)
            rt = typer.type_of(rhs)
            for x in exists:
                typer.type_of(x)
            for w in s.where:
                if w[0] == "in":
                    for b in (w[2], w[3]):
                        if not is_int(typer.type_of(b)[0]):
                            raise TypeReject("range bound is not an integer")
            now[s.lhs] = unify(now[s.lhs], rt) if s.lhs in now else rt
        changed = False
        for name, (t, _) in now.items():
            if name in annotated:
                continue
            if tt[name] != t:
                changed = True
            tt[name] = t
        if not changed:
            break
    for s in d.body:
        if s.is_call:
            continue
        typer = Typer(tt, repair)
        rhs, _ = _typed_parts(s)
        typer.type_of(rhs)
        typer.settle(rhs, tt[s.lhs])
        if tt[s.lhs] == "bool" and s.op.rstrip("!") in ("+=", "*="):
            raise TypeReject("bool reduced with " + s.op)
    return tt


def _typed_parts(s):
    """The statement's rhs and exists expressions as sema types them: with lets inlined (a
    copy), or the statement's own nodes when it has no lets (so that repairs stick)."""
    if any(w[0] == "let" for w in s.where):
        return inline_lets(s)
    return s.rhs, [w[1] for w in s.where if w[0] == "exists"]


# ---- liveness and source lines (for classifying failures) ------------------------------------------

def reads_of(s):
    """Tensors a statement reads (accesses, T.d, call arguments)."""
    if s.is_call:
        return set(s.args)
    out = set()
    for e in s.exprs():
        for n in e.walk():
            if n.k == "acc":
                out.add(n.val)
            elif n.k == "dim":
                out.add(n.val[0])
    return out


def dead_statements(prog):
    """{(def name, statement index)} of statements whose results nothing uses (they write
    only temporaries that no live statement reads), following calls from the entry."""
    live_stmts = set()

    def visit(d, live_outputs, depth):
        if depth > 16:
            return
        live = set(live_outputs)
        for si in reversed(range(len(d.body))):
            s = d.body[si]
            writes = s.outs if s.is_call else [s.lhs]
            if not any(w in live for w in writes):
                continue
            live_stmts.add((d.name, si))
            live |= reads_of(s)
            if s.is_call:
                callee = prog.get(s.callee)
                if callee is not None:
                    outs = {o.name for o, w in zip(callee.outputs, s.outs) if w in live}
                    visit(callee, outs, depth + 1)

    entry = prog.entry_def()
    visit(entry, {o.name for o in entry.outputs}, 0)
    return {(d.name, si) for d in prog.defs for si in range(len(d.body))} - live_stmts


def statement_at_line(prog, line):
    """(def, statement index) printed at a 1-based line of fmt_prog(prog), or None."""
    n = 1
    for d in prog.defs:
        if n < line <= n + len(d.body):
            return d, line - n - 1
        n += len(d.body) + 2
    return None

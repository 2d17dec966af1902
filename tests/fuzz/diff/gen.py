"""gen.py - random valid TC programs and their inputs, for the differential fuzzer.

What it does: from a seeded random.Random, builds one "case": a TC program (one entry def,
sometimes callee defs called as 'h = f(x)' / 'a, b = g(x, y)'), concrete inputs (values,
memory layouts, byte offsets, bool bytes other than 0/1), how the outputs are pre-filled and
laid out, and the options (checked=1, sometimes checked=0, sometimes cpu.* and cuda.* schedule
knobs).
Programs use every dtype, binary operator, unary operator, builtin, cast, ternaries, integer
and float literals at the edges of their types, index variables / sizes / T.d as values,
temporaries, every reduction operator with and without '!', gathers LUT(I(b), d) whose index
data is sometimes out of range, guarded reads under '?:' and '&&' / '||', where clauses (ranges,
lets, exists), sizes 0 and 1. Generation is checked statement by statement against
rangemodel.py (libtc's range inference and preconditions, concretely) and tcast.py's typing
(literals that would not fit are clipped), so most programs are valid; the driver counts the
ones libtc rejects.
What it does not do: run anything, or know the expected values (the reference backend is the
oracle). Reads are in bounds by construction except for gathers whose index data the case
marks out of range (then it only uses checked=1).
"""
import itertools

import numpy as np

import tcast as T
import tclib  # tests/e2e, on the path of difftest.py and worker.py
from rangemodel import Analyzer, ModelReject

FEATURES = {
    "int-div": "integer / and % (division by zero, INT_MIN / -1)",
    "float16": "the float16 dtype (inputs, casts, annotations)",
    "bfloat16": "the bfloat16 dtype (inputs, casts, annotations)",
    "specials": "special float values in inputs (NaN, inf, -0.0, max, subnormals) and edge literals",
    "nan": "NaN in inputs",
    "bool-bytes": "bool inputs whose bytes are not 0 or 1",
    "oob-gather": "gather index data out of range",
    "gather": "gathers (data-dependent subscripts)",
    "calls": "calls between defs",
    "layouts": "strided / Fortran / offset / broadcast inputs and outputs",
    "checked0": "checked=0 runs",
    "knobs": "cpu.* and cuda.* schedule options",
    "float-mod": "% on floats",
    "minmax-nan": "NaN reaching min/max (inputs of programs with min/max get no NaN)",
    "int-overflow": "integer edge values in inputs and literals (wrap-around)",
    "guards": "guarded reads (?: and && / || around out-of-range subscripts)",
    "bool-reduce": "min=/max= reductions into bool tensors",
    "dead-temps": "temporaries that nothing reads (off: such temporaries become outputs)",
    "products": "plain (batched, transposed) matrix products, many with cpu.blas=1 (the CBLAS route) or "
                "cpu.transpose forced (the result computed transposed)",
    "convolutions": "valid 2-D convolutions (O(n,m,h,w) +=! I(n,c,h+kh,w+kw) * W(m,c,kh,kw)), with and "
                    "without cpu.flatten (rows computed as one)",
    "contractions": "sums of products of two tensors with batch, free and summed indices in any order "
                    "in each tensor and small, odd sizes, some followed by pointwise statements (a bias, a "
                    "ReLU) or a second product reading the first (the contraction routes, "
                    "src/backends/cpu/contraction and src/backends/cuda/contraction; cpu.contract forced to 0 or 1 "
                    "in half)",
}

DATA_NAMES = ["A", "B", "C", "D", "E", "F"]
SIZE_NAMES = ["M", "N", "K", "L"]
VAR_NAMES = ["i", "j", "k", "l", "m", "n", "p", "q", "r", "s", "u", "v"]

INT_EDGES = [127, 128, 255, 256, 32767, 32768, 65535, 65536, 2147483647, 2147483648,
             4294967295, 4294967296, 9223372036854775807]
NEG_INT_EDGES = [-1, -2, -128, -129, -32768, -32769, -2147483648, -2147483649,
                 -9223372036854775807]
SMALL_FLOATS = ["0.5", "1.5", "2.", ".25", "0.0", "3.0", "0.125", "4.5", "1.0", "10.0", "2.5e-1",
                "1e2", "3E-1"]
EDGE_FLOATS = ["1e38", "3.4e38", "3.4028234663852886e38", "3.4028236e38", "1e39", "65504.0",
               "65505.0", "65520.0", "6e-8", "5.96e-8", "1e-45", "1.4e-45", "1e-46", "1e308",
               "1.7976931348623157e308", "5e-324", "1e-320", "0.1", "1e-5", "2147483648.0",
               "4294967296.0", "9.3e18", "1e-38", "1.17549435e-38", "6.1e-5"]


def size_value(rng):
    r = rng.random()
    if r < 0.03:
        return 0
    if r < 0.15:
        return 1
    if r < 0.80:
        return rng.randint(2, 5)
    if r < 0.95:
        return rng.randint(6, 17)
    return rng.randint(18, 40)


def spell(rng, dtype):
    return rng.choice(T.SPELLINGS.get(dtype, [dtype]))


class TensorInfo:
    def __init__(self, name, role, dtype, extents, dim_exprs):
        self.name, self.role, self.dtype = name, role, dtype
        self.extents, self.dim_exprs = extents, dim_exprs
        self.frozen = False      # passed to a call: no further writers (its dtype must not change)
        self.is_index = False    # an integer input reserved for gathers

    @property
    def rank(self):
        return len(self.extents)


class Gather:
    """A data-dependent subscript: index tensor `index` must hold values v with
    0 <= v + offset < extent of `target` dimension `dim`."""

    def __init__(self, index, target, dim, offset):
        self.index, self.target, self.dim, self.offset = index, target, dim, offset


# The kinds of case that have a generator of their own, which --focus makes every case.
FOCUS = {"products": "_product_case", "convolutions": "_convolution_case", "contractions": "_contraction_case"}


class Generator:
    def __init__(self, rng, disabled=(), focus=None):
        self.rng = rng
        self.focus = focus
        if focus is not None and focus not in FOCUS:
            raise ValueError("unknown focus %r (one of: %s)" % (focus, ", ".join(sorted(FOCUS))))
        self.off = set(disabled)
        unknown = self.off - set(FEATURES)
        if unknown:
            raise ValueError("unknown features: %s" % ", ".join(sorted(unknown)))

    def on(self, feature):
        return feature not in self.off

    def dtype(self):
        choices = [t for t in T.DTYPES if self.on(t) or t not in ("float16", "bfloat16")]
        if self.rng.random() < 0.3:
            return "float32"
        return self.rng.choice(choices)

    # -- a whole case ---------------------------------------------------------------------------
    def case(self):
        for _ in range(20):
            c = self._try_case()
            if c is not None:
                return c
        raise RuntimeError("generator failed 20 times in a row")

    def _try_case(self):
        rng = self.rng
        self.prog = T.Prog([], "main")
        self.gathers = []
        self.wild_gather = False
        self.n_callees = 0
        if self.focus:
            return getattr(self, FOCUS[self.focus])()
        if self.on("products") and rng.random() < 0.06:
            return self._product_case()
        if self.on("convolutions") and rng.random() < 0.04:
            return self._convolution_case()
        if self.on("contractions") and rng.random() < 0.06:
            return self._contraction_case()
        sizes = {n: size_value(rng) for n in rng.sample(SIZE_NAMES, rng.randint(1, 3))}
        d = T.Def("main", [], [], [])
        ds = DefState(self, d, sizes, depth=0)
        self._entry_inputs(ds)
        self.prog.defs.append(d)
        if not ds.fill(rng.randint(1, 5)):
            return None
        try:
            model = Analyzer(self.prog, d, ds.input_shapes()).run_typed(ds.input_types())
        except ModelReject:
            return None
        self._prune_defs()
        return self._finish(ds, model)

    def _product_case(self):
        """O1(l, i, j) +=! A(l, i, k) * B(l, k, j): either operand stored transposed, in either
        order, the batch dimension l or not, `+=` or `+=!`, float or double: what cpu.blas
        routes to the system's CBLAS (src/backends/cpu/gemm_route.h), and what cpu.transpose
        computes transposed where B is stored (N, K) (src/backends/cpu/transpose_result.h)."""
        rng = self.rng
        dt = rng.choice(["float32", "float32", "float64"])
        batch = rng.random() < 0.3
        sizes = {n: size_value(rng) for n in ("M", "N", "K") + (("L",) if batch else ())}
        d = T.Def("main", [], [], [])
        ds = DefState(self, d, sizes, depth=0)
        lead = ["L"] if batch else []
        a_dims = lead + (["K", "M"] if rng.random() < 0.3 else ["M", "K"])
        b_dims = lead + (["N", "K"] if rng.random() < 0.3 else ["K", "N"])
        ds.add_input("A", dt, len(a_dims), dims=a_dims)
        ds.add_input("B", dt, len(b_dims), dims=b_dims)
        var_of = {"L": "l", "M": "i", "N": "j", "K": "k"}
        reads = [T.acc(n, [T.var(var_of[x]) for x in dims]) for n, dims in (("A", a_dims), ("B", b_dims))]
        rng.shuffle(reads)
        out_dims = lead + ["M", "N"]
        d.body.append(T.St("O1", [var_of[x] for x in out_dims], rng.choice(["+=!", "+=!", "+="]),
                           T.bin_("*", reads[0], reads[1])))
        d.outputs.append(T.Out("O1"))
        ds.tensors["O1"] = TensorInfo("O1", "out", dt, [sizes[x] for x in out_dims], [T.var(x) for x in out_dims])
        if rng.random() < 0.5:
            return self._single_statement_case(ds, 0.7, "cpu.blas", ["1"])
        return self._single_statement_case(ds, 0.7, "cpu.transpose", ["0", "1"])

    def _contraction_case(self):
        """O(b.., m.., n..) +=! A(b.., m.., k.. in any order) * B(b.., n.., k.. in any order): 0 to 2
        indices in each group (batch, M, N, K), each tensor's dimensions shuffled, the output's
        too, sizes 1 to 13, `+=` or `+=!`, float or double; some with an epilogue (pointwise
        statements on O) and a second product reading O: the contraction route of the cpu
        backend (src/backends/cpu/contraction), and the pipeline where it is turned off."""
        rng = self.rng
        dt = rng.choice(["float32", "float32", "float64"])
        groups = {g: ["%s%d" % (g, i) for i in range(rng.randint(0, 2))] for g in ("b", "m", "n", "k")}
        if not groups["k"]:
            groups["k"] = ["k0"]  # a sum: what makes it a contraction
        every = [x for g in groups.values() for x in g]
        sizes = {x.upper(): rng.choice([1, rng.randint(2, 13), rng.randint(2, 13)]) for x in every}
        d = T.Def("main", [], [], [])
        ds = DefState(self, d, sizes, depth=0)
        dims = {"A": groups["b"] + groups["m"] + groups["k"], "B": groups["b"] + groups["n"] + groups["k"]}
        for name in ("A", "B"):
            rng.shuffle(dims[name])
            ds.add_input(name, dt, len(dims[name]), dims=[x.upper() for x in dims[name]])
        reads = [T.acc(n, [T.var(x) for x in dims[n]]) for n in ("A", "B")]
        rng.shuffle(reads)
        out = groups["b"] + groups["m"] + groups["n"]
        rng.shuffle(out)
        d.body.append(T.St("O1", out, rng.choice(["+=!", "+=!", "+="]), T.bin_("*", reads[0], reads[1])))
        d.outputs.append(T.Out("O1"))
        ds.tensors["O1"] = TensorInfo("O1", "out", dt, [sizes[x.upper()] for x in out], [T.var(x.upper()) for x in out])
        ds.tame = False  # set where a statement reads a sum: its overflow is not always seen at the output
        if rng.random() < 0.4:
            self._contraction_epilogue(ds, "O1", out, dt, "E1")
        if out and rng.random() < 0.3:  # a second product reading the first's result
            ds.tame = True
            summed = rng.sample(out, rng.randint(1, len(out)))
            sizes["P0"] = rng.choice([1, rng.randint(2, 13)])
            cdims = summed + ["p0"]
            rng.shuffle(cdims)
            ds.add_input("C", dt, len(cdims), dims=[x.upper() for x in cdims])
            out2 = [x for x in out if x not in summed] + ["p0"]
            rng.shuffle(out2)
            pair = [T.acc("O1", [T.var(x) for x in out]), T.acc("C", [T.var(x) for x in cdims])]
            rng.shuffle(pair)
            d.body.append(T.St("O2", out2, "+=!", T.bin_("*", pair[0], pair[1])))
            d.outputs.append(T.Out("O2"))
            ds.tensors["O2"] = TensorInfo("O2", "out", dt, [sizes[x.upper()] for x in out2],
                                          [T.var(x.upper()) for x in out2])
            if rng.random() < 0.4:
                self._contraction_epilogue(ds, "O2", out2, dt, "E2")
        return self._single_statement_case(ds, 0.5, "cpu.contract", ["0", "1"])

    def _contraction_epilogue(self, ds, name, out, dt, extra):
        """A pointwise statement after a product (the route's epilogue): O's value with a bias-like
        input `extra` over some of O's indices, a constant, + - * /, fmax, fmin, max, min or a
        negation, one or two statements."""
        rng = self.rng
        ds.tame = True
        some = [x for x in out if rng.random() < 0.5]
        rng.shuffle(some)
        ds.add_input(extra, dt, len(some), dims=[x.upper() for x in some])
        for _ in range(rng.choice([1, 1, 2])):
            o = T.acc(name, [T.var(x) for x in out])
            e = T.acc(extra, [T.var(x) for x in some])
            c = T.flit(rng.choice(["0.5", "2.0", "-0.25", "0.0"]))
            rhs = rng.choice([
                lambda: T.call("fmax", T.bin_("+", o, e), T.flit("0.0")),
                lambda: T.bin_("-", T.bin_("*", o, c), e),
                lambda: T.call(rng.choice(["max", "min", "fmin"]), o, e),
                lambda: T.bin_("/", T.un("-", o), T.flit("2.0")),
                lambda: T.bin_("+", o, T.bin_("*", e, c)),
            ])()
            ds.d.body.append(T.St(name, out, "=", rhs))

    def _convolution_case(self):
        """O1(n, m, h, w) +=! I(n, c, h + kh, w + kw) * Wt(m, c, kh, kw), the batch dimension n
        or not, rows wide enough that cpu.flatten's auto choice flattens some (src/backends/cpu/
        flatten_rows.h); cpu.flatten forced to 0 or 1 in half the cases."""
        rng = self.rng
        dt = rng.choice(["float32", "float32", "float64", "float16"])
        batch = rng.random() < 0.5
        sizes = {"C": rng.randint(1, 4), "M": rng.randint(1, 5), "KH": rng.randint(1, 3), "KW": rng.randint(1, 4)}
        sizes["H"] = sizes["KH"] + rng.randint(0, 6)
        sizes["W"] = sizes["KW"] + rng.choice([rng.randint(0, 5), rng.randint(15, 40)])
        if batch:
            sizes["N"] = rng.randint(1, 3)
        d = T.Def("main", [], [], [])
        ds = DefState(self, d, sizes, depth=0)
        lead = ["N"] if batch else []
        ds.add_input("A", dt, len(lead) + 3, dims=lead + ["C", "H", "W"])
        ds.add_input("B", dt, 4, dims=["M", "C", "KH", "KW"])
        n = [T.var("n")] if batch else []
        image = T.acc("A", n + [T.var("c"), T.bin_("+", T.var("h"), T.var("kh")), T.bin_("+", T.var("w"), T.var("kw"))])
        weights = T.acc("B", [T.var("m"), T.var("c"), T.var("kh"), T.var("kw")])
        reads = [image, weights]
        rng.shuffle(reads)
        d.body.append(T.St("O1", (["n"] if batch else []) + ["m", "h", "w"], rng.choice(["+=!", "+=!", "max=!"]),
                           T.bin_("*", reads[0], reads[1])))
        d.outputs.append(T.Out("O1"))
        one = T.lit(1)
        out = [sizes["M"], sizes["H"] - sizes["KH"] + 1, sizes["W"] - sizes["KW"] + 1]
        exprs = [T.var("M"), T.bin_("+", T.bin_("-", T.var("H"), T.var("KH")), one),
                 T.bin_("+", T.bin_("-", T.var("W"), T.var("KW")), one)]
        if batch:
            out, exprs = [sizes["N"]] + out, [T.var("N")] + exprs
        ds.tensors["O1"] = TensorInfo("O1", "out", dt, out, exprs)
        return self._single_statement_case(ds, 0.5, "cpu.flatten", ["0", "1"])

    def _single_statement_case(self, ds, chance, knob, values):
        """The case of a generated one-statement def, with `knob` set to one of `values` in
        `chance` of the cases (when knobs are on)."""
        self.prog.defs.append(ds.d)
        try:
            model = Analyzer(self.prog, ds.d, ds.input_shapes()).run_typed(ds.input_types())
        except ModelReject:
            return None
        case = self._finish(ds, model)
        if self.on("knobs") and self.rng.random() < chance:
            case["options"][knob] = self.rng.choice(values)
        return case

    def _entry_inputs(self, ds):
        rng = self.rng
        n = rng.randint(1, 4)
        theme = self.dtype()
        for name in DATA_NAMES[:n]:
            dt = theme if rng.random() < 0.6 else self.dtype()
            rank = rng.choices([0, 1, 2, 3], [0.1, 0.35, 0.4, 0.15])[0]
            ds.add_input(name, dt, rank)
        declared = ds.d.sizes()
        for s in list(ds.sizes):
            if s not in declared:
                del ds.sizes[s]
        if self.on("gather") and rng.random() < 0.3:
            dt = rng.choice(["int32", "int32", "int64", "int8", "uint8", "int16", "uint16",
                             "uint32", "uint64"])
            ds.add_input("I", dt, rng.choice([1, 1, 2]), index=True)

    def _prune_defs(self):
        used = {"main"}
        changed = True
        while changed:
            changed = False
            for d in self.prog.defs:
                if d.name in used:
                    for s in d.body:
                        if s.is_call and s.callee not in used:
                            used.add(s.callee)
                            changed = True
        self.prog.defs = [d for d in self.prog.defs if d.name in used]

    # -- inputs, outputs, options ---------------------------------------------------------------
    def _finish(self, ds, model):
        rng = self.rng
        d = ds.d
        has_minmax = any(n.k == "call" and n.val in ("min", "max", "fmin", "fmax")
                         for dd in self.prog.defs for s in dd.body for e in s.exprs() for n in e.walk()) \
            or any(not s.is_call and s.op.startswith(("min", "max")) for dd in self.prog.defs for s in dd.body)
        oob = self.on("oob-gather") and rng.random() < 0.25
        inputs = []
        for p in d.inputs:
            ti = ds.tensors[p.name]
            if ti.is_index:
                data = self._index_data(ti, model, oob)
            else:
                data = make_data(rng, ti.dtype, ti.extents, self, no_nan=has_minmax and not self.on("minmax-nan"),
                                 tame=getattr(ds, "tame", False))
            inputs.append(self._input_spec(p.name, ti.dtype, data))
        outputs = [{"layout": self._out_layout()} for _ in d.outputs]
        uses_gather = bool(self.gathers) or self.wild_gather
        safe = not self.wild_gather and not (oob and uses_gather)
        options = {"checked": "1"}
        if safe and self.on("checked0") and rng.random() < 0.3:
            options["checked"] = "0"
        if self.on("knobs") and rng.random() < 0.2:
            options.update(random_knobs(rng))
            # A tile a contraction's type does not have is an error: float16 and bfloat16 take the
            # tensor cores' tiles.
            if "cuda.gemm_tile" in options and any(ds.tensors[p.name].dtype in ("float16", "bfloat16") for p in d.inputs):
                options["cuda.gemm_tile"] = rng.choice(HALF_TILES)
        return {
            "prog": self.prog,
            "inputs": inputs,
            "outputs": outputs,
            "out_seed": rng.randrange(1 << 30),
            "options": options,
            "red_len": model.red_len,
            "flags": {"oob_gather": bool(oob and uses_gather), "wild_gather": self.wild_gather},
        }

    def _index_data(self, ti, model, oob):
        rng = self.rng
        lo, hi = 0, 4
        targets = [g for g in self.gathers if g.index == ti.name]
        if targets:
            los, his = [], []
            for g in targets:
                ext = model.extents[g.target][g.dim]
                los.append(-g.offset)
                his.append(ext - g.offset)
            lo, hi = max(los), min(his)
        shape = ti.extents
        if hi > lo:
            data = np.array([rng.randrange(lo, hi) for _ in range(int(np.prod(shape)))], dtype=object)
        else:
            data = np.array([0] * int(np.prod(shape)), dtype=object)
        info = T.int_range(ti.dtype)
        if oob and data.size:
            bad = [lo - 1, hi, hi + 1, info[1], info[0], 2 ** 31 - 1, -2 ** 31, 2 ** 40, -(2 ** 62)]
            for _ in range(rng.randint(1, max(1, data.size // 3))):
                data[rng.randrange(data.size)] = rng.choice(bad)
        data = np.array([min(max(int(x), info[0]), info[1]) for x in data.reshape(-1)],
                        dtype=object).reshape(shape)
        return data.astype(np.dtype(ti.dtype))

    def _input_spec(self, name, dtype, data):
        rng = self.rng
        as_bool = False
        if dtype == "bool" and self.on("bool-bytes") and rng.random() < 0.35 and data.size:
            raw = data.astype(np.uint8)
            for _ in range(rng.randint(1, data.size)):
                raw.reshape(-1)[rng.randrange(data.size)] = rng.choice([2, 3, 128, 255, 0x10])
            data, as_bool = raw, True
        layout = self._in_layout(data) if self.on("layouts") else {"kind": "contig"}
        if layout["kind"] == "broadcast":
            data = broadcast_data(data, layout["dims"])
        return {"name": name, "data": data, "as_bool": as_bool, "layout": layout}

    def _in_layout(self, data):
        rng = self.rng
        if data.ndim == 0 and rng.random() < 0.3:
            return {"kind": "offset", "offset": rng.randint(1, 5)}
        if data.ndim == 0 or data.size == 0:
            return {"kind": "contig"}
        kinds = ["contig", "explicit", "fortran", "strided", "offset"]
        weights = [0.55, 0.05, 0.1, 0.15, 0.1]
        if data.ndim >= 2:
            kinds.append("transposed")
            weights.append(0.08)
        kinds.append("broadcast")
        weights.append(0.05)
        kind = rng.choices(kinds, weights)[0]
        if kind == "strided":
            return {"kind": kind, "steps": [rng.choice([1, 2, 3]) for _ in range(data.ndim)],
                    "starts": [rng.choice([0, 1]) for _ in range(data.ndim)]}
        if kind == "offset":
            return {"kind": kind, "offset": rng.randint(1, 5)}
        if kind == "broadcast":
            dims = [i for i in range(data.ndim) if rng.random() < 0.5] or [0]
            return {"kind": kind, "dims": dims}
        return {"kind": kind}

    def _out_layout(self):
        rng = self.rng
        if not self.on("layouts"):
            return {"kind": "contig"}
        kind = rng.choices(["contig", "fortran", "sliced", "offset"], [0.7, 0.1, 0.1, 0.1])[0]
        if kind == "offset":
            return {"kind": kind, "offset": rng.randint(1, 5)}
        return {"kind": kind}


def random_knobs(rng):
    knobs = {}
    if rng.random() < 0.5:
        knobs["cpu.vectorize"] = rng.choice(["1", "4", "8", "16"])
    if rng.random() < 0.4:
        knobs["cpu.tile"] = rng.choice(["8x2", "16x4", "4x4", "32x8", "1x1", "48x64", "16x40"])
    if rng.random() < 0.3:
        knobs["cpu.unroll"] = rng.choice(["1", "2", "4", "6", "12"])
    if rng.random() < 0.3:
        knobs["cpu.parallel"] = rng.choice(["outer", "none"])
    if rng.random() < 0.3:
        knobs["cpu.inline"] = rng.choice(["0", "1"])
    if rng.random() < 0.3:
        knobs["threads"] = rng.choice(["1", "2", "3"])
    if rng.random() < 0.2:
        knobs["cpu.pack"] = "0"
    if rng.random() < 0.2:
        knobs["cpu.fuse"] = "0"
    if rng.random() < 0.3:
        knobs["cpu.rows"] = rng.choice(["0", "1", "3", "16"])
    if rng.random() < 0.2:
        knobs["cpu.kblock"] = rng.choice(["0", "1", "3", "64"])
    if rng.random() < 0.3:
        knobs["cpu.panel"] = rng.choice(["none", "streamed", "broadcast", "both"])
    if rng.random() < 0.2:
        knobs["cpu.blas"] = "1"
    if rng.random() < 0.2:
        knobs["cpu.fma"] = "0"
    if rng.random() < 0.2:
        knobs["cpu.flatten"] = rng.choice(["0", "1"])
    if rng.random() < 0.2:
        knobs["cpu.transpose"] = rng.choice(["0", "1"])
    for key, chance, values in CUDA_KNOBS:
        if rng.random() < chance:
            knobs[key] = values[0] if len(values) == 1 else rng.choice(values)  # one value: no draw
    # The row route forced runs whole warps a row and blockDim.y rows (a block it cannot run is an
    # error then; under auto such a block leaves the def to isl's schedule).
    if knobs.get("cuda.rowwise") == "1" and "cuda.block" in knobs:
        knobs["cuda.block"] = rng.choice(ROW_BLOCKS)
    return knobs


# The cuda backend's knobs (ignored by the others), each drawn with its chance, in this order:
# register tiles, tiles, blocks, shared memory, fused multiply-adds, unrolling, fusion, and the
# contraction route's: off, its tiles, its pipeline's depth, its split sums; the row route forced
# (on every row-wise program, rows of any length).
CUDA_KNOBS = [
    ("cuda.regtile", 0.4, ["1", "2", "4x4", "8x8", "2x8", "3x2", "8"]),
    ("cuda.tile", 0.3, ["8", "16x16", "64x8x4", "4x8x32", "32x64", "1x64"]),
    ("cuda.block", 0.3, ["32", "8x8", "5x3", "16x4x2"]),
    ("cuda.shared", 0.2, ["0"]),
    ("cuda.fma", 0.2, ["0"]),
    ("cuda.unroll", 0.2, ["4", "8"]),
    ("cuda.fusion", 0.2, ["min", "preserve3"]),
    ("cuda.contract", 0.25, ["0"]),
    ("cuda.gemm_tile", 0.4, ["128x64x8", "64x64x8", "32x32x8", "8x256x8", "4x256x8"]),  # float and double's (HALF_TILES)
    ("cuda.stages", 0.3, ["2", "4"]),
    ("cuda.split_k", 0.3, ["2", "3"]),
    ("cuda.gemm_blocks", 0.2, ["2"]),
    ("cuda.rowwise", 0.3, ["1"]),
]
HALF_TILES = ["128x128x32", "128x128x16", "64x64x16"]  # the tensor cores' tiles (float16, bfloat16)
ROW_BLOCKS = ["32", "64x2", "96", "32x5"]


# ---- input data -------------------------------------------------------------------------------

def float_specials(dtype):
    fi = np.finfo(np.float32 if dtype == "bfloat16" else np.dtype(dtype))  # bfloat16: float32's, rounded
    sub = float(fi.smallest_subnormal) if hasattr(fi, "smallest_subnormal") else float(fi.tiny) * fi.eps
    return [np.nan, np.inf, -np.inf, -0.0, float(fi.max), -float(fi.max), float(fi.tiny), sub,
            -sub, 65504.0, 1e-8, 1e20, -1e20, 0.1, 1e30, 3.0e38]


def int_specials(dtype):
    lo, hi = T.int_range(dtype)
    bits = T.BITS[dtype]
    vals = [lo, hi, lo + 1, hi - 1, 0, 1, 1 << (bits - 2)]
    if lo < 0:
        vals += [-1, -2]
    return vals


def make_data(rng, dtype, shape, gen, no_nan=False, tame=False):
    """Mostly small exact values; sometimes special values / type edges. tame: no finite value
    so large that a sum of products of such values overflows in one order (or with fused
    multiply-adds) and not in another: where a later statement could clamp the difference to
    a finite one (fmax(O, 0) of inf and of NaN), it would not be a documented difference."""
    n = int(np.prod(shape)) if shape else 1
    kind = T.KIND[dtype]
    if kind == "b":
        vals = [rng.randint(0, 1) for _ in range(n)]
        return np.array(vals, dtype=np.bool_).reshape(shape)
    if kind == "f":
        vals = [rng.choice([-4, -3, -2, -1, 0, 1, 2, 3, 4]) * rng.choice([1, 1, 1, 0.5, 0.25])
                for _ in range(n)]
        if n and gen.on("specials") and rng.random() < 0.3:
            sp = [x for x in float_specials(dtype) if not (np.isnan(x) and (no_nan or not gen.on("nan")))
                  and not (tame and np.isfinite(x) and abs(x) > 65504.0)]
            for _ in range(rng.randint(1, max(1, n // 3))):
                vals[rng.randrange(n)] = rng.choice(sp)
        with np.errstate(over="ignore"):
            if dtype == "bfloat16":
                return tclib.bf16(np.array(vals, dtype=np.float64).astype(np.float32)).reshape(shape)
            return np.array(vals, dtype=np.float64).astype(np.dtype(dtype)).reshape(shape)
    lo, hi = (0, 9) if kind == "u" else (-5, 5)
    vals = [rng.randint(lo, hi) for _ in range(n)]
    if n and gen.on("int-overflow") and rng.random() < 0.3:
        sp = int_specials(dtype)
        for _ in range(rng.randint(1, max(1, n // 3))):
            vals[rng.randrange(n)] = rng.choice(sp)
    lo_t, hi_t = T.int_range(dtype)
    vals = [min(max(v, lo_t), hi_t) for v in vals]
    return np.array(vals, dtype=object).astype(np.dtype(dtype)).reshape(shape)


def broadcast_data(data, dims):
    """data made constant along dims (so that a stride-0 view of it holds the same values)."""
    idx = tuple(slice(0, 1) if i in dims else slice(None) for i in range(data.ndim))
    return np.ascontiguousarray(np.broadcast_to(data[idx], data.shape))


# ---- one def --------------------------------------------------------------------------------------

class DefState:
    """A def being generated: its tensors (with concrete extents from the model) and body."""

    def __init__(self, gen, d, sizes, depth):
        self.gen, self.d, self.sizes, self.depth = gen, d, sizes, depth
        self.rng = gen.rng
        self.tensors = {}
        self.counter = 0

    # -- tensors --------------------------------------------------------------------------------
    def add_input(self, name, dtype, rank, index=False, dims=None):
        rng = self.rng
        if dims is None:
            dims = []
            for _ in range(rank):
                if rng.random() < 0.08 or not self.sizes:
                    dims.append(size_value(rng))
                else:
                    dims.append(rng.choice(sorted(self.sizes)))
        extents = [x if isinstance(x, int) else self.sizes[x] for x in dims]
        exprs = [T.lit(x) if isinstance(x, int) else T.var(x) for x in dims]
        p = T.Param(name, spell(rng, dtype), list(dims) if rank or rng.random() < 0.3 else None)
        self.d.inputs.append(p)
        ti = TensorInfo(name, "in", dtype, extents, exprs)
        ti.is_index = index
        self.tensors[name] = ti
        return ti

    def input_shapes(self):
        return {p.name: tuple(self.tensors[p.name].extents) for p in self.d.inputs}

    def input_types(self):
        return {p.name: p.dtype for p in self.d.inputs}

    def readable(self, exclude=None):
        return [t for t in self.tensors.values()
                if t.extents is not None and t.name != exclude]

    def fresh_tensor(self, role):
        self.counter += 1
        return ("O%d" if role == "out" else "t%d") % self.counter

    # -- the body -------------------------------------------------------------------------------
    def fill(self, n_stmts):
        for _ in range(n_stmts):
            self.add_statement()
        if not any(s for s in self.d.body):
            return False
        if not self.d.outputs:
            last = self.d.body[-1]
            name = last.outs[0] if last.is_call else last.lhs
            self.d.outputs.append(T.Out(name))
            self.tensors[name].role = "out"
        if not self.gen.on("dead-temps"):
            self.make_temps_live()
        self.maybe_annotate()
        return self.retype()

    def make_temps_live(self):
        """Temporaries that no statement reads become outputs (so nothing is dead code)."""
        read = set()
        for s in self.d.body:
            read |= T.reads_of(s)
        outs = {o.name for o in self.d.outputs}
        for s in self.d.body:
            for name in (s.outs if s.is_call else [s.lhs]):
                if name not in read and name not in outs:
                    self.d.outputs.append(T.Out(name))
                    self.tensors[name].role = "out"
                    outs.add(name)

    def add_statement(self):
        for _ in range(8):
            snapshot = self.snapshot()
            if self.gen.on("calls") and self.depth < 2 and self.rng.random() < 0.12:
                ok = self.add_call()
            else:
                ok = StmtGen(self).build() and self.retype()
                if ok and self.rng.random() < 0.15:
                    add_let(self.rng, self.d.body[-1], set(self.tensors))
            if ok and self.retype() and self.remodel():
                return True
            self.restore(snapshot)
        return False

    def snapshot(self):
        return ([s.copy() for s in self.d.body], [T.Out(o.name, o.annotation) for o in self.d.outputs],
                {k: (t.dtype, list(t.extents) if t.extents is not None else None, t.frozen, t.role)
                 for k, t in self.tensors.items()}, len(self.gen.gathers), self.gen.wild_gather,
                list(self.gen.prog.defs))

    def restore(self, snap):
        body, outs, tens, ng, wild, defs = snap
        self.d.body, self.d.outputs = body, outs
        for k in list(self.tensors):
            if k not in tens:
                del self.tensors[k]
        for k, (dt, ext, fr, role) in tens.items():
            t = self.tensors[k]
            t.dtype, t.extents, t.frozen, t.role = dt, ext, fr, role
        del self.gen.gathers[ng:]
        self.gen.wild_gather = wild
        self.gen.prog.defs = defs

    def retype(self):
        """Types with literal repair; bool tensors reduced with += / *= get an int32 cast."""
        for _ in range(4):
            try:
                types = T.type_def(self.d, self.input_types(), self.callee_types(), repair=True)
            except T.TypeReject as e:
                if "bool reduced" not in str(e):
                    return False
                for s in self.d.body:
                    if not s.is_call and s.op.rstrip("!") in ("+=", "*="):
                        s.rhs = T.call("int32", s.rhs)
                continue
            if not self.gen.on("int-div"):
                _drop_int_div(self.d)
            if not self.gen.on("float-mod"):
                _drop_float_mod(self.d)
            for name, t in types.items():
                if name in self.tensors:
                    self.tensors[name].dtype = t
            return True
        return False

    def callee_types(self):
        return callee_types(self.gen.prog, self.d)

    def remodel(self):
        try:
            m = Analyzer(self.gen.prog, self.d, self.input_shapes()).run_typed(self.input_types())
        except (ModelReject, T.TypeReject):
            return False
        for name, ext in m.extents.items():
            if name in self.tensors:
                t = self.tensors[name]
                t.extents = list(ext)
                if t.dim_exprs is None or len(t.dim_exprs) != len(ext):
                    t.dim_exprs = [T.dim(name, i) for i in range(len(ext))]
        return True

    def add_call(self):
        rng = self.rng
        cands = [t for t in self.readable() if not t.is_index or rng.random() < 0.3]
        if not cands:
            return False
        args = rng.sample(cands, min(len(cands), rng.randint(1, 2)))
        callee = self.reuse_callee(args) if rng.random() < 0.3 else None
        if callee is None:
            callee = self.new_callee(args)
            if callee is None:
                return False
        n_out = len(callee.outputs)
        outs = []
        for _ in range(n_out):
            role = "out" if rng.random() < 0.5 else "tmp"
            name = self.fresh_tensor(role)
            self.tensors[name] = TensorInfo(name, role, "float32", None, None)
            if role == "out":
                self.d.outputs.append(T.Out(name))
            outs.append(name)
        for a in args:
            a.frozen = True
        self.d.body.append(T.Call(outs, callee.name, [a.name for a in args]))
        for name in outs:
            t = self.tensors[name]
            t.frozen = True
            t.extents = None
        return True  # extents and dim expressions arrive with the model

    def reuse_callee(self, args):
        for d in self.gen.prog.defs:
            if d.name == "main" or len(d.inputs) != len(args) or calls(self.gen.prog, d, self.d.name):
                continue
            if all(p.dtype == a.dtype and p.rank == a.rank for p, a in zip(d.inputs, args)):
                return d
        return None

    def new_callee(self, args):
        rng = self.rng
        self.gen.n_callees += 1
        name = "f%d" % self.gen.n_callees
        d = T.Def(name, [], [], [])
        sizes = {}
        sub = DefState(self.gen, d, sizes, self.depth + 1)
        n_size = 0
        for i, a in enumerate(args):
            dims = []
            for ext in a.extents:
                shared = [s for s, v in sizes.items() if v == ext]
                if shared and rng.random() < 0.5:
                    dims.append(rng.choice(shared))
                elif rng.random() < 0.1:
                    dims.append(ext)
                else:
                    n_size += 1
                    sname = "S%d" % n_size
                    sizes[sname] = ext
                    dims.append(sname)
            sub.add_input("X%d" % i, a.dtype, a.rank, dims=dims)
            if a.rank == 0:
                sub.d.inputs[-1].dims = None
        self.gen.prog.defs.insert(0, d)
        if not sub.fill(rng.randint(1, 3)) or not sub.remodel():
            self.gen.prog.defs.remove(d)
            return None
        if len(d.outputs) > 1 or rng.random() < 0.3:
            extra = [t for t in sub.tensors.values() if t.role == "tmp" and t.extents is not None]
            if extra and len(d.outputs) < 3:
                d.outputs.append(T.Out(extra[0].name))
        return d

    def maybe_annotate(self):
        rng = self.rng
        for o in self.d.outputs:
            t = self.tensors[o.name]
            if t.frozen or t.extents is None or rng.random() > 0.08:
                continue
            dims = []
            for ext in t.extents:
                names = [s for s, v in self.sizes.items() if v == ext]
                dims.append(rng.choice(names) if names and rng.random() < 0.7 else ext)
            o.annotation = (spell(rng, self.gen.dtype()), dims)


def calls(prog, d, name):
    """True if def d is name or calls it, directly or not."""
    if d.name == name:
        return True
    return any(s.is_call and calls(prog, prog.get(s.callee), name) for s in d.body)


def callee_types(prog, d):
    """Output dtypes of every def that d calls (for typing d)."""
    out = {}
    for s in d.body:
        if s.is_call:
            c = prog.get(s.callee)
            t = T.type_def(c, {p.name: p.dtype for p in c.inputs}, callee_types(prog, c), repair=False)
            out[s.callee] = [t[o.name] for o in c.outputs]
    return out


def add_let(rng, st, taken):
    """Moves a typed, non-weak, non-root subexpression of st into a 'where x = e' let."""
    if st.is_call:
        return
    cands = [n for n in st.rhs.walk() if n.k in ("bin", "call", "un") and n is not st.rhs
             and n.ty is not None and not n.ty[1]]
    if not cands:
        return
    n = rng.choice(cands)
    name = "x%d" % rng.randint(0, 9)
    if name in taken or any(w[0] == "let" and w[1] == name for w in st.where):
        return
    value = n.copy()
    n.k, n.val, n.args, n.op = "var", name, [], None
    st.where.append(("let", name, value))


def _drop_int_div(d):
    for s in d.body:
        for e in s.exprs():
            for n in e.walk():
                if n.k == "bin" and n.op in ("/", "%") and n.ty and T.is_int(n.ty[0]):
                    n.op = "+"


def _drop_float_mod(d):
    for s in d.body:
        for e in s.exprs():
            for n in e.walk():
                if n.k == "bin" and n.op == "%" and n.ty and T.is_float(n.ty[0]):
                    n.op = "-"


# ---- one statement ------------------------------------------------------------------------------

REDUCE_WEIGHTS = [("=", 45), ("+=!", 15), ("+=", 7), ("*=!", 5), ("*=", 3), ("min=!", 7),
                  ("max=!", 7), ("min=", 3), ("max=", 3)]


class StmtGen:
    """Builds one statement into a DefState: lhs, variables (inferred or with where ranges),
    the right-hand side, anchors for unconstrained variables, lets and exists clauses."""

    def __init__(self, ds):
        self.ds, self.gen, self.rng = ds, ds.gen, ds.rng
        self.where = {}        # var -> (lo, hi) concrete, for vars with a where range
        self.where_exprs = {}  # var -> (lo Ex, hi Ex)
        self.anchored = set()

    def build(self):
        rng, ds = self.rng, self.ds
        lhs = self.pick_lhs()
        if lhs is None:
            return False
        self.lhs = lhs
        ops = [o for o, _ in REDUCE_WEIGHTS]
        op = rng.choices(ops, [w for _, w in REDUCE_WEIGHTS])[0]
        if lhs.dtype == "bool" and lhs.extents is not None and op.rstrip("!") in ("+=", "*="):
            op = "max=!" if self.gen.on("bool-reduce") else "="
        self.op = op
        used = set(ds.sizes) | set(ds.tensors)
        names = [v for v in VAR_NAMES if v not in used]
        rank = lhs.rank if lhs.extents is not None else self.new_rank
        self.lhs_vars = names[:rank]
        n_red = 0 if op == "=" else rng.choices([0, 1, 2], [0.2, 0.6, 0.2])[0]
        self.red_vars = names[rank:rank + n_red]
        self.vars = self.lhs_vars + self.red_vars
        for v in self.vars:
            if rng.random() < 0.25:
                self.choose_where(v)
        eg = ExprGen(self)
        rhs = eg.expr(rng.randint(1, 3))
        rhs = self.anchor(rhs, eg)
        if rhs is None:
            return False
        st = T.St(lhs.name, self.lhs_vars, op, rhs, bare=(rank == 0 and rng.random() < 0.5))
        self.add_where(st, rhs)
        self.ds.d.body.append(st)
        return True

    def pick_lhs(self):
        rng, ds = self.rng, self.ds
        existing = [t for t in ds.tensors.values() if t.role in ("out", "tmp") and not t.frozen
                    and t.extents is not None]
        if existing and rng.random() < 0.2:
            return rng.choice(existing)
        role = "out" if rng.random() < 0.6 else "tmp"
        name = ds.fresh_tensor(role)
        self.new_rank = rng.choices([0, 1, 2, 3], [0.15, 0.4, 0.35, 0.1])[0]
        t = TensorInfo(name, role, "float32", None, None)
        ds.tensors[name] = t
        if role == "out":
            ds.d.outputs.append(T.Out(name))
        return t

    def choose_where(self, v):
        """A where range for v: sizes, T.d, literals, min/max, sometimes beyond an extent
        (padding: reads with v then need guards)."""
        rng, ds = self.rng, self.ds
        srcs = [(T.var(n), x) for n, x in ds.sizes.items()]
        for t in ds.readable():
            for i, x in enumerate(t.extents):
                if t.role == "in" or rng.random() < 0.5:
                    srcs.append((T.dim(t.name, i), x))
        if not srcs:
            return
        (e, x) = rng.choice(srcs)
        r = rng.random()
        if r < 0.35:
            lo, hi = (T.lit(0), 0), (e, x)
        elif r < 0.45:
            c = rng.randint(1, 2)
            lo, hi = (T.lit(c), c), (e, x)
        elif r < 0.75 and self.gen.on("guards"):
            c = rng.randint(1, 2)
            lo, hi = (T.lit(0), 0), (T.bin_("+", e, T.lit(c)), x + c)
        elif r < 0.85:
            (e2, x2) = rng.choice(srcs)
            f = rng.choice(["min", "max"])
            lo, hi = (T.lit(0), 0), (T.call(f, e, e2), min(x, x2) if f == "min" else max(x, x2))
        elif r < 0.92 and v not in self.lhs_vars and self.gen.on("guards"):
            c = rng.randint(1, 2)
            lo, hi = (T.lit(-c), -c), (T.bin_("+", e, T.lit(c)), x + c)
        else:
            a = rng.randint(0, 2)
            b = a + rng.randint(0, 3)
            lo, hi = (T.lit(a), a), (T.lit(b), b)
        self.where[v] = (lo[1], hi[1])
        self.where_exprs[v] = (lo[0], hi[0])

    def anchor(self, rhs, eg):
        """Every inferred variable needs an access that constrains it: add one (or a where
        range, or an exists clause) for those the right-hand side left unconstrained."""
        rng = self.rng
        self.exists = []
        constrained = eg.constrained(rhs)
        for v in self.vars:
            if v in self.where or v in constrained:
                continue
            if v in self.red_vars and not any(n.k == "var" and n.val == v for n in rhs.walk()):
                continue
            if v in self.lhs_vars and self.lhs.extents is not None and rng.random() < 0.3:
                continue  # takes the extent other statements give the lhs tensor
            a = eg.anchor_access(v)
            if a is None:
                self.choose_where(v)
                if v not in self.where:
                    return None
                continue
            r = rng.random()
            if r < 0.35:
                self.exists.append(a)
            elif r < 0.7:
                op = rng.choice(["+", "*", "-", "min", "max", "<", "&&"])
                rhs = T.call(op, rhs, a) if op in ("min", "max") else T.bin_(op, rhs, a)
            else:
                rhs = T.bin_(rng.choice(["+", "*"]), a, rhs)
            constrained = eg.constrained(rhs) | {v}
        return rhs

    def add_where(self, st, rhs):
        used = {n.val for e in [rhs] + self.exists for n in e.walk() if n.k == "var"}
        for v in self.vars:
            if v in self.where and (v in used or v in self.lhs_vars):
                st.where.append(("in", v, self.where_exprs[v][0], self.where_exprs[v][1]))
        for e in self.exists:
            st.where.append(("exists", e))
        self.rng.shuffle(st.where)


class ExprGen:
    """Random expressions for one statement."""

    def __init__(self, sg):
        self.sg, self.ds, self.gen, self.rng = sg, sg.ds, sg.gen, sg.rng

    # -- trees ------------------------------------------------------------------------------
    def expr(self, depth):
        rng = self.rng
        if depth <= 0 or rng.random() < 0.2:
            return self.leaf()
        r = rng.random()
        if r < 0.42:
            op = rng.choices(T.BINARY_OPS, [14, 10, 12, 6, 4, 3, 2, 3, 2, 3, 2, 3, 3])[0]
            return T.bin_(op, self.expr(depth - 1), self.expr(depth - 1))
        if r < 0.5:
            return T.un(rng.choice(["-", "-", "!"]), self.expr(depth - 1))
        if r < 0.6:
            return T.tern(self.cond(depth - 1), self.expr(depth - 1), self.expr(depth - 1))
        if r < 0.8:
            return self.builtin(depth - 1)
        if r < 0.9:
            return self.cast(depth - 1)
        return self.access()

    def cond(self, depth):
        rng = self.rng
        if rng.random() < 0.7:
            op = rng.choice(["<", "<=", ">", ">=", "==", "!="])
            return T.bin_(op, self.expr(depth), self.expr(max(0, depth - 1)))
        return self.expr(depth)

    def builtin(self, depth):
        rng = self.rng
        r = rng.random()
        if r < 0.3:
            name = rng.choice(list(T.GENERIC))
        elif r < 0.75:
            name = rng.choice(T.BUILTINS_1)
        elif r < 0.95:
            name = rng.choice(T.BUILTINS_2)
        else:
            name = "fma"
        return T.call(name, *[self.expr(depth) for _ in range(T.ARITY[name])])

    def cast(self, depth):
        dt = self.gen.dtype() if self.rng.random() < 0.8 else "bool"
        return T.call(spell(self.rng, dt), self.expr(depth))

    def leaf(self):
        rng = self.rng
        r = rng.random()
        if r < 0.55:
            return self.access()
        if r < 0.75:
            return self.literal()
        if r < 0.87 and self.sg.vars:
            return T.var(rng.choice(self.sg.vars))
        if r < 0.95 and self.ds.sizes:
            return T.var(rng.choice(sorted(self.ds.sizes)))
        ts = [t for t in self.ds.readable() if t.rank > 0 and (t.role == "in" or t.dim_exprs)]
        if ts:
            t = rng.choice(ts)
            return T.dim(t.name, rng.randrange(t.rank))
        return self.literal()

    def literal(self):
        rng = self.rng
        edges = self.gen.on("specials")
        if rng.random() < 0.55:
            if edges and self.gen.on("int-overflow") and rng.random() < 0.25:
                return T.lit(rng.choice(INT_EDGES + NEG_INT_EDGES))
            return T.lit(rng.randint(-3, 10))
        if edges and rng.random() < 0.25:
            text = rng.choice(EDGE_FLOATS)
        else:
            text = rng.choice(SMALL_FLOATS)
        return T.un("-", T.flit(text)) if rng.random() < 0.2 else T.flit(text)

    # -- accesses ---------------------------------------------------------------------------
    def access(self, want_var=None):
        """A read of a readable tensor (or the lhs element itself); guarded when a subscript
        may leave the tensor (a where range wider than the extent)."""
        rng = self.rng
        sg = self.sg
        if sg.op == "=" and rng.random() < 0.06 and (sg.lhs.role == "out" or sg.lhs.extents is not None):
            return T.acc(sg.lhs.name, [T.var(v) for v in sg.lhs_vars], bare=not sg.lhs_vars)
        ts = [t for t in self.ds.readable(exclude=sg.lhs.name) if not t.is_index or rng.random() < 0.3]
        if not ts:
            return self.literal()
        t = rng.choice(ts)
        if t.rank == 0:
            return T.acc(t.name, [], bare=rng.random() < 0.6)
        subs, risky = [], []
        for d in range(t.rank):
            s, r = self.subscript(t, d, want_var)
            subs.append(s)
            if r:
                risky.append((s, d, r))
        node = T.acc(t.name, subs)
        for s in subs:
            if not T.reads_tensor(s):
                self._constrained = self.constrained_now() | T.free_vars(s, set(sg.vars))
        if not risky:
            return node
        return self.guarded(node, t, risky)

    def anchor_access(self, v):
        ts = [t for t in self.ds.readable(exclude=self.sg.lhs.name) if t.rank > 0]
        if not ts:
            return None
        t = self.rng.choice(ts)
        d = self.rng.randrange(t.rank)
        subs = []
        for i in range(t.rank):
            if i == d:
                subs.append(T.var(v))
            else:
                s, r = self.subscript(t, i, None, plain_only=True)
                if r:
                    return None
                subs.append(s)
        return T.acc(t.name, subs)

    def subscript(self, t, d, want_var, plain_only=False):
        """(subscript, risk) for dimension d of t; risk is None, or (may_be_negative,
        may_reach_extent) for subscripts over where ranges that can leave the tensor."""
        rng = self.rng
        sg = self.sg
        ext, E = t.extents[d], t.dim_exprs[d]
        r = rng.random()
        if not plain_only and r < 0.08 and self.gen.on("gather"):
            g = self.gather(t, d)
            if g is not None:
                return g, None
        if not plain_only and r < 0.14 and ext > 0:
            return (T.lit(rng.randrange(ext)) if rng.random() < 0.6 else
                    T.bin_("-", E.copy(), T.lit(1))), None
        if not sg.vars:
            return T.lit(0) if ext > 0 else T.lit(0), None
        unanchored = [v for v in sg.vars if v not in sg.where and v not in self.constrained_now()]
        v = want_var or (rng.choice(unanchored) if unanchored and rng.random() < 0.7 else rng.choice(sg.vars))
        f = rng.random() if not plain_only else 0
        if v in sg.where and f < 0.65 and rng.random() < 0.5:
            f = 0.7  # a shifted read over a where range: often needs a guard
        if f < 0.65:
            s = T.var(v)
        elif f < 0.75:
            s = T.bin_(rng.choice(["+", "-"]), T.var(v), T.lit(rng.randint(1, 2)))
        elif f < 0.8:
            s = T.bin_("*", T.lit(2), T.var(v))
        elif f < 0.85:
            s = T.bin_("/", T.var(v), T.lit(2))
        elif f < 0.9:
            s = T.bin_("-", T.bin_("-", E.copy(), T.lit(1)), T.var(v))
        else:
            others = [w for w in sg.vars if w != v]
            s = T.bin_("+", T.var(v), T.var(rng.choice(others))) if others else T.var(v)
        return s, self.risk(s, ext)

    def constrained_now(self):
        return getattr(self, "_constrained", set())

    def risk(self, s, ext):
        """Where-range variables only: can s leave [0, ext)? (inferred variables are
        constrained by the access itself)."""
        fv = T.free_vars(s, set(self.sg.vars))
        if not fv or any(v not in self.sg.where for v in fv):
            return None
        env = dict(self.ds.sizes)
        for t in self.ds.readable():
            for i, x in enumerate(t.extents):
                env[("dim", t.name, i)] = x
        lo_bad = hi_bad = False
        fv = sorted(fv)
        for corner in itertools.product(*[(self.sg.where[v][0], self.sg.where[v][1] - 1) for v in fv]):
            env.update(zip(fv, corner))
            try:
                x = T.eval_int(s, env)
            except T.NotEvaluable:
                return None
            lo_bad = lo_bad or x < 0
            hi_bad = hi_bad or x >= ext
        if any(self.sg.where[v][1] <= self.sg.where[v][0] for v in fv):
            return None
        return (lo_bad, hi_bad) if lo_bad or hi_bad else None

    def guarded(self, node, t, risky):
        """node under a guard that makes every risky subscript in range, in one of the forms
        'G ? node : alt', '!(G) ? alt : node', 'G && (node cmp x)', '!(G) || (node cmp x)'."""
        rng = self.rng
        if not self.gen.on("guards"):
            return self.literal()
        conds = []
        for s, d, (lo_bad, hi_bad) in risky:
            E = t.dim_exprs[d]
            if lo_bad:
                conds.append(rng.choice([T.bin_(">=", s.copy(), T.lit(0)),
                                         T.un("!", T.bin_("<", s.copy(), T.lit(0)))]))
            if hi_bad:
                conds.append(rng.choice([T.bin_("<", s.copy(), E.copy()),
                                         T.bin_("<=", s.copy(), T.bin_("-", E.copy(), T.lit(1)))]))
        if rng.random() < 0.2:
            conds.append(self.cond(0))
        rng.shuffle(conds)
        g = T.conj(conds)
        body = node if rng.random() < 0.6 else T.bin_(rng.choice(["+", "*", "-"]), node, self.leaf_safe())
        alt = self.leaf_safe()
        r = rng.random()
        if r < 0.45:
            return T.tern(g, body, alt)
        if r < 0.65:
            return T.tern(T.un("!", g), alt, body)
        cmp = T.bin_(rng.choice(["<", ">", "==", "!="]), body, alt)
        if r < 0.85:
            return T.bin_("&&", g, cmp)
        return T.bin_("||", T.un("!", g), cmp)

    def leaf_safe(self):
        """A leaf that needs no guard: a literal, a variable or a size."""
        rng = self.rng
        if rng.random() < 0.6 or not self.sg.vars:
            return self.literal()
        return T.var(rng.choice(self.sg.vars + sorted(self.ds.sizes)))

    def gather(self, t, d):
        """A data-dependent subscript: I(...) (+/- c), or rarely a cast of another tensor's
        values (a 'wild' gather: index data not chosen, so often out of range)."""
        rng = self.rng
        idx = [x for x in self.ds.readable() if x.is_index and x.name != t.name]
        if idx and rng.random() < 0.95:
            it = rng.choice(idx)
            subs = []
            for i in range(it.rank):
                s, r = self.subscript(it, i, None, plain_only=rng.random() < 0.8)
                if r:
                    return None
                subs.append(s)
            g = T.acc(it.name, subs)
            off = 0
            if rng.random() < 0.2:
                off = rng.choice([1, -1])
                g = T.bin_("+" if off > 0 else "-", g, T.lit(abs(off)))
            self.gen.gathers.append(Gather(it.name, t.name, d, off))
            return g
        if not self.gen.on("oob-gather") or rng.random() < 0.75:
            return None
        src = [x for x in self.ds.readable(exclude=self.sg.lhs.name) if x.name != t.name]
        if not src:
            return None
        x = rng.choice(src)
        subs = []
        for i in range(x.rank):
            s, r = self.subscript(x, i, None, plain_only=True)
            if r:
                return None
            subs.append(s)
        self.gen.wild_gather = True
        return T.call("int32", T.acc(x.name, subs, bare=not subs))

    def constrained(self, e):
        """Variables that appear in some non-data-dependent subscript of e."""
        out = set()
        for n in e.walk():
            if n.k == "acc" and n.val != self.sg.lhs.name:
                for s in n.args:
                    if not T.reads_tensor(s):
                        out |= T.free_vars(s, set(self.sg.vars))
        self._constrained = out
        return out

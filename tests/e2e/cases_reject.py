"""cases_reject.py - TC programs and calls that libtc must reject.

Each case names the stage that must fail, the status, and fragments of the message that make it
useful (the offending tensor / variable / size, 'where' when a where clause is the fix). Source
errors must carry "<def>:<line>:<col>: error:" and a caret line.
"""
import numpy as np

import tclib
from corpus import Reject, F32, F64, rf, ri

SYNTAX = tclib.TC_ERROR_SYNTAX
SEMANTIC = tclib.TC_ERROR_SEMANTIC
SHAPE = tclib.TC_ERROR_SHAPE
INVALID = tclib.TC_ERROR_INVALID_ARGUMENT
RUNTIME = tclib.TC_ERROR_RUNTIME
UNSUPPORTED = tclib.TC_ERROR_UNSUPPORTED

CASES = []


def case(*args, **kw):
    CASES.append(Reject(*args, **kw))


# ============================================================================================
# Syntax errors (tc_define -> TC_ERROR_SYNTAX, located, with a caret)
# ============================================================================================

case("syntax_unclosed_paren", "def bad(float(N) A) -> (O) { O(i) = A(i }", "define", SYNTAX,
     fragments=["')'"], regex=[r"^bad:1:41: error: "], location=True,
     note="reported at the '}' that should have been ')'")

case("syntax_stray_character", "def bad(float(N) A) -> (O) { O(i) = A(i) $ 2 }", "define", SYNTAX,
     fragments=["'$'"], regex=[r"^bad:1:42: error: "], location=True, note="'$' is column 42 (1-based)")

case("syntax_closed_bracket_range",
     "def bad(float(I) B) -> (A) { A(i) +=! B(2*i + k) where k = [0, 1] }", "define", SYNTAX,
     fragments=["ranges are half-open", "'k = [lo, hi['", "'k in lo:hi'"],
     regex=[r"^bad:1:65: error: "], location=True,
     note="`k = [lo, hi]` would include hi; TC ranges never do (the docs write `[lo, hi[`)")

case("semantic_assign_over_unranged_variable",
     "def bad(float(N) A, float(M) B) -> (C) { C(i) = A(i + k) + B(j) where k in 0:2 }", "define", SEMANTIC,
     fragments=["'j' appear only on the right-hand side", "'+=!'"], location=True,
     note="'=' sums over right-hand-side variables only when the where clause ranges every one")

case("syntax_unterminated_def", "def bad(float(N) A) -> (O) {\n  O(i) = A(i)\n", "define", SYNTAX,
     fragments=["'}'"], regex=[r"^bad:\d+:\d+: error: "], location=True,
     note="the error is at the end of the source: the message still needs a (possibly empty) "
          "source line and a caret")

case("syntax_line_and_column", """def f(float(N) A, float(N) B) -> (O) {
  O(i) = A(i)
  O(i) = A(i) * * B(i)
}""", "define", SYNTAX, fragments=["'*'"], regex=[r"^f:3:17: error: "], location=True,
     note="the second '*' on line 3, column 17")

case("syntax_error_in_second_def", """def ok(float(N) A) -> (O) {
  O(i) = A(i)
}
def broken(float(N) A) -> (O) {
  O(i) = A(i) +
}""", "define", SYNTAX, regex=[r"^broken:(5:1[67]|6:1): error: "], location=True,
     note="line/col count from the start of the whole source")

case("syntax_source_name", "def bad(float(N) A) -> (O) { O(i) = A(i }", "define", SYNTAX,
     regex=[r"^mm\.tc:1:41: error: "], location=True, source_name="mm.tc")

case("syntax_outside_def", "xyz", "define", SYNTAX, fragments=["'def'"],
     regex=[r"^<source>:1:1: error: "],
     location=True)

case("syntax_bad_reduction_operator", "def bad(float(M,N) A) -> (O) { O(i) -= A(i,j) }", "define",
     SYNTAX, fragments=["reduction"], regex=[r"^bad:1:37: error: "], location=True)

case("syntax_missing_arrow", "def bad(float(N) A) (O) { O(i) = A(i) }", "define", SYNTAX,
     fragments=["'->'"], regex=[r"^bad:1:21: error: "], location=True)

# ============================================================================================
# Semantic errors at tc_define
# ============================================================================================

case("unknown_function", "def f(float(N) A) -> (O) { O(i) = frobnicate(A(i)) }", "define",
     SEMANTIC, fragments=["'frobnicate'"], regex=[r"^f:1:\d+: error: "], location=True)

case("builtin_wrong_arity_exp", "def f(float(N) A) -> (O) { O(i) = exp(A(i), A(i)) }", "define",
     SEMANTIC, fragments=["'exp'"], regex=[r"\b1\b.*\b2\b"], location=True)

case("builtin_wrong_arity_fmax", "def f(float(N) A) -> (O) { O(i) = fmax(A(i)) }", "define",
     SEMANTIC, fragments=["'fmax'"], regex=[r"\b2\b.*\b1\b"], location=True)

case("undeclared_type", "def f(flaot(N) A) -> (O) { O(i) = A(i) }", "define", SYNTAX,
     fragments=["'flaot'"], regex=[r"^f:1:7: error: "], location=True,
     note="types are part of the grammar: an unknown type is a syntax error")

case("undeclared_output_type", "def f(float(N) A) -> (dubble(N) O) { O(i) = A(i) }", "define",
     SYNTAX, fragments=["'dubble'"], regex=[r"^f:1:23: error: "], location=True)

case("write_input", """def f(float(N) A) -> (O) {
  A(i) = 1.0 where i in 0:N
  O(i) = A(i)
}""", "define", SEMANTIC, fragments=["'A'"], regex=[r"^f:2:3: error: .*\binput\b"],
     location=True)

case("in_place_transpose", """def f(float(N,N) X) -> (a) {
  a(i,j) = X(i,j)
  a(i,j) = a(j,i)
}""", "define", SEMANTIC, fragments=["'a'"], regex=[r"^f:3:\d+: error: "], location=True,
     note="a(j,i) is read while a is being written at other points")

case("reduction_without_operator", "def f(float(M,N) A) -> (O) { O(i) = A(i,j) }", "define",
     SEMANTIC, fragments=["'j'", "reduction"], location=True)

case("unconstrained_index", "def f(float(N) A) -> (O) { O(i,j) = A(i) }", "define", SEMANTIC,
     fragments=["'j'", "where"], location=True)

case("unconstrained_index_literal_rhs", "def f(float(N) A) -> (O) { O(k) = 1.0 }", "define",
     SEMANTIC, fragments=["'k'", "where"], location=True)

case("ambiguous_stencil", "def f(float(N) B) -> (A) { A(i) +=! B(i + k) }", "define", SEMANTIC,
     fragments=["'i'", "'k'", "where"], location=True,
     note="i and k only appear together: no round can resolve either")

case("dynamic_stride", """def subsample(float(I) B, int32(1) S) -> (A) {
  A(i) = B(S(0)*i)
}""", "define", SEMANTIC, fragments=["'i'", "where"], regex=[r"^subsample:2:"], location=True)

case("duplicate_parameter", "def f(float(N) A, float(N) A) -> (O) { O(i) = A(i) }", "define",
     SEMANTIC, fragments=["'A'"], regex=[r"^f:1:28: "], location=True)

case("output_named_like_input", "def f(float(N) A) -> (A) { A(i) = 1.0 where i in 0:N }",
     "define", SEMANTIC, fragments=["'A'"], location=True)

case("duplicate_def_name", """def f(float(N) A) -> (O) { O(i) = A(i) }
def f(float(N) A) -> (O) { O(i) = A(i) * 2 }""", "define", SEMANTIC, fragments=["'f'"],
     regex=[r"^f:2:"], location=True)

case("temporary_read_before_written", """def f(float(N) A) -> (O) {
  O(i) = T(i) + A(i)
  T(i) = A(i)
}""", "define", SEMANTIC, fragments=["'T'"], regex=[r"^f:2:"], location=True)

case("output_never_written", """def f(float(N) A) -> (O, P) {
  O(i) = A(i)
}""", "define", SEMANTIC, fragments=["'P'"], location=True)

case("tensor_access_wrong_arity", "def f(float(N) A) -> (O) { O(i) = A(i, i) }", "define",
     SEMANTIC, fragments=["'A'"], regex=[r"\b1\b.*\b2\b"], location=True)

case("tensor_used_without_indices", "def f(float(N) A) -> (O) { O(i) = A + 1.0 where i in 0:N }",
     "define", SEMANTIC, fragments=["'A'"], location=True)

case("lhs_rank_changes", """def f(float(N) A) -> (O) {
  O(i) = A(i)
  O(i,j) = A(i) * A(j)
}""", "define", SEMANTIC, fragments=["'O'"], regex=[r"^f:3:"], location=True)

case("lhs_repeated_index", "def f(float(N) A) -> (O) { O(i,i) = A(i) }", "define", SEMANTIC,
     fragments=["'i'"], location=True)

case("where_bound_uses_index", "def f(float(N) A) -> (O) { O(i,j) = A(i) where j in 0:i }",
     "define", SEMANTIC, fragments=["'i'"], regex=[r"^f:1:55: "], location=True)

case("float_used_as_index", "def f(float(N) A, float(N) F) -> (O) { O(i) = A(F(i)) }", "define",
     SEMANTIC, fragments=["'A'", "integer", "float32"], location=True)

case("dimension_select_out_of_range",
     "def f(float(N) A) -> (O) { O(i) = A(i) where i in 0:A.3 }", "define", SEMANTIC,
     fragments=["A.3"], location=True)

case("size_name_called_as_tensor", "def f(float(N) A) -> (O) { O(i) = N(i) + A(i) }", "define",
     SEMANTIC, fragments=["'N'"], location=True)

case("null_source", None, "define", INVALID, fragments=["source"])

# ============================================================================================
# Shapes and arguments at tc_infer_outputs and tc_compile
# ============================================================================================

_MM = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(m,n) +=! A(m,k) * B(k,n) }"

case("rank_mismatch", _MM, "shape", SHAPE, fragments=["'A'", "rank"], regex=[r"\b2\b.*\b1\b"],
     inputs=lambda r: [rf(r, 5), rf(r, 5, 3)], note="A must be rank 2, got rank 1")

case("rank_mismatch_scalar", "def f(float a, float(N) X) -> (Y) { Y(i) = a * X(i) }", "shape",
     SHAPE, fragments=["'a'", "rank"], regex=[r"\b0\b.*\b1\b"], inputs=lambda r: [rf(r, 1), rf(r, 4)])

case("dtype_mismatch", _MM, "shape", SHAPE, fragments=["'B'", "float32", "float64"],
     inputs=lambda r: [rf(r, 2, 3), rf(r, 3, 4, dtype=F64)])

case("dtype_mismatch_int", "def f(int32(N) I, float(M) X) -> (Y) { Y(i) = X(I(i)) }", "shape",
     SHAPE, fragments=["'I'", "int32", "int64"],
     inputs=lambda r: [ri(r, 3, lo=0, hi=4, dtype=np.int64), rf(r, 4)])

case("inconsistent_size_name", _MM, "shape", SHAPE, fragments=["'K'", "'B'"], regex=[r"\b4\b.*\b5\b"],
     inputs=lambda r: [rf(r, 3, 4), rf(r, 5, 2)], note="K is 4 in A and 5 in B")

case("literal_dim_mismatch", "def f(float(3) A) -> (O) { O(i) = A(i) }", "shape", SHAPE,
     fragments=["'A'"], regex=[r"\b3\b.*\b4\b"], inputs=lambda r: [rf(r, 4)])

case("too_few_inputs", _MM, "shape", INVALID, fragments=["input"], regex=[r"\b2\b.*\b1\b"],
     inputs=lambda r: [rf(r, 2, 3)])

case("too_many_inputs", _MM, "shape", INVALID, fragments=["input"], regex=[r"\b2\b.*\b3\b"],
     inputs=lambda r: [rf(r, 2, 3), rf(r, 3, 4), rf(r, 4)])

_TWO_DEFS = """def first(float(N) A) -> (O) { O(i) = A(i) }
def second(float(N) A) -> (O) { O(i) = A(i) * 2 }"""

case("entry_null_with_several_defs", _TWO_DEFS, "shape", INVALID, fragments=["entry", "first", "second"],
     inputs=lambda r: [rf(r, 3)])

case("unknown_entry", _TWO_DEFS, "shape", INVALID, fragments=["'third'"], entry="third",
     inputs=lambda r: [rf(r, 3)])

case("precondition_out_of_bounds", """def pre(float(I) B, float(L) C, float(J) D) -> (A) {
  A(i,j) = B(i) * C(i + j) * D(j)
}""", "shape", SHAPE, fragments=["C(i + j)", "'C'"], regex=[r"\b0\.\.5\b.*\b5\b"],
     location=True, inputs=lambda r: [rf(r, 3), rf(r, 5), rf(r, 4)],
     note="i in 0:3, j in 0:4 read C(0..5): C needs 6 elements, has 5")

# ============================================================================================
# Options
# ============================================================================================

case("option_unknown_key", None, "options", INVALID, fragments=["'frobnicate'"],
     options={"frobnicate": "1"})

case("option_unknown_backend", None, "options", INVALID, fragments=["'backend'", "'opencl'"],
     options={"backend": "opencl"})

case("option_bad_checked_value", None, "options", INVALID, fragments=["'checked'", "'maybe'"],
     options={"checked": "maybe"})

# ============================================================================================
# tc_run: bad tensors, out-of-range gathers
# ============================================================================================

_GATHER = "def gather(float(N) X, int32(A,B) I) -> (Z) { Z(i,j) = X(I(i,j)) }"


def _gather_inputs(bad):
    def inputs(r):
        idx = ri(r, 2, 3, lo=0, hi=5)
        idx[1, 2] = bad
        return [rf(r, 5), idx]
    return inputs


def _outs(info):
    return [np.zeros(s, d) for d, s in info]


case("gather_out_of_range", _GATHER, "run", RUNTIME, fragments=["'X'"], regex=[r"\b5\b"],
     inputs=_gather_inputs(5), run_args=lambda r, ins, info: (ins, _outs(info)),
     options={"checked": "1"},
     note="I(1,2) = 5 indexes X(5), X has 5 elements")

case("gather_negative_index", _GATHER, "run", RUNTIME, fragments=["'X'", "-1"],
     inputs=_gather_inputs(-1), run_args=lambda r, ins, info: (ins, _outs(info)),
     options={"checked": "1"})



def _two_bad_in_one_vector(r):
    idx = ri(r, 4, 40, lo=0, hi=5)
    idx[1, 5] = 7
    idx[1, 9] = -3
    return [rf(r, 5), idx]


case("gather_first_bad_lane_of_a_vector", _GATHER, "run", RUNTIME,
     fragments=["'X'", "index 7", "i=1, j=5"], inputs=_two_bad_in_one_vector,
     run_args=lambda r, ins, info: (ins, _outs(info)), options={"checked": "1"},
     note="I(1,5) = 7 and I(1,9) = -3 fall in one vector of the cpu backend's check (16 lanes "
          "of j): the one branch on all lanes fails, and the per-lane path reports the first")

_ADD = "def add(float(N) A, float(N) B) -> (O) { O(i) = A(i) + B(i) }"


def _add_inputs(r):
    return [rf(r, 6), rf(r, 6)]


case("run_input_shape_differs_from_compile", _ADD, "run", SHAPE, fragments=["'A'"],
     regex=[r"\b6\b.*\b7\b"], inputs=_add_inputs,
     run_args=lambda r, ins, info: ([rf(r, 7), rf(r, 7)], _outs(info)))

case("run_input_dtype_differs_from_compile", _ADD, "run", SHAPE, fragments=["'B'", "float32", "float64"],
     inputs=_add_inputs,
     run_args=lambda r, ins, info: ([ins[0], ins[1].astype(F64)], _outs(info)))

case("run_output_wrong_shape", _ADD, "run", SHAPE, fragments=["'O'"], regex=[r"\b6\b.*\b5\b"],
     inputs=_add_inputs,
     run_args=lambda r, ins, info: (ins, [np.zeros(5, F32)]))

case("run_output_wrong_dtype", _ADD, "run", SHAPE, fragments=["'O'", "float64"],
     inputs=_add_inputs,
     run_args=lambda r, ins, info: (ins, [np.zeros(6, F64)]))

case("run_wrong_number_of_outputs", _ADD, "run", INVALID, fragments=["output"],
     regex=[r"\b1\b.*\b2\b"], inputs=_add_inputs,
     run_args=lambda r, ins, info: (ins, [np.zeros(6, F32), np.zeros(6, F32)]))

case("run_wrong_number_of_inputs", _ADD, "run", INVALID, fragments=["input"],
     regex=[r"\b2\b.*\b1\b"], inputs=_add_inputs,
     run_args=lambda r, ins, info: (ins[:1], _outs(info)))

case("run_output_aliases_input", _ADD, "run", SHAPE, fragments=["'O'", "'A'"], inputs=_add_inputs,
     run_args=lambda r, ins, info: (ins, [ins[0]]),
     note="the output is the same memory as input A")

case("run_output_self_overlap", _ADD, "run", SHAPE, fragments=["'O'"], inputs=_add_inputs,
     run_args=lambda r, ins, info: (ins, [tclib.Tensor(np.zeros(6, F32), strides=[0])]),
     note="stride 0 makes all output elements one location")


def _two_out_overlap(r, ins, info):
    buf = np.zeros(12, F32)
    return ins, [buf[0:6], buf[4:10]]


case("run_outputs_overlap_each_other", """def two(float(N) A) -> (O, P) {
  O(i) = A(i)
  P(i) = A(i) * 2
}""", "run", SHAPE, fragments=["'O'", "'P'"], inputs=lambda r: [rf(r, 6)],
     run_args=_two_out_overlap)

case("syntax_unexpected_end_of_line", "def bad(float(N) A) -> (O) {\n  O(i) = A(i) +", "define", SYNTAX,
     regex=[r"^bad:2:\d+: error: "], location=True)

case("precondition_where_out_of_bounds", "def f(float(N) A) -> (O) { O(i) = A(i + 1) where i in 0:N }",
     "shape", SHAPE, fragments=["'A'"], regex=[r"\b1\.\.4\b.*\b4\b"], location=True,
     inputs=lambda r: [rf(r, 4)], note="the where clause makes i reach N-1, so A(i + 1) reads A(N)")

case("where_two_ranges_for_one_variable",
     "def f(float(N) A) -> (O) { O(i) = A(i) where i in 0:N, i in 0:2 }", "define", SEMANTIC,
     fragments=["'i'"], location=True)

case("where_range_for_unused_variable", "def f(float(N) A) -> (O) { O(i) = A(i) where k in 0:2 }",
     "define", SEMANTIC, fragments=["'k'"], location=True)

case("rank_above_max", "def f(float(A,B,C,D,E,F,G,H,I,J,K,L,M,N,O,P,Q) X) -> (t) {\n"
     "  t +=! X(a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q)\n}", "define", tclib.TC_ERROR_UNSUPPORTED,
     fragments=["'X'", "17", "16"], location=True)

# ---- TC function calls ----
_PAIR = "def pair(float(N) A, float(N) B) -> (P) {\n  P(i) = A(i) + B(i)\n}\n"

case("call_wrong_arity", _PAIR + "def user(float(N) X) -> (Y) {\n  Y = pair(X)\n}", "define", SEMANTIC,
     fragments=["'pair' takes 2 inputs"], regex=[r"^user:5:\d+: error: "], location=True)

case("call_dtype_mismatch", _PAIR + "def user(float(N) X, double(N) Z) -> (Y) {\n  Y = pair(X, Z)\n}",
     "define", SEMANTIC, fragments=["'Z' is float64", "'B' as float32"], location=True)

case("call_unknown_def", "def user(float(N) X) -> (Y, Z) {\n  Y, Z = nothere(X)\n}", "define", SEMANTIC,
     fragments=["'nothere' is not a def"], location=True)

case("call_recursive", "def f(float(N) X) -> (Y) {\n  Y = f(X)\n}", "define", SEMANTIC,
     fragments=["recursive call of 'f'"], location=True)

case("call_size_mismatch_at_binding", _PAIR + "def user(float(N) X, float(M) Z) -> (Y) {\n  Y = pair(X, Z)\n}",
     "shape", SHAPE, fragments=["call to 'pair'", "size 'N' is 4", "'Z' dimension 0 is 5"], location=True,
     inputs=lambda r: [rf(r, 4), rf(r, 5)], entry="user")

# ============================================================================================
# Rank polymorphism: '...' misuse and inputs that disagree on what it stands for
# ============================================================================================

case("ellipsis_two_in_one_index_list",
     "def bad(float(N, ...) X) -> (O) { O(n, ...) = X(n, ..., ...) }", "define", SYNTAX,
     fragments=["at most one '...'"], regex=[r"^bad:1:57: error: "], location=True)

case("ellipsis_two_in_one_type",
     "def bad(float(..., N, ...) X) -> (O) { O(n) +=! X(n) }", "define", SYNTAX,
     fragments=["at most one '...'"], location=True)

case("ellipsis_in_where_clause",
     "def bad(float(N, ...) X) -> (O) { O(n, ...) = X(n, ...) where ... in 0:N }", "define", SYNTAX,
     fragments=["'...' cannot be given a range"], location=True)

case("ellipsis_inside_an_expression",
     "def bad(float(N, ...) X) -> (O) { O(n) +=! X(n + ...) }", "define", SYNTAX,
     fragments=["'...' stands for index variables"], location=True)

case("ellipsis_without_typed_input",
     "def bad(float(N) X) -> (O) { O(n, ...) = X(n) }", "define", SEMANTIC,
     fragments=["no input of 'bad' has one"], location=True)

ELLIPSIS_SUM = "def bad(float(..., N) A, float(..., N) B) -> (O) { O(..., n) = A(..., n) + B(..., n) }"
for _name, _b, _fragments in (
        ("ranks", (3, 4), ["'...' stands for 2 dimensions in input 'A'", "but for 1 in input 'B'",
                           "every '...' of a def denotes the same dimensions"]),
        ("extents", (2, 5, 4), ["input 'B'", "dimension 1", "size '...[1]' is 3", "got 5"])):
    case("ellipsis_mismatched_" + _name, ELLIPSIS_SUM, "shape", SHAPE,
         inputs=lambda r, b=_b: [rf(r, 2, 3, 4), rf(r, *b)], fragments=_fragments)

case("ellipsis_rank_too_small",
     "def bad(float(..., M, K) A) -> (O) { O(..., m) +=! A(..., m, k) }", "shape", SHAPE,
     inputs=lambda r: [rf(r, 4)],
     fragments=["input 'A'", "has rank 1", "at least 2 dimensions"])

case("ellipsis_called_from_another_def",
     "def relu(float(...) X) -> (O) { O(...) = fmax(X(...), 0) }\n"
     "def bad(float(N) X) -> (O) { O = relu(X) }", "define", UNSUPPORTED,
     entry="bad", fragments=["rank-polymorphic def", "not supported"], location=True)

# ============================================================================================
# Scatter-add: what a statement with a computed left-hand side subscript may not do
# ============================================================================================

_EMBED_GRAD = ("def embed_grad(float(E,D) LUT, int32(B,L) I, float(B,D) d_O) -> (float(E,D) d_LUT) {\n"
               "  d_LUT(I(b, l), d) %s d_O(b, d)\n}")
for _name, _op in (("assign", "="), ("max", "max="), ("product_init", "*=!"), ("min_init", "min=!")):
    case("scatter_with_" + _name + "_refused", _EMBED_GRAD % _op, "define", SEMANTIC,
         fragments=["a computed left-hand side subscript ('I(b, l)') makes this statement a scatter",
                    "scatters accumulate with '+=' or '+=!' only"],
         regex=[r"^embed_grad:2:9: error: "], location=True,
         note="located at the subscript that makes the statement a scatter")

case("scatter_float_subscript_refused",
     "def f(float(N) X) -> (float(N) O) { O(X(i) * 2) += 1 }", "define", SEMANTIC,
     fragments=["left-hand side subscript 'X(i) * 2' of 'O' must be an integer, got float32"],
     regex=[r"^f:1:39: error: "], location=True)

case("scatter_unannotated_output_refused",
     "def f(float(N) X, int32(N) I) -> (O) { O(I(i)) += X(i) }", "define", SEMANTIC,
     fragments=["this scatter cannot give 'O' its shape", "annotate the output with its dimensions",
                "'-> (float(N0) O)'", "or write 'O' with a plain statement first"], location=True)

case("scatter_temporary_without_shape_refused",
     "def f(float(N) X, int32(N) I) -> (O) {\n  T(I(i)) += X(i)\n  O(i) = X(i)\n}", "define", SEMANTIC,
     fragments=["this scatter cannot give 'T' its shape", "write 'T' with a plain statement first"],
     regex=[r"^f:2:3: error: "], location=True)

case("scatter_reading_its_own_tensor_refused",
     "def f(float(N) X, int32(N) I) -> (float(N) O) { O(I(i)) += O(i) * X(i) }", "define", SEMANTIC,
     fragments=["this scatter reads 'O', the tensor it writes"], location=True)

case("scatter_into_an_input_refused",
     "def f(float(N) X, int32(N) I) -> (O) { X(I(i)) += 1\n O(i) = X(i) }", "define", SEMANTIC,
     fragments=["cannot write input 'X'"], location=True)

case("scatter_ellipsis_lhs_refused",
     "def f(float(N, ...) X, int32(N) I) -> (O) { O(I(n), ...) += X(n, ...) }", "define", UNSUPPORTED,
     fragments=["'...' in the left-hand side of a scatter", "not supported"], location=True)

case("scatter_unconstrained_variable",
     "def f(int32(N) I) -> (int32(8) H) { H(I(i) + j) +=! 1 }", "define", SEMANTIC,
     fragments=["cannot infer the range of 'j'", "where j in"], location=True,
     note="j appears only in the write's computed subscript, which cannot bound it")

case("scatter_affine_write_out_of_bounds", """def tconv(float(N) X, float(K) W, float(M) Like) -> (float(M) O) {
  O(i + k) +=! X(i) * W(k)
}""", "shape", SHAPE, fragments=["'O(i + k)' writes 'O' out of bounds in dimension 0", "indices 0..7",
                                  "the extent is 7"], location=True,
     inputs=lambda r: [rf(r, 6), rf(r, 3), rf(r, 7)],
     note="an affine write is a precondition: binding proves it or refuses, as for a read")

_HIST = "def hist(int32(N) I, float(N) V, float(E) Like) -> (float(E) H) {\n  H(I(i)) +=! V(i)\n}"


def _hist_inputs(bad):
    def inputs(r):
        return [np.array([1, 2, bad, 4, 0], np.int32), rf(r, 5), rf(r, 5)]
    return inputs


for _name, _bad in (("too_large", 9), ("negative", -3)):
    case("scatter_checked_index_" + _name, _HIST, "run", RUNTIME,
         fragments=["'H(I(i))' writes 'H' out of bounds: index %d in dimension 0, whose extent is 5" % _bad,
                    "(at i=2)"], regex=[r"^hist:2:3: error: "], location=True,
         inputs=_hist_inputs(_bad), run_args=lambda r, ins, info: (ins, _outs(info)),
         options={"checked": "1"},
         note="checked=1: the first bad written index is a run-time error naming the write")

case("scatter_checked_gathered_row", _EMBED_GRAD % "+=!", "run", RUNTIME,
     fragments=["'d_LUT(I(b, l), d)' writes 'd_LUT' out of bounds: index 7 in dimension 0, whose extent is 7",
                "(at b=1, l=2"], location=True,
     inputs=lambda r: [rf(r, 7, 3), np.array([[0, 1, 2], [3, 4, 7]], np.int32), rf(r, 2, 3)],
     run_args=lambda r, ins, info: (ins, _outs(info)), options={"checked": "1"})

"""cases_trust.py - regressions for the defects a review of trust found: each case runs on every
backend and pins one semantic rule of docs/guide/language.md ("Scalar semantics") or one documented
status. Numbers in the names are the review's defect numbers. Expected values are computed here
independently (Python integers, NumPy), never by libtc.

What the corpus cannot express (NULL data pointers, memory limits, worker threads, the host's
stderr, the tc tool) is in regressions.py.
"""
import numpy as np

from corpus import Accept, Reject, F16, F32, F64
import tclib

i8, i32, i64, u8, u32, u64 = np.int8, np.int32, np.int64, np.uint8, np.uint32, np.uint64
NAN, INF = float("nan"), float("inf")
I32_MIN, I32_MAX = -2 ** 31, 2 ** 31 - 1
I64_MIN = -2 ** 63

ACCEPT, REJECT = [], []


def accept(name, src, inputs, expect, **kw):
    ACCEPT.append(Accept(name, src, lambda r: inputs, expect, **kw))


def reject(name, src, stage, status, **kw):
    REJECT.append(Reject(name, src, stage, status, **kw))


def wrap(v, bits=32):
    """v as a two's complement integer of `bits` bits."""
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def ediv(a, b, bits):
    """TC's Euclidean division with x / 0 == 0 and MIN / -1 == MIN (wrapped)."""
    if b == 0:
        return 0
    r = a % abs(b)          # Python's % with a positive divisor is in [0, |b|)
    return wrap((a - r) // b, bits)


def emod(a, b):
    return 0 if b == 0 else a % abs(b)


def _outs(info):
    return [np.zeros(s, d) for d, s in info]


# ---- 2: integer division never traps --------------------------------------------------------
_B = [65536, -1, 0, I32_MIN, 7, -7]
accept("t2_int32_division_never_traps", """
def f(int32(N) B) -> (Q, R, S, T) {
  Q(i) = 7 / (B(i) * 65536)
  R(i) = 7 % (B(i) * 65536)
  S(i) = B(i) / -1
  T(i) = B(i) % -1 + B(i) / 0 + B(i) % 0
}""", [np.array(_B, i32)],
       lambda B: [np.array([ediv(7, wrap(b * 65536), 32) for b in _B], i32),
                  np.array([emod(7, wrap(b * 65536)) for b in _B], i32),
                  np.array([ediv(b, -1, 32) for b in _B], i32),
                  np.zeros(len(_B), i32)])

_B64 = [I64_MIN, -1, 0, 2 ** 62, -5]
accept("t2_int64_division_never_traps", """
def f(int64(N) B) -> (Q, R) {
  Q(i) = B(i) / (B(i) + 1 - 1) + B(i) / -1
  R(i) = (B(i) * 4) % (B(i) * 2)
}""", [np.array(_B64, i64)],
       lambda B: [np.array([wrap(ediv(b, b, 64) + ediv(b, -1, 64), 64) for b in _B64], i64),
                  np.array([emod(wrap(b * 4, 64), wrap(b * 2, 64)) for b in _B64], i64)])

# ---- 5: signed arithmetic wraps on every backend --------------------------------------------
_A = [I32_MAX, 5, I32_MIN, -1]
accept("t5_int32_wraps", """
def f(int32(N) A) -> (G, H, K) {
  G(i) = A(i) + 1 > A(i)
  H(i) = (A(i) * 2) / 2
  K(i) = -A(i)
}""", [np.array(_A, i32)],
       lambda A: [np.array([wrap(a + 1) > a for a in _A]),
                  np.array([ediv(wrap(a * 2), 2, 32) for a in _A], i32),
                  np.array([wrap(-a) for a in _A], i32)])

accept("t5_int64_wraps_in_conditions", """
def f(int64(N) B) -> (O) {
  O(i) = (B(i) - 2) > 0 ? 1 : 0
}""", [np.array([I64_MIN, 5, 1], i64)], lambda B: [np.array([1, 1, 0], i32)])

# ---- 6: float16 NaN stays NaN; NaN -> integer is 0 ------------------------------------------
_H = np.array([NAN, 1.5, -INF, 65504], F16)
accept("t6_float16_nan", """
def f(half(N) A) -> (P, Q, R, S, T, U) {
  P(i) = A(i) * 2
  Q(i) = half(float(A(i)))
  R(i) = sqrt(A(i)) + exp(A(i)) + abs(A(i))
  S +=! A(i)
  T(i) = int32(A(i) * 2)
  U(i) = A(i) + A(i)
}""", [_H], lambda A: [np.array([NAN, 3, -INF, INF], F16), np.array([NAN, 1.5, -INF, 65504], F16),
                       np.array([NAN, np.float16(np.sqrt(F32(1.5))) + np.float16(np.exp(F32(1.5))) + np.float16(1.5),
                                 NAN, INF], F16),
                       np.asarray(NAN, F16), np.array([0, 3, I32_MIN, I32_MAX], i32),
                       np.array([NAN, 3, -INF, INF], F16)],
       ulps=2)

# ---- 11: float semantics: IEEE, NumPy's floored %, NaN through ?: ----------------------------
accept("t11_float32_overflow_to_inf", """
def f(float(N) A) -> (O) { O(i) = A(i) * 1e39 }""", [np.array([1, -2, 0], F32)],
       lambda A: [np.array([INF, -INF, NAN], F32)], rtol=0, atol=0)

accept("t11_float64_inf_literal", """
def f(double(N) A) -> (O) { O(i) = A(i) * 1e309 }""", [np.array([1, -2], F64)],
       lambda A: [np.array([INF, -INF], F64)], rtol=0, atol=0)

def _floored(A):
    with np.errstate(invalid="ignore"):
        return [np.mod(A, F32(3.5)), np.mod(A, F32(-3.5)), np.full(A.shape, NAN, F32)]


_M = np.array([1e30, -1e30, -0.0, 3.5, -7.25, 5, NAN, INF], F32)
accept("t11_float_modulo_is_floored", """
def f(float(N) A) -> (P, Q, R) {
  P(i) = A(i) % 3.5
  Q(i) = A(i) % -3.5
  R(i) = A(i) % 0
}""", [_M], lambda A: _floored(A),
       rtol=0, atol=0)

accept("t11_nan_through_ternary_and_min", """
def f(float(N) A, float(N) B) -> (P, Q, R, S) {
  P(i) = A(i) > B(i) ? A(i) : B(i)
  Q(i) = min(A(i), B(i))
  R(i) = fmax(A(i), B(i))
  S max=! A(i) > -1 ? B(i) : A(i)
}""", [np.array([1, NAN, 2], F32), np.array([NAN, 1, 3], F32)],
       lambda A, B: [np.array([NAN, 1, 3], F32), np.array([NAN, NAN, 2], F32),
                     np.array([1, 1, 3], F32), np.asarray(NAN, F32)], rtol=0, atol=0)

# ---- 12: any nonzero bool byte is true --------------------------------------------------------
accept("t12_bool_bytes", """
def f(bool(N) A) -> (O, C) {
  O(i) = A(i) ? 1 : 0
  C +=! int32(A(i))
}""", [np.array([2, 1, 0, 255], u8).view(np.bool_)],
       lambda A: [np.array([1, 1, 0, 1], i32), np.asarray(3, i32)])

# ---- 13: valid programs the cpu backend used to reject ----------------------------------------
accept("t13_float16_min_max", """
def f(half(N) A, half(N) B) -> (P, Q, R, S) {
  P(i) = min(A(i), B(i))
  Q(i) = max(A(i), B(i))
  R(i) = fmin(A(i), B(i))
  S(i) = fmax(A(i), B(i))
}""", [np.array([1, 2, NAN], F16), np.array([0, 3, 1], F16)],
       lambda A, B: [np.array([0, 2, NAN], F16), np.array([1, 3, NAN], F16), np.array([0, 2, 1], F16),
                     np.array([1, 3, 1], F16)], rtol=0, atol=0)

accept("t13_unsigned_gather_index", """
def f(float(N,D) LUT, uint32(B) I, uint64(B) J) -> (O) {
  O(b,d) = LUT(I(b), d) + LUT(J(b), d)
}""", [np.arange(6, dtype=F32).reshape(3, 2), np.array([0, 2], u32), np.array([1, 0], u64)],
       lambda L, I, J: [L[I.astype(np.int64)] + L[J.astype(np.int64)]])

accept("t13_float_computed_subscript", """
def f(float(N) A) -> (O) { O(i) = A(int32(float(i) * 0.5)) where i in 0:N }""",
       [np.array([1, 2, 3, 4], F32)], lambda A: [np.array([1, 1, 2, 2], F32)])

reject("t13_gather_index_wraps", """
def f(float(N,D) LUT, int32(B) I) -> (O) { O(b,d) = LUT(I(b) + 2147483647 + 2, d) }""",
       "run", tclib.TC_ERROR_RUNTIME, fragments=["'LUT'", "-2147483647", "dimension 0"],
       inputs=lambda r: [np.ones((3, 2), F32), np.array([0, 1], i32)],
       run_args=lambda r, ins, info: (ins, _outs(info)))

# ---- 8: checked=1 holds for reads under ?: and on the right of && ----------------------------
reject("t8_checked_gather_in_ternary", """
def f(float(N,D) LUT, int32(B) I) -> (O) { O(b,d) = I(b) != 0 ? LUT(I(b), d) : -1 }""",
       "run", tclib.TC_ERROR_RUNTIME, fragments=["'LUT(I(b), d)'", "index -1"],
       inputs=lambda r: [np.ones((3, 2), F32), np.array([0, -1, 7], i32)],
       run_args=lambda r, ins, info: (ins, _outs(info)))

reject("t8_checked_gather_right_of_and", """
def f(float(N) LUT, int32(B) I) -> (O) { O(b) = (I(b) >= 0 && LUT(I(b)) > 0) ? 1 : 0 }""",
       "run", tclib.TC_ERROR_RUNTIME, fragments=["'LUT(I(b))'", "index 5"],
       inputs=lambda r: [np.ones(3, F32), np.array([0, -4, 5], i32)],
       run_args=lambda r, ins, info: (ins, _outs(info)))

reject("checked_gather_from_an_empty_tensor", """
def f(float(N,K) X, int32(N) I) -> (O) { O(i) +=! X(i, I(j)) where j in 0:N }""",
       "run", tclib.TC_ERROR_RUNTIME,
       fragments=["'X(i, I(j))' reads 'X' out of bounds: index 0 in dimension 1, whose extent is 0"],
       inputs=lambda r: [np.ones((3, 0), F32), np.zeros(3, i32)],
       run_args=lambda r, ins, info: (ins, _outs(info)),
       note="every index of an empty dimension is out of bounds: the cuda backend loaded nothing and reported "
            "nothing (differential fuzzer on cuda.emulate=1, seed 12345, program 433)")

accept("t8_guard_keeps_reads_in_bounds", """
def f(float(N) LUT, int32(B) I) -> (O) { O(b) = (I(b) >= 0 && I(b) < N && LUT(I(b)) > 1) ? 1 : 0 }""",
       [np.array([1, 2, 3], F32), np.array([0, -4, 5, 2], i32)], lambda L, I: [np.array([0, 0, 0, 1], i32)])

reject("t8_checked_gather_in_unused_temporary", """
def f(float(N) A, int32(N) I) -> (O) {
  t(i) = A(I(i))
  O(i) = A(i)
}""", "run", tclib.TC_ERROR_RUNTIME, fragments=["'A(I(i))'", "index 7"],
       inputs=lambda r: [np.ones(3, F32), np.array([0, 1, 7], i32)],
       run_args=lambda r, ins, info: (ins, _outs(info)),
       note="the reference runs every statement; the cpu backend computes check-bearing stages whole")

accept("t8_unchecked_clamps_on_every_backend", """
def f(float(N) X, int32(B) I) -> (Z) { Z(b) = I(b) > 100 ? -1 : X(I(b)) }""",
       [np.array([1, 2, 3], F32), np.array([0, -5, 9, 200], i32)],
       lambda X, I: [np.array([1, 1, 3, -1], F32)], options={"checked": "0"})

# ---- 9, 15: sizes that overflow or leave 32 bits ---------------------------------------------
reject("t9_size_arithmetic_overflows", """
def f(float(N) A) -> (O) { O(i) = A(i) where i in 0:N*N*N*N+5 }""", "shape",
       tclib.TC_ERROR_UNSUPPORTED, fragments=["'O' dimension 0", "N=65536"],
       inputs=lambda r: [np.zeros(65536, F32)])

reject("t9_constant_range_beyond_32_bits", """
def f(float(N) A) -> (O) { O(i) = 1 where i in 0:65536*65536 }""", "shape",
       tclib.TC_ERROR_UNSUPPORTED, fragments=["'O' dimension 0", "2147483647"],
       inputs=lambda r: [np.zeros(3, F32)])

reject("t15_range_literal_beyond_32_bits", """
def f(float(N) A) -> (O) { O(i) = 1 where i in 0:5000000000 }""", "define",
       tclib.TC_ERROR_UNSUPPORTED, fragments=["5000000000", "32-bit"], location=True)

reject("t15_dimension_literal_beyond_32_bits", """
def f(float(3000000000) A) -> (O) { O(i) = A(i) }""", "define",
       tclib.TC_ERROR_UNSUPPORTED, fragments=["3000000000", "2147483647"], location=True)

# ---- 10: the oracle's own int64 division ------------------------------------------------------
accept("t10_int64_min_divided", """
def f(int64(N) B) -> (Q, R) {
  Q(i) = B(i) / 3
  R(i) = B(i) % 3
}""", [np.array([I64_MIN, -7, 7], i64)],
       lambda B: [np.array([ediv(b, 3, 64) for b in [I64_MIN, -7, 7]], i64),
                  np.array([emod(b, 3) for b in [I64_MIN, -7, 7]], i64)])

# ---- 16: valid programs that were rejected ----------------------------------------------------
accept("t16_negated_literal_is_weak", """
def f(int8(N) A) -> (O) { O(i) = A(i) + -128 }""", [np.array([1, -128, 127], i8)],
       lambda A: [np.array([wrap(int(a) - 128, 8) for a in A], i8)])

accept("t16_literal_cast_on_its_own_keeps_its_value", """
def f(float64(N) A) -> (O, P) {
  O(i) = A(i) + float64(3000000000) + float64(-(3000000000)) + float64(x) where x = -9223372036854775807
  P(i) = int64(4294967297) + int64(i) + int64(int8(300)) where i in 0:N
}""", [np.array([0.5, -2.0], F64)],
       lambda A: [A + 3e9 - 3e9 - 9223372036854775807.0, np.array([4294967297, 4294967298], i64) + 44],
       note="a literal past int32 cast on its own was an int32 and wrapped (float64(3000000000) gave "
            "-1294967296, int64(4294967297) gave 1); it is an int64 there. int8(300) stays a cast of int32 300: "
            "44. Found by the gradient fuzzer through atan2's derivative with such an argument")

accept("t16_ternary_narrows_preconditions", """
def f(float(N) A) -> (O) { O(i) = A((i > 0) ? i - 1 : 0) where i in 0:N+1 }""",
       [np.array([1, 2, 3], F32)], lambda A: [np.array([1, 1, 2, 3], F32)])

# ---- 4: calls have a size budget --------------------------------------------------------------
_CHAIN = "def f0(float(N) A) -> (O) { O(i) = A(i) + 1 }\n" + "".join(
    "def f%d(float(N) A) -> (O) { t = f%d(A)  O = f%d(t) }\n" % (k, k - 1, k - 1) for k in range(1, 31))
reject("t4_exponential_calls_refused", _CHAIN, "define", tclib.TC_ERROR_SEMANTIC,
       fragments=["too large", "inlining the calls"], location=True)

# ---- 1, 14: buffers past 2 GiB on the cpu backend ---------------------------------------------
# Refused before 64-bit offsets (t1 was a heap overflow: Halide wrapped the allocation's size at 2^32
# bytes); now compiled with 64-bit offsets: tests/backends/test_cpu_large_buffers.cpp (the same
# two defs compiled, a 2.4 GB table run).

# 14, out of memory on the reference backend: regressions.py (ASan aborts on such allocations).


# ---- found by the differential fuzzer (tests/fuzz/diff) ---------------------------------------
_NA = [NAN, 0, NAN, 1]
_NB = [0, NAN, NAN, 1]


def _nan_compare(A, B):
    with np.errstate(invalid="ignore"):
        return [A <= B, A >= B, ~(A < B), A != B, A == B, (A != 0).astype(i32), ~(A != 0)]


for _t, _dt in (("float", F32), ("half", F16), ("double", F64)):
    accept("fuzz_nan_comparisons_" + _t, """
def f(%s(N) A, %s(N) B) -> (P, Q, R, S, T, U, V) {
  P(i) = A(i) <= B(i)
  Q(i) = A(i) >= B(i)
  R(i) = !(A(i) < B(i))
  S(i) = A(i) != B(i)
  T(i) = A(i) == B(i)
  U(i) = A(i) ? 1 : 0
  V(i) = !A(i)
}""" % (_t, _t), [np.array(_NA, _dt), np.array(_NB, _dt)], _nan_compare)

accept("fuzz_float_literal_of_integer_type_saturates", """
def f(float(N) A) -> (int8(N) O, int32(N) P) {
  O(i) = 300.5 where i in 0:N
  P(i) = -1e10 where i in 0:N
}""", [np.ones(2, F32)], lambda A: [np.array([127, 127], i8), np.array([I32_MIN, I32_MIN], i32)])

accept("fuzz_min_reduction_of_an_index", """
def f(int32(N) X) -> (O, P) {
  O min=! j where exists X(j)
  P max=! 4 - j where exists X(j)
}""", [np.arange(5, dtype=i32)], lambda X: [np.asarray(0, i32), np.asarray(4, i32)],
       note="Halide's TrimNoOps solved min(O, j) == O with O read once before the loop")

accept("fuzz_reduction_variable_only_in_exists", """
def f(uint16(M,K) C) -> (O, P) {
  O(i) +=! 1 where exists C(i, j)
  P(i) min=! 1 where exists C(i, j)
}""", [np.zeros((2, 3), np.uint16)], lambda C: [np.array([3, 3], i32), np.array([1, 1], i32)])

accept("fuzz_int32_row_sum_of_a_cast", """
def f(uint32(M,K) A) -> (O) { O(i) +=! int32(A(i, k)) }""", [np.full((3, 4), 2 ** 31, u32)],
       lambda A: [np.zeros(3, i32)], note="int32 sums wrap: not split into vector lanes (rfactor)")

accept("fuzz_bool_max_reduction_of_comparisons", """
def f(bool(M,N) C) -> (O) { O(i) max=! (C(i,j) ? 0 : 1.0) > (-1) }""", [np.zeros((2, 3), np.bool_)],
       lambda C: [np.array([True, True])])

accept("fuzz_constant_comparison_beyond_int32", """
def f(int32(M) C) -> (O, P) {
  O = 2147483647 == (-1)
  P = -2147483648 < 2147483647
}""", [np.zeros(2, i32)], lambda C: [np.asarray(False), np.asarray(True)])

accept("fuzz_consumer_needs_less_than_a_tile", """
def f(float32(L) A, int16(N,N) I) -> (t3) {
  t1(i, j) min=! A(k) * I(0, i) where j in 0:1
  t3(i, j) *= t1(0, j) where i in 0:1
}""", [np.array([1.0], F32), np.zeros((2, 2), np.int16)], lambda A, I, init: [np.zeros((1, 1), F32)],
       init=lambda r: [np.ones((1, 1), F32)])

accept("fuzz_empty_output_with_null_strides", """
def f(int8(M,N) A) -> (O) { O(i,j) = A(i,j) }""", [np.zeros((2, 0), i8)], lambda A: [np.zeros((2, 0), i8)])

reject("fuzz_checked_read_under_constant_condition", """
def f(uint32(K,K) B, int8(K) I) -> (O) { O(i) = 1 ? B(I(0) + 1, i) : 1 }""", "run", tclib.TC_ERROR_RUNTIME,
       fragments=["'B(I(0) + 1, i)'", "index 1"],
       inputs=lambda r: [np.zeros((1, 1), u32), np.zeros(1, i8)], run_args=lambda r, ins, info: (ins, _outs(info)),
       note="clamping into an extent of 1 folded the index to 0 and the check with it")

reject("fuzz_checked_read_multiplied_by_zero", """
def f(int32(K) B, int32(K) I) -> (O) { O(i) = B(I(i)) * 0 }""", "run", tclib.TC_ERROR_RUNTIME,
       fragments=["'B(I(i))'", "index 5"],
       inputs=lambda r: [np.zeros(3, i32), np.array([0, 5, 1], i32)], run_args=lambda r, ins, info: (ins, _outs(info)))

reject("checked_read_multiplied_by_zero_with_inline_always", """
def f(int32(K) B, int32(K) I) -> (O) { O(i) = B(I(i)) * 0 }""", "run", tclib.TC_ERROR_RUNTIME,
       fragments=["'B(I(i))'", "index 5", "(at i=2)"], options={"cpu.inline": "1"}, backends=("cpu",),
       inputs=lambda r: [np.zeros(4, i32), np.array([0, 1, 5, 2], i32)], run_args=lambda r, ins, info: (ins, _outs(info)),
       note="the checks sink reads a check's first and last point only: a check inlined into it checked nothing else")

accept("fuzz_int64_modulo_by_int64_min", """
def main(int64 A, int64(N) B) -> (O1, O2) {
  O1 = (-1) % A
  O2(i) = B(i) % A
}""", [np.array(-2**63, i64), np.array([-1, 5, -2**63 + 1, 0, -2**63], i64)],
       lambda A, B: [np.array(2**63 - 1, i64), np.array([2**63 - 1, 5, 1, 0, 0], i64)],
       note="|INT64_MIN| overflowed int64 in the Euclidean modulo (UBSan in the reference; seed 149050256)")

accept("fuzz_constant_uint32_to_int32_wraps_in_a_gather", """
def main(uint32(N,N) C) -> (O4, P) {
  O3() = -((N <= 1) ? C(0, 0) : 1)
  O4 = C(int32(O3) + 1, 0)
  P = int64(uint64(0) - 2)
}""", [np.array([[5, 6], [7, 8]], u32)],
       lambda C: [np.array(5, u32), np.array(-2, i64)],
       note="int32 of the constant 4294967295: Halide folded the cast to signed_integer_overflow, then "
            "refused the gather as unbounded (seed 193678694, program 332)")

accept("fuzz_unsigned_to_signed_of_the_same_width_wraps", """
def main(float64(L) A) -> (int16(L,L,5) O3, O4, O5) {
  O3(i, j, k) = uint16(-1)
  O4(i) = int8(uint16(0 - 1)) where i in 0:L
  O5(i) = int8(int16(-200)) where i in 0:L
}""", [np.zeros(2, np.float64)],
       lambda A: [np.full((2, 2, 5), -1, np.int16), np.full(2, -1, np.int8), np.full(2, 56, np.int8)],
       note="int16 of uint16(-1): Halide's simplifier failed on signed integer overflow (seed 155120966, "
            "program 24)")

accept("fuzz_comparison_with_a_constant_beyond_any_index", """
def main(half(2,N,N) A, int16(N) I) -> (O3, O4) {
  O2(i, j, k) = I(j) where exists A(i, 0, k)
  O3 +=! (2147483647 <= i) ? O2(0, 0, 2 * i) : 0
  O4 +=! (-2147483647 <= i) ? O2(0, 0, 2 * i) : 0
}""", [np.zeros((2, 1, 1), np.float16), np.array([7], np.int16)],
       lambda A, I: [np.array(0, np.int16), np.array(7, np.int16)],
       note="2147483647 <= i in a value: Halide's bounds took i >= 2147483647 and overflowed folding 2 * i "
            "(TC_ERROR_INTERNAL at compile; differential fuzzer, CI at d0e4b96, program 160)")

accept("fuzz_comparison_with_an_operand_that_folds_to_a_constant", """
def main(half(2,N,N) A, int16(N) I, float(M) B) -> (O3, O4, P, Q) {
  O2(i, j, k) = I(j) where exists A(i, 0, k)
  O3 +=! (abs(2147483647) <= i) ? O2(0, 0, 2 * i) : 0
  O4 +=! (-abs(2147483647) <= i) ? O2(0, 0, 2 * i) : 0
  P(i) = (2147483647 < abs(1)) + B(i)
  Q(i) = abs(1) <= 2147483647 where i in 0:M
}""", [np.zeros((2, 1, 1), np.float16), np.array([7], np.int16), np.array([1.5, 2], F32)],
       lambda A, I, B: [np.array(0, np.int16), np.array(7, np.int16), np.array([1.5, 2], F32),
                        np.array([True, True])],
       note="2147483647 < abs(1): Halide's simplifier overflowed folding 2147483647 * (a loaded 1) < 1 "
            "(TC_ERROR_INTERNAL at compile; differential fuzzer, seed 20261304, program 482); abs(2147483647) "
            "<= i as the literal's case above")

accept("fuzz_reduction_index_compared_with_its_type_limit", """
def f1(float16(S1) X0) -> (O1) {
  O1(i) min=! (j <= 2147483647) ? X0(j) : X0(i)
}
def main(half(L) A, int32(L) I) -> (t1, P, Q, R) {
  t2(i) +=! A(i)
  t3 = f1(t2)
  t1() +=! t3(0)
  P(i) +=! (2147483647 < j) ? A(j) : 1 where i in 0:L
  Q(i) +=! (j >= -2147483648) ? A(j) : 0 where i in 0:L
  R(i) = (I(i) <= 2147483647) + (I(i) > 2147483647) + (-2147483648 > I(i))
}""", [np.array([1.5, -2], np.float16), np.array([-2147483648, 2147483647], np.int32)],
       lambda A, I: [np.array(-2, np.float16), np.full(2, 2, np.float16), np.full(2, -0.5, np.float16),
                     np.array([1, 1], np.int32)],
       note="j <= 2147483647 on a reduction index in a select's condition: Halide's bounds added 1 to the "
            "constant and failed on the overflow (TC_ERROR_INTERNAL at compile; differential fuzzer, CI seed "
            "75303677, program 269); compared with its type's limit the answer is known without it",
       entry="main")

accept("fuzz_unsigned_index_under_max_with_zero", """
def main(float(K) X, uint32(K) I) -> (D, G) {
  D(i0) = 0.0 where i0 in 0:4
  D(min(max(I(j), 0), 3)) += X(j) where j in 0:K
  G(i) = X(min(max(I(i), 0), K - 1))
}""", [np.array([1, 2, 4], F32), np.array([5, 1, 0], u32)],
       lambda X, I: [np.array([4, 2, 0, 1], F32), np.array([4, 2, 1], F32)],
       note="max(x, 0) of a uint32 x: Halide 14's bounds took it for unbounded, and the scatter and the gather "
            "indexed by it failed to compile on the cpu backend (TC_ERROR_INTERNAL; gradient fuzzer, seed "
            "20261220, program 1325); an integer min or max with its type's limit is its other operand",
       entry="main")

accept("fuzz_equality_with_a_difference_far_from_it", """
def main(float(L) A, int32(L) I) -> (O, P, Q) {
  O(i) +=! A(i) + (1 != (k - 2147483647)) where k in 0:1
  P(i) +=! A(i) + (1 == (k * 2147483647 - 5)) + (-5 != k - 2147483647) where k in 0:1
  Q(i) = (I(i) - 2147483647 == 1) + (I(i) == -2147483648)
}""", [np.array([1.5, -2], F32), np.array([-2147483648, 7], np.int32)],
       lambda A, I: [A + 1, A + 1, np.array([2, 0], np.int32)],
       note="1 != k - 2147483647 over a reduction of one step: Halide's simplifier took a == b for a - b == 0 and "
            "overflowed folding 1 - (0 - 2147483647) (TC_ERROR_INTERNAL at compile; differential fuzzer, seed "
            "20261213); signed equality is compared as the operands' bits",
       entry="main")

accept("fuzz_update_of_a_term_that_folds_to_zero", """
def main(float(K,K) X) -> (O, P, Q, R, S, T, D) {
  O(i) +=! X(i, j) * (K ? 0.0 : 1.0)
  P(i) +=! 0 * X(i, j)
  Q(i) +=! 0.0 / X(i, j)
  R(i) +=! X(i, j) - X(i, j)
  S(i) *=! X(i, j) * 0.0 + 1.0
  T(i) +=! X(i, j) * (i < 2 ? 0 : 0.0)
  D(i0, i1) = 0.0 where i0 in 0:K, i1 in 0:K
  D(i, i) += X(i, j) * 0.0 where i in 0:K, j in 0:K
}""", [np.array([[np.nan, 2, 3], [4, 0, np.inf], [7, 8, 9]], F32)],
       lambda X: [np.array([np.nan, np.nan, 0], F32)] * 4 + [np.array([np.nan, np.nan, 1], F32),
                  np.array([np.nan, np.nan, 0], F32), np.diag(np.array([np.nan, np.nan, 0], F32))],
       note="acc + x * 0 in an update: Halide's TrimNoOps strips strict_float, folds x * 0 (0 / x, x - x, "
            "x * (c ? 0 : 0.0)) to 0 and dropped the update's loop as a store of acc, losing the NaN or "
            "infinity in x (gradient fuzzer, seeds 20261223 and 20261224)",
       entry="main")

accept("fuzz_row_block_member_read_at_one_column", """
def main(float(L,L) A) -> (O3, O4, O5) {
  t1(i, j) min=! 1 where exists A(i, j)
  t2(i, j) +=! t1(k, j) where i in 0:1
  O3(i, j, k) *=! int32((t2(i, 0) && A(0, j)) && t1(0, k))
  u1(i, j) +=! A(i, j) * A(j, i)
  u2(i, j) +=! u1(k, j) where i in 0:1
  O4(i, j, k) = u2(i, 0) * A(0, j) * A(0, k)
  O5(i, j, k) = u2(i, i) * A(0, j) * A(0, k)
}""", [np.linspace(-1, 1, 17 * 17, dtype=F32).reshape(17, 17)],
       lambda A: [np.ones((1, 17, 17), np.int32)] +
                 [((A * A.T).astype(np.float64).sum(axis=0)[0] * A[0][:, None] * A[0][None, :])
                  .astype(F32)[None]] * 2,
       red=17,
       note="a stage read at one column (t2(i, 0), u2(i, i)) was computed in each row block of its reader with "
            "register tiles sized from its own extent, which shifted them to columns -15..0: a run-time "
            "bounds failure here, a read before the input where the stage reads an input (differential "
            "fuzzer, seed 20261240, program 463)",
       entry="main")

STRIDE_TWO_FROM_AN_ODD_BASE = """
def f1(float32(S1,K) X0) -> (O2) {
  O2(i, j) min= X0(1 - i, 2 * j)
}
def main(float(L,K) A) -> (O2, O3, O4) {
  O1(i, j) = A(0, j) + i where i in 0:K
  O2 = f1(O1)
  O3(i, j) min= O1(1 - i, 2 * j)
  O4(i, j) += O1(2 - i, 2 * j + 1)
}"""


def stride_two_from_an_odd_base(A, init):
    even, odd = A[0][None, 0::2], A[0][None, 1::2]
    return [np.minimum(init[0], (even + np.arange(2)[::-1, None]).astype(F32)),
            np.minimum(init[1], (even + np.arange(2)[::-1, None]).astype(F32)),
            init[2] + (odd + np.arange(3)[::-1, None]).astype(F32)]


def stride_two_initial(k):
    return lambda r: [r.uniform(-5, 5, (2, (k + 1) // 2)).astype(F32), r.uniform(-5, 5, (2, (k + 1) // 2)).astype(F32),
                      r.uniform(-1, 1, (3, k // 2)).astype(F32)]


for _k, _what in ((3, "vectors of 2 lanes from a 3 x 3 temporary, which LLVM keeps in registers"),
                  (41, "vectors of 16 lanes")):
    accept("fuzz_stride_two_load_from_an_odd_base_%d" % _k, STRIDE_TWO_FROM_AN_ODD_BASE,
           [np.linspace(-4, 4, _k, dtype=F32)[None]], stride_two_from_an_odd_base, init=stride_two_initial(_k),
           note="Halide 14 compiles a stride-2 vector load whose base ends in an odd constant from one element "
                "below the base; from a buffer the kernel allocates, at a base of 0 that is before the "
                "allocation, and LLVM folded the load and what it fed away: O2's row 1 kept its caller "
                "values (differential fuzzer, seed 20261263, program 664); here " + _what,
           entry="main")

accept("fuzz_division_by_a_select_of_a_ramp", """
def main(bool(M,5) A) -> (O1, O2, O3) {
  O1(i, j) = (1 % (i ? A(0, j + 1) : j)) - .25 where i in 0:1 + 1
  O2(i, j) = 3 % (i ? A(0, j + 1) : j) where i in 0:2
  O3(i, j) = 7 / (i ? A(0, j + 1) : j) where i in 0:2
}""", [np.array([[True, False, True, True, False]])],
       lambda A: [np.array([[-0.25, -0.25, 0.75, 0.75], [-0.25] * 4], F32),
                  np.array([[0, 0, 1, 0], [0, 0, 0, 0]], np.int32),
                  np.array([[0, 7, 3, 2], [0, 7, 7, 0]], np.int32)],
       note="LLVM 14 moved a vector % into the arms of the select its divisor was made of; the arm of j's "
            "ramp, whose lane 0 is 0, made that division undefined behaviour (the guard never divides by "
            "0), so LLVM took the other arm and 1 % (i ? A(0, j + 1) : j) gave 0 in every lane "
            "(differential fuzzer, seed 20261271, program 1246)",
       entry="main")

accept("fuzz_update_of_a_term_times_a_float_comparison_that_folds_to_zero", """
def main(float(K,K) X) -> (O, P) {
  O(i) +=! X(i, j) * ((-0.3 <= K) ? 0.0 : 1.0)
  P(i) +=! (K < 0.5 ? 1.0 : 0.0) * X(i, j)
}""", [np.array([[np.nan, 2, 3], [4, 0, np.inf], [7, 8, 9]], F32)],
       lambda X: [np.array([np.nan, np.nan, 0], F32)] * 2,
       note="as fuzz_update_of_a_term_that_folds_to_zero, where the 0 comes from a float comparison of "
            "sizes: its strict_float hid it from the check that keeps x * 0 whole, not from TrimNoOps "
            "(gradient fuzzer, seed 20261294, program 955)",
       entry="main")


def index_against_values(A, B):
    j, a = np.arange(B.shape[0])[None, :], A[:, None].astype(np.int64)
    with np.errstate(divide="ignore"):
        o1 = (B[None, :] / np.maximum(j, a)).astype(F32)
    return [o1, np.where(a <= j, B[None, :], F32(-1)).astype(F32), np.minimum(j, a).astype(np.int32)]


accept("fuzz_index_compared_with_a_value_at_the_int32_limits", """
def main(int32(M) A, float32(N) B) -> (O1, O2, O3) {
  O1(i, j) = B(j) / max(j, A(i))
  O2(i, j) = A(i) <= j ? B(j) : -1
  O3(i, j) = min(j, A(i)) where j in 0:N
}""", [np.array([I32_MAX, I32_MAX - 5, I32_MAX - 20, 3, -2, I32_MIN, I32_MIN + 5], np.int32),
      np.arange(17, dtype=F32) + 1],
       index_against_values,
       note="Halide 14 split the loop over j where j's vector meets A(i), computing that point from A(i) in "
            "int32 (for max(j, A(i)), (A(i) + 15) / 16): near INT32_MAX or INT32_MIN it wrapped, and the "
            "kernel wrote out of its output (max, the select) or gave j for min(j, INT32_MIN) (differential "
            "fuzzer, seed 20261291, program 8351)",
       entry="main")

def out_amid_odd_bytes(shape, dtype):
    """A contiguous block 8 bytes into a parent of bytes 0xA5: a bool loaded there and stored back
    becomes 1, so a kernel that only reads and rewrites a byte outside its output is caught."""
    n = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    parent = np.full(n + 16, 0xA5, np.uint8)
    out = parent[8:8 + n].view(dtype).reshape(shape)
    out[...] = True if np.dtype(dtype) == np.bool_ else 0
    return out


accept("fuzz_reduction_in_a_register_over_a_loop_that_may_be_empty", """
def main(float(N) A) -> (O2, O4) {
  t1(i, j) *=! A(i) where j in 0:A.0
  O2(i) = t1(0, i - 2)
  O4(i, j) min=! t1(k / 2, j + i) == (O2(0) * A(j))
}""", [np.array([0, 1], F32)],
       lambda A: [np.zeros(4, F32), np.zeros((1, 2), np.bool_)],
       out_layout=out_amid_odd_bytes,
       note="cuda: O4's element was kept in a register over a loop that is empty for some values of the loop "
            "outside, loaded before and stored after it even there, at subscripts outside O4: 2 bytes before "
            "it were rewritten (differential fuzzer, cuda emulation, seed 7501610, program 81)",
       entry="main")

def zero_arm_products(A, D):
    n = A.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.zeros((n, n + 2), F32)  # the term at (i, j): 0 / (10 A(i, j - 1) - 3) * 10 / ..., NaN off A
        for j in range(n + 2):
            if 1 <= j <= n:
                den = A[:, j - 1] * F32(10) + F32(-3)
                t[:, j] = -((F32(0) / den) * F32(10) / den)
            else:
                t[:, j] = np.nan
        d = np.zeros((n, n), F32)
        for i in range(n):
            for j in range(n + 2):
                d[i, min(max(j - 1, 0), n - 1)] += D[i, j] * t[i, j]
    return [d]


accept("fuzz_term_times_a_select_of_the_index_with_a_zero_arm", """
def main(float(N,N) A, float(N,M) D) -> (dA) {
  dA(i0, i1) = 0.0 where i0 in 0:N, i1 in 0:N
  dA(min(max(i, 0), N - 1), min(max(j - 1, 0), N - 1)) += D(i, j) * -(((fmin(3, 0) / (-3 + ((!((j - 1) < 0) && ((j - 1) <= (N - 1))) ? (A(i, j - 1) * 10) : 3.0))) * ((!((j - 1) < 0) && ((j - 1) <= (N - 1))) ? 10 : 0.0)) / (-3 + ((!((j - 1) < 0) && ((j - 1) <= (N - 1))) ? (A(i, j - 1) * 10) : 3.0))) where i in 0:N, j in 0:(N + 2)
}""", [np.arange(1, 17, dtype=F32).reshape(4, 4), np.ones((4, 6), F32)],
       zero_arm_products,
       note="Halide partitioned the loop over j where the selects' conditions change and simplified each "
            "select to its arm there: at j = 0 and j = N + 1 the term became NaN * 0, folded to 0, and the "
            "NaN (0 / 0) was lost (gradient fuzzer, seed 20261320, program 763)",
       entry="main")

accept("fuzz_strided_max_over_an_intermediate", """
def main(int32(2) A, int32(15) I) -> (O2) {
  t1(i, j) +=! I(j) where i in 0:I.0
  O2(i) max=! t1(i, 2 * j) / A.0
}""", [np.array([0, 1], np.int32), (np.arange(15, dtype=np.int32) * 5) % 11],
       lambda A, I: [np.full(15, (((np.arange(15) * 5) % 11)[0::2] // 2).max(), np.int32)],
       note="a max read along 2 * j was split into vector lanes as if j stepped it by one, and Halide 14's "
            "code for that split crashed at run time (SIGSEGV; differential fuzzer, CI at c50add2, program 56)")

accept("fuzz_vector_of_reads_clamped_to_one_element", """
def main(float32(M,M) A, float32(M) B) -> (O1, O2, O3) {
  O1(i) min=! 0 ? A(0, i - 1) : 0 where i in 0:2
  O2(i) +=! B(i) > 0 ? A(0, i - 3) : 0 where i in 0:M
  O3(i) +=! i >= 3 ? A(0, i - 3) : 0 where i in 0:M
}""", [np.arange(16, dtype=F32).reshape(4, 4) + 1, np.full(4, -1, F32)],
       lambda A, B: [np.zeros(2, F32), np.zeros(4, F32), np.array([0, 0, 0, 1], F32)],
       note="every lane of a vector read clamps to one element: Halide 14's FlattenNestedRamps divided by "
            "their stride, 0 (SIGFPE while compiling; seed 62609792, program 687)")

accept("fuzz_tail_vector_of_reads_clamped_to_one_element", """
def main(float32(M,M) A) -> (O1) {
  O1(i) min=! 0 ? A(0, i - 20) : 0 where i in 0:M
}""", [np.ones((17, 17), F32)],
       lambda A: [np.zeros(17, F32)],
       note="the same in the shifted last vector of a longer loop")

accept("fuzz_half_sum_of_a_long_update", """
def main(half(M,M) B, half(M,K) O2) -> (O3) {
  O3(i) +=! B(k, k) - ((1 + ((!((k - 2) < 0)) ? B(i, k - 2) : K)) != ((((k + 1) < M) ? (O2(i, k) + 1e-5) : 2.5e-1) * i))
}""", [np.zeros((3, 3), F16), np.zeros((3, 3), F16)],
       lambda B, O2: [np.full(3, -1, F16)],  # k in 2:3: B(i, k - 2) bounds it (docs/guide/language.md)
       note="a float16 sum is not split into lanes, and Halide's associativity prover is no longer asked: on "
            "this update it took 22 s (seed 102982754, program 462: 15 s)")

accept("fuzz_register_tile_around_a_loop_bounded_by_its_thread_value", """
def f3(uint64(S1,S2) X0, uint64 X1) -> (O1, O2) {
  O1(i, j, k) min=! X0(j, i) + X0(0, l) where k in 0:X0.0
  O2(i, j, k) +=! min(X0(i, l), O1(k, j, j))
}
def f2(uint64(S1,S2) X0) -> (O2) {
  O2(i) = 1.0 where i in 0:0
}
def f1(uint64(S1,S2) X0) -> (t1) {
  t1 = f2(X0)
}
def main(uint64(K,K) A) -> (O1) {
  O1 *=! A(0, 0)
  t2(i, j) += A(i, j)
  t3(i, j) = 0 ? t2(i, 0) : A(j, 0)
  O5 = f1(A)
  t6, O7 = f3(A, O1)
}""", [np.arange(3, 12, dtype=np.uint64).reshape(3, 3)],
       lambda A: [np.array(3, np.uint64)], entry="main",
       note="cuda: a loop whose bound is a register-tiled thread loop's value (c6 < c5) was printed once for "
            "all copies (its header's text ran 'c5' into the next term): the emulation's compile failed "
            "(seed 83828730, program 108)")

accept("fuzz_product_of_bools_cast_to_uint32", """
def main(float32 A, bool(N,N) C) -> (O2) {
  O2(i, j) min=! uint32(A() || 0) * C(0, j) where exists C(k, i)
}""", [np.array(2.0, F32), np.array([[True, False], [True, True]])],
       lambda A, C: [np.array([[1, 0], [1, 0]], u32)],
       note="Halide 14's intrinsic matching narrowed the product of two casts from bool and failed an "
            "internal assertion (\"Attempting to narrow a 1-bit type\"; seed 106999742, program 490)")

accept("fuzz_float_cast_to_int64_is_opaque", """
def f(float(N) A) -> (O, P) {
  O(i) = long(A(i)) != 0
  P(i) = 1 && long(1 / A(i))
}""", [np.array([-0.3, 0.5, 2, -3, NAN, 1e30], F32)],
       lambda A: [np.array([False, False, True, True, False, True]), np.array([True, True, False, False, False, False])],
       note="Halide's simplifier derived bounds from the int64 limits of the saturating select")

_I64 = np.iinfo(np.int64)
_U64 = np.iinfo(np.uint64)
accept("fuzz_gather_through_float_to_int64", """
def f(int8(N,N) A) -> (O, S, U) {
  L(i) = long(float(A(i, 1)))
  O(i) = L(int32(L(i)))
  S(i) = long(A(i, 0) * 1e30)
  U(i) = uint64(A(i, 0) * 1e30)
}""", [np.array([[1, 0, 0], [-1, 2, 0], [0, 0, 0]], np.int8)],
       lambda A: [np.array([0, 0, 0], np.int64), np.array([_I64.max, _I64.min, 0], np.int64),
                  np.array([_U64.max, 0, 0], np.uint64)],
       note="Halide 14 bounded the value of int64's saturating select by [0, 1] (from the limits) "
            "and clamped the gather's index L(1) = 2 into them, reading L(1) (seed 20261208, "
            "case 319); the limits still saturate")

accept("fuzz_nan_from_a_float_call_to_integer", """
def f(float(N) F) -> (A, B, C, D) {
  A(i) = int32(fma(F(i), 2, 1))
  B(i) = int32(sqrt(F(i)))
  C(i) = long(floor(F(i)))
  D(i) = int8(round(F(i)))
}""", [np.array([NAN, -NAN, 1.5, -2.5], F32)],
       lambda F: [np.array([0, 0, 4, -4], np.int32), np.array([0, 0, 1, 0], np.int32),
                  np.array([0, 0, 1, -3], np.int64), np.array([0, 0, 2, -2], np.int8)],
       note="LLVM compiled Halide's calls (floor, sqrt, llvm.fma) with fast-math flags, took their results "
            "for never NaN and folded the cast's NaN test away: 2147483647 for NaN (differential fuzzer, "
            "seed 20261315, program 233)")

accept("fuzz_register_block_row_wider_than_the_registers", """
def main(double(M,K) A, double(K,N) B) -> (O1) {
  O1(i, j) +=! B(0, j) * A(i, k)
}""", [np.full((1, 1), 2.0), np.arange(1.0, 26.0).reshape(1, 25)],
       lambda A, B: [2.0 * B], options={"cpu.vectorize": "1", "cpu.tile": "48x64"},
       note="25 scalar accumulators a row left room for 0 rows of them: a split by 0, which Halide "
            "compiled to no loop, and O1 was never written (differential fuzzer, seed 20261553, "
            "program 425)")

accept("fuzz_reduction_in_a_narrower_consumer", """
def main(double(N,N) B, float32(N) D) -> (O3) {
  t1(i) +=! 0 ? D(j) : B(0, i)
  O3(i) = B(i + 1, 0) ? t1(i) : 0
}""", [np.zeros((2, 2)), np.zeros(2, F32)], lambda B, D: [np.zeros(1)],
       note="a reduction was computed inside a consumer with fewer elements (tiles shifted below 0)")

accept("fuzz_negative_zero", """
def f(int8(N) I) -> (O, P, Q) {
  O(i) = I(i) - (1 / (-0.0))
  P(i) = 1 / double(-0.0) + I(i)
  Q(i) = -(float(I(i)) * 0)
}""", [np.ones(2, i8)], lambda I: [np.full(2, INF, F32), np.full(2, -INF, F64), np.full(2, -0.0, F32)],
       rtol=0, atol=0, note="Halide's -x is 0 - x (+0 for x = 0); the float constant -0.0 was lost")

accept("fuzz_unsigned_product_of_negations", """
def f(uint16(N,N) X) -> (O) { O(i, j) *=! -X(j / 1, k) where i in 0:1 }""", [np.full((4, 4), 3, np.uint16)],
       lambda X: [np.full((1, 4), (65536 - 3) ** 4 % 65536, np.uint16)],
       note="rfactor was asked for an update Halide's prover rejects")

accept("fuzz_output_read_before_written_by_another_output", """
def main(float(M) B) -> (O2, O3) {
  O3(i, j) min=! (B(i) ? O2(0) : 1) % B(j)
  O2(i) = 1 where i in 0:1
}""", [np.array([-3], F32)], lambda B, init: [np.ones(1, i32), np.array([[-1.0]], F32)],
       init=lambda r: [np.full(1, 2, i32), np.zeros((1, 1), F32)], rtol=0, atol=0,
       note="O3 reads O2's entry value; the pipeline also writes O2 (a snapshot is taken first)")

accept("fuzz_float_modulo_zero_has_the_divisors_sign", """
def f(float(N) A, float(N) B) -> (O) { O(i) = 1 / (A(i) % B(i)) }""",
       [np.array([-4, -4, 4, 4, -0.0], F32), np.array([-4, 1, -1, 2, 3], F32)],
       lambda A, B: [np.array([-INF, INF, -INF, INF, INF], F32)], rtol=0, atol=0)

accept("fuzz_integer_constants_folded_with_the_language_rules", """
def f(int32(N) A) -> (O, P, Q, R) {
  O(i) = 1 % 2147483647 + A(i)
  P(i) = (-2147483647 - 1) / -1 + A(i)
  Q(i) = 2147483647 * 2 + A(i)
  R(i) = int8(-128) / int8(-1) + A(i)
}""", [np.zeros(2, i32)], lambda A: [np.ones(2, i32), np.full(2, I32_MIN, i32), np.full(2, -2, i32),
                                     np.full(2, -128, i32)],
       note="Halide's folding of 1 % 2147483647 overflowed at compile time")

accept("fuzz_divisor_found_constant_by_folding", """
def main(uint32(M) A) -> (O, P) {
  O(i) = (0 < A(i)) % abs(2147483647)
  P(i) = int32(A(i)) / abs(-2147483647)
}""", [np.array([0, 3, 2147483647], np.uint32)],
       lambda A: [np.array([0, 1, 1], i32), np.array([0, 0, 1], i32)],
       note="a divisor that is constant only once folded (abs of a literal): Halide's lowering of "
            "% 2147483647 overflowed at compile time (differential fuzzer, seed 128853225)")

accept("fuzz_copysign_of_a_computed_nan", """
def main(float(N) A, float(N) B, half(N) H) -> (O, P) {
  O(i) = copysign(2.0, pow(A(i), B(i)))
  P(i) min=! copysign(1, min(pow(H(k), half(B(i))), 0))
}""", [np.array([-2, 4, -8], F32), np.array([0.5, 0.5, 1.0], F32), np.array([-2, 4, -8], np.float16)],
       lambda A, B, H: [np.array([2, 2, -2], F32), np.array([1, 1, -1], np.float16)],
       note="copysign counts a NaN's sign as positive: pow of a negative base makes a NaN whose sign "
            "bit glibc, Halide and CUDA set differently, and copysign showed it (differential fuzzer, "
            "seed 96812151, program 428)")

def _rows_cut_by_a_diagonal(A, C):
    O = np.repeat(A.astype(F32)[:, None], A.size, axis=1)
    for i in range(2):
        O[i, :] = A.astype(F32) + C[i, i]
    return [O]


accept("fuzz_scheduler_explodes", """
def main(int32(L) A, bool(2,2) C) -> (float32(L,L) O) {
  t(i) = A(i)
  O(i, j) min=! t(i)
  O(i, j) = t(j) + C(i, i)
}""", [np.arange(23, dtype=i32) - 11, np.array([[True, False], [False, True]])], _rows_cut_by_a_diagonal,
       options={"cuda.schedule_time": "400"},
       note="cuda: isl's scheduler ran for minutes on this at L=23 (0.2 s at L=20; differential fuzzer, seed "
            "4242): it is stopped after cuda.schedule_time (5 s by default; 0.4 s here, as the case runs in many "
            "tests) and min fusion schedules it")

accept("fuzz_mapped_member_without_a_loop", """
def f2(long(S1) X0) -> (O1) {
  O1(i) +=! X0(i)
}
def f1(int64(S1) X0) -> (O1) {
  O1 = f2(X0)
}
def main(int64(M) A, int16(N) C) -> (O2) {
  O1 = f1(A)
  O2(i, j, k) +=! atan(C(m)) * (O1(i) > C(k)) where j in 0:A.0
}""", [np.array([4, 0], np.int64), np.array([0, 1], np.int16)],
       lambda A, C: [np.broadcast_to((np.arctan(C.astype(F32)).sum(dtype=F32) * (A[:, None] > C[None, :]))[:, None, :],
                                     (2, 2, 2)).astype(F32)], entry="main",
       note="cuda: isl printed no loop of the block-mapped member (one value), and the printer mapped the next "
            "loop under the mark instead, a member that carried the reduction's init: blocks raced (differential "
            "fuzzer, seed 247237189, program 179)")

accept("fuzz_float_literal_of_bool_type", """
def main() -> (bool(4) O) { O(i) = 0.5 }""", [], lambda: [np.ones(4, np.bool_)],
       note="a float literal settled into bool is true when nonzero, as a cast")

def _exp32(A):
    with np.errstate(over="ignore"):
        return np.exp(A.astype(F64)).astype(F32)


_EXP_X = np.concatenate([np.linspace(-110, 95, 2001, dtype=F32), np.array([NAN, INF, -INF, 0, -0.0, 1e-30], F32)])
accept("exp_one_definition", """
def f(float(N) A) -> (O) { O(i) = exp(A(i)) }""", [_EXP_X], lambda A: [_exp32(A)], ulps=2,
       note="src/support/exp_f32.h on both backends: within 2 ulp of the correctly rounded exp")

def _rows_with_nans(dtype):
    A = np.linspace(-3, 3, 5 * 203, dtype=F64).reshape(5, 203).astype(dtype)
    A[1, 200] = np.nan  # in the last, partial vector
    A[2, :] = -np.inf
    A[3, 7] = -np.nan
    A[4, ::2] = -0.0
    A[4, 1::2] = 0.0
    return A


def _nan_rows_max_min(A, B):
    with np.errstate(invalid="ignore"):
        return [np.maximum(A.max(axis=1), B), A.min(axis=1)]


accept("float_max_min_along_rows_in_lanes", """
def f(double(N,D) A, double(N) B) -> (M, L) {
  M(n) = B(n)
  M(n) max= A(n,d)
  L(n) min=! A(n,d)
}""", [_rows_with_nans(F64), np.array([0, 0, -5, 0, 0], F64)], _nan_rows_max_min, rtol=0, atol=0,
       note="float max=/min= along a row run on ordered integer keys in vector lanes (cpu): NaN of "
            "either sign wins, infinities and zeros kept, a max= starting from the previous values")

accept("half_max_min_along_rows_in_lanes", """
def f(half(N,D) A, half(N) B) -> (M, L) {
  M(n) = B(n)
  M(n) max= A(n,d)
  L(n) min=! A(n,d)
}""", [_rows_with_nans(np.float16), np.array([0, 0, -5, 0, 0], np.float16)], _nan_rows_max_min, rtol=0, atol=0)

accept("long_1d_stage_in_parallel_chunks", """
def f(float(N) A) -> (O) { O(i) = A(i) + 1 }""", [np.arange(20031, dtype=F32)], lambda A: [A + 1],
       note="was vectorised, then split into chunks of 4096 vectors shifted below index 0")

accept("fuzz_float_literal_rounding_to_negative_zero", """
def main(uint16(M) B) -> (O) { O(i) = (1.0 / (-5e-324)) + B(i) }""", [np.zeros(2, np.uint16)],
       lambda B: [np.full(2, -INF, F32)], rtol=0, atol=0,
       note="-5e-324 as float32 is -0.0, whose sign Halide's float constants lose")

accept("fuzz_float_product_is_not_reassociated", """
def main(float(N,M) A) -> (O) { O(i) *=! A(i, j) }""",
       [np.array([[0, 1e30, 1e30, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]], F32)],
       lambda A: [np.zeros(1, F32)], rtol=0, atol=0,
       note="in lanes, 1e30 * 1e30 overflows to inf before meeting 0: NaN instead of 0")

accept("fuzz_constant_libm_argument_not_folded", """
def main(float B) -> (O) { O = sinh(4) + B }""", [np.asarray(0, F32)],
       lambda B: [np.asarray(np.sinh(F32(4)), F32)], ulps=2,
       note="LLVM folded sinhf(4) with its own arithmetic, an ulp from glibc's sinhf")

accept("fuzz_int64_max_reduction_compared_with_zero", """
def main(long(M) C) -> (P, Q) {
  t1(i) max=! C(i)
  t4(i) min=! C(i)
  P(i) = 0 > t1(i)
  Q(i) = t4(i) > 5
}""", [np.array([-2, 9], i64)], lambda C: [np.array([True, False]), np.array([False, True])],
       note="with max(INT64_MIN, x) in view Halide's simplifier took 0 > t1 for false")

accept("fuzz_modulo_by_int32_max", """
def f(int32(N) A) -> (O, Q) {
  O(i) = A(i) % 2147483647
  Q(i) = (A(i) < 1) % 2147483647 + (1.0 < 1) % 2147483647
}""", [np.array([-5, I32_MAX, I32_MIN, 7], i32)],
       lambda A: [np.array([emod(int(a), I32_MAX) for a in A], i32), np.array([1, 0, 1, 0], i32)],
       note="Halide's lowering of % 2147483647 overflowed while folding constants")

accept("fuzz_libm_of_a_constant_expression_not_folded", """
def main(float(N,M,N) A) -> (O) { O(i, j) = cosh(-M) + A(0, i, j) }""", [np.zeros((1, 1, 1), F32)],
       lambda A: [np.full((1, 1), np.cosh(F32(-1)), F32)], ulps=2,
       note="LLVM folded coshf(-1) (M is a constant once sizes are known)")

def _libm_f32(name, x):
    """The C library's float function `name` at x, as the reference and cpu backends call it."""
    import ctypes
    f = getattr(ctypes.CDLL("libm.so.6"), name)
    f.restype, f.argtypes = ctypes.c_float, [ctypes.c_float]
    return F32(f(float(x)))


accept("fuzz_libm_of_a_size_is_the_c_librarys", """
def main(int64(M,M) A) -> (O1, O2) {
  O1 = sin(M)
  O2 = sinh(4) + cos(M + 0.5)
}""", [np.zeros((34, 34), i64)],
       lambda A: [np.asarray(_libm_f32("sinf", 34), F32),
                  np.asarray(_libm_f32("sinhf", 4) + _libm_f32("cosf", 34.5), F32)],
       rtol=0, atol=0, backends=("reference", "cpu"),
       note="LLVM folded sinf(34) (a size, so a constant) correctly rounded, 1 ulp from glibc's: the "
            "0 the argument's bits were xored with was loaded from a constant global (CI at f2d566f)")

accept("fuzz_integer_literal_of_a_half_is_rounded_to_half", """
def main(int16(2,L) A) -> (half(L) O1, O4) {
  O1(i) = 0
  O4(i, j) = 2147483647 * O1(j) where i in 0:1
}""", [np.zeros((2, 2), np.int16)],
       lambda A: [np.zeros(2, F16), np.full((1, 2), NAN, F16)], rtol=0, atol=0,
       note="the cuda printer wrote 2147483647 as a float, not as the half it is (inf): inf * 0 is NaN, "
            "2147483647.0f * 0 was 0 (differential fuzzer on the emulation, seed 111071554, program 132)")

accept("fuzz_transposed_min_on_ordered_keys_read_by_a_later_statement", """
def main(float32(N,M) A, bool(M,N,N) B) -> (t2) {
  t1(i, j) min=! B(0, j, k) where i in 0:N
  t1(i, j) max= A(i, 0)
  t2(i, j) = t1(i, j)
}""", [np.arange(-8, 12, dtype=F32).reshape(4, 5) / 4, (np.arange(80).reshape(5, 4, 4) % 7 != 3)],
       lambda A, B: [np.maximum(B[0].min(axis=1).astype(F32)[None, :], A[:, :1])], rtol=0, atol=0,
       note="cpu: a float min=! (of bool values) computed transposed on ordered keys was copied back without "
            "decoding its keys, and the max= after it combined an int32 with a float: TC_ERROR_INTERNAL "
            "'is_nan only works for float' (seed 212672514, program 357)")

accept("transposed_product_blocked_along_a_dimension_its_host_loops_over", """
def f(float(A,D,B) In1, float(C,D) In2) -> (Out) { Out(c,b,a) +=! In1(a,d,b) * In2(c,d) }
""", [np.arange(9 * 16 * 8, dtype=F32).reshape(9, 16, 8) % 7 - 3, np.arange(5 * 16, dtype=F32).reshape(5, 16) % 5 - 2],
       lambda In1, In2: [np.einsum("adb,cd->cba", In1.astype(F64), In2.astype(F64)).astype(F32)],
       options={"cpu.contract": "0"}, backends=("reference", "cpu"),
       note="cpu.transpose=auto computed Out(c,b,a) transposed inside blocks of (a, b) rows and register-blocked "
            "it along c, which the blocks' host loops over one value at a time: the block was shifted back "
            "to read In2 at c = -4 (TC_ERROR_INTERNAL 'failed at run time'; found with A=B=D=72, C=5)")

accept("fuzz_guarded_read_of_a_reduction_not_hosted_pointwise", """
def main(float32(M) A, float(M,M) B) -> (O5) {
  O2(i, j) = B(i, 1) where j in 0:1
  t3(i) +=! O2(0, j) % A(i)
  O5(i) = 0 ? 1 : t3(i)
}""", [np.zeros(3, F32), np.ones((3, 3), F32)], lambda A, B: [np.full(3, NAN, F32)], rtol=0, atol=0,
       note="a guarded read is clamped and checked: the reduction was computed tile by tile inside "
            "its reader as if read pointwise, and a tile read A at 3")

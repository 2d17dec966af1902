"""cases_accept.py - TC programs that must be accepted, with NumPy expectations.

Each case's inputs come from a fixed-seed generator (seeded by the case name); `expect` computes
the outputs independently with NumPy (or by hand), with the dtypes the typing rules give:
output dtype = promotion of the RHS types (float beats int, wider wins, same-width
signed/unsigned -> unsigned, bool in arithmetic -> int32, literals are weak, index variables
and size names are int32, comparisons are bool). Outputs are handed to tc_run filled with
garbage (corpus.sentinel), so elements no statement writes must come back 0.
"""
import math

import numpy as np

from corpus import (Accept, BF16, F16, F32, F64, bf16, from_bf16, rf, ri, full_range, out_sliced, out_fortran,
                    out_offset)

i8, i16, i32, i64 = np.int8, np.int16, np.int32, np.int64
u8, u16, u32, u64 = np.uint8, np.uint16, np.uint32, np.uint64
B = np.bool_

CASES = []


def case(*args, **kw):
    CASES.append(Accept(*args, **kw))


def f64(a):
    return np.asarray(a, F64)


def conv2d_ref(I, W, sh=1, sw=1):
    n, c, h, w = I.shape
    f, c2, kh_, kw_ = W.shape
    ho, wo = (h - kh_) // sh + 1, (w - kw_) // sw + 1
    O = np.zeros((n, f, ho, wo))
    for kh in range(kh_):
        for kw in range(kw_):
            patch = f64(I)[:, :, kh:kh + sh * (ho - 1) + 1:sh, kw:kw + sw * (wo - 1) + 1:sw]
            O += np.einsum("nchw,fc->nfhw", patch, f64(W)[:, :, kh, kw])
    return O


_erf = np.vectorize(math.erf, otypes=[F64])

# ============================================================================================
# Linear algebra
# ============================================================================================

case("matmul", """
def matmul(float(M,K) A, float(K,N) B) -> (C) {
  C(m,n) +=! A(m,k) * B(k,n)
}""", lambda r: [rf(r, 5, 7), rf(r, 7, 3)],
     lambda A, B: [(f64(A) @ f64(B)).astype(F32)], red=7)

case("matmul_f64", """
def matmul(double(M,K) A, double(K,N) B) -> (C) {
  C(m,n) +=! A(m,k) * B(k,n)
}""", lambda r: [rf(r, 4, 9, dtype=F64), rf(r, 9, 6, dtype=F64)],
     lambda A, B: [A @ B], red=9)

case("matmul_int32_wraps", """
def matmul(int32(M,K) A, int32(K,N) B) -> (C) {
  C(m,n) +=! A(m,k) * B(k,n)
}""", lambda r: [full_range(r, i32, 3, 4), full_range(r, i32, 4, 2)],
     lambda A, B: [np.einsum("mk,kn->mn", A.astype(i64), B.astype(i64)).astype(i32)])

case("tmm", """
def tmm(float(M,K) A, float(N,K) B) -> (C) {
  C(m,n) +=! A(m,kk) * B(n,kk)
}""", lambda r: [rf(r, 6, 5), rf(r, 4, 5)],
     lambda A, B: [(f64(A) @ f64(B).T).astype(F32)], red=5)

case("tbmm", """
def tbmm(float(B,N,M) X, float(B,K,M) Y) -> (Z) {
  Z(b,n,k) +=! X(b,n,m) * Y(b,k,m)
}""", lambda r: [rf(r, 3, 4, 5), rf(r, 3, 2, 5)],
     lambda X, Y: [np.einsum("bnm,bkm->bnk", f64(X), f64(Y)).astype(F32)], red=5)

case("batched_mm", """
def bmm(float(B,M,K) X, float(B,K,N) Y) -> (Z) {
  Z(b,m,n) +=! X(b,m,k) * Y(b,k,n)
}""", lambda r: [rf(r, 2, 3, 6), rf(r, 2, 6, 4)],
     lambda X, Y: [np.einsum("bmk,bkn->bmn", f64(X), f64(Y)).astype(F32)], red=6)

case("mv", """
def mv(float(R,C) A, float(C) x) -> (o) {
  o(i) +=! A(i,j) * x(j)
}""", lambda r: [rf(r, 7, 5), rf(r, 5)],
     lambda A, x: [(f64(A) @ f64(x)).astype(F32)], red=5)

case("mv_paper_two_statements", """
def mv(float(M,K) A, float(K) x) -> (C) {
  C(i) = 0
  C(i) += A(i,k) * x(k)
}""", lambda r: [rf(r, 6, 4), rf(r, 4)],
     lambda A, x: [(f64(A) @ f64(x)).astype(F32)], red=4,
     note="the first statement's i ranges over C's extent; 0 is a weak literal -> float32")

case("outer_product", """
def outer(float(M) a, float(N) b) -> (O) {
  O(i,j) = a(i) * b(j)
}""", lambda r: [rf(r, 4), rf(r, 6)],
     lambda a, b: [np.outer(a, b).astype(F32)])

case("transpose", """
def transpose(float(M,N) A) -> (T) {
  T(j,i) = A(i,j)
}""", lambda r: [rf(r, 3, 5)], lambda A: [A.T.copy()])

case("bias_broadcast", """
def addbias(float(M,N) A, float(N) b) -> (O) {
  O(i,j) = A(i,j) + b(j)
}""", lambda r: [rf(r, 4, 3), rf(r, 3)], lambda A, b: [A + b[None, :]])

case("diag_and_trace", """
def diag(float(N,N) A) -> (d, t) {
  d(i) = A(i,i)
  t() +=! A(i,i)
}""", lambda r: [rf(r, 5, 5)],
     lambda A: [np.diag(A).copy(), np.asarray(np.trace(f64(A)), F32)], red=5)

case("sgemm_paper", """
def sgemm(float a, float b, float(N,M) A, float(M,K) B) -> (C) {
  C(i,j) = b * C(i,j)              # initialization: reads the caller's C
  C(i,j) += a * A(i,k) * B(k,j)    # accumulation
}""", lambda r: [np.asarray(1.5, F32), np.asarray(-0.5, F32), rf(r, 4, 6), rf(r, 6, 3)],
     lambda a, b, A, B, init: [(f64(b) * f64(init[0]) + f64(a) * (f64(A) @ f64(B))).astype(F32)],
     init=lambda r: [rf(r, 4, 3)], red=6)

# ============================================================================================
# Convolutions and pooling
# ============================================================================================

case("conv2d", """
def conv2d(float(B,IP,H,W) input, float(OP,IP,KH,KW) weight) -> (output) {
  output(b,op,h,w) +=! input(b,ip,h + kh,w + kw) * weight(op,ip,kh,kw)
}""", lambda r: [rf(r, 2, 3, 6, 5), rf(r, 4, 3, 3, 2)],
     lambda I, W: [conv2d_ref(I, W).astype(F32)], red=18)

case("sconv2d_stride2", """
def sconv2d(float(N,C,H,W) I, float(F,C,KH,KW) W1, float(F) B) -> (O) {
  O(n,f,h,w) = B(f)
  O(n,f,h,w) += I(n,c, 2*h + kh, 2*w + kw) * W1(f,c,kh,kw)
}""", lambda r: [rf(r, 2, 3, 7, 8), rf(r, 4, 3, 3, 2), rf(r, 4)],
     lambda I, W, b: [(conv2d_ref(I, W, 2, 2) + f64(b)[None, :, None, None]).astype(F32)],
     red=18, note="paper's sconv2d with literal strides; H=7,KH=3 -> 3 rows, W=8,KW=2 -> 4 cols")

case("group_conv", """
def gconv(float(N,G,C,H,W) I, float(G,F,C,KH,KW) W1) -> (O) {
  O(n,g,f,h,w) +=! I(n,g,c,h + kh,w + kw) * W1(g,f,c,kh,kw)
}""", lambda r: [rf(r, 2, 2, 3, 5, 4), rf(r, 2, 3, 3, 2, 2)],
     lambda I, W: [np.stack([conv2d_ref(I[:, g], W[g]) for g in range(I.shape[1])], 1)
                   .astype(F32)], red=12)

case("conv1d_paper", """
def conv1d(float(M) I, float(N) K) -> (O) {
  O(i) +=! K(x) * I(i + x)
}""", lambda r: [rf(r, 10), rf(r, 3)],
     lambda I, K: [np.correlate(f64(I), f64(K), "valid").astype(F32)], red=3)

case("maxpool2x2", """
def maxpool2x2(float(B,C,H,W) I) -> (out) {
  out(b,c,i,j) max=! I(b,c, 2 * i + kh, 2 * j + kw)
     where kh in 0:2, kw in 0:2
}""", lambda r: [rf(r, 2, 3, 5, 6)],
     lambda I: [I[:, :, :4, :6].reshape(2, 3, 2, 2, 3, 2).max(axis=(3, 5))])

# The docs' range syntax `k = [lo, hi[`: the two seed examples as written. The
# overview's maxpool (its closing brace added) uses 'max=' without '!', so it also reads the
# caller's output. As written, kw offsets the row index and kh the column.
case("maxpool2x2_overview", """
def maxpool2x2(float(B,C,H,W) input) -> (output) {
output(b,c,i,j) max= input(b,c,2*i + kw, 2*j + kh)
where kw = [0, 2[, kh = [0, 2[
}""", lambda r: [rf(r, 2, 3, 5, 6)],
     lambda I, init: [np.maximum(init[0], I[:, :, :4, :6].reshape(2, 3, 2, 2, 3, 2).max(axis=(3, 5)))],
     init=lambda r: [rf(r, 2, 3, 2, 3)])

# The semantics' average_pool_2: '=' over k, which the where clause ranges, sums over k (the
# spec calls it equivalent to B(2*i) + B(2*i + 1); docs/guide/language.md).
case("average_pool_2_semantics", """
def average_pool_2(float(I) B) -> A {
  A(i) = B(2*i + k) where k = [0, 2[
}""", lambda r: [rf(r, 9)],
     lambda B: [(f64(B)[0:8:2] + f64(B)[1:8:2]).astype(F32)], red=2)

case("bracket_range_paren_close", """
def shifted(float(N) A) -> (O) {
  O(i) = A(i) where i = [1, N - 1)
}""", lambda r: [rf(r, 7)],
     lambda A: [np.concatenate([[0], A[1:6]]).astype(F32)])

case("avgpool2x2", """
def avgpool2x2(float(B,C,H,W) I) -> (out) {
  out(b,c,i,j) +=! I(b,c, 2*i + kh, 2*j + kw) / 4 where kh in 0:2, kw in 0:2
}""", lambda r: [rf(r, 2, 2, 6, 7)],
     lambda I: [(f64(I)[:, :, :6, :6].reshape(2, 2, 3, 2, 3, 2).sum(axis=(3, 5)) / 4)
                .astype(F32)], red=4)

# ============================================================================================
# Normalisations, ML layers
# ============================================================================================


def softmax_ref(I):
    x = f64(I)
    m = x.max(axis=1)
    e = np.exp(x - m[:, None])
    s = e.sum(axis=1)
    return m, s, e / s[:, None]


case("softmax_outputs", """
def softmax(float(N,D) I) -> (O, maxVal, expSum) {
  maxVal(n) max=! I(n,d)
  expSum(n) +=! exp(I(n,d) - maxVal(n))
  O(n,d) = exp(I(n,d) - maxVal(n)) / expSum(n)
}""", lambda r: [rf(r, 4, 6, lo=-3, hi=3)],
     lambda I: [softmax_ref(I)[2].astype(F32), softmax_ref(I)[0].astype(F32),
                softmax_ref(I)[1].astype(F32)], red=6, ulps=16)

case("softmax_temporaries", """
def softmax(float(N,D) I) -> (O) {
  mx(n) max=! I(n,d)
  e(n,d) = exp(I(n,d) - mx(n))
  s(n) +=! e(n,d)
  O(n,d) = e(n,d) / s(n)
}""", lambda r: [rf(r, 3, 7, lo=-4, hi=4)],
     lambda I: [softmax_ref(I)[2].astype(F32)], red=7, ulps=16)

case("logsumexp", """
def logsumexp(double(N,D) I) -> (L) {
  mx(n) max=! I(n,d)
  s(n) +=! exp(I(n,d) - mx(n))
  L(n) = log(s(n)) + mx(n)
}""", lambda r: [rf(r, 5, 4, lo=-5, hi=5, dtype=F64)],
     lambda I: [np.log(np.exp(I - I.max(1)[:, None]).sum(1)) + I.max(1)], red=4, ulps=16)


def layernorm_ref(I, g, b):
    x = f64(I)
    mu = x.mean(axis=1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
    return ((x - mu) / np.sqrt(var + 1e-5) * f64(g) + f64(b)).astype(F32)


case("layernorm", """
def layernorm(float(N,D) I, float(D) gamma, float(D) beta) -> (O) {
  mean(n) +=! I(n,d) / D
  xc(n,d) = I(n,d) - mean(n)
  var(n) +=! xc(n,d) * xc(n,d) / D
  O(n,d) = xc(n,d) * rsqrt(var(n) + 1e-5) * gamma(d) + beta(d)
}""", lambda r: [rf(r, 3, 8, lo=-2, hi=2), rf(r, 8), rf(r, 8)],
     lambda I, g, b: [layernorm_ref(I, g, b)], red=8, ulps=32)

case("lut_embedding_bag", """
def lut(float(E,D) LUT, int32(B,L) I) -> (O) {
  O(b,d) +=! LUT(I(b,l), d)
}""", lambda r: [rf(r, 10, 4), ri(r, 3, 5, lo=0, hi=10)],
     lambda T, I: [f64(T)[I].sum(axis=1).astype(F32)], red=5)

case("lut_2LUT", """
def _2LUT(float(E1,D) LUT1, int32(B,L1) I1, float(E2,D) LUT2, int32(B,L2) I2) -> (O1, O2) {
  O1(i,j) +=! LUT1(I1(i,k),j)
  O2(i,j) +=! LUT2(I2(i,k),j)
}""", lambda r: [rf(r, 8, 3), ri(r, 4, 2, lo=0, hi=8), rf(r, 5, 3), ri(r, 4, 6, lo=0, hi=5)],
     lambda L1, I1, L2, I2: [f64(L1)[I1].sum(1).astype(F32), f64(L2)[I2].sum(1).astype(F32)],
     red=6)

case("embedding_int64_index", """
def embed(float(E,D) LUT, int64(B) I) -> (O) {
  O(b,d) = LUT(I(b), d)
}""", lambda r: [rf(r, 9, 5), ri(r, 6, lo=0, hi=9, dtype=i64)], lambda T, I: [T[I]])

case("fcrelu", """
def fcrelu(float(B,K) I, float(N,K) W, float(N) B1) -> (O) {
  O(b,n) +=! I(b,k) * W(n,k)
  O(b,n) = fmax(O(b,n) + B1(n), 0)
}""", lambda r: [rf(r, 4, 6), rf(r, 5, 6), rf(r, 5)],
     lambda I, W, b: [np.maximum(f64(I) @ f64(W).T + f64(b), 0).astype(F32)], red=6)

case("mlp1_paper", """
def MLP1(float(B,M) I, float(O,N) W1, float(O) B1) -> (O1) {
  O1(b,n) = B1(n)
  O1(b,n) += I(b,m) * W1(n,m)
  O1(b,n) = fmax(O1(b,n), 0)
}""", lambda r: [rf(r, 3, 5), rf(r, 4, 5), rf(r, 4)],
     lambda I, W, b: [np.maximum(f64(I) @ f64(W).T + f64(b), 0).astype(F32)], red=5,
     note="as printed in the paper: W1 is float(O,N) with N = M at run time")


def mlp3_ref(I, W2, B2, W3, B3, W4, B4):
    relu = lambda x: np.maximum(x, 0)
    o2 = relu(f64(I) @ f64(W2).T + f64(B2))
    o3 = relu(o2 @ f64(W3).T + f64(B3))
    return relu(o3 @ f64(W4).T + f64(B4)).astype(F32)


case("mlp3_temporaries", """
def MLP3(float(B,M) I, float(O,M) W2, float(O) B2, float(P,O) W3, float(P) B3,
         float(Q,P) W4, float(Q) B4) -> (O4) {
  O2(b,o) = B2(o)
  O2(b,o) += I(b,m) * W2(o,m)
  O2(b,o) = fmax(O2(b,o), 0)
  O3(b,p) = B3(p)
  O3(b,p) += O2(b,o) * W3(p,o)
  O3(b,p) = fmax(O3(b,p), 0)
  O4(b,q) = B4(q)
  O4(b,q) += O3(b,p) * W4(q,p)
  O4(b,q) = fmax(O4(b,q), 0)
}""", lambda r: [rf(r, 3, 6), rf(r, 5, 6), rf(r, 5), rf(r, 4, 5), rf(r, 4), rf(r, 2, 4), rf(r, 2)],
     lambda *a: [mlp3_ref(*a)], red=16)

# ============================================================================================
# Gathers, ternaries, casts
# ============================================================================================

case("gather", """
def gather(float(N) X, int32(A,B) I) -> (Z) {
  Z(i,j) = X(I(i,j))
}""", lambda r: [rf(r, 7), ri(r, 3, 4, lo=0, hi=7)], lambda X, I: [X[I]])

case("gather_unchecked_clamps", """
def gather(float(N) X, int32(A,B) I) -> (Z) {
  Z(i,j) = X(I(i,j))
}""", lambda r: [rf(r, 7), np.array([[0, 6, 7], [-1, 100, 3]], i32)],
     lambda X, I: [X[np.clip(I, 0, 6)]], options={"checked": "0"},
     note="checked=0: an index out of range is clamped into range, never read outside")

case("row_select_0d_index", """
def rowsel(float(M,N) A, int32 r) -> (O) {
  O(j) = A(r, j)
}""", lambda r: [rf(r, 4, 5), np.asarray(2, i32)], lambda A, k: [A[int(k)].copy()])

case("ternary_shift", """
def shift(float(N) A) -> (O) {
  O(i) = i > 0 ? A(i-1) : 0 where i in 0:N
}""", lambda r: [rf(r, 6)], lambda A: [np.concatenate([[0], A[:-1]]).astype(F32)])

case("ternary_leaky_relu", """
def leaky(float(N) A) -> (O) {
  O(i) = A(i) > 0 ? A(i) : 0.1 * A(i)
}""", lambda r: [rf(r, 9)],
     lambda A: [np.where(A > 0, A, F32(0.1) * A).astype(F32)])

case("ternary_pad", """
def pad(float(N) A) -> (O) {
  O(i) = (i >= 1 && i <= N) ? A(i - 1) : -1 where i in 0:N+2
}""", lambda r: [rf(r, 5)], lambda A: [np.concatenate([[-1], A, [-1]]).astype(F32)])

case("casts", """
def casts(float(N) A, int32(N) I, uint8(N) U) -> (T, H, W, X, Y) {
  T(i) = int32(A(i))
  H(i) = float(I(i)) / 2
  W(i) = int64(U(i)) * 1000
  X(i) = double(A(i))
  Y(i) = uint8(I(i) + 10)
}""", lambda r: [rf(r, 8, lo=-20, hi=20), ri(r, 8, lo=-9, hi=10), ri(r, 8, lo=0, hi=256, dtype=u8)],
     lambda A, I, U: [np.trunc(A).astype(i32), (I.astype(F32) / 2).astype(F32),
                      U.astype(i64) * 1000, A.astype(F64), (I + 10).astype(u8)],
     note="float->int truncates toward zero")

case("cast_bool", """
def castbool(float(N) A) -> (F, I) {
  F(i) = float(A(i) > 0)
  I(i) = int32(A(i) < 0) * 10
}""", lambda r: [rf(r, 7)], lambda A: [(A > 0).astype(F32), (A < 0).astype(i32) * 10])

# ============================================================================================
# Every dtype
# ============================================================================================

_DTYPES = [("uint8", u8), ("uint16", u16), ("uint32", u32), ("uint64", u64), ("int8", i8),
           ("int16", i16), ("int32", i32), ("int64", i64), ("float16", F16), ("float32", F32),
           ("float64", F64), ("bfloat16", BF16)]


def _bf16_steps(A, B):
    """dt's outputs in bfloat16: every operation in float32, rounded to bfloat16; the sum in order."""
    r = lambda x: from_bf16(bf16(x))  # noqa: E731
    a, b = from_bf16(A), from_bf16(B)
    s = F32(0)
    for p in r(a * b):
        s = r(s + p)
    return [bf16(r(r(r(a * b) + a) - b)), bf16(np.asarray(s, F32))]


def _dtype_case(tname, t):
    def inputs(r):
        if t is BF16:
            return [bf16(rf(r, 16)), bf16(rf(r, 16))]
        if np.dtype(t).kind == "f":
            return [rf(r, 16, dtype=t), rf(r, 16, dtype=t)]
        return [full_range(r, t, 16), full_range(r, t, 16)]

    def expect(A, B):
        if t is BF16:
            return _bf16_steps(A, B)
        if np.dtype(t).kind == "f":
            o = (f64(A) * f64(B) + f64(A) - f64(B))
            return [o.astype(t), np.asarray(np.sum(f64(A) * f64(B)), t)]
        with np.errstate(over="ignore"):
            o = A * B + A - B
            s = np.sum(A * B, dtype=t)
        return [o.astype(t), np.asarray(s, t)]

    case("dtype_" + tname, """
def dt(%s(N) A, %s(N) B) -> (O, S) {
  O(i) = A(i) * B(i) + A(i) - B(i)
  S +=! A(i) * B(i)
}""" % (tname, tname), inputs, expect, red=16,
         note="integer arithmetic wraps (two's complement); float16 may be UNSUPPORTED")


for _n, _t in _DTYPES:
    _dtype_case(_n, _t)

case("dtype_bool", """
def logic(bool(N) A, bool(N) B) -> (X, E, C) {
  X(i) = (A(i) && !B(i)) || (!A(i) && B(i))
  E(i) = A(i) == B(i)
  C(i) = !A(i)
}""", lambda r: [r.integers(0, 2, 12).astype(B), r.integers(0, 2, 12).astype(B)],
     lambda A, Bb: [A ^ Bb, A == Bb, ~A])

case("bool_arithmetic_is_int32", """
def boolsum(bool(N) A, bool(N) B) -> (O, S) {
  O(i) = A(i) + B(i)
  S +=! int32(A(i))
}""", lambda r: [r.integers(0, 2, 10).astype(B), r.integers(0, 2, 10).astype(B)],
     lambda A, Bb: [A.astype(i32) + Bb.astype(i32), np.asarray(A.sum(), i32)])

case("type_promotion", """
def promo(int8(N) A, uint8(N) B, int16(N) C, uint16(N) D, int32(N) E, float(N) F, int64(N) G,
          double(N) H) -> (O1, O2, O3, O4, O5, O6, O7) {
  O1(i) = A(i) + B(i)
  O2(i) = C(i) + B(i)
  O3(i) = D(i) + E(i)
  O4(i) = E(i) + F(i)
  O5(i) = F(i) + H(i)
  O6(i) = G(i) * F(i)
  O7(i) = C(i) + D(i)
}""", lambda r: [ri(r, 6, lo=-100, hi=100, dtype=i8), ri(r, 6, lo=0, hi=256, dtype=u8),
                 ri(r, 6, lo=-1000, hi=1000, dtype=i16), ri(r, 6, lo=0, hi=60000, dtype=u16),
                 ri(r, 6, lo=-10**6, hi=10**6), rf(r, 6), ri(r, 6, lo=-50, hi=50, dtype=i64),
                 rf(r, 6, dtype=F64)],
     lambda A, Bu, C, D, E, F, G, H: [
         A.astype(u8) + Bu, C + Bu.astype(i16), D.astype(i32) + E, (E.astype(F32) + F),
         F.astype(F64) + H, (G.astype(F32) * F).astype(F32), C.astype(u16) + D],
     note="same width signed/unsigned -> unsigned; wider wins; float beats int")

case("weak_literals", """
def weak(uint8(N) A, double(N) D, int32(N) I, int16(N) S) -> (O1, O2, O3, O4, O5) {
  O1(i) = A(i) + 1
  O2(i) = D(i) * 0.5
  O3(i) = I(i) * 0.5
  O4(i) = S(i) * 3
  O5(i) = 2 * A(i) - 3
}""", lambda r: [np.array([0, 1, 254, 255, 7, 128], u8), rf(r, 6, dtype=F64), ri(r, 6),
                 ri(r, 6, lo=-20000, hi=20000, dtype=i16)],
     lambda A, D, I, S: [A + u8(1), D * 0.5, I.astype(F32) * F32(0.5), S * i16(3),
                         A * u8(2) - u8(3)],
     note="uint8 + 1 stays uint8 (255 + 1 == 0); int16 * 3 wraps in int16")

case("weak_literal_half", """
def weakh(half(N) H) -> (O, P) {
  O(i) = H(i) * 2
  P(i) = H(i) + 0.25
}""", lambda r: [rf(r, 6, dtype=F16)], lambda H: [H * F16(2), H + F16(0.25)])

case("literal_only_rhs", """
def lit(float(N) A) -> (O, P) {
  O(i) = 3 where i in 0:N
  P(i) = 2.5 where i in 0:N
}""", lambda r: [rf(r, 4)], lambda A: [np.full(4, 3, i32), np.full(4, 2.5, F32)])

case("index_and_size_values", """
def idx(float(N) A) -> (O) {
  O(i) = float(i) + N where i in 0:N
}""", lambda r: [rf(r, 5)], lambda A: [np.arange(5, dtype=F32) + 5])

case("index_grid_int32", """
def grid(float(M,N) A) -> (O) {
  O(i,j) = i * 10 + j - M where exists A(i,j)
}""", lambda r: [rf(r, 3, 4)],
     lambda A: [(np.arange(3)[:, None] * 10 + np.arange(4)[None, :] - 3).astype(i32)])

# ============================================================================================
# 0-d tensors, multiple defs/outputs, temporaries
# ============================================================================================

case("scalar_input", """
def scal(float a, float(N) X, int32 k) -> (Y) {
  Y(i) = a * X(i) + k
}""", lambda r: [np.asarray(2.5, F32), rf(r, 6), np.asarray(-3, i32)],
     lambda a, X, k: [(a * X + F32(k)).astype(F32)])

case("scalar_output_parens", """
def dot(float(N) A, float(N) B) -> (s) {
  s() +=! A(i) * B(i)
}""", lambda r: [rf(r, 9), rf(r, 9)],
     lambda A, Bv: [np.asarray(f64(A) @ f64(Bv), F32)], red=9)

case("scalar_output_bare", """
def dot(float(N) A, float(N) B) -> (s) {
  s +=! A(i) * B(i)
}""", lambda r: [rf(r, 9), rf(r, 9)],
     lambda A, Bv: [np.asarray(f64(A) @ f64(Bv), F32)], red=9)

case("scalar_pointwise", """
def axpb(float a, float b) -> (y, z) {
  y = a * b + 1
  z() = a - b
}""", lambda r: [np.asarray(3.0, F32), np.asarray(0.25, F32)],
     lambda a, b: [np.asarray(a * b + 1, F32), np.asarray(a - b, F32)])

def _limits_case(tname, t):
    signed = np.dtype(t).kind == "i"
    lo, hi = ("-1", "7") if signed else ("0", "5")

    def inputs(r):
        a = full_range(r, t, 9)
        a[0], a[1] = np.iinfo(t).min, np.iinfo(t).max
        return [a]

    case("min_max_identity_" + tname, """
def lim(%s(N) A) -> (mx1, mn1, mx, mn) {
  mx1 max=! %s(%s)
  mn1 min=! %s(%s)
  mx max=! A(i)
  mn min=! A(i)
}""" % (tname, tname, lo, tname, hi), inputs,
         lambda A: [np.asarray(int(lo), t), np.asarray(int(hi), t), np.asarray(A.max(), t),
                    np.asarray(A.min(), t)],
         note="the identity of min=!/max=! (the type's limit) combined with a constant: "
              "Halide 14 once folded max(INT32_MIN * c, -1 * c) to INT32_MIN (differential "
              "fuzzer, seed 180004621)")


for _t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
    _limits_case(_t, np.dtype(_t).type)

case("sum_all_int64", """
def total(int64(M,N) A) -> (s) {
  s +=! A(i,j)
}""", lambda r: [ri(r, 4, 5, lo=-10**12, hi=10**12, dtype=i64)],
     lambda A: [np.asarray(A.sum(), i64)])

_MULTI = """
# three defs in one source
def first(float(N) A) -> (O) {
  O(i) = A(i) + 1
}

def second(float(N) A, float(N) B) -> (O) {
  O(i) = A(i) * B(i)
}

def third(float(M,N) A) -> (O) {
  O(i) +=! A(i,j)
}
"""
case("multi_def_entry_second", _MULTI, lambda r: [rf(r, 5), rf(r, 5)],
     lambda A, Bv: [A * Bv], entry="second", defs=["first", "second", "third"])
case("multi_def_entry_third", _MULTI, lambda r: [rf(r, 3, 4)],
     lambda A: [f64(A).sum(1).astype(F32)], entry="third", red=4)

case("single_def_named_entry", """
def only(float(N) A) -> (O) { O(i) = -A(i) }
""", lambda r: [rf(r, 4)], lambda A: [-A], entry="only")

case("multiple_outputs_mixed_ranks", """
def stats(float(M,N) A) -> (rowsum, colmax, total, scaled) {
  rowsum(i) +=! A(i,j)
  colmax(j) max=! A(i,j)
  total +=! A(i,j)
  scaled(i,j) = A(i,j) / total
}""", lambda r: [rf(r, 3, 4, lo=0.5, hi=1.5)],
     lambda A: [f64(A).sum(1).astype(F32), A.max(0), np.asarray(f64(A).sum(), F32),
                (f64(A) / f64(A).sum()).astype(F32)], red=12)

case("temporaries_chain", """
def chain(float(N) A, float(N) B) -> (O) {
  t1(i) = A(i) + B(i)
  t2(i) = t1(i) * t1(i)
  s +=! t2(i)
  O(i) = t2(i) - s / N
}""", lambda r: [rf(r, 6), rf(r, 6)],
     lambda A, Bv: [((f64(A) + Bv) ** 2 - ((f64(A) + Bv) ** 2).sum() / 6).astype(F32)], red=6)

# ============================================================================================
# Range inference (tc-semantics.md worked examples and more)
# ============================================================================================

case("reverted_small_I", """
def reverted(float(I) B) -> (A) {
  A(i) = B(10 - i)
}""", lambda r: [rf(r, 6)],
     lambda Bv: [np.array([0] * 5 + [Bv[10 - i] for i in range(5, 11)], F32)], dims=[["11"]],
     note="0 <= 10-i < I gives i in max(0, 11-I):11 -> extent 11; A(0..4) unwritten -> 0. "
          "(tc-semantics.md prints 9 - I, which would read B(I) and B(I+1) out of bounds)")

case("reverted_large_I", """
def reverted(float(I) B) -> (A) {
  A(i) = B(10 - i)
}""", lambda r: [rf(r, 15)], lambda Bv: [Bv[10::-1].copy()])

case("subsample_odd", """
def subsample_2(float(I) B) -> (A) {
  A(i) = B(2*i)
}""", lambda r: [rf(r, 7)], lambda Bv: [Bv[0::2].copy()], dims=[["(I + 1)/2"]])

case("subsample_even", """
def subsample_2(float(I) B) -> (A) {
  A(i) = B(2*i)
}""", lambda r: [rf(r, 8)], lambda Bv: [Bv[0::2].copy()])

case("average_pool_2_unrolled", """
def average_pool_2(float(I) B) -> (A) {
  A(i) = B(2*i) + B(2*i + 1)
}""", lambda r: [rf(r, 7)], lambda Bv: [(Bv[0:6:2] + Bv[1:6:2]).astype(F32)],
     dims=[["I/2"]])

case("average_pool_2_where", """
def average_pool_2(float(I) B) -> (A) {
  A(i) +=! B(2*i + k) where k in 0:2
}""", lambda r: [rf(r, 9)], lambda Bv: [(Bv[0:8:2] + Bv[1:8:2]).astype(F32)], red=2)

case("stencil", """
def stencil(float(I) B, float(K) W) -> (A) {
  A(i) +=! B(i + k) * W(k)
}""", lambda r: [rf(r, 9), rf(r, 3)],
     lambda Bv, W: [np.correlate(f64(Bv), f64(W), "valid").astype(F32)], red=3)

case("where_lower_bound", """
def tail(float(N) A) -> (O) {
  O(i) = A(i) where i in 2:N
}""", lambda r: [rf(r, 6)], lambda A: [np.concatenate([[0, 0], A[2:]]).astype(F32)],
     note="O(0), O(1) are not written -> 0")

case("concat_with_where", """
def concat(float(N) A, float(M) B) -> (O) {
  O(i) = A(i) where i in 0:N
  O(i) = B(i - N) where i in N:N+M
}""", lambda r: [rf(r, 4), rf(r, 3)], lambda A, Bv: [np.concatenate([A, Bv])])

case("flip", """
def flip(float(N) A) -> (O) {
  O(i) = A(N - 1 - i)
}""", lambda r: [rf(r, 7)], lambda A: [A[::-1].copy()])

case("reshape_with_where", """
def reshape(float(L) A) -> (O) {
  O(i,j) = A(4*i + j) where j in 0:4
}""", lambda r: [rf(r, 12)], lambda A: [A.reshape(3, 4)])

case("precondition_satisfied", """
def pre(float(I) B, float(L) C, float(J) D) -> (A) {
  A(i,j) = B(i) * C(i + j) * D(j)
}""", lambda r: [rf(r, 3), rf(r, 6), rf(r, 4)],
     lambda Bv, C, D: [(Bv[:, None] * C[np.arange(3)[:, None] + np.arange(4)[None, :]]
                        * D[None, :]).astype(F32)],
     note="C has I + J - 1 elements: exactly enough")

case("tensor_dim_in_where", """
def tdim(float(N) A, float(M) B) -> (O, P) {
  O(i) = A(i) + B(i) where i in 0:B.0
  P(i) = A(i) * 2 where i in 1:A.0 - 1
}""", lambda r: [rf(r, 7), rf(r, 4)],
     lambda A, Bv: [A[:4] + Bv, np.concatenate([[0], A[1:6] * 2]).astype(F32)])

case("exists_in_where", """
def ex(float(N) A, float(M) B) -> (O, P) {
  O(i) = 1.5 where exists A(i)
  P(i) = B(i) * 2 where exists A(i)
}""", lambda r: [rf(r, 5), rf(r, 8)],
     lambda A, Bv: [np.full(5, 1.5, F32), (Bv[:5] * 2).astype(F32)])

# A strided read of a temporary by the shifted last vector of a ShiftInwards tail (M=17: the
# vectors start at 0 and 1): Halide 14 declared the dense load behind t1[ramp(3, 2, 16)]
# 64-byte aligned and the AVX-512 load crashed (differential fuzzer, seed 112122278;
# jit.cpp's ConstantBaseAlignment).
case("strided_read_in_shifted_tail", """
def main(uint64(M,M) B) -> (O2) {
  t1(i, j) min=! 1 where exists B(0, i), j in 0:2
  O2(i) +=! t1(i, 1)
}""", lambda r: [ri(r, 17, 17, lo=0, hi=9, dtype=u64)],
     lambda Bm: [np.ones(17, np.int32)])

# A reduction Halide cannot prove associative (min of booleans built with &&) along a
# contiguous reduction variable: the cpu backend used to rfactor it and failed to compile
# (differential fuzzer, seed 239631165); it stays scalar now (lower.cpp, splittable).
case("unprovable_associativity_stays_scalar", """
def main(float(K) A, uint64(K,K,K) B) -> (O2) {
  t1(i, j) min=! min(0, B(1, 1, i)) && A(k) where exists A(j)
  O2(i) = B(i, 0, 0)
}""", lambda r: [rf(r, 16), ri(r, 16, 16, 16, lo=0, hi=9, dtype=u64)],
     lambda A, Bm: [Bm[:, 0, 0]])

case("let_in_where", """
def let(float(N) A, float(M,N) X) -> (O, S) {
  O(i) = x * x + x where x = A(i) + 1
  S(m) +=! t * t where t = X(m,n)
}""", lambda r: [rf(r, 5), rf(r, 3, 5)],
     lambda A, X: [((A + 1) * (A + 1) + (A + 1)).astype(F32), (f64(X) ** 2).sum(1).astype(F32)],
     red=5)

case("comments", """
# a comment before the def
def commented(float(N) A) -> (O) {  # trailing comment
  # a whole-line comment
  O(i) = A(i) * 3 # another one
  # O(i) = A(i) * 1000 would be wrong
}
# a comment after the def""", lambda r: [rf(r, 4)], lambda A: [(A * 3).astype(F32)])

case("annotated_output_type", """
def ann(float(M,N) A) -> (int32(M,N) O, double(M) S) {
  O(i,j) = int32(A(i,j) * 10)
  S(i) +=! double(A(i,j))
}""", lambda r: [rf(r, 3, 4, lo=-3, hi=3)],
     lambda A: [np.trunc(A * F32(10)).astype(i32), A.astype(F64).sum(1)], red=4)

# ============================================================================================
# Statements in order, in-place, accumulation, reductions
# ============================================================================================

case("in_place", """
def inplace(float(N) A, float(N) B) -> (O) {
  O(i) = A(i)
  O(i) = O(i) + B(i)
  O(i) = O(i) * O(i)
}""", lambda r: [rf(r, 6), rf(r, 6)], lambda A, Bv: [((A + Bv) * (A + Bv)).astype(F32)])

case("plus_eq_accumulates_into_output", """
def acc(float(M,N) A) -> (O) {
  O(i) += A(i,j)
}""", lambda r: [rf(r, 4, 5)],
     lambda A, init: [(f64(init[0]) + f64(A).sum(1)).astype(F32)],
     init=lambda r: [rf(r, 4, lo=10, hi=20)], red=6)

case("non_bang_reductions_accumulate", """
def acc(float(M,N) A) -> (mx, mn, pr) {
  mx(i) max= A(i,j)
  mn(i) min= A(i,j)
  pr(i) *= A(i,j)
}""", lambda r: [rf(r, 4, 3, lo=0.5, hi=1.5)],
     lambda A, init: [np.maximum(init[0], A.max(1)), np.minimum(init[1], A.min(1)),
                      (f64(init[2]) * f64(A).prod(1)).astype(F32)],
     init=lambda r: [np.array([0.0, 2.0, 1.2, 0.0], F32), np.array([0.7, 0.2, 3.0, 1.0], F32),
                     np.array([2.0, -1.0, 0.0, 0.5], F32)], red=4)

case("bang_reductions", """
def reds(float(M,N) A) -> (mn, mx, pr, sm) {
  mn(i) min=! A(i,j)
  mx(i) max=! A(i,j)
  pr(i) *=! A(i,j)
  sm(i) +=! A(i,j)
}""", lambda r: [rf(r, 5, 6, lo=-1.5, hi=1.5)],
     lambda A: [A.min(1), A.max(1), f64(A).prod(1).astype(F32), f64(A).sum(1).astype(F32)],
     red=6)

case("int_reductions", """
def ireds(int8(M,N) A, uint8(M,N) U, int64(M,N) L) -> (mx, mn, pr, umax, umin) {
  mx(i) max=! A(i,j)
  mn(i) min=! A(i,j)
  pr(i) *=! L(i,j)
  umax(i) max=! U(i,j)
  umin(i) min=! U(i,j)
}""", lambda r: [np.array([[-128, -100, -5], [3, 127, -7], [-1, -2, -3]], i8),
                 np.array([[0, 255, 3], [7, 9, 1], [200, 100, 255]], u8),
                 ri(r, 3, 3, lo=-5, hi=6, dtype=i64)],
     lambda A, U, L: [A.max(1), A.min(1), L.prod(1), U.max(1), U.min(1)])

case("int_div_mod_floor", """
def idiv(int32(N) A, int32(N) B) -> (Q, R, Q3, R4) {
  Q(i) = A(i) / B(i)
  R(i) = A(i) % B(i)
  Q3(i) = A(i) / 3
  R4(i) = A(i) % 4
}""", lambda r: [ri(r, 16, lo=-50, hi=51), ri(r, 16, lo=1, hi=8)],
     lambda A, Bv: [A // Bv, A % Bv, A // 3, A % 4],
     note="division rounds toward -inf; modulo is non-negative for a positive divisor")

def _euclid(a, b):
    r = np.mod(a, np.abs(b))
    return (a - r) // b, r


case("int_div_mod_negative_divisor", """
def idivneg(int32(N) A, int32(N) B) -> (Q, R) {
  Q(i) = A(i) / B(i)
  R(i) = A(i) % B(i)
}""", lambda r: [np.array([-7, -3, -2, -1, 0, 1, 2, 3, 7, 7, -7], i32),
                 np.array([-3, -3, -3, -3, -3, -3, -3, -3, -3, 2, 2], i32)],
     lambda A, Bv: list(_euclid(A, Bv)),
     note="Halide/Euclidean semantics: the remainder is never negative and "
          "A == (A / B) * B + A % B; e.g. -2 / -3 == 1, -2 % -3 == 1, 1 / -3 == 0")

case("int_div_by_zero_is_zero", """
def idiv0(int32(N) A, int32(N) B) -> (Q) {
  Q(i) = A(i) / B(i)
}""", lambda r: [np.array([7, -7, 5, 0, 9], i32), np.array([0, 0, 2, 0, -3], i32)],
     lambda A, Bv: [np.array([0, 0, 2, 0, -3], i32)],
     note="x / 0 == 0; 9 / -3 == -3 exactly")

case("uint_div_mod", """
def udiv(uint8(N) A, uint8(N) B, int64(N) L) -> (Q, R, LQ, LR) {
  Q(i) = A(i) / B(i)
  R(i) = A(i) % B(i)
  LQ(i) = L(i) / 7
  LR(i) = L(i) % 7
}""", lambda r: [ri(r, 10, lo=0, hi=256, dtype=u8), ri(r, 10, lo=1, hi=20, dtype=u8),
                 ri(r, 10, lo=-10**10, hi=10**10, dtype=i64)],
     lambda A, Bv, L: [A // Bv, A % Bv, L // 7, L % 7])

case("comparisons_logic", """
def cmp(float(N) A, float(N) B) -> (LT, GE, NE, EQ, OR, SEL) {
  LT(i) = A(i) < B(i)
  GE(i) = A(i) >= B(i) && A(i) > 0
  NE(i) = A(i) != B(i)
  EQ(i) = !(A(i) == B(i)) || A(i) <= 0
  OR(i) = A(i) > 0.5 || B(i) < -0.5
  SEL(i) = A(i) <= B(i) ? A(i) : B(i)
}""", lambda r: (lambda a, b: [a, np.where(np.arange(10) % 3 == 0, a, b).astype(F32)])(
         rf(r, 10), rf(r, 10)),
     lambda A, Bv: [A < Bv, (A >= Bv) & (A > 0), A != Bv, ~(A == Bv) | (A <= 0),
                    (A > 0.5) | (Bv < -0.5), np.minimum(A, Bv)])

case("int_comparisons", """
def icmp(int32(N) A, uint8(N) U) -> (P, Q, C) {
  P(i) = A(i) >= 0 && A(i) % 2 == 0
  Q(i) = U(i) > 100 || !(A(i) < 3)
  C(i) = int32(A(i) > 0) - int32(A(i) < 0)
}""", lambda r: [ri(r, 12, lo=-6, hi=7), ri(r, 12, lo=0, hi=256, dtype=u8)],
     lambda A, U: [(A >= 0) & (A % 2 == 0), (U > 100) | ~(A < 3), np.sign(A).astype(i32)])


def _math_inputs(dtype):
    return lambda r: [rf(r, 11, lo=-2, hi=2, dtype=dtype), rf(r, 11, lo=-2, hi=2, dtype=dtype)]


def _math_expect(dtype):
    def expect(A, Bv):
        a, b = f64(A), f64(Bv)
        return [np.exp(a), np.log(np.abs(a) + 0.5), np.tanh(a), np.sqrt(np.abs(a)),
                1 / np.sqrt(np.abs(b) + 0.5), np.abs(a), np.maximum(a, b), np.minimum(a, b),
                np.power(np.abs(a) + 0.5, b), _erf(a), np.floor(f64(A * dtype(3))),
                np.ceil(f64(A * dtype(3))),
                np.minimum(a, b), np.maximum(a, b)]
    return lambda A, Bv: [x.astype(dtype) for x in expect(A, Bv)]


_MATH_SRC = """
def math(%s(N) A, %s(N) B) -> (E, L, T, S, R, F, FX, FN, P, ER, FL, CE, MN, MX) {
  E(i) = exp(A(i))
  L(i) = log(fabs(A(i)) + 0.5)
  T(i) = tanh(A(i))
  S(i) = sqrt(fabs(A(i)))
  R(i) = rsqrt(fabs(B(i)) + 0.5)
  F(i) = fabs(A(i))
  FX(i) = fmax(A(i), B(i))
  FN(i) = fmin(A(i), B(i))
  P(i) = pow(fabs(A(i)) + 0.5, B(i))
  ER(i) = erf(A(i))
  FL(i) = floor(A(i) * 3)
  CE(i) = ceil(A(i) * 3)
  MN(i) = min(A(i), B(i))
  MX(i) = max(A(i), B(i))
}"""
case("math_builtins_f32", _MATH_SRC % ("float", "float"), _math_inputs(F32), _math_expect(F32),
     ulps=32)
case("math_builtins_f64", _MATH_SRC % ("double", "double"), _math_inputs(F64), _math_expect(F64),
     ulps=64)

case("int_min_max", """
def iminmax(int32(N) A, int32(N) B, uint16(N) U) -> (MN, MX, RELU, UC) {
  MN(i) = min(A(i), B(i))
  MX(i) = max(A(i), B(i))
  RELU(i) = max(A(i), 0)
  UC(i) = min(U(i), 1000)
}""", lambda r: [ri(r, 9, lo=-100, hi=100), ri(r, 9, lo=-100, hi=100),
                 ri(r, 9, lo=0, hi=65536, dtype=u16)],
     lambda A, Bv, U: [np.minimum(A, Bv), np.maximum(A, Bv), np.maximum(A, 0).astype(i32),
                       np.minimum(U, 1000).astype(u16)])

# Of equal values (-0.0 and 0.0) max gives the first and min the second (a < b decides), which
# a division then tells apart.
case("float_min_max_of_equal_zeros", """
def zeros(float(N) A) -> (MX, MN) {
  MX(i) = 1 / max(A(i) * 0, 0)
  MN(i) = 1 / min(0, A(i) * 0)
}""", lambda r: [np.array([-3.0, 2.0, -0.0, 0.0], F32)],
     lambda A: [np.array([-np.inf, np.inf, -np.inf, np.inf], F32)] * 2)

# ============================================================================================
# Layouts: strided, Fortran-order, sliced, byte_offset inputs and outputs
# ============================================================================================

_MM = """
def mm(float(M,K) A, float(K,N) B) -> (C) {
  C(m,n) +=! A(m,k) * B(k,n)
}"""


def _mm_expect(A, Bv):
    return [(f64(A) @ f64(Bv)).astype(F32)]


case("layout_sliced_inputs", _MM, lambda r: [rf(r, 9, 12)[1::2, 2::3], rf(r, 7, 6)[:4, 1:6:2]],
     _mm_expect, red=4, note="A is a (4,4) view with strides (24,3); B (4,3) with strides (6,2)")

case("layout_fortran_inputs", _MM,
     lambda r: [np.asfortranarray(rf(r, 5, 3)), np.asfortranarray(rf(r, 3, 4))], _mm_expect, red=3)

case("layout_transposed_input", _MM, lambda r: [rf(r, 6, 4).T, rf(r, 6, 2)], _mm_expect, red=6)

case("layout_byte_offset_inputs_outputs", _MM,
     lambda r: [rf(r, 5 * 4 + 7)[7:].reshape(5, 4), rf(r, 3 + 4 * 3)[3:].reshape(4, 3)],
     _mm_expect, red=4, byte_offset=True, out_layout=out_offset,
     note="data = root buffer, byte_offset = 28 / 12 bytes; output at byte_offset 12")

case("layout_explicit_contiguous_strides", _MM, lambda r: [rf(r, 3, 4), rf(r, 4, 5)],
     _mm_expect, red=4, in_layout="strides")

case("layout_broadcast_stride0_input", """
def addrow(float(M,N) A, float(M,N) R) -> (O) {
  O(i,j) = A(i,j) + R(i,j)
}""", lambda r: [rf(r, 3, 4), np.broadcast_to(rf(r, 4)[None, :], (3, 4))],
     lambda A, R: [(A + R).astype(F32)], note="R has strides (0, 1)")

case("layout_sliced_outputs", """
def two(float(M,N) A) -> (O, S) {
  O(i,j) = A(i,j) * 2
  S(i) +=! A(i,j)
}""", lambda r: [rf(r, 3, 5)], lambda A: [(A * 2).astype(F32), f64(A).sum(1).astype(F32)],
     out_layout=out_sliced, red=5,
     note="outputs are every-other-element views; the gaps must keep their contents")

case("layout_fortran_output", _MM, lambda r: [rf(r, 4, 3), rf(r, 3, 5)], _mm_expect, red=3,
     out_layout=out_fortran)

case("layout_sliced_io_accumulate", """
def acc(float(M,N) A) -> (O) {
  O(i,j) += A(i,j) * A(i,j)
}""", lambda r: [rf(r, 8, 9)[::2, ::3]],
     lambda A, init: [(init[0] + A * A).astype(F32)], init=lambda r: [rf(r, 4, 3)],
     out_layout=out_sliced)

case("layout_0d_byte_offset", """
def dot(float(N) A, float(N) B) -> (s) {
  s +=! A(i) * B(i)
}""", lambda r: [rf(r, 10)[2:8], rf(r, 18)[::3]],
     lambda A, Bv: [np.asarray(f64(A) @ f64(Bv), F32)], red=6, byte_offset=True,
     out_layout=lambda shape, dtype: np.full(4, 1234.5, dtype)[2:3].reshape(()))

case("layout_int_strided_gather", """
def gather(float(N) X, int64(A,B) I) -> (Z) {
  Z(i,j) = X(I(i,j))
}""", lambda r: [rf(r, 20)[::2], ri(r, 6, 7, lo=0, hi=10, dtype=i64)[::2, 1::2].T],
     lambda X, I: [X[I]], byte_offset=True, out_layout=out_sliced)

# ============================================================================================
# More semantics: partial writes, '!' on a sub-range, index arithmetic, precedence, edge sizes
# ============================================================================================

case("gap_between_statements", """
def gaps(float(N) A, float(M) B) -> (O) {
  O(i) = A(i) where i in 0:3
  O(i) = B(i - 5) where i in 5:5+M
}""", lambda r: [rf(r, 4), rf(r, 2)],
     lambda A, Bv: [np.array([A[0], A[1], A[2], 0, 0, Bv[0], Bv[1]], F32)],
     note="extent = 1 + largest index written (7); O(3), O(4) are not written -> 0")

case("bang_initialises_only_written_points", """
def part(float(N) A, float(N,M) B) -> (O) {
  O(i) = A(i)
  O(i) +=! B(i,j) where i in 0:2
}""", lambda r: [rf(r, 5), rf(r, 5, 3)],
     lambda A, Bv: [np.concatenate([f64(Bv[:2]).sum(1), A[2:]]).astype(F32)], red=3)

case("unwritten_elements_zeroed_with_accumulate", """
def acc(float(N) A) -> (O) {
  O(i) += A(i) where i in 1:N
}""", lambda r: [rf(r, 5)],
     lambda A, init: [np.concatenate([[0], init[0][1:] + A[1:]]).astype(F32)],
     init=lambda r: [rf(r, 5, lo=2, hi=3)],
     note="O(0) is written by no statement -> 0; the others accumulate into the caller's values")

case("matmul_long_reduction", _MM, lambda r: [rf(r, 3, 300), rf(r, 300, 2)], _mm_expect, red=300)

case("upsample_div_index", """
def up(float(N) A) -> (O) {
  O(i) = A(i / 2)
}""", lambda r: [rf(r, 4)], lambda A: [np.repeat(A, 2)], dims=[["N*2"]],
     note="0 <= i/2 < N gives i in 0:2N (floor division)")

case("tile_mod_index", """
def tile(float(N) A) -> (O) {
  O(i) = A(i % N) where i in 0:3*N
}""", lambda r: [rf(r, 4)], lambda A: [np.tile(A, 3)])

case("chained_gather", """
def gg(float(N) X, int32(M) I, int32(K) J) -> (O) {
  O(k) = X(I(J(k)))
}""", lambda r: [rf(r, 6), ri(r, 5, lo=0, hi=6), ri(r, 7, lo=0, hi=5)],
     lambda X, I, J: [X[I[J]]])

case("ternary_inside_reduction", """
def possum(float(M,N) A) -> (P, C) {
  P(i) +=! A(i,j) > 0 ? A(i,j) : 0
  C(i) +=! A(i,j) > 0 ? 1 : 0
}""", lambda r: [rf(r, 4, 6)],
     lambda A: [np.where(A > 0, f64(A), 0).sum(1).astype(F32), (A > 0).sum(1).astype(np.int32)],
     red=6)

case("float_literal_forms", """
def lits(float(N) A) -> (O) {
  O(i) = A(i) * 1e2 + 2.5e-1 - 0.125 + 3.
}""", lambda r: [rf(r, 5)],
     lambda A: [(A * F32(100) + F32(0.25) - F32(0.125) + F32(3)).astype(F32)])

case("unary_minus", """
def neg(uint8(N) U, int8(N) S, float(N) F) -> (NU, NS, NF) {
  NU(i) = -U(i)
  NS(i) = -S(i)
  NF(i) = -F(i) * -2
}""", lambda r: [np.array([0, 1, 200, 255], u8), np.array([-128, -1, 0, 127], i8), rf(r, 4)],
     lambda U, S, F: [(-U.astype(np.int64)).astype(u8), (-S.astype(np.int64)).astype(i8),
                      (-F * F32(-2)).astype(F32)],
     note="negating unsigned and int8 wraps: -200 -> 56 (uint8), -(-128) -> -128 (int8)")

case("precedence_and_ternary_chain", """
def prec(int32(N) A) -> (P, Q, S) {
  P(i) = 2 + 3 * A(i) - 8 / 2 / 2 % 3
  Q(i) = A(i) < 0 ? -1 : A(i) > 0 ? 1 : 0
  S(i) = !(A(i) > 2) && A(i) > -2 || A(i) == 5
}""", lambda r: [np.array([-7, -2, -1, 0, 1, 2, 3, 5, 9], i32)],
     lambda A: [2 + 3 * A - ((8 // 2 // 2) % 3), np.sign(A).astype(i32),
                (~(A > 2) & (A > -2)) | (A == 5)])

case("zero_size_input", """
def empty(float(N) A, float(M) B, int32(N) I) -> (O, s, P, mn, mx, imn, imx, pr) {
  O(i) = A(i) * 2
  s +=! A(i)
  P(j) = B(j) + 1
  mn min=! A(i)
  mx max=! A(i)
  imn min=! I(i)
  imx max=! I(i)
  pr *=! I(i)
}""", lambda r: [np.zeros(0, F32), rf(r, 3), np.zeros(0, i32)],
     lambda A, Bv, I: [np.zeros(0, F32), np.asarray(0, F32), (Bv + 1).astype(F32),
                       np.asarray(np.inf, F32), np.asarray(-np.inf, F32),
                       np.asarray(np.iinfo(i32).max, i32), np.asarray(np.iinfo(i32).min, i32),
                       np.asarray(1, i32)],
     note="N = 0: O is empty and the reduction over an empty range leaves the identity")

# Results are computed (and rounded / wrapped) in the operand type after every operation: no
# wider intermediates, no fused multiply-add. These need exact comparisons.
_e10, _e23 = 2.0 ** -10, 2.0 ** -23

case("float32_rounds_every_op", """
def fr(float(N) A, float(N) B, float(N) C) -> (O) {
  O(i) = A(i) * B(i) + C(i)
}""", lambda r: [np.array([1 + _e23, 3.0], F32), np.array([1 + _e23, 0.5], F32),
                 np.array([-(1 + 2 * _e23), 0.25], F32)],
     lambda A, Bv, C: [(A * Bv + C).astype(F32)], rtol=0, atol=0,
     note="(1+2^-23)^2 rounds to 1+2^-22 in float32, so O(0) == 0 exactly "
          "(a float64 intermediate or an FMA gives 2^-46)")

case("float16_rounds_every_op", """
def hr(half(N) A, half(N) B, half(N) C) -> (O) {
  O(i) = A(i) * B(i) + C(i)
}""", lambda r: [np.array([1 + _e10, 3.0], F16), np.array([1 + _e10, 0.5], F16),
                 np.array([-(1 + 2 * _e10), 0.25], F16)],
     lambda A, Bv, C: [np.array([0.0, 1.75], F16)], rtol=0, atol=0,
     note="(1+2^-10)^2 rounds to 1+2^-9 in float16, so O(0) == 0 exactly "
          "(a float32 intermediate gives 2^-20)")

case("bfloat16_rounds_every_op", """
def br(bfloat16(N) A, bf16(N) B, bfloat16(N) C) -> (O) {
  O(i) = A(i) * B(i) + C(i)
}""", lambda r: [bf16([1 + 2 ** -7, 3.0]), bf16([1 + 2 ** -7, 0.5]), bf16([-(1 + 2 ** -6), 0.25])],
     lambda A, Bv, C: [bf16([0.0, 1.75])], rtol=0, atol=0,
     note="(1+2^-7)^2 rounds to 1+2^-6 in bfloat16, so O(0) == 0 exactly (a float32 intermediate gives 2^-14)")

case("bfloat16_conversions", """
def cv(int32(N) I, double(N) D, bfloat16(N) B) -> (O1, O2, O3, O4) {
  O1(i) = bfloat16(I(i))
  O2(i) = bf16(D(i))
  O3(i) = int32(B(i))
  O4(i) = float(B(i))
}""", lambda r: [np.array([16777217, 257, -3, 2147483647, 259], i32),
                 np.array([1 + 2 ** -8 + 2 ** -30, 1 + 2 ** -8, -0.0, 3.5e38, np.nan], F64),
                 bf16([np.nan, np.inf, -1e10, 2.5, -0.0])],
     lambda I, D, B: [bf16(I.astype(F32)), bf16(D.astype(F32)),
                      np.array([0, 2147483647, -2147483648, 2, 0], i32), from_bf16(B)], rtol=0, atol=0,
     note="int32 to bfloat16 through float32 (257 ties to 256, 259 to 260); float64 to bfloat16 through "
          "float32 (1 + 2^-8 + 2^-30 becomes 1 + 2^-8 in float32, then ties to 1); 3.5e38 overflows to inf; "
          "NaN is 0x7fc0; bfloat16 to int32 truncates and saturates, NaN gives 0")

case("bfloat16_with_float16_is_float32", """
def mix(half(N) H, bf16(N) B) -> (O) {
  O(i) = H(i) + B(i)
}""", lambda r: [rf(r, 8, dtype=F16), bf16(rf(r, 8))],
     lambda H, B: [H.astype(F32) + from_bf16(B)], rtol=0, atol=0, dims=[["N"]],
     note="float16 with bfloat16 promotes to float32: neither holds the other's values")

case("bfloat16_rows_and_a_reduction", """
def rows(bfloat16(N,M) X) -> (S, O) {
  S(n) max=! X(n, m)
  O(n, m) = X(n, m) / S(n)
}""", lambda r: [bf16(rf(r, 5, 9, lo=0.5, hi=4.0))],
     lambda X: [bf16(from_bf16(X).max(axis=1)), bf16(from_bf16(X) / from_bf16(X).max(axis=1)[:, None])],
     rtol=0, atol=0, note="a max is exact; the quotient rounds once from float32")

case("int8_intermediate_wraps", """
def w8(int8(N) A, int8(N) B, uint8(N) U) -> (O, P) {
  O(i) = A(i) * B(i) / 4
  P(i) = (U(i) + U(i)) / 2
}""", lambda r: [np.array([100, -100, 50, 7], i8), np.array([2, 3, 3, 2], i8),
                 np.array([200, 100, 255, 128], u8)],
     lambda A, Bv, U: [np.array([-14, -11, -27, 3], i8), np.array([72, 100, 127, 0], u8)],
     note="-100*3 wraps to -44 in int8, then -44/4 == -11 (an int32 intermediate gives -75); "
          "(200+200) wraps to 144 in uint8, /2 == 72")

case("rank16_sum", """
def r16(float(A,B,C,D,E,F,G,H,I,J,K,L,M,N,O,P) X) -> (t, u) {
  t +=! X(a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p)
  u(a,p) +=! X(a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p)
}""", lambda r: [rf(r, *([2, 1] * 7 + [2, 3]))],
     lambda X: [np.asarray(f64(X).sum(), F32),
                f64(X).sum(axis=tuple(range(1, 15))).astype(F32)], red=768,
     note="TC_MAX_NDIM = 16 dimensions")

case("identifiers_and_unicode_comment", """
def f_1(float(N_1) A_2, float(N_1) _x1) -> (o_3) {  # héllo ünïcode — comment
  o_3(i_) = A_2(i_) + _x1(i_) * 2
}""", lambda r: [rf(r, 4), rf(r, 4)], lambda A, X: [(A + X * F32(2)).astype(F32)])

case("where_size_arithmetic", """
def w(float(N) A) -> (H, T, M) {
  H(i) = A(i) where i in 0:N/2
  T(i) = A(i) + A.0 where i in N-2:N
  M(i) = A(i) where i in 0:max(N - 3, 1)
}""", lambda r: [rf(r, 5)],
     lambda A: [A[:2].copy(), np.concatenate([[0, 0, 0], A[3:] + 5]).astype(F32), A[:2].copy()],
     note="T.d is usable as a value too (A.0 == N == 5)")

case("read_earlier_output_shifted", """
def diff(float(N) A) -> (O, D) {
  O(i) = A(i) * A(i)
  D(i) = O(i + 1) - O(i)
}""", lambda r: [rf(r, 6)], lambda A: [(A * A).astype(F32), np.diff((A * A).astype(F32))],
     note="D's range comes from O's extent: D has N - 1 elements")

# ---- TC function calls (tc-semantics.md grammar: "id_list = id '(' id_list ')'"): inlined ----
_CALL_DEFS = """
def mm(float(M,K) A, float(K,N) B) -> (C) {
  C(i,j) +=! A(i,k) * B(k,j)
}
def relu_rowsum(float(M,N) X) -> (R, S) {
  t(i,j) = X(i,j) * 2
  R(i,j) = fmax(t(i,j), 0)
  S(i) +=! t(i,j) + N
}
def mlp2(float(B,I) x, float(I,H) w1, float(H,O) w2) -> (y, s) {
  h = mm(x, w1)
  r, s = relu_rowsum(h)
  y = mm(r, w2)
}
"""


def _mlp2(x, w1, w2):
    h = f64(x) @ f64(w1)
    t = h * 2
    r = np.maximum(t, 0)
    s = (t + h.shape[1]).sum(1)
    return [(r @ f64(w2)).astype(F32), s.astype(F32)]


case("call_mlp2_single_and_multi_output", _CALL_DEFS,
     lambda r: [rf(r, 3, 4), rf(r, 4, 5), rf(r, 5, 2)], _mlp2, entry="mlp2", red=20,
     defs=["mm", "relu_rowsum", "mlp2"])

case("call_nested_with_clashing_names", """
def scale(float(N) A) -> (C) {
  t(i) = A(i) * N
  C(i) = t(i)
}
def twice(float(N) A) -> (C) {
  t = scale(A)
  C = scale(t)
}
def user(float(K) t, float(K) N) -> (O) {
  i(k) = t(k) + N(k)
  O = twice(i)
}""", lambda r: [rf(r, 6), rf(r, 6)], lambda t, N: [((t + N) * 6 * 6).astype(F32)], entry="user",
     defs=["scale", "twice", "user"],
     note="callee temporaries, index variables and sizes are renamed away from the caller's 't', 'N', 'i'")

case("call_annotated_output_type_kept", """
def cnt(float(N) A) -> (int32 c) {
  c +=! A(i) > 0 ? 1 : 0
}
def user(float(N) X) -> (o) {
  o = cnt(X)
}""", lambda r: [rf(r, 9)], lambda X: [np.array((X > 0).sum(), dtype=np.int32)], entry="user",
     defs=["cnt", "user"])

# ============================================================================================
# Rank polymorphism: '...' in parameter types and index lists, like NumPy's einsum
# ellipsis; one def, instantiated per rank at binding. Output dims report '...' in place.
# ============================================================================================

RELU_ANY = """
def relu(float(...) X) -> (O) {
  O(...) = fmax(X(...), 0)
}"""
for _name, _shape in (("0d", ()), ("1d", (7,)), ("3d", (2, 3, 4)), ("5d", (2, 1, 3, 2, 2))):
    case("ellipsis_relu_" + _name, RELU_ANY, lambda r, s=_shape: [rf(r, *s)],
         lambda X: [np.maximum(X, 0).astype(F32)], dims=[["..."]])

ROWSUM_ANY = """
def rowsum(float(N, ...) X) -> (S) {
  S(n) +=! X(n, ...)
}"""
for _name, _shape in (("1d", (5,)), ("2d", (5, 6)), ("4d", (3, 2, 4, 5))):
    case("ellipsis_sum_trailing_" + _name, ROWSUM_ANY, lambda r, s=_shape: [rf(r, *s)],
         lambda X: [f64(X).reshape(X.shape[0], -1).sum(axis=1).astype(F32)],
         red=max(1, int(np.prod(_shape[1:]))), dims=[["N"]])

case("ellipsis_max_trailing", """
def rowmax(int32(N, ...) X) -> (M) {
  M(n) max=! X(n, ...)
}""", lambda r: [ri(r, 4, 3, 5)], lambda X: [X.reshape(4, -1).max(axis=1)])

BMM_ANY = """
def bmm(float(..., M, K) A, float(..., K, N) B) -> (C) {
  C(..., m, n) +=! A(..., m, k) * B(..., k, n)
}"""
for _name, _batch in (("none", ()), ("one", (3,)), ("two", (2, 3))):
    case("ellipsis_bmm_" + _name + "_batch_axes", BMM_ANY,
         lambda r, b=_batch: [rf(r, *b, 4, 5), rf(r, *b, 5, 3)],
         lambda A, B: [np.matmul(f64(A), f64(B)).astype(F32)], red=5, dims=[["...", "M", "N"]])

SOFTMAX_ANY = """
def softmax(float(..., D) X) -> (O) {
  mx(...) max=! X(..., d)
  e(..., d) = exp(X(..., d) - mx(...))
  s(...) +=! e(..., d)
  O(..., d) = e(..., d) / s(...)
}"""


def _softmax_last(X):
    x = f64(X)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(F32)


for _name, _shape in (("1d", (9,)), ("2d", (4, 9)), ("3d", (2, 3, 9))):
    case("ellipsis_softmax_last_axis_" + _name, SOFTMAX_ANY, lambda r, s=_shape: [rf(r, *s)],
         lambda X: [_softmax_last(X)], red=9, dims=[["...", "D"]])

case("ellipsis_broadcast_bias", """
def add_bias(float(..., C) X, float(C) b) -> (O) {
  O(..., c) = X(..., c) + b(c)
}""", lambda r: [rf(r, 2, 3, 4), rf(r, 4)], lambda X, b: [(X + b).astype(F32)])

# ============================================================================================
# Scatter-add (gradients): computed left-hand side subscripts with += and +=!
# (docs/guide/language.md, "Scatter-add"). Every point of the domain adds its value at the element
# its subscripts compute; repeated indices all add up; '+=!' zeroes the whole tensor first.
# ============================================================================================


def _add_at(out, idx, vals):
    np.add.at(out, idx, vals)
    return out


case("scatter_histogram_int32", """
def hist(int32(N) I) -> (int32(8) H) {
  H(I(i)) +=! 1
}""", lambda r: [ri(r, 50, lo=0, hi=8)],
     lambda I: [np.bincount(I, minlength=8).astype(i32)],
     note="a histogram: every bin hit several times, and (with '+=!') bins no point hits are 0")

case("scatter_histogram_float_weights", """
def hist(int32(N) I, float(N) W, float(E) Like) -> (float(E) H) {
  H(I(i)) +=! W(i)
}""", lambda r: [ri(r, 40, lo=0, hi=6), rf(r, 40), rf(r, 9)],
     lambda I, W, Like: [_add_at(np.zeros(9), I, f64(W)).astype(F32)], red=40,
     note="bins 6..8 are never hit: zeroed by '+=!' (the runner's sentinel would show otherwise)")

case("scatter_embedding_gradient", """
def embed_grad(float(E,D) LUT, int32(B,L) I, float(B,D) d_O) -> (float(E,D) d_LUT) {
  d_LUT(I(b, l), d) +=! d_O(b, d)
}""", lambda r: [rf(r, 7, 5), np.array([[0, 3, 3, 6], [3, 1, 0, 3], [6, 6, 6, 6]], i32), rf(r, 3, 5)],
     lambda LUT, I, dO: [_add_at(np.zeros((7, 5)), I, f64(dO)[:, None, :].repeat(4, axis=1)).astype(F32)],
     red=8, note="the gradient of O(b, d) +=! LUT(I(b, l), d): repeated rows add up, row 2, 4, 5 stay 0")

case("scatter_transposed_conv1d", """
def tconv1d(float(N) X, float(K) W, float(M) Like) -> (float(M) O) {
  O(i + k) +=! X(i) * W(k)
}""", lambda r: [rf(r, 6), rf(r, 3), rf(r, 8)],
     lambda X, W, Like: [np.convolve(f64(X), f64(W)).astype(F32)], red=3,
     note="M = N + K - 1: binding proves the write in bounds, no run-time check")

case("scatter_transposed_conv1d_wider_output", """
def tconv1d(float(N) X, float(K) W, float(M) Like) -> (float(M) O) {
  O(i + k) +=! X(i) * W(k)
}""", lambda r: [rf(r, 6), rf(r, 3), rf(r, 11)],
     lambda X, W, Like: [np.concatenate([np.convolve(f64(X), f64(W)), np.zeros(3)]).astype(F32)], red=3,
     note="'+=!' zeroes the whole output: its last 3 elements, which no point writes, are 0")


def _conv2d_input_grad(dO, W, I):
    n, m, oh, ow = dO.shape
    _, c, kh_, kw_ = W.shape
    dI = np.zeros(I.shape)
    for kh in range(kh_):
        for kw in range(kw_):
            dI[:, :, kh:kh + oh, kw:kw + ow] += np.einsum("nmhw,mc->nchw", f64(dO), f64(W)[:, :, kh, kw])
    return dI


case("scatter_conv2d_input_gradient", """
def conv_grad_input(float(N,M,OH,OW) d_O, float(M,C,KH,KW) W, float(N,C,H,WW) I) -> (float(N,C,H,WW) d_I) {
  d_I(n, c, h + kh, w + kw) +=! d_O(n, m, h, w) * W(m, c, kh, kw)
}""", lambda r: [rf(r, 2, 3, 4, 5), rf(r, 3, 2, 3, 2), rf(r, 2, 2, 6, 6)],
     lambda dO, W, I: [_conv2d_input_grad(dO, W, I).astype(F32)], red=18,
     note="the gradient of a 2-D convolution with respect to its input (affine write, two shifts)")

case("scatter_accumulates_after_a_plain_statement", """
def f(float(N) X, int32(K) I, float(K) V) -> (O) {
  O(i) = X(i) * 2
  O(I(k)) += V(k)
}""", lambda r: [rf(r, 6), np.array([5, 0, 5, 2, 5], i32), rf(r, 5)],
     lambda X, I, V: [_add_at(f64(X) * 2, I, f64(V)).astype(F32)], red=4,
     note="'+=' adds to what the first statement wrote, which also gives O its shape")

case("scatter_with_no_variable_runs_once", """
def f(float(N) X, float Y) -> (O, float(N) P) {
  O(i) = X(i)
  O(0) += X(1) * 2
  P(i) = 0.0 where i in 0:N
  P(N - 1) += Y
}""", lambda r: [rf(r, 4), np.array(rf(r, 1)[0], F32)],
     lambda X, Y: [np.concatenate([[f64(X)[0] + 2 * f64(X)[1]], f64(X)[1:]]).astype(F32),
                   np.array([0, 0, 0, f64(Y)], F32)],
     note="a scatter whose subscripts use no variable adds once (the cpu backend skipped it: "
          "found by the generated gradients, d_B(0) += ...)")

case("scatter_into_the_callers_output", """
def f(int32(K) I, float(K) V, float(N) Like) -> (float(N) O) {
  O(I(k)) += V(k)
}""", lambda r: [np.array([1, 3, 1, 1], i32), rf(r, 4), rf(r, 5)],
     lambda I, V, Like, init: [_add_at(f64(init[0]), I, f64(V)).astype(F32)],
     init=lambda r: [rf(r, 5, lo=10, hi=20)], red=4,
     note="'+=' into an output no statement wrote before accumulates into the caller's content, "
          "everywhere (a scatter may write any element)")

case("scatter_mixed_plain_and_computed_subscripts", """
def f(float(R,C) X, int32(R) P, int32(R,C) Q, float(G,C) Like) -> (float(G,C) O, float(G,C) T) {
  O(P(r), c) +=! X(r, c)
  T(r, Q(r, c)) +=! X(r, c) where r in 0:G
}""", lambda r: [rf(r, 5, 4), np.array([2, 0, 2, 1, 2], i32), ri(r, 5, 4, lo=0, hi=4), rf(r, 3, 4)],
     lambda X, P, Q, Like: [_add_at(np.zeros((3, 4)), P, f64(X)).astype(F32),
                            _add_at(np.zeros((3, 4)), (np.arange(3)[:, None].repeat(4, 1), Q[:3]),
                                    f64(X)[:3]).astype(F32)],
     red=3, note="a computed row with a plain column, a plain row with a computed column")

case("scatter_segment_mean", """
def segment_mean(float(N,D) X, int32(N) S, float(G) Like) -> (float(G,D) Sum, Mean) {
  Sum(S(n), d) +=! X(n, d)
  cnt(g) = 0.0 where g in 0:G
  cnt(S(n)) += 1.0
  Mean(g, d) = Sum(g, d) / fmax(cnt(g), 1.0)
}""", lambda r: [rf(r, 7, 3), np.array([0, 2, 2, 0, 3, 2, 0], i32), rf(r, 4)],
     lambda X, S, Like: [_add_at(np.zeros((4, 3)), S, f64(X)).astype(F32),
                         (_add_at(np.zeros((4, 3)), S, f64(X)) /
                          np.maximum(np.bincount(S, minlength=4), 1)[:, None]).astype(F32)],
     red=4, note="several statements: a scatter into an output read later, a temporary written "
                 "plainly then scattered into; segment 1 is empty (its mean 0)")

case("scatter_index_types", """
def f(uint8(N) I, int64(N) J, float(N) V, float(E) Like) -> (float(E) A, float(E) B) {
  A(I(i)) +=! V(i)
  B(J(i) + 1) +=! V(i)
}""", lambda r: [np.array([0, 4, 4, 2], u8), np.array([3, -1, 0, 3], i64), rf(r, 4), rf(r, 5)],
     lambda I, J, V, Like: [_add_at(np.zeros(5), I, f64(V)).astype(F32),
                            _add_at(np.zeros(5), J + 1, f64(V)).astype(F32)], red=4,
     note="uint8 and int64 subscripts; J(i) + 1 = 0 at J(i) = -1 is in bounds")

case("scatter_empty_domain_still_zeroes", """
def f(int32(N) I, float(N) V, float(E) Like) -> (float(E) H) {
  H(I(i)) +=! V(i)
}""", lambda r: [np.zeros(0, i32), np.zeros(0, F32), rf(r, 4)],
     lambda I, V, Like: [np.zeros(4, F32)],
     note="no point runs, but '+=!' still sets the whole tensor to 0")

case("scatter_unchecked_skips_bad_indices", """
def hist(int32(N) I, float(N) V, float(E) Like) -> (float(E) H) {
  H(I(i)) +=! V(i)
}""", lambda r: [np.array([1, 7, -1, 1, 4, 2147483647, -2147483648, 0], i32), rf(r, 8), rf(r, 5)],
     lambda I, V, Like: [_add_at(np.zeros(5), I[(I >= 0) & (I < 5)], f64(V)[(I >= 0) & (I < 5)]).astype(F32)],
     options={"checked": "0"}, red=3,
     note="checked=0: a point whose written index is out of bounds is skipped (never clamped onto "
          "an edge element, never written outside)")

case("scatter_unchecked_skips_bad_uint8_and_gathered_reads_clamp", """
def f(uint8(N) I, int32(N) J, float(M) V, float(E) Like) -> (float(E) H) {
  H(I(i)) +=! V(J(i))
}""", lambda r: [np.array([0, 255, 3, 3], u8), np.array([0, 1, 9, -2], i32), rf(r, 3), rf(r, 4)],
     lambda I, J, V, Like: [_add_at(np.zeros(4), [0, 3, 3], f64(V)[[0, 2, 0]]).astype(F32)],
     options={"checked": "0"}, red=2,
     note="checked=0: the write at 255 is skipped; gathered reads of V are clamped as always (9 -> 2, -2 -> 0)")

case("scatter_float16_rounds_every_addition", """
def hist(int32(N) I, half(N) V, half(E) Like) -> (half(E) H) {
  H(I(i)) +=! V(i)
}""", lambda r: [np.array([0, 1, 0, 0, 2, 0], i32), np.array([2048, 1, 1, 1, 3, 0.5], F16), rf(r, 3, dtype=F16)],
     lambda I, V, Like: [np.array([2048, 1, 3], F16)], rtol=0.0, atol=0.0,
     note="float16 adds in order, each sum rounded to half: 2048 + 1 + 1 + 0.5 stays 2048 (float32 would give 2050.5)")

case("scatter_bfloat16_rounds_every_addition", """
def hist(int32(N) I, bf16(N) V, bf16(E) Like) -> (bf16(E) H) {
  H(I(i)) +=! V(i)
}""", lambda r: [np.array([0, 1, 0, 0, 2, 0], i32), bf16([256, 1, 1, 1, 3, 0.5]), bf16(rf(r, 3))],
     lambda I, V, Like: [bf16([256, 1, 3])], rtol=0.0, atol=0.0,
     note="bfloat16 adds in order, each sum rounded: 256 + 1 + 1 + 0.5 stays 256 (float32 would give 258.5)")

case("scatter_inside_a_called_def", """
def embed_grad(float(E,D) LUT, int32(B,L) I, float(B,D) d_O) -> (float(E,D) d_LUT) {
  d_LUT(I(b, l), d) +=! d_O(b, d)
}
def step(float(E,D) LUT, int32(B,L) I, float(B,D) d_O) -> (NewLUT) {
  g = embed_grad(LUT, I, d_O)
  NewLUT(e, d) = LUT(e, d) - 0.5 * g(e, d)
}""", lambda r: [rf(r, 5, 3), np.array([[4, 0, 4]], i32), rf(r, 1, 3)],
     lambda LUT, I, dO: [(f64(LUT) - 0.5 * _add_at(np.zeros((5, 3)), I, f64(dO)[:, None, :].repeat(3, axis=1))).astype(F32)],
     entry="step", red=3,
     note="inlined, the callee's annotated output becomes the caller's temporary g: a zeroing statement over "
          "the annotation's dimensions (LUT's) gives g its shape, as the annotation did")

case("scatter_with_ellipsis_on_the_right", """
def rowsum_into(float(N, ...) X, int32(N) I) -> (float(N) O) {
  O(I(n)) +=! X(n, ...)
}""", lambda r: [rf(r, 4, 2, 3), np.array([1, 1, 0, 3], i32)],
     lambda X, I: [_add_at(np.zeros(4), I, f64(X).reshape(4, -1).sum(axis=1)).astype(F32)], red=12,
     note="'...' on the right of a scatter is a set of iterated variables, as anywhere; row 2 is never hit")

// test_range_inference.cpp — range inference (src/infer) through tc::ir::build_program: the
// worked examples of tc-range-inference.md and the paper's kernels, checked by evaluating the
// symbolic ranges and extents for several concrete sizes.
#include <gtest/gtest.h>

#include <Halide.h>

#include <algorithm>

#include "infer/sym_expr.h"
#include "infer/to_halide.h"
#include "infer_test_util.h"

using tc::infer::SizeValues;
using tc::infer::SymExpr;
using tc_test::build;
using tc_test::build_error;
using tc_test::eval_extents;
using tc_test::eval_range;
using tc_test::has;
using tc_test::range_of;
using tc_test::Range64;
using tc_test::Shape;

namespace {

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// The number of values in [lo, hi).
int64_t count(Range64 r) { return std::max<int64_t>(r.second - r.first, 0); }

}  // namespace

// ---- SymExpr ---------------------------------------------------------------------------

TEST(SymExpr, ConstantsSizesAndArithmetic) {
  EXPECT_EQ(SymExpr::constant(7).evaluate({}), 7);
  EXPECT_EQ(SymExpr::size("N").evaluate({{"N", 12}}), 12);
  Halide::Expr n = tc::infer::size_var("N"), m = tc::infer::size_var("M");
  SymExpr e(Halide::max(n - m * 2, 0) + Halide::min(n, m) + Halide::select(n < m, 100, 1000));
  EXPECT_EQ(e.evaluate({{"N", 10}, {"M", 3}}), 4 + 3 + 1000);
  EXPECT_EQ(e.evaluate({{"N", 1}, {"M", 3}}), 0 + 1 + 100);
  EXPECT_TRUE(e.defined());
  EXPECT_FALSE(SymExpr().defined());
  EXPECT_EQ(SymExpr().to_string(), "?");
  EXPECT_EQ(SymExpr::size("N").to_string(), "N");
}

// Halide's (and TC's) integer division is Euclidean: a == b * (a / b) + a % b, 0 <= a % b < |b|,
// which is floor division for positive divisors.
TEST(SymExpr, EuclideanDivisionAndModulo) {
  Halide::Expr a = tc::infer::size_var("a"), b = tc::infer::size_var("b");
  SymExpr div(a / b), mod(a % b);
  for (int64_t x = -9; x <= 9; ++x)
    for (int64_t y : {-4, -3, -1, 1, 2, 3, 5}) {
      SizeValues s{{"a", x}, {"b", y}};
      int64_t r = mod.evaluate(s);
      EXPECT_EQ(y * div.evaluate(s) + r, x) << x << "/" << y;
      if (y > 0) EXPECT_EQ(div.evaluate(s), floor_div(x, y)) << x << "/" << y;
      EXPECT_GE(r, 0) << x << "%" << y;
      EXPECT_LT(r, std::abs(y)) << x << "%" << y;
      EXPECT_EQ((x - r) % y, 0) << x << "%" << y;
    }
  // Division by zero is 0, as in Halide.
  EXPECT_EQ(div.evaluate({{"a", 5}, {"b", 0}}), 0);
}

TEST(SymExpr, EvaluatesIn64Bits) {
  Halide::Expr n = tc::infer::size_var("N");
  EXPECT_EQ(SymExpr(n * 4).evaluate({{"N", int64_t{1} << 30}}), int64_t{1} << 32);
}

TEST(SymExpr, UnboundOrUndefinedIsInternalError) {
  std::string m = tc_test::error_of([] { SymExpr::size("Q").evaluate({{"N", 1}}); }, TC_ERROR_INTERNAL);
  EXPECT_TRUE(has(m, "'Q'")) << m;
  tc_test::error_of([] { SymExpr().evaluate({}); }, TC_ERROR_INTERNAL);
}

// ---- worked examples of tc-range-inference.md ------------------------------------------

TEST(RangeInference, MatMul) {
  auto p = build("def mat_mul(float(I, K) B, float(K, J) C) -> A {\n  A(i, j) +=! B(i, k) * C(k, j)\n}");
  for (SizeValues s : {SizeValues{{"I", 3}, {"K", 5}, {"J", 7}}, SizeValues{{"I", 1}, {"K", 1}, {"J", 1}},
                       SizeValues{{"I", 0}, {"K", 9}, {"J", 2}}}) {
    EXPECT_EQ(eval_range(*p, 0, "i", s), Range64(0, s["I"]));
    EXPECT_EQ(eval_range(*p, 0, "j", s), Range64(0, s["J"]));
    EXPECT_EQ(eval_range(*p, 0, "k", s), Range64(0, s["K"]));
    EXPECT_EQ(eval_extents(*p, "A", s), (Shape{s["I"], s["J"]}));
  }
  EXPECT_EQ(p->def(0).stmts[0].vars, (std::vector<std::string>{"i", "j", "k"}));
  EXPECT_FALSE(range_of(*p, 0, "k").from_where);
  // Every recorded precondition holds for matching shapes.
  SizeValues s{{"I", 3}, {"K", 5}, {"J", 7}};
  EXPECT_FALSE(p->ranges[0].preconditions.empty());
  for (const auto& pre : p->ranges[0].preconditions) {
    int64_t extent = p->ranges[0].extents[pre.tensor][pre.dim].evaluate(s);
    EXPECT_GE(pre.min_index.evaluate(s), 0) << pre.access;
    EXPECT_LT(pre.max_index.evaluate(s), extent) << pre.access;
  }
}

TEST(RangeInference, Stencil) {
  // k is resolved first from K(k); then i from B(i + k) given k's range.
  auto p = build("def stencil(float(N) B, float(KS) K) -> A {\n  A(i) += B(i + k) * K(k)\n}");
  for (int64_t n : {1, 3, 4, 10, 17})
    for (int64_t ks : {1, 2, 3, 4}) {
      SizeValues s{{"N", n}, {"KS", ks}};
      EXPECT_EQ(eval_range(*p, 0, "k", s), Range64(0, ks));
      EXPECT_EQ(eval_range(*p, 0, "i", s), Range64(0, n - ks + 1)) << n << " " << ks;
      EXPECT_EQ(eval_extents(*p, "A", s), Shape{std::max<int64_t>(n - ks + 1, 0)});
    }
}

TEST(RangeInference, StencilKernelLargerThanInputGivesEmptyOutput) {
  auto p = build("def stencil(float(N) B, float(KS) K) -> A { A(i) += B(i + k) * K(k) }");
  SizeValues s{{"N", 2}, {"KS", 5}};
  auto r = eval_range(*p, 0, "i", s);
  EXPECT_GE(r.first, r.second);  // empty
  EXPECT_EQ(eval_extents(*p, "A", s), Shape{0});
}

TEST(RangeInference, Reverted) {
  // 0 <= 10 - i < I  <=>  11 - I <= i < 11 (the spec's "9 - I" is a typo), clamped at 0.
  auto p = build("def reverted(float(I) B) -> A {\n  A(i) = B(10 - i)\n}");
  for (int64_t n = 1; n <= 25; ++n) {
    SizeValues s{{"I", n}};
    EXPECT_EQ(eval_range(*p, 0, "i", s), Range64(std::max<int64_t>(11 - n, 0), 11)) << n;
    EXPECT_EQ(eval_extents(*p, "A", s), Shape{11}) << n;
    // Brute force: every i in the range reads in bounds.
    auto r = eval_range(*p, 0, "i", s);
    for (int64_t i = r.first; i < r.second; ++i) {
      EXPECT_GE(10 - i, 0);
      EXPECT_LT(10 - i, n);
    }
  }
}

TEST(RangeInference, Subsample2) {
  auto p = build("def subsample_2(float(I) B) -> A {\n  A(i) = B(2*i)\n}");
  for (int64_t n = 0; n <= 20; ++n) {
    SizeValues s{{"I", n}};
    EXPECT_EQ(eval_range(*p, 0, "i", s), Range64(0, (n + 1) / 2)) << n;
    EXPECT_EQ(eval_extents(*p, "A", s), Shape{(n + 1) / 2}) << n;
  }
}

TEST(RangeInference, AveragePool2) {
  auto p = build("def average_pool_2(float(I) B) -> A {\n  A(i) = B(2*i) + B(2*i + 1)\n}");
  for (int64_t n = 0; n <= 20; ++n) {
    SizeValues s{{"I", n}};
    EXPECT_EQ(eval_range(*p, 0, "i", s), Range64(0, n / 2)) << n;
    EXPECT_EQ(eval_extents(*p, "A", s), Shape{n / 2}) << n;
  }
}

TEST(RangeInference, AveragePool2WithWhereK) {
  auto p = build("def average_pool_2(float(I) B) -> A {\n  A(i) +=! B(2*i + k) where k in 0:2\n}");
  EXPECT_TRUE(range_of(*p, 0, "k").from_where);
  EXPECT_FALSE(range_of(*p, 0, "i").from_where);
  for (int64_t n = 0; n <= 20; ++n) {
    SizeValues s{{"I", n}};
    EXPECT_EQ(eval_range(*p, 0, "k", s), Range64(0, 2));
    EXPECT_EQ(eval_range(*p, 0, "i", s), Range64(0, n / 2)) << n;
    EXPECT_EQ(eval_extents(*p, "A", s), Shape{n / 2}) << n;
  }
}

TEST(RangeInference, DynamicStrideNeedsWhereClause) {
  std::string m = build_error("def subsample_2(float(I) B, int32(1) S) -> A {\n  A(i) = B(S(0)*i)\n}");
  EXPECT_TRUE(has(m, "'i'")) << m;
  EXPECT_TRUE(has(m, "where")) << m;
  EXPECT_TRUE(has(m, "subsample_2:2:")) << m;
}

TEST(RangeInference, DynamicStrideWithWhereClause) {
  auto p = build("def subsample_2(float(I) B, int32(1) S) -> A { A(i) = B(S(0)*i) where i in 0:I/2 }");
  EXPECT_TRUE(range_of(*p, 0, "i").from_where);
  EXPECT_EQ(eval_range(*p, 0, "i", {{"I", 9}}), Range64(0, 4));
  EXPECT_EQ(eval_extents(*p, "A", {{"I", 9}}), Shape{4});
}

TEST(RangeInference, PreconditionIsRecorded) {
  auto p = build("def f(float(I) B, float(K) C, float(J) D) -> A {\n  A(i, j) = B(i) * C(i + j) * D(j)\n}");
  SizeValues s{{"I", 3}, {"J", 4}, {"K", 100}};
  EXPECT_EQ(eval_range(*p, 0, "i", s), Range64(0, 3));
  EXPECT_EQ(eval_range(*p, 0, "j", s), Range64(0, 4));
  EXPECT_EQ(eval_extents(*p, "A", s), (Shape{3, 4}));
  int c = tc_test::tensor_index(*p, 0, "C");
  bool found = false;
  for (const auto& pre : p->ranges[0].preconditions) {
    if (pre.tensor != c) continue;
    found = true;
    EXPECT_EQ(pre.stmt, 0);
    EXPECT_EQ(pre.dim, 0);
    EXPECT_EQ(pre.access, "C(i + j)");
    EXPECT_EQ(pre.min_index.evaluate(s), 0);
    EXPECT_EQ(pre.max_index.evaluate(s), 3 - 1 + 4 - 1);
  }
  EXPECT_TRUE(found);
}

// ---- the paper's kernels ---------------------------------------------------------------

TEST(RangeInference, Sgemm) {
  // The first statement's i, j appear only on the LHS and in the read of its own element: they
  // take their extents from the second statement.
  auto p = build(
      "def sgemm(float a, float b, float(N, M) A, float(M, K) B) -> (C) {\n"
      "  C(i, j) = b * C(i, j)\n"
      "  C(i, j) += a * A(i, k) * B(k, j)\n"
      "}");
  for (SizeValues s : {SizeValues{{"N", 4}, {"M", 5}, {"K", 6}}, SizeValues{{"N", 1}, {"M", 7}, {"K", 2}}}) {
    EXPECT_EQ(eval_extents(*p, "C", s), (Shape{s["N"], s["K"]}));
    EXPECT_EQ(eval_range(*p, 0, "i", s), Range64(0, s["N"]));
    EXPECT_EQ(eval_range(*p, 0, "j", s), Range64(0, s["K"]));
    EXPECT_EQ(eval_range(*p, 1, "k", s), Range64(0, s["M"]));
    EXPECT_EQ(eval_range(*p, 1, "j", s), Range64(0, s["K"]));
  }
  EXPECT_EQ(eval_extents(*p, "a", {}), Shape{});
}

TEST(RangeInference, Sconv2dLhsOnlyVariablesTakeExtentsFromTheOtherStatement) {
  auto p = build(
      "def sconv2d(float(N, C, H, W) I, float(F, C, KH, KW) W1, float(F) B) -> (O) {\n"
      "  O(n, f, h, w) = B(f)\n"
      "  O(n, f, h, w) += I(n, c, 2 * h + kh, 3 * w + kw) * W1(f, c, kh, kw)\n"
      "}");
  for (int64_t h = 1; h <= 12; ++h)
    for (int64_t kh = 1; kh <= 4; ++kh) {
      SizeValues s{{"N", 2}, {"C", 3}, {"H", h}, {"W", h + 5}, {"F", 4}, {"KH", kh}, {"KW", 2}};
      // Brute force: the largest oh such that 2 * (oh - 1) + kh - 1 < H.
      int64_t oh = 0, ow = 0;
      while (2 * oh + kh - 1 < h) ++oh;
      while (3 * ow + 2 - 1 < h + 5) ++ow;
      EXPECT_EQ(eval_extents(*p, "O", s), (Shape{2, 4, oh, ow})) << h << " " << kh;
      // Statement 1 writes the same domain as statement 2.
      EXPECT_EQ(eval_range(*p, 0, "n", s), Range64(0, 2));
      EXPECT_EQ(eval_range(*p, 0, "f", s), Range64(0, 4));
      EXPECT_EQ(eval_range(*p, 0, "h", s), Range64(0, oh));
      EXPECT_EQ(eval_range(*p, 0, "w", s), Range64(0, ow));
      EXPECT_EQ(count(eval_range(*p, 1, "h", s)), oh);
      EXPECT_EQ(count(eval_range(*p, 1, "w", s)), ow);
      EXPECT_EQ(eval_range(*p, 1, "kh", s), Range64(0, kh));
      EXPECT_EQ(eval_range(*p, 1, "c", s), Range64(0, 3));
    }
}

TEST(RangeInference, Sconv2dWithDynamicStridesNeedsWhere) {
  std::string m = build_error(
      "def sconv2d(int32 sh, int32 sw, float(N, C, H, W) I, float(F, C, KH, KW) W1, float(F) B) -> (O) {\n"
      "  O(n, f, h, w) = B(f)\n"
      "  O(n, f, h, w) += I(n, c, sh * h + kh, sw * w + kw) * W1(f, c, kh, kw)\n"
      "}");
  EXPECT_TRUE(has(m, "'h'")) << m;
  EXPECT_TRUE(has(m, "where")) << m;
}

TEST(RangeInference, SoftmaxWithTemporaries) {
  auto p = build(tc_test::kSoftmax);
  SizeValues s{{"N", 3}, {"D", 11}};
  EXPECT_EQ(eval_extents(*p, "maxVal", s), Shape{3});
  EXPECT_EQ(eval_extents(*p, "expDistance", s), (Shape{3, 11}));
  EXPECT_EQ(eval_extents(*p, "expSum", s), Shape{3});
  EXPECT_EQ(eval_extents(*p, "O", s), (Shape{3, 11}));
  EXPECT_EQ(eval_range(*p, 0, "d", s), Range64(0, 11));
  EXPECT_EQ(eval_range(*p, 2, "d", s), Range64(0, 11));
  EXPECT_EQ(eval_range(*p, 3, "n", s), Range64(0, 3));
  EXPECT_EQ(p->def(0).tensors[tc_test::tensor_index(*p, 0, "expSum")].role, tc::lang::TensorRole::Temporary);
}

TEST(RangeInference, ExtentsFlowThroughTemporariesInOrder) {
  // Each stage halves the previous one; the last output's extent composes them.
  auto p = build(
      "def pyramid(float(N) A) -> (C) {\n"
      "  T(i) = A(2 * i) + A(2 * i + 1)\n"
      "  U(i) = T(2 * i) + T(2 * i + 1)\n"
      "  C(i) = U(i) * 2\n"
      "}");
  for (int64_t n = 0; n <= 40; ++n) {
    SizeValues s{{"N", n}};
    EXPECT_EQ(eval_extents(*p, "T", s), Shape{n / 2}) << n;
    EXPECT_EQ(eval_extents(*p, "C", s), Shape{n / 4}) << n;
  }
}

TEST(RangeInference, MaxPoolWithWhere) {
  auto p = build(
      "def maxpool2x2(float(B, C, H, W) I) -> (out) {\n"
      "  out(b, c, i, j) max=! I(b, c, 2 * i + kw, 2 * j + kh)\n"
      "     where kw in 0:2, kh in 0:2\n"
      "}");
  for (int64_t h = 0; h <= 9; ++h) {
    SizeValues s{{"B", 2}, {"C", 3}, {"H", h}, {"W", h + 3}};
    EXPECT_EQ(eval_extents(*p, "out", s), (Shape{2, 3, h / 2, (h + 3) / 2})) << h;
    EXPECT_EQ(eval_range(*p, 0, "kw", s), Range64(0, 2));
  }
  EXPECT_TRUE(range_of(*p, 0, "kh").from_where);
}

TEST(RangeInference, MaxPoolWithoutWhereIsAnError) {
  std::string m = build_error("def maxpool2x2(float(B, C, H, W) I) -> (out) {\n"
                              "  out(b, c, i, j) max=! I(b, c, 2 * i + kw, 2 * j + kh)\n}");
  EXPECT_TRUE(has(m, "'i' and 'kw'") || has(m, "'j' and 'kh'")) << m;
  EXPECT_TRUE(has(m, "where")) << m;
}

TEST(RangeInference, MatrixVectorAndBatchedMatMul) {
  auto p = build(
      "def mv(float(M, K) A, float(K) x) -> (C) { C(i) +=! A(i, k) * x(k) }\n"
      "def tbmm(float(B, N, M) X, float(B, K, M) Y) -> (Z) { Z(b, n, k) +=! X(b, n, m) * Y(b, k, m) }");
  EXPECT_EQ(eval_extents(*p, "C", {{"M", 5}, {"K", 2}}, 0), Shape{5});
  SizeValues s{{"B", 500}, {"N", 26}, {"M", 72}, {"K", 26}};
  EXPECT_EQ(eval_extents(*p, "Z", s, 1), (Shape{500, 26, 26}));
  EXPECT_EQ(eval_range(*p, 0, "m", s, 1), Range64(0, 72));
}

TEST(RangeInference, GatherAndClampedLookup) {
  auto p = build(
      "def gather(float(N) X, int32(A, B) I) -> (Z) { Z(i, j) = X(I(i, j)) }\n"
      "def lut(float(J) B, int32(I) C) -> A { A(i) = B(max(min(C(i), J - 1), 0)) }");
  EXPECT_EQ(eval_extents(*p, "Z", {{"N", 9}, {"A", 2}, {"B", 3}}, 0), (Shape{2, 3}));
  EXPECT_EQ(eval_extents(*p, "A", {{"J", 9}, {"I", 4}}, 1), Shape{4});
}

// ---- where clauses and other rules -----------------------------------------------------

TEST(RangeInference, WhereClauseGivesRangeAndExtent) {
  auto p = build("def f(float(N) A) -> (B) { B(i) = A(i - 2) where i in 2:N + 2 }");
  EXPECT_EQ(eval_range(*p, 0, "i", {{"N", 5}}), Range64(2, 7));
  EXPECT_EQ(eval_extents(*p, "B", {{"N", 5}}), Shape{7});
}

TEST(RangeInference, WhereClauseWithoutAnyAccess) {
  auto p = build("def iota(float(N) A) -> (B) { B(i) = i where i in 0:2 * N + 1 }");
  EXPECT_EQ(eval_extents(*p, "B", {{"N", 5}}), Shape{11});
}

TEST(RangeInference, WhereClauseMayUseShapesOfEarlierTensors) {
  auto p = build(
      "def f(float(N) A) -> (B, C) {\n"
      "  B(i) = A(2 * i)\n"
      "  C(i) = B(i) where i in 0:B.0 - 1\n"
      "}");
  EXPECT_EQ(eval_extents(*p, "B", {{"N", 9}}), Shape{5});
  EXPECT_EQ(eval_extents(*p, "C", {{"N", 9}}), Shape{4});
}

TEST(RangeInference, SeveralWritersTakeTheLargestExtent) {
  auto p = build("def f(float(N) A, float(M) B) -> C {\n  C(i) = A(i)\n  C(i) += B(i)\n}");
  EXPECT_EQ(eval_extents(*p, "C", {{"N", 3}, {"M", 5}}), Shape{5});
  EXPECT_EQ(eval_extents(*p, "C", {{"N", 6}, {"M", 5}}), Shape{6});
  EXPECT_EQ(eval_range(*p, 0, "i", {{"N", 3}, {"M", 5}}), Range64(0, 3));
  EXPECT_EQ(eval_range(*p, 1, "i", {{"N", 3}, {"M", 5}}), Range64(0, 5));
}

TEST(RangeInference, AnnotatedOutputDimensionResolvesLhsOnlyVariable) {
  auto p = build("def bcast(float(N) A, float(M) X) -> (float(N, M) B) { B(i, j) = A(i) }");
  EXPECT_EQ(eval_extents(*p, "B", {{"N", 3}, {"M", 4}}), (Shape{3, 4}));
  EXPECT_EQ(eval_range(*p, 0, "j", {{"N", 3}, {"M", 4}}), Range64(0, 4));
}

TEST(RangeInference, ScalarOutput) {
  auto p = build("def sum(float(N) A) -> s { s +=! A(i) }");
  EXPECT_EQ(eval_extents(*p, "s", {{"N", 4}}), Shape{});
  EXPECT_EQ(eval_range(*p, 0, "i", {{"N", 4}}), Range64(0, 4));
}

TEST(RangeInference, DescriptionListsTensorsAndRanges) {
  auto p = build("def mat_mul(float(I, K) B, float(K, J) C) -> A {\n  A(i, j) +=! B(i, k) * C(k, j)\n}");
  ASSERT_EQ(p->descriptions.size(), 1u);
  const std::string& d = p->descriptions[0];
  EXPECT_TRUE(has(d, "def mat_mul")) << d;
  EXPECT_TRUE(has(d, "input B: float32(I, K)")) << d;
  EXPECT_TRUE(has(d, "output A: float32(I, J)")) << d;
  EXPECT_TRUE(has(d, "statement 1 (line 2, A):")) << d;
  EXPECT_TRUE(has(d, "k in 0:K (reduction)")) << d;
}

// ---- scatters: the write constrains ranges like a read of the written tensor -------------

TEST(RangeInference, ScatterWriteConstrainsItsVariables) {
  // d appears in dO and in the write: both bound it; b and l come from the gather I(b, l).
  auto p = build("def g(float(E, D) LUT, int32(B, L) I, float(B, D) dO) -> (float(E, D) dLUT) {\n"
                 "  dLUT(I(b, l), d) +=! dO(b, d)\n}");
  SizeValues s{{"E", 7}, {"D", 3}, {"B", 2}, {"L", 5}};
  EXPECT_EQ(eval_range(*p, 0, "b", s), Range64(0, 2));
  EXPECT_EQ(eval_range(*p, 0, "l", s), Range64(0, 5));
  EXPECT_EQ(eval_range(*p, 0, "d", s), Range64(0, 3));
  EXPECT_EQ(eval_extents(*p, "dLUT", s), (Shape{7, 3}));  // the annotation, not the statement
  // Only the write constrains d here.
  auto q = build("def h(float(E, D) Z, int32(K) I, float(K) V) -> (float(E, D) H) { H(I(k), d) +=! V(k) }");
  EXPECT_EQ(eval_range(*q, 0, "d", {{"E", 4}, {"D", 6}, {"K", 2}}), Range64(0, 6));
  // An earlier plain statement gives the extents the write is read against.
  auto r = build("def f(float(N) X, int32(K) I) -> (O) { O(i) = X(i) where i in 0:N+2\n O(I(k) + j) += 1 where j in 0:2 }");
  EXPECT_EQ(eval_extents(*r, "O", {{"N", 4}, {"K", 3}}), Shape{6});
  EXPECT_EQ(eval_range(*r, 1, "k", {{"N", 4}, {"K", 3}}), Range64(0, 3));
}

TEST(RangeInference, AffineScatterWriteIsAPrecondition) {
  auto p = build("def t(float(N) X, float(K) W, float(M) Z) -> (float(M) O) { O(i + k) +=! X(i) * W(k) }");
  SizeValues s{{"N", 4}, {"K", 3}, {"M", 6}};
  EXPECT_EQ(eval_range(*p, 0, "i", s), Range64(0, 4));
  EXPECT_EQ(eval_range(*p, 0, "k", s), Range64(0, 3));
  bool found = false;
  for (const auto& pre : p->ranges[0].preconditions)
    if (pre.write) {
      found = true;
      EXPECT_EQ(pre.access, "O(i + k)");
      EXPECT_EQ(pre.min_index.evaluate(s), 0);
      EXPECT_EQ(pre.max_index.evaluate(s), 5);
    }
  EXPECT_TRUE(found);
}

TEST(RangeInference, DescriptionShowsAScattersWrite) {
  auto p = build("def g(float(E, D) LUT, int32(B, L) I, float(B, D) dO) -> (float(E, D) dLUT) {\n"
                 "  dLUT(I(b, l), d) +=! dO(b, d)\n}");
  const std::string& d = p->descriptions[0];
  EXPECT_TRUE(has(d, "statement 1 (line 2, scatter into dLUT(I(b, l), d)): b in 0:B, l in 0:L, d in 0:D\n")) << d;
  auto q = build("def g(float(E, D) LUT, int32(B, L) I, float(B, D) dO) -> (float(E, D) dLUT) {\n"
                 "  dLUT(I(l, b), d) +=! dO(b, d)\n}");
  EXPECT_NE(q->descriptions[0], d);
}

TEST(RangeInferenceErrors, ScatterVariableNothingConstrains) {
  std::string m = build_error("def f(int32(N) I) -> (int32(8) H) {\n  H(I(i) + j) +=! 1\n}");
  EXPECT_TRUE(has(m, "cannot infer the range of 'j'")) << m;
  EXPECT_TRUE(has(m, "where j in")) << m;
  auto p = build("def f(int32(N) I) -> (int32(8) H) {\n  H(I(i) + j) +=! 1 where j in 0:2\n}");
  EXPECT_EQ(eval_range(*p, 0, "j", {{"N", 3}}), Range64(0, 2));
}

// ---- errors --------------------------------------------------------------------------

TEST(RangeInferenceErrors, UnconstrainedLhsVariable) {
  std::string m = build_error("def f(float(N) A) -> B {\n  B(i, j) = A(i)\n}");
  EXPECT_TRUE(has(m, "cannot infer the range of 'j'")) << m;
  EXPECT_TRUE(has(m, "where j in")) << m;
  EXPECT_TRUE(has(m, "f:2:8: error:")) << m;
}

TEST(RangeInferenceErrors, UnconstrainedReductionVariable) {
  std::string m = build_error("def f(float(N) A) -> B { B(i) +=! A(i) * k }");
  EXPECT_TRUE(has(m, "cannot infer the range of 'k'")) << m;
  EXPECT_TRUE(has(m, "no tensor access constrains it")) << m;
  EXPECT_TRUE(has(m, "where k in 0:N")) << m;
}

TEST(RangeInferenceErrors, AmbiguousVariables) {
  std::string m = build_error("def f(float(N) A) -> B {\n  B(i) +=! A(i + k)\n}");
  EXPECT_TRUE(has(m, "cannot infer the ranges of 'i' and 'k'")) << m;
  EXPECT_TRUE(has(m, "from 'A(i + k)'")) << m;
  EXPECT_TRUE(has(m, "where")) << m;
  // One where clause removes the ambiguity.
  auto p = build("def f(float(N) A) -> B { B(i) +=! A(i + k) where k in 0:3 }");
  EXPECT_EQ(eval_extents(*p, "B", {{"N", 10}}), Shape{8});
}

TEST(RangeInferenceErrors, UnboundedRange) {
  std::string m = build_error("def f(float(N) A) -> B { B(i) = A(i % N) }");
  EXPECT_TRUE(has(m, "'i'")) << m;
  EXPECT_TRUE(has(m, "where")) << m;
}

TEST(RangeInferenceErrors, CircularShapes) {
  std::string m = build_error("def f(float(N) A) -> (B, C) {\n  B(i) = C(i)\n  C(i) = B(i)\n}");
  EXPECT_TRUE(has(m, "whose shape depends on this statement or on a later one")) << m;
}

TEST(RangeInferenceErrors, ErrorUsesSourceName) {
  std::string m = tc_test::error_of(
      [] { tc::ir::build_program("def f(float(N) A) -> B { B(i) +=! A(i) * k }", "net.tc"); }, TC_ERROR_SEMANTIC);
  EXPECT_EQ(m.rfind("net.tc:1:", 0), 0u) << m;
}

TEST(RangeInferenceErrors, EarlierStagesReportTheirOwnStatus) {
  build_error("def f(float(N) A) -> B { B(i) = A(i) @ }", TC_ERROR_SYNTAX);
  build_error("def f(float(N) A) -> B { A(i) = B(i) }", TC_ERROR_SEMANTIC);
}

TEST(Program, FindDef) {
  auto one = build("def only(float(N) A) -> B { B(i) = A(i) }");
  EXPECT_EQ(one->find_def(nullptr), 0u);
  EXPECT_EQ(one->find_def("only"), 0u);
  auto two = build("def a(float(N) A) -> B { B(i) = A(i) }\ndef b(float(N) A) -> B { B(i) = A(i) }");
  EXPECT_EQ(two->num_defs(), 2u);
  EXPECT_EQ(two->find_def("b"), 1u);
  std::string m = tc_test::error_of([&] { two->find_def(nullptr); }, TC_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(m, "a, b")) << m;
  m = tc_test::error_of([&] { two->find_def("c"); }, TC_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(m, "no def named 'c'")) << m;
}

// ---- brute force: inferred 1-D ranges are exactly the in-bounds indices ----------------

namespace {

struct IndexCase {
  const char* tc;                      // the subscript, in TC
  int64_t (*f)(int64_t i, int64_t n);  // the same subscript in C++ (floor division)
};

int64_t fdiv(int64_t a, int64_t b) { return floor_div(a, b); }

const IndexCase kIndexCases[] = {
    {"i", [](int64_t i, int64_t) { return i; }},
    {"i + 3", [](int64_t i, int64_t) { return i + 3; }},
    {"i - 3", [](int64_t i, int64_t) { return i - 3; }},
    {"2 * i", [](int64_t i, int64_t) { return 2 * i; }},
    {"2 * i + 1", [](int64_t i, int64_t) { return 2 * i + 1; }},
    {"3 * i - 2", [](int64_t i, int64_t) { return 3 * i - 2; }},
    {"4 * i + 3", [](int64_t i, int64_t) { return 4 * i + 3; }},
    {"i / 2", [](int64_t i, int64_t) { return fdiv(i, 2); }},
    {"(i + 1) / 3", [](int64_t i, int64_t) { return fdiv(i + 1, 3); }},
    {"(i - 5) / 2", [](int64_t i, int64_t) { return fdiv(i - 5, 2); }},
    {"10 - i", [](int64_t i, int64_t) { return 10 - i; }},
    {"N - 1 - i", [](int64_t i, int64_t n) { return n - 1 - i; }},
    {"2 * (N - 1 - i)", [](int64_t i, int64_t n) { return 2 * (n - 1 - i); }},
    {"-i + 5", [](int64_t i, int64_t) { return -i + 5; }},
    {"N / 2 + i", [](int64_t i, int64_t n) { return fdiv(n, 2) + i; }},
    {"i - N / 2", [](int64_t i, int64_t n) { return i - fdiv(n, 2); }},
};

}  // namespace

TEST(RangeInference, OneDimensionalRangesAreExactlyTheInBoundsIndices) {
  for (const IndexCase& c : kIndexCases) {
    auto p = build(std::string("def f(float(N) A) -> B { B(i) = A(") + c.tc + ") }");
    for (int64_t n = 0; n <= 24; ++n) {
      // Index variables start at 0 unless a where clause says otherwise.
      std::vector<int64_t> ok;
      for (int64_t i = 0; i < 200; ++i) {
        int64_t x = c.f(i, n);
        if (x >= 0 && x < n) ok.push_back(i);
      }
      auto r = eval_range(*p, 0, "i", {{"N", n}});
      if (ok.empty()) {
        EXPECT_LE(r.second, r.first) << c.tc << " N=" << n;
        continue;
      }
      ASSERT_EQ(ok.back() - ok.front() + 1, static_cast<int64_t>(ok.size())) << c.tc << " is not an interval";
      EXPECT_EQ(r, Range64(ok.front(), ok.back() + 1)) << c.tc << " N=" << n;
      EXPECT_EQ(eval_extents(*p, "B", {{"N", n}}), Shape{ok.back() + 1}) << c.tc << " N=" << n;
    }
  }
}

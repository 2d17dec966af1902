// test_ir.cpp — the IR of a def (src/ir/def.h): golden texts of representative defs (what
// each statement writes, its domain, its right-hand side with types), and what the IR records
// about every read: subscript kinds (affine, non-affine, data-dependent), which subscripts
// binding proves, guarded reads, pointwise reads, and reads kept from range inference.
#include <gtest/gtest.h>

#include "infer_test_util.h"
#include "ir/print.h"

using tc::ir::IndexKind;
using tc_test::build;

namespace {

const tc::ir::Def& ir_of(const tc_test::ProgramPtr& p, size_t def = 0) { return *p->ir.at(def); }

std::string text_of(const std::string& src, size_t def = 0) { return tc::ir::to_text(ir_of(build(src), def)); }

}  // namespace

TEST(IrGolden, MatMul) {
  EXPECT_EQ(text_of("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }"),
            "tc-ir 1 def mm\n"
            "size M\n"
            "size K\n"
            "size N\n"
            "input A: float32(M, K)\n"
            "input B: float32(K, N)\n"
            "output C: float32(M, N)\n"
            "C(i, j) +=! {i in 0:M, j in 0:N, k in 0:K} (* float32 A[i, k] B[k, j])\n");
}

TEST(IrGolden, SoftmaxTemporariesAndBuiltins) {
  EXPECT_EQ(text_of(tc_test::kSoftmax),
            "tc-ir 1 def softmax\n"
            "size N\n"
            "size D\n"
            "input I: float32(N, D)\n"
            "output O: float32(N, D)\n"
            "temporary maxVal: float32(N)\n"
            "temporary expDistance: float32(N, D)\n"
            "temporary expSum: float32(N)\n"
            "maxVal(n) max=! {n in 0:N, d in 0:D} I[n, d]\n"
            "expDistance(n, d) = {n in 0:N, d in 0:D} (exp float32 (- float32 I[n, d] maxVal[n]))\n"
            "expSum(n) +=! {n in 0:N, d in 0:D} expDistance[n, d]\n"
            "O(n, d) = {n in 0:N, d in 0:D} (/ float32 expDistance[n, d] expSum[n])\n");
}

TEST(IrGolden, ConstantsConversionsAndSizes) {
  EXPECT_EQ(text_of("def f(float(N) A, int32(N) I) -> (B) { B(i) = A(i) * 0.5 + I(i) / 2 + N }"),
            "tc-ir 1 def f\n"
            "size N\n"
            "input A: float32(N)\n"
            "input I: int32(N)\n"
            "output B: float32(N)\n"
            "B(i) = {i in 0:N} (+ float32 (+ float32 (* float32 A[i] 0x1p-1:float32) (/ int32 I[i] 2:int32)) N)\n");
}

TEST(IrGolden, WhereRangesGuardsAndGathers) {
  EXPECT_EQ(text_of("def g(float(N) X, int32(K) I) -> (Y) {\n"
                    "  Y(k) = X(I(k)) where k in 0:K\n"
                    "  Y(k) += k > 0 ? X(k - 1) : 0.0 where k in 0:K\n"
                    "}"),
            "tc-ir 1 def g\n"
            "size N\n"
            "size K\n"
            "input X: float32(N)\n"
            "input I: int32(K)\n"
            "output Y: float32(K)\n"
            "Y(k) = {k in 0:K} X[I[k]]\n"
            "Y(k) += {k in 0:K} (?: float32 (> int32 k 0:int32) X[(- int32 k 1:int32)] 0x0p+0:float32)\n");
}

// A scatter prints its write with its subscripts, like a read; reads inside them are reads of
// the statement; the write's subscripts are proven where binding checks them.
TEST(IrGolden, ScatterWritesThroughItsSubscripts) {
  auto p = build("def g(float(E,D) LUT, int32(B,L) I, float(B,D) dO) -> (float(E,D) dLUT) {\n"
                 "  dLUT(I(b, l), d) +=! dO(b, d)\n}");
  EXPECT_EQ(tc::ir::to_text(ir_of(p)),
            "tc-ir 1 def g\n"
            "size E\n"
            "size D\n"
            "size B\n"
            "size L\n"
            "input LUT: float32(E, D)\n"
            "input I: int32(B, L)\n"
            "input dO: float32(B, D)\n"
            "output dLUT: float32(E, D)\n"
            "dLUT[I[b, l], d] +=! {b in 0:B, l in 0:L, d in 0:D} dO[b, d]\n");
  const tc::ir::Stmt& s = ir_of(p).stmts[0];
  ASSERT_TRUE(s.scatter);
  EXPECT_EQ(s.num_lhs_vars(), 0u);
  EXPECT_EQ(s.write.text, "dLUT(I(b, l), d)");
  ASSERT_EQ(s.write.subscripts.size(), 2u);
  EXPECT_EQ(s.write.subscripts[0].kind, IndexKind::DataDependent);
  EXPECT_FALSE(s.write.subscripts[0].proven);
  EXPECT_EQ(s.write.subscripts[1].kind, IndexKind::Affine);
  EXPECT_TRUE(s.write.subscripts[1].proven);
  ASSERT_EQ(s.reads.size(), 2u);  // I(b, l) in the write, dO(b, d)
  EXPECT_FALSE(s.reads[0].pointwise);
  EXPECT_FALSE(s.reads[1].pointwise);
  auto q = build("def t(float(N) X, float(K) W, float(M) Z) -> (float(M) O) { O(i + k) += X(i) * W(k) }");
  EXPECT_TRUE(ir_of(q).stmts[0].write.subscripts[0].proven);
  EXPECT_EQ(ir_of(q).stmts[0].write.subscripts[0].kind, IndexKind::Affine);
}

TEST(IrReads, SubscriptKindsAndProofs) {
  auto p = build("def f(float(N, N) A, int32(N) I) -> (B) {\n"
                 "  B(i, j) +=! A(i + 2 * j - j, I(i)) * A(i * j % N, N - 1 - i) where i in 0:N, j in 0:N\n"
                 "}");
  const auto& st = ir_of(p).stmts.at(0);
  ASSERT_EQ(st.reads.size(), 3u);  // outermost first: A(.., I(i)), I(i), A(i * j % N, ..)
  const auto& gather = st.reads[0];
  EXPECT_EQ(gather.text, "A((i + (2 * j)) - j, I(i))");  // as the printer spells it
  EXPECT_EQ(gather.subscripts[0].kind, IndexKind::Affine);
  EXPECT_EQ(gather.subscripts[1].kind, IndexKind::DataDependent);
  EXPECT_TRUE(gather.gather());
  EXPECT_FALSE(gather.subscripts[1].proven);  // a gather is checked where it is evaluated
  const auto& index = st.reads[1];
  EXPECT_EQ(index.tensor, ir_of(p).find_tensor("I"));
  EXPECT_EQ(index.subscripts[0].var, 0);
  EXPECT_TRUE(index.subscripts[0].proven);
  const auto& other = st.reads[2];
  EXPECT_EQ(other.subscripts[0].kind, IndexKind::NonAffine);
  EXPECT_EQ(other.subscripts[1].kind, IndexKind::Affine);
  EXPECT_TRUE(other.subscripts[1].proven);
  EXPECT_FALSE(other.gather());
}

TEST(IrReads, GuardedAndPointwise) {
  auto p = build("def f(float(N) A, float(N) B) -> (C) {\n"
                 "  C(i) = A(i) > 0 ? B(i + 1) : A(i)\n"
                 "  C(i) += C(i) && B(i) > 0\n"
                 "}");
  const auto& s0 = ir_of(p).stmts.at(0);
  ASSERT_EQ(s0.reads.size(), 3u);
  EXPECT_FALSE(s0.reads[0].guarded);  // the condition is always evaluated
  EXPECT_TRUE(s0.reads[0].pointwise);
  EXPECT_TRUE(s0.reads[1].guarded);   // B(i + 1), in a branch: not proven, checked when taken
  EXPECT_FALSE(s0.reads[1].pointwise);
  EXPECT_FALSE(s0.reads[1].subscripts[0].proven);
  EXPECT_TRUE(s0.reads[2].guarded);
  const auto& s1 = ir_of(p).stmts.at(1);
  ASSERT_EQ(s1.reads.size(), 2u);
  EXPECT_TRUE(s1.reads[0].subscripts[0].proven);  // the statement's own element
  EXPECT_TRUE(s1.reads[1].guarded);               // right of &&
}

TEST(IrReads, KeptFromRangeInference) {
  // Every read of the IR is one range inference recorded (the same syntax node), none found again.
  auto p = build(tc_test::kSoftmax);
  const auto& def = ir_of(p);
  for (size_t s = 0; s < def.stmts.size(); ++s) {
    const auto& accesses = p->ranges.at(0).stmts.at(s).accesses;
    ASSERT_EQ(def.stmts[s].reads.size(), accesses.size());
    for (size_t r = 0; r < accesses.size(); ++r) EXPECT_EQ(def.stmts[s].reads[r].loc.offset, accesses[r].expr->loc.offset);
  }
}

TEST(IrGolden, InlinedCallsAppearInlined) {
  const char* src =
      "def sq(float(N) X) -> (Y) { Y(i) = X(i) * X(i) }\n"
      "def f(float(M) A) -> (B) { T = sq(A)\n B(i) = T(i) + 1 }";
  EXPECT_EQ(text_of(src, 1),
            "tc-ir 1 def f\n"
            "size M\n"
            "input A: float32(M)\n"
            "output B: float32(M)\n"
            "temporary T: float32(M)\n"
            "T(i) = {i in 0:M} (* float32 A[i] A[i])\n"
            "B(i) = {i in 0:M} (+ float32 T[i] 1:float32)\n");
}

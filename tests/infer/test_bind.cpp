// test_bind.cpp — tc::ir::bind: checking inputs against a def's signature, evaluating extents
// and per-statement ranges for concrete shapes, and checking preconditions.
#include <gtest/gtest.h>

#include <climits>

#include "infer_test_util.h"

using tc::ScalarType;
using tc_test::bind_def;
using tc_test::bind_error;
using tc_test::bound_range;
using tc_test::build;
using tc_test::has;
using tc_test::Inputs;
using tc_test::Range64;
using tc_test::Shape;
using tc_test::shape_of;

namespace {

const char* kMatMul = "def mat_mul(float(I, K) B, float(K, J) C) -> A {\n  A(i, j) +=! B(i, k) * C(k, j)\n}";
const char* kPrecondition =
    "def f(float(I) B, float(K) C, float(J) D) -> A {\n  A(i, j) = B(i) * C(i + j) * D(j)\n}";

}  // namespace

TEST(Bind, MatMulShapesAndRanges) {
  auto p = build(kMatMul);
  Inputs in;
  in.f32({3, 5}).f32({5, 7});
  auto b = bind_def(p, in);
  EXPECT_EQ(b.sizes.at("I"), 3);
  EXPECT_EQ(b.sizes.at("K"), 5);
  EXPECT_EQ(b.sizes.at("J"), 7);
  EXPECT_EQ(shape_of(b, "A"), (Shape{3, 7}));
  EXPECT_EQ(shape_of(b, "B"), (Shape{3, 5}));
  ASSERT_EQ(b.ranges.size(), 1u);
  EXPECT_EQ(bound_range(b, 0, "i"), Range64(0, 3));
  EXPECT_EQ(bound_range(b, 0, "j"), Range64(0, 7));
  EXPECT_EQ(bound_range(b, 0, "k"), Range64(0, 5));
  auto outs = b.outputs();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].type, ScalarType::Float32);
  EXPECT_EQ(outs[0].shape, (Shape{3, 7}));
  EXPECT_EQ(outs[0].num_elements(), 21);
  ASSERT_EQ(b.inputs().size(), 2u);
  EXPECT_EQ(b.inputs()[1].shape, (Shape{5, 7}));
}

TEST(Bind, RepeatedSizeMustAgree) {
  auto p = build(kMatMul);
  Inputs in;
  in.f32({3, 5}).f32({6, 7});
  std::string m = bind_error(p, in);
  EXPECT_TRUE(has(m, "input 'C' (argument 2 of 'mat_mul') dimension 0")) << m;
  EXPECT_TRUE(has(m, "size 'K' is 5 (from 'B' dimension 1), got 6")) << m;
}

TEST(Bind, PreconditionFailsWhenTensorTooSmall) {
  auto p = build(kPrecondition);
  Inputs in;
  in.f32({3}).f32({5}).f32({4});  // C(i + j) reads up to 2 + 3 = 5
  std::string m = bind_error(p, in);
  EXPECT_TRUE(has(m, "'C(i + j)' reads 'C' out of bounds in dimension 0")) << m;
  EXPECT_TRUE(has(m, "indices 0..5 but the extent is 5")) << m;
  EXPECT_TRUE(has(m, "I=3")) << m;
  EXPECT_TRUE(has(m, "f:2:20: error:")) << m;
}

TEST(Bind, PreconditionHoldsWhenTensorBigEnough) {
  auto p = build(kPrecondition);
  for (int64_t k : {6, 7, 100}) {
    Inputs in;
    in.f32({3}).f32({k}).f32({4});
    auto b = bind_def(p, in);
    EXPECT_EQ(shape_of(b, "A"), (Shape{3, 4}));
    EXPECT_EQ(bound_range(b, 0, "i"), Range64(0, 3));
    EXPECT_EQ(bound_range(b, 0, "j"), Range64(0, 4));
  }
}

TEST(Bind, PreconditionSkippedForEmptyDomain) {
  auto p = build(kPrecondition);
  Inputs in;
  in.f32({0}).f32({0}).f32({4});  // i in 0:0: nothing is read
  auto b = bind_def(p, in);
  EXPECT_EQ(shape_of(b, "A"), (Shape{0, 4}));
}

TEST(Bind, Reverted) {
  auto p = build("def reverted(float(I) B) -> A { A(i) = B(10 - i) }");
  for (int64_t n : {1, 5, 11, 30}) {
    Inputs in;
    in.f32({n});
    auto b = bind_def(p, in);
    EXPECT_EQ(shape_of(b, "A"), Shape{11});
    EXPECT_EQ(bound_range(b, 0, "i"), Range64(std::max<int64_t>(11 - n, 0), 11)) << n;
  }
}

TEST(Bind, StridedAndStencil) {
  auto p = build(
      "def sub(float(I) B) -> A { A(i) = B(2 * i) }\n"
      "def pool(float(I) B) -> A { A(i) = B(2 * i) + B(2 * i + 1) }\n"
      "def stencil(float(N) B, float(KS) K) -> A { A(i) += B(i + k) * K(k) }");
  Inputs in;
  in.f32({7});
  EXPECT_EQ(shape_of(bind_def(p, in, 0), "A"), Shape{4});
  EXPECT_EQ(shape_of(bind_def(p, in, 1), "A"), Shape{3});
  Inputs st;
  st.f32({10}).f32({3});
  auto b = bind_def(p, st, 2);
  EXPECT_EQ(shape_of(b, "A"), Shape{8});
  EXPECT_EQ(bound_range(b, 0, "i"), Range64(0, 8));
  EXPECT_EQ(bound_range(b, 0, "k"), Range64(0, 3));
}

TEST(Bind, Sgemm) {
  auto p = build(
      "def sgemm(float a, float b, float(N, M) A, float(M, K) B) -> (C) {\n"
      "  C(i, j) = b * C(i, j)\n"
      "  C(i, j) += a * A(i, k) * B(k, j)\n"
      "}");
  Inputs in;
  in.f32({}).f32({}).f32({4, 5}).f32({5, 6});
  auto b = bind_def(p, in);
  EXPECT_EQ(shape_of(b, "C"), (Shape{4, 6}));
  EXPECT_EQ(shape_of(b, "a"), Shape{});
  EXPECT_EQ(b.tensors[0].num_elements(), 1);
  EXPECT_EQ(bound_range(b, 0, "i"), Range64(0, 4));
  EXPECT_EQ(bound_range(b, 0, "j"), Range64(0, 6));
  EXPECT_EQ(bound_range(b, 1, "k"), Range64(0, 5));
}

TEST(Bind, TemporariesGetShapes) {
  auto p = build(tc_test::kSoftmax);
  Inputs in;
  in.f32({2, 9});
  auto b = bind_def(p, in);
  EXPECT_EQ(shape_of(b, "maxVal"), Shape{2});
  EXPECT_EQ(shape_of(b, "expDistance"), (Shape{2, 9}));
  EXPECT_EQ(shape_of(b, "O"), (Shape{2, 9}));
  EXPECT_EQ(b.outputs().size(), 1u);  // temporaries are neither inputs nor outputs
  EXPECT_EQ(b.tensors.size(), 5u);
}

TEST(Bind, OutputDtypeFollowsInference) {
  auto p = build("def f(half(N) H, int8(N) I) -> (C, D) { C(i) = H(i) * 2 D(i) = I(i) < 3 }");
  Inputs in;
  in.add(ScalarType::Float16, {4}).add(ScalarType::Int8, {4});
  auto outs = bind_def(p, in).outputs();
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0].type, ScalarType::Float16);
  EXPECT_EQ(outs[1].type, ScalarType::Bool);
}

TEST(Bind, ZeroSizedDimensions) {
  auto p = build(kMatMul);
  Inputs in;
  in.f32({3, 0}).f32({0, 2});
  auto b = bind_def(p, in);
  EXPECT_EQ(shape_of(b, "A"), (Shape{3, 2}));
  EXPECT_EQ(bound_range(b, 0, "k"), Range64(0, 0));
}

TEST(Bind, InputCountAndNull) {
  auto p = build(kMatMul);
  Inputs one;
  one.f32({3, 5});
  std::string m = bind_error(p, one, TC_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(has(m, "'mat_mul' takes 2 inputs, got 1")) << m;
  tc_test::error_of([&] { tc::ir::bind(p, 0, nullptr, 2); }, TC_ERROR_INVALID_ARGUMENT);
  auto q = build("def f() -> (o) { o(i) = i where i in 0:4 }");
  auto b = tc::ir::bind(q, 0, nullptr, 0);
  EXPECT_EQ(shape_of(b, "o"), Shape{4});
}

TEST(Bind, NullShapeIsInvalidArgument) {
  auto p = build(kMatMul);
  Inputs in;
  in.f32({3, 5}).f32({5, 7});
  in[1].shape = nullptr;
  bind_error(p, in, TC_ERROR_INVALID_ARGUMENT);
}

TEST(Bind, DtypeMismatch) {
  auto p = build(kMatMul);
  Inputs in;
  in.f32({3, 5}).add(ScalarType::Float64, {5, 7});
  std::string m = bind_error(p, in);
  EXPECT_TRUE(has(m, "input 'C' (argument 2 of 'mat_mul'): expected dtype float32, got float64")) << m;
}

TEST(Bind, UnsupportedDtype) {
  auto p = build(kMatMul);
  Inputs in;
  in.f32({3, 5}).f32({5, 7});
  in[0].dtype.lanes = 4;
  std::string m = bind_error(p, in);
  EXPECT_TRUE(has(m, "unsupported dtype float32x4")) << m;
  in[0].dtype = DLDataType{4 /* kDLBfloat */, 16, 1};
  bind_error(p, in);
}

TEST(Bind, RankMismatch) {
  auto p = build(kMatMul);
  Inputs in;
  in.f32({3, 5, 1}).f32({5, 7});
  EXPECT_TRUE(has(bind_error(p, in), "expected rank 2, got 3"));
}

TEST(Bind, LiteralDimensionMismatch) {
  auto p = build("def f(float(3, N) A) -> B { B(i, j) = A(i, j) }");
  Inputs in;
  in.f32({4, 2});
  EXPECT_TRUE(has(bind_error(p, in), "dimension 0: expected 3, got 4"));
  Inputs ok;
  ok.f32({3, 2});
  EXPECT_EQ(shape_of(bind_def(p, ok), "B"), (Shape{3, 2}));
}

TEST(Bind, NegativeAndHugeDimensions) {
  auto p = build("def f(float(N) A) -> B { B(i) = A(i) }");
  Inputs neg;
  neg.f32({-1});
  EXPECT_TRUE(has(bind_error(p, neg), "is negative"));
  Inputs huge;
  huge.f32({int64_t{1} << 31});
  EXPECT_TRUE(has(bind_error(p, huge, TC_ERROR_UNSUPPORTED), "exceeds the largest supported extent"));
  Inputs max;
  max.f32({INT32_MAX});
  EXPECT_EQ(shape_of(bind_def(p, max), "B"), Shape{INT32_MAX});
}

TEST(Bind, InferredExtentTooLarge) {
  auto p = build("def f(float(N) A) -> B { B(i) = A(i / 4) }");
  Inputs small;
  small.f32({3});
  EXPECT_EQ(shape_of(bind_def(p, small), "B"), Shape{12});
  Inputs big;
  big.f32({int64_t{1} << 30});  // 4 * 2^30 elements
  EXPECT_TRUE(has(bind_error(p, big, TC_ERROR_UNSUPPORTED), "more than the supported 2147483647"));
}

TEST(Bind, TooManyElements) {
  auto p = build("def outer(float(N) A, float(M) B, float(K) C) -> D { D(i, j, k) = A(i) * B(j) * C(k) }");
  Inputs in;
  in.f32({INT32_MAX}).f32({INT32_MAX}).f32({INT32_MAX});
  EXPECT_TRUE(has(bind_error(p, in, TC_ERROR_UNSUPPORTED), "too many elements"));
}

TEST(Bind, AnnotatedOutputMustMatchInference) {
  auto p = build("def f(float(N) A) -> (float(N) B) { B(i) = A(i + 1) }");
  Inputs in;
  in.f32({5});
  std::string m = bind_error(p, in);
  EXPECT_TRUE(has(m, "output 'B' dimension 0: declared N = 5, but the statements give it extent 4")) << m;
  EXPECT_TRUE(has(m, "f:1:29: error:")) << m;  // points at the declared size
  EXPECT_TRUE(has(m, "\n                            ^")) << m;
  auto q = build("def f(float(N) A) -> (float(N) B) { B(i) = A(i) }");
  EXPECT_EQ(shape_of(bind_def(q, in), "B"), Shape{5});
}

TEST(Bind, NegativeWriteIndexIsAShapeError) {
  auto p = build("def f(float(N) A) -> B {\n  B(i) = A(i + 2) where i in -2:N - 2\n}");
  Inputs in;
  in.f32({5});
  std::string m = bind_error(p, in);
  EXPECT_TRUE(has(m, "statement writes 'B' at index -2")) << m;
  EXPECT_TRUE(has(m, "f:2:5: error:")) << m;
}

TEST(Bind, SeveralWriters) {
  auto p = build("def f(float(N) A, float(M) B) -> C {\n  C(i) = A(i)\n  C(i) += B(i)\n}");
  Inputs in;
  in.f32({3}).f32({5});
  auto b = bind_def(p, in);
  EXPECT_EQ(shape_of(b, "C"), Shape{5});
  EXPECT_EQ(bound_range(b, 0, "i"), Range64(0, 3));
  EXPECT_EQ(bound_range(b, 1, "i"), Range64(0, 5));
}

TEST(Bind, SecondDefOfAProgram) {
  auto p = build(
      "def a(float(N) X) -> Y { Y(i) = X(i) }\n"
      "def b(float(N, M) X) -> Y { Y(j) +=! X(i, j) }");
  Inputs in;
  in.f32({2, 6});
  auto b = bind_def(p, in, 1);
  EXPECT_EQ(&b.def(), p->ir[1].get());  // the IR of def 1
  EXPECT_EQ(shape_of(b, "Y"), Shape{6});
  EXPECT_TRUE(has(tc_test::bind_error(p, in, TC_ERROR_SHAPE, 0), "expected rank 1, got 2"));
}

TEST(Bind, ShapeText) {
  EXPECT_EQ(tc::ir::shape_text({2, 3}), "(2, 3)");
  EXPECT_EQ(tc::ir::shape_text({}), "()");
  EXPECT_EQ(tc::ir::shape_text({7}), "(7)");
}

TEST(Bind, RepeatedSizeWithinOneTensor) {
  auto p = build("def trace(float(N, N) A) -> s { s +=! A(i, i) }");
  Inputs bad;
  bad.f32({3, 4});
  EXPECT_TRUE(has(bind_error(p, bad), "size 'N' is 3 (from 'A' dimension 0), got 4"));
  Inputs ok;
  ok.f32({4, 4});
  auto b = bind_def(p, ok);
  EXPECT_EQ(shape_of(b, "s"), Shape{});
  EXPECT_EQ(bound_range(b, 0, "i"), Range64(0, 4));
}

TEST(Bind, BoolAndIntegerInputs) {
  auto p = build("def f(bool(N) M, int64(N) X) -> Y { Y(i) = M(i) ? X(i) : 0 }");
  Inputs in;
  in.add(ScalarType::Bool, {5}).add(ScalarType::Int64, {5});
  EXPECT_EQ(in[0].dtype.code, TC_DL_BOOL);
  auto outs = bind_def(p, in).outputs();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].type, ScalarType::Int64);
  EXPECT_EQ(outs[0].shape, Shape{5});
  Inputs wrong;
  wrong.add(ScalarType::UInt8, {5}).add(ScalarType::Int64, {5});
  EXPECT_TRUE(has(bind_error(p, wrong), "expected dtype bool, got uint8"));
}

// A scatter's affine write is checked at binding like a read: out of bounds is a shape error
// naming the write.
TEST(Bind, ScatterWriteOutOfBoundsIsAShapeError) {
  auto p = build("def t(float(N) X, float(K) W, float(M) Z) -> (float(M) O) {\n  O(i + k) +=! X(i) * W(k)\n}");
  Inputs ok;
  ok.f32({4}).f32({3}).f32({6});
  EXPECT_EQ(shape_of(bind_def(p, ok), "O"), Shape{6});
  Inputs small;
  small.f32({4}).f32({3}).f32({5});
  std::string m = bind_error(p, small);
  EXPECT_TRUE(has(m, "'O(i + k)' writes 'O' out of bounds in dimension 0: indices 0..5 but the extent is 5")) << m;
  EXPECT_TRUE(has(m, "t:2:3: error:")) << m;
}

// A guarded read is never a binding error, but where its bounds over the whole domain fall
// inside its tensor for the bound sizes, binding records that it needs no run-time check
// (BoundDef::proven); ReLU's `X(i) > 0 ? X(i) : 0` always, a padded read `A(i - 1)` never.
TEST(Bind, GuardedReadsProvenWhereTheirBoundsFit) {
  auto p = build("def t(float(N) X, float(N) A, float(M) Y) -> (O, P) {\n"
                 "  O(i) = X(i) > 0 ? Y(i) : 0.0 where i in 0:N\n"
                 "  P(i) = (i >= 1) ? A(i - 1) : 0.0 where i in 0:N\n}");
  const tc::ir::Def& def = *p->ir.at(0);
  const tc::ir::Read& y = def.stmts[0].reads.at(1);
  const tc::ir::Read& a = def.stmts[1].reads.at(0);
  ASSERT_TRUE(y.guarded);
  ASSERT_TRUE(a.guarded);
  EXPECT_FALSE(y.subscripts[0].proven);  // statically unknown: M may be smaller than N
  Inputs fits;
  fits.f32({4}).f32({4}).f32({6});
  auto b = bind_def(p, fits);
  EXPECT_TRUE(b.proven(y.subscripts[0]));
  EXPECT_FALSE(b.proven(a.subscripts[0]));  // i - 1 = -1 at i = 0: the guard excludes it
  Inputs short_y;
  short_y.f32({4}).f32({4}).f32({3});
  auto s = bind_def(p, short_y);  // no error: the guard may keep i < 3
  EXPECT_FALSE(s.proven(y.subscripts[0]));
}

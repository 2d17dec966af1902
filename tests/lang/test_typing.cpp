// test_typing.cpp — the promotion rules of src/lang/typing.cpp, directly and as sema applies
// them (output dtype inference, literal settling, casts, builtins).
#include <gtest/gtest.h>

#include "lang/typing.h"
#include "lang_test_util.h"

using tc::ScalarType;
using tc::lang::Program;
using tc::lang::Typed;
using tc::lang::unify;
using tc_test::checked;
using tc_test::tensor;

namespace {

constexpr ScalarType kBool = ScalarType::Bool, kU8 = ScalarType::UInt8, kU16 = ScalarType::UInt16,
                     kU32 = ScalarType::UInt32, kU64 = ScalarType::UInt64, kI8 = ScalarType::Int8,
                     kI16 = ScalarType::Int16, kI32 = ScalarType::Int32, kI64 = ScalarType::Int64,
                     kF16 = ScalarType::Float16, kF32 = ScalarType::Float32, kF64 = ScalarType::Float64;

Typed strong(ScalarType t) { return {t, false}; }
Typed weak(ScalarType t) { return {t, true}; }

// Inputs of every type, so that expressions can mix them.
const char* kParams =
    "bool(N) Bo, uint8(N) U8, uint16(N) U16, uint32(N) U32, uint64(N) U64, int8(N) I8, int16(N) I16, "
    "int32(N) I32, int64(N) I64, half(N) H, float(N) F, double(N) D";

// The inferred dtype of output C in "C(i) = <rhs>".
ScalarType out_type(const std::string& rhs) {
  Program p = checked(std::string("def f(") + kParams + ") -> C { C(i) = " + rhs + " }");
  return tensor(p.defs[0], "C").type;
}

const char* n(ScalarType t) { return tc::name(t); }

}  // namespace

TEST(Typing, UnifyStrongTypes) {
  struct Case {
    ScalarType a, b, want;
  } cases[] = {
      {kI32, kI32, kI32}, {kI64, kF16, kF16}, {kU64, kF32, kF32}, {kF16, kF64, kF64}, {kF32, kF16, kF32},
      {kI8, kI32, kI32},  {kI16, kI64, kI64}, {kU8, kI16, kI16},  {kU16, kI8, kU16},  {kU32, kI32, kU32},
      {kI8, kU8, kU8},    {kI64, kU64, kU64}, {kBool, kBool, kBool}, {kBool, kI8, kI32}, {kBool, kU64, kU64},
      {kBool, kF16, kF16},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(unify(strong(c.a), strong(c.b)).type, c.want) << n(c.a) << " + " << n(c.b);
    EXPECT_EQ(unify(strong(c.b), strong(c.a)).type, c.want) << n(c.b) << " + " << n(c.a) << " (commuted)";
    EXPECT_FALSE(unify(strong(c.a), strong(c.b)).weak);
  }
}

TEST(Typing, UnifyWeakLiterals) {
  // An int literal takes the other operand's type.
  for (ScalarType t : {kU8, kU16, kU32, kU64, kI8, kI16, kI32, kI64, kF16, kF32, kF64}) {
    EXPECT_EQ(unify(weak(kI32), strong(t)).type, t) << n(t);
    EXPECT_EQ(unify(strong(t), weak(kI32)).type, t) << n(t);
    EXPECT_FALSE(unify(weak(kI32), strong(t)).weak);
  }
  // A float literal takes a float operand's type, else float32.
  EXPECT_EQ(unify(weak(kF32), strong(kF16)).type, kF16);
  EXPECT_EQ(unify(weak(kF32), strong(kF64)).type, kF64);
  EXPECT_EQ(unify(strong(kI64), weak(kF32)).type, kF32);
  EXPECT_EQ(unify(strong(kU8), weak(kF32)).type, kF32);
  // Bool with a literal computes in int32.
  EXPECT_EQ(unify(strong(kBool), weak(kI32)).type, kI32);
  // Two literals stay weak.
  Typed ii = unify(weak(kI32), weak(kI32));
  EXPECT_EQ(ii.type, kI32);
  EXPECT_TRUE(ii.weak);
  Typed fi = unify(weak(kI32), weak(kF32));
  EXPECT_EQ(fi.type, kF32);
  EXPECT_TRUE(fi.weak);
}

TEST(Typing, ArithmeticType) {
  EXPECT_EQ(tc::lang::arithmetic_type(kBool), kI32);
  EXPECT_EQ(tc::lang::arithmetic_type(kU8), kU8);
  EXPECT_EQ(tc::lang::arithmetic_type(kF16), kF16);
}

TEST(Typing, OutputTakesTheTypeOfItsInputs) {
  EXPECT_EQ(out_type("F(i)"), kF32);
  EXPECT_EQ(out_type("D(i)"), kF64);
  EXPECT_EQ(out_type("I8(i)"), kI8);
  EXPECT_EQ(out_type("Bo(i)"), kBool);
  EXPECT_EQ(out_type("U64(i)"), kU64);
}

TEST(Typing, WeakIntegerLiterals) {
  EXPECT_EQ(out_type("I8(i) + 1"), kI8);
  EXPECT_EQ(out_type("2 * U8(i)"), kU8);
  EXPECT_EQ(out_type("H(i) * 2"), kF16);
  EXPECT_EQ(out_type("D(i) - 1"), kF64);
  EXPECT_EQ(out_type("-1 * I16(i)"), kI16);  // a negated literal is still weak
  EXPECT_EQ(out_type("Bo(i) + 1"), kI32);
  EXPECT_EQ(out_type("1 + 2"), kI32);
}

TEST(Typing, WeakFloatLiterals) {
  EXPECT_EQ(out_type("H(i) * 2.5"), kF16);
  EXPECT_EQ(out_type("D(i) * .5"), kF64);
  EXPECT_EQ(out_type("I64(i) + 0.5"), kF32);
  EXPECT_EQ(out_type("I8(i) * 1e-5"), kF32);
  EXPECT_EQ(out_type("1 + 2.0"), kF32);
  EXPECT_EQ(out_type("-3E-5"), kF32);
}

TEST(Typing, OnlyALiteralItselfIsWeak) {
  // "(1 + 2)" is an int32 expression, not a literal: it widens int8.
  EXPECT_EQ(out_type("(1 + 2) * I8(i)"), kI32);
  EXPECT_EQ(out_type("3 * I8(i)"), kI8);
}

TEST(Typing, FloatBeatsIntegerAndWiderWins) {
  EXPECT_EQ(out_type("I64(i) + H(i)"), kF16);
  EXPECT_EQ(out_type("U64(i) * F(i)"), kF32);
  EXPECT_EQ(out_type("I8(i) + I32(i)"), kI32);
  EXPECT_EQ(out_type("H(i) + D(i)"), kF64);
  EXPECT_EQ(out_type("F(i) + H(i)"), kF32);
  EXPECT_EQ(out_type("U8(i) + I16(i)"), kI16);
  EXPECT_EQ(out_type("I8(i) - U16(i)"), kU16);
}

TEST(Typing, UnsignedWinsAtEqualWidth) {
  EXPECT_EQ(out_type("U32(i) + I32(i)"), kU32);
  EXPECT_EQ(out_type("I32(i) + U32(i)"), kU32);
  EXPECT_EQ(out_type("I8(i) * U8(i)"), kU8);
  EXPECT_EQ(out_type("I64(i) % U64(i)"), kU64);
}

TEST(Typing, BoolRules) {
  EXPECT_EQ(out_type("Bo(i) + Bo(i)"), kI32);
  EXPECT_EQ(out_type("Bo(i) + I8(i)"), kI32);
  EXPECT_EQ(out_type("Bo(i) && Bo(i)"), kBool);
  EXPECT_EQ(out_type("F(i) < D(i)"), kBool);
  EXPECT_EQ(out_type("I8(i) == 1"), kBool);
  EXPECT_EQ(out_type("!F(i)"), kBool);
  EXPECT_EQ(out_type("-Bo(i)"), kI32);
}

TEST(Typing, Ternary) {
  EXPECT_EQ(out_type("Bo(i) ? I8(i) : D(i)"), kF64);
  EXPECT_EQ(out_type("F(i) > 0 ? 1 : 2.5"), kF32);
  EXPECT_EQ(out_type("F(i) > 0 ? I8(i) : 0"), kI8);
  EXPECT_EQ(out_type("F(i) > 0 ? 1 : 2"), kI32);
}

TEST(Typing, Casts) {
  EXPECT_EQ(out_type("float64(I32(i))"), kF64);
  EXPECT_EQ(out_type("int8(D(i))"), kI8);
  EXPECT_EQ(out_type("half(I32(i))"), kF16);
  EXPECT_EQ(out_type("uint8(F(i)) + 1"), kU8);
  EXPECT_EQ(out_type("bool(F(i))"), kBool);
  EXPECT_EQ(out_type("double(1)"), kF64);
}

TEST(Typing, Builtins) {
  EXPECT_EQ(out_type("exp(I32(i))"), kF32);
  EXPECT_EQ(out_type("exp(D(i))"), kF64);
  EXPECT_EQ(out_type("sqrt(H(i))"), kF16);
  EXPECT_EQ(out_type("pow(I8(i), 2)"), kF32);
  EXPECT_EQ(out_type("pow(H(i), 2.0)"), kF16);
  EXPECT_EQ(out_type("fma(H(i), F(i), D(i))"), kF64);
  EXPECT_EQ(out_type("sqrt(2)"), kF32);
  EXPECT_EQ(out_type("min(I8(i), 3)"), kI8);
  EXPECT_EQ(out_type("max(I8(i), I16(i))"), kI16);
  EXPECT_EQ(out_type("abs(I64(i))"), kI64);
  EXPECT_EQ(out_type("min(Bo(i), Bo(i))"), kI32);
  EXPECT_EQ(out_type("max(U8(i), 0.5)"), kF32);
}

TEST(Typing, AnnotatedOutputKeepsItsType) {
  Program p = checked("def f(float(N) F) -> (int32(N) C, double s) { C(i) = F(i) * 2.5 s +=! F(i) }");
  EXPECT_EQ(tensor(p.defs[0], "C").type, kI32);
  EXPECT_EQ(tensor(p.defs[0], "s").type, kF64);
  EXPECT_TRUE(tensor(p.defs[0], "C").type_annotated);
  EXPECT_FALSE(p.defs[0].tensors[0].role != tc::lang::TensorRole::Input);
}

TEST(Typing, SeveralWritersUnify) {
  Program p = checked("def f(int8(N) I8, int16(N) I16) -> C { C(i) = I8(i) C(i) += I16(i) }");
  EXPECT_EQ(tensor(p.defs[0], "C").type, kI16);
  p = checked("def f(int8(N) I8, double(N) D) -> C { C(i) = I8(i) C(i) = C(i) + D(i) }");
  EXPECT_EQ(tensor(p.defs[0], "C").type, kF64);
}

TEST(Typing, TemporariesReachAFixpoint) {
  // C reads T before the statement that widens T to float64 is seen: needs a second round.
  Program p = checked(
      "def f(int8(N) I8, double(N) D) -> C {\n"
      "  T(i) = I8(i)\n"
      "  C(i) = T(i) + 1\n"
      "  T(i) = D(i)\n"
      "}");
  EXPECT_EQ(tensor(p.defs[0], "T").type, kF64);
  EXPECT_EQ(tensor(p.defs[0], "C").type, kF64);
  EXPECT_EQ(tensor(p.defs[0], "T").role, tc::lang::TensorRole::Temporary);
}

TEST(Typing, LiteralsSettleToTheirOperationType) {
  Program p = checked("def f(double(N) D, int8(N) I8) -> (C, E) { C(i) = D(i) + 0.1 E(i) = I8(i) * -2 }");
  auto c = p.defs[0].stmts[0].rhs;
  EXPECT_EQ(c->type, kF64);
  EXPECT_EQ(c->args[1]->type, kF64);
  EXPECT_FALSE(c->args[1]->weak);
  auto e = p.defs[0].stmts[1].rhs;
  EXPECT_EQ(e->args[1]->kind, tc::lang::ExprKind::IntLit);  // "-2" is one literal of the operand's type
  EXPECT_EQ(e->args[1]->int_value, -2);
  EXPECT_EQ(e->args[1]->type, kI8);
  EXPECT_FALSE(e->args[1]->weak);
}

TEST(Typing, NegatedLiteralFitsAsAWhole) {
  Program p = checked("def f(int8(N) I8) -> (E) { E(i) = I8(i) + -128 }");  // 128 alone would not fit
  auto lit = p.defs[0].stmts[0].rhs->args[1];
  EXPECT_EQ(lit->kind, tc::lang::ExprKind::IntLit);
  EXPECT_EQ(lit->int_value, -128);
  EXPECT_EQ(lit->type, kI8);
}

TEST(Typing, ExpressionTypesAreAnnotated) {
  Program p = checked("def f(int8(N) I8, half(N) H) -> C { C(i) = I8(i) < 3 ? H(i) : exp(I8(i)) }");
  auto t = p.defs[0].stmts[0].rhs;
  EXPECT_EQ(t->args[0]->type, kBool);
  EXPECT_EQ(t->args[1]->type, kF16);
  EXPECT_EQ(t->args[2]->type, kF32);
  EXPECT_EQ(t->type, kF32);
  EXPECT_EQ(tensor(p.defs[0], "C").type, kF32);
}

// test_canonical.cpp — the canonical text of a bound def (src/ir/print.h): renaming tensors,
// sizes and variables, reformatting, comments and calls written as calls give byte-identical
// text; every change of what is computed (a constant, a dtype, an operator, a range, a
// reduction, the order of statements, the shapes bound) gives a different text. The family
// text (the same without the numbers of a binding) is one text for every spelling of a def and
// changes with what it computes.
#include <gtest/gtest.h>

#include <vector>

#include "infer_test_util.h"
#include "ir/print.h"

using tc_test::Inputs;

namespace {

// The canonical text of the last def of `src` bound to float32 inputs of the given shapes.
std::string canonical(const std::string& src, const std::vector<tc_test::Shape>& shapes) {
  auto p = tc_test::build(src);
  Inputs in;
  for (const auto& s : shapes) in.f32(s);
  return tc::ir::canonical_text(tc_test::bind_def(p, in, p->num_defs() - 1));
}

// The family text of the last def of `src`.
std::string family(const std::string& src) {
  auto p = tc_test::build(src);
  return tc::ir::family_text(*p->ir.back());
}

const char* kMatMul = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }";
const std::vector<tc_test::Shape> kMatMulShapes = {{3, 5}, {5, 7}};

}  // namespace

TEST(Canonical, Golden) {
  EXPECT_EQ(canonical(kMatMul, kMatMulShapes),
            "tc-ir 1 bound\n"
            "size s0 = 3\n"
            "size s1 = 5\n"
            "size s2 = 7\n"
            "input t0: float32(3, 5)\n"
            "input t1: float32(5, 7)\n"
            "output t2: float32(3, 7)\n"
            "t2(v0, v1) +=! {v0 in 0:3, v1 in 0:7, v2 in 0:5} (* float32 t0[v0, v2] t1[v2, v1])\n");
}

TEST(Canonical, NamesFormattingAndCommentsDoNotMatter) {
  std::string base = canonical(kMatMul, kMatMulShapes);
  const char* same[] = {
      "def matmul(float(Rows,Inner) X, float(Inner,Cols) Y) -> (Z) { Z(r,c) +=! X(r,q) * Y(q,c) }",
      "# a comment\ndef mm(float(M,K) A, float(K,N) B)\n  -> (C)\n{\n  C(i, j) +=! A(i, k) * B(k, j)   # product\n}\n",
      "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) where k in 0:K }",
      "def mm(float(M,K) A, float(K,N) B) -> (float(M,N) C) { C(i,j) +=! A(i,k) * B(k,j) }",
  };
  for (const char* src : same) EXPECT_EQ(canonical(src, kMatMulShapes), base) << src;
}

TEST(Canonical, CalledDefsAppearInlined) {
  std::string direct = canonical("def f(float(N) A) -> (B) { T(i) = A(i) * A(i)\n B(i) = T(i) + 1 }", {{4}});
  std::string called = canonical(
      "def sq(float(M) X) -> (Y) { Y(j) = X(j) * X(j) }\n"
      "def f(float(N) A) -> (B) { T = sq(A)\n B(i) = T(i) + 1 }",
      {{4}});
  EXPECT_EQ(called, direct);
}

TEST(Canonical, EverySemanticChangeChangesTheText) {
  std::string base = canonical("def f(float(N) A) -> (B) { B(i) = A(i) * 2.0 + 1 }", {{8}});
  const char* changed[] = {
      "def f(float(N) A) -> (B) { B(i) = A(i) * 2.5 + 1 }",                  // a constant
      "def f(float(N) A) -> (B) { B(i) = A(i) * 2.0 - 1 }",                  // an operator
      "def f(float(N) A) -> (B) { B(i) = A(i) + 2.0 * 1 }",                  // the tree's shape
      "def f(float(N) A) -> (double(N) B) { B(i) = A(i) * 2.0 + 1 }",       // an output dtype
      "def f(float(N) A) -> (B) { B(i) = float64(A(i)) * 2.0 + 1 }",        // a conversion
      "def f(float(N) A) -> (B) { B(i) = A(i) * 2.0 + 1 where i in 0:N-1 }",  // a range
      "def f(float(N) A) -> (B) { B(i) += A(i) * 2.0 + 1 }",                 // a reduction
      "def f(float(N) A) -> (B) { B(i) +=! A(i) * 2.0 + 1 }",                // its '!'
      "def f(float(N) A) -> (B) { B(i) = exp(A(i)) * 2.0 + 1 }",             // a builtin
      "def f(float(N) A) -> (B) { B(i) = A(N - 1 - i) * 2.0 + 1 }",          // a subscript
      "def f(float(N) A) -> (B) { B(i) = A(i) * 2.0 + N }",                  // a size for a constant
  };
  for (const char* src : changed) EXPECT_NE(canonical(src, {{8}}), base) << src;
  EXPECT_NE(canonical("def f(float(N) A) -> (B) { B(i) = A(i) * 2.0 + 1 }", {{9}}), base);  // the shapes
}

// Scatters that differ only in a written subscript are different programs (cache keys).
TEST(Canonical, ScatterSubscriptsMatter) {
  auto text = [](const std::string& lhs) {
    auto p = tc_test::build("def f(float(N) X, int32(N) I, int32(N) J) -> (float(N) O) { " + lhs + " += X(i) }");
    Inputs in;
    in.f32({8}).add(tc::ScalarType::Int32, {8}).add(tc::ScalarType::Int32, {8});
    return tc::ir::canonical_text(tc_test::bind_def(p, in));
  };
  std::vector<std::string> texts = {text("O(i)"), text("O(I(i))"), text("O(J(i))"), text("O(I(i) + 1)"),
                                    text("O(I(J(i)))"), text("O(N - 1 - i)"), text("O(i + 0)")};
  for (size_t a = 0; a < texts.size(); ++a)
    for (size_t b = a + 1; b < texts.size(); ++b) EXPECT_NE(texts[a], texts[b]) << a << " " << b;
  EXPECT_EQ(text("O(I(i))"), text("O( I( i ) )"));  // spelling does not matter
  EXPECT_NE(texts[1].find("t3[t1[v0]] += {v0 in 0:8}"), std::string::npos) << texts[1];
}

TEST(Canonical, StatementOrderAndRolesMatter) {
  std::string a = canonical("def f(float(N) A) -> (B, C) { B(i) = A(i)\n C(i) = B(i) + 1 }", {{4}});
  std::string b = canonical("def f(float(N) A) -> (C, B) { B(i) = A(i)\n C(i) = B(i) + 1 }", {{4}});
  std::string c = canonical("def f(float(N) A) -> (C) { B(i) = A(i)\n C(i) = B(i) + 1 }", {{4}});
  EXPECT_NE(a, b);  // which output comes first
  EXPECT_NE(a, c);  // B a temporary instead of an output
  std::string d = canonical("def f(float(N) A) -> (B) { B(i) = A(i)\n B(i) = B(i) * 2 }", {{4}});
  std::string e = canonical("def f(float(N) A) -> (B) { B(i) = A(i) * 2\n B(i) = A(i) }", {{4}});
  EXPECT_NE(d, e);
}

TEST(Family, Golden) {
  EXPECT_EQ(family("def g(float(N) X) -> (Y) { Y(i) = X(i) + N where i in 0:N-1 }\n"
                   "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }"),
            "tc-ir 1 family\n"
            "size s0\n"
            "size s1\n"
            "size s2\n"
            "input t0: float32(s0, s1)\n"
            "input t1: float32(s1, s2)\n"
            "output t2: float32(s0, s2)\n"
            "t2(v0, v1) +=! {v0 in 0:s0, v1 in 0:s2, v2 in 0:s1} (* float32 t0[v0, v2] t1[v2, v1])\n");
}

TEST(Family, NamesDoNotMatterWhatIsComputedDoes) {
  std::string base = family(kMatMul);
  // Sizes named like the positional names, in another order: renamed all at once.
  EXPECT_EQ(family("def matmul(float(s1,s0) X, float(s0,N) Y) -> (Z) { Z(r,c) +=! X(r,q) * Y(q,c) }"), base);
  EXPECT_NE(family("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) += A(i,k) * B(k,j) }"), base);
  EXPECT_NE(family("def mm(double(M,K) A, double(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }"), base);
  std::string ranged = family("def f(float(N) A) -> (B) { B(i) = A(i) where i in 0:N-1 }");
  EXPECT_NE(ranged, family("def f(float(N) A) -> (B) { B(i) = A(i) }"));
  EXPECT_NE(ranged.find("{v0 in 0:s0 + -1}"), std::string::npos) << ranged;  // ranges in the positional sizes
}

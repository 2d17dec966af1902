// test_sema.cpp — white-box tests of src/lang/sema.cpp: the tensor table, name resolution,
// the statement rules and their located TC_ERROR_SEMANTIC messages.
#include <gtest/gtest.h>

#include "lang_test_util.h"

using tc::ScalarType;
using tc::lang::Def;
using tc::lang::ExprKind;
using tc::lang::Program;
using tc::lang::ReduceOp;
using tc::lang::Ref;
using tc::lang::TensorRole;
using tc_test::checked;
using tc_test::semantic_error;
using tc_test::tensor;

namespace {

bool has(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

}  // namespace

TEST(Sema, TensorTableInputsOutputsTemporaries) {
  Program p = checked(
      "def f(float(M, K) A, float(K, N) B) -> (C, D) {\n"
      "  T(m, n) +=! A(m, k) * B(k, n)\n"
      "  C(m, n) = T(m, n) + 1\n"
      "  U(m) +=! T(m, n)\n"
      "  D(m) = U(m)\n"
      "}");
  const Def& d = p.defs[0];
  ASSERT_EQ(d.tensors.size(), 6u);
  const char* names[] = {"A", "B", "C", "D", "T", "U"};
  const TensorRole roles[] = {TensorRole::Input, TensorRole::Input, TensorRole::Output, TensorRole::Output,
                              TensorRole::Temporary, TensorRole::Temporary};
  const int ranks[] = {2, 2, 2, 1, 2, 1};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(d.tensors[i].name, names[i]);
    EXPECT_EQ(d.tensors[i].role, roles[i]) << names[i];
    EXPECT_EQ(d.tensors[i].ndim, ranks[i]) << names[i];
  }
  EXPECT_EQ(d.tensors[1].param_index, 1);
  EXPECT_EQ(d.tensors[3].param_index, 1);
  EXPECT_EQ(d.size_names, (std::vector<std::string>{"M", "K", "N"}));
  EXPECT_TRUE(d.is_size("K"));
  EXPECT_FALSE(d.is_size("k"));
  EXPECT_EQ(d.stmts[0].lhs_tensor, 4);
  EXPECT_EQ(d.stmts[3].lhs_tensor, 3);
  EXPECT_EQ(d.find_tensor("nope"), -1);
}

TEST(Sema, LiteralDimsAreNotSizeNames) {
  Program p = checked("def f(float(3, N) A, float(N, 3) B) -> C { C(i, j) = A(i, j) }");
  EXPECT_EQ(p.defs[0].size_names, (std::vector<std::string>{"N"}));
  EXPECT_EQ(tensor(p.defs[0], "A").ndim, 2);
}

TEST(Sema, IndexAndReductionVariables) {
  Program p = checked("def f(float(M, K) A, float(K, N) B) -> C { C(m, n) +=! A(m, k) * B(k, n) }");
  const auto& s = p.defs[0].stmts[0];
  EXPECT_EQ(s.vars, (std::vector<std::string>{"m", "n", "k"}));
  EXPECT_EQ(s.num_lhs_vars(), 2u);
  EXPECT_EQ(s.reduce, ReduceOp::Sum);
  EXPECT_TRUE(s.init);
}

TEST(Sema, ReductionKinds) {
  struct Case {
    const char* op;
    ReduceOp reduce;
    bool init;
  } cases[] = {{"=", ReduceOp::None, false},      {"+=", ReduceOp::Sum, false},   {"+=!", ReduceOp::Sum, true},
               {"*=", ReduceOp::Product, false},  {"*=!", ReduceOp::Product, true}, {"min=", ReduceOp::Min, false},
               {"min=!", ReduceOp::Min, true},    {"max=", ReduceOp::Max, false}, {"max=!", ReduceOp::Max, true}};
  for (const Case& c : cases) {
    Program p = checked(std::string("def f(float(N) A) -> B { B(i) ") + c.op + " A(i) }");
    EXPECT_EQ(p.defs[0].stmts[0].reduce, c.reduce) << c.op;
    EXPECT_EQ(p.defs[0].stmts[0].init, c.init) << c.op;
  }
}

TEST(Sema, NameResolution) {
  Program p = checked("def f(float(N) A, float s) -> B { B(i) = A(i) * s + N + A.0 + exp(A(i)) + float64(i) }");
  // ((((A(i) * s) + N) + A.0) + exp(A(i))) + float64(i)
  auto rhs = p.defs[0].stmts[0].rhs;
  auto cast = rhs->args[1];
  EXPECT_EQ(cast->ref, Ref::Cast);
  EXPECT_EQ(cast->cast_to, ScalarType::Float64);
  EXPECT_EQ(cast->args[0]->ref, Ref::Index);
  auto call = rhs->args[0]->args[1];
  EXPECT_EQ(call->ref, Ref::Builtin);
  EXPECT_EQ(call->builtin, tc::lang::BuiltinId::Exp);
  auto dim = rhs->args[0]->args[0]->args[1];
  EXPECT_EQ(dim->kind, ExprKind::Dim);
  EXPECT_EQ(dim->ref, Ref::Size);
  EXPECT_EQ(dim->tensor, 0);
  auto size = rhs->args[0]->args[0]->args[0]->args[1];
  EXPECT_EQ(size->ref, Ref::Size);
  auto scalar = rhs->args[0]->args[0]->args[0]->args[0]->args[1];
  EXPECT_EQ(scalar->kind, ExprKind::Ident);
  EXPECT_EQ(scalar->ref, Ref::Tensor);
  EXPECT_EQ(scalar->tensor, 1);
}

TEST(Sema, RankMismatchOnRead) {
  std::string m = semantic_error("def f(float(N) A) -> B {\n  B(i) = A(i, i)\n}");
  EXPECT_TRUE(has(m, "f:2:10: error:")) << m;
  EXPECT_TRUE(has(m, "tensor 'A' has rank 1 but is indexed with 2 indices")) << m;
  EXPECT_TRUE(has(m, "^")) << m;
}

TEST(Sema, RankMismatchOnWrite) {
  std::string m = semantic_error("def f(float(N) A) -> B { B(i) = A(i) B(i, j) = A(i) }");
  EXPECT_TRUE(has(m, "'B' is written with 2 indices here but has rank 1")) << m;
  m = semantic_error("def f(float(N) A) -> (float(N) B) { B(i, j) = A(i) }");
  EXPECT_TRUE(has(m, "has rank 1")) << m;
}

TEST(Sema, RankedTensorUsedWithoutIndices) {
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> B { B(i) = A + i }"), "tensor 'A' has rank 1; index it"));
}

TEST(Sema, WritingAnInputIsRejected) {
  std::string m = semantic_error("def f(float(N) A) -> B { A(i) = 1 B(i) = A(i) }");
  EXPECT_TRUE(has(m, "cannot write input 'A'")) << m;
  EXPECT_TRUE(has(m, "f:1:26: error:")) << m;
}

TEST(Sema, AssigningToASizeIsRejected) {
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> B { N = 1 B(i) = A(i) }"), "cannot assign to size 'N'"));
}

TEST(Sema, UnknownFunction) {
  std::string m = semantic_error("def f(float(N) A) -> B { B(i) = foo(A(i)) }");
  EXPECT_TRUE(has(m, "unknown tensor or function 'foo'")) << m;
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> B { B(i) = N(i) }"), "'N' is a size, not a tensor or function"));
}

TEST(Sema, UnknownNameBecomesIndexVariableAndNeedsReduction) {
  // A misspelled tensor name is a fresh index variable: it only appears on the right, so it is
  // a reduction variable without a reduction operator.
  std::string m = semantic_error("def f(float(N) A) -> B {\n  B(i) = A(i) + Q\n}");
  EXPECT_TRUE(has(m, "'Q' appear only on the right-hand side")) << m;
  EXPECT_TRUE(has(m, "misspelled")) << m;
  EXPECT_TRUE(has(m, "f:2:8: error:")) << m;  // at the operator
}

TEST(Sema, ReductionVariablesNeedReductionOperator) {
  std::string m = semantic_error("def f(float(M, K) A) -> C { C(m) = A(m, k) }");
  EXPECT_TRUE(has(m, "index variable(s) 'k' appear only on the right-hand side")) << m;
  EXPECT_TRUE(has(m, "'+=!'")) << m;
  m = semantic_error("def f(float(M, K, L) A) -> C { C(m) = A(m, k, l) }");
  EXPECT_TRUE(has(m, "'k', 'l'")) << m;
  // Any reduction operator is fine.
  EXPECT_NO_THROW(checked("def f(float(M, K) A) -> C { C(m) max=! A(m, k) }"));
  EXPECT_NO_THROW(checked("def f(float(M, K) A) -> C { C(m) += A(m, k) }"));
}

// The spec's average_pool_2 (`A(i) = B(2*i + k) where k = [0, 2[`, "equivalent" to
// B(2*i) + B(2*i + 1)): '=' over right-hand-side variables that the where clause ranges
// explicitly is a sum over them, like '+=!'. One unranged such variable keeps the error.
TEST(Sema, AssignmentOverExplicitlyRangedVariablesSums) {
  Program p = checked("def average_pool_2(float(I) B) -> A {\n  A(i) = B(2*i + k) where k = [0, 2[\n}");
  const auto& s = p.defs[0].stmts[0];
  EXPECT_EQ(s.reduce, ReduceOp::Sum);
  EXPECT_TRUE(s.init);
  std::string m = semantic_error("def f(float(N) A, float(M) B) -> C { C(i) = A(i + k) + B(j) where k in 0:2 }");
  EXPECT_TRUE(has(m, "index variable(s) 'j' appear only on the right-hand side")) << m;
  m = semantic_error("def f(float(I) B) -> A { A(i) = B(2*i + k) }");
  EXPECT_TRUE(has(m, "'k' appear only on the right-hand side")) << m;
}

TEST(Sema, BuiltinArity) {
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> B { B(i) = exp(A(i), 1) }"), "'exp' takes 1 argument, got 2"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> B { B(i) = pow(A(i)) }"), "'pow' takes 2 arguments, got 1"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> B { B(i) = fma(A(i), 1) }"), "'fma' takes 3 arguments"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> B { B(i) = max(A(i)) }"), "'max' takes 2 arguments"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> B { B(i) = float(A(i), 1) }"), "takes one argument"));
  EXPECT_NO_THROW(checked("def f(float(N) A) -> B { B(i) = fma(A(i), 2, 1) + atan2(A(i), 1) + abs(A(i)) }"));
}

TEST(Sema, BuiltinUsedAsName) {
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> B { B(i) = A(i) + exp }"), "'exp' is a function"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> B { B(i) = A(i) + float }"), "'float' is a function"));
}

TEST(Sema, SelfReadOfAnotherElementIsRejected) {
  std::string m = semantic_error("def f(float(N, N) b) -> a {\n  a(i, j) = b(i, j)\n  a(i, j) = a(j, i)\n}");
  EXPECT_TRUE(has(m, "writes 'a(i,j)' but reads 'a' at a different element")) << m;
  EXPECT_TRUE(has(m, "f:3:13: error:")) << m;
  semantic_error("def f(float(N) b) -> a { a(i) = b(i) a(i) = a(i + 1) }");
  semantic_error("def f(float(N) b) -> a { a(i) +=! b(k) * a(k) }");
}

TEST(Sema, SelfReadOfTheSameElementIsAllowed) {
  Program p = checked("def f(float(N, N) b) -> a { a(i, j) = b(i, j) a(i, j) = a(i, j) * 2 + b(j, i) }");
  EXPECT_EQ(p.defs[0].stmts.size(), 2u);
  EXPECT_NO_THROW(checked("def f(float(N) b) -> a { a(i) = b(i) a(i) += a(i) * b(k) }"));
}

TEST(Sema, TemporaryReadBeforeWrite) {
  std::string m = semantic_error("def f(float(N) A) -> C {\n  C(i) = T(i)\n  T(i) = A(i)\n}");
  EXPECT_TRUE(has(m, "temporary 'T' is read before any statement writes it")) << m;
  EXPECT_TRUE(has(m, "f:2:10: error:")) << m;
  // A temporary reading itself in the statement that first writes it is also a read before write.
  semantic_error("def f(float(N) A) -> C { T(i) = A(i) + T(i) C(i) = T(i) }");
  // Outputs may be read before they are written (they hold the caller's values).
  EXPECT_NO_THROW(checked("def f(float(N) A) -> C { C(i) = C(i) + A(i) }"));
}

TEST(Sema, OutputNeverWritten) {
  std::string m = semantic_error("def f(float(N) A) -> (C, D) { C(i) = A(i) }");
  EXPECT_TRUE(has(m, "output 'D' is never written")) << m;
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> (float(N) D, C) { C(i) = A(i) }"), "output 'D' is never written"));
}

TEST(Sema, DuplicateNames) {
  EXPECT_TRUE(has(semantic_error("def f(float(N) A, float(N) A) -> C { C(i) = A(i) }"), "'A' is declared twice"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> A { A(i) = 1 }"), "'A' is declared twice"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> (C, C) { C(i) = A(i) }"), "'C' is declared twice"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) N) -> C { C(i) = N(i) }"), "both a size name and a tensor name"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A, float(M) N) -> C { C(i) = A(i) }"),
                  "both a size name and a tensor name"));
  std::string m = semantic_error("def f(float(N) A) -> C { C(i) = A(i) }\ndef f(float(N) A) -> C { C(i) = A(i) }");
  EXPECT_TRUE(has(m, "def 'f' is defined twice")) << m;
  EXPECT_TRUE(has(m, ":2:1: error:")) << m;
}

TEST(Sema, LhsIndexRules) {
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> C { C(N) = A(0) }"), "'N' is a size"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> C { C(A) = 1 }"), "'A' is a tensor"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> C { C(i, i) = A(i) }"), "'i' appears twice"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> C { C(i, i) = A(i) }"), "only a scatter"));
  // With '+=' a repeated name is a scatter into the diagonal (the gradient of a diagonal read).
  EXPECT_NO_THROW(checked("def f(float(N) A) -> (float(N, N) C) { C(i, i) +=! A(i) }"));
}

TEST(Sema, WhereClauseRules) {
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> C { C(i) = A(i) where j in 0:N }"),
                  "gives a range to 'j', which the statement does not use"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> C { C(i) = A(i) where i in 0:N, i in 0:2 }"),
                  "'i' has two ranges"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> C { C(i) = A(i) where i in 0:1.5 }"),
                  "range bounds must be integers"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> C { C(i) +=! A(k) where i in 0:k }"),
                  "range bounds may only use sizes, integers and T.d, not 'k'"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> C { C(i) = A(i) where i in 0:A(0) }"),
                  "not 'A(...)'"));
  EXPECT_NO_THROW(checked("def f(float(N) A) -> C { C(i) = A(i) where i in max(0, N - 4):min(N, A.0 * 2 - 1) }"));
}

TEST(Sema, LetsAreInlined) {
  Program p = checked("def f(float(N) A) -> C { C(i) +=! A(x) where x = i + k, k in 0:2 }");
  const auto& s = p.defs[0].stmts[0];
  auto idx = s.rhs->args[0];
  EXPECT_EQ(idx->kind, ExprKind::Binary);
  EXPECT_EQ(idx->args[0]->name, "i");
  EXPECT_EQ(s.vars, (std::vector<std::string>{"i", "k"}));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> C { C(i) = A(N) where N = i }"), "'N' is already defined"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> C { C(i) = A(x) where x = i, x = i }"), "already defined"));
}

TEST(Sema, DimSelectorRules) {
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> C { C(i) = A(i) + A.1 }"),
                  "tensor 'A' has rank 1, so 'A.1' does not exist"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> C { C(i) = A(i) + N.0 }"), "'N' in 'N.0' is not a tensor"));
}

TEST(Sema, CallsToDefs) {
  EXPECT_TRUE(has(semantic_error("def g(float(N) A) -> C { C(i) = A(i) }\n"
                                 "def f(float(N) A) -> C { C(i) = g(A(i)) }"),
                  "def 'g' can only be called by a statement of its own"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> (B, C) { B, C = g(A) }"), "'g' is not a def"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> (B) { B = f(A) }"), "recursive call of 'f'"));
  EXPECT_TRUE(has(semantic_error("def g(double(N) A) -> C { C(i) = A(i) }\n"
                                 "def f(float(N) A) -> C { C = g(A) }"),
                  "'A' is float32 but 'g' declares its parameter 'A' as float64"));
  EXPECT_TRUE(has(semantic_error("def g(float(N, M) A) -> C { C(i) = A(i, 0) }\n"
                                 "def f(float(N) A) -> C { C = g(A) }"),
                  "'A' has rank 1 but 'g' declares its parameter 'A' with rank 2"));
  // Inlined: the callee's temporary gets a fresh name, its sizes become the argument's extents.
  auto p = checked("def g(float(N) A) -> C { t(i) = A(i) + N\n C(i) = t(i) }\n"
                   "def f(float(M) X) -> (Y) { t(i) = X(i)\n Y = g(t) }");
  const auto& f = p.defs[1];
  ASSERT_EQ(f.stmts.size(), 3u);
  EXPECT_EQ(f.stmts[1].lhs, "g_t");
  EXPECT_NE(f.find_tensor("g_t"), -1);
}

TEST(Sema, OutputSizeAnnotationMustUseInputSizes) {
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> (float(Q) C) { C(i) = A(i) }"),
                  "size 'Q' of output 'C' is not a size of any input"));
  Program p = checked("def f(float(N) A) -> (float(N) C, int32(4) D) { C(i) = A(i) D(i) = 1 where i in 0:4 }");
  EXPECT_TRUE(tensor(p.defs[0], "C").has_dims_annotation());
  EXPECT_TRUE(tensor(p.defs[0], "D").has_dims_annotation());
}

TEST(Sema, EmptyBody) {
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> C { }"), "'f' has no statements"));
}

TEST(Sema, IndicesMustBeIntegers) {
  EXPECT_TRUE(has(semantic_error("def f(float(N) A) -> C { C(i) = A(i * 0.5) }"), "index of 'A' must be an integer"));
  EXPECT_TRUE(has(semantic_error("def f(float(N) A, float(N) B) -> C { C(i) = A(B(i)) }"),
                  "index of 'A' must be an integer, got float32"));
  EXPECT_NO_THROW(checked("def f(float(N) A, int64(N) B) -> C { C(i) = A(B(i)) }"));
}

TEST(Sema, BoolSumIsRejected) {
  EXPECT_TRUE(has(semantic_error("def f(bool(N, M) A) -> C { C(i) +=! A(i, j) }"), "'C' is bool"));
  EXPECT_NO_THROW(checked("def f(bool(N, M) A) -> C { C(i) max=! A(i, j) }"));
}

TEST(Sema, ScalarStatements) {
  Program p = checked("def f(float(N) A, float b) -> (s, t) { s +=! A(i) t = s * b }");
  EXPECT_EQ(tensor(p.defs[0], "s").ndim, 0);
  EXPECT_EQ(tensor(p.defs[0], "t").ndim, 0);
  EXPECT_EQ(p.defs[0].stmts[1].rhs->args[0]->ref, Ref::Tensor);
}

TEST(Sema, ErrorUsesFileNameWhenGiven) {
  std::string m = tc_test::error_of(
      [] {
        auto p = tc_test::parse("def f(float(N) A) -> B {\n  B(i) = A(i, i)\n}", "model.tc");
        tc::lang::check(p);
      },
      TC_ERROR_SEMANTIC);
  EXPECT_EQ(m.rfind("model.tc:2:10: error: ", 0), 0u) << m;
  EXPECT_TRUE(has(m, "\n  B(i) = A(i, i)\n         ^")) << m;
}

TEST(Sema, RankLimit) {
  auto dims = [](int n, const char* prefix) {
    std::string out;
    for (int i = 0; i < n; ++i) out += (i ? ", " : "") + std::string(prefix) + std::to_string(i);
    return out;
  };
  // TC_MAX_NDIM dimensions are fine; one more is unsupported, for inputs and for written tensors.
  EXPECT_NO_THROW(checked("def f(float(" + dims(TC_MAX_NDIM, "N") + ") A) -> B { B(" + dims(TC_MAX_NDIM, "i") +
                          ") = A(" + dims(TC_MAX_NDIM, "i") + ") }"));
  std::string m = tc_test::error_of(
      [&] { checked("def f(float(" + dims(TC_MAX_NDIM + 1, "N") + ") A) -> B { B(i) = A(i) }"); },
      TC_ERROR_UNSUPPORTED);
  EXPECT_TRUE(has(m, "'A' has rank " + std::to_string(TC_MAX_NDIM + 1))) << m;
  m = tc_test::error_of(
      [&] { checked("def f(float(N) A) -> B { B(" + dims(TC_MAX_NDIM + 1, "i") + ") = A(i0) }"); },
      TC_ERROR_UNSUPPORTED);
  EXPECT_TRUE(has(m, "TC_MAX_NDIM")) << m;
}

// ---- scatters (a computed left-hand side subscript) ----

TEST(Sema, ScatterIteratesEveryVariable) {
  Program p = checked("def g(float(E,D) LUT, int32(B,L) I, float(B,D) dO) -> (float(E,D) dLUT) {\n"
                      "  dLUT(I(b, l), d) +=! dO(b, d)\n}");
  const auto& s = p.defs[0].stmts[0];
  ASSERT_TRUE(s.is_scatter());
  EXPECT_EQ(s.num_lhs_vars(), 0u);
  EXPECT_EQ(s.vars, (std::vector<std::string>{"b", "l", "d"}));  // the subscripts' first
  EXPECT_EQ(s.reduce, ReduceOp::Sum);
  EXPECT_TRUE(s.init);
  EXPECT_EQ(s.write->ref, Ref::Tensor);
  EXPECT_EQ(s.write->tensor, s.lhs_tensor);
  Program q = checked("def f(float(N) X, int32(N) I) -> (O) { O(i) = X(i)\n O(I(i)) += X(i) }");
  EXPECT_FALSE(q.defs[0].stmts[1].init);
  EXPECT_EQ(q.defs[0].stmts[1].reduce, ReduceOp::Sum);
}

TEST(Sema, ScatterAccumulatesWithPlusOnly) {
  const char* ops[] = {"=", "+=", "+=!", "*=", "*=!", "min=", "min=!", "max=", "max=!"};
  for (const char* op : ops) {
    std::string src = std::string("def g(float(E,D) LUT, int32(B,L) I, float(B,D) dO) -> (float(E,D) dLUT) {\n"
                                   "  dLUT(I(b, l), d) ") + op + " dO(b, d)\n}";
    bool ok = std::string(op) == "+=" || std::string(op) == "+=!";
    if (ok) {
      checked(src);
      continue;
    }
    std::string m = semantic_error(src);
    EXPECT_TRUE(has(m, "a computed left-hand side subscript ('I(b, l)') makes this statement a scatter; scatters "
                       "accumulate with '+=' or '+=!' only")) << op << ": " << m;
    EXPECT_TRUE(has(m, "g:2:8: error:")) << m;  // at the subscript
  }
  // The first subscript that is not an index variable is the one named; a size is not one.
  std::string m = semantic_error("def f(float(N) X) -> (float(N, N) O) { O(i, N - 1 - i) = X(i) }");
  EXPECT_TRUE(has(m, "('N - (1 + i)')") || has(m, "('(N - 1) - i')")) << m;
}

TEST(Sema, ScatterSubscriptsMustBeIntegers) {
  std::string m = semantic_error("def f(float(N) X) -> (float(N) O) { O(X(i)) += 1 }");
  EXPECT_TRUE(has(m, "left-hand side subscript 'X(i)' of 'O' must be an integer, got float32")) << m;
  EXPECT_TRUE(has(m, "f:1:39: error:")) << m;
  m = semantic_error("def f(float(N) X) -> (float(N) O) { O(i * 0.5) += X(i) }");
  EXPECT_TRUE(has(m, "must be an integer, got float32")) << m;
  checked("def f(float(N) X, uint8(N) I, int64(N) J) -> (float(N) O) { O(I(i)) += X(i)\n O(J(i) + 1) += X(i) }");
}

TEST(Sema, ScatterNeedsItsTensorsShapeFromElsewhere) {
  std::string m = semantic_error("def f(float(N) X, int32(N) I) -> (O) { O(I(i)) += X(i) }");
  EXPECT_TRUE(has(m, "this scatter cannot give 'O' its shape")) << m;
  EXPECT_TRUE(has(m, "annotate the output with its dimensions, as in '-> (float(N0) O)'")) << m;
  EXPECT_TRUE(has(m, "or write 'O' with a plain statement first")) << m;
  EXPECT_TRUE(has(m, "f:1:40: error:")) << m;
  m = semantic_error("def f(float(N) X, int32(N) I) -> (O) { T(I(i), 0) += X(i)\n O(i) = X(i) }");
  EXPECT_TRUE(has(m, "this scatter cannot give 'T' its shape")) << m;
  EXPECT_TRUE(has(m, "write 'T' with a plain statement first")) << m;
  // A plain statement after the scatter is too late: the scatter runs first.
  m = semantic_error("def f(float(N) X, int32(N) I) -> (O) { O(I(i)) += X(i)\n O(i) += X(i) }");
  EXPECT_TRUE(has(m, "this scatter cannot give 'O' its shape")) << m;
  checked("def f(float(N) X, int32(N) I) -> (float(N) O) { O(I(i)) += X(i) }");
  checked("def f(float(N) X, int32(N) I) -> (O) { T(i) = X(i)\n T(I(i)) += 1\n O(i) = T(i) }");
}

TEST(Sema, ScatterMayNotReadItsOwnTensor) {
  for (const char* src : {"def f(float(N) X, int32(N) I) -> (float(N) O) { O(I(i)) += O(i) }",
                          "def f(float(N) X, int32(N) I) -> (int32(N) O) { O(I(O(i))) += 1 }",
                          "def f(float(N) X, int32(N) I) -> (float(N) O) { O(I(i)) += X(i) where exists O(i) }"}) {
    std::string m = semantic_error(src);
    EXPECT_TRUE(has(m, "this scatter reads 'O', the tensor it writes")) << m;
  }
}

TEST(Sema, ScatterWritesNoInput) {
  std::string m = semantic_error("def f(float(N) X, int32(N) I) -> (float(N) O) { X(I(i)) += 1\n O(i) = X(i) }");
  EXPECT_TRUE(has(m, "cannot write input 'X'")) << m;
}

TEST(Sema, ScatterIntoBoolIsRefused) {
  std::string m = semantic_error("def f(int32(N) I) -> (bool(N) H) { H(I(i)) += true }");
  EXPECT_TRUE(has(m, "'H' is bool, and a scatter adds")) << m;
}

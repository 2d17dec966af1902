// test_cuda_blas.cpp — the cuda backend's library route (src/backends/cuda/blas/), without a
// GPU: which defs are one plain matrix product (with a bias and ReLU for cuBLASLt), and the
// cublasGemmStridedBatchedEx / cublasLtMatmul arguments the plan gives, checked by running them through a host copy of that call's column-major semantics
// against the def's sum evaluated directly — every operand order, the result transposed, batch
// indices anywhere, `+=`, degenerate extents; the refusals and their reasons; cuBLAS's loader
// refusing a missing library by name. The call itself on a GPU is tools/gpu-check.sh's.
#include <gtest/gtest.h>

#include "backends/cuda/blas/blas_plan.h"
#include "backends/cuda/blas/cublas.h"
#include "runtime/tensor_view.h"
#include "infer_test_util.h"

using tc::ScalarType;
using tc::backends::cuda::BlasCall;
using tc::backends::cuda::plan_blas;
using namespace tc_test;

namespace {

// The def's one statement O(...) (+)= A(...) * B(...) evaluated point by point over its
// domain (each subscript one variable): what the call must give. `t` holds every tensor of the
// def (Def::tensors order); O starts as it is for `+=`, from 0 for `+=!`.
void evaluate(const tc::ir::BoundDef& b, std::vector<std::vector<double>>& t) {
  const tc::ir::Stmt& st = b.def().stmts[0];
  const auto& ranges = b.ranges[0];
  if (st.init) std::fill(t[static_cast<size_t>(st.lhs_tensor)].begin(), t[static_cast<size_t>(st.lhs_tensor)].end(), 0.0);
  std::vector<int64_t> at(st.vars.size());
  for (size_t v = 0; v < at.size(); ++v) at[v] = ranges[v].first;
  auto offset = [&](int tensor, const std::vector<int>& vars) {
    std::vector<int64_t> s = tc::runtime::dense_strides(b.tensors[static_cast<size_t>(tensor)].shape);
    int64_t o = 0;
    for (size_t d = 0; d < vars.size(); ++d) o += at[static_cast<size_t>(vars[d])] * s[d];
    return static_cast<size_t>(o);
  };
  std::vector<int> lhs;
  for (size_t v = 0; v < st.num_lhs; ++v) lhs.push_back(static_cast<int>(v));
  std::vector<std::vector<int>> reads;
  for (const tc::ir::Read& r : st.reads) {
    std::vector<int> vars;
    for (const auto& sub : r.subscripts) vars.push_back(sub.var);
    reads.push_back(vars);
  }
  for (;;) {
    t[static_cast<size_t>(st.lhs_tensor)][offset(st.lhs_tensor, lhs)] +=
        t[static_cast<size_t>(st.reads[0].tensor)][offset(st.reads[0].tensor, reads[0])] *
        t[static_cast<size_t>(st.reads[1].tensor)][offset(st.reads[1].tensor, reads[1])];
    size_t v = at.size();
    while (v-- > 0 && ++at[v] == ranges[v].second) at[v] = ranges[v].first;
    if (v == SIZE_MAX) return;
  }
}

// cublasGemmStridedBatchedEx's result, on the host: for each batch entry, column-major
// C = op(X) op(Y) (+ C), element (r, c) of an m x n matrix at r + c * ld.
void column_major_gemm(const BlasCall& call, std::vector<std::vector<double>>& t) {
  const std::vector<double>&x = t[static_cast<size_t>(call.x)], &y = t[static_cast<size_t>(call.y)];
  std::vector<double>& c = t[static_cast<size_t>(call.c)];
  for (int64_t e = 0; e < call.batch; ++e)
    for (int64_t col = 0; col < call.n; ++col)
      for (int64_t row = 0; row < call.m; ++row) {
        double sum = 0;
        for (int64_t k = 0; k < call.k; ++k) {
          double xv = call.x_trans ? x.at(static_cast<size_t>(e * call.stride_x + k + row * call.ldx))
                                   : x.at(static_cast<size_t>(e * call.stride_x + row + k * call.ldx));
          double yv = call.y_trans ? y.at(static_cast<size_t>(e * call.stride_y + col + k * call.ldy))
                                   : y.at(static_cast<size_t>(e * call.stride_y + k + col * call.ldy));
          sum += xv * yv;
        }
        double& out = c.at(static_cast<size_t>(e * call.stride_c + row + col * call.ldc));
        out = (call.accumulate ? out : 0.0) + sum;
        if (call.bias >= 0) out += t[static_cast<size_t>(call.bias)].at(static_cast<size_t>(row));  // along C's rows
        if (call.relu) out = std::max(out, 0.0);
      }
}

struct Bound {
  ProgramPtr program;
  tc::ir::BoundDef bound;
};

Bound bound_of(const std::string& src, ScalarType type, const std::vector<std::vector<int64_t>>& shapes) {
  Bound b{build(src), {}};
  Inputs in;
  for (const auto& s : shapes) in.add(type, s);
  b.bound = bind_def(b.program, in);
  return b;
}

// Every tensor filled with small integers (exact sums), the output too (for `+=`).
std::vector<std::vector<double>> filled(const tc::ir::BoundDef& b) {
  std::vector<std::vector<double>> t;
  uint32_t seed = 1;  // an LCG, unsigned: it wraps
  for (const auto& sig : b.tensors) {
    std::vector<double> v(static_cast<size_t>(sig.num_elements()));
    for (double& x : v) x = static_cast<double>((seed = seed * 1103515245u + 12345u) >> 16 & 7) - 3;
    t.push_back(v);
  }
  return t;
}

}  // namespace

TEST(CudaBlas, TheCallsArgumentsComputeTheDefsProduct) {
  struct Case {
    const char* src;
    std::vector<std::vector<int64_t>> shapes;
    const char* describe;  // a part of BlasCall::describe
  };
  const std::vector<Case> cases = {
      {"def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", {{5, 7}, {7, 3}},
       "C (3 x 5, ld 3) = B (ld 3) * A (ld 7), k 7"},
      {"def tmm(float(M,K) A, float(N,K) B) -> (C) { C(m,n) +=! A(m,k) * B(n,k) }", {{5, 7}, {4, 7}},
       "C (4 x 5, ld 4) = B^T (ld 7) * A (ld 7), k 7"},
      {"def t2(float(K,M) A, float(N,K) B) -> (C) { C(m,n) +=! A(k,m) * B(n,k) }", {{6, 5}, {3, 6}}, "= B^T (ld 6) * A^T"},
      {"def acc(float(N,K) Y, float(K,M) X) -> (C) { C(i,j) += Y(j,k) * X(k,i) }", {{4, 6}, {6, 5}}, "+="},
      {"def ot(float(M,K) A, float(K,N) B) -> (C) { C(j,i) +=! A(i,k) * B(k,j) }", {{5, 7}, {7, 3}},
       "C (5 x 3, ld 5) = A^T (ld 7) * B^T (ld 3)"},
      {"def bmm(float(B,N,K) X, float(B,M,K) Y) -> (Z) { Z(b,n,m) +=! X(b,n,k) * Y(b,m,k) }", {{3, 4, 6}, {3, 5, 6}},
       "3 batches 20, 30, 24 elements apart"},
      {"def mid(float(N,B,K) X, float(B,K,M) Y) -> (Z) { Z(n,b,m) +=! X(n,b,k) * Y(b,k,m) }", {{4, 3, 6}, {3, 6, 5}},
       "3 batches"},
      {"def vm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", {{1, 7}, {7, 3}}, "k 7"},
      {"def mv(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", {{5, 7}, {7, 1}}, "k 7"},
      {"def dot(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", {{1, 9}, {9, 1}}, "k 9"},
      {"def k1(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", {{5, 1}, {1, 3}}, "k 1"},
  };
  for (const Case& c : cases) {
    for (ScalarType type : {ScalarType::Float32, ScalarType::Float64}) {
      SCOPED_TRACE(std::string(c.src) + " " + tc::name(type));
      std::string src = c.src;
      if (type == ScalarType::Float64)
        for (size_t at = src.find("float("); at != std::string::npos; at = src.find("float(", at)) src.replace(at, 5, "double");
      Bound b = bound_of(src, type, c.shapes);
      std::string why;
      std::optional<BlasCall> call = plan_blas(b.bound, &why);
      ASSERT_TRUE(call) << why;
      EXPECT_EQ(call->type, type);
      EXPECT_NE(call->describe(b.bound.def()).find(c.describe), std::string::npos) << call->describe(b.bound.def());
      std::vector<std::vector<double>> want = filled(b.bound), got = want;
      evaluate(b.bound, want);
      column_major_gemm(*call, got);
      EXPECT_EQ(got, want);
    }
  }
  // float16 and bfloat16 (summed in float by cuBLAS): the same arguments.
  for (ScalarType t : {ScalarType::Float16, ScalarType::BFloat16}) {
    std::string ty = t == ScalarType::Float16 ? "float16" : "bfloat16";
    Bound b = bound_of("def mm(" + ty + "(M,K) A, " + ty + "(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", t, {{5, 7}, {7, 3}});
    std::optional<BlasCall> call = plan_blas(b.bound);
    ASSERT_TRUE(call);
    EXPECT_EQ(call->type, t);
  }
}

// A product then a bias along O's contiguous index and/or fmax(x, 0): cuBLASLt's epilogue, the
// bias along C's rows. Expected: the product by evaluate(), then the epilogue applied by hand.
TEST(CudaBlas, ABiasAndAReluGoToCublasLtsEpilogue) {
  struct Case {
    const char* epilogue;  // statements after O(b,n) +=! I(b,k) * W(n,k)
    bool bias, relu;
  };
  const std::vector<Case> cases = {
      {"O(b,n) = fmax(O(b,n) + bias(n), 0)", true, true},
      {"O(b,n) = O(b,n) + bias(n)", true, false},
      {"O(b,n) = bias(n) + O(b,n)", true, false},
      {"O(b,n) = fmax(0, O(b,n))", false, true},
      {"O(b,n) = O(b,n) + bias(n)\n  O(b,n) = fmax(O(b,n), 0)", true, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.epilogue);
    std::string src = std::string("def f(float(B,K) I, float(N,K) W, float(N) bias) -> (O) {\n  O(b,n) +=! I(b,k) * W(n,k)\n  ") +
                      c.epilogue + "\n}";
    Bound b = bound_of(src, ScalarType::Float32, {{4, 5}, {3, 5}, {3}});
    std::string why;
    std::optional<BlasCall> call = plan_blas(b.bound, &why);
    ASSERT_TRUE(call) << why;
    EXPECT_EQ(call->bias >= 0, c.bias);
    EXPECT_EQ(call->relu, c.relu);
    EXPECT_NE(call->describe(b.bound.def()).find("cublasLtMatmul, float32"), std::string::npos);
    std::vector<std::vector<double>> want = filled(b.bound), got = want;
    evaluate(b.bound, want);
    std::vector<double>& o = want[3];
    for (size_t e = 0; e < o.size(); ++e) {
      if (c.bias) o[e] += want[2][e % 3];
      if (c.relu) o[e] = std::max(o[e], 0.0);
    }
    column_major_gemm(*call, got);
    EXPECT_EQ(got, want);
  }
  const std::vector<std::pair<const char*, const char*>> refused = {
      {"O(b,n) = O(b,n) + bias(b) where b in 0:N", "one bias along O's last index"},
      {"O(b,n) = fmax(O(b,n), 0)\n  O(b,n) = O(b,n) + bias(n)", "not x + bias, then max(x, 0)"},
      {"O(b,n) = max(O(b,n), 0)", "not x + bias, then max(x, 0)"},
      {"O(b,n) = O(b,n) * 2", "not x + bias, then max(x, 0)"},
  };
  for (const auto& [epilogue, reason] : refused) {
    SCOPED_TRACE(epilogue);
    std::string src = std::string("def f(float(B,K) I, float(N,K) W, float(N) bias) -> (O) {\n  O(b,n) +=! I(b,k) * W(n,k)\n  ") +
                      epilogue + "\n}";
    Bound b = bound_of(src, ScalarType::Float32, {{3, 5}, {3, 5}, {3}});
    std::string why;
    EXPECT_FALSE(plan_blas(b.bound, &why));
    EXPECT_NE(why.find(reason), std::string::npos) << why;
  }
}

TEST(CudaBlas, RefusesWhatIsNotOnePlainProductAndSaysWhy) {
  struct Case {
    const char* src;
    std::vector<std::vector<int64_t>> shapes;
    const char* why;
  };
  const ScalarType F32 = ScalarType::Float32;
  const std::vector<Case> cases = {
      {"def f(float(B,K) I, float(N,K) W, float(N) bias) -> (O) {\n  O(b,n) +=! I(b,k) * W(n,k)\n"
       "  O(b,n) = fmax(O(b,n) * bias(n), 0)\n}",
       {{4, 5}, {3, 5}, {3}}, "the epilogue is not x + bias"},
      {"def f(float(M,K) A, float(K,N) B) -> (C) {\n  T(i,j) +=! A(i,k) * B(k,j)\n  C(i,j) +=! T(i,k) * B(k,j) where k in 0:N\n}",
       {{4, 4}, {4, 4}}, "more than one product"},
      {"def f(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) where k in 1:K }", {{4, 5}, {5, 6}},
       "runs over part of a tensor's dimension"},
      {"def f(float(B,M,K) A, float(B,K,N) B2) -> (C) { C(i,j) +=! A(b,i,k) * B2(b,k,j) }", {{2, 4, 5}, {2, 5, 6}},
       "more than one index in a group"},
      {"def f(int32(M,K) A, int32(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", {{4, 5}, {5, 6}},
       "not a product of two tensors"},
      {"def f(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", {{4, 0}, {0, 6}}, "an empty product"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.src);
    ScalarType type = std::string(c.src).find("int32") != std::string::npos ? ScalarType::Int32 : F32;
    Bound b = bound_of(c.src, type, c.shapes);
    std::string why;
    EXPECT_FALSE(plan_blas(b.bound, &why));
    EXPECT_NE(why.find(c.why), std::string::npos) << why;
  }
}

TEST(CudaBlas, AMissingLibraryIsRefusedByName) {
  std::string message = error_of([] { tc::backends::cuda::Cublas({"/nonexistent/libcublas.so.13"}); }, TC_ERROR_UNSUPPORTED);
  EXPECT_NE(message.find("cuBLAS was not found"), std::string::npos) << message;
  EXPECT_NE(message.find("/nonexistent/libcublas.so.13"), std::string::npos) << message;
}

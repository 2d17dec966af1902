// test_cpu_blas.cpp — the cpu.blas route (src/backends/cpu/gemm_route.h, cblas.h), white-box:
// which defs are plain (batched) matrix products and how they map onto gemm's operands and
// transposes; the CBLAS loader's refusal naming what it tried; the knob's tuner domain. The
// route's results against the reference are in test_cpu_schedule.cpp (CpuBlas.*), through
// the C API.
#include <gtest/gtest.h>

#include "backends/cpu/cblas.h"
#include "backends/cpu/gemm_route.h"
#include "tune/options.h"
#include "common/error_of.h"
#include "infer_test_util.h"

using tc::ScalarType;
using tc::backends::cpu::Cblas;
using tc::backends::cpu::GemmPlan;
using tc::backends::cpu::plan_gemm;
using namespace tc_test;

namespace {

using Signature = std::vector<std::pair<ScalarType, Shape>>;

std::optional<GemmPlan> plan_of(const std::string& src, const Signature& sig, std::string* why = nullptr) {
  ProgramPtr p = build(src);
  Inputs in;
  for (const auto& [type, shape] : sig) in.add(type, shape);
  return plan_gemm(bind_def(p, in), why);
}

const ScalarType F32 = ScalarType::Float32, F64 = ScalarType::Float64;

const char* kMatmul = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }";

Inputs mm_inputs() {  // A 3 x 4, B 4 x 2
  Inputs in;
  in.f32({3, 4}).f32({4, 2});
  return in;
}

}  // namespace

TEST(CpuBlas, RecognisesPlainProductsWithTheirTransposesAndBatches) {
  auto mm = plan_of("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }",
                    Signature{{F32, {4, 5}}, {F32, {5, 6}}});
  ASSERT_TRUE(mm);
  EXPECT_EQ(mm->a, 0);
  EXPECT_EQ(mm->b, 1);
  EXPECT_EQ(mm->c, 0);
  EXPECT_FALSE(mm->a_trans || mm->b_trans || mm->accumulate);
  EXPECT_EQ(mm->batch, 0);
  EXPECT_EQ(mm->describe(), "C = A * B (cblas_sgemm)");

  // The operands in the other order, both stored transposed, `+=` without `!`.
  auto tt = plan_of("def f(float(N,K) Y, float(K,M) X) -> (C) { C(i,j) += Y(j,k) * X(k,i) }",
                    Signature{{F32, {6, 5}}, {F32, {5, 4}}});
  ASSERT_TRUE(tt);
  EXPECT_EQ(tt->a, 1);
  EXPECT_EQ(tt->b, 0);
  EXPECT_TRUE(tt->a_trans && tt->b_trans && tt->accumulate);
  EXPECT_EQ(tt->describe(), "C = C + A^T * B^T (cblas_sgemm)");

  auto bmm = plan_of("def f(double(B,T,M,K) X, double(B,T,N,K) Y) -> (Z) { Z(b,t,m,n) +=! X(b,t,m,k) * Y(b,t,n,k) }",
                     Signature{{F64, {2, 3, 4, 5}}, {F64, {2, 3, 6, 5}}});
  ASSERT_TRUE(bmm);
  EXPECT_EQ(bmm->type, ScalarType::Float64);
  EXPECT_EQ(bmm->batch, 2);
  EXPECT_TRUE(bmm->b_trans);
  EXPECT_EQ(bmm->describe(), "C = A * B^T (cblas_dgemm), 2 batch dimensions");
}

TEST(CpuBlas, RefusesWhatIsNotAPlainProductAndSaysWhy) {
  struct Case {
    const char* src;
    Signature in;
    const char* why;
  };
  std::vector<Case> cases;
  cases.push_back({"def f(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) + 1 }",
                   Signature{{F32, {4, 5}}, {F32, {5, 6}}}, "not a product of two tensor reads"});
  cases.push_back({"def f(float(M,K) A, float(K,N) B) -> (C) { C(i,j) max=! A(i,k) * B(k,j) }",
                   Signature{{F32, {4, 5}}, {F32, {5, 6}}}, "not a += reduction"});
  cases.push_back({"def f(float(M,K) A, float(K,N) B) -> (C) {\n  T(i,j) +=! A(i,k) * B(k,j)\n  C(i,j) = T(i,j)\n}",
                   Signature{{F32, {4, 5}}, {F32, {5, 6}}}, "2 statements"});
  cases.push_back({"def f(int32(M,K) A, int32(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }",
                   Signature{{ScalarType::Int32, {4, 5}}, {ScalarType::Int32, {5, 6}}}, "not float or double"});
  cases.push_back({"def f(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) where k in 1:K }",
                   Signature{{F32, {4, 5}}, {F32, {5, 6}}}, "whole of A's and B's shared dimension"});
  cases.push_back({"def f(float(M,K) A, float(M,N) B) -> (C) { C(i,j) +=! A(i,k) * B(i,j) }",
                   Signature{{F32, {4, 5}}, {F32, {4, 6}}}, "not A(..., i, k) and B(..., k, j)"});
  cases.push_back({"def f(float(M,K) A, float(K) x) -> (y) { y(i) +=! A(i,k) * x(k) }",
                   Signature{{F32, {4, 5}}, {F32, {5}}}, "not two output dimensions"});
  for (auto& c : cases) {
    std::string why;
    EXPECT_FALSE(plan_of(c.src, c.in, &why)) << c.src;
    EXPECT_TRUE(has(why, c.why)) << c.src << "\n  why: " << why;
  }
}

TEST(CpuBlas, LoaderNamesEachLibraryItTriedAndWhy) {
  std::string m = error_of([] { Cblas({"/nonexistent/libblas-none.so", "libc.so.6"}); }, TC_ERROR_UNSUPPORTED);
  EXPECT_TRUE(has(m, "no CBLAS library could be loaded")) << m;
  EXPECT_TRUE(has(m, "/nonexistent/libblas-none.so: ")) << m;
  EXPECT_TRUE(has(m, "libc.so.6: lacks cblas_sgemm, cblas_dgemm")) << m;
}

// The tuner tries cpu.blas only where it can change something: a plain product, and a CBLAS
// in this process (CI installs OpenBLAS; without any CBLAS the domain is empty).
TEST(CpuBlas, TheTunerTriesTheRouteOnlyForPlainProducts) {
  std::string why;
  const Cblas* lib = tc::backends::cpu::cblas(&why);
  ProgramPtr mm = build("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }");
  Inputs in;
  in.f32({4, 5}).f32({5, 6});
  auto domain = tc::tune::find_option("cpu.blas").domain(bind_def(mm, in));
  if (lib) EXPECT_EQ(domain, (std::vector<std::string>{"0", "1"}));
  else EXPECT_TRUE(domain.empty()) << why;
  ProgramPtr relu = build("def f(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) + 1 }");
  Inputs in2;
  in2.f32({4, 5}).f32({5, 6});
  EXPECT_TRUE(tc::tune::find_option("cpu.blas").domain(bind_def(relu, in2)).empty());
  if (!lib) GTEST_SKIP() << "no CBLAS in this process: " << why;
}

namespace {

// Runs `kernel` on row-major float tensors; returns its one output.
std::vector<float> run_mm(const tc::backends::Kernel& kernel, std::vector<float> a, std::vector<float> b,
                          const tc::ir::BoundDef& bound) {
  std::vector<float> c(static_cast<size_t>(bound.tensors[2].shape[0] * bound.tensors[2].shape[1]), -1.0f);
  std::vector<tc::runtime::TensorView> in = {
      tc::runtime::row_major_view(reinterpret_cast<char*>(a.data()), bound.tensors[0]),
      tc::runtime::row_major_view(reinterpret_cast<char*>(b.data()), bound.tensors[1])};
  std::vector<tc::runtime::TensorView> out = {tc::runtime::row_major_view(reinterpret_cast<char*>(c.data()), bound.tensors[2])};
  kernel.run(in, out, tc::backends::ExecutionContext{});
  return c;
}

}  // namespace

// The compilation cache's artefact of a kernel on the route is the plan, not an object; loading
// it gives the same route (no compile), and the same values as the pipeline.
TEST(CpuBlas, ArtefactIsThePlanAndLoadsBackToTheRoute) {
  std::string why;
  if (!tc::backends::cpu::cblas(&why)) GTEST_SKIP() << "no CBLAS in this process: " << why;
  auto p = build(kMatmul);
  Inputs in = mm_inputs();
  auto bound = bind_def(p, in);
  const tc::backends::Backend& cpu = tc::backends::find_backend("cpu");
  tc::tune::OptionSet o;
  o.set("cpu.blas", "1");
  auto kernel = cpu.compile(bound, cpu.default_target(), o.values_for(cpu));
  EXPECT_EQ(kernel->artefact(), "tc-cpu-blas 1\nC = A * B (cblas_sgemm)\n");
  EXPECT_TRUE(has(kernel->describe(), "blas: C = A * B (cblas_sgemm) from ")) << kernel->describe();
  auto loaded = cpu.load(bound, cpu.default_target(), o.values_for(cpu), kernel->artefact());
  EXPECT_TRUE(has(loaded->describe(), "blas: C = A * B (cblas_sgemm) from ")) << loaded->describe();
  std::vector<float> a = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, b = {1, -1, 2, 0, 0.5f, 3, -2, 1};
  std::vector<float> want = {-1.5f, 12, 4.5f, 24, 10.5f, 36};  // A * B by hand
  EXPECT_EQ(run_mm(*loaded, a, b, bound), want);
  tc::tune::OptionSet plain;
  auto own = cpu.compile(bound, cpu.default_target(), plain.values_for(cpu));
  EXPECT_EQ(run_mm(*own, a, b, bound), want);
  // The tuner pauses before timing a kernel for as long as the last one's workers may spin
  // (tune/evaluation.cpp): a BLAS library's about 0.1 s, libtc's own pool's well under 1 ms.
  EXPECT_EQ(kernel->spins_after_run(), std::chrono::milliseconds{100});
  EXPECT_EQ(loaded->spins_after_run(), std::chrono::milliseconds{100});
  EXPECT_LE(own->spins_after_run(), std::chrono::milliseconds{1});
}

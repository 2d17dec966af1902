// test_cuda_poly.cpp — the cuda backend's polyhedral model (src/backends/cuda/poly_model.*),
// white-box: the domains, accesses and dependences isl computes for
// the paper's kernels at small sizes, compared with the expected sets and maps as sets (isl's
// is_equal, so the order isl prints union members in does not matter); affine subscripts
// exact (offsets, strides, floor division, modulo, sizes and T.d as numbers), the others
// (gathers, products of variables) over the tensor's whole extent; and the two fusion
// strategies of the isl scheduler on softmax; tiling and the kernel/thread marks (mapping.h)
// as the loop nest isl generates.
#include <gtest/gtest.h>

#include <chrono>

#include <isl/schedule.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <tuple>

#include "backends/cuda/mapping.h"
#include "backends/cuda/poly_model.h"
#include "backends/cuda/schedule.h"
#include "infer_test_util.h"

using tc::backends::cuda::Fusion;
using tc::backends::cuda::PolyModel;
using tc::backends::cuda::compute_schedule;
using tc::backends::cuda::loop_nest_text;
using tc::backends::cuda::schedule_text;
using tc::backends::cuda::tile_and_mark;
using tc_test::Inputs;

namespace {

std::unique_ptr<PolyModel> model_of(const std::string& src, Inputs& in) {
  auto p = tc_test::build(src);
  return std::make_unique<PolyModel>(tc_test::bind_def(p, in));
}

// `expected` (isl text, restricted to the model's domains) equals `got` as a relation.
::testing::AssertionResult same_map(const PolyModel& m, const isl_union_map* got, const std::string& expected) {
  isl_union_map* want = isl_union_map_read_from_str(m.ctx(), expected.c_str());
  if (want == nullptr) return ::testing::AssertionFailure() << "bad expected text " << expected;
  want = isl_union_map_intersect_domain(want, isl_union_set_copy(const_cast<isl_union_set*>(m.domains())));
  bool equal = isl_union_map_is_equal(want, const_cast<isl_union_map*>(got)) == isl_bool_true;
  isl_union_map_free(want);
  if (equal) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected " << expected << "\nmodel:\n" << m.text();
}

::testing::AssertionResult same_set(const PolyModel& m, const std::string& expected) {
  isl_union_set* want = isl_union_set_read_from_str(m.ctx(), expected.c_str());
  if (want == nullptr) return ::testing::AssertionFailure() << "bad expected text " << expected;
  bool equal = isl_union_set_is_equal(want, const_cast<isl_union_set*>(m.domains())) == isl_bool_true;
  isl_union_set_free(want);
  if (equal) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected " << expected << "\nmodel:\n" << m.text();
}

// The schedules compared with expected texts are isl's own, on any machine: cuda.schedule_time's
// fallbacks (past 5 s by default) must not stand in for them on a slow one. ctest's TIMEOUT
// guards against a hang.
constexpr std::chrono::milliseconds kNoTimeLimit{3600 * 1000};

std::string scheduled(const PolyModel& m, Fusion fusion) {
  isl_schedule* s = compute_schedule(m, fusion, kNoTimeLimit);
  std::string text = schedule_text(s);
  isl_schedule_free(s);
  return text;
}

// The loop nest after scheduling, tiling and marking.
std::string mapped_loops(const PolyModel& m, Fusion fusion, const tc::backends::cuda::MappingOptions& options) {
  isl_schedule* s = tile_and_mark(compute_schedule(m, fusion, kNoTimeLimit), options);
  std::string text = loop_nest_text(m, s);
  isl_schedule_free(s);
  return text;
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

// A '!' reduction is an identity statement I0 and an accumulation S0 reading its own element;
// each k depends on the k before it, k = 0 on the identity.
TEST(PolyModel, MatmulDomainsAccessesAndDependences) {
  Inputs in;
  in.f32({4, 3}).f32({3, 5});
  auto m = model_of("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", in);
  EXPECT_TRUE(same_set(*m, "{ I0[i, j] : 0 <= i < 4 and 0 <= j < 5; S0[i, j, k] : 0 <= i < 4 and 0 <= j < 5 and 0 <= k < 3 }"));
  EXPECT_TRUE(same_map(*m, m->writes(), "{ I0[i, j] -> C[i, j]; S0[i, j, k] -> C[i, j] }"));
  EXPECT_TRUE(same_map(*m, m->reads(), "{ S0[i, j, k] -> A[i, k]; S0[i, j, k] -> B[k, j]; S0[i, j, k] -> C[i, j] }"));
  EXPECT_TRUE(same_map(*m, m->flow(), "{ I0[i, j] -> S0[i, j, 0]; S0[i, j, k] -> S0[i, j, k + 1] : k < 2 }"));
  // Anti and output dependences too: every later k of the same element.
  EXPECT_TRUE(same_map(*m, m->dependences(),
                       "{ I0[i, j] -> S0[i, j, 0]; S0[i, j, k] -> S0[i, j, k2] : 0 <= k < k2 < 3 }"));
}

TEST(PolyModel, AffineSubscriptsAreExact) {
  Inputs in;
  in.f32({20}).f32({3});
  auto m = model_of(
      "def f(float(N) I, float(K) W) -> (O, P, Q) {\n"
      "  O(i) +=! I(i + k) * W(k)\n"       // a convolution's offset
      "  P(i) = I(2*i + 1) + I(i / 2) + I(i % 3) where i in 0:9\n"
      "  Q(i) = I(i + K) + W(W.0 - 1)\n"   // a size and T.d are numbers once bound
      "}",
      in);
  EXPECT_TRUE(same_map(*m, m->reads(),
                       "{ S0[i, k] -> I[i + k]; S0[i, k] -> W[k]; S0[i, k] -> O[i];"
                       "  S1[i] -> I[2i + 1]; S1[i] -> I[o] : o = floor(i / 2); S1[i] -> I[o] : o = i mod 3;"
                       "  S2[i] -> I[i + 3]; S2[i] -> W[2] }"));
}

// A gather's subscript is data-dependent, a product of variables is not affine: both read
// anywhere along that dimension; the others stay exact.
TEST(PolyModel, OtherSubscriptsCoverTheWholeExtent) {
  Inputs in;
  in.f32({10, 4}).add(tc::ScalarType::Int32, {3, 2});
  auto m = model_of("def lut(float(E,D) LUT, int32(B,L) I) -> (O) { O(b,d) +=! LUT(I(b,l), d) }", in);
  EXPECT_TRUE(same_map(*m, m->reads(),
                       "{ S0[b, d, l] -> LUT[o, d] : 0 <= o < 10; S0[b, d, l] -> I[b, l]; S0[b, d, l] -> O[b, d] }"));
  Inputs sq;
  sq.f32({16});
  auto p = model_of("def g(float(N) A) -> (O) { O(i) +=! A(i * j) where i in 0:4, j in 0:4 }", sq);
  EXPECT_TRUE(same_map(*p, p->reads(), "{ S0[i, j] -> A[o] : 0 <= o < 16; S0[i, j] -> O[i] }"));
}

TEST(PolyModel, ATensorNamedAfterAnIslKeywordIsRenamed) {
  Inputs in;
  in.f32({3});
  auto m = model_of("def f(float(N) mod) -> (floor) { floor(i) = mod(i) }", in);
  EXPECT_TRUE(same_map(*m, m->reads(), "{ S0[i] -> mod_[i] }"));
  EXPECT_TRUE(same_map(*m, m->writes(), "{ S0[i] -> floor_[i] }"));
}

// Softmax: max fusion puts every statement in one band over the rows (isl schedules the whole
// component: one kernel); min fusion gives each of the 6 statements a band of its own.
TEST(PolyModel, SoftmaxFusionStrategies) {
  Inputs in;
  in.f32({2, 6});
  auto m = model_of(
      "def softmax(float(N,D) X) -> (O) {\n  mx(n) max=! X(n,d)\n  e(n,d) = exp(X(n,d) - mx(n))\n"
      "  s(n) +=! e(n,d)\n  O(n,d) = e(n,d) / s(n)\n}",
      in);
  EXPECT_TRUE(same_map(*m, m->flow(),
                       "{ I0[n] -> S0[n, 0]; S0[n, d] -> S0[n, d + 1] : d < 5; S0[n, 5] -> S1[n, d] : 0 <= d < 6;"
                       "  I2[n] -> S2[n, 0]; S1[n, d] -> S2[n, d]; S2[n, d] -> S2[n, d + 1] : d < 5;"
                       "  S1[n, d] -> S3[n, d]; S2[n, 5] -> S3[n, d] : 0 <= d < 6 }"));
  std::string max = scheduled(*m, Fusion::Max);
  std::string min = scheduled(*m, Fusion::Min);
  EXPECT_EQ(count(max, "schedule:"), 1u) << max;
  EXPECT_EQ(count(min, "schedule:"), 6u) << min;
  // The rows stay parallel (coincident) in every band.
  EXPECT_EQ(count(min, "coincident: [ 1"), 6u) << min;
  // Fusion that keeps three parallel loops: max fusion leaves e(n,d) and O(n,d) one parallel
  // loop (the rows) where min fusion gives them two, so min fusion's schedule is kept.
  EXPECT_EQ(scheduled(*m, Fusion::Preserve3), min);
}

// ... and where max fusion loses no parallel loop (matmul: i and j either way), max fusion's.
TEST(PolyModel, Preserve3KeepsMaxFusionThatLosesNoParallelLoop) {
  Inputs in;
  in.f32({6, 5}).f32({5, 7});
  auto m = model_of("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", in);
  EXPECT_EQ(scheduled(*m, Fusion::Preserve3), scheduled(*m, Fusion::Max));
  EXPECT_NE(scheduled(*m, Fusion::Max), scheduled(*m, Fusion::Min));
}

// Matmul 64x64x64 in tiles of 32x16 (k: the default 32), golden: the outermost band (i, j, k:
// permutable, i and j coincident) is tiled; the kernel mark above it; the i and j tile loops
// on the grid's y and x, the i and j point loops on the block's threads, j on x; the k loops
// carry the accumulation and stay unmarked, run by each thread. Max fusion puts the identity
// statement I0 into the reduction's tiles (`if (c2 == 0)`), isl's own choice (docs/design/cuda-backend.md).
TEST(Mapping, MatmulTiledAndMarked) {
  Inputs in;
  in.f32({64, 64}).f32({64, 64});
  auto m = model_of("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", in);
  EXPECT_EQ(mapped_loops(*m, Fusion::Max, {{32, 16}}),
            "// kernel\n"
            "// block.y:32\n"
            "for (int c0 = 0; c0 <= 63; c0 += 32) {\n"
            "  // block.x:16\n"
            "  for (int c1 = 0; c1 <= 63; c1 += 16)\n"
            "    for (int c2 = 0; c2 <= 63; c2 += 32) {\n"
            "      // thread.y:1\n"
            "      for (int c3 = 0; c3 <= 31; c3 += 1) {\n"
            "        // thread.x:1\n"
            "        for (int c4 = 0; c4 <= 15; c4 += 1) {\n"
            "          if (c2 == 0)\n"
            "            I0(c0 + c3, c1 + c4);\n"
            "          for (int c5 = 0; c5 <= 31; c5 += 1)\n"
            "            S0(c0 + c3, c1 + c4, c2 + c5);\n"
            "        }\n"
            "      }\n"
            "    }\n"
            "}\n");
}

// A row reduction (softmax's max, min fusion): its row loop is parallel (block.x over row
// tiles, thread.x over a tile's rows), the loop along the row carries the max: unmarked.
TEST(Mapping, RowReductionKeepsItsReductionLoopInTheThread) {
  Inputs in;
  in.f32({64, 100});
  auto m = model_of("def rowmax(float(N,D) X) -> (M) { M(n) max=! X(n,d) }", in);
  std::string loops = mapped_loops(*m, Fusion::Min, {{16}});
  EXPECT_EQ(count(loops, "// block.x:"), 2u) << loops;   // I0's kernel and S0's
  EXPECT_EQ(count(loops, "// thread.x:"), 2u) << loops;
  EXPECT_EQ(count(loops, "// block.y:"), 0u) << loops;
  EXPECT_EQ(count(loops, "// thread.y:"), 0u) << loops;
}

// Min fusion gives softmax one kernel per statement; max fusion fewer.
TEST(Mapping, OneKernelPerBand) {
  Inputs in;
  in.f32({64, 100});
  auto m = model_of(
      "def softmax(float(N,D) X) -> (O) {\n  mx(n) max=! X(n,d)\n  e(n,d) = exp(X(n,d) - mx(n))\n"
      "  s(n) +=! e(n,d)\n  O(n,d) = e(n,d) / s(n)\n}",
      in);
  std::string min = mapped_loops(*m, Fusion::Min, {});
  std::string max = mapped_loops(*m, Fusion::Max, {});
  EXPECT_EQ(count(min, "// kernel"), 6u) << min;
  EXPECT_LT(count(max, "// kernel"), 6u) << max;
}

// A scatter (computed left-hand side subscripts): its write is over-approximated to the whole
// written dimension and is a MAY write (it does not kill the plain statement's write: the flow
// from O(i) = X(i) to every later read stays), and the dependences between two instances of
// the scatter are left out (atomic additions commute): its loop is parallel, so it is mapped.
TEST(PolyModel, ScatterWritesAreMayWritesAndItsInstancesCommute) {
  Inputs in;
  in.f32({4}).add(tc::ScalarType::Int32, {4});
  auto m = model_of("def g(float(N) X, int32(N) I) -> (O, P) {\n  O(i) = X(i)\n  O(I(i)) += X(i)\n  P(i) = O(i)\n}", in);
  EXPECT_TRUE(same_map(*m, m->writes(),
                       "{ S0[i0] -> O[i0]; S1[i0] -> O[o0] : 0 <= o0 < 4; S2[i0] -> P[i0] }"));
  // P(i) reads O(i) written by S0 (not killed by the scatter's may write) and by any scatter
  // instance; the scatter's instances read each other's (flow keeps that; dependences do not).
  EXPECT_TRUE(same_map(*m, m->flow(),
                       "{ S0[i0] -> S1[j] : 0 <= i0 < 4 and 0 <= j < 4; S0[i0] -> S2[i0]; S1[j] -> S2[i0] : "
                       "0 <= j < 4 and 0 <= i0 < 4; S1[i0] -> S1[j] : 0 <= i0 < j < 4 }"));
  isl_union_map* self = isl_union_map_read_from_str(m->ctx(), "{ S1[i] -> S1[j] }");
  isl_union_map* kept = isl_union_map_intersect(isl_union_map_copy(const_cast<isl_union_map*>(m->dependences())), self);
  EXPECT_EQ(isl_union_map_is_empty(kept), isl_bool_true);
  isl_union_map_free(kept);
  isl_schedule* mapped = tile_and_mark(compute_schedule(*m, Fusion::Min, kNoTimeLimit), {});
  std::string loops = loop_nest_text(*m, mapped);
  isl_schedule_free(mapped);
  EXPECT_EQ(count(loops, "// thread.x:1"), 3u) << loops;  // every statement's loop, the scatter's too
}

// Golden mappings of the paper's kernels (bench/kernels/*.tc at small sizes) under three knob
// settings: max fusion with the default tiles, min fusion with 8x4 tiles, and max fusion with
// 16x16x4 tiles, shared memory (a "shared" mark above each point band) and unrolling up to 4
// (the reduction's point loop of 4 unrolled: no loop of it left), and the backend's defaults
// (shared memory, register tiles chosen by cuda.regtile=auto: their tiles of 64 or 32 along
// the two thread axes, 1 along the other parallel loops). Each golden file
// (tests/backends/golden/cuda/<kernel>.<setting>.txt) is the marked loop nest isl generates;
// TC_UPDATE_GOLDEN=1 rewrites them (then read the diff: marks only on parallel loops, a
// reduction's loop unmarked, one kernel mark per launch).
namespace {

struct PaperKernel {
  const char* name;
  std::function<void(Inputs&)> inputs;
};

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

TEST(Mapping, PaperKernelsGolden) {
  using tc::ScalarType;
  const std::vector<PaperKernel> kernels = {
      {"sgemm", [](Inputs& in) { in.f32({64, 48}).f32({48, 40}); }},
      {"tmm", [](Inputs& in) { in.f32({16, 48}).f32({40, 48}); }},
      {"tbmm", [](Inputs& in) { in.f32({3, 13, 36}).f32({3, 13, 36}); }},
      {"conv2d", [](Inputs& in) { in.f32({2, 3, 12, 12}).f32({4, 3, 3, 3}); }},
      {"group_conv", [](Inputs& in) { in.f32({2, 4, 2, 10, 10}).f32({4, 2, 2, 3, 3}); }},
      {"lut2", [](Inputs& in) { in.f32({50, 16}).add(ScalarType::Int32, {8, 5}).f32({40, 16}).add(ScalarType::Int32, {8, 6}); }},
      {"mlp3", [](Inputs& in) { in.f32({8, 32}).f32({24, 32}).f32({24}).f32({16, 24}).f32({16}).f32({12, 16}).f32({12}); }},
      {"softmax", [](Inputs& in) { in.f32({16, 40}); }},
  };
  const std::string root = TC_SOURCE_DIR;
  bool update = std::getenv("TC_UPDATE_GOLDEN") != nullptr;
  for (const PaperKernel& k : kernels) {
    Inputs in;
    k.inputs(in);
    auto m = model_of(read_text(root + "/bench/kernels/" + k.name + ".tc"), in);
    for (const auto& [setting, fusion, options] :
         std::vector<std::tuple<std::string, Fusion, tc::backends::cuda::MappingOptions>>{
             {"max_default", Fusion::Max, {}},
             {"min_8x4", Fusion::Min, {{8, 4}}},
             {"max_16x16x4_shared_unroll4", Fusion::Max, {{16, 16, 4}, true, 4}},
             {"max_backend_default", Fusion::Max, {{}, true, 0, false, {}, true}}}) {
      tc::backends::cuda::MappingOptions with_reads = options;
      // What auto register tiles look at, as the backend passes them (it also names the
      // statements with unproven reads, which it leaves untiled: lut2's gathers; not here).
      with_reads.reads = m->reads();
      std::string got = mapped_loops(*m, fusion, with_reads);
      std::string path = root + "/tests/backends/golden/cuda/" + k.name + "." + setting + ".txt";
      if (update) {
        std::ofstream(path) << got;
        continue;
      }
      EXPECT_EQ(got, read_text(path)) << k.name << " " << setting << " (golden " << path << ")";
      // Every kernel mark has its grid and block marks after it, never a thread mark without a kernel.
      EXPECT_GE(count(got, "// kernel"), 1u) << k.name;
      // With shared memory on, a shared mark above every tiled kernel's point band (under its tile loops).
      if (options.shared) EXPECT_GE(count(got, "// shared"), 1u) << k.name;
    }
  }
}

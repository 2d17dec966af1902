// test_cpu_schedule.cpp — the cpu backend's schedule knobs (src/backends/cpu/
// schedule/), through the C API only, each against the reference backend and against the
// schedule without it:
//   - row blocks (cpu.rows): a def's row reductions and the stages they feed computed together
//     block by block. Every value (off, 1, odd, larger than the rows) and thread count gives
//     the bits of the unblocked schedule; the description says which stages were blocked; a
//     producer that is not row-local (read at a reduction variable) stays whole; a checked
//     gather inside a row reduction still reports a bad index.
//   - reduction blocks (cpu.kblock): a register-blocked reduction's outermost reduction
//     variable split into blocks, a tile's accumulators in a buffer: matmul and convolution
//     with blocks that divide the reduction, that do not, and tiles whose rows are not a
//     multiple of the register block; a short innermost reduction loop (kw) is unrolled.
//   - panels (cpu.panel): a register-blocked reduction's streamed and broadcast operands
//     copied per tile (per reduction block) into contiguous panels: plain, transposed and
//     batched matmul and convolution give the reference's bits with every value, with and
//     without reduction blocks; a stage computed on its own is copied, an inlined one is not;
//     by default (auto) the cache model copies the streamed operand of a long product only.
//   - range checks: they run before any statement writes an output.
//   - cpu.blas: plain products computed by the system's CBLAS, in every layout.
//   - cpu.fma: a product sum rounds once a step (on), or as the reference (off).
//   - cpu.flatten, cpu.transpose: convolutions over flattened rows, products
//     computed transposed: the bits of the plain stage.
//   - cpu.contract=auto: which contractions it leaves to the pipeline (small matrix products).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "tc/tc.h"

namespace {

const char* kSoftmax =
    "def softmax(float(N,D) X) -> (O) {\n"
    "  mx(n) max=! X(n,d)\n  e(n,d) = exp(X(n,d) - mx(n))\n  s(n) +=! e(n,d)\n  O(n,d) = e(n,d) / s(n)\n}";
const char* kLayernorm =
    "def layernorm(float(N,D) X, float(D) gamma, float(D) beta) -> (O) {\n"
    "  mean(n) +=! X(n,d) / D\n  xc(n,d) = X(n,d) - mean(n)\n  var(n) +=! xc(n,d) * xc(n,d) / D\n"
    "  O(n,d) = xc(n,d) * rsqrt(var(n) + 1e-5) * gamma(d) + beta(d)\n}";
// mx is read by T at a reduction variable: T's rows are not mx's rows.
const char* kNotRowLocal =
    "def f(float(N,D) X) -> (O, T) {\n"
    "  mx(n) max=! X(n,d)\n  O(n,d) = X(n,d) - mx(n)\n  T(d) +=! X(n,d) * mx(n)\n}";
// A row reduction over a gathered row (an embedding's rows, normalised).
const char* kGather =
    "def g(float(E,D) LUT, int32(N) I) -> (O) {\n"
    "  s(n) +=! LUT(I(n), d)\n  O(n,d) = LUT(I(n), d) / s(n)\n}";

// A tensor argument: owns its data and shape.
struct Arg {
  std::vector<float> f;
  std::vector<int32_t> i;
  std::vector<int64_t> shape;
  DLTensor t{};
  Arg(std::vector<int64_t> s, bool integer) : shape(std::move(s)) {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    if (integer) i.assign(n, 0);
    else f.assign(n, 0.0f);
    t.data = integer ? static_cast<void*>(i.data()) : static_cast<void*>(f.data());
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = {static_cast<uint8_t>(integer ? kDLInt : kDLFloat), 32, 1};
    t.shape = shape.data();
  }
  Arg(const Arg&) = delete;
};

struct Outcome {
  int status = TC_OK;
  std::string message, description;
  std::vector<std::vector<float>> outputs;
};

Outcome run(const char* src, std::vector<Arg*> in, const std::vector<std::pair<std::string, std::string>>& options) {
  Outcome r;
  tc_program* p = nullptr;
  EXPECT_EQ(tc_define(&p, src), TC_OK) << tc_last_error_message();
  std::vector<DLTensor> ins;
  for (Arg* a : in) ins.push_back(a->t);
  tc_options* o = nullptr;
  tc_options_create(&o);
  tc_options_set(o, "cache", "off");
  // The pipeline's schedule is what these tests are about: a contraction stays on it unless a
  // test asks for the contraction route.
  tc_options_set(o, "cpu.contract", "0");
  for (const auto& [k, v] : options) EXPECT_EQ(tc_options_set(o, k.c_str(), v.c_str()), TC_OK) << k << "=" << v;
  tc_kernel* k = nullptr;
  EXPECT_EQ(tc_compile(&k, p, nullptr, ins.data(), ins.size(), o), TC_OK) << tc_last_error_message();
  const char* text = nullptr;
  tc_kernel_describe(k, &text);
  r.description = text ? text : "";
  tc_tensor_info outs[2] = {TC_STRUCT_INIT(tc_tensor_info), TC_STRUCT_INIT(tc_tensor_info)};
  size_t n = 2;
  EXPECT_EQ(tc_infer_outputs(p, nullptr, ins.data(), ins.size(), outs, &n), TC_OK);
  std::vector<std::unique_ptr<Arg>> out_args;
  for (size_t j = 0; j < n; ++j)
    out_args.push_back(std::make_unique<Arg>(std::vector<int64_t>(outs[j].shape, outs[j].shape + outs[j].ndim), false));
  std::vector<DLTensor> out_t;
  for (auto& a : out_args) out_t.push_back(a->t);
  r.status = tc_run(k, ins.data(), ins.size(), out_t.data(), out_t.size());
  if (r.status != TC_OK) r.message = tc_last_error_message();
  for (auto& a : out_args) r.outputs.push_back(a->f);
  tc_kernel_destroy(k);
  tc_options_destroy(o);
  tc_program_destroy(p);
  return r;
}

void fill(Arg& a, int seed) {
  for (size_t j = 0; j < a.f.size(); ++j) a.f[j] = static_cast<float>(((j * 37 + seed * 11) % 101) - 50) / 16.0f;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t j = 0; j < got.size(); ++j)
    ASSERT_NEAR(got[j], want[j], 1e-5 * (1 + std::fabs(want[j]))) << what << " at " << j;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const std::vector<std::string> kRowValues = {"auto", "0", "1", "3", "16", "4096"};

void check_every_rows_value(const char* src, std::vector<Arg*> in) {
  Outcome ref = run(src, in, {{"backend", "reference"}});
  ASSERT_EQ(ref.status, TC_OK) << ref.message;
  Outcome whole = run(src, in, {{"cpu.rows", "0"}});
  ASSERT_EQ(whole.status, TC_OK) << whole.message;
  EXPECT_FALSE(has(whole.description, "row block")) << whole.description;
  for (const std::string& rows : kRowValues)
    for (const char* threads : {"1", "3"}) {
      Outcome r = run(src, in, {{"cpu.rows", rows}, {"threads", threads}});
      std::string what = "cpu.rows=" + rows + " threads=" + threads + "\n" + r.description;
      ASSERT_EQ(r.status, TC_OK) << what << r.message;
      EXPECT_EQ(r.outputs, whole.outputs) << what;  // blocks change no order of evaluation
      expect_close(r.outputs[0], ref.outputs[0], what);
      if (rows != "0") {
        EXPECT_TRUE(has(r.description, "in blocks of")) << what;
        EXPECT_TRUE(has(r.description, "in each row block of out_O")) << what;
      }
    }
}

}  // namespace

TEST(RowBlocks, SoftmaxEveryRowsValueGivesTheUnblockedBits) {
  Arg x({37, 53}, false);
  fill(x, 1);
  check_every_rows_value(kSoftmax, {&x});
}

TEST(RowBlocks, LayernormEveryRowsValueGivesTheUnblockedBits) {
  Arg x({37, 53}, false), g({53}, false), b({53}, false);
  fill(x, 2);
  fill(g, 3);
  fill(b, 4);
  check_every_rows_value(kLayernorm, {&x, &g, &b});
}

TEST(RowBlocks, BlockSizesFollowTheKnobAndTheDefaultKeepsABlockInL1) {
  Arg x({128, 1000}, false);
  fill(x, 5);
  EXPECT_TRUE(has(run(kSoftmax, {&x}, {{"cpu.rows", "3"}}).description, "in blocks of 3 rows"));
  EXPECT_TRUE(has(run(kSoftmax, {&x}, {{"cpu.rows", "4096"}}).description, "in blocks of 128 rows"));
  // Softmax's max and sum, and layernorm's reductions, are split along the row: 4 rows of
  // 1000 or 1024 floats are 16 KiB of each temporary.
  std::string soft = run(kSoftmax, {&x}, {{"threads", "2"}}).description;
  EXPECT_TRUE(has(soft, "in blocks of 4 rows")) << soft;
  Arg y({128, 1024}, false), g({1024}, false), b({1024}, false);
  EXPECT_TRUE(has(run(kLayernorm, {&y, &g, &b}, {{"threads", "2"}}).description, "in blocks of 4 rows"));
}

// A float max=/min= along a row runs on ordered integer keys split into vector lanes
// (lower.cpp, ordered_key): the same values as the reference's one-at-a-time NaN rule, a NaN
// of either sign anywhere in the row (also in the guarded last vector) giving NaN, infinities
// kept, and max(-0, +0) = +0 (the one difference the keys allow: the reference's answer for a
// row of zeros depends on their order; == holds either way).
TEST(OrderedKeys, AFloatMaxAlongARowSplitsIntoLanesAndKeepsNaNsInfinitiesAndZeros) {
  const char* src = "def f(float(N,D) X) -> (M, L) {\n  M(n) max=! X(n,d)\n  L(n) min=! X(n,d)\n}";
  const int64_t D = 1000;
  Arg x({6, D}, false);
  fill(x, 3);
  float* row[6];
  for (int n = 0; n < 6; ++n) row[n] = x.f.data() + n * D;
  row[1][995] = NAN;  // in the last, guarded vector
  row[1][3] = -INFINITY;
  for (int64_t d = 0; d < D; ++d) row[2][d] = d % 3 ? -0.0f : 0.0f;
  for (int64_t d = 0; d < D; ++d) row[3][d] = -INFINITY;
  uint32_t negative_nan = 0xffc00000u;
  std::memcpy(&row[4][500], &negative_nan, sizeof negative_nan);
  row[5][0] = INFINITY;
  row[5][999] = -INFINITY;
  Outcome ref = run(src, {&x}, {{"backend", "reference"}});
  for (const char* threads : {"1", "2"}) {
    Outcome cpu = run(src, {&x}, {{"threads", threads}});
    ASSERT_EQ(cpu.status, TC_OK) << cpu.message;
    std::regex lanes("s0_M\\S*: vectorized along its contiguous reduction variable \\(rfactor 16 lanes, the last "
                     "vector guarded[^]*s1_L\\S*: vectorized along its contiguous reduction variable \\(rfactor");
    std::regex split("s0_M\\S*: vectorized along its contiguous reduction variable \\(rfactor");
    EXPECT_TRUE(std::regex_search(cpu.description, split)) << cpu.description;
    // 16 float lanes on AVX-512: 1000 is no multiple of 16, the last vector is guarded.
    EXPECT_TRUE(std::regex_search(cpu.description, lanes) || !has(cpu.description, "avx512")) << cpu.description;
    for (size_t o = 0; o < 2; ++o)
      for (int n = 0; n < 6; ++n) {
        float got = cpu.outputs[o][n], want = ref.outputs[o][n];
        if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << "output " << o << " row " << n;
        else EXPECT_EQ(got, want) << "output " << o << " row " << n;
      }
    EXPECT_TRUE(std::isnan(cpu.outputs[0][1]) && std::isnan(cpu.outputs[1][4]) && std::isnan(cpu.outputs[0][4]));
    EXPECT_EQ(cpu.outputs[0][3], -INFINITY);
    EXPECT_EQ(cpu.outputs[0][5], INFINITY);
    EXPECT_EQ(cpu.outputs[1][5], -INFINITY);
    EXPECT_FALSE(std::signbit(cpu.outputs[0][2])) << "max of -0 and +0";
    EXPECT_TRUE(std::signbit(cpu.outputs[1][2])) << "min of -0 and +0";
  }
}

TEST(RowBlocks, OnlyDefsWithRowReductionsAreBlocked) {
  Arg a({37, 29}, false), b({29, 53}, false);
  fill(a, 6);
  fill(b, 7);
  Outcome mm = run("def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", {&a, &b}, {});
  ASSERT_EQ(mm.status, TC_OK) << mm.message;
  EXPECT_FALSE(has(mm.description, "row block")) << mm.description;
}

TEST(RowBlocks, AProducerReadAtAReductionVariableStaysWhole) {
  Arg x({37, 53}, false);
  fill(x, 8);
  Outcome ref = run(kNotRowLocal, {&x}, {{"backend", "reference"}});
  Outcome cpu = run(kNotRowLocal, {&x}, {{"cpu.rows", "4"}});
  ASSERT_EQ(cpu.status, TC_OK) << cpu.message;
  EXPECT_FALSE(has(cpu.description, "row block")) << cpu.description;
  expect_close(cpu.outputs[0], ref.outputs[0], "O");
  expect_close(cpu.outputs[1], ref.outputs[1], "T");
}

TEST(RowBlocks, ACheckedGatherInsideARowReductionStillReportsABadIndex) {
  Arg lut({20, 33}, false), idx({37}, true);
  fill(lut, 9);
  for (size_t j = 0; j < lut.f.size(); ++j) lut.f[j] = std::fabs(lut.f[j]) + 1;  // no zero sums
  for (size_t j = 0; j < idx.i.size(); ++j) idx.i[j] = static_cast<int32_t>((j * 7) % 20);
  Outcome ref = run(kGather, {&lut, &idx}, {{"backend", "reference"}});
  Outcome cpu = run(kGather, {&lut, &idx}, {{"cpu.rows", "4"}});
  ASSERT_EQ(cpu.status, TC_OK) << cpu.message;
  EXPECT_TRUE(has(cpu.description, "in blocks of 4 rows")) << cpu.description;
  expect_close(cpu.outputs[0], ref.outputs[0], "O");
  idx.i[30] = 20;  // one past LUT's rows
  Outcome bad = run(kGather, {&lut, &idx}, {{"cpu.rows", "4"}});
  EXPECT_EQ(bad.status, TC_ERROR_RUNTIME);
  EXPECT_TRUE(has(bad.message, "I(n)")) << bad.message;
  EXPECT_TRUE(has(bad.message, "20")) << bad.message;
}

namespace {

const char* kMatmul = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }";
const char* kConv =
    "def conv(float(N,C,H,W) I, float(M,C,KH,KW) Wt) -> (O) {\n"
    "  O(n,m,h,w) +=! I(n,c,h+kh,w+kw) * Wt(m,c,kh,kw)\n}";

// Small integers: every order of summation gives the same bits.
void fill_integers(Arg& a, int seed) {
  for (size_t j = 0; j < a.f.size(); ++j) a.f[j] = static_cast<float>(((j * 7 + seed * 3) % 11)) - 5;
}

void check_reduction_blocks(const char* src, std::vector<Arg*> in, const std::vector<std::string>& kblocks,
                            const char* tile) {
  Outcome ref = run(src, in, {{"backend", "reference"}});
  ASSERT_EQ(ref.status, TC_OK) << ref.message;
  for (const std::string& kb : kblocks)
    for (const char* threads : {"1", "2"}) {
      Outcome r = run(src, in, {{"cpu.kblock", kb}, {"cpu.tile", tile}, {"threads", threads}});
      std::string what = "cpu.kblock=" + kb + " cpu.tile=" + tile + " threads=" + threads + "\n" + r.description;
      ASSERT_EQ(r.status, TC_OK) << what << r.message;
      EXPECT_EQ(r.outputs[0], ref.outputs[0]) << what;
      EXPECT_TRUE(has(r.description, "reduction in blocks of " + kb)) << what;
    }
}

}  // namespace

TEST(ReductionBlocks, MatmulGivesTheReferenceBitsForEveryBlock) {
  Arg a({37, 301}, false), b({301, 53}, false);
  fill_integers(a, 1);
  fill_integers(b, 2);
  check_reduction_blocks(kMatmul, {&a, &b}, {"1", "7", "64", "300"}, "32x16");
  check_reduction_blocks(kMatmul, {&a, &b}, {"50"}, "16x12");  // 12 rows: a register block of 8 and a guarded one
}

TEST(ReductionBlocks, ConvolutionSplitsItsOutermostReductionVariable) {
  Arg i({2, 9, 12, 21}, false), w({5, 9, 3, 3}, false);
  fill_integers(i, 3);
  fill_integers(w, 4);
  check_reduction_blocks(kConv, {&i, &w}, {"2", "4"}, "16x4");
}

// A register block's innermost reduction loop is unrolled when it has at most 4 steps (a 3x3
// convolution's kw), with and without reduction blocks, giving the reference's bits; not a
// 5-step one, nor a matmul's long k.
TEST(ReductionBlocks, AShortInnermostReductionLoopIsUnrolled) {
  Arg i({2, 9, 12, 21}, false), w3({5, 9, 3, 3}, false), w5({5, 9, 5, 5}, false);
  fill_integers(i, 3);
  fill_integers(w3, 4);
  fill_integers(w5, 5);
  const std::string unrolled = "innermost reduction loop unrolled";
  for (Arg* w : {&w3, &w5}) {
    Outcome ref = run(kConv, {&i, w}, {{"backend", "reference"}});
    ASSERT_EQ(ref.status, TC_OK) << ref.message;
    for (const char* kb : {"0", "2"}) {
      Outcome r = run(kConv, {&i, w}, {{"cpu.kblock", kb}, {"cpu.tile", "16x4"}});
      ASSERT_EQ(r.status, TC_OK) << r.message;
      EXPECT_EQ(r.outputs[0], ref.outputs[0]) << r.description;
      EXPECT_EQ(has(r.description, unrolled), w == &w3) << r.description;
    }
  }
  Arg a({37, 29}, false), b({29, 53}, false);
  fill_integers(a, 5);
  fill_integers(b, 6);
  EXPECT_FALSE(has(run(kMatmul, {&a, &b}, {}).description, unrolled));
}

TEST(ReductionBlocks, ZeroOrABlockAsLongAsTheReductionLeavesItWhole) {
  Arg a({37, 29}, false), b({29, 53}, false);
  fill_integers(a, 5);
  fill_integers(b, 6);
  for (const char* kb : {"0", "29", "65536"})
    EXPECT_FALSE(has(run(kMatmul, {&a, &b}, {{"cpu.kblock", kb}}).description, "reduction in blocks")) << kb;
}

// ---- panels (cpu.panel) ------------------------------------------------------------------------

namespace {

const char* kTransposedMatmul = "def tmm(float(M,K) A, float(N,K) B) -> (C) {\n  C(m,n) +=! A(m,k) * B(n,k)\n}";
const char* kBatchedMatmul =
    "def tbmm(float(B,N,M) X, float(B,K,M) Y) -> (Z) {\n  Z(b,n,k) +=! X(b,n,m) * Y(b,k,m)\n}";
// T is computed at root (read twice), so it can be copied.
const char* kProducers =
    "def f(float(M,K) A, float(K,N) B) -> (C, D) {\n"
    "  T(k,n) = B(k,n) * 2\n  C(m,n) +=! A(m,k) * T(k,n)\n  D(k,n) = T(k,n) + 1\n}";

// Every cpu.panel value, with and without reduction blocks, on 1 and 2 threads: the reference's
// bits (small integers), and the description names the panels asked for.
void check_every_panel(const char* src, std::vector<Arg*> in, const char* tile, const std::string& streamed,
                       const std::string& broadcast) {
  Outcome ref = run(src, in, {{"backend", "reference"}});
  ASSERT_EQ(ref.status, TC_OK) << ref.message;
  for (const char* panel : {"none", "streamed", "broadcast", "both"})
    for (const char* kb : {"0", "5"})
      for (const char* threads : {"1", "2"}) {
        Outcome r = run(src, in, {{"cpu.panel", panel}, {"cpu.kblock", kb}, {"cpu.tile", tile}, {"threads", threads}});
        std::string what = std::string("cpu.panel=") + panel + " cpu.kblock=" + kb + " threads=" + threads + "\n" +
                           r.description;
        ASSERT_EQ(r.status, TC_OK) << what << r.message;
        for (size_t o = 0; o < ref.outputs.size(); ++o) EXPECT_EQ(r.outputs[o], ref.outputs[o]) << what;
        std::string p = panel;
        EXPECT_EQ(has(r.description, streamed + " in panels,") || has(r.description, streamed + " in panels\n"),
                  p == "streamed" || p == "both")
            << what;
        EXPECT_EQ(has(r.description, broadcast + " in panels (block dimension innermost)"),
                  p == "broadcast" || p == "both")
            << what;
      }
}

}  // namespace

TEST(Panels, MatmulGivesTheReferenceBitsWithEveryPanel) {
  Arg a({37, 29}, false), b({29, 53}, false);
  fill_integers(a, 1);
  fill_integers(b, 2);
  check_every_panel(kMatmul, {&a, &b}, "32x16", "B", "A");
}

TEST(Panels, TransposedAndBatchedMatmulCopyTheirPackedOperand) {
  Arg a({21, 19}, false), b({35, 19}, false);
  fill_integers(a, 3);
  fill_integers(b, 4);
  check_every_panel(kTransposedMatmul, {&a, &b}, "16x8", "B", "A");
  // The transposing copy is itself the panel: made per tile, by the thread that reads it, not
  // whole at root first (or per reduction block, guarded: 5 is not a multiple of its 8x8 tiles).
  for (const char* kb : {"0", "5"}) {
    Outcome r = run(kTransposedMatmul, {&a, &b}, {{"cpu.panel", "streamed"}, {"cpu.kblock", kb}, {"cpu.tile", "16x8"}});
    ASSERT_EQ(r.status, TC_OK) << r.message;
    EXPECT_TRUE(std::regex_search(r.description, std::regex(std::string("packed_B[^:]*: copy with dimension 0 innermost, per ") +
                                                           (kb[0] == '0' ? "tile of out_C" : "reduction block of s0_C"))))
        << r.description;
  }
  Arg x({3, 13, 11}, false), y({3, 18, 11}, false);
  fill_integers(x, 5);
  fill_integers(y, 6);
  check_every_panel(kBatchedMatmul, {&x, &y}, "16x4", "Y", "X");
}

TEST(Panels, ConvolutionCopiesItsInputAndItsWeights) {
  Arg i({2, 9, 12, 21}, false), w({5, 9, 3, 3}, false);
  fill_integers(i, 7);
  fill_integers(w, 8);
  check_every_panel(kConv, {&i, &w}, "16x4", "I", "Wt");
}

// cpu.flatten: a valid convolution computed at the positions h*W + w of its input's rows
// (flatten_rows.h) sums the same terms in the same order: the bits of the direct stage, under
// every knob that changes its blocks, with the input's rows a row apart or not (then the
// general variant runs, unflattened).
TEST(FlattenedRows, AConvolutionOverFlattenedRowsGivesTheBitsOfTheDirectOne) {
  Arg i({2, 24, 12, 20}, false), w({4, 24, 3, 3}, false);
  fill(i, 11);
  fill(w, 12);
  Outcome direct = run(kConv, {&i, &w}, {{"cpu.flatten", "0"}});
  ASSERT_EQ(direct.status, TC_OK) << direct.message;
  EXPECT_FALSE(has(direct.description, "flattened")) << direct.description;
  Outcome ref = run(kConv, {&i, &w}, {{"backend", "reference"}});
  expect_close(direct.outputs[0], ref.outputs[0], "direct");
  // 18 output columns in vectors of 16 (AVX-512) or 8 (AVX2): 32 or 24 computed; rows of 20
  // flattened (auto: 216 steps times 12/18 or 4/18 lanes saved an element, past
  // flatten_rows.cpp's 32 on either).
  Outcome automatic = run(kConv, {&i, &w}, {});
  EXPECT_TRUE(has(automatic.description, "over flattened rows of 20")) << automatic.description;
  EXPECT_EQ(automatic.outputs[0], direct.outputs[0]);
  const std::vector<std::vector<std::pair<std::string, std::string>>> variants = {
      {{"cpu.flatten", "1"}},
      {{"cpu.flatten", "1"}, {"cpu.tile", "16x2"}, {"threads", "3"}},
      {{"cpu.flatten", "1"}, {"cpu.tile", "64x64"}, {"cpu.unroll", "6"}},
      {{"cpu.flatten", "1"}, {"cpu.kblock", "2"}, {"cpu.panel", "both"}},
      {{"cpu.flatten", "1"}, {"cpu.vectorize", "1"}, {"cpu.parallel", "none"}},
  };
  for (const auto& options : variants) {
    Outcome r = run(kConv, {&i, &w}, options);
    ASSERT_EQ(r.status, TC_OK) << r.message;
    EXPECT_TRUE(has(r.description, "over flattened rows of 20")) << r.description;
    EXPECT_EQ(r.outputs[0], direct.outputs[0]) << r.description;
  }
  // The same values with the rows 24 floats apart: the rows do not adjoin.
  Arg padded({2, 24, 12, 24}, false);
  for (size_t p = 0; p < 2 * 24 * 12; ++p)
    for (size_t x = 0; x < 20; ++x) padded.f[p * 24 + x] = i.f[p * 20 + x];
  int64_t strides[4] = {24 * 12 * 24, 12 * 24, 24, 1};
  padded.shape[3] = 20;
  padded.t.strides = strides;
  Outcome apart = run(kConv, {&padded, &w}, {{"cpu.flatten", "1"}});
  ASSERT_EQ(apart.status, TC_OK) << apart.message;
  EXPECT_EQ(apart.outputs[0], direct.outputs[0]);
}

// Only a valid convolution's rows are flattened: not a strided one, not one that reads
// another tensor at its row alone (P(h, kw)), not an accumulation into earlier values, not
// rows whose last vector leaves few lanes unused, nor a short reduction (auto).
TEST(FlattenedRows, OnlyAValidConvolutionsRowsAreFlattened) {
  Arg i({2, 5, 12, 20}, false), w({4, 5, 3, 3}, false), pos({12, 3}, false);
  fill(i, 13);
  fill(w, 14);
  fill(pos, 15);
  const char* strided =
      "def conv(float(N,C,H,W) I, float(M,C,KH,KW) Wt) -> (O) {\n"
      "  O(n,m,h,w) +=! I(n,c,2*h+kh,2*w+kw) * Wt(m,c,kh,kw) where h in 0:5, w in 0:9\n}";
  const char* row_weights =
      "def conv(float(N,C,H,W) I, float(M,C,KH,KW) Wt, float(H,KW) P) -> (O) {\n"
      "  O(n,m,h,w) +=! I(n,c,h+kh,w+kw) * Wt(m,c,kh,kw) * P(h,kw) where h in 0:10, w in 0:18\n}";
  const char* accumulated =
      "def conv(float(N,C,H,W) I, float(M,C,KH,KW) Wt) -> (O) {\n"
      "  O(n,m,h,w) = 1.0 where n in 0:N, m in 0:M, h in 0:10, w in 0:18\n"
      "  O(n,m,h,w) += I(n,c,h+kh,w+kw) * Wt(m,c,kh,kw)\n}";
  for (const char* src : {strided, accumulated}) {
    Outcome r = run(src, {&i, &w}, {{"cpu.flatten", "1"}});
    ASSERT_EQ(r.status, TC_OK) << r.message;
    EXPECT_FALSE(has(r.description, "flattened")) << r.description;
  }
  Outcome r = run(row_weights, {&i, &w, &pos}, {{"cpu.flatten", "1"}});
  ASSERT_EQ(r.status, TC_OK) << r.message;
  EXPECT_FALSE(has(r.description, "flattened")) << r.description;
  // 32 output columns fill two vectors of 16: auto leaves them; 1 flattens them.
  Arg wide({1, 3, 6, 34}, false), w3({2, 3, 3, 3}, false);
  fill(wide, 16);
  fill(w3, 17);
  EXPECT_FALSE(has(run(kConv, {&wide, &w3}, {}).description, "flattened"));
  EXPECT_TRUE(has(run(kConv, {&wide, &w3}, {{"cpu.flatten", "1"}}).description, "flattened"));
  // 5 channels x 9: 45 steps, too few to pay for the copy back (auto); 1 flattens them.
  EXPECT_FALSE(has(run(kConv, {&i, &w}, {}).description, "flattened"));
  EXPECT_TRUE(has(run(kConv, {&i, &w}, {{"cpu.flatten", "1"}}).description, "flattened"));
}

// cpu.transpose: a reduction none of whose reads is contiguous in its last written variable,
// computed with its last two dimensions swapped and copied back (transpose_result.h), sums the
// same terms in the same order: the bits of the untransposed stage, under every knob that
// changes its blocks and tiles, with a consumer fused into the copy back (fcrelu's bias and
// ReLU), batched, with extents under the 8x8 tiles, and with strided inputs (the general
// variant).
const char* kTmm = "def tmm(float(M,K) A, float(N,K) B) -> (C) {\n  C(m,n) +=! A(m,k) * B(n,k)\n}";

void check_transposed(const char* src, std::vector<Arg*> in, bool automatic) {
  Outcome plain = run(src, in, {{"cpu.transpose", "0"}});
  ASSERT_EQ(plain.status, TC_OK) << plain.message;
  EXPECT_FALSE(has(plain.description, "s0_transpose_")) << plain.description;
  Outcome ref = run(src, in, {{"backend", "reference"}});
  expect_close(plain.outputs[0], ref.outputs[0], "untransposed");
  Outcome chosen = run(src, in, {});
  EXPECT_EQ(has(chosen.description, "s0_transpose_"), automatic) << chosen.description;
  EXPECT_EQ(chosen.outputs, plain.outputs) << chosen.description;
  const std::vector<std::vector<std::pair<std::string, std::string>>> variants = {
      {{"cpu.transpose", "1"}},
      {{"cpu.transpose", "1"}, {"cpu.rows", "8"}, {"threads", "3"}},
      {{"cpu.transpose", "1"}, {"cpu.rows", "0"}},
      {{"cpu.transpose", "1"}, {"cpu.rows", "13"}, {"cpu.tile", "16x4"}},
      {{"cpu.transpose", "1"}, {"cpu.rows", "3"}},  // fewer than a tile's: blocks of 8
      {{"cpu.transpose", "1"}, {"cpu.tile", "64x64"}, {"cpu.unroll", "6"}},
      {{"cpu.transpose", "1"}, {"cpu.kblock", "8"}, {"cpu.panel", "both"}},
      {{"cpu.transpose", "1"}, {"cpu.vectorize", "1"}, {"cpu.parallel", "none"}},
      {{"cpu.transpose", "1"}, {"cpu.fuse", "0"}, {"cpu.inline", "0"}},
  };
  for (const auto& options : variants) {
    Outcome r = run(src, in, options);
    std::string what;
    for (const auto& [k, v] : options) what += k + "=" + v + " ";
    ASSERT_EQ(r.status, TC_OK) << what << r.message;
    EXPECT_TRUE(has(r.description, "s0_transpose_")) << what << r.description;
    EXPECT_EQ(r.outputs, plain.outputs) << what << r.description;
  }
}

TEST(TransposedResults, ATransposedProductGivesTheBitsOfTheUntransposedOne) {
  // B (100 x 37) copied for vectors along n; A (12 x 37) and C (12 x 100) transposed: auto.
  Arg a({12, 37}, false), b({100, 37}, false);
  fill(a, 21);
  fill(b, 22);
  check_transposed(kTmm, {&a, &b}, true);
  Outcome r = run(kTmm, {&a, &b}, {});
  EXPECT_TRUE(has(r.description, "8x8 tiles transposed in vector registers")) << r.description;
  EXPECT_TRUE(has(r.description, "inside a copy in each block of")) << r.description;
}

TEST(TransposedResults, AFusedBiasAndReluBatchesAndSmallExtents) {
  const char* fcrelu =
      "def fcrelu(float(B,K) I, float(N,K) W, float(N) bias) -> (O) {\n"
      "  O(b,n) +=! I(b,k) * W(n,k)\n  O(b,n) = fmax(O(b,n) + bias(n), 0)\n}";
  Arg i({20, 64}, false), w({200, 64}, false), bias({200}, false);
  fill(i, 23);
  fill(w, 24);
  fill(bias, 25);
  check_transposed(fcrelu, {&i, &w, &bias}, true);
  const char* tbmm = "def tbmm(float(B,N,K) X, float(B,M,K) Y) -> (Z) {\n  Z(b,n,m) +=! X(b,n,k) * Y(b,m,k)\n}";
  Arg x({3, 17, 19}, false), y({3, 41, 19}, false);  // Y is the larger: auto leaves it
  fill(x, 26);
  fill(y, 27);
  check_transposed(tbmm, {&x, &y}, false);
  // Under the 8x8 tiles (5 rows): the copy back is computed whole, then transposed.
  Arg small_a({5, 16}, false), small_b({30, 16}, false);
  fill(small_a, 28);
  fill(small_b, 29);
  check_transposed(kTmm, {&small_a, &small_b}, true);
  // The result read twice: the copy back is a stage of its own.
  const char* twice =
      "def f(float(M,K) A, float(N,K) B) -> (C, D) {\n  T(m,n) +=! A(m,k) * B(n,k)\n"
      "  C(m,n) = T(m,n) + 1\n  D(m,n) = T(m,n) * 2\n}";
  Arg ta({12, 37}, false), tb({100, 37}, false);
  fill(ta, 30);
  fill(tb, 31);
  check_transposed(twice, {&ta, &tb}, true);
  // B's rows 40 floats apart: the general variant, transposed as well.
  Arg padded({100, 40}, false);
  for (size_t r = 0; r < 100; ++r)
    for (size_t k = 0; k < 37; ++k) padded.f[r * 40 + k] = tb.f[r * 37 + k];
  int64_t strides[2] = {40, 1};
  padded.shape[1] = 37;
  padded.t.strides = strides;
  check_transposed(kTmm, {&ta, &padded}, true);
}

TEST(Panels, AStageComputedOnItsOwnIsCopiedAnInlinedOneIsNot) {
  Arg a({9, 40}, false), b({40, 33}, false);
  fill_integers(a, 9);
  fill_integers(b, 10);
  check_every_panel(kProducers, {&a, &b}, "16x4", "T", "A");
  const char* inlined = "def f(float(M,K) A, float(K,N) B) -> (C) {\n  T(k,n) = B(k,n) * 2\n  C(m,n) +=! A(m,k) * T(k,n)\n}";
  Outcome r = run(inlined, {&a, &b}, {{"cpu.panel", "both"}, {"cpu.inline", "1"}});
  ASSERT_EQ(r.status, TC_OK) << r.message;
  EXPECT_FALSE(has(r.description, "T in panels")) << r.description;
  EXPECT_TRUE(has(r.description, "A in panels")) << r.description;
}

TEST(Panels, AReductionOperandIsReadInItsHostNotCopied) {
  const char* src =
      "def f(float(M,K) A, float(K,N,R) B) -> (C) {\n  T(k,n) +=! B(k,n,r)\n  C(m,n) +=! A(m,k) * T(k,n)\n}";
  Arg a({9, 40}, false), b({40, 33, 3}, false);
  fill_integers(a, 5);
  fill_integers(b, 6);
  Outcome ref = run(src, {&a, &b}, {{"backend", "reference"}});
  ASSERT_EQ(ref.status, TC_OK) << ref.message;
  for (const char* panel : {"streamed", "broadcast", "both"}) {
    Outcome r = run(src, {&a, &b}, {{"cpu.panel", panel}});
    ASSERT_EQ(r.status, TC_OK) << panel << ": " << r.message;
    EXPECT_EQ(r.outputs[0], ref.outputs[0]) << panel << "\n" << r.description;
    EXPECT_FALSE(has(r.description, "T in panels")) << r.description;
  }
}

// cpu.panel=auto, the default: the cache model copies the streamed operand into
// panels where a tile reads narrow strips of long rows and the strips overflow half of L1 (B
// of 1024 x 256: strips of at most 48 floats x 1024 steps, 96 KiB or more, rows of 256), and
// then gives the tile more rows than the default 32 (here all 40); not where the rows are
// hardly wider than a tile (48), nor where the reduction is short (16 steps: strips of 3 KiB).
// The reference's bits in every case.
TEST(Panels, AutoCopiesTheStreamedOperandWhereATileReadsNarrowStripsOfLongRows) {
  std::regex rows_of_tiles("tiles [0-9]+x40 ");
  struct Case {
    std::vector<int64_t> a, b;
    bool panels;
  } cases[] = {{{40, 1024}, {1024, 256}, true}, {{40, 1024}, {1024, 48}, false}, {{40, 16}, {16, 1024}, false}};
  for (const Case& c : cases) {
    Arg a(c.a, false), b(c.b, false);
    fill_integers(a, 1);
    fill_integers(b, 2);
    Outcome ref = run(kMatmul, {&a, &b}, {{"backend", "reference"}});
    ASSERT_EQ(ref.status, TC_OK) << ref.message;
    Outcome r = run(kMatmul, {&a, &b}, {{"threads", "2"}});
    std::string what = "B " + std::to_string(c.b[0]) + "x" + std::to_string(c.b[1]) + "\n" + r.description;
    ASSERT_EQ(r.status, TC_OK) << what << r.message;
    EXPECT_EQ(r.outputs[0], ref.outputs[0]) << what;
    EXPECT_EQ(has(r.description, "B in panels"), c.panels) << what;
    EXPECT_EQ(std::regex_search(r.description, rows_of_tiles), c.panels) << what;
    EXPECT_FALSE(has(r.description, "A in panels")) << what;  // auto never copies the broadcast operand
    EXPECT_TRUE(std::regex_search(r.description, std::regex("\ncaches: L1d [0-9]+ KiB, L2 [0-9]+ KiB(, L3 [0-9]+ MiB)? \\((sysconf|sysfs|assumed)\\)\n")))
        << what;  // the model's sizes
    Outcome none = run(kMatmul, {&a, &b}, {{"threads", "2"}, {"cpu.panel", "none"}});
    ASSERT_EQ(none.status, TC_OK) << none.message;
    EXPECT_EQ(none.outputs[0], ref.outputs[0]) << none.description;
    EXPECT_FALSE(has(none.description, "in panels")) << none.description;
    // The default rows without panels: 32 with AVX-512's 16 lanes, 24 with AVX2's 8.
    EXPECT_TRUE(has(none.description, has(none.description, "(vector 16)") ? "x32 " : "x24 ")) << none.description;
  }
}

TEST(Panels, AGatheredOperandIsNotCopied) {
  const char* lut = "def lut(float(E,D) LUT, int32(B,L) I) -> (O) {\n  O(b,d) +=! LUT(I(b,l), d)\n}";
  Arg table({50, 40}, false), idx({12, 7}, true);
  fill_integers(table, 11);
  for (size_t j = 0; j < idx.i.size(); ++j) idx.i[j] = static_cast<int32_t>((j * 13) % 50);
  Outcome ref = run(lut, {&table, &idx}, {{"backend", "reference"}});
  ASSERT_EQ(ref.status, TC_OK) << ref.message;
  for (const char* checked : {"0", "1"}) {
    Outcome r = run(lut, {&table, &idx}, {{"cpu.panel", "both"}, {"checked", checked}});
    ASSERT_EQ(r.status, TC_OK) << r.message;
    EXPECT_EQ(r.outputs[0], ref.outputs[0]) << r.description;
    EXPECT_FALSE(has(r.description, "LUT in panels")) << r.description;  // the indices I may be
  }
}

// Compiles and runs `src` with `threads`, its two outputs (shapes p_shape, o_shape) filled
// with 7 first: what tc_run returned, its message, and the outputs as it left them.
struct SentinelRun {
  int status = TC_OK;
  std::string message;
  std::vector<float> p, o;
};
SentinelRun run_on_sentinels(tc_program* prog, DLTensor* ins, size_t n, const std::vector<int64_t>& p_shape,
                             const std::vector<int64_t>& o_shape, const char* threads) {
  SentinelRun r;
  tc_options* opts = nullptr;
  tc_options_create(&opts);
  tc_options_set(opts, "cache", "off");
  tc_options_set(opts, "threads", threads);
  tc_kernel* k = nullptr;
  EXPECT_EQ(tc_compile(&k, prog, nullptr, ins, n, opts), TC_OK) << tc_last_error_message();
  Arg out_p(p_shape, false), out_o(o_shape, false);
  out_p.f.assign(out_p.f.size(), 7.0f);
  out_o.f.assign(out_o.f.size(), 7.0f);
  DLTensor outs[] = {out_p.t, out_o.t};
  r.status = k ? tc_run(k, ins, n, outs, 2) : TC_ERROR_INTERNAL;
  r.message = tc_last_error_message();
  r.p = out_p.f;
  r.o = out_o.f;
  tc_kernel_destroy(k);
  tc_options_destroy(opts);
  return r;
}

// Range checks (src/backends/cpu/lower.cpp, check_stage; the checks sink is the pipeline's
// first output): every check runs before any statement, so a bad index leaves every output as
// the caller left it, also the first output, which a statement without a check writes (before
// the sink came first, Halide computed P before the checks its second output needed).
TEST(Checks, ABadIndexLeavesEveryOutputUntouched) {
  const char* src =
      "def g(float(E,D) LUT, int32(B,L) I, float(B,D) X) -> (P, O) {\n"
      "  P(b,d) = X(b,d) * 2\n  O(b,d) +=! LUT(I(b,l), d)\n}";
  Arg lut({30, 40}, false), idx({9, 21}, true), x({9, 40}, false);
  fill(lut, 3);
  fill(x, 4);
  for (size_t j = 0; j < idx.i.size(); ++j) idx.i[j] = static_cast<int32_t>((j * 7) % 30);
  idx.i[100] = 30;  // one past LUT's rows, at b=4, l=16
  tc_program* p = nullptr;
  ASSERT_EQ(tc_define(&p, src), TC_OK) << tc_last_error_message();
  DLTensor ins[] = {lut.t, idx.t, x.t};
  for (const char* threads : {"1", "2"}) {
    SentinelRun r = run_on_sentinels(p, ins, 3, {9, 40}, {9, 40}, threads);
    EXPECT_EQ(r.status, TC_ERROR_RUNTIME);
    EXPECT_TRUE(has(r.message, "index 30")) << r.message;
    EXPECT_TRUE(has(r.message, "b=4, l=16")) << r.message;
    EXPECT_EQ(r.o, std::vector<float>(r.o.size(), 7.0f)) << "threads=" << threads;
    EXPECT_EQ(r.p, std::vector<float>(r.p.size(), 7.0f)) << "threads=" << threads;
  }
  tc_program_destroy(p);
}

// Fusion (schedule/scheduler.cpp, last_of_inlined_chain): a reduction whose pointwise consumer is itself
// inlined into the output's copy is computed tile by tile inside that copy, so the bias and
// ReLU run in the tile's loop, not in a second pass over the whole output.
TEST(Fusion, AnInlinedPointwiseConsumerHandsTheTileLoopsToItsConsumer) {
  const char* fcrelu =
      "def fcrelu(float(B,K) I, float(N,K) W, float(N) bias) -> (O) {\n"
      "  O(b,n) +=! I(b,k) * W(n,k)\n  O(b,n) = fmax(O(b,n) + bias(n), 0)\n}";
  // Three pointwise statements after the reduction: the chain goes on to the output.
  const char* chain =
      "def f(float(B,K) I, float(N,K) W, float(N) bias) -> (O) {\n"
      "  O(b,n) +=! I(b,k) * W(n,k)\n  O(b,n) = O(b,n) + bias(n)\n  O(b,n) = fmax(O(b,n), 0)\n"
      "  O(b,n) = O(b,n) * 3\n}";
  Arg i({19, 23}, false), w({37, 23}, false), bias({37}, false);
  fill_integers(i, 1);
  fill_integers(w, 2);
  fill_integers(bias, 3);
  for (const char* src : {fcrelu, chain}) {
    Outcome ref = run(src, {&i, &w, &bias}, {{"backend", "reference"}});
    ASSERT_EQ(ref.status, TC_OK) << ref.message;
    for (const char* threads : {"1", "2"}) {
      Outcome r = run(src, {&i, &w, &bias}, {{"threads", threads}});
      ASSERT_EQ(r.status, TC_OK) << r.message;
      EXPECT_EQ(r.outputs[0], ref.outputs[0]) << r.description;
      EXPECT_TRUE(std::regex_search(r.description, std::regex(R"(s0_O(\$\d+)?: register-blocked .* inside out_O)")))
          << r.description;
      // Halide names a Func again in one process with a suffix ($4): s1_O$4.
      EXPECT_TRUE(std::regex_search(r.description, std::regex(R"(s1_O(\$\d+)?: inlined into its consumer)")))
          << r.description;
      EXPECT_FALSE(has(r.description, "computed at root")) << r.description;
    }
    // Nothing inlined: the reduction's own consumer hosts it, as before.
    Outcome kept = run(src, {&i, &w, &bias}, {{"cpu.inline", "0"}});
    ASSERT_EQ(kept.status, TC_OK) << kept.message;
    EXPECT_EQ(kept.outputs[0], ref.outputs[0]) << kept.description;
    EXPECT_TRUE(has(kept.description, "inside s1_O")) << kept.description;
  }
}

TEST(Fusion, AConsumerReadTwiceKeepsTheTileLoops) {
  // P is read by two statements, so it is computed on its own, hosting the reduction.
  const char* src =
      "def f(float(B,K) I, float(N,K) W) -> (O, Q) {\n"
      "  T(b,n) +=! I(b,k) * W(n,k)\n  P(b,n) = fmax(T(b,n), 0)\n  O(b,n) = P(b,n) + 1\n  Q(b,n) = P(b,n) * 2\n}";
  Arg i({19, 23}, false), w({37, 23}, false);
  fill_integers(i, 4);
  fill_integers(w, 5);
  Outcome ref = run(src, {&i, &w}, {{"backend", "reference"}});
  ASSERT_EQ(ref.status, TC_OK) << ref.message;
  Outcome r = run(src, {&i, &w}, {});
  ASSERT_EQ(r.status, TC_OK) << r.message;
  EXPECT_EQ(r.outputs, ref.outputs) << r.description;
  EXPECT_TRUE(has(r.description, "inside s1_P")) << r.description;
}

// ---- scatters: computed left-hand side subscripts --------------------------------
// A scatter's update is never scheduled (schedule/scheduler.cpp): it runs serially, so points that hit
// one element all add, whatever the knobs say. Every knob at both ends of its range (and
// every thread count) gives the reference's values; the histogram's bins are hit thousands of
// times each, and its init is long enough (40000 elements) to run in parallel chunks.
namespace {

const char* kEmbeddingGrad =
    "def g(float(E,D) LUT, int32(B,L) I, float(B,D) dO) -> (float(E,D) dLUT) {\n  dLUT(I(b,l), d) +=! dO(b,d)\n}";
const char* kConv2dInputGrad =
    "def t(float(N,M,OH,OW) dO, float(M,C,KH,KW) W, float(N,C,H,WW) I) -> (float(N,C,H,WW) dI) {\n"
    "  dI(n, c, h + kh, w + kw) +=! dO(n, m, h, w) * W(m, c, kh, kw)\n}";
const char* kHistogram =
    "def h(int32(K) I, float(K) V, float(E) Like) -> (float(E) H, float(E) C) {\n"
    "  H(I(k)) +=! V(k)\n  C(I(k)) +=! 1\n}";
// A matmul feeding a scatter feeding a row reduction: fusion, inlining, row blocks and panels
// all meet a Scatter stage.
const char* kMixed =
    "def m(float(N,K) A, float(K,D) Bm, int32(N) I, float(E,D) Like) -> (float(E,D) S, T) {\n"
    "  P(n,d) +=! A(n,k) * Bm(k,d)\n  S(I(n), d) +=! P(n, d)\n  S(e, d) += 1 where e in 0:E, d in 0:D\n"
    "  T(e) +=! S(e, d) * 2\n}";

const std::vector<std::pair<std::string, std::string>> kKnobExtremes = {
    {"cpu.vectorize", "1"}, {"cpu.vectorize", "64"}, {"cpu.tile", "1x1"},   {"cpu.tile", "4096x4096"},
    {"cpu.unroll", "1"},    {"cpu.unroll", "32"},    {"cpu.parallel", "none"}, {"cpu.parallel", "outer"},
    {"cpu.inline", "0"},    {"cpu.inline", "1"},     {"cpu.pack", "0"},      {"cpu.pack", "1"},
    {"cpu.fuse", "0"},      {"cpu.fuse", "1"},       {"cpu.kblock", "0"},    {"cpu.kblock", "65536"},
    {"cpu.rows", "0"},      {"cpu.rows", "4096"},    {"cpu.panel", "none"},  {"cpu.panel", "both"},
    {"threads", "1"},       {"threads", "16"},       {"checked", "0"}};

// Values in [-3.125, 3.125] (fill() computes in size_t, so half of its values are near 1e18:
// sums of their products would overflow to inf here).
void fill_small(Arg& a, int seed) {
  for (size_t j = 0; j < a.f.size(); ++j)
    a.f[j] = static_cast<float>(static_cast<int64_t>((j * 37 + static_cast<size_t>(seed) * 11) % 101) - 50) / 16.0f;
}

void check_every_knob_extreme(const char* src, std::vector<Arg*> in) {
  Outcome ref = run(src, in, {{"backend", "reference"}});
  ASSERT_EQ(ref.status, TC_OK) << ref.message;
  for (const auto& [key, value] : kKnobExtremes) {
    Outcome r = run(src, in, {{key, value}, {"threads", key == "threads" ? value : "2"}});
    std::string what = key + "=" + value + "\n" + r.description;
    ASSERT_EQ(r.status, TC_OK) << what << r.message;
    ASSERT_EQ(r.outputs.size(), ref.outputs.size());
    for (size_t o = 0; o < r.outputs.size(); ++o) expect_close(r.outputs[o], ref.outputs[o], what);
  }
  // Everything at once, both ways.
  std::vector<std::pair<std::string, std::string>> low, high;
  for (size_t k = 0; k + 1 < kKnobExtremes.size(); k += 2) {
    low.push_back(kKnobExtremes[k]);
    high.push_back(kKnobExtremes[k + 1]);
  }
  for (const auto& all : {low, high}) {
    Outcome r = run(src, in, all);
    ASSERT_EQ(r.status, TC_OK) << r.message;
    for (size_t o = 0; o < r.outputs.size(); ++o) expect_close(r.outputs[o], ref.outputs[o], r.description);
  }
}

}  // namespace

TEST(Scatter, EmbeddingGradientUnderEveryKnobExtreme) {
  Arg lut({37, 40}, false), idx({9, 21}, true), d_o({9, 40}, false);
  fill_small(d_o, 5);
  for (size_t j = 0; j < idx.i.size(); ++j) idx.i[j] = static_cast<int32_t>((j * 7) % 5 == 0 ? 3 : (j * 11) % 37);
  check_every_knob_extreme(kEmbeddingGrad, {&lut, &idx, &d_o});
}

TEST(Scatter, Conv2dInputGradientUnderEveryKnobExtreme) {
  Arg d_o({2, 3, 6, 7}, false), w({3, 4, 3, 2}, false), i({2, 4, 8, 8}, false);
  fill_small(d_o, 1);
  fill_small(w, 2);
  check_every_knob_extreme(kConv2dInputGrad, {&d_o, &w, &i});
}

TEST(Scatter, HistogramUnderEveryKnobExtreme) {
  Arg idx({60000}, true), v({60000}, false), like({40000}, false);
  for (size_t j = 0; j < idx.i.size(); ++j) idx.i[j] = static_cast<int32_t>(j % 3 == 0 ? (j * 13) % 40000 : j % 64);
  for (size_t j = 0; j < v.f.size(); ++j) v.f[j] = 1.0f + static_cast<float>(j % 4);  // sums stay exact
  Outcome ref = run(kHistogram, {&idx, &v, &like}, {{"backend", "reference"}});
  ASSERT_EQ(ref.status, TC_OK) << ref.message;
  EXPECT_EQ(ref.outputs[1][5], 625.0f);  // the j with j % 64 == 5 that are not multiples of 3
  check_every_knob_extreme(kHistogram, {&idx, &v, &like});
}

TEST(Scatter, BetweenAReductionAndARowReductionUnderEveryKnobExtreme) {
  Arg a({24, 16}, false), b({16, 20}, false), idx({24}, true), like({9, 20}, false);
  fill_small(a, 3);
  fill_small(b, 4);
  for (size_t j = 0; j < idx.i.size(); ++j) idx.i[j] = static_cast<int32_t>((j * 5) % 9);
  check_every_knob_extreme(kMixed, {&a, &b, &idx, &like});
}

// A scatter's update runs in parallel over its outermost variable when that is exactly one of
// its written subscripts (b in dX(b, 2*i + k): different b never write one element), with the
// bits of the serial order; not over an inner one (d in dLUT(I(b,l), d), under b), not over a
// gather alone (H(I(k))), not with cpu.parallel=none.
TEST(Scatter, ParallelOnlyOverAPlainOutermostVariable) {
  const char* pool_grad =
      "def p(float(B,O,K) dO, float(B,N) Like) -> (float(B,N) dX) {\n"
      "  dX(b, n) = 0.0 where b in 0:B, n in 0:N\n  dX(b, 2*i + k) += dO(b, i, k)\n}";
  Arg d_o({6, 10, 2}, false), like({6, 20}, false);
  fill_small(d_o, 5);
  Outcome ref = run(pool_grad, {&d_o, &like}, {{"backend", "reference"}});
  Outcome par = run(pool_grad, {&d_o, &like}, {{"threads", "2"}});
  Outcome none = run(pool_grad, {&d_o, &like}, {{"threads", "2"}, {"cpu.parallel", "none"}});
  ASSERT_EQ(par.status, TC_OK) << par.message;
  EXPECT_TRUE(has(par.description, "update in parallel over")) << par.description;
  EXPECT_FALSE(has(none.description, "update in parallel over")) << none.description;
  EXPECT_EQ(par.outputs, ref.outputs);
  EXPECT_EQ(none.outputs, ref.outputs);
  Arg lut({37, 40}, false), idx({9, 21}, true), d_lut({9, 40}, false);
  for (size_t j = 0; j < idx.i.size(); ++j) idx.i[j] = static_cast<int32_t>((j * 11) % 37);
  Outcome emb = run(kEmbeddingGrad, {&lut, &idx, &d_lut}, {{"threads", "2"}});
  EXPECT_FALSE(has(emb.description, "update in parallel over")) << emb.description;
  Arg hidx({6000}, true), v({6000}, false), hlike({400}, false);
  for (size_t j = 0; j < hidx.i.size(); ++j) hidx.i[j] = static_cast<int32_t>((j * 13) % 400);
  Outcome hist = run(kHistogram, {&hidx, &v, &hlike}, {{"threads", "2"}});
  EXPECT_FALSE(has(hist.description, "update in parallel over")) << hist.description;
}

// A bad written index (checked=1) is reported, naming the write, before any statement writes
// an output: the check runs in the checks sink, the pipeline's first output.
TEST(Scatter, ABadWrittenIndexLeavesEveryOutputUntouched) {
  const char* src =
      "def g(float(B,D) X, int32(B,L) I, float(E,D) Like) -> (P, float(E,D) O) {\n"
      "  P(b,d) = X(b,d) * 2\n  O(I(b,l), d) +=! X(b,d)\n}";
  for (int bad : {30, -1}) {
    Arg x({9, 40}, false), idx({9, 21}, true), like({30, 40}, false);
    fill_small(x, 4);
    for (size_t j = 0; j < idx.i.size(); ++j) idx.i[j] = static_cast<int32_t>((j * 7) % 30);
    idx.i[100] = bad;  // at b=4, l=16
    tc_program* p = nullptr;
    ASSERT_EQ(tc_define(&p, src), TC_OK) << tc_last_error_message();
    DLTensor ins[] = {x.t, idx.t, like.t};
    for (const char* threads : {"1", "2"}) {
      SentinelRun r = run_on_sentinels(p, ins, 3, {9, 40}, {30, 40}, threads);
      EXPECT_EQ(r.status, TC_ERROR_RUNTIME);
      EXPECT_TRUE(has(r.message, "g:3:3: error: 'O(I(b, l), d)' writes 'O' out of bounds: index " + std::to_string(bad) +
                                     " in dimension 0, whose extent is 30 (at b=4, l=16)"))
          << r.message;
      EXPECT_EQ(r.p, std::vector<float>(r.p.size(), 7.0f)) << "threads=" << threads;
      EXPECT_EQ(r.o, std::vector<float>(r.o.size(), 7.0f)) << "threads=" << threads;
    }
    tc_program_destroy(p);
  }
}

// cpu.blas (src/backends/cpu/gemm_route.h): a plain product, transposed, batched,
// or with a row stride longer than its row, computed by the system's CBLAS gives the
// reference's values (to rounding: BLAS sums in its own order); an operand whose innermost
// stride is not 1 takes the pipeline instead, with the same values; a def that is not a plain
// product is never routed. Skipped where no CBLAS is installed (CI installs OpenBLAS).
TEST(CpuBlas, ProductsGiveTheReferencesValuesInEveryLayout) {
  struct Case {
    const char* src;
    std::vector<int64_t> a, b;
    const char* plan;
  };
  std::vector<Case> cases = {
      {"def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }", {33, 17}, {17, 20}, "C = A * B"},
      {"def f(float(K,M) A, float(N,K) B) -> (C) { C(i,j) +=! B(j,k) * A(k,i) }", {17, 33}, {20, 17}, "C = A^T * B^T"},
      {"def tbmm(float(B,N,M) X, float(B,K,M) Y) -> (Z) { Z(b,n,k) +=! X(b,n,m) * Y(b,k,m) }", {3, 9, 13}, {3, 7, 13},
       "C = A * B^T (cblas_sgemm), 1 batch dimension"},
  };
  bool skipped = false;
  for (const Case& c : cases) {
    Arg a(c.a, false), b(c.b, false);
    fill(a, 1);
    fill(b, 2);
    Outcome ref = run(c.src, {&a, &b}, {{"backend", "reference"}});
    Outcome blas = run(c.src, {&a, &b}, {{"cpu.blas", "1"}});
    ASSERT_EQ(blas.status, TC_OK) << blas.message;
    if (has(blas.description, "no CBLAS library could be loaded")) {
      skipped = true;
      continue;
    }
    EXPECT_TRUE(has(blas.description, std::string("blas: ") + c.plan)) << blas.description;
    expect_close(blas.outputs[0], ref.outputs[0], c.src);
  }
  if (skipped) GTEST_SKIP() << "no CBLAS library in this process";

  // Row strides: A's rows 40 floats apart (BLAS's lda), then every other column (the pipeline).
  const char* mm = cases[0].src;
  Arg parent({33, 40}, false);
  fill(parent, 3);
  Arg b({17, 20}, false);
  fill(b, 4);
  for (int64_t column_step : {1, 2}) {
    Arg view({33, 17}, false);  // its data unused: the view reads parent's
    int64_t strides[2] = {40, column_step};
    view.t.data = parent.f.data();
    view.t.strides = strides;
    Arg dense({33, 17}, false);
    for (int64_t i = 0; i < 33; ++i)
      for (int64_t k = 0; k < 17; ++k) dense.f[i * 17 + k] = parent.f[i * 40 + k * column_step];
    Outcome ref = run(mm, {&dense, &b}, {{"backend", "reference"}});
    Outcome blas = run(mm, {&view, &b}, {{"cpu.blas", "1"}});
    ASSERT_EQ(blas.status, TC_OK) << blas.message;
    expect_close(blas.outputs[0], ref.outputs[0], "A with strides 40, " + std::to_string(column_step));
  }

  Arg x({8, 5}, false), y({5, 6}, false);
  Outcome relu = run("def f(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! fmax(A(i,k) * B(k,j), 0) }", {&x, &y},
                     {{"cpu.blas", "1"}});
  EXPECT_TRUE(has(relu.description, "blas: not used (the right-hand side is not a product of two tensor reads)"))
      << relu.description;
}

// cpu.fma: a float += reduction of one product accumulates with fused multiply-adds,
// one rounding a step. C(0,0) = 1 * -1 + a * a with a = 1 + 2^-12: a * a = 1 + 2^-11 + 2^-24
// exactly; rounded on its own (a tie, to even) it loses the 2^-24, fused with the -1 it keeps
// it. cpu.fma=0 gives the reference's bits; the description says which.
TEST(CpuFma, AProductSumRoundsOnceAStepAndTheKnobGivesTheReferencesBits) {
  const char* mm = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }";
  const float a = 1.0f + std::ldexp(1.0f, -12);
  Arg A({32, 2}, false), B({2, 32}, false);
  for (int i = 0; i < 32; ++i) {
    A.f[i * 2] = 1.0f;
    A.f[i * 2 + 1] = a;
  }
  for (int j = 0; j < 32; ++j) {
    B.f[j] = -1.0f;
    B.f[32 + j] = a;
  }
  const float fused = std::ldexp(1.0f, -11) + std::ldexp(1.0f, -24), separate = std::ldexp(1.0f, -11);
  Outcome ref = run(mm, {&A, &B}, {{"backend", "reference"}});
  Outcome on = run(mm, {&A, &B}, {});
  Outcome off = run(mm, {&A, &B}, {{"cpu.fma", "0"}});
  Outcome scalar = run(mm, {&A, &B}, {{"cpu.vectorize", "1"}, {"cpu.tile", "1x1"}});
  ASSERT_EQ(on.status, TC_OK) << on.message;
  for (size_t e = 0; e < 32 * 32; ++e) {
    ASSERT_EQ(ref.outputs[0][e], separate) << e;
    ASSERT_EQ(on.outputs[0][e], fused) << e;
    ASSERT_EQ(scalar.outputs[0][e], fused) << e;
    ASSERT_EQ(off.outputs[0][e], separate) << e;
  }
  EXPECT_TRUE(has(on.description, ", fused multiply-adds")) << on.description;
  EXPECT_FALSE(has(off.description, "fused multiply-adds")) << off.description;
}

namespace {

// cpu.contract=auto (docs/design/contractions.md): (batched) matrix products under 24 MFLOP stay on
// the pipeline, and the description says why; a larger one, and a small contraction that is
// not a matrix product, take the route; cpu.contract=1 takes it at any size. Each gives the
// reference's values (exact: values in {-2, ..., 2} / 16, whose sums here fit a float's
// mantissa in any order).
TEST(ContractionRoute, AutoLeavesSmallMatrixProductsToThePipeline) {
  const char* mm = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(i,j) +=! A(i,k) * B(k,j) }";
  const char* bmm = "def bmm(float(B,M,K) A, float(B,K,N) X) -> (C) { C(b,i,j) +=! A(b,i,k) * X(b,k,j) }";
  const char* two_m = "def f(float(A,K,B) X, float(K,C) Y) -> (O) { O(a,b,c) +=! X(a,k,b) * Y(k,c) }";
  // The expected values, summed in double: the inputs are multiples of 1/16 in [-2/16, 2/16], so
  // every partial sum is exact in float too and any order gives these bits (the reference
  // interpreter took most of the test's time under the sanitizers).
  using Expect = std::function<std::vector<float>(const std::vector<Arg*>&)>;
  Expect batched = [](const std::vector<Arg*>& in) {  // C(b,i,j) = sum_k A(b,i,k) X(b,k,j); mm: one b
    const auto& a = in[0]->shape;
    int64_t batch = a.size() == 3 ? a[0] : 1, m = a[a.size() - 2], k = a.back(), n = in[1]->shape.back();
    std::vector<float> out(static_cast<size_t>(batch * m * n));
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t r = 0; r < k; ++r) sum += double(in[0]->f[(b * m + i) * k + r]) * in[1]->f[(b * k + r) * n + j];
          out[(b * m + i) * n + j] = static_cast<float>(sum);
        }
    return out;
  };
  Expect two_m_expect = [](const std::vector<Arg*>& in) {  // O(a,b,c) = sum_k X(a,k,b) Y(k,c)
    int64_t A = in[0]->shape[0], K = in[0]->shape[1], B = in[0]->shape[2], C = in[1]->shape[1];
    std::vector<float> out(static_cast<size_t>(A * B * C));
    for (int64_t a = 0; a < A; ++a)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t c = 0; c < C; ++c) {
          double sum = 0;
          for (int64_t k = 0; k < K; ++k) sum += double(in[0]->f[(a * K + k) * B + b]) * in[1]->f[k * C + c];
          out[(a * B + b) * C + c] = static_cast<float>(sum);
        }
    return out;
  };
  struct Case {
    const char* src;
    std::vector<std::vector<int64_t>> shapes;
    const char* contract;
    bool route;
    Expect expect;
  };
  const std::vector<Case> cases = {
      {mm, {{64, 64}, {64, 64}}, "auto", false, batched},
      {mm, {{64, 64}, {64, 64}}, "1", true, batched},
      {bmm, {{16, 64, 64}, {16, 64, 64}}, "auto", false, batched},
      {mm, {{256, 256}, {256, 256}}, "auto", true, batched},  // 33.5 MFLOP
      {two_m, {{8, 16, 8}, {16, 24}}, "auto", true, two_m_expect},
      {mm, {{8, 200000}, {200000, 8}}, "auto", false, batched},  // 25.6 MFLOP into 8 x 8 values
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.src) + " cpu.contract=" + c.contract + " " + std::to_string(c.shapes[0][0]));
    std::vector<std::unique_ptr<Arg>> args;
    std::vector<Arg*> in;
    for (const auto& shape : c.shapes) {
      args.push_back(std::make_unique<Arg>(shape, false));
      Arg& a = *args.back();
      for (size_t j = 0; j < a.f.size(); ++j) a.f[j] = static_cast<float>(static_cast<int>((j * 7 + args.size()) % 5) - 2) / 16;
      in.push_back(args.back().get());
    }
    Outcome got = run(c.src, in, {{"cpu.contract", c.contract}});
    ASSERT_EQ(got.status, TC_OK) << got.message;
    EXPECT_EQ(has(got.description, "contraction route: "), c.route) << got.description;
    if (!c.route)
      EXPECT_TRUE(has(got.description, " MFLOP: below 24 the pipeline") ||
                  has(got.description, "into fewer than 32 x 32 values: the pipeline"))
          << got.description;
    EXPECT_EQ(got.outputs[0], c.expect(in)) << got.description;
  }
}

}  // namespace

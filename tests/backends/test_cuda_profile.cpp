// The GPU profile's parts without a kernel: warp requests from recorded accesses (sectors,
// bank conflicts, lanes that sit out), the statement marks, the blocks sampled, the GPU
// model. tests/e2e/cuda_backend.py profiles real kernels through the C API.
#include <gtest/gtest.h>

#include "backends/cuda/profile/gpu_model.h"
#include "backends/cuda/profile/instrumentation.h"
#include "backends/cuda/profile/profile.h"
#include "backends/cuda/profile/trace.h"
#include "support/error.h"

namespace {

using namespace tc::backends::cuda::profile;

const void* const kSite = reinterpret_cast<const void*>(0x1000);
const void* const kOtherSite = reinterpret_cast<const void*>(0x2000);
constexpr uintptr_t kTensor = 1 << 20, kTensorEnd = kTensor + (1 << 20);
constexpr uintptr_t kShared = 1 << 24;

// One warp reads `bytes` at kTensor + lane * stride (global) or kShared + lane * stride.
Counters one_request(uintptr_t base, uintptr_t stride, unsigned bytes, unsigned lanes = 32) {
  Recorder r({{kTensor, kTensorEnd}}, 32);
  for (unsigned t = 0; t < lanes; ++t) r.access(kSite, base + t * stride, bytes, false, t);
  r.block_done();
  return r.counters();
}

TEST(CudaProfile, ConsecutiveFloatsAreFourSectorsAStrideIsThirtyTwo) {
  Counters c = one_request(kTensor, 4, 4);
  EXPECT_EQ(c.global_loads, 1u);
  EXPECT_EQ(c.global_sectors, 4u);
  EXPECT_EQ(c.global_ideal_sectors, 4u);
  c = one_request(kTensor, 4 * 33, 4);  // a column of a row-major 33-wide matrix
  EXPECT_EQ(c.global_sectors, 32u);
  EXPECT_EQ(c.global_ideal_sectors, 4u);
  c = one_request(kTensor, 16, 16);  // 128-bit loads: 512 bytes
  EXPECT_EQ(c.global_sectors, 16u);
  c = one_request(kTensor, 0, 4);  // one float for every lane
  EXPECT_EQ(c.global_sectors, 1u);
  EXPECT_EQ(c.global_ideal_sectors, 1u);
  EXPECT_EQ(c.shared_requests, 0u);
}

TEST(CudaProfile, BankConflictsCountDistinctWordsInABankAndBroadcastsAreFree) {
  Counters c = one_request(kShared, 4, 4);
  EXPECT_EQ(c.shared_requests, 1u);
  EXPECT_EQ(c.shared_wavefronts, 1u);
  EXPECT_EQ(c.global_loads, 0u);
  c = one_request(kShared, 4 * 32, 4);  // every lane in bank 0, distinct words
  EXPECT_EQ(c.shared_wavefronts, 32u);
  c = one_request(kShared, 4 * 2, 4);  // stride 2: two words a bank
  EXPECT_EQ(c.shared_wavefronts, 2u);
  c = one_request(kShared, 0, 4);  // one word: a broadcast
  EXPECT_EQ(c.shared_wavefronts, 1u);
  c = one_request(kShared, 16, 16);  // 128-bit: four phases of 8 lanes, no conflict
  EXPECT_EQ(c.shared_wavefronts, 4u);
  EXPECT_EQ(c.shared_phases, 4u);
  c = one_request(kShared, 4 * 33, 4);  // the padded column: conflict-free
  EXPECT_EQ(c.shared_wavefronts, 1u);
}

TEST(CudaProfile, TheKthAccessOfASiteIsOneRequestAndShortLanesSitOut) {
  Recorder r({{kTensor, kTensorEnd}}, 64);
  // Two warps; lane 0 of each makes three accesses at kSite, the others one; kOtherSite once by
  // thread 5 only.
  for (unsigned t = 0; t < 64; ++t) {
    unsigned n = t % 32 == 0 ? 3 : 1;
    for (unsigned k = 0; k < n; ++k) r.access(kSite, kTensor + 4 * t + 1024 * k, 4, false, t);
  }
  r.access(kOtherSite, kTensor, 4, true, 5);
  for (unsigned t = 0; t < 64; ++t) r.statement(t);
  for (int k = 0; k < 9; ++k) r.statement(7);
  r.fma(3);
  r.block_done();
  const Counters& c = r.counters();
  EXPECT_EQ(c.global_loads, 6u);  // per warp: one full request, then two of lane 0 alone
  EXPECT_EQ(c.global_stores, 1u);
  EXPECT_EQ(c.global_sectors, 2u * (4 + 1 + 1) + 1);
  EXPECT_EQ(c.statements, 73u);
  EXPECT_EQ(c.busiest_thread_statements, 10u);
  EXPECT_EQ(c.fma, 1u);
  EXPECT_EQ(c.blocks, 1u);
  EXPECT_EQ(c.thread_runs, 64u);
  EXPECT_EQ(r.touched_bytes(), kTensorEnd - kTensor);
  r.block_done();  // the traces were cleared: an empty block adds nothing but itself
  EXPECT_EQ(r.counters().global_loads, 6u);
  EXPECT_EQ(r.counters().blocks, 2u);
}

TEST(CudaProfile, BeyondTheTraceCapRequestsAreCountedAndTheirSectorsScaled) {
  Recorder r({{kTensor, kTensorEnd}}, 32, 32 * 4);  // room for each lane's first 4 addresses
  for (unsigned t = 0; t < 32; ++t)
    for (unsigned k = 0; k < 10; ++k) r.access(kSite, kTensor + 4 * t + 128 * k, 4, false, t);
  r.warp_done(0);
  const Counters& c = r.counters();
  EXPECT_EQ(c.global_loads, 10u);   // exact
  EXPECT_EQ(c.traced_global, 4u);   // the first 4 steps
  EXPECT_EQ(c.global_sectors, 16u);
  EXPECT_DOUBLE_EQ(c.all_sectors(), 40.0);
  r.block_done();  // warp 0 was grouped already: nothing twice
  EXPECT_EQ(r.counters().global_loads, 10u);
}

TEST(CudaProfile, ALoadOfAValueARegisterHoldsIsNoRequestUntilABarrierOrAWrite) {
  Recorder r({{kTensor, kTensorEnd}}, 32);
  for (unsigned t = 0; t < 32; ++t) {
    for (int use = 0; use < 8; ++use) r.access(kSite, kShared + 4 * t, 4, false, t);  // one operand, 8 uses
    r.access(kOtherSite, kShared + 4 * t, 4, true, t);                                 // written
    r.access(kSite, kShared + 4 * t, 4, false, t);                                    // read again: a load
  }
  r.warp_done(0);  // a barrier: registers no longer stand for shared memory
  for (unsigned t = 0; t < 32; ++t) r.access(kSite, kShared + 4 * t, 4, false, t);
  r.block_done();
  EXPECT_EQ(r.counters().shared_requests, 4u);  // load, store, load; then one after the barrier
  Recorder far({{kTensor, kTensorEnd}}, 1);
  for (unsigned k = 0; k <= kRegisterWindow; ++k) far.access(kSite, kTensor + 4 * k, 4, false, 0);
  far.access(kSite, kTensor, 4, false, 0);  // the first value left the window
  far.block_done();
  EXPECT_EQ(far.counters().global_loads, kRegisterWindow + 2);
}

TEST(CudaProfile, StatementMarksAreWholeLinesThatComeOut) {
  std::string marked = "{\n  TC_STATEMENT();\n  x = 1;\n}\n  TC_STATEMENT(); y = 2;\n";
  EXPECT_EQ(without_statement_marks(marked), "{\n  x = 1;\n}\n  TC_STATEMENT(); y = 2;\n");
}

TEST(CudaProfile, BlocksSampledIncludeTheFirstAndTheLast) {
  EXPECT_EQ(sampled_blocks(3), (std::vector<unsigned>{0, 1, 2}));
  std::vector<unsigned> s = sampled_blocks(1000);
  ASSERT_EQ(s.size(), kSampledBlocks);
  EXPECT_EQ(s.front(), 0u);
  EXPECT_EQ(s.back(), 999u);
  for (size_t i = 1; i < s.size(); ++i) EXPECT_GT(s[i], s[i - 1]);
}

TEST(CudaProfile, TheModelNamesWhatBoundsALaunch) {
  const Gpu& h100 = gpu_named("h100");
  EXPECT_EQ(h100.sms, 132);
  LaunchWork gemm;  // 1024^3 in 64 x 64 tiles of 64 threads
  gemm.blocks = 256, gemm.threads_per_block = 64, gemm.resident_blocks = 6;
  gemm.fma_per_block = 64.0 * 64 * 1024, gemm.shared_wavefronts_per_block = 2.0 * 2 * 1024 * 16;
  gemm.sectors = 256 * 2 * 64 * 1024 * 4 / 32.0, gemm.busiest_thread_statements = 64 * 1024;
  gemm.tensor_bytes = 3 * 4 << 20;
  Estimate e = estimate(h100, gemm);
  EXPECT_EQ(e.bound, "fma");
  // 2 blocks on the busiest SM, 4 warps there: half the FMA rate.
  EXPECT_NEAR(e.fma_us, 2 * 64.0 * 64 * 1024 / (128 * 1980.0) * 2, 1e-6);
  EXPECT_NEAR(e.us, e.fma_us + h100.launch_us, 1e-9);
  EXPECT_EQ(e.dram_bytes, gemm.tensor_bytes);  // fits in the L2

  LaunchWork serial = gemm;  // one thread a block does everything
  serial.busiest_thread_statements = 64 * 64 * 1024;
  EXPECT_EQ(estimate(h100, serial).bound, "thread");

  LaunchWork rows;  // 4 blocks of one warp, each loading 7000 times: latency-bound
  rows.blocks = 4, rows.threads_per_block = 32, rows.resident_blocks = 32, rows.global_loads_per_block = 7000;
  rows.fma_per_block = 32 * 7000, rows.sectors = 4 * 7000 * 4, rows.tensor_bytes = 1 << 20;
  Estimate r = estimate(h100, rows);
  EXPECT_EQ(r.bound, "latency");
  EXPECT_NEAR(r.latency_us, 7000 * kLoadLatency / 1980.0, 1e-6);

  LaunchWork big = gemm;  // 200 MB touched, 2 GB through the L2
  big.tensor_bytes = 200e6, big.sectors = 2e9 / 32, big.fma_per_block = 1;
  Estimate b = estimate(h100, big);
  EXPECT_NEAR(b.dram_bytes, 2e9 * (1 - 50e6 / 200e6), 1);
  EXPECT_GT(estimate(gpu_named("a100"), big).dram_us, estimate(gpu_named("h200"), big).dram_us);
}

TEST(CudaProfile, AnUnknownGpuNamesTheKnownOnes) {
  try {
    gpu_named("v100");
    FAIL() << "no error";
  } catch (const tc::Error& e) {
    EXPECT_EQ(e.status(), TC_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("no GPU named 'v100' to estimate for (known: h100, h200, a100)"), std::string::npos)
        << e.what();
  }
}

}  // namespace

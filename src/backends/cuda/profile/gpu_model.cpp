// gpu_model.cpp — see gpu_model.h. The rates are the vendors' data-sheet figures (boost
// clock; FP32 = SMs x lanes x 2 x clock) but the L2's, which vendors do not give: published
// microbenchmarks measure about 5.5 TB/s on H100 and 4 TB/s on A100.
#include "backends/cuda/profile/gpu_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "support/error.h"

namespace tc::backends::cuda::profile {
namespace {

const std::vector<Gpu>& gpus() {
  static const std::vector<Gpu> kGpus = {
      {"h100", "H100 SXM (132 SMs, 1.98 GHz, 67 TFLOP/s FP32, 3.35 TB/s)", "sm_90", 132, 1.98, 128, 3.35, 5.5, 50, 64, 32, 3},
      {"h200", "H200 (132 SMs, 1.98 GHz, 67 TFLOP/s FP32, 4.8 TB/s)", "sm_90", 132, 1.98, 128, 4.8, 5.5, 50, 64, 32, 3},
      {"a100", "A100 SXM (108 SMs, 1.41 GHz, 19.5 TFLOP/s FP32, 2.0 TB/s)", "sm_80", 108, 1.41, 64, 2.0, 4.0, 40, 64, 32, 3},
  };
  return kGpus;
}

// Warps an SM needs resident to keep its FP32 lanes busy (2 per scheduler).
constexpr double kWarpsForFullRate = 8;
// Cycles a statement instance takes at least where one thread runs them one after another: a
// warp issues at most one instruction a cycle.
constexpr double kCyclesPerSerialStatement = 1;

}  // namespace

const Gpu& gpu_named(const std::string& name) {
  std::string known;
  for (const Gpu& g : gpus()) {
    if (name == g.name) return g;
    known += (known.empty() ? "" : ", ") + std::string(g.name);
  }
  fail(TC_ERROR_INVALID_ARGUMENT, "no GPU named '" + name + "' to estimate for (known: " + known + ")");
}

Estimate estimate(const Gpu& gpu, const LaunchWork& w) {
  Estimate e;
  double clock = gpu.clock_ghz * 1e3;  // cycles per microsecond
  double per_sm = std::ceil(w.blocks / gpu.sms);
  double resident = std::max(1.0, std::min(w.resident_blocks, per_sm));
  double warps = resident * std::ceil(w.threads_per_block / 32);
  e.fma_us = per_sm * w.fma_per_block / (gpu.fma_per_clock * clock) / std::min(1.0, warps / kWarpsForFullRate);
  e.shared_us = per_sm * w.shared_wavefronts_per_block / clock;
  double l2_bytes = w.sectors * 32;
  e.l2_us = l2_bytes / (gpu.l2_tb_s * 1e6);
  double l2 = gpu.l2_mb * 1e6;
  e.dram_bytes = w.tensor_bytes <= l2 ? w.tensor_bytes : std::max(w.tensor_bytes, l2_bytes * (1 - l2 / w.tensor_bytes));
  e.dram_us = e.dram_bytes / (gpu.dram_tb_s * 1e6);
  e.thread_us = std::ceil(per_sm / resident) * w.busiest_thread_statements * kCyclesPerSerialStatement / clock;
  e.latency_us = per_sm * w.global_loads_per_block * kLoadLatency / warps / clock;
  std::pair<double, const char*> terms[] = {{e.fma_us, "fma"},   {e.shared_us, "shared"}, {e.l2_us, "l2"},
                                            {e.dram_us, "dram"}, {e.thread_us, "thread"}, {e.latency_us, "latency"}};
  auto largest = std::max_element(std::begin(terms), std::end(terms), [](auto& a, auto& b) { return a.first < b.first; });
  e.bound = largest->second;
  e.us = gpu.launch_us + largest->first;
  return e;
}

}  // namespace tc::backends::cuda::profile

// gpu_model.h — named GPUs' rates and a roofline estimate of one launch's time on one of them
// from a profile's counts. An estimate, to compare code and find what bounds it, not a
// measurement: the time is the launch overhead plus the largest of
//   fma      the busiest SM's multiply-adds at the SM's FP32 rate, scaled down where fewer
//            than 8 warps are resident on it (2 per scheduler: too few to hide an FMA's latency),
//   shared   the busiest SM's shared-memory wavefronts, one a cycle,
//   l2       every requested sector through the L2's bandwidth,
//   dram     the DRAM bytes (below) at the DRAM's bandwidth,
//   thread   the busiest thread's statement instances one after another, a cycle each (a warp
//            issues at most one instruction a cycle), for each round of blocks its SM runs;
//   latency  the busiest SM's global loads, each waiting a memory latency (kLoadLatency
//            cycles) that only the other warps resident on it overlap (Little's law, one load
//            in flight a warp);
// where the busiest SM runs ceil(blocks / SMs) blocks, at most `resident` of them at once.
// DRAM bytes: every tensor once where all of them fit in the L2; beyond it, the share of the
// L2 traffic the L2 cannot hold. docs/design/cuda-backend.md compares the estimates with measured times.
#pragma once

#include <string>

namespace tc::backends::cuda::profile {

// The cycles a warp's global load waits in the `latency` term: fitted to the times measured on
// an H200 (docs/design/cuda-backend.md), between an L1 hit (~35) and an L2 hit (~260); random gathers from
// DRAM wait several times longer.
constexpr double kLoadLatency = 100;

struct Gpu {
  const char* name;  // h100, h200, a100
  const char* description;
  const char* arch;  // what NVRTC compiles for, for the occupancy
  int sms;
  double clock_ghz;
  int fma_per_clock;  // FP32 lanes per SM (no tensor-core rate: a profile counts a tensor-core kernel's emulation)
  double dram_tb_s, l2_tb_s, l2_mb;
  int max_warps_per_sm, max_blocks_per_sm;
  double launch_us;
};

// The GPU named `name` (TC_ERROR_INVALID_ARGUMENT naming the known ones if none is).
const Gpu& gpu_named(const std::string& name);

// One launch, as the profile saw it (per-block figures are the sampled blocks' means).
struct LaunchWork {
  double blocks = 0, threads_per_block = 0;
  double resident_blocks = 0;  // blocks per SM at once (occupancy)
  double fma_per_block = 0, shared_wavefronts_per_block = 0, global_loads_per_block = 0;
  double sectors = 0;  // all blocks'
  double busiest_thread_statements = 0;
  double tensor_bytes = 0;  // each tensor the launch touches, once
};

struct Estimate {
  double us = 0;
  double fma_us = 0, shared_us = 0, l2_us = 0, dram_us = 0, thread_us = 0, latency_us = 0;
  double dram_bytes = 0;
  std::string bound;  // the largest term's name
};

Estimate estimate(const Gpu& gpu, const LaunchWork& work);

}  // namespace tc::backends::cuda::profile

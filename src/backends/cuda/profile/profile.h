// profile.h — a GPU profile made without a GPU: an emulated kernel's launches run on the
// host in the instrumented build (instrumentation.h), each for a sample of its blocks (all
// of them up to kSampledBlocks; beyond, that many spread evenly from the first to the last,
// and the counts scaled to the whole grid), its accesses grouped into warp requests
// (trace.h), and its time estimated for a named GPU (gpu_model.h). The report, one line a
// figure (docs/guide/gpus.md, "Profiles without a GPU"):
//   launch 1 of 1: mm_k0, grid 16x16x1, block 8x8x1
//     blocks_profiled 8 of 256
//     statement_instances 1073741824
//     work_balance 1.00          the busiest thread's statement instances / the mean
//     fma 1073741824
//     global_requests 2113536     warp-wide loads and stores of tensors
//     sectors_per_request 4.00    32-byte sectors a request touches (and the fewest its bytes
//                                 fit in: 4 for 32 lanes of float32, 16 for 128-bit accesses)
//     shared_requests 33554432
//     bank_conflict_ways 1.00     wavefronts a shared request takes / the fewest it could
//     dram_bytes 12582912          (the model's), then min_dram_bytes: each tensor once
//     occupancy 19%               resident warps / the most (ptxas's registers via NVRTC)
//     estimated_us 35.2            and each term of the model, the bound
//   estimated_us 35.2 on h100     the launches' sum: an estimate, not a measurement
// Outputs are left as the profiled blocks wrote them (the others do not run); a launch that
// reads what an earlier one wrote sees those partial values (data-dependent reads, gathers,
// may then differ from a full run). The fault record is ignored.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/emulate.h"
#include "backends/cuda/print_cuda.h"
#include "backends/cuda/profile/gpu_model.h"
#include "backends/cuda/profile/trace.h"
#include "backends/cuda/resources.h"

namespace tc::backends::cuda::profile {

constexpr unsigned kSampledBlocks = 8;

// Per launch, its occupancy on `gpu`: ptxas's report of `text` compiled by NVRTC for the GPU's
// architecture (a kept cubin after the first time); all empty where NVRTC cannot load.
std::vector<std::optional<Occupancy>> occupancy_on(const Gpu& gpu, const std::string& text, const std::vector<Launch>& launches,
                                                   const std::vector<LaunchDims>& dims);

// The blocks profiled of a grid of `total`, by linear index.
std::vector<unsigned> sampled_blocks(unsigned long long total);

class Profiler {
 public:
  // Builds `marked` (printed with PrintOptions::statement_marks) instrumented.
  explicit Profiler(const CudaSource& marked);

  // Profiles every launch on `params` (host buffers: the def's tensors in Def::tensors order,
  // then the fault record) whose tensors are `tensors`; `occupancy`, per launch, on the GPU
  // where known (ptxas's registers through NVRTC), else empty: the blocks its threads allow.
  std::string run(const std::vector<void*>& params, const std::vector<Region>& tensors, const std::vector<LaunchDims>& dims,
                  const Gpu& gpu, const std::vector<std::optional<Occupancy>>& occupancy) const;

 private:
  CudaSource source_;
  EmulatedKernels kernels_;
};

}  // namespace tc::backends::cuda::profile

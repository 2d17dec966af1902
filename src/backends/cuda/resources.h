// resources.h — what a compiled cuda kernel uses of a GPU, known without one: per
// __global__ function, the registers, stack, spill and static shared memory bytes ptxas reports
// (NVRTC's log with --ptxas-options=-v), and from them, the launch's block and the
// architecture's limits, the theoretical occupancy (resident warps per SM over the most it
// holds, and what limits it). It does not compile (nvrtc.h) or launch anything.
#pragma once

#include <map>
#include <string>

namespace tc::backends::cuda {

struct KernelResources {
  int registers = 0;  // per thread
  long long stack_bytes = 0, spill_store_bytes = 0, spill_load_bytes = 0, shared_bytes = 0;
};

// The functions ptxas -v describes in `log`, by name; those it does not are absent.
std::map<std::string, KernelResources> parse_ptxas_log(const std::string& log);

struct Occupancy {
  int blocks_per_sm = 0;
  int warps_per_sm = 0, max_warps_per_sm = 0;
  std::string limit;  // "registers", "shared memory", "threads", "blocks"
  double fraction() const { return max_warps_per_sm > 0 ? static_cast<double>(warps_per_sm) / max_warps_per_sm : 0; }
};

// The theoretical occupancy of blocks of `threads` threads on `arch` ("sm_90"; sm_80 and later:
// 64 Ki registers, 64 warps and 32 blocks per SM; 164 KiB (sm_80), 100 KiB (sm_86, sm_89) or
// 228 KiB (sm_90) of shared memory, 1 KiB of it reserved per block), as CUDA's occupancy
// calculator computes it: registers allocated 256 at a time per warp.
Occupancy occupancy(const std::string& arch, const KernelResources& r, long long threads);

// "126 registers, 0 bytes spilled, 16768 bytes shared, occupancy 25% (16 of 64 warps a
// SM: registers)".
std::string resources_text(const std::string& arch, const KernelResources& r, long long threads);

}  // namespace tc::backends::cuda

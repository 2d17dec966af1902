// profile.cpp — see profile.h.
#include "backends/cuda/profile/profile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "backends/cuda/nvrtc.h"
#include "backends/cuda/profile/instrumentation.h"
#include "support/error.h"

namespace tc::backends::cuda::profile {
namespace {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string whole(double v) { return fixed(std::round(v), 0); }

// The recorder's callbacks, as the instrumented code calls them.
Sink sink_of(Recorder& r) {
  Sink s;
  s.recorder = &r;
  s.access = [](void* rec, const void* site, const void* address, unsigned size, int write, unsigned thread) {
    static_cast<Recorder*>(rec)->access(site, reinterpret_cast<uintptr_t>(address), size, write != 0, thread);
  };
  s.statement = [](void* rec, unsigned thread) { static_cast<Recorder*>(rec)->statement(thread); };
  s.fma = [](void* rec, unsigned thread) { static_cast<Recorder*>(rec)->fma(thread); };
  s.warp_done = [](void* rec, unsigned warp) { static_cast<Recorder*>(rec)->warp_done(warp); };
  s.block_done = [](void* rec) { static_cast<Recorder*>(rec)->block_done(); };
  return s;
}

// One launch's report lines; adds its estimate to *total_us.
std::string report(const Launch& l, size_t k, size_t launches, const LaunchDims& d, const Recorder& r, unsigned long long blocks,
                   const Gpu& gpu, const std::optional<Occupancy>& occ, double* total_us) {
  const Counters& c = r.counters();
  double threads = static_cast<double>(d.block[0]) * d.block[1] * d.block[2];
  double scale = c.blocks > 0 ? static_cast<double>(blocks) / c.blocks : 0;
  double mean = c.thread_runs > 0 ? static_cast<double>(c.statements) / c.thread_runs : 0;
  uint64_t requests = c.global_loads + c.global_stores;
  double warps = std::ceil(threads / 32);
  int resident = occ ? occ->blocks_per_sm : static_cast<int>(std::min<double>(gpu.max_blocks_per_sm, gpu.max_warps_per_sm / warps));

  LaunchWork w;
  w.blocks = static_cast<double>(blocks);
  w.threads_per_block = threads;
  w.resident_blocks = resident;
  w.fma_per_block = c.blocks ? static_cast<double>(c.fma) / c.blocks : 0;
  w.shared_wavefronts_per_block = c.blocks ? c.all_wavefronts() / c.blocks : 0;
  w.global_loads_per_block = c.blocks ? static_cast<double>(c.global_loads) / c.blocks : 0;
  w.sectors = c.all_sectors() * scale;
  w.busiest_thread_statements = static_cast<double>(c.busiest_thread_statements);
  w.tensor_bytes = static_cast<double>(r.touched_bytes());
  Estimate e = estimate(gpu, w);
  *total_us += e.us;

  std::string out = "launch " + std::to_string(k + 1) + " of " + std::to_string(launches) + ": " + l.kernel + ", grid " +
                    dims_text(d.grid) + ", block " + dims_text(d.block) + "\n";
  auto line = [&](const std::string& key, const std::string& value) { out += "  " + key + " " + value + "\n"; };
  line("blocks_profiled", std::to_string(c.blocks) + " of " + std::to_string(blocks));
  line("statement_instances", whole(c.statements * scale));
  line("work_balance", fixed(mean > 0 ? c.busiest_thread_statements / mean : 1, 2) + " (busiest thread " +
                           std::to_string(c.busiest_thread_statements) + ", mean " + fixed(mean, 1) + ")");
  line("fma", whole(c.fma * scale));
  line("global_requests", whole(requests * scale) + " (loads " + whole(c.global_loads * scale) + ", stores " +
                              whole(c.global_stores * scale) + ")");
  double traced = static_cast<double>(c.traced_global);
  line("sectors_per_request", fixed(traced ? c.global_sectors / traced : 0, 2) + " (ideal " +
                                  fixed(traced ? c.global_ideal_sectors / traced : 0, 2) + ")");
  line("shared_requests", whole(c.shared_requests * scale));
  line("bank_conflict_ways", fixed(c.shared_phases ? static_cast<double>(c.shared_wavefronts) / c.shared_phases : 0, 2));
  line("dram_bytes", whole(e.dram_bytes));
  line("min_dram_bytes", whole(w.tensor_bytes));
  if (occ)
    line("occupancy", std::to_string(static_cast<int>(occ->fraction() * 100 + 0.5)) + "% (" + std::to_string(occ->blocks_per_sm) +
                          " blocks a SM; limit: " + occ->limit + ")");
  else
    line("occupancy", "unknown (no NVRTC: registers unknown; " + std::to_string(resident) + " blocks a SM assumed)");
  line("estimated_us", fixed(e.us, 2) + " (fma " + fixed(e.fma_us, 2) + ", shared " + fixed(e.shared_us, 2) + ", l2 " +
                           fixed(e.l2_us, 2) + ", dram " + fixed(e.dram_us, 2) + ", thread " + fixed(e.thread_us, 2) +
                           ", latency " + fixed(e.latency_us, 2) +
                           ", launch " + fixed(gpu.launch_us, 2) + "; bound: " + e.bound + ")");
  return out;
}

}  // namespace

std::vector<std::optional<Occupancy>> occupancy_on(const Gpu& gpu, const std::string& text, const std::vector<Launch>& launches,
                                                   const std::vector<LaunchDims>& dims) {
  std::vector<std::optional<Occupancy>> out(launches.size());
  std::map<std::string, KernelResources> resources;
  try {
    resources = parse_ptxas_log(Nvrtc::get().compile_cubin(text, "profiled.cu", gpu.arch).ptxas_log);
  } catch (const Error&) {  // no NVRTC: the report says so
    return out;
  }
  for (size_t k = 0; k < launches.size(); ++k) {
    auto it = resources.find(launches[k].kernel);
    const auto& b = dims[k].block;
    if (it != resources.end()) out[k] = occupancy(gpu.arch, it->second, static_cast<long long>(b[0]) * b[1] * b[2]);
  }
  return out;
}

std::vector<unsigned> sampled_blocks(unsigned long long total) {
  std::vector<unsigned> out;
  if (total <= kSampledBlocks) {
    for (unsigned b = 0; b < total; ++b) out.push_back(b);
    return out;
  }
  for (unsigned i = 0; i < kSampledBlocks; ++i) out.push_back(static_cast<unsigned>(i * (total - 1) / (kSampledBlocks - 1)));
  return out;
}

Profiler::Profiler(const CudaSource& marked) : source_(marked), kernels_(marked, &instrumented()) {}

std::string Profiler::run(const std::vector<void*>& params, const std::vector<Region>& tensors, const std::vector<LaunchDims>& dims,
                          const Gpu& gpu, const std::vector<std::optional<Occupancy>>& occupancy) const {
  std::string out;
  double total_us = 0;
  std::vector<void*> args(params);
  for (size_t k = 0; k < source_.launches.size(); ++k) {
    const LaunchDims& d = dims[k];
    unsigned long long blocks = static_cast<unsigned long long>(d.grid[0]) * d.grid[1] * d.grid[2];
    std::vector<unsigned> sample = sampled_blocks(blocks);
    Recorder recorder(tensors, d.block[0] * d.block[1] * d.block[2]);
    Sink sink = sink_of(recorder);
    auto entry = reinterpret_cast<ProfiledEntry>(kernels_.entry(k));
    if (entry(args.data(), d.grid.data(), d.block.data(), sample.data(), static_cast<unsigned>(sample.size()), &sink) != 0)
      fail(TC_ERROR_INTERNAL, "cuda profile: in launch " + source_.launches[k].kernel +
                                  ", the threads of a block or warp did not all reach the same barrier (a code generation "
                                  "defect: please report it)");
    out += report(source_.launches[k], k, source_.launches.size(), d, recorder, blocks, gpu, occupancy[k], &total_us);
  }
  out += "estimated_us " + fixed(total_us, 2) + " on " + gpu.name + ": " + gpu.description +
         "; an estimate from the counts above, not a measurement\n";
  return out;
}

}  // namespace tc::backends::cuda::profile

// resources.cpp — see resources.h.
#include "backends/cuda/resources.h"

#include <algorithm>
#include <regex>
#include <sstream>

namespace tc::backends::cuda {

std::map<std::string, KernelResources> parse_ptxas_log(const std::string& log) {
  // ptxas info    : Function properties for mm_k0
  // ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  // ptxas info    : Used 126 registers, used 1 barriers, 16768 bytes smem
  static const std::regex function(R"(Function properties for (\w+))");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  std::map<std::string, KernelResources> out;
  std::istringstream in(log);
  std::string line, current;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, function)) {
      current = m[1];
      out[current];
      continue;
    }
    if (current.empty()) continue;
    KernelResources& r = out[current];
    if (std::regex_search(line, m, frame)) {
      r.stack_bytes = std::stoll(m[1]);
      r.spill_store_bytes = std::stoll(m[2]);
      r.spill_load_bytes = std::stoll(m[3]);
    }
    if (std::regex_search(line, m, used)) r.registers = std::stoi(m[1]);
    if (std::regex_search(line, m, smem)) r.shared_bytes = std::stoll(m[1]);
  }
  return out;
}

namespace {

// Per-SM limits of the architectures NVRTC targets from sm_80 on.
struct SmLimits {
  long long registers = 65536, shared_bytes = 167936, reserved_shared_per_block = 1024;
  int max_warps = 64, max_blocks = 32;
};

SmLimits limits_of(const std::string& arch) {
  SmLimits l;
  int cc = arch.rfind("sm_", 0) == 0 ? std::atoi(arch.c_str() + 3) : 90;
  if (cc >= 90) l.shared_bytes = 233472;
  else if (cc == 86 || cc == 89) {
    l.shared_bytes = 102400;
    l.max_warps = 48;
    l.max_blocks = cc == 86 ? 16 : 24;
  }
  return l;
}

}  // namespace

Occupancy occupancy(const std::string& arch, const KernelResources& r, long long threads) {
  SmLimits l = limits_of(arch);
  Occupancy o;
  o.max_warps_per_sm = l.max_warps;
  long long warps = std::max(1LL, (threads + 31) / 32);
  long long by_threads = l.max_warps / warps;
  long long regs_per_warp = (std::max(1, r.registers) * 32LL + 255) / 256 * 256;
  long long by_registers = l.registers / regs_per_warp / warps;
  long long per_block_shared = r.shared_bytes + l.reserved_shared_per_block;
  long long by_shared = r.shared_bytes > 0 ? l.shared_bytes / per_block_shared : l.max_blocks;
  long long blocks = std::min<long long>({by_threads, by_registers, by_shared, l.max_blocks});
  o.limit = blocks == by_registers ? "registers" : blocks == by_shared ? "shared memory" : blocks == by_threads ? "threads" : "blocks";
  o.blocks_per_sm = static_cast<int>(std::max(0LL, blocks));
  o.warps_per_sm = static_cast<int>(std::max(0LL, blocks) * warps);
  return o;
}

std::string resources_text(const std::string& arch, const KernelResources& r, long long threads) {
  Occupancy o = occupancy(arch, r, threads);
  std::string text = std::to_string(r.registers) + " registers, " +
                     std::to_string(r.spill_store_bytes + r.spill_load_bytes) + " bytes spilled, " +
                     std::to_string(r.stack_bytes) + " bytes stack, " + std::to_string(r.shared_bytes) +
                     " bytes shared, occupancy " + std::to_string(static_cast<int>(o.fraction() * 100 + 0.5)) + "% (" +
                     std::to_string(o.warps_per_sm) + " of " + std::to_string(o.max_warps_per_sm) + " warps a SM, " +
                     std::to_string(o.blocks_per_sm) + " blocks; limit: " + o.limit + ")";
  return text;
}

}  // namespace tc::backends::cuda

// trace.h — a profiled block's memory accesses, statement instances and fused multiply-adds
// per thread, turned into what a GPU would see once the block is done: the k-th access of a
// call site by each lane of a warp is one warp-wide request, but for a load of an address the
// thread loaded among its last kRegisterWindow distinct loads since its last barrier, with no
// write of its own to it since: the text reads an operand again at each use where the compiler
// keeps it in a register (a register tile's 8 + 8 values over its 64 multiply-adds). Each (lanes run in lock-step; a lane
// that made fewer accesses there sat it out), grouped each time the warp's lanes have all run to
// a barrier or their end; a request to global memory (a tensor's bytes)
// touches some 32-byte sectors; one to anything else the kernel touches (its __shared__
// arrays) is served in phases of 128 bytes (32 lanes of 4 bytes, 16 of 8, 8 of 16), each
// taking as many wavefronts as the most distinct 4-byte words any of the 32 banks holds
// (lanes reading the same word share it). A warp keeps up to kTraceCap addresses between
// groupings, each lane its first 1/32 of them; beyond, accesses are counted (the requests
// exact) but not traced, and the sectors and wavefronts are the traced requests', scaled. It does not run anything (profile.cpp) or estimate
// time (gpu_model.h).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace tc::backends::cuda::profile {

constexpr unsigned kWarp = 32;
constexpr unsigned kSectorBytes = 32;
constexpr unsigned kBanks = 32;
constexpr size_t kTraceCap = size_t{1} << 24;  // addresses kept at once: 128 MiB
constexpr unsigned kRegisterWindow = 64;
// A global access is recorded as its offset in its tensor plus the tensor's index times this:
// every tensor starts a sector, as GPU allocations do.
constexpr uintptr_t kTensorSpacing = uintptr_t{1} << 48;

// A tensor's bytes in host memory.
struct Region {
  uintptr_t begin = 0, end = 0;
};

// Sums over the blocks recorded.
struct Counters {
  uint64_t blocks = 0, thread_runs = 0;  // thread_runs: threads x blocks
  uint64_t statements = 0, busiest_thread_statements = 0, fma = 0;
  uint64_t global_loads = 0, global_stores = 0, shared_requests = 0;
  // Over the traced requests: how many, their sectors (and the fewest their bytes fit in),
  // their wavefronts (and phases: the wavefronts without conflicts).
  uint64_t traced_global = 0, global_sectors = 0, global_ideal_sectors = 0;
  uint64_t traced_shared = 0, shared_wavefronts = 0, shared_phases = 0;
  // All requests' sectors and wavefronts, the untraced ones at the traced ones' mean.
  double all_sectors() const { return traced_global ? double(global_sectors) * (global_loads + global_stores) / traced_global : 0; }
  double all_wavefronts() const { return traced_shared ? double(shared_wavefronts) * shared_requests / traced_shared : 0; }
};

class Recorder {
 public:
  Recorder(std::vector<Region> globals, unsigned threads_per_block, size_t trace_cap = kTraceCap);

  void access(const void* site, uintptr_t address, unsigned size, bool write, unsigned thread);
  void statement(unsigned thread) { ++statements_.at(thread); }
  void fma(unsigned thread) { ++fma_.at(thread); }
  // Warp w's requests so far added to the counters, its traces cleared.
  void warp_done(unsigned w);
  // Every warp's requests, and the block's statement instances and multiply-adds, added up.
  void block_done();

  const Counters& counters() const { return counters_; }
  // The bytes of the regions any recorded access fell in.
  uint64_t touched_bytes() const;

 private:
  struct Site {
    unsigned size = 0;
    bool write = false, global = false;
    uint64_t count = 0;
    std::vector<uintptr_t> addresses;  // in the thread's order, the first ones (kTraceCap)
  };
  const Region* global(uintptr_t address);  // its region, marked touched; null if none
  void global_request(const std::vector<uintptr_t>& lanes, unsigned size, bool write);
  void shared_request(const std::vector<uintptr_t>& lanes, const std::vector<unsigned>& lane_ids, unsigned size);

  std::vector<Region> globals_;  // sorted by begin
  std::vector<char> touched_;    // per region
  unsigned threads_;
  std::vector<std::unordered_map<const void*, Site>> sites_;  // per thread of the block
  std::vector<const void*> site_order_;                       // sites in order of first use
  std::vector<uint64_t> statements_, fma_;                    // per thread of the block
  size_t lane_cap_;                                           // addresses a thread keeps between groupings
  std::vector<size_t> traced_;                                // per thread of the block, kept now
  struct Recent {  // a thread's last distinct loads (a ring)
    uintptr_t address[kRegisterWindow];
    unsigned next = 0, size = 0;
  };
  std::vector<Recent> recent_;  // per thread of the block
  bool reloads(unsigned thread, uintptr_t address, bool write);
  Counters counters_;
};

}  // namespace tc::backends::cuda::profile

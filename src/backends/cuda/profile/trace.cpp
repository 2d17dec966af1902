// trace.cpp — see trace.h.
#include "backends/cuda/profile/trace.h"

#include <algorithm>
#include <map>
#include <set>

namespace tc::backends::cuda::profile {

Recorder::Recorder(std::vector<Region> globals, unsigned threads_per_block, size_t trace_cap)
    : globals_(std::move(globals)), threads_(threads_per_block), sites_(threads_per_block),
      statements_(threads_per_block, 0), fma_(threads_per_block, 0), lane_cap_(trace_cap / kWarp),
      traced_(threads_per_block, 0), recent_(threads_per_block) {
  std::sort(globals_.begin(), globals_.end(), [](const Region& a, const Region& b) { return a.begin < b.begin; });
  touched_.assign(globals_.size(), 0);
}

const Region* Recorder::global(uintptr_t address) {
  auto it = std::upper_bound(globals_.begin(), globals_.end(), address,
                             [](uintptr_t a, const Region& r) { return a < r.begin; });
  if (it == globals_.begin() || address >= std::prev(it)->end) return nullptr;
  touched_[static_cast<size_t>(std::prev(it) - globals_.begin())] = 1;
  return &*std::prev(it);
}

uint64_t Recorder::touched_bytes() const {
  uint64_t bytes = 0;
  for (size_t r = 0; r < globals_.size(); ++r)
    if (touched_[r]) bytes += globals_[r].end - globals_[r].begin;
  return bytes;
}

// Whether a load of `address` by `thread` reads a value it holds in a register; a write drops
// the address from them, a new load enters it.
bool Recorder::reloads(unsigned thread, uintptr_t address, bool write) {
  Recent& r = recent_.at(thread);
  for (unsigned i = 0; i < r.size; ++i) {
    if (r.address[i] != address) continue;
    if (!write) return true;
    r.address[i] = r.address[--r.size];  // a write: the register no longer holds memory's value
    r.next = r.size % kRegisterWindow;
    return false;
  }
  if (!write) {
    r.address[r.next] = address;
    r.next = (r.next + 1) % kRegisterWindow;
    r.size = std::min(r.size + 1, kRegisterWindow);
  }
  return false;
}

void Recorder::access(const void* site, uintptr_t address, unsigned size, bool write, unsigned thread) {
  if (reloads(thread, address, write)) return;
  auto [it, inserted] = sites_.at(thread).try_emplace(site);
  Site& s = it->second;
  if (inserted) {
    s.size = size, s.write = write;
    if (std::find(site_order_.begin(), site_order_.end(), site) == site_order_.end()) site_order_.push_back(site);
  }
  // Global addresses as the GPU would have them: a tensor's allocation starts a sector (CUDA
  // aligns to 256 bytes); the host's buffers need not.
  const Region* r = global(address);
  s.global = r != nullptr;
  ++s.count;
  if (traced_[thread] >= lane_cap_) return;
  s.addresses.push_back(r ? address - r->begin + kTensorSpacing * static_cast<uintptr_t>(r - globals_.data()) : address);
  ++traced_[thread];
}

void Recorder::global_request(const std::vector<uintptr_t>& lanes, unsigned size, bool write) {
  std::set<uintptr_t> sectors;
  for (uintptr_t a : lanes)
    for (uintptr_t s = a / kSectorBytes; s <= (a + size - 1) / kSectorBytes; ++s) sectors.insert(s);
  ++counters_.traced_global;
  counters_.global_sectors += sectors.size();
  size_t distinct = std::set<uintptr_t>(lanes.begin(), lanes.end()).size();  // lanes reading one address share it
  counters_.global_ideal_sectors += (distinct * size + kSectorBytes - 1) / kSectorBytes;
}

// Lanes in phases of 128 bytes; a phase takes the most distinct words one bank holds.
void Recorder::shared_request(const std::vector<uintptr_t>& lanes, const std::vector<unsigned>& lane_ids, unsigned size) {
  unsigned words = std::max(1u, size / 4), lanes_per_phase = std::max(1u, kWarp / words);
  std::map<unsigned, std::vector<std::set<uintptr_t>>> phases;  // phase -> per bank, its words
  for (size_t i = 0; i < lanes.size(); ++i) {
    auto& banks = phases[lane_ids[i] / lanes_per_phase];
    banks.resize(kBanks);
    for (unsigned w = 0; w < words; ++w) {
      uintptr_t word = lanes[i] / 4 + w;
      banks[word % kBanks].insert(word);
    }
  }
  ++counters_.traced_shared;
  for (const auto& [phase, banks] : phases) {
    size_t ways = 1;
    for (const auto& b : banks) ways = std::max(ways, b.size());
    counters_.shared_wavefronts += ways;
    ++counters_.shared_phases;
  }
}

void Recorder::warp_done(unsigned w) {
  unsigned first = w * kWarp, last = std::min(threads_, first + kWarp);
  std::vector<uintptr_t> lanes;
  std::vector<unsigned> lane_ids;
  for (const void* site : site_order_) {
    const Site* any = nullptr;
    uint64_t steps = 0, traced = 0;
    for (unsigned t = first; t < last; ++t) {
      auto it = sites_[t].find(site);
      if (it == sites_[t].end()) continue;
      any = &it->second;
      steps = std::max(steps, it->second.count);
      traced = std::max<uint64_t>(traced, it->second.addresses.size());
    }
    if (any == nullptr) continue;
    if (any->global) (any->write ? counters_.global_stores : counters_.global_loads) += steps;
    else counters_.shared_requests += steps;
    for (size_t k = 0; k < traced; ++k) {
      lanes.clear(), lane_ids.clear();
      for (unsigned t = first; t < last; ++t) {
        auto it = sites_[t].find(site);
        if (it == sites_[t].end() || k >= it->second.addresses.size()) continue;
        lanes.push_back(it->second.addresses[k]);
        lane_ids.push_back(t - first);
      }
      if (any->global) global_request(lanes, any->size, any->write);
      else shared_request(lanes, lane_ids, any->size);
    }
  }
  for (unsigned t = first; t < last; ++t) {
    traced_[t] = 0;
    recent_[t] = Recent();
    sites_[t].clear();
  }
}

void Recorder::block_done() {
  for (unsigned w = 0; w * kWarp < threads_; ++w) warp_done(w);
  ++counters_.blocks;
  counters_.thread_runs += threads_;
  for (unsigned t = 0; t < threads_; ++t) {
    counters_.statements += statements_[t];
    counters_.busiest_thread_statements = std::max(counters_.busiest_thread_statements, statements_[t]);
    counters_.fma += fma_[t];
    statements_[t] = fma_[t] = 0;
  }
  site_order_.clear();
}

}  // namespace tc::backends::cuda::profile

// row_blocks.cpp — row reductions (softmax's max and sum, layernorm's mean and variance) and the
// stages they feed computed inside a root stage's loop over blocks of rows (cpu.rows), one pass
// per block while its rows are in cache (scheduler.h).
#include <algorithm>

#include "backends/cpu/schedule/scheduler.h"

namespace tc::backends::cpu::scheduling {

void Scheduler::form_row_blocks() {
  size_t n = p_.stages.size();
  block_host_.assign(n, -1);
  block_rows_.assign(n, 0);
  block_loop_.assign(n, Var());
  if (k_.rows == 0) return;
  for (int h = static_cast<int>(n) - 1; h >= 0; --h) {
    const Stage& hs = p_.stages[h];
    bool can_host = root_[h] && hosts_[h] < 0 && block_host_[h] < 0 && transposing_rows_[h] == 0 && !hs.forced &&
                    hs.vars.size() >= 2 &&
                    (hs.kind == Stage::Kind::Output || hs.kind == Stage::Kind::Pointwise);
    if (!can_host) continue;
    std::vector<int> members;
    bool row_reduction = false, across_rows = false;
    for (int q = h - 1; q >= 0; --q) {
      if (!row_local(q, h)) continue;
      block_host_[q] = h;
      members.push_back(q);
      const Stage& qs = p_.stages[q];
      if (qs.kind == Stage::Kind::Reduction && qs.vars.size() < hs.vars.size()) {
        row_reduction = true;
        // vectorised along its only dimension, the rows (softmax's NaN-propagating max,
        // which Halide cannot split along the row)
        across_rows = across_rows || (qs.vars.size() == 1 && qs.contiguous_rvar < 0);
      }
    }
    if (!row_reduction) {
      for (int m : members) block_host_[m] = -1;
      continue;
    }
    block_rows_[h] = rows_per_block(hs, across_rows);
    block_loop_[h] = Var(hs.func.name() + "_rows");
  }
}

bool Scheduler::row_local(int q, int h) const {
  const Stage& s = p_.stages[q];
  const Stage& hs = p_.stages[h];
  bool kind_ok = s.kind == Stage::Kind::Pointwise || (s.kind == Stage::Kind::Reduction && host_[q] < 0);
  if (!kind_ok || s.forced || s.uses.empty() || s.vars.empty() || hosts_[q] >= 0 || block_host_[q] >= 0 ||
      transposing_host_[q] >= 0)
    return false;
  size_t last = s.vars.size() - 1, host_last = hs.vars.size() - 1;
  if (s.extents[last] != hs.extents[host_last] || s.min(last) != hs.min(host_last)) return false;
  for (const Use& u : s.uses)
    if ((u.consumer != h && block_host_[u.consumer] != h) || u.leading < 1 || !u.whole_rows) return false;
  return true;
}

int Scheduler::rows_per_block(const Stage& h, bool across_rows) const {
  int64_t rows = h.extents.back();
  int64_t r = k_.rows > 0 ? k_.rows : (k_.vector > 0 ? k_.vector : target_.natural_vector_size(Halide::Float(32)));
  int64_t row_bytes = h.type.bytes();
  for (size_t d = 0; d + 1 < h.vars.size(); ++d) row_bytes *= h.extents[d];
  if (k_.rows < 0)
    while (r > 1 && (rows / r < 2 * k_.threads || (!across_rows && r * row_bytes > kRowBlockBytes))) r /= 2;
  return static_cast<int>(std::max<int64_t>(1, std::min(r, rows)));
}

Stage Scheduler::in_block(const Stage& s, int h) const {
  Stage local = s;
  local.extents.back() = std::min<int64_t>(local.extents.back(), block_rows_[h]);
  return local;
}

void Scheduler::schedule_row_blocks(int h) {
  Stage& s = p_.stages[h];
  Func& f = s.func;
  f.compute_root();
  int L = innermost_lanes(s);
  size_t n = s.vars.size();
  std::string what = "computed at root in blocks of " + std::to_string(block_rows_[h]) + " rows";
  const auto shift = Halide::TailStrategy::ShiftInwards;
  if (L > 1) {
    f.vectorize(s.vars[0], L, shift);
    what += ", vectorized " + std::to_string(L);
  }
  Var row("row");
  f.split(s.vars[n - 1], block_loop_[h], row, block_rows_[h], shift);
  if (k_.parallel) {
    f.parallel(block_loop_[h]);
    what += ", blocks in parallel";
  }
  say(s, what);
}

void Scheduler::schedule_in_block(Stage s, int h) {
  Func& f = s.func;
  f.compute_at(block_level(h));
  int L = innermost_lanes(s);
  std::string what = "computed in each row block of " + p_.stages[h].func.name();
  if (L > 1) {
    f.vectorize(s.vars[0], L, Halide::TailStrategy::ShiftInwards);
    what += ", vectorized " + std::to_string(L);
  }
  say(s, what);
}

}  // namespace tc::backends::cpu::scheduling

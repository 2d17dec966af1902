// transposing_hosts.cpp — a product computed transposed (transpose_result.h) hosted by the stage
// that copies it back, per block of rows, in 8x8 tiles transposed in registers; and copies
// (Pack stages) made whole or as a reduction's panel (scheduler.h).
#include <algorithm>

#include "backends/cpu/schedule/scheduler.h"

namespace tc::backends::cpu::scheduling {

void Scheduler::form_transposing_hosts() {
  size_t n = p_.stages.size();
  transposing_host_.assign(n, -1);
  transposing_rows_.assign(n, 0);
  transposing_loop_.assign(n, Var());
  transposing_tile_.assign(n, Var());
  for (size_t i = 0; i < n; ++i) {
    const Stage& r = p_.stages[i];
    if (r.kind != Stage::Kind::Reduction || !r.transposed || r.uses.size() != 1 || host_[i] >= 0) continue;
    int t = r.uses[0].consumer;
    int c = root_[t] ? t : last_of_inlined_chain(t);
    const Stage& cs = p_.stages[c];
    bool can_host = root_[c] && hosts_[c] < 0 && transposing_rows_[c] == 0 && !cs.forced &&
                    (cs.kind == Stage::Kind::Output || cs.kind == Stage::Kind::Pointwise) &&
                    cs.extents == p_.stages[t].extents && cs.type.bits() <= 32 &&
                    cs.extents[0] >= kTransposeTile && cs.extents[1] >= kTransposeTile;
    if (!can_host) continue;
    transposing_host_[i] = c;
    transposing_rows_[c] = transposing_block_rows(cs);
    transposing_loop_[c] = Var(cs.func.name() + "_blocks");
  }
}

int Scheduler::transposing_block_rows(const Stage& host) const {
  int64_t rows = host.extents[0];
  // A block holds whole 8x8 tiles: fewer rows than a tile would shift the tile's rows before
  // the block's first (a read before the tensor where the block is the first).
  if (k_.rows >= 0) return static_cast<int>(k_.rows > 0 ? std::clamp<int64_t>(k_.rows, kTransposeTile, rows) : rows);
  int64_t row_bytes = host.extents[1] * host.type.bytes();
  int64_t most = std::max<int64_t>(kTransposeTile, kTransposingBlockBytes / std::max<int64_t>(1, row_bytes));
  int64_t threads = std::max(1, k_.threads);
  int64_t blocks = threads * ((rows + threads * most - 1) / (threads * most));
  return static_cast<int>(std::max<int64_t>(kTransposeTile, (rows + blocks - 1) / blocks));
}

void Scheduler::schedule_transposing_host(int c) {
  Stage& s = p_.stages[c];
  Func& f = s.func;
  f.compute_root();
  const auto shift = Halide::TailStrategy::ShiftInwards;
  Var rows("rows"), xi("xi"), yi("yi"), xo("xo"), yo("yo");
  f.split(s.vars[0], transposing_loop_[c], rows, transposing_rows_[c], shift);
  f.split(rows, xo, xi, kTransposeTile, shift).split(s.vars[1], yo, yi, kTransposeTile, shift);
  std::vector<VarOrRVar> order = {xi, yi, xo, yo};
  std::vector<Var> outer = {transposing_loop_[c]};
  for (size_t d = 2; d < s.vars.size(); ++d) outer.push_back(s.vars[d]);
  order.insert(order.end(), outer.begin(), outer.end());
  f.reorder(order).vectorize(xi).unroll(yi);
  transposing_tile_[c] = xo;
  bool run_parallel = parallel();
  transposing_loop_[c] = fuse_outer(f, outer, f.name() + "_par", run_parallel);
  say(s, "computed at root in blocks of " + std::to_string(transposing_rows_[c]) +
             " rows, 8x8 tiles transposed in vector registers" + (run_parallel ? ", blocks in parallel" : ""));
}

void Scheduler::schedule_pack(Stage& s, int i) {
  auto panel = panel_packs_.find(i);
  if (panel != panel_packs_.end()) return schedule_pack_in_panel(s, panel->second);
  Func& f = s.func;
  f.compute_root();
  bound_whole(f, s);
  int inner = s.packed_var;
  bool tiled = s.extents[inner] >= kTransposeTile && s.extents[0] >= kTransposeTile && s.type.bits() <= 32;
  std::vector<Var> outer;
  if (tiled) {
    outer = transpose_in_tiles(f, s, Halide::TailStrategy::ShiftInwards);
  } else {
    for (size_t d = 0; d < s.vars.size(); ++d)
      if (static_cast<int>(d) != inner) outer.push_back(s.vars[d]);
  }
  bool run_parallel = parallel() && elements(s) >= kMinParallelElements;
  if (!outer.empty()) fuse_outer(f, outer, f.name() + "_par", run_parallel);
  say(s, std::string("copy with dimension ") + std::to_string(s.vars.size() - 1 - inner) + " innermost" +
             (tiled ? ", 8x8 tiles transposed in vector registers" : "") +
             (run_parallel ? (tiled ? ", rows of tiles in parallel" : ", in parallel") : ""));
}

void Scheduler::schedule_pack_in_panel(Stage& s, const std::pair<Halide::LoopLevel, std::string>& at) {
  Func& f = s.func;
  f.compute_at(at.first);
  bool tiled = s.type.bits() <= 32;
  if (tiled) transpose_in_tiles(f, s, Halide::TailStrategy::GuardWithIf);
  say(s, std::string("copy with dimension ") + std::to_string(s.vars.size() - 1 - s.packed_var) + " innermost, per " +
             at.second + " (the panel it reads)" + (tiled ? ", 8x8 tiles transposed in vector registers" : ""));
}

std::vector<Var> Scheduler::transpose_in_tiles(Func& f, const Stage& s, Halide::TailStrategy tail) {
  int inner = s.packed_var, from = 0;
  Var xi("xi"), yi("yi"), xo("xo"), yo("yo");
  f.split(s.vars[inner], xo, xi, kTransposeTile, tail).split(s.vars[from], yo, yi, kTransposeTile, tail);
  std::vector<VarOrRVar> order = {xi, yi, xo, yo};
  std::vector<Var> outer = {yo};
  for (size_t d = 1; d < s.vars.size(); ++d)
    if (static_cast<int>(d) != inner) {
      order.push_back(s.vars[d]);
      outer.push_back(s.vars[d]);
    }
  f.reorder(order).vectorize(xi).vectorize(yi);
  return outer;
}

}  // namespace tc::backends::cpu::scheduling

// register_blocks.cpp — a reduction computed tile by tile inside its host: register blocks of
// accumulators vectorised along the contiguous dimension (the classic blocked matmul), blocks of
// the reduction (cpu.kblock), and dot products vectorised along a contiguous reduction variable
// through rfactor (scheduler.h). Which operands are copied into panels is panels.cpp's.
#include <algorithm>

#include "backends/cpu/schedule/scheduler.h"

namespace tc::backends::cpu::scheduling {

Func Scheduler::host_func(int i, Stage& r, std::string& name) {
  if (int c = transposing_host_[i]; c >= 0) {
    Func w = r.func.in();
    w.compute_at(p_.stages[c].func, transposing_loop_[c]);
    // An 8x8 tile of it read in whole rows into registers, which the host's stores then read
    // across (shuffles, not a gather a vector: Halide's block transpose).
    Func tile = w.in(p_.stages[r.uses[0].consumer].func);
    tile.compute_at(p_.stages[c].func, transposing_tile_[c]).vectorize(tile.args()[0]).unroll(tile.args()[1]);
    name = "a copy in each block of " + std::to_string(transposing_rows_[c]) + " rows of " + p_.stages[c].func.name();
    return w;
  }
  if (host_[i] >= 0) {
    name = p_.stages[host_[i]].func.name();
    Func w = p_.stages[host_[i]].func;
    w.compute_root();
    return w;
  }
  Func w = r.func.in();
  int h = block_host_[i];
  if (h >= 0) {
    w.compute_at(block_level(h));
    name = "a copy in each row block of " + p_.stages[h].func.name();
  } else {
    bound_whole(w, r);
    w.compute_root();
    name = "a copy";
  }
  return w;
}

void Scheduler::schedule_reduction(int i) {
  int h = block_host_[i];
  Stage r = h >= 0 ? in_block(p_.stages[i], h) : p_.stages[i];  // shares the Func
  // In a transposing host's block its vars[1] spans the block's rows (its tiles stay inside),
  // and the register block runs along them: the host loops over its other dimensions outside
  // the block, one value per block (a register block along one of those was shifted back
  // past its start: reads at -4 of a dimension of 5).
  if (int c = transposing_host_[i]; c >= 0) {
    r.extents[1] = std::min<int64_t>(r.extents[1], transposing_rows_[c]);
    if (r.block_var > 1) r.block_var = 1;
  }
  std::string host_name;
  Func w = host_func(i, r, host_name);
  nested_ = h >= 0 || transposing_host_[i] >= 0;
  size_t n = r.vars.size();
  if (n == 0) {
    r.func.compute_at(w, Var::outermost());
    say(r, "scalar reduction, computed inside " + host_name);
  } else if (r.contiguous_rvar >= 0) {
    schedule_dot(r, w, host_name);
  } else {
    schedule_blocked(r, w, host_name, transposing_host_[i] >= 0);
  }
  nested_ = false;
}

std::vector<VarOrRVar> Scheduler::block_outside_in(const Stage& r, std::vector<VarOrRVar> order, int replaced,
                                                   const RVar& replacement) const {
  int b = r.block_var;
  if (b >= 0) order.push_back(r.vars[b]);
  for (int k = 0; k < r.rdom.dimensions(); ++k) order.push_back(k == replaced ? replacement : r.rdom[k]);
  for (size_t d = 1; d < r.vars.size(); ++d)
    if (static_cast<int>(d) != b) order.push_back(r.vars[d]);
  return order;
}

Scheduler::Tiling Scheduler::tile_host(Stage& r, Func& w, int tx, int default_ty, int default_u, int x_per_accumulator) {
  size_t n = r.vars.size();
  int b = r.block_var;
  Tiling t;
  t.tx = tx;
  t.ty = b >= 0 ? static_cast<int>(std::min<int64_t>(k_.tile_y ? k_.tile_y : default_ty, r.extents[b])) : 1;
  t.u = std::min(k_.unroll ? k_.unroll : default_u, t.ty);
  if ((t.tx / x_per_accumulator) * t.u > kMaxAccumulators) {
    t.tx = std::max(1, kMaxAccumulators / t.u) * x_per_accumulator;
    t.narrowed = true;
  }
  std::vector<Var> hv = w.args();  // the host's pure vars, in the order of r.vars
  Var xo("xo"), yo("yo");
  // ShiftInwards everywhere: tiles overlap at the edges instead of reading past them
  // (overlapping tiles recompute identical values; the caller's outputs are never read
  // here, the Initial stage snapshots them).
  const auto shift = Halide::TailStrategy::ShiftInwards;
  w.split(hv[0], xo, t.xi, t.tx, shift);
  std::vector<VarOrRVar> order = {t.xi};
  std::vector<Var> outer = {xo};
  if (b >= 0) {
    w.split(hv[b], yo, t.yi, t.ty, shift);
    order.push_back(t.yi);
    outer.push_back(yo);
  }
  for (size_t d = 1; d < n; ++d)
    if (static_cast<int>(d) != b) outer.push_back(hv[d]);
  int64_t tasks_without_x = row_tiles(r, t.ty);
  order.insert(order.end(), outer.begin(), outer.end());
  w.reorder(order);
  // A task takes a whole row of tiles where there are enough rows for the threads: tiles
  // side by side on two threads write the same cache lines at their edges (rows that are not
  // a multiple of 64 bytes, tiles shifted inwards to overlap at the end), which measured
  // slower with 2 threads than with 1 (maxpool's 28-wide rows: 3.0 against 2.1 ms).
  if (outer.size() > 1 && tasks_without_x >= kTasksPerThread * k_.threads) {
    outer.erase(outer.begin());  // xo: a serial loop inside each task
    t.rows_per_task = true;
  }
  t.run_parallel = parallel() && steps(r) > kMinParallelSteps;
  t.outer = fuse_outer(w, outer, w.name() + "_tile", t.run_parallel);
  t.tile = t.rows_per_task ? xo : t.outer;
  if (b >= 0) w.split(t.yi, t.yi, t.yii, t.u, shift);
  return t;
}

int Scheduler::balanced_block_rows(const Stage& r, int vectors, int default_u, int registers) const {
  if (r.block_var < 0 || k_.unroll || k_.tile_y) return 0;
  int64_t rows = r.extents[r.block_var];
  int most = std::max(1, registers * 3 / 4 / std::max(1, vectors));
  int64_t covered = (rows + default_u - 1) / default_u * default_u;
  if (rows > 2 * most || covered * 10 <= rows * 11) return 0;
  int64_t blocks = (rows + most - 1) / most;
  return static_cast<int>((rows + blocks - 1) / blocks);
}

int Scheduler::block_vectors(int64_t extent, int lanes, int most, int wider) {
  int best = 1;
  double best_use = 0;
  std::vector<int> order = {most};
  if (wider > most) order.push_back(wider);
  for (int v = most - 1; v >= 1; --v) order.push_back(v);
  for (int v : order) {
    int64_t width = static_cast<int64_t>(v) * lanes;
    int64_t tiles = (extent + width - 1) / width;
    double use = static_cast<double>(extent) / static_cast<double>(std::max(tiles * width, extent));
    if (use >= 0.9) return v;
    if (v <= most && use > best_use + 1e-9) best = v, best_use = use;  // `wider` only where it fits
  }
  return best;
}

void Scheduler::schedule_blocked(Stage& r, Func& w, const std::string& host_name, bool in_block) {
  int L = lanes(r);
  int b = r.block_var;
  if (r.extents[0] < L) L = largest_power_of_two_at_most(r.extents[0]);
  // The default register block fills three quarters of the vector registers with
  // accumulators, the rest holding the vectors loaded per step and a broadcast: with 32
  // (AVX-512) 3 vectors x 8 rows, in tiles of 32 rows (sgemm 1024^3, 2 threads: 5.1 ms,
  // against 14.3 ms for 32x32 tiles of 2 x 4 blocks and 6.6 ms for 48x8 tiles; conv2d 4.2
  // against 5.3 ms with 2 x 4 blocks); with 16 (AVX2, SSE) 2 vectors x 6 rows, BLIS's block
  // for AVX2 (not measured here).
  bool avx512 = target_.has_feature(Halide::Target::AVX512);
  int default_u = avx512 ? 8 : 6;
  // The block width must be a multiple of the vector width: the block is computed whole.
  int tx = k_.tile_x ? k_.tile_x : block_vectors(r.extents[0], L, avx512 ? 3 : 2, avx512 ? 4 : 0) * L;
  tx = std::max(L, static_cast<int>(std::min<int64_t>(tx, r.extents[0])) / L * L);
  // Three quarters of the registers, at least one row: a row wider than that (cpu.tile=48x64
  // with cpu.vectorize=1 over 25 columns: 25 scalar accumulators) gave rows of 0, a split by 0
  // that Halide compiled to no loop at all, and the output was never written.
  if (tx / L > 3) default_u = std::max(1, kMaxAccumulators * 3 / 4 / (tx / L));
  std::map<std::string, PanelOperand> operands = panel_operands(r);
  bool streamed_panel = k_.panel_auto ? wants_streamed_panel(r, operands, tx) : k_.panel_streamed;
  int default_ty = in_block && b >= 0 ? static_cast<int>(r.extents[b]) : avx512 ? 32 : 24;
  if (streamed_panel) default_ty = panel_rows(r, tx, default_ty);
  if (int rows = balanced_block_rows(r, tx / L, default_u, avx512 ? 32 : 16); rows > 0) default_u = default_ty = rows;
  if (r.flattened_row && avx512 && b >= 0) {
    // A convolution over flattened rows: blocks of 6 output channels, a tile taking up to 64
    // of them, so each window of the input is read once for all of a layer's 64 channels
    // (conv2d 8x64x56x56, 3x3, 2 threads: 6.2 ms; 6.9 in blocks of 8, 7.2 in tiles of 32).
    default_u = 6;
    default_ty = static_cast<int>(std::min<int64_t>(64, r.extents[b]));
  }
  Tiling t = tile_host(r, w, tx, default_ty, default_u, L);
  if (L > 1) w.vectorize(t.xi, L);
  if (b >= 0) w.unroll(t.yii);
  Func& f = r.func;
  int kblock = reduction_block(r, t.tx, streamed_panel);
  if (L > 1) f.vectorize(r.vars[0], L);
  auto u = f.update();
  RVar rko("rko");
  if (kblock > 0) {
    schedule_reduction_blocks(r, w, t, kblock, rko);
  } else {
    f.compute_at(w, b >= 0 ? t.yi : t.outer);
    if (b >= 0) f.unroll(r.vars[b]);
    u.reorder(block_outside_in(r, {r.vars[0]}, -1));
    if (b >= 0) u.unroll(r.vars[b]);
  }
  bool unrolled = unroll_short_reduction(r, u, kblock > 0);
  if (L > 1) u.vectorize(r.vars[0], L);
  if (t.tx > L && t.tx % L == 0) u.unroll(r.vars[0]);
  std::string panels =
      copy_panels(r, w, t, kblock > 0 ? &rko : nullptr, L, operands, streamed_panel, k_.panel_broadcast);
  say(r, "register-blocked " + std::to_string(t.tx) + "x" + std::to_string(t.u) + " (vector " + std::to_string(L) +
             "), tiles " + std::to_string(t.tx) + "x" + std::to_string(t.ty) + " inside " + host_name +
             (kblock > 0 ? ", reduction in blocks of " + std::to_string(kblock) : "") +
             (t.run_parallel ? (t.rows_per_task ? ", rows of tiles in parallel" : ", tiles in parallel")
                             : parallel() ? ", one thread (small)" : "") +
             narrowed(t) + panels + (r.fused_multiply_add ? ", fused multiply-adds" : "") +
             (r.flattened_row ? ", over flattened rows of " + std::to_string(r.flattened_row) : "") +
             (unrolled ? ", innermost reduction loop unrolled" : ""));
}

bool Scheduler::unroll_short_reduction(const Stage& r, Halide::Stage u, bool blocked) {
  int dims = r.rdom.dimensions();
  if (dims == 0 || (blocked && dims == 1)) return false;  // a single blocked dimension is split
  const int64_t* e = Halide::Internal::as_const_int(r.rdom[0].extent());
  if (!e || *e > kUnrolledReduction) return false;
  u.unroll(r.rdom[0]);
  return true;
}

int Scheduler::reduction_block(const Stage& r, int tx, bool streamed_panel) const {
  if (k_.kblock == 0 || r.block_var < 0 || r.rdom.dimensions() == 0) return 0;
  const int64_t* extent = Halide::Internal::as_const_int(r.rdom[r.rdom.dimensions() - 1].extent());
  int kblock = k_.kblock;
  if (kblock < 0) {  // auto
    int64_t slice = static_cast<int64_t>(tx) * r.type.bytes() * reduction_length(r);
    kblock = slice > (streamed_panel ? k_.l2_bytes / 2 : kKBlockSliceBytes) ? kDefaultKBlock : 0;
  }
  return extent && kblock > 0 && *extent > kblock ? kblock : 0;
}

void Scheduler::schedule_reduction_blocks(Stage& r, Func& w, const Tiling& t, int kblock, const RVar& rko) {
  Func& f = r.func;
  int b = r.block_var, outer_k = r.rdom.dimensions() - 1;
  f.compute_at(w, t.tile);
  Var bo("bo"), bi("bi");
  RVar rki("rki");
  const auto guard = Halide::TailStrategy::GuardWithIf;
  auto u = f.update();
  u.split(r.vars[b], bo, bi, t.u, guard).split(r.rdom[outer_k], rko, rki, kblock, guard);
  std::vector<VarOrRVar> order = {r.vars[0], bi};
  for (int k = 0; k < outer_k; ++k) order.push_back(r.rdom[k]);
  order.push_back(rki);
  order.push_back(bo);
  order.push_back(rko);
  for (size_t d = 1; d < r.vars.size(); ++d)
    if (static_cast<int>(d) != b) order.push_back(r.vars[d]);
  u.reorder(order).unroll(bi);
}

void Scheduler::schedule_dot(Stage& r, Func& w, const std::string& host_name) {
  RVar rc = r.rdom[r.contiguous_rvar];
  int64_t extent = *Halide::Internal::as_const_int(rc.extent());  // the RDom is built from constants
  int L = lanes(r);
  // On a long reduction a tail shorter than a vector is guarded (GuardWithIf) rather than
  // the vector halved: a softmax row of 1000 floats keeps 16 lanes on AVX-512 where it had 8.
  // The guarded vector's loads and stores are predicated, and cost about as much as a dozen
  // whole vectors: on a short one halving is cheaper (measured on the Xeon, 2 threads:
  // tbmm with cpu.pack=0, 72 steps, 0.82 ms halved, 1.53 guarded; softmax, 1000, about even).
  bool tail = extent % L != 0 && extent >= kGuardedTailSteps * L;
  if (!tail)
    while (L > 1 && extent % L != 0) L /= 2;
  int b = r.block_var;
  int tx = static_cast<int>(std::min<int64_t>(k_.tile_x ? k_.tile_x : 4, r.extents[0]));
  Tiling t = tile_host(r, w, tx, 4, 4, 1);
  if (b >= 0) w.unroll(t.yii);
  Var at = b >= 0 ? t.yi : t.outer;
  Func& f = r.func;
  f.compute_at(w, at);
  if (L < 4) {
    say(r, "scalar reduction, blocks inside " + host_name);
    return;
  }
  RVar rco("rco"), rci("rci");
  Var lane("lane");
  f.update().split(rc, rco, rci, L, Halide::TailStrategy::GuardWithIf);
  Func partial = f.update().rfactor(rci, lane);
  // The lanes innermost in storage: rfactor puts the new var last, so each partial vector
  // was stored with a stride, a scatter and a gather per step unless LLVM kept the block in
  // registers (measured on the Xeon, 2 threads: softmax 0.076 -> 0.055 ms, layernorm 0.043
  // -> 0.029; with a guarded last vector, which keeps the block in memory, tbmm with
  // cpu.pack=0 took 20 ms).
  std::vector<Var> storage = {lane};
  for (const Var& v : partial.args())
    if (v.name() != lane.name()) storage.push_back(v);
  partial.reorder_storage(storage);
  partial.compute_at(w, at).vectorize(lane);
  std::vector<VarOrRVar> order = block_outside_in(r, {lane, r.vars[0]}, r.contiguous_rvar, rco);
  partial.update().reorder(order).vectorize(lane);
  if (t.tx > 1) partial.update().unroll(r.vars[0]);
  if (b >= 0) partial.update().unroll(r.vars[b]);
  say(r, "vectorized along its contiguous reduction variable (rfactor " + std::to_string(L) + " lanes" +
             (tail ? ", the last vector guarded" : "") + "), blocks " +
             std::to_string(t.tx) + "x" + std::to_string(t.u) + " inside " + host_name + narrowed(t));
}

std::string Scheduler::narrowed(const Tiling& t) {
  return t.narrowed ? " (tile narrowed to " + std::to_string(kMaxAccumulators) + " accumulator vectors)" : "";
}

}  // namespace tc::backends::cpu::scheduling

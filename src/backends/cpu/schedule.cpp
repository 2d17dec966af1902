// schedule.cpp — see schedule.h. The default schedule:
//   - producers used once, outside any reduction loop, are inlined; others computed whole;
//   - a reduction is computed tile by tile inside its host: the pointwise consumer that reads
//     it element for element (fusing, say, a bias and ReLU into a matmul), else a copy
//     (Func::in). The host is tiled TX x TY over the contiguous dimension and the register
//     block dimension; the reduction runs over a TX x U block whose accumulators stay in
//     registers, vectorised along the contiguous dimension, with the reduction loops outside
//     the block (the classic register-blocked matmul); a long product's streamed operand is
//     copied per tile into a contiguous panel, the tile's rows sized to L2, where a cache model
//     from the host's L1/L2 sizes says its strided strips would come from L2 (cpu.panel=auto);
//     a short innermost reduction loop (a 3x3 convolution's kw) is unrolled;
//   - a reduction computed transposed (transpose_result.h) is hosted by the stage that copies
//     it back: per block of that stage's rows, the block's tiles, then 8x8 tiles transposed
//     in registers;
//   - a reduction whose reads are contiguous only along a reduction variable (dot products,
//     row sums) is vectorised along that variable instead, through rfactor;
//   - row blocks: where a def's row reductions (softmax's max and sum, layernorm's mean and
//     variance) and the stages they feed are all row-local to a root stage (each reads its
//     producers at its own first index), they are computed inside that stage's loop over blocks
//     of rows (cpu.rows), one pass per block while its rows are in cache, instead of one pass
//     over the whole tensor per stage;
//   - root stages vectorise their contiguous dimension and run their outer loops in parallel;
//   - a scatter's update (computed subscripts, lower.h) runs serially, or in parallel over its
//     outermost variable when that is exactly one of its written subscripts (no two threads
//     add to one element, and each element's additions keep their order).
#include "backends/cpu/schedule.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <thread>

#include "backends/cpu/contraction/contraction.h"
#include "backends/cpu/gemm_route.h"
#include "backends/cpu/transpose_result.h"
#include "backends/cpu/values.h"

namespace tc::backends::cpu {

using Halide::Func;
using Halide::RVar;
using Halide::Var;
using Halide::VarOrRVar;

namespace {

// The largest extent of any computed tensor in its last (contiguous) dimension, and in the one
// before it: the tile sizes worth trying.
std::pair<int64_t, int64_t> computed_extents(const ir::BoundDef& b) {
  int64_t x = 1, y = 1;
  for (size_t t = 0; t < b.tensors.size(); ++t) {
    if (b.def().tensors[t].role == ir::TensorRole::Input) continue;
    const auto& shape = b.tensors[t].shape;
    if (!shape.empty()) x = std::max(x, shape.back());
    if (shape.size() >= 2) y = std::max(y, shape[shape.size() - 2]);
  }
  return {x, y};
}

// Widths: powers of two and the multiples of a 16-lane vector a register block spans (48: 3
// AVX-512 vectors); rows: powers of two up to 512, where a tile whose operand is in panels
// amortises the copy (sgemm 1024^3: 48x32 tiles 10.5 ms, 48x256 7.0).
std::vector<std::string> tiles(const ir::BoundDef& b) {
  auto [x, y] = computed_extents(b);
  std::vector<std::string> widths = powers_of_two(4, x, 256);
  for (int64_t w : {48, 96})
    if (w <= x) widths.push_back(std::to_string(w));
  std::vector<std::string> out;
  for (const auto& tx : widths)
    for (const auto& ty : powers_of_two(1, y, 512)) out.push_back(tx + "x" + ty);
  return out;
}

std::vector<Knob> declare() {
  Knob vectorize{"cpu.vectorize", KnobKind::Integer, "auto", "vector width, in 32-bit lanes (1: scalar code)", true};
  vectorize.min = 1;
  vectorize.max = 64;
  vectorize.domain = fixed_values({"1", "4", "8", "16"});
  Knob tile{"cpu.tile", KnobKind::Pair, "auto",
            "output tile of a reduction: X along the last (contiguous) dimension, Y along the register-blocked one", true};
  tile.min = 1;
  tile.max = 4096;
  tile.domain = tiles;
  Knob unroll{"cpu.unroll", KnobKind::Integer, "auto", "rows of the register block (accumulators per vector)", true};
  unroll.min = 1;
  unroll.max = 32;
  unroll.domain = fixed_values({"1", "2", "4", "6", "8", "12"});
  Knob parallel{"cpu.parallel", KnobKind::Choice, "auto", "run the outer tile loops on the thread pool, or not", true};
  parallel.choices = {"outer", "none"};
  parallel.domain = fixed_values({"outer", "none"});
  Knob inline_{"cpu.inline", KnobKind::Boolean, "auto",
               "inline single-use pointwise producers into their consumer: auto (not into reduction loops), 1 always, 0 never",
               true};
  inline_.domain = fixed_values({"0", "1"});
  Knob pack{"cpu.pack", KnobKind::Boolean, "1",
            "copy the operand of a reduction read along no output dimension (the B of A * B^T) with the output's last "
            "dimension innermost, so the register-blocked schedule applies"};
  pack.domain = fixed_values({"1", "0"});
  Knob fuse{"cpu.fuse", KnobKind::Boolean, "1",
            "compute a reduction tile by tile inside the pointwise consumer that reads it element for element (a bias "
            "and ReLU after a matmul), instead of on its own first"};
  fuse.domain = fixed_values({"1", "0"});
  Knob kblock{"cpu.kblock", KnobKind::Integer, "auto",
              "length of the blocks of a register-blocked reduction's outermost reduction variable: a tile's "
              "accumulators are kept in a buffer and each block of the reduction passes over all its register blocks, "
              "reading one slice of the streamed operand from L1; 0: the whole reduction per register block",
              true};
  kblock.min = 0;
  kblock.max = 65536;
  kblock.domain = fixed_values({"0", "64", "128", "256"});
  Knob rows{"cpu.rows", KnobKind::Integer, "auto",
            "rows of the outermost dimension per block where row reductions (softmax, layernorm) and the stages "
            "they feed are computed together block by block, and rows of a product computed transposed "
            "(cpu.transpose) per block of its result copied back; 0: every stage over the whole tensor",
            true};
  rows.min = 0;
  rows.max = 4096;
  rows.domain = [](const ir::BoundDef& b) {
    std::vector<std::string> v = {"0"};
    int64_t n = 1;
    for (size_t t = 0; t < b.tensors.size(); ++t)
      if (b.def().tensors[t].role != ir::TensorRole::Input && !b.tensors[t].shape.empty())
        n = std::max(n, b.tensors[t].shape.front());
    for (const auto& r : powers_of_two(1, n, 64)) v.push_back(r);
    return v;
  };
  Knob panel{"cpu.panel", KnobKind::Choice, "auto",
             "copy a register-blocked reduction's operands per tile (per reduction block with cpu.kblock) into "
             "contiguous panels in the order the block reads them: the streamed operand (read along the tile's "
             "contiguous dimension) as a panel of the tile's width, the broadcast one (a convolution's weights, A "
             "in A * B) with the register block's dimension innermost; none, streamed, broadcast or both; auto: "
             "the streamed operand when a tile reads narrow strips of its rows and they overflow L1",
             true};
  panel.choices = {"none", "streamed", "broadcast", "both"};
  panel.domain = fixed_values({"none", "streamed", "broadcast", "both"});
  Knob blas{"cpu.blas", KnobKind::Boolean, "0",
            "compute a def that is one plain (batched) matrix product with the system's CBLAS sgemm/dgemm (loaded "
            "at run time: $TC_CBLAS, else OpenBLAS, BLIS, libblas.so.3); where there is none, or the def is not such "
            "a product, the pipeline computes it"};
  blas.tried_first = true;
  blas.domain = [](const ir::BoundDef& b) {
    return plan_gemm(b) && cblas() ? std::vector<std::string>{"0", "1"} : std::vector<std::string>{};
  };
  Knob fma{"cpu.fma", KnobKind::Boolean, "1",
           "accumulate a float32/float64 += reduction whose right-hand side is one product (a matmul's, a "
           "convolution's) with fused multiply-adds, one rounding a step as BLAS does; 0: a multiply, then an add "
           "(the reference's bits)"};
  Knob flatten{"cpu.flatten", KnobKind::Boolean, "auto",
               "compute a valid convolution's output at the positions h*W + w of its input's rows (W their "
               "length), vectors running along whole input planes instead of along output rows narrower than W, "
               "where the input's rows are W apart (else the general variant runs); auto: where the output rows "
               "leave more than 10% of the vector lanes unused, the flattened rows at most 12.5%, and the "
               "reduction is long enough for the lanes saved to pay for the copy back into the output's rows",
               true};
  flatten.domain = [](const ir::BoundDef& b) {
    return plan_row_flattening(b, 1, 0).empty() ? std::vector<std::string>{} : std::vector<std::string>{"0", "1"};
  };
  Knob transpose{"cpu.transpose", KnobKind::Boolean, "auto",
                 "compute a reduction none of whose reads is contiguous in its last written variable (C(m,n) +=! "
                 "A(m,k) * B(n,k)) with its last two dimensions swapped, its vectors along the second-last variable, "
                 "and copy the result back in 8x8 tiles transposed in registers; auto: where what it copies (A's M x K "
                 "and the result's M x N) is at most half of what the untransposed form copies (B's N x K)",
                 true};
  transpose.domain = [](const ir::BoundDef& b) {
    return plan_transposed_results(b, 1).empty() ? std::vector<std::string>{} : std::vector<std::string>{"0", "1"};
  };
  Knob contract{"cpu.contract", KnobKind::Boolean, "auto",
                "compute a def that is one sum of products of two tensors (any index order, batch indices, float or "
                "double) with libtc's contraction code: both operands packed into micro-panels straight from their "
                "layouts, a register-blocked micro-kernel for the vector ISA, blocks sized from the host's caches, "
                "threads over blocks of the output; 0: the pipeline; auto: 1 unless cpu.fma=0 (its sums are fused "
                "multiply-adds)",
                true};
  Knob blocks{"cpu.blocks", KnobKind::Sizes, "auto",
              "the contraction route's blocks MCxKCxNC: rows of A packed at a time (a multiple of the "
              "micro-kernel's), steps of the sum, columns of B packed at a time; auto: from the host's caches "
              "(an A block in half of L2, a B micro-panel in half of L1, a B block in half a thread's share of L3)",
              true};
  blocks.min = 1;
  blocks.max = 1 << 20;
  blocks.max_items = 3;
  blocks.domain = [](const ir::BoundDef& b) {
    return plan_contraction(b) ? std::vector<std::string>{"auto", "96x128x4096", "144x256x4096", "288x256x8192",
                                                           "192x512x4096", "480x384x8192", "96x1024x2048"}
                               : std::vector<std::string>{};
  };
  contract.tried_first = true;
  contract.domain = [](const ir::BoundDef& b) {
    return plan_contraction(b) ? std::vector<std::string>{"1", "0"} : std::vector<std::string>{};
  };
  return {vectorize, tile, unroll,    parallel,  inline_,  pack,     fuse,    kblock,
          rows,      panel, blas, fma, flatten, transpose, contract, blocks};
}

}  // namespace

const std::vector<Knob>& cpu_knobs() {
  static const std::vector<Knob> kKnobs = declare();
  return kKnobs;
}

CpuSchedule CpuSchedule::from_options(const KnobValues& o) {
  CpuSchedule s;
  auto number = [&](const char* key) { return o.is_auto(key) ? 0 : static_cast<int>(o.integer(key)); };
  s.vector = number("cpu.vectorize");
  if (!o.is_auto("cpu.tile")) {
    s.tile_x = static_cast<int>(o.get("cpu.tile").x);
    s.tile_y = static_cast<int>(o.get("cpu.tile").y);
  }
  s.unroll = number("cpu.unroll");
  s.parallel = o.text("cpu.parallel") != "none";
  s.inline_mode = o.is_auto("cpu.inline") ? -1 : static_cast<int>(o.integer("cpu.inline"));
  s.pack = o.flag("cpu.pack");
  s.fuse = o.flag("cpu.fuse");
  s.rows = o.is_auto("cpu.rows") ? -1 : static_cast<int>(o.integer("cpu.rows"));
  s.kblock = o.is_auto("cpu.kblock") ? -1 : static_cast<int>(o.integer("cpu.kblock"));
  const std::string& panel = o.text("cpu.panel");
  s.panel_auto = o.is_auto("cpu.panel");
  s.panel_streamed = panel == "streamed" || panel == "both";
  s.panel_broadcast = panel == "broadcast" || panel == "both";
  s.blas = o.flag("cpu.blas");
  s.fma = o.flag("cpu.fma");
  s.flatten = o.is_auto("cpu.flatten") ? -1 : static_cast<int>(o.integer("cpu.flatten"));
  s.transpose = o.is_auto("cpu.transpose") ? -1 : static_cast<int>(o.integer("cpu.transpose"));
  s.contract = o.is_auto("cpu.contract") ? -1 : static_cast<int>(o.integer("cpu.contract"));
  if (!o.is_auto("cpu.blocks")) {
    const std::vector<int64_t>& b = o.get("cpu.blocks").sizes;
    s.blocks = {b[0], b.size() > 1 ? b[1] : 0, b.size() > 2 ? b[2] : 0};
  }
  s.threads = static_cast<int>(o.integer("threads"));
  if (s.threads == 0) s.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return s;
}

namespace {

int largest_power_of_two_at_most(int64_t n) {
  int p = 1;
  while (p * 2 <= n && p < 1024) p *= 2;
  return p;
}

class Scheduler {
 public:
  Scheduler(LoweredPipeline& p, const CpuSchedule& k, const Halide::Target& t) : p_(p), k_(k), target_(t) {}

  std::string run() {
    size_t n = p_.stages.size();
    host_.assign(n, -1);
    hosts_.assign(n, -1);
    root_.assign(n, false);
    for (size_t i = 0; i < n; ++i) place(static_cast<int>(i));
    form_transposing_hosts();
    form_row_blocks();
    for (size_t i = 0; i < n; ++i)
      if (root_[i] && block_host_[i] < 0 && p_.stages[i].kind != Stage::Kind::Output &&
          p_.stages[i].kind != Stage::Kind::Reduction && p_.stages[i].kind != Stage::Kind::Pack)
        bound_whole(p_.stages[i].func, p_.stages[i]);  // a reduction is computed inside its host, a copy may be a panel
    // The transposing hosts first: their reductions' copies are computed at their block loop.
    for (size_t i = 0; i < n; ++i)
      if (transposing_rows_[i] > 0) schedule_transposing_host(static_cast<int>(i));
    for (size_t i = 0; i < n; ++i) {
      Stage& s = p_.stages[i];
      int b = block_host_[i];
      if (s.kind == Stage::Kind::Reduction) schedule_reduction(static_cast<int>(i));
      else if (s.kind == Stage::Kind::Pack) continue;
      else if (block_rows_[i] > 0) schedule_row_blocks(static_cast<int>(i));
      else if (root_[i] && b >= 0) schedule_in_block(in_block(s, b), b);
      else if (transposing_rows_[i] > 0) continue;  // scheduled first
      else if (root_[i] && hosts_[i] < 0) schedule_root(s);
      if (s.kind == Stage::Kind::Scatter) schedule_scatter(s);
      else if (!root_[i]) say(s, "inlined into its consumer");
    }
    // Copies (Pack stages) last: a reduction whose operand is in panels takes its copy in
    // (panel_packs_).
    for (size_t i = 0; i < n; ++i)
      if (p_.stages[i].kind == Stage::Kind::Pack) schedule_pack(p_.stages[i], static_cast<int>(i));
    return log_;
  }

 private:
  // Lanes for this stage's element type: the knob counts 32-bit lanes.
  int lanes(const Stage& s) const {
    int bits = std::max(8, s.type.bits());
    if (k_.vector > 0) return std::max(1, k_.vector * 32 / bits);
    Halide::Type t = s.type.is_bool() ? Halide::UInt(8) : s.type;
    return std::max(1, target_.natural_vector_size(t));
  }

  // The lanes a stage's innermost loop is vectorised with: its vector width, or the largest
  // power of two its extent holds where that is narrower. Never a scalar loop left for LLVM's
  // SLP vectoriser, which LLVM 14 turned into a mask broadcast its AVX-512 instruction selection
  // cannot select (v16i8 X86ISD::VBROADCAST of a v8i1: an abort, with a bool of int16
  // comparisons over 5 elements).
  int innermost_lanes(const Stage& s) const {
    return static_cast<int>(std::min<int64_t>(lanes(s), largest_power_of_two_at_most(s.extents[0])));
  }

  void say(const Stage& s, const std::string& what) { log_ += s.func.name() + ": " + what + "\n"; }

  // Loops run on the thread pool: the outer ones of root stages, not those inside a row block
  // (the blocks already run in parallel).
  bool parallel() const { return k_.parallel && !nested_; }

  // ---- row blocks ----
  // A root stage of two or more dimensions hosts row blocks when some of its producers are
  // row reductions and every producer it takes along is row-local: all its uses read it at
  // the consumer's own first index (Use::leading), its first dimension spans the host's, and
  // it is neither forced (checks: computed whole at root) nor tied to another host. Stages
  // come after their producers, so one backward pass per host decides.
  void form_row_blocks() {
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

  bool row_local(int q, int h) const {
    const Stage& s = p_.stages[q];
    const Stage& hs = p_.stages[h];
    bool kind_ok = s.kind == Stage::Kind::Pointwise || (s.kind == Stage::Kind::Reduction && host_[q] < 0);
    if (!kind_ok || s.forced || s.uses.empty() || s.vars.empty() || hosts_[q] >= 0 || block_host_[q] >= 0 ||
        transposing_host_[q] >= 0)
      return false;
    size_t last = s.vars.size() - 1, host_last = hs.vars.size() - 1;
    if (s.extents[last] != hs.extents[host_last] || s.min(last) != hs.min(host_last)) return false;
    for (const Use& u : s.uses)
      if ((u.consumer != h && block_host_[u.consumer] != h) || u.leading < 1) return false;
    return true;
  }

  // A block's rows of one temporary as wide as the host stay within this, so that they and the
  // input rows they come from are still in L1 (32-48 KiB on current x86) when the next stage
  // reads them. Measured on layernorm 128x1024 (2 threads): 4-row blocks (16 KiB per
  // temporary) 0.041 ms, 8 rows 0.063, 16 rows 0.089.
  static constexpr int64_t kRowBlockBytes = 16 * 1024;

  // cpu.rows, or by default: a vector's worth of rows when a row reduction is vectorised
  // across rows (it needs them to fill its lanes: softmax 128x1000, 16 rows 0.064 ms, 4 rows
  // 0.081), else as many as keep a block's temporary within kRowBlockBytes; halved while that
  // leaves fewer than two blocks per thread.
  int rows_per_block(const Stage& h, bool across_rows) const {
    int64_t rows = h.extents.back();
    int64_t r = k_.rows > 0 ? k_.rows : (k_.vector > 0 ? k_.vector : target_.natural_vector_size(Halide::Float(32)));
    int64_t row_bytes = h.type.bytes();
    for (size_t d = 0; d + 1 < h.vars.size(); ++d) row_bytes *= h.extents[d];
    if (k_.rows < 0)
      while (r > 1 && (rows / r < 2 * k_.threads || (!across_rows && r * row_bytes > kRowBlockBytes))) r /= 2;
    return static_cast<int>(std::max<int64_t>(1, std::min(r, rows)));
  }

  // A member's view for scheduling: the same Func, its first TC dimension one block long.
  Stage in_block(const Stage& s, int h) const {
    Stage local = s;
    local.extents.back() = std::min<int64_t>(local.extents.back(), block_rows_[h]);
    return local;
  }

  Halide::LoopLevel block_level(int h) const { return Halide::LoopLevel(p_.stages[h].func, block_loop_[h]); }

  void schedule_row_blocks(int h) {
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

  // A pointwise member of a row block, computed for the block's rows.
  void schedule_in_block(Stage s, int h) {
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

  // A stage computed on its own is computed over its whole domain, as the language runs every
  // statement whole. Without this a consumer needing fewer elements than one tile gets a
  // tile shifted inwards past the domain's start (ShiftInwards), reading inputs at -1.
  // A stage past kMaxBufferBytes gets its outermost extent through opaque() (values.h):
  // Halide 14 sizes an allocation whose extents are all constants in 32 bits whatever the
  // target ("Total size for allocation ... exceeds 2^31 - 1"), and one of a size known only
  // when it runs in 64 bits with large_buffers (cpu_backend.cpp chooses it for such kernels).
  static void bound_whole(Func f, const Stage& s) {
    std::vector<Var> args = f.args();
    size_t outermost = std::min(s.extents.size(), args.size()) - 1;
    for (size_t d = 0; d < s.extents.size() && d < args.size(); ++d) {
      Halide::Expr extent = static_cast<int>(s.extents[d]);
      if (d == outermost && s.bytes() > kMaxBufferBytes) extent = opaque(extent);
      f.bound(args[d], static_cast<int>(s.min(d)), extent);
    }
  }

  void place(int i) {
    Stage& s = p_.stages[i];
    switch (s.kind) {
      case Stage::Kind::Output:
      case Stage::Kind::Pack:
      case Stage::Kind::Initial:  // a snapshot of the caller's buffer, before anything writes it
      case Stage::Kind::Partial:
      // A scatter is computed whole at root; schedule_root schedules its pure definition (the
      // tensor before it) and schedule_scatter its update: serial in its own order, or in
      // parallel only over a variable that is exactly a written subscript (different values
      // write different elements), so no knob value can make it racy.
      case Stage::Kind::Scatter: root_[i] = true; return;
      case Stage::Kind::Reduction: {
        root_[i] = true;
        if (s.uses.size() == 1) {
          const Use& u = s.uses[0];
          Stage& c = p_.stages[u.consumer];
          bool pure_consumer = c.kind == Stage::Kind::Pointwise || c.kind == Stage::Kind::Output;
          // The host is tiled by the reduction's extents: it must have the same domain (a
          // consumer reading t1(i) over fewer i would get tiles shifted below 0).
          bool same_domain = c.extents == s.extents && c.mins == s.mins;
          if (k_.fuse && u.pointwise && !u.in_loop && pure_consumer && same_domain && hosts_[u.consumer] < 0) {
            int host = last_of_inlined_chain(u.consumer);
            host_[i] = host;
            hosts_[host] = i;
            root_[host] = true;
          }
        }
        return;
      }
      case Stage::Kind::Pointwise: {
        if (hosts_[i] >= 0) return;  // already made a root host
        bool single = s.uses.size() == 1;
        bool inline_it = k_.inline_mode == 1 ? single : k_.inline_mode == 0 ? false : single && !s.uses[0].in_loop;
        // A check is computed whole at root, never inlined: the sink reads only two of its points.
        if (s.forced) inline_it = false;
        root_[i] = !inline_it;
        return;
      }
    }
  }

  // Whether place() will inline pointwise stage `c` into its one consumer (cpu.inline).
  bool will_inline(const Stage& c) const {
    if (c.kind != Stage::Kind::Pointwise || c.forced || c.uses.size() != 1) return false;
    return k_.inline_mode == 1 || (k_.inline_mode < 0 && !c.uses[0].in_loop);
  }

  // The host of a reduction whose pointwise consumer is `c`: `c` itself, or, where `c` is
  // inlined into a consumer that reads it element for element over the same domain (fcrelu's
  // bias + ReLU inlined into the output's copy), that consumer, followed while the chain goes
  // on. Hosting in `c` while `c` is inlined would leave the tile loops nowhere; hosting in
  // the stage `c` was inlined into keeps the bias and ReLU in the tile's loop instead of a
  // separate pass over the whole output (fcrelu 128x1000x1024 on Zen 5: 1.14 -> 0.82 ms).
  int last_of_inlined_chain(int c) const {
    while (will_inline(p_.stages[c])) {
      const Use& u = p_.stages[c].uses[0];
      const Stage& next = p_.stages[u.consumer];
      bool pure_next = next.kind == Stage::Kind::Pointwise || next.kind == Stage::Kind::Output;
      bool same_domain = next.extents == p_.stages[c].extents && next.mins == p_.stages[c].mins;
      if (!u.pointwise || u.in_loop || !pure_next || !same_domain || hosts_[u.consumer] >= 0) break;
      c = u.consumer;
    }
    return c;
  }

  // Fuses `outer` (in loop order, innermost first) into one loop, run in parallel if asked.
  Var fuse_outer(Func& f, std::vector<Var> outer, const std::string& name, bool run_parallel) {
    Var fused = outer[0];
    for (size_t d = 1; d < outer.size(); ++d) {
      Var v(name + std::to_string(d));
      f.fuse(fused, outer[d], v);
      fused = v;
    }
    if (run_parallel) f.parallel(fused);
    return fused;
  }

  // Below this many elements a pointwise root stage or a copy runs on one thread: handing
  // work to the pool's workers costs more than the work (a gather's range checks, 128x50
  // indices: measured 0.053 against 0.043 ms for the whole lut1 with and without checks while
  // they ran in parallel).
  static constexpr int64_t kMinParallelElements = 16384;
  // ... and a reduction of at most this many steps (output elements x reduction extent).
  // MLP3's layers (128x128 -> 64 -> 32 -> 2: 1M, 262k, 8k steps), 2 threads: 0.032 ms with
  // every loop in parallel, 0.019 with the last two on one thread; lut1's gathers (128x64x50:
  // 410k steps, each a load from a 25 MB table) take 0.045 ms on one thread, 0.022 on two.
  static constexpr int64_t kMinParallelSteps = 1 << 18;

  static int64_t elements(const Stage& s) {
    int64_t e = 1;
    for (int64_t x : s.extents) e *= x;
    return e;
  }

  static int64_t steps(const Stage& r) { return elements(r) * reduction_length(r); }

  // The product of a reduction's constant RDom extents.
  static int64_t reduction_length(const Stage& r) {
    int64_t n = 1;
    for (int k = 0; k < r.rdom.dimensions(); ++k)
      if (const int64_t* e = Halide::Internal::as_const_int(r.rdom[k].extent())) n *= *e;
    return n;
  }

  // Tiles of `ty` rows of the block var a reduction's domain has, along every dimension but
  // the contiguous one: the parallel tasks if each took a whole row of tiles.
  static int64_t row_tiles(const Stage& r, int ty) {
    int b = r.block_var;
    int64_t n = b >= 0 ? (r.extents[b] + ty - 1) / ty : 1;
    for (size_t d = 1; d < r.extents.size(); ++d)
      if (static_cast<int>(d) != b) n *= r.extents[d];
    return n;
  }

  void schedule_root(Stage& s) {
    Func& f = s.func;
    f.compute_root();
    size_t n = s.vars.size();
    if (n == 0) {
      say(s, "computed at root");
      return;
    }
    int L = innermost_lanes(s);
    std::string what = "computed at root";
    Var inner = s.vars[0];
    bool run_parallel = parallel() && elements(s) >= kMinParallelElements;
    // A long 1-d stage runs in parallel chunks of 4096 elements, each vectorised (split first:
    // splitting the vectorised variable would make chunks of 4096 vectors, which ShiftInwards
    // then shifts below index 0 whenever the extent is under 4096 vectors).
    if (n == 1 && run_parallel) {
      Var o("o"), i("i");
      f.split(s.vars[0], o, i, 4096, Halide::TailStrategy::ShiftInwards).parallel(o);
      inner = i;
      what += ", chunks of 4096 in parallel";
    }
    if (L > 1) {
      f.vectorize(inner, L, Halide::TailStrategy::ShiftInwards);
      what += ", vectorized " + std::to_string(L);
    }
    if (n >= 2) {
      std::vector<Var> outer(s.vars.begin() + 1, s.vars.end());
      fuse_outer(f, outer, f.name() + "_par", run_parallel);
      what += run_parallel ? ", outer loops in parallel" : parallel() ? ", one thread (small)" : "";
    }
    say(s, what);
  }

  // ---- transposing hosts ----
  // A transposed reduction (transpose_result.h) is copied back into its tensor's order by the
  // root stage its transposing copy is (or is inlined into). That stage hosts it: per block of
  // its rows (its vars[0], the reduction's vars[1]; every column), the reduction's copy
  // computes the block in one tile, and the host transposes it out while it is still in
  // cache, in 8x8 tiles vectorised both ways (whole rows in, shuffles, whole rows out). tmm
  // 128x1000x1024, 2 threads: 0.89 ms; the transposed result computed whole, then copied back,
  // 1.01 ms (that copy read across the result's rows, one scalar load a lane: 1.10).
  void form_transposing_hosts() {
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

  // The block's transposed result stays within this (in L2, read back by the transposing
  // copy right after it is computed).
  static constexpr int64_t kTransposingBlockBytes = 128 * 1024;

  // cpu.rows (0: one block), or by default: the rows split into equal blocks of at most
  // kTransposingBlockBytes, as many as a multiple of the threads (no block shifted onto its
  // neighbour, none left to one thread alone). tmm 1000 rows, 2 threads: 4 blocks of 250
  // 0.90 ms; 8 of 128 (the last shifted) 1.03, 4 of 256 1.08, 16 of 64 0.99.
  int transposing_block_rows(const Stage& host) const {
    int64_t rows = host.extents[0];
    if (k_.rows >= 0) return static_cast<int>(k_.rows > 0 ? std::min<int64_t>(k_.rows, rows) : rows);
    int64_t row_bytes = host.extents[1] * host.type.bytes();
    int64_t most = std::max<int64_t>(kTransposeTile, kTransposingBlockBytes / std::max<int64_t>(1, row_bytes));
    int64_t threads = std::max(1, k_.threads);
    int64_t blocks = threads * ((rows + threads * most - 1) / (threads * most));
    return static_cast<int>(std::max<int64_t>(kTransposeTile, (rows + blocks - 1) / blocks));
  }

  // Loops, innermost first: an 8x8 tile (its lanes along the host's rows, as it stores them),
  // the tiles, then the blocks and the other dimensions, fused into one parallel loop.
  void schedule_transposing_host(int c) {
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

  // Only the outermost loop: one parallel dispatch. A plain variable further in (d in the
  // embedding gradient's d_LUT(I(b, l), d), under the loop over b) would dispatch tiny tasks
  // once per outer iteration, threads writing neighbouring elements: measured 1.3 -> 8.0 ms.
  void schedule_scatter(Stage& s) {
    if (!parallel() || s.scatter_parallel_rvar < 0 || s.scatter_parallel_rvar != s.rdom.dimensions() - 1) return;
    Halide::RVar r = s.rdom[s.scatter_parallel_rvar];
    s.func.update(0).parallel(r);
    say(s, "update in parallel over " + r.name());
  }

  // A transposing copy: 8x8 tiles vectorised both ways (whole rows in, shuffles, whole rows
  // out), rows of tiles in parallel. Not single tiles: two threads taking neighbouring 8x8
  // tiles write the two halves of the same cache lines (tmm's 1000x1024 copy, 16000 tiles:
  // 2 threads took twice as long as 1).
  void schedule_pack(Stage& s, int i) {
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

  // A copy whose reduction reads it in panels is computed per tile (per reduction block), as
  // the panel itself: the transposing copy is made where it is read, by the thread that reads
  // it, instead of a whole transposed tensor first (tmm 128x1000x1024: the 4 MB copy took a
  // third of the time). 8x8 tiles as at root, guarded: a panel's extents need not be
  // multiples of 8.
  void schedule_pack_in_panel(Stage& s, const std::pair<Halide::LoopLevel, std::string>& at) {
    Func& f = s.func;
    f.compute_at(at.first);
    bool tiled = s.type.bits() <= 32;
    if (tiled) transpose_in_tiles(f, s, Halide::TailStrategy::GuardWithIf);
    say(s, std::string("copy with dimension ") + std::to_string(s.vars.size() - 1 - s.packed_var) + " innermost, per " +
               at.second + " (the panel it reads)" + (tiled ? ", 8x8 tiles transposed in vector registers" : ""));
  }

  static constexpr int kTransposeTile = 8;

  // Copy `s` (a Pack stage) in kTransposeTile x kTransposeTile tiles vectorised both ways:
  // whole rows in, shuffles, whole rows out. Returns the loops outside a tile, innermost first.
  static std::vector<Var> transpose_in_tiles(Func& f, const Stage& s, Halide::TailStrategy tail) {
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

  // The host of reduction i: its pointwise consumer, or a copy made for it, computed at root
  // or, for a member of row blocks, in each block.
  Func host_func(int i, Stage& r, std::string& name) {
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

  void schedule_reduction(int i) {
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

  // The loop order of a reduction's update, innermost first: `inner`, the block var, the
  // reduction variables (rdom dimension `replaced`, if any, by `replacement`), then the other
  // pure vars (extent 1 inside a block).
  std::vector<VarOrRVar> block_outside_in(const Stage& r, std::vector<VarOrRVar> order, int replaced,
                                          const RVar& replacement = RVar()) const {
    int b = r.block_var;
    if (b >= 0) order.push_back(r.vars[b]);
    for (int k = 0; k < r.rdom.dimensions(); ++k) order.push_back(k == replaced ? replacement : r.rdom[k]);
    for (size_t d = 1; d < r.vars.size(); ++d)
      if (static_cast<int>(d) != b) order.push_back(r.vars[d]);
    return order;
  }

  // Tiles of the host: TX along vars[0], TY along the block var; the remaining pure vars and
  // the tile loops are fused into one parallel loop `outer`, and each tile's rows are split
  // into blocks of U (yi: the block loop, yii: the rows of one block).
  // At most this many accumulator vectors in a register block (x86-64 with AVX-512 has 32
  // vector registers): a larger block only spills, and its fully unrolled code can keep LLVM's
  // SLP vectorizer busy for minutes (measured: cpu.tile=256x8 cpu.unroll=8 on fcrelu, over 10
  // minutes in one compile). Wider tiles are narrowed to fit, and the description says so.
  static constexpr int kMaxAccumulators = 32;

  struct Tiling {
    int tx = 1, ty = 1, u = 1;
    bool narrowed = false;  // the tile's X was narrowed to kMaxAccumulators
    bool rows_per_task = false;  // a parallel task computes a whole row of tiles
    bool run_parallel = false;   // the tile loop runs on the thread pool
    Var tile;                    // the loop over tiles: `outer`, or the serial one inside a task
    Var xi{"xi"}, yi{"yi"}, yii{"yii"}, outer;
  };

  // X is the caller's (it depends on the vector width); Y and U come from the knobs.
  // x_per_accumulator: elements along X that one accumulator vector holds (the vector width
  // of a register-blocked reduction; 1 where each X element has a vector of partial sums).
  Tiling tile_host(Stage& r, Func& w, int tx, int default_ty, int default_u, int x_per_accumulator) {
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

  // Enough parallel tasks to keep every thread busy when they take unequal time.
  static constexpr int64_t kTasksPerThread = 2;

  // Rows of a register block where the block var has few rows that the default block would
  // cover with more than 10% recomputed (the last block shifted inwards): the rows split into
  // the fewest equal blocks that keep three quarters of the vector registers for
  // accumulators, one block a tile; else 0. tbmm's 26 rows, one vector wide: one block of 13
  // a tile, not 8+8+8+8 in tiles of 26 (measured on the Xeon, 2 threads: 0.78-0.82x the
  // default's time; blocks of 13 in tiles of 26, 0.91x).
  int balanced_block_rows(const Stage& r, int vectors, int default_u, int registers) const {
    if (r.block_var < 0 || k_.unroll || k_.tile_y) return 0;
    int64_t rows = r.extents[r.block_var];
    int most = std::max(1, registers * 3 / 4 / std::max(1, vectors));
    int64_t covered = (rows + default_u - 1) / default_u * default_u;
    if (rows > 2 * most || covered * 10 <= rows * 11) return 0;
    int64_t blocks = (rows + most - 1) / most;
    return static_cast<int>((rows + blocks - 1) / blocks);
  }

  // Vectors across a register block, at most `most`: the widest whose tiles cover `extent`
  // with at most 10% recomputed (the last tile is shifted inwards, overlapping its
  // neighbour), else the one that recomputes least. conv2d's 54 columns: 3 vectors of 16 would
  // compute 96 (measured 9.8 against 5.4 ms with 2), 2 compute 64. `wider` (0: none) is tried
  // right after `most`: with AVX-512, 4 vectors of 6 rows where 3 would recompute more than
  // 10% (tmm transposed, 128 columns: 64x6 blocks 1.01 ms, 32x8 1.51).
  static int block_vectors(int64_t extent, int lanes, int most, int wider) {
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

  // in_block: computed per block of a transposing host, whose extents `r` has: the default
  // tile spans the block.
  void schedule_blocked(Stage& r, Func& w, const std::string& host_name, bool in_block) {
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
    if (tx / L > 3) default_u = kMaxAccumulators * 3 / 4 / (tx / L);  // three quarters of the registers
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

  // A register block's innermost reduction loop is unrolled when it is this short or shorter
  // (a 3x3 convolution's kw): its body is then the block's FMAs a few times over instead of a
  // loop of three trips whose counter and back edge cost about as much as the body. conv2d
  // (8x64x56x56, 3x3), 2 threads: 9.43 -> 6.85 ms; unrolling kh too made it 8.08 (code size).
  static constexpr int64_t kUnrolledReduction = 4;

  // Unrolls the innermost reduction variable of `u` where it is a whole (not split into
  // blocks) RDom dimension of at most kUnrolledReduction steps; whether it did.
  static bool unroll_short_reduction(const Stage& r, Halide::Stage u, bool blocked) {
    int dims = r.rdom.dimensions();
    if (dims == 0 || (blocked && dims == 1)) return false;  // a single blocked dimension is split
    const int64_t* e = Halide::Internal::as_const_int(r.rdom[0].extent());
    if (!e || *e > kUnrolledReduction) return false;
    u.unroll(r.rdom[0]);
    return true;
  }

  // An operand of a register-blocked reduction, as panels see it.
  struct PanelOperand {
    int inner_arg = 0;   // the argument (Halide order) stored innermost: 0, or a Pack stage's
    int block_arg = -1;  // the argument that uses the block var
    bool streamed = false;
    bool gathered = false;  // read at computed subscripts
    int64_t row = 0;        // its extent along inner_arg; 0: not known
  };

  // Panels (cpu.panel), as BLAS kernels pack their operands: each operand of a register-blocked
  // reduction that cpu.panel names is read through a copy (Func::in) computed per tile, or per
  // block of the reduction where there are blocks, so it holds exactly the slice the tile reads,
  // contiguously. The streamed operand (its innermost subscript uses the tile's contiguous
  // variable: B in A * B, a convolution's input) becomes a panel as wide as the tile, read in
  // one sequential stream instead of one strided row per reduction step. The broadcast operand
  // (a subscript uses the register block's variable, none the contiguous one: A in A * B, a
  // convolution's weights) is stored with the block's dimension innermost, so that the U
  // values broadcast per step are adjacent. Only inputs and stages computed on their own are
  // copied (an inlined producer is computed where it is read). Returns the description's words.
  std::string copy_panels(Stage& r, Func& w, const Tiling& t, const RVar* rko, int lanes_,
                          const std::map<std::string, PanelOperand>& operands, bool streamed_panel, bool broadcast_panel) {
    if (!streamed_panel && !broadcast_panel) return "";
    std::string words;
    for (const auto& [name, o] : operands) {
      bool streamed = o.streamed && streamed_panel;
      bool broadcast = !o.streamed && o.block_arg >= 0 && broadcast_panel;
      if (!streamed && !broadcast) continue;
      CopySource source = copy_source(name);
      if (streamed && source.stage >= 0 && p_.stages[source.stage].kind == Stage::Kind::Pack &&
          p_.stages[source.stage].uses.size() == 1) {
        Halide::LoopLevel at = rko ? Halide::LoopLevel(r.func, *rko) : Halide::LoopLevel(w, t.tile);
        panel_packs_[source.stage] = {at, rko ? "reduction block of " + r.func.name() : "tile of " + w.name()};
        words += ", " + p_.stages[source.stage].tensor + " in panels";
        continue;
      }
      Func copy;
      std::string tensor;
      if (!copy_of(name, r.func, copy, tensor)) continue;
      if (rko) copy.compute_at(r.func, *rko);
      else copy.compute_at(w, t.tile);
      Var inner = store_innermost(copy, streamed ? o.inner_arg : o.block_arg);
      if (streamed && lanes_ > 1) copy.vectorize(inner, lanes_, Halide::TailStrategy::GuardWithIf);
      words += ", " + tensor + (streamed ? " in panels" : " in panels (block dimension innermost)");
    }
    return words;
  }

  // The operands reduction `r` reads, by name: how each is read (every read must agree).
  std::map<std::string, PanelOperand> panel_operands(const Stage& r) const {
    std::map<std::string, PanelOperand> operands;
    std::string x = r.vars[0].name(), y = r.block_var >= 0 ? r.vars[r.block_var].name() : "";
    std::string self = r.func.name();
    auto found = [&](const Halide::Internal::Call* c) {
      if (c->name == self || c->args.empty()) return;
      // A gather's slice is wherever its indices point (all of LUT's rows for each tile).
      bool gathered = false;
      for (const Halide::Expr& a : c->args) gathered = gathered || reads_memory(a);
      if (gathered) {
        operands[c->name] = PanelOperand{0, -1, false, true, 0};
        return;
      }
      PanelOperand o;
      o.row = extent_of(c->name, 0);
      for (const Stage& s : p_.stages)
        if (s.kind == Stage::Kind::Pack && s.func.name() == c->name) {
          o.inner_arg = s.packed_var;
          o.row = s.extents[s.packed_var];
        }
      o.streamed = Halide::Internal::expr_uses_var(c->args[o.inner_arg], x);
      for (size_t a = 0; a < c->args.size() && !y.empty(); ++a)
        if (o.block_arg < 0 && Halide::Internal::expr_uses_var(c->args[a], y)) o.block_arg = static_cast<int>(a);
      auto [it, fresh] = operands.emplace(c->name, o);
      if (!fresh && !it->second.gathered) {  // read twice: a panel only if every read agrees
        it->second.streamed = it->second.streamed && o.streamed;
        if (it->second.block_arg != o.block_arg) it->second.block_arg = -1;
      }
    };
    for (const Halide::Expr& v : r.func.function().update(0).values()) for_each_load(v, found);
    return operands;
  }

  // The extent of argument `arg` (Halide order) of the input or stage called `name`; 0 if not
  // a constant.
  int64_t extent_of(const std::string& name, int arg) const {
    for (const auto& in : p_.inputs)
      if (in.defined() && Func(in).name() == name && arg < in.dimensions())
        if (const int64_t* e = Halide::Internal::as_const_int(in.parameter().extent_constraint(arg))) return *e;
    for (const Stage& s : p_.stages)
      if (s.func.name() == name && arg < static_cast<int>(s.extents.size())) return s.extents[arg];
    return 0;
  }

  // cpu.panel=auto, the cache model: the streamed operand is copied into panels when a tile
  // reads a narrow strip of its rows (rows at least kPanelRowRatio times the tile's width) and
  // the strips a register block reads (tile width x reduction length) overflow half of L1.
  // Then the block's strips are a whole row apart each (sgemm 1024^3: 48 of 1024 floats, 4 KiB
  // apart, all in the same few L1 sets) and come from L2 at every step; a panel reads them in
  // one sequential stream. Where a tile reads most of each row (conv2d's 54-wide rows, tbmm's
  // 26) or the strips fit in L1, the copy only costs (conv2d: 9.9 against 9.4 ms).
  static constexpr int64_t kPanelRowRatio = 4;

  bool wants_streamed_panel(const Stage& r, const std::map<std::string, PanelOperand>& operands, int tx) const {
    int64_t strips = static_cast<int64_t>(tx) * r.type.bytes() * reduction_length(r);
    // Over flattened rows the streamed reads are windows of one long row, which the tile's
    // neighbouring steps share: a panel would copy each window (conv2d 7.3 against 6.7 ms).
    if (2 * strips <= k_.l1_bytes || r.flattened_row) return false;
    for (const auto& [name, o] : operands)
      if (o.streamed && !o.gathered && o.row >= kPanelRowRatio * tx && copy_source(name).found()) return true;
    return false;
  }

  // Rows of a tile whose streamed operand is in panels (cpu.tile auto): the panel is copied
  // once per tile and read once per register block, so more rows make the copy cheaper. As
  // many as keep the tile's rows of the broadcast operand (rows x reduction length) within half
  // of L2, where the next tile along the row finds them again, at most kMaxPanelRows and at
  // least `fewest`; halved while the tiles are too few to keep every thread busy. sgemm 1024^3,
  // 2 threads, panels 48 wide: 32 rows 10.5 ms, 64 8.6, 128 7.5, 256 7.0 (L2 2 MiB: 256).
  static constexpr int kMaxPanelRows = 256;

  int panel_rows(const Stage& r, int tx, int fewest) const {
    int b = r.block_var;
    if (b < 0) return fewest;
    int64_t row_bytes = std::max<int64_t>(1, reduction_length(r) * r.type.bytes());
    int rows = fewest;
    while (rows * 2 <= kMaxPanelRows && rows * 2 * row_bytes <= k_.l2_bytes / 2) rows *= 2;
    int64_t columns = (r.extents[0] + tx - 1) / tx;
    while (rows > fewest && columns * row_tiles(r, rows) < kTasksPerThread * k_.threads) rows /= 2;
    return rows;
  }

  // Stores and computes `copy` with its argument `arg` innermost; returns that variable.
  static Var store_innermost(Func& copy, int arg) {
    std::vector<Var> args = copy.args();
    std::vector<Var> order = {args[arg]};
    for (size_t a = 0; a < args.size(); ++a)
      if (static_cast<int>(a) != arg) order.push_back(args[a]);
    if (order.size() >= 2) copy.reorder_storage(order).reorder(std::vector<VarOrRVar>(order.begin(), order.end()));
    return order[0];
  }

  // Calls `fn` on every read of a Func or an image in `e`, outermost first.
  static void for_each_load(const Halide::Expr& e, const std::function<void(const Halide::Internal::Call*)>& fn) {
    struct Loads : Halide::Internal::IRVisitor {
      using IRVisitor::visit;
      const std::function<void(const Halide::Internal::Call*)>* fn = nullptr;
      void visit(const Halide::Internal::Call* c) override {
        if (c->call_type == Halide::Internal::Call::Image || c->call_type == Halide::Internal::Call::Halide) (*fn)(c);
        IRVisitor::visit(c);
      }
    } loads;
    loads.fn = &fn;
    e.accept(&loads);
  }

  static bool reads_memory(const Halide::Expr& e) {
    bool found = false;
    for_each_load(e, [&](const Halide::Internal::Call*) { found = true; });
    return found;
  }

  // What a panel called `name` may copy: an input (a Halide::ImageParam is read through its own
  // Func) or a root stage, by index; neither for anything else.
  struct CopySource {
    int input = -1, stage = -1;
    bool found() const { return input >= 0 || stage >= 0; }
  };

  CopySource copy_source(const std::string& name) const {
    for (size_t i = 0; i < p_.inputs.size(); ++i)
      if (p_.inputs[i].defined() && Func(p_.inputs[i]).name() == name) return {static_cast<int>(i), -1};
    for (size_t i = 0; i < p_.stages.size(); ++i)
      if (p_.stages[i].func.name() == name) {
        // A reduction is computed inside its host (its consumer, or a wrapper of its own), where
        // its readers find it: a copy of the reduction itself would read it outside that host,
        // which Halide refuses (differential fuzzer, seed 255611873: T(k,n) +=! ... read by
        // C(m,n) +=! A(m,k) * T(k,n) with cpu.panel=streamed did not compile).
        if (p_.stages[i].kind == Stage::Kind::Reduction) return {};
        if (!root_[i] || hosts_[i] >= 0 || block_host_[i] >= 0 || p_.stages[i].forced) return {};
        return {-1, static_cast<int>(i)};
      }
    return {};
  }

  // `consumer`'s own copy of the input or root stage called `name`, and the TC tensor it holds;
  // false for anything else.
  bool copy_of(const std::string& name, Func consumer, Func& copy, std::string& tensor) {
    CopySource source = copy_source(name);
    if (source.input >= 0) {
      Halide::ImageParam& in = p_.inputs[source.input];
      copy = in.in(consumer);
      tensor = in.name().rfind("in_", 0) == 0 ? in.name().substr(3) : in.name();
      return true;
    }
    if (source.stage < 0) return false;
    Stage& s = p_.stages[source.stage];
    copy = s.func.in(consumer);
    tensor = s.tensor;
    return true;
  }

  // By default a reduction is blocked when the slice of the streamed operand one tile reads
  // (tile width x the whole reduction) exceeds this; then in blocks of kDefaultKBlock. sgemm,
  // 2 threads: at 1024^3 (192 KiB slices) blocking measured 6.6 against 5.0-6.1 ms; at 2048^3
  // (384 KiB) 62 against 67 ms. Where that operand is in panels (contiguous, read in one
  // stream) the slice may fill half of L2 before blocking pays: sgemm 2048^3 with panels, 2
  // threads, blocks of 256: 88 ms, unblocked 62 (the panel then copied once per tile, not
  // once per block; OpenBLAS 54).
  static constexpr int64_t kKBlockSliceBytes = 256 * 1024;
  static constexpr int kDefaultKBlock = 256;

  // cpu.kblock where it applies: a register-blocked reduction whose outermost reduction
  // variable is longer than the block; 0 otherwise.
  int reduction_block(const Stage& r, int tx, bool streamed_panel) const {
    if (k_.kblock == 0 || r.block_var < 0 || r.rdom.dimensions() == 0) return 0;
    const int64_t* extent = Halide::Internal::as_const_int(r.rdom[r.rdom.dimensions() - 1].extent());
    int kblock = k_.kblock;
    if (kblock < 0) {  // auto
      int64_t slice = static_cast<int64_t>(tx) * r.type.bytes() * reduction_length(r);
      kblock = slice > (streamed_panel ? k_.l2_bytes / 2 : kKBlockSliceBytes) ? kDefaultKBlock : 0;
    }
    return extent && kblock > 0 && *extent > kblock ? kblock : 0;
  }

  // Reduction blocks: the accumulators of a whole tile live in a buffer computed per tile, and
  // the outermost reduction variable is split so that each step over the tile's register
  // blocks reads a kblock-long slice of the streamed operand, which stays in L1 from one block
  // to the next (the reduction blocking of BLAS kernels). GuardWithIf, never ShiftInwards:
  // recomputing part of an update would add twice.
  void schedule_reduction_blocks(Stage& r, Func& w, const Tiling& t, int kblock, const RVar& rko) {
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

  // The shortest reduction, in vectors, whose last partial vector is guarded (schedule_dot).
  static constexpr int kGuardedTailSteps = 16;

  // Reductions along a contiguous reduction variable: split it by the vector width and
  // rfactor the lanes into a vector of partial results, summed once per output element.
  void schedule_dot(Stage& r, Func& w, const std::string& host_name) {
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

  static std::string narrowed(const Tiling& t) {
    return t.narrowed ? " (tile narrowed to " + std::to_string(kMaxAccumulators) + " accumulator vectors)" : "";
  }

  LoweredPipeline& p_;
  const CpuSchedule& k_;
  Halide::Target target_;
  std::vector<int> host_;   // per reduction stage: the stage hosting it, -1: a copy
  std::vector<int> hosts_;  // per stage: the reduction it hosts, -1
  std::vector<bool> root_;
  std::vector<int> block_host_;  // per stage: the stage whose row blocks compute it, -1
  std::vector<int> block_rows_;  // per stage: rows per block when it hosts row blocks, else 0
  std::vector<Var> block_loop_;  // per host of row blocks: its loop over blocks
  std::vector<int> transposing_host_;  // per transposed reduction: the stage computing it in blocks, -1
  std::vector<int> transposing_rows_;  // per stage: rows per block when it hosts one, else 0
  std::vector<Var> transposing_loop_;  // per such host: its (fused) loop over blocks
  std::vector<Var> transposing_tile_;  // per such host: its loop over 8x8 tiles
  bool nested_ = false;          // scheduling a stage inside a row block
  // per Pack stage computed as its reduction's panel: where, and what that is ("tile of out_C")
  std::map<int, std::pair<Halide::LoopLevel, std::string>> panel_packs_;
  std::string log_;
};

}  // namespace

std::string apply_schedule(LoweredPipeline& p, const CpuSchedule& s, const Halide::Target& target) {
  return Scheduler(p, s, target).run();
}

}  // namespace tc::backends::cpu

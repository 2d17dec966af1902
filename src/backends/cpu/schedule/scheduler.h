// scheduler.h — the cpu backend's scheduler (schedule.h's apply_schedule), declared once for
// the files that define it, one per concern (the sections below name them). The default schedule:
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
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/schedule.h"

namespace tc::backends::cpu::scheduling {

using Halide::Func;
using Halide::RVar;
using Halide::Var;
using Halide::VarOrRVar;

// The largest power of two at most n (and at most 1024).
int largest_power_of_two_at_most(int64_t n);

class Scheduler {
 public:
  Scheduler(LoweredPipeline& p, const CpuSchedule& k, const Halide::Target& t) : p_(p), k_(k), target_(t) {}

  std::string run();

 private:
  // ---- scheduler.cpp: placement (inline, root, hosts), root stages, scatters ----
  // Lanes for this stage's element type: the knob counts 32-bit lanes.
  int lanes(const Stage& s) const;

  // The lanes a stage's innermost loop is vectorised with: its vector width, or the largest
  // power of two its extent holds where that is narrower. Never a scalar loop left for LLVM's
  // SLP vectoriser, which LLVM 14 turned into a mask broadcast its AVX-512 instruction selection
  // cannot select (v16i8 X86ISD::VBROADCAST of a v8i1: an abort, with a bool of int16
  // comparisons over 5 elements).
  int innermost_lanes(const Stage& s) const;

  void say(const Stage& s, const std::string& what) { log_ += s.func.name() + ": " + what + "\n"; }

  // Loops run on the thread pool: the outer ones of root stages, not those inside a row block
  // (the blocks already run in parallel).
  bool parallel() const { return k_.parallel && !nested_; }

  // A stage computed on its own is computed over its whole domain, as the language runs every
  // statement whole. Without this a consumer needing fewer elements than one tile gets a
  // tile shifted inwards past the domain's start (ShiftInwards), reading inputs at -1.
  // A stage past kMaxBufferBytes gets its outermost extent through opaque() (values.h):
  // Halide 14 sizes an allocation whose extents are all constants in 32 bits whatever the
  // target ("Total size for allocation ... exceeds 2^31 - 1"), and one of a size known only
  // when it runs in 64 bits with large_buffers (cpu_backend.cpp chooses it for such kernels).
  static void bound_whole(Func f, const Stage& s);

  void place(int i);

  // Whether place() will inline pointwise stage `c` into its one consumer (cpu.inline).
  bool will_inline(const Stage& c) const;

  // The host of a reduction whose pointwise consumer is `c`: `c` itself, or, where `c` is
  // inlined into a consumer that reads it element for element over the same domain (fcrelu's
  // bias + ReLU inlined into the output's copy), that consumer, followed while the chain goes
  // on. Hosting in `c` while `c` is inlined would leave the tile loops nowhere; hosting in
  // the stage `c` was inlined into keeps the bias and ReLU in the tile's loop instead of a
  // separate pass over the whole output (fcrelu 128x1000x1024 on Zen 5: 1.14 -> 0.82 ms).
  int last_of_inlined_chain(int c) const;

  // Fuses `outer` (in loop order, innermost first) into one loop, run in parallel if asked.
  Var fuse_outer(Func& f, std::vector<Var> outer, const std::string& name, bool run_parallel);

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

  static int64_t elements(const Stage& s);

  static int64_t steps(const Stage& r) { return elements(r) * reduction_length(r); }

  // The product of a reduction's constant RDom extents.
  static int64_t reduction_length(const Stage& r);

  // Tiles of `ty` rows of the block var a reduction's domain has, along every dimension but
  // the contiguous one: the parallel tasks if each took a whole row of tiles.
  static int64_t row_tiles(const Stage& r, int ty);

  void schedule_root(Stage& s);

  // Only the outermost loop: one parallel dispatch. A plain variable further in (d in the
  // embedding gradient's d_LUT(I(b, l), d), under the loop over b) would dispatch tiny tasks
  // once per outer iteration, threads writing neighbouring elements: measured 1.3 -> 8.0 ms.
  void schedule_scatter(Stage& s);

  // ---- row_blocks.cpp: row reductions and their consumers computed per block of rows ----
  // A root stage of two or more dimensions hosts row blocks when some of its producers are
  // row reductions and every producer it takes along is row-local: all its uses read it at
  // the consumer's own first index (Use::leading), its first dimension spans the host's, and
  // it is neither forced (checks: computed whole at root) nor tied to another host. Stages
  // come after their producers, so one backward pass per host decides.
  void form_row_blocks();

  bool row_local(int q, int h) const;

  // A block's rows of one temporary as wide as the host stay within this, so that they and the
  // input rows they come from are still in L1 (32-48 KiB on current x86) when the next stage
  // reads them. Measured on layernorm 128x1024 (2 threads): 4-row blocks (16 KiB per
  // temporary) 0.041 ms, 8 rows 0.063, 16 rows 0.089.
  static constexpr int64_t kRowBlockBytes = 16 * 1024;

  // cpu.rows, or by default: a vector's worth of rows when a row reduction is vectorised
  // across rows (it needs them to fill its lanes: softmax 128x1000, 16 rows 0.064 ms, 4 rows
  // 0.081), else as many as keep a block's temporary within kRowBlockBytes; halved while that
  // leaves fewer than two blocks per thread.
  int rows_per_block(const Stage& h, bool across_rows) const;

  // A member's view for scheduling: the same Func, its first TC dimension one block long.
  Stage in_block(const Stage& s, int h) const;

  Halide::LoopLevel block_level(int h) const { return Halide::LoopLevel(p_.stages[h].func, block_loop_[h]); }

  void schedule_row_blocks(int h);

  // A pointwise member of a row block, computed for the block's rows.
  void schedule_in_block(Stage s, int h);

  // ---- transposing_hosts.cpp: products computed transposed and copied back in 8x8 tiles ----
  // A transposed reduction (transpose_result.h) is copied back into its tensor's order by the
  // root stage its transposing copy is (or is inlined into). That stage hosts it: per block of
  // its rows (its vars[0], the reduction's vars[1]; every column), the reduction's copy
  // computes the block in one tile, and the host transposes it out while it is still in
  // cache, in 8x8 tiles vectorised both ways (whole rows in, shuffles, whole rows out). tmm
  // 128x1000x1024, 2 threads: 0.89 ms; the transposed result computed whole, then copied back,
  // 1.01 ms (that copy read across the result's rows, one scalar load a lane: 1.10).
  void form_transposing_hosts();

  // The block's transposed result stays within this (in L2, read back by the transposing
  // copy right after it is computed).
  static constexpr int64_t kTransposingBlockBytes = 128 * 1024;

  // cpu.rows (0: one block), or by default: the rows split into equal blocks of at most
  // kTransposingBlockBytes, as many as a multiple of the threads (no block shifted onto its
  // neighbour, none left to one thread alone). tmm 1000 rows, 2 threads: 4 blocks of 250
  // 0.90 ms; 8 of 128 (the last shifted) 1.03, 4 of 256 1.08, 16 of 64 0.99.
  int transposing_block_rows(const Stage& host) const;

  // Loops, innermost first: an 8x8 tile (its lanes along the host's rows, as it stores them),
  // the tiles, then the blocks and the other dimensions, fused into one parallel loop.
  void schedule_transposing_host(int c);

  // A transposing copy: 8x8 tiles vectorised both ways (whole rows in, shuffles, whole rows
  // out), rows of tiles in parallel. Not single tiles: two threads taking neighbouring 8x8
  // tiles write the two halves of the same cache lines (tmm's 1000x1024 copy, 16000 tiles:
  // 2 threads took twice as long as 1).
  void schedule_pack(Stage& s, int i);

  // A copy whose reduction reads it in panels is computed per tile (per reduction block), as
  // the panel itself: the transposing copy is made where it is read, by the thread that reads
  // it, instead of a whole transposed tensor first (tmm 128x1000x1024: the 4 MB copy took a
  // third of the time). 8x8 tiles as at root, guarded: a panel's extents need not be
  // multiples of 8.
  void schedule_pack_in_panel(Stage& s, const std::pair<Halide::LoopLevel, std::string>& at);

  static constexpr int kTransposeTile = 8;

  // Copy `s` (a Pack stage) in kTransposeTile x kTransposeTile tiles vectorised both ways:
  // whole rows in, shuffles, whole rows out. Returns the loops outside a tile, innermost first.
  static std::vector<Var> transpose_in_tiles(Func& f, const Stage& s, Halide::TailStrategy tail);

  // ---- register_blocks.cpp: reductions in register-blocked tiles, reduction blocks, dot products ----
  // The host of reduction i: its pointwise consumer, or a copy made for it, computed at root
  // or, for a member of row blocks, in each block.
  Func host_func(int i, Stage& r, std::string& name);

  void schedule_reduction(int i);

  // The loop order of a reduction's update, innermost first: `inner`, the block var, the
  // reduction variables (rdom dimension `replaced`, if any, by `replacement`), then the other
  // pure vars (extent 1 inside a block).
  std::vector<VarOrRVar> block_outside_in(const Stage& r, std::vector<VarOrRVar> order, int replaced,
                                          const RVar& replacement = RVar()) const;

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
  Tiling tile_host(Stage& r, Func& w, int tx, int default_ty, int default_u, int x_per_accumulator);

  // Enough parallel tasks to keep every thread busy when they take unequal time.
  static constexpr int64_t kTasksPerThread = 2;

  // Rows of a register block where the block var has few rows that the default block would
  // cover with more than 10% recomputed (the last block shifted inwards): the rows split into
  // the fewest equal blocks that keep three quarters of the vector registers for
  // accumulators, one block a tile; else 0. tbmm's 26 rows, one vector wide: one block of 13
  // a tile, not 8+8+8+8 in tiles of 26 (measured on the Xeon, 2 threads: 0.78-0.82x the
  // default's time; blocks of 13 in tiles of 26, 0.91x).
  int balanced_block_rows(const Stage& r, int vectors, int default_u, int registers) const;

  // Vectors across a register block, at most `most`: the widest whose tiles cover `extent`
  // with at most 10% recomputed (the last tile is shifted inwards, overlapping its
  // neighbour), else the one that recomputes least. conv2d's 54 columns: 3 vectors of 16 would
  // compute 96 (measured 9.8 against 5.4 ms with 2), 2 compute 64. `wider` (0: none) is tried
  // right after `most`: with AVX-512, 4 vectors of 6 rows where 3 would recompute more than
  // 10% (tmm transposed, 128 columns: 64x6 blocks 1.01 ms, 32x8 1.51).
  static int block_vectors(int64_t extent, int lanes, int most, int wider);

  // in_block: computed per block of a transposing host, whose extents `r` has: the default
  // tile spans the block.
  void schedule_blocked(Stage& r, Func& w, const std::string& host_name, bool in_block);

  // A register block's innermost reduction loop is unrolled when it is this short or shorter
  // (a 3x3 convolution's kw): its body is then the block's FMAs a few times over instead of a
  // loop of three trips whose counter and back edge cost about as much as the body. conv2d
  // (8x64x56x56, 3x3), 2 threads: 9.43 -> 6.85 ms; unrolling kh too made it 8.08 (code size).
  static constexpr int64_t kUnrolledReduction = 4;

  // Unrolls the innermost reduction variable of `u` where it is a whole (not split into
  // blocks) RDom dimension of at most kUnrolledReduction steps; whether it did.
  static bool unroll_short_reduction(const Stage& r, Halide::Stage u, bool blocked);

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
  int reduction_block(const Stage& r, int tx, bool streamed_panel) const;

  // Reduction blocks: the accumulators of a whole tile live in a buffer computed per tile, and
  // the outermost reduction variable is split so that each step over the tile's register
  // blocks reads a kblock-long slice of the streamed operand, which stays in L1 from one block
  // to the next (the reduction blocking of BLAS kernels). GuardWithIf, never ShiftInwards:
  // recomputing part of an update would add twice.
  void schedule_reduction_blocks(Stage& r, Func& w, const Tiling& t, int kblock, const RVar& rko);

  // The shortest reduction, in vectors, whose last partial vector is guarded (schedule_dot).
  static constexpr int kGuardedTailSteps = 16;

  // Reductions along a contiguous reduction variable: split it by the vector width and
  // rfactor the lanes into a vector of partial results, summed once per output element.
  void schedule_dot(Stage& r, Func& w, const std::string& host_name);

  static std::string narrowed(const Tiling& t);

  // ---- panels.cpp: operands copied into panels, and the cache model that decides it ----
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
                          const std::map<std::string, PanelOperand>& operands, bool streamed_panel, bool broadcast_panel);

  // The operands reduction `r` reads, by name: how each is read (every read must agree).
  std::map<std::string, PanelOperand> panel_operands(const Stage& r) const;

  // The extent of argument `arg` (Halide order) of the input or stage called `name`; 0 if not
  // a constant.
  int64_t extent_of(const std::string& name, int arg) const;

  // cpu.panel=auto, the cache model: the streamed operand is copied into panels when a tile
  // reads a narrow strip of its rows (rows at least kPanelRowRatio times the tile's width) and
  // the strips a register block reads (tile width x reduction length) overflow half of L1.
  // Then the block's strips are a whole row apart each (sgemm 1024^3: 48 of 1024 floats, 4 KiB
  // apart, all in the same few L1 sets) and come from L2 at every step; a panel reads them in
  // one sequential stream. Where a tile reads most of each row (conv2d's 54-wide rows, tbmm's
  // 26) or the strips fit in L1, the copy only costs (conv2d: 9.9 against 9.4 ms).
  static constexpr int64_t kPanelRowRatio = 4;

  bool wants_streamed_panel(const Stage& r, const std::map<std::string, PanelOperand>& operands, int tx) const;

  // Rows of a tile whose streamed operand is in panels (cpu.tile auto): the panel is copied
  // once per tile and read once per register block, so more rows make the copy cheaper. As
  // many as keep the tile's rows of the broadcast operand (rows x reduction length) within half
  // of L2, where the next tile along the row finds them again, at most kMaxPanelRows and at
  // least `fewest`; halved while the tiles are too few to keep every thread busy. sgemm 1024^3,
  // 2 threads, panels 48 wide: 32 rows 10.5 ms, 64 8.6, 128 7.5, 256 7.0 (L2 2 MiB: 256).
  static constexpr int kMaxPanelRows = 256;

  int panel_rows(const Stage& r, int tx, int fewest) const;

  // Stores and computes `copy` with its argument `arg` innermost; returns that variable.
  static Var store_innermost(Func& copy, int arg);

  // Calls `fn` on every read of a Func or an image in `e`, outermost first.
  static void for_each_load(const Halide::Expr& e, const std::function<void(const Halide::Internal::Call*)>& fn);

  static bool reads_memory(const Halide::Expr& e);

  // What a panel called `name` may copy: an input (a Halide::ImageParam is read through its own
  // Func) or a root stage, by index; neither for anything else.
  struct CopySource {
    int input = -1, stage = -1;
    bool found() const { return input >= 0 || stage >= 0; }
  };

  CopySource copy_source(const std::string& name) const;

  // `consumer`'s own copy of the input or root stage called `name`, and the TC tensor it holds;
  // false for anything else.
  bool copy_of(const std::string& name, Func consumer, Func& copy, std::string& tensor);

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

}  // namespace tc::backends::cpu::scheduling

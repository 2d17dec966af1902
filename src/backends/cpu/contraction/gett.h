// gett.h — computing a contraction (contraction.h) the way a BLAS computes a matrix product,
// generalised to tensors (GETT): each index group is flattened into one range through tables of
// offsets, so any order of indices and any strides are read directly; five loops in the manner
// of BLIS (M blocks of mc, K blocks of kc with a packed A block, N blocks of nc with a packed B
// block, then MR and NR micro-panels: each A micro-panel in L1 while the B block's pass from
// L2, so that the micro-tiles of O follow one another along its rows) around the micro-kernel
// (microkernel.h); threads take blocks of the output (and whole batches), each packing what it
// reads, or shares of K where the output is small against the sum (partial sums, added at the
// end); where A's and B's K values lie along different indices, K is ordered in tiles so that
// both are packed along their runs, and where B's and O's N values do, N is, so that B is
// packed along its runs and O's lines fill while they are in cache, and where B's values are
// gathered from lines that crowd a few sets of L2, B's blocks are packed whole in the order of
// its memory (each line read once); the epilogue runs on each
// block of O once its sum is finished, while the block is in cache. What it does not do: decide
// whether a def takes this route (cpu.contract) or recognise one (plan_contraction).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backends/contraction/contraction.h"
#include "backends/cpu/memory_levels.h"
#include "runtime/tensor_view.h"

namespace tc::backends::cpu {

// Block sizes, in elements, and the micro-kernel's ISA ("avx512", "avx2", "scalar"; empty: the
// best this CPU runs); the least work (flops) worth another thread: a thread's start and join
// cost about what a few hundred thousand multiply-adds do; L2's geometry: the bytes of address
// one of its sets spans (its size over its ways) and its ways, for the layout's check that a
// gathered panel's lines do not crowd into a few sets.
struct GettOptions {
  int64_t mc = 0, kc = 0, nc = 0;
  std::string isa;
  double flops_per_thread = 1e6;
  int64_t l2_set_span = 64 << 10;
  int64_t l2_ways = 8;
  int64_t l2_bytes() const { return l2_set_span * l2_ways; }  // a core's L2
};

// The blocks this machine's micro-kernel for `type` gets by default: K blocks of a B
// micro-panel (kc x NR) in half of L1 or of 32 steps per vector lane, whichever is longer, a B
// block (kc x nc) in half of L2, an A block (mc x kc) in half of each thread's share of L3;
// multiples of MR and NR; L2's geometry as `levels` report it (else 8 ways).
GettOptions default_blocking(ScalarType type, const MemoryLevels& levels, int threads);

// "micro-kernel avx2 6x16, blocks mc 8190 kc 256 nc 1024".
std::string describe_gett(ScalarType type, const GettOptions& options);

// O from A and B, then its epilogue, on up to `threads` threads (the caller's included);
// `tensors`: the def's tensors, indexed as `c` names them (Def::tensors). Any strides
// (negative, zero for broadcast dimensions, overlapping reads) are read as they are; O is
// written only at the contraction's output box.
void run_gett(const Contraction& c, const std::vector<runtime::TensorView>& tensors, int threads,
              const GettOptions& options);

// How run_gett flattens each group for these tensors, the slowest index first:
// "M k c b; N j i a; K m" ("K in tiles" where K is ordered in tiles; N in tiles: "N b c/16 a
// c%16", the other indices, B's index by tiles of 16, O's index, the tile's values; "N b d c a
// by lines" where B's blocks are packed in B's memory order).
std::string describe_layout(const Contraction& c, const std::vector<runtime::TensorView>& tensors,
                            const GettOptions& options);

// The packing behind "by lines" (describe_layout): a block of `count` rows (offsets `lines` from
// `base`) over `kb` steps of K (offsets `ko`) into micro-panels of `width` rows, dst[(r / width)
// * width * kb + k * width + r % width] = base[ko[k] + lines[r]], a short last panel padded with
// zeros; read at each step in the order of the rows' offsets. Exposed for tests.
template <typename T>
void pack_block_by_lines(const T* base, const int64_t* lines, const int64_t* ko, T* dst, int64_t count, int64_t kb,
                         int width);

// The layouts (each group's order and tables, the tasks) one kernel's calls have had, by the
// shapes and strides of the tensors each was chosen for: choosing one builds a table of every
// index and sorts lines of O and B for the cost model, which a small contraction called in a
// loop would otherwise pay on every call. The last kMost are kept. Thread-safe.
class GettLayouts {
 public:
  static constexpr size_t kMost = 16;
  std::shared_ptr<const void> find(const std::vector<int64_t>& key) const;  // null: none kept
  void keep(std::vector<int64_t> key, std::shared_ptr<const void> layout);
  size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<std::vector<int64_t>, std::shared_ptr<const void>>> kept_;  // the newest last
};

// Every stage of `plan` in the def's order (as run_gett), the def's inputs and outputs in
// parameter order; its temporaries are allocated for the call (ir::call_tensors) and freed after
// it. `layouts` (may be null): those of earlier calls with the same `options` and `threads`.
void run_contraction_plan(const ContractionPlan& plan, const ir::BoundDef& bound,
                          const std::vector<runtime::TensorView>& inputs,
                          const std::vector<runtime::TensorView>& outputs, int threads, const GettOptions& options,
                          GettLayouts* layouts = nullptr);

}  // namespace tc::backends::cpu

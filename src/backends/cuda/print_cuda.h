// print_cuda.h — a mapped schedule (mapping.h) printed as CUDA C: a prelude
// of `__device__` helpers that give TC's scalar semantics (wrapping integers, Euclidean
// integer division, floored float modulo, saturating float-to-integer conversion,
// NaN-propagating min/max, float16, bfloat16, TC's float32 exp, atomic scatter updates), then one
// `extern "C" __global__` function per kernel mark, in launch order. The block (thread) that
// runs an instance is a function of its mapped members' values (tc_owner: round robin by
// step): a loop under a `block.<axis>` (`thread.<axis>`) mark starts at the first value its
// block (thread) owns and strides over the grid (block); a statement for which isl printed
// no loop of a mapped member is guarded by the owner of its value. So any grid and block size
// computes the same result, and instances with equal mapped values share a thread.
// Statements outside any kernel mark (0-d ones) get a kernel of their own.
// Every tensor is a parameter (`p_<name>`), dense row-major at the bound shapes, which are
// constants in the text. Subscripts that binding did not prove in bounds (gathers, reads
// under ?:) are checked (checked=1: the first bad one recorded, as the host reports it) and
// clamped into the tensor. float16 and bfloat16 are stored as their bits and computed as float,
// each result rounded to the type; an accumulator updated by a loop (or an unrolled run) is kept in a register;
// at a "shared" mark (mapping.h) the reused tiles of read-only tensors are copied to shared
// memory between __syncthreads (Launch::synchronises); under a "lanes" mark a reduction loop is
// split across the block's threads along x and combined by a block-level tree (shuffles, then
// the warps' totals through shared memory) or by atomics. A thread mark with a register tile
// (mapping.h) runs several of its thread's values at once, in lockstep, each accumulator in a
// register of its own, kept across the loop over the reduction's tiles where each thread loop
// runs once (print/register_tiles.cpp); indices are 32-bit where they fit
// (index32_fits); `+=` reductions of one product use fmaf (cuda.fma).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/poly_model.h"

struct isl_schedule;

namespace tc::backends::cuda {

// Threads per warp: a reduction split across the threads along x (cuda.reduction=tree|atomic)
// combines whole warps, so the block's x is a multiple of it.
constexpr int64_t kWarpSize = 32;

struct Launch {
  std::string kernel;   // the __global__ function's name
  int grid_axes = 0;    // how many of x, y, z its loops stride over, blocks and threads
  int block_axes = 0;
  // Per grid axis, the iterations of the loop mapped to it where isl's bounds are constants
  // (one block per tile: what cuda.grid=auto launches), else 0.
  std::array<int64_t, 3> tiles{};
  bool synchronises = false;  // calls __syncthreads (shared memory, block reductions)
  // Per block axis, the threads its register-tiled loops want (ceil(tile / copies)), else 0:
  // cuda.block=auto launches these where any is set.
  std::array<int64_t, 3> threads{};
};


// The grid and block one launch runs with: along the axes it uses, `grid` (or, where empty,
// its tiles, at most 2^31 - 1 along x and 65535 along y and z) and `block` (or, where empty,
// the threads its register tiles want, else kDefaultBlock, mapping.h); 1 along the others.
struct LaunchDims {
  std::array<unsigned, 3> grid{1, 1, 1}, block{1, 1, 1};
};
LaunchDims launch_dims(const Launch& launch, const std::vector<int64_t>& grid, const std::vector<int64_t>& block);
// "16x16x1", as descriptions and profiles print a grid or a block.
std::string dims_text(const std::array<unsigned, 3>& d);

// A subscript binding did not prove in bounds, checked at run time (checked=1): check k of the
// text is dimension `dim` of `reads[read]` of statement `stmt`, or of its written element
// (a scatter's, `write`).
struct GatherCheck {
  size_t stmt, read, dim;
  bool write = false;
};

struct CudaSource {
  std::string text;
  std::vector<Launch> launches;  // in order
  // Every kernel's parameters: the def's tensors in Def::tensors order, of these C types
  // ("float*"; bool tensors "unsigned char*", float16 and bfloat16 ones "unsigned short*"), then the fault
  // record "unsigned long long*" (fault_words words, zeroed before the launches): word 0 is
  // 0, or 1 + the check that failed first; word 1 the index; words 2... the statement's
  // variables there.
  std::vector<std::string> param_types;
  std::vector<GatherCheck> checks;
  size_t fault_words = 2;
  // Where non-zero, every kernel has one more parameter after the fault record, `tc_scratch`
  // (param_types' last), a device buffer of this many bytes the launches share, its contents
  // undefined at the first (the contraction route's split sums).
  size_t scratch_bytes = 0;
};

// What every text starts with: TC's scalar semantics as device functions (the emulation
// precompiles it with its header).
const std::string& cuda_prelude();

struct PrintOptions {
  // Reads not proven in bounds are checked (a bad index recorded in the fault record, the read
  // clamped); else only clamped.
  bool checked = false;
  // A reduction's element is kept in a register over a loop that updates only it (cuda.private).
  bool registers = true;
  // Under a "lanes" mark (mapping.h) the threads' partial reductions are combined with atomics,
  // else a tree.
  bool atomic_lanes = false;
  // Loop iterators, statement variables and element offsets are `int` (else `long long`):
  // only where every value they take fits (index32_fits).
  bool index32 = false;
  // A float32/float64 `+=` reduction whose right-hand side is one product accumulates with
  // fused multiply-adds (fma: one rounding a step, as cpu.fma; cuda.fma).
  bool fma = true;
  // Each statement instance starts with a line `TC_STATEMENT();`, which the profile's build
  // counts (profile/instrumentation.h); the text is otherwise the same.
  bool statement_marks = false;
};

// Whether every index the printed kernels compute fits in 32 bits: each tensor's elements and
// each statement variable's bounds within 2^29, and a mapped loop's step (its tile, at most
// `max_tile`, times the grid: `grid` is cuda.grid, empty for one block per tile) within 2^30,
// so that a loop's last value plus its step stays below 2^31. Unproven subscripts (gathers)
// are clamped in 64 bits whatever this says.
bool index32_fits(const ir::BoundDef& bound, const std::vector<int64_t>& grid, int64_t max_tile);

CudaSource print_cuda(const ir::BoundDef& bound, const PolyModel& model, const isl_schedule* mapped,
                      const PrintOptions& options);

// The row route's kernel for `plan` (rows/row_plan.h; print/rows.cpp): one launch, any grid and
// any block whose x is a multiple of kWarpSize (at most 15 rows a block where x > kWarpSize).
struct RowPlan;
CudaSource print_rows(const ir::BoundDef& bound, const RowPlan& plan, const PrintOptions& options);

}  // namespace tc::backends::cuda

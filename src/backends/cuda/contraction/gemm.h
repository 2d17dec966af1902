// gemm.h — the cuda backend's contraction route (cuda.contract): a def that is a sequence of
// contractions (backends/contraction/contraction.h: batch, M, N and K groups of any index
// order, affine subscripts (convolutions as implicit GEMMs), float or double with pointwise
// epilogues, float16 and bfloat16 without) printed as GEMM-structured CUDA C, the structure
// of CUTLASS's SIMT kernels: one launch per contraction (two where its sum is split, split-K);
// float16 and bfloat16 on tensor cores (mma.sync; gemm_text.cpp). A block computes a tile of
// bm x bn outputs of one batch entry, each of its threads tm x tn of them in registers; the
// K group is walked bk at a time through a ring of shared-memory stages, each filled with
// cp.async (sm_80 and later; a plain copy before, and in the emulation) while the block
// computes on an earlier one, one __syncthreads per step; a thread reads its operands' values
// from shared memory in runs of 128 bits; the output and the epilogue's reads go through their
// strides. The operands are read straight from their strided layouts: the permutation happens
// in the copy to shared memory, whose thread-to-element map follows the operand's contiguous
// index (coalesced global reads) and copies 16 bytes at a time where that index is the tile's
// row index, whole runs of it stay inside the tensor and the address is 16-byte aligned.
// This file says what the route prints and how its tiles are chosen; gemm_text.cpp prints.
// It does not decide whether a def takes the route (cuda_backend.cpp, cuda.contract).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backends/contraction/contraction.h"
#include "backends/cuda/mapping.h"
#include "backends/cuda/print_cuda.h"

namespace tc::backends::cuda {

// A block's tile: bm x bn outputs, bk steps of the sum per pipeline stage; each thread tm x tn
// outputs (in runs of up to 128 bits along each of M and N, the runs of a block's threads
// interleaved so that a warp's shared-memory reads are conflict-free).
struct GemmTile {
  int64_t bm = 128, bn = 128, bk = 8, tm = 8, tn = 8;
  int64_t threads() const { return (bm / tm) * (bn / tn); }
  std::string text() const;  // "128x128x8"
};

// How a contraction's products are computed: its type, and for float32 whether through tensor
// cores with inputs rounded to TF32 (cuda.tf32). float16 and bfloat16 always use tensor cores.
struct GemmMath {
  ScalarType type = ScalarType::Float32;
  bool tf32 = false;
  GemmMath(ScalarType t, bool tf = false) : type(t), tf32(tf && t == ScalarType::Float32) {}  // NOLINT: a type is its math
  bool tensor_cores() const { return tf32 || is_float16_like(type); }
};

// The tiles cuda.gemm_tile may name, per math (float32: 128x128x8, 128x64x8, 64x128x8,
// 64x64x8, 32x32x8, 8x256x8, 4x256x8; float64 the same but 128x128x8): every one 256 threads.
// Tensor cores have one: 64x64x16 for float16 and bfloat16, 64x64x8 for TF32, the kernel's 4
// warps of 32 x 32 outputs (2 x 4 mma.sync tiles of 16 x 8 each; as a GemmTile, a thread's
// 4 x 8 sums).
const std::vector<GemmTile>& gemm_tiles(GemmMath math);
std::optional<GemmTile> gemm_tile_named(const std::string& text, GemmMath math);

// A contraction's shape on the GPU: its block tile, and the parts its sum is split into (split-K:
// each part's blocks sum a run of K's steps into a scratch buffer, then a second launch adds the
// parts in order, applies the epilogue and writes O; 1: none).
struct GemmShape {
  GemmTile tile;
  int64_t split = 1;
  int64_t stages = 3;  // cuda.stages, or fewer where that many do not fit a block's static shared memory
  // cuda.gemm_blocks: the blocks an SM the kernel is compiled for (__launch_bounds__' minimum,
  // which caps a thread's registers at 65536 / (threads x blocks)); 0: no cap, ptxas's choice.
  int64_t blocks_per_sm = 0;
};

// A block's static shared memory (CUDA's limit without opting in), and the most pipeline stages
// of `tile` for `type` within it (float64's 128x64x8 fits 3 of cuda.stages' 4).
constexpr int64_t kGemmSharedBytes = 48 * 1024;
int64_t stages_that_fit(const GemmTile& tile, GemmMath math, int64_t wanted);

// cuda.gemm_tile=auto: of the tiles that give at least kBlocksWanted blocks (one per tile
// of O, batch entry and part of the sum), the largest (the type's list runs from large to
// small) whose tiles O fills within 5% as well as the best; where none does, the one with the
// fewest waves of blocks times outputs a thread (its time, every tile having 256 threads), then
// the best filled. Larger tiles reuse more of each operand loaded, but a GPU with idle SMs, or a
// tile mostly past O's edges, loses more than that. cuda.split_k=auto (where `may_split`): a
// tile with fewer blocks than wanted splits its sum into parts of at least kSplitSteps of K's
// steps, at most kMaxSplit: as many as make up the difference (which is what the tile choice
// counts), but where a block is alone on its SM, the fewest with the least waves of blocks per
// part (the time of a sum cut in parts: waves times each part's steps). `blocks_per_sm`:
// cuda.gemm_blocks (0: auto).
constexpr int64_t kSplitSteps = 128;
constexpr int64_t kMaxSplit = 16;
GemmShape auto_gemm_shape(const Contraction& c, GemmMath math, bool may_split, int blocks_per_sm = 0);
// The parts auto splits `c`'s sum into at `tile` (none on tensor cores).
int64_t auto_split(const Contraction& c, GemmMath math, const GemmTile& tile, int blocks_per_sm = 0);
// Whether a block of `tile` runs alone on its SM: its sums take 64 registers or more (the
// 128x128 float32 tile's 8 x 8: about 150 registers a thread in all, one block of 256 threads
// an SM), off tensor cores, and cuda.gemm_blocks asks for no more.
bool alone_on_its_sm(const GemmTile& tile, GemmMath math, int blocks_per_sm);

struct GemmOptions {
  std::optional<GemmTile> tile;  // cuda.gemm_tile; none: auto_gemm_shape's per contraction
  int64_t split = 0;             // cuda.split_k; 0: auto
  int stages = 3;                // cuda.stages: shared-memory buffers per operand
  int blocks_per_sm = 0;         // cuda.gemm_blocks: the blocks an SM to fit registers for (0: auto, no cap)
  bool fma = true;               // cuda.fma: the sums as fused multiply-adds (0: no split, the reference's order)
  bool tf32 = false;             // cuda.tf32: float32 products on tensor cores, inputs rounded to TF32
  bool statement_marks = false;  // TC_STATEMENT(); before each multiply-add (the profile's)
};

struct GemmKernels {
  CudaSource source;
  std::vector<LaunchDims> dims;    // per launch
  std::vector<GemmShape> shapes;   // per contraction
};

// The route's text for `plan`: per contraction one launch, or two where its sum is split.
GemmKernels print_gemm(const ir::BoundDef& bound, const ContractionPlan& plan, const GemmOptions& options);

}  // namespace tc::backends::cuda

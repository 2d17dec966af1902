// print_cuda.h — a mapped schedule (mapping.h) printed as CUDA C (issue 13, step 4, first
// part): a prelude of `__device__` helpers that give TC's scalar semantics (wrapping
// integers, Euclidean integer division, floored float modulo, saturating float-to-integer
// conversion, NaN-propagating min/max), then one `extern "C" __global__` function per kernel
// mark, in launch order. A loop under a `block.<axis>` mark strides over the grid
// (`c = init + inc * blockIdx.<axis>; c += inc * gridDim.<axis>`), one under `thread.<axis>`
// over the block, so any grid and block size computes the same result; a marked loop isl
// removed (one iteration) becomes a guard (`blockIdx.<axis> == 0`). Statements outside any
// kernel mark (0-d ones) get a kernel of their own.
// Every tensor is a parameter (`p_<name>`), dense row-major at the bound shapes, which are
// constants in the text. Subscripts that binding did not prove in bounds (gathers, reads
// under ?:) are clamped into the tensor (cuda's checked=1 reporting is a later step).
// Not yet: float16, shared memory and registers, unrolling, launching (NVRTC, the driver API).
#pragma once

#include <string>
#include <vector>

#include "backends/cuda/poly_model.h"

struct isl_schedule;

namespace tc::backends::cuda {

struct Launch {
  std::string kernel;   // the __global__ function's name
  int grid_axes = 0;    // how many of x, y, z its loops stride over, blocks and threads
  int block_axes = 0;
};

struct CudaSource {
  std::string text;
  std::vector<Launch> launches;  // in order
  // Every kernel's parameters: the def's tensors in Def::tensors order, of these C types
  // ("float*"; bool tensors "unsigned char*").
  std::vector<std::string> param_types;
};

// TC_ERROR_UNSUPPORTED for what this step does not print yet (float16), naming it.
CudaSource print_cuda(const ir::BoundDef& bound, const PolyModel& model, const isl_schedule* mapped);

}  // namespace tc::backends::cuda

// cpu_backend.h — the cpu backend: a bound def lowered to a Halide pipeline (lower.h),
// scheduled from the cpu.* knobs (schedule.h) and compiled by Halide's LLVM JIT for this
// machine (jit.h). Kernels read and write host memory (kDLCPU) and run on the calling thread
// plus the thread pool. They are specialised to the input shapes and to unit-stride innermost
// dimensions; a call with other strides uses a second variant compiled on first need.
#pragma once

#include "backends/backend.h"

namespace tc::backends::cpu {

const Backend& backend();

}  // namespace tc::backends::cpu

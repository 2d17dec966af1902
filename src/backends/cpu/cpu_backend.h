// cpu_backend.h — the cpu backend: a bound def lowered to a Halide pipeline (lower.h),
// scheduled from the cpu.* options (schedule.h) and compiled by Halide's LLVM JIT for this
// machine (jit.h). Kernels are specialised to the input shapes and to unit-stride innermost
// dimensions; a call with other strides uses a second variant compiled on first need.
#pragma once

#include <memory>

#include "backends/kernel.h"
#include "ir/bind.h"
#include "support/options.h"

namespace tc::backends::cpu {

std::unique_ptr<Kernel> compile(const ir::BoundDef& bound, const Options& options);

}  // namespace tc::backends::cpu

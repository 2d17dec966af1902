// lowering_passes.h — the custom passes JitFunction adds at the end of Halide's lowering of
// every cpu pipeline, one per file (lowering_pass_*.cpp). They rewrite Halide IR that Halide 14
// would otherwise compile wrongly or slowly; they never change what a kernel computes.
#pragma once

#include <Halide.h>

namespace tc::backends::cpu {

// States a constant load base's alignment modulo 1024 (lowering_pass_alignment.cpp).
Halide::Internal::IRMutator* new_constant_base_alignment_pass();

// Reads a stride-2 vector load from a kernel's own buffer with no element before its base
// (lowering_pass_strided_loads.cpp).
Halide::Internal::IRMutator* new_strided_loads_in_bounds_pass();

// Gives a vector run-time check one branch on "every lane holds" before Halide's per-lane
// failure path (lowering_pass_vector_checks.cpp).
Halide::Internal::IRMutator* new_vector_check_fast_path_pass();

// Removes the checks of buffer arguments that CpuKernel::run guarantees before every call
// (lowering_pass_argument_checks.cpp).
Halide::Internal::IRMutator* new_argument_checks_pass();

// Wraps every float-valued call in strict_float, so that LLVM compiles it without fast-math
// flags (lowering_pass_strict_calls.cpp).
Halide::Internal::IRMutator* new_strict_calls_pass();

}  // namespace tc::backends::cpu

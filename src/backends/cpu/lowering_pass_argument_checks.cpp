// lowering_pass_argument_checks.cpp — removes the run-time checks Halide puts at the top of a
// pipeline for its buffer arguments, where CpuKernel::run has already made each one true. It
// keeps every other check: the 32-bit size guards of the arguments (the kernel's own index
// arithmetic relies on them), allocation failures, cpu.checked's gather checks, and anything
// the code generator adds later.
//
// Why: a pipeline of four tensors carries about 50 such checks (type, rank, each dimension's
// min, extent and stride, host and device fields), each a branch to a formatted error call;
// they were about a quarter of every cpu compile (bench/compile_time.py). None can fail: tc_run
// validates dtype, rank, shape and strides against the kernel (runtime/validate.h) before any
// view is made, and view_of (cpu_backend.cpp) builds every halide_buffer_t itself — mins 0, a
// non-null host, no device, the dense variant only for unit innermost strides, flattened rows
// only where rows adjoin. The checks are Halide's defence against callers that libtc is not.
#include "backends/cpu/lowering_passes.h"

#include <set>
#include <string>

namespace tc::backends::cpu {
namespace {

// The error calls of AddImageChecks.cpp and UnpackBuffers.cpp whose conditions the caller
// guarantees (see above). Not here: halide_error_buffer_allocation_too_large and
// halide_error_buffer_extents_too_large, the 32-bit overflow guards.
bool caller_guaranteed(const std::string& error_call) {
  static const std::set<std::string> names = {
      "halide_error_buffer_argument_is_null", "halide_error_bad_type",
      "halide_error_bad_dimensions",          "halide_error_access_out_of_bounds",
      "halide_error_buffer_extents_negative", "halide_error_constraint_violated",
      "halide_error_host_is_null",            "halide_error_device_dirty_with_no_device_support",
  };
  return names.count(error_call) != 0;
}

class ArgumentChecks : public Halide::Internal::IRMutator {
  using IRMutator::visit;
  Halide::Internal::Stmt visit(const Halide::Internal::AssertStmt* op) override {
    const auto* call = op->message.as<Halide::Internal::Call>();
    if (call != nullptr && call->call_type == Halide::Internal::Call::Extern && caller_guaranteed(call->name))
      return Halide::Internal::Evaluate::make(0);
    return op;
  }
};

}  // namespace

Halide::Internal::IRMutator* new_argument_checks_pass() { return new ArgumentChecks; }

}  // namespace tc::backends::cpu

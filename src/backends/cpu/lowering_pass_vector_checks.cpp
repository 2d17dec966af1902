// lowering_pass_vector_checks.cpp — a fast path for vectorised run-time checks. It does not
// change which indices are checked, in what order lanes are reported, or the message.
//
// A gather's range check is a Halide `require(ok, index, error)`; vectorised, `ok` is a vector,
// and Halide 14's code generator scalarises such a require (CodeGen_LLVM.cpp:2836): every lane
// extracted, compared and branched on alone. lut1 (128x50 indices checked, 16 lanes) paid
// about 60% more with checked=1 than with checked=0 that way. This pass wraps each vector
// require as `if_then_else(all lanes of ok, index, require(ok, index, error))`: Halide
// generates a scalar if_then_else as a branch (CodeGen_LLVM.cpp:2798), so the common case is
// one vector compare, one and-reduction and one branch, and only a failing vector takes the
// scalarised path, which reports its first bad lane exactly as before.
#include "backends/cpu/lowering_passes.h"

namespace tc::backends::cpu {
namespace {

class VectorCheckFastPath : public Halide::Internal::IRMutator {
  using IRMutator::visit;
  Halide::Expr visit(const Halide::Internal::Call* op) override {
    using Halide::Internal::Call;
    Halide::Expr e = IRMutator::visit(op);
    const auto* call = e.as<Call>();
    if (call == nullptr || !call->is_intrinsic(Call::require) || call->args.size() != 3 ||
        !call->args[0].type().is_vector())
      return e;
    Halide::Expr all_ok = Halide::Internal::VectorReduce::make(Halide::Internal::VectorReduce::And, call->args[0], 1);
    return Call::make(call->type, Call::if_then_else, {all_ok, call->args[1], e}, Call::PureIntrinsic);
  }
};

}  // namespace

Halide::Internal::IRMutator* new_vector_check_fast_path_pass() { return new VectorCheckFastPath; }

}  // namespace tc::backends::cpu

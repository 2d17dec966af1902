// lowering_pass_strict_calls.cpp — compiles every float-valued call (floor, sqrt, llvm.fma,
// libm's functions...) with IEEE semantics, as the target's strict_float compiles arithmetic.
// Touches nothing else.
//
// Halide 14's StrictifyFloat wraps a strict_float target's float arithmetic in strict_float,
// which code generation compiles without fast-math flags, but not its calls: `floor_f32(x)`
// becomes LLVM's floor with the flag "no NaNs", from which LLVM concludes that a NaN test of
// the result is false. int32(floor(x)), int32(sqrt(x)), int32(fma(x, 2, 1)) of a NaN then gave
// 2147483647 instead of 0 (the saturating select's NaN test folded away; differential fuzzer,
// seed 20261315, program 233). Wrapping a call in strict_float after CSE has moved it into a
// let of its own keeps the wrapper on the call itself.
#include "backends/cpu/lowering_passes.h"

namespace tc::backends::cpu {
namespace {

namespace HI = Halide::Internal;

class StrictCalls : public HI::IRMutator {
  using IRMutator::visit;
  Halide::Expr visit(const HI::Call* op) override {
    if (op->is_intrinsic(HI::Call::strict_float)) return op;  // already compiled strictly, arguments too
    Halide::Expr e = IRMutator::visit(op);
    const auto* call = e.as<HI::Call>();
    if (call == nullptr || !call->type.is_float() || call->call_type == HI::Call::Halide ||
        call->call_type == HI::Call::Image)
      return e;
    return Halide::strict_float(e);
  }
};

}  // namespace

Halide::Internal::IRMutator* new_strict_calls_pass() { return new StrictCalls; }

}  // namespace tc::backends::cpu

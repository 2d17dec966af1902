// lowering_pass_strided_loads.cpp — rewrites a stride-2 vector load from a buffer the kernel
// allocates, whose index base is something plus an odd constant, as the two dense loads and the
// shuffle Halide itself uses for a caller's buffer. Touches no other load.
//
// Halide 14 compiles such a load (CodeGen_LLVM.cpp, the stride-2 case) from one element below
// its base, so that f(2x + 1) and f(2x) share their loads; at a base of 0 that is an element
// before the allocation, which LLVM takes for undefined behaviour and folds away with whatever
// reads it: `O2(i, j) min= O1(1 - i, 2 * j)` kept O2's caller values at i = 1, where the load of
// O1(0, 0) and O1(0, 2) starts at -1. The two dense loads read exactly [base, base + 2 lanes - 1).
#include "backends/cpu/lowering_passes.h"

namespace tc::backends::cpu {
namespace {

using namespace Halide::Internal;

bool base_ends_in_odd_constant(const Halide::Expr& base) {
  const auto* add = base.as<Add>();
  const auto* offset = add ? add->b.as<IntImm>() : nullptr;
  return offset && (offset->value & 1) != 0;
}

class StridedLoadsInBounds : public IRMutator {
  using IRMutator::visit;
  Halide::Expr visit(const Load* op) override {
    Halide::Expr e = IRMutator::visit(op);
    const auto* load = e.as<Load>();
    const auto* ramp = load ? load->index.as<Ramp>() : nullptr;
    if (ramp == nullptr || load->param.defined() || load->image.defined() || !is_const_one(load->predicate) ||
        !is_const(ramp->stride, 2) || !base_ends_in_odd_constant(ramp->base))
      return e;
    const int n = ramp->lanes;
    const Halide::Expr one = make_one(ramp->base.type());
    const Halide::Expr all = const_true(n);
    const Halide::Expr first = Load::make(load->type, load->name, Ramp::make(ramp->base, one, n), load->image,
                                          load->param, all, load->alignment);
    const Halide::Expr second_base = simplify(ramp->base + (n - 1));
    const Halide::Expr second = Load::make(load->type, load->name, Ramp::make(second_base, one, n), load->image,
                                           load->param, all, load->alignment + ModulusRemainder(0, n - 1));
    // Lane i is element base + 2i: from the first load where 2i < n, else from the second,
    // which starts at base + n - 1 (shuffle index n + 2i - (n - 1)).
    std::vector<int> lanes(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) lanes[static_cast<size_t>(i)] = 2 * i < n ? 2 * i : 2 * i + 1;
    return Shuffle::make({first, second}, lanes);
  }
};

}  // namespace

Halide::Internal::IRMutator* new_strided_loads_in_bounds_pass() { return new StridedLoadsInBounds; }

}  // namespace tc::backends::cpu

// lowering_pass_alignment.cpp — states the alignment of a load whose index base is a
// constant modulo 1024 rather than modulo 0. Touches nothing else.
//
// Halide 14 reads a load whose index base is a constant c as alignment (modulus 0, remainder
// c), and its code for strided vector loads (CodeGen_LLVM.cpp:1976) shifts such a base down to
// a multiple of the stride with mod_imp(c - offset, 0), which is 0: t1[ramp(3, 2, 16)] became a
// dense load of t1[2..33] declared 64-byte aligned, an aligned AVX-512 load 8 bytes past a
// 64-byte boundary, and a crash (differential fuzzer, seed 112122278, program 403: `t1(i, j)
// min=! 1 where exists B(0, i), j in 0:2; O2(i) +=! t1(i, 1)` at M=17, the shifted last vector
// of a ShiftInwards tail). Modulo 1024 is as true, and that code handles it.
#include "backends/cpu/lowering_passes.h"

namespace tc::backends::cpu {
namespace {

class ConstantBaseAlignment : public Halide::Internal::IRMutator {
  using IRMutator::visit;
  Halide::Expr visit(const Halide::Internal::Load* op) override {
    Halide::Expr e = IRMutator::visit(op);
    const auto* load = e.as<Halide::Internal::Load>();
    if (load == nullptr || load->alignment.modulus != 0) return e;
    int64_t r = load->alignment.remainder % 1024;
    return Halide::Internal::Load::make(load->type, load->name, load->index, load->image, load->param, load->predicate,
                                        Halide::Internal::ModulusRemainder(1024, r < 0 ? r + 1024 : r));
  }
};

}  // namespace

Halide::Internal::IRMutator* new_constant_base_alignment_pass() { return new ConstantBaseAlignment; }

}  // namespace tc::backends::cpu

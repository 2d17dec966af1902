// transpose_result.h — which reductions the cpu backend computes transposed: a reduction
// whose reads are contiguous in none of its written variables' last (tmm's
// `C(m,n) +=! A(m,k) * B(n,k)`, k innermost in both) needs an operand copied with another
// dimension innermost before its vectors can run along n. Copying B (N x K) costs more than
// copying A (M x K) where N > M: computed as `Ct(n,m) +=! B(n,k) * A(m,k)`, its vectors running
// along m, the copy is of A, and the result is transposed back into C (M x N) in 8x8 tiles
// (schedule/transposing_hosts.cpp). Every element sums the same terms in the same order: the bits are those of
// the untransposed stage. It decides; lower.cpp builds the stages, schedule/ schedules them.
#pragma once

#include <vector>

#include "ir/bind.h"

namespace tc::backends::cpu {

// mode: 1 every statement that can be computed transposed; -1 (auto) those where the operands
// copied for the transposed stage plus the transposed result are at most half the operands the
// untransposed stage copies (kCopyRatio in transpose_result.cpp); 0 none. The statements, in
// order.
std::vector<int> plan_transposed_results(const ir::BoundDef& bound, int mode);

}  // namespace tc::backends::cpu

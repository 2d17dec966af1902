// statement_facts.h — what the cpu backend's planners (flatten_rows.h, transpose_result.h)
// and its lowering ask of a bound statement: the variables a subscript uses, whether it
// reduces with '!' over the whole of its tensor, and which operands a reduction reads through
// a copy with another dimension innermost. Facts only: no Halide, no decisions.
#pragma once

#include <map>
#include <set>

#include "ir/bind.h"

namespace tc::backends::cpu {

// The statement variables subscript d of `read` uses.
std::set<int> subscript_vars(const ir::Read& read, size_t d);

// The variables of subscript d that step it by exactly one (`k`, `i + k`, `k - 1`): along them
// consecutive values are consecutive elements. Not `2 * k`, `-k`, `k / 2` or a gather's.
std::set<int> unit_step_vars(const ir::Read& read, size_t d);

// Statement si reduces with '!' (`+=!`, `max=!`, ...) over reduction variables, not as a
// scatter, writing the whole of its tensor, with no empty range (it writes and sums something).
bool whole_reduction(const ir::BoundDef& bound, int si);

// The operands a reduction whose vectors run along written variable `inner` reads from a copy
// stored with `inner`'s dimension innermost: none where some read is already contiguous in
// `inner`, else every read (not a gather, not of its own tensor) with `inner` as one of its
// other subscripts (C(m,n) +=! A(m,k) * B(n,k), inner n: B). Tensor -> the TC dimension stored
// innermost.
std::map<int, int> operands_to_pack(const ir::Stmt& st, int inner);

}  // namespace tc::backends::cpu

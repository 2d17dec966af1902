// describe.h — human-readable text of a def's inference results (for `tc check` and
// tc_program_describe): tensors with dtypes and extents, statements with index ranges.
#pragma once

#include <string>

#include "infer/ranges.h"
#include "lang/ast.h"

namespace tc::ir {

std::string describe(const lang::Def& def, const infer::DefRanges& ranges);
std::string extent_text(const infer::SymExpr& e);  // "M", "((I + 1)/2)"

}  // namespace tc::ir

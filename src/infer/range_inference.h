// range_inference.h — the range inference of tc-range-inference.md.
#pragma once

#include "infer/ranges.h"
#include "lang/ast.h"

namespace tc::infer {

// Infers ranges for a checked def. Throws tc::Error(TC_ERROR_SEMANTIC) naming the variable
// and asking for a where clause when a range is unconstrained or ambiguous.
DefRanges infer_ranges(const lang::Program& program, const lang::Def& def);

}  // namespace tc::infer

// from_ast.h — the IR of a checked def (sema done, calls inlined) from its syntax tree and
// range inference's results: names resolved to positions, expressions rebuilt as IR nodes,
// inference's reads and preconditions kept (not found again). Nothing is evaluated: sizes
// stay symbolic.
#pragma once

#include <memory>

#include "infer/ranges.h"
#include "ir/def.h"
#include "lang/ast.h"

namespace tc::ir {

std::shared_ptr<const Def> from_ast(const lang::Def& def, const infer::DefRanges& ranges,
                                    std::shared_ptr<const lang::SourceText> source);

}  // namespace tc::ir

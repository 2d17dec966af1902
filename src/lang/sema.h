// sema.h — semantic checks of a parsed program: resolves every name (size, index variable,
// tensor, builtin, cast, let), builds each def's tensor table (inputs, outputs, temporaries),
// types every expression, classifies reduction variables and enforces the statement rules
// (inputs are read-only, reduction variables need a reduction operator, in-place reads only
// at the written element, temporaries are written before they are read). It does not look at
// index ranges: that is infer's job.
#pragma once

#include "lang/ast.h"

namespace tc::lang {

// Inlines calls between defs (inline_calls.h), then annotates `program` in place.
// Throws tc::Error(TC_ERROR_SEMANTIC) with a located message.
void check(Program& program);

}  // namespace tc::lang

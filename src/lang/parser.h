// parser.h — recursive-descent parser: tokens -> syntax tree. Checks grammar only; names,
// types and ranges are sema's and infer's business.
#pragma once

#include "lang/ast.h"

namespace tc::lang {

// Throws tc::Error(TC_ERROR_SYNTAX) with a located message at the first error.
Program parse(SourceText source);

}  // namespace tc::lang

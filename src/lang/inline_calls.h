// inline_calls.h — expands TC function calls ("a, b = f(x, y)" and "a = f(x)") into the
// callee's statements, renamed into the caller: callee inputs become the argument tensors,
// callee outputs the caller's left-hand-side tensors, callee temporaries fresh temporaries,
// callee size names the argument extents (x.0), and statement-local names that would clash
// are renamed. What the callee's signature demands of the arguments is recorded as
// CallRequirements for sema and binding. Runs on the parsed program, before sema.
#pragma once

#include "lang/ast.h"

namespace tc::lang {

// Throws tc::Error(TC_ERROR_SEMANTIC) for a bad call (unknown def, arity, recursion).
void inline_calls(Program& program);

}  // namespace tc::lang

// typing.h — the typing rules of TC expressions (promotion, literals), as one table of
// functions shared by sema and the backends' documentation. See docs/guide/language.md "Types".
#pragma once

#include "support/dtype.h"

namespace tc::lang {

struct Typed {
  ScalarType type;
  bool weak;  // a literal (possibly negated; "2.0f" too): adapts to the other operand
};

// The common type two operands are converted to before an arithmetic or comparison op.
Typed unify(Typed a, Typed b);
// Arithmetic on bool happens in int32.
ScalarType arithmetic_type(ScalarType t);

}  // namespace tc::lang

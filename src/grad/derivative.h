// derivative.h — symbolic partial derivatives of one TC expression: d e / d (one tensor read
// inside e), the other reads held constant. Rules: + - * / unary minus, ?: (the condition
// carries none), casts between floating types pass it on, integer-typed and boolean
// subexpressions carry none, builtins through the derivative column of the builtins table
// (lang/builtins.h). It works on sema-annotated trees (types decide what is differentiable)
// and builds unannotated ones for printing. It does not know about statements, reductions or
// index ranges (gradient.h does).
#pragma once

#include <string>

#include "grad/expr_build.h"
#include "lang/ast.h"

namespace tc::grad {

// A construct whose derivative TC cannot express (a float '%'): gradient.h reports it,
// located at `loc`, as TC_ERROR_UNSUPPORTED.
struct Inexpressible {
  lang::SourceLoc loc;
  std::string reason;
};

// d e / d target, where target is a tensor read node of e (compared by address); nullptr when
// identically zero. Throws Inexpressible.
ExprPtr partial(const lang::Expr& e, const lang::Expr* target);

}  // namespace tc::grad

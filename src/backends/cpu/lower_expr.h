// lower_expr.h — a statement's right-hand side as a Halide expression with the language's
// scalar semantics (the reference backend's scalar.cpp is the oracle): operands converted to
// the operation's type, Euclidean integer division with x/0 == 0 (Halide's own rule),
// saturating float-to-integer casts, libm for the transcendental builtins. It does not decide
// how tensors are read: the caller's `load` knows the current version of each tensor.
#pragma once

#include <functional>
#include <vector>

#include <Halide.h>

#include "ir/bind.h"
#include "lang/ast.h"

namespace tc::backends::cpu {

Halide::Type halide_type(ScalarType t);

// x of TC type `from` converted to `to` as the language converts (bool is x != 0, float to
// integer truncates and saturates, NaN gives 0).
Halide::Expr convert(Halide::Expr x, ScalarType from, ScalarType to);

struct ExprContext {
  const ir::BoundDef* bound = nullptr;
  const std::vector<std::string>* var_names = nullptr;  // the statement's variables (Stmt::vars)
  std::vector<Halide::Expr> vars;                       // their values, in the same order
  // A tensor read: `access` is the source access, `index` its subscripts (any integer type),
  // `guarded` whether it sits under a ?: branch or the right operand of && / ||.
  std::function<Halide::Expr(const lang::Expr& access, std::vector<Halide::Expr> index, bool guarded)> load;
};

Halide::Expr lower_expr(const lang::Expr& e, const ExprContext& ctx);

}  // namespace tc::backends::cpu

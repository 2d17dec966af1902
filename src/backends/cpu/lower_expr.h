// lower_expr.h — a statement's right-hand side as a Halide expression with the language's
// scalar semantics (values.h: how values are held, converted and combined; the reference
// backend's scalar.cpp is the oracle). It does not decide how tensors are read: the caller's
// `load` knows the current version of each tensor and how to check a subscript.
#pragma once

#include <functional>
#include <vector>

#include <Halide.h>

#include "ir/bind.h"
#include "lang/ast.h"

namespace tc::backends::cpu {

struct ExprContext {
  const ir::BoundDef* bound = nullptr;
  const std::vector<std::string>* var_names = nullptr;  // the statement's variables (Stmt::vars)
  std::vector<Halide::Expr> vars;                       // their values, in the same order
  // Whether binding proved subscript `dim` of `access` in bounds: then its arithmetic is the
  // index arithmetic Halide's bounds inference understands (it cannot overflow).
  std::function<bool(const lang::Expr& access, int dim)> proven;
  // A tensor read: `access` is the source access, `index` its subscripts (any integer type),
  // `guard` the condition under which the read is evaluated (undefined: always), set under a
  // ?: branch or the right operand of && / ||.
  std::function<Halide::Expr(const lang::Expr& access, std::vector<Halide::Expr> index, const Halide::Expr& guard)> load;
};

Halide::Expr lower_expr(const lang::Expr& e, const ExprContext& ctx);

}  // namespace tc::backends::cpu

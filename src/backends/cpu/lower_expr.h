// lower_expr.h — a statement's right-hand side as a Halide expression with the language's
// scalar semantics (values.h: how values are held, converted and combined; the reference
// backend's scalar.cpp is the oracle). It does not decide how tensors are read: the caller's
// `load` knows the current version of each tensor and how to check a subscript.
#pragma once

#include <functional>
#include <vector>

#include <Halide.h>

#include "ir/bind.h"

namespace tc::backends::cpu {

struct ExprContext {
  const ir::BoundDef* bound = nullptr;
  const ir::Stmt* stmt = nullptr;
  std::vector<Halide::Expr> vars;  // the values of the statement's variables (Stmt::vars)
  // A tensor read: `read` is its number in stmt->reads, `index` its subscripts (any integer
  // type), `guard` the condition under which the read is evaluated (undefined: always), set
  // under a ?: branch or the right operand of && / ||.
  std::function<Halide::Expr(int read, std::vector<Halide::Expr> index, const Halide::Expr& guard)> load;
};

Halide::Expr lower_expr(const ir::Node& e, const ExprContext& ctx);

}  // namespace tc::backends::cpu

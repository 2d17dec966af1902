// eval_tree.h — a statement's right-hand side lowered for interpretation: names resolved to
// variable slots and tensor numbers, sizes and T.d folded to constants, and the operand type
// of every operation fixed, so evaluation does no lookups.
#pragma once

#include <string>
#include <vector>

#include "backends/reference/scalar.h"
#include "ir/bind.h"
#include "lang/ast.h"

namespace tc::backends::reference {

struct Node {
  enum class Op { Const, Var, Load, Neg, Not, Binary, And, Or, Select, Cast, Builtin };
  Op op = Op::Const;
  ScalarType type = ScalarType::Int32;          // result type
  ScalarType operand_type = ScalarType::Int32;  // Binary: both operands are converted to this
  lang::Tok tok = lang::Tok::End;
  lang::BuiltinId builtin{};
  Scalar value{};  // Const
  int slot = -1;   // Var: variable slot; Load: tensor number
  std::vector<Node> args;
  const lang::Expr* source = nullptr;  // for run-time error messages
};

// `vars` are the statement's index variables in slot order.
Node lower(const lang::Expr& e, const ir::BoundDef& bound, const std::vector<std::string>& vars);

}  // namespace tc::backends::reference

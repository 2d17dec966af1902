// eval_tree.h — a statement's right-hand side (IR) prepared for interpretation: sizes and T.d
// folded to constants and literals to values of their type, so evaluation does no lookups.
#pragma once

#include <vector>

#include "backends/reference/scalar.h"
#include "ir/bind.h"

namespace tc::backends::reference {

struct Node {
  enum class Op { Const, Var, Load, Neg, Not, Binary, And, Or, Select, Cast, Builtin };
  Op op = Op::Const;
  ScalarType type = ScalarType::Int32;          // result type
  ScalarType operand_type = ScalarType::Int32;  // Binary: both operands are converted to this
  ir::BinOp binop = ir::BinOp::Add;
  lang::BuiltinId builtin{};
  Scalar value{};  // Const
  int slot = -1;   // Var: variable slot; Load: tensor number
  int read = -1;   // Load: the statement's read (ir::Stmt::reads), for messages
  std::vector<Node> args;
};

Node lower(const ir::Node& e, const ir::BoundDef& bound, const ir::Stmt& stmt);

}  // namespace tc::backends::reference

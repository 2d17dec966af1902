// expr.h — the IR's expressions: immutable, shared nodes with every name resolved (index
// variables and sizes by position, tensor reads by their entry in the statement's read list)
// and every type fixed by sema (the result type of each node; the operand type of each binary
// operation). Backends evaluate these, never the syntax tree. It does not know shapes: sizes
// and T.d stay symbolic until binding gives them values.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <vector>

#include "lang/builtins.h"
#include "lang/operators.h"
#include "support/dtype.h"

namespace tc::ir {

using lang::BinOp;
using lang::is_comparison;
using lang::spelling;

enum class ExprOp {
  Const,    // a literal: int_value or float_value (is_float) as a value of `type`
  Var,      // index variable number `index` of the statement
  Size,     // size number `index` of the def (Def::size_names), an int32
  Dim,      // T.d: extent `dim` of tensor `index`, an int32
  Load,     // read number `index` of the statement (Stmt::reads); args are its subscripts
  Neg,      // -args[0], computed in `type`
  Not,      // !args[0] (converted to bool)
  Binary,   // args[0] binop args[1], both converted to operand_type; comparisons give bool
  And,      // && and || with the language's short circuit
  Or,
  Select,   // args[0] ? args[1] : args[2]
  Cast,     // args[0] converted to `type`
  Builtin,  // builtin(args...), each argument converted to `type`
};

struct Node;
using Expr = std::shared_ptr<const Node>;

struct Node {
  ExprOp op = ExprOp::Const;
  ScalarType type = ScalarType::Int32;          // the result type
  ScalarType operand_type = ScalarType::Int32;  // Binary
  BinOp binop = BinOp::Add;                     // Binary
  lang::BuiltinId builtin{};                    // Builtin
  bool is_float = false;                        // Const: float_value (else int_value) holds it
  int64_t int_value = 0;
  double float_value = 0;
  int index = -1;  // Var, Size, Load; Dim: the tensor
  int dim = -1;    // Dim
  std::vector<Expr> args;
};

// The statement variables (by number) e uses, and whether it reads any tensor.
void collect_vars(const Node& e, std::set<int>& out);
bool reads_tensor(const Node& e);

}  // namespace tc::ir

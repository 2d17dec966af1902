// eval_tree.cpp — see eval_tree.h.
#include "backends/reference/eval_tree.h"

#include "support/error.h"

namespace tc::backends::reference {

using ir::ExprOp;

namespace {

Node constant(int64_t v, ScalarType t) {
  Node n;
  n.op = Node::Op::Const;
  n.type = t;
  n.value = convert(from_int(v, ScalarType::Int32), ScalarType::Int32, t);
  return n;
}

}  // namespace

Node lower(const ir::Node& e, const ir::BoundDef& b, const ir::Stmt& stmt) {
  Node n;
  n.type = e.type;
  for (const auto& a : e.args) n.args.push_back(lower(*a, b, stmt));
  switch (e.op) {
    case ExprOp::Const:
      n.op = Node::Op::Const;
      n.value = e.is_float ? from_double(e.float_value, e.type)
                : is_float(e.type) ? from_double(static_cast<double>(e.int_value), e.type)
                                   : from_int(e.int_value, e.type);
      return n;
    case ExprOp::Size: return constant(b.size_values[e.index], e.type);
    case ExprOp::Dim: return constant(b.tensors[e.index].shape[e.dim], e.type);
    case ExprOp::Var:
      n.op = Node::Op::Var;
      n.slot = e.index;
      return n;
    case ExprOp::Load:
      n.op = Node::Op::Load;
      n.slot = stmt.reads[e.index].tensor;
      n.read = e.index;
      return n;
    case ExprOp::Neg: n.op = Node::Op::Neg; return n;
    case ExprOp::Not: n.op = Node::Op::Not; return n;
    case ExprOp::And: n.op = Node::Op::And; return n;
    case ExprOp::Or: n.op = Node::Op::Or; return n;
    case ExprOp::Binary:
      n.op = Node::Op::Binary;
      n.binop = e.binop;
      n.operand_type = e.operand_type;
      return n;
    case ExprOp::Select: n.op = Node::Op::Select; return n;
    case ExprOp::Cast: n.op = Node::Op::Cast; return n;
    case ExprOp::Builtin:
      n.op = Node::Op::Builtin;
      n.builtin = e.builtin;
      return n;
  }
  fail(TC_ERROR_INTERNAL, "reference backend: unknown IR node");
}

}  // namespace tc::backends::reference

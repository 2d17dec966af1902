// eval_tree.cpp — see eval_tree.h.
#include "backends/reference/eval_tree.h"

#include <algorithm>

#include "support/error.h"

namespace tc::backends::reference {

using lang::ExprKind;
using lang::Ref;
using lang::Tok;

namespace {

Node constant(int64_t v, ScalarType t) {
  Node n;
  n.op = Node::Op::Const;
  n.type = t;
  n.value = from_int(v, t);
  return n;
}

int64_t size_value(const lang::Expr& e, const ir::BoundDef& b) {
  if (e.kind == ExprKind::Dim) return b.tensors[e.tensor].shape[e.int_value];
  return b.sizes.at(e.name);
}

}  // namespace

Node lower(const lang::Expr& e, const ir::BoundDef& b, const std::vector<std::string>& vars) {
  Node n;
  n.type = e.type;
  n.source = &e;
  for (const auto& a : e.args) n.args.push_back(lower(*a, b, vars));
  switch (e.kind) {
    case ExprKind::IntLit:
      n.op = Node::Op::Const;
      n.value = is_float(e.type) ? from_double(static_cast<double>(e.int_value), e.type) : from_int(e.int_value, e.type);
      return n;
    case ExprKind::FloatLit:
      n.op = Node::Op::Const;
      n.value = from_double(e.float_value, e.type);
      return n;
    case ExprKind::Dim:
      return constant(size_value(e, b), ScalarType::Int32);
    case ExprKind::Ident:
      if (e.ref == Ref::Size) return constant(size_value(e, b), ScalarType::Int32);
      if (e.ref == Ref::Tensor) {
        n.op = Node::Op::Load;
        n.slot = e.tensor;
        return n;
      }
      n.op = Node::Op::Var;
      n.slot = static_cast<int>(std::find(vars.begin(), vars.end(), e.name) - vars.begin());
      return n;
    case ExprKind::Unary:
      n.op = e.op == Tok::Not ? Node::Op::Not : Node::Op::Neg;
      return n;
    case ExprKind::Binary:
      n.tok = e.op;
      if (e.op == Tok::AndAnd || e.op == Tok::OrOr) {
        n.op = e.op == Tok::AndAnd ? Node::Op::And : Node::Op::Or;
        return n;
      }
      n.op = Node::Op::Binary;
      n.operand_type = e.operand_type;
      return n;
    case ExprKind::Ternary:
      n.op = Node::Op::Select;
      return n;
    case ExprKind::Call:
      if (e.ref == Ref::Tensor) {
        n.op = Node::Op::Load;
        n.slot = e.tensor;
      } else if (e.ref == Ref::Cast) {
        n.op = Node::Op::Cast;
      } else {
        n.op = Node::Op::Builtin;
        n.builtin = e.builtin;
      }
      return n;
  }
  fail(TC_ERROR_INTERNAL, "reference backend: unknown expression kind");
}

}  // namespace tc::backends::reference

// to_halide.cpp — see to_halide.h. Division and modulo keep their TC meaning (floor /
// Euclidean), which is also Halide's, so the solver reasons with the language's semantics.
#include "infer/to_halide.h"

namespace tc::infer {

namespace HI = Halide::Internal;
using lang::ExprKind;
using lang::Ref;
using lang::Tok;

Halide::Expr index_var(const std::string& name) { return HI::Variable::make(Halide::Int(32), name); }
Halide::Expr size_var(const std::string& name) { return HI::Variable::make(Halide::Int(32), name); }

Halide::Expr binary_op(lang::BinOp op, const Halide::Expr& a, const Halide::Expr& b) {
  using lang::BinOp;
  switch (op) {
    case BinOp::Add: return a + b;
    case BinOp::Sub: return a - b;
    case BinOp::Mul: return a * b;
    case BinOp::Div: return a / b;
    case BinOp::Mod: return a % b;
    case BinOp::Lt: return a < b;
    case BinOp::Le: return a <= b;
    case BinOp::Gt: return a > b;
    case BinOp::Ge: return a >= b;
    case BinOp::Eq: return a == b;
    case BinOp::Ne: return a != b;
  }
  return Halide::Expr();
}

namespace {

bool is_int(const Halide::Expr& e) { return e.defined() && e.type().is_int(); }
bool is_bool(const Halide::Expr& e) { return e.defined() && e.type().is_bool(); }

}  // namespace

Halide::Expr to_halide(const lang::Expr& e, const DimExtentFn& dim_extent) {
  switch (e.kind) {
    case ExprKind::IntLit:
      if (e.int_value > INT32_MAX || e.int_value < INT32_MIN) return Halide::Expr();
      return Halide::Expr(static_cast<int>(e.int_value));
    case ExprKind::Ident:
      if (e.ref == Ref::Index) return index_var(e.name);
      if (e.ref == Ref::Size) return size_var(e.name);
      return Halide::Expr();
    case ExprKind::Dim:
      return dim_extent(e.tensor, static_cast<int>(e.int_value));
    case ExprKind::Unary: {
      Halide::Expr a = to_halide(*e.args[0], dim_extent);
      if (e.op == Tok::Minus && is_int(a)) return 0 - a;
      if (e.op == Tok::Not && is_bool(a)) return !a;
      return Halide::Expr();
    }
    case ExprKind::Binary: {
      Halide::Expr a = to_halide(*e.args[0], dim_extent);
      Halide::Expr b = to_halide(*e.args[1], dim_extent);
      if (e.op == Tok::AndAnd || e.op == Tok::OrOr) {
        if (!is_bool(a) || !is_bool(b)) return Halide::Expr();
        return e.op == Tok::AndAnd ? (a && b) : (a || b);
      }
      std::optional<lang::BinOp> op = lang::binop_of(e.op);
      if (!op || !is_int(a) || !is_int(b)) return Halide::Expr();
      return binary_op(*op, a, b);
    }
    case ExprKind::Ternary: {
      Halide::Expr c = to_halide(*e.args[0], dim_extent);
      Halide::Expr a = to_halide(*e.args[1], dim_extent);
      Halide::Expr b = to_halide(*e.args[2], dim_extent);
      if (!is_bool(c) || !is_int(a) || !is_int(b)) return Halide::Expr();
      return Halide::select(c, a, b);
    }
    case ExprKind::Call: {
      if (e.ref == Ref::Cast) {  // integer casts of index arithmetic: same value while in range
        Halide::Expr a = to_halide(*e.args[0], dim_extent);
        return is_int(a) && is_integer(e.cast_to) ? a : Halide::Expr();
      }
      if (e.ref != Ref::Builtin || (e.builtin != lang::BuiltinId::Min && e.builtin != lang::BuiltinId::Max))
        return Halide::Expr();
      Halide::Expr a = to_halide(*e.args[0], dim_extent);
      Halide::Expr b = to_halide(*e.args[1], dim_extent);
      if (!is_int(a) || !is_int(b)) return Halide::Expr();
      return e.builtin == lang::BuiltinId::Min ? Halide::min(a, b) : Halide::max(a, b);
    }
    default:
      return Halide::Expr();
  }
}

}  // namespace tc::infer

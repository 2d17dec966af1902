// operators.cpp — see operators.h.
#include "lang/operators.h"

namespace tc::lang {

const char* spelling(BinOp op) {
  switch (op) {
    case BinOp::Add: return "+";
    case BinOp::Sub: return "-";
    case BinOp::Mul: return "*";
    case BinOp::Div: return "/";
    case BinOp::Mod: return "%";
    case BinOp::Lt: return "<";
    case BinOp::Le: return "<=";
    case BinOp::Gt: return ">";
    case BinOp::Ge: return ">=";
    case BinOp::Eq: return "==";
    case BinOp::Ne: return "!=";
  }
  return "?";
}

std::optional<BinOp> binop_of(Tok t) {
  switch (t) {
    case Tok::Plus: return BinOp::Add;
    case Tok::Minus: return BinOp::Sub;
    case Tok::Star: return BinOp::Mul;
    case Tok::Slash: return BinOp::Div;
    case Tok::Percent: return BinOp::Mod;
    case Tok::Lt: return BinOp::Lt;
    case Tok::Le: return BinOp::Le;
    case Tok::Gt: return BinOp::Gt;
    case Tok::Ge: return BinOp::Ge;
    case Tok::Eq: return BinOp::Eq;
    case Tok::Ne: return BinOp::Ne;
    default: return std::nullopt;
  }
}

}  // namespace tc::lang

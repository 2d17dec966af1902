// printer.cpp — expression printer; parenthesises every nested binary/ternary operation
// rather than tracking precedence, which is unambiguous and short enough for messages.
#include "lang/printer.h"

namespace tc::lang {
namespace {

std::string op_text(Tok k) {
  std::string d = describe(k);
  return d.size() >= 2 && d.front() == '\'' ? d.substr(1, d.size() - 2) : d;
}

std::string nested(const Expr& e) {
  bool compound = e.kind == ExprKind::Binary || e.kind == ExprKind::Ternary;
  return compound ? "(" + to_source(e) + ")" : to_source(e);
}

}  // namespace

std::string to_source(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::Ident:
      return e.name;
    case ExprKind::Dim:
      return e.name + "." + std::to_string(e.int_value);
    case ExprKind::Unary:
      return op_text(e.op) + nested(*e.args[0]);
    case ExprKind::Binary:
      return nested(*e.args[0]) + " " + op_text(e.op) + " " + nested(*e.args[1]);
    case ExprKind::Ternary:
      return nested(*e.args[0]) + " ? " + nested(*e.args[1]) + " : " + nested(*e.args[2]);
    case ExprKind::Ellipsis:
      return "...";
    case ExprKind::Call: {
      std::string out = e.name + "(";
      for (size_t i = 0; i < e.args.size(); ++i) out += (i ? ", " : "") + to_source(*e.args[i]);
      return out + ")";
    }
  }
  return "?";
}

}  // namespace tc::lang

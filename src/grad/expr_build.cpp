// expr_build.cpp — see expr_build.h.
#include "grad/expr_build.h"

#include <memory>
#include <utility>

namespace tc::grad {

using lang::Expr;
using lang::ExprKind;
using lang::Tok;

namespace {

ExprPtr node(ExprKind kind, std::string name = {}) {
  auto e = std::make_shared<Expr>();
  e->kind = kind;
  e->name = std::move(name);
  return e;
}

bool is_literal(const ExprPtr& e, const char* spelling) {
  return e && (e->kind == ExprKind::FloatLit || e->kind == ExprKind::IntLit) && e->name == spelling;
}

}  // namespace

ExprPtr literal(const std::string& spelling) {
  bool is_float = spelling.find_first_of(".eE") != std::string::npos;
  return node(is_float ? ExprKind::FloatLit : ExprKind::IntLit, spelling);
}

ExprPtr ident(const std::string& name) { return node(ExprKind::Ident, name); }

ExprPtr read(const std::string& tensor, const std::vector<ExprPtr>& subscripts) {
  if (subscripts.empty()) return ident(tensor);
  ExprPtr e = node(ExprKind::Call, tensor);
  e->args = subscripts;
  return e;
}

std::vector<ExprPtr> idents(const std::vector<std::string>& names) {
  std::vector<ExprPtr> out;
  for (const std::string& n : names) out.push_back(ident(n));
  return out;
}

ExprPtr read_vars(const std::string& tensor, const std::vector<std::string>& vars) { return read(tensor, idents(vars)); }

// to_tc_source parenthesises every compound expression: the text is an operand as it is.
ExprPtr size(const infer::SymExpr& s) { return ident(s.to_tc_source()); }

ExprPtr clamp_into(ExprPtr e, const infer::Range& r) {
  ExprPtr last = ident("(" + r.hi.to_tc_source() + " - 1)");
  return call("min", {call("max", {std::move(e), size(r.lo)}), last});
}

ExprPtr call(const std::string& name, std::vector<ExprPtr> args) {
  ExprPtr e = node(ExprKind::Call, name);
  e->args = std::move(args);
  return e;
}

ExprPtr binary(Tok op, ExprPtr a, ExprPtr b) {
  ExprPtr e = node(ExprKind::Binary);
  e->op = op;
  e->args = {std::move(a), std::move(b)};
  return e;
}

ExprPtr ternary(ExprPtr cond, ExprPtr then, ExprPtr otherwise) {
  ExprPtr e = node(ExprKind::Ternary);
  e->args = {std::move(cond), then ? then : literal("0.0"), otherwise ? otherwise : literal("0.0")};
  return e;
}

bool is_one(const ExprPtr& e) { return is_literal(e, "1.0") || is_literal(e, "1"); }

ExprPtr add(ExprPtr a, ExprPtr b) {
  if (!a) return b;
  if (!b) return a;
  return binary(Tok::Plus, std::move(a), std::move(b));
}

ExprPtr sub(ExprPtr a, ExprPtr b) {
  if (!b) return a;
  if (!a) return neg(std::move(b));
  return binary(Tok::Minus, std::move(a), std::move(b));
}

ExprPtr mul(ExprPtr a, ExprPtr b) {
  if (!a || !b) return nullptr;
  if (is_one(a)) return b;
  if (is_one(b)) return a;
  return binary(Tok::Star, std::move(a), std::move(b));
}

ExprPtr neg(ExprPtr a) {
  if (!a) return nullptr;
  if (a->kind == ExprKind::Unary && a->op == Tok::Minus) return a->args[0];
  ExprPtr e = node(ExprKind::Unary);
  e->op = Tok::Minus;
  e->args = {std::move(a)};
  return e;
}

}  // namespace tc::grad

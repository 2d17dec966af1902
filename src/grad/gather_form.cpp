// gather_form.cpp — see gather_form.h.
#include "grad/gather_form.h"

#include <algorithm>
#include <map>
#include <optional>

#include "lang/printer.h"

namespace tc::grad {

using lang::Expr;
using lang::ExprKind;
using lang::Ref;
using lang::Tok;

namespace {

// e = sum(coef[v] * v) + rest, rest free of index variables (nullptr: 0).
struct Linear {
  std::map<std::string, int64_t> coef;
  ExprPtr rest;
};

bool has_index_var(const Expr& e, const Ranges& ranges) {
  if (e.kind == ExprKind::Ident &&
      std::any_of(ranges.begin(), ranges.end(), [&](const auto& r) { return r.first == e.name; }))
    return true;
  return std::any_of(e.args.begin(), e.args.end(), [&](const ExprPtr& a) { return has_index_var(*a, ranges); });
}

std::optional<Linear> linear(const Expr& e, const Ranges& ranges) {
  if (!has_index_var(e, ranges)) return Linear{{}, e.clone()};
  if (e.kind == ExprKind::Ident) return Linear{{{e.name, 1}}, nullptr};
  if (e.kind == ExprKind::Unary && e.op == Tok::Minus) {
    auto a = linear(*e.args[0], ranges);
    if (!a) return std::nullopt;
    for (auto& [v, c] : a->coef) c = -c;
    a->rest = neg(a->rest);
    return a;
  }
  if (e.kind != ExprKind::Binary) return std::nullopt;
  if (e.op == Tok::Plus || e.op == Tok::Minus) {
    auto a = linear(*e.args[0], ranges), b = linear(*e.args[1], ranges);
    if (!a || !b) return std::nullopt;
    int64_t sign = e.op == Tok::Plus ? 1 : -1;
    for (const auto& [v, c] : b->coef) a->coef[v] += sign * c;
    a->rest = e.op == Tok::Plus ? add(a->rest, b->rest) : sub(a->rest, b->rest);
    return a;
  }
  if (e.op == Tok::Star) {
    for (int side = 0; side < 2; ++side) {
      const Expr& k = *e.args[side];
      if (k.kind != ExprKind::IntLit) continue;
      auto a = linear(*e.args[1 - side], ranges);
      if (!a) return std::nullopt;
      int64_t factor = k.int_value;
      for (auto& [v, c] : a->coef) c *= factor;
      a->rest = mul(a->rest, k.clone());
      return a;
    }
  }
  return std::nullopt;
}

ExprPtr substitute(const Expr& e, const std::string& var, const ExprPtr& with) {
  if (e.kind == ExprKind::Ident && e.name == var) return with->clone();
  auto copy = std::make_shared<Expr>(e);
  for (ExprPtr& a : copy->args) a = substitute(*a, var, with);
  return copy;
}


}  // namespace

bool to_gather_form(Contribution& c, const std::vector<infer::SymExpr>& extents,
                    const std::vector<std::string>& new_vars, const std::set<std::string>& eliminate_first) {
  // Per subscript: kept as a plain variable, or solved for one variable.
  struct Solve {
    std::string var;  // empty: a plain variable kept
    int64_t a = 1;
    ExprPtr rest;
  };
  std::vector<Solve> plan(c.subscripts.size());
  std::map<std::string, int> uses;  // variable -> number of subscripts using it
  std::vector<Linear> lin;
  for (const ExprPtr& s : c.subscripts) {
    auto l = linear(*s, c.ranges);
    if (!l) return false;  // a gather or non-affine: stays a scatter
    for (auto it = l->coef.begin(); it != l->coef.end();) it = it->second == 0 ? l->coef.erase(it) : std::next(it);
    for (const auto& [v, coef] : l->coef) ++uses[v];
    lin.push_back(*l);
  }
  bool any = false;
  for (size_t d = 0; d < lin.size(); ++d) {
    const Linear& l = lin[d];
    bool plain = l.coef.size() == 1 && l.coef.begin()->second == 1 && !l.rest;
    if (plain && uses[l.coef.begin()->first] == 1) continue;  // G(..., i, ...) as it is
    // Solve for a variable used by no other subscript, the preferred ones first.
    std::string pick;
    // Only unit coefficients: solving `2*i + kh` needs a divisibility guard that fails for
    // most points (measured: maxpool's gradient 3.5x slower as a gather than as a scatter).
    // And only for a preferred variable when there are several: solving `2*i + kh` for the
    // window's kh would sum over all of i, the guard true at one point in 28 (maxpool).
    for (const auto& [v, coef] : l.coef)
      if (uses[v] == 1 && (coef == 1 || coef == -1) && (l.coef.size() == 1 || eliminate_first.count(v))) {
        pick = v;
        break;
      }
    if (pick.empty()) return false;
    ExprPtr rest = l.rest;
    for (const auto& [v, coef] : l.coef)
      if (v != pick) rest = add(rest, mul(literal(std::to_string(coef)), ident(v)));
    plan[d] = Solve{pick, l.coef.at(pick), rest};
    any = true;
  }
  if (!any) return false;
  ExprPtr guard;
  auto both = [&](ExprPtr cond) { guard = guard ? binary(Tok::AndAnd, guard, cond) : cond; };
  Ranges ranges = c.ranges;
  for (size_t d = 0; d < plan.size(); ++d) {
    if (plan[d].var.empty()) continue;
    const Solve& s = plan[d];
    // v = (j - rest) / a with a = +-1, where v stays in its range.
    ExprPtr numerator = sub(ident(new_vars[d]), s.rest);
    ExprPtr value = s.a == 1 ? numerator : sub(s.rest, ident(new_vars[d]));  // a is 1 or -1
    auto r = std::find_if(ranges.begin(), ranges.end(), [&](const auto& x) { return x.first == s.var; });
    both(binary(Tok::Le, size(r->second.lo), value->clone()));
    both(binary(Tok::Lt, value->clone(), size(r->second.hi)));
    // In the value v is clamped into its range: where the guard holds that changes nothing,
    // and the reads through it stay provably inside their tensors (no run-time checks).
    c.value = substitute(*c.value, s.var, clamp_into(value, r->second));
    for (size_t e = 0; e < plan.size(); ++e)
      if (plan[e].var.empty()) c.subscripts[e] = substitute(*c.subscripts[e], s.var, value);
    ranges.erase(r);
    ranges.push_back({new_vars[d], infer::Range{infer::SymExpr::constant(0), extents[d]}});
    c.subscripts[d] = ident(new_vars[d]);
  }
  c.value = ternary(guard, c.value, nullptr);
  c.ranges = ranges;
  return true;
}

}  // namespace tc::grad

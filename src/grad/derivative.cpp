// derivative.cpp — see derivative.h.
#include "grad/derivative.h"

#include <map>
#include <utility>

#include "lang/builtins.h"
#include "lang/parser.h"
#include "support/dtype.h"
#include "support/error.h"

namespace tc::grad {

using lang::BuiltinId;
using lang::Expr;
using lang::ExprKind;
using lang::Ref;
using lang::Tok;

namespace {

bool floating(ScalarType t) { return is_float(t); }

// The derivative column, parsed once: per builtin and argument, a tree in x, y, z (nullptr: 0).
using Templates = std::map<std::pair<BuiltinId, int>, ExprPtr>;

Templates parse_templates() {
  Templates out;
  for (int id = 0; id <= static_cast<int>(BuiltinId::Abs); ++id) {
    const lang::Builtin& b = lang::builtin(static_cast<BuiltinId>(id));
    for (int a = 0; a < b.arity; ++a) {
      std::string text = b.derivative[a];
      if (text == "0") continue;
      lang::Program p = lang::parse(
          lang::SourceText{"def derivative(float x, float y, float z) -> (r) { r = " + text + " }", ""});
      out[{b.id, a}] = p.defs.at(0).stmts.at(0).rhs;
    }
  }
  return out;
}

const Templates& templates() {
  static const Templates parsed = parse_templates();  // thread-safe initialisation
  return parsed;
}

// The template with x, y, z replaced by (copies of) the call's arguments.
ExprPtr instantiate(const Expr& t, const std::vector<ExprPtr>& args) {
  if (t.kind == ExprKind::Ident && t.name.size() == 1 && t.name[0] >= 'x' && t.name[0] <= 'z')
    return args.at(static_cast<size_t>(t.name[0] - 'x'))->clone();
  auto copy = std::make_shared<Expr>(t);
  for (ExprPtr& a : copy->args) a = instantiate(*a, args);
  return copy;
}

// An integer literal whose value every float type holds exactly (bfloat16 every integer up to
// 256) and whose square int32 holds: the same number wherever a template puts it.
bool small_integer_literal(const Expr& e) {
  return e.kind == ExprKind::IntLit && e.int_value >= -256 && e.int_value <= 256;
}

// The call's arguments as its template computes with them: an integer argument converted to the
// call's float type, as the call converts it. Put in as it stands, an integer argument would be
// computed on in integers (atan2(i * 3000000, X)'s `x * x` overflowing int32) and a literal
// typed by its new neighbours (`where x = -9223372036854775807`: an int32 that cannot hold it;
// sema typed it float among the call's floats, but its spelling is typed anew where it goes).
std::vector<ExprPtr> as_computed(const Expr& call) {
  std::vector<ExprPtr> out;
  for (const ExprPtr& a : call.args) {
    const bool integer = !floating(a->type) || a->kind == ExprKind::IntLit;
    const bool convert = floating(call.type) && integer && !small_integer_literal(*a);
    out.push_back(convert ? grad::call(tc::name(call.type), {a->clone()}) : a);
  }
  return out;
}

ExprPtr builtin_partial(const Expr& e, const Expr* target) {
  ExprPtr sum;
  for (size_t i = 0; i < e.args.size(); ++i) {
    ExprPtr inner = partial(*e.args[i], target);
    if (!inner) continue;
    auto t = templates().find({e.builtin, static_cast<int>(i)});
    if (t == templates().end()) continue;  // zero almost everywhere (floor, ...)
    sum = add(sum, mul(instantiate(*t->second, as_computed(e)), inner));
  }
  return sum;
}

ExprPtr binary_partial(const Expr& e, const Expr* target) {
  const ExprPtr& a = e.args[0];
  const ExprPtr& b = e.args[1];
  switch (e.op) {
    case Tok::Plus: return add(partial(*a, target), partial(*b, target));
    case Tok::Minus: return sub(partial(*a, target), partial(*b, target));
    case Tok::Star: return add(mul(partial(*a, target), b->clone()), mul(a->clone(), partial(*b, target)));
    case Tok::Slash: {
      // d(a / b) = da / b - (a / b) * db / b
      ExprPtr da = partial(*a, target), db = partial(*b, target);
      ExprPtr first = da ? binary(Tok::Slash, da, b->clone()) : nullptr;
      ExprPtr second = db ? binary(Tok::Slash, mul(e.clone(), db), b->clone()) : nullptr;
      return sub(first, second);
    }
    case Tok::Percent:
      if (!partial(*a, target) && !partial(*b, target)) return nullptr;
      throw Inexpressible{e.loc, "the floating-point '%' has no derivative rule; write it with fmod"};
    default: return nullptr;  // comparisons, && ||: boolean
  }
}

}  // namespace

ExprPtr partial(const Expr& e, const Expr* target) {
  if (&e == target) return literal("1.0");
  if (!floating(e.type)) return nullptr;  // integer paths carry no gradient
  switch (e.kind) {
    case ExprKind::Unary: return e.op == Tok::Minus ? neg(partial(*e.args[0], target)) : nullptr;
    case ExprKind::Binary: return binary_partial(e, target);
    case ExprKind::Ternary: {
      ExprPtr then = partial(*e.args[1], target), otherwise = partial(*e.args[2], target);
      if (!then && !otherwise) return nullptr;
      return ternary(e.args[0]->clone(), then, otherwise);
    }
    case ExprKind::Call:
      if (e.ref == Ref::Builtin) return builtin_partial(e, target);
      if (e.ref == Ref::Cast) return floating(e.args[0]->type) ? partial(*e.args[0], target) : nullptr;
      return nullptr;  // another tensor read: a constant here
    default: return nullptr;  // literals, names, T.d
  }
}

}  // namespace tc::grad

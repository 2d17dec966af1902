// sym_expr.cpp — SymExpr over Halide IR: construction, printing, renaming, and a 64-bit evaluator
// for the node kinds inference produces (arithmetic, min/max, select, comparisons).
#include "infer/sym_expr.h"

#include <Halide.h>

#include <climits>
#include <cstdint>
#include <sstream>

#include "support/error.h"
#include "support/int_math.h"

namespace tc::infer {

namespace HI = Halide::Internal;

SymExpr::SymExpr() = default;
SymExpr::SymExpr(const Halide::Expr& e) : e_(std::make_shared<Halide::Expr>(e)) {}
SymExpr SymExpr::constant(int64_t v) { return SymExpr(Halide::Expr(static_cast<int>(v))); }
SymExpr SymExpr::size(const std::string& name) { return SymExpr(HI::Variable::make(Halide::Int(32), name)); }
bool SymExpr::defined() const { return e_ && e_->defined(); }
const Halide::Expr& SymExpr::halide() const { return *e_; }

std::string SymExpr::to_string() const {
  if (!defined()) return "?";
  std::ostringstream os;
  os << *e_;
  return os.str();
}

SymExpr SymExpr::renamed(const std::map<std::string, std::string>& names) const {
  if (!defined()) return *this;
  std::map<std::string, Halide::Expr> with;
  for (const auto& [from, to] : names) with[from] = HI::Variable::make(Halide::Int(32), to);  // as size() makes them
  return SymExpr(HI::substitute(with, *e_));
}

namespace {

std::string tc_source(const Halide::Expr& e);

std::string binary(const Halide::Expr& a, const char* op, const Halide::Expr& b) {
  return "(" + tc_source(a) + " " + op + " " + tc_source(b) + ")";
}

std::string tc_source(const Halide::Expr& e) {
  if (const auto* n = e.as<HI::IntImm>()) return n->value < 0 ? "(" + std::to_string(n->value) + ")" : std::to_string(n->value);
  if (const auto* n = e.as<HI::UIntImm>()) return std::to_string(n->value);
  if (const auto* n = e.as<HI::Variable>()) return n->name;
  if (const auto* n = e.as<HI::Cast>()) return tc_source(n->value);  // sizes are int32 in TC
  if (const auto* n = e.as<HI::Add>()) return binary(n->a, "+", n->b);
  if (const auto* n = e.as<HI::Sub>()) return binary(n->a, "-", n->b);
  if (const auto* n = e.as<HI::Mul>()) return binary(n->a, "*", n->b);
  if (const auto* n = e.as<HI::Div>()) return binary(n->a, "/", n->b);  // both floor division
  if (const auto* n = e.as<HI::Mod>()) return binary(n->a, "%", n->b);
  if (const auto* n = e.as<HI::Min>()) return "min(" + tc_source(n->a) + ", " + tc_source(n->b) + ")";
  if (const auto* n = e.as<HI::Max>()) return "max(" + tc_source(n->a) + ", " + tc_source(n->b) + ")";
  if (const auto* n = e.as<HI::EQ>()) return binary(n->a, "==", n->b);
  if (const auto* n = e.as<HI::NE>()) return binary(n->a, "!=", n->b);
  if (const auto* n = e.as<HI::LT>()) return binary(n->a, "<", n->b);
  if (const auto* n = e.as<HI::LE>()) return binary(n->a, "<=", n->b);
  if (const auto* n = e.as<HI::GT>()) return binary(n->a, ">", n->b);
  if (const auto* n = e.as<HI::GE>()) return binary(n->a, ">=", n->b);
  if (const auto* n = e.as<HI::And>()) return binary(n->a, "&&", n->b);
  if (const auto* n = e.as<HI::Or>()) return binary(n->a, "||", n->b);
  if (const auto* n = e.as<HI::Not>()) return "!(" + tc_source(n->a) + ")";
  if (const auto* n = e.as<HI::Select>())
    return "(" + tc_source(n->condition) + " ? " + tc_source(n->true_value) + " : " + tc_source(n->false_value) + ")";
  std::ostringstream os;
  os << e;
  fail(TC_ERROR_UNSUPPORTED, "the size expression '" + os.str() + "' has no TC spelling");
}

// Thrown inside the evaluator when a result leaves the 64-bit range; never escapes this file.
struct Overflow {};

// a OP b, or Overflow when the exact result does not fit in 64 bits.
template <typename Op>
int64_t exact(Op op, int64_t a, int64_t b) {
  int64_t r = 0;
  if (op(a, b, &r)) throw Overflow{};
  return r;
}

bool add(int64_t a, int64_t b, int64_t* r) { return __builtin_add_overflow(a, b, r); }
bool sub(int64_t a, int64_t b, int64_t* r) { return __builtin_sub_overflow(a, b, r); }
bool mul(int64_t a, int64_t b, int64_t* r) { return __builtin_mul_overflow(a, b, r); }

int64_t eval(const Halide::Expr& e, const SizeValues& s) {
  if (const auto* n = e.as<HI::IntImm>()) return n->value;
  if (const auto* n = e.as<HI::UIntImm>()) {
    if (n->value > INT64_MAX) throw Overflow{};
    return static_cast<int64_t>(n->value);
  }
  if (const auto* n = e.as<HI::Variable>()) {
    auto it = s.find(n->name);
    if (it == s.end()) fail(TC_ERROR_INTERNAL, "size '" + n->name + "' has no value");
    return it->second;
  }
  if (const auto* n = e.as<HI::Cast>()) return eval(n->value, s);
  if (const auto* n = e.as<HI::Add>()) return exact(add, eval(n->a, s), eval(n->b, s));
  if (const auto* n = e.as<HI::Sub>()) return exact(sub, eval(n->a, s), eval(n->b, s));
  if (const auto* n = e.as<HI::Mul>()) return exact(mul, eval(n->a, s), eval(n->b, s));
  if (const auto* n = e.as<HI::Div>()) return euclid_div(eval(n->a, s), eval(n->b, s));
  if (const auto* n = e.as<HI::Mod>()) return euclid_mod(eval(n->a, s), eval(n->b, s));
  if (const auto* n = e.as<HI::Min>()) return std::min(eval(n->a, s), eval(n->b, s));
  if (const auto* n = e.as<HI::Max>()) return std::max(eval(n->a, s), eval(n->b, s));
  if (const auto* n = e.as<HI::Select>()) return eval(n->condition, s) ? eval(n->true_value, s) : eval(n->false_value, s);
  if (const auto* n = e.as<HI::EQ>()) return eval(n->a, s) == eval(n->b, s);
  if (const auto* n = e.as<HI::NE>()) return eval(n->a, s) != eval(n->b, s);
  if (const auto* n = e.as<HI::LT>()) return eval(n->a, s) < eval(n->b, s);
  if (const auto* n = e.as<HI::LE>()) return eval(n->a, s) <= eval(n->b, s);
  if (const auto* n = e.as<HI::GT>()) return eval(n->a, s) > eval(n->b, s);
  if (const auto* n = e.as<HI::GE>()) return eval(n->a, s) >= eval(n->b, s);
  if (const auto* n = e.as<HI::And>()) return eval(n->a, s) && eval(n->b, s);
  if (const auto* n = e.as<HI::Or>()) return eval(n->a, s) || eval(n->b, s);
  if (const auto* n = e.as<HI::Not>()) return !eval(n->a, s);
  // Halide's simplifier replaces a constant fold that overflows (65536 * 65536 in int32) by
  // this intrinsic: the value is beyond 32 bits, which no extent or index may be.
  if (const auto* n = e.as<HI::Call>(); n && n->is_intrinsic(HI::Call::signed_integer_overflow)) throw Overflow{};
  std::ostringstream os;
  os << e;
  fail(TC_ERROR_INTERNAL, "cannot evaluate size expression '" + os.str() + "'");
}

}  // namespace

std::string SymExpr::to_tc_source() const {
  if (!defined()) fail(TC_ERROR_INTERNAL, "printing an undefined size expression");
  return tc_source(HI::simplify(*e_));
}

bool SymExpr::provably_equal(const SymExpr& other) const {
  if (!defined() || !other.defined()) return false;
  return HI::can_prove(*e_ == other.halide());
}

std::optional<int64_t> SymExpr::try_evaluate(const SizeValues& sizes) const {
  if (!defined()) fail(TC_ERROR_INTERNAL, "evaluating an undefined size expression");
  try {
    return eval(*e_, sizes);
  } catch (const Overflow&) {
    return std::nullopt;
  }
}

int64_t SymExpr::evaluate(const SizeValues& sizes) const {
  std::optional<int64_t> v = try_evaluate(sizes);
  if (!v) fail(TC_ERROR_UNSUPPORTED, "the size expression '" + to_string() + "' overflows 64-bit integers");
  return *v;
}

}  // namespace tc::infer

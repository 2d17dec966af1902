// sym_expr.h — a symbolic integer expression over size names (an inferred extent, a range
// bound, an index bound), evaluable once sizes are known. A thin handle on a Halide Expr so
// that only src/infer includes Halide's headers.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace Halide { struct Expr; }

namespace tc::infer {

using SizeValues = std::map<std::string, int64_t>;

class SymExpr {
 public:
  SymExpr();
  explicit SymExpr(const Halide::Expr& e);
  static SymExpr constant(int64_t v);
  static SymExpr size(const std::string& name);

  bool defined() const;
  const Halide::Expr& halide() const;
  // Evaluates in exact 64-bit arithmetic with TC's floor division. Returns nullopt when a
  // result does not fit in 64 bits (or the expression records an overflow that Halide's
  // simplifier found while folding constants). Throws tc::Error(INTERNAL) on an unbound name
  // (a bug: binding supplies every size).
  std::optional<int64_t> try_evaluate(const SizeValues& sizes) const;
  // As try_evaluate; an overflow is TC_ERROR_UNSUPPORTED naming the expression.
  int64_t evaluate(const SizeValues& sizes) const;
  std::string to_string() const;
  // The expression in TC syntax (sizes, integers, + - * / %, min/max, comparisons, ?:), for
  // generated TC source such as a gradient's where clauses. Throws tc::Error(UNSUPPORTED) on
  // a node TC cannot spell.
  std::string to_tc_source() const;
  // Whether Halide's simplifier proves the two expressions equal for every size.
  bool provably_equal(const SymExpr& other) const;
  // The same expression with sizes renamed (`names`: old -> new, all at once; others kept), for
  // texts that must not depend on what the program called its sizes.
  SymExpr renamed(const std::map<std::string, std::string>& names) const;

 private:
  std::shared_ptr<const Halide::Expr> e_;
};

}  // namespace tc::infer

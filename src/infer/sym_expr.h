// sym_expr.h — a symbolic integer expression over size names (an inferred extent, a range
// bound, an index bound), evaluable once sizes are known. A thin handle on a Halide Expr so
// that only src/infer includes Halide's headers.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
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
  // Evaluates in 64-bit arithmetic with TC's floor division. Throws tc::Error(INTERNAL) on an
  // unbound name (a bug: binding supplies every size).
  int64_t evaluate(const SizeValues& sizes) const;
  std::string to_string() const;

 private:
  std::shared_ptr<const Halide::Expr> e_;
};

}  // namespace tc::infer

// ast.cpp — small helpers of the syntax tree (deep copy, lookups).
#include "lang/ast.h"

#include <algorithm>

namespace tc::lang {

ExprPtr Expr::clone() const {
  auto e = std::make_shared<Expr>(*this);
  for (auto& a : e->args) a = a->clone();
  return e;
}

int Def::find_tensor(const std::string& n) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == n) return static_cast<int>(i);
  return -1;
}

bool Def::is_size(const std::string& n) const {
  return std::find(size_names.begin(), size_names.end(), n) != size_names.end();
}

}  // namespace tc::lang
